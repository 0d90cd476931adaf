//! Tests of the Tight Inclusion root finder: known impacts, the minimum separation, the
//! iteration cap, degenerate and non-finite input, and random vertex–face and edge–edge
//! queries against an independent brute force (closed-form point–triangle and
//! segment–segment distances sampled over time).
//!
//! What TI guarantees, and so what is asserted (README of Tight-Inclusion and the paper):
//! - no false negative: if the primitives come within `ms` (here: Euclidean, which implies
//!   per coordinate), an impact is reported, at a time no later than that approach;
//! - a reported impact is a box corner (toi, u, v) with (u, v) on the primitives whose gap
//!   is within `ms + err + output_tolerance` per coordinate, so the Euclidean distance at
//!   `toi` is at most sqrt(3) times that (output_tolerance is the requested tolerance unless
//!   `max_iterations` stopped the search, when it is the width TI reached).

use super::*;

use crate::intersect::test_rng::Rng;

/// This file's samplers over the shared stream.
impl Rng {
    fn vec(&mut self, r: f64) -> Vec3 {
        Vec3::new(self.range(-r, r), self.range(-r, r), self.range(-r, r))
    }
    fn unit(&mut self) -> Vec3 {
        loop {
            let v = self.vec(1.0);
            let n = v.norm();
            if n > 0.1 && n <= 1.0 {
                return v / n;
            }
        }
    }
}

fn lerp(a: Vec3, b: Vec3, t: f64) -> Vec3 {
    a + (b - a) * t
}

