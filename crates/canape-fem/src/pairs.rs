//! Assembly by node pairs: element stiffness blocks are summed per node (diagonal blocks) and per
//! pair of nodes sharing an element (off-diagonal blocks) in the force field's own buffers, and
//! each sum goes to the matrix sink once, instead of every element handing the sink its N²
//! blocks one dynamic call at a time.
//!
//! The element → pair map is built once from the connectivity (pairs sorted, so the order of the
//! sums and of the sink calls is fixed: results are bit-identical run to run). Sums run in
//! element order; only round-off differs from adding element blocks straight into the matrix.

use canape_core::matrix::{BlockPart, MatrixSink, SymBsr3};
use canape_types::Mat3;
use std::sync::Mutex;

/// Marks a local pair whose two nodes are the same mesh node (a degenerate element): its block
/// and its transpose go to that node's diagonal block.
const SAME_NODE: u32 = 1 << 31;
/// Marks a local pair (v, w) whose mesh nodes come in the other order (node of v > node of w):
/// the pair's sum K_pq receives the transpose of the element's block.
const FLIPPED: u32 = 1 << 30;

/// Per-element pair indices and the scratch sums for one connectivity.
///
/// Sums are kept in *slot* order: for each node ascending, its diagonal block and then its
/// pairs (p, q > p) by ascending q — the block order of a [`SymBsr3`] over the mesh nodes, so
/// that the same sums serve a sink and [`NodePairs::assemble_sym`].
#[derive(Debug, Default)]
pub struct NodePairs {
    /// Mesh nodes used by the elements, ascending.
    nodes: Vec<u32>,
    /// Node pairs (p, q), p < q, that share an element, ascending.
    pairs: Vec<[u32; 2]>,
    /// Per element and local node: the slot of its diagonal block.
    elem_nodes: Vec<u32>,
    /// Per element and local pair (v, w), v < w, in the order (0,1), (0,2), …, (1,2), …: the
    /// slot of its pair (| FLIPPED when node of v > node of w), or SAME_NODE | its node's slot.
    elem_pairs: Vec<u32>,
    /// Per slot: its block's nodes [p, q] (p = q for a diagonal block).
    slot_nodes: Vec<[u32; 2]>,
    /// Sums, one block per slot.
    scratch: Mutex<Vec<Mat3>>,
}

/// A clone gets its own (empty) sums.
impl Clone for NodePairs {
    fn clone(&self) -> Self {
        NodePairs {
            nodes: self.nodes.clone(),
            pairs: self.pairs.clone(),
            elem_nodes: self.elem_nodes.clone(),
            elem_pairs: self.elem_pairs.clone(),
            slot_nodes: self.slot_nodes.clone(),
            scratch: Mutex::new(Vec::new()),
        }
    }
}

/// The blocks of one element: `diag[v]` = K_vv, `upper[j]` = K_vw for the j-th local pair
/// v < w (K_wv is its transpose).
pub struct ElementBlocks<const N: usize, const P: usize> {
    pub diag: [Mat3; N],
    pub upper: [Mat3; P],
}

impl NodePairs {
    /// Index the node pairs of `elems` (elements of N nodes, P = N(N−1)/2 local pairs).
    pub fn new<const N: usize, const P: usize>(elems: &[[u32; N]]) -> Self {
        assert_eq!(P, N * (N - 1) / 2, "P must be the number of local pairs");
        let mut nodes: Vec<u32> = elems.iter().flatten().copied().collect();
        nodes.sort_unstable();
        nodes.dedup();
        let node_index = |n: u32| nodes.binary_search(&n).expect("node of an element") as u32;
        let mut pairs: Vec<[u32; 2]> = elems
            .iter()
            .flat_map(|e| local_pairs::<N>().map(move |(v, w)| [e[v].min(e[w]), e[v].max(e[w])]))
            .filter(|[p, q]| p != q)
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        // slots: each node's diagonal block, then its pairs (pairs are sorted by first node)
        let (mut node_slot, mut pair_slot) =
            (Vec::with_capacity(nodes.len()), vec![0; pairs.len()]);
        let mut j = 0;
        for &n in &nodes {
            node_slot.push((node_slot.len() + j) as u32);
            while j < pairs.len() && pairs[j][0] == n {
                pair_slot[j] = (node_slot.len() + j) as u32;
                j += 1;
            }
        }
        let slot_of = |n: u32| node_slot[node_index(n) as usize];
        let mut elem_nodes = Vec::with_capacity(elems.len() * N);
        let mut elem_pairs = Vec::with_capacity(elems.len() * P);
        for e in elems {
            elem_nodes.extend(e.iter().map(|&n| slot_of(n)));
            for (v, w) in local_pairs::<N>() {
                let (p, q) = (e[v].min(e[w]), e[v].max(e[w]));
                let flipped = if e[v] > e[w] { FLIPPED } else { 0 };
                elem_pairs.push(if p == q {
                    SAME_NODE | slot_of(p)
                } else {
                    let j = pairs.binary_search(&[p, q]).expect("pair of an element");
                    flipped | pair_slot[j]
                });
            }
        }
        let mut slot_nodes = vec![[0u32; 2]; nodes.len() + pairs.len()];
        for (&n, &s) in nodes.iter().zip(&node_slot) {
            slot_nodes[s as usize] = [n, n];
        }
        for (&pq, &s) in pairs.iter().zip(&pair_slot) {
            slot_nodes[s as usize] = pq;
        }
        NodePairs {
            slot_nodes,
            nodes,
            pairs,
            elem_nodes,
            elem_pairs,
            scratch: Mutex::new(Vec::new()),
        }
    }

