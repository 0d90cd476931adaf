//! TriangularBiquadraticSpringsForceField: membrane triangles as springs on the squared edge
//! lengths, following SOFA's
//! Sofa/Component/SolidMechanics/Spring/.../TriangularBiquadraticSpringsForceField.inl.
//!
//! Each edge e carries ΔL²ₑ = |pₐ − p_b|² − L²ₑ,rest (plus `dampingRatio`·(Δv·Δp)/|Δp|²) and a
//! stiffness sₑ summed over its triangles, s = (2·cot²·(λ+μ) + μ)/(16·A) per triangle (A the
//! rest area, cot the cotangent of the angle opposite the edge, λ and μ the plane Lamé
//! coefficients Eν/(1−ν²), E(1−ν)/(1−ν²)); the edge force on its ends is ∓sₑ·ΔL²ₑ·(pₐ − p_b).
//! With `useAngularSprings`, each triangle couples its edges pairwise with the angular
//! stiffness γ = (2·cotₖ·cotₗ·(λ+μ) − μ)/(16·A); with `compressible` as well, a triangle whose
//! area fell below its rest area (J = A/A_rest < 1) is pushed back along its area gradient with
//! 3(λ+μ)(J−1)³, with SOFA's handling of nearly flat and flipped triangles (the last valid
//! normal is kept).
//!
//! `add_dforce` applies SOFA's per-edge blocks, built at the first product after each
//! `add_force`. Without compression they are the exact derivative of the forces without
//! damping; for compressed triangles SOFA's area tangent blends the exact term with a multiple
//! of the identity, weighted by 1 − J (its `matrixRegularization` Data is declared but unused,
//! here too). Two departures where SOFA reads values it never computed: without angular springs
//! SOFA's blocks use edge vectors it only fills with angular springs (zero, dropping the
//! dp·dpᵀ term), here they are the current ones (the exact derivative); and the compression
//! tangent is added only when the last `add_force` applied the compression force (SOFA tests a
//! J it never sets without angular springs). SOFA has no addKToMatrix for this class: the force field is matrix-free, and
//! contributes nothing to an assembled matrix. Runtime messages of SOFA (flipped triangles) are
//! not reported.

use crate::edge_triangles::{add_at, at, heron, init_inputs, lame_2d, EdgeTriangles};
use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable, Flag, ForceFieldData, Real, Reals};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{DataTypes, Mat3, Vec3, Vec3Types};

#[derive(Clone, Copy, Debug, Default)]
struct EdgeInfo {
    rest_sq: f64,
    stiffness: f64,
    current_sq: f64,
    delta_l2: f64,
}

#[derive(Clone, Copy, Debug)]
struct TriInfo {
    gamma: [f64; 3],
    stiffness: [f64; 3],
    rest_area: f64,
    /// From the last `add_force`.
    area: f64,
    j: f64,
    normal: Vec3,
    last_valid_normal: Vec3,
    area_vector: [Vec3; 3],
    /// dp[j] = p[j+2] − p[j+1].
    dp: [Vec3; 3],
    /// Whether the last `add_force` applied the compression force.
    compressed: bool,
    /// Block of edge k (opposite vertex k), built at the first product after `add_force`.
    dfdx: [Mat3; 3],
}

canape_core::data_schema! {
    /// TriangularBiquadraticSpringsForceField's own Data (after the force-field Data).
    struct BiquadraticSpringsData {
        initial_points: Reals = ("initialPoints", DataKind::Reals(3), "", "Initial Position"),
        poisson: Real = ("poissonRatio", DataKind::Real, "0.3", "Poisson ratio in Hooke's law"),
        young: Real = ("youngModulus", DataKind::Real, "1000", "Young modulus in Hooke's law"),
        damping_ratio: Real = ("dampingRatio", DataKind::Real, "0", "Ratio damping/stiffness"),
        use_angular_springs: Flag = ("useAngularSprings", DataKind::Bool, "1", "If Angular Springs should be used or not"),
        compressible: Flag = ("compressible", DataKind::Bool, "1", "If additional energy penalizing compressibility should be used"),
        matrix_regularization: Real = ("matrixRegularization", DataKind::Real, "0.4", "Regularization of the Stiffnes Matrix (between 0 and 1)"),
    }
}

#[derive(Clone)]
pub struct TriangularBiquadraticSpringsForceField {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: BiquadraticSpringsData,
    topo: EdgeTriangles,
    edges: Vec<EdgeInfo>,
    tris: Vec<TriInfo>,
    lambda: f64,
    mu: f64,
    damping_ratio: f64,
    angular: bool,
    compressible: bool,
    update_matrix: bool,
    rayleigh: f64,
}

