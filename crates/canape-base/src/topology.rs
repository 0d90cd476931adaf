//! Topologies and topological mappings: RegularGridTopology, MeshTopology, the *SetTopology
//! containers (static here: topology changes come later), Hexa2TetraTopologicalMapping and the
//! boundary extractions Hexa2QuadTopologicalMapping, Tetra2TriangleTopologicalMapping and
//! Triangle2EdgeTopologicalMapping, Quad2TriangleTopologicalMapping; Mesh2PointTopologicalMapping
//! in `mesh2point`, Hexa2PrismTopologicalMapping in `hexa2prism`.

pub mod cube;
pub mod edge2quad;
pub mod hexa2prism;
pub mod mesh2point;
pub mod subset_mapping;

/// The box of a grid topology (RegularGridTopology, CubeTopology): `min`/`max`, or SOFA's legacy
/// `xmin` … `zmax` times `scale` when all six are given — read as float32, as SOFA's
/// getAttributeAsFloat does; a partial legacy set is reported and ignored.
fn grid_bounds(d: &DataTable, ctx: &mut InitContext<'_>) -> ([f64; 3], [f64; 3]) {
    let v3 = |k: &str, dflt: [f64; 3]| -> [f64; 3] {
        let v = d.reals(k);
        if v.len() == 3 {
            [v[0], v[1], v[2]]
        } else {
            dflt
        }
    };
    let legacy = ["xmin", "ymin", "zmin", "xmax", "ymax", "zmax"];
    if legacy.iter().all(|k| d.is_set(k)) {
        let s = d.real("scale") as f32;
        let f = |k: &str| ((d.real(k) as f32) * s) as f64;
        return (
            [f("xmin"), f("ymin"), f("zmin")],
            [f("xmax"), f("ymax"), f("zmax")],
        );
    }
    if legacy.iter().any(|k| d.is_set(k)) {
        ctx.warn("xmin/ymin/zmin/xmax/ymax/zmax are used only when all six are given; min/max used instead");
    }
    (v3("min", [0.0; 3]), v3("max", [1.0; 3]))
}

use crate::base_data;
use canape_core::component::{TopologicalMapping, Topology};
use canape_core::data::{DataKind, DataTable, Value};
use canape_core::impl_component;
use canape_core::mesh::{flatten, flatten_points, group, group_points, Mesh};
use canape_core::scene::InitContext;

fn mesh_data(t: DataTable) -> DataTable {
    t.with(
        "position",
        DataKind::Reals(3),
        "",
        "List of point positions",
    )
    .alias(&["points"])
    .with("edges", DataKind::Ints(2), "", "List of edge indices")
    .alias(&["lines"])
    .with(
        "triangles",
        DataKind::Ints(3),
        "",
        "List of triangle indices",
    )
    .with("quads", DataKind::Ints(4), "", "List of quad indices")
    .with(
        "tetrahedra",
        DataKind::Ints(4),
        "",
        "List of tetrahedron indices",
    )
    .alias(&["tetras"])
    .with(
        "hexahedra",
        DataKind::Ints(8),
        "",
        "List of hexahedron indices",
    )
    .alias(&["hexas"])
    .with("prisms", DataKind::Ints(6), "", "List of prism indices")
}

fn mesh_from_data(d: &DataTable) -> Mesh {
    Mesh {
        points: group_points(d.reals("position")),
        edges: group(d.ints("edges")),
        triangles: group(d.ints("triangles")),
        quads: group(d.ints("quads")),
        tetrahedra: group(d.ints("tetrahedra")),
        hexahedra: group(d.ints("hexahedra")),
        prisms: group(d.ints("prisms")),
    }
}

/// A static mesh topology given by Data (MeshTopology, and the *SetTopologyContainer family).
#[derive(Clone)]
pub struct MeshContainer {
    class: &'static str,
    data: DataTable,
    mesh: Mesh,
}

