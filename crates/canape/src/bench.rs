//! Benchmarking scenes: per-step wall time (median and spread), time per phase, peak memory, and
//! SOFA's per-step time on this machine kind (`sofa-here.tsv`) with the ratio.

use crate::{load_scene, LoadOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Result of benchmarking one scene.
#[derive(Clone, Debug)]
pub struct BenchResult {
    pub scene: String,
    pub steps: usize,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub phases_ms: Vec<(&'static str, f64)>,
    pub peak_rss_mb: Option<f64>,
    /// Linear solver iterations per step (summed over solver groups; None without a linear
    /// solver).
    pub iterations: Option<f64>,
    pub sofa_ms: Option<f64>,
    pub error: Option<String>,
}

impl BenchResult {
    /// SOFA time divided by ours (> 1 means Canapé is faster).
    pub fn speedup(&self) -> Option<f64> {
        self.sofa_ms.map(|s| s / self.median_ms)
    }
}

/// Peak resident memory of this process (Linux), in MB.
pub fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = l.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// SOFA's per-step times: `scene path (relative to the SOFA tree) -> ms`.
pub fn sofa_times(tsv: &Path) -> Vec<(String, f64)> {
    let Ok(t) = std::fs::read_to_string(tsv) else {
        return Vec::new();
    };
    t.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("scene"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Some((f.first()?.to_string(), f.get(2)?.parse().ok()?))
        })
        .collect()
}

/// Find SOFA's time for a scene path by matching the end of the path.
pub fn sofa_time_for(times: &[(String, f64)], scene: &Path) -> Option<f64> {
    let s = scene.to_string_lossy().replace('\\', "/");
    times
        .iter()
        .find(|(k, _)| s.ends_with(k.as_str()))
        .map(|(_, v)| *v)
}

/// Run `warmup` steps, then time `steps` steps one by one.
pub fn bench_scene(
    path: &Path,
    steps: usize,
    warmup: usize,
    opts: &LoadOptions,
    sofa: &[(String, f64)],
) -> BenchResult {
    let mut r = BenchResult {
        scene: path.display().to_string(),
        steps,
        median_ms: f64::NAN,
        min_ms: f64::NAN,
        max_ms: f64::NAN,
        phases_ms: Vec::new(),
        peak_rss_mb: None,
        iterations: None,
        sofa_ms: sofa_time_for(sofa, path),
        error: None,
    };
    let mut sim = match load_scene(path, opts) {
        Ok(s) => s,
        Err(e) => {
            r.error = Some(
                e.to_string()
                    .lines()
                    .next()
                    .unwrap_or("load failed")
                    .to_string(),
            );
            return r;
        }
    };
    if let Some(e) = sim.diagnostics.errors().next() {
        r.error = Some(e.to_string());
        return r;
    }
    for _ in 0..warmup {
        sim.step();
    }
    sim.times = Default::default();
    let mut per = Vec::with_capacity(steps);
    for _ in 0..steps {
        let t = Instant::now();
        sim.step();
        per.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    per.sort_by(f64::total_cmp);
    if !per.is_empty() {
        r.median_ms = per[per.len() / 2];
        r.min_ms = per[0];
        r.max_ms = per[per.len() - 1];
    }
    let t = &sim.times;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0 / t.steps.max(1) as f64;
    r.phases_ms = vec![
        ("forces", ms(t.force)),
        ("assembly", ms(t.assembly)),
        ("linear solve", ms(t.solve)),
        ("projection", ms(t.projection)),
        ("mapping", ms(t.mapping)),
        ("collision", ms(t.collision)),
        ("constraints", ms(t.constraints)),
        ("other", ms(t.other)),
    ];
    let groups_with_solver = sim.groups.iter().filter(|g| g.linear.is_some()).count();
    r.iterations = (groups_with_solver > 0 && t.steps > 0)
        .then(|| t.linear_iterations as f64 / t.steps as f64);
    r.peak_rss_mb = peak_rss_mb();
    r
}

/// Why [`perf_suite`] gave no scenes.
#[derive(Debug, thiserror::Error)]
pub enum PerfSuiteError {
    #[error("cannot read {}: {source}", .list.display())]
    Read {
        list: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("perf.scenes must lie in <sofa>/perf/")]
    Location,
}

/// Scenes of SOFA's `perf.scenes` (path relative to the SOFA tree, last step).
pub fn perf_suite(list: &Path) -> Result<Vec<(PathBuf, usize)>, PerfSuiteError> {
    let t = std::fs::read_to_string(list).map_err(|source| PerfSuiteError::Read {
        list: list.to_path_buf(),
        source,
    })?;
    let root = list
        .parent()
        .and_then(Path::parent)
        .ok_or(PerfSuiteError::Location)?;
    Ok(t.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((root.join(f.first()?), f.get(2)?.parse().ok()?))
        })
        .collect())
}

