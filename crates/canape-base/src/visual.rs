//! Visual models: OglModel, a visual mesh (points and faces) kept for the viewer and moved by
//! its mapping (Sofa/GL/Component/Rendering3D/OglModel), its initial transform applied as
//! SOFA's VisualModelImpl does at init (Sofa/Component/Visual/.../VisualModelImpl.cpp): scale,
//! then rotation (Euler angles in degrees, R = Rz·Ry·Rx), then translation, with the legacy
//! attributes `dx dy dz`, `rx ry rz`, `scale`, `sx sy sz` read as its `parse` reads them.

use crate::base_data;
use canape_core::component::{Passive, Role};
use canape_core::data::{Data, DataKind, DataTable, Ints, Real, Reals};
use canape_core::scene::InitContext;

canape_core::data_schema! {
    /// OglModel's own Data (after the base Data), with the legacy transform attributes.
    pub struct OglModelData {
        position: Reals = ("position", DataKind::Reals(3), "", "Vertices coordinates") alias ["vertices"],
        triangles: Ints = ("triangles", DataKind::Ints(3), "", "Triangles of the mesh"),
        quads: Ints = ("quads", DataKind::Ints(4), "", "Quads of the mesh"),
        translation: Reals = ("translation", DataKind::Vector(3), "0 0 0", "Initial Translation of the object"),
        rotation: Reals = ("rotation", DataKind::Vector(3), "0 0 0", "Initial Rotation of the object"),
        scale3d: Reals = ("scale3d", DataKind::Vector(3), "1 1 1", "Initial Scale of the object"),
        dx: Real = ("dx", DataKind::Real, "0", "legacy: translation along x"),
        dy: Real = ("dy", DataKind::Real, "0", "legacy: translation along y"),
        dz: Real = ("dz", DataKind::Real, "0", "legacy: translation along z"),
        rx: Real = ("rx", DataKind::Real, "0", "legacy: rotation about x (degrees)"),
        ry: Real = ("ry", DataKind::Real, "0", "legacy: rotation about y (degrees)"),
        rz: Real = ("rz", DataKind::Real, "0", "legacy: rotation about z (degrees)"),
        scale: Real = ("scale", DataKind::Real, "1", "legacy: uniform scale"),
        sx: Real = ("sx", DataKind::Real, "1", "legacy: scale along x"),
        sy: Real = ("sy", DataKind::Real, "1", "legacy: scale along y"),
        sz: Real = ("sz", DataKind::Real, "1", "legacy: scale along z"),
    }
}

/// OglModel: a visual mesh (points and faces), kept for the viewer and driven by its mapping.
#[derive(Clone)]
pub struct OglModel {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: OglModelData,
    mesh: canape_core::mesh::Mesh,
}

impl Default for OglModel {
    fn default() -> Self {
        Self::new()
    }
}

impl OglModel {
    pub fn new() -> Self {
        let (data, d) = OglModelData::declare(base_data(DataTable::new()));
        // OglModel's other SOFA Data (material, texture…) are not declared: an open table keeps
        // them as text
        let data = data.open();
        OglModel {
            data,
            d,
            mesh: Default::default(),
        }
    }
}

impl OglModel {
    fn init_impl(&mut self, _ctx: &mut InitContext<'_>) {
        let (t, d) = (&self.data, self.d);
        let mut pos = t.get(d.position).to_vec();
        let three = |h: [Data<Real>; 3]| h.map(|h| t.get(h));
        let any = |h: [Data<Real>; 3]| h.iter().any(|&h| t.was_set(h));
        let translation = if any([d.dx, d.dy, d.dz]) {
            three([d.dx, d.dy, d.dz]).to_vec()
        } else {
            t.get(d.translation).to_vec()
        };
        let rotation = if any([d.rx, d.ry, d.rz]) {
            three([d.rx, d.ry, d.rz]).to_vec()
        } else {
            t.get(d.rotation).to_vec()
        };
        let scale = if t.was_set(d.scale) {
            vec![t.get(d.scale); 3]
        } else if any([d.sx, d.sy, d.sz]) {
            three([d.sx, d.sy, d.sz]).to_vec()
        } else {
            t.get(d.scale3d).to_vec()
        };
        canape_core::state::apply_transform(&mut pos, &scale, &rotation, &translation);
        self.mesh = canape_core::mesh::Mesh {
            points: canape_core::mesh::group_points(&pos),
            triangles: canape_core::mesh::group(t.get(d.triangles)),
            quads: canape_core::mesh::group(t.get(d.quads)),
            ..Default::default()
        };
    }
}

canape_core::impl_component!(OglModel, "OglModel", init);

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
