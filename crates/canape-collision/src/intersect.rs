//! Proximity intersection tests between collision elements, as SOFA's intersection methods
//! run them (Sofa/Component/Collision/Detection/Intersection: MinProximityIntersection and
//! MeshMinProximityIntersection, NewProximityIntersection and MeshNewProximityIntersection,
//! DiscreteIntersection; oriented boxes in `obb`). Each test writes [`Output`]s: the closest points on both elements
//! (as weights of the elements' vertices), the unit normal from the first element towards
//! the second, and `value` = their distance minus the contact distance.
//!
//! Where SOFA's formulation has a plain mistake the correct geometry is used instead, and the
//! difference is named at the test: MinProximity's line–sphere foot point (SOFA mirrors it
//! about the segment's middle). Two choices of SOFA's that look unintended are followed because
//! they decide which contacts exist: NewProximity's triangle–sphere ownership flags (see
//! `tri_sphere_new`) and the first vertex of a triangle–triangle pair, tested whatever its
//! ownership flag. Degenerate elements
//! (zero area, zero length, coincident points) give no contact where SOFA would give NaN.

use crate::settings::{Continuous, Method};
use canape_core::collision::{CollisionShape, ContactPoint};
use canape_types::Vec3;

/// Triangle feature ownership flags (TriangleCollisionModel): a triangle tests a vertex or an
/// edge only if it owns it (it is the first triangle around it), so that every feature of a
/// mesh gives one contact.
pub const FLAG_P1: u8 = 1;
pub const FLAG_P2: u8 = 2;
pub const FLAG_P3: u8 = 4;
pub const FLAG_E23: u8 = 8;
pub const FLAG_E31: u8 = 16;
pub const FLAG_E12: u8 = 32;

/// The intersection method's distances and switches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub method: Method,
    pub alarm: f64,
    pub contact: f64,
    pub use_line_line: bool,
    pub use_line_point: bool,
    pub use_point_point: bool,
    pub use_sphere_triangle: bool,
    pub use_surface_normals: bool,
    /// LocalMinDistance: whether its normal cones filter the contacts, and their parameters.
    pub cone_filter: bool,
    pub angle_cone: f64,
    pub cone_factor: f64,
    /// CCDTightInclusionIntersection: what the element boxes cover, and the root finder's
    /// tolerance and iteration cap.
    pub continuous: Continuous,
    pub ccd_tolerance: f64,
    pub ccd_max_iterations: i64,
}

/// A model's geometry for one detection: positions of its state and its elements.
pub struct Geometry<'a> {
    pub shape: CollisionShape,
    /// Positions of the state's points.
    pub x: &'a [Vec3],
    /// Their free-motion positions (continuous detection only; empty otherwise).
    pub x_free: &'a [Vec3],
    pub edges: &'a [[u32; 2]],
    pub triangles: &'a [[u32; 3]],
    pub flags: &'a [u8],
    /// Sphere radii per element (empty for other shapes).
    pub radii: &'a [f64],
    /// Box frames per element (empty for other shapes).
    pub frames: &'a [obb::Frame],
    /// Neighbourhoods for LocalMinDistance's cones (this crate's models).
    pub adjacency: Option<&'a crate::model::Adjacency>,
    pub proximity: f64,
    /// Number of elements.
    pub len: usize,
}

impl Geometry<'_> {
    fn p(&self, i: u32) -> Vec3 {
        self.x[i as usize]
    }
    fn radius(&self, i: usize) -> f64 {
        self.radii.get(i).copied().unwrap_or(0.0)
    }
}

/// One detection output between element `elems[0]` of the first model and `elems[1]` of
/// the second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Output {
    pub elems: [u32; 2],
    pub points: [ContactPoint; 2],
    pub positions: [Vec3; 2],
    /// Unit vector from the first element's point towards the second's.
    pub normal: Vec3,
    /// Distance minus the contact distance (negative: closer than the contact distance).
    pub value: f64,
    /// SOFA's output id (which feature pair; for ordering).
    pub id: i64,
}

