//! `canape run` as a script sees it: exit codes that tell a clean run from a partial load, a
//! divergence and bad arguments; relative scene paths whose files are found from any working
//! directory; the final state recorded.

use std::path::{Path, PathBuf};
use std::process::Command;

fn canape() -> Command {
    Command::new(env!("CARGO_BIN_EXE_canape"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("canape-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn code(cmd: &mut Command) -> (i32, String) {
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

const FALLING: &str = r#"<Node name="root" dt="0.01"><DefaultAnimationLoop/>
  <EulerImplicitSolver/><CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>
  <MechanicalObject position="0 0 0 1 0 0"/><UniformMass vertexMass="1"/>
  <SpringForceField spring="0 1 10 0 1"/>
</Node>"#;

#[test]
fn exit_codes_tell_what_happened() {
    let d = tmp("codes");
    // clean
    let clean = write(&d, "clean.scn", FALLING);
    let (c, out) = code(canape().args(["run", "-n", "3"]).arg(&clean));
    assert_eq!(c, 0, "{out}");
    // parts dropped: the rest runs, code 4, a summary naming what was dropped
    let partial = write(
        &d,
        "partial.scn",
        &FALLING.replace("<UniformMass", "<NoSuchThing/><UniformMass"),
    );
    let (c, out) = code(canape().args(["run", "-n", "3"]).arg(&partial));
    assert_eq!(c, 4, "{out}");
    assert!(
        out.contains("NoSuchThing (unknown)") && out.contains("3 steps in"),
        "{out}"
    );
    // --strict refuses to run it
    let (c, out) = code(canape().args(["run", "--strict", "-n", "3"]).arg(&partial));
    assert_eq!(c, 4, "{out}");
    assert!(!out.contains("steps in"), "{out}");
    // divergence (explicit Euler far beyond its stability limit): stopped at the step it happens
    let nan = write(
        &d,
        "nan.scn",
        r#"<Node name="root" dt="0.01"><DefaultAnimationLoop/><EulerExplicitSolver/>
  <MechanicalObject position="0 0 0 1.5 0 0"/><UniformMass vertexMass="1"/>
  <SpringForceField spring="0 1 1e12 0 1"/></Node>"#,
    );
    let (c, out) = code(canape().args(["run", "-n", "500"]).arg(&nan));
    assert_eq!(c, 3, "{out}");
    assert!(
        out.contains("diverged") && out.contains("stopped there"),
        "{out}"
    );
    assert!(
        !out.contains("500 steps in"),
        "the run went on after the divergence: {out}"
    );
    // bad arguments
    for args in [
        vec!["run", "--dt", "-0.01"],
        vec!["run", "--dt", "0"],
        vec!["run", "--dt", "nan"],
        vec!["run", "--threads", "0"],
    ] {
        let (c, out) = code(canape().args(&args));
        assert_eq!(c, 2, "{args:?}: {out}");
    }
    // a Python scene with no interpreter that has Canapé's package: a clear refusal (with one,
    // python/tests/test_api.py runs it)
    let (c, out) = code(
        canape()
            .env("CANAPE_PYTHON", "/nonexistent/python3")
            .args(["run"])
            .arg(write(&d, "scene.py", "def createScene(root): pass\n")),
    );
    assert_eq!(c, 2, "{out}");
    assert!(
        out.contains("Python scene") && out.contains("pip install ./python"),
        "{out}"
    );
    // nothing to load
    let (c, out) = code(canape().args(["run"]).arg(d.join("missing.scn")));
    assert_eq!(c, 1, "{out}");
}

#[test]
fn relative_scene_paths_find_their_files_and_the_final_state_is_written() {
    let d = tmp("relative");
    std::fs::create_dir_all(d.join("mesh")).unwrap();
    write(
        &d.join("mesh"),
        "two.obj",
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
    );
    write(
        &d,
        "scene.scn",
        r#"<Node name="root" dt="0.01"><DefaultAnimationLoop/>
  <EulerImplicitSolver/><CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>
  <MeshOBJLoader name="loader" filename="mesh/two.obj"/>
  <MechanicalObject name="dofs" src="@loader"/><UniformMass vertexMass="1"/>
</Node>"#,
    );
    let out_dir = d.join("states");
    let (c, out) = code(
        canape()
            .current_dir(&d)
            .args(["run", "scene.scn", "-n", "4", "--write-states"])
            .arg(&out_dir),
    );
    assert_eq!(c, 0, "{out}");
    // T = 0, the start of the last step (SOFA's records), and the final state
    let file = std::fs::read_dir(&out_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = {
        use std::io::Read;
        let mut s = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&file).unwrap())
            .read_to_string(&mut s)
            .unwrap();
        s
    };
    let times: Vec<&str> = text.lines().filter(|l| l.starts_with("T=")).collect();
    assert_eq!(times, ["T= 0", "T= 0.03", "T= 0.04"], "{text}");
}

#[test]
fn written_states_stay_in_their_folder_and_replace_planted_links() {
    let d = tmp("names");
    let scene = write(
        &d,
        "names.scn",
        r#"<Node name="root" dt="0.01"><DefaultAnimationLoop/>
  <EulerImplicitSolver/><CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>
  <MechanicalObject name="/../../escaped&#10;x" position="0 0 0"/><UniformMass vertexMass="1"/>
</Node>"#,
    );
    let out_dir = d.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    // a link planted where the file will be written, pointing outside
    let victim = d.join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&victim, out_dir.join("0__.._.._escaped_x_mstate.txt.gz")).unwrap();
    let (c, out) = code(
        canape()
            .args(["run", "-n", "2", "--write-states"])
            .arg(&out_dir)
            .arg(&scene),
    );
    assert_eq!(c, 0, "{out}");
    let names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(names, ["0__.._.._escaped_x_mstate.txt.gz"], "{out}");
    assert!(!d.parent().unwrap().join("escaped").exists());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    let f = out_dir.join(&names[0]);
    assert!(!std::fs::symlink_metadata(&f)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn vtk_series_and_every_n_steps() {
    let d = tmp("vtk");
    let scene = write(
        &d,
        "edge.scn",
        &FALLING.replace(
            "<UniformMass",
            r#"<EdgeSetTopologyContainer edges="0 1"/><UniformMass"#,
        ),
    );
    let out_dir = d.join("out");
    let (c, out) = code(
        canape()
            .args(["run", "-n", "7", "--every", "3", "--vtk"])
            .arg(&out_dir)
            .arg("--write-states")
            .arg(out_dir.join("states"))
            .arg(&scene),
    );
    assert_eq!(c, 0, "{out}");
    // frames at T=0, after steps 3 and 6, and the final state (step 7)
    let pvds: Vec<PathBuf> = std::fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pvd"))
        .collect();
    assert_eq!(pvds.len(), 1, "one simulated state: {pvds:?}");
    let pvd = std::fs::read_to_string(&pvds[0]).unwrap();
    let times: Vec<f64> = pvd
        .lines()
        .filter_map(|l| l.split("timestep=\"").nth(1))
        .map(|t| t.split('"').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(times.len(), 4, "{pvd}");
    for (t, want) in times.iter().zip([0.0, 0.03, 0.06, 0.07]) {
        assert!((t - want).abs() < 1e-12, "{times:?}");
    }
    // each frame: 2 points, one line cell, velocity as point data; the last frame's points are
    // the final state of the state file
    let last = pvd
        .lines()
        .filter_map(|l| l.split("file=\"").nth(1))
        .map(|f| f.split('"').next().unwrap().to_string())
        .next_back()
        .unwrap();
    let vtu = std::fs::read_to_string(out_dir.join(&last)).unwrap();
    assert!(
        vtu.contains("NumberOfPoints=\"2\" NumberOfCells=\"1\""),
        "{vtu}"
    );
    assert!(vtu.contains("Name=\"velocity\""));
    let states = std::fs::read_dir(out_dir.join("states"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let text = canape::io::state_io::read_gz_text(&states).unwrap();
    let frames = canape::io::state_io::parse_frames(&text).unwrap();
    let ts: Vec<f64> = frames.iter().map(|f| f.time).collect();
    assert_eq!(ts.len(), 4, "{ts:?}");
    let points: Vec<f64> = vtu
        .split("<Points>")
        .nth(1)
        .unwrap()
        .split("</DataArray>")
        .next()
        .unwrap()
        .lines()
        .filter(|l| !l.contains('<'))
        .flat_map(|l| l.split_whitespace().map(|v| v.parse::<f64>().unwrap()))
        .collect();
    assert_eq!(points.len(), 6, "{vtu}");
    let fin = &frames.last().unwrap().x;
    for (a, b) in points.iter().zip(fin) {
        // the state file holds 6 significant digits
        assert!(
            (a - b).abs() <= 1e-5 * a.abs().max(1.0),
            "{points:?} vs {fin:?}"
        );
    }
}

#[test]
fn csv_of_chosen_data() {
    let d = tmp("csv");
    let scene = write(
        &d,
        "falling.scn",
        &FALLING.replace("<MechanicalObject ", r#"<MechanicalObject name="dofs" "#),
    );
    let csv = d.join("out.csv");
    let (c, out) = code(
        canape()
            .args(["run", "-n", "4", "--every", "2", "--csv"])
            .arg(&csv)
            .args(["--data", "@/dofs.position", "--data", "/dofs.velocity"])
            .arg(&scene),
    );
    assert_eq!(c, 0, "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0].len(), 1 + 6 + 6, "{text}");
    assert_eq!(rows[0][0], "time");
    assert_eq!(rows[0][1], "/dofs.position[0]");
    // T = 0, after steps 2 and 4 (the last one is the final state)
    assert_eq!(rows.len(), 1 + 3, "{text}");
    let t: Vec<f64> = rows[1..].iter().map(|r| r[0].parse().unwrap()).collect();
    assert!((t[2] - 0.04).abs() < 1e-12, "{t:?}");
    // gravity pulls y down: point 0's y decreases
    let y: Vec<f64> = rows[1..].iter().map(|r| r[2].parse().unwrap()).collect();
    assert!(y[2] < y[1] && y[1] < y[0], "{y:?}");
    // a Data that is not there is a bad argument
    let (c, out) = code(
        canape()
            .args(["run", "-n", "1", "--csv"])
            .arg(&csv)
            .args(["--data", "/dofs.nothing"])
            .arg(&scene),
    );
    assert_eq!(c, 2, "{out}");
    assert!(out.contains("no Data 'nothing'"), "{out}");
}

/// `--write-states` streams: a run stopped midway (killed) leaves files with every frame recorded
/// so far, readable up to the last complete frame.
#[test]
fn a_killed_run_keeps_the_states_it_recorded() {
    use std::io::Read;
    let d = tmp("killed");
    let scene = write(&d, "fall.scn", FALLING);
    let out = d.join("states");
    let mut child = canape()
        .args(["run", "-n", "100000000", "--every-step", "--write-states"])
        .arg(&out)
        .arg(&scene)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let file = out.join("0_MechanicalObject1_mstate.txt.gz");
    let start = std::time::Instant::now();
    while std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0) < 20_000 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "no states written after 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // a gzip stream cut short: read what decodes
    let bytes = std::fs::read(&file).unwrap();
    let mut text = Vec::new();
    let _ = flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text);
    let frames = text.matches("T= ").count();
    assert!(
        frames > 100,
        "only {frames} frames readable from a killed run"
    );
    assert!(
        text.starts_with("T= 0\n  X= 0 0 0 1 0 0\n"),
        "{}",
        &text[..60.min(text.len())]
    );
}
