//! The static topological mappings: Hexa2TetraTopologicalMapping (each hexahedron split into six
//! tetrahedra) and the boundary extractions Hexa2Quad, Tetra2Triangle, Quad2Triangle and
//! Triangle2EdgeTopologicalMapping, with the grid faces and lines they share.

use super::*;

canape_core::data_schema! {
    /// The input and output topologies of a topological mapping.
    pub struct MappingIoData {
        input: Text = ("input", DataKind::Str, "", "Input topology to map"),
        output: Text = ("output", DataKind::Str, "", "Output topology to map"),
    }
}

canape_core::data_schema! {
    /// The Data of the topological mappings that create faces: input, output and whether the
    /// faces are flipped.
    pub struct MappingData {
        input: Text = ("input", DataKind::Str, "", "Input topology to map"),
        output: Text = ("output", DataKind::Str, "", "Output topology to map"),
        flip_normals: Flag = ("flipNormals", DataKind::Bool, "0", "Flip Normal ? (Inverse point order when creating quad/triangle)"),
    }
}

canape_core::data_schema! {
    /// Hexa2TetraTopologicalMapping's own Data (after the base Data).
    pub struct Hexa2TetraData {
        input: Text = ("input", DataKind::Str, "", "Input topology to map"),
        output: Text = ("output", DataKind::Str, "", "Output topology to map"),
        swapping: Flag = ("swapping", DataKind::Bool, "0", "Boolean enabling to swapp hexa-edges in order to avoid bias effect"),
    }
}

canape_core::data_schema! {
    /// What Tetra2TriangleTopologicalMapping adds to [`MappingData`].
    pub struct Tetra2TriangleData {
        no_new_triangles: Flag = ("noNewTriangles", DataKind::Bool, "0", "If true, no new triangles are being created"),
        no_initial_triangles: Flag = ("noInitialTriangles", DataKind::Bool, "0", "If true, the list of initial triangles is initially empty. Only additional triangles will be added in the list"),
    }
}

/// Splits each hexahedron into 6 tetrahedra
/// (Sofa/Component/Topology/Mapping/.../Hexa2TetraTopologicalMapping.cpp).
#[derive(Clone)]
pub struct Hexa2TetraTopologicalMapping {
    pub(super) data: DataTable,
    /// Typed handles to the Data in `data`.
    d: Hexa2TetraData,
}

impl Default for Hexa2TetraTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Hexa2TetraTopologicalMapping {
    pub fn new() -> Self {
        let (data, d) = Hexa2TetraData::declare(base_data(DataTable::new()));
        Hexa2TetraTopologicalMapping { data, d }
    }
}

impl_component!(Hexa2TetraTopologicalMapping, "Hexa2TetraTopologicalMapping");

pub use canape_core::mesh::hexa_to_tetras;

impl TopologicalMapping for Hexa2TetraTopologicalMapping {
    fn map(&self, input: &Mesh, grid: Option<[usize; 3]>) -> Mesh {
        let swapping = self.data.get(self.d.swapping);
        let (nx, ny) = match grid {
            Some(n) => (n[0].saturating_sub(1).max(1), n[1].saturating_sub(1).max(1)),
            None => (2, 1),
        };
        let mut tets = Vec::with_capacity(input.hexahedra.len() * 6);
        for (i, h) in input.hexahedra.iter().enumerate() {
            let mut c = *h;
            let mut swapped = false;
            if swapping {
                if (i % nx) % 2 == 0 {
                    c.swap(0, 1);
                    c.swap(3, 2);
                    c.swap(4, 5);
                    c.swap(7, 6);
                    swapped = !swapped;
                }
                if ((i / nx) % ny) % 2 == 1 {
                    c.swap(0, 3);
                    c.swap(1, 2);
                    c.swap(4, 7);
                    c.swap(5, 6);
                    swapped = !swapped;
                }
                if (i / (nx * ny)) % 2 == 1 {
                    c.swap(0, 4);
                    c.swap(1, 5);
                    c.swap(2, 6);
                    c.swap(3, 7);
                    swapped = !swapped;
                }
            }
            tets.extend_from_slice(&hexa_to_tetras(c, swapped));
        }
        Mesh {
            tetrahedra: tets,
            ..Mesh::default()
        }
    }
}

