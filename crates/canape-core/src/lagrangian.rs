//! Lagrangian constraints (SOFA's Sofa.Component.Constraint.Lagrangian): what constraint
//! components, constraint corrections and constraint solvers share with the simulation that
//! runs them in FreeMotionAnimationLoop's constraint stage.
//!
//! The stage (in `canape-simulation`) asks every [`LagrangianConstraint`] for its rows, its
//! violations at the free positions and its resolution blocks ([`ConstraintBuild`]), brings
//! rows on mapped states up to the independent states through the mappings' Jacobians, lets
//! each [`ConstraintCorrection`] add its compliance to W = J C Jᵀ, hands the problem to the
//! [`ConstraintSolver`], then turns the impulses λ into motion through the corrections.
//! Algorithms live in the component crates; this module only fixes the interfaces.

use crate::scene::ComponentId;

/// How the constraint solver treats one block of consecutive rows (SOFA's
/// ConstraintResolution subclasses).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Resolution {
    /// An equality on `rows` rows solved together, f −= W_block⁻¹ d
    /// (BilateralConstraintResolution, BilateralConstraintResolution3Dof).
    Bilateral { rows: u8 },
    /// A contact without friction: one row, f ≥ 0 (UnilateralConstraintResolution).
    Unilateral,
    /// A contact with Coulomb friction: normal row then two tangent rows
    /// (UnilateralConstraintResolutionWithFriction).
    Friction { mu: f64 },
    /// A contact with Coulomb friction solved by the augmented Lagrangian update: each pass
    /// moves the impulses by −ε times the violations (AugmentedLagrangianResolutionWithFriction).
    AugmentedFriction { mu: f64, epsilon: f64 },
    /// An equality on `rows` rows solved as one block by a factorization of its W block,
    /// f −= W_block⁻¹ d (BilateralConstraintResolutionNDof).
    BilateralBlock { rows: u32 },
}

impl Resolution {
    /// Number of rows of the block.
    pub fn rows(self) -> usize {
        match self {
            Resolution::Bilateral { rows } => rows as usize,
            Resolution::Unilateral => 1,
            Resolution::Friction { .. } | Resolution::AugmentedFriction { .. } => 3,
            Resolution::BilateralBlock { rows } => rows as usize,
        }
    }
}

/// One block of a problem: its first row, how it is resolved and, if non-zero, its own
/// convergence tolerance (SOFA's ConstraintResolution::getTolerance).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Block {
    pub first_row: usize,
    pub resolution: Resolution,
    pub tolerance: f64,
}

/// One non-zero of a constraint row: `value` on derivative scalar `dof` of side `side`
/// (0 or 1: the constraint's first or second state).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowEntry {
    pub row: u32,
    pub side: u8,
    pub dof: u32,
    pub value: f64,
}

/// What the constraints add to the problem in one step: rows numbered from 0 in the order the
/// constraints are visited (graph order), their violations at the free positions, the blocks
/// and the impulses to start from (warm start; zero unless a resolution keeps its last
/// impulses).
#[derive(Clone, Debug, Default)]
pub struct ConstraintBuild {
    pub entries: Vec<RowEntry>,
    pub dfree: Vec<f64>,
    pub blocks: Vec<Block>,
    pub initial: Vec<f64>,
}

impl ConstraintBuild {
    /// Number of rows so far.
    pub fn rows(&self) -> usize {
        self.dfree.len()
    }
    /// Start a block of `resolution` whose violations are `dfree` (one per row); returns the
    /// block's first row. Entries are then added with [`ConstraintBuild::entry`].
    pub fn block(&mut self, resolution: Resolution, dfree: &[f64], initial: &[f64]) -> usize {
        debug_assert_eq!(dfree.len(), resolution.rows());
        let first_row = self.rows();
        self.dfree.extend_from_slice(dfree);
        if initial.len() == dfree.len() {
            self.initial.extend_from_slice(initial);
        } else {
            self.initial.extend(std::iter::repeat_n(0.0, dfree.len()));
        }
        self.blocks.push(Block {
            first_row,
            resolution,
            tolerance: 0.0,
        });
        first_row
    }
    pub fn entry(&mut self, row: usize, side: u8, dof: usize, value: f64) {
        if value != 0.0 {
            self.entries.push(RowEntry {
                row: row as u32,
                side,
                dof: dof as u32,
                value,
            });
        }
    }
}

/// What the constraint stage solves for (SOFA's ConstraintParams order, set by
/// FreeMotionAnimationLoop's `solveVelocityConstraintFirst`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ConstraintOrder {
    /// Violations at the free positions; the corrections move positions and velocities
    /// (POS_AND_VEL, the default).
    #[default]
    PositionAndVelocity,
    /// Violations of velocities (the free velocity plus the positions' violation over dt); the
    /// corrections change velocities, and positions follow as x_t + dt·v (VEL).
    Velocity,
}

