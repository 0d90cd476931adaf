//! Direct sparse solvers on faer: SparseLDLSolver, EigenSimplicialLDLT, EigenSimplicialLLT
//! (Cholesky), EigenSparseLU (LU), EigenSparseQR (QR), and PrecomputedLinearSolver.
//!
//! As SOFA does (Sofa/Component/LinearSolver/Direct/…, MatrixLinearSolver.inl), the system
//! A = mM + bB + kK is assembled every step with fixed DOFs as identity rows/columns (their
//! zeroed entries stay in the pattern) and A is factorized numerically each step; the symbolic
//! factorization is kept while the assembly pattern is the same (same shared structure).
//! Cholesky uses faer's supernodal factorization, or an envelope (variable band) factorization
//! (crate::band) where the envelope stores about what the sparse factor would.
//! PrecomputedLinearSolver factors the first step's matrix once and reuses it for every later
//! step.
//!
//! The names are SOFA's; the factorizations are faer's. Orderings change speed and round-off only:
//! Cholesky follows a NaturalOrderingMethod or an AMDOrderingMethod in the solver's node; with
//! none (where SOFA takes AMD) it takes the envelope of the given order or of reverse
//! Cuthill–McKee's (crate::rcm), whichever factors in fewer operations, when it stores at most
//! [`BAND_OVER_AMD`] times AMD's factor (the band kernels make up for the extra operations),
//! else whichever of AMD's and the given order makes the smaller sparse factor. LU and QR
//! factor in the given order in band storage beside a NaturalOrderingMethod when the matrix is
//! banded (crate::gband), LU of a symmetric matrix that needs no row exchange as L D Lᵀ (see
//! [`Numeric::SymmetricLu`]); with faer's sparse LU and QR (their own COLAMD order) otherwise;
//! faer is given A's columns (gathered from the assembled rows through a map made once per
//! pattern), so non-symmetric matrices are solved as they are.

use crate::band::BandPattern;
use crate::gband::{BandFactor, GeneralBand};
use canape_core::component::{LinearSolver, LinearSystem, SolveStats};
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::matrix::Csr;
use canape_core::scene::InitContext;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::solvers::Solve;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, LltRef, SymbolicCholesky,
    SymmetricOrdering,
};
use faer::sparse::linalg::lu::{
    factorize_symbolic_lu, LuRef, LuSymbolicParams, NumericLu, SymbolicLu as LowSymbolicLu,
};
use faer::sparse::linalg::solvers::{Lu, Qr, SymbolicLu, SymbolicQr};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use faer::{Conj, Par};
use faer::{MatMut, Side};

/// The order a Cholesky factorization eliminates in (round-off differs, the solution does not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CholeskyOrdering {
    /// A NaturalOrderingMethod beside the solver: the given order.
    Natural,
    /// An AMDOrderingMethod beside the solver: AMD's order.
    Amd,
    /// No ordering component (SOFA would take AMD): the envelope of the given order or of
    /// reverse Cuthill–McKee's when it stores at most [`BAND_OVER_AMD`] times AMD's factor,
    /// else whichever of AMD's and the given order makes the smaller sparse factor.
    Smallest,
}

/// Which factorization a direct solver uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factorization {
    Cholesky,
    Lu,
    Qr,
}

#[derive(Clone)]
enum Symbolic {
    /// Cholesky: always the supernodal variant (dense blocks; FEM matrices of 3×3 blocks make
    /// supernodes of at least 3 columns, where faer's automatic choice often picked the slower
    /// column-by-column simplicial variant).
    /// Shared between clones of the solver (faer's symbolic factor is immutable, not `Clone`).
    Llt(std::sync::Arc<SymbolicCholesky<u32>>),
    /// Cholesky in the given order when its factor fills the matrix's band (see
    /// [`crate::band`]): the band's layout.
    Band(Box<BandPattern>),
    /// LU: faer's supernodal variant forced, as for Cholesky.
    Lu(Box<LowSymbolicLu<u32>>),
    Qr(SymbolicQr<u32>),
    /// LU or QR in the given order (NaturalOrderingMethod) of a matrix whose factors fill its
    /// band (see [`crate::gband`]); for LU of a symmetric pattern, also the symmetric band
    /// layout (see [`Numeric::SymmetricLu`]).
    GeneralBand(Box<GeneralBand>, Option<Box<BandPattern>>),
}

#[derive(Clone)]
enum Numeric {
    /// Values of L for the symbolic structure.
    Llt(Vec<f64>),
    /// Values of the band factor.
    Band(Vec<f64>),
    /// LU of a matrix that was meant for Cholesky but is not positive definite.
    Lu(Box<Lu<u32, f64>>),
    LuSupernodal(Box<NumericLu<u32, f64>>),
    Qr(Qr<u32, f64>),
    /// Band LU or QR factors (which one: the solver's kind).
    GeneralBand(Box<BandFactor>),
    /// LU with partial pivoting of a symmetric matrix where no row is exchanged: then
    /// L U = L D Lᵀ, kept as the band Cholesky factor G = L D^½ (the LU's multipliers are
    /// G[i, j] / G[j, j], all at most 1 in magnitude, which is what "no exchange" means).
    SymmetricLu(Vec<f64>),
}

