//! The lattice points classified inside or outside by ray votes, and the snapping of the points
//! too close to the surface.

use super::geometry::{cross, dot, ray_intersection, sub, towards};
use super::lattice::{edge_size2, Lattice};
use super::{Notes, StuffingParams, EDGESHELL, OCTREE_HALF_SIZE, P3};

use std::collections::BTreeSet;

/// Inside/outside votes and surface distances along the lattice lines (MeshTetraStuffing.cpp,
/// doUpdate): a ray is cast along each lattice line from its last point; each point of the line
/// votes by the orientation of a neighbouring hit, and records the distance (in edge units) to
/// the nearest hit ahead (direction e) and behind (e + 1). Points without a majority are
/// outside. Returns the votes (> 0 inside) and the distances (0: no hit that way).
pub(super) fn classify(
    lattice: &Lattice,
    lattice_points: &[P3],
    points: &[P3],
    tris: &[[usize; 3]],
) -> (Vec<i32>, Vec<[f64; EDGESHELL]>) {
    // the triangles SOFA's octree holds, in index order, with their (unnormalised) normals
    let surface: Vec<([P3; 3], P3)> = tris
        .iter()
        .filter_map(|t| {
            let v = t.map(|i| points[i]);
            let in_octree = v.iter().flatten().all(|c| c.abs() <= OCTREE_HALF_SIZE);
            in_octree.then(|| (v, cross(sub(v[1], v[0]), sub(v[2], v[0]))))
        })
        .collect();
    let nbp = lattice.len();
    let mut inside = vec![0i32; nbp];
    let mut dist = vec![[0.0f64; EDGESHELL]; nbp];
    // (t, orientation: −1 entering, +1 leaving)
    let mut hits: Vec<(f64, i32)> = Vec::new();
    for p in 0..nbp {
        for e in (0..EDGESHELL).step_by(2) {
            // the rays start at the first point of each lattice line
            let (Some(p1), None) = (lattice.nb(p, e), lattice.nb(p, e + 1)) else {
                continue;
            };
            let origin = lattice_points[p];
            let dir = sub(lattice_points[p1], origin);
            hits.clear();
            for (v, normal) in &surface {
                if let Some(t) = ray_intersection(v[0], v[1], v[2], origin, dir) {
                    hits.push((t, if dot(*normal, dir) < 0.0 { -1 } else { 1 }));
                }
            }
            if hits.is_empty() {
                continue;
            }
            hits.sort_by(|a, b| a.0.total_cmp(&b.0));
            let n = hits.len();
            let mut i = 0;
            let mut d = 0usize;
            let mut q = Some(p);
            while let Some(pq) = q {
                let df = d as f64;
                while i < n && hits[i].0 < df {
                    i += 1;
                }
                // SOFA's vote: beyond the last hit, its opposite; before the first, its sign;
                // between two, the sign of the next one when closer to the previous one, else
                // the opposite of the previous one's
                if i >= n {
                    inside[pq] -= hits[n - 1].1;
                } else if i == 0 {
                    inside[pq] += hits[0].1;
                } else if (df - hits[i - 1].0) < (hits[i].0 - df) {
                    inside[pq] += hits[i].1;
                } else {
                    inside[pq] -= hits[i - 1].1;
                }
                if i < n {
                    dist[pq][e] = hits[i].0 - df;
                }
                if i > 0 {
                    dist[pq][e + 1] = df - hits[i - 1].0;
                }
                q = lattice.nb(pq, e);
                d += 1;
            }
        }
    }
    for v in &mut inside {
        if *v == 0 {
            *v = -1;
        }
    }
    (inside, dist)
}

