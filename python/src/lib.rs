//! `canape._native`: the Python extension module. It exposes a running [`Simulation`] (load a
//! scene or build one from XML, step with the GIL released, read and write Data as numpy arrays,
//! snapshot, restore, clone), prototypes of components for scenes written in Python before they
//! are initialised, and Python controllers as scene components.
//!
//! The pure-Python packages beside this crate (`canape`, `Sofa`, `SofaRuntime`, `SofaTypes`)
//! are written over this module; nothing here knows SofaPython3's API.
//!
//! Re-entrance: while a simulation steps, its mutex is held by the stepping thread and the GIL
//! released. A Python controller called from the step re-acquires the GIL; the data it reads or
//! writes goes through the `SceneControl` the step lent it (recorded per thread in [`Reentry`]),
//! never through the locked mutex.

mod controller;
mod convert;
mod forcefield;
mod mapping;
mod sim;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<sim::PySimulation>()?;
    m.add_class::<sim::PySnapshot>()?;
    m.add_class::<sim::PyViewer>()?;
    m.add_class::<sim::Proto>()?;
    m.add_function(wrap_pyfunction!(sim::classes, m)?)?;
    m.add_function(wrap_pyfunction!(sim::suggest_class, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
