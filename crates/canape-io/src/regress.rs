//! SOFA regression lists (`*.regression-tests`), the choice of compared MechanicalObjects, and
//! SOFA's comparison metric (Regression_test / CompareState): per compared object and frame,
//! e = Σ|ref − cur| / K over 6-digit-rounded values, dofError += e / N; errorByDof is the mean of
//! the objects' dofError; a scene passes iff errorByDof ≤ ε.

use crate::error::{CompareError, RegressionListError};
use crate::state_io::{round6, Frame};
use canape_core::component::Role;
use canape_core::scene::{ComponentId, Scene};
use std::path::{Path, PathBuf};

/// One line of a regression list.
#[derive(Clone, Debug, PartialEq)]
pub struct RegressionEntry {
    pub scene: String,
    pub steps: usize,
    pub epsilon: f64,
    pub in_mapping: bool,
    pub last_step_only: bool,
}

/// A parsed regression list.
#[derive(Clone, Debug)]
pub struct RegressionList {
    pub dir: PathBuf,
    pub reference_dir: PathBuf,
    pub entries: Vec<RegressionEntry>,
}

/// Parse a list; `$REGRESSION_DIR` expands from the environment, else `regression_dir`, else the
/// SOFA-like tree the list lies in (its parent holding `references/`).
pub fn parse_list(
    path: &Path,
    regression_dir: Option<&Path>,
) -> Result<RegressionList, RegressionListError> {
    let text = std::fs::read_to_string(path).map_err(|error| RegressionListError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut reference_dir: Option<PathBuf> = None;
    let mut entries = Vec::new();
    for (ln, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if reference_dir.is_none() {
            let r = if let Some(rest) = l.strip_prefix("$REGRESSION_DIR") {
                let base = std::env::var("REGRESSION_DIR")
                    .map(PathBuf::from)
                    .ok()
                    .or_else(|| regression_dir.map(Path::to_path_buf))
                    .or_else(|| {
                        dir.ancestors()
                            .find(|a| a.join("references").is_dir())
                            .map(Path::to_path_buf)
                    });
                let base = base.ok_or(RegressionListError::NoRegressionDir)?;
                base.join(rest.trim_start_matches('/'))
            } else {
                dir.join(l)
            };
            reference_dir = Some(r);
            continue;
        }
        let syntax = |message| RegressionListError::Syntax {
            path: path.to_path_buf(),
            line: ln + 1,
            message,
        };
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 3 {
            return Err(syntax(
                "expected 'scene steps epsilon [inMapping] [lastStepOnly]'",
            ));
        }
        let steps = f[1].parse().map_err(|_| syntax("bad step count"))?;
        let epsilon = f[2].parse().map_err(|_| syntax("bad epsilon"))?;
        entries.push(RegressionEntry {
            scene: f[0].to_string(),
            steps,
            epsilon,
            in_mapping: f.get(3).is_some_and(|v| *v == "1"),
            last_step_only: f.get(4).is_some_and(|v| *v == "1"),
        });
    }
    Ok(RegressionList {
        dir,
        reference_dir: reference_dir.ok_or(RegressionListError::NoReferenceFolder)?,
        entries,
    })
}

/// The MechanicalObjects SOFA's regression test records, in its order: depth-first, document
/// order, every state with an ODE solver in its node or an ancestor, and (unless `in_mapping`)
/// no mapping in its node or an ancestor. Returns (k, name, id).
pub fn compared_states(scene: &Scene, in_mapping: bool) -> Vec<(usize, String, ComponentId)> {
    let mut out = Vec::new();
    // which nodes hold an ODE solver or a mapping (one pass: a node with many components is
    // not scanned again for each of its states)
    let mut has = vec![(false, false); scene.nodes.len()];
    for id in scene.component_ids() {
        let info = scene.info(id);
        let h = &mut has[info.node.index()];
        h.0 |= info.role == Role::OdeSolver;
        h.1 |= info.role == Role::Mapping;
    }
    for id in canape_core_order(scene) {
        let info = scene.info(id);
        if info.role != Role::State {
            continue;
        }
        let lineage = scene.lineage(info.node);
        let simulated = lineage.iter().any(|n| has[n.index()].0);
        let mapped = lineage.iter().any(|n| has[n.index()].1);
        if simulated && (in_mapping || !mapped) {
            out.push((out.len(), info.name.clone(), id));
        }
    }
    out
}

fn canape_core_order(scene: &Scene) -> Vec<ComponentId> {
    let mut out = Vec::new();
    fn rec(scene: &Scene, n: canape_core::scene::NodeId, out: &mut Vec<ComponentId>) {
        if !scene.node(n).activated {
            return;
        }
        out.extend(scene.node(n).components.iter().copied());
        for c in &scene.node(n).children {
            rec(scene, *c, out);
        }
    }
    if !scene.nodes.is_empty() {
        rec(scene, scene.root(), &mut out);
    }
    out
}

/// Error of one object over matching frames, as SOFA accumulates it (`dofError`).
/// `ours` must hold a frame for each reference frame time.
pub fn object_error(
    reference: &[Frame],
    ours: &[Frame],
    points: usize,
) -> Result<f64, CompareError> {
    let mut dof_error = 0.0;
    for rf in reference {
        let of = ours
            .iter()
            .find(|f| (f.time - rf.time).abs() <= 1e-9_f64.max(rf.time.abs() * 1e-6))
            .ok_or(CompareError::MissingFrame { time: rf.time })?;
        let mut add = |r: &[f64], c: &[f64]| -> Result<(), CompareError> {
            if r.len() != c.len() {
                return Err(CompareError::SizeMismatch {
                    time: rf.time,
                    reference: r.len(),
                    ours: c.len(),
                });
            }
            if r.is_empty() {
                return Ok(());
            }
            let s: f64 = r
                .iter()
                .zip(c)
                .map(|(a, b)| (round6(*a) - round6(*b)).abs())
                .sum();
            dof_error += s / r.len() as f64 / points.max(1) as f64;
            Ok(())
        };
        add(&rf.x, &of.x)?;
        if let Some(rv) = &rf.v {
            let ov = of.v.as_ref().ok_or(CompareError::NoVelocities)?;
            add(rv, ov)?;
        }
    }
    Ok(dof_error)
}

/// The maintainers' motion check: max |ours − ref| at the last frame within 10 % of the
/// reference's own motion. Returns (max deviation, reference motion).
pub fn motion_check(reference: &[Frame], ours: &[Frame]) -> Option<(f64, f64)> {
    let first = reference.first()?;
    let last = reference.last()?;
    let of = ours
        .iter()
        .find(|f| (f.time - last.time).abs() <= 1e-9_f64.max(last.time.abs() * 1e-6))?;
    if of.x.len() != last.x.len() {
        return None;
    }
    // the reference holds 6 significant digits: ours are compared rounded the same way (a
    // static object then deviates by 0, not by our digits beyond the sixth)
    let dev = last
        .x
        .iter()
        .zip(&of.x)
        .map(|(a, b)| (round6(*a) - round6(*b)).abs())
        .fold(0.0, f64::max);
    let motion = last
        .x
        .iter()
        .zip(&first.x)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    Some((dev, motion))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_is_sofas() {
        let r = vec![
            Frame {
                time: 0.0,
                x: vec![1.0, 2.0],
                v: None,
            },
            Frame {
                time: 1.0,
                x: vec![1.0, 3.0],
                v: None,
            },
        ];
        let o = vec![
            Frame {
                time: 0.0,
                x: vec![1.0, 2.0],
                v: None,
            },
            Frame {
                time: 1.0,
                x: vec![1.1, 3.0],
                v: None,
            },
        ];
        // one point of 2 scalars: e = 0.1 / 2, dofError = e / 1 (N points = 1)
        let e = object_error(&r, &o, 1).unwrap();
        assert!((e - 0.05).abs() < 1e-12);
        let (dev, mot) = motion_check(&r, &o).unwrap();
        assert!((dev - 0.1).abs() < 1e-12 && (mot - 1.0).abs() < 1e-12);
        assert!(object_error(&r, &o[..1], 1).is_err());
    }

    #[test]
    fn the_motion_check_reads_the_references_six_digits() {
        let frame = |t: f64, x: f64| Frame {
            time: t,
            x: vec![x],
            v: None,
        };
        // a static object: ours agrees to the reference's 6 digits, then deviates
        let r = vec![frame(0.0, 4.54519), frame(1.0, 4.54519)];
        let same = vec![frame(0.0, 4.545_190_2), frame(1.0, 4.545_190_2)];
        assert_eq!(motion_check(&r, &same), Some((0.0, 0.0)));
        let off = vec![frame(0.0, 4.54519), frame(1.0, 4.5452)];
        let (dev, mot) = motion_check(&r, &off).unwrap();
        assert!(dev > 9e-6 && mot == 0.0);
    }
}
