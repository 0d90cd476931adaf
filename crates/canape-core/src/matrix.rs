//! Sparse matrices for assembled linear systems: components add entries (or 3x3 blocks) into a
//! [`MatrixSink`]; the triplets are then compressed into a CSR matrix. Duplicate entries are summed
//! in insertion order after a stable sort, so the result is deterministic.

use canape_types::Mat3;

/// Receives matrix contributions during assembly.
pub trait MatrixSink {
    fn add(&mut self, row: usize, col: usize, v: f64);
    /// Add a 3x3 block at scalar offsets (`row`, `col`).
    fn add_block3(&mut self, row: usize, col: usize, m: &Mat3) {
        for i in 0..3 {
            for j in 0..3 {
                let v = m[(i, j)];
                if v != 0.0 {
                    self.add(row + i, col + j, v);
                }
            }
        }
    }
}

/// Triplet (coordinate) accumulator.
#[derive(Clone, Debug, Default)]
pub struct Triplets {
    pub n: usize,
    pub entries: Vec<(u32, u32, f64)>,
}

impl Triplets {
    pub fn new(n: usize) -> Self {
        Triplets {
            n,
            entries: Vec::new(),
        }
    }
    pub fn clear(&mut self, n: usize) {
        self.n = n;
        self.entries.clear();
    }
    /// Compress into a CSR matrix, summing duplicates.
    pub fn to_csr(&self) -> Csr {
        let mut e = self.entries.clone();
        e.sort_by_key(|&(r, c, _)| (r, c));
        let mut row_ptr = vec![0usize; self.n + 1];
        let mut cols = Vec::with_capacity(e.len());
        let mut vals: Vec<f64> = Vec::with_capacity(e.len());
        let mut last: Option<(u32, u32)> = None;
        for (r, c, v) in e {
            if last == Some((r, c)) {
                *vals.last_mut().unwrap() += v;
            } else {
                cols.push(c);
                vals.push(v);
                row_ptr[r as usize + 1] += 1;
                last = Some((r, c));
            }
        }
        for i in 0..self.n {
            row_ptr[i + 1] += row_ptr[i];
        }
        Csr {
            n: self.n,
            row_ptr,
            cols,
            vals,
        }
    }
}

impl MatrixSink for Triplets {
    #[inline]
    fn add(&mut self, row: usize, col: usize, v: f64) {
        self.entries.push((row as u32, col as u32, v));
    }
}

/// Compressed sparse row matrix (square).
#[derive(Clone, Debug, Default)]
pub struct Csr {
    pub n: usize,
    pub row_ptr: Vec<usize>,
    pub cols: Vec<u32>,
    pub vals: Vec<f64>,
}

impl Csr {
    /// y = A x
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        for r in 0..self.n {
            let mut s = 0.0;
            for k in self.row_ptr[r]..self.row_ptr[r + 1] {
                s += self.vals[k] * x[self.cols[k] as usize];
            }
            y[r] = s;
        }
    }
    pub fn get(&self, r: usize, c: usize) -> f64 {
        let mut s = 0.0;
        for k in self.row_ptr[r]..self.row_ptr[r + 1] {
            if self.cols[k] as usize == c {
                s += self.vals[k];
            }
        }
        s
    }
    /// Zero row and column `i`, and put `diag` on the diagonal (projection of a fixed DOF).
    pub fn clear_row_col(&mut self, i: usize, diag: f64) {
        for r in 0..self.n {
            for k in self.row_ptr[r]..self.row_ptr[r + 1] {
                let c = self.cols[k] as usize;
                if r == i || c == i {
                    self.vals[k] = if r == c { diag } else { 0.0 };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triplets_sum_and_multiply() {
        let mut t = Triplets::new(3);
        t.add(0, 0, 1.0);
        t.add(0, 0, 1.0);
        t.add(2, 1, 3.0);
        t.add(1, 2, -1.0);
        let a = t.to_csr();
        assert_eq!(a.get(0, 0), 2.0);
        let mut y = vec![0.0; 3];
        a.mul(&[1.0, 2.0, 3.0], &mut y);
        assert_eq!(y, vec![2.0, -3.0, 6.0]);
    }
}
