//! Band (envelope) Cholesky factorization: A = L Lᵀ where L keeps A's envelope, for a direct
//! solver whose elimination order keeps the entries near the diagonal: a beam or bar numbered
//! along its length (the given order under SOFA's NaturalOrderingMethod), or a mesh renumbered by
//! reverse Cuthill–McKee ([`crate::rcm`]). There the sparse supernodal factorization stores
//! about as much but splits it into many small supernodes; the band storage lets every update
//! run as one long fused multiply-add loop.
//!
//! Storage is LAPACK's lower band layout with a variable width, column by column: column j
//! holds rows j..=last[j] at offsets 0.., where last[j] is the last row whose envelope (its
//! entries from its first one to the diagonal) reaches column j (nondecreasing in j: the fill
//! of a Cholesky factor stays in the envelope). Each column has extra zero rows so that a
//! panel's columns can be read over the same rows, four at a time, without bounds cases. With
//! a constant width this is the plain band. The factorization is right-looking by panels of
//! eight columns (LAPACK's DPBTRF does the same with larger blocks): factor the panel, then
//! subtract its rank-8 product from the trailing columns it reaches. Every sum is a chain of
//! fused multiply-adds in a fixed order, so the AVX2 build and the baseline build give the
//! same bits.

use canape_core::matrix::Csr;

/// Columns per panel of the right-looking factorization.
const PANEL: usize = 8;

/// `[f(0), …, f(PANEL − 1)]`, written out (`std::array::from_fn` was not inlined here and cost
/// 14 % of a factorization in calls).
#[inline(always)]
fn per_panel_column<T>(mut f: impl FnMut(usize) -> T) -> [T; PANEL] {
    [f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7)]
}

/// Where each column of the factor lives in the band storage.
#[derive(Clone, Debug)]
struct Layout {
    n: usize,
    /// Last row of each column's envelope (nondecreasing, ≥ the column).
    last: Vec<u32>,
    /// Start of each column's values (n + 1 entries). Column j stores
    /// last[end of j's panel] − j + 4 values, and at least [`PANEL`]: the AVX2 panel update
    /// reads a panel's columns down to the panel's last reach plus three rows of rounding (see
    /// `panel_update_avx2`); the backward solve's blocks (counted from the end, not aligned
    /// with the panels) read a column's first PANEL rows.
    start: Vec<usize>,
}

impl Layout {
    /// The last row of column k's envelope, as an index.
    #[inline(always)]
    fn last(&self, k: usize) -> usize {
        self.last[k] as usize
    }
}

/// Where each assembled value goes in the band (fixed for one assembly pattern and order).
#[derive(Clone)]
pub struct BandPattern {
    lay: Layout,
    /// Per assembled value: its index in the band storage (`u32::MAX`: not stored, the lower
    /// half of a diagonal block whose mirror is).
    map: Vec<u32>,
    /// Row i of A is row `new_of[i]` of the factored matrix (None: the given order).
    new_of: Option<Vec<u32>>,
}

/// The pivot of a column was not positive (or not finite): A is not positive definite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotPositiveDefinite {
    pub column: usize,
}

impl BandPattern {
    /// The band of `a` in its given order; `a` holds the entries on and above the diagonal
    /// of a symmetric matrix row by row (row i of that upper part is column i of the lower
    /// part; entries below the diagonal are ignored). `None` when the band storage would not
    /// fit 32-bit indices.
    pub fn new(a: &Csr) -> Option<Self> {
        Self::with_order(a, None)
    }

