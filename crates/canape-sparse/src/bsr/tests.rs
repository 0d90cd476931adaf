//! Tests of [`Bsr3`] and [`BsrCache`] (and of the block filters they are fed through).

use super::*;
use crate::{BlockFilter, BlockPart, MatrixSink, PatternCache, Triplets};
use canape_types::Mat3;

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
