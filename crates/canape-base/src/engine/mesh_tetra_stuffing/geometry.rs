//! Vector helpers in SOFA's order of operations, and SOFA's ray–triangle test.

use super::P3;

pub(super) fn sub(a: P3, b: P3) -> P3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// The dot product summed left to right, as sofa::type::Vec does.
pub(super) fn dot(a: P3, b: P3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(super) fn cross(a: P3, b: P3) -> P3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `a + (b − a)·s`, per component.
pub(super) fn towards(a: P3, b: P3, s: f64) -> P3 {
    [
        a[0] + (b[0] - a[0]) * s,
        a[1] + (b[1] - a[1]) * s,
        a[2] + (b[2] - a[2]) * s,
    ]
}

/// Six times the signed volume of the tetrahedron (a, b, c, d).
pub(super) fn vol6(a: P3, b: P3, c: P3, d: P3) -> f64 {
    dot(sub(b, a), cross(sub(c, a), sub(d, a)))
}

/// The ray–triangle test of sofa/geometry/Triangle.h (`rayIntersection`), with its tolerances
/// (machine epsilon, absolute on the determinant) and its order of operations: the ray
/// parameter t of the hit (in units of `dir`, t ≥ ε), both faces counting.
pub(super) fn ray_intersection(n0: P3, n1: P3, n2: P3, origin: P3, dir: P3) -> Option<f64> {
    let eps = f64::EPSILON;
    let e0 = sub(n1, n0);
    let e1 = sub(n2, n0);
    let pvec = cross(dir, e1);
    let det = dot(e0, pvec);
    if det.abs() <= eps {
        return None;
    }
    let inv_det = 1.0 / det;
    let tvec = sub(origin, n0);
    let u = dot(tvec, pvec) * inv_det;
    if u < 0.0 - eps || u > 1.0 + eps {
        return None;
    }
    let qvec = cross(tvec, e0);
    let v = dot(dir, qvec) * inv_det;
    if v < 0.0 - eps || u + v > 1.0 + eps {
        return None;
    }
    let t = dot(e1, qvec) * inv_det;
    if t < eps || t.is_nan() || v.is_nan() || u.is_nan() {
        return None;
    }
    Some(t)
}
