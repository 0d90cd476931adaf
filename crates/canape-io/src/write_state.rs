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
use canape_core::component::{Controller, ControllerError, Event, Reaction, SceneControl};
use canape_core::data::{
    base_fields, ChangedData, DataKind, DataTable, Flag, Ints, Real, Reals, Text,
};
use canape_core::scene::{ComponentId, InitContext};
use canape_core::state::VecId;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;

enum Sink {
    Plain(std::fs::File),
    Gz(GzEncoder<std::fs::File>),
}

canape_core::data_schema! {
    /// WriteState's own Data (after the base Data).
    pub struct WriteStateData {
        filename: Text = ("filename", DataKind::Str, "", "output file name"),
        write_x: Flag = ("writeX", DataKind::Bool, "1", "flag enabling output of X vector"),
        write_x0: Flag = ("writeX0", DataKind::Bool, "0", "flag enabling output of X0 vector"),
        write_v: Flag = ("writeV", DataKind::Bool, "0", "flag enabling output of V vector"),
        write_f: Flag = ("writeF", DataKind::Bool, "0", "flag enabling output of F vector"),
        time: Reals = ("time", DataKind::Reals(0), "", "set time to write outputs (by default export at t=0)"),
        period: Real = ("period", DataKind::Real, "0", "period between outputs"),
        dofs_x: Ints = ("DOFsX", DataKind::Ints(0), "", "set the position DOFs to write"),
        dofs_v: Ints = ("DOFsV", DataKind::Ints(0), "", "set the velocity DOFs to write"),
        stop_at: Real = ("stopAt", DataKind::Real, "0", "stop the simulation when the given threshold is reached"),
        keperiod: Real = ("keperiod", DataKind::Real, "0", "set the period to measure the kinetic energy increase"),
    }
}

/// SOFA's WriteState.
pub struct WriteState {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: WriteStateData,
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
            d: self.d,
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
        let (data, d) = WriteStateData::declare(base_fields(DataTable::new()));
        WriteState {
            data,
            d,
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
        let d = self.d;
        for (flag, label, v) in [
            (d.write_x, "X", VecId::POSITION),
            (d.write_x0, "X0", VecId::REST_POSITION),
            (d.write_v, "V", VecId::VELOCITY),
            (d.write_f, "F", VecId::FORCE),
        ] {
            if self.data.get(flag) {
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
                path: self.data.get(d.filename).into(),
                error,
            }
        })
    }
}

impl WriteState {
    /// The vectors written are chosen at each frame (`writeX`, `writeX0`, `writeV`, `writeF`):
    /// an edit of those flags changes the next frames, the file and the schedule going on; any
    /// other edit re-runs init (a new file, the schedule from its start).
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        if changed.only(&[
            d.write_x.index(),
            d.write_x0.index(),
            d.write_v.index(),
            d.write_f.index(),
        ]) {
            Reaction::Updated
        } else {
            Reaction::Reinit
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.state = ctx.scene.context_state(ctx.node);
        if self.state.is_none() {
            ctx.error(
                "WriteState needs a MechanicalObject in its node or above: nothing is written",
            );
        }
        self.dt = ctx.scene.node(ctx.node).dt;
        let (d, h) = (&self.data, self.d);
        if d.get(h.stop_at) != 0.0 {
            ctx.warn("stopAt (stop writing once the kinetic energy settles) is not supported: frames are written on schedule");
        }
        if !d.get(h.dofs_x).is_empty() || !d.get(h.dofs_v).is_empty() {
            ctx.warn("DOFsX/DOFsV are not used (SOFA ignores them too): every DOF is written");
        }
        self.times = d.get(h.time).to_vec();
        if self.times.iter().any(|t| !(t.is_finite() && *t >= 0.0)) {
            ctx.error("time: export times must be zero or positive: nothing is written");
            self.state = None;
            return;
        }
        let period = d.get(h.period);
        self.period = if d.was_set(h.period) {
            if self.times.len() > 1 {
                self.times.truncate(1);
                ctx.warn("with a period only the first time is a start time");
            }
            Some(period)
        } else if !d.was_set(h.time) {
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
        let name = d.get(h.filename).to_string();
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

canape_core::impl_component!(WriteState, "WriteState", init, data_changed);

impl Controller for WriteState {
    fn on_event(
        &mut self,
        event: &Event,
        scene: &mut dyn SceneControl,
    ) -> Result<(), ControllerError> {
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
                .map_err(|e| ControllerError::Write {
                    context: "",
                    source: Box::new(e),
                    then: "; no more frames are written",
                })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{edit, init_in, same_text, temp_dir, Control};
    use canape_core::scene::{AnyComponent, Scene};
    use canape_core::state::MechanicalObject;
    use canape_types::DofType;

    /// A scene with a moving two-point state, and a WriteState to `file` initialised there with
    /// `attrs`.
    fn write_state(file: &std::path::Path, attrs: &[(&str, &str)]) -> (Scene, WriteState) {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut mo = MechanicalObject::new(DofType::Vec3);
        mo.resize(2);
        mo.vec_mut(VecId::POSITION)
            .copy_from_slice(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        mo.vec_mut(VecId::VELOCITY)
            .copy_from_slice(&[0.5, 0.25, 0.125, -1.0, -2.0, -3.0]);
        let id = scene.add_component(root, "dofs", AnyComponent::State(mo), None);
        let mut w = WriteState::new();
        let file = file.display().to_string();
        init_in(
            &mut w,
            &scene,
            root,
            id,
            &[&[("filename", &*file)], attrs].concat(),
        );
        (scene, w)
    }

    /// Three steps' AnimateBegin events, the state moving between them.
    fn run(scene: &mut Scene, w: &mut WriteState) {
        for step in 0..3 {
            scene.time = step as f64 * 0.01;
            w.on_event(&Event::AnimateBegin { dt: 0.01 }, &mut Control(scene))
                .unwrap();
            let id = scene.component_ids().next().unwrap();
            for x in scene.state_mut(id).unwrap().vec_mut(VecId::POSITION) {
                *x += 0.1;
            }
        }
    }

    #[test]
    fn edits_update_in_place_write_flags() {
        let dir = temp_dir("ws-edit");
        let (edited, fresh) = (dir.join("edited.txt"), dir.join("fresh.txt"));
        let edits = [("writeX", "0"), ("writeV", "1"), ("writeX0", "1")];
        let (mut s1, mut a) = write_state(&edited, &[]);
        assert_eq!(edit(&mut a, &edits), Reaction::Updated);
        run(&mut s1, &mut a);
        let (mut s2, mut b) = write_state(&fresh, &edits);
        run(&mut s2, &mut b);
        drop((a, b));
        let ta = same_text(&edited, &fresh);
        assert!(ta.contains("V=") && ta.contains("X0=") && !ta.contains("  X="));
        // any other edit re-runs init (a new file, the schedule from its start)
        let (_, mut c) = write_state(&dir.join("other.txt"), &[]);
        assert_eq!(
            edit(&mut c, &[("period", "0.02"), ("writeF", "1")]),
            Reaction::Reinit
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
