//! NewtonRaphsonSolver: SOFA's generic Newton–Raphson method with a backtracking line search
//! (Sofa/Component/ODESolver/Backward/src/sofa/component/odesolver/backward/
//! NewtonRaphsonSolver.cpp, with its convergence measures in `convergence/`).
//!
//! The scene component only holds the parameters: it is not an ODE solver and is not run by
//! the animation loop. An ODE solver that needs a nonlinear solve (StaticSolver) finds it at
//! init ([`resolve_newton`]), keeps its [`NewtonParams`], and runs [`newton_solve`] on its own
//! [`NonLinearFunction`] (the residual, its Jacobian solve and the update of the guess), as
//! SOFA's ODE solvers call `NewtonRaphsonSolver::solve` with a `BaseNonLinearFunction`.

use canape_core::component::{Passive, Role};
use canape_core::data::{base_fields, DataKind, DataTable, Flag, Int, Real, Reals, Text};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext, ToLinearSolver};

/// The class name the scene gives the component.
pub const CLASS: &str = "NewtonRaphsonSolver";

canape_core::data_schema! {
    /// NewtonRaphsonSolver's Data (after the base Data).
    pub struct NewtonData {
        max_iterations: Int = ("maxNbIterationsNewton", DataKind::Int, "1", "Maximum number of iterations of the Newton's method if it has not converged."),
        relative_successive: Real = ("relativeSuccessiveStoppingThreshold", DataKind::Real, "1e-5", "Threshold for the relative successive progress criterion. The Newton iterations will stop when the ratio between the norm of the residual at iteration k over the norm of the residual at iteration k-1 is lower than this threshold."),
        relative_initial: Real = ("relativeInitialStoppingThreshold", DataKind::Real, "1e-5", "Threshold for the relative initial progress criterion. The Newton iterations will stop when the ratio between the norm of the residual at iteration k over the norm of the residual at iteration 0 is lower than this threshold."),
        absolute_residual: Real = ("absoluteResidualStoppingThreshold", DataKind::Real, "1e-5", "Threshold for the absolute function value stopping criterion. The Newton iterations will stop when the norm of the residual at iteration k is lower than this threshold."),
        relative_estimate: Real = ("relativeEstimateDifferenceThreshold", DataKind::Real, "0", "Threshold for the relative change in root estimate criterion. The Newton iterations will stop when the difference between two successive estimates divided by the previous estimate is smaller than this threshold"),
        absolute_estimate: Real = ("absoluteEstimateDifferenceThreshold", DataKind::Real, "0", "Threshold for the absolute change in root estimate criterion. The Newton iterations will stop when the difference between two successive estimates is smaller than this threshold."),
        max_line_search: Int = ("maxNbIterationsLineSearch", DataKind::Int, "5", "Maximum number of iterations of the line search method if it has not converged."),
        line_search_coefficient: Real = ("lineSearchCoefficient", DataKind::Real, "0.5", "Line search coefficient"),
        update_state_when_diverged: Flag = ("updateStateWhenDiverged", DataKind::Bool, "1", "Update the states within the last iteration even if the iterative process is considered diverged."),
        /// An output holding a value from the start ("Undefined"): declared as a parameter,
        /// then flagged as an output.
        status: Text = ("status", DataKind::Str, "Undefined", "status of the last solve: Undefined, Running, ConvergedEquilibrium, DivergedLineSearch, DivergedMaxIterations, ConvergedResidualSuccessiveRatio, ConvergedResidualInitialRatio, ConvergedAbsoluteResidual, ConvergedRelativeEstimateDifference, ConvergedAbsoluteEstimateDifference"),
        residual_graph: Reals => ("residualGraph", DataKind::Reals(0), "Graph of the residual over the iterations"),
        warn_line_search: Flag = ("warnWhenLineSearchFails", DataKind::Bool, "1", "Trigger a warning if line search fails"),
        warn_diverge: Flag = ("warnWhenDiverge", DataKind::Bool, "1", "Trigger a warning if Newton-Raphson diverges"),
    }
}

/// The scene component: the Newton–Raphson parameters, read by the ODE solver that uses it.
#[derive(Clone)]
pub struct NewtonRaphsonSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: NewtonData,
}

