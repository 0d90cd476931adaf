//! SVDLinearSolver (SOFA's Sofa/Component/LinearSolver/Direct/.../SVDLinearSolver.inl): the
//! assembled system as a dense matrix, its singular value decomposition A = U Σ Vᵀ at every
//! solve, and x = V Σ⁺ Uᵀ b where singular values at or below `minSingularValue` count as zero
//! (a least-squares solution of an ill-conditioned or singular system). `conditionNumber` is
//! set to σ_max / σ_min at each decomposition. Dense: n² numbers and O(n³) work per step, so
//! systems above [`MAX_UNKNOWNS`] are refused (the solve gives NaN and says why).

use canape_core::component::{LinearSolver, LinearSystem, Reaction, SolveStats};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Real, Text, Value, Words};
use canape_core::registry::TemplateError;
use canape_core::scene::InitContext;
use faer::Mat;

/// The largest system decomposed (a dense 6000 × 6000 matrix is 288 MB).
pub const MAX_UNKNOWNS: usize = 6000;

canape_core::data_schema! {
    /// SVDLinearSolver's Data.
    pub struct SvdData {
        print_log: Flag = ("printLog", DataKind::Bool, "0", "if true, emits extra messages at runtime."),
        tags: Words = ("tags", DataKind::Words, "", "list of the subsets the object belongs to"),
        listening: Flag = ("listening", DataKind::Bool, "0", "if true, handle the events, otherwise ignore the events"),
        linear_system: Text = ("linearSystem", DataKind::Str, "", "The linear system to solve"),
        verbose: Flag = ("verbose", DataKind::Bool, "0", "Dump system state at each iteration"),
        min_singular_value: Real = ("minSingularValue", DataKind::Real, "1e-06", "Thershold under which a singular value is set to 0, for the stabilization of ill-conditioned system."),
        condition_number: Real = ("conditionNumber", DataKind::Real, "0", "Condition number of the matrix: ratio between the largest and smallest singular values. Computed in method solve."),
    }
}

#[derive(Clone)]
pub struct SvdLinearSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: SvdData,
    min_singular_value: f64,
    /// The last decomposition: U, the singular values (decreasing), V (for `solve_again`).
    last: Option<(Mat<f64>, Vec<f64>, Mat<f64>)>,
    /// Why the last solve could not be done.
    failed: Option<SvdError>,
}

/// Why SVDLinearSolver could not solve.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SvdError {
    #[error("SVDLinearSolver: {n} unknowns is more than the {max} a dense decomposition is allowed here; use a sparse direct solver")]
    TooLarge { n: usize, max: usize },
    #[error("SVDLinearSolver: the decomposition did not converge")]
    NoConvergence,
}

impl SvdLinearSolver {
    pub fn new(template: &str) -> Result<Self, TemplateError> {
        let t = template.trim();
        if !(t.is_empty()
            || t.starts_with("FullMatrix")
            || t.starts_with("CompressedRowSparseMatrix"))
        {
            return Err(TemplateError::MatrixNotAvailableUse {
                template: t.to_string(),
                class: "SVDLinearSolver".to_string(),
                advice: "use FullMatrix or CompressedRowSparseMatrixd",
            });
        }
        let (data, d) = SvdData::declare(DataTable::new());
        Ok(SvdLinearSolver {
            data,
            d,
            min_singular_value: 1e-6,
            last: None,
            failed: None,
        })
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.min_singular_value = self.data.get(self.d.min_singular_value);
        if !self.min_singular_value.is_finite() {
            ctx.warn("minSingularValue is not finite: 1e-6 is used");
            self.min_singular_value = 1e-6;
        }
        self.last = None;
        self.failed = None;
    }

