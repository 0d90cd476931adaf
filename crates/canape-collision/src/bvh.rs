//! A bounding-volume hierarchy over a model's element boxes as SOFA's CubeCollisionModel builds
//! it (Sofa/Component/Collision/Geometry/.../CubeCollisionModel.cpp, computeBoundingTree):
//! built once from the first positions and refitted as they move, cells over more than four
//! leaf cubes split in two along their longest side down to the pipeline's `depth`; the
//! descent that lists the element pairs of two models whose boxes come within a gap of each
//! other in the order SOFA's BVHNarrowPhase meets them (the order the contacts, and the
//! Lagrangian constraint rows, then keep); and the elements a ray passes by
//! (RayTraceNarrowPhase).

use canape_types::Vec3;

/// An axis-aligned box (min, max).
pub type Aabb = (Vec3, Vec3);

/// Whether two boxes are within `gap` of each other on every axis.
#[inline]
pub fn boxes_meet(a: &Aabb, b: &Aabb, gap: f64) -> bool {
    (0..3).all(|k| a.0[k] <= b.1[k] + gap && b.0[k] <= a.1[k] + gap)
}

/// Whether the ray `origin + t·dir`, t ≥ 0, meets box `b` (slab test; a zero component of
/// `dir` needs the origin within that slab).
#[inline]
pub fn ray_meets(b: &Aabb, origin: Vec3, dir: Vec3) -> bool {
    let (mut lo, mut hi) = (0.0_f64, f64::INFINITY);
    for k in 0..3 {
        if dir[k] == 0.0 {
            if origin[k] < b.0[k] || origin[k] > b.1[k] {
                return false;
            }
            continue;
        }
        let (t1, t2) = ((b.0[k] - origin[k]) / dir[k], (b.1[k] - origin[k]) / dir[k]);
        lo = lo.max(t1.min(t2));
        hi = hi.min(t1.max(t2));
        if lo > hi {
            return false;
        }
    }
    true
}

/// A cell's sub-cells: a range of leaf cubes, or of cells of the next level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sub {
    Leaves(u32, u32),
    Cells(u32, u32),
}

/// An inner cell of the tree: its box and its sub-cells.
#[derive(Clone, Copy, Debug)]
struct Cell {
    bounds: Aabb,
    sub: Sub,
}

/// A range of the hierarchy the descents visit: leaf cubes, or cells of one level.
#[derive(Clone, Copy, Debug)]
pub enum Span {
    Leaves(u32, u32),
    Cells(u8, u32, u32),
}

impl Span {
    fn len(self) -> u32 {
        match self {
            Span::Leaves(a, b) | Span::Cells(_, a, b) => b - a,
        }
    }
}

/// The hierarchy as SOFA's CubeCollisionModel makes it: one leaf cube per element (in the
/// order the splits sorted them), and levels of cells (the root alone first), each cell over a
/// range of leaf cubes or over two cells of the next level.
#[derive(Clone, Debug, Default)]
pub struct Bvh {
    /// Leaf cubes: the element each covers and its box.
    leaves: Vec<(u32, Aabb)>,
    levels: Vec<Vec<Cell>>,
    /// Number of element boxes and the depth the tree was built for.
    built_for: (usize, usize),
}

/// Cells over more leaf cubes than this are split.
const LEAF: u32 = 4;

/// SOFA's CubeSortPredicate key: the box's min + max along `axis` (−0 taken as +0, so that
/// the total order agrees with `<` wherever SOFA's comparison is defined).
fn centre_key(b: &Aabb, axis: usize) -> f64 {
    let k = (b.0[axis] + b.1[axis]) + 0.0;
    // an empty or non-finite box (an element with missing vertices) goes last, on every
    // platform (a NaN's sign bit is not portable)
    if k.is_nan() {
        f64::INFINITY
    } else {
        k
    }
}