/// JSON text of results (hand-written: a handful of flat records).
pub fn to_json(results: &[BenchResult]) -> String {
    let num = |v: Option<f64>| {
        v.filter(|x| x.is_finite())
            .map(|x| format!("{x}"))
            .unwrap_or("null".into())
    };
    let mut s = String::from("[\n");
    for (i, r) in results.iter().enumerate() {
        let phases: Vec<String> = r
            .phases_ms
            .iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        s.push_str(&format!(
            "  {{\"scene\": {:?}, \"steps\": {}, \"median_ms\": {}, \"min_ms\": {}, \"max_ms\": {}, \"phases_ms\": {{{}}}, \"peak_rss_mb\": {}, \"iterations_per_step\": {}, \"sofa_ms\": {}, \"sofa_over_canape\": {}, \"error\": {}}}{}\n",
            r.scene,
            r.steps,
            num(Some(r.median_ms)),
            num(Some(r.min_ms)),
            num(Some(r.max_ms)),
            phases.join(", "),
            num(r.peak_rss_mb),
            num(r.iterations),
            num(r.sofa_ms),
            num(r.speedup()),
            r.error.as_ref().map(|e| format!("{e:?}")).unwrap_or("null".into()),
            if i + 1 < results.len() { "," } else { "" }
        ));
    }
    s.push(']');
    s
}

/// Element kinds of the generated scaling beams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeamElement {
    /// Corotational tetrahedra (TetrahedronFEMForceField large), 6 per grid cell.
    Tetra,
    /// Corotational hexahedra (HexahedronFEMForceField large).
    Hexa,
}

/// Scene text of a clamped beam with about `elements` elements (grid n × n × 4n cells), implicit
/// Euler, and either CG with exactly `cg_iterations` iterations or a sparse direct solver.
pub fn scaling_beam(
    elem: BeamElement,
    elements: usize,
    cg_iterations: Option<usize>,
) -> (String, usize) {
    let per_cell = if elem == BeamElement::Tetra { 6 } else { 1 };
    let cells = (elements as f64 / per_cell as f64).max(4.0);
    let n = (cells / 4.0).cbrt().round().max(1.0) as usize;
    let (nx, ny, nz) = (n, n, 4 * n);
    let actual = nx * ny * nz * per_cell;
    let solver = match cg_iterations {
        Some(it) => format!(r#"<CGLinearSolver iterations="{it}" tolerance="0" threshold="0"/>"#),
        None => "<SparseLDLSolver/>".to_string(),
    };
    let ff = match elem {
        BeamElement::Tetra => r#"<TetrahedronSetTopologyContainer name="tetras"/>
    <Hexa2TetraTopologicalMapping input="@grid" output="@tetras" swapping="true"/>
    <DiagonalMass massDensity="1"/>
    <TetrahedronFEMForceField youngModulus="1e5" poissonRatio="0.3" method="large"/>"#
            .to_string(),
        BeamElement::Hexa => r#"<DiagonalMass massDensity="1"/>
    <HexahedronFEMForceField youngModulus="1e5" poissonRatio="0.3" method="large"/>"#
            .to_string(),
    };
    let text = format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <DefaultAnimationLoop/>
  <Node name="beam">
    <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
    {solver}
    <RegularGridTopology name="grid" min="0 0 0" max="1 1 4" n="{a} {b} {c}"/>
    <MechanicalObject name="dofs"/>
    {ff}
    <BoxROI name="clamp" box="-0.01 -0.01 -0.01 1.01 1.01 0.001"/>
    <FixedProjectiveConstraint indices="@clamp.indices"/>
  </Node>
</Node>"#,
        a = nx + 1,
        b = ny + 1,
        c = nz + 1
    );
    (text, actual)
}

/// Least-squares slope of log(time) against log(elements).
pub fn growth_exponent(points: &[(usize, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let xs: Vec<f64> = points.iter().map(|(n, _)| (*n as f64).ln()).collect();
    let ys: Vec<f64> = points.iter().map(|(_, t)| t.ln()).collect();
    let (mx, my) = (
        xs.iter().sum::<f64>() / xs.len() as f64,
        ys.iter().sum::<f64>() / ys.len() as f64,
    );
    let num: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let den: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    (den > 0.0).then(|| num / den)
}

/// Scene text of `n` balls (one particle with a sphere collision model each, its own implicit
/// solver) in a jittered lattice above a fixed floor: they fall, hit the floor and pile up
/// (MinProximityIntersection, penalty contacts; ball–ball contacts between different solvers
/// act as explicit forces, as in SOFA).
pub fn falling_spheres(n: usize) -> String {
    let side = (n as f64).cbrt().ceil().max(1.0) as usize;
    let mut balls = String::new();
    for i in 0..n {
        let (a, b, c) = (i % side, (i / side) % side, i / (side * side));
        // a small deterministic offset so that the pile does not stay perfectly stacked
        let jitter = ((i * 7919) % 101) as f64 / 101.0 * 0.1;
        let (x, y, z) = (
            a as f64 * 1.2 + jitter,
            1.0 + c as f64 * 1.3,
            b as f64 * 1.2 - jitter,
        );
        balls.push_str(&format!(
            r#"  <Node name="ball{i}">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>
    <MechanicalObject position="{x} {y} {z}"/>
    <UniformMass totalMass="1"/>
    <SphereCollisionModel radius="0.5" contactStiffness="100"/>
  </Node>
"#
        ));
    }
    let l = side as f64 * 1.2 + 2.0;
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <DefaultAnimationLoop/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <MinProximityIntersection alarmDistance="0.2" contactDistance="0.05"/>
  <CollisionResponse response="PenalityContactForceField"/>
  <Node name="floor">
    <MechanicalObject position="-2 0 -2  {l} 0 -2  {l} 0 {l}  -2 0 {l}"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0" contactStiffness="100"/>
  </Node>
{balls}</Node>
"#
    )
}
