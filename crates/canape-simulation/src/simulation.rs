//! A running simulation: an initialised scene, its solver groups, and the step: the root's
//! animation loop calls the stages it is made of ([`LoopStages`]: events to the controllers,
//! collision, integration of every group, time, visual mappings), with time per phase.
//! Between steps (or at the end of a step, for what controllers ask) nodes and components can
//! be added and removed; the groups a change touches are rebuilt, the others keep their work.

use crate::group::{build_groups, Group, GroupOps, GroupWork, PhaseClock};
use crate::init::init_scene;
use canape_core::component::{
    default_step, Event, LoopStages, MapInputs, Role, SceneControl, SolveStats,
};
use canape_core::diag::{Diagnostic, Diagnostics};
use canape_core::scene::{AnyComponent, ComponentId, EditError, NodeId, Scene, SceneError, Slot};
use canape_core::state::VecId;
use std::time::{Duration, Instant};

mod collision;
mod constraints;
pub use constraints::Lagrangian;

/// Accumulated time per phase of the step.
#[derive(Clone, Debug, Default)]
pub struct PhaseTimes {
    pub steps: u64,
    pub total: Duration,
    /// Force computation and right-hand side (addForce, addDForce on v).
    pub force: Duration,
    /// Matrix assembly (assembled solvers).
    pub assembly: Duration,
    /// Linear solve, including matrix-free products.
    pub solve: Duration,
    /// Projective constraints outside the linear solve.
    pub projection: Duration,
    /// Mapping propagation after the solve: positions and velocities down to mapped states
    /// and visual models.
    pub mapping: Duration,
    /// Collision detection and contact response (the pipeline, the responses it creates and
    /// the explicit contact forces between objects of different solvers).
    pub collision: Duration,
    /// FreeMotionAnimationLoop's Lagrangian constraint stage (rows, compliance, solve,
    /// corrections).
    pub constraints: Duration,
    /// Integration updates and the rest.
    pub other: Duration,
    /// Linear solver iterations, summed over steps and solver groups (each group's last
    /// linear solve of a step; a direct solve counts one).
    pub linear_iterations: u64,
}

/// An initialised, steppable scene.
pub struct Simulation {
    pub scene: Scene,
    pub groups: Vec<Group>,
    pub diagnostics: Diagnostics,
    /// Force-field slots whose inverted elements were reported (once each).
    inversions_reported: std::collections::BTreeSet<usize>,
    pub times: PhaseTimes,
    pub last_solve: Vec<SolveStats>,
    /// Root dt (SOFA's context dt), used when `step` is given no dt.
    pub dt: f64,
    /// Assembled-matrix pattern per group, reused while the pattern does not change.
    works: Vec<GroupWork>,
    /// Every mapping's slot, input state slots and output slot (resolved once).
    map_ends: Vec<(usize, Vec<usize>, Slot)>,
    /// This simulation's worker threads when more than one is asked for (steps then run inside
    /// the pool; with one thread they run on the caller's thread, with no hand-over cost).
    pool: Option<std::sync::Arc<rayon::ThreadPool>>,
    /// The root's animation loop (its slot), which runs the steps.
    animation_loop: Option<usize>,
    /// The controllers, in graph order (events are delivered in this order).
    controllers: Vec<ComponentId>,
    /// Phase times of the step under way (the loop may integrate several times).
    step_clock: PhaseClock,
    step_mapping: Duration,
    step_collision: Duration,
    step_constraints: Duration,
    /// Changes to the graph asked for by controllers during a step, applied once it ends.
    pending: Vec<Change>,
    /// The collision pipeline's slot (the first one in graph order), run in the collision
    /// stage.
    pipeline: Option<usize>,
    /// Collision messages already reported (each once).
    collision_reported: Vec<String>,
    /// Per force field slot: whether a solver group integrates it (kept between steps).
    scratch_flags: Vec<bool>,
    /// Concatenated positions, velocities and forces of an explicit contact response.
    explicit_buf: [Vec<f64>; 3],
    /// Whether `finish` sent SimulationEnd.
    finished: bool,
    /// The Lagrangian constraints, corrections and solver (FreeMotionAnimationLoop).
    pub lagrangian: Lagrangian,
}

