//! QuadBendingFEMForceField, as SOFA's
//! Sofa/Component/SolidMechanics/FEM/Elastic/.../QuadBendingFEMForceField.inl computes it.
//!
//! Despite the name, what reaches the motion is: a bilinear plane-stress membrane stiffness
//! (2×2 Gauss points, thickness in the material) on the global x and y displacements, and a
//! one-point transverse-shear stiffness on the global z displacement. SOFA's element carries
//! rotation DOFs that are always zero and drops its moments, so its plate-bending constants
//! never act; it uses no local frame (the element's axes are its edges 0→1 and 0→3, applied to
//! global x and y as they are) and rebuilds its stiffness from the current positions at every
//! call. This follows it, in its order of operations. The assembled matrix here is the one
//! `add_dforce` applies (SOFA's buildStiffnessMatrix picks wrong 3×3 blocks of its 5-DOF matrix;
//! its scene uses a matrix-free solver).

use crate::common::{check_material, fem_inputs};
use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable, ForceFieldData, Real, Reals, Text};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::Mat3;

type V3 = [f64; 3];

#[inline(always)]
fn p3(x: &[f64], i: usize) -> V3 {
    [x[3 * i], x[3 * i + 1], x[3 * i + 2]]
}

/// Node signs (m, n) of the rectangle's corners.
const SIGNS: [(f64, f64); 4] = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];

#[derive(Clone, Copy, Debug)]
struct Quad {
    idx: [usize; 4],
    /// Rest positions relative to the midpoint of the 0–2 diagonal.
    r: [V3; 4],
    /// Membrane material (thickness included): C00 = C11, C01, C22; shear C66 = C77.
    c00: f64,
    c01: f64,
    c22: f64,
    c66: f64,
    /// From the last `add_force`: membrane stiffness (u, v of node i) × (u, v of node j) and
    /// the z stiffness.
    kb: [[[f64; 4]; 4]; 4],
    kw: [[f64; 4]; 4],
}

impl Quad {
    /// The stiffness at positions `x` (SOFA's computeElementStiffness, the parts that act).
    fn stiffness(&mut self, x: &[f64]) {
        let p: [V3; 4] = self.idx.map(|i| p3(x, i));
        let half = |a: V3, b: V3| {
            let v = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
            (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() / 2.0
        };
        let (l, h) = (half(p[0], p[1]), half(p[0], p[3]));
        let area = l * h;
        let s = 3.0f64.sqrt() / 3.0;
        let gauss = [(s, s), (-s, s), (s, -s), (-s, -s)];
        let mut kb = [[[0.0; 4]; 4]; 4];
        for (gi, &(g1, g2)) in gauss.iter().enumerate() {
            let bx: [f64; 4] = std::array::from_fn(|k| {
                let (m, n) = SIGNS[k];
                (m * (1.0 + n * g2)) / (4.0 * l)
            });
            let by: [f64; 4] = std::array::from_fn(|k| {
                let (m, n) = SIGNS[k];
                (n * (1.0 + m * g1)) / (4.0 * h)
            });
            for i in 0..4 {
                for j in 0..4 {
                    let e = [
                        area * ((bx[i] * self.c00) * bx[j] + (by[i] * self.c22) * by[j]) * 1.0,
                        area * ((bx[i] * self.c01) * by[j] + (by[i] * self.c22) * bx[j]) * 1.0,
                        area * ((by[i] * self.c01) * bx[j] + (bx[i] * self.c22) * by[j]) * 1.0,
                        area * ((by[i] * self.c00) * by[j] + (bx[i] * self.c22) * bx[j]) * 1.0,
                    ];
                    for (c, v) in e.iter().enumerate() {
                        // ((Kb0 + Kb1) + Kb2) + Kb3
                        kb[i][j][c] = if gi == 0 { *v } else { kb[i][j][c] + v };
                    }
                }
            }
        }
        let ax: [f64; 4] = std::array::from_fn(|k| SIGNS[k].0 / (4.0 * l));
        let ay: [f64; 4] = std::array::from_fn(|k| SIGNS[k].1 / (4.0 * h));
        for i in 0..4 {
            for j in 0..4 {
                self.kw[i][j] =
                    area * ((ax[i] * self.c66) * ax[j] + (ay[i] * self.c66) * ay[j]) * 2.0 * 2.0;
            }
        }
        self.kb = kb;
    }

    /// K·D for displacements `d` (per node: x, y, z), in SOFA's summation order.
    fn apply(&self, d: &[V3; 4]) -> [V3; 4] {
        std::array::from_fn(|k| {
            let mut fu = 0.0;
            let mut fv = 0.0;
            let mut fw = 0.0;
            for j in 0..4 {
                let e = &self.kb[k][j];
                fu = fu + e[0] * d[j][0] + e[1] * d[j][1];
                fv = fv + e[2] * d[j][0] + e[3] * d[j][1];
                fw += self.kw[k][j] * d[j][2];
            }
            [fu, fv, fw]
        })
    }
}

canape_core::data_schema! {
    /// QuadBendingFEMForceField's own Data (after the force-field Data).
    struct QuadBendingData {
        method: Text = ("method", DataKind::Str, "small", "small (SOFA's only method; the value is not read)"),
        poisson: Reals = ("poissonRatio", DataKind::Reals(0), "0.45", "Poisson ratio in Hooke's law (vector)"),
        young: Reals = ("youngModulus", DataKind::Reals(0), "1000", "Young modulus in Hooke's law (vector)"),
        thickness: Real = ("thickness", DataKind::Real, "1", "Thickness of the elements"),
    }
}

#[derive(Clone)]
pub struct QuadBendingFemForceField {
    data: DataTable,
    /// Typed handles to the own Data in `data` (after the force-field Data).
    d: QuadBendingData,
    quads: Vec<Quad>,
}

impl Default for QuadBendingFemForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl QuadBendingFemForceField {
    pub fn new() -> Self {
        let (data, _) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = QuadBendingData::declare(data);
        QuadBendingFemForceField {
            data,
            d,
            quads: Vec::new(),
        }
    }

