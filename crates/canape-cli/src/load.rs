//! Scene loading shared by `canape run` and `canape view`: the bundled demo and the
//! diagnostics.

use canape::core::diag::Severity;
use canape::{load_scene, load_scene_str, LoadOptions, Simulation};

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

/// Load a scene file, or the bundled demo when none is given; print the diagnostics. Errors are
/// printed and give None.
pub(crate) fn load_or_demo(
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
