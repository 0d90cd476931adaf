//! SparseGridTopology: the cells of a regular grid that a closed surface mesh occupies, as
//! SOFA's Sofa/Component/Topology/Container/Grid/.../SparseGridTopology.cpp builds them (the
//! finest level, no virtual finer levels).
//!
//! The grid spans the mesh's bounding box widened by 1 % on each side, with `n` vertices per
//! axis. Cells holding a mesh vertex, and cells a triangle crosses (Green and Hatch's
//! polygon–cube test on the cell mapped to [−½, ½]³, in single precision as SOFA), are
//! boundary cells; a flood fill from the grid's outer layer marks the outside; what remains is
//! inside. Hexahedra are the boundary cells then the inside cells, each in cell order (x
//! fastest); points are the corners of kept cells, numbered in lexicographic order of their
//! coordinates (x, then y, then z); edges are the hexahedra's twelve, each once, in order of
//! their sorted index pair. Boundary cells carry a stiffness and mass coefficient of ½ with
//! `fillWeighted` (HexahedronFEMForceField scales its elements by it).
//!
//! [`voxelize`] also hands out the regular grid ([`RegularGrid`], SOFA's RegularGridTopology
//! with its `findCube`/`findNearestCube`), the regular-to-sparse cell maps and the cell types,
//! which SparseGridRamificationTopology (`sparse_grid_ramification`) builds its levels from; the
//! Data table, the surface reading and the resolution are shared with it too.
//!
//! The triangle–cube test is in `cube_test`, the regular grid in `regular_grid`, the Data table
//! and the surface reading in `input`; this file holds the voxelisation and the component.

mod cube_test;
mod input;
mod regular_grid;

use cube_test::triangle_meets_cube;
pub use input::{
    cell_width_resolution, load_surface, resolution, sparse_grid_data, warn_unused_bounds,
    SparseGridData, Surface,
};
pub use regular_grid::{RegularGrid, HEXA_CORNERS, NO_CELL};

use crate::error::SparseGridError;
use canape_core::component::Topology;
use canape_core::data::{DataTable, Value};
use canape_core::impl_component;
use canape_core::mesh::{flatten, flatten_points, Mesh};
use canape_core::scene::InitContext;

/// The voxelised grid: hexahedra, points, edges, the per-hexahedron coefficient, and the
/// regular grid with its cell maps and types.
pub struct SparseGrid {
    pub mesh: Mesh,
    pub coefficients: Vec<f64>,
    pub boundary_cells: usize,
    pub inside_cells: usize,
    /// The regular grid the cells belong to.
    pub grid: RegularGrid,
    /// Per regular cell, its sparse (hexahedron) index, or [`NO_CELL`] when it is not kept.
    pub reg2sp: Vec<u32>,
    /// Per sparse cell, its regular cell.
    pub sp2reg: Vec<usize>,
    /// Per sparse cell, whether it is a boundary cell (SOFA's BOUNDARY type; else INSIDE).
    pub boundary: Vec<bool>,
}

