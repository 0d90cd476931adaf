//! Helpers of the Python classes: components and nodes by handle or path, diagnostics, Data
//! read and written as Python values, state vectors.

use super::cell::{runtime, Access};

use crate::convert::{kind_name, to_py};
use canape_core::diag::Severity;
use canape_core::scene::{ComponentId, NodeId, Scene};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyValueError};
use pyo3::prelude::*;

pub(super) fn component_id(scene: &Scene, index: usize, generation: u32) -> PyResult<ComponentId> {
    match scene.component_at(index) {
        Some(id) if id.generation() == generation => Ok(id),
        _ => Err(runtime(
            "this component was removed from its simulation (stale handle)",
        )),
    }
}

pub(super) fn node_by_path(scene: &Scene, path: &str) -> PyResult<NodeId> {
    let want = if path.is_empty() { "/" } else { path };
    scene
        .node_ids()
        .find(|&n| {
            let p = scene.node_path(n);
            p == want || (want == "/" && scene.node(n).parent.is_none())
        })
        .ok_or_else(|| PyKeyError::new_err(format!("no node at '{path}'")))
}

pub(super) fn diag_text(d: &canape_core::diag::Diagnostic) -> (String, String) {
    let sev = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "info",
    };
    (sev.to_string(), d.to_string())
}

/// An assembled matrix as (rows, cols, values, size).
pub(super) type MatrixTriplets = (Vec<u32>, Vec<u32>, Vec<f64>, usize);

/// Information about one Data: (kind, help, default, is_set, link, output).
pub(super) type DataInfo = (String, String, String, bool, Option<String>, bool);

pub(super) fn data_info(
    c: &dyn canape_core::component::Component,
    name: &str,
) -> PyResult<DataInfo> {
    let f = c
        .data()
        .field(name)
        .ok_or_else(|| PyKeyError::new_err(format!("{} has no Data '{name}'", c.class_name())))?;
    Ok((
        kind_name(f.kind),
        f.help.to_string(),
        f.default_text.to_string(),
        f.is_set,
        f.link.clone(),
        f.output,
    ))
}

/// Set a Data of a component not yet initialised from text (an open table keeps an undeclared
/// one as text).
pub(super) fn set_text(
    c: &mut dyn canape_core::component::Component,
    name: &str,
    text: &str,
) -> PyResult<()> {
    let class = c.class_name();
    let t = c.data_mut();
    if t.field(name).is_none() {
        if t.set_extra(name, text) {
            return Ok(());
        }
        return Err(PyKeyError::new_err(format!("{class} has no Data '{name}'")));
    }
    t.set_str(name, text)
        .map_err(|e| PyValueError::new_err(format!("{class}.{name}: {e}")))
}

pub(super) fn get_value(
    py: Python<'_>,
    c: &dyn canape_core::component::Component,
    name: &str,
) -> PyResult<Py<PyAny>> {
    let f = c.data().field(name);
    match (f, c.read_data(name)) {
        (Some(f), Some(v)) => to_py(py, v, f.kind),
        _ => {
            if let Some((_, text)) = c.data().extra.iter().rev().find(|(n, _)| n == name) {
                return Ok(text.into_pyobject(py)?.into_any().unbind());
            }
            Err(PyKeyError::new_err(format!(
                "{} has no Data '{name}'",
                c.class_name()
            )))
        }
    }
}

/// The state vector a MechanicalObject Data names, if it is one.
pub(super) fn state_vec(name: &str) -> Option<canape_core::state::VecId> {
    use canape_core::state::VecId;
    Some(match name {
        "position" | "x" => VecId::POSITION,
        "velocity" | "v" => VecId::VELOCITY,
        "force" | "f" => VecId::FORCE,
        "rest_position" | "x0" => VecId::REST_POSITION,
        "derivX" | "dx" => VecId::DX,
        _ => return None,
    })
}

pub(super) fn write_state(
    a: Access<'_>,
    id: ComponentId,
    vid: canape_core::state::VecId,
    v: &[f64],
) -> PyResult<()> {
    let mo = match a {
        Access::Control(c) => c.state_mut(id),
        Access::Running(s) => s.scene.state_mut(id),
        Access::Built(s) => s.state_mut(id),
    }
    .ok_or_else(|| runtime("not a state"))?;
    let dst = mo.vec_mut(vid);
    if dst.len() != v.len() {
        return Err(PyIndexError::new_err(format!(
            "{} values given for a vector of {} (a running state keeps its size)",
            v.len(),
            dst.len()
        )));
    }
    dst.copy_from_slice(v);
    Ok(())
}
