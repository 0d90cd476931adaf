//! Mesh loader components: MeshGmshLoader (.msh files, ASCII or binary, read by `gmsh`),
//! MeshOBJLoader, MeshVTKLoader (legacy and XML VTK, read by `vtk_read`), MeshSTLLoader,
//! MeshOffLoader, MeshTrianLoader, SphereLoader.
//! A loader reads its (already resolved) file at init and exposes the content as output Data,
//! which topologies and states pick up through links (`src="@loader"`).
//!
//! The formats live in submodules, re-exported here: `obj`, `stl`, `off`, `trian`, `sphere`
//! (SphereLoader), `creators` (StringMeshCreator, GridMeshCreator) and `mesh_loader` (the
//! MeshLoaderComponent behind the Mesh*Loader classes); this file declares the Data they share
//! (the schemas `LoaderData`, `MeshOutputData`) and holds the mesh helpers (sub-elements, triangulation, the scene's mesh reader).

mod creators;
mod mesh_loader;
mod obj;
mod off;
mod sphere;
mod stl;
mod trian;

pub use creators::{GridMeshCreator, StringMeshCreator};
pub use mesh_loader::{MeshFormat, MeshLoaderComponent};
pub use obj::{obj_groups, obj_vertex_normals, obj_vertex_texcoords, parse_obj, ObjGroup};
pub use off::parse_off;
pub use sphere::{parse_sph, SphereLoader};
pub use stl::parse_stl;
pub use trian::{parse_trian, parse_trian2, TrianMesh};

use crate::error::MeshReadError;
pub use crate::gmsh::parse_gmsh;
use canape_core::data::{Data, DataKind, DataTable, Flag, Ints, Real, Reals, Text};
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use std::collections::BTreeSet;

canape_core::data_schema! {
    /// The Data every loader and mesh creator has after the base Data (declared by
    /// [`loader_data`], or [`creator_data`] with a `filename` of kind Str).
    pub(crate) struct LoaderData {
        filename: Text = ("filename", DataKind::File, "", "Filename of the object"),
        translation: Reals = ("translation", DataKind::Vector(3), "0 0 0", "Translation of the DOFs"),
        rotation: Reals = ("rotation", DataKind::Vector(3), "0 0 0", "Rotation of the DOFs"),
        scale3d: Reals = ("scale3d", DataKind::Vector(3), "1 1 1", "Scale of the DOFs in 3 dimensions"),
        scale: Real = ("scale", DataKind::Real, "1", "Uniform scale, multiplying scale3d (SOFA's MeshLoader reads it at parse time)"),
        transformation: Reals = ("transformation", DataKind::Reals(16), "1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1", "4x4 Homogeneous matrix to transform the DOFs (when present replace any)"),
    }
}

canape_core::data_schema! {
    /// The mesh a loader or creator outputs, and the options shaping it, declared after
    /// [`LoaderData`].
    pub(crate) struct MeshOutputData {
        position: Reals => ("position", DataKind::Reals(3), "Vertices of the mesh loaded"),
        edges: Ints => ("edges", DataKind::Ints(2), "Edges of the mesh loaded"),
        triangles: Ints => ("triangles", DataKind::Ints(3), "Triangles of the mesh loaded"),
        quads: Ints => ("quads", DataKind::Ints(4), "Quads of the mesh loaded"),
        tetrahedra: Ints => ("tetrahedra", DataKind::Ints(4), "Tetrahedra of the mesh loaded"),
        hexahedra: Ints => ("hexahedra", DataKind::Ints(8), "Hexahedra of the mesh loaded"),
        normals: Reals => ("normals", DataKind::Reals(3), "Normals of the mesh loaded"),
        flip_normals: Flag = ("flipNormals", DataKind::Bool, "0", "Flip Normals"),
        triangulate: Flag = ("triangulate", DataKind::Bool, "0", "Divide all polygons into triangles"),
        create_subelements: Flag = ("createSubelements", DataKind::Bool, "0", "Divide all n-D elements into their (n-1)-D boundary elements"),
        only_attached_points: Flag = ("onlyAttachedPoints", DataKind::Bool, "0", "Only keep points attached to elements of the mesh"),
        use_materials: Flag = ("useMaterials", DataKind::Bool, "1", "Load the different materials"),
        handle_seams: Flag = ("handleSeams", DataKind::Bool, "0", "Preserve UV and normal seams information (vertices with multiple UV and/or normals)"),
        loader_type: Text = ("loaderType", DataKind::Str, "", "Filename to load the materials"),
    }
}

/// A loader's Data: the base Data, then [`LoaderData`].
fn loader_data(t: DataTable) -> (DataTable, LoaderData) {
    LoaderData::declare(canape_core::data::base_fields(t))
}

/// A procedural mesh creator's Data: a loader's, with a `filename` that is not read (SOFA makes
/// it read-only: scenes write "nofile").
fn creator_data(t: DataTable) -> (DataTable, LoaderData) {
    let (mut t, d) = loader_data(t);
    t.field_at_mut(d.filename.index())
        .expect("a typed handle indexes its own table")
        .kind = DataKind::Str;
    (t, d)
}

/// A loader's scale: `scale3d` times the uniform `scale` (SOFA's MeshLoader multiplies them).
fn scale3d(d: &DataTable, dl: LoaderData) -> Vec<f64> {
    let s = d.get(dl.scale);
    d.get(dl.scale3d).iter().map(|v| v * s).collect()
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
pub fn read_mesh_file(path: &str) -> Result<Mesh, MeshReadError> {
    let bytes = crate::files::read_capped(
        std::path::Path::new(path),
        crate::files::MAX_DATA_FILE_BYTES,
    )
    .map_err(|error| MeshReadError::Read {
        path: path.to_string(),
        error,
    })?;
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
        Err(MeshReadError::UnknownExtension)
    };
    parsed.map_err(|error| MeshReadError::Load {
        path: path.to_string(),
        error: Box::new(error),
    })
}

/// A mesh's element indices against its points.
fn check_indices(mesh: &Mesh) -> Result<(), MeshReadError> {
    match mesh.max_index() {
        Some(m) if m as usize >= mesh.points.len() => Err(MeshReadError::VertexOutOfRange {
            element: "an element",
            vertex: u64::from(m),
            vertices: mesh.points.len(),
        }),
        _ => Ok(()),
    }
}

/// The text of the file `filename` names, or None with an error said (none when the scene set
/// an empty filename).
fn read_file(ctx: &mut InitContext<'_>, data: &DataTable, filename: Data<Text>) -> Option<String> {
    let f = data.get(filename).to_string();
    if f.is_empty() {
        if !data.was_set(filename) {
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

#[cfg(test)]
mod tests;
