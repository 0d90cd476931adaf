//! Engines that generate meshes or pair points: GenerateCylinder (`cylinder`), GenerateGrid
//! (`grid`), Spiral (`spiral`), and two of SOFA's selection engines that build a mesh or a
//! list of pairs from indices, MeshSubsetEngine (`mesh_subset`) and NearestPointROI
//! (`nearest_point`). Each computes its outputs once, at init, from its input Data.

pub mod cylinder;
pub mod grid;
pub mod mesh_subset;
pub mod nearest_point;
pub mod spiral;

use canape_core::registry::{vec3_only, Registry, TemplateError};
use canape_core::scene::{AnyComponent, InitContext};
use canape_types::DofType;

/// Register this module's classes.
pub(crate) fn register(r: &mut Registry) {
    r.register(
        "GenerateCylinder",
        "a tetrahedral cylinder and its triangulated surface",
        |_, t| {
            vec3_only(t, "GenerateCylinder")?;
            Ok(AnyComponent::Engine(Box::new(
                cylinder::GenerateCylinder::new(),
            )))
        },
    );
    r.register(
        "GenerateGrid",
        "a regular grid of hexahedra and tetrahedra (or quads and triangles in 2D)",
        |_, t| {
            let dim = match template_dof(t)? {
                DofType::Vec3 => 3,
                DofType::Vec2 => 2,
                d => return Err(unsupported(t, d, "GenerateGrid", "Vec3d and Vec2d")),
            };
            Ok(AnyComponent::Engine(Box::new(grid::GenerateGrid::new(dim))))
        },
    );
    r.register("Spiral", "positions rolled up along a spiral", |_, t| {
        vec3_only(t, "Spiral")?;
        Ok(AnyComponent::Engine(Box::new(spiral::Spiral::new())))
    });
    r.register(
        "MeshSubsetEngine",
        "the part of a mesh made of the selected points",
        |_, t| {
            vec3_only(t, "MeshSubsetEngine")?;
            Ok(AnyComponent::Engine(Box::new(
                mesh_subset::MeshSubsetEngine::new(),
            )))
        },
    );
    r.register(
        "NearestPointROI",
        "pairs of nearest points of two states, within a radius",
        |_, t| {
            let d = template_dof(t)?;
            Ok(AnyComponent::Engine(Box::new(
                nearest_point::NearestPointRoi::new(d),
            )))
        },
    );
}

/// The DOF type a template names (its first part; Vec3d when empty).
fn template_dof(template: &str) -> Result<DofType, TemplateError> {
    let first = template.split(',').next().unwrap_or("").trim();
    DofType::from_template(first).ok_or_else(|| TemplateError::Unknown {
        template: template.to_string(),
        expected: "Vec1d, Vec2d, Vec3d, Rigid2d or Rigid3d",
    })
}

/// The refusal of a template a class does not support.
fn unsupported(template: &str, d: DofType, class: &str, supported: &'static str) -> TemplateError {
    TemplateError::OnlySupports {
        template: template.to_string(),
        dof: d.name(),
        class: class.to_string(),
        supported,
    }
}

/// The most elements of one kind an engine here generates (as many as points a state may have).
const MAX_ELEMENTS: usize = canape_core::state::MAX_POINTS;

/// A non-negative count read from an integer Data, or an error naming it.
fn count_of(ctx: &mut InitContext<'_>, name: &str, v: i64) -> Option<usize> {
    match usize::try_from(v) {
        Ok(n) => Some(n),
        Err(_) => {
            ctx.error(format!(
                "{name} = {v}: a resolution cannot be negative; nothing is generated"
            ));
            None
        }
    }
}

/// Whether every number is finite.
fn all_finite(v: &[f64]) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// The product of counts, when it stays within `cap`.
fn product_within(factors: &[usize], cap: usize) -> Option<usize> {
    factors
        .iter()
        .try_fold(1usize, |acc, &f| acc.checked_mul(f))
        .filter(|&n| n <= cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_checked_at_creation() {
        let mut r = Registry::default();
        register(&mut r);
        for (class, t, ok) in [
            ("GenerateGrid", "Vec2d", true),
            ("GenerateGrid", "Vec3", true),
            ("GenerateGrid", "Rigid3d", false),
            ("GenerateCylinder", "Vec2d", false),
            ("NearestPointROI", "Rigid3d", true),
            ("NearestPointROI", "Vec7d", false),
            ("Spiral", "", true),
            ("MeshSubsetEngine", "Vec3d", true),
        ] {
            let e = r.get(class).expect("registered");
            let made = (e.create)(e.class, t);
            assert_eq!(made.is_ok(), ok, "{class}<{t}>");
        }
    }

    #[test]
    fn products_are_capped() {
        assert_eq!(product_within(&[2, 3, 4], 100), Some(24));
        assert_eq!(product_within(&[2, 3, 4], 23), None);
        assert_eq!(product_within(&[usize::MAX, 2], usize::MAX), None);
    }
}
