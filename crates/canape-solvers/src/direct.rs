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

mod numeric;
mod symbolic;

use crate::band::BandPattern;
use crate::gband::{BandFactor, GeneralBand};
use canape_core::component::{LinearSolver, LinearSystem, SolveStats};
use canape_core::data::{Data, DataKind, DataTable, Flag, Int, Text, Words};
use canape_core::impl_component;
use canape_core::matrix::Csr;
use canape_core::registry::TemplateError;
use canape_core::scene::InitContext;
use faer::dyn_stack::MemBuffer;
use faer::sparse::linalg::cholesky::SymbolicCholesky;
use faer::sparse::linalg::lu::{NumericLu, SymbolicLu as LowSymbolicLu};
use faer::sparse::linalg::solvers::{Lu, Qr, SymbolicQr};
use faer::sparse::SymbolicSparseColMat;
use symbolic::Permuted;

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

/// With no ordering component, an envelope (given order or reverse Cuthill–McKee's) is taken
/// over AMD's sparse factor while it stores at most this many times AMD's factor values.
/// Measured on SOFA's FastTetrahedralCorotationalForceField.scn (5×5×20 nodes, band 1.47×
/// AMD's factor): the band factor and solve take about a third of the supernodal ones' time.
const BAND_OVER_AMD: f64 = 1.75;

/// Why a factorization did not give a factor.
enum Fallback {
    /// Cholesky failed (on a matrix assembled by its upper blocks only): LU needs all of it.
    NeedsFullMatrix,
    Failed(FactorError),
}

/// Why a direct solver has no factor (its solves then give NaN). The faer errors are shown as
/// their debug text.
#[derive(Clone, Debug, thiserror::Error)]
pub enum FactorError {
    #[error("symbolic factorization failed: {0:?}")]
    Symbolic(faer::sparse::FaerError),
    /// The symbolic analysis of the LU fallback (after a failed Cholesky).
    #[error("symbolic LU failed: {0:?}")]
    SymbolicLu(faer::sparse::FaerError),
    #[error("the matrix is singular: {0:?}")]
    Singular(faer::sparse::linalg::LuError),
    #[error("the matrix is singular (zero pivot in column {column})")]
    ZeroPivot { column: usize },
    #[error("QR factorization failed: {0:?}")]
    Qr(faer::sparse::FaerError),
    /// The factor was made but solving with it gave NaN or infinite values from a finite
    /// right-hand side (a zero pivot of an LDLᵀ or LU factor).
    #[error("the solution is not finite: the matrix is singular or holds non-finite values")]
    NonFiniteSolution,
}

canape_core::data_schema! {
    /// The Data of every direct solver.
    pub struct DirectSolverData {
        print_log: Flag = ("printLog", DataKind::Bool, "0", "if true, emits extra messages at runtime."),
        tags: Words = ("tags", DataKind::Words, "", "list of the subsets the object belongs to"),
        listening: Flag = ("listening", DataKind::Bool, "0", "if true, handle the events, otherwise ignore the events"),
        parallel_inverse_product: Flag = ("parallelInverseProduct", DataKind::Bool, "0", "Parallelize the computation of the product J*M^{-1}*J^T where M is the matrix of the linear system and J is any matrix with compatible dimensions"),
        linear_system: Text = ("linearSystem", DataKind::Str, "", "The linear system to solve"),
        ordering_method: Text = ("orderingMethod", DataKind::Str, "", "Ordering method used by this component"),
    }
}

canape_core::data_schema! {
    /// What SparseLDLSolver and AsyncSparseLDLSolver add to [`DirectSolverData`].
    pub struct SparseLdlData {
        precompute_symbolic_decomposition: Flag = ("precomputeSymbolicDecomposition", DataKind::Bool, "1", "If true the solver will reuse the precomputed symbolic decomposition"),
        apply_permutation: Flag = ("applyPermutation", DataKind::Bool, "1", "Deprecated: the ordering is a component now"),
        l_nnz: Int = ("L_nnz", DataKind::Int, "0", "Number of non-zero values in the lower triangular matrix of the factorization"),
    }
}

canape_core::data_schema! {
    /// What PrecomputedLinearSolver adds to [`DirectSolverData`].
    pub struct PrecomputedData {
        jmjt_twostep: Flag = ("jmjt_twostep", DataKind::Bool, "1", "Use two step algorithm to compute JMinvJt"),
        use_file: Flag = ("use_file", DataKind::Bool, "1", "Dump system matrix in a file"),
    }
}