/// SOFA's GridTopology quad list (GridTopology.cpp updateQuads): the quads of the XY planes
/// (z, then y, then x), then of the XZ planes, then of the YZ planes, all of them (not only the
/// boundary).
pub fn grid_quads(n: [usize; 3]) -> Vec<[u32; 4]> {
    let [nx, ny, nz] = n;
    let p = |x: usize, y: usize, z: usize| (nx * (ny * z + y) + x) as u32;
    let mut q = Vec::new();
    for z in 0..nz {
        for y in 0..ny.saturating_sub(1) {
            for x in 0..nx.saturating_sub(1) {
                q.push([
                    p(x, y, z),
                    p(x + 1, y, z),
                    p(x + 1, y + 1, z),
                    p(x, y + 1, z),
                ]);
            }
        }
    }
    for z in 0..nz.saturating_sub(1) {
        for y in 0..ny {
            for x in 0..nx.saturating_sub(1) {
                q.push([
                    p(x, y, z),
                    p(x + 1, y, z),
                    p(x + 1, y, z + 1),
                    p(x, y, z + 1),
                ]);
            }
        }
    }
    for z in 0..nz.saturating_sub(1) {
        for y in 0..ny.saturating_sub(1) {
            for x in 0..nx {
                q.push([
                    p(x, y, z),
                    p(x, y + 1, z),
                    p(x, y + 1, z + 1),
                    p(x, y, z + 1),
                ]);
            }
        }
    }
    q
}

/// SOFA's GridTopology lines (without triangles): along x, then y, then z.
pub(super) fn grid_lines(n: [usize; 3]) -> Vec<[u32; 2]> {
    let [nx, ny, nz] = n;
    let p = |x: usize, y: usize, z: usize| (nx * (ny * z + y) + x) as u32;
    let mut e = Vec::new();
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx.saturating_sub(1) {
                e.push([p(x, y, z), p(x + 1, y, z)]);
            }
        }
    }
    for z in 0..nz {
        for y in 0..ny.saturating_sub(1) {
            for x in 0..nx {
                e.push([p(x, y, z), p(x, y + 1, z)]);
            }
        }
    }
    for z in 0..nz.saturating_sub(1) {
        for y in 0..ny {
            for x in 0..nx {
                e.push([p(x, y, z), p(x, y, z + 1)]);
            }
        }
    }
    e
}

fn sorted_key<const N: usize>(mut a: [u32; N]) -> [u32; N] {
    a.sort_unstable();
    a
}

/// Rotate a face so that its smallest index comes first (orientation kept), as SOFA's
/// containers store the faces they create.
fn min_first<const N: usize>(f: [u32; N]) -> [u32; N] {
    let k = (0..N).min_by_key(|&i| f[i]).unwrap_or(0);
    std::array::from_fn(|i| f[(i + k) % N])
}

/// The faces of `faces` (a face list in the input's order) that belong to exactly one element,
/// where `element_faces` gives every element's faces.
fn boundary<const N: usize>(
    faces: &[[u32; N]],
    element_faces: impl Iterator<Item = [u32; N]>,
) -> Vec<[u32; N]> {
    let mut count: std::collections::BTreeMap<[u32; N], u32> = std::collections::BTreeMap::new();
    for f in element_faces {
        *count.entry(sorted_key(f)).or_default() += 1;
    }
    faces
        .iter()
        .filter(|f| count.get(&sorted_key(**f)) == Some(&1))
        .copied()
        .collect()
}

/// The faces SOFA's containers create from the elements when no face list is given: by first
/// appearance, each rotated to start at its smallest index.
fn faces_by_container<const N: usize>(
    element_faces: impl Iterator<Item = [u32; N]>,
) -> Vec<[u32; N]> {
    let mut seen = std::collections::BTreeSet::new();
    element_faces
        .map(min_first)
        .filter(|f| seen.insert(sorted_key(*f)))
        .collect()
}

/// The base Data and [`MappingData`].
pub(crate) fn mapping_data(t: DataTable) -> (DataTable, MappingData) {
    MappingData::declare(base_data(t))
}

