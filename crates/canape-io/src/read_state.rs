//! ReadState (Sofa/Component/Playback/ReadState.inl): a controller that plays a WriteState
//! file back into its context state. At SimulationInitDone and at every AnimateBegin, with
//! t = the context time + `shift`, it reads on through the file's frames while their time is at
//! most t and sets the state to the last one reached (positions from `X=`, scaled by
//! `scalePos` and moved by `translation`, velocities from `V=`); a frame is applied once, when
//! it is first reached, and with `loop` the file starts again after its last frame, its times
//! shifted by the last time read. The file (plain or `.gz`) is read whole at init, up to
//! [`MAX_BYTES`]. A frame's values fill the state's scalars from the first (SOFA's readVec);
//! the positions then go through the step's usual projection and mapping.

use crate::error::StateFileError;
use crate::state_io::{parse_frames, Frame};
use canape_core::component::{Controller, ControllerError, Event, Reaction, SceneControl};
use canape_core::data::{base_fields, ChangedData, DataKind, DataTable, Flag, Real, Reals, Text};
use canape_core::scene::{ComponentId, InitContext};
use canape_core::state::VecId;
use std::io::Read;

/// The largest (decompressed) state file read.
pub const MAX_BYTES: u64 = 1 << 30;

canape_core::data_schema! {
    /// ReadState's own Data (after the base Data).
    pub struct ReadStateData {
        filename: Text = ("filename", DataKind::File, "", "output file name"),
        interval: Real = ("interval", DataKind::Real, "0", "time duration between inputs"),
        shift: Real = ("shift", DataKind::Real, "0", "shift between times in the file and times when they will be read"),
        looping: Flag = ("loop", DataKind::Bool, "0", "set to 'true' to re-read the file when reaching the end"),
        scale_pos: Real = ("scalePos", DataKind::Real, "1", "scale the input mechanical object"),
        rotation: Reals = ("rotation", DataKind::Vector(3), "0 0 0", "rotate the input mechanical object"),
        translation: Reals = ("translation", DataKind::Vector(3), "0 0 0", "translate the input mechanical object"),
    }
}

/// SOFA's ReadState.
#[derive(Clone)]
pub struct ReadState {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: ReadStateData,
    state: Option<ComponentId>,
    frames: Vec<Frame>,
    /// Frames whose time line has been read.
    pos: usize,
    /// The frame whose time line was read last, not applied yet.
    pending: Option<usize>,
    /// The time of the last time line read (with the loop offset).
    next_time: f64,
    loop_time: f64,
    /// `loop`, `shift`, `scalePos` and `translation`, read at init.
    looping: bool,
    shift: f64,
    scale: f64,
    translation: [f64; 3],
}

impl Default for ReadState {
    fn default() -> Self {
        Self::new()
    }
}

impl ReadState {
    pub fn new() -> Self {
        let (data, d) = ReadStateData::declare(base_fields(DataTable::new()));
        ReadState {
            data,
            d,
            state: None,
            frames: Vec::new(),
            pos: 0,
            pending: None,
            next_time: 0.0,
            loop_time: 0.0,
            looping: false,
            shift: 0.0,
            scale: 1.0,
            translation: [0.0; 3],
        }
    }

    /// Frames played back (tests).
    pub fn with_frames(frames: Vec<Frame>, looping: bool) -> Self {
        let mut r = ReadState::new();
        r.frames = frames;
        r.looping = looping;
        r
    }

