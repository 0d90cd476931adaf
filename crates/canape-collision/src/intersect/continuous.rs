//! CCDTightInclusionIntersection's element tests
//! (Sofa/Component/Collision/Detection/Intersection/.../CCDTightInclusionIntersection.cpp):
//! each element moves in a straight line from its position at the start of the step to its
//! free-motion position, and Tight Inclusion's root finder (`ccd`) says whether the two come
//! within the contact distance on the way, and when (the time of impact, toi). The contact is
//! then made from the elements at toi, on the positions at the start of the step:
//! - triangle–point: the point at toi projected on the triangle's plane at toi gives
//!   barycentric weights (SOFA's Triangle::getBarycentricCoordinates, from unsigned areas);
//!   the contact joins that spot of the triangle to the point, the normal is the triangle's at
//!   toi, the value the point's height above that plane now, less the contact distance.
//! - line–line: the closest points of the two segments at toi give the weights; the normal
//!   joins them at toi. SOFA hands the root finder the two lines' ends crosswise (both first
//!   ends as one edge, both second ends as the other), adds this contact for every candidate
//!   pair, impact or not (with toi left at 2, an extrapolation), and before it an empty
//!   default output (its `resize` then `push_back`): here the root finder gets the two lines,
//!   and only a pair it reports gives one contact.

use super::ccd::{edge_edge, vertex_face, CcdSettings};
use super::obb::segment_params;
use super::{bary2, Geometry, Output, Params};
use canape_core::collision::{CollisionShape, ContactPoint};
use canape_types::Vec3;

/// Test element `i` of `g1` against element `j` of `g2` (triangle–point or line–line, in that
/// order) and append the output.
pub(super) fn intersect(
    p: &Params,
    g1: &Geometry,
    i: usize,
    g2: &Geometry,
    j: usize,
    out: &mut Vec<Output>,
) {
    let settings = CcdSettings {
        ms: p.contact + g1.proximity + g2.proximity,
        tolerance: p.ccd_tolerance,
        t_max: 1.0,
        max_iterations: p.ccd_max_iterations,
    };
    let larger = if g1.len > g2.len { i as i64 } else { j as i64 };
    match (g1.shape, g2.shape) {
        (CollisionShape::Triangle, CollisionShape::Point) => {
            let Some(&t) = g1.triangles.get(i) else {
                return;
            };
            let (Some(begin), Some(end)) = (corners(g1.x, t), corners(g1.x_free, t)) else {
                return;
            };
            let (Some(&q0), Some(&q1)) = (g2.x.get(j), g2.x_free.get(j)) else {
                return;
            };
            let Some(toi) = vertex_face(q0, begin, q1, end, &settings) else {
                return;
            };
            let at = |k: usize| begin[k] * (1.0 - toi) + end[k] * toi;
            let (a, b, c) = (at(0), at(1), at(2));
            let q = q0 * (1.0 - toi) + q1 * toi;
            let n = (b - a).cross(&(c - a));
            let len = n.norm();
            if len.is_nan() || len <= 0.0 {
                return;
            }
            let n = n / len;
            let centre = (a + b + c) / 3.0;
            let foot = centre + (q - centre) - n * (q - centre).dot(&n);
            let w = barycentric(foot, a, b, c);
            let on_triangle = begin[0] * w[0] + begin[1] * w[1] + begin[2] * w[2];
            out.push(Output {
                elems: [i as u32, j as u32],
                points: [
                    ContactPoint {
                        index: t,
                        weight: w,
                        count: 3,
                        offset: Vec3::zeros(),
                    },
                    ContactPoint::vertex(j as u32),
                ],
                positions: [on_triangle, q0],
                normal: n,
                value: (q0 - on_triangle).dot(&n) - settings.ms,
                id: larger,
            });
        }
        (CollisionShape::Line, CollisionShape::Line) => {
            let (Some(&e1), Some(&e2)) = (g1.edges.get(i), g2.edges.get(j)) else {
                return;
            };
            let ends =
                |x: &[Vec3], e: [u32; 2]| Some([*x.get(e[0] as usize)?, *x.get(e[1] as usize)?]);
            let (Some(a0), Some(a1), Some(b0), Some(b1)) = (
                ends(g1.x, e1),
                ends(g1.x_free, e1),
                ends(g2.x, e2),
                ends(g2.x_free, e2),
            ) else {
                return;
            };
            let Some(toi) = edge_edge(a0, b0, a1, b1, &settings) else {
                return;
            };
            let lerp = |s: [Vec3; 2], f: [Vec3; 2], k: usize| s[k] * (1.0 - toi) + f[k] * toi;
            let (pa, pb) = (lerp(a0, a1, 0), lerp(a0, a1, 1));
            let (qa, qb) = (lerp(b0, b1, 0), lerp(b0, b1, 1));
            let (s, u) = segment_params(pa, pb, qa, qb);
            let d = (qa + (qb - qa) * u) - (pa + (pb - pa) * s);
            let dist = d.norm();
            if dist.is_nan() || dist <= 0.0 {
                return;
            }
            out.push(Output {
                elems: [i as u32, j as u32],
                points: [bary2(e1, s), bary2(e2, u)],
                positions: [a0[0] + (a0[1] - a0[0]) * s, b0[0] + (b0[1] - b0[0]) * u],
                normal: d / dist,
                value: dist - settings.ms,
                id: larger,
            });
        }
        _ => {}
    }
}

/// A triangle's three corners in `x`, if all are there.
fn corners(x: &[Vec3], t: [u32; 3]) -> Option<[Vec3; 3]> {
    Some([
        *x.get(t[0] as usize)?,
        *x.get(t[1] as usize)?,
        *x.get(t[2] as usize)?,
    ])
}

/// SOFA's Triangle::getBarycentricCoordinates: the weights of `p` from the (unsigned) areas
/// of the sub-triangles it makes with the edges, the third one the rest (zero when within
/// machine epsilon); (−1, −1, −1) for a flat triangle. Exact for a point inside the triangle.
fn barycentric(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> [f64; 3] {
    let area = |u: Vec3, v: Vec3, w: Vec3| 0.5 * (v - u).cross(&(w - u)).norm();
    let whole = area(a, b, c);
    if whole.abs() < f64::EPSILON {
        return [-1.0, -1.0, -1.0];
    }
    let w0 = area(b, c, p) / whole;
    let w1 = area(a, p, c) / whole;
    let mut w2 = 1.0 - w0 - w1;
    if w2.abs() <= f64::EPSILON {
        w2 = 0.0;
    }
    [w0, w1, w2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barycentric_weights_inside_a_triangle() {
        let (a, b, c) = (
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(0.0, 2.0, 0.0),
        );
        let w = barycentric(Vec3::new(0.5, 0.25, 0.0), a, b, c);
        let back = a * w[0] + b * w[1] + c * w[2];
        assert!((back - Vec3::new(0.5, 0.25, 0.0)).norm() < 1e-15, "{w:?}");
        assert_eq!(barycentric(a, a, a, c), [-1.0, -1.0, -1.0]);
    }
}
