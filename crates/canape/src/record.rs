//! Recording states in SOFA's WriteState format: which MechanicalObjects (SOFA's regression
//! rules), when (T=0 after init, and at the start of the last step, or every step), and where
//! (`DIR/<k>_<name>_mstate.txt.gz`).

use crate::Simulation;
use canape_core::scene::ComponentId;
use canape_core::state::VecId;
use canape_io::regress::compared_states;
use canape_io::state_io::{file_name_part, write_state_file, Frame};
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

/// Records the states SOFA's regression test would record.
pub struct Recorder {
    pub recordings: Vec<Recording>,
    pub with_velocity: bool,
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
        }
    }

    /// Record the current state of every selected object.
    pub fn capture(&mut self, sim: &Simulation) {
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

    /// Write `DIR/<k>_<name>_mstate.txt.gz` files.
    pub fn write(&self, dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
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
