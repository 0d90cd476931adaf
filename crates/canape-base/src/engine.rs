//! Engines: BoxROI (Sofa/Component/Engine/Select/.../BoxROI.inl), TransformEngine, SphereROI,
//! PlaneROI, PairBoxROI, PointsFromIndices, SubsetTopology (`subset_topology`),
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
pub mod subset_topology;
pub mod transform_position;
pub mod vertex2frame;
pub mod volume_from_triangles;

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

/// TransformEngine (Sofa/Component/Engine/Transform/.../TransformEngine.inl): output positions
/// = translation + R_q R_euler (scale ∘ input) (with `inverse`, the inverse operations in reverse
/// order); Euler angles in degrees, R = Rz Ry Rx. For Vec3d positions.
#[derive(Clone)]
pub struct TransformEngine {
    data: DataTable,
}

impl Default for TransformEngine {
    fn default() -> Self {
        Self::new()
    }
}

impl TransformEngine {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with(
                "input_position",
                DataKind::Reals(3),
                "",
                "input array of 3d points",
            )
            .with(
                "translation",
                DataKind::Vector(3),
                "0 0 0",
                "translation vector ",
            )
            .with("rotation", DataKind::Vector(3), "0 0 0", "rotation vector ")
            .with(
                "quaternion",
                DataKind::Vector(4),
                "0 0 0 1",
                "rotation quaternion ",
            )
            .with("scale", DataKind::Vector(3), "1 1 1", "scale factor")
            .with(
                "inverse",
                DataKind::Bool,
                "0",
                "true to apply inverse transformation",
            )
            .output(
                "output_position",
                DataKind::Reals(3),
                "output array of 3d points",
            );
        TransformEngine { data }
    }

    fn init_impl(&mut self, _ctx: &mut InitContext<'_>) {
        use nalgebra::{Quaternion, UnitQuaternion, Vector3};
        let v3 = |name: &str, d: f64| -> Vector3<f64> {
            let r = self.data.reals(name);
            if r.len() == 3 {
                Vector3::new(r[0], r[1], r[2])
            } else {
                Vector3::repeat(d)
            }
        };
        let (t, rot, s) = (
            v3("translation", 0.0),
            v3("rotation", 0.0),
            v3("scale", 1.0),
        );
        let q = self.data.reals("quaternion");
        let q = if q.len() == 4 {
            Quaternion::new(q[3], q[0], q[1], q[2])
        } else {
            Quaternion::identity()
        };
        let d = std::f64::consts::PI / 180.0;
        let re = UnitQuaternion::from_euler_angles(rot.x * d, rot.y * d, rot.z * d);
        let rq = UnitQuaternion::new_normalize(q);
        let inverse = self.data.bool("inverse");
        let out: Vec<f64> = self
            .data
            .reals("input_position")
            .chunks_exact(3)
            .flat_map(|p| {
                let p = Vector3::new(p[0], p[1], p[2]);
                let r = if inverse {
                    let u = re.inverse() * (rq.inverse() * (p - t));
                    u.component_div(&s)
                } else {
                    t + rq * (re * p.component_mul(&s))
                };
                [r.x, r.y, r.z]
            })
            .collect();
        let _ = self.data.set_value("output_position", Value::Reals(out));
    }
}

impl_component!(TransformEngine, "TransformEngine", init);

impl Engine for TransformEngine {
    fn reads_context_state(&self) -> bool {
        false
    }
}

/// The positions of the listed points (Sofa/Component/Engine/Select/.../PointsFromIndices.inl):
/// `position` (the context state's positions when not given), each listed point's position
/// once — a position equal to one already output is skipped, as SOFA does. Indices out of range
/// are reported and skipped.
#[derive(Clone)]
pub struct PointsFromIndices {
    data: DataTable,
}

impl Default for PointsFromIndices {
    fn default() -> Self {
        Self::new()
    }
}

