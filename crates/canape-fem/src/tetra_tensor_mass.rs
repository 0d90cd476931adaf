//! TetrahedralTensorMassForceField: linear elastic tetrahedra stored as one 3×3 stiffness
//! tensor per edge (the tensor-mass model), following SOFA's
//! Sofa/Component/SolidMechanics/TensorMass/.../TetrahedralTensorMassForceField.inl.
//!
//! At init, with λ = Eν/((1+ν)(1−2ν)) and μ = E/(2(1+ν)) (SOFA's updateLameCoefficients), each
//! tetrahedron of rest volume V and rest shape vectors g (gradients of the barycentric
//! coordinates) adds to the tensor of its local edge (k, l)
//! V·(λ gₗ⊗gₖ + μ gₖ⊗gₗ + μ (gₖ·gₗ) I), transposed when the global edge is stored from l to k
//! (SOFA's applyTetrahedronCreation). The force of edge (a, b) with tensor T on the
//! displacements u = x − x_rest (the rest positions at init, SOFA's `_initialPoints`) is
//! T·(u_b − u_a) on b and −Tᵀ·(u_b − u_a) on a; `add_dforce` applies the same tensors to dx
//! (times k_factor), and `add_k_to_matrix` assembles them as SOFA's buildStiffnessMatrix does.
//!
//! Checked against SOFA's source: T of edge (k, l) is the (l, k) block V(λ gₗgₖᵀ + μ gₖgₗᵀ +
//! μ gₖ·gₗ I) of the stiffness of linear isotropic elasticity (strain energy
//! V(λ/2 (tr ε)² + μ ε:ε) with ε the symmetric gradient of u), and because the shape vectors
//! sum to zero, the diagonal blocks are minus the sums of the off-diagonal ones: the forces are
//! exactly those of the small-strain linear tetrahedron (TetrahedronFEMForceField with
//! method="small"), which the tests check. Not rotation invariant (small displacements), as in
//! SOFA. The potential energy is SOFA's getPotentialEnergy: −½ f·u.

use crate::common::check_material;
use crate::edge_tetrahedra::{at, init_inputs, shape_vectors, EdgeTetrahedra, LOCAL_EDGES};
use canape_core::component::{ForceField, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, ForceFieldData, Real};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{DataTypes, Mat3, Vec3Types};

canape_core::data_schema! {
    /// TetrahedralTensorMassForceField's own Data (after the force-field Data).
    struct TetraTensorMassData {
        poisson: Real = ("poissonRatio", DataKind::Real, "0.3", "Poisson ratio in Hooke's law"),
        young: Real = ("youngModulus", DataKind::Real, "1000", "Young's modulus in Hooke's law"),
    }
}

#[derive(Clone)]
pub struct TetrahedralTensorMassForceField {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: TetraTensorMassData,
    topo: EdgeTetrahedra,
    /// One tensor per edge of `topo`.
    dfdx: Vec<Mat3>,
    /// The rest positions at init (SOFA's `_initialPoints`).
    initial: Vec<[f64; 3]>,
    rayleigh: f64,
}

impl Default for TetrahedralTensorMassForceField {
    fn default() -> Self {
        Self::new()
    }
}

/// SOFA's updateLameCoefficients: λ = Eν/((1−2ν)(1+ν)), μ = E/(2(1+ν)).
pub fn lame_3d(young: f64, nu: f64) -> (f64, f64) {
    (
        young * nu / ((1.0 - 2.0 * nu) * (1.0 + nu)),
        young / (2.0 * (1.0 + nu)),
    )
}

