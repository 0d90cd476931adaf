//! Tests of the box intersections against brute-force geometry: random boxes and triangles,
//! the distance of every separated pair within the alarm distance checked against an
//! independent closest-distance computation (points against faces, edges against edges),
//! and whether there is a contact at all checked against an independent overlap test.

use super::*;
use crate::intersect::{intersect, Params};
use crate::settings::{Continuous, Method};
use canape_core::collision::CollisionShape;

use crate::intersect::test_rng::Rng;

/// This file's samplers over the shared stream.
impl Rng {
    fn quat(&mut self) -> [f64; 4] {
        let q = [0; 4].map(|_| self.range(-1.0, 1.0));
        let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
        q.map(|v| v / n)
    }
    fn frame(&mut self, spread: f64) -> Frame {
        let c = Vec3::new(
            self.range(-spread, spread),
            self.range(-spread, spread),
            self.range(-spread, spread),
        );
        let e = Vec3::new(
            self.range(0.2, 1.0),
            self.range(0.2, 1.0),
            self.range(0.2, 1.0),
        );
        Frame::new(c, self.quat(), e)
    }
}

fn params(alarm: f64, contact: f64) -> Params {
    Params {
        method: Method::NewProximity,
        alarm,
        contact,
        use_line_line: true,
        use_line_point: true,
        use_point_point: true,
        use_sphere_triangle: true,
        use_surface_normals: false,
        cone_filter: false,
        angle_cone: 0.0,
        cone_factor: 0.0,
        continuous: Continuous::None,
        ccd_tolerance: 1e-10,
        ccd_max_iterations: 1000,
    }
}

fn obb_geometry<'a>(frames: &'a [Frame], x: &'a [Vec3]) -> Geometry<'a> {
    Geometry {
        shape: CollisionShape::Obb,
        x,
        x_free: &[],
        edges: &[],
        triangles: &[],
        flags: &[],
        radii: &[],
        frames,
        adjacency: None,
        proximity: 0.0,
        len: frames.len(),
    }
}

fn tri_geometry<'a>(x: &'a [Vec3], t: &'a [[u32; 3]]) -> Geometry<'a> {
    Geometry {
        shape: CollisionShape::Triangle,
        x,
        x_free: &[],
        edges: &[],
        triangles: t,
        flags: &[],
        radii: &[],
        frames: &[],
        adjacency: None,
        proximity: 0.0,
        len: t.len(),
    }
}

/// The corners of a box from its centre, axes and half-sizes (written independently of
/// `Frame::vertices`).
fn corners(f: &Frame) -> Vec<Vec3> {
    let mut v = Vec::new();
    for sx in [-1.0, 1.0] {
        for sy in [-1.0, 1.0] {
            for sz in [-1.0, 1.0] {
                v.push(
                    f.center
                        + f.axes[0] * (sx * f.extent.x)
                        + f.axes[1] * (sy * f.extent.y)
                        + f.axes[2] * (sz * f.extent.z),
                );
            }
        }
    }
    v
}

/// Faces of a box as (a corner, the two edge vectors from it): parallelograms.
fn faces(f: &Frame) -> Vec<(Vec3, Vec3, Vec3)> {
    let mut out = Vec::new();
    for k in 0..3 {
        let (u, w) = ((k + 1) % 3, (k + 2) % 3);
        for s in [-1.0, 1.0] {
            let o = f.center + f.axes[k] * (s * f.extent[k])
                - f.axes[u] * f.extent[u]
                - f.axes[w] * f.extent[w];
            out.push((
                o,
                f.axes[u] * (2.0 * f.extent[u]),
                f.axes[w] * (2.0 * f.extent[w]),
            ));
        }
    }
    out
}

/// All the edges of a box as segments.
fn box_segments(f: &Frame) -> Vec<(Vec3, Vec3)> {
    let c = corners(f);
    let mut out = Vec::new();
    for i in 0..8usize {
        for j in i + 1..8 {
            // corners differing in exactly one sign
            if (i ^ j).count_ones() == 1 {
                out.push((c[i], c[j]));
            }
        }
    }
    out
}

