//! Sparse linear algebra for assembled linear systems (re-exported as `canape_core::matrix`):
//! components add entries (or 3x3 blocks) into a [`MatrixSink`]; the triplets are then
//! compressed into a CSR matrix, whose structure a [`PatternCache`] reuses from step to step. Duplicate entries are summed
//! in insertion order after a stable sort, so the result is deterministic.

use canape_types::Mat3;

/// Receives matrix contributions during assembly.
pub trait MatrixSink {
    fn add(&mut self, row: usize, col: usize, v: f64);
    /// Whether entries at (`row`, `col`) are kept. A sink that keeps only part of the matrix
    /// (the 3×3 diagonal blocks for a block-Jacobi preconditioner) says no to the rest, and
    /// components may skip computing them; entries added anyway are dropped.
    #[inline]
    fn wants(&self, _row: usize, _col: usize) -> bool {
        true
    }
    /// Add a 3x3 block at scalar offsets (`row`, `col`). All 9 entries are added, zeros
    /// included, so that the sequence of entries (and the cached pattern) does not change when a
    /// value happens to be exactly zero.
    fn add_block3(&mut self, row: usize, col: usize, m: &Mat3) {
        add_entries3(self, row, col, m);
    }
    /// Add a symmetric matrix over nodes of 3 DOFs (node n's first DOF at `offset` + 3n) given
    /// by its blocks on and above the diagonal: `blocks[s]` is the block (p, q) for
    /// `nodes[s]` = [p, q], p ≤ q, and the block (q, p) is its transpose. Only the blocks
    /// `part` names (all when None) and the sink [`wants`](MatrixSink::wants) are added; the
    /// result is that of calling `add_block3` for each, in slot order, (p, q) before (q, p).
    /// Of a diagonal block (p = q) only the upper triangle is read and mirrored below, so the
    /// sum is exactly symmetric however the block was rounded (a rotated element block
    /// R K Rᵀ is symmetric only up to rounding; a Cholesky factorization reads that same
    /// triangle, and an LU can tell the matrix is symmetric, see canape-solvers' direct.rs).
    /// One call for a whole component's matrix, so that a sink can add it in one loop. With a
    /// `part`, `offset` is a multiple of 3 (blocks are kept or dropped whole; [`BlockFilter`]
    /// splits blocks that straddle its part itself).
    fn add_sym_blocks3(
        &mut self,
        offset: usize,
        nodes: &[[u32; 2]],
        blocks: &[Mat3],
        part: Option<BlockPart>,
    ) {
        debug_assert!(part.is_none() || offset.is_multiple_of(3));
        sym_blocks(offset, nodes, blocks, part, |r, c, b, transposed| {
            if self.wants(r, c) {
                if transposed {
                    self.add_block3(r, c, &b.transpose());
                } else {
                    self.add_block3(r, c, b);
                }
            }
        });
    }
}

/// Call `f(row, col, block, transposed)` for the blocks of a symmetric matrix given by its
/// blocks on and above the diagonal (see [`MatrixSink::add_sym_blocks3`]) that `part` keeps
/// (judged by the block's corner), in slot order, (p, q) before its mirror (q, p).
#[inline(always)]
fn sym_blocks(
    offset: usize,
    nodes: &[[u32; 2]],
    blocks: &[Mat3],
    part: Option<BlockPart>,
    mut f: impl FnMut(usize, usize, &Mat3, bool),
) {
    let keeps = |r: usize, c: usize| part.is_none_or(|p| p.keeps(r, c));
    for (&[p, q], b) in nodes.iter().zip(blocks) {
        let (r, c) = (offset + 3 * p as usize, offset + 3 * q as usize);
        if keeps(r, c) {
            if p == q {
                f(r, c, &upper_mirrored(b), false);
            } else {
                f(r, c, b, false);
            }
        }
        if p != q && keeps(c, r) {
            f(c, r, b, true);
        }
    }
}

