//! Canapé facade: the registry of every built-in component, scene loading from a file in one
//! call, state recording in SOFA's format, and the regression runner.

pub mod bench;
pub mod record;
pub mod registry;
pub mod regression;

pub use canape_core as core;
pub use canape_io as io;
pub use canape_simulation::{PhaseTimes, Simulation};

use canape_core::diag::{Diagnostic, Diagnostics};
use canape_io::build::Builder;
use canape_io::desc::DescReader;
use canape_io::files::FileResolver;
use std::path::{Path, PathBuf};

/// Options for loading a scene.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Extra data folders (`--data-path`), searched after the scene's folder and SOFA_DATA_PATH.
    pub data_paths: Vec<PathBuf>,
    /// Override the root dt.
    pub dt: Option<f64>,
}

/// Loading failed before a scene could be built (unreadable or malformed file).
#[derive(Debug)]
pub struct LoadError {
    pub diagnostics: Diagnostics,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for d in self.diagnostics.iter() {
            writeln!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// Load, build and initialise a scene file. Diagnostics that do not prevent loading are kept in
/// `Simulation::diagnostics`.
pub fn load_scene(path: &Path, opts: &LoadOptions) -> Result<Simulation, LoadError> {
    let registry = registry::registry();
    let resolver = FileResolver::from_env(&opts.data_paths);
    let is_component = |t: &str| {
        registry.get(t).is_some() || canape_core::registry::RENAMED.iter().any(|(o, _)| *o == t)
    };
    let mut reader = DescReader::new(&resolver, &is_component);
    let desc = match reader.read_file(path) {
        Ok(d) => d,
        Err(d) => {
            let mut diagnostics = reader.diags;
            diagnostics.push(d);
            return Err(LoadError { diagnostics });
        }
    };
    let mut diags = reader.diags;
    let (mut scene, bd) = Builder::new(&registry, &resolver).build(&desc);
    diags.extend(bd);
    if let Some(dt) = opts.dt {
        if let Some(root) = scene.nodes.first_mut() {
            root.dt = dt;
        }
    }
    let sim = Simulation::new(scene, diags);
    Ok(sim)
}

/// Load a scene from XML text (tests, embedded demos). `dir` is where relative files resolve.
pub fn load_scene_str(
    xml: &str,
    name: &str,
    dir: &Path,
    opts: &LoadOptions,
) -> Result<Simulation, LoadError> {
    let tmp = std::env::temp_dir().join(format!("canape-{}-{}", std::process::id(), name));
    std::fs::write(&tmp, xml).map_err(|e| LoadError {
        diagnostics: Diagnostics {
            items: vec![Diagnostic::error(format!(
                "cannot write temporary scene: {e}"
            ))],
        },
    })?;
    let mut o = opts.clone();
    o.data_paths.insert(0, dir.to_path_buf());
    let r = load_scene(&tmp, &o);
    let _ = std::fs::remove_file(&tmp);
    r
}

/// The bundled demo scene (a corotational FEM beam), used when no scene is given.
pub const DEMO_SCENE: &str = include_str!("../scenes/demo_beam.scn");
