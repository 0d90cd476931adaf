//! Validation against independent expectations (no SOFA reference involved): energy behaviour of
//! time integrators on an undamped spring-mass oscillator.

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions, Simulation};

const K: f64 = 100.0;
const M: f64 = 1.0;

fn oscillator(solver: &str, dt: f64) -> Simulation {
    let scene = format!(
        r#"<Node name="root" dt="{dt}" gravity="0 0 0">
  <DefaultAnimationLoop/>
  <Node name="oscillator">
    {solver}
    <MechanicalObject name="dofs" position="0 0 0  1.1 0 0"/>
    <UniformMass vertexMass="{M}"/>
    <FixedProjectiveConstraint indices="0"/>
    <SpringForceField spring="0 1 {K} 0 1"/>
  </Node>
</Node>"#
    );
    let sim = load_scene_str(
        &scene,
        "oscillator.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(sim.diagnostics.is_empty(), "{:?}", sim.diagnostics);
    sim
}

fn energy(sim: &Simulation) -> f64 {
    let s = sim.scene.states[0].as_ref().unwrap();
    let x = s.vec(VecId::POSITION);
    let v = s.vec(VecId::VELOCITY);
    let ke = 0.5 * M * (v[3] * v[3] + v[4] * v[4] + v[5] * v[5]);
    let d = ((x[3] - x[0]).powi(2) + (x[4] - x[1]).powi(2) + (x[5] - x[2]).powi(2)).sqrt();
    ke + 0.5 * K * (d - 1.0).powi(2)
}

#[test]
fn implicit_euler_dissipates_at_its_theoretical_rate() {
    // backward Euler on x'' = −ω²x multiplies the energy by 1/(1 + ω²h²) per step
    let h = 0.01;
    let mut sim = oscillator(r#"<EulerImplicitSolver/><SparseLDLSolver/>"#, h);
    let e0 = energy(&sim);
    let steps: i32 = 200;
    let mut prev = e0;
    for _ in 0..steps {
        sim.step();
        let e = energy(&sim);
        assert!(
            e <= prev * (1.0 + 1e-12),
            "energy must not grow: {e} > {prev}"
        );
        prev = e;
    }
    let w2h2 = K / M * h * h;
    let expected = (1.0 + w2h2).powi(-steps);
    let ratio = prev / e0;
    assert!(
        (ratio / expected - 1.0).abs() < 1e-6,
        "energy ratio {ratio}, theory {expected}"
    );
}

#[test]
fn symplectic_euler_conserves_energy_without_drift() {
    let h = 0.01;
    let mut sim = oscillator(r#"<EulerExplicitSolver/>"#, h);
    let e0 = energy(&sim);
    let w = (K / M).sqrt();
    let mut worst: f64 = 0.0;
    let mut late: f64 = 0.0;
    for i in 0..20000 {
        sim.step();
        let dev = (energy(&sim) / e0 - 1.0).abs();
        worst = worst.max(dev);
        if i >= 19000 {
            late = late.max(dev);
        }
    }
    // the energy error of symplectic Euler is O(ωh) and bounded: no secular drift
    assert!(
        worst < w * h,
        "energy deviation {worst} exceeds ωh = {}",
        w * h
    );
    assert!(late < w * h, "late deviation {late}: the energy drifts");
    assert!(
        worst > 1e-6,
        "symplectic Euler is not exact: a zero error means the test measures nothing"
    );
}

#[test]
fn explicit_euler_gains_energy() {
    // non-symplectic forward Euler multiplies the energy by (1 + ω²h²) per step
    let h = 0.01;
    let mut sim = oscillator(r#"<EulerExplicitSolver symplectic="0"/>"#, h);
    let e0 = energy(&sim);
    let steps = 200;
    for _ in 0..steps {
        sim.step();
    }
    let expected = (1.0 + K / M * h * h).powi(steps);
    let ratio = energy(&sim) / e0;
    assert!(
        (ratio / expected - 1.0).abs() < 1e-6,
        "energy ratio {ratio}, theory {expected}"
    );
}
