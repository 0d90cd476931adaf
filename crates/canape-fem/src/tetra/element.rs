//! One tetrahedron's math (SOFA's TetrahedronFEMForceField.inl): the strain-displacement
//! coefficients, the element force J·M·Jᵀ·D, the 3×3 stiffness blocks, the "large" and edge
//! frames, and SOFA's strain plasticity.

use crate::common::Material;
use canape_types::{Mat3, Vec3};

/// SOFA's strain plasticity (TetrahedronFEMForceField.inl `computeForce`): at each force
/// evaluation, when the elastic strain (total JᵀD minus the plastic one) exceeds the yield
/// threshold, `creep` times it moves into the plastic strain, which is then capped at the max
/// threshold; the force comes from the remaining elastic strain. The strains are SOFA's JᵀD
/// (unscaled strain-displacement coefficients), so the thresholds mean what they mean in SOFA.
#[derive(Clone, Debug)]
pub(super) struct Plasticity {
    pub(super) yield_threshold: f64,
    pub(super) max_threshold: f64,
    pub(super) creep: f64,
    pub(super) strains: Vec<[f64; 6]>,
}

impl Plasticity {
    /// Update element `e`'s plastic strain from the total strain `s`; returns the elastic strain.
    pub(super) fn elastic(&mut self, e: usize, s: [f64; 6]) -> [f64; 6] {
        let p = &mut self.strains[e];
        let el: [f64; 6] = std::array::from_fn(|k| s[k] - p[k]);
        if el.iter().map(|v| v * v).sum::<f64>() > self.yield_threshold * self.yield_threshold {
            for k in 0..6 {
                p[k] += self.creep * el[k];
            }
        }
        let n2: f64 = p.iter().map(|v| v * v).sum();
        if n2 > self.max_threshold * self.max_threshold {
            let f = self.max_threshold / n2.sqrt();
            p.iter_mut().for_each(|v| *v *= f);
        }
        std::array::from_fn(|k| s[k] - p[k])
    }
}

fn pd(p: &Vec3, q: &Vec3, r: &Vec3, s: usize, t: usize) -> f64 {
    q[s] * r[t] - q[t] * r[s] - p[s] * r[t] + p[t] * r[s] + p[s] * q[t] - p[t] * q[s]
}

/// SOFA's strain-displacement coefficients for points a, b, c, d.
pub fn gradients(a: &Vec3, b: &Vec3, c: &Vec3, d: &Vec3) -> [[f64; 3]; 4] {
    let tri = [
        (b, c, d, -1.0),
        (c, d, a, 1.0),
        (d, a, b, -1.0),
        (a, b, c, 1.0),
    ];
    let mut g = [[0.0; 3]; 4];
    for (k, (p, q, r, sg)) in tri.iter().enumerate() {
        g[k] = [
            sg * pd(p, q, r, 1, 2),
            -sg * pd(p, q, r, 0, 2),
            sg * pd(p, q, r, 0, 1),
        ];
    }
    g
}

/// F = J · M · Jᵀ · D for one element (12-vectors).
#[inline(always)]
pub(super) fn kernel(g: &[[f64; 3]; 4], m: &Material, d: &[f64; 12]) -> [f64; 12] {
    kernel_with(g, m, d, |s| s)
}

/// [`kernel`] with the strain passed through `strain` (plasticity) before the material.
#[inline(always)]
pub(super) fn kernel_with(
    g: &[[f64; 3]; 4],
    m: &Material,
    d: &[f64; 12],
    strain: impl FnOnce([f64; 6]) -> [f64; 6],
) -> [f64; 12] {
    let mut s = [0.0; 6];
    for k in 0..4 {
        let [gx, gy, gz] = g[k];
        let (dx, dy, dz) = (d[3 * k], d[3 * k + 1], d[3 * k + 2]);
        s[0] += gx * dx;
        s[1] += gy * dy;
        s[2] += gz * dz;
        s[3] += gy * dx + gx * dy;
        s[4] += gz * dy + gy * dz;
        s[5] += gz * dx + gx * dz;
    }
    let s = strain(s);
    let t = m.apply(&s);
    let mut f = [0.0; 12];
    for k in 0..4 {
        let [gx, gy, gz] = g[k];
        f[3 * k] = gx * t[0] + gy * t[3] + gz * t[5];
        f[3 * k + 1] = gy * t[1] + gx * t[3] + gz * t[4];
        f[3 * k + 2] = gz * t[2] + gy * t[4] + gx * t[5];
    }
    f
}

/// Block (v, w) of J M Jᵀ for node gradients `a` (node v) and `b` (node w): the force on v per
/// displacement of w, M isotropic in Voigt form (engineering shear strains, as in `kernel`).
#[inline(always)]
pub(super) fn stiffness_block(a: &[f64; 3], b: &[f64; 3], m: &Material) -> Mat3 {
    let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    Mat3::from_fn(|i, j| {
        if i == j {
            m.diag * (a[i] * b[i]) + m.shear * (dot - a[i] * b[i])
        } else {
            m.off * (a[i] * b[j]) + m.shear * (a[j] * b[i])
        }
    })
}

/// Triangle frame of SOFA's "large" method: rows x = (b−a)/|b−a|, z = x × (c−a) normalised, y = z × x.
pub fn rotation_large(a: &Vec3, b: &Vec3, c: &Vec3) -> Mat3 {
    let ex = (b - a).normalize();
    let ey = c - a;
    let ez = ex.cross(&ey).normalize();
    let ey = ez.cross(&ex);
    Mat3::from_rows(&[ex.transpose(), ey.transpose(), ez.transpose()])
}

pub(super) fn edge_matrix(p: &[Vec3; 4]) -> Mat3 {
    Mat3::from_rows(&[
        (p[1] - p[0]).transpose(),
        (p[2] - p[0]).transpose(),
        (p[3] - p[0]).transpose(),
    ])
}