    fn read_file(path: &str) -> Result<String, StateFileError> {
        let f = std::fs::File::open(path).map_err(|error| StateFileError::Open {
            path: path.to_string(),
            error,
        })?;
        let mut buf = Vec::new();
        let limited = |r: &mut dyn Read, buf: &mut Vec<u8>| -> std::io::Result<usize> {
            r.take(MAX_BYTES + 1).read_to_end(buf)
        };
        let res = if path.ends_with(".gz") {
            limited(&mut flate2::read::MultiGzDecoder::new(f), &mut buf)
        } else {
            limited(&mut std::io::BufReader::new(f), &mut buf)
        };
        match res {
            Ok(_) => {}
            // a gzip stream cut short keeps what it gave
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !buf.is_empty() => {}
            Err(error) => {
                return Err(StateFileError::Read {
                    path: path.to_string(),
                    error,
                })
            }
        }
        if buf.len() as u64 > MAX_BYTES {
            return Err(StateFileError::TooLarge {
                path: path.to_string(),
                max: MAX_BYTES,
            });
        }
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// The frame to apply at time `t` (SOFA's readNext): the last frame newly reached.
    pub fn advance(&mut self, t: f64) -> Option<usize> {
        let looping = self.looping;
        let mut valid = None;
        let mut rewound_without_progress = false;
        while self.next_time <= t {
            if let Some(p) = self.pending.take() {
                valid = Some(p);
            }
            if self.pos == self.frames.len() {
                // a file whose times never grow would loop for ever
                if !looping || self.frames.is_empty() || rewound_without_progress {
                    break;
                }
                rewound_without_progress = self.next_time == self.loop_time;
                self.pos = 0;
                self.loop_time = self.next_time;
            }
            let f = self.pos;
            self.pos += 1;
            self.next_time = self.frames[f].time + self.loop_time;
            self.pending = Some(f);
        }
        valid
    }

    fn apply(&mut self, scene: &mut dyn SceneControl) {
        let t = scene.scene().time + self.shift;
        let Some(f) = self.advance(t) else {
            return;
        };
        let Some(id) = self.state else {
            return;
        };
        let (scale, tr) = (self.scale, self.translation);
        let frame = &self.frames[f];
        let Some(st) = scene.state_mut(id) else {
            return;
        };
        let cs = st.dof.coord_size();
        if !frame.x.is_empty() {
            let x = st.vec_mut(VecId::POSITION);
            let n = x.len().min(frame.x.len());
            x[..n].copy_from_slice(&frame.x[..n]);
            if scale != 1.0 || tr.iter().any(|v| *v != 0.0) {
                // the points' centres (SOFA's applyScale then applyTranslation)
                let dims = cs.min(3);
                for p in x.chunks_exact_mut(cs) {
                    for k in 0..dims {
                        p[k] = p[k] * scale + tr[k];
                    }
                }
            }
        }
        if let Some(v) = &frame.v {
            let vel = st.vec_mut(VecId::VELOCITY);
            let n = vel.len().min(v.len());
            vel[..n].copy_from_slice(&v[..n]);
        }
    }
}

impl ReadState {
    /// Copy `loop`, `shift`, `scalePos` and `translation` from the Data.
    fn read_parameters(&mut self) {
        let (data, d) = (&self.data, self.d);
        self.looping = data.get(d.looping);
        self.shift = data.get(d.shift);
        self.scale = data.get(d.scale_pos);
        let tr = data.get(d.translation);
        self.translation = std::array::from_fn(|k| tr.get(k).copied().unwrap_or(0.0));
    }

    /// `loop`, `shift`, `scalePos` and `translation` are used at each playback step: an edit of
    /// those takes effect from the next step, the playback going on; any other edit re-runs
    /// init (the file read again, played from its start).
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        if changed.only(&[
            d.looping.index(),
            d.shift.index(),
            d.scale_pos.index(),
            d.translation.index(),
        ]) {
            self.read_parameters();
            Reaction::Updated
        } else {
            Reaction::Reinit
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.state = ctx.scene.context_state(ctx.node);
        self.frames.clear();
        (self.pos, self.pending, self.next_time, self.loop_time) = (0, None, 0.0, 0.0);
        self.read_parameters();
        let d = self.d;
        if self.state.is_none() {
            ctx.error("ReadState needs a MechanicalObject in its node or above: nothing is read");
            return;
        }
        if self.data.get(d.rotation).iter().any(|v| *v != 0.0) {
            ctx.warn(
                "rotation is not applied to the positions read (scalePos and translation are)",
            );
        }
        if self.data.get(d.interval) != 0.0 {
            ctx.warn("interval is not used (SOFA's ReadState does not use it either)");
        }
        let path = self.data.get(d.filename).to_string();
        if path.is_empty() {
            ctx.error("no file to read (filename is empty or was not found)");
            self.state = None;
            return;
        }
        match Self::read_file(&path).and_then(|t| parse_frames(&t)) {
            Ok(frames) => {
                if frames.is_empty() {
                    ctx.warn(format!("'{path}' holds no frame: the state is not moved"));
                }
                self.frames = frames;
            }
            Err(e) => {
                ctx.error(format!("{e}: nothing is read"));
                self.state = None;
            }
        }
    }
}

canape_core::impl_component!(ReadState, "ReadState", init, data_changed);

impl Controller for ReadState {
    fn on_event(
        &mut self,
        event: &Event,
        scene: &mut dyn SceneControl,
    ) -> Result<(), ControllerError> {
        if matches!(
            event,
            Event::SimulationInitDone | Event::AnimateBegin { .. }
        ) {
            self.apply(scene);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::Component;

    fn frames(times: &[f64]) -> Vec<Frame> {
        times
            .iter()
            .map(|&t| Frame {
                time: t,
                x: vec![t],
                v: None,
            })
            .collect()
    }

    #[test]
    fn frames_are_applied_once_when_reached_and_loop_with_shifted_times() {
        let mut r = ReadState::with_frames(frames(&[0.0, 0.01, 0.02, 0.03]), false);
        assert_eq!(r.advance(0.0), Some(0));
        assert_eq!(r.advance(0.0), None, "a frame is applied once");
        assert_eq!(r.advance(0.01), Some(1));
        // a step over two frames applies the later one
        assert_eq!(r.advance(0.035), Some(3));
        assert_eq!(
            r.advance(1.0),
            None,
            "past the end without loop: nothing more"
        );
        let mut l = ReadState::with_frames(frames(&[0.0, 0.5, 1.0]), true);
        assert_eq!(l.advance(0.0), Some(0));
        // at 1.0 the last frame is reached and the file starts again, its frame 0 now at 1.0
        // too: read after the last, it is the one applied (as SOFA's reading order gives)
        assert_eq!(l.advance(1.0), Some(0));
        assert_eq!(l.advance(1.2), None);
        assert_eq!(l.advance(1.5), Some(1));
        // a looping file whose times never grow does not hang
        let mut z = ReadState::with_frames(frames(&[0.0, 0.0]), true);
        assert_eq!(z.advance(5.0), Some(1));
        assert_eq!(z.advance(6.0), Some(1));
    }

    /// The scene as a controller sees it.
    struct Control<'a>(&'a mut canape_core::scene::Scene);

    impl SceneControl for Control<'_> {
        fn scene(&self) -> &canape_core::scene::Scene {
            self.0
        }
        fn set_data(
            &mut self,
            _: ComponentId,
            _: &str,
            _: &str,
        ) -> Result<(), canape_core::scene::EditError> {
            unreachable!("ReadState edits no Data")
        }
        fn state_mut(
            &mut self,
            id: ComponentId,
        ) -> Option<&mut canape_core::state::MechanicalObject> {
            self.0.state_mut(id)
        }
        fn add_component(
            &mut self,
            _: canape_core::scene::NodeId,
            _: &str,
            _: canape_core::scene::AnyComponent,
        ) -> Result<(), canape_core::scene::SceneError> {
            unreachable!("ReadState adds nothing")
        }
        fn remove_component(
            &mut self,
            _: ComponentId,
        ) -> Result<(), canape_core::scene::SceneError> {
            unreachable!("ReadState removes nothing")
        }
        fn remove_node(
            &mut self,
            _: canape_core::scene::NodeId,
        ) -> Result<(), canape_core::scene::SceneError> {
            unreachable!("ReadState removes nothing")
        }
    }