/// Voxelise the closed surface (`points`, `polygons`) on a grid of `n` vertices per axis.
pub fn voxelize(
    points: &[[f64; 3]],
    polygons: &[Vec<u32>],
    n: [usize; 3],
    fill_weighted: bool,
    only_inside: bool,
) -> Result<SparseGrid, SparseGridError> {
    if points.is_empty() {
        return Err(SparseGridError::NoPoints);
    }
    let mut lo = points[0];
    let mut hi = points[0];
    for p in points {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    let min: [f64; 3] = std::array::from_fn(|a| lo[a] - (hi[a] - lo[a]) / 100.0);
    let max: [f64; 3] = std::array::from_fn(|a| hi[a] + (hi[a] - lo[a]) / 100.0);
    let grid = RegularGrid::new(n, min, max);
    let nc = grid.cells();
    let cells = nc
        .iter()
        .try_fold(1usize, |acc, &c| acc.checked_mul(c))
        .filter(|&c| c <= canape_core::state::MAX_POINTS)
        .ok_or(SparseGridError::GridTooLarge { cells: nc })?;
    let pos = |i: usize, j: usize, k: usize| grid.point(i, j, k);
    let cidx = |x: usize, y: usize, z: usize| grid.cube(x, y, z);
    let coord = |c: usize| {
        let [x, y, z] = grid.coord(c);
        (x, y, z)
    };
    #[derive(Clone, Copy, PartialEq)]
    enum Kind {
        Inside,
        Outside,
        Boundary,
    }
    let mut kind = vec![Kind::Inside; cells];
    // SOFA finds a vertex's cell with RegularGridTopology::findCube
    let cell_of = |p: &[f64; 3]| grid.find_cube(p).map(|(c, _)| c);
    let vertex_cell: Vec<Option<usize>> = points.iter().map(cell_of).collect();
    for c in vertex_cell.iter().flatten() {
        kind[*c] = Kind::Boundary;
    }
    for poly in polygons {
        for j in 2..poly.len() {
            let tri = [poly[0], poly[j - 1], poly[j]];
            if tri.iter().any(|&v| v as usize >= points.len()) {
                return Err(SparseGridError::FaceOutOfRange);
            }
            let vc: Vec<Option<usize>> = tri.iter().map(|&v| vertex_cell[v as usize]).collect();
            let Some(cs) = vc.iter().copied().collect::<Option<Vec<usize>>>() else {
                continue;
            };
            if cs[0] == cs[1] && cs[1] == cs[2] && kind[cs[0]] == Kind::Boundary {
                continue;
            }
            let cc: Vec<(usize, usize, usize)> = cs.iter().map(|&c| coord(c)).collect();
            let (x0, x1) = (
                cc.iter().map(|c| c.0).min().unwrap(),
                cc.iter().map(|c| c.0).max().unwrap(),
            );
            let (y0, y1) = (
                cc.iter().map(|c| c.1).min().unwrap(),
                cc.iter().map(|c| c.1).max().unwrap(),
            );
            let (z0, z1) = (
                cc.iter().map(|c| c.2).min().unwrap(),
                cc.iter().map(|c| c.2).max().unwrap(),
            );
            for x in x0..=x1 {
                for y in y0..=y1 {
                    for z in z0..=z1 {
                        let ci = cidx(x, y, z);
                        if kind[ci] == Kind::Boundary {
                            continue;
                        }
                        let (c0, c6) = (pos(x, y, z), pos(x + 1, y + 1, z + 1));
                        let diag: [f64; 3] = std::array::from_fn(|a| c6[a] - c0[a]);
                        let centre: [f64; 3] = std::array::from_fn(|a| c0[a] + diag[a] * 0.5);
                        let t: [[f64; 3]; 3] = tri.map(|v| {
                            let p = points[v as usize];
                            std::array::from_fn(|a| ((p[a] - centre[a]) / diag[a]) as f32 as f64)
                        });
                        if triangle_meets_cube(&t) {
                            kind[ci] = Kind::Boundary;
                        }
                    }
                }
            }
        }
    }
    // flood fill from the outer layer (6-neighbours), stopped by the boundary
    let mut seen = vec![false; cells];
    let mut stack: Vec<(usize, usize, usize)> = Vec::new();
    for x in 0..nc[0] {
        for y in 0..nc[1] {
            for z in 0..nc[2] {
                if x == 0 || x == nc[0] - 1 || y == 0 || y == nc[1] - 1 || z == 0 || z == nc[2] - 1
                {
                    stack.push((x, y, z));
                }
            }
        }
    }
    while let Some((x, y, z)) = stack.pop() {
        let ci = cidx(x, y, z);
        if seen[ci] || kind[ci] == Kind::Boundary {
            continue;
        }
        seen[ci] = true;
        kind[ci] = Kind::Outside;
        let (x, y, z) = (x as i64, y as i64, z as i64);
        for (dx, dy, dz) in [
            (-1, 0, 0),
            (1, 0, 0),
            (0, -1, 0),
            (0, 1, 0),
            (0, 0, -1),
            (0, 0, 1),
        ] {
            let (a, b, c) = (x + dx, y + dy, z + dz);
            if a >= 0
                && b >= 0
                && c >= 0
                && (a as usize) < nc[0]
                && (b as usize) < nc[1]
                && (c as usize) < nc[2]
            {
                stack.push((a as usize, b as usize, c as usize));
            }
        }
    }
    // kept cells: boundary ones, then inside ones
    let mut kept: Vec<(usize, bool)> = Vec::new();
    if !only_inside {
        kept.extend(
            (0..cells)
                .filter(|&c| kind[c] == Kind::Boundary)
                .map(|c| (c, true)),
        );
    }
    kept.extend(
        (0..cells)
            .filter(|&c| kind[c] == Kind::Inside)
            .map(|c| (c, false)),
    );
    // points: corners of kept cells, by lexicographic order of their coordinates
    let key = |p: &[f64; 3]| p.map(OrderedF64);
    let mut corner_set = std::collections::BTreeSet::new();
    for &(c, _) in &kept {
        let (x, y, z) = coord(c);
        for dx in 0..2 {
            for dy in 0..2 {
                for dz in 0..2 {
                    corner_set.insert(key(&pos(x + dx, y + dy, z + dz)));
                }
            }
        }
    }
    let pts: Vec<[f64; 3]> = corner_set.iter().map(|k| k.map(|v| v.0)).collect();
    let index: std::collections::BTreeMap<[OrderedF64; 3], u32> = corner_set
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, i as u32))
        .collect();
    let id = |x: usize, y: usize, z: usize| index[&key(&pos(x, y, z))];
    let hexahedra: Vec<[u32; 8]> = kept
        .iter()
        .map(|&(c, _)| {
            let (x, y, z) = coord(c);
            [
                id(x, y, z),
                id(x + 1, y, z),
                id(x + 1, y + 1, z),
                id(x, y + 1, z),
                id(x, y, z + 1),
                id(x + 1, y, z + 1),
                id(x + 1, y + 1, z + 1),
                id(x, y + 1, z + 1),
            ]
        })
        .collect();
    let mut edge_set = std::collections::BTreeSet::new();
    for h in &hexahedra {
        for (a, b) in [
            (0, 1),
            (3, 2),
            (4, 5),
            (7, 6),
            (0, 3),
            (1, 2),
            (4, 7),
            (5, 6),
            (0, 4),
            (1, 5),
            (3, 7),
            (2, 6),
        ] {
            let (p, q) = (h[a], h[b]);
            edge_set.insert((p.min(q), p.max(q)));
        }
    }
    let coefficients = kept
        .iter()
        .map(|&(_, boundary)| if boundary && fill_weighted { 0.5 } else { 1.0 })
        .collect();
    let boundary_cells = kept.iter().filter(|k| k.1).count();
    let mut reg2sp = vec![NO_CELL; cells];
    for (i, &(c, _)) in kept.iter().enumerate() {
        reg2sp[c] = i as u32;
    }
    Ok(SparseGrid {
        mesh: Mesh {
            points: pts,
            edges: edge_set.into_iter().map(|(a, b)| [a, b]).collect(),
            hexahedra,
            ..Mesh::default()
        },
        coefficients,
        boundary_cells,
        inside_cells: kept.len() - boundary_cells,
        reg2sp,
        sp2reg: kept.iter().map(|k| k.0).collect(),
        boundary: kept.iter().map(|k| k.1).collect(),
        grid,
    })
}

