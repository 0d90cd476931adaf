//! Solver groups and the mechanical operations over them.
//!
//! A node holding an ODE solver takes charge of its whole subtree (SOFA's SolveVisitor prunes
//! there). The group lists the independent states of the subtree, their scalar offsets in the
//! group's global vectors, and the masses, force fields and projective constraints acting on each
//! state, in document order. [`GroupOps`] implements [`MechanicalOps`] over it.

use crate::mapped::{self, GroupMapping, StateMap, TripletSink};
use canape_core::component::*;
use canape_core::diag::{Diagnostic, Diagnostics};
use canape_core::matrix::{BlockFilter, BlockPart, Csr, MatrixSink, PatternCache};
use canape_core::scene::{ComponentId, NodeId, Scene, Slot};
use canape_core::state::{MechanicalObject, VecId};
use canape_types::Vec3;
use std::time::{Duration, Instant};

/// A force contribution, in document order within the group.
#[derive(Clone, Copy, Debug, PartialEq)]
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
    /// An interaction force field over two states (its vectors: both states' concatenated).
    Pair {
        ff: usize,
        sides: [PairSide; 2],
    },
}

/// One state of an interaction force field: its scene state index and, when the group
/// integrates it and it receives forces, its group state index (`None`: read only — a passive
/// side or a state outside the group; its forces are dropped and its dx is 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairSide {
    pub scene: usize,
    pub k: Option<usize>,
}

/// Scratch vectors of interaction force fields (kept: nothing is allocated once warm).
#[derive(Clone, Debug, Default)]
struct PairBuf {
    a: Vec<f64>,
    b: Vec<f64>,
    out: Vec<f64>,
}

/// Concatenate vector `id` of both sides into `out` (a read-only side gives zeros when
/// `zero_passive`: a dx that does not move it).
fn pair_gather(
    states: &[Option<MechanicalObject>],
    sides: &[PairSide; 2],
    id: VecId,
    zero_passive: bool,
    out: &mut Vec<f64>,
) {
    out.clear();
    for s in sides {
        let st = states[s.scene].as_ref().expect("interaction state");
        if zero_passive && s.k.is_none() {
            out.resize(out.len() + st.deriv_len(), 0.0);
        } else {
            out.extend_from_slice(st.vec(id));
        }
    }
}

/// `id` += the part of `src` (concatenated derivatives) that belongs to each receiving side.
fn pair_scatter(
    states: &mut [Option<MechanicalObject>],
    sides: &[PairSide; 2],
    id: VecId,
    src: &[f64],
) {
    let mut start = 0;
    for s in sides {
        let st = states[s.scene].as_mut().expect("interaction state");
        let n = st.deriv_len();
        if s.k.is_some() {
            for (o, v) in st.vec_mut(id).iter_mut().zip(&src[start..start + n]) {
                *o += v;
            }
        }
        start += n;
    }
}

/// Sizes of both sides' derivative vectors.
fn pair_lens(states: &[Option<MechanicalObject>], sides: &[PairSide; 2]) -> [usize; 2] {
    sides.map(|s| states[s.scene].as_ref().map_or(0, |m| m.deriv_len()))
}

/// An interaction force field's matrix, in its concatenated numbering, into the group's
/// global numbering (independent states at their offsets; read-only sides dropped).
struct PairSink<'s> {
    inner: &'s mut dyn MatrixSink,
    split: usize,
    offsets: [Option<usize>; 2],
}

impl PairSink<'_> {
    #[inline]
    fn map(&self, i: usize) -> Option<usize> {
        if i < self.split {
            self.offsets[0].map(|o| o + i)
        } else {
            self.offsets[1].map(|o| o + i - self.split)
        }
    }
}

impl MatrixSink for PairSink<'_> {
    fn add(&mut self, row: usize, col: usize, v: f64) {
        if let (Some(r), Some(c)) = (self.map(row), self.map(col)) {
            self.inner.add(r, c, v);
        }
    }
    fn wants(&self, row: usize, col: usize) -> bool {
        match (self.map(row), self.map(col)) {
            (Some(r), Some(c)) => self.inner.wants(r, c),
            _ => false,
        }
    }
}

