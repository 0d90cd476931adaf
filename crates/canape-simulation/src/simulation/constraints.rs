//! FreeMotionAnimationLoop's stages (Sofa/Component/AnimationLoop/.../FreeMotionAnimationLoop.cpp):
//! the free motion and the Lagrangian constraint solve.
//!
//! Free motion: every solver group integrates from (x_t, v_t) as usual; the result is kept as
//! the free velocity (SOFA's freeVelocity), x and v are put back to x_t and v_t, the free
//! velocity is projected and mapped down (applyJ, at the configuration x_t), and on every state
//! freePosition = x_t + dt·freeVelocity (linearised for mapped states, as SOFA computes it).
//!
//! Constraint solve (GenericConstraintSolver's prepare/build/solve/apply, ConstraintSolverImpl):
//! the constraints' rows are built at the free positions in graph order, rows on mapped states
//! are brought up to the independent states through the mappings' Jᵀ (at x_t), rows on
//! projected DOFs are cleared, each constraint correction adds its compliance to
//! W = factor·J C Jᵀ (factor: the ODE solver's position factor, dt for EulerImplicit; 1 for an
//! uncoupled correction under an unbuilt solver, as SOFA's unbuilt path applies none), the
//! solver finds the impulses λ, and each correction moves its state:
//! x = x_free + position factor·C Jᵀλ, v = v_free + velocity factor·C Jᵀλ. A state whose
//! solver has no constraint correction keeps x_t and v_t, as in SOFA.
//!
//! With `solveVelocityConstraintFirst` ([`ConstraintOrder::Velocity`], SOFA's VEL order) the
//! constraints give velocity violations, W takes the velocity factor instead (1 for
//! EulerImplicit), the corrections change velocities only, v = v_free + velocity factor·C Jᵀλ,
//! and every independent state of a solver group then moves as x = x_t + dt·v (SOFA's
//! `pos.eq(pos, vel, dt)`: a state without correction by its velocity at the step's start).

use super::Simulation;
use crate::group::GroupOps;
use crate::mapped;
use canape_core::component::Role;
use canape_core::diag::Diagnostic;
use canape_core::lagrangian::{
    ConstraintBuild, ConstraintInputs, ConstraintOrder, ConstraintProblem, ConstraintSolver,
    ConstraintStats, CorrectionKind, IntegrationFactors, ProblemForm, StateRows,
};
use canape_core::scene::{ComponentId, Slot};
use canape_core::state::VecId;
use std::collections::BTreeMap;

/// The Lagrangian components of the scene (passive slots, graph order), found once after init
/// and after every change to the graph.
#[derive(Clone, Debug, Default)]
pub struct Lagrangian {
    pub constraints: Vec<usize>,
    /// For each constraint, the rank of its node in the graph's depth-first order.
    node_ranks: Vec<usize>,
    pub corrections: Vec<usize>,
    pub solver: Option<usize>,
    /// Statistics of the last constraint solve.
    pub last: ConstraintStats,
    /// Messages already reported (each once).
    reported: Vec<String>,
}

impl Simulation {
    /// Find the Lagrangian constraints, corrections and the first constraint solver.
    pub(crate) fn find_lagrangian(&mut self, order: &[ComponentId]) {
        let scene = &mut self.scene;
        let mut l = Lagrangian {
            reported: std::mem::take(&mut self.lagrangian.reported),
            ..Default::default()
        };
        // `order` lists each node's components together, nodes depth first
        let (mut rank, mut last_node) = (0, None);
        for &c in order {
            let info = scene.info(c);
            if last_node != Some(info.node) {
                rank += 1;
                last_node = Some(info.node);
            }
            if info.role != Role::Constraint || !scene.node(info.node).activated {
                continue;
            }
            let Slot::Passive(i) = info.slot else {
                continue;
            };
            let Some(p) = scene.passives[i].as_mut() else {
                continue;
            };
            if p.lagrangian_constraint().is_some() {
                l.constraints.push(i);
                l.node_ranks.push(rank);
            } else if p.constraint_correction().is_some() {
                l.corrections.push(i);
            } else if p.constraint_solver().is_some() && l.solver.is_none() {
                l.solver = Some(i);
            }
        }
        self.lagrangian = l;
    }

