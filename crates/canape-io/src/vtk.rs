//! VTK output ParaView opens: one ASCII `.vtu` (VTK XML UnstructuredGrid) per recorded frame
//! and a `.pvd` collection listing the frames with their times. The `.pvd` is rewritten after
//! every frame, so a run stopped at any point leaves a readable series of what it wrote.

use crate::state_io::create_replacing;
use canape_core::mesh::Mesh;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// VTK cell type numbers.
const VTK_VERTEX: u8 = 1;
const VTK_LINE: u8 = 3;
const VTK_TRIANGLE: u8 = 5;
const VTK_QUAD: u8 = 9;
const VTK_TETRA: u8 = 10;
const VTK_HEXAHEDRON: u8 = 12;

/// The cells of a mesh (connectivity, offsets, types) for `n` points: its volume elements when
/// it has any, else its surface elements, else its edges (the highest-dimensional kind SOFA's
/// VTKExporter would write first); every point as a vertex when there is no mesh. Elements
/// naming points beyond `n` are left out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cells {
    pub connectivity: Vec<u32>,
    pub offsets: Vec<u32>,
    pub types: Vec<u8>,
}

impl Cells {
    pub fn from_mesh(mesh: Option<&Mesh>, n: usize) -> Cells {
        let mut c = Cells::default();
        let push = |ids: &[u32], t: u8, c: &mut Cells| {
            if ids.iter().all(|&i| (i as usize) < n) {
                c.connectivity.extend_from_slice(ids);
                c.offsets.push(c.connectivity.len() as u32);
                c.types.push(t);
            }
        };
        if let Some(m) = mesh {
            if !m.tetrahedra.is_empty() || !m.hexahedra.is_empty() {
                m.tetrahedra.iter().for_each(|e| push(e, VTK_TETRA, &mut c));
                m.hexahedra
                    .iter()
                    .for_each(|e| push(e, VTK_HEXAHEDRON, &mut c));
            } else if !m.triangles.is_empty() || !m.quads.is_empty() {
                m.triangles
                    .iter()
                    .for_each(|e| push(e, VTK_TRIANGLE, &mut c));
                m.quads.iter().for_each(|e| push(e, VTK_QUAD, &mut c));
            } else {
                m.edges.iter().for_each(|e| push(e, VTK_LINE, &mut c));
            }
        }
        if c.types.is_empty() {
            for i in 0..n as u32 {
                push(&[i], VTK_VERTEX, &mut c);
            }
        }
        c
    }
}

fn write_array(
    w: &mut impl Write,
    ty: &str,
    name: &str,
    comps: usize,
    values: impl Iterator<Item = String>,
) -> std::io::Result<()> {
    let name_attr = if name.is_empty() {
        String::new()
    } else {
        format!(" Name=\"{name}\"")
    };
    writeln!(
        w,
        "        <DataArray type=\"{ty}\"{name_attr} NumberOfComponents=\"{comps}\" format=\"ascii\">"
    )?;
    let mut line = 0;
    for v in values {
        write!(w, "{}{v}", if line == 0 { "          " } else { " " })?;
        line += 1;
        if line == 12 {
            writeln!(w)?;
            line = 0;
        }
    }
    if line != 0 {
        writeln!(w)?;
    }
    writeln!(w, "        </DataArray>")
}

