//! EulerImplicitSolver: backward Euler with Rayleigh damping.
//!
//! Follows SOFA's formulation (Sofa/Component/ODESolver/Backward/src/sofa/component/odesolver/
//! backward/EulerImplicitSolver.cpp): f = F(x, v); b = h·(f − rm·M·v + (h·tr + rs)·K·v), projected;
//! solve ((1 + tr·h·rm)·M − tr·h·B − tr·h·(tr·h + rs)·K)·dv = b; then v += dv and x += h·v.

use canape_core::component::{MechanicalOps, OdeSolver, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Real, Words};
use canape_core::scene::InitContext;
use canape_core::state::VecId;

canape_core::data_schema! {
    /// EulerImplicitSolver's Data.
    pub struct EulerImplicitData {
        rayleigh_stiffness: Real = ("rayleighStiffness", DataKind::Real, "0", "Rayleigh damping coefficient related to stiffness, > 0"),
        rayleigh_mass: Real = ("rayleighMass", DataKind::Real, "0", "Rayleigh damping coefficient related to mass, > 0"),
        vdamping: Real = ("vdamping", DataKind::Real, "0", "Velocity decay coefficient (no decay if null)"),
        first_order: Flag = ("firstOrder", DataKind::Bool, "0", "Use backward Euler scheme for first order ODE system"),
        trapezoidal_scheme: Flag = ("trapezoidalScheme", DataKind::Bool, "0", "Boolean to use the trapezoidal scheme instead of the implicit Euler scheme"),
        solve_constraint: Flag = ("solveConstraint", DataKind::Bool, "0", "Apply ConstraintSolver (requires a ConstraintSolver in the same node as this solver)"),
        thread_safe_visitor: Flag = ("threadSafeVisitor", DataKind::Bool, "0", "If true, do not use realloc and free visitors in fwdInteractionForceField"),
        compute_residual: Flag = ("computeResidual", DataKind::Bool, "0", "If true, the residual is computed at the end of the solving"),
        residual: Real = ("residual", DataKind::Real, "0", "Residual norm at the end of the free-motion solving"),
        print_log: Flag = ("printLog", DataKind::Bool, "0", "Print log messages"),
        tags: Words = ("tags", DataKind::Words, "", "Tags of the component"),
        listening: Flag = ("listening", DataKind::Bool, "0", "Listen to events"),
    }
}

#[derive(Clone)]
pub struct EulerImplicitSolver {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: EulerImplicitData,
    rayleigh_stiffness: f64,
    rayleigh_mass: f64,
    vdamping: f64,
    first_order: bool,
    trapezoidal: bool,
}

impl Default for EulerImplicitSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl EulerImplicitSolver {
    pub fn new() -> Self {
        let (data, d) = EulerImplicitData::declare(DataTable::new());
        EulerImplicitSolver {
            data,
            d,
            rayleigh_stiffness: 0.0,
            rayleigh_mass: 0.0,
            vdamping: 0.0,
            first_order: false,
            trapezoidal: false,
        }
    }

    /// The Data read at each solve: what init and an edit take from the table.
    fn in_place(&self) -> [usize; 5] {
        let d = &self.d;
        [
            d.rayleigh_stiffness.index(),
            d.rayleigh_mass.index(),
            d.vdamping.index(),
            d.first_order.index(),
            d.trapezoidal_scheme.index(),
        ]
    }

    /// Take the Rayleigh coefficients, the velocity decay and the scheme from the Data.
    fn read_params(&mut self) {
        let (t, d) = (&self.data, &self.d);
        self.rayleigh_stiffness = t.get(d.rayleigh_stiffness);
        self.rayleigh_mass = t.get(d.rayleigh_mass);
        self.vdamping = t.get(d.vdamping);
        self.first_order = t.get(d.first_order);
        self.trapezoidal = t.get(d.trapezoidal_scheme);
    }
}

impl EulerImplicitSolver {
    fn init_impl(&mut self, _ctx: &mut InitContext<'_>) {
        self.read_params();
    }

    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        if !changed.only(&self.in_place()) {
            return Reaction::Reinit;
        }
        self.read_params();
        Reaction::Updated
    }
}

canape_core::impl_component!(
    EulerImplicitSolver,
    "EulerImplicitSolver",
    init,
    data_changed
);

