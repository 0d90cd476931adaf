//! The stiffness product in the world frame: each element's gradients turned by its current
//! rotation (stored four elements per block for the AVX2 loop, which gives the scalar loop's
//! bits), the element blocks that assembly and the node-pair operator sum, and the product
//! through that operator ([`NodeOperator`](super::NodeOperator)) when a step makes many.

use super::element::{kernel, stiffness_block};
use super::{Elem, TetrahedronFemForceField};
use crate::common::Material;
use crate::pairs::NodePairs;
use canape_types::Vec3;

/// What the stiffness product reads at every CG iteration: the gradients turned into the world
/// frame by the element's current rotation. For an isotropic material K = Rᵀ J M Jᵀ R equals
/// J_w M J_wᵀ with J_w built from Rᵀ g (strain and stress rotate together), so the product
/// needs no rotation at all: 136 bytes and about 90 flops per element instead of 208 and 210.
///
/// Node 0's gradient is not stored (the four sum to zero) and the material is stored once when
/// all elements share it: 88 bytes per element, the product being memory-bound on large meshes.
#[derive(Clone, Debug)]
pub(super) struct WorldElem {
    idx: [u32; 4],
    pub(super) gw: [[f64; 3]; 3],
}

impl WorldElem {
    pub(super) fn new(el: &Elem, small: bool) -> WorldElem {
        let g = |k: usize| -> [f64; 3] {
            if small {
                el.g[k]
            } else {
                let v = el.rot.transpose() * Vec3::new(el.g[k][0], el.g[k][1], el.g[k][2]);
                [v.x, v.y, v.z]
            }
        };
        WorldElem {
            idx: el.idx,
            gw: [g(1), g(2), g(3)],
        }
    }

    /// All four gradients (node 0's from the other three).
    #[inline(always)]
    pub(super) fn gradients(&self) -> [[f64; 3]; 4] {
        let [a, b, c] = self.gw;
        let g0 = [
            -(a[0] + b[0] + c[0]),
            -(a[1] + b[1] + c[1]),
            -(a[2] + b[2] + c[2]),
        ];
        [g0, a, b, c]
    }
}

/// The world-frame operators of all elements, four per block, lane by lane (element 4b + l
/// is lane l of block b), so that the AVX2 product loads each gradient component of four
/// elements with one instruction. Same 88 bytes per element as [`WorldElem`]; padding lanes of
/// the last block have zero gradients and node 0.
#[derive(Clone, Debug, Default)]
pub(super) struct WorldBlocks {
    blocks: Vec<WorldBlock>,
    len: usize,
    /// The largest node index of any element (padding lanes use node 0).
    max_node: usize,
}

#[derive(Clone, Debug, Default)]
#[repr(C, align(32))]
struct WorldBlock {
    /// Gradients of nodes 1..3: `gw[k][c][lane]`.
    gw: [[[f64; 4]; 3]; 3],
    /// Nodes: `idx[lane][k]`.
    idx: [[u32; 4]; 4],
}

impl WorldBlocks {
    pub(super) fn clear(&mut self) {
        self.blocks.clear();
        self.len = 0;
        self.max_node = 0;
    }
    pub(super) fn len(&self) -> usize {
        self.len
    }
    pub(super) fn push(&mut self, w: WorldElem) {
        if self.len.is_multiple_of(4) {
            self.blocks.push(WorldBlock::default());
        }
        self.len += 1;
        let e = self.len - 1;
        self.blocks[e / 4].idx[e % 4] = w.idx;
        let top = w.idx.iter().map(|&n| n as usize).max().unwrap_or(0);
        self.max_node = self.max_node.max(top);
        self.set_gradients(e, &w.gw);
    }
    /// New gradients for element `e` (its nodes do not change).
    #[inline(always)]
    pub(super) fn set_gradients(&mut self, e: usize, gw: &[[f64; 3]; 3]) {
        let (b, l) = (&mut self.blocks[e / 4], e % 4);
        for k in 0..3 {
            for c in 0..3 {
                b.gw[k][c][l] = gw[k][c];
            }
        }
    }
    #[inline(always)]
    pub(super) fn idx(&self, e: usize) -> [u32; 4] {
        self.blocks[e / 4].idx[e % 4]
    }
    #[inline(always)]
    pub(super) fn get(&self, e: usize) -> WorldElem {
        let (b, l) = (&self.blocks[e / 4], e % 4);
        WorldElem {
            idx: b.idx[l],
            gw: std::array::from_fn(|k| std::array::from_fn(|c| b.gw[k][c][l])),
        }
    }
}

