//! The same scene gives byte-identical state files run after run.

mod common;

use canape::record::{run_recorded, Recorder};
use canape::{load_scene, load_scene_str, LoadOptions, Simulation};

fn states_bytes(mut sim: Simulation, steps: usize, tag: &str) -> Vec<Vec<u8>> {
    let mut rec = Recorder::new(&sim, true, true);
    run_recorded(&mut sim, steps, &mut rec, true, |_, _| {});
    let dir = std::env::temp_dir().join(format!("canape-det-{}-{tag}", std::process::id()));
    let files = rec.write(&dir).unwrap();
    let out = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
fn demo_scene_is_deterministic() {
    let load = || {
        load_scene_str(
            canape::DEMO_SCENE,
            "det.scn",
            &std::env::temp_dir(),
            &LoadOptions::default(),
        )
        .unwrap()
    };
    let a = states_bytes(load(), 20, "a");
    let b = states_bytes(load(), 20, "b");
    assert!(!a.is_empty());
    assert_eq!(a, b);
}

#[test]
fn sofa_scene_is_deterministic() {
    let Some(sofa) = common::require_sofa("determinism") else {
        return;
    };
    let p =
        sofa.join("examples/Component/SolidMechanics/FEM/TetrahedronFEMForceField_assemble.scn");
    let a = states_bytes(load_scene(&p, &LoadOptions::default()).unwrap(), 30, "c");
    let b = states_bytes(load_scene(&p, &LoadOptions::default()).unwrap(), 30, "d");
    assert_eq!(a.len(), 2);
    assert_eq!(a, b);
}

#[test]
fn independent_simulations_coexist() {
    // two simulations in one process, stepped alternately, equal a lone one
    let load = || {
        load_scene_str(
            canape::DEMO_SCENE,
            "coexist.scn",
            &std::env::temp_dir(),
            &LoadOptions::default(),
        )
        .unwrap()
    };
    let (mut s1, mut s2, mut lone) = (load(), load(), load());
    for _ in 0..5 {
        s1.step();
        s2.step();
        s2.step();
        lone.step();
    }
    let x = |s: &Simulation| {
        s.scene.states[0]
            .as_ref()
            .unwrap()
            .vec(canape::core::state::VecId::POSITION)
            .to_vec()
    };
    assert_eq!(x(&s1), x(&lone));
    assert_ne!(x(&s2), x(&lone));
}

/// Element loops split over threads: bit-identical run to run for a given thread count, and
/// within round-off of the one-thread result (the reduction order differs between counts).
#[test]
fn threaded_steps_are_deterministic() {
    use canape::bench::BeamElement;
    for (elem, size) in [(BeamElement::Tetra, 30_000), (BeamElement::Hexa, 12_000)] {
        threaded_case(elem, size);
    }
}

fn threaded_case(elem: canape::bench::BeamElement, size: usize) {
    use canape::bench::scaling_beam;
    use canape::core::state::VecId;
    let (text, n) = scaling_beam(elem, size, Some(30));
    assert!(n >= 10_000, "large enough to run in parallel: {n}");
    let run = |threads: usize| {
        let opts = LoadOptions {
            threads,
            ..LoadOptions::default()
        };
        let mut sim = load_scene_str(&text, "beam.scn", &std::env::temp_dir(), &opts).unwrap();
        assert_eq!(sim.threads(), threads);
        for _ in 0..3 {
            sim.step();
        }
        sim.scene.states[0]
            .as_ref()
            .unwrap()
            .vec(VecId::POSITION)
            .to_vec()
    };
    let a = run(2);
    let b = run(2);
    assert_eq!(a, b, "two runs with 2 threads differ");
    let one = run(1);
    let rest = {
        let sim = load_scene_str(
            &text,
            "beam.scn",
            &std::env::temp_dir(),
            &LoadOptions::default(),
        )
        .unwrap();
        sim.scene.states[0]
            .as_ref()
            .unwrap()
            .vec(VecId::POSITION)
            .to_vec()
    };
    let motion = one
        .iter()
        .zip(&rest)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max);
    let diff = a
        .iter()
        .zip(&one)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max);
    assert!(motion > 0.0);
    assert!(
        diff <= 1e-9 * motion.max(1.0),
        "1 vs 2 threads differ by {diff} (motion {motion})"
    );
}
