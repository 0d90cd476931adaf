//! SOFA's newer element-based FEM: LinearSmallStrainFEMForceField and CorotationalFEMForceField
//! for tetrahedra and hexahedra (Sofa/Component/SolidMechanics/FEM/Elastic/…/
//! LinearSmallStrainFEMForceField.inl, CorotationalFEMForceField.inl, BaseElementLinearFEMForceField.inl,
//! impl/ElementStiffnessMatrix.h), and FEMMass with NodalMassDensity (Sofa/Component/Mass/…/FEMMass.inl).
//!
//! Element stiffness K_e = Σ_q w_q |det J_q| Bᵀ C B, computed once from rest positions (tetra: one
//! point; hexa: 2×2×2 Gauss; prism (sofa/fem/FiniteElement[Prism].h): the triangle's centroid at
//! two Gauss heights). The corotational variant rotates each element by R_e, recomputed in every
//! `add_force` and reused by `add_dforce` and assembly, by SOFA's `rotationMethod`
//! (impl/rotations/*.h): "triangle" (tetrahedra's default) and "hexahedron" (hexahedra's)
//! R_e = Cᵀ·C0, C the element frame from the triangle of nodes 0, 1, 2 or from averaged edges;
//! "polar" and "stable_polar" (prisms' default) the rotation of the polar decomposition of
//! H = Σ (x_j − x̄)(X_j − X̄)ᵀ; "identity".

use crate::common::{check_material, fem_inputs};
use canape_core::component::{Component, ForceField, Mass, Reaction};
use canape_core::data::{
    ChangedData, Data, DataKind, DataTable, ForceFieldData, MassData, Real, Reals, Text,
};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_types::{get3, Mat3, Vec3};

/// Element shape of a template `Vec3,Tetrahedron` / `Vec3,Hexahedron` / `Vec3,Prism`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Tetrahedron,
    Hexahedron,
    Prism,
}

impl Shape {
    /// Parse SOFA's two-part template.
    pub fn from_template(t: &str) -> Result<Shape, String> {
        let parts: Vec<&str> = t.split(',').map(str::trim).collect();
        if !parts[0].is_empty()
            && canape_types::DofType::from_template(parts[0]) != Some(canape_types::DofType::Vec3)
        {
            return Err(format!("template '{t}': only Vec3d states are supported"));
        }
        match parts.get(1).copied() {
            None | Some("Tetrahedron") => Ok(Shape::Tetrahedron),
            Some("Hexahedron") => Ok(Shape::Hexahedron),
            Some("Prism") => Ok(Shape::Prism),
            Some(o) => Err(format!(
                "template '{t}': element '{o}' is not supported yet (Tetrahedron, Hexahedron, Prism)"
            )),
        }
    }
    fn nodes(self) -> usize {
        match self {
            Shape::Tetrahedron => 4,
            Shape::Hexahedron => 8,
            Shape::Prism => 6,
        }
    }
    fn elements(self, m: &Mesh) -> Vec<Vec<u32>> {
        match self {
            Shape::Tetrahedron => m.tetrahedra.iter().map(|e| e.to_vec()).collect(),
            Shape::Hexahedron => m.hexahedra.iter().map(|e| e.to_vec()).collect(),
            Shape::Prism => m.prisms.iter().map(|e| e.to_vec()).collect(),
        }
    }
}

const HEX_SIGNS: [[f64; 3]; 8] = [
    [-1., -1., -1.],
    [1., -1., -1.],
    [1., 1., -1.],
    [-1., 1., -1.],
    [-1., -1., 1.],
    [1., -1., 1.],
    [1., 1., 1.],
    [-1., 1., 1.],
];
const TET_GRAD: [[f64; 3]; 4] = [[-1., -1., -1.], [1., 0., 0.], [0., 1., 0.], [0., 0., 1.]];

/// Quadrature points (ξ, weight) of an element shape, as SOFA's FiniteElement defines them.
fn quadrature(shape: Shape) -> Vec<([f64; 3], f64)> {
    match shape {
        Shape::Tetrahedron => vec![([0.25, 0.25, 0.25], 1.0 / 6.0)],
        Shape::Hexahedron => HEX_SIGNS
            .iter()
            .map(|s| {
                (
                    [
                        s[0] / 1.73205080757,
                        s[1] / 1.73205080757,
                        s[2] / 1.73205080757,
                    ],
                    1.0,
                )
            })
            .collect(),
        Shape::Prism => {
            // SOFA's constants: 1/√3 to 11 digits, weights ¼ (the reference prism's volume is ½)
            let (third, r) = (1.0 / 3.0, 0.57735026919);
            vec![
                ([third, third, 0.5 * (1.0 - r)], 0.25),
                ([third, third, 0.5 * (1.0 + r)], 0.25),
            ]
        }
    }
}

