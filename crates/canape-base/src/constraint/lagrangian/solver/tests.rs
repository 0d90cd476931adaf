//! Unit tests of the Gauss–Seidel constraint solvers.

use super::*;

fn problem(w: &[f64], dfree: &[f64], blocks: Vec<Block>) -> ConstraintProblem {
    let n = dfree.len();
    ConstraintProblem {
        n,
        w: w.to_vec(),
        dfree: dfree.to_vec(),
        blocks,
        force: vec![0.0; n],
    }
}

fn bil(first_row: usize, rows: u8) -> Block {
    Block {
        first_row,
        resolution: Resolution::Bilateral { rows },
        tolerance: 0.0,
    }
}

#[test]
fn bilateral_rows_satisfy_w_f_plus_dfree_zero() {
    // a symmetric positive definite W coupling two 3-line blocks
    let n = 6;
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            w[i * n + j] = if i == j {
                4.0
            } else {
                1.0 / (1.0 + (i + j) as f64)
            };
        }
    }
    let dfree = [0.3, -0.2, 0.1, 0.5, 0.0, -0.4];
    let mut p = problem(&w, &dfree, vec![bil(0, 3), bil(3, 3)]);
    let mut gs = GaussSeidel {
        tolerance: 1e-12,
        ..Default::default()
    };
    let stats = gs.run(&mut p);
    assert!(stats.converged, "{stats:?}");
    for i in 0..n {
        let r: f64 = dfree[i] + (0..n).map(|k| w[i * n + k] * p.force[k]).sum::<f64>();
        assert!(r.abs() < 1e-10, "row {i}: residual {r}");
    }
}

#[test]
fn unilateral_pushes_only() {
    // one contact already separated (dfree > 0) gets no impulse; one in contact is pushed
    // out to zero violation
    let w = [2.0, 0.5, 0.5, 1.0];
    let dfree = [0.4, -0.3];
    let blocks = (0..2)
        .map(|i| Block {
            first_row: i,
            resolution: Resolution::Unilateral,
            tolerance: 0.0,
        })
        .collect();
    let mut p = problem(&w, &dfree, blocks);
    let mut gs = GaussSeidel {
        tolerance: 1e-14,
        ..Default::default()
    };
    gs.run(&mut p);
    assert_eq!(p.force[0], 0.0);
    assert!((p.force[1] - 0.3).abs() < 1e-12, "{:?}", p.force);
}

#[test]
fn friction_stays_in_the_cone() {
    // normal violation −1 with a tangential one: the tangential impulse is capped at μ fn
    let w = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let dfree = [-1.0, 5.0, 0.0];
    let mut p = problem(
        &w,
        &dfree,
        vec![Block {
            first_row: 0,
            resolution: Resolution::Friction { mu: 0.2 },
            tolerance: 0.0,
        }],
    );
    GaussSeidel::default().run(&mut p);
    assert!((p.force[0] - 1.0).abs() < 1e-12);
    let t = (p.force[1].powi(2) + p.force[2].powi(2)).sqrt();
    assert!((t - 0.2).abs() < 1e-12, "{:?}", p.force);
    assert!(p.force[1] < 0.0);
}

#[test]
fn lcp_solver_keeps_contacts_complementary_and_in_the_cone() {
    // two frictionless contacts: one pulled apart (no impulse), one pushed
    let w = [2.0, 0.5, 0.5, 1.0];
    for build in [true, false] {
        let mut lcp = LcpConstraintSolver::new();
        lcp.mu = 0.0;
        lcp.build = build;
        lcp.tolerance = 1e-14;
        let blocks = (0..2)
            .map(|i| Block {
                first_row: i,
                resolution: Resolution::Unilateral,
                tolerance: 0.0,
            })
            .collect();
        let mut p = problem(&w, &[0.4, -0.3], blocks);
        lcp.solve(&mut p);
        assert_eq!(p.force[0], 0.0, "{build}");
        assert!((p.force[1] - 0.3).abs() < 1e-12, "{build}: {:?}", p.force);
    }
    // one contact with friction, sliding: fn from the normal row, |ft| = mu fn
    let w = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    for build in [true, false] {
        let mut lcp = LcpConstraintSolver::new();
        lcp.mu = 0.2;
        lcp.build = build;
        lcp.tolerance = 1e-14;
        let mut p = problem(
            &w,
            &[-1.0, 5.0, 0.0],
            vec![Block {
                first_row: 0,
                resolution: Resolution::Friction { mu: 0.2 },
                tolerance: 0.0,
            }],
        );
        let stats = lcp.solve(&mut p);
        assert!(stats.converged, "{build}");
        assert!((p.force[0] - 1.0).abs() < 1e-12, "{build}: {:?}", p.force);
        assert!((p.force[1] + 0.2).abs() < 1e-12, "{build}: {:?}", p.force);
    }
}

