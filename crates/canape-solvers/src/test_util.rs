//! Test helpers: a dense linear system behind the `LinearSystem` interface.

use canape_core::component::LinearSystem;
use canape_core::matrix::{Csr, MatrixSink, Triplets};

/// Deterministic pseudo-random numbers in [−0.5, 0.5) (a linear congruential generator).
pub fn rng(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    }
}

/// A dense matrix seen as a linear system; counts its assemblies.
pub struct DenseSystem {
    pub a: Vec<Vec<f64>>,
    pub assembled: usize,
}

impl DenseSystem {
    pub fn new(a: Vec<Vec<f64>>) -> Self {
        DenseSystem { a, assembled: 0 }
    }

    /// |A x − b| / |b|
    pub fn relative_residual(&self, x: &[f64], b: &[f64]) -> f64 {
        let r: f64 = self
            .a
            .iter()
            .zip(b)
            .map(|(row, bi)| (row.iter().zip(x).map(|(p, q)| p * q).sum::<f64>() - bi).powi(2))
            .sum();
        r.sqrt() / b.iter().map(|v| v * v).sum::<f64>().sqrt()
    }
}

impl LinearSystem for DenseSystem {
    fn size(&self) -> usize {
        self.a.len()
    }
    fn apply(&mut self, x: &[f64], y: &mut [f64]) {
        for (i, row) in self.a.iter().enumerate() {
            y[i] = row.iter().zip(x).map(|(a, b)| a * b).sum();
        }
    }
    fn assemble(&mut self) -> Csr {
        self.assembled += 1;
        let mut t = Triplets::new(self.a.len());
        for (i, row) in self.a.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                if *v != 0.0 {
                    t.add(i, j, *v);
                }
            }
        }
        t.to_csr()
    }
    /// The blocks on and above the 3×3 block diagonal only (what a real group assembles).
    fn assemble_upper(&mut self) -> Csr {
        self.assembled += 1;
        let mut t = Triplets::new(self.a.len());
        for (i, row) in self.a.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                if *v != 0.0 && j / 3 >= i / 3 {
                    t.add(i, j, *v);
                }
            }
        }
        t.to_csr()
    }
}
