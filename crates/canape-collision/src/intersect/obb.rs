//! Oriented boxes (the CollisionOBBCapsule plugin's OBBCollisionModel) under
//! NewProximityIntersection: box–box (registered by SOFA through RigidDiscreteIntersection,
//! OBBIntTool::computeIntersection) and triangle–box (RigidMeshDiscreteIntersection,
//! MeshIntTool::computeIntersection(Triangle, OBB)). One output per element pair, as SOFA's:
//! the closest points of the two elements, the normal from the first towards the second, and
//! `value` = distance − contact distance, or −depth − contact distance when they overlap; id:
//! the element index in the larger model (OBBIntTool).
//!
//! SOFA's formulation (IntrOBBOBB / IntrTriangleOBB, from Geometric Tools) finds the
//! separating axis of largest separation and builds the contact set on it. Here:
//! - separated elements (some separating axis): the exact closest distance, from the feature
//!   pairs that can realise it between two convex polytopes (a vertex against the other
//!   element, an edge against an edge). When the closest points are not unique (a face
//!   parallel to a face or an edge), the contact points are the mean of all closest pairs
//!   (between convex sets they all share one difference vector, so the mean is a closest pair
//!   too): a box lying flat gets its contact under the middle of the touching area rather
//!   than at one corner;
//! - overlapping elements (no separating axis among the face normals and edge cross products):
//!   the axis of least overlap (SOFA's colliding case, `value` = −depth − contact distance),
//!   the second element's deepest points along it and their push-out onto the first.
//!
//! The point on a box is a point of its rigid frame: its offset from the centre in the box's
//! own frame ([`ContactPoint::rigid`]), so that a force on it also turns the box.

use super::{bary3, Geometry, Output};
use canape_core::collision::{rotate, rotate_back, ContactPoint};
use canape_types::Vec3;

/// One box: its frame (centre, orientation quaternion (x, y, z, w) and axes) and half-sizes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    pub center: Vec3,
    pub q: [f64; 4],
    pub axes: [Vec3; 3],
    pub extent: Vec3,
}

impl Frame {
    pub fn new(center: Vec3, q: [f64; 4], extent: Vec3) -> Self {
        let axes = [Vec3::x(), Vec3::y(), Vec3::z()].map(|u| rotate(q, u));
        Frame {
            center,
            q,
            axes,
            extent,
        }
    }

    /// The eight corners.
    pub fn vertices(&self) -> [Vec3; 8] {
        let a = [0, 1, 2].map(|k| self.axes[k] * self.extent[k]);
        std::array::from_fn(|v| {
            let s = |k: usize| if v & (1 << k) != 0 { 1.0 } else { -1.0 };
            self.center + a[0] * s(0) + a[1] * s(1) + a[2] * s(2)
        })
    }

    /// The twelve edges (corner indices into [`Frame::vertices`]).
    pub fn edges() -> [[usize; 2]; 12] {
        let mut e = [[0; 2]; 12];
        let mut n = 0;
        for k in 0..3 {
            for v in 0..8 {
                if v & (1 << k) == 0 {
                    e[n] = [v, v | (1 << k)];
                    n += 1;
                }
            }
        }
        e
    }

    /// The point of the box closest to `p` (`p` itself inside).
    pub fn closest(&self, p: Vec3) -> Vec3 {
        let d = p - self.center;
        let mut q = self.center;
        for k in 0..3 {
            let t = self.axes[k].dot(&d).clamp(-self.extent[k], self.extent[k]);
            q += self.axes[k] * t;
        }
        q
    }

    /// Half-length of the box's projection on unit `axis`.
    fn radius(&self, axis: &Vec3) -> f64 {
        (0..3)
            .map(|k| self.extent[k] * self.axes[k].dot(axis).abs())
            .sum()
    }

    /// The contact point at world position `p` on this box's rigid frame `i`.
    fn point(&self, i: u32, p: Vec3) -> ContactPoint {
        ContactPoint::rigid(i, rotate_back(self.q, p - self.center))
    }
}

/// The closest points of segments [p0, p1] and [q0, q1], as (point on the first, point on
/// the second).
pub(crate) fn segments(p0: Vec3, p1: Vec3, q0: Vec3, q1: Vec3) -> (Vec3, Vec3) {
    let (s, t) = segment_params(p0, p1, q0, q1);
    (p0 + (p1 - p0) * s, q0 + (q1 - q0) * t)
}

/// Where the closest points of segments [p0, p1] and [q0, q1] lie on them (Ericson,
/// Real-Time Collision Detection 5.1.9): (s, t) in [0, 1]², a degenerate segment counting as
/// its first end.
pub(crate) fn segment_params(p0: Vec3, p1: Vec3, q0: Vec3, q1: Vec3) -> (f64, f64) {
    let (d1, d2, r) = (p1 - p0, q1 - q0, p0 - q0);
    let (a, e, f) = (d1.norm_squared(), d2.norm_squared(), d2.dot(&r));
    let (s, t);
    if a <= f64::EPSILON && e <= f64::EPSILON {
        return (0.0, 0.0);
    }
    if a <= f64::EPSILON {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = d1.dot(&r);
        if e <= f64::EPSILON {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = d1.dot(&d2);
            let denom = a * e - b * b;
            let s0 = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t0 > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            } else {
                t = t0;
                s = s0;
            }
        }
    }
    (s, t)
}

