//! The regular grid under a sparse grid (SOFA's RegularGridTopology) and its cell constants.

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
