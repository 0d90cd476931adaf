//! SparseGridRamificationTopology: a sparse grid whose coarse cells are split ("ramified") into
//! one hexahedron per connected piece of the matter they hold, so that two parts of an object
//! that share a coarse cell without touching (the arms of a C, a snake's coils) stay apart.
//! It follows SOFA's
//! Sofa/Component/Topology/Container/Grid/src/sofa/component/topology/container/grid/SparseGridRamificationTopology.cpp.
//!
//! The finest grid is SparseGridTopology's voxelisation ([`voxelize`]). Each finest cell is one
//! *connexion*; face neighbours are connected, except two boundary cells whose common face no
//! edge of the surface crosses when `finestConnectivity` is set. With `nbVirtualFinerLevels`
//! = L > 0 the finest grid has (n − 1)·2^L + 1 vertices per axis and is coarsened L times: the
//! connexions of a coarse cell are the connected components of its children's connexions, each
//! becoming one hexahedron. Points are shared only across the faces of connected connexions, and
//! are numbered in the order of the labels that survive the merging, as SOFA does. The
//! coefficient of a coarse hexahedron is the sum of its children's over 8, with SOFA's index
//! mix-ups kept (a split cell only counts its connexion's last child; an unsplit cell reads the
//! finer level by non-ramified index): they change the stiffness and mass SOFA simulates with.
//!
//! BarycentricMapping locates its points with the grid's [`CubeLocator`]: the finest cell holding
//! the point, then the top hexahedron this cell's connexion ends in, with the coordinates of the
//! top regular cell (SOFA's `findCube` / `findNearestCube`).
//!
//! Differences from SOFA: a surface that cannot be read is an error (SOFA warns and keeps
//! unconnected cells); with `finestConnectivity` and the surface given as Data, the faces are
//! tested against the input surface (SOFA pairs the grid's own points with the input faces
//! there, and a warning says so); `min`, `max` are not used (as in SparseGridTopology).

use crate::sparse_grid::{
    cell_width_resolution, load_surface, resolution, sparse_grid_fields, voxelize,
    warn_unused_bounds, RegularGrid, Surface, NO_CELL,
};
use canape_core::component::{CubeLocator, Topology};
use canape_core::data::{DataKind, DataTable, Value};
use canape_core::impl_component;
use canape_core::mesh::{flatten, flatten_points, Mesh};
use canape_core::scene::InitContext;
use std::collections::{BTreeMap, BTreeSet};

/// No connexion / no cell.
const NONE: u32 = u32::MAX;

/// SOFA's neighbour directions, in its order: UP (+y) = 0, DOWN (−y) = 1, RIGHT (+x) = 2,
/// LEFT (−x) = 3, BEFORE (−z) = 4, BEHIND (+z) = 5; the opposite of an even direction is the
/// next one. Only the three towards lower coordinates are named here.
const DOWN: usize = 1;
const LEFT: usize = 3;
const BEFORE: usize = 4;

fn opposite(dir: usize) -> usize {
    if dir.is_multiple_of(2) {
        dir + 1
    } else {
        dir - 1
    }
}

/// A connected piece of a cell. Its id within its level is its hexahedron's index there.
#[derive(Clone, Debug, Default)]
struct Connexion {
    /// Connected connexions of the neighbour cells, per direction. SOFA keeps pointer sets,
    /// which iterate in creation order here: ascending ids.
    neighbors: [BTreeSet<u32>; 6],
    /// (child slot 0..8, finer connexion id), in the order they were gathered.
    children: Vec<(u8, u32)>,
    /// The coarser connexion holding this one ([`NONE`] at the top).
    parent: u32,
}

/// One level of the hierarchy: its regular grid, cells, connexions, hexahedra and points.
#[derive(Clone, Debug)]
struct Level {
    grid: RegularGrid,
    /// Per regular cell, its (non-ramified) cell index, or [`NO_CELL`].
    reg2sp: Vec<u32>,
    /// Per hexahedron, whether it is a boundary one (SOFA's `_types`, ramified indices).
    boundary: Vec<bool>,
    conns: Vec<Connexion>,
    /// Per cell, its connexions (a contiguous id range, one hexahedron each).
    cell_conns: Vec<std::ops::Range<u32>>,
    /// Per connexion, its cell (SOFA's `_nonRamifiedHexaIdx`).
    conn_cell: Vec<u32>,
    hexahedra: Vec<[u32; 8]>,
    points: Vec<[f64; 3]>,
    /// Stiffness and mass coefficient per hexahedron (SOFA's two arrays are equal here).
    coef: Vec<f64>,
}

