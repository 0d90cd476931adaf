//! BDFOdeSolver: SOFA's velocity-based Backward Differentiation Formula solver of any order,
//! with variable time steps, whose nonlinear system is solved by a NewtonRaphsonSolver
//! (Sofa/Component/ODESolver/Backward/src/sofa/component/odesolver/backward/BDFOdeSolver.cpp
//! and BaseLinearMultiStepMethod.cpp).
//!
//! Each step appends t + dt to the time samples, uses order s = min(order, solves + 1) (the
//! order ramps up while the history fills), computes the multistep coefficients a_j, b_j by
//! differentiating the Lagrange polynomial through the last s + 1 samples ([`coefficients`]),
//! and runs Newton on the unknowns (x, v) of the new step:
//!
//! - r1 = Σ a_j x_j − h Σ b_j v_j (position equation),
//! - r2 = M Σ a_j v_j − h Σ b_j f_j with f = F(x, v) − rayleighMass·M v + rayleighStiffness·K v
//!   (momentum equation; its norm is the Newton residual),
//! - x is eliminated with the linearised r1, so every Newton step solves
//!   [(a_s + h b_s rm) M − h b_s B − h b_s (rs + h b_s / a_s) K] dv = −r2 − (h b_s / a_s) K r1,
//!   then v += α dv and x += (h b_s / a_s) dv − r1 / a_s.
//!
//! At order 1 this is EulerImplicitSolver's step with the same Rayleigh factors.
//!
//! # SOFA quirk, reproduced on purpose
//!
//! SOFA keeps the history in a table of vector ids whose slots are only allocated when null;
//! the slot of the previous step is set to the state's own position/velocity every solve, so
//! from the second solve on **every history slot j < s is the current state (x_n, v_n)**: no
//! older state is ever used. Since Σ_{j<s} a_j = −1, what SOFA computes at order s ≥ 2 is
//! backward Euler with the shortened step b_s·h (2/3·h at order 2, 6/11·h at order 3) while the
//! time advances by h: a free fall at g = −10, h = 0.01 and order 2 gives
//! v = −0.1, −0.1667, −0.2333, −0.3 instead of −0.1, −0.2, −0.3, −0.4. This solver does the
//! same, term by term (the sums Σ a_j x_n are formed one slot at a time as SOFA does), because
//! SOFA's scenes define the expected results; the history of a true BDF is not kept.
//!
//! # Other differences
//!
//! - SOFA projects positions and velocities (projective constraints) after every Newton
//!   update; here the projected correction keeps constrained DOFs where they are during the
//!   iterations, and the animation loop projects after the step. This only differs for
//!   constraints that move DOFs (prescribed motions), whose intermediate residuals differ.
//! - The time samples are accumulated from the scene time at init (t += dt, as the animation
//!   loop does). SOFA's `reset` restarts them and the order ramp; Canapé's ODE solvers have no
//!   reset hook, so a simulation reset continues with the current samples and order.
//! - The unknowns r1 of the right-hand side's K·r1 are propagated down the mappings (SOFA's
//!   addMBKv on a temporary leaves the mapped copies stale); identical without mechanical
//!   mappings.
//! - Rigid DOFs are refused at init (SOFA fails at run time on coordinate-to-derivative sums).
//! - A zero or non-finite dt leaves the state untouched (SOFA divides by zero).

use crate::newton::{self, newton_solve, NewtonParams, NewtonReport, NonLinearFunction};
use canape_core::component::{MechanicalOps, OdeSolver, Reaction, Role};
use canape_core::data::{base_fields, ChangedData, DataKind, DataTable, Int, Real, Text, Value};
use canape_core::scene::{ComponentId, InitContext, NodeId, Scene};
use canape_core::state::VecId;
use std::collections::VecDeque;

/// The class name the scene gives the component.
pub const CLASS: &str = "BDFOdeSolver";

/// Orders above this one are not zero-stable (SOFA warns).
const MAX_STABLE_ORDER: i64 = 6;

canape_core::data_schema! {
    /// BDFOdeSolver's Data (after the base Data).
    pub struct BdfData {
        order: Int = ("order", DataKind::Int, "1", "Order of the numerical method"),
        rayleigh_stiffness: Real = ("rayleighStiffness", DataKind::Real, "0", "Rayleigh damping coefficient related to stiffness, > 0"),
        rayleigh_mass: Real = ("rayleighMass", DataKind::Real, "0", "Rayleigh damping coefficient related to mass, > 0"),
        newton_solver: Text = ("newtonSolver", DataKind::Str, "", "Link to a NewtonRaphsonSolver"),
        linear_solver: Text = ("linearSolver", DataKind::Str, "", "Linear solver used by this component"),
    }
}

