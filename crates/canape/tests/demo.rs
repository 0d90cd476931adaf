//! The bundled demo loads cleanly and behaves as a clamped beam under gravity.

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions};

#[test]
fn demo_beam_sags_and_stays_clamped() {
    let mut sim = load_scene_str(
        canape::DEMO_SCENE,
        "demo.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(sim.diagnostics.is_empty(), "{:?}", sim.diagnostics);
    let x0 = sim.scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::POSITION)
        .to_vec();
    for _ in 0..50 {
        sim.step();
    }
    let x = sim.scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::POSITION)
        .to_vec();
    let n = x.len() / 3;
    let mut tip_drop: f64 = 0.0;
    for i in 0..n {
        if x0[3 * i].abs() < 1e-9 {
            assert_eq!(
                &x[3 * i..3 * i + 3],
                &x0[3 * i..3 * i + 3],
                "clamped point {i} moved"
            );
        }
        if (x0[3 * i] - 10.0).abs() < 1e-9 {
            tip_drop = tip_drop.max(x0[3 * i + 1] - x[3 * i + 1]);
        }
    }
    assert!(
        tip_drop > 0.01,
        "the free end should sag, dropped {tip_drop}"
    );
    assert!(tip_drop < 3.0, "implausible sag {tip_drop}");
}

#[test]
fn the_root_animate_attribute_is_kept_for_the_viewer() {
    let opts = canape::LoadOptions::default();
    let dir = std::env::temp_dir();
    let load = |xml: &str| {
        canape::load_scene_str(xml, "a.scn", &dir, &opts)
            .unwrap()
            .scene
            .animate
    };
    // runSofa plays at start only with animate="1" on the root
    assert_eq!(load(r#"<Node name="root" animate="1"/>"#), Some(true));
    assert_eq!(load(r#"<Node name="root" animate="0"/>"#), Some(false));
    assert_eq!(
        load(r#"<Node name="root"><Node name="c" animate="1"/></Node>"#),
        None
    );
    let demo = canape::load_scene_str(canape::DEMO_SCENE, "demo.scn", &dir, &opts).unwrap();
    assert_eq!(
        demo.scene.animate,
        Some(true),
        "the bundled demo plays at once"
    );
}
