//! Monitor: gnuplot files of chosen points' positions, velocities and forces.

use crate::state_io::{create_replacing, fmt_g6};
use canape_core::component::{Component, Controller, Event, SceneControl};
use canape_core::data::{base_fields, DataKind, DataTable};
use canape_core::scene::{ComponentId, InitContext, Scene};
use canape_core::state::VecId;
use std::io::Write as _;
use std::path::PathBuf;

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
