//! Mesh loader components: MeshGmshLoader (.msh files, ASCII or binary, read by `gmsh`),
//! MeshOBJLoader, MeshVTKLoader (legacy and XML VTK, read by `vtk_read`), MeshSTLLoader,
//! MeshOffLoader, MeshTrianLoader, SphereLoader.
//! A loader reads its (already resolved) file at init and exposes the content as output Data,
//! which topologies and states pick up through links (`src="@loader"`).

use crate::files::excerpt;
pub use crate::gmsh::parse_gmsh;
use canape_core::component::{Component, Loader};
use canape_core::data::{DataKind, DataTable, Value};
use canape_core::mesh::{flatten, flatten_points, Mesh};
use canape_core::scene::InitContext;
use canape_core::state::apply_transform;
use std::collections::BTreeSet;

fn loader_data(t: DataTable) -> DataTable {
    loader_fields(t, DataKind::File)
}

/// A procedural mesh creator's Data: a loader's, with a `filename` that is not read (SOFA makes
/// it read-only: scenes write "nofile").
fn creator_data(t: DataTable) -> DataTable {
    loader_fields(t, DataKind::Str)
}

fn loader_fields(t: DataTable, filename: DataKind) -> DataTable {
    canape_core::data::base_fields(t)
        .with("filename", filename, "", "Filename of the object")
        .with(
            "translation",
            DataKind::Vector(3),
            "0 0 0",
            "Translation of the DOFs",
        )
        .with(
            "rotation",
            DataKind::Vector(3),
            "0 0 0",
            "Rotation of the DOFs",
        )
        .with(
            "scale3d",
            DataKind::Vector(3),
            "1 1 1",
            "Scale of the DOFs in 3 dimensions",
        )
        .with(
            "scale",
            DataKind::Real,
            "1",
            "Uniform scale, multiplying scale3d (SOFA's MeshLoader reads it at parse time)",
        )
        .with(
            "transformation",
            DataKind::Reals(16),
            "1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1",
            "4x4 Homogeneous matrix to transform the DOFs (when present replace any)",
        )
}

/// A loader's scale: `scale3d` times the uniform `scale` (SOFA's MeshLoader multiplies them).
fn scale3d(d: &DataTable) -> Vec<f64> {
    let s = d.real("scale");
    d.reals("scale3d").iter().map(|v| v * s).collect()
}

fn mesh_outputs(t: DataTable) -> DataTable {
    t.output(
        "position",
        DataKind::Reals(3),
        "Vertices of the mesh loaded",
    )
    .output("edges", DataKind::Ints(2), "Edges of the mesh loaded")
    .output(
        "triangles",
        DataKind::Ints(3),
        "Triangles of the mesh loaded",
    )
    .output("quads", DataKind::Ints(4), "Quads of the mesh loaded")
    .output(
        "tetrahedra",
        DataKind::Ints(4),
        "Tetrahedra of the mesh loaded",
    )
    .output(
        "hexahedra",
        DataKind::Ints(8),
        "Hexahedra of the mesh loaded",
    )
    .output("normals", DataKind::Reals(3), "Normals of the mesh loaded")
    .with("flipNormals", DataKind::Bool, "0", "Flip Normals")
    .with(
        "triangulate",
        DataKind::Bool,
        "0",
        "Divide all polygons into triangles",
    )
    .with(
        "createSubelements",
        DataKind::Bool,
        "0",
        "Divide all n-D elements into their (n-1)-D boundary elements",
    )
    .with(
        "onlyAttachedPoints",
        DataKind::Bool,
        "0",
        "Only keep points attached to elements of the mesh",
    )
    .with(
        "useMaterials",
        DataKind::Bool,
        "1",
        "Load the different materials",
    )
    .with(
        "handleSeams",
        DataKind::Bool,
        "0",
        "Preserve UV and normal seams information (vertices with multiple UV and/or normals)",
    )
    .with(
        "loaderType",
        DataKind::Str,
        "",
        "Filename to load the materials",
    )
}

/// Add boundary sub-elements as SOFA's MeshLoader does for Gmsh files: hexahedron faces to quads,
/// tetrahedron faces to triangles, then the edges of quads and triangles.
pub fn create_subelements(mesh: &mut Mesh) {
    let mut quad_set: BTreeSet<[u32; 4]> = mesh.quads.iter().map(|q| sorted(*q)).collect();
    for h in mesh.hexahedra.clone() {
        for f in canape_core::mesh::HEXA_FACES {
            let q = [h[f[0]], h[f[1]], h[f[2]], h[f[3]]];
            if quad_set.insert(sorted(q)) {
                mesh.quads.push(q);
            }
        }
    }
    let mut tri_set: BTreeSet<[u32; 3]> = mesh.triangles.iter().map(|t| sorted(*t)).collect();
    for t in mesh.tetrahedra.clone() {
        for f in canape_core::mesh::TETRA_FACES {
            let tr = [t[f[0]], t[f[1]], t[f[2]]];
            if tri_set.insert(sorted(tr)) {
                mesh.triangles.push(tr);
            }
        }
    }
    let mut edge_set: BTreeSet<[u32; 2]> = mesh.edges.iter().map(|e| sorted(*e)).collect();
    for q in mesh.quads.clone() {
        for j in 0..4 {
            let e = [q[j], q[(j + 1) % 4]];
            if edge_set.insert(sorted(e)) {
                mesh.edges.push(e);
            }
        }
    }
    for t in mesh.triangles.clone() {
        for j in 0..3 {
            let e = [t[(j + 1) % 3], t[(j + 2) % 3]];
            if edge_set.insert(sorted(e)) {
                mesh.edges.push(e);
            }
        }
    }
}

fn sorted<const N: usize>(mut a: [u32; N]) -> [u32; N] {
    a.sort_unstable();
    a
}