/// Distance from `p` to triangle (a, b, c): closest point by Voronoi regions.
fn point_triangle(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> f64 {
    let (ab, ac) = (b - a, c - a);
    let n = ab.cross(&ac);
    if n.norm_squared() <= 1e-30 * ab.norm_squared().max(ac.norm_squared()).max(1e-300) {
        // Degenerate triangle: its three edges.
        return seg_seg(p, p, a, b)
            .min(seg_seg(p, p, b, c))
            .min(seg_seg(p, p, c, a));
    }
    let (q, _, _) = crate::intersect::obb::triangle_closest([a, b, c], p);
    (p - q).norm()
}

/// Distance between segments (p1, q1) and (p2, q2), zero-length ones included (the closest
/// points by obb.rs's segment_params, tested on its own by the box tests).
fn seg_seg(p1: Vec3, q1: Vec3, p2: Vec3, q2: Vec3) -> f64 {
    let (a, b) = super::super::obb::segments(p1, q1, p2, q2);
    (a - b).norm()
}

/// One query with its distance at any time.
struct Query {
    kind: Kind,
    p0: [Vec3; 4],
    p1: [Vec3; 4],
}

impl Query {
    fn dist(&self, t: f64) -> f64 {
        let p = [0, 1, 2, 3].map(|i| lerp(self.p0[i], self.p1[i], t));
        match self.kind {
            Kind::VertexFace => point_triangle(p[0], p[1], p[2], p[3]),
            Kind::EdgeEdge => seg_seg(p[0], p[1], p[2], p[3]),
        }
    }

    /// Largest speed at which the distance can change: the sum of the largest displacements
    /// of the two primitives (every point of a primitive moves at most as far as its
    /// farthest vertex).
    fn lipschitz(&self) -> f64 {
        let d = [0, 1, 2, 3].map(|i| (self.p1[i] - self.p0[i]).norm());
        match self.kind {
            Kind::VertexFace => d[0] + d[1].max(d[2]).max(d[3]),
            Kind::EdgeEdge => d[0].max(d[1]) + d[2].max(d[3]),
        }
    }

    /// Brute force over [0, 1]: (an upper bound of the minimal distance found by sampling and
    /// golden-section refinement, a lower bound of it from the Lipschitz constant, the first
    /// sample time at which the distance is below `below`).
    fn scan(&self, below: f64) -> (f64, f64, Option<f64>) {
        const N: usize = 400;
        let h = 1.0 / N as f64;
        let d: Vec<f64> = (0..=N).map(|i| self.dist(i as f64 * h)).collect();
        let first = d.iter().position(|&x| x < below).map(|i| i as f64 * h);
        let (mut ib, mut best) = (0, d[0]);
        for (i, &x) in d.iter().enumerate() {
            if x < best {
                (ib, best) = (i, x);
            }
        }
        let lower = best - self.lipschitz() * h / 2.0;
        let (mut a, mut b) = (((ib as f64) - 1.0) * h, ((ib as f64) + 1.0) * h);
        (a, b) = (a.max(0.0), b.min(1.0));
        let g = 0.5 * (5f64.sqrt() - 1.0);
        for _ in 0..60 {
            let (c, e) = (b - g * (b - a), a + g * (b - a));
            let (fc, fe) = (self.dist(c), self.dist(e));
            best = best.min(fc).min(fe);
            if fc < fe {
                b = e;
            } else {
                a = c;
            }
        }
        (best, lower.min(best), first)
    }
}

fn settings(ms: f64) -> CcdSettings {
    CcdSettings {
        ms,
        ..CcdSettings::default()
    }
}

/// Checks a reported impact of a gap closing along one axis at `speed`, reaching `ms` at
/// `t_ms`: TI's time is no later, and no earlier than where that gap is ms plus the reached
/// tolerance plus the rounding filter (the reported corner is within that per coordinate).
fn check_time(r: Option<Impact>, t_ms: f64, speed: f64, what: &str) {
    let r = r.unwrap_or_else(|| panic!("{what}: no impact"));
    let slack = (r.output_tolerance + 1e-14) / speed;
    assert!(r.toi <= t_ms + 1e-15, "{what}: {r:?} after {t_ms}");
    assert!(r.toi >= t_ms - slack, "{what}: {r:?} too early for {t_ms}");
}

#[test]
fn falling_point_hits_static_triangle_at_known_time() {
    let f = [Vec3::zeros(), Vec3::x(), Vec3::y()];
    // From z = 1 to z = -1 over the triangle's interior: z = 0 at t* = 0.5, speed 2.
    let (v0, v1) = (Vec3::new(0.2, 0.3, 1.0), Vec3::new(0.2, 0.3, -1.0));
    // The same motion seen from the point: the triangle rises through it.
    let g = f.map(|p| p + Vec3::new(0.0, 0.0, 2.0));
    let w = Vec3::new(0.2, 0.3, 1.0);
    for ms in [0.0, 1e-6, 1e-3, 0.1] {
        let s = settings(ms);
        let t_ms = 0.5 - ms / 2.0;
        let falls = ccd(
            Kind::VertexFace,
            [v0, f[0], f[1], f[2]],
            [v1, f[0], f[1], f[2]],
            &s,
        );
        check_time(falls, t_ms, 2.0, &format!("falling, ms {ms}"));
        let rises = ccd(
            Kind::VertexFace,
            [w, f[0], f[1], f[2]],
            [w, g[0], g[1], g[2]],
            &s,
        );
        check_time(rises, t_ms, 2.0, &format!("rising, ms {ms}"));
        assert_eq!(vertex_face(v0, f, v1, f, &s), falls.map(|r| r.toi));
        if ms == 0.0 {
            // Without a separation the search ends within the requested tolerance.
            assert_eq!(falls.unwrap().output_tolerance, s.tolerance);
        }
    }
}

#[test]
fn crossing_edges_hit_at_known_time() {
    // Edge a along x at z = 1 falls to z = -1; edge b along y lies still at z = 0.
    let a = [Vec3::new(-1.0, 0.1, 1.0), Vec3::new(1.0, 0.1, 1.0)];
    let a1 = a.map(|p| p - Vec3::new(0.0, 0.0, 2.0));
    let b = [Vec3::new(0.3, -1.0, 0.0), Vec3::new(0.3, 1.0, 0.0)];
    for ms in [0.0, 1e-4, 0.05] {
        let s = settings(ms);
        let t_ms = 0.5 - ms / 2.0;
        let r = ccd(
            Kind::EdgeEdge,
            [a[0], a[1], b[0], b[1]],
            [a1[0], a1[1], b[0], b[1]],
            &s,
        );
        check_time(r, t_ms, 2.0, &format!("ms {ms}"));
        assert_eq!(edge_edge(a, b, a1, b, &s), r.map(|r| r.toi));
        // Swapping the two edges describes the same motion.
        let r = ccd(
            Kind::EdgeEdge,
            [b[0], b[1], a[0], a[1]],
            [b[0], b[1], a1[0], a1[1]],
            &s,
        );
        check_time(r, t_ms, 2.0, &format!("swapped, ms {ms}"));
    }
    // Passing beside the end of edge b: no impact.
    let far = [Vec3::new(2.0, 0.1, 1.0), Vec3::new(3.0, 0.1, 1.0)];
    let far1 = far.map(|p| p - Vec3::new(0.0, 0.0, 2.0));
    assert_eq!(edge_edge(far, b, far1, b, &settings(0.1)), None);
}

#[test]
fn minimum_separation_decides_a_near_pass() {
    // TI tests the gap per coordinate: it reports when some point of the triangle is within
    // ms + err (+ the tolerance reached) of the moving point along x, y and z at once. Two
    // motions with a known per-coordinate gap d:
    // - sliding at height d over the whole triangle, parallel to it (the z gap is d, and the
    //   point is over the triangle from t = 1/3 on);
    // - falling through the triangle's plane beside its long edge u + v = 1, at (0.5 + d,
    //   0.5 + d): the nearest triangle point per coordinate is (0.5, 0.5, 0), gap (d, d, z),
    //   so the gap is within ms once |z| <= ms, from t = (1 - ms) / 2 on (z = 1 - 2t).
    // err <= 7.6e-15 here (coordinates within 1), so d >= ms + tolerance + 1e-14 must not
    // report unless the iteration cap widened output_tolerance, and d < ms must report.
    let f = [Vec3::zeros(), Vec3::x(), Vec3::y()];
    let motions = |d: f64, ms: f64| {
        let beside = Vec3::new(0.5 + d, 0.5 + d, 0.0);
        [
            (Vec3::new(-0.5, 0.25, d), Vec3::new(1.0, 0.25, d), 1.0 / 3.0),
            (beside + Vec3::z(), beside - Vec3::z(), (1.0 - ms) / 2.0),
        ]
    };
    for ms in [1e-6, 1e-3, 0.01] {
        let s = settings(ms);
        for d in [0.0, 0.5 * ms, 0.99 * ms] {
            for (v0, v1, t_first) in motions(d, ms) {
                let toi = vertex_face(v0, f, v1, f, &s).expect("within ms");
                assert!(
                    toi <= t_first + 1e-15,
                    "ms {ms} d {d}: toi {toi} > {t_first}"
                );
            }
        }
        for d in [2.0 * ms + 1e-9, 1.01 * ms, ms + s.tolerance + 1e-14] {
            for (v0, v1, _) in motions(d, ms) {
                let p = [v0, f[0], f[1], f[2]];
                let r = ccd(Kind::VertexFace, p, [v1, f[0], f[1], f[2]], &s);
                if let Some(r) = r {
                    assert!(
                        d <= ms + 1e-14 + r.output_tolerance && r.output_tolerance > s.tolerance,
                        "ms {ms} d {d}: reported {r:?}"
                    );
                }
                if d >= 2.0 * ms {
                    assert_eq!(r, None, "ms {ms} d {d}");
                }
                // Near misses just beyond ms are reported at the default cap of 1000 boxes
                // (a conservative answer with a wider output_tolerance); a larger cap lets the
                // search reach the requested tolerance and reject them.
                let more = CcdSettings {
                    max_iterations: 100_000,
                    ..s
                };
                let r = ccd(Kind::VertexFace, p, [v1, f[0], f[1], f[2]], &more);
                if d >= 1.01 * ms {
                    assert_eq!(r, None, "ms {ms} d {d}, cap 1e5");
                } else if let Some(r) = r {
                    assert!(
                        d <= ms + 1e-14 + r.output_tolerance && r.output_tolerance > s.tolerance
                    );
                }
            }
        }
    }
}

#[test]
fn max_iterations_reached_reports_conservative_impact() {
    // The point falls beside the triangle's long edge (u + v = 1.2 under it): a near miss
    // at distance 0.2 / sqrt(2).
    let f = [Vec3::zeros(), Vec3::x(), Vec3::y()];
    let (v0, v1) = (Vec3::new(0.6, 0.6, 1.0), Vec3::new(0.6, 0.6, -1.0));
    let q = |max_iterations| {
        let s = CcdSettings {
            max_iterations,
            ..CcdSettings::default()
        };
        ccd(
            Kind::VertexFace,
            [v0, f[0], f[1], f[2]],
            [v1, f[0], f[1], f[2]],
            &s,
        )
    };
    assert_eq!(q(1000), None);
    assert_eq!(q(0), None, "no cap");
    // With a cap of one box TI gives up at the second box examined and reports, as a
    // conservative answer, the lower t bound of the first box of that level whose enclosure
    // contains the origin, with the enclosure's width as the tolerance reached. The root box
    // is split in t first (its time tolerance is the finest relative to the widths), and
    // the half t in [0, 1/2] encloses the origin (z goes from 1 to 0): toi = 0.
    let r = q(1).expect("conservative impact");
    assert_eq!(r.toi, 0.0);
    assert!(r.output_tolerance > CcdSettings::default().tolerance);
    // Caps in between give a time no later than the true one would be (there is none here,
    // so any reported time is conservative); each reported tolerance exceeds the requested.
    for cap in [2, 5, 20, 100] {
        if let Some(r) = q(cap) {
            assert!((0.0..=1.0).contains(&r.toi));
            assert!(r.output_tolerance > CcdSettings::default().tolerance);
        }
    }
}

#[test]
fn degenerate_inputs_do_not_panic() {
    let p = Vec3::new(0.1, 0.2, 0.3);
    let s = settings(1e-3);
    let tri = [Vec3::zeros(), Vec3::x(), Vec3::y()];
    // Zero-area triangles (a line, a point), all static.
    let line = [Vec3::zeros(), Vec3::x(), Vec3::x() * 2.0];
    let dot = [p; 3];
    let _ = vertex_face(p, line, p, line, &s);
    assert!(
        vertex_face(p, dot, p, dot, &s).is_some(),
        "coincident at rest"
    );
    // Static and apart: nothing.
    assert_eq!(
        vertex_face(p + Vec3::z(), tri, p + Vec3::z(), tri, &s),
        None
    );
    // Static and touching: impact at 0.
    assert_eq!(
        vertex_face(
            Vec3::new(0.2, 0.2, 0.0),
            tri,
            Vec3::new(0.2, 0.2, 0.0),
            tri,
            &s
        ),
        Some(0.0)
    );
    // Zero-length edges, static or moving.
    let e = [p, p];
    let _ = edge_edge(e, e, e, e, &s);
    let e1 = [p + Vec3::z(), p + Vec3::z()];
    let _ = edge_edge(
        e,
        [Vec3::zeros(), Vec3::x()],
        e1,
        [Vec3::zeros(), Vec3::x()],
        &s,
    );
    // Huge and tiny coordinates, ms 0 and negative, tolerance 0, t_max outside [0, 1].
    let big = [
        Vec3::repeat(1e300),
        Vec3::repeat(-1e300),
        Vec3::new(1e300, -1e300, 0.0),
    ];
    let _ = vertex_face(Vec3::repeat(1e300), big, -Vec3::repeat(1e300), big, &s);
    let tiny = tri.map(|v| v * 1e-300);
    let _ = vertex_face(p * 1e-300, tiny, -p * 1e-300, tiny, &settings(0.0));
    // No iteration cap (any max_iterations <= 0) on a plain crossing without separation.
    // (With ms > 0 an uncapped search can grow without bound, as TI's does: every box of
    // the ms neighbourhood is refined down to the tolerance.)
    let uncapped = CcdSettings {
        max_iterations: i64::MIN,
        ..settings(0.0)
    };
    let through = (Vec3::new(0.2, 0.2, 1.0), Vec3::new(0.2, 0.2, -1.0));
    assert!(vertex_face(through.0, tri, through.1, tri, &uncapped).is_some());
    for odd in [
        CcdSettings { ms: -1.0, ..s },
        CcdSettings {
            tolerance: 0.0,
            ..s
        },
        CcdSettings {
            tolerance: -1.0,
            ..s
        },
        CcdSettings { t_max: 0.0, ..s },
        CcdSettings { t_max: -1.0, ..s },
        CcdSettings { t_max: 3.0, ..s },
        CcdSettings {
            max_iterations: 1,
            ..s
        },
    ] {
        let _ = vertex_face(p, tri, -p, tri, &odd);
        let _ = edge_edge(
            [p, -p],
            [Vec3::x(), Vec3::y()],
            [-p, p],
            [Vec3::y(), Vec3::x()],
            &odd,
        );
    }
}

#[test]
fn non_finite_input_gives_none() {
    let tri = [Vec3::zeros(), Vec3::x(), Vec3::y()];
    let (v0, v1) = (Vec3::new(0.2, 0.2, 1.0), Vec3::new(0.2, 0.2, -1.0));
    let s = settings(0.0);
    assert!(vertex_face(v0, tri, v1, tri, &s).is_some());
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let w = Vec3::new(bad, 0.2, -1.0);
        assert_eq!(vertex_face(v0, tri, w, tri, &s), None);
        assert_eq!(vertex_face(v0, tri, v1, [tri[0], w, tri[2]], &s), None);
        assert_eq!(
            edge_edge([v0, v1], [tri[1], tri[2]], [v0, w], [tri[1], tri[2]], &s),
            None
        );
        for s in [
            settings(bad),
            CcdSettings {
                tolerance: bad,
                ..s
            },
            CcdSettings { t_max: bad, ..s },
        ] {
            assert_eq!(vertex_face(v0, tri, v1, tri, &s), None);
        }
    }
}

