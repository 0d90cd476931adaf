//! Hexa2PrismTopologicalMapping (Sofa/Component/Topology/Mapping/.../
//! Hexa2PrismTopologicalMapping.cpp): each hexahedron of the input becomes two triangular
//! prisms sharing the diagonal face (0, 5, 3, 6), in hexahedron order; the output keeps the input's
//! points. Static: built at init (SOFA does not follow topology changes either).

use super::mapping_data;
use canape_core::component::TopologicalMapping;
use canape_core::data::DataTable;
use canape_core::impl_component;
use canape_core::mesh::Mesh;

/// The two prisms of a hexahedron, as local corner indices: bottom triangle, then the top
/// triangle above it (SOFA's split, which neighbouring hexahedra of a grid share faces with).
const PRISMS_OF_HEXA: [[usize; 6]; 2] = [[0, 5, 1, 3, 6, 2], [0, 4, 5, 3, 7, 6]];

#[derive(Clone)]
pub struct Hexa2PrismTopologicalMapping {
    data: DataTable,
}

impl Default for Hexa2PrismTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl Hexa2PrismTopologicalMapping {
    pub fn new() -> Self {
        // no Data of its own to read: the scene resolves input and output
        let (data, _) = mapping_data(DataTable::new());
        Hexa2PrismTopologicalMapping { data }
    }
}

impl_component!(Hexa2PrismTopologicalMapping, "Hexa2PrismTopologicalMapping");

impl TopologicalMapping for Hexa2PrismTopologicalMapping {
    fn map(&self, input: &Mesh, _grid: Option<[usize; 3]>) -> Mesh {
        Mesh {
            prisms: input
                .hexahedra
                .iter()
                .flat_map(|h| PRISMS_OF_HEXA.iter().map(move |p| p.map(|k| h[k])))
                .collect(),
            ..Mesh::default()
        }
    }
    fn warnings(&self, input: &Mesh) -> Vec<String> {
        if input.hexahedra.is_empty() {
            vec!["the input topology has no hexahedra: no prism is created".into()]
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two prisms fill the unit cube: their volumes (triangle area × height for these
    /// right prisms) add up to 1, and each is a bottom triangle with its top 1 above it.
    #[test]
    fn a_cube_splits_into_two_prisms_filling_it() {
        // SOFA's hexahedron corner order on the unit cube
        let p: [[f64; 3]; 8] = [
            [0., 0., 0.],
            [1., 0., 0.],
            [1., 1., 0.],
            [0., 1., 0.],
            [0., 0., 1.],
            [1., 0., 1.],
            [1., 1., 1.],
            [0., 1., 1.],
        ];
        let input = Mesh {
            points: p.to_vec(),
            hexahedra: vec![[0, 1, 2, 3, 4, 5, 6, 7]],
            ..Mesh::default()
        };
        let out = Hexa2PrismTopologicalMapping::new().map(&input, None);
        assert_eq!(out.prisms, vec![[0, 5, 1, 3, 6, 2], [0, 4, 5, 3, 7, 6]]);
        let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
        let cross = |a: [f64; 3], b: [f64; 3]| {
            [
                a[1] * b[2] - a[2] * b[1],
                a[2] * b[0] - a[0] * b[2],
                a[0] * b[1] - a[1] * b[0],
            ]
        };
        let mut volume = 0.0;
        for pr in &out.prisms {
            let c = pr.map(|i| p[i as usize]);
            // the top triangle is the bottom one moved by one and the same vector
            let h = sub(c[3], c[0]);
            for k in 0..3 {
                assert_eq!(sub(c[k + 3], c[k]), h);
            }
            let n = cross(sub(c[1], c[0]), sub(c[2], c[0]));
            volume += 0.5 * (n[0] * h[0] + n[1] * h[1] + n[2] * h[2]).abs();
        }
        assert!((volume - 1.0).abs() < 1e-15, "{volume}");
        let empty = Hexa2PrismTopologicalMapping::new();
        assert_eq!(empty.warnings(&Mesh::default()).len(), 1);
    }
}
