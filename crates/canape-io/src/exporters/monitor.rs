//! Monitor: gnuplot files of chosen points' positions, velocities and forces.

use crate::state_io::{create_replacing, fmt_g6};
use canape_core::component::{Controller, ControllerError, Event, Reaction, SceneControl};
use canape_core::data::{base_fields, ChangedData, DataKind, DataTable, Flag, Ints, Real, Text};
use canape_core::scene::{ComponentId, InitContext, Scene};
use canape_core::state::VecId;
use std::io::Write as _;
use std::path::PathBuf;

/// The help of the display options, which runSofa draws.
const DISPLAY: &str = "display option (drawn by SOFA's GUI; not drawn here)";

canape_core::data_schema! {
    /// Monitor's own Data (after the base Data).
    pub struct MonitorData {
        indices: Ints = ("indices", DataKind::Ints(1), "", "MechanicalObject points indices to monitor"),
        export_positions: Flag = ("ExportPositions", DataKind::Bool, "0", "export Monitored positions as gnuplot file"),
        export_velocities: Flag = ("ExportVelocities", DataKind::Bool, "0", "export Monitored velocities as gnuplot file"),
        export_forces: Flag = ("ExportForces", DataKind::Bool, "0", "export Monitored forces as gnuplot file"),
        file_name: Text = ("fileName", DataKind::Str, "", "name of the plot files to be generated (default: ./ and the component's name)"),
        // display options (drawn by runSofa; accepted here)
        show_positions: Flag = ("showPositions", DataKind::Bool, "0", DISPLAY),
        show_velocities: Flag = ("showVelocities", DataKind::Bool, "0", DISPLAY),
        show_forces: Flag = ("showForces", DataKind::Bool, "0", DISPLAY),
        show_trajectories: Flag = ("showTrajectories", DataKind::Bool, "0", DISPLAY),
        positions_color: Text = ("PositionsColor", DataKind::Str, "1 1 0 1", DISPLAY),
        velocities_color: Text = ("VelocitiesColor", DataKind::Str, "1 1 0 1", DISPLAY),
        forces_color: Text = ("ForcesColor", DataKind::Str, "1 1 0 1", DISPLAY),
        trajectories_color: Text = ("TrajectoriesColor", DataKind::Str, "1 1 0 1", DISPLAY),
        show_min_threshold: Real = ("showMinThreshold", DataKind::Real, "0.01", DISPLAY),
        trajectories_precision: Real = ("TrajectoriesPrecision", DataKind::Real, "0.1", DISPLAY),
        size_factor: Real = ("sizeFactor", DataKind::Real, "1", DISPLAY),
    }
}

/// SOFA's Monitor: after every step, one line per exported vector (`fileName_x.txt`,
/// `_v.txt`, `_f.txt`): the time, then each chosen point's values, tab-separated.
pub struct Monitor {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: MonitorData,
    state: Option<ComponentId>,
    files: Vec<(VecId, std::fs::File)>,
}

