//! GenerateGrid (Sofa/Component/Engine/Generate/src/sofa/component/engine/generate/
//! GenerateGrid.inl): the points of a regular grid between `min` and `max` with `resolution`
//! cells along x, y and z, and its cells: hexahedra, each also cut into 6 tetrahedra, or, when
//! the z resolution is 0, quads in the z = min plane, each also cut into 2 triangles.
//!
//! Points are numbered x fastest, then y, then z. Hexahedra (and their tetrahedra) come x
//! slowest and z fastest; quads x slowest, y fastest, as SOFA's loops give them. For Vec2d
//! the points keep their x and y only (`min`, `max` and `resolution` still have 3 values).

use super::{all_finite, product_within, MAX_ELEMENTS};
use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{Data, DataKind, DataTable, Ints, Reals, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_core::state::MAX_POINTS;

/// A regular grid as GenerateGrid builds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    pub min: [f64; 3],
    pub max: [f64; 3],
    /// Cells along x, y (at least 1) and z (0: a grid of quads).
    pub cells: [usize; 3],
    /// Numbers per point: 3 (Vec3d) or 2 (Vec2d).
    pub dim: usize,
}

impl Grid {
    /// Points along each axis.
    fn points_per_axis(&self) -> [usize; 3] {
        self.cells.map(|c| c + 1)
    }

    /// The index of the point at (i, j, k).
    fn index(&self, i: usize, j: usize, k: usize) -> u32 {
        let [nx, ny, _] = self.points_per_axis();
        (i + j * nx + k * nx * ny) as u32
    }

    /// The points, `dim` numbers each.
    pub fn points(&self) -> Vec<f64> {
        let [cx, cy, cz] = self.cells;
        let size: [f64; 3] = std::array::from_fn(|a| self.max[a] - self.min[a]);
        let step = [
            size[0] / cx as f64,
            size[1] / cy as f64,
            if cz == 0 { 0.0 } else { size[2] / cz as f64 },
        ];
        let mut out = Vec::with_capacity(self.dim * (cx + 1) * (cy + 1) * (cz + 1));
        for k in 0..=cz {
            for j in 0..=cy {
                for i in 0..=cx {
                    let t = [i as f64 * step[0], j as f64 * step[1], k as f64 * step[2]];
                    out.extend((0..self.dim).map(|a| t[a] + self.min[a]));
                }
            }
        }
        out
    }

    /// The quads of a flat grid (z resolution 0) and their triangles.
    pub fn quads_and_triangles(&self) -> (Vec<u32>, Vec<u32>) {
        let [cx, cy, _] = self.cells;
        let (mut quads, mut tris) = (Vec::new(), Vec::new());
        for i in 0..cx {
            for j in 0..cy {
                let q = [
                    self.index(i, j, 0),
                    self.index(i + 1, j, 0),
                    self.index(i + 1, j + 1, 0),
                    self.index(i, j + 1, 0),
                ];
                quads.extend(q);
                tris.extend([q[0], q[1], q[3], q[3], q[1], q[2]]);
            }
        }
        (quads, tris)
    }

    /// The hexahedra of a grid with z cells and their tetrahedra (6 each).
    pub fn hexahedra_and_tetrahedra(&self) -> (Vec<u32>, Vec<u32>) {
        let [cx, cy, cz] = self.cells;
        let (mut hexas, mut tetras) = (Vec::new(), Vec::new());
        for i in 0..cx {
            for j in 0..cy {
                for k in 0..cz {
                    let h = [
                        self.index(i, j, k),
                        self.index(i + 1, j, k),
                        self.index(i + 1, j + 1, k),
                        self.index(i, j + 1, k),
                        self.index(i, j, k + 1),
                        self.index(i + 1, j, k + 1),
                        self.index(i + 1, j + 1, k + 1),
                        self.index(i, j + 1, k + 1),
                    ];
                    hexas.extend(h);
                    for t in [
                        [0, 5, 1, 6],
                        [0, 1, 3, 6],
                        [1, 3, 6, 2],
                        [6, 3, 0, 7],
                        [6, 7, 0, 5],
                        [7, 5, 4, 0],
                    ] {
                        tetras.extend(t.map(|v| h[v]));
                    }
                }
            }
        }
        (hexas, tetras)
    }
}

canape_core::data_schema! {
    /// GenerateGrid's own Data after `output_position` (declared apart: its width is the
    /// template's).
    pub struct GenerateGridData {
        tetrahedra: Ints => ("tetrahedra", DataKind::Ints(4), "output mesh tetrahedra"),
        quads: Ints => ("quads", DataKind::Ints(4), "output mesh quads"),
        triangles: Ints => ("triangles", DataKind::Ints(3), "output mesh triangles"),
        hexahedra: Ints => ("hexahedra", DataKind::Ints(8), "output mesh hexahedra"),
        min: Reals = ("min", DataKind::Vector(3), "0 0 0", "the 3 coordinates of the minimum corner"),
        max: Reals = ("max", DataKind::Vector(3), "0 0 0", "the 3 coordinates of the maximum corner"),
        resolution: Ints = ("resolution", DataKind::Ints(0), "3 3 3", "the number of cubes in the x,y,z directions. If resolution in the z direction is  0 then a 2D grid is generated"),
    }
}

