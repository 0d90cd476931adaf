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

/// Handles to the box Data of a grid topology (RegularGridTopology, CubeTopology): their
/// schemas declare the same fields with their own help texts.
#[derive(Clone, Copy)]
struct GridBounds {
    min: Data<Reals>,
    max: Data<Reals>,
    /// xmin, ymin, zmin, xmax, ymax, zmax
    legacy: [Data<Real>; 6],
    scale: Data<Real>,
}

/// The box of a grid topology (RegularGridTopology, CubeTopology): `min`/`max`, or SOFA's legacy
/// `xmin` … `zmax` times `scale` when all six are given — read as float32, as SOFA's
/// getAttributeAsFloat does; a partial legacy set is reported and ignored.
fn grid_bounds(d: &DataTable, b: GridBounds, ctx: &mut InitContext<'_>) -> ([f64; 3], [f64; 3]) {
    let v3 = |h: Data<Reals>, dflt: [f64; 3]| -> [f64; 3] {
        let v = d.get(h);
        if v.len() == 3 {
            [v[0], v[1], v[2]]
        } else {
            dflt
        }
    };
    if b.legacy.iter().all(|&h| d.was_set(h)) {
        let s = d.get(b.scale) as f32;
        let [x0, y0, z0, x1, y1, z1] = b.legacy.map(|h| ((d.get(h) as f32) * s) as f64);
        return ([x0, y0, z0], [x1, y1, z1]);
    }
    if b.legacy.iter().any(|&h| d.was_set(h)) {
        ctx.warn("xmin/ymin/zmin/xmax/ymax/zmax are used only when all six are given; min/max used instead");
    }
    (v3(b.min, [0.0; 3]), v3(b.max, [1.0; 3]))
}

