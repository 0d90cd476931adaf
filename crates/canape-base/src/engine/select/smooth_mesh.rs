//! SmoothMeshEngine (Sofa/Component/Engine/Transform/src/sofa/component/engine/transform/
//! SmoothMeshEngine.inl): Laplacian smoothing of `input_position` over the mesh of a topology
//! (the `topology` link, else the context's).
//!
//! Each of `nb_iterations` sweeps moves every point (every point of `input_indices` when it is
//! given) to the mean of its neighbours' positions after the previous sweep (a Jacobi sweep);
//! the neighbours of a point are the other ends of its edges (the topology's edges, else the
//! edges of its elements), and a point without neighbours stays where it is.

use crate::base_data;
use crate::mass::linked_or_context_topology;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Flag, Int, Ints, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use std::collections::BTreeSet;

/// The neighbours of each of `n` points: the topology's edges when it lists some (in their
/// order, duplicates kept, as SOFA's vertex shell follows the edge list), else the distinct
/// edges of its triangles, quads, tetrahedra and hexahedra. Edges reaching beyond `n` points
/// are left out and counted.
pub fn neighbours(mesh: &Mesh, n: usize) -> (Vec<Vec<u32>>, usize) {
    let edges: Vec<[u32; 2]> = if !mesh.edges.is_empty() {
        mesh.edges.clone()
    } else {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        let mut add = |a: u32, b: u32| {
            if a != b && seen.insert((a.min(b), a.max(b))) {
                out.push([a, b]);
            }
        };
        for t in &mesh.triangles {
            for k in 0..3 {
                add(t[k], t[(k + 1) % 3]);
            }
        }
        for q in &mesh.quads {
            for k in 0..4 {
                add(q[k], q[(k + 1) % 4]);
            }
        }
        for t in &mesh.tetrahedra {
            for (a, b) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
                add(t[a], t[b]);
            }
        }
        for h in &mesh.hexahedra {
            for (a, b) in [
                (0, 1),
                (1, 2),
                (2, 3),
                (3, 0),
                (4, 5),
                (5, 6),
                (6, 7),
                (7, 4),
                (0, 4),
                (1, 5),
                (2, 6),
                (3, 7),
            ] {
                add(h[a], h[b]);
            }
        }
        out
    };
    let mut nb = vec![Vec::new(); n];
    let mut beyond = 0;
    for [a, b] in edges {
        if a as usize >= n || b as usize >= n {
            beyond += 1;
            continue;
        }
        nb[a as usize].push(b);
        nb[b as usize].push(a);
    }
    (nb, beyond)
}

/// `iterations` Jacobi sweeps of Laplacian smoothing of `x` (3 numbers a point) over
/// `neighbours`, on the points of `subset` only when it is given (indices must be in range).
pub fn smooth(
    x: &[f64],
    neighbours: &[Vec<u32>],
    subset: Option<&[u32]>,
    iterations: usize,
) -> Vec<f64> {
    let mut cur = x.to_vec();
    let mut next = cur.clone();
    let mean = |cur: &[f64], i: usize| -> Option<[f64; 3]> {
        let nb = neighbours.get(i).filter(|v| !v.is_empty())?;
        let mut s = [0.0; 3];
        for &j in nb {
            for a in 0..3 {
                s[a] += cur[3 * j as usize + a];
            }
        }
        Some(s.map(|v| v / nb.len() as f64))
    };
    for _ in 0..iterations {
        next.copy_from_slice(&cur);
        let mut update = |i: usize| {
            if let Some(m) = mean(&cur, i) {
                next[3 * i..3 * i + 3].copy_from_slice(&m);
            }
        };
        match subset {
            Some(ids) => ids.iter().for_each(|&i| update(i as usize)),
            None => (0..cur.len() / 3).for_each(&mut update),
        }
        std::mem::swap(&mut cur, &mut next);
    }
    cur
}