/// Parse a Wavefront OBJ file: vertices and polygonal faces (triangles and quads kept apart).
/// Read a mesh file by its extension: .obj, .stl, .vtk/.vtu/.vtp, .msh (Gmsh), with the size
/// cap of data files. The scene builder installs it as the scene's mesh reader.
pub fn read_mesh_file(path: &str) -> Result<Mesh, String> {
    let bytes = crate::files::read_capped(
        std::path::Path::new(path),
        crate::files::MAX_DATA_FILE_BYTES,
    )
    .map_err(|e| format!("cannot read '{path}': {e}"))?;
    let lower = path.to_ascii_lowercase();
    let parsed = if lower.ends_with(".obj") {
        parse_obj(&String::from_utf8_lossy(&bytes))
    } else if lower.ends_with(".stl") {
        parse_stl(&bytes)
    } else if lower.ends_with(".vtk") || lower.ends_with(".vtu") || lower.ends_with(".vtp") {
        crate::vtk_read::parse_vtk(&bytes)
    } else if lower.ends_with(".msh") {
        crate::gmsh::parse_gmsh_bytes(&bytes)
    } else {
        Err("meshes are read from .obj, .stl, .vtk/.vtu/.vtp and .msh files here".to_string())
    };
    parsed.map_err(|e| format!("cannot load '{path}': {e}"))
}