    /// Set up the quads from rest positions (init and tests).
    pub fn setup(&mut self, rest: &[f64], quads: &[[u32; 4]]) {
        let or = |v: &[f64], d: f64| if v.is_empty() { vec![d] } else { v.to_vec() };
        let e = or(self.data.get(self.d.young), 1000.0);
        let nu = or(self.data.get(self.d.poisson), 0.45);
        let t = self.data.get(self.d.thickness);
        self.quads = quads
            .iter()
            .enumerate()
            .map(|(k, q)| {
                let idx = q.map(|i| i as usize);
                let p: [V3; 4] = idx.map(|i| p3(rest, i));
                let c: V3 = std::array::from_fn(|d| (p[0][d] + p[2][d]) / 2.0);
                let r = p.map(|x| [x[0] - c[0], x[1] - c[1], x[2] - c[2]]);
                let (y, pr) = (*e.get(k).unwrap_or(&e[0]), *nu.get(k).unwrap_or(&nu[0]));
                Quad {
                    idx,
                    r,
                    c00: (y * t) / (1.0 - pr * pr),
                    c01: ((pr * y) * t) / (1.0 - pr * pr),
                    c22: ((y * t) * (1.0 - pr)) / (2.0 - (2.0 * pr) * pr),
                    c66: (((5.0 / 6.0) * y) * t) / (2.0 + 2.0 * pr),
                    kb: [[[0.0; 4]; 4]; 4],
                    kw: [[0.0; 4]; 4],
                }
            })
            .collect();
        for q in &mut self.quads {
            q.stiffness(rest);
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.quads.clear();
        if let Some(m) = check_material(self.data.get(self.d.young), self.data.get(self.d.poisson))
        {
            ctx.error(m);
            return;
        }
        let Some((rest, mesh)) = fem_inputs(ctx, &self.data, |m| !m.quads.is_empty(), "quads")
        else {
            return;
        };
        self.setup(&rest, &mesh.quads);
        if self
            .quads
            .iter()
            .any(|q| !q.kb.iter().flatten().flatten().all(|v| v.is_finite()))
        {
            ctx.error(
                "a quad has a zero-length edge 0-1 or 0-3 at rest: its stiffness is undefined",
            );
            self.quads.clear();
        }
    }
}

impl_component!(QuadBendingFemForceField, "QuadBendingFEMForceField", init);

impl ForceField for QuadBendingFemForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        for q in &mut self.quads {
            q.stiffness(x);
            let p: [V3; 4] = q.idx.map(|i| p3(x, i));
            let c: V3 = std::array::from_fn(|d| (p[0][d] + p[2][d]) / 2.0);
            let d: [V3; 4] =
                std::array::from_fn(|k| std::array::from_fn(|e| q.r[k][e] - (p[k][e] - c[e])));
            let fk = q.apply(&d);
            for (k, &n) in q.idx.iter().enumerate() {
                for e in 0..3 {
                    f[3 * n + e] += fk[k][e];
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        for q in &self.quads {
            let d: [V3; 4] = q.idx.map(|i| p3(dx, i));
            let fk = q.apply(&d);
            for (k, &n) in q.idx.iter().enumerate() {
                for e in 0..3 {
                    df[3 * n + e] += -fk[k][e] * k_factor;
                }
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        for q in &self.quads {
            for i in 0..4 {
                for j in 0..4 {
                    let e = &q.kb[i][j];
                    let b = Mat3::new(
                        e[0], e[1], 0.0, //
                        e[2], e[3], 0.0, //
                        0.0, 0.0, q.kw[i][j],
                    ) * (-k_factor);
                    m.add_block3(offset + 3 * q.idx[i], offset + 3 * q.idx[j], &b);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> QuadBendingFemForceField {
        let mut ff = QuadBendingFemForceField::new();
        ff.data.set_str("youngModulus", "1000").unwrap();
        ff.data.set_str("poissonRatio", "0.3").unwrap();
        ff.data.set_str("thickness", "0.1").unwrap();
        ff
    }

    #[test]
    fn membrane_stretch_is_plane_stress_and_translations_are_free() {
        // a 2 × 1 rectangle in the xy plane stretched by ε along x: σxx = E/(1−ν²)·ε, the
        // nodal forces on the far edge t·σxx·(edge length)/2 each
        let rest = [0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0, 1.0, 0.0];
        let mut ff = unit();
        ff.setup(&rest, &[[0, 1, 2, 3]]);
        let eps = 1e-3;
        let x: Vec<f64> = rest
            .chunks(3)
            .flat_map(|p| [p[0] * (1.0 + eps), p[1], p[2]])
            .collect();
        let mut f = vec![0.0; 12];
        ff.add_force(&x, &[0.0; 12], &mut f);
        let fx = 0.1 * 1000.0 / (1.0 - 0.09) * eps * 1.0 / 2.0;
        // the element's size is taken from the current positions: a relative difference of ε
        assert!((f[3] + fx).abs() < 2e-3 * fx, "{f:?}");
        assert!((f[6] + fx).abs() < 2e-3 * fx, "{f:?}");
        assert!((f[0] - fx).abs() < 2e-3 * fx, "{f:?}");
        // a translation: no force
        let moved: Vec<f64> = rest
            .chunks(3)
            .flat_map(|p| [p[0] + 0.3, p[1] - 2.0, p[2] + 5.0])
            .collect();
        let mut f = vec![0.0; 12];
        ff.add_force(&moved, &[0.0; 12], &mut f);
        assert!(f.iter().all(|v| v.abs() < 1e-9), "{f:?}");
    }

    #[test]
    fn dforce_is_minus_the_force_difference_and_the_assembled_matrix() {
        let rest = [0.0, 0.0, 0.0, 1.5, 0.1, 0.0, 1.4, 1.2, 0.2, -0.1, 1.0, 0.1];
        let mut ff = unit();
        ff.setup(&rest, &[[0, 1, 2, 3]]);
        let mut f0 = vec![0.0; 12];
        ff.add_force(&rest, &[0.0; 12], &mut f0);
        let dx: Vec<f64> = (0..12).map(|i| ((i * 5) % 7) as f64 * 1e-7).collect();
        let mut df = vec![0.0; 12];
        ff.add_dforce(&dx, &mut df, 1.0);
        let mut tr = canape_core::matrix::Triplets::new(12);
        ff.add_k_to_matrix(&mut tr, 1.0, 0);
        let mut k = vec![vec![0.0; 12]; 12];
        for &(r, c, v) in &tr.entries {
            k[r as usize][c as usize] += v;
        }
        for i in 0..12 {
            let kd: f64 = (0..12).map(|j| k[i][j] * dx[j]).sum();
            assert!((kd - df[i]).abs() < 1e-12, "{i}");
        }
        // at rest the stiffness is the derivative of the force (to first order)
        let x1: Vec<f64> = rest.iter().zip(&dx).map(|(a, b)| a + b).collect();
        let mut f1 = vec![0.0; 12];
        ff.add_force(&x1, &[0.0; 12], &mut f1);
        for i in 0..12 {
            assert!(
                ((f1[i] - f0[i]) - df[i]).abs() < 1e-9,
                "{i}: {} vs {}",
                f1[i] - f0[i],
                df[i]
            );
        }
    }
}
