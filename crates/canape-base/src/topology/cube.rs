//! CubeTopology (Sofa/Component/Topology/Container/Constant/CubeTopology.cpp): the surface of
//! a grid of nx × ny × nz points — its points (only those on the surface unless
//! `internalPoints`), the grid lines on the surface as edges, and the surface cells as quads,
//! numbered as SOFA numbers them (bottom layer, top layer, then the rings between).

use crate::base_data;
use canape_core::component::Topology;
use canape_core::data::{DataKind, DataTable, Flag, Int, Ints, Real, Reals, Value};
use canape_core::impl_component;
use canape_core::mesh::{flatten, flatten_points, Mesh};
use canape_core::scene::InitContext;

canape_core::data_schema! {
    /// CubeTopology's own Data (after the base Data).
    pub struct CubeData {
        nx: Int = ("nx", DataKind::Int, "0", "x grid resolution"),
        ny: Int = ("ny", DataKind::Int, "0", "y grid resolution"),
        nz: Int = ("nz", DataKind::Int, "0", "z grid resolution"),
        internal_points: Flag = ("internalPoints", DataKind::Bool, "0", "include internal points (allow a one-to-one mapping between points from RegularGridTopology and CubeTopology)"),
        split_normals: Flag = ("splitNormals", DataKind::Bool, "0", "split corner points to have planar normals"),
        min: Reals = ("min", DataKind::Vector(3), "0 0 0", "Min"),
        max: Reals = ("max", DataKind::Vector(3), "1 1 1", "Max"),
        xmin: Real = ("xmin", DataKind::Real, "0", "legacy: min x (all six bounds must be given)"),
        ymin: Real = ("ymin", DataKind::Real, "0", "legacy: min y"),
        zmin: Real = ("zmin", DataKind::Real, "0", "legacy: min z"),
        xmax: Real = ("xmax", DataKind::Real, "1", "legacy: max x"),
        ymax: Real = ("ymax", DataKind::Real, "1", "legacy: max y"),
        zmax: Real = ("zmax", DataKind::Real, "1", "legacy: max z"),
        scale: Real = ("scale", DataKind::Real, "1", "legacy: scale applied to xmin..zmax"),
        draw_edges: Flag = ("drawEdges", DataKind::Bool, "0", "if true, draw the topology edges"),
        position: Reals => ("position", DataKind::Reals(3), "List of point positions (computed)"),
        edges: Ints => ("edges", DataKind::Ints(2), "List of edge indices (computed)"),
        quads: Ints => ("quads", DataKind::Ints(4), "List of quad indices (computed)"),
    }
}

/// The surface of a grid.
#[derive(Clone)]
pub struct CubeTopology {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: CubeData,
    mesh: Mesh,
}

impl Default for CubeTopology {
    fn default() -> Self {
        Self::new()
    }
}

/// Largest number of grid points CubeTopology builds (a clear refusal beyond).
const MAX_GRID_POINTS: usize = 50_000_000;

impl CubeTopology {
    pub fn new() -> Self {
        let (data, d) = CubeData::declare(base_data(DataTable::new()));
        CubeTopology {
            data,
            d,
            mesh: Mesh::default(),
        }
    }

