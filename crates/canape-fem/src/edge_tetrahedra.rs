//! What SOFA's edge-based tetrahedral force fields share (StandardTetrahedralFEMForceField,
//! TetrahedralTensorMassForceField): the edges of a tetrahedron set in SOFA's
//! TetrahedronSetTopologyContainer order with the edges of each tetrahedron, the rest shape
//! vectors (gradients of the barycentric coordinates), and the init checks they report through
//! [`InitContext`]. Both classes keep one 3×3 block per edge and apply it the same way; see
//! [`EdgeTetrahedra::apply_blocks`].

use crate::common::fem_inputs;
use canape_core::data::DataTable;
use canape_core::matrix::MatrixSink;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_types::{Mat3, Vec3};

/// SOFA's edgesInTetrahedronArray: local edge j joins local vertices `LOCAL_EDGES[j]`.
pub const LOCAL_EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];

/// A side of a tetrahedron missing from the topology's explicit edge list.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tetrahedron {tetrahedron}'s side ({a}, {b}) is not among the topology's edges")]
pub struct MissingSide {
    pub tetrahedron: usize,
    pub a: usize,
    pub b: usize,
}

/// A tetrahedron set seen through its edges.
#[derive(Clone, Debug, Default)]
pub struct EdgeTetrahedra {
    pub tetrahedra: Vec<[usize; 4]>,
    /// The container's edges: those given with the topology when they contain every side of
    /// every tetrahedron, else built as SOFA's TetrahedronSetTopologyContainer does
    /// (tetrahedron by tetrahedron, its local edges in [`LOCAL_EDGES`] order, first occurrence
    /// kept, smaller index first).
    pub edges: Vec<[usize; 2]>,
    /// SOFA's getEdgesInTetrahedron: entry j is the global index of local edge j.
    pub edges_in_tetrahedron: Vec<[usize; 6]>,
    /// One more than the largest point index (0 without tetrahedra).
    pub nb_points: usize,
}

impl EdgeTetrahedra {
    /// The edges of `mesh`'s tetrahedra, and a warning when the topology's explicit edge list
    /// lacks a side of some tetrahedron (the edges are then built from the tetrahedra).
    pub fn new(mesh: &Mesh) -> (Self, Option<String>) {
        let tetrahedra: Vec<[usize; 4]> = mesh
            .tetrahedra
            .iter()
            .map(|t| t.map(|i| i as usize))
            .collect();
        let mut warning = None;
        if !mesh.edges.is_empty() {
            let edges: Vec<[usize; 2]> = mesh.edges.iter().map(|e| e.map(|i| i as usize)).collect();
            match Self::locate(&tetrahedra, &edges) {
                Ok(eit) => return (Self::with(tetrahedra, edges, eit), None),
                Err(msg) => {
                    warning = Some(format!("{msg}: the edges are rebuilt from the tetrahedra"))
                }
            }
        }
        let mut index = std::collections::BTreeMap::new();
        let mut edges = Vec::new();
        let mut eit = Vec::with_capacity(tetrahedra.len());
        for t in &tetrahedra {
            let mut te = [0; 6];
            for (slot, [a, b]) in te.iter_mut().zip(LOCAL_EDGES) {
                let (a, b) = (t[a], t[b]);
                let key = [a.min(b), a.max(b)];
                *slot = *index.entry(key).or_insert_with(|| {
                    edges.push(key);
                    edges.len() - 1
                });
            }
            eit.push(te);
        }
        (Self::with(tetrahedra, edges, eit), warning)
    }

    fn with(
        tetrahedra: Vec<[usize; 4]>,
        edges: Vec<[usize; 2]>,
        edges_in_tetrahedron: Vec<[usize; 6]>,
    ) -> Self {
        let nb_points = tetrahedra
            .iter()
            .flatten()
            .chain(edges.iter().flatten())
            .max()
            .map_or(0, |m| m + 1);
        EdgeTetrahedra {
            tetrahedra,
            edges,
            edges_in_tetrahedron,
            nb_points,
        }
    }

    /// Each tetrahedron's sides among `edges` (the first edge joining the two points).
    fn locate(tets: &[[usize; 4]], edges: &[[usize; 2]]) -> Result<Vec<[usize; 6]>, MissingSide> {
        let mut index = std::collections::BTreeMap::new();
        for (k, e) in edges.iter().enumerate() {
            index.entry([e[0].min(e[1]), e[0].max(e[1])]).or_insert(k);
        }
        tets.iter()
            .enumerate()
            .map(|(ti, t)| {
                let mut te = [0; 6];
                for (slot, [a, b]) in te.iter_mut().zip(LOCAL_EDGES) {
                    let (a, b) = (t[a], t[b]);
                    *slot = *index.get(&[a.min(b), a.max(b)]).ok_or(MissingSide {
                        tetrahedron: ti,
                        a,
                        b,
                    })?;
                }
                Ok(te)
            })
            .collect()
    }

