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
//! constraint stage).

use crate::base_data;
use canape_core::component::{Passive, Role};
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::lagrangian::{
    Block, ConstraintProblem, ConstraintSolver, ConstraintStats, ProblemForm, Resolution,
};
use canape_core::scene::InitContext;
use nalgebra::Matrix3;

/// Which iteration a solver runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Projected (block) Gauss–Seidel on the built W.
    GaussSeidel,
    /// Gauss–Seidel over the diagonal blocks with displacements updated block by block.
    Unbuilt,
    /// Nonsmooth nonlinear conjugate gradient around Gauss–Seidel sweeps.
    Nncg,
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
    states: Vec<BlockState>,
    d: Vec<f64>,
    /// A block's impulses before its resolution (for the error measure).
    old: Vec<f64>,
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
            states: Vec::new(),
            d: Vec::new(),
            old: Vec::new(),
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
                let mut s = p.dfree[j + l];
                for (wk, fk) in row.iter().zip(&p.force) {
                    s += wk * fk;
                }
                self.d[j + l] = s;
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

/// A Gauss–Seidel constraint solver component, under each of SOFA's class names.
#[derive(Clone)]
pub struct GaussSeidelConstraintSolver {
    data: DataTable,
    class: &'static str,
    pub solver: GaussSeidel,
}

fn solver_data(with_method: bool) -> DataTable {
    let mut d = base_data(DataTable::new())
        .with("maxIterations", DataKind::Int, "1000", "maximal number of iterations of the Gauss-Seidel algorithm")
        .alias(&["maxIt"])
        .with("tolerance", DataKind::Real, "0.001", "residual error threshold for termination of the Gauss-Seidel algorithm")
        .with("sor", DataKind::Real, "1", "Successive Over Relaxation parameter (0-2)")
        .with("regularizationTerm", DataKind::Real, "0", "Add regularization factor times the identity matrix to the compliance W when solving constraints")
        .with("scaleTolerance", DataKind::Bool, "1", "Scale the error tolerance with the number of constraints")
        .with("allVerified", DataKind::Bool, "0", "All constraints must be verified (each constraint's error < tolerance)")
        .with("computeGraphs", DataKind::Bool, "0", "Compute graphs of errors and forces during resolution")
        .with("computeConstraintForces", DataKind::Bool, "0", "enable the storage of the constraintForces.")
        .with("multithreading", DataKind::Bool, "0", "Build compliances concurrently")
        .with("reverseAccumulateOrder", DataKind::Bool, "0", "True to accumulate constraints from nodes in reversed order (can be necessary when using multi-mappings or interaction constraints not following the node hierarchy)")
        .with("useSVDForRegularization", DataKind::Bool, "0", "Use SVD decomposition of the compliance matrix to project singular values smaller than regularization to the regularization term. Only works with built")
        .with("currentIterations", DataKind::Int, "0", "OUTPUT: current number of constraint groups")
        .with("currentError", DataKind::Real, "0", "OUTPUT: current error")
        .with("currentNumConstraints", DataKind::Int, "0", "OUTPUT: current number of constraints")
        .with("currentNumConstraintGroups", DataKind::Int, "0", "OUTPUT: current number of constraints")
        .with("constraintForces", DataKind::Reals(0), "", "OUTPUT: constraint forces (stored only if computeConstraintForces=True)");
    if with_method {
        d = d
            .with("resolutionMethod", DataKind::Str, "ProjectedGaussSeidel", "Method used to solve the constraint problem, among: \"ProjectedGaussSeidel\", \"UnbuiltGaussSeidel\" or \"NonsmoothNonlinearConjugateGradient\"")
            .with("newtonIterations", DataKind::Int, "100", "Maximum iteration number of Newton (for the NonsmoothNonlinearConjugateGradient method only)");
    }
    d
}

