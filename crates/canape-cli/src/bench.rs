//! `canape bench`: per-scene timings, the scaling benchmark and the falling-balls collision
//! benchmark.

use canape::{load_scene_str, LoadOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// The collision scaling benchmark: generated scenes of falling balls.
pub(crate) fn falling(sizes: &[usize], steps: usize) -> ExitCode {
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

pub(crate) fn scaling(
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

pub(crate) fn bench(
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
