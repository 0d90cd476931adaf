//! The scene graph: an arena of nodes and typed arenas of components, addressed by handles.
//!
//! Nodes hold their components in document order and by role. Components live in one arena per
//! role (`Vec<Option<Box<dyn Role>>>`), so a solver can borrow states mutably while force fields
//! are borrowed separately; a slot is `None` while its component is being initialised and once
//! it was removed.
//!
//! Handles are index + generation (rapier's pattern): removing a node or component frees its
//! index and bumps the generation, so a handle kept from before is refused ([`SceneError`])
//! instead of reaching whatever reuses the index. Removal refuses what other live components
//! still use (a link to it, or a state or topology found through the context).

use crate::component::*;
use crate::data::Value;
use crate::diag::{Diagnostic, Diagnostics, SourceLoc};
use crate::mesh::Mesh;
use crate::state::MechanicalObject;
use canape_types::Vec3;

/// Handle of a node: index into the node arena and the generation of that index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId {
    index: u32,
    generation: u32,
}

impl NodeId {
    /// Index in the node arena (stable while the node lives).
    pub fn index(self) -> usize {
        self.index as usize
    }
    pub fn generation(self) -> u32 {
        self.generation
    }
}

/// Handle of a component: index into the component table and the generation of that index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComponentId {
    index: u32,
    generation: u32,
}

impl ComponentId {
    /// Index in the component table (stable while the component lives).
    pub fn index(self) -> usize {
        self.index as usize
    }
    pub fn generation(self) -> u32 {
        self.generation
    }
}

impl std::fmt::Display for ComponentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.index)?;
        if self.generation > 0 {
            write!(f, "g{}", self.generation)?;
        }
        Ok(())
    }
}

/// Why a change to the scene graph was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SceneError {
    #[error("component {0} no longer exists (it was removed; the handle is stale)")]
    StaleComponent(ComponentId),
    #[error("node #{} no longer exists (it was removed; the handle is stale)", .0.index)]
    StaleNode(NodeId),
    #[error("the root node cannot be removed")]
    RemoveRoot,
    #[error("{target} is used by {user} ({how}): remove or change that first")]
    InUse {
        target: String,
        user: String,
        how: String,
    },
}

/// Why an edit of a running simulation (a Data, the gravity, the time step, the threads) was
/// refused. The simulation is unchanged when one is returned.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EditError {
    #[error(transparent)]
    Scene(#[from] SceneError),
    #[error("Data of {class} ({role:?}) cannot be edited while the simulation runs")]
    NotEditable { class: &'static str, role: Role },
    #[error("{component} is busy (it is running)")]
    Busy { component: String },
    #[error("{class} has no Data '{name}'{}", hint(.suggestions))]
    NoData {
        class: &'static str,
        name: String,
        suggestions: Vec<&'static str>,
    },
    #[error("'{0}' is an output and cannot be set")]
    Output(String),
    #[error("{name}: {reason}")]
    BadValue { name: String, reason: String },
    /// The component refused the new value when re-initialised; the previous one is back.
    #[error("{component}: {}", .reasons.join("; "))]
    Refused {
        component: String,
        reasons: Vec<String>,
    },
    #[error("{what} must be {expected}")]
    Invalid {
        what: &'static str,
        expected: &'static str,
    },
    #[error("cannot start {threads} worker threads: {reason}")]
    Threads { threads: usize, reason: String },
}

fn hint(s: &[&str]) -> String {
    crate::diag::did_you_mean(s).map_or(String::new(), |h| format!(" ({h})"))
}

/// Controllers return text errors; a scene error converts to its message.
impl From<SceneError> for String {
    fn from(e: SceneError) -> String {
        e.to_string()
    }
}

/// Controllers return text errors; an edit's error converts to its message.
impl From<EditError> for String {
    fn from(e: EditError) -> String {
        e.to_string()
    }
}

/// A component of any role, as produced by a factory.
pub enum AnyComponent {
    State(MechanicalObject),
    Mass(Box<dyn Mass>),
    ForceField(Box<dyn ForceField>),
    Projective(Box<dyn ProjectiveConstraint>),
    Ode(Box<dyn OdeSolver>),
    Linear(Box<dyn LinearSolver>),
    Topology(Box<dyn Topology>),
    TopoMapping(Box<dyn TopologicalMapping>),
    Engine(Box<dyn Engine>),
    Loader(Box<dyn Loader>),
    Mapping(Box<dyn Mapping>),
    AnimationLoop(Box<dyn AnimationLoop>),
    Controller(Box<dyn Controller>),
    Passive(Box<dyn Passive>),
}

impl AnyComponent {
    pub fn role(&self) -> Role {
        match self {
            AnyComponent::State(_) => Role::State,
            AnyComponent::Mass(_) => Role::Mass,
            AnyComponent::ForceField(_) => Role::ForceField,
            AnyComponent::Projective(_) => Role::ProjectiveConstraint,
            AnyComponent::Ode(_) => Role::OdeSolver,
            AnyComponent::Linear(_) => Role::LinearSolver,
            AnyComponent::Topology(_) => Role::Topology,
            AnyComponent::TopoMapping(_) => Role::TopologicalMapping,
            AnyComponent::Engine(_) => Role::Engine,
            AnyComponent::Loader(_) => Role::Loader,
            AnyComponent::Mapping(_) => Role::Mapping,
            AnyComponent::AnimationLoop(_) => Role::AnimationLoop,
            AnyComponent::Controller(_) => Role::Controller,
            AnyComponent::Passive(p) => p.role(),
        }
    }
    pub fn base(&self) -> &dyn Component {
        match self {
            AnyComponent::State(c) => c,
            AnyComponent::Mass(c) => c.as_ref(),
            AnyComponent::ForceField(c) => c.as_ref(),
            AnyComponent::Projective(c) => c.as_ref(),
            AnyComponent::Ode(c) => c.as_ref(),
            AnyComponent::Linear(c) => c.as_ref(),
            AnyComponent::Topology(c) => c.as_ref(),
            AnyComponent::TopoMapping(c) => c.as_ref(),
            AnyComponent::Engine(c) => c.as_ref(),
            AnyComponent::Loader(c) => c.as_ref(),
            AnyComponent::Mapping(c) => c.as_ref(),
            AnyComponent::AnimationLoop(c) => c.as_ref(),
            AnyComponent::Controller(c) => c.as_ref(),
            AnyComponent::Passive(c) => c.as_ref(),
        }
    }
    pub fn base_mut(&mut self) -> &mut dyn Component {
        match self {
            AnyComponent::State(c) => c,
            AnyComponent::Mass(c) => c.as_mut(),
            AnyComponent::ForceField(c) => c.as_mut(),
            AnyComponent::Projective(c) => c.as_mut(),
            AnyComponent::Ode(c) => c.as_mut(),
            AnyComponent::Linear(c) => c.as_mut(),
            AnyComponent::Topology(c) => c.as_mut(),
            AnyComponent::TopoMapping(c) => c.as_mut(),
            AnyComponent::Engine(c) => c.as_mut(),
            AnyComponent::Loader(c) => c.as_mut(),
            AnyComponent::Mapping(c) => c.as_mut(),
            AnyComponent::AnimationLoop(c) => c.as_mut(),
            AnyComponent::Controller(c) => c.as_mut(),
            AnyComponent::Passive(c) => c.as_mut(),
        }
    }
}

impl std::fmt::Debug for AnyComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}({})", self.role(), self.base().class_name())
    }
}

