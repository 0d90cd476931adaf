//! SOFA's exporter components: VTKExporter and MeshExporter (Sofa/Component/IO/Mesh/.../
//! VTKExporter.cpp, MeshExporter.cpp, on Sofa/framework/Simulation/Core/.../
//! BaseSimulationExporter.cpp) and Monitor (SofaValidation's Monitor.inl: gnuplot files of
//! chosen points' positions, velocities and forces).
//!
//! Schedule, as SOFA's exporters: with `exportEveryNumberOfSteps` N > 0 a file after every N-th
//! step (at AnimateEndEvent, the time advanced; never at step 0), with `exportAtBegin` one when
//! the scene is initialised, with `exportAtEnd` one when the simulation ends
//! ([`Event::SimulationEnd`], which `canape run` sends after its last step). Files are relative to
//! the working directory, created afresh (a link planted at their place is replaced, never
//! followed) and written whole at each export.
//!
//! Where Canapé writes correct files where SOFA's are not: MeshExporter's vtkxml offsets step by
//! 8 for hexahedra (SOFA adds 6), its netgen/tetgen face counts match the faces written (SOFA
//! counts boundary triangles but writes all), and VTKExporter names a legacy file `.vtk` (SOFA
//! gives `.vtu` to legacy content when the name has no extension).

