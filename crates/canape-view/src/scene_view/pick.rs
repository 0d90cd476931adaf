//! Ray picking of a grabbable source's point, for the mouse spring.

use super::geometry::{dot, norm2, ray_triangle, sub};
use super::{bounds, source_positions, View};

use canape::Simulation;

/// Nearest point of a grabbable source's surface hit by a ray: (source, vertex, distance along
/// the ray). Falls back to the point closest to the ray (within 2 % of the scene size) for
/// sources without a surface.
pub fn pick(
    sim: &Simulation,
    view: &View,
    origin: [f64; 3],
    dir: [f64; 3],
) -> Option<(usize, usize, f64)> {
    let mut best: Option<(usize, usize, f64)> = None;
    for (si, s) in view.sources.iter().enumerate() {
        if !s.grabbable {
            continue;
        }
        let x = source_positions(sim, s);
        let p = |i: u32| {
            let i = i as usize;
            [x[3 * i], x[3 * i + 1], x[3 * i + 2]]
        };
        for t in &s.triangles {
            if t.iter().any(|&i| 3 * i as usize + 2 >= x.len()) {
                continue;
            }
            let (a, b, c) = (p(t[0]), p(t[1]), p(t[2]));
            if let Some(d) = ray_triangle(origin, dir, a, b, c) {
                if best.is_none_or(|(_, _, bd)| d < bd) {
                    let hit = [
                        origin[0] + d * dir[0],
                        origin[1] + d * dir[1],
                        origin[2] + d * dir[2],
                    ];
                    let v = *t
                        .iter()
                        .min_by(|&&i, &&j| {
                            let di = norm2(sub(p(i), hit));
                            let dj = norm2(sub(p(j), hit));
                            di.total_cmp(&dj)
                        })
                        .expect("three vertices");
                    best = Some((si, v as usize, d));
                }
            }
        }
    }
    if best.is_some() {
        return best;
    }
    // points only: closest to the ray
    let (lo, hi) = bounds(sim, view);
    let size = norm2(sub(hi, lo)).sqrt().max(1e-9);
    let mut best_pt: Option<(usize, usize, f64, f64)> = None;
    for (si, s) in view.sources.iter().enumerate() {
        if !s.grabbable || !s.triangles.is_empty() {
            continue;
        }
        let x = source_positions(sim, s);
        for (i, q) in x.chunks_exact(3).enumerate() {
            let w = sub([q[0], q[1], q[2]], origin);
            let t = dot(w, dir);
            if t <= 0.0 {
                continue;
            }
            let d2 = norm2(w) - t * t;
            if d2.sqrt() <= 0.02 * size && best_pt.is_none_or(|(_, _, bd, _)| d2 < bd) {
                best_pt = Some((si, i, d2, t));
            }
        }
    }
    best_pt.map(|(s, i, _, t)| (s, i, t))
}