/// Where a component lives: its role arena and index there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    State(usize),
    Mass(usize),
    ForceField(usize),
    Projective(usize),
    Ode(usize),
    Linear(usize),
    Topology(usize),
    TopoMapping(usize),
    Engine(usize),
    Loader(usize),
    Mapping(usize),
    AnimationLoop(usize),
    Controller(usize),
    Passive(usize),
}

/// Book-keeping for one component.
#[derive(Clone, Debug)]
pub struct ComponentInfo {
    pub name: String,
    pub class: &'static str,
    pub node: NodeId,
    pub slot: Slot,
    pub role: Role,
    pub loc: Option<SourceLoc>,
    /// Data links as written (`data name`, `@path`), resolved before init.
    pub data_links: Vec<(String, String)>,
    pub initialized: bool,
    /// Generation of this table entry (bumped when the component is removed).
    pub generation: u32,
    /// False once the component was removed (the entry waits for reuse).
    pub alive: bool,
}

/// A node of the scene graph, with its context Data.
#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub parent: Option<NodeId>,
    pub children: Vec<NodeId>,
    /// Components in document order.
    pub components: Vec<ComponentId>,
    pub activated: bool,
    pub gravity: Vec3,
    pub dt: f64,
    pub loc: Option<SourceLoc>,
    /// A mapping declared in this node could not be created (unknown class or refused): the
    /// node's state, which SOFA would map, is not integrated as an independent state.
    pub missing_mapping: bool,
    /// Generation of this arena entry (bumped when the node is removed).
    pub generation: u32,
    /// False once the node was removed (the entry waits for reuse).
    pub alive: bool,
    /// The node's components by role, each list in document order (kept with `components`
    /// by `add_component`, removal and `move_component_first`).
    by_role: Vec<(Role, Vec<ComponentId>)>,
}

/// Reads a mesh file (a path already resolved by the builder) into a [`Mesh`].
pub type MeshReader = fn(&str) -> Result<Mesh, String>;

/// The whole scene: graph plus component arenas. No global state: many scenes may coexist, and
/// a scene clones component by component (each role's boxed trait object is `Clone`).
#[derive(Clone, Default)]
pub struct Scene {
    /// Node arena; entries of removed nodes stay (`alive == false`) until an index is reused.
    pub nodes: Vec<Node>,
    /// Component table, indexed by [`ComponentId::index`]; see [`Scene::component_ids`].
    components: Vec<ComponentInfo>,
    /// Freed node and component indices, reused last-freed first (deterministic).
    free_nodes: Vec<u32>,
    free_components: Vec<u32>,
    /// How files named by components (a container's `filename`) become meshes: installed by
    /// the scene builder (canape-io), so that the core reads no files itself.
    pub mesh_reader: Option<MeshReader>,
    /// The root's `animate` attribute (SOFA's "animate the simulation at start": a GUI starts
    /// playing with 1, paused with 0 or when it is absent).
    pub animate: Option<bool>,
    /// Freed slots of each role arena, by [`Slot::arena`].
    free_slots: [Vec<usize>; 14],
    pub states: Vec<Option<MechanicalObject>>,
    pub masses: Vec<Option<Box<dyn Mass>>>,
    pub force_fields: Vec<Option<Box<dyn ForceField>>>,
    pub projective: Vec<Option<Box<dyn ProjectiveConstraint>>>,
    pub odes: Vec<Option<Box<dyn OdeSolver>>>,
    pub linears: Vec<Option<Box<dyn LinearSolver>>>,
    pub topologies: Vec<Option<Box<dyn Topology>>>,
    pub topo_mappings: Vec<Option<Box<dyn TopologicalMapping>>>,
    pub engines: Vec<Option<Box<dyn Engine>>>,
    pub loaders: Vec<Option<Box<dyn Loader>>>,
    pub mappings: Vec<Option<Box<dyn Mapping>>>,
    pub animation_loops: Vec<Option<Box<dyn AnimationLoop>>>,
    pub controllers: Vec<Option<Box<dyn Controller>>>,
    pub passives: Vec<Option<Box<dyn Passive>>>,
    /// Simulated time.
    pub time: f64,
}

