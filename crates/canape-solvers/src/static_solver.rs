//! StaticSolver: static equilibrium F(x) = 0 solved by a NewtonRaphsonSolver, as SOFA's
//! current StaticSolver does (Sofa/Component/ODESolver/Backward/src/sofa/component/odesolver/
//! backward/StaticSolver.cpp). The unknown is the position, the residual the projected total
//! force, the Jacobian −K: each Newton step solves (−K)·dx = F with the group's linear solver.
//! Velocities are not used.
//!
//! The Newton parameters come from the NewtonRaphsonSolver the `newtonSolver` link names, else
//! the first one in this node or below. Without one, SOFA creates a default NewtonRaphsonSolver
//! and forwards the StaticSolver's removed Newton Data to it; here the default parameters live
//! in the StaticSolver itself, with the same forwarding (including SOFA's mapping of
//! `relative_residual_tolerance_threshold` onto the relative estimate-difference threshold).

use crate::newton::{self, newton_solve, NewtonParams, NewtonReport, NonLinearFunction};
use canape_core::component::{MechanicalOps, OdeSolver};
use canape_core::data::{base_fields, Data, DataKind, DataTable, Real, Text};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext};
use canape_core::state::VecId;

/// The help SOFA gives the removed Newton Data.
const REMOVED_HELP: &str =
    "The Data related to the Newton-Raphson parameters must be defined in the NewtonRaphsonSolver component.";

/// The removed Newton Data SOFA still reads, and the NewtonRaphsonSolver Data each is forwarded
/// to, in SOFA's order: `relative_residual_tolerance_threshold` goes to the relative
/// estimate-difference threshold (not the relative initial one), after and over
/// `relative_correction_tolerance_threshold`, as SOFA's table does.
const LEGACY: [(&str, &str); 5] = [
    ("newton_iterations", "maxNbIterationsNewton"),
    (
        "absolute_correction_tolerance_threshold",
        "absoluteEstimateDifferenceThreshold",
    ),
    (
        "relative_correction_tolerance_threshold",
        "relativeEstimateDifferenceThreshold",
    ),
    (
        "absolute_residual_tolerance_threshold",
        "absoluteResidualStoppingThreshold",
    ),
    (
        "relative_residual_tolerance_threshold",
        "relativeEstimateDifferenceThreshold",
    ),
];

/// Removed without forwarding.
const LEGACY_DROPPED: &str = "should_diverge_when_residual_is_growing";

canape_core::data_schema! {
    /// StaticSolver's Data (after the base Data): the links, then the removed Newton Data SOFA
    /// still reads.
    pub struct StaticData {
        newton_solver: Text = ("newtonSolver", DataKind::Str, "", "Link to a NewtonRaphsonSolver"),
        linear_solver: Text = ("linearSolver", DataKind::Str, "", "Linear solver used by this component"),
        newton_iterations: Real = ("newton_iterations", DataKind::Real, "", REMOVED_HELP),
        absolute_correction: Real = ("absolute_correction_tolerance_threshold", DataKind::Real, "", REMOVED_HELP),
        relative_correction: Real = ("relative_correction_tolerance_threshold", DataKind::Real, "", REMOVED_HELP),
        absolute_residual: Real = ("absolute_residual_tolerance_threshold", DataKind::Real, "", REMOVED_HELP),
        relative_residual: Real = ("relative_residual_tolerance_threshold", DataKind::Real, "", REMOVED_HELP),
        diverge_when_growing: Text = (LEGACY_DROPPED, DataKind::Str, "", REMOVED_HELP),
    }
}

impl StaticData {
    /// The removed Newton Data with their names, in [`LEGACY`]'s order.
    fn legacy(&self) -> [(Data<Real>, &'static str, &'static str); 5] {
        let handles = [
            self.newton_iterations,
            self.absolute_correction,
            self.relative_correction,
            self.absolute_residual,
            self.relative_residual,
        ];
        std::array::from_fn(|i| (handles[i], LEGACY[i].0, LEGACY[i].1))
    }
}

#[derive(Clone)]
pub struct StaticSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: StaticData,
    params: NewtonParams,
    /// The NewtonRaphsonSolver the parameters come from (None: the default one).
    newton: Option<ComponentId>,
    report: NewtonReport,
}

impl Default for StaticSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl StaticSolver {
    pub fn new() -> Self {
        let (data, d) = StaticData::declare(base_fields(DataTable::new()));
        StaticSolver {
            data,
            d,
            params: NewtonParams::default(),
            newton: None,
            report: NewtonReport::default(),
        }
    }

