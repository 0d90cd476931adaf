//! PCGLinearSolver (SOFA's old name ShewchukPCGLinearSolver) with Jacobi, BlockJacobi, SSOR and
//! Warp preconditioners or a direct solver as preconditioner (the warp one without rotation),
//! and MinResLinearSolver.
//!
//! Formulations follow Sofa/Component/LinearSolver/Iterative/.../PCGLinearSolver.inl and
//! MinResLinearSolver.inl, and Sofa/Component/LinearSolver/Preconditioner/…: both start from the
//! previous step's solution (warm start); PCG stops when r·P(r) ≤ tolerance·b·b; the
//! preconditioner reads the assembled, projected system matrix, rebuilt every `assemblingRate`
//! solves (PreconditionedMatrixFreeSystem). In Canapé the preconditioner components are
//! configuration read by the PCG at init; the PCG owns the preconditioner's data.

use canape_core::component::{LinearSystem, Reaction, SolveStats};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Int, Real, Text, Words};
use canape_core::matrix::Csr;
use canape_core::registry::TemplateError;
use canape_core::scene::InitContext;
use canape_types::Mat3;

use crate::direct::DirectSolver;

/// A preconditioner built from the assembled system matrix.
#[derive(Clone, Debug)]
pub enum Preconditioner {
    /// z_i = r_i / A_ii
    Jacobi { inv_diag: Vec<f64> },
    /// z = B⁻¹ r per 3×3 diagonal block
    BlockJacobi { inv_blocks: Vec<Mat3> },
    /// symmetric Gauss–Seidel / SSOR sweeps on the scalar CSR matrix
    Ssor {
        a: Csr,
        inv_diag: Vec<f64>,
        /// Per row: where its entries right of the diagonal start, and where its diagonal
        /// entry (or the first of them, when it has none) is: the two sweeps read only their
        /// half of each row.
        upper_start: Vec<u32>,
        lower_end: Vec<u32>,
        omega: f64,
    },
}

/// `a` with the columns of every row in ascending order (a copy either way).
fn sorted_rows(a: &Csr) -> Csr {
    let mut b = a.clone();
    let ascending = (0..a.n).all(|j| {
        a.cols[a.row_ptr[j]..a.row_ptr[j + 1]]
            .windows(2)
            .all(|w| w[0] < w[1])
    });
    if !ascending {
        let mut cols = a.cols.to_vec();
        for j in 0..a.n {
            let (s, e) = (a.row_ptr[j], a.row_ptr[j + 1]);
            let mut row: Vec<(u32, f64)> = (s..e).map(|k| (a.cols[k], a.vals[k])).collect();
            row.sort_by_key(|&(c, _)| c);
            for (k, (c, v)) in (s..e).zip(row) {
                cols[k] = c;
                b.vals[k] = v;
            }
        }
        b.cols = cols.into();
    }
    b
}

