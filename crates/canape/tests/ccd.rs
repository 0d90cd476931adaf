//! CCDTightInclusionIntersection: continuous detection over the free motion. A point thrown at
//! a floor so fast that it crosses it within one step is caught and stopped on it, where
//! proximity detection (and continuous detection whose boxes do not cover the motion) lets it
//! through; SOFA's Demos/fallingSOFA.scn against SOFA's reference (tier-5 list, with the
//! other collision scenes in tier5_collision.rs).

mod common;

use canape::core::state::VecId;
use common::{load, vec_of};

/// A point at height 0.55 thrown down at 100 m/s (1 per step) at a fixed floor at z = 0, with
/// the Lagrangian contact response; `method` is the intersection method.
fn thrown(method: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 0 -9.81">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver tolerance="1e-12" maxIterations="1000"/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  {method}
  <CollisionResponse response="FrictionContactConstraint"/>
  <Node name="Floor">
    <MechanicalObject name="f" position="-5 -5 0  5 -5 0  5 5 0  -5 5 0"/>
    <MeshTopology triangles="0 1 2  0 2 3"/>
    <TriangleCollisionModel simulated="0" moving="0"/>
  </Node>
  <Node name="Ball">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-12"/>
    <MechanicalObject name="p" position="0.1 0.2 0.55" velocity="0 0 -100"/>
    <UniformMass totalMass="1"/>
    <UncoupledConstraintCorrection/>
    <PointCollisionModel/>
  </Node>
</Node>"#
    )
}

/// The point's height after each of 10 steps.
fn heights(method: &str) -> Vec<f64> {
    let mut sim = load(&thrown(method), "thrown.scn");
    (0..10)
        .map(|_| {
            sim.step();
            vec_of(&sim, "p", VecId::POSITION)[2]
        })
        .collect()
}

#[test]
fn continuous_detection_stops_a_point_that_crosses_the_floor_within_one_step() {
    let contact = 0.001;
    for kind in ["FreeMotion", "Inertia"] {
        let z = heights(&format!(
            r#"<CCDTightInclusionIntersection continuousCollisionType="{kind}" alarmDistance="0" contactDistance="{contact}"/>"#
        ));
        // stopped at the contact distance at the first step; then never through the floor.
        // At rest it sinks by g·dt² within a step before it is caught again: the boxes grow
        // by the alarm distance and the models' contact distances only (all 0 here, as SOFA's
        // computeContinuousBoundingTree), so a free motion that ends above the floor is not
        // tested
        assert!((z[0] - contact).abs() < 1e-9, "{kind}: {z:?}");
        for (step, h) in z.iter().enumerate() {
            assert!(
                *h > 0.0 && *h < contact + 1e-9,
                "{kind}: step {}: height {h} (all: {z:?})",
                step + 1
            );
        }
    }
}

#[test]
fn proximity_detection_and_boxes_that_do_not_cover_the_motion_let_it_through() {
    for method in [
        r#"<NewProximityIntersection alarmDistance="0.1" contactDistance="0.001"/>"#,
        // the narrow phase would see the crossing, but the element boxes are those of the
        // positions only: the pair is never tested
        r#"<CCDTightInclusionIntersection continuousCollisionType="None" alarmDistance="0" contactDistance="0.001"/>"#,
    ] {
        let z = heights(method);
        assert!(z[0] < -0.4 && z[9] < -9.0, "{method}: {z:?}");
    }
}

/// What loading `xml` (as thrown.scn) reports.
fn diagnostics_of(xml: &str) -> Vec<String> {
    let sim = canape::load_scene_str(
        xml,
        "thrown.scn",
        std::path::Path::new("."),
        &canape::LoadOptions::default(),
    )
    .expect("the scene loads");
    sim.diagnostics.iter().map(|d| d.to_string()).collect()
}

#[test]
fn an_unknown_continuous_type_is_reported_and_none_is_used() {
    let xml = thrown(
        r#"<CCDTightInclusionIntersection continuousCollisionType="Freemotion" alarmDistance="0" contactDistance="0.001"/>"#,
    );
    let text = diagnostics_of(&xml);
    assert!(
        text.iter().any(|t| t.contains("thrown.scn:7")
            && t.contains(
                "continuousCollisionType 'Freemotion' is not one of None, Inertia, FreeMotion"
            )),
        "{text:#?}"
    );
}

#[test]
fn continuous_detection_outside_free_motion_is_warned_about() {
    let xml = thrown(
        r#"<CCDTightInclusionIntersection continuousCollisionType="FreeMotion" alarmDistance="0" contactDistance="0.001"/>"#,
    )
    .replace("<FreeMotionAnimationLoop/>", "<DefaultAnimationLoop/>");
    let text = diagnostics_of(&xml);
    assert!(
        text.iter()
            .any(|t| t.contains("tests each element's motion towards its free position")),
        "{text:#?}"
    );
}