    /// The Newton parameters in use.
    pub fn params(&self) -> &NewtonParams {
        &self.params
    }

    /// The NewtonRaphsonSolver component the parameters come from; None when the default one
    /// (SOFA's automatically created solver) is used.
    pub fn newton_solver(&self) -> Option<ComponentId> {
        self.newton
    }

    /// What the last solve did: status, iterations, squared residual norms, warnings.
    pub fn report(&self) -> &NewtonReport {
        &self.report
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        // SOFA's parse: each removed Data given is read and reported
        let mut legacy: Vec<(&str, &str, f64)> = Vec::new();
        for (handle, old, new) in self.d.legacy() {
            if self.data.was_set(handle) {
                legacy.push((old, new, self.data.get(handle)));
                ctx.warn(format!("The attribute '{old}' is no longer defined in this component. Instead, define the attribute '{new}' in the NewtonRaphsonSolver component associated with this StaticSolver."));
            }
        }
        if self.data.was_set(self.d.diverge_when_growing) {
            ctx.warn(format!(
                "The attribute '{LEGACY_DROPPED}' has been removed: {REMOVED_HELP}"
            ));
        }
        newton::check_linear_solver_link(ctx, self.data.get(self.d.linear_solver));

        let link = self.data.get(self.d.newton_solver).to_string();
        match newton::resolve_newton(ctx, &link) {
            Some((id, params)) => {
                self.newton = Some(id);
                self.params = params;
            }
            None => {
                ctx.warn("A Newton-Raphson solver is required by this component but has not been found. It will be created automatically");
                self.newton = None;
                self.params = NewtonParams::default();
                for (old, new, value) in legacy {
                    if apply_legacy(&mut self.params, new, value) {
                        ctx.warn(format!("The attribute '{new}' of the default NewtonRaphsonSolver is set from the deprecated attribute '{old}'. This will be removed in the future."));
                    } else {
                        ctx.warn(format!("The deprecated attribute '{old}' = {value} is not a valid '{new}': the default is kept"));
                    }
                }
            }
        }
        self.report = NewtonReport::default();
    }
}

/// Set NewtonRaphsonSolver Data `name` of `p` from a removed StaticSolver Data (SOFA reads it
/// as a real and converts it). False when the value cannot be one.
fn apply_legacy(p: &mut NewtonParams, name: &str, value: f64) -> bool {
    if !value.is_finite() {
        return false;
    }
    match name {
        "maxNbIterationsNewton" => {
            if value < 0.0 {
                return false;
            }
            // SOFA keeps the integer part
            p.max_iterations = value as usize;
        }
        "absoluteEstimateDifferenceThreshold" => p.absolute_estimate = value,
        "relativeEstimateDifferenceThreshold" => p.relative_estimate = value,
        "absoluteResidualStoppingThreshold" => p.absolute_residual = value,
        _ => return false,
    }
    true
}

impl_component!(StaticSolver, "StaticSolver", init);

/// The static residual: y = x, r(x) = F(x) projected, J = −K, and the Newton correction in a
/// vector kept from step to step (SOFA's dx, the warm start of iterative linear solvers).
struct StaticResidual<'a> {
    ops: &'a mut dyn MechanicalOps,
    dx: VecId,
}

impl NonLinearFunction for StaticResidual<'_> {
    fn evaluate(&mut self) {
        self.ops.compute_force(VecId::FORCE);
        self.ops.project_response(VecId::FORCE);
    }
    fn squared_norm_last_evaluation(&mut self) -> f64 {
        self.ops.dot(VecId::FORCE, VecId::FORCE)
    }
    /// The matrix (0·M + 0·B − 1·K) is assembled by the solve.
    fn compute_gradient(&mut self) {}
    fn solve_linear(&mut self) {
        self.ops.solve_linear(0.0, 0.0, -1.0, self.dx, VecId::FORCE);
    }
    /// The mapped states follow in the next force computation.
    fn update_guess(&mut self, alpha: f64) {
        self.ops.v_peq(VecId::POSITION, self.dx, alpha);
    }
    fn squared_norm_dx(&mut self) -> f64 {
        self.ops.dot(self.dx, self.dx)
    }
    /// x·x over the position coordinates (only read by the relative estimate-difference test).
    /// On Rigid3 states the group's `dot` walks coordinates by derivative-sized blocks of 6 and
    /// misses the last (points mod 6) values of the 7-value coordinates.
    fn squared_last_evaluation(&mut self) -> f64 {
        self.ops.dot(VecId::POSITION, VecId::POSITION)
    }
}

