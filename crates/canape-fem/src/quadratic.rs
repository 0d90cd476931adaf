//! TriangularQuadraticSpringsForceField: membrane triangles as springs on the edge lengths,
//! following SOFA's
//! Sofa/Component/SolidMechanics/Spring/.../TriangularQuadraticSpringsForceField.inl.
//!
//! Each edge e carries dlₑ = |pₐ − p_b| − Lₑ,rest (plus `dampingRatio`·(Δv·Δp)/|Δp|) and a
//! stiffness sₑ summed over its triangles, s = L²·(2·cot²·(λ+μ) + μ)/(8·A) per triangle (L the
//! rest length, A the rest area, cot the cotangent of the angle opposite the edge, λ and μ the
//! plane Lamé coefficients Eν/(1−ν²), E(1−ν)/(1−ν²)); the edge pulls its ends with sₑ·dlₑ
//! along its direction. With `useAngularSprings`, each triangle couples its edges pairwise with
//! γ = Lₖ·Lₗ·(2·cotₖ·cotₗ·(λ+μ) − μ)/(8·A).
//!
//! `add_dforce` applies SOFA's per-edge blocks, built at the first product after each
//! `add_force` from the positions of that `add_force` (SOFA reads the state's positions).
//! Without angular springs they are the exact derivative of the undamped forces. With angular
//! springs SOFA's blocks are exact at the rest shape (dl = 0) and an approximation away from
//! it: their edge-direction term carries −(sₖ·dlₖ + γ·dl…) − sₖ·L_rest over L³ instead of the
//! derivative's terms. SOFA has no addKToMatrix for this class: the force field is
//! matrix-free, and contributes nothing to an assembled matrix.

use crate::edge_triangles::{add_at, at, heron, init_inputs, lame_2d, EdgeTriangles};
use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable, Flag, ForceFieldData, Real, Reals};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{DataTypes, Mat3, Vec3Types};

#[derive(Clone, Copy, Debug, Default)]
struct EdgeInfo {
    rest_length: f64,
    stiffness: f64,
    current_length: f64,
    dl: f64,
}

#[derive(Clone, Copy, Debug)]
struct TriInfo {
    gamma: [f64; 3],
    stiffness: [f64; 3],
    /// Block of edge k (opposite vertex k), built at the first product after `add_force`.
    dfdx: [Mat3; 3],
}

canape_core::data_schema! {
    /// TriangularQuadraticSpringsForceField's own Data (after the force-field Data).
    struct QuadraticSpringsData {
        initial_points: Reals = ("initialPoints", DataKind::Reals(3), "", "Initial Position"),
        poisson: Real = ("poissonRatio", DataKind::Real, "0.3", "Poisson ratio in Hooke's law"),
        young: Real = ("youngModulus", DataKind::Real, "1000", "Young modulus in Hooke's law"),
        damping_ratio: Real = ("dampingRatio", DataKind::Real, "0", "Ratio damping/stiffness"),
        use_angular_springs: Flag = ("useAngularSprings", DataKind::Bool, "1", "If Angular Springs should be used or not"),
    }
}

#[derive(Clone)]
pub struct TriangularQuadraticSpringsForceField {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: QuadraticSpringsData,
    topo: EdgeTriangles,
    edges: Vec<EdgeInfo>,
    tris: Vec<TriInfo>,
    /// The positions of the last `add_force`.
    x: Vec<[f64; 3]>,
    damping_ratio: f64,
    angular: bool,
    update_matrix: bool,
    rayleigh: f64,
}

impl Default for TriangularQuadraticSpringsForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl TriangularQuadraticSpringsForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = QuadraticSpringsData::declare(data);
        TriangularQuadraticSpringsForceField {
            data,
            ff,
            d,
            topo: EdgeTriangles::default(),
            edges: Vec::new(),
            tris: Vec::new(),
            x: Vec::new(),
            damping_ratio: 0.0,
            angular: true,
            update_matrix: true,
            rayleigh: 0.0,
        }
    }

    /// The rest state (SOFA's applyEdgeCreation then applyTriangleCreation for every element).
    fn setup(&mut self, rest: &[[f64; 3]], topo: EdgeTriangles) {
        let (lambda, mu) = lame_2d(self.data.get(self.d.young), self.data.get(self.d.poisson));
        self.damping_ratio = self.data.get(self.d.damping_ratio);
        self.angular = self.data.get(self.d.use_angular_springs);
        self.edges = topo
            .edges
            .iter()
            .map(|e| EdgeInfo {
                rest_length: (at(rest, e[0]) - at(rest, e[1])).norm(),
                ..EdgeInfo::default()
            })
            .collect();
        self.tris.clear();
        for te in &topo.edges_in_triangle {
            let len = te.map(|e| self.edges[e].rest_length);
            let (area, cot) = heron(len.map(|l| l * l));
            let mut info = TriInfo {
                gamma: [0.0; 3],
                stiffness: [0.0; 3],
                dfdx: [Mat3::zeros(); 3],
            };
            for j in 0..3 {
                let (k, l) = ((j + 1) % 3, (j + 2) % 3);
                info.gamma[j] =
                    len[k] * len[l] * (2.0 * cot[k] * cot[l] * (lambda + mu) - mu) / (8.0 * area);
                info.stiffness[j] =
                    len[j] * len[j] * (2.0 * cot[j] * cot[j] * (lambda + mu) + mu) / (8.0 * area);
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
        self.x.clear();
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
        let x = &self.x;
        for ((t, tea), tinfo) in self
            .topo
            .triangles
            .iter()
            .zip(&self.topo.edges_in_triangle)
            .zip(self.tris.iter_mut())
        {
            let e = tea.map(|e| self.edges[e]);
            for k in 0..3 {
                let (i, j) = ((k + 1) % 3, (k + 2) % 3);
                let dpk = at(x, t[i]) - at(x, t[j]);
                let lk = e[k].current_length;
                tinfo.dfdx[k] = if self.angular {
                    let dpj = at(x, t[i]) - at(x, t[k]);
                    let dpi = at(x, t[j]) - at(x, t[k]);
                    let v1 = -(tinfo.stiffness[k] * e[k].dl
                        + tinfo.gamma[i] * e[j].dl
                        + tinfo.gamma[j] * e[i].dl);
                    let v2 = (-v1 - tinfo.stiffness[k] * e[k].rest_length) / (lk * lk * lk);
                    let v1 = v1 / lk;
                    let li = e[i].current_length;
                    let lj = e[j].current_length;
                    let vk = tinfo.gamma[k] / (lj * li);
                    let vi = tinfo.gamma[i] / (lj * lk);
                    let vj = tinfo.gamma[j] / (lk * li);
                    dpk * dpk.transpose() * v2 + dpj * dpi.transpose() * vk
                        - dpj * dpk.transpose() * vi
                        + dpk * dpi.transpose() * vj
                        + Mat3::from_diagonal_element(v1)
                } else {
                    let v1 = -tinfo.stiffness[k] * e[k].dl / lk;
                    let v2 = -tinfo.stiffness[k] * e[k].rest_length / (lk * lk * lk);
                    dpk * dpk.transpose() * v2 + Mat3::from_diagonal_element(v1)
                };
            }
        }
    }
}

impl_component!(
    TriangularQuadraticSpringsForceField,
    "TriangularQuadraticSpringsForceField",
    init
);

impl ForceField for TriangularQuadraticSpringsForceField {
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
            let l = dp.norm();
            info.current_length = l;
            info.dl = l - info.rest_length;
            if with_v && self.damping_ratio != 0.0 {
                let dv = at(v, e[0]) - at(v, e[1]);
                info.dl += self.damping_ratio * dv.dot(&dp) / l;
            }
            let force = dp * (info.stiffness * info.dl / l);
            add_at(f, e[1], force);
            add_at(f, e[0], -force);
        }
        if self.angular {
            for ((t, tea), tinfo) in self
                .topo
                .triangles
                .iter()
                .zip(&self.topo.edges_in_triangle)
                .zip(&self.tris)
            {
                for j in 0..3 {
                    let (k, l) = ((j + 1) % 3, (j + 2) % 3);
                    let force = (at(x, t[k]) - at(x, t[l]))
                        * (self.edges[tea[k]].dl * tinfo.gamma[l]
                            + self.edges[tea[l]].dl * tinfo.gamma[k])
                        / self.edges[tea[j]].current_length;
                    add_at(f, t[l], force);
                    add_at(f, t[k], -force);
                }
            }
        }
        self.x.clear();
        self.x.extend_from_slice(x);
        self.update_matrix = true;
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let dx = Vec3Types::derivs(dx);
        let df = Vec3Types::derivs_mut(df);
        if self.topo.nb_points > dx.len().min(df.len()).min(self.x.len()) {
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
    use crate::fd_check::{dforce_error, forces, rigidly_moved};

    fn ff(
        rest: &[f64],
        tris: &[[u32; 3]],
        set: &[(&str, &str)],
    ) -> TriangularQuadraticSpringsForceField {
        let mut ff = TriangularQuadraticSpringsForceField::new();
        for (k, v) in set {
            ff.data.set_str(k, v).unwrap();
        }
        let d = init(&mut ff, rest, tris);
        assert!(!d.has_errors(), "{d:?}");
        ff
    }

    fn deformed(rest: &[f64]) -> Vec<f64> {
        rest.iter()
            .enumerate()
            .map(|(k, p)| p * 1.1 + 0.05 * ((7 * k) % 5) as f64)
            .collect()
    }

    #[test]
    fn no_force_at_rest_nor_after_a_rigid_motion() {
        let (rest, tris) = grid();
        let mut f = ff(
            &rest,
            &tris,
            &[("youngModulus", "15"), ("poissonRatio", "0.9")],
        );
        for x in [rest.clone(), rigidly_moved(&rest)] {
            let fx = forces(&mut f, &x);
            assert!(fx.iter().all(|v| v.abs() < 1e-10), "{fx:?}");
        }
    }

    /// Without angular springs SOFA's blocks are the exact derivative anywhere.
    #[test]
    fn tangent_without_angular_springs_matches_finite_differences() {
        let (rest, tris) = grid();
        let mut f = ff(&rest, &tris, &[("useAngularSprings", "0")]);
        let err = dforce_error(&mut f, &deformed(&rest), 21);
        assert!(err < 1e-6, "{err:e}");
    }

    /// With angular springs SOFA's blocks are exact at the rest shape (here rigidly moved) and
    /// SOFA's approximation away from it: the error grows with the deformation.
    #[test]
    fn angular_tangent_is_exact_at_rest_and_sofa_approximation_elsewhere() {
        let (rest, tris) = grid();
        let mut f = ff(&rest, &tris, &[]);
        let at_rest = dforce_error(&mut f, &rigidly_moved(&rest), 22);
        assert!(at_rest < 1e-6, "{at_rest:e}");
        let away = dforce_error(&mut f, &deformed(&rest), 22);
        assert!(away > 1e-4, "{away:e}");
    }

    #[test]
    fn bad_material_is_reported() {
        let (rest, tris) = grid();
        for (k, v) in [
            ("youngModulus", "-1"),
            ("poissonRatio", "1"),
            ("poissonRatio", "-1"),
        ] {
            let mut f = TriangularQuadraticSpringsForceField::new();
            f.data.set_str(k, v).unwrap();
            let d = init(&mut f, &rest, &tris);
            assert!(d.has_errors(), "{k}={v}");
            assert!(forces(&mut f, &rest).iter().all(|v| *v == 0.0));
        }
    }
}
