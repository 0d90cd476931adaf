//! Editing a running simulation's Data (the API, the viewer, controllers) and SOFA's lazy
//! engines.
//!
//! An edit parses the new values into the component's table (each write bumps the field's
//! version), then the component is told which fields changed
//! ([`Component::data_changed`](canape_core::component::Component::data_changed)): it updates
//! in place (a force field recomputes its element stiffnesses from a new Young's modulus), refuses
//! (the old values are put back), or asks to be re-initialised from its Data (SOFA's `reinit`).
//! An edit that changes no value does nothing. The linear solvers are then told the matrix may
//! have changed: direct solvers refactor numerically and keep their symbolic analysis while the
//! pattern is the same, and the groups keep their assembly patterns.
//!
//! Engines are lazy, as SOFA's DataEngine: an edit of an engine's input only marks it dirty; the
//! dirty engines recompute at the next update point — before a step's first stage, after the
//! controllers handled an event, or when asked ([`Simulation::update_engines`]) — once however
//! many edits came before, and their new outputs reach what links to them then.

use super::{is_editable_role, Simulation};
use canape_core::component::{Reaction, Role};
use canape_core::diag::{Diagnostic, Diagnostics};
use canape_core::scene::{ComponentId, EditError};

impl Simulation {
    /// Set one Data of a component from text; the component reacts to the change (in place, or
    /// re-initialised from its Data as SOFA's `reinit`) and the linear solvers are told the
    /// matrix may have changed (numeric factorizations are redone, symbolic ones and the groups'
    /// assembly patterns kept while the pattern is the same). An engine's input only marks it
    /// dirty: it recomputes at the next update point (see the module doc). On a bad value or a
    /// refusal the previous value is put back and the error returned.
    pub fn set_data(
        &mut self,
        id: ComponentId,
        name: &str,
        text: &str,
    ) -> Result<Vec<Diagnostic>, EditError> {
        self.edit_data(id, &[(name, text)], true)
    }

    /// Set several Data of a component at once, then let it react once (Data that only make
    /// sense together, as a spring list's indices and stiffnesses); as [`Simulation::set_data`]
    /// otherwise.
    pub fn set_data_many(
        &mut self,
        id: ComponentId,
        values: &[(&str, &str)],
    ) -> Result<Vec<Diagnostic>, EditError> {
        self.edit_data(id, values, true)
    }

    /// Set several Data of a component and let it react, without telling the linear solvers:
    /// for interaction components whose Data change at every mouse move.
    pub fn set_data_light(
        &mut self,
        id: ComponentId,
        values: &[(&str, &str)],
    ) -> Result<Vec<Diagnostic>, EditError> {
        self.edit_data(id, values, false)
    }

    /// How many times engines were recomputed because their inputs were edited.
    pub fn engine_updates(&self) -> u64 {
        self.engine_updates
    }

    /// How many edits re-initialised their component (the others were updated in place by the
    /// component, or changed nothing).
    pub fn edit_reinits(&self) -> u64 {
        self.edit_reinits
    }

    /// Whether engines wait for the next update point with edited inputs.
    pub fn engines_dirty(&self) -> bool {
        !self.dirty_engines.is_empty()
    }

    fn edit_data(
        &mut self,
        id: ComponentId,
        values: &[(&str, &str)],
        solvers: bool,
    ) -> Result<Vec<Diagnostic>, EditError> {
        self.scene.check_component(id)?;
        let info = self.scene.info(id);
        if !is_editable_role(info.role) && self.readers_of(id).is_empty() {
            return Err(EditError::NotEditable {
                class: info.class,
                role: info.role,
            });
        }
        let role = info.role;
        let label = self.scene.component_label(id);
        let c = self
            .scene
            .component_mut(id)
            .ok_or(EditError::Busy { component: label })?;
        let before = c.data().versions();
        let mut old = Vec::new();
        let mut refused = None;
        for (name, text) in values {
            let Some(field) = c.data().field(name) else {
                let names = c.data().all_names();
                refused = Some(EditError::NoData {
                    class: c.class_name(),
                    name: name.to_string(),
                    suggestions: canape_core::diag::closest(name, names.iter().copied(), 3),
                });
                break;
            };
            if field.output {
                refused = Some(EditError::Output(name.to_string()));
                break;
            }
            let prev = (field.value.clone(), field.is_set);
            if let Err(reason) = c.data_mut().set_str(name, text) {
                refused = Some(EditError::BadValue {
                    name: name.to_string(),
                    reason,
                });
                break;
            }
            old.push((*name, prev));
        }
        if let Some(e) = refused {
            put_back(c.data_mut(), old);
            return Err(e);
        }
        let changed = c.data().changed_since(&before);
        if changed.is_empty() {
            return Ok(Vec::new());
        }
        if role == Role::Engine {
            if !self.dirty_engines.contains(&id) {
                self.dirty_engines.push(id);
            }
            return Ok(Vec::new());
        }
        let mut diags = Diagnostics::default();
        match c.data_changed(&changed) {
            Reaction::Updated => {}
            Reaction::Refused(reasons) => {
                put_back(c.data_mut(), old);
                return Err(EditError::Refused {
                    component: self.scene.component_label(id),
                    reasons,
                });
            }
            Reaction::Reinit => {
                self.edit_reinits += 1;
                if let Err(reason) = crate::init::reinit_component(&mut self.scene, id, &mut diags)
                {
                    return Err(EditError::Refused {
                        component: self.scene.component_label(id),
                        reasons: vec![reason.to_string()],
                    });
                }
                if diags.has_errors() {
                    if let Some(c) = self.scene.component_mut(id) {
                        put_back(c.data_mut(), old);
                    }
                    let mut back = Diagnostics::default();
                    let _ = crate::init::reinit_component(&mut self.scene, id, &mut back);
                    return Err(EditError::Refused {
                        component: self.scene.component_label(id),
                        reasons: diags.iter().map(|d| d.message.clone()).collect(),
                    });
                }
            }
        }
        self.reinit_readers_of(id, &mut diags);
        self.after_edit(solvers, role == Role::ProjectiveConstraint);
        Ok(diags.iter().cloned().collect())
    }