impl PointsFromIndices {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with(
                "position",
                DataKind::Reals(3),
                "",
                "Position coordinates of the degrees of freedom",
            )
            .with("indices", DataKind::Ints(0), "", "Indices of the points")
            .output(
                "indices_position",
                DataKind::Reals(3),
                "Coordinates of the points contained in indices",
            );
        PointsFromIndices { data }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let x = if self.data.is_set("position") {
            self.data.reals("position").to_vec()
        } else {
            match ctx.state() {
                Some(s) if s.dof == canape_types::DofType::Vec3 => s.vec(VecId::POSITION).to_vec(),
                _ => {
                    ctx.error("no position given and no Vec3 MechanicalObject in the context");
                    return;
                }
            }
        };
        let n = x.len() / 3;
        let mut out: Vec<[f64; 3]> = Vec::new();
        let mut bad = Vec::new();
        for &i in self.data.ints("indices") {
            let i = i as usize;
            if i >= n {
                bad.push(i);
                continue;
            }
            let p = [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
            if !out.contains(&p) {
                out.push(p);
            }
        }
        if !bad.is_empty() {
            ctx.error(format!(
                "indices {bad:?} are out of range (the positions have {n} points) and are skipped"
            ));
        }
        let _ = self.data.set_value(
            "indices_position",
            Value::Reals(out.into_iter().flatten().collect()),
        );
    }
}

impl_component!(PointsFromIndices, "PointsFromIndices", init);

impl Engine for PointsFromIndices {
    fn reads_context_state(&self) -> bool {
        !self.data.is_set("position")
    }
}

/// SphereROI and PlaneROI (Sofa/Component/Engine/Select/.../SphereROI.inl, PlaneROI.inl): the
/// points inside spheres (|p − c| ≤ r) or inside boxes built on a parallelogram
/// (p0, p1, p2, p0 + p2 − p1) extruded by ±depth/2 along its normal, and the elements whose
/// points are all inside one region (for spheres, edges within `edgeAngle` degrees of
/// `direction` and triangles within `triAngle` degrees of `normal` when those are positive).
#[derive(Clone)]
pub struct ShapeRoi {
    data: DataTable,
    sphere: bool,
}

