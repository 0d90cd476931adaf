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
use canape_core::data::{Data, DataKind, DataTable, Flag, Int, Ints, Real, Reals, Value};
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

/// The points a region of interest tests, 3 numbers each: its `position` Data (the handle
/// `position`) when set, else
/// the context state's rest positions (the ROIs are registered for Vec3 only, so the context
/// state is Vec3). None (reported) without either.
fn roi_points(
    ctx: &mut InitContext<'_>,
    data: &DataTable,
    position: Data<Reals>,
) -> Option<Vec<f64>> {
    let given = data.was_set(position).then(|| data.get(position));
    points_or_rest(ctx, given)
}

/// The `given` points (a ROI's `position` when set), else the context state's rest positions
/// (see [`roi_points`]).
fn points_or_rest(ctx: &mut InitContext<'_>, given: Option<&[f64]>) -> Option<Vec<f64>> {
    if let Some(p) = given {
        return Some(p.to_vec());
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

canape_core::data_schema! {
    /// BoxROI's own Data (after the base Data).
    pub struct BoxRoiData {
        boxes: Reals = ("box", DataKind::Reals(6), "0 0 0 1 1 1", "List of boxes, each defined by two 3D points : xmin,ymin,zmin, xmax,ymax,zmax") alias ["boxes"],
        oriented_box: Reals = ("orientedBox", DataKind::Reals(10), "", "List of boxes defined by 3 points (p0, p1, p2) and a depth distance"),
        position: Reals = ("position", DataKind::Reals(3), "", "Rest position coordinates of the degrees of freedom") alias ["rest_position"],
        edges: Ints = ("edges", DataKind::Ints(2), "", "Edge Topology"),
        triangles: Ints = ("triangles", DataKind::Ints(3), "", "Triangle Topology"),
        tetrahedra: Ints = ("tetrahedra", DataKind::Ints(4), "", "Tetrahedron Topology"),
        hexahedra: Ints = ("hexahedra", DataKind::Ints(8), "", "Hexahedron Topology"),
        quad: Ints = ("quad", DataKind::Ints(4), "", "Quad Topology"),
        compute_edges: Flag = ("computeEdges", DataKind::Bool, "1", "If true, will compute edge list and index list inside the ROI."),
        compute_triangles: Flag = ("computeTriangles", DataKind::Bool, "1", "If true, will compute triangle list and index list inside the ROI."),
        compute_tetrahedra: Flag = ("computeTetrahedra", DataKind::Bool, "1", "If true, will compute tetrahedra list and index list inside the ROI."),
        compute_hexahedra: Flag = ("computeHexahedra", DataKind::Bool, "1", "If true, will compute hexahedra list and index list inside the ROI."),
        compute_quad: Flag = ("computeQuad", DataKind::Bool, "1", "If true, will compute quad list and index list inside the ROI."),
        strict: Flag = ("strict", DataKind::Bool, "1", "If true, an element is inside the box if all of its nodes are inside."),
        do_update: Flag = ("doUpdate", DataKind::Bool, "1", "If true, updates the selection at the beginning of simulation steps."),
        indices: Ints => ("indices", DataKind::Ints(0), "Indices of the points contained in the ROI"),
        indices_out: Ints => ("indicesOut", DataKind::Ints(0), "Indices of the points not contained in the ROI"),
        points_in_roi: Reals => ("pointsInROI", DataKind::Reals(3), "Points contained in the ROI"),
        nb_indices: Int => ("nbIndices", DataKind::Int, "Number of Indices"),
        edge_indices: Ints => ("edgeIndices", DataKind::Ints(0), "Indices of the edges contained in the ROI"),
        edges_in_roi: Ints => ("edgesInROI", DataKind::Ints(2), "Edges contained in the ROI"),
        triangle_indices: Ints => ("triangleIndices", DataKind::Ints(0), "Indices of the triangles contained in the ROI"),
        triangles_in_roi: Ints => ("trianglesInROI", DataKind::Ints(3), "Triangles contained in the ROI"),
        quad_indices: Ints => ("quadIndices", DataKind::Ints(0), "Indices of the quad contained in the ROI"),
        quad_in_roi: Ints => ("quadInROI", DataKind::Ints(4), "Quad contained in the ROI"),
        tetrahedron_indices: Ints => ("tetrahedronIndices", DataKind::Ints(0), "Indices of the tetrahedra contained in the ROI"),
        tetrahedra_in_roi: Ints => ("tetrahedraInROI", DataKind::Ints(4), "Tetrahedra contained in the ROI"),
        hexahedron_indices: Ints => ("hexahedronIndices", DataKind::Ints(0), "Indices of the hexahedra contained in the ROI"),
        hexahedra_in_roi: Ints => ("hexahedraInROI", DataKind::Ints(8), "Hexahedra contained in the ROI"),
        draw_boxes: Flag = ("drawBoxes", DataKind::Bool, "0", "Draw Boxes") alias ["isVisible"],
        draw_points: Flag = ("drawPoints", DataKind::Bool, "0", "Draw Points"),
        draw_edges: Flag = ("drawEdges", DataKind::Bool, "0", "Draw Edges"),
        draw_triangles: Flag = ("drawTriangles", DataKind::Bool, "0", "Draw Triangles"),
        draw_tetrahedra: Flag = ("drawTetrahedra", DataKind::Bool, "0", "Draw Tetrahedra"),
        draw_hexahedra: Flag = ("drawHexahedra", DataKind::Bool, "0", "Draw Tetrahedra"),
        draw_quads: Flag = ("drawQuads", DataKind::Bool, "0", "Draw Quads"),
        draw_size: Real = ("drawSize", DataKind::Real, "1", "rendering size for box and topological elements"),
    }
}

/// Which elements of a mesh a BoxROI selects from (when its own list is not given).
#[derive(Clone, Copy)]
enum ElementKind {
    Edges,
    Triangles,
    Quads,
    Tetrahedra,
    Hexahedra,
}

/// One kind of element a BoxROI selects: its input list, its switch, its two outputs (the
/// indices and the elements inside) and its number of points.
type ElementLists = (
    ElementKind,
    Data<Ints>,
    Data<Flag>,
    Data<Ints>,
    Data<Ints>,
    usize,
);

/// Selects the points inside one or more axis-aligned boxes (bounds inclusive).
#[derive(Clone)]
pub struct BoxRoi {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: BoxRoiData,
}

impl Default for BoxRoi {
    fn default() -> Self {
        Self::new()
    }
}

impl BoxRoi {
    pub fn new() -> Self {
        let (data, d) = BoxRoiData::declare(base_data(DataTable::new()));
        BoxRoi { data, d }
    }

    /// Boxes after init, normalised so that min ≤ max on every axis.
    pub fn boxes(&self) -> Vec<[f64; 6]> {
        self.data
            .get(self.d.boxes)
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

    /// The element kinds, in the order they are selected.
    fn element_lists(&self) -> [ElementLists; 5] {
        let d = &self.d;
        [
            (
                ElementKind::Edges,
                d.edges,
                d.compute_edges,
                d.edge_indices,
                d.edges_in_roi,
                2,
            ),
            (
                ElementKind::Triangles,
                d.triangles,
                d.compute_triangles,
                d.triangle_indices,
                d.triangles_in_roi,
                3,
            ),
            (
                ElementKind::Quads,
                d.quad,
                d.compute_quad,
                d.quad_indices,
                d.quad_in_roi,
                4,
            ),
            (
                ElementKind::Tetrahedra,
                d.tetrahedra,
                d.compute_tetrahedra,
                d.tetrahedron_indices,
                d.tetrahedra_in_roi,
                4,
            ),
            (
                ElementKind::Hexahedra,
                d.hexahedra,
                d.compute_hexahedra,
                d.hexahedron_indices,
                d.hexahedra_in_roi,
                8,
            ),
        ]
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let d = self.d;
        if !self.data.get(d.oriented_box).is_empty() {
            ctx.warn("orientedBox is not supported yet and is ignored");
        }
        let pts = roi_points(ctx, &self.data, d.position).unwrap_or_default();
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
        let strict = self.data.get(d.strict);
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
        for (kind, input, compute, ids, list, k) in self.element_lists() {
            if !self.data.get(compute) {
                continue;
            }
            let elems: Vec<u32> = if self.data.was_set(input) {
                self.data.get(input).to_vec()
            } else {
                match &topo {
                    Some(m) => match kind {
                        ElementKind::Edges => canape_core::mesh::flatten(&m.edges),
                        ElementKind::Triangles => canape_core::mesh::flatten(&m.triangles),
                        ElementKind::Quads => canape_core::mesh::flatten(&m.quads),
                        ElementKind::Tetrahedra => canape_core::mesh::flatten(&m.tetrahedra),
                        ElementKind::Hexahedra => canape_core::mesh::flatten(&m.hexahedra),
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
            let _ = self.data.put(ids, Value::Ints(idx));
            let _ = self.data.put(list, Value::Ints(inside_elems));
        }
        let n = inside.len() as i64;
        let _ = self.data.put(d.indices, Value::Ints(inside));
        let _ = self.data.put(d.indices_out, Value::Ints(outside));
        let _ = self.data.put(d.points_in_roi, Value::Reals(pin));
        let _ = self.data.put(d.nb_indices, Value::Int(n));
    }
}

impl_component!(BoxRoi, "BoxROI", init);
impl Engine for BoxRoi {}