impl Default for NewtonRaphsonSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl NewtonRaphsonSolver {
    pub fn new() -> Self {
        let (mut data, d) = NewtonData::declare(base_fields(DataTable::new()));
        if let Some(f) = data.field_at_mut(d.status.index()) {
            f.output = true;
        }
        NewtonRaphsonSolver { data, d }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        // SOFA declares both counts unsigned: a negative value is bad input
        let d = &self.d;
        for (name, count) in [
            ("maxNbIterationsNewton", d.max_iterations),
            ("maxNbIterationsLineSearch", d.max_line_search),
        ] {
            let v = self.data.get(count);
            if v < 0 {
                ctx.warn(format!("{name} = {v} is negative: 0 is used"));
            }
        }
    }
}

impl_component!(NewtonRaphsonSolver, "NewtonRaphsonSolver", init);

impl Passive for NewtonRaphsonSolver {
    fn role(&self) -> Role {
        Role::Other
    }
}

/// The parameters of one Newton–Raphson solve. A threshold is active when it is > 0.
#[derive(Clone, Debug, PartialEq)]
pub struct NewtonParams {
    /// Maximum number of Newton iterations (`maxNbIterationsNewton`).
    pub max_iterations: usize,
    /// Stop when ‖r_k‖ < t·‖r_{k−1}‖ (`relativeSuccessiveStoppingThreshold`).
    pub relative_successive: f64,
    /// Stop when ‖r_k‖ < t·‖r_0‖ (`relativeInitialStoppingThreshold`).
    pub relative_initial: f64,
    /// Stop when ‖r_k‖ < t; also the initial-equilibrium test, with ≤
    /// (`absoluteResidualStoppingThreshold`).
    pub absolute_residual: f64,
    /// Stop when ‖Δ‖ < t·‖y_k‖ (`relativeEstimateDifferenceThreshold`).
    pub relative_estimate: f64,
    /// Stop when ‖Δ‖ < t (`absoluteEstimateDifferenceThreshold`).
    pub absolute_estimate: f64,
    /// Line-search tries per iteration (`maxNbIterationsLineSearch`; 0 counts as 1).
    pub max_line_search: usize,
    /// Backtracking factor (`lineSearchCoefficient`).
    pub line_search_coefficient: f64,
    /// `warnWhenLineSearchFails`
    pub warn_line_search: bool,
    /// `warnWhenDiverge`
    pub warn_diverge: bool,
    /// `printLog`: keep the per-iteration messages in the report.
    pub print_log: bool,
}

impl Default for NewtonParams {
    /// SOFA's defaults.
    fn default() -> Self {
        NewtonParams {
            max_iterations: 1,
            relative_successive: 1e-5,
            relative_initial: 1e-5,
            absolute_residual: 1e-5,
            relative_estimate: 0.0,
            absolute_estimate: 0.0,
            max_line_search: 5,
            line_search_coefficient: 0.5,
            warn_line_search: true,
            warn_diverge: true,
            print_log: false,
        }
    }
}

impl NewtonParams {
    /// The parameters a NewtonRaphsonSolver's Data give (negative counts read as 0). The ODE
    /// solvers read them at init from the component the scene holds, by name.
    pub fn from_data(d: &DataTable) -> Self {
        let count = |name: &str| usize::try_from(d.int(name)).unwrap_or(0);
        NewtonParams {
            max_iterations: count("maxNbIterationsNewton"),
            relative_successive: d.real("relativeSuccessiveStoppingThreshold"),
            relative_initial: d.real("relativeInitialStoppingThreshold"),
            absolute_residual: d.real("absoluteResidualStoppingThreshold"),
            relative_estimate: d.real("relativeEstimateDifferenceThreshold"),
            absolute_estimate: d.real("absoluteEstimateDifferenceThreshold"),
            max_line_search: count("maxNbIterationsLineSearch"),
            line_search_coefficient: d.real("lineSearchCoefficient"),
            warn_line_search: d.bool("warnWhenLineSearchFails"),
            warn_diverge: d.bool("warnWhenDiverge"),
            print_log: d.bool("printLog"),
        }
    }
}

