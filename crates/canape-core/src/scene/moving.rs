//! Moving a node (and its subtree) to another parent between steps (SOFA's `moveChild`).
//!
//! Components resolved their links and context (their state, their topologies, a mapping's
//! input) once, at init, and keep what they found. A move is accepted only when everything every
//! component uses resolves to the same components after it as before — links written with
//! relative paths (`@../dofs`), context lookups up the tree — so that no component silently keeps
//! a target its Data no longer name, and a later re-initialisation finds the same. Otherwise the
//! move is refused, naming the component and the link or context that would change, and the graph
//! is left as it was.

use super::{ComponentId, NodeId, Role, Scene, SceneError, Target};

/// What one component uses, resolved: (how, target).
type Uses = Vec<(String, Option<Target>)>;

impl Scene {
    /// Move node `id` with its subtree under `new_parent`, as its last child. Refused for a
    /// stale handle, the root, a move under itself or its subtree, and when a link or a context
    /// lookup would resolve differently afterwards ([`SceneError::WouldChange`]). The caller
    /// rebuilds what depends on the graph (solver groups, mapping order).
    pub fn move_node(&mut self, id: NodeId, new_parent: NodeId) -> Result<(), SceneError> {
        self.check_node(id)?;
        self.check_node(new_parent)?;
        let Some(old_parent) = self.node(id).parent else {
            return Err(SceneError::MoveRoot);
        };
        if self.subtree(id).contains(&new_parent) {
            return Err(SceneError::MoveUnderItself {
                node: self.node(id).name.clone(),
            });
        }
        if old_parent == new_parent {
            return Ok(());
        }
        let before = self.all_uses();
        let position = self
            .node(old_parent)
            .children
            .iter()
            .position(|c| *c == id)
            .expect("a node is among its parent's children");
        self.node_mut(old_parent).children.remove(position);
        self.node_mut(new_parent).children.push(id);
        self.node_mut(id).parent = Some(new_parent);
        let after = self.all_uses();
        let changed = before
            .iter()
            .zip(&after)
            .find_map(|((u, a), (_, b))| first_difference(a, b).map(|how| (*u, how)));
        if let Some((user, how)) = changed {
            // put the node back where it was
            self.node_mut(new_parent).children.pop();
            self.node_mut(old_parent).children.insert(position, id);
            self.node_mut(id).parent = Some(old_parent);
            return Err(SceneError::WouldChange {
                user: self.component_label(user),
                how,
            });
        }
        Ok(())
    }

    /// For every live component, in graph order, what it uses: its written links and its
    /// context (state, topologies, a mapping's parent state), each resolved.
    fn all_uses(&self) -> Vec<(ComponentId, Uses)> {
        self.component_ids()
            .map(|u| {
                let info = self.info(u);
                let node = info.node;
                let mut uses: Uses = Vec::new();
                for (l, t) in self.written_links(u) {
                    uses.push((format!("its link '@{l}'"), t));
                }
                if info.role != Role::State {
                    uses.push((
                        "its context state".into(),
                        self.context_state(node).map(Target::Component),
                    ));
                }
                if info.role == Role::Mapping {
                    let input = self.node(node).parent.and_then(|p| self.context_state(p));
                    uses.push(("its input state".into(), input.map(Target::Component)));
                }
                if info.role != Role::Topology {
                    for t in self.context_topologies(node) {
                        uses.push((TOPOLOGY.into(), Some(Target::Component(t))));
                    }
                }
                (u, uses)
            })
            .collect()
    }
}

const TOPOLOGY: &str = "a topology of its context";

/// How the uses `a` (before) and `b` (after) first differ, if they do. A component that had no
/// topology in its context built nothing from one: topologies it finds after the move are not a
/// change (a point mass moved under a meshed object).
fn first_difference(a: &Uses, b: &Uses) -> Option<String> {
    let is_topology = |u: &(String, Option<Target>)| u.0 == TOPOLOGY;
    let filtered: Uses;
    let b = if a.iter().any(is_topology) {
        b
    } else {
        filtered = b.iter().filter(|u| !is_topology(u)).cloned().collect();
        &filtered
    };
    if a == b {
        return None;
    }
    let k = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    a.get(k).or(b.get(k)).map(|(how, _)| how.clone())
}
