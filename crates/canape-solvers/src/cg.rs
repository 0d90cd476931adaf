//! CGLinearSolver: conjugate gradient, matrix-free through the graph (`GraphScattered`, SOFA's
//! default template) or on an assembled CSR matrix (`CompressedRowSparseMatrix*` templates).
//!
//! Control flow follows SOFA's CGLinearSolver.inl: x starts at 0 (unless warmStart), r = b; stop
//! when |r|/|b| ≤ tolerance, or |pᵀAp| ≤ threshold, or after `iterations` products; on the very
//! first solve the tests of iteration 1 only warn and do not stop.

use canape_core::component::{LinearSystem, Reaction, SolveStats};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Int, Real, Text, Words};
use canape_core::matrix::{Bsr3, BsrCache, Csr, SymBsr3, SymBsrCache};
use canape_core::registry::TemplateError;
use canape_core::scene::InitContext;

canape_core::data_schema! {
    /// CGLinearSolver's Data.
    pub struct CgData {
        iterations: Int = ("iterations", DataKind::Int, "25", "Maximum number of iterations of the Conjugate Gradient solution"),
        tolerance: Real = ("tolerance", DataKind::Real, "1e-5", "Desired accuracy of the Conjugate Gradient solution evaluating: |r|/|b| (ratio of current residual norm over initial residual norm)"),
        threshold: Real = ("threshold", DataKind::Real, "1e-5", "Minimum value of the denominator in the conjugate Gradient solution"),
        warm_start: Flag = ("warmStart", DataKind::Bool, "0", "Use previous solution as initial solution"),
        graph: Words = ("graph", DataKind::Words, "", "Graph of residuals at each iteration"),
        linear_system: Text = ("linearSystem", DataKind::Str, "", "The linear system to solve"),
        print_log: Flag = ("printLog", DataKind::Bool, "0", "Print log messages"),
        tags: Words = ("tags", DataKind::Words, "", "Tags of the component"),
        listening: Flag = ("listening", DataKind::Bool, "0", "Listen to events"),
    }
}

/// The stopping criteria CG reads at each solve, as init takes them from the Data.
struct Criteria {
    max_iter: usize,
    tolerance: f64,
    threshold: f64,
}

