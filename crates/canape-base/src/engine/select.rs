//! Selection and smoothing engines: MeshROI (`mesh_roi`), ValuesFromPositions
//! (`values_from_positions`) and SmoothMeshEngine (`smooth_mesh`), with the lookups they
//! share (the coordinate width of their template, the local state, loader and topology SOFA's
//! engines fall back on when a Data is not given).

pub mod mesh_roi;
pub mod smooth_mesh;
pub mod values_from_positions;

use canape_core::component::Role;
use canape_core::data::Value;
use canape_core::mesh::Mesh;
use canape_core::registry::{vec3_only, Registry, TemplateError};
use canape_core::scene::{AnyComponent, ComponentId, InitContext};
use canape_types::DofType;

/// Register this module's classes.
pub(crate) fn register(r: &mut Registry) {
    r.register(
        "MeshROI",
        "points, edges, triangles, quads, tetrahedra and hexahedra inside a closed triangle surface",
        |_, t| {
            let w = coord_width(t, "MeshROI")?;
            Ok(AnyComponent::Engine(Box::new(mesh_roi::MeshRoi::new(w))))
        },
    );
    r.register(
        "ValuesFromPositions",
        "values (or vectors) given to points, edges, triangles and tetrahedra by interpolation along a direction",
        |_, t| {
            let w = coord_width(t, "ValuesFromPositions")?;
            Ok(AnyComponent::Engine(Box::new(
                values_from_positions::ValuesFromPositions::new(w),
            )))
        },
    );
    r.register(
        "SmoothMeshEngine",
        "Laplacian smoothing of positions over the neighbours of a mesh",
        |_, t| {
            vec3_only(t, "SmoothMeshEngine")?;
            Ok(AnyComponent::Engine(Box::new(
                smooth_mesh::SmoothMeshEngine::new(),
            )))
        },
    );
}

/// The number of scalars of one coordinate for an engine registered for Vec3d and Rigid3d
/// (SOFA's `CPos` is then the first 3): 3 without a template.
fn coord_width(template: &str, class: &str) -> Result<usize, TemplateError> {
    let first = template.split(',').next().unwrap_or("").trim();
    if first.is_empty() {
        return Ok(3);
    }
    match DofType::from_template(first) {
        Some(DofType::Vec3) => Ok(3),
        Some(DofType::Rigid3) => Ok(7),
        Some(d) => Err(TemplateError::OnlySupports {
            template: template.to_string(),
            dof: d.name(),
            class: class.to_string(),
            supported: "Vec3d and Rigid3d",
        }),
        None => Err(TemplateError::Unknown {
            template: template.to_string(),
            expected: "Vec3d or Rigid3d",
        }),
    }
}

/// The position part (first 3 scalars) of coordinate `i` of a flat buffer of `width`-wide
/// coordinates; None when `i` is out of range.
fn cpos(buf: &[f64], width: usize, i: usize) -> Option<[f64; 3]> {
    let o = i.checked_mul(width)?;
    let c = buf.get(o..o.checked_add(width)?)?;
    Some([c[0], c[1], c[2]])
}

/// The first component of `role` declared in the engine's own node (SOFA's `Local` lookup).
fn local(ctx: &InitContext<'_>, role: Role) -> Option<ComponentId> {
    ctx.scene.node_components(ctx.node, role).next()
}

/// A list of reals read from Data `name` of component `id` (its live value for a state).
fn reals_of(ctx: &InitContext<'_>, id: ComponentId, name: &str) -> Option<Vec<f64>> {
    match ctx.scene.component(id)?.read_data(name)? {
        Value::Reals(v) => Some(v),
        _ => None,
    }
}

/// The coordinate width of a state's coordinates.
fn state_width(ctx: &InitContext<'_>, id: ComponentId) -> Option<usize> {
    ctx.scene.state(id).map(|s| s.dof.coord_size())
}

/// Rest positions of the engine's own node: its MechanicalObject's `rest_position`, else its
/// mesh loader's `position` (Vec3 only). `Err` names a state whose coordinates are not
/// `width` wide.
fn local_rest_positions(
    ctx: &InitContext<'_>,
    width: usize,
) -> Result<Option<Vec<f64>>, WidthMismatch> {
    if let Some(s) = local(ctx, Role::State) {
        return state_rest_positions(ctx, s, width).map(Some);
    }
    if width == 3 {
        if let Some(l) = local(ctx, Role::Loader) {
            return Ok(reals_of(ctx, l, "position"));
        }
    }
    Ok(None)
}

/// A state read for its rest positions has coordinates of another width than the engine's
/// template.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the MechanicalObject '{state}' has coordinates of {state_width} numbers, this engine's template {width}"
)]
pub struct WidthMismatch {
    pub state: String,
    pub state_width: usize,
    pub width: usize,
}

/// The rest positions of state `s`, checked to be `width` wide.
fn state_rest_positions(
    ctx: &InitContext<'_>,
    s: ComponentId,
    width: usize,
) -> Result<Vec<f64>, WidthMismatch> {
    let w = state_width(ctx, s).unwrap_or(width);
    if w != width {
        return Err(WidthMismatch {
            state: ctx.scene.info(s).name.clone(),
            state_width: w,
            width,
        });
    }
    Ok(reals_of(ctx, s, "rest_position").unwrap_or_default())
}

/// The mesh of the last topology declared in the engine's own node.
fn local_mesh<'a>(ctx: &InitContext<'a>) -> Option<&'a Mesh> {
    let scene = ctx.scene;
    scene
        .node_components(ctx.node, Role::Topology)
        .last()
        .and_then(|t| scene.topology(t))
        .map(|t| t.mesh())
}

/// Whether every number is finite.
fn all_finite(v: &[f64]) -> bool {
    v.iter().all(|x| x.is_finite())
}
