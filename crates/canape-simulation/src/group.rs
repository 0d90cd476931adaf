//! Solver groups and the mechanical operations over them.
//!
//! A node holding an ODE solver takes charge of its whole subtree (SOFA's SolveVisitor prunes
//! there). The group lists the independent states of the subtree, their scalar offsets in the
//! group's global vectors, and the masses, force fields and projective constraints acting on each
//! state, in document order. [`GroupOps`] implements [`MechanicalOps`] over it (`group/ops.rs`);
//! the linear system a solver sees, matrix-free or assembled, is in `group/system.rs`.

use crate::mapped::GroupMapping;
use canape_core::component::*;
use canape_core::diag::{Diagnostic, Diagnostics};
use canape_core::matrix::{MatrixSink, PatternCache};
use canape_core::scene::{ComponentId, NodeId, Scene, Slot};
use canape_core::state::{MechanicalObject, VecId};
use canape_types::Vec3;
use std::time::Duration;

mod ops;
mod system;

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
    /// The node's other ODE solvers (document order), run after `ode` on the same group, as
    /// SOFA's solve visitor runs every solver of a node in turn (DampVelocitySolver after an
    /// integrator).
    pub extra_odes: Vec<usize>,
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
    /// The ODE solver's `tags` when the group was built (MultiTagAnimationLoop integrates the
    /// groups whose solver carries the tag of the pass).
    pub tags: Vec<String>,
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
            Slot::Ode(i) => self.ode == i || self.extra_odes.contains(&i),
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
            let extra_odes = odes[1..]
                .iter()
                .filter_map(|&o| match scene.info(o).slot {
                    Slot::Ode(i) => Some(i),
                    _ => None,
                })
                .collect();
            let tags = scene
                .component(ode_id)
                .map(|c| c.data().words("tags").to_vec())
                .unwrap_or_default();
            let mut g = Group {
                tags,
                node: n,
                ode,
                extra_odes,
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
            (map.output() == Some(s) && (map.maps_forces() || map.maps_constraints()))
                .then_some((i, m))
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
                    // forces stop at a mapping without mapForces, and below it
                    let forces = map.maps_forces()
                        && !g
                            .mappings
                            .iter()
                            .any(|gm| !gm.forces && inputs.contains(&gm.output));
                    g.mapped.push(s);
                    g.mappings.push(GroupMapping {
                        mapping: mi,
                        inputs,
                        output: s,
                        inputs_k: Vec::new(),
                        output_k: 0,
                        forces,
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
            // a state whose mapping does not map forces (mapForces="0"): SOFA leaves its
            // masses and force fields out of the mechanics
            let forces_cut = g.mappings.iter().any(|gm| gm.output == s && !gm.forces);
            if forces_cut && matches!(info.slot, Slot::Mass(_) | Slot::ForceField(_)) {
                diags.push(
                    Diagnostic::warning("its state's mapping does not map forces (mapForces=\"0\"): it does not act on the mechanics, as in SOFA")
                        .at(info.loc.clone())
                        .on(scene.component_label(c)),
                );
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
    /// The factors (m, b, k) of the last linear solve: the system a Lagrangian constraint
    /// correction solves with again (`GroupOps::solve_again`).
    pub(crate) last_factors: Option<(f64, f64, f64)>,
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

/// Matrix-free / assembled view of A = mM + bB + kK over a group.
struct GroupSystem<'b, 'a> {
    ops: &'b mut GroupOps<'a>,
    m: f64,
    b: f64,
    k: f64,
    fixed: Vec<bool>,
}
