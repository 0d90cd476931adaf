//! FastTriangularBendingSprings: a linear bending spring across every edge shared by exactly
//! two triangles, following SOFA's
//! Sofa/Component/SolidMechanics/Spring/.../FastTriangularBendingSprings.inl.
//!
//! For the two triangles (C, D, A) and (D, C, B) around edge CD, the spring measures the
//! bending vector R = αA·pA + αB·pB + αC·pC + αD·pD, with weights from the rest shape
//! (αA, αB > 0 from the triangles' areas, αC, αD < 0 from the areas seen from C and D, so that
//! R = 0 for any flat configuration and rigid motions), and pulls it to zero with the
//! stiffness λ = (2/3)·(ha + hb)/(ha²·hb²)·|CD|·bendingStiffness, ha and hb the rest heights of
//! A and B over the edge. The energy ½λ|R|² is quadratic in the positions: K is constant,
//! −λ·αᵢ·αⱼ·I between the four vertices. As in SOFA, the rest state is flat (R = 0), whatever
//! the rest positions' curvature.
//!
//! TriangularBendingSprings (SOFA's TriangularBendingSprings.inl): a plain spring (stiffness,
//! damping, rest length from the rest positions) between the two apexes of every edge shared
//! by exactly two triangles.

use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable, Flag, ForceFieldData, Real};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_types::Mat3;

type V3 = [f64; 3];

#[inline(always)]
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
#[inline(always)]
fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
#[inline(always)]
fn norm(a: V3) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}
#[inline(always)]
fn p3(x: &[f64], i: usize) -> V3 {
    [x[3 * i], x[3 * i + 1], x[3 * i + 2]]
}

#[derive(Clone, Copy, Debug)]
struct Spring {
    /// A, B (the apexes), C, D (the edge).
    vid: [usize; 4],
    alpha: [f64; 4],
    lambda: f64,
}

impl Spring {
    /// The spring of edge CD between apexes A and B at positions `p` (SOFA's setEdgeSpring).
    fn new(p: &[f64], vid: [usize; 4], k: f64) -> Spring {
        let [a, b, c, d] = vid.map(|i| p3(p, i));
        let na = norm(cross(sub(a, c), sub(a, d)));
        let nb = norm(cross(sub(b, d), sub(b, c)));
        let nc = norm(cross(sub(c, b), sub(c, a)));
        let nd = norm(cross(sub(d, a), sub(d, b)));
        let alpha = [
            nb / (na + nb),
            na / (na + nb),
            -nd / (nc + nd),
            -nc / (nc + nd),
        ];
        let mut e = sub(c, d);
        let l = norm(e);
        if l > f64::EPSILON {
            e = [e[0] / l, e[1] / l, e[2] / l];
        }
        // distance of a point to the edge's line
        let height = |q: V3| {
            let qc = sub(c, q);
            let t = qc[0] * e[0] + qc[1] * e[1] + qc[2] * e[2];
            norm([qc[0] - e[0] * t, qc[1] - e[1] * t, qc[2] - e[2] * t])
        };
        let (ha, hb) = (height(a), height(b));
        let lambda = (2.0 / 3.0) * (ha + hb) / (ha * ha * hb * hb) * l * k;
        Spring { vid, alpha, lambda }
    }
}

canape_core::data_schema! {
    /// FastTriangularBendingSprings's own Data (after the force-field Data).
    struct FastBendingData {
        bending_stiffness: Real = ("bendingStiffness", DataKind::Real, "1", "bending stiffness of the material"),
        min_dist_validity: Real = ("minDistValidity", DataKind::Real, "1e-6", "Distance under which a spring is not valid"),
    }
}

#[derive(Clone)]
pub struct FastTriangularBendingSprings {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: FastBendingData,
    springs: Vec<Spring>,
    rayleigh: f64,
}

impl Default for FastTriangularBendingSprings {
    fn default() -> Self {
        Self::new()
    }
}

use canape_core::mesh::edges_from_triangles;

