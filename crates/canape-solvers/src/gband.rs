//! Band LU with partial pivoting and band Householder QR, for SOFA's EigenSparseLU and
//! EigenSparseQR when a NaturalOrderingMethod asks for the given order and the matrix is a band
//! its factors fill anyway (a beam or bar numbered along its length). Sparse LU and QR in the
//! given order fill the same band; the band layout turns their updates into long loops of fused
//! multiply-adds. (SOFA wraps Eigen's SparseLU and SparseQR in EigenDirectSparseSolver with the
//! ordering component's permutation: the identity under NaturalOrderingMethod.)
//!
//! Storage: column by column, column j holds rows j − up ..= j + kl (+ zero padding below),
//! `up` = kl + ku + [`PANEL`]: LU's U grows to kl + ku above the diagonal with row exchanges
//! (LAPACK's DGBTRF layout); QR's R has the same upper bandwidth kl + ku, and the extra
//! [`PANEL`] zero rows let a block of reflectors be applied to every column it reaches over the
//! same rows. Multipliers (LU) and Householder vectors (QR) are kept below the diagonal.
//!
//! Both are right-looking by panels of [`PANEL`] columns. LU follows LAPACK's DGBTRF: partial
//! pivoting inside the panel (row exchanges over the panel's columns, so its multipliers may
//! reach kl rows past the panel: bottom padding), then each trailing column the panel reaches
//! takes the exchanges, the unit lower triangle and the panel's rank-8 product. QR: the
//! panel's reflectors (LAPACK's DLARFG convention, β = −sign(α)‖x‖) are applied to the panel
//! column by column, then to the trailing columns at once as I − V T Vᵀ (DLARFT's compact
//! form). The trailing updates read the panel from a copy made once per panel, four rows per
//! AVX2 instruction. Every sum is a chain of fused multiply-adds in a fixed order: the AVX2 build
//! and the baseline build give the same bits.

use canape_core::matrix::Csr;

/// Columns per panel of the blocked QR.
const PANEL: usize = 8;
/// Zero rows below each column's band: a panel's reflectors are PANEL − 1 + kl rows long past
/// the panel's first row, rounded up to four.
const BOTTOM: usize = PANEL + 4;

/// Where each assembled value goes in the band (fixed for one assembly pattern).
#[derive(Clone)]
pub struct GeneralBand {
    n: usize,
    /// Lower and upper bandwidths of the matrix.
    kl: usize,
    ku: usize,
    /// Rows stored above the diagonal (kl + ku + PANEL).
    up: usize,
    /// Stored values per column.
    ld: usize,
    /// Per assembled value, its index in the band storage.
    map: Vec<u32>,
}

/// A zero (or not finite) pivot: the matrix is singular.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Singular {
    pub column: usize,
}

/// The factors of one matrix: band values, LU's row exchanges, QR's reflector scalars.
#[derive(Clone, Default)]
pub struct BandFactor {
    values: Vec<f64>,
    pivots: Vec<u32>,
    tau: Vec<f64>,
}

impl GeneralBand {
    /// The band of `a` (all its entries, row by row). `None` when the storage would not fit
    /// 32-bit indices.
    pub fn new(a: &Csr) -> Option<Self> {
        let (mut kl, mut ku) = (0, 0);
        for i in 0..a.n {
            for &j in &a.cols[a.row_ptr[i]..a.row_ptr[i + 1]] {
                let j = j as usize;
                kl = kl.max(i.saturating_sub(j));
                ku = ku.max(j.saturating_sub(i));
            }
        }
        let up = kl + ku + PANEL;
        let ld = up + 1 + kl + BOTTOM;
        let len = a.n.checked_mul(ld)?;
        if len >= u32::MAX as usize {
            return None;
        }
        let mut map = Vec::with_capacity(a.vals.len());
        for i in 0..a.n {
            for &j in &a.cols[a.row_ptr[i]..a.row_ptr[i + 1]] {
                let j = j as usize;
                map.push((j * ld + i + up - j) as u32);
            }
        }
        Some(GeneralBand {
            n: a.n,
            kl,
            ku,
            up,
            ld,
            map,
        })
    }

