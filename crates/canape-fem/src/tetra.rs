//! TetrahedronFEMForceField and TetrahedralCorotationalFEMForceField.
//!
//! Linear tetrahedra with SOFA's formulation (Sofa/Component/SolidMechanics/FEM/Elastic/src/sofa/
//! component/solidmechanics/fem/elastic/TetrahedronFEMForceField.inl and
//! TetrahedralCorotationalFEMForceField.inl): a strain-displacement matrix J built from cofactors
//! (J = 6V·∇N), the material matrix divided by 36V, per-element rest frames, and for the
//! corotational methods a rotation recomputed in every `add_force` and reused by `add_dforce` and
//! assembly. Displacements are rest − current in the element frame, so F = J·M·Jᵀ·D is added.

use crate::common::{
    check_material, fem_inputs, force_field_data, polar_q, polar_q_all, stable_rotation, Material,
    ParallelLoop,
};
use crate::pairs::NodePairs;
use canape_core::component::{Component, ForceField};
use canape_core::data::{DataKind, DataTable};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{get3, Mat3, Vec3};

/// Corotational method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Small,
    Large,
    Polar,
    Svd,
}

/// Which SOFA class this instance stands for (their Data and small numeric details differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    TetrahedronFem,
    TetrahedralCorotational,
}

/// What the stiffness product (`add_dforce`, called at every CG iteration) reads: kept apart
/// from the rest shape so that the product streams 208 bytes per element instead of 448.
#[derive(Clone, Debug)]
struct Elem {
    idx: [u32; 4],
    /// Gradient coefficients (gx, gy, gz) of each node: J = 6V·∇N in the element frame.
    g: [[f64; 3]; 4],
    mat: Material,
    /// Rotation from the last add_force (world → element frame).
    rot: Mat3,
}

/// What the stiffness product reads at every CG iteration: the gradients turned into the world
/// frame by the element's current rotation. For an isotropic material K = Rᵀ J M Jᵀ R equals
/// J_w M J_wᵀ with J_w built from Rᵀ g (strain and stress rotate together), so the product
/// needs no rotation at all: 136 bytes and about 90 flops per element instead of 208 and 210.
///
/// Node 0's gradient is not stored (the four sum to zero) and the material is stored once when
/// all elements share it: 88 bytes per element, the product being memory-bound on large meshes.
#[derive(Clone, Debug)]
struct WorldElem {
    idx: [u32; 4],
    gw: [[f64; 3]; 3],
}

