//! TetrahedronHyperelasticityFEMForceField with SOFA's materials, following
//! Sofa/Component/SolidMechanics/FEM/HyperElastic/.../TetrahedronHyperelasticityFEMForceField.inl
//! and its material/*.h formulations.
//!
//! Per tetrahedron, with gⱼ the gradients of the barycentric coordinates at rest and V₀ the rest
//! volume: F = Σⱼ xⱼ ⊗ gⱼ, C = FᵀF, J = det F (signed, from the positions), the material's
//! second Piola–Kirchhoff stress S(C), and the nodal forces fₗ = −V₀·F·S·gₗ. The tangent is
//! accumulated per edge (k, l) of the mesh as V₀·[(gₖ·S·gₗ)·I + N], row m of N being
//! (F·𝒜(Hₘ)·gₖ)ᵀ with Hₘ = gₗ⊗fₘ + fₘ⊗gₗ (fₘ row m of F) and 𝒜(H) the change of S for a change
//! H of C; the vertex blocks follow from the edge blocks (the gradients sum to zero).
//!
//! Materials (`materialName`, `ParameterSet`): ArrudaBoyce [μ, k0] (chain parameter 8, five
//! terms), StVenantKirchhoff [μ, λ], NeoHookean [μ, λ], MooneyRivlin [c1, c2, k0],
//! VerondaWestman [c1, c2, k0], Costa [a, k0, bff, bfs, bss, bfn, bsn, bnn] (fibres along x, y,
//! z), Ogden [μ1, α1, k0], StableNeoHookean [μ, λ]. Two of SOFA's tangents are not followed:
//! Costa's lacks a factor k0 on its J·lnJ·C⁻¹HC⁻¹ term, and Ogden's mixes each tetrahedron's
//! eigenvectors with quantities of the last tetrahedron of the force loop; both are computed
//! exactly here (the forces are SOFA's).

use crate::common::fem_inputs;
use canape_core::component::{ForceField, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, ForceFieldData, Reals, Text};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{get3, Mat3, Vec3};

/// Arruda–Boyce series coefficients for the chain parameter 8 (SOFA's BoyceAndArruda.h).
const AB_COEF: [f64; 5] = [
    0.5,
    1.0 / 160.0,
    11.0 / (1050.0 * 64.0),
    19.0 / (7000.0 * 512.0),
    519.0 / (673750.0 * 4096.0),
];

/// The strain quantities a material reads.
#[derive(Clone, Copy, Debug)]
pub struct Strain {
    pub c: Mat3,
    pub ci: Mat3,
    pub j: f64,
    pub i1: f64,
}

impl Strain {
    pub fn new(f: &Mat3) -> Option<Strain> {
        let c = f.transpose() * f;
        let ci = c.try_inverse()?;
        Some(Strain {
            c,
            ci,
            j: f.determinant(),
            i1: c.trace(),
        })
    }
    fn i2(&self) -> f64 {
        0.5 * (self.i1 * self.i1 - self.c.component_mul(&self.c).sum())
    }
}

/// Full contraction A:B.
fn ddot(a: &Mat3, b: &Mat3) -> f64 {
    a.component_mul(b).sum()
}

#[derive(Clone, Debug, PartialEq)]
pub enum Material {
    ArrudaBoyce { mu: f64, k0: f64 },
    StVenantKirchhoff { mu: f64, lambda: f64 },
    NeoHookean { mu: f64, lambda: f64 },
    MooneyRivlin { c1: f64, c2: f64, k0: f64 },
    VerondaWestman { c1: f64, c2: f64, k0: f64 },
    Costa { a: f64, k0: f64, b: [f64; 6] },
    Ogden { mu: f64, alpha: f64, k0: f64 },
    StableNeoHookean { mu: f64, lambda: f64 },
}

/// The spectral pieces of C that Ogden's law reads: eigenvalues and eigenvectors.
fn eigen(c: &Mat3) -> (Vec3, Mat3) {
    let e = nalgebra::SymmetricEigen::new(*c);
    (e.eigenvalues, e.eigenvectors)
}

/// Σ fᵢ(λᵢ) nᵢ⊗nᵢ.
fn spectral(vals: &Vec3, vecs: &Mat3, f: impl Fn(f64) -> f64) -> Mat3 {
    let mut m = Mat3::zeros();
    for i in 0..3 {
        let n = vecs.column(i);
        m += n * n.transpose() * f(vals[i]);
    }
    m
}

