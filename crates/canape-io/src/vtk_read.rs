//! Reading VTK meshes for MeshVTKLoader: the legacy format (`# vtk DataFile`, ASCII or BINARY
//! big-endian, POLYDATA or UNSTRUCTURED_GRID) and the XML formats `.vtu` (UnstructuredGrid)
//! and `.vtp` (PolyData) with ASCII data arrays. Cells become SOFA's element lists: vertices are
//! skipped, lines (and poly-lines) give edges, triangles, quads (and polygons of 3 or 4 points,
//! pixels) give triangles and quads, tetrahedra, hexahedra (and voxels, reordered) give
//! volumes — as SOFA's MeshVTKLoader sorts them. Other cell types are reported.

use crate::error::MeshReadError;
use canape_core::mesh::Mesh;

/// VTK cell types.
const VERTEX: u32 = 1;
const POLY_VERTEX: u32 = 2;
const LINE: u32 = 3;
const POLY_LINE: u32 = 4;
const TRIANGLE: u32 = 5;
const POLYGON: u32 = 7;
const PIXEL: u32 = 8;
const QUAD: u32 = 9;
const TETRA: u32 = 10;
const VOXEL: u32 = 11;
const HEXAHEDRON: u32 = 12;

/// Largest count a header may announce (points, cells, list sizes): a corrupt or hostile header
/// is refused before anything is allocated.
const MAX_COUNT: usize = 200_000_000;

/// Add one cell to the mesh; returns an error for a cell type SOFA's loader does not keep.
fn add_cell(mesh: &mut Mesh, ty: u32, ids: &[u32]) -> Result<(), MeshReadError> {
    let bad = || MeshReadError::CellSize {
        cell_type: ty,
        points: ids.len(),
    };
    match ty {
        VERTEX | POLY_VERTEX => {}
        LINE | POLY_LINE => {
            if ids.len() < 2 {
                return Err(bad());
            }
            for w in ids.windows(2) {
                mesh.edges.push([w[0], w[1]]);
            }
        }
        TRIANGLE | POLYGON | QUAD | PIXEL => match (ty, ids.len()) {
            (TRIANGLE | POLYGON, 3) => mesh.triangles.push([ids[0], ids[1], ids[2]]),
            (QUAD | POLYGON, 4) => mesh.quads.push([ids[0], ids[1], ids[2], ids[3]]),
            // a pixel's points go row by row: 0 1 3 2 around
            (PIXEL, 4) => mesh.quads.push([ids[0], ids[1], ids[3], ids[2]]),
            (POLYGON, n) if n > 4 => {
                // a fan, as a triangulated polygon
                for k in 1..n - 1 {
                    mesh.triangles.push([ids[0], ids[k], ids[k + 1]]);
                }
            }
            _ => return Err(bad()),
        },
        TETRA => {
            let [a, b, c, d] = ids[..] else {
                return Err(bad());
            };
            mesh.tetrahedra.push([a, b, c, d]);
        }
        HEXAHEDRON | VOXEL => {
            if ids.len() != 8 {
                return Err(bad());
            }
            let h: [u32; 8] = std::array::from_fn(|k| ids[k]);
            mesh.hexahedra.push(if ty == VOXEL {
                // a voxel's points go by x, then y, then z: reorder around the faces
                [h[0], h[1], h[3], h[2], h[4], h[5], h[7], h[6]]
            } else {
                h
            });
        }
        _ => return Err(MeshReadError::CellType { cell_type: ty }),
    }
    Ok(())
}

/// Parse a VTK mesh from its bytes (legacy or XML, told apart by the first line).
pub fn parse_vtk(bytes: &[u8]) -> Result<Mesh, MeshReadError> {
    let head: String = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]).into_owned();
    let first = head.trim_start();
    let mesh = if first.starts_with("# vtk") {
        parse_legacy(bytes)?
    } else if first.starts_with("<?xml") || first.starts_with("<VTKFile") {
        parse_xml(&String::from_utf8_lossy(bytes))?
    } else {
        return Err(MeshReadError::not_format(
            "not a VTK file (neither '# vtk DataFile' nor XML <VTKFile>)",
        ));
    };
    let n = mesh.points.len() as u32;
    let max = mesh.max_index();
    if let Some(m) = max.filter(|&m| m >= n) {
        return Err(MeshReadError::PointOutOfRange {
            point: m,
            points: n,
        });
    }
    Ok(mesh)
}