/// Σ vals[k] z[cols[k]] over a row's entries, in four partial sums combined in a fixed order:
/// the entries by fours from the end when `backward` (the last four first), else from the
/// start, and those left over (the entries next to the diagonal, whose z the sweep has just
/// computed) last. One running sum would chain every product of the row to the one before.
#[inline(always)]
fn row_sum(vals: &[f64], cols: &[u32], z: &[f64], backward: bool) -> f64 {
    let mut acc = [0.0f64; 4];
    let mut add4 = |v: &[f64], c: &[u32]| {
        for l in 0..4 {
            acc[l] += v[l] * z[c[l] as usize];
        }
    };
    let (rest_v, rest_c) = if backward {
        let (vc, cc) = (vals.rchunks_exact(4), cols.rchunks_exact(4));
        let rest = (vc.remainder(), cc.remainder());
        vc.zip(cc).for_each(|(v, c)| add4(v, c));
        rest
    } else {
        let (vc, cc) = (vals.chunks_exact(4), cols.chunks_exact(4));
        let rest = (vc.remainder(), cc.remainder());
        vc.zip(cc).for_each(|(v, c)| add4(v, c));
        rest
    };
    for (l, (v, &c)) in rest_v.iter().zip(rest_c).enumerate() {
        acc[l] += v * z[c as usize];
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// Which preconditioner to build (from the scene's component).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PreconditionerKind {
    Jacobi,
    BlockJacobi,
    Ssor {
        omega: f64,
    },
    /// WarpPreconditioner: P(r) = R A⁻¹ Rᵀ r with A factored by a direct solver when the
    /// preconditioner is rebuilt. R is the RotationMatrixSystem's matrix, the identity when it
    /// reassembles A every time (assemblingRate 1: SOFA's RotationMatrixSystem.inl sets it to
    /// the identity when it assembles its main system), which is the only case Canapé runs.
    Warp,
}

/// Direct solver classes a WarpPreconditioner can use.
/// The preconditioner components PCG's `preconditioner` link may name (besides the direct
/// solvers of `WARP_SOLVERS`).
const PRECONDITIONERS: &[&str] = &[
    "JacobiPreconditioner",
    "BlockJacobiPreconditioner",
    "SSORPreconditioner",
    "WarpPreconditioner",
];

const WARP_SOLVERS: &[&str] = &[
    "SparseLDLSolver",
    "AsyncSparseLDLSolver",
    "EigenSimplicialLDLT",
    "EigenSimplicialLLT",
    "EigenSparseLU",
    "EigenSparseQR",
];

impl Preconditioner {
    pub fn build(kind: PreconditionerKind, a: &Csr) -> Preconditioner {
        let diag: Vec<f64> = (0..a.n).map(|i| a.get(i, i)).collect();
        match kind {
            PreconditionerKind::Jacobi => Preconditioner::Jacobi {
                inv_diag: diag.iter().map(|d| 1.0 / d).collect(),
            },
            PreconditionerKind::BlockJacobi => {
                let nb = a.n / 3;
                let mut blocks = vec![Mat3::zeros(); nb];
                for r in 0..nb * 3 {
                    for k in a.row_ptr[r]..a.row_ptr[r + 1] {
                        let c = a.cols[k] as usize;
                        if c / 3 == r / 3 {
                            blocks[r / 3][(r % 3, c % 3)] += a.vals[k];
                        }
                    }
                }
                let inv_blocks = blocks
                    .into_iter()
                    .map(|b| {
                        b.try_inverse()
                            .unwrap_or_else(|| Mat3::from_element(f64::NAN))
                    })
                    .collect();
                Preconditioner::BlockJacobi { inv_blocks }
            }
            PreconditionerKind::Ssor { omega } => {
                // the sweeps split each row at its diagonal: columns must ascend (they do in an
                // assembled CSR; any other is sorted here)
                let a = sorted_rows(a);
                let (mut upper_start, mut lower_end) = (Vec::new(), Vec::new());
                for j in 0..a.n {
                    let (s, e) = (a.row_ptr[j], a.row_ptr[j + 1]);
                    let row = &a.cols[s..e];
                    lower_end.push((s + row.partition_point(|&c| (c as usize) < j)) as u32);
                    upper_start.push((s + row.partition_point(|&c| (c as usize) <= j)) as u32);
                }
                Preconditioner::Ssor {
                    a,
                    inv_diag: diag.iter().map(|d| 1.0 / d).collect(),
                    upper_start,
                    lower_end,
                    omega,
                }
            }
            PreconditionerKind::Warp => unreachable!("the warp preconditioner is a direct solver"),
        }
    }

    /// z = P(r)
    pub fn apply(&self, r: &[f64], z: &mut [f64]) {
        match self {
            Preconditioner::Jacobi { inv_diag } => {
                for i in 0..r.len() {
                    z[i] = inv_diag[i] * r[i];
                }
            }
            Preconditioner::BlockJacobi { inv_blocks } => {
                for (n, b) in inv_blocks.iter().enumerate() {
                    for j in 0..3 {
                        // SOFA multiplies with transposed indexing (same result: blocks are symmetric)
                        z[3 * n + j] = (0..3).map(|i| b[(i, j)] * r[3 * n + i]).sum();
                    }
                }
            }
            Preconditioner::Ssor {
                a,
                inv_diag,
                upper_start,
                lower_end,
                omega,
            } => {
                let n = a.n;
                for j in (0..n).rev() {
                    // the entries right of the diagonal (z already computed there)
                    let range = upper_start[j] as usize..a.row_ptr[j + 1];
                    let s = row_sum(&a.vals[range.clone()], &a.cols[range], z, true);
                    z[j] = (r[j] - s) * omega * inv_diag[j];
                }
                for j in 0..n {
                    let range = a.row_ptr[j]..lower_end[j] as usize;
                    let s = row_sum(&a.vals[range.clone()], &a.cols[range], z, false);
                    z[j] -= s * omega * inv_diag[j];
                }
                if *omega != 1.0 {
                    z.iter_mut().for_each(|v| *v *= 2.0 - omega);
                }
            }
        }
    }
}

canape_core::data_schema! {
    /// PCGLinearSolver's Data.
    pub struct PcgData {
        print_log: Flag = ("printLog", DataKind::Bool, "0", "if true, emits extra messages at runtime."),
        tags: Words = ("tags", DataKind::Words, "", "list of the subsets the object belongs to"),
        listening: Flag = ("listening", DataKind::Bool, "0", "if true, handle the events, otherwise ignore the events"),
        iterations: Int = ("iterations", DataKind::Int, "25", "Maximum number of iterations after which the iterative descent of the Conjugate Gradient must stop"),
        tolerance: Real = ("tolerance", DataKind::Real, "1e-5", "Desired accuracy of the Conjugate Gradient solution evaluating: |r|²/|b|² (ratio of current residual norm over initial residual norm)"),
        use_precond: Flag = ("use_precond", DataKind::Bool, "1", "Use a preconditioner"),
        preconditioner: Text = ("preconditioner", DataKind::Str, "", "Link towards the linear solver used to precondition the conjugate gradient"),
        update_step: Int = ("update_step", DataKind::Int, "1", "Deprecated: number of steps before the next refresh of the preconditioner (now PreconditionedMatrixFreeSystem.assemblingRate)"),
        build_precond: Flag = ("build_precond", DataKind::Bool, "1", "Deprecated: build the preconditioner"),
        graph: Words = ("graph", DataKind::Words, "", "Graph of residuals at each iteration"),
        linear_system: Text = ("linearSystem", DataKind::Str, "", "The linear system to solve"),
    }
}

/// PCGLinearSolver.
#[derive(Clone)]
pub struct PcgLinearSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: PcgData,
    max_iter: usize,
    tolerance: f64,
    kind: Option<PreconditionerKind>,
    rate: u32,
    counter: u32,
    /// The solve under way repeats the last one's system (`solve_again`): the preconditioner
    /// is kept and the solve does not count towards its rebuild.
    again: bool,
    pre: Option<Preconditioner>,
    /// WarpPreconditioner's direct solver (a copy of the linked one's configuration).
    warp: Option<Box<DirectSolver>>,
    r: Vec<f64>,
    w: Vec<f64>,
    s: Vec<f64>,
}