impl ShapeRoi {
    fn with(sphere: bool) -> Self {
        let mut data = base_data(DataTable::new());
        data = if sphere {
            data.with("centers", DataKind::Reals(3), "", "Center(s) of the sphere(s)")
                .with("radii", DataKind::Reals(0), "", "Radius(i) of the sphere(s)")
                .with("direction", DataKind::Reals(0), "0 0 0", "Edge direction(if edgeAngle > 0)")
                .with("normal", DataKind::Reals(0), "0 0 0", "Normal direction of the triangles (if triAngle > 0)")
                .with("edgeAngle", DataKind::Real, "0", "Max angle between the direction of the selected edges and the specified direction")
                .with("triAngle", DataKind::Real, "0", "Max angle between the normal of the selected triangle and the specified normal direction")
                .alias(&["angle"])
                .with("quads", DataKind::Ints(4), "", "Quads Topology")
                .with("computeQuads", DataKind::Bool, "1", "If true, will compute quad list and index list inside the ROI.")
                .with("drawSphere", DataKind::Bool, "0", "Draw sphere(s)")
                .with("drawQuads", DataKind::Bool, "0", "Draw Quads")
                .output("quadIndices", DataKind::Ints(0), "Indices of the quads contained in the ROI")
                .output("quadsInROI", DataKind::Ints(4), "Quads contained in the ROI")
                .output("indicesOut", DataKind::Ints(0), "Indices of the points not contained in the ROI")
        } else {
            data.with(
                "plane",
                DataKind::Reals(10),
                "0 0 0 0 0 0 0 0 0 0",
                "Plane defined by 3 points and a depth distance",
            )
            .with("drawBoxes", DataKind::Bool, "0", "Draw Box")
            .alias(&["isVisible"])
        };
        let data = data
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
            .with("drawPoints", DataKind::Bool, "0", "Draw Points")
            .with("drawEdges", DataKind::Bool, "0", "Draw Edges")
            .with("drawTriangles", DataKind::Bool, "0", "Draw Triangles")
            .with("drawTetrahedra", DataKind::Bool, "0", "Draw Tetrahedra")
            .with(
                "drawSize",
                DataKind::Real,
                "1",
                "rendering size for box and topological elements",
            )
            .output(
                "indices",
                DataKind::Ints(0),
                "Indices of the points contained in the ROI",
            )
            .alias(&["pointIndices"])
            .output(
                "edgeIndices",
                DataKind::Ints(0),
                "Indices of the edges contained in the ROI",
            )
            .output(
                "triangleIndices",
                DataKind::Ints(0),
                "Indices of the triangles contained in the ROI",
            )
            .output(
                "tetrahedronIndices",
                DataKind::Ints(0),
                "Indices of the tetrahedra contained in the ROI",
            )
            .output(
                "pointsInROI",
                DataKind::Reals(3),
                "Points contained in the ROI",
            )
            .output(
                "edgesInROI",
                DataKind::Ints(2),
                "Edges contained in the ROI",
            )
            .output(
                "trianglesInROI",
                DataKind::Ints(3),
                "Triangles contained in the ROI",
            )
            .output(
                "tetrahedraInROI",
                DataKind::Ints(4),
                "Tetrahedra contained in the ROI",
            );
        ShapeRoi { data, sphere }
    }
    pub fn sphere() -> Self {
        Self::with(true)
    }
    pub fn plane() -> Self {
        Self::with(false)
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let pts = roi_points(ctx, &self.data).unwrap_or_default();
        let p = |i: u32| -> Option<Vec3> {
            let o = 3 * i as usize;
            pts.get(o..o + 3).map(|q| Vec3::new(q[0], q[1], q[2]))
        };
        // regions: a test per region
        type Region = Box<dyn Fn(&Vec3) -> bool>;
        let mut regions: Vec<Region> = Vec::new();
        if self.sphere {
            let centers: Vec<Vec3> = self
                .data
                .reals("centers")
                .chunks_exact(3)
                .map(|c| Vec3::new(c[0], c[1], c[2]))
                .collect();
            let mut radii = self.data.reals("radii").to_vec();
            if radii.len() == 1 && centers.len() > 1 {
                radii = vec![radii[0]; centers.len()];
            }
            if radii.len() != centers.len() {
                ctx.error(format!(
                    "{} centers but {} radii: nothing is selected",
                    centers.len(),
                    radii.len()
                ));
                return;
            }
            for (c, r) in centers.into_iter().zip(radii) {
                regions.push(Box::new(move |q: &Vec3| (q - c).norm() <= r));
            }
        } else {
            for pl in self.data.reals("plane").chunks_exact(10) {
                let p0 = Vec3::new(pl[0], pl[1], pl[2]);
                let a = Vec3::new(pl[3], pl[4], pl[5]) - p0;
                let b = Vec3::new(pl[6], pl[7], pl[8]) - Vec3::new(pl[3], pl[4], pl[5]);
                let n = a.cross(&b);
                let n = if n.norm() > 0.0 { n.normalize() } else { n };
                let half = pl[9].abs() / 2.0;
                // p − p0 = α a + β b + γ n
                let m = canape_types::Mat3::from_columns(&[a, b, n]);
                let Some(inv) = m.try_inverse() else {
                    ctx.warn("a degenerate plane selects nothing");
                    continue;
                };
                regions.push(Box::new(move |q: &Vec3| {
                    let c = inv * (q - p0);
                    (0.0..=1.0).contains(&c.x) && (0.0..=1.0).contains(&c.y) && c.z.abs() <= half
                }));
            }
        }
        let inside_any = |q: &Vec3| regions.iter().any(|r| r(q));
        let mut inside = Vec::new();
        let mut outside = Vec::new();
        let mut pin = Vec::new();
        for i in 0..(pts.len() / 3) as u32 {
            let q = p(i).expect("in range");
            if inside_any(&q) {
                inside.push(i);
                pin.extend_from_slice(q.as_slice());
            } else {
                outside.push(i);
            }
        }
        let topo = ctx.topology().map(|t| t.mesh().clone());
        let deg = std::f64::consts::PI / 180.0;
        let (edge_angle, tri_angle) = if self.sphere {
            (self.data.real("edgeAngle"), self.data.real("triAngle"))
        } else {
            (0.0, 0.0)
        };
        let v3 = |name: &str| -> Vec3 {
            let r = self.data.reals(name);
            Vec3::new(
                r.first().copied().unwrap_or(0.0),
                r.get(1).copied().unwrap_or(0.0),
                r.get(2).copied().unwrap_or(0.0),
            )
        };
        let (dir, nrm) = (v3("direction"), v3("normal"));
        let mut lists = vec![
            ("edges", "computeEdges", "edgeIndices", "edgesInROI", 2),
            (
                "triangles",
                "computeTriangles",
                "triangleIndices",
                "trianglesInROI",
                3,
            ),
            (
                "tetrahedra",
                "computeTetrahedra",
                "tetrahedronIndices",
                "tetrahedraInROI",
                4,
            ),
        ];
        if self.sphere {
            lists.push(("quads", "computeQuads", "quadIndices", "quadsInROI", 4));
        }
        for (input, compute, ids, list, k) in lists {
            if !self.data.bool(compute) {
                continue;
            }
            let elems: Vec<u32> = if self.data.is_set(input) {
                self.data.ints(input).to_vec()
            } else {
                topo.as_ref()
                    .map(|m| match input {
                        "edges" => canape_core::mesh::flatten(&m.edges),
                        "triangles" => canape_core::mesh::flatten(&m.triangles),
                        "quads" => canape_core::mesh::flatten(&m.quads),
                        _ => canape_core::mesh::flatten(&m.tetrahedra),
                    })
                    .unwrap_or_default()
            };
            let mut idx = Vec::new();
            let mut sel = Vec::new();
            for (e, el) in elems.chunks_exact(k).enumerate() {
                let Some(ps) = el.iter().map(|&i| p(i)).collect::<Option<Vec<_>>>() else {
                    continue;
                };
                let in_one = regions.iter().any(|r| ps.iter().all(r));
                let angle_ok = match k {
                    2 if edge_angle > 0.0 => {
                        let d = (ps[1] - ps[0]).normalize();
                        dir.normalize().dot(&d).abs() >= (edge_angle * deg).cos().abs()
                    }
                    3 if tri_angle > 0.0 && input == "triangles" => {
                        let n = (ps[2] - ps[0]).cross(&(ps[1] - ps[0])).normalize();
                        n.dot(&nrm.normalize()) >= (tri_angle * deg).cos()
                    }
                    _ => true,
                };
                if in_one && angle_ok {
                    idx.push(e as u32);
                    sel.extend_from_slice(el);
                }
            }
            let _ = self.data.set_value(ids, Value::Ints(idx));
            let _ = self.data.set_value(list, Value::Ints(sel));
        }
        let _ = self.data.set_value("indices", Value::Ints(inside));
        if self.sphere {
            let _ = self.data.set_value("indicesOut", Value::Ints(outside));
        }
        let _ = self.data.set_value("pointsInROI", Value::Reals(pin));
    }
}

