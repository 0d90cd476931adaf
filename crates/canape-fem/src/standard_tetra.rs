//! StandardTetrahedralFEMForceField: hyperelastic tetrahedra on SOFA's HyperelasticMaterial
//! laws, assembled per edge, following SOFA's
//! Sofa/Component/SolidMechanics/FEM/HyperElastic/.../StandardTetrahedralFEMForceField.inl
//! and its material/*.h formulations. The material laws are those of
//! [`crate::hyperelastic`] ([`Material`]: energy, second Piola–Kirchhoff stress S and its
//! derivative 𝒜); this module has its own element loop because the tangent SOFA assembles here
//! is not always the one of TetrahedronHyperelasticityFEMForceField (below).
//!
//! What was checked in SOFA's source, against TetrahedronHyperelasticityFEMForceField:
//! - Data: `materialName` (default "ArrudaBoyce"), `ParameterSet` (the material's parameters,
//!   read in the same order by the same material classes), `AnisotropyDirections` (copied, and
//!   a fibre stretch computed from its first direction, which no material reads),
//!   `ParameterFile` (default "myFile.param", never read), `topology`. There is no
//!   `poissonRatio`/`youngModulus`: the parameters are the laws' own (for ArrudaBoyce, NeoHookean
//!   and StVenantKirchhoff, μ and λ or k0). The materials offered are ArrudaBoyce,
//!   StVenantKirchhoff, NeoHookean, MooneyRivlin, VerondaWestman, Costa and Ogden; any other
//!   name (StableNeoHookean included) is an error in SOFA, and here.
//! - Forces: the same. With gⱼ the rest shape vectors (barycentric gradients), V₀ the rest
//!   volume, F = Σⱼ (xⱼ − x₀)⊗gⱼ, C = FᵀF, J = det F (signed), S = S(C) from the material's
//!   deriveSPKTensor, SOFA's fₗ −= V₀·Bₗᵀ·S with Bₗ the 6×3 strain–displacement matrix in
//!   symmetric storage (shear rows doubled): that is fₗ −= V₀·F·S·gₗ, the force of
//!   TetrahedronHyperelasticityFEMForceField.
//! - Tangent: SOFA stores per edge (k → l, k the local vertex of the edge's first point) the
//!   block V₀·[(gₖ·S·gₗ) I + Nᵀ] with N = Bₖᵀ·D·B̃ₗ, D the material's 6×6 `ElasticityTensor`
//!   and B̃ₗ = Bₗ with its shear rows halved, and applies it as
//!   TetrahedronHyperelasticityFEMForceField does (df₀ += kMᵀ(dx₀ − dx₁), df₁ −= kM(dx₀ −
//!   dx₁); addKToMatrix the four matching blocks). With D = 2·(the matrix of 𝒜 on symmetric
//!   storage), row m of Nᵀ is (F·𝒜(Hₘ)·gₖ)ᵀ, Hₘ = gₗ⊗fₘ + fₘ⊗gₗ (fₘ row m of F): the exact
//!   Hessian of the energy. SOFA's 6×6 tensors were evaluated numerically against the
//!   derivative of its stresses: they are that exact matrix for ArrudaBoyce,
//!   StVenantKirchhoff, NeoHookean, VerondaWestman and Ogden, but not for two materials, whose
//!   deviations are reproduced here ([`sofa_tensor`]): MooneyRivlin's uses (C⁻¹:H) where its
//!   −(2/3)(I₁ tr H − C:H)C⁻¹ term needs (C:H), which adds (4/3)·c2·J^(−4/3)·(C⁻¹:H − C:H)·C⁻¹
//!   to 𝒜(H) (a non-symmetric term); Costa's has Q² for Q in its −(2/3)Q·UE⊗C⁻¹ term and lacks
//!   k0 on its −J·lnJ·C⁻¹HC⁻¹ term, which add −(2/3)(Q² − Q)·a·J^(−8/3)·e^(J^(−4/3)Q)·(C⁻¹:H)·UE
//!   and (k0 − 1)·J·lnJ·C⁻¹HC⁻¹. Both deviations vanish at rest (C = I), so the tangent is exact
//!   near the rest shape and differs at finite strain. Ogden's tensor is computed per
//!   tetrahedron here as in SOFA (no mixing with another element's eigenvectors).
//! - The tangent is recomputed on every `add_force` (SOFA: when the solver is implicit).
//!
//! Not followed: an element whose deformation makes C singular or the stress non-finite (an
//! inverted element under a law with ln J) is skipped — no force, no stiffness — where SOFA
//! would propagate NaN; StVenantKirchhoff, which has no ln J, keeps inverted elements.
//! `potential_energy` returns Σ V₀·W(C) (SOFA's getPotentialEnergy returns 0, "not
//! implemented").

