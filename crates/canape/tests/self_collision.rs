//! Self-collision (a collision model's `selfCollision`): the elements of one model meet each
//! other as SOFA's pipeline lets them — each unordered pair once, neighbours (triangles sharing
//! a vertex) left out — and the penalty or Lagrangian response acts on the model's own state.

mod common;

use canape::core::state::VecId;
use common::{contacts_total, vec_of};

fn load(xml: &str) -> canape::Simulation {
    common::load(xml, "self.scn")
}

/// Two particles of one state, each a sphere of one SphereCollisionModel, moving head on.
fn two_spheres(self_collision: bool) -> String {
    format!(
        r#"<Node name="root" gravity="0 0 0" dt="0.001">
  <DefaultAnimationLoop/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <NewProximityIntersection alarmDistance="0.2" contactDistance="0.05"/>
  <CollisionResponse response="PenalityContactForceField"/>
  <Node name="pair">
    <EulerImplicitSolver rayleighMass="0" rayleighStiffness="0"/>
    <CGLinearSolver iterations="100" tolerance="1e-16" threshold="1e-20"/>
    <MechanicalObject name="dofs" position="-1 0 0  1 0.01 0" velocity="2 0 0  -2 0 0"/>
    <UniformMass vertexMass="1"/>
    <SphereCollisionModel radius="0.2" contactStiffness="100" selfCollision="{}"/>
  </Node>
</Node>"#,
        self_collision as u8
    )
}

#[test]
fn spheres_of_one_model_bounce_off_each_other_with_self_collision_and_pass_without() {
    let mut on = load(&two_spheres(true));
    let mut off = load(&two_spheres(false));
    let mut touched = false;
    for _ in 0..1500 {
        on.step();
        off.step();
        let v = vec_of(&on, "dofs", VecId::VELOCITY);
        // the contact forces are internal: the momentum stays zero
        for k in 0..3 {
            assert!((v[k] + v[3 + k]).abs() < 1e-9, "momentum {:?}", v);
        }
        touched |= contacts_total(&on) > 0;
        assert_eq!(
            contacts_total(&off),
            0,
            "no self contact without selfCollision"
        );
    }
    assert!(touched, "the spheres never met");
    let (x, v) = (
        vec_of(&on, "dofs", VecId::POSITION),
        vec_of(&on, "dofs", VecId::VELOCITY),
    );
    // they fly apart (equal masses: the velocities swap, less what the implicit integration
    // of the stiff contact spring takes), no faster than they came
    assert!(v[0] < -1.0 && v[3] > 1.0, "velocities after {v:?}");
    let speed = |k: usize| (v[3 * k] * v[3 * k] + v[3 * k + 1] * v[3 * k + 1]).sqrt();
    assert!(speed(0) <= 2.0 && speed(1) <= 2.0, "velocities after {v:?}");
    assert!(x[0] < x[3], "they did not pass through each other: {x:?}");
    let x_off = vec_of(&off, "dofs", VecId::POSITION);
    assert!(
        x_off[0] > x_off[3],
        "without selfCollision they cross: {x_off:?}"
    );
}

/// A fixed flat square of two triangles sharing an edge, and a free triangle of the same state
/// falling on it: one TriangleCollisionModel with self-collision.
const SHEET_AND_FLAP: &str = r#"<Node name="root" gravity="0 -9.81 0" dt="0.005">
  <DefaultAnimationLoop/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <NewProximityIntersection alarmDistance="0.1" contactDistance="0.02"/>
  <CollisionResponse response="PenalityContactForceField"/>
  <Node name="cloth">
    <EulerImplicitSolver rayleighMass="0.5"/>
    <CGLinearSolver iterations="100" tolerance="1e-14" threshold="1e-20"/>
    <MechanicalObject name="dofs" position="-1 0 -1  1 0 -1  1 0 1  -1 0 1   -0.3 0.5 -0.2  0.3 0.5 -0.2  0 0.5 0.3"/>
    <MeshTopology triangles="0 2 1  0 3 2  4 5 6"/>
    <UniformMass vertexMass="0.1"/>
    <FixedProjectiveConstraint indices="0 1 2 3"/>
    <TriangleCollisionModel contactStiffness="50" selfCollision="1"/>
  </Node>
</Node>"#;

