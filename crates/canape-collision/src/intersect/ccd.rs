//! Continuous collision detection by Tight Inclusion (Wang, Ferguson, Schneider, Panozzo,
//! "A Large-Scale Benchmark and an Inclusion-Based Algorithm for Continuous Collision
//! Detection", 2021), double-precision version, as SOFA's `CCDTightInclusionIntersection`
//! runs it: the numerical error filter computed per query (TI's `err = -1`), `no_zero_toi =
//! false` and the breadth-first root finder.
//!
//! A query is a point against a triangle or an edge against an edge, every vertex moving on a
//! straight line from its position at t = 0 to its position at t = 1. The gap between the two
//! primitives is a function F(t, u, v) of time and of two parameters along the primitives
//! (barycentric u, v on the triangle, or one parameter along each edge), linear in each of
//! them. The root finder keeps boxes of (t, u, v) whose corner values of F, a box that
//! encloses F over the whole box, come within `ms` plus the rounding filter of the origin in
//! every coordinate, splits the widest one relative to its tolerance, and reports the lower t
//! bound of a box once it is fine enough. The answer is conservative: an approach within `ms`
//! in every coordinate (so any approach within `ms` in Euclidean distance) is never missed,
//! and the reported time is no later than the first such approach; but a near miss may be
//! reported too, with the gap at the reported time within `ms + err + tolerance` per
//! coordinate, or within the coarser tolerance reached when `max_iterations` stops the
//! search (with ms > 0 and the default 1e-10 tolerance that happens to most near contacts).
//! All boxes of one level have the same widths (the split choice depends on widths only),
//! which is why the first fine box of a level can be returned without missing an earlier
//! root in a box of that level that still needed splitting.
//!
//! Formulation followed (Tight-Inclusion, src/tight_inclusion/): `ccd.cpp` (the per-coordinate
//! tolerances, the driver), `interval_root_finder.cpp` (error filter, inclusion test, BFS,
//! split), `avx.cpp` (the inclusion function at the 8 corners), `interval.cpp` (dyadic interval
//! bounds k / 2^n, bisection, `u + v <= 1` test).
//!
//! Left out: the depth-first variant, the rational (exact) version, the AVX code, the
//! `no_zero_toi` retry loop, the float-with-double-input wrappers, and a caller-given error
//! filter (it is always computed from the query, as SOFA lets TI do).
//!
//! Two places differ from TI (besides returning None on non-finite input instead of
//! asserting), both where TI's own result is unusable:
//! - Revisions of `ccd.cpp` differ in `compute_edge_edge_tolerances`: one subtracts the second
//!   edge's t = 0 positions from the first edge's t = 1 positions; the others use the second
//!   edge's t = 1 positions, consistent with the vertex–face case. The latter is used here.
//! - When bisection can no longer split a dyadic bound (2^-62 resolution), TI logs an error and
//!   reports an impact with its time of impact still at its initial infinity. Here the impact
//!   is reported at the earliest t that may still hold a root (see `Search::overflow_toi`).

use canape_types::Vec3;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The root finder's settings (SOFA CCDTightInclusionIntersection: ms = contact distances,
/// tolerance Data default 1e-10, maxIterations Data default 1000, t_max = 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcdSettings {
    /// Minimum separation: an approach within `ms` (per coordinate) counts as an impact.
    pub ms: f64,
    /// Distance tolerance of the answer (TI's `tolerance`, the co-domain tolerance).
    pub tolerance: f64,
    /// Only times in [0, t_max] are refined: halves in t outside it are dropped unless
    /// t_max is 1 (TI asserts 0 <= t_max <= 1; other values are taken as they come).
    pub t_max: f64,
    /// Boxes examined before TI gives up and reports its conservative estimate; <= 0 for no
    /// limit, which with ms > 0 can take exponentially long and much memory: every box of
    /// the ms neighbourhood of a contact gets refined down to the tolerance.
    pub max_iterations: i64,
}

/// SOFA's defaults (tolerance 1e-10, 1000 iterations, t_max 1) with no separation.
impl Default for CcdSettings {
    fn default() -> Self {
        CcdSettings {
            ms: 0.0,
            tolerance: 1e-10,
            t_max: 1.0,
            max_iterations: 1000,
        }
    }
}