use crate::edge_tetrahedra::{at, init_inputs, shape_vectors, EdgeTetrahedra, LOCAL_EDGES};
use crate::hyperelastic::{Material, MaterialError, Strain};
use canape_core::component::{ForceField, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, ForceFieldData, Reals, Text};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{DataTypes, Mat3, Vec3, Vec3Types};

/// The materials SOFA's StandardTetrahedralFEMForceField knows.
const MATERIALS: [&str; 7] = [
    "ArrudaBoyce",
    "StVenantKirchhoff",
    "NeoHookean",
    "MooneyRivlin",
    "VerondaWestman",
    "Costa",
    "Ogden",
];

/// The symmetric basis 𝒜 is evaluated on: Eᵢᵢ, then Eᵢⱼ + Eⱼᵢ for (0,1), (0,2), (1,2).
const SYM_BASIS: [[usize; 2]; 6] = [[0, 0], [1, 1], [2, 2], [0, 1], [0, 2], [1, 2]];

/// Full contraction A:B.
fn ddot(a: &Mat3, b: &Mat3) -> f64 {
    a.component_mul(b).sum()
}

/// Costa's component-wise weighting U∘E (fibre, sheet, normal along x, y, z), b = [bff, bfs,
/// bss, bfn, bsn, bnn].
fn costa_u(b: &[f64; 6], e: &Mat3) -> Mat3 {
    let [bff, bfs, bss, bfn, bsn, bnn] = *b;
    let w = Mat3::new(bff, bfs, bfn, bfs, bss, bsn, bfn, bsn, bnn);
    w.component_mul(e)
}

/// 𝒜(H), the change of S for a change H of C, as SOFA's StandardTetrahedralFEMForceField
/// obtains it from the material's 6×6 `ElasticityTensor`: the exact derivative, plus the
/// deviations of MooneyRivlin's and Costa's tensors (see the module documentation).
pub fn sofa_tensor(material: &Material, s: &Strain, h: &Mat3) -> Mat3 {
    let exact = material.tensor(s, h);
    match *material {
        Material::MooneyRivlin { c2, .. } => {
            exact
                + s.ci * (4.0 / 3.0 * c2 * s.j.powf(-4.0 / 3.0) * (ddot(&s.ci, h) - ddot(&s.c, h)))
        }
        Material::Costa { a, k0, ref b } => {
            let e = (s.c - Mat3::identity()) * 0.5;
            let ue = costa_u(b, &e);
            let q = ddot(&e, &ue);
            let jm = s.j.powf(-4.0 / 3.0);
            let coef = -2.0 / 3.0 * (q * q - q) * a * jm * jm * (jm * q).exp() * ddot(&s.ci, h);
            exact + ue * coef + s.ci * h * s.ci * ((k0 - 1.0) * s.j * s.j.ln())
        }
        _ => exact,
    }
}

/// The material's linearised moduli at rest (C = I), from its own 𝒜: the shear moduli
/// 𝒜(Eᵢⱼ + Eⱼᵢ)ᵢⱼ of the three planes and the bulk modulus (2/9)·I:𝒜(I) (μ and λ + 2μ/3 for
/// an isotropic law).
pub fn rest_moduli(material: &Material) -> ([f64; 3], f64) {
    let s = Strain::new(&Mat3::identity()).expect("the identity is invertible");
    let shear = [[0, 1], [0, 2], [1, 2]].map(|[i, j]| {
        let mut h = Mat3::zeros();
        h[(i, j)] = 1.0;
        h[(j, i)] = 1.0;
        material.tensor(&s, &h)[(i, j)]
    });
    let bulk = 2.0 / 9.0 * material.tensor(&s, &Mat3::identity()).trace();
    (shear, bulk)
}

#[derive(Clone, Copy, Debug)]
struct Elem {
    /// Rest shape vectors.
    g: [Vec3; 4],
    /// Rest volume.
    v0: f64,
}

