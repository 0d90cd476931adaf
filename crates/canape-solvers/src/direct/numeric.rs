//! The numeric side of the direct solvers: assembling and factoring the matrix at each step
//! (an unchanged matrix keeps its factor, AsyncSparseLDLSolver's factor comes one step late, a
//! Cholesky that fails falls back to LU of the whole matrix), and the solves with the factor.

use super::symbolic::{cholesky_plan, col_pattern, columns_of, CholeskyPlan};
use super::{
    CholeskyOrdering, DirectSolver, FactorError, Factorization, Fallback, Numeric, Symbolic,
};
use crate::band::BandPattern;
use crate::gband::GeneralBand;
use canape_core::component::LinearSystem;
use canape_core::matrix::Csr;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::solvers::Solve;
use faer::sparse::linalg::cholesky::LltRef;
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuRef, LuSymbolicParams};
use faer::sparse::linalg::solvers::{Lu, Qr, SymbolicLu, SymbolicQr};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::SparseColMatRef;
use faer::{Conj, Par};
use faer::{MatMut, Side};

/// LU with partial pivoting of a symmetric `a` (its values equal to its transpose's) computed
/// as the symmetric factorization it is when no row gets exchanged: band Cholesky into
/// `values`, then the check that every LU multiplier is at most 1 in magnitude (each column's
/// pivot is then its diagonal). False when the matrix is not positive definite or some pivot
/// would be off the diagonal: then the pivoted band LU runs. Half the operations of the LU
/// (which computes U = D Lᵀ a second time); the factors are the LU's up to rounding, and so
/// are the pivots (a near-tie may round either way, both choices being stable).
fn symmetric_lu(band: &BandPattern, a: &Csr, values: &mut Vec<f64>) -> bool {
    band.factorize(a, values).is_ok() && band.no_row_exchange(values)
}

/// Whether two assemblies are the same matrix: the same pattern (the assembly cache hands out
/// one shared structure per pattern) and the same values, bit for bit.
fn same_matrix(a: &Csr, b: &Csr) -> bool {
    a.n == b.n
        && (std::sync::Arc::ptr_eq(&a.cols, &b.cols) || a.cols == b.cols)
        && (std::sync::Arc::ptr_eq(&a.row_ptr, &b.row_ptr) || a.row_ptr == b.row_ptr)
        && a.vals.len() == b.vals.len()
        && a.vals
            .iter()
            .zip(&b.vals)
            .all(|(x, y)| x.to_bits() == y.to_bits())
}

impl DirectSolver {
    /// Assemble the system's matrix and factor it (on failure, later solves give NaN).
    ///
    /// AsyncSparseLDLSolver (SOFA's AsyncSparseLDLSolver.inl) factors in a background thread
    /// and solves with the newest factor that is finished: the first solve waits for its own,
    /// later ones use the previous step's matrix while the current one is factored. Canapé
    /// makes that timing deterministic, one step late: the matrix assembled now is factored at
    /// the next call, and the solves in between use the factor of the step before.
    pub fn factorize(&mut self, sys: &mut dyn LinearSystem) {
        // a Cholesky factorization reads one triangle (faer's lower, seeing this row-major
        // matrix as column-major = the blocks on and above the diagonal): assemble only those
        let a = if self.kind == Factorization::Cholesky {
            sys.assemble_upper()
        } else {
            sys.assemble()
        };
        if self.lagged {
            if let Some(previous) = self.pending.take() {
                self.factor_assembled(previous, sys);
            }
            if self.numeric.is_some() {
                self.pending = Some(a);
                return;
            }
        }
        self.factor_assembled(a, sys);
    }

    /// Factor an assembled matrix (`sys` gives the whole matrix for the LU fallback).
    fn factor_assembled(&mut self, a: Csr, sys: &mut dyn LinearSystem) {
        if self.numeric.is_some() && self.factored.as_ref().is_some_and(|f| same_matrix(f, &a)) {
            return;
        }
        self.factored = None;
        self.factorizations += 1;
        let result = match self.factor(&a) {
            Err(Fallback::NeedsFullMatrix) => self.factor_lu_fallback(&sys.assemble()),
            Err(Fallback::Failed(e)) => Err(e),
            Ok(()) => {
                self.factored = Some(a);
                Ok(())
            }
        };
        match result {
            Err(e) => {
                self.failed = Some(e);
                self.numeric = None;
            }
            Ok(()) => self.failed = None,
        }
    }