pub fn parse_obj(text: &str) -> Result<Mesh, String> {
    let mut mesh = Mesh::default();
    for (ln, l) in text.lines().enumerate() {
        let mut it = l.split_whitespace();
        match it.next() {
            Some("v") => {
                let v: Vec<f64> = it
                    .take(3)
                    .map(|t| t.parse::<f64>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| format!("line {}: bad vertex", ln + 1))?;
                if v.len() != 3 {
                    return Err(format!("line {}: a vertex needs 3 coordinates", ln + 1));
                }
                mesh.points.push([v[0], v[1], v[2]]);
            }
            Some("f") => {
                let mut idx = Vec::new();
                for t in it {
                    let first = t.split('/').next().unwrap_or("");
                    let i: i64 = first
                        .parse()
                        .map_err(|_| format!("line {}: bad face index '{}'", ln + 1, excerpt(t)))?;
                    let i = if i < 0 {
                        mesh.points.len() as i64 + i
                    } else {
                        i - 1
                    };
                    if i < 0 {
                        return Err(format!("line {}: face index out of range", ln + 1));
                    }
                    idx.push(i as u32);
                }
                match idx.len() {
                    3 => mesh.triangles.push([idx[0], idx[1], idx[2]]),
                    4 => mesh.quads.push([idx[0], idx[1], idx[2], idx[3]]),
                    n if n > 4 => {
                        for k in 1..n - 1 {
                            mesh.triangles.push([idx[0], idx[k], idx[k + 1]]);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    if let Some(m) = mesh.max_index() {
        if m as usize >= mesh.points.len() {
            return Err(format!(
                "a face uses vertex {} but the file has {} vertices",
                m + 1,
                mesh.points.len()
            ));
        }
    }
    Ok(mesh)
}

/// Parse an STL file (Sofa/Component/IO/Mesh/.../MeshSTLLoader.cpp): ASCII when it starts with
/// `solid` and holds facets, else binary (80-byte header, a count, 50 bytes per facet; the size
/// must match). Positions are merged by value in order of first appearance, as SOFA's
/// `mergePositionUsingMap` (on by default) does.
pub fn parse_stl(bytes: &[u8]) -> Result<Mesh, String> {
    let mut mesh = Mesh::default();
    let mut index: std::collections::BTreeMap<[u64; 3], u32> = std::collections::BTreeMap::new();
    let mut point = |p: [f64; 3], mesh: &mut Mesh| -> u32 {
        let key = p.map(f64::to_bits);
        *index.entry(key).or_insert_with(|| {
            mesh.points.push(p);
            (mesh.points.len() - 1) as u32
        })
    };
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).into_owned();
    let ascii = head.trim_start().starts_with("solid")
        && std::str::from_utf8(bytes).is_ok_and(|t| t.contains("facet"));
    if ascii {
        let text = std::str::from_utf8(bytes).expect("checked");
        let mut tri = Vec::with_capacity(3);
        for (ln, l) in text.lines().enumerate() {
            let mut w = l.split_whitespace();
            match w.next() {
                Some("vertex") => {
                    let v: Vec<f64> = w.filter_map(|t| t.parse().ok()).collect();
                    if v.len() != 3 || v.iter().any(|x| !x.is_finite()) {
                        return Err(format!("line {}: bad vertex", ln + 1));
                    }
                    tri.push(point([v[0], v[1], v[2]], &mut mesh));
                }
                Some("endloop") => {
                    if tri.len() != 3 {
                        return Err(format!(
                            "line {}: a facet with {} vertices",
                            ln + 1,
                            tri.len()
                        ));
                    }
                    mesh.triangles.push([tri[0], tri[1], tri[2]]);
                    tri.clear();
                }
                _ => {}
            }
        }
        return Ok(mesh);
    }
    if bytes.len() < 84 {
        return Err("neither an ASCII STL nor a binary one (shorter than 84 bytes)".into());
    }
    let n = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as usize;
    if n.checked_mul(50).and_then(|b| b.checked_add(84)) != Some(bytes.len()) {
        return Err(format!(
            "a binary STL of {n} facets has {} bytes, not {}",
            bytes.len(),
            84u128 + 50 * n as u128
        ));
    }
    for f in bytes[84..].chunks_exact(50) {
        let val = |k: usize| {
            let o = 12 + 4 * k;
            f32::from_le_bytes([f[o], f[o + 1], f[o + 2], f[o + 3]]) as f64
        };
        let ids: [u32; 3] =
            std::array::from_fn(|v| point([val(3 * v), val(3 * v + 1), val(3 * v + 2)], &mut mesh));
        mesh.triangles.push(ids);
    }
    Ok(mesh)
}

/// Which format a [`MeshLoaderComponent`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshFormat {
    Gmsh,
    Obj,
    /// VTK legacy (ASCII or binary) and XML (.vtu, .vtp) files.
    Vtk,
    /// STL, ASCII or binary.
    Stl,
    /// OFF (Sofa/Component/IO/Mesh/.../MeshOffLoader.cpp): triangles and quads.
    Off,
    /// SOFA's trian and trian2 (Sofa/Component/IO/Mesh/.../MeshTrianLoader.cpp).
    Trian,
}

/// MeshGmshLoader and MeshOBJLoader.
#[derive(Clone)]
pub struct MeshLoaderComponent {
    format: MeshFormat,
    data: DataTable,
}

impl MeshLoaderComponent {
    pub fn new(format: MeshFormat) -> Self {
        let mut data = mesh_outputs(loader_data(DataTable::new()));
        if format == MeshFormat::Trian {
            data = data
                .with(
                    "trian2",
                    DataKind::Bool,
                    "0",
                    "Set to true if the mesh is a trian2 format.",
                )
                .output(
                    "neighborTable",
                    DataKind::Reals(3),
                    "Table of neighborhood triangle indices for each triangle (-1: none).",
                )
                .output(
                    "edgesOnBorder",
                    DataKind::Ints(2),
                    "List of edges which are on the border of the mesh loaded.",
                )
                .output(
                    "trianglesOnBorderList",
                    DataKind::Ints(0),
                    "List of triangle indices which are on the border of the mesh loaded.",
                );
        }
        if format == MeshFormat::Obj {
            data = data
                .output(
                    "texcoords",
                    DataKind::Reals(2),
                    "Texture coordinates of each vertex (SOFA's MeshOBJLoader without handleSeams)",
                )
                .output(
                    "edgesGroups",
                    DataKind::Words,
                    "Groups of edges (first, count, material, group, material id)",
                )
                .output(
                    "trianglesGroups",
                    DataKind::Words,
                    "Groups of triangles (first, count, material, group, material id)",
                )
                .output(
                    "quadsGroups",
                    DataKind::Words,
                    "Groups of quads (first, count, material, group, material id)",
                );
        }
        MeshLoaderComponent { format, data }
    }
}

/// The lines of an OFF file that hold data: neither empty nor comments.
fn off_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
}

/// Parse an OFF file as SOFA's MeshOffLoader: the `OFF` keyword, the vertex/face/edge counts
/// (the first data line with a non-zero vertex count), one vertex a line, then one face a
/// line, triangles and quads kept and other polygons skipped without counting.
pub fn parse_off(text: &str) -> Result<Mesh, String> {
    let rest = text.trim_start();
    let Some(body) = rest.strip_prefix("OFF") else {
        return Err("not an OFF file (no 'OFF' header)".into());
    };
    if body.starts_with(|c: char| !c.is_whitespace()) {
        return Err("not an OFF file (no 'OFF' header)".into());
    }
    let num = |ln: usize, t: &str| -> Result<f64, String> {
        t.parse::<f64>()
            .map_err(|_| format!("line {ln}: '{}' is not a number", excerpt(t)))
    };
    let mut mesh = Mesh::default();
    let mut lines = off_lines(body);
    let (mut nv, mut nf) = (0usize, 0usize);
    for (ln, l) in lines.by_ref() {
        let mut w = l.split_whitespace();
        let mut count = || -> Result<usize, String> {
            match w.next() {
                Some(t) => t
                    .parse::<usize>()
                    .map_err(|_| format!("line {ln}: bad count '{}'", excerpt(t))),
                None => Ok(0),
            }
        };
        nv = count()?;
        nf = count()?;
        if nv > 0 {
            break;
        }
    }
    while mesh.points.len() < nv {
        let Some((ln, l)) = lines.next() else {
            return Err(format!(
                "the file ends after {} of its {nv} vertices",
                mesh.points.len()
            ));
        };
        let v: Vec<&str> = l.split_whitespace().take(3).collect();
        if v.len() < 3 {
            return Err(format!("line {ln}: a vertex needs 3 coordinates"));
        }
        mesh.points
            .push([num(ln, v[0])?, num(ln, v[1])?, num(ln, v[2])?]);
    }
    let mut faces = 0;
    while faces < nf {
        let Some((ln, l)) = lines.next() else {
            return Err(format!("the file ends after {faces} of its {nf} faces"));
        };
        let w: Vec<&str> = l.split_whitespace().collect();
        let k = w.first().and_then(|t| t.parse::<usize>().ok()).unwrap_or(0);
        if !(3..=4).contains(&k) {
            continue;
        }
        let idx: Vec<u32> = w
            .get(1..=k)
            .ok_or_else(|| format!("line {ln}: a face of {k} vertices lists fewer indices"))?
            .iter()
            .map(|t| {
                t.parse::<u32>()
                    .map_err(|_| format!("line {ln}: bad vertex index '{}'", excerpt(t)))
            })
            .collect::<Result<_, _>>()?;
        if k == 3 {
            mesh.triangles.push([idx[0], idx[1], idx[2]]);
        } else {
            mesh.quads.push([idx[0], idx[1], idx[2], idx[3]]);
        }
        faces += 1;
    }
    check_indices(&mesh)?;
    Ok(mesh)
}

/// A mesh's element indices against its points.
fn check_indices(mesh: &Mesh) -> Result<(), String> {
    match mesh.max_index() {
        Some(m) if m as usize >= mesh.points.len() => Err(format!(
            "an element uses vertex {m} but the file has {} vertices",
            mesh.points.len()
        )),
        _ => Ok(()),
    }
}

/// A trian file's content: the mesh, and for the `.trian` format each triangle's neighbours
/// (-1 across a border edge), the border edges and the triangles having one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrianMesh {
    pub mesh: Mesh,
    pub normals: Vec<[f64; 3]>,
    pub neighbors: Vec<[i64; 3]>,
    pub edges_on_border: Vec<[u32; 2]>,
    pub triangles_on_border: Vec<u32>,
}

/// Whitespace-separated tokens with the errors of a counted format.
struct Tokens<'a> {
    it: std::str::SplitWhitespace<'a>,
}

impl<'a> Tokens<'a> {
    fn next<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, String> {
        let t = self
            .it
            .next()
            .ok_or_else(|| format!("the file ends before {what}"))?;
        t.parse::<T>()
            .map_err(|_| format!("'{}' is not a valid {what}", excerpt(t)))
    }
    fn point(&mut self, what: &str) -> Result<[f64; 3], String> {
        Ok([self.next(what)?, self.next(what)?, self.next(what)?])
    }
}

/// Parse a SOFA `.trian` file (MeshTrianLoader::readTrian): the vertex count and vertices,
/// then the triangle count and for each triangle its 3 vertices and 3 neighbours, neighbour k
/// across the edge opposite vertex k.
pub fn parse_trian(text: &str) -> Result<TrianMesh, String> {
    let mut t = Tokens {
        it: text.split_whitespace(),
    };
    let mut out = TrianMesh::default();
    let nv: usize = t.next("vertex count")?;
    for _ in 0..nv {
        out.mesh.points.push(t.point("vertex coordinate")?);
    }
    let nt: usize = t.next("triangle count")?;
    for i in 0..nt {
        let n: [u32; 3] = [
            t.next("vertex index")?,
            t.next("vertex index")?,
            t.next("vertex index")?,
        ];
        let g: [i64; 3] = [
            t.next("neighbour index")?,
            t.next("neighbour index")?,
            t.next("neighbour index")?,
        ];
        out.mesh.triangles.push(n);
        out.neighbors.push(g);
        for (k, (a, b)) in [(1, 2), (2, 0), (0, 1)].into_iter().enumerate() {
            if g[k] == -1 {
                out.edges_on_border.push([n[a], n[b]]);
            }
        }
        if g.contains(&-1) {
            out.triangles_on_border.push(i as u32);
        }
    }
    check_indices(&out.mesh)?;
    Ok(out)
}

/// Parse a SOFA `.trian2` file (MeshTrianLoader::readTrian2): 13 header lines, then a word and
/// the vertex count with the vertices, a word and the normal count with the normals, a word and
/// the triangle count with the triangles.
pub fn parse_trian2(text: &str) -> Result<TrianMesh, String> {
    let body: String = text.lines().skip(13).collect::<Vec<_>>().join("\n");
    let mut t = Tokens {
        it: body.split_whitespace(),
    };
    let mut out = TrianMesh::default();
    let _: String = t.next("the vertex section")?;
    let nv: usize = t.next("vertex count")?;
    for _ in 0..nv {
        out.mesh.points.push(t.point("vertex coordinate")?);
    }
    let _: String = t.next("the normal section")?;
    let nn: usize = t.next("normal count")?;
    for _ in 0..nn {
        out.normals.push(t.point("normal coordinate")?);
    }
    let _: String = t.next("the triangle section")?;
    let nt: usize = t.next("triangle count")?;
    for _ in 0..nt {
        out.mesh.triangles.push([
            t.next("vertex index")?,
            t.next("vertex index")?,
            t.next("vertex index")?,
        ]);
    }
    check_indices(&out.mesh)?;
    Ok(out)
}

fn read_file(ctx: &mut InitContext<'_>, data: &DataTable) -> Option<String> {
    let f = data.str("filename").to_string();
    if f.is_empty() {
        if !data.is_set("filename") {
            ctx.error("no filename given");
        }
        return None;
    }
    match crate::files::read_capped(std::path::Path::new(&f), crate::files::MAX_DATA_FILE_BYTES) {
        Ok(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Err(e) => {
            ctx.error(format!("cannot read '{f}': {e}"));
            None
        }
    }
}

impl Component for MeshLoaderComponent {
    fn class_name(&self) -> &'static str {
        match self.format {
            MeshFormat::Gmsh => "MeshGmshLoader",
            MeshFormat::Obj => "MeshOBJLoader",
            MeshFormat::Vtk => "MeshVTKLoader",
            MeshFormat::Stl => "MeshSTLLoader",
            MeshFormat::Off => "MeshOffLoader",
            MeshFormat::Trian => "MeshTrianLoader",
        }
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        let mut normals = Vec::new();
        let parsed = if matches!(
            self.format,
            MeshFormat::Vtk | MeshFormat::Stl | MeshFormat::Gmsh
        ) {
            // formats with binary variants: bytes, not text
            let f = self.data.str("filename").to_string();
            if f.is_empty() {
                if !self.data.is_set("filename") {
                    ctx.error("no filename given");
                }
                return;
            }
            match crate::files::read_capped(
                std::path::Path::new(&f),
                crate::files::MAX_DATA_FILE_BYTES,
            ) {
                Ok(b) if self.format == MeshFormat::Stl => parse_stl(&b),
                Ok(b) if self.format == MeshFormat::Gmsh => crate::gmsh::read_gmsh(&b).map(|g| {
                    for note in g.notes {
                        ctx.warn(note);
                    }
                    g.mesh
                }),
                Ok(b) => crate::vtk_read::parse_vtk(&b),
                Err(e) => {
                    ctx.error(format!("cannot read '{f}': {e}"));
                    return;
                }
            }
        } else {
            let Some(text) = read_file(ctx, &self.data) else {
                return;
            };
            match self.format {
                MeshFormat::Off => parse_off(&text),
                MeshFormat::Trian => {
                    let parsed = if self.data.bool("trian2") {
                        parse_trian2(&text)
                    } else {
                        parse_trian(&text)
                    };
                    parsed.map(|t| {
                        normals = t.normals.iter().flatten().copied().collect();
                        let d = &mut self.data;
                        let _ = d.set_value(
                            "neighborTable",
                            Value::Reals(t.neighbors.iter().flatten().map(|&v| v as f64).collect()),
                        );
                        let _ =
                            d.set_value("edgesOnBorder", Value::Ints(flatten(&t.edges_on_border)));
                        let _ = d
                            .set_value("trianglesOnBorderList", Value::Ints(t.triangles_on_border));
                        t.mesh
                    })
                }
                _ => {
                    normals = obj_vertex_normals(&text);
                    if self.format == MeshFormat::Obj {
                        let tc = obj_vertex_texcoords(&text);
                        let groups = obj_groups(&text, self.data.bool("triangulate"));
                        let d = &mut self.data;
                        let _ = d.set_value("texcoords", Value::Reals(tc));
                        for (name, g) in ["edgesGroups", "trianglesGroups", "quadsGroups"]
                            .into_iter()
                            .zip(groups)
                        {
                            let words = g.iter().flat_map(|g| g.words()).collect();
                            let _ = d.set_value(name, Value::Words(words));
                        }
                    }
                    parse_obj(&text)
                }
            }
        };
        let mut mesh = match parsed {
            Ok(m) => m,
            Err(e) => {
                ctx.error(format!("cannot load '{}': {e}", self.data.str("filename")));
                return;
            }
        };
        // SOFA's MeshLoader::updateElements: `triangulate` splits each quad (q0 q1 q2 q3)
        // into (q0 q1 q2) and (q0 q2 q3), appended after the triangles, and drops the quads
        if self.data.bool("triangulate") {
            triangulate_quads(&mut mesh);
        }
        let sub = if self.data.is_set("createSubelements") {
            self.data.bool("createSubelements")
        } else {
            self.format == MeshFormat::Gmsh
        };
        if sub {
            create_subelements(&mut mesh);
        }
        if self.data.reals("transformation")
            != [
                1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
            ]
        {
            ctx.warn("the 4x4 'transformation' is not supported yet and is ignored; use translation/rotation/scale3d");
        }
        let mut pos = flatten_points(&mesh.points);
        apply_transform(
            &mut pos,
            &scale3d(&self.data),
            self.data.reals("rotation"),
            self.data.reals("translation"),
        );
        let d = &mut self.data;
        let _ = d.set_value("position", Value::Reals(pos));
        let _ = d.set_value("edges", Value::Ints(flatten(&mesh.edges)));
        let _ = d.set_value("triangles", Value::Ints(flatten(&mesh.triangles)));
        let _ = d.set_value("quads", Value::Ints(flatten(&mesh.quads)));
        let _ = d.set_value("tetrahedra", Value::Ints(flatten(&mesh.tetrahedra)));
        let _ = d.set_value("hexahedra", Value::Ints(flatten(&mesh.hexahedra)));
        let _ = d.set_value("normals", Value::Reals(normals));
    }
}

impl Loader for MeshLoaderComponent {}

/// What an OBJ file says about each face and line corner: the vertex count, the `vt` and `vn`
/// lists, and each corner's (vertex, texture, normal) indices, 0-based (negative ones counted
/// back from the end of their list as it stood, −1 when absent or invalid), as SOFA's
/// MeshOBJLoader reads them.
struct ObjCorners {
    vertices: usize,
    texcoords: Vec<[f64; 2]>,
    normals: Vec<[f64; 3]>,
    corners: Vec<[i64; 3]>,
}

impl ObjCorners {
    fn read(text: &str) -> ObjCorners {
        let mut c = ObjCorners {
            vertices: 0,
            texcoords: Vec::new(),
            normals: Vec::new(),
            corners: Vec::new(),
        };
        let numbers = |it: std::str::SplitWhitespace<'_>, n: usize| -> Vec<f64> {
            let mut v: Vec<f64> = it.take(n).map(|t| t.parse().unwrap_or(0.0)).collect();
            v.resize(n, 0.0);
            v
        };
        for l in text.lines() {
            let mut it = l.split_whitespace();
            match it.next() {
                Some("v") => c.vertices += 1,
                Some("vt") => {
                    let v = numbers(it, 2);
                    c.texcoords.push([v[0], v[1]]);
                }
                Some("vn") => {
                    let v = numbers(it, 3);
                    c.normals.push([v[0], v[1], v[2]]);
                }
                Some("f") | Some("l") => {
                    let lens = [c.vertices, c.texcoords.len(), c.normals.len()];
                    for t in it {
                        let mut parts = t.split('/');
                        c.corners.push(std::array::from_fn(|k| {
                            match parts.next().and_then(|s| s.parse::<i64>().ok()) {
                                Some(i) if i >= 1 => i - 1,
                                Some(i) if i < 0 => i + lens[k] as i64,
                                _ => -1,
                            }
                        }));
                    }
                }
                _ => {}
            }
        }
        c
    }

    /// The corners as (vertex, entry of the list `k`: 1 texture, 2 normal) when both exist.
    fn pairs(&self, k: usize, len: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.corners.iter().filter_map(move |c| {
            let (p, q) = (usize::try_from(c[0]).ok()?, usize::try_from(c[k]).ok()?);
            (p < self.vertices && q < len).then_some((p, q))
        })
    }
}

