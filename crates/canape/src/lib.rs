//! Canapé facade: the registry of every built-in component, scene loading from a file in one
//! call, state recording in SOFA's format, and the regression runner.

pub mod bench;
pub mod record;
pub mod registry;
pub mod regression;

pub use canape_core as core;
pub use canape_core::types;
pub use canape_io as io;
pub use canape_simulation::{is_editable_role, PhaseTimes, Simulation, Snapshot};

use canape_core::diag::Diagnostics;
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
    /// Worker threads for the steps (0 or 1: one thread).
    pub threads: usize,
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
    // a relative scene path is resolved from the working directory, so that the files the
    // scene names are found relative to its folder whatever that directory is
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    load(None, &path, opts)
}

/// Load a scene from XML text (tests, embedded demos) as if it were the file `dir/name`:
/// relative file names resolve from `dir`.
pub fn load_scene_str(
    xml: &str,
    name: &str,
    dir: &Path,
    opts: &LoadOptions,
) -> Result<Simulation, LoadError> {
    load(Some(xml), &dir.join(name), opts)
}

/// [`load_scene_str`] with a registry of one's own: the built-in classes
/// ([`registry::registry`]) plus an application's components (controllers, force fields…).
pub fn load_scene_str_with(
    xml: &str,
    name: &str,
    dir: &Path,
    opts: &LoadOptions,
    registry: &canape_core::registry::Registry,
) -> Result<Simulation, LoadError> {
    load_with(Some(xml), &dir.join(name), opts, registry)
}

fn load(text: Option<&str>, path: &Path, opts: &LoadOptions) -> Result<Simulation, LoadError> {
    load_with(text, path, opts, &registry::registry())
}

fn load_with(
    text: Option<&str>,
    path: &Path,
    opts: &LoadOptions,
    registry: &canape_core::registry::Registry,
) -> Result<Simulation, LoadError> {
    let resolver = FileResolver::from_env(&opts.data_paths);
    let is_component = |t: &str| {
        registry.get(t).is_some() || canape_core::registry::RENAMED.iter().any(|(o, _)| *o == t)
    };
    let mut reader = DescReader::new(&resolver, &is_component);
    let read = match text {
        Some(t) => reader.read_str(t, path),
        None => reader.read_file(path),
    };
    let desc = match read {
        Ok(d) => d,
        Err(d) => {
            let mut diagnostics = reader.diags;
            diagnostics.push(d);
            return Err(LoadError { diagnostics });
        }
    };
    let mut diags = reader.diags;
    let (mut scene, bd) = Builder::new(registry, &resolver).build(&desc);
    diags.extend(bd);
    if let Some(dt) = opts.dt {
        if let Some(root) = scene.nodes.first_mut() {
            root.dt = dt;
        }
    }
    let mut sim = Simulation::new(scene, diags);
    if opts.threads > 1 {
        if let Err(e) = sim.set_threads(opts.threads) {
            sim.diagnostics
                .push(canape_core::diag::Diagnostic::warning(e));
        }
    }
    Ok(sim)
}

/// The bundled demo scene (a corotational FEM beam), used when no scene is given.
pub const DEMO_SCENE: &str = include_str!("../scenes/demo_beam.scn");
