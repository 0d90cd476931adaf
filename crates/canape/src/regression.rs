//! The regression runner: load a listed scene, run SOFA's step count while recording the states
//! SOFA recorded, and score them against the reference files with SOFA's metric plus the
//! maintainers' motion check; scenes whose references are topology dumps are scored as SOFA's
//! topology regression does (`canape_io::topo_regress`).

use crate::record::{run_recorded, Recorder};
use crate::{load_scene, LoadOptions};
use canape_io::regress::{motion_check, object_error, RegressionEntry, RegressionList};
use canape_io::state_io::{parse_frames, read_gz_text, Frame};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Outcome of one scene.
#[derive(Clone, Debug)]
pub enum Verdict {
    Pass,
    Fail(String),
    NoReference,
    Error(String),
}

#[derive(Clone, Debug)]
pub struct SceneResult {
    pub entry: RegressionEntry,
    pub verdict: Verdict,
    pub error_by_dof: Option<f64>,
    /// Worst ratio max|ours − ref| / reference motion over compared objects.
    pub motion_ratio: Option<f64>,
    pub time: Duration,
}

/// Reference files of a scene: `(k, name, path)`, sorted by k.
pub fn reference_files(
    list: &RegressionList,
    entry: &RegressionEntry,
) -> Vec<(usize, String, PathBuf)> {
    reference_files_with(list, entry, "_mstate.txt.gz")
}

/// Reference files `<scene>.reference_<k>_<name><suffix>`, sorted by k.
fn reference_files_with(
    list: &RegressionList,
    entry: &RegressionEntry,
    suffix: &str,
) -> Vec<(usize, String, PathBuf)> {
    let base = list
        .reference_dir
        .join(format!("{}.reference", entry.scene));
    let Some(dir) = base.parent() else {
        return Vec::new();
    };
    let prefix = format!("{}_", base.file_name().unwrap().to_string_lossy());
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let f = e.file_name().to_string_lossy().into_owned();
            if let Some(rest) = f.strip_prefix(&prefix) {
                if let Some(mid) = rest.strip_suffix(suffix) {
                    if let Some((k, name)) = mid.split_once('_') {
                        if let Ok(k) = k.parse::<usize>() {
                            out.push((k, name.to_string(), e.path()));
                        }
                    }
                }
            }
        }
    }
    out.sort_by_key(|(k, _, _)| *k);
    out
}

/// Run and score one entry.
pub fn run_entry(
    list: &RegressionList,
    entry: &RegressionEntry,
    opts: &LoadOptions,
) -> SceneResult {
    let t0 = Instant::now();
    let mut res = SceneResult {
        entry: entry.clone(),
        verdict: Verdict::NoReference,
        error_by_dof: None,
        motion_ratio: None,
        time: Duration::ZERO,
    };
    let refs = reference_files(list, entry);
    let scene_path = list.dir.join(&entry.scene);
    let mut sim = match load_scene(&scene_path, opts) {
        Ok(s) => s,
        Err(e) => {
            res.verdict = Verdict::Error(
                e.to_string()
                    .lines()
                    .next()
                    .unwrap_or("load failed")
                    .to_string(),
            );
            res.time = t0.elapsed();
            return res;
        }
    };
    if sim.diagnostics.has_errors() {
        let first = sim
            .diagnostics
            .errors()
            .next()
            .map(|d| d.to_string())
            .unwrap_or_default();
        res.verdict = Verdict::Error(first);
        res.time = t0.elapsed();
        return res;
    }
    let topo_refs = reference_files_with(list, entry, "_topology.txt.gz");
    if refs.is_empty() && !topo_refs.is_empty() {
        run_topology_entry(&mut sim, entry, &topo_refs, &mut res);
        res.time = t0.elapsed();
        return res;
    }
    let mut rec = Recorder::new(&sim, entry.in_mapping, true);
    // SOFA compares every frame its reference holds: a reference written at every step (as
    // DistanceMultiMapping's, although its list entry says last step only) is compared at
    // every step
    let every_step = !entry.last_step_only
        || refs.iter().any(|(_, _, p)| {
            read_gz_text(p).is_ok_and(|t| t.lines().filter(|l| l.starts_with("T=")).count() > 2)
        });
    run_recorded(&mut sim, entry.steps, &mut rec, every_step, |_, _| {});
    res.time = t0.elapsed();
    if let Some(bad) = sim.find_non_finite() {
        res.verdict = Verdict::Fail(format!("non-finite positions in {bad}"));
        return res;
    }
    if refs.is_empty() {
        return res;
    }
    let mut total = 0.0;
    let mut worst_motion: f64 = 0.0;
    for (k, name, path) in &refs {
        let Some(ours) = rec.recordings.iter().find(|r| r.k == *k) else {
            res.verdict = Verdict::Fail(format!(
                "reference object {k} '{name}' has no counterpart (Canapé records {} objects)",
                rec.recordings.len()
            ));
            return res;
        };
        if ours.name != *name {
            res.verdict = Verdict::Fail(format!(
                "object {k} is '{}' here but '{name}' in the reference",
                ours.name
            ));
            return res;
        }
        let frames: Vec<Frame> = match read_gz_text(path)
            .map_err(|e| e.to_string())
            .and_then(|t| parse_frames(&t).map_err(|e| e.to_string()))
        {
            Ok(f) => f,
            Err(e) => {
                res.verdict = Verdict::Error(format!("cannot read {}: {e}", path.display()));
                return res;
            }
        };
        match object_error(&frames, &ours.frames, ours.points) {
            Ok(e) => total += e,
            Err(e) => {
                res.verdict = Verdict::Fail(e.to_string());
                return res;
            }
        }
        if let Some((dev, motion)) = motion_check(&frames, &ours.frames) {
            let ratio = if motion > 0.0 {
                dev / motion
            } else if dev == 0.0 {
                0.0
            } else {
                f64::INFINITY
            };
            worst_motion = worst_motion.max(ratio);
        }
    }
    let ebd = total / refs.len() as f64;
    res.error_by_dof = Some(ebd);
    res.motion_ratio = Some(worst_motion);
    res.verdict = if ebd > entry.epsilon {
        Verdict::Fail(format!(
            "errorByDof {ebd:.3e} > epsilon {:.1e}",
            entry.epsilon
        ))
    } else if worst_motion > 0.1 {
        Verdict::Fail(format!(
            "motion check: deviation is {:.1}% of the reference motion (limit 10%)",
            worst_motion * 100.0
        ))
    } else {
        Verdict::Pass
    };
    res
}

