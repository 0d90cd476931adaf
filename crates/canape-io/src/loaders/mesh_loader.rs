//! MeshLoaderComponent: the Mesh*Loader components (Gmsh, OBJ, VTK, STL, OFF, trian), reading
//! their file at init and exposing the mesh as output Data.

use super::{
    create_subelements, loader_data, obj_groups, obj_vertex_normals, obj_vertex_texcoords,
    parse_obj, parse_off, parse_stl, parse_trian, parse_trian2, read_file, scale3d,
    triangulate_quads, LoaderData, MeshOutputData,
};
use canape_core::component::Loader;
use canape_core::data::{DataKind, DataTable, Flag, Ints, Reals, Value, Words};
use canape_core::mesh::{flatten, flatten_points};
use canape_core::scene::InitContext;
use canape_core::state::apply_transform;

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

canape_core::data_schema! {
    /// What MeshTrianLoader adds to the mesh Data.
    pub struct TrianData {
        trian2: Flag = ("trian2", DataKind::Bool, "0", "Set to true if the mesh is a trian2 format."),
        neighbor_table: Reals => ("neighborTable", DataKind::Reals(3), "Table of neighborhood triangle indices for each triangle (-1: none)."),
        edges_on_border: Ints => ("edgesOnBorder", DataKind::Ints(2), "List of edges which are on the border of the mesh loaded."),
        triangles_on_border_list: Ints => ("trianglesOnBorderList", DataKind::Ints(0), "List of triangle indices which are on the border of the mesh loaded."),
    }
}

canape_core::data_schema! {
    /// What MeshOBJLoader adds to the mesh Data.
    pub struct ObjData {
        texcoords: Reals => ("texcoords", DataKind::Reals(2), "Texture coordinates of each vertex (SOFA's MeshOBJLoader without handleSeams)"),
        edges_groups: Words => ("edgesGroups", DataKind::Words, "Groups of edges (first, count, material, group, material id)"),
        triangles_groups: Words => ("trianglesGroups", DataKind::Words, "Groups of triangles (first, count, material, group, material id)"),
        quads_groups: Words => ("quadsGroups", DataKind::Words, "Groups of quads (first, count, material, group, material id)"),
    }
}

/// MeshGmshLoader and MeshOBJLoader.
#[derive(Clone)]
pub struct MeshLoaderComponent {
    format: MeshFormat,
    data: DataTable,
    /// Typed handles to the loader Data in `data`.
    dl: LoaderData,
    /// Typed handles to the mesh Data in `data`.
    dm: MeshOutputData,
    /// MeshTrianLoader's Data.
    dt: Option<TrianData>,
    /// MeshOBJLoader's Data.
    dobj: Option<ObjData>,
}

impl MeshLoaderComponent {
    pub fn new(format: MeshFormat) -> Self {
        let (data, dl) = loader_data(DataTable::new());
        let (data, dm) = MeshOutputData::declare(data);
        let (data, dt) = if format == MeshFormat::Trian {
            let (data, dt) = TrianData::declare(data);
            (data, Some(dt))
        } else {
            (data, None)
        };
        let (data, dobj) = if format == MeshFormat::Obj {
            let (data, dobj) = ObjData::declare(data);
            (data, Some(dobj))
        } else {
            (data, None)
        };
        MeshLoaderComponent {
            format,
            data,
            dl,
            dm,
            dt,
            dobj,
        }
    }
}