/// Why a hyperelastic material cannot be made from its name and `ParameterSet`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MaterialError {
    #[error("material {name} needs {needed} parameters in ParameterSet ({given} given)")]
    MissingParameters {
        name: String,
        needed: usize,
        given: usize,
    },
    #[error("ParameterSet holds a non-finite value")]
    NonFiniteParameter,
    #[error("Ogden's α1 (second parameter) must not be 0")]
    OgdenZeroAlpha,
    #[error("StableNeoHookean needs μ + λ ≠ 0")]
    StableNeoHookeanDegenerate,
    #[error("unknown material '{name}' (ArrudaBoyce, StVenantKirchhoff, NeoHookean, MooneyRivlin, VerondaWestman, Costa, Ogden, StableNeoHookean)")]
    Unknown { name: String },
}

impl Material {
    /// The material named as SOFA names it, with its parameters.
    pub fn from_name(name: &str, p: &[f64]) -> Result<Material, MaterialError> {
        let need = |n: usize| -> Result<(), MaterialError> {
            if p.len() < n {
                Err(MaterialError::MissingParameters {
                    name: name.to_string(),
                    needed: n,
                    given: p.len(),
                })
            } else if p[..n].iter().any(|v| !v.is_finite()) {
                Err(MaterialError::NonFiniteParameter)
            } else {
                Ok(())
            }
        };
        Ok(match name {
            "ArrudaBoyce" => {
                need(2)?;
                Material::ArrudaBoyce { mu: p[0], k0: p[1] }
            }
            "StVenantKirchhoff" => {
                need(2)?;
                Material::StVenantKirchhoff {
                    mu: p[0],
                    lambda: p[1],
                }
            }
            "NeoHookean" => {
                need(2)?;
                Material::NeoHookean {
                    mu: p[0],
                    lambda: p[1],
                }
            }
            "MooneyRivlin" => {
                need(3)?;
                Material::MooneyRivlin {
                    c1: p[0],
                    c2: p[1],
                    k0: p[2],
                }
            }
            "VerondaWestman" => {
                need(3)?;
                Material::VerondaWestman {
                    c1: p[0],
                    c2: p[1],
                    k0: p[2],
                }
            }
            "Costa" => {
                need(8)?;
                Material::Costa {
                    a: p[0],
                    k0: p[1],
                    b: [p[2], p[3], p[4], p[5], p[6], p[7]],
                }
            }
            "Ogden" => {
                need(3)?;
                if p[1] == 0.0 {
                    return Err(MaterialError::OgdenZeroAlpha);
                }
                Material::Ogden {
                    mu: p[0],
                    alpha: p[1],
                    k0: p[2],
                }
            }
            "StableNeoHookean" => {
                need(2)?;
                if p[0] + p[1] == 0.0 {
                    return Err(MaterialError::StableNeoHookeanDegenerate);
                }
                Material::StableNeoHookean {
                    mu: p[0],
                    lambda: p[1],
                }
            }
            _ => {
                return Err(MaterialError::Unknown {
                    name: name.to_string(),
                })
            }
        })
    }

    /// Costa's component-wise weighting U∘X (fibre, sheet, normal along x, y, z).
    fn costa_u(b: &[f64; 6], x: &Mat3) -> Mat3 {
        let [bff, bfs, bss, bfn, bsn, bnn] = *b;
        Mat3::new(
            bff * x[(0, 0)],
            bfs * x[(0, 1)],
            bfn * x[(0, 2)],
            bfs * x[(1, 0)],
            bss * x[(1, 1)],
            bsn * x[(1, 2)],
            bfn * x[(2, 0)],
            bsn * x[(2, 1)],
            bnn * x[(2, 2)],
        )
    }

