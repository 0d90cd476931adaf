//! Tests of PCGLinearSolver, its preconditioners and MinResLinearSolver.

use super::*;
use crate::test_util::DenseSystem as Sys;
use crate::test_util::{edit, linear_initialised};
use canape_core::component::{Component, LinearSolver};

/// A random sparse SPD matrix (diagonally dominant, coupled in 3×3 blocks and neighbours).
fn spd(n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rnd = crate::test_util::rng(seed);
    let mut a = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..i {
            if i / 3 == j / 3 || i - j == 3 || i - j == 7 {
                let v = rnd();
                a[i][j] = v;
                a[j][i] = v;
            }
        }
    }
    for i in 0..n {
        a[i][i] = 3.0 + rnd().abs();
    }
    a
}

fn residual(a: &[Vec<f64>], x: &[f64], b: &[f64]) -> f64 {
    Sys::new(a.to_vec()).relative_residual(x, b)
}

#[test]
fn pcg_with_each_preconditioner_solves_to_its_tolerance() {
    let a = spd(30, 3);
    let b: Vec<f64> = (0..30).map(|i| (i as f64 * 0.3).cos()).collect();
    for kind in [
        None,
        Some(PreconditionerKind::Jacobi),
        Some(PreconditionerKind::BlockJacobi),
        Some(PreconditionerKind::Ssor { omega: 1.0 }),
        Some(PreconditionerKind::Ssor { omega: 1.3 }),
    ] {
        let mut s = PcgLinearSolver::new("").unwrap();
        s.max_iter = 200;
        s.tolerance = 1e-20;
        s.kind = kind;
        let mut sys = Sys::new(a.clone());
        let mut x = vec![0.0; 30];
        let st = s.solve(&mut sys, &b, &mut x);
        assert!(
            residual(&a, &x, &b) < 1e-9,
            "{kind:?}: {}",
            residual(&a, &x, &b)
        );
        assert!(st.iterations > 0 && st.iterations < 200);
    }
}

/// The warp preconditioner (its rotation system reassembled, R = I) is the factorization
/// of the matrix itself: PCG stops after one iteration at the exact solution, and a second
/// solve refactors (the matrix is assembled again).
#[test]
fn warp_preconditioner_solves_in_one_iteration() {
    let a = spd(30, 7);
    let b: Vec<f64> = (0..30).map(|i| (i as f64 * 0.7).sin()).collect();
    let mut s = PcgLinearSolver::new("").unwrap();
    s.max_iter = 50;
    s.tolerance = 1e-20;
    s.kind = Some(PreconditionerKind::Warp);
    s.warp = Some(Box::new(DirectSolver::new("SparseLDLSolver", "").unwrap()));
    let mut sys = Sys::new(a.clone());
    let mut x = vec![0.0; 30];
    let st = s.solve(&mut sys, &b, &mut x);
    assert_eq!(st.iterations, 1);
    assert!(residual(&a, &x, &b) < 1e-14, "{}", residual(&a, &x, &b));
    let before = sys.assembled;
    s.solve(&mut sys, &b, &mut x);
    assert_eq!(sys.assembled, before + 1);
}

#[test]
fn ssor_with_omega_one_is_symmetric_gauss_seidel() {
    let a = spd(12, 5);
    let mut sys = Sys::new(a.clone());
    let p = Preconditioner::build(PreconditionerKind::Ssor { omega: 1.0 }, &sys.assemble());
    let r: Vec<f64> = (0..12).map(|i| i as f64 - 4.0).collect();
    let mut z = vec![0.0; 12];
    p.apply(&r, &mut z);
    // SOFA's sweeps (backward, then forward): (D + U) D⁻¹ (D + L) z = r
    let n = 12;
    let mut t = vec![0.0; n];
    for i in 0..n {
        t[i] = (0..=i).map(|j| a[i][j] * z[j]).sum();
    }
    for i in 0..n {
        t[i] /= a[i][i];
    }
    for i in 0..n {
        let v: f64 = (i..n).map(|j| a[i][j] * t[j]).sum();
        assert!((v - r[i]).abs() < 1e-10);
    }
}

