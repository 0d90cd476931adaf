//! Solver groups and the mechanical operations over them.
//!
//! A node holding an ODE solver takes charge of its whole subtree (SOFA's SolveVisitor prunes
//! there). The group lists the independent states of the subtree, their scalar offsets in the
//! group's global vectors, and the masses, force fields and projective constraints acting on each
//! state, in document order. [`GroupOps`] implements [`MechanicalOps`] over it.

use canape_core::component::*;
use canape_core::matrix::{BlockFilter, BlockPart, Csr, MatrixSink, PatternCache};
use canape_core::scene::{ComponentId, NodeId, Scene, Slot};
use canape_core::state::{MechanicalObject, VecId};
use canape_types::Vec3;
use std::time::{Duration, Instant};

/// A force contribution, in document order within the group.
#[derive(Clone, Copy, Debug)]
pub enum ForceEntry {
    Mass {
        mass: usize,
        state: usize,
        gravity: Vec3,
    },
    Field {
        ff: usize,
        state: usize,
    },
}

/// The states and components one ODE solver integrates.
#[derive(Clone, Debug)]
pub struct Group {
    pub node: NodeId,
    pub ode: usize,
    pub linear: Option<usize>,
    /// Indices into `Scene::states`, with the scalar offset and length of their derivative vectors.
    pub states: Vec<usize>,
    pub offsets: Vec<usize>,
    pub size: usize,
    pub forces: Vec<ForceEntry>,
    pub projective: Vec<(usize, usize)>,
}

fn state_index(scene: &Scene, id: ComponentId) -> Option<usize> {
    match scene.info(id).slot {
        Slot::State(i) => Some(i),
        _ => None,
    }
}

/// Build the solver groups of a scene, top-down in document order.
pub fn build_groups(scene: &Scene) -> Vec<Group> {
    let mut groups = Vec::new();
    fn rec(scene: &Scene, n: NodeId, groups: &mut Vec<Group>) {
        let node = scene.node(n);
        if !node.activated {
            return;
        }
        let odes: Vec<ComponentId> = scene.node_components(n, Role::OdeSolver).collect();
        if let Some(&ode_id) = odes.first() {
            let Slot::Ode(ode) = scene.info(ode_id).slot else {
                unreachable!()
            };
            let linear = scene
                .lineage(n)
                .into_iter()
                .find_map(|m| scene.node_components(m, Role::LinearSolver).next())
                .and_then(|l| match scene.info(l).slot {
                    Slot::Linear(i) => Some(i),
                    _ => None,
                });
            let mut g = Group {
                node: n,
                ode,
                linear,
                states: Vec::new(),
                offsets: Vec::new(),
                size: 0,
                forces: Vec::new(),
                projective: Vec::new(),
            };
            collect(scene, n, &mut g);
            groups.push(g);
            return;
        }
        for c in &node.children {
            rec(scene, *c, groups);
        }
    }
    fn is_mapped(scene: &Scene, n: NodeId) -> bool {
        scene.node_components(n, Role::Mapping).next().is_some()
    }
    fn collect(scene: &Scene, n: NodeId, g: &mut Group) {
        let node = scene.node(n);
        if !node.activated || is_mapped(scene, n) {
            // mapped subtrees are driven through their mapping, not integrated
            return;
        }
        // the state each component acts on: the node's own, or the nearest ancestor's
        let st = scene.context_state(n).and_then(|s| state_index(scene, s));
        if let Some(s) = scene
            .node_components(n, Role::State)
            .next()
            .and_then(|s| state_index(scene, s))
        {
            if !g.states.contains(&s) {
                let len = scene.states[s]
                    .as_ref()
                    .map(|m| m.size() * m.dof.deriv_size())
                    .unwrap_or(0);
                g.offsets.push(g.size);
                g.states.push(s);
                g.size += len;
            }
        }
        let pos_of = |g: &Group, s: usize| g.states.iter().position(|x| *x == s);
        for &c in &node.components {
            let info = scene.info(c);
            let Some(s) = st else { continue };
            let Some(sp) = pos_of(g, s) else { continue };
            match info.slot {
                Slot::Mass(i) => g.forces.push(ForceEntry::Mass {
                    mass: i,
                    state: sp,
                    gravity: node.gravity,
                }),
                Slot::ForceField(i) => g.forces.push(ForceEntry::Field { ff: i, state: sp }),
                Slot::Projective(i) => g.projective.push((i, sp)),
                _ => {}
            }
        }
        for c in &node.children {
            collect(scene, *c, g);
        }
    }
    if !scene.nodes.is_empty() {
        rec(scene, scene.root(), &mut groups);
    }
    groups
}