impl_component!(
    ShapeRoi,
    |s| if s.sphere { "SphereROI" } else { "PlaneROI" },
    init
);
impl Engine for ShapeRoi {}

/// PairBoxROI (Sofa/Component/Engine/Select/.../PairBoxRoi.inl): the points inside
/// `inclusiveBox` but not inside `includedBox` (both closed, corners reordered), from `position`
/// or the context state's rest positions. A box left at zeros selects nothing, as in SOFA.
#[derive(Clone)]
pub struct PairBoxRoi {
    data: DataTable,
}

impl Default for PairBoxRoi {
    fn default() -> Self {
        Self::new()
    }
}

impl PairBoxRoi {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with(
                "inclusiveBox",
                DataKind::Reals(6),
                "0 0 0 0 0 0",
                "Inclusive box defined by xmin,ymin,zmin, xmax,ymax,zmax",
            )
            .with(
                "includedBox",
                DataKind::Reals(6),
                "0 0 0 0 0 0",
                "Included box defined by xmin,ymin,zmin, xmax,ymax,zmax",
            )
            .with(
                "position",
                DataKind::Reals(3),
                "",
                "Rest position coordinates of the degrees of freedom",
            )
            .alias(&["rest_position"])
            .with(
                "meshPosition",
                DataKind::Reals(3),
                "",
                "Vertices of the mesh loaded",
            )
            .with(
                "drawInclusiveBox",
                DataKind::Bool,
                "0",
                "Draw Inclusive Box",
            )
            .with("drawIncludedBox", DataKind::Bool, "0", "Draw Included Box")
            .with("drawPoints", DataKind::Bool, "0", "Draw Points")
            .with("drawSize", DataKind::Real, "0", "Draw Size")
            .output(
                "indices",
                DataKind::Ints(0),
                "Indices of the points contained in the ROI",
            )
            .output(
                "pointsInROI",
                DataKind::Reals(3),
                "Points contained in the ROI",
            )
            .alias(&["pointsInBox"]);
        PairBoxRoi { data }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let _ = self.data.set_value("indices", Value::Ints(Vec::new()));
        let _ = self.data.set_value("pointsInROI", Value::Reals(Vec::new()));
        let Some(pts) = roi_points(ctx, &self.data) else {
            return;
        };
        let boxes = ["inclusiveBox", "includedBox"].map(|n| {
            let b = self.data.reals(n);
            let mut b: [f64; 6] = std::array::from_fn(|k| b.get(k).copied().unwrap_or(0.0));
            let zero = b.iter().all(|v| *v == 0.0);
            for k in 0..3 {
                if b[k] > b[k + 3] {
                    b.swap(k, k + 3);
                }
            }
            (b, zero)
        });
        if boxes.iter().any(|(_, zero)| *zero) {
            // SOFA selects nothing while either box is unset
            return;
        }
        let inside = |p: &[f64], b: &[f64; 6]| (0..3).all(|k| p[k] >= b[k] && p[k] <= b[k + 3]);
        let (outer, inner) = (&boxes[0].0, &boxes[1].0);
        let mut idx = Vec::new();
        let mut pin = Vec::new();
        for (i, p) in pts.chunks_exact(3).enumerate() {
            if inside(p, outer) && !inside(p, inner) {
                idx.push(i as u32);
                pin.extend_from_slice(p);
            }
        }
        let _ = self.data.set_value("indices", Value::Ints(idx));
        let _ = self.data.set_value("pointsInROI", Value::Reals(pin));
    }
}