/// `a`'s pattern as a faer column structure (its rows read as columns: Aᵀ, A when symmetric).
fn col_pattern(a: &Csr) -> SymbolicSparseColMat<u32> {
    let ptr: Vec<u32> = a.row_ptr.iter().map(|&p| p as u32).collect();
    SymbolicSparseColMat::new_checked(a.n, a.n, ptr, None, a.cols.to_vec())
}

/// A's columns as a faer column structure (the CSR's rows are its rows), and for each of its
/// values the index of that value in `a` (to gather the values of each factorization).
fn columns_of(a: &Csr) -> (SymbolicSparseColMat<u32>, Vec<u32>) {
    let mut count = vec![0u32; a.n + 1];
    for &c in a.cols.iter() {
        count[c as usize + 1] += 1;
    }
    for i in 0..a.n {
        count[i + 1] += count[i];
    }
    let mut next = count.clone();
    let mut rows = vec![0u32; a.cols.len()];
    let mut src = vec![0u32; a.cols.len()];
    for r in 0..a.n {
        for k in a.row_ptr[r]..a.row_ptr[r + 1] {
            let c = a.cols[k] as usize;
            rows[next[c] as usize] = r as u32;
            src[next[c] as usize] = k as u32;
            next[c] += 1;
        }
    }
    let pattern = SymbolicSparseColMat::new_checked(a.n, a.n, count, None, rows);
    (pattern, src)
}

/// The pattern of Aᵀ as a faer column structure (`a`'s rows are faer's columns, so this is
/// the pattern of A itself, columns by rows). faer's symbolic Cholesky with the identity
/// ordering takes its input's structure as the upper triangle, while the numeric
/// factorization reads the lower one without a copy: the symbolic analysis is given the
/// transposed structure (computed only when the pattern changes).
fn transpose_pattern(a: &Csr) -> SymbolicSparseColMat<u32> {
    columns_of(a).0
}

/// A Cholesky factorization in a fill-reducing order, with the matrix put in that order by us:
/// B = P A Pᵀ's lower triangle, gathered from the assembled A through a map made once per
/// pattern (faer would otherwise permute the whole matrix, pattern included, at every
/// factorization). B is factored in its own (identity) order.
#[derive(Clone)]
struct Permuted {
    /// New index of each DOF: B[new(i), new(j)] = A[i, j].
    new_of: Vec<u32>,
    /// B's lower triangle as a CSR of its columns (the form `col_pattern` reads), and that
    /// pattern as faer's.
    b: Csr,
    pattern: SymbolicSparseColMat<u32>,
    /// Per stored value of B, the index of its value in the assembled A.
    src: Vec<u32>,
    /// Right-hand side and solution in the new order.
    work: Vec<f64>,
}

impl Permuted {
    /// `a` holds the blocks on and above the diagonal (each diagonal block whole);
    /// `new_of` is a permutation of its rows.
    fn new(a: &Csr, new_of: Vec<u32>) -> Self {
        let mut entries: Vec<(u32, u32, u32)> = Vec::with_capacity(a.vals.len());
        for i in 0..a.n {
            for k in a.row_ptr[i]..a.row_ptr[i + 1] {
                let j = a.cols[k] as usize;
                if j < i {
                    continue; // the lower half of a diagonal block: its mirror is stored
                }
                let (ni, nj) = (new_of[i], new_of[j]);
                entries.push((ni.min(nj), ni.max(nj), k as u32));
            }
        }
        entries.sort_unstable();
        let mut row_ptr = vec![0usize; a.n + 1];
        for &(c, _, _) in &entries {
            row_ptr[c as usize + 1] += 1;
        }
        for i in 0..a.n {
            row_ptr[i + 1] += row_ptr[i];
        }
        let cols: Vec<u32> = entries.iter().map(|e| e.1).collect();
        let src = entries.iter().map(|e| e.2).collect();
        let b = Csr {
            n: a.n,
            row_ptr: row_ptr.into(),
            cols: cols.into(),
            vals: vec![0.0; entries.len()],
        };
        Permuted {
            new_of,
            pattern: col_pattern(&b),
            b,
            src,
            work: vec![0.0; a.n],
        }
    }

    /// B's values from the assembled A.
    fn gather(&mut self, a: &Csr) {
        for (v, &k) in self.b.vals.iter_mut().zip(&self.src) {
            *v = a.vals[k as usize];
        }
    }
}

/// How a Cholesky factorization of `a` runs: in band storage (see [`crate::band`]) or
/// sparse (faer's supernodal factorization, with the matrix reordered by us for AMD).
enum CholeskyPlan {
    Band(BandPattern),
    Sparse(std::sync::Arc<SymbolicCholesky<u32>>, Option<Permuted>),
}

