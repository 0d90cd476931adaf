//! TriangularTensorMassForceField: linear membrane triangles stored as one 3×3 stiffness tensor
//! per edge (the tensor-mass model), following SOFA's
//! Sofa/Component/SolidMechanics/TensorMass/.../TriangularTensorMassForceField.inl.
//!
//! At init each triangle adds to the tensor of its edge opposite vertex j the term
//! λ*·(pⱼ − pₖ)(pⱼ − pₗ)ᵀ + μ*·(pⱼ − pₗ)(pⱼ − pₖ)ᵀ − cotⱼ·(λ+μ)/2·I (rest positions p, the
//! edge's other vertices k, l; λ* = λ/(4A), μ* = μ/(8A), A the rest area, cotⱼ the cotangent
//! at vertex j, λ and μ the plane Lamé coefficients Eν/(1−ν²), E(1−ν)/(1−ν²)), transposed when
//! the edge is stored from l to k. The force of edge (a, b) with tensor T on the displacements
//! u = x − x_rest is T·(u_b − u_a) on b and −Tᵀ·(u_b − u_a) on a: the force is linear, and
//! `add_dforce` is its exact derivative. Not rotation invariant (small displacements), as in
//! SOFA. SOFA has no addKToMatrix for this class: the force field is matrix-free, and
//! contributes nothing to an assembled matrix.

use crate::edge_triangles::{
    add_at, at, check_material_2d, heron, init_inputs, lame_2d, EdgeTriangles,
};
use canape_core::component::{ForceField, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, ForceFieldData, Real};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{DataTypes, Mat3, Vec3Types};

canape_core::data_schema! {
    /// TriangularTensorMassForceField's own Data (after the force-field Data).
    struct TriangularTensorMassData {
        poisson: Real = ("poissonRatio", DataKind::Real, "0.3", "Poisson ratio in Hooke's law"),
        young: Real = ("youngModulus", DataKind::Real, "1000", "Young's modulus in Hooke's law"),
    }
}

#[derive(Clone)]
pub struct TriangularTensorMassForceField {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: TriangularTensorMassData,
    topo: EdgeTriangles,
    /// One tensor per edge of `topo`.
    dfdx: Vec<Mat3>,
    /// The rest positions at init (SOFA's `_initialPoints`).
    initial: Vec<[f64; 3]>,
    rayleigh: f64,
}

impl Default for TriangularTensorMassForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl TriangularTensorMassForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = TriangularTensorMassData::declare(data);
        TriangularTensorMassForceField {
            data,
            ff,
            d,
            topo: EdgeTriangles::default(),
            dfdx: Vec::new(),
            initial: Vec::new(),
            rayleigh: 0.0,
        }
    }

    /// The edge tensors (SOFA's applyEdgeCreation, then applyTriangleCreation on every
    /// triangle).
    fn setup(&mut self, rest: Vec<[f64; 3]>, topo: EdgeTriangles) {
        let (lambda, mu) = lame_2d(self.data.get(self.d.young), self.data.get(self.d.poisson));
        self.dfdx = vec![Mat3::zeros(); topo.edges.len()];
        for (t, te) in topo.triangles.iter().zip(&topo.edges_in_triangle) {
            let p = t.map(|i| at(&rest, i));
            let sq = std::array::from_fn(|j| (p[(j + 1) % 3] - p[(j + 2) % 3]).norm_squared());
            let (area, cot) = heron(sq);
            let lambda_star = lambda / (4.0 * area);
            let mu_star = mu / (8.0 * area);
            for j in 0..3 {
                let (k, l) = ((j + 1) % 3, (j + 2) % 3);
                let dpl = p[j] - p[k];
                let dpk = p[j] - p[l];
                let diag = Mat3::from_diagonal_element(-cot[j] * (lambda + mu) / 2.0);
                let m = dpl * dpk.transpose() * lambda_star + dpk * dpl.transpose() * mu_star;
                let m = if topo.edges[te[j]][0] == t[l] {
                    m
                } else {
                    m.transpose()
                };
                self.dfdx[te[j]] += m + diag;
            }
        }
        self.initial = rest;
        self.topo = topo;
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        self.dfdx.clear();
        self.initial.clear();
        self.topo = EdgeTriangles::default();
        let Some((rest, topo)) = init_inputs(
            ctx,
            &self.data,
            self.data.get(self.d.young),
            self.data.get(self.d.poisson),
        ) else {
            return;
        };
        self.setup(rest, topo);
    }

    /// out[b] += s·T·(d_b − d_a), out[a] −= s·Tᵀ·(d_b − d_a) for every edge (a, b), with
    /// d = `d(i)`.
    fn apply(&self, d: impl Fn(usize) -> canape_types::Vec3, out: &mut [[f64; 3]], s: f64) {
        for (e, m) in self.topo.edges.iter().zip(&self.dfdx) {
            let dp = d(e[1]) - d(e[0]);
            add_at(out, e[1], (m * dp) * s);
            add_at(out, e[0], -(m.tr_mul(&dp)) * s);
        }
    }
}

impl TriangularTensorMassForceField {
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let material = [
            self.d.young.index(),
            self.d.poisson.index(),
            self.ff.rayleigh_stiffness.index(),
        ];
        if !changed.only(&material) || self.dfdx.is_empty() {
            return Reaction::Reinit;
        }
        let (young, nu) = (self.data.get(self.d.young), self.data.get(self.d.poisson));
        if let Some(m) = check_material_2d(young, nu) {
            return Reaction::Refused(vec![m]);
        }
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        let (rest, topo) = (
            std::mem::take(&mut self.initial),
            std::mem::take(&mut self.topo),
        );
        self.setup(rest, topo);
        Reaction::Updated
    }
}

