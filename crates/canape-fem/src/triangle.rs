//! TriangularFEMForceFieldOptim: corotational plane-stress membrane triangles, following the
//! formulation of SOFA's
//! Sofa/Component/SolidMechanics/FEM/Elastic/.../TriangularFEMForceFieldOptim.inl.
//!
//! Each triangle (A, B, C) has a frame whose x axis is along AB and whose y axis lies in the
//! triangle's plane towards C. At rest the triangle is A = (0, 0), B = (bx, 0), C = (cx, cy) in
//! its frame. At each `add_force` the frame is rebuilt from the current positions; the in-plane
//! displacement of B and C in that frame gives the constant strain, Hooke's plane-stress law the
//! stress, and the forces are Area·Bᵀσ (unit thickness). `add_dforce` and the assembled
//! stiffness use the frames of the last `add_force` (the rotation's derivative is neglected, as
//! in SOFA). The arithmetic is written out in SOFA's order (dot products left to right,
//! normalisation by division) so that results agree to round-off.

use crate::common::{check_material, fem_inputs};
use canape_core::component::{ForceField, Reaction};
use canape_core::data::{
    ChangedData, DataKind, DataTable, Flag, ForceFieldData, Real, Reals, Text,
};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::Mat3;

type V3 = [f64; 3];

mod large;
pub use large::TriangularFemForceField;

#[inline(always)]
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
#[inline(always)]
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
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
fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
#[inline(always)]
fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
/// Divide by the norm when it exceeds machine epsilon (else leave the vector as it is).
#[inline(always)]
fn normalized(a: V3) -> V3 {
    let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    if n > f64::EPSILON {
        [a[0] / n, a[1] / n, a[2] / n]
    } else {
        a
    }
}
#[inline(always)]
fn p3(x: &[f64], i: usize) -> V3 {
    [x[3 * i], x[3 * i + 1], x[3 * i + 2]]
}

/// The triangle's frame from two edges: rows x (along e1) and y ((e1 × e2) × e1), unit.
#[inline(always)]
fn frame(e1: V3, e2: V3) -> [V3; 2] {
    let n = cross(e1, e2);
    let y = cross(n, e1);
    [normalized(e1), normalized(y)]
}

#[derive(Clone, Copy, Debug)]
struct Tri {
    idx: [usize; 3],
    /// Rest shape in the rest frame: B = (bx, 0), C = (cx, cy).
    bx: f64,
    cx: f64,
    cy: f64,
    /// 1 / (2 bx cy) · ½ = 1/(4·area): scales the unnormalised strain to SOFA's stress.
    ss: f64,
    /// Plane-stress constants: mu = E/(1+ν), gamma = Eν/(1−ν²).
    mu: f64,
    gamma: f64,
    /// Frame from the last `add_force`.
    frame: [V3; 2],
}

impl Tri {
    /// Plane-stress constants (mu, gamma) of element `k`.
    fn material(e: &[f64], nu: &[f64], k: usize) -> (f64, f64) {
        let (ek, nuk) = element_moduli(e, nu, k);
        (ek / (1.0 + nuk), (ek * nuk) / (1.0 - nuk * nuk))
    }

    /// Stress (SOFA's scaled σ) from the unnormalised strain terms.
    #[inline(always)]
    fn stress(&self, s0: f64, s1: f64, s2: f64, factor: f64) -> [f64; 3] {
        let g = self.gamma * (s0 + s1);
        [
            (self.mu * s0 + g) * factor,
            (self.mu * s1 + g) * factor,
            (0.5 * self.mu) * s2 * factor,
        ]
    }

    /// Forces on (A, B, C) from a stress, in world coordinates.
    #[inline(always)]
    fn forces(&self, s: [f64; 3]) -> [V3; 3] {
        let [ex, ey] = self.frame;
        let fb = add(
            scale(ex, self.cy * s[0] - self.cx * s[2]),
            scale(ey, self.cy * s[2] - self.cx * s[1]),
        );
        let fc = add(scale(ex, self.bx * s[2]), scale(ey, self.bx * s[1]));
        let fa = sub(scale(fb, -1.0), fc);
        [fa, fb, fc]
    }
}