    /// Strain energy density W(C).
    pub fn energy(&self, s: &Strain) -> f64 {
        let (j, i1) = (s.j, s.i1);
        let lnj = j.ln();
        match *self {
            Material::ArrudaBoyce { mu, k0 } => {
                let mut w = 0.0;
                for (k, ci) in AB_COEF.iter().enumerate() {
                    let i = (k + 1) as f64;
                    w += ci * (j.powf(-2.0 * i / 3.0) * i1.powf(i) - 3f64.powf(i));
                }
                mu * w + 0.5 * k0 * lnj * lnj
            }
            Material::StVenantKirchhoff { mu, lambda } => {
                let e = (s.c - Mat3::identity()) * 0.5;
                0.5 * lambda * e.trace() * e.trace() + mu * ddot(&e, &e)
            }
            Material::NeoHookean { mu, lambda } => {
                0.5 * mu * (i1 - 3.0) - mu * lnj + 0.5 * lambda * lnj * lnj
            }
            Material::MooneyRivlin { c1, c2, k0 } => {
                c1 * (j.powf(-2.0 / 3.0) * i1 - 3.0)
                    + c2 * (j.powf(-4.0 / 3.0) * s.i2() - 3.0)
                    + 0.5 * k0 * lnj * lnj
            }
            Material::VerondaWestman { c1, c2, k0 } => {
                let e = (c2 * (j.powf(-2.0 / 3.0) * i1 - 3.0)).exp();
                c1 * (e - 1.0) - 0.5 * c1 * c2 * (j.powf(-4.0 / 3.0) * s.i2() - 3.0)
                    + 0.5 * k0 * lnj * lnj
            }
            Material::Costa { a, k0, ref b } => {
                let e = (s.c - Mat3::identity()) * 0.5;
                let q = ddot(&e, &Self::costa_u(b, &e));
                0.5 * a * ((j.powf(-4.0 / 3.0) * q).exp() - 1.0) + k0 * (j * lnj - j - 1.0)
            }
            Material::Ogden { mu, alpha, k0 } => {
                let (vals, _) = eigen(&s.c);
                let tr: f64 = vals.iter().map(|l| l.powf(alpha / 2.0)).sum();
                mu / (alpha * alpha) * (j.powf(-alpha / 3.0) * tr - 3.0) + 0.5 * k0 * lnj * lnj
            }
            Material::StableNeoHookean { mu, lambda } => {
                let al = 1.0 + mu / (lambda + mu);
                0.5 * (mu * (i1 - 3.0) + (lambda + mu) * (j - al) * (j - al))
            }
        }
    }

    /// The second Piola–Kirchhoff stress S = 2 ∂W/∂C.
    pub fn stress(&self, s: &Strain) -> Mat3 {
        let id = Mat3::identity();
        let (j, i1, ci) = (s.j, s.i1, s.ci);
        let lnj = j.ln();
        match *self {
            Material::ArrudaBoyce { mu, k0 } => {
                let mut out = ci * (k0 * lnj);
                for (k, c) in AB_COEF.iter().enumerate() {
                    let i = (k + 1) as f64;
                    let w = 2.0 * mu * c * j.powf(-2.0 * i / 3.0);
                    out += (id * (i * i1.powf(i - 1.0)) - ci * (i / 3.0 * i1.powf(i))) * w;
                }
                out
            }
            Material::StVenantKirchhoff { mu, lambda } => {
                let tr_e = (i1 - 3.0) / 2.0;
                id * (lambda * tr_e - mu) + s.c * mu
            }
            Material::NeoHookean { mu, lambda } => id * mu + ci * (lambda * lnj - mu),
            Material::MooneyRivlin { c1, c2, k0 } => {
                (id - ci * (i1 / 3.0)) * (2.0 * c1 * j.powf(-2.0 / 3.0))
                    + (id * i1 - s.c - ci * (2.0 / 3.0 * s.i2())) * (2.0 * c2 * j.powf(-4.0 / 3.0))
                    + ci * (k0 * lnj)
            }
            Material::VerondaWestman { c1, c2, k0 } => {
                let e = (c2 * (j.powf(-2.0 / 3.0) * i1 - 3.0)).exp();
                (id - ci * (i1 / 3.0)) * (2.0 * c1 * c2 * j.powf(-2.0 / 3.0) * e)
                    - (id * i1 - s.c - ci * (2.0 / 3.0 * s.i2())) * (c1 * c2 * j.powf(-4.0 / 3.0))
                    + ci * (k0 * lnj)
            }
            Material::Costa { a, k0, ref b } => {
                let e = (s.c - id) * 0.5;
                let ue = Self::costa_u(b, &e);
                let q = ddot(&e, &ue);
                let jm = j.powf(-4.0 / 3.0);
                (ue - ci * (2.0 / 3.0 * q)) * (a * (jm * q).exp() * jm) + ci * (k0 * j * lnj)
            }
            Material::Ogden { mu, alpha, k0 } => {
                let (vals, vecs) = eigen(&s.c);
                let fj = j.powf(-alpha / 3.0);
                let tr: f64 = vals.iter().map(|l| l.powf(alpha / 2.0)).sum();
                let ca = spectral(&vals, &vecs, |l| l.powf(alpha / 2.0 - 1.0));
                ca * (mu / alpha * fj) - ci * (mu / (3.0 * alpha) * fj * tr) + ci * (k0 * lnj)
            }
            Material::StableNeoHookean { mu, lambda } => {
                let al = 1.0 + mu / (lambda + mu);
                id * mu + ci * ((lambda + mu) * j * (j - al))
            }
        }
    }

