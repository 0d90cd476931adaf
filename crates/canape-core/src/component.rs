//! Component role traits. A component plays exactly one role in its node (SOFA's Node slots):
//! state, mass, force field, projective constraint, ODE solver, linear solver, topology,
//! topological mapping, engine, loader, mapping, or "other" (animation loop, visual, collision,
//! plugins). Every role trait extends [`Component`], which gives reflective access to Data.
//!
//! Dynamic dispatch happens once per component per operation: role methods take whole state
//! vectors (flat `f64` slices) and loop over elements internally.

use crate::data::{ChangedData, DataTable, Value};
use crate::matrix::MatrixSink;
use crate::mesh::Mesh;
use crate::scene::InitContext;
use crate::state::{MechanicalObject, VecId};
use canape_types::Vec3;

/// How a component took an edit of its Data ([`Component::data_changed`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reaction {
    /// Updated in place from the changed Data; nothing else to redo.
    Updated,
    /// Re-initialise the component from all its Data.
    Reinit,
    /// The new values are invalid (why); the previous ones are put back.
    Refused(Vec<String>),
}

/// Base of every component: class name, Data table, initialisation.
pub trait Component: Send {
    /// SOFA class name (`TetrahedronFEMForceField`).
    fn class_name(&self) -> &'static str;
    fn data(&self) -> &DataTable;
    fn data_mut(&mut self) -> &mut DataTable;
    /// Current value of a Data, as seen through a link (live values may differ from the table).
    fn read_data(&self, name: &str) -> Option<Value> {
        self.data().value(name).cloned()
    }
    /// Initialise from Data and context. Problems are reported through `ctx`.
    fn init(&mut self, _ctx: &mut InitContext<'_>) {}
    /// Some of this component's Data were edited while the simulation runs (`changed`, never
    /// empty): update what depends on them in place and say [`Reaction::Updated`], refuse the
    /// new values ([`Reaction::Refused`]: they are put back), or ask to be re-initialised from
    /// all its Data ([`Reaction::Reinit`], the default, SOFA's `reinit`).
    fn data_changed(&mut self, _changed: &ChangedData) -> Reaction {
        Reaction::Reinit
    }
    /// The Rust type implementing the class (its module path tells where its code is).
    fn type_name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
}

/// The role a component plays in its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    State,
    Mass,
    ForceField,
    ProjectiveConstraint,
    OdeSolver,
    LinearSolver,
    Topology,
    TopologicalMapping,
    Engine,
    Loader,
    Mapping,
    AnimationLoop,
    Controller,
    Visual,
    Collision,
    /// Lagrangian constraints, their corrections and solvers.
    Constraint,
    Other,
}

/// Boxed components of every role can be cloned (a simulation is cloned component by
/// component): each role trait has a `…Clone` supertrait, implemented for every `Clone` type.
macro_rules! role_clone {
    ($role:ident, $helper:ident) => {
        #[doc = concat!("Clone a boxed [`", stringify!($role), "`] (implemented for every `Clone` type).")]
        pub trait $helper {
            fn clone_boxed(&self) -> Box<dyn $role>;
        }
        impl<T: $role + Clone + 'static> $helper for T {
            fn clone_boxed(&self) -> Box<dyn $role> {
                Box::new(self.clone())
            }
        }
        impl Clone for Box<dyn $role> {
            fn clone(&self) -> Self {
                self.as_ref().clone_boxed()
            }
        }
    };
}
role_clone!(Mass, MassClone);
role_clone!(ForceField, ForceFieldClone);
role_clone!(ProjectiveConstraint, ProjectiveConstraintClone);
role_clone!(LinearSolver, LinearSolverClone);
role_clone!(OdeSolver, OdeSolverClone);
role_clone!(Topology, TopologyClone);
role_clone!(TopologicalMapping, TopologicalMappingClone);
role_clone!(Engine, EngineClone);
role_clone!(Loader, LoaderClone);
role_clone!(Mapping, MappingClone);
role_clone!(AnimationLoop, AnimationLoopClone);
role_clone!(Controller, ControllerClone);
role_clone!(Passive, PassiveClone);

