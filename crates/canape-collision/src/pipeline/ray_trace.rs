//! RayTraceNarrowPhase (Sofa/Component/Collision/Detection/Algorithm/RayTraceNarrowPhase.cpp)
//! between two TriangleOctreeCollisionModels (Sofa/Component/Collision/Geometry/
//! TriangleOctreeModel.cpp): each vertex of one surface that lies in the other's bounding box
//! casts a ray inwards, against its vertex normal; when the ray meets the other surface (a
//! triangle facing the vertex's triangle) before it leaves its own body (the first triangle of
//! its own surface it meets, also facing it, is farther), the vertex is inside the other body:
//! a contact between the vertex and the point hit, normal = the vertex normal, depth = the
//! distance along the ray. Both directions are tested (each model's vertices against the
//! other), as two contact lists.
//!
//! SOFA finds the triangle a ray meets first with a triangle octree; here the model's bounding
//! volume hierarchy gives the candidates and the nearest hit is kept (ties: the first in the
//! hierarchy's order). Not followed: TriangleOctreeModel's normals lag a step (vertex normals
//! summed from the triangle normals of the previous detection) and leave out triangle 0 (its
//! loop starts at 1); here both are those of the current positions, over every triangle.

use super::narrow::Job;
use crate::intersect::{bary3, Geometry, Output, FLAG_P1};
use canape_core::collision::ContactPoint;
use canape_types::Vec3;

/// One surface's unit triangle normals and vertex normals (the normalised sum of the normals
/// of the triangles around each vertex).
#[derive(Clone, Debug, Default)]
pub(super) struct Normals {
    pub triangles: Vec<Vec3>,
    pub vertices: Vec<Vec3>,
}

fn unit(v: Vec3) -> Vec3 {
    let n = v.norm();
    if n > 0.0 {
        v / n
    } else {
        Vec3::zeros()
    }
}

impl Normals {
    pub(super) fn compute(&mut self, g: &Geometry) {
        self.triangles.clear();
        self.vertices.clear();
        self.vertices.resize(g.x.len(), Vec3::zeros());
        for t in g.triangles {
            let p = t.map(|i| g.x.get(i as usize).copied().unwrap_or_default());
            let n = unit((p[1] - p[0]).cross(&(p[2] - p[0])));
            self.triangles.push(n);
            for &i in t {
                if let Some(v) = self.vertices.get_mut(i as usize) {
                    *v += n;
                }
            }
        }
        for v in &mut self.vertices {
            *v = unit(*v);
        }
    }
}

/// Where a ray meets a triangle: Möller–Trumbore as sofa::geometry::Triangle::rayIntersection
/// (determinant and barycentric tolerances of one machine epsilon, hits at t below epsilon
/// refused): (t, u, v) with the point `(1 − u − v)·p0 + u·p1 + v·p2`.
fn ray_triangle(p: [Vec3; 3], origin: Vec3, dir: Vec3) -> Option<(f64, f64, f64)> {
    let eps = f64::EPSILON;
    let (e0, e1) = (p[1] - p[0], p[2] - p[0]);
    let pvec = dir.cross(&e1);
    let det = e0.dot(&pvec);
    if det.abs() <= eps {
        return None;
    }
    let inv = 1.0 / det;
    let tvec = origin - p[0];
    let u = tvec.dot(&pvec) * inv;
    if !(-eps..=1.0 + eps).contains(&u) {
        return None;
    }
    let qvec = tvec.cross(&e0);
    let v = dir.dot(&qvec) * inv;
    if v < -eps || u + v > 1.0 + eps {
        return None;
    }
    let t = e1.dot(&qvec) * inv;
    (t >= eps && t.is_finite()).then_some((t, u, v))
}