/// GenerateGrid: `output_position` (also `position`), `hexahedra` and `tetrahedra`, or
/// `quads` and `triangles`.
#[derive(Clone)]
pub struct GenerateGrid {
    data: DataTable,
    /// Typed handle to `output_position` (its width is the template's).
    position: Data<Reals>,
    /// Typed handles to the other Data in `data`.
    d: GenerateGridData,
    dim: usize,
}

impl Default for GenerateGrid {
    fn default() -> Self {
        Self::new(3)
    }
}

impl GenerateGrid {
    /// The engine for points of `dim` numbers (3 for Vec3d, 2 for Vec2d).
    pub fn new(dim: usize) -> Self {
        // the output's width follows the template, so it is declared apart from the schema
        let (data, position) = base_data(DataTable::new()).declare_output::<Reals>(
            "output_position",
            DataKind::Reals(dim),
            "output array of 3d points",
        );
        let (data, d) = GenerateGridData::declare(data.alias(&["position"]));
        GenerateGrid {
            data,
            position,
            d,
            dim,
        }
    }

    /// The grid the Data describe, checked; None (reported) when nothing can be generated.
    fn grid(&self, ctx: &mut InitContext<'_>) -> Option<Grid> {
        let (min, max) = (self.data.get(self.d.min), self.data.get(self.d.max));
        if min.len() != 3 || max.len() != 3 || !all_finite(min) || !all_finite(max) {
            ctx.error(format!(
                "min ({min:?}) and max ({max:?}) must be 3 finite numbers each: nothing is generated"
            ));
            return None;
        }
        let res = self.data.get(self.d.resolution);
        let Ok(res) = <[u32; 3]>::try_from(res) else {
            ctx.error(format!(
                "resolution has {} values, expected 3: nothing is generated",
                res.len()
            ));
            return None;
        };
        let mut cells = res.map(|r| r as usize);
        for (a, axis) in ["x", "y"].into_iter().enumerate() {
            if cells[a] == 0 {
                ctx.error(format!(
                    "the number of cubes in the {axis} direction cannot be 0: 1 is used"
                ));
                cells[a] = 1;
            }
        }
        let points = product_within(&cells.map(|c| c + 1), MAX_POINTS);
        let elements = product_within(&[cells[0], cells[1], cells[2].max(1), 6], MAX_ELEMENTS);
        if points.is_none() || elements.is_none() {
            ctx.error(format!(
                "resolution {cells:?} asks for more than {MAX_POINTS} points or elements: nothing is generated"
            ));
            return None;
        }
        let g = Grid {
            min: [min[0], min[1], min[2]],
            max: [max[0], max[1], max[2]],
            cells,
            dim: self.dim,
        };
        let axes = if cells[2] == 0 { 2 } else { 3 };
        for (a, name) in ["x", "y", "z"].into_iter().enumerate().take(axes) {
            let size = g.max[a] - g.min[a];
            if size == 0.0 {
                ctx.warn(format!(
                    "min and max are equal along {name}: every cell is flat"
                ));
            } else if size < 0.0 {
                ctx.warn(format!(
                    "max is below min along {name}: the grid goes the other way and its cells are inverted"
                ));
            }
        }
        Some(g)
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let d = self.d;
        for h in [d.tetrahedra, d.quads, d.triangles, d.hexahedra] {
            let _ = self.data.put(h, Value::Ints(Vec::new()));
        }
        let _ = self.data.put(self.position, Value::Reals(Vec::new()));
        let Some(g) = self.grid(ctx) else {
            return;
        };
        let _ = self.data.put(self.position, Value::Reals(g.points()));
        if g.cells[2] == 0 {
            let (q, t) = g.quads_and_triangles();
            let _ = self.data.put(self.d.quads, Value::Ints(q));
            let _ = self.data.put(self.d.triangles, Value::Ints(t));
        } else {
            let (h, t) = g.hexahedra_and_tetrahedra();
            let _ = self.data.put(self.d.hexahedra, Value::Ints(h));
            let _ = self.data.put(self.d.tetrahedra, Value::Ints(t));
        }
    }
}

impl_component!(GenerateGrid, "GenerateGrid", init);

impl Engine for GenerateGrid {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::init_alone;

    fn p(x: &[f64], i: u32) -> [f64; 3] {
        let o = 3 * i as usize;
        [x[o], x[o + 1], x[o + 2]]
    }

