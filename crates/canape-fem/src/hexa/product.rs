//! The element loops in component-major order (forces with each element's rotation updated,
//! and the stiffness product), their AVX2/FMA builds that give the baseline's bits, and the
//! rotated element stiffness that assembly reads.

use super::element::frame;
use super::{HexElem, HexaMethod, K24};
use canape_types::{get3, Mat3, Vec3};

/// An element stiffness with rows and columns in component-major order (index 8c + w for
/// component c of node w), stored column by column: `kp[col][row]`. In this order the rotations
/// and the product work on whole 8-node component vectors (4 doubles per AVX2 instruction)
/// instead of on 3-vectors one node at a time.
pub(super) type Kp = [[f64; 24]; 24];

/// [`Kp`] of an element stiffness in SOFA's node-major order (index 3w + c).
pub(super) fn component_major(k: &K24) -> Box<Kp> {
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
pub(super) fn rotated_stiffness(kp: &Kp, r: &Mat3, scale: f64, out: &mut Kp) {
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
pub(super) type Rest = [[f64; 8]; 3];

/// Node `w` of a [`Rest`].
pub(super) fn rest_point(rest: &Rest, w: usize) -> Vec3 {
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
pub(super) fn dforce_range_dispatch(
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
pub(super) fn add_force_dispatch(
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

#[cfg(test)]
mod tests;