/// The vertex normals of an OBJ file as SOFA's MeshOBJLoader computes them without
/// `handleSeams` (Sofa/Component/IO/Mesh/.../MeshOBJLoader.cpp): for each vertex, the sum of
/// the `vn` normals its face and line corners name, normalised (zero when none does); empty
/// when the file has no `vn` line. Flat, 3 numbers a vertex.
pub fn obj_vertex_normals(text: &str) -> Vec<f64> {
    let c = ObjCorners::read(text);
    if c.normals.is_empty() {
        return Vec::new();
    }
    let mut out = vec![[0.0f64; 3]; c.vertices];
    for (p, n) in c.pairs(2, c.normals.len()) {
        for d in 0..3 {
            out[p][d] += c.normals[n][d];
        }
    }
    out.into_iter()
        .flat_map(|v| {
            let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            if l > 0.0 {
                [v[0] / l, v[1] / l, v[2] / l]
            } else {
                v
            }
        })
        .collect()
}

/// The texture coordinate of each vertex of an OBJ file as SOFA's MeshOBJLoader keeps it
/// without `handleSeams`: over the face and line corners in file order, a vertex takes a
/// corner's `vt` when it has none yet (still (0, 0)) or when the new one lies further along
/// (−1, 1) (SOFA's `(new − old)·(−1, 1) > 0`). Empty when the file has no `vt` line. Flat, 2
/// numbers a vertex.
pub fn obj_vertex_texcoords(text: &str) -> Vec<f64> {
    let c = ObjCorners::read(text);
    if c.texcoords.is_empty() {
        return Vec::new();
    }
    let mut out = vec![[0.0f64; 2]; c.vertices];
    for (p, t) in c.pairs(1, c.texcoords.len()) {
        let (cur, new) = (&mut out[p], c.texcoords[t]);
        let unset = cur[0] == 0.0 && cur[1] == 0.0;
        if unset || (new[1] - cur[1]) - (new[0] - cur[0]) > 0.0 {
            *cur = new;
        }
    }
    out.into_iter().flatten().collect()
}

