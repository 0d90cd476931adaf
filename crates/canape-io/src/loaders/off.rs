//! OFF files, read as SOFA's MeshOffLoader does.

use super::check_indices;
use crate::error::MeshReadError;
use crate::files::excerpt;
use canape_core::mesh::Mesh;

/// The lines of an OFF file that hold data: neither empty nor comments.
fn off_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
}

/// Parse an OFF file as SOFA's MeshOffLoader: the `OFF` keyword, the vertex/face/edge counts
/// (the first data line with a non-zero vertex count), one vertex a line, then one face a
/// line, triangles and quads kept and other polygons skipped without counting.
pub fn parse_off(text: &str) -> Result<Mesh, MeshReadError> {
    let rest = text.trim_start();
    let not_off = || MeshReadError::not_format("not an OFF file (no 'OFF' header)");
    let Some(body) = rest.strip_prefix("OFF") else {
        return Err(not_off());
    };
    if body.starts_with(|c: char| !c.is_whitespace()) {
        return Err(not_off());
    }
    let num = |ln: usize, t: &str| -> Result<f64, MeshReadError> {
        t.parse::<f64>()
            .map_err(|_| MeshReadError::at_line(ln, format!("'{}' is not a number", excerpt(t))))
    };
    let mut mesh = Mesh::default();
    let mut lines = off_lines(body);
    let (mut nv, mut nf) = (0usize, 0usize);
    for (ln, l) in lines.by_ref() {
        let mut w = l.split_whitespace();
        let mut count = || -> Result<usize, MeshReadError> {
            match w.next() {
                Some(t) => t
                    .parse::<usize>()
                    .map_err(|_| MeshReadError::at_line(ln, format!("bad count '{}'", excerpt(t)))),
                None => Ok(0),
            }
        };
        nv = count()?;
        nf = count()?;
        if nv > 0 {
            break;
        }
    }
    while mesh.points.len() < nv {
        let Some((ln, l)) = lines.next() else {
            return Err(MeshReadError::Truncated {
                what: "vertices",
                declared: nv,
                found: mesh.points.len(),
            });
        };
        let v: Vec<&str> = l.split_whitespace().take(3).collect();
        if v.len() < 3 {
            return Err(MeshReadError::at_line(ln, "a vertex needs 3 coordinates"));
        }
        mesh.points
            .push([num(ln, v[0])?, num(ln, v[1])?, num(ln, v[2])?]);
    }
    let mut faces = 0;
    while faces < nf {
        let Some((ln, l)) = lines.next() else {
            return Err(MeshReadError::Truncated {
                what: "faces",
                declared: nf,
                found: faces,
            });
        };
        let w: Vec<&str> = l.split_whitespace().collect();
        let k = w.first().and_then(|t| t.parse::<usize>().ok()).unwrap_or(0);
        if !(3..=4).contains(&k) {
            continue;
        }
        let idx: Vec<u32> = w
            .get(1..=k)
            .ok_or_else(|| {
                MeshReadError::at_line(ln, format!("a face of {k} vertices lists fewer indices"))
            })?
            .iter()
            .map(|t| {
                t.parse::<u32>().map_err(|_| {
                    MeshReadError::at_line(ln, format!("bad vertex index '{}'", excerpt(t)))
                })
            })
            .collect::<Result<_, _>>()?;
        if k == 3 {
            mesh.triangles.push([idx[0], idx[1], idx[2]]);
        } else {
            mesh.quads.push([idx[0], idx[1], idx[2], idx[3]]);
        }
        faces += 1;
    }
    check_indices(&mesh)?;
    Ok(mesh)
}
