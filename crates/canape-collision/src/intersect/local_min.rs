//! LocalMinDistance (Sofa/Component/Collision/Detection/Intersection/LocalMinDistance.cpp):
//! MinProximity's closest points with its own limits, kept only where both elements' normal
//! cones accept the direction towards the other.

use super::{bary2, bary3, tri_coords, Geometry, Output, Params};
use canape_core::collision::{CollisionShape, ContactPoint};
use canape_types::Vec3;

/// LocalMinDistance (LocalMinDistance.cpp): MinProximity's closest points with its own
/// limits — segments' interiors only for line–point (and not for a segment much shorter than
/// the distance), determinant 1e-30 and parameters within 1e-15 of the ends for line–line,
/// spheres by their centres — and each contact kept only if both elements' normal cones
/// accept the direction towards the other (`valid`).
pub(super) fn local_min(
    p: &Params,
    g1: &Geometry,
    i: usize,
    g2: &Geometry,
    j: usize,
    out: &mut Vec<Output>,
) {
    use CollisionShape::*;
    let prox = g1.proximity + g2.proximity;
    let r1 = if g1.shape == Sphere {
        g1.radius(i)
    } else {
        0.0
    };
    let r2 = if g2.shape == Sphere {
        g2.radius(j)
    } else {
        0.0
    };
    let alarm = p.alarm + prox + r1 + r2;
    let contact = p.contact + prox + r1 + r2;
    let larger = if g1.len > g2.len { i as i64 } else { j as i64 };
    let (a, b, pts, id) = match (g1.shape, g2.shape) {
        (Sphere | Point, Sphere | Point) => (
            g1.x[i],
            g2.x[j],
            [
                ContactPoint::vertex(i as u32),
                ContactPoint::vertex(j as u32),
            ],
            larger,
        ),
        (Line, Point | Sphere) => {
            let e = g1.edges[i];
            let (q1, q2) = (g1.p(e[0]), g1.p(e[1]));
            let q = g2.x[j];
            let ab = q2 - q1;
            let ap = q - q1;
            if ab.norm() < 1e-12 * ap.norm() {
                return;
            }
            let t = ap.dot(&ab) / ab.norm_squared();
            if !(1e-6..=0.999999).contains(&t) {
                return;
            }
            (
                q1 + ab * t,
                q,
                [bary2(e, t), ContactPoint::vertex(j as u32)],
                j as i64,
            )
        }
        (Line, Line) => {
            let (e, f) = (g1.edges[i], g2.edges[j]);
            let (a0, a1, b0, b1) = (g1.p(e[0]), g1.p(e[1]), g2.p(f[0]), g2.p(f[1]));
            let (ab, cd, ac) = (a1 - a0, b1 - b0, b0 - a0);
            let (m00, m11, m01) = (ab.norm_squared(), cd.norm_squared(), -cd.dot(&ab));
            let (v0, v1) = (ab.dot(&ac), -cd.dot(&ac));
            let det = m00 * m11 - m01 * m01;
            let (mut alpha, mut beta) = (0.5, 0.5);
            if det.abs() > 1e-30 {
                alpha = (v0 * m11 - v1 * m01) / det;
                beta = (v1 * m00 - v0 * m01) / det;
                let inside = |x: f64| (1e-15..=1.0 - 1e-15).contains(&x);
                if !inside(alpha) || !inside(beta) {
                    return;
                }
            }
            (
                a0 + ab * alpha,
                b0 + cd * beta,
                [bary2(e, alpha), bary2(f, beta)],
                larger,
            )
        }
        (Triangle, Point | Sphere) => {
            let t = g1.triangles[i];
            let tp = [g1.p(t[0]), g1.p(t[1]), g1.p(t[2])];
            let q = g2.x[j];
            let Some((alpha, beta, ..)) = tri_coords(tp, q) else {
                return;
            };
            if alpha < 1e-6 || beta < 1e-6 || alpha + beta > 0.999999 {
                return;
            }
            (
                tp[0] + (tp[1] - tp[0]) * alpha + (tp[2] - tp[0]) * beta,
                q,
                [bary3(t, alpha, beta), ContactPoint::vertex(j as u32)],
                j as i64,
            )
        }
        _ => return,
    };
    let d = b - a;
    let d2 = d.norm_squared();
    if d2 >= alarm * alarm || d2 <= 0.0 {
        return;
    }
    if p.cone_filter && (!valid(p, g1, i, d) || !valid(p, g2, j, -d)) {
        return;
    }
    let dist = d2.sqrt();
    out.push(Output {
        elems: [i as u32, j as u32],
        points: pts,
        positions: [a, b],
        normal: d / dist,
        value: dist - contact,
        id,
    });
}

