//! `canape regress`: run SOFA's regression lists against their reference states.

use canape::regression::{default_refs, matches, run_entry, Verdict};
use canape::LoadOptions;
use std::path::PathBuf;
use std::process::ExitCode;

pub(crate) fn regress(
    list: PathBuf,
    refs: Option<PathBuf>,
    only: Option<String>,
    data_path: Vec<PathBuf>,
) -> ExitCode {
    let regdir = refs.or_else(|| default_refs(&list));
    let l = match canape::io::regress::parse_list(&list, regdir.as_deref()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let opts = LoadOptions {
        data_paths: data_path,
        dt: None,
        threads: 1,
    };
    println!(
        "{:<90} {:>6} {:>8} {:>11} {:>8} {:>8}  verdict",
        "scene", "steps", "epsilon", "errorByDof", "motion", "time(s)"
    );
    let (mut pass, mut fail, mut noref) = (0, 0, 0);
    for e in l
        .entries
        .iter()
        .filter(|e| matches(&e.scene, only.as_deref()))
    {
        let r = run_entry(&l, e, &opts);
        let verdict = match &r.verdict {
            Verdict::Pass => {
                pass += 1;
                "pass".to_string()
            }
            Verdict::Fail(m) => {
                fail += 1;
                format!("FAIL: {m}")
            }
            Verdict::Error(m) => {
                fail += 1;
                format!("ERROR: {m}")
            }
            Verdict::NoReference => {
                noref += 1;
                "no reference (ran without error)".to_string()
            }
        };
        println!(
            "{:<90} {:>6} {:>8.0e} {:>11} {:>8} {:>8.2}  {}",
            e.scene,
            e.steps,
            e.epsilon,
            r.error_by_dof
                .map(|v| format!("{v:.3e}"))
                .unwrap_or("-".into()),
            r.motion_ratio
                .map(|v| format!("{:.2}%", v * 100.0))
                .unwrap_or("-".into()),
            r.time.as_secs_f64(),
            verdict
        );
    }
    println!("regress: {pass} passed, {fail} failed, {noref} without reference");
    if fail > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
