//! The simulation thread and what it shares with the connections.
//!
//! One thread owns the [`Simulation`]; connections send it validated commands through a channel
//! and read the latest published frame from [`Shared`]. Publishing replaces the previous frame,
//! so a slow page skips frames instead of slowing the simulation, and every tab sees the same
//! simulation.

use crate::protocol::{error_message, notice_message, refused_message, Command};
use crate::scene_view::{self, SourceKind, View};
use canape::Simulation;
use canape_base::gui::mouse::MouseSpringForceField;
use canape_core::scene::{AnyComponent, ComponentId, EditError, NodeId, Slot};
use canape_core::state::VecId;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use tungstenite::{Bytes, Utf8Bytes};

/// Why an edit of the root node's Data from the viewer was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NodeEditError {
    #[error("gravity needs three numbers")]
    GravityNotThree,
    #[error("dt must be a number")]
    DtNotNumber,
    #[error("node Data '{data}' cannot be edited")]
    NotEditable { data: String },
    #[error(transparent)]
    Edit(#[from] EditError),
}

/// The latest published picture and texts every connection sends.
#[derive(Clone, Debug, Default)]
pub struct Latest {
    pub seq: u64,
    pub frame: Bytes,
    pub status: Utf8Bytes,
    pub topology: Utf8Bytes,
    pub topo_version: u64,
    pub hello: Utf8Bytes,
}

/// State shared between the simulation thread and the connections.
#[derive(Default)]
pub struct Shared {
    pub latest: Mutex<Latest>,
    pub cond: Condvar,
    clients: Mutex<BTreeMap<u64, Sender<Utf8Bytes>>>,
    next_client: AtomicU64,
    pub stop: AtomicBool,
}

impl Shared {
    /// Register a connection; messages addressed to it (or broadcast) arrive on the receiver.
    pub fn register(&self) -> (u64, Receiver<Utf8Bytes>) {
        let id = self.next_client.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = std::sync::mpsc::channel();
        self.clients.lock().expect("clients").insert(id, tx);
        (id, rx)
    }
    pub fn unregister(&self, id: u64) {
        self.clients.lock().expect("clients").remove(&id);
    }
    pub fn client_count(&self) -> usize {
        self.clients.lock().expect("clients").len()
    }
    fn send_to(&self, id: u64, msg: String) {
        if let Some(tx) = self.clients.lock().expect("clients").get(&id) {
            let _ = tx.send(msg.into());
        }
    }
    fn broadcast(&self, msg: String) {
        let msg: Utf8Bytes = msg.into();
        for tx in self.clients.lock().expect("clients").values() {
            let _ = tx.send(msg.clone());
        }
    }
}

/// The current mouse grab.
#[derive(Clone, Copy, Debug)]
struct Grab {
    source: usize,
    vertex: usize,
    depth: f64,
    spring: ComponentId,
    target: [f64; 3],
}

/// Owner of the simulation (runs on its own thread).
pub struct Session {
    sim: Simulation,
    view: View,
    initial: canape::Snapshot,
    /// Mouse spring per grabbable state slot.
    springs: BTreeMap<usize, ComponentId>,
    grab: Option<Grab>,
    stiffness: f64,
    playing: bool,
    realtime: bool,
    steps: u64,
    seq: u64,
    topo_version: u64,
    scene_name: String,
    /// (wall time, simulated time) when real-time pacing started.
    anchor: Option<(Instant, f64)>,
    /// Steps and phase totals at the start of the current measurement window.
    window: (Instant, u64, canape::PhaseTimes),
    rates: serde_json::Value,
    halted: Option<String>,
    /// The Data number plotted over time: component, Data name, index into its values.
    watch: Option<(ComponentId, String, usize)>,
}

