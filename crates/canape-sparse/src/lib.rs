//! Sparse linear algebra for assembled linear systems (re-exported as `canape_core::matrix`):
//! components add entries (or 3x3 blocks) into a [`MatrixSink`]; the triplets are then
//! compressed into a CSR matrix, whose structure a [`PatternCache`] reuses from step to step. Duplicate entries are summed
//! in insertion order after a stable sort, so the result is deterministic.

mod bsr;
mod csr;
mod sinks;
mod sym_bsr;

pub use bsr::{bsr_pos, Bsr3, BsrCache};
pub use csr::{Csr, PatternCache};
pub use sinks::{BlockFilter, BlockPart, Triplets};
pub use sym_bsr::{SymBsr3, SymBsrCache};

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

#[cfg(test)]
mod tests;
