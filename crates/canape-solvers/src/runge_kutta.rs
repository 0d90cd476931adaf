//! Explicit multi-stage and central-difference schemes: RungeKutta4Solver, RungeKutta2Solver
//! (midpoint) and CentralDifferenceSolver, following the sequences of vector operations of
//! SOFA's Sofa/Component/ODESolver/Forward/.../RungeKutta4Solver.cpp, RungeKutta2Solver.cpp and
//! CentralDifferenceSolver.cpp.
//!
//! The Runge–Kutta stages evaluate accelerations at intermediate positions and velocities with
//! `MechanicalOps::compute_acc` (SOFA's computeAcc: the projective constraints project the
//! stage's vectors in place, forces go through the mappings, a = M⁻¹f). As in SOFA every stage
//! sees the time at the start of the step (forces here do not depend on time).

use canape_core::component::{MechanicalOps, OdeSolver, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Real, Words};
use canape_core::impl_component;
use canape_core::state::VecId;

canape_core::data_schema! {
    /// The Data of the three explicit solvers (what RungeKutta4Solver and RungeKutta2Solver
    /// have).
    pub struct ExplicitSolverData {
        print_log: Flag = ("printLog", DataKind::Bool, "0", "if true, emits extra messages at runtime."),
        tags: Words = ("tags", DataKind::Words, "", "list of the subsets the object belongs to"),
        listening: Flag = ("listening", DataKind::Bool, "0", "if true, handle the events, otherwise ignore the events"),
    }
}

canape_core::data_schema! {
    /// What CentralDifferenceSolver adds to [`ExplicitSolverData`].
    pub struct CentralDifferenceData {
        rayleigh_mass: Real = ("rayleighMass", DataKind::Real, "0", "Rayleigh damping coefficient related to mass"),
        thread_safe_visitor: Flag = ("threadSafeVisitor", DataKind::Bool, "0", "If true, do not use realloc and free visitors in fwdInteractionForceField."),
    }
}

/// The table of the Runge–Kutta solvers (they read none of it).
fn solver_data() -> DataTable {
    ExplicitSolverData::declare(DataTable::new()).0
}

/// RungeKutta4Solver: the classical fourth-order scheme.
#[derive(Clone)]
pub struct RungeKutta4Solver {
    data: DataTable,
}

impl Default for RungeKutta4Solver {
    fn default() -> Self {
        Self::new()
    }
}

impl RungeKutta4Solver {
    pub fn new() -> Self {
        RungeKutta4Solver {
            data: solver_data(),
        }
    }
}

impl_component!(RungeKutta4Solver, "RungeKutta4Solver");

impl OdeSolver for RungeKutta4Solver {
    fn solve(&mut self, ops: &mut dyn MechanicalOps, dt: f64) {
        let (pos, vel, f) = (VecId::POSITION, VecId::VELOCITY, VecId::FORCE);
        let (h2, h3, h6) = (dt / 2.0, dt / 3.0, dt / 6.0);
        ops.add_separate_gravity(dt);
        let new_x = ops.alloc_coord();
        let [k1a, k2v, k2a, k3v, k3a, k4v, k4a] = std::array::from_fn(|_| ops.alloc());
        // stage 1 at the state itself (k1v is the velocity, projected in place)
        let k1v = vel;
        ops.compute_acc(k1a, f, pos, vel);
        // stages 2 and 3 at the midpoint, stage 4 at the end
        ops.v_op(new_x, pos, k1v, h2);
        ops.v_op(k2v, vel, k1a, h2);
        ops.compute_acc(k2a, f, new_x, k2v);
        ops.v_op(new_x, pos, k2v, h2);
        ops.v_op(k3v, vel, k2a, h2);
        ops.compute_acc(k3a, f, new_x, k3v);
        ops.v_op(new_x, pos, k3v, dt);
        ops.v_op(k4v, vel, k3a, dt);
        ops.compute_acc(k4a, f, new_x, k4v);
        // positions first (they read the velocity of the step's start), one pass per term
        ops.v_peq(pos, k1v, h6);
        ops.v_peq(pos, k2v, h3);
        ops.v_peq(pos, k3v, h3);
        ops.v_peq(pos, k4v, h6);
        ops.v_peq(vel, k1a, h6);
        ops.v_peq(vel, k2a, h3);
        ops.v_peq(vel, k3a, h3);
        ops.v_peq(vel, k4a, h6);
        for v in [k1a, k2v, k2a, k3v, k3a, k4v, k4a, new_x] {
            ops.free(v);
        }
    }

    fn needs_linear_solver(&self) -> bool {
        false
    }
}

