//! VariationalSymplecticSolver (SOFA's Sofa/Component/ODESolver/Backward/.../
//! VariationalSymplecticSolver.cpp): a momentum-based midpoint scheme. It keeps the momentum p
//! between steps (M v at the first step).
//!
//! Implicit (the default): Newton iterations on the midpoint displacement r = q(k,i) − q_k, each
//! solving (4/h² + 4rM/h) M r − (1 + 4rK/h) K r = f(q(k,i)) − K r_prev + (2/h) p (right-hand side
//! projected), with q(k,i) = q_k + r, until ‖q(k,i) − q(k,i−1)‖ / ‖q_k‖ ≤ `newtonError` or
//! `steps` iterations (at least one). Then v = (2/h) r, the force at the midpoint q_k + (h/2)v
//! (projected) gives p = (h/2) f + M v, and x = q_k + (h/2)v + (h/2)v.
//!
//! Explicit (`explicitIntegration`): a = M⁻¹(f + p/h) − rM v, projected; v = h a; x += h v;
//! p = M v.

use canape_core::component::{MechanicalOps, OdeSolver, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Int, Real, Text};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_core::state::VecId;

/// Key of the kept momentum among the group's persistent vectors.
const MOMENTUM_KEY: u32 = 11;

canape_core::data_schema! {
    /// VariationalSymplecticSolver's Data (after the base Data).
    pub struct VariationalData {
        newton_error: Real = ("newtonError", DataKind::Real, "0.01", "Error tolerance for Newton iterations"),
        steps: Int = ("steps", DataKind::Int, "5", "Maximum number of Newton steps"),
        rayleigh_stiffness: Real = ("rayleighStiffness", DataKind::Real, "0", "Rayleigh damping coefficient related to stiffness, > 0"),
        rayleigh_mass: Real = ("rayleighMass", DataKind::Real, "0", "Rayleigh damping coefficient related to mass, > 0"),
        save_energy_in_file: Flag = ("saveEnergyInFile", DataKind::Bool, "0", "If kinetic and potential energies should be dumped in a CSV file at each iteration"),
        explicit_integration: Flag = ("explicitIntegration", DataKind::Bool, "0", "Use explicit integration scheme"),
        file: Text = ("file", DataKind::Str, "", "File name where kinetic and potential energies are saved in a CSV file"),
        compute_hamiltonian: Flag = ("computeHamiltonian", DataKind::Bool, "1", "Compute hamiltonian"),
        hamiltonian_energy: Real = ("hamiltonianEnergy", DataKind::Real, "0", "hamiltonian energy"),
        use_incremental_potential_energy: Flag = ("useIncrementalPotentialEnergy", DataKind::Bool, "1", "use real potential energy, if false use approximate potential energy"),
        thread_safe_visitor: Flag = ("threadSafeVisitor", DataKind::Bool, "0", "If true, do not use realloc and free visitors in fwdInteractionForceField."),
    }
}

#[derive(Clone)]
pub struct VariationalSymplecticSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: VariationalData,
    newton_error: f64,
    newton_steps: usize,
    rayleigh_stiffness: f64,
    rayleigh_mass: f64,
    explicit: bool,
    /// Whether the momentum has been initialised (SOFA: at its first solve).
    started: bool,
}

impl Default for VariationalSymplecticSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl VariationalSymplecticSolver {
    pub fn new() -> Self {
        let (data, d) = VariationalData::declare(canape_core::data::base_fields(DataTable::new()));
        VariationalSymplecticSolver {
            data,
            d,
            newton_error: 0.01,
            newton_steps: 5,
            rayleigh_stiffness: 0.0,
            rayleigh_mass: 0.0,
            explicit: false,
            started: false,
        }
    }

    /// Take the Newton tolerance and step count and the Rayleigh coefficients from the Data.
    fn read_params(&mut self) {
        let (t, d) = (&self.data, &self.d);
        self.newton_error = t.get(d.newton_error);
        self.newton_steps = t.get(d.steps).max(0) as usize;
        self.rayleigh_stiffness = t.get(d.rayleigh_stiffness);
        self.rayleigh_mass = t.get(d.rayleigh_mass);
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.read_params();
        let steps = self.data.get(self.d.steps);
        if steps < 0 {
            ctx.warn(format!(
                "steps {steps} is negative: one Newton iteration is done"
            ));
        }
        self.explicit = self.data.get(self.d.explicit_integration);
        self.started = false;
        if self.data.get(self.d.save_energy_in_file) {
            ctx.warn("saveEnergyInFile: the energy file is not written and hamiltonianEnergy stays 0 (Canapé does not compute the scene's potential energy yet)");
        }
    }

