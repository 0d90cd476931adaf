//! Masses: UniformMass, DiagonalMass, MeshMatrixMass (SOFA's Mass area).
//!
//! One file per class (`uniform`, `diagonal`, `mesh_matrix`); this file holds what they share:
//! element volumes, the start of every mass's Data table, and the topology a mass integrates over.

mod diagonal;
mod mesh_matrix;
mod uniform;

pub use diagonal::{DiagonalMass, DiagonalMassData};
pub use mesh_matrix::{MeshMatrixMass, MeshMatrixMassData};
pub use uniform::{UniformMass, UniformMassData};

use crate::base_data;
use canape_core::data::{Data, DataTable, MassData, Text};
use canape_core::mesh::Mesh;
use canape_core::scene::{InitContext, ToTopology};
use canape_types::Vec3;

/// Absolute volume of a tetrahedron.
pub fn tetra_volume(p: [Vec3; 4]) -> f64 {
    ((p[1] - p[0]).cross(&(p[2] - p[0])).dot(&(p[3] - p[0]))).abs() / 6.0
}

/// Volume of a hexahedron as the sum of 6 tetrahedra (SOFA's geometry::Hexahedron::volume).
pub fn hexa_volume(p: [Vec3; 8]) -> f64 {
    const T: [[usize; 4]; 6] = [
        [0, 5, 1, 6],
        [0, 1, 3, 6],
        [1, 3, 6, 2],
        [6, 3, 0, 7],
        [6, 7, 0, 5],
        [7, 5, 4, 0],
    ];
    T.iter()
        .map(|t| tetra_volume([p[t[0]], p[t[1]], p[t[2]], p[t[3]]]))
        .sum()
}

/// The base Data and the mass Data: the start of every mass's table.
fn mass_base(t: DataTable) -> (DataTable, MassData) {
    MassData::declare(base_data(t))
}

fn elements_in_range(mesh: &Mesh, n: usize) -> bool {
    mesh.max_index().is_none_or(|m| (m as usize) < n)
}

/// The mesh of the topology a `topology="@…"` Data `d` of `table` links to (a typed link: a
/// link to anything else is reported), or else the context's topology.
pub fn linked_or_context_topology<'a>(
    ctx: &mut InitContext<'a>,
    table: &DataTable,
    d: Data<Text>,
) -> Option<&'a Mesh> {
    match ctx.link::<ToTopology>(table, d) {
        Ok(Some(l)) => {
            let t = ctx.scene.linked_topology(l);
            if t.is_none() {
                ctx.error(format!(
                    "{}='{}': the topology is not ready (it is initialised after this component)",
                    table.fields()[d.index()].name,
                    table.get(d).trim()
                ));
            }
            return t.map(|t| t.mesh());
        }
        Ok(None) => {}
        Err(e) => {
            ctx.error(e.to_string());
            return None;
        }
    }
    ctx.topology_where(|m| {
        !m.hexahedra.is_empty()
            || !m.tetrahedra.is_empty()
            || !m.quads.is_empty()
            || !m.triangles.is_empty()
            || !m.edges.is_empty()
    })
    .map(|t| t.mesh())
}