    fn report_once(&mut self, d: Diagnostic) {
        let key = format!("{:?}{}", d.component, d.message);
        if !self.lagrangian.reported.contains(&key) {
            self.lagrangian.reported.push(key);
            self.diagnostics.push(d);
        }
    }

    /// The free motion: each group integrates; the result becomes the free velocity and
    /// position, and x, v are back at the start of the step.
    pub(crate) fn free_motion(&mut self, dt: f64) {
        let scene = &mut self.scene;
        // keep x_t, v_t of the independent states in the free vectors while the solvers write
        for g in &self.groups {
            for &si in &g.states {
                if let Some(s) = scene.states[si].as_mut() {
                    let x = s.vec(VecId::POSITION).to_vec();
                    let v = s.vec(VecId::VELOCITY).to_vec();
                    s.vec_mut(VecId::FREE_POSITION).copy_from_slice(&x);
                    s.vec_mut(VecId::FREE_VELOCITY).copy_from_slice(&v);
                }
            }
        }
        self.solve_groups(dt, None);
        let scene = &mut self.scene;
        for g in &self.groups {
            for (k, &si) in g.states.iter().enumerate() {
                let Some(s) = scene.states[si].as_mut() else {
                    continue;
                };
                s.swap_vecs(VecId::POSITION, VecId::FREE_POSITION);
                s.swap_vecs(VecId::VELOCITY, VecId::FREE_VELOCITY);
                // projective constraints on the free velocity (SOFA's projectResponse)
                for &(p, sp) in &g.projective {
                    if sp == k {
                        if let Some(c) = scene.projective[p].as_ref() {
                            c.project_response(s.vec_mut(VecId::FREE_VELOCITY));
                        }
                    }
                }
            }
            mapped::propagate_dx(
                &mut scene.states,
                &scene.mappings,
                &g.mappings,
                VecId::FREE_VELOCITY,
            );
        }
        // freePosition = x + dt·freeVelocity on every state (a state no solver integrates keeps
        // the velocity it had when the free vectors were first made, as SOFA's vInit does)
        for s in scene.states.iter_mut().flatten() {
            if s.vec(VecId::FREE_VELOCITY).len() != s.vec(VecId::VELOCITY).len() {
                let v = s.vec(VecId::VELOCITY).to_vec();
                *s.vec_mut(VecId::FREE_VELOCITY) = v;
            }
            let dof = s.dof;
            let mut xf = s.take(VecId::FREE_POSITION);
            xf.clear();
            xf.extend_from_slice(s.vec(VecId::POSITION));
            dof.coord_add_deriv(&mut xf, s.vec(VecId::FREE_VELOCITY), dt);
            s.put(VecId::FREE_POSITION, xf);
        }
    }