    /// The band of `a` (as for [`BandPattern::new`]) with row i renumbered `new_of[i]` (a
    /// permutation), or in the given order when None.
    pub fn with_order(a: &Csr, new_of: Option<Vec<u32>>) -> Option<Self> {
        let n = a.n;
        let pos = |i: usize| new_of.as_ref().map_or(i, |p| p[i] as usize);
        // first column of each (renumbered) row's envelope
        let mut first: Vec<usize> = (0..n).collect();
        for i in 0..n {
            for &j in &a.cols[a.row_ptr[i]..a.row_ptr[i + 1]] {
                let (p, q) = (pos(i), pos(j as usize));
                let f = &mut first[p.max(q)];
                *f = (*f).min(p.min(q));
            }
        }
        // last row of each column's envelope: the largest row whose envelope starts at or
        // before it
        let mut deepest: Vec<usize> = (0..n).collect();
        for (r, &f) in first.iter().enumerate() {
            deepest[f] = deepest[f].max(r);
        }
        let mut last = Vec::with_capacity(n);
        let mut run = 0;
        for d in deepest {
            run = run.max(d);
            last.push(u32::try_from(run).ok()?);
        }
        let mut start = Vec::with_capacity(n + 1);
        start.push(0usize);
        for j in 0..n {
            let panel_end = (j - j % PANEL + PANEL - 1).min(n - 1);
            start.push(start[j] + (last[panel_end] as usize - j + 4).max(PANEL));
        }
        if start[n] >= u32::MAX as usize {
            return None;
        }
        let mut map = vec![u32::MAX; a.vals.len()];
        for i in 0..n {
            for k in a.row_ptr[i]..a.row_ptr[i + 1] {
                let j = a.cols[k] as usize;
                if j >= i {
                    // A[j, i] (= A[i, j]) in the lower part of the renumbered matrix
                    let (p, q) = (pos(i), pos(j));
                    let (r, c) = (p.max(q), p.min(q));
                    map[k] = (start[c] + (r - c)) as u32;
                }
            }
        }
        Some(BandPattern {
            lay: Layout { n, last, start },
            map,
            new_of,
        })
    }

    /// Number of stored values of the factor.
    pub fn storage(&self) -> usize {
        self.lay.start[self.lay.n]
    }

    /// Multiply-adds of a factorization: Σ over columns of (rows below the diagonal)² / 2.
    pub fn operations(&self) -> f64 {
        (0..self.lay.n)
            .map(|j| {
                let below = (self.lay.last(j) - j) as f64;
                below * (below + 1.0) / 2.0
            })
            .sum()
    }

    /// Whether the factored matrix is `a` renumbered (not in its given order).
    pub fn is_reordered(&self) -> bool {
        self.new_of.is_some()
    }

    /// Factor `a` (the pattern this band was made for) into `values` (resized as needed): the
    /// band storage, then the reciprocals of the factor's diagonal (the solves multiply by
    /// them: a division's latency in every step of the triangular solves' chains otherwise).
    pub fn factorize(&self, a: &Csr, values: &mut Vec<f64>) -> Result<(), NotPositiveDefinite> {
        values.clear();
        values.resize(self.storage(), 0.0);
        for (&d, &v) in self.map.iter().zip(&a.vals) {
            if d != u32::MAX {
                values[d as usize] = v;
            }
        }
        #[cfg(target_arch = "x86_64")]
        let done = if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            unsafe { factor_avx2(&self.lay, values) }
        } else {
            factor_impl::<false>(&self.lay, values)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let done = factor_impl::<false>(&self.lay, values);
        done?;
        // the pivots' reciprocals after the band (no temporary: this runs every step)
        values.reserve(self.lay.n);
        for j in 0..self.lay.n {
            let pivot = values[self.lay.start[j]];
            values.push(1.0 / pivot);
        }
        Ok(())
    }

    /// Whether partial pivoting would keep every pivot of this factor's matrix on the
    /// diagonal: the multipliers of its LU, L[i, j] / L[j, j], are all at most 1 in magnitude
    /// (then the LU is L D Lᵀ with D = diag(L[j, j]²)). In the factored (renumbered) order.
    pub fn no_row_exchange(&self, values: &[f64]) -> bool {
        let lay = &self.lay;
        (0..lay.n).all(|j| {
            let col = &values[lay.start[j]..lay.start[j] + 1 + (lay.last(j) - j)];
            col[1..].iter().all(|l| l.abs() <= col[0])
        })
    }