/// df[n − lo] −= k · K_e dx for the elements of `range` (world-frame operators).
fn dforce_range(
    world: &WorldBlocks,
    mats: &[Material],
    range: std::ops::Range<usize>,
    dx: &[f64],
    df: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    let stride = usize::from(mats.len() > 1);
    for e in range {
        let el = world.get(e);
        let idx = el.idx.map(|i| i as usize);
        let mut xx = [0.0; 12];
        for k in 0..4 {
            xx[3 * k..3 * k + 3].copy_from_slice(&dx[3 * idx[k]..3 * idx[k] + 3]);
        }
        let mut fe = kernel(&el.gradients(), &mats[e * stride], &xx);
        fe.iter_mut().for_each(|v| *v *= k_factor);
        for k in 0..4 {
            let n = idx[k] - lo;
            df[3 * n] -= fe[3 * k];
            df[3 * n + 1] -= fe[3 * k + 1];
            df[3 * n + 2] -= fe[3 * k + 2];
        }
    }
}

/// [`dforce_range`] on the best instruction set available (the same bits either way).
pub(super) fn dforce_range_dispatch(
    world: &WorldBlocks,
    mats: &[Material],
    range: std::ops::Range<usize>,
    dx: &[f64],
    df: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { dforce_range_avx2(world, mats, range, dx, df, lo, k_factor) };
    }
    dforce_range(world, mats, range, dx, df, lo, k_factor)
}

