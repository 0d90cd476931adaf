//! Tests of the direct solvers: every class on SPD systems, orderings and the band paths, the
//! symmetric LU, the LU fallback, factor reuse and the async solver's lag.

use super::symbolic::transpose_pattern;
use super::*;
use crate::test_util::DenseSystem as Sys;
use faer::sparse::linalg::cholesky::{factorize_symbolic_cholesky, SymmetricOrdering};
use faer::Side;

fn spd(n: usize) -> Vec<Vec<f64>> {
    // a 1D Laplacian plus a diagonal shift: sparse, SPD
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if i == j {
                        2.5
                    } else if i.abs_diff(j) == 1 {
                        -1.0
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect()
}

#[test]
fn every_direct_solver_solves_a_random_spd_system() {
    for class in [
        "SparseLDLSolver",
        "EigenSimplicialLDLT",
        "EigenSimplicialLLT",
        "EigenSparseLU",
        "EigenSparseQR",
        "PrecomputedLinearSolver",
    ] {
        let mut s = DirectSolver::new(class, "CompressedRowSparseMatrixMat3x3d").unwrap();
        let mut sys = Sys::new(spd(40));
        let b: Vec<f64> = (0..40).map(|i| ((i * 7) as f64).sin()).collect();
        let mut x = vec![0.0; 40];
        s.solve(&mut sys, &b, &mut x);
        let mut ax = vec![0.0; 40];
        sys.apply(&x, &mut ax);
        let err = ax
            .iter()
            .zip(&b)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-12, "{class}: residual {err}");
        // second solve: Precomputed reuses its factor, the others re-assemble
        s.solve(&mut sys, &b, &mut x);
        assert_eq!(
            sys.assembled,
            if class == "PrecomputedLinearSolver" {
                1
            } else {
                2
            },
            "{class}"
        );
    }
}

/// AsyncSparseLDLSolver: the first solve is exact, each later one solves with the matrix
/// of the solve before (one step late), and a restart makes the next solve exact again.
#[test]
fn the_async_solver_uses_the_previous_steps_factor() {
    let mut s =
        DirectSolver::new("AsyncSparseLDLSolver", "CompressedRowSparseMatrixMat3x3d").unwrap();
    let n = 12;
    let b: Vec<f64> = (0..n).map(|i| ((i * 3) as f64).sin()).collect();
    let exact = |a: &Vec<Vec<f64>>| {
        let mut d = DirectSolver::new("SparseLDLSolver", "").unwrap();
        let mut x = vec![0.0; n];
        d.solve(&mut Sys::new(a.clone()), &b, &mut x);
        x
    };
    let a1 = spd(n);
    let mut a2 = spd(n);
    a2[3][3] += 2.0;
    let mut a3 = spd(n);
    a3[5][5] += 1.0;
    let mut x = vec![0.0; n];
    s.solve(&mut Sys::new(a1.clone()), &b, &mut x);
    assert_eq!(x, exact(&a1), "the first solve waits for its factor");
    s.solve(&mut Sys::new(a2.clone()), &b, &mut x);
    assert_eq!(x, exact(&a1), "step 2 solves with step 1's factor");
    s.solve(&mut Sys::new(a3.clone()), &b, &mut x);
    assert_eq!(x, exact(&a2), "step 3 with step 2's");
    s.restart();
    s.solve(&mut Sys::new(a3.clone()), &b, &mut x);
    assert_eq!(x, exact(&a3), "after a restart the solve is exact");
}

