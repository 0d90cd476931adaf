//! SparseGridRamificationTopology: a sparse grid whose coarse cells are split ("ramified") into
//! one hexahedron per connected piece of the matter they hold, so that two parts of an object
//! that share a coarse cell without touching (the arms of a C, a snake's coils) stay apart.
//! It follows SOFA's
//! Sofa/Component/Topology/Container/Grid/src/sofa/component/topology/container/grid/SparseGridRamificationTopology.cpp.
//!
//! The finest grid is SparseGridTopology's voxelisation ([`voxelize`](crate::sparse_grid::voxelize)). Each finest cell is one
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
//!
//! The levels (finest level, coarsening, point numbering) are built in `levels`, and the point
//! location is in `locate`; this file holds the level types, the build and the component.

mod levels;
mod locate;
#[cfg(test)]
mod tests;

use levels::{coarser_level, finest_level};
use locate::{CellSearch, Locator};

use crate::error::SparseGridError;
use crate::sparse_grid::{
    cell_width_resolution, load_surface, resolution, sparse_grid_data, warn_unused_bounds,
    RegularGrid, SparseGridData, Surface,
};
use canape_core::component::{CubeLocator, Topology};
use canape_core::data::{DataKind, DataTable, Flag, Value};
use canape_core::impl_component;
use canape_core::mesh::{flatten, flatten_points, Mesh};
use canape_core::scene::InitContext;
use std::collections::BTreeSet;

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
    /// Per regular cell, its (non-ramified) cell index, or [`NO_CELL`](crate::sparse_grid::NO_CELL).
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
fn build(surface: &Surface, p: &Params) -> Result<Built, SparseGridError> {
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
                .ok_or(SparseGridError::FinerLevelsTooLarge)?;
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

canape_core::data_schema! {
    /// What SparseGridRamificationTopology adds to the sparse grid's Data.
    pub struct RamificationData {
        finest_connectivity: Flag = ("finestConnectivity", DataKind::Bool, "1", "Test for connectivity at the finest level? (more precise but slower by testing all intersections between the model mesh and the faces between boundary cubes)"),
    }
}

/// The SparseGridRamificationTopology component.
#[derive(Clone)]
pub struct SparseGridRamificationTopology {
    data: DataTable,
    /// Typed handles to the sparse grid's Data in `data` (declared by `sparse_grid_data`).
    ds: SparseGridData,
    /// Typed handles to its own Data.
    d: RamificationData,
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
        let (data, ds) = sparse_grid_data();
        let (data, d) = RamificationData::declare(data);
        SparseGridRamificationTopology {
            data,
            ds,
            d,
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
        let h = self.ds;
        let levels = self.data.get(h.nb_virtual_finer_levels).max(0) as usize;
        let finest_connectivity = self.data.get(self.d.finest_connectivity);
        warn_unused_bounds(&self.data, h, ctx);
        let cell_width = self.data.get(h.cell_width);
        let only_inside = self.data.get(h.only_inside_cells);
        if levels > 0 && (cell_width > 0.0 || only_inside) {
            ctx.warn("with nbVirtualFinerLevels > 0, cellWidth and onlyInsideCells are not passed on to the finest level and are unused (as in SOFA)");
        }
        let surface = match load_surface(&self.data, h) {
            Ok(s) => s,
            Err(e) => {
                ctx.error(e.to_string());
                return;
            }
        };
        if finest_connectivity && self.data.get(h.filename).is_empty() {
            ctx.warn("finestConnectivity with the surface given as Data: its faces are tested against its own points here, while SOFA tests them against the grid's points");
        }
        let mut n = resolution(&self.data, h);
        if levels == 0 && cell_width > 0.0 {
            n = cell_width_resolution(&surface.points, cell_width, n);
        }
        let params = Params {
            n,
            virtual_levels: levels,
            finest_connectivity,
            fill_weighted: self.data.get(h.fill_weighted),
            only_inside,
        };
        let built = match build(&surface, &params) {
            Ok(b) => b,
            Err(e) => {
                ctx.error(e.to_string());
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
        let _ = d.put(h.position, Value::Reals(flatten_points(&self.mesh.points)));
        let _ = d.put(h.hexahedra, Value::Ints(flatten(&self.mesh.hexahedra)));
        let _ = d.put(h.edges, Value::Ints(flatten(&self.mesh.edges)));
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