/// A point moving from v0 to v1 against a triangle moving from f0..f2 at t=0 to g0..g2 at t=1:
/// Some(toi) when they come within ms (TI's conservative answer), None otherwise.
pub fn vertex_face(v0: Vec3, f: [Vec3; 3], v1: Vec3, g: [Vec3; 3], s: &CcdSettings) -> Option<f64> {
    // TI's vertexFaceCCD(v_t0, f0_t0, f1_t0, f2_t0, v_t1, f0_t1, f1_t1, f2_t1, ...).
    ccd(
        Kind::VertexFace,
        [v0, f[0], f[1], f[2]],
        [v1, g[0], g[1], g[2]],
        s,
    )
    .map(|r| r.toi)
}

/// Edge (a0,a1) against edge (b0,b1), positions at t=0 then at t=1 (`a_t1`, `b_t1`).
pub fn edge_edge(
    a: [Vec3; 2],
    b: [Vec3; 2],
    a_t1: [Vec3; 2],
    b_t1: [Vec3; 2],
    s: &CcdSettings,
) -> Option<f64> {
    // TI's edgeEdgeCCD(ea0_t0, ea1_t0, eb0_t0, eb1_t0, ea0_t1, ea1_t1, eb0_t1, eb1_t1, ...).
    ccd(
        Kind::EdgeEdge,
        [a[0], a[1], b[0], b[1]],
        [a_t1[0], a_t1[1], b_t1[0], b_t1[1]],
        s,
    )
    .map(|r| r.toi)
}

/// Which primitive pair a query is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    VertexFace,
    EdgeEdge,
}

/// What TI's BFS returns on an impact: the time of impact and the co-domain tolerance it
/// reached (larger than the requested tolerance when `max_iterations` stopped it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Impact {
    pub toi: f64,
    pub output_tolerance: f64,
}

/// TI's `CCD` driver (ccd.cpp) with the BFS method, `no_zero_toi = false` and a computed error
/// filter. `p0` and `p1` are the four points at t = 0 and t = 1 in TI's order (vertex, face
/// vertices; or first edge, second edge).
pub(crate) fn ccd(kind: Kind, p0: [Vec3; 4], p1: [Vec3; 4], s: &CcdSettings) -> Option<Impact> {
    let finite = p0
        .iter()
        .chain(p1.iter())
        .all(|p| p.iter().all(|x| x.is_finite()))
        && s.ms.is_finite()
        && s.tolerance.is_finite()
        && s.t_max.is_finite();
    if !finite {
        return None;
    }
    let tol = tolerances(kind, &p0, &p1, s.tolerance);
    let err = numerical_error(kind, &p0, &p1, s.ms > 0.0);
    Search {
        kind,
        p0,
        p1,
        tol,
        co_tol: s.tolerance,
        err,
        ms: s.ms,
        t_max: s.t_max,
        max_itr: s.max_iterations,
    }
    .run()
}

/// The largest coordinate of `a - b` in absolute value.
fn linf(a: Vec3, b: Vec3) -> f64 {
    (a - b).abs().max()
}

/// `a / b`, infinite when `b == 0` (ccd.cpp's `clamp_div` without the optional absolute cap).
fn clamp_div(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        f64::INFINITY
    } else {
        a / b
    }
}

/// Widths in t, u and v below which a box's image is within `distance` per coordinate
/// (ccd.cpp: `compute_vertex_face_tolerances`, `compute_edge_edge_tolerances`). The gap is
/// taken at the four (u, v) corners at both times: `q[t][u][v]`; each width is `distance`
/// over three times the largest change of the gap along that direction.
fn tolerances(kind: Kind, p0: &[Vec3; 4], p1: &[Vec3; 4], distance: f64) -> [f64; 3] {
    let gaps = |p: &[Vec3; 4]| -> [[Vec3; 2]; 2] {
        match kind {
            // point minus the triangle's parallelogram corners f0, f2, f1, f1 + f2 - f0
            Kind::VertexFace => [
                [p[0] - p[1], p[0] - p[3]],
                [p[0] - p[2], p[0] - (p[2] + p[3] - p[1])],
            ],
            Kind::EdgeEdge => [[p[0] - p[2], p[0] - p[3]], [p[1] - p[2], p[1] - p[3]]],
        }
    };
    let q = [gaps(p0), gaps(p1)];
    let (mut dt, mut du, mut dv) = (0.0f64, 0.0f64, 0.0f64);
    for a in 0..2 {
        for b in 0..2 {
            dt = dt.max(linf(q[1][a][b], q[0][a][b]));
            du = du.max(linf(q[a][1][b], q[a][0][b]));
            dv = dv.max(linf(q[a][b][1], q[a][b][0]));
        }
    }
    [
        clamp_div(distance, 3.0 * dt),
        clamp_div(distance, 3.0 * du),
        clamp_div(distance, 3.0 * dv),
    ]
}