impl OdeSolver for StaticSolver {
    fn init_sources(&self) -> Vec<ComponentId> {
        self.newton.into_iter().collect()
    }
    fn solve(&mut self, ops: &mut dyn MechanicalOps, _dt: f64) {
        let dx = ops.persistent(0);
        let mut f = StaticResidual { ops, dx };
        newton_solve(&self.params, &mut f, &mut self.report);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::newton::{NewtonRaphsonSolver, NewtonStatus};
    use canape_core::component::{Component, SolveStats};
    use canape_core::diag::{Diagnostics, Severity};
    use canape_core::scene::{AnyComponent, NodeId, Scene};
    use std::collections::BTreeMap;

    /// Independent springs with a cubic hardening, one per DOF: F_i(x) = f_i − k_i·x_i − c·x_i³
    /// (K_i = −k_i − 3c·x_i²), DOFs in `fixed` projected out.
    struct Springs {
        vecs: BTreeMap<VecId, Vec<f64>>,
        ext: Vec<f64>,
        k: Vec<f64>,
        c: f64,
        fixed: Vec<usize>,
        /// K at the last force computation.
        kx: Vec<f64>,
        next: u32,
        solves: usize,
    }

    impl Springs {
        fn new(ext: &[f64], k: &[f64], c: f64) -> Self {
            let n = ext.len();
            let mut vecs = BTreeMap::new();
            for v in [VecId::POSITION, VecId::VELOCITY, VecId::FORCE] {
                vecs.insert(v, vec![0.0; n]);
            }
            Springs {
                vecs,
                ext: ext.to_vec(),
                k: k.to_vec(),
                c,
                fixed: Vec::new(),
                kx: vec![0.0; n],
                next: VecId::FIRST_TEMP,
                solves: 0,
            }
        }
        fn n(&self) -> usize {
            self.ext.len()
        }
        fn get(&mut self, v: VecId) -> &mut Vec<f64> {
            let n = self.n();
            self.vecs.entry(v).or_insert_with(|| vec![0.0; n])
        }
        fn x(&self) -> &[f64] {
            &self.vecs[&VecId::POSITION]
        }
    }

    impl MechanicalOps for Springs {
        fn alloc(&mut self) -> VecId {
            self.next += 1;
            let v = VecId(self.next);
            self.get(v);
            v
        }
        fn alloc_coord(&mut self) -> VecId {
            self.alloc()
        }
        fn free(&mut self, v: VecId) {
            self.vecs.remove(&v);
        }
        fn persistent(&mut self, key: u32) -> VecId {
            let v = VecId(VecId::FIRST_PERSISTENT + key);
            self.get(v);
            v
        }
        fn compute_force(&mut self, f: VecId) {
            let x = self.x().to_vec();
            let out: Vec<f64> = (0..self.n())
                .map(|i| self.ext[i] - self.k[i] * x[i] - self.c * x[i] * x[i] * x[i])
                .collect();
            self.kx = (0..self.n())
                .map(|i| -self.k[i] - 3.0 * self.c * x[i] * x[i])
                .collect();
            *self.get(f) = out;
        }
        fn add_mbk_v(&mut self, _out: VecId, _v: VecId, _m: f64, _k: f64) {}
        fn add_mbk(&mut self, _out: VecId, _v: VecId, _m: f64, _b: f64, _k: f64) {}
        fn project_response(&mut self, v: VecId) {
            let fixed = self.fixed.clone();
            let a = self.get(v);
            for i in fixed {
                a[i] = 0.0;
            }
        }
        fn accel_from_force(&mut self, _a: VecId, _f: VecId) {}
        fn compute_acc(&mut self, _a: VecId, _f: VecId, _x: VecId, _v: VecId) {}
        fn add_separate_gravity(&mut self, _dt: f64) {}
        fn v_eq(&mut self, a: VecId, b: VecId) {
            let b = self.get(b).clone();
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
            let b = self.get(b).clone();
            for (x, y) in self.get(a).iter_mut().zip(b) {
                *x += y * f;
            }
        }
        fn v_op(&mut self, a: VecId, b: VecId, c: VecId, f: f64) {
            let (b, c) = (self.get(b).clone(), self.get(c).clone());
            *self.get(a) = b.iter().zip(c).map(|(p, q)| p + q * f).collect();
        }
        fn dot(&mut self, a: VecId, b: VecId) -> f64 {
            let b = self.get(b).clone();
            self.get(a).iter().zip(b).map(|(p, q)| p * q).sum()
        }
        /// Diagonal system (k·K)·x = rhs, with identity rows at the fixed DOFs.
        fn solve_linear(&mut self, _m: f64, _b: f64, k: f64, x: VecId, rhs: VecId) -> SolveStats {
            self.solves += 1;
            let rhs = self.get(rhs).clone();
            let kx = self.kx.clone();
            let fixed = self.fixed.clone();
            let out = self.get(x);
            for i in 0..rhs.len() {
                out[i] = if fixed.contains(&i) {
                    rhs[i]
                } else {
                    rhs[i] / (k * kx[i])
                };
            }
            SolveStats::default()
        }
    }

    fn solver_with(params: NewtonParams) -> StaticSolver {
        let mut s = StaticSolver::new();
        s.params = params;
        s
    }

    #[test]
    fn the_default_newton_takes_one_iteration_with_a_line_search() {
        // x + x³ = 2 has the root 1: from 0 the Newton step goes to 2 (residual −8, worse
        // than the initial 2), half of it lands on the root exactly
        let mut ops = Springs::new(&[2.0], &[1.0], 1.0);
        let mut s = solver_with(NewtonParams::default());
        s.solve(&mut ops, 1.0);
        assert_eq!(ops.x(), [1.0]);
        let r = s.report();
        assert_eq!(r.residuals, [4.0, 0.0]);
        assert_eq!(r.status, NewtonStatus::ConvergedResidualSuccessiveRatio);
        assert_eq!((r.iterations, ops.solves), (1, 1));
        assert!(r.warnings.is_empty());
        // at equilibrium the next step does not move (and does not solve)
        s.solve(&mut ops, 1.0);
        assert_eq!(s.report().status, NewtonStatus::ConvergedEquilibrium);
        assert_eq!((ops.x()[0], ops.solves), (1.0, 1));
    }

    #[test]
    fn one_line_search_try_keeps_the_full_step() {
        let mut ops = Springs::new(&[2.0], &[1.0], 1.0);
        let mut s = solver_with(NewtonParams {
            max_line_search: 1,
            ..NewtonParams::default()
        });
        s.solve(&mut ops, 1.0);
        assert_eq!(ops.x(), [2.0]);
        assert_eq!(s.report().residuals, [4.0, 64.0]);
        assert_eq!(s.report().status, NewtonStatus::DivergedMaxIterations);
        assert_eq!(s.report().warnings.len(), 2);
    }

    #[test]
    fn newton_iterations_reach_the_equilibrium_of_a_nonlinear_spring() {
        // two springs, the second one fixed: x³ + 3x = 10 at x ≈ 1.6566
        let mut ops = Springs::new(&[10.0, 5.0], &[3.0, 1.0], 1.0);
        ops.fixed = vec![1];
        let mut s = solver_with(NewtonParams {
            max_iterations: 50,
            relative_successive: 0.0,
            relative_initial: 0.0,
            absolute_residual: 1e-12,
            ..NewtonParams::default()
        });
        s.solve(&mut ops, 0.1);
        let x = ops.x()[0];
        assert!((x * x * x + 3.0 * x - 10.0).abs() < 1e-12, "{x}");
        assert_eq!(ops.x()[1], 0.0);
        let r = s.report();
        assert_eq!(r.status, NewtonStatus::ConvergedAbsoluteResidual);
        assert_eq!(r.residuals.len(), r.iterations + 1);
        assert!(r.iterations > 2, "{}", r.iterations);
        assert!(
            r.residuals.windows(2).all(|w| w[1] < w[0]),
            "{:?}",
            r.residuals
        );
    }

    /// An empty scene with its root.
    fn scene() -> (Scene, NodeId) {
        let mut s = Scene::new();
        let root = s.add_node("root", None);
        (s, root)
    }

    fn add_newton(s: &mut Scene, node: NodeId, name: &str, iterations: &str) -> ComponentId {
        let mut nr = NewtonRaphsonSolver::new();
        nr.data_mut()
            .set_str("maxNbIterationsNewton", iterations)
            .unwrap();
        s.add_component(node, name, AnyComponent::Passive(Box::new(nr)), None)
    }

    /// Initialise a StaticSolver with the given Data in `node` (the scene holds a copy, for
    /// its place and name) and return it with the messages.
    fn init_static(
        s: &mut Scene,
        node: NodeId,
        attrs: &[(&str, &str)],
    ) -> (StaticSolver, Diagnostics) {
        let placeholder = AnyComponent::Ode(Box::new(StaticSolver::new()));
        let id = s.add_component(node, "static", placeholder, None);
        let mut st = StaticSolver::new();
        for (k, v) in attrs {
            st.data_mut().set_str(k, v).unwrap();
        }
        let mut diags = Diagnostics::default();
        let mut ctx = InitContext {
            scene: s,
            node,
            id,
            diags: &mut diags,
        };
        st.init(&mut ctx);
        (st, diags)
    }

    fn warnings(d: &Diagnostics) -> Vec<String> {
        d.iter()
            .filter(|x| x.severity == Severity::Warning)
            .map(|x| x.message.clone())
            .collect()
    }

    #[test]
    fn without_a_newton_solver_the_legacy_data_are_forwarded_as_sofa_does() {
        let (mut s, root) = scene();
        let (st, d) = init_static(
            &mut s,
            root,
            &[
                ("newton_iterations", "7.9"),
                ("relative_correction_tolerance_threshold", "0.2"),
                ("relative_residual_tolerance_threshold", "0.3"),
                ("absolute_residual_tolerance_threshold", "1e-9"),
            ],
        );
        let p = st.params();
        assert_eq!(st.newton_solver(), None);
        assert_eq!(p.max_iterations, 7);
        // SOFA forwards the relative residual threshold to the relative estimate one, over
        // the relative correction threshold
        assert_eq!(p.relative_estimate, 0.3);
        assert_eq!(p.relative_initial, 1e-5);
        assert_eq!(p.absolute_residual, 1e-9);
        assert_eq!(p.absolute_estimate, 0.0);
        assert!(!d.has_errors());
        let w = warnings(&d);
        // four "no longer defined", the creation, four forwardings
        assert_eq!(w.len(), 9, "{w:?}");
        assert!(w[0].starts_with("The attribute 'newton_iterations' is no longer defined"));
        assert!(w[4].starts_with("A Newton-Raphson solver is required"));
        assert!(w[8].starts_with(
            "The attribute 'relativeEstimateDifferenceThreshold' of the default NewtonRaphsonSolver is set from the deprecated attribute 'relative_residual_tolerance_threshold'"
        ));
    }

    #[test]
    fn a_plain_static_solver_gets_sofas_default_newton() {
        let (mut s, root) = scene();
        let (st, d) = init_static(&mut s, root, &[]);
        assert_eq!(st.params(), &NewtonParams::default());
        assert_eq!(warnings(&d).len(), 1);
    }

    #[test]
    fn a_newton_solver_in_the_node_or_below_is_found_and_legacy_data_ignored() {
        let (mut s, root) = scene();
        let child = s.add_node("child", Some(root));
        let below = add_newton(&mut s, child, "below", "42");
        let (st, d) = init_static(&mut s, root, &[("newton_iterations", "3")]);
        assert_eq!(st.newton_solver(), Some(below));
        assert_eq!(st.params().max_iterations, 42);
        // only the "no longer defined" warning
        assert_eq!(warnings(&d).len(), 1);

        // one in the node itself comes before the child's, even when declared after
        let here = add_newton(&mut s, root, "here", "8");
        let (st, _) = init_static(&mut s, root, &[]);
        assert_eq!(st.newton_solver(), Some(here));
        assert_eq!(st.params().max_iterations, 8);
        // one in the parent is not looked at
        let (st, _) = init_static(&mut s, child, &[]);
        assert_eq!(st.newton_solver(), Some(below));
    }

    #[test]
    fn the_newton_solver_link_is_followed() {
        let (mut s, root) = scene();
        let first = add_newton(&mut s, root, "first", "2");
        let second = add_newton(&mut s, root, "second", "3");
        let (st, d) = init_static(&mut s, root, &[("newtonSolver", "@second")]);
        assert_eq!(st.newton_solver(), Some(second));
        assert_eq!(st.params().max_iterations, 3);
        assert!(warnings(&d).is_empty());
        // a broken link is reported, then the search takes the first one
        let (st, d) = init_static(&mut s, root, &[("newtonSolver", "@nothing")]);
        assert_eq!(st.newton_solver(), Some(first));
        assert_eq!(warnings(&d).len(), 1);
        assert!(
            warnings(&d)[0].contains("newtonSolver='@nothing' names nothing"),
            "{:?}",
            warnings(&d)
        );
    }
}