    fn bounds(&self) -> super::GridBounds {
        let d = &self.d;
        super::GridBounds {
            min: d.min,
            max: d.max,
            legacy: [d.xmin, d.ymin, d.zmin, d.xmax, d.ymax, d.zmax],
            scale: d.scale,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let (d, h) = (&self.data, self.d);
        let n = [d.get(h.nx), d.get(h.ny), d.get(h.nz)];
        if n.iter().any(|&k| k < 1) {
            ctx.error(format!(
                "nx, ny and nz must be at least 1 ({} {} {} given): the topology is empty",
                n[0], n[1], n[2]
            ));
            return;
        }
        let [nx, ny, nz] = n.map(|k| k as usize);
        if nx.saturating_mul(ny).saturating_mul(nz) > MAX_GRID_POINTS {
            ctx.error(format!(
                "a {nx} × {ny} × {nz} grid is larger than the {MAX_GRID_POINTS} points Canapé builds"
            ));
            return;
        }
        if d.get(h.split_normals) {
            ctx.error("splitNormals (corner points split per face) is not supported yet: the topology is empty");
            return;
        }
        let (lo, hi) = super::grid_bounds(d, self.bounds(), ctx);
        let step = |k: usize, m: usize| {
            if m > 1 {
                (hi[k] - lo[k]) / (m - 1) as f64
            } else {
                0.0
            }
        };
        let (dx, dy, dz) = (step(0, nx), step(1, ny), step(2, nz));
        let surface = !d.get(h.internal_points) && nx > 1 && ny > 1 && nz > 1;
        // SOFA's numbering: with surface points only, the bottom layer (z = 0), the top layer,
        // then for each layer between, the rows y = 0 and y = ny−1 and the sides x = 0 and
        // x = nx−1
        let point = |x: usize, y: usize, z: usize| -> u32 {
            let i = if !surface {
                x + nx * (y + ny * z)
            } else if z == 0 {
                x + nx * y
            } else if z == nz - 1 {
                x + nx * (y + ny)
            } else {
                let base = nx * ny * 2 + (2 * nx + 2 * ny - 4) * (z - 1);
                if y == 0 {
                    base + x
                } else if y == ny - 1 {
                    base + x + nx
                } else if x == 0 {
                    base + 2 * nx + (y - 1)
                } else {
                    base + 2 * nx + (ny - 2) + (y - 1)
                }
            };
            i as u32
        };
        let count = if surface {
            nx * ny * 2 + (nz - 2) * (2 * nx + 2 * ny - 4)
        } else {
            nx * ny * nz
        };
        let mut points = vec![[0.0; 3]; count];
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    let on_surface =
                        x == 0 || x == nx - 1 || y == 0 || y == ny - 1 || z == 0 || z == nz - 1;
                    if surface && !on_surface {
                        continue;
                    }
                    points[point(x, y, z) as usize] = [
                        lo[0] + dx * x as f64,
                        lo[1] + dy * y as f64,
                        lo[2] + dz * z as f64,
                    ];
                }
            }
        }
        let mut edges = Vec::new();
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    if x + 1 < nx && (y == 0 || y == ny - 1 || z == 0 || z == nz - 1) {
                        edges.push([point(x, y, z), point(x + 1, y, z)]);
                    }
                    if y + 1 < ny && (x == 0 || x == nx - 1 || z == 0 || z == nz - 1) {
                        edges.push([point(x, y, z), point(x, y + 1, z)]);
                    }
                    if z + 1 < nz && (x == 0 || x == nx - 1 || y == 0 || y == ny - 1) {
                        edges.push([point(x, y, z), point(x, y, z + 1)]);
                    }
                }
            }
        }
        // the six faces, each cell's corners turning outwards, in SOFA's face order
        let mut quads = Vec::new();
        for y in 0..ny.saturating_sub(1) {
            for x in 0..nx - 1 {
                let z = 0;
                quads.push([
                    point(x, y, z),
                    point(x, y + 1, z),
                    point(x + 1, y + 1, z),
                    point(x + 1, y, z),
                ]);
            }
        }
        if nz > 1 {
            for y in 0..ny.saturating_sub(1) {
                for x in 0..nx - 1 {
                    let z = nz - 1;
                    quads.push([
                        point(x, y, z),
                        point(x + 1, y, z),
                        point(x + 1, y + 1, z),
                        point(x, y + 1, z),
                    ]);
                }
            }
        }
        for z in 0..nz.saturating_sub(1) {
            for x in 0..nx - 1 {
                let y = 0;
                quads.push([
                    point(x, y, z),
                    point(x + 1, y, z),
                    point(x + 1, y, z + 1),
                    point(x, y, z + 1),
                ]);
            }
        }
        if ny > 1 {
            for z in 0..nz.saturating_sub(1) {
                for x in 0..nx - 1 {
                    let y = ny - 1;
                    quads.push([
                        point(x, y, z),
                        point(x, y, z + 1),
                        point(x + 1, y, z + 1),
                        point(x + 1, y, z),
                    ]);
                }
            }
        }
        for z in 0..nz.saturating_sub(1) {
            for y in 0..ny - 1 {
                let x = 0;
                quads.push([
                    point(x, y, z),
                    point(x, y, z + 1),
                    point(x, y + 1, z + 1),
                    point(x, y + 1, z),
                ]);
            }
        }
        if nx > 1 {
            for z in 0..nz.saturating_sub(1) {
                for y in 0..ny - 1 {
                    let x = nx - 1;
                    quads.push([
                        point(x, y, z),
                        point(x, y + 1, z),
                        point(x, y + 1, z + 1),
                        point(x, y, z + 1),
                    ]);
                }
            }
        }
        self.mesh = Mesh {
            points,
            edges,
            quads,
            ..Mesh::default()
        };
        let (t, m) = (&mut self.data, &self.mesh);
        let _ = t.put(h.position, Value::Reals(flatten_points(&m.points)));
        let _ = t.put(h.edges, Value::Ints(flatten(&m.edges)));
        let _ = t.put(h.quads, Value::Ints(flatten(&m.quads)));
    }
}