impl PcgLinearSolver {
    pub fn new(template: &str) -> Result<Self, TemplateError> {
        if !(template.is_empty() || template == "GraphScattered") {
            return Err(TemplateError::MatrixNotAvailableUse {
                template: template.to_string(),
                class: "PCGLinearSolver".to_string(),
                advice: "matrix-free GraphScattered only, as in SOFA",
            });
        }
        let (data, d) = PcgData::declare(DataTable::new());
        Ok(PcgLinearSolver {
            data,
            d,
            max_iter: 25,
            tolerance: 1e-5,
            kind: None,
            rate: 1,
            counter: 1,
            again: false,
            pre: None,
            warp: None,
            r: Vec::new(),
            w: Vec::new(),
            s: Vec::new(),
        })
    }

    /// Take the iteration count and the tolerance from the Data.
    fn read_criteria(&mut self) {
        self.max_iter = self.data.get(self.d.iterations).max(0) as usize;
        self.tolerance = self.data.get(self.d.tolerance);
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.read_criteria();
        self.kind = None;
        let link = self.data.get(self.d.preconditioner).trim().to_string();
        let accepted: Vec<&str> = PRECONDITIONERS
            .iter()
            .chain(WARP_SOLVERS)
            .copied()
            .collect();
        match ctx.link_class(
            "preconditioner",
            &link,
            &accepted,
            "a preconditioner (JacobiPreconditioner, BlockJacobiPreconditioner, SSORPreconditioner, WarpPreconditioner) or a direct solver",
        ) {
            Ok(Some(c)) => {
                let comp = ctx.scene.component(c);
                self.kind = match comp.map(|c| (c.class_name(), c.data().real("omega"))) {
                    Some(("JacobiPreconditioner", _)) => Some(PreconditionerKind::Jacobi),
                    Some(("BlockJacobiPreconditioner", _)) => Some(PreconditionerKind::BlockJacobi),
                    Some(("SSORPreconditioner", omega)) => Some(PreconditionerKind::Ssor { omega }),
                    Some(("WarpPreconditioner", _)) => {
                        self.warp = warp_solver(ctx, c);
                        self.warp.is_some().then_some(PreconditionerKind::Warp)
                    }
                    // a direct solver as preconditioner (SOFA's PCG calls its solve on the
                    // assembled matrix): the warp preconditioner without rotation
                    Some(_) => {
                        self.warp = direct_copy(ctx, c, "PCGLinearSolver preconditioner");
                        self.warp.is_some().then_some(PreconditionerKind::Warp)
                    }
                    None => None,
                };
            }
            Ok(None) => {}
            Err(e) => ctx.error(e.to_string()),
        }
        if !self.data.get(self.d.use_precond) {
            self.kind = None;
        }
        // the assembling rate of the PreconditionedMatrixFreeSystem in this node, if any
        let node = ctx.node;
        self.rate = ctx
            .scene
            .node(node)
            .components
            .iter()
            .find(|c| ctx.scene.info(**c).class == "PreconditionedMatrixFreeSystem")
            .and_then(|c| ctx.scene.component(*c))
            .map(|c| c.data().int("assemblingRate").max(1) as u32)
            .unwrap_or(1);
        self.counter = self.rate;
        self.pre = None;
    }

