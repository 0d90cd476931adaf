//! Gauss–Seidel constraint solvers, following SOFA's
//! Sofa/Component/Constraint/Lagrangian/Solver/.../BlockGaussSeidelConstraintSolver.cpp
//! (`gaussSeidel_increment` and its stopping rules), UnbuiltGaussSeidelConstraintSolver.cpp and
//! NNCGConstraintSolver.cpp, with the block resolutions of
//! .../Model/BilateralConstraintResolution.h and UnilateralConstraintResolution.h.
//!
//! One sweep visits the blocks in row order: d = dfree + W f (the current impulses), the
//! block's resolution updates its impulses, and the change it makes is measured as
//! |W_block Δf| (per line for blocks of several lines). With `scaleTolerance` (and not
//! `allVerified`) the tolerance is multiplied by the number of rows; iterations stop when the
//! summed error is below it (or, with `allVerified`, when every block is within it). `sor`
//! relaxes the whole vector after each sweep. NNCG accelerates the sweeps by nonsmooth
//! nonlinear conjugate gradients (SOFA's NNCG: β = |Δf_new|²/|Δf|², restart when β > 1).
//! An unbuilt solver starts from zero impulses (its W has no integration factor, see the
//! constraint stage). ImprovedJacobiConstraintSolver's Jacobi iteration is in `jacobi`.

use crate::base_data;
use canape_core::component::{Passive, Reaction, Role};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Int, Real, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::lagrangian::{
    Block, ConstraintProblem, ConstraintSolver, ConstraintStats, ProblemForm, Resolution,
};
use canape_core::scene::InitContext;
use nalgebra::Matrix3;

#[cfg(test)]
mod edit_tests;
mod jacobi;
mod lcp;
#[cfg(test)]
mod tests;

pub use lcp::LcpConstraintSolver;
use lcp::{cap, regularize};

/// Which iteration a solver runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Projected (block) Gauss–Seidel on the built W.
    GaussSeidel,
    /// Gauss–Seidel over the diagonal blocks with displacements updated block by block.
    Unbuilt,
    /// Nonsmooth nonlinear conjugate gradient around Gauss–Seidel sweeps.
    Nncg,
    /// ImprovedJacobiConstraintSolver: every block resolved from the same displacements
    /// (`jacobi`).
    Jacobi,
}

/// The per-block state of a resolution during one solve.
#[derive(Clone, Debug)]
enum BlockState {
    /// W⁻¹ of a 3-line bilateral block (None: singular, the block is skipped).
    Bilateral3(Option<Matrix3<f64>>),
    Plain,
    /// W_nn, W_nt, W_ns, W_tt, W_ss of a friction block.
    Friction([f64; 5]),
    /// The factor of an N-line bilateral block's W (None: singular, the block is skipped).
    BilateralN(Option<BlockFactor>),
}

/// A factorization of an N-line bilateral block's W: Cholesky when it is positive definite
/// (SOFA factors it by Eigen's LDLᵀ), else LU with partial pivoting.
#[derive(Clone, Debug)]
enum BlockFactor {
    Cholesky(nalgebra::linalg::Cholesky<f64, nalgebra::Dyn>),
    Lu(nalgebra::linalg::LU<f64, nalgebra::Dyn, nalgebra::Dyn>),
}

impl BlockFactor {
    fn new(w: nalgebra::DMatrix<f64>) -> Option<BlockFactor> {
        if let Some(c) = w.clone().cholesky() {
            return Some(BlockFactor::Cholesky(c));
        }
        let lu = w.lu();
        lu.is_invertible().then_some(BlockFactor::Lu(lu))
    }
    fn solve(&self, d: &nalgebra::DVector<f64>) -> Option<nalgebra::DVector<f64>> {
        match self {
            BlockFactor::Cholesky(c) => Some(c.solve(d)),
            BlockFactor::Lu(lu) => lu.solve(d),
        }
    }
}

