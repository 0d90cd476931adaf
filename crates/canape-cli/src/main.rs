//! The `canape` command: run a scene headless, view it in the browser, run SOFA's regression
//! lists, benchmark scenes.

use canape::core::diag::Severity;
use canape::record::{run_recorded_until, CsvSeries, Recorder, VtkSeries};
use canape::regression::{default_refs, matches, run_entry, Verdict};
use canape::{load_scene, load_scene_str, LoadOptions, Simulation};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "canape",
    version,
    about = "Canapé: SOFA scenes, simulated in Rust"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scene headless (the bundled demo beam when no scene is given).
    #[command(after_help = EXIT_CODES)]
    Run {
        scene: Option<PathBuf>,
        /// Number of steps.
        #[arg(short = 'n', long = "steps", default_value_t = 100)]
        steps: usize,
        /// Override the root dt (a positive, finite number of seconds).
        #[arg(long, value_parser = positive_dt)]
        dt: Option<f64>,
        /// Worker threads for the stiffness products (results are bit-identical run to run for a given count).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
        threads: u16,
        /// Do not run a scene that loaded with errors (parts of it dropped): exit with code 4.
        #[arg(long)]
        strict: bool,
        /// Write the states SOFA's regression test records, in SOFA's WriteState format.
        #[arg(long = "write-states")]
        write_states: Option<PathBuf>,
        /// Also record states under mappings.
        #[arg(long)]
        mapped: bool,
        /// Record before every step instead of at T=0 and the start of the last step (the final
        /// state is always recorded too).
        #[arg(long = "every-step", conflicts_with = "every")]
        every_step: bool,
        /// Record every N steps (and T=0 and the final state): the states of --write-states and
        /// the frames of --vtk. Without it, --vtk writes every step.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        every: Option<u64>,
        /// Write a VTK series per simulated state for ParaView: DIR/<k>_<name>_<frame>.vtu with
        /// the context topology's cells and the velocity, and DIR/<k>_<name>.pvd (rewritten
        /// after each frame, so a stopped run keeps what it wrote).
        #[arg(long)]
        vtk: Option<PathBuf>,
        /// Write a CSV table (time, then each number of each --data) at the moments --vtk
        /// writes frames (every step, or every N with --every), flushed row by row.
        #[arg(long, requires = "data")]
        csv: Option<PathBuf>,
        /// A Data for --csv, as a SOFA link path: /node/object.position (repeatable).
        #[arg(long, requires = "csv")]
        data: Vec<String>,
        /// Extra folders where scene files are looked up.
        #[arg(long = "data-path")]
        data_path: Vec<PathBuf>,
    },
    /// Watch, steer and poke a scene in the browser (the bundled demo when no scene is given).
    View {
        scene: Option<PathBuf>,
        /// Port (0 picks a free one).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Address to listen on. Anything but loopback needs --allow-remote, and the page then
        /// needs the random token printed in its URL.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// Allow listening beyond loopback (anyone with the printed URL, token included, can
        /// watch and control the simulation).
        #[arg(long = "allow-remote")]
        allow_remote: bool,
        /// Do not open a browser; only print the URL.
        #[arg(long = "no-open")]
        no_open: bool,
        /// Start paused, whatever the scene says. Without --paused or --play, the scene's root
        /// `animate` decides, as in runSofa: animate="1" plays once a page connects, otherwise
        /// the simulation waits for Animate.
        #[arg(long, conflicts_with = "play")]
        paused: bool,
        /// Start playing once a page connects, whatever the scene says.
        #[arg(long)]
        play: bool,
        /// Override the root dt.
        #[arg(long)]
        dt: Option<f64>,
        #[arg(long = "data-path")]
        data_path: Vec<PathBuf>,
    },
    /// Run the scenes of a SOFA regression list and score them with SOFA's metric.
    Regress {
        list: PathBuf,
        /// Folder holding `references/` ($REGRESSION_DIR); found from the list's location if omitted.
        #[arg(long)]
        refs: Option<PathBuf>,
        /// Only scenes whose path contains one of these comma-separated patterns.
        #[arg(long)]
        only: Option<String>,
        #[arg(long = "data-path")]
        data_path: Vec<PathBuf>,
    },
    /// Time scenes per step (median, spread, phases, peak memory, linear iterations) next to SOFA's times.
    Bench {
        scenes: Vec<PathBuf>,
        /// Timed steps per scene (default: SOFA's count with --suite, else 200).
        #[arg(short = 'n', long = "steps")]
        steps: Option<usize>,
        /// Untimed steps first.
        #[arg(long, default_value_t = 10)]
        warmup: usize,
        /// Worker threads for the stiffness products.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// SOFA's perf list (`perf.scenes`): bench every scene Canapé supports.
        #[arg(long)]
        suite: Option<PathBuf>,
        /// SOFA's times on this machine kind (default: sofa-here.tsv beside the suite, or found from the scene path).
        #[arg(long = "sofa-times")]
        sofa_times: Option<PathBuf>,
        /// Write results as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Run the scaling benchmark on generated corotational beams instead (element counts,
        /// comma-separated; e.g. 10000,100000).
        #[arg(long, value_delimiter = ',')]
        scaling: Vec<usize>,
        /// With --scaling: only these element kinds (tetra, hexa; comma-separated).
        #[arg(
            long = "scaling-elements",
            value_delimiter = ',',
            default_value = "tetra,hexa"
        )]
        scaling_elements: Vec<String>,
        /// With --scaling: only these solvers (cg, direct; comma-separated).
        #[arg(
            long = "scaling-solvers",
            value_delimiter = ',',
            default_value = "cg,direct"
        )]
        scaling_solvers: Vec<String>,
        /// Run the collision scaling benchmark instead: N balls, each with its own solver,
        /// falling on a floor and piling up (counts, comma-separated; e.g. 100,1000).
        #[arg(long, value_delimiter = ',')]
        falling: Vec<usize>,
        #[arg(long = "data-path")]
        data_path: Vec<PathBuf>,
    },
    /// List the component classes a scene can name: role, implementing file, description.
    Components {
        /// Print docs/components.md (a Markdown table) instead of a plain list.
        #[arg(long)]
        markdown: bool,
    },
}

