//! A seeded mutation fuzzer over SOFA's example scenes, run by CI for a bounded time: each input
//! is a scene with one to three mutations (hostile attribute values, cut or duplicated elements,
//! stray bytes, other classes or templates, deep nesting, self-inclusion), run by `canape run`
//! as a user would. Every exit must be one of the documented codes (0–4): a panic (101), a
//! signal (abort, stack overflow) or a run past the time limit fails the test, and the input
//! that did it is kept under `target/fuzz-failures/` with its seed.
//!
//! Knobs: `CANAPE_FUZZ_SECONDS` (time budget, default 40), `CANAPE_FUZZ_SEED` (default fixed, so
//! a CI run is reproducible), `CANAPE_FUZZ_TIMEOUT` (seconds per input, default 20).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// SplitMix64: a few lines of seeded randomness, enough to pick mutations reproducibly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const HOSTILE: &[&str] = &[
    "-1",
    "0",
    "-0",
    "1e308",
    "-1e308",
    "1e-320",
    "nan",
    "NaN 0 0",
    "inf",
    "-inf",
    "9223372036854775807",
    "18446744073709551616",
    "6148914691236517206",
    "1000000000",
    "790 790 790",
    "",
    " ",
    "1 2",
    "abc",
    "0x10",
    "@missing",
    "@../../../..",
    "@/nowhere/obj.position",
    "1,2,3",
    "[1 2 3]",
    "true",
    "Rigid3",
    "-5 -5 -5",
    "0 0 0 0 0 0 0",
    "/dev/zero",
    "/etc/passwd",
    "../../../../../../etc/hostname",
    "mesh/does-not-exist.obj",
    "\u{1b}[31mred",
];

const CLASSES: &[&str] = &[
    "MechanicalObject",
    "UniformMass",
    "DiagonalMass",
    "MeshMatrixMass",
    "TetrahedronFEMForceField",
    "HexahedronFEMForceField",
    "TriangularFEMForceField",
    "MeshSpringForceField",
    "BeamFEMForceField",
    "EulerImplicitSolver",
    "EulerExplicitSolver",
    "RungeKutta4Solver",
    "StaticSolver",
    "CGLinearSolver",
    "SparseLDLSolver",
    "BTDLinearSolver",
    "FixedProjectiveConstraint",
    "BoxROI",
    "BarycentricMapping",
    "RigidMapping",
    "IdentityMapping",
    "SubsetMapping",
    "TriangleCollisionModel",
    "SphereCollisionModel",
    "PointCollisionModel",
    "CollisionPipeline",
    "MeshTopology",
    "RegularGridTopology",
    "SparseGridTopology",
    "TetrahedronSetTopologyContainer",
    "Hexa2TetraTopologicalMapping",
    "MeshOBJLoader",
    "MeshGmshLoader",
    "MeshVTKLoader",
    "WriteState",
    "Node",
];

const TEMPLATES: &[&str] = &["Vec1", "Vec2", "Vec3", "Rigid3", "Rigid2", "Vec6", "Nope"];

/// Byte spans of the attribute values (between the quotes) of `text`.
fn attribute_values(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'=' && (b[i + 1] == b'"' || b[i + 1] == b'\'') {
            let q = b[i + 1];
            if let Some(len) = b[i + 2..].iter().position(|&c| c == q) {
                out.push((i + 2, i + 2 + len));
                i += 2 + len;
            }
        }
        i += 1;
    }
    out
}

/// Byte spans of the element names (after `<`).
fn element_names(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for i in 0..b.len() {
        if b[i] == b'<' && b.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic()) {
            let len = b[i + 1..]
                .iter()
                .position(|c| !c.is_ascii_alphanumeric() && *c != b'_')
                .unwrap_or(0);
            out.push((i + 1, i + 1 + len));
        }
    }
    out
}

/// Byte spans of whole self-closing elements `<… />`.
fn self_closing(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(s) = text[from..].find('<') {
        let s = from + s;
        let Some(e) = text[s..].find('>') else { break };
        let e = s + e + 1;
        if text[..e].ends_with("/>") && !text[s..].starts_with("<!--") {
            out.push((s, e));
        }
        from = e;
    }
    out
}

