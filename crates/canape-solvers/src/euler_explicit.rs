//! EulerExplicitSolver: forward Euler, symplectic by default (v_{n+1} = v_n + h·M⁻¹f(x_n, v_n),
//! x_{n+1} = x_n + h·v_{n+1}), as in Sofa/Component/ODESolver/Forward/.../EulerExplicitSolver.cpp.

use canape_core::component::{MechanicalOps, OdeSolver};
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::state::VecId;

#[derive(Clone)]
pub struct EulerExplicitSolver {
    data: DataTable,
    /// `symplectic`, read at init (no string look-up inside a step).
    symplectic: bool,
}

impl Default for EulerExplicitSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl EulerExplicitSolver {
    pub fn new() -> Self {
        let data = DataTable::new()
            .with("printLog", DataKind::Bool, "0", "if true, emits extra messages at runtime.")
            .with("tags", DataKind::Words, "", "list of the subsets the object belongs to")
            .with("listening", DataKind::Bool, "0", "if true, handle the events, otherwise ignore the events")
            .with("symplectic", DataKind::Bool, "1", "If true (default), the velocities are updated before the positions and the method is symplectic, more robust. If false, the positions are updated before the velocities (standard Euler, less robust).")
            .with("threadSafeVisitor", DataKind::Bool, "0", "If true, do not use realloc and free visitors in fwdInteractionForceField.");
        EulerExplicitSolver {
            data,
            symplectic: true,
        }
    }
}

impl EulerExplicitSolver {
    fn init_impl(&mut self, _ctx: &mut canape_core::scene::InitContext<'_>) {
        self.symplectic = self.data.bool("symplectic");
    }
}

impl_component!(EulerExplicitSolver, "EulerExplicitSolver", init);

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
