//! Engines edited while the simulation runs: they are lazy, as SOFA's DataEngine — an edit marks
//! the engine dirty, and at the next update point (a step, an event, or `update_engines`) it
//! recomputes once and what links to its outputs pulls them, so that the simulation goes on as a
//! scene loaded with the new value would.

use canape::core::scene::ComponentId;
use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions, Simulation};
use std::path::Path;

fn load(xml: &str) -> Simulation {
    load_scene_str(xml, "engines.scn", Path::new("."), &LoadOptions::default()).unwrap()
}

fn find(sim: &Simulation, name: &str) -> ComponentId {
    sim.scene
        .component_ids()
        .find(|&c| sim.scene.info(c).name == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

/// A beam fixed by the points a BoxROI selects.
fn beam(box_: &str) -> String {
    format!(
        r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <DefaultAnimationLoop/>
  <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
  <SparseLDLSolver/>
  <RegularGridTopology name="grid" n="5 2 2" min="0 0 0" max="4 1 1"/>
  <MechanicalObject name="dofs"/>
  <UniformMass totalMass="2"/>
  <HexahedronFEMForceField youngModulus="2000" poissonRatio="0.3"/>
  <BoxROI name="box" box="{box_}"/>
  <FixedProjectiveConstraint name="fixed" indices="@box.indices"/>
</Node>"#
    )
}

#[test]
fn a_box_moved_at_run_time_fixes_the_points_it_now_holds() {
    let left = "-0.1 -0.1 -0.1 0.1 1.1 1.1";
    let right = "3.9 -0.1 -0.1 4.1 1.1 1.1";
    let mut sim = load(&beam(left));
    for _ in 0..5 {
        sim.step();
    }
    let roi = find(&sim, "box");
    // three edits, one of them back to the current value: the engine waits, dirty
    sim.set_data(roi, "box", "0 0 0 1 1 1").unwrap();
    sim.set_data(roi, "box", right).unwrap();
    assert!(sim.engines_dirty() && sim.engine_updates() == 0);
    let fresh = load(&beam(right));
    let ids = |s: &Simulation| {
        s.scene
            .component(find(s, "fixed"))
            .unwrap()
            .data()
            .ints("indices")
            .to_vec()
    };
    assert_ne!(ids(&sim), ids(&fresh), "not yet recomputed");
    sim.update_engines();
    assert_eq!(sim.engine_updates(), 1, "recomputed once for the edits");
    assert!(!sim.engines_dirty());
    assert_eq!(
        ids(&sim),
        ids(&fresh),
        "the constraint took the box's new indices"
    );
    // an edit to the value it has changes nothing: no recomputation
    sim.set_data(roi, "box", right).unwrap();
    assert!(!sim.engines_dirty());
    assert_ne!(ids(&sim), ids(&load(&beam(left))));
    let vec = |s: &Simulation, id: VecId| s.scene.state(find(s, "dofs")).unwrap().vec(id).to_vec();
    let (x0, v0) = (vec(&sim, VecId::POSITION), vec(&sim, VecId::VELOCITY));
    for _ in 0..5 {
        sim.step();
    }
    assert_eq!(sim.engine_updates(), 1, "no edit, no recomputation");
    let (x1, v1) = (vec(&sim, VecId::POSITION), vec(&sim, VecId::VELOCITY));
    // the right end's points are now fixed: their velocity no longer changes (the solve's dv is
    // projected to zero; SOFA does not zero the velocity they had unless
    // activate_projectVelocity); the left end, free, falls
    for &i in &ids(&fresh) {
        let i = i as usize;
        assert_eq!(&v1[3 * i..3 * i + 3], &v0[3 * i..3 * i + 3]);
    }
    assert!(x1[1] < x0[1] - 1e-6, "the left end falls once released");
}

fn rotated(rotation: &str) -> String {
    format!(
        r#"<Node name="root">
  <DefaultAnimationLoop/>
  <RegularGridTopology name="grid" n="3 3 3" min="0 0 0" max="1 1 1"/>
  <TransformEngine name="te" input_position="@grid.position" rotation="{rotation}"/>
  <MechanicalObject name="dofs" position="@te.output_position"/>
</Node>"#
    )
}

#[test]
fn a_transform_edited_at_run_time_moves_the_state_it_feeds() {
    let mut sim = load(&rotated("0 0 0"));
    sim.step();
    sim.set_data(find(&sim, "te"), "rotation", "0 0 30")
        .unwrap();
    // the next step's update point recomputes the engine before the step runs: the state
    // starts it from the rotated positions (this static scene does not move them)
    sim.step();
    assert_eq!(sim.engine_updates(), 1);
    let fresh = load(&rotated("0 0 30"));
    let x = |s: &Simulation| {
        s.scene
            .state(find(s, "dofs"))
            .unwrap()
            .vec(VecId::POSITION)
            .to_vec()
    };
    assert_eq!(
        x(&sim),
        x(&fresh),
        "positions as a scene loaded with the new rotation"
    );
    assert_ne!(x(&sim), x(&load(&rotated("0 0 0"))));
    // a bad value is refused and changes nothing
    let kept = x(&sim);
    assert!(sim.set_data(find(&sim, "te"), "rotation", "0 x 0").is_err());
    assert_eq!(x(&sim), kept);
}
