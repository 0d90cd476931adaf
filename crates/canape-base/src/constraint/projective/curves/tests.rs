//! Tests of FixedRotation-, Parabolic-, HermiteSpline- and DirectionProjectiveConstraint.

use super::*;
use canape_core::diag::{Diagnostics, Severity};
use canape_types::nalgebra::{UnitQuaternion, Vector3};

/// Set `attrs` on `c`, put a copy of it beside a state of `dof` holding `positions` in a
/// one-node scene (dt 0.01, time 0) and run its init there: the diagnostics.
fn init_on<C: ProjectiveConstraint + Clone + 'static>(
    c: &mut C,
    dof: DofType,
    positions: &[f64],
    attrs: &[(&str, &str)],
) -> Diagnostics {
    let (mut scene, root) = crate::test_support::scene_with_state(dof, positions);
    scene.node_mut(root).dt = 0.01;
    crate::test_support::init_in(
        &mut scene,
        root,
        c,
        |c| AnyComponent::Projective(Box::new(c)),
        attrs,
    )
}

fn errors_mentioning(d: &Diagnostics, word: &str) -> usize {
    d.iter()
        .filter(|d| d.severity == Severity::Error && d.message.contains(word))
        .count()
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

// --- FixedRotation ---

fn rot(axis: usize, angle: f64) -> Quaternion<f64> {
    let mut v = Vector3::zeros();
    v[axis] = 1.0;
    UnitQuaternion::from_axis_angle(&canape_types::nalgebra::Unit::new_normalize(v), angle)
        .into_inner()
}

fn frame(center: [f64; 3], q: Quaternion<f64>) -> [f64; 7] {
    let mut c = [center[0], center[1], center[2], 0.0, 0.0, 0.0, 1.0];
    set_quat(&mut c, &q);
    c
}

/// Same rotation (q and −q are).
fn same_rotation(a: Quaternion<f64>, b: Quaternion<f64>) -> bool {
    (a - b).norm() < 1e-12 || (a + b).norm() < 1e-12
}

#[test]
fn fixed_rotation_keeps_the_initial_twist_about_the_fixed_axis_only() {
    let mut c = FixedRotationProjectiveConstraint::new();
    let x0: Vec<f64> = [
        frame([1.0, 2.0, 3.0], rot(2, 0.3)),
        frame([0.0; 3], Quaternion::identity()),
        frame([0.0; 3], Quaternion::identity()),
    ]
    .concat();
    let d = init_on(&mut c, DofType::Rigid3, &x0, &[("FixedZRotation", "1")]);
    assert!(d.is_empty(), "{d:?}");
    // frame 0 swings about x and turns further about z; frame 1 turns about x only (free);
    // frame 2 turns about z only (fixed)
    let moved = rot(0, 0.5) * rot(2, 1.1);
    let mut x: Vec<f64> = [
        frame([4.0, 5.0, 6.0], moved),
        frame([0.0; 3], rot(0, 0.4)),
        frame([0.0; 3], rot(2, 0.9)),
    ]
    .concat();
    c.project_position(&mut x);
    let f = Rigid3Types::coords(&x);
    assert_eq!(&f[0][..3], &[4.0, 5.0, 6.0], "centers are not touched");
    assert!(same_rotation(quat_of(&f[0]), rot(0, 0.5) * rot(2, 0.3)));
    assert!(same_rotation(quat_of(&f[1]), rot(0, 0.4)));
    assert!(same_rotation(quat_of(&f[2]), Quaternion::identity()));
    // the frame's z axis is turned only by the free swing: the fixed z twist of 0.3 is back
    let r = UnitQuaternion::from_quaternion(quat_of(&f[0]));
    let ex = r * Vector3::x();
    let expected = UnitQuaternion::from_quaternion(rot(0, 0.5) * rot(2, 0.3)) * Vector3::x();
    assert!((ex - expected).norm() < 1e-12);
    // derivatives and velocities are not projected (SOFA's are empty)
    let mut dx = vec![1.0; 18];
    c.project_response(&mut dx);
    c.project_velocity(&mut dx);
    assert!(dx.iter().all(|&v| v == 1.0));
    assert!(c.fixed_scalar_dofs(6).is_empty());
}

#[test]
fn fixed_rotation_flags_select_the_axes() {
    let x0 = frame([0.0; 3], rot(2, 0.3)).to_vec();
    // no flag: nothing changes
    let mut c = FixedRotationProjectiveConstraint::new();
    assert!(init_on(&mut c, DofType::Rigid3, &x0, &[]).is_empty());
    let mut x = frame([0.0; 3], rot(1, 0.7) * rot(2, 1.0)).to_vec();
    let before = x.clone();
    c.project_position(&mut x);
    assert_eq!(x, before);
    // all three: single-axis turns are undone back to the initial twist
    let mut c = FixedRotationProjectiveConstraint::new();
    let all = [
        ("FixedXRotation", "1"),
        ("FixedYRotation", "true"),
        ("FixedZRotation", "1"),
    ];
    assert!(init_on(&mut c, DofType::Rigid3, &x0, &all).is_empty());
    for q in [rot(0, 0.8), rot(1, -0.6), rot(2, 2.0)] {
        let mut x = frame([0.0; 3], q).to_vec();
        c.project_position(&mut x);
        let f = Rigid3Types::coords(&x);
        assert!(same_rotation(quat_of(&f[0]), rot(2, 0.3)), "{q:?}");
    }
    // X only: a turn about y stays
    let mut c = FixedRotationProjectiveConstraint::new();
    let x0 = frame([0.0; 3], Quaternion::identity()).to_vec();
    assert!(init_on(&mut c, DofType::Rigid3, &x0, &[("FixedXRotation", "1")]).is_empty());
    let mut x = frame([0.0; 3], rot(1, 0.6) * rot(0, 0.2)).to_vec();
    c.project_position(&mut x);
    assert!(same_rotation(
        quat_of(&Rigid3Types::coords(&x)[0]),
        rot(1, 0.6)
    ));
}

#[test]
fn templates_sofa_does_not_define_are_refused() {
    let mut r = Registry::new();
    register(&mut r);
    let make =
        |class: &str, t: &str| (r.get(class).unwrap().create)(r.get(class).unwrap().class, t);
    assert!(make("FixedRotationProjectiveConstraint", "Rigid3d").is_ok());
    assert!(make("FixedRotationProjectiveConstraint", "").is_ok());
    let Err(e) = make("FixedRotationProjectiveConstraint", "Vec3d") else {
        panic!("Vec3d accepted");
    };
    assert!(e.to_string().contains("Rigid3d only"), "{e}");
    assert!(make("ParabolicProjectiveConstraint", "Vec3").is_ok());
    assert!(make("ParabolicProjectiveConstraint", "Rigid3").is_ok());
    assert!(make("ParabolicProjectiveConstraint", "Vec2d").is_err());
    assert!(make("HermiteSplineProjectiveConstraint", "Rigid3d").is_ok());
    assert!(make("HermiteSplineProjectiveConstraint", "Vec1d").is_err());
    assert!(make("DirectionProjectiveConstraint", "Vec2d").is_ok());
    assert!(make("DirectionProjectiveConstraint", "Rigid3d").is_err());
    assert!(make("DirectionProjectiveConstraint", "Banana").is_err());
    // and a state of another type is reported at init
    let mut c = FixedRotationProjectiveConstraint::new();
    let d = init_on(&mut c, DofType::Vec3, &[0.0; 3], &[("FixedZRotation", "1")]);
    assert_eq!(errors_mentioning(&d, "Vec3d"), 1, "{d:?}");
    let mut x = vec![1.0, 2.0, 3.0];
    c.project_position(&mut x);
    assert_eq!(x, [1.0, 2.0, 3.0]);
}

// --- Parabolic ---

const P1: [f64; 3] = [1.0, 0.0, 0.0];
const P2: [f64; 3] = [5.0, 3.0, 1.0];
const P3: [f64; 3] = [7.0, 6.0, -5.0];

fn parabolic_attrs() -> Vec<(&'static str, &'static str)> {
    vec![
        ("indices", "1"),
        ("P1", "1 0 0"),
        ("P2", "5 3 1"),
        ("P3", "7 6 -5"),
        ("BeginTime", "0.5"),
        ("EndTime", "1.5"),
    ]
}

/// The quadratic through P1, P2, P3 at parameters 0, s2, 1 (Lagrange's form), s2 the
/// fraction of P1→P3 that P2 projects to: the curve SOFA's construction gives.
fn lagrange(s: f64) -> [f64; 3] {
    let v = |p: [f64; 3]| Vec3::new(p[0], p[1], p[2]);
    let (p1, p2, p3) = (v(P1), v(P2), v(P3));
    let s2 = (p2 - p1).dot(&(p3 - p1)) / (p3 - p1).norm_squared();
    let l0 = (s - s2) * (s - 1.0) / s2;
    let l1 = s * (s - 1.0) / (s2 * (s2 - 1.0));
    let l2 = s * (s - s2) / (1.0 - s2);
    let p = p1 * l0 + p2 * l1 + p3 * l2;
    [p.x, p.y, p.z]
}

#[test]
fn parabolic_positions_follow_the_parabola_through_the_three_points() {
    let mut c = CurveProjectiveConstraint::parabolic();
    let d = init_on(&mut c, DofType::Vec3, &[9.0; 6], &parabolic_attrs());
    assert!(d.is_empty(), "{d:?}");
    let at = |c: &mut CurveProjectiveConstraint, t: f64| {
        c.set_time(t);
        let mut x = vec![9.0; 6];
        c.project_position(&mut x);
        assert_eq!(&x[..3], &[9.0; 3], "only the listed point moves");
        [x[3], x[4], x[5]]
    };
    assert!(close(&at(&mut c, 0.5), &P1, 1e-12));
    assert!(close(&at(&mut c, 1.5), &P3, 1e-12));
    // P2 is reached when x (proportional to time) reaches its projection on P1→P3
    let s2 = {
        let e13: Vec<f64> = (0..3).map(|k| P3[k] - P1[k]).collect();
        let e12: Vec<f64> = (0..3).map(|k| P2[k] - P1[k]).collect();
        let dot: f64 = (0..3).map(|k| e12[k] * e13[k]).sum();
        dot / e13.iter().map(|v| v * v).sum::<f64>()
    };
    assert!(close(&at(&mut c, 0.5 + s2), &P2, 1e-12));
    for t in [0.6, 1.0, 1.37] {
        assert!(close(&at(&mut c, t), &lagrange(t - 0.5), 1e-12), "t = {t}");
    }
    // outside the window the point is free
    for t in [0.0, 0.49, 1.51, 3.0] {
        c.set_time(t);
        let mut x = vec![9.0; 6];
        c.project_position(&mut x);
        c.project_velocity(&mut x);
        c.project_response(&mut x);
        assert_eq!(x, [9.0; 6], "t = {t}");
    }
}

#[test]
fn parabolic_velocity_is_the_displacement_over_the_next_step() {
    let mut c = CurveProjectiveConstraint::parabolic();
    assert!(init_on(&mut c, DofType::Vec3, &[0.0; 6], &parabolic_attrs()).is_empty());
    let dt = 0.01;
    for t in [0.5, 0.93, 1.5] {
        c.set_time(t);
        let mut v = vec![7.0; 6];
        c.project_velocity(&mut v);
        let (a, b) = (lagrange(t - 0.5), lagrange(t + dt - 0.5));
        let expected: Vec<f64> = (0..3).map(|k| (b[k] - a[k]) / dt).collect();
        assert!(close(&v[3..], &expected, 1e-9), "t = {t}: {v:?}");
        assert_eq!(&v[..3], &[7.0; 3]);
        // within O(dt) of the curve's time derivative (the window lasts 1 s)
        let h = 1e-6;
        let (l, r) = (lagrange(t - 0.5 - h), lagrange(t - 0.5 + h));
        for k in 0..3 {
            assert!((v[3 + k] - (r[k] - l[k]) / (2.0 * h)).abs() < 0.2);
        }
        // and the chosen point's derivatives are zeroed
        let mut dx = vec![1.0; 6];
        c.project_response(&mut dx);
        assert_eq!(dx, [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
    }
}

#[test]
fn parabolic_moves_rigid_centers_only() {
    let mut c = CurveProjectiveConstraint::parabolic();
    let q = rot(1, 0.4);
    let x0: Vec<f64> = [frame([0.0; 3], q), frame([0.0; 3], q)].concat();
    let d = init_on(&mut c, DofType::Rigid3, &x0, &parabolic_attrs());
    assert!(d.is_empty(), "{d:?}");
    c.set_time(1.0);
    let mut x = x0.clone();
    c.project_position(&mut x);
    let f = Rigid3Types::coords(&x);
    assert!(close(&f[1][..3], &lagrange(0.5), 1e-12));
    assert_eq!(&f[1][3..], &x0[10..], "the orientation is kept");
    assert_eq!(f[0], Rigid3Types::coords(&x0)[0]);
    let mut v = vec![3.0; 12];
    c.project_velocity(&mut v);
    assert_eq!(&v[9..], &[3.0; 3], "the angular velocity is kept");
    assert!(v[6..9].iter().any(|&w| w != 3.0));
    let mut dx = vec![1.0; 12];
    c.project_response(&mut dx);
    assert!(dx[6..].iter().all(|&w| w == 0.0) && dx[..6].iter().all(|&w| w == 1.0));
}

#[test]
fn parabolic_bad_data_is_reported_and_does_nothing() {
    let check = |attrs: &[(&str, &str)], word: &str| {
        let mut c = CurveProjectiveConstraint::parabolic();
        let mut all = parabolic_attrs();
        all.extend_from_slice(attrs);
        let d = init_on(&mut c, DofType::Vec3, &[0.0; 6], &all);
        assert_eq!(errors_mentioning(&d, word), 1, "{word}: {d:?}");
        for t in [0.5, 1.0, 1.5] {
            c.set_time(t);
            let mut x = vec![2.0; 6];
            c.project_position(&mut x);
            c.project_velocity(&mut x);
            c.project_response(&mut x);
            assert_eq!(x, [2.0; 6]);
        }
    };
    check(&[("EndTime", "0.5")], "EndTime");
    check(&[("EndTime", "0.2")], "EndTime");
    check(&[("P2", "4 3 -2.5")], "aligned");
    check(&[("P2", "1 0 0")], "different");
    check(&[("P2", "2 -1 0")], "straight above");
    check(&[("P3", "nan 0 0")], "P3");
    // an index past the state is dropped, the others kept
    let mut c = CurveProjectiveConstraint::parabolic();
    let mut attrs = parabolic_attrs();
    attrs[0] = ("indices", "1 5");
    let d = init_on(&mut c, DofType::Vec3, &[0.0; 6], &attrs);
    assert_eq!(errors_mentioning(&d, "out of range"), 1, "{d:?}");
    c.set_time(0.5);
    let mut x = vec![0.0; 6];
    c.project_position(&mut x);
    assert!(close(&x[3..], &P1, 1e-12));
}

// --- HermiteSpline ---

fn hermite_attrs() -> Vec<(&'static str, &'static str)> {
    vec![
        ("indices", "0"),
        ("BeginTime", "1"),
        ("EndTime", "3"),
        ("X0", "1 2 3"),
        ("dX0", "0 10 0"),
        ("X1", "5 0 -1"),
        ("dX1", "2 0 4"),
    ]
}

const X0: [f64; 3] = [1.0, 2.0, 3.0];
const DX0: [f64; 3] = [0.0, 10.0, 0.0];
const X1: [f64; 3] = [5.0, 0.0, -1.0];
const DX1: [f64; 3] = [2.0, 0.0, 4.0];

fn hermite_at(c: &mut CurveProjectiveConstraint, t: f64) -> ([f64; 3], [f64; 3]) {
    c.set_time(t);
    let mut x = vec![-1.0; 3];
    let mut v = vec![-1.0; 3];
    c.project_position(&mut x);
    c.project_velocity(&mut v);
    ([x[0], x[1], x[2]], [v[0], v[1], v[2]])
}

#[test]
fn hermite_spline_positions_and_sofa_velocities() {
    let mut c = CurveProjectiveConstraint::hermite_spline();
    let d = init_on(&mut c, DofType::Vec3, &[0.0; 3], &hermite_attrs());
    assert!(d.is_empty(), "{d:?}");
    // ends: the control points, and SOFA's velocities there are the control tangents
    let (x, v) = hermite_at(&mut c, 1.0);
    assert!(close(&x, &X0, 1e-12) && close(&v, &DX0, 1e-12));
    let (x, v) = hermite_at(&mut c, 3.0);
    assert!(close(&x, &X1, 1e-12) && close(&v, &DX1, 1e-12));
    // middle: with the default pace (SX0 = SX1 = 0) s(½) = ½, where the spline is
    // (X0 + X1)/2 + (dX0 − dX1)/8
    let (x, _) = hermite_at(&mut c, 2.0);
    let mid: Vec<f64> = (0..3)
        .map(|k| (X0[k] + X1[k]) / 2.0 + (DX0[k] - DX1[k]) / 8.0)
        .collect();
    assert!(close(&x, &mid, 1e-12), "{x:?}");
    // SOFA's velocity is d/ds: times s'(u) / (EndTime − BeginTime) it is the time
    // derivative of the positions (default pace: s'(u) = 6u − 6u²)
    for t in [1.3, 2.0, 2.55] {
        let u: f64 = (t - 1.0) / 2.0;
        let (_, v) = hermite_at(&mut c, t);
        let h = 1e-6;
        let (l, _) = hermite_at(&mut c, t - h);
        let (r, _) = hermite_at(&mut c, t + h);
        let scale = (6.0 * u - 6.0 * u * u) / 2.0;
        for k in 0..3 {
            let dxdt = (r[k] - l[k]) / (2.0 * h);
            assert!((v[k] * scale - dxdt).abs() < 1e-6, "t = {t}");
        }
    }
    // response zeroed inside the window only; nothing outside
    let mut dx = vec![1.0; 3];
    c.set_time(2.9);
    c.project_response(&mut dx);
    assert_eq!(dx, [0.0; 3]);
    for t in [0.99, 3.01] {
        let (x, v) = hermite_at(&mut c, t);
        assert_eq!((x, v), ([-1.0; 3], [-1.0; 3]));
    }
}

#[test]
fn hermite_spline_pace_uses_the_second_coordinates_of_sx0_sx1() {
    // SX0 = (1, 0), SX1 = (0, 2) (the SOFA example): s(u) = h01(u) + 2·h11(u) = u²
    let mut attrs = hermite_attrs();
    attrs.extend([("SX0", "1 0"), ("SX1", "0 2")]);
    let mut c = CurveProjectiveConstraint::hermite_spline();
    assert!(init_on(&mut c, DofType::Vec3, &[0.0; 3], &attrs).is_empty());
    let u: f64 = 0.3;
    let s = u * u;
    let h = [
        2.0 * s.powi(3) - 3.0 * s * s + 1.0,
        s.powi(3) - 2.0 * s * s + s,
        -2.0 * s.powi(3) + 3.0 * s * s,
        s.powi(3) - s * s,
    ];
    let expected: Vec<f64> = (0..3)
        .map(|k| h[0] * X0[k] + h[1] * DX0[k] + h[2] * X1[k] + h[3] * DX1[k])
        .collect();
    let (x, _) = hermite_at(&mut c, 1.0 + 2.0 * u);
    assert!(close(&x, &expected, 1e-12), "{x:?} vs {expected:?}");
    // the first coordinates do not matter
    let mut attrs2 = hermite_attrs();
    attrs2.extend([("SX0", "-7 0"), ("SX1", "3 2")]);
    let mut c2 = CurveProjectiveConstraint::hermite_spline();
    assert!(init_on(&mut c2, DofType::Vec3, &[0.0; 3], &attrs2).is_empty());
    assert_eq!(hermite_at(&mut c2, 1.6), hermite_at(&mut c, 1.6));
}

#[test]
fn hermite_spline_on_rigid_and_bad_windows() {
    let mut c = CurveProjectiveConstraint::hermite_spline();
    let q = rot(0, 1.0);
    let x0 = frame([0.0; 3], q).to_vec();
    assert!(init_on(&mut c, DofType::Rigid3, &x0, &hermite_attrs()).is_empty());
    c.set_time(1.0);
    let mut x = x0.clone();
    c.project_position(&mut x);
    assert!(close(&x[..3], &X0, 1e-12) && x[3..] == x0[3..]);
    let mut v = vec![0.5; 6];
    c.project_velocity(&mut v);
    assert!(close(&v[..3], &DX0, 1e-12) && v[3..] == [0.5; 3]);
    // EndTime at or before BeginTime (SOFA's defaults are both 0)
    for end in ["1", "0"] {
        let mut c = CurveProjectiveConstraint::hermite_spline();
        let mut attrs = hermite_attrs();
        attrs.push(("EndTime", end));
        let d = init_on(&mut c, DofType::Vec3, &[4.0; 3], &attrs);
        assert_eq!(errors_mentioning(&d, "EndTime"), 1, "{d:?}");
        let (x, v) = hermite_at(&mut c, 1.0);
        assert_eq!((x, v), ([-1.0; 3], [-1.0; 3]));
    }
    let mut c = CurveProjectiveConstraint::hermite_spline();
    let d = init_on(&mut c, DofType::Vec3, &[4.0; 3], &[]);
    assert_eq!(errors_mentioning(&d, "EndTime"), 1, "the defaults: {d:?}");
}

// --- Direction ---

#[test]
fn direction_keeps_points_on_their_line_and_projects_derivatives() {
    let mut c = DirectionProjectiveConstraint::new();
    let x0 = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, -1.0, 0.5];
    let attrs = [("indices", "0 2"), ("direction", "0.5 0.5 0")];
    let d = init_on(&mut c, DofType::Vec3, &x0, &attrs);
    assert!(d.is_empty(), "{d:?}");
    let n = [0.5f64.sqrt(), 0.5f64.sqrt(), 0.0];
    // derivatives keep their component along the direction; point 1 is free
    let mut dx = vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0, -4.0, 1.0, 7.0];
    c.project_response(&mut dx);
    assert!(close(
        &dx,
        &[1.5, 1.5, 0.0, 1.0, 2.0, 3.0, -1.5, -1.5, 0.0],
        1e-12
    ));
    let mut v = vec![0.0, 3.0, 1.0, 9.0, 9.0, 9.0, 0.0, 0.0, 1.0];
    c.project_velocity(&mut v);
    assert!(close(
        &v,
        &[1.5, 1.5, 0.0, 9.0, 9.0, 9.0, 0.0, 0.0, 0.0],
        1e-12
    ));
    // positions go back onto the line through their initial positions
    let mut x = vec![3.0, 1.0, 4.0, 5.0, 5.0, 5.0, 2.0, 0.0, -3.0];
    c.project_position(&mut x);
    assert_eq!(&x[3..6], &[5.0, 5.0, 5.0]);
    for (p, o, moved) in [
        (0, [0.0, 0.0, 0.0], [3.0, 1.0, 4.0]),
        (2, [2.0, -1.0, 0.5], [2.0, 0.0, -3.0]),
    ] {
        let r: Vec<f64> = (0..3).map(|k| x[3 * p + k] - o[k]).collect();
        // on the line: r parallel to n …
        let cross = [
            r[1] * n[2] - r[2] * n[1],
            r[2] * n[0] - r[0] * n[2],
            r[0] * n[1] - r[1] * n[0],
        ];
        assert!(close(&cross, &[0.0; 3], 1e-12), "{r:?}");
        // … where the moved point projects
        let along: f64 = (0..3).map(|k| (moved[k] - o[k]) * n[k]).sum();
        let got: f64 = (0..3).map(|k| r[k] * n[k]).sum();
        assert!((along - got).abs() < 1e-12);
    }
    assert!(c.fixed_scalar_dofs(3).is_empty());
}

#[test]
fn direction_on_vec2_defaults_and_bad_input() {
    // Vec2: the first two numbers of the direction
    let mut c = DirectionProjectiveConstraint::new();
    let d = init_on(
        &mut c,
        DofType::Vec2,
        &[1.0, 1.0, 0.0, 0.0],
        &[("direction", "0 2"), ("indices", "0")],
    );
    assert!(d.is_empty(), "{d:?}");
    let mut x = vec![4.0, 3.0, 8.0, 8.0];
    c.project_position(&mut x);
    assert_eq!(x, [1.0, 3.0, 8.0, 8.0]);
    let mut dx = vec![5.0, -2.0, 1.0, 1.0];
    c.project_response(&mut dx);
    assert_eq!(dx, [0.0, -2.0, 1.0, 1.0]);
    // SOFA's default: point 0, zero direction: held where it started (reported)
    let mut c = DirectionProjectiveConstraint::new();
    let d = init_on(&mut c, DofType::Vec3, &[1.0, 2.0, 3.0, 0.0, 0.0, 0.0], &[]);
    assert_eq!(d.len(), 1);
    assert!(d
        .iter()
        .all(|d| d.severity == Severity::Warning && d.message.contains("zero")));
    let mut x = vec![7.0; 6];
    c.project_position(&mut x);
    assert_eq!(x, [1.0, 2.0, 3.0, 7.0, 7.0, 7.0]);
    let mut v = vec![7.0; 6];
    c.project_velocity(&mut v);
    assert_eq!(v, [0.0, 0.0, 0.0, 7.0, 7.0, 7.0]);
    // an index past the state is reported and dropped
    let mut c = DirectionProjectiveConstraint::new();
    let d = init_on(
        &mut c,
        DofType::Vec3,
        &[0.0; 6],
        &[("indices", "1 4"), ("direction", "1 0 0")],
    );
    assert_eq!(errors_mentioning(&d, "out of range"), 1, "{d:?}");
    let mut dx = vec![1.0; 6];
    c.project_response(&mut dx);
    assert_eq!(dx, [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
    // non-finite or short directions refuse the constraint
    for dir in ["1 nan 0", "1 0"] {
        let mut c = DirectionProjectiveConstraint::new();
        let d = init_on(&mut c, DofType::Vec3, &[0.0; 3], &[("direction", dir)]);
        assert_eq!(errors_mentioning(&d, "direction"), 1, "{dir}: {d:?}");
        let mut x = vec![1.0, 2.0, 3.0];
        c.project_position(&mut x);
        c.project_response(&mut x);
        assert_eq!(x, [1.0, 2.0, 3.0]);
    }
    // a state of another type
    let mut c = DirectionProjectiveConstraint::new();
    let d = init_on(
        &mut c,
        DofType::Rigid3,
        &frame([0.0; 3], Quaternion::identity()),
        &[],
    );
    assert_eq!(errors_mentioning(&d, "Rigid3d"), 1, "{d:?}");
}
