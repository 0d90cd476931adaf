//! SubsetTopology (Sofa/Component/Engine/Select/.../SubsetTopology.inl): splits a mesh by
//! boxes (or spheres) into the elements inside — every vertex in one region — and those
//! outside, with the points in and out; with `localIndices` both parts are renumbered for states
//! of their own, the vertices on the border (of a triangle or tetrahedron with vertices on
//! both sides, tested against the first region) first and in both parts.

use crate::base_data;
use canape_core::data::{Data, DataKind, DataTable, Flag, Int, Ints, Real, Reals, Value};
use canape_core::impl_component;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_core::state::VecId;

canape_core::data_schema! {
    /// SubsetTopology's own Data (after the base Data): the regions, the mesh to split, the
    /// options SOFA's GUI shows (kept so that scenes load, unused) and the outputs.
    pub struct SubsetTopologyData {
        box_: Reals = ("box", DataKind::Reals(6), "0 0 0 1 1 1", "Box defined by xmin,ymin,zmin, xmax,ymax,zmax") alias ["boxes"],
        centers: Reals = ("centers", DataKind::Reals(3), "", "Center(s) of the sphere(s)"),
        radii: Reals = ("radii", DataKind::Reals(1), "", "Radius(i) of the sphere(s)"),
        position: Reals = ("position", DataKind::Reals(3), "", "Rest position coordinates of the degrees of freedom") alias ["rest_position"],
        edges: Ints = ("edges", DataKind::Ints(2), "", "Edge Topology"),
        triangles: Ints = ("triangles", DataKind::Ints(3), "", "Triangle Topology"),
        quads: Ints = ("quads", DataKind::Ints(4), "", "Quad Topology"),
        tetrahedra: Ints = ("tetrahedra", DataKind::Ints(4), "", "Tetrahedron Topology"),
        hexahedra: Ints = ("hexahedra", DataKind::Ints(8), "", "Hexahedron Topology"),
        local_indices: Flag = ("localIndices", DataKind::Bool, "0", "If true, will compute local dof indices in topological data"),
        direction: Reals = ("direction", DataKind::Reals(3), "", "display option or unused filter (as in SOFA's GUI)"),
        normal: Reals = ("normal", DataKind::Reals(3), "", "display option or unused filter (as in SOFA's GUI)"),
        edge_angle: Real = ("edgeAngle", DataKind::Real, "0", "display option or unused filter (as in SOFA's GUI)"),
        tri_angle: Real = ("triAngle", DataKind::Real, "0", "display option or unused filter (as in SOFA's GUI)"),
        draw_roi: Flag = ("drawROI", DataKind::Bool, "0", "display option or unused filter (as in SOFA's GUI)"),
        draw_points: Flag = ("drawPoints", DataKind::Bool, "0", "display option or unused filter (as in SOFA's GUI)"),
        draw_edges: Flag = ("drawEdges", DataKind::Bool, "0", "display option or unused filter (as in SOFA's GUI)"),
        draw_triangle: Flag = ("drawTriangle", DataKind::Bool, "0", "display option or unused filter (as in SOFA's GUI)"),
        draw_tetrahedra: Flag = ("drawTetrahedra", DataKind::Bool, "0", "display option or unused filter (as in SOFA's GUI)"),
        draw_size: Real = ("drawSize", DataKind::Real, "0", "display option or unused filter (as in SOFA's GUI)"),
        indices: Ints => ("indices", DataKind::Ints(0), "Indices of the points contained in the ROI"),
        edge_indices: Ints => ("edgeIndices", DataKind::Ints(0), "Indices of the edges contained in the ROI"),
        triangle_indices: Ints => ("triangleIndices", DataKind::Ints(0), "Indices of the triangles contained in the ROI"),
        quad_indices: Ints => ("quadIndices", DataKind::Ints(0), "Indices of the quads contained in the ROI"),
        tetrahedron_indices: Ints => ("tetrahedronIndices", DataKind::Ints(0), "Indices of the tetrahedra contained in the ROI"),
        hexahedron_indices: Ints => ("hexahedronIndices", DataKind::Ints(0), "Indices of the hexahedra contained in the ROI"),
        points_in_roi: Reals => ("pointsInROI", DataKind::Reals(3), "Points contained in the ROI"),
        points_out_roi: Reals => ("pointsOutROI", DataKind::Reals(3), "Points out of the ROI"),
        edges_in_roi: Ints => ("edgesInROI", DataKind::Ints(2), "Edges contained in the ROI"),
        edges_out_roi: Ints => ("edgesOutROI", DataKind::Ints(2), "Edges out of the ROI"),
        triangles_in_roi: Ints => ("trianglesInROI", DataKind::Ints(3), "Triangles contained in the ROI"),
        triangles_out_roi: Ints => ("trianglesOutROI", DataKind::Ints(3), "Triangles out of the ROI"),
        quads_in_roi: Ints => ("quadsInROI", DataKind::Ints(4), "Quads contained in the ROI"),
        quads_out_roi: Ints => ("quadsOutROI", DataKind::Ints(4), "Quads out of the ROI"),
        tetrahedra_in_roi: Ints => ("tetrahedraInROI", DataKind::Ints(4), "Tetrahedra contained in the ROI"),
        tetrahedra_out_roi: Ints => ("tetrahedraOutROI", DataKind::Ints(4), "Tetrahedra out of the ROI"),
        hexahedra_in_roi: Ints => ("hexahedraInROI", DataKind::Ints(8), "Hexahedra contained in the ROI"),
        hexahedra_out_roi: Ints => ("hexahedraOutROI", DataKind::Ints(8), "Hexahedra out of the ROI"),
        nbrborder: Int => ("nbrborder", DataKind::Int, "If localIndices option is activated, will give the number of vertices on the border of the ROI (being the n first points of each output Topology)"),
    }
}

