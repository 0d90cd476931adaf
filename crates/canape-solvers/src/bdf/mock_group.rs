//! A mock mechanical group for the ODE solvers' tests: a 1-D chain of points with diagonal
//! masses and a constant stiffness, behind the `MechanicalOps` interface, and what the tests of
//! in-place edits share.

use canape_core::component::{Component, MechanicalOps, OdeSolver, Reaction, SolveStats};
use canape_core::state::VecId;
use std::collections::BTreeMap;

/// A 1-D group: diagonal masses, a constant stiffness K = ∂f/∂x (dense), rest positions
/// and a gravity; f = M g + K (x − x0). DOFs in `fixed` are projected out.
#[derive(Clone)]
pub(crate) struct Chain {
    pub vecs: BTreeMap<VecId, Vec<f64>>,
    pub mass: Vec<f64>,
    pub k: Vec<Vec<f64>>,
    pub rest: Vec<f64>,
    pub g: f64,
    pub fixed: Vec<usize>,
    next: u32,
    next_coord: u32,
    pub live: usize,
}

impl Chain {
    pub fn new(mass: &[f64], k: Vec<Vec<f64>>, rest: &[f64], g: f64) -> Self {
        let n = mass.len();
        let mut vecs = BTreeMap::new();
        for v in [VecId::POSITION, VecId::VELOCITY, VecId::FORCE] {
            vecs.insert(v, vec![0.0; n]);
        }
        vecs.insert(VecId::POSITION, rest.to_vec());
        Chain {
            vecs,
            mass: mass.to_vec(),
            k,
            rest: rest.to_vec(),
            g,
            fixed: Vec::new(),
            next: VecId::FIRST_TEMP,
            next_coord: VecId::FIRST_COORD_TEMP,
            live: 0,
        }
    }
    /// One free point of mass m under gravity g.
    pub fn falling(m: f64, g: f64) -> Self {
        Chain::new(&[m], vec![vec![0.0]], &[0.0], g)
    }
    /// Two points joined by a spring of stiffness `ks`, the first one also tied to its
    /// rest position by a spring `k0`.
    pub fn springs(ks: f64, k0: f64, g: f64) -> Self {
        Chain::new(
            &[1.5, 0.7],
            vec![vec![-ks - k0, ks], vec![ks, -ks]],
            &[0.0, 1.0],
            g,
        )
    }
    pub fn n(&self) -> usize {
        self.mass.len()
    }
    fn get(&mut self, v: VecId) -> &mut Vec<f64> {
        let n = self.n();
        self.vecs.entry(v).or_insert_with(|| vec![0.0; n])
    }
    pub fn val(&self, v: VecId) -> Vec<f64> {
        self.vecs[&v].clone()
    }
    /// The state's position and velocity, as bits (what bit-for-bit comparisons read).
    pub fn state_bits(&self) -> Vec<u64> {
        [VecId::POSITION, VecId::VELOCITY]
            .iter()
            .flat_map(|v| self.vecs[v].iter().map(|x| x.to_bits()))
            .collect()
    }
    fn kv(&self, v: &[f64]) -> Vec<f64> {
        self.k
            .iter()
            .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum())
            .collect()
    }
}