/// A cursor over a legacy file: text tokens, or raw big-endian binary blocks.
struct Legacy<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Legacy<'a> {
    fn line(&mut self) -> Option<&'a str> {
        if self.pos >= self.b.len() {
            return None;
        }
        let start = self.pos;
        let end = self.b[start..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(self.b.len(), |k| start + k);
        self.pos = (end + 1).min(self.b.len());
        std::str::from_utf8(&self.b[start..end])
            .ok()
            .map(|l| l.trim_end_matches('\r'))
    }
    /// The next non-blank line.
    fn header(&mut self) -> Option<&'a str> {
        loop {
            let l = self.line()?;
            if !l.trim().is_empty() {
                return Some(l.trim());
            }
        }
    }
    fn token(&mut self) -> Option<&'a str> {
        while self.pos < self.b.len() && self.b[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        let start = self.pos;
        while self.pos < self.b.len() && !self.b[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        (start < self.pos)
            .then(|| std::str::from_utf8(&self.b[start..self.pos]).ok())
            .flatten()
    }
    /// `n` numbers, as text or as big-endian binary of `width` bytes (4: float or int, 8:
    /// double).
    fn numbers(
        &mut self,
        n: usize,
        binary: bool,
        width: usize,
        float: bool,
    ) -> Result<Vec<f64>, MeshReadError> {
        if binary {
            // the binary block starts after the header line's newline
            let len = n
                .checked_mul(width)
                .ok_or_else(|| MeshReadError::malformed("size overflow"))?;
            let block = self
                .b
                .get(self.pos..self.pos + len)
                .ok_or_else(|| MeshReadError::malformed("the file ends inside a binary block"))?;
            self.pos += len;
            let out = block
                .chunks_exact(width)
                .map(|c| match (width, float) {
                    (4, true) => f32::from_be_bytes([c[0], c[1], c[2], c[3]]) as f64,
                    (4, false) => i32::from_be_bytes([c[0], c[1], c[2], c[3]]) as f64,
                    (8, true) => f64::from_be_bytes(c.try_into().expect("8 bytes")),
                    _ => i64::from_be_bytes(c.try_into().expect("8 bytes")) as f64,
                })
                .collect();
            Ok(out)
        } else {
            let mut out = Vec::with_capacity(n.min(1 << 20));
            for _ in 0..n {
                let t = self.token().ok_or_else(|| {
                    MeshReadError::malformed("the file ends inside a list of numbers")
                })?;
                out.push(t.parse::<f64>().map_err(|_| not_a_number(t))?);
            }
            Ok(out)
        }
    }
}

/// The error of a token that does not parse as a number.
fn not_a_number(t: &str) -> MeshReadError {
    MeshReadError::malformed(format!("'{}' is not a number", crate::files::excerpt(t)))
}

fn count(t: Option<&str>, what: &str) -> Result<usize, MeshReadError> {
    let n: usize = t
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| MeshReadError::malformed(format!("missing or bad count after {what}")))?;
    if n > MAX_COUNT {
        return Err(MeshReadError::CountTooLarge {
            what: what.to_string(),
            count: n,
            max: MAX_COUNT,
        });
    }
    Ok(n)
}

fn index(v: f64) -> Result<u32, MeshReadError> {
    if v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64 {
        Ok(v as u32)
    } else {
        Err(MeshReadError::malformed(format!(
            "{v} is not a point index"
        )))
    }
}

