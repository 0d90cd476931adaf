//! Constraint corrections (Sofa/Component/Constraint/Lagrangian/Correction):
//!
//! - UncoupledConstraintCorrection (UncoupledConstraintCorrection.inl/.cpp): a diagonal
//!   compliance per point. Vec types: `compliance` holds one value per point (or one for all),
//!   `defaultCompliance` (1e-5) otherwise. Rigid3 (the .cpp specialisation): 7 values, the
//!   translation's and the symmetric 3×3 rotational block's upper triangle, used for every
//!   point; when not given, 1/m and the inverse of the rotational mass block of the node's
//!   UniformMass (times dt² without the ODE solver's factors), or `defaultCompliance` for the
//!   translation and the identity for the rotation when `defaultCompliance` is given.
//!   W += factor·J C Jᵀ with factor the ODE solver's position factor
//!   (`useOdeSolverIntegrationFactors`, default) or 1; the correction C·Jᵀλ moves positions and
//!   velocities by the ODE solver's factors, or by `correctionPositionFactor` and
//!   `correctionVelocityFactor`/dt.
//! - LinearSolverConstraintCorrection (LinearSolverConstraintCorrection.inl) and
//!   GenericConstraintCorrection (GenericConstraintCorrection.cpp): the compliance is A⁻¹, the
//!   inverse of the free motion's system matrix, applied by the solver group's linear solver
//!   (one solve per constraint row, then one for the correction); GenericConstraintCorrection
//!   multiplies both factors by `complianceFactor`.

use crate::base_data;
use canape_core::component::{Passive, Reaction, Role};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Real, Reals, Text, Words};
use canape_core::impl_component;
use canape_core::lagrangian::{
    ConstraintCorrection, CorrectionKind, IntegrationFactors, StateRows,
};
use canape_core::matrix::MatrixSink;
use canape_core::scene::{ComponentId, InitContext};
use canape_types::DofType;
use nalgebra::Matrix3;

/// The first point's 6×6 mass block (Rigid3), read from a mass's assembled matrix.
struct FirstBlock([f64; 36]);

impl MatrixSink for FirstBlock {
    fn add(&mut self, row: usize, col: usize, v: f64) {
        if row < 6 && col < 6 {
            self.0[row * 6 + col] += v;
        }
    }
}