/// A change to the scene graph asked for while a step runs (applied at the end of the step,
/// after AnimateEndEvent, in the order asked).
pub enum Change {
    AddComponent {
        node: NodeId,
        name: String,
        component: AnyComponent,
    },
    RemoveComponent(ComponentId),
    RemoveNode(NodeId),
}

fn make_pool(threads: usize) -> Result<rayon::ThreadPool, EditError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("canape-worker-{i}"))
        .build()
        .map_err(|e| EditError::Threads {
            threads,
            reason: e.to_string(),
        })
}

impl Simulation {
    /// Initialise all components and build solver groups. Diagnostics from loading are kept.
    pub fn new(mut scene: Scene, mut diagnostics: Diagnostics) -> Simulation {
        init_scene(&mut scene, &mut diagnostics);
        let groups = crate::group::build_groups_checked(&scene, &mut diagnostics);
        let dt = scene.nodes.first().map(|n| n.dt).unwrap_or(0.01);
        let mut sim = Simulation {
            scene,
            groups,
            diagnostics,
            inversions_reported: Default::default(),
            times: PhaseTimes::default(),
            last_solve: Vec::new(),
            dt,
            works: Vec::new(),
            map_ends: Vec::new(),
            pool: None,
            animation_loop: None,
            controllers: Vec::new(),
            step_clock: PhaseClock::default(),
            step_mapping: Duration::ZERO,
            step_collision: Duration::ZERO,
            step_constraints: Duration::ZERO,
            pending: Vec::new(),
            pipeline: None,
            collision_reported: Vec::new(),
            scratch_flags: Vec::new(),
            explicit_buf: Default::default(),
            finished: false,
            lagrangian: Lagrangian::default(),
        };
        sim.find_loop_and_controllers(true);
        sim.map_ends = Self::mapping_ends(&sim.scene);
        sim.works = vec![GroupWork::default(); sim.groups.len()];
        // components acting on a mapped state that no solver group simulates: say so rather
        // than ignore them
        for id in sim.scene.component_ids().collect::<Vec<_>>() {
            use canape_core::component::Role;
            let info = sim.scene.info(id);
            if !matches!(
                info.role,
                Role::Mass | Role::ForceField | Role::ProjectiveConstraint
            ) || !sim.scene.node(info.node).activated
            {
                continue;
            }
            let mapped = sim.scene.lineage(info.node).iter().any(|n| {
                sim.scene
                    .node_components(*n, Role::Mapping)
                    .next()
                    .is_some()
            });
            if !mapped {
                continue;
            }
            let st =
                sim.scene
                    .context_state(info.node)
                    .and_then(|s| match sim.scene.info(s).slot {
                        Slot::State(k) => Some(k),
                        _ => None,
                    });
            let in_group = st.is_some_and(|k| sim.groups.iter().any(|g| g.mapped.contains(&k)));
            if !in_group {
                let d = Diagnostic::warning("this component acts on a state that no solver simulates through its mapping: it has no effect")
                    .at(info.loc.clone())
                    .on(sim.scene.component_label(id));
                sim.diagnostics.push(d);
            } else if info.role == Role::ProjectiveConstraint {
                let d = Diagnostic::warning("a projective constraint on a mapped state does not constrain the mapping's inputs (SOFA does not support it either): it has no effect; constrain the input state instead")
                    .at(info.loc.clone())
                    .on(sim.scene.component_label(id));
                sim.diagnostics.push(d);
            }
        }
        for g in &sim.groups {
            if g.linear.is_none()
                && sim.scene.odes[g.ode]
                    .as_ref()
                    .is_some_and(|o| o.needs_linear_solver())
            {
                // reported, not fatal: implicit solvers need one
                let d = Diagnostic::warning("ODE solver has no linear solver in its context; it cannot solve implicit systems")
                    .on(sim.scene.node_path(g.node));
                sim.diagnostics.push(d);
            }
        }
        sim.project_and_check(true);
        sim.propagate_mappings();
        sim.send(&Event::SimulationInitDone);
        sim
    }