/// [`dforce_range`] four elements at a time with AVX2 (one element per lane): the same
/// multiplications and additions in the same order as [`kernel`] (no fused multiply-adds), so
/// the same bits. Each node's dx is loaded as one vector and the four elements' vectors are
/// transposed into x, y and z lanes; the forces are transposed back and subtracted element by
/// element, node by node, in the scalar loop's order.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dforce_range_avx2(
    world: &WorldBlocks,
    mats: &[Material],
    range: std::ops::Range<usize>,
    dx: &[f64],
    df: &mut [f64],
    lo: usize,
    k_factor: f64,
) {
    use std::arch::x86_64::*;
    if range.is_empty() {
        return;
    }
    let (n_dx, n_df) = (dx.len() / 3, df.len() / 3);
    let shared = mats.len() == 1;
    let whole = lo == 0 && world.max_node < n_dx.min(n_df);
    for b in range.start / 4..range.end.div_ceil(4) {
        let blk = &world.blocks[b];
        let lanes = (4 * b).max(range.start) - 4 * b..(4 * b + 4).min(range.end) - 4 * b;
        // every node read or written below is inside dx and df (checked, not assumed): once
        // for the call when the whole state is the output (one thread), else block by block
        for (l, idx) in blk.idx.iter().enumerate().filter(|_| !whole) {
            for &n in idx {
                let n = n as usize;
                assert!(n < n_dx, "tetrahedron node {n} outside the state");
                if lanes.contains(&l) {
                    assert!(
                        n >= lo && n - lo < n_df,
                        "tetrahedron node {n} outside the range"
                    );
                }
            }
        }
        // SAFETY: AVX2 is enabled for this function; the loads read 3 doubles of dx at a node
        // checked above (the fourth lane is masked out), the stores write 3 doubles of df at a
        // node checked above; the block's arrays are read whole.
        unsafe {
            let (diag, off, shear) = if shared {
                let m = &mats[0];
                (
                    _mm256_set1_pd(m.diag),
                    _mm256_set1_pd(m.off),
                    _mm256_set1_pd(m.shear),
                )
            } else {
                let me = |l: usize| &mats[(4 * b + l).min(mats.len() - 1)];
                (
                    _mm256_setr_pd(me(0).diag, me(1).diag, me(2).diag, me(3).diag),
                    _mm256_setr_pd(me(0).off, me(1).off, me(2).off, me(3).off),
                    _mm256_setr_pd(me(0).shear, me(1).shear, me(2).shear, me(3).shear),
                )
            };
            let ld = |k: usize, c: usize| _mm256_load_pd(blk.gw[k][c].as_ptr());
            let mut g = [[_mm256_setzero_pd(); 3]; 4];
            let sign = _mm256_set1_pd(-0.0);
            for c in 0..3 {
                g[1][c] = ld(0, c);
                g[2][c] = ld(1, c);
                g[3][c] = ld(2, c);
                let sum = _mm256_add_pd(_mm256_add_pd(g[1][c], g[2][c]), g[3][c]);
                g[0][c] = _mm256_xor_pd(sum, sign); // −sum, as the scalar negation
            }
            let mask = _mm256_setr_epi64x(-1, -1, -1, 0);
            // d[k][c]: component c of node k's dx, one element per lane
            let mut d = [[_mm256_setzero_pd(); 3]; 4];
            for (k, dk) in d.iter_mut().enumerate() {
                let v: [__m256d; 4] = std::array::from_fn(|l| {
                    let n = blk.idx[l][k] as usize;
                    _mm256_maskload_pd(dx.as_ptr().add(3 * n), mask)
                });
                let t0 = _mm256_unpacklo_pd(v[0], v[1]);
                let t1 = _mm256_unpackhi_pd(v[0], v[1]);
                let t2 = _mm256_unpacklo_pd(v[2], v[3]);
                let t3 = _mm256_unpackhi_pd(v[2], v[3]);
                dk[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
                dk[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
                dk[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
            }
            let (mul, add) = (|a, b| _mm256_mul_pd(a, b), |a, b| _mm256_add_pd(a, b));
            let mut st = [_mm256_setzero_pd(); 6];
            for k in 0..4 {
                let [gx, gy, gz] = g[k];
                let [ex, ey, ez] = d[k];
                st[0] = add(st[0], mul(gx, ex));
                st[1] = add(st[1], mul(gy, ey));
                st[2] = add(st[2], mul(gz, ez));
                st[3] = add(st[3], add(mul(gy, ex), mul(gx, ey)));
                st[4] = add(st[4], add(mul(gz, ey), mul(gy, ez)));
                st[5] = add(st[5], add(mul(gz, ex), mul(gx, ez)));
            }
            let t = [
                add(add(mul(diag, st[0]), mul(off, st[1])), mul(off, st[2])),
                add(add(mul(off, st[0]), mul(diag, st[1])), mul(off, st[2])),
                add(add(mul(off, st[0]), mul(off, st[1])), mul(diag, st[2])),
                mul(shear, st[3]),
                mul(shear, st[4]),
                mul(shear, st[5]),
            ];
            let kf = _mm256_set1_pd(k_factor);
            let zero = _mm256_setzero_pd();
            // f[k][l]: node k's force of lane l's element as (x, y, z, 0)
            let mut f = [[zero; 4]; 4];
            for k in 0..4 {
                let [gx, gy, gz] = g[k];
                let fx = mul(add(add(mul(gx, t[0]), mul(gy, t[3])), mul(gz, t[5])), kf);
                let fy = mul(add(add(mul(gy, t[1]), mul(gx, t[3])), mul(gz, t[4])), kf);
                let fz = mul(add(add(mul(gz, t[2]), mul(gy, t[4])), mul(gx, t[5])), kf);
                let a0 = _mm256_unpacklo_pd(fx, fy);
                let a1 = _mm256_unpackhi_pd(fx, fy);
                let a2 = _mm256_unpacklo_pd(fz, zero);
                let a3 = _mm256_unpackhi_pd(fz, zero);
                f[k][0] = _mm256_permute2f128_pd(a0, a2, 0x20);
                f[k][1] = _mm256_permute2f128_pd(a1, a3, 0x20);
                f[k][2] = _mm256_permute2f128_pd(a0, a2, 0x31);
                f[k][3] = _mm256_permute2f128_pd(a1, a3, 0x31);
            }
            for l in lanes {
                for (k, fk) in f.iter().enumerate() {
                    let p = df.as_mut_ptr().add(3 * (blk.idx[l][k] as usize - lo));
                    let v = fk[l];
                    _mm_storeu_pd(p, _mm_sub_pd(_mm_loadu_pd(p), _mm256_castpd256_pd128(v)));
                    let z = _mm256_extractf128_pd(v, 1);
                    _mm_store_sd(p.add(2), _mm_sub_sd(_mm_load_sd(p.add(2)), z));
                }
            }
        }
    }
}

/// The blocks of J_w M J_wᵀ for an element's world gradients `g`: its 4 diagonal blocks and,
/// when `want_pairs`, its 6 blocks above the diagonal (the matrix is symmetric).
#[inline(always)]
pub(super) fn element_blocks(
    g: &[[f64; 3]; 4],
    mat: &Material,
    want_pairs: bool,
    out: &mut crate::pairs::ElementBlocks<4, 6>,
) {
    for (v, d) in out.diag.iter_mut().enumerate() {
        *d = stiffness_block(&g[v], &g[v], mat);
    }
    if want_pairs {
        for (j, [v, w]) in [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
            .into_iter()
            .enumerate()
        {
            out.upper[j] = stiffness_block(&g[v], &g[w], mat);
        }
    }
}

/// The node pairs of `elems`, made on first use.
pub(super) fn pairs_of<'a>(
    pairs: &'a std::sync::OnceLock<NodePairs>,
    elems: &[Elem],
) -> &'a NodePairs {
    pairs.get_or_init(|| {
        let idx: Vec<[u32; 4]> = elems.iter().map(|el| el.idx).collect();
        NodePairs::new::<4, 6>(&idx)
    })
}

impl TetrahedronFemForceField {
    /// df −= k · K dx through the node-pair operator, summed first if it is not fresh. False
    /// (nothing done) when there is nothing to sum or the vectors do not cover the mesh.
    pub(super) fn node_op_product(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) -> bool {
        if self.elems.is_empty() {
            return false;
        }
        let pairs = pairs_of(&self.pairs, &self.elems);
        let op = &mut self.node_op;
        let matrix = op.matrix.get_or_insert_with(|| pairs.sym_matrix());
        let n = 3 * matrix.block_rows();
        if dx.len() < n || df.len() < n {
            return false;
        }
        if !op.fresh {
            // K_e = J_w M J_wᵀ from the world gradients of the last add_force (unscaled)
            let (world, mats) = (&self.world, &self.world_mats);
            let stride = usize::from(mats.len() > 1);
            pairs.assemble_sym::<4, 6>(matrix, |e, _, out| {
                element_blocks(&world.get(e).gradients(), &mats[e * stride], true, out);
            });
            op.fresh = true;
        }
        op.kdx.clear();
        op.kdx.resize(n, 0.0);
        // block rows over the worker threads, each into its own buffer, summed in a fixed order
        op.par.run(
            matrix.block_rows(),
            |r| matrix.row_nodes(r),
            &mut op.kdx,
            |rows, out, lo| matrix.mul_rows_add(dx, out, rows, lo),
        );
        for (d, t) in df[..n].iter_mut().zip(&op.kdx) {
            *d -= k_factor * t;
        }
        true
    }

    /// Whether the last stiffness product went through the node-pair operator.
    pub fn uses_node_operator(&self) -> bool {
        self.node_op.used
    }
}

#[cfg(test)]
mod tests;