macro_rules! push_slot {
    ($self:ident, $vec:ident, $c:expr, $variant:ident) => {{
        let arena = Slot::$variant(0).arena();
        match $self.free_slots[arena].pop() {
            Some(i) => {
                $self.$vec[i] = Some($c);
                Slot::$variant(i)
            }
            None => {
                $self.$vec.push(Some($c));
                Slot::$variant($self.$vec.len() - 1)
            }
        }
    }};
}

impl Slot {
    /// Which role arena the slot is in (0..14).
    pub fn arena(self) -> usize {
        match self {
            Slot::State(_) => 0,
            Slot::Mass(_) => 1,
            Slot::ForceField(_) => 2,
            Slot::Projective(_) => 3,
            Slot::Ode(_) => 4,
            Slot::Linear(_) => 5,
            Slot::Topology(_) => 6,
            Slot::TopoMapping(_) => 7,
            Slot::Engine(_) => 8,
            Slot::Loader(_) => 9,
            Slot::Mapping(_) => 10,
            Slot::AnimationLoop(_) => 11,
            Slot::Controller(_) => 12,
            Slot::Passive(_) => 13,
        }
    }
}

impl Scene {
    pub fn new() -> Self {
        Self::default()
    }

    /// Create a node (root when `parent` is None).
    pub fn add_node(&mut self, name: &str, parent: Option<NodeId>) -> NodeId {
        let (gravity, dt) = match parent {
            Some(p) => (self.node(p).gravity, self.node(p).dt),
            None => (Vec3::new(0.0, -9.81, 0.0), 0.01),
        };
        let (index, generation) = match self.free_nodes.pop() {
            Some(i) => (i, self.nodes[i as usize].generation),
            None => (self.nodes.len() as u32, 0),
        };
        let id = NodeId { index, generation };
        let node = Node {
            name: name.to_string(),
            parent,
            children: Vec::new(),
            components: Vec::new(),
            activated: true,
            gravity,
            dt,
            loc: None,
            missing_mapping: false,
            generation,
            alive: true,
            by_role: Vec::new(),
        };
        if index as usize == self.nodes.len() {
            self.nodes.push(node);
        } else {
            self.nodes[index as usize] = node;
        }
        if let Some(p) = parent {
            self.node_mut(p).children.push(id);
        }
        id
    }

    /// The root node (the first node created; it cannot be removed).
    pub fn root(&self) -> NodeId {
        NodeId {
            index: 0,
            generation: self.nodes.first().map_or(0, |n| n.generation),
        }
    }

    /// A node by handle. The handle must be live (see [`Scene::check_node`] for handles that
    /// come from outside the scene).
    pub fn node(&self, id: NodeId) -> &Node {
        let n = &self.nodes[id.index as usize];
        debug_assert!(n.generation == id.generation, "stale node handle");
        n
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        let n = &mut self.nodes[id.index as usize];
        debug_assert!(n.generation == id.generation, "stale node handle");
        n
    }

    /// Refuse a handle whose node was removed.
    pub fn check_node(&self, id: NodeId) -> Result<(), SceneError> {
        match self.nodes.get(id.index as usize) {
            Some(n) if n.alive && n.generation == id.generation => Ok(()),
            _ => Err(SceneError::StaleNode(id)),
        }
    }

    /// Refuse a handle whose component was removed.
    pub fn check_component(&self, id: ComponentId) -> Result<(), SceneError> {
        match self.components.get(id.index as usize) {
            Some(c) if c.alive && c.generation == id.generation => Ok(()),
            _ => Err(SceneError::StaleComponent(id)),
        }
    }