    /// The root's animation loop and the controllers in graph order; an animation loop below the
    /// root is reported (SOFA runs the root's).
    fn find_loop_and_controllers(&mut self, report: bool) {
        let scene = &self.scene;
        self.animation_loop = None;
        if !scene.nodes.is_empty() {
            let root = scene.root();
            let mut loops = scene.node_components(root, Role::AnimationLoop);
            self.animation_loop = loops.find_map(|c| match scene.info(c).slot {
                Slot::AnimationLoop(i) => Some(i),
                _ => None,
            });
        }
        let order = crate::init::document_order(scene);
        for &c in &order {
            let info = scene.info(c);
            if let Slot::AnimationLoop(i) = info.slot {
                if report && Some(i) != self.animation_loop {
                    let d = Diagnostic::warning(
                        "only the root node's first animation loop runs the steps: this one is not used",
                    )
                    .at(info.loc.clone())
                    .on(scene.component_label(c));
                    self.diagnostics.push(d);
                }
            }
        }
        self.pipeline = order.iter().find_map(|c| match scene.info(*c).slot {
            Slot::Passive(i) if scene.passives[i].as_ref()?.is_collision_pipeline() => Some(i),
            _ => None,
        });
        self.controllers = order
            .iter()
            .copied()
            .filter(|c| matches!(scene.info(*c).slot, Slot::Controller(_)))
            .collect();
        self.find_lagrangian(&order);
    }

    /// Deliver an event to every controller in graph order. A controller's error is reported
    /// with its path; the others still get the event.
    /// End the simulation: the controllers receive [`Event::SimulationEnd`] (exporters write
    /// their `exportAtEnd` files). Only the first call sends it.
    pub fn finish(&mut self) {
        if !self.finished {
            self.finished = true;
            self.send(&Event::SimulationEnd);
        }
    }

