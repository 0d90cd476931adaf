//! [`SymBsr3`], a symmetric matrix of 3×3 blocks stored by its upper blocks (what assembled CG
//! multiplies by; rows split over threads), and [`SymBsrCache`], its conversion from an
//! upper-block CSR assembly.

use crate::bsr::{same_pattern, scatter_by_map};
use crate::Csr;

/// A symmetric matrix of 3×3 blocks stored by its blocks on and above the diagonal (block
/// column ≥ block row), each row by row, with one zero block after the last: what assembled CG
/// multiplies by (CG requires a symmetric matrix). The product reads each stored block once for
/// both the block and its mirror image below the diagonal: half the memory traffic of the full
/// [`Bsr3`](crate::Bsr3), which is what bounds the product.
#[derive(Clone, Debug, Default)]
pub struct SymBsr3 {
    nb: usize,
    row_ptr: Vec<usize>,
    /// Block columns, ascending within a row, all ≥ the row (checked when built).
    cols: Vec<u32>,
    /// Per block: [a00 a01 a02  a10 a11 a12  a20 a21 a22]; one more zero block at the end.
    vals: Vec<[f64; 9]>,
}

impl SymBsr3 {
    /// An all-zero matrix of `nb` block rows on a given pattern: row r's blocks are
    /// `cols[row_ptr[r]..row_ptr[r + 1]]`, strictly ascending, each ≥ r and < nb. None when the
    /// pattern breaks any of that.
    pub fn zeros(nb: usize, row_ptr: Vec<usize>, cols: Vec<u32>) -> Option<SymBsr3> {
        let ok = row_ptr.len() == nb + 1
            && row_ptr.first() == Some(&0)
            && row_ptr.last() == Some(&cols.len())
            && row_ptr.windows(2).enumerate().all(|(r, w)| {
                w[0] <= w[1]
                    && cols[w[0]..w[1]].first().is_none_or(|&c| c as usize >= r)
                    && cols[w[0]..w[1]].windows(2).all(|c| c[0] < c[1])
                    && cols[w[0]..w[1]].last().is_none_or(|&c| (c as usize) < nb)
            });
        ok.then(|| SymBsr3 {
            nb,
            vals: vec![[0.0; 9]; cols.len() + 1],
            row_ptr,
            cols,
        })
    }

    /// Number of block rows.
    pub fn block_rows(&self) -> usize {
        self.nb
    }

    /// The stored blocks in pattern order, each row-major (the zero block kept after the last
    /// is not part of it).
    pub fn blocks_mut(&mut self) -> &mut [[f64; 9]] {
        let n = self.cols.len();
        &mut self.vals[..n]
    }