pub(crate) fn bary3(t: [u32; 3], a: f64, b: f64) -> ContactPoint {
    ContactPoint {
        index: t,
        weight: [1.0 - a - b, a, b],
        count: 3,
        offset: Vec3::zeros(),
    }
}

fn bary2(e: [u32; 2], a: f64) -> ContactPoint {
    ContactPoint {
        index: [e[0], e[1], 0],
        weight: [1.0 - a, a, 0.0],
        count: 2,
        offset: Vec3::zeros(),
    }
}

/// Whether the pair of shapes is tested by `method`, and if so in which order SOFA's
/// registration puts the models (true: the second model's shape comes first).
pub fn dispatch(method: Method, p: &Params, a: CollisionShape, b: CollisionShape) -> Option<bool> {
    use CollisionShape::*;
    // the canonical order of a registered pair
    fn rank(s: CollisionShape) -> u8 {
        match s {
            Triangle => 0,
            Line => 1,
            Sphere => 2,
            Point => 3,
            Obb => 4,
        }
    }
    let swap = rank(b) < rank(a);
    let (f, s) = if swap { (b, a) } else { (a, b) };
    // boxes: NewProximity's box–box and triangle–box only (the CollisionOBBCapsule plugin's
    // registrations that are built here)
    if f == Obb || s == Obb {
        return (method == Method::NewProximity && matches!((f, s), (Obb, Obb) | (Triangle, Obb)))
            .then_some(swap);
    }
    let ok = match method {
        Method::Discrete => matches!((f, s), (Sphere, Sphere)),
        Method::MinProximity => match (f, s) {
            (Sphere, Sphere) => true,
            (Point, Point) => p.use_point_point,
            (Line, Point) => p.use_line_point,
            (Line, Line) => p.use_line_line,
            (Triangle, Point) => true,
            (Sphere, Point) | (Triangle, Sphere) | (Line, Sphere) => p.use_sphere_triangle,
            (Triangle, Line) | (Triangle, Triangle) => false,
            _ => false,
        },
        Method::NewProximity => true,
        Method::LocalMin => !matches!((f, s), (Triangle, Line) | (Triangle, Triangle)),
        // CCDTightInclusionIntersection::init registers these two (and cube–cube, the
        // hierarchy's own test) and ignores every other pair
        Method::Ccd => matches!((f, s), (Triangle, Point) | (Line, Line)),
    };
    ok.then_some(swap)
}

