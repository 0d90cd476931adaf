//! Sparse matrices for assembled linear systems: components add entries (or 3x3 blocks) into a
//! [`MatrixSink`]; the triplets are then compressed into a CSR matrix. Duplicate entries are summed
//! in insertion order after a stable sort, so the result is deterministic.

use canape_types::Mat3;

/// Receives matrix contributions during assembly.
pub trait MatrixSink {
    fn add(&mut self, row: usize, col: usize, v: f64);
    /// Add a 3x3 block at scalar offsets (`row`, `col`). All 9 entries are added, zeros
    /// included, so that the sequence of entries (and the cached pattern) does not change when a
    /// value happens to be exactly zero.
    fn add_block3(&mut self, row: usize, col: usize, m: &Mat3) {
        for i in 0..3 {
            for j in 0..3 {
                self.add(row + i, col + j, m[(i, j)]);
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
            row_ptr: row_ptr.into(),
            cols: cols.into(),
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

/// Reuses the compressed pattern of a previous assembly when components add their entries in
/// the same order again (the usual case: same topology, same components). Then compression is a
/// single scatter pass instead of a sort.
#[derive(Clone, Debug, Default)]
pub struct PatternCache {
    /// Triplet buffer reused from one assembly to the next (no reallocation per step).
    pub scratch: Triplets,
    keys: Vec<(u32, u32)>,
    slot: Vec<u32>,
    pattern: Csr,
}

impl PatternCache {
    /// Compress `t` into CSR, reusing the cached pattern when the entry sequence is unchanged.
    pub fn compress(&mut self, t: &Triplets) -> Csr {
        let same = self.pattern.n == t.n
            && self.keys.len() == t.entries.len()
            && self
                .keys
                .iter()
                .zip(&t.entries)
                .all(|(k, e)| k.0 == e.0 && k.1 == e.1);
        if !same {
            let mut order: Vec<u32> = (0..t.entries.len() as u32).collect();
            order.sort_by_key(|&i| (t.entries[i as usize].0, t.entries[i as usize].1));
            let mut row_ptr = vec![0usize; t.n + 1];
            let mut cols = Vec::new();
            let mut slot = vec![0u32; t.entries.len()];
            let mut last: Option<(u32, u32)> = None;
            for &i in &order {
                let (r, c, _) = t.entries[i as usize];
                if last != Some((r, c)) {
                    cols.push(c);
                    row_ptr[r as usize + 1] += 1;
                    last = Some((r, c));
                }
                slot[i as usize] = (cols.len() - 1) as u32;
            }
            for i in 0..t.n {
                row_ptr[i + 1] += row_ptr[i];
            }
            self.keys = t.entries.iter().map(|&(r, c, _)| (r, c)).collect();
            self.slot = slot;
            self.pattern = Csr {
                n: t.n,
                row_ptr: row_ptr.into(),
                vals: Vec::new(),
                cols: cols.into(),
            };
        }
        let mut vals = vec![0.0; self.pattern.cols.len()];
        // sum in insertion order within each slot (deterministic)
        for (k, &(_, _, v)) in t.entries.iter().enumerate() {
            vals[self.slot[k] as usize] += v;
        }
        Csr {
            n: self.pattern.n,
            row_ptr: self.pattern.row_ptr.clone(),
            cols: self.pattern.cols.clone(),
            vals,
        }
    }
}

/// Compressed sparse row matrix (square).
#[derive(Clone, Debug, Default)]
pub struct Csr {
    pub n: usize,
    /// Structure, shared between assemblies of the same pattern (cheap to clone).
    pub row_ptr: std::sync::Arc<[usize]>,
    pub cols: std::sync::Arc<[u32]>,
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
        let mut cache = PatternCache::default();
        let b = cache.compress(&t);
        let c = cache.compress(&t);
        assert_eq!(b.vals, a.vals);
        assert_eq!(c.vals, a.vals);
        assert_eq!(c.cols, a.cols);
    }
}

/// 3×3-block compressed sparse row matrix: the storage of assembled Vec3 systems for products
/// (one column index per 9 values, contiguous blocks).
#[derive(Clone, Debug, Default)]
pub struct Bsr3 {
    pub nb: usize,
    pub row_ptr: Vec<usize>,
    pub cols: Vec<u32>,
    pub vals: Vec<[f64; 9]>,
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
                    vals[slot[bc] as usize][3 * i + c % 3] += a.vals[k];
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
        Some(Bsr3 {
            nb,
            row_ptr,
            cols,
            vals,
        })
    }

    /// y = A x
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        for br in 0..self.nb {
            let (mut s0, mut s1, mut s2) = (0.0, 0.0, 0.0);
            for k in self.row_ptr[br]..self.row_ptr[br + 1] {
                let c = 3 * self.cols[k] as usize;
                let b = &self.vals[k];
                let (x0, x1, x2) = (x[c], x[c + 1], x[c + 2]);
                s0 += b[0] * x0 + b[1] * x1 + b[2] * x2;
                s1 += b[3] * x0 + b[4] * x1 + b[5] * x2;
                s2 += b[6] * x0 + b[7] * x1 + b[8] * x2;
            }
            y[3 * br] = s0;
            y[3 * br + 1] = s1;
            y[3 * br + 2] = s2;
        }
    }
}

#[cfg(test)]
mod bsr_tests {
    use super::*;

    #[test]
    fn block_product_equals_scalar_product() {
        let mut t = Triplets::new(9);
        let mut s: u64 = 3;
        for _ in 0..60 {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (r, c) = ((s >> 20) as usize % 9, (s >> 40) as usize % 9);
            t.add(r, c, (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5);
        }
        let a = t.to_csr();
        let b = Bsr3::from_csr(&a).unwrap();
        let x: Vec<f64> = (0..9).map(|i| (i as f64).sin()).collect();
        let (mut y1, mut y2) = (vec![0.0; 9], vec![0.0; 9]);
        a.mul(&x, &mut y1);
        b.mul(&x, &mut y2);
        for (p, q) in y1.iter().zip(&y2) {
            assert!((p - q).abs() < 1e-14);
        }
        assert!(Bsr3::from_csr(&Triplets::new(4).to_csr()).is_none());
    }
}