#[test]
fn minres_solves_to_tolerance_and_warm_starts() {
    let a = spd(30, 9);
    let b: Vec<f64> = (0..30).map(|i| (i as f64 * 0.7).sin()).collect();
    let mut s = MinResLinearSolver::new("").unwrap();
    s.max_iter = 300;
    s.tolerance = 1e-14;
    let mut sys = Sys::new(a.clone());
    let mut x = vec![0.0; 30];
    let st = s.solve(&mut sys, &b, &mut x);
    assert!(residual(&a, &x, &b) < 1e-9, "{}", residual(&a, &x, &b));
    assert!(st.iterations > 1);
    // starting from the solution: no work to do
    let st2 = s.solve(&mut sys, &b, &mut x);
    assert!(st2.iterations <= 1);
}

/// Solve for `b` from `x` (a warm start), x updated: the solution's bits and the stats.
fn solve_bits(
    s: &mut dyn LinearSolver,
    sys: &mut Sys,
    b: &[f64],
    x: &mut [f64],
) -> (Vec<u64>, usize, u64) {
    let st = s.solve(sys, b, x);
    let bits = x.iter().map(|v| v.to_bits()).collect();
    (bits, st.iterations, st.residual.to_bits())
}

/// `s`, solved once, then edited with `after`: its answer. Then its next solve, that of
/// `fresh` (initialised with the new values) and that of `old` (the old values), from the
/// same warm start.
fn edit_and_solve<T: Component + LinearSolver>(
    mut s: T,
    mut fresh: T,
    mut old: T,
    a: &[Vec<f64>],
    after: &[(&str, &str)],
) {
    let b1: Vec<f64> = (0..a.len()).map(|i| (i as f64).sin()).collect();
    let b2: Vec<f64> = (0..a.len()).map(|i| (0.3 * i as f64).cos()).collect();
    let mut sys = Sys::new(a.to_vec());
    let mut x = vec![0.0; a.len()];
    solve_bits(&mut s, &mut sys, &b1, &mut x);
    assert_eq!(edit(&mut s, after), Reaction::Updated, "{after:?}");
    let (mut xf, mut xo) = (x.clone(), x.clone());
    let got = solve_bits(&mut s, &mut sys, &b2, &mut x);
    assert_eq!(
        got,
        solve_bits(&mut fresh, &mut sys, &b2, &mut xf),
        "{after:?}"
    );
    assert_ne!(
        got,
        solve_bits(&mut old, &mut sys, &b2, &mut xo),
        "{after:?}"
    );
}

/// Editing the iteration count or the tolerance of a PCGLinearSolver (with or without a
/// preconditioner) or a MinResLinearSolver is taken in place: its next solve equals bit
/// for bit that of a solver initialised with the new values; other Data re-initialise it.
#[test]
fn edits_update_in_place_pcg_and_minres_criteria() {
    let before = [("iterations", "100"), ("tolerance", "1e-20")];
    let edits: [&[(&str, &str)]; 3] = [
        &[("iterations", "3")],
        &[("tolerance", "1e-4")],
        &[("iterations", "5"), ("tolerance", "1e-6")],
    ];
    let a = spd(30, 13);
    fn fresh_attrs<'a>(
        before: &[(&'a str, &'a str)],
        after: &[(&'a str, &'a str)],
    ) -> Vec<(&'a str, &'a str)> {
        [before, after].concat()
    }
    for kind in [
        None,
        Some(PreconditionerKind::Jacobi),
        Some(PreconditionerKind::Ssor { omega: 1.2 }),
    ] {
        let pcg = |attrs: &[(&str, &str)]| {
            let mut s = linear_initialised(PcgLinearSolver::new("").unwrap(), attrs);
            s.kind = kind;
            s
        };
        for after in edits {
            edit_and_solve(
                pcg(&before),
                pcg(&fresh_attrs(&before, after)),
                pcg(&before),
                &a,
                after,
            );
        }
    }
    let minres =
        |attrs: &[(&str, &str)]| linear_initialised(MinResLinearSolver::new("").unwrap(), attrs);
    for after in edits {
        edit_and_solve(
            minres(&before),
            minres(&fresh_attrs(&before, after)),
            minres(&before),
            &a,
            after,
        );
    }
    for mut s in [
        Box::new(linear_initialised(
            PcgLinearSolver::new("").unwrap(),
            &before,
        )) as Box<dyn Component>,
        Box::new(linear_initialised(
            MinResLinearSolver::new("").unwrap(),
            &before,
        )),
    ] {
        assert_eq!(edit(&mut *s, &[("printLog", "1")]), Reaction::Reinit);
    }
}