/// The nearest triangle of model `side` of the job the ray meets: (triangle, t, u, v).
fn trace(
    job: &Job,
    side: usize,
    origin: Vec3,
    dir: Vec3,
    stack: &mut Vec<crate::bvh::Span>,
) -> Option<(usize, f64, f64, f64)> {
    let g = if side == 0 { &job.g1 } else { &job.g2 };
    let mut best: Option<(usize, f64, f64, f64)> = None;
    job.bvh[side].ray(origin, dir, stack, |i| {
        let Some(t) = g.triangles.get(i) else { return };
        // (no allocation: this runs for every candidate triangle of every ray)
        let corner = |k: u32| g.x.get(k as usize).copied();
        let (Some(a), Some(b), Some(c)) = (corner(t[0]), corner(t[1]), corner(t[2])) else {
            return;
        };
        if let Some((d, u, v)) = ray_triangle([a, b, c], origin, dir) {
            if best.is_none_or(|b| d < b.1) {
                best = Some((i, d, u, v));
            }
        }
    });
    best
}

/// The contacts of the job's first model's vertices inside its second model, appended to `out`
/// (SOFA's findPairsVolume(first, second)). `normals` are the two models' normals.
pub(super) fn vertices_inside(
    job: &Job,
    normals: [&Normals; 2],
    stack: &mut Vec<crate::bvh::Span>,
    out: &mut Vec<Output>,
) {
    let (g1, g2) = (&job.g1, &job.g2);
    // the second surface's box (its triangles' vertices)
    let mut lo = Vec3::repeat(f64::INFINITY);
    let mut hi = Vec3::repeat(f64::NEG_INFINITY);
    for t in g2.triangles {
        for &i in t {
            if let Some(p) = g2.x.get(i as usize) {
                lo = lo.inf(p);
                hi = hi.sup(p);
            }
        }
    }
    for (j, tri) in g1.triangles.iter().enumerate() {
        let flags = g1.flags.get(j).copied().unwrap_or(0);
        let n1 = normals[0].triangles[j];
        // the vertices this triangle owns, numbered in that order for the output id
        let owned = (0..3).filter(|&k| flags & (FLAG_P1 << k) != 0);
        for (slot, k) in owned.enumerate() {
            let vi = tri[k] as usize;
            let (Some(&p), Some(&n)) = (g1.x.get(vi), normals[0].vertices.get(vi)) else {
                continue;
            };
            if (0..3).any(|c| p[c] < lo[c] || p[c] > hi[c]) {
                continue;
            }
            let Some((t2, d, u, v)) = trace(job, 1, p, -n, stack) else {
                continue;
            };
            if n1.dot(&normals[1].triangles[t2]) > 0.0 {
                continue;
            }
            // the ray must meet the other surface before leaving its own body
            match trace(job, 0, p, -n, stack) {
                Some((t3, d3, ..)) if d3 >= d && n1.dot(&normals[0].triangles[t3]) <= 0.0 => {}
                _ => continue,
            }
            let tri2 = g2.triangles[t2];
            let q = g2.x[tri2[0] as usize] * (1.0 - u - v)
                + g2.x[tri2[1] as usize] * u
                + g2.x[tri2[2] as usize] * v;
            out.push(Output {
                elems: [j as u32, t2 as u32],
                points: [ContactPoint::vertex(vi as u32), bary3(tri2, u, v)],
                positions: [p, q],
                normal: n,
                value: -d,
                id: (j * 3 + slot) as i64,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ray_meets_a_triangle_where_its_plane_is_crossed_inside_it() {
        let p = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ];
        let o = Vec3::new(0.25, 0.5, 2.0);
        let (t, u, v) = ray_triangle(p, o, Vec3::new(0.0, 0.0, -1.0)).unwrap();
        assert!((t - 2.0).abs() < 1e-15 && (u - 0.25).abs() < 1e-15 && (v - 0.5).abs() < 1e-15);
        // behind the origin, outside the triangle, parallel to it, from one of its vertices
        assert!(ray_triangle(p, o, Vec3::new(0.0, 0.0, 1.0)).is_none());
        assert!(ray_triangle(p, Vec3::new(0.8, 0.8, 1.0), Vec3::new(0.0, 0.0, -1.0)).is_none());
        assert!(ray_triangle(p, o, Vec3::new(1.0, 0.0, 0.0)).is_none());
        assert!(ray_triangle(p, p[0], Vec3::new(0.0, 0.0, -1.0)).is_none());
    }
}