/// SOFA's SubsetTopology.
#[derive(Clone)]
pub struct SubsetTopology {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: SubsetTopologyData,
}

impl Default for SubsetTopology {
    fn default() -> Self {
        Self::new()
    }
}

/// The regions: boxes, or spheres when centres are given.
enum Regions {
    Boxes(Vec<[f64; 6]>),
    Spheres(Vec<([f64; 3], f64)>),
}

impl Regions {
    fn len(&self) -> usize {
        match self {
            Regions::Boxes(b) => b.len(),
            Regions::Spheres(s) => s.len(),
        }
    }
    fn contains(&self, k: usize, p: &[f64]) -> bool {
        match self {
            Regions::Boxes(b) => {
                let b = &b[k];
                (0..3).all(|c| p[c] >= b[c] && p[c] <= b[c + 3])
            }
            Regions::Spheres(s) => {
                let (c, r) = &s[k];
                let d2: f64 = (0..3).map(|i| (p[i] - c[i]).powi(2)).sum();
                d2.sqrt() <= *r
            }
        }
    }
}

impl SubsetTopology {
    pub fn new() -> Self {
        let (data, d) = SubsetTopologyData::declare(base_data(DataTable::new()));
        SubsetTopology { data, d }
    }

    /// The mesh to split: the given elements, else the context topology's.
    fn input_mesh(&self, ctx: &InitContext<'_>) -> Mesh {
        use canape_core::mesh::group;
        let (t, d) = (&self.data, &self.d);
        let topo = ctx.topology().map(|t| t.mesh().clone()).unwrap_or_default();
        let pick = |h: Data<Ints>, from_topo: bool| t.was_set(h) || !from_topo;
        Mesh {
            points: Vec::new(),
            edges: if pick(d.edges, !topo.edges.is_empty()) {
                group(t.get(d.edges))
            } else {
                topo.edges.clone()
            },
            triangles: if pick(d.triangles, !topo.triangles.is_empty()) {
                group(t.get(d.triangles))
            } else {
                topo.triangles.clone()
            },
            quads: if pick(d.quads, !topo.quads.is_empty()) {
                group(t.get(d.quads))
            } else {
                topo.quads.clone()
            },
            tetrahedra: if pick(d.tetrahedra, !topo.tetrahedra.is_empty()) {
                group(t.get(d.tetrahedra))
            } else {
                topo.tetrahedra.clone()
            },
            hexahedra: if pick(d.hexahedra, !topo.hexahedra.is_empty()) {
                group(t.get(d.hexahedra))
            } else {
                topo.hexahedra.clone()
            },
            // SOFA's SubsetTopology has no prism lists
            prisms: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let d = self.d;
        let filters = [
            ("direction", self.data.was_set(d.direction)),
            ("normal", self.data.was_set(d.normal)),
            ("edgeAngle", self.data.was_set(d.edge_angle)),
            ("triAngle", self.data.was_set(d.tri_angle)),
        ];
        for (n, set) in filters {
            if set {
                ctx.warn(format!("'{n}' (an orientation filter of SOFA's ROI engines) is not used: the regions alone select"));
            }
        }
        let x: Vec<f64> = if self.data.was_set(d.position) {
            self.data.get(d.position).to_vec()
        } else {
            match ctx.state() {
                Some(s) if s.dof == canape_types::DofType::Vec3 => s.vec(VecId::POSITION).to_vec(),
                _ => {
                    ctx.error("no rest_position given and no Vec3 MechanicalObject in the context");
                    return;
                }
            }
        };
        let n = x.len() / 3;
        let mesh = self.input_mesh(ctx);
        if let Some(m) = mesh.max_index() {
            if m as usize >= n {
                ctx.error(format!(
                    "the elements use point {m}, but there are {n} positions"
                ));
                return;
            }
        }
        let regions = if self.data.was_set(d.centers) {
            let c = self.data.get(d.centers);
            let r = self.data.get(d.radii);
            if c.len() / 3 != r.len() {
                ctx.warn(
                    "the numbers of sphere centers and radii differ: nothing is selected (as SOFA)",
                );
                return;
            }
            Regions::Spheres(
                c.chunks_exact(3)
                    .zip(r)
                    .map(|(c, r)| ([c[0], c[1], c[2]], *r))
                    .collect(),
            )
        } else {
            Regions::Boxes(
                self.data
                    .get(d.box_)
                    .chunks_exact(6)
                    .map(|b| {
                        let mut b: [f64; 6] = std::array::from_fn(|k| b[k]);
                        for k in 0..3 {
                            if b[k] > b[k + 3] {
                                b.swap(k, k + 3);
                            }
                        }
                        b
                    })
                    .collect(),
            )
        };
        let p = |i: u32| &x[3 * i as usize..3 * i as usize + 3];
        let point_in = |i: u32| (0..regions.len()).any(|k| regions.contains(k, p(i)));
        let elem_in =
            |e: &[u32]| (0..regions.len()).any(|k| e.iter().all(|&i| regions.contains(k, p(i))));
        let local = self.data.get(d.local_indices);

        // points (and, with localIndices, each point's index in its part)
        let mut indices: Vec<u32> = Vec::new();
        let (mut pin, mut pout): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
        let mut renum = vec![0u32; n];
        let mut border_count = 0usize;
        if local {
            // the border: vertices inside the first region of elements with vertices on both sides
            let mut on_border = vec![false; n];
            let cells: Vec<&[u32]> = if mesh.tetrahedra.is_empty() {
                mesh.triangles.iter().map(|t| &t[..]).collect()
            } else {
                mesh.tetrahedra.iter().map(|t| &t[..]).collect()
            };
            if regions.len() > 0 {
                for c in cells {
                    let ins: Vec<bool> = c.iter().map(|&i| regions.contains(0, p(i))).collect();
                    if ins.iter().any(|b| *b) && ins.iter().any(|b| !*b) {
                        for (&i, inside) in c.iter().zip(ins) {
                            if inside {
                                on_border[i as usize] = true;
                            }
                        }
                    }
                }
            }
            border_count = on_border.iter().filter(|b| **b).count();
            let (mut cin, mut cout) = (border_count as u32, border_count as u32);
            let mut border_pts = Vec::new();
            let mut border_idx = Vec::new();
            for i in 0..n as u32 {
                if on_border[i as usize] {
                    renum[i as usize] = border_idx.len() as u32;
                    border_idx.push(i);
                    border_pts.extend_from_slice(p(i));
                } else if point_in(i) {
                    renum[i as usize] = cin;
                    cin += 1;
                } else {
                    renum[i as usize] = cout;
                    cout += 1;
                }
            }
            indices = border_idx;
            pin = border_pts.clone();
            pout = border_pts;
            for i in 0..n as u32 {
                if on_border[i as usize] {
                    continue;
                }
                if point_in(i) {
                    indices.push(i);
                    pin.extend_from_slice(p(i));
                } else {
                    pout.extend_from_slice(p(i));
                }
            }
        } else {
            for i in 0..n as u32 {
                if point_in(i) {
                    indices.push(i);
                    pin.extend_from_slice(p(i));
                } else {
                    pout.extend_from_slice(p(i));
                }
            }
        }
        let map = |e: &[u32]| -> Vec<u32> {
            if local {
                e.iter().map(|&i| renum[i as usize]).collect()
            } else {
                e.to_vec()
            }
        };
        let mut split = |elems: Vec<&[u32]>, idx: Data<Ints>, ins: Data<Ints>, outs: Data<Ints>| {
            let (mut ix, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
            for (k, e) in elems.into_iter().enumerate() {
                if elem_in(e) {
                    ix.push(k as u32);
                    a.extend(map(e));
                } else {
                    b.extend(map(e));
                }
            }
            let _ = self.data.put(idx, Value::Ints(ix));
            let _ = self.data.put(ins, Value::Ints(a));
            let _ = self.data.put(outs, Value::Ints(b));
        };
        split(
            mesh.edges.iter().map(|e| &e[..]).collect(),
            d.edge_indices,
            d.edges_in_roi,
            d.edges_out_roi,
        );
        split(
            mesh.triangles.iter().map(|e| &e[..]).collect(),
            d.triangle_indices,
            d.triangles_in_roi,
            d.triangles_out_roi,
        );
        split(
            mesh.quads.iter().map(|e| &e[..]).collect(),
            d.quad_indices,
            d.quads_in_roi,
            d.quads_out_roi,
        );
        split(
            mesh.tetrahedra.iter().map(|e| &e[..]).collect(),
            d.tetrahedron_indices,
            d.tetrahedra_in_roi,
            d.tetrahedra_out_roi,
        );
        split(
            mesh.hexahedra.iter().map(|e| &e[..]).collect(),
            d.hexahedron_indices,
            d.hexahedra_in_roi,
            d.hexahedra_out_roi,
        );
        let _ = self.data.put(d.indices, Value::Ints(indices));
        let _ = self.data.put(d.points_in_roi, Value::Reals(pin));
        let _ = self.data.put(d.points_out_roi, Value::Reals(pout));
        let _ = self.data.put(d.nbrborder, Value::Int(border_count as i64));
    }
}

impl_component!(SubsetTopology, "SubsetTopology", init);
impl canape_core::component::Engine for SubsetTopology {}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::Component;
    use canape_core::scene::{AnyComponent, Scene};

    /// A strip of two triangles (points 0–3) and one beyond (points 2, 3, 4), the box around
    /// x ≤ 1.
    fn run(local: bool) -> SubsetTopology {
        let mut e = SubsetTopology::new();
        let d = e.data_mut();
        d.set_str("position", "0 0 0  1 0 0  0 1 0  1 1 0  2 1 0")
            .unwrap();
        d.set_str("triangles", "0 1 2  1 3 2  1 4 3").unwrap();
        d.set_str("box", "-0.5 -0.5 -0.5 1.5 1.5 0.5").unwrap();
        d.set_str("localIndices", if local { "1" } else { "0" })
            .unwrap();
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let id = scene.add_component(
            root,
            "subset",
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
        e
    }

    #[test]
    fn elements_inside_have_every_vertex_in_the_box() {
        let e = run(false);
        let d = e.data();
        assert_eq!(d.ints("indices"), &[0, 1, 2, 3]);
        assert_eq!(d.ints("triangleIndices"), &[0, 1]);
        assert_eq!(d.ints("trianglesInROI"), &[0, 1, 2, 1, 3, 2]);
        assert_eq!(d.ints("trianglesOutROI"), &[1, 4, 3]);
        assert_eq!(d.reals("pointsOutROI"), &[2.0, 1.0, 0.0]);
    }

    #[test]
    fn local_indices_put_the_border_first_in_both_parts() {
        let e = run(true);
        let d = e.data();
        // border: 1 and 3 (inside vertices of the triangle 1 4 3), first, then 0 2 inside, 4 out
        assert_eq!(d.int("nbrborder"), 2);
        assert_eq!(d.ints("indices"), &[1, 3, 0, 2]);
        assert_eq!(
            d.reals("pointsOutROI"),
            &[1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 2.0, 1.0, 0.0]
        );
        // renumbered: 0→2, 1→0, 2→3, 3→1 inside; 4→2 outside
        assert_eq!(d.ints("trianglesInROI"), &[2, 0, 3, 0, 1, 3]);
        assert_eq!(d.ints("trianglesOutROI"), &[0, 2, 1]);
    }
}