/// The Cholesky plan for `a` (its blocks on and above the diagonal) in `ordering`:
/// - Natural: the given order, in band storage when the sparse factor fills at least two
///   thirds of its envelope anyway;
/// - Amd: AMD's order, sparse;
/// - Smallest: the envelope of the given order or of reverse Cuthill–McKee's order, whichever
///   factors in fewer operations, when it stores at most [`BAND_OVER_AMD`] times AMD's sparse
///   factor; otherwise
///   the sparse factor of the given order or AMD's, whichever is smaller.
fn cholesky_plan(a: &Csr, ordering: CholeskyOrdering) -> Result<CholeskyPlan, Fallback> {
    let symbolic = |a: &Csr, ordering| {
        factorize_symbolic_cholesky(
            transpose_pattern(a).as_ref(),
            Side::Upper,
            ordering,
            CholeskySymbolicParams {
                supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
                ..Default::default()
            },
        )
        .map_err(|e| Fallback::Failed(format!("symbolic factorization failed: {e:?}")))
    };
    if ordering == CholeskyOrdering::Natural {
        let given = symbolic(a, SymmetricOrdering::Identity)?;
        return Ok(match BandPattern::new(a) {
            Some(band) if 2 * band.storage() <= 3 * given.len_val() => CholeskyPlan::Band(band),
            _ => CholeskyPlan::Sparse(std::sync::Arc::new(given), None),
        });
    }
    let amd = symbolic(a, SymmetricOrdering::Amd)?;
    if ordering == CholeskyOrdering::Smallest {
        // the band factorization runs several times more operations per second than the
        // supernodal one on small supernodes: worth an envelope up to BAND_OVER_AMD times
        // AMD's factor
        let given = BandPattern::new(a);
        let rcm = BandPattern::with_order(a, Some(crate::rcm::reverse_cuthill_mckee(a)));
        let band = match (given, rcm) {
            (Some(g), Some(r)) => Some(if r.operations() < g.operations() {
                r
            } else {
                g
            }),
            (g, r) => g.or(r),
        };
        if let Some(band) =
            band.filter(|b| b.storage() as f64 <= BAND_OVER_AMD * amd.len_val() as f64)
        {
            return Ok(CholeskyPlan::Band(band));
        }
        let given = symbolic(a, SymmetricOrdering::Identity)?;
        if given.len_val() <= amd.len_val() {
            return Ok(CholeskyPlan::Sparse(std::sync::Arc::new(given), None));
        }
    }
    let Some(perm) = amd.perm() else {
        return Ok(CholeskyPlan::Sparse(std::sync::Arc::new(amd), None));
    };
    // faer's permutation arrays: B[k, l] = A[fwd[k], fwd[l]], so DOF i moves to inv[i]
    let (_, inv) = perm.arrays();
    let new_of: Vec<u32> = inv.to_vec();
    let p = Permuted::new(a, new_of);
    // read as rows, B's lower columns are the rows of its upper triangle: the form of `a`
    let s = symbolic(&p.b, SymmetricOrdering::Identity)?;
    if s.len_val() != amd.len_val() {
        // not the fill AMD predicted: keep faer's own handling of the permutation
        return Ok(CholeskyPlan::Sparse(std::sync::Arc::new(amd), None));
    }
    Ok(CholeskyPlan::Sparse(std::sync::Arc::new(s), Some(p)))
}

/// With no ordering component, an envelope (given order or reverse Cuthill–McKee's) is taken
/// over AMD's sparse factor while it stores at most this many times AMD's factor values.
/// Measured on SOFA's FastTetrahedralCorotationalForceField.scn (5×5×20 nodes, band 1.47×
/// AMD's factor): the band factor and solve take about a third of the supernodal ones' time.
const BAND_OVER_AMD: f64 = 1.75;

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

/// Why a factorization did not give a factor.
enum Fallback {
    /// Cholesky failed (on a matrix assembled by its upper blocks only): LU needs all of it.
    NeedsFullMatrix,
    Failed(String),
}

/// SOFA's direct solvers (class chosen at construction).
pub struct DirectSolver {
    class: &'static str,
    data: DataTable,
    kind: Factorization,
    /// Factor the first matrix only (PrecomputedLinearSolver).
    precomputed: bool,
    /// The pattern the symbolic factorization was made for (shared with the assembly cache: the
    /// same `Arc` means the same pattern), as a faer column structure (A is symmetric).
    pattern: Option<(std::sync::Arc<[u32]>, SymbolicSparseColMat<u32>)>,
    symbolic: Option<Symbolic>,
    numeric: Option<Numeric>,
    failed: Option<String>,
    warned_fallback: bool,
    /// Storage of L reused from step to step, and the work space of factor and solve.
    l_values: Vec<f64>,
    scratch: Option<(faer::dyn_stack::StackReq, MemBuffer)>,
    /// A NaturalOrderingMethod sits in the solver's node: factor in the given order. Otherwise
    /// AMD, SOFA's default (OrderingMethodAccessor.h: the ordering is looked up in the solver's
    /// own node; AMD is created when there is none). LU and QR: in the given order (band
    /// storage, see [`crate::gband`]) when Natural and the factors fill the band; otherwise
    /// faer's sparse LU and QR, which order columns with their own COLAMD.
    ordering: CholeskyOrdering,
    /// LU values kept between steps (same structure: no reallocation).
    lu_values: Option<Box<NumericLu<u32, f64>>>,
    /// Cholesky in AMD order: the matrix in that order (None in the natural order).
    permuted: Option<Permuted>,
    /// Band LU/QR factors kept between steps (no reallocation).
    band_factor: Option<Box<BandFactor>>,
    /// A band solve's right-hand side in the band's order (when it renumbers).
    band_work: Vec<f64>,
    /// LU and QR: whether A's pattern is symmetric (its columns are its rows).
    symmetric_pattern: bool,
    /// LU and QR through faer: per value of A's column structure (`pattern`), the index of
    /// that value in the assembled CSR, and the values gathered for the factorization.
    column_values: (Vec<u32>, Vec<f64>),
    /// The matrix the current factor was computed from (None after a failure or an LU
    /// fallback): an assembly equal to it bit for bit (a linear force field, a constant time
    /// step) keeps the factor instead of computing the same one again.
    factored: Option<Csr>,
    factorizations: u64,
    symbolic_factorizations: u64,
    /// AsyncSparseLDLSolver: solve with the previous step's factor (see [`Self::factorize`]).
    lagged: bool,
    /// The matrix assembled for the lagged factor, factored at the next `factorize`.
    pending: Option<Csr>,
}