/// The point of triangle `t` closest to `p`, with its barycentric weights of t[1] and t[2]
/// (Ericson 5.1.5).
pub(crate) fn triangle_closest(t: [Vec3; 3], p: Vec3) -> (Vec3, f64, f64) {
    let (a, b, c) = (t[0], t[1], t[2]);
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, 0.0, 0.0);
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, 1.0, 0.0);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, v, 0.0);
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, 0.0, 1.0);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, 0.0, w);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, 1.0 - w, w);
    }
    let denom = va + vb + vc;
    if denom == 0.0 {
        // a degenerate triangle: its first vertex
        return (a, 0.0, 0.0);
    }
    let (v, w) = (vb / denom, vc / denom);
    (a + ab * v + ac * w, v, w)
}

/// The closest pairs found so far: the smallest distance, its pair, and the running mean of
/// the pairs within `tol` of it.
struct Closest {
    d: f64,
    pair: (Vec3, Vec3),
    tol: f64,
    sum: (Vec3, Vec3),
    n: f64,
}

impl Closest {
    fn new(tol: f64) -> Self {
        Closest {
            d: f64::INFINITY,
            pair: (Vec3::zeros(), Vec3::zeros()),
            tol,
            sum: (Vec3::zeros(), Vec3::zeros()),
            n: 0.0,
        }
    }

    fn add(&mut self, a: Vec3, b: Vec3) {
        let d = (b - a).norm();
        if d < self.d - self.tol {
            // a strictly closer pair: the earlier ones are no longer among the closest
            self.sum = (a, b);
            self.n = 1.0;
        } else if d <= self.d + self.tol {
            self.sum.0 += a;
            self.sum.1 += b;
            self.n += 1.0;
        }
        if d < self.d {
            self.d = d;
            self.pair = (a, b);
        }
    }

    /// The mean closest pair.
    fn mean(&self) -> (Vec3, Vec3) {
        (self.sum.0 / self.n, self.sum.1 / self.n)
    }
}

/// The separation of the two shapes' projections on unit `axis` (negative: they overlap by
/// that much), with the sign of the axis that points from the first towards the second.
fn separation(r1: f64, r2: f64, c1: f64, c2: f64) -> (f64, f64) {
    let d = c2 - c1;
    (d.abs() - r1 - r2, if d >= 0.0 { 1.0 } else { -1.0 })
}

/// The largest separation over `axes` (each of the first and second shapes' projections
/// given by `proj`), and for an overlap the axis of least overlap oriented from the first
/// towards the second.
fn sat(axes: &[Vec3], proj: impl Fn(&Vec3) -> (f64, f64, f64, f64)) -> (f64, Vec3) {
    let mut best = (f64::NEG_INFINITY, Vec3::zeros());
    for a in axes {
        let l = a.norm();
        // parallel edges give no axis (the face normals already cover them)
        if l <= 1e-9 {
            continue;
        }
        let a = a / l;
        let (r1, r2, c1, c2) = proj(&a);
        let (s, sign) = separation(r1, r2, c1, c2);
        if s > best.0 {
            best = (s, a * sign);
        }
    }
    best
}

/// The mean of the points of `pts` that reach furthest along `dir` (within `tol`).
fn deepest(pts: &[Vec3], dir: Vec3, tol: f64) -> Vec3 {
    let top = pts
        .iter()
        .map(|p| p.dot(&dir))
        .fold(f64::NEG_INFINITY, f64::max);
    let (mut sum, mut n) = (Vec3::zeros(), 0.0);
    for p in pts.iter().filter(|p| p.dot(&dir) >= top - tol) {
        sum += p;
        n += 1.0;
    }
    sum / n
}

/// A tolerance for ties at the scale of the elements.
fn tie_tolerance(scale: f64) -> f64 {
    1e-10 * (1.0 + scale)
}

