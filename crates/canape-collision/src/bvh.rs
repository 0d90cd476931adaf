//! A bounding-volume hierarchy over a model's element boxes, built from the first positions and
//! refitted as they move (SOFA's CubeCollisionModel: cells split at the median along their
//! longest axis down to a few elements), and the dual descent that lists the element pairs of two
//! models whose boxes come within a gap of each other (BVHNarrowPhase), and the elements a ray
//! passes by (RayTraceNarrowPhase).

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

#[derive(Clone, Copy, Debug)]
struct Cell {
    bounds: Aabb,
    /// Range of `items` below this cell.
    start: u32,
    end: u32,
    /// Children (0: a leaf).
    left: u32,
    right: u32,
}

/// The hierarchy: cells (the root first) and the element indices they cover.
#[derive(Clone, Debug, Default)]
pub struct Bvh {
    cells: Vec<Cell>,
    items: Vec<usize>,
    stack: Vec<(u32, u32, u32)>,
    /// Number of element boxes the tree was built for.
    built_for: usize,
}

/// Elements per leaf cell.
const LEAF: usize = 4;

impl Bvh {
    /// Rebuild over `boxes` (empty boxes, with min > max, are left out).
    pub fn build(&mut self, boxes: &[Aabb]) {
        self.cells.clear();
        self.items.clear();
        self.items
            .extend((0..boxes.len()).filter(|&i| (0..3).all(|k| boxes[i].0[k] <= boxes[i].1[k])));
        if self.items.is_empty() {
            return;
        }
        let n = self.items.len() as u32;
        self.cells.push(Cell {
            bounds: union(boxes, &self.items),
            start: 0,
            end: n,
            left: 0,
            right: 0,
        });
        let mut todo = std::mem::take(&mut self.stack);
        todo.clear();
        todo.push((0, 0, n));
        while let Some((c, start, end)) = todo.pop() {
            if (end - start) as usize <= LEAF {
                continue;
            }
            let b = self.cells[c as usize].bounds;
            let ext = b.1 - b.0;
            let axis = if ext.x >= ext.y && ext.x >= ext.z {
                0
            } else if ext.y >= ext.z {
                1
            } else {
                2
            };
            let items = &mut self.items[start as usize..end as usize];
            let mid = items.len() / 2;
            // median split by box centre (ties by index: the same tree on every run)
            items.select_nth_unstable_by(mid, |&i, &j| {
                let ci = boxes[i].0[axis] + boxes[i].1[axis];
                let cj = boxes[j].0[axis] + boxes[j].1[axis];
                ci.total_cmp(&cj).then(i.cmp(&j))
            });
            let m = start + mid as u32;
            let l = self.cells.len() as u32;
            for (s, e) in [(start, m), (m, end)] {
                self.cells.push(Cell {
                    bounds: union(boxes, &self.items[s as usize..e as usize]),
                    start: s,
                    end: e,
                    left: 0,
                    right: 0,
                });
            }
            self.cells[c as usize].left = l;
            self.cells[c as usize].right = l + 1;
            todo.push((l, start, m));
            todo.push((l + 1, m, end));
        }
        self.stack = todo;
    }

    /// Follow moved elements: keep the tree built for these elements and recompute its boxes
    /// bottom-up (SOFA's CubeCollisionModel builds its tree once and then refits it); build it
    /// when there is none yet or the number of elements changed.
    pub fn update(&mut self, boxes: &[Aabb]) {
        if self.cells.is_empty() || self.built_for != boxes.len() {
            self.build(boxes);
            self.built_for = boxes.len();
            return;
        }
        // children come after their parent: a reverse sweep sees them first
        for c in (0..self.cells.len()).rev() {
            let cell = self.cells[c];
            self.cells[c].bounds = if cell.left == 0 {
                union(boxes, &self.items[cell.start as usize..cell.end as usize])
            } else {
                let (l, r) = (
                    self.cells[cell.left as usize].bounds,
                    self.cells[cell.right as usize].bounds,
                );
                (l.0.inf(&r.0), l.1.sup(&r.1))
            };
        }
    }

    /// The box of everything in the hierarchy.
    pub fn bounds(&self) -> Option<Aabb> {
        self.cells.first().map(|c| c.bounds)
    }

    /// Visit every element whose box the ray `origin + t·dir`, t ≥ 0, passes through (cells
    /// first by the same slab test), in the hierarchy's order; `stack` is scratch space.
    pub fn ray(
        &self,
        boxes: &[Aabb],
        origin: Vec3,
        dir: Vec3,
        stack: &mut Vec<u32>,
        mut visit: impl FnMut(usize),
    ) {
        if self.cells.is_empty() {
            return;
        }
        stack.clear();
        stack.push(0);
        while let Some(c) = stack.pop() {
            let cell = &self.cells[c as usize];
            if !ray_meets(&cell.bounds, origin, dir) {
                continue;
            }
            if cell.left == 0 {
                for &i in &self.items[cell.start as usize..cell.end as usize] {
                    if ray_meets(&boxes[i], origin, dir) {
                        visit(i);
                    }
                }
            } else {
                stack.push(cell.right);
                stack.push(cell.left);
            }
        }
    }

    /// Every pair (i of `self`, j of `other`) whose element boxes meet within `gap`, appended
    /// to `out` (in no particular order); `stack` is scratch space.
    pub fn pairs(
        &self,
        other: &Bvh,
        boxes_a: &[Aabb],
        boxes_b: &[Aabb],
        gap: f64,
        stack: &mut Vec<(u32, u32)>,
        out: &mut Vec<(u32, u32)>,
    ) {
        if self.cells.is_empty() || other.cells.is_empty() {
            return;
        }
        stack.clear();
        stack.push((0, 0));
        while let Some((a, b)) = stack.pop() {
            let (ca, cb) = (&self.cells[a as usize], &other.cells[b as usize]);
            if !boxes_meet(&ca.bounds, &cb.bounds, gap) {
                continue;
            }
            let (leaf_a, leaf_b) = (ca.left == 0, cb.left == 0);
            if leaf_a && leaf_b {
                for &i in &self.items[ca.start as usize..ca.end as usize] {
                    for &j in &other.items[cb.start as usize..cb.end as usize] {
                        if boxes_meet(&boxes_a[i], &boxes_b[j], gap) {
                            out.push((i as u32, j as u32));
                        }
                    }
                }
            } else if leaf_b || (!leaf_a && ca.end - ca.start >= cb.end - cb.start) {
                stack.push((ca.left, b));
                stack.push((ca.right, b));
            } else {
                stack.push((a, cb.left));
                stack.push((a, cb.right));
            }
        }
    }
}

fn union(boxes: &[Aabb], items: &[usize]) -> Aabb {
    let mut lo = Vec3::repeat(f64::INFINITY);
    let mut hi = Vec3::repeat(f64::NEG_INFINITY);
    for &i in items {
        lo = lo.inf(&boxes[i].0);
        hi = hi.sup(&boxes[i].1);
    }
    (lo, hi)
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
        t.build(&boxes);
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
            t.ray(&boxes, o, d, &mut stack, |i| got.push(i));
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
        ta.build(&a);
        tb.build(&b);
        let mut got = Vec::new();
        ta.pairs(&tb, &a, &b, 0.05, &mut Vec::new(), &mut got);
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
        ta.update(&moved);
        let mut got = Vec::new();
        ta.pairs(&tb, &moved, &b, 0.05, &mut Vec::new(), &mut got);
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
}
