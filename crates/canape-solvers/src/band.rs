//! Band Cholesky factorization (A = L Lᵀ with L of the same lower bandwidth as A), for a
//! direct solver whose elimination order is the given one and whose factor fills its band
//! anyway: a beam or bar numbered along its length under SOFA's NaturalOrderingMethod. There
//! the sparse supernodal factorization stores the same band but splits it into many small
//! supernodes; the band storage lets every update run as one long fused multiply-add loop.
//!
//! Storage is LAPACK's lower band layout, column by column (column j holds rows j..=j+b at
//! offsets 0..=b), with extra zero rows per column so that a panel's columns can be read over
//! the same rows, four at a time, without bounds cases. The factorization is right-looking by
//! panels of eight columns (LAPACK's DPBTRF does the same with larger blocks): factor the panel,
//! then subtract its rank-8 product from the trailing band. Every sum is a chain of fused
//! multiply-adds in a fixed order, so the AVX2 build and the baseline build give the same bits.

use canape_core::matrix::Csr;

/// Columns per panel of the right-looking factorization.
const PANEL: usize = 8;

/// `[f(0), …, f(PANEL − 1)]`, written out (`std::array::from_fn` was not inlined here and cost
/// 14 % of a factorization in calls).
#[inline(always)]
fn per_panel_column<T>(mut f: impl FnMut(usize) -> T) -> [T; PANEL] {
    [f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7)]
}

/// Where each assembled value goes in the band (fixed for one assembly pattern).
pub struct BandPattern {
    n: usize,
    /// Lower bandwidth: the largest i − j of an entry A[i, j].
    b: usize,
    /// Stored values per column (b + 1 band rows and PANEL + 3 zero rows: the AVX2 panel
    /// update reads up to offset b + PANEL + 2, rounding its row count up to four).
    ld: usize,
    /// Per assembled value: its index in the band storage (`u32::MAX`: not stored, the lower
    /// half of a diagonal block whose mirror is).
    map: Vec<u32>,
}

/// The pivot of a column was not positive (or not finite): A is not positive definite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotPositiveDefinite {
    pub column: usize,
}

impl BandPattern {
    /// The band of `a`, which holds the entries on and above the diagonal of a symmetric
    /// matrix row by row (row i of that upper part is column i of the lower part). `None`
    /// when the band storage would not fit 32-bit indices.
    pub fn new(a: &Csr) -> Option<Self> {
        let n = a.n;
        let mut b = 0;
        for i in 0..n {
            for &j in &a.cols[a.row_ptr[i]..a.row_ptr[i + 1]] {
                b = b.max((j as usize).saturating_sub(i));
            }
        }
        let ld = b + PANEL + 4;
        let len = n.checked_mul(ld)?;
        if len >= u32::MAX as usize {
            return None;
        }
        let mut map = vec![u32::MAX; a.vals.len()];
        for i in 0..n {
            for k in a.row_ptr[i]..a.row_ptr[i + 1] {
                let j = a.cols[k] as usize;
                if j >= i {
                    // A[j, i] in column i, row j
                    map[k] = (i * ld + (j - i)) as u32;
                }
            }
        }
        Some(BandPattern { n, b, ld, map })
    }

    /// Number of stored values of the factor.
    pub fn storage(&self) -> usize {
        self.n * self.ld
    }

    /// Factor `a` (the pattern this band was made for) into `values` (resized as needed).
    pub fn factorize(&self, a: &Csr, values: &mut Vec<f64>) -> Result<(), NotPositiveDefinite> {
        values.clear();
        values.resize(self.storage(), 0.0);
        for (&d, &v) in self.map.iter().zip(&a.vals) {
            if d != u32::MAX {
                values[d as usize] = v;
            }
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { factor_avx2(self.n, self.b, self.ld, values) };
        }
        factor_impl::<false>(self.n, self.b, self.ld, values)
    }

    /// Whether partial pivoting would keep every pivot of this factor's matrix on the
    /// diagonal: the multipliers of its LU, L[i, j] / L[j, j], are all at most 1 in magnitude
    /// (then the LU is L D Lᵀ with D = diag(L[j, j]²)).
    pub fn no_row_exchange(&self, values: &[f64]) -> bool {
        (0..self.n).all(|j| {
            let col = &values[j * self.ld..j * self.ld + 1 + self.b.min(self.n - 1 - j)];
            col[1..].iter().all(|l| l.abs() <= col[0])
        })
    }