/// Distance from p to the parallelogram o + s·u + t·w (s, t in [0, 1]): the plane's foot
/// when inside, else the closest of its four sides.
fn point_parallelogram(p: Vec3, o: Vec3, u: Vec3, w: Vec3) -> f64 {
    let d = p - o;
    let (uu, ww, uw) = (u.dot(&u), w.dot(&w), u.dot(&w));
    let det = uu * ww - uw * uw;
    let s = (d.dot(&u) * ww - d.dot(&w) * uw) / det;
    let t = (d.dot(&w) * uu - d.dot(&u) * uw) / det;
    if (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t) {
        return (d - u * s - w * t).norm();
    }
    [
        (o, o + u),
        (o + u, o + u + w),
        (o + u + w, o + w),
        (o + w, o),
    ]
    .iter()
    .map(|&(a, b)| point_segment(p, a, b))
    .fold(f64::INFINITY, f64::min)
}

fn point_segment(p: Vec3, a: Vec3, b: Vec3) -> f64 {
    let ab = b - a;
    let t = ((p - a).dot(&ab) / ab.norm_squared()).clamp(0.0, 1.0);
    (p - a - ab * t).norm()
}

/// Distance between segments: the interior stationary point when it lies inside both, else
/// the best of the four endpoint-to-segment distances.
fn segment_segment(a0: Vec3, a1: Vec3, b0: Vec3, b1: Vec3) -> f64 {
    let (u, v, w) = (a1 - a0, b1 - b0, a0 - b0);
    let (a, b, c, d, e) = (u.dot(&u), u.dot(&v), v.dot(&v), u.dot(&w), v.dot(&w));
    let den = a * c - b * b;
    let mut best = [
        point_segment(a0, b0, b1),
        point_segment(a1, b0, b1),
        point_segment(b0, a0, a1),
        point_segment(b1, a0, a1),
    ]
    .into_iter()
    .fold(f64::INFINITY, f64::min);
    if den > 1e-14 * a * c {
        let s = (b * e - c * d) / den;
        let t = (a * e - b * d) / den;
        if (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t) {
            best = best.min((w + u * s - v * t).norm());
        }
    }
    best
}

/// Distance from p to triangle (a, b, c): the plane's foot when inside, else its sides.
fn point_triangle(p: Vec3, t: [Vec3; 3]) -> f64 {
    let n = (t[1] - t[0]).cross(&(t[2] - t[0]));
    let foot = p - n * ((p - t[0]).dot(&n) / n.norm_squared());
    let inside = (0..3).all(|k| {
        let (a, b) = (t[k], t[(k + 1) % 3]);
        (b - a).cross(&(foot - a)).dot(&n) >= 0.0
    });
    if inside {
        return (p - foot).norm();
    }
    (0..3)
        .map(|k| point_segment(p, t[k], t[(k + 1) % 3]))
        .fold(f64::INFINITY, f64::min)
}

/// Whether segment [a, b] crosses the parallelogram o + s·u + t·w.
fn segment_crosses_parallelogram(a: Vec3, b: Vec3, o: Vec3, u: Vec3, w: Vec3) -> bool {
    let n = u.cross(&w);
    let (da, db) = ((a - o).dot(&n), (b - o).dot(&n));
    if da * db > 0.0 || da == db {
        return false;
    }
    let q = a + (b - a) * (da / (da - db));
    point_parallelogram(q, o, u, w) < 1e-12
}

fn segment_crosses_triangle(a: Vec3, b: Vec3, t: [Vec3; 3]) -> bool {
    let n = (t[1] - t[0]).cross(&(t[2] - t[0]));
    let (da, db) = ((a - t[0]).dot(&n), (b - t[0]).dot(&n));
    if da * db > 0.0 || da == db {
        return false;
    }
    let q = a + (b - a) * (da / (da - db));
    point_triangle(q, t) < 1e-12
}

fn inside(f: &Frame, p: Vec3) -> bool {
    let d = p - f.center;
    (0..3).all(|k| f.axes[k].dot(&d).abs() <= f.extent[k])
}

