//! Removing components and nodes between steps: what a live component still uses is refused
//! ([`Scene::user_of`]), handles of what was removed become stale.

use super::{
    split_data_link, AnyComponent, ComponentId, NodeId, Role, Scene, SceneError, Slot, Target,
};
use crate::data::Value;

impl Scene {
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
            for (l, t) in self.written_links(u) {
                if let Some(t) = t {
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

    /// What component `u`'s links name (each with its text, without the `@`): its Data links
    /// by the handle resolved at its init (by their path before), and the object links written
    /// in its Data values by their path.
    pub(super) fn written_links(&self, u: ComponentId) -> Vec<(String, Option<Target>)> {
        let info = self.info(u);
        let node = info.node;
        let resolve = |l: &str| {
            let l = l.trim().trim_start_matches('@');
            let path = split_data_link(l).map_or(l, |(p, _)| p);
            (l.to_string(), self.resolve_path(node, Some(u), path))
        };
        let mut out: Vec<(String, Option<Target>)> = info
            .data_links
            .iter()
            .map(|d| match d.source {
                Some(t) => (d.text.trim().trim_start_matches('@').to_string(), Some(t)),
                None => resolve(&d.text),
            })
            .collect();
        if let Some(c) = self.component(u) {
            for f in c.data().fields() {
                match &f.value {
                    Value::Str(t) if t.trim_start().starts_with('@') => out.push(resolve(t)),
                    Value::Words(w) => {
                        out.extend(w.iter().filter(|t| t.starts_with('@')).map(|t| resolve(t)))
                    }
                    _ => {}
                }
            }
        }
        out
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
}
