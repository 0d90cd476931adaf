//! Canapé facade: the registry of every built-in component, scene loading from a file in one
//! call, state recording in SOFA's format, and the regression runner.

pub mod bench;
pub mod record;
pub mod registry;
pub mod regression;

#[cfg(test)]
mod error_texts;

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
    let (scene, diags) = build_with(text, path, opts, registry)?;
    Ok(start(scene, diags, opts))
}

/// Read and build a scene from XML text (as if it were the file `dir/name`) without
/// initialising it: the caller may add components of its own (a Python binding adds its
/// controllers) before [`start`].
pub fn build_scene_str(
    xml: &str,
    name: &str,
    dir: &Path,
    opts: &LoadOptions,
) -> Result<(canape_core::scene::Scene, Diagnostics), LoadError> {
    build_with(Some(xml), &dir.join(name), opts, &registry::registry())
}

/// Initialise a built scene into a simulation with the options' dt and threads.
pub fn start(
    mut scene: canape_core::scene::Scene,
    diags: Diagnostics,
    opts: &LoadOptions,
) -> Simulation {
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
    sim
}

fn build_with(
    text: Option<&str>,
    path: &Path,
    opts: &LoadOptions,
    registry: &canape_core::registry::Registry,
) -> Result<(canape_core::scene::Scene, Diagnostics), LoadError> {
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
    let (scene, bd) = Builder::new(registry, &resolver).build(&desc);
    diags.extend(bd);
    Ok((scene, diags))
}

/// Why [`create_component`] created nothing.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CreateError {
    /// The class was removed from SOFA: the registry's explanation.
    #[error("{reason}")]
    Removed { class: String, reason: String },
    #[error("unknown component class '{class}'{}", hint(.suggestions))]
    UnknownClass {
        class: String,
        suggestions: Vec<&'static str>,
    },
    #[error(transparent)]
    Template(#[from] canape_core::registry::TemplateError),
    #[error("{class} has no Data '{name}'{}", hint(.suggestions))]
    NoData {
        class: String,
        name: String,
        suggestions: Vec<&'static str>,
    },
    #[error("{class}.{name} = '{value}': {reason}")]
    BadValue {
        class: String,
        name: String,
        value: String,
        #[source]
        reason: Box<canape_core::data::DataError>,
    },
}

/// ` (did you mean 'a' or 'b'?)`, or nothing without suggestions.
fn hint(suggestions: &[&str]) -> String {
    canape_core::diag::did_you_mean(suggestions).map_or(String::new(), |h| format!(" ({h})"))
}

/// Create a component of a built-in class with Data given as text, as a scene file would (for
/// [`Simulation::add_component`]). An unknown class or Data, or a bad value, is an error naming
/// it, with the closest names as suggestions.
pub fn create_component(
    class: &str,
    template: &str,
    attrs: &[(&str, &str)],
) -> Result<canape_core::scene::AnyComponent, CreateError> {
    use canape_core::registry::Lookup;
    let registry = registry::registry();
    let entry = match registry.lookup(class) {
        Lookup::Found(e) | Lookup::Renamed { new: e, .. } => e,
        Lookup::Removed(reason) => {
            return Err(CreateError::Removed {
                class: class.to_string(),
                reason,
            })
        }
        Lookup::Unknown { suggestions } => {
            return Err(CreateError::UnknownClass {
                class: class.to_string(),
                suggestions,
            });
        }
    };
    let mut c = (entry.create)(entry.class, template)?;
    for (name, value) in attrs {
        let data = c.base_mut().data_mut();
        if data.field(name).is_none() && !data.set_extra(name, value) {
            let names = data.all_names();
            let suggestions = canape_core::diag::closest(name, names.iter().copied(), 3);
            return Err(CreateError::NoData {
                class: class.to_string(),
                name: name.to_string(),
                suggestions,
            });
        }
        if data.field(name).is_some() {
            data.set_str(name, value)
                .map_err(|reason| CreateError::BadValue {
                    class: class.to_string(),
                    name: name.to_string(),
                    value: value.to_string(),
                    reason: Box::new(reason),
                })?;
        }
    }
    Ok(c)
}

