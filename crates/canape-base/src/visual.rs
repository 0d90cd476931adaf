//! Visual models: OglModel, a visual mesh (points and faces) kept for the viewer and moved by
//! its mapping (Sofa/GL/Component/Rendering3D/OglModel), its initial transform applied as
//! SOFA's VisualModelImpl does at init (Sofa/Component/Visual/.../VisualModelImpl.cpp): scale,
//! then rotation (Euler angles in degrees, R = Rz·Ry·Rx), then translation, with the legacy
//! attributes `dx dy dz`, `rx ry rz`, `scale`, `sx sy sz` read as its `parse` reads them.

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
            .with(
                "rotation",
                DataKind::Vector(3),
                "0 0 0",
                "Initial Rotation of the object",
            )
            .with(
                "scale3d",
                DataKind::Vector(3),
                "1 1 1",
                "Initial Scale of the object",
            );
        let mut data = data;
        for (n, d, help) in [
            ("dx", "0", "legacy: translation along x"),
            ("dy", "0", "legacy: translation along y"),
            ("dz", "0", "legacy: translation along z"),
            ("rx", "0", "legacy: rotation about x (degrees)"),
            ("ry", "0", "legacy: rotation about y (degrees)"),
            ("rz", "0", "legacy: rotation about z (degrees)"),
            ("scale", "1", "legacy: uniform scale"),
            ("sx", "1", "legacy: scale along x"),
            ("sy", "1", "legacy: scale along y"),
            ("sz", "1", "legacy: scale along z"),
        ] {
            data = data.with(n, DataKind::Real, d, help);
        }
        let data = data.open();
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
        let d = &self.data;
        let three = |a: &str, b: &str, c: &str| [d.real(a), d.real(b), d.real(c)];
        let any = |names: [&str; 3]| names.iter().any(|n| d.is_set(n));
        let translation = if any(["dx", "dy", "dz"]) {
            three("dx", "dy", "dz").to_vec()
        } else {
            d.reals("translation").to_vec()
        };
        let rotation = if any(["rx", "ry", "rz"]) {
            three("rx", "ry", "rz").to_vec()
        } else {
            d.reals("rotation").to_vec()
        };
        let scale = if d.is_set("scale") {
            vec![d.real("scale"); 3]
        } else if any(["sx", "sy", "sz"]) {
            three("sx", "sy", "sz").to_vec()
        } else {
            d.reals("scale3d").to_vec()
        };
        canape_core::state::apply_transform(&mut pos, &scale, &rotation, &translation);
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

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::{Component, Passive};
    use canape_core::data::Value;

    fn transformed(attrs: &[(&str, &str)]) -> Vec<[f64; 3]> {
        let mut m = OglModel::new();
        m.data_mut()
            .set_value("position", Value::Reals(vec![0.0, 1.0, 0.0]))
            .unwrap();
        for (k, v) in attrs {
            m.data_mut().set_str(k, v).unwrap();
        }
        let mut scene = canape_core::scene::Scene::new();
        let root = scene.add_node("root", None);
        let id = scene.add_component(
            root,
            "visu",
            canape_core::scene::AnyComponent::Passive(Box::new(m.clone())),
            None,
        );
        let mut diags = canape_core::diag::Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        m.init(&mut ctx);
        m.visual_mesh().unwrap().points.clone()
    }

    fn close(a: [f64; 3], b: [f64; 3]) -> bool {
        (0..3).all(|k| (a[k] - b[k]).abs() < 1e-12)
    }

    #[test]
    fn scale_then_rotation_then_translation_as_sofa() {
        // (0 1 0) scaled by 2, turned 90° about x, moved 1 along y: (0 1 2)
        let legacy = transformed(&[("scale", "2"), ("rx", "90"), ("dy", "1")]);
        assert!(close(legacy[0], [0.0, 1.0, 2.0]), "{legacy:?}");
        let data = transformed(&[
            ("scale3d", "2 2 2"),
            ("rotation", "90 0 0"),
            ("translation", "0 1 0"),
        ]);
        assert!(close(data[0], [0.0, 1.0, 2.0]), "{data:?}");
        // Euler angles compose as Rz·Ry·Rx: x first, then z
        let both = transformed(&[("rotation", "90 0 90")]);
        assert!(close(both[0], [0.0, 0.0, 1.0]), "{both:?}");
    }
}