    /// The components that copied Data of `source` at their init (`init_sources`): a
    /// component they read is editable whatever its role, and its edits re-initialise them.
    fn readers_of(&self, source: ComponentId) -> Vec<ComponentId> {
        use canape_core::scene::Slot;
        self.scene
            .component_ids()
            .filter(|&c| c != source)
            .filter(|&c| {
                let sources = match self.scene.info(c).slot {
                    Slot::Ode(i) => self.scene.odes[i].as_ref().map(|o| o.init_sources()),
                    Slot::Passive(i) => self.scene.passives[i].as_ref().map(|p| p.init_sources()),
                    _ => None,
                };
                sources.is_some_and(|s| s.contains(&source))
            })
            .collect()
    }

    /// After an accepted edit of `edited`: the components that copied its Data at their init
    /// (`OdeSolver::init_sources`, `Passive::init_sources`: StaticSolver and BDFOdeSolver
    /// their NewtonRaphsonSolver's parameters, a collision pipeline its intersection method
    /// and contact manager) are re-initialised to read them again.
    fn reinit_readers_of(&mut self, edited: ComponentId, diags: &mut Diagnostics) {
        let readers = self.readers_of(edited);
        for r in readers {
            if let Err(reason) = crate::init::reinit_component(&mut self.scene, r, diags) {
                diags.push(Diagnostic::error(reason.to_string()).on(self.scene.component_label(r)));
            }
        }
    }

    /// What every accepted edit tells the solvers: the matrix may have changed; projected DOFs
    /// may have changed.
    fn after_edit(&mut self, solvers: bool, projective: bool) {
        if solvers {
            for l in self.scene.linears.iter_mut().flatten() {
                l.matrix_changed();
            }
        }
        if projective {
            for w in &mut self.works {
                w.constraints_changed();
            }
        }
    }

    /// Recompute the engines whose inputs were edited since they last ran, in graph order,
    /// and pass their new outputs to what links to them (an engine downstream recomputes then
    /// too). Returns the diagnostics this raised (also kept with the simulation's). Called by
    /// the simulation at its update points; call it before reading an engine's outputs that
    /// were made stale by an edit.
    pub fn update_engines(&mut self) -> Vec<Diagnostic> {
        if self.dirty_engines.is_empty() {
            return Vec::new();
        }
        let mut dirty = std::mem::take(&mut self.dirty_engines);
        let order: Vec<ComponentId> = self.scene.component_ids().collect();
        dirty.retain(|id| self.scene.check_component(*id).is_ok());
        dirty.sort_by_key(|id| order.iter().position(|o| o == id));
        let mut diags = Diagnostics::default();
        let mut projective = false;
        for id in dirty {
            self.engine_updates += 1;
            if let Err(reason) = crate::init::reinit_component(&mut self.scene, id, &mut diags) {
                diags
                    .push(Diagnostic::error(reason.to_string()).on(self.scene.component_label(id)));
                continue;
            }
            projective |= crate::init::propagate_engine_outputs(&mut self.scene, id, &mut diags, 0);
        }
        self.after_edit(true, projective);
        let new: Vec<Diagnostic> = diags.iter().cloned().collect();
        self.diagnostics.extend(diags);
        new
    }
}

/// Put back the values an edit replaced.
fn put_back(
    data: &mut canape_core::data::DataTable,
    old: Vec<(&str, (canape_core::data::Value, bool))>,
) {
    for (name, (value, was_set)) in old.into_iter().rev() {
        if let Some(f) = data.field_mut(name) {
            f.value = value;
            f.is_set = was_set;
            f.version += 1;
        }
    }
}
