//! MeshTetraStuffing (Sofa/Component/Engine/Generate/.../MeshTetraStuffing.cpp): a tetrahedral
//! volume mesh from a closed surface by isosurface stuffing (F. Labelle and J.R. Shewchuk,
//! SIGGRAPH 2007). A body-centred cubic lattice covers the surface's box; the lattice points are
//! classified inside or outside by votes of rays cast along the lattice lines; optionally, points
//! too close to the surface are snapped onto it and the lattice tetrahedra crossing it are cut;
//! the tetrahedra with an inside vertex are kept and the unused points dropped.
//!
//! SOFA's formulation is followed step by step, quirks included (see the comments citing
//! MeshTetraStuffing.cpp), and its ray–triangle test (sofa/geometry/Triangle.h `rayIntersection`)
//! is reproduced operation by operation. One known difference: SOFA's octree returns the hits of
//! a ray in traversal order before sorting them by distance, where the triangles here are tested
//! in index order; the two only disagree on hits at exactly equal distances with opposite
//! orientations (a ray grazing an edge of the surface).

use std::collections::{BTreeMap, BTreeSet};

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;

type P3 = [f64; 3];

/// Lattice directions around a point: 6 long edges (same grid), then 8 short ones (other grid).
const EDGESHELL: usize = 14;
/// SOFA's TriangleOctree only holds triangles whose box lies in [−800, 800]³ (`CUBE_SIZE`):
/// the others are never hit by a ray.
const OCTREE_HALF_SIZE: f64 = 800.0;
/// Largest lattice (both grids) built: a guard against a cell size far below the surface's size.
const MAX_LATTICE_POINTS: usize = 1 << 23;
/// Diagnostics of one kind reported one by one before they are only counted.
const MAX_REPORTED: usize = 10;

fn sub(a: P3, b: P3) -> P3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// The dot product summed left to right, as sofa::type::Vec does.
fn dot(a: P3, b: P3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: P3, b: P3) -> P3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `a + (b − a)·s`, per component.
fn towards(a: P3, b: P3, s: f64) -> P3 {
    [
        a[0] + (b[0] - a[0]) * s,
        a[1] + (b[1] - a[1]) * s,
        a[2] + (b[2] - a[2]) * s,
    ]
}

/// Six times the signed volume of the tetrahedron (a, b, c, d).
fn vol6(a: P3, b: P3, c: P3, d: P3) -> f64 {
    dot(sub(b, a), cross(sub(c, a), sub(d, a)))
}

/// The ray–triangle test of sofa/geometry/Triangle.h (`rayIntersection`), with its tolerances
/// (machine epsilon, absolute on the determinant) and its order of operations: the ray
/// parameter t of the hit (in units of `dir`, t ≥ ε), both faces counting.
fn ray_intersection(n0: P3, n1: P3, n2: P3, origin: P3, dir: P3) -> Option<f64> {
    let eps = f64::EPSILON;
    let e0 = sub(n1, n0);
    let e1 = sub(n2, n0);
    let pvec = cross(dir, e1);
    let det = dot(e0, pvec);
    if det.abs() <= eps {
        return None;
    }
    let inv_det = 1.0 / det;
    let tvec = sub(origin, n0);
    let u = dot(tvec, pvec) * inv_det;
    if u < 0.0 - eps || u > 1.0 + eps {
        return None;
    }
    let qvec = cross(tvec, e0);
    let v = dot(dir, qvec) * inv_det;
    if v < 0.0 - eps || u + v > 1.0 + eps {
        return None;
    }
    let t = dot(e1, qvec) * inv_det;
    if t < eps || t.is_nan() || v.is_nan() || u.is_nan() {
        return None;
    }
    Some(t)
}

/// Where the lattice lies and how its points are numbered: the g grid (cell corners) first, x
/// fastest, then the h grid (cell centres, one more layer all round).
#[derive(Clone, Debug)]
struct Lattice {
    cellsize: f64,
    gsize: [usize; 3],
    hsize: [usize; 3],
    g0: P3,
    h0: P3,
    /// Index of the first h point (the number of g points).
    ph0: usize,
}

impl Lattice {
    /// The grids around the box `bb` (MeshTetraStuffing.cpp, doUpdate: centred on the box, two
    /// cells of margin beyond the truncated half-extent on each side); Err (with the reason)
    /// when the lattice would be empty or too large.
    fn around(bb: &[P3; 2], cellsize: f64) -> Result<Self, String> {
        let mut gsize = [0usize; 3];
        let mut hsize = [0usize; 3];
        let mut g0 = [0.0; 3];
        let mut h0 = [0.0; 3];
        for c in 0..3 {
            let p0 = (bb[0][c] + bb[1][c]) / 2.0;
            let below = (p0 - bb[0][c]) / cellsize;
            let above = (bb[1][c] - p0) / cellsize;
            if !(below.abs() < 1e7 && above.abs() < 1e7) {
                return Err(format!(
                    "the cell size {cellsize} is too small for the box {:?}–{:?}: the lattice would be too large",
                    bb[0], bb[1]
                ));
            }
            // int() truncates toward zero, as `as` does
            let c0 = -((below as i64) + 2);
            let c1 = (above as i64) + 2;
            let n = c1 - c0 + 1;
            if n < 1 {
                return Err(format!(
                    "vbbox is inverted along axis {c} ({} > {}): no lattice",
                    bb[0][c], bb[1][c]
                ));
            }
            gsize[c] = n as usize;
            g0[c] = p0 + c0 as f64 * cellsize;
            hsize[c] = gsize[c] + 1;
            h0[c] = g0[c] - cellsize / 2.0;
        }
        let ph0 = gsize[0] * gsize[1] * gsize[2];
        let total = ph0 + hsize[0] * hsize[1] * hsize[2];
        if total > MAX_LATTICE_POINTS {
            return Err(format!(
                "the cell size {cellsize} gives a lattice of {total} points (more than {MAX_LATTICE_POINTS}): use a larger size"
            ));
        }
        Ok(Lattice {
            cellsize,
            gsize,
            hsize,
            g0,
            h0,
            ph0,
        })
    }