canape_core::data_schema! {
    /// TriangularFEMForceFieldOptim's own Data (after the force-field Data).
    struct OptimData {
        young: Reals = ("youngModulus", DataKind::Reals(0), "5000", "Young's modulus in Hooke's law (one value, or one per element)"),
        poisson: Reals = ("poissonRatio", DataKind::Reals(0), "0.45", "Poisson's ratio in Hooke's law (one value, or one per element)"),
        method: Text = ("method", DataKind::Str, "large", "only \"large\" (corotational) exists, as in SOFA"),
        damping: Real = ("damping", DataKind::Real, "0", "Ratio damping/stiffness (unused, as in SOFA)"),
        rest_scale: Real = ("restScale", DataKind::Real, "1", "Scale factor applied to rest positions (to simulate pre-stretched materials)"),
        compute_principal_stress: Flag = ("computePrincipalStress", DataKind::Bool, "0", "Compute principal stress for each triangle"),
        stress_max_value: Real = ("stressMaxValue", DataKind::Real, "0", "Max stress value computed over the triangulation"),
        show_stress_vector: Flag = ("showStressVector", DataKind::Bool, "0", "Flag activating rendering of stress directions within each triangle"),
        show_stress_threshold: Real = ("showStressThreshold", DataKind::Real, "0", "Minimum Stress value for rendering of stress vectors"),
        drawing: Flag = ("drawing", DataKind::Bool, "1", "draw the forcefield if true"),
    }
}

/// Young's moduli and Poisson's ratios (one, or one per element), never empty.
fn moduli(
    t: &DataTable,
    young: canape_core::data::Data<Reals>,
    poisson: canape_core::data::Data<Reals>,
) -> (Vec<f64>, Vec<f64>) {
    let or = |v: &[f64], d: f64| if v.is_empty() { vec![d] } else { v.to_vec() };
    (or(t.get(young), 5000.0), or(t.get(poisson), 0.45))
}

/// The modulus and ratio of element `k`: its own in a per-element list, else the first.
fn element_moduli(e: &[f64], nu: &[f64], k: usize) -> (f64, f64) {
    (*e.get(k).unwrap_or(&e[0]), *nu.get(k).unwrap_or(&nu[0]))
}

#[derive(Clone)]
pub struct TriangularFemForceFieldOptim {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: OptimData,
    tris: Vec<Tri>,
    rayleigh: f64,
}

impl Default for TriangularFemForceFieldOptim {
    fn default() -> Self {
        Self::new()
    }
}

impl TriangularFemForceFieldOptim {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = OptimData::declare(data);
        TriangularFemForceFieldOptim {
            data,
            ff,
            d,
            tris: Vec::new(),
            rayleigh: 0.0,
        }
    }

    /// Set up the triangles from rest positions (init and tests).
    pub fn setup(&mut self, rest: &[f64], triangles: &[[u32; 3]]) {
        let (e, nu) = moduli(&self.data, self.d.young, self.d.poisson);
        let rest_scale = self
            .data
            .was_set(self.d.rest_scale)
            .then(|| self.data.get(self.d.rest_scale));
        self.tris.clear();
        for (k, t) in triangles.iter().enumerate() {
            let idx = t.map(|i| i as usize);
            let a = p3(rest, idx[0]);
            let mut ab = sub(p3(rest, idx[1]), a);
            let mut ac = sub(p3(rest, idx[2]), a);
            if let Some(s) = rest_scale {
                ab = scale(ab, s);
                ac = scale(ac, s);
            }
            let [ex, ey] = frame(ab, ac);
            let (bx, cx, cy) = (dot(ex, ab), dot(ex, ac), dot(ey, ac));
            let (mu, gamma) = Tri::material(&e, &nu, k);
            self.tris.push(Tri {
                idx,
                bx,
                cx,
                cy,
                ss: 0.5 / (bx * cy),
                mu,
                gamma,
                frame: [ex, ey],
            });
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        self.tris.clear();
        let method = self.data.get(self.d.method).trim().to_string();
        if !method.is_empty() && method != "large" {
            ctx.warn(format!(
                "method '{method}': TriangularFEMForceFieldOptim only has the corotational \
                 'large' method (as SOFA); using it"
            ));
        }
        if let Some(m) = check_material(self.data.get(self.d.young), self.data.get(self.d.poisson))
        {
            ctx.error(m);
            return;
        }
        let Some((rest, mesh)) =
            fem_inputs(ctx, &self.data, |m| !m.triangles.is_empty(), "triangles")
        else {
            return;
        };
        self.setup(&rest, &mesh.triangles);
        let degenerate = self
            .tris
            .iter()
            .filter(|t| !(t.ss.is_finite() && t.bx * t.cy != 0.0))
            .count();
        if degenerate > 0 {
            ctx.error(format!(
                "{degenerate} triangle(s) have no area at rest: their stiffness is undefined"
            ));
            self.tris.clear();
        }
        // the current frames (SOFA's initTriangleState): the frames the first products use
        if let Some(st) = ctx.state() {
            let x = st.vec(canape_core::state::VecId::POSITION).to_vec();
            for t in &mut self.tris {
                let a = p3(&x, t.idx[0]);
                t.frame = frame(sub(p3(&x, t.idx[1]), a), sub(p3(&x, t.idx[2]), a));
            }
        }
    }

    /// The 3×3 blocks K_ij (i, j over A, B, C) of the stiffness times `k_factor`, in the frames
    /// of the last `add_force` (SOFA's addKToMatrix formulation).
    fn blocks(t: &Tri, k_factor: f64) -> [[Mat3; 3]; 3] {
        let fac = -k_factor * t.ss;
        let (fg, fgm, fm) = (fac * t.gamma, fac * (t.gamma + t.mu), fac * (0.5 * t.mu));
        let (bx, cx, cy) = (t.bx, t.cx, t.cy);
        // K: 3 stresses × (dbx, dby, dcx, dcy)
        let k = [
            [fgm * cy, -fg * cx, 0.0, fg * bx],
            [fg * cy, -fgm * cx, 0.0, fgm * bx],
            [-fm * cx, fm * cy, fm * bx, 0.0],
        ];
        type M2 = nalgebra::Matrix2<f64>;
        let j11 = M2::new(
            cy * k[0][0] - cx * k[2][0],
            cy * k[0][1] - cx * k[2][1],
            cy * k[0][1] - cx * k[2][1],
            cy * k[2][1] - cx * k[1][1],
        );
        let j12 = M2::new(-cx * k[2][2], cy * k[0][3], cy * k[2][2], -cx * k[1][3]);
        let j22 = M2::new(bx * k[2][2], 0.0, 0.0, bx * k[1][3]);
        let j00 = j11 + j12 + j22 + j12.transpose();
        let j01 = -j11 - j12.transpose();
        let j02 = -j12 - j22;
        let f = nalgebra::Matrix2x3::new(
            t.frame[0][0],
            t.frame[0][1],
            t.frame[0][2],
            t.frame[1][0],
            t.frame[1][1],
            t.frame[1][2],
        );
        let world = |j: M2| -> Mat3 { f.transpose() * (j * f) };
        let (m00, m11, m22) = (world(j00), world(j11), world(j22));
        let (m01, m02, m12) = (world(j01), world(j02), world(j12));
        [
            [m00, m01, m02],
            [m01.transpose(), m11, m12],
            [m02.transpose(), m12.transpose(), m22],
        ]
    }
}

