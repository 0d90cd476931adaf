//! The mechanical operations over one group: `GroupOps` (vector operations, forces, mappings,
//! projections) and its `MechanicalOps` implementation, which ODE solvers call.

use super::*;
use crate::mapped::{self, StateMap};
use canape_core::state::{MechanicalObject, VecId};
use std::time::Instant;

impl<'a> GroupOps<'a> {
    pub fn new(
        group: &'a Group,
        scene_states: &'a mut [Option<MechanicalObject>],
        masses: &'a [Option<Box<dyn Mass>>],
        force_fields: &'a mut [Option<Box<dyn ForceField>>],
        projective: &'a [Option<Box<dyn ProjectiveConstraint>>],
        mappings: &'a mut [Option<Box<dyn Mapping>>],
        linear: Option<&'a mut Box<dyn LinearSolver>>,
        clock: &'a mut PhaseClock,
        work: &'a mut GroupWork,
    ) -> Self {
        // temporary ids restart at FIRST_TEMP every step: the same vectors are reused
        work.free_ids.clear();
        work.free_coord_ids.clear();
        GroupOps {
            group,
            states: scene_states,
            masses,
            force_fields,
            projective,
            mappings,
            linear,
            clock,
            work,
            last_stats: SolveStats::default(),
            next_id: VecId::FIRST_TEMP,
            next_coord_id: VecId::FIRST_COORD_TEMP,
        }
    }

    fn st(&mut self, k: usize) -> &mut MechanicalObject {
        self.states[self.group.states[k]]
            .as_mut()
            .expect("state present")
    }

    fn for_each_state(&mut self, mut f: impl FnMut(&mut MechanicalObject)) {
        for k in 0..self.group.states.len() {
            f(self.st(k));
        }
    }

    /// Every state of the group, mapped ones included.
    fn for_all_states(&mut self, mut f: impl FnMut(&mut MechanicalObject)) {
        for k in 0..self.group.nb_states() {
            if let Some(s) = self.states[self.group.state_of(k)].as_mut() {
                f(s);
            }
        }
    }

    /// Zero vector `id` of the mapped states (their accumulators before a bottom-up pass).
    fn reset_mapped(&mut self, id: VecId) {
        for &s in &self.group.mapped {
            if let Some(st) = self.states[s].as_mut() {
                st.vec_mut(id).iter_mut().for_each(|v| *v = 0.0);
            }
        }
    }

    /// y = (m M + b B + k K) x through the mapping graph (SOFA's GraphScatteredMatrix::apply:
    /// propagate dx down and reset df, addMBKdx with Jᵀ and the geometric stiffness going up,
    /// then project): x is scattered into the independent states' `SYSTEM_DX`, the result
    /// gathered from their `SYSTEM_DF`.
    pub(super) fn apply_mapped(&mut self, x: &[f64], y: &mut [f64], m: f64, b: f64, k: f64) {
        let (dx, df) = (VecId::SYSTEM_DX, VecId::SYSTEM_DF);
        let g = self.group;
        for (i, &s) in g.states.iter().enumerate() {
            let st = self.states[s].as_mut().unwrap();
            let v = st.vec_mut(dx);
            let n = v.len();
            v.copy_from_slice(&x[g.offsets[i]..g.offsets[i] + n]);
        }
        for &s in &g.mapped {
            self.states[s].as_mut().unwrap().ensure(dx);
        }
        mapped::propagate_dx(self.states, self.mappings, &g.mappings, dx);
        self.for_all_states(|s| s.vec_mut(df).iter_mut().for_each(|v| *v = 0.0));
        self.add_entries(df, dx, m, b, k);
        let fid = self.work.force_id.unwrap_or(VecId::FORCE);
        mapped::accumulate(
            self.states,
            self.mappings,
            &g.mappings,
            df,
            Some((dx, fid, k)),
            &mut self.work.scratch,
        );
        for (i, &s) in g.states.iter().enumerate() {
            let v = self.states[s].as_ref().unwrap().vec(df);
            y[g.offsets[i]..g.offsets[i] + v.len()].copy_from_slice(v);
        }
    }

