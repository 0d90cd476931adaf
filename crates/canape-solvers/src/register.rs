//! This crate's components (ODE and linear solvers), registered under SOFA's class names: the
//! facade's registry calls [`register`], and so can an application's own registry.

use crate::BdfOdeSolver;
use crate::CentralDifferenceSolver;
use crate::CgLinearSolver;
use crate::DirectSolver;
use crate::EulerExplicitSolver;
use crate::EulerImplicitSolver;
use crate::MinResLinearSolver;
use crate::NewmarkImplicitSolver;
use crate::NewtonRaphsonSolver;
use crate::PcgLinearSolver;
use crate::RungeKutta2Solver;
use crate::RungeKutta4Solver;
use crate::StaticSolver;
use crate::SvdLinearSolver;
use crate::{DampVelocitySolver, VariationalSymplecticSolver};
use canape_core::registry::Registry;
use canape_core::scene::AnyComponent;

/// Register this crate's components.
pub fn register(r: &mut Registry) {
    r.register(
        "EulerImplicitSolver",
        "implicit (backward) Euler with Rayleigh damping",
        |_, _| Ok(AnyComponent::Ode(Box::new(EulerImplicitSolver::new()))),
    );
    r.register(
        "EulerExplicitSolver",
        "forward Euler (symplectic by default)",
        |_, _| Ok(AnyComponent::Ode(Box::new(EulerExplicitSolver::new()))),
    );
    r.register(
        "NewmarkImplicitSolver",
        "implicit Newmark-beta (gamma 0.5, beta 0.25 by default)",
        |_, _| Ok(AnyComponent::Ode(Box::new(NewmarkImplicitSolver::new()))),
    );
    r.register(
        "VariationalSymplecticSolver",
        "implicit (or explicit) midpoint scheme on the momentum, conserving energy and momentum",
        |_, _| {
            Ok(AnyComponent::Ode(Box::new(
                VariationalSymplecticSolver::new(),
            )))
        },
    );
    r.register(
        "DampVelocitySolver",
        "multiplies the velocities by exp(-rate dt) after the node's integrator",
        |_, _| Ok(AnyComponent::Ode(Box::new(DampVelocitySolver::new()))),
    );
    r.register(
        "RungeKutta4Solver",
        "explicit classical Runge-Kutta, fourth order",
        |_, _| Ok(AnyComponent::Ode(Box::new(RungeKutta4Solver::new()))),
    );
    r.register(
        "RungeKutta2Solver",
        "explicit midpoint Runge-Kutta, second order",
        |_, _| Ok(AnyComponent::Ode(Box::new(RungeKutta2Solver::new()))),
    );
    r.register(
        "CentralDifferenceSolver",
        "explicit central differences (optional Rayleigh mass damping)",
        |_, _| Ok(AnyComponent::Ode(Box::new(CentralDifferenceSolver::new()))),
    );
    r.register(
        "StaticSolver",
        "static equilibrium by Newton-Raphson iterations (parameters from a NewtonRaphsonSolver)",
        |_, _| Ok(AnyComponent::Ode(Box::new(StaticSolver::new()))),
    );
    r.register(
        "BDFOdeSolver",
        "velocity-based backward differentiation formula of any order, variable time step (nonlinear solve by a NewtonRaphsonSolver)",
        |_, _| Ok(AnyComponent::Ode(Box::new(BdfOdeSolver::new()))),
    );
    r.register(
        "NewtonRaphsonSolver",
        "Newton-Raphson parameters (iterations, line search, stopping thresholds) for the ODE solver that links or finds it",
        |_, _| Ok(AnyComponent::Passive(Box::new(NewtonRaphsonSolver::new()))),
    );
    r.register(
        "CGLinearSolver",
        "conjugate gradient, matrix-free or assembled",
        |_, t| Ok(AnyComponent::Linear(Box::new(CgLinearSolver::new(t)?))),
    );
    r.register(
        "SparseLDLSolver",
        "direct LDLᵀ solver (faer Cholesky)",
        |_, t| {
            Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
                "SparseLDLSolver",
                t,
            )?)))
        },
    );
    r.register(
        "AsyncSparseLDLSolver",
        "direct LDLᵀ solver whose factorization runs one step late (SOFA's asynchronous factorization, made deterministic)",
        |_, t| {
            Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
                "AsyncSparseLDLSolver",
                t,
            )?)))
        },
    );
    r.register(
        "BTDLinearSolver",
        "block-tridiagonal direct solver (sparse Cholesky: exact on the block-tridiagonal matrices of beam chains)",
        |_, t| {
            Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
                "BTDLinearSolver",
                t,
            )?)))
        },
    );
    r.register(
        "EigenSimplicialLDLT",
        "direct LDLᵀ solver (faer Cholesky)",
        |_, t| {
            Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
                "EigenSimplicialLDLT",
                t,
            )?)))
        },
    );
    r.register(
        "EigenSimplicialLLT",
        "direct Cholesky solver (faer)",
        |_, t| {
            Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
                "EigenSimplicialLLT",
                t,
            )?)))
        },
    );
    r.register("EigenSparseLU", "direct LU solver (faer)", |_, t| {
        Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
            "EigenSparseLU",
            t,
        )?)))
    });
    r.register("EigenSparseQR", "direct QR solver (faer)", |_, t| {
        Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
            "EigenSparseQR",
            t,
        )?)))
    });
    r.register(
        "SVDLinearSolver",
        "dense singular value decomposition at every solve (least squares on singular systems)",
        |_, t| Ok(AnyComponent::Linear(Box::new(SvdLinearSolver::new(t)?))),
    );
    r.register(
        "PrecomputedLinearSolver",
        "factors the first step's matrix once and reuses it",
        |_, t| {
            Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
                "PrecomputedLinearSolver",
                t,
            )?)))
        },
    );
    r.register(
        "PCGLinearSolver",
        "preconditioned conjugate gradient (warm-started)",
        |_, t| Ok(AnyComponent::Linear(Box::new(PcgLinearSolver::new(t)?))),
    );
    r.register("MinResLinearSolver", "MINRES (warm-started)", |_, t| {
        Ok(AnyComponent::Linear(Box::new(MinResLinearSolver::new(t)?)))
    });
}