    /// Number of values the band stores.
    pub fn storage(&self) -> usize {
        self.n * self.ld
    }

    /// Whether the factors of `a` in its given order would fill most of this band: the band
    /// (kl + ku + 1 per column) is at most 1.5 times `a`'s envelope (per row, from its first
    /// entry to the diagonal; per column, the same), where a factorization in the given order
    /// puts its fill. An arrow matrix has a band as wide as itself and a small envelope.
    pub fn filled_by(&self, a: &Csr) -> bool {
        let mut first_row = (0..a.n).collect::<Vec<usize>>();
        let mut envelope = a.n;
        for i in 0..a.n {
            let cols = &a.cols[a.row_ptr[i]..a.row_ptr[i + 1]];
            if let Some(&j) = cols.iter().min() {
                envelope += i.saturating_sub(j as usize);
            }
            for &j in cols {
                let f = &mut first_row[j as usize];
                *f = (*f).min(i);
            }
        }
        envelope += first_row
            .iter()
            .enumerate()
            .map(|(j, &f)| j - f)
            .sum::<usize>();
        2 * self.n * (self.kl + self.ku + 1) <= 3 * envelope
    }

    /// The band storage of `a` (zero outside its entries).
    fn load(&self, a: &Csr, values: &mut Vec<f64>) {
        values.clear();
        values.resize(self.storage(), 0.0);
        for (&d, &v) in self.map.iter().zip(&a.vals) {
            values[d as usize] += v;
        }
    }

    /// P A = L U with partial pivoting, in the band (LAPACK's DGBTF2).
    pub fn factorize_lu(&self, a: &Csr, f: &mut BandFactor) -> Result<(), Singular> {
        self.load(a, &mut f.values);
        f.pivots.clear();
        f.pivots.resize(self.n, 0);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { lu_avx2(self, &mut f.values, &mut f.pivots) };
        }
        lu_impl::<false>(self, &mut f.values, &mut f.pivots)
    }

    /// A = Q R by Householder reflectors, in the band.
    pub fn factorize_qr(&self, a: &Csr, f: &mut BandFactor) -> Result<(), Singular> {
        self.load(a, &mut f.values);
        f.tau.clear();
        f.tau.resize(self.n, 0.0);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { qr_avx2(self, &mut f.values, &mut f.tau) };
        }
        qr_impl::<false>(self, &mut f.values, &mut f.tau)
    }

    /// x = A⁻¹ x with an LU factor from [`GeneralBand::factorize_lu`] (LAPACK's DGBTRS).
    pub fn solve_lu(&self, f: &BandFactor, x: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { solve_avx2::<false>(self, f, x) };
        }
        solve_impl::<false>(self, f, x)
    }

    /// x = A⁻¹ x with a QR factor from [`GeneralBand::factorize_qr`]: Qᵀ x reflector by
    /// reflector, then R⁻¹.
    pub fn solve_qr(&self, f: &BandFactor, x: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { solve_avx2::<true>(self, f, x) };
        }
        solve_impl::<true>(self, f, x)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn solve_avx2<const QR: bool>(g: &GeneralBand, f: &BandFactor, x: &mut [f64]) {
    solve_impl::<QR>(g, f, x)
}

