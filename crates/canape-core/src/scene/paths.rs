//! Link paths: `@name`, `@../node/name`, `@/root/path`, `@name.data`, resolved from a node the way
//! SOFA's PathResolver does, and reading a linked Data.

use super::{split_data_link, ComponentId, DataLink, NodeId, Scene, Target};
use crate::data::Value;

impl Scene {
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
    ) -> Result<Value, DataLinkError> {
        let (path, data) = split_data_link(link).ok_or_else(|| DataLinkError::NotDataLink {
            link: link.to_string(),
        })?;
        let target =
            self.resolve_path(node, from, path)
                .ok_or_else(|| DataLinkError::NotFound {
                    link: link.to_string(),
                    path: path.to_string(),
                })?;
        self.read_target(target, data, link)
    }

    /// Resolve the path of a component's Data link once, from the component (`from`, in
    /// `node`): what it names, or why it names nothing.
    pub fn resolve_data_link(
        &self,
        node: NodeId,
        from: ComponentId,
        link: &DataLink,
    ) -> Result<Target, DataLinkError> {
        let text = &link.text;
        let (path, _) = split_data_link(text).ok_or_else(|| DataLinkError::NotDataLink {
            link: text.to_string(),
        })?;
        self.resolve_path(node, Some(from), path)
            .ok_or_else(|| DataLinkError::NotFound {
                link: text.to_string(),
                path: path.to_string(),
            })
    }

    /// Read the value of a resolved Data link (see [`Scene::resolve_data_link`]) from what it
    /// named; a source removed since is refused.
    pub fn read_data_link(&self, link: &DataLink) -> Result<Value, DataLinkError> {
        let target = link.source.ok_or_else(|| DataLinkError::Unresolved {
            link: link.text.clone(),
        })?;
        if let Target::Component(c) = target {
            self.check_component(c)
                .map_err(|_| DataLinkError::Removed {
                    link: link.text.clone(),
                })?;
        }
        self.read_target(target, link.source_data(), &link.text)
    }

    /// Read Data `data` of `target` for the link `link` (for messages).
    fn read_target(&self, target: Target, data: &str, link: &str) -> Result<Value, DataLinkError> {
        let id = match target {
            Target::Component(c) => c,
            Target::Node(n) => {
                // a node: SOFA reads the node's Data; the only ones are context Data
                let nd = self.node(n);
                return match data {
                    "gravity" => Ok(Value::Reals(vec![nd.gravity.x, nd.gravity.y, nd.gravity.z])),
                    "dt" => Ok(Value::Real(nd.dt)),
                    "name" => Ok(Value::Str(nd.name.clone())),
                    _ => Err(DataLinkError::NoNodeData {
                        link: link.to_string(),
                        node: nd.name.clone(),
                        data: data.to_string(),
                    }),
                };
            }
        };
        let c = self.component(id).ok_or_else(|| DataLinkError::Circular {
            link: link.to_string(),
        })?;
        if c.data().field(data).is_none() {
            return Err(DataLinkError::NoData {
                link: link.to_string(),
                component: self.component_label(id),
                data: data.to_string(),
            });
        }
        c.read_data(data).ok_or_else(|| DataLinkError::Unreadable {
            link: link.to_string(),
            data: data.to_string(),
        })
    }
}

/// Why a Data link (`@path.dataName`) could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DataLinkError {
    #[error("'{link}' does not name a Data (expected @path.dataName)")]
    NotDataLink { link: String },
    #[error("link '{link}': no object or node at '{path}'")]
    NotFound { link: String, path: String },
    #[error("link '{link}': node '{node}' has no Data '{data}'")]
    NoNodeData {
        link: String,
        node: String,
        data: String,
    },
    #[error("link '{link}': the target is being initialised (circular link)")]
    Circular { link: String },
    #[error("link '{link}': {component} has no Data '{data}'")]
    NoData {
        link: String,
        component: String,
        data: String,
    },
    #[error("link '{link}': cannot read Data '{data}'")]
    Unreadable { link: String, data: String },
    #[error("link '{link}': not resolved yet (its component is not initialised)")]
    Unresolved { link: String },
    #[error("link '{link}': the component it named was removed")]
    Removed { link: String },
}