/// Add the `<Node>` written in `xml` (SOFA's scene syntax, its components and links; links may
/// name anything in the scene) as a child of `parent` of a running simulation, between steps.
/// File names resolve from `dir`. The new components are initialised and join the solver groups
/// of their context; diagnostics go to `sim.diagnostics`. A fragment that does not parse, or
/// whose build or initialisation gives an error, is refused and nothing stays added.
pub fn add_xml(
    sim: &mut Simulation,
    parent: canape_core::scene::NodeId,
    xml: &str,
    dir: &Path,
    opts: &LoadOptions,
) -> Result<canape_core::scene::NodeId, LoadError> {
    let (_, nodes) = add_fragment(sim, parent, xml, dir, opts, false)?;
    // the builder always adds the fragment's node
    Ok(nodes.first().copied().unwrap_or(parent))
}

/// Add the objects and child nodes written inside the `<Node>` of `xml` to the existing node
/// `node` of a running simulation, between steps (the fragment's node name and attributes are
/// not used). Returns the new components. As [`add_xml`], a fragment that does not parse or
/// whose build or initialisation gives an error is refused and nothing stays added.
pub fn add_xml_into(
    sim: &mut Simulation,
    node: canape_core::scene::NodeId,
    xml: &str,
    dir: &Path,
    opts: &LoadOptions,
) -> Result<Vec<canape_core::scene::ComponentId>, LoadError> {
    add_fragment(sim, node, xml, dir, opts, true).map(|(ids, _)| ids)
}

/// Read a fragment and build it under `node` (as a new child node, or `into` the node itself),
/// initialise what it added, or take it all back on an error. Returns the new components and
/// the new child nodes of `node`.
fn add_fragment(
    sim: &mut Simulation,
    node: canape_core::scene::NodeId,
    xml: &str,
    dir: &Path,
    opts: &LoadOptions,
    into: bool,
) -> Result<
    (
        Vec<canape_core::scene::ComponentId>,
        Vec<canape_core::scene::NodeId>,
    ),
    LoadError,
> {
    if let Err(e) = sim.scene.check_node(node) {
        let mut diagnostics = Diagnostics::default();
        diagnostics.push(canape_core::diag::Diagnostic::error(e.to_string()));
        return Err(LoadError { diagnostics });
    }
    let registry = registry::registry();
    let resolver = FileResolver::from_env(&opts.data_paths);
    let is_component = |t: &str| {
        registry.get(t).is_some() || canape_core::registry::RENAMED.iter().any(|(o, _)| *o == t)
    };
    let mut reader = DescReader::new(&resolver, &is_component);
    let desc = match reader.read_str(xml, &dir.join("(added).scn")) {
        Ok(d) => d,
        Err(d) => {
            let mut diagnostics = reader.diags;
            diagnostics.push(d);
            return Err(LoadError { diagnostics });
        }
    };
    let mut diags = reader.diags;
    let old_components = sim.scene.node(node).components.clone();
    let old_children = sim.scene.node(node).children.clone();
    let scene = std::mem::take(&mut sim.scene);
    let builder = Builder::on_scene(&registry, &resolver, scene);
    let (scene, bd) = if into {
        builder.build_into(node, &desc)
    } else {
        let (scene, _, bd) = builder.build_under(node, &desc);
        (scene, bd)
    };
    sim.scene = scene;
    diags.extend(bd);
    let new_children: Vec<_> = sim
        .scene
        .node(node)
        .children
        .iter()
        .copied()
        .filter(|c| !old_children.contains(c))
        .collect();
    let mut ids: Vec<_> = sim
        .scene
        .node(node)
        .components
        .iter()
        .copied()
        .filter(|c| !old_components.contains(c))
        .collect();
    for &c in &new_children {
        for n in sim.scene.subtree(c) {
            ids.extend(sim.scene.node(n).components.iter().copied());
        }
    }
    let before = sim.diagnostics.len();
    if !diags.has_errors() {
        sim.components_added(&ids);
    }
    let init_failed = sim.diagnostics.items[before..]
        .iter()
        .any(|d| d.severity == canape_core::diag::Severity::Error);
    if diags.has_errors() || init_failed {
        diags.items.extend(sim.diagnostics.items.split_off(before));
        // nothing outside what was added can use it yet
        for &c in new_children.iter().rev() {
            let _ = sim.remove_node(c);
        }
        for &c in ids.iter().rev() {
            if sim.scene.check_component(c).is_ok() {
                let _ = sim.remove_component(c);
            }
        }
        return Err(LoadError { diagnostics: diags });
    }
    sim.diagnostics.extend(diags);
    Ok((ids, new_children))
}

/// The bundled demo scene (a corotational FEM beam), used when no scene is given.
pub const DEMO_SCENE: &str = include_str!("../scenes/demo_beam.scn");
