//! MeshLoaderComponent: the Mesh*Loader components (Gmsh, OBJ, VTK, STL, OFF, trian), reading
//! their file at init and exposing the mesh as output Data.

use super::{
    create_subelements, loader_data, mesh_outputs, obj_groups, obj_vertex_normals,
    obj_vertex_texcoords, parse_obj, parse_off, parse_stl, parse_trian, parse_trian2, read_file,
    scale3d, triangulate_quads,
};
use canape_core::component::{Component, Loader};
use canape_core::data::{DataKind, DataTable, Value};
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
