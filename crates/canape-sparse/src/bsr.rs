//! [`Bsr3`], the 3×3-block CSR matrix that assembled Vec3 systems multiply by (AVX2/FMA or
//! baseline, same bits), and [`BsrCache`], its conversion from CSR with a scatter map made once
//! per pattern.

use crate::Csr;

/// 3×3-block compressed sparse row matrix: the storage of assembled Vec3 systems for products
/// (one column index per block, contiguous blocks). A block is stored column by column, and one
/// zero block follows the last, so that a product can read each column as a 4-wide vector (the
/// fourth value, the next column's first, is not used).
#[derive(Clone, Debug, Default)]
pub struct Bsr3 {
    pub nb: usize,
    pub row_ptr: Vec<usize>,
    pub cols: Vec<u32>,
    /// Per block: [a00 a10 a20  a01 a11 a21  a02 a12 a22]; one more zero block at the end.
    pub vals: Vec<[f64; 9]>,
}

/// Position of entry (i, j) of a block in [`Bsr3::vals`].
#[inline(always)]
pub fn bsr_pos(i: usize, j: usize) -> usize {
    3 * j + i
}

impl Bsr3 {
    /// Group a scalar CSR (size a multiple of 3) into 3×3 blocks; None otherwise.
    pub fn from_csr(a: &Csr) -> Option<Bsr3> {
        if !a.n.is_multiple_of(3) {
            return None;
        }
        let nb = a.n / 3;
        let mut row_ptr = Vec::with_capacity(nb + 1);
        row_ptr.push(0);
        let mut cols: Vec<u32> = Vec::new();
        let mut vals: Vec<[f64; 9]> = Vec::new();
        let mut slot: Vec<u32> = vec![u32::MAX; nb];
        for br in 0..nb {
            let start = cols.len();
            for i in 0..3 {
                let r = 3 * br + i;
                for k in a.row_ptr[r]..a.row_ptr[r + 1] {
                    let c = a.cols[k] as usize;
                    let bc = c / 3;
                    if slot[bc] == u32::MAX || (slot[bc] as usize) < start {
                        slot[bc] = cols.len() as u32;
                        cols.push(bc as u32);
                        vals.push([0.0; 9]);
                    }
                    vals[slot[bc] as usize][bsr_pos(i, c % 3)] += a.vals[k];
                }
            }
            // keep block columns sorted within the row (deterministic, cache friendly)
            let mut order: Vec<usize> = (start..cols.len()).collect();
            order.sort_by_key(|&k| cols[k]);
            let c2: Vec<u32> = order.iter().map(|&k| cols[k]).collect();
            let v2: Vec<[f64; 9]> = order.iter().map(|&k| vals[k]).collect();
            cols.truncate(start);
            vals.truncate(start);
            cols.extend(c2);
            vals.extend(v2);
            for k in start..cols.len() {
                slot[cols[k] as usize] = k as u32;
            }
            row_ptr.push(cols.len());
        }
        vals.push([0.0; 9]); // read past the last block's last column, never used
        Some(Bsr3 {
            nb,
            row_ptr,
            cols,
            vals,
        })
    }

