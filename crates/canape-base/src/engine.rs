//! Engines: BoxROI (Sofa/Component/Engine/Select/.../BoxROI.inl), TransformEngine (`transform`), SphereROI,
//! PlaneROI, PairBoxROI (`shape_roi`), PointsFromIndices (`transform`), SubsetTopology (`subset_topology`),
//! MeshTetraStuffing (`mesh_tetra_stuffing`), TransformPosition (`transform_position`),
//! Vertex2Frame (`vertex2frame`), MergeVectors (`merge_vectors`), MergeMeshes
//! (`merge_meshes`), MeshBoundaryROI (`mesh_boundary_roi`), GenerateRigidMass
//! (`generate_rigid_mass`) and VolumeFromTriangles (`volume_from_triangles`).

pub mod generate;
pub mod generate_rigid_mass;
pub mod merge_meshes;
pub mod merge_vectors;
pub mod mesh_boundary_roi;
pub mod mesh_tetra_stuffing;
pub mod select;
mod shape_roi;
pub mod subset_topology;
mod transform;
pub mod transform_position;
pub mod vertex2frame;
pub mod volume_from_triangles;

pub use shape_roi::{PairBoxRoi, ShapeRoi};
pub use transform::{PointsFromIndices, TransformEngine};

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_core::state::VecId;
use canape_types::Vec3;

/// Test support: an engine initialised alone in a one-node scene.
#[cfg(test)]
pub(crate) mod test_support {
    use canape_core::component::Engine;
    use canape_core::scene::{AnyComponent, Scene};

    /// Set `attrs` on `e` (each must parse), put a copy of it in a one-node scene and run its
    /// init there; the number of diagnostics it gave.
    pub fn init_alone<E: Engine + Clone + 'static>(e: &mut E, attrs: &[(&str, &str)]) -> usize {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        crate::test_support::init_in(
            &mut scene,
            root,
            e,
            |e| AnyComponent::Engine(Box::new(e)),
            attrs,
        )
        .len()
    }
}

/// The points a region of interest tests, 3 numbers each: its `position` Data when set, else
/// the context state's rest positions (the ROIs are registered for Vec3 only, so the context
/// state is Vec3). None (reported) without either.
fn roi_points(ctx: &mut InitContext<'_>, data: &DataTable) -> Option<Vec<f64>> {
    if data.is_set("position") {
        return Some(data.reals("position").to_vec());
    }
    match ctx.state() {
        Some(s) if s.dof == canape_types::DofType::Vec3 => {
            Some(s.vec(VecId::REST_POSITION).to_vec())
        }
        _ => {
            ctx.error("no position given and no Vec3 MechanicalObject in the context");
            None
        }
    }
}

/// Selects the points inside one or more axis-aligned boxes (bounds inclusive).
#[derive(Clone)]
pub struct BoxRoi {
    data: DataTable,
}

impl Default for BoxRoi {
    fn default() -> Self {
        Self::new()
    }
}