/// A random query that passes near contact: the primitives' closest approach is steered to a
/// random time, distance (from 0 to a few ms) and place (partly beyond the primitives).
fn random_query(rng: &mut Rng, kind: Kind, ms: f64) -> Query {
    let mut p0 = [0, 1, 2, 3].map(|_| rng.vec(1.0));
    let mut p1 = p0.map(|p| {
        let r = rng.range(0.0, 0.5);
        p + rng.vec(r)
    });
    let t_c = rng.next();
    let at = |p0: &[Vec3; 4], p1: &[Vec3; 4], i: usize| lerp(p0[i], p1[i], t_c);
    // Target for the moving point (or first edge's point) at t_c.
    let (u, v) = (rng.range(-0.2, 1.2), rng.range(-0.2, 1.2));
    let target = match kind {
        Kind::VertexFace => {
            let (u, v) = if u + v > 1.2 {
                (1.2 - v, 1.2 - u)
            } else {
                (u, v)
            };
            let (a, b, c) = (at(&p0, &p1, 1), at(&p0, &p1, 2), at(&p0, &p1, 3));
            a + (b - a) * u + (c - a) * v
        }
        Kind::EdgeEdge => lerp(at(&p0, &p1, 2), at(&p0, &p1, 3), v),
    };
    let scale = if ms > 0.0 { ms } else { 1e-3 };
    let offset = rng.unit()
        * scale
        * [0.0, 0.3, 0.9, 1.1, 3.0, 10.0][(rng.next() * 6.0) as usize]
        * rng.range(0.5, 1.5);
    let w = rng.vec(2.0);
    let c = target + offset;
    match kind {
        Kind::VertexFace => {
            p0[0] = c - w * t_c;
            p1[0] = c + w * (1.0 - t_c);
        }
        Kind::EdgeEdge => {
            // Move edge a so that its point at parameter u is at c at t_c.
            let (a0, a1) = (at(&p0, &p1, 0), at(&p0, &p1, 1));
            let shift = c - lerp(a0, a1, u.clamp(0.0, 1.0));
            for i in 0..2 {
                p0[i] += shift;
                p1[i] += shift;
            }
        }
    }
    Query { kind, p0, p1 }
}

