//! Boundary surfaces of meshes, vector helpers and the ray–triangle test.

use canape_core::mesh::Mesh;

/// Boundary faces of a volume mesh (faces used by one element), oriented away from their
/// element, in a deterministic order. A mesh without volume elements gives its triangles and
/// quads as they are (those of a volume mesh, such as a grid's or a loader's faces, include
/// interior ones and are not drawn).
pub fn surface_triangles(mesh: &Mesh, pts: &[[f64; 3]]) -> Vec<[u32; 3]> {
    let p = |i: u32| pts.get(i as usize).copied().unwrap_or([0.0; 3]);
    let mut faces: Vec<([u32; 4], Vec<u32>, [f64; 3])> = Vec::new();
    let centroid = |idx: &[u32]| {
        let mut c = [0.0; 3];
        for &i in idx {
            let q = p(i);
            for k in 0..3 {
                c[k] += q[k] / idx.len() as f64;
            }
        }
        c
    };
    for t in &mesh.tetrahedra {
        let c = centroid(t);
        for q in canape_core::mesh::TETRA_FACES {
            let f: Vec<u32> = q.iter().map(|&k| t[k]).collect();
            let mut key = [f[0], f[1], f[2], u32::MAX];
            key[..3].sort_unstable();
            faces.push((key, f, c));
        }
    }
    for h in &mesh.hexahedra {
        let c = centroid(h);
        for q in canape_core::mesh::HEXA_FACES {
            let f: Vec<u32> = q.iter().map(|&k| h[k]).collect();
            let mut key = [f[0], f[1], f[2], f[3]];
            key.sort_unstable();
            faces.push((key, f, c));
        }
    }
    faces.sort_by_key(|f| f.0); // stable: equal keys keep element order
    let mut out = Vec::new();
    let mut i = 0;
    while i < faces.len() {
        let mut j = i + 1;
        while j < faces.len() && faces[j].0 == faces[i].0 {
            j += 1;
        }
        if j - i == 1 {
            let (_, f, c) = &faces[i];
            for tri in fan(f) {
                out.push(orient_away(tri, c, &p));
            }
        }
        i = j;
    }
    if mesh.tetrahedra.is_empty() && mesh.hexahedra.is_empty() {
        for t in &mesh.triangles {
            out.push(*t);
        }
        for q in &mesh.quads {
            out.extend(fan(q));
        }
    }
    out
}

fn fan(f: &[u32]) -> Vec<[u32; 3]> {
    (1..f.len() - 1).map(|k| [f[0], f[k], f[k + 1]]).collect()
}

pub(super) fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
pub(super) fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
pub(super) fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn orient_away(t: [u32; 3], c: &[f64; 3], p: &impl Fn(u32) -> [f64; 3]) -> [u32; 3] {
    let n = cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0])));
    if dot(n, sub(p(t[0]), *c)) < 0.0 {
        [t[0], t[2], t[1]]
    } else {
        t
    }
}

pub(super) fn norm2(a: [f64; 3]) -> f64 {
    dot(a, a)
}

/// Möller–Trumbore; distance along the (unit) ray, both faces.
pub(super) fn ray_triangle(
    o: [f64; 3],
    d: [f64; 3],
    a: [f64; 3],
    b: [f64; 3],
    c: [f64; 3],
) -> Option<f64> {
    let e1 = sub(b, a);
    let e2 = sub(c, a);
    let p = cross(d, e2);
    let det = dot(e1, p);
    if det.abs() < 1e-300 {
        return None;
    }
    let inv = 1.0 / det;
    let s = sub(o, a);
    let u = dot(s, p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = cross(s, e1);
    let v = dot(d, q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = dot(e2, q) * inv;
    (t > 0.0).then_some(t)
}