/// The Gauss–Seidel family's settings (SOFA's GenericConstraintSolver Data).
#[derive(Clone, Debug)]
pub struct GaussSeidel {
    pub method: Method,
    pub max_iterations: usize,
    pub tolerance: f64,
    pub sor: f64,
    pub regularization: f64,
    pub scale_tolerance: bool,
    pub all_verified: bool,
    /// ImprovedJacobiConstraintSolver: the spectral correction's factor (when on) and the
    /// conjugate residue's speed factor (when on).
    pub spectral_correction: Option<f64>,
    pub conjugate_residue: Option<f64>,
    states: Vec<BlockState>,
    d: Vec<f64>,
    /// A block's impulses before its resolution (for the error measure).
    old: Vec<f64>,
    /// The Jacobi iteration's last impulses, their last change and the scaled displacements.
    last: Vec<f64>,
    delta: Vec<f64>,
    corrected: Vec<f64>,
}

impl Default for GaussSeidel {
    fn default() -> Self {
        GaussSeidel {
            method: Method::GaussSeidel,
            max_iterations: 1000,
            tolerance: 0.001,
            sor: 1.0,
            regularization: 0.0,
            scale_tolerance: true,
            all_verified: false,
            spectral_correction: None,
            conjugate_residue: None,
            states: Vec::new(),
            d: Vec::new(),
            old: Vec::new(),
            last: Vec::new(),
            delta: Vec::new(),
            corrected: Vec::new(),
        }
    }
}

impl GaussSeidel {
    fn init_blocks(&mut self, p: &mut ConstraintProblem) {
        let n = p.n;
        self.states.clear();
        for b in &p.blocks {
            let j = b.first_row;
            let w = |r: usize, c: usize| p.w[(j + r) * n + j + c];
            let st = match b.resolution {
                Resolution::Bilateral { rows: 3 } => {
                    let m = Matrix3::from_fn(w);
                    BlockState::Bilateral3(m.try_inverse())
                }
                Resolution::Friction { .. } => {
                    BlockState::Friction([w(0, 0), w(0, 1), w(0, 2), w(1, 1), w(2, 2)])
                }
                Resolution::BilateralBlock { rows } => {
                    let r = rows as usize;
                    BlockState::BilateralN(BlockFactor::new(nalgebra::DMatrix::from_fn(r, r, w)))
                }
                _ => BlockState::Plain,
            };
            self.states.push(st);
        }
    }

    /// One sweep over the blocks; returns (error, every block within the tolerance).
    fn sweep(&mut self, p: &mut ConstraintProblem, tol: f64, measure: bool) -> (f64, bool) {
        let n = p.n;
        let mut error = 0.0;
        let mut verified = true;
        self.d.resize(n, 0.0);
        for (b, st) in p.blocks.iter().zip(&self.states) {
            let j = b.first_row;
            let nb = b.resolution.rows();
            // a block's impulses before its resolution: on the stack for the usual ≤ 3 rows
            let mut small = [0.0; 3];
            let old: &mut [f64] = if nb <= 3 {
                &mut small[..nb]
            } else {
                self.old.clear();
                self.old.resize(nb, 0.0);
                &mut self.old
            };
            old.copy_from_slice(&p.force[j..j + nb]);
            for l in 0..nb {
                let row = &p.w[(j + l) * n..(j + l + 1) * n];
                self.d[j + l] = p.dfree[j + l] + row_dot(row, &p.force);
            }
            resolve(b, st, &p.w, n, &mut self.d, &mut p.force);
            if !measure {
                continue;
            }
            let mut e = 0.0;
            if nb > 1 {
                for l in 0..nb {
                    let mut line = 0.0;
                    for m in 0..nb {
                        let de = p.w[(j + l) * n + j + m] * (p.force[j + m] - old[m]);
                        line += de * de;
                    }
                    let line = line.sqrt();
                    if line > tol {
                        verified = false;
                    }
                    e += line;
                }
            } else {
                e = (p.w[j * n + j] * (p.force[j] - old[0])).abs();
                if e > tol {
                    verified = false;
                }
            }
            if b.tolerance != 0.0 {
                if e > b.tolerance {
                    verified = false;
                }
                e *= tol / b.tolerance;
            }
            error += e;
        }
        (error, verified)
    }

    fn converged(&self, error: f64, verified: bool, tol: f64) -> bool {
        if self.all_verified {
            verified
        } else {
            error < tol
        }
    }

