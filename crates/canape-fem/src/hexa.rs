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

/// An element stiffness with rows and columns in component-major order (index 8c + w for
/// component c of node w), stored column by column: `kp[col][row]`. In this order the rotations
/// and the product work on whole 8-node component vectors (4 doubles per AVX2 instruction)
/// instead of on 3-vectors one node at a time.
type Kp = [[f64; 24]; 24];

/// [`Kp`] of an element stiffness in SOFA's node-major order (index 3w + c).
fn component_major(k: &K24) -> Box<Kp> {
    let mut kp = Box::new([[0.0; 24]; 24]);
    for (col, kc) in kp.iter_mut().enumerate() {
        let (v, d) = (col % 8, col / 8);
        for (row, kr) in kc.iter_mut().enumerate() {
            let (w, c) = (row % 8, row / 8);
            *kr = k[(3 * w + c, 3 * v + d)];
        }
    }
    kp
}

/// `scale`·Rᵀ K R (K in the element frame, R its rotation world → element) in component-major
/// order, as Rᵀ (K R) column by column: (K R) column (b, j) = Σ_m R_mj K column (b, m), then
/// row (a, i) = Σ_m R_mi (K R) row (a, m). Runs with AVX2 and FMA where the CPU has them (the
/// baseline computes the same fused operations).
fn rotated_stiffness(kp: &Kp, r: &Mat3, scale: f64, out: &mut Kp) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above).
        return unsafe { rotated_stiffness_avx2(kp, r, scale, out) };
    }
    rotated_stiffness_impl(kp, r, scale, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn rotated_stiffness_avx2(kp: &Kp, r: &Mat3, scale: f64, out: &mut Kp) {
    rotated_stiffness_impl(kp, r, scale, out)
}

#[inline(always)]
fn rotated_stiffness_impl(kp: &Kp, r: &Mat3, scale: f64, out: &mut Kp) {
    let mut c = [[0.0; 24]; 24];
    for j in 0..3 {
        let (r0, r1, r2) = (r[(0, j)], r[(1, j)], r[(2, j)]);
        for b in 0..8 {
            let (k0, k1, k2) = (&kp[b], &kp[8 + b], &kp[16 + b]);
            for (row, v) in c[8 * j + b].iter_mut().enumerate() {
                *v = k2[row].mul_add(r2, k1[row].mul_add(r1, k0[row] * r0));
            }
        }
    }
    let rs = r * scale;
    for (o, cc) in out.iter_mut().zip(&c) {
        for i in 0..3 {
            let (r0, r1, r2) = (rs[(0, i)], rs[(1, i)], rs[(2, i)]);
            for a in 0..8 {
                o[8 * i + a] = cc[16 + a].mul_add(r2, cc[8 + a].mul_add(r1, cc[a] * r0));
            }
        }
    }
}

/// The element's 8 nodes' dx, component by component (`g[c][w]`).
#[inline(always)]
fn gather(el: &HexElem, dx: &[f64]) -> [[f64; 8]; 3] {
    let mut g = [[0.0; 8]; 3];
    for (w, &n) in el.idx.iter().enumerate() {
        let n = n as usize;
        let s = &dx[3 * n..3 * n + 3];
        g[0][w] = s[0];
        g[1][w] = s[1];
        g[2][w] = s[2];
    }
    g
}

/// df[idx − lo] −= f, f component by component (`f[c][w]`), node after node.
#[inline(always)]
fn scatter(el: &HexElem, f: &[[f64; 8]; 3], df: &mut [f64], lo: usize) {
    for (w, &n) in el.idx.iter().enumerate() {
        let n = n as usize - lo;
        let d = &mut df[3 * n..3 * n + 3];
        d[0] -= f[0][w];
        d[1] -= f[1][w];
        d[2] -= f[2][w];
    }
}

/// f[idx] += v, v component by component (`v[c][w]`), node after node.
#[inline(always)]
fn scatter_add(el: &HexElem, v: &[[f64; 8]; 3], f: &mut [f64]) {
    for (w, &n) in el.idx.iter().enumerate() {
        let n = n as usize;
        let d = &mut f[3 * n..3 * n + 3];
        d[0] += v[0][w];
        d[1] += v[1][w];
        d[2] += v[2][w];
    }
}

/// Rest positions of an element's nodes in its rest frame, component by component
/// (`rest[c][w]`): the layout the force product reads.
type Rest = [[f64; 8]; 3];

/// Node `w` of a [`Rest`].
fn rest_point(rest: &Rest, w: usize) -> Vec3 {
    Vec3::new(rest[0][w], rest[1][w], rest[2][w])
}

/// The rest positions handed to the stiffness product, which does not read them.
const NO_REST: Rest = [[0.0; 8]; 3];

/// One element, with `FORCE` f[idx] += Rᵀ K (X0r − R x) (`add_force`), otherwise
/// df[idx − lo] −= k · Rᵀ K R dx (the stiffness product), in component-major order throughout:
/// gather the 8 nodes' values of `x`, turn them into the element frame (and subtract them from
/// the rest positions for `FORCE`), multiply by K column by column, turn the result back and
/// add it (`FORCE`) or subtract it times k. Every sum is a chain of fused multiply-adds in a fixed order, so the AVX2 build
/// ([`elements_avx2`]) and the baseline build give the same bits.
#[inline(always)]
fn element_kernel<const FORCE: bool>(
    el: &HexElem,
    rest: &Rest,
    kp: &Kp,
    x: &[f64],
    out: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    let g = gather(el, x);
    let r = &el.rot;
    let mut l = [0.0; 24];
    for (i, li) in l.chunks_exact_mut(8).enumerate() {
        let (a, b, c) = (r[(i, 0)], r[(i, 1)], r[(i, 2)]);
        for w in 0..8 {
            let v = c.mul_add(g[2][w], b.mul_add(g[1][w], a * g[0][w]));
            li[w] = if FORCE { rest[i][w] - v } else { v };
        }
    }
    let mut y = [0.0; 24];
    for (col, &xj) in kp.iter().zip(l.iter()) {
        for (yi, &kij) in y.iter_mut().zip(col) {
            *yi = kij.mul_add(xj, *yi);
        }
    }
    let mut f = [[0.0; 8]; 3];
    for (i, fi) in f.iter_mut().enumerate() {
        let (a, b, c) = (r[(0, i)], r[(1, i)], r[(2, i)]);
        for w in 0..8 {
            let v = c.mul_add(y[16 + w], b.mul_add(y[8 + w], a * y[w]));
            fi[w] = if FORCE { v } else { v * k_factor };
        }
    }
    if FORCE {
        scatter_add(el, &f, out);
    } else {
        scatter(el, &f, out, lo);
    }
}

/// [`element_kernel`] for every element of `elems` (`rests` parallel to them for `FORCE`,
/// unread otherwise; `kps`: the stiffnesses in component-major order, see [`Kp`]).
#[inline(always)]
fn elements_range<const FORCE: bool>(
    elems: &[HexElem],
    rests: &[Rest],
    kps: &[Box<Kp>],
    x: &[f64],
    out: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    for (e, el) in elems.iter().enumerate() {
        let rest = if FORCE { &rests[e] } else { &NO_REST };
        element_kernel::<FORCE>(el, rest, &kps[el.k as usize], x, out, lo, k_factor);
    }
}

/// [`element_kernel`] with AVX2 and FMA intrinsics for `N` elements sharing one stiffness
/// (1, or 2 on a regular grid: each column of K loaded once serves both, and the two sets of
/// accumulators hide the latency of the fused multiply-adds). The same operations in the same
/// order as the baseline, so the same bits, on 4 nodes' components per instruction. Written
/// with intrinsics because the auto-vectorised loop kept the frame-turned displacement in
/// registers and extracted its lanes one by one for the column broadcasts (measured 3× slower).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn elements_avx2<const N: usize, const FORCE: bool>(
    els: [&HexElem; N],
    rests: [&Rest; N],
    kp: &Kp,
    x: &[f64],
    out: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    use std::arch::x86_64::*;
    let mut l = [[0.0; 24]; N];
    // SAFETY (all unsafe blocks below): AVX2 and FMA are enabled for this function, and every
    // load and store reads or writes 4 doubles inside a local array, a rest row or a column.
    unsafe {
        for ((el, rest), l) in els.iter().zip(&rests).zip(l.iter_mut()) {
            let g = gather(el, x);
            let r = &el.rot;
            for i in 0..3 {
                let (a, b, c) = (
                    _mm256_set1_pd(r[(i, 0)]),
                    _mm256_set1_pd(r[(i, 1)]),
                    _mm256_set1_pd(r[(i, 2)]),
                );
                for h in 0..2 {
                    let gx = _mm256_loadu_pd(g[0].as_ptr().add(4 * h));
                    let gy = _mm256_loadu_pd(g[1].as_ptr().add(4 * h));
                    let gz = _mm256_loadu_pd(g[2].as_ptr().add(4 * h));
                    let mut v =
                        _mm256_fmadd_pd(c, gz, _mm256_fmadd_pd(b, gy, _mm256_mul_pd(a, gx)));
                    if FORCE {
                        v = _mm256_sub_pd(_mm256_loadu_pd(rest[i].as_ptr().add(4 * h)), v);
                    }
                    _mm256_storeu_pd(l.as_mut_ptr().add(8 * i + 4 * h), v);
                }
            }
        }
        let mut y = [[_mm256_setzero_pd(); 6]; N];
        for (j, col) in kp.iter().enumerate() {
            let p = col.as_ptr();
            let xj: [__m256d; N] = std::array::from_fn(|e| _mm256_broadcast_sd(&l[e][j]));
            for q in 0..6 {
                let kq = _mm256_loadu_pd(p.add(4 * q));
                for e in 0..N {
                    y[e][q] = _mm256_fmadd_pd(kq, xj[e], y[e][q]);
                }
            }
        }
        let kf = _mm256_set1_pd(k_factor);
        for (el, y) in els.iter().zip(&y) {
            let r = &el.rot;
            let mut f = [[0.0; 8]; 3];
            for (i, fi) in f.iter_mut().enumerate() {
                let (a, b, c) = (
                    _mm256_set1_pd(r[(0, i)]),
                    _mm256_set1_pd(r[(1, i)]),
                    _mm256_set1_pd(r[(2, i)]),
                );
                for h in 0..2 {
                    let mut v = _mm256_fmadd_pd(
                        c,
                        y[4 + h],
                        _mm256_fmadd_pd(b, y[2 + h], _mm256_mul_pd(a, y[h])),
                    );
                    if !FORCE {
                        v = _mm256_mul_pd(v, kf);
                    }
                    _mm256_storeu_pd(fi.as_mut_ptr().add(4 * h), v);
                }
            }
            if FORCE {
                scatter_add(el, &f, out);
            } else {
                scatter(el, &f, out, lo);
            }
        }
    }
}