/// Test element `i` of `g1` against element `j` of `g2` (in dispatch order) and append the
/// outputs.
pub fn intersect(
    p: &Params,
    g1: &Geometry,
    i: usize,
    g2: &Geometry,
    j: usize,
    out: &mut Vec<Output>,
) {
    use CollisionShape::*;
    if p.method == Method::LocalMin {
        local_min(p, g1, i, g2, j, out);
        return;
    }
    if p.method == Method::Ccd {
        continuous::intersect(p, g1, i, g2, j, out);
        return;
    }
    let prox = g1.proximity + g2.proximity;
    let alarm = p.alarm + prox;
    let contact = p.contact + prox;
    let start = out.len();
    let larger = |a: usize, b: usize| if g1.len > g2.len { a as i64 } else { b as i64 };
    match (g1.shape, g2.shape) {
        (Sphere, Sphere) => {
            let (c1, c2) = (g1.x[i], g2.x[j]);
            let r = g1.radius(i) + g2.radius(j);
            let pt = [
                ContactPoint::vertex(i as u32),
                ContactPoint::vertex(j as u32),
            ];
            match p.method {
                // (CCD never reaches here: it has no sphere test)
                Method::NewProximity | Method::LocalMin | Method::Ccd => {
                    point_point(alarm + r, c1, c2, pt, larger(i, j), out);
                    subtract(out, start, contact + r);
                }
                Method::MinProximity | Method::Discrete => {
                    let (a, c) = if p.method == Method::Discrete {
                        (0.0, 0.0)
                    } else {
                        (alarm, contact)
                    };
                    let d = c2 - c1;
                    // inclusive test (SOFA's sphere helper)
                    if d.norm_squared() > (a + r) * (a + r) {
                        return;
                    }
                    let dist = d.norm();
                    if dist <= 0.0 {
                        return;
                    }
                    out.push(Output {
                        elems: [i as u32, j as u32],
                        points: pt,
                        positions: [c1, c2],
                        normal: d / dist,
                        value: dist - r - c,
                        id: larger(i, j),
                    });
                }
            }
        }
        (Point, Point) => {
            let pt = [
                ContactPoint::vertex(i as u32),
                ContactPoint::vertex(j as u32),
            ];
            point_point(alarm, g1.x[i], g2.x[j], pt, larger(i, j), out);
            subtract(out, start, contact);
        }
        (Sphere, Point) => {
            let r = g1.radius(i);
            let pt = [
                ContactPoint::vertex(i as u32),
                ContactPoint::vertex(j as u32),
            ];
            let id = if p.method == Method::MinProximity {
                i as i64
            } else {
                larger(i, j)
            };
            point_point(alarm + r, g1.x[i], g2.x[j], pt, id, out);
            subtract(out, start, contact + r);
        }
        (Line, Point) => {
            let e = g1.edges[i];
            line_point(
                alarm,
                e,
                g1.p(e[0]),
                g1.p(e[1]),
                j as u32,
                g2.x[j],
                false,
                j as i64,
                out,
            );
            subtract(out, start, contact);
        }
        (Line, Sphere) => {
            let r = g2.radius(j);
            let e = g1.edges[i];
            if p.method == Method::MinProximity {
                // interior of the segment only; the foot of the perpendicular (SOFA measures
                // the parameter from the second end and applies it from the first)
                let (a, b) = (g1.p(e[0]), g1.p(e[1]));
                let ab = b - a;
                let l2 = ab.norm_squared();
                if l2 <= 0.0 {
                    return;
                }
                let t = (g2.x[j] - a).dot(&ab) / l2;
                if !(1e-6..=0.999999).contains(&t) {
                    return;
                }
                let q = a + ab * t;
                push_pair(
                    alarm + r,
                    q,
                    g2.x[j],
                    [bary2(e, t), ContactPoint::vertex(j as u32)],
                    j as i64,
                    out,
                );
            } else {
                line_point(
                    alarm + r,
                    e,
                    g1.p(e[0]),
                    g1.p(e[1]),
                    j as u32,
                    g2.x[j],
                    false,
                    j as i64,
                    out,
                );
            }
            subtract(out, start, contact + r);
        }
        (Line, Line) => {
            let (e, f) = (g1.edges[i], g2.edges[j]);
            let det_min = if p.method == Method::MinProximity {
                1e-15
            } else {
                1e-12
            };
            line_line(
                alarm,
                det_min,
                e,
                [g1.p(e[0]), g1.p(e[1])],
                f,
                [g2.p(f[0]), g2.p(f[1])],
                larger(i, j),
                out,
            );
            subtract(out, start, contact);
        }
        (Triangle, Point) => {
            let t = g1.triangles[i];
            let tp = [g1.p(t[0]), g1.p(t[1]), g1.p(t[2])];
            if p.method == Method::MinProximity {
                tri_point_interior(alarm, t, tp, j as u32, g2.x[j], j as i64, out);
                if p.use_surface_normals {
                    if let Some(o) = out.get_mut(start) {
                        let n = (tp[1] - tp[0]).cross(&(tp[2] - tp[0]));
                        let l = n.norm();
                        if l > 0.0 {
                            o.normal = n / l;
                        }
                    }
                }
            } else {
                tri_point(
                    alarm,
                    g1.flags.get(i).copied().unwrap_or(0),
                    t,
                    tp,
                    j as u32,
                    g2.x[j],
                    false,
                    j as i64,
                    out,
                );
            }
            subtract(out, start, contact);
        }
        (Triangle, Sphere) => {
            let r = g2.radius(j);
            let t = g1.triangles[i];
            let tp = [g1.p(t[0]), g1.p(t[1]), g1.p(t[2])];
            if p.method == Method::MinProximity {
                tri_point_interior(alarm + r, t, tp, j as u32, g2.x[j], j as i64, out);
            } else {
                tri_sphere_new(
                    alarm + r,
                    g1.flags.get(i).copied().unwrap_or(0),
                    t,
                    tp,
                    j as u32,
                    g2.x[j],
                    out,
                );
            }
            subtract(out, start, contact + r);
        }
        (Triangle, Line) => {
            // NewProximity only: the triangle's owned vertices against the segment, the
            // segment's ends against the triangle, and (useLineLine) owned edges against it
            let t = g1.triangles[i];
            let tp = [g1.p(t[0]), g1.p(t[1]), g1.p(t[2])];
            let f1 = g1.flags.get(i).copied().unwrap_or(0);
            let e = g2.edges[j];
            let (q1, q2) = (g2.p(e[0]), g2.p(e[1]));
            let id = j as i64;
            for k in 0..3 {
                if f1 & (FLAG_P1 << k) != 0 {
                    line_point(alarm, e, q1, q2, t[k], tp[k], true, id, out);
                }
            }
            tri_point(alarm, f1, t, tp, e[0], q1, false, id, out);
            tri_point(alarm, f1, t, tp, e[1], q2, false, id, out);
            if p.use_line_line {
                for (flag, a, b) in tri_edges(t) {
                    if f1 & flag != 0 {
                        line_line(
                            alarm,
                            1e-12,
                            [t[a], t[b]],
                            [tp[a], tp[b]],
                            e,
                            [q1, q2],
                            id,
                            out,
                        );
                    }
                }
            }
            subtract(out, start, contact);
        }
        (Triangle, Triangle) => {
            let (t1, t2) = (g1.triangles[i], g2.triangles[j]);
            let p1 = [g1.p(t1[0]), g1.p(t1[1]), g1.p(t1[2])];
            let p2 = [g2.p(t2[0]), g2.p(t2[1]), g2.p(t2[2])];
            let f1 = g1.flags.get(i).copied().unwrap_or(0);
            let f2 = g2.flags.get(j).copied().unwrap_or(0);
            let id1 = 3 * i as i64;
            let id2 = 3 * g1.len as i64 + 12 * j as i64;
            // SOFA tests the first triangle's first vertex whatever its ownership flag says
            // (MeshNewProximityIntersection.inl); followed, as it adds contacts
            for k in 0..3 {
                if k == 0 || f1 & (FLAG_P1 << k) != 0 {
                    tri_point(alarm, f2, t2, p2, t1[k], p1[k], true, id1 + k as i64, out);
                }
            }
            for k in 0..3 {
                if f2 & (FLAG_P1 << k) != 0 {
                    tri_point(alarm, f1, t1, p1, t2[k], p2[k], false, id2 + k as i64, out);
                }
            }
            if p.use_line_line {
                for (a, (fa, a0, a1)) in tri_edges(t1).into_iter().enumerate() {
                    if f1 & fa == 0 {
                        continue;
                    }
                    for (b, (fb, b0, b1)) in tri_edges(t2).into_iter().enumerate() {
                        if f2 & fb == 0 {
                            continue;
                        }
                        line_line(
                            alarm,
                            1e-12,
                            [t1[a0], t1[a1]],
                            [p1[a0], p1[a1]],
                            [t2[b0], t2[b1]],
                            [p2[b0], p2[b1]],
                            id2 + 3 + 3 * a as i64 + b as i64,
                            out,
                        );
                    }
                }
            }
            subtract(out, start, contact);
        }
        (Obb, Obb) => obb::obb_obb(alarm, contact, g1, i, g2, j, out),
        (Triangle, Obb) => obb::tri_obb(alarm, contact, g1, i, g2, j, out),
        _ => {}
    }
    for o in &mut out[start..] {
        o.elems = [i as u32, j as u32];
    }
}