    /// out += m M v + (b·rayleigh + k) K v on every state of the group (no mapping pass).
    fn add_entries(&mut self, out: VecId, v: VecId, m: f64, b: f64, k: f64) {
        let g = self.group;
        for e in &g.forces {
            match *e {
                ForceEntry::Mass { mass, state, .. } => {
                    let ms = self.masses[mass].as_ref().unwrap();
                    let mf = m - b * ms.rayleigh_mass();
                    if mf != 0.0 {
                        let st = self.states[g.state_of(state)].as_mut().unwrap();
                        let (vv, o) = st.pair_mut(v, out);
                        ms.add_mdx(o, vv, mf);
                    }
                }
                ForceEntry::Field { ff, state } => {
                    let st = self.states[g.state_of(state)].as_mut().unwrap();
                    let (vv, o) = st.pair_mut(v, out);
                    let f = self.force_fields[ff].as_mut().unwrap();
                    let kf = k + b * f.rayleigh_stiffness();
                    if kf != 0.0 || b != 0.0 {
                        f.add_dforce(vv, o, kf);
                    }
                    if b != 0.0 {
                        f.add_bdx(vv, o, b);
                    }
                    if f.has_mass() && m != 0.0 {
                        f.add_mdx(o, vv, m);
                    }
                }
                ForceEntry::Pair { ff, sides } => {
                    let f = self.force_fields[ff].as_mut().unwrap();
                    let kf = k + b * f.rayleigh_stiffness();
                    if kf == 0.0 && b == 0.0 {
                        continue;
                    }
                    let w = &mut self.work.pair;
                    pair_gather(self.states, &sides, v, true, &mut w.a);
                    w.out.clear();
                    w.out.resize(w.a.len(), 0.0);
                    f.add_dforce(&w.a, &mut w.out, kf);
                    if b != 0.0 {
                        f.add_bdx(&w.a, &mut w.out, b);
                    }
                    pair_scatter(self.states, &sides, out, &w.out);
                }
            }
        }
    }

    /// out += m M v + k K v on every state (masses' and force fields' own factors, no Rayleigh
    /// terms: the ODE solver folds them into m and k here).
    fn add_entries_mk(&mut self, out: VecId, v: VecId, m: f64, k: f64) {
        let g = self.group;
        for e in &g.forces {
            match *e {
                ForceEntry::Mass { mass, state, .. } => {
                    if m != 0.0 {
                        let st = self.states[g.state_of(state)].as_mut().unwrap();
                        let (vv, o) = st.pair_mut(v, out);
                        self.masses[mass].as_ref().unwrap().add_mdx(o, vv, m);
                    }
                }
                ForceEntry::Field { ff, state } => {
                    let st = self.states[g.state_of(state)].as_mut().unwrap();
                    let (vv, o) = st.pair_mut(v, out);
                    let f = self.force_fields[ff].as_mut().unwrap();
                    if k != 0.0 {
                        f.add_dforce(vv, o, k);
                    }
                    if m != 0.0 && f.has_mass() {
                        f.add_mdx(o, vv, m);
                    }
                }
                ForceEntry::Pair { ff, sides } => {
                    if k == 0.0 {
                        continue;
                    }
                    let f = self.force_fields[ff].as_mut().unwrap();
                    let w = &mut self.work.pair;
                    pair_gather(self.states, &sides, v, true, &mut w.a);
                    w.out.clear();
                    w.out.resize(w.a.len(), 0.0);
                    f.add_dforce(&w.a, &mut w.out, k);
                    pair_scatter(self.states, &sides, out, &w.out);
                }
            }
        }
    }

    /// Each state's map to the group's DOFs: independent states by offset, mapped ones by
    /// their Jacobians composed down the mapping graph (at the positions of the last `apply`).
    pub(super) fn state_maps(&self) -> Vec<StateMap> {
        let g = self.group;
        let mut maps: Vec<StateMap> = g.offsets.iter().map(|&o| StateMap::Offset(o)).collect();
        let (mut acc, mut mark, mut entries) = (Vec::new(), Vec::new(), Vec::new());
        for gm in &g.mappings {
            entries.clear();
            if let Some(m) = self.mappings[gm.mapping].as_ref() {
                m.jacobian(&mut entries);
            }
            let out_len = self.states[gm.output].as_ref().map_or(0, |s| s.deriv_len());
            let rows = {
                let ins: Vec<&StateMap> = gm.inputs_k.iter().map(|&k| &maps[k]).collect();
                mapped::compose(&entries, out_len, &ins, &mut acc, &mut mark, g.size)
            };
            debug_assert_eq!(maps.len(), gm.output_k);
            maps.push(StateMap::Rows(rows));
        }
        maps
    }