    /// x = (L Lᵀ)⁻¹ x with the factor from [`BandPattern::factorize`].
    pub fn solve_in_place(&self, values: &[f64], x: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { solve_avx2(self.n, self.b, self.ld, values, x) };
        }
        solve_impl(self.n, self.b, self.ld, values, x)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn factor_avx2(n: usize, b: usize, ld: usize, v: &mut [f64]) -> Result<(), NotPositiveDefinite> {
    factor_impl::<true>(n, b, ld, v)
}

/// The trailing update of a full panel (columns k0..k0 + PANEL) on columns c_lo..=reach, with
/// AVX2 intrinsics: per column, the panel's eight multipliers broadcast, then four rows per
/// step, the row count rounded up to four (the extra rows read zero padding of the panel's
/// columns, so they keep their value, +0). The same fused operations in the same order as the
/// baseline loop in [`factor_impl`], so the same bits.
///
/// # Safety
/// The CPU has AVX2 and FMA; `v` is the band storage of `n` columns of `ld` values with
/// `ld ≥ b + PANEL + 4`, k0 + PANEL ≤ c_lo ≤ reach ≤ min(k0 + PANEL − 1 + b, n − 1).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn panel_update_avx2(v: &mut [f64], ld: usize, k0: usize, c_lo: usize, reach: usize) {
    use std::arch::x86_64::*;
    let base = v.as_mut_ptr();
    for c in c_lo..=reach {
        let len = reach - c + 1;
        // SAFETY (whole block): dst reads and writes offsets up to (reach − c) + 3 ≤ b + 2 of
        // column c < n; column k0 + q is read at offsets (c − k0 − q) + r for r < len + 3,
        // at most b + PANEL + 2 − q < ld, of a column below n.
        unsafe {
            let dst = base.add(c * ld);
            let src: [*const f64; PANEL] =
                std::array::from_fn(|q| base.add((k0 + q) * ld + (c - k0 - q)) as *const f64);
            let s: [__m256d; PANEL] = std::array::from_fn(|q| _mm256_set1_pd(-*src[q]));
            let mut r = 0;
            while r < len {
                let mut acc = _mm256_loadu_pd(dst.add(r));
                for q in 0..PANEL {
                    acc = _mm256_fmadd_pd(_mm256_loadu_pd(src[q].add(r)), s[q], acc);
                }
                _mm256_storeu_pd(dst.add(r), acc);
                r += 4;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn solve_avx2(n: usize, b: usize, ld: usize, v: &[f64], x: &mut [f64]) {
    solve_impl(n, b, ld, v, x)
}

/// Right-looking band Cholesky by panels of [`PANEL`] columns, in place.
#[inline(always)]
fn factor_impl<const AVX2: bool>(
    n: usize,
    b: usize,
    ld: usize,
    v: &mut [f64],
) -> Result<(), NotPositiveDefinite> {
    assert!(
        v.len() >= n * ld && ld >= b + PANEL + 4,
        "band storage too short"
    );
    let mut k0 = 0;
    while k0 < n {
        let kn = PANEL.min(n - k0);
        // the panel: column by column, each updating the panel's later columns
        for k in k0..k0 + kn {
            let d = v[k * ld];
            if !(d > 0.0 && d.is_finite()) {
                return Err(NotPositiveDefinite { column: k });
            }
            let l = d.sqrt();
            v[k * ld] = l;
            let last = (k + b).min(n - 1);
            for x in &mut v[k * ld + 1..k * ld + 1 + (last - k)] {
                *x /= l;
            }
            for c in k + 1..k0 + kn {
                if c > last {
                    break; // beyond column k's band
                }
                let s = -v[k * ld + (c - k)];
                let (left, right) = v.split_at_mut(c * ld);
                let src = &left[k * ld + (c - k)..k * ld + (last - k) + 1];
                for (d, &lr) in right[..src.len()].iter_mut().zip(src) {
                    *d = lr.mul_add(s, *d);
                }
            }
        }
        // the trailing band: A[r, c] −= Σ_k L[r, k] L[c, k] over the panel's columns k, for
        // the columns c the panel reaches (c ≤ k0 + kn − 1 + b) and rows r ≥ c it reaches
        let reach = (k0 + kn - 1 + b).min(n - 1);
        #[cfg(target_arch = "x86_64")]
        if AVX2 && kn == PANEL {
            if k0 + kn <= reach {
                // SAFETY: AVX2 is true only in factor_avx2 (AVX2 and FMA present); the bounds
                // are those the function asks for (storage checked above).
                unsafe { panel_update_avx2(v, ld, k0, k0 + kn, reach) };
            }
            k0 += kn;
            continue;
        }
        let (left, right) = v.split_at_mut((k0 + kn) * ld);
        for c in k0 + kn..=reach {
            let len = reach - c + 1;
            let dst = &mut right[(c - k0 - kn) * ld..(c - k0 - kn) * ld + len];
            // column k's rows c.. start at offset c − k (≤ b + PANEL − 1 < ld: zero rows
            // past the band)
            let col = |k: usize| &left[k * ld + (c - k)..k * ld + (c - k) + len];
            if kn == PANEL {
                // column k0 + q's rows c.. start at (k0 + q)(ld − 1) + c; L[c, k0 + q] is the
                // first of them
                let cols = per_panel_column(|q| col(k0 + q));
                let s = per_panel_column(|q| -cols[q][0]);
                for (r, d) in dst.iter_mut().enumerate() {
                    let mut acc = *d;
                    for q in 0..PANEL {
                        acc = cols[q][r].mul_add(s[q], acc);
                    }
                    *d = acc;
                }
            } else {
                for k in k0..k0 + kn {
                    let s = -left[k * ld + (c - k)];
                    for (d, &a) in dst.iter_mut().zip(col(k)) {
                        *d = a.mul_add(s, *d);
                    }
                }
            }
        }
        k0 += kn;
    }
    Ok(())
}

/// Forward substitution (L y = x), then backward (Lᵀ x = y), by blocks of [`PANEL`] columns: a
/// block's small triangle is solved entry by entry, and its effect on the rest is one loop of
/// fused multiply-adds over the rows it reaches (forward) or [`PANEL`] dot products over the
/// solved entries (backward, in four lanes summed in a fixed order). Solving column by column
/// instead chains every entry to the store of the one before it.
#[inline(always)]
fn solve_impl(n: usize, b: usize, ld: usize, v: &[f64], x: &mut [f64]) {
    let mut j0 = 0;
    while j0 < n {
        let jn = PANEL.min(n - j0);
        for j in j0..j0 + jn {
            let xj = x[j] / v[j * ld];
            x[j] = xj;
            for i in j + 1..j0 + jn {
                // zero past column j's band (padding rows)
                x[i] = v[j * ld + (i - j)].mul_add(-xj, x[i]);
            }
        }
        let reach = (j0 + jn - 1 + b).min(n - 1);
        if reach >= j0 + jn {
            let len = reach + 1 - (j0 + jn);
            let (done, rest) = x.split_at_mut(j0 + jn);
            let rest = &mut rest[..len];
            // column j's rows j0 + jn.. start at offset j0 + jn − j (≤ PANEL, past it zeros)
            let col = |j: usize| &v[j * ld + (j0 + jn - j)..j * ld + (j0 + jn - j) + len];
            if jn == PANEL {
                let cols = per_panel_column(|q| col(j0 + q));
                let s = per_panel_column(|q| -done[j0 + q]);
                for (i, d) in rest.iter_mut().enumerate() {
                    let mut acc = *d;
                    for q in 0..PANEL {
                        acc = cols[q][i].mul_add(s[q], acc);
                    }
                    *d = acc;
                }
            } else {
                for j in j0..j0 + jn {
                    let s = -done[j];
                    for (d, &l) in rest.iter_mut().zip(col(j)) {
                        *d = l.mul_add(s, *d);
                    }
                }
            }
        }
        j0 += jn;
    }
    let mut end = n;
    while end > 0 {
        let j0 = end.saturating_sub(PANEL);
        let (head, solved) = x.split_at_mut(end);
        for j in j0..end {
            let last = (j + b).min(n - 1);
            if last < end {
                continue;
            }
            let len = last + 1 - end;
            let l = &v[j * ld + (end - j)..j * ld + (end - j) + len];
            let xs = &solved[..len];
            let mut acc = [0.0; 4];
            let (lc, xc) = (l.chunks_exact(4), xs.chunks_exact(4));
            let (lr, xr) = (lc.remainder(), xc.remainder());
            for (lq, xq) in lc.zip(xc) {
                for q in 0..4 {
                    acc[q] = lq[q].mul_add(xq[q], acc[q]);
                }
            }
            for (q, (&lq, &xq)) in lr.iter().zip(xr).enumerate() {
                acc[q] = lq.mul_add(xq, acc[q]);
            }
            head[j] -= (acc[0] + acc[1]) + (acc[2] + acc[3]);
        }
        for j in (j0..end).rev() {
            let mut s = head[j];
            for i in j + 1..end {
                s = v[j * ld + (i - j)].mul_add(-head[i], s);
            }
            head[j] = s / v[j * ld];
        }
        end = j0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The upper part (row i: columns j ≥ i) of a banded SPD matrix as a CSR.
    fn banded(n: usize, b: usize, seed: u64) -> (Csr, Vec<Vec<f64>>) {
        let mut rnd = crate::test_util::rng(seed);
        let mut dense = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in i + 1..(i + b + 1).min(n) {
                let v = rnd();
                dense[i][j] = v;
                dense[j][i] = v;
            }
        }
        for i in 0..n {
            dense[i][i] = 2.0 * b as f64 + 1.0 + rnd();
        }
        let (mut row_ptr, mut cols, mut vals) = (vec![0usize], Vec::new(), Vec::new());
        for (i, row) in dense.iter().enumerate() {
            for j in i..(i + b + 1).min(n) {
                cols.push(j as u32);
                vals.push(row[j]);
            }
            row_ptr.push(cols.len());
        }
        let a = Csr {
            n,
            row_ptr: row_ptr.into(),
            cols: cols.into(),
            vals,
        };
        (a, dense)
    }

    #[test]
    fn band_cholesky_solves_banded_spd_systems() {
        // panels that end inside the matrix, at its end, and widths below, at and above PANEL
        for (n, b) in [
            (1, 0),
            (5, 0),
            (7, 1),
            (10, 3),
            (33, 4),
            (50, 9),
            (64, 17),
            (9, 12),
        ] {
            let (a, dense) = banded(n, b, (n * 31 + b) as u64);
            let p = BandPattern::new(&a).expect("band");
            assert_eq!(p.b, b.min(n.saturating_sub(1)));
            let mut values = Vec::new();
            p.factorize(&a, &mut values).expect("SPD");
            let want: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let mut x: Vec<f64> = (0..n)
                .map(|i| (0..n).map(|j| dense[i][j] * want[j]).sum())
                .collect();
            p.solve_in_place(&values, &mut x);
            let err = x
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-12, "n {n} b {b}: error {err}");
        }
    }

    #[test]
    fn band_storage_padding_stays_zero() {
        let (a, _) = banded(30, 5, 3);
        let p = BandPattern::new(&a).unwrap();
        let mut values = Vec::new();
        p.factorize(&a, &mut values).unwrap();
        for j in 0..p.n {
            for off in 0..p.ld {
                let outside = off > p.b || j + off >= p.n;
                if outside {
                    assert_eq!(values[j * p.ld + off], 0.0, "column {j} offset {off}");
                }
            }
        }
    }

    #[test]
    fn indefinite_matrix_is_reported_with_its_column() {
        let (mut a, _) = banded(12, 2, 5);
        // row 6's diagonal entry is the first of its row
        let k = a.row_ptr[6];
        a.vals[k] = -1.0;
        let p = BandPattern::new(&a).unwrap();
        let mut values = Vec::new();
        assert_eq!(
            p.factorize(&a, &mut values),
            Err(NotPositiveDefinite { column: 6 })
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_build_gives_the_baseline_bits() {
        if !(std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma"))
        {
            return;
        }
        let (a, _) = banded(101, 23, 9);
        let p = BandPattern::new(&a).unwrap();
        let mut fast = Vec::new();
        p.factorize(&a, &mut fast).unwrap();
        let mut base = fast.clone();
        base.fill(0.0);
        for (&d, &v) in p.map.iter().zip(&a.vals) {
            if d != u32::MAX {
                base[d as usize] = v;
            }
        }
        factor_impl::<false>(p.n, p.b, p.ld, &mut base).unwrap();
        assert!(fast
            .iter()
            .zip(&base)
            .all(|(x, y)| x.to_bits() == y.to_bits()));
        let rhs: Vec<f64> = (0..p.n).map(|i| (i as f64).cos()).collect();
        let (mut xf, mut xb) = (rhs.clone(), rhs);
        p.solve_in_place(&fast, &mut xf);
        solve_impl(p.n, p.b, p.ld, &base, &mut xb);
        assert!(xf.iter().zip(&xb).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}
