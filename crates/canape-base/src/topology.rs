//! Topologies and topological mappings: RegularGridTopology, MeshTopology, the *SetTopology
//! containers (static here: topology changes come later), Hexa2TetraTopologicalMapping and the
//! boundary extractions Hexa2QuadTopologicalMapping, Tetra2TriangleTopologicalMapping and
//! Triangle2EdgeTopologicalMapping, Quad2TriangleTopologicalMapping; Mesh2PointTopologicalMapping
//! in `mesh2point`, Hexa2PrismTopologicalMapping in `hexa2prism`.

pub mod cube;
pub mod edge2quad;
pub mod hexa2prism;
mod mappings;
pub mod mesh2point;
pub mod subset_mapping;
use mappings::grid_lines;
#[cfg(test)]
mod tests;

pub use mappings::*;

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