/// The collision scaling benchmark: generated scenes of falling balls.
fn falling(sizes: &[usize], steps: usize) -> ExitCode {
    use canape::bench::{falling_spheres, growth_exponent, peak_rss_mb};
    println!(
        "{:>7} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "balls", "ms/step", "collision", "solve", "contacts", "peakMB"
    );
    let mut pts = Vec::new();
    for &n in sizes {
        let text = falling_spheres(n);
        let mut sim = match load_scene_str(
            &text,
            "falling.scn",
            &std::env::temp_dir(),
            &LoadOptions::default(),
        ) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        // the balls reach the floor and start piling up before timing
        for _ in 0..60 {
            sim.step();
        }
        sim.times = Default::default();
        let t0 = Instant::now();
        for _ in 0..steps {
            sim.step();
        }
        let ms = t0.elapsed().as_secs_f64() * 1000.0 / steps as f64;
        let t = &sim.times;
        let per = |d: std::time::Duration| d.as_secs_f64() * 1000.0 / t.steps.max(1) as f64;
        let contacts: usize = sim
            .scene
            .force_fields
            .iter()
            .flatten()
            .map(|f| f.contacts().len())
            .sum();
        println!(
            "{:>7} {:>10.2} {:>10.2} {:>10.2} {:>9} {:>9.0}",
            n,
            ms,
            per(t.collision),
            per(t.solve + t.assembly + t.force),
            contacts,
            peak_rss_mb().unwrap_or(0.0)
        );
        pts.push((n, ms));
    }
    if let Some(g) = growth_exponent(&pts) {
        println!("  growth exponent of time vs balls: {g:.2}");
    }
    ExitCode::SUCCESS
}