/// A triangle's edges with their ownership flags, in SOFA's order (1–2, 2–3, 3–1).
fn tri_edges(_t: [u32; 3]) -> [(u8, usize, usize); 3] {
    [(FLAG_E12, 0, 1), (FLAG_E23, 1, 2), (FLAG_E31, 2, 0)]
}

fn subtract(out: &mut [Output], start: usize, c: f64) {
    for o in &mut out[start..] {
        o.value -= c;
    }
}

/// A contact between `a` and `b` when closer than `alarm` (strict), normal from a to b.
fn push_pair(alarm: f64, a: Vec3, b: Vec3, pts: [ContactPoint; 2], id: i64, out: &mut Vec<Output>) {
    let d = b - a;
    let d2 = d.norm_squared();
    if d2 >= alarm * alarm || d2 <= 0.0 {
        return;
    }
    let dist = d2.sqrt();
    out.push(Output {
        elems: [0, 0],
        points: pts,
        positions: [a, b],
        normal: d / dist,
        value: dist,
        id,
    });
}

fn point_point(
    alarm: f64,
    a: Vec3,
    b: Vec3,
    pts: [ContactPoint; 2],
    id: i64,
    out: &mut Vec<Output>,
) {
    push_pair(alarm, a, b, pts, id, out);
}