/// The outcome of a solve (SOFA's `NewtonStatus`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NewtonStatus {
    /// Never solved.
    #[default]
    Undefined,
    Running,
    /// The initial guess already satisfies the absolute residual threshold: no iteration.
    ConvergedEquilibrium,
    /// The last line search failed (the iterations go on).
    DivergedLineSearch,
    /// The iterations ran out without any criterion holding.
    DivergedMaxIterations,
    ConvergedResidualSuccessiveRatio,
    ConvergedResidualInitialRatio,
    ConvergedAbsoluteResidual,
    ConvergedRelativeEstimateDifference,
    ConvergedAbsoluteEstimateDifference,
}

impl NewtonStatus {
    /// SOFA's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            NewtonStatus::Undefined => "Undefined",
            NewtonStatus::Running => "Running",
            NewtonStatus::ConvergedEquilibrium => "ConvergedEquilibrium",
            NewtonStatus::DivergedLineSearch => "DivergedLineSearch",
            NewtonStatus::DivergedMaxIterations => "DivergedMaxIterations",
            NewtonStatus::ConvergedResidualSuccessiveRatio => "ConvergedResidualSuccessiveRatio",
            NewtonStatus::ConvergedResidualInitialRatio => "ConvergedResidualInitialRatio",
            NewtonStatus::ConvergedAbsoluteResidual => "ConvergedAbsoluteResidual",
            NewtonStatus::ConvergedRelativeEstimateDifference => {
                "ConvergedRelativeEstimateDifference"
            }
            NewtonStatus::ConvergedAbsoluteEstimateDifference => {
                "ConvergedAbsoluteEstimateDifference"
            }
        }
    }

    /// Whether a stopping criterion held (or the initial guess was already a solution).
    pub fn converged(self) -> bool {
        matches!(
            self,
            NewtonStatus::ConvergedEquilibrium
                | NewtonStatus::ConvergedResidualSuccessiveRatio
                | NewtonStatus::ConvergedResidualInitialRatio
                | NewtonStatus::ConvergedAbsoluteResidual
                | NewtonStatus::ConvergedRelativeEstimateDifference
                | NewtonStatus::ConvergedAbsoluteEstimateDifference
        )
    }
}

/// A nonlinear equation r(y) = 0 that [`newton_solve`] drives (SOFA's
/// `newton_raphson::BaseNonLinearFunction`). The function owns its unknown y, its last
/// evaluation r and its last linear solution Δ; the solver only calls these steps in order.
pub trait NonLinearFunction {
    /// Called at the start of every Newton iteration.
    fn start_iteration(&mut self) {}
    /// Called at the end of every Newton iteration, including the one a criterion stops.
    fn end_iteration(&mut self) {}
    /// r := r(y) at the current guess.
    fn evaluate(&mut self);
    /// ‖r‖² of the last evaluation.
    fn squared_norm_last_evaluation(&mut self) -> f64;
    /// J := ∂r/∂y at the current guess.
    fn compute_gradient(&mut self);
    /// Δ := the solution of J·Δ = −r.
    fn solve_linear(&mut self);
    /// y += alpha·Δ (`alpha` is an increment: the line search moves back and forth from it).
    fn update_guess(&mut self, alpha: f64);
    /// ‖Δ‖² (the correction, not scaled by the line search).
    fn squared_norm_dx(&mut self) -> f64;
    /// ‖y‖² (the guess itself).
    fn squared_last_evaluation(&mut self) -> f64;
}

/// What a solve did. Its vectors are reused from solve to solve.
#[derive(Clone, Debug, Default)]
pub struct NewtonReport {
    pub status: NewtonStatus,
    /// Newton iterations done.
    pub iterations: usize,
    /// Squared residual norms: the initial one, then one per iteration (SOFA's
    /// `residualGraph["residual"]`).
    pub residuals: Vec<f64>,
    /// SOFA's warnings (line search failed, no convergence), as `warnWhen…` allow.
    pub warnings: Vec<String>,
    /// SOFA's info messages, kept only with `printLog`.
    pub log: Vec<String>,
}

impl NewtonReport {
    fn clear(&mut self) {
        self.status = NewtonStatus::Running;
        self.iterations = 0;
        self.residuals.clear();
        self.warnings.clear();
        self.log.clear();
    }
}