/// The states and components one ODE solver integrates.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub node: NodeId,
    pub ode: usize,
    pub linear: Option<usize>,
    /// The independent states (indices into `Scene::states`), with the scalar offset of their
    /// derivative vectors in the group's global vectors.
    pub states: Vec<usize>,
    pub offsets: Vec<usize>,
    pub size: usize,
    /// The mapped states (indices into `Scene::states`), top-down: each is the output of a
    /// mechanical mapping in `mappings` whose inputs belong to the group.
    pub mapped: Vec<usize>,
    /// The group's mechanical mappings, top-down (document order).
    pub mappings: Vec<GroupMapping>,
    /// Force contributions; their `state` indexes the group's state list: the independent
    /// states, then the mapped ones (`state_of`).
    pub forces: Vec<ForceEntry>,
    /// (projective constraint slot, group state index).
    pub projective: Vec<(usize, usize)>,
}

impl Group {
    /// The scene state index of group state `k` (independent states first, then mapped).
    #[inline]
    pub fn state_of(&self, k: usize) -> usize {
        if k < self.states.len() {
            self.states[k]
        } else {
            self.mapped[k - self.states.len()]
        }
    }
    /// Whether group state `k` is independent (integrated, part of the global vectors).
    #[inline]
    pub fn is_independent(&self, k: usize) -> bool {
        k < self.states.len()
    }
    /// Number of states, independent and mapped.
    pub fn nb_states(&self) -> usize {
        self.states.len() + self.mapped.len()
    }
    /// Whether the group uses the component in `slot` (to tell which groups a change to the
    /// scene touches).
    pub fn uses(&self, slot: Slot) -> bool {
        match slot {
            Slot::State(i) => self.states.contains(&i) || self.mapped.contains(&i),
            Slot::Ode(i) => self.ode == i,
            Slot::Linear(i) => self.linear == Some(i),
            Slot::Mapping(i) => self.mappings.iter().any(|m| m.mapping == i),
            Slot::Projective(i) => self.projective.iter().any(|p| p.0 == i),
            Slot::Mass(i) => self
                .forces
                .iter()
                .any(|f| matches!(f, ForceEntry::Mass { mass, .. } if *mass == i)),
            Slot::ForceField(i) => self.forces.iter().any(|f| match f {
                ForceEntry::Field { ff, .. } | ForceEntry::Pair { ff, .. } => *ff == i,
                _ => false,
            }),
            _ => false,
        }
    }
}

fn state_index(scene: &Scene, id: ComponentId) -> Option<usize> {
    match scene.info(id).slot {
        Slot::State(i) => Some(i),
        _ => None,
    }
}

/// Build the solver groups of a scene, top-down in document order.
pub fn build_groups(scene: &Scene) -> Vec<Group> {
    build_groups_checked(scene, &mut Diagnostics::default())
}

