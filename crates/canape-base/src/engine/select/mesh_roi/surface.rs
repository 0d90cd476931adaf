//! MeshROI's inside test: the ROI surface (its triangles and bounding box, and the ray
//! crossings that decide whether a point is inside), and checks on the ROI mesh.

use canape_types::Vec3;
use std::collections::BTreeMap;

/// How far beyond the bounding box the rays are aimed (SOFA's constant).
const RAY_MARGIN: f64 = 100.0;

/// The ROI surface: its triangles (corners and SOFA's normal (p1 − p0) × (p2 − p1)) and the
/// bounding box that pre-filters the points.
#[derive(Clone, Debug)]
pub struct RoiSurface {
    triangles: Vec<[Vec3; 4]>,
    min: Vec3,
    max: Vec3,
}

impl RoiSurface {
    /// The surface of `triangles` (already checked against `points`) in the box `min`–`max`.
    pub fn new(points: &[[f64; 3]], triangles: &[[u32; 3]], min: Vec3, max: Vec3) -> Self {
        let v = |i: u32| Vec3::from(points[i as usize]);
        let triangles = triangles
            .iter()
            .map(|t| {
                let (a, b, c) = (v(t[0]), v(t[1]), v(t[2]));
                [a, b, c, (b - a).cross(&(c - b))]
            })
            .collect();
        RoiSurface {
            triangles,
            min,
            max,
        }
    }

    /// Whether `p` is in the bounding box, bounds included.
    pub fn in_box(&self, p: &Vec3) -> bool {
        (0..3).all(|k| p[k] >= self.min[k] && p[k] <= self.max[k])
    }

    /// Whether `p` is inside the surface: in the box and crossed an odd number of times by the
    /// ray towards the nearer corner pushed out by 100.
    pub fn contains(&self, p: &Vec3) -> bool {
        if !self.in_box(p) {
            return false;
        }
        let m = Vec3::repeat(RAY_MARGIN);
        let target = if (self.min - p).norm_squared() < (self.max - p).norm_squared() {
            self.min - m
        } else {
            self.max + m
        };
        let dir = target - p;
        let inner = |a: &Vec3, b: &Vec3, q: &Vec3, n: &Vec3| (b - a).cross(&(q - a)).dot(n) >= 0.0;
        let crossings = self
            .triangles
            .iter()
            .filter(|[a, b, c, n]| {
                let denom = n.dot(&dir);
                if denom == 0.0 {
                    return false;
                }
                let d = n.dot(&(a - p)) / denom;
                if d.is_nan() || d < 0.0 {
                    return false;
                }
                let q = p + dir * d;
                inner(a, b, &q, n) && inner(b, c, &q, n) && inner(c, a, &q, n)
            })
            .count();
        crossings % 2 == 1
    }
}

/// The bounding box of `points` as SOFA's MeshROI computes it (comparisons, so that NaN
/// coordinates are skipped); None without points.
pub fn bounding_box(points: &[[f64; 3]]) -> Option<(Vec3, Vec3)> {
    let first = Vec3::from(*points.first()?);
    let (mut lo, mut hi) = (first, first);
    for p in &points[1..] {
        for k in 0..3 {
            if p[k] > hi[k] {
                hi[k] = p[k];
            }
            if p[k] < lo[k] {
                lo[k] = p[k];
            }
        }
    }
    Some((lo, hi))
}

/// The number of edges of `triangles` that are not shared by exactly two of them (0 for a
/// closed, manifold surface).
pub fn open_edges(triangles: &[[u32; 3]]) -> usize {
    let mut count: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for t in triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *count.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    count.values().filter(|&&c| c != 2).count()
}