impl Default for TriangularBiquadraticSpringsForceField {
    fn default() -> Self {
        Self::new()
    }
}

/// SOFA's `m += ` skew part of the area tangent: row u, column v gets ε·d with the signs of
/// the matrix −[d]ₓ.
fn minus_cross_matrix(d: Vec3) -> Mat3 {
    Mat3::new(0.0, d.z, -d.y, -d.z, 0.0, d.x, d.y, -d.x, 0.0)
}

impl TriangularBiquadraticSpringsForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = BiquadraticSpringsData::declare(data);
        TriangularBiquadraticSpringsForceField {
            data,
            ff,
            d,
            topo: EdgeTriangles::default(),
            edges: Vec::new(),
            tris: Vec::new(),
            lambda: 0.0,
            mu: 0.0,
            damping_ratio: 0.0,
            angular: true,
            compressible: true,
            update_matrix: true,
            rayleigh: 0.0,
        }
    }

    /// The rest state (SOFA's applyEdgeCreation then applyTriangleCreation for every element).
    fn setup(&mut self, rest: &[[f64; 3]], topo: EdgeTriangles) {
        (self.lambda, self.mu) =
            lame_2d(self.data.get(self.d.young), self.data.get(self.d.poisson));
        self.damping_ratio = self.data.get(self.d.damping_ratio);
        self.angular = self.data.get(self.d.use_angular_springs);
        self.compressible = self.data.get(self.d.compressible);
        let (lambda, mu) = (self.lambda, self.mu);
        self.edges = topo
            .edges
            .iter()
            .map(|e| EdgeInfo {
                rest_sq: (at(rest, e[0]) - at(rest, e[1])).norm_squared(),
                ..EdgeInfo::default()
            })
            .collect();
        self.tris.clear();
        for (t, te) in topo.triangles.iter().zip(&topo.edges_in_triangle) {
            let sq = te.map(|e| self.edges[e].rest_sq);
            let (area, cot) = heron(sq);
            let [p0, p1, p2] = t.map(|i| at(rest, i));
            let normal = (p1 - p0).cross(&(p2 - p0)) / (2.0 * area);
            let mut info = TriInfo {
                gamma: [0.0; 3],
                stiffness: [0.0; 3],
                rest_area: area,
                area,
                j: 1.0,
                normal,
                last_valid_normal: normal,
                area_vector: [Vec3::zeros(); 3],
                dp: [Vec3::zeros(); 3],
                compressed: false,
                dfdx: [Mat3::zeros(); 3],
            };
            for j in 0..3 {
                let (k, l) = ((j + 1) % 3, (j + 2) % 3);
                info.gamma[j] = (2.0 * cot[k] * cot[l] * (lambda + mu) - mu) / (16.0 * area);
                info.stiffness[j] = (2.0 * cot[j] * cot[j] * (lambda + mu) + mu) / (16.0 * area);
                self.edges[te[j]].stiffness += info.stiffness[j];
            }
            self.tris.push(info);
        }
        self.topo = topo;
        self.update_matrix = true;
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        self.edges.clear();
        self.tris.clear();
        self.topo = EdgeTriangles::default();
        let Some((rest, topo)) = init_inputs(
            ctx,
            &self.data,
            self.data.get(self.d.young),
            self.data.get(self.d.poisson),
        ) else {
            return;
        };
        self.setup(&rest, topo);
    }

    /// SOFA's per-edge blocks from the state of the last `add_force`.
    fn update_blocks(&mut self) {
        let area_stiffness = (self.lambda + self.mu) * 3.0;
        for (tinfo, tea) in self.tris.iter_mut().zip(&self.topo.edges_in_triangle) {
            let dl2 = tea.map(|e| self.edges[e].delta_l2);
            for k in 0..3 {
                let dpk = -tinfo.dp[k];
                let v2 = -2.0 * tinfo.stiffness[k];
                tinfo.dfdx[k] = if self.angular {
                    let (i, j) = ((k + 1) % 3, (k + 2) % 3);
                    let dpj = tinfo.dp[j];
                    let dpi = -tinfo.dp[i];
                    let v1 = -(tinfo.stiffness[k] * dl2[k]
                        + tinfo.gamma[i] * dl2[j]
                        + tinfo.gamma[j] * dl2[i]);
                    let (vk, vi, vj) = (
                        2.0 * tinfo.gamma[k],
                        2.0 * tinfo.gamma[i],
                        2.0 * tinfo.gamma[j],
                    );
                    dpk * dpk.transpose() * v2 + dpj * dpi.transpose() * vk
                        - dpj * dpk.transpose() * vi
                        + dpk * dpi.transpose() * vj
                        + Mat3::from_diagonal_element(v1)
                } else {
                    let v1 = -tinfo.stiffness[k] * dl2[k];
                    dpk * dpk.transpose() * v2 + Mat3::from_diagonal_element(v1)
                };
            }
            // SOFA tests the last J; here only when the force used it (SOFA's J is unset
            // without angular springs)
            if tinfo.compressed {
                let jj = tinfo.j - 1.0;
                let h = -jj;
                let val2 = 3.0 * area_stiffness * jj * jj / tinfo.rest_area;
                let half = area_stiffness * jj * jj * jj / 2.0;
                let skew = minus_cross_matrix(-tinfo.normal * half);
                let m1 = tinfo.normal * tinfo.normal.transpose() * (half / (2.0 * tinfo.area));
                let sq = tea.map(|e| self.edges[e].current_sq);
                let total = sq[0] + sq[1] + sq[2];
                for k in 0..3 {
                    let dpi = tinfo.area_vector[(k + 1) % 3];
                    let dpj = tinfo.area_vector[(k + 2) % 3];
                    let trace = dpi.dot(&dpj);
                    tinfo.dfdx[k] += skew
                        + dpi * dpj.transpose() * ((1.0 - h) * val2)
                        + m1 * (total - 2.0 * sq[k])
                        + Mat3::from_diagonal_element(h * val2 * trace);
                }
            }
        }
    }
}