impl MechanicalOps for Chain {
    fn alloc(&mut self) -> VecId {
        self.next += 1;
        self.live += 1;
        let v = VecId(self.next);
        *self.get(v) = vec![0.0; self.n()];
        v
    }
    fn alloc_coord(&mut self) -> VecId {
        self.next_coord += 1;
        self.live += 1;
        let v = VecId(self.next_coord);
        *self.get(v) = vec![0.0; self.n()];
        v
    }
    fn free(&mut self, v: VecId) {
        self.live -= 1;
        self.vecs.remove(&v);
    }
    fn persistent(&mut self, key: u32) -> VecId {
        let v = VecId(VecId::FIRST_PERSISTENT + key);
        self.get(v);
        v
    }
    fn compute_force(&mut self, f: VecId) {
        let x = self.val(VecId::POSITION);
        let dx: Vec<f64> = x.iter().zip(&self.rest).map(|(a, b)| a - b).collect();
        let kx = self.kv(&dx);
        let out = (0..self.n())
            .map(|i| self.mass[i] * self.g + kx[i])
            .collect();
        *self.get(f) = out;
    }
    fn add_mbk_v(&mut self, out: VecId, v: VecId, m: f64, k: f64) {
        let v = self.val(v);
        let kv = self.kv(&v);
        let mass = self.mass.clone();
        for (i, o) in self.get(out).iter_mut().enumerate() {
            *o += m * mass[i] * v[i] + k * kv[i];
        }
    }
    /// out += m·M·v + k·K·v (no damping matrix, no Rayleigh terms of the components).
    fn add_mbk(&mut self, out: VecId, v: VecId, m: f64, _b: f64, k: f64) {
        self.add_mbk_v(out, v, m, k);
    }
    fn project_response(&mut self, v: VecId) {
        let fixed = self.fixed.clone();
        let a = self.get(v);
        for i in fixed {
            a[i] = 0.0;
        }
    }
    /// a = M⁻¹ f, projected.
    fn accel_from_force(&mut self, a: VecId, f: VecId) {
        let f = self.val(f);
        let out = f.iter().zip(&self.mass).map(|(f, m)| f / m).collect();
        *self.get(a) = out;
        self.project_response(a);
    }
    /// v projected in place, then a = M⁻¹ f(x), projected (the forces do not depend on v).
    fn compute_acc(&mut self, a: VecId, f: VecId, x: VecId, v: VecId) {
        self.project_response(v);
        let saved = self.val(VecId::POSITION);
        let x = self.val(x);
        self.vecs.insert(VecId::POSITION, x);
        self.compute_force(f);
        self.vecs.insert(VecId::POSITION, saved);
        self.accel_from_force(a, f);
    }
    fn add_separate_gravity(&mut self, _: f64) {}
    fn v_eq(&mut self, a: VecId, b: VecId) {
        let b = self.val(b);
        *self.get(a) = b;
    }
    fn v_teq(&mut self, a: VecId, f: f64) {
        self.get(a).iter_mut().for_each(|x| *x *= f);
    }
    fn v_threshold(&mut self, a: VecId, t: f64) {
        // one value per point
        self.get(a)
            .iter_mut()
            .filter(|x| x.abs() < t)
            .for_each(|x| *x = 0.0);
    }
    fn v_peq(&mut self, a: VecId, b: VecId, f: f64) {
        let b = self.val(b);
        for (x, y) in self.get(a).iter_mut().zip(b) {
            *x += y * f;
        }
    }
    fn v_op(&mut self, a: VecId, b: VecId, c: VecId, f: f64) {
        let (b, c) = (self.val(b), self.val(c));
        *self.get(a) = b.iter().zip(c).map(|(p, q)| p + q * f).collect();
    }
    fn dot(&mut self, a: VecId, b: VecId) -> f64 {
        let b = self.val(b);
        self.get(a).iter().zip(b).map(|(p, q)| p * q).sum()
    }
    /// (m M + k K) x = rhs by Gaussian elimination (b·B = 0: no damping matrix), identity
    /// rows at the fixed DOFs.
    fn solve_linear(&mut self, m: f64, _b: f64, k: f64, x: VecId, rhs: VecId) -> SolveStats {
        let n = self.n();
        let mut a: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| k * self.k[i][j] + if i == j { m * self.mass[i] } else { 0.0 })
                    .collect()
            })
            .collect();
        for &i in &self.fixed {
            for j in 0..n {
                a[i][j] = f64::from(u8::from(i == j));
                a[j][i] = f64::from(u8::from(i == j));
            }
        }
        let mut r = self.val(rhs);
        for c in 0..n {
            for row in c + 1..n {
                let q = a[row][c] / a[c][c];
                for j in c..n {
                    a[row][j] -= q * a[c][j];
                }
                r[row] -= q * r[c];
            }
        }
        let mut out = vec![0.0; n];
        for i in (0..n).rev() {
            let s: f64 = (i + 1..n).map(|j| a[i][j] * out[j]).sum();
            out[i] = (r[i] - s) / a[i][i];
        }
        *self.get(x) = out;
        SolveStats::default()
    }
}

/// `s`, stepped once on `ops`, then edited: what it answers.
pub(crate) fn step_and_edit<T: Component + OdeSolver>(
    s: &mut T,
    ops: &mut Chain,
    after: &[(&str, &str)],
) -> Reaction {
    s.solve(ops, 0.01);
    crate::test_util::edit(s, after)
}

/// The two moving points of the mock group, away from rest.
pub(crate) fn springs() -> Chain {
    let mut ops = Chain::springs(1000.0, 50.0, -9.81);
    ops.vecs.insert(VecId::POSITION, vec![0.1, 1.3]);
    ops.vecs.insert(VecId::VELOCITY, vec![0.2, -0.5]);
    ops
}

/// After an edit taken in place, `edited` steps `ops` as `fresh` (initialised with the new
/// values) steps a copy of it, bit for bit, and not as `old` (the old values) does.
pub(crate) fn assert_same_steps<T: OdeSolver>(
    mut edited: T,
    mut fresh: T,
    mut old: T,
    ops: Chain,
    what: &str,
) {
    let (mut a, mut b, mut c) = (ops.clone(), ops.clone(), ops);
    for _ in 0..3 {
        edited.solve(&mut a, 0.01);
        fresh.solve(&mut b, 0.01);
        old.solve(&mut c, 0.01);
    }
    assert_eq!(a.state_bits(), b.state_bits(), "{what}");
    assert_ne!(a.state_bits(), c.state_bits(), "{what} changed nothing");
}