/// The boundary quads of a hexahedral topology (Sofa/Component/Topology/Mapping/.../
/// Hexa2QuadTopologicalMapping.cpp): the input's quads that belong to one hexahedron, in the
/// input's quad order (a grid's quads, SOFA's container faces, or the quads a loader gave),
/// reversed with `flipNormals`.
#[derive(Clone)]
pub struct Hexa2QuadTopologicalMapping {
    pub(super) data: DataTable,
    /// Typed handles to the Data in `data`.
    d: MappingData,
}

impl Default for Hexa2QuadTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Hexa2QuadTopologicalMapping {
    pub fn new() -> Self {
        let (data, d) = mapping_data(DataTable::new());
        Hexa2QuadTopologicalMapping { data, d }
    }
}

impl_component!(Hexa2QuadTopologicalMapping, "Hexa2QuadTopologicalMapping");

impl TopologicalMapping for Hexa2QuadTopologicalMapping {
    fn map(&self, input: &Mesh, grid: Option<[usize; 3]>) -> Mesh {
        use canape_core::mesh::HEXA_FACES;
        let hexa_faces = || {
            input
                .hexahedra
                .iter()
                .flat_map(|h| HEXA_FACES.iter().map(move |f| f.map(|k| h[k])))
        };
        // SOFA's hexahedron container face table (Topology.cpp), for quads it creates itself
        const CONTAINER_FACES: [[usize; 4]; 6] = [
            [0, 3, 2, 1],
            [4, 5, 6, 7],
            [0, 1, 5, 4],
            [1, 2, 6, 5],
            [2, 3, 7, 6],
            [3, 0, 4, 7],
        ];
        let quads = if !input.quads.is_empty() {
            input.quads.clone()
        } else if let Some(n) = grid {
            grid_quads(n)
        } else {
            faces_by_container(
                input
                    .hexahedra
                    .iter()
                    .flat_map(|h| CONTAINER_FACES.iter().map(move |f| f.map(|k| h[k]))),
            )
        };
        let flip = self.data.get(self.d.flip_normals);
        let quads = boundary(&quads, hexa_faces())
            .into_iter()
            .map(|q| if flip { [q[3], q[2], q[1], q[0]] } else { q })
            .collect();
        Mesh {
            quads,
            ..Mesh::default()
        }
    }
}

/// The boundary triangles of a tetrahedral topology (Sofa/Component/Topology/Mapping/.../
/// Tetra2TriangleTopologicalMapping.cpp): the input's triangles that belong to one tetrahedron,
/// in the input's order, (t0, t2, t1) with `flipNormals`; none with `noInitialTriangles`.
#[derive(Clone)]
pub struct Tetra2TriangleTopologicalMapping {
    pub(super) data: DataTable,
    /// Typed handles to the Data in `data`.
    d: MappingData,
    /// Typed handles to its own Data.
    dt: Tetra2TriangleData,
}

impl Default for Tetra2TriangleTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Tetra2TriangleTopologicalMapping {
    pub fn new() -> Self {
        let (data, d) = mapping_data(DataTable::new());
        let (data, dt) = Tetra2TriangleData::declare(data);
        Tetra2TriangleTopologicalMapping { data, d, dt }
    }
}

impl_component!(
    Tetra2TriangleTopologicalMapping,
    "Tetra2TriangleTopologicalMapping"
);

impl TopologicalMapping for Tetra2TriangleTopologicalMapping {
    fn map(&self, input: &Mesh, _grid: Option<[usize; 3]>) -> Mesh {
        use canape_core::mesh::TETRA_FACES;
        if self.data.get(self.dt.no_initial_triangles) {
            return Mesh::default();
        }
        let tetra_faces = || {
            input
                .tetrahedra
                .iter()
                .flat_map(|t| TETRA_FACES.iter().map(move |f| f.map(|k| t[k])))
        };
        // SOFA's tetrahedron container face table (face j opposite vertex j)
        const CONTAINER_FACES: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [1, 3, 0], [0, 2, 1]];
        let triangles = if !input.triangles.is_empty() {
            input.triangles.clone()
        } else {
            faces_by_container(
                input
                    .tetrahedra
                    .iter()
                    .flat_map(|t| CONTAINER_FACES.iter().map(move |f| f.map(|k| t[k]))),
            )
        };
        let flip = self.data.get(self.d.flip_normals);
        let triangles: Vec<[u32; 3]> = boundary(&triangles, tetra_faces())
            .into_iter()
            .map(|t| if flip { [t[0], t[2], t[1]] } else { t })
            .collect();
        // the output container's edges, as its init builds them from the triangles
        Mesh {
            edges: canape_core::mesh::edges_from_triangles(&triangles),
            triangles,
            ..Mesh::default()
        }
    }
}

