//! HexahedronFEMForceField: trilinear hexahedra, 2×2×2 Gauss stiffness in a rotated rest frame,
//! corotational by averaged edge directions ("large") or polar decomposition.
//! Follows Sofa/Component/SolidMechanics/FEM/Elastic/src/sofa/component/solidmechanics/fem/
//! elastic/HexahedronFEMForceField.inl: f_e = Rᵀ K (X0r − R x), tangent −Rᵀ K R.

use crate::common::{check_material, fem_inputs, force_field_data, polar_q, Material};
use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable, Value};

use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{get3, Mat3, Vec3};
use nalgebra::SMatrix;

type K24 = SMatrix<f64, 24, 24>;

/// The element's displacement turned into its frame: (R dx_w) for its 8 nodes, as a 24-vector.
#[inline(always)]
fn local_dx(el: &HexElem, dx: &[f64]) -> [f64; 24] {
    let mut xv = [0.0; 24];
    for w in 0..8 {
        let v = el.rot * get3(dx, el.idx[w] as usize);
        xv[3 * w] = v.x;
        xv[3 * w + 1] = v.y;
        xv[3 * w + 2] = v.z;
    }
    xv
}

/// df[idx − lo] −= k · Rᵀ fe (the element's force turned back to the world frame).
#[inline(always)]
fn scatter_df(el: &HexElem, fe: &[f64; 24], df: &mut [f64], lo: usize, k_factor: f64) {
    let rt = el.rot.transpose();
    for w in 0..8 {
        let fw = rt * Vec3::new(fe[3 * w], fe[3 * w + 1], fe[3 * w + 2]) * k_factor;
        let n = el.idx[w] as usize - lo;
        df[3 * n] -= fw.x;
        df[3 * n + 1] -= fw.y;
        df[3 * n + 2] -= fw.z;
    }
}

/// df[n − lo] −= k · Rᵀ K R dx for a range of elements. Consecutive elements sharing one
/// stiffness matrix (a regular grid) go through the product two at a time, so that each column
/// of K loaded into registers serves both.
#[inline(always)]
fn dforce_range(
    elems: &[HexElem],
    ks: &[K24],
    dx: &[f64],
    df: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    let mut e = 0;
    while e < elems.len() {
        let a = &elems[e];
        if let Some(b) = elems.get(e + 1).filter(|b| b.k == a.k) {
            let (xa, xb) = (local_dx(a, dx), local_dx(b, dx));
            let (fa, fb) = matvec24x2(&ks[a.k as usize], &xa, &xb);
            scatter_df(a, &fa, df, lo, k_factor);
            scatter_df(b, &fb, df, lo, k_factor);
            e += 2;
        } else {
            let fa = matvec24(&ks[a.k as usize], &local_dx(a, dx));
            scatter_df(a, &fa, df, lo, k_factor);
            e += 1;
        }
    }
}

/// The same loop compiled for AVX2 and FMA (4 doubles per instruction, fused multiply-adds in
/// hardware). The baseline build computes the same fused multiply-adds (`f64::mul_add`, exactly
/// rounded either way), so both give the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn dforce_range_avx2(
    elems: &[HexElem],
    ks: &[K24],
    dx: &[f64],
    df: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    dforce_range(elems, ks, dx, df, lo, k_factor)
}

/// Measured: an AVX-512 variant was slower than AVX2 on this project's machines (2026-11-22).
fn dforce_range_dispatch(
    elems: &[HexElem],
    ks: &[K24],
    dx: &[f64],
    df: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above).
        return unsafe { dforce_range_avx2(elems, ks, dx, df, lo, k_factor) };
    }
    dforce_range(elems, ks, dx, df, lo, k_factor)
}

/// y = K x for a 24×24 element matrix: column by column into 24 independent accumulators with
/// fused multiply-adds (a loop the compiler vectorises).
#[inline(always)]
fn matvec24(k: &K24, x: &[f64; 24]) -> [f64; 24] {
    let mut y = [0.0; 24];
    for (col, &xj) in k.as_slice().chunks_exact(24).zip(x.iter()) {
        for (yi, &kij) in y.iter_mut().zip(col) {
            *yi = kij.mul_add(xj, *yi);
        }
    }
    y
}

