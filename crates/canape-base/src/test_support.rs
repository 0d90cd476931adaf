//! Test support shared by this crate's unit tests: a component initialised in a small scene of
//! its own (alone, or beside a state), as the simulation's init would.

use canape_core::component::Component;
use canape_core::diag::Diagnostics;
use canape_core::scene::{AnyComponent, InitContext, NodeId, Scene};
use canape_core::state::{MechanicalObject, VecId};
use canape_types::DofType;

/// A one-node scene (its root) holding a state of `dof` at `positions`, named "dofs".
pub fn scene_with_state(dof: DofType, positions: &[f64]) -> (Scene, NodeId) {
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    let mut mo = MechanicalObject::new(dof);
    mo.resize(positions.len() / dof.coord_size());
    mo.vec_mut(VecId::POSITION).copy_from_slice(positions);
    scene.add_component(root, "dofs", AnyComponent::State(mo), None);
    (scene, root)
}

/// Set `attrs` on `c` (each must parse), add a copy of it (`wrap` gives its role) to `node` of
/// `scene` and run its init there: the diagnostics it gave.
pub fn init_in<C: Component + Clone + 'static>(
    scene: &mut Scene,
    node: NodeId,
    c: &mut C,
    wrap: impl FnOnce(C) -> AnyComponent,
    attrs: &[(&str, &str)],
) -> Diagnostics {
    for (k, v) in attrs {
        c.data_mut().set_str(k, v).unwrap();
    }
    let id = scene.add_component(node, "component", wrap(c.clone()), None);
    let mut diags = Diagnostics::default();
    let mut ctx = InitContext {
        scene,
        node,
        id,
        diags: &mut diags,
    };
    c.init(&mut ctx);
    diags
}
