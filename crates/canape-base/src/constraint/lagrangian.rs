//! Lagrangian constraints (Sofa/Component/Constraint/Lagrangian), solved in
//! FreeMotionAnimationLoop's constraint stage (the stage itself is in canape-simulation):
//!
//! - `solver`: the Gauss–Seidel constraint solvers (BlockGaussSeidelConstraintSolver,
//!   ProjectedGaussSeidelConstraintSolver, UnbuiltGaussSeidelConstraintSolver,
//!   NNCGConstraintSolver, and GenericConstraintSolver with its `resolutionMethod`) and the
//!   resolutions of the constraint blocks;
//! - `correction`: UncoupledConstraintCorrection, LinearSolverConstraintCorrection and
//!   GenericConstraintCorrection;
//! - `bilateral`: BilateralLagrangianConstraint (Vec3 and Rigid3);
//! - `fixed`: FixedLagrangianConstraint (Vec3 and Rigid3);
//! - `uniform`: UniformLagrangianConstraint (every scalar of a Vec1/2/3 state held at 0).

pub mod bilateral;
pub mod correction;
pub mod fixed;
pub mod solver;
pub mod uniform;