/// The element lists a SOFA container class has as Data (its level and the ones it inherits:
/// a TriangleSetTopologyContainer has edges and triangles but no quads), so that `src=@grid`
/// links only those; None: all (MeshTopology).
fn container_elements(class: &str) -> Option<&'static [&'static str]> {
    match class {
        "PointSetTopologyContainer" => Some(&[]),
        "EdgeSetTopologyContainer" => Some(&["edges"]),
        "TriangleSetTopologyContainer" => Some(&["edges", "triangles"]),
        "QuadSetTopologyContainer" => Some(&["edges", "quads"]),
        "TetrahedronSetTopologyContainer" => Some(&["edges", "triangles", "tetrahedra"]),
        "HexahedronSetTopologyContainer" => Some(&["edges", "quads", "hexahedra"]),
        _ => None,
    }
}

/// [`mesh_data`] restricted to the element lists of `class` (see [`container_elements`]).
fn container_data(t: DataTable, class: &str) -> DataTable {
    let all = mesh_data(DataTable::new());
    let keep = container_elements(class);
    let mut t = t;
    for f in all.fields() {
        let element = !matches!(f.name, "position");
        if element && keep.is_some_and(|k| !k.contains(&f.name)) {
            continue;
        }
        t = t.with(f.name, f.kind, f.default_text, f.help);
        if !f.aliases.is_empty() {
            t = t.alias(f.aliases);
        }
    }
    t
}

impl MeshContainer {
    pub fn new(class: &'static str) -> Self {
        let data = container_data(base_data(DataTable::new()), class)
            .with("nbPoints", DataKind::Int, "0", "Number of points")
            .with(
                "checkTopology",
                DataKind::Bool,
                "0",
                "Parameter to activate internal topology checks (might slow down the simulation)",
            )
            .with(
                "checkConnexity",
                DataKind::Bool,
                "0",
                "It true, will check the connexity of the mesh.",
            )
            .with(
                "drawEdges",
                DataKind::Bool,
                "0",
                "if true, draw the topology edges",
            )
            .with(
                "drawTriangles",
                DataKind::Bool,
                "0",
                "if true, draw the topology triangles",
            )
            .with(
                "drawQuads",
                DataKind::Bool,
                "0",
                "if true, draw the topology quads",
            )
            .with(
                "drawTetrahedra",
                DataKind::Bool,
                "0",
                "if true, draw the topology tetrahedra",
            )
            .with(
                "drawHexahedra",
                DataKind::Bool,
                "0",
                "if true, draw the topology hexahedra",
            )
            .with(
                "createTriangleArray",
                DataKind::Bool,
                "0",
                "Force the creation of a set of triangles associated with each tetrahedron",
            )
            .with("filename", DataKind::File, "", "Filename of the mesh (.obj, .msh, .vtk/.vtu, .stl): its points and elements, unless they are given")
            .alias(&["fileTopology"]);
        MeshContainer {
            class,
            data,
            mesh: Mesh::default(),
        }
    }
}

impl canape_core::component::Component for MeshContainer {
    fn class_name(&self) -> &'static str {
        self.class
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn read_data(&self, name: &str) -> Option<Value> {
        let f = self.data.field(name)?;
        Some(match f.name {
            "position" => Value::Reals(flatten_points(&self.mesh.points)),
            "edges" => Value::Ints(flatten(&self.mesh.edges)),
            "triangles" => Value::Ints(flatten(&self.mesh.triangles)),
            "quads" => Value::Ints(flatten(&self.mesh.quads)),
            "tetrahedra" => Value::Ints(flatten(&self.mesh.tetrahedra)),
            "hexahedra" => Value::Ints(flatten(&self.mesh.hexahedra)),
            _ => f.value.clone(),
        })
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        // a topological mapping may already have filled the mesh: keep it then
        let mut from_data = mesh_from_data(&self.data);
        let file = self.data.str("filename").trim().to_string();
        if !file.is_empty() && from_data == Mesh::default() {
            // SOFA's MeshTopology / TopologyContainer `filename`: the mesh of the file
            match ctx.read_mesh(&file) {
                Ok(m) => from_data = m,
                Err(e) => ctx.error(e),
            }
        }
        if self.mesh == Mesh::default() || from_data != Mesh::default() {
            self.mesh = from_data;
        }
        let n = self.mesh.nb_points();
        if !self.mesh.points.is_empty() {
            if let Some(m) = self.mesh.max_index() {
                if m as usize >= self.mesh.points.len() {
                    ctx.error(format!(
                        "element index {m} is out of range: the topology has {} points",
                        self.mesh.points.len()
                    ));
                }
            }
        }
        let _ = self.data.set_value("nbPoints", Value::Int(n as i64));
    }
}

