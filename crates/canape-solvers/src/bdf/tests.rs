//! Tests of BDFOdeSolver: its coefficients, its steps on a mock group and its init.

use super::mock_group::Chain;
use super::*;
use crate::newton::{NewtonRaphsonSolver, NewtonStatus};
use crate::test_util::edit;
use crate::EulerImplicitSolver;
use canape_core::component::Component;
use canape_core::diag::{Diagnostics, Severity};
use canape_core::scene::AnyComponent;

// ---------------------------------------------------------------- coefficients

fn coefs(times: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    coefficients(times, &mut a, &mut b);
    (a, b)
}

fn samples(start: f64, dt: f64, s: usize) -> Vec<f64> {
    let mut t = vec![start];
    for _ in 0..s {
        let last = *t.last().unwrap();
        t.push(last + dt);
    }
    t
}

#[test]
fn constant_step_coefficients_are_the_bdf_table() {
    let table: [(&[f64], f64); 6] = [
        (&[-1.0, 1.0], 1.0),
        (&[1.0 / 3.0, -4.0 / 3.0, 1.0], 2.0 / 3.0),
        (&[-2.0 / 11.0, 9.0 / 11.0, -18.0 / 11.0, 1.0], 6.0 / 11.0),
        (
            &[3.0 / 25.0, -16.0 / 25.0, 36.0 / 25.0, -48.0 / 25.0, 1.0],
            12.0 / 25.0,
        ),
        (
            &[
                -12.0 / 137.0,
                75.0 / 137.0,
                -200.0 / 137.0,
                300.0 / 137.0,
                -300.0 / 137.0,
                1.0,
            ],
            60.0 / 137.0,
        ),
        (
            &[
                10.0 / 147.0,
                -72.0 / 147.0,
                225.0 / 147.0,
                -400.0 / 147.0,
                450.0 / 147.0,
                -360.0 / 147.0,
                1.0,
            ],
            60.0 / 147.0,
        ),
    ];
    // SOFA's test starts and steps, a negative step included
    for (start, dt) in [(0.0, 0.01), (1.5, 0.3), (-2.0, 1.0), (3.0, -0.1)] {
        for (k, (want_a, want_b)) in table.iter().enumerate() {
            let s = k + 1;
            let (a, b) = coefs(&samples(start, dt, s));
            assert_eq!(a.len(), s + 1);
            for (got, want) in a.iter().zip(want_a.iter()) {
                assert!((got - want).abs() < 1e-9, "s={s} {a:?}");
            }
            assert!((b[s] - want_b).abs() < 1e-9, "s={s} {b:?}");
            assert!(b[..s].iter().all(|&x| x == 0.0));
            assert_eq!(a[s], 1.0);
        }
    }
}

#[test]
fn variable_step_coefficients_follow_the_step_ratio() {
    // h_{n−1} = 0.1, h_n = 0.25: ω = 2.5
    let (a, b) = coefs(&[0.0, 0.1, 0.35]);
    let w: f64 = 2.5;
    let d = 1.0 + 2.0 * w;
    assert!((a[0] - w * w / d).abs() < 1e-12, "{a:?}");
    assert!((a[1] + (1.0 + w) * (1.0 + w) / d).abs() < 1e-12, "{a:?}");
    assert!((b[2] - (1.0 + w) / d).abs() < 1e-12, "{b:?}");
    // consistency: Σ a_j = 0
    assert!(a.iter().sum::<f64>().abs() < 1e-12);
}

#[test]
fn too_few_samples_give_no_coefficients() {
    let (a, b) = coefs(&[0.0]);
    assert!(a.is_empty() && b.is_empty());
}

// ---------------------------------------------------------------- solver set-up

/// A solver as init leaves it with these settings, time starting at 0.
fn bdf(order: usize, rm: f64, rs: f64, params: NewtonParams) -> BdfOdeSolver {
    let mut s = BdfOdeSolver::new();
    s.order = order;
    s.rayleigh_mass = rm;
    s.rayleigh_stiffness = rs;
    s.params = params;
    s.valid = true;
    s.started = true;
    s.times.push_back(0.0);
    s
}

