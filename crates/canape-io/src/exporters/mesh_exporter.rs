//! MeshExporter: the context topology in vtkxml, vtk, netgen, tetgen, gmsh or obj files.

use super::vtk_exporter::vtu_text;
use super::{
    base_name, context_topology, mesh_of, points_now, resolve_points, write_file, Kinds, KindsData,
    Points, Schedule, ScheduleData,
};
use crate::error::FileWriteError;
use crate::state_io::fmt_g6;
use canape_core::component::{Controller, ControllerError, Event, Reaction, SceneControl};
use canape_core::data::{base_fields, ChangedData, DataKind, DataTable, Reals, Text};
use canape_core::mesh::Mesh;
use canape_core::scene::{ComponentId, InitContext, Scene};
use std::fmt::Write as _;
use std::path::PathBuf;

const MESH_FORMATS: [&str; 6] = ["vtkxml", "vtk", "netgen", "tetgen", "gmsh", "obj"];

canape_core::data_schema! {
    /// MeshExporter's own Data, between the schedule's and the element kinds' (both declared by
    /// the exporters module).
    pub struct MeshExporterData {
        format: Text = ("format", DataKind::Str, "ALL", "File format to use: ALL, vtkxml, vtk, netgen, tetgen, gmsh or obj"),
        position: Reals = ("position", DataKind::Reals(3), "", "points coordinates"),
    }
}

/// SOFA's MeshExporter: the context topology (and a state's positions) in one or all of vtkxml,
/// vtk, netgen, tetgen, gmsh and obj, with 9 significant digits.
#[derive(Clone)]
pub struct MeshExporter {
    data: DataTable,
    /// Typed handles to its own Data in `data`.
    d: MeshExporterData,
    /// Typed handles to the schedule's and the element kinds' Data in `data`.
    ds: ScheduleData,
    dk: KindsData,
    /// The component's name (from the scene, at init): the file name when `filename` is empty.
    name: String,
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
pub(super) fn g9(v: f64) -> String {
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
        let (data, ds) = ScheduleData::declare(base_fields(DataTable::new()));
        let (data, d) = MeshExporterData::declare(data);
        let (data, dk) = KindsData::declare(data, true);
        MeshExporter {
            data,
            d,
            ds,
            dk,
            name: String::new(),
            schedule: Schedule::default(),
            topology: None,
            points: None,
            formats: Vec::new(),
        }
    }

    /// `filename` with SOFA's codes (%n step, %p points, %E cells, %e main elements) and, with
    /// a period, the export number on 5 digits.
    fn file_base(&self, n_points: usize, cells: &[(u8, Vec<u32>)], main: usize) -> String {
        let raw = base_name(&self.data, self.ds.filename, &self.name);
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

    fn write(&mut self, scene: &Scene) -> Result<(), FileWriteError> {
        let pts = self
            .points
            .as_ref()
            .map(|p| points_now(scene, p))
            .unwrap_or_default();
        let mut mesh = mesh_of(scene, self.topology);
        let k = Kinds::read(&self.data, self.dk);
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
                    &obj(
                        &pts,
                        &mesh,
                        &base_name(&self.data, self.ds.filename, &self.name),
                    ),
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
pub(super) fn faces_to_write(m: &Mesh) -> Vec<[u32; 3]> {
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

/// A MeshExporter `format` naming none of the formats.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("format '{format}' is not one of ALL, {}", MESH_FORMATS.join(", "))]
pub struct UnknownFormat {
    pub format: String,
}

/// The formats `format` names (ALL or empty: all of them), or why it names none.
fn formats_of(format: &str) -> Result<Vec<&'static str>, UnknownFormat> {
    let f = format.trim();
    if f.eq_ignore_ascii_case("all") || f.is_empty() {
        Ok(MESH_FORMATS.to_vec())
    } else if let Some(k) = MESH_FORMATS.iter().find(|k| k.eq_ignore_ascii_case(f)) {
        Ok(vec![*k])
    } else {
        Err(UnknownFormat {
            format: f.to_string(),
        })
    }
}

impl MeshExporter {
    /// `format` takes effect in place (the next exports in the new formats, the schedule and
    /// the file numbering going on) when init went past it; a format init would reject is
    /// refused. Any other edit re-runs init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        if !changed.only(&[self.d.format.index()]) || self.formats.is_empty() {
            return Reaction::Reinit;
        }
        match formats_of(self.data.get(self.d.format)) {
            Ok(formats) => {
                self.formats = formats;
                Reaction::Updated
            }
            Err(e) => Reaction::Refused(vec![e.to_string()]),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.schedule = Schedule::read(&self.data, self.ds, ctx);
        self.name = ctx.scene.info(ctx.id).name.clone();
        self.formats = match formats_of(self.data.get(self.d.format)) {
            Ok(formats) => formats,
            Err(e) => {
                ctx.error(format!("{e}: nothing is written"));
                self.formats.clear();
                self.schedule.enable = false;
                return;
            }
        };
        self.topology = context_topology(ctx);
        if self.topology.is_none() {
            ctx.error(
                "no topology in the context: MeshExporter exports a topology; nothing is written",
            );
            self.schedule.enable = false;
            return;
        }
        self.points = resolve_points(ctx, &self.data, self.d.position, self.topology);
    }
}

canape_core::impl_component!(MeshExporter, "MeshExporter", init, data_changed);

impl Controller for MeshExporter {
    fn on_event(
        &mut self,
        event: &Event,
        scene: &mut dyn SceneControl,
    ) -> Result<(), ControllerError> {
        if self.schedule.due(event) {
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
mod tests {
    use super::super::vtk_exporter::tests::scene_with_square;
    use super::*;
    use crate::test_util::{edit, init_in, same_text, temp_dir, Control};

    /// A MeshExporter writing to `file` at the scene's start, initialised with `attrs` beside a
    /// state and a two-triangle topology.
    fn exporter(file: &std::path::Path, attrs: &[(&str, &str)]) -> (Scene, MeshExporter) {
        let (scene, root, id) = scene_with_square();
        let mut e = MeshExporter::new();
        let file = file.display().to_string();
        let given = [("filename", &*file), ("exportAtBegin", "1")];
        init_in(&mut e, &scene, root, id, &[&given[..], attrs].concat());
        (scene, e)
    }

    #[test]
    fn edits_update_in_place_format() {
        let dir = temp_dir("mesh-edit");
        let (s1, mut a) = exporter(&dir.join("edited"), &[]);
        assert_eq!(edit(&mut a, &[("format", "Gmsh")]), Reaction::Updated);
        a.on_event(&Event::SimulationInitDone, &mut Control(&s1))
            .unwrap();
        let (s2, mut b) = exporter(&dir.join("fresh"), &[("format", "Gmsh")]);
        b.on_event(&Event::SimulationInitDone, &mut Control(&s2))
            .unwrap();
        same_text(&dir.join("edited.gmsh"), &dir.join("fresh.gmsh"));
        // only that format was written
        assert!(!dir.join("edited.vtk").exists() && !dir.join("fresh.vtk").exists());
        // a format init would reject is refused; any other edit re-runs init
        assert!(matches!(
            edit(&mut a, &[("format", "stl")]),
            Reaction::Refused(_)
        ));
        assert_eq!(edit(&mut a, &[("exportAtEnd", "1")]), Reaction::Reinit);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
