//! Animation loops and controllers: the root's loop runs the step's stages; events reach the
//! controllers in SOFA's order and graph order; a controller's Data change takes effect in the
//! step it is made in; a controller's error is reported and the simulation goes on;
//! MultiStepAnimationLoop integrates collisionSteps × integrationSteps sub-steps (the same
//! states as that many default steps of the sub-step) and keeps SOFA's time; MultiTagAnimationLoop
//! integrates, once per step and tag, the solvers carrying that tag.

use canape::core::component::{Controller, ControllerError, Event, SceneControl};
use canape::core::data::{DataKind, DataTable};
use canape::core::impl_component;
use canape::core::scene::AnyComponent;
use canape::core::state::VecId;
use canape::{load_scene_str, load_scene_str_with, LoadOptions, Simulation};

/// Appends every event it gets to its `log` Data; at AnimateBegin, sets the `forces` of the
/// component named `push` to its count of AnimateBegin events (along y); fails on a Script
/// event named "fail", panics on one named "panic".
#[derive(Clone)]
struct Recorder {
    data: DataTable,
    begins: u32,
}

impl Recorder {
    fn new() -> Self {
        Recorder {
            data: canape::core::data::base_fields(DataTable::new())
                .with("log", DataKind::Str, "", "events received")
                .with(
                    "tag",
                    DataKind::Str,
                    "",
                    "prefix of this recorder's log lines",
                ),
            begins: 0,
        }
    }
}

impl_component!(Recorder, "Recorder");

impl Controller for Recorder {
    fn on_event(
        &mut self,
        event: &Event,
        scene: &mut dyn SceneControl,
    ) -> Result<(), ControllerError> {
        let name = match event {
            Event::SimulationInitDone => "init".to_string(),
            Event::AnimateBegin { .. } => "begin".into(),
            Event::AnimateEnd { .. } => "end".into(),
            Event::CollisionBegin => "collision-begin".into(),
            Event::CollisionEnd => "collision-end".into(),
            Event::Script(s) if s == "fail" => {
                return Err(ControllerError::Script("asked to fail".into()))
            }
            Event::Script(s) if s == "panic" => panic!("asked to panic"),
            other => format!("{other:?}"),
        };
        let line = format!("{}{} t={};", self.data.str("tag"), name, scene.scene().time);
        let log = format!("{}{line}", self.data.str("log"));
        self.data
            .set_str("log", &log)
            .map_err(|e| ControllerError::Script(e.to_string()))?;
        if matches!(event, Event::AnimateBegin { .. }) {
            self.begins += 1;
            let push = scene
                .scene()
                .component_ids()
                .find(|&c| scene.scene().info(c).name == "push");
            if let Some(push) = push {
                scene.set_data(push, "forces", &format!("0 {} 0", self.begins))?;
            }
        }
        Ok(())
    }
}

fn registry() -> canape::core::registry::Registry {
    let mut r = canape::registry::registry();
    r.register("Recorder", "records events (test)", |_, _| {
        Ok(AnyComponent::Controller(Box::new(Recorder::new())))
    });
    r
}

fn load(xml: &str) -> Simulation {
    let sim = load_scene_str_with(
        xml,
        "loop-test.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
        &registry(),
    )
    .unwrap();
    assert!(
        !sim.diagnostics.has_errors(),
        "{:?}",
        sim.diagnostics.iter().collect::<Vec<_>>()
    );
    sim
}

fn log_of(sim: &Simulation, name: &str) -> String {
    let id = sim
        .scene
        .component_ids()
        .find(|&c| sim.scene.info(c).name == name)
        .unwrap();
    sim.scene
        .component(id)
        .unwrap()
        .data()
        .str("log")
        .to_string()
}

const FALL: &str = r#"<Node name="root" dt="0.5" gravity="0 0 0">
  <DefaultAnimationLoop/>
  <Recorder name="first" tag="a:"/>
  <Node name="body">
    <EulerExplicitSolver symplectic="1"/>
    <MechanicalObject position="0 0 0"/>
    <UniformMass vertexMass="2"/>
    <ConstantForceField name="push" forces="0 0 0"/>
    <Recorder name="second" tag="b:"/>
  </Node>
</Node>"#;

#[test]
fn events_reach_controllers_in_order_and_data_changes_act_in_the_step() {
    let mut sim = load(FALL);
    for _ in 0..3 {
        sim.step();
    }
    // SOFA's order within a step, graph order between controllers
    let a = log_of(&sim, "first");
    assert_eq!(
        a,
        "a:init t=0;a:begin t=0;a:collision-begin t=0;a:collision-end t=0;a:end t=0.5;\
         a:begin t=0.5;a:collision-begin t=0.5;a:collision-end t=0.5;a:end t=1;\
         a:begin t=1;a:collision-begin t=1;a:collision-end t=1;a:end t=1.5;"
    );
    assert!(log_of(&sim, "second").starts_with("b:init t=0;b:begin t=0;"));
    // both recorders set the force at each AnimateBegin (the second one last, with the same
    // count): the force of step n is n, applied in step n: v = dt (1 + 2 + 3) / m
    let v = sim.scene.states[0].as_ref().unwrap().vec(VecId::VELOCITY)[1];
    assert!((v - 0.5 * 6.0 / 2.0).abs() < 1e-12, "v = {v}");
}

