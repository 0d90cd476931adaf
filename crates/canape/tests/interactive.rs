//! What the viewer relies on: reset to a snapshot reproduces the run bit for bit, Data edits
//! re-initialise the component (and refuse bad values without changing anything), an idle mouse
//! spring changes nothing, an active one pulls, and gravity/dt can be changed at run time.

use canape::core::scene::{AnyComponent, ComponentId};
use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions, Simulation};

fn demo() -> Simulation {
    load_scene_str(
        canape::DEMO_SCENE,
        "demo_beam.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap()
}

fn positions(sim: &Simulation) -> Vec<f64> {
    sim.scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::POSITION)
        .to_vec()
}

fn run(sim: &mut Simulation, n: usize) -> Vec<f64> {
    for _ in 0..n {
        sim.step();
    }
    positions(sim)
}

fn find(sim: &Simulation, class: &str) -> ComponentId {
    sim.scene
        .component_ids()
        .find(|c| sim.scene.info(*c).class == class)
        .unwrap()
}

#[test]
fn reset_reproduces_the_run_bit_for_bit() {
    let mut sim = demo();
    let snap = sim.snapshot();
    let a = run(&mut sim, 15);
    sim.restore(&snap);
    assert_eq!(sim.time(), 0.0);
    let b = run(&mut sim, 15);
    assert_eq!(a, b);
}

#[test]
fn editing_young_modulus_changes_the_motion_and_bad_values_change_nothing() {
    let mut soft = demo();
    let mut stiff = demo();
    let fem = find(&stiff, "TetrahedronFEMForceField");
    stiff.set_data(fem, "youngModulus", "2000000").unwrap();
    let rest = positions(&soft);
    let sag = |x: &[f64]| {
        x.iter()
            .zip(&rest)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    };
    let s = sag(&run(&mut soft, 20));
    let t = sag(&run(&mut stiff, 20));
    assert!(t < 0.2 * s, "stiffer beam sags {t}, soft {s}");

    // refused: unknown Data, unparsable value, value the component rejects at init
    let mut sim = demo();
    let fem = find(&sim, "TetrahedronFEMForceField");
    assert!(sim.set_data(fem, "noSuchData", "1").is_err());
    assert!(sim.set_data(fem, "youngModulus", "abc").is_err());
    assert!(sim.set_data(fem, "poissonRatio", "0.7").is_err());
    let nu = sim
        .scene
        .component(fem)
        .unwrap()
        .data()
        .reals("poissonRatio")
        .to_vec();
    assert_eq!(nu, vec![0.35]);
    // states cannot be edited while running
    let st = find(&sim, "MechanicalObject");
    assert!(sim.set_data(st, "position", "0 0 0").is_err());
    // nothing changed: same trajectory as an untouched simulation
    let mut reference = demo();
    assert_eq!(run(&mut sim, 10), run(&mut reference, 10));
}

#[test]
fn idle_mouse_spring_changes_nothing_and_an_active_one_pulls() {
    use canape::core::component::Component;
    let mut plain = demo();
    let mut with = demo();
    let node = with.scene.info(find(&with, "MechanicalObject")).node;
    let spring = canape_base::gui::mouse::MouseSpringForceField::new();
    assert_eq!(spring.class_name(), "MouseSpringForceField");
    let (id, diags) = with
        .add_component(
            node,
            "mouseSpring",
            AnyComponent::ForceField(Box::new(spring)),
        )
        .expect("the node is live");
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(run(&mut plain, 10), run(&mut with, 10));

    // grab the free end's first point and pull it up by 2
    let x = positions(&with);
    let (i, _) = x
        .chunks(3)
        .enumerate()
        .max_by(|a, b| a.1[0].total_cmp(&b.1[0]))
        .unwrap();
    let target = [x[3 * i], x[3 * i + 1] + 2.0, x[3 * i + 2]];
    let t = format!("{} {} {}", target[0], target[1], target[2]);
    with.set_data_light(
        id,
        &[
            ("index", &i.to_string()),
            ("target", &t),
            ("stiffness", "5000"),
        ],
    )
    .unwrap();
    let d0 = (x[3 * i + 1] - target[1]).abs();
    let y = run(&mut with, 50);
    let d1 = (y[3 * i + 1] - target[1]).abs();
    assert!(d1 < 0.5 * d0, "pulled point: {d0} -> {d1}");
    // an index out of range is refused
    assert!(with.set_data_light(id, &[("index", "999999")]).is_err());
}

#[test]
fn gravity_and_dt_change_at_run_time() {
    let mut sim = demo();
    let rest = positions(&sim);
    sim.set_gravity(canape_types::Vec3::zeros()).unwrap();
    assert_eq!(run(&mut sim, 5), rest, "no gravity, no motion");
    assert!(sim.set_dt(-1.0).is_err());
    assert!(sim.set_dt(f64::NAN).is_err());
    sim.set_dt(0.005).unwrap();
    sim.step();
    assert!((sim.time() - 5.0 * 0.02 - 0.005).abs() < 1e-12);
}

/// Snapshot mid-run, go on N steps; restore, N steps again: the same bytes, whatever the
/// solvers' internal state (factorizations, preconditioners refreshed every few solves).
#[test]
fn restore_mid_run_then_n_steps_equals_n_uninterrupted_steps() {
    let solvers = [
        r#"<SparseLDLSolver name="linear solver"/>"#,
        r#"<CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>"#,
        r#"<PCGLinearSolver iterations="25" tolerance="1e-9" preconditioner="@prec"/><BlockJacobiPreconditioner name="prec"/>"#,
        r#"<PCGLinearSolver iterations="25" tolerance="1e-9" preconditioner="@prec"/><WarpPreconditioner name="prec" linearSolver="@direct"/><SparseLDLSolver name="direct"/><PreconditionedMatrixFreeSystem assemblingRate="3"/>"#,
    ];
    for solver in solvers {
        let text = canape::DEMO_SCENE.replace(r#"<SparseLDLSolver name="linear solver"/>"#, solver);
        assert!(
            text.contains(solver),
            "the demo scene's solver line changed"
        );
        let mut sim = load_scene_str(
            &text,
            "demo.scn",
            &std::env::temp_dir(),
            &LoadOptions::default(),
        )
        .unwrap();
        assert!(
            !sim.diagnostics.has_errors(),
            "{solver}: {:?}",
            sim.diagnostics.iter().collect::<Vec<_>>()
        );
        run(&mut sim, 7);
        let snap = sim.snapshot();
        let a = run(&mut sim, 10);
        sim.restore(&snap);
        let b = run(&mut sim, 10);
        assert_eq!(a, b, "{solver}");
    }
}
