//! Explicit schemes beyond forward Euler: RungeKutta4Solver, RungeKutta2Solver and
//! CentralDifferenceSolver converge at their orders on a harmonic oscillator, keep fixed points
//! fixed through their stages, and RungeKutta4 integrates a Rigid3 body (its stages hold
//! coordinate vectors with quaternions). VariationalSymplecticSolver is the implicit midpoint
//! rule on the momentum (second order, the oscillator's energy kept exactly) or, explicit,
//! symplectic Euler (first order); DampVelocitySolver scales the velocities after the
//! integrator.

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions, Simulation};

fn load(xml: &str) -> Simulation {
    let sim = load_scene_str(
        xml,
        "explicit-test.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(
        !sim.diagnostics.has_errors(),
        "{:?}",
        sim.diagnostics.iter().collect::<Vec<_>>()
    );
    sim
}

/// Error at t = 1 of a unit mass on a spring of stiffness 100 (ω = 10) stretched by 0.1, the
/// other end a fixed point: x(t) = 1 + 0.1·cos(10t).
fn oscillator_error(solver: &str, dt: f64) -> f64 {
    let mut sim = load(&format!(
        r#"<Node name="root" dt="{dt}" gravity="0 0 0">
  {solver}
  <MechanicalObject position="0 0 0 1.1 0 0"/>
  <UniformMass vertexMass="1"/>
  <SpringForceField spring="0 1 100 0 1"/>
  <FixedProjectiveConstraint indices="0"/>
</Node>"#
    ));
    let steps = (1.0 / dt).round() as usize;
    for _ in 0..steps {
        sim.step();
    }
    let x = sim.scene.states[0].as_ref().unwrap().vec(VecId::POSITION);
    assert_eq!(
        &x[0..3],
        &[0.0, 0.0, 0.0],
        "{solver}: the fixed point moved"
    );
    assert_eq!((x[4], x[5]), (0.0, 0.0), "{solver}");
    (x[3] - (1.0 + 0.1 * (10.0f64).cos())).abs()
}

#[test]
fn runge_kutta_and_central_difference_converge_at_their_orders() {
    for (solver, order) in [
        ("<RungeKutta4Solver/>", 4.0),
        ("<RungeKutta2Solver/>", 2.0),
        ("<CentralDifferenceSolver/>", 1.0),
    ] {
        let (e1, e2) = (
            oscillator_error(solver, 0.01),
            oscillator_error(solver, 0.005),
        );
        let rate = (e1 / e2).log2();
        eprintln!("{solver}: error {e1:.3e} -> {e2:.3e}, observed order {rate:.2}");
        assert!(
            (rate - order).abs() < 0.3,
            "{solver}: observed order {rate} (errors {e1:e}, {e2:e}), expected {order}"
        );
    }
}

#[test]
fn central_difference_rayleigh_mass_damps() {
    let run = |r: &str| {
        let mut sim = load(&format!(
            r#"<Node name="root" dt="0.001" gravity="0 0 0">
  <CentralDifferenceSolver rayleighMass="{r}"/>
  <MechanicalObject position="0 0 0 1.1 0 0"/>
  <UniformMass vertexMass="1"/>
  <SpringForceField spring="0 1 100 0 1"/>
  <FixedProjectiveConstraint indices="0"/>
</Node>"#
        ));
        for _ in 0..3000 {
            sim.step();
        }
        let s = sim.scene.states[0].as_ref().unwrap();
        let (x, v) = (s.vec(VecId::POSITION)[3], s.vec(VecId::VELOCITY)[3]);
        // energy of the oscillation
        0.5 * v * v + 50.0 * (x - 1.0) * (x - 1.0)
    };
    let (e0, e1) = (run("0"), run("1"));
    // undamped: the energy 0.5 stays within 1 %; damped with rate 1/s over 3 s: e^-3
    assert!((e0 - 0.5).abs() < 5e-3, "undamped energy {e0}");
    assert!(
        (e1 / 0.5 - (-3.0f64).exp()).abs() < 0.01,
        "damped energy {e1}"
    );
}

#[test]
fn runge_kutta4_turns_a_rigid_body() {
    let mut sim = load(
        r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <RungeKutta4Solver/>
  <MechanicalObject template="Rigid3" position="1 2 3 0 0 0 1" velocity="0.5 0 0 0 0 2"/>
  <UniformMass template="Rigid3" vertexMass="1"/>
</Node>"#,
    );
    for _ in 0..100 {
        sim.step();
    }
    let x = sim.scene.states[0].as_ref().unwrap().vec(VecId::POSITION);
    // translation at 0.5/s and a turn about z at 2 rad/s for 1 s
    let want = [1.5, 2.0, 3.0, 0.0, 0.0, (1.0f64).sin(), (1.0f64).cos()];
    for (k, (a, b)) in x.iter().zip(want).enumerate() {
        assert!((a - b).abs() < 1e-9, "coordinate {k}: {a} vs {b} ({x:?})");
    }
}