/// [`build_groups`], reporting mappings that cannot join their group (an input outside the
/// group, an output that is already one of the group's states: a cycle).
pub fn build_groups_checked(scene: &Scene, diags: &mut Diagnostics) -> Vec<Group> {
    let mut groups = Vec::new();
    fn rec(scene: &Scene, n: NodeId, groups: &mut Vec<Group>, diags: &mut Diagnostics) {
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
                mapped: Vec::new(),
                mappings: Vec::new(),
                forces: Vec::new(),
                projective: Vec::new(),
            };
            let mut pending = Vec::new();
            collect(scene, n, &mut g, &mut pending, diags);
            // group state indices: independent states first, then mapped ones
            let nind = g.states.len();
            let find = |g: &Group, s: usize| -> Option<usize> {
                g.states
                    .iter()
                    .position(|x| *x == s)
                    .or_else(|| g.mapped.iter().position(|x| *x == s).map(|k| nind + k))
            };
            let pos = |g: &Group, s: usize| -> usize { find(g, s).expect("state of the group") };
            for (e, s) in pending {
                if let Pending::Pair(i, it, c) = e {
                    let (Some(a), Some(b)) =
                        (state_index(scene, it.first), state_index(scene, it.second))
                    else {
                        continue;
                    };
                    let ka = find(&g, a);
                    let kb = if it.second_passive { None } else { find(&g, b) };
                    let outside = |k: Option<usize>, sid: ComponentId| {
                        k.is_none().then(|| scene.component_label(sid))
                    };
                    let missing: Vec<String> = [
                        outside(ka, it.first),
                        if it.second_passive {
                            None
                        } else {
                            outside(kb, it.second)
                        },
                    ]
                    .into_iter()
                    .flatten()
                    .collect();
                    if ka.is_none() && kb.is_none() {
                        diags.push(
                            Diagnostic::warning("none of this interaction's states is simulated by the solver above it: it has no effect")
                                .at(scene.info(c).loc.clone())
                                .on(scene.component_label(c)),
                        );
                        continue;
                    }
                    if !missing.is_empty() {
                        diags.push(
                            Diagnostic::warning(format!(
                                "{} is not simulated by the solver above this interaction: it is held where it is (its forces are dropped)",
                                missing.join(" and ")
                            ))
                            .at(scene.info(c).loc.clone())
                            .on(scene.component_label(c)),
                        );
                    }
                    g.forces.push(ForceEntry::Pair {
                        ff: i,
                        sides: [PairSide { scene: a, k: ka }, PairSide { scene: b, k: kb }],
                    });
                    continue;
                }
                let k = pos(&g, s);
                match e {
                    Pending::Mass(i, gravity) => g.forces.push(ForceEntry::Mass {
                        mass: i,
                        state: k,
                        gravity,
                    }),
                    Pending::Field(i) => g.forces.push(ForceEntry::Field { ff: i, state: k }),
                    Pending::Projective(i) => g.projective.push((i, k)),
                    Pending::Pair(..) => unreachable!(),
                }
            }
            for gm in 0..g.mappings.len() {
                let ins: Vec<usize> = g.mappings[gm].inputs.iter().map(|&s| pos(&g, s)).collect();
                let out = pos(&g, g.mappings[gm].output);
                g.mappings[gm].inputs_k = ins;
                g.mappings[gm].output_k = out;
            }
            groups.push(g);
            return;
        }
        for c in &node.children {
            rec(scene, *c, groups, diags);
        }
    }
    enum Pending {
        Mass(usize, Vec3),
        Field(usize),
        Projective(usize),
        Pair(usize, Interaction, ComponentId),
    }
    /// The mechanical mapping whose output is state `s` (of node `n`), if any.
    fn mapping_to(scene: &Scene, n: NodeId, s: ComponentId) -> Option<(usize, ComponentId)> {
        scene.node_components(n, Role::Mapping).find_map(|m| {
            let Slot::Mapping(i) = scene.info(m).slot else {
                return None;
            };
            let map = scene.mappings[i].as_ref()?;
            (map.output() == Some(s) && map.maps_forces()).then_some((i, m))
        })
    }
    fn collect(
        scene: &Scene,
        n: NodeId,
        g: &mut Group,
        pending: &mut Vec<(Pending, usize)>,
        diags: &mut Diagnostics,
    ) {
        let node = scene.node(n);
        if !node.activated {
            return;
        }
        let own = scene.node_components(n, Role::State).next();
        let has_mapping =
            node.missing_mapping || scene.node_components(n, Role::Mapping).next().is_some();
        if let Some(sid) = own {
            let s = state_index(scene, sid).expect("state slot");
            let known = |g: &Group, s: usize| g.states.contains(&s) || g.mapped.contains(&s);
            match mapping_to(scene, n, sid) {
                Some((mi, mid)) => {
                    let map = scene.mappings[mi].as_ref().unwrap();
                    let inputs: Vec<usize> = map
                        .inputs()
                        .iter()
                        .filter_map(|c| state_index(scene, *c))
                        .collect();
                    let complete = !inputs.is_empty()
                        && inputs.len() == map.inputs().len()
                        && inputs.iter().all(|i| known(g, *i));
                    if known(g, s) || inputs.contains(&s) {
                        diags.push(
                            Diagnostic::error("this mapping's output is already one of its solver's states (a cycle in the mapping graph): it is not simulated")
                                .at(scene.info(mid).loc.clone())
                                .on(scene.component_label(mid)),
                        );
                        return;
                    }
                    if !complete {
                        diags.push(
                            Diagnostic::warning("an input of this mapping is not simulated by the solver above it: its output only follows the input (no forces are mapped up)")
                                .at(scene.info(mid).loc.clone())
                                .on(scene.component_label(mid)),
                        );
                        return;
                    }
                    g.mapped.push(s);
                    g.mappings.push(GroupMapping {
                        mapping: mi,
                        inputs,
                        output: s,
                        inputs_k: Vec::new(),
                        output_k: 0,
                    });
                }
                None if has_mapping => {
                    // a mapping to something else (a visual model) beside a state: the state
                    // follows, it is not integrated
                    return;
                }
                None => {
                    if !known(g, s) {
                        let len = scene.states[s]
                            .as_ref()
                            .map(|m| m.size() * m.dof.deriv_size())
                            .unwrap_or(0);
                        g.offsets.push(g.size);
                        g.states.push(s);
                        g.size += len;
                    }
                }
            }
        } else if has_mapping {
            // visual models and other non-mechanical outputs: nothing to integrate below
            return;
        }
        // the state each component acts on: the node's own, or the nearest ancestor's
        let st = scene.context_state(n).and_then(|s| state_index(scene, s));
        for &c in &node.components {
            let info = scene.info(c);
            if let Slot::ForceField(i) = info.slot {
                let it = scene.force_fields[i].as_ref().and_then(|f| f.interaction());
                if let Some(it) = it {
                    pending.push((Pending::Pair(i, it, c), usize::MAX));
                    continue;
                }
            }
            let Some(s) = st else { continue };
            if !(g.states.contains(&s) || g.mapped.contains(&s)) {
                continue;
            }
            match info.slot {
                Slot::Mass(i) => pending.push((Pending::Mass(i, node.gravity), s)),
                Slot::ForceField(i) => pending.push((Pending::Field(i), s)),
                Slot::Projective(i) => pending.push((Pending::Projective(i), s)),
                _ => {}
            }
        }
        for c in &node.children {
            collect(scene, *c, g, pending, diags);
        }
    }
    if !scene.nodes.is_empty() {
        rec(scene, scene.root(), &mut groups, diags);
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
    free_coord_ids: Vec<VecId>,
    /// Input buffers of a mapping while forces go up (kept to allocate nothing per step).
    scratch: Vec<Vec<f64>>,
    /// The force vector of the last `compute_force`: the output forces the mappings' geometric
    /// stiffness reads.
    force_id: Option<VecId>,
    /// Interaction force fields' concatenated vectors.
    pair: PairBuf,
}