/// RungeKutta2Solver: the midpoint scheme.
#[derive(Clone)]
pub struct RungeKutta2Solver {
    data: DataTable,
}

impl Default for RungeKutta2Solver {
    fn default() -> Self {
        Self::new()
    }
}

impl RungeKutta2Solver {
    pub fn new() -> Self {
        RungeKutta2Solver {
            data: solver_data(),
        }
    }
}

impl_component!(RungeKutta2Solver, "RungeKutta2Solver");

impl OdeSolver for RungeKutta2Solver {
    fn solve(&mut self, ops: &mut dyn MechanicalOps, dt: f64) {
        let (pos, vel, f) = (VecId::POSITION, VecId::VELOCITY, VecId::FORCE);
        ops.add_separate_gravity(dt);
        let acc = ops.alloc();
        let new_x = ops.alloc_coord();
        let new_v = ops.alloc();
        ops.compute_acc(acc, f, pos, vel);
        ops.v_op(new_x, pos, vel, dt / 2.0);
        ops.v_op(new_v, vel, acc, dt / 2.0);
        ops.compute_acc(acc, f, new_x, new_v);
        ops.v_peq(pos, new_v, dt);
        ops.v_peq(vel, acc, dt);
        for v in [acc, new_x, new_v] {
            ops.free(v);
        }
    }

    fn needs_linear_solver(&self) -> bool {
        false
    }
}

/// CentralDifferenceSolver: v += h·M⁻¹f, x += h·v, with SOFA's Rayleigh mass damping when
/// `rayleighMass` is set.
#[derive(Clone)]
pub struct CentralDifferenceSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: CentralDifferenceData,
    rayleigh_mass: f64,
}

impl Default for CentralDifferenceSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl CentralDifferenceSolver {
    pub fn new() -> Self {
        let (data, d) = CentralDifferenceData::declare(solver_data());
        CentralDifferenceSolver {
            data,
            d,
            rayleigh_mass: 0.0,
        }
    }

    fn init_impl(&mut self, _ctx: &mut canape_core::scene::InitContext<'_>) {
        self.rayleigh_mass = self.data.get(self.d.rayleigh_mass);
    }

    /// `rayleighMass` is read at each step: an edit of it is taken in place; other Data re-run
    /// init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        if !changed.only(&[self.d.rayleigh_mass.index()]) {
            return Reaction::Reinit;
        }
        self.rayleigh_mass = self.data.get(self.d.rayleigh_mass);
        Reaction::Updated
    }
}

impl_component!(
    CentralDifferenceSolver,
    "CentralDifferenceSolver",
    init,
    data_changed
);

impl OdeSolver for CentralDifferenceSolver {
    fn solve(&mut self, ops: &mut dyn MechanicalOps, dt: f64) {
        let (pos, vel, f) = (VecId::POSITION, VecId::VELOCITY, VecId::FORCE);
        let r = self.rayleigh_mass;
        ops.add_separate_gravity(dt);
        ops.compute_force(f);
        let acc = ops.alloc();
        ops.accel_from_force(acc, f);
        if r == 0.0 {
            ops.v_peq(vel, acc, dt);
            ops.v_peq(pos, vel, dt);
        } else {
            // the damped update of SOFA's formulation: v ← v·(1 + c1) + c2·a
            let c1 = -1.0 + (1.0 / dt - r / 2.0) / (1.0 / dt + r / 2.0);
            let c2 = 1.0 / (1.0 / dt + r / 2.0);
            ops.v_op(vel, vel, vel, c1);
            ops.v_peq(vel, acc, c2);
            ops.v_peq(pos, vel, dt);
        }
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

    /// Editing `rayleighMass` of a running CentralDifferenceSolver is taken in place: its next
    /// steps equal bit for bit those of a solver initialised with the new value.
    #[test]
    fn edits_update_in_place_central_difference_rayleigh_mass() {
        for (before, after) in [("0", "0.5"), ("0.5", "2"), ("0.5", "0")] {
            let (before, after) = ([("rayleighMass", before)], [("rayleighMass", after)]);
            let mut ops = springs();
            let mut s = ode_initialised(CentralDifferenceSolver::new(), &before);
            assert_eq!(step_and_edit(&mut s, &mut ops, &after), Reaction::Updated);
            let fresh = ode_initialised(CentralDifferenceSolver::new(), &after);
            let old = ode_initialised(CentralDifferenceSolver::new(), &before);
            assert_same_steps(s, fresh, old, ops, &format!("{after:?}"));
        }
        let mut s = ode_initialised(CentralDifferenceSolver::new(), &[]);
        let r = step_and_edit(&mut s, &mut springs(), &[("printLog", "1")]);
        assert_eq!(r, Reaction::Reinit);
    }
}
