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

use canape_core::component::Topology;
use canape_core::data::{DataKind, DataTable, Value};
use canape_core::impl_component;
use canape_core::mesh::{flatten, flatten_points, Mesh};
use canape_core::scene::InitContext;

/// Whether triangle `t` (three points in a cube's unit frame, single precision values held in
/// f64) meets the cube [−½, ½]³ (Green & Hatch, "Fast polygon-cube intersection testing",
/// Graphics Gems V), in its order of tests.
fn triangle_meets_cube(t: &[[f64; 3]; 3]) -> bool {
    match trivial(t) {
        Some(v) => v,
        None => polygon_meets_cube(t, normal(t)),
    }
}

/// Outcode of a point against the 6 face planes (bits set for the planes it is outside of,
/// among `mask`).
fn face_planes(p: &[f64; 3], mask: u32) -> u32 {
    let mut oc = 0;
    for (k, v) in p.iter().enumerate() {
        let (pb, nb) = (1 << (2 * k), 1 << (2 * k + 1));
        if mask & (pb | nb) != 0 {
            if mask & pb != 0 && *v > 0.5 {
                oc |= pb;
            } else if mask & nb != 0 && *v < -0.5 {
                oc |= nb;
            }
        }
    }
    oc
}

fn edge_planes(p: &[f64; 3], mask: u32) -> u32 {
    let vals = [
        p[0] + p[1],
        p[0] - p[1],
        p[0] + p[2],
        p[0] - p[2],
        p[1] + p[2],
        p[1] - p[2],
    ];
    let mut oc = 0;
    for (k, v) in vals.iter().enumerate() {
        let (pb, nb) = (1 << (2 * k), 1 << (2 * k + 1));
        if mask & (pb | nb) != 0 {
            if mask & pb != 0 && *v > 1.0 {
                oc |= pb;
            } else if mask & nb != 0 && *v < -1.0 {
                oc |= nb;
            }
        }
    }
    oc
}

fn corner_planes(p: &[f64; 3], mask: u32) -> u32 {
    let vals = [
        p[0] + p[1] + p[2],
        p[0] + p[1] - p[2],
        p[0] - p[1] + p[2],
        p[0] - p[1] - p[2],
    ];
    let mut oc = 0;
    for (k, v) in vals.iter().enumerate() {
        let (pb, nb) = (1 << (2 * k), 1 << (2 * k + 1));
        if mask & (pb | nb) != 0 {
            if mask & pb != 0 && *v > 1.5 {
                oc |= pb;
            } else if mask & nb != 0 && *v < -1.5 {
                oc |= nb;
            }
        }
    }
    oc
}

/// Some(true): a vertex inside; Some(false): all outside one face, edge or corner plane.
fn trivial(t: &[[f64; 3]; 3]) -> Option<bool> {
    let all = u32::MAX;
    let mut cum = all;
    for v in t {
        let fb = face_planes(v, all);
        if fb == 0 {
            return Some(true);
        }
        cum &= fb;
    }
    if cum != 0 {
        return Some(false);
    }
    for planes in [edge_planes as fn(&[f64; 3], u32) -> u32, corner_planes] {
        let mut cum = all;
        for v in t {
            cum = planes(v, cum);
            if cum == 0 {
                break;
            }
        }
        if cum != 0 {
            return Some(false);
        }
    }
    None
}

fn sign(x: f64) -> f64 {
    if x < 0.0 {
        -1.0
    } else {
        1.0
    }
}

fn segment_meets_cube(v0: &[f64; 3], v1: &[f64; 3]) -> bool {
    let e = [v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]];
    let s = e.map(sign);
    for i in 0..3 {
        if v0[i] * s[i] > 0.5 || v1[i] * s[i] < -0.5 {
            return false;
        }
    }
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let a = e[i2] * v0[i1] - e[i1] * v0[i2];
        let b = 0.5 * (e[i2] * s[i1] + e[i1] * s[i2]);
        if a * a > b * b {
            return false;
        }
    }
    true
}

