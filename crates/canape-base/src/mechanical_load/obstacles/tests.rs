//! Tests of SphereForceField, EllipsoidForceField and ConicalForceField: forces, tangents,
//! assembly, bad Data and templates.

use super::*;
use canape_core::diag::{Diagnostics, Severity};
use canape_core::scene::AnyComponent;

/// Set `attrs` on `ff`, put it with a state of `dof` at positions `x` in a one-node scene
/// and run its init; the diagnostics.
fn init_on<F: ForceField + Clone + 'static>(
    ff: &mut F,
    dof: DofType,
    x: &[f64],
    attrs: &[(&str, &str)],
) -> Diagnostics {
    let (mut scene, root) = crate::test_support::scene_with_state(dof, x);
    crate::test_support::init_in(
        &mut scene,
        root,
        ff,
        |f| AnyComponent::ForceField(Box::new(f)),
        attrs,
    )
}

fn count(d: &Diagnostics, s: Severity) -> usize {
    d.iter().filter(|x| x.severity == s).count()
}

fn force<F: ForceField>(ff: &mut F, x: &[f64], v: &[f64]) -> Vec<f64> {
    let mut f = vec![0.0; x.len()];
    ff.add_force(x, v, &mut f);
    f
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(p, q)| (p - q).abs() <= tol)
}

/// The assembled k_factor·K, dense.
fn assembled<F: ForceField>(ff: &F, n: usize, k_factor: f64) -> Vec<Vec<f64>> {
    let mut tr = canape_core::matrix::Triplets::new(n);
    ff.add_k_to_matrix(&mut tr, k_factor, 0);
    let mut k = vec![vec![0.0; n]; n];
    for &(r, c, v) in &tr.entries {
        k[r as usize][c as usize] += v;
    }
    k
}

/// Assembled and matrix-free tangents agree on a few vectors (after `add_force` at x).
fn check_assembly<F: ForceField>(ff: &mut F, x: &[f64]) {
    let n = x.len();
    force(ff, x, &vec![0.0; n]);
    let k = assembled(ff, n, 2.5);
    assert!(k.iter().flatten().any(|v| *v != 0.0), "no stiffness at all");
    for s in 0..3 {
        let dx: Vec<f64> = (0..n)
            .map(|i| ((i * 7 + s * 3) % 5) as f64 * 0.3 - 0.6)
            .collect();
        let mut df = vec![0.0; n];
        ff.add_dforce(&dx, &mut df, 2.5);
        let kd: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|j| k[i][j] * dx[j]).sum())
            .collect();
        assert!(close(&kd, &df, 1e-9), "{kd:?} vs {df:?}");
    }
}

/// ∂f/∂x by central differences of `add_force` (zero velocities), column by column.
fn finite_differences<F: ForceField>(ff: &mut F, x: &[f64]) -> Vec<Vec<f64>> {
    let n = x.len();
    let h = 1e-6;
    let mut k = vec![vec![0.0; n]; n];
    for j in 0..n {
        let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
        xp[j] += h;
        xm[j] -= h;
        let fp = force(ff, &xp, &vec![0.0; n]);
        let fm = force(ff, &xm, &vec![0.0; n]);
        for i in 0..n {
            k[i][j] = (fp[i] - fm[i]) / (2.0 * h);
        }
    }
    force(ff, x, &vec![0.0; n]);
    k
}

/// The tangent `add_dforce` applies (k_factor 1), as a dense matrix.
fn tangent<F: ForceField>(ff: &mut F, n: usize) -> Vec<Vec<f64>> {
    let mut k = vec![vec![0.0; n]; n];
    for j in 0..n {
        let mut e = vec![0.0; n];
        e[j] = 1.0;
        let mut df = vec![0.0; n];
        ff.add_dforce(&e, &mut df, 1.0);
        for i in 0..n {
            k[i][j] = df[i];
        }
    }
    k
}

fn sphere(dof: DofType, x: &[f64], attrs: &[(&str, &str)]) -> SphereForceField {
    let mut s = SphereForceField::new();
    let d = init_on(&mut s, dof, x, attrs);
    assert!(d.is_empty(), "{d:?}");
    s
}