/// LU: the row exchanges and L⁻¹ column by column; QR: Qᵀ reflector by reflector. Then the
/// upper triangle (bandwidth kl + ku), column by column from the last.
#[inline(always)]
fn solve_impl<const QR: bool>(g: &GeneralBand, f: &BandFactor, x: &mut [f64]) {
    let (n, kl, ld, up, v) = (g.n, g.kl, g.ld, g.up, &f.values);
    if QR {
        for k in 0..n {
            let m = kl.min(n - 1 - k);
            let h = &v[k * ld + up + 1..k * ld + up + 1 + m];
            let mut w = x[k];
            for (&hi, &xi) in h.iter().zip(&x[k + 1..k + 1 + m]) {
                w = hi.mul_add(xi, w);
            }
            let s = -(f.tau[k] * w);
            x[k] += s;
            for (xi, &hi) in x[k + 1..k + 1 + m].iter_mut().zip(h) {
                *xi = hi.mul_add(s, *xi);
            }
        }
    } else {
        // panel by panel (as factored): its row exchanges, then its multipliers, which reach
        // kl rows past the panel
        let mut k0 = 0;
        while k0 < n {
            let end = (k0 + PANEL).min(n);
            for k in k0..end {
                x.swap(k, f.pivots[k] as usize);
            }
            let last = (end - 1 + kl).min(n - 1);
            for k in k0..end {
                let m = last - k;
                let l = &v[k * ld + up + 1..k * ld + up + 1 + m];
                let s = -x[k];
                for (xi, &li) in x[k + 1..=last].iter_mut().zip(l) {
                    *xi = li.mul_add(s, *xi);
                }
            }
            k0 = end;
        }
    }
    let u = g.kl + g.ku;
    for c in (0..n).rev() {
        let xc = x[c] / v[c * ld + up];
        x[c] = xc;
        let top = c.saturating_sub(u);
        let col = &v[c * ld + up - (c - top)..c * ld + up];
        for (xi, &ui) in x[top..c].iter_mut().zip(col) {
            *xi = ui.mul_add(-xc, *xi);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn lu_avx2(g: &GeneralBand, v: &mut [f64], piv: &mut [u32]) -> Result<(), Singular> {
    lu_impl::<true>(g, v, piv)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn qr_avx2(g: &GeneralBand, v: &mut [f64], tau: &mut [f64]) -> Result<(), Singular> {
    qr_impl::<true>(g, v, tau)
}

/// LU by panels of [`PANEL`] columns, LAPACK's DGBTRF: in the panel, column by column, the
/// first entry of largest magnitude on or below the diagonal is the pivot; its row is exchanged
/// with the diagonal's in the panel's columns (its multipliers included), the column below the
/// pivot is divided by it and its rank-one product subtracted from the panel's later columns.
/// Then each trailing column the panel reaches (up to `ju`, the last column an exchanged row
/// has an entry in) takes the panel's exchanges, the panel's unit lower triangle is solved on
/// its rows, and the panel's multipliers times those rows are subtracted below: one loop of
/// [`PANEL`] fused multiply-adds per row.
#[inline(always)]
fn lu_impl<const AVX2: bool>(
    g: &GeneralBand,
    v: &mut [f64],
    piv: &mut [u32],
) -> Result<(), Singular> {
    let (n, kl, ku, up, ld) = (g.n, g.kl, g.ku, g.up, g.ld);
    assert!(
        v.len() >= n * ld && piv.len() >= n && ld >= up + 1 + kl + BOTTOM,
        "band storage too short"
    );
    let at = |i: usize, j: usize| j * ld + i + up - j;
    // rows below a panel its multipliers reach, rounded up to four (zero padding past them)
    let below = kl.div_ceil(4) * 4;
    let mut packed = Packed::default();
    let mut ju = 0;
    let mut k0 = 0;
    while k0 < n {
        let kn = PANEL.min(n - k0);
        let end = k0 + kn;
        for k in k0..end {
            let m = kl.min(n - 1 - k);
            let d = at(k, k);
            let mut p = 0;
            let mut best = v[d].abs();
            for r in 1..=m {
                if v[d + r].abs() > best {
                    best = v[d + r].abs();
                    p = r;
                }
            }
            if !(best > 0.0 && best.is_finite()) {
                return Err(Singular { column: k });
            }
            piv[k] = (k + p) as u32;
            ju = ju.max((k + p + ku).min(n - 1));
            if p != 0 {
                for c in k0..end {
                    v.swap(at(k, c), at(k + p, c));
                }
            }
            let pivot = v[d];
            for x in &mut v[d + 1..d + 1 + m] {
                *x /= pivot;
            }
            let (left, right) = v.split_at_mut((k + 1) * ld);
            let l = &left[d + 1..d + 1 + m];
            for c in k + 1..end {
                let o = at(k, c) - (k + 1) * ld;
                let s = -right[o];
                for (y, &li) in right[o + 1..o + 1 + m].iter_mut().zip(l) {
                    *y = li.mul_add(s, *y);
                }
            }
        }
        if ju < end {
            k0 = end;
            continue;
        }
        let (left, right) = v.split_at_mut(end * ld);
        // the panel's multipliers below it: column k0 + q's rows end.. (zero past them)
        packed.pack(below, kn, |q| &left[at(end, k0 + q)..]);
        // the panel's unit lower triangle (zero past kn columns)
        let mut l11 = [[0.0; PANEL]; PANEL];
        for q in 0..kn {
            for i in q + 1..kn {
                l11[q][i] = left[at(k0 + i, k0 + q)];
            }
        }
        for c in end..=ju {
            let col = &mut right[(c - end) * ld..(c - end + 1) * ld];
            // row i of column c at offset i + up − c
            let off = |i: usize| i + up - c;
            for k in k0..end {
                let p = piv[k] as usize;
                if p != k {
                    col.swap(off(k), off(p));
                }
            }
            // the panel's unit lower triangle solved on its rows (fixed bounds: registers)
            let mut u = [0.0; PANEL];
            for (q, x) in u.iter_mut().enumerate().take(kn) {
                *x = col[off(k0 + q)];
            }
            for q in 0..PANEL {
                let s = -u[q];
                for i in q + 1..PANEL {
                    u[i] = l11[q][i].mul_add(s, u[i]);
                }
            }
            for (q, &x) in u.iter().enumerate().take(kn) {
                col[off(k0 + q)] = x;
            }
            let s = u.map(|x| -x);
            multiply_add::<AVX2>(&mut col[off(end)..off(end) + below], &packed, &s);
        }
        k0 = end;
    }
    Ok(())
}

/// Σ_r a[r] b[r] (over the shorter length) in four lanes (r mod 4), summed in a fixed order.
#[inline(always)]
fn dot<const AVX2: bool>(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let whole = n / 4 * 4;
    let mut lanes = [0.0; 4];
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: AVX2 is true only under a function built for AVX2 and FMA, which checked
        // the CPU; both slices hold `whole` values.
        lanes = unsafe { dot_lanes_avx2(&a[..whole], &b[..whole]) };
    }
    if !(cfg!(target_arch = "x86_64") && AVX2) {
        for (x, y) in a[..whole].chunks_exact(4).zip(b[..whole].chunks_exact(4)) {
            for l in 0..4 {
                lanes[l] = x[l].mul_add(y[l], lanes[l]);
            }
        }
    }
    for (l, (x, y)) in a[whole..n].iter().zip(&b[whole..n]).enumerate() {
        lanes[l] = x.mul_add(*y, lanes[l]);
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// The four lanes of [`dot`] over whole chunks of four.
///
/// # Safety
/// The CPU has AVX2 and FMA; `a.len() == b.len()`, a multiple of four.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_lanes_avx2(a: &[f64], b: &[f64]) -> [f64; 4] {
    use std::arch::x86_64::*;
    let mut acc = _mm256_setzero_pd();
    let mut r = 0;
    while r < a.len() {
        // SAFETY: r + 4 ≤ len of both slices
        unsafe {
            acc = _mm256_fmadd_pd(
                _mm256_loadu_pd(a.as_ptr().add(r)),
                _mm256_loadu_pd(b.as_ptr().add(r)),
                acc,
            );
        }
        r += 4;
    }
    let mut lanes = [0.0; 4];
    // SAFETY: four doubles
    unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), acc) };
    lanes
}

/// A panel's [`PANEL`] columns over a number of rows (a multiple of four), copied one after
/// the other into one buffer made once per panel.
#[derive(Default)]
struct Packed {
    rows: usize,
    v: Vec<f64>,
}

impl Packed {
    /// Column q's rows from `col(q)` (`rows` values each; columns past `kn` are zero).
    fn pack<'a>(&mut self, rows: usize, kn: usize, col: impl Fn(usize) -> &'a [f64]) {
        debug_assert!(rows.is_multiple_of(4));
        self.rows = rows;
        self.v.clear();
        self.v.resize(rows * PANEL, 0.0);
        for q in 0..kn {
            self.v[q * rows..(q + 1) * rows].copy_from_slice(&col(q)[..rows]);
        }
    }

    /// Column q.
    #[inline(always)]
    fn col(&self, q: usize) -> &[f64] {
        &self.v[q * self.rows..(q + 1) * self.rows]
    }
}