/// A clone does not write: it would share the original's files.
impl Clone for Monitor {
    fn clone(&self) -> Self {
        Monitor {
            data: self.data.clone(),
            d: self.d,
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
        let (data, d) = MonitorData::declare(base_fields(DataTable::new()));
        Monitor {
            data,
            d,
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
        for &i in self.data.get(self.d.indices) {
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

impl Monitor {
    /// The display options are not used here: an edit of those only is taken as it is, the
    /// files going on; any other edit re-runs init (the files made afresh).
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        let display = [
            d.show_positions.index(),
            d.show_velocities.index(),
            d.show_forces.index(),
            d.show_trajectories.index(),
            d.positions_color.index(),
            d.velocities_color.index(),
            d.forces_color.index(),
            d.trajectories_color.index(),
            d.show_min_threshold.index(),
            d.trajectories_precision.index(),
            d.size_factor.index(),
        ];
        if changed.only(&display) {
            Reaction::Updated
        } else {
            Reaction::Reinit
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.files.clear();
        self.state = ctx.scene.context_state(ctx.node);
        let Some(st) = self.state.and_then(|s| ctx.scene.state(s)) else {
            ctx.error("no MechanicalObject in the context: nothing is monitored");
            return;
        };
        let n = st.size();
        let idx = self.data.get(self.d.indices).to_vec();
        if let Some(bad) = idx.iter().find(|&&i| i as usize >= n) {
            ctx.error(format!(
                "indices: point {bad} is not in the state ({n} points): nothing is monitored"
            ));
            self.state = None;
            return;
        }
        // SOFA's Monitor: without a fileName, ./ and the component's name
        let base = {
            let f = self.data.get(self.d.file_name).trim().to_string();
            if f.is_empty() {
                format!("./{}", ctx.scene.info(ctx.id).name)
            } else {
                f
            }
        };
        let list: String = idx.iter().map(|i| format!("{i} ")).collect();
        let d = self.d;
        for (flag, suffix, word, v) in [
            (d.export_positions, "_x.txt", "positions", VecId::POSITION),
            (d.export_velocities, "_v.txt", "velocities", VecId::VELOCITY),
            (d.export_forces, "_f.txt", "forces", VecId::FORCE),
        ] {
            if !self.data.get(flag) {
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

canape_core::impl_component!(Monitor, "Monitor", init, data_changed);

impl Controller for Monitor {
    fn on_event(
        &mut self,
        event: &Event,
        scene: &mut dyn SceneControl,
    ) -> Result<(), ControllerError> {
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
                    .map_err(|e| ControllerError::Write {
                        context: "Monitor: cannot write: ",
                        source: Box::new(e),
                        then: "",
                    })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{edit, init_in, same_text, temp_dir, Control};
    use canape_core::scene::AnyComponent;
    use canape_core::state::MechanicalObject;

    /// A scene with a moving three-point state and a Monitor of it writing `<base>_x.txt` and
    /// `<base>_v.txt`, initialised there with `attrs`.
    fn monitor(base: &std::path::Path, attrs: &[(&str, &str)]) -> (Scene, ComponentId, Monitor) {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut mo = MechanicalObject::new(canape_types::DofType::Vec3);
        mo.resize(3);
        mo.vec_mut(VecId::VELOCITY)
            .copy_from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        let id = scene.add_component(root, "dofs", AnyComponent::State(mo), None);
        let mut m = Monitor::new();
        let base = base.display().to_string();
        let given = [
            ("fileName", &*base),
            ("indices", "0 2"),
            ("ExportPositions", "1"),
            ("ExportVelocities", "1"),
        ];
        init_in(&mut m, &scene, root, id, &[&given[..], attrs].concat());
        (scene, id, m)
    }

    /// Three steps' AnimateEnd events, the state moving between them.
    fn run(scene: &mut Scene, id: ComponentId, m: &mut Monitor) {
        for step in 1..4 {
            scene.time = step as f64 * 0.01;
            for x in scene.state_mut(id).unwrap().vec_mut(VecId::POSITION) {
                *x += 0.25;
            }
            m.on_event(&Event::AnimateEnd { dt: 0.01 }, &mut Control(scene))
                .unwrap();
        }
    }

    #[test]
    fn edits_update_in_place_display_options() {
        let dir = temp_dir("monitor-edit");
        let edits = [
            ("showTrajectories", "1"),
            ("TrajectoriesColor", "0 1 0 1"),
            ("sizeFactor", "3"),
        ];
        let (mut s1, id1, mut a) = monitor(&dir.join("edited"), &[]);
        assert_eq!(edit(&mut a, &edits), Reaction::Updated);
        run(&mut s1, id1, &mut a);
        let (mut s2, id2, mut b) = monitor(&dir.join("fresh"), &edits);
        run(&mut s2, id2, &mut b);
        drop((a, b));
        for suffix in ["_x.txt", "_v.txt"] {
            let ta = same_text(
                &dir.join(format!("edited{suffix}")),
                &dir.join(format!("fresh{suffix}")),
            );
            assert_eq!(ta.lines().count(), 2 + 3, "{ta}");
        }
        // any other edit re-runs init (the files made afresh)
        let (_, _, mut c) = monitor(&dir.join("other"), &[]);
        assert_eq!(
            edit(&mut c, &[("indices", "1"), ("sizeFactor", "2")]),
            Reaction::Reinit
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