impl GroupWork {
    /// A projective constraint changed (a Data edit): the fixed-DOF mask is recomputed at the
    /// next assembly; the patterns stay.
    pub fn constraints_changed(&mut self) {
        self.fixed.clear();
    }
}

/// Mechanical operations over one group (borrowing the scene's arenas).
pub struct GroupOps<'a> {
    pub group: &'a Group,
    pub states: &'a mut [Option<MechanicalObject>],
    pub masses: &'a [Option<Box<dyn Mass>>],
    pub force_fields: &'a mut [Option<Box<dyn ForceField>>],
    pub projective: &'a [Option<Box<dyn ProjectiveConstraint>>],
    pub mappings: &'a mut [Option<Box<dyn Mapping>>],
    pub linear: Option<&'a mut Box<dyn LinearSolver>>,
    pub clock: &'a mut PhaseClock,
    pub work: &'a mut GroupWork,
    pub last_stats: SolveStats,
    next_id: u32,
    next_coord_id: u32,
}

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
    fn apply_mapped(&mut self, x: &[f64], y: &mut [f64], m: f64, b: f64, k: f64) {
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
    fn state_maps(&self) -> Vec<StateMap> {
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
    /// only through Data edits, which clear it: `GroupWork::constraints_changed`).
    fn fixed_mask(ops: &mut GroupOps<'_>, mask: &mut Vec<bool>) {
        if mask.len() == ops.group.size {
            return;
        }
        mask.clear();
        mask.resize(ops.group.size, false);
        for &(p, sp) in &ops.group.projective {
            if !ops.group.is_independent(sp) {
                continue;
            }
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
        if !g.mappings.is_empty() {
            self.ops.apply_mapped(x, y, self.m, self.b, self.k);
            for &(p, sp) in &g.projective {
                if !g.is_independent(sp) {
                    continue;
                }
                let off = g.offsets[sp];
                let n = self.ops.states[g.states[sp]].as_ref().unwrap().deriv_len();
                if let Some(c) = self.ops.projective[p].as_ref() {
                    c.project_response(&mut y[off..off + n]);
                }
            }
            return;
        }
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
                    if self.b != 0.0 {
                        f.add_bdx(&x[off..off + n], &mut y[off..off + n], self.b);
                    }
                    if f.has_mass() && self.m != 0.0 {
                        f.add_mdx(&mut y[off..off + n], &x[off..off + n], self.m);
                    }
                }
                ForceEntry::Pair { ff, sides } => {
                    let f = self.ops.force_fields[ff].as_mut().unwrap();
                    let kf = self.k + self.b * f.rayleigh_stiffness();
                    if kf == 0.0 && self.b == 0.0 {
                        continue;
                    }
                    // no mappings: the group's states are all independent
                    let lens = pair_lens(self.ops.states, &sides);
                    let w = &mut self.ops.work.pair;
                    w.a.clear();
                    for (s, n) in sides.iter().zip(lens) {
                        match s.k {
                            Some(kk) => {
                                let o = g.offsets[kk];
                                w.a.extend_from_slice(&x[o..o + n]);
                            }
                            None => w.a.resize(w.a.len() + n, 0.0),
                        }
                    }
                    w.out.clear();
                    w.out.resize(w.a.len(), 0.0);
                    f.add_dforce(&w.a, &mut w.out, kf);
                    if self.b != 0.0 {
                        f.add_bdx(&w.a, &mut w.out, self.b);
                    }
                    let mut start = 0;
                    for (s, n) in sides.iter().zip(lens) {
                        if let Some(kk) = s.k {
                            let o = g.offsets[kk];
                            for (yy, v) in y[o..o + n].iter_mut().zip(&w.out[start..start + n]) {
                                *yy += v;
                            }
                        }
                        start += n;
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
        let maps = if g.mappings.is_empty() {
            Vec::new()
        } else {
            self.ops.state_maps()
        };
        let states = &*self.ops.states;
        let mappings = &*self.ops.mappings;
        let fid = self.ops.work.force_id.unwrap_or(VecId::FORCE);
        let fixed = &self.fixed;
        let fill = |t: &mut dyn MatrixSink| {
            // every fixed DOF has its diagonal entry (set to 1 below, as SOFA's projected matrix
            // has), even one that no mass or force field touches
            for (i, _) in fixed.iter().enumerate().filter(|(_, f)| **f) {
                t.add(i, i, 0.0);
            }
            if !g.mappings.is_empty() {
                fill_mapped(
                    g,
                    &maps,
                    states,
                    force_fields,
                    masses,
                    mappings,
                    fid,
                    (m, b, k),
                    t,
                );
                return;
            }
            for e in &g.forces {
                match *e {
                    ForceEntry::Field { ff, state } => {
                        let f = force_fields[ff].as_ref().unwrap();
                        let kf = k + b * f.rayleigh_stiffness();
                        if kf != 0.0 {
                            f.add_k_to_matrix(t, kf, g.offsets[state]);
                        }
                        if b != 0.0 {
                            let n = states[g.states[state]]
                                .as_ref()
                                .map_or(0, |s| s.deriv_len());
                            f.add_b_to_matrix(t, b, g.offsets[state], n);
                        }
                        if f.has_mass() && m != 0.0 {
                            f.add_m_to_matrix(t, m, g.offsets[state]);
                        }
                    }
                    ForceEntry::Pair { ff, sides } => {
                        let f = force_fields[ff].as_ref().unwrap();
                        let kf = k + b * f.rayleigh_stiffness();
                        let lens = pair_lens(states, &sides);
                        let mut sink = PairSink {
                            inner: t,
                            split: lens[0],
                            offsets: sides.map(|s| s.k.map(|kk| g.offsets[kk])),
                        };
                        if kf != 0.0 {
                            f.add_k_to_matrix(&mut sink, kf, 0);
                        }
                        if b != 0.0 {
                            f.add_b_to_matrix(&mut sink, b, 0, lens[0] + lens[1]);
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

/// Fill an assembled matrix for a group with mappings: each component adds its matrix in its
/// state's own numbering, which reaches the group's DOFs as Jᵀ K J; each nonlinear mapping adds
/// k times its geometric stiffness under its output's force.
#[allow(clippy::too_many_arguments)]
fn fill_mapped(
    g: &Group,
    maps: &[StateMap],
    states: &[Option<MechanicalObject>],
    force_fields: &[Option<Box<dyn ForceField>>],
    masses: &[Option<Box<dyn Mass>>],
    mappings: &[Option<Box<dyn Mapping>>],
    fid: VecId,
    (m, b, k): (f64, f64, f64),
    t: &mut dyn MatrixSink,
) {
    let mut local = TripletSink::default();
    let mut pair_entries = Vec::new();
    for e in &g.forces {
        local.entries.clear();
        let state = match *e {
            ForceEntry::Pair { ff, sides } => {
                let f = force_fields[ff].as_ref().unwrap();
                let kf = k + b * f.rayleigh_stiffness();
                let lens = pair_lens(states, &sides);
                if kf != 0.0 {
                    f.add_k_to_matrix(&mut local, kf, 0);
                }
                if b != 0.0 {
                    f.add_b_to_matrix(&mut local, b, 0, lens[0] + lens[1]);
                }
                // concatenated numbering → (side, scalar) pairs, through each side's map
                let side = |i: u32| -> (u32, u32) {
                    if (i as usize) < lens[0] {
                        (0, i)
                    } else {
                        (1, i - lens[0] as u32)
                    }
                };
                pair_entries.clear();
                for &(r, c, v) in &local.entries {
                    let ((sr, r), (sc, c)) = (side(r), side(c));
                    pair_entries.push(KEntry {
                        in_row: sr,
                        row: r,
                        in_col: sc,
                        col: c,
                        val: v,
                    });
                }
                // a read-only side has no map: its entries are dropped
                let none = StateMap::Rows(mapped::SparseRows::default());
                let ins: Vec<&StateMap> = sides
                    .iter()
                    .map(|s| s.k.map_or(&none, |kk| &maps[kk]))
                    .collect();
                mapped::add_projected_k(&pair_entries, &ins, t);
                continue;
            }
            ForceEntry::Field { ff, state } => {
                let f = force_fields[ff].as_ref().unwrap();
                let kf = k + b * f.rayleigh_stiffness();
                if kf != 0.0 {
                    f.add_k_to_matrix(&mut local, kf, 0);
                }
                if b != 0.0 {
                    let n = states[g.state_of(state)]
                        .as_ref()
                        .map_or(0, |s| s.deriv_len());
                    f.add_b_to_matrix(&mut local, b, 0, n);
                }
                if f.has_mass() && m != 0.0 {
                    f.add_m_to_matrix(&mut local, m, 0);
                }
                state
            }
            ForceEntry::Mass { mass, state, .. } => {
                let ms = masses[mass].as_ref().unwrap();
                let mf = m - b * ms.rayleigh_mass();
                if mf != 0.0 {
                    ms.add_m_to_matrix(&mut local, mf, 0);
                }
                state
            }
        };
        let n = states[g.state_of(state)]
            .as_ref()
            .map_or(0, |s| s.deriv_len());
        mapped::add_projected(&local.entries, &maps[state], n, g.size, t);
    }
    if k != 0.0 {
        let mut ks = Vec::new();
        for gm in &g.mappings {
            ks.clear();
            let (Some(mp), Some(out)) = (mappings[gm.mapping].as_ref(), states[gm.output].as_ref())
            else {
                continue;
            };
            mp.geometric_stiffness(out.vec(fid), &mut ks);
            if ks.is_empty() {
                continue;
            }
            ks.iter_mut().for_each(|e| e.val *= k);
            let ins: Vec<&StateMap> = gm.inputs_k.iter().map(|&i| &maps[i]).collect();
            mapped::add_projected_k(&ks, &ins, t);
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
            id.0 < VecId::SYSTEM_DX.0,
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
        if (VecId::FIRST_COORD_TEMP..VecId::SYSTEM_DX.0).contains(&v.0) {
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
        self.for_all_states(|s| s.vec_mut(f).iter_mut().for_each(|v| *v = 0.0));
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