/// Time spent per phase, accumulated over steps.
#[derive(Clone, Debug, Default)]
pub struct PhaseClock {
    pub force: Duration,
    pub assembly: Duration,
    pub solve: Duration,
    pub projection: Duration,
}

/// What a group keeps from one step to the next so that a step allocates nothing once warm:
/// the assembly pattern, the solve's right-hand side and solution buffers, the fixed-DOF mask
/// and the free list of temporary vector ids.
#[derive(Clone, Debug, Default)]
pub struct GroupWork {
    pub cache: PatternCache,
    /// The pattern of the block-diagonal assemblies (block-Jacobi and Jacobi preconditioners).
    pub diag_cache: PatternCache,
    /// The pattern of the upper-block-triangle assemblies (symmetric factorizations).
    pub upper_cache: PatternCache,
    rhs: Vec<f64>,
    sol: Vec<f64>,
    fixed: Vec<bool>,
    free_ids: Vec<VecId>,
}

/// Mechanical operations over one group (borrowing the scene's arenas).
pub struct GroupOps<'a> {
    pub group: &'a Group,
    pub states: &'a mut [Option<MechanicalObject>],
    pub masses: &'a [Option<Box<dyn Mass>>],
    pub force_fields: &'a mut [Option<Box<dyn ForceField>>],
    pub projective: &'a [Option<Box<dyn ProjectiveConstraint>>],
    pub linear: Option<&'a mut Box<dyn LinearSolver>>,
    pub clock: &'a mut PhaseClock,
    pub work: &'a mut GroupWork,
    pub last_stats: SolveStats,
    next_id: u32,
}