#[test]
fn sphere_pushes_out_the_points_inside_with_sofas_law() {
    let attrs = [
        ("center", "1 2 3"),
        ("radius", "2"),
        ("stiffness", "100"),
        ("damping", "3"),
    ];
    // point 0 at 1.5 from the centre along (0.6, 0.8, 0), point 1 at 2.5 along z
    let x = [1.9, 3.2, 3.0, 1.0, 2.0, 5.5];
    let v = [1.0, -2.0, 0.5, 0.0, 0.0, 1.0];
    let mut s = sphere(DofType::Vec3, &x, &attrs);
    let f = force(&mut s, &x, &v);
    // δ = −0.5: −k·δ·n = (30, 40, 0); damping·δ·v = −1.5·v
    let want = [30.0 - 1.5, 40.0 + 3.0, -0.75, 0.0, 0.0, 0.0];
    assert!(close(&f, &want, 1e-12), "{f:?}");
    assert_eq!(s.contacts.len(), 1);
    // bilateral: the outside point is pulled back to the surface, and its damping term
    // (δ = +0.5) points along the velocity
    let mut attrs_b = attrs.to_vec();
    attrs_b.push(("bilateral", "1"));
    let mut s = sphere(DofType::Vec3, &x, &attrs_b);
    let f = force(&mut s, &x, &v);
    assert!(close(&f[3..], &[0.0, 0.0, -50.0 + 1.5], 1e-12), "{f:?}");
    // localRange keeps only the points in [1, 1]
    let y = [1.9, 3.2, 3.0, 1.9, 3.2, 3.0, 1.9, 3.2, 3.0];
    let mut attrs_r = attrs.to_vec();
    attrs_r.push(("localRange", "1 1"));
    let mut s = sphere(DofType::Vec3, &y, &attrs_r);
    let f = force(&mut s, &y, &[0.0; 9]);
    assert!(close(
        &f,
        &[0.0, 0.0, 0.0, 30.0, 40.0, 0.0, 0.0, 0.0, 0.0],
        1e-12
    ));
}

#[test]
fn sphere_on_a_line_pushes_along_it() {
    // Vec1: the sphere is the segment [−1, 1]
    let x = [0.5, -0.25, 2.0];
    let mut s = sphere(
        DofType::Vec1,
        &x,
        &[("center", "0"), ("stiffness", "100"), ("damping", "0")],
    );
    let f = force(&mut s, &x, &[0.0; 3]);
    assert!(close(&f, &[50.0, -75.0, 0.0], 1e-12), "{f:?}");
}

#[test]
fn sphere_tangent_is_the_exact_derivative_and_assembles_the_same() {
    let attrs = [
        ("center", "0.5 -0.2"),
        ("radius", "1.5"),
        ("stiffness", "80"),
    ];
    let x = [0.9, 0.4, 3.0, 0.0, 0.2, -1.0];
    let mut s = sphere(DofType::Vec2, &x, &attrs);
    check_assembly(&mut s, &x);
    let fd = finite_differences(&mut s, &x);
    assert_eq!(s.contacts.len(), 2);
    let k = tangent(&mut s, x.len());
    for i in 0..x.len() {
        assert!(
            close(&k[i], &fd[i], 1e-5),
            "row {i}: {:?} vs {:?}",
            k[i],
            fd[i]
        );
    }
    // and it has SOFA's form −k(φ n nᵀ + (1 − φ) I) (point 0: φ = r/|x − c|)
    let (dx, dy) = (0.4f64, 0.6f64);
    let r = (dx * dx + dy * dy).sqrt();
    let (nx, ny, phi) = (dx / r, dy / r, 1.5 / r);
    assert!((k[0][0] + 80.0 * (phi * nx * nx + 1.0 - phi)).abs() < 1e-12);
    assert!((k[0][1] + 80.0 * phi * nx * ny).abs() < 1e-12);
}

fn ellipsoid(dof: DofType, x: &[f64], attrs: &[(&str, &str)]) -> EllipsoidForceField {
    let mut e = EllipsoidForceField::new();
    let d = init_on(&mut e, dof, x, attrs);
    assert!(d.is_empty(), "{d:?}");
    e
}