    /// 𝒜(H): the change of S for a change H of C (H symmetric).
    pub fn tensor(&self, s: &Strain, h: &Mat3) -> Mat3 {
        let id = Mat3::identity();
        let (j, i1, ci) = (s.j, s.i1, s.ci);
        let lnj = j.ln();
        let q = ddot(&ci, h);
        let t = h.trace();
        let g = ci * h * ci;
        let vol = |k0: f64| ci * (0.5 * k0 * q) - g * (k0 * lnj);
        match *self {
            Material::ArrudaBoyce { mu, k0 } => {
                let mut out = vol(k0);
                for (k, c) in AB_COEF.iter().enumerate() {
                    let i = (k + 1) as f64;
                    let w = 2.0 * mu * c * j.powf(-2.0 * i / 3.0);
                    let base = id * (i * i1.powf(i - 1.0)) - ci * (i / 3.0 * i1.powf(i));
                    let second = if k >= 1 {
                        id * (i * (i - 1.0) * i1.powf(i - 2.0) * t)
                    } else {
                        Mat3::zeros()
                    };
                    out += (base * (-(i / 3.0) * q) + second
                        - ci * (i * i / 3.0 * i1.powf(i - 1.0) * t)
                        + g * (i / 3.0 * i1.powf(i)))
                        * w;
                }
                out
            }
            Material::StVenantKirchhoff { mu, lambda } => id * (0.5 * lambda * t) + h * mu,
            Material::NeoHookean { mu, lambda } => {
                g * (mu - lambda * lnj) + ci * (0.5 * lambda * q)
            }
            Material::MooneyRivlin { c1, c2, k0 } => {
                let i2 = s.i2();
                let cc = ddot(&s.c, h);
                ((id - ci * (i1 / 3.0)) * (-q / 3.0) + g * (i1 / 3.0) - ci * (t / 3.0))
                    * (2.0 * c1 * j.powf(-2.0 / 3.0))
                    + ((id * i1 - s.c - ci * (2.0 / 3.0 * i2)) * (-2.0 * q / 3.0)
                        + g * (2.0 / 3.0 * i2)
                        - ci * (2.0 / 3.0 * (i1 * t - cc))
                        + id * t
                        - h)
                        * (2.0 * c2 * j.powf(-4.0 / 3.0))
                    + vol(k0)
            }
            Material::VerondaWestman { c1, c2, k0 } => {
                let i2 = s.i2();
                let cc = ddot(&s.c, h);
                let e = (c2 * (j.powf(-2.0 / 3.0) * i1 - 3.0)).exp();
                let j23 = j.powf(-2.0 / 3.0);
                let j43 = j.powf(-4.0 / 3.0);
                (ci * (i1 * q / 9.0) - ci * (t / 3.0) + g * (i1 / 3.0) - id * (q / 3.0))
                    * (2.0 * c1 * c2 * j23 * e)
                    + (id - ci * (i1 / 3.0)) * (2.0 * c1 * c2 * c2 * j43 * e * (t - i1 * q / 3.0))
                    + (ci * (-4.0 / 9.0 * q * i2) + ci * (2.0 / 3.0 * i1 * t)
                        - ci * (2.0 / 3.0 * cc)
                        - g * (2.0 / 3.0 * i2)
                        + id * (2.0 / 3.0 * q * i1)
                        - id * t
                        - s.c * (2.0 / 3.0 * q)
                        + h)
                        * (c1 * c2 * j43)
                    + vol(k0)
            }
            Material::Costa { a, k0, ref b } => {
                let e = (s.c - id) * 0.5;
                let ue = Self::costa_u(b, &e);
                let uh = Self::costa_u(b, h);
                let qq = ddot(&e, &ue);
                let jm = j.powf(-4.0 / 3.0);
                let ex = (jm * qq).exp();
                let hue = ddot(h, &ue);
                let base = ue - ci * (2.0 / 3.0 * qq);
                (base * (-2.0 * q / 3.0) + uh * 0.5 + g * (2.0 / 3.0 * qq) - ci * (2.0 / 3.0 * hue))
                    * (a * jm * ex)
                    + base * (a * jm * jm * ex * (hue - 2.0 / 3.0 * qq * q))
                    + ci * (0.5 * k0 * j * (lnj + 1.0) * q)
                    - g * (k0 * j * lnj)
            }
            Material::Ogden { mu, alpha, k0 } => {
                let (vals, vecs) = eigen(&s.c);
                let fj = j.powf(-alpha / 3.0);
                let tr: f64 = vals.iter().map(|l| l.powf(alpha / 2.0)).sum();
                let p = alpha / 2.0 - 1.0;
                let ca = spectral(&vals, &vecs, |l| l.powf(p));
                // the derivative of C^p along H, in C's eigenbasis
                let mut dca = Mat3::zeros();
                for i in 0..3 {
                    let ni = vecs.column(i);
                    for k in 0..3 {
                        let nk = vecs.column(k);
                        let hik = (ni.transpose() * h * nk)[(0, 0)];
                        let theta = if (vals[i] - vals[k]).abs() < f64::EPSILON {
                            p * vals[i].powf(p - 1.0)
                        } else {
                            (vals[i].powf(p) - vals[k].powf(p)) / (vals[i] - vals[k])
                        };
                        dca += ni * nk.transpose() * (theta * hik);
                    }
                }
                dca * (mu / alpha * fj) - (ca * q + ci * ddot(&ca, h)) * (mu / 6.0 * fj)
                    + ci * (mu / 18.0 * fj * tr * q)
                    + g * (mu / (3.0 * alpha) * fj * tr)
                    + vol(k0)
            }
            Material::StableNeoHookean { mu, lambda } => {
                let al = 1.0 + mu / (lambda + mu);
                (ci * (0.5 * j * (2.0 * j - al) * q) - g * (j * (j - al))) * (lambda + mu)
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Tet {
    idx: [usize; 4],
    g: [Vec3; 4],
    v0: f64,
    /// The tetrahedron's 6 edges: (global edge index, whether the global edge starts at the
    /// local vertex listed second).
    edges: [(usize, bool); 6],
}

const LOCAL_EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];

canape_core::data_schema! {
    /// TetrahedronHyperelasticityFEMForceField's own Data (after the force-field Data).
    struct HyperelasticData {
        material_name: Text = ("materialName", DataKind::Str, "ArrudaBoyce", "the name of the material to be used"),
        parameter_set: Reals = ("ParameterSet", DataKind::Reals(0), "", "The global parameters specifying the material"),
        anisotropy_directions: Reals = ("AnisotropyDirections", DataKind::Reals(3), "", "The global directions of anisotropy of the material"),
        matrix_regularization: Flag = ("matrixRegularization", DataKind::Bool, "0", "Regularization of the Stiffness Matrix (between true or false)"),
    }
}

#[derive(Clone)]
pub struct TetrahedronHyperelasticityFemForceField {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: HyperelasticData,
    material: Option<Material>,
    tets: Vec<Tet>,
    /// Global edges (first, second vertex) and their blocks ∂²W/∂x_second∂x_first.
    edges: Vec<[usize; 2]>,
    dfdx: Vec<Mat3>,
    rayleigh: f64,
    /// Tetrahedra the last `add_force` found inverted (J ≤ 0).
    inverted: usize,
}

impl Default for TetrahedronHyperelasticityFemForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl TetrahedronHyperelasticityFemForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = HyperelasticData::declare(data);
        TetrahedronHyperelasticityFemForceField {
            data,
            ff,
            d,
            material: None,
            tets: Vec::new(),
            edges: Vec::new(),
            dfdx: Vec::new(),
            rayleigh: 0.0,
            inverted: 0,
        }
    }

    /// Set up the tetrahedra from rest positions (init and tests).
    pub fn setup(&mut self, material: Material, rest: &[f64], tets: &[[u32; 4]]) {
        self.material = Some(material);
        let mut index = std::collections::BTreeMap::new();
        self.edges.clear();
        self.tets = tets
            .iter()
            .map(|t| {
                let idx = t.map(|i| i as usize);
                let p: [Vec3; 4] = idx.map(|i| get3(rest, i));
                let vol6 = (p[2] - p[0]).cross(&(p[3] - p[0])).dot(&(p[1] - p[0]));
                let g = std::array::from_fn(|j| {
                    let s = if j % 2 == 0 { -1.0 } else { 1.0 };
                    let (a, b, c) = (p[(j + 1) % 4], p[(j + 2) % 4], p[(j + 3) % 4]);
                    (b - a).cross(&(c - a)) * (s / vol6)
                });
                let edges = LOCAL_EDGES.map(|[a, b]| {
                    let (va, vb) = (idx[a], idx[b]);
                    let key = (va.min(vb), va.max(vb));
                    let n = index.len();
                    let e = *index.entry(key).or_insert(n);
                    if e == self.edges.len() {
                        self.edges.push([key.0, key.1]);
                    }
                    (e, va != key.0)
                });
                Tet {
                    idx,
                    g,
                    v0: vol6.abs() / 6.0,
                    edges,
                }
            })
            .collect();
        self.dfdx = vec![Mat3::zeros(); self.edges.len()];
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        self.tets.clear();
        self.material = None;
        let material = match self.material_from_data() {
            Ok(m) => m,
            Err(e) => {
                ctx.error(e.to_string());
                return;
            }
        };
        if !self.data.get(self.d.anisotropy_directions).is_empty() {
            ctx.warn("AnisotropyDirections has no effect (as in SOFA: no material reads it)");
        }
        let Some((rest, mesh)) =
            fem_inputs(ctx, &self.data, |m| !m.tetrahedra.is_empty(), "tetrahedra")
        else {
            return;
        };
        self.setup(material, &rest, &mesh.tetrahedra);
        let flat = self
            .tets
            .iter()
            .filter(|t| t.v0.is_nan() || t.v0 <= 0.0)
            .count();
        if flat > 0 {
            ctx.error(format!("{flat} tetrahedra have no volume at rest"));
            self.tets.clear();
        }
    }

    /// The material named by `materialName` with `ParameterSet`.
    fn material_from_data(&self) -> Result<Material, MaterialError> {
        let name = self.data.get(self.d.material_name).trim();
        Material::from_name(name, self.data.get(self.d.parameter_set))
    }

    fn deformation(t: &Tet, x: &[f64]) -> Mat3 {
        let p0 = get3(x, t.idx[0]);
        let mut f = Mat3::zeros();
        for j in 1..4 {
            f += (get3(x, t.idx[j]) - p0) * t.g[j].transpose();
        }
        f
    }
}

impl TetrahedronHyperelasticityFemForceField {
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let material = [
            self.d.material_name.index(),
            self.d.parameter_set.index(),
            self.ff.rayleigh_stiffness.index(),
        ];
        if !changed.only(&material) || self.tets.is_empty() || self.material.is_none() {
            return Reaction::Reinit;
        }
        match self.material_from_data() {
            Ok(m) => {
                self.material = Some(m);
                self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
                Reaction::Updated
            }
            Err(e) => Reaction::Refused(vec![e.to_string()]),
        }
    }
}

