//! Tests of the band Cholesky factorization: solves against dense references, orders, many
//! right-hand sides, compliance by forward substitution, indefinite input, AVX2 bits.

use super::*;

/// 1 / L[j, j] for every column j of a factor (what `factorize` appends).
fn reciprocals(lay: &Layout, v: &[f64]) -> Vec<f64> {
    (0..lay.n).map(|j| 1.0 / v[lay.start[j]]).collect()
}

/// The upper part (row i: columns j ≥ i) of a banded SPD matrix as a CSR.
fn banded(n: usize, b: usize, seed: u64) -> (Csr, Vec<Vec<f64>>) {
    let mut rnd = crate::test_util::rng(seed);
    let mut dense = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i + 1..(i + b + 1).min(n) {
            let v = rnd();
            dense[i][j] = v;
            dense[j][i] = v;
        }
    }
    for i in 0..n {
        dense[i][i] = 2.0 * b as f64 + 1.0 + rnd();
    }
    (upper_csr(&dense, |i, j| j <= i + b), dense)
}

/// The entries (i, j ≥ i) of `dense` that `keep` names, as a CSR.
fn upper_csr(dense: &[Vec<f64>], keep: impl Fn(usize, usize) -> bool) -> Csr {
    let (mut row_ptr, mut cols, mut vals) = (vec![0usize], Vec::new(), Vec::new());
    for (i, row) in dense.iter().enumerate() {
        for (j, &v) in row.iter().enumerate().skip(i) {
            if keep(i, j) {
                cols.push(j as u32);
                vals.push(v);
            }
        }
        row_ptr.push(cols.len());
    }
    Csr {
        n: dense.len(),
        row_ptr: row_ptr.into(),
        cols: cols.into(),
        vals,
    }
}

/// Largest error of the factored solve of A x = A want (A = `dense`, want chosen here).
fn solve_error(p: &BandPattern, values: &[f64], dense: &[Vec<f64>]) -> f64 {
    let n = dense.len();
    let want: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut x: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|j| dense[i][j] * want[j]).sum())
        .collect();
    p.solve_in_place(values, &mut x, &mut Vec::new());
    x.iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

#[test]
fn band_cholesky_solves_banded_spd_systems() {
    // panels that end inside the matrix, at its end, and widths below, at and above PANEL
    for (n, b) in [
        (1, 0),
        (5, 0),
        (7, 1),
        (10, 3),
        (33, 4),
        (50, 9),
        (64, 17),
        (9, 12),
    ] {
        let (a, dense) = banded(n, b, (n * 31 + b) as u64);
        let p = BandPattern::new(&a).expect("band");
        assert!((0..n).all(|j| p.lay.last(j) == (j + b).min(n - 1)));
        let mut values = Vec::new();
        p.factorize(&a, &mut values).expect("SPD");
        let err = solve_error(&p, &values, &dense);
        assert!(err < 1e-12, "n {n} b {b}: error {err}");
    }
}

/// The upper part (row i: columns j ≥ i) of an SPD matrix whose rows start at varying
/// columns (row i from column i − width(i)), rows and columns renumbered by `old_of`
/// (row k of the result is row old_of[k] of that matrix).
fn envelope(n: usize, width: impl Fn(usize) -> usize, old_of: &[usize]) -> (Csr, Vec<Vec<f64>>) {
    let mut rnd = crate::test_util::rng(n as u64);
    let mut m = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i.saturating_sub(width(i))..i {
            let v = rnd();
            m[i][j] = v;
            m[j][i] = v;
        }
    }
    for i in 0..n {
        m[i][i] = m[i].iter().map(|v: &f64| v.abs()).sum::<f64>() + 1.0 + rnd();
    }
    let dense: Vec<Vec<f64>> = (0..n)
        .map(|k| (0..n).map(|l| m[old_of[k]][old_of[l]]).collect())
        .collect();
    (upper_csr(&dense, |i, j| dense[i][j] != 0.0), dense)
}

/// Envelopes of varying width, in the given order and renumbered (a shuffled band put
/// back in order by `with_order`): solved to round-off, stored in less than the widest
/// band, and the storage past each column's envelope stays zero.
#[test]
fn envelope_cholesky_solves_in_given_and_new_orders() {
    let n = 70;
    let width = |i: usize| [1, 9, 3, 0, 17, 5][i / 12 % 6].min(i);
    let identity: Vec<usize> = (0..n).collect();
    // a shuffle: row k of the matrix is row old_of[k] of the enveloped one
    let old_of: Vec<usize> = (0..n).map(|k| (k * 37 + 11) % n).collect();
    let mut new_of = vec![0u32; n];
    for (k, &o) in old_of.iter().enumerate() {
        new_of[k] = o as u32;
    }
    for (order, renumber) in [(&identity, None), (&old_of, Some(new_of))] {
        let (a, dense) = envelope(n, width, order);
        let p = BandPattern::with_order(&a, renumber).expect("band");
        assert!(
            p.storage() < n * (17 + PANEL + 4),
            "storage {}",
            p.storage()
        );
        let mut values = Vec::new();
        p.factorize(&a, &mut values).expect("SPD");
        for j in 0..n {
            let col = &values[p.lay.start[j]..p.lay.start[j + 1]];
            for (off, v) in col.iter().enumerate() {
                if j + off > p.lay.last(j) {
                    assert_eq!(*v, 0.0, "column {j} offset {off}");
                }
            }
        }
        let err = solve_error(&p, &values, &dense);
        assert!(err < 1e-12, "reordered {}: error {err}", p.is_reordered());
    }
}

