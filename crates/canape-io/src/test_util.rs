//! What the edit tests of the components writing files (VTKExporter, MeshExporter, Monitor,
//! WriteState) share: a read-only view of the scene for their events, their initialisation
//! beside a state, an edit and the reaction it gets, a fresh folder for their files and the
//! comparison of two of them.

use canape_core::component::{Component, Reaction, SceneControl};
use canape_core::diag::Diagnostics;
use canape_core::scene::{
    AnyComponent, ComponentId, EditError, InitContext, NodeId, Scene, SceneError,
};
use canape_core::state::MechanicalObject;
use std::path::{Path, PathBuf};

/// The scene as a controller sees it, read only: the components tested here edit nothing.
pub(crate) struct Control<'a>(pub &'a Scene);

impl SceneControl for Control<'_> {
    fn scene(&self) -> &Scene {
        self.0
    }
    fn set_data(&mut self, _: ComponentId, _: &str, _: &str) -> Result<(), EditError> {
        unreachable!("the component under test edits no Data")
    }
    fn state_mut(&mut self, _: ComponentId) -> Option<&mut MechanicalObject> {
        None
    }
    fn add_component(&mut self, _: NodeId, _: &str, _: AnyComponent) -> Result<(), SceneError> {
        unreachable!("the component under test adds nothing")
    }
    fn remove_component(&mut self, _: ComponentId) -> Result<(), SceneError> {
        unreachable!("the component under test removes nothing")
    }
    fn remove_node(&mut self, _: NodeId) -> Result<(), SceneError> {
        unreachable!("the component under test removes nothing")
    }
}

/// Set `attrs` on `c`, then initialise it in `node` of `scene`, which must report no error.
/// The component is not in the scene: `id` (a state's) stands for its own, which only
/// diagnostics and the default file names use.
pub(crate) fn init_in<C: Component>(
    c: &mut C,
    scene: &Scene,
    node: NodeId,
    id: ComponentId,
    attrs: &[(&str, &str)],
) {
    for (k, v) in attrs {
        c.data_mut().set_str(k, v).unwrap();
    }
    let mut diags = Diagnostics::default();
    c.init(&mut InitContext {
        scene,
        node,
        id,
        diags: &mut diags,
    });
    assert!(!diags.has_errors(), "{diags:?}");
}

/// Set `edits` on an initialised `c` and return how it reacts to them.
pub(crate) fn edit<C: Component>(c: &mut C, edits: &[(&str, &str)]) -> Reaction {
    let v0 = c.data().versions();
    for (k, v) in edits {
        c.data_mut().set_str(k, v).unwrap();
    }
    c.data_changed(&c.data().changed_since(&v0))
}

/// A fresh folder for the files of the test `tag` (in the system's temporary folder).
pub(crate) fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("canape-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The text of the files `a` and `b`, which must be the same.
pub(crate) fn same_text(a: &Path, b: &Path) -> String {
    let read =
        |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let (ta, tb) = (read(a), read(b));
    assert_eq!(ta, tb, "{} and {} differ", a.display(), b.display());
    ta
}