    pub fn send(&mut self, event: &Event) {
        for k in 0..self.controllers.len() {
            let id = self.controllers[k];
            let Slot::Controller(i) = self.scene.info(id).slot else {
                continue;
            };
            let Some(mut c) = self.scene.controllers[i].take() else {
                continue;
            };
            // a panicking controller is reported like one returning an error: the simulation
            // stays usable (its state vectors are whole; the controller is kept)
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                c.on_event(event, &mut Control { sim: self })
            }))
            .unwrap_or_else(|p| {
                let msg = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                Err(format!("panicked: {msg}"))
            });
            self.scene.controllers[i] = Some(c);
            if let Err(e) = result {
                let d = Diagnostic::error(format!("while handling {event:?}: {e}"))
                    .at(self.scene.info(id).loc.clone())
                    .on(self.scene.component_label(id));
                self.diagnostics.push(d);
            }
        }
    }

    /// Every solver group integrates over `dt`, then positions and velocities are projected and
    /// propagated down the mappings.
    fn integrate(&mut self, dt: f64) {
        self.solve_groups(dt);
        let tp = Instant::now();
        self.project_and_check(false);
        self.step_clock.projection += tp.elapsed();
        let tm = Instant::now();
        self.propagate_mappings();
        self.step_mapping += tm.elapsed();
    }

    /// Each solver group's ODE solver over `dt` (document order), time-dependent components
    /// given the step's start time first; external forces are cleared afterwards (they last one
    /// integration: SOFA clears them at endIntegration).
    fn solve_groups(&mut self, dt: f64) {
        let scene = &mut self.scene;
        let t = scene.time;
        for c in scene.projective.iter_mut().flatten() {
            c.set_time(t);
        }
        for f in scene.force_fields.iter_mut().flatten() {
            f.set_time(t);
        }
        for (g, work) in self.groups.iter().zip(self.works.iter_mut()) {
            let Some(mut ode) = scene.odes[g.ode].take() else {
                continue;
            };
            let linear = g.linear.and_then(|l| scene.linears[l].as_mut());
            let mut ops = GroupOps::new(
                g,
                &mut scene.states,
                &scene.masses,
                &mut scene.force_fields,
                &scene.projective,
                &mut scene.mappings,
                linear,
                &mut self.step_clock,
                work,
            );
            ode.solve(&mut ops, dt);
            self.last_solve.push(ops.last_stats);
            scene.odes[g.ode] = Some(ode);
            for &k in &g.extra_odes {
                let Some(mut extra) = scene.odes[k].take() else {
                    continue;
                };
                let linear = g.linear.and_then(|l| scene.linears[l].as_mut());
                let mut ops = GroupOps::new(
                    g,
                    &mut scene.states,
                    &scene.masses,
                    &mut scene.force_fields,
                    &scene.projective,
                    &mut scene.mappings,
                    linear,
                    &mut self.step_clock,
                    work,
                );
                extra.solve(&mut ops, dt);
                scene.odes[k] = Some(extra);
            }
        }
        for s in scene.states.iter_mut().flatten() {
            if !s.vec(VecId::EXTERNAL_FORCE).is_empty() {
                s.vec_mut(VecId::EXTERNAL_FORCE).fill(0.0);
            }
        }
    }

    /// Propagate positions and velocities down every mapping, in document order
    /// (SOFA's MechanicalPropagateOnlyPositionAndVelocity + UpdateMapping for visual models).
    /// Reads the input state in place and writes into the output's own buffers (no copy, no
    /// allocation once the outputs have their size).
    pub fn propagate_mappings(&mut self) {
        let scene = &mut self.scene;
        for (i, idx, out) in &self.map_ends {
            let Some(m) = scene.mappings[*i].as_mut() else {
                continue;
            };
            match *out {
                Slot::State(j) => {
                    let Some(os) = scene.states[j].as_mut() else {
                        continue;
                    };
                    let mut ox = os.take(VecId::POSITION);
                    m.apply(
                        &MapInputs::new(&scene.states, idx, VecId::POSITION),
                        &mut ox,
                    );
                    let os = scene.states[j].as_mut().unwrap();
                    os.put(VecId::POSITION, ox);
                    let mut ov = os.take(VecId::VELOCITY);
                    m.apply_j(
                        &MapInputs::new(&scene.states, idx, VecId::VELOCITY),
                        &mut ov,
                    );
                    scene.states[j].as_mut().unwrap().put(VecId::VELOCITY, ov);
                }
                Slot::Passive(j) => {
                    if let Some(mesh) = scene.passives[j].as_mut().and_then(|p| p.visual_mesh_mut())
                    {
                        m.apply(
                            &MapInputs::new(&scene.states, idx, VecId::POSITION),
                            mesh.points.as_flattened_mut(),
                        );
                    }
                }
                _ => {}
            }
        }
    }

    /// The ends of every mapping (input state slots, output slot), in document order.
    fn mapping_ends(scene: &Scene) -> Vec<(usize, Vec<usize>, Slot)> {
        let mut ends = Vec::new();
        for (i, m) in scene.mappings.iter().enumerate() {
            let Some(m) = m.as_ref() else { continue };
            let Some(out) = m.output() else { continue };
            let idx: Option<Vec<usize>> = m
                .inputs()
                .iter()
                .map(|c| match scene.info(*c).slot {
                    Slot::State(si) => Some(si),
                    _ => None,
                })
                .collect();
            let Some(idx) = idx.filter(|v| !v.is_empty()) else {
                continue;
            };
            let slot = scene.info(out).slot;
            if matches!(slot, Slot::State(j) if idx.contains(&j)) {
                continue;
            }
            ends.push((i, idx, slot));
        }
        ends
    }

    pub fn time(&self) -> f64 {
        self.scene.time
    }

    /// Project positions/velocities (SOFA does it at init and after each step) and check for NaN.
    fn project_and_check(&mut self, _init: bool) {
        for g in &self.groups {
            for &(p, sp) in &g.projective {
                if !g.is_independent(sp) {
                    continue;
                }
                let si = g.states[sp];
                if let (Some(c), Some(st)) = (
                    self.scene.projective[p].as_ref(),
                    self.scene.states[si].as_mut(),
                ) {
                    c.project_position(st.vec_mut(VecId::POSITION));
                    c.project_velocity(st.vec_mut(VecId::VELOCITY));
                }
            }
        }
    }

    /// The first step at which a force field found inverted elements (J ≤ 0), reported once
    /// per component with the step's number.
    fn report_inversions(&mut self) {
        let step = self.times.steps + 1;
        for (i, ff) in self.scene.force_fields.iter().enumerate() {
            let Some(n) = ff
                .as_ref()
                .map(|f| f.inverted_elements())
                .filter(|&n| n > 0)
            else {
                continue;
            };
            if self.inversions_reported.contains(&i) {
                continue;
            }
            self.inversions_reported.insert(i);
            let id = self
                .scene
                .component_ids()
                .find(|c| self.scene.info(*c).slot == canape_core::scene::Slot::ForceField(i));
            let mut d = Diagnostic::warning(format!(
                "step {step}: {n} element(s) inverted (volume ratio J ≤ 0); the material law may give no or non-finite forces there"
            ));
            if let Some(id) = id {
                d = d
                    .at(self.scene.info(id).loc.clone())
                    .on(self.scene.component_label(id));
            }
            self.diagnostics.push(d);
        }
    }

    /// Whether any simulated state holds a NaN or infinite value.
    pub fn find_non_finite(&self) -> Option<String> {
        for (i, s) in self.scene.states.iter().enumerate() {
            if let Some(s) = s {
                if s.vec(VecId::POSITION).iter().any(|v| !v.is_finite()) {
                    let id = self
                        .scene
                        .component_ids()
                        .find(|c| self.scene.info(*c).slot == canape_core::scene::Slot::State(i));
                    let label = id
                        .map(|id| self.scene.component_label(id))
                        .unwrap_or_default();
                    return Some(label);
                }
            }
        }
        None
    }

    /// One DefaultAnimationLoop step with the root dt.
    pub fn step(&mut self) {
        let dt = self.dt;
        self.step_dt(dt);
    }

    /// Number of worker threads the steps use.
    pub fn threads(&self) -> usize {
        self.pool.as_ref().map_or(1, |p| p.current_num_threads())
    }

    /// Use `threads` worker threads for the element loops of later steps. Results are
    /// bit-identical run to run for a given thread count (reductions in a fixed order); they may
    /// differ in the last bits between thread counts.
    pub fn set_threads(&mut self, threads: usize) -> Result<(), EditError> {
        self.pool = if threads > 1 {
            Some(std::sync::Arc::new(make_pool(threads)?))
        } else {
            None
        };
        Ok(())
    }

    /// One step with an explicit dt.
    pub fn step_dt(&mut self, dt: f64) {
        match self.pool.clone() {
            Some(pool) => pool.install(|| self.step_in_pool(dt)),
            None => self.step_in_pool(dt),
        }
    }

    fn step_in_pool(&mut self, dt: f64) {
        let t0 = Instant::now();
        self.step_clock = PhaseClock::default();
        self.step_mapping = Duration::ZERO;
        self.step_collision = Duration::ZERO;
        self.step_constraints = Duration::ZERO;
        self.last_solve.clear();
        // the root's animation loop runs the stages (its slot is empty meanwhile)
        let taken = self
            .animation_loop
            .and_then(|i| self.scene.animation_loops[i].take().map(|l| (i, l)));
        match taken {
            Some((i, mut l)) => {
                l.step(&mut Stages { sim: self }, dt);
                self.scene.animation_loops[i] = Some(l);
            }
            None => default_step(&mut Stages { sim: self }, dt),
        }
        self.apply_pending();
        self.report_inversions();
        let clock = std::mem::take(&mut self.step_clock);
        let mapping = self.step_mapping;
        let collision = self.step_collision;
        let constraints = self.step_constraints;
        let total = t0.elapsed();
        let t = &mut self.times;
        t.steps += 1;
        t.total += total;
        t.force += clock.force;
        t.assembly += clock.assembly;
        t.solve += clock.solve.saturating_sub(clock.assembly);
        t.projection += clock.projection;
        t.mapping += mapping;
        t.collision += collision;
        t.constraints += constraints;
        t.other += total.saturating_sub(
            clock.force + clock.solve + clock.projection + mapping + collision + constraints,
        );
        t.linear_iterations += self
            .last_solve
            .iter()
            .map(|s| s.iterations as u64)
            .sum::<u64>();
    }
}

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