/// A mass: gravity force, M·dx products and assembled M.
pub trait Mass: Component + MassClone {
    /// f += M g (gravity of the node's context).
    fn add_gravity_force(&self, f: &mut [f64], gravity: &Vec3);
    /// res += factor · M dx
    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64);
    /// Add factor · M into an assembled matrix, at scalar offset `offset`.
    fn add_m_to_matrix(&self, m: &mut dyn MatrixSink, factor: f64, offset: usize);
    /// Rayleigh mass coefficient of this mass component (0 unless set).
    fn rayleigh_mass(&self) -> f64 {
        0.0
    }
    /// Whether M is diagonal (then M⁻¹ is applied without a linear solver).
    fn is_diagonal(&self) -> bool {
        false
    }
    /// Whether gravity is added to velocities by the solver (`separateGravity`) instead of as a force.
    fn separate_gravity(&self) -> bool {
        false
    }
    /// Kinetic energy ½ vᵀ M v.
    fn kinetic_energy(&self, v: &[f64]) -> f64 {
        let mut mv = vec![0.0; v.len()];
        self.add_mdx(&mut mv, v, 1.0);
        0.5 * mv.iter().zip(v).map(|(a, b)| a * b).sum::<f64>()
    }
}

/// The two states an interaction force field acts on (SOFA's PairInteractionForceField: springs
/// with `object1` and `object2`). Its vectors are then the concatenation of both states' vectors,
/// `first`'s then `second`'s (positions: coordinates; velocities, forces, dx: derivatives); the
/// solver gathers them and scatters the forces back, and its matrix's off-diagonal blocks couple
/// the two states. With `second_passive`, the second state is only read (moving anchors, as
/// RestShapeSpringsForceField's `external_rest_shape`): its forces are dropped and its dx is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interaction {
    pub first: crate::scene::ComponentId,
    pub second: crate::scene::ComponentId,
    pub second_passive: bool,
}

/// A force field acting on its node's state, or on two states ([`ForceField::interaction`]).
pub trait ForceField: Component + ForceFieldClone {
    /// The two states this force field couples, when it is an interaction force field between
    /// different states (known after init). `None`: it acts on its context state.
    fn interaction(&self) -> Option<Interaction> {
        None
    }
    /// f += F(x, v). May cache per-element quantities (rotations) used by later calls.
    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]);
    /// The time of the step about to be solved (SOFA's context time during the step: its
    /// start), given before the step; time-dependent loads read it.
    fn set_time(&mut self, _t: f64) {}
    /// df += k_factor · K dx  (K = ∂F/∂x, from the last `add_force`).
    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64);
    /// Add k_factor · K into an assembled matrix at scalar offset `offset`.
    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize);
    /// df += b_factor · B dx, with B = ∂F/∂v the damping matrix (0 for most force fields).
    fn add_bdx(&mut self, _dx: &[f64], _df: &mut [f64], _b_factor: f64) {}
    /// Add b_factor · B into an assembled matrix at scalar offset `offset` (`n` scalars of the
    /// state).
    fn add_b_to_matrix(&self, _m: &mut dyn MatrixSink, _b_factor: f64, _offset: usize, _n: usize) {}
    /// Rayleigh stiffness coefficient of this force field component (0 unless set).
    fn rayleigh_stiffness(&self) -> f64 {
        0.0
    }
    /// Potential energy, where defined.
    fn potential_energy(&self, _x: &[f64]) -> Option<f64> {
        None
    }
    /// How many elements the last `add_force` found inverted (volume ratio J ≤ 0), for force
    /// fields that compute J anyway (hyperelastic laws): the simulation reports the first step
    /// where this happens, naming the component.
    fn inverted_elements(&self) -> usize {
        0
    }
    /// Whether this force field also carries a mass (SOFA's *ForceFieldAndMass components).
    fn has_mass(&self) -> bool {
        false
    }
    /// res += factor · M dx, for force fields that carry a mass.
    fn add_mdx(&self, _res: &mut [f64], _dx: &[f64], _factor: f64) {}
    /// Add factor · M into an assembled matrix, for force fields that carry a mass.
    fn add_m_to_matrix(&self, _m: &mut dyn MatrixSink, _factor: f64, _offset: usize) {}
    /// One scalar per point of the state to colour it by, when the scene asks for it (von Mises
    /// stress of TetrahedronFEMForceField with `showVonMisesStressPerNodeColorMap`). For display.
    fn nodal_scalars(&self, _x: &[f64]) -> Option<Vec<f64>> {
        None
    }
    /// Below this, `nodal_scalars` values are round-off, not a physical quantity (a body at
    /// rest): the viewer then shows "none" instead of stretching its colour scale over noise.
    fn nodal_scalar_floor(&self) -> f64 {
        0.0
    }
    /// Point pairs this force field draws as lines (springs). For display.
    fn draw_edges(&self) -> Vec<[u32; 2]> {
        Vec::new()
    }
    /// The contacts of a contact response force field, for display.
    fn contacts(&self) -> &[crate::collision::Contact] {
        &[]
    }
    /// A contact response force field (created by a collision pipeline) takes its contacts
    /// through this.
    fn contact_response(&mut self) -> Option<&mut dyn crate::collision::ContactResponse> {
        None
    }
}