impl TriangularFemForceFieldOptim {
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let material = [
            self.d.young.index(),
            self.d.poisson.index(),
            self.ff.rayleigh_stiffness.index(),
        ];
        if !changed.only(&material) || self.tris.is_empty() {
            return Reaction::Reinit;
        }
        if let Some(m) = check_material(self.data.get(self.d.young), self.data.get(self.d.poisson))
        {
            return Reaction::Refused(vec![m]);
        }
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        let (e, nu) = moduli(&self.data, self.d.young, self.d.poisson);
        for (k, t) in self.tris.iter_mut().enumerate() {
            (t.mu, t.gamma) = Tri::material(&e, &nu, k);
        }
        Reaction::Updated
    }
}

canape_core::impl_component!(
    TriangularFemForceFieldOptim,
    "TriangularFEMForceFieldOptim",
    init,
    data_changed
);

impl ForceField for TriangularFemForceFieldOptim {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        for t in &mut self.tris {
            let a = p3(x, t.idx[0]);
            let ab = sub(p3(x, t.idx[1]), a);
            let ac = sub(p3(x, t.idx[2]), a);
            t.frame = frame(ab, ac);
            let [ex, ey] = t.frame;
            let dbx = t.bx - dot(ex, ab);
            let dcx = t.cx - dot(ex, ac);
            let dcy = t.cy - dot(ey, ac);
            let s0 = t.cy * dbx;
            let s1 = t.bx * dcy;
            let s2 = t.bx * dcx - t.cx * dbx;
            let s = t.stress(s0, s1, s2, t.ss);
            let fs = t.forces(s);
            for (v, fv) in fs.iter().enumerate() {
                let n = t.idx[v];
                for c in 0..3 {
                    f[3 * n + c] += fv[c];
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        for t in &self.tris {
            let a = p3(dx, t.idx[0]);
            let dab = sub(p3(dx, t.idx[1]), a);
            let dac = sub(p3(dx, t.idx[2]), a);
            let [ex, ey] = t.frame;
            let (dbx, dby) = (dot(ex, dab), dot(ey, dab));
            let (dcx, dcy) = (dot(ex, dac), dot(ey, dac));
            let s0 = t.cy * dbx;
            let s1 = t.bx * dcy - t.cx * dby;
            let s2 = t.bx * dcx - t.cx * dbx + t.cy * dby;
            let s = t.stress(s0, s1, s2, t.ss * k_factor);
            let fs = t.forces(s);
            for (v, fv) in fs.iter().enumerate() {
                let n = t.idx[v];
                for c in 0..3 {
                    df[3 * n + c] -= fv[c];
                }
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        for t in &self.tris {
            let b = Self::blocks(t, k_factor);
            for i in 0..3 {
                for j in 0..3 {
                    m.add_block3(offset + 3 * t.idx[i], offset + 3 * t.idx[j], &b[i][j]);
                }
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::Component;

    /// Editing youngModulus, poissonRatio or rayleighStiffness of the triangular FEM force
    /// fields updates them in place to exactly what an init with the new values gives; an
    /// invalid material is refused, and other Data ask for a re-initialisation.
    #[test]
    fn triangle_material_edits_update_in_place() {
        use crate::element::edit_check;
        use canape_core::component::Reaction;
        let mut seed = 7;
        let mut rest = Vec::new();
        for j in 0..3 {
            for i in 0..3 {
                rest.extend([
                    i as f64,
                    j as f64 * 0.9,
                    0.1 * crate::fd_check::rnd(&mut seed),
                ]);
            }
        }
        let triangles: Vec<[u32; 3]> = (0..2)
            .flat_map(|j| (0..2).map(move |i| (i, j)))
            .flat_map(|(i, j)| {
                let v = |a: u32, b: u32| a + 3 * b;
                [
                    [v(i, j), v(i + 1, j), v(i + 1, j + 1)],
                    [v(i, j), v(i + 1, j + 1), v(i, j + 1)],
                ]
            })
            .collect();
        let mesh = canape_core::mesh::Mesh {
            triangles,
            ..Default::default()
        };
        let x: Vec<f64> = crate::fd_check::rigidly_moved(&rest)
            .iter()
            .map(|v| v + 0.05 * crate::fd_check::rnd(&mut seed))
            .collect();
        let before = [
            ("youngModulus", "1000"),
            ("poissonRatio", "0.3"),
            ("rayleighStiffness", "0.1"),
        ];
        let per_element = [
            ("youngModulus", "1200 900 1100 800 1000 1300 700 1400"),
            ("poissonRatio", "0.2 0.35"),
            ("rayleighStiffness", "0"),
        ];
        fn check<F: ForceField>(
            make: impl Fn() -> F,
            rest: &[f64],
            mesh: &canape_core::mesh::Mesh,
            before: &[(&str, &str)],
            per_element: &[(&str, &str)],
            other: (&str, &str),
            x: &[f64],
        ) {
            let edit =
                |after: &[(&str, &str)]| edit_check::edit(&make, rest, mesh, before, after, x);
            assert_eq!(edit(&[("youngModulus", "1500")]), Reaction::Updated);
            assert_eq!(edit(&[("poissonRatio", "0.4")]), Reaction::Updated);
            assert_eq!(edit(&[("rayleighStiffness", "0.25")]), Reaction::Updated);
            assert_eq!(edit(per_element), Reaction::Updated);
            assert!(matches!(
                edit(&[("poissonRatio", "0.7")]),
                Reaction::Refused(_)
            ));
            assert!(matches!(
                edit(&[("youngModulus", "-5")]),
                Reaction::Refused(_)
            ));
            assert_eq!(edit(&[("youngModulus", "2000"), other]), Reaction::Reinit);
        }
        let (r, m, b, p) = (&rest, &mesh, &before[..], &per_element[..]);
        check(
            TriangularFemForceFieldOptim::new,
            r,
            m,
            b,
            p,
            ("restScale", "0.9"),
            &x,
        );
        check(
            TriangularFemForceField::new,
            r,
            m,
            b,
            p,
            ("computePrincipalStress", "1"),
            &x,
        );
        check(
            TriangularFemForceField::triangle_fem,
            r,
            m,
            b,
            p,
            ("thickness", "2"),
            &x,
        );
        let plane_strain = || {
            let mut ff = TriangularFemForceField::triangle_fem();
            ff.data_mut().set_str("planeStrain", "1").unwrap();
            ff.data_mut().set_str("thickness", "0.5").unwrap();
            ff
        };
        check(plane_strain, r, m, b, p, ("thickness", "2"), &x);
    }

    fn rotated_square() -> (Vec<f64>, Vec<[u32; 3]>) {
        let r = nalgebra::Rotation3::from_euler_angles(0.4, -0.3, 0.9);
        let pts = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.2, 0.9, 0.0],
            [-0.1, 1.1, 0.0],
        ];
        let mut x = Vec::new();
        for p in pts {
            let q = r * nalgebra::Vector3::new(p[0], p[1], p[2]);
            x.extend([q.x, q.y, q.z]);
        }
        (x, vec![[0, 1, 2], [0, 2, 3]])
    }

    fn forces(ff: &mut TriangularFemForceFieldOptim, x: &[f64]) -> Vec<f64> {
        let mut f = vec![0.0; x.len()];
        ff.add_force(x, &vec![0.0; x.len()], &mut f);
        f
    }

    #[test]
    fn rigid_motions_give_no_force_and_stretch_matches_plane_stress() {
        let (rest, tris) = rotated_square();
        let mut ff = TriangularFemForceFieldOptim::new();
        ff.data.set_str("youngModulus", "1000").unwrap();
        ff.data.set_str("poissonRatio", "0.3").unwrap();
        ff.setup(&rest, &tris);
        // a rotation and a translation of the rest shape: no force
        let r = nalgebra::Rotation3::from_euler_angles(-1.1, 0.5, 2.0);
        let moved: Vec<f64> = rest
            .chunks(3)
            .flat_map(|p| {
                let q = r * nalgebra::Vector3::new(p[0], p[1], p[2]);
                [q.x + 3.0, q.y - 1.0, q.z + 0.5]
            })
            .collect();
        let f = forces(&mut ff, &moved);
        assert!(f.iter().all(|v| v.abs() < 1e-9), "{f:?}");
        // one triangle in its plane stretched by ε along x: the force on the far side is
        // E/(1−ν²)·ε·(edge length) split over its two nodes (plane stress, unit thickness)
        let rest = vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        ff.setup(&rest, &[[0, 1, 2]]);
        let eps = 1e-3;
        let x = vec![0.0, 0.0, 0.0, 2.0 * (1.0 + eps), 0.0, 0.0, 0.0, 1.0, 0.0];
        let f = forces(&mut ff, &x);
        // σxx = E/(1−ν²)·ε, σyy = νσxx: with B = (2, 0), C = (0, 1) the node forces are
        // −A·Bᵀσ, A = 1: f_B = −(σxx·1/2, 0)... written out: f_Bx = −σxx·cy·area/(2·area)
        let sxx = 1000.0 / (1.0 - 0.09) * eps;
        assert!(
            (f[3] + sxx * 0.5).abs() < 1e-9 * sxx.abs().max(1.0),
            "{f:?}"
        );
        assert!((f[7] + 0.3 * sxx * 1.0).abs() < 1e-9, "{f:?}");
        // equilibrium
        for c in 0..3 {
            assert!((f[c] + f[3 + c] + f[6 + c]).abs() < 1e-12);
        }
    }

    #[test]
    fn dforce_and_matrix_agree_and_match_finite_differences_at_rest() {
        let (rest, tris) = rotated_square();
        let mut ff = TriangularFemForceFieldOptim::new();
        ff.data.set_str("youngModulus", "700").unwrap();
        ff.data.set_str("poissonRatio", "0.35").unwrap();
        ff.setup(&rest, &tris);
        let n = rest.len();
        let _ = forces(&mut ff, &rest);
        // K by add_dforce columns vs K assembled vs finite differences of the force
        let mut kd = vec![vec![0.0; n]; n];
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            let mut col = vec![0.0; n];
            ff.add_dforce(&e, &mut col, 1.0);
            for i in 0..n {
                kd[i][j] = col[i];
            }
        }
        let mut tr = canape_core::matrix::Triplets::new(n);
        ff.add_k_to_matrix(&mut tr, 1.0, 0);
        let mut dense = vec![vec![0.0; n]; n];
        for &(r, c, v) in &tr.entries {
            dense[r as usize][c as usize] += v;
        }
        let h = 1e-6;
        for j in 0..n {
            let mut xp = rest.clone();
            xp[j] += h;
            let mut xm = rest.clone();
            xm[j] -= h;
            let fp = forces(&mut ff, &xp);
            let fm = forces(&mut ff, &xm);
            for i in 0..n {
                let fd = (fp[i] - fm[i]) / (2.0 * h);
                assert!(
                    (kd[i][j] - fd).abs() < 1e-5 * 700.0,
                    "dforce ({i},{j}) {} vs {fd}",
                    kd[i][j]
                );
                assert!(
                    (dense[i][j] - kd[i][j]).abs() < 1e-9 * 700.0,
                    "matrix ({i},{j})"
                );
            }
        }
    }
}
