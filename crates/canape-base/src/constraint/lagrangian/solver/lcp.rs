//! LCPConstraintSolver: contacts in blocks of three rows solved by SOFA's nonlinear
//! Gauss–Seidel (`nlcp_gaussseidel`) or, without friction, as a linear complementarity problem.

use super::*;
use canape_core::data::Ints;

canape_core::data_schema! {
    /// LCPConstraintSolver's own Data (after the base Data).
    pub struct LcpData {
        display_debug: Flag = ("displayDebug", DataKind::Bool, "0", "Display debug information."),
        initial_guess: Flag = ("initial_guess", DataKind::Bool, "1", "activate LCP results history to improve its resolution performances."),
        build_lcp: Flag = ("build_lcp", DataKind::Bool, "1", "LCP is not fully built to increase performance in some case."),
        tolerance: Real = ("tolerance", DataKind::Real, "0.001", "residual error threshold for termination of the Gauss-Seidel algorithm"),
        max_it: Int = ("maxIt", DataKind::Int, "1000", "maximal number of iterations of the Gauss-Seidel algorithm"),
        regularization_term: Real = ("regularizationTerm", DataKind::Real, "0", "Add regularization factor times the identity matrix to the compliance W when solving constraints"),
        mu: Real = ("mu", DataKind::Real, "0.6", "Friction coefficient"),
        min_w: Real = ("minW", DataKind::Real, "0", "If not zero, constraints whose self-compliance (i.e. the corresponding value on the diagonal of W) is smaller than this threshold will be ignored"),
        max_f: Real = ("maxF", DataKind::Real, "0", "If not zero, constraints whose response force becomes larger than this threshold will be ignored"),
        multi_grid: Flag = ("multi_grid", DataKind::Bool, "0", "activate multi_grid resolution (NOT STABLE YET)"),
        multi_grid_levels: Int = ("multi_grid_levels", DataKind::Int, "2", "if multi_grid is active: how many levels to create (>=2)"),
        merge_method: Int = ("merge_method", DataKind::Int, "0", "if multi_grid is active: which method to use to merge constraints (0 = compliance-based, 1 = spatial coordinates)"),
        merge_spatial_step: Int = ("merge_spatial_step", DataKind::Int, "2", "if merge_method is 1: grid size reduction between multigrid levels"),
        merge_local_levels: Int = ("merge_local_levels", DataKind::Int, "2", "if merge_method is 1: up to the specified level of the multigrid, constraints are grouped locally"),
        constraint_forces: Reals = ("constraintForces", DataKind::Reals(0), "", "OUTPUT: constraint forces (stored only if computeConstraintForces=True)"),
        compute_constraint_forces: Flag = ("computeConstraintForces", DataKind::Bool, "0", "enable the storage of the constraintForces."),
        group: Ints = ("group", DataKind::Ints(0), "0", "list of ID of groups of constraints to be handled by this solver."),
        show_levels: Int = ("showLevels", DataKind::Int, "0", "Number of constraint levels to display"),
        show_cell_width: Real = ("showCellWidth", DataKind::Real, "0", "Distance between each constraint cells"),
        show_translation: Reals = ("showTranslation", DataKind::Vector(3), "0 0 0", "Position of the first cell"),
        show_level_translation: Reals = ("showLevelTranslation", DataKind::Vector(3), "0 0 0", "Translation between levels"),
    }
}

/// What init reports about LCPConstraintSolver's Data, in order.
enum Report {
    /// An invalid value, replaced by a default (a warning).
    Invalid(String),
    /// An option not supported (a warning).
    Unsupported(String),
    Note(String),
}