/// One primitive group of an OBJ file (SOFA's PrimitiveGroup): its first primitive and count
/// (counted in faces of its kind: a polygon triangulated is still one), material and group
/// names and the material's index (−1: none found).
#[derive(Clone, Debug, PartialEq)]
pub struct ObjGroup {
    pub first: usize,
    pub count: usize,
    pub material: String,
    pub group: String,
    pub material_id: i64,
}

impl ObjGroup {
    fn words(&self) -> Vec<String> {
        vec![
            self.first.to_string(),
            self.count.to_string(),
            self.material.clone(),
            self.group.clone(),
            self.material_id.to_string(),
        ]
    }
}

/// The edge, triangle and quad groups of an OBJ file as SOFA's MeshOBJLoader makes them: a
/// `g` or `usemtl` line closes the current group of each kind that has new faces; `g` names the
/// next group (its words joined by spaces; "Default_Group" at first), `usemtl` its material.
/// Materials are not loaded here, so their index is −1. With `triangulate` quads count as
/// triangles, as SOFA's loader counts them.
pub fn obj_groups(text: &str, triangulate: bool) -> [Vec<ObjGroup>; 3] {
    let mut groups: [Vec<ObjGroup>; 3] = Default::default();
    let mut count = [0usize; 3];
    let mut first = [0usize; 3];
    let mut group = "Default_Group".to_string();
    let mut material = String::new();
    let close = |groups: &mut [Vec<ObjGroup>; 3],
                 first: &mut [usize; 3],
                 count: &[usize; 3],
                 material: &str,
                 group: &str| {
        for k in 0..3 {
            if count[k] > first[k] {
                groups[k].push(ObjGroup {
                    first: first[k],
                    count: count[k] - first[k],
                    material: material.to_string(),
                    group: group.to_string(),
                    material_id: -1,
                });
                first[k] = count[k];
            }
        }
    };
    for l in text.lines() {
        let mut it = l.split_whitespace();
        match it.next() {
            Some(t @ ("g" | "usemtl")) => {
                close(&mut groups, &mut first, &count, &material, &group);
                let rest: Vec<&str> = it.collect();
                if t == "usemtl" {
                    material = rest.first().copied().unwrap_or("").to_string();
                } else {
                    group = rest.join(" ");
                }
            }
            Some("f") | Some("l") => {
                let n = it.count();
                let kind = match n {
                    2 => 0,
                    4 if !triangulate => 2,
                    _ => 1,
                };
                count[kind] += 1;
            }
            _ => {}
        }
    }
    close(&mut groups, &mut first, &count, &material, &group);
    groups
}

