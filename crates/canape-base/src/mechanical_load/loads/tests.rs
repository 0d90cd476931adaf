//! Unit tests of the mechanical loads.

use super::*;
use crate::test_support::{init_in, scene_with_state};
use canape_core::component::Component;
use canape_core::scene::AnyComponent;

/// The forces a ConstantForceField adds to a zero vector of `size` values, as bits.
fn forces(c: &mut ConstantForceField, size: usize) -> Vec<u64> {
    let mut f = vec![0.0; size];
    c.add_force(&[], &[], &mut f);
    f.iter().map(|v| v.to_bits()).collect()
}

/// A ConstantForceField on 4 points of `dof` initialised with `before`, then given `after`
/// while it runs: the reaction. When it is [`Reaction::Updated`] its forces must equal bit
/// for bit those of a force field initialised from scratch with `before` then `after`;
/// otherwise they must be those of before the edit.
fn edit_constant(dof: DofType, before: &[(&str, &str)], after: &[(&str, &str)]) -> Reaction {
    let positions: Vec<f64> = (0..4 * dof.coord_size()).map(|i| i as f64 * 0.1).collect();
    let (mut scene, root) = scene_with_state(dof, &positions);
    let size = 4 * dof.deriv_size();
    let mut init = |attrs: &[(&str, &str)]| {
        let mut c = ConstantForceField::new();
        let diags = init_in(
            &mut scene,
            root,
            &mut c,
            |c| AnyComponent::ForceField(Box::new(c)),
            attrs,
        );
        assert!(diags.is_empty(), "{attrs:?}: {diags:?}");
        c
    };
    let mut c = init(before);
    let old = forces(&mut c, size);
    let versions = c.data().versions();
    for (k, v) in after {
        c.data_mut().set_str(k, v).unwrap();
    }
    let changed = c.data().changed_since(&versions);
    let reaction = c.data_changed(&changed);
    let got = forces(&mut c, size);
    if reaction == Reaction::Updated {
        let mut want = init(&[before, after].concat());
        assert_eq!(got, forces(&mut want, size), "{after:?}");
        assert_ne!(got, old, "{after:?} changed nothing");
    } else {
        assert_eq!(got, old, "{after:?} ({reaction:?}) changed the forces");
    }
    reaction
}

/// Editing forces, force, totalForce or indices of a running ConstantForceField gives the
/// forces an init with the new values gives, with SOFA's precedence (totalForce, then one
/// force per index, then one force for all); what init reports an error for is refused;
/// no force at all (init warns) and other Data re-initialise it.
#[test]
fn constant_force_edits_update_in_place() {
    let v3 = DofType::Vec3;
    let up = Reaction::Updated;
    let one = [("force", "1 2 3")];
    assert_eq!(edit_constant(v3, &one, &[("force", "0.5 -1 0.25")]), up);
    assert_eq!(edit_constant(v3, &one, &[("indices", "1 3")]), up);
    // totalForce wins over force and forces, and leaves them when cleared
    let total = [("totalForce", "3 0 -1.5")];
    assert_eq!(edit_constant(v3, &one, &total), up);
    let one_and_total = [("force", "1 2 3"), ("totalForce", "3 0 -1.5")];
    assert_eq!(edit_constant(v3, &one_and_total, &[("totalForce", "")]), up);
    let on = [("indices", "0 2"), ("totalForce", "3 0 -1.5")];
    assert_eq!(edit_constant(v3, &on, &[("indices", "0 1 3")]), up);
    // one force per index, or one for all given as `forces`
    let per_index = [("indices", "0 2"), ("forces", "1 0 0 0 2 0")];
    assert_eq!(edit_constant(v3, &one, &per_index), up);
    assert_eq!(edit_constant(v3, &per_index, &[("forces", "0 0 7")]), up);
    // forces that fit neither the indices nor one point leave `force` to act, as in init
    let misfit = [("indices", "0 1"), ("forces", "1 2 3 4 5 6 7 8 9")];
    assert_eq!(edit_constant(v3, &one, &misfit), up);
    let rigid = [("force", "1 2 3 0.1 0.2 0.3")];
    assert_eq!(
        edit_constant(DofType::Rigid3, &rigid, &[("indices", "3")]),
        up
    );
    // init's errors are refused
    for bad in [
        [("indices", "1 4")].as_slice(),
        &[("force", "1 2")],
        &[("totalForce", "1 2 3 4")],
        &[("indices", "0 1 3")],
    ] {
        let r = edit_constant(v3, &per_index, bad);
        assert!(matches!(r, Reaction::Refused(_)), "{bad:?}: {r:?}");
    }
    // no force (init warns) and other Data go through init
    assert_eq!(edit_constant(v3, &one, &[("force", "")]), Reaction::Reinit);
    let arrows = [("showArrowSize", "2")];
    assert_eq!(edit_constant(v3, &one, &arrows), Reaction::Reinit);
}