canape_core::impl_component!(
    TriangularTensorMassForceField,
    "TriangularTensorMassForceField",
    init,
    data_changed
);

impl ForceField for TriangularTensorMassForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let x = Vec3Types::coords(x);
        let f = Vec3Types::derivs_mut(f);
        if self.topo.nb_points > x.len().min(f.len()).min(self.initial.len()) {
            return;
        }
        let x0 = &self.initial;
        self.apply(|i| at(x, i) - at(x0, i), f, 1.0);
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let dx = Vec3Types::derivs(dx);
        let df = Vec3Types::derivs_mut(df);
        if self.topo.nb_points > dx.len().min(df.len()) {
            return;
        }
        self.apply(|i| at(dx, i), df, k_factor);
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

    fn ff(rest: &[f64], tris: &[[u32; 3]]) -> TriangularTensorMassForceField {
        let mut ff = TriangularTensorMassForceField::new();
        ff.data.set_str("youngModulus", "15").unwrap();
        ff.data.set_str("poissonRatio", "0.9").unwrap();
        let d = init(&mut ff, rest, tris);
        assert!(!d.has_errors(), "{d:?}");
        ff
    }

    #[test]
    fn no_force_at_rest_nor_after_a_translation() {
        let (rest, tris) = grid();
        let mut f = ff(&rest, &tris);
        let moved: Vec<f64> = rest.iter().map(|p| p + 0.7).collect();
        for x in [rest.clone(), moved] {
            assert!(forces(&mut f, &x).iter().all(|v| v.abs() < 1e-12));
        }
    }

    /// Linear: the product is the exact derivative anywhere.
    #[test]
    fn tangent_matches_finite_differences() {
        let (rest, tris) = grid();
        let mut f = ff(&rest, &tris);
        let x: Vec<f64> = rest
            .iter()
            .enumerate()
            .map(|(k, p)| p * 1.3 + 0.1 * ((5 * k) % 3) as f64)
            .collect();
        let err = dforce_error(&mut f, &x, 31);
        assert!(err < 1e-8, "{err:e}");
    }

    /// The stiffness is symmetric and the same whichever way the edges are stored: reversing
    /// every edge of the topology gives the same forces.
    #[test]
    fn edge_orientation_does_not_change_the_forces() {
        let (rest, tris) = grid();
        let mut a = ff(&rest, &tris);
        let mut b = ff(&rest, &tris);
        b.topo.edges.iter_mut().for_each(|e| e.swap(0, 1));
        let mut rebuilt = TriangularTensorMassForceField::new();
        rebuilt.data = b.data.clone();
        rebuilt.setup(b.initial.clone(), b.topo.clone());
        let x: Vec<f64> = rest
            .iter()
            .enumerate()
            .map(|(k, p)| p + 0.01 * (k % 7) as f64)
            .collect();
        let (fa, fb) = (forces(&mut a, &x), forces(&mut rebuilt, &x));
        for (p, q) in fa.iter().zip(&fb) {
            assert!((p - q).abs() < 1e-12);
        }
        // symmetric: u·K v = v·K u
        let u: Vec<f64> = (0..x.len()).map(|k| ((3 * k) % 5) as f64 - 2.0).collect();
        let v: Vec<f64> = (0..x.len()).map(|k| ((7 * k) % 4) as f64 - 1.5).collect();
        let (mut ku, mut kv) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        a.add_dforce(&u, &mut ku, 1.0);
        a.add_dforce(&v, &mut kv, 1.0);
        let dot = |p: &[f64], q: &[f64]| p.iter().zip(q).map(|(a, b)| a * b).sum::<f64>();
        assert!((dot(&v, &ku) - dot(&u, &kv)).abs() < 1e-9);
    }

    #[test]
    fn bad_material_is_reported() {
        let (rest, tris) = grid();
        for (k, v) in [("youngModulus", "-1"), ("poissonRatio", "1.2")] {
            let mut f = TriangularTensorMassForceField::new();
            f.data.set_str(k, v).unwrap();
            let d = init(&mut f, &rest, &tris);
            assert!(d.has_errors(), "{k}={v}");
            assert!(forces(&mut f, &rest).iter().all(|v| *v == 0.0));
        }
    }
}

#[cfg(test)]
mod edit_tests {
    use super::*;
    use crate::element::edit_check;

    /// Editing youngModulus, poissonRatio or rayleighStiffness updates the force field in
    /// place to exactly what an init with the new values gives; an invalid material is
    /// refused, and other Data ask for a re-initialisation.
    #[test]
    fn triangular_tensor_mass_material_edits_update_in_place() {
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
        let v = |a: u32, b: u32| a + 3 * b;
        let triangles: Vec<[u32; 3]> = (0..2)
            .flat_map(|j| (0..2).map(move |i| (i, j)))
            .flat_map(|(i, j)| {
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
        let make = TriangularTensorMassForceField::new;
        let edit =
            |after: &[(&str, &str)]| edit_check::edit(make, &rest, &mesh, &before, after, &x);
        assert_eq!(edit(&[("youngModulus", "1500")]), Reaction::Updated);
        assert_eq!(edit(&[("poissonRatio", "0.4")]), Reaction::Updated);
        assert_eq!(edit(&[("rayleighStiffness", "0.25")]), Reaction::Updated);
        assert_eq!(
            edit(&[("youngModulus", "800"), ("poissonRatio", "0.2")]),
            Reaction::Updated
        );
        assert!(matches!(
            edit(&[("poissonRatio", "1.5")]),
            Reaction::Refused(_)
        ));
        assert!(matches!(
            edit(&[("youngModulus", "-5")]),
            Reaction::Refused(_)
        ));
        assert_eq!(
            edit(&[("youngModulus", "2000"), ("isCompliance", "1")]),
            Reaction::Reinit
        );
    }
}