canape_core::data_schema! {
    /// SmoothMeshEngine's own Data (after the base Data).
    pub struct SmoothMeshEngineData {
        input_position: Reals = ("input_position", DataKind::Reals(3), "", "Input position"),
        input_indices: Ints = ("input_indices", DataKind::Ints(0), "", "Position indices that need to be smoothed, leave empty for all positions"),
        output_position: Reals => ("output_position", DataKind::Reals(3), "Output position"),
        nb_iterations: Int = ("nb_iterations", DataKind::Int, "1", "Number of iterations of laplacian smoothing"),
        show_input: Flag = ("showInput", DataKind::Bool, "0", "showInput"),
        show_output: Flag = ("showOutput", DataKind::Bool, "0", "showOutput"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

/// SmoothMeshEngine: `output_position`, the smoothed `input_position`.
#[derive(Clone)]
pub struct SmoothMeshEngine {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: SmoothMeshEngineData,
}

impl Default for SmoothMeshEngine {
    fn default() -> Self {
        Self::new()
    }
}

impl SmoothMeshEngine {
    pub fn new() -> Self {
        let (data, d) = SmoothMeshEngineData::declare(base_data(DataTable::new()));
        SmoothMeshEngine { data, d }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let _ = self
            .data
            .put(self.d.output_position, Value::Reals(Vec::new()));
        let link = self.data.get(self.d.topology).to_string();
        let Some(mesh) = linked_or_context_topology(ctx, &self.data, self.d.topology) else {
            if link.trim().is_empty() {
                ctx.error("no topology in the context: nothing is smoothed");
            }
            return;
        };
        let x = self.data.get(self.d.input_position).to_vec();
        if !x.iter().all(|v| v.is_finite()) {
            ctx.warn("input_position holds non-finite numbers: they spread to their neighbours");
        }
        let n = x.len() / 3;
        let it = self.data.get(self.d.nb_iterations);
        let iterations = if it < 0 {
            ctx.warn(format!("nb_iterations {it} is negative: 1 is used"));
            1
        } else {
            it as usize
        };
        let (nb, beyond) = neighbours(mesh, n);
        if beyond > 0 {
            ctx.error(format!(
                "{beyond} edge(s) of the topology reach beyond the {n} input positions: they are ignored"
            ));
        }
        let subset: Option<Vec<u32>> = if self.data.get(self.d.input_indices).is_empty() {
            None
        } else {
            let ids = self.data.get(self.d.input_indices);
            let bad = ids.iter().filter(|&&i| i as usize >= n).count();
            if bad > 0 {
                ctx.error(format!(
                    "{bad} index(es) of input_indices are beyond the {n} input positions: they are ignored"
                ));
            }
            Some(ids.iter().copied().filter(|&i| (i as usize) < n).collect())
        };
        let out = smooth(&x[..3 * n], &nb, subset.as_deref(), iterations);
        let _ = self.data.put(self.d.output_position, Value::Reals(out));
    }
}

impl_component!(SmoothMeshEngine, "SmoothMeshEngine", init);

impl Engine for SmoothMeshEngine {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::MeshContainer;
    use canape_core::component::Component;
    use canape_core::scene::{AnyComponent, Scene};

    /// A 4×4 grid of points in the z = 0 plane (index x + 4y), as 9 quads.
    fn grid_mesh() -> (Vec<f64>, Mesh) {
        let x: Vec<f64> = (0..16)
            .flat_map(|i| [(i % 4) as f64, (i / 4) as f64, 0.0])
            .collect();
        let mut quads = Vec::new();
        for j in 0..3u32 {
            for i in 0..3u32 {
                let a = i + 4 * j;
                quads.push([a, a + 1, a + 5, a + 4]);
            }
        }
        let mesh = Mesh {
            quads,
            ..Mesh::default()
        };
        (x, mesh)
    }

    #[test]
    fn a_flat_grid_stays_flat_and_a_raised_point_goes_to_its_neighbours_mean() {
        let (mut x, mesh) = grid_mesh();
        let (nb, beyond) = neighbours(&mesh, 16);
        assert_eq!(beyond, 0);
        // an inner point has 4 neighbours, a corner 2
        assert_eq!(nb[5].len(), 4);
        assert_eq!(nb[0].len(), 2);
        let flat = smooth(&x, &nb, None, 3);
        assert!(flat.chunks(3).all(|p| p[2] == 0.0));
        // raise point 5 (1, 1) by 1: one sweep brings it to the mean of its neighbours, z = 0,
        // and lifts each of its 4 neighbours by 1/(their neighbour count)
        x[3 * 5 + 2] = 1.0;
        let once = smooth(&x, &nb, None, 1);
        assert_eq!(once[3 * 5 + 2], 0.0);
        assert_eq!(once[5], 1.0 / 3.0); // z of point 1 (1, 0): 3 neighbours
        assert_eq!(once[3 * 6 + 2], 1.0 / 4.0); // (2, 1): 4 neighbours
        assert_eq!(once[3 * 10 + 2], 0.0); // (2, 2): not a neighbour
                                           // only point 5 smoothed: it alone moves, to (1, 1, 0)
        let only = smooth(&x, &nb, Some(&[5]), 1);
        let moved: Vec<usize> = (0..16)
            .filter(|&i| (0..3).any(|a| only[3 * i + a] != x[3 * i + a]))
            .collect();
        assert_eq!(moved, vec![5]);
        assert_eq!(&only[15..18], &[1.0, 1.0, 0.0]);
        // in-plane positions of a regular grid's inner points are fixed points
        assert_eq!(&once[3 * 6..3 * 6 + 2], &[2.0, 1.0]);
    }

    /// The engine initialised beside a MeshTopology holding `mesh`; the number of diagnostics.
    fn run(mesh: Mesh, attrs: &[(&str, &str)]) -> (SmoothMeshEngine, usize) {
        let mut e = SmoothMeshEngine::new();
        for (k, v) in attrs {
            e.data.set_str(k, v).unwrap();
        }
        let mut topo = MeshContainer::new("MeshTopology");
        *canape_core::component::Topology::mesh_mut(&mut topo) = mesh;
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        scene.add_component(
            root,
            "topology",
            AnyComponent::Topology(Box::new(topo)),
            None,
        );
        let id = scene.add_component(
            root,
            "smoother",
            AnyComponent::Engine(Box::new(e.clone())),
            None,
        );
        let mut diags = canape_core::diag::Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        e.init(&mut ctx);
        (e, diags.len())
    }

    #[test]
    fn the_engine_smooths_its_input_over_the_context_topology() {
        let (mut x, mesh) = grid_mesh();
        x[3 * 5 + 2] = 1.0;
        let text: Vec<String> = x.iter().map(|v| v.to_string()).collect();
        let (e, n) = run(
            mesh.clone(),
            &[("input_position", &text.join(" ")), ("nb_iterations", "2")],
        );
        assert_eq!(n, 0);
        let out = e.data.reals("output_position");
        assert_eq!(out.len(), 48);
        // second sweep: point 5 back to the mean of its neighbours' lifted heights
        // (1/3 + 1/3 + 1/4 + 1/4) / 4
        let expected = (1.0 / 3.0 + 1.0 / 3.0 + 1.0 / 4.0 + 1.0 / 4.0) / 4.0;
        assert!((out[3 * 5 + 2] - expected).abs() < 1e-15);
        // bad indices and edges beyond the points are reported, not fatal
        let bad = Mesh {
            edges: vec![[0, 1], [1, 99]],
            ..Mesh::default()
        };
        let (e, n) = run(
            bad,
            &[("input_position", "0 0 0  2 0 0"), ("input_indices", "0 7")],
        );
        assert_eq!(n, 2);
        assert_eq!(
            e.data.reals("output_position"),
            &[2.0, 0.0, 0.0, 2.0, 0.0, 0.0]
        );
        // no topology at all
        let mut e = SmoothMeshEngine::new();
        assert_eq!(crate::engine::test_support::init_alone(&mut e, &[]), 1);
        assert!(e.data.reals("output_position").is_empty());
    }
}
