//! A running simulation: an initialised scene, its solver groups, and the DefaultAnimationLoop
//! step (solve each group, project, advance time), with time per phase.

use crate::group::{build_groups, Group, GroupOps, PhaseClock};
use crate::init::init_scene;
use canape_core::component::SolveStats;
use canape_core::diag::{Diagnostic, Diagnostics};
use canape_core::matrix::PatternCache;
use canape_core::scene::{Scene, Slot};
use canape_core::state::VecId;
use std::time::{Duration, Instant};

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
    /// Integration updates and the rest.
    pub other: Duration,
}

/// An initialised, steppable scene.
pub struct Simulation {
    pub scene: Scene,
    pub groups: Vec<Group>,
    pub diagnostics: Diagnostics,
    pub times: PhaseTimes,
    pub last_solve: Vec<SolveStats>,
    /// Root dt (SOFA's context dt), used when `step` is given no dt.
    pub dt: f64,
    /// Assembled-matrix pattern per group, reused while the pattern does not change.
    caches: Vec<PatternCache>,
}

impl Simulation {
    /// Initialise all components and build solver groups. Diagnostics from loading are kept.
    pub fn new(mut scene: Scene, mut diagnostics: Diagnostics) -> Simulation {
        init_scene(&mut scene, &mut diagnostics);
        let groups = build_groups(&scene);
        let dt = scene.nodes.first().map(|n| n.dt).unwrap_or(0.01);
        let mut sim = Simulation {
            scene,
            groups,
            diagnostics,
            times: PhaseTimes::default(),
            last_solve: Vec::new(),
            dt,
            caches: Vec::new(),
        };
        sim.caches = vec![PatternCache::default(); sim.groups.len()];
        // components under a mapping are not simulated yet: say so rather than ignore them
        for (i, info) in sim.scene.components.iter().enumerate() {
            use canape_core::component::Role;
            if !matches!(
                info.role,
                Role::Mass | Role::ForceField | Role::ProjectiveConstraint
            ) {
                continue;
            }
            let mapped = sim.scene.lineage(info.node).iter().any(|n| {
                sim.scene
                    .node_components(*n, Role::Mapping)
                    .next()
                    .is_some()
            });
            if mapped && sim.scene.node(info.node).activated {
                let d = Diagnostic::warning("components under a mapping are not simulated yet (forces through Jᵀ come with mapped mechanics): this one has no effect")
                    .at(info.loc.clone())
                    .on(sim.scene.component_label(canape_core::scene::ComponentId(i as u32)));
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
        sim
    }

    /// Propagate positions and velocities down every mapping, in document order
    /// (SOFA's MechanicalPropagateOnlyPositionAndVelocity + UpdateMapping for visual models).
    pub fn propagate_mappings(&mut self) {
        let scene = &mut self.scene;
        for i in 0..scene.mappings.len() {
            let Some(m) = scene.mappings[i].as_ref() else {
                continue;
            };
            let Some((inp, out)) = m.endpoints() else {
                continue;
            };
            let Some(ist) = scene.state(inp) else {
                continue;
            };
            let x = ist.vec(VecId::POSITION).to_vec();
            let v = ist.vec(VecId::VELOCITY).to_vec();
            match scene.info(out).slot {
                Slot::State(j) => {
                    if let Some(os) = scene.states[j].as_mut() {
                        let n = os.deriv_len();
                        let mut ox = os.take(VecId::POSITION);
                        ox.resize(n, 0.0);
                        m.apply(&x, &mut ox);
                        os.put(VecId::POSITION, ox);
                        let mut ov = os.take(VecId::VELOCITY);
                        ov.resize(n, 0.0);
                        m.apply_j(&v, &mut ov);
                        os.put(VecId::VELOCITY, ov);
                    }
                }
                Slot::Passive(j) => {
                    if let Some(mesh) = scene.passives[j].as_mut().and_then(|p| p.visual_mesh_mut())
                    {
                        let mut buf = vec![0.0; mesh.points.len() * 3];
                        m.apply(&x, &mut buf);
                        mesh.points = canape_core::mesh::group_points(&buf);
                    }
                }
                _ => {}
            }
        }
    }

    pub fn time(&self) -> f64 {
        self.scene.time
    }

    /// Project positions/velocities (SOFA does it at init and after each step) and check for NaN.
    fn project_and_check(&mut self, _init: bool) {
        for g in &self.groups {
            for &(p, sp) in &g.projective {
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

    /// Whether any simulated state holds a NaN or infinite value.
    pub fn find_non_finite(&self) -> Option<String> {
        for (i, s) in self.scene.states.iter().enumerate() {
            if let Some(s) = s {
                if s.vec(VecId::POSITION).iter().any(|v| !v.is_finite()) {
                    let id = self
                        .scene
                        .components
                        .iter()
                        .position(|c| c.slot == canape_core::scene::Slot::State(i));
                    let label = id
                        .map(|id| {
                            self.scene
                                .component_label(canape_core::scene::ComponentId(id as u32))
                        })
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

    /// One step with an explicit dt.
    pub fn step_dt(&mut self, dt: f64) {
        let t0 = Instant::now();
        let mut clock = PhaseClock::default();
        self.last_solve.clear();
        let scene = &mut self.scene;
        for (g, cache) in self.groups.iter().zip(self.caches.iter_mut()) {
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
                linear,
                &mut clock,
                cache,
            );
            ode.solve(&mut ops, dt);
            self.last_solve.push(ops.last_stats);
            scene.odes[g.ode] = Some(ode);
        }
        let tp = Instant::now();
        self.project_and_check(false);
        clock.projection += tp.elapsed();
        self.propagate_mappings();
        self.scene.time += dt;
        let total = t0.elapsed();
        let t = &mut self.times;
        t.steps += 1;
        t.total += total;
        t.force += clock.force;
        t.assembly += clock.assembly;
        t.solve += clock.solve.saturating_sub(clock.assembly);
        t.projection += clock.projection;
        t.other += total.saturating_sub(clock.force + clock.solve + clock.projection);
    }
}
