//! Mesh topology data shared by topology containers, loaders and topological mappings.
//!
//! Element lists are plain index arrays. Containers that will support topology changes keep this
//! struct and, later, emit change events so per-element data (rotations, stiffness) can resize.

/// Points and elements of a mesh topology.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    pub points: Vec<[f64; 3]>,
    pub edges: Vec<[u32; 2]>,
    pub triangles: Vec<[u32; 3]>,
    pub quads: Vec<[u32; 4]>,
    pub tetrahedra: Vec<[u32; 4]>,
    pub hexahedra: Vec<[u32; 8]>,
    /// Triangular prisms (wedges): a bottom triangle (0, 1, 2) and the top one (3, 4, 5) above
    /// it, as SOFA's BaseMeshTopology::Prism.
    pub prisms: Vec<[u32; 6]>,
}

impl Mesh {
    /// Number of points, either explicit or implied by the largest element index.
    pub fn nb_points(&self) -> usize {
        if !self.points.is_empty() {
            return self.points.len();
        }
        let mut m: i64 = -1;
        let mut see = |i: &u32| m = m.max(*i as i64);
        self.edges.iter().flatten().for_each(&mut see);
        self.triangles.iter().flatten().for_each(&mut see);
        self.quads.iter().flatten().for_each(&mut see);
        self.tetrahedra.iter().flatten().for_each(&mut see);
        self.hexahedra.iter().flatten().for_each(&mut see);
        self.prisms.iter().flatten().for_each(&mut see);
        (m + 1) as usize
    }

    /// Largest index used by any element, if any.
    pub fn max_index(&self) -> Option<u32> {
        let it = self
            .edges
            .iter()
            .flat_map(|e| e.iter())
            .chain(self.triangles.iter().flatten())
            .chain(self.quads.iter().flatten())
            .chain(self.tetrahedra.iter().flatten())
            .chain(self.hexahedra.iter().flatten())
            .chain(self.prisms.iter().flatten());
        it.copied().max()
    }
}

/// Flatten fixed-size index arrays into one list (Data representation).
pub fn flatten<const N: usize>(v: &[[u32; N]]) -> Vec<u32> {
    v.iter().flat_map(|a| a.iter().copied()).collect()
}

/// Group a flat index list into fixed-size arrays (trailing incomplete group dropped).
pub fn group<const N: usize>(v: &[u32]) -> Vec<[u32; N]> {
    v.chunks_exact(N)
        .map(|c| {
            let mut a = [0u32; N];
            a.copy_from_slice(c);
            a
        })
        .collect()
}

/// Flatten points.
pub fn flatten_points(p: &[[f64; 3]]) -> Vec<f64> {
    p.iter().flat_map(|a| a.iter().copied()).collect()
}

/// Group flat reals into points (a trailing incomplete point is dropped).
pub fn group_points(v: &[f64]) -> Vec<[f64; 3]> {
    v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

/// The 6 quadrilateral faces of a hexahedron, as local vertex indices (SOFA's vertex order),
/// each oriented outward (MeshLoader's face order).
pub const HEXA_FACES: [[usize; 4]; 6] = [
    [0, 3, 2, 1],
    [4, 5, 6, 7],
    [0, 1, 5, 4],
    [1, 2, 6, 5],
    [2, 3, 7, 6],
    [3, 0, 4, 7],
];

/// The 4 triangular faces of a tetrahedron, as local vertex indices (MeshLoader's face order).
/// The edges SOFA's triangle containers build from a triangle list (TriangleSetTopologyContainer,
/// GridTopology): by first appearance, triangle by triangle, edge k of a triangle being
/// (t[k+1], t[k+2]), the one opposite vertex k, oriented as that first triangle gives it.
pub fn edges_from_triangles(tris: &[[u32; 3]]) -> Vec<[u32; 2]> {
    let mut seen = std::collections::BTreeSet::new();
    let mut edges = Vec::new();
    for t in tris {
        for k in 0..3 {
            let (a, b) = (t[(k + 1) % 3], t[(k + 2) % 3]);
            if seen.insert((a.min(b), a.max(b))) {
                edges.push([a, b]);
            }
        }
    }
    edges
}

pub const TETRA_FACES: [[usize; 3]; 4] = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];

/// The 6 tetrahedra of a hexahedron `c` (SOFA's vertex order), alternate list when mirrored.
pub fn hexa_to_tetras(c: [u32; 8], swapped: bool) -> [[u32; 4]; 6] {
    if !swapped {
        [
            [c[0], c[5], c[1], c[6]],
            [c[0], c[1], c[3], c[6]],
            [c[1], c[3], c[6], c[2]],
            [c[6], c[3], c[0], c[7]],
            [c[6], c[7], c[0], c[5]],
            [c[7], c[5], c[4], c[0]],
        ]
    } else {
        [
            [c[0], c[5], c[6], c[1]],
            [c[0], c[1], c[6], c[3]],
            [c[1], c[3], c[2], c[6]],
            [c[6], c[3], c[7], c[0]],
            [c[6], c[7], c[5], c[0]],
            [c[7], c[5], c[0], c[4]],
        ]
    }
}