/// LCPConstraintSolver (Sofa/Component/Constraint/Lagrangian/Solver/.../LCPConstraintSolver.cpp
/// with sofa/helper/LCPcalc.cpp): contacts only, in blocks of 3 rows (normal, two tangents)
/// solved by the nonlinear Gauss–Seidel of `nlcp_gaussseidel` with the solver's own friction
/// coefficient `mu`, or, with mu = 0, row by row as a linear complementarity problem
/// (`gaussSeidelLCP1`). With `build_lcp="0"` the unbuilt variants run (`New_GS_State`, W without
/// the integration factor, as SOFA's unbuilt path). Stopping: the summed change of the
/// blocks' displacements below tolerance·(contacts + 1) (unscaled tolerance for the built
/// frictionless LCP).
#[derive(Clone)]
pub struct LcpConstraintSolver {
    pub(super) data: DataTable,
    /// Typed handles to the Data in `data`.
    d: LcpData,
    pub(super) tolerance: f64,
    pub(super) max_iterations: usize,
    pub(super) mu: f64,
    pub(super) build: bool,
    pub(super) regularization: f64,
    pub(super) min_w: f64,
    pub(super) max_f: f64,
}

impl Default for LcpConstraintSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl LcpConstraintSolver {
    pub fn new() -> Self {
        let (data, d) = LcpData::declare(base_data(DataTable::new()));
        LcpConstraintSolver {
            data,
            d,
            tolerance: 0.001,
            max_iterations: 1000,
            mu: 0.6,
            build: true,
            regularization: 0.0,
            min_w: 0.0,
            max_f: 0.0,
        }
    }

    /// Take the settings from the Data; what init reports about them, in order.
    fn configure(&mut self) -> Vec<Report> {
        let (t, d) = (&self.data, &self.d);
        let mut reports = Vec::new();
        self.tolerance = t.get(d.tolerance);
        self.max_iterations = t.get(d.max_it).clamp(0, 1 << 30) as usize;
        self.mu = t.get(d.mu);
        self.build = t.get(d.build_lcp);
        self.regularization = t.get(d.regularization_term);
        self.min_w = t.get(d.min_w);
        self.max_f = t.get(d.max_f);
        if self.tolerance.is_nan() || self.tolerance < 0.0 {
            reports.push(Report::Invalid(
                "tolerance must be a non-negative number: 0.001 is used".to_string(),
            ));
            self.tolerance = 0.001;
        }
        if t.get(d.max_it) < 0 {
            reports.push(Report::Invalid(format!(
                "maxIt {} is negative: 1000 is used",
                t.get(d.max_it)
            )));
            self.max_iterations = 1000;
        }
        if t.get(d.multi_grid) {
            reports.push(Report::Unsupported(
                "multi_grid is not supported: the plain Gauss-Seidel runs".to_string(),
            ));
        }
        if t.get(d.initial_guess) {
            reports.push(Report::Note("initial_guess: the impulses of the previous step are not reused yet (each solve starts from zero)".to_string()));
        }
        if self.mu.is_nan() || self.mu < 0.0 {
            reports.push(Report::Invalid(format!(
                "mu {} must be non-negative: 0 is used",
                self.mu
            )));
            self.mu = 0.0;
        }
        reports
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        for r in self.configure() {
            match r {
                Report::Invalid(w) | Report::Unsupported(w) => ctx.warn(w),
                Report::Note(n) => ctx.note(n),
            }
        }
    }

