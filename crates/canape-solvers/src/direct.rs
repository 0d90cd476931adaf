//! Direct sparse solvers on faer: SparseLDLSolver, EigenSimplicialLDLT, EigenSimplicialLLT
//! (Cholesky), EigenSparseLU (LU), EigenSparseQR (QR), and PrecomputedLinearSolver.
//!
//! As SOFA does (Sofa/Component/LinearSolver/Direct/…, MatrixLinearSolver.inl), the system
//! A = mM + bB + kK is assembled every step with fixed DOFs as identity rows/columns, exact zeros
//! are dropped, and A is factorized numerically each step; the symbolic factorization is kept
//! while the sparsity pattern is unchanged. PrecomputedLinearSolver factors the first step's
//! matrix once and reuses it for every later step.
//!
//! The names are SOFA's; the factorizations are faer's. Orderings only change round-off.

use canape_core::component::{LinearSolver, LinearSystem, SolveStats};
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::matrix::Csr;
use canape_core::scene::InitContext;
use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, Lu, Qr, SymbolicLlt, SymbolicLu, SymbolicQr};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{MatMut, Side};

/// Which factorization a direct solver uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factorization {
    Cholesky,
    Lu,
    Qr,
}

enum Symbolic {
    Llt(SymbolicLlt<u32>),
    Lu(SymbolicLu<u32>),
    Qr(SymbolicQr<u32>),
}

enum Numeric {
    Llt(Llt<u32, f64>),
    Lu(Box<Lu<u32, f64>>),
    Qr(Qr<u32, f64>),
}

/// A scalar CSR without its exact zeros. A is symmetric, so its CSR arrays are also its CSC arrays.
struct Filtered {
    n: usize,
    ptr: Vec<u32>,
    idx: Vec<u32>,
    val: Vec<f64>,
}

fn filter(a: &Csr) -> Filtered {
    let mut f = Filtered {
        n: a.n,
        ptr: Vec::with_capacity(a.n + 1),
        idx: Vec::with_capacity(a.vals.len()),
        val: Vec::with_capacity(a.vals.len()),
    };
    f.ptr.push(0);
    for r in 0..a.n {
        for k in a.row_ptr[r]..a.row_ptr[r + 1] {
            if a.vals[k] != 0.0 {
                f.idx.push(a.cols[k]);
                f.val.push(a.vals[k]);
            }
        }
        f.ptr.push(f.idx.len() as u32);
    }
    f
}

/// SOFA's direct solvers (class chosen at construction).
pub struct DirectSolver {
    class: &'static str,
    data: DataTable,
    kind: Factorization,
    /// Factor the first matrix only (PrecomputedLinearSolver).
    precomputed: bool,
    pattern: Option<(Vec<u32>, Vec<u32>)>,
    symbolic: Option<Symbolic>,
    numeric: Option<Numeric>,
    failed: Option<String>,
    warned_fallback: bool,
}

impl DirectSolver {
    pub fn new(class: &'static str, template: &str) -> Result<Self, String> {
        let t = template.trim();
        if !(t.is_empty()
            || t.starts_with("CompressedRowSparseMatrix")
            || t == "SReal"
            || t == "Mat3x3"
            || t == "double")
        {
            return Err(format!("template '{t}' is not available for {class} (use CompressedRowSparseMatrixd or CompressedRowSparseMatrixMat3x3d)"));
        }
        let (kind, precomputed) = match class {
            "EigenSparseLU" => (Factorization::Lu, false),
            "EigenSparseQR" => (Factorization::Qr, false),
            "PrecomputedLinearSolver" => (Factorization::Cholesky, true),
            _ => (Factorization::Cholesky, false),
        };
        let mut data = DataTable::new()
            .with("printLog", DataKind::Bool, "0", "if true, emits extra messages at runtime.")
            .with("tags", DataKind::Words, "", "list of the subsets the object belongs to")
            .with("listening", DataKind::Bool, "0", "if true, handle the events, otherwise ignore the events")
            .with("parallelInverseProduct", DataKind::Bool, "0", "Parallelize the computation of the product J*M^{-1}*J^T where M is the matrix of the linear system and J is any matrix with compatible dimensions")
            .with("linearSystem", DataKind::Str, "", "The linear system to solve")
            .with("orderingMethod", DataKind::Str, "", "Ordering method used by this component");
        data = match class {
            "SparseLDLSolver" => data
                .with(
                    "precomputeSymbolicDecomposition",
                    DataKind::Bool,
                    "1",
                    "If true the solver will reuse the precomputed symbolic decomposition",
                )
                .with(
                    "applyPermutation",
                    DataKind::Bool,
                    "1",
                    "Deprecated: the ordering is a component now",
                )
                .with(
                    "L_nnz",
                    DataKind::Int,
                    "0",
                    "Number of non-zero values in the lower triangular matrix of the factorization",
                ),
            "PrecomputedLinearSolver" => data
                .with(
                    "jmjt_twostep",
                    DataKind::Bool,
                    "1",
                    "Use two step algorithm to compute JMinvJt",
                )
                .with(
                    "use_file",
                    DataKind::Bool,
                    "1",
                    "Dump system matrix in a file",
                ),
            _ => data,
        };
        Ok(DirectSolver {
            class,
            data,
            kind,
            precomputed,
            pattern: None,
            symbolic: None,
            numeric: None,
            failed: None,
            warned_fallback: false,
        })
    }