/// An assembly equal to the factored one keeps the factor (same solution bits); a changed
/// value is factored again and solved with.
#[test]
fn an_unchanged_matrix_keeps_its_factor() {
    for class in [
        "SparseLDLSolver",
        "EigenSimplicialLDLT",
        "EigenSparseLU",
        "EigenSparseQR",
    ] {
        let mut s = DirectSolver::new(class, "CompressedRowSparseMatrixMat3x3d").unwrap();
        let mut sys = Sys::new(spd(30));
        let b: Vec<f64> = (0..30).map(|i| ((i * 5) as f64).cos()).collect();
        let (mut x1, mut x2) = (vec![0.0; 30], vec![0.0; 30]);
        s.solve(&mut sys, &b, &mut x1);
        s.solve(&mut sys, &b, &mut x2);
        assert_eq!(s.factorizations(), 1, "{class}");
        assert_eq!(sys.assembled, 2, "{class}: assembled again to compare");
        assert!(x1.iter().zip(&x2).all(|(p, q)| p.to_bits() == q.to_bits()));
        sys.a[7][7] += 1.0;
        s.solve(&mut sys, &b, &mut x2);
        assert_eq!(s.factorizations(), 2, "{class}");
        assert!(sys.relative_residual(&x2, &b) < 1e-12, "{class}");
        assert!(x1[7] != x2[7]);
    }
}

/// A grid's matrix: `nodes` nodes at grid positions `node(i)`, 3 DOFs each, coupled to their
/// 26 neighbours (−0.1), 30 on the diagonal.
fn grid_matrix(nodes: usize, node: impl Fn(usize) -> (usize, usize, usize)) -> Vec<Vec<f64>> {
    let n = 3 * nodes;
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    let ((a, b, c), (d, e, f)) = (node(i / 3), node(j / 3));
                    if i == j {
                        30.0
                    } else if a.abs_diff(d) <= 1 && b.abs_diff(e) <= 1 && c.abs_diff(f) <= 1 {
                        -0.1
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect()
}

/// Without an ordering component, Cholesky takes the order with the smaller factor: the
/// given one for a long thin grid numbered along its length (a band), AMD's for an arrow
/// matrix whose dense row comes first (full fill in the given order, none in AMD's).
#[test]
fn smallest_factor_ordering() {
    // 2 × 2 × 30 nodes, 3 DOFs each, coupled to their 26 neighbours
    let n = 3 * 120;
    let grid = grid_matrix(120, |i| (i % 2, (i / 2) % 2, i / 4));
    let arrow: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| match (i, j) {
                    _ if i == j => 30.0,
                    (0, _) | (_, 0) => 0.1,
                    _ => 0.0,
                })
                .collect()
        })
        .collect();
    let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
    for (a, reordered) in [(grid, false), (arrow, true)] {
        let mut sys = Sys::new(a);
        let upper = sys.assemble_upper();
        let (given, amd) = (sparse_size(&upper, false), sparse_size(&upper, true));
        assert_eq!(
            amd < given,
            reordered,
            "factor sizes: given {given}, AMD {amd}"
        );
        let mut s = DirectSolver::new("SparseLDLSolver", "").unwrap();
        assert_eq!(s.ordering, CholeskyOrdering::Smallest);
        let mut x = vec![0.0; n];
        s.solve(&mut sys, &b, &mut x);
        assert_eq!(s.permuted.is_some(), reordered);
        assert!(sys.relative_residual(&x, &b) < 1e-14);
    }
}

/// Number of values of the sparse Cholesky factor of `upper` in the given or AMD's order.
fn sparse_size(upper: &Csr, amd: bool) -> usize {
    let ordering = if amd {
        SymmetricOrdering::Amd
    } else {
        SymmetricOrdering::Identity
    };
    factorize_symbolic_cholesky(
        transpose_pattern(upper).as_ref(),
        Side::Upper,
        ordering,
        Default::default(),
    )
    .unwrap()
    .len_val()
}