    /// Copy a group vector into one flat buffer.
    fn gather(&mut self, id: VecId, out: &mut [f64]) {
        for k in 0..self.group.states.len() {
            let off = self.group.offsets[k];
            let v = self.st(k).vec(id);
            out[off..off + v.len()].copy_from_slice(v);
        }
    }

    fn scatter(&mut self, id: VecId, src: &[f64]) {
        for k in 0..self.group.states.len() {
            let off = self.group.offsets[k];
            let st = self.st(k);
            let v = st.vec_mut(id);
            let n = v.len();
            v.copy_from_slice(&src[off..off + n]);
        }
    }
}

impl MechanicalOps for GroupOps<'_> {
    fn alloc(&mut self) -> VecId {
        let id = self.work.free_ids.pop().unwrap_or_else(|| {
            let id = VecId(self.next_id);
            self.next_id += 1;
            id
        });
        assert!(id.0 < VecId::FIRST_COORD_TEMP, "too many temporary vectors");
        self.for_all_states(|s| {
            s.ensure(id);
            s.vec_mut(id).iter_mut().for_each(|v| *v = 0.0);
        });
        id
    }

    fn alloc_coord(&mut self) -> VecId {
        let id = self.work.free_coord_ids.pop().unwrap_or_else(|| {
            let id = VecId(self.next_coord_id);
            self.next_coord_id += 1;
            id
        });
        assert!(
            id.0 < VecId::FREE_POSITION.0,
            "too many temporary coordinate vectors"
        );
        self.for_all_states(|s| {
            s.ensure(id);
            s.vec_mut(id).iter_mut().for_each(|v| *v = 0.0);
        });
        id
    }

    fn persistent(&mut self, key: u32) -> VecId {
        let id = VecId(VecId::FIRST_PERSISTENT + key);
        self.for_all_states(|s| s.ensure(id));
        id
    }

    fn free(&mut self, v: VecId) {
        if (VecId::FIRST_COORD_TEMP..VecId::FREE_POSITION.0).contains(&v.0) {
            self.work.free_coord_ids.push(v);
        } else if v.0 >= VecId::FIRST_TEMP && v.0 < VecId::FIRST_COORD_TEMP {
            self.work.free_ids.push(v);
        }
    }

    fn compute_force(&mut self, f: VecId) {
        let t0 = Instant::now();
        let g = self.group;
        if !g.mappings.is_empty() {
            // positions and velocities down first (SOFA propagates them after every step and
            // after init; doing it here too keeps Newton iterations right)
            mapped::propagate_x_v(self.states, self.mappings, &g.mappings);
        }
        self.for_all_states(|s| {
            let n = s.deriv_len();
            if s.vec(VecId::EXTERNAL_FORCE).len() == n && f != VecId::EXTERNAL_FORCE {
                // forces from outside the solver (explicit contacts) start the sum
                let (ext, out) = s.pair_mut(VecId::EXTERNAL_FORCE, f);
                out.copy_from_slice(ext);
            } else {
                s.vec_mut(f).iter_mut().for_each(|v| *v = 0.0)
            }
        });
        for e in &g.forces {
            match *e {
                ForceEntry::Mass {
                    mass,
                    state,
                    gravity,
                } => {
                    let st = self.states[g.state_of(state)].as_mut().unwrap();
                    let m = self.masses[mass].as_ref().unwrap();
                    m.add_gravity_force(st.vec_mut(f), &gravity);
                }
                ForceEntry::Field { ff, state } => {
                    let st = self.states[g.state_of(state)].as_mut().unwrap();
                    let mut out = st.take(f);
                    let x = st.vec(VecId::POSITION);
                    let v = st.vec(VecId::VELOCITY);
                    self.force_fields[ff]
                        .as_mut()
                        .unwrap()
                        .add_force(x, v, &mut out);
                    st.put(f, out);
                }
                ForceEntry::Pair { ff, sides } => {
                    let w = &mut self.work.pair;
                    pair_gather(self.states, &sides, VecId::POSITION, false, &mut w.a);
                    pair_gather(self.states, &sides, VecId::VELOCITY, false, &mut w.b);
                    w.out.clear();
                    w.out.resize(w.b.len(), 0.0);
                    self.force_fields[ff]
                        .as_mut()
                        .unwrap()
                        .add_force(&w.a, &w.b, &mut w.out);
                    pair_scatter(self.states, &sides, f, &w.out);
                }
            }
        }
        if !g.mappings.is_empty() {
            mapped::accumulate(
                self.states,
                self.mappings,
                &g.mappings,
                f,
                None,
                &mut self.work.scratch,
            );
        }
        self.work.force_id = Some(f);
        self.clock.force += t0.elapsed();
    }

    fn add_mbk_v(&mut self, out: VecId, v: VecId, m: f64, k: f64) {
        let t0 = Instant::now();
        let g = self.group;
        if !g.mappings.is_empty() {
            // SOFA's addMBKv: v down the mappings, the mapped accumulators reset, then
            // MechanicalAddMBKdxVisitor (forces up with Jᵀ and the geometric stiffness)
            mapped::propagate_dx(self.states, self.mappings, &g.mappings, v);
            self.reset_mapped(out);
            self.add_entries_mk(out, v, m, k);
            let fid = self.work.force_id.unwrap_or(VecId::FORCE);
            mapped::accumulate(
                self.states,
                self.mappings,
                &g.mappings,
                out,
                Some((v, fid, k)),
                &mut self.work.scratch,
            );
        } else {
            self.add_entries_mk(out, v, m, k);
        }
        self.clock.force += t0.elapsed();
    }

    fn add_mbk(&mut self, out: VecId, v: VecId, m: f64, b: f64, k: f64) {
        let t0 = Instant::now();
        let g = self.group;
        if !g.mappings.is_empty() {
            mapped::propagate_dx(self.states, self.mappings, &g.mappings, v);
            self.reset_mapped(out);
            self.add_entries(out, v, m, b, k);
            let fid = self.work.force_id.unwrap_or(VecId::FORCE);
            mapped::accumulate(
                self.states,
                self.mappings,
                &g.mappings,
                out,
                Some((v, fid, k)),
                &mut self.work.scratch,
            );
        } else {
            self.add_entries(out, v, m, b, k);
        }
        self.clock.force += t0.elapsed();
    }

    fn project_response(&mut self, v: VecId) {
        let t0 = Instant::now();
        let g = self.group;
        for &(p, sp) in &g.projective {
            if !g.is_independent(sp) {
                continue;
            }
            let st = self.states[g.states[sp]].as_mut().unwrap();
            if let Some(c) = self.projective[p].as_ref() {
                c.project_response(st.vec_mut(v));
            }
        }
        self.clock.projection += t0.elapsed();
    }

    fn compute_acc(&mut self, a: VecId, f: VecId, x: VecId, v: VecId) {
        assert!(
            x.is_coord() && !v.is_coord(),
            "compute_acc takes (coordinates, derivatives)"
        );
        // the vectors take the place of the independent states' position and velocity (an
        // exchange of buffers, whatever the DOF type), mapped states follow in compute_force
        let swap = |ops: &mut Self| {
            ops.for_each_state(|s| {
                s.swap_vecs(VecId::POSITION, x);
                s.swap_vecs(VecId::VELOCITY, v);
            })
        };
        swap(self);
        let t0 = Instant::now();
        let g = self.group;
        for &(p, sp) in &g.projective {
            if !g.is_independent(sp) {
                continue;
            }
            let st = self.states[g.states[sp]].as_mut().unwrap();
            if let Some(c) = self.projective[p].as_ref() {
                c.project_position(st.vec_mut(VecId::POSITION));
                c.project_velocity(st.vec_mut(VecId::VELOCITY));
            }
        }
        self.clock.projection += t0.elapsed();
        self.compute_force(f);
        self.accel_from_force(a, f);
        swap(self);
    }

    fn accel_from_force(&mut self, a: VecId, f: VecId) {
        let g = self.group;
        let all_diagonal = g.forces.iter().all(|e| match *e {
            ForceEntry::Mass { mass, state, .. } => {
                g.is_independent(state)
                    && self.masses[mass].as_ref().is_some_and(|m| m.is_diagonal())
            }
            ForceEntry::Field { ff, .. } | ForceEntry::Pair { ff, .. } => {
                !self.force_fields[ff].as_ref().is_some_and(|f| f.has_mass())
            }
        });
        if !all_diagonal && self.linear.is_some() {
            self.solve_linear(1.0, 0.0, 0.0, a, f);
            self.project_response(a);
            return;
        }
        // diagonal: m_i = (M·1)_i
        for k in 0..g.states.len() {
            let si = g.states[k];
            let n = self.states[si].as_ref().unwrap().deriv_len();
            let mut diag = vec![0.0; n];
            let ones = vec![1.0; n];
            for e in &g.forces {
                if let ForceEntry::Mass { mass, state, .. } = *e {
                    if state == k {
                        self.masses[mass]
                            .as_ref()
                            .unwrap()
                            .add_mdx(&mut diag, &ones, 1.0);
                    }
                }
            }
            let st = self.states[si].as_mut().unwrap();
            let fv = st.vec(f).to_vec();
            let av = st.vec_mut(a);
            for i in 0..n {
                av[i] = if diag[i] != 0.0 { fv[i] / diag[i] } else { 0.0 };
            }
        }
        self.project_response(a);
    }

    fn add_separate_gravity(&mut self, dt: f64) {
        let g = self.group;
        for e in &g.forces {
            if let ForceEntry::Mass {
                mass,
                state,
                gravity,
            } = *e
            {
                if g.is_independent(state)
                    && self.masses[mass]
                        .as_ref()
                        .is_some_and(|m| m.separate_gravity())
                {
                    let st = self.states[g.states[state]].as_mut().unwrap();
                    for p in st.vec_mut(VecId::VELOCITY).chunks_exact_mut(3) {
                        p[0] += gravity.x * dt;
                        p[1] += gravity.y * dt;
                        p[2] += gravity.z * dt;
                    }
                }
            }
        }
    }

    fn v_eq(&mut self, a: VecId, b: VecId) {
        if a == b {
            return;
        }
        self.for_each_state(|s| {
            let (src, dst) = s.pair_mut(b, a);
            dst.copy_from_slice(src);
        });
    }

    fn v_teq(&mut self, a: VecId, f: f64) {
        self.for_each_state(|s| s.vec_mut(a).iter_mut().for_each(|x| *x *= f));
    }

    fn v_threshold(&mut self, a: VecId, t: f64) {
        let t2 = t * t;
        self.for_each_state(|s| {
            let point = s.dof.deriv_size();
            for d in s.vec_mut(a).chunks_exact_mut(point) {
                if d.iter().map(|x| x * x).sum::<f64>() < t2 {
                    d.fill(0.0);
                }
            }
        });
    }

    fn v_peq(&mut self, a: VecId, b: VecId, f: f64) {
        self.for_each_state(|s| {
            let dof = s.dof;
            let (bb, aa) = s.pair_mut(b, a);
            if a.is_coord() && !b.is_coord() && dof.is_rigid() {
                // a coordinate moved by a derivative: the DOF type's own update (rotations)
                dof.coord_add_deriv(aa, bb, f);
                return;
            }
            for (x, y) in aa.iter_mut().zip(bb) {
                *x += *y * f;
            }
        });
    }

    fn v_op(&mut self, a: VecId, b: VecId, c: VecId, f: f64) {
        // a = b + c·f without copies, whatever aliases whatever (same operations, same result)
        self.for_each_state(|s| {
            if a.is_coord() && !c.is_coord() && s.dof.is_rigid() {
                // coordinate = coordinate + derivative·f: the DOF type's own update
                let dof = s.dof;
                if a != b {
                    let (bv, av) = s.pair_mut(b, a);
                    av.copy_from_slice(bv);
                }
                let (cv, av) = s.pair_mut(c, a);
                dof.coord_add_deriv(av, cv, f);
                return;
            }
            if a == b && a == c {
                s.vec_mut(a).iter_mut().for_each(|x| *x = *x + *x * f);
            } else if a == b {
                let (cv, av) = s.pair_mut(c, a);
                av.iter_mut().zip(cv).for_each(|(x, y)| *x += *y * f);
            } else if a == c {
                let (bv, av) = s.pair_mut(b, a);
                av.iter_mut().zip(bv).for_each(|(x, y)| *x = *y + *x * f);
            } else if b == c {
                let (bv, av) = s.pair_mut(b, a);
                av.iter_mut().zip(bv).for_each(|(x, y)| *x = *y + *y * f);
            } else {
                let (bv, av) = s.pair_mut(b, a);
                av.copy_from_slice(bv);
                let (cv, av) = s.pair_mut(c, a);
                av.iter_mut().zip(cv).for_each(|(x, y)| *x += *y * f);
            }
        });
    }

    fn dot(&mut self, a: VecId, b: VecId) -> f64 {
        let mut sum = 0.0;
        self.for_each_state(|s| {
            // per point: derivative or coordinate vectors (a Rigid3 coordinate has 7 numbers)
            let point = s.vec(a).len().checked_div(s.size()).unwrap_or(1);
            sum += canape_types::dot_points(s.vec(a), s.vec(b), point);
        });
        sum
    }

    fn solve_linear(&mut self, m: f64, b: f64, k: f64, x: VecId, rhs: VecId) -> SolveStats {
        self.work.last_factors = Some((m, b, k));
        let n = self.group.size;
        let mut bv = std::mem::take(&mut self.work.rhs);
        let mut xv = std::mem::take(&mut self.work.sol);
        bv.resize(n, 0.0);
        xv.resize(n, 0.0);
        self.gather(rhs, &mut bv);
        self.gather(x, &mut xv);
        let Some(solver) = self.linear.take() else {
            return SolveStats::default();
        };
        let t0 = Instant::now();
        let mut fixed = std::mem::take(&mut self.work.fixed);
        GroupSystem::fixed_mask(self, &mut fixed);
        let (stats, fixed) = {
            let mut sys = GroupSystem {
                ops: self,
                m,
                b,
                k,
                fixed,
            };
            let stats = solver.solve(&mut sys, &bv, &mut xv);
            (stats, sys.fixed)
        };
        self.work.fixed = fixed;
        self.clock.solve += t0.elapsed();
        self.linear = Some(solver);
        self.scatter(x, &xv);
        self.work.rhs = bv;
        self.work.sol = xv;
        self.last_stats = stats;
        stats
    }
}