fn scaling(
    sizes: &[usize],
    steps: usize,
    elements: &[String],
    solvers: &[String],
    threads: usize,
) -> ExitCode {
    use canape::bench::{growth_exponent, peak_rss_mb, scaling_beam, BeamElement};
    println!(
        "{:<6} {:>10} {:>8} {:>12} {:>10} {:>10} {:>10} {:>7} {:>9}",
        "elem", "elements", "points", "solver", "ms/step", "forces", "solve", "iters", "peakMB"
    );
    for elem in [BeamElement::Tetra, BeamElement::Hexa] {
        let ename = if elem == BeamElement::Tetra {
            "tetra"
        } else {
            "hexa"
        };
        if !elements.iter().any(|e| e == ename) {
            continue;
        }
        for solver in [Some(100usize), None] {
            let sname = if solver.is_some() { "cg" } else { "direct" };
            if !solvers.iter().any(|s| s == sname) {
                continue;
            }
            let mut pts = Vec::new();
            for &n in sizes {
                if solver.is_none() && n > 200_000 {
                    continue; // direct factorization memory grows too fast beyond this on 24 GiB
                }
                let (text, actual) = scaling_beam(elem, n, solver);
                let mut sim = match load_scene_str(
                    &text,
                    "scaling.scn",
                    &std::env::temp_dir(),
                    &LoadOptions {
                        threads,
                        ..LoadOptions::default()
                    },
                ) {
                    Ok(s) => s,
                    Err(e) => {
                        eprintln!("{e}");
                        return ExitCode::from(2);
                    }
                };
                sim.step();
                sim.times = Default::default();
                let t0 = Instant::now();
                for _ in 0..steps {
                    sim.step();
                }
                let ms = t0.elapsed().as_secs_f64() * 1000.0 / steps as f64;
                let t = &sim.times;
                let per = |d: std::time::Duration| d.as_secs_f64() * 1000.0 / t.steps.max(1) as f64;
                let points: usize = sim.scene.states.iter().flatten().map(|s| s.size()).sum();
                println!(
                    "{:<6} {:>10} {:>8} {:>12} {:>10.1} {:>10.1} {:>10.1} {:>7.1} {:>9.0}",
                    if elem == BeamElement::Tetra {
                        "tetra"
                    } else {
                        "hexa"
                    },
                    actual,
                    points,
                    if solver.is_some() {
                        "CG(100)"
                    } else {
                        "SparseLDL"
                    },
                    ms,
                    per(t.force),
                    per(t.solve + t.assembly),
                    t.linear_iterations as f64 / t.steps.max(1) as f64,
                    peak_rss_mb().unwrap_or(0.0)
                );
                pts.push((actual, ms));
            }
            if let Some(g) = growth_exponent(&pts) {
                println!("  growth exponent of time vs elements: {g:.2}");
            }
        }
    }
    println!("(peak memory is the process peak so far: run one size per process to isolate it)");
    ExitCode::SUCCESS
}