/// Roles whose Data can be edited while the simulation runs (they are re-initialised from their
/// Data; an engine's new outputs are pulled by what links to them). States, topologies and
/// loaders would need what they built at init rebuilt.
pub fn is_editable_role(role: canape_core::component::Role) -> bool {
    use canape_core::component::Role;
    matches!(
        role,
        Role::Mass
            | Role::ForceField
            | Role::ProjectiveConstraint
            | Role::OdeSolver
            | Role::LinearSolver
            | Role::Controller
            | Role::Engine
    )
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

    /// Set one Data of a component from text and re-initialise the component (SOFA's reinit);
    /// the linear solvers are told the matrix may have changed (numeric factorizations are
    /// redone, symbolic ones and the groups' assembly patterns kept while the pattern is the
    /// same). On a bad value or a failed re-initialisation the previous value is put back and
    /// the error returned.
    pub fn set_data(
        &mut self,
        id: canape_core::scene::ComponentId,
        name: &str,
        text: &str,
    ) -> Result<Vec<Diagnostic>, EditError> {
        self.edit_data(id, &[(name, text)], true)
    }

    /// Set several Data of a component at once, then re-initialise it once (Data that only make
    /// sense together, as a spring list's indices and stiffnesses); as [`Simulation::set_data`]
    /// otherwise.
    pub fn set_data_many(
        &mut self,
        id: canape_core::scene::ComponentId,
        values: &[(&str, &str)],
    ) -> Result<Vec<Diagnostic>, EditError> {
        self.edit_data(id, values, true)
    }

    /// Set several Data of a component and re-initialise it only (no linear-solver reinit): for
    /// interaction components whose Data change at every mouse move.
    pub fn set_data_light(
        &mut self,
        id: canape_core::scene::ComponentId,
        values: &[(&str, &str)],
    ) -> Result<Vec<Diagnostic>, EditError> {
        self.edit_data(id, values, false)
    }

    fn edit_data(
        &mut self,
        id: canape_core::scene::ComponentId,
        values: &[(&str, &str)],
        solvers: bool,
    ) -> Result<Vec<Diagnostic>, EditError> {
        self.scene.check_component(id)?;
        let info = self.scene.info(id);
        if !is_editable_role(info.role) {
            return Err(EditError::NotEditable {
                class: info.class,
                role: info.role,
            });
        }
        let label = self.scene.component_label(id);
        let c = self
            .scene
            .component_mut(id)
            .ok_or(EditError::Busy { component: label })?;
        let mut old = Vec::new();
        for (name, text) in values {
            let Some(field) = c.data().field(name) else {
                let names = c.data().all_names();
                let near = canape_core::diag::closest(name, names.iter().copied(), 3);
                let class = c.class_name();
                // put back what was already set
                for (n, v) in old {
                    let _ = c.data_mut().set_value(n, v);
                }
                return Err(EditError::NoData {
                    class,
                    name: name.to_string(),
                    suggestions: near,
                });
            };
            if field.output {
                return Err(EditError::Output(name.to_string()));
            }
            let prev = field.value.clone();
            if let Err(e) = c.data_mut().set_str(name, text) {
                for (n, v) in old {
                    let _ = c.data_mut().set_value(n, v);
                }
                return Err(EditError::BadValue {
                    name: name.to_string(),
                    reason: e,
                });
            }
            old.push((*name, prev));
        }
        let mut diags = Diagnostics::default();
        if let Err(reason) = crate::init::reinit_component(&mut self.scene, id, &mut diags) {
            return Err(EditError::Refused {
                component: self.scene.component_label(id),
                reasons: vec![reason],
            });
        }
        if diags.has_errors() {
            if let Some(c) = self.scene.component_mut(id) {
                for (n, v) in old {
                    let _ = c.data_mut().set_value(n, v);
                }
            }
            let mut back = Diagnostics::default();
            let _ = crate::init::reinit_component(&mut self.scene, id, &mut back);
            return Err(EditError::Refused {
                component: self.scene.component_label(id),
                reasons: diags.iter().map(|d| d.message.clone()).collect(),
            });
        }
        // an engine's new outputs reach what links to them (SOFA's dirty outputs)
        let mut projective = false;
        if self.scene.info(id).role == canape_core::component::Role::Engine {
            projective = crate::init::propagate_engine_outputs(&mut self.scene, id, &mut diags, 0);
        }
        if solvers {
            for l in self.scene.linears.iter_mut().flatten() {
                l.matrix_changed();
            }
        }
        if projective
            || self.scene.info(id).role == canape_core::component::Role::ProjectiveConstraint
        {
            for w in &mut self.works {
                w.constraints_changed();
            }
        }
        Ok(diags.iter().cloned().collect())
    }

    /// Recompute the solver groups (after the scene's components or context changed) and start
    /// their work buffers afresh.
    fn rebuild_groups(&mut self) {
        self.groups = build_groups(&self.scene);
        self.map_ends = Self::mapping_ends(&self.scene);
        self.works = vec![GroupWork::default(); self.groups.len()];
    }

    /// After components were added or removed: initialise the new ones, recompute the solver
    /// groups, the mapping order, the animation loop and the controllers. A group equal to one
    /// before and using none of the `changed` slots keeps its work (assembly patterns, buffers);
    /// the others start afresh. New mapped states get their positions from their inputs.
    fn structure_changed(&mut self, changed: &[Slot]) {
        let mut diags = Diagnostics::default();
        init_scene(&mut self.scene, &mut diags);
        self.diagnostics.extend(diags);
        let groups = build_groups(&self.scene);
        let old_groups = std::mem::take(&mut self.groups);
        let mut old_works: Vec<Option<GroupWork>> = std::mem::take(&mut self.works)
            .into_iter()
            .map(Some)
            .collect();
        // a group keeps its work when the group of the same solver node is unchanged
        let by_node: std::collections::BTreeMap<NodeId, usize> = old_groups
            .iter()
            .enumerate()
            .map(|(k, g)| (g.node, k))
            .collect();
        let mut works = Vec::with_capacity(groups.len());
        for g in &groups {
            let keep = by_node
                .get(&g.node)
                .copied()
                .filter(|&k| old_groups[k] == *g && !changed.iter().any(|s| g.uses(*s)));
            works.push(keep.and_then(|k| old_works[k].take()).unwrap_or_default());
        }
        self.groups = groups;
        self.works = works;
        self.map_ends = Self::mapping_ends(&self.scene);
        self.find_loop_and_controllers(false);
        self.propagate_mappings();
    }

    /// Add a node under `parent` to a running simulation (its components come with
    /// [`Simulation::add_component`]).
    pub fn add_node(&mut self, parent: NodeId, name: &str) -> Result<NodeId, SceneError> {
        self.scene.check_node(parent)?;
        Ok(self.scene.add_node(name, Some(parent)))
    }

    /// Remove a component between steps: refused for a stale handle or while another component
    /// uses it (see [`Scene::user_of`]). The groups that used it are rebuilt; the others keep
    /// their work.
    pub fn remove_component(&mut self, id: ComponentId) -> Result<AnyComponent, SceneError> {
        let slot = {
            self.scene.check_component(id)?;
            self.scene.info(id).slot
        };
        let c = self.scene.remove_component(id)?;
        self.structure_changed(&[slot]);
        Ok(c)
    }

    /// Remove a node and everything below it between steps (refused for the root, a stale
    /// handle, or when a component outside the subtree uses one inside).
    pub fn remove_node(&mut self, id: NodeId) -> Result<Vec<AnyComponent>, SceneError> {
        self.scene.check_node(id)?;
        let slots: Vec<Slot> = self
            .scene
            .subtree(id)
            .iter()
            .flat_map(|n| self.scene.node(*n).components.clone())
            .map(|c| self.scene.info(c).slot)
            .collect();
        let out = self.scene.remove_node(id)?;
        self.structure_changed(&slots);
        Ok(out)
    }

    /// Initialise what was added to the scene since the last change (for instance a subtree a
    /// builder added under a node) and rebuild what depends on the graph.
    pub fn components_added(&mut self, ids: &[ComponentId]) {
        let slots: Vec<Slot> = ids
            .iter()
            .filter(|c| self.scene.check_component(**c).is_ok())
            .map(|c| self.scene.info(*c).slot)
            .collect();
        self.structure_changed(&slots);
    }

    /// Changes asked for by controllers during the step, in the order asked; a refused one is
    /// reported and the others still apply.
    fn apply_pending(&mut self) {
        for change in std::mem::take(&mut self.pending) {
            let r = match change {
                Change::AddComponent {
                    node,
                    name,
                    component,
                } => self
                    .add_component(node, &name, component)
                    .map(|(_, d)| d.into_iter().for_each(|d| self.diagnostics.push(d))),
                Change::RemoveComponent(id) => self.remove_component(id).map(|_| ()),
                Change::RemoveNode(id) => self.remove_node(id).map(|_| ()),
            };
            if let Err(e) = r {
                self.diagnostics.push(Diagnostic::error(format!(
                    "change asked during the step: {e}"
                )));
            }
        }
    }

    /// Change the root gravity (every node's, as SOFA takes the root's) and rebuild the groups,
    /// which hold the gravity their masses use.
    pub fn set_gravity(&mut self, g: canape_types::Vec3) -> Result<(), EditError> {
        if g.iter().any(|v| !v.is_finite()) {
            return Err(EditError::Invalid {
                what: "gravity",
                expected: "three finite numbers",
            });
        }
        for n in &mut self.scene.nodes {
            n.gravity = g;
        }
        self.rebuild_groups();
        Ok(())
    }

    /// Change the time step used by `step`.
    pub fn set_dt(&mut self, dt: f64) -> Result<(), EditError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(EditError::Invalid {
                what: "dt",
                expected: "a positive, finite number",
            });
        }
        self.dt = dt;
        if let Some(root) = self.scene.nodes.first_mut() {
            root.dt = dt;
        }
        Ok(())
    }

    /// Add a component to an initialised simulation between steps (e.g. an interaction force
    /// field), initialise it and update the solver groups it joins. Its init diagnostics are
    /// returned (and not kept in `diagnostics`).
    pub fn add_component(
        &mut self,
        node: NodeId,
        name: &str,
        c: AnyComponent,
    ) -> Result<(ComponentId, Vec<Diagnostic>), SceneError> {
        self.scene.check_node(node)?;
        let id = self.scene.add_component(node, name, c, None);
        let mut diags = Diagnostics::default();
        crate::init::init_component(&mut self.scene, id, &mut diags, &mut Vec::new());
        let slot = self.scene.info(id).slot;
        self.structure_changed(&[slot]);
        Ok((id, diags.iter().cloned().collect()))
    }

    /// Whether a state is integrated by some solver group (not mapped, not orphaned).
    pub fn is_simulated_state(&self, state_slot: usize) -> bool {
        self.groups.iter().any(|g| g.states.contains(&state_slot))
    }
}