    /// Six times the signed volume of each tetrahedron.
    fn volumes(x: &[f64], t: &[u32]) -> Vec<f64> {
        t.chunks_exact(4)
            .map(|e| {
                let [a, b, c, d] = [0, 1, 2, 3].map(|k| p(x, e[k]));
                let u: [f64; 3] = std::array::from_fn(|k| b[k] - a[k]);
                let v: [f64; 3] = std::array::from_fn(|k| c[k] - a[k]);
                let w: [f64; 3] = std::array::from_fn(|k| d[k] - a[k]);
                u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
                    + u[2] * (v[0] * w[1] - v[1] * w[0])
            })
            .collect()
    }

    #[test]
    fn the_scene_slab() {
        // GenerateGrid.scn: max 0.5 1.5 1, resolution 5 3 4
        let mut e = GenerateGrid::new(3);
        let n = init_alone(&mut e, &[("max", "0.5 1.5 1"), ("resolution", "5 3 4")]);
        assert_eq!(n, 0);
        let x = e.data.reals("position");
        assert_eq!(x.len(), 3 * 6 * 4 * 5);
        assert_eq!(p(x, 1), [0.1, 0.0, 0.0]);
        assert_eq!(p(x, 6), [0.0, 0.5, 0.0]);
        assert_eq!(p(x, 24), [0.0, 0.0, 0.25]);
        assert_eq!(p(x, 119), [0.5, 1.5, 1.0]);
        let h = e.data.ints("hexahedra");
        let t = e.data.ints("tetrahedra");
        assert_eq!(h.len(), 8 * 60);
        assert_eq!(t.len(), 4 * 360);
        assert!(e.data.ints("quads").is_empty() && e.data.ints("triangles").is_empty());
        // first hexahedron, then the one above it (z fastest)
        assert_eq!(&h[..8], &[0, 1, 7, 6, 24, 25, 31, 30]);
        assert_eq!(&h[8..16], &[24, 25, 31, 30, 48, 49, 55, 54]);
        assert_eq!(&t[..8], &[0, 25, 1, 31, 0, 1, 6, 31]);
        // the tetrahedra fill each hexahedron with positive volumes
        let v = volumes(x, t);
        assert!(v.iter().all(|&v| v > 0.0));
        let total: f64 = v.iter().sum::<f64>() / 6.0;
        assert!((total - 0.75).abs() < 1e-12, "{total}");
    }

    #[test]
    fn a_flat_grid_gives_quads_and_triangles() {
        let mut e = GenerateGrid::new(3);
        let n = init_alone(
            &mut e,
            &[("min", "1 2 3"), ("max", "3 5 3"), ("resolution", "2 3 0")],
        );
        assert_eq!(n, 0);
        let x = e.data.reals("position");
        assert_eq!(x.len(), 3 * 12);
        assert_eq!(p(x, 11), [3.0, 5.0, 3.0]);
        let q = e.data.ints("quads");
        assert_eq!(q.len(), 4 * 6);
        // y fastest: the second quad is above the first
        assert_eq!(&q[..8], &[0, 1, 4, 3, 3, 4, 7, 6]);
        assert_eq!(&e.data.ints("triangles")[..6], &[0, 1, 3, 3, 1, 4]);
        assert!(e.data.ints("hexahedra").is_empty() && e.data.ints("tetrahedra").is_empty());
    }

    #[test]
    fn vec2_points_drop_z() {
        let mut e = GenerateGrid::new(2);
        let n = init_alone(&mut e, &[("max", "2 1 0"), ("resolution", "2 1 0")]);
        assert_eq!(n, 0);
        assert_eq!(
            e.data.reals("position"),
            &[0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 1.0]
        );
        assert_eq!(e.data.ints("quads"), &[0, 1, 4, 3, 1, 2, 5, 4]);
    }

    #[test]
    fn bad_inputs_are_reported() {
        // a zero x resolution is made 1, as SOFA does (an error)
        let mut e = GenerateGrid::new(3);
        let n = init_alone(&mut e, &[("max", "1 1 1"), ("resolution", "0 1 1")]);
        assert_eq!(n, 1);
        assert_eq!(e.data.ints("hexahedra"), &[0, 1, 3, 2, 4, 5, 7, 6]);
        // default max = min: flat cells, reported
        let mut e = GenerateGrid::new(3);
        assert_eq!(init_alone(&mut e, &[]), 3);
        assert_eq!(e.data.reals("position").len(), 3 * 64);
        // non-finite bounds, a wrong resolution size, a huge resolution: nothing
        for (k, v) in [
            ("max", "1 nan 1"),
            ("resolution", "2 2"),
            ("resolution", "100000 100000 100000"),
        ] {
            let mut e = GenerateGrid::new(3);
            assert_eq!(init_alone(&mut e, &[("max", "1 1 1"), (k, v)]), 1, "{k}");
            assert!(e.data.reals("position").is_empty());
            assert!(e.data.ints("hexahedra").is_empty());
        }
        // min above max: inverted, reported
        let mut e = GenerateGrid::new(3);
        assert_eq!(init_alone(&mut e, &[("max", "-1 1 1")]), 1);
        let v = volumes(e.data.reals("position"), e.data.ints("tetrahedra"));
        assert!(v.iter().all(|&v| v < 0.0));
    }
}
