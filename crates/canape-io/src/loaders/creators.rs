//! Procedural mesh creators: StringMeshCreator and GridMeshCreator.

use super::{creator_data, scale3d, LoaderData, MeshOutputData};
use canape_core::component::Loader;
use canape_core::data::{DataKind, DataTable, Int, Reals, Value};
use canape_core::scene::InitContext;
use canape_core::state::apply_transform;

canape_core::data_schema! {
    /// What StringMeshCreator adds to the creator Data.
    pub struct StringMeshData {
        resolution: Int = ("resolution", DataKind::Int, "2", "Number of vertices"),
    }
}

canape_core::data_schema! {
    /// What GridMeshCreator adds to the creator Data.
    pub struct GridMeshData {
        resolution: Reals = ("resolution", DataKind::Vector(2), "2 2", "Number of vertices in each direction"),
        triangle_pattern: Int = ("trianglePattern", DataKind::Int, "2", "0: no triangles, 1: alternate triangles, 2: upward triangles, 3: downward triangles"),
    }
}

/// StringMeshCreator (Sofa/Component/IO/Mesh/.../StringMeshCreator.cpp): `resolution` points
/// along x from 0 to 1 (point i at i·(1/(N−1)), as SOFA computes it) joined by N−1 edges.
#[derive(Clone)]
pub struct StringMeshCreator {
    data: DataTable,
    /// Typed handles to the creator Data in `data` (declared by `creator_data`).
    dl: LoaderData,
    dm: MeshOutputData,
    /// Typed handles to its own Data.
    d: StringMeshData,
}

impl Default for StringMeshCreator {
    fn default() -> Self {
        Self::new()
    }
}

impl StringMeshCreator {
    pub fn new() -> Self {
        let (data, dl) = creator_data(DataTable::new());
        let (data, dm) = MeshOutputData::declare(data);
        let (data, d) = StringMeshData::declare(data);
        StringMeshCreator { data, dl, dm, d }
    }
}

impl StringMeshCreator {
    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let n = self.data.get(self.d.resolution);
        if n < 2 {
            ctx.error(format!(
                "resolution {n}: a string needs at least 2 vertices"
            ));
            return;
        }
        if n as u64 > canape_core::state::MAX_POINTS as u64 {
            ctx.error(format!(
                "resolution {n} is more vertices than a state may hold here ({})",
                canape_core::state::MAX_POINTS
            ));
            return;
        }
        let n = n as usize;
        let step = 1.0 / (n - 1) as f64;
        let mut pos: Vec<f64> = (0..n).flat_map(|i| [i as f64 * step, 0.0, 0.0]).collect();
        apply_transform(
            &mut pos,
            &scale3d(&self.data, self.dl),
            self.data.get(self.dl.rotation),
            self.data.get(self.dl.translation),
        );
        let edges: Vec<u32> = (1..n as u32).flat_map(|e| [e - 1, e]).collect();
        let _ = self.data.put(self.dm.position, Value::Reals(pos));
        let _ = self.data.put(self.dm.edges, Value::Ints(edges));
    }
}

canape_core::impl_component!(StringMeshCreator, "StringMeshCreator", init);

impl Loader for StringMeshCreator {}

/// GridMeshCreator (Sofa/Component/IO/Mesh/.../GridMeshCreator.cpp): a `resolution` (nx, ny)
/// grid of points on the unit square of the xy plane (point x + nx·y at (x/(nx−1), y/(ny−1))),
/// with quads (`trianglePattern` 0) or two triangles per cell (1: alternate, 2: upward, 3:
/// downward), and the unique edges in SOFA's order (a set ordered by (first, second), each
/// edge kept in the direction first met).
#[derive(Clone)]
pub struct GridMeshCreator {
    data: DataTable,
    /// Typed handles to the creator Data in `data` (declared by `creator_data`).
    dl: LoaderData,
    dm: MeshOutputData,
    /// Typed handles to its own Data.
    d: GridMeshData,
}

impl Default for GridMeshCreator {
    fn default() -> Self {
        Self::new()
    }
}

impl GridMeshCreator {
    pub fn new() -> Self {
        let (data, dl) = creator_data(DataTable::new());
        let (data, dm) = MeshOutputData::declare(data);
        let (data, d) = GridMeshData::declare(data);
        GridMeshCreator { data, dl, dm, d }
    }
}

impl GridMeshCreator {
    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let r = self.data.get(self.d.resolution).to_vec();
        let (nx, ny) = (
            r.first().copied().unwrap_or(2.0),
            r.get(1).copied().unwrap_or(2.0),
        );
        if !(nx >= 2.0 && ny >= 2.0 && nx * ny <= 1e8) {
            ctx.error(format!(
                "resolution {nx} {ny}: a grid needs at least 2 vertices in each direction (and at most 1e8 in all)"
            ));
            return;
        }
        let (nx, ny) = (nx as u32, ny as u32);
        let pattern = self.data.get(self.d.triangle_pattern);
        if !(0..=3).contains(&pattern) {
            ctx.error(format!(
                "trianglePattern {pattern}: 0 (quads), 1 (alternate), 2 (upward) or 3 (downward)"
            ));
            return;
        }
        let mut pos = Vec::with_capacity((nx * ny * 3) as usize);
        for y in 0..ny {
            for x in 0..nx {
                pos.extend([x as f64 / (nx - 1) as f64, y as f64 / (ny - 1) as f64, 0.0]);
            }
        }
        let v = |x: u32, y: u32| x + y * nx;
        let mut tris: Vec<u32> = Vec::new();
        let mut quads: Vec<u32> = Vec::new();
        let mut edges = std::collections::BTreeSet::new();
        let mut edge = |a: u32, b: u32| {
            if !edges.contains(&(b, a)) {
                edges.insert((a, b));
            }
        };
        for y in 0..ny - 1 {
            for x in 0..nx - 1 {
                let (a, b, c, d) = (v(x, y), v(x + 1, y), v(x + 1, y + 1), v(x, y + 1));
                let cell: Vec<[u32; 3]> = match pattern {
                    0 => {
                        quads.extend([a, b, c, d]);
                        for (p, q) in [(a, b), (b, c), (c, d), (d, a)] {
                            edge(p, q);
                        }
                        continue;
                    }
                    1 if (x + y) % 2 == 0 => vec![[a, b, c], [a, c, d]],
                    1 => vec![[a, b, d], [b, c, d]],
                    2 => vec![[a, b, c], [a, c, d]],
                    _ => vec![[a, b, d], [b, c, d]],
                };
                for t in cell {
                    tris.extend(t);
                    edge(t[0], t[1]);
                    edge(t[1], t[2]);
                    edge(t[2], t[0]);
                }
            }
        }
        apply_transform(
            &mut pos,
            &scale3d(&self.data, self.dl),
            self.data.get(self.dl.rotation),
            self.data.get(self.dl.translation),
        );
        let edges: Vec<u32> = edges.into_iter().flat_map(|(a, b)| [a, b]).collect();
        let dm = self.dm;
        let _ = self.data.put(dm.position, Value::Reals(pos));
        let _ = self.data.put(dm.edges, Value::Ints(edges));
        let _ = self.data.put(dm.triangles, Value::Ints(tris));
        let _ = self.data.put(dm.quads, Value::Ints(quads));
    }
}

canape_core::impl_component!(GridMeshCreator, "GridMeshCreator", init);

impl Loader for GridMeshCreator {}