canape_core::data_schema! {
    /// What BTDLinearSolver adds to [`DirectSolverData`]: SOFA's block-tridiagonal solver (6×6
    /// blocks: beams along a chain), solved here by the sparse Cholesky factorization, the same
    /// solution for a block-tridiagonal matrix (SOFA's reads only those blocks).
    pub struct BtdData {
        verbose: Flag = ("verbose", DataKind::Bool, "0", "Dump system state at each iteration"),
        show_problem: Flag = ("showProblem", DataKind::Bool, "0", "display debug informations about subpartSolve computation"),
        subpart_solve: Flag = ("subpartSolve", DataKind::Bool, "0", "Allows for the computation of a subpart of the system"),
    }
}

/// SOFA's direct solvers (class chosen at construction).
pub struct DirectSolver {
    class: &'static str,
    data: DataTable,
    /// PrecomputedLinearSolver's `use_file` (the only Data a direct solver reads).
    use_file: Option<Data<Flag>>,
    kind: Factorization,
    /// Factor the first matrix only (PrecomputedLinearSolver).
    precomputed: bool,
    /// The pattern the symbolic factorization was made for (shared with the assembly cache: the
    /// same `Arc` means the same pattern), as a faer column structure (A is symmetric).
    pattern: Option<(std::sync::Arc<[u32]>, SymbolicSparseColMat<u32>)>,
    symbolic: Option<Symbolic>,
    numeric: Option<Numeric>,
    failed: Option<FactorError>,
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
            use_file: self.use_file,
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
    pub fn new(class: &'static str, template: &str) -> Result<Self, TemplateError> {
        let t = template.trim();
        if !(t.is_empty()
            || t.starts_with("CompressedRowSparseMatrix")
            || t == "SReal"
            || t == "Mat3x3"
            || t == "double"
            || (class == "BTDLinearSolver" && t.starts_with("BTDMatrix6")))
        {
            return Err(TemplateError::MatrixNotAvailableUse {
                template: t.to_string(),
                class: class.to_string(),
                advice: "use CompressedRowSparseMatrixd or CompressedRowSparseMatrixMat3x3d",
            });
        }
        let (kind, precomputed) = match class {
            "EigenSparseLU" => (Factorization::Lu, false),
            "EigenSparseQR" => (Factorization::Qr, false),
            "PrecomputedLinearSolver" => (Factorization::Cholesky, true),
            _ => (Factorization::Cholesky, false),
        };
        let (data, _) = DirectSolverData::declare(DataTable::new());
        let (data, use_file) = match class {
            "SparseLDLSolver" | "AsyncSparseLDLSolver" => (SparseLdlData::declare(data).0, None),
            "PrecomputedLinearSolver" => {
                let (data, d) = PrecomputedData::declare(data);
                (data, Some(d.use_file))
            }
            "BTDLinearSolver" => (BtdData::declare(data).0, None),
            _ => (data, None),
        };
        Ok(DirectSolver {
            class,
            data,
            use_file,
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

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if self.use_file.is_some_and(|d| self.data.get(d)) {
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

impl LinearSolver for DirectSolver {
    fn solve(&mut self, sys: &mut dyn LinearSystem, b: &[f64], x: &mut [f64]) -> SolveStats {
        if !(self.precomputed && self.numeric.is_some()) {
            self.factorize(sys);
        }
        self.solve_factored(b, x);
        if self.failed.is_none()
            && x.iter().any(|v| !v.is_finite())
            && b.iter().all(|v| v.is_finite())
        {
            self.failed = Some(FactorError::NonFiniteSolution);
        }
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
    fn compliance_again(&mut self, b: &[f64], m: usize, w: &mut [f64]) -> Option<SolveStats> {
        (self.numeric.is_some() && self.compliance_factored(b, m, w)).then_some(SolveStats {
            iterations: 1,
            residual: 0.0,
        })
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
    fn failure(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.failed.as_ref().map(|e| e as _)
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

    /// How many numeric factorizations were computed since the solver was made.
    pub fn factorizations(&self) -> u64 {
        self.factorizations
    }

    /// Whether a factorization is there for `solve_factored`.
    pub fn has_factor(&self) -> bool {
        self.numeric.is_some()
    }
}

#[cfg(test)]
mod tests;