    /// An edit of the iteration count or the tolerance is taken in place; as after init, the
    /// next solve rebuilds the preconditioner (so that the edited solver solves as one
    /// initialised with the new values). Other Data (the preconditioner) re-run init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        if !changed.only(&[d.iterations.index(), d.tolerance.index()]) {
            return Reaction::Reinit;
        }
        self.read_criteria();
        self.restart_impl();
        Reaction::Updated
    }
}

/// The direct solver a WarpPreconditioner (component `c`) factors with: its `linearSolver` link,
/// else the first direct solver in its node (as SOFA's bwdInit takes the first local one).
fn warp_solver(
    ctx: &mut InitContext<'_>,
    c: canape_core::scene::ComponentId,
) -> Option<Box<DirectSolver>> {
    let comp = ctx.scene.component(c)?;
    let link = comp.data().str("linearSolver").trim().to_string();
    let node = ctx.scene.info(c).node;
    let target = if link.is_empty() {
        ctx.scene
            .node(node)
            .components
            .iter()
            .copied()
            .find(|&s| WARP_SOLVERS.contains(&ctx.scene.info(s).class))
    } else {
        match ctx.link_class("linearSolver", &link, WARP_SOLVERS, "a direct solver") {
            Ok(s) => s,
            Err(e) => {
                ctx.error(format!("WarpPreconditioner: {e}"));
                return None;
            }
        }
    };
    let Some(s) = target else {
        ctx.error(
            "WarpPreconditioner: no direct linear solver (linearSolver link, or one in its node)",
        );
        return None;
    };
    let solver = direct_copy(ctx, s, "WarpPreconditioner")?;
    // RotationMatrixSystem: rotations between assemblies are not simulated
    let rate = ctx
        .scene
        .node(node)
        .components
        .iter()
        .find(|&&o| ctx.scene.info(o).class == "RotationMatrixSystem")
        .and_then(|&o| ctx.scene.component(o))
        .map(|o| o.data().int("assemblingRate"));
    if let Some(r) = rate.filter(|&r| r > 1) {
        ctx.warn(format!("RotationMatrixSystem assemblingRate = {r}: Canapé does not rotate the factored matrix between assemblies; the warp preconditioner is refactored whenever the PCG rebuilds its preconditioner (same solution, different cost)"));
    }
    Some(solver)
}

