//! SOFA's collision scenes (tier 5) against SOFA's recorded results, with SOFA's metric and the
//! motion check: a rigid sphere falling into a fixed torus (NewProximityIntersection,
//! sphere–triangle/line/point contacts, CompositeCollisionPipeline_none.scn) and chains of
//! tori under separate solvers (chainHybrid*.scn: contacts between objects of different
//! solvers act as SOFA's explicit external forces; contacts with the fixed torus implicitly),
//! a beam falling on a cube with continuous detection (fallingSOFA.scn), and rigid bodies in a
//! box with Lagrangian contacts (FrictionContact.scn).
//! Scenes whose references are kept back run here without error and are checked against what
//! they must share with a referenced one.

mod common;

use canape::core::state::VecId;
use canape::io::regress::parse_list;
use canape::regression::{run_entry, Verdict};
use canape::LoadOptions;

const SCENES: &[&str] = &[
    "Component/Collision/Detection/CompositeCollisionPipeline_none.scn",
    "Demos/chainHybrid.scn",
    "Demos/chainHybridNoGroup.scn",
    // continuous detection over the free motion (CCDTightInclusionIntersection), Lagrangian
    // contacts with friction, ε 1e-6
    "Demos/fallingSOFA.scn",
    // rigid bodies in a box with LocalMinDistance and LCPConstraintSolver: several contact
    // responses, whose constraint rows come node by node as SOFA visits them
    "Component/Collision/Response/FrictionContact.scn",
];

#[test]
fn collision_scenes_pass_sofas_metric() {
    let Some(sofa) = common::require_sofa("tier5") else {
        return;
    };
    let list = "RegressionStateScenes.regression-tests";
    let l = parse_list(&sofa.join("examples").join(list), Some(&sofa)).expect("list parses");
    for scene in SCENES {
        let e = l
            .entries
            .iter()
            .find(|e| e.scene == *scene)
            .unwrap_or_else(|| panic!("{scene} not in the list"));
        let r = run_entry(&l, e, &LoadOptions::default());
        match r.verdict {
            Verdict::Pass => eprintln!(
                "{scene}: pass (errorByDof {:.3e}, motion {:.3}%)",
                r.error_by_dof.unwrap(),
                r.motion_ratio.unwrap() * 100.0
            ),
            Verdict::NoReference => panic!("{scene}: its reference is missing"),
            Verdict::Fail(m) | Verdict::Error(m) => panic!("{scene}: {m}"),
        }
    }
}

/// CompositeCollisionPipeline.scn runs the first sphere through a SubCollisionPipeline with the
/// same intersection distances as CompositeCollisionPipeline_none.scn's single pipeline: that
/// sphere must end where it does there, bit for bit; the second sphere has its own, smaller
/// distances and must end elsewhere.
#[test]
fn a_sub_pipeline_collides_as_the_single_pipeline_does() {
    let Some(sofa) = common::require_sofa("tier5 composite pipeline") else {
        return;
    };
    let dir = sofa.join("examples/Component/Collision/Detection");
    let run = |name: &str| {
        let mut sim = canape::load_scene(&dir.join(name), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            !sim.diagnostics.has_errors(),
            "{name}: {:?}",
            sim.diagnostics
        );
        for _ in 0..200 {
            sim.step();
        }
        let rigid: Vec<Vec<f64>> = sim
            .scene
            .component_ids()
            .filter(|c| sim.scene.info(*c).name == "rigid")
            .map(|c| sim.scene.state(c).unwrap().vec(VecId::POSITION).to_vec())
            .collect();
        assert_eq!(rigid.len(), 2, "{name}");
        rigid
    };
    let single = run("CompositeCollisionPipeline_none.scn");
    let composite = run("CompositeCollisionPipeline.scn");
    assert_eq!(single[0], composite[0]);
    assert!((single[1][1] - composite[1][1]).abs() > 1e-3);
}
