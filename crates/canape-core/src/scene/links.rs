//! Typed object links: a Data holding `@path` to another component, resolved once at init into
//! a [`Link`] to a component of a given role. A link that names nothing, or a component of
//! another role, is a [`LinkError`] naming the Data, the link and what it found.

use super::{ComponentId, InitContext, Role, Target};
use crate::data::{Data, DataTable, Text};
use std::marker::PhantomData;

/// The role a typed link points at.
pub trait LinkRole {
    const ROLE: Role;
    /// What the role is called in messages ("a topology").
    const WHAT: &'static str;
}

/// Links to a mechanical state (MechanicalObject).
pub struct ToState;
/// Links to a topology (container or grid).
pub struct ToTopology;
/// Links to a linear solver.
pub struct ToLinearSolver;

impl LinkRole for ToState {
    const ROLE: Role = Role::State;
    const WHAT: &'static str = "a MechanicalObject";
}
impl LinkRole for ToTopology {
    const ROLE: Role = Role::Topology;
    const WHAT: &'static str = "a topology";
}
impl LinkRole for ToLinearSolver {
    const ROLE: Role = Role::LinearSolver;
    const WHAT: &'static str = "a linear solver";
}

/// A link resolved to a component of role `R`.
pub struct Link<R> {
    id: ComponentId,
    _role: PhantomData<fn() -> R>,
}

impl<R> Clone for Link<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for Link<R> {}
impl<R> std::fmt::Debug for Link<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Link({})", self.id)
    }
}
impl<R> PartialEq for Link<R> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl<R> Link<R> {
    /// The component linked to.
    pub fn id(self) -> ComponentId {
        self.id
    }
}

