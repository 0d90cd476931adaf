//! The CSR matrix and the [`PatternCache`] that reuses a compressed pattern from one
//! assembly to the next (adding straight into its values while the entries arrive in the
//! recorded order).

use crate::{sym_blocks, BlockPart, MatrixSink, Triplets};
use canape_types::Mat3;

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
    /// The recorded sequence of additions, one per `add` or `add_block3` call.
    ops: Vec<CachedOp>,
    pattern: Csr,
}

/// One recorded addition: its corner, and the value slots it adds into. A block's three rows
/// each land in three adjacent slots of their CSR row (its columns are consecutive), so the
/// slot of each row's first entry is enough: 20 bytes per block instead of 9 keys and slots.
#[derive(Clone, Copy, Debug)]
struct CachedOp {
    row: u32,
    col: u32,
    /// Block: slot of the first entry of rows 0, 1, 2. Scalar: the slot, then [`SCALAR`] twice.
    slots: [u32; 3],
}

const SCALAR: u32 = u32::MAX;

impl PatternCache {
    /// Compress `t` into CSR, reusing the cached pattern when the entry sequence is unchanged.
    pub fn compress(&mut self, t: &Triplets) -> Csr {
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
        // the call sequence: blocks where `add_block3` recorded them, scalar entries elsewhere
        self.ops.clear();
        let mut blocks = t.block_starts.iter().peekable();
        let mut k = 0;
        while k < t.entries.len() {
            let (row, col, _) = t.entries[k];
            if blocks.next_if(|&&b| b as usize == k).is_some() {
                self.ops.push(CachedOp {
                    row,
                    col,
                    slots: [slot[k], slot[k + 3], slot[k + 6]],
                });
                k += 9;
            } else {
                self.ops.push(CachedOp {
                    row,
                    col,
                    slots: [slot[k], SCALAR, SCALAR],
                });
                k += 1;
            }
        }
        self.pattern = Csr {
            n: t.n,
            row_ptr: row_ptr.into(),
            vals: Vec::new(),
            cols: cols.into(),
        };
        let mut vals = vec![0.0; self.pattern.cols.len()];
        // sum in insertion order within each slot (deterministic)
        for (k, &(_, _, v)) in t.entries.iter().enumerate() {
            vals[slot[k] as usize] += v;
        }
        Csr {
            n: self.pattern.n,
            row_ptr: self.pattern.row_ptr.clone(),
            cols: self.pattern.cols.clone(),
            vals,
        }
    }
}

/// A sink that adds straight into the values of a cached pattern, checking that the calls
/// arrive in the recorded order (then no triplet buffer, sort or search is needed).
struct SlotSink<'a> {
    ops: &'a [CachedOp],
    vals: &'a mut [f64],
    k: usize,
    ok: bool,
}

impl MatrixSink for SlotSink<'_> {
    #[inline]
    fn add(&mut self, row: usize, col: usize, v: f64) {
        let k = self.k;
        self.k += 1;
        match self.ops.get(k) {
            Some(op) if op.slots[1] == SCALAR && (op.row, op.col) == (row as u32, col as u32) => {
                self.vals[op.slots[0] as usize] += v;
            }
            _ => self.ok = false,
        }
    }
    #[inline]
    fn add_block3(&mut self, row: usize, col: usize, m: &Mat3) {
        self.add_block_at(row, col, m, false);
    }
    fn add_sym_blocks3(
        &mut self,
        offset: usize,
        nodes: &[[u32; 2]],
        blocks: &[Mat3],
        part: Option<BlockPart>,
    ) {
        // the default's sequence of add_block3 calls (this sink wants every entry), in one loop
        debug_assert!(part.is_none() || offset.is_multiple_of(3));
        sym_blocks(offset, nodes, blocks, part, |r, c, b, transposed| {
            self.add_block_at(r, c, b, transposed)
        });
    }
}

impl SlotSink<'_> {
    /// `add_block3` of `m`, or of its transpose when `transposed`.
    #[inline(always)]
    fn add_block_at(&mut self, row: usize, col: usize, m: &Mat3, transposed: bool) {
        let k = self.k;
        self.k += 1;
        match self.ops.get(k) {
            Some(op) if op.slots[1] != SCALAR && (op.row, op.col) == (row as u32, col as u32) => {
                for (i, &s) in op.slots.iter().enumerate() {
                    let s = s as usize;
                    let v = &mut self.vals[s..s + 3];
                    for (j, v) in v.iter_mut().enumerate() {
                        *v += if transposed { m[(j, i)] } else { m[(i, j)] };
                    }
                }
            }
            _ => self.ok = false,
        }
    }
}

impl PatternCache {
    /// Assemble with `fill` (which adds entries through the sink it is given). While the entries
    /// arrive in the same order as last time, they are added straight into the cached pattern's
    /// values; otherwise `fill` runs again into triplets and the pattern is rebuilt. Sums happen in
    /// insertion order either way, so the result does not depend on which path was taken.
    pub fn assemble(&mut self, n: usize, mut fill: impl FnMut(&mut dyn MatrixSink)) -> Csr {
        if self.pattern.n == n && !self.ops.is_empty() {
            let mut vals = vec![0.0; self.pattern.cols.len()];
            let mut sink = SlotSink {
                ops: &self.ops,
                vals: &mut vals,
                k: 0,
                ok: true,
            };
            fill(&mut sink);
            if sink.ok && sink.k == self.ops.len() {
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