impl Topology for MeshContainer {
    fn mesh(&self) -> &Mesh {
        &self.mesh
    }
    fn mesh_mut(&mut self) -> &mut Mesh {
        &mut self.mesh
    }
}

/// A regular grid of points and hexahedra
/// (Sofa/Component/Topology/Container/Grid/.../RegularGridTopology.cpp, GridTopology.cpp).
#[derive(Clone)]
pub struct RegularGridTopology {
    data: DataTable,
    mesh: Mesh,
    n: [usize; 3],
    /// SOFA's CylinderGridTopology: the same grid with its points on a cylinder.
    cylinder: bool,
}

impl Default for RegularGridTopology {
    fn default() -> Self {
        Self::new()
    }
}

impl RegularGridTopology {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with("n", DataKind::Ints(3), "2 2 2", "grid resolution. (default = 2 2 2)")
            .with("nx", DataKind::Int, "0", "x grid resolution (legacy attribute, all of nx ny nz must be given)")
            .with("ny", DataKind::Int, "0", "y grid resolution (legacy attribute)")
            .with("nz", DataKind::Int, "0", "z grid resolution (legacy attribute)")
            .with("min", DataKind::Vector(3), "0 0 0", "Min end of the diagonal")
            .with("max", DataKind::Vector(3), "1 1 1", "Max end of the diagonal")
            .with("xmin", DataKind::Real, "0", "legacy: min x (all six bounds must be given)")
            .with("ymin", DataKind::Real, "0", "legacy: min y")
            .with("zmin", DataKind::Real, "0", "legacy: min z")
            .with("xmax", DataKind::Real, "1", "legacy: max x")
            .with("ymax", DataKind::Real, "1", "legacy: max y")
            .with("zmax", DataKind::Real, "1", "legacy: max z")
            .with("scale", DataKind::Real, "1", "legacy: scale applied to xmin..zmax")
            .with("p0", DataKind::Vector(3), "0 0 0", "Offset all the grid points")
            .with("cellWidth", DataKind::Real, "0", "if > 0 : dimension of each cell in the created grid. Otherwise, the cell size is computed based on min, max, and resolution n.")
            .with("computeHexaList", DataKind::Bool, "1", "put true if the list of Hexahedra is needed during init")
            .with("computeQuadList", DataKind::Bool, "1", "put true if the list of Quad is needed during init")
            .with("computeTriangleList", DataKind::Bool, "1", "put true if the list of triangles is needed during init")
            .with("computeEdgeList", DataKind::Bool, "1", "put true if the list of lines is needed during init")
            .with("computePointList", DataKind::Bool, "1", "put true if the list of points is needed during init")
            .with("checkTopology", DataKind::Bool, "0", "Parameter to activate internal topology checks")
            .with("drawEdges", DataKind::Bool, "0", "if true, draw the topology edges")
            .with("position", DataKind::Reals(3), "", "List of point positions (computed)")
            .with("edges", DataKind::Ints(2), "", "List of edge indices (computed)")
            .with("triangles", DataKind::Ints(3), "", "List of triangle indices (computed)")
            .with("quads", DataKind::Ints(4), "", "List of quad indices (computed)")
            .with("hexahedra", DataKind::Ints(8), "", "List of hexahedra (computed)");
        RegularGridTopology {
            data,
            mesh: Mesh::default(),
            n: [2, 2, 2],
            cylinder: false,
        }
    }

    /// SOFA's CylinderGridTopology (.../Grid/CylinderGridTopology.cpp): the grid's (i, j) square
    /// of each layer pushed out onto the disc of `radius` (a point keeps its direction, its
    /// distance becoming the larger of |x| and |y|), layers `length / (nz − 1)` apart along
    /// `axis`, from `center`.
    pub fn cylinder() -> Self {
        let mut g = Self::new();
        g.data = g
            .data
            .with(
                "center",
                DataKind::Vector(3),
                "0 0 0",
                "Center of the cylinder",
            )
            .with(
                "axis",
                DataKind::Vector(3),
                "0 0 1",
                "Main direction of the cylinder",
            )
            .with("radius", DataKind::Real, "1", "Radius of the cylinder")
            .with(
                "length",
                DataKind::Real,
                "1",
                "Length of the cylinder along its axis",
            );
        g.cylinder = true;
        g
    }

    /// A point of the cylinder grid (CylinderGridTopology::getPointInGrid).
    fn cylinder_point(&self, i: usize, j: usize, k: usize) -> [f64; 3] {
        use canape_types::Vec3;
        let d = &self.data;
        let (r, l) = (d.real("radius"), d.real("length"));
        let v3 = |n: &str| {
            let v = d.reals(n);
            Vec3::new(
                v.first().copied().unwrap_or(0.0),
                v.get(1).copied().unwrap_or(0.0),
                v.get(2).copied().unwrap_or(0.0),
            )
        };
        let az = v3("axis").normalize();
        let mut ax = if (az - Vec3::x()).norm() < 1e-6 {
            Vec3::y()
        } else {
            Vec3::x()
        };
        let ay = az.cross(&ax).normalize();
        ax = ay.cross(&az).normalize();
        let [nx, ny, nz] = self.n.map(|v| v as f64);
        let mut p = Vec3::new(
            i as f64 * 2.0 * r / (nx - 1.0) - r,
            j as f64 * 2.0 * r / (ny - 1.0) - r,
            0.0,
        );
        if p.norm() > 1e-7 {
            p *= p.x.abs().max(p.y.abs()) / p.norm();
        }
        if nz > 1.0 {
            p.z = k as f64 * l / (nz - 1.0);
        }
        let q = v3("center") + ax * p.x + ay * p.y + az * p.z;
        [q.x, q.y, q.z]
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let d = &self.data;
        let mut n = [2usize; 3];
        let nv = d.ints("n");
        if nv.len() == 3 {
            n = [nv[0] as usize, nv[1] as usize, nv[2] as usize];
        } else {
            ctx.warn(format!(
                "n has {} values, expected 3; using 2 2 2",
                nv.len()
            ));
        }
        if d.is_set("nx") && d.is_set("ny") && d.is_set("nz") {
            n = [
                d.int("nx").max(0) as usize,
                d.int("ny").max(0) as usize,
                d.int("nz").max(0) as usize,
            ];
        }
        let (min, max) = grid_bounds(d, ctx);
        let cw = d.real("cellWidth");
        if cw > 0.0 {
            for k in 0..3 {
                let c = ((max[k] - min[k]) / cw).ceil();
                n[k] = if (0.0..1e7).contains(&c) {
                    c as usize + 1
                } else {
                    0
                };
            }
        }
        if n.iter().any(|&v| v < 1) {
            ctx.warn(format!("grid resolution {n:?} is invalid; reset to 2 2 2"));
            n = [2, 2, 2];
        }
        let cap = canape_core::state::MAX_POINTS;
        if n.iter().map(|&v| v as f64).product::<f64>() > cap as f64 {
            ctx.error(format!(
                "grid resolution {n:?} asks for more than {cap} points; the grid is left empty"
            ));
            self.mesh = Mesh::default();
            return;
        }
        self.n = n;
        let mut p0 = [min[0], min[1], min[2]];
        let mut step = [0.0; 3];
        for k in 0..3 {
            let m = n[k] as f64 - 1.0;
            if n[k] > 1 {
                step[k] = (max[k] - min[k]) / m;
            } else {
                step[k] = max[k] - min[k];
                p0[k] = if k == 2 {
                    min[k]
                } else {
                    (min[k] + max[k]) / 2.0
                };
            }
        }
        if let (true, [a, b, c]) = (d.is_set("p0"), d.reals("p0")) {
            p0 = [*a, *b, *c];
        }
        let (nx, ny, nz) = (n[0], n[1], n[2]);
        let mut points = Vec::with_capacity(nx * ny * nz);
        if self.cylinder && (nx < 2 || ny < 2) {
            ctx.error(format!(
                "a cylinder grid needs at least 2 points across (nx {nx}, ny {ny})"
            ));
            self.mesh = Mesh::default();
            return;
        }
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    if self.cylinder {
                        points.push(self.cylinder_point(i, j, k));
                        continue;
                    }
                    // p0 + dx·i + dy·j + dz·k with dx, dy, dz axis vectors (SOFA's evaluation order)
                    let (fi, fj, fk) = (i as f64, j as f64, k as f64);
                    points.push([
                        p0[0] + step[0] * fi + 0.0 * fj + 0.0 * fk,
                        p0[1] + 0.0 * fi + step[1] * fj + 0.0 * fk,
                        p0[2] + 0.0 * fi + 0.0 * fj + step[2] * fk,
                    ]);
                }
            }
        }
        let idx = |i: usize, j: usize, k: usize| (i + nx * (j + ny * k)) as u32;
        let mut hexa = Vec::new();
        if d.bool("computeHexaList") && nx > 1 && ny > 1 && nz > 1 {
            for z in 0..nz - 1 {
                for y in 0..ny - 1 {
                    for x in 0..nx - 1 {
                        hexa.push([
                            idx(x, y, z),
                            idx(x + 1, y, z),
                            idx(x + 1, y + 1, z),
                            idx(x, y + 1, z),
                            idx(x, y, z + 1),
                            idx(x + 1, y, z + 1),
                            idx(x + 1, y + 1, z + 1),
                            idx(x, y + 1, z + 1),
                        ]);
                    }
                }
            }
        }
        // SOFA's GridTopology also lists every grid quad, two triangles per quad (split along
        // q0-q2) and the edges of those triangles (GridTopology.cpp, GridUpdate): what
        // components reading quads, triangles or edges of a grid see
        let quads = if d.bool("computeQuadList") || d.bool("computeTriangleList") {
            grid_quads(n)
        } else {
            Vec::new()
        };
        let triangles: Vec<[u32; 3]> = if d.bool("computeTriangleList") {
            quads
                .iter()
                .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
                .collect()
        } else {
            Vec::new()
        };
        let edges = if !d.bool("computeEdgeList") {
            Vec::new()
        } else if !triangles.is_empty() {
            canape_core::mesh::edges_from_triangles(&triangles)
        } else {
            grid_lines(n)
        };
        let quads = if d.bool("computeQuadList") {
            quads
        } else {
            Vec::new()
        };
        self.mesh = Mesh {
            points,
            edges,
            triangles,
            quads,
            hexahedra: hexa,
            ..Mesh::default()
        };
        let _ = self
            .data
            .set_value("position", Value::Reals(flatten_points(&self.mesh.points)));
        let _ = self
            .data
            .set_value("hexahedra", Value::Ints(flatten(&self.mesh.hexahedra)));
        let _ = self
            .data
            .set_value("edges", Value::Ints(flatten(&self.mesh.edges)));
        let _ = self
            .data
            .set_value("triangles", Value::Ints(flatten(&self.mesh.triangles)));
        let _ = self
            .data
            .set_value("quads", Value::Ints(flatten(&self.mesh.quads)));
    }
}

