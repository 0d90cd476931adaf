//! A Python object as a scene controller: events reach its `on<EventName>` methods (SofaPython3's
//! naming: `onAnimateBeginEvent`, `onKeypressedEvent`…, then `onEvent`), with a dict as the event.
//! While it runs, the scene it may read and change is recorded in the simulation's [`Reentry`]
//! for this thread, so that the Python side reaches the scene without the simulation's lock.
//! An exception becomes the controller's error, with its traceback; the simulation reports it
//! with the component's path and goes on.

use canape_core::component::{Component, Controller, ControllerError, Event, SceneControl};
use canape_core::data::DataTable;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

/// The scenes lent to Python controllers that are running now, one per thread at most (a
/// controller runs on the thread that steps its simulation).
#[derive(Default)]
pub struct Reentry {
    active: Mutex<Vec<(ThreadId, ControlPtr)>>,
}

/// A scene control lent for the time of one controller call.
#[derive(Clone, Copy)]
struct ControlPtr(*mut (dyn SceneControl + 'static));
// SAFETY: the pointer is used only on the thread that recorded it (looked up by thread id), and
// only while the call that lent it is on that thread's stack.
unsafe impl Send for ControlPtr {}

impl Reentry {
    /// Run `f` with the scene lent to a controller running on this thread, if one is.
    pub fn with<R>(&self, f: impl FnOnce(&mut dyn SceneControl) -> R) -> Option<R> {
        let me = std::thread::current().id();
        let ptr = {
            let active = self.active.lock().unwrap_or_else(|e| e.into_inner());
            active.iter().rev().find(|(t, _)| *t == me).map(|(_, p)| *p)
        }?;
        // SAFETY: recorded by `lend` below on this thread, whose frame still holds the borrow
        // (the entry is removed before `lend` returns).
        Some(f(unsafe { &mut *ptr.0 }))
    }

    /// Record `control` for this thread while `f` runs.
    fn lend<R>(&self, control: &mut dyn SceneControl, f: impl FnOnce() -> R) -> R {
        let me = std::thread::current().id();
        // SAFETY: only the lifetime is erased; the entry is removed before this returns, so the
        // pointer never outlives the borrow (see `with`).
        let ptr: *mut (dyn SceneControl + 'static) = unsafe {
            std::mem::transmute::<*mut dyn SceneControl, *mut (dyn SceneControl + 'static)>(
                control as *mut dyn SceneControl,
            )
        };
        self.active
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((me, ControlPtr(ptr)));
        struct Pop<'a>(&'a Reentry, ThreadId);
        impl Drop for Pop<'_> {
            fn drop(&mut self) {
                let mut active = self.0.active.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(k) = active.iter().rposition(|(t, _)| *t == self.1) {
                    active.remove(k);
                }
            }
        }
        let _pop = Pop(self, me);
        f()
    }
}

/// A Python object handling the scene's events.
pub struct PyController {
    obj: Py<PyAny>,
    data: DataTable,
    reentry: Arc<Reentry>,
}

impl PyController {
    pub fn new(obj: Py<PyAny>, reentry: Arc<Reentry>) -> Self {
        let data = canape_core::data::base_fields(DataTable::new()).open();
        PyController { obj, data, reentry }
    }
}

impl Clone for PyController {
    fn clone(&self) -> Self {
        // a cloned simulation shares the Python object (Python objects are not deep-copied)
        Python::attach(|py| PyController {
            obj: self.obj.clone_ref(py),
            data: self.data.clone(),
            reentry: self.reentry.clone(),
        })
    }
}

impl Component for PyController {
    fn class_name(&self) -> &'static str {
        "PythonController"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
}

/// SOFA's event class name and the dict SofaPython3 gives for it.
fn event_dict<'py>(py: Python<'py>, e: &Event) -> PyResult<(&'static str, Bound<'py, PyDict>)> {
    let d = PyDict::new(py);
    let name = match e {
        Event::SimulationInitDone => "SimulationInitDoneEvent",
        Event::AnimateBegin { dt } => {
            d.set_item("dt", dt)?;
            "AnimateBeginEvent"
        }
        Event::AnimateEnd { dt } => {
            d.set_item("dt", dt)?;
            "AnimateEndEvent"
        }
        Event::CollisionBegin => "CollisionBeginEvent",
        Event::CollisionEnd => "CollisionEndEvent",
        Event::KeyPressed(k) => {
            d.set_item("key", k.to_string())?;
            "KeypressedEvent"
        }
        Event::KeyReleased(k) => {
            d.set_item("key", k.to_string())?;
            "KeyreleasedEvent"
        }
        Event::Script(s) => {
            d.set_item("event_name", s)?;
            d.set_item("sender", py.None())?;
            "ScriptEvent"
        }
        Event::SimulationEnd => "SimulationEndEvent",
    };
    d.set_item("type", name)?;
    d.set_item("isHandled", false)?;
    Ok((name, d))
}

/// An exception with its traceback, as text.
pub fn describe(py: Python<'_>, err: &PyErr) -> String {
    let tb = py.import("traceback").and_then(|m| {
        m.call_method1(
            "format_exception",
            (err.get_type(py), err.value(py), err.traceback(py)),
        )
        .and_then(|l| l.extract::<Vec<String>>())
    });
    match tb {
        Ok(lines) => lines.concat().trim_end().to_string(),
        Err(_) => err.to_string(),
    }
}

impl Controller for PyController {
    fn on_event(
        &mut self,
        event: &Event,
        scene: &mut dyn SceneControl,
    ) -> Result<(), ControllerError> {
        let obj = &self.obj;
        self.reentry.lend(scene, || {
            Python::attach(|py| {
                let (name, dict) =
                    event_dict(py, event).map_err(|e| ControllerError::Script(describe(py, &e)))?;
                let o = obj.bind(py);
                let method = format!("on{name}");
                // Sofa.Core.Controller dispatches itself (on<Event>, then onEvent)
                let call = if o.hasattr("_dispatch").unwrap_or(false) {
                    o.call_method1("_dispatch", (name, dict))
                } else if o.hasattr(method.as_str()).unwrap_or(false) {
                    o.call_method1(method.as_str(), (dict,))
                } else if o.hasattr("onEvent").unwrap_or(false) {
                    o.call_method1("onEvent", (dict,))
                } else {
                    return Ok(());
                };
                call.map(|_| ()).map_err(|e| {
                    ControllerError::Script(format!("Python exception\n{}", describe(py, &e)))
                })
            })
        })
    }
}
