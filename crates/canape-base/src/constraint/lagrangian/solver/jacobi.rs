//! ImprovedJacobiConstraintSolver's iteration (SOFA's
//! Sofa/Component/Constraint/Lagrangian/Solver/.../ImprovedJacobiConstraintSolver.cpp in its
//! revision with the `useSpectralCorrection`/`useConjugateResidue` Data, both off by default,
//! after Francu & Moldoveanu, "An Improved Jacobi Solver for Particle Simulation", VRPHYS 2014).
//!
//! The impulses start at zero and d at dfree. Each iteration first brings every row's d up to
//! date with the last iteration's impulse changes (d += W Δf), then resolves every block from
//! these same displacements (scaled by ρ), so the blocks do not see each other's changes
//! within an iteration (Jacobi, where Gauss–Seidel would). Optionally ρ = factor ·
//! min(1, 1.8 / spectral radius of W) (`useSpectralCorrection`; SOFA takes `std::norm` of its
//! complex eigenvalues, their squared magnitude, which can only be a slip for the magnitude
//! the paper's bound 2/λmax uses: the magnitude is used here), and each block's impulses are
//! pushed on along their last change by β = min(1, (i / maxIterations)^speed)
//! (`useConjugateResidue`). The error is Σ over blocks of |W_rows Δf|; iterations stop when it
//! is below the tolerance after the first one, or with `allVerified` when every block's
//! partial sum is.

use super::{resolve, GaussSeidel};
use canape_core::lagrangian::{ConstraintProblem, ConstraintStats};

impl GaussSeidel {
    pub(super) fn jacobi(
        &mut self,
        p: &mut ConstraintProblem,
        tol: f64,
        stats: &mut ConstraintStats,
    ) {
        let n = p.n;
        p.force.iter_mut().for_each(|f| *f = 0.0);
        self.d.clear();
        self.d.extend_from_slice(&p.dfree[..n]);
        let (mut last, mut delta, mut corrected) = (
            std::mem::take(&mut self.last),
            std::mem::take(&mut self.delta),
            std::mem::take(&mut self.corrected),
        );
        for v in [&mut last, &mut delta, &mut corrected] {
            v.clear();
            v.resize(n, 0.0);
        }
        let rho = match self.spectral_correction {
            Some(factor) => factor * (0.9 * 2.0 / spectral_radius(&p.w, n)).min(1.0),
            None => 1.0,
        };
        for i in 0..self.max_iterations {
            stats.iterations = i + 1;
            // SOFA takes i / maxIterations in single precision
            let beta = match self.conjugate_residue {
                Some(speed) => ((i as f32 / self.max_iterations as f32) as f64)
                    .powf(speed)
                    .min(1.0),
                None => 0.0,
            };
            for l in 0..n {
                let row = &p.w[l * n..(l + 1) * n];
                self.d[l] += super::row_dot(row, &delta);
                corrected[l] = rho * self.d[l];
            }
            let mut error = 0.0;
            let mut verified = true;
            for (b, st) in p.blocks.iter().zip(&self.states) {
                let j = b.first_row;
                let nb = b.resolution.rows();
                resolve(b, st, &p.w, n, &mut corrected, &mut p.force);
                for l in j..j + nb {
                    p.force[l] += beta * delta[l];
                    delta[l] = p.force[l] - last[l];
                    last[l] = p.force[l];
                }
                let mut e = 0.0;
                for l in j..j + nb {
                    let row = &p.w[l * n..(l + 1) * n];
                    e += row
                        .iter()
                        .zip(&delta)
                        .map(|(w, x)| (w * x) * (w * x))
                        .sum::<f64>();
                    verified &= e < tol * tol;
                }
                error += e.sqrt();
            }
            stats.error = error;
            let done = if self.all_verified {
                verified
            } else {
                error < tol && i > 0
            };
            if done {
                stats.converged = true;
                break;
            }
        }
        (self.last, self.delta, self.corrected) = (last, delta, corrected);
        if self.spectral_correction.is_none() && p.force.iter().any(|f| !f.is_finite()) {
            stats.refused = Some("ImprovedJacobiConstraintSolver: the plain Jacobi iteration (useSpectralCorrection off, SOFA's default) diverged on these coupled constraints; useSpectralCorrection=\"1\" scales each update by 1.8 / the spectral radius of W (or use BlockGaussSeidelConstraintSolver)");
        }
    }
}

/// The largest eigenvalue magnitude of the n×n matrix `w` (row-major; W is symmetric).
fn spectral_radius(w: &[f64], n: usize) -> f64 {
    let m = nalgebra::DMatrix::from_fn(n, n, |r, c| 0.5 * (w[r * n + c] + w[c * n + r]));
    m.symmetric_eigenvalues()
        .iter()
        .fold(0.0f64, |acc, l| acc.max(l.abs()))
}