fn boundary(text: &[u8], mut i: usize) -> usize {
    // keep the cut on a UTF-8 boundary most of the time (stray bytes are their own mutation)
    while i < text.len() && (text[i] & 0xC0) == 0x80 {
        i += 1;
    }
    i.min(text.len())
}

/// One mutation of `text`, and a short name of what it did.
fn mutate(rng: &mut Rng, text: &mut Vec<u8>) -> String {
    let s = String::from_utf8_lossy(text).into_owned();
    match rng.below(9) {
        0..=2 => {
            let spans = attribute_values(&s);
            if spans.is_empty() {
                return "none".into();
            }
            let (a, b) = *rng.pick(&spans);
            let v = *rng.pick(HOSTILE);
            let mut t = s[..a].to_string();
            t.push_str(v);
            t.push_str(&s[b..]);
            *text = t.into_bytes();
            format!("value {v:?}")
        }
        3 => {
            let spans = element_names(&s);
            if spans.is_empty() {
                return "none".into();
            }
            let (a, b) = *rng.pick(&spans);
            let c = *rng.pick(CLASSES);
            *text = format!("{}{}{}", &s[..a], c, &s[b..]).into_bytes();
            format!("class {c}")
        }
        4 => {
            let spans = self_closing(&s);
            if spans.is_empty() {
                return "none".into();
            }
            let (a, b) = *rng.pick(&spans);
            let copies = 1 + rng.below(3);
            let mut t = s[..b].to_string();
            for _ in 0..copies {
                t.push_str(&s[a..b]);
            }
            t.push_str(&s[b..]);
            *text = t.into_bytes();
            format!("duplicate ×{copies}")
        }
        5 => {
            let spans = element_names(&s);
            if spans.is_empty() {
                return "none".into();
            }
            let (_, b) = *rng.pick(&spans);
            let tpl = *rng.pick(TEMPLATES);
            *text = format!("{} template=\"{tpl}\"{}", &s[..b], &s[b..]).into_bytes();
            format!("template {tpl}")
        }
        6 => {
            let n = text.len();
            let a = boundary(text, rng.below(n));
            let b = boundary(text, (a + 1 + rng.below(64)).min(n));
            text.drain(a..b);
            "cut".into()
        }
        7 => {
            let n = text.len();
            let at = rng.below(n + 1);
            let junk: &[&[u8]] = &[
                b"<",
                b">",
                b"\"",
                b"&",
                b"\0",
                &[0xFF, 0xFE],
                b"<Node>",
                b"</Node>",
                b"<!--",
            ];
            let j = *rng.pick(junk);
            text.splice(at..at, j.iter().copied());
            "stray bytes".into()
        }
        _ => {
            let n = text.len();
            let at = boundary(text, rng.below(n + 1));
            text.truncate(at);
            "truncate".into()
        }
    }
}

fn sofa_examples() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/sofa");
    p.join("examples")
        .is_dir()
        .then(|| p.canonicalize().unwrap_or(p))
}

fn scenes(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            scenes(&p, out);
        } else if p.extension().is_some_and(|e| e == "scn") {
            out.push(p);
        }
    }
}

enum Outcome {
    Code(i32),
    Signal,
    Timeout,
}