impl OdeSolver for EulerImplicitSolver {
    fn solve(&mut self, ops: &mut dyn MechanicalOps, dt: f64) {
        let h = dt;
        let tr = if self.trapezoidal { 0.5 } else { 1.0 };
        let (rs, rm) = (self.rayleigh_stiffness, self.rayleigh_mass);
        let f = VecId::FORCE;
        ops.compute_force(f);
        let b = ops.alloc();
        ops.v_eq(b, f);
        if !self.first_order {
            ops.add_mbk_v(b, VecId::VELOCITY, -rm, h * tr + rs);
            ops.v_teq(b, h);
        }
        ops.project_response(b);
        let (mf, bf, kf) = if self.first_order {
            (1.0, 0.0, -h * tr)
        } else {
            (1.0 + tr * h * rm, -tr * h, -tr * h * (tr * h + rs))
        };
        // the solution vector persists across steps: warm-started solvers (PCG, MinRes) start from
        // the previous step's dv, as in SOFA
        let x = ops.persistent(0);
        ops.solve_linear(mf, bf, kf, x, b);
        if self.first_order {
            ops.v_eq(VecId::VELOCITY, x);
        } else {
            ops.v_peq(VecId::VELOCITY, x, 1.0);
        }
        ops.v_peq(VecId::POSITION, VecId::VELOCITY, h);
        ops.add_separate_gravity(h);
        if self.vdamping != 0.0 {
            ops.v_teq(VecId::VELOCITY, (-h * self.vdamping).exp());
        }
        ops.free(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{edit, ode_initialised};
    use canape_core::component::SolveStats;
    use std::collections::BTreeMap;

    /// Two points of masses 1.5 and 0.7 joined by a spring, the first also tied to its rest
    /// position, under gravity: f = M g + K (x − x0); the first point is fixed when `fixed`.
    #[derive(Clone)]
    struct Springs {
        vecs: BTreeMap<VecId, Vec<f64>>,
        fixed: bool,
        next: u32,
    }

    const MASS: [f64; 2] = [1.5, 0.7];
    const K: [[f64; 2]; 2] = [[-1050.0, 1000.0], [1000.0, -1000.0]];
    const REST: [f64; 2] = [0.0, 1.0];

    impl Springs {
        fn new(fixed: bool) -> Self {
            let mut vecs = BTreeMap::new();
            vecs.insert(VecId::POSITION, vec![0.1, 1.3]);
            vecs.insert(VecId::VELOCITY, vec![0.2, -0.5]);
            Springs {
                vecs,
                fixed,
                next: VecId::FIRST_TEMP,
            }
        }
        fn get(&mut self, v: VecId) -> &mut Vec<f64> {
            self.vecs.entry(v).or_insert_with(|| vec![0.0; 2])
        }
        fn val(&mut self, v: VecId) -> Vec<f64> {
            self.get(v).clone()
        }
        /// Every vector's values, as bits.
        fn bits(&self) -> Vec<(VecId, Vec<u64>)> {
            self.vecs
                .iter()
                .map(|(k, v)| (*k, v.iter().map(|x| x.to_bits()).collect()))
                .collect()
        }
    }

    fn kv(v: &[f64]) -> [f64; 2] {
        [
            K[0][0] * v[0] + K[0][1] * v[1],
            K[1][0] * v[0] + K[1][1] * v[1],
        ]
    }

    impl MechanicalOps for Springs {
        fn alloc(&mut self) -> VecId {
            self.next += 1;
            let v = VecId(self.next);
            *self.get(v) = vec![0.0; 2];
            v
        }
        fn alloc_coord(&mut self) -> VecId {
            self.alloc()
        }
        fn free(&mut self, v: VecId) {
            self.vecs.remove(&v);
        }
        fn persistent(&mut self, key: u32) -> VecId {
            let v = VecId(VecId::FIRST_PERSISTENT + key);
            self.get(v);
            v
        }
        fn compute_force(&mut self, f: VecId) {
            let x = self.val(VecId::POSITION);
            let kx = kv(&[x[0] - REST[0], x[1] - REST[1]]);
            *self.get(f) = (0..2).map(|i| MASS[i] * -9.81 + kx[i]).collect();
        }
        fn add_mbk_v(&mut self, out: VecId, v: VecId, m: f64, k: f64) {
            let v = self.val(v);
            let k_v = kv(&v);
            for (i, o) in self.get(out).iter_mut().enumerate() {
                *o += m * MASS[i] * v[i] + k * k_v[i];
            }
        }
        fn add_mbk(&mut self, _: VecId, _: VecId, _: f64, _: f64, _: f64) {}
        fn project_response(&mut self, v: VecId) {
            if self.fixed {
                self.get(v)[0] = 0.0;
            }
        }
        fn accel_from_force(&mut self, _: VecId, _: VecId) {}
        fn compute_acc(&mut self, _: VecId, _: VecId, _: VecId, _: VecId) {}
        fn add_separate_gravity(&mut self, _: f64) {}
        fn v_eq(&mut self, a: VecId, b: VecId) {
            let b = self.val(b);
            *self.get(a) = b;
        }
        fn v_teq(&mut self, a: VecId, f: f64) {
            self.get(a).iter_mut().for_each(|x| *x *= f);
        }
        fn v_peq(&mut self, a: VecId, b: VecId, f: f64) {
            let b = self.val(b);
            for (x, y) in self.get(a).iter_mut().zip(b) {
                *x += y * f;
            }
        }
        fn v_threshold(&mut self, _: VecId, _: f64) {}
        fn v_op(&mut self, a: VecId, b: VecId, c: VecId, f: f64) {
            let (b, c) = (self.val(b), self.val(c));
            *self.get(a) = b.iter().zip(c).map(|(p, q)| p + q * f).collect();
        }
        fn dot(&mut self, a: VecId, b: VecId) -> f64 {
            let b = self.val(b);
            self.get(a).iter().zip(b).map(|(p, q)| p * q).sum()
        }
        /// (m M + k K) x = rhs (no damping matrix), an identity row at a fixed point.
        fn solve_linear(&mut self, m: f64, _b: f64, k: f64, x: VecId, rhs: VecId) -> SolveStats {
            let mut a = [[0.0; 2]; 2];
            for i in 0..2 {
                for j in 0..2 {
                    a[i][j] = k * K[i][j] + if i == j { m * MASS[i] } else { 0.0 };
                }
            }
            if self.fixed {
                a = [[1.0, 0.0], [0.0, a[1][1]]];
            }
            let r = self.val(rhs);
            let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
            *self.get(x) = vec![
                (r[0] * a[1][1] - a[0][1] * r[1]) / det,
                (a[0][0] * r[1] - a[1][0] * r[0]) / det,
            ];
            SolveStats::default()
        }
    }

    /// An EulerImplicitSolver with `attrs`, initialised in a scene of its own.
    fn solver(attrs: &[(&str, &str)]) -> EulerImplicitSolver {
        ode_initialised(EulerImplicitSolver::new(), attrs)
    }

    /// Editing the Rayleigh coefficients, vdamping, firstOrder or trapezoidalScheme of a
    /// running solver is taken in place: its next steps equal bit for bit those of a solver
    /// initialised with the new values; other Data re-initialise it.
    #[test]
    fn euler_implicit_edits_update_in_place() {
        let before = [("rayleighStiffness", "0.05"), ("rayleighMass", "0.1")];
        let edits: [&[(&str, &str)]; 5] = [
            &[("rayleighStiffness", "0.2")],
            &[("rayleighMass", "0.3"), ("vdamping", "2")],
            &[("vdamping", "0.5")],
            &[("firstOrder", "1")],
            &[("trapezoidalScheme", "1"), ("rayleighStiffness", "0")],
        ];
        for fixed in [false, true] {
            for after in edits {
                let mut ops = Springs::new(fixed);
                let mut s = solver(&before);
                s.solve(&mut ops, 0.01);
                assert_eq!(edit(&mut s, after), Reaction::Updated, "{after:?}");
                // the same state, stepped by a solver initialised with the new values and by
                // one left with the old ones
                let fresh_attrs = [before.as_slice(), after].concat();
                let (mut fresh, mut old) = (solver(&fresh_attrs), solver(&before));
                let (mut fresh_ops, mut old_ops) = (ops.clone(), ops.clone());
                for _ in 0..3 {
                    s.solve(&mut ops, 0.01);
                    fresh.solve(&mut fresh_ops, 0.01);
                    old.solve(&mut old_ops, 0.01);
                }
                assert_eq!(ops.bits(), fresh_ops.bits(), "{after:?}");
                assert_ne!(ops.bits(), old_ops.bits(), "{after:?} changed nothing");
            }
        }
        let r = edit(&mut solver(&before), &[("printLog", "1")]);
        assert_eq!(r, Reaction::Reinit);
    }
}