    /// The iteration settings (tolerance, maxIt, mu, regularizationTerm, minW, maxF) take
    /// effect in place, unless init would warn about their values; the rest re-initialises.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        let in_place = [
            d.tolerance.index(),
            d.max_it.index(),
            d.mu.index(),
            d.regularization_term.index(),
            d.min_w.index(),
            d.max_f.index(),
        ];
        if !changed.only(&in_place) {
            return Reaction::Reinit;
        }
        let mut c = self.clone();
        if c.configure()
            .iter()
            .any(|r| matches!(r, Report::Invalid(_)))
        {
            return Reaction::Reinit;
        }
        *self = c;
        Reaction::Updated
    }

    /// Built or unbuilt nonlinear Gauss–Seidel over 3-row contact blocks.
    fn nlcp(&self, p: &mut ConstraintProblem) -> ConstraintStats {
        let n = p.n;
        let contacts = n / 3;
        let w = |r: usize, c: usize| p.w[r * n + c];
        // SOFA's LocalBlock33: the block's symmetric entries and its inverse's
        let blocks: Vec<[f64; 6]> = (0..contacts)
            .map(|c| {
                let j = 3 * c;
                [
                    w(j, j),
                    w(j, j + 1),
                    w(j, j + 2),
                    w(j + 1, j + 1),
                    w(j + 1, j + 2),
                    w(j + 2, j + 2),
                ]
            })
            .collect();
        let mut stats = ConstraintStats::default();
        let mu = self.mu;
        for it in 0..self.max_iterations {
            let mut error = 0.0;
            for (c, b) in blocks.iter().enumerate() {
                let j = 3 * c;
                let old = [p.force[j], p.force[j + 1], p.force[j + 2]];
                // displacement with this contact's force removed
                let mut d = [p.dfree[j], p.dfree[j + 1], p.dfree[j + 2]];
                for (l, dl) in d.iter_mut().enumerate() {
                    let row = &p.w[(j + l) * n..(j + l + 1) * n];
                    *dl += super::row_dot(&row[..j], &p.force[..j])
                        + super::row_dot(&row[j + 3..], &p.force[j + 3..]);
                }
                let with_old = [
                    d[0] + b[0] * old[0] + b[1] * old[1] + b[2] * old[2],
                    d[1] + b[1] * old[0] + b[3] * old[1] + b[4] * old[2],
                    d[2] + b[2] * old[0] + b[4] * old[1] + b[5] * old[2],
                ];
                let (mut fnn, mut ft, mut fs) = (old[0], old[1], old[2]);
                let mut dn = d;
                if self.min_w != 0.0 && b[0].abs() <= self.min_w {
                    fnn = 0.0;
                    ft = 0.0;
                    fs = 0.0;
                } else if self.build {
                    // GS_State: d excludes this contact's force
                    let d0 = b[0] * fnn + b[1] * ft + b[2] * fs + dn[0];
                    fnn -= d0 / b[0];
                    if fnn < 0.0 {
                        fnn = 0.0;
                        ft = 0.0;
                        fs = 0.0;
                    } else {
                        let d1 = b[1] * fnn + b[3] * ft + b[4] * fs + dn[1];
                        let d2 = b[2] * fnn + b[4] * ft + b[5] * fs + dn[2];
                        ft -= 2.0 * d1 / (b[3] + b[5]);
                        fs -= 2.0 * d2 / (b[3] + b[5]);
                        cap(mu, fnn, &mut ft, &mut fs);
                        dn[0] += b[0] * fnn + b[1] * ft + b[2] * fs;
                        dn[1] += b[1] * fnn + b[3] * ft + b[4] * fs;
                        dn[2] += b[2] * fnn + b[4] * ft + b[5] * fs;
                    }
                } else {
                    // New_GS_State: d includes the current force
                    dn = with_old;
                    fnn -= dn[0] / b[0];
                    if fnn <= 0.0 {
                        fnn = 0.0;
                        ft = 0.0;
                        fs = 0.0;
                        if old[0] > 0.0 {
                            let df = [-old[0], -old[1], -old[2]];
                            dn[0] += b[0] * df[0] + b[1] * df[1] + b[2] * df[2];
                            dn[1] += b[1] * df[0] + b[3] * df[1] + b[4] * df[2];
                            dn[2] += b[2] * df[0] + b[4] * df[1] + b[5] * df[2];
                        }
                    } else {
                        let d1 = b[1] * (fnn - old[0]) + dn[1];
                        let d2 = b[2] * (fnn - old[0]) + dn[2];
                        ft -= 2.0 * d1 / (b[3] + b[5]);
                        fs -= 2.0 * d2 / (b[3] + b[5]);
                        cap(mu, fnn, &mut ft, &mut fs);
                        let df = [fnn - old[0], ft - old[1], fs - old[2]];
                        dn[0] += b[0] * df[0] + b[1] * df[1] + b[2] * df[2];
                        dn[1] += b[1] * df[0] + b[3] * df[1] + b[4] * df[2];
                        dn[2] += b[2] * df[0] + b[4] * df[1] + b[5] * df[2];
                    }
                }
                // the change of the block's displacement (SOFA's absError)
                error += ((dn[0] - with_old[0]).powi(2)
                    + (dn[1] - with_old[1]).powi(2)
                    + (dn[2] - with_old[2]).powi(2))
                .sqrt();
                p.force[j] = fnn;
                p.force[j + 1] = ft;
                p.force[j + 2] = fs;
            }
            stats.iterations = it + 1;
            stats.error = error;
            if error < self.tolerance * (contacts as f64 + 1.0) {
                stats.converged = true;
                break;
            }
        }
        if self.max_f != 0.0 && stats.converged {
            for c in 0..contacts {
                if p.force[3 * c].abs() >= self.max_f {
                    p.force[3 * c..3 * c + 3].iter_mut().for_each(|f| *f = 0.0);
                }
            }
        }
        stats
    }

    /// Frictionless: each row a complementarity condition, built (`gaussSeidelLCP1`, raw
    /// tolerance) or unbuilt (tolerance·(rows + 1)).
    fn lcp(&self, p: &mut ConstraintProblem) -> ConstraintStats {
        let n = p.n;
        let mut stats = ConstraintStats::default();
        let limit = if self.build {
            self.tolerance
        } else {
            self.tolerance * (n as f64 + 1.0)
        };
        for it in 0..self.max_iterations {
            let mut error = 0.0;
            for i in 0..n {
                let row = &p.w[i * n..(i + 1) * n];
                let wii = row[i];
                let u = p.dfree[i]
                    + (super::row_dot(&row[..i], &p.force[..i])
                        + super::row_dot(&row[i + 1..], &p.force[i + 1..]));
                let old = p.force[i];
                p.force[i] = if self.min_w != 0.0 && wii.abs() <= self.min_w {
                    0.0
                } else if self.build {
                    if u < 0.0 {
                        -u / wii
                    } else {
                        0.0
                    }
                } else {
                    (old - (u + wii * old) / wii).max(0.0)
                };
                error += (wii * (p.force[i] - old)).abs();
            }
            stats.iterations = it + 1;
            stats.error = error;
            if error < limit {
                stats.converged = true;
                break;
            }
        }
        if self.max_f != 0.0 {
            for f in p.force.iter_mut() {
                if f.abs() >= self.max_f {
                    *f = 0.0;
                }
            }
        }
        stats
    }
}

