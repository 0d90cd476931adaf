//! The simulation shared by a `Simulation`'s Python handles: its stage, its lock and how a call
//! reaches its scene.

use crate::controller::Reentry;
use canape::{LoadOptions, Simulation};
use canape_core::component::SceneControl;
use canape_core::diag::Diagnostics;
use canape_core::scene::{ComponentId, Scene};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

/// Where a simulation is in its life.
pub(super) enum Stage {
    /// Built from its description, not initialised: components may still be added.
    Built {
        scene: Box<Scene>,
        diags: Diagnostics,
        opts: LoadOptions,
    },
    Running(Box<Simulation>),
    /// Only while `start` moves a built scene into a simulation.
    Moving,
}

/// A simulation shared by its Python handles.
pub(super) struct Cell {
    pub(super) stage: Mutex<Stage>,
    /// The thread stepping or initialising the simulation now (it holds `stage`).
    pub(super) busy: Mutex<Option<std::thread::ThreadId>>,
    pub(super) reentry: Arc<Reentry>,
    pub(super) dir: PathBuf,
}

/// The scene as a call may see it: lent to a running controller, a running simulation, or a
/// built scene.
pub(super) enum Access<'a> {
    Control(&'a mut dyn SceneControl),
    Running(&'a mut Simulation),
    Built(&'a mut Scene),
}

impl Access<'_> {
    pub(super) fn state_mut(
        &mut self,
        id: ComponentId,
    ) -> Option<&mut canape_core::state::MechanicalObject> {
        match self {
            Access::Control(c) => c.state_mut(id),
            Access::Running(s) => s.scene.state_mut(id),
            Access::Built(s) => s.state_mut(id),
        }
    }

    pub(super) fn scene(&self) -> &Scene {
        match self {
            Access::Control(c) => c.scene(),
            Access::Running(s) => &s.scene,
            Access::Built(s) => s,
        }
    }
}

pub(super) fn runtime(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

impl Cell {
    /// Lock the stage without holding the GIL while waiting (the stepping thread may need the
    /// GIL to run a controller before it lets go of the lock).
    pub(super) fn lock<'a>(&'a self, py: Python<'_>) -> PyResult<MutexGuard<'a, Stage>> {
        loop {
            match self.stage.try_lock() {
                Ok(g) => return Ok(g),
                Err(TryLockError::Poisoned(e)) => return Ok(e.into_inner()),
                Err(TryLockError::WouldBlock) => {
                    let me = std::thread::current().id();
                    if *self.busy.lock().unwrap_or_else(|e| e.into_inner()) == Some(me) {
                        return Err(runtime(
                            "the simulation is stepping on this thread: Python force fields and mappings see only the vectors they are given; controllers reach the scene from their event methods",
                        ));
                    }
                    py.detach(|| std::thread::sleep(std::time::Duration::from_micros(50)))
                }
            }
        }
    }

    /// Run `f` holding the stage, recorded as busy on this thread (so that Python code called
    /// back from the step is told, not deadlocked, if it reaches for the simulation).
    pub(super) fn with_busy<R>(&self, f: impl FnOnce(&mut Stage) -> R) -> R {
        let mut g = self.stage.lock().unwrap_or_else(|e| e.into_inner());
        *self.busy.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::thread::current().id());
        struct Clear<'a>(&'a Mutex<Option<std::thread::ThreadId>>);
        impl Drop for Clear<'_> {
            fn drop(&mut self) {
                *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
            }
        }
        let _clear = Clear(&self.busy);
        f(&mut g)
    }

    pub(super) fn access<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(Access<'_>) -> PyResult<R>,
    ) -> PyResult<R> {
        // a controller of this simulation running on this thread: its lent scene
        let mut f = Some(f);
        if let Some(r) = self
            .reentry
            .with(|c| (f.take().expect("called once"))(Access::Control(c)))
        {
            return r;
        }
        let f = f.expect("not called");
        let mut g = self.lock(py)?;
        match &mut *g {
            Stage::Running(s) => f(Access::Running(s)),
            Stage::Built { scene, .. } => f(Access::Built(scene)),
            Stage::Moving => Err(runtime("the simulation is being initialised")),
        }
    }
}