/// Closest point of segment (e, a–b) to vertex `q` (clamped to the closed segment). With
/// `swap` the output goes from the point to the segment.
fn line_point(
    alarm: f64,
    e: [u32; 2],
    a: Vec3,
    b: Vec3,
    qi: u32,
    q: Vec3,
    swap: bool,
    id: i64,
    out: &mut Vec<Output>,
) {
    let ab = b - a;
    let l2 = ab.norm_squared();
    if l2 <= 0.0 {
        return;
    }
    let t = ((q - a).dot(&ab) / l2).clamp(0.0, 1.0);
    let p = a + ab * t;
    let (lp, qp) = (bary2(e, t), ContactPoint::vertex(qi));
    if swap {
        push_pair(alarm, q, p, [qp, lp], id, out);
    } else {
        push_pair(alarm, p, q, [lp, qp], id, out);
    }
}

/// Closest points of two segments, interiors only (parallel segments: their middles).
fn line_line(
    alarm: f64,
    det_min: f64,
    e: [u32; 2],
    a: [Vec3; 2],
    f: [u32; 2],
    b: [Vec3; 2],
    id: i64,
    out: &mut Vec<Output>,
) {
    let ab = a[1] - a[0];
    let cd = b[1] - b[0];
    let ac = b[0] - a[0];
    let m00 = ab.norm_squared();
    let m11 = cd.norm_squared();
    let m01 = -cd.dot(&ab);
    let b0 = ab.dot(&ac);
    let b1 = -cd.dot(&ac);
    let det = m00 * m11 - m01 * m01;
    let (mut alpha, mut beta) = (0.5, 0.5);
    if det.abs() > det_min {
        alpha = (b0 * m11 - b1 * m01) / det;
        beta = (b1 * m00 - b0 * m01) / det;
        if !(1e-6..=0.999999).contains(&alpha) || !(1e-6..=0.999999).contains(&beta) {
            return;
        }
    }
    let p = a[0] + ab * alpha;
    let q = b[0] + cd * beta;
    push_pair(alarm, p, q, [bary2(e, alpha), bary2(f, beta)], id, out);
}