fn random_against_brute_force(kind: Kind, seed: u64) {
    let mut rng = Rng(seed);
    let (mut reported, mut must, mut capped) = (0, 0, 0);
    let n = 10_000;
    for i in 0..n {
        let ms = [0.0, 1e-4, 1e-3, 1e-2, 0.05][i % 5];
        let q = random_query(&mut rng, kind, ms);
        let s = settings(ms);
        let r = ccd(kind, q.p0, q.p1, &s);
        let threshold = ms * (1.0 - 1e-9);
        let (upper, _lower, first) = q.scan(threshold);
        let ctx = || {
            format!(
                "case {i} ms {ms} min {upper}: {:?} {:?} -> {r:?}",
                q.p0, q.p1
            )
        };
        // No false negative: a sampled approach within ms (an upper bound of the true minimal
        // distance) must be reported, no later than the first such sample.
        if ms > 0.0 && upper < threshold {
            must += 1;
            let r = r.unwrap_or_else(|| panic!("missed: {}", ctx()));
            if let Some(t) = first {
                assert!(r.toi <= t + 1e-12, "late: first {t}; {}", ctx());
            }
        }
        if let Some(r) = r {
            reported += 1;
            if r.output_tolerance > s.tolerance {
                capped += 1;
            }
            assert!((0.0..=1.0).contains(&r.toi), "{}", ctx());
            // The reported time is a corner on the primitives within ms + err +
            // output_tolerance per coordinate: Euclidean distance at most sqrt(3) times it.
            let bound = 3f64.sqrt() * (ms + 1e-13 + r.output_tolerance);
            let d = q.dist(r.toi);
            assert!(
                d <= bound,
                "false positive: distance {d} at toi > {bound}; {}",
                ctx()
            );
        }
    }
    // The mix must exercise both outcomes.
    assert!(
        must > n / 10 && reported < n - n / 10,
        "{must} {reported} {capped}"
    );
    eprintln!("{kind:?}: {reported} reported, {must} required, {capped} at the iteration cap");
}

