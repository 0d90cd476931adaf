//! LinearSmallStrainFEMForceField and CorotationalFEMForceField ([`ElementFemForceField`]):
//! their Data, the element rotations of SOFA's `rotationMethod` ([`Rotation`]) and the
//! element loops over the stiffnesses of the parent module's shapes.

use super::{element_stiffness, Shape};
use crate::common::{check_material, fem_inputs};
use canape_core::component::{ForceField, Reaction};
use canape_core::data::{
    ChangedData, Data, DataKind, DataTable, ForceFieldData, Real, Reals, Text,
};
use canape_core::matrix::MatrixSink;
use canape_core::mesh::Mesh;
use canape_core::registry::TemplateError;
use canape_core::scene::InitContext;
use canape_types::{get3, Mat3, Vec3};

/// SOFA's `rotationMethod` of the corotational element force field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rotation {
    /// "triangle" (tetrahedra) or "hexahedron" (hexahedra): from the element frame.
    Frame,
    /// "polar": the orthogonal factor of H (SOFA's helper polarDecomposition).
    Polar,
    /// "stable_polar": the rotation of H's SVD (polarDecomposition_stable).
    StablePolar,
    /// "identity": no rotation.
    Identity,
}

impl Rotation {
    /// The method a scene names for a shape; None when the shape does not offer it. An empty
    /// name gives the shape's default (SOFA's RotationMethods specialisations).
    pub fn parse(name: &str, shape: Shape) -> Option<Rotation> {
        match (name, shape) {
            ("", Shape::Tetrahedron | Shape::Hexahedron) => Some(Rotation::Frame),
            ("", Shape::Prism) => Some(Rotation::StablePolar),
            ("triangle", Shape::Tetrahedron) | ("hexahedron", Shape::Hexahedron) => {
                Some(Rotation::Frame)
            }
            ("polar", _) => Some(Rotation::Polar),
            ("stable_polar", _) => Some(Rotation::StablePolar),
            ("identity", _) => Some(Rotation::Identity),
            _ => None,
        }
    }

    /// The element's rotation from rest `x0` (frame `c0`) to current `p`.
    fn compute(self, shape: Shape, p: &[Vec3], x0: &[Vec3], c0: &Mat3) -> Mat3 {
        let centroid = |v: &[Vec3]| v.iter().fold(Vec3::zeros(), |a, b| a + b) / v.len() as f64;
        let h = || {
            let (c, cr) = (centroid(p), centroid(x0));
            p.iter().zip(x0).fold(Mat3::zeros(), |h, (a, b)| {
                h + (a - c) * (b - cr).transpose()
            })
        };
        match self {
            Rotation::Frame => frame(shape, p).transpose() * c0,
            Rotation::Polar => crate::common::polar_q(&h()),
            Rotation::StablePolar => crate::common::stable_rotation(&h()),
            Rotation::Identity => Mat3::identity(),
        }
    }
}

/// Element frame (rows x, y, z) of the "triangle" and "hexahedron" rotation methods (a prism
/// takes its bottom triangle's, though no method of SOFA's uses it).
fn frame(shape: Shape, p: &[Vec3]) -> Mat3 {
    let (ex, ey) = match shape {
        Shape::Tetrahedron | Shape::Prism => (p[1] - p[0], p[2] - p[0]),
        Shape::Hexahedron => (
            (p[1] - p[0] + (p[2] - p[3]) + (p[5] - p[4]) + (p[6] - p[7])) * 0.25,
            (p[3] - p[0] + (p[2] - p[1]) + (p[7] - p[4]) + (p[6] - p[5])) * 0.25,
        ),
    };
    let x = ex.normalize();
    let z = x.cross(&ey).normalize();
    let y = z.cross(&x);
    Mat3::from_rows(&[x.transpose(), y.transpose(), z.transpose()])
}

canape_core::data_schema! {
    /// The Data LinearSmallStrainFEMForceField and CorotationalFEMForceField add to the
    /// force-field Data.
    struct ElementFemData {
        young: Reals = ("youngModulus", DataKind::Reals(0), "5000", "Young's modulus in Hooke's law (one value, or one per element)"),
        poisson: Reals = ("poissonRatio", DataKind::Reals(0), "0.45", "Poisson's ratio in Hooke's law (one value, or one per element)"),
        compute_force_strategy: Text = ("computeForceStrategy", DataKind::Str, "parallel", "The compute strategy used to compute the forces (results do not depend on it)"),
        compute_force_deriv_strategy: Text = ("computeForceDerivStrategy", DataKind::Str, "parallel", "The compute strategy used to compute the force derivatives (results do not depend on it)"),
        element_space: Real = ("elementSpace", DataKind::Real, "0.125", "When rendering, the space between elements"),
    }
}

