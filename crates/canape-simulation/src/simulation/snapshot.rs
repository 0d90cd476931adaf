//! Cloning a simulation and taking snapshots: a clone is an independent simulation in the same
//! state (its own worker threads); a snapshot keeps every state's vectors and the time, to
//! restore later (runSofa's Reset).

use super::{make_pool, Simulation};
use canape_core::scene::{ComponentId, Slot};
use canape_core::state::VecId;

/// A clone is an independent simulation in the same state: every component is cloned (linear
/// solvers with their factorizations, solver groups with their assembly patterns), and it has
/// its own worker threads. Stepping the clone and the original the same way gives the same
/// bytes; they may step on two threads at once.
impl Clone for Simulation {
    fn clone(&self) -> Self {
        let threads = self.threads();
        let pool = (threads > 1)
            .then(|| make_pool(threads).ok().map(std::sync::Arc::new))
            .flatten();
        Simulation {
            scene: self.scene.clone(),
            groups: self.groups.clone(),
            diagnostics: self.diagnostics.clone(),
            inversions_reported: self.inversions_reported.clone(),
            failures_reported: self.failures_reported.clone(),
            times: self.times.clone(),
            last_solve: self.last_solve.clone(),
            dt: self.dt,
            works: self.works.clone(),
            map_ends: self.map_ends.clone(),
            pool,
            animation_loop: self.animation_loop,
            controllers: self.controllers.clone(),
            step_clock: self.step_clock.clone(),
            step_mapping: self.step_mapping,
            step_collision: self.step_collision,
            step_constraints: self.step_constraints,
            // changes are applied at the end of the step that asks for them: none between steps
            pending: Vec::new(),
            pipeline: self.pipeline,
            collision_reported: self.collision_reported.clone(),
            scratch_flags: Vec::new(),
            explicit_buf: Default::default(),
            finished: self.finished,
            lagrangian: self.lagrangian.clone(),
            dirty_engines: self.dirty_engines.clone(),
            engine_updates: self.engine_updates,
            edit_reinits: self.edit_reinits,
        }
    }
}

/// Positions, velocities and time of a simulation, to reset to (runSofa's Reset).
#[derive(Clone, Debug)]
pub struct Snapshot {
    time: f64,
    /// Every vector of every state (positions, velocities, forces, dx, the solvers' vectors).
    states: Vec<Option<Vec<Vec<f64>>>>,
    /// The component owning each state slot then: a restore after the graph changed fills only
    /// the states that are still the same components.
    owners: Vec<Option<ComponentId>>,
    visual: Vec<Option<Vec<[f64; 3]>>>,
}

impl Simulation {
    /// Copy what `restore` needs to bring the simulation back to this point.
    pub fn snapshot(&mut self) -> Snapshot {
        // a snapshot is a restart point: the linear solvers forget what they carry between
        // solves (preconditioner ages), as they do at a restore, so that restoring continues
        // exactly as the run went on from here
        self.restart_solvers();
        Snapshot {
            owners: self.state_owners(),
            time: self.scene.time,
            states: self
                .scene
                .states
                .iter()
                .map(|s| {
                    s.as_ref().map(|s| {
                        (0..s.nb_vecs() as u32)
                            .map(|k| s.vec(VecId(k)).to_vec())
                            .collect()
                    })
                })
                .collect(),
            visual: self
                .scene
                .passives
                .iter()
                .map(|p| {
                    p.as_ref()
                        .and_then(|p| p.visual_mesh())
                        .map(|m| m.points.clone())
                })
                .collect(),
        }
    }

    /// Go back to a snapshot: positions, velocities and time; every other state vector (forces,
    /// solver work vectors, warm-start solutions) is zeroed, as after init.
    pub fn restore(&mut self, snap: &Snapshot) {
        self.scene.time = snap.time;
        let owners = self.state_owners();
        for (k, (s, saved)) in self.scene.states.iter_mut().zip(&snap.states).enumerate() {
            let (Some(s), Some(vecs)) = (s.as_mut(), saved) else {
                continue;
            };
            if owners.get(k) != snap.owners.get(k) {
                // another component in this slot since: it keeps its own state
                continue;
            }
            // every vector as it was (the solvers' warm starts included); vectors created since
            // are zeroed
            for k in 0..s.nb_vecs() as u32 {
                let dst = s.vec_mut(VecId(k));
                match vecs.get(k as usize) {
                    Some(v) if v.len() == dst.len() => dst.copy_from_slice(v),
                    _ => dst.iter_mut().for_each(|e| *e = 0.0),
                }
            }
        }
        for (p, saved) in self.scene.passives.iter_mut().zip(&snap.visual) {
            if let (Some(m), Some(pts)) = (p.as_mut().and_then(|p| p.visual_mesh_mut()), saved) {
                m.points.clone_from(pts);
            }
        }
        self.last_solve.clear();
        self.restart_solvers();
    }

    /// The component in each state slot.
    fn state_owners(&self) -> Vec<Option<ComponentId>> {
        let mut owners = vec![None; self.scene.states.len()];
        for c in self.scene.component_ids() {
            if let Slot::State(k) = self.scene.info(c).slot {
                owners[k] = Some(c);
            }
        }
        owners
    }

    fn restart_solvers(&mut self) {
        for l in self.scene.linears.iter_mut().flatten() {
            l.restart();
        }
    }
}