#[derive(Clone)]
pub struct CgLinearSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: CgData,
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
    pub fn new(template: &str) -> Result<Self, TemplateError> {
        let assembled = match template {
            "" | "GraphScattered" => false,
            t if t.starts_with("CompressedRowSparseMatrix") => true,
            t if t.starts_with("FullMatrix") || t.starts_with("SparseMatrix") => true,
            other => {
                return Err(TemplateError::MatrixNotAvailableUse {
                    template: other.to_string(),
                    class: "CGLinearSolver".to_string(),
                    advice: "use GraphScattered or CompressedRowSparseMatrix[Mat3x3]",
                })
            }
        };
        let (data, d) = CgData::declare(DataTable::new());
        Ok(CgLinearSolver {
            data,
            d,
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

    /// The stopping criteria the Data give, and what is wrong with them (negative values: init
    /// warns, and uses no iteration, or 1e-5, instead).
    fn criteria(&self) -> (Criteria, Vec<String>) {
        let (t, d) = (&self.data, &self.d);
        let mut warnings = Vec::new();
        let it = t.get(d.iterations);
        if it < 0 {
            warnings.push(format!(
                "iterations = {it} is negative; no iteration will be done"
            ));
        }
        let mut tolerance = t.get(d.tolerance);
        if tolerance < 0.0 {
            warnings.push("tolerance must be positive; reset to 1e-5".to_string());
            tolerance = 1e-5;
        }
        let mut threshold = t.get(d.threshold);
        if threshold < 0.0 {
            warnings.push("threshold must be positive; reset to 1e-5".to_string());
            threshold = 1e-5;
        }
        let criteria = Criteria {
            max_iter: it.max(0) as usize,
            tolerance,
            threshold,
        };
        (criteria, warnings)
    }

    fn set_criteria(&mut self, c: Criteria) {
        self.max_iter = c.max_iter;
        self.tolerance = c.tolerance;
        self.threshold = c.threshold;
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let (criteria, warnings) = self.criteria();
        for w in warnings {
            ctx.warn(w);
        }
        self.set_criteria(criteria);
        self.warm_start = self.data.get(self.d.warm_start);
        self.solve_count = 0;
    }
}

impl CgLinearSolver {
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        let in_place = [
            d.iterations.index(),
            d.tolerance.index(),
            d.threshold.index(),
        ];
        if !changed.only(&in_place) {
            return Reaction::Reinit;
        }
        let (criteria, warnings) = self.criteria();
        if !warnings.is_empty() {
            return Reaction::Reinit;
        }
        self.set_criteria(criteria);
        Reaction::Updated
    }
}

canape_core::impl_component!(CgLinearSolver, "CGLinearSolver", init, data_changed);

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
    use crate::test_util::{edit, linear_initialised};
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

    /// A CGLinearSolver of `template` with `attrs`, initialised in a scene of its own.
    fn initialised(template: &str, attrs: &[(&str, &str)]) -> CgLinearSolver {
        linear_initialised(CgLinearSolver::new(template).unwrap(), attrs)
    }

    /// The bits of a solve's solution and statistics.
    fn solve_bits(cg: &mut CgLinearSolver, sys: &mut Dense, b: &[f64]) -> (Vec<u64>, usize, u64) {
        let mut x = vec![0.0; b.len()];
        let st = cg.solve(sys, b, &mut x);
        let bits = x.iter().map(|v| v.to_bits()).collect();
        (bits, st.iterations, st.residual.to_bits())
    }

    /// Editing iterations, tolerance or threshold of a running CGLinearSolver is taken in
    /// place: its next solve equals bit for bit that of a solver initialised with the new
    /// values (after the same first solve); a negative value (init warns and replaces it) and
    /// other Data re-initialise it.
    #[test]
    fn cg_edits_update_in_place() {
        let before = [
            ("iterations", "100"),
            ("tolerance", "1e-9"),
            ("threshold", "1e-30"),
        ];
        let edits: [&[(&str, &str)]; 4] = [
            &[("iterations", "6")],
            &[("tolerance", "1e-3")],
            &[("threshold", "1e3")],
            &[
                ("iterations", "40"),
                ("tolerance", "1e-4"),
                ("threshold", "1e-12"),
            ],
        ];
        let a = spd(30, 11);
        let b1: Vec<f64> = (0..30).map(|i| (i as f64).sin()).collect();
        let b2: Vec<f64> = (0..30).map(|i| (0.3 * i as f64).cos()).collect();
        for template in ["GraphScattered", "CompressedRowSparseMatrixMat3x3"] {
            for after in edits {
                let mut sys = Dense::new(a.clone());
                let mut cg = initialised(template, &before);
                solve_bits(&mut cg, &mut sys, &b1);
                assert_eq!(edit(&mut cg, after), Reaction::Updated, "{after:?}");
                let got = solve_bits(&mut cg, &mut sys, &b2);
                let fresh_attrs = [before.as_slice(), after].concat();
                let mut fresh = initialised(template, &fresh_attrs);
                solve_bits(&mut fresh, &mut sys, &b1);
                assert_eq!(got, solve_bits(&mut fresh, &mut sys, &b2), "{after:?}");
                let mut old = initialised(template, &before);
                solve_bits(&mut old, &mut sys, &b1);
                assert_ne!(got, solve_bits(&mut old, &mut sys, &b2), "{after:?}");
            }
        }
        for (k, v) in [
            ("iterations", "-1"),
            ("tolerance", "-1e-3"),
            ("threshold", "-1"),
            ("warmStart", "1"),
        ] {
            let r = edit(&mut initialised("", &before), &[(k, v)]);
            assert_eq!(r, Reaction::Reinit, "{k} = {v}");
        }
    }
}