/// Bound on the rounding error of the inclusion function per coordinate
/// (interval_root_finder.cpp: `get_numerical_error`, double precision): a constant of the
/// query type, slightly larger with a minimum separation, times the cube of the largest
/// absolute coordinate capped at 1.
fn numerical_error(kind: Kind, p0: &[Vec3; 4], p1: &[Vec3; 4], with_ms: bool) -> [f64; 3] {
    let filter = match (kind, with_ms) {
        (Kind::VertexFace, false) => 6.661338147750939e-15,
        (Kind::VertexFace, true) => 7.549516567451064e-15,
        (Kind::EdgeEdge, false) => 6.217248937900877e-15,
        (Kind::EdgeEdge, true) => 7.105427357601002e-15,
    };
    let mut m = Vec3::zeros();
    for p in p0.iter().chain(p1.iter()) {
        m = m.sup(&p.abs());
    }
    [0, 1, 2].map(|i| filter * m[i].min(1.0).powf(3.0))
}

/// Largest power of two of a bound's denominator: TI's `NumCCD` keeps k / 2^n with a 64-bit k
/// and `n < 63` (interval.cpp).
const MAX_POW: u8 = 62;

/// A dyadic number `num / 2^pow` in [0, 1] (TI's `NumCCD`), compared exactly.
#[derive(Clone, Copy, Debug)]
struct Dyadic {
    num: u64,
    pow: u8,
}

impl Dyadic {
    const ZERO: Dyadic = Dyadic { num: 0, pow: 0 };
    const ONE: Dyadic = Dyadic { num: 1, pow: 0 };

    /// The numerator and denominator as floats, as the inclusion function takes them.
    fn parts(self) -> (f64, f64) {
        (self.num as f64, (1u64 << self.pow) as f64)
    }

    fn value(self) -> f64 {
        let (n, d) = self.parts();
        n / d
    }

    /// Both numerators over the larger denominator.
    fn common(self, o: Dyadic) -> (u128, u128, u8) {
        let p = self.pow.max(o.pow);
        (
            (self.num as u128) << (p - self.pow),
            (o.num as u128) << (p - o.pow),
            p,
        )
    }

    /// The midpoint of `self` and `o`, or None when its denominator would exceed 2^MAX_POW.
    fn mid(self, o: Dyadic) -> Option<Dyadic> {
        let (a, b, p) = self.common(o);
        let (mut n, mut p) = (a + b, p as u32 + 1);
        while n != 0 && n & 1 == 0 && p > 0 {
            n >>= 1;
            p -= 1;
        }
        (p <= MAX_POW as u32 && n <= u64::MAX as u128).then_some(Dyadic {
            num: n as u64,
            pow: p as u8,
        })
    }

    /// Whether `self + o <= 1` (interval.cpp: `NumCCD::is_sum_leq_1`).
    fn sum_leq_1(self, o: Dyadic) -> bool {
        let (a, b, p) = self.common(o);
        a + b <= 1u128 << p
    }
}