/// Without an ordering component, the smaller envelope of the given order's and reverse
/// Cuthill–McKee's is taken over an AMD factor somewhat smaller (up to [`BAND_OVER_AMD`]
/// times), not over a much smaller one; all solve alike.
#[test]
fn band_over_a_somewhat_smaller_amd_factor() {
    // m × m × len nodes, 3 DOFs each, coupled to their 26 neighbours, numbered across the
    // m × m section first (a band), or along the length first (a wide band, which reverse
    // Cuthill–McKee narrows)
    let grid = |m: usize, len: usize, along: bool| {
        grid_matrix(m * m * len, |i| {
            if along {
                (i / len % m, i / (len * m), i % len)
            } else {
                (i % m, (i / m) % m, i / (m * m))
            }
        })
    };
    // a chain whose every node is also coupled to node 0: any envelope holds about half
    // the matrix, AMD's factor little more than the matrix
    let arrow = |n: usize| -> Vec<Vec<f64>> {
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| match (i, j) {
                        _ if i == j => 30.0,
                        (0, _) | (_, 0) => 0.1,
                        _ if i.abs_diff(j) == 1 => -1.0,
                        _ => 0.0,
                    })
                    .collect()
            })
            .collect()
    };
    let mut seen = [false; 2];
    let cases = [
        (3, 12, false),
        (4, 12, false),
        (5, 12, true),
        (8, 8, false),
        (0, 0, false),
    ];
    for (m, len, along) in cases {
        let a = if m == 0 {
            arrow(600)
        } else {
            grid(m, len, along)
        };
        let n = a.len();
        let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let mut sys = Sys::new(a);
        let upper = sys.assemble_upper();
        let (given, amd) = (sparse_size(&upper, false), sparse_size(&upper, true));
        let given_band = BandPattern::new(&upper).unwrap();
        let rcm = crate::rcm::reverse_cuthill_mckee(&upper);
        let rcm_band = BandPattern::with_order(&upper, Some(rcm)).unwrap();
        let rcm_fewer = rcm_band.operations() < given_band.operations();
        let band = if rcm_fewer { &rcm_band } else { &given_band }.storage();
        let (given_band, rcm_band) = (given_band.storage(), rcm_band.storage());
        let mut s = DirectSolver::new("SparseLDLSolver", "").unwrap();
        let mut x = vec![0.0; n];
        s.solve(&mut sys, &b, &mut x);
        assert!(sys.relative_residual(&x, &b) < 1e-14);
        let what =
            format!("{m} {len} {along}: given {given}, AMD {amd}, bands {given_band} {rcm_band}");
        let expected = band as f64 <= BAND_OVER_AMD * amd as f64;
        match &s.symbolic {
            Some(Symbolic::Band(p)) => {
                assert!(expected, "{what}");
                assert_eq!(p.is_reordered(), rcm_fewer, "{what}");
                // numbered along the length: only the renumbered envelope is narrow
                assert_eq!(p.is_reordered(), along, "{what}");
            }
            _ => assert!(!expected, "{what}"),
        }
        if amd < band {
            seen[usize::from(expected)] = true;
        }
    }
    // both cases occur: AMD's factor smaller and the band taken, and AMD's taken
    assert_eq!(seen, [true, true]);
}

fn max_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max)
}

#[test]
fn natural_and_amd_orderings_solve_alike() {
    // a dense-ish SPD matrix whose AMD order differs from the natural one
    let n = 30;
    let mut a = spd(n);
    for i in 0..n {
        a[i][(i * 7) % n] += 0.3;
        a[(i * 7) % n][i] += 0.3;
        a[i][i] += 2.0;
    }
    let b: Vec<f64> = (0..n).map(|i| (i as f64).cos()).collect();
    let mut xs = Vec::new();
    for natural in [false, true] {
        let mut s = DirectSolver::new("SparseLDLSolver", "").unwrap();
        s.ordering = if natural {
            CholeskyOrdering::Natural
        } else {
            CholeskyOrdering::Amd
        };
        let mut sys = Sys::new(a.clone());
        let mut x = vec![0.0; n];
        s.solve(&mut sys, &b, &mut x);
        match &s.symbolic {
            // AMD: the matrix is reordered by us (same fill as faer's AMD analysis, else
            // no reordering) and factored in its own order
            Some(Symbolic::Llt(sym)) => assert!(sym.perm().is_none_or(|p| {
                p.arrays()
                    .0
                    .iter()
                    .enumerate()
                    .all(|(i, &v)| v as usize == i)
            })),
            // the natural order fills this matrix's band: band factorization
            Some(Symbolic::Band(_)) => assert!(natural),
            _ => panic!("Cholesky expected"),
        }
        assert_eq!(s.permuted.is_some(), !natural);
        let identity = s
            .permuted
            .as_ref()
            .is_none_or(|p| p.new_of.iter().enumerate().all(|(i, &v)| v as usize == i));
        assert_eq!(identity, natural, "natural ordering: {natural}");
        xs.push(x);
    }
    let diff = max_difference(&xs[0], &xs[1]);
    assert!(diff < 1e-12, "orderings disagree by {diff}");
}