    /// x = V Σ⁺ Uᵀ b with the kept decomposition.
    fn solve_decomposed(&self, b: &[f64], x: &mut [f64]) {
        let Some((u, s, v)) = &self.last else {
            x.fill(f64::NAN);
            return;
        };
        let n = b.len();
        let rhs = Mat::<f64>::from_fn(n, 1, |i, _| b[i]);
        let ut_b = u.transpose() * &rhs;
        let scaled = Mat::<f64>::from_fn(s.len(), 1, |i, _| {
            if s[i] > self.min_singular_value {
                ut_b[(i, 0)] / s[i]
            } else {
                0.0
            }
        });
        let sol = v * &scaled;
        for (i, xi) in x.iter_mut().enumerate() {
            *xi = sol[(i, 0)];
        }
    }
}

impl SvdLinearSolver {
    /// `minSingularValue` is read at each solve: a finite edit of it is taken in place (the
    /// kept decomposition does not depend on it); other Data re-run init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let v = self.data.get(self.d.min_singular_value);
        if !changed.only(&[self.d.min_singular_value.index()]) || !v.is_finite() {
            return Reaction::Reinit;
        }
        self.min_singular_value = v;
        Reaction::Updated
    }
}

canape_core::impl_component!(SvdLinearSolver, "SVDLinearSolver", init, data_changed);

