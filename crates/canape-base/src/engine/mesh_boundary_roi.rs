//! MeshBoundaryROI (Sofa/Component/Engine/Select/src/sofa/component/engine/select/
//! MeshBoundaryROI.cpp): the points on the boundary of a triangle/quad surface, that is the
//! ends of the edges that belong to exactly one element (of those whose points are all in
//! `inputROI`, when it is given), in increasing order.

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Ints, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use std::collections::{BTreeMap, BTreeSet};

/// The boundary points of the surface made of `triangles` and `quads` (flat index lists),
/// restricted to the elements whose points are all in `roi` when `roi` is not empty.
pub fn boundary_points(triangles: &[u32], quads: &[u32], roi: &[u32]) -> Vec<u32> {
    let roi: BTreeSet<u32> = roi.iter().copied().collect();
    let in_roi = |e: &[u32]| roi.is_empty() || e.iter().all(|i| roi.contains(i));
    let mut count: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let elements = triangles
        .chunks_exact(3)
        .chain(quads.chunks_exact(4))
        .filter(|e| in_roi(e));
    for e in elements {
        for j in 0..e.len() {
            let (a, b) = (e[j], e[(j + 1) % e.len()]);
            *count.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    let set: BTreeSet<u32> = count
        .into_iter()
        .filter(|&(_, c)| c == 1)
        .flat_map(|((a, b), _)| [a, b])
        .collect();
    set.into_iter().collect()
}

canape_core::data_schema! {
    /// MeshBoundaryROI's own Data (after the base Data).
    pub struct MeshBoundaryRoiData {
        triangles: Ints = ("triangles", DataKind::Ints(3), "", "input triangles"),
        quads: Ints = ("quads", DataKind::Ints(4), "", "input quads"),
        input_roi: Ints = ("inputROI", DataKind::Ints(0), "", "optional subset of the input mesh"),
        indices: Ints => ("indices", DataKind::Ints(0), "Index lists of the closing vertices"),
    }
}

/// MeshBoundaryROI: `indices` of the boundary points of `triangles` and `quads`.
#[derive(Clone)]
pub struct MeshBoundaryRoi {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: MeshBoundaryRoiData,
}

impl Default for MeshBoundaryRoi {
    fn default() -> Self {
        Self::new()
    }
}

impl MeshBoundaryRoi {
    pub fn new() -> Self {
        let (data, d) = MeshBoundaryRoiData::declare(base_data(DataTable::new()));
        MeshBoundaryRoi { data, d }
    }

    fn init_impl(&mut self, _ctx: &mut InitContext<'_>) {
        let idx = boundary_points(
            self.data.get(self.d.triangles),
            self.data.get(self.d.quads),
            self.data.get(self.d.input_roi),
        );
        let _ = self.data.put(self.d.indices, Value::Ints(idx));
    }
}

impl_component!(MeshBoundaryRoi, "MeshBoundaryROI", init);

impl Engine for MeshBoundaryRoi {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_of_a_grid_of_quads() {
        // a 3×3 grid of points (2×2 quads): all but the centre point 4
        let quads = [0, 1, 4, 3, 1, 2, 5, 4, 3, 4, 7, 6, 4, 5, 8, 7];
        assert_eq!(
            boundary_points(&[], &quads, &[]),
            vec![0, 1, 2, 3, 5, 6, 7, 8]
        );
        // restricted to the quads within points {0,1,3,4}: one quad, all its points
        assert_eq!(
            boundary_points(&[], &quads, &[4, 3, 1, 0]),
            vec![0, 1, 3, 4]
        );
    }

    #[test]
    fn mixed_triangles_and_quads() {
        // a quad 0 1 2 3 and a triangle 1 4 2 sharing edge 1-2: every point is on the boundary
        let b = boundary_points(&[1, 4, 2], &[0, 1, 2, 3], &[]);
        assert_eq!(b, vec![0, 1, 2, 3, 4]);
        // the 4 faces of a tetrahedron: a closed surface, no boundary
        let closed = [0, 1, 2, 0, 3, 1, 1, 3, 2, 2, 3, 0];
        assert!(boundary_points(&closed, &[], &[]).is_empty());
        assert!(boundary_points(&[], &[], &[]).is_empty());
    }
}
