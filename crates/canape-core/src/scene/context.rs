//! What a component's `init` sees of the scene ([`InitContext`]): its node, its context's state
//! and topologies, links resolved from its node, and where to report problems.

use super::{ComponentId, NodeId, Role, Scene};
use crate::component::Topology;
use crate::diag::{Diagnostic, Diagnostics, SourceLoc};
use crate::mesh::Mesh;
use crate::state::MechanicalObject;
use canape_types::Vec3;

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
    /// Read a mesh file with the scene's reader (see [`Scene::mesh_reader`]).
    pub fn read_mesh(&self, path: &str) -> Result<Mesh, MeshFileError> {
        match self.scene.mesh_reader {
            Some(read) => read(path).map_err(MeshFileError::Read),
            None => Err(MeshFileError::NoReader {
                path: path.to_string(),
            }),
        }
    }
}

/// Why [`InitContext::read_mesh`] returned no mesh.
#[derive(Debug, thiserror::Error)]
pub enum MeshFileError {
    #[error("cannot read '{path}': no mesh reader is installed (the scene builder installs one)")]
    NoReader { path: String },
    /// The installed reader failed: its own error (canape-io's `MeshReadError`), shown as is.
    #[error(transparent)]
    Read(super::MeshReaderError),
}