    /// An edit of the Newton tolerance, the Newton step count (not negative: init warns) or
    /// the Rayleigh coefficients is taken in place; as after init, the next step starts from
    /// the momentum M v of the current state (so that the edited solver steps as one
    /// initialised with the new values). Other Data (the scheme) re-run init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        let in_place = [
            d.newton_error.index(),
            d.steps.index(),
            d.rayleigh_stiffness.index(),
            d.rayleigh_mass.index(),
        ];
        if !changed.only(&in_place) || self.data.get(d.steps) < 0 {
            return Reaction::Reinit;
        }
        self.read_params();
        self.started = false;
        Reaction::Updated
    }

    fn solve_explicit(&mut self, ops: &mut dyn MechanicalOps, h: f64, p: VecId) {
        let (pos, vel) = (VecId::POSITION, VecId::VELOCITY);
        let f = VecId::FORCE;
        let acc = ops.alloc();
        ops.compute_force(f);
        ops.v_peq(f, p, 1.0 / h);
        ops.accel_from_force(acc, f);
        if self.rayleigh_mass > 0.0 {
            ops.v_peq(acc, vel, -self.rayleigh_mass);
        }
        ops.project_response(acc);
        ops.v_eq(vel, acc);
        ops.v_teq(vel, h);
        ops.v_peq(pos, vel, h);
        // p = M v
        ops.v_teq(p, 0.0);
        ops.add_mbk_v(p, vel, 1.0, 0.0);
        ops.free(acc);
    }

    fn solve_implicit(&mut self, ops: &mut dyn MechanicalOps, h: f64, p: VecId) {
        let (pos, vel, f) = (VecId::POSITION, VecId::VELOCITY, VecId::FORCE);
        let (rm, rk) = (self.rayleigh_mass, self.rayleigh_stiffness);
        let oldpos = ops.alloc_coord();
        let previous = ops.alloc_coord();
        let step = ops.alloc_coord();
        let res = ops.alloc();
        let b = ops.alloc();
        ops.v_eq(oldpos, pos);
        let position_norm = ops.dot(oldpos, oldpos).sqrt();
        ops.v_eq(previous, pos);
        let mut iteration = 0;
        let mut error = 0.0;
        while (iteration < self.newton_steps && error > self.newton_error) || iteration == 0 {
            // b = f(q(k,i)) + (2/h) p − K r
            ops.v_teq(b, 0.0);
            ops.compute_force(f);
            ops.v_peq(b, f, 1.0);
            ops.v_peq(b, p, 2.0 / h);
            ops.add_mbk(b, res, 0.0, 0.0, -1.0);
            ops.project_response(b);
            ops.solve_linear(
                4.0 / (h * h) + 4.0 * rm / h,
                0.0,
                -1.0 - 4.0 * rk / h,
                res,
                b,
            );
            // q(k,i) = q_k + r; the change since the last estimate is the stopping test
            ops.v_op(pos, oldpos, res, 1.0);
            ops.v_op(step, pos, previous, -1.0);
            ops.v_eq(previous, pos);
            error = ops.dot(step, step).sqrt() / position_norm;
            iteration += 1;
        }
        // v = (2/h) r; the midpoint's force updates the momentum
        ops.v_eq(vel, res);
        ops.v_teq(vel, 2.0 / h);
        ops.v_op(pos, oldpos, vel, h / 2.0);
        ops.compute_force(f);
        ops.project_response(f);
        ops.v_teq(p, 0.0);
        ops.v_peq(p, f, h / 2.0);
        ops.add_mbk_v(p, vel, 1.0, 0.0);
        // x = q_k + (h/2) v + (h/2) v, in SOFA's order of additions
        ops.v_op(pos, oldpos, vel, h / 2.0);
        ops.v_peq(pos, vel, h / 2.0);
        ops.free(b);
        ops.free(res);
        ops.free(step);
        ops.free(previous);
        ops.free(oldpos);
    }
}

impl_component!(
    VariationalSymplecticSolver,
    "VariationalSymplecticSolver",
    init,
    data_changed
);

impl OdeSolver for VariationalSymplecticSolver {
    fn solve(&mut self, ops: &mut dyn MechanicalOps, h: f64) {
        let p = ops.persistent(MOMENTUM_KEY);
        if !self.started {
            // the momentum starts at M v (zero acceleration assumed)
            ops.v_teq(p, 0.0);
            ops.add_mbk_v(p, VecId::VELOCITY, 1.0, 0.0);
            self.started = true;
        }
        if self.explicit {
            self.solve_explicit(ops, h, p);
        } else {
            self.solve_implicit(ops, h, p);
        }
    }
    fn needs_linear_solver(&self) -> bool {
        !self.explicit
    }
}

canape_core::data_schema! {
    /// DampVelocitySolver's Data (after the base Data).
    pub struct DampVelocityData {
        rate: Real = ("rate", DataKind::Real, "0.99", "Factor used to reduce the velocities. Typically between 0 and 1."),
        threshold: Real = ("threshold", DataKind::Real, "0", "Threshold under which the velocities are canceled."),
    }
}

/// DampVelocitySolver (SOFA's Sofa/Component/ODESolver/Forward/.../DampVelocitySolver.cpp): not
/// an integrator: it multiplies the velocities by exp(−rate·dt) and zeroes those (per point)
/// whose norm is below `threshold` (when not 0). It runs after the node's first ODE solver, as
/// SOFA runs every solver of a node in turn.
#[derive(Clone)]
pub struct DampVelocitySolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: DampVelocityData,
    rate: f64,
    threshold: f64,
}