    /// Number of distinct node pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether no element has two distinct nodes.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Hand the blocks `element(e, want_pairs, out)` writes for every element e (indices as given
    /// to `new`) to `add(slot, block, transposed)`, element by element in element order: the
    /// slot's sum receives the block, or its transpose when `transposed`. `want_pairs` false:
    /// the pair blocks are neither asked for nor handed on.
    fn sum<const N: usize, const P: usize>(
        &self,
        want_pairs: bool,
        mut element: impl FnMut(usize, bool, &mut ElementBlocks<N, P>),
        mut add: impl FnMut(usize, &Mat3, bool),
    ) {
        let n_elems = self.elem_nodes.len() / N.max(1);
        let mut blocks = ElementBlocks {
            diag: [Mat3::zeros(); N],
            upper: [Mat3::zeros(); P],
        };
        for e in 0..n_elems {
            element(e, want_pairs, &mut blocks);
            let en = &self.elem_nodes[N * e..N * e + N];
            for (v, b) in blocks.diag.iter().enumerate() {
                add(en[v] as usize, b, false);
            }
            if !want_pairs {
                continue;
            }
            let ep = &self.elem_pairs[P * e..P * e + P];
            for (&id, b) in ep.iter().zip(&blocks.upper) {
                if id & SAME_NODE != 0 {
                    let s = (id & !SAME_NODE) as usize;
                    add(s, b, false);
                    add(s, b, true);
                } else {
                    add((id & !FLIPPED) as usize, b, id & FLIPPED != 0);
                }
            }
        }
    }