    /// x = (L Lᵀ)⁻¹ x with the factor from [`BandPattern::factorize`] (`work`: room for a
    /// renumbered copy of x, kept by the caller between solves).
    pub fn solve_in_place(&self, values: &[f64], x: &mut [f64], work: &mut Vec<f64>) {
        let Some(new_of) = &self.new_of else {
            return self.solve_ordered(values, x);
        };
        work.clear();
        work.resize(x.len(), 0.0);
        for (&k, &v) in new_of.iter().zip(x.iter()) {
            work[k as usize] = v;
        }
        self.solve_ordered(values, work);
        for (&k, v) in new_of.iter().zip(x.iter_mut()) {
            *v = work[k as usize];
        }
    }

    /// X = (L Lᵀ)⁻¹ X for `m` right-hand sides at once (a constraint correction's columns):
    /// X row-major, row i holding the m values of unknown i, so that each factor entry is read
    /// once for all of them and the updates run along the rows. Column by column, then entry
    /// by entry (not [`Self::solve_in_place`]'s panels): each right-hand side gets the same
    /// operations as the others, not bit for bit those of a single solve.
    pub fn solve_many_in_place(
        &self,
        values: &[f64],
        x: &mut [f64],
        m: usize,
        work: &mut Vec<f64>,
    ) {
        let Some(new_of) = &self.new_of else {
            return self.solve_many_ordered(values, x, m);
        };
        work.clear();
        work.resize(x.len(), 0.0);
        for (i, &k) in new_of.iter().enumerate() {
            let k = k as usize;
            work[k * m..(k + 1) * m].copy_from_slice(&x[i * m..(i + 1) * m]);
        }
        self.solve_many_ordered(values, work, m);
        for (i, &k) in new_of.iter().enumerate() {
            let k = k as usize;
            x[i * m..(i + 1) * m].copy_from_slice(&work[k * m..(k + 1) * m]);
        }
    }

