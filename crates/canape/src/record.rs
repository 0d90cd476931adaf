//! Recording states in SOFA's WriteState format: which MechanicalObjects (SOFA's regression
//! rules), when (T=0 after init, and at the start of the last step, or every step), and where
//! (`DIR/<k>_<name>_mstate.txt.gz`); VTK series of the same states for ParaView.

use crate::Simulation;
use canape_core::scene::ComponentId;
use canape_core::state::VecId;
use canape_io::regress::compared_states;
use canape_io::state_io::{
    create_replacing, file_name_part, format_frame, write_state_file, Frame,
};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;
use std::path::Path;

/// Frames recorded for one state.
#[derive(Clone, Debug)]
pub struct Recording {
    pub k: usize,
    pub name: String,
    pub id: ComponentId,
    pub points: usize,
    pub frames: Vec<Frame>,
}

/// Records the states SOFA's regression test would record: in memory, or streamed to their
/// files frame by frame after [`Recorder::stream_to`].
pub struct Recorder {
    pub recordings: Vec<Recording>,
    pub with_velocity: bool,
    /// One open file per recording while streaming (frames then are not kept in memory).
    sinks: Vec<(std::path::PathBuf, GzEncoder<std::fs::File>)>,
    /// The first write error while streaming (the recording stops there).
    stream_error: Option<std::io::Error>,
}

impl Recorder {
    pub fn new(sim: &Simulation, mapped: bool, with_velocity: bool) -> Recorder {
        let recordings = compared_states(&sim.scene, mapped)
            .into_iter()
            .map(|(k, name, id)| Recording {
                k,
                name,
                id,
                points: sim.scene.state(id).map(|s| s.size()).unwrap_or(0),
                frames: Vec::new(),
            })
            .collect();
        Recorder {
            recordings,
            with_velocity,
            sinks: Vec::new(),
            stream_error: None,
        }
    }

    /// A recorder that records nothing.
    pub fn empty(with_velocity: bool) -> Recorder {
        Recorder {
            recordings: Vec::new(),
            with_velocity,
            sinks: Vec::new(),
            stream_error: None,
        }
    }

    /// From now on write each frame to `DIR/<k>_<name>_mstate.txt.gz` as it is captured (the
    /// files are created now, afresh; gzip-flushed after every frame, so a stopped run keeps
    /// what it recorded), keeping nothing in memory.
    pub fn stream_to(&mut self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        self.sinks.clear();
        for r in &mut self.recordings {
            let p = dir.join(format!("{}_{}_mstate.txt.gz", r.k, file_name_part(&r.name)));
            let mut gz = GzEncoder::new(create_replacing(&p)?, Compression::default());
            for fr in r.frames.drain(..) {
                gz.write_all(format_frame(fr.time, &fr.x, fr.v.as_deref()).as_bytes())?;
            }
            gz.flush()?;
            self.sinks.push((p, gz));
        }
        Ok(())
    }

    /// Record the current state of every selected object.
    pub fn capture(&mut self, sim: &Simulation) {
        if !self.sinks.is_empty() {
            if self.stream_error.is_some() {
                return;
            }
            for (r, (_, gz)) in self.recordings.iter().zip(&mut self.sinks) {
                if let Some(s) = sim.scene.state(r.id) {
                    let v = self.with_velocity.then(|| s.vec(VecId::VELOCITY));
                    let text = format_frame(sim.time(), s.vec(VecId::POSITION), v);
                    if let Err(e) = gz.write_all(text.as_bytes()).and_then(|_| gz.flush()) {
                        self.stream_error = Some(e);
                        return;
                    }
                }
            }
            return;
        }
        for r in &mut self.recordings {
            if let Some(s) = sim.scene.state(r.id) {
                r.frames.push(Frame {
                    time: sim.time(),
                    x: s.vec(VecId::POSITION).to_vec(),
                    v: self.with_velocity.then(|| s.vec(VecId::VELOCITY).to_vec()),
                });
            }
        }
    }

    /// Write `DIR/<k>_<name>_mstate.txt.gz` files (or, when streaming, close them).
    pub fn write(&mut self, dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
        if !self.sinks.is_empty() {
            let mut out = Vec::new();
            for (p, gz) in self.sinks.drain(..) {
                gz.finish()?;
                out.push(p);
            }
            return match self.stream_error.take() {
                Some(e) => Err(e),
                None => Ok(out),
            };
        }
        std::fs::create_dir_all(dir)?;
        let mut out = Vec::new();
        for r in &self.recordings {
            let p = dir.join(format!("{}_{}_mstate.txt.gz", r.k, file_name_part(&r.name)));
            write_state_file(&p, &r.frames)?;
            out.push(p);
        }
        Ok(out)
    }
}