#[test]
fn ellipsoid_pushes_out_or_pulls_in_with_sofas_law() {
    let attrs = [
        ("center", "1 -1 0.5"),
        ("vradius", "2 1 1"),
        ("stiffness", "100"),
        ("damping", "2"),
    ];
    // point 0 at (1, 0.5, 0) from the centre (s = 0.5), point 1 at (0, 0, 1.2) (s = 1.44)
    let x = [2.0, -0.5, 0.5, 1.0, -1.0, 1.7];
    let v = [0.5, 0.0, -1.0, 0.0, 0.0, 0.0];
    let mut e = ellipsoid(DofType::Vec3, &x, &attrs);
    let f = force(&mut e, &x, &v);
    let nu = 0.5f64.sqrt() - 1.0;
    let gn = 0.3125f64.sqrt(); // |(1/4, 0.5/1, 0)|
    let want = [
        -100.0 * nu * 0.25 / gn - 2.0 * nu.abs() * 0.5,
        -100.0 * nu * 0.5 / gn,
        2.0 * nu.abs(),
        0.0,
        0.0,
        0.0,
    ];
    assert!(close(&f, &want, 1e-12), "{f:?} vs {want:?}");
    assert!((f[0] - 12.805_69).abs() < 1e-5 && (f[1] - 26.197_17).abs() < 1e-5);
    // negative stiffness: the outside point is pulled in (ν = 0.2, g along z), not the other
    let mut attrs_in = attrs.to_vec();
    attrs_in[2] = ("stiffness", "-100");
    let mut e = ellipsoid(DofType::Vec3, &x, &attrs_in);
    let f = force(&mut e, &x, &[0.0; 6]);
    assert!(close(&f, &[0.0, 0.0, 0.0, 0.0, 0.0, -20.0], 1e-12), "{f:?}");
    // Vec2: an ellipse
    let y = [0.5, 0.5];
    let mut e = ellipsoid(
        DofType::Vec2,
        &y,
        &[("center", "0 0"), ("vradius", "1 1"), ("damping", "0")],
    );
    let f = force(&mut e, &y, &[0.0; 2]);
    let r = 0.5f64.sqrt();
    let want = -500.0 * (r - 1.0) / r * 0.5;
    assert!(close(&f, &[want, want], 1e-12), "{f:?}");
}

#[test]
fn ellipsoid_tangent_is_sofas_matrix_not_the_exact_derivative() {
    let attrs = [
        ("center", "0.1 0 -0.2"),
        ("vradius", "2 1 1.5"),
        ("stiffness", "80"),
    ];
    let x = [0.6, 0.3, 0.4, 3.0, 0.0, 0.0];
    let mut e = ellipsoid(DofType::Vec3, &x, &attrs);
    check_assembly(&mut e, &x);
    let fd = finite_differences(&mut e, &x);
    let k = tangent(&mut e, 6);
    // SOFA's matrix and the exact derivative, written out for point 0
    let dp = [0.5, 0.3, 0.6];
    let ir = [0.25, 1.0, 1.0 / 2.25];
    let s: f64 = (0..3).map(|j| dp[j] * dp[j] * ir[j]).sum();
    let (norm, nu) = (s.sqrt(), s.sqrt() - 1.0);
    let g: Vec<f64> = (0..3).map(|j| dp[j] * ir[j]).collect();
    let gn = g.iter().map(|c| c * c).sum::<f64>().sqrt();
    let mut largest_gap = 0.0f64;
    for i in 0..3 {
        for j in 0..3 {
            let first = g[i] * g[j] / (norm * gn);
            let diag = if i == j { nu * ir[i] / gn } else { 0.0 };
            let sofa = -80.0 * (first + diag + nu * g[i] * g[j] * ir[j] / (gn * gn));
            let exact = -80.0 * (first + diag - nu * g[i] * g[j] * ir[j] / gn.powi(3));
            assert!(
                (k[i][j] - sofa).abs() < 1e-12,
                "({i},{j}) {} vs {sofa}",
                k[i][j]
            );
            assert!(
                (fd[i][j] - exact).abs() < 1e-5,
                "({i},{j}) {} vs {exact}",
                fd[i][j]
            );
            largest_gap = largest_gap.max((sofa - exact).abs());
        }
    }
    // the difference is real, not round-off
    assert!(largest_gap > 1.0, "{largest_gap}");
    // the outside point has no stiffness
    assert!(k[3..].iter().flatten().all(|v| *v == 0.0));
}

fn cone(x: &[f64], attrs: &[(&str, &str)]) -> ConicalForceField {
    let mut c = ConicalForceField::new();
    let d = init_on(&mut c, DofType::Vec3, x, attrs);
    assert!(d.is_empty(), "{d:?}");
    c
}