impl_component!(
    RegularGridTopology,
    |s| if s.cylinder {
        "CylinderGridTopology"
    } else {
        "RegularGridTopology"
    },
    init
);

impl Topology for RegularGridTopology {
    fn mesh(&self) -> &Mesh {
        &self.mesh
    }
    fn mesh_mut(&mut self) -> &mut Mesh {
        &mut self.mesh
    }
    fn grid_size(&self) -> Option<[usize; 3]> {
        Some(self.n)
    }
}

/// Splits each hexahedron into 6 tetrahedra
/// (Sofa/Component/Topology/Mapping/.../Hexa2TetraTopologicalMapping.cpp).
#[derive(Clone)]
pub struct Hexa2TetraTopologicalMapping {
    data: DataTable,
}

impl Default for Hexa2TetraTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Hexa2TetraTopologicalMapping {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with("input", DataKind::Str, "", "Input topology to map")
            .with("output", DataKind::Str, "", "Output topology to map")
            .with(
                "swapping",
                DataKind::Bool,
                "0",
                "Boolean enabling to swapp hexa-edges in order to avoid bias effect",
            );
        Hexa2TetraTopologicalMapping { data }
    }
}

impl_component!(Hexa2TetraTopologicalMapping, "Hexa2TetraTopologicalMapping");

