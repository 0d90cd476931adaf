//! EulerExplicitSolver: forward Euler, symplectic by default (v_{n+1} = v_n + h·M⁻¹f(x_n, v_n),
//! x_{n+1} = x_n + h·v_{n+1}), as in Sofa/Component/ODESolver/Forward/.../EulerExplicitSolver.cpp.

use canape_core::component::{MechanicalOps, OdeSolver, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Words};
use canape_core::state::VecId;

canape_core::data_schema! {
    /// EulerExplicitSolver's Data.
    pub struct EulerExplicitData {
        print_log: Flag = ("printLog", DataKind::Bool, "0", "if true, emits extra messages at runtime."),
        tags: Words = ("tags", DataKind::Words, "", "list of the subsets the object belongs to"),
        listening: Flag = ("listening", DataKind::Bool, "0", "if true, handle the events, otherwise ignore the events"),
        symplectic: Flag = ("symplectic", DataKind::Bool, "1", "If true (default), the velocities are updated before the positions and the method is symplectic, more robust. If false, the positions are updated before the velocities (standard Euler, less robust)."),
        thread_safe_visitor: Flag = ("threadSafeVisitor", DataKind::Bool, "0", "If true, do not use realloc and free visitors in fwdInteractionForceField."),
    }
}

#[derive(Clone)]
pub struct EulerExplicitSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: EulerExplicitData,
    /// `symplectic`, read at init (no table read inside a step).
    symplectic: bool,
}

impl Default for EulerExplicitSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl EulerExplicitSolver {
    pub fn new() -> Self {
        let (data, d) = EulerExplicitData::declare(DataTable::new());
        EulerExplicitSolver {
            data,
            d,
            symplectic: true,
        }
    }
}

impl EulerExplicitSolver {
    fn init_impl(&mut self, _ctx: &mut canape_core::scene::InitContext<'_>) {
        self.symplectic = self.data.get(self.d.symplectic);
    }

    /// `symplectic` only chooses the order of the two updates: an edit of it is taken in
    /// place; other Data re-run init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        if !changed.only(&[self.d.symplectic.index()]) {
            return Reaction::Reinit;
        }
        self.symplectic = self.data.get(self.d.symplectic);
        Reaction::Updated
    }
}

canape_core::impl_component!(
    EulerExplicitSolver,
    "EulerExplicitSolver",
    init,
    data_changed
);

impl OdeSolver for EulerExplicitSolver {
    fn solve(&mut self, ops: &mut dyn MechanicalOps, dt: f64) {
        let f = VecId::FORCE;
        ops.compute_force(f);
        let acc = ops.alloc();
        ops.accel_from_force(acc, f);
        if self.symplectic {
            ops.v_peq(VecId::VELOCITY, acc, dt);
            ops.v_peq(VecId::POSITION, VecId::VELOCITY, dt);
        } else {
            ops.v_peq(VecId::POSITION, VecId::VELOCITY, dt);
            ops.v_peq(VecId::VELOCITY, acc, dt);
        }
        ops.add_separate_gravity(dt);
        ops.free(acc);
    }

    fn needs_linear_solver(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bdf::mock_group::{assert_same_steps, springs, step_and_edit};
    use crate::test_util::ode_initialised;

    #[test]
    fn edits_update_in_place_euler_explicit_symplectic() {
        for (before, after) in [("1", "0"), ("0", "1")] {
            let before = [("symplectic", before)];
            let after = [("symplectic", after)];
            let mut ops = springs();
            let mut s = ode_initialised(EulerExplicitSolver::new(), &before);
            assert_eq!(step_and_edit(&mut s, &mut ops, &after), Reaction::Updated);
            let fresh = ode_initialised(EulerExplicitSolver::new(), &after);
            let old = ode_initialised(EulerExplicitSolver::new(), &before);
            assert_same_steps(s, fresh, old, ops, "symplectic");
        }
        let mut s = ode_initialised(EulerExplicitSolver::new(), &[]);
        let mut ops = springs();
        let r = step_and_edit(&mut s, &mut ops, &[("printLog", "1")]);
        assert_eq!(r, Reaction::Reinit);
    }
}
