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
use canape_core::component::{MechanicalOps, OdeSolver, Role};
use canape_core::data::{base_fields, DataKind, DataTable};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext, NodeId, Scene};
use canape_core::state::VecId;
use std::collections::VecDeque;

/// The class name the scene gives the component.
pub const CLASS: &str = "BDFOdeSolver";

/// Orders above this one are not zero-stable (SOFA warns).
const MAX_STABLE_ORDER: i64 = 6;

#[derive(Clone)]
pub struct BdfOdeSolver {
    data: DataTable,
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
        let data = base_fields(DataTable::new())
            .with("order", DataKind::Int, "1", "Order of the numerical method")
            .with(
                "rayleighStiffness",
                DataKind::Real,
                "0",
                "Rayleigh damping coefficient related to stiffness, > 0",
            )
            .with(
                "rayleighMass",
                DataKind::Real,
                "0",
                "Rayleigh damping coefficient related to mass, > 0",
            )
            .with(
                "newtonSolver",
                DataKind::Str,
                "",
                "Link to a NewtonRaphsonSolver",
            )
            .with(
                "linearSolver",
                DataKind::Str,
                "",
                "Linear solver used by this component",
            );
        BdfOdeSolver {
            data,
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
        let order = self.data.int("order");
        if order <= 0 {
            // SOFA's order is unsigned; 0 is set back to 1
            ctx.warn(format!(
                "The method cannot have order {order}. Setting it to 1."
            ));
            // a Data declared Int always accepts "1"
            let _ = self.data.set_str("order", "1");
        } else if order > MAX_STABLE_ORDER {
            ctx.warn(format!("The method with order {order} is not zero-stable"));
        }
        self.order = usize::try_from(self.data.int("order").max(1)).unwrap_or(1);
        self.rayleigh_stiffness = self.data.real("rayleighStiffness");
        self.rayleigh_mass = self.data.real("rayleighMass");
        newton::check_linear_solver_link(ctx, self.data.str("linearSolver"));

        let link = self.data.str("newtonSolver").to_string();
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

impl_component!(BdfOdeSolver, "BDFOdeSolver", init);

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
mod tests {
    use super::*;
    use crate::newton::{NewtonRaphsonSolver, NewtonStatus};
    use crate::EulerImplicitSolver;
    use canape_core::component::{Component, SolveStats};
    use canape_core::diag::{Diagnostics, Severity};
    use canape_core::scene::AnyComponent;
    use std::collections::BTreeMap;

    // ---------------------------------------------------------------- coefficients

    fn coefs(times: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        coefficients(times, &mut a, &mut b);
        (a, b)
    }

    fn samples(start: f64, dt: f64, s: usize) -> Vec<f64> {
        let mut t = vec![start];
        for _ in 0..s {
            let last = *t.last().unwrap();
            t.push(last + dt);
        }
        t
    }

    #[test]
    fn constant_step_coefficients_are_the_bdf_table() {
        let table: [(&[f64], f64); 6] = [
            (&[-1.0, 1.0], 1.0),
            (&[1.0 / 3.0, -4.0 / 3.0, 1.0], 2.0 / 3.0),
            (&[-2.0 / 11.0, 9.0 / 11.0, -18.0 / 11.0, 1.0], 6.0 / 11.0),
            (
                &[3.0 / 25.0, -16.0 / 25.0, 36.0 / 25.0, -48.0 / 25.0, 1.0],
                12.0 / 25.0,
            ),
            (
                &[
                    -12.0 / 137.0,
                    75.0 / 137.0,
                    -200.0 / 137.0,
                    300.0 / 137.0,
                    -300.0 / 137.0,
                    1.0,
                ],
                60.0 / 137.0,
            ),
            (
                &[
                    10.0 / 147.0,
                    -72.0 / 147.0,
                    225.0 / 147.0,
                    -400.0 / 147.0,
                    450.0 / 147.0,
                    -360.0 / 147.0,
                    1.0,
                ],
                60.0 / 147.0,
            ),
        ];
        // SOFA's test starts and steps, a negative step included
        for (start, dt) in [(0.0, 0.01), (1.5, 0.3), (-2.0, 1.0), (3.0, -0.1)] {
            for (k, (want_a, want_b)) in table.iter().enumerate() {
                let s = k + 1;
                let (a, b) = coefs(&samples(start, dt, s));
                assert_eq!(a.len(), s + 1);
                for (got, want) in a.iter().zip(want_a.iter()) {
                    assert!((got - want).abs() < 1e-9, "s={s} {a:?}");
                }
                assert!((b[s] - want_b).abs() < 1e-9, "s={s} {b:?}");
                assert!(b[..s].iter().all(|&x| x == 0.0));
                assert_eq!(a[s], 1.0);
            }
        }
    }

    #[test]
    fn variable_step_coefficients_follow_the_step_ratio() {
        // h_{n−1} = 0.1, h_n = 0.25: ω = 2.5
        let (a, b) = coefs(&[0.0, 0.1, 0.35]);
        let w: f64 = 2.5;
        let d = 1.0 + 2.0 * w;
        assert!((a[0] - w * w / d).abs() < 1e-12, "{a:?}");
        assert!((a[1] + (1.0 + w) * (1.0 + w) / d).abs() < 1e-12, "{a:?}");
        assert!((b[2] - (1.0 + w) / d).abs() < 1e-12, "{b:?}");
        // consistency: Σ a_j = 0
        assert!(a.iter().sum::<f64>().abs() < 1e-12);
    }

    #[test]
    fn too_few_samples_give_no_coefficients() {
        let (a, b) = coefs(&[0.0]);
        assert!(a.is_empty() && b.is_empty());
    }

    // ---------------------------------------------------------------- a mock group

    /// A 1-D group: diagonal masses, a constant stiffness K = ∂f/∂x (dense), rest positions
    /// and a gravity; f = M g + K (x − x0). DOFs in `fixed` are projected out.
    struct Chain {
        vecs: BTreeMap<VecId, Vec<f64>>,
        mass: Vec<f64>,
        k: Vec<Vec<f64>>,
        rest: Vec<f64>,
        g: f64,
        fixed: Vec<usize>,
        next: u32,
        next_coord: u32,
        live: usize,
    }

    impl Chain {
        fn new(mass: &[f64], k: Vec<Vec<f64>>, rest: &[f64], g: f64) -> Self {
            let n = mass.len();
            let mut vecs = BTreeMap::new();
            for v in [VecId::POSITION, VecId::VELOCITY, VecId::FORCE] {
                vecs.insert(v, vec![0.0; n]);
            }
            vecs.insert(VecId::POSITION, rest.to_vec());
            Chain {
                vecs,
                mass: mass.to_vec(),
                k,
                rest: rest.to_vec(),
                g,
                fixed: Vec::new(),
                next: VecId::FIRST_TEMP,
                next_coord: VecId::FIRST_COORD_TEMP,
                live: 0,
            }
        }
        /// One free point of mass m under gravity g.
        fn falling(m: f64, g: f64) -> Self {
            Chain::new(&[m], vec![vec![0.0]], &[0.0], g)
        }
        /// Two points joined by a spring of stiffness `ks`, the first one also tied to its
        /// rest position by a spring `k0`.
        fn springs(ks: f64, k0: f64, g: f64) -> Self {
            Chain::new(
                &[1.5, 0.7],
                vec![vec![-ks - k0, ks], vec![ks, -ks]],
                &[0.0, 1.0],
                g,
            )
        }
        fn n(&self) -> usize {
            self.mass.len()
        }
        fn get(&mut self, v: VecId) -> &mut Vec<f64> {
            let n = self.n();
            self.vecs.entry(v).or_insert_with(|| vec![0.0; n])
        }
        fn val(&self, v: VecId) -> Vec<f64> {
            self.vecs[&v].clone()
        }
        fn kv(&self, v: &[f64]) -> Vec<f64> {
            self.k
                .iter()
                .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum())
                .collect()
        }
    }

    impl MechanicalOps for Chain {
        fn alloc(&mut self) -> VecId {
            self.next += 1;
            self.live += 1;
            let v = VecId(self.next);
            *self.get(v) = vec![0.0; self.n()];
            v
        }
        fn alloc_coord(&mut self) -> VecId {
            self.next_coord += 1;
            self.live += 1;
            let v = VecId(self.next_coord);
            *self.get(v) = vec![0.0; self.n()];
            v
        }
        fn free(&mut self, v: VecId) {
            self.live -= 1;
            self.vecs.remove(&v);
        }
        fn persistent(&mut self, key: u32) -> VecId {
            let v = VecId(VecId::FIRST_PERSISTENT + key);
            self.get(v);
            v
        }
        fn compute_force(&mut self, f: VecId) {
            let x = self.val(VecId::POSITION);
            let dx: Vec<f64> = x.iter().zip(&self.rest).map(|(a, b)| a - b).collect();
            let kx = self.kv(&dx);
            let out = (0..self.n())
                .map(|i| self.mass[i] * self.g + kx[i])
                .collect();
            *self.get(f) = out;
        }
        fn add_mbk_v(&mut self, out: VecId, v: VecId, m: f64, k: f64) {
            let v = self.val(v);
            let kv = self.kv(&v);
            let mass = self.mass.clone();
            for (i, o) in self.get(out).iter_mut().enumerate() {
                *o += m * mass[i] * v[i] + k * kv[i];
            }
        }
        fn add_mbk(&mut self, _: VecId, _: VecId, _: f64, _: f64, _: f64) {}
        fn project_response(&mut self, v: VecId) {
            let fixed = self.fixed.clone();
            let a = self.get(v);
            for i in fixed {
                a[i] = 0.0;
            }
        }
        fn accel_from_force(&mut self, _: VecId, _: VecId) {}
        fn compute_acc(&mut self, _: VecId, _: VecId, _: VecId, _: VecId) {}
        fn add_separate_gravity(&mut self, _: f64) {}
        fn v_eq(&mut self, a: VecId, b: VecId) {
            let b = self.val(b);
            *self.get(a) = b;
        }
        fn v_teq(&mut self, a: VecId, f: f64) {
            self.get(a).iter_mut().for_each(|x| *x *= f);
        }
        fn v_threshold(&mut self, a: VecId, t: f64) {
            // one value per point
            self.get(a)
                .iter_mut()
                .filter(|x| x.abs() < t)
                .for_each(|x| *x = 0.0);
        }
        fn v_peq(&mut self, a: VecId, b: VecId, f: f64) {
            let b = self.val(b);
            for (x, y) in self.get(a).iter_mut().zip(b) {
                *x += y * f;
            }
        }
        fn v_op(&mut self, a: VecId, b: VecId, c: VecId, f: f64) {
            let (b, c) = (self.val(b), self.val(c));
            *self.get(a) = b.iter().zip(c).map(|(p, q)| p + q * f).collect();
        }
        fn dot(&mut self, a: VecId, b: VecId) -> f64 {
            let b = self.val(b);
            self.get(a).iter().zip(b).map(|(p, q)| p * q).sum()
        }
        /// (m M + k K) x = rhs by Gaussian elimination (b·B = 0: no damping matrix), identity
        /// rows at the fixed DOFs.
        fn solve_linear(&mut self, m: f64, _b: f64, k: f64, x: VecId, rhs: VecId) -> SolveStats {
            let n = self.n();
            let mut a: Vec<Vec<f64>> = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| k * self.k[i][j] + if i == j { m * self.mass[i] } else { 0.0 })
                        .collect()
                })
                .collect();
            for &i in &self.fixed {
                for j in 0..n {
                    a[i][j] = f64::from(u8::from(i == j));
                    a[j][i] = f64::from(u8::from(i == j));
                }
            }
            let mut r = self.val(rhs);
            for c in 0..n {
                for row in c + 1..n {
                    let q = a[row][c] / a[c][c];
                    for j in c..n {
                        a[row][j] -= q * a[c][j];
                    }
                    r[row] -= q * r[c];
                }
            }
            let mut out = vec![0.0; n];
            for i in (0..n).rev() {
                let s: f64 = (i + 1..n).map(|j| a[i][j] * out[j]).sum();
                out[i] = (r[i] - s) / a[i][i];
            }
            *self.get(x) = out;
            SolveStats::default()
        }
    }

    // ---------------------------------------------------------------- solver set-up

    /// A solver as init leaves it with these settings, time starting at 0.
    fn bdf(order: usize, rm: f64, rs: f64, params: NewtonParams) -> BdfOdeSolver {
        let mut s = BdfOdeSolver::new();
        s.order = order;
        s.rayleigh_mass = rm;
        s.rayleigh_stiffness = rs;
        s.params = params;
        s.valid = true;
        s.started = true;
        s.times.push_back(0.0);
        s
    }

    fn run(solver: &mut dyn OdeSolver, ops: &mut Chain, dt: f64, steps: usize) -> Vec<[f64; 2]> {
        (0..steps)
            .map(|_| {
                solver.solve(ops, dt);
                [ops.val(VecId::POSITION)[0], ops.val(VecId::VELOCITY)[0]]
            })
            .collect()
    }

    #[test]
    fn order_two_free_fall_is_backward_euler_with_two_thirds_of_the_step() {
        // SOFA's aliased history (module doc): after the first (order 1) step,
        // v_{n+1} = v_n + (2/3)·h·g and x_{n+1} = x_n + (2/3)·h·v_{n+1}
        let mut ops = Chain::falling(2.0, -10.0);
        let mut s = bdf(2, 0.0, 0.0, NewtonParams::default());
        let got = run(&mut s, &mut ops, 0.01, 4);
        let v = [-0.1, -0.1 - 0.2 / 3.0, -0.1 - 0.4 / 3.0, -0.3];
        let x = [
            -0.001,
            -0.0021111111111111,
            -0.0036666666666667,
            -0.0056666666666667,
        ];
        for k in 0..4 {
            assert!((got[k][1] - v[k]).abs() < 1e-12, "v {k}: {:?}", got[k]);
            assert!((got[k][0] - x[k]).abs() < 1e-12, "x {k}: {:?}", got[k]);
        }
        // a true BDF2 would give v = −0.2 at the second step
        assert!((got[1][1] + 0.2).abs() > 0.03);
        assert_eq!(
            s.report().status,
            NewtonStatus::ConvergedResidualSuccessiveRatio
        );
        let (a, b) = s.last_coefficients();
        assert_eq!(a.len(), 3);
        assert!((b[2] - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(ops.live, 0);
    }

    #[test]
    fn order_three_ramps_up_through_orders_one_and_two() {
        let mut ops = Chain::falling(1.0, -10.0);
        let mut s = bdf(3, 0.0, 0.0, NewtonParams::default());
        assert_eq!(s.next_order(), 1);
        let got = run(&mut s, &mut ops, 0.01, 4);
        assert_eq!(s.next_order(), 3);
        // steps of h, 2/3·h, 6/11·h, 6/11·h
        let v2 = -0.1 - 0.2 / 3.0;
        let v = [-0.1, v2, v2 - 0.6 / 11.0, v2 - 1.2 / 11.0];
        for k in 0..4 {
            assert!((got[k][1] - v[k]).abs() < 1e-12, "{k}: {got:?}");
        }
        // the samples kept are the last four times
        let times: Vec<f64> = s.times.iter().copied().collect();
        assert_eq!(times.len(), 4);
        assert!((times[0] - 0.01).abs() < 1e-15 && (times[3] - 0.04).abs() < 1e-15);
    }

    /// SOFA's NewtonRaphsonSolver_test: one Newton iteration, one line-search try and every
    /// threshold off: v = g·dt and x = x_0 + v·dt at each step, DivergedMaxIterations.
    #[test]
    fn order_one_free_fall_with_a_single_iteration() {
        let mut ops = Chain::falling(1.0, -1.0);
        ops.vecs.insert(VecId::POSITION, vec![1.0]);
        ops.rest = vec![1.0];
        let p = NewtonParams {
            max_iterations: 1,
            max_line_search: 1,
            relative_successive: 0.0,
            relative_initial: 0.0,
            absolute_residual: 0.0,
            warn_diverge: false,
            ..NewtonParams::default()
        };
        let mut s = bdf(1, 0.0, 0.0, p);
        let (mut x, mut v) = (1.0, 0.0);
        for _ in 0..10 {
            s.solve(&mut ops, 0.1);
            v -= 0.1; // g·dt with g = −1
            x += v * 0.1;
            assert!((ops.val(VecId::VELOCITY)[0] - v).abs() < 1e-14);
            assert!((ops.val(VecId::POSITION)[0] - x).abs() < 1e-14);
            assert_eq!(s.report().status, NewtonStatus::DivergedMaxIterations);
            assert!(s.report().warnings.is_empty());
        }
    }

    #[test]
    fn no_force_is_an_equilibrium_and_nothing_moves() {
        let mut ops = Chain::falling(1.0, 0.0);
        ops.vecs.insert(VecId::POSITION, vec![1.0]);
        ops.rest = vec![1.0];
        let mut s = bdf(1, 0.0, 0.0, NewtonParams::default());
        s.solve(&mut ops, 0.1);
        assert_eq!(s.report().status, NewtonStatus::ConvergedEquilibrium);
        assert_eq!(ops.val(VecId::POSITION), [1.0]);
        assert_eq!(ops.val(VecId::VELOCITY), [0.0]);
    }

    fn euler_implicit(rm: f64, rs: f64) -> EulerImplicitSolver {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let placeholder = AnyComponent::Ode(Box::new(EulerImplicitSolver::new()));
        let id = scene.add_component(root, "euler", placeholder, None);
        let mut e = EulerImplicitSolver::new();
        e.data_mut()
            .set_str("rayleighMass", &rm.to_string())
            .unwrap();
        e.data_mut()
            .set_str("rayleighStiffness", &rs.to_string())
            .unwrap();
        let mut diags = Diagnostics::default();
        e.init(&mut InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        });
        e
    }

    #[test]
    fn order_one_is_euler_implicit_on_linear_springs() {
        let (rm, rs, dt) = (0.01, 0.01, 0.01);
        for fixed in [vec![], vec![0]] {
            let mut a = Chain::springs(1000.0, 50.0, -9.81);
            let mut b = Chain::springs(1000.0, 50.0, -9.81);
            // start away from equilibrium and moving
            for ops in [&mut a, &mut b] {
                ops.vecs.insert(VecId::POSITION, vec![0.0, 1.3]);
                ops.vecs.insert(VecId::VELOCITY, vec![0.0, -0.5]);
                ops.fixed = fixed.clone();
            }
            // the initial-equilibrium test off: with it, a step whose initial guess
            // x_n + h·v_n already has ‖r2‖ ≤ 1e-5 (as the free DOF passes its equilibrium)
            // keeps that explicit guess, as SOFA does
            let newton = NewtonParams {
                absolute_residual: 0.0,
                ..NewtonParams::default()
            };
            let mut bdf1 = bdf(1, rm, rs, newton);
            let mut euler = euler_implicit(rm, rs);
            let mut moved = 0.0f64;
            for _ in 0..200 {
                bdf1.solve(&mut a, dt);
                euler.solve(&mut b, dt);
                for v in [VecId::POSITION, VecId::VELOCITY] {
                    for (p, q) in a.val(v).iter().zip(b.val(v)) {
                        assert!((p - q).abs() < 1e-12, "{:?} vs {:?}", a.val(v), b.val(v));
                    }
                }
                moved = moved.max((a.val(VecId::POSITION)[1] - 1.3).abs());
            }
            assert!(moved > 0.1, "{moved}");
            if !fixed.is_empty() {
                assert_eq!(a.val(VecId::POSITION)[0], 0.0);
            }
        }
    }

    #[test]
    fn higher_orders_damp_a_spring_less_per_step_than_order_one_with_the_same_dt() {
        // the shortened effective step (b_s·h) integrates less time per step: after the same
        // number of steps the order-2 oscillator has advanced less phase
        let run_order = |order| {
            let mut ops = Chain::new(&[1.0], vec![vec![-1.0]], &[0.0], 0.0);
            ops.vecs.insert(VecId::POSITION, vec![1.0]);
            let mut s = bdf(order, 0.01, 0.01, NewtonParams::default());
            run(&mut s, &mut ops, 0.01, 100)
        };
        let (o1, o2) = (run_order(1), run_order(2));
        // x ≈ cos(t): order 1 after t = 1, order 2 after ≈ 0.01 + 99·(2/3)·0.01 ≈ 0.67
        assert!((o1[99][0] - 1f64.cos()).abs() < 0.02, "{:?}", o1[99]);
        assert!((o2[99][0] - 0.67f64.cos()).abs() < 0.02, "{:?}", o2[99]);
    }

    #[test]
    fn an_invalid_solver_or_a_zero_step_does_nothing() {
        let mut ops = Chain::falling(1.0, -10.0);
        let mut s = bdf(2, 0.0, 0.0, NewtonParams::default());
        s.solve(&mut ops, 0.0);
        s.solve(&mut ops, f64::NAN);
        assert_eq!(ops.val(VecId::VELOCITY), [0.0]);
        assert_eq!(s.next_order(), 1);
        s.valid = false;
        s.solve(&mut ops, 0.01);
        assert_eq!(ops.val(VecId::VELOCITY), [0.0]);
    }

    // ---------------------------------------------------------------- init

    fn init_bdf(
        scene: &mut Scene,
        node: NodeId,
        attrs: &[(&str, &str)],
    ) -> (BdfOdeSolver, Diagnostics) {
        let placeholder = AnyComponent::Ode(Box::new(BdfOdeSolver::new()));
        let id = scene.add_component(node, "bdf", placeholder, None);
        let mut s = BdfOdeSolver::new();
        for (k, v) in attrs {
            s.data_mut().set_str(k, v).unwrap();
        }
        let mut diags = Diagnostics::default();
        s.init(&mut InitContext {
            scene,
            node,
            id,
            diags: &mut diags,
        });
        (s, diags)
    }

    fn messages(d: &Diagnostics, severity: Severity) -> Vec<String> {
        d.iter()
            .filter(|x| x.severity == severity)
            .map(|x| x.message.clone())
            .collect()
    }

    fn add_newton(scene: &mut Scene, node: NodeId, iterations: &str) -> ComponentId {
        let mut nr = NewtonRaphsonSolver::new();
        nr.data_mut()
            .set_str("maxNbIterationsNewton", iterations)
            .unwrap();
        scene.add_component(node, "newton", AnyComponent::Passive(Box::new(nr)), None)
    }

    #[test]
    fn without_a_newton_solver_init_reports_an_error_and_solve_does_nothing() {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let (mut s, d) = init_bdf(&mut scene, root, &[("order", "2")]);
        assert_eq!(
            messages(&d, Severity::Error),
            ["A Newton-Raphson solver is required by this component but has not been found."]
        );
        let mut ops = Chain::falling(1.0, -10.0);
        s.solve(&mut ops, 0.01);
        assert_eq!(ops.val(VecId::VELOCITY), [0.0]);
    }

    #[test]
    fn init_finds_the_newton_solver_below_and_checks_the_order() {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let child = scene.add_node("child", Some(root));
        let nr = add_newton(&mut scene, child, "4");
        scene.time = 0.25;
        let (s, d) = init_bdf(&mut scene, root, &[("order", "0"), ("rayleighMass", "0.5")]);
        assert!(!d.has_errors());
        assert_eq!(
            messages(&d, Severity::Warning),
            ["The method cannot have order 0. Setting it to 1."]
        );
        assert_eq!(s.data.int("order"), 1);
        assert_eq!((s.order, s.rayleigh_mass), (1, 0.5));
        assert_eq!(s.newton_solver(), Some(nr));
        assert_eq!(s.params().max_iterations, 4);
        assert_eq!(s.times, [0.25]);

        let (s, d) = init_bdf(&mut scene, root, &[("order", "7")]);
        assert_eq!(
            messages(&d, Severity::Warning),
            ["The method with order 7 is not zero-stable"]
        );
        assert_eq!(s.order, 7);
    }

    #[test]
    fn rigid_states_are_refused_at_init() {
        use canape_core::state::MechanicalObject;
        use canape_types::DofType;
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        add_newton(&mut scene, root, "1");
        let child = scene.add_node("body", Some(root));
        let vec3 = AnyComponent::State(MechanicalObject::new(DofType::Vec3));
        scene.add_component(child, "points", vec3, None);
        let (s, d) = init_bdf(&mut scene, root, &[]);
        assert!(!d.has_errors() && s.valid);
        let other = scene.add_node("frame", Some(root));
        let rigid = AnyComponent::State(MechanicalObject::new(DofType::Rigid3));
        scene.add_component(other, "frame", rigid, None);
        let (mut s, d) = init_bdf(&mut scene, root, &[]);
        let errors = messages(&d, Severity::Error);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("rigid DOFs"), "{errors:?}");
        let mut ops = Chain::falling(1.0, -10.0);
        s.solve(&mut ops, 0.01);
        assert_eq!(ops.val(VecId::VELOCITY), [0.0]);
    }

    #[test]
    fn a_second_init_keeps_the_samples_and_the_ramp() {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        add_newton(&mut scene, root, "1");
        let (mut s, _) = init_bdf(&mut scene, root, &[("order", "2")]);
        let mut ops = Chain::falling(1.0, -10.0);
        s.solve(&mut ops, 0.01);
        assert_eq!(s.next_order(), 2);
        let placeholder = AnyComponent::Ode(Box::new(BdfOdeSolver::new()));
        let id = scene.add_component(root, "again", placeholder, None);
        let mut diags = Diagnostics::default();
        s.init(&mut InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        });
        assert_eq!(s.next_order(), 2);
        assert_eq!(s.times.len(), 2);
    }
}