/// Solve r(y) = 0 from the function's current guess, as SOFA's `NewtonRaphsonSolver::solve`:
/// the initial-equilibrium test, then Newton iterations, each with a backtracking line search
/// (accepted as soon as the residual decreases; when no try does, the full step is taken back)
/// and the five stopping tests in SOFA's order: successive ratio, initial ratio, absolute
/// residual, relative then absolute estimate difference. The guess stays wherever the
/// iterations end, converged or not.
pub fn newton_solve(p: &NewtonParams, f: &mut dyn NonLinearFunction, report: &mut NewtonReport) {
    report.clear();
    let log = p.print_log;
    f.evaluate();
    let mut r2 = f.squared_norm_last_evaluation();
    report.residuals.push(r2);

    let abs2 = p.absolute_residual * p.absolute_residual;
    if p.absolute_residual > 0.0 && r2 <= abs2 {
        if log {
            report.log.push(format!("The equation to solve is satisfied with the initial guess. The residual squared norm is {r2}. The threshold for convergence is {abs2}"));
        }
        report.status = NewtonStatus::ConvergedEquilibrium;
        return;
    }
    if log {
        report
            .log
            .push(format!("Initial squared residual norm: {r2}"));
    }
    let first_r2 = r2;
    let max_ls = p.max_line_search.max(1);
    let coef = p.line_search_coefficient;
    let succ2 = p.relative_successive * p.relative_successive;
    let init2 = p.relative_initial * p.relative_initial;
    let rel_est2 = p.relative_estimate * p.relative_estimate;
    let abs_est2 = p.absolute_estimate * p.absolute_estimate;

    let mut converged = None;
    let mut k = 0;
    while k < p.max_iterations {
        f.start_iteration();
        if log {
            report.log.push(format!("Newton iteration #{k}"));
        }
        let prev_r2 = r2;
        // ‖y_k‖², before the update
        let prev_y2 = if p.relative_estimate > 0.0 {
            f.squared_last_evaluation()
        } else {
            0.0
        };
        f.compute_gradient();
        f.solve_linear();

        // backtracking: y_k + Δ, then y_k + c·Δ, y_k + c²·Δ … reached by increments
        let mut alpha = 1.0;
        let mut prev_alpha = 0.0;
        let mut tries = 0;
        let mut success = false;
        while tries < max_ls {
            f.update_guess(alpha - prev_alpha);
            f.evaluate();
            r2 = f.squared_norm_last_evaluation();
            if r2 < prev_r2 {
                success = true;
                break;
            }
            prev_alpha = alpha;
            alpha *= coef;
            tries += 1;
        }
        if !success {
            if p.warn_line_search {
                report
                    .warnings
                    .push(format!("Line search failed at Newton iteration {k}."));
            }
            report.status = NewtonStatus::DivergedLineSearch;
            if max_ls > 1 {
                // back to the full step
                f.update_guess(1.0 - prev_alpha);
                f.evaluate();
                r2 = f.squared_norm_last_evaluation();
            }
        } else if log {
            report.log.push(format!(
                "Line search succeeded after {} iterations",
                tries + 1
            ));
        }
        report.residuals.push(r2);
        report.iterations = k + 1;
        if log {
            report.log.push(format!(
                "Newton iteration results: squared residual norm = {r2}, line search {}, residual norm = {} (absolute threshold = {}), successive relative ratio = {} (threshold = {})",
                if success { "SUCCESSFUL" } else { "FAILED" },
                r2.sqrt(),
                p.absolute_residual,
                (r2 / prev_r2).sqrt(),
                p.relative_successive
            ));
        }

        converged = if p.relative_successive > 0.0 && r2 < succ2 * prev_r2 {
            Some(NewtonStatus::ConvergedResidualSuccessiveRatio)
        } else if p.relative_initial > 0.0 && r2 < init2 * first_r2 {
            Some(NewtonStatus::ConvergedResidualInitialRatio)
        } else if p.absolute_residual > 0.0 && r2 < abs2 {
            Some(NewtonStatus::ConvergedAbsoluteResidual)
        } else if p.absolute_estimate > 0.0 || p.relative_estimate > 0.0 {
            let d2 = f.squared_norm_dx();
            if p.relative_estimate > 0.0 && prev_y2 > 0.0 && d2 < prev_y2 * rel_est2 {
                Some(NewtonStatus::ConvergedRelativeEstimateDifference)
            } else if p.absolute_estimate > 0.0 && d2 < abs_est2 {
                Some(NewtonStatus::ConvergedAbsoluteEstimateDifference)
            } else {
                None
            }
        } else {
            None
        };
        f.end_iteration();
        if let Some(status) = converged {
            report.status = status;
            if log {
                report.log.push(format!("[CONVERGED] {}", status.as_str()));
            }
            break;
        }
        k += 1;
    }
    if converged.is_none() {
        if p.warn_diverge {
            report.warnings.push(format!("Newton-Raphson method failed to converge after {k} iteration(s) with residual squared norm = {r2}. "));
        }
        report.status = NewtonStatus::DivergedMaxIterations;
    }
}