/// `m`'s upper triangle (diagonal included) with its mirror below: exactly symmetric.
#[inline(always)]
fn upper_mirrored(m: &Mat3) -> Mat3 {
    Mat3::from_fn(|i, j| if i <= j { m[(i, j)] } else { m[(j, i)] })
}

/// Add the 9 entries of a 3×3 block one by one, row by row (what `add_block3` means).
#[inline]
pub fn add_entries3<S: MatrixSink + ?Sized>(sink: &mut S, row: usize, col: usize, m: &Mat3) {
    for i in 0..3 {
        for j in 0..3 {
            sink.add(row + i, col + j, m[(i, j)]);
        }
    }
}

/// Triplet (coordinate) accumulator.
#[derive(Clone, Debug, Default)]
pub struct Triplets {
    pub n: usize,
    pub entries: Vec<(u32, u32, f64)>,
    /// Indices in `entries` where a 3×3 block added by `add_block3` starts (its 9 entries follow
    /// row by row).
    pub block_starts: Vec<u32>,
}

impl Triplets {
    pub fn new(n: usize) -> Self {
        Triplets {
            n,
            entries: Vec::new(),
            block_starts: Vec::new(),
        }
    }
    pub fn clear(&mut self, n: usize) {
        self.n = n;
        self.entries.clear();
        self.block_starts.clear();
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
    fn add_block3(&mut self, row: usize, col: usize, m: &Mat3) {
        self.block_starts.push(self.entries.len() as u32);
        add_entries3(self, row, col, m);
    }
}

/// Which 3×3 blocks (block row, block column) a [`BlockFilter`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockPart {
    /// The diagonal blocks: all that Jacobi and block-Jacobi preconditioners read.
    Diagonal,
    /// The blocks on and above the diagonal: all that a solver relying on symmetry reads.
    Upper,
}

impl BlockPart {
    /// Whether the entry (`row`, `col`) lies in a block this part keeps.
    #[inline]
    pub fn keeps(self, row: usize, col: usize) -> bool {
        match self {
            BlockPart::Diagonal => col / 3 == row / 3,
            BlockPart::Upper => col / 3 >= row / 3,
        }
    }

    /// The blocks both `a` and `b` keep (None keeps all).
    pub fn both(a: Option<BlockPart>, b: Option<BlockPart>) -> Option<BlockPart> {
        match (a, b) {
            (Some(BlockPart::Diagonal), _) | (_, Some(BlockPart::Diagonal)) => {
                Some(BlockPart::Diagonal)
            }
            (Some(BlockPart::Upper), _) | (_, Some(BlockPart::Upper)) => Some(BlockPart::Upper),
            (None, None) => None,
        }
    }
}

/// Keeps only the entries of the 3×3 blocks that `part` names, passing them on to `sink`.
pub struct BlockFilter<'a> {
    pub part: BlockPart,
    pub sink: &'a mut dyn MatrixSink,
}