impl FastTriangularBendingSprings {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = FastBendingData::declare(data);
        FastTriangularBendingSprings {
            data,
            ff,
            d,
            springs: Vec::new(),
            rayleigh: 0.0,
        }
    }

    /// The springs of a triangle mesh at rest positions `rest` (init and tests). Each inner
    /// edge is seen from both its triangles; as in SOFA the later triangle's view is kept: A is
    /// the apex of the first triangle, B of the second, C and D the edge's ends in the edge
    /// list's orientation. Border edges and edges of three or more triangles get no spring.
    pub fn setup(&mut self, rest: &[f64], mesh: &Mesh) {
        let k = self.data.get(self.d.bending_stiffness);
        let min_d = self.data.get(self.d.min_dist_validity);
        let edges = if mesh.edges.is_empty() {
            edges_from_triangles(&mesh.triangles)
        } else {
            mesh.edges.clone()
        };
        let index: std::collections::BTreeMap<(u32, u32), usize> = edges
            .iter()
            .enumerate()
            .map(|(i, e)| ((e[0].min(e[1]), e[0].max(e[1])), i))
            .collect();
        // triangles around each edge, in increasing triangle order, with the apex
        let mut around: Vec<Vec<(usize, u32)>> = vec![Vec::new(); edges.len()];
        for (ti, t) in mesh.triangles.iter().enumerate() {
            for j in 0..3 {
                let (a, b) = (t[(j + 1) % 3], t[(j + 2) % 3]);
                if let Some(&e) = index.get(&(a.min(b), a.max(b))) {
                    around[e].push((ti, t[j]));
                }
            }
        }
        self.springs.clear();
        let min2 = min_d * min_d;
        for (e, ends) in edges.iter().zip(&around) {
            let [(_, apex_a), (_, apex_b)] = ends[..] else {
                continue;
            };
            let vid = [apex_a, apex_b, e[0], e[1]].map(|i| i as usize);
            let d2 = |i: usize, j: usize| {
                let d = sub(p3(rest, vid[i]), p3(rest, vid[j]));
                d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
            };
            if d2(1, 0) > min2 && d2(3, 2) > min2 {
                self.springs.push(Spring::new(rest, vid, k));
            }
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        self.springs.clear();
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        let rest = st.vec(canape_core::state::VecId::REST_POSITION).to_vec();
        let n = st.size();
        let Some(topo) = ctx.topology_where(|m| !m.triangles.is_empty()) else {
            ctx.error("no triangle topology in the context: the springs join adjacent triangles");
            return;
        };
        let mesh = topo.mesh().clone();
        if mesh.max_index().is_some_and(|m| m as usize >= n) {
            ctx.error(format!(
                "the topology uses points beyond the state's {n} points"
            ));
            return;
        }
        self.setup(&rest, &mesh);
    }
}

impl_component!(
    FastTriangularBendingSprings,
    "FastTriangularBendingSprings",
    init
);