    /// W = Bᵀ A⁻¹ B (m × m, row-major, written into `w`) for `m` right-hand sides B stored
    /// row by row: with A = L Lᵀ, W = Yᵀ Y where Y = L⁻¹ B, so forward substitutions only —
    /// half of [`Self::solve_many_in_place`]'s work — and W is symmetric exactly. SOFA's
    /// SparseLDLSolver builds a constraint compliance the same way (SparseLDLSolverImpl.h,
    /// addJMInvJtLocal: L⁻¹ Jᵀ from each row's first nonzero on, then the product of those
    /// columns through D⁻¹). Here too a column of Y is zero above the first nonzero row of its
    /// column of B: the columns are taken in the order of those rows, so that at each row
    /// only a prefix of them is active and the rest is skipped.
    pub fn compliance_in_place(
        &self,
        values: &[f64],
        b: &[f64],
        m: usize,
        work: &mut Vec<f64>,
        w: &mut [f64],
    ) {
        let n = self.lay.n;
        assert_eq!(w.len(), m * m, "an m × m compliance");
        assert_eq!(b.len(), n * m, "n rows of m right-hand sides");
        let (v, inv) = values.split_at(self.storage());
        assert_eq!(inv.len(), n, "a factor made by factorize");
        let row_of = |i: usize| self.new_of.as_ref().map_or(i, |p| p[i] as usize);
        // each column's first nonzero row (in the factored order); n when it is zero
        let mut first = vec![n; m];
        for i in 0..n {
            let k = row_of(i);
            for (f, &x) in first.iter_mut().zip(&b[i * m..(i + 1) * m]) {
                if x != 0.0 && k < *f {
                    *f = k;
                }
            }
        }
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by_key(|&c| (first[c], c));
        let firsts: Vec<usize> = order.iter().map(|&c| first[c]).collect();
        work.clear();
        work.resize(n * m, 0.0);
        for i in 0..n {
            let k = row_of(i);
            let (src, dst) = (&b[i * m..(i + 1) * m], &mut work[k * m..(k + 1) * m]);
            for (d, &c) in dst.iter_mut().zip(&order) {
                *d = src[c];
            }
        }
        let mut sorted = vec![0.0; m * m];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            unsafe { compliance_avx2(&self.lay, v, inv, work, m, &firsts, &mut sorted) };
        } else {
            compliance_impl(&self.lay, v, inv, work, m, &firsts, &mut sorted);
        }
        #[cfg(not(target_arch = "x86_64"))]
        compliance_impl(&self.lay, v, inv, work, m, &firsts, &mut sorted);
        for (r, &cr) in order.iter().enumerate() {
            for (c, &cc) in order.iter().enumerate() {
                w[cr * m + cc] = sorted[r * m + c];
            }
        }
    }

    fn solve_many_ordered(&self, values: &[f64], x: &mut [f64], m: usize) {
        let (v, inv) = values.split_at(self.storage());
        assert_eq!(inv.len(), self.lay.n, "a factor made by factorize");
        assert_eq!(x.len(), self.lay.n * m, "n rows of m right-hand sides");
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { solve_many_avx2(&self.lay, v, inv, x, m) };
        }
        solve_many_impl(&self.lay, v, inv, x, m)
    }

    /// The solve in the factored order.
    fn solve_ordered(&self, values: &[f64], x: &mut [f64]) {
        let (v, inv) = values.split_at(self.storage());
        assert_eq!(inv.len(), self.lay.n, "a factor made by factorize");
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { solve_avx2(&self.lay, v, inv, x) };
        }
        solve_impl(&self.lay, v, inv, x)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn factor_avx2(lay: &Layout, v: &mut [f64]) -> Result<(), NotPositiveDefinite> {
    factor_impl::<true>(lay, v)
}

