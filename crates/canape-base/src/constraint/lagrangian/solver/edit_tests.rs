//! Unit tests of the constraint solvers' reactions to edits of their Data: a solver edited in
//! place solves exactly as one initialised from scratch with the new values.

use super::*;
use crate::test_support::{check_edit, init_in, scene_with_state};
use canape_core::component::Component;
use canape_core::diag::Severity;
use canape_core::scene::AnyComponent;
use canape_types::DofType;

/// A problem where the solvers' settings show: two 3-row friction contacts coupled by W, one
/// pushed in and one sliding, with a unilateral row between them.
fn problem() -> ConstraintProblem {
    let n = 6;
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            w[i * n + j] = if i == j {
                2.0 + 0.25 * i as f64
            } else {
                0.7 / (1.0 + (i + j) as f64)
            };
        }
    }
    let block = |first_row, mu| Block {
        first_row,
        resolution: Resolution::Friction { mu },
        tolerance: 0.0,
    };
    ConstraintProblem {
        n,
        w,
        dfree: vec![-0.8, 0.6, -0.1, -0.3, -0.9, 0.4],
        blocks: vec![block(0, 0.3), block(3, 0.5)],
        force: vec![0.0; n],
    }
}

/// What a solve gives: the impulses and the stats, as bits.
fn solution(s: &mut dyn ConstraintSolver) -> Vec<u64> {
    let mut p = problem();
    let stats = s.solve(&mut p);
    let mut out: Vec<u64> = p.force.iter().map(|f| f.to_bits()).collect();
    out.extend([
        stats.iterations as u64,
        stats.error.to_bits(),
        stats.converged as u64,
    ]);
    out
}

/// A solver made by `make`, initialised with `before`, then given `after` while it runs: the
/// reaction, and whether its solution changed. When the reaction is [`Reaction::Updated`] its
/// solution must equal bit for bit that of a solver initialised from scratch with `before`
/// then `after`; otherwise it must be that of before the edit.
fn edit<C: Component + Passive + ConstraintSolver + Clone + 'static>(
    make: impl Fn() -> C,
    before: &[(&str, &str)],
    after: &[(&str, &str)],
) -> (Reaction, bool) {
    let (mut scene, root) = scene_with_state(DofType::Vec3, &[0.0; 3]);
    let mut init = |attrs: &[(&str, &str)]| {
        let mut c = make();
        let diags = init_in(
            &mut scene,
            root,
            &mut c,
            |c| AnyComponent::Passive(Box::new(c)),
            attrs,
        );
        let warnings: Vec<_> = diags
            .iter()
            .filter(|d| d.severity != Severity::Note)
            .collect();
        assert!(warnings.is_empty(), "{attrs:?}: {warnings:?}");
        c
    };
    let c = init(before);
    let fresh = || init(&[before, after].concat());
    let e = check_edit(c, after, fresh, |c: &mut C| solution(c), true);
    (e.reaction, e.changed)
}

/// Editing the iteration settings of a running Gauss–Seidel solver (maxIterations, tolerance,
/// sor, regularizationTerm, scaleTolerance, allVerified) updates it in place to exactly what
/// an init with the new values gives; values init warns about, the resolution method and the
/// other Data re-initialise it.
#[test]
fn edits_update_in_place_gauss_seidel_solvers() {
    let up = (Reaction::Updated, true);
    for class in [
        "BlockGaussSeidelConstraintSolver",
        "ProjectedGaussSeidelConstraintSolver",
        "GenericConstraintSolver",
        "NNCGConstraintSolver",
        "UnbuiltGaussSeidelConstraintSolver",
    ] {
        let make = || GaussSeidelConstraintSolver::new(class);
        let few = [("maxIterations", "2"), ("tolerance", "1e-14")];
        assert_eq!(edit(make, &few, &[("maxIterations", "4")]), up, "{class}");
        assert_eq!(edit(make, &few, &[("maxIt", "3")]), up, "{class}");
        // NNCG does not relax its sweeps
        let relaxed = (Reaction::Updated, class != "NNCGConstraintSolver");
        assert_eq!(edit(make, &few, &[("sor", "1.4")]), relaxed, "{class}");
        let reg = [("regularizationTerm", "0.5")];
        assert_eq!(edit(make, &few, &reg), up, "{class}");
        let converging = [("maxIterations", "200"), ("tolerance", "1e-2")];
        let tighter = [("tolerance", "1e-3")];
        assert_eq!(edit(make, &converging, &tighter), up, "{class}");
        let scale = [("scaleTolerance", "0")];
        assert_eq!(edit(make, &converging, &scale), up, "{class}");
        let all = [("allVerified", "1")];
        assert_eq!(edit(make, &converging, &all), up, "{class}");
        // what init warns about goes through init, and so do the other Data
        let re = Reaction::Reinit;
        assert_eq!(edit(make, &few, &[("sor", "2.5")]).0, re, "{class}");
        assert_eq!(edit(make, &few, &[("maxIterations", "-1")]).0, re);
        assert_eq!(edit(make, &few, &[("tolerance", "-1")]).0, re);
        assert_eq!(edit(make, &few, &[("multithreading", "1")]).0, re);
    }
    // GenericConstraintSolver's NNCG takes newtonIterations until maxIterations is set: an
    // edit of maxIterations gives what an init with it does
    let make = || GaussSeidelConstraintSolver::new("GenericConstraintSolver");
    let nncg = [
        ("resolutionMethod", "NonsmoothNonlinearConjugateGradient"),
        ("newtonIterations", "2"),
        ("tolerance", "1e-14"),
    ];
    assert_eq!(edit(make, &nncg, &[("maxIterations", "5")]), up);
    let method = [("resolutionMethod", "UnbuiltGaussSeidel")];
    assert_eq!(edit(make, &nncg, &method).0, Reaction::Reinit);
}

/// Editing tolerance, maxIt, mu, regularizationTerm, minW or maxF of a running
/// LCPConstraintSolver updates it in place to exactly what an init with the new values gives;
/// values init warns about and the other Data re-initialise it.
#[test]
fn edits_update_in_place_lcp_solver() {
    let up = (Reaction::Updated, true);
    let make = LcpConstraintSolver::new;
    for build in ["1", "0"] {
        let few = [("build_lcp", build), ("maxIt", "2"), ("tolerance", "1e-14")];
        assert_eq!(edit(make, &few, &[("maxIt", "5")]), up, "{build}");
        assert_eq!(edit(make, &few, &[("mu", "0.1")]), up, "{build}");
        assert_eq!(edit(make, &few, &[("mu", "0")]), up, "{build}");
        let reg = [("regularizationTerm", "0.5")];
        assert_eq!(edit(make, &few, &reg), up, "{build}");
        let converging = [("build_lcp", build), ("tolerance", "1e-6")];
        let loose = [("tolerance", "0.05")];
        assert_eq!(edit(make, &converging, &loose), up, "{build}");
        // not used by the solve yet: in place, nothing changes
        let unused = (Reaction::Updated, false);
        assert_eq!(edit(make, &few, &[("minW", "0.1"), ("maxF", "3")]), unused);
        let re = Reaction::Reinit;
        assert_eq!(edit(make, &few, &[("mu", "-1")]).0, re, "{build}");
        assert_eq!(edit(make, &few, &[("maxIt", "-3")]).0, re, "{build}");
        assert_eq!(edit(make, &few, &[("tolerance", "-1")]).0, re, "{build}");
        let other = if build == "1" { "0" } else { "1" };
        assert_eq!(edit(make, &few, &[("build_lcp", other)]).0, re);
    }
}