/// Write one `.vtu`: `points` are 3 numbers per point; `point_data` are named arrays of `comps`
/// numbers per point. Names are written as given (callers pass fixed names). Values use Rust's
/// shortest round-trip formatting, so the file holds the exact numbers.
pub fn write_vtu(
    path: &Path,
    points: &[f64],
    cells: &Cells,
    point_data: &[(&str, usize, &[f64])],
) -> std::io::Result<()> {
    let n = points.len() / 3;
    let mut w = BufWriter::new(create_replacing(path)?);
    writeln!(w, "<?xml version=\"1.0\"?>")?;
    writeln!(
        w,
        "<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\">"
    )?;
    writeln!(w, "  <UnstructuredGrid>")?;
    writeln!(
        w,
        "    <Piece NumberOfPoints=\"{n}\" NumberOfCells=\"{}\">",
        cells.types.len()
    )?;
    writeln!(w, "      <PointData>")?;
    for (name, comps, values) in point_data {
        write_array(
            &mut w,
            "Float64",
            name,
            *comps,
            values.iter().map(|v| v.to_string()),
        )?;
    }
    writeln!(w, "      </PointData>")?;
    writeln!(w, "      <Points>")?;
    write_array(
        &mut w,
        "Float64",
        "",
        3,
        points.iter().map(|v| v.to_string()),
    )?;
    writeln!(w, "      </Points>")?;
    writeln!(w, "      <Cells>")?;
    write_array(
        &mut w,
        "Int64",
        "connectivity",
        1,
        cells.connectivity.iter().map(|v| v.to_string()),
    )?;
    write_array(
        &mut w,
        "Int64",
        "offsets",
        1,
        cells.offsets.iter().map(|v| v.to_string()),
    )?;
    write_array(
        &mut w,
        "UInt8",
        "types",
        1,
        cells.types.iter().map(|v| v.to_string()),
    )?;
    writeln!(w, "      </Cells>")?;
    writeln!(w, "    </Piece>")?;
    writeln!(w, "  </UnstructuredGrid>")?;
    writeln!(w, "</VTKFile>")?;
    w.flush()
}

/// Write a `.pvd` collection of `(time, file)` frames (files relative to the `.pvd`).
pub fn write_pvd(path: &Path, frames: &[(f64, PathBuf)]) -> std::io::Result<()> {
    let mut w = BufWriter::new(create_replacing(path)?);
    writeln!(w, "<?xml version=\"1.0\"?>")?;
    writeln!(
        w,
        "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">"
    )?;
    writeln!(w, "  <Collection>")?;
    for (t, f) in frames {
        writeln!(
            w,
            "    <DataSet timestep=\"{t}\" group=\"\" part=\"0\" file=\"{}\"/>",
            f.display()
        )?;
    }
    writeln!(w, "  </Collection>")?;
    writeln!(w, "</VTKFile>")?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_pick_the_highest_dimension_and_skip_bad_indices() {
        let m = Mesh {
            triangles: vec![[0, 1, 2], [1, 2, 9]],
            edges: vec![[0, 1]],
            ..Mesh::default()
        };
        let c = Cells::from_mesh(Some(&m), 3);
        assert_eq!(c.types, vec![VTK_TRIANGLE]);
        assert_eq!(c.connectivity, vec![0, 1, 2]);
        assert_eq!(c.offsets, vec![3]);
        let c = Cells::from_mesh(None, 2);
        assert_eq!(c.types, vec![VTK_VERTEX, VTK_VERTEX]);
        assert_eq!(c.offsets, vec![1, 2]);
    }

    #[test]
    fn vtu_and_pvd_are_well_formed_and_hold_exact_values() {
        let dir = std::env::temp_dir().join(format!("canape-vtk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = Mesh {
            tetrahedra: vec![[0, 1, 2, 3]],
            ..Mesh::default()
        };
        let x = [
            0.0,
            0.0,
            0.0,
            1.0,
            0.0,
            0.0,
            0.0,
            1.0,
            0.0,
            0.1,
            0.2,
            1.0 / 3.0,
        ];
        let v = [0.5; 12];
        let p = dir.join("a_0.vtu");
        write_vtu(
            &p,
            &x,
            &Cells::from_mesh(Some(&m), 4),
            &[("velocity", 3, &v)],
        )
        .unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("NumberOfPoints=\"4\" NumberOfCells=\"1\""));
        assert!(text.contains("Name=\"velocity\" NumberOfComponents=\"3\""));
        assert!(text.contains(&(1.0f64 / 3.0).to_string()));
        // every opened element is closed
        for tag in [
            "VTKFile",
            "UnstructuredGrid",
            "Piece",
            "PointData",
            "Points",
            "Cells",
        ] {
            assert_eq!(
                text.matches(&format!("<{tag}")).count(),
                text.matches(&format!("</{tag}>")).count(),
                "{tag}"
            );
        }
        assert_eq!(
            text.matches("<DataArray").count(),
            text.matches("</DataArray>").count()
        );
        let pvd = dir.join("a.pvd");
        write_pvd(&pvd, &[(0.0, "a_0.vtu".into()), (0.01, "a_1.vtu".into())]).unwrap();
        let t = std::fs::read_to_string(&pvd).unwrap();
        assert!(t.contains("timestep=\"0.01\"") && t.contains("file=\"a_1.vtu\""));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