/// Why an object link was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LinkError {
    #[error("{data}='{link}' is not a link (write '@name' or '@path/to/name')")]
    NotALink { data: &'static str, link: String },
    #[error("{data}='{link}' names nothing in the scene")]
    NotFound { data: &'static str, link: String },
    #[error("{data}='{link}' names {found}, not {expected}")]
    WrongRole {
        data: &'static str,
        link: String,
        found: String,
        expected: &'static str,
    },
}

impl InitContext<'_> {
    /// Resolve the object link written in Data `d` of `table` to a component of role `R`:
    /// `Ok(None)` when the Data is empty (the component then uses its context).
    pub fn link<R: LinkRole>(
        &self,
        table: &DataTable,
        d: Data<Text>,
    ) -> Result<Option<Link<R>>, LinkError> {
        let field = &table.fields()[d.index()];
        self.link_text::<R>(field.name, table.get(d))
    }

    /// As [`InitContext::link`], for a component whose Data are not declared by a schema: the
    /// Data named `name` (an undeclared name reads as empty).
    pub fn link_named<R: LinkRole>(
        &self,
        table: &DataTable,
        name: &'static str,
    ) -> Result<Option<Link<R>>, LinkError> {
        self.link_text::<R>(name, table.str(name))
    }

    /// As [`InitContext::link`], for the text `text` of Data `data` (a link read by hand).
    pub fn link_text_of<R: LinkRole>(
        &self,
        data: &'static str,
        text: &str,
    ) -> Result<Option<Link<R>>, LinkError> {
        self.link_text::<R>(data, text)
    }

    /// The state an object link names — a MechanicalObject, or a node, meaning its state (SOFA's
    /// `object1="@node"` form of an interaction's ends) — for the text of Data `data`;
    /// `Ok(None)` when the text is empty.
    pub fn link_state_or_node(
        &self,
        data: &'static str,
        text: &str,
    ) -> Result<Option<Link<ToState>>, LinkError> {
        self.link_or_node::<ToState>(data, text, "it has no MechanicalObject", |c| c.next())
    }

    /// The topology an object link names — a topology, or a node, meaning the last topology of
    /// that node (a topological mapping's `input="@node"`) — for the text of Data `data`;
    /// `Ok(None)` when the text is empty.
    pub fn link_topology_or_node(
        &self,
        data: &'static str,
        text: &str,
    ) -> Result<Option<Link<ToTopology>>, LinkError> {
        self.link_or_node::<ToTopology>(data, text, "it has no topology", |c| c.last())
    }

    /// A link of role `R` that may also name a node: the component `pick` takes among the
    /// node's components of that role (`none` says why a node without one is refused).
    fn link_or_node<R: LinkRole>(
        &self,
        data: &'static str,
        text: &str,
        none: &'static str,
        pick: impl FnOnce(&mut dyn Iterator<Item = ComponentId>) -> Option<ComponentId>,
    ) -> Result<Option<Link<R>>, LinkError> {
        let trimmed = text.trim();
        if let Some(Target::Node(n)) = trimmed
            .strip_prefix('@')
            .and_then(|p| self.scene.resolve_path(self.node, Some(self.id), p))
        {
            return match pick(&mut self.scene.node_components(n, R::ROLE)) {
                Some(c) => Ok(Some(Link {
                    id: c,
                    _role: PhantomData,
                })),
                None => Err(LinkError::WrongRole {
                    data,
                    link: trimmed.to_string(),
                    found: format!("the node '{}' ({none})", self.scene.node(n).name),
                    expected: R::WHAT,
                }),
            };
        }
        self.link_text::<R>(data, text)
    }

    /// The collision model an object link names, for the text of Data `data` (one word of a
    /// list); `Ok(None)` when the text is empty.
    pub fn link_collision_model(
        &self,
        data: &'static str,
        text: &str,
    ) -> Result<Option<ComponentId>, LinkError> {
        self.resolve_link(data, text, "a collision model", |c| {
            matches!(self.scene.info(c).slot, super::Slot::Passive(i)
                if self.scene.passives[i].as_ref().is_some_and(|p| p.collision_model().is_some()))
        })
    }

    /// The component an object link names, for the text of Data `data`, when it is of one of
    /// `classes` (`what` names them in messages: "an intersection method"); `Ok(None)` when
    /// the text is empty. For links whose target is known by its class rather than its role
    /// (a collision pipeline's settings, a solver's preconditioner).
    pub fn link_class(
        &self,
        data: &'static str,
        text: &str,
        classes: &[&str],
        what: &'static str,
    ) -> Result<Option<ComponentId>, LinkError> {
        self.resolve_link(data, text, what, |c| {
            classes.contains(&self.scene.info(c).class)
        })
    }

    fn link_text<R: LinkRole>(
        &self,
        data: &'static str,
        text: &str,
    ) -> Result<Option<Link<R>>, LinkError> {
        let found =
            self.resolve_link(data, text, R::WHAT, |c| self.scene.info(c).role == R::ROLE)?;
        Ok(found.map(|id| Link {
            id,
            _role: PhantomData,
        }))
    }

    /// The component the link `text` of Data `data` names, when `accept` takes it (`what`
    /// names the expected kind in messages); `Ok(None)` for an empty text.
    fn resolve_link(
        &self,
        data: &'static str,
        text: &str,
        what: &'static str,
        accept: impl Fn(ComponentId) -> bool,
    ) -> Result<Option<ComponentId>, LinkError> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let Some(path) = text.strip_prefix('@') else {
            return Err(LinkError::NotALink {
                data,
                link: text.to_string(),
            });
        };
        match self.scene.resolve_path(self.node, Some(self.id), path) {
            Some(Target::Component(c)) if accept(c) => Ok(Some(c)),
            Some(Target::Component(c)) => Err(LinkError::WrongRole {
                data,
                link: text.to_string(),
                found: self.scene.component_label(c),
                expected: what,
            }),
            Some(Target::Node(n)) => Err(LinkError::WrongRole {
                data,
                link: text.to_string(),
                found: format!("the node '{}'", self.scene.node(n).name),
                expected: what,
            }),
            None => Err(LinkError::NotFound {
                data,
                link: text.to_string(),
            }),
        }
    }
}

impl super::Scene {
    /// The topology a typed link points at (None while it is being initialised).
    pub fn linked_topology(&self, l: Link<ToTopology>) -> Option<&dyn crate::component::Topology> {
        self.topology(l.id)
    }
    /// The state a typed link points at.
    pub fn linked_state(&self, l: Link<ToState>) -> Option<&crate::state::MechanicalObject> {
        self.state(l.id)
    }
}