/// Box `i` of `g1` against box `j` of `g2` (OBBIntTool::computeIntersection), `alarm` and
/// `contact` with both proximities in.
pub(super) fn obb_obb(
    alarm: f64,
    contact: f64,
    g1: &Geometry,
    i: usize,
    g2: &Geometry,
    j: usize,
    out: &mut Vec<Output>,
) {
    let (Some(a), Some(b)) = (g1.frames.get(i), g2.frames.get(j)) else {
        return;
    };
    let mut axes = [Vec3::zeros(); 15];
    axes[..3].copy_from_slice(&a.axes);
    axes[3..6].copy_from_slice(&b.axes);
    for k in 0..3 {
        for l in 0..3 {
            axes[6 + 3 * k + l] = a.axes[k].cross(&b.axes[l]);
        }
    }
    let (sep, axis) = sat(&axes, |x| {
        (a.radius(x), b.radius(x), a.center.dot(x), b.center.dot(x))
    });
    // a separation along an axis is a lower bound of the distance
    if sep >= alarm {
        return;
    }
    let id = if g1.len > g2.len { i } else { j } as i64;
    let scale = a.extent.norm() + b.extent.norm();
    let tol = tie_tolerance(scale);
    let (va, vb) = (a.vertices(), b.vertices());
    let Some((pa, pb, normal, value)) = contact_of(sep, axis, &vb, tol, alarm, contact, |c| {
        for v in va {
            c.add(v, b.closest(v));
        }
        for v in vb {
            c.add(a.closest(v), v);
        }
        for ea in Frame::edges() {
            for eb in Frame::edges() {
                let (p, q) = segments(va[ea[0]], va[ea[1]], vb[eb[0]], vb[eb[1]]);
                c.add(p, q);
            }
        }
    }) else {
        return;
    };
    out.push(Output {
        elems: [i as u32, j as u32],
        points: [a.point(i as u32, pa), b.point(j as u32, pb)],
        positions: [pa, pb],
        normal,
        value,
        id,
    });
}

/// The contact of an element with box `vb` (its 8 vertices) given the separating-axis test's
/// result (`sep` along `axis`): overlapping, the box is pushed out along the axis of least
/// overlap; separated, the closest pair among the candidates `candidates` adds (their mean
/// when several tie), if within the alarm distance. (first point, second point, normal from
/// the first to the second, distance minus the contact distance).
fn contact_of(
    sep: f64,
    axis: Vec3,
    vb: &[Vec3; 8],
    tol: f64,
    alarm: f64,
    contact: f64,
    candidates: impl FnOnce(&mut Closest),
) -> Option<(Vec3, Vec3, Vec3, f64)> {
    if sep < 0.0 {
        let pb = deepest(vb, -axis, tol);
        return Some((pb + axis * -sep, pb, axis, sep - contact));
    }
    let mut c = Closest::new(tol);
    candidates(&mut c);
    if c.d >= alarm || c.d <= 0.0 {
        return None;
    }
    let (p, q) = c.mean();
    Some((p, q, (c.pair.1 - c.pair.0) / c.d, c.d - contact))
}

/// Triangle `i` of `g1` against box `j` of `g2` (MeshIntTool::computeIntersection(Triangle,
/// OBB)).
pub(super) fn tri_obb(
    alarm: f64,
    contact: f64,
    g1: &Geometry,
    i: usize,
    g2: &Geometry,
    j: usize,
    out: &mut Vec<Output>,
) {
    let Some(b) = g2.frames.get(j) else { return };
    let t = g1.triangles[i];
    let tp = t.map(|v| g1.x[v as usize]);
    let n = (tp[1] - tp[0]).cross(&(tp[2] - tp[0]));
    if n.norm_squared() <= 0.0 {
        return;
    }
    let edges = [tp[1] - tp[0], tp[2] - tp[1], tp[0] - tp[2]];
    let mut axes = [Vec3::zeros(); 13];
    axes[0] = n;
    axes[1..4].copy_from_slice(&b.axes);
    for k in 0..3 {
        for l in 0..3 {
            axes[4 + 3 * k + l] = edges[k].cross(&b.axes[l]);
        }
    }
    let (sep, axis) = sat(&axes, |x| {
        let p = tp.map(|v| v.dot(x));
        let (lo, hi) = (p[0].min(p[1]).min(p[2]), p[0].max(p[1]).max(p[2]));
        (
            0.5 * (hi - lo),
            b.radius(x),
            0.5 * (hi + lo),
            b.center.dot(x),
        )
    });
    if sep >= alarm {
        return;
    }
    let id = if g1.len > g2.len { i } else { j } as i64;
    let scale = b.extent.norm() + (tp[1] - tp[0]).norm() + (tp[2] - tp[0]).norm();
    let tol = tie_tolerance(scale);
    let vb = b.vertices();
    let Some((pa, pb, normal, value)) = contact_of(sep, axis, &vb, tol, alarm, contact, |c| {
        for v in tp {
            c.add(v, b.closest(v));
        }
        for v in vb {
            c.add(triangle_closest(tp, v).0, v);
        }
        for k in 0..3 {
            for e in Frame::edges() {
                let (p, q) = segments(tp[k], tp[(k + 1) % 3], vb[e[0]], vb[e[1]]);
                c.add(p, q);
            }
        }
    }) else {
        return;
    };
    // the triangle's point as weights of its vertices (the closest point of the triangle to
    // the pushed-out point when overlapping)
    let (pa, u, v) = triangle_closest(tp, pa);
    out.push(Output {
        elems: [i as u32, j as u32],
        points: [bary3(t, u, v), b.point(j as u32, pb)],
        positions: [pa, pb],
        normal,
        value,
        id,
    });
}

#[cfg(test)]
#[path = "obb_tests.rs"]
mod tests;
