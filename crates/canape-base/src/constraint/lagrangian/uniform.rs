//! UniformLagrangianConstraint (Sofa/Component/Constraint/Lagrangian/Model/.../
//! UniformLagrangianConstraint.inl): every scalar of its state is held at 0 (or at its rest value
//! with `constrainToRestPos`) by one Lagrangian row each: row (i, j) is the unit derivative of
//! point i's component j, its violation the free position's component (minus the rest one).
//! `iterative` (the default) resolves each row on its own (BilateralConstraintResolution);
//! otherwise all the rows form one block solved by a factorization of its W block
//! (BilateralConstraintResolutionNDof). Neither keeps impulses from one step to the next.
//!
//! Typically on a Vec1 state mapped from the mechanics (DistanceMapping: inextensible edges).
//! Vec1, Vec2 and Vec3 states. At the velocity level (solveVelocityConstraintFirst) the
//! violation is v_free + (x_t − rest)/dt, as SOFA's.

use crate::base_data;
use canape_core::component::{Passive, Role};
use canape_core::data::{DataKind, DataTable, Flag, Int, Real, Text};
use canape_core::impl_component;
use canape_core::lagrangian::{
    ConstraintBuild, ConstraintInputs, ConstraintOrder, LagrangianConstraint, Resolution,
};
use canape_core::scene::{ComponentId, InitContext};
use canape_core::state::VecId;
use canape_types::DofType;

canape_core::data_schema! {
    /// UniformLagrangianConstraint's own Data (after the base Data).
    pub struct UniformLagrangianData {
        iterative: Flag = ("iterative", DataKind::Bool, "1", "Iterate over the bilateral constraints, otherwise a block factorisation is computed."),
        constrain_to_rest_pos: Flag = ("constrainToRestPos", DataKind::Bool, "0", "if false, constrains the pos to be zero / if true constraint the current position to stay at rest position"),
        constraint_index: Int = ("constraintIndex", DataKind::Int, "0", "Constraint index (first index in the right hand term resolution vector)"),
        end_time: Real = ("endTime", DataKind::Real, "-1", "The constraint stops acting after the given value. Use a negative value for infinite constraints"),
        mstate: Text = ("mstate", DataKind::Str, "", "MechanicalState used by this component"),
    }
}

#[derive(Clone)]
pub struct UniformLagrangianConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: UniformLagrangianData,
    state: Option<ComponentId>,
    /// Scalars per point (coordinate = derivative size for the Vec types).
    width: usize,
    iterative: bool,
    /// The rest values (`constrainToRestPos`), else empty.
    rest: Vec<f64>,
    /// Scratch: this step's violations.
    violation: Vec<f64>,
}

impl Default for UniformLagrangianConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl UniformLagrangianConstraint {
    pub fn new() -> Self {
        let (data, d) = UniformLagrangianData::declare(base_data(DataTable::new()));
        UniformLagrangianConstraint {
            data,
            d,
            state: None,
            width: 1,
            iterative: true,
            rest: Vec::new(),
            violation: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.state = None;
        let Some(id) = ctx.scene.context_state(ctx.node) else {
            ctx.error("no MechanicalObject in the context to constrain");
            return;
        };
        let st = ctx.scene.state(id).expect("state");
        self.width = match st.dof {
            DofType::Vec1 => 1,
            DofType::Vec2 => 2,
            DofType::Vec3 => 3,
            other => {
                ctx.error(format!(
                    "UniformLagrangianConstraint acts on Vec1, Vec2 or Vec3 states here; this one is {}",
                    other.name()
                ));
                return;
            }
        };
        if self.data.get(self.d.end_time) >= 0.0 {
            ctx.warn("endTime is not supported: the constraint acts for the whole simulation");
        }
        self.iterative = self.data.get(self.d.iterative);
        self.rest = if self.data.get(self.d.constrain_to_rest_pos) {
            st.vec(VecId::REST_POSITION).to_vec()
        } else {
            Vec::new()
        };
        self.state = Some(id);
    }
}

impl_component!(
    UniformLagrangianConstraint,
    "UniformLagrangianConstraint",
    init
);

impl Passive for UniformLagrangianConstraint {
    fn role(&self) -> Role {
        Role::Constraint
    }
    fn lagrangian_constraint(&mut self) -> Option<&mut dyn LagrangianConstraint> {
        Some(self)
    }
}

impl LagrangianConstraint for UniformLagrangianConstraint {
    fn sides(&self) -> [Option<ComponentId>; 2] {
        [self.state, None]
    }
    fn build(&mut self, inputs: &ConstraintInputs<'_>, out: &mut ConstraintBuild) {
        if self.state.is_none() {
            return;
        }
        let rest = |k: usize| self.rest.get(k).copied().unwrap_or(0.0);
        self.violation.clear();
        if inputs.order == ConstraintOrder::Velocity {
            let (x, v) = (inputs.x[0], inputs.v_free[0]);
            self.violation.extend(
                v.iter()
                    .zip(x)
                    .enumerate()
                    .map(|(k, (v, x))| v + (x - rest(k)) / inputs.dt),
            );
        } else {
            let x = inputs.x_free[0];
            self.violation
                .extend(x.iter().enumerate().map(|(k, v)| v - rest(k)));
        }
        let n = self.violation.len();
        if n == 0 {
            return;
        }
        if self.iterative {
            for k in 0..n {
                let r = out.block(
                    Resolution::Bilateral { rows: 1 },
                    &self.violation[k..=k],
                    &[],
                );
                out.entry(r, 0, k, 1.0);
            }
        } else {
            let r0 = out.block(
                Resolution::BilateralBlock { rows: n as u32 },
                &self.violation,
                &[],
            );
            for k in 0..n {
                out.entry(r0 + k, 0, k, 1.0);
            }
        }
    }
}