    fn len(&self) -> usize {
        self.ph0 + self.hsize[0] * self.hsize[1] * self.hsize[2]
    }

    /// The positions of all lattice points, each coordinate computed as origin + index × size.
    fn positions(&self) -> Vec<P3> {
        let mut out = Vec::with_capacity(self.len());
        for (size, origin) in [(self.gsize, self.g0), (self.hsize, self.h0)] {
            for z in 0..size[2] {
                for y in 0..size[1] {
                    for x in 0..size[0] {
                        out.push([
                            origin[0] + x as f64 * self.cellsize,
                            origin[1] + y as f64 * self.cellsize,
                            origin[2] + z as f64 * self.cellsize,
                        ]);
                    }
                }
            }
        }
        out
    }

    /// The neighbour of point `p` along lattice direction `e` (SOFA's `getEdgePoint2`): for
    /// e < 6 the next point of the same grid along axis e/2 (backwards for even e), for e ≥ 6
    /// the point of the other grid at offset ±½ cell per axis given by the bits of e − 6.
    /// Direction e ^ 1 is always the opposite of e.
    fn nb(&self, p: usize, e: usize) -> Option<usize> {
        let on_g = p < self.ph0;
        let (size, q) = if on_g {
            (self.gsize, p)
        } else {
            (self.hsize, p - self.ph0)
        };
        let mut c = [
            (q % size[0]) as i64,
            ((q / size[0]) % size[1]) as i64,
            (q / (size[0] * size[1])) as i64,
        ];
        let index = |c: [i64; 3], size: [usize; 3]| -> Option<usize> {
            for i in 0..3 {
                if c[i] < 0 || c[i] >= size[i] as i64 {
                    return None;
                }
            }
            Some(c[0] as usize + size[0] * (c[1] as usize + size[1] * c[2] as usize))
        };
        if e < 6 {
            c[e >> 1] += if e & 1 == 1 { 1 } else { -1 };
            let i = index(c, size)?;
            return Some(if on_g { i } else { self.ph0 + i });
        }
        let k = (e - 6) as i64;
        let bits = [k & 1, ((k >> 1) ^ k) & 1, ((k >> 2) ^ k) & 1];
        if on_g {
            // the h grid is one larger: never out of range
            let h = [c[0] + bits[0], c[1] + bits[1], c[2] + bits[2]];
            index(h, self.hsize).map(|i| self.ph0 + i)
        } else {
            let g = [c[0] + bits[0] - 1, c[1] + bits[1] - 1, c[2] + bits[2] - 1];
            index(g, self.gsize)
        }
    }
}

/// The squared length of a lattice edge in (cell/2)² units (SOFA's `getEdgeSize2`).
fn edge_size2(e: usize) -> f64 {
    if e < 6 {
        4.0
    } else {
        3.0
    }
}

/// The parameters of the stuffing (the Data of the same names).
#[derive(Clone, Debug)]
pub struct StuffingParams {
    /// The box to mesh; replaced by the input's box grown by 1 % when its x range is empty.
    pub vbbox: [P3; 2],
    /// The cell size, or when negative the number of cells along the box's largest side.
    pub size: f64,
    pub alpha_long: f64,
    pub alpha_short: f64,
    pub snap_points: bool,
    pub split_tetrahedra: bool,
}

impl Default for StuffingParams {
    /// SOFA's defaults.
    fn default() -> Self {
        StuffingParams {
            vbbox: [[0.0; 3]; 2],
            size: -8.0,
            alpha_long: 0.24999,
            alpha_short: 0.42978,
            snap_points: false,
            split_tetrahedra: false,
        }
    }
}

/// What the stuffing produced, with the problems SOFA reports along the way (none of them stops
/// it).
#[derive(Clone, Debug, Default)]
pub struct Stuffing {
    /// The box actually meshed (written back to `vbbox`).
    pub bbox: [P3; 2],
    pub points: Vec<P3>,
    /// Positively oriented tetrahedra.
    pub tetrahedra: Vec<[u32; 4]>,
    pub warnings: Vec<String>,
}

/// Collects messages, reporting only the first few of each kind.
#[derive(Default)]
struct Notes {
    kinds: BTreeMap<&'static str, usize>,
    messages: Vec<String>,
}

impl Notes {
    fn push(&mut self, kind: &'static str, message: impl FnOnce() -> String) {
        let n = self.kinds.entry(kind).or_insert(0);
        *n += 1;
        if *n <= MAX_REPORTED {
            self.messages.push(message());
        }
    }

    fn finish(mut self) -> Vec<String> {
        for (kind, n) in &self.kinds {
            if *n > MAX_REPORTED {
                self.messages.push(format!(
                    "{kind}: {n} occurrences in all (the first {MAX_REPORTED} shown)"
                ));
            }
        }
        self.messages
    }
}

