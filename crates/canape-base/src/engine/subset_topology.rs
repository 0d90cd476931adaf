//! SubsetTopology (Sofa/Component/Engine/Select/.../SubsetTopology.inl): splits a mesh by
//! boxes (or spheres) into the elements inside — every vertex in one region — and those
//! outside, with the points in and out; with `localIndices` both parts are renumbered for states
//! of their own, the vertices on the border (of a triangle or tetrahedron with vertices on
//! both sides, tested against the first region) first and in both parts.

use crate::base_data;
use canape_core::data::{DataKind, DataTable, Value};
use canape_core::impl_component;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_core::state::VecId;

/// SOFA's SubsetTopology.
#[derive(Clone)]
pub struct SubsetTopology {
    data: DataTable,
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
        let mut d = base_data(DataTable::new())
            .with(
                "box",
                DataKind::Reals(6),
                "0 0 0 1 1 1",
                "Box defined by xmin,ymin,zmin, xmax,ymax,zmax",
            )
            .alias(&["boxes"])
            .with(
                "centers",
                DataKind::Reals(3),
                "",
                "Center(s) of the sphere(s)",
            )
            .with(
                "radii",
                DataKind::Reals(1),
                "",
                "Radius(i) of the sphere(s)",
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
            .with("quads", DataKind::Ints(4), "", "Quad Topology")
            .with("tetrahedra", DataKind::Ints(4), "", "Tetrahedron Topology")
            .with("hexahedra", DataKind::Ints(8), "", "Hexahedron Topology")
            .with(
                "localIndices",
                DataKind::Bool,
                "0",
                "If true, will compute local dof indices in topological data",
            );
        for (n, k) in [
            ("direction", DataKind::Reals(3)),
            ("normal", DataKind::Reals(3)),
            ("edgeAngle", DataKind::Real),
            ("triAngle", DataKind::Real),
            ("drawROI", DataKind::Bool),
            ("drawPoints", DataKind::Bool),
            ("drawEdges", DataKind::Bool),
            ("drawTriangle", DataKind::Bool),
            ("drawTetrahedra", DataKind::Bool),
            ("drawSize", DataKind::Real),
        ] {
            let default = match k {
                DataKind::Bool | DataKind::Real => "0",
                _ => "",
            };
            d = d.with(
                n,
                k,
                default,
                "display option or unused filter (as in SOFA's GUI)",
            );
        }
        let outputs: [(&str, DataKind, &str); 19] = [
            ("indices", DataKind::Ints(0), "Indices of the points contained in the ROI"),
            ("edgeIndices", DataKind::Ints(0), "Indices of the edges contained in the ROI"),
            ("triangleIndices", DataKind::Ints(0), "Indices of the triangles contained in the ROI"),
            ("quadIndices", DataKind::Ints(0), "Indices of the quads contained in the ROI"),
            ("tetrahedronIndices", DataKind::Ints(0), "Indices of the tetrahedra contained in the ROI"),
            ("hexahedronIndices", DataKind::Ints(0), "Indices of the hexahedra contained in the ROI"),
            ("pointsInROI", DataKind::Reals(3), "Points contained in the ROI"),
            ("pointsOutROI", DataKind::Reals(3), "Points out of the ROI"),
            ("edgesInROI", DataKind::Ints(2), "Edges contained in the ROI"),
            ("edgesOutROI", DataKind::Ints(2), "Edges out of the ROI"),
            ("trianglesInROI", DataKind::Ints(3), "Triangles contained in the ROI"),
            ("trianglesOutROI", DataKind::Ints(3), "Triangles out of the ROI"),
            ("quadsInROI", DataKind::Ints(4), "Quads contained in the ROI"),
            ("quadsOutROI", DataKind::Ints(4), "Quads out of the ROI"),
            ("tetrahedraInROI", DataKind::Ints(4), "Tetrahedra contained in the ROI"),
            ("tetrahedraOutROI", DataKind::Ints(4), "Tetrahedra out of the ROI"),
            ("hexahedraInROI", DataKind::Ints(8), "Hexahedra contained in the ROI"),
            ("hexahedraOutROI", DataKind::Ints(8), "Hexahedra out of the ROI"),
            ("nbrborder", DataKind::Int, "If localIndices option is activated, will give the number of vertices on the border of the ROI (being the n first points of each output Topology)"),
        ];
        for (n, k, help) in outputs {
            d = d.output(n, k, help);
        }
        SubsetTopology { data: d }
    }

