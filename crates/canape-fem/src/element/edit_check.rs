//! Test helper for the in-place reactions to edited Data of the FEM force fields: the forces
//! and stiffness products of a force field edited while it runs against those of one
//! initialised from scratch with the new values, bit for bit.

use canape_core::component::{ForceField, Reaction};
use canape_core::mesh::Mesh;

/// The bits of `v` (to compare results exactly).
pub fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// What a force field gives at `x`: its forces (with pseudo-random velocities), then its
/// stiffness product of a pseudo-random dx (factor −0.7) and its Rayleigh stiffness, as bits.
pub fn results(ff: &mut dyn ForceField, x: &[f64]) -> (Vec<u64>, Vec<u64>, u64) {
    let mut seed = 5;
    let n = x.len();
    let v: Vec<f64> = (0..n).map(|_| crate::fd_check::rnd(&mut seed)).collect();
    let mut f = vec![0.0; n];
    ff.add_force(x, &v, &mut f);
    let dx: Vec<f64> = (0..n).map(|_| crate::fd_check::rnd(&mut seed)).collect();
    let mut df = vec![0.0; n];
    ff.add_dforce(&dx, &mut df, -0.7);
    (bits(&f), bits(&df), ff.rayleigh_stiffness().to_bits())
}

/// `make()` initialised on `rest` and `mesh` with `before` and run at `x` (the rotations
/// of a running simulation), then given `after` through its Data and told which changed:
/// the reaction. When it is [`Reaction::Updated`], its results at `x` must equal bit for
/// bit those of `make()` initialised with `before` then `after`; otherwise (the edit is
/// refused, or needs a re-initialisation) it must still give its results of before.
pub fn edit<F: ForceField>(
    make: impl Fn() -> F,
    rest: &[f64],
    mesh: &Mesh,
    before: &[(&str, &str)],
    after: &[(&str, &str)],
    x: &[f64],
) -> Reaction {
    let init = |attrs: &[&[(&str, &str)]]| {
        let mut ff = make();
        for (k, v) in attrs.iter().copied().flatten() {
            ff.data_mut().set_str(k, v).unwrap();
        }
        let diags = crate::fd_check::init_with_mesh(&mut ff, rest, Some(mesh.clone()));
        assert!(
            !diags.has_errors(),
            "{:?}",
            diags.iter().collect::<Vec<_>>()
        );
        ff
    };
    let mut ff = init(&[before]);
    let old = results(&mut ff, x);
    let versions = ff.data().versions();
    for (k, v) in after {
        ff.data_mut().set_str(k, v).unwrap();
    }
    let changed = ff.data().changed_since(&versions);
    assert!(!changed.is_empty(), "{after:?} changes nothing");
    let reaction = ff.data_changed(&changed);
    let got = results(&mut ff, x);
    let class = ff.class_name();
    if reaction == Reaction::Updated {
        let want = results(&mut init(&[before, after]), x);
        assert!(
            got == want,
            "{class}: {after:?} in place differs from an init"
        );
        assert!(got != old, "{class}: {after:?} changed no result");
    } else {
        assert!(
            got == old,
            "{class}: {after:?} ({reaction:?}) changed the results"
        );
    }
    reaction
}
