//! ODE solvers and linear solvers (SOFA's ODESolver and LinearSolver areas).

/// `LinearSolver::solve` for an iterative solver whose body is its inherent `solve_impl`
/// (`#[inline(always)]`): run compiled for AVX2 where the CPU has it, so that its vector loops
/// go four values per instruction instead of two. The loops work value by value (reductions
/// go through `canape_types::dot`), so both builds give the same bits. With a field name, that
/// flag is set during `solve_again` (a solve with the last solve's system), and the type's
/// `solve_again_many_by_factor` may answer `solve_again_many` at once and its
/// `compliance_by_factor` `compliance_again`.
macro_rules! solve_with_avx2 {
    ($ty:ty $(, $again:ident)?) => {
        impl canape_core::component::LinearSolver for $ty {
            fn solve(
                &mut self,
                sys: &mut dyn canape_core::component::LinearSystem,
                b: &[f64],
                x: &mut [f64],
            ) -> canape_core::component::SolveStats {
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    #[target_feature(enable = "avx2")]
                    fn avx2(
                        s: &mut $ty,
                        sys: &mut dyn canape_core::component::LinearSystem,
                        b: &[f64],
                        x: &mut [f64],
                    ) -> canape_core::component::SolveStats {
                        s.solve_impl(sys, b, x)
                    }
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    return unsafe { avx2(self, sys, b, x) };
                }
                self.solve_impl(sys, b, x)
            }
            fn restart(&mut self) {
                self.restart_impl()
            }
            $(
            fn solve_again(
                &mut self,
                sys: &mut dyn canape_core::component::LinearSystem,
                b: &[f64],
                x: &mut [f64],
            ) -> canape_core::component::SolveStats {
                self.$again = true;
                let stats = canape_core::component::LinearSolver::solve(self, sys, b, x);
                self.$again = false;
                stats
            }
            fn solve_again_many(
                &mut self,
                sys: &mut dyn canape_core::component::LinearSystem,
                b: &[f64],
                x: &mut [f64],
                m: usize,
            ) -> canape_core::component::SolveStats {
                if let Some(stats) = self.solve_again_many_by_factor(b, x, m) {
                    return stats;
                }
                canape_core::component::solve_again_by_columns(self, sys, b, x, m)
            }
            fn compliance_again(
                &mut self,
                b: &[f64],
                m: usize,
                w: &mut [f64],
            ) -> Option<canape_core::component::SolveStats> {
                self.compliance_by_factor(b, m, w)
            }
            )?
        }
    };
}

pub mod band;
pub mod bdf;
pub mod cg;
pub mod direct;
#[cfg(test)]
mod error_texts;
pub mod euler_explicit;
pub mod euler_implicit;
pub mod gband;
pub mod newmark;
pub mod newton;
pub mod pcg;
pub mod rcm;
pub mod register;
pub mod runge_kutta;
pub mod static_solver;
pub mod svd;
#[cfg(test)]
mod test_util;
pub mod variational;

pub use bdf::BdfOdeSolver;
pub use cg::CgLinearSolver;
pub use direct::DirectSolver;
pub use euler_explicit::EulerExplicitSolver;
pub use euler_implicit::EulerImplicitSolver;
pub use newmark::NewmarkImplicitSolver;
pub use newton::NewtonRaphsonSolver;
pub use pcg::{MinResLinearSolver, PcgLinearSolver};
pub use runge_kutta::{CentralDifferenceSolver, RungeKutta2Solver, RungeKutta4Solver};
pub use static_solver::StaticSolver;
pub use svd::SvdLinearSolver;
pub use variational::{DampVelocitySolver, VariationalSymplecticSolver};