impl Session {
    /// Prepare a simulation for viewing: add a mouse spring to every simulated state.
    pub fn new(mut sim: Simulation, scene_name: String, paused: bool) -> Session {
        let mut springs = BTreeMap::new();
        let states: Vec<(usize, NodeId)> = sim
            .scene
            .component_ids()
            .map(|c| sim.scene.info(c))
            .filter_map(|c| match c.slot {
                Slot::State(k) => Some((k, c.node)),
                _ => None,
            })
            .collect();
        for (slot, node) in states {
            let is3 = sim.scene.states[slot]
                .as_ref()
                .is_some_and(|s| s.dof.coord_size() == 3);
            if !is3 || !sim.is_simulated_state(slot) {
                continue;
            }
            let spring = Box::new(MouseSpringForceField::new());
            // the node comes from the scene just listed: it is live
            if let Ok((id, _)) =
                sim.add_component(node, "mouseSpring", AnyComponent::ForceField(spring))
            {
                springs.insert(slot, id);
            }
        }
        let view = scene_view::build_view(&sim);
        let initial = sim.snapshot();
        let now = Instant::now();
        let times = sim.times.clone();
        Session {
            sim,
            view,
            initial,
            springs,
            grab: None,
            stiffness: 1000.0,
            playing: !paused,
            realtime: false,
            steps: 0,
            seq: 0,
            topo_version: 1,
            scene_name,
            anchor: None,
            window: (now, 0, times),
            rates: json!({}),
            halted: None,
            watch: None,
        }
    }

    fn hello(&self) -> String {
        let diags: Vec<String> = self.sim.diagnostics.iter().map(|d| d.to_string()).collect();
        json!({
            "type": "hello", "scene": self.scene_name, "tree": scene_view::tree(&self.sim.scene),
            "diagnostics": diags, "version": env!("CARGO_PKG_VERSION"),
            "bounds": scene_view::bounds(&self.sim, &self.view),
        })
        .to_string()
    }

    fn status(&self) -> String {
        let grab = self.grab.map(|g| {
            let x = scene_view::source_positions(&self.sim, &self.view.sources[g.source]);
            let p = &x[3 * g.vertex..3 * g.vertex + 3];
            json!({"source": g.source, "vertex": g.vertex, "point": p, "target": g.target})
        });
        json!({
            "type": "status", "time": self.sim.time(), "steps": self.steps, "playing": self.playing,
            "dt": self.sim.dt, "realtime": self.realtime, "rates": self.rates, "grab": grab,
            "stiffness": self.stiffness, "halted": self.halted,
            "iterations": self.sim.last_solve.iter().map(|s| s.iterations).collect::<Vec<_>>(),
            "watch": self.watched(),
        })
        .to_string()
    }

    /// The plotted number now: label and value (null once the Data or the index is gone).
    fn watched(&self) -> serde_json::Value {
        let Some((id, data, index)) = &self.watch else {
            return serde_json::Value::Null;
        };
        let label = format!("{}.{data}[{index}]", self.sim.scene.component_label(*id));
        let value = scene_view::data_numbers(&self.sim, *id, data)
            .and_then(|v| v.get(*index).copied())
            .filter(|v| v.is_finite());
        json!({"label": label, "value": value})
    }

    /// Publish the current positions and status.
    fn publish(&mut self, shared: &Shared, with_hello: bool) {
        self.seq += 1;
        let frame = scene_view::encode_frame(&self.sim, &self.view, self.seq as u32);
        let status = self.status();
        let mut l = shared.latest.lock().expect("latest");
        l.seq = self.seq;
        l.frame = Bytes::from(frame);
        l.status = status.into();
        if l.topo_version != self.topo_version || l.topology.is_empty() {
            l.topology = scene_view::topology_message(&self.view, self.topo_version).into();
            l.topo_version = self.topo_version;
        }
        if with_hello || l.hello.is_empty() {
            l.hello = self.hello().into();
        }
        drop(l);
        shared.cond.notify_all();
    }