/// dst[r] += Σ_q P[r, q] s[q] (the fused multiply-adds in panel order), `dst` as long as the
/// packed columns.
#[inline(always)]
fn multiply_add<const AVX2: bool>(dst: &mut [f64], p: &Packed, s: &[f64; PANEL]) {
    assert_eq!(
        dst.len(),
        p.rows,
        "packed panel and column differ in length"
    );
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: AVX2 is true only under functions built for AVX2 and FMA, which checked the
        // CPU; every packed column has dst.len() rows (asserted), a multiple of four
        unsafe { multiply_add_avx2(dst, p, s) };
        return;
    }
    let cols: [&[f64]; PANEL] = std::array::from_fn(|q| p.col(q));
    for (r, y) in dst.iter_mut().enumerate() {
        let mut acc = *y;
        for q in 0..PANEL {
            acc = cols[q][r].mul_add(s[q], acc);
        }
        *y = acc;
    }
}

/// [`multiply_add`] with AVX2 intrinsics, four rows at a time.
///
/// # Safety
/// The CPU has AVX2 and FMA; `p` holds `dst.len()` rows, a multiple of four.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn multiply_add_avx2(dst: &mut [f64], p: &Packed, s: &[f64; PANEL]) {
    use std::arch::x86_64::*;
    let ss = s.map(|x| _mm256_set1_pd(x));
    let c: [*const f64; PANEL] = std::array::from_fn(|q| p.col(q).as_ptr());
    let d = dst.as_mut_ptr();
    let mut r = 0;
    while r < dst.len() {
        // SAFETY: r + 4 ≤ dst.len(), the length of every packed column
        unsafe {
            let mut acc = _mm256_loadu_pd(d.add(r));
            for (q, sq) in ss.iter().enumerate() {
                acc = _mm256_fmadd_pd(_mm256_loadu_pd(c[q].add(r)), *sq, acc);
            }
            _mm256_storeu_pd(d.add(r), acc);
        }
        r += 4;
    }
}