#[test]
fn a_controller_error_is_reported_and_the_simulation_goes_on() {
    let mut sim = load(FALL);
    sim.send(&Event::Script("fail".into()));
    let errors: Vec<String> = sim
        .diagnostics
        .iter()
        .filter(|d| d.to_string().contains("asked to fail"))
        .map(|d| d.to_string())
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("/root/first") && errors[0].contains("loop-test.scn:3"));
    sim.step();
    assert!(sim.time() > 0.0);
}

#[test]
fn a_controller_panic_is_reported_and_the_simulation_goes_on() {
    let mut sim = load(FALL);
    sim.step();
    sim.send(&Event::Script("panic".into()));
    let errors: Vec<String> = sim
        .diagnostics
        .iter()
        .filter(|d| d.to_string().contains("panicked: asked to panic"))
        .map(|d| d.to_string())
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("/root/first"), "{errors:?}");
    // the controllers still get events, and the simulation steps
    sim.send(&Event::KeyPressed('a'));
    sim.step();
    assert!(log_of(&sim, "first").contains("KeyPressed('a')"));
    assert!(
        log_of(&sim, "first").ends_with("a:end t=1;"),
        "{}",
        log_of(&sim, "first")
    );
}

#[test]
fn multi_step_loop_integrates_sub_steps_and_keeps_sofa_time() {
    let scene = |lp: &str, dt: f64| {
        format!(
            r#"<Node name="root" dt="{dt}" gravity="0 -9.81 0">{lp}
  <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/><CGLinearSolver iterations="50" tolerance="1e-20" threshold="1e-20"/>
  <MechanicalObject position="0 0 0 1 0 0 2 0 0"/><UniformMass vertexMass="1"/>
  <FixedProjectiveConstraint indices="0"/>
  <SpringForceField spring="0 1 100 0.5 1  1 2 100 0.5 1"/>
</Node>"#
        )
    };
    let mut multi = load_scene_str(
        &scene(
            r#"<MultiStepAnimationLoop collisionSteps="2" integrationSteps="3"/>"#,
            0.06,
        ),
        "multi.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    let mut single = load_scene_str(
        &scene("<DefaultAnimationLoop/>", 0.01),
        "single.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    for _ in 0..5 {
        multi.step();
    }
    for _ in 0..30 {
        single.step();
    }
    let (a, b) = (
        multi.scene.states[0].as_ref().unwrap().vec(VecId::POSITION),
        single.scene.states[0]
            .as_ref()
            .unwrap()
            .vec(VecId::POSITION),
    );
    assert_eq!(a, b, "6 sub-steps of dt/6 are 6 default steps of dt/6");
    assert!(a[4] < -0.01, "it moved: {a:?}");
    // SOFA's MultiStepAnimationLoop sets the time within each collision stage: a step
    // advances it by dt / collisionSteps
    assert!(
        (multi.time() - 5.0 * 0.03).abs() < 1e-12,
        "t = {}",
        multi.time()
    );
}

#[test]
fn only_the_root_animation_loop_runs() {
    let sim = load_scene_str(
        r#"<Node name="root"><DefaultAnimationLoop/><Node name="n"><DefaultAnimationLoop/></Node></Node>"#,
        "loops.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(sim
        .diagnostics
        .iter()
        .any(|d| d.to_string().contains("/root/n/") && d.to_string().contains("is not used")));
}

#[test]
fn multi_tag_loop_integrates_the_solvers_of_each_tag_once_per_step() {
    // three falling particles under explicit solvers tagged "a", "b" and none
    let scene = |lp: &str| {
        format!(
            r#"<Node name="root" dt="0.01" gravity="0 -10 0">{lp}
  <Node name="A"><EulerExplicitSolver tags="a"/><MechanicalObject name="pa" position="0 0 0"/><UniformMass vertexMass="1"/></Node>
  <Node name="B"><EulerExplicitSolver tags="b other"/><MechanicalObject name="pb" position="0 0 0"/><UniformMass vertexMass="1"/></Node>
  <Node name="C"><EulerExplicitSolver/><MechanicalObject name="pc" position="0 0 0"/><UniformMass vertexMass="1"/></Node>
</Node>"#
        )
    };
    let run = |lp: &str| {
        let mut sim = load_scene_str(
            &scene(lp),
            "tags.scn",
            &std::env::temp_dir(),
            &LoadOptions::default(),
        )
        .unwrap();
        for _ in 0..10 {
            sim.step();
        }
        let y = |k: usize| sim.scene.states[k].as_ref().unwrap().vec(VecId::POSITION)[1];
        ([y(0), y(1), y(2)], sim.time())
    };
    let (default, t) = run("<DefaultAnimationLoop/>");
    assert!((t - 0.1).abs() < 1e-12);
    assert!(default.iter().all(|&y| y < -0.01), "{default:?}");
    // one pass per tag: "a" then "b" integrate their own solver's particle over dt each step,
    // exactly as the default loop does; the untagged solver is not run
    let (tagged, t) = run(r#"<MultiTagAnimationLoop tags="a b"/>"#);
    assert!((t - 0.1).abs() < 1e-12, "t = {t}");
    assert_eq!(tagged[0], default[0]);
    assert_eq!(tagged[1], default[1]);
    assert_eq!(tagged[2], 0.0);
    // only "b": only the second particle falls
    let (only_b, _) = run(r#"<MultiTagAnimationLoop tags="b"/>"#);
    assert_eq!(only_b, [0.0, default[1], 0.0]);
}