/// Snap the points too close to the surface onto it (MeshTetraStuffing.cpp, doUpdate with
/// `snapPoints`): a point is violated when a surface crossing on one of its edges lies closer
/// than alpha (in edge units). Outside points are moved first, repeatedly; then the violated
/// inside points. A moved point is on the surface (vote 0) and its edges carry no crossing.
pub(super) fn snap(
    lattice: &Lattice,
    params: &StuffingParams,
    out: &mut [P3],
    inside: &mut [i32],
    dist: &mut [[f64; EDGESHELL]],
    notes: &mut Notes,
) {
    let alpha = |e: usize| {
        if e < 6 {
            params.alpha_long
        } else {
            params.alpha_short
        }
    };
    let nbp = lattice.len();
    let mut violated = vec![false; nbp];
    let mut violated_inside = BTreeSet::new();
    let mut violated_outside = Vec::new();
    for p in 0..nbp {
        let in1 = inside[p] > 0;
        let mut v = false;
        for e in 0..EDGESHELL {
            let Some(p2) = lattice.nb(p, e) else { continue };
            if (inside[p2] > 0) == in1 {
                continue;
            }
            if dist[p][e] != 0.0 && dist[p][e] < alpha(e) {
                v = true;
                break;
            }
        }
        violated[p] = v;
        if v {
            if in1 {
                violated_inside.insert(p);
            } else {
                violated_outside.push(p);
            }
        }
    }
    // the shortest violated edge of `v` toward the neighbours `accept` allows
    let shortest = |v: usize, dist: &[[f64; EDGESHELL]], accept: &dyn Fn(usize) -> bool| {
        let mut min_dist = 0.0;
        let mut min_edge = None;
        for e in 0..EDGESHELL {
            let Some(p2) = lattice.nb(v, e) else { continue };
            if !accept(p2) {
                continue;
            }
            let a = dist[v][e];
            if a == 0.0 || a >= alpha(e) {
                continue;
            }
            let d = a * a * edge_size2(e);
            if min_edge.is_none() || d < min_dist {
                min_edge = Some(e);
                min_dist = d;
            }
        }
        min_edge
    };

    loop {
        let mut nwraps = 0;
        for &v in &violated_outside {
            if inside[v] == 0 {
                continue;
            }
            // SOFA's filter skips the inside neighbours (and the violated ones): an outside
            // point only moves toward an outside or already snapped point
            let accept = |p2: usize| !(inside[p2] > 0 || violated[p2]);
            let Some(e) = shortest(v, dist, &accept) else {
                continue;
            };
            let p2 = lattice.nb(v, e).unwrap_or(v);
            out[v] = towards(out[v], out[p2], dist[v][e]);
            nwraps += 1;
            inside[v] = 0;
            violated[v] = false;
            for e in 0..EDGESHELL {
                dist[v][e] = 0.0;
                let Some(p2) = lattice.nb(v, e) else { continue };
                dist[p2][e ^ 1] = 0.0;
                if violated[p2] && inside[p2] > 0 {
                    // is p2 still violated? (SOFA compares with the alpha of this loop's e,
                    // not of e2)
                    let still = (0..EDGESHELL).any(|e2| {
                        lattice.nb(p2, e2).is_some_and(|p3| inside[p3] < 0)
                            && dist[p2][e2] != 0.0
                            && dist[p2][e2] < alpha(e)
                    });
                    if !still {
                        violated[p2] = false;
                        violated_inside.remove(&p2);
                    }
                }
            }
        }
        if nwraps == 0 {
            break;
        }
    }
    for &v in &violated_inside {
        if inside[v] == 0 {
            notes.push("inside point already snapped", || {
                format!("Inside point {v} already wrapped.")
            });
            continue;
        }
        let accept = |p2: usize| inside[p2] < 0;
        let Some(e) = shortest(v, dist, &accept) else {
            notes.push("inside point without violated edge", || {
                format!("Inside point {v} has no violated edges.")
            });
            continue;
        };
        let p2 = lattice.nb(v, e).unwrap_or(v);
        out[v] = towards(out[v], out[p2], dist[v][e]);
        inside[v] = 0;
        violated[v] = false;
        for e in 0..EDGESHELL {
            dist[v][e] = 0.0;
            if let Some(p2) = lattice.nb(v, e) {
                dist[p2][e ^ 1] = 0.0;
            }
        }
    }
}