/// The [`PANEL`] dots Σ_r P[r, q] col[r], each in four lanes (r mod 4) summed in a fixed order.
#[inline(always)]
fn packed_dots<const AVX2: bool>(p: &Packed, col: &[f64]) -> [f64; PANEL] {
    assert_eq!(
        col.len(),
        p.rows,
        "packed panel and column differ in length"
    );
    let mut lanes = [[0.0; 4]; PANEL];
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: as in `multiply_add`
        lanes = unsafe { packed_dots_avx2(p, col) };
    }
    if !(cfg!(target_arch = "x86_64") && AVX2) {
        for (q, lq) in lanes.iter_mut().enumerate() {
            for (cq, x) in p.col(q).chunks_exact(4).zip(col.chunks_exact(4)) {
                for l in 0..4 {
                    lq[l] = cq[l].mul_add(x[l], lq[l]);
                }
            }
        }
    }
    lanes.map(|l| (l[0] + l[1]) + (l[2] + l[3]))
}

/// The lanes of [`packed_dots`] with AVX2 intrinsics.
///
/// # Safety
/// As [`multiply_add_avx2`], with `col` for `dst`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn packed_dots_avx2(p: &Packed, col: &[f64]) -> [[f64; 4]; PANEL] {
    use std::arch::x86_64::*;
    let mut acc = [_mm256_setzero_pd(); PANEL];
    let c: [*const f64; PANEL] = std::array::from_fn(|q| p.col(q).as_ptr());
    let mut r = 0;
    while r < col.len() {
        // SAFETY: r + 4 ≤ col.len(), the length of every packed column
        unsafe {
            let xv = _mm256_loadu_pd(col.as_ptr().add(r));
            for (q, a) in acc.iter_mut().enumerate() {
                *a = _mm256_fmadd_pd(_mm256_loadu_pd(c[q].add(r)), xv, *a);
            }
        }
        r += 4;
    }
    let mut lanes = [[0.0; 4]; PANEL];
    for (l, a) in lanes.iter_mut().zip(acc) {
        // SAFETY: four doubles
        unsafe { _mm256_storeu_pd(l.as_mut_ptr(), a) };
    }
    lanes
}