impl BoxRoi {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with(
                "box",
                DataKind::Reals(6),
                "0 0 0 1 1 1",
                "List of boxes, each defined by two 3D points : xmin,ymin,zmin, xmax,ymax,zmax",
            )
            .alias(&["boxes"])
            .with(
                "orientedBox",
                DataKind::Reals(10),
                "",
                "List of boxes defined by 3 points (p0, p1, p2) and a depth distance",
            )
            .with(
                "position",
                DataKind::Reals(3),
                "",
                "Rest position coordinates of the degrees of freedom",
            )
            .alias(&["rest_position"])
            .with("edges", DataKind::Ints(2), "", "Edge Topology")
            .with("triangles", DataKind::Ints(3), "", "Triangle Topology")
            .with("tetrahedra", DataKind::Ints(4), "", "Tetrahedron Topology")
            .with("hexahedra", DataKind::Ints(8), "", "Hexahedron Topology")
            .with("quad", DataKind::Ints(4), "", "Quad Topology")
            .with(
                "computeEdges",
                DataKind::Bool,
                "1",
                "If true, will compute edge list and index list inside the ROI.",
            )
            .with(
                "computeTriangles",
                DataKind::Bool,
                "1",
                "If true, will compute triangle list and index list inside the ROI.",
            )
            .with(
                "computeTetrahedra",
                DataKind::Bool,
                "1",
                "If true, will compute tetrahedra list and index list inside the ROI.",
            )
            .with(
                "computeHexahedra",
                DataKind::Bool,
                "1",
                "If true, will compute hexahedra list and index list inside the ROI.",
            )
            .with(
                "computeQuad",
                DataKind::Bool,
                "1",
                "If true, will compute quad list and index list inside the ROI.",
            )
            .with(
                "strict",
                DataKind::Bool,
                "1",
                "If true, an element is inside the box if all of its nodes are inside.",
            )
            .with(
                "doUpdate",
                DataKind::Bool,
                "1",
                "If true, updates the selection at the beginning of simulation steps.",
            )
            .output(
                "indices",
                DataKind::Ints(0),
                "Indices of the points contained in the ROI",
            )
            .output(
                "indicesOut",
                DataKind::Ints(0),
                "Indices of the points not contained in the ROI",
            )
            .output(
                "pointsInROI",
                DataKind::Reals(3),
                "Points contained in the ROI",
            )
            .output("nbIndices", DataKind::Int, "Number of Indices")
            .output(
                "edgeIndices",
                DataKind::Ints(0),
                "Indices of the edges contained in the ROI",
            )
            .output(
                "edgesInROI",
                DataKind::Ints(2),
                "Edges contained in the ROI",
            )
            .output(
                "triangleIndices",
                DataKind::Ints(0),
                "Indices of the triangles contained in the ROI",
            )
            .output(
                "trianglesInROI",
                DataKind::Ints(3),
                "Triangles contained in the ROI",
            )
            .output(
                "quadIndices",
                DataKind::Ints(0),
                "Indices of the quad contained in the ROI",
            )
            .output("quadInROI", DataKind::Ints(4), "Quad contained in the ROI")
            .output(
                "tetrahedronIndices",
                DataKind::Ints(0),
                "Indices of the tetrahedra contained in the ROI",
            )
            .output(
                "tetrahedraInROI",
                DataKind::Ints(4),
                "Tetrahedra contained in the ROI",
            )
            .output(
                "hexahedronIndices",
                DataKind::Ints(0),
                "Indices of the hexahedra contained in the ROI",
            )
            .output(
                "hexahedraInROI",
                DataKind::Ints(8),
                "Hexahedra contained in the ROI",
            )
            .with("drawBoxes", DataKind::Bool, "0", "Draw Boxes")
            .alias(&["isVisible"])
            .with("drawPoints", DataKind::Bool, "0", "Draw Points")
            .with("drawEdges", DataKind::Bool, "0", "Draw Edges")
            .with("drawTriangles", DataKind::Bool, "0", "Draw Triangles")
            .with("drawTetrahedra", DataKind::Bool, "0", "Draw Tetrahedra")
            .with("drawHexahedra", DataKind::Bool, "0", "Draw Tetrahedra")
            .with("drawQuads", DataKind::Bool, "0", "Draw Quads")
            .with(
                "drawSize",
                DataKind::Real,
                "1",
                "rendering size for box and topological elements",
            );
        BoxRoi { data }
    }

    /// Boxes after init, normalised so that min ≤ max on every axis.
    pub fn boxes(&self) -> Vec<[f64; 6]> {
        self.data
            .reals("box")
            .chunks_exact(6)
            .map(|b| {
                let mut o = [0.0; 6];
                for d in 0..3 {
                    o[d] = b[d].min(b[d + 3]);
                    o[d + 3] = b[d].max(b[d + 3]);
                }
                o
            })
            .collect()
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if !self
            .data
            .field("orientedBox")
            .is_some_and(|f| f.value == Value::Reals(vec![]))
        {
            ctx.warn("orientedBox is not supported yet and is ignored");
        }
        let pts = roi_points(ctx, &self.data).unwrap_or_default();
        let boxes = self.boxes();
        let mut inside = Vec::new();
        let mut outside = Vec::new();
        let mut pin = Vec::new();
        for (i, p) in pts.chunks_exact(3).enumerate() {
            let hit = boxes
                .iter()
                .any(|b| (0..3).all(|d| !(p[d] < b[d] || p[d] > b[d + 3])));
            if hit {
                inside.push(i as u32);
                pin.extend_from_slice(p);
            } else {
                outside.push(i as u32);
            }
        }
        // elements: those given, else the context topology's (as SOFA links them); inside when
        // all their points are (`strict`), else when their centroid is
        let strict = self.data.bool("strict");
        let in_boxes = |p: [f64; 3]| {
            boxes
                .iter()
                .any(|b| (0..3).all(|d| !(p[d] < b[d] || p[d] > b[d + 3])))
        };
        let point = |i: u32| -> Option<[f64; 3]> {
            let o = 3 * i as usize;
            pts.get(o..o + 3).map(|p| [p[0], p[1], p[2]])
        };
        let topo = ctx.topology().map(|t| t.mesh().clone());
        for (input, compute, ids, list, k) in [
            ("edges", "computeEdges", "edgeIndices", "edgesInROI", 2),
            (
                "triangles",
                "computeTriangles",
                "triangleIndices",
                "trianglesInROI",
                3,
            ),
            ("quad", "computeQuad", "quadIndices", "quadInROI", 4),
            (
                "tetrahedra",
                "computeTetrahedra",
                "tetrahedronIndices",
                "tetrahedraInROI",
                4,
            ),
            (
                "hexahedra",
                "computeHexahedra",
                "hexahedronIndices",
                "hexahedraInROI",
                8,
            ),
        ] {
            if !self.data.bool(compute) {
                continue;
            }
            let elems: Vec<u32> = if self.data.is_set(input) {
                self.data.ints(input).to_vec()
            } else {
                match &topo {
                    Some(m) => match input {
                        "edges" => canape_core::mesh::flatten(&m.edges),
                        "triangles" => canape_core::mesh::flatten(&m.triangles),
                        "quad" => canape_core::mesh::flatten(&m.quads),
                        "tetrahedra" => canape_core::mesh::flatten(&m.tetrahedra),
                        _ => canape_core::mesh::flatten(&m.hexahedra),
                    },
                    None => Vec::new(),
                }
            };
            let mut idx = Vec::new();
            let mut inside_elems = Vec::new();
            for (e, el) in elems.chunks_exact(k).enumerate() {
                let Some(ps) = el.iter().map(|&i| point(i)).collect::<Option<Vec<_>>>() else {
                    continue;
                };
                let hit = if strict {
                    ps.iter().all(|p| in_boxes(*p))
                } else {
                    let mut c = [0.0; 3];
                    for p in &ps {
                        for d in 0..3 {
                            c[d] += p[d] / k as f64;
                        }
                    }
                    in_boxes(c)
                };
                if hit {
                    idx.push(e as u32);
                    inside_elems.extend_from_slice(el);
                }
            }
            let _ = self.data.set_value(ids, Value::Ints(idx));
            let _ = self.data.set_value(list, Value::Ints(inside_elems));
        }
        let n = inside.len() as i64;
        let _ = self.data.set_value("indices", Value::Ints(inside));
        let _ = self.data.set_value("indicesOut", Value::Ints(outside));
        let _ = self.data.set_value("pointsInROI", Value::Reals(pin));
        let _ = self.data.set_value("nbIndices", Value::Int(n));
    }
}

impl_component!(BoxRoi, "BoxROI", init);
impl Engine for BoxRoi {}