#[derive(Clone)]
pub struct BdfOdeSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: BdfData,
    order: usize,
    rayleigh_stiffness: f64,
    rayleigh_mass: f64,
    params: NewtonParams,
    /// The NewtonRaphsonSolver the parameters come from.
    newton: Option<ComponentId>,
    /// False when init found no NewtonRaphsonSolver or refused the states: `solve` does nothing.
    valid: bool,
    /// Set by the first init: a later init (a Data edit) keeps the samples and the ramp.
    started: bool,
    /// Time samples t_{n+1−s} … t_{n+1} of the last solve.
    times: VecDeque<f64>,
    /// Solves done (drives the order ramp-up).
    solves: usize,
    /// Coefficients of the last solve, reused from step to step.
    a: Vec<f64>,
    b: Vec<f64>,
    report: NewtonReport,
}

impl Default for BdfOdeSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl BdfOdeSolver {
    pub fn new() -> Self {
        let (data, d) = BdfData::declare(base_fields(DataTable::new()));
        BdfOdeSolver {
            data,
            d,
            order: 1,
            rayleigh_stiffness: 0.0,
            rayleigh_mass: 0.0,
            params: NewtonParams::default(),
            newton: None,
            valid: false,
            started: false,
            times: VecDeque::new(),
            solves: 0,
            a: Vec::new(),
            b: Vec::new(),
            report: NewtonReport::default(),
        }
    }

    /// The Newton parameters in use.
    pub fn params(&self) -> &NewtonParams {
        &self.params
    }

    /// The NewtonRaphsonSolver component the parameters come from.
    pub fn newton_solver(&self) -> Option<ComponentId> {
        self.newton
    }

    /// What the last solve's Newton iterations did.
    pub fn report(&self) -> &NewtonReport {
        &self.report
    }

    /// The order the next solve uses (the ramp-up: 1, 2, … up to `order`).
    pub fn next_order(&self) -> usize {
        self.order.min(self.solves + 1).max(1)
    }

    /// The coefficients (a_0 … a_s, b_0 … b_s) of the last solve.
    pub fn last_coefficients(&self) -> (&[f64], &[f64]) {
        (&self.a, &self.b)
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let order = self.data.get(self.d.order);
        if order <= 0 {
            // SOFA's order is unsigned; 0 is set back to 1
            ctx.warn(format!(
                "The method cannot have order {order}. Setting it to 1."
            ));
            // a Data declared Int always accepts an integer
            let _ = self.data.put(self.d.order, Value::Int(1));
        } else if order > MAX_STABLE_ORDER {
            ctx.warn(format!("The method with order {order} is not zero-stable"));
        }
        self.order = usize::try_from(self.data.get(self.d.order).max(1)).unwrap_or(1);
        self.read_rayleigh();
        newton::check_linear_solver_link(ctx, self.data.get(self.d.linear_solver));

        let link = self.data.get(self.d.newton_solver).to_string();
        self.valid = match newton::resolve_newton(ctx, &link) {
            Some((id, params)) => {
                self.newton = Some(id);
                self.params = params;
                true
            }
            None => {
                ctx.error(
                    "A Newton-Raphson solver is required by this component but has not been found.",
                );
                self.newton = None;
                false
            }
        };
        if let Some(label) = rigid_independent_state(ctx.scene, ctx.node) {
            ctx.error(format!("{label} has rigid DOFs: the BDF sums of coordinates and derivatives are only defined on vector DOFs"));
            self.valid = false;
        }
        if !self.started {
            self.started = true;
            self.times.clear();
            self.times.push_back(ctx.scene.time);
            self.solves = 0;
        }
        self.report = NewtonReport::default();
    }
}

impl BdfOdeSolver {
    /// Take the Rayleigh coefficients from the Data.
    fn read_rayleigh(&mut self) {
        self.rayleigh_stiffness = self.data.get(self.d.rayleigh_stiffness);
        self.rayleigh_mass = self.data.get(self.d.rayleigh_mass);
    }

    /// The Rayleigh coefficients are read at each solve: an edit of them alone is taken in
    /// place; anything else (order, links) re-runs init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        if !changed.only(&[d.rayleigh_stiffness.index(), d.rayleigh_mass.index()]) {
            return Reaction::Reinit;
        }
        self.read_rayleigh();
        Reaction::Updated
    }
}

canape_core::impl_component!(BdfOdeSolver, "BDFOdeSolver", init, data_changed);

