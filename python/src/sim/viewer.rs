//! `Viewer`: the browser viewer serving a simulation's clone.

use pyo3::prelude::*;
use std::sync::Mutex;

/// A browser viewer serving a simulation (see `Simulation.view`).
#[pyclass(name = "Viewer", module = "canape._native")]
pub struct PyViewer {
    pub(super) server: Mutex<Option<canape_view::Server>>,
}

#[pymethods]
impl PyViewer {
    /// The page's address (None once stopped).
    #[getter]
    fn url(&self) -> Option<String> {
        self.server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|s| s.url())
    }

    /// Open WebSocket connections (pages watching).
    #[getter]
    fn clients(&self) -> usize {
        self.server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map_or(0, |s| s.clients())
    }

    /// Open the page in the default browser (best effort); whether one was started.
    fn open_browser(&self) -> bool {
        self.url().is_some_and(|u| canape_view::open_browser(&u))
    }

    /// Stop the viewer's simulation and server threads.
    fn stop(&self, py: Python<'_>) {
        let server = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(s) = server {
            py.detach(move || s.stop());
        }
    }
}
