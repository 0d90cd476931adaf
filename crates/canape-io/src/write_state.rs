//! WriteState (Sofa/Component/Playback/WriteState.inl): a controller that writes its context
//! state at the start of chosen steps, in SOFA's WriteState format (`T= t`, then `X=`, `X0=`,
//! `V=`, `F=` lines; gzip when the file name ends in `.gz`), flushed after every frame so a
//! killed run keeps what it wrote. The file is relative to the working directory, as SOFA's
//! is, and is created afresh (a link planted at its place is replaced, never followed).
//!
//! Schedule, as SOFA's: each time of `time` in turn (at the first step whose start reaches it,
//! within a tenth of a step), then with `period` every period after the last listed time; with
//! neither, every step from 0.

use crate::error::FileWriteError;
use crate::state_io::{create_replacing, fmt_g6};
use canape_core::component::{Component, Controller, Event, SceneControl};
use canape_core::data::{base_fields, DataKind, DataTable};
use canape_core::scene::{ComponentId, InitContext};
use canape_core::state::VecId;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;

enum Sink {
    Plain(std::fs::File),
    Gz(GzEncoder<std::fs::File>),
}

/// SOFA's WriteState.
pub struct WriteState {
    data: DataTable,
    state: Option<ComponentId>,
    sink: Option<Sink>,
    times: Vec<f64>,
    period: Option<f64>,
    dt: f64,
    next: usize,
    last: f64,
    first_done: bool,
}

/// A clone does not write: it would share the original's file.
impl Clone for WriteState {
    fn clone(&self) -> Self {
        WriteState {
            data: self.data.clone(),
            state: self.state,
            sink: None,
            times: self.times.clone(),
            period: self.period,
            dt: self.dt,
            next: self.next,
            last: self.last,
            first_done: self.first_done,
        }
    }
}

impl Default for WriteState {
    fn default() -> Self {
        Self::new()
    }
}

impl WriteState {
    pub fn new() -> Self {
        WriteState {
            data: base_fields(DataTable::new())
                .with("filename", DataKind::Str, "", "output file name")
                .with(
                    "writeX",
                    DataKind::Bool,
                    "1",
                    "flag enabling output of X vector",
                )
                .with(
                    "writeX0",
                    DataKind::Bool,
                    "0",
                    "flag enabling output of X0 vector",
                )
                .with(
                    "writeV",
                    DataKind::Bool,
                    "0",
                    "flag enabling output of V vector",
                )
                .with(
                    "writeF",
                    DataKind::Bool,
                    "0",
                    "flag enabling output of F vector",
                )
                .with(
                    "time",
                    DataKind::Reals(0),
                    "",
                    "set time to write outputs (by default export at t=0)",
                )
                .with("period", DataKind::Real, "0", "period between outputs")
                .with(
                    "DOFsX",
                    DataKind::Ints(0),
                    "",
                    "set the position DOFs to write",
                )
                .with(
                    "DOFsV",
                    DataKind::Ints(0),
                    "",
                    "set the velocity DOFs to write",
                )
                .with(
                    "stopAt",
                    DataKind::Real,
                    "0",
                    "stop the simulation when the given threshold is reached",
                )
                .with(
                    "keperiod",
                    DataKind::Real,
                    "0",
                    "set the period to measure the kinetic energy increase",
                ),
            state: None,
            sink: None,
            times: Vec::new(),
            period: None,
            dt: 0.01,
            next: 0,
            last: 0.0,
            first_done: false,
        }
    }

