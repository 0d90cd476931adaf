//! FixedRotationProjectiveConstraint: Rigid3 frames keep, about chosen world axes, the twist
//! they had at init; with SOFA's quaternion normalisation, inverse and swing–twist split.

use super::context_state;
use crate::base_data;
use canape_core::component::ProjectiveConstraint;
use canape_core::data::{DataKind, DataTable, Flag};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_core::state::VecId;
use canape_types::dof::{quat_of, set_quat};
use canape_types::nalgebra::Quaternion;
use canape_types::{DataTypes, DofType, Rigid3Types};

/// SOFA's quaternion normalisation: left as it is within 1e-10 of unit squared norm, and the
/// zero quaternion becomes the identity.
fn normalized(q: Quaternion<f64>) -> Quaternion<f64> {
    let n2 = q.norm_squared();
    if (n2 - 1.0).abs() <= 1e-10 {
        q
    } else if n2 == 0.0 {
        Quaternion::identity()
    } else {
        q * (1.0 / n2.sqrt())
    }
}

/// SOFA's quaternion inverse: the conjugate divided by the norm (the two agree on unit
/// quaternions, which is all it is given here).
fn inverse(q: Quaternion<f64>) -> Quaternion<f64> {
    let n = q.norm();
    if n == 0.0 {
        Quaternion::new(0.0, 0.0, 0.0, 0.0)
    } else {
        q.conjugate() * (1.0 / n)
    }
}

/// Swing–twist decomposition of `q` about world axis `axis` (0, 1, 2): `q = swing · twist`,
/// the twist a rotation about the axis (the identity when `q` is a half turn about an axis
/// perpendicular to it, where the twist is undefined).
fn twist_and_swing(q: Quaternion<f64>, axis: usize) -> (Quaternion<f64>, Quaternion<f64>) {
    let mut v = [0.0; 3];
    v[axis] = q.coords[axis];
    let twist = Quaternion::new(q.w, v[0], v[1], v[2]);
    let twist = normalized(if twist == Quaternion::new(0.0, 0.0, 0.0, 0.0) {
        Quaternion::identity()
    } else {
        twist
    });
    let swing = normalized(q * inverse(twist));
    (twist, swing)
}

/// The orientation `q` with its twists about the `fixed` world axes (X, then Y, then Z)
/// replaced by those of `initial`.
fn keep_twists(q: Quaternion<f64>, initial: Quaternion<f64>, fixed: [bool; 3]) -> Quaternion<f64> {
    let (mut current, mut reference) = (q, initial);
    let mut kept = Quaternion::identity();
    for axis in (0..3).filter(|&a| fixed[a]) {
        current = twist_and_swing(current, axis).1;
        let (twist, rest) = twist_and_swing(reference, axis);
        reference = rest;
        kept = twist * kept;
    }
    current * kept
}

canape_core::data_schema! {
    /// FixedRotationProjectiveConstraint's own Data (after the base Data).
    pub struct FixedRotationData {
        fixed_x: Flag = ("FixedXRotation", DataKind::Bool, "0", "Prevent Rotation around X axis"),
        fixed_y: Flag = ("FixedYRotation", DataKind::Bool, "0", "Prevent Rotation around Y axis"),
        fixed_z: Flag = ("FixedZRotation", DataKind::Bool, "0", "Prevent Rotation around Z axis"),
    }
}

/// FixedRotationProjectiveConstraint (Sofa/Component/Constraint/Projective/.../
/// FixedRotationProjectiveConstraint.inl; Rigid3 only): every frame of the state keeps, about
/// each world axis whose flag is set, the twist its orientation had at init; the rest of its
/// rotation (the swing) is the current one. As in SOFA only positions are projected: derivatives
/// and velocities are left alone (an angular velocity about a fixed axis is not removed, its
/// effect on the orientation is undone after each step), and neither is an assembled matrix.
#[derive(Clone)]
pub struct FixedRotationProjectiveConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: FixedRotationData,
    fixed: [bool; 3],
    /// Orientation of each frame at init.
    initial: Vec<Quaternion<f64>>,
}

impl Default for FixedRotationProjectiveConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl FixedRotationProjectiveConstraint {
    pub fn new() -> Self {
        let (data, d) = FixedRotationData::declare(base_data(DataTable::new()));
        FixedRotationProjectiveConstraint {
            data,
            d,
            fixed: [false; 3],
            initial: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.initial.clear();
        let class = "FixedRotationProjectiveConstraint";
        if context_state(ctx, class, &[DofType::Rigid3]).is_none() {
            return;
        }
        let Some(st) = ctx.state() else {
            return;
        };
        self.fixed = [
            self.data.get(self.d.fixed_x),
            self.data.get(self.d.fixed_y),
            self.data.get(self.d.fixed_z),
        ];
        self.initial = Rigid3Types::coords(st.vec(VecId::POSITION))
            .iter()
            .map(quat_of)
            .collect();
    }
}

impl_component!(
    FixedRotationProjectiveConstraint,
    "FixedRotationProjectiveConstraint",
    init
);

impl ProjectiveConstraint for FixedRotationProjectiveConstraint {
    fn project_response(&self, _dx: &mut [f64]) {}
    fn project_position(&self, x: &mut [f64]) {
        if !self.fixed.contains(&true) {
            return;
        }
        for (c, q0) in Rigid3Types::coords_mut(x).iter_mut().zip(&self.initial) {
            let q = keep_twists(quat_of(c), *q0, self.fixed);
            set_quat(c, &q);
        }
    }
    fn fixed_scalar_dofs(&self, _deriv_size: usize) -> Vec<usize> {
        Vec::new()
    }
}
