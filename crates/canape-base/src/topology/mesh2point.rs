//! Mesh2PointTopologicalMapping: one output point per input primitive and relative position
//! (Sofa/Component/Mapping/Linear/.../Mesh2PointTopologicalMapping.cpp, static part: the output
//! is built at init; topology changes come later).

use super::mapping_data;
use canape_core::component::TopologicalMapping;
use canape_core::data::{Data, DataKind, DataTable, Flag, Reals};
use canape_core::impl_component;
use canape_core::mesh::Mesh;

/// SOFA's local edge tables (Sofa/framework/Core/.../topology/Topology.cpp).
const TETRA_EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];
const HEXA_EDGES: [[usize; 2]; 12] = [
    [0, 1],
    [0, 3],
    [0, 4],
    [1, 2],
    [1, 5],
    [2, 3],
    [2, 6],
    [3, 7],
    [4, 5],
    [4, 7],
    [5, 6],
    [6, 7],
];

/// The edges a SOFA *SetTopologyContainer holds: the given ones, else those its
/// createEdgeSetArray builds from its highest elements — each element's local edges in the
/// element's order, first occurrence kept, stored smaller index first.
pub fn container_edges(m: &Mesh) -> Vec<[u32; 2]> {
    if !m.edges.is_empty() {
        return m.edges.clone();
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    let mut add = |a: u32, b: u32| {
        let e = [a.min(b), a.max(b)];
        if seen.insert(e) {
            out.push(e);
        }
    };
    if !m.hexahedra.is_empty() {
        for h in &m.hexahedra {
            for [i, j] in HEXA_EDGES {
                add(h[i], h[j]);
            }
        }
    } else if !m.tetrahedra.is_empty() {
        for t in &m.tetrahedra {
            for [i, j] in TETRA_EDGES {
                add(t[i], t[j]);
            }
        }
    } else if !m.quads.is_empty() {
        // QuadSetTopologyContainer: edge j joins q[j+1] and q[j+2]
        for q in &m.quads {
            for j in 0..4 {
                add(q[(j + 1) % 4], q[(j + 2) % 4]);
            }
        }
    } else {
        // TriangleSetTopologyContainer: edge j is opposite vertex j
        for t in &m.triangles {
            for j in 0..3 {
                add(t[(j + 1) % 3], t[(j + 2) % 3]);
            }
        }
    }
    out
}

/// Maps every input point, edge, triangle, quad, tetrahedron and hexahedron to one output point
/// per entry of the matching `*BaryCoords` list, in that order of primitive kinds: a point's
/// entry is an offset added to it, an edge's first coordinate f gives (1−f)·p0 + f·p1, a
/// triangle's (1−f−g)·p0 + f·p1 + g·p2, a quad's and a hexahedron's are SOFA's (bi/tri)linear
/// weights in its vertex order, a tetrahedron's (1−f−g−h)·p0 + f·p1 + g·p2 + h·p3. With
/// `copyEdges`/`copyTriangles`/`copyTetrahedra` the input elements are copied onto the points
/// made from their vertices (the first entry of `pointBaryCoords`).
#[derive(Clone)]
pub struct Mesh2PointTopologicalMapping {
    data: DataTable,
    /// Typed handles to its own Data in `data` (after the mapping Data).
    d: Mesh2PointData,
}

canape_core::data_schema! {
    /// What Mesh2PointTopologicalMapping adds to the mapping Data.
    pub struct Mesh2PointData {
        point_bary_coords: Reals = ("pointBaryCoords", DataKind::Reals(3), "", "Coordinates for the points of the output topology created from the points of the input topology"),
        edge_bary_coords: Reals = ("edgeBaryCoords", DataKind::Reals(3), "", "Coordinates for the points of the output topology created from the edges of the input topology"),
        triangle_bary_coords: Reals = ("triangleBaryCoords", DataKind::Reals(3), "", "Coordinates for the points of the output topology created from the triangles of the input topology"),
        quad_bary_coords: Reals = ("quadBaryCoords", DataKind::Reals(3), "", "Coordinates for the points of the output topology created from the quads of the input topology"),
        tetra_bary_coords: Reals = ("tetraBaryCoords", DataKind::Reals(3), "", "Coordinates for the points of the output topology created from the tetra of the input topology"),
        hexa_bary_coords: Reals = ("hexaBaryCoords", DataKind::Reals(3), "", "Coordinates for the points of the output topology created from the hexa of the input topology"),
        copy_edges: Flag = ("copyEdges", DataKind::Bool, "0", "Activate mapping of input edges into the output topology (requires at least one item in pointBaryCoords)"),
        copy_triangles: Flag = ("copyTriangles", DataKind::Bool, "0", "Activate mapping of input triangles into the output topology (requires at least one item in pointBaryCoords)"),
        copy_tetrahedra: Flag = ("copyTetrahedra", DataKind::Bool, "0", "Activate mapping of input tetrahedra into the output topology (requires at least one item in pointBaryCoords)"),
    }
}

impl Default for Mesh2PointTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Mesh2PointTopologicalMapping {
    pub fn new() -> Self {
        let (data, _) = mapping_data(DataTable::new());
        let (data, d) = Mesh2PointData::declare(data);
        Mesh2PointTopologicalMapping { data, d }
    }

    fn coords(&self, h: Data<Reals>) -> Vec<[f64; 3]> {
        canape_core::mesh::group_points(self.data.get(h))
    }
}

impl_component!(Mesh2PointTopologicalMapping, "Mesh2PointTopologicalMapping");

fn lerp(terms: &[(f64, [f64; 3])]) -> [f64; 3] {
    let mut r = [0.0; 3];
    for (w, p) in terms {
        for k in 0..3 {
            r[k] += w * p[k];
        }
    }
    r
}

impl TopologicalMapping for Mesh2PointTopologicalMapping {
    fn warnings(&self, input: &Mesh) -> Vec<String> {
        let mut w = Vec::new();
        let d = self.d;
        if self.coords(d.point_bary_coords).is_empty() {
            for (k, h) in [
                ("copyEdges", d.copy_edges),
                ("copyTriangles", d.copy_triangles),
                ("copyTetrahedra", d.copy_tetrahedra),
            ] {
                if self.data.get(h) {
                    w.push(format!(
                        "{k} requires at least one item in pointBaryCoords: not copied"
                    ));
                }
            }
        }
        if input.points.len() < input.nb_points() {
            w.push(format!(
                "the input topology has {} positions for {} points: the missing ones are taken at the origin",
                input.points.len(),
                input.nb_points()
            ));
        }
        if !self.coords(d.triangle_bary_coords).is_empty()
            && input.triangles.is_empty()
            && !input.tetrahedra.is_empty()
        {
            w.push(
                "triangleBaryCoords on an input without listed triangles: no point is made from triangles"
                    .into(),
            );
        }
        w
    }

    fn map(&self, input: &Mesh, _grid: Option<[usize; 3]>) -> Mesh {
        let p = |i: u32| input.points.get(i as usize).copied().unwrap_or([0.0; 3]);
        let mut points = Vec::new();
        let mut out = Mesh::default();
        let d = self.d;
        let point_coords = self.coords(d.point_bary_coords);
        // the output point made from each input point's first entry
        let mut from_point = Vec::new();
        if !point_coords.is_empty() {
            for i in 0..input.nb_points() as u32 {
                from_point.push(points.len() as u32);
                for c in &point_coords {
                    let q = p(i);
                    points.push([q[0] + c[0], q[1] + c[1], q[2] + c[2]]);
                }
            }
        }
        let copy = |h: Data<Flag>| !point_coords.is_empty() && self.data.get(h);
        let edge_coords = self.coords(d.edge_bary_coords);
        if !edge_coords.is_empty() || copy(d.copy_edges) {
            let edges = container_edges(input);
            for e in &edges {
                for c in &edge_coords {
                    points.push(lerp(&[(1.0 - c[0], p(e[0])), (c[0], p(e[1]))]));
                }
            }
            if copy(d.copy_edges) {
                out.edges = edges
                    .iter()
                    .map(|e| e.map(|v| from_point[v as usize]))
                    .collect();
            }
        }
        let tri_coords = self.coords(d.triangle_bary_coords);
        for t in &input.triangles {
            for c in &tri_coords {
                points.push(lerp(&[
                    (1.0 - c[0] - c[1], p(t[0])),
                    (c[0], p(t[1])),
                    (c[1], p(t[2])),
                ]));
            }
        }
        if copy(d.copy_triangles) {
            out.triangles = input
                .triangles
                .iter()
                .map(|t| t.map(|v| from_point[v as usize]))
                .collect();
        }
        let quad_coords = self.coords(d.quad_bary_coords);
        for q in &input.quads {
            for c in &quad_coords {
                let (f, g) = (c[0], c[1]);
                points.push(lerp(&[
                    ((1.0 - f) * (1.0 - g), p(q[0])),
                    (f * (1.0 - g), p(q[1])),
                    ((1.0 - f) * g, p(q[2])),
                    (f * g, p(q[3])),
                ]));
            }
        }
        let tet_coords = self.coords(d.tetra_bary_coords);
        for t in &input.tetrahedra {
            for c in &tet_coords {
                points.push(lerp(&[
                    (1.0 - c[0] - c[1] - c[2], p(t[0])),
                    (c[0], p(t[1])),
                    (c[1], p(t[2])),
                    (c[2], p(t[3])),
                ]));
            }
        }
        if copy(d.copy_tetrahedra) {
            out.tetrahedra = input
                .tetrahedra
                .iter()
                .map(|t| t.map(|v| from_point[v as usize]))
                .collect();
        }
        let hex_coords = self.coords(d.hexa_bary_coords);
        for h in &input.hexahedra {
            for c in &hex_coords {
                let (f, g, k) = (c[0], c[1], c[2]);
                // SOFA weighs the vertices in the order 0 1 3 2 4 5 7 6
                points.push(lerp(&[
                    ((1.0 - f) * (1.0 - g) * (1.0 - k), p(h[0])),
                    (f * (1.0 - g) * (1.0 - k), p(h[1])),
                    ((1.0 - f) * g * (1.0 - k), p(h[3])),
                    (f * g * (1.0 - k), p(h[2])),
                    ((1.0 - f) * (1.0 - g) * k, p(h[4])),
                    (f * (1.0 - g) * k, p(h[5])),
                    ((1.0 - f) * g * k, p(h[7])),
                    (f * g * k, p(h[6])),
                ]));
            }
        }
        out.points = points;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::Component;
    use canape_core::data::Value;

    fn tet() -> Mesh {
        Mesh {
            points: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            tetrahedra: vec![[0, 1, 2, 3]],
            ..Mesh::default()
        }
    }

    #[test]
    fn points_then_edge_midpoints_in_container_order() {
        let mut m = Mesh2PointTopologicalMapping::new();
        m.data_mut()
            .set_value("pointBaryCoords", Value::Reals(vec![0.0; 3]))
            .unwrap();
        m.data_mut()
            .set_value("edgeBaryCoords", Value::Reals(vec![0.5, 0.5, 0.0]))
            .unwrap();
        let out = m.map(&tet(), None);
        assert_eq!(out.points.len(), 4 + 6);
        assert_eq!(&out.points[..4], &tet().points[..]);
        // edge order of the tetrahedron container: 01 02 03 12 13 23
        assert_eq!(out.points[4], [0.5, 0.0, 0.0]);
        assert_eq!(out.points[7], [0.5, 0.5, 0.0]);
        assert_eq!(out.points[9], [0.0, 0.5, 0.5]);
    }

    #[test]
    fn tetra_centre_and_copied_tetrahedra() {
        let mut m = Mesh2PointTopologicalMapping::new();
        m.data_mut()
            .set_value("pointBaryCoords", Value::Reals(vec![0.0, 0.0, 1.0]))
            .unwrap();
        m.data_mut()
            .set_value("tetraBaryCoords", Value::Reals(vec![0.25; 3]))
            .unwrap();
        m.data_mut()
            .set_value("copyTetrahedra", Value::Bool(true))
            .unwrap();
        let out = m.map(&tet(), None);
        assert_eq!(out.points.len(), 5);
        assert_eq!(out.points[1], [1.0, 0.0, 1.0]);
        assert_eq!(out.points[4], [0.25; 3]);
        assert_eq!(out.tetrahedra, vec![[0, 1, 2, 3]]);
        assert!(m.warnings(&tet()).is_empty());
    }

    #[test]
    fn copy_without_point_coords_is_reported() {
        let mut m = Mesh2PointTopologicalMapping::new();
        m.data_mut()
            .set_value("copyEdges", Value::Bool(true))
            .unwrap();
        assert_eq!(m.warnings(&tet()).len(), 1);
        assert!(m.map(&tet(), None).edges.is_empty());
    }
}