/// Several right-hand sides at once give what one solve per right-hand side gives (to
/// round-off), in the given order and renumbered.
/// A factored envelope of 70 rows of varying width, in the given order and renumbered.
fn factored_envelopes() -> Vec<(BandPattern, Vec<f64>)> {
    let n = 70;
    let width = |i: usize| [1, 9, 3, 0, 17, 5][i / 12 % 6].min(i);
    let identity: Vec<usize> = (0..n).collect();
    let old_of: Vec<usize> = (0..n).map(|k| (k * 37 + 11) % n).collect();
    let new_of: Vec<u32> = old_of.iter().map(|&o| o as u32).collect();
    [(&identity, None), (&old_of, Some(new_of))]
        .into_iter()
        .map(|(order, renumber)| {
            let (a, _) = envelope(n, width, order);
            let p = BandPattern::with_order(&a, renumber).expect("band");
            let mut values = Vec::new();
            p.factorize(&a, &mut values).expect("SPD");
            (p, values)
        })
        .collect()
}

#[test]
fn many_right_hand_sides_equal_single_solves() {
    for (p, values) in factored_envelopes() {
        let n = p.lay.n;
        let m = 5;
        let b: Vec<f64> = (0..n * m).map(|k| ((k * 13 % 29) as f64) - 14.0).collect();
        let mut many = b.clone();
        let mut work = Vec::new();
        p.solve_many_in_place(&values, &mut many, m, &mut work);
        for c in 0..m {
            let mut one: Vec<f64> = (0..n).map(|i| b[i * m + c]).collect();
            p.solve_in_place(&values, &mut one, &mut work);
            for i in 0..n {
                let (x, y) = (many[i * m + c], one[i]);
                assert!(
                    (x - y).abs() <= 1e-12 * y.abs().max(1.0),
                    "rhs {c} row {i}: {x} vs {y}"
                );
            }
        }
    }
}

/// Bᵀ A⁻¹ B by forward substitutions only equals Bᵀ (A⁻¹ B) from full solves (to
/// round-off), is symmetric bit for bit, in the given order and renumbered, with leading
/// zero rows in B (skipped) and a zero column.
#[test]
fn compliance_by_forward_substitution_equals_the_full_solves() {
    for (p, values) in factored_envelopes() {
        let n = p.lay.n;
        let m = 6;
        // rows before 20 are zero, column 4 is zero, column c starts at row 20 + 7 (c % 3)
        let b: Vec<f64> = (0..n * m)
            .map(|k| {
                let (i, c) = (k / m, k % m);
                if i < 20 + 7 * (c % 3) || c == 4 {
                    0.0
                } else {
                    ((k * 13 % 29) as f64) - 14.0
                }
            })
            .collect();
        let mut x = b.clone();
        let mut work = Vec::new();
        p.solve_many_in_place(&values, &mut x, m, &mut work);
        let mut w = vec![f64::NAN; m * m];
        p.compliance_in_place(&values, &b, m, &mut work, &mut w);
        for r in 0..m {
            for c in 0..m {
                let full: f64 = (0..n).map(|i| b[i * m + r] * x[i * m + c]).sum();
                let got = w[r * m + c];
                assert_eq!(got.to_bits(), w[c * m + r].to_bits(), "symmetric");
                assert!(
                    (got - full).abs() <= 1e-11 * full.abs().max(1.0),
                    "W[{r}, {c}]: {got} vs {full}"
                );
            }
        }
        assert!(w[4 * m..5 * m].iter().all(|&v| v == 0.0));
        assert!(
            w[0] > 0.0,
            "a positive definite A gives a positive diagonal"
        );
    }
}

#[test]
fn indefinite_matrix_is_reported_with_its_column() {
    let (mut a, _) = banded(12, 2, 5);
    // row 6's diagonal entry is the first of its row
    let k = a.row_ptr[6];
    a.vals[k] = -1.0;
    let p = BandPattern::new(&a).unwrap();
    let mut values = Vec::new();
    assert_eq!(
        p.factorize(&a, &mut values),
        Err(NotPositiveDefinite { column: 6 })
    );
}

#[cfg(target_arch = "x86_64")]
#[test]
fn avx2_build_gives_the_baseline_bits() {
    if !(std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma"))
    {
        return;
    }
    // a band, and an envelope of varying width (in the given order: the solve in the
    // factored order is compared)
    let (band, _) = banded(101, 23, 9);
    let widths = |i: usize| [30, 2, 11, 0, 19][i / 10 % 5].min(i);
    let (env, _) = envelope(150, widths, &(0..150).collect::<Vec<_>>());
    for a in [band, env] {
        let p = BandPattern::new(&a).unwrap();
        let mut fast = Vec::new();
        p.factorize(&a, &mut fast).unwrap();
        let mut base = vec![0.0; p.storage()];
        for (&d, &v) in p.map.iter().zip(&a.vals) {
            if d != u32::MAX {
                base[d as usize] = v;
            }
        }
        factor_impl::<false>(&p.lay, &mut base).unwrap();
        // the band, then the diagonal's reciprocals
        assert_eq!(fast.len(), p.storage() + p.lay.n);
        assert!(fast
            .iter()
            .zip(base.iter().chain(&reciprocals(&p.lay, &base)))
            .all(|(x, y)| x.to_bits() == y.to_bits()));
        let rhs: Vec<f64> = (0..p.lay.n).map(|i| (i as f64).cos()).collect();
        let (mut xf, mut xb) = (rhs.clone(), rhs);
        p.solve_in_place(&fast, &mut xf, &mut Vec::new());
        solve_impl(&p.lay, &base, &reciprocals(&p.lay, &base), &mut xb);
        assert!(xf.iter().zip(&xb).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}
