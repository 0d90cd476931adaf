//! `Proto` (a component made from Data text, outside any scene) and the registry queries
//! `classes` and `suggest_class`.

use super::data::{data_info, get_value, set_text, DataInfo};

use crate::controller::describe;
use canape_core::scene::AnyComponent;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::sync::{Mutex, MutexGuard};

/// A component made from Data text by the registry, outside any scene: what a Python scene's
/// `addObject` makes before the scene is initialised (its Data read and checked at once).
#[pyclass(module = "canape._native")]
pub struct Proto {
    // a pyclass must be Sync: the component is behind a mutex (never contended: the GIL is held)
    comp: Mutex<AnyComponent>,
}

impl Proto {
    fn comp(&self) -> MutexGuard<'_, AnyComponent> {
        self.comp.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl Proto {
    /// Create `class` (with `template`, empty for the default) from (name, text) pairs. An
    /// unknown class is a ValueError; an unknown Data a TypeError; both with suggestions.
    #[new]
    #[pyo3(signature = (class, template="", attrs=Vec::new()))]
    fn new(class: &str, template: &str, attrs: Vec<(String, String)>) -> PyResult<Self> {
        let pairs: Vec<(&str, &str)> = attrs
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        canape::create_component(class, template, &pairs)
            .map(|comp| Proto {
                comp: Mutex::new(comp),
            })
            .map_err(|e| match e {
                canape::CreateError::NoData { .. } => PyTypeError::new_err(e.to_string()),
                _ => PyValueError::new_err(e.to_string()),
            })
    }

    #[getter]
    fn class_name(&self) -> &'static str {
        self.comp().base().class_name()
    }

    #[getter]
    fn role(&self) -> String {
        format!("{:?}", self.comp().role())
    }

    fn data_names(&self) -> Vec<String> {
        let g = self.comp();
        let t = g.base().data();
        let mut v: Vec<String> = t.fields().iter().map(|f| f.name.to_string()).collect();
        v.extend(t.extra.iter().map(|(n, _)| n.clone()));
        v
    }

    fn has_data(&self, name: &str) -> bool {
        let g = self.comp();
        let t = g.base().data();
        t.field(name).is_some() || t.extra.iter().any(|(n, _)| n == name)
    }

    fn data_info(&self, name: &str) -> PyResult<DataInfo> {
        data_info(self.comp().base(), name)
    }

    fn get(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        get_value(py, self.comp().base(), name)
    }

    fn set(&self, name: &str, text: &str) -> PyResult<()> {
        set_text(self.comp().base_mut(), name, text)
    }
}

/// Every registered class: (class, description, inert).
#[pyfunction]
pub fn classes() -> Vec<(String, String, bool)> {
    canape::registry::registry()
        .classes()
        .map(|e| (e.class.to_string(), e.description.to_string(), e.inert))
        .collect()
}

/// The registered class names closest to `name` (for "did you mean").
#[pyfunction]
pub fn suggest_class(name: &str) -> Vec<String> {
    let r = canape::registry::registry();
    let names: Vec<&str> = r.classes().map(|e| e.class).collect();
    canape_core::diag::closest(name, names.iter().copied(), 3)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// Keep `describe` reachable for error paths that format Python exceptions.
#[allow(dead_code)]
pub fn exception_text(py: Python<'_>, e: &PyErr) -> String {
    describe(py, e)
}