impl GaussSeidelConstraintSolver {
    pub fn new(class: &'static str) -> Self {
        let method = match class {
            "UnbuiltGaussSeidelConstraintSolver" => Method::Unbuilt,
            "NNCGConstraintSolver" => Method::Nncg,
            _ => Method::GaussSeidel,
        };
        GaussSeidelConstraintSolver {
            data: solver_data(class == "GenericConstraintSolver"),
            class,
            solver: GaussSeidel {
                method,
                ..Default::default()
            },
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let d = &self.data;
        let s = &mut self.solver;
        s.max_iterations = d.int("maxIterations").clamp(0, 1 << 30) as usize;
        s.tolerance = d.real("tolerance");
        s.sor = d.real("sor");
        s.regularization = d.real("regularizationTerm");
        s.scale_tolerance = d.bool("scaleTolerance");
        s.all_verified = d.bool("allVerified");
        if self.class == "GenericConstraintSolver" {
            s.method = match d.str("resolutionMethod").trim() {
                "UnbuiltGaussSeidel" => Method::Unbuilt,
                "NonsmoothNonlinearConjugateGradient" => {
                    if !d.is_set("maxIterations") {
                        s.max_iterations = d.int("newtonIterations").clamp(0, 1 << 30) as usize;
                    }
                    Method::Nncg
                }
                "ProjectedGaussSeidel" | "" => Method::GaussSeidel,
                other => {
                    ctx.warn(format!("resolutionMethod '{other}' is unknown (ProjectedGaussSeidel, UnbuiltGaussSeidel or NonsmoothNonlinearConjugateGradient): ProjectedGaussSeidel is used"));
                    Method::GaussSeidel
                }
            };
        }
        if !(s.sor > 0.0 && s.sor < 2.0) {
            ctx.warn(format!("sor {} is outside (0, 2): 1 is used", s.sor));
            s.sor = 1.0;
        }
        if d.int("maxIterations") < 0 {
            ctx.warn(format!(
                "maxIterations {} is negative: 1000 is used",
                d.int("maxIterations")
            ));
            s.max_iterations = 1000;
        }
        if s.tolerance.is_nan() || s.tolerance < 0.0 {
            ctx.warn("tolerance must be a non-negative number: 0.001 is used");
            s.tolerance = 0.001;
        }
    }
}

impl_component!(GaussSeidelConstraintSolver, |s| s.class, init);

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
        let _ = self
            .data
            .set_str("currentIterations", &stats.iterations.to_string());
        let _ = self.data.set_str("currentError", &stats.error.to_string());
        let _ = self
            .data
            .set_str("currentNumConstraints", &problem.n.to_string());
        let _ = self
            .data
            .set_str("currentNumConstraintGroups", &blocks.to_string());
        stats
    }
}

impl ConstraintSolver for GaussSeidel {
    fn solve(&mut self, problem: &mut ConstraintProblem) -> ConstraintStats {
        self.run(problem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(w: &[f64], dfree: &[f64], blocks: Vec<Block>) -> ConstraintProblem {
        let n = dfree.len();
        ConstraintProblem {
            n,
            w: w.to_vec(),
            dfree: dfree.to_vec(),
            blocks,
            force: vec![0.0; n],
        }
    }

    fn bil(first_row: usize, rows: u8) -> Block {
        Block {
            first_row,
            resolution: Resolution::Bilateral { rows },
            tolerance: 0.0,
        }
    }

    #[test]
    fn bilateral_rows_satisfy_w_f_plus_dfree_zero() {
        // a symmetric positive definite W coupling two 3-line blocks
        let n = 6;
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                w[i * n + j] = if i == j {
                    4.0
                } else {
                    1.0 / (1.0 + (i + j) as f64)
                };
            }
        }
        let dfree = [0.3, -0.2, 0.1, 0.5, 0.0, -0.4];
        let mut p = problem(&w, &dfree, vec![bil(0, 3), bil(3, 3)]);
        let mut gs = GaussSeidel {
            tolerance: 1e-12,
            ..Default::default()
        };
        let stats = gs.run(&mut p);
        assert!(stats.converged, "{stats:?}");
        for i in 0..n {
            let r: f64 = dfree[i] + (0..n).map(|k| w[i * n + k] * p.force[k]).sum::<f64>();
            assert!(r.abs() < 1e-10, "row {i}: residual {r}");
        }
    }

    #[test]
    fn unilateral_pushes_only() {
        // one contact already separated (dfree > 0) gets no impulse; one in contact is pushed
        // out to zero violation
        let w = [2.0, 0.5, 0.5, 1.0];
        let dfree = [0.4, -0.3];
        let blocks = (0..2)
            .map(|i| Block {
                first_row: i,
                resolution: Resolution::Unilateral,
                tolerance: 0.0,
            })
            .collect();
        let mut p = problem(&w, &dfree, blocks);
        let mut gs = GaussSeidel {
            tolerance: 1e-14,
            ..Default::default()
        };
        gs.run(&mut p);
        assert_eq!(p.force[0], 0.0);
        assert!((p.force[1] - 0.3).abs() < 1e-12, "{:?}", p.force);
    }

