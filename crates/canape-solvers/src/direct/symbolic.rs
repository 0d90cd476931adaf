//! The symbolic side of the direct solvers: the matrix's pattern as faer's column structures,
//! and the plan of a Cholesky factorization (band storage or faer's supernodal factor, in the
//! given, reverse Cuthill–McKee's or AMD's order, with the matrix put in AMD's order by us).

use super::{CholeskyOrdering, FactorError, Fallback, BAND_OVER_AMD};
use crate::band::BandPattern;
use canape_core::matrix::Csr;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, SymbolicCholesky, SymmetricOrdering,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::SymbolicSparseColMat;
use faer::Side;

/// `a`'s pattern as a faer column structure (its rows read as columns: Aᵀ, A when symmetric).
pub(super) fn col_pattern(a: &Csr) -> SymbolicSparseColMat<u32> {
    let ptr: Vec<u32> = a.row_ptr.iter().map(|&p| p as u32).collect();
    SymbolicSparseColMat::new_checked(a.n, a.n, ptr, None, a.cols.to_vec())
}

/// A's columns as a faer column structure (the CSR's rows are its rows), and for each of its
/// values the index of that value in `a` (to gather the values of each factorization).
pub(super) fn columns_of(a: &Csr) -> (SymbolicSparseColMat<u32>, Vec<u32>) {
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
pub(super) fn transpose_pattern(a: &Csr) -> SymbolicSparseColMat<u32> {
    columns_of(a).0
}

/// A Cholesky factorization in a fill-reducing order, with the matrix put in that order by us:
/// B = P A Pᵀ's lower triangle, gathered from the assembled A through a map made once per
/// pattern (faer would otherwise permute the whole matrix, pattern included, at every
/// factorization). B is factored in its own (identity) order.
#[derive(Clone)]
pub(super) struct Permuted {
    /// New index of each DOF: B[new(i), new(j)] = A[i, j].
    pub(super) new_of: Vec<u32>,
    /// B's lower triangle as a CSR of its columns (the form `col_pattern` reads), and that
    /// pattern as faer's.
    pub(super) b: Csr,
    pub(super) pattern: SymbolicSparseColMat<u32>,
    /// Per stored value of B, the index of its value in the assembled A.
    src: Vec<u32>,
    /// Right-hand side and solution in the new order.
    pub(super) work: Vec<f64>,
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
    pub(super) fn gather(&mut self, a: &Csr) {
        for (v, &k) in self.b.vals.iter_mut().zip(&self.src) {
            *v = a.vals[k as usize];
        }
    }
}

/// How a Cholesky factorization of `a` runs: in band storage (see [`crate::band`]) or
/// sparse (faer's supernodal factorization, with the matrix reordered by us for AMD).
pub(super) enum CholeskyPlan {
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
pub(super) fn cholesky_plan(a: &Csr, ordering: CholeskyOrdering) -> Result<CholeskyPlan, Fallback> {
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
        .map_err(|e| Fallback::Failed(FactorError::Symbolic(e)))
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