    /// Build and solve the Lagrangian constraints, and correct the states (the loop's
    /// constraint solver, or `fallback` when the scene has none).
    pub(crate) fn solve_constraints(
        &mut self,
        dt: f64,
        fallback: &mut dyn ConstraintSolver,
        order: ConstraintOrder,
    ) {
        let velocity = order == ConstraintOrder::Velocity;
        // at the velocity level, W and the corrections take the velocity factor
        let level = |f: IntegrationFactors| {
            if velocity {
                IntegrationFactors {
                    position: f.velocity,
                    velocity: f.velocity,
                }
            } else {
                f
            }
        };
        let nstates = self.scene.states.len();
        // where each state is: (group, index in the group)
        let mut place: Vec<Option<(usize, usize)>> = vec![None; nstates];
        for (gi, g) in self.groups.iter().enumerate() {
            for k in 0..g.nb_states() {
                place[g.state_of(k)] = Some((gi, k));
            }
        }
        let form = match self.lagrangian.solver {
            Some(i) => self.scene.passives[i]
                .as_mut()
                .and_then(|p| p.constraint_solver())
                .map(|s| s.form())
                .unwrap_or(ProblemForm::Built),
            None => fallback.form(),
        };

        // 1. rows, violations and blocks, constraint by constraint in graph order
        let mut build = ConstraintBuild::default();
        // (passive slot, state slots of its sides, first row, row count)
        let mut owners: Vec<(usize, [Option<usize>; 2], usize, usize)> = Vec::new();
        for pi in self.constraint_order() {
            let Some(mut p) = self.scene.passives[pi].take() else {
                continue;
            };
            if let Some(c) = p.lagrangian_constraint() {
                let sides = c.sides().map(|s| {
                    s.and_then(|id| match self.scene.info(id).slot {
                        Slot::State(k) => Some(k),
                        _ => None,
                    })
                });
                let vec_of = |k: Option<usize>, id: VecId| -> &[f64] {
                    k.and_then(|k| self.scene.states[k].as_ref())
                        .map(|s| s.vec(id))
                        .unwrap_or(&[])
                };
                let inputs = ConstraintInputs {
                    x_free: sides.map(|k| vec_of(k, VecId::FREE_POSITION)),
                    v_free: sides.map(|k| vec_of(k, VecId::FREE_VELOCITY)),
                    x: sides.map(|k| vec_of(k, VecId::POSITION)),
                    dt,
                    order,
                };
                let first = build.rows();
                c.build(&inputs, &mut build);
                owners.push((pi, sides, first, build.rows() - first));
            }
            self.scene.passives[pi] = Some(p);
        }
        let n = build.rows();

        // 2. rows per independent state (scene state slot → rows)
        let mut rows: BTreeMap<usize, StateRows> = BTreeMap::new();
        // rows on mapped states, per group: (row, state slot, dof, value)
        let mut mapped_rows: BTreeMap<usize, Vec<(u32, usize, u32, f64)>> = BTreeMap::new();
        for e in &build.entries {
            // owners are in row order: the last one starting at or before the row
            let k = owners.partition_point(|o| o.2 <= e.row as usize);
            let owner = k
                .checked_sub(1)
                .map(|k| &owners[k])
                .filter(|o| (e.row as usize) < o.2 + o.3);
            let Some(slot) = owner.and_then(|o| o.1[e.side as usize]) else {
                continue;
            };
            match place[slot] {
                Some((gi, k)) if self.groups[gi].is_independent(k) => rows
                    .entry(slot)
                    .or_default()
                    .entries
                    .push((e.row, e.dof, e.value)),
                Some((gi, _)) => mapped_rows
                    .entry(gi)
                    .or_default()
                    .push((e.row, slot, e.dof, e.value)),
                // a state no solver integrates: no compliance, no motion
                None => {}
            }
        }
        let scratch_id = VecId::SYSTEM_DF;
        for (gi, list) in mapped_rows {
            let g = &self.groups[gi];
            let mut by_row: BTreeMap<u32, Vec<(usize, u32, f64)>> = BTreeMap::new();
            for (r, s, d, v) in list {
                by_row.entry(r).or_default().push((s, d, v));
            }
            let mut buffers = Vec::new();
            for (r, entries) in by_row {
                for k in 0..g.nb_states() {
                    if let Some(s) = self.scene.states[g.state_of(k)].as_mut() {
                        s.vec_mut(scratch_id).fill(0.0);
                    }
                }
                for (s, d, v) in entries {
                    if let Some(st) = self.scene.states[s].as_mut() {
                        if let Some(x) = st.vec_mut(scratch_id).get_mut(d as usize) {
                            *x += v;
                        }
                    }
                }
                mapped::accumulate_constraints(
                    &mut self.scene.states,
                    &self.scene.mappings,
                    &g.mappings,
                    scratch_id,
                    &mut buffers,
                );
                for &si in &g.states {
                    if let Some(st) = self.scene.states[si].as_ref() {
                        for (d, &v) in st.vec(scratch_id).iter().enumerate() {
                            if v != 0.0 {
                                rows.entry(si).or_default().entries.push((r, d as u32, v));
                            }
                        }
                    }
                }
            }
        }
        // merge duplicates, sort by (row, dof), clear projected DOFs
        for (&si, sr) in rows.iter_mut() {
            let (gi, k) = place[si].expect("rows only on grouped states");
            let ds = self.scene.states[si]
                .as_ref()
                .map_or(1, |s| s.dof.deriv_size());
            let mut fixed: Vec<usize> = Vec::new();
            for &(p, sp) in &self.groups[gi].projective {
                if sp == k {
                    if let Some(c) = self.scene.projective[p].as_ref() {
                        fixed.extend(c.fixed_scalar_dofs(ds));
                    }
                }
            }
            fixed.sort_unstable();
            sr.entries.sort_by_key(|a| (a.0, a.1));
            let mut merged: Vec<(u32, u32, f64)> = Vec::with_capacity(sr.entries.len());
            for &(r, d, v) in &sr.entries {
                match merged.last_mut() {
                    Some(last) if last.0 == r && last.1 == d => last.2 += v,
                    _ => merged.push((r, d, v)),
                }
            }
            merged.retain(|e| e.2 != 0.0 && fixed.binary_search(&(e.1 as usize)).is_err());
            sr.entries = merged;
        }

        // 3. W from the corrections
        let mut w = vec![0.0; n * n];
        // (passive slot, state slot, group) of each correction that acts
        let mut acting: Vec<(usize, usize, usize)> = Vec::new();
        for &ci in &self.lagrangian.corrections.clone() {
            let Some(p) = self.scene.passives[ci].as_ref() else {
                continue;
            };
            let Some(cc) = p.constraint_correction() else {
                continue;
            };
            let state = cc.state().and_then(|id| match self.scene.info(id).slot {
                Slot::State(k) => Some(k),
                _ => None,
            });
            let grouped = state.and_then(|s| place[s].map(|(gi, k)| (s, gi, k)));
            let Some((s, gi, k)) = grouped.filter(|&(_, gi, k)| self.groups[gi].is_independent(k))
            else {
                let id = self
                    .scene
                    .component_ids()
                    .find(|c| self.scene.info(*c).slot == Slot::Passive(ci));
                let mut d = Diagnostic::warning(
                    "this constraint correction's state is not integrated by a solver (no ODE solver above it, or a mapped state): it corrects nothing",
                );
                if let Some(id) = id {
                    d = d
                        .at(self.scene.info(id).loc.clone())
                        .on(self.scene.component_label(id));
                }
                self.report_once(d);
                continue;
            };
            let _ = k;
            acting.push((ci, s, gi));
            let Some(sr) = rows.get(&s) else { continue };
            if n == 0 || sr.entries.is_empty() {
                continue;
            }
            let ode = self.scene.odes[self.groups[gi].ode]
                .as_ref()
                .map(|o| level(o.integration_factors(dt)));
            let Some(ode) = ode else { continue };
            let ds = self.scene.states[s]
                .as_ref()
                .map_or(1, |st| st.dof.deriv_size());
            match cc.kind() {
                CorrectionKind::Uncoupled => {
                    let factor = match form {
                        ProblemForm::Built => cc.w_factor(ode),
                        ProblemForm::Unbuilt => 1.0,
                    };
                    cc.add_compliance(sr, ds, factor, n, &mut w);
                }
                CorrectionKind::LinearSolver => {
                    let factor = cc.w_factor(ode);
                    let (rows, block) = self.linear_compliance(gi, s, sr);
                    let m = rows.len();
                    for (a, &ri) in rows.iter().enumerate() {
                        for (b, &rj) in rows.iter().enumerate() {
                            w[ri * n + rj] += factor * block[a * m + b];
                        }
                    }
                }
            }
        }

        // 4. solve
        let mut problem = ConstraintProblem {
            n,
            w,
            dfree: build.dfree,
            blocks: build.blocks,
            force: build.initial,
        };
        if n > 0 {
            let stats = match self.lagrangian.solver {
                Some(i) => {
                    let mut p = self.scene.passives[i].take();
                    let stats = p
                        .as_mut()
                        .and_then(|p| p.constraint_solver())
                        .map(|s| s.solve(&mut problem))
                        .unwrap_or_default();
                    self.scene.passives[i] = p;
                    stats
                }
                None => fallback.solve(&mut problem),
            };
            self.lagrangian.last = stats;
            for (pi, _, first, count) in &owners {
                if let Some(c) = self.scene.passives[*pi]
                    .as_mut()
                    .and_then(|p| p.lagrangian_constraint())
                {
                    c.store(&problem.force[*first..*first + *count]);
                }
            }
        }
        if let Some(why) = self.lagrangian.last.refused {
            self.report_once(Diagnostic::warning(why));
        }
        let lambda = problem.force;
        if lambda.iter().any(|v| !v.is_finite()) {
            self.report_once(Diagnostic::error(
                "the constraint solver gave non-finite impulses: no correction is applied this step",
            ));
        }

        // 5. corrections: x = x_free + pf·corr, v = v_free + vf·corr
        for (ci, s, gi) in acting {
            let ds = self.scene.states[s]
                .as_ref()
                .map_or(1, |st| st.dof.deriv_size());
            let len = self.scene.states[s]
                .as_ref()
                .map_or(0, |st| st.vec(VecId::VELOCITY).len());
            let mut f = vec![0.0; len];
            if let Some(sr) = rows.get(&s) {
                if lambda.iter().all(|v| v.is_finite()) {
                    for &(r, d, v) in &sr.entries {
                        if let Some(x) = f.get_mut(d as usize) {
                            *x += v * lambda[r as usize];
                        }
                    }
                }
            }
            let Some(cc) = self.scene.passives[ci]
                .as_ref()
                .and_then(|p| p.constraint_correction())
            else {
                continue;
            };
            let ode = self.scene.odes[self.groups[gi].ode]
                .as_ref()
                .map(|o| o.integration_factors(dt));
            let Some(ode) = ode else { continue };
            let factors = cc.factors(ode, dt);
            let mut corr = vec![0.0; len];
            if f.iter().any(|v| *v != 0.0) {
                match cc.kind() {
                    CorrectionKind::Uncoupled => cc.apply_compliance(&f, ds, &mut corr),
                    CorrectionKind::LinearSolver => {
                        corr = self.linear_solve_state(gi, s, &f);
                    }
                }
            }
            let Some(st) = self.scene.states[s].as_mut() else {
                continue;
            };
            let dof = st.dof;
            if !velocity {
                let mut x = st.take(VecId::POSITION);
                x.clear();
                x.extend_from_slice(st.vec(VecId::FREE_POSITION));
                dof.coord_add_deriv(&mut x, &corr, factors.position);
                st.put(VecId::POSITION, x);
            }
            let mut v = st.take(VecId::VELOCITY);
            v.clear();
            v.extend_from_slice(st.vec(VecId::FREE_VELOCITY));
            for (a, c) in v.iter_mut().zip(&corr) {
                *a += factors.velocity * c;
            }
            st.put(VecId::VELOCITY, v);
        }
        if velocity {
            // positions follow the velocities: x = x_t + dt·v on every independent state
            for g in &self.groups {
                for &s in &g.states {
                    if let Some(st) = self.scene.states[s].as_mut() {
                        let dof = st.dof;
                        let (v, x) = st.pair_mut(VecId::VELOCITY, VecId::POSITION);
                        dof.coord_add_deriv(x, v, dt);
                    }
                }
            }
        }
        self.project_and_check(false);
        self.propagate_mappings();
    }

