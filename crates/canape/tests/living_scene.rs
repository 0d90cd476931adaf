//! Living scenes: components and nodes added and removed between steps (and by a controller
//! during a step, applied when it ends) give bit for bit the states of scenes built by hand with
//! the same history; stale handles are refused; removing what others use is refused and leaves
//! the simulation running; a fragment with an error adds nothing.

use canape::core::component::{Controller, ControllerError, Event, SceneControl};
use canape::core::data::DataTable;
use canape::core::impl_component;
use canape::core::scene::{AnyComponent, ComponentId, EditError, NodeId, SceneError};
use canape::core::state::VecId;
use canape::Simulation;
use canape::{add_xml, create_component, load_scene_str, load_scene_str_with, LoadOptions};
use std::path::Path;

/// A cantilever of hexahedra under gravity; `{solver}` is the linear solver, `{ff}` an extra
/// component at the end of the beam node, `{node}` an extra child node at its end.
const BASE: &str = r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <DefaultAnimationLoop/>
  <Node name="beam">
    <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
    {solver}
    <RegularGridTopology name="grid" n="5 2 2" min="0 0 0" max="4 1 1"/>
    <MechanicalObject name="dofs"/>
    <UniformMass totalMass="2"/>
    <HexahedronFEMForceField name="fem" youngModulus="2000" poissonRatio="0.3"/>
    <FixedProjectiveConstraint indices="0 5 10 15"/>
    {ff}
    {node}
  </Node>
</Node>"#;

const FF: &str = r#"<ConstantForceField name="push" indices="4 9 14 19" forces="0 0 3"/>"#;
const SKIN: &str = r#"<Node name="skin">
      <MechanicalObject name="pts"/>
      <UniformMass totalMass="0.5"/>
      <SubsetMapping indices="3 8 13 18"/>
    </Node>"#;

const SOLVERS: &[&str] = &[
    r#"<SparseLDLSolver/>"#,
    r#"<CGLinearSolver iterations="40" tolerance="1e-12" threshold="1e-20"/>"#,
];

fn scene(solver: &str, ff: bool, node: bool) -> String {
    BASE.replace("{solver}", solver)
        .replace("{ff}", if ff { FF } else { "" })
        .replace("{node}", if node { SKIN } else { "" })
}

fn load(xml: &str) -> Simulation {
    let sim = load_scene_str(xml, "living.scn", Path::new("."), &LoadOptions::default())
        .expect("scene loads");
    assert!(!sim.diagnostics.has_errors(), "{:?}", sim.diagnostics);
    sim
}

fn find(sim: &Simulation, name: &str) -> ComponentId {
    sim.scene
        .component_ids()
        .find(|c| sim.scene.info(*c).name == name)
        .unwrap_or_else(|| panic!("no component '{name}'"))
}

fn beam_node(sim: &Simulation) -> NodeId {
    sim.scene.info(find(sim, "dofs")).node
}

fn dofs(sim: &Simulation, id: VecId) -> Vec<f64> {
    sim.scene.state(find(sim, "dofs")).unwrap().vec(id).to_vec()
}

/// Carry positions, velocities and time from one simulation to another with the same beam.
fn carry(from: &Simulation, to: &mut Simulation) {
    let (x, v) = (dofs(from, VecId::POSITION), dofs(from, VecId::VELOCITY));
    let id = find(to, "dofs");
    let s = to.scene.state_mut(id).unwrap();
    s.vec_mut(VecId::POSITION).copy_from_slice(&x);
    s.vec_mut(VecId::VELOCITY).copy_from_slice(&v);
    to.scene.time = from.scene.time;
}

fn steps(sim: &mut Simulation, n: usize) {
    for _ in 0..n {
        sim.step();
    }
}