impl MatrixSink for BlockFilter<'_> {
    #[inline]
    fn add(&mut self, row: usize, col: usize, v: f64) {
        if self.part.keeps(row, col) {
            self.sink.add(row, col, v);
        }
    }
    #[inline]
    fn wants(&self, row: usize, col: usize) -> bool {
        self.part.keeps(row, col)
    }
    fn add_block3(&mut self, row: usize, col: usize, m: &Mat3) {
        if row.is_multiple_of(3) && col.is_multiple_of(3) {
            // a whole block: kept or dropped as one
            if self.part.keeps(row, col) {
                self.sink.add_block3(row, col, m);
            }
        } else {
            add_entries3(self, row, col, m);
        }
    }
    fn add_sym_blocks3(
        &mut self,
        offset: usize,
        nodes: &[[u32; 2]],
        blocks: &[Mat3],
        part: Option<BlockPart>,
    ) {
        if offset.is_multiple_of(3) {
            // whole blocks: the sink below keeps what both parts keep
            let part = BlockPart::both(Some(self.part), part);
            self.sink.add_sym_blocks3(offset, nodes, blocks, part);
        } else {
            // blocks straddle the kept ones: entry by entry
            let part = BlockPart::both(Some(self.part), part);
            sym_blocks(offset, nodes, blocks, None, |r, c, b, transposed| {
                for i in 0..3 {
                    for j in 0..3 {
                        if part.is_none_or(|k| k.keeps(r + i, c + j)) {
                            let v = if transposed { b[(j, i)] } else { b[(i, j)] };
                            self.sink.add(r + i, c + j, v);
                        }
                    }
                }
            });
        }
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

    /// Blocks and scalar entries mixed: the cached path gives the triplets' values, and a changed
    /// call sequence (a block where a scalar was, or a different corner) falls back and still
    /// gives the right matrix.
    #[test]
    fn cached_assembly_of_blocks_and_entries() {
        let m = Mat3::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.5);
        let fill = |t: &mut dyn MatrixSink, shift: usize, scalar_first: bool| {
            if scalar_first {
                t.add(4, 4, 0.25);
            } else {
                t.add_block3(3, 3, &m);
            }
            t.add_block3(0, 3 + shift, &m);
            t.add(0, 0, 1.5);
            t.add_block3(3, 3, &(m * 2.0));
            t.add(5, 1, -1.0);
        };
        let reference = |shift: usize, scalar_first: bool| {
            let mut t = Triplets::new(6);
            fill(&mut t, shift, scalar_first);
            t.to_csr()
        };
        let mut cache = PatternCache::default();
        for (shift, scalar_first) in [(0, true), (0, true), (0, false), (0, false), (3, false)] {
            let a = cache.assemble(9.max(6 + shift), |t| fill(t, shift, scalar_first));
            let mut r = reference(shift, scalar_first);
            r.n = a.n;
            for i in 0..6 {
                for j in 0..6 + shift {
                    assert_eq!(a.get(i, j), r.get(i, j), "({i}, {j})");
                }
            }
        }
    }

    /// `add_sym_blocks3` into the cached pattern (SlotSink, recorded by triplets first), through
    /// part filters and at a DOF offset that is or is not a multiple of 3, gives the matrix of
    /// the same blocks added one by one (and their transposes below the diagonal; of the
    /// diagonal blocks, which are not symmetric here, the upper triangles mirrored): an exactly
    /// symmetric matrix.
    #[test]
    fn symmetric_blocks_in_one_call_equal_block_by_block() {
        let nodes = [[0u32, 0], [0, 2], [1, 1], [1, 2], [2, 2]];
        let blocks: Vec<Mat3> = (0..nodes.len())
            .map(|s| Mat3::from_fn(|i, j| (1 + s * 9 + 3 * i + j) as f64 * 0.5))
            .collect();
        for offset in [0usize, 3, 1] {
            for part in [None, Some(BlockPart::Upper), Some(BlockPart::Diagonal)] {
                let n = offset + 9;
                let one_by_one = |t: &mut dyn MatrixSink| {
                    t.add(offset, offset, 2.0); // another component's entry
                    for (&[p, q], b) in nodes.iter().zip(&blocks) {
                        let (r, c) = (offset + 3 * p as usize, offset + 3 * q as usize);
                        let mirror = (p != q).then(|| (c, r, b.transpose()));
                        let b = if p == q {
                            Mat3::from_fn(|i, j| b[(i.min(j), i.max(j))])
                        } else {
                            *b
                        };
                        for (r, c, b) in std::iter::once((r, c, b)).chain(mirror) {
                            for i in 0..3 {
                                for j in 0..3 {
                                    if part.is_none_or(|k| k.keeps(r + i, c + j)) {
                                        t.add(r + i, c + j, b[(i, j)]);
                                    }
                                }
                            }
                        }
                    }
                };
                let mut t = Triplets::new(n);
                one_by_one(&mut t);
                let want = t.to_csr();
                let bulk = |t: &mut dyn MatrixSink| {
                    t.add(offset, offset, 2.0);
                    match part {
                        None => t.add_sym_blocks3(offset, &nodes, &blocks, None),
                        Some(part) => BlockFilter { part, sink: t }
                            .add_sym_blocks3(offset, &nodes, &blocks, None),
                    }
                };
                let mut cache = PatternCache::default();
                for _ in 0..3 {
                    // first call records through triplets, the next ones add through slots
                    let a = cache.assemble(n, bulk);
                    for i in 0..n {
                        for j in 0..n {
                            assert_eq!(
                                a.get(i, j),
                                want.get(i, j),
                                "offset {offset}, {part:?}: ({i}, {j})"
                            );
                            if part.is_none() {
                                assert_eq!(a.get(i, j), a.get(j, i), "({i}, {j})");
                            }
                        }
                    }
                }
            }
        }
    }
}

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
fn same_pattern(key: &Option<std::sync::Arc<[u32]>>, a: &Csr) -> bool {
    key.as_ref()
        .is_some_and(|k| std::sync::Arc::ptr_eq(k, &a.cols))
}