    /// The constraints in the order their rows are built: graph order (nodes depth first), the
    /// contact responses of one node among themselves in SOFA's contact map order
    /// (CollisionResponse::createContacts re-adds them to their nodes by their models' ids
    /// every step; a stable sort keeps ties in graph order).
    fn constraint_order(&mut self) -> Vec<usize> {
        let mut order = self.lagrangian.constraints.clone();
        let mut keyed: Vec<(usize, (u32, u32), usize)> = Vec::new();
        for (k, &pi) in order.iter().enumerate() {
            if let Some(key) = self.scene.passives[pi]
                .as_mut()
                .and_then(|p| p.lagrangian_constraint())
                .and_then(|c| c.order_key())
            {
                keyed.push((k, key, pi));
            }
        }
        let places: Vec<usize> = keyed.iter().map(|e| e.0).collect();
        // SOFA's constraint visitor goes through the nodes depth first and, in a node, through
        // its objects in the order they were added; a contact response re-adds its constraint
        // to its node at every step in the contact map's order. So: node first, then the key
        let ranks = &self.lagrangian.node_ranks;
        keyed.sort_by_key(|e| (ranks.get(e.0).copied().unwrap_or(0), e.1));
        for (place, e) in places.into_iter().zip(keyed) {
            order[place] = e.2;
        }
        order
    }