#[test]
fn added_then_removed_equals_the_same_history_built_by_hand() {
    for solver in SOLVERS {
        // live: 10 steps, add a force field and a mapped child node, 10 steps, remove both,
        // 10 steps
        let mut live = load(&scene(solver, false, false));
        steps(&mut live, 10);
        let beam = beam_node(&live);
        let ff = create_component(
            "ConstantForceField",
            "",
            &[("indices", "4 9 14 19"), ("forces", "0 0 3")],
        )
        .unwrap();
        let (ff, diags) = live.add_component(beam, "push", ff).unwrap();
        assert!(diags.is_empty(), "{diags:?}");
        let skin = add_xml(
            &mut live,
            beam,
            SKIN,
            Path::new("."),
            &LoadOptions::default(),
        )
        .expect("the fragment builds");
        assert!(!live.diagnostics.has_errors(), "{:?}", live.diagnostics);
        steps(&mut live, 10);
        let mid = dofs(&live, VecId::POSITION);
        live.remove_component(ff).unwrap();
        live.remove_node(skin).unwrap();
        steps(&mut live, 10);

        // by hand: three scenes, the state carried from one to the next
        let mut a = load(&scene(solver, false, false));
        steps(&mut a, 10);
        let mut b = load(&scene(solver, true, true));
        carry(&a, &mut b);
        steps(&mut b, 10);
        assert_eq!(dofs(&b, VecId::POSITION), mid, "{solver}: while added");
        let mut c = load(&scene(solver, false, false));
        carry(&b, &mut c);
        steps(&mut c, 10);
        assert_eq!(
            dofs(&c, VecId::POSITION),
            dofs(&live, VecId::POSITION),
            "{solver}: after removal"
        );
        assert_eq!(dofs(&c, VecId::VELOCITY), dofs(&live, VecId::VELOCITY));

        // and the additions did act: without them the states differ
        let mut plain = load(&scene(solver, false, false));
        steps(&mut plain, 30);
        assert_ne!(dofs(&plain, VecId::POSITION), dofs(&live, VecId::POSITION));
    }
}

#[test]
fn stale_handles_are_refused() {
    let mut sim = load(&scene(SOLVERS[0], true, true));
    let push = find(&sim, "push");
    let skin = sim.scene.info(find(&sim, "pts")).node;
    sim.remove_component(push).unwrap();
    assert_eq!(
        sim.scene.check_component(push),
        Err(SceneError::StaleComponent(push))
    );
    let err = sim.set_data(push, "forces", "0 0 1").unwrap_err();
    assert_eq!(err, EditError::Scene(SceneError::StaleComponent(push)));
    assert!(err.to_string().contains("no longer exists"), "{err}");
    assert!(matches!(
        sim.remove_component(push),
        Err(SceneError::StaleComponent(_))
    ));
    // a new component reuses the index, with another generation: the old handle stays refused
    let c = create_component(
        "ConstantForceField",
        "",
        &[("indices", "4"), ("forces", "0 1 0")],
    )
    .unwrap();
    let (again, _) = sim.add_component(beam_node(&sim), "again", c).unwrap();
    assert_eq!(again.index(), push.index());
    assert_ne!(again, push);
    assert!(sim.set_data(push, "forces", "0 0 1").is_err());
    assert!(sim.set_data(again, "forces", "0 0 1").is_ok());
    // nodes likewise
    sim.remove_node(skin).unwrap();
    assert!(matches!(
        sim.remove_node(skin),
        Err(SceneError::StaleNode(_))
    ));
    let n = sim.add_node(beam_node(&sim), "other").unwrap();
    assert_eq!(n.index(), skin.index());
    assert!(sim.scene.check_node(skin).is_err());
    assert!(matches!(
        sim.add_component(skin, "x", create_component("UniformMass", "", &[]).unwrap()),
        Err(SceneError::StaleNode(_))
    ));
    steps(&mut sim, 3);
    assert!(dofs(&sim, VecId::POSITION).iter().all(|v| v.is_finite()));
}

#[test]
fn removing_what_others_use_is_refused_and_the_run_goes_on() {
    let mut sim = load(&scene(SOLVERS[0], true, true));
    steps(&mut sim, 2);
    let dofs_id = find(&sim, "dofs");
    let grid = find(&sim, "grid");
    let err = sim.remove_component(dofs_id).unwrap_err();
    assert!(matches!(err, SceneError::InUse { .. }), "{err}");
    assert!(err.to_string().contains("/root/beam/dofs"), "{err}");
    let err = sim.remove_component(grid).unwrap_err().to_string();
    assert!(err.contains("topology"), "{err}");
    assert_eq!(
        sim.remove_node(sim.scene.root()).unwrap_err(),
        SceneError::RemoveRoot
    );
    // the beam node's state is used by the mapping in skin: the beam cannot go alone... but
    // the whole beam subtree can
    let mut same = load(&scene(SOLVERS[0], true, true));
    steps(&mut same, 2);
    steps(&mut sim, 3);
    steps(&mut same, 3);
    assert_eq!(dofs(&sim, VecId::POSITION), dofs(&same, VecId::POSITION));
    let beam = beam_node(&sim);
    assert_eq!(sim.remove_node(beam).unwrap().len(), 11);
    steps(&mut sim, 2);
    assert!(sim.groups.is_empty());
}