    pub fn run(&mut self, p: &mut ConstraintProblem) -> ConstraintStats {
        let n = p.n;
        if n == 0 {
            return ConstraintStats {
                converged: true,
                ..Default::default()
            };
        }
        regularize(p, self.regularization);
        p.force.resize(n, 0.0);
        let mut tol = self.tolerance;
        if self.scale_tolerance && !self.all_verified {
            tol *= n as f64;
        }
        self.init_blocks(p);
        if self.method == Method::Unbuilt {
            p.force.iter_mut().for_each(|f| *f = 0.0);
        }
        let mut stats = ConstraintStats::default();
        match self.method {
            Method::Jacobi => self.jacobi(p, tol, &mut stats),
            Method::GaussSeidel | Method::Unbuilt => {
                let mut old = vec![0.0; if self.sor != 1.0 { n } else { 0 }];
                for it in 0..self.max_iterations {
                    if self.sor != 1.0 {
                        old.copy_from_slice(&p.force);
                    }
                    let (error, verified) = self.sweep(p, tol, true);
                    if self.sor != 1.0 {
                        for (f, o) in p.force.iter_mut().zip(&old) {
                            *f = self.sor * *f + (1.0 - self.sor) * o;
                        }
                    }
                    stats.iterations = it + 1;
                    stats.error = error;
                    if self.converged(error, verified, tol) {
                        stats.converged = true;
                        break;
                    }
                }
            }
            Method::Nncg => {
                let mut lam = p.force.clone();
                self.sweep(p, tol, false);
                let mut delta: Vec<f64> = p.force.iter().zip(&lam).map(|(f, l)| l - f).collect();
                let mut dir: Vec<f64> = delta.iter().map(|x| -x).collect();
                stats.iterations = 1;
                for it in 1..self.max_iterations {
                    lam.copy_from_slice(&p.force);
                    let (error, verified) = self.sweep(p, tol, true);
                    stats.iterations = it + 1;
                    stats.error = error;
                    if self.converged(error, verified, tol) {
                        stats.converged = true;
                        break;
                    }
                    let new: Vec<f64> = p.force.iter().zip(&lam).map(|(f, l)| l - f).collect();
                    let nn: f64 = new.iter().map(|x| x * x).sum();
                    let no: f64 = delta.iter().map(|x| x * x).sum();
                    let beta = nn / no;
                    delta = new;
                    if beta > 1.0 {
                        dir.iter_mut().for_each(|x| *x = 0.0);
                    } else {
                        for (f, q) in p.force.iter_mut().zip(&dir) {
                            *f += beta * q;
                        }
                        for (q, dl) in dir.iter_mut().zip(&delta) {
                            *q = beta * *q - dl;
                        }
                    }
                    if nn.sqrt() < tol {
                        break;
                    }
                }
            }
        }
        stats
    }
}