impl PartialEq for Dyadic {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Dyadic {}
impl PartialOrd for Dyadic {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Dyadic {
    fn cmp(&self, o: &Self) -> Ordering {
        let (a, b, _) = self.common(*o);
        a.cmp(&b)
    }
}

/// A box of (t, u, v): lower and upper bound of each.
type Box3 = [[Dyadic; 2]; 3];

/// A queued box and its depth in the bisection tree (the root is at level -1, as in TI).
#[derive(Clone, Copy, Debug)]
struct Node {
    b: Box3,
    level: i32,
}

// Queue order of TI's BFS (`horiz_cmp`): shallower levels first, then smaller t lower bound.
// Boxes with equal level and t lower bound (the halves of a u or v split) leave the heap in
// the order of its sift rule, as in TI, where std::priority_queue does not specify it either.
impl Ord for Node {
    fn cmp(&self, o: &Self) -> Ordering {
        o.level.cmp(&self.level).then(o.b[0][0].cmp(&self.b[0][0]))
    }
}
impl PartialOrd for Node {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for Node {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Node {}

/// One query of TI's `interval_root_finder_BFS` (interval_root_finder.cpp).
struct Search {
    kind: Kind,
    p0: [Vec3; 4],
    p1: [Vec3; 4],
    /// Widths in t, u, v below which a box is fine enough.
    tol: [f64; 3],
    /// Co-domain tolerance: the requested distance tolerance.
    co_tol: f64,
    /// Rounding filter per coordinate.
    err: [f64; 3],
    ms: f64,
    t_max: f64,
    max_itr: i64,
}

/// Result of the inclusion test of one box.
struct Inclusion {
    /// The enclosure lies entirely within [-ms - err, ms + err] in every coordinate.
    inside: bool,
    /// Width of the enclosure per coordinate (TI's `true_tol`).
    width: [f64; 3],
}

impl Search {
    /// The gap F at the 8 corners of `b` along coordinate `d`, with TI's arithmetic
    /// (avx.cpp: `function_vf`, `function_ee`): each position interpolated in time as
    /// `(x1 - x0) * t_num / t_den + x0`, then along the primitives in the same way.
    fn corners(&self, b: &Box3, d: usize) -> [f64; 8] {
        let lerp = |x0: f64, x1: f64, (n, dn): (f64, f64)| (x1 - x0) * n / dn + x0;
        let mut out = [0.0; 8];
        for (it, t) in b[0].iter().enumerate() {
            let t = t.parts();
            let x = [0, 1, 2, 3].map(|i| lerp(self.p0[i][d], self.p1[i][d], t));
            for (iu, u) in b[1].iter().enumerate() {
                let u = u.parts();
                for (iv, v) in b[2].iter().enumerate() {
                    let v = v.parts();
                    out[4 * it + 2 * iu + iv] = match self.kind {
                        Kind::VertexFace => {
                            let pt = (x[2] - x[1]) * u.0 / u.1 + (x[3] - x[1]) * v.0 / v.1 + x[1];
                            x[0] - pt
                        }
                        Kind::EdgeEdge => {
                            let a = (x[1] - x[0]) * u.0 / u.1 + x[0];
                            let bb = (x[3] - x[2]) * v.0 / v.1 + x[2];
                            a - bb
                        }
                    };
                }
            }
        }
        out
    }

    /// TI's `origin_in_function_bounding_box_vector` with ms: None when the corner enclosure
    /// misses [-ms - err, ms + err] along some coordinate (checked in x, y, z order).
    fn include(&self, b: &Box3) -> Option<Inclusion> {
        let mut width = [0.0; 3];
        let mut inside = true;
        for d in 0..3 {
            let c = self.corners(b, d);
            let (mut lo, mut hi) = (c[0], c[0]);
            for &x in &c[1..] {
                if lo > x {
                    lo = x;
                }
                if hi < x {
                    hi = x;
                }
            }
            width[d] = hi - lo;
            let r = self.err[d] + self.ms;
            if lo > r || hi < -r {
                return None;
            }
            inside &= lo >= -r && hi <= r;
        }
        Some(Inclusion { inside, width })
    }

    /// Pushes the two halves of `b` split along `i` (TI's `split_and_push`: upper half first;
    /// t halves outside [0, t_max] dropped unless t_max is 1; for a triangle, halves whose
    /// lower (u, v) corner leaves the triangle dropped). False when the split overflows.
    fn split(&self, b: &Box3, i: usize, level: i32, queue: &mut BinaryHeap<Node>) -> bool {
        let Some(m) = b[i][0].mid(b[i][1]) else {
            return false;
        };
        let halves = [[m, b[i][1]], [b[i][0], m]];
        for h in halves {
            let keep = match (i, self.kind) {
                (0, _) => self.t_max == 1.0 || (h[1].value() >= 0.0 && h[0].value() <= self.t_max),
                (_, Kind::EdgeEdge) => true,
                (1, Kind::VertexFace) => h[0].sum_leq_1(b[2][0]),
                (_, Kind::VertexFace) => b[1][0].sum_leq_1(h[0]),
            };
            if keep {
                let mut c = *b;
                c[i] = h;
                queue.push(Node { b: c, level });
            }
        }
        true
    }

