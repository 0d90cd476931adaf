//! A running simulation: an initialised scene, its solver groups, and the step: the root's
//! animation loop calls the stages it is made of ([`LoopStages`]: events to the controllers,
//! collision, integration of every group, time, visual mappings), with time per phase.
//! Between steps (or at the end of a step, for what controllers ask) nodes and components can
//! be added and removed; the groups a change touches are rebuilt, the others keep their work.

use crate::group::{Group, GroupOps, GroupWork, PhaseClock};
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
mod edit;
mod graph;
mod snapshot;
pub use constraints::Lagrangian;
pub use snapshot::Snapshot;

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
    /// Linear solvers whose failure was reported (by slot; again after they recover).
    failures_reported: std::collections::BTreeSet<usize>,
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
    /// Engines whose inputs were edited and which have not recomputed yet (in edit order).
    dirty_engines: Vec<ComponentId>,
    /// Engine recomputations caused by edits.
    engine_updates: u64,
    /// Components re-initialised by edits (the others updated in place).
    edit_reinits: u64,
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
            failures_reported: Default::default(),
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
            dirty_engines: Vec::new(),
            engine_updates: 0,
            edit_reinits: 0,
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
                Err(canape_core::component::ControllerError::Panicked(msg))
            });
            self.scene.controllers[i] = Some(c);
            if let Err(e) = result {
                let d = Diagnostic::error(format!("while handling {event:?}: {e}"))
                    .at(self.scene.info(id).loc.clone())
                    .on(self.scene.component_label(id));
                self.diagnostics.push(d);
            }
        }
        // engines whose inputs the controllers edited recompute now (an update point)
        self.update_engines();
    }

    /// Every solver group integrates over `dt`, then positions and velocities are projected and
    /// propagated down the mappings.
    fn integrate(&mut self, dt: f64) {
        self.integrate_groups(dt, None);
    }

    /// `integrate`, for the groups whose ODE solver carries `tag` only (all when None).
    fn integrate_groups(&mut self, dt: f64, tag: Option<&str>) {
        self.solve_groups(dt, tag);
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
    fn solve_groups(&mut self, dt: f64, tag: Option<&str>) {
        let scene = &mut self.scene;
        let t = scene.time;
        for c in scene.projective.iter_mut().flatten() {
            c.set_time(t);
        }
        for f in scene.force_fields.iter_mut().flatten() {
            f.set_time(t);
        }
        for (g, work) in self.groups.iter().zip(self.works.iter_mut()) {
            if tag.is_some_and(|t| !g.tags.iter().any(|x| x == t)) {
                continue;
            }
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

    /// A linear solver that could not solve this step (a failed factorization: its
    /// `LinearSolver::failure`), reported with the step's number when it starts failing.
    fn report_solver_failures(&mut self) {
        let step = self.times.steps + 1;
        for (i, ls) in self.scene.linears.iter().enumerate() {
            let Some(e) = ls.as_ref().and_then(|l| l.failure()) else {
                self.failures_reported.remove(&i);
                continue;
            };
            if !self.failures_reported.insert(i) {
                continue;
            }
            let mut d = Diagnostic::error(format!(
                "step {step}: the linear solve failed ({e}): this step's motion is not a solution"
            ));
            if let Some(id) = self
                .scene
                .component_ids()
                .find(|c| self.scene.info(*c).slot == canape_core::scene::Slot::Linear(i))
            {
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
        // engines edited since the last step recompute before it (an update point)
        self.update_engines();
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
        self.report_solver_failures();
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
            | Role::Collision
    )
}

impl Simulation {
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
    fn integrate_tagged(&mut self, dt: f64, tag: &str) {
        self.sim.integrate_groups(dt, Some(tag));
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