    /// J A⁻¹ Jᵀ for the rows on state `s` of group `gi` with the free motion's system: the
    /// rows (in `sr`'s order) and the block (row-major, one row and column per row). All the
    /// rows are solved together: by the solver's own compliance when it has one (a Cholesky
    /// factor's forward substitutions), else by `solve_again_many` (a direct factor reads its
    /// entries once for all of them) and the products with J's entries. Zero when the group
    /// has no linear solver that solved this step.
    fn linear_compliance(&mut self, gi: usize, s: usize, sr: &StateRows) -> (Vec<usize>, Vec<f64>) {
        let ranges = sr.row_ranges();
        let m = ranges.len();
        let rows: Vec<usize> = ranges.iter().map(|&(r, _, _)| r).collect();
        let mut block = vec![0.0; m * m];
        let g = &self.groups[gi];
        let Some(k) = g.states.iter().position(|&x| x == s) else {
            return (rows, block);
        };
        let (off, size) = (g.offsets[k], g.size);
        let mut rhs = vec![0.0; size * m];
        for (c, &(_, a, b)) in ranges.iter().enumerate() {
            for &(_, d, v) in &sr.entries[a..b] {
                rhs[(off + d as usize) * m + c] += v;
            }
        }
        if self.group_compliance(gi, &rhs, m, &mut block) {
            return (rows, block);
        }
        let mut sol = vec![0.0; size * m];
        if !self.group_solve_again(gi, &rhs, &mut sol, m) {
            return (rows, block);
        }
        for (a, &(_, ea, eb)) in ranges.iter().enumerate() {
            for b in 0..m {
                let mut sum = 0.0;
                for &(_, d, v) in &sr.entries[ea..eb] {
                    sum += v * sol[(off + d as usize) * m + b];
                }
                block[a * m + b] = sum;
            }
        }
        (rows, block)
    }