/// A clone carries the factorization (a PrecomputedLinearSolver keeps its first factor).
impl Clone for DirectSolver {
    fn clone(&self) -> Self {
        DirectSolver {
            class: self.class,
            data: self.data.clone(),
            kind: self.kind,
            precomputed: self.precomputed,
            pattern: self.pattern.clone(),
            symbolic: self.symbolic.clone(),
            numeric: self.numeric.clone(),
            failed: self.failed.clone(),
            warned_fallback: self.warned_fallback,
            l_values: self.l_values.clone(),
            // a work space: same size, fresh memory (its content is not read before written)
            scratch: self
                .scratch
                .as_ref()
                .map(|(req, _)| (*req, MemBuffer::new(*req))),
            ordering: self.ordering,
            lu_values: self.lu_values.clone(),
            permuted: self.permuted.clone(),
            band_factor: self.band_factor.clone(),
            band_work: self.band_work.clone(),
            symmetric_pattern: self.symmetric_pattern,
            column_values: self.column_values.clone(),
            factored: self.factored.clone(),
            factorizations: self.factorizations,
            symbolic_factorizations: self.symbolic_factorizations,
            lagged: self.lagged,
            pending: self.pending.clone(),
        }
    }
}

impl DirectSolver {
    pub fn new(class: &'static str, template: &str) -> Result<Self, String> {
        let t = template.trim();
        if !(t.is_empty()
            || t.starts_with("CompressedRowSparseMatrix")
            || t == "SReal"
            || t == "Mat3x3"
            || t == "double"
            || (class == "BTDLinearSolver" && t.starts_with("BTDMatrix6")))
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
            "SparseLDLSolver" | "AsyncSparseLDLSolver" => data
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
            // SOFA's block-tridiagonal solver (6×6 blocks: beams along a chain); solved here by
            // the sparse Cholesky factorization, the same solution for a block-tridiagonal
            // matrix (SOFA's reads only those blocks)
            "BTDLinearSolver" => data
                .with(
                    "verbose",
                    DataKind::Bool,
                    "0",
                    "Dump system state at each iteration",
                )
                .with(
                    "showProblem",
                    DataKind::Bool,
                    "0",
                    "display debug informations about subpartSolve computation",
                )
                .with(
                    "subpartSolve",
                    DataKind::Bool,
                    "0",
                    "Allows for the computation of a subpart of the system",
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
            l_values: Vec::new(),
            scratch: None,
            ordering: CholeskyOrdering::Smallest,
            lu_values: None,
            permuted: None,
            band_factor: None,
            band_work: Vec::new(),
            symmetric_pattern: false,
            column_values: Default::default(),
            factored: None,
            factorizations: 0,
            symbolic_factorizations: 0,
            lagged: class == "AsyncSparseLDLSolver",
            pending: None,
        })
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
                    .map_err(|e| {
                        Fallback::Failed(format!("symbolic factorization failed: {e:?}"))
                    })?,
                )),
                Factorization::Qr => Symbolic::Qr(SymbolicQr::try_new(sym).map_err(|e| {
                    Fallback::Failed(format!("symbolic factorization failed: {e:?}"))
                })?),
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
                .map_err(|e| Fallback::Failed(format!("the matrix is singular: {e:?}")))?;
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
                    return Err(Fallback::Failed(format!(
                        "the matrix is singular (zero pivot in column {})",
                        e.column
                    )));
                }
                Numeric::GeneralBand(f)
            }
            Symbolic::Qr(s) => Numeric::Qr(
                Qr::try_new_with_symbolic(s.clone(), mat)
                    .map_err(|e| Fallback::Failed(format!("QR factorization failed: {e:?}")))?,
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
    fn factor_lu_fallback(&mut self, a: &Csr) -> Result<(), String> {
        self.warned_fallback = true;
        let (sym, src) = columns_of(a);
        let vals: Vec<f64> = src.iter().map(|&k| a.vals[k as usize]).collect();
        let s =
            SymbolicLu::try_new(sym.as_ref()).map_err(|e| format!("symbolic LU failed: {e:?}"))?;
        let lu = Lu::try_new_with_symbolic(s, SparseColMatRef::new(sym.as_ref(), &vals))
            .map_err(|e| format!("the matrix is singular: {e:?}"))?;
        self.numeric = Some(Numeric::Lu(Box::new(lu)));
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
        self.factored = None;
        self.ordering = ordering_in(ctx, ctx.node);
    }
}

impl_component!(DirectSolver, |s| s.class, init);