/// The stages a step is made of, as the animation loop sees them.
struct Stages<'a> {
    sim: &'a mut Simulation,
}

impl LoopStages for Stages<'_> {
    fn time(&self) -> f64 {
        self.sim.scene.time
    }
    fn set_time(&mut self, t: f64) {
        self.sim.scene.time = t;
    }
    fn send(&mut self, event: &Event) {
        self.sim.send(event);
    }
    fn collision(&mut self) {
        self.sim.send(&Event::CollisionBegin);
        let t = Instant::now();
        self.sim.collide();
        self.sim.step_collision += t.elapsed();
        self.sim.send(&Event::CollisionEnd);
    }
    fn integrate(&mut self, dt: f64) {
        self.sim.integrate(dt);
    }
    fn update_mappings(&mut self) {
        // positions already went down every mapping (visual ones too) after the integration
    }
    fn free_motion(&mut self, dt: f64) {
        self.sim.free_motion(dt);
    }
    fn solve_constraints(
        &mut self,
        dt: f64,
        fallback: &mut dyn canape_core::lagrangian::ConstraintSolver,
        order: canape_core::lagrangian::ConstraintOrder,
    ) {
        let t = Instant::now();
        self.sim.solve_constraints(dt, fallback, order);
        self.sim.step_constraints += t.elapsed();
    }
}

