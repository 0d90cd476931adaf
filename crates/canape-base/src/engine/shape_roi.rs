//! SphereROI and PlaneROI (`ShapeRoi`) and PairBoxROI: regions of interest other than boxes.

use super::*;

canape_core::data_schema! {
    /// SphereROI's own Data (after the base Data, before the Data it shares with PlaneROI).
    pub struct SphereRoiData {
        centers: Reals = ("centers", DataKind::Reals(3), "", "Center(s) of the sphere(s)"),
        radii: Reals = ("radii", DataKind::Reals(0), "", "Radius(i) of the sphere(s)"),
        direction: Reals = ("direction", DataKind::Reals(0), "0 0 0", "Edge direction(if edgeAngle > 0)"),
        normal: Reals = ("normal", DataKind::Reals(0), "0 0 0", "Normal direction of the triangles (if triAngle > 0)"),
        edge_angle: Real = ("edgeAngle", DataKind::Real, "0", "Max angle between the direction of the selected edges and the specified direction"),
        tri_angle: Real = ("triAngle", DataKind::Real, "0", "Max angle between the normal of the selected triangle and the specified normal direction") alias ["angle"],
        quads: Ints = ("quads", DataKind::Ints(4), "", "Quads Topology"),
        compute_quads: Flag = ("computeQuads", DataKind::Bool, "1", "If true, will compute quad list and index list inside the ROI."),
        draw_sphere: Flag = ("drawSphere", DataKind::Bool, "0", "Draw sphere(s)"),
        draw_quads: Flag = ("drawQuads", DataKind::Bool, "0", "Draw Quads"),
        quad_indices: Ints => ("quadIndices", DataKind::Ints(0), "Indices of the quads contained in the ROI"),
        quads_in_roi: Ints => ("quadsInROI", DataKind::Ints(4), "Quads contained in the ROI"),
        indices_out: Ints => ("indicesOut", DataKind::Ints(0), "Indices of the points not contained in the ROI"),
    }
}

canape_core::data_schema! {
    /// PlaneROI's own Data (after the base Data, before the Data it shares with SphereROI).
    pub struct PlaneRoiData {
        plane: Reals = ("plane", DataKind::Reals(10), "0 0 0 0 0 0 0 0 0 0", "Plane defined by 3 points and a depth distance"),
        draw_boxes: Flag = ("drawBoxes", DataKind::Bool, "0", "Draw Box") alias ["isVisible"],
    }
}

canape_core::data_schema! {
    /// The Data SphereROI and PlaneROI share (after their own).
    pub struct ShapeRoiData {
        position: Reals = ("position", DataKind::Reals(3), "", "Rest position coordinates of the degrees of freedom") alias ["rest_position"],
        edges: Ints = ("edges", DataKind::Ints(2), "", "Edge Topology"),
        triangles: Ints = ("triangles", DataKind::Ints(3), "", "Triangle Topology"),
        tetrahedra: Ints = ("tetrahedra", DataKind::Ints(4), "", "Tetrahedron Topology"),
        compute_edges: Flag = ("computeEdges", DataKind::Bool, "1", "If true, will compute edge list and index list inside the ROI."),
        compute_triangles: Flag = ("computeTriangles", DataKind::Bool, "1", "If true, will compute triangle list and index list inside the ROI."),
        compute_tetrahedra: Flag = ("computeTetrahedra", DataKind::Bool, "1", "If true, will compute tetrahedra list and index list inside the ROI."),
        draw_points: Flag = ("drawPoints", DataKind::Bool, "0", "Draw Points"),
        draw_edges: Flag = ("drawEdges", DataKind::Bool, "0", "Draw Edges"),
        draw_triangles: Flag = ("drawTriangles", DataKind::Bool, "0", "Draw Triangles"),
        draw_tetrahedra: Flag = ("drawTetrahedra", DataKind::Bool, "0", "Draw Tetrahedra"),
        draw_size: Real = ("drawSize", DataKind::Real, "1", "rendering size for box and topological elements"),
        indices: Ints => ("indices", DataKind::Ints(0), "Indices of the points contained in the ROI") alias ["pointIndices"],
        edge_indices: Ints => ("edgeIndices", DataKind::Ints(0), "Indices of the edges contained in the ROI"),
        triangle_indices: Ints => ("triangleIndices", DataKind::Ints(0), "Indices of the triangles contained in the ROI"),
        tetrahedron_indices: Ints => ("tetrahedronIndices", DataKind::Ints(0), "Indices of the tetrahedra contained in the ROI"),
        points_in_roi: Reals => ("pointsInROI", DataKind::Reals(3), "Points contained in the ROI"),
        edges_in_roi: Ints => ("edgesInROI", DataKind::Ints(2), "Edges contained in the ROI"),
        triangles_in_roi: Ints => ("trianglesInROI", DataKind::Ints(3), "Triangles contained in the ROI"),
        tetrahedra_in_roi: Ints => ("tetrahedraInROI", DataKind::Ints(4), "Tetrahedra contained in the ROI"),
    }
}