/// Build the volume mesh of the closed surface (`points`, `triangles` and `quads`, the quads
/// split into (0,1,2), (0,2,3) after the triangles). Err (with the reason) on an empty or
/// inconsistent input or a degenerate cell size.
pub fn stuff(
    points: &[P3],
    triangles: &[[u32; 3]],
    quads: &[[u32; 4]],
    params: &StuffingParams,
) -> Result<Stuffing, String> {
    if points.is_empty() || (triangles.is_empty() && quads.is_empty()) {
        return Err(
            "Empty input mesh. Use data dependency to link them to a loaded Topology or MeshLoader"
                .into(),
        );
    }
    let n = points.len();
    if let Some(i) = points.iter().position(|p| p.iter().any(|c| !c.is_finite())) {
        return Err(format!("input point {i} is not finite: {:?}", points[i]));
    }
    let mut tris: Vec<[usize; 3]> = Vec::with_capacity(triangles.len() + 2 * quads.len());
    for (k, t) in triangles.iter().enumerate() {
        if let Some(&i) = t.iter().find(|&&i| i as usize >= n) {
            return Err(format!(
                "input triangle {k} uses point {i}, but there are {n} input points"
            ));
        }
        tris.push(t.map(|i| i as usize));
    }
    for (k, q) in quads.iter().enumerate() {
        if let Some(&i) = q.iter().find(|&&i| i as usize >= n) {
            return Err(format!(
                "input quad {k} uses point {i}, but there are {n} input points"
            ));
        }
        let q = q.map(|i| i as usize);
        tris.push([q[0], q[1], q[2]]);
        tris.push([q[0], q[2], q[3]]);
    }
    if !params.size.is_finite() || params.size == 0.0 {
        return Err(format!(
            "size must be a non-zero number (the cell size, or minus the number of cells along the box's largest side), not {}",
            params.size
        ));
    }

    // the input's box (every point counts, used or not; SOFA's else-if is kept)
    let mut lo = points[0];
    let mut hi = points[0];
    for p in &points[1..] {
        for c in 0..3 {
            if p[c] < lo[c] {
                lo[c] = p[c];
            } else if p[c] > hi[c] {
                hi[c] = p[c];
            }
        }
    }
    let mut bb = params.vbbox;
    // only the x range decides whether the given box is used
    if bb[0][0] >= bb[1][0] {
        for c in 0..3 {
            bb[0][c] = lo[c] - (hi[c] - lo[c]) * 0.01;
            bb[1][c] = hi[c] + (hi[c] - lo[c]) * 0.01;
        }
    }
    if bb.iter().flatten().any(|c| !c.is_finite()) {
        return Err(format!("vbbox is not finite: {bb:?}"));
    }
    let mut cellsize = params.size;
    if cellsize < 0.0 {
        let b = sub(bb[1], bb[0]);
        let mut bsize = b[0];
        if b[1] > bsize {
            bsize = b[1];
        }
        if b[2] > bsize {
            bsize = b[2];
        }
        cellsize = bsize / -cellsize;
    }
    if !(cellsize > 0.0 && cellsize.is_finite()) {
        return Err(format!(
            "degenerate cell size {cellsize} (size {}, box {:?}–{:?}): the surface has no extent",
            params.size, bb[0], bb[1]
        ));
    }
    let lattice = Lattice::around(&bb, cellsize)?;

    let mut notes = Notes::default();
    let mut out = lattice.positions();
    let nbp = out.len();
    let (mut inside, mut dist) = classify(&lattice, &out, points, &tris);
    if params.snap_points {
        snap(
            &lattice,
            params,
            &mut out,
            &mut inside,
            &mut dist,
            &mut notes,
        );
    }

    // cut points on every lattice edge from an outside point to an inside one, numbered by
    // (outside point, direction)
    let mut split_points = BTreeMap::new();
    if params.split_tetrahedra {
        for p in 0..nbp {
            if inside[p] >= 0 {
                continue;
            }
            for e in 0..EDGESHELL {
                let Some(p2) = lattice.nb(p, e) else { continue };
                if inside[p2] <= 0 {
                    continue;
                }
                split_points.insert((p, p2), out.len());
                out.push(towards(out[p], out[p2], dist[p][e]));
            }
        }
    }

    let mut builder = Builder {
        ph0: lattice.ph0,
        split: params.split_tetrahedra,
        points: out,
        inside,
        split_points,
        tetrahedra: Vec::new(),
        notes,
    };
    builder.lattice_tetrahedra(&lattice);
    let Builder {
        points: out,
        tetrahedra,
        mut notes,
        ..
    } = builder;

    // drop the unused points, keeping the order
    let mut new_id: Vec<Option<u32>> = vec![None; out.len()];
    let mut used = vec![false; out.len()];
    for t in &tetrahedra {
        for &v in t {
            used[v] = true;
        }
    }
    let mut final_points = Vec::new();
    for (p, u) in used.iter().enumerate() {
        if *u {
            new_id[p] = Some(final_points.len() as u32);
            final_points.push(out[p]);
        }
    }
    let mut final_tetrahedra: Vec<[u32; 4]> = tetrahedra
        .iter()
        .map(|t| t.map(|v| new_id[v].unwrap_or(0)))
        .collect();
    check_final(&final_points, &mut final_tetrahedra, &mut notes);

    Ok(Stuffing {
        bbox: bb,
        points: final_points,
        tetrahedra: final_tetrahedra,
        warnings: notes.finish(),
    })
}

