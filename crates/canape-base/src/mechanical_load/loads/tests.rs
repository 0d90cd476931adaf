//! Unit tests of the mechanical loads.

use super::*;
use crate::test_support::{check_edit_changes, init_quiet, scene_with_state};
use canape_core::component::Component;
use canape_core::scene::{AnyComponent, NodeId, Scene};

/// A force field `c` with `attrs`, initialised in `node` of `scene`; init must report nothing.
fn init_ff<C: ForceField + Component + Clone + 'static>(
    scene: &mut Scene,
    node: NodeId,
    c: C,
    attrs: &[(&str, &str)],
) -> C {
    init_quiet(
        scene,
        node,
        c,
        |c| AnyComponent::ForceField(Box::new(c)),
        attrs,
    )
}

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
    let mut init =
        |attrs: &[(&str, &str)]| init_ff(&mut scene, root, ConstantForceField::new(), attrs);
    let c = init(before);
    let fresh = || init(&[before, after].concat());
    check_edit_changes(c, after, fresh, |c| forces(c, size), true)
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

/// What a force field gives at `x` with velocities `v`, as bits: the forces, then the
/// tangent applied to a vector and the assembled matrix (on the contacts of that `add_force`).
fn response_bits<F: ForceField>(ff: &mut F, x: &[f64], v: &[f64]) -> Vec<u64> {
    let n = x.len();
    let mut out = vec![0.0; n];
    ff.add_force(x, v, &mut out);
    let dx: Vec<f64> = (0..n).map(|i| (i % 3) as f64 * 0.2 - 0.1).collect();
    let mut df = vec![0.0; n];
    ff.add_dforce(&dx, &mut df, 1.5);
    out.extend(df);
    let mut tr = canape_core::matrix::Triplets::new(n);
    ff.add_k_to_matrix(&mut tr, 0.5, 0);
    out.extend(tr.entries.iter().map(|e| e.2));
    out.iter().map(|x| x.to_bits()).collect()
}

/// A PlaneForceField on a Vec3 state at `x`, initialised with `before`, then given `after`
/// while it runs: the reaction. When it is [`Reaction::Updated`] its forces and tangent must
/// equal bit for bit those of one initialised from scratch with `before` then `after`.
fn edit_plane(x: &[f64], before: &[(&str, &str)], after: &[(&str, &str)]) -> Reaction {
    let v: Vec<f64> = (0..x.len()).map(|i| 0.05 * i as f64 - 0.2).collect();
    let (mut scene, root) = scene_with_state(DofType::Vec3, x);
    let mut init =
        |attrs: &[(&str, &str)]| init_ff(&mut scene, root, PlaneForceField::new(), attrs);
    let c = init(before);
    let fresh = || init(&[before, after].concat());
    check_edit_changes(c, after, fresh, |c| response_bits(c, x, &v), false)
}

/// Editing d, stiffness, damping, maxForce or bilateral of a running PlaneForceField gives
/// the forces and tangent of one initialised with the new values; values init warns about
/// and other Data re-initialise it.
#[test]
fn edits_update_in_place_plane_force_field() {
    let up = Reaction::Updated;
    let x = [0.0, -0.5, 0.0, 1.0, 0.3, 0.0, 0.2, -0.1, 0.4];
    let plane = [("normal", "0 1 0"), ("d", "0"), ("stiffness", "100")];
    assert_eq!(edit_plane(&x, &plane, &[("stiffness", "250")]), up);
    assert_eq!(edit_plane(&x, &plane, &[("damping", "0.5")]), up);
    assert_eq!(edit_plane(&x, &plane, &[("d", "0.2")]), up);
    assert_eq!(edit_plane(&x, &plane, &[("maxForce", "10")]), up);
    assert_eq!(edit_plane(&x, &plane, &[("bilateral", "1")]), up);
    let bad = [("stiffness", "-3")];
    assert_eq!(edit_plane(&x, &plane, &bad), Reaction::Reinit);
    let turned = [("normal", "1 0 0")];
    assert_eq!(edit_plane(&x, &plane, &turned), Reaction::Reinit);
}