    /// The live nodes, in arena order.
    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.alive)
            .map(|(i, n)| NodeId {
                index: i as u32,
                generation: n.generation,
            })
    }

    /// The live components, in table order (creation order while nothing was removed).
    pub fn component_ids(&self) -> impl Iterator<Item = ComponentId> + '_ {
        self.components
            .iter()
            .enumerate()
            .filter(|(_, c)| c.alive)
            .map(|(i, c)| ComponentId {
                index: i as u32,
                generation: c.generation,
            })
    }

    /// The live component at a table index, if any (for indices that went through a UI).
    pub fn component_at(&self, index: usize) -> Option<ComponentId> {
        let c = self.components.get(index)?;
        c.alive.then_some(ComponentId {
            index: index as u32,
            generation: c.generation,
        })
    }

    /// The live node at an arena index, if any.
    pub fn node_at(&self, index: usize) -> Option<NodeId> {
        let n = self.nodes.get(index)?;
        n.alive.then_some(NodeId {
            index: index as u32,
            generation: n.generation,
        })
    }

    /// Add a component to a node (appended to the node's document order).
    pub fn add_component(
        &mut self,
        node: NodeId,
        name: &str,
        c: AnyComponent,
        loc: Option<SourceLoc>,
    ) -> ComponentId {
        let class = c.base().class_name();
        let role = c.role();
        let slot = match c {
            AnyComponent::State(c) => push_slot!(self, states, c, State),
            AnyComponent::Mass(c) => push_slot!(self, masses, c, Mass),
            AnyComponent::ForceField(c) => push_slot!(self, force_fields, c, ForceField),
            AnyComponent::Projective(c) => push_slot!(self, projective, c, Projective),
            AnyComponent::Ode(c) => push_slot!(self, odes, c, Ode),
            AnyComponent::Linear(c) => push_slot!(self, linears, c, Linear),
            AnyComponent::Topology(c) => push_slot!(self, topologies, c, Topology),
            AnyComponent::TopoMapping(c) => push_slot!(self, topo_mappings, c, TopoMapping),
            AnyComponent::Engine(c) => push_slot!(self, engines, c, Engine),
            AnyComponent::Loader(c) => push_slot!(self, loaders, c, Loader),
            AnyComponent::Mapping(c) => push_slot!(self, mappings, c, Mapping),
            AnyComponent::AnimationLoop(c) => {
                push_slot!(self, animation_loops, c, AnimationLoop)
            }
            AnyComponent::Controller(c) => push_slot!(self, controllers, c, Controller),
            AnyComponent::Passive(c) => push_slot!(self, passives, c, Passive),
        };
        let (index, generation) = match self.free_components.pop() {
            Some(i) => (i, self.components[i as usize].generation),
            None => (self.components.len() as u32, 0),
        };
        let id = ComponentId { index, generation };
        let info = ComponentInfo {
            name: name.to_string(),
            class,
            node,
            slot,
            role,
            loc,
            data_links: Vec::new(),
            initialized: false,
            generation,
            alive: true,
        };
        if index as usize == self.components.len() {
            self.components.push(info);
        } else {
            self.components[index as usize] = info;
        }
        let n = self.node_mut(node);
        n.components.push(id);
        match n.by_role.iter_mut().find(|(r, _)| *r == role) {
            Some((_, l)) => l.push(id),
            None => n.by_role.push((role, vec![id])),
        }
        id
    }

    /// Move a component to the front of its node (SOFA inserts an implicit animation loop
    /// first in the root).
    pub fn move_component_first(&mut self, id: ComponentId) {
        let (node, role) = (self.info(id).node, self.info(id).role);
        let n = self.node_mut(node);
        n.components.retain(|c| *c != id);
        n.components.insert(0, id);
        if let Some((_, l)) = n.by_role.iter_mut().find(|(r, _)| *r == role) {
            l.retain(|c| *c != id);
            l.insert(0, id);
        }
    }

    /// Take a component out of its role arena, leaving the slot empty.
    fn take_slot(&mut self, slot: Slot) -> Option<AnyComponent> {
        Some(match slot {
            Slot::State(i) => AnyComponent::State(self.states[i].take()?),
            Slot::Mass(i) => AnyComponent::Mass(self.masses[i].take()?),
            Slot::ForceField(i) => AnyComponent::ForceField(self.force_fields[i].take()?),
            Slot::Projective(i) => AnyComponent::Projective(self.projective[i].take()?),
            Slot::Ode(i) => AnyComponent::Ode(self.odes[i].take()?),
            Slot::Linear(i) => AnyComponent::Linear(self.linears[i].take()?),
            Slot::Topology(i) => AnyComponent::Topology(self.topologies[i].take()?),
            Slot::TopoMapping(i) => AnyComponent::TopoMapping(self.topo_mappings[i].take()?),
            Slot::Engine(i) => AnyComponent::Engine(self.engines[i].take()?),
            Slot::Loader(i) => AnyComponent::Loader(self.loaders[i].take()?),
            Slot::Mapping(i) => AnyComponent::Mapping(self.mappings[i].take()?),
            Slot::AnimationLoop(i) => AnyComponent::AnimationLoop(self.animation_loops[i].take()?),
            Slot::Controller(i) => AnyComponent::Controller(self.controllers[i].take()?),
            Slot::Passive(i) => AnyComponent::Passive(self.passives[i].take()?),
        })
    }

    /// The nodes of the subtree under `n` (itself first, then depth first in child order).
    pub fn subtree(&self, n: NodeId) -> Vec<NodeId> {
        let mut out = vec![n];
        let mut k = 0;
        while k < out.len() {
            let kids = self.node(out[k]).children.clone();
            out.splice(k + 1..k + 1, kids);
            k += 1;
        }
        out
    }

    /// A live component outside `gone` that uses one of `gone` (or a node of `gone_nodes`): by a
    /// link written in its Data (`@path`, `@path.data`), or as the state or topology its context
    /// gives it (a mapping also uses its parent node's state). Returns (user, target, how).
    pub fn user_of(
        &self,
        gone: &[ComponentId],
        gone_nodes: &[NodeId],
    ) -> Option<(ComponentId, ComponentId, String)> {
        let in_gone = |t: &Target| match t {
            Target::Component(c) => gone.contains(c),
            Target::Node(n) => gone_nodes.contains(n),
        };
        let first_gone = |t: &Target| match t {
            Target::Component(c) => *c,
            Target::Node(n) => self.node(*n).components.first().copied().unwrap_or(gone[0]),
        };
        for u in self.component_ids() {
            if gone.contains(&u) {
                continue;
            }
            let info = self.info(u);
            let node = info.node;
            // links as written: data links kept for init, and object links in Data values
            let mut links: Vec<String> = info.data_links.iter().map(|(_, l)| l.clone()).collect();
            if let Some(c) = self.component(u) {
                for f in c.data().fields() {
                    match &f.value {
                        Value::Str(t) if t.trim_start().starts_with('@') => links.push(t.clone()),
                        Value::Words(w) => {
                            links.extend(w.iter().filter(|t| t.starts_with('@')).cloned())
                        }
                        _ => {}
                    }
                }
            }
            for l in &links {
                let l = l.trim().trim_start_matches('@');
                let path = split_data_link(l).map_or(l, |(p, _)| p);
                if let Some(t) = self.resolve_path(node, Some(u), path) {
                    if in_gone(&t) {
                        return Some((u, first_gone(&t), format!("link '@{l}'")));
                    }
                }
            }
            // context: its state, its topologies, and a mapping's parent state
            if let Some(s) = self.context_state(node) {
                if gone.contains(&s) && info.role != Role::State {
                    return Some((u, s, "its context state".into()));
                }
            }
            if info.role == Role::Mapping {
                if let Some(s) = self.node(node).parent.and_then(|p| self.context_state(p)) {
                    if gone.contains(&s) {
                        return Some((u, s, "its input state".into()));
                    }
                }
            }
            if info.role != Role::Topology {
                if let Some(t) = self
                    .context_topologies(node)
                    .into_iter()
                    .find(|t| gone.contains(t))
                {
                    return Some((u, t, "a topology of its context".into()));
                }
            }
        }
        None
    }

    /// Remove a component. Refused for a stale handle and when a live component uses it
    /// ([`Scene::user_of`]); the caller rebuilds what depends on the graph (solver groups).
    pub fn remove_component(&mut self, id: ComponentId) -> Result<AnyComponent, SceneError> {
        self.check_component(id)?;
        if let Some((user, target, how)) = self.user_of(&[id], &[]) {
            return Err(SceneError::InUse {
                target: self.component_label(target),
                user: self.component_label(user),
                how,
            });
        }
        Ok(self.drop_component(id))
    }

    fn drop_component(&mut self, id: ComponentId) -> AnyComponent {
        let info = self.info_mut(id);
        info.alive = false;
        info.generation = info.generation.wrapping_add(1);
        let (slot, node, role) = (info.slot, info.node, info.role);
        let n = self.node_mut(node);
        n.components.retain(|c| *c != id);
        if let Some((_, l)) = n.by_role.iter_mut().find(|(r, _)| *r == role) {
            l.retain(|c| *c != id);
        }
        self.free_components.push(id.index);
        self.free_slots[slot.arena()].push(match slot {
            Slot::State(i)
            | Slot::Mass(i)
            | Slot::ForceField(i)
            | Slot::Projective(i)
            | Slot::Ode(i)
            | Slot::Linear(i)
            | Slot::Topology(i)
            | Slot::TopoMapping(i)
            | Slot::Engine(i)
            | Slot::Loader(i)
            | Slot::Mapping(i)
            | Slot::AnimationLoop(i)
            | Slot::Controller(i)
            | Slot::Passive(i) => i,
        });
        self.take_slot(slot)
            .expect("a live component is in its slot between steps")
    }

    /// Remove a node with everything below it. Refused for the root, a stale handle, and when a
    /// component outside the subtree uses one inside it. Returns the components removed.
    pub fn remove_node(&mut self, id: NodeId) -> Result<Vec<AnyComponent>, SceneError> {
        self.check_node(id)?;
        if id.index == 0 {
            return Err(SceneError::RemoveRoot);
        }
        let nodes = self.subtree(id);
        let comps: Vec<ComponentId> = nodes
            .iter()
            .flat_map(|n| self.node(*n).components.clone())
            .collect();
        if let Some((user, target, how)) = self.user_of(&comps, &nodes) {
            return Err(SceneError::InUse {
                target: self.component_label(target),
                user: self.component_label(user),
                how,
            });
        }
        let out = comps
            .iter()
            .rev()
            .map(|c| self.drop_component(*c))
            .collect();
        if let Some(p) = self.node(id).parent {
            self.node_mut(p).children.retain(|c| *c != id);
        }
        for n in nodes.into_iter().rev() {
            let node = self.node_mut(n);
            node.alive = false;
            node.generation = node.generation.wrapping_add(1);
            node.children.clear();
            self.free_nodes.push(n.index);
        }
        Ok(out)
    }

    /// A component's book-keeping. The handle must be live (see [`Scene::check_component`]).
    pub fn info(&self, id: ComponentId) -> &ComponentInfo {
        let c = &self.components[id.index as usize];
        debug_assert!(c.generation == id.generation, "stale component handle");
        c
    }

    pub fn info_mut(&mut self, id: ComponentId) -> &mut ComponentInfo {
        let c = &mut self.components[id.index as usize];
        debug_assert!(c.generation == id.generation, "stale component handle");
        c
    }

    /// Reflective access to any component (None while it is being initialised).
    pub fn component(&self, id: ComponentId) -> Option<&dyn Component> {
        let s = self.info(id).slot;
        match s {
            Slot::State(i) => self.states[i].as_ref().map(|c| c as &dyn Component),
            Slot::Mass(i) => self.masses[i].as_deref().map(|c| c as &dyn Component),
            Slot::ForceField(i) => self.force_fields[i].as_deref().map(|c| c as &dyn Component),
            Slot::Projective(i) => self.projective[i].as_deref().map(|c| c as &dyn Component),
            Slot::Ode(i) => self.odes[i].as_deref().map(|c| c as &dyn Component),
            Slot::Linear(i) => self.linears[i].as_deref().map(|c| c as &dyn Component),
            Slot::Topology(i) => self.topologies[i].as_deref().map(|c| c as &dyn Component),
            Slot::TopoMapping(i) => self.topo_mappings[i]
                .as_deref()
                .map(|c| c as &dyn Component),
            Slot::Engine(i) => self.engines[i].as_deref().map(|c| c as &dyn Component),
            Slot::Loader(i) => self.loaders[i].as_deref().map(|c| c as &dyn Component),
            Slot::Mapping(i) => self.mappings[i].as_deref().map(|c| c as &dyn Component),
            Slot::AnimationLoop(i) => self.animation_loops[i]
                .as_deref()
                .map(|c| c as &dyn Component),
            Slot::Controller(i) => self.controllers[i].as_deref().map(|c| c as &dyn Component),
            Slot::Passive(i) => self.passives[i].as_deref().map(|c| c as &dyn Component),
        }
    }

    /// Mutable reflective access.
    pub fn component_mut(&mut self, id: ComponentId) -> Option<&mut dyn Component> {
        let s = self.info(id).slot;
        match s {
            Slot::State(i) => self.states[i].as_mut().map(|c| c as &mut dyn Component),
            Slot::Mass(i) => self.masses[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
            Slot::ForceField(i) => self.force_fields[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
            Slot::Projective(i) => self.projective[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
            Slot::Ode(i) => self.odes[i].as_deref_mut().map(|c| c as &mut dyn Component),
            Slot::Linear(i) => self.linears[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
            Slot::Topology(i) => self.topologies[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
            Slot::TopoMapping(i) => self.topo_mappings[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
            Slot::Engine(i) => self.engines[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
            Slot::Loader(i) => self.loaders[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
            Slot::Mapping(i) => self.mappings[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
            Slot::AnimationLoop(i) => self.animation_loops[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
            Slot::Controller(i) => self.controllers[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
            Slot::Passive(i) => self.passives[i]
                .as_deref_mut()
                .map(|c| c as &mut dyn Component),
        }
    }

    /// `/root/Liver/FEM` style path of a node.
    pub fn node_path(&self, id: NodeId) -> String {
        let mut parts = Vec::new();
        let mut cur = Some(id);
        while let Some(n) = cur {
            parts.push(self.node(n).name.clone());
            cur = self.node(n).parent;
        }
        parts.reverse();
        format!("/{}", parts.join("/"))
    }

    /// Path and class of a component, for diagnostics.
    pub fn component_label(&self, id: ComponentId) -> String {
        let i = self.info(id);
        format!("{}/{} ({})", self.node_path(i.node), i.name, i.class)
    }

    /// Ancestors of a node, itself first.
    pub fn lineage(&self, id: NodeId) -> Vec<NodeId> {
        let mut v = vec![id];
        let mut cur = self.node(id).parent;
        while let Some(p) = cur {
            v.push(p);
            cur = self.node(p).parent;
        }
        v
    }

    /// Components of `role` in node `n`, in document order.
    pub fn node_components(&self, n: NodeId, role: Role) -> impl Iterator<Item = ComponentId> + '_ {
        // the node's per-role lists: no scan of a node's other components
        self.node(n)
            .by_role
            .iter()
            .find(|(r, _)| *r == role)
            .map_or(&[][..], |(_, l)| &l[..])
            .iter()
            .copied()
    }

    /// The mechanical state of a node, searching up the tree (SOFA's context lookup).
    pub fn context_state(&self, n: NodeId) -> Option<ComponentId> {
        self.lineage(n)
            .into_iter()
            .find_map(|m| self.node_components(m, Role::State).next())
    }

    /// The topology of a node's context: the last one declared in the nearest node that has one
    /// (SOFA's node topology slot keeps the last topology added).
    pub fn context_topology(&self, n: NodeId) -> Option<ComponentId> {
        self.lineage(n)
            .into_iter()
            .find_map(|m| self.node_components(m, Role::Topology).last())
    }

    /// All topologies of a node's context, nearest node first, document order within a node.
    pub fn context_topologies(&self, n: NodeId) -> Vec<ComponentId> {
        self.lineage(n)
            .into_iter()
            .flat_map(|m| self.node_components(m, Role::Topology).collect::<Vec<_>>())
            .collect()
    }

    pub fn state(&self, id: ComponentId) -> Option<&MechanicalObject> {
        match self.info(id).slot {
            Slot::State(i) => self.states[i].as_ref(),
            _ => None,
        }
    }

    pub fn state_mut(&mut self, id: ComponentId) -> Option<&mut MechanicalObject> {
        match self.info(id).slot {
            Slot::State(i) => self.states[i].as_mut(),
            _ => None,
        }
    }

    pub fn topology(&self, id: ComponentId) -> Option<&dyn Topology> {
        match self.info(id).slot {
            Slot::Topology(i) => self.topologies[i].as_deref(),
            _ => None,
        }
    }

    /// Find a child node by name.
    fn child_named(&self, n: NodeId, name: &str) -> Option<NodeId> {
        self.node(n)
            .children
            .iter()
            .copied()
            .find(|c| self.node(*c).name == name)
    }

    fn object_named(&self, n: NodeId, name: &str) -> Option<ComponentId> {
        self.node(n)
            .components
            .iter()
            .copied()
            .find(|c| self.info(*c).name == name)
    }

    /// Resolve a link path (without the leading `@` and without a `.data` suffix) from the
    /// component `from` (or a node). Follows SOFA's rules: absolute `/a/b`, relative `../x`,
    /// `./x`, `[-1]` (previous object), and plain names searched in the node then its ancestors.
    pub fn resolve_path(
        &self,
        node: NodeId,
        from: Option<ComponentId>,
        path: &str,
    ) -> Option<Target> {
        let path = path.trim();
        if path.is_empty() {
            return from.map(Target::Component);
        }
        if let Some(rest) = path.strip_prefix('[') {
            let idx: i64 = rest.trim_end_matches(']').trim().parse().ok()?;
            let comps = &self.node(node).components;
            let me = from.and_then(|f| comps.iter().position(|c| *c == f))?;
            let j = me as i64 + idx;
            if idx >= 0 || j < 0 {
                return None;
            }
            return Some(Target::Component(comps[j as usize]));
        }
        let (mut cur, rest, search_up) = if let Some(r) = path.strip_prefix('/') {
            (self.root(), r, false)
        } else if path.starts_with("..") || path.starts_with("./") || path == "." {
            (node, path, false)
        } else {
            (node, path, true)
        };
        let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
        if search_up {
            // plain relative name: try from this node, then each ancestor
            for start in self.lineage(node) {
                if let Some(t) = self.walk(start, &parts) {
                    return Some(t);
                }
            }
            return None;
        }
        // absolute path: the first part may name the root itself
        if path.starts_with('/') {
            if let Some(first) = parts.first() {
                if *first == self.node(self.root()).name
                    && self.child_named(self.root(), first).is_none()
                    && self.object_named(self.root(), first).is_none()
                {
                    return self.walk(cur, &parts[1..]);
                }
            }
        }
        let mut i = 0;
        while i < parts.len() && (parts[i] == ".." || parts[i] == ".") {
            if parts[i] == ".." {
                cur = self.node(cur).parent?;
            }
            i += 1;
        }
        self.walk(cur, &parts[i..])
    }

    fn walk(&self, start: NodeId, parts: &[&str]) -> Option<Target> {
        let mut cur = start;
        for (k, p) in parts.iter().enumerate() {
            let last = k + 1 == parts.len();
            if *p == ".." {
                cur = self.node(cur).parent?;
                continue;
            }
            if *p == "." {
                continue;
            }
            if let Some(c) = self.child_named(cur, p) {
                cur = c;
                continue;
            }
            if last {
                return self.object_named(cur, p).map(Target::Component);
            }
            return None;
        }
        Some(Target::Node(cur))
    }

    /// Read a Data value through a link `@path.data` from a component.
    pub fn read_link(
        &self,
        node: NodeId,
        from: Option<ComponentId>,
        link: &str,
    ) -> Result<Value, String> {
        let (path, data) = split_data_link(link)
            .ok_or_else(|| format!("'{link}' does not name a Data (expected @path.dataName)"))?;
        let target = self
            .resolve_path(node, from, path)
            .ok_or_else(|| format!("link '{link}': no object or node at '{path}'"))?;
        let id = match target {
            Target::Component(c) => c,
            Target::Node(n) => {
                // a node: SOFA reads the node's Data; the only ones are context Data
                let nd = self.node(n);
                return match data {
                    "gravity" => Ok(Value::Reals(vec![nd.gravity.x, nd.gravity.y, nd.gravity.z])),
                    "dt" => Ok(Value::Real(nd.dt)),
                    "name" => Ok(Value::Str(nd.name.clone())),
                    _ => Err(format!(
                        "link '{link}': node '{}' has no Data '{data}'",
                        nd.name
                    )),
                };
            }
        };
        let c = self.component(id).ok_or_else(|| {
            format!("link '{link}': the target is being initialised (circular link)")
        })?;
        if c.data().field(data).is_none() {
            return Err(format!(
                "link '{link}': {} has no Data '{data}'",
                self.component_label(id)
            ));
        }
        c.read_data(data)
            .ok_or_else(|| format!("link '{link}': cannot read Data '{data}'"))
    }
}

impl Scene {
    /// Number of scalars per entry of the Data a `@path.data` link reads (`DataKind::Reals(w)`),
    /// when it names a component's Data of that kind.
    pub fn link_width(&self, node: NodeId, from: Option<ComponentId>, link: &str) -> Option<usize> {
        let (path, data) = split_data_link(link)?;
        let Target::Component(c) = self.resolve_path(node, from, path)? else {
            return None;
        };
        match self.component(c)?.data().field(data)?.kind {
            crate::data::DataKind::Reals(w) => Some(w),
            _ => None,
        }
    }
}

/// What a link path points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Node(NodeId),
    Component(ComponentId),
}

/// Split `@path/to/obj.data` into (`path/to/obj`, `data`). Returns None if there is no Data part.
pub fn split_data_link(link: &str) -> Option<(&str, &str)> {
    let l = link.trim();
    let l = l.strip_prefix('@').unwrap_or(l);
    let slash = l.rfind('/').map(|i| i + 1).unwrap_or(0);
    let tail = &l[slash..];
    if tail.is_empty() || tail.chars().all(|c| c == '.') {
        return None;
    }
    let dot = tail.rfind('.')?;
    let data = &tail[dot + 1..];
    if data.is_empty() {
        return None;
    }
    Some((&l[..slash + dot], data))
}

/// Context given to a component's `init`: read access to the rest of the scene.
pub struct InitContext<'a> {
    pub scene: &'a Scene,
    pub node: NodeId,
    pub id: ComponentId,
    pub diags: &'a mut Diagnostics,
}

impl<'a> InitContext<'a> {
    fn label(&self) -> String {
        self.scene.component_label(self.id)
    }
    fn loc(&self) -> Option<SourceLoc> {
        self.scene.info(self.id).loc.clone()
    }
    pub fn error(&mut self, msg: impl Into<String>) {
        let d = Diagnostic::error(msg).at(self.loc()).on(self.label());
        self.diags.push(d);
    }
    pub fn warn(&mut self, msg: impl Into<String>) {
        let d = Diagnostic::warning(msg).at(self.loc()).on(self.label());
        self.diags.push(d);
    }
    pub fn note(&mut self, msg: impl Into<String>) {
        let d = Diagnostic::note(msg).at(self.loc()).on(self.label());
        self.diags.push(d);
    }
    /// The mechanical state of the context.
    pub fn state(&self) -> Option<&'a MechanicalObject> {
        self.scene
            .context_state(self.node)
            .and_then(|s| self.scene.state(s))
    }
    /// The node's context gravity.
    pub fn gravity(&self) -> Vec3 {
        self.scene.node(self.node).gravity
    }
    /// The topology of the context (last declared in the nearest node holding one).
    pub fn topology(&self) -> Option<&'a dyn Topology> {
        self.scene
            .context_topology(self.node)
            .and_then(|t| self.scene.topology(t))
    }
    /// The first topology of the context whose mesh satisfies `pred`.
    pub fn topology_where(&self, pred: impl Fn(&Mesh) -> bool) -> Option<&'a dyn Topology> {
        let scene = self.scene;
        // nearest node first, last declared first within a node (slot semantics)
        for n in scene.lineage(self.node) {
            let mut ids: Vec<ComponentId> = scene.node_components(n, Role::Topology).collect();
            ids.reverse();
            for t in ids {
                if let Some(top) = scene.topology(t) {
                    if pred(top.mesh()) {
                        return Some(top);
                    }
                }
            }
        }
        None
    }
    /// Resolve an object link (`@grid`, `@../dofs`) written in Data `name`.
    /// Read a mesh file with the scene's reader (see [`Scene::mesh_reader`]).
    pub fn read_mesh(&self, path: &str) -> Result<Mesh, String> {
        match self.scene.mesh_reader {
            Some(read) => read(path),
            None => Err(format!(
                "cannot read '{path}': no mesh reader is installed (the scene builder installs one)"
            )),
        }
    }

    pub fn linked(&self, link: &str) -> Option<Target> {
        let l = link.trim();
        let p = l.strip_prefix('@')?;
        self.scene.resolve_path(self.node, Some(self.id), p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_link_split() {
        assert_eq!(
            split_data_link("@../loader.position"),
            Some(("../loader", "position"))
        );
        assert_eq!(
            split_data_link("@box_roi.indices"),
            Some(("box_roi", "indices"))
        );
        assert_eq!(split_data_link("@[-1].indices"), Some(("[-1]", "indices")));
        assert_eq!(split_data_link("@../dofs"), None);
        assert_eq!(split_data_link("@.."), None);
    }

    #[test]
    fn per_role_lists_follow_additions_removals_and_moves() {
        let mut s = Scene::new();
        let root = s.add_node("root", None);
        let mo = |s: &mut Scene, name: &str| {
            s.add_component(
                root,
                name,
                AnyComponent::State(MechanicalObject::new(canape_types::DofType::Vec3)),
                None,
            )
        };
        let ids: Vec<ComponentId> = (0..5).map(|k| mo(&mut s, &format!("m{k}"))).collect();
        let scan = |s: &Scene, role: Role| -> Vec<ComponentId> {
            s.node(root)
                .components
                .iter()
                .copied()
                .filter(|c| s.info(*c).role == role)
                .collect()
        };
        let listed = |s: &Scene, role: Role| s.node_components(root, role).collect::<Vec<_>>();
        assert_eq!(listed(&s, Role::State), ids);
        s.remove_component(ids[2]).unwrap();
        s.move_component_first(ids[4]);
        assert_eq!(listed(&s, Role::State), scan(&s, Role::State));
        assert_eq!(
            listed(&s, Role::State),
            vec![ids[4], ids[0], ids[1], ids[3]]
        );
        assert!(listed(&s, Role::Mass).is_empty());
        // an index reused after removal joins the end of its role's list
        let again = mo(&mut s, "again");
        assert_eq!(again.index(), ids[2].index());
        assert_eq!(listed(&s, Role::State), scan(&s, Role::State));
    }

    #[test]
    fn path_resolution() {
        let mut s = Scene::new();
        let root = s.add_node("root", None);
        let a = s.add_node("A", Some(root));
        let b = s.add_node("B", Some(a));
        let mo = s.add_component(
            a,
            "dofs",
            AnyComponent::State(MechanicalObject::new(canape_types::DofType::Vec3)),
            None,
        );
        let mo2 = s.add_component(
            b,
            "x",
            AnyComponent::State(MechanicalObject::new(canape_types::DofType::Vec3)),
            None,
        );
        assert_eq!(
            s.resolve_path(b, None, "../dofs"),
            Some(Target::Component(mo))
        );
        assert_eq!(s.resolve_path(b, None, "dofs"), Some(Target::Component(mo)));
        assert_eq!(
            s.resolve_path(b, None, "/A/dofs"),
            Some(Target::Component(mo))
        );
        assert_eq!(s.resolve_path(b, None, "/root/A/B"), Some(Target::Node(b)));
        assert_eq!(s.resolve_path(b, Some(mo2), "[-1]"), None);
        assert_eq!(s.resolve_path(b, None, ".."), Some(Target::Node(a)));
        assert_eq!(s.resolve_path(b, None, "nothing"), None);
        assert_eq!(s.context_state(b), Some(mo2));
        assert_eq!(s.node_path(b), "/root/A/B");
    }
}