/// Inside/outside votes and surface distances along the lattice lines (MeshTetraStuffing.cpp,
/// doUpdate): a ray is cast along each lattice line from its last point; each point of the line
/// votes by the orientation of a neighbouring hit, and records the distance (in edge units) to
/// the nearest hit ahead (direction e) and behind (e + 1). Points without a majority are
/// outside. Returns the votes (> 0 inside) and the distances (0: no hit that way).
fn classify(
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
fn snap(
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

/// The tetrahedra, from the lattice ones (MeshTetraStuffing.cpp: addTetra, addFinalTetra,
/// needFlip, flipDiag, getSplitPoint).
struct Builder {
    ph0: usize,
    split: bool,
    points: Vec<P3>,
    /// > 0 inside, < 0 outside, 0 on the surface (snapped).
    inside: Vec<i32>,
    /// (outside point, inside point) → cut point.
    split_points: BTreeMap<(usize, usize), usize>,
    tetrahedra: Vec<[usize; 4]>,
    notes: Notes,
}

impl Builder {
    /// The four BCC tetrahedra around each g-grid edge, edges along x, y then z of each g point.
    fn lattice_tetrahedra(&mut self, l: &Lattice) {
        let [gx, gy, gz] = l.gsize;
        let hx = l.hsize[0];
        let gxy = gx * gy;
        let hxy = hx * l.hsize[1];
        let mut p = 0;
        let mut ph = l.ph0;
        for z in 0..gz {
            for y in 0..gy {
                for x in 0..gx {
                    let shells: [(bool, usize, [usize; 4]); 3] = [
                        (x > 0, 1, [ph, ph + hx, ph + hx + hxy, ph + hxy]),
                        (y > 0, gx, [ph, ph + hxy, ph + 1 + hxy, ph + 1]),
                        (z > 0, gxy, [ph, ph + 1, ph + 1 + hx, ph + hx]),
                    ];
                    for (present, step, shell) in shells {
                        if !present {
                            continue;
                        }
                        for i in 0..4 {
                            self.add_tetra([p, p - step, shell[(i + 1) % 4], shell[i]]);
                        }
                    }
                    p += 1;
                    ph += 1;
                }
                ph += 1;
            }
            ph += hx;
        }
    }

    fn vol6(&self, t: [usize; 4]) -> f64 {
        vol6(
            self.points[t[0]],
            self.points[t[1]],
            self.points[t[2]],
            self.points[t[3]],
        )
    }

    /// One lattice tetrahedron: dropped when outside, kept whole when no vertex is outside (or
    /// without splitting), else cut along the surface.
    fn add_tetra(&mut self, mut p: [usize; 4]) {
        if self.vol6(p) < 0.0 {
            p.swap(2, 3);
        }
        let sign = p.map(|v| self.inside[v]);
        let mut pneg = Vec::with_capacity(4);
        let mut ppos = Vec::with_capacity(4);
        let mut pzero = Vec::with_capacity(4);
        for (v, s) in p.iter().zip(sign) {
            if s < 0 {
                pneg.push(*v);
            } else if s > 0 {
                ppos.push(*v);
            } else {
                pzero.push(*v);
            }
        }
        let (npos, nneg) = (ppos.len(), pneg.len());
        if npos == 0 && nneg > 0 {
            return;
        }
        if nneg == 0 || !self.split {
            self.add_final(p, false);
        } else if npos == 1 {
            // one tetrahedron: the outside vertices move to the cut points
            let mut q = p;
            for k in 0..4 {
                if sign[k] < 0 {
                    q[k] = self.split_point(p[k], ppos[0]);
                }
            }
            self.add_final(q, false);
        } else if npos == 2 && nneg == 1 {
            let p0 = pzero[0];
            let cut1 = self.split_point(pneg[0], ppos[0]);
            let cut2 = self.split_point(pneg[0], ppos[1]);
            let flip_d = self.flip_diag(ppos[0], ppos[1], cut2, cut1, pneg[0]);
            let flip_t = need_flip([p0, ppos[0], ppos[1], pneg[0]], p);
            if !flip_d {
                self.add_final([p0, ppos[0], ppos[1], cut2], flip_t);
                self.add_final([p0, ppos[0], cut2, cut1], flip_t);
            } else {
                self.add_final([p0, ppos[0], ppos[1], cut1], flip_t);
                self.add_final([p0, ppos[1], cut2, cut1], flip_t);
            }
        } else if npos == 2 && nneg == 2 {
            let cut1 = self.split_point(pneg[0], ppos[0]);
            let cut2 = self.split_point(pneg[0], ppos[1]);
            let cut3 = self.split_point(pneg[1], ppos[0]);
            let cut4 = self.split_point(pneg[1], ppos[1]);
            let flip_a = self.flip_diag(ppos[0], ppos[1], cut2, cut1, pneg[0]);
            let flip_b = self.flip_diag(ppos[0], ppos[1], cut4, cut3, pneg[1]);
            let flip_t = need_flip([ppos[0], ppos[1], pneg[0], pneg[1]], p);
            if !flip_a && flip_b {
                self.add_final([ppos[0], ppos[1], cut2, cut3], flip_t);
                self.add_final([ppos[0], cut2, cut1, cut3], flip_t);
                self.add_final([ppos[1], cut2, cut3, cut4], flip_t);
            } else if flip_a && !flip_b {
                self.add_final([ppos[0], ppos[1], cut1, cut4], flip_t);
                self.add_final([ppos[1], cut1, cut4, cut2], flip_t);
                self.add_final([ppos[0], cut1, cut3, cut4], flip_t);
            } else {
                // as SOFA: nothing is emitted (a hole in the mesh)
                self.notes.push("invalid tetrahedron split", || {
                    format!(
                        "Invalid tetra split: flipA = {flip_a}   flipB = {flip_b} (lattice tetrahedron {p:?} dropped)"
                    )
                });
            }
        } else {
            // three inside vertices, one outside
            let n0 = pneg[0];
            let cut1 = self.split_point(n0, ppos[0]);
            let cut2 = self.split_point(n0, ppos[1]);
            let cut3 = self.split_point(n0, ppos[2]);
            let f1 = self.flip_diag(ppos[0], ppos[1], cut2, cut1, n0);
            let f2 = self.flip_diag(ppos[1], ppos[2], cut3, cut2, n0);
            let mut f3 = self.flip_diag(ppos[2], ppos[0], cut1, cut3, n0);
            if f1 == f2 && f2 == f3 {
                self.notes.push("invalid tetrahedron split", || {
                    format!("Invalid tetra split (lattice tetrahedron {p:?})")
                });
                f3 = !f1;
            }
            let pp0 = if f1 && !f2 {
                ppos[1]
            } else if f2 && !f3 {
                ppos[2]
            } else {
                ppos[0]
            };
            let pc0 = if !f1 && f2 {
                cut2
            } else if !f2 && f3 {
                cut3
            } else {
                cut1
            };
            let flip_t = need_flip([n0, ppos[0], ppos[1], ppos[2]], p);
            self.add_final([pp0, cut1, cut3, cut2], flip_t);
            self.add_final([pc0, ppos[0], ppos[1], ppos[2]], flip_t);
            if f1 == f2 {
                let other = if pp0 == ppos[0] { ppos[2] } else { ppos[0] };
                let flip = need_flip([ppos[1], n0, pp0, other], p);
                self.add_final([ppos[1], cut2, pp0, pc0], flip);
            } else if f2 == f3 {
                let other = if pp0 == ppos[0] { ppos[1] } else { ppos[0] };
                let flip = need_flip([ppos[2], n0, pp0, other], p);
                self.add_final([ppos[2], cut3, pp0, pc0], flip);
            } else {
                let other = if pp0 == ppos[1] { ppos[2] } else { ppos[1] };
                let flip = need_flip([ppos[0], n0, pp0, other], p);
                self.add_final([ppos[0], cut1, pp0, pc0], flip);
            }
        }
    }

    /// Output a tetrahedron, its last two vertices exchanged when `flip` says so and again when
    /// it is then inverted.
    fn add_final(&mut self, mut t: [usize; 4], flip: bool) {
        if flip {
            t.swap(2, 3);
        }
        if self.vol6(t) < 0.0 {
            t.swap(2, 3);
        }
        self.tetrahedra.push(t);
    }

    /// Whether the quad (a, b, c, d) cut from the lattice tetrahedron is split along the
    /// diagonal bd rather than ac: a and b are inside, c and d the cut points on e–b and e–a,
    /// e outside. When e–a or e–b is a long edge (same grid), the diagonal ends at its cut
    /// point; else (ab is the long edge) the parity of the coordinates of a greater than c's
    /// decides.
    fn flip_diag(&self, a: usize, b: usize, c: usize, _d: usize, e: usize) -> bool {
        let g = |v: usize| v < self.ph0;
        if g(e) {
            if g(a) {
                return true;
            }
            if g(b) {
                return false;
            }
        } else {
            if !g(a) {
                return true;
            }
            if !g(b) {
                return false;
            }
        }
        // ab is a long edge
        let nsup = (0..3)
            .filter(|&i| self.points[a][i] > self.points[c][i])
            .count();
        (nsup & 1) != usize::from(g(a))
    }

    /// The cut point on the edge between `from` and `to` (either way round); `from` itself,
    /// reported, when the edge was not cut.
    fn split_point(&mut self, from: usize, to: usize) -> usize {
        if let Some(&c) = self
            .split_points
            .get(&(from, to))
            .or_else(|| self.split_points.get(&(to, from)))
        {
            return c;
        }
        self.notes.push("cut point not found", || {
            format!("Cut point between {from} and {to} not found.")
        });
        from
    }
}

/// Whether the tetrahedron `p` (vertices of the lattice tetrahedron `q`, in some order) has the
/// opposite orientation to `q`, by index logic alone (SOFA's `needFlip`): both are rotated to
/// start with their smallest index (each rotation of four is odd), then the last three rotated
/// to put the second smallest second (even), and the third vertices compared.
fn need_flip(p: [usize; 4], q: [usize; 4]) -> bool {
    let mut flip = false;
    let lead = |mut t: [usize; 4], flip: &mut bool| {
        while t[0] > t[1] || t[0] > t[2] || t[0] > t[3] {
            t.rotate_left(1);
            *flip = !*flip;
        }
        while t[1] > t[2] || t[1] > t[3] {
            t[1..].rotate_left(1);
        }
        t
    };
    let p = lead(p, &mut flip);
    let q = lead(q, &mut flip);
    if p[2] == q[3] {
        flip = !flip;
    }
    flip
}

/// SOFA's last pass: inverted tetrahedra are turned over (this cannot happen after
/// `add_final`), and faces found twice with the same orientation are reported.
fn check_final(points: &[P3], tetrahedra: &mut [[u32; 4]], notes: &mut Notes) {
    let mut faces = BTreeSet::new();
    for (k, t) in tetrahedra.iter_mut().enumerate() {
        let p = t.map(|v| points[v as usize]);
        if vol6(p[0], p[1], p[2], p[3]) < 0.0 {
            notes.push("inverted tetrahedron", || format!("tetra {k} is inverted."));
            t.swap(2, 3);
        }
        for i in 0..4 {
            // the face opposite vertex i, oriented outward, in SOFA's rotation
            let mut i0 = 0;
            if t[(i + 2) % 4] < t[(i + i0) % 4] {
                i0 = 1;
            }
            if t[(i + 3) % 4] < t[(i + i0) % 4] {
                i0 = 2;
            }
            let mut tr = [
                t[(i + 1 + (i0 % 3)) % 4],
                t[(i + 1 + ((i0 + 1) % 3)) % 4],
                t[(i + 1 + ((i0 + 2) % 3)) % 4],
            ];
            if i % 2 == 1 {
                tr.swap(1, 2);
            }
            if !faces.insert(tr) {
                notes.push("duplicate triangle", || {
                    format!("Duplicate triangle {tr:?} in tetra {k} : {t:?}")
                });
            }
        }
    }
}

/// SOFA's MeshTetraStuffing: computes its outputs once, at init (SOFA registers no outputs, so
/// the engine is never updated afterwards), and writes the box it used back to `vbbox`. `draw`
/// (SOFA's debug drawing of rays, hits and snapped points) is accepted and not drawn.
#[derive(Clone)]
pub struct MeshTetraStuffing {
    data: DataTable,
}

impl Default for MeshTetraStuffing {
    fn default() -> Self {
        Self::new()
    }
}

impl MeshTetraStuffing {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with(
                "vbbox",
                DataKind::Vector(6),
                "0 0 0 0 0 0",
                "BBox to restrict the volume to",
            )
            .with(
                "size",
                DataKind::Real,
                "-8",
                "Size of the generate tetrahedra. If negative, number of grid cells in the largest bbox dimension",
            )
            .with(
                "inputPoints",
                DataKind::Reals(3),
                "",
                "Input surface mesh points",
            )
            .with(
                "inputTriangles",
                DataKind::Ints(3),
                "",
                "Input surface mesh triangles",
            )
            .with(
                "inputQuads",
                DataKind::Ints(4),
                "",
                "Input surface mesh quads",
            )
            .output(
                "outputPoints",
                DataKind::Reals(3),
                "Output volume mesh points",
            )
            .output(
                "outputTetrahedra",
                DataKind::Ints(4),
                "Output volume mesh tetrahedra",
            )
            .alias(&["outputTetras"])
            .with(
                "alphaLong",
                DataKind::Real,
                "0.24999",
                "Minimum alpha values on long edges when snapping points",
            )
            .with(
                "alphaShort",
                DataKind::Real,
                "0.42978",
                "Minimum alpha values on short edges when snapping points",
            )
            .with(
                "snapPoints",
                DataKind::Bool,
                "0",
                "Snap points to the surface if intersections on edges are closed to given alpha values",
            )
            .with(
                "splitTetrahedra",
                DataKind::Bool,
                "0",
                "Split tetrahedra crossing the surface",
            )
            .alias(&["splitTetras"])
            .with(
                "draw",
                DataKind::Bool,
                "0",
                "Activate rendering of internal datasets",
            );
        MeshTetraStuffing { data }
    }

    fn params(&self) -> StuffingParams {
        let d = &self.data;
        let b = d.reals("vbbox");
        let vbbox = if b.len() == 6 {
            [[b[0], b[1], b[2]], [b[3], b[4], b[5]]]
        } else {
            [[0.0; 3]; 2]
        };
        StuffingParams {
            vbbox,
            size: d.real("size"),
            alpha_long: d.real("alphaLong"),
            alpha_short: d.real("alphaShort"),
            snap_points: d.bool("snapPoints"),
            split_tetrahedra: d.bool("splitTetrahedra"),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let d = &self.data;
        let points: Vec<P3> = d
            .reals("inputPoints")
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        let triangles: Vec<[u32; 3]> = d
            .ints("inputTriangles")
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        let quads: Vec<[u32; 4]> = d
            .ints("inputQuads")
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect();
        let result = match stuff(&points, &triangles, &quads, &self.params()) {
            Ok(r) => r,
            Err(msg) => {
                ctx.error(msg);
                return;
            }
        };
        for w in &result.warnings {
            ctx.warn(w.clone());
        }
        if result.tetrahedra.is_empty() {
            ctx.warn("no tetrahedron: the surface encloses no lattice point (is it closed? try a smaller size)");
        }
        let bbox: Vec<f64> = result.bbox.iter().flatten().copied().collect();
        let points: Vec<f64> = result.points.iter().flatten().copied().collect();
        let tetrahedra: Vec<u32> = result.tetrahedra.iter().flatten().copied().collect();
        let _ = self.data.set_value("vbbox", Value::Reals(bbox));
        let _ = self.data.set_value("outputPoints", Value::Reals(points));
        let _ = self
            .data
            .set_value("outputTetrahedra", Value::Ints(tetrahedra));
    }
}

impl_component!(MeshTetraStuffing, "MeshTetraStuffing", init);

impl Engine for MeshTetraStuffing {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::Component;
    use canape_core::diag::{Diagnostics, Severity};
    use canape_core::scene::{AnyComponent, Scene};
    use std::path::PathBuf;

    /// The unit cube's surface, 12 outward triangles.
    fn cube() -> (Vec<P3>, Vec<[u32; 3]>) {
        let p = vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
            [1.0, 1.0, 1.0],
            [0.0, 1.0, 1.0],
        ];
        let t = vec![
            [0, 2, 1],
            [0, 3, 2],
            [4, 5, 6],
            [4, 6, 7],
            [0, 1, 5],
            [0, 5, 4],
            [3, 7, 6],
            [3, 6, 2],
            [0, 4, 7],
            [0, 7, 3],
            [1, 2, 6],
            [1, 6, 5],
        ];
        (p, t)
    }

    /// FNV-1a (64 bits) of the points (f64, little endian) followed by the tetrahedra (u32).
    fn checksum(s: &Stuffing) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for b in bytes {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for p in &s.points {
            for c in p {
                eat(&c.to_le_bytes());
            }
        }
        for t in &s.tetrahedra {
            for v in t {
                eat(&v.to_le_bytes());
            }
        }
        h
    }

    fn assert_positive(s: &Stuffing) {
        for (k, t) in s.tetrahedra.iter().enumerate() {
            let p = t.map(|v| s.points[v as usize]);
            assert!(
                vol6(p[0], p[1], p[2], p[3]) > 0.0,
                "tetrahedron {k} {t:?} is not positive"
            );
        }
        assert!(s
            .tetrahedra
            .iter()
            .flatten()
            .all(|&v| (v as usize) < s.points.len()));
    }

    // The expected numbers below come from the line-by-line Python port of SOFA's doUpdate
    // (brute-force ray cast), run on the same inputs.

    #[test]
    fn cube_with_default_settings_matches_the_reference() {
        let (p, t) = cube();
        let s = stuff(&p, &t, &[], &StuffingParams::default()).unwrap();
        assert_eq!((s.points.len(), s.tetrahedra.len()), (1625, 6912));
        assert_eq!(
            s.tetrahedra[..3],
            [[1, 0, 802, 729], [1, 0, 793, 802], [2, 1, 803, 730]]
        );
        assert_eq!(s.points[0], [-0.010000000000000009; 3]);
        assert_eq!(
            s.points[1],
            [0.1175, -0.010000000000000009, -0.010000000000000009]
        );
        assert_eq!(checksum(&s), 0xc8976d720097feab);
        assert_eq!(s.bbox, [[-0.01; 3], [1.01; 3]]);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_positive(&s);
    }

    #[test]
    fn cube_snapped_and_split_matches_the_reference() {
        let (p, t) = cube();
        let params = StuffingParams {
            snap_points: true,
            split_tetrahedra: true,
            ..StuffingParams::default()
        };
        let s = stuff(&p, &t, &[], &params).unwrap();
        assert_eq!((s.points.len(), s.tetrahedra.len()), (2885, 10608));
        assert_eq!(
            s.tetrahedra[..2],
            [[857, 855, 343, 2501], [857, 855, 2565, 343]]
        );
        assert_eq!(s.points[0], [0.1175; 3]);
        assert_eq!(checksum(&s), 0x48753ac748c3a82f);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_positive(&s);
    }

    #[test]
    fn coarse_cube_exercises_snapping_and_matches_the_reference() {
        // 56 inside points snapped, 54 cut points
        let (p, t) = cube();
        let params = StuffingParams {
            size: 0.3,
            alpha_long: 0.3,
            alpha_short: 0.4,
            snap_points: true,
            split_tetrahedra: true,
            ..StuffingParams::default()
        };
        let s = stuff(&p, &t, &[], &params).unwrap();
        assert_eq!((s.points.len(), s.tetrahedra.len()), (145, 432));
        assert_eq!(
            s.tetrahedra[..3],
            [[0, 103, 31, 27], [0, 103, 47, 31], [0, 103, 43, 47]]
        );
        assert_eq!(s.points[1], [0.5, 0.20000000000000007, 0.20000000000000007]);
        assert_eq!(checksum(&s), 0x22dbe1b1eede59ca);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_positive(&s);
        // the cube is filled, less what its sharp edges and corners lose to the cuts
        let v: f64 = s
            .tetrahedra
            .iter()
            .map(|t| {
                let p = t.map(|v| s.points[v as usize]);
                vol6(p[0], p[1], p[2], p[3]) / 6.0
            })
            .sum();
        assert!(v > 0.9 && v <= 1.0, "volume {v}");
    }

    #[test]
    fn neighbours_are_symmetric_and_consistent() {
        let l = Lattice::around(&[[0.0; 3], [1.0, 0.6, 0.3]], 0.25).unwrap();
        let pos = l.positions();
        for p in 0..l.len() {
            for e in 0..EDGESHELL {
                if let Some(q) = l.nb(p, e) {
                    assert_eq!(l.nb(q, e ^ 1), Some(p), "p {p} e {e}");
                    let d = sub(pos[q], pos[p]);
                    let len2 = dot(d, d) / (l.cellsize * l.cellsize / 4.0);
                    assert!((len2 - edge_size2(e)).abs() < 1e-9);
                }
            }
            // a g point always has its 8 h neighbours
            if p < l.ph0 {
                assert!((6..EDGESHELL).all(|e| l.nb(p, e).is_some()));
            }
        }
    }

    #[test]
    fn need_flip_follows_the_parity_of_the_permutation() {
        assert!(!need_flip([0, 1, 2, 3], [0, 1, 2, 3]));
        assert!(need_flip([0, 1, 3, 2], [0, 1, 2, 3]));
        assert!(need_flip([1, 2, 3, 0], [0, 1, 2, 3]));
        assert!(!need_flip([2, 3, 0, 1], [0, 1, 2, 3]));
        assert!(need_flip([7, 5, 9, 6], [6, 7, 5, 9]));
    }

    #[test]
    fn ray_test_counts_edges_and_excludes_the_origin() {
        let (a, b, c) = ([0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]);
        let up = [0.0, 0.0, 0.5];
        assert_eq!(ray_intersection(a, b, c, [0.25, 0.25, 0.0], up), Some(2.0));
        // on the hypotenuse (u + v = 1) and on a vertex
        assert_eq!(ray_intersection(a, b, c, [0.5, 0.5, 0.0], up), Some(2.0));
        assert_eq!(ray_intersection(a, b, c, [0.0, 0.0, 0.0], up), Some(2.0));
        assert_eq!(ray_intersection(a, b, c, [0.6, 0.5, 0.0], up), None);
        // behind, from the plane itself, parallel
        assert_eq!(ray_intersection(a, b, c, [0.25, 0.25, 2.0], up), None);
        assert_eq!(ray_intersection(a, b, c, [0.25, 0.25, 1.0], up), None);
        assert_eq!(
            ray_intersection(a, b, c, [0.25, 0.25, 0.0], [1.0, 0.0, 0.0]),
            None
        );
    }

    /// Run the component through its InitContext.
    fn init(e: &mut MeshTetraStuffing) -> Diagnostics {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let id = scene.add_component(
            root,
            "stuffing",
            AnyComponent::Engine(Box::new(e.clone())),
            None,
        );
        let mut diags = Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        e.init_impl(&mut ctx);
        diags
    }

    fn cube_component() -> MeshTetraStuffing {
        let (p, t) = cube();
        let mut e = MeshTetraStuffing::new();
        let d = e.data_mut();
        d.set_value(
            "inputPoints",
            Value::Reals(p.iter().flatten().copied().collect()),
        )
        .unwrap();
        d.set_value(
            "inputTriangles",
            Value::Ints(t.iter().flatten().copied().collect()),
        )
        .unwrap();
        e
    }

    #[test]
    fn component_writes_the_outputs_and_the_box() {
        let mut e = cube_component();
        e.data_mut().set_str("splitTetras", "1").unwrap();
        e.data_mut().set_str("snapPoints", "true").unwrap();
        let diags = init(&mut e);
        assert!(diags.is_empty(), "{diags:?}");
        let d = e.data();
        assert_eq!(d.reals("outputPoints").len(), 3 * 2885);
        assert_eq!(d.ints("outputTetras").len(), 4 * 10608);
        assert_eq!(d.reals("vbbox"), &[-0.01, -0.01, -0.01, 1.01, 1.01, 1.01]);
        assert!(d.field("outputTetrahedra").unwrap().output);
    }

    #[test]
    fn quads_are_split_into_two_triangles() {
        // the cube as 6 quads gives the triangles of `cube()` (each quad (a,b,c,d) → abc, acd)
        let (p, _) = cube();
        let q = [
            [0, 3, 2, 1],
            [4, 5, 6, 7],
            [0, 1, 5, 4],
            [3, 7, 6, 2],
            [0, 4, 7, 3],
            [1, 2, 6, 5],
        ];
        let s = stuff(&p, &[], &q, &StuffingParams::default()).unwrap();
        assert_eq!(checksum(&s), 0xc8976d720097feab);
    }

    #[test]
    fn bad_input_is_reported_without_panicking() {
        let error = |e: &mut MeshTetraStuffing| {
            let diags = init(e);
            assert!(
                diags.iter().any(|d| d.severity == Severity::Error),
                "{diags:?}"
            );
            assert!(e.data().reals("outputPoints").is_empty());
            assert!(e.data().ints("outputTetrahedra").is_empty());
        };
        // no triangles
        let mut e = cube_component();
        e.data_mut()
            .set_value("inputTriangles", Value::Ints(vec![]))
            .unwrap();
        error(&mut e);
        // no points at all
        error(&mut MeshTetraStuffing::new());
        // zero size
        let mut e = cube_component();
        e.data_mut().set_str("size", "0").unwrap();
        error(&mut e);
        // a size far too small for the box
        let mut e = cube_component();
        e.data_mut().set_str("size", "1e-6").unwrap();
        error(&mut e);
        // all points at one place: no extent
        let mut e = cube_component();
        e.data_mut()
            .set_value("inputPoints", Value::Reals(vec![0.5; 24]))
            .unwrap();
        error(&mut e);
        // an index beyond the points
        let mut e = cube_component();
        e.data_mut()
            .set_value("inputTriangles", Value::Ints(vec![0, 1, 8]))
            .unwrap();
        error(&mut e);
        // an inverted box along y
        let mut e = cube_component();
        e.data_mut().set_str("vbbox", "0 5 0 1 -5 1").unwrap();
        e.data_mut().set_str("size", "0.1").unwrap();
        error(&mut e);
        // an open surface (one triangle) gives a warning and no tetrahedron, not an error
        let mut e = cube_component();
        e.data_mut()
            .set_value("inputTriangles", Value::Ints(vec![0, 1, 2]))
            .unwrap();
        let diags = init(&mut e);
        assert!(!diags.has_errors(), "{diags:?}");
    }

    /// `../shared/sofa` beside the repository, if present.
    fn sofa_dir() -> Option<PathBuf> {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/sofa");
        if p.join("share").is_dir() {
            return Some(p);
        }
        if std::env::var_os("CANAPE_REQUIRE_SOFA").is_some() {
            panic!("CANAPE_REQUIRE_SOFA is set but ../shared/sofa is absent");
        }
        eprintln!("NOTICE: ../shared/sofa is absent; MeshTetraStuffing reference checks skipped");
        None
    }

    /// The `v` and `f` lines of an OBJ file (faces of 3 as triangles, of 4 as quads, in order).
    fn read_obj(path: PathBuf, scale: f64) -> (Vec<P3>, Vec<[u32; 3]>, Vec<[u32; 4]>) {
        let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let text = String::from_utf8_lossy(&text);
        let (mut p, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
        for line in text.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            match w.first() {
                Some(&"v") => {
                    let c: Vec<f64> = w[1..4].iter().map(|s| s.parse().unwrap()).collect();
                    p.push([c[0] * scale, c[1] * scale, c[2] * scale]);
                }
                Some(&"f") => {
                    let idx: Vec<u32> = w[1..]
                        .iter()
                        .map(|s| s.split('/').next().unwrap().parse::<u32>().unwrap() - 1)
                        .collect();
                    match idx.len() {
                        3 => t.push([idx[0], idx[1], idx[2]]),
                        4 => q.push([idx[0], idx[1], idx[2], idx[3]]),
                        n => panic!("a face of {n} vertices"),
                    }
                }
                _ => {}
            }
        }
        (p, t, q)
    }

    #[test]
    fn torus_fall_matches_the_reference() {
        let Some(dir) = sofa_dir() else { return };
        let (p, t, _) = read_obj(dir.join("share/mesh/torus1-dilated-05.obj"), 10.0);
        let params = StuffingParams {
            size: 13.859131548844,
            alpha_long: 0.4,
            alpha_short: 0.4,
            ..StuffingParams::default()
        };
        let s = stuff(&p, &t, &[], &params).unwrap();
        assert_eq!((s.points.len(), s.tetrahedra.len()), (129, 392));
        assert_eq!(s.points[0], [0.0, 0.0, -41.577394646532]);
        assert_eq!(
            s.points[1],
            [-13.859131548843997, -13.859131548844, -27.718263097688]
        );
        assert_eq!(
            s.tetrahedra[..3],
            [[2, 1, 72, 65], [2, 1, 69, 72], [3, 2, 73, 66]]
        );
        assert_eq!(checksum(&s), 0xebce684d77ff45a5);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_positive(&s);
    }

    #[test]
    fn liver_scene_matches_the_reference() {
        let Some(dir) = sofa_dir() else { return };
        let (p, t, _) = read_obj(dir.join("share/mesh/liver-smooth.obj"), 1.0);
        let params = StuffingParams {
            size: 0.7,
            alpha_long: 0.3,
            alpha_short: 0.4,
            snap_points: true,
            split_tetrahedra: true,
            ..StuffingParams::default()
        };
        let s = stuff(&p, &t, &[], &params).unwrap();
        assert_eq!((s.points.len(), s.tetrahedra.len()), (618, 1999));
        assert_eq!(s.tetrahedra[..2], [[0, 230, 120, 419], [0, 230, 118, 120]]);
        assert_eq!(checksum(&s), 0x6e12759eb81b63cf);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_positive(&s);
    }

    #[test]
    fn tongue_with_quads_matches_the_reference() {
        let Some(dir) = sofa_dir() else { return };
        let (p, t, q) = read_obj(
            dir.join("examples/Tutorials/StepByStep/Dentistry_Haptics/data/mesh/tongue.obj"),
            1.0,
        );
        let params = StuffingParams {
            size: 0.2,
            alpha_long: 0.2,
            alpha_short: 0.4,
            snap_points: true,
            split_tetrahedra: true,
            ..StuffingParams::default()
        };
        let s = stuff(&p, &t, &q, &params).unwrap();
        assert_eq!((s.points.len(), s.tetrahedra.len()), (1405, 5051));
        assert_eq!(s.tetrahedra[..2], [[0, 623, 324, 320], [0, 623, 974, 324]]);
        assert_eq!(checksum(&s), 0xae9adf092c1839ad);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_positive(&s);
    }
}
