//! The Python classes: `Simulation` (a scene built from XML or a file, then started and stepped),
//! `Snapshot`, and `Proto` (a component made from Data text, not yet in a scene, for scenes
//! written in Python whose objects are read before the scene is initialised).
//!
//! `Simulation`'s Python methods are here; its shared cell (`cell`), the Data helpers (`data`),
//! `Viewer` (`viewer`) and `Proto` with the registry queries (`proto`) are in submodules.

mod cell;
mod data;
mod proto;
mod viewer;

use cell::{runtime, Access, Cell, Stage};
use data::{
    component_id, data_info, diag_text, get_value, node_by_path, set_text, state_vec, write_state,
    DataInfo, MatrixTriplets,
};
pub use proto::{classes, suggest_class, Proto};
pub use viewer::PyViewer;

use crate::controller::{PyController, Reentry};
use crate::forcefield::PyForceField;
use crate::mapping::PyMapping;
use canape::{LoadOptions, Simulation};
use canape_core::component::Event;
use canape_core::scene::AnyComponent;
use numpy::PyReadonlyArray1;
use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// `step` on a simulation that was not started (a RuntimeError in Python).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the simulation is not initialised yet")]
struct NotInitialised;

/// A scene being built or running, as Python sees it.
#[pyclass(name = "Simulation", module = "canape._native")]
pub struct PySimulation {
    cell: Arc<Cell>,
}

/// Positions, velocities and time to come back to.
#[pyclass(name = "Snapshot", module = "canape._native")]
pub struct PySnapshot {
    snap: canape::Snapshot,
}

impl PySimulation {
    fn wrap(stage: Stage, reentry: Arc<Reentry>, dir: PathBuf) -> Self {
        PySimulation {
            cell: Arc::new(Cell {
                stage: Mutex::new(stage),
                busy: Mutex::new(None),
                reentry,
                dir,
            }),
        }
    }

    fn running<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Simulation) -> PyResult<R>,
    ) -> PyResult<R> {
        let mut g = self.cell.lock(py)?;
        match &mut *g {
            Stage::Running(s) => f(s),
            _ => Err(runtime(
                "the simulation is not initialised yet (call start() / Sofa.Simulation.init)",
            )),
        }
    }
}

