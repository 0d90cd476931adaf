//! What a sparse grid is built from: its Data (the schema `SparseGridData`, declared once
//! here), the surface it voxelises and its resolution.

use crate::error::{MeshReadError, SparseGridError};
use canape_core::data::{DataKind, DataTable, Flag, Int, Ints, Real, Reals, Text};
use canape_core::scene::InitContext;

/// A closed surface to voxelise: its points and its faces as polygons, as SOFA's
/// helper::io::Mesh holds them (an OBJ file's faces in file order, n-gons kept whole).
#[derive(Clone, Debug, Default)]
pub struct Surface {
    pub points: Vec<[f64; 3]>,
    pub polygons: Vec<Vec<u32>>,
}

canape_core::data_schema! {
    /// SparseGridTopology's Data after the base Data (SOFA's, with MeshTopology's input surface
    /// and output cells), shared with SparseGridRamificationTopology: [`sparse_grid_data`]
    /// declares the table.
    pub struct SparseGridData {
        filename: Text = ("filename", DataKind::File, "", "Filename of the mesh") alias ["fileTopology"],
        n: Ints = ("n", DataKind::Ints(3), "2 2 2", "grid resolution"),
        min: Reals = ("min", DataKind::Reals(3), "0 0 0", "Min"),
        max: Reals = ("max", DataKind::Reals(3), "0 0 0", "Max"),
        cell_width: Real = ("cellWidth", DataKind::Real, "0", "if > 0 : dimension of each cell in the created grid"),
        nb_virtual_finer_levels: Int = ("nbVirtualFinerLevels", DataKind::Int, "0", "create virtual (not in the animation tree) finer sparse grids in order to dispose of finest information (useful to compute better mechanical properties for example)"),
        fill_weighted: Flag = ("fillWeighted", DataKind::Bool, "1", "Is quantity of matter inside a cell taken into account? (.5 for boundary, 1 for inside)"),
        only_inside_cells: Flag = ("onlyInsideCells", DataKind::Bool, "0", "Select only inside cells (exclude boundary cells)"),
        data_resolution: Ints = ("dataResolution", DataKind::Ints(3), "0 0 0", "Dimension of the voxel File"),
        voxel_size: Reals = ("voxelSize", DataKind::Reals(3), "1 1 1", "Dimension of one voxel"),
        marching_cube_step: Int = ("marchingCubeStep", DataKind::Int, "1", "Step of the Marching Cube algorithm"),
        convolution_size: Int = ("convolutionSize", DataKind::Int, "0", "Dimension of the convolution kernel to smooth the voxels. 0 if no smoothing is required."),
        position: Reals = ("position", DataKind::Reals(3), "", "Input mesh points (when no file is given)") alias ["points"],
        triangles: Ints = ("triangles", DataKind::Ints(3), "", "Input mesh triangles"),
        quads: Ints = ("quads", DataKind::Ints(4), "", "Input mesh quads"),
        hexahedra: Ints => ("hexahedra", DataKind::Ints(8), "Hexahedra of the grid"),
        edges: Ints => ("edges", DataKind::Ints(2), "Edges of the grid"),
    }
}

/// A sparse grid's Data table: the base Data, then [`SparseGridData`].
pub fn sparse_grid_data() -> (DataTable, SparseGridData) {
    SparseGridData::declare(canape_core::data::base_fields(DataTable::new()))
}

/// Parse an OBJ file's vertices and faces, the faces kept as polygons (first index of each
/// `v/vt/vn` group, 1-based or negative from the end).
fn parse_obj_polygons(text: &str) -> Result<Surface, MeshReadError> {
    let mut s = Surface::default();
    for (ln, l) in text.lines().enumerate() {
        let mut it = l.split_whitespace();
        match it.next() {
            Some("v") => {
                let v: Vec<f64> = it
                    .take(3)
                    .map(str::parse::<f64>)
                    .collect::<Result<_, _>>()
                    .map_err(|_| MeshReadError::at_line(ln + 1, "bad vertex"))?;
                let [x, y, z] = v[..] else {
                    return Err(MeshReadError::at_line(
                        ln + 1,
                        "a vertex needs 3 coordinates",
                    ));
                };
                s.points.push([x, y, z]);
            }
            Some("f") => {
                let mut poly = Vec::new();
                for t in it {
                    let first = t.split('/').next().unwrap_or("");
                    let i: i64 = first
                        .parse()
                        .map_err(|_| MeshReadError::at_line(ln + 1, "bad face index"))?;
                    let i = if i < 0 {
                        s.points.len() as i64 + i
                    } else {
                        i - 1
                    };
                    let i = u32::try_from(i)
                        .map_err(|_| MeshReadError::at_line(ln + 1, "face index out of range"))?;
                    poly.push(i);
                }
                s.polygons.push(poly);
            }
            _ => {}
        }
    }
    Ok(s)
}