/// Barycentric coordinates (α on p1→p2, β on p1→p3) of the projection of `q` on the
/// triangle's plane; None for a degenerate triangle.
fn tri_coords(tp: [Vec3; 3], q: Vec3) -> Option<(f64, f64, f64, f64, f64, f64, f64)> {
    let ab = tp[1] - tp[0];
    let ac = tp[2] - tp[0];
    let aq = q - tp[0];
    let m00 = ab.norm_squared();
    let m11 = ac.norm_squared();
    let m01 = ab.dot(&ac);
    let b0 = aq.dot(&ab);
    let b1 = aq.dot(&ac);
    let det = m00 * m11 - m01 * m01;
    if det <= 0.0 || !det.is_finite() {
        return None;
    }
    let alpha = (b0 * m11 - b1 * m01) / det;
    let beta = (b1 * m00 - b0 * m01) / det;
    Some((alpha, beta, m00, m11, m01, b0, b1))
}

/// MinProximity's triangle–point test: the projection strictly inside the triangle only
/// (edges and vertices are the line and point models' business).
fn tri_point_interior(
    alarm: f64,
    t: [u32; 3],
    tp: [Vec3; 3],
    qi: u32,
    q: Vec3,
    id: i64,
    out: &mut Vec<Output>,
) {
    let Some((alpha, beta, ..)) = tri_coords(tp, q) else {
        return;
    };
    if alpha < 1e-6 || beta < 1e-6 || alpha + beta > 0.999999 {
        return;
    }
    let p = tp[0] + (tp[1] - tp[0]) * alpha + (tp[2] - tp[0]) * beta;
    push_pair(
        alarm,
        p,
        q,
        [bary3(t, alpha, beta), ContactPoint::vertex(qi)],
        id,
        out,
    );
}

/// NewProximity's triangle–point test: the closest point in the interior, on an edge or at a
/// vertex, kept only when the triangle owns that feature (`flags`). With `swap` the output
/// goes from the point to the triangle.
fn tri_point(
    alarm: f64,
    flags: u8,
    t: [u32; 3],
    tp: [Vec3; 3],
    qi: u32,
    q: Vec3,
    swap: bool,
    id: i64,
    out: &mut Vec<Output>,
) {
    let eps = f64::EPSILON;
    let Some((mut alpha, mut beta, m00, m11, m01, b0, b1)) = tri_coords(tp, q) else {
        return;
    };
    if alpha < eps || beta < eps || alpha + beta > 1.0 - eps {
        let p_ab = b0 / m00;
        let p_ac = b1 / m11;
        if p_ab < eps && p_ac < eps {
            if flags & FLAG_P1 == 0 {
                return;
            }
            (alpha, beta) = (0.0, 0.0);
        } else if (eps..1.0 - eps).contains(&p_ab) && beta < eps {
            if flags & FLAG_E12 == 0 {
                return;
            }
            (alpha, beta) = (p_ab, 0.0);
        } else if (eps..1.0 - eps).contains(&p_ac) && alpha < eps {
            if flags & FLAG_E31 == 0 {
                return;
            }
            (alpha, beta) = (0.0, p_ac);
        } else {
            let p_bc = (b1 - b0 + m00 - m01) / (m00 + m11 - 2.0 * m01);
            if p_bc < eps {
                if flags & FLAG_P2 == 0 {
                    return;
                }
                (alpha, beta) = (1.0, 0.0);
            } else if p_bc > 1.0 - eps {
                if flags & FLAG_P3 == 0 {
                    return;
                }
                (alpha, beta) = (0.0, 1.0);
            } else {
                if flags & FLAG_E23 == 0 {
                    return;
                }
                (alpha, beta) = (1.0 - p_bc, p_bc);
            }
        }
    }
    let p = tp[0] + (tp[1] - tp[0]) * alpha + (tp[2] - tp[0]) * beta;
    let (tpt, qpt) = (bary3(t, alpha, beta), ContactPoint::vertex(qi));
    if swap {
        push_pair(alarm, q, p, [qpt, tpt], id, out);
    } else {
        push_pair(alarm, p, q, [tpt, qpt], id, out);
    }
}

