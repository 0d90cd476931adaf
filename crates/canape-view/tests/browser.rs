//! End-to-end: a real headless Chromium against `canape view` on a tier-1 SOFA scene
//! (TetrahedronFEMForceField.scn, four beams with von Mises colours).
//!
//! Checks: the page loads without console errors; the canvas shows the object (pixels not
//! uniform) and changes after steps; the Step button advances the time shown; editing
//! youngModulus in the Data panel changes the motion; a shift-drag pulls vertices toward the
//! cursor. `CANAPE_SCREENSHOTS=DIR` also writes the screenshots used in the docs.

mod common;
use common::*;
use serde_json::Value;
use std::time::Duration;

const W: u32 = 1400;
const H: u32 = 800;

fn canvas_rect(b: &mut Browser) -> [u32; 4] {
    let r = b.eval("(() => { const r = document.getElementById('canvas').getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()");
    let v: Vec<u32> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as u32)
        .collect();
    [v[0], v[1], v[2], v[3]]
}

fn shown_time(b: &mut Browser) -> f64 {
    b.eval("document.getElementById('time').textContent")
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

fn steps(b: &mut Browser) -> u64 {
    b.eval("canape.status ? canape.status.steps : -1")
        .as_u64()
        .unwrap_or(0)
}

/// Press `n` k times and wait until the server has done them.
fn do_steps(b: &mut Browser, k: u64) {
    b.eval("document.activeElement && document.activeElement.blur()");
    let s0 = steps(b);
    for _ in 0..k {
        b.key("n", "KeyN", 78);
    }
    b.wait_for(
        &format!(
            "canape.status && canape.status.steps >= {} && canape.status.time > 0",
            s0 + k
        ),
        Duration::from_secs(60),
    );
}

fn reset(b: &mut Browser) {
    b.click_selector("#reset");
    b.wait_for(
        "canape.status && canape.status.steps === 0 && canape.time === 0",
        Duration::from_secs(20),
    );
}

/// Largest displacement from `rest` among the points of a source.
fn max_displacement(b: &mut Browser, source: usize, rest: &[f64]) -> f64 {
    let x = positions(b, source);
    x.chunks(3)
        .zip(rest.chunks(3))
        .map(|(p, q)| {
            ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
        })
        .fold(0.0, f64::max)
}

fn positions(b: &mut Browser, source: usize) -> Vec<f64> {
    let v = b.eval(&format!(
        "(() => {{ const n = canape.sources()[{source}].n; const out = []; for (let i = 0; i < n; i++) out.push(...canape.position({source}, i)); return out; }})()"
    ));
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn write_shot(name: &str, png: &[u8]) {
    if let Ok(dir) = std::env::var("CANAPE_SCREENSHOTS") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(std::path::Path::new(&dir).join(name), png).unwrap();
    }
}

#[test]
fn viewer_in_headless_chromium() {
    let Some(exe) = chromium() else { return };
    let scene = shared_sofa()
        .map(|s| s.join("examples/Component/SolidMechanics/FEM/TetrahedronFEMForceField.scn"));
    if scene.is_none() {
        if std::env::var_os("CANAPE_REQUIRE_SOFA").is_some() {
            panic!("CANAPE_REQUIRE_SOFA is set but ../shared/sofa is absent");
        }
        eprintln!("notice: ../shared/sofa absent: the browser test uses the bundled demo");
    }
    let server = start_server(scene.as_deref());
    let mut b = Browser::launch(&exe, W, H);
    b.navigate(&server.url());
    b.wait_for(
        "window.canape && canape.topology && canape.frames > 0 && canape.drawn > 0",
        Duration::from_secs(30),
    );
    let sources = b.eval("canape.sources()");
    let n_sources = sources.as_array().unwrap().len();
    assert!(n_sources >= 1, "no vertex sources: {sources}");
    // the scene's VisualStyle shows behaviour models and force fields
    let flags = b.eval("canape.flags");
    assert_eq!(flags["forcefields"], Value::Bool(true), "{flags}");

    // 1. the canvas shows the object
    let rect = canvas_rect(&mut b);
    let shot0 = b.screenshot();
    let img0 = pixels(&shot0);
    let (colours, _) = region_stats(&img0, None, rect);
    assert!(colours > 20, "canvas looks uniform: {colours} colours");

    // 2. the Step button advances the time shown
    let t0 = shown_time(&mut b);
    b.click_selector("#step");
    b.wait_for(
        &format!("parseFloat(document.getElementById('time').textContent) > {t0}"),
        Duration::from_secs(20),
    );
    let t1 = shown_time(&mut b);
    let dt = b.eval("canape.status.dt").as_f64().unwrap();
    assert!(
        (t1 - t0 - dt).abs() < 1e-9,
        "one step: {t0} -> {t1} (dt {dt})"
    );

    // 3. steps change the picture
    do_steps(&mut b, 40);
    b.wait_for("canape.time > 0.3", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    let shot1 = b.screenshot();
    let img1 = pixels(&shot1);
    let (_, differ) = region_stats(&img1, Some(&img0), rect);
    assert!(
        differ > 500,
        "the picture did not change after steps ({differ} pixels)"
    );
    // von Mises colours: several hues on the surface
    if scene.is_some() {
        let legend = b.eval("!document.getElementById('legend').hidden");
        assert_eq!(legend, Value::Bool(true), "von Mises legend not shown");
    }

    // 4. editing youngModulus in the panel changes the motion
    let src = if n_sources > 1 { 1 } else { 0 };
    reset(&mut b);
    let rest = positions(&mut b, src);
    do_steps(&mut b, 100);
    let soft = max_displacement(&mut b, src, &rest);
    reset(&mut b);
    // the FEM force field of that source's node, found in the tree
    let fem = b.eval(&format!(
        "(() => {{ const name = canape.sources()[{src}].name; const node = name.split('/').slice(-2, -1)[0]; for (const e of document.querySelectorAll('#tree .node')) {{ if (e.textContent === node) {{ for (const c of e.parentElement.querySelectorAll(':scope > ul > li.comp')) if (/FEMForceField/.test(c.textContent)) return c.dataset.component; }} }} return null; }})()"
    ));
    let fem = fem.as_str().expect("FEM component in the tree").to_string();
    b.click_selector(&format!("#tree li.comp[data-component='{fem}']"));
    b.wait_for(
        "document.querySelector('#data input[data-data=youngModulus]')",
        Duration::from_secs(10),
    );
    let old: f64 = b
        .eval("document.querySelector('#data input[data-data=youngModulus]').value")
        .as_str()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    b.click_selector("#data input[data-data=youngModulus]");
    b.eval("document.querySelector('#data input[data-data=youngModulus]').select()");
    let new = old * 1000.0;
    b.insert_text(&format!("{new}"));
    b.key("Enter", "Enter", 13);
    b.wait_for(
        &format!("canape.messages.some(m => m.msg.includes('youngModulus = {new}'))"),
        Duration::from_secs(10),
    );
    do_steps(&mut b, 100);
    let stiff = max_displacement(&mut b, src, &rest);
    eprintln!("max displacement after 100 steps: youngModulus {old}: {soft:.4}, {new}: {stiff:.4}");
    assert!(
        soft > 0.0 && stiff < 0.2 * soft,
        "youngModulus {old} -> {new} did not stiffen the motion: max displacement {soft} -> {stiff}"
    );

    // back to the scene's modulus, through the panel again
    b.click_selector("#data input[data-data=youngModulus]");
    b.eval("document.querySelector('#data input[data-data=youngModulus]').select()");
    b.insert_text(&format!("{old}"));
    b.key("Enter", "Enter", 13);
    b.wait_for(
        &format!("canape.messages.some(m => m.msg.includes('youngModulus = {old}'))"),
        Duration::from_secs(10),
    );

    // 5. a shift-drag pulls vertices toward the cursor
    reset(&mut b);
    b.click_selector("#fit");
    // the point of the source nearest to the camera among the last 20 % along the beam axis
    let target = b.eval(&format!(
        "(() => {{ const s = {src}; const n = canape.sources()[s].n; let best = null; for (let i = 0; i < n; i++) {{ const p = canape.project(s, i); if (!p) continue; if (!best || p[1] > best[2]) best = [i, p[0], p[1]]; }} return best; }})()"
    ));
    // grab at a point slightly inside the object's silhouette, below the lowest projected vertex
    let (vx, vy) = (
        target[1].as_f64().unwrap(),
        target[2].as_f64().unwrap() - 3.0,
    );
    // a stiffer mouse spring, through the panel
    b.click_selector("#stiffness");
    b.eval("document.getElementById('stiffness').select()");
    b.insert_text("5000");
    b.key("Enter", "Enter", 13);
    b.click_selector("#bar .brand"); // blur commits the value
    b.wait_for("canape.status.stiffness === 5000", Duration::from_secs(10));
    b.click_selector("#play");
    b.wait_for("canape.status.playing", Duration::from_secs(10));
    // the press can miss when it lands while the freshly started simulation moves the beam
    // under the cursor (seen once in a clean-clone CI run): press again, at most three times
    let mut grabbed = None;
    for _ in 0..3 {
        b.mouse("mousePressed", vx, vy, true, true);
        grabbed = b.try_wait_for(
            "canape.status && canape.status.grab",
            Duration::from_secs(5),
        );
        if grabbed.is_some() {
            break;
        }
        b.mouse("mouseReleased", vx, vy, true, false);
    }
    let grabbed = grabbed.expect("shift-press on the beam grabbed no vertex in three tries");
    let p0: Vec<f64> = serde_json::from_value(grabbed["point"].clone()).unwrap();
    // drag 80 px up and to the right, in small moves
    let (ex, ey) = (vx + 30.0, vy - 80.0);
    for k in 1..=15 {
        let f = k as f64 / 15.0;
        b.mouse(
            "mouseMoved",
            vx + f * (ex - vx),
            vy + f * (ey - vy),
            true,
            true,
        );
        std::thread::sleep(Duration::from_millis(30));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let g = b.eval("canape.status.grab");
    let p1: Vec<f64> = serde_json::from_value(g["point"].clone()).unwrap();
    let tgt: Vec<f64> = serde_json::from_value(g["target"].clone()).unwrap();
    let d = |a: &[f64], c: &[f64]| {
        ((a[0] - c[0]).powi(2) + (a[1] - c[1]).powi(2) + (a[2] - c[2]).powi(2)).sqrt()
    };
    eprintln!(
        "mouse spring: grabbed point {:.3} from the target at grab, {:.3} after 1.5 s",
        d(&p0, &tgt),
        d(&p1, &tgt)
    );
    assert!(
        d(&p1, &tgt) < 0.6 * d(&p0, &tgt),
        "the grabbed point did not follow the cursor: start {p0:?}, now {p1:?}, target {tgt:?}"
    );
    // on screen too: the vertex is now nearer to the cursor than where it started
    let vertex = g["vertex"].as_u64().unwrap();
    let source = g["source"].as_u64().unwrap();
    let sp = b.eval(&format!("canape.project({source}, {vertex})"));
    let (sx, sy) = (sp[0].as_f64().unwrap(), sp[1].as_f64().unwrap());
    let before = ((vx - ex).powi(2) + (vy - ey).powi(2)).sqrt();
    let after = ((sx - ex).powi(2) + (sy - ey).powi(2)).sqrt();
    eprintln!("on screen: {before:.1} px from the cursor at grab, {after:.1} px after");
    assert!(
        after < 0.6 * before,
        "on screen: {before} px from the cursor before, {after} after"
    );
    let shot2 = b.screenshot();
    b.mouse("mouseReleased", ex, ey, true, false);
    b.wait_for(
        "canape.status && canape.status.grab === null",
        Duration::from_secs(10),
    );
    write_shot("viewer-tetrahedron-fem.png", &shot1);
    write_shot("viewer-drag.png", &shot2);
    b.click_selector("#play");

    // 6. no console errors along the way
    let errors = b.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    server.stop();
}

#[test]
fn demo_in_headless_chromium() {
    let Some(exe) = chromium() else { return };
    let server = start_server(None);
    let mut b = Browser::launch(&exe, W, H);
    b.navigate(&server.url());
    b.wait_for(
        "window.canape && canape.topology && canape.frames > 0 && canape.drawn > 0",
        Duration::from_secs(30),
    );
    // the help overlay opens with 'h' and closes with Escape
    b.key("h", "KeyH", 72);
    assert_eq!(
        b.eval("document.getElementById('help').hidden"),
        Value::Bool(false)
    );
    b.key("Escape", "Escape", 27);
    assert_eq!(
        b.eval("document.getElementById('help').hidden"),
        Value::Bool(true)
    );
    // space plays, the simulation advances, space pauses
    b.key(" ", "Space", 32);
    b.wait_for(
        "canape.status.playing && canape.time > 1.0",
        Duration::from_secs(60),
    );
    b.key(" ", "Space", 32);
    b.wait_for("!canape.status.playing", Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(300));
    let rect = canvas_rect(&mut b);
    let shot = b.screenshot();
    let (colours, _) = region_stats(&pixels(&shot), None, rect);
    assert!(colours > 20, "canvas looks uniform");
    write_shot("viewer-demo.png", &shot);
    let errors = b.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    server.stop();
}

/// The page's feedback: a colour scale that says "none" at rest, load errors counted in the top
/// bar, a refused edit put back with its reason beside it, Fit framing drawn boxes, a PNG
/// screenshot, and the plot of a Data over time.
#[test]
fn viewer_feedback_in_headless_chromium() {
    let Some(exe) = chromium() else { return };
    let dir = std::env::temp_dir().join(format!("canape-feedback-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("feedback.scn");
    std::fs::write(
        &scene,
        r#"<Node name="root" dt="0.02" gravity="0 -9.81 0">
  <DefaultAnimationLoop/>
  <VisualStyle displayFlags="showBehaviorModels showForceFields"/>
  <NoSuchComponent/>
  <Node name="beam">
    <EulerImplicitSolver/><CGLinearSolver iterations="50" tolerance="1e-9" threshold="1e-12"/>
    <RegularGridTopology n="6 2 2" min="0 0 0" max="5 1 1"/>
    <MechanicalObject name="dofs"/>
    <UniformMass totalMass="1"/>
    <BoxROI name="box" box="-0.1 -3 -3 0.1 4 4" drawBoxes="1"/>
    <FixedProjectiveConstraint indices="@box.indices"/>
    <TetrahedronFEMForceField name="fem" youngModulus="3000" poissonRatio="0.3"
        computeVonMisesStress="1" showVonMisesStressPerNodeColorMap="1"/>
  </Node>
</Node>"#,
    )
    .unwrap();
    let opts = canape::LoadOptions::default();
    let sim = match canape::load_scene(&scene, &opts) {
        Ok(s) => s,
        Err(e) => panic!("{e:?}"),
    };
    let server = canape_view::Server::start(sim, "feedback.scn", "127.0.0.1", 0, true)
        .expect("server starts");
    let mut b = Browser::launch(&exe, W, H);
    b.navigate(&server.url());
    b.wait_for(
        "window.canape && canape.topology && canape.frames > 0 && canape.drawn > 0 && canape.legend",
        Duration::from_secs(30),
    );

    // 1. at rest the legend says there is no stress instead of colouring round-off
    let legend = b.eval("canape.legend");
    assert!(
        legend.as_str().unwrap().contains("none"),
        "legend at rest: {legend}"
    );
    // 2. the load error is counted in the top bar
    let diag = b.eval(
        "document.getElementById('diag').hidden ? '' : document.getElementById('diag').textContent",
    );
    assert!(
        diag.as_str().unwrap().contains("1 error"),
        "top bar: {diag}"
    );
    write_shot("viewer-at-rest.png", &b.screenshot());
    // under load the scale is a real one again
    do_steps(&mut b, 20);
    b.wait_for(
        "canape.legend && !canape.legend.includes('none')",
        Duration::from_secs(20),
    );

    // 3. Fit frames the drawn box (it reaches y = 4, the beam y = 1)
    b.click_selector("#fit");
    let hi_y = b.eval("canape.bounds()[1][1]").as_f64().unwrap();
    assert!(hi_y >= 3.99, "fit bounds ignore the box: top {hi_y}");

    // 4. a refused edit is put back, with the reason beside the field
    let id_of = |b: &mut Browser, class: &str| -> String {
        b.eval(&format!(
            "(() => {{ for (const c of document.querySelectorAll('#tree li.comp')) if (c.querySelector('.cls').textContent === '{class}') return c.dataset.component; return null; }})()"
        ))
        .as_str()
        .unwrap_or_else(|| panic!("{class} in the tree"))
        .to_string()
    };
    let fem = id_of(&mut b, "TetrahedronFEMForceField");
    b.click_selector(&format!("#tree li.comp[data-component='{fem}']"));
    b.wait_for(
        "document.querySelector('#data input[data-data=youngModulus]')",
        Duration::from_secs(10),
    );
    b.click_selector("#data input[data-data=youngModulus]");
    b.eval("document.querySelector('#data input[data-data=youngModulus]').select()");
    b.insert_text("-5");
    b.key("Enter", "Enter", 13);
    b.wait_for(
        "document.querySelector('#data .refused') && document.querySelector('#data input[data-data=youngModulus]').value.trim() === '3000'",
        Duration::from_secs(10),
    );
    let why = b.eval("document.querySelector('#data div.refused').textContent");
    assert!(why.as_str().unwrap().contains("youngModulus"), "{why}");
    write_shot("viewer-refused-edit.png", &b.screenshot());

    // 5. the plot of a Data over time: the free end's height
    let dofs = id_of(&mut b, "MechanicalObject");
    b.click_selector(&format!("#tree li.comp[data-component='{dofs}']"));
    b.wait_for(
        "document.querySelector('#data button[data-plot=position]')",
        Duration::from_secs(10),
    );
    // point 23 (the last of 6×2×2), its y
    b.eval("document.getElementById('plot-index').value = '70'");
    b.click_selector("#data button[data-plot=position]");
    b.wait_for(
        "canape.plot && canape.plot.label.endsWith('position[70]')",
        Duration::from_secs(10),
    );
    do_steps(&mut b, 15);
    b.wait_for(
        "canape.plot && canape.plot.samples.length >= 3",
        Duration::from_secs(20),
    );
    let samples = b.eval("canape.plot.samples");
    let ys: Vec<f64> = samples
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[1].as_f64().unwrap())
        .collect();
    let spread =
        ys.iter().cloned().fold(f64::MIN, f64::max) - ys.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread > 1e-6, "the plotted height does not change: {ys:?}");
    assert!(
        ys.iter().all(|y| *y <= 1.0 + 1e-9),
        "the free end rises under gravity: {ys:?}"
    );
    write_shot("viewer-plot.png", &b.screenshot());

    // 6. a screenshot of the view as PNG
    let png = b.eval("canape.screenshot()");
    let png = png.as_str().unwrap();
    assert!(
        png.starts_with("data:image/png;base64,") && png.len() > 2000,
        "screenshot: {}…",
        &png[..png.len().min(40)]
    );
    b.click_selector("#shot");

    let errors = b.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    server.stop();
}