canape_core::data_schema! {
    /// StandardTetrahedralFEMForceField's own Data (after the force-field Data).
    struct StandardTetraData {
        material_name: Text = ("materialName", DataKind::Str, "ArrudaBoyce", "the name of the material to be used"),
        parameter_set: Reals = ("ParameterSet", DataKind::Reals(0), "", "The global parameters specifying the material"),
        anisotropy_directions: Reals = ("AnisotropyDirections", DataKind::Reals(3), "", "The global directions of anisotropy of the material"),
        parameter_file: Text = ("ParameterFile", DataKind::Str, "myFile.param", "the name of the file describing the material parameters for all tetrahedra"),
    }
}

#[derive(Clone)]
pub struct StandardTetrahedralFemForceField {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: StandardTetraData,
    material: Option<Material>,
    topo: EdgeTetrahedra,
    elems: Vec<Elem>,
    /// One block per edge of `topo`, from the last `add_force`.
    dfdx: Vec<Mat3>,
    /// Elements skipped by the last `add_force` (singular C or non-finite stress).
    skipped: usize,
    /// Elements the last `add_force` found inverted (singular C or J ≤ 0).
    inverted: usize,
    rayleigh: f64,
}

impl Default for StandardTetrahedralFemForceField {
    fn default() -> Self {
        Self::new()
    }
}

/// Why StandardTetrahedralFEMForceField refuses its material.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StandardMaterialError {
    /// A material SOFA's class does not offer.
    #[error("material name '{name}' is not valid for this force field (SOFA's StandardTetrahedralFEMForceField offers {})", MATERIALS.join(", "))]
    NotOffered { name: String },
    /// The material cannot be made from its parameters.
    #[error(transparent)]
    Material(#[from] MaterialError),
    #[error("material {name}: its parameters give non-finite moduli at rest")]
    NonFiniteModuli { name: String },
    #[error("material {name}: the parameters give a shear modulus {shear} ≤ 0 at rest (a negative modulus?): the material is unstable")]
    NonPositiveShear { name: String, shear: f64 },
    #[error("material {name}: the parameters give a bulk modulus {bulk} < 0 at rest: the material is unstable")]
    NegativeBulk { name: String, bulk: f64 },
}

impl StandardTetrahedralFemForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = StandardTetraData::declare(data);
        StandardTetrahedralFemForceField {
            data,
            ff,
            d,
            material: None,
            topo: EdgeTetrahedra::default(),
            elems: Vec::new(),
            dfdx: Vec::new(),
            skipped: 0,
            inverted: 0,
            rayleigh: 0.0,
        }
    }

    /// The material, once init has accepted it.
    pub fn material(&self) -> Option<&Material> {
        self.material.as_ref()
    }

    /// Elements the last `add_force` skipped (singular C or non-finite stress).
    pub fn skipped_elements(&self) -> usize {
        self.skipped
    }

    /// The material named by the Data, refused when SOFA's class does not offer it, when its
    /// parameters are missing or not finite, or when it is not stable at rest.
    fn material_from_data(&self) -> Result<(Material, Option<String>), StandardMaterialError> {
        let name = self.data.get(self.d.material_name).trim();
        if !MATERIALS.contains(&name) {
            return Err(StandardMaterialError::NotOffered {
                name: name.to_string(),
            });
        }
        let material = Material::from_name(name, self.data.get(self.d.parameter_set))?;
        let (shear, bulk) = rest_moduli(&material);
        let scale = shear.iter().fold(bulk.abs(), |m, v| m.max(v.abs()));
        if shear.iter().chain([&bulk]).any(|v| !v.is_finite()) {
            return Err(StandardMaterialError::NonFiniteModuli {
                name: name.to_string(),
            });
        }
        if let Some(m) = shear.iter().find(|m| **m <= 0.0) {
            return Err(StandardMaterialError::NonPositiveShear {
                name: name.to_string(),
                shear: *m,
            });
        }
        let mut warning = None;
        if bulk < -1e-12 * scale {
            return Err(StandardMaterialError::NegativeBulk {
                name: name.to_string(),
                bulk,
            });
        } else if bulk <= 1e-12 * scale {
            warning = Some(format!(
                "material {name}: the parameters give no bulk stiffness at rest (volume changes \
                 are free)"
            ));
        }
        Ok((material, warning))
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        self.material = None;
        self.elems.clear();
        self.dfdx.clear();
        self.topo = EdgeTetrahedra::default();
        let material = match self.material_from_data() {
            Ok((m, warning)) => {
                if let Some(w) = warning {
                    ctx.warn(w);
                }
                m
            }
            Err(e) => {
                ctx.error(e.to_string());
                return;
            }
        };
        if !self.data.get(self.d.anisotropy_directions).is_empty() {
            ctx.warn("AnisotropyDirections has no effect (as in SOFA: no material reads it)");
        }
        if self.data.was_set(self.d.parameter_file) {
            ctx.warn("ParameterFile is not read (SOFA does not read it either)");
        }
        let Some((rest, topo)) = init_inputs(ctx, &self.data) else {
            return;
        };
        self.setup(material, &rest, topo);
    }

    /// Set up the elements from rest positions (init and tests).
    fn setup(&mut self, material: Material, rest: &[[f64; 3]], topo: EdgeTetrahedra) {
        self.elems = topo
            .tetrahedra
            .iter()
            .map(|t| {
                let (g, vol6) = shape_vectors(&t.map(|i| at(rest, i)));
                Elem {
                    g,
                    v0: (vol6 / 6.0).abs(),
                }
            })
            .collect();
        self.dfdx = vec![Mat3::zeros(); topo.edges.len()];
        self.topo = topo;
        self.material = Some(material);
    }

    /// F = Σⱼ (xⱼ − x₀)⊗gⱼ.
    fn deformation(t: &[usize; 4], el: &Elem, x: &[[f64; 3]]) -> Mat3 {
        let x0 = at(x, t[0]);
        let mut f = Mat3::zeros();
        for j in 1..4 {
            f += (at(x, t[j]) - x0) * el.g[j].transpose();
        }
        f
    }

    fn covers(&self, n: usize) -> bool {
        self.material.is_some() && self.topo.nb_points <= n
    }
}