    /// y = A x, A being the stored blocks plus the transposes of those off the diagonal. Block
    /// row r sums its blocks' rows times x_c lane by lane (one horizontal sum per row at the
    /// end) and adds each off-diagonal block's transpose times x_r into y_c; y_r is complete
    /// when row r ends (rows before it have added their parts). Run with AVX2 and FMA where the
    /// CPU has them; the baseline computes the same fused operations in the same order.
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        let n = 3 * self.nb;
        y[..n].fill(0.0);
        self.mul_rows_add(x, &mut y[..n], 0..self.nb, 0);
    }

    /// Add the part of A x that block rows `rows` make (their blocks times x, and their
    /// off-diagonal blocks' transposes times x_r) into `y`, whose first value is node `lo`'s:
    /// the pieces of a product split by rows over threads. Panics when a node the rows touch
    /// is outside `y` (below `lo` or past its end).
    pub fn mul_rows_add(&self, x: &[f64], y: &mut [f64], rows: std::ops::Range<usize>, lo: usize) {
        assert!(
            rows.end <= self.nb && x.len() >= 3 * self.nb,
            "vectors shorter than the matrix"
        );
        // Every column is < nb (checked when built): a product over all of y needs no scan.
        let whole = lo == 0 && y.len() >= 3 * self.nb;
        let top = rows
            .clone()
            .filter(|_| !whole)
            .filter(|&r| self.row_ptr[r + 1] > self.row_ptr[r])
            .map(|r| self.cols[self.row_ptr[r + 1] - 1] as usize + 1)
            .max()
            .unwrap_or(0);
        let first = rows
            .clone()
            .filter(|_| !whole)
            .find(|&r| self.row_ptr[r + 1] > self.row_ptr[r]);
        assert!(
            first.is_none_or(|r| r >= lo) && 3 * top <= 3 * lo + y.len(),
            "rows {rows:?} touch nodes outside the output (from node {lo}, {} values)",
            y.len()
        );
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above); the rows' nodes are
            // inside x and y (asserted above).
            return unsafe { self.mul_rows_avx2(x, y, rows, lo) };
        }
        self.mul_rows_impl(x, y, rows, lo)
    }

    #[cfg(test)]
    fn mul_impl(&self, x: &[f64], y: &mut [f64]) {
        let n = 3 * self.nb;
        y[..n].fill(0.0);
        self.mul_rows_impl(x, &mut y[..n], 0..self.nb, 0);
    }

    fn mul_rows_impl(&self, x: &[f64], y: &mut [f64], rows: std::ops::Range<usize>, lo: usize) {
        for br in rows {
            let xr = [x[3 * br], x[3 * br + 1], x[3 * br + 2]];
            let mut acc = [[0.0f64; 3]; 3];
            for k in self.row_ptr[br]..self.row_ptr[br + 1] {
                let c = self.cols[k] as usize;
                let b = &self.vals[k];
                let xc = &x[3 * c..3 * c + 3];
                for (i, ai) in acc.iter_mut().enumerate() {
                    for j in 0..3 {
                        ai[j] = b[3 * i + j].mul_add(xc[j], ai[j]);
                    }
                }
                if c != br {
                    for j in 0..3 {
                        let t = xr[2].mul_add(b[6 + j], xr[1].mul_add(b[3 + j], xr[0] * b[j]));
                        y[3 * (c - lo) + j] += t;
                    }
                }
            }
            if self.row_ptr[br + 1] > self.row_ptr[br] {
                for (i, ai) in acc.iter().enumerate() {
                    y[3 * (br - lo) + i] += (ai[0] + ai[1]) + ai[2];
                }
            }
        }
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA; x must hold the nb nodes and y every node the rows
    /// touch, from node `lo` (what [`SymBsr3::mul_rows_add`] asserts).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn mul_rows_avx2(
        &self,
        x: &[f64],
        y: &mut [f64],
        rows: std::ops::Range<usize>,
        lo: usize,
    ) {
        use std::arch::x86_64::*;
        assert!(self.vals.len() > *self.row_ptr.last().unwrap_or(&0));
        let vals = self.vals.as_flattened();
        let mask = _mm256_setr_epi64x(-1, -1, -1, 0);
        for br in rows {
            if self.row_ptr[br + 1] == self.row_ptr[br] {
                continue;
            }
            // SAFETY: block k's 9 values start at 9k within `vals` and a 4-wide read of its last
            // row ends at 9k + 9 < 9 (blocks + 1) (the zero block after the last, asserted
            // above); every column is < nb (checked when the matrix was built) and the nodes
            // the row touches are inside y from `lo` (the caller's contract).
            unsafe {
                let xr = [
                    _mm256_set1_pd(x[3 * br]),
                    _mm256_set1_pd(x[3 * br + 1]),
                    _mm256_set1_pd(x[3 * br + 2]),
                ];
                let mut acc = [_mm256_setzero_pd(); 3];
                for k in self.row_ptr[br]..self.row_ptr[br + 1] {
                    let c = self.cols[k] as usize;
                    let p = vals.as_ptr().add(9 * k);
                    let xc = _mm256_maskload_pd(x.as_ptr().add(3 * c), mask);
                    let rows = [
                        _mm256_loadu_pd(p),
                        _mm256_loadu_pd(p.add(3)),
                        _mm256_loadu_pd(p.add(6)),
                    ];
                    for (a, r) in acc.iter_mut().zip(rows) {
                        *a = _mm256_fmadd_pd(r, xc, *a);
                    }
                    if c != br {
                        let t = _mm256_fmadd_pd(
                            xr[2],
                            rows[2],
                            _mm256_fmadd_pd(xr[1], rows[1], _mm256_mul_pd(xr[0], rows[0])),
                        );
                        let q = y.as_mut_ptr().add(3 * (c - lo));
                        _mm_storeu_pd(q, _mm_add_pd(_mm_loadu_pd(q), _mm256_castpd256_pd128(t)));
                        let z = _mm256_extractf128_pd(t, 1);
                        _mm_store_sd(q.add(2), _mm_add_sd(_mm_load_sd(q.add(2)), z));
                    }
                }
                for (i, a) in acc.iter().enumerate() {
                    let mut l = [0.0f64; 4];
                    _mm256_storeu_pd(l.as_mut_ptr(), *a);
                    *y.get_unchecked_mut(3 * (br - lo) + i) += (l[0] + l[1]) + l[2];
                }
            }
        }
    }

    /// Nodes block row `r` touches: r and its blocks' columns.
    pub fn row_nodes(&self, r: usize) -> impl Iterator<Item = u32> + '_ {
        std::iter::once(r as u32).chain(
            self.cols[self.row_ptr[r]..self.row_ptr[r + 1]]
                .iter()
                .copied(),
        )
    }
}