/// The NewtonRaphsonSolver an ODE solver uses, as SOFA's solvers resolve it at init: the
/// component its `newtonSolver` link names, else the first one in its node then in the nodes
/// below (depth first, document order: SOFA's `SearchDown`). A link that names no
/// NewtonRaphsonSolver is reported and the search is done instead. None when there is none.
pub fn resolve_newton(
    ctx: &mut InitContext<'_>,
    link: &str,
) -> Option<(ComponentId, NewtonParams)> {
    let scene = ctx.scene;
    let params = |c: ComponentId| {
        scene
            .component(c)
            .map(|x| NewtonParams::from_data(x.data()))
    };
    match ctx.link_class("newtonSolver", link, &[CLASS], "a NewtonRaphsonSolver") {
        Ok(Some(c)) => {
            if let Some(p) = params(c) {
                return Some((c, p));
            }
        }
        Ok(None) => {}
        Err(e) => ctx.warn(format!("{e}: looking for a {CLASS} in this node and below")),
    }
    scene
        .subtree(ctx.node)
        .into_iter()
        .filter(|&n| scene.node(n).activated)
        .flat_map(|n| scene.node(n).components.iter().copied())
        .filter(|&c| scene.info(c).class == CLASS)
        .find_map(|c| params(c).map(|p| (c, p)))
}

