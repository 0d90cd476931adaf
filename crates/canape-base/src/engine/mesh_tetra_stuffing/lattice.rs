//! The body-centred cubic lattice: where it lies, its points and their neighbours.

use super::{StuffingError, MAX_LATTICE_POINTS, P3};

/// Where the lattice lies and how its points are numbered: the g grid (cell corners) first, x
/// fastest, then the h grid (cell centres, one more layer all round).
#[derive(Clone, Debug)]
pub(super) struct Lattice {
    pub(super) cellsize: f64,
    pub(super) gsize: [usize; 3],
    pub(super) hsize: [usize; 3],
    g0: P3,
    h0: P3,
    /// Index of the first h point (the number of g points).
    pub(super) ph0: usize,
}

impl Lattice {
    /// The grids around the box `bb` (MeshTetraStuffing.cpp, doUpdate: centred on the box, two
    /// cells of margin beyond the truncated half-extent on each side); Err (with the reason)
    /// when the lattice would be empty or too large.
    pub(super) fn around(bb: &[P3; 2], cellsize: f64) -> Result<Self, StuffingError> {
        let mut gsize = [0usize; 3];
        let mut hsize = [0usize; 3];
        let mut g0 = [0.0; 3];
        let mut h0 = [0.0; 3];
        for c in 0..3 {
            let p0 = (bb[0][c] + bb[1][c]) / 2.0;
            let below = (p0 - bb[0][c]) / cellsize;
            let above = (bb[1][c] - p0) / cellsize;
            if !(below.abs() < 1e7 && above.abs() < 1e7) {
                return Err(StuffingError::CellTooSmall {
                    cellsize,
                    lo: bb[0],
                    hi: bb[1],
                });
            }
            // int() truncates toward zero, as `as` does
            let c0 = -((below as i64) + 2);
            let c1 = (above as i64) + 2;
            let n = c1 - c0 + 1;
            if n < 1 {
                return Err(StuffingError::InvertedBox {
                    axis: c,
                    lo: bb[0][c],
                    hi: bb[1][c],
                });
            }
            gsize[c] = n as usize;
            g0[c] = p0 + c0 as f64 * cellsize;
            hsize[c] = gsize[c] + 1;
            h0[c] = g0[c] - cellsize / 2.0;
        }
        let ph0 = gsize[0] * gsize[1] * gsize[2];
        let total = ph0 + hsize[0] * hsize[1] * hsize[2];
        if total > MAX_LATTICE_POINTS {
            return Err(StuffingError::TooManyPoints {
                cellsize,
                points: total,
                max: MAX_LATTICE_POINTS,
            });
        }
        Ok(Lattice {
            cellsize,
            gsize,
            hsize,
            g0,
            h0,
            ph0,
        })
    }

    pub(super) fn len(&self) -> usize {
        self.ph0 + self.hsize[0] * self.hsize[1] * self.hsize[2]
    }

    /// The positions of all lattice points, each coordinate computed as origin + index × size.
    pub(super) fn positions(&self) -> Vec<P3> {
        let mut out = Vec::with_capacity(self.len());
        for (size, origin) in [(self.gsize, self.g0), (self.hsize, self.h0)] {
            for z in 0..size[2] {
                for y in 0..size[1] {
                    for x in 0..size[0] {
                        out.push([
                            origin[0] + x as f64 * self.cellsize,
                            origin[1] + y as f64 * self.cellsize,
                            origin[2] + z as f64 * self.cellsize,
                        ]);
                    }
                }
            }
        }
        out
    }

    /// The neighbour of point `p` along lattice direction `e` (SOFA's `getEdgePoint2`): for
    /// e < 6 the next point of the same grid along axis e/2 (backwards for even e), for e ≥ 6
    /// the point of the other grid at offset ±½ cell per axis given by the bits of e − 6.
    /// Direction e ^ 1 is always the opposite of e.
    pub(super) fn nb(&self, p: usize, e: usize) -> Option<usize> {
        let on_g = p < self.ph0;
        let (size, q) = if on_g {
            (self.gsize, p)
        } else {
            (self.hsize, p - self.ph0)
        };
        let mut c = [
            (q % size[0]) as i64,
            ((q / size[0]) % size[1]) as i64,
            (q / (size[0] * size[1])) as i64,
        ];
        let index = |c: [i64; 3], size: [usize; 3]| -> Option<usize> {
            for i in 0..3 {
                if c[i] < 0 || c[i] >= size[i] as i64 {
                    return None;
                }
            }
            Some(c[0] as usize + size[0] * (c[1] as usize + size[1] * c[2] as usize))
        };
        if e < 6 {
            c[e >> 1] += if e & 1 == 1 { 1 } else { -1 };
            let i = index(c, size)?;
            return Some(if on_g { i } else { self.ph0 + i });
        }
        let k = (e - 6) as i64;
        let bits = [k & 1, ((k >> 1) ^ k) & 1, ((k >> 2) ^ k) & 1];
        if on_g {
            // the h grid is one larger: never out of range
            let h = [c[0] + bits[0], c[1] + bits[1], c[2] + bits[2]];
            index(h, self.hsize).map(|i| self.ph0 + i)
        } else {
            let g = [c[0] + bits[0] - 1, c[1] + bits[1] - 1, c[2] + bits[2] - 1];
            index(g, self.gsize)
        }
    }
}

/// The squared length of a lattice edge in (cell/2)² units (SOFA's `getEdgeSize2`).
pub(super) fn edge_size2(e: usize) -> f64 {
    if e < 6 {
        4.0
    } else {
        3.0
    }
}