/// Run `steps` steps, recording at T=0 and at the start of the last step (SOFA's
/// `lastStepOnly`), or before every step when `every_step`.
pub fn run_recorded(
    sim: &mut Simulation,
    steps: usize,
    rec: &mut Recorder,
    every_step: bool,
    mut on_step: impl FnMut(&Simulation, usize),
) {
    run_recorded_until(sim, steps, rec, every_step, |s, i| {
        on_step(s, i);
        true
    });
}

/// [`run_recorded`], stopping after the step for which `on_step` returns false; returns the
/// number of steps run.
pub fn run_recorded_until(
    sim: &mut Simulation,
    steps: usize,
    rec: &mut Recorder,
    every_step: bool,
    mut on_step: impl FnMut(&Simulation, usize) -> bool,
) -> usize {
    for i in 0..steps {
        if i == 0 || every_step || i + 1 == steps {
            rec.capture(sim);
        }
        sim.step();
        if !on_step(sim, i + 1) {
            return i + 1;
        }
    }
    if steps == 0 {
        rec.capture(sim);
    }
    steps
}

/// A VTK series per simulated state (mapped ones included): `DIR/<k>_<name>_<frame>.vtu` and
/// `DIR/<k>_<name>.pvd`, written frame by frame (the `.pvd` rewritten after each), with the
/// cells of the state's context topology and its velocity as point data. Rigid3 states give
/// their centres, Vec1/Vec2 states are padded with zeros.
pub struct VtkSeries {
    dir: std::path::PathBuf,
    entries: Vec<VtkEntry>,
}

struct VtkEntry {
    id: ComponentId,
    base: String,
    cells: canape_io::vtk::Cells,
    frames: Vec<(f64, std::path::PathBuf)>,
}

/// The first three numbers of each `size`-number block, zero-padded (positions and velocities
/// of any DOF type as 3D vectors).
fn as_points(v: &[f64], size: usize) -> Vec<f64> {
    v.chunks(size.max(1))
        .flat_map(|c| std::array::from_fn::<f64, 3, _>(|k| c.get(k).copied().unwrap_or(0.0)))
        .collect()
}

impl VtkSeries {
    pub fn new(sim: &Simulation, dir: &Path) -> std::io::Result<VtkSeries> {
        std::fs::create_dir_all(dir)?;
        let entries = compared_states(&sim.scene, true)
            .into_iter()
            .filter_map(|(k, name, id)| {
                let s = sim.scene.state(id)?;
                let node = sim.scene.info(id).node;
                let mesh = sim
                    .scene
                    .context_topology(node)
                    .and_then(|t| sim.scene.topology(t))
                    .map(|t| t.mesh());
                Some(VtkEntry {
                    id,
                    base: format!("{k}_{}", file_name_part(&name)),
                    cells: canape_io::vtk::Cells::from_mesh(mesh, s.size()),
                    frames: Vec::new(),
                })
            })
            .collect();
        Ok(VtkSeries {
            dir: dir.to_path_buf(),
            entries,
        })
    }

    /// Write the current state of every series as a new frame; returns the files written.
    pub fn capture(&mut self, sim: &Simulation) -> std::io::Result<Vec<std::path::PathBuf>> {
        let mut written = Vec::new();
        for e in &mut self.entries {
            let Some(s) = sim.scene.state(e.id) else {
                continue;
            };
            let x = as_points(s.vec(VecId::POSITION), s.dof.coord_size());
            let v = as_points(s.vec(VecId::VELOCITY), s.dof.deriv_size());
            let file = format!("{}_{}.vtu", e.base, e.frames.len());
            let path = self.dir.join(&file);
            canape_io::vtk::write_vtu(&path, &x, &e.cells, &[("velocity", 3, &v)])?;
            e.frames.push((sim.time(), file.into()));
            canape_io::vtk::write_pvd(&self.dir.join(format!("{}.pvd", e.base)), &e.frames)?;
            written.push(path);
        }
        Ok(written)
    }

    /// The `.pvd` files of the series.
    pub fn collections(&self) -> Vec<std::path::PathBuf> {
        self.entries
            .iter()
            .map(|e| self.dir.join(format!("{}.pvd", e.base)))
            .collect()
    }
}