/// The label of a rigid state this solver would integrate: one in `node` or below (not below
/// another ODE solver) that no mapping of its node drives.
fn rigid_independent_state(scene: &Scene, node: NodeId) -> Option<String> {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let nd = scene.node(n);
        if !nd.activated
            || (n != node && scene.node_components(n, Role::OdeSolver).next().is_some())
        {
            continue;
        }
        let mapped = nd.missing_mapping || scene.node_components(n, Role::Mapping).next().is_some();
        if !mapped {
            for c in scene.node_components(n, Role::State) {
                if scene.state(c).is_some_and(|s| s.dof.is_rigid()) {
                    return Some(scene.component_label(c));
                }
            }
        }
        stack.extend(nd.children.iter().rev().copied());
    }
    None
}

/// The coefficients of the BDF through the time samples τ_0 … τ_s (τ_s the new time), as
/// SOFA's BaseLinearMultiStepMethod computes them: a_j = h_s·L_j'(τ_s) with L_j the Lagrange
/// basis polynomials and h_s = τ_s − τ_{s−1}, normalised so that a_s = 1; b_s = 1 / a_s before
/// the normalisation, b_j = 0 for j < s. Needs at least two distinct samples (`a`, `b` are left
/// empty otherwise); the operations are SOFA's, in its order.
pub fn coefficients(times: &[f64], a: &mut Vec<f64>, b: &mut Vec<f64>) {
    a.clear();
    b.clear();
    if times.len() < 2 {
        return;
    }
    let s = times.len() - 1;
    let ts = times[s];
    for j in 0..=s {
        let mut aj = 0.0;
        for i in (0..=s).filter(|&i| i != j) {
            let mut p = 1.0;
            for m in (0..=s).filter(|&m| m != i && m != j) {
                p *= (ts - times[m]) / (times[j] - times[m]);
            }
            aj += p / (times[j] - times[i]);
        }
        a.push(aj);
    }
    let hs = ts - times[s - 1];
    for aj in a.iter_mut() {
        *aj *= hs;
    }
    let last = a[s];
    for aj in &mut a[..s] {
        *aj /= last;
    }
    b.resize(s + 1, 0.0);
    b[s] = 1.0 / last;
    a[s] = 1.0;
}

/// The temporary vectors of one solve.
struct Work {
    /// x_n, v_n: what every history slot holds (SOFA's aliasing, see the module doc).
    xn: VecId,
    vn: VecId,
    r1: VecId,
    r2: VecId,
    tmp: VecId,
    rhs: VecId,
    dv: VecId,
    dx: VecId,
}

/// The BDF residual of one step; the unknowns (x_s, v_s) live in the state's POSITION and
/// VELOCITY, f_s in FORCE.
struct BdfResidual<'a> {
    ops: &'a mut dyn MechanicalOps,
    w: Work,
    a: &'a [f64],
    b: &'a [f64],
    h: f64,
    rm: f64,
    rs: f64,
}

impl BdfResidual<'_> {
    fn s(&self) -> usize {
        self.a.len() - 1
    }
    fn x(&self, j: usize) -> VecId {
        if j < self.s() {
            self.w.xn
        } else {
            VecId::POSITION
        }
    }
    fn v(&self, j: usize) -> VecId {
        if j < self.s() {
            self.w.vn
        } else {
            VecId::VELOCITY
        }
    }
    /// h·b_s / a_s
    fn c(&self) -> f64 {
        let s = self.s();
        self.h * self.b[s] / self.a[s]
    }
}

