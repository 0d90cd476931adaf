//! MeshMatrixMass: the consistent mass matrix of the elements (vertex and edge masses),
//! optionally lumped.

use super::{elements_in_range, hexa_volume, linked_or_context_topology, mass_base, tetra_volume};
use canape_core::component::Mass;
use canape_core::data::{DataKind, DataTable, Flag, MassData, Real, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_core::state::VecId;
use canape_types::{get3, Vec3};

canape_core::data_schema! {
    /// MeshMatrixMass's own Data (after [`MassData`]).
    pub struct MeshMatrixMassData {
        mass_density: Reals = ("massDensity", DataKind::Reals(0), "", "Specify real and strictly positive value(s) for the mass density."),
        total_mass: Real = ("totalMass", DataKind::Real, "1", "Specify the total mass resulting from all particles."),
        vertex_mass: Reals = ("vertexMass", DataKind::Reals(0), "", "internal values of the particles masses on vertices"),
        edge_mass: Reals = ("edgeMass", DataKind::Reals(0), "", "internal values of the particles masses on edges"),
        compute_mass_on_rest: Flag = ("computeMassOnRest", DataKind::Bool, "0", "If true, the mass of every element is computed based on the rest position rather than the position"),
        lumping: Flag = ("lumping", DataKind::Bool, "0", "If true, the mass matrix is lumped (diagonal)"),
        print_mass: Flag = ("printMass", DataKind::Bool, "0", "Print the mass"),
        show_gravity_center: Flag = ("showGravityCenter", DataKind::Bool, "0", "Display the center of gravity of the system"),
        show_axis_size_factor: Real = ("showAxisSizeFactor", DataKind::Real, "1", "Factor length of the axis displayed"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
        geometry_state: Text = ("geometryState", DataKind::Str, "", "link to the MechanicalObject associated with the geometry"),
    }
}

/// Consistent mass matrix from element volumes (Sofa/Component/Mass/.../MeshMatrixMass.inl):
/// vertices get ρV/10 and edges ρV/20 per tetrahedron (hexahedra: ρV/20 and ρV/40); on a
/// surface, ρA/6 and ρA/12 per triangle, ρA/8 and ρA/16 per quad (its four sides). The
/// elements are SOFA's first present of hexahedra, tetrahedra, quads, triangles; lumped, a
/// vertex's mass is multiplied by 2.5 on volumes and 2 on surfaces, as SOFA's lumping
/// coefficient.
#[derive(Clone)]
pub struct MeshMatrixMass {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    mass: MassData,
    d: MeshMatrixMassData,
    vertex_mass: Vec<f64>,
    edges: Vec<[u32; 2]>,
    edge_mass: Vec<f64>,
    /// The edges by first node for `add_mdx`: node a's edges (a, b), b ≥ a, are
    /// `by_node[node_start[a]..node_start[a + 1]]` as (b, mass), b ascending.
    node_start: Vec<u32>,
    by_node: Vec<(u32, f64)>,
    lumping: bool,
    /// SOFA's m_massLumpingCoeff: 2.5 for volume elements, 2 for surface ones.
    lumping_coef: f64,
    separate_gravity: bool,
    rayleigh_mass: f64,
}

impl Default for MeshMatrixMass {
    fn default() -> Self {
        Self::new()
    }
}

impl MeshMatrixMass {
    fn diagonal(&self) -> bool {
        self.lumping
    }

    pub fn new() -> Self {
        let (data, mass) = mass_base(DataTable::new());
        let (data, d) = MeshMatrixMassData::declare(data);
        MeshMatrixMass {
            data,
            mass,
            d,
            vertex_mass: Vec::new(),
            edges: Vec::new(),
            edge_mass: Vec::new(),
            node_start: Vec::new(),
            by_node: Vec::new(),
            lumping: false,
            lumping_coef: 2.5,
            separate_gravity: false,
            rayleigh_mass: 0.0,
        }
    }

    fn compute(
        &mut self,
        mesh: &Mesh,
        pos: &[f64],
        n: usize,
        density: &dyn Fn(usize) -> f64,
    ) -> f64 {
        let p = |i: u32| get3(pos, i as usize);
        let mut vm = vec![0.0; n];
        let mut edge_index: std::collections::BTreeMap<(u32, u32), usize> =
            std::collections::BTreeMap::new();
        let mut edges: Vec<[u32; 2]> = Vec::new();
        let mut em: Vec<f64> = Vec::new();
        let mut total = 0.0;
        let mut add_edge =
            |a: u32, b: u32, mu: f64, edges: &mut Vec<[u32; 2]>, em: &mut Vec<f64>| {
                let key = (a.min(b), a.max(b));
                let k = *edge_index.entry(key).or_insert_with(|| {
                    edges.push([key.0, key.1]);
                    em.push(0.0);
                    edges.len() - 1
                });
                em[k] += mu;
            };
        let (elems, vdiv, ediv): (Vec<Vec<u32>>, f64, f64) = if !mesh.hexahedra.is_empty() {
            (
                mesh.hexahedra.iter().map(|h| h.to_vec()).collect(),
                20.0,
                40.0,
            )
        } else if !mesh.tetrahedra.is_empty() {
            (
                mesh.tetrahedra.iter().map(|t| t.to_vec()).collect(),
                10.0,
                20.0,
            )
        } else if !mesh.quads.is_empty() {
            (mesh.quads.iter().map(|q| q.to_vec()).collect(), 8.0, 16.0)
        } else {
            (
                mesh.triangles.iter().map(|t| t.to_vec()).collect(),
                6.0,
                12.0,
            )
        };
        let surface = mesh.hexahedra.is_empty() && mesh.tetrahedra.is_empty();
        self.lumping_coef = if surface { 2.0 } else { 2.5 };
        const TRI_EDGES: [[usize; 2]; 3] = [[0, 1], [1, 2], [2, 0]];
        const QUAD_EDGES: [[usize; 2]; 4] = [[0, 1], [1, 2], [2, 3], [3, 0]];
        const TET_EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];
        const HEX_EDGES: [[usize; 2]; 12] = [
            [0, 1],
            [1, 2],
            [2, 3],
            [3, 0],
            [4, 5],
            [5, 6],
            [6, 7],
            [7, 4],
            [0, 4],
            [1, 5],
            [2, 6],
            [3, 7],
        ];
        for (e, el) in elems.iter().enumerate() {
            let vol = if surface {
                let tri = |a: u32, b: u32, c: u32| 0.5 * (p(b) - p(a)).cross(&(p(c) - p(a))).norm();
                if el.len() == 4 {
                    tri(el[0], el[1], el[2]) + tri(el[0], el[2], el[3])
                } else {
                    tri(el[0], el[1], el[2])
                }
            } else if el.len() == 8 {
                hexa_volume([
                    p(el[0]),
                    p(el[1]),
                    p(el[2]),
                    p(el[3]),
                    p(el[4]),
                    p(el[5]),
                    p(el[6]),
                    p(el[7]),
                ])
            } else {
                tetra_volume([p(el[0]), p(el[1]), p(el[2]), p(el[3])])
            };
            let rho = density(e);
            if !self.lumping {
                let mu = rho * vol / ediv;
                let list: &[[usize; 2]] = match (surface, el.len()) {
                    (true, 4) => &QUAD_EDGES,
                    (true, _) => &TRI_EDGES,
                    (false, 8) => &HEX_EDGES,
                    _ => &TET_EDGES,
                };
                for ed in list {
                    add_edge(el[ed[0]], el[ed[1]], mu, &mut edges, &mut em);
                    total += mu * 2.0;
                }
            }
            let mu = rho * vol / vdiv;
            for &v in el {
                vm[v as usize] += mu;
                total += if self.lumping {
                    mu * self.lumping_coef
                } else {
                    mu
                };
            }
        }
        self.vertex_mass = vm;
        self.edges = edges;
        self.edge_mass = em;
        total
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let dh = self.d;
        self.lumping = self.data.get(dh.lumping);
        self.separate_gravity = self.data.get(self.mass.separate_gravity);
        self.rayleigh_mass = self.data.get(self.mass.rayleigh_mass);
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        let n = st.size();
        let pos = if self.data.get(dh.compute_mass_on_rest) {
            st.vec(VecId::REST_POSITION)
        } else {
            st.vec(VecId::POSITION)
        };
        let Some(mesh) = linked_or_context_topology(ctx, &self.data, dh.topology) else {
            ctx.error(
                "no topology: MeshMatrixMass needs hexahedra, tetrahedra, quads or triangles",
            );
            return;
        };
        if mesh.hexahedra.is_empty()
            && mesh.tetrahedra.is_empty()
            && mesh.quads.is_empty()
            && mesh.triangles.is_empty()
        {
            ctx.error("the topology has no hexahedra, tetrahedra, quads or triangles (MeshMatrixMass on edges is not supported yet)");
            return;
        }
        if !elements_in_range(mesh, n) {
            ctx.error(format!(
                "topology refers to point {} but the state has {n} points",
                mesh.max_index().unwrap_or(0)
            ));
            return;
        }
        let total_set = self.data.was_set(dh.total_mass);
        let dens = self.data.get(dh.mass_density).to_vec();
        if total_set || dens.is_empty() {
            if total_set && !dens.is_empty() {
                ctx.warn("totalMass and massDensity are both set: totalMass is used, as in SOFA");
            }
            let total = self.data.get(dh.total_mass);
            let s = self.compute(mesh, pos, n, &|_| 1.0);
            let md = if s > f64::EPSILON { total / s } else { 1.0 };
            self.vertex_mass.iter_mut().for_each(|v| *v *= md);
            self.edge_mass.iter_mut().for_each(|v| *v *= md);
            let _ = self.data.put(dh.mass_density, Value::Reals(vec![md]));
        } else {
            let d = dens.clone();
            let total = self.compute(mesh, pos, n, &move |e| {
                if d.len() > e {
                    d[e]
                } else {
                    d[0]
                }
            });
            let _ = self.data.put(dh.total_mass, Value::Real(total));
        }
        let _ = self
            .data
            .put(dh.vertex_mass, Value::Reals(self.vertex_mass.clone()));
        let _ = self
            .data
            .put(dh.edge_mass, Value::Reals(self.edge_mass.clone()));
        self.index_edges_by_node();
    }

    /// Group the edges by their first node (see `by_node`).
    fn index_edges_by_node(&mut self) {
        let n = self.vertex_mass.len();
        let mut order: Vec<usize> = (0..self.edges.len())
            .filter(|&k| (self.edges[k][1] as usize) < n)
            .collect();
        order.sort_by_key(|&k| self.edges[k]);
        self.by_node = order
            .iter()
            .map(|&k| (self.edges[k][1], self.edge_mass[k]))
            .collect();
        self.node_start = vec![0; n + 1];
        for &k in &order {
            self.node_start[self.edges[k][0] as usize + 1] += 1;
        }
        for a in 0..n {
            self.node_start[a + 1] += self.node_start[a];
        }
    }
}

impl_component!(MeshMatrixMass, "MeshMatrixMass", init);

impl Mass for MeshMatrixMass {
    fn add_gravity_force(&self, f: &mut [f64], g: &Vec3) {
        if self.separate_gravity {
            return;
        }
        for (i, m) in self.vertex_mass.iter().enumerate().take(f.len() / 3) {
            let mg = g * *m * self.lumping_coef;
            f[3 * i] += mg.x;
            f[3 * i + 1] += mg.y;
            f[3 * i + 2] += mg.z;
        }
    }
    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        if self.lumping {
            for (i, m) in self.vertex_mass.iter().enumerate() {
                for c in 0..3 {
                    res[3 * i + c] += dx[3 * i + c] * m * self.lumping_coef * factor;
                }
            }
            return;
        }
        // node by node: its diagonal term, then its edges (a, b), b ≥ a, in order of b: m_ab
        // x_b summed in registers and added to res_a once, m_ab x_a added to res_b (b's own
        // row comes later). Adding edge by edge into res_a instead chains every edge of a
        // node through a store and a load of the same entries.
        let dx3 = dx.as_chunks::<3>().0;
        let res3 = res.as_chunks_mut::<3>().0;
        let n = self
            .vertex_mass
            .len()
            .min(self.node_start.len().saturating_sub(1))
            .min(dx3.len())
            .min(res3.len());
        for a in 0..n {
            let m = self.vertex_mass[a];
            let xa = dx3[a];
            let mut acc = [0.0; 3];
            for c in 0..3 {
                acc[c] = xa[c] * m * factor;
            }
            let (s, e) = (self.node_start[a] as usize, self.node_start[a + 1] as usize);
            for &(b, m) in &self.by_node[s..e] {
                let t = m * factor;
                let b = b as usize;
                let xb = dx3[b];
                let rb = &mut res3[b];
                for c in 0..3 {
                    acc[c] += xb[c] * t;
                    rb[c] += xa[c] * t;
                }
            }
            let ra = &mut res3[a];
            for c in 0..3 {
                ra[c] += acc[c];
            }
        }
    }
    fn add_m_to_matrix(&self, mat: &mut dyn MatrixSink, factor: f64, offset: usize) {
        let coef = if self.lumping { self.lumping_coef } else { 1.0 };
        for (i, m) in self.vertex_mass.iter().enumerate() {
            for c in 0..3 {
                mat.add(offset + 3 * i + c, offset + 3 * i + c, m * coef * factor);
            }
        }
        if !self.lumping {
            for (e, m) in self.edges.iter().zip(&self.edge_mass) {
                let (a, b) = (e[0] as usize, e[1] as usize);
                for c in 0..3 {
                    mat.add(offset + 3 * a + c, offset + 3 * b + c, m * factor);
                    mat.add(offset + 3 * b + c, offset + 3 * a + c, m * factor);
                }
            }
        }
    }
    fn rayleigh_mass(&self) -> f64 {
        self.rayleigh_mass
    }
    fn separate_gravity(&self) -> bool {
        self.separate_gravity
    }
    fn is_diagonal(&self) -> bool {
        self.diagonal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// M·1 summed over a direction is the mass that direction carries: the consistent surface
    /// masses of a triangle and of a quad add up to ρ·area, with SOFA's vertex and edge shares
    /// (ρA/6 and ρA/12 per triangle, ρA/8 and ρA/16 per quad side), and lumped to ρ·area too.
    #[test]
    fn surface_masses_share_each_area_as_sofa() {
        let rest = [
            0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0, 1.0, 0.0, 3.0, 0.0, 0.0,
        ];
        let tri = Mesh {
            triangles: vec![[1, 4, 2]],
            ..Mesh::default()
        };
        let quad = Mesh {
            quads: vec![[0, 1, 2, 3]],
            ..Mesh::default()
        };
        for (mesh, area, vdiv, ediv) in [(&tri, 0.5, 6.0, 12.0), (&quad, 2.0, 8.0, 16.0)] {
            for lumping in [false, true] {
                let mut m = MeshMatrixMass::new();
                m.lumping = lumping;
                let total = m.compute(mesh, &rest, 5, &|_| 3.0);
                m.index_edges_by_node();
                assert!((total - 3.0 * area).abs() < 1e-12, "{total}");
                let ones = vec![1.0; 15];
                let mut out = vec![0.0; 15];
                m.add_mdx(&mut out, &ones, 1.0);
                let sum_x: f64 = out.iter().step_by(3).sum();
                assert!(
                    (sum_x - 3.0 * area).abs() < 1e-12,
                    "lumped {lumping}: {sum_x}"
                );
                if !lumping {
                    let v = mesh.triangles.first().map_or(0, |t| t[0] as usize);
                    assert!((m.vertex_mass[v] - 3.0 * area / vdiv).abs() < 1e-12);
                    assert!((m.edge_mass[0] - 3.0 * area / ediv).abs() < 1e-12);
                }
            }
        }
    }
}
