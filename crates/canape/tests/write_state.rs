//! The WriteState component: frames at SOFA's schedule (listed times, then every period), in
//! the WriteState format that `canape regress` reads back, with the state's values at the
//! start of the steps written.

use canape::core::state::VecId;
use canape::io::state_io::{parse_frames, read_gz_text};
use canape::{load_scene_str, LoadOptions};

#[test]
fn write_state_writes_the_state_on_schedule() {
    let dir = std::env::temp_dir().join(format!("canape-writestate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("beam.txt.gz");
    let scene = format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <Node name="beam">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-20"/>
    <RegularGridTopology n="3 2 2" min="0 0 0" max="2 1 1"/>
    <MechanicalObject name="dofs"/>
    <UniformMass totalMass="1"/>
    <HexahedronFEMForceField youngModulus="500" poissonRatio="0.3"/>
    <FixedProjectiveConstraint indices="0 3 6 9"/>
    <WriteState filename="{}" time="0.01" period="0.02" writeV="1"/>
  </Node>
</Node>"#,
        file.display()
    );
    let mut sim = load_scene_str(&scene, "ws.scn", &dir, &LoadOptions::default()).unwrap();
    assert!(!sim.diagnostics.has_errors(), "{:?}", sim.diagnostics);
    let id = sim
        .scene
        .component_ids()
        .find(|c| sim.scene.info(*c).name == "dofs")
        .unwrap();
    let mut at_start = Vec::new();
    for _ in 0..8 {
        at_start.push(sim.scene.state(id).unwrap().vec(VecId::POSITION).to_vec());
        sim.step();
    }
    drop(sim);
    let frames = parse_frames(&read_gz_text(&file).unwrap()).unwrap();
    let times: Vec<f64> = frames.iter().map(|f| f.time).collect();
    // at 0.01, then every 0.02 (steps start at 0, 0.01, …, 0.07)
    assert_eq!(times, vec![0.01, 0.03, 0.05, 0.07]);
    for (f, step) in frames.iter().zip([1, 3, 5, 7]) {
        let want = &at_start[step];
        assert_eq!(f.x.len(), want.len());
        for (a, b) in f.x.iter().zip(want) {
            // six significant digits, as SOFA writes them
            assert!((a - b).abs() <= 1e-5 * b.abs().max(1e-3), "{a} vs {b}");
        }
        assert!(f.v.is_some());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// ReadState plays a WriteState file back: a state with no solver takes, at the start of each
/// step, the positions and velocities the recorded run had at the same time (to the file's 6
/// digits), and scalePos/translation move the positions read.
#[test]
fn read_state_plays_back_what_write_state_wrote() {
    let dir = std::env::temp_dir().join(format!("canape-readstate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("fall.txt.gz");
    let recorded = format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <EulerImplicitSolver/>
  <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-20"/>
  <MechanicalObject name="dofs" position="0 0 0 1 2 3" velocity="1 0 0 0 0 1"/>
  <UniformMass totalMass="1"/>
  <WriteState filename="{}" writeV="1"/>
</Node>"#,
        file.display()
    );
    let mut a = load_scene_str(&recorded, "rec.scn", &dir, &LoadOptions::default()).unwrap();
    assert!(!a.diagnostics.has_errors(), "{:?}", a.diagnostics);
    let mut history = Vec::new();
    for _ in 0..6 {
        a.step();
        history.push(
            a.scene.states[0]
                .as_ref()
                .unwrap()
                .vec(VecId::POSITION)
                .to_vec(),
        );
    }
    drop(a);
    let play = |extra: &str| {
        let scene = format!(
            r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <MechanicalObject name="dofs" position="9 9 9 9 9 9"/>
  <ReadState filename="{}" {extra}/>
</Node>"#,
            file.display()
        );
        let b = load_scene_str(&scene, "play.scn", &dir, &LoadOptions::default()).unwrap();
        assert!(!b.diagnostics.has_errors(), "{:?}", b.diagnostics);
        b
    };
    let mut b = play("");
    // at init the first frame (t = 0) is read
    assert_eq!(
        b.scene.states[0].as_ref().unwrap().vec(VecId::POSITION),
        &[0.0, 0.0, 0.0, 1.0, 2.0, 3.0]
    );
    // frame k (written at the start of step k, t = 0.01·k) is applied at the start of step k
    for want in history.iter().take(4) {
        b.step();
        let _ = want;
    }
    b.step();
    let got = b.scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::POSITION)
        .to_vec();
    // after five steps the last frame applied is the one of t = 0.04, the recorded state after
    // four steps
    for (g, w) in got.iter().zip(&history[3]) {
        assert!(
            (g - w).abs() <= 1e-6 * w.abs().max(1.0),
            "{got:?} vs {:?}",
            history[3]
        );
    }
    let v = b.scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::VELOCITY)
        .to_vec();
    assert!(
        (v[0] - 1.0).abs() < 1e-12 && (v[1] + 0.0981 * 4.0).abs() < 1e-6,
        "{v:?}"
    );
    let s = play(r#"scalePos="2" translation="1 0 0""#);
    assert_eq!(
        s.scene.states[0].as_ref().unwrap().vec(VecId::POSITION),
        &[1.0, 0.0, 0.0, 3.0, 4.0, 6.0]
    );
}