/// A direct solver of the configuration of component `s` (its class and its node's ordering),
/// owned by a preconditioner; `who` names the user in diagnostics.
fn direct_copy(
    ctx: &mut InitContext<'_>,
    s: canape_core::scene::ComponentId,
    who: &str,
) -> Option<Box<DirectSolver>> {
    let class = ctx.scene.info(s).class;
    let Some(&class) = WARP_SOLVERS.iter().find(|k| **k == class) else {
        ctx.error(format!(
            "{who}: '{class}' is not a direct solver it can use ({})",
            WARP_SOLVERS.join(", ")
        ));
        return None;
    };
    let mut solver = match DirectSolver::new(class, "") {
        Ok(d) => d,
        Err(e) => {
            ctx.error(format!("{who}: {e}"));
            return None;
        }
    };
    solver.set_ordering(crate::direct::ordering_in(ctx, ctx.scene.info(s).node));
    Some(Box::new(solver))
}

canape_core::impl_component!(PcgLinearSolver, "PCGLinearSolver", init, data_changed);

solve_with_avx2!(PcgLinearSolver, again);

impl PcgLinearSolver {
    /// `solve_again` on `m` right-hand sides (row by row) when its answer is the direct
    /// preconditioner's factor of the last system (rebuilt at every solve): all at once.
    fn solve_again_many_by_factor(
        &mut self,
        b: &[f64],
        x: &mut [f64],
        m: usize,
    ) -> Option<SolveStats> {
        if self.rate != 1 || self.kind != Some(PreconditionerKind::Warp) {
            return None;
        }
        let w = self.warp.as_mut().filter(|w| w.has_factor())?;
        w.solve_factored_many(b, x, m);
        Some(SolveStats {
            iterations: 1,
            residual: 0.0,
        })
    }
}

impl PcgLinearSolver {
    /// `compliance_again` when `solve_again`'s answer is the direct preconditioner's factor of
    /// the last system (see [`Self::solve_again_many_by_factor`]) and that factor has a
    /// compliance of its own (a band Cholesky factor's forward substitutions).
    fn compliance_by_factor(&mut self, b: &[f64], m: usize, w: &mut [f64]) -> Option<SolveStats> {
        if self.rate != 1 || self.kind != Some(PreconditionerKind::Warp) {
            return None;
        }
        let d = self.warp.as_mut().filter(|d| d.has_factor())?;
        d.compliance_factored(b, m, w).then_some(SolveStats {
            iterations: 1,
            residual: 0.0,
        })
    }
}

impl PcgLinearSolver {
    /// The next solve rebuilds the preconditioner from the matrix of that step.
    fn restart_impl(&mut self) {
        self.counter = self.rate;
    }