fn parse_legacy(bytes: &[u8]) -> Result<Mesh, MeshReadError> {
    let mut r = Legacy { b: bytes, pos: 0 };
    r.line(); // # vtk DataFile Version x.y
    r.line(); // title
    let enc = r
        .header()
        .ok_or_else(|| MeshReadError::malformed("missing ASCII/BINARY line"))?
        .to_ascii_uppercase();
    let binary = match enc.as_str() {
        "ASCII" => false,
        "BINARY" => true,
        e => {
            return Err(MeshReadError::unsupported(format!(
                "unknown encoding '{}' (ASCII or BINARY)",
                crate::files::excerpt(e)
            )))
        }
    };
    let ds = r
        .header()
        .ok_or_else(|| MeshReadError::malformed("missing DATASET line"))?
        .to_string();
    let kind = ds
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_ascii_uppercase();
    if kind != "POLYDATA" && kind != "UNSTRUCTURED_GRID" {
        return Err(MeshReadError::unsupported(format!(
            "DATASET {kind} is not supported (POLYDATA or UNSTRUCTURED_GRID)"
        )));
    }
    let mut mesh = Mesh::default();
    let mut cells: Vec<Vec<u32>> = Vec::new();
    let mut types: Vec<u32> = Vec::new();
    while let Some(h) = r.header() {
        let mut w = h.split_whitespace();
        let key = w.next().unwrap_or("").to_ascii_uppercase();
        match key.as_str() {
            "POINTS" => {
                let n = count(w.next(), "POINTS")?;
                let ty = w.next().unwrap_or("float").to_ascii_lowercase();
                let width = if ty == "double" { 8 } else { 4 };
                let v = r.numbers(3 * n, binary, width, true)?;
                mesh.points = v.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
            }
            "CELLS" | "POLYGONS" | "LINES" | "VERTICES" | "TRIANGLE_STRIPS" => {
                let n = count(w.next(), &key)?;
                let size = count(w.next(), &key)?;
                let v = r.numbers(size, binary, 4, false)?;
                let mut k = 0;
                for _ in 0..n {
                    let early = || MeshReadError::malformed("a cell list ends early");
                    let m = *v.get(k).ok_or_else(early)? as usize;
                    let ids = v
                        .get(k + 1..k + 1 + m)
                        .ok_or_else(early)?
                        .iter()
                        .map(|&x| index(x))
                        .collect::<Result<Vec<u32>, MeshReadError>>()?;
                    k += 1 + m;
                    match key.as_str() {
                        "CELLS" => cells.push(ids),
                        "POLYGONS" => add_cell(&mut mesh, POLYGON, &ids)?,
                        "LINES" => add_cell(&mut mesh, POLY_LINE, &ids)?,
                        "VERTICES" => {}
                        _ => {
                            // a strip: triangles with alternating orientation
                            for t in 0..ids.len().saturating_sub(2) {
                                let (a, b, c) = (ids[t], ids[t + 1], ids[t + 2]);
                                mesh.triangles
                                    .push(if t % 2 == 0 { [a, b, c] } else { [b, a, c] });
                            }
                        }
                    }
                }
            }
            "CELL_TYPES" => {
                let n = count(w.next(), "CELL_TYPES")?;
                types = r
                    .numbers(n, binary, 4, false)?
                    .into_iter()
                    .map(index)
                    .collect::<Result<_, _>>()?;
            }
            // point and cell data, fields: the end of the geometry
            "POINT_DATA" | "CELL_DATA" | "FIELD" | "METADATA" => break,
            _ => {}
        }
    }
    if !cells.is_empty() {
        if types.len() != cells.len() {
            return Err(MeshReadError::malformed(format!(
                "{} cells but {} cell types",
                cells.len(),
                types.len()
            )));
        }
        for (ids, ty) in cells.iter().zip(types) {
            add_cell(&mut mesh, ty, ids)?;
        }
    }
    Ok(mesh)
}

/// The ASCII content of the `<DataArray … Name="name">` inside `section` (or the first one when
/// `name` is empty).
fn data_array<'a>(section: &'a str, name: &str) -> Result<Option<&'a str>, MeshReadError> {
    let mut rest = section;
    while let Some(k) = rest.find("<DataArray") {
        let tag_end = rest[k..]
            .find('>')
            .ok_or_else(|| MeshReadError::malformed("unclosed <DataArray"))?
            + k;
        let tag = &rest[k..tag_end];
        let body_end = rest[tag_end..]
            .find("</DataArray>")
            .ok_or_else(|| MeshReadError::malformed("unclosed <DataArray>"))?
            + tag_end;
        if name.is_empty() || tag.contains(&format!("Name=\"{name}\"")) {
            if !tag.contains("format=\"ascii\"") {
                return Err(MeshReadError::unsupported(format!(
                    "DataArray {name} is not ASCII (binary and appended data are not supported)"
                )));
            }
            return Ok(Some(&rest[tag_end + 1..body_end]));
        }
        rest = &rest[body_end..];
    }
    Ok(None)
}

fn section<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let s = text.find(&format!("<{tag}"))?;
    let e = text[s..].find(&format!("</{tag}>"))? + s;
    Some(&text[s..e])
}

fn numbers(body: &str) -> Result<Vec<f64>, MeshReadError> {
    body.split_whitespace()
        .map(|t| t.parse::<f64>().map_err(|_| not_a_number(t)))
        .collect()
}

