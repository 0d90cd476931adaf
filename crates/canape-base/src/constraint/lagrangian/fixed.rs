//! FixedLagrangianConstraint (Sofa/Component/Constraint/Lagrangian/Model/.../
//! FixedLagrangianConstraint.inl and .cpp): the listed points (or all with `fixAll`) are held
//! at their rest positions by Lagrangian rows instead of a projection.
//!
//! Vec3: three rows per point (the unit directions), violation x_free − x_rest, one 3-line
//! bilateral block warm started from the last step's impulses. Rigid3: six rows (translation,
//! then rotation about the world axes), violations c_free − c_rest and the rotation vector of
//! q_free · q_rest⁻¹, two warm-started 3-line blocks.

use super::bilateral::rotation_vector;
use crate::base_data;
use canape_core::component::{Passive, Role};
use canape_core::data::{DataKind, DataTable, Flag, Ints, Text};
use canape_core::impl_component;
use canape_core::lagrangian::{
    ConstraintBuild, ConstraintInputs, LagrangianConstraint, Resolution,
};
use canape_core::scene::{ComponentId, InitContext};
use canape_core::state::VecId;
use canape_types::dof::quat_of;
use canape_types::DofType;

canape_core::data_schema! {
    /// FixedLagrangianConstraint's own Data (after the base Data).
    pub struct FixedLagrangianData {
        indices: Ints = ("indices", DataKind::Ints(0), "", "Indices of points to fix"),
        fix_all: Flag = ("fixAll", DataKind::Bool, "0", "If true, fix all points"),
        mstate: Text = ("mstate", DataKind::Str, "", "MechanicalState used by this component"),
    }
}

#[derive(Clone)]
pub struct FixedLagrangianConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: FixedLagrangianData,
    state: Option<ComponentId>,
    dof: DofType,
    /// The fixed points and their rest coordinates (3 or 7 numbers each).
    points: Vec<(usize, Vec<f64>)>,
    /// Last step's impulses per point (3 or 6 numbers each): the warm start.
    prev: Vec<f64>,
}

impl Default for FixedLagrangianConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl FixedLagrangianConstraint {
    pub fn new() -> Self {
        let (data, d) = FixedLagrangianData::declare(base_data(DataTable::new()));
        FixedLagrangianConstraint {
            data,
            d,
            state: None,
            dof: DofType::Vec3,
            points: Vec::new(),
            prev: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.state = None;
        self.points.clear();
        let Some(id) = ctx.scene.context_state(ctx.node) else {
            ctx.error("no MechanicalObject in the context to fix");
            return;
        };
        let st = ctx.scene.state(id).expect("state");
        if !matches!(st.dof, DofType::Vec3 | DofType::Rigid3) {
            ctx.error(format!(
                "FixedLagrangianConstraint acts on Vec3 or Rigid3 states; this one is {}",
                st.dof.name()
            ));
            return;
        }
        let (n, cs) = (st.size(), st.dof.coord_size());
        let rest = st.vec(VecId::REST_POSITION);
        let indices: Vec<usize> = if self.data.get(self.d.fix_all) {
            (0..n).collect()
        } else {
            let (kept, dropped): (Vec<usize>, Vec<usize>) = self
                .data
                .get(self.d.indices)
                .iter()
                .map(|&i| i as usize)
                .partition(|&i| i < n);
            if !dropped.is_empty() {
                ctx.error(format!(
                    "indices {dropped:?} are out of range (the state has {n} points) and are ignored"
                ));
            }
            kept
        };
        self.dof = st.dof;
        self.points = indices
            .into_iter()
            .map(|i| (i, rest[cs * i..cs * (i + 1)].to_vec()))
            .collect();
        self.prev = vec![0.0; self.points.len() * st.dof.deriv_size()];
        self.state = Some(id);
    }
}

impl_component!(FixedLagrangianConstraint, "FixedLagrangianConstraint", init);

impl Passive for FixedLagrangianConstraint {
    fn role(&self) -> Role {
        Role::Constraint
    }
    fn lagrangian_constraint(&mut self) -> Option<&mut dyn LagrangianConstraint> {
        Some(self)
    }
}

impl LagrangianConstraint for FixedLagrangianConstraint {
    fn sides(&self) -> [Option<ComponentId>; 2] {
        [self.state, None]
    }
    fn build(&mut self, inputs: &ConstraintInputs<'_>, out: &mut ConstraintBuild) {
        if self.state.is_none() {
            return;
        }
        let x = inputs.x_free[0];
        let (cs, ds) = (self.dof.coord_size(), self.dof.deriv_size());
        for (k, (i, rest)) in self.points.iter().enumerate() {
            let Some(c) = x.get(cs * i..cs * (i + 1)) else {
                continue;
            };
            let prev = &self.prev[ds * k..ds * (k + 1)];
            let dp: [f64; 3] = std::array::from_fn(|a| c[a] - rest[a]);
            let r0 = out.block(Resolution::Bilateral { rows: 3 }, &dp, &prev[..3]);
            for a in 0..3 {
                out.entry(r0 + a, 0, ds * i + a, 1.0);
            }
            if let (Ok(c), Ok(rest)) = (<&[f64; 7]>::try_from(c), <&[f64; 7]>::try_from(&rest[..]))
            {
                let (q, q0) = (quat_of(c), quat_of(rest));
                let diff = q * q0.conjugate() / q0.norm_squared();
                let dr = rotation_vector(&diff);
                let r1 = out.block(Resolution::Bilateral { rows: 3 }, &dr, &prev[3..]);
                for a in 0..3 {
                    out.entry(r1 + a, 0, ds * i + 3 + a, 1.0);
                }
            }
        }
    }
    fn store(&mut self, impulses: &[f64]) {
        let n = self.prev.len().min(impulses.len());
        self.prev[..n].copy_from_slice(&impulses[..n]);
    }
}