/// [`elements_range`] with [`elements_avx2`], consecutive elements sharing a stiffness two at
/// a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn elements_range_avx2<const FORCE: bool>(
    elems: &[HexElem],
    rests: &[Rest],
    kps: &[Box<Kp>],
    x: &[f64],
    out: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    let rest = |e: usize| if FORCE { &rests[e] } else { &NO_REST };
    let mut e = 0;
    while e < elems.len() {
        let a = &elems[e];
        let kp = &kps[a.k as usize];
        if let Some(b) = elems.get(e + 1).filter(|b| b.k == a.k) {
            let rs = [rest(e), rest(e + 1)];
            elements_avx2::<2, FORCE>([a, b], rs, kp, x, out, lo, k_factor);
            e += 2;
        } else {
            elements_avx2::<1, FORCE>([a], [rest(e)], kp, x, out, lo, k_factor);
            e += 1;
        }
    }
}

/// [`elements_range`], with AVX2 and FMA where the CPU has them. Measured: an AVX-512 variant
/// of the product was slower than AVX2 on this project's machines (2026-11-22).
fn elements_dispatch<const FORCE: bool>(
    elems: &[HexElem],
    rests: &[Rest],
    kps: &[Box<Kp>],
    x: &[f64],
    out: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above).
        return unsafe { elements_range_avx2::<FORCE>(elems, rests, kps, x, out, lo, k_factor) };
    }
    elements_range::<FORCE>(elems, rests, kps, x, out, lo, k_factor)
}

