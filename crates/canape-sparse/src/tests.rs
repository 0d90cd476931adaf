//! Tests of the assembly sinks, of triplets → CSR and of the pattern cache.

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
                    Some(part) => {
                        BlockFilter { part, sink: t }.add_sym_blocks3(offset, &nodes, &blocks, None)
                    }
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