fn parse_xml(text: &str) -> Result<Mesh, MeshReadError> {
    let mut mesh = Mesh::default();
    let missing = |what: &str| MeshReadError::malformed(format!("no {what}"));
    let points = section(text, "Points").ok_or_else(|| missing("<Points> section"))?;
    let p = numbers(data_array(points, "")?.ok_or_else(|| missing("point coordinates"))?)?;
    if p.len() % 3 != 0 {
        return Err(MeshReadError::malformed(
            "point coordinates are not a multiple of 3",
        ));
    }
    mesh.points = p.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
    let read_cells =
        |sec: &str, fixed: Option<u32>, mesh: &mut Mesh| -> Result<(), MeshReadError> {
            let conn: Vec<u32> =
                numbers(data_array(sec, "connectivity")?.ok_or_else(|| missing("connectivity"))?)?
                    .into_iter()
                    .map(index)
                    .collect::<Result<_, _>>()?;
            let offs: Vec<usize> =
                numbers(data_array(sec, "offsets")?.ok_or_else(|| missing("offsets"))?)?
                    .into_iter()
                    .map(|v| index(v).map(|i| i as usize))
                    .collect::<Result<_, _>>()?;
            let types: Vec<u32> = match fixed {
                Some(t) => vec![t; offs.len()],
                None => numbers(data_array(sec, "types")?.ok_or_else(|| missing("cell types"))?)?
                    .into_iter()
                    .map(index)
                    .collect::<Result<_, _>>()?,
            };
            if types.len() != offs.len() {
                return Err(MeshReadError::malformed(
                    "as many cell types as offsets are needed",
                ));
            }
            let mut start = 0;
            for (&end, &ty) in offs.iter().zip(&types) {
                let ids = conn
                    .get(start..end)
                    .ok_or_else(|| MeshReadError::malformed("offsets beyond the connectivity"))?;
                add_cell(mesh, ty, ids)?;
                start = end;
            }
            Ok(())
        };
    if text.contains("type=\"UnstructuredGrid\"") {
        if let Some(c) = section(text, "Cells") {
            read_cells(c, None, &mut mesh)?;
        }
    } else if text.contains("type=\"PolyData\"") {
        for (tag, ty) in [("Lines", POLY_LINE), ("Polys", POLYGON)] {
            if let Some(c) = section(text, tag) {
                read_cells(c, Some(ty), &mut mesh)?;
            }
        }
    } else {
        return Err(MeshReadError::unsupported(
            "only UnstructuredGrid (.vtu) and PolyData (.vtp) XML files are read",
        ));
    }
    Ok(mesh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_ascii_unstructured_grid() {
        let t = "# vtk DataFile Version 2.0\ntitle\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 5 float\n0 0 0 1 0 0 0 1 0 0 0 1 1 1 1\nCELLS 3 13\n4 0 1 2 3\n3 0 1 2\n3 1 2 4\nCELL_TYPES 3\n10\n5\n5\nPOINT_DATA 5\n";
        let m = parse_vtk(t.as_bytes()).unwrap();
        assert_eq!(m.points.len(), 5);
        assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3]]);
        assert_eq!(m.triangles, vec![[0, 1, 2], [1, 2, 4]]);
    }

    #[test]
    fn legacy_binary_polydata() {
        let mut b =
            b"# vtk DataFile Version 3.0\nvtk output\nBINARY\nDATASET POLYDATA\nPOINTS 4 float\n"
                .to_vec();
        for v in [0.0f32, 0., 0., 1., 0., 0., 1., 1., 0., 0., 1., 0.] {
            b.extend(v.to_be_bytes());
        }
        b.extend(b"\nPOLYGONS 1 5\n");
        for v in [4i32, 0, 1, 2, 3] {
            b.extend(v.to_be_bytes());
        }
        b.extend(b"\n");
        let m = parse_vtk(&b).unwrap();
        assert_eq!(m.points[2], [1.0, 1.0, 0.0]);
        assert_eq!(m.quads, vec![[0, 1, 2, 3]]);
    }

    #[test]
    fn xml_unstructured_grid_and_bad_input() {
        let t = r#"<?xml version="1.0"?>
<VTKFile type="UnstructuredGrid" version="0.1">
<UnstructuredGrid><Piece NumberOfPoints="4" NumberOfCells="1">
<Points><DataArray type="Float32" NumberOfComponents="3" format="ascii">0 0 0 1 0 0 0 1 0 0 0 1</DataArray></Points>
<Cells>
<DataArray type="Int32" Name="connectivity" format="ascii">0 1 2 3</DataArray>
<DataArray type="Int32" Name="offsets" format="ascii">4</DataArray>
<DataArray type="UInt8" Name="types" format="ascii">10</DataArray>
</Cells></Piece></UnstructuredGrid></VTKFile>"#;
        let m = parse_vtk(t.as_bytes()).unwrap();
        assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3]]);
        // an index beyond the points, a huge count, garbage: errors, not panics
        assert!(parse_vtk(t.replace("0 1 2 3</", "0 1 2 9</").as_bytes()).is_err());
        let huge =
            "# vtk DataFile Version 2.0\nt\nASCII\nDATASET POLYDATA\nPOINTS 999999999999 float\n";
        assert!(parse_vtk(huge.as_bytes()).is_err());
        assert!(parse_vtk(b"hello").is_err());
        let trunc =
            "# vtk DataFile Version 2.0\nt\nBINARY\nDATASET POLYDATA\nPOINTS 3 float\n\x00\x01";
        assert!(parse_vtk(trunc.as_bytes()).is_err());
    }
}