fn unit(v: Vec3) -> Vec3 {
    let n = v.norm();
    if n > 0.0 {
        v / n
    } else {
        v
    }
}

/// Whether element `e` of `g` accepts a contact in direction `d` (from it towards the other
/// element): LocalMinDistance::testValidity. A triangle only in front of its face; a line
/// between its two triangles' normals widened by the cone; a point within the cone of its
/// neighbourhood's mean normal (only when a line model sits beside it); a sphere always.
fn valid(p: &Params, g: &Geometry, e: usize, d: Vec3) -> bool {
    use CollisionShape::*;
    let Some(adj) = g.adjacency else {
        return true;
    };
    let dn = d.norm();
    let x = |i: u32| g.x.get(i as usize).copied().unwrap_or_default();
    let tri_normal = |t: [u32; 3]| (x(t[1]) - x(t[0])).cross(&(x(t[2]) - x(t[0])));
    match g.shape {
        // (LocalMinDistance tests no box: the dispatch never brings one here)
        Sphere | Obb => true,
        Triangle => {
            adj.both_side || {
                let t = g.triangles[e];
                tri_normal(t).dot(&d) >= 0.0
            }
        }
        Point => {
            if !adj.line_model_near {
                return true;
            }
            let pt = g.x[e];
            let around_edges = adj.vertex_edges.get(e).map_or(&[][..], |v| &v[..]);
            let edge_dir = |k: u32| {
                let ed = adj.edges[k as usize];
                unit((pt - x(ed[0])) + (pt - x(ed[1])))
            };
            let mut mean = Vec3::zeros();
            let around_tris = adj.vertex_triangles.get(e).map_or(&[][..], |v| &v[..]);
            for &t in around_tris {
                mean += unit(tri_normal(adj.triangles[t as usize]));
            }
            if around_tris.is_empty() {
                for &k in around_edges {
                    mean += edge_dir(k);
                }
            }
            if mean.norm() > 1e-10 {
                mean = unit(mean);
                if mean.dot(&d) < -p.angle_cone * dn && !adj.both_side {
                    return false;
                }
            }
            around_edges.iter().all(|&k| {
                let l = edge_dir(k);
                let cone = (mean.dot(&l) * p.cone_factor).max(0.0) + p.angle_cone;
                l.dot(&d) >= -cone * dn
            })
        }
        Line => {
            let ed = g.edges[e];
            let ab = unit(x(ed[1]) - x(ed[0]));
            let tris = adj.edge_triangles.get(e).map_or(&[][..], |v| &v[..]);
            if tris.len() == 2 {
                let t0 = adj.triangles[tris[0] as usize];
                // the triangle holding the edge in its own direction is on the left
                let left0 = (0..3).any(|k| t0[k] == ed[0] && t0[(k + 1) % 3] == ed[1]);
                let (left, right) = if left0 {
                    (tris[0], tris[1])
                } else {
                    (tris[1], tris[0])
                };
                let n1 = unit(tri_normal(adj.triangles[right as usize]));
                let n2 = unit(tri_normal(adj.triangles[left as usize]));
                let t1 = unit(n1.cross(&ab));
                let t2 = unit(ab.cross(&n2));
                let mean = unit(n1 + n2);
                if mean.dot(&d) < 0.0 && !adj.both_side {
                    return false;
                }
                [t1, t2].iter().all(|t| {
                    let cone = (mean.dot(t) * p.cone_factor).max(0.0) + p.angle_cone;
                    t.dot(&d) >= -cone * dn
                })
            } else {
                ab.dot(&unit(d)).abs() <= p.angle_cone + 1e-4
            }
        }
    }
}