canape_core::impl_component!(
    TetrahedronHyperelasticityFemForceField,
    "TetrahedronHyperelasticityFEMForceField",
    init,
    data_changed
);

impl ForceField for TetrahedronHyperelasticityFemForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let Some(material) = self.material.clone() else {
            return;
        };
        self.dfdx.iter_mut().for_each(|m| *m = Mat3::zeros());
        self.inverted = 0;
        for t in &self.tets {
            let fm = Self::deformation(t, x);
            let Some(strain) = Strain::new(&fm) else {
                self.inverted += 1;
                continue;
            };
            if strain.j <= 0.0 {
                self.inverted += 1;
            }
            let s = material.stress(&strain);
            for l in 0..4 {
                let fl = fm * (s * t.g[l]) * t.v0;
                let n = t.idx[l];
                for c in 0..3 {
                    f[3 * n + c] -= fl[c];
                }
            }
            // the tangent, per edge: ∂²W/∂x_l∂x_k with k the global edge's first vertex
            for (e, &[a, b]) in LOCAL_EDGES.iter().enumerate() {
                let (ge, flipped) = t.edges[e];
                let (k, l) = if flipped { (b, a) } else { (a, b) };
                let (gk, gl) = (t.g[k], t.g[l]);
                let mut blk = Mat3::identity() * gk.dot(&(s * gl));
                for m in 0..3 {
                    let fr: Vec3 = fm.row(m).transpose();
                    let h = gl * fr.transpose() + fr * gl.transpose();
                    let row = fm * (material.tensor(&strain, &h) * gk);
                    for c in 0..3 {
                        blk[(m, c)] += row[c];
                    }
                }
                self.dfdx[ge] += blk * t.v0;
            }
        }
    }

    fn inverted_elements(&self) -> usize {
        self.inverted
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        for (e, &[v0, v1]) in self.edges.iter().enumerate() {
            let m = &self.dfdx[e];
            let d = get3(dx, v0) - get3(dx, v1);
            let a = m.transpose() * d * k_factor;
            let b = m * d * k_factor;
            for c in 0..3 {
                df[3 * v0 + c] += a[c];
                df[3 * v1 + c] -= b[c];
            }
        }
    }

    fn add_k_to_matrix(&self, mat: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        for (e, &[v0, v1]) in self.edges.iter().enumerate() {
            let m = self.dfdx[e] * k_factor;
            let mt = m.transpose();
            let (a, b) = (offset + 3 * v0, offset + 3 * v1);
            mat.add_block3(a, a, &mt);
            mat.add_block3(a, b, &(-mt));
            mat.add_block3(b, a, &(-m));
            mat.add_block3(b, b, &m);
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }

    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        let material = self.material.as_ref()?;
        let mut w = 0.0;
        for t in &self.tets {
            let s = Strain::new(&Self::deformation(t, x))?;
            w += t.v0 * material.energy(&s);
        }
        Some(w)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod edit_tests {
    use super::*;
    use crate::element::edit_check;
    use canape_core::mesh::Mesh;

    /// Editing materialName, ParameterSet or rayleighStiffness updates the force field in
    /// place to exactly what an init with the new values gives; a material that cannot be
    /// made is refused, and other Data ask for a re-initialisation.
    #[test]
    fn hyperelastic_material_edits_update_in_place() {
        let mut seed = 11;
        let mut rest = Vec::new();
        for k in 0..2 {
            for j in 0..2 {
                for i in 0..3 {
                    for v in [i as f64, j as f64 * 0.8, k as f64 * 1.2] {
                        rest.push(v + 0.05 * crate::fd_check::rnd(&mut seed));
                    }
                }
            }
        }
        let idx = |i: u32, j: u32, k: u32| i + 3 * (j + 2 * k);
        let tetrahedra = (0..2)
            .flat_map(|x| {
                let h = [
                    idx(x, 0, 0),
                    idx(x + 1, 0, 0),
                    idx(x + 1, 1, 0),
                    idx(x, 1, 0),
                    idx(x, 0, 1),
                    idx(x + 1, 0, 1),
                    idx(x + 1, 1, 1),
                    idx(x, 1, 1),
                ];
                canape_core::mesh::hexa_to_tetras(h, false)
            })
            .collect();
        let mesh = Mesh {
            tetrahedra,
            ..Default::default()
        };
        let x: Vec<f64> = crate::fd_check::rigidly_moved(&rest)
            .iter()
            .map(|v| v + 0.05 * crate::fd_check::rnd(&mut seed))
            .collect();
        let before = [
            ("materialName", "NeoHookean"),
            ("ParameterSet", "1000 3000"),
            ("rayleighStiffness", "0.1"),
        ];
        let make = TetrahedronHyperelasticityFemForceField::new;
        let edit =
            |after: &[(&str, &str)]| edit_check::edit(make, &rest, &mesh, &before, after, &x);
        assert_eq!(edit(&[("ParameterSet", "1500 2000")]), Reaction::Updated);
        assert_eq!(
            edit(&[("materialName", "StVenantKirchhoff")]),
            Reaction::Updated
        );
        assert_eq!(edit(&[("rayleighStiffness", "0.25")]), Reaction::Updated);
        assert_eq!(
            edit(&[
                ("materialName", "ArrudaBoyce"),
                ("ParameterSet", "800 5000"),
                ("rayleighStiffness", "0"),
            ]),
            Reaction::Updated
        );
        assert!(matches!(
            edit(&[("ParameterSet", "1000")]),
            Reaction::Refused(_)
        ));
        assert!(matches!(
            edit(&[("materialName", "NoSuchMaterial")]),
            Reaction::Refused(_)
        ));
        assert_eq!(
            edit(&[("ParameterSet", "1200 3000"), ("matrixRegularization", "1")]),
            Reaction::Reinit
        );
    }
}