canape_core::data_schema! {
    /// CorotationalFEMForceField's own Data (after [`ElementFemData`]).
    struct CorotationalData {
        rotation_method: Text = ("rotationMethod", DataKind::Str, "", "The method used to compute the element rotations: stable_polar, polar, identity, and triangle for tetrahedra (their default), hexahedron for hexahedra (their default); prisms default to stable_polar"),
    }
}

/// The typed handles of an [`ElementFemForceField`]'s Data.
#[derive(Clone, Copy, Debug)]
struct ElementHandles {
    ff: ForceFieldData,
    d: ElementFemData,
    /// `rotationMethod` (CorotationalFEMForceField only).
    rotation_method: Option<Data<Text>>,
}

#[derive(Clone)]
struct Elem {
    idx: Vec<u32>,
    k: Vec<f64>,
    /// Rest positions (world frame): the element stiffness is recomputed from them when the
    /// material is edited.
    rest: Vec<Vec3>,
    c0: Mat3,
    r: Mat3,
}

/// LinearSmallStrainFEMForceField (`corotational == false`) and CorotationalFEMForceField.
#[derive(Clone)]
pub struct ElementFemForceField {
    class: &'static str,
    corotational: bool,
    shape: Shape,
    pub(super) rotation: Rotation,
    data: DataTable,
    /// Typed handles to the Data in `data`.
    h: ElementHandles,
    elems: Vec<Elem>,
    rayleigh: f64,
}

impl ElementFemForceField {
    pub fn new(corotational: bool, template: &str) -> Result<Self, TemplateError> {
        let shape = Shape::from_template(template)?;
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (mut data, d) = ElementFemData::declare(data);
        let mut rotation_method = None;
        if corotational {
            let (t, c) = CorotationalData::declare(data);
            data = t;
            rotation_method = Some(c.rotation_method);
        }
        Ok(ElementFemForceField {
            class: if corotational {
                "CorotationalFEMForceField"
            } else {
                "LinearSmallStrainFEMForceField"
            },
            corotational,
            shape,
            rotation: Rotation::parse("", shape).unwrap_or(Rotation::Identity),
            data,
            h: ElementHandles {
                ff,
                d,
                rotation_method,
            },
            elems: Vec::new(),
            rayleigh: 0.0,
        })
    }

    /// Young's moduli and Poisson's ratios (one, or one per element), never empty.
    fn moduli(&self) -> (Vec<f64>, Vec<f64>) {
        let or = |v: &[f64], d: f64| if v.is_empty() { vec![d] } else { v.to_vec() };
        (
            or(self.data.get(self.h.d.young), 5000.0),
            or(self.data.get(self.h.d.poisson), 0.45),
        )
    }

    /// The stiffness of element `k` with rest positions `x`, from the moduli of [`Self::moduli`].
    fn stiffness_of(&self, k: usize, x: &[Vec3], (e, nu): &(Vec<f64>, Vec<f64>)) -> Vec<f64> {
        element_stiffness(
            self.shape,
            x,
            *e.get(k).unwrap_or(&e[0]),
            *nu.get(k).unwrap_or(&nu[0]),
        )
    }

    /// Set up elements (used by init and tests).
    pub fn setup(&mut self, rest: &[f64], mesh: &Mesh) {
        let moduli = self.moduli();
        self.elems = self
            .shape
            .elements(mesh)
            .into_iter()
            .enumerate()
            .map(|(k, idx)| {
                let x: Vec<Vec3> = idx.iter().map(|&i| get3(rest, i as usize)).collect();
                let km = self.stiffness_of(k, &x, &moduli);
                let c0 = frame(self.shape, &x);
                Elem {
                    idx,
                    k: km,
                    rest: x,
                    c0,
                    r: Mat3::identity(),
                }
            })
            .collect();
    }

    /// Recompute every element's stiffness from its rest positions and the current moduli
    /// (rest frames and rotations kept): what [`Self::setup`] computes for the same rest
    /// positions.
    fn update_stiffness(&mut self) {
        let moduli = self.moduli();
        let ks: Vec<Vec<f64>> = self
            .elems
            .iter()
            .enumerate()
            .map(|(k, el)| self.stiffness_of(k, &el.rest, &moduli))
            .collect();
        for (el, k) in self.elems.iter_mut().zip(ks) {
            el.k = k;
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.h.ff.rayleigh_stiffness);
        self.elems.clear();
        if let Some(rotation_method) = self.h.rotation_method {
            let m = self.data.get(rotation_method).trim().to_string();
            self.rotation = match Rotation::parse(&m, self.shape) {
                Some(r) => r,
                None => {
                    let default = Rotation::parse("", self.shape).unwrap_or(Rotation::Identity);
                    ctx.warn(format!(
                        "rotationMethod '{m}' is not one of this element's (stable_polar, polar, identity{}): {default:?} is used",
                        match self.shape {
                            Shape::Tetrahedron => ", triangle",
                            Shape::Hexahedron => ", hexahedron",
                            Shape::Prism => "",
                        }
                    ));
                    default
                }
            };
        }
        if let Some(m) = check_material(
            self.data.get(self.h.d.young),
            self.data.get(self.h.d.poisson),
        ) {
            ctx.error(m);
            return;
        }
        let (has, what): (fn(&Mesh) -> bool, &str) = match self.shape {
            Shape::Tetrahedron => (|m| !m.tetrahedra.is_empty(), "tetrahedra"),
            Shape::Hexahedron => (|m| !m.hexahedra.is_empty(), "hexahedra"),
            Shape::Prism => (|m| !m.prisms.is_empty(), "prisms"),
        };
        let Some((rest, mesh)) = fem_inputs(ctx, &self.data, has, what) else {
            return;
        };
        self.setup(&rest, &mesh);
    }
}