    /// The mesh to split: the given elements, else the context topology's.
    fn input_mesh(&self, ctx: &InitContext<'_>) -> Mesh {
        use canape_core::mesh::group;
        let d = &self.data;
        let topo = ctx.topology().map(|t| t.mesh().clone()).unwrap_or_default();
        let pick = |name: &str, from_topo: bool| d.is_set(name) || !from_topo;
        Mesh {
            points: Vec::new(),
            edges: if pick("edges", !topo.edges.is_empty()) {
                group(d.ints("edges"))
            } else {
                topo.edges.clone()
            },
            triangles: if pick("triangles", !topo.triangles.is_empty()) {
                group(d.ints("triangles"))
            } else {
                topo.triangles.clone()
            },
            quads: if pick("quads", !topo.quads.is_empty()) {
                group(d.ints("quads"))
            } else {
                topo.quads.clone()
            },
            tetrahedra: if pick("tetrahedra", !topo.tetrahedra.is_empty()) {
                group(d.ints("tetrahedra"))
            } else {
                topo.tetrahedra.clone()
            },
            hexahedra: if pick("hexahedra", !topo.hexahedra.is_empty()) {
                group(d.ints("hexahedra"))
            } else {
                topo.hexahedra.clone()
            },
            // SOFA's SubsetTopology has no prism lists
            prisms: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        for n in ["direction", "normal", "edgeAngle", "triAngle"] {
            if self.data.is_set(n) {
                ctx.warn(format!("'{n}' (an orientation filter of SOFA's ROI engines) is not used: the regions alone select"));
            }
        }
        let x: Vec<f64> = if self.data.is_set("position") {
            self.data.reals("position").to_vec()
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
        let regions = if self.data.is_set("centers") {
            let c = self.data.reals("centers");
            let r = self.data.reals("radii");
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
                    .reals("box")
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
        let local = self.data.bool("localIndices");

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
        let mut split = |elems: Vec<&[u32]>, idx: &str, ins: &str, outs: &str| {
            let (mut ix, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
            for (k, e) in elems.into_iter().enumerate() {
                if elem_in(e) {
                    ix.push(k as u32);
                    a.extend(map(e));
                } else {
                    b.extend(map(e));
                }
            }
            let _ = self.data.set_value(idx, Value::Ints(ix));
            let _ = self.data.set_value(ins, Value::Ints(a));
            let _ = self.data.set_value(outs, Value::Ints(b));
        };
        split(
            mesh.edges.iter().map(|e| &e[..]).collect(),
            "edgeIndices",
            "edgesInROI",
            "edgesOutROI",
        );
        split(
            mesh.triangles.iter().map(|e| &e[..]).collect(),
            "triangleIndices",
            "trianglesInROI",
            "trianglesOutROI",
        );
        split(
            mesh.quads.iter().map(|e| &e[..]).collect(),
            "quadIndices",
            "quadsInROI",
            "quadsOutROI",
        );
        split(
            mesh.tetrahedra.iter().map(|e| &e[..]).collect(),
            "tetrahedronIndices",
            "tetrahedraInROI",
            "tetrahedraOutROI",
        );
        split(
            mesh.hexahedra.iter().map(|e| &e[..]).collect(),
            "hexahedronIndices",
            "hexahedraInROI",
            "hexahedraOutROI",
        );
        let _ = self.data.set_value("indices", Value::Ints(indices));
        let _ = self.data.set_value("pointsInROI", Value::Reals(pin));
        let _ = self.data.set_value("pointsOutROI", Value::Reals(pout));
        let _ = self
            .data
            .set_value("nbrborder", Value::Int(border_count as i64));
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