/// The free-motion vectors of a constraint's states (SOFA's ConstraintParams X and V:
/// freePosition, freeVelocity), and the positions at the start of the step.
pub struct ConstraintInputs<'a> {
    pub x_free: [&'a [f64]; 2],
    pub v_free: [&'a [f64]; 2],
    pub x: [&'a [f64]; 2],
    pub dt: f64,
    pub order: ConstraintOrder,
}

/// A Lagrangian constraint (SOFA's BaseLagrangianConstraint): Jacobian rows on one or two
/// states, their violation at the free positions and how each block is resolved.
pub trait LagrangianConstraint {
    /// The states its rows act on, after init (the second is `None` for a constraint on one
    /// state; a constraint whose states are unknown builds nothing).
    fn sides(&self) -> [Option<ComponentId>; 2];
    /// Append this step's rows, violations and blocks (rows numbered from `out.rows()`).
    fn build(&mut self, inputs: &ConstraintInputs<'_>, out: &mut ConstraintBuild);
    /// The impulses the solver found for the rows this constraint built, in the same order
    /// (SOFA's ConstraintResolution::store: warm starts for the next step).
    fn store(&mut self, _impulses: &[f64]) {}
    /// For a contact response: its place among the other contact responses (see
    /// `ContactResponse::set_order_key`); None for a constraint of the scene, which keeps its
    /// place in graph order.
    fn order_key(&self) -> Option<(u32, u32)> {
        None
    }
}

/// The sparse rows of the problem on one state (derivative scalars), in row order.
#[derive(Clone, Debug, Default)]
pub struct StateRows {
    /// (row, dof, value), sorted by row then dof.
    pub entries: Vec<(u32, u32, f64)>,
}

impl StateRows {
    /// The entries of each row as ranges: (row, start, end) into `entries`.
    pub fn row_ranges(&self) -> Vec<(usize, usize, usize)> {
        let mut out = Vec::new();
        let mut k = 0;
        while k < self.entries.len() {
            let r = self.entries[k].0;
            let start = k;
            while k < self.entries.len() && self.entries[k].0 == r {
                k += 1;
            }
            out.push((r as usize, start, k));
        }
        out
    }
}

/// The integration factors of the ODE solver integrating a state (SOFA's
/// OdeSolver::getPositionIntegrationFactor / getVelocityIntegrationFactor): a velocity change
/// Δv moves the position by `position`·Δv (EulerImplicit: dt and 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntegrationFactors {
    pub position: f64,
    pub velocity: f64,
}

/// How a constraint correction turns impulses into motion for one independent state (SOFA's
/// BaseConstraintCorrection). The simulation gives it the rows on its state.
pub trait ConstraintCorrection {
    /// The state it corrects (its context state), after init.
    fn state(&self) -> Option<ComponentId>;
    /// How its compliance is obtained.
    fn kind(&self) -> CorrectionKind;
    /// W += factor · J C Jᵀ over the rows on its state (`w` is n×n, row-major), for a
    /// diagonal compliance (UncoupledConstraintCorrection). `dof_size` is the state's
    /// derivative size.
    fn add_compliance(
        &self,
        _rows: &StateRows,
        _dof_size: usize,
        _factor: f64,
        _n: usize,
        _w: &mut [f64],
    ) {
    }
    /// corr = C · f for a force f on its state (derivative layout).
    fn apply_compliance(&self, _f: &[f64], _dof_size: usize, _corr: &mut [f64]) {}
    /// The factors that multiply a correction into position and velocity changes, given the
    /// ODE solver's (SOFA's useOdeSolverIntegrationFactors and the correction factors).
    fn factors(&self, ode: IntegrationFactors, _dt: f64) -> IntegrationFactors {
        ode
    }
    /// The factor of its compliance in W for a built problem (the position factor by default:
    /// W = dt·J C Jᵀ under EulerImplicit).
    fn w_factor(&self, ode: IntegrationFactors) -> f64 {
        ode.position
    }
}

/// Where a correction's compliance comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CorrectionKind {
    /// Its own per-DOF compliance (UncoupledConstraintCorrection).
    Uncoupled,
    /// The inverse of the state's solver-group system matrix, by linear solves
    /// (LinearSolverConstraintCorrection, GenericConstraintCorrection).
    LinearSolver,
}

/// The problem a constraint solver is given: n rows, W (n×n, row-major), the violations at
/// the free motion, the blocks, and the impulses (initial guess in, solution out).
#[derive(Clone, Debug, Default)]
pub struct ConstraintProblem {
    pub n: usize,
    pub w: Vec<f64>,
    pub dfree: Vec<f64>,
    pub blocks: Vec<Block>,
    pub force: Vec<f64>,
}

/// What a solve reports (SOFA's currentIterations, currentError).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConstraintStats {
    pub iterations: usize,
    pub error: f64,
    pub converged: bool,
    /// Why the solver gave no impulses at all, when it refused the problem (the simulation
    /// reports it once).
    pub refused: Option<&'static str>,
}

/// Whether the solver uses the whole W or only its diagonal blocks with displacements
/// updated constraint by constraint (SOFA's built and unbuilt constraint solvers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemForm {
    Built,
    Unbuilt,
}

/// A constraint solver (SOFA's ConstraintSolver: GenericConstraintSolver and its Gauss–Seidel,
/// unbuilt and NNCG variants, LCPConstraintSolver).
pub trait ConstraintSolver {
    fn form(&self) -> ProblemForm {
        ProblemForm::Built
    }
    /// Solve for the impulses in `problem.force` (starting from its content).
    fn solve(&mut self, problem: &mut ConstraintProblem) -> ConstraintStats;
}