impl GroupOps<'_> {
    /// Solve the system of the group's last linear solve again for another right-hand side, in
    /// the group's global numbering (a Lagrangian constraint correction's A⁻¹ Jᵀ λ: SOFA's
    /// LinearSolverConstraintCorrection reuses the free motion's factorization). `None` when
    /// the group has no linear solver or has not solved yet.
    pub fn solve_again(&mut self, rhs: &[f64], x: &mut [f64]) -> Option<SolveStats> {
        let (m, b, k) = self.work.last_factors?;
        let solver = self.linear.take()?;
        let mut fixed = std::mem::take(&mut self.work.fixed);
        GroupSystem::fixed_mask(self, &mut fixed);
        x.fill(0.0);
        let (stats, fixed) = {
            let mut sys = GroupSystem {
                ops: self,
                m,
                b,
                k,
                fixed,
            };
            let stats = solver.solve_again(&mut sys, rhs, x);
            (stats, sys.fixed)
        };
        self.work.fixed = fixed;
        self.linear = Some(solver);
        Some(stats)
    }

    /// Bᵀ A⁻¹ B (m × m, into `w`) for `m` right-hand sides B stored row by row with the last
    /// solve's system, when the group's solver has a way cheaper than `solve_again_many`
    /// ([`LinearSolver::compliance_again`]); None otherwise (or when nothing solved yet).
    pub fn compliance_again(&mut self, rhs: &[f64], m: usize, w: &mut [f64]) -> Option<SolveStats> {
        self.work.last_factors?;
        self.linear.as_mut()?.compliance_again(rhs, m, w)
    }

    /// [`GroupOps::solve_again`] for `m` right-hand sides stored row by row (row i: the m
    /// values of the group's unknown i).
    pub fn solve_again_many(&mut self, rhs: &[f64], x: &mut [f64], m: usize) -> Option<SolveStats> {
        let (mf, b, k) = self.work.last_factors?;
        let solver = self.linear.take()?;
        let mut fixed = std::mem::take(&mut self.work.fixed);
        GroupSystem::fixed_mask(self, &mut fixed);
        x.fill(0.0);
        let (stats, fixed) = {
            let mut sys = GroupSystem {
                ops: self,
                m: mf,
                b,
                k,
                fixed,
            };
            let stats = solver.solve_again_many(&mut sys, rhs, x, m);
            (stats, sys.fixed)
        };
        self.work.fixed = fixed;
        self.linear = Some(solver);
        Some(stats)
    }
}