/// For the ODE solvers on Newton (StaticSolver, BDFOdeSolver): the group solves with the
/// nearest linear solver (first in the node, else in the nearest ancestor holding one); a
/// `linearSolver` link naming another one, or nothing, is reported.
pub(crate) fn check_linear_solver_link(ctx: &mut InitContext<'_>, link: &str) {
    let link = link.trim();
    if link.is_empty() {
        return;
    }
    let scene = ctx.scene;
    let nearest = scene
        .lineage(ctx.node)
        .into_iter()
        .find_map(|n| scene.node_components(n, Role::LinearSolver).next());
    match ctx.link_text_of::<ToLinearSolver>("linearSolver", link) {
        Ok(Some(l)) => {
            if Some(l.id()) != nearest {
                ctx.warn(format!("linearSolver link '{link}' names a linear solver that is not the nearest one in the context: the nearest one solves this group"));
            }
        }
        Ok(None) => {}
        Err(e) => ctx.warn(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SOFA's square-root test function (NewtonRaphsonSolver_test.cpp): r(y) = y² − a,
    /// J = 2y, every guess recorded at the end of an iteration; also records the increments
    /// the line search asks for.
    struct SquareRoot {
        a: f64,
        y: f64,
        r: f64,
        j: f64,
        dx: f64,
        guesses: Vec<f64>,
        increments: Vec<f64>,
        starts: usize,
    }

    impl SquareRoot {
        fn new(a: f64, y0: f64) -> Self {
            SquareRoot {
                a,
                y: y0,
                r: 0.0,
                j: 0.0,
                dx: 0.0,
                guesses: vec![y0],
                increments: Vec::new(),
                starts: 0,
            }
        }
    }

    impl NonLinearFunction for SquareRoot {
        fn start_iteration(&mut self) {
            self.starts += 1;
        }
        fn end_iteration(&mut self) {
            self.guesses.push(self.y);
        }
        fn evaluate(&mut self) {
            self.r = self.y * self.y - self.a;
        }
        fn squared_norm_last_evaluation(&mut self) -> f64 {
            self.r * self.r
        }
        fn compute_gradient(&mut self) {
            self.j = 2.0 * self.y;
        }
        fn solve_linear(&mut self) {
            self.dx = -self.r / self.j;
        }
        fn update_guess(&mut self, alpha: f64) {
            self.increments.push(alpha);
            self.y += alpha * self.dx;
        }
        fn squared_norm_dx(&mut self) -> f64 {
            self.dx * self.dx
        }
        fn squared_last_evaluation(&mut self) -> f64 {
            self.y * self.y
        }
    }

    /// SOFA's test set-up: the residual criteria off (−1), one line-search try.
    fn sofa_test_params(iterations: usize) -> NewtonParams {
        NewtonParams {
            max_iterations: iterations,
            relative_successive: -1.0,
            relative_initial: -1.0,
            absolute_residual: -1.0,
            max_line_search: 0,
            ..NewtonParams::default()
        }
    }

    fn check_sequence(a: f64, y0: f64, iterations: usize, expected: &[f64]) {
        let mut f = SquareRoot::new(a, y0);
        let mut report = NewtonReport::default();
        newton_solve(&sofa_test_params(iterations), &mut f, &mut report);
        assert_eq!(f.guesses.len(), expected.len(), "{:?}", f.guesses);
        for (got, want) in f.guesses.iter().zip(expected) {
            assert!((got - want).abs() < 1e-10, "{got} vs {want}");
        }
        // no criterion is active: the iterations run out
        assert_eq!(report.status, NewtonStatus::DivergedMaxIterations);
        assert_eq!(report.iterations, iterations);
        assert_eq!(report.residuals.len(), iterations + 1);
        assert_eq!(f.starts, iterations);
    }

    #[test]
    fn square_root_of_612_from_1() {
        check_sequence(
            612.0,
            1.0,
            9,
            &[
                1.0,
                306.5,
                154.2483686786,
                79.1079978644,
                43.4221286822,
                28.7581624288,
                25.0195385369,
                24.7402106712,
                24.7386338040,
                24.7386337537,
            ],
        );
    }

    #[test]
    fn square_root_of_612_from_10() {
        check_sequence(
            612.0,
            10.0,
            5,
            &[
                10.0,
                35.6,
                26.3955056180,
                24.7906354925,
                24.7386882941,
                24.7386337538,
            ],
        );
    }

    #[test]
    fn square_root_of_612_from_minus_20() {
        check_sequence(
            612.0,
            -20.0,
            4,
            &[-20.0, -25.3, -24.7448616601, -24.7386345374, -24.7386337537],
        );
    }

    #[test]
    fn a_full_step_that_raises_the_residual_is_kept_with_one_try() {
        // from 1 the first step (to 306.5) raises |r| from 611 to 93330: the line search
        // fails, and with one try the full step stays
        let mut f = SquareRoot::new(612.0, 1.0);
        let mut report = NewtonReport::default();
        newton_solve(&sofa_test_params(1), &mut f, &mut report);
        assert_eq!(f.increments, [1.0]);
        assert_eq!(f.y, 306.5);
        assert_eq!(report.residuals, [611.0 * 611.0, 93330.25 * 93330.25]);
        assert_eq!(
            report.warnings,
            [
                "Line search failed at Newton iteration 0.".to_string(),
                format!("Newton-Raphson method failed to converge after 1 iteration(s) with residual squared norm = {}. ", 93330.25f64 * 93330.25)
            ]
        );
    }

    #[test]
    fn the_line_search_halves_the_step_until_the_residual_decreases() {
        // from 10: y + Δ = 35.6 raises the residual (|r| 512 → 655.36), y + Δ/2 = 22.8
        // lowers it (|r| = 92.16)
        let mut f = SquareRoot::new(612.0, 10.0);
        let mut report = NewtonReport::default();
        let p = NewtonParams {
            max_iterations: 1,
            ..NewtonParams::default()
        };
        newton_solve(&p, &mut f, &mut report);
        assert_eq!(f.increments, [1.0, -0.5]);
        assert!((f.y - 22.8).abs() < 1e-12, "{}", f.y);
        assert_eq!(report.residuals.len(), 2);
        assert!((report.residuals[1] - 92.16 * 92.16).abs() < 1e-8);
        // the line search succeeded: only the divergence warning (1 iteration, not converged)
        assert_eq!(report.warnings.len(), 1);
        assert!(report.warnings[0]
            .starts_with("Newton-Raphson method failed to converge after 1 iteration(s)"));
        assert_eq!(report.status, NewtonStatus::DivergedMaxIterations);
    }

    /// r(y) = y with a Jacobian of the wrong sign: every Newton step moves away from the root.
    struct Repelling {
        y: f64,
        dx: f64,
        increments: Vec<f64>,
    }

    impl NonLinearFunction for Repelling {
        fn evaluate(&mut self) {}
        fn squared_norm_last_evaluation(&mut self) -> f64 {
            self.y * self.y
        }
        fn compute_gradient(&mut self) {}
        fn solve_linear(&mut self) {
            self.dx = self.y;
        }
        fn update_guess(&mut self, alpha: f64) {
            self.increments.push(alpha);
            self.y += alpha * self.dx;
        }
        fn squared_norm_dx(&mut self) -> f64 {
            self.dx * self.dx
        }
        fn squared_last_evaluation(&mut self) -> f64 {
            self.y * self.y
        }
    }

    #[test]
    fn a_failed_line_search_goes_back_to_the_full_step_by_increments() {
        let mut f = Repelling {
            y: 1.0,
            dx: 0.0,
            increments: Vec::new(),
        };
        let mut report = NewtonReport::default();
        let p = NewtonParams {
            max_iterations: 2,
            warn_line_search: false,
            ..NewtonParams::default()
        };
        newton_solve(&p, &mut f, &mut report);
        // five tries (α = 1, ½, ¼, ⅛, 1/16) then back to α = 1, per iteration
        let one = [1.0, -0.5, -0.25, -0.125, -0.0625, 0.9375];
        assert_eq!(f.increments, [one, one].concat());
        assert_eq!(f.y, 4.0);
        assert_eq!(report.residuals, [1.0, 4.0, 16.0]);
        assert_eq!(report.status, NewtonStatus::DivergedMaxIterations);
        // warnWhenLineSearchFails off: only the divergence warning
        assert_eq!(report.warnings.len(), 1);
    }

    /// r(y) = y − 3, J = 1: one Newton step lands on the root exactly.
    struct Linear {
        y: f64,
        dx: f64,
        dx_norms_asked: usize,
    }

    impl NonLinearFunction for Linear {
        fn evaluate(&mut self) {}
        fn squared_norm_last_evaluation(&mut self) -> f64 {
            (self.y - 3.0) * (self.y - 3.0)
        }
        fn compute_gradient(&mut self) {}
        fn solve_linear(&mut self) {
            self.dx = 3.0 - self.y;
        }
        fn update_guess(&mut self, alpha: f64) {
            self.y += alpha * self.dx;
        }
        fn squared_norm_dx(&mut self) -> f64 {
            self.dx_norms_asked += 1;
            self.dx * self.dx
        }
        fn squared_last_evaluation(&mut self) -> f64 {
            self.y * self.y
        }
    }

    fn solve_linear_with(p: NewtonParams, y0: f64) -> (Linear, NewtonReport) {
        let mut f = Linear {
            y: y0,
            dx: 0.0,
            dx_norms_asked: 0,
        };
        let mut report = NewtonReport::default();
        newton_solve(&p, &mut f, &mut report);
        (f, report)
    }

    #[test]
    fn the_stopping_tests_are_taken_in_sofas_order() {
        let off = NewtonParams {
            max_iterations: 10,
            relative_successive: 0.0,
            relative_initial: 0.0,
            absolute_residual: 0.0,
            ..NewtonParams::default()
        };
        // all three residual tests hold after the exact step: the first one is reported
        let (f, r) = solve_linear_with(
            NewtonParams {
                max_iterations: 10,
                ..NewtonParams::default()
            },
            1.0,
        );
        assert_eq!(f.y, 3.0);
        assert_eq!(r.status, NewtonStatus::ConvergedResidualSuccessiveRatio);
        assert_eq!((r.iterations, f.dx_norms_asked), (1, 0));
        let (_, r) = solve_linear_with(
            NewtonParams {
                relative_initial: 1e-5,
                absolute_residual: 1e-5,
                ..off.clone()
            },
            1.0,
        );
        assert_eq!(r.status, NewtonStatus::ConvergedResidualInitialRatio);
        let (_, r) = solve_linear_with(
            NewtonParams {
                absolute_residual: 1e-5,
                ..off.clone()
            },
            1.0,
        );
        assert_eq!(r.status, NewtonStatus::ConvergedAbsoluteResidual);
        // the estimate tests measure the unscaled correction Δ = 2 against ‖y_0‖ = 1: a
        // relative threshold of 3 holds, one of 1.5 does not, then the absolute one of 2.5 does
        let (f, r) = solve_linear_with(
            NewtonParams {
                relative_estimate: 3.0,
                absolute_estimate: 2.5,
                ..off.clone()
            },
            1.0,
        );
        assert_eq!(r.status, NewtonStatus::ConvergedRelativeEstimateDifference);
        assert_eq!(f.dx_norms_asked, 1);
        let (_, r) = solve_linear_with(
            NewtonParams {
                relative_estimate: 1.5,
                absolute_estimate: 2.5,
                ..off.clone()
            },
            1.0,
        );
        assert_eq!(r.status, NewtonStatus::ConvergedAbsoluteEstimateDifference);
        // ‖y_0‖ = 0: the relative estimate test cannot hold
        let (_, r) = solve_linear_with(
            NewtonParams {
                relative_estimate: 1e9,
                max_iterations: 1,
                ..off
            },
            0.0,
        );
        assert_eq!(r.status, NewtonStatus::DivergedMaxIterations);
    }

    #[test]
    fn an_initial_guess_within_the_absolute_threshold_is_not_moved() {
        let p = NewtonParams {
            absolute_residual: 0.25,
            ..NewtonParams::default()
        };
        // |r| = 0.25 exactly: ≤ holds at the start
        let (f, r) = solve_linear_with(p.clone(), 2.75);
        assert_eq!(r.status, NewtonStatus::ConvergedEquilibrium);
        assert_eq!(f.y, 2.75);
        assert_eq!((r.iterations, r.residuals.len()), (0, 1));
        assert!(r.warnings.is_empty());
        // a threshold ≤ 0 is inactive: even an exact root is iterated on
        let (_, r) = solve_linear_with(
            NewtonParams {
                absolute_residual: 0.0,
                ..p
            },
            3.0,
        );
        assert_eq!(r.iterations, 1);
    }

    #[test]
    fn no_iteration_allowed_is_a_divergence() {
        let (f, r) = solve_linear_with(
            NewtonParams {
                max_iterations: 0,
                ..NewtonParams::default()
            },
            1.0,
        );
        assert_eq!(f.y, 1.0);
        assert_eq!(r.status, NewtonStatus::DivergedMaxIterations);
        assert_eq!(r.warnings.len(), 1);
        assert!(r.warnings[0].contains("after 0 iteration(s) with residual squared norm = 4."));
    }

    #[test]
    fn the_component_gives_sofas_defaults() {
        let nr = NewtonRaphsonSolver::new();
        assert_eq!(NewtonParams::from_data(&nr.data), NewtonParams::default());
        assert_eq!(nr.data.get(nr.d.status), "Undefined");
        let mut nr = nr;
        nr.data.set_str("maxNbIterationsNewton", "-3").unwrap();
        nr.data.set_str("maxNbIterationsLineSearch", "7").unwrap();
        nr.data.set_str("printLog", "1").unwrap();
        let p = NewtonParams::from_data(&nr.data);
        assert_eq!(
            (p.max_iterations, p.max_line_search, p.print_log),
            (0, 7, true)
        );
    }

    #[test]
    fn print_log_keeps_the_iteration_messages() {
        let (_, quiet) = solve_linear_with(NewtonParams::default(), 1.0);
        assert!(quiet.log.is_empty());
        let (_, r) = solve_linear_with(
            NewtonParams {
                print_log: true,
                ..NewtonParams::default()
            },
            1.0,
        );
        assert_eq!(r.log[0], "Initial squared residual norm: 4");
        assert!(r.log.iter().any(|l| l == "Newton iteration #0"));
        assert!(r
            .log
            .last()
            .is_some_and(|l| l == "[CONVERGED] ConvergedResidualSuccessiveRatio"));
    }
}