/// SOFA's MeshLoader `triangulate`: each quad (q0 q1 q2 q3) becomes (q0 q1 q2) and (q0 q2 q3),
/// appended after the mesh's triangles; the quads are dropped.
fn triangulate_quads(mesh: &mut Mesh) {
    let quads = std::mem::take(&mut mesh.quads);
    mesh.triangles.extend(
        quads
            .iter()
            .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]]),
    );
}

/// Parse a SOFA `.sph` sphere file: `sphe <id> x y z r` lines.
pub fn parse_sph(text: &str) -> Result<(Vec<[f64; 3]>, Vec<f64>), String> {
    let mut pos = Vec::new();
    let mut rad = Vec::new();
    for (ln, l) in text.lines().enumerate() {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.first() == Some(&"sphe") {
            if t.len() < 6 {
                return Err(format!(
                    "line {}: 'sphe' needs an index, 3 coordinates and a radius",
                    ln + 1
                ));
            }
            let v: Vec<f64> = t[2..6]
                .iter()
                .map(|x| x.parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| format!("line {}: bad number", ln + 1))?;
            pos.push([v[0], v[1], v[2]]);
            rad.push(v[3]);
        }
    }
    Ok((pos, rad))
}

/// SphereLoader: sphere centres and radii from a `.sph` file.
#[derive(Clone)]
pub struct SphereLoader {
    data: DataTable,
}

impl Default for SphereLoader {
    fn default() -> Self {
        Self::new()
    }
}

impl SphereLoader {
    pub fn new() -> Self {
        let data = loader_data(DataTable::new())
            .output("position", DataKind::Reals(3), "Sphere centers")
            .output("listRadius", DataKind::Reals(0), "Radius of each sphere");
        SphereLoader { data }
    }
}

impl Component for SphereLoader {
    fn class_name(&self) -> &'static str {
        "SphereLoader"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        let Some(text) = read_file(ctx, &self.data) else {
            return;
        };
        match parse_sph(&text) {
            Ok((p, r)) => {
                let mut pos = flatten_points(&p);
                apply_transform(
                    &mut pos,
                    &scale3d(&self.data),
                    self.data.reals("rotation"),
                    self.data.reals("translation"),
                );
                let _ = self.data.set_value("position", Value::Reals(pos));
                let _ = self.data.set_value("listRadius", Value::Reals(r));
            }
            Err(e) => ctx.error(format!("cannot load '{}': {e}", self.data.str("filename"))),
        }
    }
}

impl Loader for SphereLoader {}

/// StringMeshCreator (Sofa/Component/IO/Mesh/.../StringMeshCreator.cpp): `resolution` points
/// along x from 0 to 1 (point i at i·(1/(N−1)), as SOFA computes it) joined by N−1 edges.
#[derive(Clone)]
pub struct StringMeshCreator {
    data: DataTable,
}

impl Default for StringMeshCreator {
    fn default() -> Self {
        Self::new()
    }
}

impl StringMeshCreator {
    pub fn new() -> Self {
        StringMeshCreator {
            data: mesh_outputs(creator_data(DataTable::new())).with(
                "resolution",
                DataKind::Int,
                "2",
                "Number of vertices",
            ),
        }
    }
}

