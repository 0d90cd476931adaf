//! Tests of [`SymBsr3`] and [`SymBsrCache`].

use super::*;
use crate::{MatrixSink, Triplets};

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