impl_component!(CubeTopology, "CubeTopology", init);

impl Topology for CubeTopology {
    fn mesh(&self) -> &Mesh {
        &self.mesh
    }
    fn mesh_mut(&mut self) -> &mut Mesh {
        &mut self.mesh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::scene::{AnyComponent, Scene};

    fn build(nx: i64, ny: i64, nz: i64, internal: bool) -> Mesh {
        let mut s = Scene::new();
        let root = s.add_node("root", None);
        let mut c = CubeTopology::new();
        for (k, v) in [("nx", nx), ("ny", ny), ("nz", nz)] {
            c.data.set_value(k, Value::Int(v)).unwrap();
        }
        c.data
            .set_value("internalPoints", Value::Bool(internal))
            .unwrap();
        c.data
            .set_value("max", Value::Reals(vec![2.0, 1.0, 1.0]))
            .unwrap();
        let id = s.add_component(root, "cube", AnyComponent::Topology(Box::new(c)), None);
        let mut diags = canape_core::diag::Diagnostics::default();
        let mut t = s.topologies[0].take().unwrap();
        t.init(&mut InitContext {
            scene: &s,
            node: root,
            id,
            diags: &mut diags,
        });
        assert!(!diags.has_errors(), "{diags:?}");
        t.mesh().clone()
    }

    #[test]
    fn surface_points_edges_and_outward_quads() {
        let m = build(4, 3, 3, false);
        // 4·3·2 on the top and bottom layers, 2·4 + 2·3 − 4 on the ring between
        assert_eq!(m.points.len(), 24 + 10);
        // every point on the box's surface, all distinct
        for p in &m.points {
            let on = (0..3).any(|k| {
                let max = [2.0, 1.0, 1.0][k];
                p[k].abs() < 1e-12 || (p[k] - max).abs() < 1e-12
            });
            assert!(on, "{p:?}");
        }
        let mut sorted = m.points.clone();
        sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
        sorted.dedup();
        assert_eq!(sorted.len(), m.points.len());
        // faces: 2·(3·2) + 2·(3·2) + 2·(2·2) cells
        assert_eq!(m.quads.len(), 12 + 12 + 8);
        // each quad's normal points out of the box
        let c = [1.0, 0.5, 0.5];
        for q in &m.quads {
            let p = |i: u32| m.points[i as usize];
            let (a, b, d) = (p(q[0]), p(q[1]), p(q[3]));
            let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
            let v = [d[0] - a[0], d[1] - a[1], d[2] - a[2]];
            let n = [
                u[1] * v[2] - u[2] * v[1],
                u[2] * v[0] - u[0] * v[2],
                u[0] * v[1] - u[1] * v[0],
            ];
            let out = [a[0] - c[0], a[1] - c[1], a[2] - c[2]];
            assert!(
                n[0] * out[0] + n[1] * out[1] + n[2] * out[2] > 0.0,
                "inward quad {q:?}"
            );
        }
        // edges: the grid lines on the surface, each between neighbours one step apart
        for e in &m.edges {
            let (a, b) = (m.points[e[0] as usize], m.points[e[1] as usize]);
            let d: f64 = (0..3).map(|k| (a[k] - b[k]).abs()).sum();
            assert!(
                (d - 2.0 / 3.0).abs() < 1e-12 || (d - 0.5).abs() < 1e-12,
                "{e:?}"
            );
        }
        // with internal points: the whole grid, numbered x fastest
        let full = build(4, 3, 3, true);
        assert_eq!(full.points.len(), 36);
        assert_eq!(full.points[1], [2.0 / 3.0, 0.0, 0.0]);
        assert_eq!(full.points[4], [0.0, 0.5, 0.0]);
    }
}