    /// Factor `a` (for Cholesky: only its blocks on and above the diagonal, see `solve`; a
    /// matrix that is not positive definite then asks for the whole one, for the LU fallback).
    fn factor(&mut self, a: &Csr) -> Result<(), Fallback> {
        match self.numeric.take() {
            Some(Numeric::Llt(v) | Numeric::Band(v) | Numeric::SymmetricLu(v)) => self.l_values = v, // reuse the allocations
            Some(Numeric::LuSupernodal(v)) => self.lu_values = Some(v),
            Some(Numeric::GeneralBand(f)) => self.band_factor = Some(f),
            _ => {}
        }
        let same = self
            .pattern
            .as_ref()
            .is_some_and(|(c, _)| std::sync::Arc::ptr_eq(c, &a.cols));
        if !same || self.symbolic.is_none() {
            // Cholesky reads the lower triangle from the rows of the upper one (the same
            // values); LU and QR need A's own columns
            let pattern = if self.kind == Factorization::Cholesky {
                col_pattern(a)
            } else {
                let (pattern, src) = columns_of(a);
                self.column_values.0 = src;
                self.symmetric_pattern = pattern
                    .col_ptr()
                    .iter()
                    .map(|&p| p as usize)
                    .eq(a.row_ptr.iter().copied())
                    && pattern.row_idx() == &a.cols[..];
                pattern
            };
            self.pattern = Some((a.cols.clone(), pattern));
        }
        let sym = self.pattern.as_ref().expect("pattern").1.as_ref();
        if self.kind != Factorization::Cholesky {
            let (src, vals) = &mut self.column_values;
            vals.clear();
            vals.extend(src.iter().map(|&k| a.vals[k as usize]));
        }
        if !same || self.symbolic.is_none() {
            self.permuted = None;
            let band = (self.kind != Factorization::Cholesky
                && self.ordering == CholeskyOrdering::Natural)
                .then(|| GeneralBand::new(a))
                .flatten()
                .filter(|band| band.filled_by(a));
            let symmetric_lu = band
                .is_some()
                .then_some(())
                .filter(|()| self.kind == Factorization::Lu && self.symmetric_pattern)
                .and_then(|()| BandPattern::new(a))
                .map(Box::new);
            self.symbolic_factorizations += 1;
            self.symbolic = Some(match self.kind {
                _ if band.is_some() => {
                    Symbolic::GeneralBand(Box::new(band.expect("band")), symmetric_lu)
                }
                Factorization::Cholesky => match cholesky_plan(a, self.ordering)? {
                    CholeskyPlan::Band(band) => Symbolic::Band(Box::new(band)),
                    CholeskyPlan::Sparse(s, permuted) => {
                        self.permuted = permuted;
                        Symbolic::Llt(s)
                    }
                },
                Factorization::Lu => Symbolic::Lu(Box::new(
                    factorize_symbolic_lu(
                        sym,
                        LuSymbolicParams {
                            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
                            ..Default::default()
                        },
                    )
                    .map_err(|e| Fallback::Failed(FactorError::Symbolic(e)))?,
                )),
                Factorization::Qr => Symbolic::Qr(
                    SymbolicQr::try_new(sym)
                        .map_err(|e| Fallback::Failed(FactorError::Symbolic(e)))?,
                ),
            });
        }
        let mat = if self.kind == Factorization::Cholesky {
            SparseColMatRef::new(sym, &a.vals)
        } else {
            SparseColMatRef::new(sym, &self.column_values.1)
        };
        let numeric = match self.symbolic.as_ref().unwrap() {
            Symbolic::Band(band) => {
                let mut values = std::mem::take(&mut self.l_values);
                if band.factorize(a, &mut values).is_err() {
                    self.l_values = values;
                    return Err(Fallback::NeedsFullMatrix);
                }
                Numeric::Band(values)
            }
            Symbolic::Llt(s) => {
                // in AMD order: factor the reordered matrix (its own pattern, identity order)
                if let Some(p) = self.permuted.as_mut() {
                    p.gather(a);
                }
                let mat = match &self.permuted {
                    Some(p) => SparseColMatRef::new(p.pattern.as_ref(), &p.b.vals),
                    None => mat,
                };
                let mut values = std::mem::take(&mut self.l_values);
                values.resize(s.len_val(), 0.0);
                let need = s
                    .factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default())
                    .or(s.solve_in_place_scratch::<f64>(1, Par::Seq));
                if self.scratch.as_ref().is_none_or(|(req, _)| *req != need) {
                    self.scratch = Some((need, MemBuffer::new(need)));
                }
                let buf = &mut self.scratch.as_mut().expect("scratch").1;
                let ok = s
                    .factorize_numeric_llt(
                        &mut values,
                        mat,
                        Side::Lower,
                        Default::default(),
                        Par::Seq,
                        MemStack::new(buf),
                        Default::default(),
                    )
                    .is_ok();
                if ok {
                    Numeric::Llt(values)
                } else {
                    self.l_values = values;
                    return Err(Fallback::NeedsFullMatrix);
                }
            }
            Symbolic::Lu(s) => {
                let mut num = self.lu_values.take().unwrap_or_default();
                let need = s
                    .factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default())
                    .or(s.solve_in_place_scratch::<f64>(1, Par::Seq));
                if self.scratch.as_ref().is_none_or(|(req, _)| *req != need) {
                    self.scratch = Some((need, MemBuffer::new(need)));
                }
                let buf = &mut self.scratch.as_mut().expect("scratch").1;
                s.factorize_numeric_lu(
                    &mut num,
                    mat,
                    Par::Seq,
                    MemStack::new(buf),
                    Default::default(),
                )
                .map_err(|e| Fallback::Failed(FactorError::Singular(e)))?;
                Numeric::LuSupernodal(num)
            }
            Symbolic::GeneralBand(_, Some(sym_band))
                if self.kind == Factorization::Lu
                    && self.column_values.1 == a.vals[..]
                    && symmetric_lu(sym_band, a, &mut self.l_values) =>
            {
                Numeric::SymmetricLu(std::mem::take(&mut self.l_values))
            }
            Symbolic::GeneralBand(band, _) => {
                let mut f = self.band_factor.take().unwrap_or_default();
                let done = if self.kind == Factorization::Qr {
                    band.factorize_qr(a, &mut f)
                } else {
                    band.factorize_lu(a, &mut f)
                };
                if let Err(e) = done {
                    self.band_factor = Some(f);
                    return Err(Fallback::Failed(FactorError::ZeroPivot {
                        column: e.column,
                    }));
                }
                Numeric::GeneralBand(f)
            }
            Symbolic::Qr(s) => Numeric::Qr(
                Qr::try_new_with_symbolic(s.clone(), mat)
                    .map_err(|e| Fallback::Failed(FactorError::Qr(e)))?,
            ),
        };
        self.numeric = Some(numeric);
        Ok(())
    }

    /// Whether the last LU factorization was computed as a symmetric one (no row exchange).
    pub fn used_symmetric_lu(&self) -> bool {
        matches!(self.numeric, Some(Numeric::SymmetricLu(_)))
    }

    /// The matrix is not positive definite: factor the whole of it by LU instead (its own
    /// symbolic analysis; the Cholesky pattern and analysis are kept for the next steps).
    fn factor_lu_fallback(&mut self, a: &Csr) -> Result<(), FactorError> {
        self.warned_fallback = true;
        let (sym, src) = columns_of(a);
        let vals: Vec<f64> = src.iter().map(|&k| a.vals[k as usize]).collect();
        let s = SymbolicLu::try_new(sym.as_ref()).map_err(FactorError::SymbolicLu)?;
        let lu = Lu::try_new_with_symbolic(s, SparseColMatRef::new(sym.as_ref(), &vals))
            .map_err(FactorError::Singular)?;
        self.numeric = Some(Numeric::Lu(Box::new(lu)));
        Ok(())
    }

    /// Whether a Cholesky factorization failed and LU was used instead (matrix not SPD).
    pub fn used_lu_fallback(&self) -> bool {
        self.warned_fallback
    }

    /// X = A⁻¹ B for `m` right-hand sides stored row by row (row i: the m values of unknown i)
    /// with the last factorization: at once on a band factor, one by one otherwise.
    pub fn solve_factored_many(&mut self, b: &[f64], x: &mut [f64], m: usize) {
        if let (Some(Numeric::Band(values)), Some(Symbolic::Band(band))) =
            (&self.numeric, &self.symbolic)
        {
            x.copy_from_slice(b);
            band.solve_many_in_place(values, x, m, &mut self.band_work);
            return;
        }
        let n = b.len() / m.max(1);
        let (mut col, mut sol) = (vec![0.0; n], vec![0.0; n]);
        for c in 0..m {
            for i in 0..n {
                col[i] = b[i * m + c];
            }
            self.solve_factored(&col, &mut sol);
            for i in 0..n {
                x[i * m + c] = sol[i];
            }
        }
    }

    /// W = Bᵀ A⁻¹ B (m × m, row-major) for `m` right-hand sides B stored row by row, when the last factorization is a band Cholesky: forward
    /// substitutions only ([`crate::band::BandPattern::compliance_in_place`]). False (and `w`
    /// untouched) for the other factors.
    pub fn compliance_factored(&mut self, b: &[f64], m: usize, w: &mut [f64]) -> bool {
        let (Some(Numeric::Band(values)), Some(Symbolic::Band(band))) =
            (&self.numeric, &self.symbolic)
        else {
            return false;
        };
        band.compliance_in_place(values, b, m, &mut self.band_work, w);
        true
    }

    /// x = A⁻¹ b with the last factorization (NaN when there is none).
    pub fn solve_factored(&mut self, b: &[f64], x: &mut [f64]) {
        x.copy_from_slice(b);
        let n = x.len();
        let rhs = MatMut::from_column_major_slice_mut(x, n, 1);
        match &self.numeric {
            Some(Numeric::Llt(values)) => {
                let (Some(Symbolic::Llt(s)), Some((_, buf))) = (&self.symbolic, &mut self.scratch)
                else {
                    unreachable!("a Cholesky factor has its symbolic part and work space")
                };
                let llt = LltRef::new(s, values);
                match self.permuted.as_mut() {
                    Some(p) => {
                        for (&k, &v) in p.new_of.iter().zip(x.iter()) {
                            p.work[k as usize] = v;
                        }
                        let rhs = MatMut::from_column_major_slice_mut(&mut p.work, n, 1);
                        llt.solve_in_place_with_conj(Conj::No, rhs, Par::Seq, MemStack::new(buf));
                        for (&k, v) in p.new_of.iter().zip(x.iter_mut()) {
                            *v = p.work[k as usize];
                        }
                    }
                    None => {
                        llt.solve_in_place_with_conj(Conj::No, rhs, Par::Seq, MemStack::new(buf))
                    }
                }
            }
            Some(Numeric::Band(values)) => {
                let Some(Symbolic::Band(band)) = &self.symbolic else {
                    unreachable!("a band factor has its band layout")
                };
                band.solve_in_place(values, x, &mut self.band_work);
            }
            Some(Numeric::Lu(f)) => f.solve_in_place(rhs),
            Some(Numeric::LuSupernodal(num)) => {
                let (Some(Symbolic::Lu(s)), Some((_, buf))) = (&self.symbolic, &mut self.scratch)
                else {
                    unreachable!("an LU factor has its symbolic part and work space")
                };
                LuRef::new_unchecked(s, num).solve_in_place_with_conj(
                    Conj::No,
                    rhs,
                    Par::Seq,
                    MemStack::new(buf),
                );
            }
            Some(Numeric::Qr(f)) => f.solve_in_place(rhs),
            Some(Numeric::SymmetricLu(values)) => {
                let Some(Symbolic::GeneralBand(_, Some(band))) = &self.symbolic else {
                    unreachable!("a symmetric LU has its band layout")
                };
                band.solve_in_place(values, x, &mut self.band_work);
            }
            Some(Numeric::GeneralBand(f)) => {
                let Some(Symbolic::GeneralBand(band, _)) = &self.symbolic else {
                    unreachable!("a band factor has its band layout")
                };
                if self.kind == Factorization::Qr {
                    band.solve_qr(f, x);
                } else {
                    band.solve_lu(f, x);
                }
            }
            None => x.iter_mut().for_each(|v| *v = f64::NAN),
        }
    }
}