/// The surface a sparse grid voxelises: the file `filename` when set (OBJ faces kept as
/// polygons; other formats as their triangles then quads), else the input `position`,
/// `triangles` and `quads`. Every face index is checked against the points.
pub fn load_surface(data: &DataTable, h: SparseGridData) -> Result<Surface, SparseGridError> {
    let file = data.get(h.filename);
    let surface = if file.is_empty() {
        let pts = canape_core::mesh::group_points(data.get(h.position));
        let tri: Vec<[u32; 3]> = canape_core::mesh::group(data.get(h.triangles));
        let quads: Vec<[u32; 4]> = canape_core::mesh::group(data.get(h.quads));
        Surface {
            points: pts,
            polygons: tri
                .iter()
                .map(|t| t.to_vec())
                .chain(quads.iter().map(|q| q.to_vec()))
                .collect(),
        }
    } else if file.to_ascii_lowercase().ends_with(".obj") {
        let bytes = crate::files::read_capped(
            std::path::Path::new(file),
            crate::files::MAX_DATA_FILE_BYTES,
        )
        .map_err(|error| MeshReadError::Read {
            path: file.to_string(),
            error,
        })?;
        parse_obj_polygons(&String::from_utf8_lossy(&bytes)).map_err(|error| {
            MeshReadError::Load {
                path: file.to_string(),
                error: Box::new(error),
            }
        })?
    } else {
        // voxel and .raw files are not read yet: the reader names the formats it knows
        let m = crate::loaders::read_mesh_file(file)?;
        Surface {
            polygons: m
                .triangles
                .iter()
                .map(|t| t.to_vec())
                .chain(m.quads.iter().map(|q| q.to_vec()))
                .collect(),
            points: m.points,
        }
    };
    if surface
        .polygons
        .iter()
        .flatten()
        .any(|&v| v as usize >= surface.points.len())
    {
        return Err(SparseGridError::FaceOutOfRange);
    }
    Ok(surface)
}

/// The Data `n`, each value at least 2 (SparseGridTopology::init).
pub fn resolution(data: &DataTable, h: SparseGridData) -> [usize; 3] {
    let mut n = [2usize; 3];
    for (a, v) in data.get(h.n).iter().take(3).enumerate() {
        n[a] = (*v as usize).max(2);
    }
    n
}

/// SOFA's `cellWidth` rule for a grid built directly: `n = ⌈(max − min)/w⌉ + 1` over the
/// bounding box widened by 1 % on each side.
pub fn cell_width_resolution(points: &[[f64; 3]], w: f64, n: [usize; 3]) -> [usize; 3] {
    let Some(first) = points.first() else {
        return n;
    };
    let mut lo = *first;
    let mut hi = *first;
    for p in points {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    std::array::from_fn(|a| {
        let ext = (hi[a] - lo[a]) * 1.02;
        // a huge ratio saturates, and voxelize then reports the grid as too large
        ((ext / w).ceil() as usize).saturating_add(1).max(2)
    })
}

/// Warn that `min`/`max` are not used (the grid spans the mesh's widened bounding box).
pub fn warn_unused_bounds(data: &DataTable, h: SparseGridData, ctx: &mut InitContext<'_>) {
    for (unsupported, bound) in [("min", h.min), ("max", h.max)] {
        if data.get(bound).iter().any(|v| *v != 0.0) {
            ctx.warn(format!(
                "'{unsupported}' is not used yet: the grid spans the mesh's bounding box widened by 1 %"
            ));
        }
    }
}