/// The Cholesky ordering an ordering component in `node` asks for (SOFA looks it up in the
/// solver's own node, OrderingMethodAccessor.h).
pub fn ordering_in(ctx: &InitContext<'_>, node: canape_core::scene::NodeId) -> CholeskyOrdering {
    let classes = || {
        ctx.scene
            .node(node)
            .components
            .iter()
            .map(|&c| ctx.scene.info(c).class)
    };
    if classes().any(|c| c == "NaturalOrderingMethod") {
        CholeskyOrdering::Natural
    } else if classes().any(|c| c == "AMDOrderingMethod") {
        CholeskyOrdering::Amd
    } else {
        CholeskyOrdering::Smallest
    }
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

impl LinearSolver for DirectSolver {
    fn solve(&mut self, sys: &mut dyn LinearSystem, b: &[f64], x: &mut [f64]) -> SolveStats {
        if !(self.precomputed && self.numeric.is_some()) {
            self.factorize(sys);
        }
        self.solve_factored(b, x);
        SolveStats {
            iterations: 1,
            residual: 0.0,
        }
    }
    fn solve_again(&mut self, sys: &mut dyn LinearSystem, b: &[f64], x: &mut [f64]) -> SolveStats {
        if self.numeric.is_none() {
            return self.solve(sys, b, x);
        }
        self.solve_factored(b, x);
        SolveStats {
            iterations: 1,
            residual: 0.0,
        }
    }
    fn solve_again_many(
        &mut self,
        sys: &mut dyn LinearSystem,
        b: &[f64],
        x: &mut [f64],
        m: usize,
    ) -> SolveStats {
        if self.numeric.is_none() {
            return canape_core::component::solve_again_by_columns(self, sys, b, x, m);
        }
        self.solve_factored_many(b, x, m);
        SolveStats {
            iterations: 1,
            residual: 0.0,
        }
    }
    /// Every factorization compares the new matrix with the factored one, so only the
    /// precomputed factor must go; the symbolic analysis stays while the pattern does.
    fn matrix_changed(&mut self) {
        if self.precomputed {
            self.numeric = None;
            self.factored = None;
        }
    }
    fn factorization_counts(&self) -> Option<(u64, u64)> {
        Some((self.symbolic_factorizations, self.factorizations))
    }
    /// An AsyncSparseLDLSolver's lagged factor belongs to the steps before: after a restore
    /// the first solve factors its own matrix again (as after init).
    fn restart(&mut self) {
        if self.lagged {
            self.numeric = None;
            self.factored = None;
            self.pending = None;
        }
    }
}

impl DirectSolver {
    /// The elimination order of Cholesky factorizations.
    pub fn set_ordering(&mut self, ordering: CholeskyOrdering) {
        self.ordering = ordering;
        // the next factorization is in the new order, even of the same matrix
        self.factored = None;
    }

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
        if let Err(e) = result {
            self.failed = Some(e);
            self.numeric = None;
        }
    }

    /// How many numeric factorizations were computed since the solver was made.
    pub fn factorizations(&self) -> u64 {
        self.factorizations
    }

    /// Whether a factorization is there for `solve_factored`.
    pub fn has_factor(&self) -> bool {
        self.numeric.is_some()
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

    /// AsyncSparseLDLSolver: the first solve is exact, each later one solves with the matrix
    /// of the solve before (one step late), and a restart makes the next solve exact again.
    #[test]
    fn the_async_solver_uses_the_previous_steps_factor() {
        let mut s =
            DirectSolver::new("AsyncSparseLDLSolver", "CompressedRowSparseMatrixMat3x3d").unwrap();
        let n = 12;
        let b: Vec<f64> = (0..n).map(|i| ((i * 3) as f64).sin()).collect();
        let exact = |a: &Vec<Vec<f64>>| {
            let mut d = DirectSolver::new("SparseLDLSolver", "").unwrap();
            let mut x = vec![0.0; n];
            d.solve(&mut Sys::new(a.clone()), &b, &mut x);
            x
        };
        let a1 = spd(n);
        let mut a2 = spd(n);
        a2[3][3] += 2.0;
        let mut a3 = spd(n);
        a3[5][5] += 1.0;
        let mut x = vec![0.0; n];
        s.solve(&mut Sys::new(a1.clone()), &b, &mut x);
        assert_eq!(x, exact(&a1), "the first solve waits for its factor");
        s.solve(&mut Sys::new(a2.clone()), &b, &mut x);
        assert_eq!(x, exact(&a1), "step 2 solves with step 1's factor");
        s.solve(&mut Sys::new(a3.clone()), &b, &mut x);
        assert_eq!(x, exact(&a2), "step 3 with step 2's");
        s.restart();
        s.solve(&mut Sys::new(a3.clone()), &b, &mut x);
        assert_eq!(x, exact(&a3), "after a restart the solve is exact");
    }

    /// An assembly equal to the factored one keeps the factor (same solution bits); a changed
    /// value is factored again and solved with.
    #[test]
    fn an_unchanged_matrix_keeps_its_factor() {
        for class in [
            "SparseLDLSolver",
            "EigenSimplicialLDLT",
            "EigenSparseLU",
            "EigenSparseQR",
        ] {
            let mut s = DirectSolver::new(class, "CompressedRowSparseMatrixMat3x3d").unwrap();
            let mut sys = Sys::new(spd(30));
            let b: Vec<f64> = (0..30).map(|i| ((i * 5) as f64).cos()).collect();
            let (mut x1, mut x2) = (vec![0.0; 30], vec![0.0; 30]);
            s.solve(&mut sys, &b, &mut x1);
            s.solve(&mut sys, &b, &mut x2);
            assert_eq!(s.factorizations(), 1, "{class}");
            assert_eq!(sys.assembled, 2, "{class}: assembled again to compare");
            assert!(x1.iter().zip(&x2).all(|(p, q)| p.to_bits() == q.to_bits()));
            sys.a[7][7] += 1.0;
            s.solve(&mut sys, &b, &mut x2);
            assert_eq!(s.factorizations(), 2, "{class}");
            assert!(sys.relative_residual(&x2, &b) < 1e-12, "{class}");
            assert!(x1[7] != x2[7]);
        }
    }

    /// A grid's matrix: `nodes` nodes at grid positions `node(i)`, 3 DOFs each, coupled to their
    /// 26 neighbours (−0.1), 30 on the diagonal.
    fn grid_matrix(nodes: usize, node: impl Fn(usize) -> (usize, usize, usize)) -> Vec<Vec<f64>> {
        let n = 3 * nodes;
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        let ((a, b, c), (d, e, f)) = (node(i / 3), node(j / 3));
                        if i == j {
                            30.0
                        } else if a.abs_diff(d) <= 1 && b.abs_diff(e) <= 1 && c.abs_diff(f) <= 1 {
                            -0.1
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// Without an ordering component, Cholesky takes the order with the smaller factor: the
    /// given one for a long thin grid numbered along its length (a band), AMD's for an arrow
    /// matrix whose dense row comes first (full fill in the given order, none in AMD's).
    #[test]
    fn smallest_factor_ordering() {
        // 2 × 2 × 30 nodes, 3 DOFs each, coupled to their 26 neighbours
        let n = 3 * 120;
        let grid = grid_matrix(120, |i| (i % 2, (i / 2) % 2, i / 4));
        let arrow: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| match (i, j) {
                        _ if i == j => 30.0,
                        (0, _) | (_, 0) => 0.1,
                        _ => 0.0,
                    })
                    .collect()
            })
            .collect();
        let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        for (a, reordered) in [(grid, false), (arrow, true)] {
            let mut sys = Sys::new(a);
            let upper = sys.assemble_upper();
            let (given, amd) = (sparse_size(&upper, false), sparse_size(&upper, true));
            assert_eq!(
                amd < given,
                reordered,
                "factor sizes: given {given}, AMD {amd}"
            );
            let mut s = DirectSolver::new("SparseLDLSolver", "").unwrap();
            assert_eq!(s.ordering, CholeskyOrdering::Smallest);
            let mut x = vec![0.0; n];
            s.solve(&mut sys, &b, &mut x);
            assert_eq!(s.permuted.is_some(), reordered);
            assert!(sys.relative_residual(&x, &b) < 1e-14);
        }
    }

    /// Number of values of the sparse Cholesky factor of `upper` in the given or AMD's order.
    fn sparse_size(upper: &Csr, amd: bool) -> usize {
        let ordering = if amd {
            SymmetricOrdering::Amd
        } else {
            SymmetricOrdering::Identity
        };
        factorize_symbolic_cholesky(
            transpose_pattern(upper).as_ref(),
            Side::Upper,
            ordering,
            Default::default(),
        )
        .unwrap()
        .len_val()
    }

    /// Without an ordering component, the smaller envelope of the given order's and reverse
    /// Cuthill–McKee's is taken over an AMD factor somewhat smaller (up to [`BAND_OVER_AMD`]
    /// times), not over a much smaller one; all solve alike.
    #[test]
    fn band_over_a_somewhat_smaller_amd_factor() {
        // m × m × len nodes, 3 DOFs each, coupled to their 26 neighbours, numbered across the
        // m × m section first (a band), or along the length first (a wide band, which reverse
        // Cuthill–McKee narrows)
        let grid = |m: usize, len: usize, along: bool| {
            grid_matrix(m * m * len, |i| {
                if along {
                    (i / len % m, i / (len * m), i % len)
                } else {
                    (i % m, (i / m) % m, i / (m * m))
                }
            })
        };
        // a chain whose every node is also coupled to node 0: any envelope holds about half
        // the matrix, AMD's factor little more than the matrix
        let arrow = |n: usize| -> Vec<Vec<f64>> {
            (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| match (i, j) {
                            _ if i == j => 30.0,
                            (0, _) | (_, 0) => 0.1,
                            _ if i.abs_diff(j) == 1 => -1.0,
                            _ => 0.0,
                        })
                        .collect()
                })
                .collect()
        };
        let mut seen = [false; 2];
        let cases = [
            (3, 12, false),
            (4, 12, false),
            (5, 12, true),
            (8, 8, false),
            (0, 0, false),
        ];
        for (m, len, along) in cases {
            let a = if m == 0 {
                arrow(600)
            } else {
                grid(m, len, along)
            };
            let n = a.len();
            let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
            let mut sys = Sys::new(a);
            let upper = sys.assemble_upper();
            let (given, amd) = (sparse_size(&upper, false), sparse_size(&upper, true));
            let given_band = BandPattern::new(&upper).unwrap();
            let rcm = crate::rcm::reverse_cuthill_mckee(&upper);
            let rcm_band = BandPattern::with_order(&upper, Some(rcm)).unwrap();
            let rcm_fewer = rcm_band.operations() < given_band.operations();
            let band = if rcm_fewer { &rcm_band } else { &given_band }.storage();
            let (given_band, rcm_band) = (given_band.storage(), rcm_band.storage());
            let mut s = DirectSolver::new("SparseLDLSolver", "").unwrap();
            let mut x = vec![0.0; n];
            s.solve(&mut sys, &b, &mut x);
            assert!(sys.relative_residual(&x, &b) < 1e-14);
            let what = format!(
                "{m} {len} {along}: given {given}, AMD {amd}, bands {given_band} {rcm_band}"
            );
            let expected = band as f64 <= BAND_OVER_AMD * amd as f64;
            match &s.symbolic {
                Some(Symbolic::Band(p)) => {
                    assert!(expected, "{what}");
                    assert_eq!(p.is_reordered(), rcm_fewer, "{what}");
                    // numbered along the length: only the renumbered envelope is narrow
                    assert_eq!(p.is_reordered(), along, "{what}");
                }
                _ => assert!(!expected, "{what}"),
            }
            if amd < band {
                seen[usize::from(expected)] = true;
            }
        }
        // both cases occur: AMD's factor smaller and the band taken, and AMD's taken
        assert_eq!(seen, [true, true]);
    }

    fn max_difference(a: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn natural_and_amd_orderings_solve_alike() {
        // a dense-ish SPD matrix whose AMD order differs from the natural one
        let n = 30;
        let mut a = spd(n);
        for i in 0..n {
            a[i][(i * 7) % n] += 0.3;
            a[(i * 7) % n][i] += 0.3;
            a[i][i] += 2.0;
        }
        let b: Vec<f64> = (0..n).map(|i| (i as f64).cos()).collect();
        let mut xs = Vec::new();
        for natural in [false, true] {
            let mut s = DirectSolver::new("SparseLDLSolver", "").unwrap();
            s.ordering = if natural {
                CholeskyOrdering::Natural
            } else {
                CholeskyOrdering::Amd
            };
            let mut sys = Sys::new(a.clone());
            let mut x = vec![0.0; n];
            s.solve(&mut sys, &b, &mut x);
            match &s.symbolic {
                // AMD: the matrix is reordered by us (same fill as faer's AMD analysis, else
                // no reordering) and factored in its own order
                Some(Symbolic::Llt(sym)) => assert!(sym.perm().is_none_or(|p| {
                    p.arrays()
                        .0
                        .iter()
                        .enumerate()
                        .all(|(i, &v)| v as usize == i)
                })),
                // the natural order fills this matrix's band: band factorization
                Some(Symbolic::Band(_)) => assert!(natural),
                _ => panic!("Cholesky expected"),
            }
            assert_eq!(s.permuted.is_some(), !natural);
            let identity = s
                .permuted
                .as_ref()
                .is_none_or(|p| p.new_of.iter().enumerate().all(|(i, &v)| v as usize == i));
            assert_eq!(identity, natural, "natural ordering: {natural}");
            xs.push(x);
        }
        let diff = max_difference(&xs[0], &xs[1]);
        assert!(diff < 1e-12, "orderings disagree by {diff}");
    }

    /// In the given order, a banded matrix (a bar's 1D Laplacian plus couplings two apart) is
    /// factored in band storage and an arrow matrix (dense last row: a band as wide as the
    /// matrix, little fill) by the sparse factorization; both solve as the AMD order does.
    #[test]
    fn band_factorization_where_the_factor_fills_the_band() {
        let n = 200;
        let mut banded = spd(n);
        for i in 0..n - 2 {
            banded[i][i + 2] = -0.2;
            banded[i + 2][i] = -0.2;
        }
        let mut arrow = spd(n);
        for i in 0..n - 1 {
            arrow[i][n - 1] = 0.1;
            arrow[n - 1][i] = 0.1;
        }
        arrow[n - 1][n - 1] = 10.0;
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).sin()).collect();
        for (a, band) in [(banded, true), (arrow, false)] {
            let mut xs = Vec::new();
            for ordering in [CholeskyOrdering::Natural, CholeskyOrdering::Amd] {
                let mut s = DirectSolver::new("SparseLDLSolver", "").unwrap();
                s.set_ordering(ordering);
                let mut sys = Sys::new(a.clone());
                let mut x = vec![0.0; n];
                for _ in 0..2 {
                    s.solve(&mut sys, &b, &mut x);
                }
                let is_band = matches!(s.symbolic, Some(Symbolic::Band(_)));
                assert_eq!(is_band, band && ordering == CholeskyOrdering::Natural);
                assert!(sys.relative_residual(&x, &b) < 1e-14);
                xs.push(x);
            }
            let diff = max_difference(&xs[0], &xs[1]);
            assert!(diff < 1e-12, "band {band}: orderings disagree by {diff}");
        }
    }

    /// EigenSparseLU and EigenSparseQR beside a NaturalOrderingMethod factor a banded matrix in
    /// band storage (and an arrow matrix sparsely); without one, faer's sparse factorizations
    /// in their own column order. All solve non-symmetric matrices and agree.
    #[test]
    fn natural_order_lu_and_qr_use_the_band_where_it_fills() {
        let n = 40;
        // not symmetric: faer is given A's columns, not the CSR's rows (which are Aᵀ's)
        let mut banded = spd(n);
        for i in 0..n - 3 {
            banded[i][i + 3] = 0.3;
            banded[i + 3][i] = -0.2;
        }
        let mut arrow = spd(n);
        for i in 0..n - 1 {
            arrow[i][n - 1] = 0.1;
            arrow[n - 1][i] = 0.05 * i as f64;
        }
        arrow[n - 1][n - 1] = 10.0;
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).sin()).collect();
        for class in ["EigenSparseLU", "EigenSparseQR"] {
            for (a, band) in [(banded.clone(), true), (arrow.clone(), false)] {
                let mut xs = Vec::new();
                for ordering in [CholeskyOrdering::Natural, CholeskyOrdering::Smallest] {
                    let mut s = DirectSolver::new(class, "").unwrap();
                    s.set_ordering(ordering);
                    let mut sys = Sys::new(a.clone());
                    let mut x = vec![0.0; n];
                    for _ in 0..2 {
                        s.solve(&mut sys, &b, &mut x);
                    }
                    let is_band = matches!(s.symbolic, Some(Symbolic::GeneralBand(..)));
                    assert_eq!(is_band, band && ordering == CholeskyOrdering::Natural);
                    let res = sys.relative_residual(&x, &b);
                    assert!(
                        res < 1e-14,
                        "{class} {ordering:?} band {band}: residual {res}"
                    );
                    xs.push(x);
                }
                let diff = max_difference(&xs[0], &xs[1]);
                assert!(
                    diff < 1e-12,
                    "{class} band {band}: orders disagree by {diff}"
                );
            }
        }
    }

    /// EigenSparseLU (given order, band) on a symmetric matrix whose partial pivoting keeps
    /// every pivot on the diagonal factors it symmetrically; where a pivot would move (a
    /// multiplier above 1, or an indefinite matrix) or the matrix is not symmetric, the
    /// pivoted band LU runs. All solve alike.
    #[test]
    fn lu_of_a_symmetric_matrix_without_row_exchanges_is_factored_symmetrically() {
        let n = 30;
        let mut banded = spd(n);
        for i in 0..n - 3 {
            banded[i][i + 3] = 0.4;
            banded[i + 3][i] = 0.4;
        }
        // SPD, but row 11's multiplier in column 10 is about 1.46: partial pivoting exchanges
        // rows 10 and 11 (the largest multiplier of `banded` is about 0.49)
        let mut pivoting = banded.clone();
        pivoting[10][10] = 3.0;
        pivoting[11][11] = 8.0;
        pivoting[10][11] = 3.5;
        pivoting[11][10] = 3.5;
        let mut indefinite = banded.clone();
        indefinite[12][12] = -3.0;
        let mut unsymmetric = banded.clone();
        unsymmetric[4][7] = 0.41;
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).cos()).collect();
        for (name, a, symmetric) in [
            ("banded", banded, true),
            ("pivoting", pivoting, false),
            ("indefinite", indefinite, false),
            ("unsymmetric", unsymmetric, false),
        ] {
            let mut xs = Vec::new();
            for ordering in [CholeskyOrdering::Natural, CholeskyOrdering::Smallest] {
                let mut s = DirectSolver::new("EigenSparseLU", "").unwrap();
                s.set_ordering(ordering);
                let mut sys = Sys::new(a.clone());
                let mut x = vec![0.0; n];
                for _ in 0..2 {
                    s.solve(&mut sys, &b, &mut x);
                    assert_eq!(
                        s.used_symmetric_lu(),
                        symmetric && ordering == CholeskyOrdering::Natural,
                        "{name} {ordering:?}"
                    );
                }
                let res = sys.relative_residual(&x, &b);
                assert!(res < 1e-14, "{name} {ordering:?}: residual {res}");
                xs.push(x);
            }
            let diff = max_difference(&xs[0], &xs[1]);
            assert!(diff < 1e-12, "{name}: band and faer LU disagree by {diff}");
        }
    }

    /// A symmetric indefinite matrix: Cholesky on the upper blocks fails, LU on the whole
    /// matrix (assembled again) solves it, step after step.
    #[test]
    fn indefinite_matrix_falls_back_to_lu_on_the_whole_matrix() {
        let n = 9;
        let mut a = spd(n);
        a[4][4] = -50.0;
        for class in [
            "SparseLDLSolver",
            "EigenSimplicialLDLT",
            "EigenSimplicialLLT",
        ] {
            let mut sys = Sys::new(a.clone());
            let mut s = DirectSolver::new(class, "").unwrap();
            for step in 0..2 {
                let b: Vec<f64> = (0..n).map(|i| (i + step) as f64 - 3.5).collect();
                let mut x = vec![0.0; n];
                s.solve(&mut sys, &b, &mut x);
                assert!(s.used_lu_fallback(), "{class}");
                assert!(sys.relative_residual(&x, &b) < 1e-10, "{class} step {step}");
            }
        }
    }

    #[test]
    fn bad_template_is_refused() {
        assert!(DirectSolver::new("SparseLDLSolver", "Vec3d").is_err());
    }
}