/// The trailing update of a full panel (columns k0..k0 + PANEL) on columns c_lo..=reach, with
/// AVX2 intrinsics: per column, the panel's eight multipliers broadcast, then four rows per
/// step, the row count rounded up to four (the extra rows read zero rows of the panel's
/// columns, past their envelopes, so they keep their value, +0). The same fused operations in
/// the same order as the baseline loop in [`factor_impl`], so the same bits.
///
/// # Safety
/// The CPU has AVX2 and FMA; `v` is the band storage of `lay`, k0 is a panel's first column,
/// k0 + PANEL ≤ c_lo ≤ reach = lay.last[k0 + PANEL − 1].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn panel_update_avx2(v: &mut [f64], lay: &Layout, k0: usize, c_lo: usize, reach: usize) {
    use std::arch::x86_64::*;
    let base = v.as_mut_ptr();
    for c in c_lo..=reach {
        let len = reach - c + 1;
        // SAFETY (whole block): column c (in a later panel, whose last reach is ≥ `reach`)
        // stores at least reach − c + 4 values: dst reads and writes offsets up to
        // reach − c + 3; column k0 + q stores reach − (k0 + q) + 4 values (its panel's last
        // reach is `reach`) and is read at offsets (c − k0 − q) + r for r < len + 3, at most
        // reach − k0 − q + 3.
        unsafe {
            let dst = base.add(lay.start[c]);
            let src: [*const f64; PANEL] =
                std::array::from_fn(|q| base.add(lay.start[k0 + q] + (c - k0 - q)) as *const f64);
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
fn solve_avx2(lay: &Layout, v: &[f64], inv: &[f64], x: &mut [f64]) {
    solve_impl(lay, v, inv, x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn solve_many_avx2(lay: &Layout, v: &[f64], inv: &[f64], x: &mut [f64], m: usize) {
    solve_many_impl(lay, v, inv, x, m)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn compliance_avx2(
    lay: &Layout,
    v: &[f64],
    inv: &[f64],
    y: &mut [f64],
    m: usize,
    firsts: &[usize],
    w: &mut [f64],
) {
    compliance_impl(lay, v, inv, y, m, firsts, w)
}

/// Forward substitution L Y = X on `m` right-hand sides stored row by row, at row j only on
/// the first `active(j)` of them (the others are zero up to that row, and stay so): each
/// factor entry L[i, j] updates a row's active values.
#[inline(always)]
fn forward_many(
    lay: &Layout,
    v: &[f64],
    inv: &[f64],
    x: &mut [f64],
    m: usize,
    from: usize,
    active: impl Fn(usize) -> usize,
) {
    let n = lay.n;
    for j in from..n {
        let a = active(j);
        let (head, tail) = x.split_at_mut((j + 1) * m);
        let xj = &mut head[j * m..j * m + a];
        let d = inv[j];
        xj.iter_mut().for_each(|x| *x *= d);
        for i in j + 1..=lay.last(j).min(n - 1) {
            let l = v[lay.start[j] + (i - j)];
            if l == 0.0 {
                continue;
            }
            let xi = &mut tail[(i - j - 1) * m..(i - j - 1) * m + a];
            for (x, &b) in xi.iter_mut().zip(xj.iter()) {
                *x = b.mul_add(-l, *x);
            }
        }
    }
}

/// Y = L⁻¹ X in place, for right-hand sides ordered by their first nonzero row (`firsts`,
/// nondecreasing), then W = Yᵀ Y: the upper triangle summed row of Y by row of Y in order,
/// over the columns active at that row, then mirrored.
#[inline(always)]
fn compliance_impl(
    lay: &Layout,
    v: &[f64],
    inv: &[f64],
    y: &mut [f64],
    m: usize,
    firsts: &[usize],
    w: &mut [f64],
) {
    let from = firsts.first().copied().unwrap_or(lay.n);
    let active = |j: usize| firsts.partition_point(|&f| f <= j);
    forward_many(lay, v, inv, y, m, from, active);
    w.fill(0.0);
    for i in from..lay.n {
        let a = active(i);
        let row = &y[i * m..i * m + a];
        for (r, &x) in row.iter().enumerate() {
            if x == 0.0 {
                continue;
            }
            let wr = &mut w[r * m + r..r * m + a];
            for (o, &b) in wr.iter_mut().zip(&row[r..]) {
                *o = x.mul_add(b, *o);
            }
        }
    }
    for r in 1..m {
        for c in 0..r {
            w[r * m + c] = w[c * m + r];
        }
    }
}

/// Forward (L Y = X) then backward (Lᵀ X = Y) substitution on `m` right-hand sides stored
/// row by row: each factor entry L[i, j] updates a whole row of m values.
#[inline(always)]
fn solve_many_impl(lay: &Layout, v: &[f64], inv: &[f64], x: &mut [f64], m: usize) {
    let n = lay.n;
    forward_many(lay, v, inv, x, m, 0, |_| m);
    for j in (0..n).rev() {
        let (head, tail) = x.split_at_mut((j + 1) * m);
        let xj = &mut head[j * m..];
        for i in j + 1..=lay.last(j).min(n - 1) {
            let l = v[lay.start[j] + (i - j)];
            if l == 0.0 {
                continue;
            }
            let xi = &tail[(i - j - 1) * m..(i - j) * m];
            for (a, &b) in xj.iter_mut().zip(xi) {
                *a = b.mul_add(-l, *a);
            }
        }
        let d = inv[j];
        xj.iter_mut().for_each(|a| *a *= d);
    }
}

/// Right-looking envelope Cholesky by panels of [`PANEL`] columns, in place.
#[inline(always)]
fn factor_impl<const AVX2: bool>(lay: &Layout, v: &mut [f64]) -> Result<(), NotPositiveDefinite> {
    let n = lay.n;
    assert!(v.len() >= lay.start[n], "band storage too short");
    let mut k0 = 0;
    while k0 < n {
        let kn = PANEL.min(n - k0);
        // the panel: column by column, each updating the panel's later columns
        for k in k0..k0 + kn {
            let sk = lay.start[k];
            let d = v[sk];
            if !(d > 0.0 && d.is_finite()) {
                return Err(NotPositiveDefinite { column: k });
            }
            let l = d.sqrt();
            v[sk] = l;
            let last = lay.last(k);
            // scaled by the reciprocal, as LAPACK's DPOTF2 (a division per entry costs several
            // multiplications' time)
            let inv = 1.0 / l;
            for x in &mut v[sk + 1..sk + 1 + (last - k)] {
                *x *= inv;
            }
            for c in k + 1..k0 + kn {
                if c > last {
                    break; // beyond column k's envelope
                }
                let s = -v[sk + (c - k)];
                let (left, right) = v.split_at_mut(lay.start[c]);
                let src = &left[sk + (c - k)..sk + (last - k) + 1];
                for (d, &lr) in right[..src.len()].iter_mut().zip(src) {
                    *d = lr.mul_add(s, *d);
                }
            }
        }
        // the trailing columns: A[r, c] −= Σ_k L[r, k] L[c, k] over the panel's columns k,
        // for the columns c the panel reaches and rows r ≥ c it reaches
        let reach = lay.last(k0 + kn - 1);
        #[cfg(target_arch = "x86_64")]
        if AVX2 && kn == PANEL {
            if k0 + kn <= reach {
                // SAFETY: AVX2 is true only in factor_avx2 (AVX2 and FMA present); the bounds
                // are those the function asks for (storage checked above).
                unsafe { panel_update_avx2(v, lay, k0, k0 + kn, reach) };
            }
            k0 += kn;
            continue;
        }
        let split = lay.start[k0 + kn];
        let (left, right) = v.split_at_mut(split);
        for c in k0 + kn..=reach {
            let len = reach - c + 1;
            let dst = &mut right[lay.start[c] - split..lay.start[c] - split + len];
            // column k's rows c.. start at offset c − k (past its envelope: zero rows)
            let col = |k: usize| &left[lay.start[k] + (c - k)..lay.start[k] + (c - k) + len];
            if kn == PANEL {
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
                    let s = -left[lay.start[k] + (c - k)];
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
fn solve_impl(lay: &Layout, v: &[f64], inv: &[f64], x: &mut [f64]) {
    let n = lay.n;
    let at = |j: usize, off: usize| v[lay.start[j] + off];
    let mut j0 = 0;
    while j0 < n {
        let jn = PANEL.min(n - j0);
        for j in j0..j0 + jn {
            let xj = x[j] * inv[j];
            x[j] = xj;
            for i in j + 1..j0 + jn {
                // zero past column j's envelope (padding rows)
                x[i] = at(j, i - j).mul_add(-xj, x[i]);
            }
        }
        let reach = lay.last(j0 + jn - 1);
        if reach >= j0 + jn {
            let len = reach + 1 - (j0 + jn);
            let (done, rest) = x.split_at_mut(j0 + jn);
            let rest = &mut rest[..len];
            // column j's rows j0 + jn.. start at offset j0 + jn − j (zeros past its envelope)
            let col = |j: usize| {
                let s = lay.start[j] + (j0 + jn - j);
                &v[s..s + len]
            };
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
            let last = lay.last(j);
            if last < end {
                continue;
            }
            let len = last + 1 - end;
            let s = lay.start[j] + (end - j);
            let l = &v[s..s + len];
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
                s = at(j, i - j).mul_add(-head[i], s);
            }
            head[j] = s * inv[j];
        }
        end = j0;
    }
}

#[cfg(test)]
mod tests;
