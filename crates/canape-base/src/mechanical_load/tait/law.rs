//! The free functions of TaitSurfacePressureForceField: the surface's triangles, its volume,
//! area and defects, Tait's equation of state and the injection step.

use canape_core::mesh::Mesh;
use canape_types::{get3, Vec3};
use std::collections::BTreeMap;

/// The triangles the pressure acts on: the mesh's triangles, then two per quad, (a, b, c) and
/// (c, d, a), as SOFA's `pressureTriangles`.
pub fn pressure_triangles(mesh: &Mesh) -> Vec<[u32; 3]> {
    let mut out = Vec::with_capacity(mesh.triangles.len() + 2 * mesh.quads.len());
    out.extend_from_slice(&mesh.triangles);
    for q in &mesh.quads {
        out.push([q[0], q[1], q[2]]);
        out.push([q[2], q[3], q[0]]);
    }
    out
}

/// Signed volume enclosed by `triangles` (positive when they turn counter-clockwise seen from
/// outside) and their total area, at positions `x` (3 numbers per point). The volume's
/// tetrahedra meet at the mean of all the points, as SOFA computes it.
pub fn volume_and_area(triangles: &[[usize; 3]], x: &[f64]) -> (f64, f64) {
    let n = x.len() / 3;
    if n == 0 {
        return (0.0, 0.0);
    }
    let mut center = Vec3::zeros();
    for i in 0..n {
        center += get3(x, i);
    }
    center /= n as f64;
    let (mut volume6, mut area2) = (0.0, 0.0);
    for t in triangles {
        let a = get3(x, t[0]) - center;
        let b = get3(x, t[1]) - center;
        let c = get3(x, t[2]) - center;
        volume6 += a.cross(&b).dot(&c);
        area2 += (b - a).cross(&(c - a)).norm();
    }
    (volume6 / 6.0, area2 / 2.0)
}

/// Tait's law: the pressure at volume `v` for the rest volume `v0`, and dP/dV. Constant `p0`
/// (dP/dV = 0) when `b`, `gamma` or `v0` is 0; dP/dV = 0 at v = 0.
pub fn tait_pressure(p0: f64, b: f64, gamma: f64, v: f64, v0: f64) -> (f64, f64) {
    if b == 0.0 || gamma == 0.0 || v0 == 0.0 {
        return (p0, 0.0);
    }
    if gamma == 1.0 {
        return (p0 - b * (v / v0 - 1.0), -b / v0);
    }
    let r = (v / v0).powf(gamma);
    let stiffness = if v == 0.0 { 0.0 } else { -b * gamma * r / v };
    (p0 - b * (r - 1.0), stiffness)
}

/// The injected volume after one step: `current` moves towards `target` by at most `max_step`.
pub fn injection_step(target: f64, current: f64, max_step: f64) -> f64 {
    if target == current {
        current
    } else if (target - current).abs() <= max_step {
        target
    } else if target < current {
        current - max_step
    } else {
        current + max_step
    }
}

/// What keeps `triangles` from being a closed, consistently oriented surface (each edge shared
/// by exactly two triangles that run it in opposite directions), if anything.
pub fn surface_defects(triangles: &[[usize; 3]]) -> Option<String> {
    // undirected edge → (times run low→high, times run high→low)
    let mut edges: BTreeMap<(usize, usize), (u32, u32)> = BTreeMap::new();
    let mut degenerate = 0usize;
    for t in triangles {
        if t[0] == t[1] || t[1] == t[2] || t[2] == t[0] {
            degenerate += 1;
            continue;
        }
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            let e = edges.entry((a.min(b), a.max(b))).or_default();
            if a < b {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
    }
    let (mut border, mut shared, mut flipped) = (0usize, 0usize, 0usize);
    for &(up, down) in edges.values() {
        match up + down {
            1 => border += 1,
            2 if up != 1 => flipped += 1,
            2 => {}
            _ => shared += 1,
        }
    }
    let mut what = Vec::new();
    if border > 0 {
        what.push(format!(
            "{border} edges belong to one triangle only (the surface is open)"
        ));
    }
    if shared > 0 {
        what.push(format!("{shared} edges belong to more than two triangles"));
    }
    if flipped > 0 {
        what.push(format!(
            "{flipped} edges are run in the same direction by both their triangles (inconsistent orientation)"
        ));
    }
    if degenerate > 0 {
        what.push(format!("{degenerate} triangles repeat a point"));
    }
    (!what.is_empty()).then(|| what.join("; "))
}