#[test]
fn a_fragment_with_an_error_adds_nothing() {
    let mut sim = load(&scene(SOLVERS[0], false, false));
    let beam = beam_node(&sim);
    let kids = sim.scene.node(beam).children.len();
    let n = sim.scene.component_ids().count();
    let bad = r#"<Node name="bad"><MechanicalObject/><UniformMas totalMass="1"/><SubsetMapping indices="1"/></Node>"#;
    let err = add_xml(&mut sim, beam, bad, Path::new("."), &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("UniformMas"), "{err}");
    assert!(err.contains("UniformMass"), "a suggestion: {err}");
    assert_eq!(sim.scene.node(beam).children.len(), kids);
    assert_eq!(sim.scene.component_ids().count(), n);
    let err = create_component("ConstantForceField", "", &[("forcez", "0 1 0")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("forces"), "{err}");
    steps(&mut sim, 2);
}

/// Removes the component named `push` when it gets its `at`-th AnimateBegin.
#[derive(Clone)]
struct Remover {
    data: DataTable,
    begins: u32,
    at: u32,
}

impl_component!(Remover, "Remover");

impl Controller for Remover {
    fn on_event(
        &mut self,
        event: &Event,
        scene: &mut dyn SceneControl,
    ) -> Result<(), ControllerError> {
        if matches!(event, Event::AnimateBegin { .. }) {
            self.begins += 1;
            if self.begins == self.at {
                let push = scene
                    .scene()
                    .component_ids()
                    .find(|&c| scene.scene().info(c).name == "push")
                    .ok_or(ControllerError::Script("no push".into()))?;
                scene.remove_component(push)?;
            }
        }
        Ok(())
    }
}

#[test]
fn a_controller_removal_applies_when_the_step_ends() {
    let mut registry = canape::registry::registry();
    registry.register("Remover", "test controller", |_, _| {
        Ok(AnyComponent::Controller(Box::new(Remover {
            data: canape::core::data::base_fields(DataTable::new()),
            begins: 0,
            at: 5,
        })))
    });
    let xml = scene(SOLVERS[0], true, false).replace(
        "<DefaultAnimationLoop/>",
        "<DefaultAnimationLoop/><Remover/>",
    );
    let mut sim = load_scene_str_with(
        &xml,
        "remover.scn",
        Path::new("."),
        &LoadOptions::default(),
        &registry,
    )
    .unwrap();
    assert!(!sim.diagnostics.has_errors(), "{:?}", sim.diagnostics);
    steps(&mut sim, 10);
    // by hand: the force acts during the 5th step, and is gone from the 6th
    let mut by_hand = load(&scene(SOLVERS[0], true, false));
    steps(&mut by_hand, 5);
    let push = find(&by_hand, "push");
    by_hand.remove_component(push).unwrap();
    steps(&mut by_hand, 5);
    assert_eq!(dofs(&sim, VecId::POSITION), dofs(&by_hand, VecId::POSITION));
    assert!(sim
        .scene
        .component_ids()
        .all(|c| sim.scene.info(c).name != "push"));
}

#[test]
fn a_clone_steps_on_another_thread_alongside_the_original() {
    for (solver, threads) in [(SOLVERS[0], 1), (SOLVERS[1], 2)] {
        let xml = scene(solver, true, true);
        let opts = LoadOptions {
            threads,
            ..LoadOptions::default()
        };
        let load_t = || load_scene_str(&xml, "clone.scn", Path::new("."), &opts).unwrap();
        let mut straight = load_t();
        steps(&mut straight, 30);

        let mut original = load_t();
        steps(&mut original, 10);
        let mut copy = original.clone();
        assert_eq!(copy.threads(), threads);
        let mut other = original.clone();
        std::thread::scope(|s| {
            s.spawn(|| steps(&mut original, 20));
            s.spawn(|| steps(&mut copy, 20));
            // a clone changed does not change the others
            s.spawn(|| {
                let fem = find(&other, "fem");
                other.set_data(fem, "youngModulus", "500").unwrap();
                steps(&mut other, 20);
            });
        });
        let x = dofs(&straight, VecId::POSITION);
        assert_eq!(dofs(&original, VecId::POSITION), x, "{solver}: original");
        assert_eq!(dofs(&copy, VecId::POSITION), x, "{solver}: clone");
        assert_eq!(
            dofs(&copy, VecId::VELOCITY),
            dofs(&straight, VecId::VELOCITY)
        );
        assert_ne!(
            dofs(&other, VecId::POSITION),
            x,
            "{solver}: the edited clone"
        );
        assert_eq!(copy.scene.time, straight.scene.time);
    }
}

#[test]
fn editing_young_modulus_keeps_the_symbolic_factorization() {
    // a beam of 25×6×6 points, corotational tetrahedra, sparse Cholesky
    let (nx, ny, nz) = (25, 6, 6);
    let fixed: Vec<String> = (0..ny * nz).map(|k| (k * nx).to_string()).collect();
    let xml = |e: &str| {
        format!(
            r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <Node name="beam">
    <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
    <SparseLDLSolver/>
    <RegularGridTopology name="grid" n="{nx} {ny} {nz}" min="0 0 0" max="8 2 2"/>
    <MechanicalObject name="dofs"/>
    <UniformMass totalMass="5"/>
    <TetrahedronFEMForceField name="fem" youngModulus="{e}" poissonRatio="0.3" method="large"/>
    <FixedProjectiveConstraint indices="{}"/>
  </Node>
</Node>"#,
            fixed.join(" ")
        )
    };
    let counts = |sim: &Simulation| {
        sim.scene
            .linears
            .iter()
            .flatten()
            .find_map(|l| l.factorization_counts())
            .expect("a direct solver")
    };
    let mut sim = load(&xml("20000"));
    steps(&mut sim, 5);
    let (symbolic, numeric) = counts(&sim);
    assert_eq!(symbolic, 1);
    let before = sim.clone();
    let fem = find(&sim, "fem");
    let t = std::time::Instant::now();
    sim.set_data(fem, "youngModulus", "5000").unwrap();
    let edit = t.elapsed();
    // the force field updated its materials in place: no re-initialisation
    assert_eq!(sim.edit_reinits(), 0);
    let t = std::time::Instant::now();
    sim.step();
    let step = t.elapsed();
    assert_eq!(
        counts(&sim),
        (1, numeric + 1),
        "symbolic kept, one numeric more"
    );
    println!(
        "edit of youngModulus: {:.3} ms; the next step: {:.3} ms ({} points)",
        edit.as_secs_f64() * 1e3,
        step.as_secs_f64() * 1e3,
        nx * ny * nz
    );
    // the same as a scene loaded with the new modulus and carried to the same state
    let mut fresh = load(&xml("5000"));
    carry(&before, &mut fresh);
    fresh.step();
    assert_eq!(dofs(&fresh, VecId::POSITION), dofs(&sim, VecId::POSITION));
    // and the edit acted
    let mut unedited = before.clone();
    unedited.step();
    assert_ne!(
        dofs(&unedited, VecId::POSITION),
        dofs(&sim, VecId::POSITION)
    );
    // the same value again changes nothing; another method re-initialises the force field
    sim.set_data(fem, "youngModulus", "5000").unwrap();
    assert_eq!(sim.edit_reinits(), 0);
    sim.set_data(fem, "method", "polar").unwrap();
    assert_eq!(sim.edit_reinits(), 1);
    // an invalid modulus is refused by the in-place update and the old one kept
    assert!(matches!(
        sim.set_data(fem, "poissonRatio", "0.7"),
        Err(EditError::Refused { .. })
    ));
    let c = sim.scene.component(fem).expect("the force field");
    assert_eq!(c.data().reals("poissonRatio"), &[0.3]);
}

#[test]
fn refused_edits_say_why_in_typed_errors_and_change_nothing() {
    let mut sim = load(&scene(SOLVERS[0], true, false));
    steps(&mut sim, 2);
    let fem = find(&sim, "fem");
    let before = sim.clone();
    match sim.set_data(fem, "youngModulu", "10") {
        Err(EditError::NoData {
            class, suggestions, ..
        }) => {
            assert_eq!(class, "HexahedronFEMForceField");
            assert!(suggestions.contains(&"youngModulus"), "{suggestions:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        sim.set_data(fem, "youngModulus", "soft"),
        Err(EditError::BadValue { .. })
    ));
    match sim.set_data(fem, "youngModulus", "-5") {
        Err(EditError::Refused {
            component, reasons, ..
        }) => {
            assert!(component.contains("/root/beam/fem"), "{component}");
            assert!(!reasons.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        sim.scene
            .component(fem)
            .unwrap()
            .data()
            .real("youngModulus"),
        2000.0,
        "the previous value is back"
    );
    assert!(matches!(
        sim.set_data(find(&sim, "dofs"), "position", "0 0 0"),
        Err(EditError::NotEditable { .. })
    ));
    assert!(matches!(
        sim.set_dt(-1.0),
        Err(EditError::Invalid { what: "dt", .. })
    ));
    assert!(matches!(
        sim.set_gravity(canape::types::Vec3::new(f64::NAN, 0.0, 0.0)),
        Err(EditError::Invalid { .. })
    ));
    // nothing changed: the same steps give the same states
    let mut same = before.clone();
    steps(&mut sim, 3);
    steps(&mut same, 3);
    assert_eq!(dofs(&sim, VecId::POSITION), dofs(&same, VecId::POSITION));
}

#[test]
fn an_edited_fixed_constraint_fixes_its_new_points_under_a_direct_solver() {
    let mut sim = load(&scene(SOLVERS[0], false, false));
    steps(&mut sim, 3);
    let fixed = sim
        .scene
        .component_ids()
        .find(|c| sim.scene.info(*c).class == "FixedProjectiveConstraint")
        .unwrap();
    // fix the free end too, where it is now (its velocity projected too: SOFA's default keeps
    // a fixed point's velocity, so a point fixed while moving would drift)
    sim.set_data(fixed, "activate_projectVelocity", "1")
        .unwrap();
    sim.set_data(fixed, "indices", "0 5 10 15 4 9 14 19")
        .unwrap();
    let at = |sim: &Simulation| -> Vec<f64> {
        let x = dofs(sim, VecId::POSITION);
        [4, 9, 14, 19]
            .iter()
            .flat_map(|&i| x[3 * i..3 * i + 3].to_vec())
            .collect()
    };
    // the first step still carries the velocity they had; from then on they stay
    steps(&mut sim, 1);
    let before = at(&sim);
    steps(&mut sim, 10);
    assert_eq!(
        at(&sim),
        before,
        "the newly fixed points stay where they are"
    );
    let free = dofs(&sim, VecId::POSITION);
    steps(&mut sim, 1);
    assert_ne!(dofs(&sim, VecId::POSITION), free, "the others still move");
}

/// A point mass beside the beam, at the root where no solver integrates it.
const BALL: &str = r#"<Node name="ball">
    <MechanicalObject name="ballpts" position="6 0 0"/>
    <UniformMass totalMass="1"/>
  </Node>"#;

fn ball(sim: &Simulation, id: VecId) -> Vec<f64> {
    sim.scene
        .state(find(sim, "ballpts"))
        .unwrap()
        .vec(id)
        .to_vec()
}

#[test]
fn a_moved_node_is_integrated_by_its_new_solver_as_if_built_there() {
    for solver in SOLVERS {
        // the ball at the root: no solver takes charge of it, it stays
        let at_root = scene(solver, false, false).replace(
            "  </Node>\n</Node>",
            &format!("  </Node>\n  {BALL}\n</Node>"),
        );
        let mut sim = load(&at_root);
        steps(&mut sim, 10);
        assert_eq!(ball(&sim, VecId::POSITION), vec![6.0, 0.0, 0.0]);
        let ball_node = sim.scene.info(find(&sim, "ballpts")).node;
        sim.move_node(ball_node, beam_node(&sim)).unwrap();
        steps(&mut sim, 10);
        // built by hand with the ball as the beam node's last child, carried to step 10
        let by_hand = scene(solver, false, false)
            .replace("    {node}", "")
            .replace(
                "  </Node>\n</Node>",
                &format!("  {BALL}\n  </Node>\n</Node>"),
            );
        let mut hand = load(&by_hand);
        let mut at_ten = load(&at_root);
        steps(&mut at_ten, 10);
        carry(&at_ten, &mut hand);
        steps(&mut hand, 10);
        assert_eq!(dofs(&hand, VecId::POSITION), dofs(&sim, VecId::POSITION));
        assert_eq!(dofs(&hand, VecId::VELOCITY), dofs(&sim, VecId::VELOCITY));
        assert_eq!(ball(&hand, VecId::POSITION), ball(&sim, VecId::POSITION));
        assert!(ball(&sim, VecId::POSITION)[1] < -1e-3, "the ball now falls");
    }
}

#[test]
fn moves_that_would_change_what_components_use_are_refused() {
    let mut sim = load(&scene(SOLVERS[0], false, true));
    steps(&mut sim, 3);
    let beam = beam_node(&sim);
    let skin = sim.scene.info(find(&sim, "pts")).node;
    let root = sim.scene.root();
    let mut untouched = sim.clone();
    // the skin's SubsetMapping maps its parent's state: under the root it would have none
    match sim.move_node(skin, root) {
        Err(SceneError::WouldChange { user, how }) => {
            // its state would lose the beam's grid from its context (the first user in graph
            // order); its mapping, its input state
            assert!(
                how.contains("topology") || how.contains("input state"),
                "{how}"
            );
            assert!(user.contains("/skin/"), "{user}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(sim.move_node(root, beam), Err(SceneError::MoveRoot));
    assert!(matches!(
        sim.move_node(beam, skin),
        Err(SceneError::MoveUnderItself { .. })
    ));
    // nothing changed: the simulation goes on as one never asked
    steps(&mut sim, 3);
    steps(&mut untouched, 3);
    assert_eq!(
        dofs(&sim, VecId::POSITION),
        dofs(&untouched, VecId::POSITION)
    );
    assert_eq!(sim.scene.node(skin).parent, Some(beam));
    // a removed node's handle is stale
    sim.remove_node(skin).unwrap();
    assert!(matches!(
        sim.move_node(skin, root),
        Err(SceneError::StaleNode(_))
    ));
}

#[test]
fn an_edited_newton_solver_reaches_the_static_solver_that_copied_its_parameters() {
    // a corotational cantilever (geometrically nonlinear) solved statically: one Newton
    // iteration per step by default, twenty after the edit
    let xml = |iterations: &str| {
        format!(
            r#"<Node name="root" dt="1" gravity="0 -10 0">
  <DefaultAnimationLoop/>
  <NewtonRaphsonSolver name="newton" {iterations}/>
  <StaticSolver/>
  <SparseLDLSolver/>
  <RegularGridTopology name="grid" min="0 0 0" max="4 1 1" n="5 2 2"/>
  <MechanicalObject name="dofs"/>
  <UniformMass totalMass="20"/>
  <HexahedronFEMForceField youngModulus="300" poissonRatio="0.3" method="large"/>
  <BoxROI name="clamp" box="-0.1 -0.1 -0.1 0.1 1.1 1.1"/>
  <FixedProjectiveConstraint indices="@clamp.indices"/>
</Node>"#
        )
    };
    let run = |sim: &mut Simulation| {
        for _ in 0..3 {
            sim.step();
        }
        dofs(sim, VecId::POSITION)
    };
    let mut edited = load(&xml(""));
    let newton = find(&edited, "newton");
    edited
        .set_data(newton, "maxNbIterationsNewton", "20")
        .unwrap();
    let mut built = load(&xml(r#"maxNbIterationsNewton="20""#));
    let mut default = load(&xml(""));
    let (e, b, d) = (run(&mut edited), run(&mut built), run(&mut default));
    assert!(e.iter().all(|v| v.is_finite()), "{e:?}");
    assert_eq!(
        e, b,
        "the edit acts as if the scene had been written with it"
    );
    assert_ne!(
        e, d,
        "twenty Newton iterations do not give one iteration's states"
    );
}
