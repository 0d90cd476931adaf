//! ODE solvers and linear solvers (SOFA's ODESolver and LinearSolver areas).

pub mod band;
pub mod cg;
pub mod direct;
pub mod euler_explicit;
pub mod euler_implicit;
pub mod gband;
pub mod pcg;
pub mod rcm;
pub mod static_solver;
#[cfg(test)]
mod test_util;

pub use cg::CgLinearSolver;
pub use direct::DirectSolver;
pub use euler_explicit::EulerExplicitSolver;
pub use euler_implicit::EulerImplicitSolver;
pub use pcg::{MinResLinearSolver, PcgLinearSolver};
pub use static_solver::StaticSolver;
