//! Tests of the animation loops' reactions to edits, on a mock simulation that records the
//! stages it is asked to run.

use super::*;
use canape_core::diag::Diagnostics;
use canape_core::lagrangian::{ConstraintOrder, ConstraintSolver};
use canape_core::scene::{AnyComponent, Scene};

/// The stages run, with their time steps and the times set, as bits.
#[derive(Default)]
struct Recorder {
    time: f64,
    log: Vec<(String, u64)>,
}

impl LoopStages for Recorder {
    fn time(&self) -> f64 {
        self.time
    }
    fn set_time(&mut self, t: f64) {
        self.time = t;
        self.log.push(("time".into(), t.to_bits()));
    }
    fn send(&mut self, event: &Event) {
        self.log.push((format!("{event:?}"), 0));
    }
    fn collision(&mut self) {
        self.log.push(("collision".into(), 0));
    }
    fn integrate(&mut self, dt: f64) {
        self.log.push(("integrate".into(), dt.to_bits()));
    }
    fn integrate_tagged(&mut self, dt: f64, tag: &str) {
        self.log.push((format!("integrate {tag}"), dt.to_bits()));
    }
    fn update_mappings(&mut self) {
        self.log.push(("mappings".into(), 0));
    }
    fn free_motion(&mut self, dt: f64) {
        self.log.push(("free motion".into(), dt.to_bits()));
    }
    fn solve_constraints(
        &mut self,
        dt: f64,
        _fallback: &mut dyn ConstraintSolver,
        order: ConstraintOrder,
    ) {
        self.log
            .push((format!("constraints {order:?}"), dt.to_bits()));
    }
}

/// `l` with `attrs`, initialised in a scene of its own.
fn initialised<T: AnimationLoop + Clone + 'static>(mut l: T, attrs: &[(&str, &str)]) -> T {
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    for (k, v) in attrs {
        l.data_mut().set_str(k, v).unwrap();
    }
    let placeholder = AnyComponent::AnimationLoop(Box::new(l.clone()));
    let id = scene.add_component(root, "loop", placeholder, None);
    let mut diags = Diagnostics::default();
    l.init(&mut InitContext {
        scene: &scene,
        node: root,
        id,
        diags: &mut diags,
    });
    l
}

/// `l` after one step from t = 0.3, then edited with `after`: its answer.
fn step_and_edit(l: &mut dyn AnimationLoop, after: &[(&str, &str)]) -> Reaction {
    l.step(
        &mut Recorder {
            time: 0.3,
            ..Default::default()
        },
        0.01,
    );
    crate::test_support::edit(l, after)
}

/// The stages of two steps of `l` from t = 0.3.
fn steps(l: &mut dyn AnimationLoop) -> Vec<(String, u64)> {
    let mut r = Recorder {
        time: 0.3,
        ..Default::default()
    };
    l.step(&mut r, 0.01);
    l.step(&mut r, 0.02);
    r.log
}

/// Editing the collision or integration step counts of a MultiStepAnimationLoop is taken in
/// place: its next steps run the same stages, with the same time steps and times bit for bit,
/// as a loop initialised with the new counts; an invalid count re-initialises it.
#[test]
fn edits_update_in_place_multi_step_counts() {
    let before = [("collisionSteps", "2"), ("integrationSteps", "3")];
    let edits: [&[(&str, &str)]; 3] = [
        &[("collisionSteps", "1")],
        &[("integrationSteps", "7")],
        &[("collisionSteps", "4"), ("integrationSteps", "1")],
    ];
    for after in edits {
        let mut l = initialised(MultiStepAnimationLoop::new(), &before);
        assert_eq!(step_and_edit(&mut l, after), Reaction::Updated, "{after:?}");
        let fresh_attrs = [before.as_slice(), after].concat();
        let mut fresh = initialised(MultiStepAnimationLoop::new(), &fresh_attrs);
        let mut old = initialised(MultiStepAnimationLoop::new(), &before);
        let got = steps(&mut l);
        assert_eq!(got, steps(&mut fresh), "{after:?}");
        assert_ne!(got, steps(&mut old), "{after:?}");
    }
    for edit in [("collisionSteps", "0"), ("printLog", "1")] {
        let mut l = initialised(MultiStepAnimationLoop::new(), &before);
        assert_eq!(step_and_edit(&mut l, &[edit]), Reaction::Reinit, "{edit:?}");
    }
}

/// Editing `solveVelocityConstraintFirst` of a FreeMotionAnimationLoop is taken in place: its
/// next steps solve the constraints in the order of a loop initialised with the new value.
#[test]
fn edits_update_in_place_free_motion_constraint_order() {
    for (before, after) in [("0", "1"), ("1", "0")] {
        let before = [("solveVelocityConstraintFirst", before)];
        let after = [("solveVelocityConstraintFirst", after)];
        let mut l = initialised(FreeMotionAnimationLoop::new(), &before);
        assert_eq!(step_and_edit(&mut l, &after), Reaction::Updated);
        let mut fresh = initialised(FreeMotionAnimationLoop::new(), &after);
        let mut old = initialised(FreeMotionAnimationLoop::new(), &before);
        let got = steps(&mut l);
        assert_eq!(got, steps(&mut fresh), "{after:?}");
        assert_ne!(got, steps(&mut old), "{after:?}");
    }
    let mut l = initialised(FreeMotionAnimationLoop::new(), &[]);
    let r = step_and_edit(&mut l, &[("constraintSolver", "@solver")]);
    assert_eq!(r, Reaction::Reinit);
}