impl TetrahedralTensorMassForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = TetraTensorMassData::declare(data);
        TetrahedralTensorMassForceField {
            data,
            ff,
            d,
            topo: EdgeTetrahedra::default(),
            dfdx: Vec::new(),
            initial: Vec::new(),
            rayleigh: 0.0,
        }
    }

    /// The edge tensors (SOFA's createEdgeRestInformation, then applyTetrahedronCreation on
    /// every tetrahedron in order).
    fn setup(&mut self, rest: Vec<[f64; 3]>, topo: EdgeTetrahedra) {
        let (lambda, mu) = lame_3d(self.data.get(self.d.young), self.data.get(self.d.poisson));
        self.dfdx = vec![Mat3::zeros(); topo.edges.len()];
        for (ti, (t, te)) in topo
            .tetrahedra
            .iter()
            .zip(&topo.edges_in_tetrahedron)
            .enumerate()
        {
            let p = t.map(|i| at(&rest, i));
            let (g, vol6) = shape_vectors(&p);
            let lambda_star = lambda * vol6.abs() / 6.0;
            let mu_star = mu * vol6.abs() / 6.0;
            for (j, [k, l]) in LOCAL_EDGES.iter().enumerate() {
                let (gk, gl) = (g[*k], g[*l]);
                let m = gl * gk.transpose() * lambda_star
                    + gk * gl.transpose() * mu_star
                    + Mat3::from_diagonal_element(gk.dot(&gl) * mu_star);
                let m = if topo.oriented(ti, j).0 == *k {
                    m
                } else {
                    m.transpose()
                };
                self.dfdx[te[j]] += m;
            }
        }
        self.initial = rest;
        self.topo = topo;
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        self.dfdx.clear();
        self.initial.clear();
        self.topo = EdgeTetrahedra::default();
        let (young, nu) = (self.data.get(self.d.young), self.data.get(self.d.poisson));
        if let Some(m) = check_material(&[young], &[nu]) {
            ctx.error(m);
            return;
        }
        let Some((rest, topo)) = init_inputs(ctx, &self.data) else {
            return;
        };
        self.setup(rest, topo);
    }

    /// Whether `n` points (of the vectors a call gets) cover the topology.
    fn covers(&self, n: usize) -> bool {
        !self.dfdx.is_empty() && self.topo.nb_points <= n
    }
}

