//! NewmarkImplicitSolver: the implicit Newmark-β scheme on accelerations, in the sequence of
//! SOFA's Sofa/Component/ODESolver/Backward/.../NewmarkImplicitSolver.cpp: the acceleration of
//! the previous step is kept; the right-hand side is f + [h(1−γ)B + (h(1−γ)rK + h²(1−2β)/2)K −
//! h(1−γ)rM M]·a + [B + (rK + h)K − rM M]·v, the system (1 + hγrM)M − hγB − (h²β + hγrK)K,
//! then x += h v + h²(½ − β) a + h²β a′, v += h(1 − γ) a + hγ a′.

use canape_core::component::{MechanicalOps, OdeSolver};
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::state::VecId;

/// Key of the kept acceleration among the group's persistent vectors (the linear solvers' own
/// warm starts use others).
const ACCELERATION_KEY: u32 = 7;

#[derive(Clone)]
pub struct NewmarkImplicitSolver {
    data: DataTable,
    rayleigh_stiffness: f64,
    rayleigh_mass: f64,
    vdamping: f64,
    gamma: f64,
    beta: f64,
    /// Whether the acceleration has been computed (SOFA computes it at the first step).
    started: bool,
}

impl Default for NewmarkImplicitSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl NewmarkImplicitSolver {
    pub fn new() -> Self {
        let data = DataTable::new()
            .with(
                "printLog",
                DataKind::Bool,
                "0",
                "if true, emits extra messages at runtime.",
            )
            .with(
                "tags",
                DataKind::Words,
                "",
                "list of the subsets the object belongs to",
            )
            .with(
                "listening",
                DataKind::Bool,
                "0",
                "if true, handle the events, otherwise ignore the events",
            )
            .with(
                "rayleighStiffness",
                DataKind::Real,
                "0",
                "Rayleigh damping coefficient related to stiffness",
            )
            .with(
                "rayleighMass",
                DataKind::Real,
                "0",
                "Rayleigh damping coefficient related to mass",
            )
            .with(
                "vdamping",
                DataKind::Real,
                "0",
                "Velocity decay coefficient (no decay if null)",
            )
            .with(
                "gamma",
                DataKind::Real,
                "0.5",
                "Newmark scheme gamma coefficient",
            )
            .with(
                "beta",
                DataKind::Real,
                "0.25",
                "Newmark scheme beta coefficient",
            )
            .with(
                "threadSafeVisitor",
                DataKind::Bool,
                "0",
                "If true, do not use realloc and free visitors in fwdInteractionForceField.",
            );
        NewmarkImplicitSolver {
            data,
            rayleigh_stiffness: 0.0,
            rayleigh_mass: 0.0,
            vdamping: 0.0,
            gamma: 0.5,
            beta: 0.25,
            started: false,
        }
    }

    fn init_impl(&mut self, _ctx: &mut canape_core::scene::InitContext<'_>) {
        self.rayleigh_stiffness = self.data.real("rayleighStiffness");
        self.rayleigh_mass = self.data.real("rayleighMass");
        self.vdamping = self.data.real("vdamping");
        self.gamma = self.data.real("gamma");
        self.beta = self.data.real("beta");
        self.started = false;
    }
}

impl_component!(NewmarkImplicitSolver, "NewmarkImplicitSolver", init);

impl OdeSolver for NewmarkImplicitSolver {
    fn solve(&mut self, ops: &mut dyn MechanicalOps, h: f64) {
        let (pos, vel, f) = (VecId::POSITION, VecId::VELOCITY, VecId::FORCE);
        let (rk, rm, gamma, beta) = (
            self.rayleigh_stiffness,
            self.rayleigh_mass,
            self.gamma,
            self.beta,
        );
        let a = ops.persistent(ACCELERATION_KEY);
        if !self.started {
            ops.compute_acc(a, f, pos, vel);
            self.started = true;
        }
        let b = ops.alloc();
        ops.compute_force(b);
        if rm != 0.0 || rk != 0.0 || beta != 0.5 {
            ops.add_mbk(
                b,
                a,
                -h * (1.0 - gamma) * rm,
                h * (1.0 - gamma),
                h * (1.0 - gamma) * rk + h * h * (1.0 - 2.0 * beta) / 2.0,
            );
        }
        ops.add_mbk(b, vel, -rm, 1.0, rk + h);
        ops.project_response(b);
        let a_new = ops.alloc();
        let stats = ops.solve_linear(
            1.0 + h * gamma * rm,
            -h * gamma,
            -h * h * beta - h * gamma * rk,
            a_new,
            b,
        );
        let _ = stats;
        ops.v_peq(pos, vel, h);
        ops.v_peq(pos, a, h * h * (0.5 - beta));
        ops.v_peq(pos, a_new, h * h * beta);
        ops.v_peq(vel, a, h * (1.0 - gamma));
        ops.v_peq(vel, a_new, h * gamma);
        ops.add_separate_gravity(h);
        if self.vdamping != 0.0 {
            ops.v_teq(vel, (-h * self.vdamping).exp());
        }
        ops.v_eq(a, a_new);
        ops.free(a_new);
        ops.free(b);
    }
}