impl Bvh {
    /// Rebuild over `boxes` with at most `depth` levels of splits below the root
    /// (CubeCollisionModel::computeBoundingTree): a cell over more than 4 leaf cubes is split
    /// along the longest side of its box (ties as SOFA's comparisons fall: z whenever z is
    /// among the longest, else y when x and y tie), its leaf cubes stable-sorted by their box
    /// centres along that axis, the first ⌈n/2⌉ to the first half.
    pub fn build(&mut self, boxes: &[Aabb], depth: usize) {
        self.leaves.clear();
        self.leaves
            .extend(boxes.iter().enumerate().map(|(i, b)| (i as u32, *b)));
        for l in &mut self.levels {
            l.clear();
        }
        self.levels.resize(depth + 1, Vec::new());
        self.levels.truncate(depth + 1);
        if self.leaves.is_empty() {
            return;
        }
        let n = self.leaves.len() as u32;
        let root = Cell {
            bounds: self.union_leaves(0, n),
            sub: Sub::Leaves(0, n),
        };
        self.levels[0].push(root);
        for lvl in 0..depth {
            for c in 0..self.levels[lvl].len() {
                let cell = self.levels[lvl][c];
                let Sub::Leaves(a, b) = cell.sub else {
                    continue;
                };
                let count = b - a;
                if count <= LEAF {
                    continue;
                }
                let l = cell.bounds.1 - cell.bounds.0;
                let axis = if l.x > l.y {
                    if l.x > l.z {
                        0
                    } else {
                        2
                    }
                } else if l.y > l.z {
                    1
                } else {
                    2
                };
                self.leaves[a as usize..b as usize]
                    .sort_by(|p, q| centre_key(&p.1, axis).total_cmp(&centre_key(&q.1, axis)));
                let middle = a + count.div_ceil(2);
                let first = self.levels[lvl + 1].len() as u32;
                for (s, e) in [(a, middle), (middle, b)] {
                    let bounds = self.union_leaves(s, e);
                    self.levels[lvl + 1].push(Cell {
                        bounds,
                        sub: Sub::Leaves(s, e),
                    });
                }
                self.levels[lvl][c].sub = Sub::Cells(first, first + 2);
            }
        }
        while self.levels.last().is_some_and(|l| l.is_empty()) {
            self.levels.pop();
        }
    }

    fn union_leaves(&self, a: u32, b: u32) -> Aabb {
        let mut lo = Vec3::repeat(f64::INFINITY);
        let mut hi = Vec3::repeat(f64::NEG_INFINITY);
        for (_, bx) in &self.leaves[a as usize..b as usize] {
            lo = lo.inf(&bx.0);
            hi = hi.sup(&bx.1);
        }
        (lo, hi)
    }

    /// Follow moved elements: keep the tree built for these elements and recompute its boxes
    /// bottom-up (SOFA's CubeCollisionModel builds its tree once and then refits it); build it
    /// when there is none yet, or the number of elements or the depth changed.
    pub fn update(&mut self, boxes: &[Aabb], depth: usize) {
        if self.levels.first().is_none_or(|l| l.is_empty())
            || self.built_for != (boxes.len(), depth)
        {
            self.build(boxes, depth);
            self.built_for = (boxes.len(), depth);
            return;
        }
        for (e, b) in &mut self.leaves {
            *b = boxes[*e as usize];
        }
        for lvl in (0..self.levels.len()).rev() {
            for c in 0..self.levels[lvl].len() {
                let bounds = match self.levels[lvl][c].sub {
                    Sub::Leaves(a, b) => self.union_leaves(a, b),
                    Sub::Cells(a, b) => {
                        let next = &self.levels[lvl + 1][a as usize..b as usize];
                        next.iter().fold(
                            (Vec3::repeat(f64::INFINITY), Vec3::repeat(f64::NEG_INFINITY)),
                            |acc, x| (acc.0.inf(&x.bounds.0), acc.1.sup(&x.bounds.1)),
                        )
                    }
                };
                self.levels[lvl][c].bounds = bounds;
            }
        }
    }

    /// The box of everything in the hierarchy.
    pub fn bounds(&self) -> Option<Aabb> {
        self.levels
            .first()
            .and_then(|l| l.first())
            .map(|c| c.bounds)
    }

    /// The root's sub-cells.
    fn root_span(&self) -> Option<Span> {
        let root = self.levels.first()?.first()?;
        Some(match root.sub {
            Sub::Leaves(a, b) => Span::Leaves(a, b),
            Sub::Cells(a, b) => Span::Cells(1, a, b),
        })
    }

    /// Item `k` of `span`: its box and its sub-cells (None for a leaf cube), or its element.
    fn item(&self, span: Span, k: u32) -> (Aabb, Result<Span, u32>) {
        match span {
            Span::Leaves(a, _) => {
                let (e, b) = self.leaves[(a + k) as usize];
                (b, Err(e))
            }
            Span::Cells(lvl, a, _) => {
                let c = &self.levels[lvl as usize][(a + k) as usize];
                let sub = match c.sub {
                    Sub::Leaves(s, e) => Span::Leaves(s, e),
                    Sub::Cells(s, e) => Span::Cells(lvl + 1, s, e),
                };
                (c.bounds, Ok(sub))
            }
        }
    }