use crate::state_io::{create_replacing, fmt_g6};
use canape_core::component::{Component, Controller, Event, SceneControl};
use canape_core::data::{base_fields, DataKind, DataTable, Value};
use canape_core::mesh::Mesh;
use canape_core::scene::{ComponentId, InitContext, NodeId, Scene, Slot, Target};
use canape_core::state::VecId;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The shared schedule (SOFA's BaseSimulationExporter).
#[derive(Clone, Default)]
struct Schedule {
    every: u64,
    at_begin: bool,
    at_end: bool,
    enable: bool,
    step: u64,
}

impl Schedule {
    fn fields(d: DataTable) -> DataTable {
        d.with("filename", DataKind::Str, "", "Path or filename where to export the data. If missing the name of the component is used.")
            .with("exportEveryNumberOfSteps", DataKind::Int, "0", "export file only at specified number of steps (0=disable)")
            .with("exportAtBegin", DataKind::Bool, "0", "export file at the initialization")
            .with("exportAtEnd", DataKind::Bool, "0", "export file when the simulation is finished")
            .with("enable", DataKind::Bool, "1", "Enable or disable the component")
    }
    fn read(d: &DataTable, ctx: &mut InitContext<'_>) -> Schedule {
        let every = d.int("exportEveryNumberOfSteps");
        if every < 0 {
            ctx.warn("exportEveryNumberOfSteps is negative: no periodic export");
        }
        Schedule {
            every: every.max(0) as u64,
            at_begin: d.bool("exportAtBegin"),
            at_end: d.bool("exportAtEnd"),
            enable: d.bool("enable"),
            step: 0,
        }
    }
    /// Whether this event asks for a file.
    fn due(&mut self, event: &Event) -> bool {
        if !self.enable {
            return false;
        }
        match event {
            Event::AnimateEnd { .. } if self.every > 0 => {
                self.step += 1;
                self.step.is_multiple_of(self.every)
            }
            Event::SimulationInitDone => self.at_begin,
            Event::SimulationEnd => self.at_end,
            _ => false,
        }
    }
}

/// The name of a file to write: `filename`, or the component's name.
fn base_name(d: &DataTable) -> String {
    let f = d.str("filename").trim();
    if f.is_empty() {
        d.str("name").to_string()
    } else {
        f.to_string()
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create folder '{}': {e}", dir.display()))?;
    }
    let mut f =
        create_replacing(path).map_err(|e| format!("cannot create '{}': {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|_| f.flush())
        .map_err(|e| format!("cannot write '{}': {e}", path.display()))
}

/// Where the points of an export come from: a state's vector (live) or a topology's points.
#[derive(Clone)]
enum Points {
    State(ComponentId, VecId),
    Topology(ComponentId),
}

fn state_vec(name: &str) -> Option<VecId> {
    match name {
        "position" => Some(VecId::POSITION),
        "rest_position" => Some(VecId::REST_POSITION),
        "velocity" => Some(VecId::VELOCITY),
        "force" => Some(VecId::FORCE),
        _ => None,
    }
}

/// The xyz of each point now (a rigid state's centres).
fn points_now(scene: &Scene, p: &Points) -> Vec<[f64; 3]> {
    match p {
        Points::State(id, v) => scene
            .state(*id)
            .map(|st| {
                let stride = if *v == VecId::POSITION || *v == VecId::REST_POSITION {
                    st.dof.coord_size()
                } else {
                    st.dof.deriv_size()
                };
                st.vec(*v)
                    .chunks_exact(stride)
                    .map(|c| [c[0], *c.get(1).unwrap_or(&0.0), *c.get(2).unwrap_or(&0.0)])
                    .collect()
            })
            .unwrap_or_default(),
        Points::Topology(id) => scene
            .topology(*id)
            .map(|t| t.mesh().points.clone())
            .unwrap_or_default(),
    }
}

/// The points of an export: the `position` Data's link when it names a state's vector, else the
/// context state's positions, else the topology's points.
fn resolve_points(
    ctx: &mut InitContext<'_>,
    d: &DataTable,
    topology: Option<ComponentId>,
) -> Option<Points> {
    let link = d.field("position").and_then(|f| f.link.clone());
    if let Some(link) = link {
        if let Some((path, field)) = canape_core::scene::split_data_link(&link) {
            if let (Some(Target::Component(c)), Some(v)) = (
                ctx.scene.resolve_path(ctx.node, Some(ctx.id), path),
                state_vec(field),
            ) {
                if ctx.scene.state(c).is_some() {
                    return Some(Points::State(c, v));
                }
            }
        }
        ctx.warn(format!(
            "position='{link}' is not a state's vector: the context state's positions are exported"
        ));
    }
    if let Some(s) = ctx.scene.context_state(ctx.node) {
        return Some(Points::State(s, VecId::POSITION));
    }
    topology.map(Points::Topology)
}

/// The context topology with elements (the nearest one).
fn context_topology(ctx: &InitContext<'_>) -> Option<ComponentId> {
    for n in ctx.scene.lineage(ctx.node) {
        let found = ctx
            .scene
            .node(n)
            .components
            .iter()
            .rev()
            .copied()
            .find(|&c| matches!(ctx.scene.info(c).slot, Slot::Topology(_)));
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Which element kinds an export writes.
#[derive(Clone, Copy, Default)]
struct Kinds {
    edges: bool,
    triangles: bool,
    quads: bool,
    tetras: bool,
    hexas: bool,
}

impl Kinds {
    fn read(d: &DataTable) -> Kinds {
        Kinds {
            edges: d.bool("edges"),
            triangles: d.bool("triangles"),
            quads: d.bool("quads"),
            tetras: d.bool("tetras"),
            hexas: d.bool("hexas"),
        }
    }
    /// The cells to write, in SOFA's order (edges, triangles, quads, tetrahedra, hexahedra), with
    /// their VTK cell type.
    fn cells(&self, m: &Mesh) -> Vec<(u8, Vec<u32>)> {
        let mut out: Vec<(u8, Vec<u32>)> = Vec::new();
        if self.edges {
            out.extend(m.edges.iter().map(|e| (3, e.to_vec())));
        }
        if self.triangles {
            out.extend(m.triangles.iter().map(|e| (5, e.to_vec())));
        }
        if self.quads {
            out.extend(m.quads.iter().map(|e| (9, e.to_vec())));
        }
        if self.tetras {
            out.extend(m.tetrahedra.iter().map(|e| (10, e.to_vec())));
        }
        if self.hexas {
            out.extend(m.hexahedra.iter().map(|e| (12, e.to_vec())));
        }
        out
    }
}

fn kinds_fields(d: DataTable, default_all: bool) -> DataTable {
    let (e, o) = if default_all { ("1", "1") } else { ("1", "0") };
    d.with("edges", DataKind::Bool, e, "write edge topology")
        .with("triangles", DataKind::Bool, o, "write triangle topology")
        .with("quads", DataKind::Bool, o, "write quad topology")
        .with("tetras", DataKind::Bool, o, "write tetra topology")
        .with("hexas", DataKind::Bool, o, "write hexa topology")
}

fn mesh_of(scene: &Scene, topology: Option<ComponentId>) -> Mesh {
    topology
        .and_then(|t| scene.topology(t))
        .map(|t| t.mesh().clone())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// VTKExporter

/// One Data written per point or per cell: output name, owner, Data name.
#[derive(Clone)]
struct Field {
    name: String,
    owner: ComponentId,
    data: String,
}

/// Numbers of a Data now, and how many make one tuple.
fn field_values(scene: &Scene, f: &Field) -> Option<(Vec<f64>, usize)> {
    if let (Some(st), Some(v)) = (scene.state(f.owner), state_vec(&f.data)) {
        let k = if v == VecId::POSITION || v == VecId::REST_POSITION {
            st.dof.coord_size()
        } else {
            st.dof.deriv_size()
        };
        return Some((st.vec(v).to_vec(), k));
    }
    let c = scene.component(f.owner)?;
    let field = c.data().field(&f.data)?;
    let width = match field.kind {
        DataKind::Reals(w) | DataKind::Ints(w) => w.max(1),
        DataKind::Vector(n) => n,
        _ => 1,
    };
    let v = match &field.value {
        Value::Real(r) => vec![*r],
        Value::Int(i) => vec![*i as f64],
        Value::Bool(b) => vec![f64::from(u8::from(*b))],
        Value::Reals(r) => r.clone(),
        Value::Ints(r) => r.iter().map(|&i| f64::from(i)).collect(),
        Value::Str(_) | Value::Words(_) => return None,
    };
    Some((v, width))
}

fn parse_fields(ctx: &mut InitContext<'_>, list: &[String], what: &str) -> Vec<Field> {
    let mut out = Vec::new();
    for entry in list {
        let (alias, rest) = match entry.split_once('=') {
            Some((a, r)) => (Some(a.to_string()), r),
            None => (None, entry.as_str()),
        };
        let rest = rest.trim_start_matches('@');
        let Some((path, data)) = rest.rsplit_once('.') else {
            ctx.error(format!("{what}: '{entry}' is not object.data: skipped"));
            continue;
        };
        match ctx.scene.resolve_path(ctx.node, Some(ctx.id), path) {
            Some(Target::Component(c)) => {
                let known = state_vec(data).is_some() && ctx.scene.state(c).is_some()
                    || ctx
                        .scene
                        .component(c)
                        .is_some_and(|k| k.data().field(data).is_some());
                if !known {
                    ctx.error(format!("{what}: '{path}' has no Data '{data}': skipped"));
                    continue;
                }
                out.push(Field {
                    name: alias.unwrap_or_else(|| data.to_string()),
                    owner: c,
                    data: data.to_string(),
                });
            }
            _ => ctx.error(format!("{what}: no object '{path}': skipped")),
        }
    }
    out
}

/// SOFA's VTKExporter: the context topology's cells and chosen Data per point or cell, as
/// legacy VTK or VTK XML (.vtu), one numbered file per export.
#[derive(Clone)]
pub struct VtkExporter {
    data: DataTable,
    schedule: Schedule,
    topology: Option<ComponentId>,
    points: Option<Points>,
    point_fields: Vec<Field>,
    cell_fields: Vec<Field>,
    files: usize,
    node: Option<NodeId>,
}

impl Default for VtkExporter {
    fn default() -> Self {
        Self::new()
    }
}

impl VtkExporter {
    pub fn new() -> Self {
        let d = Schedule::fields(base_fields(DataTable::new()))
            .with("XMLformat", DataKind::Bool, "1", "Set to true to use XML format")
            .with("position", DataKind::Reals(3), "", "points position (will use points from topology or mechanical state if this is empty)")
            .with("pointsDataFields", DataKind::Words, "", "Data to visualize (on points)")
            .with("cellsDataFields", DataKind::Words, "", "Data to visualize (on cells)")
            .with("overwrite", DataKind::Bool, "0", "overwrite the file rather than numbering each export")
            .with("topology", DataKind::Str, "", "link to the topology container")
            .with("mstate", DataKind::Str, "", "link to the mechanical state");
        VtkExporter {
            data: kinds_fields(d, false),
            schedule: Schedule::default(),
            topology: None,
            points: None,
            point_fields: Vec::new(),
            cell_fields: Vec::new(),
            files: 0,
            node: None,
        }
    }

    /// The next file's name (SOFA's numbering counts files written, from 0).
    fn file_name(&self) -> PathBuf {
        let name = base_name(&self.data);
        let num = if self.data.bool("overwrite") {
            String::new()
        } else {
            self.files.to_string()
        };
        if self.data.bool("XMLformat") {
            let base = name.strip_suffix(".vtu").unwrap_or(&name);
            PathBuf::from(format!("{base}{num}.vtu"))
        } else {
            let base = name
                .strip_suffix(".vtk")
                .or_else(|| name.strip_suffix(".vtu"))
                .unwrap_or(&name);
            let sep = if num.is_empty() { "" } else { "_" };
            PathBuf::from(format!("{base}{sep}{num}.vtk"))
        }
    }

    fn write(&mut self, scene: &Scene) -> Result<(), String> {
        let pts = self
            .points
            .as_ref()
            .map(|p| points_now(scene, p))
            .unwrap_or_default();
        let mesh = mesh_of(scene, self.topology);
        let cells = Kinds::read(&self.data).cells(&mesh);
        let pdata: Vec<(String, Vec<f64>, usize)> = self
            .point_fields
            .iter()
            .filter_map(|f| field_values(scene, f).map(|(v, k)| (f.name.clone(), v, k)))
            .collect();
        let cdata: Vec<(String, Vec<f64>, usize)> = self
            .cell_fields
            .iter()
            .filter_map(|f| field_values(scene, f).map(|(v, k)| (f.name.clone(), v, k)))
            .collect();
        let text = if self.data.bool("XMLformat") {
            vtu_text(&pts, &cells, &pdata, &cdata, fmt_g6)
        } else {
            legacy_text(&pts, &cells, &pdata, &cdata)
        };
        let path = self.file_name();
        write_file(&path, &text)?;
        self.files += 1;
        Ok(())
    }
}

fn tuples(out: &mut String, v: &[f64], k: usize, indent: &str) {
    for t in v.chunks(k.max(1)) {
        out.push_str(indent);
        let parts: Vec<String> = t.iter().map(|x| fmt_g6(*x)).collect();
        out.push_str(&parts.join(" "));
        out.push('\n');
    }
}

fn legacy_text(
    pts: &[[f64; 3]],
    cells: &[(u8, Vec<u32>)],
    pdata: &[(String, Vec<f64>, usize)],
    cdata: &[(String, Vec<f64>, usize)],
) -> String {
    let mut s = String::from(
        "# vtk DataFile Version 2.0\nExported VTK file\nASCII\n\nDATASET UNSTRUCTURED_GRID\n",
    );
    let _ = writeln!(s, "POINTS {} float", pts.len());
    for p in pts {
        let _ = writeln!(s, "{} {} {}", fmt_g6(p[0]), fmt_g6(p[1]), fmt_g6(p[2]));
    }
    s.push('\n');
    let total: usize = cells.iter().map(|(_, c)| c.len() + 1).sum();
    let _ = writeln!(s, "CELLS {} {total}", cells.len());
    for (_, c) in cells {
        let ids: Vec<String> = c.iter().map(u32::to_string).collect();
        let _ = writeln!(s, "{} {}", c.len(), ids.join(" "));
    }
    s.push('\n');
    let _ = writeln!(s, "CELL_TYPES {}", cells.len());
    for (t, _) in cells {
        let _ = writeln!(s, "{t}");
    }
    s.push('\n');
    let block = |s: &mut String, (name, v, k): &(String, Vec<f64>, usize)| {
        if *k == 3 {
            let _ = writeln!(s, "VECTORS {name} double");
        } else {
            let _ = writeln!(s, "SCALARS {name} double {k}\nLOOKUP_TABLE default");
        }
        tuples(s, v, *k, "");
        s.push('\n');
    };
    if !pdata.is_empty() {
        let _ = writeln!(s, "POINT_DATA {}", pts.len());
        for f in pdata {
            block(&mut s, f);
        }
    }
    if !cdata.is_empty() {
        let _ = writeln!(s, "CELL_DATA {}", cells.len());
        for f in cdata {
            block(&mut s, f);
        }
    }
    s
}

fn vtu_arrays(s: &mut String, fields: &[(String, Vec<f64>, usize)]) {
    for (name, v, k) in fields {
        let comps = if *k > 1 {
            format!(" NumberOfComponents=\"{k}\"")
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "        <DataArray type=\"Float64\" Name=\"{name}\"{comps} format=\"ascii\">"
        );
        tuples(s, v, *k, "          ");
        s.push_str("        </DataArray>\n");
    }
}

fn vtu_text(
    pts: &[[f64; 3]],
    cells: &[(u8, Vec<u32>)],
    pdata: &[(String, Vec<f64>, usize)],
    cdata: &[(String, Vec<f64>, usize)],
    num: fn(f64) -> String,
) -> String {
    let mut s = String::from("<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"BigEndian\">\n  <UnstructuredGrid>\n");
    let _ = writeln!(
        s,
        "    <Piece NumberOfPoints=\"{}\" NumberOfCells=\"{}\">",
        pts.len(),
        cells.len()
    );
    if !pdata.is_empty() {
        s.push_str("      <PointData>\n");
        vtu_arrays(&mut s, pdata);
        s.push_str("      </PointData>\n");
    }
    if !cdata.is_empty() {
        s.push_str("      <CellData>\n");
        vtu_arrays(&mut s, cdata);
        s.push_str("      </CellData>\n");
    }
    s.push_str("      <Points>\n        <DataArray type=\"Float32\" NumberOfComponents=\"3\" format=\"ascii\">\n");
    for p in pts {
        let _ = writeln!(s, "          {} {} {}", num(p[0]), num(p[1]), num(p[2]));
    }
    s.push_str("        </DataArray>\n      </Points>\n      <Cells>\n");
    s.push_str("        <DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">\n");
    for (_, c) in cells {
        let ids: Vec<String> = c.iter().map(u32::to_string).collect();
        let _ = writeln!(s, "          {}", ids.join(" "));
    }
    s.push_str("        </DataArray>\n        <DataArray type=\"Int32\" Name=\"offsets\" format=\"ascii\">\n          ");
    let mut off = 0;
    for (_, c) in cells {
        off += c.len();
        let _ = write!(s, "{off} ");
    }
    s.push_str("\n        </DataArray>\n        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n          ");
    for (t, _) in cells {
        let _ = write!(s, "{t} ");
    }
    s.push_str(
        "\n        </DataArray>\n      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n",
    );
    s
}

impl Component for VtkExporter {
    fn class_name(&self) -> &'static str {
        "VTKExporter"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        self.schedule = Schedule::read(&self.data, ctx);
        self.node = Some(ctx.node);
        self.files = 0;
        self.topology = context_topology(ctx);
        if self.topology.is_none() {
            ctx.error("no topology in the context: VTKExporter exports a topology's cells; nothing is written");
            self.schedule.enable = false;
            return;
        }
        self.points = resolve_points(ctx, &self.data, self.topology);
        let words = |d: &DataTable, n: &str| -> Vec<String> {
            match d.value(n) {
                Some(Value::Words(w)) => w.clone(),
                Some(Value::Str(s)) => s.split_whitespace().map(String::from).collect(),
                _ => Vec::new(),
            }
        };
        let pf = words(&self.data, "pointsDataFields");
        let cf = words(&self.data, "cellsDataFields");
        self.point_fields = parse_fields(ctx, &pf, "pointsDataFields");
        self.cell_fields = parse_fields(ctx, &cf, "cellsDataFields");
    }
}

impl Controller for VtkExporter {
    fn on_event(&mut self, event: &Event, scene: &mut dyn SceneControl) -> Result<(), String> {
        let key = matches!(event, Event::KeyPressed('e' | 'E')) && self.schedule.enable;
        if self.schedule.due(event) || key {
            self.write(scene.scene())?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// MeshExporter

const MESH_FORMATS: [&str; 6] = ["vtkxml", "vtk", "netgen", "tetgen", "gmsh", "obj"];

/// SOFA's MeshExporter: the context topology (and a state's positions) in one or all of vtkxml,
/// vtk, netgen, tetgen, gmsh and obj, with 9 significant digits.
#[derive(Clone)]
pub struct MeshExporter {
    data: DataTable,
    schedule: Schedule,
    topology: Option<ComponentId>,
    points: Option<Points>,
    formats: Vec<&'static str>,
}

impl Default for MeshExporter {
    fn default() -> Self {
        Self::new()
    }
}

/// `v` with 9 significant digits, as C++ streams print with setprecision(9).
fn g9(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return fmt_g6(v);
    }
    let exp = v.abs().log10().floor() as i32;
    if (-5..9).contains(&exp) {
        let s = format!("{:.*}", (8 - exp).max(0) as usize, v);
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let sci = format!("{v:.8e}");
        let (m, e) = sci.split_once('e').unwrap_or((&sci, "0"));
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.')
        } else {
            m
        };
        let e: i32 = e.parse().unwrap_or(0);
        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    }
}

impl MeshExporter {
    pub fn new() -> Self {
        let d = Schedule::fields(base_fields(DataTable::new()))
            .with(
                "format",
                DataKind::Str,
                "ALL",
                "File format to use: ALL, vtkxml, vtk, netgen, tetgen, gmsh or obj",
            )
            .with("position", DataKind::Reals(3), "", "points coordinates");
        MeshExporter {
            data: kinds_fields(d, true),
            schedule: Schedule::default(),
            topology: None,
            points: None,
            formats: Vec::new(),
        }
    }

    /// `filename` with SOFA's codes (%n step, %p points, %E cells, %e main elements) and, with
    /// a period, the export number on 5 digits.
    fn file_base(&self, n_points: usize, cells: &[(u8, Vec<u32>)], main: usize) -> String {
        let raw = base_name(&self.data);
        let mut out = String::new();
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push_str(&self.schedule.step.to_string()),
                Some('p') => out.push_str(&n_points.to_string()),
                Some('E') => out.push_str(&cells.len().to_string()),
                Some('e') => out.push_str(&main.to_string()),
                Some('%') => out.push('%'),
                _ => {}
            }
        }
        if let Some(k) = self.schedule.step.checked_div(self.schedule.every) {
            let _ = write!(out, "{k:05}");
        }
        out
    }

    fn write(&mut self, scene: &Scene) -> Result<(), String> {
        let pts = self
            .points
            .as_ref()
            .map(|p| points_now(scene, p))
            .unwrap_or_default();
        let mut mesh = mesh_of(scene, self.topology);
        let k = Kinds::read(&self.data);
        for (on, clear) in [
            (k.edges, &mut mesh.edges as &mut dyn Clear),
            (k.triangles, &mut mesh.triangles),
            (k.quads, &mut mesh.quads),
            (k.tetras, &mut mesh.tetrahedra),
            (k.hexas, &mut mesh.hexahedra),
        ] {
            if !on {
                clear.clear_all();
            }
        }
        let cells = k.cells(&mesh);
        let main = [
            mesh.tetrahedra.len() + mesh.hexahedra.len(),
            mesh.triangles.len() + mesh.quads.len(),
            mesh.edges.len(),
            pts.len(),
        ]
        .into_iter()
        .find(|&n| n > 0)
        .unwrap_or(0);
        let base = self.file_base(pts.len(), &cells, main);
        for &f in &self.formats {
            match f {
                "vtkxml" => write_file(
                    &PathBuf::from(format!("{base}.vtu")),
                    &mesh_vtu(&pts, &cells),
                )?,
                "vtk" => write_file(
                    &PathBuf::from(format!("{base}.vtk")),
                    &mesh_vtk(&pts, &cells),
                )?,
                "netgen" => {
                    write_file(&PathBuf::from(format!("{base}.mesh")), &netgen(&pts, &mesh))?
                }
                "tetgen" => {
                    write_file(&PathBuf::from(format!("{base}.node")), &tetgen_nodes(&pts))?;
                    if k.tetras {
                        write_file(
                            &PathBuf::from(format!("{base}.ele")),
                            &tetgen_ele(&pts, &mesh),
                        )?;
                    }
                    if k.triangles {
                        write_file(&PathBuf::from(format!("{base}.face")), &tetgen_face(&mesh))?;
                    }
                }
                "gmsh" => write_file(&PathBuf::from(format!("{base}.gmsh")), &gmsh(&pts, &cells))?,
                _ => write_file(
                    &PathBuf::from(format!("{base}.obj")),
                    &obj(&pts, &mesh, &base_name(&self.data)),
                )?,
            }
        }
        Ok(())
    }
}

/// Emptying one element list of a mesh, whatever its arity.
trait Clear {
    fn clear_all(&mut self);
}
impl<T> Clear for Vec<T> {
    fn clear_all(&mut self) {
        self.clear();
    }
}

fn mesh_vtk(pts: &[[f64; 3]], cells: &[(u8, Vec<u32>)]) -> String {
    let mut s = String::from(
        "# vtk DataFile Version 2.0\nSOFA Exported Mesh file\nASCII\nDATASET UNSTRUCTURED_GRID\n",
    );
    let _ = writeln!(s, "POINTS {} float", pts.len());
    for p in pts {
        let _ = writeln!(s, "{} {} {}", g9(p[0]), g9(p[1]), g9(p[2]));
    }
    let total: usize = cells.iter().map(|(_, c)| c.len() + 1).sum();
    let _ = writeln!(s, "CELLS {} {total}", cells.len());
    for (_, c) in cells {
        let ids: Vec<String> = c.iter().map(u32::to_string).collect();
        let _ = writeln!(s, "{} {}", c.len(), ids.join(" "));
    }
    let _ = writeln!(s, "CELL_TYPES {}", cells.len());
    for (t, _) in cells {
        let _ = writeln!(s, "{t}");
    }
    s
}

fn mesh_vtu(pts: &[[f64; 3]], cells: &[(u8, Vec<u32>)]) -> String {
    vtu_text(pts, cells, &[], &[], g9)
}

fn one_based(ids: &[u32]) -> String {
    ids.iter()
        .map(|i| (i + 1).to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn netgen(pts: &[[f64; 3]], m: &Mesh) -> String {
    let mut s = format!("{}\n", pts.len());
    for p in pts {
        let _ = writeln!(s, "{} {} {}", g9(p[0]), g9(p[1]), g9(p[2]));
    }
    let _ = writeln!(s, "{}", m.tetrahedra.len());
    for t in &m.tetrahedra {
        let _ = writeln!(s, "0 {}", one_based(t));
    }
    let faces = faces_to_write(m);
    let _ = writeln!(s, "{}", faces.len());
    for t in faces {
        let _ = writeln!(s, "0 {}", one_based(&t));
    }
    s
}

/// The triangles a volume format lists: all of them without tetrahedra, else those on the
/// boundary (in fewer than two tetrahedra).
fn faces_to_write(m: &Mesh) -> Vec<[u32; 3]> {
    if m.tetrahedra.is_empty() {
        return m.triangles.clone();
    }
    let key = |t: &[u32; 3]| {
        let mut k = *t;
        k.sort_unstable();
        k
    };
    let mut count = std::collections::BTreeMap::new();
    for t in &m.tetrahedra {
        for f in [
            [t[0], t[1], t[2]],
            [t[0], t[1], t[3]],
            [t[0], t[2], t[3]],
            [t[1], t[2], t[3]],
        ] {
            *count.entry(key(&f)).or_insert(0u32) += 1;
        }
    }
    m.triangles
        .iter()
        .filter(|t| count.get(&key(t)).copied().unwrap_or(0) < 2)
        .copied()
        .collect()
}

fn tetgen_nodes(pts: &[[f64; 3]]) -> String {
    let mut s = format!("{} 3 0 0\n", pts.len());
    for (i, p) in pts.iter().enumerate() {
        let _ = writeln!(s, "{} {} {} {}", i + 1, g9(p[0]), g9(p[1]), g9(p[2]));
    }
    s
}

fn tetgen_ele(pts: &[[f64; 3]], m: &Mesh) -> String {
    let mut s = format!("{} 4 0\n", m.tetrahedra.len());
    for (i, t) in m.tetrahedra.iter().enumerate() {
        let mut t = *t;
        let p = |k: usize| pts.get(t[k] as usize).copied().unwrap_or([0.0; 3]);
        let (a, b, c, d) = (p(0), p(1), p(2), p(3));
        let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        let w = [d[0] - a[0], d[1] - a[1], d[2] - a[2]];
        let vol = u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0]);
        // tetgen's orientation, as SOFA writes it
        if vol > 0.0 {
            t.swap(2, 3);
        }
        let _ = writeln!(s, "{} {}", i + 1, one_based(&t));
    }
    s
}

fn tetgen_face(m: &Mesh) -> String {
    let faces = faces_to_write(m);
    let mut s = format!("{} 0\n", faces.len());
    for (i, t) in faces.iter().enumerate() {
        let _ = writeln!(s, "{} {}", i + 1, one_based(t));
    }
    s
}

fn gmsh(pts: &[[f64; 3]], cells: &[(u8, Vec<u32>)]) -> String {
    let mut s = String::from("$MeshFormat\n2.1 0 8\n$EndMeshFormat\n$Nodes\n");
    let _ = writeln!(s, "{}", pts.len());
    for (i, p) in pts.iter().enumerate() {
        let _ = writeln!(s, "{} {} {} {}", i + 1, g9(p[0]), g9(p[1]), g9(p[2]));
    }
    let _ = writeln!(s, "$EndNodes\n$Elements\n{}", cells.len());
    for (i, (t, c)) in cells.iter().enumerate() {
        let ty = match t {
            3 => 1,
            5 => 2,
            9 => 3,
            10 => 4,
            _ => 5,
        };
        let _ = writeln!(s, "{} {ty} 0 {}", i + 1, one_based(c));
    }
    s.push_str("$EndElements\n");
    s
}

fn obj(pts: &[[f64; 3]], m: &Mesh, name: &str) -> String {
    let mut s = format!("#Export in obj format from SOFA\n#\no {name}\n\n");
    let _ = writeln!(s, "#Points (total = {} pts)", pts.len());
    for p in pts {
        let _ = writeln!(s, "v {} {} {}", g9(p[0]), g9(p[1]), g9(p[2]));
    }
    s.push('\n');
    for e in &m.edges {
        let _ = writeln!(s, "l {}", one_based(e));
    }
    for t in &m.triangles {
        let _ = writeln!(s, "f {}", one_based(t));
    }
    if m.triangles.is_empty() {
        for q in &m.quads {
            let _ = writeln!(s, "f {}", one_based(q));
        }
    }
    s
}

impl Component for MeshExporter {
    fn class_name(&self) -> &'static str {
        "MeshExporter"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        self.schedule = Schedule::read(&self.data, ctx);
        let f = self.data.str("format").trim().to_string();
        self.formats = if f.eq_ignore_ascii_case("all") || f.is_empty() {
            MESH_FORMATS.to_vec()
        } else if let Some(k) = MESH_FORMATS.iter().find(|k| k.eq_ignore_ascii_case(&f)) {
            vec![*k]
        } else {
            ctx.error(format!(
                "format '{f}' is not one of ALL, {}: nothing is written",
                MESH_FORMATS.join(", ")
            ));
            self.schedule.enable = false;
            return;
        };
        self.topology = context_topology(ctx);
        if self.topology.is_none() {
            ctx.error(
                "no topology in the context: MeshExporter exports a topology; nothing is written",
            );
            self.schedule.enable = false;
            return;
        }
        self.points = resolve_points(ctx, &self.data, self.topology);
    }
}

impl Controller for MeshExporter {
    fn on_event(&mut self, event: &Event, scene: &mut dyn SceneControl) -> Result<(), String> {
        if self.schedule.due(event) {
            self.write(scene.scene())?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Monitor

/// SOFA's Monitor: after every step, one line per exported vector (`fileName_x.txt`,
/// `_v.txt`, `_f.txt`): the time, then each chosen point's values, tab-separated.
pub struct Monitor {
    data: DataTable,
    state: Option<ComponentId>,
    files: Vec<(VecId, std::fs::File)>,
}

/// A clone does not write: it would share the original's files.
impl Clone for Monitor {
    fn clone(&self) -> Self {
        Monitor {
            data: self.data.clone(),
            state: self.state,
            files: Vec::new(),
        }
    }
}

impl Default for Monitor {
    fn default() -> Self {
        Self::new()
    }
}

impl Monitor {
    pub fn new() -> Self {
        let mut d = base_fields(DataTable::new())
            .with(
                "indices",
                DataKind::Ints(1),
                "",
                "MechanicalObject points indices to monitor",
            )
            .with(
                "ExportPositions",
                DataKind::Bool,
                "0",
                "export Monitored positions as gnuplot file",
            )
            .with(
                "ExportVelocities",
                DataKind::Bool,
                "0",
                "export Monitored velocities as gnuplot file",
            )
            .with(
                "ExportForces",
                DataKind::Bool,
                "0",
                "export Monitored forces as gnuplot file",
            )
            .with(
                "fileName",
                DataKind::Str,
                "",
                "name of the plot files to be generated (default: ./ and the component's name)",
            );
        // display options (drawn by runSofa; accepted here)
        for (n, k, v) in [
            ("showPositions", DataKind::Bool, "0"),
            ("showVelocities", DataKind::Bool, "0"),
            ("showForces", DataKind::Bool, "0"),
            ("showTrajectories", DataKind::Bool, "0"),
            ("PositionsColor", DataKind::Str, "1 1 0 1"),
            ("VelocitiesColor", DataKind::Str, "1 1 0 1"),
            ("ForcesColor", DataKind::Str, "1 1 0 1"),
            ("TrajectoriesColor", DataKind::Str, "1 1 0 1"),
            ("showMinThreshold", DataKind::Real, "0.01"),
            ("TrajectoriesPrecision", DataKind::Real, "0.1"),
            ("sizeFactor", DataKind::Real, "1"),
        ] {
            d = d.with(
                n,
                k,
                v,
                "display option (drawn by SOFA's GUI; not drawn here)",
            );
        }
        Monitor {
            data: d,
            state: None,
            files: Vec::new(),
        }
    }

    fn line(&self, scene: &Scene, v: VecId) -> Option<String> {
        let st = scene.state(self.state?)?;
        let vals = st.vec(v);
        if vals.is_empty() {
            return None;
        }
        let k = if v == VecId::POSITION {
            st.dof.coord_size()
        } else {
            st.dof.deriv_size()
        };
        let mut s = format!("{}\t", fmt_g6(scene.time));
        for &i in self.data.ints("indices") {
            if let Some(t) = vals.get(i as usize * k..(i as usize + 1) * k) {
                let parts: Vec<String> = t.iter().map(|x| fmt_g6(*x)).collect();
                s.push_str(&parts.join(" "));
                s.push('\t');
            }
        }
        s.push('\n');
        Some(s)
    }
}

impl Component for Monitor {
    fn class_name(&self) -> &'static str {
        "Monitor"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        self.files.clear();
        self.state = ctx.scene.context_state(ctx.node);
        let Some(st) = self.state.and_then(|s| ctx.scene.state(s)) else {
            ctx.error("no MechanicalObject in the context: nothing is monitored");
            return;
        };
        let n = st.size();
        let idx = self.data.ints("indices").to_vec();
        if let Some(bad) = idx.iter().find(|&&i| i as usize >= n) {
            ctx.error(format!(
                "indices: point {bad} is not in the state ({n} points): nothing is monitored"
            ));
            self.state = None;
            return;
        }
        let base = {
            let f = self.data.str("fileName").trim().to_string();
            if f.is_empty() {
                format!("./{}", self.data.str("name"))
            } else {
                f
            }
        };
        let list: String = idx.iter().map(|i| format!("{i} ")).collect();
        for (flag, suffix, word, v) in [
            ("ExportPositions", "_x.txt", "positions", VecId::POSITION),
            ("ExportVelocities", "_v.txt", "velocities", VecId::VELOCITY),
            ("ExportForces", "_f.txt", "forces", VecId::FORCE),
        ] {
            if !self.data.bool(flag) {
                continue;
            }
            let path = PathBuf::from(format!("{base}{suffix}"));
            let header = format!(
                "# Gnuplot File : {word} of {} particle(s) Monitored\n# 1st Column : time, others : particle(s) number {list}\n",
                idx.len()
            );
            let made = create_replacing(&path).and_then(|mut f| {
                f.write_all(header.as_bytes())?;
                f.flush()?;
                Ok(f)
            });
            match made {
                Ok(f) => self.files.push((v, f)),
                Err(e) => ctx.error(format!("cannot create '{}': {e}", path.display())),
            }
        }
    }
}

impl Controller for Monitor {
    fn on_event(&mut self, event: &Event, scene: &mut dyn SceneControl) -> Result<(), String> {
        if !matches!(event, Event::AnimateEnd { .. }) || self.files.is_empty() {
            return Ok(());
        }
        let lines: Vec<Option<String>> = self
            .files
            .iter()
            .map(|(v, _)| self.line(scene.scene(), *v))
            .collect();
        for ((_, f), line) in self.files.iter_mut().zip(lines) {
            if let Some(l) = line {
                f.write_all(l.as_bytes())
                    .and_then(|_| f.flush())
                    .map_err(|e| format!("Monitor: cannot write: {e}"))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_digits_as_cpp_streams_print() {
        assert_eq!(g9(0.1), "0.1");
        assert_eq!(g9(1.0 / 3.0), "0.333333333");
        assert_eq!(g9(-12345.678901234), "-12345.6789");
        assert_eq!(g9(1e-7), "1e-07");
        assert_eq!(g9(123456789012.0), "1.23456789e+11");
        assert_eq!(g9(2.0), "2");
    }

    #[test]
    fn volume_formats_list_the_boundary_triangles_only() {
        let m = Mesh {
            triangles: vec![[0, 1, 2], [0, 1, 3], [1, 2, 3]],
            tetrahedra: vec![[0, 1, 2, 3], [0, 1, 2, 4]],
            ..Default::default()
        };
        // [0,1,2] is shared by both tetrahedra: inside
        assert_eq!(faces_to_write(&m), vec![[0, 1, 3], [1, 2, 3]]);
    }

    #[test]
    fn schedule_counts_steps_and_skips_step_zero() {
        let mut s = Schedule {
            every: 2,
            at_begin: true,
            at_end: false,
            enable: true,
            step: 0,
        };
        assert!(s.due(&Event::SimulationInitDone));
        let end = Event::AnimateEnd { dt: 0.1 };
        let due: Vec<bool> = (0..5).map(|_| s.due(&end)).collect();
        assert_eq!(due, [false, true, false, true, false]);
        assert!(!s.due(&Event::SimulationEnd));
    }
}
