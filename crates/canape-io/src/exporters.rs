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
//!
//! Each exporter lives in its submodule, re-exported here (`vtk_exporter`, `mesh_exporter`,
//! `monitor`); this file holds what they share: the schedule and its Data, the points and cells
//! to export and the element kinds' Data.

mod mesh_exporter;
mod monitor;
mod vtk_exporter;

pub use mesh_exporter::{MeshExporter, UnknownFormat};
pub use monitor::Monitor;
pub use vtk_exporter::VtkExporter;

use crate::error::FileWriteError;
use crate::state_io::create_replacing;
use canape_core::component::Event;
use canape_core::data::{Data, DataKind, DataTable, Flag, Int, Reals, Text};
use canape_core::mesh::Mesh;
use canape_core::scene::{ComponentId, InitContext, Scene, Slot, Target};
use canape_core::state::VecId;
use std::io::Write as _;
use std::path::Path;

/// The shared schedule (SOFA's BaseSimulationExporter).
#[derive(Clone, Default)]
struct Schedule {
    every: u64,
    at_begin: bool,
    at_end: bool,
    enable: bool,
    step: u64,
}

canape_core::data_schema! {
    /// The schedule's Data (SOFA's BaseSimulationExporter), after the base Data.
    pub(crate) struct ScheduleData {
        filename: Text = ("filename", DataKind::Str, "", "Path or filename where to export the data. If missing the name of the component is used."),
        every: Int = ("exportEveryNumberOfSteps", DataKind::Int, "0", "export file only at specified number of steps (0=disable)"),
        at_begin: Flag = ("exportAtBegin", DataKind::Bool, "0", "export file at the initialization"),
        at_end: Flag = ("exportAtEnd", DataKind::Bool, "0", "export file when the simulation is finished"),
        enable: Flag = ("enable", DataKind::Bool, "1", "Enable or disable the component"),
    }
}

impl Schedule {
    fn read(d: &DataTable, h: ScheduleData, ctx: &mut InitContext<'_>) -> Schedule {
        let every = d.get(h.every);
        if every < 0 {
            ctx.warn("exportEveryNumberOfSteps is negative: no periodic export");
        }
        Schedule {
            every: every.max(0) as u64,
            at_begin: d.get(h.at_begin),
            at_end: d.get(h.at_end),
            enable: d.get(h.enable),
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

/// The name of a file to write: `filename`, or the component's name `name` (as SOFA's
/// BaseSimulationExporter when `filename` is missing or empty).
fn base_name(d: &DataTable, filename: Data<Text>, name: &str) -> String {
    let f = d.get(filename).trim();
    if f.is_empty() {
        name.to_string()
    } else {
        f.to_string()
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), FileWriteError> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|error| FileWriteError::CreateFolder {
            path: dir.to_path_buf(),
            error,
        })?;
    }
    let mut f = create_replacing(path).map_err(|error| FileWriteError::Create {
        path: path.to_path_buf(),
        error,
    })?;
    f.write_all(text.as_bytes())
        .and_then(|_| f.flush())
        .map_err(|error| FileWriteError::Write {
            path: path.to_path_buf(),
            error,
        })
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
    position: Data<Reals>,
    topology: Option<ComponentId>,
) -> Option<Points> {
    let link = d.fields()[position.index()].link.clone();
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

/// Typed handles to the element kinds' Data (declared by [`KindsData::declare`]).
#[derive(Clone, Copy, Debug)]
struct KindsData {
    edges: Data<Flag>,
    triangles: Data<Flag>,
    quads: Data<Flag>,
    tetras: Data<Flag>,
    hexas: Data<Flag>,
}

impl KindsData {
    /// Add the element kinds' Data to `t`: every kind written by default with `default_all`
    /// (MeshExporter), else edges only (VTKExporter).
    fn declare(t: DataTable, default_all: bool) -> (DataTable, KindsData) {
        let o = if default_all { "1" } else { "0" };
        let (t, edges) = t.declare("edges", DataKind::Bool, "1", "write edge topology");
        let (t, triangles) = t.declare("triangles", DataKind::Bool, o, "write triangle topology");
        let (t, quads) = t.declare("quads", DataKind::Bool, o, "write quad topology");
        let (t, tetras) = t.declare("tetras", DataKind::Bool, o, "write tetra topology");
        let (t, hexas) = t.declare("hexas", DataKind::Bool, o, "write hexa topology");
        let k = KindsData {
            edges,
            triangles,
            quads,
            tetras,
            hexas,
        };
        (t, k)
    }
}

impl Kinds {
    fn read(d: &DataTable, h: KindsData) -> Kinds {
        Kinds {
            edges: d.get(h.edges),
            triangles: d.get(h.triangles),
            quads: d.get(h.quads),
            tetras: d.get(h.tetras),
            hexas: d.get(h.hexas),
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

fn mesh_of(scene: &Scene, topology: Option<ComponentId>) -> Mesh {
    topology
        .and_then(|t| scene.topology(t))
        .map(|t| t.mesh().clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::mesh_exporter::{faces_to_write, g9};
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
