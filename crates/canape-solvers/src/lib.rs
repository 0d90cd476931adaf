//! ODE solvers and linear solvers (SOFA's ODESolver and LinearSolver areas).

pub mod cg;
pub mod euler_implicit;

pub use cg::CgLinearSolver;
pub use euler_implicit::EulerImplicitSolver;
