//! Tests of the spring force fields: in-place edits of their coefficients.

use super::*;
use crate::element::edit_check;
use canape_core::mesh::Mesh;

/// Editing `stiffness`, `damping` or `rayleighStiffness` of running springs updates them in
/// place to exactly what an init with the new values gives (listed springs, springs from
/// indices with one value per spring, the bending springs); MeshSpringForceField, whose
/// coefficients are divided by rest lengths, and edits of other Data re-initialise.
#[test]
fn spring_coefficient_edits_update_in_place() {
    use canape_core::component::Reaction;
    // a bumpy 3 × 2 sheet: two quads, four triangles
    let rest = [
        0.0, 0.0, 0.0, 1.0, 0.0, 0.1, 2.0, 0.0, 0.0, 0.0, 1.0, 0.05, 1.0, 1.0, -0.1, 2.0, 1.1, 0.0,
    ];
    let quads = Mesh {
        quads: vec![[0, 1, 4, 3], [1, 2, 5, 4]],
        ..Default::default()
    };
    let triangles = Mesh {
        triangles: vec![[0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4]],
        ..Default::default()
    };
    let mut seed = 9;
    let x: Vec<f64> = crate::fd_check::rigidly_moved(&rest)
        .iter()
        .map(|v| v + 0.1 * crate::fd_check::rnd(&mut seed))
        .collect();
    let up = Reaction::Updated;
    let edit =
        |make: fn() -> SpringForceField,
         mesh: &Mesh,
         before: &[(&str, &str)],
         after: &[(&str, &str)]| { edit_check::edit(make, &rest, mesh, before, after, &x) };

    // springs from indices: one stiffness and damping per spring, or the first for all
    let indexed = [
        ("indices1", "0 1 2 3"),
        ("indices2", "4 5 3 1"),
        ("stiffness", "100 200 300"),
        ("damping", "1 2"),
        ("lengths", "0.5 1"),
        ("rayleighStiffness", "0.1"),
    ];
    let plain = SpringForceField::new;
    assert_eq!(
        edit(plain, &quads, &indexed, &[("stiffness", "150 250 350 450")]),
        up
    );
    assert_eq!(edit(plain, &quads, &indexed, &[("damping", "3")]), up);
    assert_eq!(
        edit(plain, &quads, &indexed, &[("rayleighStiffness", "0.2")]),
        up
    );
    let both = [("stiffness", "70"), ("damping", "0.5 4 2 1")];
    assert_eq!(edit(plain, &quads, &indexed, &both), up);
    assert_eq!(
        edit(
            plain,
            &quads,
            &indexed,
            &[("stiffness", "70"), ("indices2", "4 5 3 0")]
        ),
        Reaction::Reinit
    );
    // a `spring` list gives its own coefficients
    let listed = [("spring", "0 4 100 1 1  1 5 50 2 0.8")];
    let after = [("stiffness", "300"), ("rayleighStiffness", "0.2")];
    assert_eq!(edit(plain, &quads, &listed, &after), up);

    // bending springs: the first stiffness and damping for all (QuadularBendingSprings:
    // its own defaults unless set)
    type Make = fn() -> SpringForceField;
    let bending: [(Make, &Mesh); 3] = [
        (SpringForceField::triangle_bending, &triangles),
        (SpringForceField::quad_bending, &quads),
        (SpringForceField::quadular, &quads),
    ];
    for (make, mesh) in bending {
        assert_eq!(edit(make, mesh, &[], &[("stiffness", "500")]), up);
        assert_eq!(edit(make, mesh, &[], &[("damping", "2 3")]), up);
        let before = [("stiffness", "800"), ("damping", "0.5")];
        assert_eq!(edit(make, mesh, &before, &[("stiffness", "")]), up);
        assert_eq!(
            edit(make, mesh, &before, &[("rayleighStiffness", "0.3")]),
            up
        );
    }

    // MeshSpringForceField divides by the rest lengths: re-initialised
    let mesh_springs = [("stiffness", "100"), ("damping", "1")];
    assert_eq!(
        edit(
            SpringForceField::mesh,
            &triangles,
            &mesh_springs,
            &[("stiffness", "50")]
        ),
        Reaction::Reinit
    );
}
