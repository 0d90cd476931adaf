//! MeshSubsetEngine (Sofa/Component/Engine/Select/src/sofa/component/engine/select/
//! MeshSubsetEngine.inl): the part of a mesh made of the points listed in `indices`.
//!
//! `position` holds the listed points in the order of `indices` (a point listed twice is
//! output twice). Each input element whose points are all listed is kept, in input order,
//! renumbered into the output points; a point listed twice is renumbered to its last place,
//! as SOFA's map keeps the last one. An index beyond the input points (which SOFA reads out of
//! bounds) is reported and skipped: the output is numbered over the points kept.

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{Data, DataKind, DataTable, Ints, Reals, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use std::collections::BTreeMap;

/// The elements (`k` points each) whose points all have a new index in `renumber`,
/// renumbered, in input order.
pub fn extract(elements: &[u32], k: usize, renumber: &BTreeMap<u32, u32>) -> Vec<u32> {
    elements
        .chunks_exact(k)
        .filter_map(|e| {
            e.iter()
                .map(|i| renumber.get(i).copied())
                .collect::<Option<Vec<u32>>>()
        })
        .flatten()
        .collect()
}

canape_core::data_schema! {
    /// MeshSubsetEngine's own Data (after the base Data).
    pub struct MeshSubsetEngineData {
        input_position: Reals = ("inputPosition", DataKind::Reals(3), "", "input vertices"),
        input_edges: Ints = ("inputEdges", DataKind::Ints(2), "", "input edges"),
        input_triangles: Ints = ("inputTriangles", DataKind::Ints(3), "", "input triangles"),
        input_quads: Ints = ("inputQuads", DataKind::Ints(4), "", "input quads"),
        input_tetrahedra: Ints = ("inputTetrahedra", DataKind::Ints(4), "", "input tetrahedra"),
        input_hexahedra: Ints = ("inputHexahedra", DataKind::Ints(8), "", "input hexahedra"),
        indices: Ints = ("indices", DataKind::Ints(0), "", "Index lists of the selected vertices"),
        position: Reals => ("position", DataKind::Reals(3), "Vertices of mesh subset"),
        edges: Ints => ("edges", DataKind::Ints(2), "edges of mesh subset"),
        triangles: Ints => ("triangles", DataKind::Ints(3), "Triangles of mesh subset"),
        quads: Ints => ("quads", DataKind::Ints(4), "Quads of mesh subset"),
        tetrahedra: Ints => ("tetrahedra", DataKind::Ints(4), "Tetrahedra of mesh subset"),
        hexahedra: Ints => ("hexahedra", DataKind::Ints(8), "Hexahedra of mesh subset"),
    }
}

/// MeshSubsetEngine: `position`, `edges`, `triangles`, `quads`, `tetrahedra`, `hexahedra`.
#[derive(Clone)]
pub struct MeshSubsetEngine {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: MeshSubsetEngineData,
}

impl Default for MeshSubsetEngine {
    fn default() -> Self {
        Self::new()
    }
}

impl MeshSubsetEngine {
    pub fn new() -> Self {
        let (data, d) = MeshSubsetEngineData::declare(base_data(DataTable::new()));
        MeshSubsetEngine { data, d }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let x = self.data.get(self.d.input_position);
        let n = x.len() / 3;
        let mut out = Vec::new();
        let mut renumber: BTreeMap<u32, u32> = BTreeMap::new();
        let mut bad: Vec<u32> = Vec::new();
        for &i in self.data.get(self.d.indices) {
            let Some(p) = x.get(3 * i as usize..3 * i as usize + 3) else {
                bad.push(i);
                continue;
            };
            renumber.insert(i, (out.len() / 3) as u32);
            out.extend_from_slice(p);
        }
        if !bad.is_empty() {
            ctx.error(format!(
                "{} of the indices ({:?}{}) are beyond the {n} input points: they are skipped",
                bad.len(),
                &bad[..bad.len().min(5)],
                if bad.len() > 5 { "…" } else { "" }
            ));
        }
        if !out.iter().all(|v| v.is_finite()) {
            ctx.warn("the selected input positions hold non-finite numbers");
        }
        let d = self.d;
        // the element lists: input Data, output Data, points per element
        let lists: Vec<(Data<Ints>, Vec<u32>)> = [
            (d.input_edges, d.edges, 2),
            (d.input_triangles, d.triangles, 3),
            (d.input_quads, d.quads, 4),
            (d.input_tetrahedra, d.tetrahedra, 4),
            (d.input_hexahedra, d.hexahedra, 8),
        ]
        .into_iter()
        .map(|(input, output, k)| (output, extract(self.data.get(input), k, &renumber)))
        .collect();
        let _ = self.data.put(self.d.position, Value::Reals(out));
        for (output, v) in lists {
            let _ = self.data.put(output, Value::Ints(v));
        }
    }
}

impl_component!(MeshSubsetEngine, "MeshSubsetEngine", init);

impl Engine for MeshSubsetEngine {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::init_alone;

    /// A unit square of 2 triangles and 1 quad, its 4 edges, plus a point 4 off the mesh.
    const SQUARE: [(&str, &str); 4] = [
        ("inputPosition", "0 0 0  1 0 0  1 1 0  0 1 0  5 5 5"),
        ("inputEdges", "0 1  1 2  2 3  3 0"),
        ("inputTriangles", "0 1 2  0 2 3"),
        ("inputQuads", "0 1 2 3"),
    ];

    fn run(indices: &str) -> (MeshSubsetEngine, usize) {
        let mut e = MeshSubsetEngine::new();
        let mut attrs = SQUARE.to_vec();
        attrs.push(("indices", indices));
        let n = init_alone(&mut e, &attrs);
        (e, n)
    }

    #[test]
    fn a_subset_keeps_the_elements_of_its_points() {
        let (e, n) = run("2 0 1");
        assert_eq!(n, 0);
        assert_eq!(
            e.data.reals("position"),
            &[1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
        );
        // points 0, 1, 2 are now 1, 2, 0
        assert_eq!(e.data.ints("edges"), &[1, 2, 2, 0]);
        assert_eq!(e.data.ints("triangles"), &[1, 2, 0]);
        assert!(e.data.ints("quads").is_empty());
        assert!(e.data.ints("tetrahedra").is_empty());
    }

    #[test]
    fn a_point_listed_twice_is_output_twice_and_renumbered_last() {
        let (e, n) = run("0 1 2 3 0");
        assert_eq!(n, 0);
        assert_eq!(e.data.reals("position").len(), 15);
        assert_eq!(e.data.ints("quads"), &[4, 1, 2, 3]);
        assert_eq!(e.data.ints("triangles"), &[4, 1, 2, 4, 2, 3]);
        assert_eq!(e.data.ints("edges"), &[4, 1, 1, 2, 2, 3, 3, 4]);
    }

    #[test]
    fn tetrahedra_and_hexahedra_too() {
        let mut e = MeshSubsetEngine::new();
        let nine = "0 0 0 ".repeat(9);
        let n = init_alone(
            &mut e,
            &[
                ("inputPosition", nine.as_str()),
                ("inputTetrahedra", "0 1 2 3  5 6 7 8"),
                ("inputHexahedra", "0 1 2 3 4 5 6 7"),
                ("indices", "8 7 6 5"),
            ],
        );
        assert_eq!(n, 0);
        assert_eq!(e.data.ints("tetrahedra"), &[3, 2, 1, 0]);
        assert!(e.data.ints("hexahedra").is_empty());
    }

    #[test]
    fn indices_out_of_range_are_reported_and_skipped() {
        let (e, n) = run("1 9 2 5");
        assert_eq!(n, 1);
        assert_eq!(e.data.reals("position"), &[1.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
        assert_eq!(e.data.ints("edges"), &[0, 1]);
        // no input at all: an empty subset, quietly
        let mut e = MeshSubsetEngine::new();
        assert_eq!(init_alone(&mut e, &[]), 0);
        assert!(e.data.reals("position").is_empty());
        // non-finite positions are reported
        let mut e = MeshSubsetEngine::new();
        let n = init_alone(&mut e, &[("inputPosition", "inf 0 0"), ("indices", "0")]);
        assert_eq!(n, 1);
    }
}