/// A projective constraint (fixed points and the like).
pub trait ProjectiveConstraint: Component + ProjectiveConstraintClone {
    /// Project a derivative vector (dx, force, rhs): zero the constrained directions.
    fn project_response(&self, dx: &mut [f64]);
    fn project_velocity(&self, _v: &mut [f64]) {}
    fn project_position(&self, _x: &mut [f64]) {}
    /// Scalar DOFs (within the state, before offset) whose rows/columns become identity in an
    /// assembled matrix.
    fn fixed_scalar_dofs(&self, deriv_size: usize) -> Vec<usize>;
    /// The time of the step about to be solved (SOFA's context time during the step: its
    /// start), given before the step's projections; time-dependent constraints read it.
    fn set_time(&mut self, _t: f64) {}
}

/// [`LinearSolver::solve_again`] on each of `m` right-hand sides stored row by row (the
/// default of [`LinearSolver::solve_again_many`]); the statistics of the last one.
pub fn solve_again_by_columns<S: LinearSolver + ?Sized>(
    solver: &mut S,
    sys: &mut dyn LinearSystem,
    b: &[f64],
    x: &mut [f64],
    m: usize,
) -> SolveStats {
    let n = b.len() / m.max(1);
    let (mut col, mut sol) = (vec![0.0; n], vec![0.0; n]);
    let mut stats = SolveStats::default();
    for c in 0..m {
        for i in 0..n {
            col[i] = b[i * m + c];
            sol[i] = 0.0;
        }
        stats = solver.solve_again(sys, &col, &mut sol);
        for i in 0..n {
            x[i * m + c] = sol[i];
        }
    }
    stats
}

/// Statistics reported by a linear solve.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SolveStats {
    pub iterations: usize,
    pub residual: f64,
}

/// The linear system A = mM + bB + kK of a solver group, projected by its constraints.
pub trait LinearSystem {
    fn size(&self) -> usize;
    /// a·b over the system's vectors, in SOFA's order (each state's points in order, the states
    /// in graph order: [`canape_types::dot_points`]); by default as one state of scalars.
    fn dot(&self, a: &[f64], b: &[f64]) -> f64 {
        canape_types::dot_points(a, b, 1)
    }
    /// y = A x (matrix-free through the graph).
    fn apply(&mut self, x: &[f64], y: &mut [f64]);
    /// Assemble A (with projective constraints applied as identity rows/columns).
    fn assemble(&mut self) -> crate::matrix::Csr;
    /// Assemble only the 3×3 diagonal blocks of A (entries whose row and column fall in the same
    /// group of three), projected as in `assemble`: all that Jacobi and block-Jacobi
    /// preconditioners read (SOFA assembles them into a DiagonalMatrix / BlockDiagonalMatrix).
    /// The default assembles the whole matrix.
    fn assemble_block_diagonal(&mut self) -> crate::matrix::Csr {
        self.assemble()
    }
    /// Assemble the 3×3 blocks on and above the block diagonal (block column ≥ block row),
    /// projected as in `assemble`: all that a symmetric factorization reads of a symmetric A
    /// (the blocks below are left out, and components skip computing them). The default
    /// assembles the whole matrix.
    fn assemble_upper(&mut self) -> crate::matrix::Csr {
        self.assemble()
    }
}

