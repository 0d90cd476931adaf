//! Nonlinear mappings (Sofa/Component/Mapping/NonLinear): RigidMapping, distances (between points,
//! and from fixed targets in `distance_target`), areas, tetrahedron volumes (`volume`), squares.

pub mod area;
pub mod distance;
pub mod distance_target;
pub mod rigid;
pub mod square;
pub mod volume;

use crate::mapping::linear::{resolve_mapping_ends, Ends, MappingData};
use canape_core::data::{DataKind, DataTable, Text};
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_types::DofType;

canape_core::data_schema! {
    /// The Data AreaMapping and VolumeMapping add to [`MappingData`]: their topology and
    /// geometric stiffness choice.
    pub(crate) struct OverTopologyData {
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
        geometric_stiffness: Text = ("geometricStiffness", DataKind::Str, "Stabilized", "Method used to compute the geometric stiffness: None (0), Exact (1), Stabilized (2)"),
    }
}

/// The init shared by the mappings of one Vec3d input to a Vec1d output over the elements of a
/// topology (AreaMapping, VolumeMapping): their ends with the types checked, the
/// `geometricStiffness` choice and the linked or context topology; None (reported) when one is
/// missing or wrong.
pub(crate) fn vec3_to_vec1_over_topology<'a>(
    ctx: &mut InitContext<'a>,
    data: &DataTable,
    (m, d): (MappingData, OverTopologyData),
    class: &str,
    elements: &str,
) -> Option<(Ends, u32, &'a Mesh)> {
    let e = resolve_mapping_ends(ctx, data, m)?;
    if e.out_dof != DofType::Vec1 || e.in_dofs != [DofType::Vec3] {
        ctx.error(format!(
            "{class} maps one Vec3d input to a Vec1d output ({} to {} given)",
            e.in_dofs
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(" "),
            e.out_dof.name()
        ));
        return None;
    }
    let gs = match rigid::parse_gs(data.get(d.geometric_stiffness)) {
        Some(g) => g,
        None => {
            ctx.warn(format!(
                "geometricStiffness '{}' is not None, Exact, Stabilized, 0, 1 or 2: None is used",
                data.get(d.geometric_stiffness)
            ));
            0
        }
    };
    let Some(mesh) = crate::mass::linked_or_context_topology(ctx, data, d.topology) else {
        ctx.error(format!(
            "no topology with {elements}: set topology=\"@…\" or put a container in the context"
        ));
        return None;
    };
    Some((e, gs, mesh))
}