impl MeshLoaderComponent {
    /// SOFA's class name of this instance.
    fn sofa_class(&self) -> &'static str {
        match self.format {
            MeshFormat::Gmsh => "MeshGmshLoader",
            MeshFormat::Obj => "MeshOBJLoader",
            MeshFormat::Vtk => "MeshVTKLoader",
            MeshFormat::Stl => "MeshSTLLoader",
            MeshFormat::Off => "MeshOffLoader",
            MeshFormat::Trian => "MeshTrianLoader",
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let mut normals = Vec::new();
        let parsed = if matches!(
            self.format,
            MeshFormat::Vtk | MeshFormat::Stl | MeshFormat::Gmsh
        ) {
            // formats with binary variants: bytes, not text
            let f = self.data.get(self.dl.filename).to_string();
            if f.is_empty() {
                if !self.data.was_set(self.dl.filename) {
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
            let Some(text) = read_file(ctx, &self.data, self.dl.filename) else {
                return;
            };
            match self.format {
                MeshFormat::Off => parse_off(&text),
                MeshFormat::Trian => {
                    let dt = self.dt;
                    let parsed = if dt.is_some_and(|dt| self.data.get(dt.trian2)) {
                        parse_trian2(&text)
                    } else {
                        parse_trian(&text)
                    };
                    parsed.map(|t| {
                        normals = t.normals.iter().flatten().copied().collect();
                        let d = &mut self.data;
                        let Some(dt) = dt else {
                            return t.mesh;
                        };
                        let _ = d.put(
                            dt.neighbor_table,
                            Value::Reals(t.neighbors.iter().flatten().map(|&v| v as f64).collect()),
                        );
                        let _ = d.put(dt.edges_on_border, Value::Ints(flatten(&t.edges_on_border)));
                        let _ = d.put(
                            dt.triangles_on_border_list,
                            Value::Ints(t.triangles_on_border),
                        );
                        t.mesh
                    })
                }
                _ => {
                    normals = obj_vertex_normals(&text);
                    if let Some(dobj) = self.dobj {
                        let tc = obj_vertex_texcoords(&text);
                        let groups = obj_groups(&text, self.data.get(self.dm.triangulate));
                        let d = &mut self.data;
                        let _ = d.put(dobj.texcoords, Value::Reals(tc));
                        for (h, g) in [dobj.edges_groups, dobj.triangles_groups, dobj.quads_groups]
                            .into_iter()
                            .zip(groups)
                        {
                            let words = g.iter().flat_map(|g| g.words()).collect();
                            let _ = d.put(h, Value::Words(words));
                        }
                    }
                    parse_obj(&text)
                }
            }
        };
        let mut mesh = match parsed {
            Ok(m) => m,
            Err(e) => {
                ctx.error(format!(
                    "cannot load '{}': {e}",
                    self.data.get(self.dl.filename)
                ));
                return;
            }
        };
        // SOFA's MeshLoader::updateElements: `triangulate` splits each quad (q0 q1 q2 q3)
        // into (q0 q1 q2) and (q0 q2 q3), appended after the triangles, and drops the quads
        let (dl, dm) = (self.dl, self.dm);
        if self.data.get(dm.triangulate) {
            triangulate_quads(&mut mesh);
        }
        let sub = if self.data.was_set(dm.create_subelements) {
            self.data.get(dm.create_subelements)
        } else {
            self.format == MeshFormat::Gmsh
        };
        if sub {
            create_subelements(&mut mesh);
        }
        if self.data.get(dl.transformation)
            != [
                1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
            ]
        {
            ctx.warn("the 4x4 'transformation' is not supported yet and is ignored; use translation/rotation/scale3d");
        }
        let mut pos = flatten_points(&mesh.points);
        apply_transform(
            &mut pos,
            &scale3d(&self.data, dl),
            self.data.get(dl.rotation),
            self.data.get(dl.translation),
        );
        let d = &mut self.data;
        let _ = d.put(dm.position, Value::Reals(pos));
        let _ = d.put(dm.edges, Value::Ints(flatten(&mesh.edges)));
        let _ = d.put(dm.triangles, Value::Ints(flatten(&mesh.triangles)));
        let _ = d.put(dm.quads, Value::Ints(flatten(&mesh.quads)));
        let _ = d.put(dm.tetrahedra, Value::Ints(flatten(&mesh.tetrahedra)));
        let _ = d.put(dm.hexahedra, Value::Ints(flatten(&mesh.hexahedra)));
        let _ = d.put(dm.normals, Value::Reals(normals));
    }
}

canape_core::impl_component!(MeshLoaderComponent, |s| s.sofa_class(), init);

impl Loader for MeshLoaderComponent {}