/// f64 ordered as SOFA's Vec comparison does for the finite coordinates of a grid.
#[derive(Clone, Copy, Debug, PartialEq)]
struct OrderedF64(f64);
impl Eq for OrderedF64 {}
impl PartialOrd for OrderedF64 {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for OrderedF64 {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// The SparseGridTopology component.
#[derive(Clone)]
pub struct SparseGridTopology {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: SparseGridData,
    mesh: Mesh,
    coefficients: Vec<f64>,
}

impl Default for SparseGridTopology {
    fn default() -> Self {
        Self::new()
    }
}

impl SparseGridTopology {
    pub fn new() -> Self {
        let (data, d) = sparse_grid_data();
        SparseGridTopology {
            data,
            d,
            mesh: Mesh::default(),
            coefficients: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.mesh = Mesh::default();
        self.coefficients.clear();
        let h = self.d;
        if self.data.get(h.nb_virtual_finer_levels) > 0 {
            ctx.error("nbVirtualFinerLevels > 0 (coarsening from finer virtual grids) is not supported yet");
            return;
        }
        warn_unused_bounds(&self.data, h, ctx);
        let surface = match load_surface(&self.data, h) {
            Ok(s) => s,
            Err(e) => {
                ctx.error(e.to_string());
                return;
            }
        };
        let mut n = resolution(&self.data, h);
        let w = self.data.get(h.cell_width);
        if w > 0.0 {
            n = cell_width_resolution(&surface.points, w, n);
        }
        match voxelize(
            &surface.points,
            &surface.polygons,
            n,
            self.data.get(h.fill_weighted),
            self.data.get(h.only_inside_cells),
        ) {
            Ok(g) => {
                self.mesh = g.mesh;
                self.coefficients = g.coefficients;
            }
            Err(e) => {
                ctx.error(e.to_string());
                return;
            }
        }
        let d = &mut self.data;
        let _ = d.put(h.position, Value::Reals(flatten_points(&self.mesh.points)));
        let _ = d.put(h.hexahedra, Value::Ints(flatten(&self.mesh.hexahedra)));
        let _ = d.put(h.edges, Value::Ints(flatten(&self.mesh.edges)));
    }
}

impl_component!(SparseGridTopology, "SparseGridTopology", init);

impl Topology for SparseGridTopology {
    fn mesh(&self) -> &Mesh {
        &self.mesh
    }
    fn mesh_mut(&mut self) -> &mut Mesh {
        &mut self.mesh
    }
    fn hexahedron_coefficients(&self) -> Option<&[f64]> {
        Some(&self.coefficients)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_test_accepts_and_rejects() {
        // a vertex inside; all outside one face; a big triangle through the centre
        assert!(triangle_meets_cube(&[
            [0.1, 0.1, 0.1],
            [3.0, 0.0, 0.0],
            [0.0, 3.0, 0.0]
        ]));
        assert!(!triangle_meets_cube(&[
            [0.6, 0.0, 0.0],
            [0.7, 1.0, 0.0],
            [0.9, 0.0, 1.0]
        ]));
        assert!(triangle_meets_cube(&[
            [-5.0, -5.0, 0.0],
            [5.0, -5.0, 0.0],
            [0.0, 5.0, 0.0]
        ]));
        // a triangle near a corner but off the cube
        assert!(!triangle_meets_cube(&[
            [0.9, 0.9, 0.2],
            [0.6, 1.2, 0.2],
            [1.2, 0.6, 0.3]
        ]));
    }

    #[test]
    fn a_closed_cube_surface_voxelises_into_boundary_and_inside_cells() {
        // a closed box surface from (0,0,0) to (1,1,1) in 12 triangles, on a 6×6×6 grid: the
        // widened box gives 5 cells per axis, the middle 3×3×3 inside the surface
        let p = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
            [1.0, 1.0, 1.0],
            [0.0, 1.0, 1.0],
        ];
        let quads = [
            [0u32, 3, 2, 1],
            [4, 5, 6, 7],
            [0, 1, 5, 4],
            [1, 2, 6, 5],
            [2, 3, 7, 6],
            [3, 0, 4, 7],
        ];
        let polys: Vec<Vec<u32>> = quads.iter().map(|q| q.to_vec()).collect();
        let g = voxelize(&p, &polys, [6, 6, 6], true, false).unwrap();
        // every cell touches the box surface except the central 3×3×3
        assert_eq!(g.inside_cells, 27);
        assert_eq!(g.boundary_cells, 125 - 27);
        assert_eq!(g.mesh.hexahedra.len(), 125);
        assert_eq!(g.mesh.points.len(), 216);
        // points in lexicographic order; boundary cells weigh ½
        assert!(g.mesh.points.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(g.coefficients.iter().filter(|c| **c == 0.5).count(), 98);
        // each hexahedron has positive volume with SOFA's corner order
        for h in &g.mesh.hexahedra {
            let q = |i: usize| g.mesh.points[h[i] as usize];
            let (a, b, d, e) = (q(0), q(1), q(3), q(4));
            assert!(b[0] > a[0] && d[1] > a[1] && e[2] > a[2]);
        }
        assert_eq!(g.mesh.edges.len(), 3 * 6 * 6 * 5);
    }
}