    /// The local vertices (k, l) of tetrahedron `t`'s local edge `j`, ordered as its global
    /// edge is stored: vertex k is the global edge's first point.
    #[inline(always)]
    pub fn oriented(&self, t: usize, j: usize) -> (usize, usize) {
        let [k, l] = LOCAL_EDGES[j];
        let e = self.edges[self.edges_in_tetrahedron[t][j]];
        if e[0] == self.tetrahedra[t][k] {
            (k, l)
        } else {
            (l, k)
        }
    }

    /// With one block M per edge (a, b): out[b] += s·M·(d_b − d_a), out[a] −= s·Mᵀ·(d_b − d_a),
    /// d = `d(i)`; the products both classes make, written once.
    pub fn apply_blocks(
        &self,
        blocks: &[Mat3],
        d: impl Fn(usize) -> Vec3,
        out: &mut [[f64; 3]],
        s: f64,
    ) {
        for (e, m) in self.edges.iter().zip(blocks) {
            let dp = d(e[1]) - d(e[0]);
            add_at(out, e[1], (m * dp) * s);
            add_at(out, e[0], -(m.tr_mul(&dp)) * s);
        }
    }

    /// The matrix of [`Self::apply_blocks`] (s = `k_factor`), at scalar offset `offset`.
    pub fn add_blocks_to_matrix(
        &self,
        blocks: &[Mat3],
        mat: &mut dyn MatrixSink,
        k_factor: f64,
        offset: usize,
    ) {
        for (e, m) in self.edges.iter().zip(blocks) {
            let m = m * k_factor;
            let mt = m.transpose();
            let (a, b) = (offset + 3 * e[0], offset + 3 * e[1]);
            mat.add_block3(a, a, &mt);
            mat.add_block3(a, b, &(-mt));
            mat.add_block3(b, a, &(-m));
            mat.add_block3(b, b, &m);
        }
    }
}

/// The shape vectors of the tetrahedron `p` (the gradients gⱼ of its barycentric coordinates,
/// Σ gⱼ = 0, Σ pⱼ⊗gⱼ = I) and six times its signed volume, written as SOFA writes them: gⱼ =
/// ∓(pⱼ₊₂ − pⱼ₊₁)×(pⱼ₊₃ − pⱼ₊₁) / 6V (minus for even j).
pub fn shape_vectors(p: &[Vec3; 4]) -> ([Vec3; 4], f64) {
    let vol6 = (p[2] - p[0]).cross(&(p[3] - p[0])).dot(&(p[1] - p[0]));
    let g = std::array::from_fn(|j| {
        let (a, b, c) = (p[(j + 1) % 4], p[(j + 2) % 4], p[(j + 3) % 4]);
        let n = (b - a).cross(&(c - a)) / vol6;
        if j % 2 == 0 {
            -n
        } else {
            n
        }
    });
    (g, vol6)
}

/// Whether a tetrahedron with six times the signed volume `vol6` and longest side `len` is
/// too flat for its shape vectors to mean anything.
fn degenerate(vol6: f64, len: f64) -> bool {
    !(vol6.is_finite() && vol6.abs() > 1e-12 * len * len * len)
}

/// The init shared by these force fields: the rest positions (the state's rest positions, as
/// SOFA reads them) and the tetrahedron topology (the `topology` link or the context's), its
/// edges, then the check that no tetrahedron is flat at rest. `None` after reporting an error.
pub fn init_inputs(
    ctx: &mut InitContext<'_>,
    data: &DataTable,
) -> Option<(Vec<[f64; 3]>, EdgeTetrahedra)> {
    let (rest, mesh) = fem_inputs(ctx, data, |m| !m.tetrahedra.is_empty(), "tetrahedra")?;
    let rest: Vec<[f64; 3]> = rest.as_chunks::<3>().0.to_vec();
    let (topo, warning) = EdgeTetrahedra::new(&mesh);
    if let Some(w) = warning {
        ctx.warn(w);
    }
    if topo.nb_points > rest.len() {
        ctx.error(format!(
            "the topology uses point {}, but the state has {} points",
            topo.nb_points - 1,
            rest.len()
        ));
        return None;
    }
    let flat: Vec<usize> = topo
        .tetrahedra
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            let p = t.map(|i| at(&rest, i));
            let (_, vol6) = shape_vectors(&p);
            let len = LOCAL_EDGES
                .iter()
                .map(|[a, b]| (p[*a] - p[*b]).norm())
                .fold(0.0, f64::max);
            degenerate(vol6, len)
        })
        .map(|(k, _)| k)
        .collect();
    if !flat.is_empty() {
        ctx.error(format!(
            "{} tetrahedra (the first: {}) have no volume at rest: their stiffness is undefined",
            flat.len(),
            flat[0]
        ));
        return None;
    }
    Some((rest, topo))
}