canape_core::data_schema! {
    /// UncoupledConstraintCorrection's own Data (after the base Data).
    pub struct UncoupledData {
        compliance: Reals = ("compliance", DataKind::Reals(0), "", "Rigid compliance value: 1st value for translations, 6 others for upper-triangular part of symmetric 3x3 rotation compliance matrix"),
        default_compliance: Real = ("defaultCompliance", DataKind::Real, "1e-05", "Default compliance value for new dof or if all should have the same (in which case compliance vector should be empty)"),
        verbose: Flag = ("verbose", DataKind::Bool, "0", "Dump the constraint matrix at each iteration"),
        correction_velocity_factor: Real = ("correctionVelocityFactor", DataKind::Real, "1", "Factor applied to the constraint forces when correcting the velocities"),
        correction_position_factor: Real = ("correctionPositionFactor", DataKind::Real, "1", "Factor applied to the constraint forces when correcting the positions"),
        use_ode_solver_integration_factors: Flag = ("useOdeSolverIntegrationFactors", DataKind::Bool, "1", "Use odeSolver integration factors instead of correctionVelocityFactor and correctionPositionFactor") alias ["useIntegrationSchemeIntegrationFactors"],
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

canape_core::data_schema! {
    /// The Data LinearSolverConstraintCorrection and GenericConstraintCorrection share (after
    /// the base Data).
    pub struct SolverCorrectionData {
        linear_solver: Text = ("linearSolver", DataKind::Str, "", "Link towards the linear solver used to compute the compliance matrix, requiring the LHS as input"),
        ode_solver: Text = ("ODESolver", DataKind::Str, "", "Link towards the ODE solver used to recover the integration factors"),
        regularization_term: Real = ("regularizationTerm", DataKind::Real, "0", "Add regularization factor times the identity matrix to the compliance W when solving constraints"),
    }
}

canape_core::data_schema! {
    /// What GenericConstraintCorrection adds to [`SolverCorrectionData`].
    pub struct GenericCorrectionData {
        compliance_factor: Real = ("complianceFactor", DataKind::Real, "1", "Factor applied to the position factor and velocity factor used to calculate compliance matrix"),
        linear_solvers_name: Words = ("linearSolversName", DataKind::Words, "", "name of the constraint solver"),
    }
}

canape_core::data_schema! {
    /// What LinearSolverConstraintCorrection adds to [`SolverCorrectionData`].
    pub struct LinearSolverCorrectionData {
        wire_optimization: Flag = ("wire_optimization", DataKind::Bool, "0", "constraints are reordered along a wire-like topology (from tip to base)"),
    }
}

#[derive(Clone)]
pub struct UncoupledConstraintCorrection {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: UncoupledData,
    state: Option<ComponentId>,
    dof: DofType,
    /// Vec types: one compliance per point; Rigid3: the 7 values.
    compliance: Vec<f64>,
    default: f64,
    use_ode: bool,
    position_factor: f64,
    velocity_factor: f64,
}

impl Default for UncoupledConstraintCorrection {
    fn default() -> Self {
        Self::new()
    }
}

impl UncoupledConstraintCorrection {
    pub fn new() -> Self {
        let (data, d) = UncoupledData::declare(base_data(DataTable::new()));
        UncoupledConstraintCorrection {
            data,
            d,
            state: None,
            dof: DofType::Vec3,
            compliance: Vec::new(),
            default: 1e-5,
            use_ode: true,
            position_factor: 1.0,
            velocity_factor: 1.0,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.state = None;
        self.compliance.clear();
        let Some(sid) = ctx.scene.context_state(ctx.node) else {
            ctx.error("no MechanicalObject in the context to correct");
            return;
        };
        let Some(st) = ctx.scene.state(sid) else {
            return;
        };
        self.dof = st.dof;
        let n = st.size();
        self.default = self.data.get(self.d.default_compliance);
        self.use_ode = self.data.get(self.d.use_ode_solver_integration_factors);
        self.position_factor = self.data.get(self.d.correction_position_factor);
        self.velocity_factor = self.data.get(self.d.correction_velocity_factor);
        let has_ode = ctx.scene.lineage(ctx.node).iter().any(|nd| {
            ctx.scene
                .node_components(*nd, Role::OdeSolver)
                .next()
                .is_some()
        });
        if self.use_ode && !has_ode {
            ctx.error("no ODE solver above this correction: its integration factors cannot be used (the correction factors are)");
            self.use_ode = false;
        }
        let given = self.data.get(self.d.compliance).to_vec();
        if given
            .iter()
            .chain([&self.default])
            .any(|c| *c == 0.0 || !c.is_finite())
        {
            ctx.error(
                "compliance values must be finite and non-zero: this correction corrects nothing",
            );
            return;
        }
        let default_set = self.data.was_set(self.d.default_compliance);
        match st.dof {
            DofType::Rigid3 => {
                if given.len() == 7 {
                    self.compliance = given;
                } else {
                    let dt = ctx.scene.node(ctx.scene.root()).dt;
                    let ode_factor = if self.use_ode { 1.0 } else { dt * dt };
                    let mut comp = vec![0.0; 7];
                    let mut rot = Matrix3::identity();
                    if default_set {
                        comp[0] = self.default;
                    } else {
                        let mass = ctx
                            .scene
                            .node_components(ctx.node, Role::Mass)
                            .find(|m| ctx.scene.info(*m).class == "UniformMass")
                            .and_then(|m| match ctx.scene.info(m).slot {
                                canape_core::scene::Slot::Mass(i) => ctx.scene.masses[i].as_ref(),
                                _ => None,
                            });
                        let Some(mass) = mass else {
                            ctx.error("a Rigid3 UncoupledConstraintCorrection needs 7 compliance values, a defaultCompliance or a UniformMass in its node");
                            return;
                        };
                        let mut b = FirstBlock([0.0; 36]);
                        mass.add_m_to_matrix(&mut b, 1.0, 0);
                        let m = b.0[0];
                        let block = Matrix3::from_fn(|r, c| b.0[(3 + r) * 6 + 3 + c]);
                        match (m != 0.0, block.try_inverse()) {
                            (true, Some(inv)) => {
                                comp[0] = ode_factor / m;
                                rot = inv;
                            }
                            _ => {
                                ctx.error("the UniformMass's rigid mass cannot be inverted: this correction corrects nothing");
                                return;
                            }
                        }
                    }
                    let r = [
                        rot[(0, 0)],
                        rot[(0, 1)],
                        rot[(0, 2)],
                        rot[(1, 1)],
                        rot[(1, 2)],
                        rot[(2, 2)],
                    ];
                    for (k, v) in r.iter().enumerate() {
                        comp[1 + k] = ode_factor * v;
                    }
                    self.compliance = comp;
                }
            }
            DofType::Rigid2 => {
                ctx.error("UncoupledConstraintCorrection does not act on Rigid2 states");
                return;
            }
            _ => {
                let mut comp = given;
                if comp.len() == 1 && default_set && comp[0] == self.default {
                    comp.clear();
                }
                if !comp.is_empty() && comp.len() != n {
                    let c0 = if default_set { self.default } else { comp[0] };
                    comp = vec![c0; n];
                }
                comp.resize(n, self.default);
                self.compliance = comp;
            }
        }
        self.state = Some(sid);
    }

    /// corr = C f for one point `i` (derivative block `f`).
    fn point(&self, i: usize, f: &[f64], out: &mut [f64]) {
        match self.dof {
            DofType::Rigid3 => {
                let c = &self.compliance;
                for k in 0..3 {
                    out[k] = c[0] * f[k];
                }
                let r = Matrix3::new(c[1], c[2], c[3], c[2], c[4], c[5], c[3], c[5], c[6]);
                for k in 0..3 {
                    out[3 + k] = (0..3).map(|m| r[(k, m)] * f[3 + m]).sum();
                }
            }
            _ => {
                let c = self.compliance.get(i).copied().unwrap_or(self.default);
                for (o, x) in out.iter_mut().zip(f) {
                    *o = c * x;
                }
            }
        }
    }
}

impl UncoupledConstraintCorrection {
    /// `correctionPositionFactor` and `correctionVelocityFactor` take effect in place; the
    /// rest (compliances, the integration factors' source) re-initialises.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        let in_place = [
            d.correction_position_factor.index(),
            d.correction_velocity_factor.index(),
        ];
        if !changed.only(&in_place) || self.state.is_none() {
            return Reaction::Reinit;
        }
        self.position_factor = self.data.get(d.correction_position_factor);
        self.velocity_factor = self.data.get(d.correction_velocity_factor);
        Reaction::Updated
    }
}

impl_component!(
    UncoupledConstraintCorrection,
    "UncoupledConstraintCorrection",
    init,
    data_changed
);

impl Passive for UncoupledConstraintCorrection {
    fn role(&self) -> Role {
        Role::Constraint
    }
    fn constraint_correction(&self) -> Option<&dyn ConstraintCorrection> {
        Some(self)
    }
}

impl ConstraintCorrection for UncoupledConstraintCorrection {
    fn state(&self) -> Option<ComponentId> {
        self.state
    }
    fn kind(&self) -> CorrectionKind {
        CorrectionKind::Uncoupled
    }
    fn add_compliance(&self, rows: &StateRows, ds: usize, factor: f64, n: usize, w: &mut [f64]) {
        // C Jᵀ of each row, point by point, then W_ab += factor · J_a · (C J_bᵀ)
        let ranges = rows.row_ranges();
        let mut cj: Vec<Vec<(u32, f64)>> = Vec::with_capacity(ranges.len());
        let mut f = vec![0.0; ds];
        let mut out = vec![0.0; ds];
        for &(_, a, b) in &ranges {
            let e = &rows.entries[a..b];
            let mut col = Vec::new();
            let mut k = 0;
            while k < e.len() {
                let p = e[k].1 as usize / ds;
                f.iter_mut().for_each(|x| *x = 0.0);
                while k < e.len() && e[k].1 as usize / ds == p {
                    f[e[k].1 as usize % ds] += e[k].2;
                    k += 1;
                }
                self.point(p, &f, &mut out);
                for (c, v) in out.iter().enumerate() {
                    if *v != 0.0 {
                        col.push(((p * ds + c) as u32, *v));
                    }
                }
            }
            cj.push(col);
        }
        for (ia, &(ra, a, b)) in ranges.iter().enumerate() {
            for (ib, &(rb, _, _)) in ranges.iter().enumerate().skip(ia) {
                // sorted merge of row a's entries with C J_bᵀ
                let (ea, eb) = (&rows.entries[a..b], &cj[ib]);
                let (mut i, mut j, mut s) = (0, 0, 0.0);
                while i < ea.len() && j < eb.len() {
                    match ea[i].1.cmp(&eb[j].0) {
                        std::cmp::Ordering::Less => i += 1,
                        std::cmp::Ordering::Greater => j += 1,
                        std::cmp::Ordering::Equal => {
                            s += ea[i].2 * eb[j].1;
                            i += 1;
                            j += 1;
                        }
                    }
                }
                if ia == ib {
                    w[ra * n + ra] += factor * s;
                } else if s != 0.0 {
                    w[ra * n + rb] += factor * s;
                    w[rb * n + ra] += factor * s;
                }
            }
        }
    }
    fn apply_compliance(&self, f: &[f64], ds: usize, corr: &mut [f64]) {
        for (p, (fb, cb)) in f.chunks(ds).zip(corr.chunks_mut(ds)).enumerate() {
            self.point(p, fb, cb);
        }
    }
    fn factors(&self, ode: IntegrationFactors, dt: f64) -> IntegrationFactors {
        if self.use_ode {
            ode
        } else {
            IntegrationFactors {
                position: self.position_factor,
                velocity: self.velocity_factor / dt,
            }
        }
    }
    fn w_factor(&self, ode: IntegrationFactors) -> f64 {
        if self.use_ode {
            ode.position
        } else {
            1.0
        }
    }
}

/// LinearSolverConstraintCorrection and GenericConstraintCorrection: the compliance is the
/// inverse of the solver group's system matrix.
#[derive(Clone)]
pub struct LinearSolverConstraintCorrection {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: SolverCorrectionData,
    /// GenericConstraintCorrection's Data.
    generic: Option<GenericCorrectionData>,
    class: &'static str,
    state: Option<ComponentId>,
    compliance_factor: f64,
}

impl LinearSolverConstraintCorrection {
    pub fn new(class: &'static str) -> Self {
        let (data, d) = SolverCorrectionData::declare(base_data(DataTable::new()));
        // LinearSolverConstraintCorrection's `wire_optimization` is declared, never read
        let (data, generic) = if class == "GenericConstraintCorrection" {
            let (data, g) = GenericCorrectionData::declare(data);
            (data, Some(g))
        } else {
            (LinearSolverCorrectionData::declare(data).0, None)
        };
        LinearSolverConstraintCorrection {
            data,
            d,
            generic,
            class,
            state: None,
            compliance_factor: 1.0,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.state = ctx.scene.context_state(ctx.node);
        if self.state.is_none() {
            ctx.error("no MechanicalObject in the context to correct");
        }
        let has_linear = ctx.scene.lineage(ctx.node).iter().any(|nd| {
            ctx.scene
                .node_components(*nd, Role::LinearSolver)
                .next()
                .is_some()
        });
        if !has_linear {
            ctx.error(format!(
                "{} needs a linear solver in its context (it applies the inverse of the system matrix)",
                self.class
            ));
        }
        if let Some(g) = self.generic {
            self.compliance_factor = self.data.get(g.compliance_factor);
        }
        if self.data.get(self.d.regularization_term) != 0.0 {
            ctx.warn("regularizationTerm is not applied by this correction yet (set it on the constraint solver)");
        }
    }
}

impl_component!(LinearSolverConstraintCorrection, |s| s.class, init);

impl Passive for LinearSolverConstraintCorrection {
    fn role(&self) -> Role {
        Role::Constraint
    }
    fn constraint_correction(&self) -> Option<&dyn ConstraintCorrection> {
        Some(self)
    }
}

impl ConstraintCorrection for LinearSolverConstraintCorrection {
    fn state(&self) -> Option<ComponentId> {
        self.state
    }
    fn kind(&self) -> CorrectionKind {
        CorrectionKind::LinearSolver
    }
    fn factors(&self, ode: IntegrationFactors, _dt: f64) -> IntegrationFactors {
        IntegrationFactors {
            position: ode.position * self.compliance_factor,
            velocity: ode.velocity * self.compliance_factor,
        }
    }
    fn w_factor(&self, ode: IntegrationFactors) -> f64 {
        ode.position * self.compliance_factor
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{check_edit_changes, edit, init_quiet, scene_with_state};
    use canape_core::scene::AnyComponent;

    /// What the constraint stage takes from a correction: its factors (for an ODE solver's
    /// 0.25 and 2 at dt 0.01), its W factor and the compliance applied to a force, as bits.
    fn corrects(c: &UncoupledConstraintCorrection) -> Vec<u64> {
        let ode = IntegrationFactors {
            position: 0.25,
            velocity: 2.0,
        };
        let f = c.factors(ode, 0.01);
        let mut corr = vec![0.0; 6];
        c.apply_compliance(&[1.0, -2.0, 0.5, 0.0, 3.0, 1.0], 3, &mut corr);
        [f.position, f.velocity, c.w_factor(ode)]
            .iter()
            .chain(&corr)
            .map(|v| v.to_bits())
            .collect()
    }

    /// Editing the correction factors of an initialised UncoupledConstraintCorrection gives
    /// the corrections an init with the new values gives; other Data re-initialise it.
    #[test]
    fn edits_update_in_place_uncoupled_correction_factors() {
        let (mut scene, root) = scene_with_state(DofType::Vec3, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        let wrap = |c| AnyComponent::Passive(Box::new(c));
        let new = UncoupledConstraintCorrection::new;
        let mut init = |attrs: &[(&str, &str)]| init_quiet(&mut scene, root, new(), wrap, attrs);
        let before = [
            ("useOdeSolverIntegrationFactors", "0"),
            ("compliance", "0.5 2"),
        ];
        for after in [
            &[("correctionPositionFactor", "0.3")][..],
            &[
                ("correctionVelocityFactor", "4"),
                ("correctionPositionFactor", "2"),
            ],
        ] {
            let c = init(&before);
            let fresh = || init(&[&before[..], after].concat());
            let r = check_edit_changes(c, after, fresh, |c| corrects(c), false);
            assert_eq!(r, Reaction::Updated, "{after:?}");
        }
        let r = edit(&mut init(&before), &[("compliance", "1")]);
        assert_eq!(r, Reaction::Reinit);
    }

    #[test]
    fn uncoupled_w_is_factor_j_c_jt() {
        let mut c = UncoupledConstraintCorrection::new();
        c.dof = DofType::Vec3;
        c.compliance = vec![2.0, 3.0];
        // rows: r0 = (x of point 0) − (x of point 1); r1 = y of point 1
        let rows = StateRows {
            entries: vec![(0, 0, 1.0), (0, 3, -1.0), (1, 4, 1.0)],
        };
        let mut w = vec![0.0; 4];
        c.add_compliance(&rows, 3, 0.5, 2, &mut w);
        assert_eq!(w, vec![0.5 * (2.0 + 3.0), 0.0, 0.0, 0.5 * 3.0]);
        let mut corr = vec![0.0; 6];
        c.apply_compliance(&[1.0, 0.0, 0.0, 0.0, 2.0, 0.0], 3, &mut corr);
        assert_eq!(corr, vec![2.0, 0.0, 0.0, 0.0, 6.0, 0.0]);
    }

    #[test]
    fn uncoupled_rigid_uses_the_symmetric_rotation_block() {
        let mut c = UncoupledConstraintCorrection::new();
        c.dof = DofType::Rigid3;
        c.compliance = vec![10.0, 1.0, 0.5, 0.0, 2.0, 0.0, 3.0];
        let mut corr = vec![0.0; 6];
        c.apply_compliance(&[1.0, 1.0, 1.0, 1.0, 1.0, 0.0], 6, &mut corr);
        assert_eq!(corr, vec![10.0, 10.0, 10.0, 1.5, 2.5, 0.0]);
    }
}
