//! VTKExporter: the context topology's cells and chosen Data, as legacy VTK or VTK XML.

use super::{
    base_name, context_topology, mesh_of, points_now, resolve_points, state_vec, write_file, Kinds,
    KindsData, Points, Schedule, ScheduleData,
};
use crate::error::FileWriteError;
use crate::state_io::fmt_g6;
use canape_core::component::{Controller, ControllerError, Event, Reaction, SceneControl};
use canape_core::data::{
    base_fields, ChangedData, DataKind, DataTable, Flag, Reals, Text, Value, Words,
};
use canape_core::scene::{ComponentId, InitContext, NodeId, Scene, Target};
use canape_core::state::VecId;
use std::fmt::Write as _;
use std::path::PathBuf;

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

canape_core::data_schema! {
    /// VTKExporter's own Data, between the schedule's and the element kinds' (both declared by
    /// the exporters module).
    pub struct VtkExporterData {
        xml_format: Flag = ("XMLformat", DataKind::Bool, "1", "Set to true to use XML format"),
        position: Reals = ("position", DataKind::Reals(3), "", "points position (will use points from topology or mechanical state if this is empty)"),
        points_data_fields: Words = ("pointsDataFields", DataKind::Words, "", "Data to visualize (on points)"),
        cells_data_fields: Words = ("cellsDataFields", DataKind::Words, "", "Data to visualize (on cells)"),
        overwrite: Flag = ("overwrite", DataKind::Bool, "0", "overwrite the file rather than numbering each export"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
        mstate: Text = ("mstate", DataKind::Str, "", "link to the mechanical state"),
    }
}

/// SOFA's VTKExporter: the context topology's cells and chosen Data per point or cell, as
/// legacy VTK or VTK XML (.vtu), one numbered file per export.
#[derive(Clone)]
pub struct VtkExporter {
    data: DataTable,
    /// Typed handles to its own Data in `data`.
    d: VtkExporterData,
    /// Typed handles to the schedule's and the element kinds' Data in `data`.
    ds: ScheduleData,
    dk: KindsData,
    /// The component's name (from the scene, at init): the file name when `filename` is empty.
    name: String,
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
        let (data, ds) = ScheduleData::declare(base_fields(DataTable::new()));
        let (data, d) = VtkExporterData::declare(data);
        let (data, dk) = KindsData::declare(data, false);
        VtkExporter {
            data,
            d,
            ds,
            dk,
            name: String::new(),
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
        let name = base_name(&self.data, self.ds.filename, &self.name);
        let num = if self.data.get(self.d.overwrite) {
            String::new()
        } else {
            self.files.to_string()
        };
        if self.data.get(self.d.xml_format) {
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

    fn write(&mut self, scene: &Scene) -> Result<(), FileWriteError> {
        let pts = self
            .points
            .as_ref()
            .map(|p| points_now(scene, p))
            .unwrap_or_default();
        let mesh = mesh_of(scene, self.topology);
        let cells = Kinds::read(&self.data, self.dk).cells(&mesh);
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
        let text = if self.data.get(self.d.xml_format) {
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

pub(super) fn vtu_text(
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

impl VtkExporter {
    /// `XMLformat` and `overwrite` are read at each export: an edit of those changes the next
    /// files, the schedule and the file numbering going on; any other edit re-runs init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        if changed.only(&[self.d.xml_format.index(), self.d.overwrite.index()]) {
            Reaction::Updated
        } else {
            Reaction::Reinit
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.schedule = Schedule::read(&self.data, self.ds, ctx);
        self.name = ctx.scene.info(ctx.id).name.clone();
        self.node = Some(ctx.node);
        self.files = 0;
        self.topology = context_topology(ctx);
        if self.topology.is_none() {
            ctx.error("no topology in the context: VTKExporter exports a topology's cells; nothing is written");
            self.schedule.enable = false;
            return;
        }
        self.points = resolve_points(ctx, &self.data, self.d.position, self.topology);
        let pf = self.data.get(self.d.points_data_fields).to_vec();
        let cf = self.data.get(self.d.cells_data_fields).to_vec();
        self.point_fields = parse_fields(ctx, &pf, "pointsDataFields");
        self.cell_fields = parse_fields(ctx, &cf, "cellsDataFields");
    }
}

canape_core::impl_component!(VtkExporter, "VTKExporter", init, data_changed);

impl Controller for VtkExporter {
    fn on_event(
        &mut self,
        event: &Event,
        scene: &mut dyn SceneControl,
    ) -> Result<(), ControllerError> {
        let key = matches!(event, Event::KeyPressed('e' | 'E')) && self.schedule.enable;
        if self.schedule.due(event) || key {
            self.write(scene.scene())
                .map_err(|e| ControllerError::Write {
                    context: "",
                    source: Box::new(e),
                    then: "",
                })?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::test_util::{edit, init_in, same_text, temp_dir, Control};
    use canape_core::component::Topology;
    use canape_core::mesh::Mesh;
    use canape_core::scene::AnyComponent;
    use canape_core::state::MechanicalObject;

    /// A fixed two-triangle topology.
    #[derive(Clone)]
    struct Square {
        data: DataTable,
        mesh: Mesh,
    }
    canape_core::impl_component!(Square, "Square");
    impl Topology for Square {
        fn mesh(&self) -> &Mesh {
            &self.mesh
        }
        fn mesh_mut(&mut self) -> &mut Mesh {
            &mut self.mesh
        }
    }

    /// A one-node scene with a four-point state and a two-triangle topology: the scene, its
    /// root and the state's id.
    pub(in crate::exporters) fn scene_with_square() -> (Scene, NodeId, ComponentId) {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut mo = MechanicalObject::new(canape_types::DofType::Vec3);
        mo.resize(4);
        mo.vec_mut(VecId::POSITION)
            .copy_from_slice(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.5]);
        let id = scene.add_component(root, "dofs", AnyComponent::State(mo), None);
        let square = Square {
            data: base_fields(DataTable::new()),
            mesh: Mesh {
                triangles: vec![[0, 1, 2], [0, 2, 3]],
                ..Mesh::default()
            },
        };
        scene.add_component(
            root,
            "square",
            AnyComponent::Topology(Box::new(square)),
            None,
        );
        (scene, root, id)
    }

    /// A VTKExporter writing to `file` at the scene's start, initialised with `attrs` beside a
    /// state and a two-triangle topology.
    fn exporter(file: &std::path::Path, attrs: &[(&str, &str)]) -> (Scene, VtkExporter) {
        let (scene, root, id) = scene_with_square();
        let mut e = VtkExporter::new();
        let file = file.display().to_string();
        let given = [
            ("filename", &*file),
            ("exportAtBegin", "1"),
            ("triangles", "1"),
        ];
        init_in(&mut e, &scene, root, id, &[&given[..], attrs].concat());
        (scene, e)
    }

    #[test]
    fn edits_update_in_place_format_and_numbering() {
        let dir = temp_dir("vtk-edit");
        let edits = [("XMLformat", "0"), ("overwrite", "1")];
        let (s1, mut a) = exporter(&dir.join("edited"), &[]);
        assert_eq!(edit(&mut a, &edits), Reaction::Updated);
        a.on_event(&Event::SimulationInitDone, &mut Control(&s1))
            .unwrap();
        let (s2, mut b) = exporter(&dir.join("fresh"), &edits);
        b.on_event(&Event::SimulationInitDone, &mut Control(&s2))
            .unwrap();
        // legacy content, the file not numbered
        let ta = same_text(&dir.join("edited.vtk"), &dir.join("fresh.vtk"));
        assert!(ta.starts_with("# vtk DataFile"), "{ta}");
        // any other edit re-runs init
        assert_eq!(
            edit(&mut a, &[("pointsDataFields", "dofs.velocity")]),
            Reaction::Reinit
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