#[test]
fn newmark_average_acceleration_is_second_order_and_keeps_energy() {
    let solver = r#"<NewmarkImplicitSolver/><CGLinearSolver iterations="100" tolerance="1e-20" threshold="1e-20"/>"#;
    let (e1, e2) = (
        oscillator_error(solver, 0.01),
        oscillator_error(solver, 0.005),
    );
    let rate = (e1 / e2).log2();
    eprintln!("Newmark: error {e1:.3e} -> {e2:.3e}, observed order {rate:.2}");
    assert!((rate - 2.0).abs() < 0.3, "observed order {rate}");
    // β = 1/4, γ = 1/2 conserves the oscillator's energy (trapezoidal rule) over many periods
    let mut sim = load(&format!(
        r#"<Node name="root" dt="0.05" gravity="0 0 0">
  {solver}
  <MechanicalObject position="0 0 0 1.1 0 0"/>
  <UniformMass vertexMass="1"/>
  <SpringForceField spring="0 1 100 0 1"/>
  <FixedProjectiveConstraint indices="0"/>
</Node>"#
    ));
    for _ in 0..2000 {
        sim.step();
    }
    let s = sim.scene.states[0].as_ref().unwrap();
    let (x, v) = (s.vec(VecId::POSITION)[3], s.vec(VecId::VELOCITY)[3]);
    let e = 0.5 * v * v + 50.0 * (x - 1.0) * (x - 1.0);
    assert!((e - 0.5).abs() < 5e-3, "energy {e} after 100 s");
}

const VARIATIONAL: &str = r#"<VariationalSymplecticSolver newtonError="1e-14" steps="4"/><CGLinearSolver iterations="100" tolerance="1e-24" threshold="1e-24"/>"#;

#[test]
fn variational_symplectic_converges_at_its_orders() {
    for (solver, order) in [
        (VARIATIONAL, 2.0),
        (
            r#"<VariationalSymplecticSolver explicitIntegration="1"/>"#,
            1.0,
        ),
    ] {
        let (e1, e2) = (
            oscillator_error(solver, 0.01),
            oscillator_error(solver, 0.005),
        );
        let rate = (e1 / e2).log2();
        eprintln!("{solver}: error {e1:.3e} -> {e2:.3e}, observed order {rate:.2}");
        assert!(
            (rate - order).abs() < 0.3,
            "{solver}: observed order {rate} (errors {e1:e}, {e2:e}), expected {order}"
        );
    }
}

/// The implicit scheme is the midpoint rule on (q, p): p_{k+1} = p_k + h f(q_mid) and
/// v_{k+1} = (p_k + h/2 f(q_mid)) / m, so p_{k+1} = 2 m v_{k+1} − p_k (p_0 = m v_0) can be read
/// back from the velocities; for a linear oscillator p²/2m + k q²/2 is then kept to round-off,
/// where implicit Euler loses most of it.
#[test]
fn variational_symplectic_keeps_the_oscillator_energy() {
    let run = |solver: &str| {
        let mut sim = load(&format!(
            r#"<Node name="root" dt="0.05" gravity="0 0 0">
  {solver}
  <MechanicalObject position="0 0 0 1.1 0 0"/>
  <UniformMass vertexMass="1"/>
  <SpringForceField spring="0 1 100 0 1"/>
  <FixedProjectiveConstraint indices="0"/>
</Node>"#
        ));
        let mut p = 0.0;
        let mut worst: f64 = 0.0;
        for _ in 0..2000 {
            sim.step();
            let s = sim.scene.states[0].as_ref().unwrap();
            let (x, v) = (s.vec(VecId::POSITION)[3], s.vec(VecId::VELOCITY)[3]);
            p = 2.0 * v - p;
            let e = 0.5 * p * p + 50.0 * (x - 1.0) * (x - 1.0);
            worst = worst.max((e - 0.5).abs());
        }
        worst
    };
    let variational = run(VARIATIONAL);
    assert!(variational < 1e-9, "energy drift {variational:e}");
    let euler = run(
        r#"<EulerImplicitSolver/><CGLinearSolver iterations="100" tolerance="1e-24" threshold="1e-24"/>"#,
    );
    assert!(euler > 0.1, "implicit Euler's energy drift {euler:e}");
}

#[test]
fn damp_velocity_solver_scales_after_the_integrator_and_cuts_small_velocities() {
    let mut sim = load(
        r#"<Node name="root" dt="0.05" gravity="0 0 0">
  <EulerImplicitSolver/>
  <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-12"/>
  <DampVelocitySolver rate="0.9" threshold="0.01"/>
  <MechanicalObject position="0 0 0 1 0 0" velocity="1 0 0 0.005 0.005 0"/>
  <UniformMass vertexMass="1"/>
</Node>"#,
    );
    sim.step();
    let s = sim.scene.states[0].as_ref().unwrap();
    let v = s.vec(VecId::VELOCITY);
    let k = (-0.9f64 * 0.05).exp();
    assert!((v[0] - k).abs() < 1e-14, "{v:?}");
    assert_eq!(&v[3..6], &[0.0, 0.0, 0.0], "{v:?}");
    // the position moved with the integrator's velocity (1), before the damping
    let x = s.vec(VecId::POSITION);
    assert!((x[0] - 0.05).abs() < 1e-14, "{x:?}");
}