impl NonLinearFunction for BdfResidual<'_> {
    fn evaluate(&mut self) {
        let (h, s) = (self.h, self.s());
        let w = &self.w;
        let ops = &mut *self.ops;
        ops.compute_force(VecId::FORCE);
        ops.add_mbk_v(VecId::FORCE, VecId::VELOCITY, -self.rm, self.rs);
        ops.project_response(VecId::FORCE);
        ops.v_teq(w.r1, 0.0);
        ops.v_teq(w.r2, 0.0);
        for j in 0..=s {
            if self.a[j] != 0.0 {
                let xj = if j < s { w.xn } else { VecId::POSITION };
                ops.v_peq(w.r1, xj, self.a[j]);
            }
        }
        for j in 0..=s {
            if self.b[j] != 0.0 {
                let vj = if j < s { w.vn } else { VecId::VELOCITY };
                ops.v_peq(w.r1, vj, -h * self.b[j]);
            }
        }
        ops.v_teq(w.tmp, 0.0);
        for j in 0..=s {
            if self.a[j] != 0.0 {
                let vj = if j < s { w.vn } else { VecId::VELOCITY };
                ops.v_peq(w.tmp, vj, self.a[j]);
            }
        }
        ops.add_mbk_v(w.r2, w.tmp, 1.0, 0.0);
        // b_j = 0 for j < s: only the new step's force enters
        if self.b[s] != 0.0 {
            ops.v_peq(w.r2, VecId::FORCE, -h * self.b[s]);
        }
        ops.project_response(w.r1);
        ops.project_response(w.r2);
    }

    fn squared_norm_last_evaluation(&mut self) -> f64 {
        self.ops.dot(self.w.r2, self.w.r2)
    }

    /// The matrix is assembled by the solve; here the right-hand side
    /// −r2 − (h b_s / a_s)·K·r1.
    fn compute_gradient(&mut self) {
        let c = self.c();
        let w = &self.w;
        self.ops.v_eq(w.rhs, w.r2);
        self.ops.v_teq(w.rhs, -1.0);
        self.ops.add_mbk_v(w.rhs, w.r1, 0.0, -c);
        self.ops.project_response(w.rhs);
    }

    fn solve_linear(&mut self) {
        let s = self.s();
        let hb = self.h * self.b[s];
        let m = self.a[s] + hb * self.rm;
        let k = -hb * (self.rs + self.c());
        let w = &self.w;
        // a zero initial guess, as SOFA clears dv
        self.ops.v_teq(w.dv, 0.0);
        self.ops.solve_linear(m, -hb, k, w.dv, w.rhs);
    }

    /// v += α·dv; x moves to agree with the linearised position equation for the full dv
    /// (SOFA does not scale this part by α: see BaseLinearMultiStepMethod.cpp).
    fn update_guess(&mut self, alpha: f64) {
        let c = self.c();
        let inv_as = 1.0 / self.a[self.s()];
        let (xs, vs) = (self.x(self.s()), self.v(self.s()));
        let w = &self.w;
        self.ops.v_peq(vs, w.dv, alpha);
        self.ops.v_eq(w.dx, w.dv);
        self.ops.v_teq(w.dx, c);
        self.ops.v_peq(w.dx, w.r1, -inv_as);
        self.ops.v_peq(xs, w.dx, 1.0);
    }

    fn squared_norm_dx(&mut self) -> f64 {
        self.ops.dot(self.w.dv, self.w.dv)
    }

    fn squared_last_evaluation(&mut self) -> f64 {
        self.ops.dot(VecId::VELOCITY, VecId::VELOCITY)
    }
}

impl OdeSolver for BdfOdeSolver {
    fn init_sources(&self) -> Vec<ComponentId> {
        self.newton.into_iter().collect()
    }
    fn solve(&mut self, ops: &mut dyn MechanicalOps, dt: f64) {
        if !self.valid || dt == 0.0 || !dt.is_finite() {
            return;
        }
        let s = self.next_order();
        let t = self.times.back().copied().unwrap_or(0.0);
        self.times.push_back(t + dt);
        while self.times.len() > s + 1 {
            self.times.pop_front();
        }
        coefficients(self.times.make_contiguous(), &mut self.a, &mut self.b);
        if self.a.len() != s + 1 {
            // fewer samples than the order: only after the samples were cleared by hand
            return;
        }

        let w = Work {
            xn: ops.alloc_coord(),
            vn: ops.alloc(),
            r1: ops.alloc(),
            r2: ops.alloc(),
            tmp: ops.alloc(),
            rhs: ops.alloc(),
            dv: ops.alloc(),
            dx: ops.alloc(),
        };
        ops.v_eq(w.xn, VecId::POSITION);
        ops.v_eq(w.vn, VecId::VELOCITY);
        // initial guess: x_s = x_n + h·v_n, v_s = v_n (mappings follow in compute_force)
        ops.v_peq(VecId::POSITION, VecId::VELOCITY, dt);

        let ids = [w.xn, w.vn, w.r1, w.r2, w.tmp, w.rhs, w.dv, w.dx];
        let mut f = BdfResidual {
            ops,
            w,
            a: &self.a,
            b: &self.b,
            h: dt,
            rm: self.rayleigh_mass,
            rs: self.rayleigh_stiffness,
        };
        newton_solve(&self.params, &mut f, &mut self.report);
        for id in ids {
            ops.free(id);
        }
        self.solves += 1;
    }
}

#[cfg(test)]
pub(crate) mod mock_group;
#[cfg(test)]
mod tests;