impl_component!(PairBoxRoi, "PairBoxROI", init);

impl Engine for PairBoxRoi {}

#[cfg(test)]
mod pair_box_tests {
    use super::*;
    use canape_core::scene::{AnyComponent, Scene};

    #[test]
    fn points_between_the_two_boxes() {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut e = PairBoxRoi::new();
        // a 3×3 grid in the z = 0 plane: the ring of 8 points around the centre
        let grid: Vec<String> = (0..9).map(|i| format!("{} {} 0", i % 3, i / 3)).collect();
        e.data.set_str("position", &grid.join(" ")).unwrap();
        e.data
            .set_str("inclusiveBox", "2.1 2.1 0.1 -0.1 -0.1 -0.1")
            .unwrap();
        e.data
            .set_str("includedBox", "0.9 0.9 -1 1.1 1.1 1")
            .unwrap();
        let id = scene.add_component(
            root,
            "pair",
            AnyComponent::Engine(Box::new(e.clone())),
            None,
        );
        let mut diags = canape_core::diag::Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        e.init_impl(&mut ctx);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(e.data.ints("indices"), &[0, 1, 2, 3, 5, 6, 7, 8]);
        assert_eq!(e.data.reals("pointsInROI").len(), 24);
        // an unset box selects nothing
        e.data.set_str("includedBox", "0 0 0 0 0 0").unwrap();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        e.init_impl(&mut ctx);
        assert!(e.data.ints("indices").is_empty());
    }
}