/// SOFA's topology regression: before each step, every compared container against the block of
/// its reference for the current time; the scene passes when no element differs.
/// `error_by_dof` holds the number of differences.
fn run_topology_entry(
    sim: &mut crate::Simulation,
    entry: &RegressionEntry,
    refs: &[(usize, String, PathBuf)],
    res: &mut SceneResult,
) {
    use canape_io::topo_regress::{
        block_at, compared_topologies, mesh_lists, parse_topology_frames, topology_error,
    };
    // the containers SOFA's compare side reads (the write side also dumps the container a
    // node without one inherits, files the comparison never reads)
    let ours = compared_topologies(&sim.scene, entry.in_mapping);
    let mut frames = Vec::new();
    for (k, our_name, id) in &ours {
        let Some((_, name, path)) = refs.iter().find(|(j, ..)| j == k) else {
            res.verdict = Verdict::Fail(format!(
                "topology {k} '{our_name}' has no reference file ({} reference files)",
                refs.len()
            ));
            return;
        };
        if our_name != name {
            res.verdict = Verdict::Fail(format!(
                "topology {k} is '{our_name}' here but '{name}' in the reference"
            ));
            return;
        }
        match read_gz_text(path)
            .map_err(|e| e.to_string())
            .and_then(|t| parse_topology_frames(&t).map_err(|e| e.to_string()))
        {
            Ok(f) => frames.push((*id, f)),
            Err(e) => {
                res.verdict = Verdict::Error(format!("cannot read {}: {e}", path.display()));
                return;
            }
        }
    }
    let mut total = 0usize;
    for _ in 0..entry.steps {
        let t = sim.time();
        for (id, f) in &frames {
            let Some(block) = block_at(f, t) else {
                continue;
            };
            let lists = sim
                .scene
                .topology(*id)
                .map(|tp| mesh_lists(tp.mesh()))
                .unwrap_or_default();
            total += topology_error(block, &lists);
        }
        sim.step();
    }
    res.error_by_dof = Some(total as f64);
    res.motion_ratio = Some(0.0);
    res.verdict = if total == 0 {
        Verdict::Pass
    } else {
        Verdict::Fail(format!(
            "{total} topology differences over {} steps",
            entry.steps
        ))
    };
}

/// Whether `scene` matches a `--only` pattern (substring, or several separated by commas).
pub fn matches(scene: &str, pattern: Option<&str>) -> bool {
    match pattern {
        None => true,
        Some(p) => p.split(',').any(|q| scene.contains(q.trim())),
    }
}

/// Reference folder of a list in a SOFA-like tree.
pub fn default_refs(list: &Path) -> Option<PathBuf> {
    list.ancestors()
        .find(|a| a.join("references").is_dir())
        .map(Path::to_path_buf)
}