/// A block's resolution (SOFA's ConstraintResolution::resolution).
fn resolve(b: &Block, st: &BlockState, w: &[f64], n: usize, d: &mut [f64], f: &mut [f64]) {
    let j = b.first_row;
    match (b.resolution, st) {
        (Resolution::Bilateral { rows: 3 }, BlockState::Bilateral3(Some(inv))) => {
            for i in 0..3 {
                for k in 0..3 {
                    f[j + i] -= d[j + k] * inv[(i, k)];
                }
            }
        }
        // a singular block is skipped, as SOFA's resolution does with a non-invertible W block
        (Resolution::Bilateral { rows: 3 }, BlockState::Bilateral3(None)) => {}
        (Resolution::BilateralBlock { rows }, BlockState::BilateralN(Some(factor))) => {
            let r = rows as usize;
            let dv = nalgebra::DVector::from_column_slice(&d[j..j + r]);
            if let Some(x) = factor.solve(&dv) {
                for (fi, xi) in f[j..j + r].iter_mut().zip(x.iter()) {
                    *fi -= xi;
                }
            }
        }
        (Resolution::Bilateral { rows }, _) => {
            // one line at a time (rows other than 3 are solved line by line)
            for l in 0..rows as usize {
                let wll = w[(j + l) * n + j + l];
                if wll != 0.0 {
                    f[j + l] -= d[j + l] / wll;
                }
            }
        }
        (Resolution::Unilateral, _) => {
            let wjj = w[j * n + j];
            if wjj != 0.0 {
                f[j] -= d[j] / wjj;
            }
            if f[j] < 0.0 {
                f[j] = 0.0;
            }
        }
        // AugmentedLagrangianConstraint.cpp: the normal impulse −= ε·d_n, kept ≥ 0 (else the
        // contact is released); the tangential ones −= ε·d_t while inside the Coulomb cone,
        // else moved by μ·ε·d_n along the tangential violation's direction (as SOFA writes it;
        // skipped when that direction is undefined, where SOFA would divide by zero)
        (Resolution::AugmentedFriction { mu, epsilon }, _) => {
            f[j] -= d[j] * epsilon;
            if f[j] < 0.0 {
                f[j] = 0.0;
                f[j + 1] = 0.0;
                f[j + 2] = 0.0;
                return;
            }
            let ft = f[j + 1] - d[j + 1] * epsilon;
            let fs = f[j + 2] - d[j + 2] * epsilon;
            if (ft * ft + fs * fs).sqrt() - mu * f[j].abs() < 0.0 {
                f[j + 1] = ft;
                f[j + 2] = fs;
            } else {
                let norm = (d[j + 1] * d[j + 1] + d[j + 2] * d[j + 2]).sqrt();
                if norm > 0.0 {
                    f[j + 1] -= mu * d[j] * epsilon * d[j + 1] / norm;
                    f[j + 2] -= mu * d[j] * epsilon * d[j + 2] / norm;
                }
            }
        }
        (Resolution::Friction { mu }, BlockState::Friction(ws)) => {
            let [w0, w1, w2, w3, w5] = *ws;
            let f0 = f[j];
            if w0 != 0.0 {
                f[j] -= d[j] / w0;
            }
            if f[j] < 0.0 {
                f[j] = 0.0;
                f[j + 1] = 0.0;
                f[j + 2] = 0.0;
                return;
            }
            d[j + 1] += w1 * (f[j] - f0);
            d[j + 2] += w2 * (f[j] - f0);
            let s = w3 + w5;
            if s != 0.0 {
                f[j + 1] -= 2.0 * d[j + 1] / s;
                f[j + 2] -= 2.0 * d[j + 2] / s;
            }
            let (mut ft, mut fs) = (f[j + 1], f[j + 2]);
            cap(mu, f[j], &mut ft, &mut fs);
            f[j + 1] = ft;
            f[j + 2] = fs;
        }
        _ => {}
    }
}

canape_core::data_schema! {
    /// The Gauss–Seidel constraint solvers' Data (after the base Data).
    pub struct GaussSeidelData {
        max_iterations: Int = ("maxIterations", DataKind::Int, "1000", "maximal number of iterations of the Gauss-Seidel algorithm") alias ["maxIt"],
        tolerance: Real = ("tolerance", DataKind::Real, "0.001", "residual error threshold for termination of the Gauss-Seidel algorithm"),
        sor: Real = ("sor", DataKind::Real, "1", "Successive Over Relaxation parameter (0-2)"),
        regularization_term: Real = ("regularizationTerm", DataKind::Real, "0", "Add regularization factor times the identity matrix to the compliance W when solving constraints"),
        scale_tolerance: Flag = ("scaleTolerance", DataKind::Bool, "1", "Scale the error tolerance with the number of constraints"),
        all_verified: Flag = ("allVerified", DataKind::Bool, "0", "All constraints must be verified (each constraint's error < tolerance)"),
        compute_graphs: Flag = ("computeGraphs", DataKind::Bool, "0", "Compute graphs of errors and forces during resolution"),
        compute_constraint_forces: Flag = ("computeConstraintForces", DataKind::Bool, "0", "enable the storage of the constraintForces."),
        multithreading: Flag = ("multithreading", DataKind::Bool, "0", "Build compliances concurrently"),
        reverse_accumulate_order: Flag = ("reverseAccumulateOrder", DataKind::Bool, "0", "True to accumulate constraints from nodes in reversed order (can be necessary when using multi-mappings or interaction constraints not following the node hierarchy)"),
        use_svd_for_regularization: Flag = ("useSVDForRegularization", DataKind::Bool, "0", "Use SVD decomposition of the compliance matrix to project singular values smaller than regularization to the regularization term. Only works with built"),
        current_iterations: Int = ("currentIterations", DataKind::Int, "0", "OUTPUT: current number of constraint groups"),
        current_error: Real = ("currentError", DataKind::Real, "0", "OUTPUT: current error"),
        current_num_constraints: Int = ("currentNumConstraints", DataKind::Int, "0", "OUTPUT: current number of constraints"),
        current_num_constraint_groups: Int = ("currentNumConstraintGroups", DataKind::Int, "0", "OUTPUT: current number of constraints"),
        constraint_forces: Reals = ("constraintForces", DataKind::Reals(0), "", "OUTPUT: constraint forces (stored only if computeConstraintForces=True)"),
    }
}