/// A linear solver.
pub trait LinearSolver: Component + LinearSolverClone {
    /// Solve A x = b. `x` holds the previous solution on entry (for warm starts).
    fn solve(&mut self, sys: &mut dyn LinearSystem, b: &[f64], x: &mut [f64]) -> SolveStats;
    /// Solve again with the matrix of the last `solve` for another right-hand side (a
    /// Lagrangian constraint correction's columns of A⁻¹ Jᵀ): a direct solver reuses its
    /// factorization without assembling, a preconditioned solver its preconditioner.
    fn solve_again(&mut self, sys: &mut dyn LinearSystem, b: &[f64], x: &mut [f64]) -> SolveStats {
        self.solve(sys, b, x)
    }
    /// [`LinearSolver::solve_again`] for `m` right-hand sides stored row by row (row i holds
    /// the m values of unknown i): a direct solver runs them through its factor at once. By
    /// default one after the other.
    fn solve_again_many(
        &mut self,
        sys: &mut dyn LinearSystem,
        b: &[f64],
        x: &mut [f64],
        m: usize,
    ) -> SolveStats {
        solve_again_by_columns(self, sys, b, x, m)
    }
    /// W = Bᵀ A⁻¹ B (m × m, row-major, into `w`) for `m` right-hand sides B stored row by row,
    /// with the last solve's system — a constraint correction's
    /// compliance (SOFA's `addJMInvJt`) — when the solver has a cheaper way than
    /// [`LinearSolver::solve_again_many`] and a product: a Cholesky factor needs only its
    /// forward substitutions. None (the default): use `solve_again_many`.
    fn compliance_again(&mut self, _b: &[f64], _m: usize, _w: &mut [f64]) -> Option<SolveStats> {
        None
    }
    /// Forget what is carried from one solve to the next (a preconditioner's age), so that the
    /// next solve starts as after a snapshot or restore: a restored simulation then continues
    /// bit for bit. Factorizations meant to last (PrecomputedLinearSolver) stay.
    fn restart(&mut self) {}
    /// The matrix may have changed between steps (a Data was edited): what depends on its
    /// values is refreshed at the next solve, what depends only on its pattern (a symbolic
    /// factorization) is kept. By default, as [`LinearSolver::restart`].
    fn matrix_changed(&mut self) {
        self.restart();
    }
    /// Why the last solve could not be done (a factorization that failed, a system too large
    /// for the solver), while it could not: the simulation reports it once per solver, with
    /// the step (a solver that fails gives no solution, not a silently wrong one).
    fn failure(&self) -> Option<&(dyn std::error::Error + 'static)> {
        None
    }
    /// (symbolic analyses, numeric factorizations) computed since creation, for solvers that
    /// factor.
    fn factorization_counts(&self) -> Option<(u64, u64)> {
        None
    }
}

/// Operations an ODE solver performs over the states of its group, in SOFA's vector-id style.
pub trait MechanicalOps {
    /// Allocate a temporary derivative vector over the group (zeroed).
    fn alloc(&mut self) -> VecId;
    /// Allocate a temporary coordinate (position-like) vector over the group (zeroed); `free`
    /// releases it.
    fn alloc_coord(&mut self) -> VecId;
    fn free(&mut self, v: VecId);
    /// A vector kept across steps (zero when first created), e.g. the solver's solution vector
    /// that warm-started iterative solvers start from. `key` distinguishes several.
    fn persistent(&mut self, key: u32) -> VecId;
    /// f = Σ forces(x, v) (cleared first; masses add gravity).
    fn compute_force(&mut self, f: VecId);
    /// out += m·M·v + k·K·v (K from the last compute_force).
    fn add_mbk_v(&mut self, out: VecId, v: VecId, m: f64, k: f64);
    /// out += m·M·v + b·B·v + k·K·v with each component's own Rayleigh terms (SOFA's
    /// addMBKdx: masses m − b·rayleighMass, force fields k + b·rayleighStiffness).
    fn add_mbk(&mut self, out: VecId, v: VecId, m: f64, b: f64, k: f64);
    /// Zero constrained entries.
    fn project_response(&mut self, v: VecId);
    /// a = M⁻¹ f (diagonal masses directly; otherwise with the group's linear solver), projected.
    fn accel_from_force(&mut self, a: VecId, f: VecId);
    /// SOFA's computeAcc: the projective constraints project coordinate vector `x` and
    /// derivative vector `v` in place, then a = M⁻¹ f(x, v) (forces computed with `x`, `v` in
    /// place of the state's position and velocity, through the mappings, into `f`),
    /// projected. The state's own position and velocity are unchanged (unless `x`/`v` are
    /// them).
    fn compute_acc(&mut self, a: VecId, f: VecId, x: VecId, v: VecId);
    /// v += dt·g on the states of masses with `separateGravity` (SOFA's addSeparateGravity).
    fn add_separate_gravity(&mut self, dt: f64);
    /// a = b
    fn v_eq(&mut self, a: VecId, b: VecId);
    /// a *= f
    fn v_teq(&mut self, a: VecId, f: f64);
    /// a += b · f
    fn v_peq(&mut self, a: VecId, b: VecId, f: f64);
    /// Zero each point of derivative vector `a` whose norm is below `t` (SOFA's vThreshold).
    fn v_threshold(&mut self, a: VecId, t: f64);
    /// a = b + c · f
    fn v_op(&mut self, a: VecId, b: VecId, c: VecId, f: f64);
    fn dot(&mut self, a: VecId, b: VecId) -> f64;
    /// Solve (mM + bB + kK) x = rhs with the group's linear solver.
    fn solve_linear(&mut self, m: f64, b: f64, k: f64, x: VecId, rhs: VecId) -> SolveStats;
}