    /// The span holding just item `k` of `span`.
    fn single(span: Span, k: u32) -> Span {
        match span {
            Span::Leaves(a, _) => Span::Leaves(a + k, a + k + 1),
            Span::Cells(l, a, _) => Span::Cells(l, a + k, a + k + 1),
        }
    }

    /// Visit every element whose box the ray `origin + t·dir`, t ≥ 0, passes through (cells
    /// first by the same slab test), depth first in the hierarchy's order; `stack` is scratch
    /// space.
    pub fn ray(
        &self,
        origin: Vec3,
        dir: Vec3,
        stack: &mut Vec<Span>,
        mut visit: impl FnMut(usize),
    ) {
        stack.clear();
        let Some(root) = self.levels.first().and_then(|l| l.first()) else {
            return;
        };
        if !ray_meets(&root.bounds, origin, dir) {
            return;
        }
        stack.extend(self.root_span());
        while let Some(span) = stack.pop() {
            if span.len() > 1 {
                stack.extend((0..span.len()).rev().map(|k| Self::single(span, k)));
                continue;
            }
            let (b, below) = self.item(span, 0);
            if !ray_meets(&b, origin, dir) {
                continue;
            }
            match below {
                Ok(sub) => stack.push(sub),
                // a leaf cube's box is its element's box, tested above
                Err(e) => visit(e as usize),
            }
        }
    }

    /// Every pair (i of `self`, j of `other`) whose element boxes meet within `gap`, appended
    /// to `out` in the order SOFA's BVHNarrowPhase meets them: from the two roots' sub-cells,
    /// a depth-first descent with a stack; each visit runs over the pairs of its two spans
    /// (first side outer), tests their boxes, and either tests a pair of leaf cubes at once
    /// or pushes the pair's sub-cells (a leaf cube paired with a cell's sub-cells as itself),
    /// to be visited after this loop, the last pushed first. A visit of two large spans of
    /// leaf cubes (a bottom cell holds up to n / 2^depth of them) finds its pairs by sweep and
    /// prune instead of testing every pair, then puts them in the loop's order.
    pub fn pairs(&self, other: &Bvh, gap: f64, sc: &mut PairScratch, out: &mut Vec<(u32, u32)>) {
        let (Some(ra), Some(rb)) = (self.root_span(), other.root_span()) else {
            return;
        };
        sc.stack.clear();
        sc.stack.push((ra, rb));
        while let Some((sa, sb)) = sc.stack.pop() {
            if let (Span::Leaves(a0, a1), Span::Leaves(b0, b1)) = (sa, sb) {
                // two spans of leaf cubes: every meeting pair is a result, in loop order
                let (la, lb) = (
                    &self.leaves[a0 as usize..a1 as usize],
                    &other.leaves[b0 as usize..b1 as usize],
                );
                if la.len() * lb.len() > SWEEP_MIN {
                    sweep_leaves(la, lb, gap, sc, out);
                } else {
                    for (e, ba) in la {
                        for (f, bb) in lb {
                            if boxes_meet(ba, bb, gap) {
                                out.push((*e, *f));
                            }
                        }
                    }
                }
                continue;
            }
            for i in 0..sa.len() {
                let (ba, ca) = self.item(sa, i);
                for j in 0..sb.len() {
                    let (bb, cb) = other.item(sb, j);
                    if !boxes_meet(&ba, &bb, gap) {
                        continue;
                    }
                    match (ca, cb) {
                        (Ok(x), Ok(y)) => sc.stack.push((x, y)),
                        (Ok(x), Err(_)) => sc.stack.push((x, Self::single(sb, j))),
                        (Err(_), Ok(y)) => sc.stack.push((Self::single(sa, i), y)),
                        (Err(e), Err(f)) => out.push((e, f)),
                    }
                }
            }
        }
    }
}

/// Above this many leaf-cube pairs a visit is swept rather than tested pair by pair.
const SWEEP_MIN: usize = 1024;

