//! Test support shared by this crate's unit tests: a component initialised in a small scene of
//! its own (alone, or beside a state), as the simulation's init would, and edited while it
//! runs, the edit checked against an init from scratch with the new values.

use canape_core::component::{Component, Reaction};
use canape_core::diag::Diagnostics;
use canape_core::scene::{AnyComponent, InitContext, NodeId, Scene};
use canape_core::state::{MechanicalObject, VecId};
use canape_types::DofType;
use std::fmt::Debug;

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

/// [`init_in`] on `c`, which must report nothing: the component initialised.
pub fn init_quiet<C: Component + Clone + 'static>(
    scene: &mut Scene,
    node: NodeId,
    mut c: C,
    wrap: impl FnOnce(C) -> AnyComponent,
    attrs: &[(&str, &str)],
) -> C {
    let diags = init_in(scene, node, &mut c, wrap, attrs);
    assert!(diags.is_empty(), "{attrs:?}: {diags:?}");
    c
}

/// Give `c` the values `after` (each must parse) while it runs: its reaction to the change.
pub fn edit<C: Component + ?Sized>(c: &mut C, after: &[(&str, &str)]) -> Reaction {
    let versions = c.data().versions();
    for (k, v) in after {
        c.data_mut().set_str(k, v).unwrap();
    }
    let changed = c.data().changed_since(&versions);
    c.data_changed(&changed)
}

/// What became of an edit checked by [`check_edit`].
#[derive(Debug)]
pub struct Edited {
    /// The component's reaction.
    pub reaction: Reaction,
    /// Whether what the component gives changed (false when that was not read again).
    pub changed: bool,
}

/// The check of an edit of `c` (initialised, maybe run) with `after`, `bits` reading what it
/// gives (as bits, or integers: compared exactly). When the reaction is [`Reaction::Updated`],
/// it must give what `fresh` (initialised from scratch with the new values) gives; otherwise,
/// with `kept`, it must give what it gave before the edit (without, it is not read again).
pub fn check_edit<C: Component, B: PartialEq + Debug>(
    mut c: C,
    after: &[(&str, &str)],
    fresh: impl FnOnce() -> C,
    mut bits: impl FnMut(&mut C) -> B,
    kept: bool,
) -> Edited {
    let old = bits(&mut c);
    let reaction = edit(&mut c, after);
    let updated = reaction == Reaction::Updated;
    if !updated && !kept {
        return Edited {
            reaction,
            changed: false,
        };
    }
    let got = bits(&mut c);
    if updated {
        assert_eq!(got, bits(&mut fresh()), "{after:?}");
    } else {
        assert_eq!(got, old, "{after:?} ({reaction:?}) changed what it gives");
    }
    Edited {
        reaction,
        changed: got != old,
    }
}

/// [`check_edit`] of an edit that must change what `c` gives when it is taken in place:
/// the reaction.
pub fn check_edit_changes<C: Component, B: PartialEq + Debug>(
    c: C,
    after: &[(&str, &str)],
    fresh: impl FnOnce() -> C,
    bits: impl FnMut(&mut C) -> B,
    kept: bool,
) -> Reaction {
    let e = check_edit(c, after, fresh, bits, kept);
    if e.reaction == Reaction::Updated {
        assert!(e.changed, "{after:?} changed nothing");
    }
    e.reaction
}
