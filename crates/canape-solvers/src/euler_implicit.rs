//! EulerImplicitSolver: backward Euler with Rayleigh damping.
//!
//! Follows SOFA's formulation (Sofa/Component/ODESolver/Backward/src/sofa/component/odesolver/
//! backward/EulerImplicitSolver.cpp): f = F(x, v); b = h·(f − rm·M·v + (h·tr + rs)·K·v), projected;
//! solve ((1 + tr·h·rm)·M − tr·h·B − tr·h·(tr·h + rs)·K)·dv = b; then v += dv and x += h·v.

use canape_core::component::{MechanicalOps, OdeSolver, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Real, Words};
use canape_core::scene::InitContext;
use canape_core::state::VecId;

canape_core::data_schema! {
    /// EulerImplicitSolver's Data.
    pub struct EulerImplicitData {
        rayleigh_stiffness: Real = ("rayleighStiffness", DataKind::Real, "0", "Rayleigh damping coefficient related to stiffness, > 0"),
        rayleigh_mass: Real = ("rayleighMass", DataKind::Real, "0", "Rayleigh damping coefficient related to mass, > 0"),
        vdamping: Real = ("vdamping", DataKind::Real, "0", "Velocity decay coefficient (no decay if null)"),
        first_order: Flag = ("firstOrder", DataKind::Bool, "0", "Use backward Euler scheme for first order ODE system"),
        trapezoidal_scheme: Flag = ("trapezoidalScheme", DataKind::Bool, "0", "Boolean to use the trapezoidal scheme instead of the implicit Euler scheme"),
        solve_constraint: Flag = ("solveConstraint", DataKind::Bool, "0", "Apply ConstraintSolver (requires a ConstraintSolver in the same node as this solver)"),
        thread_safe_visitor: Flag = ("threadSafeVisitor", DataKind::Bool, "0", "If true, do not use realloc and free visitors in fwdInteractionForceField"),
        compute_residual: Flag = ("computeResidual", DataKind::Bool, "0", "If true, the residual is computed at the end of the solving"),
        residual: Real = ("residual", DataKind::Real, "0", "Residual norm at the end of the free-motion solving"),
        print_log: Flag = ("printLog", DataKind::Bool, "0", "Print log messages"),
        tags: Words = ("tags", DataKind::Words, "", "Tags of the component"),
        listening: Flag = ("listening", DataKind::Bool, "0", "Listen to events"),
    }
}

#[derive(Clone)]
pub struct EulerImplicitSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: EulerImplicitData,
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
        let (data, d) = EulerImplicitData::declare(DataTable::new());
        EulerImplicitSolver {
            data,
            d,
            rayleigh_stiffness: 0.0,
            rayleigh_mass: 0.0,
            vdamping: 0.0,
            first_order: false,
            trapezoidal: false,
        }
    }

    /// The Data read at each solve: what init and an edit take from the table.
    fn in_place(&self) -> [usize; 5] {
        let d = &self.d;
        [
            d.rayleigh_stiffness.index(),
            d.rayleigh_mass.index(),
            d.vdamping.index(),
            d.first_order.index(),
            d.trapezoidal_scheme.index(),
        ]
    }

    /// Take the Rayleigh coefficients, the velocity decay and the scheme from the Data.
    fn read_params(&mut self) {
        let (t, d) = (&self.data, &self.d);
        self.rayleigh_stiffness = t.get(d.rayleigh_stiffness);
        self.rayleigh_mass = t.get(d.rayleigh_mass);
        self.vdamping = t.get(d.vdamping);
        self.first_order = t.get(d.first_order);
        self.trapezoidal = t.get(d.trapezoidal_scheme);
    }
}

impl EulerImplicitSolver {
    fn init_impl(&mut self, _ctx: &mut InitContext<'_>) {
        self.read_params();
    }

    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        if !changed.only(&self.in_place()) {
            return Reaction::Reinit;
        }
        self.read_params();
        Reaction::Updated
    }
}

canape_core::impl_component!(
    EulerImplicitSolver,
    "EulerImplicitSolver",
    init,
    data_changed
);

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bdf::mock_group::{assert_same_steps, springs, step_and_edit};
    use crate::test_util::{edit, ode_initialised};

    /// An EulerImplicitSolver with `attrs`, initialised in a scene of its own.
    fn solver(attrs: &[(&str, &str)]) -> EulerImplicitSolver {
        ode_initialised(EulerImplicitSolver::new(), attrs)
    }

    /// Editing the Rayleigh coefficients, vdamping, firstOrder or trapezoidalScheme of a
    /// running solver is taken in place: its next steps equal bit for bit those of a solver
    /// initialised with the new values; other Data re-initialise it.
    #[test]
    fn euler_implicit_edits_update_in_place() {
        let before = [("rayleighStiffness", "0.05"), ("rayleighMass", "0.1")];
        let edits: [&[(&str, &str)]; 5] = [
            &[("rayleighStiffness", "0.2")],
            &[("rayleighMass", "0.3"), ("vdamping", "2")],
            &[("vdamping", "0.5")],
            &[("firstOrder", "1")],
            &[("trapezoidalScheme", "1"), ("rayleighStiffness", "0")],
        ];
        // the two points of the mock group, the first one fixed or not
        for fixed in [vec![], vec![0]] {
            for after in edits {
                let mut ops = springs();
                ops.fixed = fixed.clone();
                let mut s = solver(&before);
                let r = step_and_edit(&mut s, &mut ops, after);
                assert_eq!(r, Reaction::Updated, "{after:?}");
                // the same state, stepped by a solver initialised with the new values and by
                // one left with the old ones
                let fresh = solver(&[before.as_slice(), after].concat());
                let what = format!("{after:?} fixed {fixed:?}");
                assert_same_steps(s, fresh, solver(&before), ops, &what);
            }
        }
        let r = edit(&mut solver(&before), &[("printLog", "1")]);
        assert_eq!(r, Reaction::Reinit);
    }
}