/// Why a [`CsvSeries`] could not start.
#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    #[error("--csv needs at least one --data PATH.DATA")]
    NoData,
    #[error("'{spec}' is not a Data path (write /node/object.data)")]
    NotDataPath { spec: String },
    #[error("'{spec}': no component at '{path}'")]
    NoComponent { spec: String, path: String },
    #[error("'{spec}': {source}")]
    Value {
        spec: String,
        #[source]
        source: CsvValueError,
    },
    #[error("cannot write {}: {source}", .file.display())]
    Create {
        file: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Writing the header failed.
    #[error(transparent)]
    Write(std::io::Error),
}

/// Why a recorded Data gave no numbers.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CsvValueError {
    #[error("the component is gone")]
    Gone,
    #[error("Data '{data}' is not numeric")]
    NotNumeric { data: String },
    #[error("no Data '{data}'")]
    NoData { data: String },
}

/// A CSV table of chosen Data over time: `time` then one column per number of each Data (a
/// state's `position`, `velocity`, `force` or `rest_position` read from the state's vectors;
/// any numeric Data of any component from its table), a row per recorded frame, flushed as it
/// is written.
pub struct CsvSeries {
    out: std::io::BufWriter<std::fs::File>,
    columns: Vec<(ComponentId, String, Option<VecId>)>,
}

impl CsvSeries {
    /// `specs` are SOFA link paths to Data (`@/node/object.position`, the `@` optional).
    pub fn new(sim: &Simulation, file: &Path, specs: &[String]) -> Result<CsvSeries, CsvError> {
        use canape_core::scene::{split_data_link, Target};
        use std::io::Write;
        if specs.is_empty() {
            return Err(CsvError::NoData);
        }
        let scene = &sim.scene;
        let mut columns = Vec::new();
        let mut header = vec!["time".to_string()];
        for spec in specs {
            let s = spec.trim().trim_start_matches('@');
            let Some((path, data)) = split_data_link(s) else {
                return Err(CsvError::NotDataPath { spec: spec.clone() });
            };
            let Some(Target::Component(id)) = scene.resolve_path(scene.root(), None, path) else {
                return Err(CsvError::NoComponent {
                    spec: spec.clone(),
                    path: path.to_string(),
                });
            };
            let vec = scene.state(id).and(match data {
                "position" | "x" => Some(VecId::POSITION),
                "velocity" | "v" => Some(VecId::VELOCITY),
                "force" | "f" => Some(VecId::FORCE),
                "rest_position" | "x0" => Some(VecId::REST_POSITION),
                _ => None,
            });
            let col = (id, data.to_string(), vec);
            let n = Self::values(sim, &col)
                .map_err(|source| CsvError::Value {
                    spec: spec.clone(),
                    source,
                })?
                .len();
            header.extend((0..n).map(|k| format!("{s}[{k}]")));
            columns.push(col);
        }
        let f = canape_io::state_io::create_replacing(file).map_err(|source| CsvError::Create {
            file: file.to_path_buf(),
            source,
        })?;
        let mut out = std::io::BufWriter::new(f);
        writeln!(out, "{}", header.join(","))
            .and_then(|_| out.flush())
            .map_err(CsvError::Write)?;
        Ok(CsvSeries { out, columns })
    }

    fn values(
        sim: &Simulation,
        (id, data, vec): &(ComponentId, String, Option<VecId>),
    ) -> Result<Vec<f64>, CsvValueError> {
        use canape_core::data::Value;
        if let (Some(v), Some(s)) = (vec, sim.scene.state(*id)) {
            return Ok(s.vec(*v).to_vec());
        }
        let c = sim.scene.component(*id).ok_or(CsvValueError::Gone)?;
        match c.data().value(data) {
            Some(Value::Real(x)) => Ok(vec![*x]),
            Some(Value::Int(i)) => Ok(vec![*i as f64]),
            Some(Value::Bool(b)) => Ok(vec![f64::from(u8::from(*b))]),
            Some(Value::Reals(v)) => Ok(v.clone()),
            Some(Value::Ints(v)) => Ok(v.iter().map(|&i| i as f64).collect()),
            Some(_) => Err(CsvValueError::NotNumeric { data: data.clone() }),
            None => Err(CsvValueError::NoData { data: data.clone() }),
        }
    }

    /// Write the current values as a row.
    pub fn capture(&mut self, sim: &Simulation) -> std::io::Result<()> {
        use std::io::Write;
        let mut row = vec![sim.time().to_string()];
        for col in &self.columns {
            let v = Self::values(sim, col).map_err(std::io::Error::other)?;
            row.extend(v.iter().map(|x| x.to_string()));
        }
        writeln!(self.out, "{}", row.join(","))?;
        self.out.flush()
    }
}