impl TetrahedralTensorMassForceField {
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
        if let Some(m) = check_material(&[young], &[nu]) {
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
    TetrahedralTensorMassForceField,
    "TetrahedralTensorMassForceField",
    init,
    data_changed
);

impl ForceField for TetrahedralTensorMassForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let x = Vec3Types::coords(x);
        let f = Vec3Types::derivs_mut(f);
        if !self.covers(x.len().min(f.len()).min(self.initial.len())) {
            return;
        }
        let x0 = &self.initial;
        self.topo
            .apply_blocks(&self.dfdx, |i| at(x, i) - at(x0, i), f, 1.0);
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let dx = Vec3Types::derivs(dx);
        let df = Vec3Types::derivs_mut(df);
        if !self.covers(dx.len().min(df.len())) {
            return;
        }
        self.topo
            .apply_blocks(&self.dfdx, |i| at(dx, i), df, k_factor);
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        self.topo
            .add_blocks_to_matrix(&self.dfdx, m, k_factor, offset);
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }

    /// ½ uᵀK u = −½ f(x)·u, u = x − x_rest (SOFA's getPotentialEnergy).
    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        let xs = Vec3Types::coords(x);
        if !self.covers(xs.len().min(self.initial.len())) {
            return None;
        }
        let mut f = vec![[0.0; 3]; xs.len()];
        let x0 = &self.initial;
        self.topo
            .apply_blocks(&self.dfdx, |i| at(xs, i) - at(x0, i), &mut f, 1.0);
        let w: f64 = f
            .iter()
            .enumerate()
            .map(|(i, fi)| (at(xs, i) - at(x0, i)).dot(&canape_types::Vec3::from(*fi)))
            .sum();
        Some(-0.5 * w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge_tetrahedra::test_support::{assembled_vs_product, block, init, tet_mesh};
    use crate::fd_check::{dforce_error, forces, rigidly_moved, rnd};
    use crate::tetra::{Flavor, TetrahedronFemForceField};
    use canape_core::component::Component;
    use canape_core::mesh::Mesh;

    fn ff(young: &str, nu: &str) -> TetrahedralTensorMassForceField {
        let (rest, tets) = block();
        let mut ff = TetrahedralTensorMassForceField::new();
        ff.data.set_str("youngModulus", young).unwrap();
        ff.data.set_str("poissonRatio", nu).unwrap();
        let d = init(&mut ff, &rest, Some(tet_mesh(&tets)));
        assert!(!d.has_errors(), "{d:?}");
        assert_eq!(ff.topo.edges.len(), 33, "12 points, 12 tetrahedra");
        ff
    }

    fn deformed(rest: &[f64], seed: u64, amp: f64) -> Vec<f64> {
        let mut s = seed;
        rest.iter().map(|v| v + amp * rnd(&mut s)).collect()
    }

    fn max_abs(v: &[f64]) -> f64 {
        v.iter().map(|a| a.abs()).fold(0.0, f64::max)
    }

    #[test]
    fn no_force_at_rest_nor_after_a_translation() {
        let (rest, _) = block();
        let mut f = ff("1000", "0.3");
        let moved: Vec<f64> = rest
            .chunks(3)
            .flat_map(|p| [p[0] + 0.7, p[1] - 1.3, p[2] + 2.0])
            .collect();
        for x in [rest.clone(), moved] {
            assert!(max_abs(&forces(&mut f, &x)) < 1e-10);
        }
        // a deformation does produce forces (the check above can fail)
        assert!(max_abs(&forces(&mut f, &deformed(&rest, 3, 0.05))) > 1.0);
    }

    /// SOFA's model is linear in the displacements: a finite rotation is not free of force,
    /// but an infinitesimal one is (the linearised rigid motions are in the kernel).
    #[test]
    fn small_rotations_are_free_of_force_and_finite_ones_are_not() {
        let (rest, _) = block();
        let mut f = ff("1000", "0.3");
        let w = canape_types::Vec3::new(0.3, -0.2, 0.5);
        let infinitesimal: Vec<f64> = rest
            .chunks(3)
            .flat_map(|p| {
                let d = w.cross(&canape_types::Vec3::new(p[0], p[1], p[2]));
                [d.x, d.y, d.z]
            })
            .collect();
        let mut kd = vec![0.0; rest.len()];
        f.add_dforce(&infinitesimal, &mut kd, 1.0);
        assert!(max_abs(&kd) < 1e-10, "{}", max_abs(&kd));
        let turned = rigidly_moved(&rest);
        assert!(max_abs(&forces(&mut f, &turned)) > 10.0);
    }

    /// The product is the exact derivative of the (linear) force anywhere, and the energy's
    /// gradient is minus the force.
    #[test]
    fn tangent_and_energy_match_finite_differences() {
        let (rest, _) = block();
        let mut f = ff("1000", "0.3");
        let x = deformed(&rest, 5, 0.3);
        let err = dforce_error(&mut f, &x, 31);
        assert!(err < 1e-8, "{err:e}");
        let fx = forces(&mut f, &x);
        let h = 1e-6;
        for i in 0..x.len() {
            let (mut xp, mut xm) = (x.clone(), x.clone());
            xp[i] += h;
            xm[i] -= h;
            let g =
                (f.potential_energy(&xp).unwrap() - f.potential_energy(&xm).unwrap()) / (2.0 * h);
            assert!(
                (fx[i] + g).abs() < 1e-6 * (1.0 + g.abs()),
                "{i}: {} {g}",
                fx[i]
            );
        }
    }

    #[test]
    fn assembled_matrix_equals_the_product() {
        let (rest, _) = block();
        let mut f = ff("2500", "0.42");
        let err = assembled_vs_product(&mut f, &deformed(&rest, 7, 0.1), 11);
        assert!(err < 1e-12, "{err:e}");
    }

    /// The tensor-mass model is the linear tetrahedron: the same forces and the same stiffness
    /// as TetrahedronFEMForceField with method="small", for several materials.
    #[test]
    fn equals_the_small_strain_linear_tetrahedron() {
        let (rest, tets) = block();
        for (young, nu) in [
            ("1000", "0.3"),
            ("100000", "0.4"),
            ("70", "0.0"),
            ("5", "-0.3"),
        ] {
            let mut tm = ff(young, nu);
            let mut lin = TetrahedronFemForceField::new(Flavor::TetrahedronFem);
            lin.data_mut().set_str("method", "small").unwrap();
            lin.data_mut().set_str("youngModulus", young).unwrap();
            lin.data_mut().set_str("poissonRatio", nu).unwrap();
            lin.set_method_from_data().unwrap();
            assert!(lin.setup(&rest, &tets).is_empty());
            let x = deformed(&rest, 17, 0.05);
            let (a, b) = (forces(&mut tm, &x), forces(&mut lin, &x));
            let scale = max_abs(&b);
            assert!(scale > 0.0);
            for (p, q) in a.iter().zip(&b) {
                assert!((p - q).abs() < 1e-9 * scale, "E={young} ν={nu}: {p} vs {q}");
            }
            let mut s = 23;
            let dx: Vec<f64> = (0..x.len()).map(|_| rnd(&mut s)).collect();
            let (mut ka, mut kb) = (vec![0.0; x.len()], vec![0.0; x.len()]);
            tm.add_dforce(&dx, &mut ka, 1.0);
            lin.add_dforce(&dx, &mut kb, 1.0);
            let scale = max_abs(&kb);
            for (p, q) in ka.iter().zip(&kb) {
                assert!(
                    (p - q).abs() < 1e-9 * scale,
                    "E={young} ν={nu}: K {p} vs {q}"
                );
            }
        }
    }

    /// Edges given with the topology in the other direction change nothing: each tetrahedron
    /// stores the transposed tensor on an edge stored from l to k.
    #[test]
    fn edge_orientation_does_not_change_the_forces() {
        let (rest, tets) = block();
        let mut a = ff("1000", "0.3");
        let reversed: Vec<[u32; 2]> = a
            .topo
            .edges
            .iter()
            .rev()
            .map(|e| [e[1] as u32, e[0] as u32])
            .collect();
        let mut b = TetrahedralTensorMassForceField::new();
        let mesh = Mesh {
            edges: reversed,
            ..tet_mesh(&tets)
        };
        let d = init(&mut b, &rest, Some(mesh));
        assert!(!d.has_errors() && d.items.is_empty(), "{d:?}");
        assert_eq!(b.topo.edges[0], [a.topo.edges[32][1], a.topo.edges[32][0]]);
        let x = deformed(&rest, 9, 0.05);
        let (fa, fb) = (forces(&mut a, &x), forces(&mut b, &x));
        let scale = max_abs(&fa);
        for (p, q) in fa.iter().zip(&fb) {
            assert!((p - q).abs() < 1e-12 * scale);
        }
    }

    #[test]
    fn bad_input_is_reported_without_forces() {
        let (rest, tets) = block();
        for (k, v) in [
            ("youngModulus", "-1"),
            ("poissonRatio", "0.5"),
            ("poissonRatio", "0.7"),
            ("poissonRatio", "-1"),
        ] {
            let mut f = TetrahedralTensorMassForceField::new();
            f.data.set_str(k, v).unwrap();
            let d = init(&mut f, &rest, Some(tet_mesh(&tets)));
            assert!(d.has_errors(), "{k}={v}");
            let x = deformed(&rest, 1, 0.1);
            assert!(forces(&mut f, &x).iter().all(|v| *v == 0.0));
        }
        // no topology
        let mut f = TetrahedralTensorMassForceField::new();
        let d = init(&mut f, &rest, None);
        assert!(d.has_errors());
        assert!(forces(&mut f, &deformed(&rest, 1, 0.1))
            .iter()
            .all(|v| *v == 0.0));
        // a flat tetrahedron (its fourth point halfway between its first two)
        let mut f = TetrahedralTensorMassForceField::new();
        let mut flat_rest = rest.clone();
        flat_rest.extend((0..3).map(|c| 0.5 * (rest[c] + rest[3 + c])));
        let mut bad = tets.clone();
        bad.push([0, 1, 2, 12]);
        let d = init(&mut f, &flat_rest, Some(tet_mesh(&bad)));
        assert!(d.has_errors(), "{d:?}");
        // a topology naming a point the state does not have
        let mut f = TetrahedralTensorMassForceField::new();
        let mut bad = tets.clone();
        bad.push([0, 1, 3, 40]);
        let d = init(&mut f, &rest, Some(tet_mesh(&bad)));
        assert!(d.has_errors(), "{d:?}");
        // vectors shorter than the topology: nothing, no panic
        let mut f = ff("1000", "0.3");
        let mut out = vec![0.0; 6];
        f.add_force(&rest[..6], &[0.0; 6], &mut out);
        f.add_dforce(&[1.0; 6], &mut out, 1.0);
        assert!(out.iter().all(|v| *v == 0.0));
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
    fn tetra_tensor_mass_material_edits_update_in_place() {
        let (rest, mesh, x) = crate::fast_tetra::tests::two_cells();
        let before = [
            ("youngModulus", "1000"),
            ("poissonRatio", "0.3"),
            ("rayleighStiffness", "0.1"),
        ];
        let make = TetrahedralTensorMassForceField::new;
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
            edit(&[("poissonRatio", "0.7")]),
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