/// Shape functions and their reference gradients at ξ.
fn shape_functions(shape: Shape, xi: [f64; 3]) -> (Vec<f64>, Vec<[f64; 3]>) {
    match shape {
        Shape::Tetrahedron => (
            vec![1.0 - xi[0] - xi[1] - xi[2], xi[0], xi[1], xi[2]],
            TET_GRAD.to_vec(),
        ),
        Shape::Hexahedron => {
            let mut n = Vec::with_capacity(8);
            let mut g = Vec::with_capacity(8);
            for s in HEX_SIGNS {
                let f = [1.0 + s[0] * xi[0], 1.0 + s[1] * xi[1], 1.0 + s[2] * xi[2]];
                n.push(f[0] * f[1] * f[2] / 8.0);
                g.push([
                    s[0] * f[1] * f[2] / 8.0,
                    f[0] * s[1] * f[2] / 8.0,
                    f[0] * f[1] * s[2] / 8.0,
                ]);
            }
            (n, g)
        }
        Shape::Prism => {
            // the reference triangle (ξ0, ξ1) times the segment ξ2 ∈ [0, 1]
            let (a, b, c) = (xi[0], xi[1], xi[2]);
            let t = 1.0 - a - b;
            (
                vec![
                    t * (1.0 - c),
                    a * (1.0 - c),
                    b * (1.0 - c),
                    t * c,
                    a * c,
                    b * c,
                ],
                vec![
                    [c - 1.0, c - 1.0, -t],
                    [1.0 - c, 0.0, -a],
                    [0.0, 1.0 - c, -b],
                    [-c, -c, t],
                    [c, 0.0, a],
                    [0.0, c, b],
                ],
            )
        }
    }
}

/// Jacobian J(:,k) = Σ_i X_i ∂N_i/∂ξ_k.
fn jacobian(x: &[Vec3], g: &[[f64; 3]]) -> Mat3 {
    let mut j = Mat3::zeros();
    for (xi, gi) in x.iter().zip(g) {
        for r in 0..3 {
            for k in 0..3 {
                j[(r, k)] += xi[r] * gi[k];
            }
        }
    }
    j
}

/// Dense element stiffness (3n × 3n, row-major) for Young's modulus `e` and Poisson ratio `nu`.
pub fn element_stiffness(shape: Shape, x: &[Vec3], e: f64, nu: f64) -> Vec<f64> {
    let n = shape.nodes();
    let mu = e / (2.0 * (1.0 + nu));
    let lambda = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    let mut c = nalgebra::SMatrix::<f64, 6, 6>::zeros();
    for i in 0..3 {
        for j in 0..3 {
            c[(i, j)] = if i == j { lambda + 2.0 * mu } else { lambda };
        }
        c[(i + 3, i + 3)] = mu;
    }
    let m = 3 * n;
    let mut k = vec![0.0; m * m];
    for (xi, w) in quadrature(shape) {
        let (_, g) = shape_functions(shape, xi);
        let j = jacobian(x, &g);
        let det = j.determinant().abs();
        let Some(jit) = j.try_inverse().map(|i| i.transpose()) else {
            continue;
        };
        let grads: Vec<Vec3> = g
            .iter()
            .map(|gi| jit * Vec3::new(gi[0], gi[1], gi[2]))
            .collect();
        // B: 6 × 3n, Voigt [xx, yy, zz, xy, yz, zx] with engineering shear
        let mut b = vec![[0.0; 6]; m];
        for (i, d) in grads.iter().enumerate() {
            b[3 * i][0] = d.x;
            b[3 * i + 1][1] = d.y;
            b[3 * i + 2][2] = d.z;
            b[3 * i][3] = d.y;
            b[3 * i + 1][3] = d.x;
            b[3 * i + 1][4] = d.z;
            b[3 * i + 2][4] = d.y;
            b[3 * i][5] = d.z;
            b[3 * i + 2][5] = d.x;
        }
        for p in 0..m {
            let mut cb = [0.0; 6];
            for r in 0..6 {
                cb[r] = (0..6).map(|s| c[(r, s)] * b[p][s]).sum();
            }
            for q in 0..m {
                let v: f64 = (0..6).map(|r| b[q][r] * cb[r]).sum();
                k[q * m + p] += w * det * v;
            }
        }
    }
    k
}

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
    rotation: Rotation,
    data: DataTable,
    /// Typed handles to the Data in `data`.
    h: ElementHandles,
    elems: Vec<Elem>,
    rayleigh: f64,
}