    #[test]
    fn friction_stays_in_the_cone() {
        // normal violation −1 with a tangential one: the tangential impulse is capped at μ fn
        let w = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let dfree = [-1.0, 5.0, 0.0];
        let mut p = problem(
            &w,
            &dfree,
            vec![Block {
                first_row: 0,
                resolution: Resolution::Friction { mu: 0.2 },
                tolerance: 0.0,
            }],
        );
        GaussSeidel::default().run(&mut p);
        assert!((p.force[0] - 1.0).abs() < 1e-12);
        let t = (p.force[1].powi(2) + p.force[2].powi(2)).sqrt();
        assert!((t - 0.2).abs() < 1e-12, "{:?}", p.force);
        assert!(p.force[1] < 0.0);
    }

    #[test]
    fn lcp_solver_keeps_contacts_complementary_and_in_the_cone() {
        // two frictionless contacts: one pulled apart (no impulse), one pushed
        let w = [2.0, 0.5, 0.5, 1.0];
        for build in [true, false] {
            let mut lcp = LcpConstraintSolver::new();
            lcp.mu = 0.0;
            lcp.build = build;
            lcp.tolerance = 1e-14;
            let blocks = (0..2)
                .map(|i| Block {
                    first_row: i,
                    resolution: Resolution::Unilateral,
                    tolerance: 0.0,
                })
                .collect();
            let mut p = problem(&w, &[0.4, -0.3], blocks);
            lcp.solve(&mut p);
            assert_eq!(p.force[0], 0.0, "{build}");
            assert!((p.force[1] - 0.3).abs() < 1e-12, "{build}: {:?}", p.force);
        }
        // one contact with friction, sliding: fn from the normal row, |ft| = mu fn
        let w = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        for build in [true, false] {
            let mut lcp = LcpConstraintSolver::new();
            lcp.mu = 0.2;
            lcp.build = build;
            lcp.tolerance = 1e-14;
            let mut p = problem(
                &w,
                &[-1.0, 5.0, 0.0],
                vec![Block {
                    first_row: 0,
                    resolution: Resolution::Friction { mu: 0.2 },
                    tolerance: 0.0,
                }],
            );
            let stats = lcp.solve(&mut p);
            assert!(stats.converged, "{build}");
            assert!((p.force[0] - 1.0).abs() < 1e-12, "{build}: {:?}", p.force);
            assert!((p.force[1] + 0.2).abs() < 1e-12, "{build}: {:?}", p.force);
        }
    }

    #[test]
    fn nncg_and_unbuilt_reach_the_same_solution() {
        let n = 6;
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                w[i * n + j] = if i == j {
                    3.0
                } else {
                    0.9 / (1.0 + (i * j) as f64)
                };
            }
        }
        let dfree = [0.3, -0.2, 0.1, 0.5, 0.0, -0.4];
        let mut sols = Vec::new();
        for method in [Method::GaussSeidel, Method::Unbuilt, Method::Nncg] {
            let mut p = problem(&w, &dfree, vec![bil(0, 3), bil(3, 3)]);
            let mut gs = GaussSeidel {
                method,
                tolerance: 1e-13,
                ..Default::default()
            };
            gs.run(&mut p);
            sols.push(p.force);
        }
        for s in &sols[1..] {
            for (a, b) in s.iter().zip(&sols[0]) {
                assert!((a - b).abs() < 1e-9, "{s:?} vs {:?}", sols[0]);
            }
        }
    }
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
    data: DataTable,
    tolerance: f64,
    max_iterations: usize,
    mu: f64,
    build: bool,
    regularization: f64,
    min_w: f64,
    max_f: f64,
}