/// The shape of a [`ShapeRoi`], with the typed handles to its own Data.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Sphere(SphereRoiData),
    Plane(PlaneRoiData),
}

/// SphereROI and PlaneROI (Sofa/Component/Engine/Select/.../SphereROI.inl, PlaneROI.inl): the
/// points inside spheres (|p − c| ≤ r) or inside boxes built on a parallelogram
/// (p0, p1, p2, p0 + p2 − p1) extruded by ±depth/2 along its normal, and the elements whose
/// points are all inside one region (for spheres, edges within `edgeAngle` degrees of
/// `direction` and triangles within `triAngle` degrees of `normal` when those are positive).
#[derive(Clone)]
pub struct ShapeRoi {
    data: DataTable,
    /// Spheres or planes, with the handles to the Data of that shape.
    shape: Shape,
    /// Typed handles to the Data both shapes have.
    d: ShapeRoiData,
}

impl ShapeRoi {
    fn with(sphere: bool) -> Self {
        let data = base_data(DataTable::new());
        let (data, shape) = if sphere {
            let (data, h) = SphereRoiData::declare(data);
            (data, Shape::Sphere(h))
        } else {
            let (data, h) = PlaneRoiData::declare(data);
            (data, Shape::Plane(h))
        };
        let (data, d) = ShapeRoiData::declare(data);
        ShapeRoi { data, shape, d }
    }
    pub fn sphere() -> Self {
        Self::with(true)
    }
    pub fn plane() -> Self {
        Self::with(false)
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let pts = roi_points(ctx, &self.data, self.d.position).unwrap_or_default();
        let p = |i: u32| -> Option<Vec3> {
            let o = 3 * i as usize;
            pts.get(o..o + 3).map(|q| Vec3::new(q[0], q[1], q[2]))
        };
        // regions: a test per region
        type Region = Box<dyn Fn(&Vec3) -> bool>;
        let mut regions: Vec<Region> = Vec::new();
        match self.shape {
            Shape::Sphere(sd) => {
                let centers: Vec<Vec3> = self
                    .data
                    .get(sd.centers)
                    .chunks_exact(3)
                    .map(|c| Vec3::new(c[0], c[1], c[2]))
                    .collect();
                let mut radii = self.data.get(sd.radii).to_vec();
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
            }
            Shape::Plane(pd) => {
                for pl in self.data.get(pd.plane).chunks_exact(10) {
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
                        (0.0..=1.0).contains(&c.x)
                            && (0.0..=1.0).contains(&c.y)
                            && c.z.abs() <= half
                    }));
                }
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
        let v3 = |r: &[f64]| -> Vec3 {
            Vec3::new(
                r.first().copied().unwrap_or(0.0),
                r.get(1).copied().unwrap_or(0.0),
                r.get(2).copied().unwrap_or(0.0),
            )
        };
        let (edge_angle, tri_angle, dir, nrm) = match self.shape {
            Shape::Sphere(sd) => (
                self.data.get(sd.edge_angle),
                self.data.get(sd.tri_angle),
                v3(self.data.get(sd.direction)),
                v3(self.data.get(sd.normal)),
            ),
            Shape::Plane(_) => (0.0, 0.0, Vec3::zeros(), Vec3::zeros()),
        };
        let d = self.d;
        let mut lists = vec![
            (
                "edges",
                d.edges,
                d.compute_edges,
                d.edge_indices,
                d.edges_in_roi,
                2,
            ),
            (
                "triangles",
                d.triangles,
                d.compute_triangles,
                d.triangle_indices,
                d.triangles_in_roi,
                3,
            ),
            (
                "tetrahedra",
                d.tetrahedra,
                d.compute_tetrahedra,
                d.tetrahedron_indices,
                d.tetrahedra_in_roi,
                4,
            ),
        ];
        if let Shape::Sphere(sd) = self.shape {
            lists.push((
                "quads",
                sd.quads,
                sd.compute_quads,
                sd.quad_indices,
                sd.quads_in_roi,
                4,
            ));
        }
        for (input, elements, compute, ids, list, k) in lists {
            if !self.data.get(compute) {
                continue;
            }
            let elems: Vec<u32> = if self.data.was_set(elements) {
                self.data.get(elements).to_vec()
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
            let _ = self.data.put(ids, Value::Ints(idx));
            let _ = self.data.put(list, Value::Ints(sel));
        }
        let _ = self.data.put(d.indices, Value::Ints(inside));
        if let Shape::Sphere(sd) = self.shape {
            let _ = self.data.put(sd.indices_out, Value::Ints(outside));
        }
        let _ = self.data.put(d.points_in_roi, Value::Reals(pin));
    }
}