impl Component for StringMeshCreator {
    fn class_name(&self) -> &'static str {
        "StringMeshCreator"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        let n = self.data.int("resolution");
        if n < 2 {
            ctx.error(format!(
                "resolution {n}: a string needs at least 2 vertices"
            ));
            return;
        }
        if n as u64 > canape_core::state::MAX_POINTS as u64 {
            ctx.error(format!(
                "resolution {n} is more vertices than a state may hold here ({})",
                canape_core::state::MAX_POINTS
            ));
            return;
        }
        let n = n as usize;
        let step = 1.0 / (n - 1) as f64;
        let mut pos: Vec<f64> = (0..n).flat_map(|i| [i as f64 * step, 0.0, 0.0]).collect();
        apply_transform(
            &mut pos,
            &scale3d(&self.data),
            self.data.reals("rotation"),
            self.data.reals("translation"),
        );
        let edges: Vec<u32> = (1..n as u32).flat_map(|e| [e - 1, e]).collect();
        let _ = self.data.set_value("position", Value::Reals(pos));
        let _ = self.data.set_value("edges", Value::Ints(edges));
    }
}

impl Loader for StringMeshCreator {}

/// GridMeshCreator (Sofa/Component/IO/Mesh/.../GridMeshCreator.cpp): a `resolution` (nx, ny)
/// grid of points on the unit square of the xy plane (point x + nx·y at (x/(nx−1), y/(ny−1))),
/// with quads (`trianglePattern` 0) or two triangles per cell (1: alternate, 2: upward, 3:
/// downward), and the unique edges in SOFA's order (a set ordered by (first, second), each
/// edge kept in the direction first met).
#[derive(Clone)]
pub struct GridMeshCreator {
    data: DataTable,
}

impl Default for GridMeshCreator {
    fn default() -> Self {
        Self::new()
    }
}

impl GridMeshCreator {
    pub fn new() -> Self {
        GridMeshCreator {
            data: mesh_outputs(creator_data(DataTable::new()))
                .with(
                    "resolution",
                    DataKind::Vector(2),
                    "2 2",
                    "Number of vertices in each direction",
                )
                .with(
                    "trianglePattern",
                    DataKind::Int,
                    "2",
                    "0: no triangles, 1: alternate triangles, 2: upward triangles, 3: downward triangles",
                ),
        }
    }
}

impl Component for GridMeshCreator {
    fn class_name(&self) -> &'static str {
        "GridMeshCreator"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        let r = self.data.reals("resolution").to_vec();
        let (nx, ny) = (
            r.first().copied().unwrap_or(2.0),
            r.get(1).copied().unwrap_or(2.0),
        );
        if !(nx >= 2.0 && ny >= 2.0 && nx * ny <= 1e8) {
            ctx.error(format!(
                "resolution {nx} {ny}: a grid needs at least 2 vertices in each direction (and at most 1e8 in all)"
            ));
            return;
        }
        let (nx, ny) = (nx as u32, ny as u32);
        let pattern = self.data.int("trianglePattern");
        if !(0..=3).contains(&pattern) {
            ctx.error(format!(
                "trianglePattern {pattern}: 0 (quads), 1 (alternate), 2 (upward) or 3 (downward)"
            ));
            return;
        }
        let mut pos = Vec::with_capacity((nx * ny * 3) as usize);
        for y in 0..ny {
            for x in 0..nx {
                pos.extend([x as f64 / (nx - 1) as f64, y as f64 / (ny - 1) as f64, 0.0]);
            }
        }
        let v = |x: u32, y: u32| x + y * nx;
        let mut tris: Vec<u32> = Vec::new();
        let mut quads: Vec<u32> = Vec::new();
        let mut edges = std::collections::BTreeSet::new();
        let mut edge = |a: u32, b: u32| {
            if !edges.contains(&(b, a)) {
                edges.insert((a, b));
            }
        };
        for y in 0..ny - 1 {
            for x in 0..nx - 1 {
                let (a, b, c, d) = (v(x, y), v(x + 1, y), v(x + 1, y + 1), v(x, y + 1));
                let cell: Vec<[u32; 3]> = match pattern {
                    0 => {
                        quads.extend([a, b, c, d]);
                        for (p, q) in [(a, b), (b, c), (c, d), (d, a)] {
                            edge(p, q);
                        }
                        continue;
                    }
                    1 if (x + y) % 2 == 0 => vec![[a, b, c], [a, c, d]],
                    1 => vec![[a, b, d], [b, c, d]],
                    2 => vec![[a, b, c], [a, c, d]],
                    _ => vec![[a, b, d], [b, c, d]],
                };
                for t in cell {
                    tris.extend(t);
                    edge(t[0], t[1]);
                    edge(t[1], t[2]);
                    edge(t[2], t[0]);
                }
            }
        }
        apply_transform(
            &mut pos,
            &scale3d(&self.data),
            self.data.reals("rotation"),
            self.data.reals("translation"),
        );
        let edges: Vec<u32> = edges.into_iter().flat_map(|(a, b)| [a, b]).collect();
        let _ = self.data.set_value("position", Value::Reals(pos));
        let _ = self.data.set_value("edges", Value::Ints(edges));
        let _ = self.data.set_value("triangles", Value::Ints(tris));
        let _ = self.data.set_value("quads", Value::Ints(quads));
    }
}

impl Loader for GridMeshCreator {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triangulate_splits_quads_after_the_triangles() {
        let mut m = parse_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 1 2 4 3\n").unwrap();
        triangulate_quads(&mut m);
        assert!(m.quads.is_empty());
        assert_eq!(m.triangles, vec![[0, 1, 2], [0, 1, 3], [0, 3, 2]]);
    }

    #[test]
    fn obj_faces() {
        let m =
            parse_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1/1 2/2 3/3\nf 1 2 4 3\n").unwrap();
        assert_eq!(m.triangles.len(), 1);
        assert_eq!(m.quads.len(), 1);
        assert!(parse_obj("v 0 0 0\nf 1 2 3\n").is_err());
    }