    /// The group's own Bᵀ A⁻¹ B ([`GroupOps::compliance_again`]) into `w`; false when its
    /// solver has none (or solved nothing this step).
    fn group_compliance(&mut self, gi: usize, rhs: &[f64], m: usize, w: &mut [f64]) -> bool {
        self.with_group_ops(gi, |ops| ops.compliance_again(rhs, m, w).is_some())
    }

    /// `f` with the operations of group `gi` (its states, force fields, mappings and linear
    /// solver, as the step's solve used them).
    fn with_group_ops<R>(&mut self, gi: usize, f: impl FnOnce(&mut GroupOps) -> R) -> R {
        let g = &self.groups[gi];
        let scene = &mut self.scene;
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
            &mut self.works[gi],
        );
        f(&mut ops)
    }

    /// A⁻¹ f for a force `f` on independent state `s` of group `gi` (zero on the group's other
    /// states), restricted to `s`.
    fn linear_solve_state(&mut self, gi: usize, s: usize, f: &[f64]) -> Vec<f64> {
        let g = &self.groups[gi];
        let Some(k) = g.states.iter().position(|&x| x == s) else {
            return vec![0.0; f.len()];
        };
        let off = g.offsets[k];
        let mut rhs = vec![0.0; g.size];
        rhs[off..off + f.len()].copy_from_slice(f);
        let mut sol = vec![0.0; g.size];
        if !self.group_solve_again(gi, &rhs, &mut sol, 1) {
            return vec![0.0; f.len()];
        }
        sol[off..off + f.len()].to_vec()
    }

    /// The group's linear solver again on `m` right-hand sides stored row by row (one: a
    /// plain `solve_again`) with the free motion's system; false, reported once, when the
    /// group has no linear solver that solved this step.
    fn group_solve_again(&mut self, gi: usize, rhs: &[f64], sol: &mut [f64], m: usize) -> bool {
        let solved = self.with_group_ops(gi, |ops| {
            if m == 1 {
                ops.solve_again(rhs, sol)
            } else {
                ops.solve_again_many(rhs, sol, m)
            }
        });
        if solved.is_none() {
            let d = Diagnostic::warning(
                "LinearSolverConstraintCorrection: the solver group has no linear solver that solved this step: no compliance",
            )
            .on(self.scene.node_path(self.groups[gi].node));
            self.report_once(d);
            return false;
        }
        true
    }
}