/// W += r·I when the regularization term is not negligible (SOFA's addRegularization).
pub(super) fn regularize(p: &mut ConstraintProblem, r: f64) {
    if r > f64::EPSILON {
        let n = p.n;
        for i in 0..n {
            p.w[i * n + i] += r;
        }
    }
}

/// Scale the tangential impulses back onto Coulomb's cone |f_t| ≤ μ f_n.
pub(super) fn cap(mu: f64, fnn: f64, ft: &mut f64, fs: &mut f64) {
    let norm = (*ft * *ft + *fs * *fs).sqrt();
    if norm > mu * fnn {
        *ft *= mu * fnn / norm;
        *fs *= mu * fnn / norm;
    }
}

impl_component!(
    LcpConstraintSolver,
    "LCPConstraintSolver",
    init,
    data_changed
);

impl Passive for LcpConstraintSolver {
    fn role(&self) -> Role {
        Role::Constraint
    }
    fn constraint_solver(&mut self) -> Option<&mut dyn ConstraintSolver> {
        Some(self)
    }
}

impl ConstraintSolver for LcpConstraintSolver {
    fn form(&self) -> ProblemForm {
        if self.build {
            ProblemForm::Built
        } else {
            ProblemForm::Unbuilt
        }
    }
    fn solve(&mut self, p: &mut ConstraintProblem) -> ConstraintStats {
        let n = p.n;
        p.force.clear();
        p.force.resize(n, 0.0);
        if n == 0 {
            return ConstraintStats {
                converged: true,
                ..Default::default()
            };
        }
        regularize(p, self.regularization);
        if self.mu > 0.0 {
            // contacts in blocks of three rows (the response must have friction rows too)
            if !n.is_multiple_of(3) || p.blocks.iter().any(|b| b.resolution.rows() != 3) {
                return ConstraintStats {
                    refused: Some("LCPConstraintSolver with mu > 0 solves friction contacts of three rows each, and some constraints are not (a contact response without friction, mu=0, or another constraint): no constraint force is applied; set the solver's mu to 0 or give the response friction"),
                    ..Default::default()
                };
            }
            self.nlcp(p)
        } else {
            self.lcp(p)
        }
    }
}
