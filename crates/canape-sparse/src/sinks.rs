//! Assembly sinks: the triplet (coordinate) accumulator with its compression into CSR, and the
//! filter that keeps only some 3×3 blocks ([`BlockPart`]).

use crate::{add_entries3, sym_blocks, Csr, MatrixSink};
use canape_types::Mat3;

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