impl Default for LcpConstraintSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl LcpConstraintSolver {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with("displayDebug", DataKind::Bool, "0", "Display debug information.")
            .with("initial_guess", DataKind::Bool, "1", "activate LCP results history to improve its resolution performances.")
            .with("build_lcp", DataKind::Bool, "1", "LCP is not fully built to increase performance in some case.")
            .with("tolerance", DataKind::Real, "0.001", "residual error threshold for termination of the Gauss-Seidel algorithm")
            .with("maxIt", DataKind::Int, "1000", "maximal number of iterations of the Gauss-Seidel algorithm")
            .with("regularizationTerm", DataKind::Real, "0", "Add regularization factor times the identity matrix to the compliance W when solving constraints")
            .with("mu", DataKind::Real, "0.6", "Friction coefficient")
            .with("minW", DataKind::Real, "0", "If not zero, constraints whose self-compliance (i.e. the corresponding value on the diagonal of W) is smaller than this threshold will be ignored")
            .with("maxF", DataKind::Real, "0", "If not zero, constraints whose response force becomes larger than this threshold will be ignored")
            .with("multi_grid", DataKind::Bool, "0", "activate multi_grid resolution (NOT STABLE YET)")
            .with("multi_grid_levels", DataKind::Int, "2", "if multi_grid is active: how many levels to create (>=2)")
            .with("merge_method", DataKind::Int, "0", "if multi_grid is active: which method to use to merge constraints (0 = compliance-based, 1 = spatial coordinates)")
            .with("merge_spatial_step", DataKind::Int, "2", "if merge_method is 1: grid size reduction between multigrid levels")
            .with("merge_local_levels", DataKind::Int, "2", "if merge_method is 1: up to the specified level of the multigrid, constraints are grouped locally")
            .with("constraintForces", DataKind::Reals(0), "", "OUTPUT: constraint forces (stored only if computeConstraintForces=True)")
            .with("computeConstraintForces", DataKind::Bool, "0", "enable the storage of the constraintForces.")
            .with("group", DataKind::Ints(0), "0", "list of ID of groups of constraints to be handled by this solver.")
            .with("showLevels", DataKind::Int, "0", "Number of constraint levels to display")
            .with("showCellWidth", DataKind::Real, "0", "Distance between each constraint cells")
            .with("showTranslation", DataKind::Vector(3), "0 0 0", "Position of the first cell")
            .with("showLevelTranslation", DataKind::Vector(3), "0 0 0", "Translation between levels");
        LcpConstraintSolver {
            data,
            tolerance: 0.001,
            max_iterations: 1000,
            mu: 0.6,
            build: true,
            regularization: 0.0,
            min_w: 0.0,
            max_f: 0.0,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let d = &self.data;
        self.tolerance = d.real("tolerance");
        self.max_iterations = d.int("maxIt").clamp(0, 1 << 30) as usize;
        self.mu = d.real("mu");
        self.build = d.bool("build_lcp");
        self.regularization = d.real("regularizationTerm");
        self.min_w = d.real("minW");
        self.max_f = d.real("maxF");
        if self.tolerance.is_nan() || self.tolerance < 0.0 {
            ctx.warn("tolerance must be a non-negative number: 0.001 is used");
            self.tolerance = 0.001;
        }
        if d.int("maxIt") < 0 {
            ctx.warn(format!(
                "maxIt {} is negative: 1000 is used",
                d.int("maxIt")
            ));
            self.max_iterations = 1000;
        }
        if d.bool("multi_grid") {
            ctx.warn("multi_grid is not supported: the plain Gauss-Seidel runs");
        }
        if d.bool("initial_guess") {
            ctx.note("initial_guess: the impulses of the previous step are not reused yet (each solve starts from zero)");
        }
        if self.mu.is_nan() || self.mu < 0.0 {
            ctx.warn(format!("mu {} must be non-negative: 0 is used", self.mu));
            self.mu = 0.0;
        }
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
                    for (k, (wk, fk)) in row.iter().zip(&p.force).enumerate() {
                        if k < j || k >= j + 3 {
                            *dl += wk * fk;
                        }
                    }
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
                let mut u = p.dfree[i];
                for (k, (wk, fk)) in row.iter().zip(&p.force).enumerate() {
                    if k != i {
                        u += wk * fk;
                    }
                }
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
fn regularize(p: &mut ConstraintProblem, r: f64) {
    if r > f64::EPSILON {
        let n = p.n;
        for i in 0..n {
            p.w[i * n + i] += r;
        }
    }
}

/// Scale the tangential impulses back onto Coulomb's cone |f_t| ≤ μ f_n.
fn cap(mu: f64, fnn: f64, ft: &mut f64, fs: &mut f64) {
    let norm = (*ft * *ft + *fs * *fs).sqrt();
    if norm > mu * fnn {
        *ft *= mu * fnn / norm;
        *fs *= mu * fnn / norm;
    }
}

impl_component!(LcpConstraintSolver, "LCPConstraintSolver", init);

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
                return ConstraintStats::default();
            }
            self.nlcp(p)
        } else {
            self.lcp(p)
        }
    }
}
