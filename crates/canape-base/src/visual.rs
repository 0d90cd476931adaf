//! Visual models: OglModel, a visual mesh (points and faces) kept for the viewer and moved by
//! its mapping (Sofa/GL/Component/Rendering3D/OglModel). Its transforms beyond `translation`
//! are not applied yet.

use crate::base_data;
use canape_core::component::{Passive, Role};
use canape_core::data::{DataKind, DataTable};
use canape_core::scene::InitContext;

/// OglModel: a visual mesh (points and faces), kept for the viewer and driven by its mapping.
#[derive(Clone)]
pub struct OglModel {
    data: DataTable,
    mesh: canape_core::mesh::Mesh,
}

impl Default for OglModel {
    fn default() -> Self {
        Self::new()
    }
}

impl OglModel {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with("position", DataKind::Reals(3), "", "Vertices coordinates")
            .alias(&["vertices"])
            .with("triangles", DataKind::Ints(3), "", "Triangles of the mesh")
            .with("quads", DataKind::Ints(4), "", "Quads of the mesh")
            .with(
                "translation",
                DataKind::Vector(3),
                "0 0 0",
                "Initial Translation of the object",
            )
            .alias(&["dx"])
            .open();
        OglModel {
            data,
            mesh: Default::default(),
        }
    }
}

impl canape_core::component::Component for OglModel {
    fn class_name(&self) -> &'static str {
        "OglModel"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, _ctx: &mut InitContext<'_>) {
        let mut pos = self.data.reals("position").to_vec();
        canape_core::state::apply_transform(
            &mut pos,
            &[1.0, 1.0, 1.0],
            &[0.0, 0.0, 0.0],
            self.data.reals("translation"),
        );
        self.mesh = canape_core::mesh::Mesh {
            points: canape_core::mesh::group_points(&pos),
            triangles: canape_core::mesh::group(self.data.ints("triangles")),
            quads: canape_core::mesh::group(self.data.ints("quads")),
            ..Default::default()
        };
    }
}

impl Passive for OglModel {
    fn role(&self) -> Role {
        Role::Visual
    }
    fn visual_mesh(&self) -> Option<&canape_core::mesh::Mesh> {
        Some(&self.mesh)
    }
    fn visual_mesh_mut(&mut self) -> Option<&mut canape_core::mesh::Mesh> {
        Some(&mut self.mesh)
    }
}