impl ElementFemForceField {
    /// SOFA's class name of this instance.
    fn sofa_class(&self) -> &'static str {
        self.class
    }

    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let (young, poisson) = (self.h.d.young, self.h.d.poisson);
        let material = [
            young.index(),
            poisson.index(),
            self.h.ff.rayleigh_stiffness.index(),
        ];
        if !changed.only(&material) || self.elems.is_empty() {
            return Reaction::Reinit;
        }
        if let Some(m) = check_material(self.data.get(young), self.data.get(poisson)) {
            return Reaction::Refused(vec![m]);
        }
        self.rayleigh = self.data.get(self.h.ff.rayleigh_stiffness);
        if changed.has(young) || changed.has(poisson) {
            self.update_stiffness();
        }
        Reaction::Updated
    }
}

canape_core::impl_component!(ElementFemForceField, |s| s.sofa_class(), init, data_changed);

fn matvec(k: &[f64], v: &[f64], out: &mut [f64]) {
    let m = v.len();
    for r in 0..m {
        out[r] = k[r * m..(r + 1) * m]
            .iter()
            .zip(v)
            .map(|(a, b)| a * b)
            .sum();
    }
}

impl ForceField for ElementFemForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let shape = self.shape;
        for el in &mut self.elems {
            let n = el.idx.len();
            let mut p = [Vec3::zeros(); 8];
            for (k, &i) in el.idx.iter().enumerate() {
                p[k] = get3(x, i as usize);
            }
            let p = &p[..n];
            let mut d = [0.0; 24];
            if self.corotational {
                let mut r = self.rotation.compute(shape, p, &el.rest, &el.c0);
                if !r.iter().all(|v| v.is_finite()) {
                    r = el.r;
                }
                el.r = r;
                let c = p.iter().fold(Vec3::zeros(), |a, b| a + b) / n as f64;
                let c0 = el.rest.iter().fold(Vec3::zeros(), |a, b| a + b) / n as f64;
                let rt = r.transpose();
                for i in 0..n {
                    let di = rt * (p[i] - c) - (el.rest[i] - c0);
                    d[3 * i..3 * i + 3].copy_from_slice(di.as_slice());
                }
            } else {
                for i in 0..n {
                    let di = p[i] - el.rest[i];
                    d[3 * i..3 * i + 3].copy_from_slice(di.as_slice());
                }
            }
            let mut fe = [0.0; 24];
            matvec(&el.k, &d[..3 * n], &mut fe[..3 * n]);
            for i in 0..n {
                let mut fi = Vec3::new(fe[3 * i], fe[3 * i + 1], fe[3 * i + 2]);
                if self.corotational {
                    fi = el.r * fi;
                }
                let a = el.idx[i] as usize;
                for c in 0..3 {
                    f[3 * a + c] -= fi[c];
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        for el in &self.elems {
            let n = el.idx.len();
            let mut d = [0.0; 24];
            for i in 0..n {
                let mut v = get3(dx, el.idx[i] as usize);
                if self.corotational {
                    v = el.r.transpose() * v;
                }
                d[3 * i..3 * i + 3].copy_from_slice(v.as_slice());
            }
            let mut fe = [0.0; 24];
            matvec(&el.k, &d[..3 * n], &mut fe[..3 * n]);
            for i in 0..n {
                let mut fi = Vec3::new(fe[3 * i], fe[3 * i + 1], fe[3 * i + 2]);
                if self.corotational {
                    fi = el.r * fi;
                }
                let a = el.idx[i] as usize;
                for c in 0..3 {
                    df[3 * a + c] -= k_factor * fi[c];
                }
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        for el in &self.elems {
            let n = el.idx.len();
            let w = 3 * n;
            for i in 0..n {
                for j in 0..n {
                    let mut b = Mat3::zeros();
                    for r in 0..3 {
                        for c in 0..3 {
                            b[(r, c)] = el.k[(3 * i + r) * w + 3 * j + c];
                        }
                    }
                    if self.corotational {
                        b = el.r * b * el.r.transpose();
                    }
                    m.add_block3(
                        offset + 3 * el.idx[i] as usize,
                        offset + 3 * el.idx[j] as usize,
                        &(b * -k_factor),
                    );
                }
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}