impl ForceField for FastTriangularBendingSprings {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        for s in &self.springs {
            let mut r = [0.0; 3];
            for (k, &i) in s.vid.iter().enumerate() {
                for c in 0..3 {
                    r[c] += x[3 * i + c] * s.alpha[k];
                }
            }
            for (k, &i) in s.vid.iter().enumerate() {
                for c in 0..3 {
                    f[3 * i + c] -= r[c] * s.lambda * s.alpha[k];
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        for s in &self.springs {
            let d: [V3; 4] = std::array::from_fn(|k| {
                let i = s.vid[k];
                std::array::from_fn(|c| dx[3 * i + c] * s.lambda * k_factor * s.alpha[k])
            });
            for (j, &i) in s.vid.iter().enumerate() {
                for dk in &d {
                    for c in 0..3 {
                        df[3 * i + c] -= dk[c] * s.alpha[j];
                    }
                }
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        // all four vertices (SOFA's newer buildStiffnessMatrix leaves out D's rows and columns;
        // its addKToMatrix, which this follows, does not)
        for s in &self.springs {
            for (j, &a) in s.vid.iter().enumerate() {
                for (k, &b) in s.vid.iter().enumerate() {
                    let v = -s.lambda * s.alpha[j] * s.alpha[k] * k_factor;
                    m.add_block3(
                        offset + 3 * a,
                        offset + 3 * b,
                        &Mat3::from_diagonal_element(v),
                    );
                }
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }

    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        let mut e = 0.0;
        for s in &self.springs {
            let mut r = [0.0; 3];
            for (k, &i) in s.vid.iter().enumerate() {
                for c in 0..3 {
                    r[c] += x[3 * i + c] * s.alpha[k];
                }
            }
            e += (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]) * s.lambda * 0.5;
        }
        Some(e)
    }
}

canape_core::data_schema! {
    /// TriangularBendingSprings's own Data (after the force-field Data).
    struct BendingSpringsData {
        stiffness: Real = ("stiffness", DataKind::Real, "100000", "uniform stiffness for the all springs"),
        damping: Real = ("damping", DataKind::Real, "1", "uniform damping for the all springs"),
        show_springs: Flag = ("showSprings", DataKind::Bool, "1", "option to draw springs"),
    }
}

/// TriangularBendingSprings.
#[derive(Clone)]
pub struct TriangularBendingSprings {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: BendingSpringsData,
    /// (m1, m2, rest length): m2 the apex in the lower-index triangle, m1 in the other.
    springs: Vec<(usize, usize, f64)>,
    ks: f64,
    kd: f64,
    /// ∂f/∂x of each spring from the last `add_force` (zero when too short).
    dfdx: Vec<Mat3>,
    rayleigh: f64,
}

impl Default for TriangularBendingSprings {
    fn default() -> Self {
        Self::new()
    }
}

impl TriangularBendingSprings {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = BendingSpringsData::declare(data);
        TriangularBendingSprings {
            data,
            ff,
            d,
            springs: Vec::new(),
            ks: 0.0,
            kd: 0.0,
            dfdx: Vec::new(),
            rayleigh: 0.0,
        }
    }

    /// The springs of a triangle mesh at rest positions `rest` (init and tests), in the edge
    /// list's order: for each edge, seen first from its lower-index triangle, the apexes of its
    /// two triangles (none for border or non-manifold edges).
    pub fn setup(&mut self, rest: &[f64], mesh: &Mesh) {
        self.ks = self.data.get(self.d.stiffness);
        self.kd = self.data.get(self.d.damping);
        let edges = if mesh.edges.is_empty() {
            edges_from_triangles(&mesh.triangles)
        } else {
            mesh.edges.clone()
        };
        let index: std::collections::BTreeMap<(u32, u32), usize> = edges
            .iter()
            .enumerate()
            .map(|(i, e)| ((e[0].min(e[1]), e[0].max(e[1])), i))
            .collect();
        let mut around: Vec<Vec<u32>> = vec![Vec::new(); edges.len()];
        for t in &mesh.triangles {
            for j in 0..3 {
                let (a, b) = (t[(j + 1) % 3], t[(j + 2) % 3]);
                if let Some(&e) = index.get(&(a.min(b), a.max(b))) {
                    around[e].push(t[j]);
                }
            }
        }
        self.springs = around
            .iter()
            .filter_map(|apexes| match apexes[..] {
                [m2, m1] => {
                    let (m1, m2) = (m1 as usize, m2 as usize);
                    let d = sub(p3(rest, m1), p3(rest, m2));
                    Some((m1, m2, norm(d)))
                }
                _ => None,
            })
            .collect();
        self.dfdx = vec![Mat3::zeros(); self.springs.len()];
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        self.springs.clear();
        self.dfdx.clear();
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        let rest = st.vec(canape_core::state::VecId::REST_POSITION).to_vec();
        let n = st.size();
        let Some(topo) = ctx.topology_where(|m| !m.triangles.is_empty()) else {
            ctx.error("no triangle topology in the context: the springs join adjacent triangles");
            return;
        };
        let mesh = topo.mesh().clone();
        if mesh.max_index().is_some_and(|m| m as usize >= n) {
            ctx.error(format!(
                "the topology uses points beyond the state's {n} points"
            ));
            return;
        }
        self.setup(&rest, &mesh);
    }
}

impl_component!(TriangularBendingSprings, "TriangularBendingSprings", init);

impl ForceField for TriangularBendingSprings {
    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]) {
        let (ks, kd) = (self.ks, self.kd);
        for (k, &(m1, m2, l0)) in self.springs.iter().enumerate() {
            let u = sub(p3(x, m2), p3(x, m1));
            let d = norm(u);
            if d <= 1.0e-4 {
                self.dfdx[k] = Mat3::zeros();
                continue;
            }
            let inv = 1.0 / d;
            let u = [u[0] * inv, u[1] * inv, u[2] * inv];
            let elongation = d - l0;
            let dv = sub(p3(v, m2), p3(v, m1));
            let ev = u[0] * dv[0] + u[1] * dv[1] + u[2] * dv[2];
            let fi = ks * elongation + kd * ev;
            for c in 0..3 {
                f[3 * m1 + c] += u[c] * fi;
                f[3 * m2 + c] -= u[c] * fi;
            }
            let t = fi * inv;
            let mut m = Mat3::zeros();
            for a in 0..3 {
                for b in 0..3 {
                    m[(a, b)] = (ks - t) * u[a] * u[b];
                }
                m[(a, a)] += t;
            }
            self.dfdx[k] = m;
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        for (k, &(m1, m2, _)) in self.springs.iter().enumerate() {
            let d = sub(p3(dx, m2), p3(dx, m1));
            let m = &self.dfdx[k];
            for a in 0..3 {
                let g = (m[(a, 0)] * d[0] + m[(a, 1)] * d[1] + m[(a, 2)] * d[2]) * k_factor;
                df[3 * m1 + a] += g;
                df[3 * m2 + a] -= g;
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        for (k, &(m1, m2, _)) in self.springs.iter().enumerate() {
            let b = self.dfdx[k] * k_factor;
            let (a, c) = (offset + 3 * m1, offset + 3 * m2);
            m.add_block3(a, a, &(-b));
            m.add_block3(c, c, &(-b));
            m.add_block3(a, c, &b);
            m.add_block3(c, a, &b);
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }

    fn draw_edges(&self) -> Vec<[u32; 2]> {
        self.springs
            .iter()
            .map(|&(a, b, _)| [a as u32, b as u32])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles folded along their shared edge by the dihedral angle `fold`.
    fn hinge(fold: f64) -> Vec<f64> {
        // C = (0,0,0), D = (1,0,0), A = (0.3, -0.8, 0) fixed, B rotated about the x axis
        let b = [0.6, 0.9 * fold.cos(), 0.9 * fold.sin()];
        vec![
            0.3, -0.8, 0.0, b[0], b[1], b[2], 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
        ]
    }

    fn mesh() -> Mesh {
        // points: 0 = A, 1 = B, 2 = C, 3 = D
        Mesh {
            triangles: vec![[2, 3, 0], [3, 2, 1]],
            ..Default::default()
        }
    }

    #[test]
    fn flat_and_rigid_configurations_carry_no_force_folding_does() {
        let mut ff = FastTriangularBendingSprings::new();
        ff.data.set_str("bendingStiffness", "10").unwrap();
        let rest = hinge(0.0);
        ff.setup(&rest, &mesh());
        assert_eq!(ff.springs.len(), 1, "one inner edge, one spring");
        let s = ff.springs[0];
        // edge (2, 3) as the first triangle lists it; apexes 0 (first triangle), 1 (second)
        assert_eq!(s.vid, [0, 1, 2, 3]);
        // weights: Σα = 0 and Σα·p = 0 at rest (flat)
        assert!(s.alpha.iter().sum::<f64>().abs() < 1e-12);
        let f = |ff: &mut FastTriangularBendingSprings, x: &[f64]| {
            let mut f = vec![0.0; 12];
            ff.add_force(x, &[0.0; 12], &mut f);
            f
        };
        assert!(f(&mut ff, &rest).iter().all(|v| v.abs() < 1e-12));
        // a rigid motion of the rest shape: no force
        let r = nalgebra::Rotation3::from_euler_angles(0.3, 1.0, -0.4);
        let moved: Vec<f64> = rest
            .chunks(3)
            .flat_map(|p| {
                let q = r * nalgebra::Vector3::new(p[0], p[1], p[2]);
                [q.x + 1.0, q.y, q.z - 2.0]
            })
            .collect();
        assert!(f(&mut ff, &moved).iter().all(|v| v.abs() < 1e-9));
        // folded: forces sum to zero, their moment too, and they unfold (work against the fold)
        let x = hinge(0.2);
        let fo = f(&mut ff, &x);
        for c in 0..3 {
            let sum: f64 = (0..4).map(|i| fo[3 * i + c]).sum();
            assert!(sum.abs() < 1e-12);
        }
        assert!(fo[5] < 0.0, "B is pushed back towards the plane: {fo:?}");
        // the force is the energy's negative gradient (finite differences)
        let h = 1e-6;
        for j in 0..12 {
            let mut xp = x.clone();
            xp[j] += h;
            let mut xm = x.clone();
            xm[j] -= h;
            let g =
                (ff.potential_energy(&xp).unwrap() - ff.potential_energy(&xm).unwrap()) / (2.0 * h);
            assert!((fo[j] + g).abs() < 1e-6, "{j}: {} vs {}", fo[j], -g);
        }
    }

    #[test]
    fn triangular_bending_springs_join_the_apexes_and_linearise_exactly() {
        let mut ff = TriangularBendingSprings::new();
        ff.data.set_str("stiffness", "50").unwrap();
        ff.data.set_str("damping", "0").unwrap();
        let rest = hinge(0.0);
        ff.setup(&rest, &mesh());
        // one inner edge: a spring between the apexes 0 (first triangle) and 1
        assert_eq!(ff.springs.len(), 1);
        let (m1, m2, l0) = ff.springs[0];
        assert_eq!((m1, m2), (1, 0));
        let d = ((0.6f64 - 0.3).powi(2) + (0.9f64 + 0.8).powi(2)).sqrt();
        assert!((l0 - d).abs() < 1e-12);
        // folded: the apexes come closer, the spring pushes them apart along their line
        let x = hinge(0.5);
        let mut f = vec![0.0; 12];
        ff.add_force(&x, &[0.0; 12], &mut f);
        let u: Vec<f64> = (0..3).map(|c| x[3 + c] - x[c]).collect();
        let len = u.iter().map(|v| v * v).sum::<f64>().sqrt();
        for c in 0..3 {
            let want = 50.0 * (len - l0) * u[c] / len;
            assert!((f[c] - want).abs() < 1e-12 && (f[3 + c] + want).abs() < 1e-12);
        }
        assert!(f[6..].iter().all(|v| *v == 0.0));
        // add_dforce = the assembled matrix = finite differences of the force
        let mut tr = canape_core::matrix::Triplets::new(12);
        ff.add_k_to_matrix(&mut tr, 1.0, 0);
        let mut k = vec![vec![0.0; 12]; 12];
        for &(r, c, v) in &tr.entries {
            k[r as usize][c as usize] += v;
        }
        let h = 1e-6;
        for j in 0..12 {
            let mut e = vec![0.0; 12];
            e[j] = 1.0;
            let mut col = vec![0.0; 12];
            ff.add_force(&x, &[0.0; 12], &mut [0.0; 12]);
            ff.add_dforce(&e, &mut col, 1.0);
            let mut xp = x.clone();
            xp[j] += h;
            let mut xm = x.clone();
            xm[j] -= h;
            let (mut fp, mut fm) = (vec![0.0; 12], vec![0.0; 12]);
            ff.add_force(&xp, &[0.0; 12], &mut fp);
            ff.add_force(&xm, &[0.0; 12], &mut fm);
            for i in 0..12 {
                let fd = (fp[i] - fm[i]) / (2.0 * h);
                assert!((col[i] - fd).abs() < 1e-6, "({i},{j}) {} vs {fd}", col[i]);
                assert!((k[i][j] - col[i]).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn dforce_equals_assembled_matrix_and_force_difference() {
        let mut ff = FastTriangularBendingSprings::new();
        ff.data.set_str("bendingStiffness", "3").unwrap();
        ff.setup(&hinge(0.0), &mesh());
        let x = hinge(0.4);
        let mut tr = canape_core::matrix::Triplets::new(12);
        ff.add_k_to_matrix(&mut tr, 2.0, 0);
        let mut k = vec![vec![0.0; 12]; 12];
        for &(r, c, v) in &tr.entries {
            k[r as usize][c as usize] += v;
        }
        let dx: Vec<f64> = (0..12).map(|i| ((i * 7) % 5) as f64 * 0.1 - 0.2).collect();
        let mut df = vec![0.0; 12];
        ff.add_dforce(&dx, &mut df, 2.0);
        // linear force: F(x + dx) − F(x) = K dx exactly
        let mut f0 = vec![0.0; 12];
        ff.add_force(&x, &[0.0; 12], &mut f0);
        let x1: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a + b).collect();
        let mut f1 = vec![0.0; 12];
        ff.add_force(&x1, &[0.0; 12], &mut f1);
        for i in 0..12 {
            let kdx: f64 = (0..12).map(|j| k[i][j] * dx[j]).sum();
            assert!((kdx - df[i]).abs() < 1e-9, "{i}");
            assert!((2.0 * (f1[i] - f0[i]) - df[i]).abs() < 1e-9, "{i}");
        }
    }
}