/// df[n − lo] −= k · Rᵀ K R dx for a range of elements.
fn dforce_range_dispatch(
    elems: &[HexElem],
    kps: &[Box<Kp>],
    dx: &[f64],
    df: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    elements_dispatch::<false>(elems, &[], kps, dx, df, lo, k_factor)
}

/// Each element's rotation R from positions x (the previous one kept when the new frame is
/// not finite).
fn update_rotations(method: HexaMethod, elems: &mut [HexElem], x: &[f64]) {
    for el in elems {
        let p: [Vec3; 8] = std::array::from_fn(|w| get3(x, el.idx[w] as usize));
        let r = frame(method, &p);
        if r.iter().all(|v| v.is_finite()) {
            el.rot = r;
        }
    }
}

/// f += Rᵀ K (X0r − R x) for every element, updating each element's rotation R first.
fn add_force_dispatch(
    method: HexaMethod,
    elems: &mut [HexElem],
    kps: &[Box<Kp>],
    rests: &[Rest],
    x: &[f64],
    f: &mut [f64],
) {
    update_rotations(method, elems, x);
    elements_dispatch::<true>(elems, rests, kps, x, f, 0, 1.0)
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
#[inline(always)]
fn mean_edges(p: &[Vec3; 8]) -> (Vec3, Vec3, Vec3) {
    let ex = (p[1] - p[0] + p[2] - p[3] + p[5] - p[4] + p[6] - p[7]) * 0.25;
    let ey = (p[3] - p[0] + p[2] - p[1] + p[7] - p[4] + p[6] - p[5]) * 0.25;
    let ez = (p[4] - p[0] + p[5] - p[1] + p[7] - p[3] + p[6] - p[2]) * 0.25;
    (ex, ey, ez)
}

#[inline(always)]
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

#[derive(Clone)]
struct HexElem {
    idx: [u32; 8],
    /// Index of the element stiffness in `HexahedronFemForceField::kps`.
    k: u32,
    rot: Mat3,
}

/// The mass part of HexahedronFEMForceFieldAndMass (SOFA's formulation, including its quirk:
/// every 3×3 node block of the element mass matrix is (8/27)·ρ·vol·I, while gravity uses ρ·vol/8
/// per node; HexahedronFEMForceFieldAndMass.inl computeElementMass/integrateMass).
#[derive(Clone)]
struct HexMass {
    density: f64,
    lumped: bool,
    /// (8/27)·ρ·vol per element.
    block: Vec<f64>,
    /// Gravity masses per node.
    particle: Vec<f64>,
    gravity: Vec3,
}

#[derive(Clone)]
pub struct HexahedronFemForceField {
    data: DataTable,
    mass: Option<HexMass>,
    method: HexaMethod,
    elems: Vec<HexElem>,
    /// Element stiffness matrices in the element frame, in component-major order ([`Kp`]: what
    /// the stiffness product reads); consecutive elements of the same shape and material (a
    /// regular grid) share one, which then stays in cache during the products.
    kps: Vec<Box<Kp>>,
    /// Rest positions in the element frame, parallel to `elems` (kept apart: the stiffness
    /// product, run at every CG iteration, reads 108 bytes per element instead of 300).
    rests: Vec<Rest>,
    /// The stiffness product over worker threads.
    par: crate::common::ParallelLoop,
    rayleigh: f64,
    /// Node pairs of the elements for assembly, made on the first assembly.
    pairs: std::sync::OnceLock<crate::pairs::NodePairs>,
    /// Per-element stiffness and mass coefficients from the topology (a SparseGridTopology's
    /// ½ for boundary cells); empty: all 1.
    coef: Vec<f64>,
    /// SOFA's HexahedralFEMForceField(AndMass): the same element (see [`Self::hexahedral`]).
    hexahedral: bool,
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
            hexahedral: false,
            coef: Vec::new(),
            mass: None,
            method: HexaMethod::Large,
            elems: Vec::new(),
            kps: Vec::new(),
            pairs: std::sync::OnceLock::new(),
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

    /// HexahedralFEMForceField (Sofa/Component/SolidMechanics/FEM/Elastic/.../
    /// HexahedralFEMForceField.inl), with mass: HexahedralFEMForceFieldAndMass. SOFA's class
    /// has the same rest frames ("large" and "polar"), forces, tangent and element masses as
    /// HexahedronFEMForceField; its element stiffness is a closed form that equals the exact
    /// (Gauss) one on axis-aligned cubes up to float rounding and differs elsewhere, so Canapé
    /// computes the exact one and warns when an element is not such a cube. It has no "small"
    /// method and no sparse-grid coefficients.
    pub fn hexahedral(with_mass: bool) -> Self {
        let mut f = if with_mass {
            Self::with_mass()
        } else {
            Self::new()
        };
        f.hexahedral = true;
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
        for (e, (el, rest)) in self.elems.iter().zip(&self.rests).enumerate() {
            let p: [Vec3; 8] = std::array::from_fn(|w| rest_point(rest, w));
            // times the sparse grid's mass coefficient (SOFA's getMassCoef)
            let vol = (p[1] - p[0]).norm()
                * (p[3] - p[0]).norm()
                * (p[4] - p[0]).norm()
                * self.coef.get(e).copied().unwrap_or(1.0);
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
        self.kps.clear();
        self.pairs = std::sync::OnceLock::new();
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
            let mut k = hexa_stiffness(&mat, &x0r);
            // SOFA's HexahedronFEMForceField scales by the sparse grid's stiffness coefficient
            if let Some(c) = self.coef.get(e).filter(|c| **c != 1.0) {
                k *= *c;
            }
            let kp = component_major(&k);
            if self.kps.last() != Some(&kp) {
                self.kps.push(kp);
            }
            self.elems.push(HexElem {
                idx: *h,
                k: (self.kps.len() - 1) as u32,
                rot: r,
            });
            self.rests
                .push(std::array::from_fn(|c| std::array::from_fn(|w| x0r[w][c])));
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
        if self.hexahedral && self.method == HexaMethod::Small {
            ctx.warn("HexahedralFEMForceField has no 'small' method (SOFA's has \"large\" and \"polar\"); using 'large'");
            self.method = HexaMethod::Large;
        }
        if self.data.bool("updateStiffnessMatrix") {
            ctx.warn("updateStiffnessMatrix is not supported yet and is ignored");
        }
        self.rayleigh = self.data.real("rayleighStiffness");
        self.elems.clear();
        self.pairs = std::sync::OnceLock::new();
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
        self.coef = if self.hexahedral {
            // SOFA's HexahedralFEMForceField reads no sparse-grid coefficients
            Vec::new()
        } else {
            ctx.topology_where(|m| !m.hexahedra.is_empty())
                .and_then(|t| t.hexahedron_coefficients())
                .filter(|c| c.len() == mesh.hexahedra.len())
                .map(<[f64]>::to_vec)
                .unwrap_or_default()
        };
        if self.hexahedral {
            if let Some(e) = mesh
                .hexahedra
                .iter()
                .position(|h| !is_axis_aligned_cube(&rest, h))
            {
                ctx.warn(format!(
                    "hexahedron {e} is not an axis-aligned cube at rest: SOFA's HexahedralFEMForceField computes its stiffness by a closed form that is exact only for such cubes; Canapé integrates the element exactly, as HexahedronFEMForceField does, so results differ from SOFA's there"
                ));
            }
        }
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

/// Whether the hexahedron's rest edges from node 0 are along x, y and z with equal lengths
/// (to 1e-9 relative) and the element is the box they span.
fn is_axis_aligned_cube(rest: &[f64], h: &[u32; 8]) -> bool {
    let p: [Vec3; 8] = std::array::from_fn(|w| get3(rest, h[w] as usize));
    let l = (p[1] - p[0]).norm();
    let tol = 1e-9 * l.max(f64::MIN_POSITIVE);
    COEF.iter().zip(&p).all(|(s, q)| {
        let want = p[0] + Vec3::new(s[0] + 1.0, s[1] + 1.0, s[2] + 1.0) * (l / 2.0);
        (q - want).norm() <= tol
    })
}

impl_component!(
    HexahedronFemForceField,
    |s| match (s.hexahedral, s.mass.is_some()) {
        (false, true) => "HexahedronFEMForceFieldAndMass",
        (false, false) => "HexahedronFEMForceField",
        (true, true) => "HexahedralFEMForceFieldAndMass",
        (true, false) => "HexahedralFEMForceField",
    },
    init
);

impl ForceField for HexahedronFemForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        add_force_dispatch(self.method, &mut self.elems, &self.kps, &self.rests, x, f);
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
        let (elems, kps) = (&self.elems, &self.kps);
        let body = |range: std::ops::Range<usize>, df: &mut [f64], lo: usize| {
            dforce_range_dispatch(&elems[range], kps, dx, df, lo, k_factor)
        };
        self.par.run(elems.len(), |e| elems[e].idx, df, body);
    }

    /// Blocks −k Rᵀ K_ab R of every element (HexahedronFEMForceField::addKToMatrix). K is
    /// symmetric, so the block (b, a) is added as the transpose of (a, b): half the products.
    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        use crate::pairs::{local_pairs, NodePairs};
        let pairs = self.pairs.get_or_init(|| {
            let idx: Vec<[u32; 8]> = self.elems.iter().map(|el| el.idx).collect();
            NodePairs::new::<8, 28>(&idx)
        });
        // −k Rᵀ K R, symmetric: the 8 diagonal and 28 upper blocks, read from the rotated
        // matrix straight into the node-pair sums
        let mut d = [[0.0; 24]; 24];
        pairs.assemble_direct::<8, 28>(m, offset, |e, want_pairs, adder| {
            let el = &self.elems[e];
            let kp = &self.kps[el.k as usize];
            if !want_pairs {
                // the diagonal blocks only (block-Jacobi): 8 products of 3×3 blocks
                let rt = el.rot.transpose() * (-k_factor);
                for a in 0..8 {
                    let b = rt * (Mat3::from_fn(|i, j| kp[8 * j + a][8 * i + a]) * el.rot);
                    adder.add(a, a, |i, j| b[(i, j)]);
                }
                return;
            }
            rotated_stiffness(kp, &el.rot, -k_factor, &mut d);
            for a in 0..8 {
                adder.add(a, a, |i, j| d[8 * j + a][8 * i + a]);
            }
            for (a, b) in local_pairs::<8>() {
                adder.add(a, b, |i, j| d[8 * j + b][8 * i + a]);
            }
        });
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}

#[cfg(test)]
mod simd_tests {
    use super::*;

    /// The AVX2/FMA build of the product gives the same bits as the baseline loop, and both
    /// equal −k Rᵀ K R dx computed densely in node-major order (up to round-off).
    /// Deterministic pseudo-random numbers in [−0.5, 0.5).
    fn rng(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        }
    }

    /// The element forces Rᵀ K (X0r − R x): the dispatched build gives the baseline bits and
    /// the dense node-major formula's values, and the rotations are updated.
    #[test]
    fn dispatched_forces_are_bit_identical_and_right() {
        let mut rnd = rng(777u64);
        // two unit cubes side by side, stretched and sheared a little
        let mut ff = HexahedronFemForceField::new();
        let mut rest = Vec::new();
        for k in 0..2 {
            for j in 0..2 {
                for i in 0..3 {
                    rest.extend([i as f64, j as f64, k as f64]);
                }
            }
        }
        let at = |i: u32, j: u32, k: u32| i + 3 * j + 6 * k;
        let hexa: Vec<[u32; 8]> = (0..2)
            .map(|i| {
                [
                    at(i, 0, 0),
                    at(i + 1, 0, 0),
                    at(i + 1, 1, 0),
                    at(i, 1, 0),
                    at(i, 0, 1),
                    at(i + 1, 0, 1),
                    at(i + 1, 1, 1),
                    at(i, 1, 1),
                ]
            })
            .collect();
        ff.setup(&rest, &hexa);
        let x: Vec<f64> = rest.iter().map(|v| v * 1.1 + 0.1 * rnd()).collect();
        let mut elems = ff.elems.clone();
        let (mut a, mut b) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        update_rotations(ff.method, &mut elems, &x);
        elements_range::<true>(&elems, &ff.rests, &ff.kps, &x, &mut a, 0, 1.0);
        ff.add_force(&x, &[], &mut b);
        assert!(a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()));
        let mut c = vec![0.0; x.len()];
        for (el, rest) in ff.elems.iter().zip(&ff.rests) {
            let p: [Vec3; 8] = std::array::from_fn(|w| get3(&x, el.idx[w] as usize));
            let r = frame(ff.method, &p);
            assert_eq!(el.rot, r);
            let k = K24::from_fn(|i, j| {
                ff.kps[el.k as usize][8 * (j % 3) + j / 3][8 * (i % 3) + i / 3]
            });
            let d =
                SMatrix::<f64, 24, 1>::from_fn(|i, _| rest[i % 3][i / 3] - (r * p[i / 3])[i % 3]);
            let fe = k * d;
            for w in 0..8 {
                let fw = r.transpose() * Vec3::new(fe[3 * w], fe[3 * w + 1], fe[3 * w + 2]);
                for q in 0..3 {
                    c[3 * el.idx[w] as usize + q] += fw[q];
                }
            }
        }
        let scale = c.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 1.0);
        assert!(a.iter().zip(&c).all(|(p, q)| (p - q).abs() < 1e-12 * scale));
    }

    #[test]
    fn dispatched_product_is_bit_identical_and_right() {
        let mut rnd = rng(12345u64);
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
        let kps = [component_major(&k)];
        let mut a = vec![0.0; 60];
        let mut b = vec![0.0; 60];
        elements_range::<false>(&elems, &[], &kps, &dx, &mut a, 0, -0.7);
        dforce_range_dispatch(&elems, &kps, &dx, &mut b, 0, -0.7);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        // dense reference
        let mut c = vec![0.0; 60];
        for el in &elems {
            let mut big_r = K24::zeros();
            for w in 0..8 {
                big_r
                    .fixed_view_mut::<3, 3>(3 * w, 3 * w)
                    .copy_from(&el.rot);
            }
            let ke = big_r.transpose() * k * big_r;
            let xe = SMatrix::<f64, 24, 1>::from_fn(|i, _| dx[3 * el.idx[i / 3] as usize + i % 3]);
            let fe = ke * xe;
            for i in 0..24 {
                c[3 * el.idx[i / 3] as usize + i % 3] += 0.7 * fe[i];
            }
        }
        let scale = c.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 0.1);
        assert!(a.iter().zip(&c).all(|(x, y)| (x - y).abs() < 1e-12 * scale));
        // the rotated stiffness of assembly: dispatched = baseline bits, and = −0.7 Rᵀ K R
        let rot = elems[1].rot;
        let (mut p, mut q) = ([[0.0; 24]; 24], [[0.0; 24]; 24]);
        rotated_stiffness(&kps[0], &rot, -0.7, &mut p);
        rotated_stiffness_impl(&kps[0], &rot, -0.7, &mut q);
        assert!(p
            .as_flattened()
            .iter()
            .zip(q.as_flattened())
            .all(|(x, y)| x.to_bits() == y.to_bits()));
        let mut big_r = K24::zeros();
        for w in 0..8 {
            big_r.fixed_view_mut::<3, 3>(3 * w, 3 * w).copy_from(&rot);
        }
        let ke = big_r.transpose() * k * big_r * -0.7;
        for (col, pc) in p.iter().enumerate() {
            for (row, v) in pc.iter().enumerate() {
                let dense = ke[(3 * (row % 8) + row / 8, 3 * (col % 8) + col / 8)];
                assert!((v - dense).abs() < 1e-13, "({row}, {col}): {v} vs {dense}");
            }
        }
    }
}

