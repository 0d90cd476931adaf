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

use crate::common::{check_material, fem_inputs, force_field_data};
use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::Mat3;

type V3 = [f64; 3];

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

#[derive(Clone)]
pub struct TriangularFemForceFieldOptim {
    data: DataTable,
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
        let data = force_field_data(DataTable::new())
            .with(
                "youngModulus",
                DataKind::Reals(0),
                "5000",
                "Young's modulus in Hooke's law (one value, or one per element)",
            )
            .with(
                "poissonRatio",
                DataKind::Reals(0),
                "0.45",
                "Poisson's ratio in Hooke's law (one value, or one per element)",
            )
            .with(
                "method",
                DataKind::Str,
                "large",
                "only \"large\" (corotational) exists, as in SOFA",
            )
            .with(
                "damping",
                DataKind::Real,
                "0",
                "Ratio damping/stiffness (unused, as in SOFA)",
            )
            .with(
                "restScale",
                DataKind::Real,
                "1",
                "Scale factor applied to rest positions (to simulate pre-stretched materials)",
            )
            .with(
                "computePrincipalStress",
                DataKind::Bool,
                "0",
                "Compute principal stress for each triangle",
            )
            .with(
                "stressMaxValue",
                DataKind::Real,
                "0",
                "Max stress value computed over the triangulation",
            )
            .with(
                "showStressVector",
                DataKind::Bool,
                "0",
                "Flag activating rendering of stress directions within each triangle",
            )
            .with(
                "showStressThreshold",
                DataKind::Real,
                "0",
                "Minimum Stress value for rendering of stress vectors",
            )
            .with(
                "drawing",
                DataKind::Bool,
                "1",
                "draw the forcefield if true",
            );
        TriangularFemForceFieldOptim {
            data,
            tris: Vec::new(),
            rayleigh: 0.0,
        }
    }

    /// Set up the triangles from rest positions (init and tests).
    pub fn setup(&mut self, rest: &[f64], triangles: &[[u32; 3]]) {
        let e = self.data.reals("youngModulus").to_vec();
        let nu = self.data.reals("poissonRatio").to_vec();
        let e = if e.is_empty() { vec![5000.0] } else { e };
        let nu = if nu.is_empty() { vec![0.45] } else { nu };
        let rest_scale = self
            .data
            .is_set("restScale")
            .then(|| self.data.real("restScale"));
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
            let (ek, nuk) = (*e.get(k).unwrap_or(&e[0]), *nu.get(k).unwrap_or(&nu[0]));
            self.tris.push(Tri {
                idx,
                bx,
                cx,
                cy,
                ss: 0.5 / (bx * cy),
                mu: ek / (1.0 + nuk),
                gamma: (ek * nuk) / (1.0 - nuk * nuk),
                frame: [ex, ey],
            });
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.real("rayleighStiffness");
        self.tris.clear();
        let method = self.data.str("method").trim().to_string();
        if !method.is_empty() && method != "large" {
            ctx.warn(format!(
                "method '{method}': TriangularFEMForceFieldOptim only has the corotational \
                 'large' method (as SOFA); using it"
            ));
        }
        if let Some(m) = check_material(
            self.data.reals("youngModulus"),
            self.data.reals("poissonRatio"),
        ) {
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

impl_component!(
    TriangularFemForceFieldOptim,
    "TriangularFEMForceFieldOptim",
    init
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

/// TriangularFEMForceField, method "large" (the only one SOFA's scenes use), following SOFA's
/// Sofa/Component/SolidMechanics/FEM/Elastic/.../TriangularFEMForceField.inl: each triangle's
/// frame has x along AB and z along AB × AC; the rest triangle in its rest frame gives the
/// material matrix (plane stress, times the rest area); at each `add_force` the strain-
/// displacement matrix J is rebuilt from the current triangle in its current frame, and the
/// force is Rᵀ·J·K·Jᵀ·(rest − current) in local coordinates. `add_dforce` and the assembled
/// stiffness use the J and frame of the last `add_force`.
#[derive(Clone)]
pub struct TriangularFemForceField {
    data: DataTable,
    tris: Vec<LargeTri>,
    rayleigh: f64,
    /// TriangleFEMForceField (SOFA's TriangleFEMForceField.inl, the older component with the
    /// same "large" element): the material times thickness·area (plane stress, or plane
    /// strain with `planeStrain`), rest points rotated before they are subtracted, quads split
    /// in two when the topology has no triangles.
    older: bool,
}

#[derive(Clone, Copy, Debug)]
struct LargeTri {
    idx: [usize; 3],
    /// Rest B and C in the rest frame (A at the origin): (P1.x, 0), (P2.x, P2.y).
    p1x: f64,
    p2x: f64,
    p2y: f64,
    /// Material matrix entries (times the rest area): K00 = K11, K01 = K10, K22.
    k00: f64,
    k01: f64,
    k22: f64,
    /// From the last `add_force`: the frame R (rows ex, ey, ez) and J's entries
    /// (J00, J02, J20, J22, J42; J11 = J02, J12 = J00, J31 = J22, J32 = J20, J51 = J42).
    r: [V3; 3],
    j: [f64; 5],
}

/// SOFA's computeRotationLarge: rows ex = AB/|AB|, ez = (ex × AC)/|…|, ey = ez × ex.
#[inline(always)]
fn rotation_large(a: V3, b: V3, c: V3) -> [V3; 3] {
    let ex = normalized(sub(b, a));
    let ez = normalized(cross(ex, sub(c, a)));
    let ey = cross(ez, ex);
    [ex, ey, ez]
}

/// R·v with R given by rows.
#[inline(always)]
fn rot(r: &[V3; 3], v: V3) -> V3 {
    [dot(r[0], v), dot(r[1], v), dot(r[2], v)]
}

/// Rᵀ·(f0, f1, 0).
#[inline(always)]
fn rot_t2(r: &[V3; 3], f0: f64, f1: f64) -> V3 {
    std::array::from_fn(|i| r[0][i] * f0 + r[1][i] * f1 + r[2][i] * 0.0)
}

impl LargeTri {
    /// J's entries from B = (xb, ·), C = (xc, yc) in the local frame.
    #[inline(always)]
    fn j_from(xb: f64, xc: f64, yc: f64) -> [f64; 5] {
        let inv = 1.0 / (xb * yc);
        [-yc * inv, (xc - xb) * inv, yc * inv, -xc * inv, xb * inv]
    }

    /// Local nodal forces J·K·Jᵀ·D for displacements D (6 numbers: x, y of A, B, C).
    #[inline(always)]
    fn local_forces(&self, d: [f64; 6]) -> [f64; 6] {
        let [j00, j02, j20, j22, j42] = self.j;
        let (j11, j12, j31, j32, j51) = (j02, j00, j22, j20, j42);
        let e0 = j00 * d[0] + j20 * d[2];
        let e1 = j11 * d[1] + j31 * d[3] + j51 * d[5];
        let e2 = j02 * d[0] + j12 * d[1] + j22 * d[2] + j32 * d[3] + j42 * d[4];
        let s0 = self.k00 * e0 + self.k01 * e1;
        let s1 = self.k01 * e0 + self.k00 * e1;
        let s2 = self.k22 * e2;
        [
            j00 * s0 + j02 * s2,
            j11 * s1 + j12 * s2,
            j20 * s0 + j22 * s2,
            j31 * s1 + j32 * s2,
            j42 * s2,
            j51 * s1,
        ]
    }

    /// The 6×6 local stiffness J·K·Jᵀ (rows and columns: x, y of A, B, C).
    fn local_stiffness(&self) -> [[f64; 6]; 6] {
        let mut out = [[0.0; 6]; 6];
        for (col, o) in (0..6).zip(0..6) {
            let mut d = [0.0; 6];
            d[col] = 1.0;
            let f = self.local_forces(d);
            for (r, v) in f.iter().enumerate() {
                out[r][o] = *v;
            }
        }
        out
    }
}

impl Default for TriangularFemForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl TriangularFemForceField {
    pub fn new() -> Self {
        let data = force_field_data(DataTable::new())
            .with(
                "youngModulus",
                DataKind::Reals(0),
                "5000",
                "Young's modulus in Hooke's law (one value, or one per element)",
            )
            .with(
                "poissonRatio",
                DataKind::Reals(0),
                "0.45",
                "Poisson's ratio in Hooke's law (one value, or one per element)",
            )
            .with(
                "method",
                DataKind::Str,
                "large",
                "large: large displacements (corotational); small is not supported",
            )
            .with(
                "rotatedInitialElements",
                DataKind::Reals(9),
                "",
                "Flag activating rendering of stress directions within each triangle",
            )
            .with(
                "initialTransformation",
                DataKind::Reals(9),
                "",
                "Flag activating rendering of stress directions within each triangle",
            )
            .with(
                "hosfordExponant",
                DataKind::Real,
                "1",
                "Exponant in the Hosford yield criteria",
            )
            .with(
                "criteriaValue",
                DataKind::Real,
                "1e15",
                "Fracturable threshold used to draw fracturable triangles",
            )
            .with(
                "showStressValue",
                DataKind::Bool,
                "1",
                "Flag activating rendering of stress values as a color in each triangle",
            )
            .with(
                "showStressVector",
                DataKind::Bool,
                "0",
                "Flag activating rendering of stress directions within each triangle",
            )
            .with(
                "showFracturableTriangles",
                DataKind::Bool,
                "0",
                "Flag activating rendering of triangles to fracture",
            )
            .with(
                "computePrincipalStress",
                DataKind::Bool,
                "0",
                "Compute principal stress for each triangle",
            )
            .with(
                "topology",
                DataKind::Str,
                "",
                "link to the topology container",
            );
        TriangularFemForceField {
            data,
            tris: Vec::new(),
            rayleigh: 0.0,
            older: false,
        }
    }

    /// TriangleFEMForceField.
    pub fn triangle_fem() -> Self {
        let mut f = Self::new();
        let data = std::mem::take(&mut f.data);
        f.data = data
            .with(
                "thickness",
                DataKind::Real,
                "1",
                "Thickness of the elements",
            )
            .with(
                "planeStrain",
                DataKind::Bool,
                "0",
                "Plane strain or plane stress assumption",
            )
            .with("initialPoints", DataKind::Reals(3), "", "Initial Position");
        f.older = true;
        f
    }

    /// Set up the triangles from rest positions (init and tests).
    pub fn setup(&mut self, rest: &[f64], triangles: &[[u32; 3]]) {
        let e = self.data.reals("youngModulus").to_vec();
        let nu = self.data.reals("poissonRatio").to_vec();
        let e = if e.is_empty() { vec![5000.0] } else { e };
        let nu = if nu.is_empty() { vec![0.45] } else { nu };
        self.tris.clear();
        for (k, t) in triangles.iter().enumerate() {
            let idx = t.map(|i| i as usize);
            let [a, b, c] = idx.map(|i| p3(rest, i));
            let r = rotation_large(a, b, c);
            let (ek, nuk) = (*e.get(k).unwrap_or(&e[0]), *nu.get(k).unwrap_or(&nu[0]));
            let (p1, p2, k00, k01, k22) = if self.older {
                // rotated, then subtracted; material times thickness · area (from the cross
                // product), plane stress or plane strain
                let (ra, rb, rc) = (rot(&r, a), rot(&r, b), rot(&r, c));
                let (p1, p2) = (sub(rb, ra), sub(rc, ra));
                let n = cross(sub(b, a), sub(c, a));
                let v = 0.5 * self.data.real("thickness") * dot(n, n).sqrt();
                if self.data.bool("planeStrain") {
                    let s = (ek / ((1.0 + nuk) * (1.0 - 2.0 * nuk))) * v;
                    (p1, p2, (1.0 - nuk) * s, nuk * s, (0.5 - nuk) * s)
                } else {
                    let s = (ek / (1.0 - nuk * nuk)) * v;
                    (p1, p2, s, nuk * s, 0.5 * (1.0 - nuk) * s)
                }
            } else {
                let p1 = rot(&r, sub(b, a));
                let p2 = rot(&r, sub(c, a));
                let area = p1[0] * p2[1] * 0.5;
                let s = (ek / (1.0 - nuk * nuk)) * area;
                (p1, p2, s, nuk * s, (1.0 - nuk) * 0.5 * s)
            };
            self.tris.push(LargeTri {
                idx,
                p1x: p1[0],
                p2x: p2[0],
                p2y: p2[1],
                k00,
                k01,
                k22,
                r,
                j: LargeTri::j_from(p1[0], p2[0], p2[1]),
            });
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.real("rayleighStiffness");
        self.tris.clear();
        let method = self.data.str("method").trim().to_string();
        if method == "small" {
            ctx.error(
                "method 'small' is not supported (SOFA's version only uses the x and y \
                 coordinates and assembles a zero matrix); use 'large'",
            );
            return;
        }
        if !method.is_empty() && method != "large" {
            ctx.warn(format!(
                "unknown method '{method}'; using 'large' (as SOFA)"
            ));
        }
        if let Some(m) = check_material(
            self.data.reals("youngModulus"),
            self.data.reals("poissonRatio"),
        ) {
            ctx.error(m);
            return;
        }
        let older = self.older;
        let has = if older {
            |m: &canape_core::mesh::Mesh| !m.triangles.is_empty() || !m.quads.is_empty()
        } else {
            |m: &canape_core::mesh::Mesh| !m.triangles.is_empty()
        };
        let Some((rest, mesh)) = fem_inputs(ctx, &self.data, has, "triangles") else {
            return;
        };
        let triangles = if mesh.triangles.is_empty() {
            mesh.quads
                .iter()
                .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
                .collect()
        } else {
            mesh.triangles.clone()
        };
        self.setup(&rest, &triangles);
        let degenerate = self
            .tris
            .iter()
            .filter(|t| !(t.k00 != 0.0 && t.j.iter().all(|v| v.is_finite())))
            .count();
        if degenerate > 0 {
            ctx.error(format!(
                "{degenerate} triangle(s) have no area at rest: their stiffness is undefined"
            ));
            self.tris.clear();
        }
    }
}

impl_component!(
    TriangularFemForceField,
    |s| if s.older {
        "TriangleFEMForceField"
    } else {
        "TriangularFEMForceField"
    },
    init
);

impl ForceField for TriangularFemForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        for t in &mut self.tris {
            let [a, b, c] = t.idx.map(|i| p3(x, i));
            let r = rotation_large(a, b, c);
            let db = rot(&r, sub(b, a));
            let dc = rot(&r, sub(c, a));
            let d = [0.0, 0.0, t.p1x - db[0], 0.0, t.p2x - dc[0], t.p2y - dc[1]];
            t.j = LargeTri::j_from(db[0], dc[0], dc[1]);
            t.r = r;
            let fl = t.local_forces(d);
            for (v, &n) in t.idx.iter().enumerate() {
                let fv = rot_t2(&r, fl[2 * v], fl[2 * v + 1]);
                for c in 0..3 {
                    f[3 * n + c] += fv[c];
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        for t in &self.tris {
            let mut d = [0.0; 6];
            for (v, &n) in t.idx.iter().enumerate() {
                let l = rot(&t.r, p3(dx, n));
                d[2 * v] = l[0];
                d[2 * v + 1] = l[1];
            }
            let fl = t.local_forces(d);
            for (v, &n) in t.idx.iter().enumerate() {
                let fv = rot_t2(&t.r, -fl[2 * v], -fl[2 * v + 1]);
                for c in 0..3 {
                    df[3 * n + c] += fv[c] * k_factor;
                }
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        for t in &self.tris {
            let ke = t.local_stiffness();
            let r = Mat3::from_rows(&[
                nalgebra::RowVector3::new(t.r[0][0], t.r[0][1], t.r[0][2]),
                nalgebra::RowVector3::new(t.r[1][0], t.r[1][1], t.r[1][2]),
                nalgebra::RowVector3::new(t.r[2][0], t.r[2][1], t.r[2][2]),
            ]);
            for i in 0..3 {
                for j in 0..3 {
                    let mut b = Mat3::zeros();
                    for k in 0..2 {
                        for l in 0..2 {
                            b[(k, l)] = ke[2 * i + k][2 * j + l];
                        }
                    }
                    let w = r.transpose() * b * r * (-k_factor);
                    m.add_block3(offset + 3 * t.idx[i], offset + 3 * t.idx[j], &w);
                }
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}

#[cfg(test)]
mod large_tests {
    use super::*;

    fn forces(ff: &mut TriangularFemForceField, x: &[f64]) -> Vec<f64> {
        let mut f = vec![0.0; x.len()];
        ff.add_force(x, &vec![0.0; x.len()], &mut f);
        f
    }

    #[test]
    fn rigid_motion_free_and_plane_stress_under_stretch() {
        let mut ff = TriangularFemForceField::new();
        ff.data.set_str("youngModulus", "1000").unwrap();
        ff.data.set_str("poissonRatio", "0.3").unwrap();
        let rest = vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        ff.setup(&rest, &[[0, 1, 2]]);
        let r = nalgebra::Rotation3::from_euler_angles(-1.1, 0.5, 2.0);
        let moved: Vec<f64> = rest
            .chunks(3)
            .flat_map(|p| {
                let q = r * nalgebra::Vector3::new(p[0], p[1], p[2]);
                [q.x + 3.0, q.y - 1.0, q.z + 0.5]
            })
            .collect();
        assert!(forces(&mut ff, &moved).iter().all(|v| v.abs() < 1e-9));
        // stretched by ε along x: plane stress (σxx = E/(1−ν²)ε, σyy = νσxx), node forces
        // −A·Bᵀσ with the current geometry (J from the current triangle, K from the rest area)
        let eps = 1e-6;
        let x = vec![0.0, 0.0, 0.0, 2.0 * (1.0 + eps), 0.0, 0.0, 0.0, 1.0, 0.0];
        let f = forces(&mut ff, &x);
        // (the current geometry in J makes a relative difference of order ε)
        let sxx = 1000.0 / (1.0 - 0.09) * eps;
        assert!((f[3] + sxx * 0.5).abs() < 1e-5 * sxx, "{f:?}");
        assert!((f[7] + 0.3 * sxx).abs() < 1e-5 * sxx, "{f:?}");
    }

    #[test]
    fn triangle_fem_scales_with_thickness_and_has_plane_strain() {
        let rest = vec![0.0, 0.0, 0.0, 2.0, 0.1, 0.0, 0.3, 1.0, 0.2];
        let x = vec![0.01, 0.0, 0.0, 2.05, 0.1, 0.02, 0.3, 1.01, 0.2];
        let run = |mut ff: TriangularFemForceField| {
            ff.data.set_str("youngModulus", "1000").unwrap();
            ff.data.set_str("poissonRatio", "0.3").unwrap();
            ff.setup(&rest, &[[0, 1, 2]]);
            forces(&mut ff, &x)
        };
        let base = run(TriangularFemForceField::new());
        let mut older = TriangularFemForceField::triangle_fem();
        older.data.set_str("thickness", "2").unwrap();
        let thick = run(older);
        for (a, b) in thick.iter().zip(&base) {
            assert!(
                (a - 2.0 * b).abs() < 1e-10 * b.abs().max(1e-6),
                "{thick:?} vs {base:?}"
            );
        }
        // plane strain is stiffer than plane stress for ν > 0 (E/((1+ν)(1−2ν)) > E/(1−ν²))
        let mut strain = TriangularFemForceField::triangle_fem();
        strain.data.set_str("planeStrain", "1").unwrap();
        let ps = run(strain);
        let n = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(n(&ps) > n(&base), "{} vs {}", n(&ps), n(&base));
    }

    #[test]
    fn dforce_matrix_and_finite_differences_agree_at_rest() {
        let r = nalgebra::Rotation3::from_euler_angles(0.4, -0.3, 0.9);
        let pts = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.2, 0.9, 0.0],
            [-0.1, 1.1, 0.0],
        ];
        let mut rest = Vec::new();
        for p in pts {
            let q = r * nalgebra::Vector3::new(p[0], p[1], p[2]);
            rest.extend([q.x, q.y, q.z]);
        }
        let mut ff = TriangularFemForceField::new();
        ff.data.set_str("youngModulus", "700").unwrap();
        ff.data.set_str("poissonRatio", "0.35").unwrap();
        ff.setup(&rest, &[[0, 1, 2], [0, 2, 3]]);
        let n = rest.len();
        let _ = forces(&mut ff, &rest);
        let mut tr = canape_core::matrix::Triplets::new(n);
        ff.add_k_to_matrix(&mut tr, 1.0, 0);
        let mut dense = vec![vec![0.0; n]; n];
        for &(r, c, v) in &tr.entries {
            dense[r as usize][c as usize] += v;
        }
        let h = 1e-6;
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            let mut col = vec![0.0; n];
            ff.add_dforce(&e, &mut col, 1.0);
            let mut xp = rest.clone();
            xp[j] += h;
            let mut xm = rest.clone();
            xm[j] -= h;
            let fp = forces(&mut ff, &xp);
            let fm = forces(&mut ff, &xm);
            let _ = forces(&mut ff, &rest);
            for i in 0..n {
                let fd = (fp[i] - fm[i]) / (2.0 * h);
                assert!(
                    (col[i] - fd).abs() < 1e-5 * 700.0,
                    "dforce ({i},{j}) {} vs {fd}",
                    col[i]
                );
                assert!(
                    (dense[i][j] - col[i]).abs() < 1e-9 * 700.0,
                    "matrix ({i},{j})"
                );
            }
        }
    }
}