/// Brute force: (distance, overlapping) of two boxes.
fn brute_boxes(a: &Frame, b: &Frame) -> (f64, bool) {
    let overlap = corners(a).iter().any(|&p| inside(b, p))
        || corners(b).iter().any(|&p| inside(a, p))
        || box_segments(a).iter().any(|&(p, q)| {
            faces(b)
                .iter()
                .any(|&(o, u, w)| segment_crosses_parallelogram(p, q, o, u, w))
        })
        || box_segments(b).iter().any(|&(p, q)| {
            faces(a)
                .iter()
                .any(|&(o, u, w)| segment_crosses_parallelogram(p, q, o, u, w))
        });
    let mut d = f64::INFINITY;
    for (x, y) in [(a, b), (b, a)] {
        for p in corners(x) {
            for (o, u, w) in faces(y) {
                d = d.min(point_parallelogram(p, o, u, w));
            }
        }
    }
    for (p, q) in box_segments(a) {
        for (r, s) in box_segments(b) {
            d = d.min(segment_segment(p, q, r, s));
        }
    }
    (d, overlap)
}

/// Brute force: (distance, overlapping) of a triangle and a box.
fn brute_tri_box(t: [Vec3; 3], b: &Frame) -> (f64, bool) {
    let edges = [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])];
    let overlap = t.iter().any(|&p| inside(b, p))
        || edges.iter().any(|&(p, q)| {
            faces(b)
                .iter()
                .any(|&(o, u, w)| segment_crosses_parallelogram(p, q, o, u, w))
        })
        || box_segments(b)
            .iter()
            .any(|&(p, q)| segment_crosses_triangle(p, q, t));
    let mut d = f64::INFINITY;
    for p in t {
        for (o, u, w) in faces(b) {
            d = d.min(point_parallelogram(p, o, u, w));
        }
    }
    for p in corners(b) {
        d = d.min(point_triangle(p, t));
    }
    for (p, q) in edges {
        for (r, s) in box_segments(b) {
            d = d.min(segment_segment(p, q, r, s));
        }
    }
    (d, overlap)
}

/// Check one output against the brute-force distance `d` and overlap: its value, its points
/// (on their elements, at the distance), its normal.
fn check_output(o: &Output, d: f64, overlap: bool, contact: f64, what: &str) {
    assert!(o.normal.iter().all(|c| c.is_finite()), "{what}: {o:?}");
    assert!((o.normal.norm() - 1.0).abs() < 1e-9, "{what}: {o:?}");
    if overlap {
        assert!(o.value < -contact + 1e-12, "{what}: overlap but {o:?}");
    } else {
        assert!(
            (o.value + contact - d).abs() < 1e-12,
            "{what}: distance {} against brute force {d}",
            o.value + contact
        );
        // the contact points are a closest pair, the normal along them
        let gap = o.positions[1] - o.positions[0];
        assert!((gap.norm() - d).abs() < 1e-8, "{what}: {o:?} {d}");
        assert!((gap - o.normal * d).norm() < 1e-8, "{what}: {o:?}");
    }
}

#[test]
fn box_box_distances_and_contacts_match_brute_force() {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let (alarm, contact) = (0.6, 0.1);
    let p = params(alarm, contact);
    let (mut near, mut overlapping, mut far) = (0, 0, 0);
    for case in 0..3000 {
        let frames = [rng.frame(1.6), rng.frame(1.6)];
        let x = [frames[0].center, frames[1].center];
        let g = obb_geometry(&frames, &x);
        let (g1, g2) = (
            obb_geometry(&frames[..1], &x[..1]),
            obb_geometry(&frames[1..], &x[1..]),
        );
        let _ = g;
        let mut out = Vec::new();
        intersect(&p, &g1, 0, &g2, 0, &mut out);
        let (d, overlap) = brute_boxes(&frames[0], &frames[1]);
        let what = format!("case {case}: {frames:?}");
        let expect = overlap || d < alarm;
        assert_eq!(
            out.len(),
            usize::from(expect),
            "{what}: d {d} overlap {overlap}"
        );
        if let Some(o) = out.first() {
            check_output(o, d, overlap, contact, &what);
            // the points on the boxes are rigid offsets reproducing the positions
            for (k, f) in frames.iter().enumerate() {
                let r = rotate(f.q, o.points[k].offset);
                assert!((f.center + r - o.positions[k]).norm() < 1e-12, "{what}");
            }
            if overlap {
                overlapping += 1;
            } else {
                near += 1;
            }
        } else {
            far += 1;
        }
    }
    // the random cases cover every outcome
    assert!(
        near > 100 && overlapping > 100 && far > 100,
        "{near} {overlapping} {far}"
    );
}