impl_component!(
    ShapeRoi,
    |s| match s.shape {
        Shape::Sphere(_) => "SphereROI",
        Shape::Plane(_) => "PlaneROI",
    },
    init
);
impl Engine for ShapeRoi {}

canape_core::data_schema! {
    /// PairBoxROI's own Data (after the base Data).
    pub struct PairBoxRoiData {
        inclusive_box: Reals = ("inclusiveBox", DataKind::Reals(6), "0 0 0 0 0 0", "Inclusive box defined by xmin,ymin,zmin, xmax,ymax,zmax"),
        included_box: Reals = ("includedBox", DataKind::Reals(6), "0 0 0 0 0 0", "Included box defined by xmin,ymin,zmin, xmax,ymax,zmax"),
        position: Reals = ("position", DataKind::Reals(3), "", "Rest position coordinates of the degrees of freedom") alias ["rest_position"],
        mesh_position: Reals = ("meshPosition", DataKind::Reals(3), "", "Vertices of the mesh loaded"),
        draw_inclusive_box: Flag = ("drawInclusiveBox", DataKind::Bool, "0", "Draw Inclusive Box"),
        draw_included_box: Flag = ("drawIncludedBox", DataKind::Bool, "0", "Draw Included Box"),
        draw_points: Flag = ("drawPoints", DataKind::Bool, "0", "Draw Points"),
        draw_size: Real = ("drawSize", DataKind::Real, "0", "Draw Size"),
        indices: Ints => ("indices", DataKind::Ints(0), "Indices of the points contained in the ROI"),
        points_in_roi: Reals => ("pointsInROI", DataKind::Reals(3), "Points contained in the ROI") alias ["pointsInBox"],
    }
}

/// PairBoxROI (Sofa/Component/Engine/Select/.../PairBoxRoi.inl): the points inside
/// `inclusiveBox` but not inside `includedBox` (both closed, corners reordered), from `position`
/// or the context state's rest positions. A box left at zeros selects nothing, as in SOFA.
#[derive(Clone)]
pub struct PairBoxRoi {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: PairBoxRoiData,
}

impl Default for PairBoxRoi {
    fn default() -> Self {
        Self::new()
    }
}

impl PairBoxRoi {
    pub fn new() -> Self {
        let (data, d) = PairBoxRoiData::declare(base_data(DataTable::new()));
        PairBoxRoi { data, d }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let d = self.d;
        let _ = self.data.put(d.indices, Value::Ints(Vec::new()));
        let _ = self.data.put(d.points_in_roi, Value::Reals(Vec::new()));
        let Some(pts) = roi_points(ctx, &self.data, d.position) else {
            return;
        };
        let boxes = [d.inclusive_box, d.included_box].map(|h| {
            let b = self.data.get(h);
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
        let _ = self.data.put(d.indices, Value::Ints(idx));
        let _ = self.data.put(d.points_in_roi, Value::Reals(pin));
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