fn normal(t: &[[f64; 3]; 3]) -> [f64; 3] {
    let a = [t[1][0] - t[0][0], t[1][1] - t[0][1], t[1][2] - t[0][2]];
    let b = [t[2][0] - t[0][0], t[2][1] - t[0][1], t[2][2] - t[0][2]];
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Crossings of the polygon around `p` in the plane dropping the normal's largest axis.
fn polygon_contains(t: &[[f64; 3]; 3], n: &[f64; 3], p: &[f64; 3]) -> bool {
    let an = n.map(f64::abs);
    let max2 = |o: usize| if an[o] > an[o + 1] { o } else { o + 1 };
    let z = if an[0] > an[2] { max2(0) } else { max2(1) };
    let (xa, ya) = if n[z] < 0.0 {
        ((z + 2) % 3, (z + 1) % 3)
    } else {
        ((z + 1) % 3, (z + 2) % 3)
    };
    let side = |a: f64, b: f64, x: f64| i32::from(b > x) - i32::from(a > x);
    let mut count = 0;
    for i in 0..3 {
        let (v, w) = (&t[i], &t[(i + 1) % 3]);
        let xd = side(v[xa], w[xa], p[xa]);
        if xd != 0 {
            if side(v[ya], w[ya], p[ya]) != 0 {
                let xdf = f64::from(xd);
                if xdf * (p[xa] - v[xa]) * (w[ya] - v[ya])
                    <= xdf * (p[ya] - v[ya]) * (w[xa] - v[xa])
                {
                    count += xd;
                }
            } else if v[ya] <= p[ya] {
                count += xd;
            }
        }
    }
    count != 0
}

fn polygon_meets_cube(t: &[[f64; 3]; 3], n: [f64; 3]) -> bool {
    for i in 0..3 {
        if segment_meets_cube(&t[i], &t[(i + 1) % 3]) {
            return true;
        }
    }
    if n == [0.0; 3] {
        return false;
    }
    let d = n.map(sign);
    let tt = (n[0] * t[0][0] + n[1] * t[0][1] + n[2] * t[0][2])
        / (n[0] * d[0] + n[1] * d[1] + n[2] * d[2]);
    if (tt + 0.5) * (tt - 0.5) > 0.0 {
        return false;
    }
    polygon_contains(t, &n, &d.map(|c| c * tt))
}

/// A regular grid of `n` vertices per axis from `min` with spacing `d` (SOFA's
/// RegularGridTopology as a sparse grid uses it: `setSize(n)`, `setPos(min, max)`), its cells
/// numbered x fastest.
#[derive(Clone, Debug, PartialEq)]
pub struct RegularGrid {
    pub n: [usize; 3],
    pub min: [f64; 3],
    pub d: [f64; 3],
}

impl RegularGrid {
    /// The grid spanning `min`..`max` with `n` vertices per axis (each at least 2):
    /// `d = (max − min)/(n − 1)`.
    pub fn new(n: [usize; 3], min: [f64; 3], max: [f64; 3]) -> Self {
        let n = n.map(|v| v.max(2));
        RegularGrid {
            n,
            min,
            d: std::array::from_fn(|a| (max[a] - min[a]) / (n[a] - 1) as f64),
        }
    }
    /// Cells per axis.
    pub fn cells(&self) -> [usize; 3] {
        self.n.map(|v| v - 1)
    }
    /// Number of cells.
    pub fn nb_cells(&self) -> usize {
        let c = self.cells();
        c[0] * c[1] * c[2]
    }
    /// Index of cell (x, y, z).
    pub fn cube(&self, x: usize, y: usize, z: usize) -> usize {
        let c = self.cells();
        x + c[0] * (y + c[1] * z)
    }
    /// Coordinates of cell `c`.
    pub fn coord(&self, c: usize) -> [usize; 3] {
        let nc = self.cells();
        [c % nc[0], (c / nc[0]) % nc[1], c / (nc[0] * nc[1])]
    }
    /// Vertex (i, j, k): `min + d·(i, j, k)` per axis.
    pub fn point(&self, i: usize, j: usize, k: usize) -> [f64; 3] {
        [
            self.min[0] + self.d[0] * i as f64,
            self.min[1] + self.d[1] * j as f64,
            self.min[2] + self.d[2] * k as f64,
        ]
    }
    /// The eight corners of cell `c` in SOFA's hexahedron order: (x,y,z), (x+1,y,z),
    /// (x+1,y+1,z), (x,y+1,z), then the same at z+1.
    pub fn corners(&self, c: usize) -> [[f64; 3]; 8] {
        let [x, y, z] = self.coord(c);
        HEXA_CORNERS.map(|[i, j, k]| self.point(x + i, y + j, z + k))
    }
    /// The point's grid coordinates and the cell indices below them, as
    /// RegularGridTopology::findCube computes them: `((p − p0)·d)·(1/(d·d))` per axis, and the
    /// index by SOFA's `int(x + 1000000) − 1000000` (a floor for the values of a grid).
    fn local(&self, p: &[f64; 3]) -> ([f64; 3], [i64; 3]) {
        let x: [f64; 3] = std::array::from_fn(|a| {
            ((p[a] - self.min[a]) * self.d[a]) * (1.0 / (self.d[a] * self.d[a]))
        });
        // `as` saturates (NaN gives 0): a degenerate grid puts every point outside
        let i = x.map(|v| (v + 1_000_000.0) as i64 - 1_000_000);
        (x, i)
    }
    /// RegularGridTopology::findCube: the cell holding `p` and the point's coordinates in it
    /// (in [0, 1)), or None outside the grid.
    pub fn find_cube(&self, p: &[f64; 3]) -> Option<(usize, [f64; 3])> {
        let (x, i) = self.local(p);
        let nc = self.cells();
        if (0..3).any(|a| i[a] < 0 || i[a] >= nc[a] as i64) {
            return None;
        }
        let c = i.map(|v| v as usize);
        Some((
            self.cube(c[0], c[1], c[2]),
            std::array::from_fn(|a| x[a] - i[a] as f64),
        ))
    }
    /// RegularGridTopology::findNearestCube: the cell of `p` clamped into the grid, with the
    /// point's coordinates relative to it (below 0 or above 1 outside the grid).
    pub fn find_nearest_cube(&self, p: &[f64; 3]) -> (usize, [f64; 3]) {
        let (x, i) = self.local(p);
        let nc = self.cells();
        let i: [i64; 3] = std::array::from_fn(|a| i[a].clamp(0, nc[a] as i64 - 1));
        let c = i.map(|v| v as usize);
        (
            self.cube(c[0], c[1], c[2]),
            std::array::from_fn(|a| x[a] - i[a] as f64),
        )
    }
}

/// Offsets of a hexahedron's corners from its cell, in SOFA's order.
pub const HEXA_CORNERS: [[usize; 3]; 8] = [
    [0, 0, 0],
    [1, 0, 0],
    [1, 1, 0],
    [0, 1, 0],
    [0, 0, 1],
    [1, 0, 1],
    [1, 1, 1],
    [0, 1, 1],
];

/// Marks a regular cell that is not in the sparse grid.
pub const NO_CELL: u32 = u32::MAX;

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
) -> Result<SparseGrid, String> {
    if points.is_empty() {
        return Err("the surface mesh has no points".into());
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
        .ok_or_else(|| {
            format!(
                "a grid of {}×{}×{} cells is more than the grid may hold",
                nc[0], nc[1], nc[2]
            )
        })?;
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
                return Err("a face uses a point beyond the mesh's points".into());
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
    mesh: Mesh,
    coefficients: Vec<f64>,
}

impl Default for SparseGridTopology {
    fn default() -> Self {
        Self::new()
    }
}

/// A closed surface to voxelise: its points and its faces as polygons, as SOFA's
/// helper::io::Mesh holds them (an OBJ file's faces in file order, n-gons kept whole).
#[derive(Clone, Debug, Default)]
pub struct Surface {
    pub points: Vec<[f64; 3]>,
    pub polygons: Vec<Vec<u32>>,
}

/// SparseGridTopology's Data (SOFA's, with MeshTopology's input surface and output cells),
/// shared with SparseGridRamificationTopology.
pub fn sparse_grid_fields() -> DataTable {
    canape_core::data::base_fields(DataTable::new())
        .with("filename", DataKind::File, "", "Filename of the mesh")
        .alias(&["fileTopology"])
        .with("n", DataKind::Ints(3), "2 2 2", "grid resolution")
        .with("min", DataKind::Reals(3), "0 0 0", "Min")
        .with("max", DataKind::Reals(3), "0 0 0", "Max")
        .with("cellWidth", DataKind::Real, "0", "if > 0 : dimension of each cell in the created grid")
        .with("nbVirtualFinerLevels", DataKind::Int, "0", "create virtual (not in the animation tree) finer sparse grids in order to dispose of finest information (useful to compute better mechanical properties for example)")
        .with("fillWeighted", DataKind::Bool, "1", "Is quantity of matter inside a cell taken into account? (.5 for boundary, 1 for inside)")
        .with("onlyInsideCells", DataKind::Bool, "0", "Select only inside cells (exclude boundary cells)")
        .with("dataResolution", DataKind::Ints(3), "0 0 0", "Dimension of the voxel File")
        .with("voxelSize", DataKind::Reals(3), "1 1 1", "Dimension of one voxel")
        .with("marchingCubeStep", DataKind::Int, "1", "Step of the Marching Cube algorithm")
        .with("convolutionSize", DataKind::Int, "0", "Dimension of the convolution kernel to smooth the voxels. 0 if no smoothing is required.")
        .with("position", DataKind::Reals(3), "", "Input mesh points (when no file is given)")
        .alias(&["points"])
        .with("triangles", DataKind::Ints(3), "", "Input mesh triangles")
        .with("quads", DataKind::Ints(4), "", "Input mesh quads")
        .output("hexahedra", DataKind::Ints(8), "Hexahedra of the grid")
        .output("edges", DataKind::Ints(2), "Edges of the grid")
}

/// Parse an OBJ file's vertices and faces, the faces kept as polygons (first index of each
/// `v/vt/vn` group, 1-based or negative from the end).
fn parse_obj_polygons(text: &str) -> Result<Surface, String> {
    let mut s = Surface::default();
    for (ln, l) in text.lines().enumerate() {
        let mut it = l.split_whitespace();
        match it.next() {
            Some("v") => {
                let v: Vec<f64> = it
                    .take(3)
                    .map(str::parse::<f64>)
                    .collect::<Result<_, _>>()
                    .map_err(|_| format!("line {}: bad vertex", ln + 1))?;
                let [x, y, z] = v[..] else {
                    return Err(format!("line {}: a vertex needs 3 coordinates", ln + 1));
                };
                s.points.push([x, y, z]);
            }
            Some("f") => {
                let mut poly = Vec::new();
                for t in it {
                    let first = t.split('/').next().unwrap_or("");
                    let i: i64 = first
                        .parse()
                        .map_err(|_| format!("line {}: bad face index", ln + 1))?;
                    let i = if i < 0 {
                        s.points.len() as i64 + i
                    } else {
                        i - 1
                    };
                    let i = u32::try_from(i)
                        .map_err(|_| format!("line {}: face index out of range", ln + 1))?;
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
pub fn load_surface(data: &DataTable) -> Result<Surface, String> {
    let file = data.str("filename");
    let surface = if file.is_empty() {
        let pts = canape_core::mesh::group_points(data.reals("position"));
        let tri: Vec<[u32; 3]> = canape_core::mesh::group(data.ints("triangles"));
        let quads: Vec<[u32; 4]> = canape_core::mesh::group(data.ints("quads"));
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
        .map_err(|e| format!("cannot read '{file}': {e}"))?;
        parse_obj_polygons(&String::from_utf8_lossy(&bytes))
            .map_err(|e| format!("cannot load '{file}': {e}"))?
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
        return Err("a face uses a point beyond the mesh's points".into());
    }
    Ok(surface)
}

/// The Data `n`, each value at least 2 (SparseGridTopology::init).
pub fn resolution(data: &DataTable) -> [usize; 3] {
    let mut n = [2usize; 3];
    for (a, v) in data.ints("n").iter().take(3).enumerate() {
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
pub fn warn_unused_bounds(data: &DataTable, ctx: &mut InitContext<'_>) {
    for unsupported in ["min", "max"] {
        if data.reals(unsupported).iter().any(|v| *v != 0.0) {
            ctx.warn(format!(
                "'{unsupported}' is not used yet: the grid spans the mesh's bounding box widened by 1 %"
            ));
        }
    }
}

impl SparseGridTopology {
    pub fn new() -> Self {
        SparseGridTopology {
            data: sparse_grid_fields(),
            mesh: Mesh::default(),
            coefficients: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.mesh = Mesh::default();
        self.coefficients.clear();
        if self.data.int("nbVirtualFinerLevels") > 0 {
            ctx.error("nbVirtualFinerLevels > 0 (coarsening from finer virtual grids) is not supported yet");
            return;
        }
        warn_unused_bounds(&self.data, ctx);
        let surface = match load_surface(&self.data) {
            Ok(s) => s,
            Err(e) => {
                ctx.error(e);
                return;
            }
        };
        let mut n = resolution(&self.data);
        let w = self.data.real("cellWidth");
        if w > 0.0 {
            n = cell_width_resolution(&surface.points, w, n);
        }
        match voxelize(
            &surface.points,
            &surface.polygons,
            n,
            self.data.bool("fillWeighted"),
            self.data.bool("onlyInsideCells"),
        ) {
            Ok(g) => {
                self.mesh = g.mesh;
                self.coefficients = g.coefficients;
            }
            Err(e) => {
                ctx.error(e);
                return;
            }
        }
        let d = &mut self.data;
        let _ = d.set_value("position", Value::Reals(flatten_points(&self.mesh.points)));
        let _ = d.set_value("hexahedra", Value::Ints(flatten(&self.mesh.hexahedra)));
        let _ = d.set_value("edges", Value::Ints(flatten(&self.mesh.edges)));
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