    #[test]
    fn stl_ascii_and_binary_merge_shared_vertices() {
        let ascii = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nfacet normal 0 0 1\nouter loop\nvertex 1 0 0\nvertex 1 1 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n";
        let m = parse_stl(ascii.as_bytes()).unwrap();
        assert_eq!(m.points.len(), 4);
        assert_eq!(m.triangles, vec![[0, 1, 2], [1, 3, 2]]);
        let mut b = vec![0u8; 80];
        b.extend(2u32.to_le_bytes());
        for tri in [
            [0.0f32, 0., 0., 1., 0., 0., 0., 1., 0.],
            [1., 0., 0., 1., 1., 0., 0., 1., 0.],
        ] {
            b.extend([0u8; 12]);
            for v in tri {
                b.extend(v.to_le_bytes());
            }
            b.extend([0u8; 2]);
        }
        let m = parse_stl(&b).unwrap();
        assert_eq!(m.points.len(), 4);
        assert_eq!(m.triangles, vec![[0, 1, 2], [1, 3, 2]]);
        // a truncated binary file is refused
        assert!(parse_stl(&b[..b.len() - 1]).is_err());
    }

    #[test]
    fn off_triangles_quads_and_skipped_polygons() {
        let text = "OFF\n# a comment\n\n5 3 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n0.5 0.5 1\n\
                    4 0 1 2 3\n5 0 1 2 3 4\n3 0 1 4\n3 1 2 4\n";
        let m = parse_off(text).unwrap();
        assert_eq!(m.points.len(), 5);
        assert_eq!(m.points[4], [0.5, 0.5, 1.0]);
        assert_eq!(m.quads, vec![[0, 1, 2, 3]]);
        // the pentagon is skipped and not counted: both triangles are read
        assert_eq!(m.triangles, vec![[0, 1, 4], [1, 2, 4]]);
        assert!(parse_off("OFF\n3 1 0\n0 0 0\n1 0 0\n").is_err());
        assert!(parse_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n").is_err());
        assert!(parse_off("COFF\n").is_err());
    }

    #[test]
    fn trian_neighbours_and_border() {
        // two triangles sharing edge 1-2: triangle 0 (0 1 2) has neighbour 1 across the edge
        // opposite vertex 0
        let text = "4\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n2\n0 1 2 1 -1 -1\n1 3 2 -1 0 -1\n";
        let t = parse_trian(text).unwrap();
        assert_eq!(t.mesh.triangles, vec![[0, 1, 2], [1, 3, 2]]);
        assert_eq!(t.neighbors, vec![[1, -1, -1], [-1, 0, -1]]);
        assert_eq!(t.edges_on_border, vec![[2, 0], [0, 1], [3, 2], [1, 3]]);
        assert_eq!(t.triangles_on_border, vec![0, 1]);
        assert!(parse_trian("3\n0 0 0\n1 0 0\n").is_err());
        let header = "h\n".repeat(13);
        let t2 = parse_trian2(&format!(
            "{header}vertices 3\n0 0 0 1 0 0 0 1 0\nnormals 1\n0 0 1\ntriangles 1\n0 1 2\n"
        ))
        .unwrap();
        assert_eq!(t2.mesh.points.len(), 3);
        assert_eq!(t2.normals, vec![[0.0, 0.0, 1.0]]);
        assert_eq!(t2.mesh.triangles, vec![[0, 1, 2]]);
    }

    #[test]
    fn obj_normals_are_summed_per_vertex() {
        let text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 5 5 5\nvn 0 0 1\nvn 1 0 0\n\
                    f 1//1 2//1 3//2\nf 1//2 -2//2 -3//-2\n";
        let n = obj_vertex_normals(text);
        assert_eq!(n.len(), 12);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        // relative indices count back from the end: in face 2, vertex -3 is vertex 2 and
        // normal -2 is vn 1. Vertex 1: vn1 + vn2; vertex 2: vn1 twice; vertex 3: vn2 twice
        assert!((n[0] - h).abs() < 1e-15 && (n[2] - h).abs() < 1e-15 && n[1] == 0.0);
        assert_eq!(&n[3..6], &[0.0, 0.0, 1.0]);
        assert_eq!(&n[6..9], &[1.0, 0.0, 0.0]);
        // an unused vertex keeps a zero normal
        assert_eq!(&n[9..12], &[0.0, 0.0, 0.0]);
        assert!(obj_vertex_normals("v 0 0 0\nf 1 1 1\n").is_empty());
    }

    #[test]
    fn obj_texcoords_and_groups_as_sofa_keeps_them() {
        let text = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\n\
            vt 0.2 0.1\nvt 0.5 0.9\nvt 0.9 0.3\n\
            g left side\nusemtl red\nf 1/1 2/1 3/2\nf 1/3 3/2 4/2\n\
            g right\nf 2/1 5/3 3/2 4/2\nl 1 5\n";
        let tc = obj_vertex_texcoords(text);
        assert_eq!(tc.len(), 10);
        // vertex 1: vt1 first, then vt3 is not further along (−1, 1) (−0.7 + 0.2 < 0): kept
        assert_eq!(&tc[0..2], &[0.2, 0.1]);
        // vertex 3: vt2 then vt2; vertex 4: vt2; vertex 5: vt3; vertex 2: vt1 twice
        assert_eq!(&tc[4..6], &[0.5, 0.9]);
        assert_eq!(&tc[6..8], &[0.5, 0.9]);
        assert_eq!(&tc[8..10], &[0.9, 0.3]);
        assert_eq!(&tc[2..4], &[0.2, 0.1]);
        assert!(obj_vertex_texcoords("v 0 0 0\nf 1 1 1\n").is_empty());
        let [edges, tris, quads] = obj_groups(text, false);
        let g = |first, count, material: &str, group: &str| ObjGroup {
            first,
            count,
            material: material.into(),
            group: group.into(),
            material_id: -1,
        };
        assert_eq!(tris, vec![g(0, 2, "red", "left side")]);
        assert_eq!(quads, vec![g(0, 1, "red", "right")]);
        assert_eq!(edges, vec![g(0, 1, "red", "right")]);
        // triangulated, the quad is one more triangle face of the second group
        let [_, tris, quads] = obj_groups(text, true);
        assert_eq!(
            tris,
            vec![g(0, 2, "red", "left side"), g(2, 1, "red", "right")]
        );
        assert!(quads.is_empty());
    }
}
