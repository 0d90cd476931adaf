//! Changing the graph between steps: adding, removing and moving nodes and components, the
//! gravity and the time step; the solver groups, the mapping order, the loop and the
//! controllers are recomputed, and unchanged groups keep their work.

use super::{Change, Simulation};
use crate::group::{build_groups, GroupWork};
use crate::init::init_scene;
use canape_core::diag::{Diagnostic, Diagnostics};
use canape_core::scene::{AnyComponent, ComponentId, EditError, NodeId, SceneError, Slot};

impl Simulation {
    /// Recompute the solver groups (after the scene's components or context changed) and start
    /// their work buffers afresh.
    pub(super) fn rebuild_groups(&mut self) {
        self.groups = build_groups(&self.scene);
        self.map_ends = Self::mapping_ends(&self.scene);
        self.works = vec![GroupWork::default(); self.groups.len()];
    }

    /// After components were added or removed: initialise the new ones, recompute the solver
    /// groups, the mapping order, the animation loop and the controllers. A group equal to one
    /// before and using none of the `changed` slots keeps its work (assembly patterns, buffers);
    /// the others start afresh. New mapped states get their positions from their inputs.
    pub(super) fn structure_changed(&mut self, changed: &[Slot]) {
        let mut diags = Diagnostics::default();
        init_scene(&mut self.scene, &mut diags);
        self.diagnostics.extend(diags);
        let groups = build_groups(&self.scene);
        let old_groups = std::mem::take(&mut self.groups);
        let mut old_works: Vec<Option<GroupWork>> = std::mem::take(&mut self.works)
            .into_iter()
            .map(Some)
            .collect();
        // a group keeps its work when the group of the same solver node is unchanged
        let by_node: std::collections::BTreeMap<NodeId, usize> = old_groups
            .iter()
            .enumerate()
            .map(|(k, g)| (g.node, k))
            .collect();
        let mut works = Vec::with_capacity(groups.len());
        for g in &groups {
            let keep = by_node
                .get(&g.node)
                .copied()
                .filter(|&k| old_groups[k] == *g && !changed.iter().any(|s| g.uses(*s)));
            works.push(keep.and_then(|k| old_works[k].take()).unwrap_or_default());
        }
        self.groups = groups;
        self.works = works;
        self.map_ends = Self::mapping_ends(&self.scene);
        self.find_loop_and_controllers(false);
        self.propagate_mappings();
    }

    /// Add a node under `parent` to a running simulation (its components come with
    /// [`Simulation::add_component`]).
    pub fn add_node(&mut self, parent: NodeId, name: &str) -> Result<NodeId, SceneError> {
        self.scene.check_node(parent)?;
        Ok(self.scene.add_node(name, Some(parent)))
    }

    /// Remove a component between steps: refused for a stale handle or while another component
    /// uses it (see [`Scene::user_of`]). The groups that used it are rebuilt; the others keep
    /// their work.
    pub fn remove_component(&mut self, id: ComponentId) -> Result<AnyComponent, SceneError> {
        let slot = {
            self.scene.check_component(id)?;
            self.scene.info(id).slot
        };
        let c = self.scene.remove_component(id)?;
        self.structure_changed(&[slot]);
        Ok(c)
    }

    /// Remove a node and everything below it between steps (refused for the root, a stale
    /// handle, or when a component outside the subtree uses one inside).
    pub fn remove_node(&mut self, id: NodeId) -> Result<Vec<AnyComponent>, SceneError> {
        self.scene.check_node(id)?;
        let slots: Vec<Slot> = self
            .scene
            .subtree(id)
            .iter()
            .flat_map(|n| self.scene.node(*n).components.clone())
            .map(|c| self.scene.info(c).slot)
            .collect();
        let out = self.scene.remove_node(id)?;
        self.structure_changed(&slots);
        Ok(out)
    }

    /// Move a node and its subtree under another parent between steps (SOFA's `moveChild`):
    /// refused for a stale handle, the root, a move under its own subtree, or when a link or a
    /// context lookup of any component would resolve differently (see [`Scene::move_node`]).
    /// The solver groups and the mapping order are recomputed; groups unchanged by the move keep
    /// their work. States keep their vectors.
    pub fn move_node(&mut self, id: NodeId, new_parent: NodeId) -> Result<(), SceneError> {
        self.scene.move_node(id, new_parent)?;
        let slots: Vec<Slot> = self
            .scene
            .subtree(id)
            .iter()
            .flat_map(|n| self.scene.node(*n).components.clone())
            .map(|c| self.scene.info(c).slot)
            .collect();
        self.structure_changed(&slots);
        Ok(())
    }

    /// Initialise what was added to the scene since the last change (for instance a subtree a
    /// builder added under a node) and rebuild what depends on the graph.
    pub fn components_added(&mut self, ids: &[ComponentId]) {
        let slots: Vec<Slot> = ids
            .iter()
            .filter(|c| self.scene.check_component(**c).is_ok())
            .map(|c| self.scene.info(*c).slot)
            .collect();
        self.structure_changed(&slots);
    }

    /// Changes asked for by controllers during the step, in the order asked; a refused one is
    /// reported and the others still apply.
    pub(super) fn apply_pending(&mut self) {
        for change in std::mem::take(&mut self.pending) {
            let r = match change {
                Change::AddComponent {
                    node,
                    name,
                    component,
                } => self
                    .add_component(node, &name, component)
                    .map(|(_, d)| d.into_iter().for_each(|d| self.diagnostics.push(d))),
                Change::RemoveComponent(id) => self.remove_component(id).map(|_| ()),
                Change::RemoveNode(id) => self.remove_node(id).map(|_| ()),
            };
            if let Err(e) = r {
                self.diagnostics.push(Diagnostic::error(format!(
                    "change asked during the step: {e}"
                )));
            }
        }
    }

    /// Change the root gravity (every node's, as SOFA takes the root's) and rebuild the groups,
    /// which hold the gravity their masses use.
    pub fn set_gravity(&mut self, g: canape_types::Vec3) -> Result<(), EditError> {
        if g.iter().any(|v| !v.is_finite()) {
            return Err(EditError::Invalid {
                what: "gravity",
                expected: "three finite numbers",
            });
        }
        for n in &mut self.scene.nodes {
            n.gravity = g;
        }
        self.rebuild_groups();
        Ok(())
    }

    /// Change the time step used by `step`.
    pub fn set_dt(&mut self, dt: f64) -> Result<(), EditError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(EditError::Invalid {
                what: "dt",
                expected: "a positive, finite number",
            });
        }
        self.dt = dt;
        if let Some(root) = self.scene.nodes.first_mut() {
            root.dt = dt;
        }
        Ok(())
    }

    /// Add a component to an initialised simulation between steps (e.g. an interaction force
    /// field), initialise it and update the solver groups it joins. Its init diagnostics are
    /// returned (and not kept in `diagnostics`).
    pub fn add_component(
        &mut self,
        node: NodeId,
        name: &str,
        c: AnyComponent,
    ) -> Result<(ComponentId, Vec<Diagnostic>), SceneError> {
        self.scene.check_node(node)?;
        let id = self.scene.add_component(node, name, c, None);
        let mut diags = Diagnostics::default();
        crate::init::init_component(&mut self.scene, id, &mut diags, &mut Vec::new());
        let slot = self.scene.info(id).slot;
        self.structure_changed(&[slot]);
        Ok((id, diags.iter().cloned().collect()))
    }
}
