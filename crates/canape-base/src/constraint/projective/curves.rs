//! Projective constraints along prescribed paths and directions:
//!
//! - FixedRotationProjectiveConstraint (Sofa/Component/Constraint/Projective/.../
//!   FixedRotationProjectiveConstraint.{h,inl,cpp}): Rigid3 frames keep, about the chosen world
//!   axes, the rotation they had at init.
//! - ParabolicProjectiveConstraint (…/ParabolicProjectiveConstraint.{h,inl,cpp}) and
//!   HermiteSplineProjectiveConstraint (…/HermiteSplineProjectiveConstraint.{h,inl,cpp}): between
//!   a begin and an end time the chosen points follow a parabola through three points / a cubic
//!   Hermite spline; outside that window they are free.
//! - DirectionProjectiveConstraint (…/DirectionProjectiveConstraint.{h,inl,cpp}): the chosen
//!   points move only along a direction, on the line through their initial positions.
//!
//! None of them acts on an assembled matrix (`fixed_scalar_dofs` is empty): SOFA implements no
//! `applyConstraint` for the first three, and DirectionProjectiveConstraint's only reports that
//! it is not implemented (its projection P·M·P is not an identity row/column either). With an
//! iterative solver the projected right-hand side and products do the work; the positions and
//! velocities are projected after each step in every case.
//!
//! Time-dependent ones read the step's start time (`set_time`), SOFA's context time during the
//! solve and the projections that follow it.

mod curve;
mod direction;
mod fixed_rotation;

pub use curve::CurveProjectiveConstraint;
pub use direction::DirectionProjectiveConstraint;
pub use fixed_rotation::FixedRotationProjectiveConstraint;

use canape_core::data::{Data, DataTable, Reals};
use canape_core::registry::{Registry, TemplateError};
use canape_core::scene::{AnyComponent, InitContext};
use canape_types::{DofType, Vec3};
// what the tests reach through `use super::*`
#[cfg(test)]
use canape_core::component::ProjectiveConstraint;
#[cfg(test)]
use canape_types::dof::{quat_of, set_quat};
#[cfg(test)]
use canape_types::nalgebra::Quaternion;
#[cfg(test)]
use canape_types::{DataTypes, Rigid3Types};

/// Register this module's classes.
pub(crate) fn register(r: &mut Registry) {
    r.register(
        "FixedRotationProjectiveConstraint",
        "keeps the initial rotation of Rigid3 frames about chosen world axes",
        |class, t| {
            template_among(t, class, &[DofType::Rigid3])?;
            Ok(AnyComponent::Projective(Box::new(
                FixedRotationProjectiveConstraint::new(),
            )))
        },
    );
    r.register(
        "ParabolicProjectiveConstraint",
        "moves points along a parabola through P1, P2, P3 between BeginTime and EndTime",
        |class, t| {
            template_among(t, class, &[DofType::Vec3, DofType::Rigid3])?;
            Ok(AnyComponent::Projective(Box::new(
                CurveProjectiveConstraint::parabolic(),
            )))
        },
    );
    r.register(
        "HermiteSplineProjectiveConstraint",
        "moves points along a cubic Hermite spline between BeginTime and EndTime",
        |class, t| {
            template_among(t, class, &[DofType::Vec3, DofType::Rigid3])?;
            Ok(AnyComponent::Projective(Box::new(
                CurveProjectiveConstraint::hermite_spline(),
            )))
        },
    );
    r.register(
        "DirectionProjectiveConstraint",
        "lets points move only along a direction, through their initial positions",
        |class, t| {
            template_among(t, class, &[DofType::Vec3, DofType::Vec2])?;
            Ok(AnyComponent::Projective(Box::new(
                DirectionProjectiveConstraint::new(),
            )))
        },
    );
}

/// Accept a template whose DOF type (its first part) is one of `allowed`, the types SOFA
/// instantiates the class for. An empty template is accepted: the component then has no
/// context state, which its init reports.
fn template_among(
    template: &str,
    class: &str,
    allowed: &'static [DofType],
) -> Result<(), TemplateError> {
    let first = template.split(',').next().unwrap_or("").trim();
    if first.is_empty() {
        return Ok(());
    }
    match DofType::from_template(first) {
        Some(d) if allowed.contains(&d) => Ok(()),
        Some(d) => Err(TemplateError::NotDefinedFor {
            template: template.to_string(),
            dof: d.name(),
            class: class.to_string(),
            allowed,
        }),
        None => Err(TemplateError::UnknownDof {
            template: template.to_string(),
            allowed,
        }),
    }
}

/// The context state's DOF type and size when it is one of `allowed` (reported otherwise).
fn context_state(
    ctx: &mut InitContext<'_>,
    class: &str,
    allowed: &[DofType],
) -> Option<(DofType, usize)> {
    let Some(st) = ctx.state() else {
        ctx.error("no MechanicalObject in the context to constrain");
        return None;
    };
    if !allowed.contains(&st.dof) {
        let names: Vec<&str> = allowed.iter().map(|d| d.name()).collect();
        ctx.error(format!(
            "{class} does not act on {} states (only {})",
            st.dof.name(),
            names.join(" and ")
        ));
        return None;
    }
    Some((st.dof, st.size()))
}

/// The Data of `h` as `n` finite numbers (reported otherwise, under the Data's name).
fn finite_vector(
    ctx: &mut InitContext<'_>,
    data: &DataTable,
    h: Data<Reals>,
    n: usize,
) -> Option<Vec<f64>> {
    let v = data.get(h);
    if v.len() != n || v.iter().any(|x| !x.is_finite()) {
        let name = data.fields()[h.index()].name;
        ctx.error(format!(
            "{name} needs {n} finite numbers ({} given: {v:?})",
            v.len()
        ));
        return None;
    }
    Some(v.to_vec())
}

fn vec3(v: &[f64]) -> Vec3 {
    Vec3::new(v[0], v[1], v[2])
}

/// Overwrite the first three scalars of block `i` of a flat buffer whose blocks have `stride`
/// scalars: a Vec3 point, a Rigid3 center or the linear part of a Rigid3 derivative.
fn set_translation(buf: &mut [f64], stride: usize, i: u32, v: &Vec3) {
    let o = stride * i as usize;
    if let Some(b) = buf.get_mut(o..o + 3) {
        b.copy_from_slice(v.as_slice());
    }
}

#[cfg(test)]
mod tests;