use crate::base_data;
use canape_core::component::{TopologicalMapping, Topology};
use canape_core::data::{Data, DataKind, DataTable, Flag, Int, Ints, Real, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::mesh::{flatten, flatten_points, group, group_points, Mesh};
use canape_core::scene::InitContext;

canape_core::data_schema! {
    /// The point positions of a mesh topology.
    pub struct PositionData {
        position: Reals = ("position", DataKind::Reals(3), "", "List of point positions") alias ["points"],
    }
}
canape_core::data_schema! {
    /// The edge list of a mesh topology.
    pub struct EdgesData {
        edges: Ints = ("edges", DataKind::Ints(2), "", "List of edge indices") alias ["lines"],
    }
}
canape_core::data_schema! {
    /// The triangle list of a mesh topology.
    pub struct TrianglesData {
        triangles: Ints = ("triangles", DataKind::Ints(3), "", "List of triangle indices"),
    }
}
canape_core::data_schema! {
    /// The quad list of a mesh topology.
    pub struct QuadsData {
        quads: Ints = ("quads", DataKind::Ints(4), "", "List of quad indices"),
    }
}
canape_core::data_schema! {
    /// The tetrahedron list of a mesh topology.
    pub struct TetrahedraData {
        tetrahedra: Ints = ("tetrahedra", DataKind::Ints(4), "", "List of tetrahedron indices") alias ["tetras"],
    }
}
canape_core::data_schema! {
    /// The hexahedron list of a mesh topology.
    pub struct HexahedraData {
        hexahedra: Ints = ("hexahedra", DataKind::Ints(8), "", "List of hexahedron indices") alias ["hexas"],
    }
}
canape_core::data_schema! {
    /// The prism list of a mesh topology.
    pub struct PrismsData {
        prisms: Ints = ("prisms", DataKind::Ints(6), "", "List of prism indices"),
    }
}

canape_core::data_schema! {
    /// What a container adds after its positions and element lists.
    pub struct ContainerData {
        nb_points: Int = ("nbPoints", DataKind::Int, "0", "Number of points"),
        check_topology: Flag = ("checkTopology", DataKind::Bool, "0", "Parameter to activate internal topology checks (might slow down the simulation)"),
        check_connexity: Flag = ("checkConnexity", DataKind::Bool, "0", "It true, will check the connexity of the mesh."),
        draw_edges: Flag = ("drawEdges", DataKind::Bool, "0", "if true, draw the topology edges"),
        draw_triangles: Flag = ("drawTriangles", DataKind::Bool, "0", "if true, draw the topology triangles"),
        draw_quads: Flag = ("drawQuads", DataKind::Bool, "0", "if true, draw the topology quads"),
        draw_tetrahedra: Flag = ("drawTetrahedra", DataKind::Bool, "0", "if true, draw the topology tetrahedra"),
        draw_hexahedra: Flag = ("drawHexahedra", DataKind::Bool, "0", "if true, draw the topology hexahedra"),
        create_triangle_array: Flag = ("createTriangleArray", DataKind::Bool, "0", "Force the creation of a set of triangles associated with each tetrahedron"),
        filename: Text = ("filename", DataKind::File, "", "Filename of the mesh (.obj, .msh, .vtk/.vtu, .stl): its points and elements, unless they are given") alias ["fileTopology"],
    }
}

/// Handles to the mesh Data of a container: its positions and the element lists its class has
/// (None: not a Data of the class, read as empty).
#[derive(Clone, Copy, Debug)]
pub struct MeshData {
    pub position: PositionData,
    pub edges: Option<EdgesData>,
    pub triangles: Option<TrianglesData>,
    pub quads: Option<QuadsData>,
    pub tetrahedra: Option<TetrahedraData>,
    pub hexahedra: Option<HexahedraData>,
    pub prisms: Option<PrismsData>,
}

/// Declare a schema's Data when `on`.
fn declare_if<S>(
    t: DataTable,
    on: bool,
    declare: fn(DataTable) -> (DataTable, S),
) -> (DataTable, Option<S>) {
    if on {
        let (t, s) = declare(t);
        (t, Some(s))
    } else {
        (t, None)
    }
}

impl MeshData {
    fn mesh(&self, d: &DataTable) -> Mesh {
        let ints = |h: Option<Data<Ints>>| h.map_or(&[][..], |h| d.get(h));
        Mesh {
            points: group_points(d.get(self.position.position)),
            edges: group(ints(self.edges.map(|h| h.edges))),
            triangles: group(ints(self.triangles.map(|h| h.triangles))),
            quads: group(ints(self.quads.map(|h| h.quads))),
            tetrahedra: group(ints(self.tetrahedra.map(|h| h.tetrahedra))),
            hexahedra: group(ints(self.hexahedra.map(|h| h.hexahedra))),
            prisms: group(ints(self.prisms.map(|h| h.prisms))),
        }
    }
}

/// A static mesh topology given by Data (MeshTopology, and the *SetTopologyContainer family).
#[derive(Clone)]
pub struct MeshContainer {
    class: &'static str,
    data: DataTable,
    /// Typed handles to the mesh Data in `data`.
    dm: MeshData,
    /// Typed handles to the container Data in `data`.
    d: ContainerData,
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

/// The positions and the element lists of `class` (see [`container_elements`]).
fn container_data(t: DataTable, class: &str) -> (DataTable, MeshData) {
    let keep = container_elements(class);
    let has = |name: &str| keep.is_none_or(|k| k.contains(&name));
    let (t, position) = PositionData::declare(t);
    let (t, edges) = declare_if(t, has("edges"), EdgesData::declare);
    let (t, triangles) = declare_if(t, has("triangles"), TrianglesData::declare);
    let (t, quads) = declare_if(t, has("quads"), QuadsData::declare);
    let (t, tetrahedra) = declare_if(t, has("tetrahedra"), TetrahedraData::declare);
    let (t, hexahedra) = declare_if(t, has("hexahedra"), HexahedraData::declare);
    let (t, prisms) = declare_if(t, has("prisms"), PrismsData::declare);
    (
        t,
        MeshData {
            position,
            edges,
            triangles,
            quads,
            tetrahedra,
            hexahedra,
            prisms,
        },
    )
}

impl MeshContainer {
    pub fn new(class: &'static str) -> Self {
        let (data, dm) = container_data(base_data(DataTable::new()), class);
        let (data, d) = ContainerData::declare(data);
        MeshContainer {
            class,
            data,
            dm,
            d,
            mesh: Mesh::default(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        // a topological mapping may already have filled the mesh: keep it then
        let mut from_data = self.dm.mesh(&self.data);
        let file = self.data.get(self.d.filename).trim().to_string();
        if !file.is_empty() && from_data == Mesh::default() {
            // SOFA's MeshTopology / TopologyContainer `filename`: the mesh of the file
            match ctx.read_mesh(&file) {
                Ok(m) => from_data = m,
                Err(e) => ctx.error(e.to_string()),
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
        let _ = self.data.put(self.d.nb_points, Value::Int(n as i64));
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
        self.init_impl(ctx)
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

canape_core::data_schema! {
    /// RegularGridTopology's own Data (after the base Data).
    pub struct GridData {
        n: Ints = ("n", DataKind::Ints(3), "2 2 2", "grid resolution. (default = 2 2 2)"),
        nx: Int = ("nx", DataKind::Int, "0", "x grid resolution (legacy attribute, all of nx ny nz must be given)"),
        ny: Int = ("ny", DataKind::Int, "0", "y grid resolution (legacy attribute)"),
        nz: Int = ("nz", DataKind::Int, "0", "z grid resolution (legacy attribute)"),
        min: Reals = ("min", DataKind::Vector(3), "0 0 0", "Min end of the diagonal"),
        max: Reals = ("max", DataKind::Vector(3), "1 1 1", "Max end of the diagonal"),
        xmin: Real = ("xmin", DataKind::Real, "0", "legacy: min x (all six bounds must be given)"),
        ymin: Real = ("ymin", DataKind::Real, "0", "legacy: min y"),
        zmin: Real = ("zmin", DataKind::Real, "0", "legacy: min z"),
        xmax: Real = ("xmax", DataKind::Real, "1", "legacy: max x"),
        ymax: Real = ("ymax", DataKind::Real, "1", "legacy: max y"),
        zmax: Real = ("zmax", DataKind::Real, "1", "legacy: max z"),
        scale: Real = ("scale", DataKind::Real, "1", "legacy: scale applied to xmin..zmax"),
        p0: Reals = ("p0", DataKind::Vector(3), "0 0 0", "Offset all the grid points"),
        cell_width: Real = ("cellWidth", DataKind::Real, "0", "if > 0 : dimension of each cell in the created grid. Otherwise, the cell size is computed based on min, max, and resolution n."),
        compute_hexa_list: Flag = ("computeHexaList", DataKind::Bool, "1", "put true if the list of Hexahedra is needed during init"),
        compute_quad_list: Flag = ("computeQuadList", DataKind::Bool, "1", "put true if the list of Quad is needed during init"),
        compute_triangle_list: Flag = ("computeTriangleList", DataKind::Bool, "1", "put true if the list of triangles is needed during init"),
        compute_edge_list: Flag = ("computeEdgeList", DataKind::Bool, "1", "put true if the list of lines is needed during init"),
        compute_point_list: Flag = ("computePointList", DataKind::Bool, "1", "put true if the list of points is needed during init"),
        check_topology: Flag = ("checkTopology", DataKind::Bool, "0", "Parameter to activate internal topology checks"),
        draw_edges: Flag = ("drawEdges", DataKind::Bool, "0", "if true, draw the topology edges"),
        position: Reals = ("position", DataKind::Reals(3), "", "List of point positions (computed)"),
        edges: Ints = ("edges", DataKind::Ints(2), "", "List of edge indices (computed)"),
        triangles: Ints = ("triangles", DataKind::Ints(3), "", "List of triangle indices (computed)"),
        quads: Ints = ("quads", DataKind::Ints(4), "", "List of quad indices (computed)"),
        hexahedra: Ints = ("hexahedra", DataKind::Ints(8), "", "List of hexahedra (computed)"),
    }
}

canape_core::data_schema! {
    /// What CylinderGridTopology adds to [`GridData`].
    pub struct CylinderData {
        center: Reals = ("center", DataKind::Vector(3), "0 0 0", "Center of the cylinder"),
        axis: Reals = ("axis", DataKind::Vector(3), "0 0 1", "Main direction of the cylinder"),
        radius: Real = ("radius", DataKind::Real, "1", "Radius of the cylinder"),
        length: Real = ("length", DataKind::Real, "1", "Length of the cylinder along its axis"),
    }
}

/// A regular grid of points and hexahedra
/// (Sofa/Component/Topology/Container/Grid/.../RegularGridTopology.cpp, GridTopology.cpp).
#[derive(Clone)]
pub struct RegularGridTopology {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: GridData,
    /// SOFA's CylinderGridTopology: the same grid with its points on a cylinder (its Data).
    dc: Option<CylinderData>,
    mesh: Mesh,
    n: [usize; 3],
}

impl Default for RegularGridTopology {
    fn default() -> Self {
        Self::new()
    }
}

impl RegularGridTopology {
    pub fn new() -> Self {
        let (data, d) = GridData::declare(base_data(DataTable::new()));
        RegularGridTopology {
            data,
            d,
            dc: None,
            mesh: Mesh::default(),
            n: [2, 2, 2],
        }
    }

    /// SOFA's CylinderGridTopology (.../Grid/CylinderGridTopology.cpp): the grid's (i, j) square
    /// of each layer pushed out onto the disc of `radius` (a point keeps its direction, its
    /// distance becoming the larger of |x| and |y|), layers `length / (nz − 1)` apart along
    /// `axis`, from `center`.
    pub fn cylinder() -> Self {
        let mut g = Self::new();
        let (data, dc) = CylinderData::declare(std::mem::take(&mut g.data));
        g.data = data;
        g.dc = Some(dc);
        g
    }

    fn bounds(&self) -> GridBounds {
        let d = &self.d;
        GridBounds {
            min: d.min,
            max: d.max,
            legacy: [d.xmin, d.ymin, d.zmin, d.xmax, d.ymax, d.zmax],
            scale: d.scale,
        }
    }

    /// A point of the cylinder grid (CylinderGridTopology::getPointInGrid).
    fn cylinder_point(&self, dc: CylinderData, i: usize, j: usize, k: usize) -> [f64; 3] {
        use canape_types::Vec3;
        let d = &self.data;
        let (r, l) = (d.get(dc.radius), d.get(dc.length));
        let v3 = |h: Data<Reals>| {
            let v = d.get(h);
            Vec3::new(
                v.first().copied().unwrap_or(0.0),
                v.get(1).copied().unwrap_or(0.0),
                v.get(2).copied().unwrap_or(0.0),
            )
        };
        let az = v3(dc.axis).normalize();
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
        let q = v3(dc.center) + ax * p.x + ay * p.y + az * p.z;
        [q.x, q.y, q.z]
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let (d, h) = (&self.data, self.d);
        let mut n = [2usize; 3];
        let nv = d.get(h.n);
        if nv.len() == 3 {
            n = [nv[0] as usize, nv[1] as usize, nv[2] as usize];
        } else {
            ctx.warn(format!(
                "n has {} values, expected 3; using 2 2 2",
                nv.len()
            ));
        }
        if d.was_set(h.nx) && d.was_set(h.ny) && d.was_set(h.nz) {
            n = [
                d.get(h.nx).max(0) as usize,
                d.get(h.ny).max(0) as usize,
                d.get(h.nz).max(0) as usize,
            ];
        }
        let (min, max) = grid_bounds(d, self.bounds(), ctx);
        let cw = d.get(h.cell_width);
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
        if let (true, [a, b, c]) = (d.was_set(h.p0), d.get(h.p0)) {
            p0 = [*a, *b, *c];
        }
        let (nx, ny, nz) = (n[0], n[1], n[2]);
        let mut points = Vec::with_capacity(nx * ny * nz);
        if self.dc.is_some() && (nx < 2 || ny < 2) {
            ctx.error(format!(
                "a cylinder grid needs at least 2 points across (nx {nx}, ny {ny})"
            ));
            self.mesh = Mesh::default();
            return;
        }
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    if let Some(dc) = self.dc {
                        points.push(self.cylinder_point(dc, i, j, k));
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
        if d.get(h.compute_hexa_list) && nx > 1 && ny > 1 && nz > 1 {
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
        let quads = if d.get(h.compute_quad_list) || d.get(h.compute_triangle_list) {
            grid_quads(n)
        } else {
            Vec::new()
        };
        let triangles: Vec<[u32; 3]> = if d.get(h.compute_triangle_list) {
            quads
                .iter()
                .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
                .collect()
        } else {
            Vec::new()
        };
        let edges = if !d.get(h.compute_edge_list) {
            Vec::new()
        } else if !triangles.is_empty() {
            canape_core::mesh::edges_from_triangles(&triangles)
        } else {
            grid_lines(n)
        };
        let quads = if d.get(h.compute_quad_list) {
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
        let (t, m) = (&mut self.data, &self.mesh);
        let _ = t.put(h.position, Value::Reals(flatten_points(&m.points)));
        let _ = t.put(h.hexahedra, Value::Ints(flatten(&m.hexahedra)));
        let _ = t.put(h.edges, Value::Ints(flatten(&m.edges)));
        let _ = t.put(h.triangles, Value::Ints(flatten(&m.triangles)));
        let _ = t.put(h.quads, Value::Ints(flatten(&m.quads)));
    }
}

impl_component!(
    RegularGridTopology,
    |s| if s.dc.is_some() {
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