/// Two triangles per quad (Sofa/Component/Topology/Mapping/.../
/// Quad2TriangleTopologicalMapping.cpp): split along p1–p3 or p0–p2 in a checkerboard over the
/// quad index (column and row by the grid's cell count in x, or by 2 for a plain mesh), both
/// triangles keeping the quad's winding.
#[derive(Clone)]
pub struct Quad2TriangleTopologicalMapping {
    pub(super) data: DataTable,
}

impl Default for Quad2TriangleTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Quad2TriangleTopologicalMapping {
    pub fn new() -> Self {
        // no Data of its own to read: the scene resolves input and output
        let (data, _) = MappingIoData::declare(base_data(DataTable::new()));
        Quad2TriangleTopologicalMapping { data }
    }
}

impl_component!(
    Quad2TriangleTopologicalMapping,
    "Quad2TriangleTopologicalMapping"
);

impl TopologicalMapping for Quad2TriangleTopologicalMapping {
    fn map(&self, input: &Mesh, grid: Option<[usize; 3]>) -> Mesh {
        let (nx, ny) = match grid {
            Some(n) => (n[0].saturating_sub(1), n[1].saturating_sub(1)),
            None => (2, 1),
        };
        let scale = if nx == 0 { ny } else { nx };
        let quads = if input.quads.is_empty() {
            grid.map(grid_quads).unwrap_or_default()
        } else {
            input.quads.clone()
        };
        if scale == 0 {
            return Mesh::default();
        }
        let mut triangles = Vec::with_capacity(2 * quads.len());
        for (i, q) in quads.iter().enumerate() {
            let [p0, p1, p2, p3] = *q;
            if ((i % scale) ^ (i / scale)) & 1 == 1 {
                triangles.push([p0, p1, p3]);
                triangles.push([p2, p3, p1]);
            } else {
                triangles.push([p1, p2, p0]);
                triangles.push([p3, p0, p2]);
            }
        }
        Mesh {
            triangles,
            ..Mesh::default()
        }
    }
}

/// The boundary edges of a triangle topology (Sofa/Component/Topology/Mapping/.../
/// Triangle2EdgeTopologicalMapping.cpp): the input's edges (its own, or those its triangles
/// give) that belong to one triangle, in their order and orientation.
#[derive(Clone)]
pub struct Triangle2EdgeTopologicalMapping {
    pub(super) data: DataTable,
}

impl Default for Triangle2EdgeTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Triangle2EdgeTopologicalMapping {
    pub fn new() -> Self {
        // no Data of its own to read: the scene resolves input and output
        let (data, _) = MappingIoData::declare(base_data(DataTable::new()));
        Triangle2EdgeTopologicalMapping { data }
    }
}

impl_component!(
    Triangle2EdgeTopologicalMapping,
    "Triangle2EdgeTopologicalMapping"
);

impl TopologicalMapping for Triangle2EdgeTopologicalMapping {
    fn map(&self, input: &Mesh, _grid: Option<[usize; 3]>) -> Mesh {
        let edges = if input.edges.is_empty() {
            canape_core::mesh::edges_from_triangles(&input.triangles)
        } else {
            input.edges.clone()
        };
        let tri_edges = input
            .triangles
            .iter()
            .flat_map(|t| (0..3).map(move |k| [t[(k + 1) % 3], t[(k + 2) % 3]]));
        Mesh {
            edges: boundary(&edges, tri_edges),
            ..Mesh::default()
        }
    }
}