    #[inline(always)]
    fn solve_impl(&mut self, sys: &mut dyn LinearSystem, b: &[f64], x: &mut [f64]) -> SolveStats {
        let n = sys.size();
        // solving again with the last system when the preconditioner is a factorization of
        // that system's matrix (a direct solver or the warp one, rebuilt at every solve): its
        // inverse is the answer (SOFA's LinearSolverConstraintCorrection applies the linked
        // direct solver's factorization in the same way)
        if self.again && self.rate == 1 {
            if let (Some(PreconditionerKind::Warp), Some(w)) = (self.kind, self.warp.as_mut()) {
                if w.has_factor() {
                    w.solve_factored(b, x);
                    return SolveStats {
                        iterations: 1,
                        residual: 0.0,
                    };
                }
            }
        }
        if let Some(kind) = self.kind {
            let built = self.pre.is_some() || self.warp.as_ref().is_some_and(|w| w.has_factor());
            if !self.again {
                self.counter += 1;
            }
            if (!self.again && self.counter >= self.rate) || !built {
                match (kind, self.warp.as_mut()) {
                    (PreconditionerKind::Warp, Some(w)) => w.factorize(sys),
                    _ => {
                        let a = match kind {
                            PreconditionerKind::Jacobi | PreconditionerKind::BlockJacobi => {
                                sys.assemble_block_diagonal()
                            }
                            _ => sys.assemble(),
                        };
                        self.pre = Some(Preconditioner::build(kind, &a));
                    }
                }
                self.counter = 0;
            }
        }
        self.r.resize(n, 0.0);
        self.w.resize(n, 0.0);
        self.s.resize(n, 0.0);
        let (r, w, s) = (&mut self.r, &mut self.w, &mut self.s);
        let bb = sys.dot(b, b);
        let tol = self.tolerance * bb;
        sys.apply(x, r);
        for (ri, bi) in r.iter_mut().zip(b) {
            *ri = bi - *ri;
        }
        let (kind, pre, mut warp) = (self.kind, self.pre.as_ref(), self.warp.as_deref_mut());
        let mut precondition = |v: &[f64], z: &mut [f64]| match (kind, pre, warp.as_mut()) {
            (Some(PreconditionerKind::Warp), _, Some(d)) => d.solve_factored(v, z),
            (Some(_), Some(p), _) => p.apply(v, z),
            _ => z.copy_from_slice(v),
        };
        precondition(r, w);
        let mut rz = sys.dot(r, w);
        let mut it = 1;
        let mut stats = SolveStats::default();
        while it <= self.max_iter && rz > tol {
            sys.apply(w, s);
            let alpha = rz / sys.dot(w, s);
            for ((xi, ri), (wi, si)) in x.iter_mut().zip(r.iter_mut()).zip(w.iter().zip(s.iter())) {
                *xi += alpha * wi;
                *ri -= alpha * si;
            }
            precondition(r, s);
            let rz_old = rz;
            rz = sys.dot(r, s);
            let beta = rz / rz_old;
            for (wi, si) in w.iter_mut().zip(s.iter()) {
                *wi = si + beta * *wi;
            }
            stats.iterations = it;
            it += 1;
        }
        if !rz.is_finite() {
            // NaN or infinite values: no solution (a non-finite state stops the run)
            x.iter_mut().for_each(|v| *v = f64::NAN);
        }
        stats.residual = if bb > 0.0 {
            (rz.abs() / bb).sqrt()
        } else {
            0.0
        };
        stats
    }
}

canape_core::data_schema! {
    /// MinResLinearSolver's Data.
    pub struct MinResData {
        print_log: Flag = ("printLog", DataKind::Bool, "0", "if true, emits extra messages at runtime."),
        tags: Words = ("tags", DataKind::Words, "", "list of the subsets the object belongs to"),
        listening: Flag = ("listening", DataKind::Bool, "0", "if true, handle the events, otherwise ignore the events"),
        iterations: Int = ("iterations", DataKind::Int, "25", "maximum number of iterations of the Conjugate Gradient solution"),
        tolerance: Real = ("tolerance", DataKind::Real, "1e-5", "desired precision of the Conjugate Gradient Solution (ratio of current residual norm over initial residual norm)"),
        graph: Words = ("graph", DataKind::Words, "", "Graph of residuals at each iteration"),
        linear_system: Text = ("linearSystem", DataKind::Str, "", "The linear system to solve"),
    }
}

/// MinResLinearSolver: MINRES (tminres) without preconditioner, warm-started.
#[derive(Clone)]
pub struct MinResLinearSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: MinResData,
    max_iter: usize,
    tolerance: f64,
}

impl MinResLinearSolver {
    pub fn new(template: &str) -> Result<Self, TemplateError> {
        if !(template.is_empty()
            || template == "GraphScattered"
            || template.starts_with("CompressedRowSparseMatrix"))
        {
            return Err(TemplateError::MatrixNotAvailable {
                template: template.to_string(),
                class: "MinResLinearSolver".to_string(),
            });
        }
        let (data, d) = MinResData::declare(DataTable::new());
        Ok(MinResLinearSolver {
            data,
            d,
            max_iter: 25,
            tolerance: 1e-5,
        })
    }

    /// Take the iteration count and the tolerance from the Data.
    fn read_criteria(&mut self) {
        self.max_iter = self.data.get(self.d.iterations).max(0) as usize;
        self.tolerance = self.data.get(self.d.tolerance);
    }

    fn init_impl(&mut self, _ctx: &mut InitContext<'_>) {
        self.read_criteria();
    }

    /// Nothing is carried from one solve to the next: an edit of the iteration count or the
    /// tolerance is taken in place; other Data re-run init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        if !changed.only(&[d.iterations.index(), d.tolerance.index()]) {
            return Reaction::Reinit;
        }
        self.read_criteria();
        Reaction::Updated
    }
}