    fn lock_scratch(&self) -> std::sync::MutexGuard<'_, Vec<Mat3>> {
        self.scratch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sum the blocks `element(e, want_pairs, out)` writes for every element e (indices as given
    /// to `new`) and add the sums to `m`, state DOFs starting at `offset`. `want_pairs` is false
    /// when the sink keeps no off-diagonal block (then `upper` may be left as it is: it is not
    /// read). `element` must overwrite every block it is asked for.
    pub fn assemble<const N: usize, const P: usize>(
        &self,
        m: &mut dyn MatrixSink,
        offset: usize,
        mut element: impl FnMut(usize, bool, &mut ElementBlocks<N, P>),
    ) {
        let mut blocks = ElementBlocks {
            diag: [Mat3::zeros(); N],
            upper: [Mat3::zeros(); P],
        };
        self.assemble_direct::<N, P>(m, offset, |e, want_pairs, adder| {
            element(e, want_pairs, &mut blocks);
            for (v, b) in blocks.diag.iter().enumerate() {
                adder.add(v, v, |i, j| b[(i, j)]);
            }
            if want_pairs {
                for ((v, w), b) in local_pairs::<N>().zip(&blocks.upper) {
                    adder.add(v, w, |i, j| b[(i, j)]);
                }
            }
        });
    }

    /// [`NodePairs::assemble`] with the element's blocks added straight into the sums:
    /// `element(e, want_pairs, adder)` calls `adder.add(v, v, f)` for each local node v, then,
    /// when `want_pairs`, `adder.add(v, w, f)` for each local pair v < w in [`local_pairs`]
    /// order, f(i, j) being entry (i, j) of the block K_vw (no copy of the element's blocks).
    pub fn assemble_direct<const N: usize, const P: usize>(
        &self,
        m: &mut dyn MatrixSink,
        offset: usize,
        mut element: impl FnMut(usize, bool, &mut BlockAdder<'_, N, P>),
    ) {
        let at = |n: u32| offset + 3 * n as usize;
        let want_pairs = self
            .pairs
            .iter()
            .any(|&[p, q]| m.wants(at(p), at(q)) || m.wants(at(q), at(p)));
        let mut sums = self.lock_scratch();
        sums.clear();
        sums.resize(self.nodes.len() + self.pairs.len(), Mat3::zeros());
        let n_elems = self.elem_nodes.len() / N.max(1);
        for e in 0..n_elems {
            let mut adder = BlockAdder {
                sums: &mut sums,
                nodes: &self.elem_nodes[N * e..N * e + N],
                pairs: &self.elem_pairs[P * e..P * e + P],
            };
            element(e, want_pairs, &mut adder);
        }
        let part = (!want_pairs).then_some(BlockPart::Diagonal);
        m.add_sym_blocks3(offset, &self.slot_nodes, &sums, part);
    }

    /// A zero [`SymBsr3`] over mesh nodes 0..=the largest one, with one block per slot: what
    /// [`NodePairs::assemble_sym`] fills.
    pub fn sym_matrix(&self) -> SymBsr3 {
        let nb = self.nodes.last().map_or(0, |&n| n as usize + 1);
        let mut row_ptr = vec![0usize; nb + 1];
        let mut cols = Vec::with_capacity(self.nodes.len() + self.pairs.len());
        let mut j = 0;
        for &n in &self.nodes {
            cols.push(n);
            while j < self.pairs.len() && self.pairs[j][0] == n {
                cols.push(self.pairs[j][1]);
                j += 1;
            }
            row_ptr[n as usize + 1] = cols.len();
        }
        // rows of nodes no element uses are empty
        for r in 0..nb {
            row_ptr[r + 1] = row_ptr[r + 1].max(row_ptr[r]);
        }
        SymBsr3::zeros(nb, row_ptr, cols).expect("node pairs form an upper block pattern")
    }

    /// Sum the element blocks (as [`NodePairs::assemble`], pairs always wanted) into `sym`, a
    /// matrix made by [`NodePairs::sym_matrix`]: its blocks are overwritten.
    pub fn assemble_sym<const N: usize, const P: usize>(
        &self,
        sym: &mut SymBsr3,
        element: impl FnMut(usize, bool, &mut ElementBlocks<N, P>),
    ) {
        let blocks = sym.blocks_mut();
        assert_eq!(
            blocks.len(),
            self.nodes.len() + self.pairs.len(),
            "matrix not made by sym_matrix"
        );
        blocks.fill([0.0; 9]);
        self.sum(true, element, |s, b, t| {
            // row-major
            let o = &mut blocks[s];
            for i in 0..3 {
                for j in 0..3 {
                    o[3 * i + j] += if t { b[(j, i)] } else { b[(i, j)] };
                }
            }
        });
    }
}

/// Adds one element's blocks into the node and pair sums (see [`NodePairs::assemble_direct`]).
pub struct BlockAdder<'a, const N: usize, const P: usize> {
    sums: &'a mut [Mat3],
    /// The element's slots of its nodes' diagonal blocks.
    nodes: &'a [u32],
    /// The element's pair slots and flags, in local pair order.
    pairs: &'a [u32],
}

impl<const N: usize, const P: usize> BlockAdder<'_, N, P> {
    /// Add the block K_vw (v ≤ w local nodes) whose entry (i, j) is `f(i, j)`: to v's diagonal
    /// sum when v = w; else to the pair's sum, transposed when the mesh nodes come in the other
    /// order, or with its transpose to the node's diagonal sum when both are the same node.
    #[inline(always)]
    pub fn add(&mut self, v: usize, w: usize, f: impl Fn(usize, usize) -> f64) {
        if v == w {
            add_entries(&mut self.sums[self.nodes[v] as usize], &f, false);
            return;
        }
        debug_assert!(v < w && w < N);
        // index of (v, w) in local_pairs order
        let k = v * N - v * (v + 1) / 2 + (w - v - 1);
        let id = self.pairs[k];
        if id & SAME_NODE != 0 {
            let o = &mut self.sums[(id & !SAME_NODE) as usize];
            add_entries(o, &f, false);
            add_entries(o, &f, true);
        } else if id & FLIPPED != 0 {
            add_entries(&mut self.sums[(id & !FLIPPED) as usize], &f, true);
        } else {
            add_entries(&mut self.sums[id as usize], &f, false);
        }
    }
}

/// o += the block whose entry (i, j) is f(i, j), or its transpose.
#[inline(always)]
fn add_entries(o: &mut Mat3, f: &impl Fn(usize, usize) -> f64, transposed: bool) {
    for j in 0..3 {
        for i in 0..3 {
            o[(i, j)] += if transposed { f(j, i) } else { f(i, j) };
        }
    }
}