impl_component!(
    TriangularBiquadraticSpringsForceField,
    "TriangularBiquadraticSpringsForceField",
    init
);

impl ForceField for TriangularBiquadraticSpringsForceField {
    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]) {
        let x = Vec3Types::coords(x);
        let v = Vec3Types::derivs(v);
        let f = Vec3Types::derivs_mut(f);
        if self.topo.nb_points > x.len().min(f.len()) {
            return;
        }
        let with_v = v.len() == x.len();
        for (e, info) in self.topo.edges.iter().zip(self.edges.iter_mut()) {
            let dp = at(x, e[0]) - at(x, e[1]);
            let l = dp.norm_squared();
            info.current_sq = l;
            info.delta_l2 = l - info.rest_sq;
            // SOFA divides by the squared length: 0/0 for a zero-length edge, left out here
            if with_v && self.damping_ratio != 0.0 && l > 0.0 {
                let dv = at(v, e[0]) - at(v, e[1]);
                info.delta_l2 += self.damping_ratio * dv.dot(&dp) / l;
            }
            let force = dp * (info.stiffness * info.delta_l2);
            add_at(f, e[1], force);
            add_at(f, e[0], -force);
        }
        if !self.angular {
            // SOFA fills dp only with angular springs, and its product then reads the zeros
            // it started with (losing the edges' dp·dpᵀ term); here dp is always current, so
            // that the product is the forces' derivative
            for (t, tinfo) in self.topo.triangles.iter().zip(self.tris.iter_mut()) {
                for j in 0..3 {
                    tinfo.dp[j] = at(x, t[(j + 2) % 3]) - at(x, t[(j + 1) % 3]);
                }
                tinfo.compressed = false;
            }
            self.update_matrix = true;
            return;
        }
        let area_stiffness = (self.lambda + self.mu) * 3.0;
        for ((t, tea), tinfo) in self
            .topo
            .triangles
            .iter()
            .zip(&self.topo.edges_in_triangle)
            .zip(self.tris.iter_mut())
        {
            for j in 0..3 {
                let (k, l) = ((j + 1) % 3, (j + 2) % 3);
                tinfo.dp[j] = at(x, t[l]) - at(x, t[k]);
                let force = -tinfo.dp[j]
                    * (self.edges[tea[k]].delta_l2 * tinfo.gamma[l]
                        + self.edges[tea[l]].delta_l2 * tinfo.gamma[k]);
                add_at(f, t[l], force);
                add_at(f, t[k], -force);
            }
            tinfo.compressed = false;
            if !self.compressible {
                continue;
            }
            tinfo.normal = -tinfo.dp[2].cross(&tinfo.dp[1]);
            tinfo.area = tinfo.normal.norm() / 2.0;
            tinfo.j = tinfo.area / tinfo.rest_area;
            if tinfo.j >= 1.0 {
                continue;
            }
            // compressed: push back along the area gradient
            tinfo.compressed = true;
            let jj = tinfo.j - 1.0;
            if tinfo.j < 1e-2 {
                // too flat for a reliable normal: keep the last valid one
                tinfo.normal = tinfo.last_valid_normal;
            } else {
                tinfo.normal /= 2.0 * tinfo.area;
                if tinfo.normal.dot(&tinfo.last_valid_normal) > -0.5 {
                    tinfo.last_valid_normal = tinfo.normal;
                } else {
                    // flipped
                    tinfo.normal *= -1.0;
                }
            }
            let val = area_stiffness * jj * jj * jj;
            for j in 0..3 {
                tinfo.area_vector[j] = tinfo.normal.cross(&tinfo.dp[j]) / 2.0;
                add_at(f, t[j], -tinfo.area_vector[j] * val);
            }
        }
        self.update_matrix = true;
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let dx = Vec3Types::derivs(dx);
        let df = Vec3Types::derivs_mut(df);
        if self.topo.nb_points > dx.len().min(df.len()) {
            return;
        }
        if self.update_matrix {
            self.update_matrix = false;
            self.update_blocks();
        }
        crate::edge_triangles::add_edge_block_products(
            &self.topo.triangles,
            self.tris.iter().map(|t| &t.dfdx),
            dx,
            df,
            k_factor,
        );
    }

    /// SOFA has no stiffness matrix for this class (matrix-free only): nothing is added.
    fn add_k_to_matrix(&self, _m: &mut dyn MatrixSink, _k_factor: f64, _offset: usize) {}

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge_triangles::test_support::{grid, init};
    use crate::fd_check::{dforce_error, forces};

    fn ff(
        rest: &[f64],
        tris: &[[u32; 3]],
        set: &[(&str, &str)],
    ) -> TriangularBiquadraticSpringsForceField {
        let mut ff = TriangularBiquadraticSpringsForceField::new();
        for (k, v) in set {
            ff.data.set_str(k, v).unwrap();
        }
        let d = init(&mut ff, rest, tris);
        assert!(!d.has_errors(), "{d:?}");
        ff
    }

    #[test]
    fn no_force_at_rest_nor_after_a_rigid_motion() {
        let (rest, tris) = grid();
        let mut f = ff(
            &rest,
            &tris,
            &[("youngModulus", "15"), ("poissonRatio", "0.9")],
        );
        for x in [rest.clone(), crate::fd_check::rigidly_moved(&rest)] {
            let fx = forces(&mut f, &x);
            assert!(fx.iter().all(|v| v.abs() < 1e-10), "{fx:?}");
        }
    }

    /// Without compressed triangles (stretched states, or `compressible` off) SOFA's blocks
    /// are the exact derivative of the forces, with and without angular springs.
    #[test]
    fn tangent_matches_finite_differences_when_not_compressed() {
        let (rest, tris) = grid();
        let stretched: Vec<f64> = rest
            .iter()
            .enumerate()
            .map(|(k, p)| p * 1.2 + 0.03 * ((7 * k) % 5) as f64)
            .collect();
        for angular in ["1", "0"] {
            let mut f = ff(&rest, &tris, &[("useAngularSprings", angular)]);
            let err = dforce_error(&mut f, &stretched, 11);
            assert!(err < 1e-6, "angular {angular}: {err:e}");
        }
        let squeezed: Vec<f64> = rest.iter().map(|p| p * 0.8).collect();
        let mut f = ff(&rest, &tris, &[("compressible", "0")]);
        assert!(dforce_error(&mut f, &squeezed, 12) < 1e-6);
    }

    /// Compressed triangles: SOFA's regularised area tangent (the blend with the identity
    /// weighted by 1 − J) is not the exact derivative; it is exact again as J → 1, so the
    /// error with finite differences shrinks with the compression.
    #[test]
    fn compressed_tangent_is_sofa_regularised_approximation() {
        let (rest, tris) = grid();
        let mut errs = Vec::new();
        for s in [0.7, 0.97] {
            let x: Vec<f64> = rest.iter().map(|p| p * s).collect();
            let mut f = ff(&rest, &tris, &[]);
            errs.push(dforce_error(&mut f, &x, 13));
        }
        assert!(errs[0] > 1e-6 && errs[1] < errs[0], "{errs:?}");
    }

    #[test]
    fn bad_material_is_reported() {
        let (rest, tris) = grid();
        for (k, v) in [
            ("youngModulus", "-1"),
            ("poissonRatio", "1"),
            ("poissonRatio", "-1.5"),
        ] {
            let mut f = TriangularBiquadraticSpringsForceField::new();
            f.data.set_str(k, v).unwrap();
            let d = init(&mut f, &rest, &tris);
            assert!(d.has_errors(), "{k}={v}");
            // nothing set up: no force, no panic
            assert!(forces(&mut f, &rest).iter().all(|v| *v == 0.0));
        }
        let mut f = TriangularBiquadraticSpringsForceField::new();
        let flat = [[0u32, 1, 2]];
        let d = init(
            &mut f,
            &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0],
            &flat,
        );
        assert!(d.has_errors());
    }
}
