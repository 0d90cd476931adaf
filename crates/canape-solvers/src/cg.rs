//! CGLinearSolver: conjugate gradient, matrix-free through the graph (`GraphScattered`, SOFA's
//! default template) or on an assembled CSR matrix (`CompressedRowSparseMatrix*` templates).
//!
//! Control flow follows SOFA's CGLinearSolver.inl: x starts at 0 (unless warmStart), r = b; stop
//! when |r|/|b| ≤ tolerance, or |pᵀAp| ≤ threshold, or after `iterations` products; on the very
//! first solve the tests of iteration 1 only warn and do not stop.

use canape_core::component::{LinearSystem, SolveStats};
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::matrix::{Bsr3, BsrCache, Csr, SymBsr3, SymBsrCache};
use canape_core::scene::InitContext;

#[derive(Clone)]
pub struct CgLinearSolver {
    data: DataTable,
    assembled: bool,
    max_iter: usize,
    tolerance: f64,
    threshold: f64,
    warm_start: bool,
    solve_count: u64,
    // scratch, reused between solves (no allocation per step once sized)
    r: Vec<f64>,
    p: Vec<f64>,
    q: Vec<f64>,
    /// Block form of the assembled matrix, with its pattern kept between steps.
    bsr: BsrCache,
    sym: SymBsrCache,
}

impl CgLinearSolver {
    /// `template` selects the matrix-free (`GraphScattered`, "") or assembled variant.
    pub fn new(template: &str) -> Result<Self, String> {
        let assembled = match template {
            "" | "GraphScattered" => false,
            t if t.starts_with("CompressedRowSparseMatrix") => true,
            t if t.starts_with("FullMatrix") || t.starts_with("SparseMatrix") => true,
            other => return Err(format!("template '{other}' is not available for CGLinearSolver (use GraphScattered or CompressedRowSparseMatrix[Mat3x3])")),
        };
        let data = DataTable::new()
            .with("iterations", DataKind::Int, "25", "Maximum number of iterations of the Conjugate Gradient solution")
            .with("tolerance", DataKind::Real, "1e-5", "Desired accuracy of the Conjugate Gradient solution evaluating: |r|/|b| (ratio of current residual norm over initial residual norm)")
            .with("threshold", DataKind::Real, "1e-5", "Minimum value of the denominator in the conjugate Gradient solution")
            .with("warmStart", DataKind::Bool, "0", "Use previous solution as initial solution")
            .with("graph", DataKind::Words, "", "Graph of residuals at each iteration")
            .with("linearSystem", DataKind::Str, "", "The linear system to solve")
            .with("printLog", DataKind::Bool, "0", "Print log messages")
            .with("tags", DataKind::Words, "", "Tags of the component")
            .with("listening", DataKind::Bool, "0", "Listen to events");
        Ok(CgLinearSolver {
            data,
            assembled,
            max_iter: 25,
            tolerance: 1e-5,
            threshold: 1e-5,
            warm_start: false,
            solve_count: 0,
            r: Vec::new(),
            p: Vec::new(),
            q: Vec::new(),
            bsr: BsrCache::default(),
            sym: SymBsrCache::default(),
        })
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let it = self.data.int("iterations");
        if it < 0 {
            ctx.warn(format!(
                "iterations = {it} is negative; no iteration will be done"
            ));
        }
        self.max_iter = it.max(0) as usize;
        self.tolerance = self.data.real("tolerance");
        if self.tolerance < 0.0 {
            ctx.warn("tolerance must be positive; reset to 1e-5");
            self.tolerance = 1e-5;
        }
        self.threshold = self.data.real("threshold");
        if self.threshold < 0.0 {
            ctx.warn("threshold must be positive; reset to 1e-5");
            self.threshold = 1e-5;
        }
        self.warm_start = self.data.bool("warmStart");
        self.solve_count = 0;
    }
}

impl_component!(CgLinearSolver, "CGLinearSolver", init);

solve_with_avx2!(CgLinearSolver);

impl CgLinearSolver {
    /// Nothing is carried from one solve to the next.
    fn restart_impl(&mut self) {}
}