/// Converts assembled CSR matrices holding only their blocks on and above the diagonal into
/// [`SymBsr3`], with a scatter map computed once per pattern (like [`BsrCache`](crate::BsrCache)).
#[derive(Clone, Debug, Default)]
pub struct SymBsrCache {
    key: Option<std::sync::Arc<[u32]>>,
    sym: Option<SymBsr3>,
    /// CSR value index → flat block value index (block · 9 + 3 · row + column).
    map: Vec<u32>,
}

impl SymBsrCache {
    /// The symmetric block form of `a`; None when its size is not a multiple of 3 or it has an
    /// entry below the block diagonal (it is not an upper-block assembly).
    pub fn convert(&mut self, a: &Csr) -> Option<&SymBsr3> {
        let same = same_pattern(&self.key, a) && self.sym.is_some();
        if !same {
            self.sym = None;
            if !a.n.is_multiple_of(3) {
                return None;
            }
            let nb = a.n / 3;
            let mut row_ptr = vec![0usize];
            let mut cols: Vec<u32> = Vec::new();
            for br in 0..nb {
                let start = cols.len();
                for r in 3 * br..3 * br + 3 {
                    for &c in &a.cols[a.row_ptr[r]..a.row_ptr[r + 1]] {
                        let bc = c / 3;
                        if (bc as usize) < br || bc as usize >= nb {
                            return None;
                        }
                        cols.push(bc);
                    }
                }
                cols[start..].sort_unstable();
                let mut w = start;
                for k in start..cols.len() {
                    if k == start || cols[k] != cols[w - 1] {
                        cols[w] = cols[k];
                        w += 1;
                    }
                }
                cols.truncate(w);
                row_ptr.push(cols.len());
            }
            let mut map = vec![0u32; a.vals.len()];
            for r in 0..a.n {
                let br = r / 3;
                let blocks = &cols[row_ptr[br]..row_ptr[br + 1]];
                for k in a.row_ptr[r]..a.row_ptr[r + 1] {
                    let c = a.cols[k] as usize;
                    let j = blocks
                        .binary_search(&((c / 3) as u32))
                        .expect("block of an entry");
                    map[k] = ((row_ptr[br] + j) * 9 + 3 * (r % 3) + c % 3) as u32;
                }
            }
            self.key = Some(a.cols.clone());
            self.map = map;
            self.sym = SymBsr3::zeros(nb, row_ptr, cols);
        }
        let s = self.sym.as_mut()?;
        scatter_by_map(&self.map, &a.vals, s.vals.as_flattened_mut());
        Some(s)
    }
}

#[cfg(test)]
mod tests;
