//! How a ramified sparse grid locates points (its CubeLocator).

use super::Level;
use crate::sparse_grid::{RegularGrid, NO_CELL};
use canape_core::component::CubeLocator;

/// SparseGridTopology's `findCube` / `findNearestCube` on one level: the regular cell's
/// hexahedron, or the nearest boundary hexahedron by the distance to its centre.
#[derive(Clone, Debug)]
pub(super) struct CellSearch {
    grid: RegularGrid,
    reg2sp: Vec<u32>,
    boundary: Vec<bool>,
    /// Corners 0 and 6 of each hexahedron.
    diagonals: Vec<([f64; 3], [f64; 3])>,
}

impl CellSearch {
    pub(super) fn new(level: &Level) -> Self {
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
pub(super) enum Locator {
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