fn bench(
    scenes: Vec<PathBuf>,
    steps: Option<usize>,
    warmup: usize,
    threads: usize,
    suite: Option<PathBuf>,
    sofa_times: Option<PathBuf>,
    json: Option<PathBuf>,
    data_path: Vec<PathBuf>,
) -> ExitCode {
    use canape::bench::{bench_scene, perf_suite, sofa_times as read_times, to_json};
    let mut list: Vec<(PathBuf, usize)> = scenes
        .into_iter()
        .map(|s| (s, steps.unwrap_or(200)))
        .collect();
    let mut tsv = sofa_times;
    if let Some(s) = &suite {
        match perf_suite(s) {
            Ok(v) => list.extend(v.into_iter().map(|(p, n)| (p, steps.unwrap_or(n)))),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
        if tsv.is_none() {
            tsv = s.parent().map(|d| d.join("sofa-here.tsv"));
        }
    }
    if tsv.is_none() {
        tsv = list.first().and_then(|(p, _)| {
            p.ancestors()
                .find(|a| a.join("perf/sofa-here.tsv").is_file())
                .map(|a| a.join("perf/sofa-here.tsv"))
        });
    }
    let times = tsv.as_deref().map(read_times).unwrap_or_default();
    if list.is_empty() {
        eprintln!("error: give scenes or --suite");
        return ExitCode::from(2);
    }
    let opts = LoadOptions {
        data_paths: data_path,
        dt: None,
        threads,
    };
    println!(
        "{:<70} {:>6} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9} {:>7}  ms per step by phase",
        "scene", "steps", "median", "min", "max", "SOFA", "SOFA/us", "peakMB", "iters",
    );
    let mut results = Vec::new();
    let mut ratios = Vec::new();
    for (p, n) in list {
        let r = bench_scene(&p, n, warmup, &opts, &times);
        let short = p
            .to_string_lossy()
            .split("examples/")
            .last()
            .unwrap_or("")
            .to_string();
        let short = if short.is_empty() {
            p.display().to_string()
        } else {
            short
        };
        match &r.error {
            Some(e) => println!(
                "{:<70} unsupported: {}",
                short,
                e.chars().take(120).collect::<String>()
            ),
            None => {
                if let Some(x) = r.speedup() {
                    ratios.push(x);
                }
                println!(
                    "{:<70} {:>6} {:>9.3} {:>9.3} {:>9.3} {:>9} {:>8} {:>9} {:>7}  {}",
                    short,
                    r.steps,
                    r.median_ms,
                    r.min_ms,
                    r.max_ms,
                    r.sofa_ms.map(|v| format!("{v:.3}")).unwrap_or("-".into()),
                    r.speedup()
                        .map(|v| format!("{v:.2}x"))
                        .unwrap_or("-".into()),
                    r.peak_rss_mb
                        .map(|v| format!("{v:.0}"))
                        .unwrap_or("-".into()),
                    r.iterations
                        .map(|v| format!("{v:.1}"))
                        .unwrap_or("-".into()),
                    r.phases_ms
                        .iter()
                        .map(|(k, v)| format!("{k} {v:.3}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        results.push(r);
    }
    if !ratios.is_empty() {
        let g = (ratios.iter().map(|x| x.ln()).sum::<f64>() / ratios.len() as f64).exp();
        println!("geometric mean of SOFA/Canapé per-step time over {} scenes: {g:.2}x (peak memory is the process peak so far)", ratios.len());
    }
    if let Some(j) = json {
        if let Err(e) = std::fs::write(&j, to_json(&results)) {
            eprintln!("error: cannot write {}: {e}", j.display());
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

/// Exit codes of `canape run`, shown in its --help.
const EXIT_CODES: &str = "Exit codes:
  0  the scene loaded cleanly and ran every step
  1  the scene could not be loaded at all, or the states could not be written
  2  bad arguments
  3  the simulation diverged (stopped at that step; the states recorded so far are written)
  4  parts of the scene were not loaded (errors above; the rest ran, as in SOFA), or --strict refused to run";

fn positive_dt(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number"))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!(
            "dt must be a positive, finite number of seconds ({s} given)"
        ))
    }
}

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

fn print_diagnostics(sim: &Simulation) {
    for d in sim.diagnostics.iter() {
        eprintln!("{d}");
    }
    let errors = sim
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    if errors > 0 {
        eprintln!("{errors} error(s) while loading; the scene runs without the parts that failed, as SOFA would");
    }
}

fn ms(d: std::time::Duration, steps: u64) -> f64 {
    d.as_secs_f64() * 1000.0 / steps.max(1) as f64
}

/// What `canape run` writes, and when.
#[derive(Default)]
struct Output {
    write_states: Option<PathBuf>,
    mapped: bool,
    every_step: bool,
    every: Option<usize>,
    vtk: Option<PathBuf>,
    csv: Option<PathBuf>,
    data: Vec<String>,
}

fn run(
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

/// A Python scene (`createScene(root)`) runs under the user's interpreter with Canapé's Python
/// package (`python -m canape run`); the interpreter is `CANAPE_PYTHON` or `python3`.
fn run_python(scene: Option<&std::path::Path>, steps: usize, threads: usize) -> Option<ExitCode> {
    let p = scene?;
    let ext = p.extension()?.to_str()?.to_ascii_lowercase();
    if !matches!(ext.as_str(), "py" | "py3" | "pyscn" | "py3scn") {
        return None;
    }
    let python = match python_with_package(p)? {
        Ok(py) => py,
        Err(code) => return Some(code),
    };
    let status = std::process::Command::new(&python)
        .args(["-m", "canape", "run"])
        .arg(p)
        .args(["-n", &steps.to_string(), "--threads", &threads.to_string()])
        .status();
    Some(match status {
        Ok(s) => ExitCode::from(s.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(e) => {
            eprintln!("error: cannot start {python}: {e}");
            ExitCode::from(1)
        }
    })
}

/// The interpreter for a Python scene (`CANAPE_PYTHON` or `python3`), if it can import Canapé's
/// package; otherwise the refusal, printed.
fn python_with_package(p: &std::path::Path) -> Option<Result<String, ExitCode>> {
    let python = std::env::var("CANAPE_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_package = std::process::Command::new(&python)
        .args(["-c", "import canape._native"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_package {
        eprintln!(
            "error: {} is a Python scene: it runs with Canapé's Python package, which {python} cannot import; install it with `pip install ./python` from Canapé's repository (or set CANAPE_PYTHON to an interpreter that has it)",
            p.display()
        );
        return Some(Err(ExitCode::from(2)));
    }
    Some(Ok(python))
}

/// A Python scene in the viewer: `python -m canape view` under the user's interpreter.
fn view_python(
    scene: Option<&std::path::Path>,
    host: &str,
    port: u16,
    no_open: bool,
    play: bool,
) -> Option<ExitCode> {
    let p = scene?;
    let ext = p.extension()?.to_str()?.to_ascii_lowercase();
    if !matches!(ext.as_str(), "py" | "py3" | "pyscn" | "py3scn") {
        return None;
    }
    let python = python_with_package(p)?;
    let python = match python {
        Ok(py) => py,
        Err(code) => return Some(code),
    };
    let mut cmd = std::process::Command::new(&python);
    cmd.args(["-m", "canape", "view"])
        .arg(p)
        .args(["--host", host, "--port", &port.to_string()]);
    if no_open {
        cmd.arg("--no-open");
    }
    if play {
        cmd.arg("--play");
    }
    Some(match cmd.status() {
        Ok(s) => ExitCode::from(s.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(e) => {
            eprintln!("error: cannot start {python}: {e}");
            ExitCode::from(1)
        }
    })
}

fn regress(
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

/// Load a scene file, or the bundled demo when none is given; print the diagnostics. Errors are
/// printed and give None.
fn load_or_demo(
    scene: Option<&std::path::Path>,
    opts: &LoadOptions,
) -> Option<(String, Simulation)> {
    let (label, loaded) = match scene {
        Some(p) => (p.display().to_string(), load_scene(p, opts)),
        None => (
            "bundled demo (corotational FEM beam)".to_string(),
            load_scene_str(
                canape::DEMO_SCENE,
                "demo_beam.scn",
                &std::env::current_dir().unwrap_or_default(),
                opts,
            ),
        ),
    };
    match loaded {
        Ok(sim) => {
            print_diagnostics(&sim);
            Some((label, sim))
        }
        Err(e) => {
            eprint!("{e}");
            eprintln!("error: could not load {label}");
            None
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn view(
    scene: Option<PathBuf>,
    port: u16,
    host: String,
    allow_remote: bool,
    no_open: bool,
    (paused, play): (bool, bool),
    dt: Option<f64>,
    data_path: Vec<PathBuf>,
) -> ExitCode {
    let loopback = host
        .parse::<std::net::IpAddr>()
        .map(|a| a.is_loopback())
        .unwrap_or(host == "localhost");
    if !loopback && !allow_remote {
        eprintln!("error: --host {host} listens beyond this machine's loopback: add --allow-remote to do so (the page will need the token printed in its URL)");
        return ExitCode::from(2);
    }
    if !loopback {
        eprintln!("warning: listening on {host}: anyone with the URL below (its token included) can watch and control the simulation");
    }
    let opts = LoadOptions {
        data_paths: data_path,
        dt,
        threads: 1,
    };
    if let Some(code) = view_python(scene.as_deref(), &host, port, no_open, play) {
        return code;
    }
    let Some((label, sim)) = load_or_demo(scene.as_deref(), &opts) else {
        return ExitCode::from(2);
    };
    // runSofa starts paused unless the root says animate="1"
    let paused = paused || !(play || sim.scene.animate == Some(true));
    let server = match canape_view::Server::start(sim, &label, &host, port, paused) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot listen on {host}:{port}: {e}");
            if e.kind() == std::io::ErrorKind::AddrInUse {
                eprintln!("help: another program uses this port; try --port 0 (any free port) or another number");
            }
            return ExitCode::from(2);
        }
    };
    let url = server.url();
    println!("scene: {label}");
    println!("Canapé viewer at {url}  (Ctrl-C to stop)");
    if !no_open && !canape_view::open_browser(&url) {
        println!("(no browser found to open: open the address above yourself)");
    }
    server.wait();
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        None => run(None, 100, None, 1, false, Output::default(), Vec::new()),
        Some(Cmd::Run {
            scene,
            steps,
            dt,
            threads,
            strict,
            write_states,
            mapped,
            every_step,
            every,
            vtk,
            csv,
            data,
            data_path,
        }) => run(
            scene,
            steps,
            dt,
            threads as usize,
            strict,
            Output {
                write_states,
                mapped,
                every_step,
                every: every.map(|n| n as usize),
                vtk,
                csv,
                data,
            },
            data_path,
        ),
        Some(Cmd::View {
            scene,
            port,
            host,
            allow_remote,
            no_open,
            paused,
            play,
            dt,
            data_path,
        }) => view(
            scene,
            port,
            host,
            allow_remote,
            no_open,
            (paused, play),
            dt,
            data_path,
        ),
        Some(Cmd::Components { markdown }) => {
            if markdown {
                print!("{}", canape::registry::components_markdown());
            } else {
                for c in canape::registry::class_index() {
                    println!(
                        "{:<44} {:<20} {}{}",
                        c.class,
                        c.role,
                        c.file.as_deref().unwrap_or("-"),
                        if c.inert { "  (passive)" } else { "" }
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Some(Cmd::Regress {
            list,
            refs,
            only,
            data_path,
        }) => regress(list, refs, only, data_path),
        Some(Cmd::Bench {
            scenes,
            steps,
            warmup,
            threads,
            suite,
            sofa_times,
            json,
            data_path,
            scaling: sizes,
            scaling_elements,
            scaling_solvers,
            falling: balls,
        }) => {
            if !balls.is_empty() {
                falling(&balls, steps.unwrap_or(100))
            } else if sizes.is_empty() {
                bench(
                    scenes, steps, warmup, threads, suite, sofa_times, json, data_path,
                )
            } else {
                scaling(
                    &sizes,
                    steps.unwrap_or(5),
                    &scaling_elements,
                    &scaling_solvers,
                    threads,
                )
            }
        }
    }
}
