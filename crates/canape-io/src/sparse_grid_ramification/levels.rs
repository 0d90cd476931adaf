//! The levels of a ramified sparse grid: the finest level from the voxelisation and its
//! connectivity test, each coarser level from the finer one, and the point numbering.

use super::{opposite, Connexion, Level, BEFORE, DOWN, LEFT, NONE};
use crate::error::SparseGridError;
use crate::sparse_grid::{voxelize, RegularGrid, Surface, NO_CELL};
use std::collections::BTreeMap;

/// Whether the segment meets the triangle, as SOFA's `intersectionSegmentTriangle` (Eberly's
/// test fed an end point and the full length, so the segment tested is [2·s0 − s1, s1];
/// |D·N| ≤ 1e−10 counts as parallel, hence no intersection).
pub(super) fn segment_meets_triangle(s0: &[f64; 3], s1: &[f64; 3], t: [&[f64; 3]; 3]) -> bool {
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
pub(super) fn finest_level(
    surface: &Surface,
    n: [usize; 3],
    fill_weighted: bool,
    only_inside: bool,
    connexions: bool,
    test: Option<&Surface>,
) -> Result<Level, SparseGridError> {
    let g = voxelize(
        &surface.points,
        &surface.polygons,
        n,
        fill_weighted,
        only_inside,
    )?;
    let nb = g.mesh.hexahedra.len();
    if nb == 0 {
        return Err(SparseGridError::NoCell);
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
pub(super) fn coarser_level(fine: &mut Level) -> Level {
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