    fn measure(&mut self) {
        let (t0, s0, ref p0) = self.window;
        let dt = t0.elapsed();
        if dt < Duration::from_millis(250) {
            return;
        }
        let n = self.steps - s0;
        let p = &self.sim.times;
        let per = |a: Duration, b: Duration| {
            if n == 0 {
                0.0
            } else {
                a.saturating_sub(b).as_secs_f64() * 1e3 / n as f64
            }
        };
        self.rates = json!({
            "steps_per_s": n as f64 / dt.as_secs_f64(),
            "rt_factor": n as f64 * self.sim.dt / dt.as_secs_f64(),
            "ms_per_step": per(p.total, p0.total),
            "phases": [
                ["force", per(p.force, p0.force)],
                ["assembly", per(p.assembly, p0.assembly)],
                ["linear solve", per(p.solve, p0.solve)],
                ["projection", per(p.projection, p0.projection)],
                ["other", per(p.other, p0.other)],
            ],
        });
        self.window = (Instant::now(), self.steps, p.clone());
    }

    fn step(&mut self, shared: &Shared) {
        if self.halted.is_some() {
            return;
        }
        let sim = &mut self.sim;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.step()));
        self.steps += 1;
        if r.is_err() {
            let msg = "the simulation stopped on an internal error during a step (a bug in Canapé: please report it with the scene); press Reset".to_string();
            self.halted = Some(msg.clone());
            self.playing = false;
            shared.broadcast(error_message(&msg));
            return;
        }
        if let Some(label) = self.sim.find_non_finite() {
            let msg = format!("non-finite positions (NaN or infinity) in {label} at t = {}: paused; press Reset or change the parameters", self.sim.time());
            self.halted = Some(msg.clone());
            self.playing = false;
            shared.broadcast(error_message(&msg));
        }
    }

    fn set_spring(&mut self, g: &Grab, index: i64) -> Result<(), EditError> {
        let t = format!("{} {} {}", g.target[0], g.target[1], g.target[2]);
        let k = self.stiffness.to_string();
        let i = index.to_string();
        self.sim
            .set_data_light(
                g.spring,
                &[("index", &i), ("target", &t), ("stiffness", &k)],
            )
            .map(|_| ())
    }

    /// Apply one command; replies go to `client`, changes are broadcast.
    fn handle(&mut self, shared: &Shared, client: u64, cmd: Command) -> bool {
        let mut changed = true;
        match cmd {
            Command::Play => {
                if let Some(h) = &self.halted {
                    shared.send_to(client, error_message(h));
                } else {
                    self.playing = true;
                    self.anchor = None;
                }
            }
            Command::Pause => self.playing = false,
            Command::Step => {
                self.playing = false;
                self.step(shared);
            }
            Command::Reset => {
                self.sim.restore(&self.initial);
                if let Some(g) = self.grab.take() {
                    let _ = self.set_spring(&g, -1);
                }
                self.halted = None;
                self.steps = 0;
                self.anchor = None;
            }
            Command::SetDt(dt) => {
                if let Err(e) = self.sim.set_dt(dt) {
                    shared.send_to(client, error_message(&e.to_string()));
                }
                self.anchor = None;
            }
            Command::SetRealtime(on) => {
                self.realtime = on;
                self.anchor = None;
            }
            Command::Select(c) => {
                changed = false;
                let data = self
                    .sim
                    .scene
                    .component_at(c as usize)
                    .and_then(|id| scene_view::component_data(&self.sim, id));
                match data {
                    Some(d) => shared.send_to(client, d.to_string()),
                    None => shared.send_to(client, error_message(&format!("no component #{c}"))),
                }
            }
            Command::SelectNode(n) => {
                changed = false;
                let data = self
                    .sim
                    .scene
                    .node_at(n as usize)
                    .and_then(|id| scene_view::node_data(&self.sim, id));
                match data {
                    Some(d) => shared.send_to(client, d.to_string()),
                    None => shared.send_to(client, error_message(&format!("no node #{n}"))),
                }
            }
            Command::SetData {
                component,
                data,
                value,
            } => {
                let Some(id) = self.sim.scene.component_at(component as usize) else {
                    shared.send_to(client, error_message(&format!("no component #{component}")));
                    return false;
                };
                // an edited engine recomputes now: the viewer shows its outputs at once,
                // even while paused (SOFA's engines update when read)
                match self.sim.set_data(id, &data, &value).map(|mut d| {
                    d.extend(self.sim.update_engines());
                    d
                }) {
                    Ok(diags) => {
                        for d in diags {
                            shared.send_to(client, notice_message(&d.to_string()));
                        }
                        let label = self.sim.scene.component_label(id);
                        shared.broadcast(notice_message(&format!("{label}: {data} = {value}")));
                        shared.broadcast(
                            json!({"type": "data_changed", "component": component}).to_string(),
                        );
                        if let Some(d) = scene_view::component_data(&self.sim, id) {
                            shared.send_to(client, d.to_string());
                        }
                        if self.sim.scene.info(id).role
                            == canape_core::component::Role::ProjectiveConstraint
                        {
                            self.view = scene_view::build_view(&self.sim);
                            self.topo_version += 1;
                        }
                    }
                    Err(e) => {
                        let why = format!("{data}: {e}");
                        shared.send_to(client, error_message(&why));
                        shared
                            .send_to(client, refused_message("component", component, &data, &why));
                        // the panel shows the value in force again
                        if let Some(d) = scene_view::component_data(&self.sim, id) {
                            shared.send_to(client, d.to_string());
                        }
                    }
                }
            }
            Command::SetNodeData { node, data, value } => {
                if node != 0 {
                    shared.send_to(client, error_message("only the root node's gravity and dt are used (as in SOFA): edit them on the root"));
                    return false;
                }
                let r = match data.as_str() {
                    "gravity" => {
                        let v: Vec<f64> = value
                            .split_whitespace()
                            .filter_map(|t| t.parse().ok())
                            .collect();
                        if v.len() != 3 || value.split_whitespace().count() != 3 {
                            Err(NodeEditError::GravityNotThree)
                        } else {
                            self.sim
                                .set_gravity(canape_types::Vec3::new(v[0], v[1], v[2]))
                                .map_err(NodeEditError::from)
                        }
                    }
                    "dt" => match value.trim().parse::<f64>() {
                        Ok(dt) => self.sim.set_dt(dt).map_err(NodeEditError::from),
                        Err(_) => Err(NodeEditError::DtNotNumber),
                    },
                    other => Err(NodeEditError::NotEditable {
                        data: other.to_string(),
                    }),
                };
                match r {
                    Ok(()) => {
                        shared.broadcast(notice_message(&format!("root: {data} = {value}")));
                        if let Some(d) = scene_view::node_data(&self.sim, self.sim.scene.root()) {
                            shared.send_to(client, d.to_string());
                        }
                    }
                    Err(e) => {
                        let e = e.to_string();
                        shared.send_to(client, error_message(&e));
                        shared.send_to(client, refused_message("node", node, &data, &e));
                        if let Some(d) = scene_view::node_data(&self.sim, self.sim.scene.root()) {
                            shared.send_to(client, d.to_string());
                        }
                    }
                }
            }
            Command::Grab { origin, dir } => {
                if let Some(g) = self.grab.take() {
                    let _ = self.set_spring(&g, -1);
                }
                match scene_view::pick(&self.sim, &self.view, origin, dir) {
                    Some((source, vertex, depth)) => {
                        let SourceKind::State(slot) = self.view.sources[source].kind else {
                            return false;
                        };
                        let Some(&spring) = self.springs.get(&slot) else {
                            return false;
                        };
                        let x = self.sim.scene.states[slot]
                            .as_ref()
                            .map(|s| s.vec(VecId::POSITION))
                            .unwrap_or(&[]);
                        let target = [x[3 * vertex], x[3 * vertex + 1], x[3 * vertex + 2]];
                        let g = Grab {
                            source,
                            vertex,
                            depth,
                            spring,
                            target,
                        };
                        match self.set_spring(&g, vertex as i64) {
                            Ok(()) => self.grab = Some(g),
                            Err(e) => shared.send_to(client, error_message(&e.to_string())),
                        }
                    }
                    None => {
                        shared.send_to(client, notice_message("nothing to grab under the cursor"))
                    }
                }
            }
            Command::Drag { origin, dir } => {
                if let Some(mut g) = self.grab {
                    g.target = [
                        origin[0] + g.depth * dir[0],
                        origin[1] + g.depth * dir[1],
                        origin[2] + g.depth * dir[2],
                    ];
                    match self.set_spring(&g, g.vertex as i64) {
                        Ok(()) => self.grab = Some(g),
                        Err(e) => shared.send_to(client, error_message(&e.to_string())),
                    }
                } else {
                    changed = false;
                }
            }
            Command::Release => {
                if let Some(g) = self.grab.take() {
                    let _ = self.set_spring(&g, -1);
                }
            }
            Command::Key { key, down } => {
                let event = if down {
                    canape::core::component::Event::KeyPressed(key)
                } else {
                    canape::core::component::Event::KeyReleased(key)
                };
                self.sim.send(&event);
            }
            Command::Watch {
                component,
                data,
                index,
            } => match self.sim.scene.component_at(component as usize) {
                Some(id) if scene_view::data_numbers(&self.sim, id, &data).is_some() => {
                    self.watch = Some((id, data, index as usize));
                    changed = true;
                }
                _ => shared.send_to(
                    client,
                    error_message(&format!(
                        "no numeric Data '{data}' on component #{component}"
                    )),
                ),
            },
            Command::Unwatch => {
                self.watch = None;
                changed = true;
            }
            Command::SetGrabStiffness(k) => {
                self.stiffness = k;
                if let Some(g) = self.grab {
                    if let Err(e) = self.set_spring(&g, g.vertex as i64) {
                        shared.send_to(client, error_message(&e.to_string()));
                    }
                }
            }
        }
        changed
    }

    /// Run until `shared.stop` is set.
    pub fn run(mut self, shared: Arc<Shared>, commands: Receiver<(u64, Command)>) {
        self.publish(&shared, true);
        let mut last_publish = Instant::now();
        let mut dirty = false;
        // nothing runs before the first page connects (no CPU burnt, no transient missed)
        let mut page_seen = false;
        while !shared.stop.load(Ordering::Relaxed) {
            if !page_seen {
                if shared.client_count() == 0 {
                    std::thread::sleep(Duration::from_millis(20));
                    // commands may still come (tests drive the session without a page)
                    if let Ok((client, cmd)) = commands.try_recv() {
                        dirty |= self.handle(&shared, client, cmd);
                    }
                    continue;
                }
                page_seen = true;
            }
            // wait for commands while paused; poll while playing
            let wait = if self.playing {
                Duration::ZERO
            } else {
                Duration::from_millis(30)
            };
            let mut next = match commands.recv_timeout(wait) {
                Ok(c) => Some(c),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            let mut handled = 0;
            while let Some((client, cmd)) = next.take() {
                dirty |= self.handle(&shared, client, cmd);
                handled += 1;
                if handled < 256 {
                    next = commands.try_recv().ok();
                }
            }
            if self.playing {
                if self.realtime {
                    let (w0, t0) = *self.anchor.get_or_insert((Instant::now(), self.sim.time()));
                    let ahead = self.sim.time() - t0 - w0.elapsed().as_secs_f64();
                    if ahead > 0.0 {
                        std::thread::sleep(Duration::from_secs_f64(ahead.min(0.05)));
                        continue;
                    }
                }
                self.step(&shared);
                dirty = true;
            }
            self.measure();
            if dirty && (last_publish.elapsed() >= Duration::from_millis(16) || !self.playing) {
                self.publish(&shared, false);
                last_publish = Instant::now();
                dirty = false;
            } else if !self.playing && last_publish.elapsed() >= Duration::from_millis(500) {
                // keep rates fresh on a paused page
                self.publish(&shared, false);
                last_publish = Instant::now();
            }
        }
    }
}
