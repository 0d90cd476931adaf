//! StaticSolver: Newton iterations towards static equilibrium f(x) = 0, solving (−K)·dx = f
//! with the group's linear solver (Sofa/Component/ODESolver/Backward/.../StaticSolver.cpp).
//! Velocities are not used; stopping tests compare squared norms, as SOFA does.

use canape_core::component::{MechanicalOps, OdeSolver};
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_core::state::VecId;

#[derive(Clone)]
pub struct StaticSolver {
    data: DataTable,
    /// Newton iterations done in the last solve and whether it converged.
    pub last_iterations: usize,
    pub last_converged: bool,
}

impl Default for StaticSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl StaticSolver {
    pub fn new() -> Self {
        let data = DataTable::new()
            .with("printLog", DataKind::Bool, "0", "if true, emits extra messages at runtime.")
            .with("tags", DataKind::Words, "", "list of the subsets the object belongs to")
            .with("listening", DataKind::Bool, "0", "if true, handle the events, otherwise ignore the events")
            .with("newton_iterations", DataKind::Int, "1", "Number of newton iterations between each load increments (normally, one load increment per simulation time-step.")
            .with("absolute_correction_tolerance_threshold", DataKind::Real, "1e-5", "Convergence criterion: The newton iterations will stop when the norm |du| is smaller than this threshold.")
            .with("relative_correction_tolerance_threshold", DataKind::Real, "1e-5", "Convergence criterion: The newton iterations will stop when the ratio |du| / |U| is smaller than this threshold.")
            .with("absolute_residual_tolerance_threshold", DataKind::Real, "1e-5", "Convergence criterion: The newton iterations will stop when the norm of the residual |f - K(u)| is smaller than this threshold. Use a negative value to disable this criterion.")
            .with("relative_residual_tolerance_threshold", DataKind::Real, "1e-5", "Convergence criterion: The newton iterations will stop when the ratio |f - K(u)| / |f - K(u0)| is smaller than this threshold. Use a negative value to disable this criterion.")
            .with("should_diverge_when_residual_is_growing", DataKind::Bool, "0", "Divergence criterion: The newton iterations will stop when the residual is greater than the one from the previous iteration.");
        StaticSolver {
            data,
            last_iterations: 0,
            last_converged: false,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if self.data.int("newton_iterations") < 1 {
            ctx.warn("newton_iterations < 1: no Newton iteration will be done");
        }
    }
}

impl_component!(StaticSolver, "StaticSolver", init);

impl OdeSolver for StaticSolver {
    fn solve(&mut self, ops: &mut dyn MechanicalOps, _dt: f64) {
        let d = &self.data;
        let max_it = d.int("newton_iterations").max(0) as usize;
        let (abs_corr, rel_corr) = (
            d.real("absolute_correction_tolerance_threshold"),
            d.real("relative_correction_tolerance_threshold"),
        );
        let (abs_res, rel_res) = (
            d.real("absolute_residual_tolerance_threshold"),
            d.real("relative_residual_tolerance_threshold"),
        );
        let f = VecId::FORCE;
        let dx = ops.alloc();
        let u = ops.alloc();
        ops.compute_force(f);
        ops.project_response(f);
        let mut r2 = ops.dot(f, f);
        let mut converged = abs_res > 0.0 && r2 <= abs_res * abs_res;
        let mut r0 = 0.0;
        let mut n = 0;
        while !converged && n < max_it {
            ops.v_teq(dx, 0.0);
            ops.solve_linear(0.0, 0.0, -1.0, dx, f);
            ops.v_peq(VecId::POSITION, dx, 1.0);
            n += 1;
            if max_it == 1 {
                break;
            }
            ops.compute_force(f);
            ops.project_response(f);
            r2 = ops.dot(f, f);
            if n == 1 {
                r0 = r2;
            }
            ops.v_peq(u, dx, 1.0);
            let dx2 = ops.dot(dx, dx);
            let u2 = ops.dot(u, u);
            if r2.is_nan() || dx2.is_nan() || u2 < f64::EPSILON * f64::EPSILON {
                break;
            }
            if (abs_corr > 0.0 && dx2 < abs_corr * abs_corr)
                || (rel_corr > 0.0 && dx2 < rel_corr * rel_corr * u2)
                || (abs_res > 0.0 && r2 < abs_res * abs_res)
                || (rel_res > 0.0 && r2 < rel_res * rel_res * r0)
            {
                converged = true;
            }
        }
        self.last_iterations = n;
        self.last_converged = converged;
        ops.free(u);
        ops.free(dx);
    }
}