    /// The breadth-first root finder: boxes are examined level by level, earliest first. It
    /// returns the lower t bound of the first box that is fine enough (its enclosure within
    /// the co-domain tolerance, its widths within `tol`, or lying inside the ms box) provided
    /// no earlier box of its level needed splitting; otherwise such boxes only bound the
    /// answer from above (TI's TOI_SKIP). Past `max_itr` boxes it returns the lower t bound of
    /// the first box of the current level that contains the origin, with that box's enclosure
    /// width as the tolerance reached.
    fn run(&self) -> Option<Impact> {
        // the queue's storage is kept per thread between calls (cleared each time: no state
        // passes from one query to the next), so that a step's queries do not allocate
        thread_local! {
            static QUEUE: std::cell::RefCell<BinaryHeap<Node>> =
                std::cell::RefCell::new(BinaryHeap::with_capacity(64));
        }
        QUEUE.with(|q| match q.try_borrow_mut() {
            Ok(mut queue) => {
                queue.clear();
                self.search(&mut queue)
            }
            // (not reentrant; a nested call would get its own queue)
            Err(_) => self.search(&mut BinaryHeap::with_capacity(64)),
        })
    }

    fn search(&self, queue: &mut BinaryHeap<Node>) -> Option<Impact> {
        let unit = [Dyadic::ZERO, Dyadic::ONE];
        queue.push(Node {
            b: [unit; 3],
            level: -1,
        });
        let mut refine: i64 = 0;
        // Earliest lower t bound of a box that was fine enough but could not be returned yet;
        // TI starts it at 4, above any time.
        let mut skip = Dyadic { num: 4, pow: 0 };
        let mut use_skip = false;
        let (mut tol_level, mut level_less_tol) = (-2, true);
        let (mut root_level, mut level_root) = (-2, None::<Impact>);
        while let Some(Node { b, level }) = queue.pop() {
            if b[0][0] >= skip {
                continue;
            }
            if tol_level != level {
                tol_level = level;
                level_less_tol = true;
            }
            refine += 1;
            let Some(inc) = self.include(&b) else {
                continue;
            };
            let widths = [0, 1, 2].map(|i| b[i][1].value() - b[i][0].value());
            let fine = inc.width.iter().all(|&w| w <= self.co_tol);
            let small = (0..3).all(|i| widths[i] <= self.tol[i]);
            let inside_alone = inc.inside && level_less_tol;
            if !fine {
                level_less_tol = false;
            }
            if small || inside_alone || level_less_tol {
                return Some(Impact {
                    toi: b[0][0].value(),
                    output_tolerance: self.co_tol,
                });
            }
            // The first box of each level containing the origin is the earliest candidate of
            // that level (TI tracks it only when max_itr > 0; it is also the overflow answer).
            if root_level != level {
                root_level = level;
                let w = inc.width.iter().fold(self.co_tol, |a, &b| a.max(b));
                level_root = Some(Impact {
                    toi: b[0][0].value(),
                    output_tolerance: w,
                });
            }
            if self.max_itr > 0 && refine > self.max_itr {
                return level_root;
            }
            if fine || inc.inside {
                skip = skip.min(b[0][0]);
                use_skip = true;
                continue;
            }
            // Split the dimension widest relative to its tolerance, first one on ties
            // (interval_root_finder.cpp: `find_next_split`).
            let mut best = (0, f64::NEG_INFINITY);
            for i in 0..3 {
                let r = if widths[i] > self.tol[i] {
                    widths[i] / self.tol[i]
                } else {
                    f64::NEG_INFINITY
                };
                if r > best.1 {
                    best = (i, r);
                }
            }
            if !self.split(&b, best.0, level + 1, queue) {
                return Some(self.overflow_toi(level_root, skip, use_skip));
            }
        }
        use_skip.then(|| Impact {
            toi: skip.value(),
            output_tolerance: self.co_tol,
        })
    }

    /// Answer when a bound can no longer be bisected: every box of earlier levels has been
    /// examined, so any root left lies in a box of this level at or after its first box
    /// containing the origin, or in a box set aside as fine enough. Their earliest lower t
    /// bound is reported (TI reports an impact with an unset, infinite time here).
    fn overflow_toi(&self, level_root: Option<Impact>, skip: Dyadic, use_skip: bool) -> Impact {
        let mut toi = level_root.map_or(f64::INFINITY, |r| r.toi);
        if use_skip {
            toi = toi.min(skip.value());
        }
        Impact {
            toi: toi.min(1.0),
            output_tolerance: f64::INFINITY,
        }
    }
}

#[cfg(test)]
#[path = "ccd_tests.rs"]
mod tests;