impl Default for DampVelocitySolver {
    fn default() -> Self {
        Self::new()
    }
}

impl DampVelocitySolver {
    pub fn new() -> Self {
        let (data, d) = DampVelocityData::declare(canape_core::data::base_fields(DataTable::new()));
        DampVelocitySolver {
            data,
            d,
            rate: 0.99,
            threshold: 0.0,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rate = self.data.get(self.d.rate);
        self.threshold = self.data.get(self.d.threshold);
        if !self.rate.is_finite() || !self.threshold.is_finite() {
            ctx.error("rate and threshold must be finite: the velocities are left unchanged");
            self.rate = 0.0;
            self.threshold = 0.0;
        }
    }
}

impl DampVelocitySolver {
    /// `rate` and `threshold` are read at each step: finite edits of them are taken in place
    /// (init reports the others).
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let (t, d) = (&self.data, &self.d);
        let (rate, threshold) = (t.get(d.rate), t.get(d.threshold));
        if !changed.only(&[d.rate.index(), d.threshold.index()])
            || !rate.is_finite()
            || !threshold.is_finite()
        {
            return Reaction::Reinit;
        }
        (self.rate, self.threshold) = (rate, threshold);
        Reaction::Updated
    }
}

impl_component!(DampVelocitySolver, "DampVelocitySolver", init, data_changed);

impl OdeSolver for DampVelocitySolver {
    fn solve(&mut self, ops: &mut dyn MechanicalOps, dt: f64) {
        let vel = VecId::VELOCITY;
        ops.v_teq(vel, (-self.rate * dt).exp());
        if self.threshold != 0.0 {
            ops.v_threshold(vel, self.threshold);
        }
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

    /// Editing the Newton tolerance or step count or the Rayleigh coefficients of a running
    /// VariationalSymplecticSolver (implicit or explicit) is taken in place: its next steps
    /// equal bit for bit those of a solver initialised with the new values; the scheme, or a
    /// negative step count, re-initialise it.
    #[test]
    fn edits_update_in_place_variational_symplectic_parameters() {
        let edits: [&[(&str, &str)]; 4] = [
            &[("rayleighStiffness", "0.2")],
            &[("rayleighMass", "0.3")],
            &[("newtonError", "1e-9"), ("steps", "20")],
            &[("steps", "1"), ("rayleighMass", "0.05")],
        ];
        for explicit in ["0", "1"] {
            let before = [
                ("explicitIntegration", explicit),
                ("rayleighStiffness", "0.05"),
                ("rayleighMass", "0.1"),
            ];
            for after in edits {
                if explicit == "1" && after.iter().all(|(k, _)| *k != "rayleighMass") {
                    // the explicit scheme reads only rayleighMass
                    continue;
                }
                let mut ops = springs();
                let mut s = ode_initialised(VariationalSymplecticSolver::new(), &before);
                assert_eq!(step_and_edit(&mut s, &mut ops, after), Reaction::Updated);
                let fresh_attrs = [before.as_slice(), after].concat();
                let fresh = ode_initialised(VariationalSymplecticSolver::new(), &fresh_attrs);
                let old = ode_initialised(VariationalSymplecticSolver::new(), &before);
                let what = format!("explicit {explicit}: {after:?}");
                assert_same_steps(s, fresh, old, ops, &what);
            }
        }
        for edit in [("explicitIntegration", "1"), ("steps", "-1")] {
            let mut s = ode_initialised(VariationalSymplecticSolver::new(), &[]);
            let r = step_and_edit(&mut s, &mut springs(), &[edit]);
            assert_eq!(r, Reaction::Reinit, "{edit:?}");
        }
    }

    /// Editing `rate` or `threshold` of a DampVelocitySolver is taken in place: its next steps
    /// equal bit for bit those of a solver initialised with the new values; a value that is
    /// not finite re-initialises it (init reports it).
    #[test]
    fn edits_update_in_place_damp_velocity_rate_and_threshold() {
        let before = [("rate", "0.5"), ("threshold", "0")];
        let edits: [&[(&str, &str)]; 3] = [
            &[("rate", "2")],
            &[("threshold", "0.3")],
            &[("rate", "0"), ("threshold", "0.6")],
        ];
        for after in edits {
            let mut ops = springs();
            let mut s = ode_initialised(DampVelocitySolver::new(), &before);
            assert_eq!(step_and_edit(&mut s, &mut ops, after), Reaction::Updated);
            let fresh_attrs = [before.as_slice(), after].concat();
            let fresh = ode_initialised(DampVelocitySolver::new(), &fresh_attrs);
            let old = ode_initialised(DampVelocitySolver::new(), &before);
            assert_same_steps(s, fresh, old, ops, &format!("{after:?}"));
        }
        let mut s = ode_initialised(DampVelocitySolver::new(), &before);
        let r = step_and_edit(&mut s, &mut springs(), &[("rate", "inf")]);
        assert_eq!(r, Reaction::Reinit);
    }
}