/// NewProximity's triangle–sphere test (MeshNewProximityIntersection.inl), which has its
/// own thresholds (1e-6 and 0.999999 rather than the machine epsilon) and its own choice of
/// ownership flags: the edge 3–1 is kept on the flag of edge 1–2 and the edge 2–3 on the
/// flag of edge 3–1. That choice looks unintended, but it decides which triangle reports a
/// sphere's contact near a shared edge (only the closest output per sphere is kept), so it is
/// followed to give SOFA's contacts.
fn tri_sphere_new(
    alarm: f64,
    flags: u8,
    t: [u32; 3],
    tp: [Vec3; 3],
    qi: u32,
    q: Vec3,
    out: &mut Vec<Output>,
) {
    let Some((mut alpha, mut beta, m00, m11, m01, b0, b1)) = tri_coords(tp, q) else {
        return;
    };
    if alpha < 1e-6 || beta < 1e-6 || alpha + beta > 0.999999 {
        let p_ab = b0 / m00;
        let p_ac = b1 / m11;
        if p_ab < 1e-6 && p_ac < 1e-7 {
            if flags & FLAG_P1 == 0 {
                return;
            }
            (alpha, beta) = (0.0, 0.0);
        } else if p_ab < 0.999999 && beta < 1e-6 {
            if flags & FLAG_E12 == 0 {
                return;
            }
            (alpha, beta) = (p_ab, 0.0);
        } else if p_ac < 0.999999 && alpha < 1e-6 {
            if flags & FLAG_E12 == 0 {
                return;
            }
            (alpha, beta) = (0.0, p_ac);
        } else {
            let p_bc = (b1 - b0 + m00 - m01) / (m00 + m11 - 2.0 * m01);
            if p_bc < 1e-6 {
                if flags & FLAG_P2 == 0 {
                    return;
                }
                (alpha, beta) = (1.0, 0.0);
            } else if p_bc > 0.999999 {
                if flags & FLAG_P3 == 0 {
                    return;
                }
                (alpha, beta) = (0.0, 1.0);
            } else {
                if flags & FLAG_E31 == 0 {
                    return;
                }
                (alpha, beta) = (1.0 - p_bc, p_bc);
            }
        }
    }
    let p = tp[0] + (tp[1] - tp[0]) * alpha + (tp[2] - tp[0]) * beta;
    push_pair(
        alarm,
        p,
        q,
        [bary3(t, alpha, beta), ContactPoint::vertex(qi)],
        qi as i64,
        out,
    );
}

/// Ownership flags of a triangle list (TriangleCollisionModel's getTriangleFlags): a vertex
/// or an edge belongs to the first triangle around it.
pub fn triangle_flags(tris: &[[u32; 3]]) -> Vec<u8> {
    use std::collections::BTreeMap;
    let mut vertex_owner: BTreeMap<u32, usize> = BTreeMap::new();
    let mut edge_owner: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for (i, t) in tris.iter().enumerate() {
        for &v in t {
            vertex_owner.entry(v).or_insert(i);
        }
        for k in 0..3 {
            let (a, b) = (t[(k + 1) % 3], t[(k + 2) % 3]);
            edge_owner.entry((a.min(b), a.max(b))).or_insert(i);
        }
    }
    tris.iter()
        .enumerate()
        .map(|(i, t)| {
            let mut f = 0u8;
            for j in 0..3 {
                if vertex_owner[&t[j]] == i {
                    f |= FLAG_P1 << j;
                }
                // edge j is the one opposite vertex j: E23, E31, E12
                let (a, b) = (t[(j + 1) % 3], t[(j + 2) % 3]);
                if edge_owner[&(a.min(b), a.max(b))] == i {
                    f |= FLAG_E23 << j;
                }
            }
            f
        })
        .collect()
}

mod local_min;
use local_min::local_min;
pub mod ccd;
mod continuous;
pub mod obb;

#[cfg(test)]
mod test_rng;
#[cfg(test)]
mod tests;
