//! The collision stage of a step: the pipeline run on the current positions, the responses it
//! added joined to their solver groups, and the responses no group integrates applied as
//! explicit external forces (SOFA's behaviour between objects of different solvers).

use super::Simulation;
use canape_core::diag::{Diagnostic, Diagnostics};
use canape_core::scene::Slot;
use canape_core::state::VecId;

impl Simulation {
    /// The collision stage: the pipeline detects contacts from the current positions and
    /// updates its response force fields; the solver groups take the responses it added or
    /// removed.
    pub(super) fn collide(&mut self) {
        let Some(i) = self.pipeline else { return };
        let Some(mut p) = self.scene.passives[i].take() else {
            return;
        };
        let changes = match p.collision_pipeline() {
            Some(pipe) => pipe.collide(&mut self.scene),
            None => Default::default(),
        };
        self.scene.passives[i] = Some(p);
        for m in changes.messages {
            if !self.collision_reported.contains(&m) {
                self.diagnostics.push(Diagnostic::warning(m.clone()));
                self.collision_reported.push(m);
            }
        }
        if !changes.added.is_empty() || !changes.removed.is_empty() {
            let mut diags = Diagnostics::default();
            for &id in &changes.added {
                crate::init::init_component(&mut self.scene, id, &mut diags, &mut Vec::new());
            }
            self.diagnostics.extend(diags);
            let mut slots = changes.removed;
            slots.extend(changes.added.iter().map(|c| self.scene.info(*c).slot));
            self.structure_changed(&slots);
        }
        self.explicit_responses();
    }

    /// Contact responses that no solver group integrates (two objects under different
    /// solvers: the response sits above both) act as SOFA makes them act: their force at the
    /// start of the step is added to each object's external force, constant during the
    /// integration (no stiffness coupling).
    fn explicit_responses(&mut self) {
        let scene = &mut self.scene;
        let n = scene.force_fields.len();
        let mut in_group = std::mem::take(&mut self.scratch_flags);
        in_group.clear();
        in_group.resize(n, false);
        for g in &self.groups {
            for e in &g.forces {
                if let crate::group::ForceEntry::Pair { ff, .. } = e {
                    in_group[*ff] = true;
                }
            }
        }
        for i in 0..n {
            if in_group[i] {
                continue;
            }
            let Some(ff) = scene.force_fields[i].as_mut() else {
                continue;
            };
            if ff
                .contact_response()
                .is_none_or(|r| r.contacts().is_empty())
            {
                continue;
            }
            let Some(it) = ff.interaction() else { continue };
            let sides = [it.first, it.second].map(|c| match scene.info(c).slot {
                Slot::State(k) => Some(k),
                _ => None,
            });
            let [Some(a), Some(b)] = sides else { continue };
            let (Some(sa), Some(sb)) = (scene.states[a].as_ref(), scene.states[b].as_ref()) else {
                continue;
            };
            let [x, v, f] = &mut self.explicit_buf;
            x.clear();
            x.extend_from_slice(sa.vec(VecId::POSITION));
            x.extend_from_slice(sb.vec(VecId::POSITION));
            v.clear();
            v.extend_from_slice(sa.vec(VecId::VELOCITY));
            v.extend_from_slice(sb.vec(VecId::VELOCITY));
            let la = sa.deriv_len();
            f.clear();
            f.resize(la + sb.deriv_len(), 0.0);
            scene.force_fields[i].as_mut().unwrap().add_force(x, v, f);
            for (k, part) in [(a, &f[..la]), (b, &f[la..])] {
                let st = scene.states[k].as_mut().unwrap();
                let ext = st.vec_mut(VecId::EXTERNAL_FORCE);
                for (e, v) in ext.iter_mut().zip(part) {
                    *e += v;
                }
            }
        }
        self.scratch_flags = in_group;
    }
}