/// In the given order, a banded matrix (a bar's 1D Laplacian plus couplings two apart) is
/// factored in band storage and an arrow matrix (dense last row: a band as wide as the
/// matrix, little fill) by the sparse factorization; both solve as the AMD order does.
#[test]
fn band_factorization_where_the_factor_fills_the_band() {
    let n = 200;
    let mut banded = spd(n);
    for i in 0..n - 2 {
        banded[i][i + 2] = -0.2;
        banded[i + 2][i] = -0.2;
    }
    let mut arrow = spd(n);
    for i in 0..n - 1 {
        arrow[i][n - 1] = 0.1;
        arrow[n - 1][i] = 0.1;
    }
    arrow[n - 1][n - 1] = 10.0;
    let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).sin()).collect();
    for (a, band) in [(banded, true), (arrow, false)] {
        let mut xs = Vec::new();
        for ordering in [CholeskyOrdering::Natural, CholeskyOrdering::Amd] {
            let mut s = DirectSolver::new("SparseLDLSolver", "").unwrap();
            s.set_ordering(ordering);
            let mut sys = Sys::new(a.clone());
            let mut x = vec![0.0; n];
            for _ in 0..2 {
                s.solve(&mut sys, &b, &mut x);
            }
            let is_band = matches!(s.symbolic, Some(Symbolic::Band(_)));
            assert_eq!(is_band, band && ordering == CholeskyOrdering::Natural);
            assert!(sys.relative_residual(&x, &b) < 1e-14);
            xs.push(x);
        }
        let diff = max_difference(&xs[0], &xs[1]);
        assert!(diff < 1e-12, "band {band}: orderings disagree by {diff}");
    }
}

/// EigenSparseLU and EigenSparseQR beside a NaturalOrderingMethod factor a banded matrix in
/// band storage (and an arrow matrix sparsely); without one, faer's sparse factorizations
/// in their own column order. All solve non-symmetric matrices and agree.
#[test]
fn natural_order_lu_and_qr_use_the_band_where_it_fills() {
    let n = 40;
    // not symmetric: faer is given A's columns, not the CSR's rows (which are Aᵀ's)
    let mut banded = spd(n);
    for i in 0..n - 3 {
        banded[i][i + 3] = 0.3;
        banded[i + 3][i] = -0.2;
    }
    let mut arrow = spd(n);
    for i in 0..n - 1 {
        arrow[i][n - 1] = 0.1;
        arrow[n - 1][i] = 0.05 * i as f64;
    }
    arrow[n - 1][n - 1] = 10.0;
    let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).sin()).collect();
    for class in ["EigenSparseLU", "EigenSparseQR"] {
        for (a, band) in [(banded.clone(), true), (arrow.clone(), false)] {
            let mut xs = Vec::new();
            for ordering in [CholeskyOrdering::Natural, CholeskyOrdering::Smallest] {
                let mut s = DirectSolver::new(class, "").unwrap();
                s.set_ordering(ordering);
                let mut sys = Sys::new(a.clone());
                let mut x = vec![0.0; n];
                for _ in 0..2 {
                    s.solve(&mut sys, &b, &mut x);
                }
                let is_band = matches!(s.symbolic, Some(Symbolic::GeneralBand(..)));
                assert_eq!(is_band, band && ordering == CholeskyOrdering::Natural);
                let res = sys.relative_residual(&x, &b);
                assert!(
                    res < 1e-14,
                    "{class} {ordering:?} band {band}: residual {res}"
                );
                xs.push(x);
            }
            let diff = max_difference(&xs[0], &xs[1]);
            assert!(
                diff < 1e-12,
                "{class} band {band}: orders disagree by {diff}"
            );
        }
    }
}