#[test]
fn a_triangle_falling_on_triangles_of_its_own_model_is_held_and_neighbours_do_not_touch() {
    let mut sim = load(SHEET_AND_FLAP);
    sim.step();
    // the two sheet triangles share an edge: never a contact between them
    assert_eq!(contacts_total(&sim), 0);
    let mut touched = false;
    for _ in 0..2000 {
        sim.step();
        touched |= contacts_total(&sim) > 0;
    }
    assert!(touched, "the flap never reached the sheet");
    let x = vec_of(&sim, "dofs", VecId::POSITION);
    for k in 4..7 {
        let y = x[3 * k + 1];
        assert!(
            y > 0.0 && y < 0.1,
            "the flap rests on the sheet: point {k} at y = {y}"
        );
    }
    // the same scene without selfCollision: the flap falls through
    let mut through = load(&SHEET_AND_FLAP.replace(r#" selfCollision="1""#, ""));
    for _ in 0..2001 {
        through.step();
    }
    assert!(vec_of(&through, "dofs", VecId::POSITION)[3 * 4 + 1] < -1.0);
}

/// `two_spheres` with Lagrangian contacts: FreeMotionAnimationLoop and `response` (with its
/// `responseParams`).
fn two_spheres_lagrangian(self_collision: bool, response: &str) -> String {
    format!(
        r#"<Node name="root" gravity="0 0 0" dt="0.01">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver maxIterations="2000" tolerance="1e-14"/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <NewProximityIntersection alarmDistance="0.2" contactDistance="0.05"/>
  <CollisionResponse {response}/>
  <Node name="pair">
    <EulerImplicitSolver rayleighMass="0" rayleighStiffness="0"/>
    <CGLinearSolver iterations="100" tolerance="1e-16" threshold="1e-20"/>
    <MechanicalObject name="dofs" position="-1 0 0  1 0 0" velocity="2 0 0  -2 0 0"/>
    <UniformMass vertexMass="1"/>
    <UncoupledConstraintCorrection/>
    <SphereCollisionModel radius="0.2" selfCollision="{}"/>
  </Node>
</Node>"#,
        self_collision as u8
    )
}

#[test]
fn spheres_of_one_model_stop_at_their_contact_distance_with_lagrangian_self_contacts() {
    let response = r#"response="FrictionContactConstraint" responseParams="mu=0""#;
    let mut on = load(&two_spheres_lagrangian(true, response));
    let mut off = load(&two_spheres_lagrangian(false, response));
    let mut touched = false;
    // rest distance of the centres: contact distance + both radii
    let rest = 0.05 + 0.4;
    for _ in 0..100 {
        on.step();
        off.step();
        let (x, v) = (
            vec_of(&on, "dofs", VecId::POSITION),
            vec_of(&on, "dofs", VecId::VELOCITY),
        );
        // the constraint impulses are internal: the momentum stays zero
        for k in 0..3 {
            assert!((v[k] + v[3 + k]).abs() < 1e-9, "momentum {v:?}");
        }
        assert!(x[3] - x[0] > rest - 1e-6, "centres {} apart", x[3] - x[0]);
        touched |= v[0] < 2.0 - 1e-9;
    }
    assert!(touched, "the spheres never met");
    // a unilateral constraint takes the approach speed away: they end at the rest distance
    let x = vec_of(&on, "dofs", VecId::POSITION);
    assert!((x[3] - x[0] - rest).abs() < 1e-6, "{x:?}");
    let x_off = vec_of(&off, "dofs", VecId::POSITION);
    assert!(
        x_off[0] > x_off[3],
        "without selfCollision they cross: {x_off:?}"
    );
}

#[test]
fn augmented_lagrangian_contacts_keep_the_spheres_apart() {
    // AugmentedLagrangianResponse's passes (impulses −= ε·violation, three rows per contact
    // with friction) within the solver's iterations: an inexact impulse that keeps the spheres
    // from crossing, pushes them back apart, and is internal
    let response = r#"response="AugmentedLagrangianResponseConstraint" responseParams="mu=0.5&amp;epsilon=1000""#;
    let mut sim = load(&two_spheres_lagrangian(true, response));
    let mut closest = f64::INFINITY;
    for _ in 0..100 {
        sim.step();
        let (x, v) = (
            vec_of(&sim, "dofs", VecId::POSITION),
            vec_of(&sim, "dofs", VecId::VELOCITY),
        );
        for k in 0..3 {
            assert!((v[k] + v[3 + k]).abs() < 1e-9, "momentum {v:?}");
        }
        closest = closest.min(x[3] - x[0]);
    }
    let (x, v) = (
        vec_of(&sim, "dofs", VecId::POSITION),
        vec_of(&sim, "dofs", VecId::VELOCITY),
    );
    // they met (closer than the alarm distance) but never came within 0.4 of each other's
    // centres (rest distance 0.45), and they separate
    assert!(closest < 0.6 && closest > 0.4, "closest {closest}");
    assert!(x[3] - x[0] > 0.45 && v[3] > v[0], "{x:?} {v:?}");
}