canape_core::data_schema! {
    /// What GenericConstraintSolver adds to [`GaussSeidelData`].
    pub struct GenericSolverData {
        resolution_method: Text = ("resolutionMethod", DataKind::Str, "ProjectedGaussSeidel", "Method used to solve the constraint problem, among: \"ProjectedGaussSeidel\", \"UnbuiltGaussSeidel\" or \"NonsmoothNonlinearConjugateGradient\""),
        newton_iterations: Int = ("newtonIterations", DataKind::Int, "100", "Maximum iteration number of Newton (for the NonsmoothNonlinearConjugateGradient method only)"),
    }
}

canape_core::data_schema! {
    /// What ImprovedJacobiConstraintSolver adds to [`GaussSeidelData`].
    pub struct JacobiData {
        use_spectral_correction: Flag = ("useSpectralCorrection", DataKind::Bool, "0", "If set to true, the solution found after each iteration will be multiplied by spectralCorrectionFactor*2/spr(W), with spr() denoting the spectral radius."),
        spectral_correction_factor: Real = ("spectralCorrectionFactor", DataKind::Real, "1", "Factor used to modulate the spectral correction"),
        use_conjugate_residue: Flag = ("useConjugateResidue", DataKind::Bool, "0", "If set to true, the solution found after each iteration will be corrected along the solution direction using `\\lambda^{i+1} -= beta^{i} * (\\lambda^{i} - \\lambda^{i-1})` with beta following the formula beta^{i} = min(1, (i/maxIterations)^{conjugateResidueSpeedFactor})"),
        conjugate_residue_speed_factor: Real = ("conjugateResidueSpeedFactor", DataKind::Real, "10", "Factor used to modulate the speed in which beta used in the conjugate residue part reaches 1.0. The higher the value, the slower the reach."),
    }
}

/// A Gauss–Seidel constraint solver component, under each of SOFA's class names.
#[derive(Clone)]
pub struct GaussSeidelConstraintSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: GaussSeidelData,
    /// GenericConstraintSolver's Data.
    generic: Option<GenericSolverData>,
    /// ImprovedJacobiConstraintSolver's Data.
    jacobi: Option<JacobiData>,
    class: &'static str,
    pub solver: GaussSeidel,
}

impl GaussSeidelConstraintSolver {
    pub fn new(class: &'static str) -> Self {
        let method = match class {
            "UnbuiltGaussSeidelConstraintSolver" => Method::Unbuilt,
            "NNCGConstraintSolver" => Method::Nncg,
            "ImprovedJacobiConstraintSolver" => Method::Jacobi,
            _ => Method::GaussSeidel,
        };
        let (data, d) = GaussSeidelData::declare(base_data(DataTable::new()));
        let (data, generic) = if class == "GenericConstraintSolver" {
            let (data, g) = GenericSolverData::declare(data);
            (data, Some(g))
        } else {
            (data, None)
        };
        let (data, jacobi) = if method == Method::Jacobi {
            let (data, j) = JacobiData::declare(data);
            (data, Some(j))
        } else {
            (data, None)
        };
        GaussSeidelConstraintSolver {
            data,
            d,
            generic,
            jacobi,
            class,
            solver: GaussSeidel {
                method,
                ..Default::default()
            },
        }
    }