/// Householder QR by panels: see the module documentation. Rows past n are zero padding in
/// every column, so every reflector is kl + 1 rows long and the loops have no end cases.
#[inline(always)]
fn qr_impl<const AVX2: bool>(
    g: &GeneralBand,
    v: &mut [f64],
    tau: &mut [f64],
) -> Result<(), Singular> {
    let (n, kl, up, ld) = (g.n, g.kl, g.up, g.ld);
    let u = g.kl + g.ku;
    assert!(
        v.len() >= n * ld && tau.len() >= n && ld >= up + 1 + kl + BOTTOM,
        "band storage too short"
    );
    let at = |i: usize, j: usize| j * ld + i + up - j;
    // a panel's reflectors over its rows k0..k0 + h, column q from row q (1 there, implicit in
    // the storage), and T, upper triangular: H_0 ⋯ H_{P−1} = I − V T Vᵀ
    let h = (PANEL + kl).div_ceil(4) * 4;
    let mut vb = [const { Vec::new() }; PANEL];
    for col in &mut vb {
        col.resize(h, 0.0);
    }
    let mut t = [[0.0f64; PANEL]; PANEL];
    let mut packed = Packed::default();
    let mut k0 = 0;
    while k0 < n {
        let kn = PANEL.min(n - k0);
        for k in k0..k0 + kn {
            // the reflector of column k's rows k..=k + kl
            let d = at(k, k);
            let alpha = v[d];
            let body = &v[d + 1..d + 1 + kl];
            let sigma = dot::<AVX2>(body, body);
            if sigma == 0.0 {
                // already reduced (or squares below the smallest double): H = I
                tau[k] = 0.0;
                v[d + 1..d + 1 + kl].fill(0.0);
            } else {
                let norm = alpha.mul_add(alpha, sigma).sqrt();
                let beta = if alpha >= 0.0 { -norm } else { norm };
                tau[k] = (beta - alpha) / beta;
                let scale = 1.0 / (alpha - beta);
                for x in &mut v[d + 1..d + 1 + kl] {
                    *x *= scale;
                }
                v[d] = beta;
            }
            if !(v[d] != 0.0 && v[d].is_finite()) {
                return Err(Singular { column: k });
            }
            // applied to the panel's later columns
            let (left, right) = v.split_at_mut((k + 1) * ld);
            let hv = &left[d + 1..d + 1 + kl];
            for c in k + 1..k0 + kn {
                let o = at(k, c) - (k + 1) * ld;
                let col = &mut right[o..o + 1 + kl];
                let w = col[0] + dot::<AVX2>(hv, &col[1..]);
                let s = -(tau[k] * w);
                col[0] += s;
                for (x, &hi) in col[1..].iter_mut().zip(hv) {
                    *x = hi.mul_add(s, *x);
                }
            }
        }
        let reach = (k0 + kn - 1 + u).min(n - 1);
        if reach < k0 + kn {
            k0 += kn;
            continue;
        }
        // V and T of the panel
        for (q, col) in vb.iter_mut().enumerate().take(kn) {
            col.fill(0.0);
            let k = k0 + q;
            col[q] = 1.0;
            col[q + 1..q + 1 + kl].copy_from_slice(&v[at(k, k) + 1..at(k, k) + 1 + kl]);
        }
        for q in 0..kn {
            // T[0..q, q] = −τ_q T[0..q, 0..q] (V[:, 0..q]ᵀ v_q), T[q, q] = τ_q
            let z: [f64; PANEL] = std::array::from_fn(|p| {
                if p < q {
                    dot::<AVX2>(&vb[p], &vb[q])
                } else {
                    0.0
                }
            });
            for p in 0..q {
                let mut s = 0.0;
                for r in p..q {
                    s = t[p][r].mul_add(z[r], s);
                }
                t[p][q] = -tau[k0 + q] * s;
            }
            t[q][q] = tau[k0 + q];
        }
        // the trailing columns the panel's rows reach: c −= V Tᵀ Vᵀ c over rows k0..k0 + h
        packed.pack(h, kn, |q| &vb[q]);
        for c in k0 + kn..=reach {
            let o = at(k0, c);
            let col = &mut v[o..o + h];
            let dots = packed_dots::<AVX2>(&packed, col);
            let mut w = [0.0; PANEL];
            for q in 0..kn {
                let mut s = 0.0;
                for p in 0..=q {
                    s = t[p][q].mul_add(dots[p], s);
                }
                w[q] = -s;
            }
            multiply_add::<AVX2>(col, &packed, &w);
        }
        k0 += kn;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{rng, DenseSystem};

    /// A random banded matrix (lower bandwidth kl, upper ku, not symmetric) with diagonal
    /// `diag` + noise, as a CSR of all its entries and as a dense matrix.
    fn banded(n: usize, kl: usize, ku: usize, diag: f64, seed: u64) -> (Csr, Vec<Vec<f64>>) {
        let mut rnd = rng(seed);
        let mut dense = vec![vec![0.0; n]; n];
        let (mut row_ptr, mut cols, mut vals) = (vec![0usize], Vec::new(), Vec::new());
        for (i, row) in dense.iter_mut().enumerate() {
            for j in i.saturating_sub(kl)..(i + ku + 1).min(n) {
                row[j] = if i == j { diag + rnd() } else { rnd() };
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

    fn solve(a: &Csr, qr: bool) -> (GeneralBand, BandFactor, Vec<f64>, Vec<f64>) {
        let g = GeneralBand::new(a).expect("band");
        let mut f = BandFactor::default();
        if qr {
            g.factorize_qr(a, &mut f).expect("regular");
        } else {
            g.factorize_lu(a, &mut f).expect("regular");
        }
        let b: Vec<f64> = (0..a.n).map(|i| (i as f64 * 0.37).sin() + 0.1).collect();
        let mut x = b.clone();
        if qr {
            g.solve_qr(&f, &mut x);
        } else {
            g.solve_lu(&f, &mut x);
        }
        (g, f, b, x)
    }

    /// LU and QR solve banded systems: panels that end inside the matrix and at its end,
    /// matrices shorter than a panel, unequal and zero bandwidths, and a small diagonal (so
    /// that LU exchanges rows).
    #[test]
    fn band_lu_and_qr_solve_banded_systems() {
        for (n, kl, ku, diag) in [
            (1, 0, 0, 2.0),
            (5, 1, 2, 3.0),
            (7, 3, 1, 0.01),
            (30, 0, 4, 5.0),
            (33, 4, 0, 5.0),
            (50, 9, 5, 0.01),
            (64, 17, 17, 20.0),
            (101, 23, 11, 0.0),
        ] {
            let (a, dense) = banded(n, kl, ku, diag, (n * 7 + kl * 3 + ku) as u64);
            let sys = DenseSystem::new(dense);
            for qr in [false, true] {
                let (g, f, b, x) = solve(&a, qr);
                assert_eq!((g.kl, g.ku), (kl.min(n - 1), ku.min(n - 1)));
                let res = sys.relative_residual(&x, &b);
                assert!(res < 1e-12, "n {n} kl {kl} ku {ku} qr {qr}: residual {res}");
                if !qr && diag < 0.1 && n > 1 {
                    assert!(
                        f.pivots.iter().enumerate().any(|(k, &p)| p as usize != k),
                        "n {n}: a small diagonal and no row exchange"
                    );
                }
            }
        }
    }

    /// The zero padding below and above the band stays zero, and every LU pivot row is within
    /// kl rows of its column.
    #[test]
    fn padding_stays_zero_and_pivots_stay_in_the_band() {
        let (a, _) = banded(45, 6, 3, 0.01, 11);
        for qr in [false, true] {
            let (g, f, _, _) = solve(&a, qr);
            let u = g.kl + g.ku;
            for j in 0..g.n {
                for off in 0..g.ld {
                    // row j + off − up
                    // LU's multipliers reach kl rows past their panel (row exchanges in it)
                    let reach = if qr { j } else { (j / PANEL + 1) * PANEL - 1 };
                    let below_band = off > g.up + (reach - j) + g.kl;
                    let above_band = off < g.up - u;
                    let past_end = j + off >= g.n + g.up;
                    if below_band || above_band || past_end {
                        assert_eq!(f.values[j * g.ld + off], 0.0, "qr {qr} col {j} off {off}");
                    }
                }
            }
            if !qr {
                assert!(f
                    .pivots
                    .iter()
                    .enumerate()
                    .all(|(k, &p)| (k..=k + g.kl).contains(&(p as usize))));
            }
        }
    }

    #[test]
    fn singular_matrix_is_reported_with_its_column() {
        let (mut a, _) = banded(20, 2, 2, 5.0, 3);
        // column 9 is zero: LU finds no pivot there, QR a zero diagonal of R
        for i in 0..a.n {
            for k in a.row_ptr[i]..a.row_ptr[i + 1] {
                if a.cols[k] == 9 {
                    a.vals[k] = 0.0;
                }
            }
        }
        let g = GeneralBand::new(&a).unwrap();
        let mut f = BandFactor::default();
        assert_eq!(g.factorize_lu(&a, &mut f), Err(Singular { column: 9 }));
        assert_eq!(g.factorize_qr(&a, &mut f), Err(Singular { column: 9 }));
    }

    /// An arrow matrix (dense last row and column) has a band as wide as itself but a small
    /// envelope: not worth the band storage. A banded one is.
    #[test]
    fn band_storage_only_where_the_factors_fill_it() {
        let (banded, _) = banded(40, 5, 5, 3.0, 1);
        assert!(GeneralBand::new(&banded).unwrap().filled_by(&banded));
        let n = 40;
        let (mut row_ptr, mut cols) = (vec![0usize], Vec::new());
        for i in 0..n {
            if i == n - 1 {
                cols.extend(0..n as u32);
            } else {
                cols.extend([i as u32, n as u32 - 1]);
            }
            row_ptr.push(cols.len());
        }
        let arrow = Csr {
            n,
            vals: vec![1.0; cols.len()],
            row_ptr: row_ptr.into(),
            cols: cols.into(),
        };
        assert!(!GeneralBand::new(&arrow).unwrap().filled_by(&arrow));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_build_gives_the_baseline_bits() {
        if !(std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma"))
        {
            return;
        }
        let (a, _) = banded(131, 21, 13, 0.5, 9);
        for qr in [false, true] {
            let (g, fast, b, xf) = solve(&a, qr);
            let mut base = BandFactor::default();
            g.load(&a, &mut base.values);
            base.pivots.resize(g.n, 0);
            base.tau.resize(g.n, 0.0);
            let mut xb = b;
            if qr {
                qr_impl::<false>(&g, &mut base.values, &mut base.tau).unwrap();
                solve_impl::<true>(&g, &base, &mut xb);
            } else {
                lu_impl::<false>(&g, &mut base.values, &mut base.pivots).unwrap();
                solve_impl::<false>(&g, &base, &mut xb);
            }
            let same =
                |p: &[f64], q: &[f64]| p.iter().zip(q).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(same(&fast.values, &base.values), "qr {qr}: factors differ");
            if qr {
                assert!(same(&fast.tau, &base.tau));
            } else {
                assert_eq!(fast.pivots, base.pivots);
            }
            assert!(same(&xf, &xb), "qr {qr}: solutions differ");
        }
    }
}