impl WorldElem {
    fn new(el: &Elem, small: bool) -> WorldElem {
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
    fn gradients(&self) -> [[f64; 3]; 4] {
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
struct WorldBlocks {
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
    fn clear(&mut self) {
        self.blocks.clear();
        self.len = 0;
        self.max_node = 0;
    }
    fn len(&self) -> usize {
        self.len
    }
    fn push(&mut self, w: WorldElem) {
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
    fn set_gradients(&mut self, e: usize, gw: &[[f64; 3]; 3]) {
        let (b, l) = (&mut self.blocks[e / 4], e % 4);
        for k in 0..3 {
            for c in 0..3 {
                b.gw[k][c][l] = gw[k][c];
            }
        }
    }
    #[inline(always)]
    fn idx(&self, e: usize) -> [u32; 4] {
        self.blocks[e / 4].idx[e % 4]
    }
    #[inline(always)]
    fn get(&self, e: usize) -> WorldElem {
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
fn dforce_range_dispatch(
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
fn element_blocks(
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
fn pairs_of<'a>(pairs: &'a std::sync::OnceLock<NodePairs>, elems: &[Elem]) -> &'a NodePairs {
    pairs.get_or_init(|| {
        let idx: Vec<[u32; 4]> = elems.iter().map(|el| el.idx).collect();
        NodePairs::new::<4, 6>(&idx)
    })
}

/// Rest shape of an element, read by `add_force` only.
#[derive(Clone, Debug)]
struct Shape {
    /// Rest positions in the element frame (large: relative to node 0).
    rest: [Vec3; 4],
    /// Initial rotation (world → element frame).
    r0: Mat3,
    /// Inverse of the rest edge matrix (svd method).
    a0_inv: Mat3,
}

/// Both tetrahedral FEM force fields (selected by [`Flavor`]).
#[derive(Clone)]
pub struct TetrahedronFemForceField {
    flavor: Flavor,
    data: DataTable,
    method: Method,
    elems: Vec<Elem>,
    /// Rest shapes, parallel to `elems`.
    shapes: Vec<Shape>,
    /// World-frame operators of the last `add_force`, parallel to `elems`.
    world: WorldBlocks,
    /// Materials of `world`: one per element, or a single one shared by all.
    world_mats: Vec<Material>,
    /// The stiffness product over worker threads.
    par: ParallelLoop,
    rayleigh: f64,
    /// Node pairs of the elements for assembly, made on the first assembly.
    pairs: std::sync::OnceLock<NodePairs>,
    /// The stiffness summed per node pair, for the products of one step (see
    /// [`NODE_OPERATOR_MIN_PRODUCTS`]).
    node_op: NodeOperator,
    /// The polar method's rotations of the current `add_force` (kept: no allocation per step).
    polar: Vec<Mat3>,
    /// SOFA's plasticity (`plasticMaxThreshold` > 0), with each element's plastic strain.
    plastic: Option<Plasticity>,
}

/// SOFA's strain plasticity (TetrahedronFEMForceField.inl `computeForce`): at each force
/// evaluation, when the elastic strain (total JᵀD minus the plastic one) exceeds the yield
/// threshold, `creep` times it moves into the plastic strain, which is then capped at the max
/// threshold; the force comes from the remaining elastic strain. The strains are SOFA's JᵀD
/// (unscaled strain-displacement coefficients), so the thresholds mean what they mean in SOFA.
#[derive(Clone, Debug)]
struct Plasticity {
    yield_threshold: f64,
    max_threshold: f64,
    creep: f64,
    strains: Vec<[f64; 6]>,
}

impl Plasticity {
    /// Update element `e`'s plastic strain from the total strain `s`; returns the elastic strain.
    fn elastic(&mut self, e: usize, s: [f64; 6]) -> [f64; 6] {
        let p = &mut self.strains[e];
        let el: [f64; 6] = std::array::from_fn(|k| s[k] - p[k]);
        if el.iter().map(|v| v * v).sum::<f64>() > self.yield_threshold * self.yield_threshold {
            for k in 0..6 {
                p[k] += self.creep * el[k];
            }
        }
        let n2: f64 = p.iter().map(|v| v * v).sum();
        if n2 > self.max_threshold * self.max_threshold {
            let f = self.max_threshold / n2.sqrt();
            p.iter_mut().for_each(|v| *v *= f);
        }
        std::array::from_fn(|k| s[k] - p[k])
    }
}

/// Products per `add_force` from which the stiffness products of a step go through the
/// stiffness summed per node pair ([`NodeOperator`]) instead of element by element: summing
/// costs about as much as six element-wise products, and a summed product about a quarter of
/// one on a tetrahedral mesh (about 1.3 symmetric 3×3 blocks per element, read in node order,
/// instead of gathering and scattering four nodes per element).
pub const NODE_OPERATOR_MIN_PRODUCTS: u32 = 8;

/// The element stiffnesses summed per node and per node pair (a symmetric block matrix),
/// rebuilt lazily after each `add_force` when the previous interval between two `add_force`
/// made at least [`NODE_OPERATOR_MIN_PRODUCTS`] products (an implicit step solved by CG; a step
/// solved by a direct solver makes one). Used only where the element loop would run on one
/// thread. A matrix-free solver still sees a product: only the force field's own storage of
/// its operator changes (results differ from the element-wise sums by round-off).
#[derive(Clone, Debug)]
struct NodeOperator {
    /// K = Σ J_w M J_wᵀ (not scaled by k), once built.
    matrix: Option<canape_core::matrix::SymBsr3>,
    /// Whether `matrix` holds the operator of the current rotations.
    fresh: bool,
    /// Products since the last `add_force`, and in the interval before it.
    products: u32,
    last_products: u32,
    /// Whether the last product went through `matrix`.
    used: bool,
    /// The product over worker threads, by block rows.
    par: ParallelLoop,
    /// K dx.
    kdx: Vec<f64>,
}

/// Block rows below which the node-pair product stays on one thread: a row (a node) carries
/// about as much work as four or five tetrahedra.
const NODE_OPERATOR_MIN_PARALLEL_ROWS: usize = crate::common::PARALLEL_MIN_ELEMENTS / 4;

impl Default for NodeOperator {
    fn default() -> Self {
        NodeOperator {
            matrix: None,
            fresh: false,
            products: 0,
            last_products: 0,
            used: false,
            par: ParallelLoop::with_min_items(NODE_OPERATOR_MIN_PARALLEL_ROWS),
            kdx: Vec::new(),
        }
    }
}

fn pd(p: &Vec3, q: &Vec3, r: &Vec3, s: usize, t: usize) -> f64 {
    q[s] * r[t] - q[t] * r[s] - p[s] * r[t] + p[t] * r[s] + p[s] * q[t] - p[t] * q[s]
}

/// SOFA's strain-displacement coefficients for points a, b, c, d.
pub fn gradients(a: &Vec3, b: &Vec3, c: &Vec3, d: &Vec3) -> [[f64; 3]; 4] {
    let tri = [
        (b, c, d, -1.0),
        (c, d, a, 1.0),
        (d, a, b, -1.0),
        (a, b, c, 1.0),
    ];
    let mut g = [[0.0; 3]; 4];
    for (k, (p, q, r, sg)) in tri.iter().enumerate() {
        g[k] = [
            sg * pd(p, q, r, 1, 2),
            -sg * pd(p, q, r, 0, 2),
            sg * pd(p, q, r, 0, 1),
        ];
    }
    g
}

/// F = J · M · Jᵀ · D for one element (12-vectors).
#[inline(always)]
fn kernel(g: &[[f64; 3]; 4], m: &Material, d: &[f64; 12]) -> [f64; 12] {
    kernel_with(g, m, d, |s| s)
}

/// [`kernel`] with the strain passed through `strain` (plasticity) before the material.
#[inline(always)]
fn kernel_with(
    g: &[[f64; 3]; 4],
    m: &Material,
    d: &[f64; 12],
    strain: impl FnOnce([f64; 6]) -> [f64; 6],
) -> [f64; 12] {
    let mut s = [0.0; 6];
    for k in 0..4 {
        let [gx, gy, gz] = g[k];
        let (dx, dy, dz) = (d[3 * k], d[3 * k + 1], d[3 * k + 2]);
        s[0] += gx * dx;
        s[1] += gy * dy;
        s[2] += gz * dz;
        s[3] += gy * dx + gx * dy;
        s[4] += gz * dy + gy * dz;
        s[5] += gz * dx + gx * dz;
    }
    let s = strain(s);
    let t = m.apply(&s);
    let mut f = [0.0; 12];
    for k in 0..4 {
        let [gx, gy, gz] = g[k];
        f[3 * k] = gx * t[0] + gy * t[3] + gz * t[5];
        f[3 * k + 1] = gy * t[1] + gx * t[3] + gz * t[4];
        f[3 * k + 2] = gz * t[2] + gy * t[4] + gx * t[5];
    }
    f
}

/// Block (v, w) of J M Jᵀ for node gradients `a` (node v) and `b` (node w): the force on v per
/// displacement of w, M isotropic in Voigt form (engineering shear strains, as in `kernel`).
#[inline(always)]
fn stiffness_block(a: &[f64; 3], b: &[f64; 3], m: &Material) -> Mat3 {
    let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    Mat3::from_fn(|i, j| {
        if i == j {
            m.diag * (a[i] * b[i]) + m.shear * (dot - a[i] * b[i])
        } else {
            m.off * (a[i] * b[j]) + m.shear * (a[j] * b[i])
        }
    })
}

/// Triangle frame of SOFA's "large" method: rows x = (b−a)/|b−a|, z = x × (c−a) normalised, y = z × x.
pub fn rotation_large(a: &Vec3, b: &Vec3, c: &Vec3) -> Mat3 {
    let ex = (b - a).normalize();
    let ey = c - a;
    let ez = ex.cross(&ey).normalize();
    let ey = ez.cross(&ex);
    Mat3::from_rows(&[ex.transpose(), ey.transpose(), ez.transpose()])
}

fn edge_matrix(p: &[Vec3; 4]) -> Mat3 {
    Mat3::from_rows(&[
        (p[1] - p[0]).transpose(),
        (p[2] - p[0]).transpose(),
        (p[3] - p[0]).transpose(),
    ])
}

impl TetrahedronFemForceField {
    pub fn new(flavor: Flavor) -> Self {
        let mut data = force_field_data(DataTable::new());
        data = match flavor {
            Flavor::TetrahedronFem => data
                .with("youngModulus", DataKind::Reals(0), "5000", "Young's modulus in Hooke's law (one value, or one per element)")
                .with("poissonRatio", DataKind::Reals(0), "0.45", "Poisson's ratio in Hooke's law (one value, or one per element)")
                .with("method", DataKind::Str, "large", "\"small\", \"large\" (by QR), \"polar\" or \"svd\" displacements")
                .with("initialPoints", DataKind::Reals(3), "", "Initial Position")
                .with("localStiffnessFactor", DataKind::Reals(0), "", "Allow specification of different stiffness per element")
                .with("updateStiffnessMatrix", DataKind::Bool, "0", "")
                .with("computeGlobalMatrix", DataKind::Bool, "0", "")
                .alias(&["assembling"])
                .with("plasticMaxThreshold", DataKind::Real, "0", "Plastic Max Threshold (2-norm of the strain)")
                .with("plasticYieldThreshold", DataKind::Real, "0.0001", "Plastic Yield Threshold (2-norm of the strain)")
                .with("plasticCreep", DataKind::Real, "0.9", "Plastic Creep Factor * (1 - Young's modulus)")
                .with("gatherPt", DataKind::Str, " ", "number of dof accumulated per threads during the gather operation (Only use in GPU version)")
                .with("gatherBsize", DataKind::Str, " ", "number of dof accumulated per threads during the gather operation (Only use in GPU version)")
                .with("drawHeterogeneousTetra", DataKind::Bool, "0", "Draw Heterogeneous Tetra in different color")
                .with("computeVonMisesStress", DataKind::Int, "0", "compute and display von Mises stress: 0: no computations, 1: using corotational strain, 2: using full Green strain. Set listening=1")
                .with("vonMisesPerElement", DataKind::Reals(0), "", "von Mises Stress per element")
                .with("vonMisesPerNode", DataKind::Reals(0), "", "von Mises Stress per node")
                .with("vonMisesStressColors", DataKind::Reals(4), "", "Vector of colors describing the VonMises stress")
                .with("showStressColorMap", DataKind::Str, "Blue to Red", "Color map used to show stress values")
                .with("showStressAlpha", DataKind::Real, "1", "Alpha for vonMises visualisation")
                .with("showVonMisesStressPerNode", DataKind::Bool, "0", "draw points showing vonMises stress interpolated in nodes")
                .with("showVonMisesStressPerNodeColorMap", DataKind::Bool, "0", "draw elements showing vonMises stress interpolated in nodes")
                .with("showVonMisesStressPerElement", DataKind::Bool, "0", "draw triangles showing vonMises stress interpolated in elements")
                .with("showElementGapScale", DataKind::Real, "0.333", "draw gap between elements (when showWireFrame is disabled) [0,1]: 0: no gap, 1: no element")
                .with("updateStiffness", DataKind::Bool, "0", "update structures (precomputed in init) using stiffness parameters in each iteration (set listening=1)"),
            Flavor::TetrahedralCorotational => data
                .with("youngModulus", DataKind::Real, "5000", "Young modulus in Hooke's law")
                .with("poissonRatio", DataKind::Real, "0.45", "Poisson ratio in Hooke's law")
                .with("method", DataKind::Str, "large", "\"small\", \"large\" (by QR) or \"polar\" displacements")
                .with("localStiffnessFactor", DataKind::Reals(0), "", "Allow specification of different stiffness per element")
                .with("updateStiffnessMatrix", DataKind::Bool, "0", "")
                .with("computeGlobalMatrix", DataKind::Bool, "0", "")
                .alias(&["assembling"])
                .with("computeVonMisesStress", DataKind::Int, "0", "compute and display von Mises stress (display only in Canapé)")
                .with("drawing", DataKind::Bool, "1", "draw the forcefield if true")
                .with("drawColor1", DataKind::Reals(4), "0 0 1 1", "draw color for faces 1")
                .with("drawColor2", DataKind::Reals(4), "0 0.5 1 1", "draw color for faces 2")
                .with("drawColor3", DataKind::Reals(4), "0 1 1 1", "draw color for faces 3")
                .with("drawColor4", DataKind::Reals(4), "0.5 1 1 1", "draw color for faces 4"),
        };
        TetrahedronFemForceField {
            flavor,
            data,
            method: Method::Large,
            elems: Vec::new(),
            shapes: Vec::new(),
            world: WorldBlocks::default(),
            world_mats: Vec::new(),
            par: ParallelLoop::default(),
            rayleigh: 0.0,
            pairs: std::sync::OnceLock::new(),
            node_op: NodeOperator::default(),
            polar: Vec::new(),
            plastic: None,
        }
    }

    /// Read `method` from Data; an unknown name selects `large` (as SOFA) and is returned as error.
    pub fn set_method_from_data(&mut self) -> Result<(), String> {
        let m = self.data.str("method").to_string();
        let (method, ok) = match (m.as_str(), self.flavor) {
            ("small", _) => (Method::Small, true),
            ("large", _) => (Method::Large, true),
            ("polar", _) => (Method::Polar, true),
            ("svd", Flavor::TetrahedronFem) => (Method::Svd, true),
            _ => (Method::Large, false),
        };
        self.method = method;
        if ok {
            Ok(())
        } else {
            Err(m)
        }
    }

    pub fn method(&self) -> Method {
        self.method
    }

    pub fn nb_elements(&self) -> usize {
        self.elems.len()
    }

    fn young_list(&self) -> Vec<f64> {
        match self.data.value("youngModulus") {
            Some(canape_core::data::Value::Reals(v)) if !v.is_empty() => v.clone(),
            Some(canape_core::data::Value::Real(r)) => vec![*r],
            _ => vec![5000.0],
        }
    }

    fn nu_list(&self) -> Vec<f64> {
        match self.data.value("poissonRatio") {
            Some(canape_core::data::Value::Reals(v)) if !v.is_empty() => v.clone(),
            Some(canape_core::data::Value::Real(r)) => vec![*r],
            _ => vec![0.45],
        }
    }

    /// Set up elements from rest positions and tetrahedra (used by init and tests).
    pub fn setup(&mut self, rest: &[f64], tets: &[[u32; 4]]) -> Vec<String> {
        let mut warnings = Vec::new();
        let young = self.young_list();
        let nu = self.nu_list();
        self.elems.clear();
        self.shapes.clear();
        self.world.clear();
        self.world_mats.clear();
        self.par.reset();
        self.pairs = std::sync::OnceLock::new();
        self.node_op = NodeOperator::default();
        let mut degenerate = 0;
        for (e, t) in tets.iter().enumerate() {
            let p = [
                get3(rest, t[0] as usize),
                get3(rest, t[1] as usize),
                get3(rest, t[2] as usize),
                get3(rest, t[3] as usize),
            ];
            let v6 = (p[1] - p[0])
                .cross(&(p[2] - p[0]))
                .dot(&(p[3] - p[0]))
                .abs();
            let (ye, ne) = (
                *young.get(e).unwrap_or(&young[0]),
                *nu.get(e).unwrap_or(&nu[0]),
            );
            let div = match self.flavor {
                Flavor::TetrahedronFem => (v6 / 6.0) * 36.0,
                Flavor::TetrahedralCorotational => v6 * 6.0,
            };
            if v6 == 0.0 || !v6.is_finite() {
                degenerate += 1;
                continue;
            }
            let mat = Material::new(ye, ne, div);
            let mut el = Elem {
                idx: *t,
                g: [[0.0; 3]; 4],
                mat,
                rot: Mat3::identity(),
            };
            let mut sh = Shape {
                rest: p,
                r0: Mat3::identity(),
                a0_inv: Mat3::identity(),
            };
            match self.method {
                Method::Small => {
                    el.g = gradients(&p[0], &p[1], &p[2], &p[3]);
                }
                Method::Large => {
                    let r = rotation_large(&p[0], &p[1], &p[2]);
                    let mut q = [r * p[0], r * p[1], r * p[2], r * p[3]];
                    for k in 1..4 {
                        q[k] -= q[0];
                    }
                    q[0] = Vec3::zeros();
                    el.g = gradients(&q[0], &q[1], &q[2], &q[3]);
                    sh.rest = q;
                    sh.r0 = r;
                    el.rot = r;
                }
                Method::Polar | Method::Svd => {
                    let a0 = edge_matrix(&p);
                    let r = polar_q(&a0);
                    let q = [r * p[0], r * p[1], r * p[2], r * p[3]];
                    el.g = gradients(&q[0], &q[1], &q[2], &q[3]);
                    sh.rest = q;
                    sh.r0 = r;
                    el.rot = r;
                    sh.a0_inv = a0.try_inverse().unwrap_or_else(Mat3::identity);
                }
            }
            self.world
                .push(WorldElem::new(&el, self.method == Method::Small));
            self.elems.push(el);
            self.shapes.push(sh);
        }
        let first = self.elems.first().map(|e| e.mat);
        self.world_mats = match first {
            Some(m0) if self.elems.iter().all(|e| e.mat == m0) => vec![m0],
            _ => self.elems.iter().map(|e| e.mat).collect(),
        };
        if degenerate > 0 {
            warnings.push(format!(
                "{degenerate} tetrahedra have zero rest volume: they are left out"
            ));
        }
        warnings
    }
}

impl Component for TetrahedronFemForceField {
    fn class_name(&self) -> &'static str {
        match self.flavor {
            Flavor::TetrahedronFem => "TetrahedronFEMForceField",
            Flavor::TetrahedralCorotational => "TetrahedralCorotationalFEMForceField",
        }
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        if let Err(other) = self.set_method_from_data() {
            ctx.warn(format!(
                "unknown method '{other}' for {}; using 'large' as SOFA does",
                self.class_name()
            ));
        }
        if self.data.bool("computeGlobalMatrix") {
            ctx.warn("computeGlobalMatrix/assembling is not supported: the element-wise formulation is used (same forces)");
        }
        if !self.data.reals("localStiffnessFactor").is_empty() {
            ctx.warn("localStiffnessFactor is not supported yet and is ignored");
        }
        self.plastic = None;
        if self.data.field("plasticMaxThreshold").is_some() {
            let max = self.data.real("plasticMaxThreshold");
            if max > 0.0 {
                self.plastic = Some(Plasticity {
                    yield_threshold: self.data.real("plasticYieldThreshold"),
                    max_threshold: max,
                    creep: self.data.real("plasticCreep"),
                    strains: Vec::new(),
                });
            }
        }
        if self.data.bool("updateStiffnessMatrix") {
            ctx.warn("updateStiffnessMatrix is not supported yet and is ignored");
        }
        self.rayleigh = self.data.real("rayleighStiffness");
        self.elems.clear();
        self.shapes.clear();
        self.world.clear();
        self.world_mats.clear();
        self.par.reset();
        self.pairs = std::sync::OnceLock::new();
        self.node_op = NodeOperator::default();
        if let Some(m) = check_material(&self.young_list(), &self.nu_list()) {
            ctx.error(m);
            return;
        }
        let has = |m: &canape_core::mesh::Mesh| !m.tetrahedra.is_empty() || !m.hexahedra.is_empty();
        let Some((rest, mesh)) = fem_inputs(ctx, &self.data, has, "tetrahedra (or hexahedra)")
        else {
            return;
        };
        let tets = if mesh.tetrahedra.is_empty() {
            let grid = ctx.topology_where(has).and_then(|t| t.grid_size());
            ctx.warn("each hexahedron has been split into 6 tetrahedra (as SOFA does)");
            split_hexahedra(&mesh.hexahedra, grid)
        } else {
            mesh.tetrahedra.clone()
        };
        for w in self.setup(&rest, &tets) {
            ctx.warn(w);
        }
    }
}

/// SOFA's TetrahedronFEMForceField on a hexahedral topology (TetrahedronFEMForceField.inl,
/// init): each hexahedron split into 6 tetrahedra after mirroring its vertices by its grid
/// position (even x, odd y, odd z cells; a plain mesh counts as a 2 × 1 grid), always with the
/// same six-tetrahedron list.
pub fn split_hexahedra(hexa: &[[u32; 8]], grid: Option<[usize; 3]>) -> Vec<[u32; 4]> {
    let (nx, ny) = match grid {
        Some(n) => (n[0].saturating_sub(1).max(1), n[1].saturating_sub(1).max(1)),
        None => (2, 1),
    };
    let mut out = Vec::with_capacity(hexa.len() * 6);
    for (i, h) in hexa.iter().enumerate() {
        let mut c = *h;
        if (i % nx) % 2 == 0 {
            c.swap(0, 1);
            c.swap(3, 2);
            c.swap(4, 5);
            c.swap(7, 6);
        }
        if ((i / nx) % ny) % 2 == 1 {
            c.swap(0, 3);
            c.swap(1, 2);
            c.swap(4, 7);
            c.swap(5, 6);
        }
        if (i / (nx * ny)) % 2 == 1 {
            c.swap(0, 4);
            c.swap(1, 5);
            c.swap(2, 6);
            c.swap(3, 7);
        }
        out.extend_from_slice(&canape_core::mesh::hexa_to_tetras(c, false));
    }
    out
}

impl ForceField for TetrahedronFemForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let method = self.method;
        let op = &mut self.node_op;
        op.last_products = std::mem::take(&mut op.products);
        // the small method's operator does not depend on the positions
        op.fresh &= method == Method::Small;
        if matches!(method, Method::Polar | Method::Svd) {
            // the polar rotations first, four elements at a time (independent iterations side
            // by side; svd uses them for the elements that are not nearly flat or inverted)
            let elems = &self.elems;
            polar_q_all(
                elems.len(),
                |e| edge_matrix(&elems[e].idx.map(|i| get3(x, i as usize))),
                &mut self.polar,
            );
        }
        let polar = &self.polar;
        let plastic = &mut self.plastic;
        if let Some(p) = plastic.as_mut() {
            p.strains.resize(self.elems.len(), [0.0; 6]);
        }
        for (e, (el, sh)) in self.elems.iter_mut().zip(&self.shapes).enumerate() {
            let [a, b, c, d] = el.idx.map(|i| i as usize);
            let p = [get3(x, a), get3(x, b), get3(x, c), get3(x, d)];
            let mut dd = [0.0; 12];
            let rot = match method {
                Method::Small => {
                    for (k, &n) in [b, c, d].iter().enumerate() {
                        let pk = p[k + 1];
                        for i in 0..3 {
                            let x0 = sh.rest[k + 1][i] - sh.rest[0][i];
                            dd[3 * (k + 1) + i] = x0 - pk[i] + p[0][i];
                        }
                        let _ = n;
                    }
                    let fe = match plastic.as_mut() {
                        Some(p) => kernel_with(&el.g, &el.mat, &dd, |s| p.elastic(e, s)),
                        None => kernel(&el.g, &el.mat, &dd),
                    };
                    for (k, &n) in [a, b, c, d].iter().enumerate() {
                        for i in 0..3 {
                            f[3 * n + i] += fe[3 * k + i];
                        }
                    }
                    continue;
                }
                Method::Large => {
                    let mut r = rotation_large(&p[0], &p[1], &p[2]);
                    if !r.iter().all(|v| v.is_finite()) {
                        // collapsed edge: keep the last valid frame rather than spreading NaN
                        r = el.rot;
                    }
                    let mut q = [r * p[0], r * p[1], r * p[2], r * p[3]];
                    q[1].x -= q[0].x;
                    q[2].x -= q[0].x;
                    q[2].y -= q[0].y;
                    q[3] -= q[0];
                    let rr = &sh.rest;
                    dd = [
                        0.0,
                        0.0,
                        0.0,
                        rr[1].x - q[1].x,
                        0.0,
                        0.0,
                        rr[2].x - q[2].x,
                        rr[2].y - q[2].y,
                        0.0,
                        rr[3].x - q[3].x,
                        rr[3].y - q[3].y,
                        rr[3].z - q[3].z,
                    ];
                    r
                }
                Method::Polar | Method::Svd => {
                    // polar[e]: the polar factor of edge_matrix(&p), computed before the loop
                    let r = if method == Method::Svd {
                        let fm = edge_matrix(&p) * sh.a0_inv;
                        if fm.determinant() < 1e-6 {
                            stable_rotation(&fm) * sh.r0
                        } else {
                            polar[e]
                        }
                    } else {
                        polar[e]
                    };
                    for k in 0..4 {
                        let q = r * p[k];
                        for i in 0..3 {
                            dd[3 * k + i] = sh.rest[k][i] - q[i];
                        }
                    }
                    r
                }
            };
            el.rot = rot;
            self.world.set_gradients(e, &WorldElem::new(el, false).gw);
            let fe = match plastic.as_mut() {
                Some(p) => kernel_with(&el.g, &el.mat, &dd, |s| p.elastic(e, s)),
                None => kernel(&el.g, &el.mat, &dd),
            };
            let rt = rot.transpose();
            for (k, &n) in [a, b, c, d].iter().enumerate() {
                let fk = rt * Vec3::new(fe[3 * k], fe[3 * k + 1], fe[3 * k + 2]);
                f[3 * n] += fk.x;
                f[3 * n + 1] += fk.y;
                f[3 * n + 2] += fk.z;
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        self.node_op.products += 1;
        self.node_op.used = self.node_op.last_products >= NODE_OPERATOR_MIN_PRODUCTS
            && self.node_op_product(dx, df, k_factor);
        if self.node_op.used {
            return;
        }
        let (world, mats) = (&self.world, &self.world_mats);
        self.par.run(
            world.len(),
            |e| world.idx(e),
            df,
            |range, out, lo| dforce_range_dispatch(world, mats, range, dx, out, lo, k_factor),
        );
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        // −k Rᵀ J M Jᵀ R = −k J_w M J_wᵀ (the world gradients the product uses), block by block
        let (world, mats) = (&self.world, &self.world_mats);
        let stride = usize::from(mats.len() > 1);
        pairs_of(&self.pairs, &self.elems).assemble::<4, 6>(m, offset, |e, want_pairs, out| {
            let el = &mats[e * stride];
            let mat = Material {
                diag: -k_factor * el.diag,
                off: -k_factor * el.off,
                shear: -k_factor * el.shear,
            };
            element_blocks(&world.get(e).gradients(), &mat, want_pairs, out);
        });
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }

    fn nodal_scalars(&self, x: &[f64]) -> Option<Vec<f64>> {
        let wanted = self.data.int("computeVonMisesStress") > 0
            && (self.data.bool("showVonMisesStressPerNodeColorMap")
                || self.data.bool("showVonMisesStressPerNode"));
        wanted.then(|| self.von_mises_per_node(x))
    }

    fn nodal_scalar_floor(&self) -> f64 {
        // a stress of 1e-9·E is a strain of 1e-9: round-off of the rest shape, not a load
        let e = self
            .data
            .reals("youngModulus")
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        1e-9 * e
    }
}

impl TetrahedronFemForceField {
    /// df −= k · K dx through the node-pair operator, summed first if it is not fresh. False
    /// (nothing done) when there is nothing to sum or the vectors do not cover the mesh.
    fn node_op_product(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) -> bool {
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

    /// Von Mises stress per element from the corotational (small) strain in the element frame of
    /// the last `add_force`, as SOFA's `computeVonMisesStress=1` (TetrahedronFEMForceField.inl);
    /// Canapé also uses it for `=2` (full Green strain), which only differs at large strains.
    pub fn von_mises_per_element(&self, x: &[f64]) -> Vec<f64> {
        self.elems
            .iter()
            .zip(&self.shapes)
            .map(|(el, sh)| {
                let p: [Vec3; 4] = el.idx.map(|i| get3(x, i as usize));
                // ∇x applied to x gives 1: this normalises the scaled gradients (6V, with sign)
                let norm: f64 = (0..4).map(|k| el.g[k][0] * sh.rest[k][0]).sum();
                if norm == 0.0 || !norm.is_finite() {
                    return 0.0;
                }
                let mut e = [0.0; 6];
                for k in 1..4 {
                    let u = el.rot * (p[k] - p[0]) - (sh.rest[k] - sh.rest[0]);
                    let [gx, gy, gz] = el.g[k];
                    e[0] += gx * u.x;
                    e[1] += gy * u.y;
                    e[2] += gz * u.z;
                    e[3] += gy * u.x + gx * u.y;
                    e[4] += gz * u.y + gy * u.z;
                    e[5] += gz * u.x + gx * u.z;
                }
                // node 0's gradient is minus the sum of the others: its term is zero for u₀ = 0
                let e = e.map(|v| v / norm);
                // the stored material is divided by 6·|6V|: undo it for stresses in scene units
                let s = el.mat.apply(&e).map(|v| v * 6.0 * norm.abs());
                (s[0] * s[0] + s[1] * s[1] + s[2] * s[2] - s[0] * s[1] - s[1] * s[2] - s[2] * s[0]
                    + 3.0 * (s[3] * s[3] + s[4] * s[4] + s[5] * s[5]))
                    .max(0.0)
                    .sqrt()
            })
            .collect()
    }

    /// Element von Mises stresses averaged at the nodes.
    pub fn von_mises_per_node(&self, x: &[f64]) -> Vec<f64> {
        let n = x.len() / 3;
        let mut sum = vec![0.0; n];
        let mut count = vec![0u32; n];
        for (el, vm) in self.elems.iter().zip(self.von_mises_per_element(x)) {
            for &i in &el.idx {
                sum[i as usize] += vm;
                count[i as usize] += 1;
            }
        }
        sum.iter()
            .zip(&count)
            .map(|(s, &c)| if c > 0 { s / c as f64 } else { 0.0 })
            .collect()
    }
}

#[cfg(test)]
mod simd_tests {
    use super::*;

    /// The AVX2 product gives the scalar loop's bits, on whole and partial ranges, with one
    /// shared material and with one material per element.
    #[test]
    fn dispatched_product_is_bit_identical() {
        let mut seed = 99u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let nodes = 12;
        let mut world = WorldBlocks::default();
        for e in 0..11u32 {
            world.push(WorldElem {
                idx: [e % 12, (e + 1) % 12, (e + 5) % 12, (e + 7) % 12],
                gw: std::array::from_fn(|_| std::array::from_fn(|_| rnd())),
            });
        }
        let shared = vec![Material::new(1000.0, 0.3, 1.0)];
        let per: Vec<Material> = (0..11)
            .map(|e| Material::new(500.0 + 10.0 * e as f64, 0.25, 1.0))
            .collect();
        let dx: Vec<f64> = (0..3 * nodes).map(|_| rnd()).collect();
        for mats in [&shared, &per] {
            for range in [0..11, 3..9, 5..6] {
                let mut a = vec![0.0; 3 * nodes];
                let mut b = vec![0.0; 3 * nodes];
                dforce_range(&world, mats, range.clone(), &dx, &mut a, 0, -0.3);
                dforce_range_dispatch(&world, mats, range, &dx, &mut b, 0, -0.3);
                assert!(a.iter().any(|v| *v != 0.0));
                assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
            }
            // a thread's part: elements 2..5 touch nodes 2..=11 only, into a buffer from node 2
            // (the node checks then run block by block)
            let mut a = vec![0.0; 3 * (nodes - 2)];
            let mut b = vec![0.0; 3 * (nodes - 2)];
            dforce_range(&world, mats, 2..5, &dx, &mut a, 2, -0.3);
            dforce_range_dispatch(&world, mats, 2..5, &dx, &mut b, 2, -0.3);
            assert!(a.iter().any(|v| *v != 0.0));
            assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        }
    }
}