#[test]
fn random_vertex_face_against_brute_force() {
    random_against_brute_force(Kind::VertexFace, 0x9e37_79b9_7f4a_7c15);
}

#[test]
fn random_edge_edge_against_brute_force() {
    random_against_brute_force(Kind::EdgeEdge, 0x2545_f491_4f6c_dd1d);
}

/// Rough cost of one call (run with `--ignored --nocapture`): near-contact random queries
/// with and without a separation, and the same queries pushed 10 units apart.
#[test]
#[ignore]
fn timing() {
    for (ms, shift) in [(0.0, 0.0), (1e-3, 0.0), (1e-3, 10.0)] {
        let mut rng = Rng(7);
        let mut qs: Vec<Query> = (0..20_000)
            .map(|i| {
                let kind = [Kind::VertexFace, Kind::EdgeEdge][i % 2];
                random_query(&mut rng, kind, ms)
            })
            .collect();
        for q in &mut qs {
            q.p0[0].x += shift;
            q.p1[0].x += shift;
        }
        let s = settings(ms);
        let start = std::time::Instant::now();
        let hits = qs
            .iter()
            .filter(|q| ccd(q.kind, q.p0, q.p1, &s).is_some())
            .count();
        let us = start.elapsed().as_secs_f64() * 1e6 / qs.len() as f64;
        eprintln!(
            "ms {ms}, shift {shift}: {hits} hits of {}, {us:.2} us per call",
            qs.len()
        );
    }
}

#[test]
fn bisection_limit_reports_earliest_candidate() {
    // A tolerance far below what 62 halvings can resolve: the search runs out of dyadic
    // bounds. TI reports an impact there with an unset time; here the earliest lower t bound
    // that may still hold the root, which must not be after the true crossing at t = 0.5.
    let f = [Vec3::zeros(), Vec3::x(), Vec3::y()];
    let (v0, v1) = (Vec3::new(0.2, 0.3, 1.0), Vec3::new(0.2, 0.3, -1.0));
    let s = CcdSettings {
        tolerance: 1e-30,
        max_iterations: 0,
        ..settings(0.0)
    };
    let r = ccd(
        Kind::VertexFace,
        [v0, f[0], f[1], f[2]],
        [v1, f[0], f[1], f[2]],
        &s,
    );
    let r = r.expect("impact");
    assert_eq!(r.output_tolerance, f64::INFINITY, "{r:?}");
    // Boxes stay candidates while the gap is within the rounding filter (<= 6.7e-15 here,
    // closing at speed 2).
    assert!(r.toi <= 0.5 && r.toi >= 0.5 - 1e-14, "{r:?}");
}