/// Point `i` of a typed coordinate or derivative slice.
#[inline(always)]
pub fn at(a: &[[f64; 3]], i: usize) -> Vec3 {
    Vec3::from(a[i])
}

/// `a[i] += v`.
#[inline(always)]
pub fn add_at(a: &mut [[f64; 3]], i: usize, v: Vec3) {
    let p = &mut a[i];
    p[0] += v.x;
    p[1] += v.y;
    p[2] += v.z;
}

#[cfg(test)]
pub(crate) mod test_support {
    //! A scene with one Vec3 state and a tetrahedron topology, to run a force field's init;
    //! a small irregular block of tetrahedra; the assembled matrix against the product.

    use canape_core::component::ForceField;
    use canape_core::diag::Diagnostics;
    use canape_core::matrix::Triplets;
    use canape_core::mesh::Mesh;

    /// A 2×1×1 block of 12 slightly irregular points, split into 12 tetrahedra (two cubes, six
    /// each, half of them negatively oriented).
    pub fn block() -> (Vec<f64>, Vec<[u32; 4]>) {
        let mut p = Vec::new();
        for k in 0..2 {
            for j in 0..2 {
                for i in 0..3 {
                    let w = 0.06 * ((3 * i + 5 * j + 7 * k) % 5) as f64 - 0.12;
                    p.extend_from_slice(&[
                        i as f64 + w,
                        j as f64 - 0.5 * w,
                        1.2 * k as f64 + 0.3 * w,
                    ]);
                }
            }
        }
        let idx = |i: u32, j: u32, k: u32| i + 3 * (j + 2 * k);
        let tets = (0..2)
            .flat_map(|x| {
                let h = [
                    idx(x, 0, 0),
                    idx(x + 1, 0, 0),
                    idx(x + 1, 1, 0),
                    idx(x, 1, 0),
                    idx(x, 0, 1),
                    idx(x + 1, 0, 1),
                    idx(x + 1, 1, 1),
                    idx(x, 1, 1),
                ];
                canape_core::mesh::hexa_to_tetras(h, x == 1)
            })
            .collect();
        (p, tets)
    }

    /// Run `ff`'s init in a scene with `rest` as the state's positions and `mesh` as the
    /// topology (none when `mesh` is `None`); returns the diagnostics.
    pub fn init(ff: &mut dyn ForceField, rest: &[f64], mesh: Option<Mesh>) -> Diagnostics {
        crate::fd_check::init_with_mesh(ff, rest, mesh)
    }

    /// A mesh of tetrahedra only.
    pub fn tet_mesh(tets: &[[u32; 4]]) -> Mesh {
        Mesh {
            tetrahedra: tets.to_vec(),
            ..Mesh::default()
        }
    }

    /// max |K·dx − add_dforce(dx)| / max |add_dforce(dx)| with K from `add_k_to_matrix`
    /// (`k_factor` −0.7 in both), for a pseudo-random dx; `add_force` at `x` first.
    pub fn assembled_vs_product(ff: &mut dyn ForceField, x: &[f64], seed: u64) -> f64 {
        let mut seed = seed;
        let n = x.len();
        let _ = crate::fd_check::forces(ff, x);
        let dx: Vec<f64> = (0..n).map(|_| crate::fd_check::rnd(&mut seed)).collect();
        let mut df = vec![0.0; n];
        ff.add_dforce(&dx, &mut df, -0.7);
        let mut t = Triplets::new(n);
        ff.add_k_to_matrix(&mut t, -0.7, 0);
        let mut y = vec![0.0; n];
        t.to_csr().mul(&dx, &mut y);
        let scale = df.iter().map(|v| v.abs()).fold(0.0, f64::max);
        assert!(scale > 0.0, "the product is zero: nothing is checked");
        y.iter()
            .zip(&df)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
            / scale
    }
}