fn run(scene: &Path, data_paths: &[&Path], timeout: Duration) -> (Outcome, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_canape"));
    cmd.args(["run", "-n", "2"]).arg(scene);
    for d in data_paths {
        cmd.arg("--data-path").arg(d);
    }
    cmd.current_dir(scene.parent().unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("RUST_BACKTRACE", "0");
    let mut child = cmd.spawn().expect("spawn canape");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        // keep the tail only: a hostile input must not fill the test's memory
        let _ = (&mut stderr).take(1 << 20).read_to_end(&mut s);
        let mut rest = [0u8; 4096];
        while matches!(stderr.read(&mut rest), Ok(n) if n > 0) {}
        String::from_utf8_lossy(&s).into_owned()
    });
    let start = Instant::now();
    let outcome = loop {
        match child.try_wait().expect("wait") {
            Some(st) => {
                break match st.code() {
                    Some(c) => Outcome::Code(c),
                    None => Outcome::Signal,
                }
            }
            None if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break Outcome::Timeout;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    (outcome, reader.join().unwrap_or_default())
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn mutated_sofa_scenes_never_panic_abort_or_hang() {
    let Some(sofa) = sofa_examples() else {
        if std::env::var_os("CANAPE_REQUIRE_SOFA").is_some() {
            panic!("fuzz: CANAPE_REQUIRE_SOFA is set but ../shared/sofa is absent");
        }
        eprintln!("NOTICE: fuzz: ../shared/sofa is absent; the scene fuzzer did not run");
        return;
    };
    let examples = sofa.join("examples");
    let share = sofa.join("share");
    let mut all = Vec::new();
    scenes(&examples, &mut all);
    assert!(all.len() > 100, "only {} scenes found", all.len());
    let budget = Duration::from_secs(env_num("CANAPE_FUZZ_SECONDS", 40));
    let timeout = Duration::from_secs(env_num("CANAPE_FUZZ_TIMEOUT", 20));
    let seed = env_num("CANAPE_FUZZ_SEED", 0x5EED_CA9A);
    let work = std::env::temp_dir().join(format!("canape-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let failures_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-failures");

    // hand-made hostile inputs first, then mutations of SOFA's scenes
    let mut handmade: Vec<(String, Vec<u8>)> = Vec::new();
    let deep = format!(
        "<Node name=\"root\">{}{}</Node>",
        "<Node>".repeat(20_000),
        "</Node>".repeat(20_000)
    );
    handmade.push(("deep nesting".into(), deep.into_bytes()));
    handmade.push((
        "includes itself".into(),
        b"<Node name=\"root\"><include href=\"self.scn\"/><include href=\"self.scn\"/><include href=\"self.scn\"/></Node>".to_vec(),
    ));
    handmade.push(("empty".into(), Vec::new()));
    handmade.push(("binary".into(), (0..=255u8).cycle().take(4096).collect()));

    let start = Instant::now();
    let mut rng = Rng(seed);
    let mut tried = 0usize;
    let mut bad: Vec<String> = Vec::new();
    let mut codes = [0usize; 5];
    let mut k = 0usize;
    while start.elapsed() < budget || k < handmade.len() {
        let (what, text, origin) = if k < handmade.len() {
            let (w, t) = handmade[k].clone();
            (w, t, examples.clone())
        } else {
            let src = rng.pick(&all).clone();
            let mut text = std::fs::read(&src).unwrap();
            let n = 1 + rng.below(3);
            let mut what = vec![src
                .strip_prefix(&examples)
                .unwrap_or(&src)
                .display()
                .to_string()];
            for _ in 0..n {
                what.push(mutate(&mut rng, &mut text));
            }
            (what.join(" | "), text, src.parent().unwrap().to_path_buf())
        };
        k += 1;
        let file = work.join("self.scn");
        std::fs::write(&file, &text).unwrap();
        let (outcome, err) = run(&file, &[&origin, &examples, &share], timeout);
        tried += 1;
        let verdict = match outcome {
            Outcome::Code(c @ 0..=4) => {
                codes[c as usize] += 1;
                None
            }
            Outcome::Code(c) => Some(format!("exit code {c}")),
            Outcome::Signal => Some("killed by a signal (abort or stack overflow)".into()),
            Outcome::Timeout => Some(format!("still running after {timeout:?}")),
        };
        if let Some(v) = verdict {
            std::fs::create_dir_all(&failures_dir).unwrap();
            let keep = failures_dir.join(format!("seed{seed:x}-{k}.scn"));
            std::fs::write(&keep, &text).unwrap();
            let tail: String = err
                .chars()
                .rev()
                .take(600)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            bad.push(format!("{what}: {v} (kept as {})\n{tail}", keep.display()));
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    eprintln!(
        "fuzz: {tried} inputs from {} SOFA scenes (seed {seed:#x}, {:.0} s): exit codes 0/1/2/3/4 = {:?}; {} panics, aborts or hangs",
        all.len(),
        start.elapsed().as_secs_f64(),
        codes,
        bad.len()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
    assert!(tried >= 50, "only {tried} inputs in the time budget");
}