#[test]
fn nncg_and_unbuilt_reach_the_same_solution() {
    let n = 6;
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            w[i * n + j] = if i == j {
                3.0
            } else {
                0.9 / (1.0 + (i * j) as f64)
            };
        }
    }
    let dfree = [0.3, -0.2, 0.1, 0.5, 0.0, -0.4];
    let mut sols = Vec::new();
    for method in [Method::GaussSeidel, Method::Unbuilt, Method::Nncg] {
        let mut p = problem(&w, &dfree, vec![bil(0, 3), bil(3, 3)]);
        let mut gs = GaussSeidel {
            method,
            tolerance: 1e-13,
            ..Default::default()
        };
        gs.run(&mut p);
        sols.push(p.force);
    }
    for s in &sols[1..] {
        for (a, b) in s.iter().zip(&sols[0]) {
            assert!((a - b).abs() < 1e-9, "{s:?} vs {:?}", sols[0]);
        }
    }
}

#[test]
fn augmented_friction_converges_to_the_sticking_contact_and_releases_a_separating_one() {
    // a coupled W; a penetrating contact whose exact solution f = −W⁻¹ d_free is inside the
    // cone: the augmented Lagrangian passes (f −= ε·d) converge to it, as the exact block
    // resolution does
    let w = [2.0, 0.3, 0.1, 0.3, 1.5, 0.2, 0.1, 0.2, 1.0];
    let dfree = [-1.0, 0.1, -0.05];
    let solve = |resolution, dfree: &[f64]| {
        let mut p = problem(
            &w,
            dfree,
            vec![Block {
                first_row: 0,
                resolution,
                tolerance: 0.0,
            }],
        );
        let mut gs = GaussSeidel {
            tolerance: 1e-15,
            max_iterations: 10_000,
            ..Default::default()
        };
        gs.run(&mut p);
        p.force
    };
    let exact = solve(Resolution::Friction { mu: 0.9 }, &dfree);
    let augmented = solve(
        Resolution::AugmentedFriction {
            mu: 0.9,
            epsilon: 0.3,
        },
        &dfree,
    );
    let w3 = nalgebra::Matrix3::from_row_slice(&w);
    let f = -w3.try_inverse().unwrap() * nalgebra::Vector3::from_row_slice(&dfree);
    for k in 0..3 {
        assert!((augmented[k] - f[k]).abs() < 1e-9, "{augmented:?} vs {f:?}");
        assert!((exact[k] - f[k]).abs() < 1e-9, "{exact:?} vs {f:?}");
    }
    assert!(f[0] > 0.0 && (f[1] * f[1] + f[2] * f[2]).sqrt() < 0.9 * f[0]);
    // a separating contact gets no impulse
    let apart = solve(
        Resolution::AugmentedFriction {
            mu: 0.9,
            epsilon: 0.3,
        },
        &[0.5, 0.1, 0.0],
    );
    assert_eq!(apart, vec![0.0, 0.0, 0.0]);
}

#[test]
fn the_sweeps_row_products_equal_the_plain_sum_for_every_length() {
    // integers: every partial sum is exact, so any order must give the plain sum exactly
    for n in 0..23 {
        let row: Vec<f64> = (0..n).map(|k| (k as f64 * 7.0) % 11.0 - 5.0).collect();
        let f: Vec<f64> = (0..n + 3).map(|k| (k as f64 * 3.0) % 13.0 - 6.0).collect();
        let plain: f64 = row.iter().zip(&f).map(|(a, b)| a * b).sum();
        assert_eq!(row_dot(&row, &f), plain, "n = {n}");
    }
}