    /// Set `s`'s settings from the Data, and say what init warns about them (values replaced
    /// by the defaults).
    fn configure(&self, s: &mut GaussSeidel) -> Vec<String> {
        let (t, d) = (&self.data, &self.d);
        let mut warnings = Vec::new();
        s.max_iterations = t.get(d.max_iterations).clamp(0, 1 << 30) as usize;
        s.tolerance = t.get(d.tolerance);
        s.sor = t.get(d.sor);
        s.regularization = t.get(d.regularization_term);
        s.scale_tolerance = t.get(d.scale_tolerance);
        s.all_verified = t.get(d.all_verified);
        if let Some(g) = self.generic {
            s.method = match t.get(g.resolution_method).trim() {
                "UnbuiltGaussSeidel" => Method::Unbuilt,
                "NonsmoothNonlinearConjugateGradient" => {
                    if !t.was_set(d.max_iterations) {
                        s.max_iterations = t.get(g.newton_iterations).clamp(0, 1 << 30) as usize;
                    }
                    Method::Nncg
                }
                "ProjectedGaussSeidel" | "" => Method::GaussSeidel,
                other => {
                    warnings.push(format!("resolutionMethod '{other}' is unknown (ProjectedGaussSeidel, UnbuiltGaussSeidel or NonsmoothNonlinearConjugateGradient): ProjectedGaussSeidel is used"));
                    Method::GaussSeidel
                }
            };
        }
        if let Some(j) = self.jacobi {
            s.spectral_correction = t
                .get(j.use_spectral_correction)
                .then(|| t.get(j.spectral_correction_factor));
            s.conjugate_residue = t
                .get(j.use_conjugate_residue)
                .then(|| t.get(j.conjugate_residue_speed_factor));
        }
        if !(s.sor > 0.0 && s.sor < 2.0) {
            warnings.push(format!("sor {} is outside (0, 2): 1 is used", s.sor));
            s.sor = 1.0;
        }
        if t.get(d.max_iterations) < 0 {
            warnings.push(format!(
                "maxIterations {} is negative: 1000 is used",
                t.get(d.max_iterations)
            ));
            s.max_iterations = 1000;
        }
        if s.tolerance.is_nan() || s.tolerance < 0.0 {
            warnings.push("tolerance must be a non-negative number: 0.001 is used".to_string());
            s.tolerance = 0.001;
        }
        warnings
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let mut s = std::mem::take(&mut self.solver);
        let warnings = self.configure(&mut s);
        self.solver = s;
        for w in warnings {
            ctx.warn(w);
        }
    }

    /// The iteration settings (maxIterations, tolerance, sor, regularizationTerm,
    /// scaleTolerance, allVerified) take effect in place, unless init would warn about them;
    /// the resolution method and the rest re-initialise.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        let in_place = [
            d.max_iterations.index(),
            d.tolerance.index(),
            d.sor.index(),
            d.regularization_term.index(),
            d.scale_tolerance.index(),
            d.all_verified.index(),
        ];
        if !changed.only(&in_place) {
            return Reaction::Reinit;
        }
        let mut s = self.solver.clone();
        if !self.configure(&mut s).is_empty() {
            return Reaction::Reinit;
        }
        self.solver = s;
        Reaction::Updated
    }
}

impl_component!(GaussSeidelConstraintSolver, |s| s.class, init, data_changed);

impl Passive for GaussSeidelConstraintSolver {
    fn role(&self) -> Role {
        Role::Constraint
    }
    fn constraint_solver(&mut self) -> Option<&mut dyn ConstraintSolver> {
        Some(self)
    }
}

impl ConstraintSolver for GaussSeidelConstraintSolver {
    fn form(&self) -> ProblemForm {
        match self.solver.method {
            Method::Unbuilt => ProblemForm::Unbuilt,
            _ => ProblemForm::Built,
        }
    }
    fn solve(&mut self, problem: &mut ConstraintProblem) -> ConstraintStats {
        let stats = self.solver.run(problem);
        let blocks = problem.blocks.len();
        let (t, d) = (&mut self.data, &self.d);
        let _ = t.put(d.current_iterations, Value::Int(stats.iterations as i64));
        let _ = t.put(d.current_error, Value::Real(stats.error));
        let _ = t.put(d.current_num_constraints, Value::Int(problem.n as i64));
        let _ = t.put(d.current_num_constraint_groups, Value::Int(blocks as i64));
        stats
    }
}

impl ConstraintSolver for GaussSeidel {
    fn solve(&mut self, problem: &mut ConstraintProblem) -> ConstraintStats {
        self.run(problem)
    }
}

/// A row of W times the impulses: four partial sums over interleaved entries, added pairwise
/// (the sweep's inner product; independent sums let it run at the machine's vector width).
fn row_dot(row: &[f64], f: &[f64]) -> f64 {
    let (rc, rt) = row.as_chunks::<4>();
    let (fc, ft) = f[..row.len()].as_chunks::<4>();
    let mut acc = [0.0f64; 4];
    for (r, x) in rc.iter().zip(fc) {
        for k in 0..4 {
            acc[k] += r[k] * x[k];
        }
    }
    let mut tail = 0.0;
    for (r, x) in rt.iter().zip(ft) {
        tail += r * x;
    }
    (acc[0] + acc[2]) + (acc[1] + acc[3]) + tail
}