pub use canape_core::mesh::hexa_to_tetras;

impl TopologicalMapping for Hexa2TetraTopologicalMapping {
    fn map(&self, input: &Mesh, grid: Option<[usize; 3]>) -> Mesh {
        let swapping = self.data.bool("swapping");
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
fn grid_lines(n: [usize; 3]) -> Vec<[u32; 2]> {
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

pub(crate) fn mapping_data(t: DataTable) -> DataTable {
    base_data(t)
        .with("input", DataKind::Str, "", "Input topology to map")
        .with("output", DataKind::Str, "", "Output topology to map")
        .with(
            "flipNormals",
            DataKind::Bool,
            "0",
            "Flip Normal ? (Inverse point order when creating quad/triangle)",
        )
}

/// The boundary quads of a hexahedral topology (Sofa/Component/Topology/Mapping/.../
/// Hexa2QuadTopologicalMapping.cpp): the input's quads that belong to one hexahedron, in the
/// input's quad order (a grid's quads, SOFA's container faces, or the quads a loader gave),
/// reversed with `flipNormals`.
#[derive(Clone)]
pub struct Hexa2QuadTopologicalMapping {
    data: DataTable,
}

impl Default for Hexa2QuadTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Hexa2QuadTopologicalMapping {
    pub fn new() -> Self {
        Hexa2QuadTopologicalMapping {
            data: mapping_data(DataTable::new()),
        }
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
        let flip = self.data.bool("flipNormals");
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
    data: DataTable,
}

impl Default for Tetra2TriangleTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Tetra2TriangleTopologicalMapping {
    pub fn new() -> Self {
        Tetra2TriangleTopologicalMapping {
            data: mapping_data(DataTable::new())
                .with("noNewTriangles", DataKind::Bool, "0", "If true, no new triangles are being created")
                .with("noInitialTriangles", DataKind::Bool, "0", "If true, the list of initial triangles is initially empty. Only additional triangles will be added in the list"),
        }
    }
}

impl_component!(
    Tetra2TriangleTopologicalMapping,
    "Tetra2TriangleTopologicalMapping"
);

impl TopologicalMapping for Tetra2TriangleTopologicalMapping {
    fn map(&self, input: &Mesh, _grid: Option<[usize; 3]>) -> Mesh {
        use canape_core::mesh::TETRA_FACES;
        if self.data.bool("noInitialTriangles") {
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
        let flip = self.data.bool("flipNormals");
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
    data: DataTable,
}

impl Default for Quad2TriangleTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Quad2TriangleTopologicalMapping {
    pub fn new() -> Self {
        Quad2TriangleTopologicalMapping {
            data: base_data(DataTable::new())
                .with("input", DataKind::Str, "", "Input topology to map")
                .with("output", DataKind::Str, "", "Output topology to map"),
        }
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
    data: DataTable,
}

impl Default for Triangle2EdgeTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Triangle2EdgeTopologicalMapping {
    pub fn new() -> Self {
        Triangle2EdgeTopologicalMapping {
            data: base_data(DataTable::new())
                .with("input", DataKind::Str, "", "Input topology to map")
                .with("output", DataKind::Str, "", "Output topology to map"),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mass::tetra_volume;
    use canape_types::Vec3;

    #[test]
    fn hexa_split_is_positive_and_fills_the_cube() {
        let p = |i: u32| {
            let x = [
                (0., 0., 0.),
                (1., 0., 0.),
                (1., 1., 0.),
                (0., 1., 0.),
                (0., 0., 1.),
                (1., 0., 1.),
                (1., 1., 1.),
                (0., 1., 1.),
            ][i as usize];
            Vec3::new(x.0, x.1, x.2)
        };
        for swapped in [false] {
            let t = hexa_to_tetras([0, 1, 2, 3, 4, 5, 6, 7], swapped);
            let mut sum = 0.0;
            for tt in t {
                let (a, b, c, d) = (p(tt[0]), p(tt[1]), p(tt[2]), p(tt[3]));
                let signed = (b - a).cross(&(c - a)).dot(&(d - a)) / 6.0;
                assert!(signed > 0.0);
                sum += tetra_volume([a, b, c, d]);
            }
            assert!((sum - 1.0).abs() < 1e-12);
        }
    }

    fn cube_points(n: [usize; 3]) -> Vec<[f64; 3]> {
        let mut p = Vec::new();
        for z in 0..n[2] {
            for y in 0..n[1] {
                for x in 0..n[0] {
                    p.push([x as f64, y as f64, z as f64]);
                }
            }
        }
        p
    }

    /// Σ over faces of (area vector) must vanish for a closed surface, and with outward faces
    /// Σ centroid·n·area/3 is the enclosed volume (divergence theorem).
    fn enclosed_volume(points: &[[f64; 3]], faces: &[Vec<u32>]) -> (f64, Vec3) {
        let mut vol = 0.0;
        let mut total = Vec3::zeros();
        for f in faces {
            let p: Vec<Vec3> = f.iter().map(|&i| Vec3::from(points[i as usize])).collect();
            // fan triangulation
            for k in 1..p.len() - 1 {
                let a = (p[k] - p[0]).cross(&(p[k + 1] - p[0])) / 2.0;
                total += a;
                vol += (p[0] + p[k] + p[k + 1]).dot(&a) / 9.0;
            }
        }
        (vol, total)
    }

    #[test]
    fn boundary_of_hexahedra_and_tetrahedra_closes_the_volume_outward() {
        let n = [3, 4, 2];
        let pts = cube_points(n);
        let p = |x: usize, y: usize, z: usize| (n[0] * (n[1] * z + y) + x) as u32;
        let mut hexahedra = Vec::new();
        for z in 0..n[2] - 1 {
            for y in 0..n[1] - 1 {
                for x in 0..n[0] - 1 {
                    hexahedra.push([
                        p(x, y, z),
                        p(x + 1, y, z),
                        p(x + 1, y + 1, z),
                        p(x, y + 1, z),
                        p(x, y, z + 1),
                        p(x + 1, y, z + 1),
                        p(x + 1, y + 1, z + 1),
                        p(x, y + 1, z + 1),
                    ]);
                }
            }
        }
        let grid = Mesh {
            hexahedra,
            ..Mesh::default()
        };
        // hexahedra as a grid (SOFA's grid quads) and as a plain mesh (container faces)
        for g in [Some(n), None] {
            let m = Hexa2QuadTopologicalMapping::new().map(&grid, g);
            let want = 22; // faces of the 2×3×1 box: 2·(2·3 + 2·1 + 3·1)
            assert_eq!(m.quads.len(), want, "{g:?}");
            let faces: Vec<Vec<u32>> = m.quads.iter().map(|q| q.to_vec()).collect();
            let (vol, total) = enclosed_volume(&pts, &faces);
            if g.is_none() {
                // the container's faces point outward: a closed surface around the volume
                assert!(total.norm() < 1e-12, "open surface");
                assert!((vol - 6.0).abs() < 1e-12, "volume {vol}");
            } else {
                // SOFA's grid quads keep the grid's orientation (some point inward): the same
                // surface, checked by its area
                let area: f64 = faces
                    .iter()
                    .map(|f| {
                        let q: Vec<Vec3> = f.iter().map(|&i| Vec3::from(pts[i as usize])).collect();
                        (q[1] - q[0]).cross(&(q[2] - q[0])).norm()
                    })
                    .sum();
                assert!((area - 22.0).abs() < 1e-12, "area {area}");
            }
        }
        let mut flip = Hexa2QuadTopologicalMapping::new();
        flip.data.set_str("flipNormals", "1").unwrap();
        let m = flip.map(&grid, None);
        let faces: Vec<Vec<u32>> = m.quads.iter().map(|q| q.to_vec()).collect();
        assert!((enclosed_volume(&pts, &faces).0 + 6.0).abs() < 1e-12);
        // tetrahedra: the grid split in tetrahedra; boundary triangles enclose the volume
        let tets = Hexa2TetraTopologicalMapping::new().map(&grid, Some(n));
        let m = Tetra2TriangleTopologicalMapping::new().map(&tets, None);
        assert_eq!(m.triangles.len(), 2 * 22);
        let faces: Vec<Vec<u32>> = m.triangles.iter().map(|t| t.to_vec()).collect();
        let (vol, total) = enclosed_volume(&pts, &faces);
        assert!(total.norm() < 1e-12);
        assert!((vol - 6.0).abs() < 1e-12, "volume {vol}");
        let mut none = Tetra2TriangleTopologicalMapping::new();
        none.data.set_str("noInitialTriangles", "1").unwrap();
        assert!(none.map(&tets, None).triangles.is_empty());
    }

    #[test]
    fn quads_split_in_a_checkerboard_and_triangles_give_their_border() {
        // a 2 × 2 grid of quads (3 × 3 points): cells 0 and 3 split along p0-p2, 1 and 2 along
        // p1-p3; the square's 8 border edges, none of the inner ones
        let q = vec![[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]];
        let m = Quad2TriangleTopologicalMapping::new().map(
            &Mesh {
                quads: q,
                ..Mesh::default()
            },
            Some([3, 3, 1]),
        );
        assert_eq!(
            m.triangles,
            vec![
                [1, 4, 0],
                [3, 0, 4],
                [1, 2, 4],
                [5, 4, 2],
                [3, 4, 6],
                [7, 6, 4],
                [5, 8, 4],
                [7, 4, 8]
            ]
        );
        let e = Triangle2EdgeTopologicalMapping::new().map(&m, None);
        assert_eq!(e.edges.len(), 8);
        for [a, b] in &e.edges {
            // a border edge has both ends on the square's border (not the centre, point 4)
            assert!(*a != 4 && *b != 4, "{:?}", e.edges);
        }
    }
}

#[cfg(test)]
mod cylinder_tests {
    use super::*;
    use canape_core::component::Component;
    use canape_core::scene::{AnyComponent, Scene};

    #[test]
    fn cylinder_grid_points_lie_on_discs_along_the_axis() {
        let mut g = RegularGridTopology::cylinder();
        let d = g.data_mut();
        d.set_str("n", "3 3 2").unwrap();
        d.set_str("radius", "1").unwrap();
        d.set_str("length", "2").unwrap();
        d.set_str("center", "0 0 1").unwrap();
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let id = scene.add_component(
            root,
            "cyl",
            AnyComponent::Topology(Box::new(g.clone())),
            None,
        );
        let mut diags = canape_core::diag::Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        g.init_impl(&mut ctx);
        assert!(diags.is_empty(), "{diags:?}");
        let p = &g.mesh().points;
        assert_eq!(p.len(), 18);
        assert_eq!(g.mesh().hexahedra.len(), 4);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let close = |a: [f64; 3], b: [f64; 3]| (0..3).all(|k| (a[k] - b[k]).abs() < 1e-12);
        // a corner of the square goes onto the circle, the middle stays on the axis
        assert!(close(p[0], [-h, -h, 1.0]), "{:?}", p[0]);
        assert!(close(p[4], [0.0, 0.0, 1.0]), "{:?}", p[4]);
        // the second layer, length away along z
        assert!(close(p[9 + 5], [1.0, 0.0, 3.0]), "{:?}", p[14]);
        assert_eq!(g.class_name(), "CylinderGridTopology");
    }
}