impl LinearSolver for SvdLinearSolver {
    fn solve(&mut self, sys: &mut dyn LinearSystem, b: &[f64], x: &mut [f64]) -> SolveStats {
        let n = sys.size();
        self.last = None;
        if n > MAX_UNKNOWNS {
            self.failed = Some(SvdError::TooLarge {
                n,
                max: MAX_UNKNOWNS,
            });
            x.fill(f64::NAN);
            return SolveStats::default();
        }
        let a = sys.assemble();
        let mut m = Mat::<f64>::zeros(n, n);
        for r in 0..n {
            for k in a.row_ptr[r]..a.row_ptr[r + 1] {
                m[(r, a.cols[k] as usize)] += a.vals[k];
            }
        }
        let Ok(svd) = m.svd() else {
            self.failed = Some(SvdError::NoConvergence);
            x.fill(f64::NAN);
            return SolveStats::default();
        };
        // decreasing singular values, as Eigen's JacobiSVD gives them
        let s: Vec<f64> = (0..n).map(|i| svd.S()[i]).collect();
        let condition = match (s.first(), s.last()) {
            (Some(&hi), Some(&lo)) => hi / lo,
            _ => 0.0,
        };
        let _ = self
            .data
            .put(self.d.condition_number, Value::Real(condition));
        self.failed = None;
        self.last = Some((svd.U().to_owned(), s, svd.V().to_owned()));
        self.solve_decomposed(b, x);
        SolveStats {
            iterations: 1,
            residual: 0.0,
        }
    }
    fn solve_again(&mut self, sys: &mut dyn LinearSystem, b: &[f64], x: &mut [f64]) -> SolveStats {
        if self.last.is_none() {
            return self.solve(sys, b, x);
        }
        self.solve_decomposed(b, x);
        SolveStats {
            iterations: 1,
            residual: 0.0,
        }
    }
    fn failure(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.failed.as_ref().map(|e| e as _)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::matrix::Csr;

    /// A dense system given by its rows.
    struct Dense(Vec<Vec<f64>>);

    impl LinearSystem for Dense {
        fn size(&self) -> usize {
            self.0.len()
        }
        fn apply(&mut self, x: &[f64], y: &mut [f64]) {
            for (yi, row) in y.iter_mut().zip(&self.0) {
                *yi = row.iter().zip(x).map(|(a, b)| a * b).sum();
            }
        }
        fn assemble(&mut self) -> Csr {
            let n = self.0.len();
            let mut t = canape_core::matrix::Triplets::new(n);
            for (r, row) in self.0.iter().enumerate() {
                for (c, &v) in row.iter().enumerate() {
                    if v != 0.0 {
                        canape_core::matrix::MatrixSink::add(&mut t, r, c, v);
                    }
                }
            }
            t.to_csr()
        }
    }

    #[test]
    fn solves_regular_systems_and_gives_least_squares_on_singular_ones() {
        let mut s = SvdLinearSolver::new("FullMatrix").unwrap();
        let mut sys = Dense(vec![
            vec![4.0, 1.0, 0.0],
            vec![1.0, 3.0, -1.0],
            vec![0.0, -1.0, 2.0],
        ]);
        let b = [1.0, 2.0, 3.0];
        let mut x = [0.0; 3];
        s.solve(&mut sys, &b, &mut x);
        let mut r = [0.0; 3];
        sys.apply(&x, &mut r);
        for k in 0..3 {
            assert!((r[k] - b[k]).abs() < 1e-12, "{r:?}");
        }
        // condition number σmax/σmin of the matrix
        let ev = nalgebra::Matrix3::new(4.0, 1.0, 0.0, 1.0, 3.0, -1.0, 0.0, -1.0, 2.0)
            .symmetric_eigenvalues();
        let want: f64 = ev.max() / ev.min();
        assert!((s.data.get(s.d.condition_number) - want).abs() < 1e-9 * want);
        // the same matrix again, another right-hand side
        let mut y = [0.0; 3];
        s.solve_again(&mut sys, &[0.0, 1.0, 0.0], &mut y);
        sys.apply(&y, &mut r);
        assert!((r[1] - 1.0).abs() < 1e-12 && r[0].abs() < 1e-12 && r[2].abs() < 1e-12);
        // singular: two equal rows; the minimum-norm least-squares solution of
        // [1 1; 1 1] x = [2, 0] is x = (0.5, 0.5)
        let mut sing = Dense(vec![vec![1.0, 1.0], vec![1.0, 1.0]]);
        let mut z = [9.0; 2];
        s.solve(&mut sing, &[2.0, 0.0], &mut z);
        assert!(
            (z[0] - 0.5).abs() < 1e-12 && (z[1] - 0.5).abs() < 1e-12,
            "{z:?}"
        );
        assert!(s.data.get(s.d.condition_number) > 1e12);
    }

    #[test]
    fn unknown_templates_are_refused() {
        assert!(SvdLinearSolver::new("BTDMatrix6d").is_err());
        assert!(SvdLinearSolver::new("").is_ok());
        assert!(SvdLinearSolver::new("CompressedRowSparseMatrixMat3x3d").is_ok());
    }

    /// Editing `minSingularValue` is taken in place: the next solves (a new one, and one again
    /// with the same system) equal bit for bit those of a solver initialised with the new
    /// value; a value that is not finite (init replaces it) re-initialises it.
    #[test]
    fn edits_update_in_place_svd_min_singular_value() {
        use crate::test_util::{edit, linear_initialised};
        let initialised =
            |attrs: &[(&str, &str)]| linear_initialised(SvdLinearSolver::new("").unwrap(), attrs);
        // singular values 4, 2 and 1e-3 (nearly singular)
        let a = vec![
            vec![4.0, 0.0, 0.0],
            vec![0.0, 1e-3, 0.0],
            vec![0.0, 0.0, 2.0],
        ];
        let (b1, b2) = ([1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]);
        let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let before = [("minSingularValue", "1e-6")];
        for after in ["0.01", "0"] {
            let after = [("minSingularValue", after)];
            let mut s = initialised(&before);
            let mut x = [0.0; 3];
            s.solve(&mut Dense(a.clone()), &b1, &mut x);
            assert_eq!(edit(&mut s, &after), Reaction::Updated);
            let (mut fresh, mut old) = (initialised(&after), initialised(&before));
            for again in [true, false] {
                let mut got = [[0.0; 3]; 3];
                for (k, solver) in [&mut s, &mut fresh, &mut old].into_iter().enumerate() {
                    let mut sys = Dense(a.clone());
                    if again {
                        solver.solve_again(&mut sys, &b2, &mut got[k]);
                    } else {
                        solver.solve(&mut sys, &b2, &mut got[k]);
                    }
                }
                assert_eq!(bits(&got[0]), bits(&got[1]), "{after:?}");
                if after[0].1 != "0" {
                    assert_ne!(bits(&got[0]), bits(&got[2]), "{after:?}");
                }
            }
        }
        let r = edit(&mut initialised(&before), &[("minSingularValue", "nan")]);
        assert_eq!(r, Reaction::Reinit);
    }
}