/// A TrianglePressureForceField on two triangles of a Vec3 state, initialised with `before`,
/// then given `after` while it runs: the reaction. When it is [`Reaction::Updated`] its forces
/// must equal bit for bit those of one initialised from scratch with `before` then `after`;
/// otherwise they must be those of before the edit.
fn edit_triangle_pressure(before: &[(&str, &str)], after: &[(&str, &str)]) -> Reaction {
    use canape_core::state::VecId;
    let rest = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.5, 0.0, 1.0, 1.0, 0.2];
    let (mut scene, root) = scene_with_state(DofType::Vec3, &rest);
    let mo = scene.context_state(root).unwrap();
    if let Some(st) = scene.state_mut(mo) {
        st.vec_mut(VecId::REST_POSITION).copy_from_slice(&rest);
    }
    let mut topo = crate::topology::MeshContainer::new("TriangleSetTopologyContainer");
    canape_core::component::Topology::mesh_mut(&mut topo).triangles = vec![[0, 1, 2], [1, 3, 2]];
    scene.add_component(root, "topo", AnyComponent::Topology(Box::new(topo)), None);
    let mut init = |attrs: &[(&str, &str)]| {
        init_ff(&mut scene, root, TrianglePressureForceField::new(), attrs)
    };
    let bits = |c: &mut TrianglePressureForceField| {
        let mut f = vec![0.0; rest.len()];
        c.add_force(&rest, &[], &mut f);
        f.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    };
    let c = init(before);
    let fresh = || init(&[before, after].concat());
    check_edit_changes(c, after, fresh, bits, true)
}

/// Editing the pressure of a running TrianglePressureForceField gives the forces of one
/// initialised with it; a pressure init rejects is refused; other Data re-initialise.
#[test]
fn edits_update_in_place_triangle_pressure() {
    let p = [("pressure", "0 0 2"), ("triangleList", "0 1")];
    let up = Reaction::Updated;
    assert_eq!(edit_triangle_pressure(&p, &[("pressure", "1 -0.5 3")]), up);
    let bad = edit_triangle_pressure(&p, &[("pressure", "1 2")]);
    assert!(matches!(bad, Reaction::Refused(_)), "{bad:?}");
    let fewer = [("triangleList", "1")];
    assert_eq!(edit_triangle_pressure(&p, &fewer), Reaction::Reinit);
}

/// LinearForceField's forces at a few times, as bits.
fn linear_forces(c: &mut LinearForceField) -> Vec<u64> {
    let mut out = Vec::new();
    for t in [0.25, 1.5, 3.0] {
        c.set_time(t);
        let mut f = vec![0.0; 9];
        c.add_force(&[], &[], &mut f);
        out.extend(f.iter().map(|v| v.to_bits()));
    }
    out
}

/// Editing the scale `force` of a running LinearForceField gives the forces of one
/// initialised with it; other Data re-initialise.
#[test]
fn edits_update_in_place_linear_force_scale() {
    let x: Vec<f64> = (0..9).map(|i| i as f64).collect();
    let (mut scene, root) = scene_with_state(DofType::Vec3, &x);
    let mut init =
        |attrs: &[(&str, &str)]| init_ff(&mut scene, root, LinearForceField::new(), attrs);
    let before = [
        ("points", "0 2"),
        ("times", "0 1 2"),
        ("forces", "0 0 0 1 2 3 -1 0 4"),
        ("force", "2"),
    ];
    let mut edit = |after: &[(&str, &str)]| {
        let c = init(&before);
        let fresh = || init(&[&before[..], after].concat());
        check_edit_changes(c, after, fresh, linear_forces, false)
    };
    assert_eq!(edit(&[("force", "0.75")]), Reaction::Updated);
    assert_eq!(edit(&[("points", "1")]), Reaction::Reinit);
}