/// An ODE solver: advances position and velocity of its group by dt.
pub trait OdeSolver: Component + OdeSolverClone {
    fn solve(&mut self, ops: &mut dyn MechanicalOps, dt: f64);
    /// Whether the solver needs a linear solver in its context (explicit schemes with diagonal
    /// masses do not).
    fn needs_linear_solver(&self) -> bool {
        true
    }
    /// How a velocity change moves positions and velocities in this scheme (SOFA's
    /// getPositionIntegrationFactor and getVelocityIntegrationFactor), used by the
    /// Lagrangian constraint corrections.
    fn integration_factors(&self, dt: f64) -> crate::lagrangian::IntegrationFactors {
        crate::lagrangian::IntegrationFactors {
            position: dt,
            velocity: 1.0,
        }
    }
    /// Components whose Data this solver copied at its last init (a Newton solver's
    /// parameters): an edit of one of them re-initialises this solver too.
    fn init_sources(&self) -> Vec<crate::scene::ComponentId> {
        Vec::new()
    }
}

/// A topology: points and elements.
pub trait Topology: Component + TopologyClone {
    fn mesh(&self) -> &Mesh;
    fn mesh_mut(&mut self) -> &mut Mesh;
    /// Whether this topology is a regular grid, and its resolution (for hexa→tetra parity).
    fn grid_size(&self) -> Option<[usize; 3]> {
        None
    }
    /// Per-hexahedron stiffness and mass coefficients (SparseGridTopology: ½ for boundary
    /// cells with fillWeighted), which hexahedral FEM scales its elements by.
    fn hexahedron_coefficients(&self) -> Option<&[f64]> {
        None
    }
    /// How this topology locates points in its hexahedra for a BarycentricMapping, when it does
    /// so itself (SOFA's sparse grids answer `findCube` / `findNearestCube`, and
    /// BarycentricMapperSparseGridTopology maps on them); None: the mapping searches the
    /// elements geometrically.
    fn cube_locator(&self) -> Option<&dyn CubeLocator> {
        None
    }
}

/// A grid's point location (SOFA's `findCube` / `findNearestCube`): a hexahedron of the
/// topology's mesh and the point's trilinear coordinates (fx, fy, fz) in it, which weigh its
/// corners 0..8 as (1−fx)(1−fy)(1−fz), fx(1−fy)(1−fz), fx·fy(1−fz), (1−fx)fy(1−fz), then the same
/// times fz for corners 4..8.
pub trait CubeLocator {
    /// The hexahedron holding `p`, or None when no cell of the grid does.
    fn find_cube(&self, p: &[f64; 3]) -> Option<(usize, [f64; 3])>;
    /// The hexahedron nearest to `p`, with coordinates that may lie outside [0, 1]; None when
    /// the grid has no hexahedron.
    fn find_nearest_cube(&self, p: &[f64; 3]) -> Option<(usize, [f64; 3])>;
}

/// A topological mapping: builds an output topology from an input one (at init).
pub trait TopologicalMapping: Component + TopologicalMappingClone {
    /// Compute the output mesh from the input mesh and the input's grid resolution, if any.
    fn map(&self, input: &Mesh, grid: Option<[usize; 3]>) -> Mesh;
    /// What the mapping cannot do with this input or its settings (reported at init).
    fn warnings(&self, _input: &Mesh) -> Vec<String> {
        Vec::new()
    }
}

/// An engine: computes output Data from inputs (at init, and when inputs change).
pub trait Engine: Component + EngineClone {
    /// Whether the engine reads its context's state (BoxROI selects among its points), which is
    /// then initialised first. An engine that only transforms its input Data says no, so that a
    /// state whose topology reads the engine's output can be initialised after it.
    fn reads_context_state(&self) -> bool {
        true
    }
}

/// A loader: reads a file at init and exposes its content as output Data.
pub trait Loader: Component + LoaderClone {}

/// The vectors `id` of a mapping's input states, read in place (no copy): `get(k)` is input
/// `k`'s vector. Built by the caller over the state arena; the output vector is taken out of
/// its state beforehand, so inputs and output never alias.
pub struct MapInputs<'a> {
    states: &'a [Option<MechanicalObject>],
    idx: &'a [usize],
    id: VecId,
}

impl<'a> MapInputs<'a> {
    /// Inputs `idx` (indices into the state arena), vector `id` of each.
    pub fn new(states: &'a [Option<MechanicalObject>], idx: &'a [usize], id: VecId) -> Self {
        MapInputs { states, idx, id }
    }
    pub fn len(&self) -> usize {
        self.idx.len()
    }
    pub fn is_empty(&self) -> bool {
        self.idx.is_empty()
    }
    /// Input `k`'s vector (empty when the state is missing).
    pub fn get(&self, k: usize) -> &'a [f64] {
        self.states[self.idx[k]]
            .as_ref()
            .map(|s| s.vec(self.id))
            .unwrap_or(&[])
    }
}