/// Scratch space of [`Bvh::pairs`], kept between calls (no allocation once sized).
#[derive(Clone, Debug, Default)]
pub struct PairScratch {
    stack: Vec<(Span, Span)>,
    /// Both spans' leaf cubes (side, rank) by box min x, the active ones of each side, and the
    /// meeting (rank in the first, rank in the second) pairs.
    events: Vec<(f64, u8, u32)>,
    active: [Vec<u32>; 2],
    hits: Vec<(u32, u32)>,
}

/// The meeting pairs of two spans of leaf cubes, appended to `out` as their elements, in the
/// order of the pair-by-pair loop (rank in `la`, then rank in `lb`): a sweep along x over both
/// spans' boxes (a box entering meets the other side's boxes still open, those whose max x
/// plus the gap reaches its min x), every candidate then tested on all axes.
fn sweep_leaves(
    la: &[(u32, Aabb)],
    lb: &[(u32, Aabb)],
    gap: f64,
    sc: &mut PairScratch,
    out: &mut Vec<(u32, u32)>,
) {
    sc.events.clear();
    sc.events.extend(
        la.iter()
            .enumerate()
            .map(|(k, (_, b))| (b.0.x, 0, k as u32)),
    );
    sc.events.extend(
        lb.iter()
            .enumerate()
            .map(|(k, (_, b))| (b.0.x, 1, k as u32)),
    );
    sc.events
        .sort_unstable_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)).then(p.2.cmp(&q.2)));
    sc.active[0].clear();
    sc.active[1].clear();
    sc.hits.clear();
    let boxes = |side: u8, k: u32| {
        if side == 0 {
            &la[k as usize].1
        } else {
            &lb[k as usize].1
        }
    };
    for &(min_x, side, k) in &sc.events {
        let other = 1 - side;
        sc.active[other as usize].retain(|&o| boxes(other, o).1.x + gap >= min_x);
        let bk = boxes(side, k);
        for &o in &sc.active[other as usize] {
            if boxes_meet(bk, boxes(other, o), gap) {
                sc.hits.push(if side == 0 { (k, o) } else { (o, k) });
            }
        }
        sc.active[side as usize].push(k);
    }
    sc.hits.sort_unstable();
    out.extend(
        sc.hits
            .iter()
            .map(|&(i, j)| (la[i as usize].0, lb[j as usize].0)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ray_visits_exactly_the_boxes_it_passes_through() {
        let mut seed = 11u64;
        let mut r = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let boxes: Vec<Aabb> = (0..400)
            .map(|_| {
                let c = Vec3::new(r() * 4.0, r() * 4.0, r() * 4.0);
                let h = Vec3::new(r(), r(), r()) * 0.2;
                (c - h, c + h)
            })
            .collect();
        let mut t = Bvh::default();
        t.build(&boxes, 6);
        let mut stack = Vec::new();
        let mut hits = 0;
        for k in 0..500 {
            let o = Vec3::new(r() * 4.0, r() * 4.0, r() * 4.0);
            let mut d = Vec3::new(r() - 0.5, r() - 0.5, r() - 0.5);
            // some rays along an axis (zero components)
            if k % 5 == 0 {
                d = Vec3::new(0.0, 0.0, 1.0);
            }
            let mut got = Vec::new();
            t.ray(o, d, &mut stack, |i| got.push(i));
            got.sort_unstable();
            let want: Vec<usize> = (0..boxes.len())
                .filter(|&i| ray_meets(&boxes[i], o, d))
                .collect();
            assert_eq!(got, want);
            hits += want.len();
        }
        assert!(hits > 100, "the rays meet boxes: {hits}");
    }

    #[test]
    fn dual_descent_finds_exactly_the_brute_force_pairs() {
        let mut seed = 7u64;
        let mut r = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut make = |n: usize, shift: f64| -> Vec<Aabb> {
            (0..n)
                .map(|_| {
                    let c = Vec3::new(r() * 4.0 + shift, r() * 4.0, r() * 4.0);
                    let h = Vec3::new(r(), r(), r()) * 0.3;
                    (c - h, c + h)
                })
                .collect()
        };
        let (a, b) = (make(300, 0.0), make(200, 2.0));
        let (mut ta, mut tb) = (Bvh::default(), Bvh::default());
        ta.build(&a, 6);
        tb.build(&b, 6);
        let mut got = Vec::new();
        ta.pairs(&tb, 0.05, &mut PairScratch::default(), &mut got);
        got.sort_unstable();
        let mut want = Vec::new();
        for i in 0..a.len() {
            for j in 0..b.len() {
                if boxes_meet(&a[i], &b[j], 0.05) {
                    want.push((i as u32, j as u32));
                }
            }
        }
        assert!(!want.is_empty());
        assert_eq!(got, want);
        // after the elements moved, a refitted tree still finds exactly the right pairs
        let moved: Vec<Aabb> = a
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let d = Vec3::new((i % 7) as f64 * 0.3, -((i % 5) as f64) * 0.2, 0.1);
                (b.0 + d, b.1 + d)
            })
            .collect();
        ta.update(&moved, 6);
        let mut got = Vec::new();
        ta.pairs(&tb, 0.05, &mut PairScratch::default(), &mut got);
        got.sort_unstable();
        let mut want = Vec::new();
        for i in 0..moved.len() {
            for j in 0..b.len() {
                if boxes_meet(&moved[i], &b[j], 0.05) {
                    want.push((i as u32, j as u32));
                }
            }
        }
        assert_eq!(got, want);
    }

    #[test]
    fn pairs_come_in_sofas_descent_order() {
        // six points on x at 5 3 1 0 4 2 (elements 0..5) against one point: the root (6 > 4
        // leaf cubes) splits along x, its leaf cubes stable-sorted by x (elements 3 2 5 1 4 0),
        // the first ⌈6/2⌉ = 3 to the first cell; the descent pushes (cell 0, b) then (cell 1,
        // b) and pops cell 1 first: elements 1 4 0, then 3 2 5
        let point = |x: f64| (Vec3::new(x, 0.0, 0.0), Vec3::new(x, 0.0, 0.0));
        let a: Vec<Aabb> = [5.0, 3.0, 1.0, 0.0, 4.0, 2.0].map(point).to_vec();
        let b = vec![point(2.5)];
        let (mut ta, mut tb) = (Bvh::default(), Bvh::default());
        ta.update(&a, 6);
        tb.update(&b, 6);
        let mut got = Vec::new();
        ta.pairs(&tb, 10.0, &mut PairScratch::default(), &mut got);
        let order: Vec<u32> = got.iter().map(|p| p.0).collect();
        assert_eq!(order, vec![1, 4, 0, 3, 2, 5]);
        // depth 0: the root alone, over the leaf cubes in element order
        ta.update(&a, 0);
        got.clear();
        ta.pairs(&tb, 10.0, &mut PairScratch::default(), &mut got);
        let order: Vec<u32> = got.iter().map(|p| p.0).collect();
        assert_eq!(order, vec![0, 1, 2, 3, 4, 5]);
        // the tree stays as built while the points move (refitted, not re-sorted)
        let moved: Vec<Aabb> = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0].map(point).to_vec();
        ta.update(&a, 6);
        ta.update(&moved, 6);
        got.clear();
        ta.pairs(&tb, 10.0, &mut PairScratch::default(), &mut got);
        let order: Vec<u32> = got.iter().map(|p| p.0).collect();
        assert_eq!(order, vec![1, 4, 0, 3, 2, 5]);
    }

    #[test]
    fn a_swept_visit_gives_the_pair_by_pair_loops_order() {
        // depth 0: each root holds its leaf cubes in element order and the one visit, of
        // 300 × 200 leaf cubes, is swept; its pairs must be every meeting pair, in (i, j) order
        let mut seed = 3u64;
        let mut r = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut make = |n: usize| -> Vec<Aabb> {
            (0..n)
                .map(|_| {
                    let c = Vec3::new(r() * 4.0, r() * 4.0, r() * 4.0);
                    let h = Vec3::new(r(), r(), r()) * 0.3;
                    (c - h, c + h)
                })
                .collect()
        };
        let (mut a, b) = (make(300), make(200));
        // an empty box (an element with missing vertices) meets nothing
        a[7] = (Vec3::repeat(f64::INFINITY), Vec3::repeat(f64::NEG_INFINITY));
        let (mut ta, mut tb) = (Bvh::default(), Bvh::default());
        ta.update(&a, 0);
        tb.update(&b, 0);
        let mut got = Vec::new();
        ta.pairs(&tb, 0.05, &mut PairScratch::default(), &mut got);
        let mut want = Vec::new();
        for i in 0..a.len() {
            for j in 0..b.len() {
                if boxes_meet(&a[i], &b[j], 0.05) {
                    want.push((i as u32, j as u32));
                }
            }
        }
        assert!(want.len() > 100 && !want.iter().any(|p| p.0 == 7));
        assert_eq!(got, want);
    }
}