impl<'a> GroupOps<'a> {
    pub fn new(
        group: &'a Group,
        scene_states: &'a mut [Option<MechanicalObject>],
        masses: &'a [Option<Box<dyn Mass>>],
        force_fields: &'a mut [Option<Box<dyn ForceField>>],
        projective: &'a [Option<Box<dyn ProjectiveConstraint>>],
        linear: Option<&'a mut Box<dyn LinearSolver>>,
        clock: &'a mut PhaseClock,
        work: &'a mut GroupWork,
    ) -> Self {
        // temporary ids restart at FIRST_TEMP every step: the same vectors are reused
        work.free_ids.clear();
        GroupOps {
            group,
            states: scene_states,
            masses,
            force_fields,
            projective,
            linear,
            clock,
            work,
            last_stats: SolveStats::default(),
            next_id: VecId::FIRST_TEMP,
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

/// Matrix-free / assembled view of A = mM + bB + kK over a group.
struct GroupSystem<'b, 'a> {
    ops: &'b mut GroupOps<'a>,
    m: f64,
    b: f64,
    k: f64,
    fixed: Vec<bool>,
}

impl GroupSystem<'_, '_> {
    /// The DOFs projective constraints fix, computed once per group work (constraints change
    /// only through Data edits, which start a new work).
    fn fixed_mask(ops: &mut GroupOps<'_>, mask: &mut Vec<bool>) {
        if mask.len() == ops.group.size {
            return;
        }
        mask.clear();
        mask.resize(ops.group.size, false);
        for &(p, sp) in &ops.group.projective {
            let off = ops.group.offsets[sp];
            let ds = ops.states[ops.group.states[sp]]
                .as_ref()
                .unwrap()
                .dof
                .deriv_size();
            if let Some(c) = ops.projective[p].as_ref() {
                for d in c.fixed_scalar_dofs(ds) {
                    if off + d < mask.len() {
                        mask[off + d] = true;
                    }
                }
            }
        }
    }
}

impl LinearSystem for GroupSystem<'_, '_> {
    fn size(&self) -> usize {
        self.ops.group.size
    }

    fn apply(&mut self, x: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        let g = self.ops.group;
        for e in &g.forces {
            match *e {
                ForceEntry::Field { ff, state } => {
                    let off = g.offsets[state];
                    let n = self.ops.states[g.states[state]]
                        .as_ref()
                        .unwrap()
                        .deriv_len();
                    let f = self.ops.force_fields[ff].as_mut().unwrap();
                    let kf = self.k + self.b * f.rayleigh_stiffness();
                    if kf != 0.0 || self.b != 0.0 {
                        f.add_dforce(&x[off..off + n], &mut y[off..off + n], kf);
                    }
                    if f.has_mass() && self.m != 0.0 {
                        f.add_mdx(&mut y[off..off + n], &x[off..off + n], self.m);
                    }
                }
                ForceEntry::Mass { mass, state, .. } => {
                    let off = g.offsets[state];
                    let n = self.ops.states[g.states[state]]
                        .as_ref()
                        .unwrap()
                        .deriv_len();
                    let m = self.ops.masses[mass].as_ref().unwrap();
                    let mf = self.m - self.b * m.rayleigh_mass();
                    if mf != 0.0 {
                        m.add_mdx(&mut y[off..off + n], &x[off..off + n], mf);
                    }
                }
            }
        }
        for &(p, sp) in &g.projective {
            let off = g.offsets[sp];
            let n = self.ops.states[g.states[sp]].as_ref().unwrap().deriv_len();
            if let Some(c) = self.ops.projective[p].as_ref() {
                c.project_response(&mut y[off..off + n]);
            }
        }
    }

    fn assemble(&mut self) -> Csr {
        self.assemble_part(None)
    }

    fn assemble_block_diagonal(&mut self) -> Csr {
        self.assemble_part(Some(BlockPart::Diagonal))
    }

    fn assemble_upper(&mut self) -> Csr {
        self.assemble_part(Some(BlockPart::Upper))
    }
}

impl GroupSystem<'_, '_> {
    /// Assemble A (or only the part of its 3×3 blocks that `part` names, each part with a pattern
    /// cache of its own) with Dirichlet rows and columns for the projected DOFs.
    fn assemble_part(&mut self, part: Option<BlockPart>) -> Csr {
        let t0 = Instant::now();
        let g = self.ops.group;
        let (k, b, m) = (self.k, self.b, self.m);
        let force_fields = &*self.ops.force_fields;
        let masses = self.ops.masses;
        let fill = |t: &mut dyn MatrixSink| {
            for e in &g.forces {
                match *e {
                    ForceEntry::Field { ff, state } => {
                        let f = force_fields[ff].as_ref().unwrap();
                        let kf = k + b * f.rayleigh_stiffness();
                        if kf != 0.0 {
                            f.add_k_to_matrix(t, kf, g.offsets[state]);
                        }
                        if f.has_mass() && m != 0.0 {
                            f.add_m_to_matrix(t, m, g.offsets[state]);
                        }
                    }
                    ForceEntry::Mass { mass, state, .. } => {
                        let ms = masses[mass].as_ref().unwrap();
                        let mf = m - b * ms.rayleigh_mass();
                        if mf != 0.0 {
                            ms.add_m_to_matrix(t, mf, g.offsets[state]);
                        }
                    }
                }
            }
        };
        let work = &mut self.ops.work;
        let cache = match part {
            None => &mut work.cache,
            Some(BlockPart::Diagonal) => &mut work.diag_cache,
            Some(BlockPart::Upper) => &mut work.upper_cache,
        };
        let mut a = cache.assemble(g.size, |t| match part {
            None => fill(t),
            Some(part) => fill(&mut BlockFilter { part, sink: t }),
        });
        // Dirichlet rows/columns for projected DOFs: the entries to overwrite are found once per
        // pattern and fixed-DOF set
        let cache = &mut cache.dirichlet;
        let same = cache.as_ref().is_some_and(|(cols, mask, _)| {
            std::sync::Arc::ptr_eq(cols, &a.cols) && *mask == self.fixed
        });
        if !same {
            let mut list = Vec::new();
            for r in 0..a.n {
                for kk in a.row_ptr[r]..a.row_ptr[r + 1] {
                    let c = a.cols[kk] as usize;
                    if self.fixed[r] || self.fixed[c] {
                        list.push((kk as u32, r == c));
                    }
                }
            }
            *cache = Some((a.cols.clone(), self.fixed.clone(), list));
        }
        for &(kk, diag) in &cache.as_ref().expect("dirichlet list").2 {
            a.vals[kk as usize] = if diag { 1.0 } else { 0.0 };
        }
        self.ops.clock.assembly += t0.elapsed();
        a
    }
}

impl MechanicalOps for GroupOps<'_> {
    fn alloc(&mut self) -> VecId {
        let id = self.work.free_ids.pop().unwrap_or_else(|| {
            let id = VecId(self.next_id);
            self.next_id += 1;
            id
        });
        self.for_each_state(|s| {
            s.ensure(id);
            s.vec_mut(id).iter_mut().for_each(|v| *v = 0.0);
        });
        id
    }

    fn persistent(&mut self, key: u32) -> VecId {
        let id = VecId(VecId::FIRST_PERSISTENT + key);
        self.for_each_state(|s| s.ensure(id));
        id
    }

    fn free(&mut self, v: VecId) {
        if v.0 >= VecId::FIRST_TEMP && v.0 < VecId::FIRST_PERSISTENT {
            self.work.free_ids.push(v);
        }
    }

    fn compute_force(&mut self, f: VecId) {
        let t0 = Instant::now();
        self.for_each_state(|s| s.vec_mut(f).iter_mut().for_each(|v| *v = 0.0));
        let g = self.group;
        for e in &g.forces {
            match *e {
                ForceEntry::Mass {
                    mass,
                    state,
                    gravity,
                } => {
                    let st = self.states[g.states[state]].as_mut().unwrap();
                    let m = self.masses[mass].as_ref().unwrap();
                    m.add_gravity_force(st.vec_mut(f), &gravity);
                }
                ForceEntry::Field { ff, state } => {
                    let st = self.states[g.states[state]].as_mut().unwrap();
                    let mut out = st.take(f);
                    let x = st.vec(VecId::POSITION);
                    let v = st.vec(VecId::VELOCITY);
                    self.force_fields[ff]
                        .as_mut()
                        .unwrap()
                        .add_force(x, v, &mut out);
                    st.put(f, out);
                }
            }
        }
        self.clock.force += t0.elapsed();
    }

    fn add_mbk_v(&mut self, out: VecId, v: VecId, m: f64, k: f64) {
        let t0 = Instant::now();
        let g = self.group;
        for e in &g.forces {
            match *e {
                ForceEntry::Mass { mass, state, .. } => {
                    if m != 0.0 {
                        let st = self.states[g.states[state]].as_mut().unwrap();
                        let (vv, o) = st.pair_mut(v, out);
                        self.masses[mass].as_ref().unwrap().add_mdx(o, vv, m);
                    }
                }
                ForceEntry::Field { ff, state } => {
                    let st = self.states[g.states[state]].as_mut().unwrap();
                    let (vv, o) = st.pair_mut(v, out);
                    let f = self.force_fields[ff].as_mut().unwrap();
                    if k != 0.0 {
                        f.add_dforce(vv, o, k);
                    }
                    if m != 0.0 && f.has_mass() {
                        f.add_mdx(o, vv, m);
                    }
                }
            }
        }
        self.clock.force += t0.elapsed();
    }

    fn project_response(&mut self, v: VecId) {
        let t0 = Instant::now();
        let g = self.group;
        for &(p, sp) in &g.projective {
            let st = self.states[g.states[sp]].as_mut().unwrap();
            if let Some(c) = self.projective[p].as_ref() {
                c.project_response(st.vec_mut(v));
            }
        }
        self.clock.projection += t0.elapsed();
    }

    fn accel_from_force(&mut self, a: VecId, f: VecId) {
        let g = self.group;
        let all_diagonal = g.forces.iter().all(|e| match *e {
            ForceEntry::Mass { mass, .. } => {
                self.masses[mass].as_ref().is_some_and(|m| m.is_diagonal())
            }
            ForceEntry::Field { ff, .. } => {
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
                if self.masses[mass]
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

    fn v_peq(&mut self, a: VecId, b: VecId, f: f64) {
        self.for_each_state(|s| {
            let (bb, aa) = s.pair_mut(b, a);
            for (x, y) in aa.iter_mut().zip(bb) {
                *x += *y * f;
            }
        });
    }

    fn v_op(&mut self, a: VecId, b: VecId, c: VecId, f: f64) {
        // a = b + c·f without copies, whatever aliases whatever (same operations, same result)
        self.for_each_state(|s| {
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
            sum += canape_types::dot(s.vec(a), s.vec(b));
        });
        sum
    }

    fn solve_linear(&mut self, m: f64, b: f64, k: f64, x: VecId, rhs: VecId) -> SolveStats {
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
