//! Penalty obstacles of a single state (Sofa/Component/MechanicalLoad): SphereForceField,
//! EllipsoidForceField and ConicalForceField. Each pushes the points of its context state that
//! are on the wrong side of a fixed shape back to it with a stiffness and a damping, and keeps
//! the contacts found by the last `add_force`: the tangent (`add_dforce`, `add_k_to_matrix`)
//! acts on those points only, with the matrix SOFA uses (the exact derivative for the sphere,
//! SOFA's approximations for the ellipsoid and the cone: see each type).
//!
//! SOFA instantiates SphereForceField and EllipsoidForceField on Vec1, Vec2 and Vec3
//! ([`vec_template`]) and ConicalForceField on Vec3 only. A point exactly at the centre of the
//! sphere or of the ellipsoid has no direction to be pushed along: SOFA computes NaN there, we
//! leave the point alone.
//!
//! Invalid shapes (a radius ≤ 0, a centre that is not finite or has the wrong number of values,
//! a zero cone height, an angle outside ]0, 180[) are errors and leave the component without
//! effect; a negative stiffness (sphere, cone) or damping is replaced by SOFA's default with a
//! warning.

mod conical;
mod ellipsoid;
mod sphere;

pub use conical::ConicalForceField;
pub use ellipsoid::EllipsoidForceField;
pub use sphere::SphereForceField;

use canape_core::component::Reaction;
use canape_core::data::{ChangedData, Data, DataTable, Real, Reals};
use canape_core::registry::TemplateError;
use canape_core::scene::InitContext;
use canape_types::DofType;
// what the tests reach through `use super::*`
#[cfg(test)]
use canape_core::component::ForceField;

/// The template check of SphereForceField and EllipsoidForceField (and of ConicalForceField
/// with `vec3` set): SOFA instantiates them on Vec1, Vec2 and Vec3 (the cone on Vec3 alone).
pub fn vec_template(template: &str, class: &str, vec3: bool) -> Result<(), TemplateError> {
    let first = template.split(',').next().unwrap_or("");
    let supported = if vec3 {
        "Vec3d"
    } else {
        "Vec1d, Vec2d or Vec3d"
    };
    match DofType::from_template(first) {
        Some(DofType::Vec3) => Ok(()),
        Some(DofType::Vec1 | DofType::Vec2) if !vec3 => Ok(()),
        Some(d) => Err(TemplateError::NotSofaInstance {
            template: template.to_string(),
            dof: d.name(),
            class: class.to_string(),
            supported,
        }),
        None => Err(TemplateError::UnknownFor {
            template: template.to_string(),
            class: class.to_string(),
            supported,
        }),
    }
}

/// The spatial dimension of the context state, which must be Vec1, Vec2 or Vec3 (Vec3 alone
/// with `vec3`); None (reported) otherwise.
fn vec_state(ctx: &mut InitContext<'_>, class: &str, vec3: bool) -> Option<usize> {
    let Some(st) = ctx.state() else {
        ctx.error("no MechanicalObject in the context");
        return None;
    };
    let dims = match st.dof {
        DofType::Vec1 if !vec3 => 1,
        DofType::Vec2 if !vec3 => 2,
        DofType::Vec3 => 3,
        d => {
            let supported = if vec3 { "Vec3" } else { "Vec1, Vec2 or Vec3" };
            ctx.error(format!(
                "{class} acts on {supported} states ({} given)",
                d.name()
            ));
            return None;
        }
    };
    Some(dims)
}

/// The name of the Data of `h`, for messages.
fn name_of<T>(data: &DataTable, h: Data<T>) -> &'static str {
    data.fields()[h.index()].name
}

/// The Data of `h` as a point of `dims` finite numbers; None (reported) otherwise.
fn read_point(
    data: &DataTable,
    h: Data<Reals>,
    dims: usize,
    ctx: &mut InitContext<'_>,
) -> Option<[f64; 3]> {
    let v = data.get(h);
    if v.len() != dims || v.iter().any(|c| !c.is_finite()) {
        ctx.error(format!(
            "{} '{}' needs {dims} finite number{} for this state ({} given)",
            name_of(data, h),
            data.fields()[h.index()].value,
            if dims > 1 { "s" } else { "" },
            v.len()
        ));
        return None;
    }
    let mut p = [0.0; 3];
    p[..dims].copy_from_slice(v);
    Some(p)
}

/// Whether `v` is a finite non-negative coefficient.
fn is_non_negative(v: f64) -> bool {
    v >= 0.0 && v.is_finite()
}

/// The Data of `h` when it is a finite non-negative coefficient.
fn checked_non_negative(data: &DataTable, h: Data<Real>) -> Option<f64> {
    let v = data.get(h);
    is_non_negative(v).then_some(v)
}

/// The reaction of an obstacle to an edit, the same for the three: an edit (the Data and
/// what changed) of its stiffness and damping (`handles`) alone, on an `active` obstacle, with
/// a damping init would take without a warning and a stiffness `stiffness_ok` accepts, acts in
/// place as init would take it (the new values go to `stiffness` and `damping`, the contacts
/// are forgotten); any other goes through init.
fn coefficient_edit<T>(
    (data, changed): (&DataTable, &ChangedData),
    (active, handles): (bool, (Data<Real>, Data<Real>)),
    stiffness_ok: fn(f64) -> bool,
    (stiffness, damping, contacts): (&mut f64, &mut f64, &mut Vec<T>),
) -> Reaction {
    if !active || !changed.only(&[handles.0.index(), handles.1.index()]) {
        return Reaction::Reinit;
    }
    let k = data.get(handles.0);
    let (Some(d), true) = (checked_non_negative(data, handles.1), stiffness_ok(k)) else {
        return Reaction::Reinit;
    };
    *stiffness = k;
    *damping = d;
    contacts.clear();
    Reaction::Updated
}

/// A finite non-negative coefficient, or `default` with a warning.
fn non_negative(data: &DataTable, h: Data<Real>, default: f64, ctx: &mut InitContext<'_>) -> f64 {
    checked_non_negative(data, h).unwrap_or_else(|| {
        ctx.warn(format!(
            "{} {} is outside [0, +∞[: the default {default} is used",
            name_of(data, h),
            data.get(h)
        ));
        default
    })
}

/// SOFA's `localRange` (first and last index, −1 for no bound) as a half-open index range.
fn local_range(r: &[f64]) -> (usize, usize) {
    let mut range = (0, usize::MAX);
    if r.len() == 2 {
        if r[0] >= 0.0 {
            range.0 = r[0] as usize;
        }
        if r[1] >= 0.0 {
            range.1 = r[1] as usize + 1;
        }
    }
    range
}

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn scale(a: &[f64; 3], s: f64) -> [f64; 3] {
    [a[0] * s, a[1] * s, a[2] * s]
}

/// Point `i` of a flat buffer of `dims` values per point, padded with zeros to 3.
fn point(x: &[f64], i: usize, dims: usize) -> [f64; 3] {
    let mut p = [0.0; 3];
    p[..dims].copy_from_slice(&x[dims * i..dims * (i + 1)]);
    p
}

#[cfg(test)]
mod tests;