canape_core::impl_component!(MinResLinearSolver, "MinResLinearSolver", init, data_changed);

solve_with_avx2!(MinResLinearSolver);

impl MinResLinearSolver {
    /// Nothing is carried from one solve to the next.
    fn restart_impl(&mut self) {}
}

impl MinResLinearSolver {
    #[inline(always)]
    fn solve_impl(&mut self, sys: &mut dyn LinearSystem, b: &[f64], x: &mut [f64]) -> SolveStats {
        let n = sys.size();
        let eps = f64::EPSILON;
        let mut r1 = vec![0.0; n];
        sys.apply(x, &mut r1);
        for (ri, bi) in r1.iter_mut().zip(b) {
            *ri = bi - *ri;
        }
        let mut beta1 = sys.dot(&r1, &r1);
        let mut stats = SolveStats::default();
        if beta1 <= 0.0 {
            return stats;
        }
        beta1 = beta1.sqrt();
        let mut y = r1.clone();
        let mut r2 = vec![0.0; n];
        let mut v = vec![0.0; n];
        let mut w = vec![0.0; n];
        let mut w2 = vec![0.0; n];
        let (mut oldb, mut beta, mut dbar, mut epsln, mut phibar, mut tnorm2) =
            (0.0, beta1, 0.0, 0.0, beta1, 0.0);
        let (mut cs, mut sn, mut gmax, mut gmin) = (-1.0f64, 0.0f64, 0.0f64, f64::MAX);
        for itn in 0..self.max_iter {
            r2.copy_from_slice(&y);
            let s = 1.0 / beta;
            for (vi, yi) in v.iter_mut().zip(&y) {
                *vi = yi * s;
            }
            sys.apply(&v, &mut y);
            if itn > 0 {
                let f = beta / oldb;
                for (yi, ri) in y.iter_mut().zip(&r1) {
                    *yi -= f * ri;
                }
            }
            let alpha = sys.dot(&v, &y);
            let f = alpha / beta;
            for (yi, ri) in y.iter_mut().zip(&r2) {
                *yi -= f * ri;
            }
            // r1 := the previous y (saved in r2 at the top of the iteration); r2 is refilled there
            std::mem::swap(&mut r1, &mut r2);
            oldb = beta;
            beta = sys.dot(&y, &y);
            // (a NaN or infinite value never converges: stop)
            if !beta.is_finite() {
                x.iter_mut().for_each(|v| *v = f64::NAN);
                break;
            }
            if beta < 0.0 {
                break;
            }
            beta = beta.sqrt();
            tnorm2 += alpha * alpha + oldb * oldb + beta * beta;
            let oldeps = epsln;
            let delta = cs * dbar + sn * alpha;
            let gbar = sn * dbar - cs * alpha;
            epsln = sn * beta;
            dbar = -cs * beta;
            let root = (gbar * gbar + dbar * dbar).sqrt();
            let gamma = (gbar * gbar + beta * beta).sqrt().max(eps);
            let denom = 1.0 / gamma;
            cs = gbar * denom;
            sn = beta * denom;
            let phi = cs * phibar;
            phibar *= sn;
            std::mem::swap(&mut w, &mut w2);
            for ((wi, w2i), vi) in w.iter_mut().zip(&w2).zip(&v) {
                *wi = (*wi * (-oldeps) - delta * w2i + vi) * denom;
            }
            for (xi, wi) in x.iter_mut().zip(&w) {
                *xi += phi * wi;
            }
            stats.iterations = itn + 1;
            if itn == 0 && beta / beta1 < 10.0 * eps {
                break;
            }
            let anorm = tnorm2.sqrt();
            let ynorm = sys.dot(x, x).sqrt();
            let test1 = phibar / (anorm * ynorm);
            gmax = gmax.max(gamma);
            gmin = gmin.min(gamma);
            let test2 = root / anorm;
            stats.residual = test1;
            if test1 <= 0.0
                || test2 <= 0.0
                || itn + 1 >= self.max_iter
                || gmax / gmin >= 0.1 / eps
                || anorm * eps * ynorm >= beta1
                || test2 <= self.tolerance
                || test1 <= self.tolerance
            {
                break;
            }
        }
        stats
    }
}

#[cfg(test)]
mod tests;
