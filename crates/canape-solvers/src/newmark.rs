//! NewmarkImplicitSolver: the implicit Newmark-β scheme on accelerations, in the sequence of
//! SOFA's Sofa/Component/ODESolver/Backward/.../NewmarkImplicitSolver.cpp: the acceleration of
//! the previous step is kept; the right-hand side is f + [h(1−γ)B + (h(1−γ)rK + h²(1−2β)/2)K −
//! h(1−γ)rM M]·a + [B + (rK + h)K − rM M]·v, the system (1 + hγrM)M − hγB − (h²β + hγrK)K,
//! then x += h v + h²(½ − β) a + h²β a′, v += h(1 − γ) a + hγ a′.

use canape_core::component::{MechanicalOps, OdeSolver, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Real, Words};
use canape_core::state::VecId;

/// Key of the kept acceleration among the group's persistent vectors (the linear solvers' own
/// warm starts use others).
const ACCELERATION_KEY: u32 = 7;

canape_core::data_schema! {
    /// NewmarkImplicitSolver's Data.
    pub struct NewmarkData {
        print_log: Flag = ("printLog", DataKind::Bool, "0", "if true, emits extra messages at runtime."),
        tags: Words = ("tags", DataKind::Words, "", "list of the subsets the object belongs to"),
        listening: Flag = ("listening", DataKind::Bool, "0", "if true, handle the events, otherwise ignore the events"),
        rayleigh_stiffness: Real = ("rayleighStiffness", DataKind::Real, "0", "Rayleigh damping coefficient related to stiffness"),
        rayleigh_mass: Real = ("rayleighMass", DataKind::Real, "0", "Rayleigh damping coefficient related to mass"),
        vdamping: Real = ("vdamping", DataKind::Real, "0", "Velocity decay coefficient (no decay if null)"),
        gamma: Real = ("gamma", DataKind::Real, "0.5", "Newmark scheme gamma coefficient"),
        beta: Real = ("beta", DataKind::Real, "0.25", "Newmark scheme beta coefficient"),
        thread_safe_visitor: Flag = ("threadSafeVisitor", DataKind::Bool, "0", "If true, do not use realloc and free visitors in fwdInteractionForceField."),
    }
}

#[derive(Clone)]
pub struct NewmarkImplicitSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: NewmarkData,
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
        let (data, d) = NewmarkData::declare(DataTable::new());
        NewmarkImplicitSolver {
            data,
            d,
            rayleigh_stiffness: 0.0,
            rayleigh_mass: 0.0,
            vdamping: 0.0,
            gamma: 0.5,
            beta: 0.25,
            started: false,
        }
    }

    /// The Data read at each solve: what init and an edit take from the table.
    fn in_place(&self) -> [usize; 5] {
        let d = &self.d;
        [
            d.rayleigh_stiffness.index(),
            d.rayleigh_mass.index(),
            d.vdamping.index(),
            d.gamma.index(),
            d.beta.index(),
        ]
    }

    /// Take the Rayleigh coefficients, the velocity decay and the scheme's γ and β from the Data.
    fn read_params(&mut self) {
        let (t, d) = (&self.data, &self.d);
        self.rayleigh_stiffness = t.get(d.rayleigh_stiffness);
        self.rayleigh_mass = t.get(d.rayleigh_mass);
        self.vdamping = t.get(d.vdamping);
        self.gamma = t.get(d.gamma);
        self.beta = t.get(d.beta);
    }

    fn init_impl(&mut self, _ctx: &mut canape_core::scene::InitContext<'_>) {
        self.read_params();
        self.started = false;
    }

    /// An edit of the coefficients is taken in place; as after init, the next step starts
    /// from the acceleration of the current state (so that the edited solver steps as one
    /// initialised with the new values). Other Data re-run init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        if !changed.only(&self.in_place()) {
            return Reaction::Reinit;
        }
        self.read_params();
        self.started = false;
        Reaction::Updated
    }
}

canape_core::impl_component!(
    NewmarkImplicitSolver,
    "NewmarkImplicitSolver",
    init,
    data_changed
);

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bdf::mock_group::{assert_same_steps, springs, step_and_edit};
    use crate::test_util::ode_initialised;

    /// Editing the Rayleigh coefficients, vdamping, gamma or beta of a running solver is taken
    /// in place: its next steps equal bit for bit those of a solver initialised with the new
    /// values; other Data re-initialise it.
    #[test]
    fn edits_update_in_place_newmark_coefficients() {
        let before = [("rayleighStiffness", "0.05"), ("rayleighMass", "0.1")];
        let edits: [&[(&str, &str)]; 5] = [
            &[("rayleighStiffness", "0.2")],
            &[("rayleighMass", "0.3"), ("vdamping", "2")],
            &[("gamma", "0.6")],
            &[("beta", "0.3")],
            &[("gamma", "0.55"), ("beta", "0.5"), ("rayleighMass", "0")],
        ];
        for fixed in [vec![], vec![0]] {
            for after in edits {
                let mut ops = springs();
                ops.fixed = fixed.clone();
                let mut s = ode_initialised(NewmarkImplicitSolver::new(), &before);
                assert_eq!(step_and_edit(&mut s, &mut ops, after), Reaction::Updated);
                let fresh_attrs = [before.as_slice(), after].concat();
                let fresh = ode_initialised(NewmarkImplicitSolver::new(), &fresh_attrs);
                let old = ode_initialised(NewmarkImplicitSolver::new(), &before);
                assert_same_steps(s, fresh, old, ops, &format!("{after:?}"));
            }
        }
        let mut s = ode_initialised(NewmarkImplicitSolver::new(), &before);
        let r = step_and_edit(&mut s, &mut springs(), &[("threadSafeVisitor", "1")]);
        assert_eq!(r, Reaction::Reinit);
    }
}
