//! Assembly by node pairs: element stiffness blocks are summed per node (diagonal blocks) and per
//! pair of nodes sharing an element (off-diagonal blocks) in the force field's own buffers, and
//! each sum goes to the matrix sink once, instead of every element handing the sink its N²
//! blocks one dynamic call at a time.
//!
//! The element → pair map is built once from the connectivity (pairs sorted, so the order of the
//! sums and of the sink calls is fixed: results are bit-identical run to run). Sums run in
//! element order; only round-off differs from adding element blocks straight into the matrix.

use canape_core::matrix::MatrixSink;
use canape_types::Mat3;
use std::sync::Mutex;

/// Marks a local pair whose two nodes are the same mesh node (a degenerate element): its block
/// and its transpose go to that node's diagonal block.
const SAME_NODE: u32 = 1 << 31;
/// Marks a local pair (v, w) whose mesh nodes come in the other order (node of v > node of w):
/// the pair's sum K_pq receives the transpose of the element's block.
const FLIPPED: u32 = 1 << 30;

/// Per-element pair indices and the scratch sums for one connectivity.
#[derive(Debug, Default)]
pub struct NodePairs {
    /// Mesh nodes used by the elements, ascending.
    nodes: Vec<u32>,
    /// Node pairs (p, q), p < q, that share an element, ascending.
    pairs: Vec<[u32; 2]>,
    /// Per element and local node: its index in `nodes`.
    elem_nodes: Vec<u32>,
    /// Per element and local pair (v, w), v < w, in the order (0,1), (0,2), …, (1,2), …: its
    /// index in `pairs` (| FLIPPED when node of v > node of w), or SAME_NODE | index in `nodes`.
    elem_pairs: Vec<u32>,
    /// Sums: one block per node, then one per pair (K_pq with p < q).
    scratch: Mutex<Vec<Mat3>>,
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
        let mut elem_nodes = Vec::with_capacity(elems.len() * N);
        let mut elem_pairs = Vec::with_capacity(elems.len() * P);
        for e in elems {
            elem_nodes.extend(e.iter().map(|&n| node_index(n)));
            for (v, w) in local_pairs::<N>() {
                let (p, q) = (e[v].min(e[w]), e[v].max(e[w]));
                let flipped = if e[v] > e[w] { FLIPPED } else { 0 };
                elem_pairs.push(if p == q {
                    SAME_NODE | node_index(p)
                } else {
                    flipped | pairs.binary_search(&[p, q]).expect("pair of an element") as u32
                });
            }
        }
        NodePairs {
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
        let n_elems = self.elem_nodes.len() / N.max(1);
        let at = |n: u32| offset + 3 * n as usize;
        let want_pairs = self
            .pairs
            .iter()
            .any(|&[p, q]| m.wants(at(p), at(q)) || m.wants(at(q), at(p)));
        let mut guard = self
            .scratch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let sums = &mut *guard;
        sums.clear();
        sums.resize(self.nodes.len() + self.pairs.len(), Mat3::zeros());
        let (diag, upper) = sums.split_at_mut(self.nodes.len());
        let mut blocks = ElementBlocks {
            diag: [Mat3::zeros(); N],
            upper: [Mat3::zeros(); P],
        };
        for e in 0..n_elems {
            element(e, want_pairs, &mut blocks);
            let en = &self.elem_nodes[N * e..N * e + N];
            for (v, b) in blocks.diag.iter().enumerate() {
                diag[en[v] as usize] += b;
            }
            if !want_pairs {
                continue;
            }
            let ep = &self.elem_pairs[P * e..P * e + P];
            for (&id, b) in ep.iter().zip(&blocks.upper) {
                if id & SAME_NODE != 0 {
                    diag[(id & !SAME_NODE) as usize] += b + b.transpose();
                } else if id & FLIPPED != 0 {
                    upper[(id & !FLIPPED) as usize] += b.transpose();
                } else {
                    upper[id as usize] += b;
                }
            }
        }
        for (&n, b) in self.nodes.iter().zip(diag.iter()) {
            if m.wants(at(n), at(n)) {
                m.add_block3(at(n), at(n), b);
            }
        }
        if want_pairs {
            for (&[p, q], b) in self.pairs.iter().zip(upper.iter()) {
                if m.wants(at(p), at(q)) {
                    m.add_block3(at(p), at(q), b);
                }
                if m.wants(at(q), at(p)) {
                    m.add_block3(at(q), at(p), &b.transpose());
                }
            }
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
    /// with a repeated node, a node no element uses, and an offset.
    #[test]
    fn pair_sums_equal_element_blocks() {
        let elems: [[u32; 3]; 4] = [[0, 1, 2], [2, 1, 3], [3, 4, 0], [4, 4, 1]];
        let block = |e: usize, v: usize, w: usize| {
            Mat3::from_fn(|i, j| ((e * 31 + v * 7 + w * 3 + i * 5 + j) % 11) as f64 - 5.0)
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
}