/// One entry of a mapping's Jacobian: output derivative scalar `row` depends on scalar `col`
/// of input `input`'s derivative vector with weight `val`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JEntry {
    pub row: u32,
    pub input: u32,
    pub col: u32,
    pub val: f64,
}

/// One entry of a mapping's geometric stiffness, over its inputs' derivative scalars:
/// (`in_row`, `row`) × (`in_col`, `col`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KEntry {
    pub in_row: u32,
    pub row: u32,
    pub in_col: u32,
    pub col: u32,
    pub val: f64,
}

/// A mapping from one or more input states to an output state (mechanical mapping: x and v go
/// down as x_out = J(x_in), v_out = J v_in; forces come up as f_in += Jᵀ f_out) or to a visual
/// model (positions only). SOFA's Mapping / MultiMapping
/// (Sofa/framework/Core/src/sofa/core/Mapping.h, MultiMapping.h).
pub trait Mapping: Component + MappingClone {
    /// The input states, resolved at init (one for most mappings, several for multi-mappings).
    fn inputs(&self) -> &[crate::scene::ComponentId];
    /// The output (a state or a visual model), resolved at init.
    fn output(&self) -> Option<crate::scene::ComponentId>;
    /// Number of output points this mapping defines; at init the output state is resized to it
    /// (None keeps the output's own size).
    fn output_size(&self) -> Option<usize> {
        None
    }
    /// Whether forces of the output are mapped up to the inputs (SOFA's `mapForces`, true when
    /// the mapping has no such Data): a mechanical mapping whose output joins its inputs'
    /// solver group. Read when solver groups are built, not during a step.
    fn maps_forces(&self) -> bool {
        self.data().field("mapForces").is_none() || self.data().bool("mapForces")
    }
    /// Whether constraint Jacobians of the output are mapped up to the inputs (SOFA's
    /// `mapConstraints`, true when the mapping has no such Data). A mapping that maps
    /// constraints but not forces still joins its inputs' solver group: Lagrangian constraint
    /// rows on its output go up, its output's forces do not.
    fn maps_constraints(&self) -> bool {
        self.data().field("mapConstraints").is_none() || self.data().bool("mapConstraints")
    }
    /// Whether the rest positions are mapped at init too (`applyRestPosition`).
    fn applies_rest_position(&self) -> bool {
        self.data().field("applyRestPosition").is_some() && self.data().bool("applyRestPosition")
    }
    /// x_out = J(x_in) for positions (may cache what the derivatives need: rotated points,
    /// directions).
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]);
    /// v_out = J v_in for velocities and displacements (at the positions of the last `apply`).
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]);
    /// f_in += Jᵀ f_out, one buffer per input.
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]);
    /// df_in += k · dJᵀ(f_out) dx_in: the geometric stiffness of a nonlinear mapping under the
    /// output force `f_out` (SOFA's applyDJT). Linear mappings add nothing.
    fn apply_djt(&self, _dx_in: &MapInputs<'_>, _f_out: &[f64], _df_in: &mut [Vec<f64>], _k: f64) {}
    /// The Jacobian at the positions of the last `apply`, appended to `out`.
    fn jacobian(&self, out: &mut Vec<JEntry>);
    /// The geometric stiffness under `f_out`, appended to `out` (assembled solvers).
    fn geometric_stiffness(&self, _f_out: &[f64], _out: &mut Vec<KEntry>) {}
}

/// An event sent through the scene (SOFA's Event classes: simulation/AnimateBeginEvent.h …),
/// delivered to the controllers in graph order.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// After the scene is initialised (SOFA's SimulationInitDoneEvent).
    SimulationInitDone,
    /// At the start of an animation step, before anything moves.
    AnimateBegin {
        dt: f64,
    },
    /// After the step's integration, with the time advanced.
    AnimateEnd {
        dt: f64,
    },
    /// Around the collision stage of a step.
    CollisionBegin,
    CollisionEnd,
    /// A key pressed or released in a viewer.
    KeyPressed(char),
    KeyReleased(char),
    /// A named event sent by a script or an application.
    Script(String),
    /// The simulation is over (SOFA's cleanup when a scene is unloaded): sent once by
    /// `Simulation::finish`, which `canape run` calls after its last step.
    SimulationEnd,
}

