//! Test helpers: a dense linear system behind the `LinearSystem` interface, and a solver
//! initialised in a scene of its own then edited while it runs.

use canape_core::component::{Component, LinearSolver, LinearSystem, OdeSolver, Reaction};
use canape_core::diag::Diagnostics;
use canape_core::matrix::{Csr, MatrixSink, Triplets};
use canape_core::scene::{AnyComponent, InitContext, Scene};

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

/// `c` with `attrs` (each must parse), initialised alone in a scene of its own (`wrap` gives
/// its role); init must report nothing.
pub fn initialised_as<C: Component + Clone + 'static>(
    mut c: C,
    wrap: impl FnOnce(C) -> AnyComponent,
    attrs: &[(&str, &str)],
) -> C {
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    for (k, v) in attrs {
        c.data_mut().set_str(k, v).unwrap();
    }
    let id = scene.add_component(root, "solver", wrap(c.clone()), None);
    let mut diags = Diagnostics::default();
    c.init(&mut InitContext {
        scene: &scene,
        node: root,
        id,
        diags: &mut diags,
    });
    assert!(diags.is_empty(), "{diags:?}");
    c
}

/// An ODE solver with `attrs`, initialised in a scene of its own.
pub fn ode_initialised<T: Component + OdeSolver + Clone + 'static>(
    s: T,
    attrs: &[(&str, &str)],
) -> T {
    initialised_as(s, |s| AnyComponent::Ode(Box::new(s)), attrs)
}

/// A linear solver with `attrs`, initialised in a scene of its own (no preconditioner link).
pub fn linear_initialised<T: Component + LinearSolver + Clone + 'static>(
    s: T,
    attrs: &[(&str, &str)],
) -> T {
    initialised_as(s, |s| AnyComponent::Linear(Box::new(s)), attrs)
}

/// Give `c` the values `after` (each must parse) while it runs: its reaction to the change.
pub fn edit<C: Component + ?Sized>(c: &mut C, after: &[(&str, &str)]) -> Reaction {
    let versions = c.data().versions();
    for (k, v) in after {
        c.data_mut().set_str(k, v).unwrap();
    }
    let changed = c.data().changed_since(&versions);
    c.data_changed(&changed)
}