    /// A scene with a two-point state and a ReadState of `file` initialised there with
    /// `attrs`, and the state's id.
    fn read_state(
        file: &std::path::Path,
        attrs: &[(&str, &str)],
    ) -> (canape_core::scene::Scene, ComponentId, ReadState) {
        let mut scene = canape_core::scene::Scene::new();
        let root = scene.add_node("root", None);
        let mut mo = canape_core::state::MechanicalObject::new(canape_types::DofType::Vec3);
        mo.resize(2);
        let id = scene.add_component(
            root,
            "dofs",
            canape_core::scene::AnyComponent::State(mo),
            None,
        );
        let mut r = ReadState::new();
        r.data_mut()
            .set_str("filename", &file.display().to_string())
            .unwrap();
        for (k, v) in attrs {
            r.data_mut().set_str(k, v).unwrap();
        }
        let mut diags = canape_core::diag::Diagnostics::default();
        // the state's id stands for the ReadState's (only diagnostics name it)
        r.init(&mut InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        });
        assert!(!diags.has_errors(), "{diags:?}");
        (scene, id, r)
    }

    /// The state's positions and velocities after each of five steps' AnimateBegin.
    fn play(
        scene: &mut canape_core::scene::Scene,
        id: ComponentId,
        r: &mut ReadState,
    ) -> Vec<Vec<f64>> {
        let mut out = Vec::new();
        for step in 0..5 {
            scene.time = step as f64 * 0.01;
            r.on_event(&Event::AnimateBegin { dt: 0.01 }, &mut Control(scene))
                .unwrap();
            let st = scene.state(id).unwrap();
            out.push([st.vec(VecId::POSITION), st.vec(VecId::VELOCITY)].concat());
        }
        out
    }

    #[test]
    fn edits_update_in_place_playback_parameters() {
        let dir = std::env::temp_dir().join(format!("canape-rs-edit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("frames.txt");
        std::fs::write(
            &file,
            "T= 0\n  X= 0 1 2 3 4 5\n  V= 1 1 1 2 2 2\nT= 0.01\n  X= 0.5 1.5 2.5 3.5 4.5 5.5\n  V= 3 3 3 4 4 4\nT= 0.02\n  X= 1 2 3 4 5 6\n  V= 5 5 5 6 6 6\n",
        )
        .unwrap();
        let edits = [
            ("shift", "0.01"),
            ("scalePos", "2"),
            ("translation", "1 -1 0.25"),
            ("loop", "1"),
        ];
        let (mut s1, id1, mut a) = read_state(&file, &[]);
        let v0 = a.data().versions();
        for (k, v) in edits {
            a.data_mut().set_str(k, v).unwrap();
        }
        let changed = a.data().changed_since(&v0);
        assert_eq!(a.data_changed(&changed), Reaction::Updated);
        let (mut s2, id2, mut b) = read_state(&file, &edits);
        let (pa, pb) = (play(&mut s1, id1, &mut a), play(&mut s2, id2, &mut b));
        assert_eq!(pa, pb);
        // the edits are in effect: the second frame, scaled and moved, at the first step
        assert_eq!(pa[0][..3], [2.0, 2.0, 5.25]);
        // any other edit re-runs init
        let v0 = a.data().versions();
        a.data_mut().set_str("interval", "0.5").unwrap();
        assert_eq!(
            a.data_changed(&a.data().changed_since(&v0)),
            Reaction::Reinit
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