/// flat[map[k]] = vals[k]: a CSR pattern holds each (row, column) once, so every mapped position
/// is written by exactly one entry, and the others (padding, absent entries) stay zero.
fn scatter_by_map(map: &[u32], vals: &[f64], flat: &mut [f64]) {
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

/// A symmetric matrix of 3×3 blocks stored by its blocks on and above the diagonal (block
/// column ≥ block row), each row by row, with one zero block after the last: what assembled CG
/// multiplies by (CG requires a symmetric matrix). The product reads each stored block once for
/// both the block and its mirror image below the diagonal: half the memory traffic of the full
/// [`Bsr3`], which is what bounds the product.
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
/// [`SymBsr3`], with a scatter map computed once per pattern (like [`BsrCache`]).
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
mod sym_bsr_tests {
    use super::*;

    /// The symmetric product equals the full matrix's product (up to round-off), the AVX2 and
    /// baseline products give the same bits, and a matrix with a block below the diagonal is
    /// refused.
    #[test]
    fn symmetric_product_equals_full_product() {
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let nb = 7;
        let n = 3 * nb;
        // a symmetric matrix with some blocks absent
        let mut dense = vec![vec![0.0; n]; n];
        for bi in 0..nb {
            for bj in bi..nb {
                if bj != bi && (bi + 2 * bj) % 3 == 0 {
                    continue;
                }
                for i in 0..3 {
                    for j in 0..3 {
                        let v = rnd();
                        dense[3 * bi + i][3 * bj + j] = v;
                        dense[3 * bj + j][3 * bi + i] = v;
                    }
                }
            }
        }
        let (mut full, mut upper) = (Triplets::new(n), Triplets::new(n));
        for (i, row) in dense.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    full.add(i, j, v);
                    if j / 3 >= i / 3 {
                        upper.add(i, j, v);
                    }
                }
            }
        }
        let x: Vec<f64> = (0..n).map(|_| rnd()).collect();
        let mut y_full = vec![0.0; n];
        full.to_csr().mul(&x, &mut y_full);
        let mut cache = SymBsrCache::default();
        let upper_csr = upper.to_csr();
        let sym = cache
            .convert(&upper_csr)
            .expect("upper-block matrix")
            .clone();
        let (mut y1, mut y2) = (vec![1.0; n], vec![2.0; n]);
        sym.mul(&x, &mut y1);
        sym.mul_impl(&x, &mut y2);
        assert!(y1.iter().zip(&y2).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert!(y1.iter().zip(&y_full).all(|(a, b)| (a - b).abs() < 1e-14));
        // the cached path again (values only)
        let again = cache.convert(&upper_csr).expect("cached").clone();
        let mut y3 = vec![0.0; n];
        again.mul(&x, &mut y3);
        assert_eq!(y1, y3);
        assert!(SymBsrCache::default().convert(&full.to_csr()).is_none());
        // split by rows into buffers over the nodes each part touches (as threads do), summed:
        // the same product up to round-off; the AVX2 and baseline parts give the same bits
        for split in [1, 3, 6] {
            let mut y = vec![0.0; n];
            for rows in [0..split, split..nb] {
                let lo = rows.start;
                let hi = rows.clone().flat_map(|r| sym.row_nodes(r)).max().unwrap() as usize + 1;
                let (mut part, mut part2) = (vec![0.0; 3 * (hi - lo)], vec![0.0; 3 * (hi - lo)]);
                sym.mul_rows_add(&x, &mut part, rows.clone(), lo);
                sym.mul_rows_impl(&x, &mut part2, rows, lo);
                assert!(part
                    .iter()
                    .zip(&part2)
                    .all(|(a, b)| a.to_bits() == b.to_bits()));
                for (d, p) in y[3 * lo..].iter_mut().zip(&part) {
                    *d += p;
                }
            }
            assert!(y.iter().zip(&y_full).all(|(a, b)| (a - b).abs() < 1e-14));
        }
        // a part whose output does not reach the nodes its rows touch is refused
        let short = std::panic::catch_unwind(|| {
            let mut part = vec![0.0; 3];
            sym.mul_rows_add(&x, &mut part, 0..1, 0);
        });
        assert!(short.is_err());
    }

    /// A pattern made by hand: rows must be ascending, on or above the diagonal, inside.
    #[test]
    fn sym_pattern_is_checked() {
        assert!(SymBsr3::zeros(3, vec![0, 2, 3, 3], vec![0, 2, 1]).is_some());
        assert!(SymBsr3::zeros(3, vec![0, 2, 3, 3], vec![0, 2, 0]).is_none()); // below
        assert!(SymBsr3::zeros(3, vec![0, 2, 3, 3], vec![2, 0, 1]).is_none()); // order
        assert!(SymBsr3::zeros(3, vec![0, 2, 3, 3], vec![0, 3, 1]).is_none()); // outside
        assert!(SymBsr3::zeros(3, vec![0, 2, 3], vec![0, 2, 1]).is_none()); // rows
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
        // an empty matrix multiplies to nothing (no padding block to rely on)
        Bsr3::default().mul(&[], &mut []);
        let mut e = vec![1.0; 3];
        Bsr3::from_csr(&Triplets::new(3).to_csr())
            .unwrap()
            .mul(&[2.0; 3], &mut e);
        assert_eq!(e, vec![0.0; 3]);
        // the dispatched (AVX2/FMA where available) product gives the baseline's bits
        let mut y3 = vec![0.0; 9];
        b.mul_impl(&x, &mut y3);
        assert!(y2.iter().zip(&y3).all(|(p, q)| p.to_bits() == q.to_bits()));
    }

    #[test]
    fn block_diagonal_sink_keeps_exactly_the_diagonal_blocks() {
        let fill = |t: &mut dyn MatrixSink| {
            let m = Mat3::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0);
            t.add_block3(0, 0, &m);
            t.add_block3(0, 3, &m);
            t.add_block3(3, 3, &(m * 2.0));
            t.add(4, 2, 7.0); // off the diagonal blocks
            t.add(5, 4, 1.5); // in block (1, 1)
        };
        let mut full = PatternCache::default();
        let a = full.assemble(6, fill);
        let mut diag = PatternCache::default();
        for _ in 0..2 {
            // second round: through the cached pattern
            let d = diag.assemble(6, |t| {
                fill(&mut BlockFilter {
                    part: BlockPart::Diagonal,
                    sink: t,
                })
            });
            for r in 0..6 {
                for c in 0..6 {
                    let want = if r / 3 == c / 3 { a.get(r, c) } else { 0.0 };
                    assert_eq!(d.get(r, c), want, "({r}, {c})");
                }
            }
            assert_eq!(d.cols.len(), 18);
        }
        // the blocks on and above the diagonal
        let mut upper = PatternCache::default();
        for _ in 0..2 {
            let u = upper.assemble(6, |t| {
                fill(&mut BlockFilter {
                    part: BlockPart::Upper,
                    sink: t,
                })
            });
            for r in 0..6 {
                for c in 0..6 {
                    let want = if c / 3 >= r / 3 { a.get(r, c) } else { 0.0 };
                    assert_eq!(u.get(r, c), want, "({r}, {c})");
                }
            }
        }
    }
}