fn run(solver: &mut dyn OdeSolver, ops: &mut Chain, dt: f64, steps: usize) -> Vec<[f64; 2]> {
    (0..steps)
        .map(|_| {
            solver.solve(ops, dt);
            [ops.val(VecId::POSITION)[0], ops.val(VecId::VELOCITY)[0]]
        })
        .collect()
}

#[test]
fn order_two_free_fall_is_backward_euler_with_two_thirds_of_the_step() {
    // SOFA's aliased history (module doc): after the first (order 1) step,
    // v_{n+1} = v_n + (2/3)·h·g and x_{n+1} = x_n + (2/3)·h·v_{n+1}
    let mut ops = Chain::falling(2.0, -10.0);
    let mut s = bdf(2, 0.0, 0.0, NewtonParams::default());
    let got = run(&mut s, &mut ops, 0.01, 4);
    let v = [-0.1, -0.1 - 0.2 / 3.0, -0.1 - 0.4 / 3.0, -0.3];
    let x = [
        -0.001,
        -0.0021111111111111,
        -0.0036666666666667,
        -0.0056666666666667,
    ];
    for k in 0..4 {
        assert!((got[k][1] - v[k]).abs() < 1e-12, "v {k}: {:?}", got[k]);
        assert!((got[k][0] - x[k]).abs() < 1e-12, "x {k}: {:?}", got[k]);
    }
    // a true BDF2 would give v = −0.2 at the second step
    assert!((got[1][1] + 0.2).abs() > 0.03);
    assert_eq!(
        s.report().status,
        NewtonStatus::ConvergedResidualSuccessiveRatio
    );
    let (a, b) = s.last_coefficients();
    assert_eq!(a.len(), 3);
    assert!((b[2] - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(ops.live, 0);
}

#[test]
fn order_three_ramps_up_through_orders_one_and_two() {
    let mut ops = Chain::falling(1.0, -10.0);
    let mut s = bdf(3, 0.0, 0.0, NewtonParams::default());
    assert_eq!(s.next_order(), 1);
    let got = run(&mut s, &mut ops, 0.01, 4);
    assert_eq!(s.next_order(), 3);
    // steps of h, 2/3·h, 6/11·h, 6/11·h
    let v2 = -0.1 - 0.2 / 3.0;
    let v = [-0.1, v2, v2 - 0.6 / 11.0, v2 - 1.2 / 11.0];
    for k in 0..4 {
        assert!((got[k][1] - v[k]).abs() < 1e-12, "{k}: {got:?}");
    }
    // the samples kept are the last four times
    let times: Vec<f64> = s.times.iter().copied().collect();
    assert_eq!(times.len(), 4);
    assert!((times[0] - 0.01).abs() < 1e-15 && (times[3] - 0.04).abs() < 1e-15);
}

/// SOFA's NewtonRaphsonSolver_test: one Newton iteration, one line-search try and every
/// threshold off: v = g·dt and x = x_0 + v·dt at each step, DivergedMaxIterations.
#[test]
fn order_one_free_fall_with_a_single_iteration() {
    let mut ops = Chain::falling(1.0, -1.0);
    ops.vecs.insert(VecId::POSITION, vec![1.0]);
    ops.rest = vec![1.0];
    let p = NewtonParams {
        max_iterations: 1,
        max_line_search: 1,
        relative_successive: 0.0,
        relative_initial: 0.0,
        absolute_residual: 0.0,
        warn_diverge: false,
        ..NewtonParams::default()
    };
    let mut s = bdf(1, 0.0, 0.0, p);
    let (mut x, mut v) = (1.0, 0.0);
    for _ in 0..10 {
        s.solve(&mut ops, 0.1);
        v -= 0.1; // g·dt with g = −1
        x += v * 0.1;
        assert!((ops.val(VecId::VELOCITY)[0] - v).abs() < 1e-14);
        assert!((ops.val(VecId::POSITION)[0] - x).abs() < 1e-14);
        assert_eq!(s.report().status, NewtonStatus::DivergedMaxIterations);
        assert!(s.report().warnings.is_empty());
    }
}

#[test]
fn no_force_is_an_equilibrium_and_nothing_moves() {
    let mut ops = Chain::falling(1.0, 0.0);
    ops.vecs.insert(VecId::POSITION, vec![1.0]);
    ops.rest = vec![1.0];
    let mut s = bdf(1, 0.0, 0.0, NewtonParams::default());
    s.solve(&mut ops, 0.1);
    assert_eq!(s.report().status, NewtonStatus::ConvergedEquilibrium);
    assert_eq!(ops.val(VecId::POSITION), [1.0]);
    assert_eq!(ops.val(VecId::VELOCITY), [0.0]);
}

fn euler_implicit(rm: f64, rs: f64) -> EulerImplicitSolver {
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    let placeholder = AnyComponent::Ode(Box::new(EulerImplicitSolver::new()));
    let id = scene.add_component(root, "euler", placeholder, None);
    let mut e = EulerImplicitSolver::new();
    e.data_mut()
        .set_str("rayleighMass", &rm.to_string())
        .unwrap();
    e.data_mut()
        .set_str("rayleighStiffness", &rs.to_string())
        .unwrap();
    let mut diags = Diagnostics::default();
    e.init(&mut InitContext {
        scene: &scene,
        node: root,
        id,
        diags: &mut diags,
    });
    e
}

#[test]
fn order_one_is_euler_implicit_on_linear_springs() {
    let (rm, rs, dt) = (0.01, 0.01, 0.01);
    for fixed in [vec![], vec![0]] {
        let mut a = Chain::springs(1000.0, 50.0, -9.81);
        let mut b = Chain::springs(1000.0, 50.0, -9.81);
        // start away from equilibrium and moving
        for ops in [&mut a, &mut b] {
            ops.vecs.insert(VecId::POSITION, vec![0.0, 1.3]);
            ops.vecs.insert(VecId::VELOCITY, vec![0.0, -0.5]);
            ops.fixed = fixed.clone();
        }
        // the initial-equilibrium test off: with it, a step whose initial guess
        // x_n + h·v_n already has ‖r2‖ ≤ 1e-5 (as the free DOF passes its equilibrium)
        // keeps that explicit guess, as SOFA does
        let newton = NewtonParams {
            absolute_residual: 0.0,
            ..NewtonParams::default()
        };
        let mut bdf1 = bdf(1, rm, rs, newton);
        let mut euler = euler_implicit(rm, rs);
        let mut moved = 0.0f64;
        for _ in 0..200 {
            bdf1.solve(&mut a, dt);
            euler.solve(&mut b, dt);
            for v in [VecId::POSITION, VecId::VELOCITY] {
                for (p, q) in a.val(v).iter().zip(b.val(v)) {
                    assert!((p - q).abs() < 1e-12, "{:?} vs {:?}", a.val(v), b.val(v));
                }
            }
            moved = moved.max((a.val(VecId::POSITION)[1] - 1.3).abs());
        }
        assert!(moved > 0.1, "{moved}");
        if !fixed.is_empty() {
            assert_eq!(a.val(VecId::POSITION)[0], 0.0);
        }
    }
}

#[test]
fn higher_orders_damp_a_spring_less_per_step_than_order_one_with_the_same_dt() {
    // the shortened effective step (b_s·h) integrates less time per step: after the same
    // number of steps the order-2 oscillator has advanced less phase
    let run_order = |order| {
        let mut ops = Chain::new(&[1.0], vec![vec![-1.0]], &[0.0], 0.0);
        ops.vecs.insert(VecId::POSITION, vec![1.0]);
        let mut s = bdf(order, 0.01, 0.01, NewtonParams::default());
        run(&mut s, &mut ops, 0.01, 100)
    };
    let (o1, o2) = (run_order(1), run_order(2));
    // x ≈ cos(t): order 1 after t = 1, order 2 after ≈ 0.01 + 99·(2/3)·0.01 ≈ 0.67
    assert!((o1[99][0] - 1f64.cos()).abs() < 0.02, "{:?}", o1[99]);
    assert!((o2[99][0] - 0.67f64.cos()).abs() < 0.02, "{:?}", o2[99]);
}

#[test]
fn an_invalid_solver_or_a_zero_step_does_nothing() {
    let mut ops = Chain::falling(1.0, -10.0);
    let mut s = bdf(2, 0.0, 0.0, NewtonParams::default());
    s.solve(&mut ops, 0.0);
    s.solve(&mut ops, f64::NAN);
    assert_eq!(ops.val(VecId::VELOCITY), [0.0]);
    assert_eq!(s.next_order(), 1);
    s.valid = false;
    s.solve(&mut ops, 0.01);
    assert_eq!(ops.val(VecId::VELOCITY), [0.0]);
}

// ---------------------------------------------------------------- init

fn init_bdf(
    scene: &mut Scene,
    node: NodeId,
    attrs: &[(&str, &str)],
) -> (BdfOdeSolver, Diagnostics) {
    let placeholder = AnyComponent::Ode(Box::new(BdfOdeSolver::new()));
    let id = scene.add_component(node, "bdf", placeholder, None);
    let mut s = BdfOdeSolver::new();
    for (k, v) in attrs {
        s.data_mut().set_str(k, v).unwrap();
    }
    let mut diags = Diagnostics::default();
    s.init(&mut InitContext {
        scene,
        node,
        id,
        diags: &mut diags,
    });
    (s, diags)
}

fn messages(d: &Diagnostics, severity: Severity) -> Vec<String> {
    d.iter()
        .filter(|x| x.severity == severity)
        .map(|x| x.message.clone())
        .collect()
}

fn add_newton(scene: &mut Scene, node: NodeId, iterations: &str) -> ComponentId {
    let mut nr = NewtonRaphsonSolver::new();
    nr.data_mut()
        .set_str("maxNbIterationsNewton", iterations)
        .unwrap();
    scene.add_component(node, "newton", AnyComponent::Passive(Box::new(nr)), None)
}

#[test]
fn without_a_newton_solver_init_reports_an_error_and_solve_does_nothing() {
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    let (mut s, d) = init_bdf(&mut scene, root, &[("order", "2")]);
    assert_eq!(
        messages(&d, Severity::Error),
        ["A Newton-Raphson solver is required by this component but has not been found."]
    );
    let mut ops = Chain::falling(1.0, -10.0);
    s.solve(&mut ops, 0.01);
    assert_eq!(ops.val(VecId::VELOCITY), [0.0]);
}

#[test]
fn init_finds_the_newton_solver_below_and_checks_the_order() {
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    let child = scene.add_node("child", Some(root));
    let nr = add_newton(&mut scene, child, "4");
    scene.time = 0.25;
    let (s, d) = init_bdf(&mut scene, root, &[("order", "0"), ("rayleighMass", "0.5")]);
    assert!(!d.has_errors());
    assert_eq!(
        messages(&d, Severity::Warning),
        ["The method cannot have order 0. Setting it to 1."]
    );
    assert_eq!(s.data.get(s.d.order), 1);
    assert_eq!((s.order, s.rayleigh_mass), (1, 0.5));
    assert_eq!(s.newton_solver(), Some(nr));
    assert_eq!(s.params().max_iterations, 4);
    assert_eq!(s.times, [0.25]);

    let (s, d) = init_bdf(&mut scene, root, &[("order", "7")]);
    assert_eq!(
        messages(&d, Severity::Warning),
        ["The method with order 7 is not zero-stable"]
    );
    assert_eq!(s.order, 7);
}

#[test]
fn rigid_states_are_refused_at_init() {
    use canape_core::state::MechanicalObject;
    use canape_types::DofType;
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    add_newton(&mut scene, root, "1");
    let child = scene.add_node("body", Some(root));
    let vec3 = AnyComponent::State(MechanicalObject::new(DofType::Vec3));
    scene.add_component(child, "points", vec3, None);
    let (s, d) = init_bdf(&mut scene, root, &[]);
    assert!(!d.has_errors() && s.valid);
    let other = scene.add_node("frame", Some(root));
    let rigid = AnyComponent::State(MechanicalObject::new(DofType::Rigid3));
    scene.add_component(other, "frame", rigid, None);
    let (mut s, d) = init_bdf(&mut scene, root, &[]);
    let errors = messages(&d, Severity::Error);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("rigid DOFs"), "{errors:?}");
    let mut ops = Chain::falling(1.0, -10.0);
    s.solve(&mut ops, 0.01);
    assert_eq!(ops.val(VecId::VELOCITY), [0.0]);
}

#[test]
fn a_second_init_keeps_the_samples_and_the_ramp() {
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    add_newton(&mut scene, root, "1");
    let (mut s, _) = init_bdf(&mut scene, root, &[("order", "2")]);
    let mut ops = Chain::falling(1.0, -10.0);
    s.solve(&mut ops, 0.01);
    assert_eq!(s.next_order(), 2);
    let placeholder = AnyComponent::Ode(Box::new(BdfOdeSolver::new()));
    let id = scene.add_component(root, "again", placeholder, None);
    let mut diags = Diagnostics::default();
    s.init(&mut InitContext {
        scene: &scene,
        node: root,
        id,
        diags: &mut diags,
    });
    assert_eq!(s.next_order(), 2);
    assert_eq!(s.times.len(), 2);
}

// ---------------------------------------------------------------- edits

/// Editing the Rayleigh coefficients of a running solver is taken in place: its next steps
/// equal bit for bit those of the same solver re-initialised with the new values (init keeps
/// the samples and the ramp), and, from the first step, those of a solver initialised from
/// scratch with them; other Data re-initialise it.
#[test]
fn edits_update_in_place_bdf_rayleigh() {
    let before = [
        ("order", "2"),
        ("rayleighMass", "0.1"),
        ("rayleighStiffness", "0.05"),
    ];
    let edits: [&[(&str, &str)]; 3] = [
        &[("rayleighMass", "0.3")],
        &[("rayleighStiffness", "0.2")],
        &[("rayleighMass", "0"), ("rayleighStiffness", "0.01")],
    ];
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    add_newton(&mut scene, root, "3");
    let start = || {
        let mut ops = Chain::springs(1000.0, 50.0, -9.81);
        ops.vecs.insert(VecId::POSITION, vec![0.0, 1.3]);
        ops.vecs.insert(VecId::VELOCITY, vec![0.2, -0.5]);
        ops
    };
    for after in edits {
        let fresh_attrs = [before.as_slice(), after].concat();
        // edited after some steps, against the same solver re-initialised
        let (mut s, d) = init_bdf(&mut scene, root, &before);
        assert!(d.is_empty(), "{d:?}");
        let mut ops = start();
        run(&mut s, &mut ops, 0.01, 3);
        let (mut reinit, mut old) = (s.clone(), s.clone());
        assert_eq!(edit(&mut s, after), Reaction::Updated, "{after:?}");
        for (k, v) in after {
            reinit.data_mut().set_str(k, v).unwrap();
        }
        let placeholder = AnyComponent::Ode(Box::new(BdfOdeSolver::new()));
        let id = scene.add_component(root, "reinit", placeholder, None);
        let mut diags = Diagnostics::default();
        reinit.init(&mut InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        });
        let (mut ops_r, mut ops_o) = (ops.clone(), ops.clone());
        run(&mut s, &mut ops, 0.01, 3);
        run(&mut reinit, &mut ops_r, 0.01, 3);
        run(&mut old, &mut ops_o, 0.01, 3);
        assert_eq!(ops.state_bits(), ops_r.state_bits(), "{after:?}");
        assert_ne!(ops.state_bits(), ops_o.state_bits(), "{after:?}");
        // edited before its first step, against one initialised from scratch
        let (mut s, _) = init_bdf(&mut scene, root, &before);
        assert_eq!(edit(&mut s, after), Reaction::Updated, "{after:?}");
        let (mut fresh, _) = init_bdf(&mut scene, root, &fresh_attrs);
        let (mut ops, mut ops_f) = (start(), start());
        run(&mut s, &mut ops, 0.01, 4);
        run(&mut fresh, &mut ops_f, 0.01, 4);
        assert_eq!(ops.state_bits(), ops_f.state_bits(), "{after:?}");
    }
    let (mut s, _) = init_bdf(&mut scene, root, &before);
    assert_eq!(edit(&mut s, &[("order", "3")]), Reaction::Reinit);
}