impl ElementFemForceField {
    pub fn new(corotational: bool, template: &str) -> Result<Self, String> {
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

impl Component for ElementFemForceField {
    fn class_name(&self) -> &'static str {
        self.class
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        self.init_impl(ctx)
    }

    /// A new Young's modulus or Poisson's ratio recomputes the element stiffnesses from the
    /// rest positions the elements keep (rest frames and rotations kept); a new Rayleigh
    /// stiffness is taken as it is. Any other Data re-initialises the force field.
    fn data_changed(&mut self, changed: &ChangedData) -> Reaction {
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

canape_core::data_schema! {
    /// FEMMass's own Data (after [`MassData`]).
    struct FemMassData {
        nodal_mass_density: Text = ("nodalMassDensity", DataKind::Str, "", "Link to nodal property: mass density"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

/// FEMMass: the consistent mass matrix of the elements, with a density interpolated from the
/// nodal values of a NodalMassDensity. Stored as node-to-node scalar entries (each a 3×3 m·I).
#[derive(Clone)]
pub struct FemMass {
    shape: Shape,
    data: DataTable,
    /// Typed handles to the Data in `data`.
    mass: MassData,
    d: FemMassData,
    /// CSR over nodes: for node a, the (b, m_ab) entries.
    ptr: Vec<usize>,
    cols: Vec<u32>,
    vals: Vec<f64>,
}

impl FemMass {
    pub fn new(template: &str) -> Result<Self, String> {
        let shape = Shape::from_template(template)?;
        if shape == Shape::Tetrahedron && !template.contains("Tetrahedron") {
            return Err(
                "FEMMass needs its element in the template (Vec3,Hexahedron or Vec3,Tetrahedron)"
                    .into(),
            );
        }
        let (data, mass) = MassData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = FemMassData::declare(data);
        Ok(FemMass {
            shape,
            data,
            mass,
            d,
            ptr: Vec::new(),
            cols: Vec::new(),
            vals: Vec::new(),
        })
    }

    /// Build the mass matrix from rest positions, elements and nodal densities (init and tests).
    pub fn setup(&mut self, rest: &[f64], mesh: &Mesh, density: &dyn Fn(usize) -> f64, n: usize) {
        let mut rows: Vec<std::collections::BTreeMap<u32, f64>> = vec![Default::default(); n];
        for idx in self.shape.elements(mesh) {
            let x: Vec<Vec3> = idx.iter().map(|&i| get3(rest, i as usize)).collect();
            for (xi, w) in quadrature(self.shape) {
                let (nf, g) = shape_functions(self.shape, xi);
                let det = jacobian(&x, &g).determinant().abs();
                let rho: f64 = idx
                    .iter()
                    .zip(&nf)
                    .map(|(&i, ni)| ni * density(i as usize))
                    .sum();
                for (a, &ia) in idx.iter().enumerate() {
                    for (b, &ib) in idx.iter().enumerate() {
                        *rows[ia as usize].entry(ib).or_insert(0.0) +=
                            w * rho * det * nf[a] * nf[b];
                    }
                }
            }
        }
        self.ptr = vec![0];
        self.cols.clear();
        self.vals.clear();
        for r in rows {
            for (c, v) in r {
                self.cols.push(c);
                self.vals.push(v);
            }
            self.ptr.push(self.cols.len());
        }
    }

    /// Total mass (sum of all entries).
    pub fn total(&self) -> f64 {
        self.vals.iter().sum()
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if self.shape == Shape::Tetrahedron {
            ctx.warn("FEMMass on tetrahedra uses SOFA's one-point rule, which is not exact for the consistent mass");
        }
        // the density: linked NodalMassDensity, or the first one of the context
        let link = self.data.get(self.d.nodal_mass_density).trim().to_string();
        let scene = ctx.scene;
        let dens_id = if !link.is_empty() {
            match ctx.linked(&link) {
                Some(canape_core::scene::Target::Component(c)) => Some(c),
                _ => None,
            }
        } else {
            scene.lineage(ctx.node).into_iter().find_map(|nd| {
                scene
                    .node(nd)
                    .components
                    .iter()
                    .copied()
                    .find(|c| scene.info(*c).class == "NodalMassDensity")
            })
        };
        let Some(prop) = dens_id
            .and_then(|c| scene.component(c))
            .filter(|c| c.class_name() == "NodalMassDensity")
            .map(|c| c.data().reals("property").to_vec())
        else {
            ctx.error("no NodalMassDensity found (link 'nodalMassDensity' or one in the context): the mass is invalid");
            return;
        };
        let (has, what): (fn(&Mesh) -> bool, &str) = match self.shape {
            Shape::Tetrahedron => (|m| !m.tetrahedra.is_empty(), "tetrahedra"),
            Shape::Hexahedron => (|m| !m.hexahedra.is_empty(), "hexahedra"),
            Shape::Prism => (|m| !m.prisms.is_empty(), "prisms"),
        };
        let Some((rest, mesh)) = fem_inputs(ctx, &self.data, has, what) else {
            return;
        };
        let n = rest.len() / 3;
        let density = move |i: usize| prop.get(i).or(prop.last()).copied().unwrap_or(1.0);
        self.setup(&rest, &mesh, &density, n);
    }
}

impl_component!(FemMass, |_s| "FEMMass", init);

impl Mass for FemMass {
    fn add_gravity_force(&self, f: &mut [f64], g: &Vec3) {
        for a in 0..self.ptr.len().saturating_sub(1) {
            let m: f64 = self.vals[self.ptr[a]..self.ptr[a + 1]].iter().sum();
            for c in 0..3 {
                f[3 * a + c] += m * g[c];
            }
        }
    }
    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        for a in 0..self.ptr.len().saturating_sub(1) {
            for k in self.ptr[a]..self.ptr[a + 1] {
                let b = self.cols[k] as usize;
                for c in 0..3 {
                    res[3 * a + c] += factor * self.vals[k] * dx[3 * b + c];
                }
            }
        }
    }
    fn add_m_to_matrix(&self, mat: &mut dyn MatrixSink, factor: f64, offset: usize) {
        for a in 0..self.ptr.len().saturating_sub(1) {
            for k in self.ptr[a]..self.ptr[a + 1] {
                let b = self.cols[k] as usize;
                for c in 0..3 {
                    mat.add(
                        offset + 3 * a + c,
                        offset + 3 * b + c,
                        factor * self.vals[k],
                    );
                }
            }
        }
    }
    fn rayleigh_mass(&self) -> f64 {
        self.data.get(self.mass.rayleigh_mass)
    }
}

/// Test helper for the in-place reactions to edited Data of the FEM force fields: the forces
/// and stiffness products of a force field edited while it runs against those of one
/// initialised from scratch with the new values, bit for bit.
#[cfg(test)]
pub(crate) mod edit_check {
    use canape_core::component::{ForceField, Reaction};
    use canape_core::mesh::Mesh;

    /// The bits of `v` (to compare results exactly).
    pub fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// What a force field gives at `x`: its forces (with pseudo-random velocities), then its
    /// stiffness product of a pseudo-random dx (factor −0.7) and its Rayleigh stiffness, as bits.
    pub fn results(ff: &mut dyn ForceField, x: &[f64]) -> (Vec<u64>, Vec<u64>, u64) {
        let mut seed = 5;
        let n = x.len();
        let v: Vec<f64> = (0..n).map(|_| crate::fd_check::rnd(&mut seed)).collect();
        let mut f = vec![0.0; n];
        ff.add_force(x, &v, &mut f);
        let dx: Vec<f64> = (0..n).map(|_| crate::fd_check::rnd(&mut seed)).collect();
        let mut df = vec![0.0; n];
        ff.add_dforce(&dx, &mut df, -0.7);
        (bits(&f), bits(&df), ff.rayleigh_stiffness().to_bits())
    }

    /// `make()` initialised on `rest` and `mesh` with `before` and run at `x` (the rotations
    /// of a running simulation), then given `after` through its Data and told which changed:
    /// the reaction. When it is [`Reaction::Updated`], its results at `x` must equal bit for
    /// bit those of `make()` initialised with `before` then `after`; otherwise (the edit is
    /// refused, or needs a re-initialisation) it must still give its results of before.
    pub fn edit<F: ForceField>(
        make: impl Fn() -> F,
        rest: &[f64],
        mesh: &Mesh,
        before: &[(&str, &str)],
        after: &[(&str, &str)],
        x: &[f64],
    ) -> Reaction {
        let init = |attrs: &[&[(&str, &str)]]| {
            let mut ff = make();
            for (k, v) in attrs.iter().copied().flatten() {
                ff.data_mut().set_str(k, v).unwrap();
            }
            let diags = crate::fd_check::init_with_mesh(&mut ff, rest, Some(mesh.clone()));
            assert!(
                !diags.has_errors(),
                "{:?}",
                diags.iter().collect::<Vec<_>>()
            );
            ff
        };
        let mut ff = init(&[before]);
        let old = results(&mut ff, x);
        let versions = ff.data().versions();
        for (k, v) in after {
            ff.data_mut().set_str(k, v).unwrap();
        }
        let changed = ff.data().changed_since(&versions);
        assert!(!changed.is_empty(), "{after:?} changes nothing");
        let reaction = ff.data_changed(&changed);
        let got = results(&mut ff, x);
        let class = ff.class_name();
        if reaction == Reaction::Updated {
            let want = results(&mut init(&[before, after]), x);
            assert!(
                got == want,
                "{class}: {after:?} in place differs from an init"
            );
            assert!(got != old, "{class}: {after:?} changed no result");
        } else {
            assert!(
                got == old,
                "{class}: {after:?} ({reaction:?}) changed the results"
            );
        }
        reaction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hexa_consistent_mass_of_a_box_is_exact() {
        let mut rest = Vec::new();
        for s in HEX_SIGNS {
            rest.extend_from_slice(&[(s[0] + 1.0) * 1.0, (s[1] + 1.0) * 0.5, (s[2] + 1.0) * 2.0]);
        }
        let mesh = Mesh {
            hexahedra: vec![[0, 1, 2, 3, 4, 5, 6, 7]],
            ..Default::default()
        };
        let mut m = FemMass::new("Vec3,Hexahedron").unwrap();
        m.setup(&rest, &mesh, &|_| 3.0, 8);
        let vol = 2.0 * 1.0 * 4.0;
        assert!((m.total() - 3.0 * vol).abs() < 1e-9, "{}", m.total());
        // diagonal ρV/27
        assert!((m.vals[m.ptr[0]] - 3.0 * vol / 27.0).abs() < 1e-9);
    }

    /// A box [0, 2] × [0, 1] × [0, 0.5] as SOFA's hexahedron corners, and its two prisms by
    /// Hexa2PrismTopologicalMapping's split.
    fn box_prisms() -> (Vec<f64>, Vec<[u32; 6]>) {
        let mut rest = Vec::new();
        for s in HEX_SIGNS {
            rest.extend_from_slice(&[s[0] + 1.0, (s[1] + 1.0) * 0.5, (s[2] + 1.0) * 0.25]);
        }
        (rest, vec![[0, 5, 1, 3, 6, 2], [0, 4, 5, 3, 7, 6]])
    }

    /// Prisms: K has the six rigid modes in its null space, and a uniform strain ε (u = ε·X,
    /// represented exactly) stores ½ uᵀ K u = V · ½ εᵀ C ε over the box the two prisms fill.
    #[test]
    fn prism_stiffness_has_rigid_modes_and_the_uniform_strain_energy() {
        let (rest, prisms) = box_prisms();
        let (e, nu) = (1000.0, 0.3);
        let mu = e / (2.0 * (1.0 + nu));
        let lambda = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
        let eps = Mat3::new(
            0.01, 0.003, -0.002, 0.003, -0.004, 0.001, -0.002, 0.001, 0.006,
        );
        let mut energy = 0.0;
        for pr in &prisms {
            let x: Vec<Vec3> = pr.iter().map(|&i| get3(&rest, i as usize)).collect();
            let k = element_stiffness(Shape::Prism, &x, e, nu);
            let product = |u: &[f64]| -> Vec<f64> {
                (0..18)
                    .map(|r| (0..18).map(|c| k[r * 18 + c] * u[c]).sum())
                    .collect()
            };
            let rigid = [
                Mat3::zeros(),
                Mat3::new(0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0),
                Mat3::new(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0),
                Mat3::new(0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0),
            ];
            for (m, w) in rigid.iter().enumerate() {
                for t in 0..3 {
                    let u: Vec<f64> = x
                        .iter()
                        .flat_map(|p| {
                            let mut d = w * p;
                            if m == 0 {
                                d[t] = 1.0;
                            }
                            [d.x, d.y, d.z]
                        })
                        .collect();
                    let f = product(&u);
                    let worst = f.iter().map(|v| v.abs()).fold(0.0, f64::max);
                    assert!(worst < 1e-9, "rigid mode {m}/{t}: |K u| {worst:e}");
                }
            }
            let u: Vec<f64> = x
                .iter()
                .flat_map(|p| {
                    let d = eps * p;
                    [d.x, d.y, d.z]
                })
                .collect();
            energy += 0.5 * u.iter().zip(product(&u)).map(|(a, b)| a * b).sum::<f64>();
        }
        let tr = eps.trace();
        let density = 0.5 * lambda * tr * tr + mu * eps.component_mul(&eps).sum();
        let volume = 2.0 * 1.0 * 0.5;
        assert!(
            (energy - volume * density).abs() < 1e-9 * energy.abs(),
            "{energy} vs {}",
            volume * density
        );
        // FEMMass on the prisms: the box's mass
        let mesh = Mesh {
            prisms: prisms.clone(),
            ..Default::default()
        };
        let mut m = FemMass::new("Vec3,Prism").unwrap();
        m.setup(&rest, &mesh, &|_| 3.0, 8);
        assert!((m.total() - 3.0 * volume).abs() < 1e-9, "{}", m.total());
    }

    /// The corotational prism with each of its rotation methods: a rigidly turned and moved
    /// element feels no force; a stretched one does, as in its rest frame.
    #[test]
    fn corotational_prisms_ignore_rigid_motions() {
        let (rest, prisms) = box_prisms();
        let mesh = Mesh {
            prisms,
            ..Default::default()
        };
        let r = nalgebra::Rotation3::from_euler_angles(0.4, -0.3, 1.1).into_inner();
        let moved: Vec<f64> = rest
            .chunks(3)
            .flat_map(|p| {
                let q = r * Vec3::new(p[0], p[1], p[2]) + Vec3::new(0.3, -1.0, 2.0);
                [q.x, q.y, q.z]
            })
            .collect();
        for method in ["", "stable_polar", "polar", "identity"] {
            let mut ff = ElementFemForceField::new(true, "Vec3,Prism").unwrap();
            ff.rotation = Rotation::parse(method, Shape::Prism).unwrap();
            ff.setup(&rest, &mesh);
            let mut f = vec![0.0; rest.len()];
            ff.add_force(&moved, &vec![0.0; rest.len()], &mut f);
            let worst = f.iter().map(|v| v.abs()).fold(0.0, f64::max);
            if method == "identity" {
                assert!(
                    worst > 1.0,
                    "identity: a turned element must push back ({worst})"
                );
            } else {
                assert!(worst < 1e-9, "{method:?}: |f| {worst:e}");
            }
        }
        assert_eq!(Rotation::parse("hexahedron", Shape::Prism), None);
        assert_eq!(
            Rotation::parse("triangle", Shape::Tetrahedron),
            Some(Rotation::Frame)
        );
    }

    #[test]
    fn tetra_stiffness_equals_the_linear_tetra_of_tetrahedron_fem() {
        // K_e of LinearSmallStrain on a tet equals J·M·Jᵀ of TetrahedronFEMForceField "small"
        let x = [
            Vec3::new(0.1, 0.0, 0.0),
            Vec3::new(1.0, 0.1, 0.0),
            Vec3::new(0.0, 1.2, 0.1),
            Vec3::new(0.2, 0.1, 0.9),
        ];
        let k = element_stiffness(Shape::Tetrahedron, &x, 1000.0, 0.3);
        let mut t =
            crate::tetra::TetrahedronFemForceField::new(crate::tetra::Flavor::TetrahedronFem);
        use canape_core::component::Component;
        t.data_mut().set_str("method", "small").unwrap();
        t.data_mut().set_str("youngModulus", "1000").unwrap();
        t.data_mut().set_str("poissonRatio", "0.3").unwrap();
        t.set_method_from_data().unwrap();
        let rest: Vec<f64> = x.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
        t.setup(&rest, &[[0, 1, 2, 3]]);
        let mut tr = canape_core::matrix::Triplets::new(12);
        t.add_k_to_matrix(&mut tr, 1.0, 0);
        let kt = tr.to_csr();
        for r in 0..12 {
            for c in 0..12 {
                assert!(
                    (k[r * 12 + c] + kt.get(r, c)).abs() < 1e-9 * (1.0 + k[r * 12 + c].abs()),
                    "{r},{c}"
                );
            }
        }
    }
    /// Two slightly irregular cells side by side, as hexahedra.
    fn two_cells() -> (Vec<f64>, Vec<[u32; 8]>) {
        let mut seed = 3;
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
        let hexa = (0..2)
            .map(|x| {
                [
                    idx(x, 0, 0),
                    idx(x + 1, 0, 0),
                    idx(x + 1, 1, 0),
                    idx(x, 1, 0),
                    idx(x, 0, 1),
                    idx(x + 1, 0, 1),
                    idx(x + 1, 1, 1),
                    idx(x, 1, 1),
                ]
            })
            .collect();
        (rest, hexa)
    }

    /// Editing youngModulus, poissonRatio or rayleighStiffness of the element FEM force fields
    /// while they run updates them in place to exactly what an init with the new values
    /// gives, for every element shape, linear and corotational; an invalid material is
    /// refused, and other Data ask for a re-initialisation.
    #[test]
    fn element_fem_material_edits_update_in_place() {
        use canape_core::component::Reaction;
        let (rest, hexa) = two_cells();
        let tets: Vec<[u32; 4]> = hexa
            .iter()
            .flat_map(|h| canape_core::mesh::hexa_to_tetras(*h, false))
            .collect();
        let prisms: Vec<[u32; 6]> = hexa
            .iter()
            .flat_map(|h| {
                [
                    [h[0], h[5], h[1], h[3], h[6], h[2]],
                    [h[0], h[4], h[5], h[3], h[7], h[6]],
                ]
            })
            .collect();
        let meshes = [
            (
                "Vec3,Tetrahedron",
                Mesh {
                    tetrahedra: tets,
                    ..Default::default()
                },
            ),
            (
                "Vec3,Hexahedron",
                Mesh {
                    hexahedra: hexa,
                    ..Default::default()
                },
            ),
            (
                "Vec3,Prism",
                Mesh {
                    prisms,
                    ..Default::default()
                },
            ),
        ];
        let mut seed = 9;
        let x: Vec<f64> = crate::fd_check::rigidly_moved(&rest)
            .iter()
            .map(|v| v + 0.05 * crate::fd_check::rnd(&mut seed))
            .collect();
        let before = [
            ("youngModulus", "1000"),
            ("poissonRatio", "0.3"),
            ("rayleighStiffness", "0.1"),
        ];
        for corotational in [false, true] {
            for (tpl, mesh) in &meshes {
                let make = || ElementFemForceField::new(corotational, tpl).unwrap();
                let edit = |after: &[(&str, &str)]| {
                    edit_check::edit(make, &rest, mesh, &before, after, &x)
                };
                assert_eq!(edit(&[("youngModulus", "1500")]), Reaction::Updated);
                assert_eq!(edit(&[("poissonRatio", "0.4")]), Reaction::Updated);
                assert_eq!(edit(&[("rayleighStiffness", "0.25")]), Reaction::Updated);
                // one modulus per element, and the three Data at once
                let per_element = [
                    (
                        "youngModulus",
                        "1200 900 1100 800 1000 1300 700 1400 1250 950 1050 850",
                    ),
                    ("poissonRatio", "0.2 0.35"),
                    ("rayleighStiffness", "0"),
                ];
                assert_eq!(edit(&per_element), Reaction::Updated);
                assert!(matches!(
                    edit(&[("poissonRatio", "0.7")]),
                    Reaction::Refused(_)
                ));
                assert!(matches!(
                    edit(&[("youngModulus", "-5")]),
                    Reaction::Refused(_)
                ));
                assert_eq!(
                    edit(&[("youngModulus", "2000"), ("elementSpace", "0.2")]),
                    Reaction::Reinit
                );
                if corotational {
                    assert_eq!(edit(&[("rotationMethod", "polar")]), Reaction::Reinit);
                }
            }
        }
    }
}