/// Local pairs (v, w), v < w, in the order (0,1), (0,2), …, (0,N−1), (1,2), …
pub fn local_pairs<const N: usize>() -> impl Iterator<Item = (usize, usize)> + Clone {
    (0..N).flat_map(|v| (v + 1..N).map(move |w| (v, w)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::matrix::Triplets;

    /// Dense matrix from a sink's triplets.
    fn dense(t: &Triplets) -> Vec<Vec<f64>> {
        let mut d = vec![vec![0.0; t.n]; t.n];
        for &(r, c, v) in &t.entries {
            d[r as usize][c as usize] += v;
        }
        d
    }

    /// Pair sums give the same matrix as adding every element's N² blocks, including an element
    /// with a repeated node, a node no element uses, and an offset. (Element matrices are
    /// symmetric: diagonal blocks too, as the sink reads their upper triangles.)
    #[test]
    fn pair_sums_equal_element_blocks() {
        let elems: [[u32; 3]; 4] = [[0, 1, 2], [2, 1, 3], [3, 4, 0], [4, 4, 1]];
        let block = |e: usize, v: usize, w: usize| {
            let m = Mat3::from_fn(|i, j| ((e * 31 + v * 7 + w * 3 + i * 5 + j) % 11) as f64 - 5.0);
            if v == w {
                m + m.transpose()
            } else {
                m
            }
        };
        let pairs = NodePairs::new::<3, 3>(&elems);
        assert_eq!(pairs.len(), 9); // 01 02 12 23 13 34 03 04 14 (44 is one node)
        let n = 3 * 7;
        let mut by_pairs = Triplets::new(n);
        pairs.assemble::<3, 3>(&mut by_pairs, 3, |e, want, out| {
            assert!(want);
            for v in 0..3 {
                out.diag[v] = block(e, v, v);
            }
            for (j, (v, w)) in local_pairs::<3>().enumerate() {
                out.upper[j] = block(e, v, w);
            }
        });
        let mut direct = Triplets::new(n);
        for (e, el) in elems.iter().enumerate() {
            for v in 0..3 {
                for w in 0..3 {
                    let b = match v.cmp(&w) {
                        std::cmp::Ordering::Equal => block(e, v, v),
                        std::cmp::Ordering::Less => block(e, v, w),
                        std::cmp::Ordering::Greater => block(e, w, v).transpose(),
                    };
                    direct.add_block3(3 + 3 * el[v] as usize, 3 + 3 * el[w] as usize, &b);
                }
            }
        }
        assert_eq!(dense(&by_pairs), dense(&direct));
    }

    /// The symmetric block matrix filled by `assemble_sym` multiplies like the sink assembly
    /// (same sums), including a node no element uses (an empty row) and a repeated node.
    #[test]
    fn sym_matrix_product_equals_sink_assembly() {
        let elems: [[u32; 3]; 4] = [[0, 1, 2], [2, 1, 4], [4, 5, 0], [5, 5, 1]];
        // symmetric element matrices: blocks (v, w) and (w, v) transposed
        let block = |e: usize, v: usize, w: usize| {
            let m = Mat3::from_fn(|i, j| ((e * 31 + v * 7 + w * 3 + i * 5 + j) % 11) as f64 - 5.0);
            if v == w {
                m + m.transpose()
            } else {
                m
            }
        };
        let fill = |e: usize, want: bool, out: &mut ElementBlocks<3, 3>| {
            assert!(want);
            for v in 0..3 {
                out.diag[v] = block(e, v, v);
            }
            for (j, (v, w)) in local_pairs::<3>().enumerate() {
                out.upper[j] = block(e, v, w);
            }
        };
        let pairs = NodePairs::new::<3, 3>(&elems);
        let mut sym = pairs.sym_matrix();
        assert_eq!(sym.block_rows(), 6);
        pairs.assemble_sym::<3, 3>(&mut sym, fill);
        let mut sink = Triplets::new(18);
        pairs.assemble::<3, 3>(&mut sink, 0, fill);
        let d = dense(&sink);
        let x: Vec<f64> = (0..18).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut y = vec![f64::NAN; 18];
        sym.mul(&x, &mut y);
        for (r, yr) in y.iter().enumerate() {
            let want: f64 = (0..18).map(|c| d[r][c] * x[c]).sum();
            assert!(
                (yr - want).abs() < 1e-12 * (1.0 + want.abs()),
                "row {r}: {yr} vs {want}"
            );
        }
        assert!(y[9..12].iter().all(|v| *v == 0.0)); // node 3: no element
    }
}