impl StandardTetrahedralFemForceField {
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let material = [
            self.d.material_name.index(),
            self.d.parameter_set.index(),
            self.ff.rayleigh_stiffness.index(),
        ];
        if !changed.only(&material) || self.elems.is_empty() || self.material.is_none() {
            return Reaction::Reinit;
        }
        match self.material_from_data() {
            Ok((m, _)) => {
                self.material = Some(m);
                self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
                Reaction::Updated
            }
            Err(e) => Reaction::Refused(vec![e.to_string()]),
        }
    }
}

canape_core::impl_component!(
    StandardTetrahedralFemForceField,
    "StandardTetrahedralFEMForceField",
    init,
    data_changed
);

impl ForceField for StandardTetrahedralFemForceField {
    fn inverted_elements(&self) -> usize {
        self.inverted
    }
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let x = Vec3Types::coords(x);
        let f = Vec3Types::derivs_mut(f);
        if !self.covers(x.len().min(f.len())) {
            return;
        }
        let Some(material) = self.material.as_ref() else {
            return;
        };
        self.dfdx.iter_mut().for_each(|m| *m = Mat3::zeros());
        self.skipped = 0;
        self.inverted = 0;
        for (ti, (t, el)) in self.topo.tetrahedra.iter().zip(&self.elems).enumerate() {
            let fm = Self::deformation(t, el, x);
            let Some(strain) = Strain::new(&fm) else {
                self.skipped += 1;
                self.inverted += 1;
                continue;
            };
            if strain.j <= 0.0 {
                self.inverted += 1;
            }
            let s = material.stress(&strain);
            if !s.iter().all(|v| v.is_finite()) {
                self.skipped += 1;
                continue;
            }
            for (l, &n) in t.iter().enumerate() {
                let fl = fm * (s * el.g[l]) * el.v0;
                let p = &mut f[n];
                p[0] -= fl.x;
                p[1] -= fl.y;
                p[2] -= fl.z;
            }
            // 𝒜 on the symmetric basis (it is linear in H), once per element
            let basis: [Mat3; 6] = SYM_BASIS.map(|[i, j]| {
                let mut h = Mat3::zeros();
                h[(i, j)] = 1.0;
                h[(j, i)] = 1.0;
                sofa_tensor(material, &strain, &h)
            });
            let tensor = |h: &Mat3| -> Mat3 {
                SYM_BASIS
                    .iter()
                    .zip(&basis)
                    .fold(Mat3::zeros(), |acc, ([i, j], a)| acc + a * h[(*i, *j)])
            };
            for j in 0..LOCAL_EDGES.len() {
                let (k, l) = self.topo.oriented(ti, j);
                let (gk, gl) = (el.g[k], el.g[l]);
                let mut blk = Mat3::from_diagonal_element(gk.dot(&(s * gl)));
                for m in 0..3 {
                    let fr: Vec3 = fm.row(m).transpose();
                    let h = gl * fr.transpose() + fr * gl.transpose();
                    let row = fm * (tensor(&h) * gk);
                    for c in 0..3 {
                        blk[(m, c)] += row[c];
                    }
                }
                self.dfdx[self.topo.edges_in_tetrahedron[ti][j]] += blk * el.v0;
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let dx = Vec3Types::derivs(dx);
        let df = Vec3Types::derivs_mut(df);
        if !self.covers(dx.len().min(df.len())) {
            return;
        }
        // SOFA's edge block M is applied as df₀ += Mᵀ(dx₀ − dx₁), df₁ −= M(dx₀ − dx₁): the
        // shared product with d = dx₁ − dx₀
        self.topo
            .apply_blocks(&self.dfdx, |i| at(dx, i), df, k_factor);
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        if self.material.is_some() {
            self.topo
                .add_blocks_to_matrix(&self.dfdx, m, k_factor, offset);
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }

    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        let material = self.material.as_ref()?;
        let x = Vec3Types::coords(x);
        if self.topo.nb_points > x.len() {
            return None;
        }
        let mut w = 0.0;
        for (t, el) in self.topo.tetrahedra.iter().zip(&self.elems) {
            let s = Strain::new(&Self::deformation(t, el, x))?;
            w += el.v0 * material.energy(&s);
        }
        Some(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge_tetrahedra::test_support::{assembled_vs_product, block, init, tet_mesh};
    use crate::fd_check::{dforce_error, forces, rigidly_moved, rnd};
    use crate::hyperelastic::TetrahedronHyperelasticityFemForceField;
    use canape_core::component::Component;

    /// Every material with parameters and the ParameterSet text that gives it.
    fn materials() -> Vec<(&'static str, &'static str)> {
        vec![
            ("ArrudaBoyce", "3 20"),
            ("StVenantKirchhoff", "3 20"),
            ("NeoHookean", "3 20"),
            ("MooneyRivlin", "2 1.5 10"),
            ("VerondaWestman", "2 0.7 10"),
            ("Costa", "2 10 1.5 0.8 1.2 0.6 0.9 1.1"),
            ("Ogden", "3 4 10"),
        ]
    }

    /// SOFA's tangent is exact for these (see the module documentation).
    fn exact_tangent(name: &str) -> bool {
        !matches!(name, "MooneyRivlin" | "Costa")
    }

    fn ff(name: &str, params: &str) -> StandardTetrahedralFemForceField {
        let (rest, tets) = block();
        let mut ff = StandardTetrahedralFemForceField::new();
        ff.data.set_str("materialName", name).unwrap();
        ff.data.set_str("ParameterSet", params).unwrap();
        let d = init(&mut ff, &rest, Some(tet_mesh(&tets)));
        assert!(!d.has_errors() && d.is_empty(), "{name}: {d:?}");
        assert!(ff.material().is_some());
        ff
    }

    /// The rest block stretched along x and sheared, plus a small irregular displacement.
    fn deformed(rest: &[f64], seed: u64) -> Vec<f64> {
        let mut s = seed;
        rest.chunks(3)
            .flat_map(|p| [1.15 * p[0] + 0.1 * p[1], 0.95 * p[1], p[2] - 0.05 * p[0]])
            .map(|v| v + 0.02 * rnd(&mut s))
            .collect()
    }

    fn max_abs(v: &[f64]) -> f64 {
        v.iter().map(|a| a.abs()).fold(0.0, f64::max)
    }

    #[test]
    fn defaults_are_sofas() {
        let ff = StandardTetrahedralFemForceField::new();
        assert_eq!(ff.data.str("materialName"), "ArrudaBoyce");
        assert_eq!(ff.data.str("ParameterFile"), "myFile.param");
        assert!(ff.data.reals("ParameterSet").is_empty());
        assert_eq!(ff.class_name(), "StandardTetrahedralFEMForceField");
        // the example scene's ArrudaBoyce: ParameterSet only
        let (rest, tets) = block();
        let mut f = StandardTetrahedralFemForceField::new();
        f.data
            .set_str("ParameterSet", "3448.2759 31034.483")
            .unwrap();
        let d = init(&mut f, &rest, Some(tet_mesh(&tets)));
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(
            f.material(),
            Some(&Material::ArrudaBoyce {
                mu: 3448.2759,
                k0: 31034.483
            })
        );
    }

    #[test]
    fn no_force_at_rest_nor_after_a_rigid_motion() {
        let (rest, _) = block();
        let moved = rigidly_moved(&rest);
        for (name, params) in materials() {
            let mut f = ff(name, params);
            for x in [&rest, &moved] {
                let fx = forces(&mut f, x);
                assert!(max_abs(&fx) < 1e-9, "{name}: {:e}", max_abs(&fx));
            }
            assert!(
                max_abs(&forces(&mut f, &deformed(&rest, 1))) > 0.1,
                "{name}"
            );
        }
    }

    /// The forces are those of TetrahedronHyperelasticityFEMForceField on the same mesh and
    /// material, and so is the tangent where SOFA's 6×6 tensor is exact.
    #[test]
    fn same_forces_as_tetrahedron_hyperelasticity() {
        let (rest, tets) = block();
        let x = deformed(&rest, 2);
        for (name, params) in materials() {
            let mut a = ff(name, params);
            let mut b = TetrahedronHyperelasticityFemForceField::new();
            b.setup(a.material().unwrap().clone(), &rest, &tets);
            let (fa, fb) = (forces(&mut a, &x), forces(&mut b, &x));
            let scale = max_abs(&fb);
            assert!(scale > 0.1);
            for (p, q) in fa.iter().zip(&fb) {
                assert!((p - q).abs() < 1e-10 * scale, "{name}: {p} vs {q}");
            }
            let mut s = 4;
            let dx: Vec<f64> = (0..x.len()).map(|_| rnd(&mut s)).collect();
            let (mut ka, mut kb) = (vec![0.0; x.len()], vec![0.0; x.len()]);
            a.add_dforce(&dx, &mut ka, 1.0);
            b.add_dforce(&dx, &mut kb, 1.0);
            let diff = ka
                .iter()
                .zip(&kb)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f64::max);
            let rel = diff / max_abs(&kb);
            if exact_tangent(name) {
                assert!(rel < 1e-9, "{name}: tangents differ by {rel:e}");
            } else {
                // the reproduced deviation of SOFA's 6×6 tensor shows at finite strain
                assert!(rel > 1e-4, "{name}: {rel:e}");
            }
        }
    }

    #[test]
    fn tangent_matches_finite_differences_where_sofas_is_exact() {
        let (rest, _) = block();
        let x = deformed(&rest, 3);
        for (name, params) in materials() {
            let mut f = ff(name, params);
            let err = dforce_error(&mut f, &x, 8);
            if exact_tangent(name) {
                assert!(err < 1e-6, "{name}: {err:e}");
            } else {
                assert!(err > 1e-4, "{name}: SOFA's deviation should show, {err:e}");
            }
        }
        // near rest (a rigid motion) the two deviations vanish: every tangent is exact there
        let moved = rigidly_moved(&rest);
        for (name, params) in materials() {
            let mut f = ff(name, params);
            let err = dforce_error(&mut f, &moved, 9);
            assert!(err < 1e-6, "{name} at rest: {err:e}");
        }
    }

    /// 𝒜(H) as SOFA's ElasticityTensor gives it (D·h/2 on symmetric storage), evaluated
    /// offline from SOFA's formulas for F = `f` and H = `h` below: the deviations reproduced
    /// are SOFA's, and NeoHookean (exact in SOFA) is the control.
    #[test]
    fn tensor_equals_sofas_elasticity_tensor() {
        let f = Mat3::new(1.1, 0.08, -0.05, 0.03, 0.93, 0.06, -0.04, 0.02, 1.05);
        let h = Mat3::new(0.3, -0.2, 0.1, -0.2, 0.5, 0.25, 0.1, 0.25, -0.4);
        let s = Strain::new(&f).unwrap();
        let cases: [(&str, &[f64], [f64; 9]); 3] = [
            (
                "MooneyRivlin",
                &[2.0, 1.5, 10.0],
                [
                    3.075372556432e+00,
                    -2.372555966319e+00,
                    4.810484547182e-01,
                    -2.372555966319e+00,
                    7.324519412733e+00,
                    1.153846387697e+00,
                    4.810484547182e-01,
                    1.153846387697e+00,
                    -7.445344897732e-01,
                ],
            ),
            (
                "Costa",
                &[2.0, 10.0, 1.5, 0.8, 1.2, 0.6, 0.9, 1.1],
                [
                    2.708017785878e+00,
                    -5.097182285666e-01,
                    3.016207940025e-01,
                    -5.097182285666e-01,
                    3.926643188949e+00,
                    -6.147242549440e-02,
                    3.016207940025e-01,
                    -6.147242549440e-02,
                    2.153433094858e+00,
                ],
            ),
            (
                "NeoHookean",
                &[3.0, 20.0],
                [
                    4.585959165414e+00,
                    -1.046699952029e+00,
                    4.969827177579e-01,
                    -1.046699952029e+00,
                    6.913274793000e+00,
                    -6.576370714997e-02,
                    4.969827177579e-01,
                    -6.576370714997e-02,
                    3.905432782621e+00,
                ],
            ),
        ];
        for (name, p, want) in cases {
            let m = Material::from_name(name, p).unwrap();
            let got = sofa_tensor(&m, &s, &h);
            for r in 0..3 {
                for c in 0..3 {
                    let w = want[3 * r + c];
                    assert!(
                        (got[(r, c)] - w).abs() < 1e-10 * (1.0 + w.abs()),
                        "{name} ({r},{c}): {} vs {w}",
                        got[(r, c)]
                    );
                }
            }
            // and the exact derivative differs from it only for the two quirky laws
            let exact = m.tensor(&s, &h);
            assert_eq!((exact - got).norm() < 1e-12, name == "NeoHookean", "{name}");
        }
    }

    #[test]
    fn assembled_matrix_equals_the_product() {
        let (rest, _) = block();
        let x = deformed(&rest, 5);
        for (name, params) in materials() {
            let mut f = ff(name, params);
            let err = assembled_vs_product(&mut f, &x, 12);
            assert!(err < 1e-12, "{name}: {err:e}");
        }
    }

    #[test]
    fn forces_are_the_energy_gradient() {
        let (rest, _) = block();
        let x = deformed(&rest, 6);
        for (name, params) in materials() {
            let mut f = ff(name, params);
            let fx = forces(&mut f, &x);
            let h = 1e-6;
            for i in (0..x.len()).step_by(5) {
                let (mut xp, mut xm) = (x.clone(), x.clone());
                xp[i] += h;
                xm[i] -= h;
                let g = (f.potential_energy(&xp).unwrap() - f.potential_energy(&xm).unwrap())
                    / (2.0 * h);
                assert!((fx[i] + g).abs() < 1e-6 * (1.0 + g.abs()), "{name} {i}");
            }
        }
    }

    /// An element turned inside out: laws with ln J skip it (no NaN), StVenantKirchhoff keeps it.
    #[test]
    fn inverted_elements_give_no_nan() {
        let (rest, _) = block();
        let mut x = rest.clone();
        // push point 0 through the opposite faces of the tetrahedra around it
        x[0] += 1.6;
        x[1] += 0.7;
        x[2] += 1.5;
        for (name, params) in materials() {
            let mut f = ff(name, params);
            let fx = forces(&mut f, &x);
            assert!(fx.iter().all(|v| v.is_finite()), "{name}");
            let mut df = vec![0.0; x.len()];
            f.add_dforce(&vec![1.0; x.len()], &mut df, 1.0);
            assert!(df.iter().all(|v| v.is_finite()), "{name}");
            if name == "StVenantKirchhoff" {
                assert_eq!(f.skipped_elements(), 0);
            } else {
                assert!(f.skipped_elements() > 0, "{name}");
            }
        }
    }

    #[test]
    fn bad_input_is_reported_without_forces() {
        let (rest, tets) = block();
        let x = deformed(&rest, 7);
        let cases = [
            ("Rubber", "3 20", "not valid"),
            ("StableNeoHookean", "3 20", "not valid"),
            ("NeoHookean", "3", "needs 2 parameters"),
            ("ArrudaBoyce", "", "needs 2 parameters"),
            ("NeoHookean", "-3 20", "shear modulus"),
            ("StVenantKirchhoff", "3 -10", "bulk modulus"),
            ("MooneyRivlin", "-2 -1.5 10", "shear modulus"),
            ("Ogden", "3 0 10", "must not be 0"),
        ];
        for (name, params, msg) in cases {
            let mut f = StandardTetrahedralFemForceField::new();
            f.data.set_str("materialName", name).unwrap();
            f.data.set_str("ParameterSet", params).unwrap();
            let d = init(&mut f, &rest, Some(tet_mesh(&tets)));
            assert!(
                d.errors().any(|e| e.message.contains(msg)),
                "{name} [{params}]: {d:?}"
            );
            assert!(f.material().is_none());
            assert!(forces(&mut f, &x).iter().all(|v| *v == 0.0));
        }
        // no bulk stiffness: a warning only
        let mut f = StandardTetrahedralFemForceField::new();
        f.data.set_str("materialName", "MooneyRivlin").unwrap();
        f.data.set_str("ParameterSet", "2 1.5 0").unwrap();
        let d = init(&mut f, &rest, Some(tet_mesh(&tets)));
        assert!(!d.has_errors() && d.len() == 1, "{d:?}");
        // directions and a parameter file are accepted with a warning each
        let mut f = StandardTetrahedralFemForceField::new();
        f.data.set_str("ParameterSet", "3 20").unwrap();
        f.data.set_str("AnisotropyDirections", "1 0 0").unwrap();
        f.data.set_str("ParameterFile", "mat.param").unwrap();
        let d = init(&mut f, &rest, Some(tet_mesh(&tets)));
        assert!(!d.has_errors() && d.len() == 2, "{d:?}");
        // no topology
        let mut f = StandardTetrahedralFemForceField::new();
        f.data.set_str("ParameterSet", "3 20").unwrap();
        let d = init(&mut f, &rest, None);
        assert!(d.has_errors());
        assert!(forces(&mut f, &x).iter().all(|v| *v == 0.0));
        // a flat tetrahedron
        let mut f = StandardTetrahedralFemForceField::new();
        f.data.set_str("ParameterSet", "3 20").unwrap();
        let mut flat_rest = rest.clone();
        flat_rest.extend((0..3).map(|c| 0.5 * (rest[c] + rest[3 + c])));
        let mut bad = tets.clone();
        bad.push([0, 1, 2, 12]);
        let d = init(&mut f, &flat_rest, Some(tet_mesh(&bad)));
        assert!(d.has_errors(), "{d:?}");
        assert!(f.material().is_none());
    }
}

#[cfg(test)]
mod edit_tests {
    use super::*;
    use crate::element::edit_check;

    /// Editing materialName, ParameterSet or rayleighStiffness updates the force field in
    /// place to exactly what an init with the new values gives; a material init would refuse
    /// is refused, and other Data ask for a re-initialisation.
    #[test]
    fn standard_tetra_material_edits_update_in_place() {
        let (rest, mesh, x) = crate::fast_tetra::tests::two_cells();
        let before = [
            ("materialName", "NeoHookean"),
            ("ParameterSet", "1000 3000"),
            ("rayleighStiffness", "0.1"),
        ];
        let make = StandardTetrahedralFemForceField::new;
        let edit =
            |after: &[(&str, &str)]| edit_check::edit(make, &rest, &mesh, &before, after, &x);
        assert_eq!(edit(&[("ParameterSet", "1500 2000")]), Reaction::Updated);
        assert_eq!(
            edit(&[("materialName", "StVenantKirchhoff")]),
            Reaction::Updated
        );
        assert_eq!(edit(&[("rayleighStiffness", "0.25")]), Reaction::Updated);
        assert!(matches!(
            edit(&[("ParameterSet", "1000")]),
            Reaction::Refused(_)
        ));
        assert!(matches!(
            edit(&[("ParameterSet", "-1000 3000")]),
            Reaction::Refused(_)
        ));
        assert!(matches!(
            edit(&[("materialName", "NoSuchMaterial")]),
            Reaction::Refused(_)
        ));
        assert_eq!(
            edit(&[
                ("ParameterSet", "1200 3000"),
                ("ParameterFile", "other.param")
            ]),
            Reaction::Reinit
        );
    }
}
