//! `canape run`: run a scene headless, writing states, VTK and CSV series as asked.

use crate::load::load_or_demo;
use crate::python::run_python;
use canape::core::diag::Severity;
use canape::record::{run_recorded_until, CsvSeries, Recorder, VtkSeries};
use canape::{LoadOptions, Simulation};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// The parts of the scene a load dropped (error diagnostics), each named once: an unknown
/// class by its name, a refused component by its path.
fn load_errors(sim: &Simulation) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for d in sim
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
    {
        let name = match d.message.strip_prefix("unknown component '") {
            Some(rest) => format!("{} (unknown)", rest.split('\'').next().unwrap_or(rest)),
            None => d.component.clone().unwrap_or_else(|| d.message.clone()),
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn ms(d: std::time::Duration, steps: u64) -> f64 {
    d.as_secs_f64() * 1000.0 / steps.max(1) as f64
}

/// What `canape run` writes, and when.
#[derive(Default)]
pub(crate) struct Output {
    pub(crate) write_states: Option<PathBuf>,
    pub(crate) mapped: bool,
    pub(crate) every_step: bool,
    pub(crate) every: Option<usize>,
    pub(crate) vtk: Option<PathBuf>,
    pub(crate) csv: Option<PathBuf>,
    pub(crate) data: Vec<String>,
}

pub(crate) fn run(
    scene: Option<PathBuf>,
    steps: usize,
    dt: Option<f64>,
    threads: usize,
    strict: bool,
    out: Output,
    data_path: Vec<PathBuf>,
) -> ExitCode {
    let Output {
        write_states,
        mapped,
        every_step,
        every,
        vtk,
        csv,
        data,
    } = out;
    let opts = LoadOptions {
        data_paths: data_path,
        dt,
        threads,
    };
    if let Some(code) = run_python(scene.as_deref(), steps, threads) {
        return code;
    }
    let Some((label, mut sim)) = load_or_demo(scene.as_deref(), &opts) else {
        return ExitCode::from(1);
    };
    let dropped = load_errors(&sim);
    if strict && !dropped.is_empty() {
        eprintln!(
            "error: --strict: parts of the scene were not loaded ({}); not running",
            dropped.join(", ")
        );
        return ExitCode::from(4);
    }
    let n_states = sim.scene.states.len();
    let dofs: usize = sim.scene.states.iter().flatten().map(|s| s.size()).sum();
    println!("scene: {label}");
    println!(
        "states: {n_states} ({dofs} points), solver groups: {}, dt: {}",
        sim.groups.len(),
        sim.dt
    );
    let pb = ProgressBar::new(steps as u64);
    if std::io::stderr().is_terminal() {
        pb.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} steps {per_sec} eta {eta}").unwrap(),
        );
    } else {
        pb.set_draw_target(ProgressDrawTarget::hidden());
    }
    // states are recorded only when they are to be written, straight to their files
    let mut rec = Recorder::new(&sim, mapped, true);
    match &write_states {
        None => rec.recordings.clear(),
        Some(dir) => {
            if let Err(e) = rec.stream_to(dir) {
                eprintln!("error: cannot write states to {}: {e}", dir.display());
                return ExitCode::from(1);
            }
        }
    }
    let mut vtk_series = match &vtk {
        Some(dir) => match VtkSeries::new(&sim, dir) {
            Ok(v) => Some(v),
            Err(e) => {
                eprintln!("error: cannot write VTK files to {}: {e}", dir.display());
                return ExitCode::from(1);
            }
        },
        None => None,
    };
    let mut csv_series = match &csv {
        Some(file) => match CsvSeries::new(&sim, file, &data) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let vtk_every = every.unwrap_or(1);
    let mut vtk_failed: Option<String> = None;
    let mut vtk_capture = |series: &mut Option<VtkSeries>, s: &Simulation| {
        if vtk_failed.is_some() {
            return;
        }
        if let Some(v) = series.as_mut() {
            if let Err(e) = v.capture(s) {
                vtk_failed = Some(e.to_string());
            }
        }
        if let Some(c) = csv_series.as_mut() {
            if let Err(e) = c.capture(s) {
                vtk_failed = Some(format!("CSV: {e}"));
            }
        }
    };
    vtk_capture(&mut vtk_series, &sim);
    // with --every the recorder captures after every N-th step; otherwise at SOFA's moments
    let (mut loop_rec, mut step_rec) = match every {
        Some(_) => {
            rec.capture(&sim);
            let none = Recorder::empty(true);
            (none, Some(rec))
        }
        None => (rec, None),
    };
    let t0 = Instant::now();
    let mut diverged = None;
    // diagnostics the run adds (inverted elements, controller errors, constraint solver
    // failures) are printed as they come, above the progress bar
    let mut printed = sim.diagnostics.len();
    let ran = run_recorded_until(&mut sim, steps, &mut loop_rec, every_step, |s, i| {
        pb.set_position(i as u64);
        if s.diagnostics.len() > printed {
            for d in s.diagnostics.iter().skip(printed) {
                pb.suspend(|| eprintln!("{d}"));
            }
            printed = s.diagnostics.len();
        }
        // stop at the step that diverges: the states recorded so far are the last good ones
        if let Some(bad) = s.find_non_finite() {
            diverged = Some((i, bad));
            return false;
        }
        if let (Some(r), Some(n)) = (step_rec.as_mut(), every) {
            if i % n == 0 {
                r.capture(s);
            }
        }
        if i % vtk_every == 0 {
            vtk_capture(&mut vtk_series, s);
        }
        true
    });
    let mut rec = step_rec.unwrap_or(loop_rec);
    if diverged.is_none() {
        // the scene's exporters write their exportAtEnd files
        sim.finish();
    }
    for d in sim.diagnostics.iter().skip(printed) {
        eprintln!("{d}");
    }
    if diverged.is_none() && ran > 0 {
        // the final state as well (SOFA's WriteState records at the start of steps), unless
        // the last step was just recorded
        if every.is_none_or(|n| ran % n != 0) {
            rec.capture(&sim);
        }
        if ran % vtk_every != 0 {
            vtk_capture(&mut vtk_series, &sim);
        }
    }
    pb.finish_and_clear();
    let wall = t0.elapsed();
    let t = &sim.times;
    println!(
        "{} steps in {:.3} s: {:.1} steps/s, {:.3} ms/step, simulated time {}",
        ran,
        wall.as_secs_f64(),
        steps as f64 / wall.as_secs_f64().max(1e-12),
        ms(t.total, t.steps),
        sim.time()
    );
    println!("{:<28} {:>10} {:>7}", "phase", "ms/step", "share");
    let total = t.total.as_secs_f64().max(1e-12);
    for (name, d) in [
        ("forces + right-hand side", t.force),
        ("matrix assembly", t.assembly),
        ("linear solve (incl. products)", t.solve),
        ("constraint projection", t.projection),
        ("mapping propagation", t.mapping),
        ("collision + response", t.collision),
        ("Lagrangian constraints", t.constraints),
        ("integration + other", t.other),
    ] {
        println!(
            "{:<28} {:>10.4} {:>6.1}%",
            name,
            ms(d, t.steps),
            100.0 * d.as_secs_f64() / total
        );
    }
    if let Some(st) = sim.last_solve.first() {
        println!(
            "last linear solve: {} iterations, residual {:.3e}",
            st.iterations, st.residual
        );
    }
    if let Some(dir) = write_states {
        match rec.write(&dir) {
            Ok(files) => {
                for f in files {
                    println!("wrote {}", f.display());
                }
            }
            Err(e) => {
                eprintln!("error: cannot write states to {}: {e}", dir.display());
                return ExitCode::from(1);
            }
        }
    }
    if let Some(e) = &vtk_failed {
        eprintln!("error: writing the VTK series or the CSV table stopped: {e}");
        return ExitCode::from(1);
    }
    if let Some(v) = &vtk_series {
        for f in v.collections() {
            println!("wrote {}", f.display());
        }
    }
    if let Some(f) = &csv {
        println!("wrote {}", f.display());
    }
    // what was simulated, in one line
    let simulated: Vec<usize> = sim
        .groups
        .iter()
        .flat_map(|g| g.states.iter().chain(&g.mapped).copied())
        .collect();
    let points: usize = simulated
        .iter()
        .filter_map(|&k| sim.scene.states[k].as_ref())
        .map(|s| s.size())
        .sum();
    if points == 0 {
        eprintln!("warning: nothing was simulated: no solver integrates any state with points");
    }
    if !dropped.is_empty() {
        let shown: Vec<&str> = dropped.iter().take(5).map(String::as_str).collect();
        eprintln!(
            "summary: {} part(s) of the scene not loaded or refused: {}{}; simulated: {} state(s), {points} point(s)",
            dropped.len(),
            shown.join(", "),
            if dropped.len() > shown.len() { ", …" } else { "" },
            simulated.len()
        );
    }
    if let Some((i, bad)) = diverged {
        eprintln!("error: the simulation diverged: non-finite positions in {bad} at step {i}; stopped there");
        return ExitCode::from(3);
    }
    if !dropped.is_empty() {
        return ExitCode::from(4);
    }
    ExitCode::SUCCESS
}