    fn factor(&mut self, a: &Csr) -> Result<(), String> {
        let f = filter(a);
        let same = self
            .pattern
            .as_ref()
            .is_some_and(|(p, i)| *p == f.ptr && *i == f.idx);
        let sym = SymbolicSparseColMatRef::new_checked(f.n, f.n, &f.ptr, None, &f.idx);
        if !same || self.symbolic.is_none() {
            self.symbolic = Some(match self.kind {
                Factorization::Cholesky => Symbolic::Llt(
                    SymbolicLlt::try_new(sym, Side::Lower)
                        .map_err(|e| format!("symbolic factorization failed: {e:?}"))?,
                ),
                Factorization::Lu => Symbolic::Lu(
                    SymbolicLu::try_new(sym)
                        .map_err(|e| format!("symbolic factorization failed: {e:?}"))?,
                ),
                Factorization::Qr => Symbolic::Qr(
                    SymbolicQr::try_new(sym)
                        .map_err(|e| format!("symbolic factorization failed: {e:?}"))?,
                ),
            });
            self.pattern = Some((f.ptr.clone(), f.idx.clone()));
        }
        let mat = SparseColMatRef::new(sym, &f.val);
        let numeric = match self.symbolic.as_ref().unwrap() {
            Symbolic::Llt(s) => match Llt::try_new_with_symbolic(s.clone(), mat, Side::Lower) {
                Ok(l) => Numeric::Llt(l),
                Err(_) => {
                    // not positive definite: fall back to LU on the same matrix
                    self.warned_fallback = true;
                    let s = SymbolicLu::try_new(sym)
                        .map_err(|e| format!("symbolic LU failed: {e:?}"))?;
                    Numeric::Lu(Box::new(
                        Lu::try_new_with_symbolic(s, mat)
                            .map_err(|e| format!("the matrix is singular: {e:?}"))?,
                    ))
                }
            },
            Symbolic::Lu(s) => Numeric::Lu(Box::new(
                Lu::try_new_with_symbolic(s.clone(), mat)
                    .map_err(|e| format!("the matrix is singular: {e:?}"))?,
            )),
            Symbolic::Qr(s) => Numeric::Qr(
                Qr::try_new_with_symbolic(s.clone(), mat)
                    .map_err(|e| format!("QR factorization failed: {e:?}"))?,
            ),
        };
        self.numeric = Some(numeric);
        Ok(())
    }

    /// Whether a Cholesky factorization failed and LU was used instead (matrix not SPD).
    pub fn used_lu_fallback(&self) -> bool {
        self.warned_fallback
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if self.class == "PrecomputedLinearSolver" && self.data.bool("use_file") {
            ctx.note("use_file: Canapé does not cache the precomputed matrix in a file; it is factored at the first step");
        }
        self.pattern = None;
        self.symbolic = None;
        self.numeric = None;
    }
}

impl_component!(DirectSolver, |s| s.class, init);

impl LinearSolver for DirectSolver {
    fn solve(&mut self, sys: &mut dyn LinearSystem, b: &[f64], x: &mut [f64]) -> SolveStats {
        if !(self.precomputed && self.numeric.is_some()) {
            let a = sys.assemble();
            if let Err(e) = self.factor(&a) {
                self.failed = Some(e);
                self.numeric = None;
            }
        }
        x.copy_from_slice(b);
        let n = x.len();
        let rhs = MatMut::from_column_major_slice_mut(x, n, 1);
        match &self.numeric {
            Some(Numeric::Llt(f)) => f.solve_in_place(rhs),
            Some(Numeric::Lu(f)) => f.solve_in_place(rhs),
            Some(Numeric::Qr(f)) => f.solve_in_place(rhs),
            None => x.iter_mut().for_each(|v| *v = f64::NAN),
        }
        SolveStats {
            iterations: 1,
            residual: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::DenseSystem as Sys;

    fn spd(n: usize) -> Vec<Vec<f64>> {
        // a 1D Laplacian plus a diagonal shift: sparse, SPD
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        if i == j {
                            2.5
                        } else if i.abs_diff(j) == 1 {
                            -1.0
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn every_direct_solver_solves_a_random_spd_system() {
        for class in [
            "SparseLDLSolver",
            "EigenSimplicialLDLT",
            "EigenSimplicialLLT",
            "EigenSparseLU",
            "EigenSparseQR",
            "PrecomputedLinearSolver",
        ] {
            let mut s = DirectSolver::new(class, "CompressedRowSparseMatrixMat3x3d").unwrap();
            let mut sys = Sys::new(spd(40));
            let b: Vec<f64> = (0..40).map(|i| ((i * 7) as f64).sin()).collect();
            let mut x = vec![0.0; 40];
            s.solve(&mut sys, &b, &mut x);
            let mut ax = vec![0.0; 40];
            sys.apply(&x, &mut ax);
            let err = ax
                .iter()
                .zip(&b)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-12, "{class}: residual {err}");
            // second solve: Precomputed reuses its factor, the others re-assemble
            s.solve(&mut sys, &b, &mut x);
            assert_eq!(
                sys.assembled,
                if class == "PrecomputedLinearSolver" {
                    1
                } else {
                    2
                },
                "{class}"
            );
        }
    }

    #[test]
    fn bad_template_is_refused() {
        assert!(DirectSolver::new("SparseLDLSolver", "Vec3d").is_err());
    }
}