/// Two products with the same matrix, column by column (each sum in the same order as
/// [`matvec24`], so an element gets the same bits either way).
#[inline(always)]
fn matvec24x2(k: &K24, xa: &[f64; 24], xb: &[f64; 24]) -> ([f64; 24], [f64; 24]) {
    let (mut ya, mut yb) = ([0.0; 24], [0.0; 24]);
    for (j, col) in k.as_slice().chunks_exact(24).enumerate() {
        let (a, b) = (xa[j], xb[j]);
        for i in 0..24 {
            ya[i] = col[i].mul_add(a, ya[i]);
            yb[i] = col[i].mul_add(b, yb[i]);
        }
    }
    (ya, yb)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HexaMethod {
    Large,
    Polar,
    Small,
}

/// Reference-cell corner signs in SOFA's hexahedron vertex order.
const COEF: [[f64; 3]; 8] = [
    [-1.0, -1.0, -1.0],
    [1.0, -1.0, -1.0],
    [1.0, 1.0, -1.0],
    [-1.0, 1.0, -1.0],
    [-1.0, -1.0, 1.0],
    [1.0, -1.0, 1.0],
    [1.0, 1.0, 1.0],
    [-1.0, 1.0, 1.0],
];

/// Element stiffness of a trilinear hexahedron by 2×2×2 Gauss quadrature (weights 1).
pub fn hexa_stiffness(mat: &Material, n: &[Vec3; 8]) -> K24 {
    let m = mat.matrix();
    let mut k = K24::zeros();
    let lx = n[1] - n[0];
    let ly = n[3] - n[0];
    let lz = n[4] - n[0];
    let close = |v: Vec3, l: &Vec3| v.norm() < 0.001 * l.norm();
    let parallel = close(n[3] + lx - n[2], &lx)
        && close(n[0] + lz - n[4], &lz)
        && close(n[1] + lz - n[5], &lz)
        && close(n[2] + lz - n[6], &lz)
        && close(n[3] + lz - n[7], &lz);
    let g = 1.0 / 3.0_f64.sqrt();
    for gx1 in [-1.0, 1.0] {
        for gx2 in [-1.0, 1.0] {
            for gx3 in [-1.0, 1.0] {
                let (xi, eta, zeta) = (gx1 * g, gx2 * g, gx3 * g);
                let jac = if parallel {
                    Mat3::from_columns(&[lx / 2.0, ly / 2.0, lz / 2.0])
                } else {
                    let c0 = ((n[1] - n[0]) * ((1.0 - eta) * (1.0 - zeta))
                        + (n[2] - n[3]) * ((1.0 + eta) * (1.0 - zeta))
                        + (n[5] - n[4]) * ((1.0 - eta) * (1.0 + zeta))
                        + (n[6] - n[7]) * ((1.0 + eta) * (1.0 + zeta)))
                        / 8.0;
                    let c1 = ((n[3] - n[0]) * ((1.0 - xi) * (1.0 - zeta))
                        + (n[2] - n[1]) * ((1.0 + xi) * (1.0 - zeta))
                        + (n[7] - n[4]) * ((1.0 - xi) * (1.0 + zeta))
                        + (n[6] - n[5]) * ((1.0 + xi) * (1.0 + zeta)))
                        / 8.0;
                    let c2 = ((n[4] - n[0]) * ((1.0 - xi) * (1.0 - eta))
                        + (n[5] - n[1]) * ((1.0 + xi) * (1.0 - eta))
                        + (n[6] - n[2]) * ((1.0 + xi) * (1.0 + eta))
                        + (n[7] - n[3]) * ((1.0 - xi) * (1.0 + eta)))
                        / 8.0;
                    Mat3::from_columns(&[c0, c1, c2])
                };
                let det = jac.determinant();
                let Some(ji) = jac.try_inverse() else {
                    continue;
                };
                let mut q = [[0.0; 3]; 8];
                for i in 0..8 {
                    let s = COEF[i];
                    let dxi = s[0] * (1.0 + s[1] * eta) * (1.0 + s[2] * zeta) / 8.0;
                    let deta = (1.0 + s[0] * xi) * s[1] * (1.0 + s[2] * zeta) / 8.0;
                    let dzeta = (1.0 + s[0] * xi) * (1.0 + s[1] * eta) * s[2] / 8.0;
                    for c in 0..3 {
                        q[i][c] = dxi * ji[(0, c)] + deta * ji[(1, c)] + dzeta * ji[(2, c)];
                    }
                }
                let bmat = |i: usize| {
                    let [qx, qy, qz] = q[i];
                    SMatrix::<f64, 6, 3>::from_row_slice(&[
                        qx, 0.0, 0.0, 0.0, qy, 0.0, 0.0, 0.0, qz, qy, qx, 0.0, 0.0, qz, qy, qz,
                        0.0, qx,
                    ])
                };
                for i in 0..8 {
                    let bi = bmat(i);
                    let bim = bi.transpose() * m;
                    for j in i..8 {
                        let kij = bim * bmat(j) * det;
                        for a in 0..3 {
                            for b in 0..3 {
                                k[(3 * i + a, 3 * j + b)] += kij[(a, b)];
                            }
                        }
                    }
                }
            }
        }
    }
    for a in 0..24 {
        for b in 0..a {
            k[(a, b)] = k[(b, a)];
        }
    }
    k
}

/// Averaged edge directions of a hexahedron (x and y; z for polar).
fn mean_edges(p: &[Vec3; 8]) -> (Vec3, Vec3, Vec3) {
    let ex = (p[1] - p[0] + p[2] - p[3] + p[5] - p[4] + p[6] - p[7]) * 0.25;
    let ey = (p[3] - p[0] + p[2] - p[1] + p[7] - p[4] + p[6] - p[5]) * 0.25;
    let ez = (p[4] - p[0] + p[5] - p[1] + p[7] - p[3] + p[6] - p[2]) * 0.25;
    (ex, ey, ez)
}

fn frame(method: HexaMethod, p: &[Vec3; 8]) -> Mat3 {
    match method {
        HexaMethod::Small => Mat3::identity(),
        HexaMethod::Large => {
            let (ex, ey, _) = mean_edges(p);
            let x = ex / ex.norm();
            let z = x.cross(&ey).normalize();
            let y = z.cross(&x);
            Mat3::from_rows(&[x.transpose(), y.transpose(), z.transpose()])
        }
        HexaMethod::Polar => {
            let (ex, ey, ez) = mean_edges(p);
            polar_q(&Mat3::from_rows(&[
                ex.transpose(),
                ey.transpose(),
                ez.transpose(),
            ]))
        }
    }
}

struct HexElem {
    idx: [u32; 8],
    /// Index of the element stiffness in `HexahedronFemForceField::ks`.
    k: u32,
    rot: Mat3,
}

/// The mass part of HexahedronFEMForceFieldAndMass (SOFA's formulation, including its quirk:
/// every 3×3 node block of the element mass matrix is (8/27)·ρ·vol·I, while gravity uses ρ·vol/8
/// per node; HexahedronFEMForceFieldAndMass.inl computeElementMass/integrateMass).
struct HexMass {
    density: f64,
    lumped: bool,
    /// (8/27)·ρ·vol per element.
    block: Vec<f64>,
    /// Gravity masses per node.
    particle: Vec<f64>,
    gravity: Vec3,
}

pub struct HexahedronFemForceField {
    data: DataTable,
    mass: Option<HexMass>,
    method: HexaMethod,
    elems: Vec<HexElem>,
    /// Element stiffness matrices in the element frame; elements of the same shape and material
    /// (a regular grid) share one, which then stays in cache during the products.
    ks: Vec<K24>,
    /// Rest positions in the element frame, parallel to `elems` (kept apart: the stiffness
    /// product, run at every CG iteration, reads 108 bytes per element instead of 300).
    rests: Vec<[Vec3; 8]>,
    /// The stiffness product over worker threads.
    par: crate::common::ParallelLoop,
    rayleigh: f64,
}

impl Default for HexahedronFemForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl HexahedronFemForceField {
    pub fn new() -> Self {
        let data = force_field_data(DataTable::new())
            .with("youngModulus", DataKind::Reals(0), "5000", "Young's modulus in Hooke's law (one value, or one per element)")
            .with("poissonRatio", DataKind::Reals(0), "0.45", "Poisson's ratio in Hooke's law (one value, or one per element)")
            .with("method", DataKind::Str, "large", "\"large\" or \"polar\" or \"small\" displacements")
            .with("updateStiffnessMatrix", DataKind::Bool, "0", "")
            .with("gatherPt", DataKind::Str, " ", "number of dof accumulated per threads during the gather operation (Only use in GPU version)")
            .with("gatherBsize", DataKind::Str, " ", "number of dof accumulated per threads during the gather operation (Only use in GPU version)")
            .with("drawing", DataKind::Bool, "1", "draw the forcefield if true")
            .with("drawPercentageOffset", DataKind::Real, "0.15", "size of the hexa")
            .with("stiffnessMatrices", DataKind::Reals(0), "", "Stiffness matrices per element (K_i)")
            .with("initialPoints", DataKind::Reals(3), "", "Initial Position");
        HexahedronFemForceField {
            data,
            mass: None,
            method: HexaMethod::Large,
            elems: Vec::new(),
            ks: Vec::new(),
            rests: Vec::new(),
            par: Default::default(),
            rayleigh: 0.0,
        }
    }

    /// HexahedronFEMForceFieldAndMass: the same force field carrying SOFA's element masses.
    pub fn with_mass() -> Self {
        let mut f = Self::new();
        f.data = canape_core::data::mass_fields(std::mem::take(&mut f.data))
            .with(
                "density",
                DataKind::Real,
                "1",
                "density == volumetric mass in english (kg.m-3)",
            )
            .with(
                "lumpedMass",
                DataKind::Bool,
                "0",
                "Does it use lumped masses?",
            )
            .with(
                "massMatrices",
                DataKind::Reals(0),
                "",
                "Mass matrices per element (M_i)",
            );
        f.mass = Some(HexMass {
            density: 1.0,
            lumped: false,
            block: Vec::new(),
            particle: Vec::new(),
            gravity: Vec3::zeros(),
        });
        f
    }

    fn setup_mass(&mut self, n: usize, gravity: Vec3) {
        let density = self.data.real("density");
        let lumped = self.data.bool("lumpedMass");
        let separate = self.data.bool("separateGravity");
        let Some(m) = self.mass.as_mut() else { return };
        m.density = density;
        m.lumped = lumped;
        m.gravity = if separate { Vec3::zeros() } else { gravity };
        m.block.clear();
        m.particle = vec![0.0; n];
        for (el, p) in self.elems.iter().zip(&self.rests) {
            let vol = (p[1] - p[0]).norm() * (p[3] - p[0]).norm() * (p[4] - p[0]).norm();
            m.block.push(vol * (8.0 / 27.0) * density);
            for &i in &el.idx {
                m.particle[i as usize] += vol * density / 8.0;
            }
        }
    }

    /// Set up elements from rest positions and hexahedra (used by init and tests).
    pub fn setup(&mut self, rest: &[f64], hexa: &[[u32; 8]]) {
        let young = self.data.reals("youngModulus").to_vec();
        let nu = self.data.reals("poissonRatio").to_vec();
        let young = if young.is_empty() {
            vec![5000.0]
        } else {
            young
        };
        let nu = if nu.is_empty() { vec![0.45] } else { nu };
        self.elems.clear();
        self.ks.clear();
        self.rests.clear();
        self.par.reset();
        for (e, h) in hexa.iter().enumerate() {
            let p: [Vec3; 8] = std::array::from_fn(|w| get3(rest, h[w] as usize));
            let r = frame(self.method, &p);
            let x0r: [Vec3; 8] = std::array::from_fn(|w| r * p[w]);
            let mat = Material::new(
                *young.get(e).unwrap_or(&young[0]),
                *nu.get(e).unwrap_or(&nu[0]),
                1.0,
            );
            let k = hexa_stiffness(&mat, &x0r);
            if self.ks.last() != Some(&k) {
                self.ks.push(k);
            }
            self.elems.push(HexElem {
                idx: *h,
                k: (self.ks.len() - 1) as u32,
                rot: r,
            });
            self.rests.push(x0r);
        }
    }

    /// Read `method` from Data; an unknown name selects `large` and is returned as error.
    pub fn set_method_from_data(&mut self) -> Result<(), String> {
        let (m, ok) = match self.data.str("method") {
            "large" => (HexaMethod::Large, true),
            "polar" => (HexaMethod::Polar, true),
            "small" => (HexaMethod::Small, true),
            _ => (HexaMethod::Large, false),
        };
        self.method = m;
        if ok {
            Ok(())
        } else {
            Err(self.data.str("method").to_string())
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if let Err(other) = self.set_method_from_data() {
            ctx.warn(format!("unknown method '{other}'; using 'large'"));
        }
        if self.data.bool("updateStiffnessMatrix") {
            ctx.warn("updateStiffnessMatrix is not supported yet and is ignored");
        }
        self.rayleigh = self.data.real("rayleighStiffness");
        self.elems.clear();
        let (y, nu) = (
            self.data.reals("youngModulus").to_vec(),
            self.data.reals("poissonRatio").to_vec(),
        );
        if let Some(m) = check_material(&y, &nu) {
            ctx.error(m);
            return;
        }
        let Some((rest, mesh)) =
            fem_inputs(ctx, &self.data, |m| !m.hexahedra.is_empty(), "hexahedra")
        else {
            return;
        };
        self.setup(&rest, &mesh.hexahedra);
        if self.mass.is_some() {
            if self.data.bool("separateGravity") {
                ctx.warn("separateGravity is not supported by HexahedronFEMForceFieldAndMass in Canapé: gravity is left out");
            }
            let g = ctx.gravity();
            self.setup_mass(rest.len() / 3, g);
        }
        let _ = self.data.set_value("initialPoints", Value::Reals(rest));
    }
}

impl_component!(
    HexahedronFemForceField,
    |s| if s.mass.is_some() {
        "HexahedronFEMForceFieldAndMass"
    } else {
        "HexahedronFEMForceField"
    },
    init
);

impl ForceField for HexahedronFemForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let method = self.method;
        let ks = &self.ks;
        for (el, rest) in self.elems.iter_mut().zip(&self.rests) {
            let p: [Vec3; 8] = std::array::from_fn(|w| get3(x, el.idx[w] as usize));
            let mut r = frame(method, &p);
            if !r.iter().all(|v| v.is_finite()) {
                r = el.rot;
            }
            el.rot = r;
            let mut d = SMatrix::<f64, 24, 1>::zeros();
            for w in 0..8 {
                let dw = r * p[w];
                for c in 0..3 {
                    d[3 * w + c] = rest[w][c] - dw[c];
                }
            }
            let k: &K24 = &ks[el.k as usize]; // by reference: no copy of the 24×24 matrix
            let fe = k * d;
            let rt = r.transpose();
            for w in 0..8 {
                let fw = rt * Vec3::new(fe[3 * w], fe[3 * w + 1], fe[3 * w + 2]);
                let n = el.idx[w] as usize;
                f[3 * n] += fw.x;
                f[3 * n + 1] += fw.y;
                f[3 * n + 2] += fw.z;
            }
        }
        if let Some(m) = &self.mass {
            for (i, pm) in m.particle.iter().enumerate().take(f.len() / 3) {
                for c in 0..3 {
                    f[3 * i + c] += m.gravity[c] * pm;
                }
            }
        }
    }

    fn has_mass(&self) -> bool {
        self.mass.is_some()
    }

    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        let Some(m) = &self.mass else { return };
        for (el, b) in self.elems.iter().zip(&m.block) {
            let mb = b * factor;
            if m.lumped {
                for &i in &el.idx {
                    let i = i as usize;
                    for c in 0..3 {
                        res[3 * i + c] += 8.0 * mb * dx[3 * i + c];
                    }
                }
                continue;
            }
            let mut s = Vec3::zeros();
            for &j in &el.idx {
                s += get3(dx, j as usize);
            }
            for &i in &el.idx {
                let i = i as usize;
                for c in 0..3 {
                    res[3 * i + c] += mb * s[c];
                }
            }
        }
    }

    fn add_m_to_matrix(&self, mat: &mut dyn MatrixSink, factor: f64, offset: usize) {
        let Some(m) = &self.mass else { return };
        for (el, b) in self.elems.iter().zip(&m.block) {
            let mb = b * factor;
            for &i in &el.idx {
                for &j in &el.idx {
                    if m.lumped && i != j {
                        continue;
                    }
                    let v = if m.lumped { 8.0 * mb } else { mb };
                    for c in 0..3 {
                        mat.add(offset + 3 * i as usize + c, offset + 3 * j as usize + c, v);
                    }
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let (elems, ks) = (&self.elems, &self.ks);
        let body = |range: std::ops::Range<usize>, df: &mut [f64], lo: usize| {
            dforce_range_dispatch(&elems[range], ks, dx, df, lo, k_factor)
        };
        self.par.run(elems.len(), |e| elems[e].idx, df, body);
    }

    /// Blocks −k Rᵀ K_ab R of every element (HexahedronFEMForceField::addKToMatrix). K is
    /// symmetric, so the block (b, a) is added as the transpose of (a, b): half the products.
    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        for el in &self.elems {
            let k = &self.ks[el.k as usize];
            let rt = el.rot.transpose() * (-k_factor);
            let at = |a: usize| offset + 3 * el.idx[a] as usize;
            for a in 0..8 {
                for b in a..8 {
                    let (wab, wba) = (m.wants(at(a), at(b)), m.wants(at(b), at(a)));
                    if !wab && !wba {
                        continue;
                    }
                    let blk: Mat3 = k.fixed_view::<3, 3>(3 * a, 3 * b).into_owned();
                    let sr = rt * (blk * el.rot);
                    if wab {
                        m.add_block3(at(a), at(b), &sr);
                    }
                    if a != b && wba {
                        m.add_block3(at(b), at(a), &sr.transpose());
                    }
                }
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}

#[cfg(test)]
mod simd_tests {
    use super::*;

    /// The AVX2/FMA build of the product gives the same bits as the baseline loop, and pairs of
    /// elements the same bits as single ones.
    #[test]
    fn dispatched_product_is_bit_identical() {
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let mut k = K24::zeros();
        for v in k.iter_mut() {
            *v = rnd();
        }
        let elems: Vec<HexElem> = (0..5)
            .map(|e| HexElem {
                idx: std::array::from_fn(|w| ((e * 3 + w) % 20) as u32),
                k: 0,
                rot: nalgebra::Rotation3::from_euler_angles(rnd(), rnd(), rnd()).into_inner(),
            })
            .collect();
        let dx: Vec<f64> = (0..60).map(|_| rnd()).collect();
        let mut a = vec![0.0; 60];
        let mut b = vec![0.0; 60];
        dforce_range(&elems, &[k], &dx, &mut a, 0, -0.7);
        dforce_range_dispatch(&elems, &[k], &dx, &mut b, 0, -0.7);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        assert!(a.iter().any(|v| *v != 0.0));
        // one element at a time (no pairs): the same bits
        let mut c = vec![0.0; 60];
        for e in 0..elems.len() {
            dforce_range(&elems[e..e + 1], &[k], &dx, &mut c, 0, -0.7);
        }
        assert!(a.iter().zip(&c).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}