impl CgLinearSolver {
    #[inline(always)]
    fn solve_impl(&mut self, sys: &mut dyn LinearSystem, b: &[f64], x: &mut [f64]) -> SolveStats {
        let n = sys.size();
        // assembled variant: CG needs A symmetric, so Vec3 systems assemble only the 3×3 blocks
        // on and above the diagonal and multiply by them and their mirror images; a system
        // that assembles everything anyway goes through full 3×3 blocks, scalar CSR otherwise
        let (mut sym, mut bsr, mut csr): (Option<&SymBsr3>, Option<&Bsr3>, Option<Csr>) =
            (None, None, None);
        if self.assembled {
            if n.is_multiple_of(3) {
                let a = sys.assemble_upper();
                sym = self.sym.convert(&a);
                if sym.is_none() {
                    bsr = self.bsr.convert(&a);
                }
            } else {
                csr = Some(sys.assemble());
            }
        }
        let apply =
            |sys: &mut dyn LinearSystem, v: &[f64], out: &mut [f64]| match (&sym, &bsr, &csr) {
                (Some(s), _, _) => s.mul(v, out),
                (None, Some(b), _) => b.mul(v, out),
                (None, None, Some(a)) => a.mul(v, out),
                (None, None, None) => sys.apply(v, out),
            };
        self.r.resize(n, 0.0);
        self.p.resize(n, 0.0);
        self.q.resize(n, 0.0);
        let (r, p, q) = (&mut self.r, &mut self.p, &mut self.q);
        if self.warm_start {
            apply(sys, x, q);
            for ((ri, bi), qi) in r.iter_mut().zip(b).zip(q.iter()) {
                *ri = bi - qi;
            }
        } else {
            x.iter_mut().for_each(|v| *v = 0.0);
            r.copy_from_slice(b);
        }
        let first_solve = self.solve_count == 0;
        let normb = sys.dot(b, b).sqrt();
        let mut stats = SolveStats::default();
        if normb != 0.0 {
            let mut rho_1 = 0.0;
            for it in 1..=self.max_iter {
                let rho = sys.dot(r, r);
                let err = rho.sqrt() / normb;
                stats.residual = err;
                if !err.is_finite() {
                    // a NaN or infinite residual never converges: stop, and say so in the
                    // solution (a non-finite state stops the run) rather than return a
                    // finite, wrong one
                    x.iter_mut().for_each(|v| *v = f64::NAN);
                    break;
                }
                if err <= self.tolerance && !(it == 1 && first_solve) {
                    break;
                }
                if it == 1 {
                    p.copy_from_slice(r);
                } else {
                    let beta = rho / rho_1;
                    for (pi, ri) in p.iter_mut().zip(r.iter()) {
                        *pi = ri + *pi * beta;
                    }
                }
                apply(sys, p, q);
                let den = sys.dot(p, q);
                if !den.is_finite() {
                    x.iter_mut().for_each(|v| *v = f64::NAN);
                    break;
                }
                if den == 0.0 {
                    break;
                }
                if den.abs() <= self.threshold && !(it == 1 && first_solve) {
                    break;
                }
                let alpha = rho / den;
                for ((xi, ri), (pi, qi)) in
                    x.iter_mut().zip(r.iter_mut()).zip(p.iter().zip(q.iter()))
                {
                    *xi += alpha * pi;
                    *ri -= alpha * qi;
                }
                rho_1 = rho;
                stats.iterations = it;
            }
        }
        self.solve_count += 1;
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::DenseSystem as Dense;
    use canape_core::component::LinearSolver;

    fn spd(n: usize, seed: u64) -> Vec<Vec<f64>> {
        // deterministic pseudo-random SPD: B Bᵀ + n I
        let mut rnd = crate::test_util::rng(seed);
        let b: Vec<Vec<f64>> = (0..n).map(|_| (0..n).map(|_| rnd()).collect()).collect();
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        (0..n).map(|k| b[i][k] * b[j][k]).sum::<f64>()
                            + if i == j { n as f64 } else { 0.0 }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn solves_random_spd_to_tolerance_both_variants() {
        for template in ["GraphScattered", "CompressedRowSparseMatrixMat3x3"] {
            let a = spd(30, 7);
            let mut sys = Dense::new(a.clone());
            let b: Vec<f64> = (0..30).map(|i| (i as f64).sin()).collect();
            let mut cg = CgLinearSolver::new(template).unwrap();
            cg.max_iter = 200;
            cg.tolerance = 1e-10;
            cg.threshold = 1e-30;
            let mut x = vec![0.0; 30];
            let st = cg.solve(&mut sys, &b, &mut x);
            let mut ax = vec![0.0; 30];
            sys.apply(&x, &mut ax);
            let res: f64 = ax
                .iter()
                .zip(&b)
                .map(|(p, q)| (p - q) * (p - q))
                .sum::<f64>()
                .sqrt();
            let nb: f64 = b.iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!(res / nb < 1e-9, "{template}: residual {}", res / nb);
            assert!(st.iterations > 1 && st.iterations < 200);
        }
    }

    #[test]
    fn unknown_template_is_an_error() {
        assert!(CgLinearSolver::new("Vec3d").is_err());
    }
}