#[test]
fn triangle_box_distances_and_contacts_match_brute_force() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let (alarm, contact) = (0.6, 0.1);
    let p = params(alarm, contact);
    let (mut near, mut overlapping, mut far) = (0, 0, 0);
    for case in 0..3000 {
        let frames = [rng.frame(0.5)];
        let c = [0; 3].map(|_| {
            Vec3::new(
                rng.range(-2.0, 2.0),
                rng.range(-2.0, 2.0),
                rng.range(-2.0, 2.0),
            )
        });
        let tris = [[0u32, 1, 2]];
        let g1 = tri_geometry(&c, &tris);
        let bx = [frames[0].center];
        let g2 = obb_geometry(&frames, &bx);
        let mut out = Vec::new();
        intersect(&p, &g1, 0, &g2, 0, &mut out);
        let (d, overlap) = brute_tri_box(c, &frames[0]);
        let what = format!("case {case}: {c:?} {frames:?}");
        let expect = overlap || d < alarm;
        assert_eq!(
            out.len(),
            usize::from(expect),
            "{what}: d {d} overlap {overlap}"
        );
        if let Some(o) = out.first() {
            check_output(o, d, overlap, contact, &what);
            // the triangle's point is its weighted vertices
            let w = o.points[0].weight;
            let q = c[0] * w[0] + c[1] * w[1] + c[2] * w[2];
            assert!((q - o.positions[0]).norm() < 1e-9, "{what}");
            let f = &frames[0];
            let r = rotate(f.q, o.points[1].offset);
            assert!((f.center + r - o.positions[1]).norm() < 1e-12, "{what}");
            if overlap {
                overlapping += 1;
            } else {
                near += 1;
            }
        } else {
            far += 1;
        }
    }
    assert!(
        near > 100 && overlapping > 100 && far > 100,
        "{near} {overlapping} {far}"
    );
}

/// A unit box lying flat 0.3 above a big triangle: one contact under the middle of its face
/// (the mean of the tied closest pairs), normal straight up.
#[test]
fn a_flat_box_over_a_triangle_touches_under_its_middle() {
    let c = [
        Vec3::new(-5.0, 0.0, -5.0),
        Vec3::new(5.0, 0.0, 5.0),
        Vec3::new(5.0, 0.0, -5.0),
    ];
    let tris = [[0u32, 1, 2]];
    let frames = [Frame::new(
        Vec3::new(1.0, 0.8, -2.0),
        [0.0, 0.0, 0.0, 1.0],
        Vec3::repeat(0.5),
    )];
    let bx = [frames[0].center];
    let (g1, g2) = (tri_geometry(&c, &tris), obb_geometry(&frames, &bx));
    let mut out = Vec::new();
    intersect(&params(0.5, 0.1), &g1, 0, &g2, 0, &mut out);
    assert_eq!(out.len(), 1, "{out:?}");
    let o = out[0];
    assert!((o.value - 0.2).abs() < 1e-12, "{o:?}");
    assert!((o.normal - Vec3::y()).norm() < 1e-12, "{o:?}");
    assert!(
        (o.positions[1] - Vec3::new(1.0, 0.3, -2.0)).norm() < 1e-9,
        "{o:?}"
    );
    assert!(
        (o.points[1].offset - Vec3::new(0.0, -0.5, 0.0)).norm() < 1e-9,
        "{o:?}"
    );
}