const CONE: [(&str, &str); 5] = [
    ("coneCenter", "0 0 0"),
    ("coneHeight", "0 10 0"),
    ("coneAngle", "45"),
    ("stiffness", "100"),
    ("damping", "3"),
];

#[test]
fn cone_holds_the_points_inside_with_sofas_law() {
    // inside; beside the cone; behind the apex; beyond the cap
    let x = [0.5, 5.0, 0.2, 2.0, 1.0, 0.0, 0.0, -1.0, 1.0, 0.0, 12.0, 0.0];
    let v = [5.0, 5.0, 5.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    let mut c = cone(&x, &CONE);
    let f = force(&mut c, &x, &v);
    // beside: x′ = (1.5, 1.5, 0), k(x′ − x) = (−50, 50, 0); n = (−1, 1, 0)/√2, n·v = −1/√2,
    // −damping(n·v)n = (−1.5, 1.5, 0)
    // behind: −k·cp = (0, 100, −100)
    // beyond: δ = 2, −kδn = (0, −200, 0), damping·δ·v = (0, 6, 0): along the velocity
    let want = [
        0.0, 0.0, 0.0, -51.5, 51.5, 0.0, 0.0, 100.0, -100.0, 0.0, -194.0, 0.0,
    ];
    assert!(close(&f, &want, 1e-9), "{f:?}");
    assert_eq!(c.contacts.len(), 3);
    // a cone pointing elsewhere: apex (1, 1, 1), axis −z, the point below it is inside
    let y = [1.0, 1.2, -3.0, 1.0, 1.0, 2.0];
    let mut c = cone(
        &y,
        &[
            ("coneCenter", "1 1 1"),
            ("coneHeight", "0 0 -5"),
            ("damping", "0"),
        ],
    );
    let f = force(&mut c, &y, &[0.0; 6]);
    assert!(close(&f, &[0.0, 0.0, 0.0, 0.0, 0.0, -500.0], 1e-9), "{f:?}");
}

#[test]
fn cone_tangent_is_sofas_normal_stiffness() {
    let x = [2.0, 1.0, 0.3, 0.0, -1.0, 1.0, 0.5, 12.0, 0.0, 0.5, 5.0, 0.2];
    let mut c = cone(&x, &CONE);
    check_assembly(&mut c, &x);
    let k = tangent(&mut c, 12);
    // −k n nᵀ for each contact, nothing on the inside point
    for ct in &c.contacts {
        let o = 3 * ct.index;
        for i in 0..3 {
            for j in 0..3 {
                let want = -100.0 * ct.normal[i] * ct.normal[j];
                assert!((k[o + i][o + j] - want).abs() < 1e-12);
            }
        }
    }
    assert!(k[9..].iter().flatten().all(|v| *v == 0.0));
    let n = c.contacts[0].normal;
    // the normal of the point beside the cone is ⟂ to the generator through x′ and in the
    // plane of the axis and x
    assert!(dot(&n, &cross(&[0.0, 1.0, 0.0], &[2.0, 1.0, 0.3])).abs() < 1e-12);
    // finite differences: along n, the same; along the azimuth, SOFA's tangent has nothing
    // while the force turns with the point
    let p = [2.0, 1.0, 0.3];
    let dforce_along = |c: &mut ConicalForceField, d: [f64; 3]| {
        let h = 1e-6;
        let mut xp = x.to_vec();
        let mut xm = x.to_vec();
        for q in 0..3 {
            xp[q] += h * d[q];
            xm[q] -= h * d[q];
        }
        let fp = force(c, &xp, &[0.0; 12]);
        let fm = force(c, &xm, &[0.0; 12]);
        force(c, &x, &[0.0; 12]);
        let fd: Vec<f64> = (0..3).map(|q| (fp[q] - fm[q]) / (2.0 * h)).collect();
        let mut e = vec![0.0; 12];
        e[..3].copy_from_slice(&d);
        let mut df = vec![0.0; 12];
        c.add_dforce(&e, &mut df, 1.0);
        (fd, df[..3].to_vec())
    };
    let (fd, df) = dforce_along(&mut c, n);
    assert!(close(&fd, &df, 1e-4), "{fd:?} vs {df:?}");
    assert!(close(&df, &scale(&n, -100.0), 1e-9));
    let t = cross(&[0.0, 1.0, 0.0], &p);
    let t = scale(&t, 1.0 / dot(&t, &t).sqrt());
    let (fd, df) = dforce_along(&mut c, t);
    assert!(df.iter().all(|v| v.abs() < 1e-12), "{df:?}");
    assert!(fd.iter().map(|v| v * v).sum::<f64>().sqrt() > 1.0, "{fd:?}");
}

#[test]
fn bad_data_is_reported_and_leaves_the_component_inert() {
    let x = [0.1, 0.0, 0.0];
    let inert = |f: &mut dyn ForceField| {
        let mut out = vec![0.0; 3];
        f.add_force(&x, &[0.0; 3], &mut out);
        out == [0.0; 3]
    };
    let mut s = SphereForceField::new();
    let d = init_on(&mut s, DofType::Vec3, &x, &[("radius", "-1")]);
    assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
    assert!(inert(&mut s));
    let mut s = SphereForceField::new();
    let d = init_on(&mut s, DofType::Vec3, &x, &[("center", "1 2")]);
    assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
    assert!(d.iter().any(|m| m.message.contains("center")));
    assert!(inert(&mut s));
    let mut s = SphereForceField::new();
    let d = init_on(&mut s, DofType::Vec3, &x, &[("center", "0 nan 0")]);
    assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
    assert!(inert(&mut s));
    let mut s = SphereForceField::new();
    let d = init_on(&mut s, DofType::Rigid3, &[0.0; 7], &[]);
    assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
    // a negative stiffness falls back to the default 500, with a warning
    let mut s = SphereForceField::new();
    let d = init_on(
        &mut s,
        DofType::Vec3,
        &x,
        &[("stiffness", "-5"), ("damping", "0")],
    );
    assert_eq!(
        (count(&d, Severity::Warning), count(&d, Severity::Error)),
        (1, 0),
        "{d:?}"
    );
    let f = force(&mut s, &x, &[0.0; 3]);
    assert!(close(&f, &[500.0 * 0.9, 0.0, 0.0], 1e-9), "{f:?}");

    // the ellipsoid needs its radii, all non-zero
    let mut e = EllipsoidForceField::new();
    let d = init_on(&mut e, DofType::Vec3, &x, &[]);
    assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
    assert!(inert(&mut e));
    let mut e = EllipsoidForceField::new();
    let d = init_on(&mut e, DofType::Vec3, &x, &[("vradius", "1 0 1")]);
    assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
    assert!(inert(&mut e));
    let mut e = EllipsoidForceField::new();
    let d = init_on(&mut e, DofType::Vec3, &x, &[("vradius", "1 1")]);
    assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
    let mut e = EllipsoidForceField::new();
    let d = init_on(&mut e, DofType::Vec3, &x, &[("vradius", "-1 1 1")]);
    assert_eq!(
        (count(&d, Severity::Warning), count(&d, Severity::Error)),
        (1, 0),
        "{d:?}"
    );
    assert!(!inert(&mut e));

    // the cone needs its height and an angle in ]0, 180[, on Vec3
    let mut c = ConicalForceField::new();
    let d = init_on(&mut c, DofType::Vec3, &x, &[]);
    assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
    assert!(inert(&mut c));
    let mut c = ConicalForceField::new();
    let d = init_on(
        &mut c,
        DofType::Vec3,
        &x,
        &[("coneHeight", "0 1 0"), ("coneAngle", "0")],
    );
    assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
    assert!(inert(&mut c));
    let mut c = ConicalForceField::new();
    let d = init_on(&mut c, DofType::Vec2, &[0.0; 2], &[("coneHeight", "0 1 0")]);
    assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
    let mut c = ConicalForceField::new();
    let d = init_on(&mut c, DofType::Vec3, &x, &[("coneHeight", "0 1 0")]);
    assert!(d.is_empty(), "{d:?}");
    assert!(!inert(&mut c), "the point (0.1, 0, 0) is beside the cone");
}

#[test]
fn templates_are_sofas() {
    for t in ["", "Vec3d", "Vec2d", "Vec1d", "Vec3"] {
        assert!(vec_template(t, "SphereForceField", false).is_ok(), "{t}");
    }
    for t in ["Rigid3d", "Rigid2d", "Vec6d"] {
        let e = vec_template(t, "EllipsoidForceField", false).unwrap_err();
        assert!(e.to_string().contains("EllipsoidForceField"), "{e}");
    }
    assert!(vec_template("Vec3d", "ConicalForceField", true).is_ok());
    assert!(vec_template("Vec2d", "ConicalForceField", true).is_err());
}

/// What a force field gives at `x` with velocities `v`, as bits: the forces, then the
/// tangent applied to a vector and the assembled matrix (both on the contacts of that
/// `add_force`).
fn response_bits<F: ForceField>(ff: &mut F, x: &[f64], v: &[f64]) -> Vec<u64> {
    let n = x.len();
    let mut out = force(ff, x, v);
    let dx: Vec<f64> = (0..n).map(|i| (i % 3) as f64 * 0.2 - 0.1).collect();
    let mut df = vec![0.0; n];
    ff.add_dforce(&dx, &mut df, 1.5);
    out.extend(df);
    out.extend(assembled(ff, n, 0.5).into_iter().flatten());
    out.iter().map(|x| x.to_bits()).collect()
}

/// A force field made by `make` on a Vec3 state at `x`, initialised with `before`, then given
/// `after` while it runs: the reaction. When it is [`Reaction::Updated`] its forces and
/// tangent must equal bit for bit those of one initialised from scratch with `before` then
/// `after`.
fn edit_obstacle<F: ForceField + Clone + 'static>(
    make: fn() -> F,
    x: &[f64],
    before: &[(&str, &str)],
    after: &[(&str, &str)],
) -> canape_core::component::Reaction {
    let v: Vec<f64> = (0..x.len()).map(|i| 0.05 * i as f64 - 0.2).collect();
    let init = |attrs: &[(&str, &str)]| {
        let mut ff = make();
        let d = init_on(&mut ff, DofType::Vec3, x, attrs);
        assert_eq!(count(&d, Severity::Error), 0, "{attrs:?}: {d:?}");
        ff
    };
    let fresh = || init(&[before, after].concat());
    let bits = |ff: &mut F| response_bits(ff, x, &v);
    crate::test_support::check_edit_changes(init(before), after, fresh, bits, false)
}

