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
use crate::diag::SourceLoc;
use crate::mesh::Mesh;
use crate::state::MechanicalObject;
use canape_types::Vec3;

mod context;
mod errors;
mod links;
mod moving;
mod paths;
mod removal;
pub use context::{InitContext, MeshFileError};
pub use errors::{EditError, SceneError};
pub use links::{Link, LinkError, LinkRole, ToLinearSolver, ToState, ToTopology};
pub use paths::DataLinkError;

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
    /// Data links (`data="@path.dataName"`): as written, and resolved when the component is
    /// initialised.
    pub data_links: Vec<DataLink>,
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

/// Reads a mesh file (a path already resolved by the builder) into a [`Mesh`]. The reader's
/// error type belongs to its crate (canape-io's `MeshReadError`), hence boxed.
pub type MeshReader = fn(&str) -> Result<Mesh, MeshReaderError>;

/// The error of a [`MeshReader`]: whatever typed error the installed reader returns.
pub type MeshReaderError = Box<dyn std::error::Error + Send + Sync>;

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
}

impl Scene {
    /// Number of scalars per entry of the Data a `@path.data` link reads (`DataKind::Reals(w)`),
    /// when it names a component's Data of that kind.
    pub fn link_width(&self, link: &DataLink) -> Option<usize> {
        let Some(Target::Component(c)) = link.source else {
            return None;
        };
        match self.component(c)?.data().field(link.source_data())?.kind {
            crate::data::DataKind::Reals(w) => Some(w),
            _ => None,
        }
    }
}

/// A Data whose value comes from another one (SOFA's parent Data: `data="@path.dataName"`).
/// The path is resolved once, when the component is initialised, into `source` (a generational
/// handle: a source removed later is refused as stale, never read in its place); values are
/// pulled through it at init and when an engine's outputs change.
#[derive(Clone, Debug, PartialEq)]
pub struct DataLink {
    /// The Data it sets.
    pub data: String,
    /// The link as written (`@path.dataName`).
    pub text: String,
    /// What the path named when the component was initialised (`None` before, or when it
    /// named nothing).
    pub source: Option<Target>,
}

impl DataLink {
    /// A link written for Data `data`, not resolved yet.
    pub fn new(data: impl Into<String>, text: impl Into<String>) -> Self {
        DataLink {
            data: data.into(),
            text: text.into(),
            source: None,
        }
    }

    /// The name of the Data it reads (after the path's last `.`).
    pub fn source_data(&self) -> &str {
        split_data_link(&self.text).map_or("", |(_, d)| d)
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

#[cfg(test)]
mod tests;
