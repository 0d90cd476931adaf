//! STL (ASCII or binary), read as SOFA's MeshSTLLoader does.

use crate::error::MeshReadError;
use canape_core::mesh::Mesh;

/// Parse an STL file (Sofa/Component/IO/Mesh/.../MeshSTLLoader.cpp): ASCII when it starts with
/// `solid` and holds facets, else binary (80-byte header, a count, 50 bytes per facet; the size
/// must match). Positions are merged by value in order of first appearance, as SOFA's
/// `mergePositionUsingMap` (on by default) does.
pub fn parse_stl(bytes: &[u8]) -> Result<Mesh, MeshReadError> {
    let mut mesh = Mesh::default();
    let mut index: std::collections::BTreeMap<[u64; 3], u32> = std::collections::BTreeMap::new();
    let mut point = |p: [f64; 3], mesh: &mut Mesh| -> u32 {
        let key = p.map(f64::to_bits);
        *index.entry(key).or_insert_with(|| {
            mesh.points.push(p);
            (mesh.points.len() - 1) as u32
        })
    };
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).into_owned();
    let ascii = head.trim_start().starts_with("solid")
        && std::str::from_utf8(bytes).is_ok_and(|t| t.contains("facet"));
    if ascii {
        let text = std::str::from_utf8(bytes).expect("checked");
        let mut tri = Vec::with_capacity(3);
        for (ln, l) in text.lines().enumerate() {
            let mut w = l.split_whitespace();
            match w.next() {
                Some("vertex") => {
                    let v: Vec<f64> = w.filter_map(|t| t.parse().ok()).collect();
                    if v.len() != 3 || v.iter().any(|x| !x.is_finite()) {
                        return Err(MeshReadError::at_line(ln + 1, "bad vertex"));
                    }
                    tri.push(point([v[0], v[1], v[2]], &mut mesh));
                }
                Some("endloop") => {
                    if tri.len() != 3 {
                        return Err(MeshReadError::at_line(
                            ln + 1,
                            format!("a facet with {} vertices", tri.len()),
                        ));
                    }
                    mesh.triangles.push([tri[0], tri[1], tri[2]]);
                    tri.clear();
                }
                _ => {}
            }
        }
        return Ok(mesh);
    }
    if bytes.len() < 84 {
        return Err(MeshReadError::not_format(
            "neither an ASCII STL nor a binary one (shorter than 84 bytes)",
        ));
    }
    let n = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as usize;
    if n.checked_mul(50).and_then(|b| b.checked_add(84)) != Some(bytes.len()) {
        return Err(MeshReadError::StlSize {
            facets: n,
            bytes: bytes.len(),
            expected: 84u128 + 50 * n as u128,
        });
    }
    for f in bytes[84..].chunks_exact(50) {
        let val = |k: usize| {
            let o = 12 + 4 * k;
            f32::from_le_bytes([f[o], f[o + 1], f[o + 2], f[o + 3]]) as f64
        };
        let ids: [u32; 3] =
            std::array::from_fn(|v| point([val(3 * v), val(3 * v + 1), val(3 * v + 2)], &mut mesh));
        mesh.triangles.push(ids);
    }
    Ok(mesh)
}