#[cfg(test)]
mod coefficient_tests {
    use super::*;

    /// A sparse grid's coefficient scales an element's stiffness (and its masses).
    #[test]
    fn coefficients_scale_stiffness_and_mass() {
        let rest = [
            0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0,
            1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0,
        ];
        let hexa = [[0, 1, 2, 3, 4, 5, 6, 7]];
        let mut x = rest.to_vec();
        x[18] += 0.01;
        let run = |coef: Vec<f64>| {
            let mut ff = HexahedronFemForceField::with_mass();
            ff.coef = coef;
            ff.setup(&rest, &hexa);
            ff.setup_mass(8, Vec3::zeros());
            let mut f = vec![0.0; 24];
            ff.add_force(&x, &[0.0; 24], &mut f);
            let m: f64 = ff.mass.as_ref().unwrap().particle.iter().sum();
            (f, m)
        };
        let (f1, m1) = run(Vec::new());
        let (f2, m2) = run(vec![0.5]);
        assert!(f1.iter().any(|v| v.abs() > 1e-6));
        for (a, b) in f1.iter().zip(&f2) {
            assert!((a * 0.5 - b).abs() < 1e-12 * a.abs().max(1.0), "{a} {b}");
        }
        assert!((m1 * 0.5 - m2).abs() < 1e-12);
    }
}

#[cfg(test)]
mod hexahedral_tests {
    use super::*;

    #[test]
    fn only_axis_aligned_cubes_pass_the_hexahedral_check() {
        let box_points = |l: [f64; 3]| -> Vec<f64> {
            COEF.iter()
                .flat_map(|s| (0..3).map(move |c| (s[c] + 1.0) / 2.0 * l[c] + 3.0))
                .collect()
        };
        let h = [0, 1, 2, 3, 4, 5, 6, 7];
        assert!(is_axis_aligned_cube(&box_points([2.0; 3]), &h));
        assert!(!is_axis_aligned_cube(&box_points([2.0, 1.0, 0.5]), &h));
        // a rotated cube is not axis-aligned
        let mut p = box_points([1.0; 3]);
        for q in p.chunks_exact_mut(3) {
            let (x, y) = (q[0], q[1]);
            q[0] = 0.6 * x - 0.8 * y;
            q[1] = 0.8 * x + 0.6 * y;
        }
        assert!(!is_axis_aligned_cube(&p, &h));
    }
}