    /// y = A x. Each block row sums its blocks in column order into six partial sums (one per
    /// block column, alternating between even and odd blocks: independent chains of fused
    /// multiply-adds), combined in a fixed order. Run with AVX2 and FMA where the CPU has them;
    /// the baseline computes the same fused operations, so both give the same bits.
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { self.mul_avx2(x, y) };
        }
        self.mul_impl(x, y)
    }

    /// [`Bsr3::mul_impl`] with 4-wide registers: a block column is one load, one broadcast of
    /// x and one fused multiply-add (lane 3 holds the next column's first value: not used).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn mul_avx2(&self, x: &[f64], y: &mut [f64]) {
        use std::arch::x86_64::*;
        assert!(x.len() >= 3 * self.nb && y.len() >= 3 * self.nb);
        if self.nb == 0 {
            return; // nothing to multiply (and no zero block after the last one)
        }
        assert!(self.vals.len() > *self.row_ptr.last().unwrap_or(&0));
        let vals = self.vals.as_flattened();
        for br in 0..self.nb {
            let (lo, hi) = (self.row_ptr[br], self.row_ptr[br + 1]);
            let mut e = [_mm256_setzero_pd(); 3];
            let mut o = [_mm256_setzero_pd(); 3];
            let mut k = lo;
            // SAFETY: block k's 9 values start at 9k within `vals`, and a 4-wide read of its last
            // column ends at 9k + 9 < 9 (blocks + 1): the zero block after the last one (asserted
            // above). x is indexed with bounds checks.
            unsafe {
                let step = |s: &mut [__m256d; 3], k: usize| {
                    let c = 3 * self.cols[k] as usize;
                    let xs = &x[c..c + 3];
                    let b = vals.as_ptr().add(9 * k);
                    for (j, sj) in s.iter_mut().enumerate() {
                        let xj = _mm256_broadcast_sd(&xs[j]);
                        *sj = _mm256_fmadd_pd(_mm256_loadu_pd(b.add(3 * j)), xj, *sj);
                    }
                };
                while k + 1 < hi {
                    step(&mut e, k);
                    step(&mut o, k + 1);
                    k += 2;
                }
                if k < hi {
                    step(&mut e, k);
                }
                let se = _mm256_add_pd(_mm256_add_pd(e[0], e[1]), e[2]);
                let so = _mm256_add_pd(_mm256_add_pd(o[0], o[1]), o[2]);
                let mut out = [0.0f64; 4];
                _mm256_storeu_pd(out.as_mut_ptr(), _mm256_add_pd(se, so));
                y[3 * br..3 * br + 3].copy_from_slice(&out[..3]);
            }
        }
    }

    #[inline(always)]
    fn mul_impl(&self, x: &[f64], y: &mut [f64]) {
        #[inline(always)]
        fn acc(s: &mut [[f64; 3]; 3], b: &[f64; 9], x: &[f64], c: u32) {
            let c = 3 * c as usize;
            let xs = &x[c..c + 3];
            for (j, sj) in s.iter_mut().enumerate() {
                for i in 0..3 {
                    sj[i] = b[3 * j + i].mul_add(xs[j], sj[i]);
                }
            }
        }
        let y = &mut y[..3 * self.nb];
        for (br, yb) in y.chunks_exact_mut(3).enumerate() {
            let r = self.row_ptr[br]..self.row_ptr[br + 1];
            let (cols, vals) = (&self.cols[r.clone()], &self.vals[r]);
            let mut even = [[0.0; 3]; 3];
            let mut odd = [[0.0; 3]; 3];
            let mut pairs_c = cols.chunks_exact(2);
            let mut pairs_v = vals.chunks_exact(2);
            for (c, v) in (&mut pairs_c).zip(&mut pairs_v) {
                acc(&mut even, &v[0], x, c[0]);
                acc(&mut odd, &v[1], x, c[1]);
            }
            if let (Some(&c), Some(v)) = (pairs_c.remainder().first(), pairs_v.remainder().first())
            {
                acc(&mut even, v, x, c);
            }
            for i in 0..3 {
                yb[i] = ((even[0][i] + even[1][i]) + even[2][i])
                    + ((odd[0][i] + odd[1][i]) + odd[2][i]);
            }
        }
    }
}

/// Whether `a` has the pattern a cache was built for (assemblies of one pattern share `cols`).
pub(crate) fn same_pattern(key: &Option<std::sync::Arc<[u32]>>, a: &Csr) -> bool {
    key.as_ref()
        .is_some_and(|k| std::sync::Arc::ptr_eq(k, &a.cols))
}

/// flat[map[k]] = vals[k]: a CSR pattern holds each (row, column) once, so every mapped position
/// is written by exactly one entry, and the others (padding, absent entries) stay zero.
pub(crate) fn scatter_by_map(map: &[u32], vals: &[f64], flat: &mut [f64]) {
    for (&m, &v) in map.iter().zip(vals) {
        flat[m as usize] = v;
    }
}

/// Converts assembled CSR matrices of one pattern into [`Bsr3`] with a scatter map computed
/// once per pattern (same shared `cols` ⇒ same pattern).
#[derive(Clone, Debug, Default)]
pub struct BsrCache {
    key: Option<std::sync::Arc<[u32]>>,
    bsr: Option<Bsr3>,
    /// CSR value index → flat BSR value index (block · 9 + position).
    map: Vec<u32>,
}

impl BsrCache {
    /// The block form of `a` (None when its size is not a multiple of 3). Same values as
    /// [`Bsr3::from_csr`].
    pub fn convert(&mut self, a: &Csr) -> Option<&Bsr3> {
        let same = same_pattern(&self.key, a) && self.bsr.is_some();
        if !same {
            let b = Bsr3::from_csr(a)?;
            let mut map = vec![0u32; a.vals.len()];
            for r in 0..a.n {
                let br = r / 3;
                for k in a.row_ptr[r]..a.row_ptr[r + 1] {
                    let c = a.cols[k] as usize;
                    let blocks = &b.cols[b.row_ptr[br]..b.row_ptr[br + 1]];
                    let j = blocks
                        .binary_search(&((c / 3) as u32))
                        .expect("block of an entry");
                    map[k] = ((b.row_ptr[br] + j) * 9 + bsr_pos(r % 3, c % 3)) as u32;
                }
            }
            self.key = Some(a.cols.clone());
            self.bsr = Some(b);
            self.map = map;
        }
        let b = self.bsr.as_mut().expect("block pattern");
        scatter_by_map(&self.map, &a.vals, b.vals.as_flattened_mut());
        Some(b)
    }
}

#[cfg(test)]
mod tests;