/// Editing the stiffness or the damping of a running sphere, ellipsoid or cone gives the
/// forces and tangent of one initialised with the new values; values init warns about and
/// other Data re-initialise it.
#[test]
fn edits_update_in_place_obstacle_stiffness_and_damping() {
    use canape_core::component::Reaction;
    let up = Reaction::Updated;
    let x = [0.3, 0.2, -0.1, 2.0, 0.0, 0.0, -0.4, 0.5, 0.1];
    let sph = [("center", "0 0 0"), ("radius", "1"), ("stiffness", "80")];
    let s = SphereForceField::new;
    assert_eq!(edit_obstacle(s, &x, &sph, &[("stiffness", "120")]), up);
    assert_eq!(edit_obstacle(s, &x, &sph, &[("damping", "0.5")]), up);
    let both = [("stiffness", "30"), ("damping", "0")];
    assert_eq!(edit_obstacle(s, &x, &sph, &both), up);
    let bad = [("stiffness", "-1")];
    assert_eq!(edit_obstacle(s, &x, &sph, &bad), Reaction::Reinit);
    let moved = [("radius", "2")];
    assert_eq!(edit_obstacle(s, &x, &sph, &moved), Reaction::Reinit);

    let ell = [
        ("center", "0 0 0"),
        ("vradius", "1 2 1"),
        ("stiffness", "50"),
    ];
    let e = EllipsoidForceField::new;
    assert_eq!(edit_obstacle(e, &x, &ell, &[("stiffness", "70")]), up);
    // a negative stiffness pulls the points outside in
    assert_eq!(edit_obstacle(e, &x, &ell, &[("stiffness", "-70")]), up);
    assert_eq!(edit_obstacle(e, &x, &ell, &[("damping", "2")]), up);
    let zero = [("stiffness", "0")];
    assert_eq!(edit_obstacle(e, &x, &ell, &zero), Reaction::Reinit);

    let x = [0.0, 11.0, 0.0, 3.0, 1.0, 0.0, 0.0, -0.5, 0.2];
    let c = ConicalForceField::new;
    assert_eq!(edit_obstacle(c, &x, &CONE, &[("stiffness", "250")]), up);
    assert_eq!(edit_obstacle(c, &x, &CONE, &[("damping", "0.25")]), up);
    let bad = [("damping", "-2")];
    assert_eq!(edit_obstacle(c, &x, &CONE, &bad), Reaction::Reinit);
    let angle = [("coneAngle", "30")];
    assert_eq!(edit_obstacle(c, &x, &CONE, &angle), Reaction::Reinit);
}