#[pymethods]
impl PySimulation {
    /// Load a scene file (.scn/.xml), initialise it.
    #[staticmethod]
    #[pyo3(signature = (path, dt=None, threads=0, data_paths=Vec::new()))]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        dt: Option<f64>,
        threads: usize,
        data_paths: Vec<PathBuf>,
    ) -> PyResult<Self> {
        let opts = LoadOptions {
            data_paths,
            dt,
            threads,
        };
        let dir = path.parent().map(PathBuf::from).unwrap_or_default();
        let reentry = Arc::new(Reentry::default());
        let sim = py
            .detach(|| canape::load_scene(&path, &opts))
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
        Ok(Self::wrap(Stage::Running(Box::new(sim)), reentry, dir))
    }

    /// Build a scene from XML text as if it were the file `dir/name`, without initialising it.
    /// A text that cannot be read is a ValueError with the diagnostics.
    #[staticmethod]
    #[pyo3(signature = (xml, dir, name="(python).scn".to_string(), dt=None, threads=0, data_paths=Vec::new()))]
    fn build(
        xml: &str,
        dir: PathBuf,
        name: String,
        dt: Option<f64>,
        threads: usize,
        data_paths: Vec<PathBuf>,
    ) -> PyResult<Self> {
        let opts = LoadOptions {
            data_paths,
            dt,
            threads,
        };
        let (scene, diags) = canape::build_scene_str(xml, &name, &dir, &opts)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Self::wrap(
            Stage::Built {
                scene: Box::new(scene),
                diags,
                opts,
            },
            Arc::new(Reentry::default()),
            dir,
        ))
    }

    /// Add a Python object as a controller of node `node_path`: before `start` it takes its
    /// place among the node's components; on a running simulation it is added between steps.
    /// `role` is "Controller" (events), "ForceField" (a Sofa.Core.ForceField subclass) or
    /// "Mapping" (a Sofa.Core.Mapping subclass, with its `input` and `output` links).
    #[pyo3(signature = (node_path, name, obj, role="Controller", input="", output=""))]
    fn add_controller(
        &self,
        py: Python<'_>,
        node_path: &str,
        name: &str,
        obj: Py<PyAny>,
        role: &str,
        input: &str,
        output: &str,
    ) -> PyResult<(usize, u32)> {
        let c = match role {
            "Controller" => AnyComponent::Controller(Box::new(PyController::new(
                obj,
                self.cell.reentry.clone(),
            ))),
            "ForceField" => AnyComponent::ForceField(Box::new(PyForceField::new(obj))),
            "Mapping" => AnyComponent::Mapping(Box::new(PyMapping::new(obj, input, output))),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown Python component role '{role}'"
                )))
            }
        };
        let mut g = self.cell.lock(py)?;
        match &mut *g {
            Stage::Built { scene, .. } => {
                let node = node_by_path(scene, node_path)?;
                let id = scene.add_component(node, name, c, None);
                Ok((id.index(), id.generation()))
            }
            Stage::Running(sim) => {
                let node = node_by_path(&sim.scene, node_path)?;
                let (id, diags) = sim.add_component(node, name, c).map_err(runtime)?;
                sim.diagnostics.items.extend(diags);
                Ok((id.index(), id.generation()))
            }
            Stage::Moving => Err(runtime("the simulation is being initialised")),
        }
    }

    /// Initialise a built scene (SOFA's init): components are initialised and controllers get
    /// SimulationInitDone. Returns the diagnostics of loading and initialisation.
    fn start(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let (scene, diags, opts) = {
            let mut g = self.cell.lock(py)?;
            match std::mem::replace(&mut *g, Stage::Moving) {
                Stage::Built { scene, diags, opts } => (scene, diags, opts),
                other => {
                    *g = other;
                    return Err(runtime("the simulation is already initialised"));
                }
            }
        };
        // the stage lock is not held while initialising: controllers reach the scene through
        // the re-entry record
        let cell = self.cell.clone();
        let out = py.detach(move || {
            cell.with_busy(|stage| {
                let sim = canape::start(*scene, diags, &opts);
                let out = sim.diagnostics.iter().map(diag_text).collect();
                *stage = Stage::Running(Box::new(sim));
                out
            })
        });
        Ok(out)
    }

    #[getter]
    fn is_running(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(matches!(*self.cell.lock(py)?, Stage::Running(_)))
    }

    /// The scene's folder (relative file names in added XML resolve from it).
    #[getter]
    fn dir(&self) -> PathBuf {
        self.cell.dir.clone()
    }

    /// Every node: (path, index, generation).
    fn nodes(&self, py: Python<'_>) -> PyResult<Vec<(String, usize, u32)>> {
        self.cell.access(py, |a| {
            let s = a.scene();
            Ok(s.node_ids()
                .map(|n| (s.node_path(n), n.index(), n.generation()))
                .collect())
        })
    }

    /// Every component in graph order: dicts with path, node, name, class, role, index,
    /// generation.
    fn components(&self, py: Python<'_>) -> PyResult<Vec<Py<PyDict>>> {
        self.cell.access(py, |a| {
            let s = a.scene();
            let mut out = Vec::new();
            for n in s.node_ids() {
                let np = s.node_path(n);
                for &c in &s.node(n).components {
                    let i = s.info(c);
                    let d = PyDict::new(py);
                    let base = if np == "/" { String::new() } else { np.clone() };
                    d.set_item("path", format!("{base}/{}", i.name))?;
                    d.set_item("node", &np)?;
                    d.set_item("name", &i.name)?;
                    d.set_item("class", i.class)?;
                    d.set_item("role", format!("{:?}", i.role))?;
                    d.set_item("index", c.index())?;
                    d.set_item("generation", c.generation())?;
                    out.push(d.unbind());
                }
            }
            Ok(out)
        })
    }

    /// Names of a component's Data (aliases excluded), in declaration order.
    fn data_names(&self, py: Python<'_>, index: usize, generation: u32) -> PyResult<Vec<String>> {
        self.cell.access(py, |a| {
            let s = a.scene();
            let id = component_id(s, index, generation)?;
            let c = s.component(id).ok_or_else(|| runtime("component busy"))?;
            let mut v: Vec<String> = c
                .data()
                .fields()
                .iter()
                .map(|f| f.name.to_string())
                .collect();
            v.extend(c.data().extra.iter().map(|(n, _)| n.clone()));
            Ok(v)
        })
    }

    /// (kind, help, default, is_set, link, output) of a Data.
    fn data_info(
        &self,
        py: Python<'_>,
        index: usize,
        generation: u32,
        name: &str,
    ) -> PyResult<DataInfo> {
        self.cell.access(py, |a| {
            let s = a.scene();
            let id = component_id(s, index, generation)?;
            let c = s.component(id).ok_or_else(|| runtime("component busy"))?;
            data_info(c, name)
        })
    }

    /// The current value of a Data: a number, text, or a numpy array. A state vector of a
    /// running simulation is a read-only view of the state's buffer (no copy; the state copies
    /// the vector before writing it again while the view lives); other lists are copies.
    fn get(
        &self,
        py: Python<'_>,
        index: usize,
        generation: u32,
        name: &str,
    ) -> PyResult<Py<PyAny>> {
        self.cell.access(py, |mut a| {
            let id = component_id(a.scene(), index, generation)?;
            let running = !matches!(a, Access::Built(_));
            if let (true, Some(vid)) = (running, state_vec(name)) {
                let width = a
                    .scene()
                    .component(id)
                    .and_then(|c| c.data().field(name).map(|f| crate::convert::width(f.kind)));
                if let (Some(w), Some(mo)) = (width, a.state_mut(id)) {
                    if mo.nb_vecs() > 0 {
                        return crate::convert::view(py, mo.shared(vid), w);
                    }
                }
            }
            let s = a.scene();
            let c = s.component(id).ok_or_else(|| runtime("component busy"))?;
            get_value(py, c, name)
        })
    }

    /// Set a Data from SOFA text. On a running simulation, a state's vectors are written in
    /// place (same size); other Data go through the edit path (the component re-initialised).
    fn set(
        &self,
        py: Python<'_>,
        index: usize,
        generation: u32,
        name: &str,
        text: &str,
    ) -> PyResult<()> {
        self.cell.access(py, |a| {
            let id = component_id(a.scene(), index, generation)?;
            let is_state = matches!(a.scene().info(id).slot, canape_core::scene::Slot::State(_));
            if is_state && !matches!(a, Access::Built(_)) {
                if let Some(vid) = state_vec(name) {
                    let kind = a
                        .scene()
                        .component(id)
                        .and_then(|c| c.data().field(name).map(|f| f.kind))
                        .ok_or_else(|| runtime("component busy"))?;
                    let v = match kind
                        .parse(text)
                        .map_err(|e| PyValueError::new_err(e.to_string()))?
                    {
                        canape_core::data::Value::Reals(v) => v,
                        _ => return Err(PyValueError::new_err("expected numbers")),
                    };
                    return write_state(a, id, vid, &v);
                }
            }
            match a {
                Access::Control(c) => c.set_data(id, name, text).map_err(runtime),
                // Python reads Data right after writing them: an edited engine recomputes now
                Access::Running(s) => s
                    .set_data(id, name, text)
                    .map(|_| {
                        s.update_engines();
                    })
                    .map_err(runtime),
                Access::Built(s) => set_text(
                    s.component_mut(id)
                        .ok_or_else(|| runtime("component busy"))?,
                    name,
                    text,
                ),
            }
        })
    }

    /// Set several Data from SOFA text at once (one re-initialisation on a running simulation).
    fn set_many(
        &self,
        py: Python<'_>,
        index: usize,
        generation: u32,
        values: Vec<(String, String)>,
    ) -> PyResult<()> {
        let pairs: Vec<(&str, &str)> = values
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        self.cell.access(py, |a| {
            let id = component_id(a.scene(), index, generation)?;
            match a {
                Access::Running(s) => s
                    .set_data_many(id, &pairs)
                    .map(|_| {
                        s.update_engines();
                    })
                    .map_err(runtime),
                Access::Control(c) => {
                    for (n, t) in &pairs {
                        c.set_data(id, n, t).map_err(runtime)?;
                    }
                    Ok(())
                }
                Access::Built(s) => {
                    let c = s
                        .component_mut(id)
                        .ok_or_else(|| runtime("component busy"))?;
                    pairs.iter().try_for_each(|(n, t)| set_text(c, n, t))
                }
            }
        })
    }

    /// Write a state vector (`position`, `velocity`…) of a running simulation from a flat
    /// float64 array of the same length.
    fn set_state(
        &self,
        py: Python<'_>,
        index: usize,
        generation: u32,
        name: &str,
        values: PyReadonlyArray1<'_, f64>,
    ) -> PyResult<()> {
        let vid = state_vec(name)
            .ok_or_else(|| PyKeyError::new_err(format!("'{name}' is not a state vector")))?;
        let v = values.as_slice()?.to_vec();
        self.cell.access(py, |a| {
            let id = component_id(a.scene(), index, generation)?;
            write_state(a, id, vid, &v)
        })
    }

    /// Advance `n` steps (the GIL is released while stepping). Returns the diagnostics the
    /// steps added (a controller's exception is one, with its traceback and path).
    #[pyo3(signature = (n=1, dt=None))]
    fn step(&self, py: Python<'_>, n: usize, dt: Option<f64>) -> PyResult<Vec<(String, String)>> {
        if self.cell.reentry.with(|_| ()).is_some() {
            return Err(runtime(
                "a controller cannot step the simulation it is called from",
            ));
        }
        let cell = self.cell.clone();
        let r = py.detach(move || {
            cell.with_busy(|stage| {
                let Stage::Running(sim) = stage else {
                    return Err(NotInitialised);
                };
                let before = sim.diagnostics.len();
                for _ in 0..n {
                    match dt {
                        Some(dt) if dt > 0.0 => sim.step_dt(dt),
                        _ => sim.step(),
                    }
                }
                Ok(sim.diagnostics.items[before..]
                    .iter()
                    .map(diag_text)
                    .collect::<Vec<_>>())
            })
        });
        r.map_err(runtime)
    }

    #[getter]
    fn time(&self, py: Python<'_>) -> PyResult<f64> {
        self.cell.access(py, |a| Ok(a.scene().time))
    }

    #[getter]
    fn dt(&self, py: Python<'_>) -> PyResult<f64> {
        self.cell
            .access(py, |a| Ok(a.scene().nodes.first().map_or(0.0, |n| n.dt)))
    }

    #[getter]
    fn gravity(&self, py: Python<'_>) -> PyResult<[f64; 3]> {
        self.cell.access(py, |a| {
            Ok(a.scene()
                .nodes
                .first()
                .map_or([0.0; 3], |n| [n.gravity.x, n.gravity.y, n.gravity.z]))
        })
    }

    fn set_dt(&self, py: Python<'_>, dt: f64) -> PyResult<()> {
        self.cell.access(py, |a| match a {
            Access::Running(s) => s.set_dt(dt).map_err(runtime),
            Access::Built(s) => {
                if let Some(r) = s.nodes.first_mut() {
                    r.dt = dt;
                }
                Ok(())
            }
            Access::Control(_) => Err(runtime("dt cannot change inside a step")),
        })
    }

    fn set_gravity(&self, py: Python<'_>, g: [f64; 3]) -> PyResult<()> {
        let g = canape_types::Vec3::new(g[0], g[1], g[2]);
        self.cell.access(py, |a| match a {
            Access::Running(s) => s.set_gravity(g).map_err(runtime),
            Access::Built(s) => {
                if let Some(r) = s.nodes.first_mut() {
                    r.gravity = g;
                }
                Ok(())
            }
            Access::Control(_) => Err(runtime("gravity cannot change inside a step")),
        })
    }

    /// Every diagnostic so far: (severity, text).
    fn diagnostics(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let mut g = self.cell.lock(py)?;
        Ok(match &mut *g {
            Stage::Running(s) => s.diagnostics.iter().map(diag_text).collect(),
            Stage::Built { diags, .. } => diags.iter().map(diag_text).collect(),
            Stage::Moving => Vec::new(),
        })
    }

    fn snapshot(&self, py: Python<'_>) -> PyResult<PySnapshot> {
        self.running(py, |s| Ok(PySnapshot { snap: s.snapshot() }))
    }

    fn restore(&self, py: Python<'_>, snap: &PySnapshot) -> PyResult<()> {
        self.running(py, |s| {
            s.restore(&snap.snap);
            Ok(())
        })
    }

    /// An independent copy (its own worker threads); Python controllers are shared objects.
    fn clone(&self, py: Python<'_>) -> PyResult<PySimulation> {
        let copy = self.running(py, |s| Ok(s.clone()))?;
        Ok(Self::wrap(
            Stage::Running(Box::new(copy)),
            self.cell.reentry.clone(),
            self.cell.dir.clone(),
        ))
    }

    /// Send a script event (SOFA's ScriptEvent) to every controller, in graph order.
    fn send_script_event(&self, py: Python<'_>, name: String) -> PyResult<()> {
        let cell = self.cell.clone();
        py.detach(move || {
            cell.with_busy(|stage| {
                if let Stage::Running(sim) = stage {
                    sim.send(&Event::Script(name));
                }
            })
        });
        Ok(())
    }

    /// Add the `<Node>` written in `xml` under the node at `parent` of a running simulation.
    fn add_xml(&self, py: Python<'_>, parent: &str, xml: &str) -> PyResult<()> {
        let dir = self.cell.dir.clone();
        self.running(py, |s| {
            let node = node_by_path(&s.scene, parent)?;
            canape::add_xml(s, node, xml, &dir, &LoadOptions::default())
                .map(|_| ())
                .map_err(|e| PyValueError::new_err(e.to_string()))
        })
    }

    /// A mass's M or a force field's K (= df/dx) assembled alone, as triplets over the
    /// context state's derivative scalars: (rows, cols, values, n), duplicates not summed.
    fn assemble(
        &self,
        py: Python<'_>,
        index: usize,
        generation: u32,
        which: &str,
    ) -> PyResult<MatrixTriplets> {
        self.cell.access(py, |a| {
            let s = a.scene();
            let id = component_id(s, index, generation)?;
            let node = s.info(id).node;
            let n = s
                .context_state(node)
                .and_then(|c| s.state(c))
                .map_or(0, |st| st.deriv_len());
            let mut t = canape_core::matrix::Triplets::new(n);
            match (which, s.info(id).slot) {
                ("M", canape_core::scene::Slot::Mass(i)) => {
                    if let Some(m) = s.masses[i].as_ref() {
                        m.add_m_to_matrix(&mut t, 1.0, 0);
                    }
                }
                ("K", canape_core::scene::Slot::ForceField(i)) => {
                    if let Some(f) = s.force_fields[i].as_ref() {
                        f.add_k_to_matrix(&mut t, 1.0, 0);
                    }
                }
                _ => {
                    return Err(PyTypeError::new_err(format!(
                        "{} has no {which} matrix (M: a mass, K: a force field)",
                        s.component_label(id)
                    )))
                }
            }
            let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
            for &(i, j, x) in &t.entries {
                r.push(i);
                c.push(j);
                v.push(x);
            }
            Ok((r, c, v, n))
        })
    }

    /// From a Python controller during a step: create `class` from Data text and queue its
    /// addition to the node at `path` (applied when the step ends, as SOFA applies changes
    /// asked during a step). Data links cannot be given this way.
    fn queue_add(
        &self,
        path: &str,
        name: &str,
        class: &str,
        template: &str,
        attrs: Vec<(String, String)>,
    ) -> PyResult<()> {
        if let Some((_, text)) = attrs.iter().find(|(_, t)| t.trim_start().starts_with('@')) {
            return Err(runtime(format!(
                "'{text}': an object with links cannot be added during a step yet; add it between steps"
            )));
        }
        let pairs: Vec<(&str, &str)> = attrs
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let comp = canape::create_component(class, template, &pairs)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        self.cell
            .reentry
            .with(|c| -> PyResult<()> {
                let node = node_by_path(c.scene(), path)?;
                c.add_component(node, name, comp).map_err(runtime)
            })
            .unwrap_or_else(|| {
                Err(runtime(
                    "queue_add is for controllers during a step (between steps, add_into)",
                ))
            })
    }

    /// Whether a controller of this simulation is running on this thread (inside a step).
    #[getter]
    fn in_step(&self) -> bool {
        self.cell.reentry.with(|_| ()).is_some()
    }

    /// Add the objects and child nodes inside the `<Node>` of `xml` to the node at `path` of a
    /// running simulation; returns the new components as (index, generation) pairs.
    fn add_into(&self, py: Python<'_>, path: &str, xml: &str) -> PyResult<Vec<(usize, u32)>> {
        let dir = self.cell.dir.clone();
        self.running(py, |s| {
            let node = node_by_path(&s.scene, path)?;
            canape::add_xml_into(s, node, xml, &dir, &LoadOptions::default())
                .map(|ids| ids.iter().map(|c| (c.index(), c.generation())).collect())
                .map_err(|e| PyValueError::new_err(e.to_string()))
        })
    }

    fn remove_component(&self, py: Python<'_>, index: usize, generation: u32) -> PyResult<()> {
        self.cell.access(py, |a| {
            let id = component_id(a.scene(), index, generation)?;
            match a {
                Access::Control(c) => c.remove_component(id).map_err(runtime),
                Access::Running(s) => s.remove_component(id).map(|_| ()).map_err(runtime),
                Access::Built(s) => s.remove_component(id).map(|_| ()).map_err(runtime),
            }
        })
    }

    fn remove_node(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        self.cell.access(py, |a| {
            let id = node_by_path(a.scene(), path)?;
            match a {
                Access::Control(c) => c.remove_node(id).map_err(runtime),
                Access::Running(s) => s.remove_node(id).map(|_| ()).map_err(runtime),
                Access::Built(s) => s.remove_node(id).map(|_| ()).map_err(runtime),
            }
        })
    }

    /// Move the node at `path` (and its subtree) under the node at `new_parent`, between steps
    /// (SOFA's moveChild): refused when a link or context lookup would change.
    fn move_node(&self, py: Python<'_>, path: &str, new_parent: &str) -> PyResult<()> {
        self.cell.access(py, |a| {
            let id = node_by_path(a.scene(), path)?;
            let parent = node_by_path(a.scene(), new_parent)?;
            match a {
                Access::Control(_) => Err(PyRuntimeError::new_err(
                    "a node cannot be moved while a step runs: move it between steps",
                )),
                Access::Running(s) => s.move_node(id, parent).map_err(runtime),
                Access::Built(s) => s.move_node(id, parent).map_err(runtime),
            }
        })
    }

    #[getter]
    fn threads(&self, py: Python<'_>) -> PyResult<usize> {
        self.running(py, |s| Ok(s.threads()))
    }

    fn set_threads(&self, py: Python<'_>, n: usize) -> PyResult<()> {
        self.running(py, |s| s.set_threads(n).map_err(runtime))
    }

    /// Serve a clone of this simulation in Canapé's browser viewer (the page `canape view`
    /// serves) on `host:port` (0: any free port). The viewer steps its clone on its own thread;
    /// this handle stays usable. Returns the running viewer.
    #[pyo3(signature = (host="127.0.0.1", port=0, paused=true, label="Python scene"))]
    fn view(
        &self,
        py: Python<'_>,
        host: &str,
        port: u16,
        paused: bool,
        label: &str,
    ) -> PyResult<PyViewer> {
        let copy = self.running(py, |s| Ok(s.clone()))?;
        let server = canape_view::Server::start(copy, label, host, port, paused)
            .map_err(|e| runtime(format!("cannot listen on {host}:{port}: {e}")))?;
        Ok(PyViewer {
            server: Mutex::new(Some(server)),
        })
    }

    /// End the simulation (SOFA's cleanup: exporters write their last files).
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        self.running(py, |s| {
            s.finish();
            Ok(())
        })
    }
}
