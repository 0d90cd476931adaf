//! Wavefront OBJ: the mesh parser and what SOFA's MeshOBJLoader reads besides the mesh (vertex
//! normals, texture coordinates, primitive groups).

use crate::error::MeshReadError;
use crate::files::excerpt;
use canape_core::mesh::Mesh;

pub fn parse_obj(text: &str) -> Result<Mesh, MeshReadError> {
    let mut mesh = Mesh::default();
    for (ln, l) in text.lines().enumerate() {
        let mut it = l.split_whitespace();
        match it.next() {
            Some("v") => {
                let v: Vec<f64> = it
                    .take(3)
                    .map(|t| t.parse::<f64>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| MeshReadError::at_line(ln + 1, "bad vertex"))?;
                if v.len() != 3 {
                    return Err(MeshReadError::at_line(
                        ln + 1,
                        "a vertex needs 3 coordinates",
                    ));
                }
                mesh.points.push([v[0], v[1], v[2]]);
            }
            Some("f") => {
                let mut idx = Vec::new();
                for t in it {
                    let first = t.split('/').next().unwrap_or("");
                    let i: i64 = first.parse().map_err(|_| {
                        MeshReadError::at_line(ln + 1, format!("bad face index '{}'", excerpt(t)))
                    })?;
                    let i = if i < 0 {
                        mesh.points.len() as i64 + i
                    } else {
                        i - 1
                    };
                    if i < 0 {
                        return Err(MeshReadError::at_line(ln + 1, "face index out of range"));
                    }
                    idx.push(i as u32);
                }
                match idx.len() {
                    3 => mesh.triangles.push([idx[0], idx[1], idx[2]]),
                    4 => mesh.quads.push([idx[0], idx[1], idx[2], idx[3]]),
                    n if n > 4 => {
                        for k in 1..n - 1 {
                            mesh.triangles.push([idx[0], idx[k], idx[k + 1]]);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    if let Some(m) = mesh.max_index() {
        if m as usize >= mesh.points.len() {
            return Err(MeshReadError::VertexOutOfRange {
                element: "a face",
                vertex: u64::from(m) + 1,
                vertices: mesh.points.len(),
            });
        }
    }
    Ok(mesh)
}

/// What an OBJ file says about each face and line corner: the vertex count, the `vt` and `vn`
/// lists, and each corner's (vertex, texture, normal) indices, 0-based (negative ones counted
/// back from the end of their list as it stood, −1 when absent or invalid), as SOFA's
/// MeshOBJLoader reads them.
struct ObjCorners {
    vertices: usize,
    texcoords: Vec<[f64; 2]>,
    normals: Vec<[f64; 3]>,
    corners: Vec<[i64; 3]>,
}

impl ObjCorners {
    fn read(text: &str) -> ObjCorners {
        let mut c = ObjCorners {
            vertices: 0,
            texcoords: Vec::new(),
            normals: Vec::new(),
            corners: Vec::new(),
        };
        let numbers = |it: std::str::SplitWhitespace<'_>, n: usize| -> Vec<f64> {
            let mut v: Vec<f64> = it.take(n).map(|t| t.parse().unwrap_or(0.0)).collect();
            v.resize(n, 0.0);
            v
        };
        for l in text.lines() {
            let mut it = l.split_whitespace();
            match it.next() {
                Some("v") => c.vertices += 1,
                Some("vt") => {
                    let v = numbers(it, 2);
                    c.texcoords.push([v[0], v[1]]);
                }
                Some("vn") => {
                    let v = numbers(it, 3);
                    c.normals.push([v[0], v[1], v[2]]);
                }
                Some("f") | Some("l") => {
                    let lens = [c.vertices, c.texcoords.len(), c.normals.len()];
                    for t in it {
                        let mut parts = t.split('/');
                        c.corners.push(std::array::from_fn(|k| {
                            match parts.next().and_then(|s| s.parse::<i64>().ok()) {
                                Some(i) if i >= 1 => i - 1,
                                Some(i) if i < 0 => i + lens[k] as i64,
                                _ => -1,
                            }
                        }));
                    }
                }
                _ => {}
            }
        }
        c
    }

    /// The corners as (vertex, entry of the list `k`: 1 texture, 2 normal) when both exist.
    fn pairs(&self, k: usize, len: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.corners.iter().filter_map(move |c| {
            let (p, q) = (usize::try_from(c[0]).ok()?, usize::try_from(c[k]).ok()?);
            (p < self.vertices && q < len).then_some((p, q))
        })
    }
}

/// The vertex normals of an OBJ file as SOFA's MeshOBJLoader computes them without
/// `handleSeams` (Sofa/Component/IO/Mesh/.../MeshOBJLoader.cpp): for each vertex, the sum of
/// the `vn` normals its face and line corners name, normalised (zero when none does); empty
/// when the file has no `vn` line. Flat, 3 numbers a vertex.
pub fn obj_vertex_normals(text: &str) -> Vec<f64> {
    let c = ObjCorners::read(text);
    if c.normals.is_empty() {
        return Vec::new();
    }
    let mut out = vec![[0.0f64; 3]; c.vertices];
    for (p, n) in c.pairs(2, c.normals.len()) {
        for d in 0..3 {
            out[p][d] += c.normals[n][d];
        }
    }
    out.into_iter()
        .flat_map(|v| {
            let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            if l > 0.0 {
                [v[0] / l, v[1] / l, v[2] / l]
            } else {
                v
            }
        })
        .collect()
}

/// The texture coordinate of each vertex of an OBJ file as SOFA's MeshOBJLoader keeps it
/// without `handleSeams`: over the face and line corners in file order, a vertex takes a
/// corner's `vt` when it has none yet (still (0, 0)) or when the new one lies further along
/// (−1, 1) (SOFA's `(new − old)·(−1, 1) > 0`). Empty when the file has no `vt` line. Flat, 2
/// numbers a vertex.
pub fn obj_vertex_texcoords(text: &str) -> Vec<f64> {
    let c = ObjCorners::read(text);
    if c.texcoords.is_empty() {
        return Vec::new();
    }
    let mut out = vec![[0.0f64; 2]; c.vertices];
    for (p, t) in c.pairs(1, c.texcoords.len()) {
        let (cur, new) = (&mut out[p], c.texcoords[t]);
        let unset = cur[0] == 0.0 && cur[1] == 0.0;
        if unset || (new[1] - cur[1]) - (new[0] - cur[0]) > 0.0 {
            *cur = new;
        }
    }
    out.into_iter().flatten().collect()
}

/// One primitive group of an OBJ file (SOFA's PrimitiveGroup): its first primitive and count
/// (counted in faces of its kind: a polygon triangulated is still one), material and group
/// names and the material's index (−1: none found).
#[derive(Clone, Debug, PartialEq)]
pub struct ObjGroup {
    pub first: usize,
    pub count: usize,
    pub material: String,
    pub group: String,
    pub material_id: i64,
}

impl ObjGroup {
    pub(super) fn words(&self) -> Vec<String> {
        vec![
            self.first.to_string(),
            self.count.to_string(),
            self.material.clone(),
            self.group.clone(),
            self.material_id.to_string(),
        ]
    }
}

/// The edge, triangle and quad groups of an OBJ file as SOFA's MeshOBJLoader makes them: a
/// `g` or `usemtl` line closes the current group of each kind that has new faces; `g` names the
/// next group (its words joined by spaces; "Default_Group" at first), `usemtl` its material.
/// Materials are not loaded here, so their index is −1. With `triangulate` quads count as
/// triangles, as SOFA's loader counts them.
pub fn obj_groups(text: &str, triangulate: bool) -> [Vec<ObjGroup>; 3] {
    let mut groups: [Vec<ObjGroup>; 3] = Default::default();
    let mut count = [0usize; 3];
    let mut first = [0usize; 3];
    let mut group = "Default_Group".to_string();
    let mut material = String::new();
    let close = |groups: &mut [Vec<ObjGroup>; 3],
                 first: &mut [usize; 3],
                 count: &[usize; 3],
                 material: &str,
                 group: &str| {
        for k in 0..3 {
            if count[k] > first[k] {
                groups[k].push(ObjGroup {
                    first: first[k],
                    count: count[k] - first[k],
                    material: material.to_string(),
                    group: group.to_string(),
                    material_id: -1,
                });
                first[k] = count[k];
            }
        }
    };
    for l in text.lines() {
        let mut it = l.split_whitespace();
        match it.next() {
            Some(t @ ("g" | "usemtl")) => {
                close(&mut groups, &mut first, &count, &material, &group);
                let rest: Vec<&str> = it.collect();
                if t == "usemtl" {
                    material = rest.first().copied().unwrap_or("").to_string();
                } else {
                    group = rest.join(" ");
                }
            }
            Some("f") | Some("l") => {
                let n = it.count();
                let kind = match n {
                    2 => 0,
                    4 if !triangulate => 2,
                    _ => 1,
                };
                count[kind] += 1;
            }
            _ => {}
        }
    }
    close(&mut groups, &mut first, &count, &material, &group);
    groups
}