/// EigenSparseLU (given order, band) on a symmetric matrix whose partial pivoting keeps
/// every pivot on the diagonal factors it symmetrically; where a pivot would move (a
/// multiplier above 1, or an indefinite matrix) or the matrix is not symmetric, the
/// pivoted band LU runs. All solve alike.
#[test]
fn lu_of_a_symmetric_matrix_without_row_exchanges_is_factored_symmetrically() {
    let n = 30;
    let mut banded = spd(n);
    for i in 0..n - 3 {
        banded[i][i + 3] = 0.4;
        banded[i + 3][i] = 0.4;
    }
    // SPD, but row 11's multiplier in column 10 is about 1.46: partial pivoting exchanges
    // rows 10 and 11 (the largest multiplier of `banded` is about 0.49)
    let mut pivoting = banded.clone();
    pivoting[10][10] = 3.0;
    pivoting[11][11] = 8.0;
    pivoting[10][11] = 3.5;
    pivoting[11][10] = 3.5;
    let mut indefinite = banded.clone();
    indefinite[12][12] = -3.0;
    let mut unsymmetric = banded.clone();
    unsymmetric[4][7] = 0.41;
    let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).cos()).collect();
    for (name, a, symmetric) in [
        ("banded", banded, true),
        ("pivoting", pivoting, false),
        ("indefinite", indefinite, false),
        ("unsymmetric", unsymmetric, false),
    ] {
        let mut xs = Vec::new();
        for ordering in [CholeskyOrdering::Natural, CholeskyOrdering::Smallest] {
            let mut s = DirectSolver::new("EigenSparseLU", "").unwrap();
            s.set_ordering(ordering);
            let mut sys = Sys::new(a.clone());
            let mut x = vec![0.0; n];
            for _ in 0..2 {
                s.solve(&mut sys, &b, &mut x);
                assert_eq!(
                    s.used_symmetric_lu(),
                    symmetric && ordering == CholeskyOrdering::Natural,
                    "{name} {ordering:?}"
                );
            }
            let res = sys.relative_residual(&x, &b);
            assert!(res < 1e-14, "{name} {ordering:?}: residual {res}");
            xs.push(x);
        }
        let diff = max_difference(&xs[0], &xs[1]);
        assert!(diff < 1e-12, "{name}: band and faer LU disagree by {diff}");
    }
}

/// A symmetric indefinite matrix: Cholesky on the upper blocks fails, LU on the whole
/// matrix (assembled again) solves it, step after step.
#[test]
fn indefinite_matrix_falls_back_to_lu_on_the_whole_matrix() {
    let n = 9;
    let mut a = spd(n);
    a[4][4] = -50.0;
    for class in [
        "SparseLDLSolver",
        "EigenSimplicialLDLT",
        "EigenSimplicialLLT",
    ] {
        let mut sys = Sys::new(a.clone());
        let mut s = DirectSolver::new(class, "").unwrap();
        for step in 0..2 {
            let b: Vec<f64> = (0..n).map(|i| (i + step) as f64 - 3.5).collect();
            let mut x = vec![0.0; n];
            s.solve(&mut sys, &b, &mut x);
            assert!(s.used_lu_fallback(), "{class}");
            assert!(sys.relative_residual(&x, &b) < 1e-10, "{class} step {step}");
        }
    }
}

#[test]
fn bad_template_is_refused() {
    assert!(DirectSolver::new("SparseLDLSolver", "Vec3d").is_err());
}
