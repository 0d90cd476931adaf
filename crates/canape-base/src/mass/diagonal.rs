//! DiagonalMass: lumped per-vertex masses from element volumes.

use super::{elements_in_range, hexa_volume, linked_or_context_topology, mass_base, tetra_volume};
use canape_core::component::Mass;
use canape_core::data::{DataKind, DataTable, Flag, MassData, Real, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_core::state::VecId;
use canape_types::DofType;
use canape_types::{get3, Vec3};

canape_core::data_schema! {
    /// DiagonalMass's own Data (after [`MassData`]).
    pub struct DiagonalMassData {
        vertex_mass: Reals = ("vertexMass", DataKind::Reals(0), "", "Specify a vector giving the mass of each vertex."),
        mass_density: Real = ("massDensity", DataKind::Real, "1", "Specify one single real and positive value for the mass density."),
        total_mass: Real = ("totalMass", DataKind::Real, "1", "Specify the total mass resulting from all particles."),
        compute_mass_on_rest: Flag = ("computeMassOnRest", DataKind::Bool, "1", "If true, the mass of every element is computed based on the rest position rather than the position"),
        show_gravity_center: Flag = ("showGravityCenter", DataKind::Bool, "0", "Display the center of gravity of the system"),
        show_axis_size_factor: Real = ("showAxisSizeFactor", DataKind::Real, "1", "Factor length of the axis displayed"),
        file_mass: Text = ("fileMass", DataKind::File, "", "Xsp3.0 file to specify the mass parameters") alias ["filename"],
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
        geometry_state: Text = ("geometryState", DataKind::Str, "", "link to the MechanicalObject associated with the geometry"),
    }
}

/// Lumped per-vertex masses from element volumes (Sofa/Component/Mass/.../DiagonalMass.inl).
/// On Vec1/Vec2/Rigid3 states the element measures use the points padded to 3D (the rigid
/// centers), and every derivative component of a point gets its mass (a rigid's inertia is
/// m·I, SOFA's RigidMass default).
#[derive(Clone)]
pub struct DiagonalMass {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    mass: MassData,
    d: DiagonalMassData,
    dof: DofType,
    masses: Vec<f64>,
    separate_gravity: bool,
    rayleigh_mass: f64,
}

impl Default for DiagonalMass {
    fn default() -> Self {
        Self::new()
    }
}

/// Which elements a mass integrates over: SOFA's priority hexa > tetra > quad > triangle > edge.
fn lumped_vertex_masses(
    mesh: &Mesh,
    rest: &[f64],
    n: usize,
    density: f64,
) -> Option<(Vec<f64>, f64)> {
    let mut m = vec![0.0; n];
    let mut total = 0.0;
    let p = |i: u32| get3(rest, i as usize);
    if !mesh.hexahedra.is_empty() {
        for h in &mesh.hexahedra {
            let pts = [
                p(h[0]),
                p(h[1]),
                p(h[2]),
                p(h[3]),
                p(h[4]),
                p(h[5]),
                p(h[6]),
                p(h[7]),
            ];
            let mu = density * hexa_volume(pts) / 8.0;
            for &v in h {
                m[v as usize] += mu;
                total += mu;
            }
        }
    } else if !mesh.tetrahedra.is_empty() {
        for t in &mesh.tetrahedra {
            let mu = density * tetra_volume([p(t[0]), p(t[1]), p(t[2]), p(t[3])]) / 4.0;
            for &v in t {
                m[v as usize] += mu;
                total += mu;
            }
        }
    } else if !mesh.quads.is_empty() {
        // the quad's area as two triangles (0, 1, 2) and (2, 3, 0), a quarter to each vertex
        for q in &mesh.quads {
            let a = ((p(q[1]) - p(q[0])).cross(&(p(q[2]) - p(q[0]))).norm()
                + (p(q[3]) - p(q[2])).cross(&(p(q[0]) - p(q[2]))).norm())
                * 0.5;
            let mu = density * a / 4.0;
            for &v in q {
                m[v as usize] += mu;
                total += mu;
            }
        }
    } else if !mesh.triangles.is_empty() {
        for t in &mesh.triangles {
            let a = (p(t[1]) - p(t[0])).cross(&(p(t[2]) - p(t[0]))).norm() / 2.0;
            let mu = density * a / 3.0;
            for &v in t {
                m[v as usize] += mu;
                total += mu;
            }
        }
    } else if !mesh.edges.is_empty() {
        for e in &mesh.edges {
            let mu = density * (p(e[1]) - p(e[0])).norm() / 2.0;
            for &v in e {
                m[v as usize] += mu;
                total += mu;
            }
        }
    } else {
        return None;
    }
    Some((m, total))
}

impl DiagonalMass {
    fn diagonal(&self) -> bool {
        true
    }

    pub fn new() -> Self {
        let (data, mass) = mass_base(DataTable::new());
        let (data, d) = DiagonalMassData::declare(data);
        DiagonalMass {
            data,
            mass,
            d,
            dof: DofType::Vec3,
            masses: Vec::new(),
            separate_gravity: false,
            rayleigh_mass: 0.0,
        }
    }

    pub fn vertex_masses(&self) -> &[f64] {
        &self.masses
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.separate_gravity = self.data.get(self.mass.separate_gravity);
        self.rayleigh_mass = self.data.get(self.mass.rayleigh_mass);
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        let n = st.size();
        self.dof = st.dof;
        let coords = if self.data.get(self.d.compute_mass_on_rest) {
            st.vec(VecId::REST_POSITION)
        } else {
            st.vec(VecId::POSITION)
        };
        // the points in 3D: Vec1/Vec2 padded with zeros, rigid centers
        let cs = st.dof.coord_size();
        let rest_points: Vec<f64> = coords
            .chunks_exact(cs)
            .flat_map(|c| std::array::from_fn::<f64, 3, _>(|k| c.get(k).copied().unwrap_or(0.0)))
            .collect();
        let rest = &rest_points[..];
        let topo = linked_or_context_topology(ctx, &self.data, self.d.topology);
        let Some(mesh) = topo else {
            ctx.error(
                "no topology in the context: DiagonalMass needs elements to compute vertex masses",
            );
            return;
        };
        if !elements_in_range(mesh, n) {
            ctx.error(format!(
                "topology refers to point {} but the state has {n} points",
                mesh.max_index().unwrap_or(0)
            ));
            return;
        }
        let d = self.d;
        let total_set = self.data.was_set(d.total_mass);
        let density_set = self.data.was_set(d.mass_density);
        let vm_set = self.data.was_set(d.vertex_mass);
        if total_set && (density_set || vm_set) {
            ctx.warn("totalMass is set together with massDensity or vertexMass: totalMass is used, as in SOFA");
        }
        let density = self.data.get(d.mass_density);
        if !total_set && density_set && density >= 0.0 {
            match lumped_vertex_masses(mesh, rest, n, density) {
                Some((m, total)) => {
                    self.masses = m;
                    let _ = self.data.put(d.total_mass, Value::Real(total));
                }
                None => ctx.error("topology has no elements"),
            }
        } else if !total_set && !density_set && vm_set && self.data.get(d.vertex_mass).len() == n {
            self.masses = self.data.get(d.vertex_mass).to_vec();
        } else {
            let total = self.data.get(d.total_mass);
            match lumped_vertex_masses(mesh, rest, n, 1.0) {
                Some((mut m, s)) => {
                    let rho = if s > f64::EPSILON { total / s } else { 1.0 };
                    m.iter_mut().for_each(|v| *v *= rho);
                    self.masses = m;
                    let _ = self.data.put(d.mass_density, Value::Real(rho));
                }
                None => ctx.error("topology has no elements"),
            }
        }
        let _ = self
            .data
            .put(d.vertex_mass, Value::Reals(self.masses.clone()));
    }
}

impl_component!(DiagonalMass, "DiagonalMass", init);

impl Mass for DiagonalMass {
    fn add_gravity_force(&self, f: &mut [f64], g: &Vec3) {
        if self.separate_gravity {
            return;
        }
        let ds = self.dof.deriv_size();
        // the gravity's first components for Vec1/Vec2, the translation for rigids
        let lin = match self.dof {
            DofType::Rigid3 => 3,
            DofType::Rigid2 => 2,
            d => d.deriv_size(),
        };
        for (i, m) in self.masses.iter().enumerate().take(f.len() / ds) {
            for c in 0..lin {
                f[ds * i + c] += g[c] * m;
            }
        }
    }
    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        let ds = self.dof.deriv_size();
        for (i, m) in self.masses.iter().enumerate().take(res.len() / ds) {
            for c in 0..ds {
                if factor == 1.0 {
                    res[ds * i + c] += dx[ds * i + c] * m;
                } else {
                    res[ds * i + c] += (dx[ds * i + c] * m) * factor;
                }
            }
        }
    }
    fn add_m_to_matrix(&self, mat: &mut dyn MatrixSink, factor: f64, offset: usize) {
        let ds = self.dof.deriv_size();
        for (i, m) in self.masses.iter().enumerate() {
            for c in 0..ds {
                mat.add(offset + ds * i + c, offset + ds * i + c, m * factor);
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

    #[test]
    fn lumped_masses_of_quads_share_each_area_in_four() {
        // a 2×1 rectangle and a unit square side by side (3 + 1 = area 3), density 2
        let mesh = Mesh {
            quads: vec![[0, 1, 2, 3], [1, 4, 5, 2]],
            ..Mesh::default()
        };
        let rest = [
            0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0, 1.0, 0.0, 3.0, 0.0, 0.0, 3.0, 1.0,
            0.0,
        ];
        let (m, total) = lumped_vertex_masses(&mesh, &rest, 6, 2.0).unwrap();
        assert!((total - 6.0).abs() < 1e-12);
        let want = [1.0, 1.5, 1.5, 1.0, 0.5, 0.5];
        for (a, b) in m.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{m:?}");
        }
    }
}
