//! EulerImplicitSolver: backward Euler with Rayleigh damping.
//!
//! Follows SOFA's formulation (Sofa/Component/ODESolver/Backward/src/sofa/component/odesolver/
//! backward/EulerImplicitSolver.cpp): f = F(x, v); b = h·(f − rm·M·v + (h·tr + rs)·K·v), projected;
//! solve ((1 + tr·h·rm)·M − tr·h·B − tr·h·(tr·h + rs)·K)·dv = b; then v += dv and x += h·v.

use canape_core::component::{MechanicalOps, OdeSolver};
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_core::state::VecId;

#[derive(Clone)]
pub struct EulerImplicitSolver {
    data: DataTable,
    rayleigh_stiffness: f64,
    rayleigh_mass: f64,
    vdamping: f64,
    first_order: bool,
    trapezoidal: bool,
}

impl Default for EulerImplicitSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl EulerImplicitSolver {
    pub fn new() -> Self {
        let data = DataTable::new()
            .with("rayleighStiffness", DataKind::Real, "0", "Rayleigh damping coefficient related to stiffness, > 0")
            .with("rayleighMass", DataKind::Real, "0", "Rayleigh damping coefficient related to mass, > 0")
            .with("vdamping", DataKind::Real, "0", "Velocity decay coefficient (no decay if null)")
            .with("firstOrder", DataKind::Bool, "0", "Use backward Euler scheme for first order ODE system")
            .with("trapezoidalScheme", DataKind::Bool, "0", "Boolean to use the trapezoidal scheme instead of the implicit Euler scheme")
            .with("solveConstraint", DataKind::Bool, "0", "Apply ConstraintSolver (requires a ConstraintSolver in the same node as this solver)")
            .with("threadSafeVisitor", DataKind::Bool, "0", "If true, do not use realloc and free visitors in fwdInteractionForceField")
            .with("computeResidual", DataKind::Bool, "0", "If true, the residual is computed at the end of the solving")
            .with("residual", DataKind::Real, "0", "Residual norm at the end of the free-motion solving")
            .with("printLog", DataKind::Bool, "0", "Print log messages")
            .with("tags", DataKind::Words, "", "Tags of the component")
            .with("listening", DataKind::Bool, "0", "Listen to events");
        EulerImplicitSolver {
            data,
            rayleigh_stiffness: 0.0,
            rayleigh_mass: 0.0,
            vdamping: 0.0,
            first_order: false,
            trapezoidal: false,
        }
    }

    fn init_impl(&mut self, _ctx: &mut InitContext<'_>) {
        self.rayleigh_stiffness = self.data.real("rayleighStiffness");
        self.rayleigh_mass = self.data.real("rayleighMass");
        self.vdamping = self.data.real("vdamping");
        self.first_order = self.data.bool("firstOrder");
        self.trapezoidal = self.data.bool("trapezoidalScheme");
    }
}

impl_component!(EulerImplicitSolver, "EulerImplicitSolver", init);

impl OdeSolver for EulerImplicitSolver {
    fn solve(&mut self, ops: &mut dyn MechanicalOps, dt: f64) {
        let h = dt;
        let tr = if self.trapezoidal { 0.5 } else { 1.0 };
        let (rs, rm) = (self.rayleigh_stiffness, self.rayleigh_mass);
        let f = VecId::FORCE;
        ops.compute_force(f);
        let b = ops.alloc();
        ops.v_eq(b, f);
        if !self.first_order {
            ops.add_mbk_v(b, VecId::VELOCITY, -rm, h * tr + rs);
            ops.v_teq(b, h);
        }
        ops.project_response(b);
        let (mf, bf, kf) = if self.first_order {
            (1.0, 0.0, -h * tr)
        } else {
            (1.0 + tr * h * rm, -tr * h, -tr * h * (tr * h + rs))
        };
        // the solution vector persists across steps: warm-started solvers (PCG, MinRes) start from
        // the previous step's dv, as in SOFA
        let x = ops.persistent(0);
        ops.solve_linear(mf, bf, kf, x, b);
        if self.first_order {
            ops.v_eq(VecId::VELOCITY, x);
        } else {
            ops.v_peq(VecId::VELOCITY, x, 1.0);
        }
        ops.v_peq(VecId::POSITION, VecId::VELOCITY, h);
        ops.add_separate_gravity(h);
        if self.vdamping != 0.0 {
            ops.v_teq(VecId::VELOCITY, (-h * self.vdamping).exp());
        }
        ops.free(b);
    }
}