    /// Write the frame of `time`; on an error, no more frames are written.
    fn write_frame(
        &mut self,
        scene: &canape_core::scene::Scene,
        time: f64,
    ) -> Result<(), FileWriteError> {
        let (Some(id), Some(sink)) = (self.state, self.sink.as_mut()) else {
            return Ok(());
        };
        let Some(st) = scene.state(id) else {
            return Ok(());
        };
        let mut text = format!("T= {}\n", fmt_g6(time));
        for (flag, label, v) in [
            ("writeX", "X", VecId::POSITION),
            ("writeX0", "X0", VecId::REST_POSITION),
            ("writeV", "V", VecId::VELOCITY),
            ("writeF", "F", VecId::FORCE),
        ] {
            if self.data.bool(flag) {
                text.push_str("  ");
                text.push_str(label);
                text.push('=');
                for a in st.vec(v) {
                    text.push(' ');
                    text.push_str(&fmt_g6(*a));
                }
                text.push('\n');
            }
        }
        let r = match sink {
            Sink::Plain(f) => f.write_all(text.as_bytes()).and_then(|_| f.flush()),
            Sink::Gz(g) => g.write_all(text.as_bytes()).and_then(|_| g.flush()),
        };
        r.map_err(|error| {
            self.sink = None;
            FileWriteError::Write {
                path: self.data.str("filename").into(),
                error,
            }
        })
    }
}

impl Component for WriteState {
    fn class_name(&self) -> &'static str {
        "WriteState"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        self.state = ctx.scene.context_state(ctx.node);
        if self.state.is_none() {
            ctx.error(
                "WriteState needs a MechanicalObject in its node or above: nothing is written",
            );
        }
        self.dt = ctx.scene.node(ctx.node).dt;
        let d = &self.data;
        if d.real("stopAt") != 0.0 {
            ctx.warn("stopAt (stop writing once the kinetic energy settles) is not supported: frames are written on schedule");
        }
        if !d.ints("DOFsX").is_empty() || !d.ints("DOFsV").is_empty() {
            ctx.warn("DOFsX/DOFsV are not used (SOFA ignores them too): every DOF is written");
        }
        self.times = d.reals("time").to_vec();
        if self.times.iter().any(|t| !(t.is_finite() && *t >= 0.0)) {
            ctx.error("time: export times must be zero or positive: nothing is written");
            self.state = None;
            return;
        }
        let period = d.real("period");
        self.period = if d.is_set("period") {
            if self.times.len() > 1 {
                self.times.truncate(1);
                ctx.warn("with a period only the first time is a start time");
            }
            Some(period)
        } else if !d.is_set("time") {
            Some(self.dt)
        } else {
            None
        };
        if self.times.is_empty() {
            self.times.push(0.0);
        }
        if self.period.is_some_and(|p| !(p.is_finite() && p > 0.0)) {
            ctx.error("period must be a positive number of seconds: nothing is written");
            self.state = None;
            return;
        }
        let name = d.str("filename").to_string();
        if name.trim().is_empty() {
            ctx.error("no filename given: nothing is written");
            return;
        }
        match create_replacing(std::path::Path::new(&name)) {
            Ok(f) if name.ends_with(".gz") => {
                self.sink = Some(Sink::Gz(GzEncoder::new(f, Compression::default())))
            }
            Ok(f) => self.sink = Some(Sink::Plain(f)),
            Err(e) => ctx.error(format!("cannot create '{name}': {e}; nothing is written")),
        }
        self.next = 0;
        self.last = 0.0;
        self.first_done = false;
    }
}

impl Controller for WriteState {
    fn on_event(&mut self, event: &Event, scene: &mut dyn SceneControl) -> Result<(), String> {
        if !matches!(event, Event::AnimateBegin { .. }) || self.sink.is_none() {
            return Ok(());
        }
        let time = scene.scene().time;
        let eps = 0.1 * self.dt;
        let reached = |t: f64| time > t || (time - t).abs() < eps;
        let mut write = false;
        if self.next < self.times.len() {
            self.last = self.times[self.next];
            if reached(self.last) {
                write = true;
                self.first_done = true;
                self.next += 1;
            }
        } else if let (true, Some(p)) = (self.first_done, self.period) {
            if reached(self.last + p) {
                write = true;
                self.last += p;
            }
        }
        if write {
            self.write_frame(scene.scene(), time)
                .map_err(|e| format!("{e}; no more frames are written"))?;
        }
        Ok(())
    }
}
