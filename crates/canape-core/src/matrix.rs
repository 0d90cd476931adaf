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
    /// Entries that projective constraints overwrite (value index, on the diagonal), for the
    /// pattern (`cols`) and fixed-DOF mask they were computed for. Kept here for the caller.
    #[allow(clippy::type_complexity)]
    pub dirichlet: Option<(std::sync::Arc<[u32]>, Vec<bool>, Vec<(u32, bool)>)>,
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

/// A sink that adds straight into the values of a cached pattern, checking that the entries
/// arrive in the recorded order (then no triplet buffer, sort or search is needed).
struct SlotSink<'a> {
    keys: &'a [(u32, u32)],
    slot: &'a [u32],
    vals: &'a mut [f64],
    k: usize,
    ok: bool,
}

impl MatrixSink for SlotSink<'_> {
    #[inline]
    fn add(&mut self, row: usize, col: usize, v: f64) {
        let k = self.k;
        self.k += 1;
        match self.keys.get(k) {
            Some(&(r, c)) if r as usize == row && c as usize == col => {
                self.vals[self.slot[k] as usize] += v;
            }
            _ => self.ok = false,
        }
    }
    #[inline]
    fn add_block3(&mut self, row: usize, col: usize, m: &Mat3) {
        let k = self.k;
        self.k += 9;
        let (Some(keys), Some(slots)) = (self.keys.get(k..k + 9), self.slot.get(k..k + 9)) else {
            self.ok = false;
            return;
        };
        for i in 0..3 {
            for j in 0..3 {
                let e = 3 * i + j;
                if keys[e] != ((row + i) as u32, (col + j) as u32) {
                    self.ok = false;
                    return;
                }
                self.vals[slots[e] as usize] += m[(i, j)];
            }
        }
    }
}

impl PatternCache {
    /// Assemble with `fill` (which adds entries through the sink it is given). While the entries
    /// arrive in the same order as last time, they are added straight into the cached pattern's
    /// values; otherwise `fill` runs again into triplets and the pattern is rebuilt. Sums happen in
    /// insertion order either way, so the result does not depend on which path was taken.
    pub fn assemble(&mut self, n: usize, mut fill: impl FnMut(&mut dyn MatrixSink)) -> Csr {
        if self.pattern.n == n && !self.keys.is_empty() {
            let mut vals = vec![0.0; self.pattern.cols.len()];
            let mut sink = SlotSink {
                keys: &self.keys,
                slot: &self.slot,
                vals: &mut vals,
                k: 0,
                ok: true,
            };
            fill(&mut sink);
            if sink.ok && sink.k == self.keys.len() {
                return Csr {
                    n,
                    row_ptr: self.pattern.row_ptr.clone(),
                    cols: self.pattern.cols.clone(),
                    vals,
                };
            }
        }
        let mut t = std::mem::take(&mut self.scratch);
        t.clear(n);
        fill(&mut t);
        let a = self.compress(&t);
        self.scratch = t;
        self.scratch.entries = Vec::new(); // the pattern now holds the keys: free the buffer
        a
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

    /// y = A x. Two block rows are summed side by side (independent dependency chains, twice
    /// the instruction-level parallelism); each row still sums its blocks in column order, so
    /// the result is the same as one row at a time.
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        #[inline(always)]
        fn acc(s: &mut [f64; 3], b: &[f64; 9], x: &[f64], c: u32) {
            let c = 3 * c as usize;
            let [x0, x1, x2] = [x[c], x[c + 1], x[c + 2]];
            s[0] += b[0] * x0 + b[1] * x1 + b[2] * x2;
            s[1] += b[3] * x0 + b[4] * x1 + b[5] * x2;
            s[2] += b[6] * x0 + b[7] * x1 + b[8] * x2;
        }
        let row = |br: usize| {
            let r = self.row_ptr[br]..self.row_ptr[br + 1];
            (&self.cols[r.clone()], &self.vals[r])
        };
        let y = &mut y[..3 * self.nb];
        let mut pairs = y.chunks_exact_mut(6);
        let mut br = 0;
        for yb in &mut pairs {
            let (ca, va) = row(br);
            let (cb, vb) = row(br + 1);
            let (mut sa, mut sb) = ([0.0; 3], [0.0; 3]);
            let common = ca.len().min(cb.len());
            for k in 0..common {
                acc(&mut sa, &va[k], x, ca[k]);
                acc(&mut sb, &vb[k], x, cb[k]);
            }
            for k in common..ca.len() {
                acc(&mut sa, &va[k], x, ca[k]);
            }
            for k in common..cb.len() {
                acc(&mut sb, &vb[k], x, cb[k]);
            }
            yb[..3].copy_from_slice(&sa);
            yb[3..].copy_from_slice(&sb);
            br += 2;
        }
        let rest = pairs.into_remainder();
        if !rest.is_empty() {
            let (ca, va) = row(br);
            let mut sa = [0.0; 3];
            for (&c, b) in ca.iter().zip(va) {
                acc(&mut sa, b, x, c);
            }
            rest.copy_from_slice(&sa);
        }
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
        let same = self
            .key
            .as_ref()
            .is_some_and(|k| std::sync::Arc::ptr_eq(k, &a.cols))
            && self.bsr.is_some();
        if !same {
            let mut b = Bsr3::from_csr(a)?;
            let mut map = vec![0u32; a.vals.len()];
            for r in 0..a.n {
                let br = r / 3;
                for k in a.row_ptr[r]..a.row_ptr[r + 1] {
                    let c = a.cols[k] as usize;
                    let blocks = &b.cols[b.row_ptr[br]..b.row_ptr[br + 1]];
                    let j = blocks
                        .binary_search(&((c / 3) as u32))
                        .expect("block of an entry");
                    map[k] = ((b.row_ptr[br] + j) * 9 + 3 * (r % 3) + c % 3) as u32;
                }
            }
            b.vals.iter_mut().for_each(|v| *v = [0.0; 9]);
            self.key = Some(a.cols.clone());
            self.bsr = Some(b);
            self.map = map;
        }
        let b = self.bsr.as_mut().expect("block pattern");
        b.vals.iter_mut().for_each(|v| *v = [0.0; 9]);
        for (&m, &v) in self.map.iter().zip(&a.vals) {
            b.vals[m as usize / 9][m as usize % 9] += v;
        }
        Some(b)
    }
}

#[cfg(test)]
mod bsr_tests {
    use super::*;

    #[test]
    fn cached_conversion_equals_direct_conversion() {
        let mut t = Triplets::new(6);
        for (r, c, v) in [
            (0, 0, 2.0),
            (1, 4, -1.0),
            (4, 1, -1.0),
            (5, 5, 3.0),
            (3, 2, 0.5),
            (2, 3, 0.5),
        ] {
            t.add(r, c, v);
        }
        let mut cache = PatternCache::default();
        let a = cache.compress(&t);
        let mut bc = BsrCache::default();
        let direct = Bsr3::from_csr(&a).unwrap();
        for _ in 0..2 {
            let c = bc.convert(&a).unwrap();
            assert_eq!(c.cols, direct.cols);
            assert_eq!(c.vals, direct.vals);
        }
    }

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