/// Unilateral contacts on a W coupling every row, with dfree pushing half of them in.
fn coupled_contacts(n: usize, coupling: f64) -> (Vec<f64>, Vec<f64>, Vec<Block>) {
    let mut w = vec![coupling; n * n];
    for i in 0..n {
        w[i * n + i] = 1.0;
    }
    let dfree: Vec<f64> = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                -0.1 * (i + 1) as f64
            } else {
                0.05
            }
        })
        .collect();
    let blocks = (0..n)
        .map(|i| Block {
            first_row: i,
            resolution: Resolution::Unilateral,
            tolerance: 0.0,
        })
        .collect();
    (w, dfree, blocks)
}

#[test]
fn jacobi_reaches_gauss_seidels_solution_and_spectral_correction_keeps_it_stable() {
    // weakly coupled rows: plain Jacobi converges to the complementarity solution GS finds
    let (w, dfree, blocks) = coupled_contacts(6, 0.1);
    let mut gs = GaussSeidel {
        tolerance: 1e-14,
        ..Default::default()
    };
    let mut reference = problem(&w, &dfree, blocks.clone());
    assert!(gs.run(&mut reference).converged);
    let mut jacobi = GaussSeidel {
        method: Method::Jacobi,
        tolerance: 1e-14,
        ..Default::default()
    };
    let mut p = problem(&w, &dfree, blocks);
    let stats = jacobi.run(&mut p);
    assert!(stats.converged && stats.iterations > 2, "{stats:?}");
    for (a, b) in p.force.iter().zip(&reference.force) {
        assert!(
            (a - b).abs() < 1e-12,
            "{:?} vs {:?}",
            p.force,
            reference.force
        );
    }
    // strongly coupled rows (spectral radius 1 + 9·0.6 = 6.4): plain Jacobi overshoots
    // without bound, the spectral correction (ρ = 1.8 / 6.4) converges to GS's solution
    let (w, dfree, blocks) = coupled_contacts(10, 0.6);
    let mut reference = problem(&w, &dfree, blocks.clone());
    assert!(gs.run(&mut reference).converged);
    let mut plain = problem(&w, &dfree, blocks.clone());
    jacobi.max_iterations = 200;
    let stats = jacobi.run(&mut plain);
    assert!(!stats.converged, "{stats:?} {:?}", plain.force);
    jacobi.spectral_correction = Some(1.0);
    jacobi.max_iterations = 100_000;
    let mut p = problem(&w, &dfree, blocks);
    let stats = jacobi.run(&mut p);
    assert!(stats.converged, "{stats:?}");
    for (a, b) in p.force.iter().zip(&reference.force) {
        assert!(
            (a - b).abs() < 1e-10,
            "{:?} vs {:?}",
            p.force,
            reference.force
        );
    }
}

#[test]
fn jacobis_conjugate_residue_pushes_on_along_the_last_change() {
    // one contact, W = 2, dfree = −1: the first iteration gives f = 0.5 (β = 0); the second
    // finds d = 0, so the resolution keeps f, and the conjugate residue adds β·Δf with
    // β = (1/4)^1 = 0.25: f = 0.5 + 0.25·0.5 = 0.625, then the change 0.25 is below the
    // tolerance and the iteration stops
    let block = Block {
        first_row: 0,
        resolution: Resolution::Unilateral,
        tolerance: 0.0,
    };
    let mut p = problem(&[2.0], &[-1.0], vec![block]);
    let mut jacobi = GaussSeidel {
        method: Method::Jacobi,
        max_iterations: 4,
        tolerance: 1.0,
        conjugate_residue: Some(1.0),
        ..Default::default()
    };
    let stats = jacobi.run(&mut p);
    assert!(stats.converged && stats.iterations == 2, "{stats:?}");
    assert!((p.force[0] - 0.625).abs() < 1e-15, "{:?}", p.force);
}