/// The stages an animation loop is made of, provided by the running simulation: the loop
/// decides their order and their time steps (SOFA's DefaultAnimationLoop::step and its
/// visitors).
pub trait LoopStages {
    /// Current simulated time.
    fn time(&self) -> f64;
    fn set_time(&mut self, t: f64);
    /// Deliver an event to every controller, in graph order.
    fn send(&mut self, event: &Event);
    /// Collision detection and response (CollisionBegin/End events around it).
    fn collision(&mut self);
    /// Every solver group integrates over `dt`, then positions and velocities are projected and
    /// propagated down the mappings (SOFA's solve + project + propagate).
    fn integrate(&mut self, dt: f64);
    /// `integrate` for the solver groups whose ODE solver carries `tag` in its `tags` only
    /// (SOFA's solve visitor filtered by MultiTagAnimationLoop's current tag).
    fn integrate_tagged(&mut self, dt: f64, tag: &str);
    /// Mappings to visual models (SOFA's UpdateMappingVisitor).
    fn update_mappings(&mut self);
    /// FreeMotionAnimationLoop's free motion: every solver group integrates over `dt` into the
    /// free position and velocity; positions and velocities stay at the start of the step.
    fn free_motion(&mut self, dt: f64);
    /// FreeMotionAnimationLoop's constraint stage: the Lagrangian constraints solved at the
    /// free motion by the scene's constraint solver (`fallback` when it has none), the states
    /// corrected, projected and mapped down.
    fn solve_constraints(
        &mut self,
        dt: f64,
        fallback: &mut dyn crate::lagrangian::ConstraintSolver,
        order: crate::lagrangian::ConstraintOrder,
    );
}

/// The component that runs a step: the root's animation loop.
pub trait AnimationLoop: Component + AnimationLoopClone {
    fn step(&mut self, stages: &mut dyn LoopStages, dt: f64);
}

/// SOFA's DefaultAnimationLoop::step order of stages: AnimateBegin, collision, integration,
/// time advanced, AnimateEnd, visual mappings.
pub fn default_step(stages: &mut dyn LoopStages, dt: f64) {
    stages.send(&Event::AnimateBegin { dt });
    let start = stages.time();
    stages.collision();
    stages.integrate(dt);
    stages.set_time(start + dt);
    stages.send(&Event::AnimateEnd { dt });
    stages.update_mappings();
}

/// What a controller may do to the running simulation while it handles an event.
pub trait SceneControl {
    fn scene(&self) -> &crate::scene::Scene;
    /// Set a Data of a component from text and re-initialise the component, as an edit from a
    /// viewer does (an error leaves the previous value).
    fn set_data(
        &mut self,
        id: crate::scene::ComponentId,
        name: &str,
        text: &str,
    ) -> Result<(), crate::scene::EditError>;
    /// A state's vectors, to read or move points directly.
    fn state_mut(
        &mut self,
        id: crate::scene::ComponentId,
    ) -> Option<&mut crate::state::MechanicalObject>;
    /// Add a component; applied when the step ends (after AnimateEndEvent).
    fn add_component(
        &mut self,
        node: crate::scene::NodeId,
        name: &str,
        c: crate::scene::AnyComponent,
    ) -> Result<(), crate::scene::SceneError>;
    /// Remove a component; applied when the step ends (refused then if something uses it).
    fn remove_component(
        &mut self,
        id: crate::scene::ComponentId,
    ) -> Result<(), crate::scene::SceneError>;
    /// Remove a node and its subtree; applied when the step ends.
    fn remove_node(&mut self, id: crate::scene::NodeId) -> Result<(), crate::scene::SceneError>;
}

/// A component that reacts to events (SOFA's Controller: onAnimateBeginEvent, onKeyPressedEvent
/// …). Its own slot is empty while it handles an event; an error is reported with its path and
/// the simulation goes on.
pub trait Controller: Component + ControllerClone {
    fn on_event(
        &mut self,
        event: &Event,
        scene: &mut dyn SceneControl,
    ) -> Result<(), ControllerError>;
}

