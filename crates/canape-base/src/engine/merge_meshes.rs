//! MergeMeshes (Sofa/Component/Engine/Generate/src/sofa/component/engine/generate/
//! MergeMeshes.h, .inl): the meshes `position1`/`edges1`/`triangles1`/… to
//! `position<nbMeshes>`/… one after the other, the element indices of each mesh shifted by
//! the number of points of the meshes before it. Vec3 positions.

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{Data, DataKind, DataTable, Int, Ints, Reals, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;

/// The meshes declared (SOFA creates `nbMeshes` input sets; here they exist up to this many).
pub const MAX_MESHES: usize = 4;

/// The element lists: output name, points per element, and the input names per mesh (the
/// order of the handles in [`MergeMeshes::elements`] and of the outputs in
/// [`MergeMeshesOutputs::elements`]).
const ELEMENTS: [(&str, usize, [&str; MAX_MESHES]); 5] = [
    ("edges", 2, ["edges1", "edges2", "edges3", "edges4"]),
    (
        "triangles",
        3,
        ["triangles1", "triangles2", "triangles3", "triangles4"],
    ),
    ("quads", 4, ["quads1", "quads2", "quads3", "quads4"]),
    (
        "tetrahedra",
        4,
        ["tetrahedra1", "tetrahedra2", "tetrahedra3", "tetrahedra4"],
    ),
    (
        "hexahedra",
        8,
        ["hexahedra1", "hexahedra2", "hexahedra3", "hexahedra4"],
    ),
];

const POSITIONS: [&str; MAX_MESHES] = ["position1", "position2", "position3", "position4"];

/// MergeMeshes: one mesh made of several.
#[derive(Clone)]
pub struct MergeMeshes {
    data: DataTable,
    /// Typed handle to `nbMeshes`.
    nb_meshes: Data<Int>,
    /// Typed handles to the input positions, per mesh.
    positions: [Data<Reals>; MAX_MESHES],
    /// Typed handles to the input elements, per kind (as [`ELEMENTS`]) then per mesh.
    elements: [[Data<Ints>; MAX_MESHES]; 5],
    /// Typed handles to the outputs.
    out: MergeMeshesOutputs,
}

canape_core::data_schema! {
    /// MergeMeshes's outputs (after its inputs).
    pub struct MergeMeshesOutputs {
        npoints: Int => ("npoints", DataKind::Int, "Number Of out points"),
        position: Reals => ("position", DataKind::Reals(3), "Output Vertices of the merged mesh"),
        edges: Ints => ("edges", DataKind::Ints(2), "Output Edges of the merged mesh"),
        triangles: Ints => ("triangles", DataKind::Ints(3), "Output Triangles of the merged mesh"),
        quads: Ints => ("quads", DataKind::Ints(4), "Output Quads of the merged mesh"),
        tetrahedra: Ints => ("tetrahedra", DataKind::Ints(4), "Output Tetrahedra of the merged mesh"),
        hexahedra: Ints => ("hexahedra", DataKind::Ints(8), "Output Hexahedra of the merged mesh"),
    }
}

impl MergeMeshesOutputs {
    /// The element outputs, in the order of [`ELEMENTS`].
    fn elements(&self) -> [Data<Ints>; 5] {
        [
            self.edges,
            self.triangles,
            self.quads,
            self.tetrahedra,
            self.hexahedra,
        ]
    }
}

impl Default for MergeMeshes {
    fn default() -> Self {
        Self::new()
    }
}

impl MergeMeshes {
    pub fn new() -> Self {
        let (mut data, nb_meshes) = base_data(DataTable::new()).declare::<Int>(
            "nbMeshes",
            DataKind::Int,
            "2",
            "number of meshes to merge",
        );
        // the inputs, mesh after mesh: its positions, then its elements of each kind
        let mut positions = Vec::with_capacity(MAX_MESHES);
        let mut elements: [Vec<Data<Ints>>; 5] = Default::default();
        for k in 0..MAX_MESHES {
            let (t, h) = data.declare::<Reals>(
                POSITIONS[k],
                DataKind::Reals(3),
                "",
                "input positions for mesh k",
            );
            data = t;
            positions.push(h);
            for (e, (_, width, names)) in ELEMENTS.into_iter().enumerate() {
                let (t, h) = data.declare::<Ints>(
                    names[k],
                    DataKind::Ints(width),
                    "",
                    "input elements for mesh k",
                );
                data = t;
                elements[e].push(h);
            }
        }
        let (data, out) = MergeMeshesOutputs::declare(data);
        MergeMeshes {
            data,
            nb_meshes,
            positions: positions.try_into().expect("one per mesh"),
            elements: elements.map(|e| e.try_into().expect("one per mesh")),
            out,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let nb = self.data.get(self.nb_meshes);
        let n = match usize::try_from(nb) {
            Ok(n) if n <= MAX_MESHES => n,
            _ => {
                ctx.error(format!(
                    "nbMeshes = {nb} is not supported (0 to {MAX_MESHES}): the first {MAX_MESHES} meshes are merged"
                ));
                if nb < 0 {
                    0
                } else {
                    MAX_MESHES
                }
            }
        };
        let mut ignored: Vec<&str> = Vec::new();
        for k in n..MAX_MESHES {
            if self.data.was_set(self.positions[k]) {
                ignored.push(POSITIONS[k]);
            }
            for (e, (_, _, names)) in ELEMENTS.iter().enumerate() {
                if self.data.was_set(self.elements[e][k]) {
                    ignored.push(names[k]);
                }
            }
        }
        if !ignored.is_empty() {
            ctx.warn(format!(
                "{} set beyond nbMeshes = {n}: not merged",
                ignored.join(", ")
            ));
        }
        let positions: Vec<f64> = self.positions[..n]
            .iter()
            .flat_map(|&p| self.data.get(p).iter().copied())
            .collect();
        let mut outputs = Vec::new();
        for (out, inputs) in self.out.elements().into_iter().zip(&self.elements) {
            let mut shift = 0u32;
            let mut merged = Vec::new();
            for k in 0..n {
                merged.extend(self.data.get(inputs[k]).iter().map(|&i| i + shift));
                shift += (self.data.get(self.positions[k]).len() / 3) as u32;
            }
            outputs.push((out, merged));
        }
        let npoints = (positions.len() / 3) as i64;
        let (t, o) = (&mut self.data, self.out);
        let _ = t.put(o.position, Value::Reals(positions));
        let _ = t.put(o.npoints, Value::Int(npoints));
        for (out, merged) in outputs {
            let _ = t.put(out, Value::Ints(merged));
        }
    }
}

impl_component!(MergeMeshes, "MergeMeshes", init);

impl Engine for MergeMeshes {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::scene::{AnyComponent, Scene};

    #[test]
    fn indices_shift_by_the_points_before() {
        let mut e = MergeMeshes::new();
        for (k, v) in [
            ("position1", "0 0 0 1 0 0 0 1 0"),
            ("triangles1", "0 1 2"),
            ("position2", "5 5 5 6 5 5 6 6 5 5 6 5"),
            ("quads2", "0 1 2 3"),
            ("edges2", "3 0"),
            ("edges1", "0 2"),
        ] {
            e.data.set_str(k, v).unwrap();
        }
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let id = scene.add_component(root, "m", AnyComponent::Engine(Box::new(e.clone())), None);
        let mut diags = canape_core::diag::Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        e.init_impl(&mut ctx);
        assert!(diags.is_empty());
        assert_eq!(e.data.int("npoints"), 7);
        assert_eq!(e.data.reals("position").len(), 21);
        assert_eq!(e.data.reals("position")[9], 5.0);
        assert_eq!(e.data.ints("triangles"), &[0, 1, 2]);
        assert_eq!(e.data.ints("quads"), &[3, 4, 5, 6]);
        assert_eq!(e.data.ints("edges"), &[0, 2, 6, 3]);
        // a third mesh beyond nbMeshes = 2 is reported and left out
        e.data.set_str("position3", "9 9 9").unwrap();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        e.init_impl(&mut ctx);
        assert_eq!(diags.len(), 1);
        assert_eq!(e.data.int("npoints"), 7);
    }
}