/// Whether the segment meets the triangle, as SOFA's `intersectionSegmentTriangle` (Eberly's
/// test fed an end point and the full length, so the segment tested is [2·s0 − s1, s1];
/// |D·N| ≤ 1e−10 counts as parallel, hence no intersection).
fn segment_meets_triangle(s0: &[f64; 3], s1: &[f64; 3], t: [&[f64; 3]; 3]) -> bool {
    let sub = |a: &[f64; 3], b: &[f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let cross = |a: &[f64; 3], b: &[f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let dot = |a: &[f64; 3], b: &[f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let k_diff = sub(s0, t[0]);
    let e1 = sub(t[1], t[0]);
    let e2 = sub(t[2], t[0]);
    let normal = cross(&e1, &e2);
    let seg = sub(s1, s0);
    let len = dot(&seg, &seg).sqrt();
    let dir = seg.map(|c| c / len);
    let mut d_dot_n = dot(&dir, &normal);
    let sign = if d_dot_n > 1e-10 {
        1.0
    } else if d_dot_n < -1e-10 {
        d_dot_n = -d_dot_n;
        -1.0
    } else {
        return false;
    };
    let b1 = sign * dot(&dir, &cross(&k_diff, &e2));
    if b1 < 0.0 {
        return false;
    }
    let b2 = sign * dot(&dir, &cross(&e1, &k_diff));
    if b2 < 0.0 || b1 + b2 > d_dot_n {
        return false;
    }
    let q_dot_n = -sign * dot(&k_diff, &normal);
    let extent = len * d_dot_n;
    -extent <= q_dot_n && q_dot_n <= extent
}

/// SOFA's `sharingTriangle`: whether cell `cell` and its neighbour `nb` (in direction `dir` of
/// it: LEFT, DOWN or BEFORE) are connected. Cells that are not both boundary ones always are;
/// two boundary cells are when an edge of the surface (each face as an open polyline: the
/// closing edge is not tested, as in SOFA) crosses their common face.
fn sharing_face(level: &Level, test: Option<&Surface>, cell: u32, nb: u32, dir: usize) -> bool {
    let Some(surface) = test else {
        return true;
    };
    if !level.boundary[cell as usize] || !level.boundary[nb as usize] {
        return true;
    }
    let h = &level.hexahedra[cell as usize];
    let p = |k: usize| &level.points[h[k] as usize];
    let [a, b, c, d] = match dir {
        LEFT => [p(0), p(4), p(7), p(3)],
        DOWN => [p(0), p(1), p(5), p(4)],
        _ => [p(0), p(1), p(2), p(3)],
    };
    surface.polygons.iter().any(|f| {
        f.windows(2).any(|e| {
            let (s0, s1) = (
                &surface.points[e[0] as usize],
                &surface.points[e[1] as usize],
            );
            segment_meets_triangle(s0, s1, [a, b, c]) || segment_meets_triangle(s0, s1, [a, c, d])
        })
    })
}

/// The finest level: SparseGridTopology's voxelisation with one connexion per cell
/// (`findConnexionsAtFinestLevel`) when `connexions`, then, when `test` is given
/// (`finestConnectivity`), the face-crossing test between boundary cells and the points
/// renumbered over the connexions (`buildRamifiedFinestLevel`).
fn finest_level(
    surface: &Surface,
    n: [usize; 3],
    fill_weighted: bool,
    only_inside: bool,
    connexions: bool,
    test: Option<&Surface>,
) -> Result<Level, String> {
    let g = voxelize(
        &surface.points,
        &surface.polygons,
        n,
        fill_weighted,
        only_inside,
    )?;
    let nb = g.mesh.hexahedra.len();
    if nb == 0 {
        return Err("the grid has no cell: the surface occupies none of its cells".into());
    }
    let mut level = Level {
        grid: g.grid,
        reg2sp: g.reg2sp,
        boundary: g.boundary,
        conns: vec![
            Connexion {
                parent: NONE,
                ..Connexion::default()
            };
            nb
        ],
        cell_conns: (0..nb as u32).map(|i| i..i + 1).collect(),
        conn_cell: (0..nb as u32).collect(),
        hexahedra: g.mesh.hexahedra,
        points: g.mesh.points,
        coef: g.coefficients,
    };
    if !connexions {
        return Ok(level);
    }
    // face neighbours towards −x, −y, −z of every cell, regular order (x fastest)
    let [cx, cy, cz] = level.grid.cells();
    for z in 0..cz {
        for y in 0..cy {
            for x in 0..cx {
                let cell = level.reg2sp[level.grid.cube(x, y, z)];
                if cell == NO_CELL {
                    continue;
                }
                let lower = [
                    (x > 0, [x.wrapping_sub(1), y, z], LEFT),
                    (y > 0, [x, y.wrapping_sub(1), z], DOWN),
                    (z > 0, [x, y, z.wrapping_sub(1)], BEFORE),
                ];
                for (exists, [a, b, c], dir) in lower {
                    if !exists {
                        continue;
                    }
                    let nb = level.reg2sp[level.grid.cube(a, b, c)];
                    if nb != NO_CELL && sharing_face(&level, test, cell, nb, dir) {
                        level.conns[cell as usize].neighbors[dir].insert(nb);
                        level.conns[nb as usize].neighbors[opposite(dir)].insert(cell);
                    }
                }
            }
        }
    }
    if test.is_some() {
        let corners: Vec<[[f64; 3]; 8]> = level
            .hexahedra
            .iter()
            .map(|h| h.map(|v| level.points[v as usize]))
            .collect();
        let (hexahedra, points) = number(&level.conns, &level.conn_cell, &corners);
        level.hexahedra = hexahedra;
        level.points = points;
    }
    Ok(level)
}

/// Hexahedra and points from the connexions (SOFA's numbering in `buildRamifiedFinestLevel`
/// and `buildFromFiner`): hexahedron h starts with its own labels 8h..8h+8; for each connexion
/// in order, the corners of its face towards each BEFORE, DOWN and LEFT neighbour take the
/// neighbour's labels (`changeIndices`: in every hexahedron, the first corner carrying the old
/// label gets the new one); then points are numbered in increasing label order, each placed at
/// its first carrier's corner of `corners[cell]`.
fn number(
    conns: &[Connexion],
    conn_cell: &[u32],
    corners: &[[[f64; 3]; 8]],
) -> (Vec<[u32; 8]>, Vec<[f64; 3]>) {
    let nh = conns.len();
    let mut hexa: Vec<[u32; 8]> = (0..nh as u32)
        .map(|h| std::array::from_fn(|k| 8 * h + k as u32))
        .collect();
    // carriers of each label, (hexahedron, corner)
    let mut members: Vec<Vec<(u32, u8)>> = (0..8 * nh as u32)
        .map(|l| vec![(l / 8, (l % 8) as u8)])
        .collect();
    let mut change = |hexa: &mut [[u32; 8]], old: u32, new: u32| {
        if old == new {
            return;
        }
        let mut list = std::mem::take(&mut members[old as usize]);
        list.sort_unstable();
        let mut kept = Vec::new();
        let mut last = None;
        for (h, k) in list {
            if last == Some(h) {
                kept.push((h, k));
                continue;
            }
            last = Some(h);
            hexa[h as usize][k as usize] = new;
            members[new as usize].push((h, k));
        }
        members[old as usize] = kept;
    };
    const FACES: [(usize, [(usize, usize); 4]); 3] = [
        (BEFORE, [(0, 4), (1, 5), (2, 6), (3, 7)]),
        (DOWN, [(0, 3), (4, 7), (5, 6), (1, 2)]),
        (LEFT, [(0, 1), (4, 5), (7, 6), (3, 2)]),
    ];
    for (c, conn) in conns.iter().enumerate() {
        for (dir, pairs) in FACES {
            for &nb in &conn.neighbors[dir] {
                for (a, b) in pairs {
                    let (old, new) = (hexa[c][a], hexa[nb as usize][b]);
                    change(&mut hexa, old, new);
                }
            }
        }
    }
    let mut points = Vec::new();
    for carriers in members.iter().filter(|m| !m.is_empty()) {
        let p = points.len() as u32;
        for &(h, k) in carriers {
            hexa[h as usize][k as usize] = p;
        }
        let &(h0, k0) = carriers.iter().min().expect("a non-empty carrier list");
        points.push(corners[conn_cell[h0 as usize] as usize][k0 as usize]);
    }
    (hexa, points)
}

/// A coarser level from `fine` (SOFA's `SparseGridRamificationTopology::buildFromFiner`); sets
/// the parents of `fine`'s connexions.
fn coarser_level(fine: &mut Level) -> Level {
    let fg = &fine.grid;
    let n = fg.n.map(|v| v / 2 + 1);
    let min = fg.min;
    let max: [f64; 3] = std::array::from_fn(|a| min[a] + (n[a] - 1) as f64 * 2.0 * fg.d[a]);
    let grid = RegularGrid::new(n, min, max);
    let fc = fg.cells();
    let [cx, cy, cz] = grid.cells();
    let mut reg2sp = vec![NO_CELL; grid.nb_cells()];
    let mut corners = Vec::new();
    let mut children: Vec<[u32; 8]> = Vec::new();
    let mut inside_cells: Vec<bool> = Vec::new();
    // coarse cells in x-outer, z-inner order, unlike the finest level
    for i in 0..cx {
        for j in 0..cy {
            for k in 0..cz {
                let fine_cells: [u32; 8] = std::array::from_fn(|s| {
                    let (x, y, z) = (2 * i + (s & 1), 2 * j + ((s >> 1) & 1), 2 * k + (s >> 2));
                    if x < fc[0] && y < fc[1] && z < fc[2] {
                        fine.reg2sp[fg.cube(x, y, z)]
                    } else {
                        NO_CELL
                    }
                });
                let (mut inside, mut outside) = (true, true);
                for &f in &fine_cells {
                    if !(inside || outside) {
                        break;
                    }
                    if f == NO_CELL {
                        inside = false;
                    } else if fine.boundary.get(f as usize).copied().unwrap_or(true) {
                        // SOFA reads the finer types (ramified indices) with a cell index
                        inside = false;
                        outside = false;
                    } else {
                        outside = false;
                    }
                }
                if outside {
                    continue;
                }
                let r = grid.cube(i, j, k);
                reg2sp[r] = corners.len() as u32;
                corners.push(grid.corners(r));
                children.push(fine_cells);
                inside_cells.push(inside);
            }
        }
    }
    // connexions of each coarse cell: the connected components of its children's connexions
    let mut conns: Vec<Connexion> = Vec::new();
    let mut cell_conns = Vec::with_capacity(corners.len());
    let mut conn_cell = Vec::new();
    for (cell, kids) in children.iter().enumerate() {
        let mut all: Vec<(u8, u32)> = Vec::new();
        for (slot, &f) in kids.iter().enumerate() {
            if f != NO_CELL {
                all.extend(fine.cell_conns[f as usize].clone().map(|c| (slot as u8, c)));
            }
        }
        let pos: BTreeMap<u32, usize> = all.iter().enumerate().map(|(i, &(_, c))| (c, i)).collect();
        // each component takes the position of its first member
        let mut label = vec![usize::MAX; all.len()];
        for start in 0..all.len() {
            let mut stack = vec![start];
            while let Some(i) = stack.pop() {
                if label[i] != usize::MAX {
                    continue;
                }
                label[i] = start;
                for nbs in &fine.conns[all[i].1 as usize].neighbors {
                    stack.extend(nbs.iter().filter_map(|c| pos.get(c)).copied());
                }
            }
        }
        let first = conns.len() as u32;
        for start in 0..all.len() {
            if label[start] != start {
                continue;
            }
            let id = conns.len() as u32;
            let mut conn = Connexion {
                parent: NONE,
                ..Connexion::default()
            };
            for (i, &(slot, c)) in all.iter().enumerate() {
                if label[i] == start {
                    conn.children.push((slot, c));
                    fine.conns[c as usize].parent = id;
                }
            }
            conns.push(conn);
            conn_cell.push(cell as u32);
        }
        cell_conns.push(first..conns.len() as u32);
    }
    // coarse neighbours from the fine ones across coarse cells (sets: any order gives them)
    for f1 in &fine.conns {
        let c1 = f1.parent;
        if c1 == NONE {
            continue;
        }
        for dir in 0..6 {
            for &f2 in &f1.neighbors[dir] {
                let c2 = fine.conns[f2 as usize].parent;
                if c2 != NONE && conn_cell[c1 as usize] != conn_cell[c2 as usize] {
                    conns[c1 as usize].neighbors[dir].insert(c2);
                    conns[c2 as usize].neighbors[opposite(dir)].insert(c1);
                }
            }
        }
    }
    let (hexahedra, points) = number(&conns, &conn_cell, &corners);
    // children and types per hexahedron, then the coefficients, with SOFA's index mix-ups
    let mut boundary = Vec::with_capacity(conns.len());
    let mut coef = Vec::with_capacity(conns.len());
    for (cell, range) in cell_conns.iter().enumerate() {
        let kids = &children[cell];
        let per_hexa: Vec<[u32; 8]> = if range.len() == 1 {
            boundary.push(!inside_cells[cell]);
            vec![*kids]
        } else {
            range
                .clone()
                .map(|c| {
                    boundary.push(true);
                    // every child rewrites all 8 slots: only the last one survives
                    let mut fi = [NONE; 8];
                    for &(_, ch) in &conns[c as usize].children {
                        fi = kids.map(|k| {
                            if fine.conn_cell[ch as usize] == k {
                                ch
                            } else {
                                NONE
                            }
                        });
                    }
                    fi
                })
                .collect()
        };
        for fi in per_hexa {
            // SOFA sums in single precision (exact for these dyadic values)
            let sum: f32 = fi
                .iter()
                .filter(|&&f| f != NONE)
                .map(|&f| fine.coef.get(f as usize).copied().unwrap_or(0.0) as f32)
                .sum();
            coef.push(f64::from(sum / 8.0));
        }
    }
    Level {
        grid,
        reg2sp,
        boundary,
        conns,
        cell_conns,
        conn_cell,
        hexahedra,
        points,
        coef,
    }
}

/// SparseGridTopology's `findCube` / `findNearestCube` on one level: the regular cell's
/// hexahedron, or the nearest boundary hexahedron by the distance to its centre.
#[derive(Clone, Debug)]
struct CellSearch {
    grid: RegularGrid,
    reg2sp: Vec<u32>,
    boundary: Vec<bool>,
    /// Corners 0 and 6 of each hexahedron.
    diagonals: Vec<([f64; 3], [f64; 3])>,
}

impl CellSearch {
    fn new(level: &Level) -> Self {
        CellSearch {
            grid: level.grid.clone(),
            reg2sp: level.reg2sp.clone(),
            boundary: level.boundary.clone(),
            diagonals: level
                .hexahedra
                .iter()
                .map(|h| (level.points[h[0] as usize], level.points[h[6] as usize]))
                .collect(),
        }
    }
    fn find_cube(&self, p: &[f64; 3]) -> Option<(usize, [f64; 3])> {
        let (r, f) = self.grid.find_cube(p)?;
        let c = self.reg2sp[r];
        (c != NO_CELL).then_some((c as usize, f))
    }
    /// The first boundary hexahedron with the smallest single-precision distance from `p` to
    /// its centre (hexahedron 0 when none is nearer than 99999999), and `p`'s coordinates
    /// relative to its diagonal.
    fn find_nearest_cube(&self, p: &[f64; 3]) -> Option<(usize, [f64; 3])> {
        if self.diagonals.is_empty() {
            return None;
        }
        let mut best = 0;
        let mut dmin = 99_999_999.0f32;
        for (w, (p0, p6)) in self.diagonals.iter().enumerate() {
            if !self.boundary[w] {
                continue;
            }
            let c: [f64; 3] = std::array::from_fn(|a| (p0[a] + p6[a]) * 0.5);
            let r = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
            let d = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt() as f32;
            if d < dmin {
                dmin = d;
                best = w;
            }
        }
        let (p0, p6) = self.diagonals[best];
        Some((
            best,
            std::array::from_fn(|a| (p[a] - p0[a]) / (p6[a] - p0[a])),
        ))
    }
}

/// How the grid locates points (SparseGridRamificationTopology::findCube / findNearestCube).
#[derive(Clone, Debug)]
enum Locator {
    /// No virtual level: SparseGridTopology's search on the grid itself.
    Own(CellSearch),
    /// Virtual levels: the finest level's search, then the top hexahedron its cell ends in
    /// (`coarsest`, per finest cell), with the coordinates in the top regular grid.
    Virtual {
        finest: CellSearch,
        coarsest: Vec<u32>,
        top: RegularGrid,
    },
}

impl CubeLocator for Locator {
    fn find_cube(&self, p: &[f64; 3]) -> Option<(usize, [f64; 3])> {
        match self {
            Locator::Own(s) => s.find_cube(p),
            Locator::Virtual {
                finest,
                coarsest,
                top,
            } => {
                let (c0, f0) = finest.find_cube(p)?;
                // the top grid's coordinates, unless p falls just outside it (then the finest
                // level's stay, as in SOFA)
                let f = top.find_cube(p).map_or(f0, |(_, f)| f);
                Some((coarsest[c0] as usize, f))
            }
        }
    }
    fn find_nearest_cube(&self, p: &[f64; 3]) -> Option<(usize, [f64; 3])> {
        match self {
            Locator::Own(s) => s.find_nearest_cube(p),
            Locator::Virtual {
                finest,
                coarsest,
                top,
            } => {
                let (c0, _) = finest.find_nearest_cube(p)?;
                // the coordinates in the top cell nearest to p, which need not be that of the
                // hexahedron returned (SOFA)
                let (_, f) = top.find_nearest_cube(p);
                Some((coarsest[c0] as usize, f))
            }
        }
    }
}

/// What the grid is built from, besides the surface.
#[derive(Clone, Copy, Debug)]
struct Params {
    /// Vertices per axis of the grid itself.
    n: [usize; 3],
    virtual_levels: usize,
    finest_connectivity: bool,
    fill_weighted: bool,
    only_inside: bool,
}

/// The built grid: its top level and how it locates points.
struct Built {
    top: Level,
    locator: Locator,
}

/// SOFA's `init` of the class: the virtual finer levels (`buildVirtualFinerLevels`), each
/// coarsened from the previous one, the grid itself from the last one, and the coarsest parent
/// of every finest connexion (`findCoarsestParents`); without virtual levels, the finest level
/// built directly (`buildAsFinest`).
fn build(surface: &Surface, p: &Params) -> Result<Built, String> {
    let test = p.finest_connectivity.then_some(surface);
    if p.virtual_levels == 0 {
        let top = finest_level(
            surface,
            p.n,
            p.fill_weighted,
            p.only_inside,
            p.finest_connectivity,
            test,
        )?;
        let locator = Locator::Own(CellSearch::new(&top));
        return Ok(Built { top, locator });
    }
    let mut n = p.n;
    for _ in 0..p.virtual_levels {
        for v in &mut n {
            *v = v
                .checked_sub(1)
                .and_then(|c| c.checked_mul(2))
                .and_then(|c| c.checked_add(1))
                .ok_or("nbVirtualFinerLevels makes the finest grid too large")?;
        }
    }
    // the finest virtual level gets n, fillWeighted and finestConnectivity, not cellWidth nor
    // onlyInsideCells
    let mut levels = vec![finest_level(
        surface,
        n,
        p.fill_weighted,
        false,
        true,
        test,
    )?];
    for _ in 1..p.virtual_levels {
        let finer = levels.last_mut().expect("at least the finest level");
        let next = coarser_level(finer);
        levels.push(next);
    }
    let top = coarser_level(levels.last_mut().expect("at least the finest level"));
    // climb from each finest connexion to the top
    let coarsest = (0..levels[0].conns.len() as u32)
        .map(|c0| {
            let mut q = c0;
            for level in &levels {
                let parent = level.conns[q as usize].parent;
                if parent == NONE {
                    break;
                }
                q = parent;
            }
            q
        })
        .collect();
    let locator = Locator::Virtual {
        finest: CellSearch::new(&levels[0]),
        coarsest,
        top: top.grid.clone(),
    };
    Ok(Built { top, locator })
}

/// The hexahedra's edges as SOFA's `SparseGridTopology::updateEdges` lists them: the twelve
/// corner pairs (0,1), (3,2), (4,5), (7,6), (0,3), (1,2), (4,7), (5,6), (0,4), (1,5), (3,7),
/// (2,6), each pair oriented as listed, once, in increasing order.
fn grid_edges(hexahedra: &[[u32; 8]]) -> Vec<[u32; 2]> {
    const PAIRS: [(usize, usize); 12] = [
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
    ];
    let set: BTreeSet<[u32; 2]> = hexahedra
        .iter()
        .flat_map(|h| PAIRS.map(|(a, b)| [h[a], h[b]]))
        .collect();
    set.into_iter().collect()
}

/// The SparseGridRamificationTopology component.
#[derive(Clone)]
pub struct SparseGridRamificationTopology {
    data: DataTable,
    mesh: Mesh,
    coefficients: Vec<f64>,
    locator: Option<Locator>,
    /// Per top cell, its number of hexahedra (connexions).
    split: Vec<usize>,
}

impl Default for SparseGridRamificationTopology {
    fn default() -> Self {
        Self::new()
    }
}

impl SparseGridRamificationTopology {
    pub fn new() -> Self {
        let data = sparse_grid_fields().with(
            "finestConnectivity",
            DataKind::Bool,
            "1",
            "Test for connectivity at the finest level? (more precise but slower by testing all intersections between the model mesh and the faces between boundary cubes)",
        );
        SparseGridRamificationTopology {
            data,
            mesh: Mesh::default(),
            coefficients: Vec::new(),
            locator: None,
            split: Vec::new(),
        }
    }

    /// Number of top cells split into several hexahedra.
    pub fn split_cells(&self) -> usize {
        self.split.iter().filter(|&&k| k > 1).count()
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.mesh = Mesh::default();
        self.coefficients.clear();
        self.locator = None;
        self.split.clear();
        let levels = self.data.int("nbVirtualFinerLevels").max(0) as usize;
        let finest_connectivity = self.data.bool("finestConnectivity");
        warn_unused_bounds(&self.data, ctx);
        let cell_width = self.data.real("cellWidth");
        let only_inside = self.data.bool("onlyInsideCells");
        if levels > 0 && (cell_width > 0.0 || only_inside) {
            ctx.warn("with nbVirtualFinerLevels > 0, cellWidth and onlyInsideCells are not passed on to the finest level and are unused (as in SOFA)");
        }
        let surface = match load_surface(&self.data) {
            Ok(s) => s,
            Err(e) => {
                ctx.error(e);
                return;
            }
        };
        if finest_connectivity && self.data.str("filename").is_empty() {
            ctx.warn("finestConnectivity with the surface given as Data: its faces are tested against its own points here, while SOFA tests them against the grid's points");
        }
        let mut n = resolution(&self.data);
        if levels == 0 && cell_width > 0.0 {
            n = cell_width_resolution(&surface.points, cell_width, n);
        }
        let params = Params {
            n,
            virtual_levels: levels,
            finest_connectivity,
            fill_weighted: self.data.bool("fillWeighted"),
            only_inside,
        };
        let built = match build(&surface, &params) {
            Ok(b) => b,
            Err(e) => {
                ctx.error(e);
                return;
            }
        };
        let top = built.top;
        self.split = top.cell_conns.iter().map(|r| r.len()).collect();
        self.mesh = Mesh {
            edges: grid_edges(&top.hexahedra),
            points: top.points,
            hexahedra: top.hexahedra,
            ..Mesh::default()
        };
        self.coefficients = top.coef;
        self.locator = Some(built.locator);
        let d = &mut self.data;
        let _ = d.set_value("position", Value::Reals(flatten_points(&self.mesh.points)));
        let _ = d.set_value("hexahedra", Value::Ints(flatten(&self.mesh.hexahedra)));
        let _ = d.set_value("edges", Value::Ints(flatten(&self.mesh.edges)));
    }
}

impl_component!(
    SparseGridRamificationTopology,
    "SparseGridRamificationTopology",
    init
);

impl Topology for SparseGridRamificationTopology {
    fn mesh(&self) -> &Mesh {
        &self.mesh
    }
    fn mesh_mut(&mut self) -> &mut Mesh {
        &mut self.mesh
    }
    fn hexahedron_coefficients(&self) -> Option<&[f64]> {
        Some(&self.coefficients)
    }
    fn cube_locator(&self) -> Option<&dyn CubeLocator> {
        self.locator.as_ref().map(|l| l as &dyn CubeLocator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::Component;
    use canape_core::diag::Diagnostics;
    use canape_core::scene::{AnyComponent, Scene};

    /// A mesh of SOFA's share folder (../shared/sofa beside the repository), if present.
    fn sofa_mesh(name: &str) -> Option<String> {
        let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/sofa/share/mesh")
            .join(name);
        if p.exists() {
            return Some(p.to_string_lossy().into_owned());
        }
        if std::env::var_os("CANAPE_REQUIRE_SOFA").is_some() {
            panic!("CANAPE_REQUIRE_SOFA is set but {} is absent", p.display());
        }
        eprintln!("NOTICE: {} is absent; test skipped", p.display());
        None
    }

    fn surface_of(path: &str) -> Surface {
        let mut d = sparse_grid_fields();
        d.set_str("filename", path).unwrap();
        load_surface(&d).unwrap()
    }

    fn params(n: [usize; 3], virtual_levels: usize, finest_connectivity: bool) -> Params {
        Params {
            n,
            virtual_levels,
            finest_connectivity,
            fill_weighted: true,
            only_inside: false,
        }
    }

    fn close(a: [f64; 3], b: [f64; 3], tol: f64) -> bool {
        (0..3).all(|k| (a[k] - b[k]).abs() <= tol)
    }

    /// Run the component's init in a one-node scene.
    fn init(
        mut t: SparseGridRamificationTopology,
    ) -> (SparseGridRamificationTopology, Diagnostics) {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let id = scene.add_component(
            root,
            "grid",
            AnyComponent::Topology(Box::new(t.clone())),
            None,
        );
        let mut diags = Diagnostics::default();
        t.init_impl(&mut InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        });
        (t, diags)
    }

    #[test]
    fn segment_triangle_test_is_sofas() {
        let t = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let tri = [&t[0], &t[1], &t[2]];
        // through the triangle, either way
        assert!(segment_meets_triangle(
            &[0.2, 0.2, -1.0],
            &[0.2, 0.2, 1.0],
            tri
        ));
        assert!(segment_meets_triangle(
            &[0.2, 0.2, 1.0],
            &[0.2, 0.2, -1.0],
            tri
        ));
        // beside it, and parallel to it in its plane
        assert!(!segment_meets_triangle(
            &[0.8, 0.8, -1.0],
            &[0.8, 0.8, 1.0],
            tri
        ));
        assert!(!segment_meets_triangle(
            &[0.1, 0.1, 0.0],
            &[0.3, 0.1, 0.0],
            tri
        ));
        // short of the plane: the segment tested is [2·s0 − s1, s1], which reaches it
        assert!(segment_meets_triangle(
            &[0.2, 0.2, 0.5],
            &[0.2, 0.2, 1.0],
            tri
        ));
        assert!(!segment_meets_triangle(
            &[0.2, 0.2, 1.0],
            &[0.2, 0.2, 0.5],
            tri
        ));
    }

    /// Two closed boxes (quads), far apart along y, that share the single top cell of a
    /// grid with two virtual levels: the cell splits into one hexahedron per box.
    #[test]
    fn two_disjoint_parts_in_one_cell_make_two_hexahedra() {
        let mut points = Vec::new();
        let mut polygons = Vec::new();
        for (y0, y1) in [(0.0, 0.5), (3.5, 4.0)] {
            let o = points.len() as u32;
            for z in [0.0, 1.0] {
                for (x, y) in [(0.0, y0), (1.0, y0), (1.0, y1), (0.0, y1)] {
                    points.push([x, y, z]);
                }
            }
            for q in [
                [0, 3, 2, 1],
                [4, 5, 6, 7],
                [0, 1, 5, 4],
                [1, 2, 6, 5],
                [2, 3, 7, 6],
                [3, 0, 4, 7],
            ] {
                polygons.push(q.iter().map(|v| v + o).collect());
            }
        }
        let surface = Surface { points, polygons };
        let b = build(&surface, &params([2, 2, 2], 2, false)).unwrap();
        assert_eq!(b.top.cell_conns, vec![0..2]);
        assert_eq!(b.top.hexahedra.len(), 2);
        // no point shared: the two hexahedra sit on the same cell with their own corners
        assert_eq!(b.top.points.len(), 16);
        assert_eq!(b.top.hexahedra[1], std::array::from_fn(|k| 8 + k as u32));
        for k in 0..8 {
            assert_eq!(b.top.points[k], b.top.points[8 + k]);
        }
        // a point in each box lands in its own hexahedron, with the top cell's coordinates
        let (h, f) = b.locator.find_cube(&[0.5, 0.25, 0.5]).unwrap();
        assert_eq!(h, 0);
        assert!(f.iter().all(|v| (0.0..1.0).contains(v)));
        assert_eq!(b.locator.find_cube(&[0.5, 3.75, 0.5]).unwrap().0, 1);
        // between the boxes no finest cell holds the point; the nearest boundary one decides
        assert!(b.locator.find_cube(&[0.5, 3.0, 0.5]).is_none());
        assert_eq!(b.locator.find_nearest_cube(&[0.5, 3.0, 0.5]).unwrap().0, 1);
        assert_eq!(b.locator.find_nearest_cube(&[0.5, -2.0, 0.5]).unwrap().0, 0);
        // with the face test on, boundary cells connect only where an edge of the surface
        // crosses their common face: the boxes' few big quads leave cells of each box apart
        let b = build(&surface, &params([2, 2, 2], 2, true)).unwrap();
        assert!(b.top.hexahedra.len() > 2);
    }

    /// SOFA's reference scene, "UniformC": c.obj, n = 5 2 2, three virtual levels, no test at
    /// the finest level. The values come from the Python prototype that reproduces SOFA's
    /// reference positions.
    #[test]
    fn c_letter_with_three_virtual_levels() {
        let Some(path) = sofa_mesh("c.obj") else {
            return;
        };
        let b = build(&surface_of(&path), &params([5, 2, 2], 3, false)).unwrap();
        let top = &b.top;
        assert_eq!(top.grid.n, [5, 2, 2]);
        // cells x = 1, 2, 3 split into their lower and upper arms
        let per_cell: Vec<usize> = top.cell_conns.iter().map(|r| r.len()).collect();
        assert_eq!(per_cell, vec![1, 2, 2, 2]);
        assert_eq!(top.points.len(), 32);
        assert_eq!(
            top.hexahedra,
            vec![
                [0, 1, 2, 3, 4, 5, 6, 7],
                [1, 8, 9, 2, 5, 10, 11, 6],
                [1, 12, 13, 2, 5, 14, 15, 6],
                [8, 16, 17, 9, 10, 18, 19, 11],
                [12, 20, 21, 13, 14, 22, 23, 15],
                [16, 24, 25, 17, 18, 26, 27, 19],
                [20, 28, 29, 21, 22, 30, 31, 23],
            ]
        );
        // SOFA's "last child only" coefficients of split cells
        let mut coef = vec![0.3671875];
        coef.extend([0.03125; 6]);
        assert_eq!(top.coef, coef);
        assert!(top.boundary.iter().all(|b| *b));
        let tol = 1e-9;
        for (i, p) in [
            (0, [-15.70710228, -5.84699598, -1.21535346]),
            (1, [-7.87956414, -5.84699598, -1.21535346]),
            (8, [-0.052026, -5.84699598, -1.21535346]),
            (17, [7.77551214, 5.84699598, -1.21535346]),
            (31, [15.60305028, 5.84699598, 1.21535346]),
        ] {
            assert!(
                close(top.points[i], p, tol),
                "point {i}: {:?}",
                top.points[i]
            );
        }
        // mapped points: the finest cell's coarsest hexahedron, the top cell's coordinates
        for (p, hexa, f) in [
            (
                [15.295429, 3.515289, 0.718661],
                6,
                [0.9607001237811921, 0.8006064149885049, 0.7956592561969585],
            ),
            (
                [-15.118718, 1.77685, 0.0],
                0,
                [0.07516849735848129, 0.6519455465744993, 0.5],
            ),
            (
                [-0.411389, 5.485517, -0.705342],
                2,
                [0.9540899075069855, 0.9690884873842517, 0.20982021970793588],
            ),
            (
                [15.295729, -4.507213, 0.0],
                5,
                [0.9607384500077316, 0.11457019849019974, 0.5],
            ),
        ] {
            let (h, g) = b.locator.find_cube(&p).unwrap();
            assert_eq!(h, hexa, "{p:?}");
            assert!(close(g, f, 1e-12), "{p:?}: {g:?}");
        }
        // outside every finest cell: the nearest boundary cell's hexahedron, clamped top cell
        let (h, g) = b.locator.find_nearest_cube(&[0.0, -20.0, 0.0]).unwrap();
        assert_eq!(h, 3);
        assert!(close(
            g,
            [0.00664653420647543, -1.210279951312708, 0.5],
            1e-12
        ));
        let (h, g) = b.locator.find_nearest_cube(&[30.0, 0.0, 0.0]).unwrap();
        assert_eq!(h, 5);
        assert!(close(g, [2.83926918815371, 0.5, 0.5], 1e-12));
    }

    /// "UniformC and finestConnectivity": c.obj, n = 5 3 3, no virtual level, the face test at
    /// the grid itself: 16 hexahedra on 54 points (45 without the test).
    #[test]
    fn c_letter_with_finest_connectivity() {
        let Some(path) = sofa_mesh("c.obj") else {
            return;
        };
        let surface = surface_of(&path);
        let b = build(&surface, &params([5, 3, 3], 0, true)).unwrap();
        let top = &b.top;
        assert_eq!(top.hexahedra.len(), 16);
        assert_eq!(top.points.len(), 54);
        assert!(top.coef.iter().all(|c| *c == 0.5));
        assert_eq!(top.hexahedra[1], [1, 8, 9, 2, 5, 10, 11, 6]);
        assert_eq!(top.hexahedra[4], [3, 2, 20, 21, 7, 6, 22, 23]);
        assert_eq!(top.hexahedra[15], [30, 34, 35, 31, 50, 52, 53, 51]);
        let tol = 1e-9;
        for (i, p) in [
            (0, [-15.70710228, -5.84699598, -1.21535346]),
            (17, [15.60305028, 0.0, -1.21535346]),
            (31, [7.77551214, 5.84699598, 0.0]),
            (53, [15.60305028, 5.84699598, 1.21535346]),
        ] {
            assert!(
                close(top.points[i], p, tol),
                "point {i}: {:?}",
                top.points[i]
            );
        }
        // without the test (and without virtual levels): SparseGridTopology's grid
        let plain = build(&surface, &params([5, 3, 3], 0, false)).unwrap();
        let g = voxelize(&surface.points, &surface.polygons, [5, 3, 3], true, false).unwrap();
        assert_eq!(plain.top.points.len(), 45);
        assert_eq!(plain.top.points, g.mesh.points);
        assert_eq!(plain.top.hexahedra, g.mesh.hexahedra);
    }

    /// The demos' grids: hexahedra, points, split cells and the sum of the coefficients, as the
    /// prototype gives them.
    #[test]
    fn demo_grids_match_the_prototype() {
        for (file, n, hexa, points, split, coef_sum) in [
            ("snake_body.obj", [4, 12, 3], 57, 184, 1, 8.8828125),
            ("n1.obj", [4, 6, 3], 26, 66, 0, 15.75390625),
            ("n0.obj", [4, 5, 3], 24, 60, 0, 15.81640625),
            ("sofa_logo.obj", [2, 2, 2], 1, 8, 0, 0.216796875),
        ] {
            let Some(path) = sofa_mesh(file) else {
                return;
            };
            let b = build(&surface_of(&path), &params(n, 3, false)).unwrap();
            assert_eq!(b.top.hexahedra.len(), hexa, "{file}");
            assert_eq!(b.top.points.len(), points, "{file}");
            let splits = b.top.cell_conns.iter().filter(|r| r.len() > 1).count();
            assert_eq!(splits, split, "{file}");
            assert_eq!(b.top.coef.iter().sum::<f64>(), coef_sum, "{file}");
        }
    }

    #[test]
    fn component_data_and_outputs() {
        let Some(path) = sofa_mesh("c.obj") else {
            return;
        };
        let mut t = SparseGridRamificationTopology::new();
        assert!(t.data().bool("finestConnectivity"));
        assert!(t.cube_locator().is_none());
        let d = t.data_mut();
        d.set_str("fileTopology", &path).unwrap();
        d.set_str("n", "5 2 2").unwrap();
        d.set_str("nbVirtualFinerLevels", "3").unwrap();
        d.set_str("finestConnectivity", "0").unwrap();
        let (t, diags) = init(t);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(t.mesh().hexahedra.len(), 7);
        assert_eq!(t.split_cells(), 3);
        assert_eq!(t.hexahedron_coefficients().unwrap().len(), 7);
        assert_eq!(t.data().reals("position").len(), 32 * 3);
        assert_eq!(t.data().ints("hexahedra").len(), 7 * 8);
        assert!(t.cube_locator().is_some());
        // edges oriented as SOFA lists them, e.g. (3, 2) in hexahedron 0
        assert!(t.mesh().edges.contains(&[3, 2]));
        assert!(!t.mesh().edges.contains(&[2, 3]));
    }

    #[test]
    fn bad_input_is_reported_not_panicked() {
        // a missing file
        let mut t = SparseGridRamificationTopology::new();
        t.data_mut()
            .set_str("filename", "/nonexistent/surface.obj")
            .unwrap();
        t.data_mut().set_str("nbVirtualFinerLevels", "2").unwrap();
        let (t, diags) = init(t);
        assert!(diags.has_errors());
        assert!(t.mesh().hexahedra.is_empty() && t.cube_locator().is_none());
        // no file and no surface
        let (t, diags) = init(SparseGridRamificationTopology::new());
        assert!(diags.has_errors());
        assert!(t.mesh().points.is_empty());
        // points but faces out of range
        let mut t = SparseGridRamificationTopology::new();
        t.data_mut()
            .set_str("position", "0 0 0 1 0 0 0 1 0")
            .unwrap();
        t.data_mut().set_str("triangles", "0 1 7").unwrap();
        let (_, diags) = init(t);
        assert!(diags.has_errors());
        // far too many virtual levels
        let mut t = SparseGridRamificationTopology::new();
        t.data_mut()
            .set_str("position", "0 0 0 1 0 0 0 1 0 0 0 1")
            .unwrap();
        t.data_mut()
            .set_str("triangles", "0 1 2 0 1 3 0 2 3 1 2 3")
            .unwrap();
        t.data_mut().set_str("nbVirtualFinerLevels", "70").unwrap();
        let (t, diags) = init(t);
        assert!(diags.has_errors());
        assert!(t.mesh().hexahedra.is_empty());
    }
}