/// What a controller may change while it handles an event.
struct Control<'a> {
    sim: &'a mut Simulation,
}

impl SceneControl for Control<'_> {
    fn scene(&self) -> &Scene {
        &self.sim.scene
    }
    fn set_data(&mut self, id: ComponentId, name: &str, text: &str) -> Result<(), EditError> {
        self.sim.set_data(id, name, text).map(|_| ())
    }
    fn state_mut(&mut self, id: ComponentId) -> Option<&mut canape_core::state::MechanicalObject> {
        self.sim.scene.state_mut(id)
    }
    fn add_component(
        &mut self,
        node: NodeId,
        name: &str,
        c: AnyComponent,
    ) -> Result<(), SceneError> {
        self.sim.scene.check_node(node)?;
        self.sim.pending.push(Change::AddComponent {
            node,
            name: name.to_string(),
            component: c,
        });
        Ok(())
    }
    fn remove_component(&mut self, id: ComponentId) -> Result<(), SceneError> {
        self.sim.scene.check_component(id)?;
        self.sim.pending.push(Change::RemoveComponent(id));
        Ok(())
    }
    fn remove_node(&mut self, id: NodeId) -> Result<(), SceneError> {
        self.sim.scene.check_node(id)?;
        self.sim.pending.push(Change::RemoveNode(id));
        Ok(())
    }
}