/// Why a controller could not handle an event. The simulation reports it as a diagnostic with
/// the controller's file:line and path (`while handling <event>: <error>`) and goes on.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// Its output could not be written (an exporter, WriteState, Monitor): what it was doing,
    /// the cause, and what follows from it.
    #[error("{context}{source}{then}")]
    Write {
        context: &'static str,
        source: Box<dyn std::error::Error + Send + Sync>,
        then: &'static str,
    },
    /// A change it asked of the scene was refused.
    #[error(transparent)]
    Scene(#[from] crate::scene::SceneError),
    /// A Data edit it asked was refused.
    #[error(transparent)]
    Edit(#[from] crate::scene::EditError),
    /// A script's handler failed (a Python controller's exception, with its traceback).
    #[error("{0}")]
    Script(String),
    /// It panicked (caught by the simulation, which stays usable): the panic's message.
    #[error("panicked: {0}")]
    Panicked(String),
}

/// Any other component (visual model, collision model, plugin marker…).
pub trait Passive: Component + PassiveClone {
    fn role(&self) -> Role;
    /// Components whose Data this one copied at its last init (a collision pipeline's
    /// intersection method and contact manager): an edit of one of them re-initialises this
    /// one too.
    fn init_sources(&self) -> Vec<crate::scene::ComponentId> {
        Vec::new()
    }
    /// Mesh to display (visual models), if any.
    fn visual_mesh(&self) -> Option<&Mesh> {
        None
    }
    fn visual_mesh_mut(&mut self) -> Option<&mut Mesh> {
        None
    }
    /// The geometry of a collision model (Point/Line/Triangle/SphereCollisionModel).
    fn collision_model(&self) -> Option<&dyn crate::collision::CollisionModel> {
        None
    }
    /// Whether this is a collision pipeline (see [`Passive::collision_pipeline`]).
    fn is_collision_pipeline(&self) -> bool {
        false
    }
    /// The collision pipeline, run in the animation loop's collision stage.
    fn collision_pipeline(&mut self) -> Option<&mut dyn crate::collision::CollisionPipeline> {
        None
    }
    /// A Lagrangian constraint (BilateralLagrangianConstraint…), solved in
    /// FreeMotionAnimationLoop's constraint stage.
    fn lagrangian_constraint(
        &mut self,
    ) -> Option<&mut dyn crate::lagrangian::LagrangianConstraint> {
        None
    }
    /// A contact response kept as a passive component (the Lagrangian contact constraint the
    /// collision pipeline fills each step).
    fn contact_response(&mut self) -> Option<&mut dyn crate::collision::ContactResponse> {
        None
    }
    /// A constraint correction (UncoupledConstraintCorrection…).
    fn constraint_correction(&self) -> Option<&dyn crate::lagrangian::ConstraintCorrection> {
        None
    }
    /// A constraint solver (BlockGaussSeidelConstraintSolver…).
    fn constraint_solver(&mut self) -> Option<&mut dyn crate::lagrangian::ConstraintSolver> {
        None
    }
}

/// Implement [`Component`]'s reflective accessors for a struct with a `data: DataTable` field.
/// An `init` body may be given as a method named `init_impl` on the type, and a reaction to
/// edits ([`Component::data_changed`]) as a method named `data_changed_impl`
/// (`impl_component!(T, "Class", init, data_changed)`).
#[macro_export]
macro_rules! impl_component {
    ($t:ty, |$s:ident| $class:expr, init, data_changed) => {
        impl $crate::component::Component for $t {
            fn class_name(&self) -> &'static str {
                let $s = self;
                $class
            }
            fn data(&self) -> &$crate::data::DataTable {
                &self.data
            }
            fn data_mut(&mut self) -> &mut $crate::data::DataTable {
                &mut self.data
            }
            fn init(&mut self, ctx: &mut $crate::scene::InitContext<'_>) {
                self.init_impl(ctx)
            }
            fn data_changed(
                &mut self,
                changed: &$crate::data::ChangedData,
            ) -> $crate::component::Reaction {
                self.data_changed_impl(changed)
            }
        }
    };
    ($t:ty, $class:expr, init, data_changed) => {
        $crate::impl_component!($t, |_s| $class, init, data_changed);
    };
    ($t:ty, $class:expr) => {
        impl $crate::component::Component for $t {
            fn class_name(&self) -> &'static str {
                $class
            }
            fn data(&self) -> &$crate::data::DataTable {
                &self.data
            }
            fn data_mut(&mut self) -> &mut $crate::data::DataTable {
                &mut self.data
            }
        }
    };
    // class name computed from the instance: impl_component!(T, |s| expr, init)
    ($t:ty, |$s:ident| $class:expr, init) => {
        impl $crate::component::Component for $t {
            fn class_name(&self) -> &'static str {
                let $s = self;
                $class
            }
            fn data(&self) -> &$crate::data::DataTable {
                &self.data
            }
            fn data_mut(&mut self) -> &mut $crate::data::DataTable {
                &mut self.data
            }
            fn init(&mut self, ctx: &mut $crate::scene::InitContext<'_>) {
                self.init_impl(ctx)
            }
        }
    };
    ($t:ty, $class:expr, init) => {
        impl $crate::component::Component for $t {
            fn class_name(&self) -> &'static str {
                $class
            }
            fn data(&self) -> &$crate::data::DataTable {
                &self.data
            }
            fn data_mut(&mut self) -> &mut $crate::data::DataTable {
                &mut self.data
            }
            fn init(&mut self, ctx: &mut $crate::scene::InitContext<'_>) {
                self.init_impl(ctx)
            }
        }
    };
}
