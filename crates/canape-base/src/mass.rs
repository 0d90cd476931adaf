//! Masses: UniformMass, DiagonalMass, MeshMatrixMass (SOFA's Mass area).

use crate::base_data;
use canape_core::component::{Component, Mass, Reaction};
use canape_core::data::{
    ChangedData, DataKind, DataTable, Flag, Ints, MassData, Real, Reals, Text, Value,
};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_core::state::VecId;
use canape_types::DofType;
use canape_types::{get3, Vec3};

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

// ---------------------------------------------------------------- UniformMass

canape_core::data_schema! {
    /// UniformMass's own Data (after [`MassData`]).
    pub struct UniformMassData {
        vertex_mass: Text = ("vertexMass", DataKind::Str, "1", "Specify one single, positive, real value for the mass of each particle. Rigid3: 'mass volume I00 I01 … I22' (SOFA's RigidMass; brackets and commas allowed)"),
        total_mass: Real = ("totalMass", DataKind::Real, "1", "Specify the total mass resulting from all particles."),
        indices: Ints = ("indices", DataKind::Ints(0), "", "optional local DOF indices. Any computation involving only indices outside of this list are discarded"),
        preserve_total_mass: Flag = ("preserveTotalMass", DataKind::Bool, "0", "Prevent totalMass from decreasing when removing particles."),
        handle_topological_changes: Flag = ("handleTopologicalChanges", DataKind::Bool, "0", "The mass and totalMass are recomputed on particles add/remove."),
        show_gravity_center: Flag = ("showGravityCenter", DataKind::Bool, "0", "display the center of gravity of the system"),
        show_axis_size_factor: Real = ("showAxisSizeFactor", DataKind::Real, "1", "factor length of the axis displayed"),
        compute_mapping_inertia: Flag = ("compute_mapping_inertia", DataKind::Bool, "0", "to be used if the mass is placed under a mapping"),
        show_initial_center_of_gravity: Flag = ("showInitialCenterOfGravity", DataKind::Bool, "0", "display the initial center of gravity of the system"),
        show_x0: Flag = ("showX0", DataKind::Bool, "0", "display the rest positions"),
        local_range: Reals = ("localRange", DataKind::Vector(2), "-1 -1", "optional range of local DOF indices"),
        filename: Text = ("filename", DataKind::File, "", "rigid file to load the mass parameters"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

/// The same mass on every DOF (Sofa/Component/Mass/.../UniformMass.inl).
#[derive(Clone)]
pub struct UniformMass {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    mass: MassData,
    d: UniformMassData,
    /// The DOF type of the state (Rigid3: mass on the translation, the inertia matrix times the
    /// mass on the rotation, as SOFA's Rigid3Mass; the inertia stays in world axes, as SOFA's).
    dof: DofType,
    m: f64,
    /// Rigid3: the inertia matrix per unit of mass, row-major (SOFA's RigidMass inertiaMatrix,
    /// identity by default); the rotation's mass matrix is m·I. Rigid2: its first entry.
    inertia: [f64; 9],
    indices: Option<Vec<u32>>,
    valid: bool,
    separate_gravity: bool,
    rayleigh_mass: f64,
    n: usize,
}

impl Default for UniformMass {
    fn default() -> Self {
        Self::new()
    }
}

const IDENTITY3: [f64; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];

/// The mass of one DOF from UniformMass's `vertexMass` text: one number, or for rigid DOFs
/// SOFA's RigidMass text "mass volume inertia" (Rigid3: the 3×3 inertia matrix per unit mass,
/// row-major; Rigid2: one number), brackets and commas read as spaces. A rigid mass given as
/// one number keeps the identity inertia.
fn parse_vertex_mass(text: &str, dof: DofType) -> Result<(f64, Option<[f64; 9]>), String> {
    let cleaned: String = text
        .chars()
        .map(|c| if matches!(c, '[' | ']' | ',') { ' ' } else { c })
        .collect();
    let mut nums = Vec::new();
    for w in cleaned.split_whitespace() {
        nums.push(
            w.parse::<f64>()
                .map_err(|_| format!("'{w}' is not a number (in '{}')", text.trim()))?,
        );
    }
    match (dof, nums.len()) {
        (_, 0) => Err("no value".into()),
        (_, 1) => Ok((nums[0], None)),
        (DofType::Rigid3, 11) => {
            let mut i = [0.0; 9];
            i.copy_from_slice(&nums[2..11]);
            Ok((nums[0], Some(i)))
        }
        (DofType::Rigid2, 3) => Ok((nums[0], Some([nums[2], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]))),
        (DofType::Rigid3, n) => Err(format!(
            "{n} numbers; a Rigid3 mass is 'mass volume' and 9 inertia entries (11 numbers) or one number"
        )),
        (DofType::Rigid2, n) => Err(format!(
            "{n} numbers; a Rigid2 mass is 'mass volume inertia' (3 numbers) or one number"
        )),
        (_, n) => Err(format!("{n} numbers; one mass per particle is expected")),
    }
}

impl UniformMass {
    fn diagonal(&self) -> bool {
        // a rigid inertia with off-diagonal terms couples the rotation's components
        !(self.dof == DofType::Rigid3 && [1, 2, 3, 5, 6, 7].iter().any(|&k| self.inertia[k] != 0.0))
    }

    pub fn new() -> Self {
        let (data, mass) = mass_base(DataTable::new());
        let (data, d) = UniformMassData::declare(data);
        UniformMass {
            data,
            mass,
            d,
            dof: DofType::Vec3,
            m: 0.0,
            inertia: IDENTITY3,
            indices: None,
            valid: false,
            separate_gravity: false,
            rayleigh_mass: 0.0,
            n: 0,
        }
    }

    /// Mass of each DOF after init.
    pub fn vertex_mass(&self) -> f64 {
        self.m
    }

    /// The DOFs the mass is on: the indices, or all the state's.
    fn count(&self) -> usize {
        self.indices.as_ref().map_or(self.n, Vec::len)
    }

    /// The mass of one DOF and the rigid inertia per unit mass (identity when not given) that
    /// `vertexMass` gives, or why it gives none.
    fn given_vertex_mass(&self) -> Result<(f64, [f64; 9]), String> {
        parse_vertex_mass(self.data.get(self.d.vertex_mass), self.dof)
            .map(|(m, inertia)| (m, inertia.unwrap_or(IDENTITY3)))
            .map_err(|e| format!("vertexMass: {e}"))
    }

    /// SOFA's choice of the mass of each of `count` DOFs: totalMass / count when the total
    /// mass is given (`total`; it wins over vertexMass), else `vertex_mass` (vertexMass's)
    /// when vertexMass is given (`vertex`), else the default totalMass over the DOFs; and the
    /// error that makes the mass invalid, if any.
    fn mass_per_dof(
        &self,
        total: bool,
        vertex: bool,
        vertex_mass: f64,
        count: usize,
    ) -> (f64, Option<&'static str>) {
        let tm = self.data.get(self.d.total_mass);
        let per_dof = if count > 0 { tm / count as f64 } else { 0.0 };
        if total {
            (per_dof, (tm < 0.0).then_some("totalMass must be positive"))
        } else if vertex {
            (
                vertex_mass,
                (vertex_mass < 0.0).then_some("vertexMass must be positive"),
            )
        } else {
            // SOFA's UniformMass: "No information about the mass is given. Default totalMass
            // is used as reference" (its default, 1)
            (per_dof, None)
        }
    }

    /// Publish the mass of each DOF (`vertexMass`, with the rigid inertia) and the total mass.
    fn publish(&mut self, count: usize) {
        let shown = if self.dof.is_rigid() {
            let i = &self.inertia;
            let list: Vec<String> = i.iter().map(|v| v.to_string()).collect();
            format!("{} 1 {}", self.m, list.join(" "))
        } else {
            self.m.to_string()
        };
        let _ = self.data.put(self.d.vertex_mass, Value::Str(shown));
        let _ = self
            .data
            .put(self.d.total_mass, Value::Real(self.m * count as f64));
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let n = ctx.state().map(|s| s.size()).unwrap_or(0);
        self.dof = ctx.state().map_or(DofType::Vec3, |s| s.dof);
        let idx = self.data.get(self.d.indices).to_vec();
        self.n = n;
        let lr = self.data.get(self.d.local_range).to_vec();
        let idx = if lr.len() == 2
            && lr[0] >= 0.0
            && lr[1] > 0.0
            && (lr[1] as usize) + 1 < n.max(1)
            && lr[0] <= lr[1]
        {
            (lr[0] as u32..=lr[1] as u32).collect()
        } else {
            idx
        };
        if let Some(bad) = idx.iter().find(|&&i| i as usize >= n) {
            ctx.warn(format!(
                "index {bad} is out of range (the state has {n} points); such indices are ignored"
            ));
        }
        self.indices = if idx.is_empty() { None } else { Some(idx) };
        let count = self.count();
        let total_set = self.data.was_set(self.d.total_mass);
        let vertex_set = self.data.was_set(self.d.vertex_mass);
        self.valid = true;
        self.inertia = IDENTITY3;
        let vm = match self.given_vertex_mass() {
            Ok((vm, inertia)) => {
                self.inertia = inertia;
                vm
            }
            Err(e) => {
                ctx.error(e);
                self.valid = false;
                return;
            }
        };
        if total_set && vertex_set {
            ctx.warn("both totalMass and vertexMass are set; totalMass is used, as in SOFA");
        }
        let (m, invalid) = self.mass_per_dof(total_set, vertex_set, vm, count);
        if let Some(e) = invalid {
            ctx.error(e);
            self.valid = false;
        }
        self.m = m;
        self.publish(count);
        self.separate_gravity = self.data.get(self.mass.separate_gravity);
        self.rayleigh_mass = self.data.get(self.mass.rayleigh_mass);
    }

    fn each(&self, n: usize, mut f: impl FnMut(usize)) {
        match &self.indices {
            Some(ix) => ix
                .iter()
                .filter(|&&i| (i as usize) < n)
                .for_each(|&i| f(i as usize)),
            None => (0..n).for_each(f),
        }
    }
}

impl Component for UniformMass {
    fn class_name(&self) -> &'static str {
        "UniformMass"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        self.init_impl(ctx)
    }

    /// A new totalMass or vertexMass (or both: totalMass wins, as in init) gives every DOF its
    /// new mass in place and publishes both again, as init does; a new vertexMass of a rigid
    /// also gives its inertia. A new Rayleigh mass is taken as it is. Any other Data
    /// re-initialises the mass, as does any edit of a mass whose init failed.
    fn data_changed(&mut self, changed: &ChangedData) -> Reaction {
        let (total, vertex) = (self.d.total_mass, self.d.vertex_mass);
        let in_place = [
            total.index(),
            vertex.index(),
            self.mass.rayleigh_mass.index(),
        ];
        if !changed.only(&in_place) || !self.valid {
            return Reaction::Reinit;
        }
        let (total, vertex) = (changed.has(total), changed.has(vertex));
        if total || vertex {
            // the inertia comes with a new vertexMass; a new totalMass keeps the current one
            let (vm, inertia) = if vertex {
                match self.given_vertex_mass() {
                    Ok(given) => given,
                    Err(e) => return Reaction::Refused(vec![e]),
                }
            } else {
                (self.m, self.inertia)
            };
            let count = self.count();
            let (m, invalid) = self.mass_per_dof(total, vertex, vm, count);
            if let Some(e) = invalid {
                return Reaction::Refused(vec![e.to_string()]);
            }
            self.m = m;
            self.inertia = inertia;
            self.publish(count);
        }
        self.rayleigh_mass = self.data.get(self.mass.rayleigh_mass);
        Reaction::Updated
    }
}

impl Mass for UniformMass {
    fn add_gravity_force(&self, f: &mut [f64], g: &Vec3) {
        if !self.valid || self.separate_gravity {
            return;
        }
        let ds = self.dof.deriv_size();
        // the context gravity's first components for Vec1/Vec2, the translation for rigids
        let lin = match self.dof {
            DofType::Rigid3 => 3,
            DofType::Rigid2 => 2,
            d => d.deriv_size(),
        };
        let mg = g * self.m;
        self.each(f.len() / ds, |i| {
            for c in 0..lin {
                f[ds * i + c] += mg[c];
            }
        });
    }
    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        if !self.valid {
            return;
        }
        let m = if factor != 1.0 {
            self.m * factor
        } else {
            self.m
        };
        let ds = self.dof.deriv_size();
        // Rigid3: the angular block is m·I in world axes (SOFA's Rigid3Mass operator*), Rigid2:
        // m·I on the angle
        let inertia = &self.inertia;
        match self.dof {
            DofType::Rigid3 => self.each(res.len() / ds, |i| {
                let (r, d) = (&mut res[6 * i..6 * i + 6], &dx[6 * i..6 * i + 6]);
                for c in 0..3 {
                    r[c] += d[c] * m;
                    r[3 + c] += m * (0..3).map(|k| inertia[3 * c + k] * d[3 + k]).sum::<f64>();
                }
            }),
            DofType::Rigid2 => self.each(res.len() / ds, |i| {
                res[3 * i] += dx[3 * i] * m;
                res[3 * i + 1] += dx[3 * i + 1] * m;
                res[3 * i + 2] += dx[3 * i + 2] * m * inertia[0];
            }),
            _ => self.each(res.len() / ds, |i| {
                for c in 0..ds {
                    res[ds * i + c] += dx[ds * i + c] * m;
                }
            }),
        }
    }
    fn add_m_to_matrix(&self, mat: &mut dyn MatrixSink, factor: f64, offset: usize) {
        if !self.valid {
            return;
        }
        let m = self.m * factor;
        let ds = self.dof.deriv_size();
        let inertia = &self.inertia;
        match self.dof {
            DofType::Rigid3 => self.each(self.n, |i| {
                let o = offset + 6 * i;
                (0..3).for_each(|c| mat.add(o + c, o + c, m));
                for r in 0..3 {
                    for c in 0..3 {
                        mat.add(o + 3 + r, o + 3 + c, m * inertia[3 * r + c]);
                    }
                }
            }),
            DofType::Rigid2 => self.each(self.n, |i| {
                let o = offset + 3 * i;
                mat.add(o, o, m);
                mat.add(o + 1, o + 1, m);
                mat.add(o + 2, o + 2, m * inertia[0]);
            }),
            _ => self.each(self.n, |i| {
                (0..ds).for_each(|c| mat.add(offset + ds * i + c, offset + ds * i + c, m))
            }),
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

// ---------------------------------------------------------------- DiagonalMass

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

fn elements_in_range(mesh: &Mesh, n: usize) -> bool {
    mesh.max_index().is_none_or(|m| (m as usize) < n)
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
        let topo = linked_or_context_topology(ctx, self.data.get(self.d.topology));
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

/// The mesh named by a `topology="@…"` link, or the context's topology.
pub fn linked_or_context_topology<'a>(ctx: &mut InitContext<'a>, link: &str) -> Option<&'a Mesh> {
    if !link.trim().is_empty() {
        match ctx.linked(link) {
            Some(canape_core::scene::Target::Component(c)) => {
                if let Some(t) = ctx.scene.topology(c) {
                    return Some(t.mesh());
                }
                ctx.error(format!(
                    "topology link '{link}' does not point to a topology"
                ));
                return None;
            }
            _ => {
                ctx.error(format!("topology link '{link}' not found"));
                return None;
            }
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

// ---------------------------------------------------------------- MeshMatrixMass

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
        let link = self.data.get(dh.topology).to_string();
        let Some(mesh) = linked_or_context_topology(ctx, &link) else {
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
    /// What a UniformMass gives, as bits: its mass per DOF, M·dx for a pseudo-random dx (factors
    /// 1 and 0.3), its gravity forces, its Rayleigh mass; and its published vertexMass and
    /// totalMass.
    fn uniform_results(m: &UniformMass, size: usize) -> (Vec<u64>, String) {
        let mut seed = 7u64;
        let dx: Vec<f64> = (0..size)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect();
        let mut out = vec![m.vertex_mass(), m.rayleigh_mass()];
        for factor in [1.0, 0.3] {
            let mut r = vec![0.0; size];
            m.add_mdx(&mut r, &dx, factor);
            out.extend(r);
        }
        let mut g = vec![0.0; size];
        m.add_gravity_force(&mut g, &Vec3::new(0.5, -9.81, 1.5));
        out.extend(g);
        let published = format!(
            "{:?} {:?}",
            m.data().value("vertexMass"),
            m.data().value("totalMass")
        );
        (out.iter().map(|v| v.to_bits()).collect(), published)
    }

    /// A UniformMass on a state of `dof` at `positions` initialised with `before`, then given
    /// `after` while it runs and told which Data changed: the reaction. When it is
    /// [`Reaction::Updated`] its masses and published Data must equal bit for bit those of a
    /// UniformMass initialised from scratch with `fresh`; otherwise they must be those of
    /// before the edit.
    fn edit_uniform(
        dof: DofType,
        positions: &[f64],
        before: &[(&str, &str)],
        after: &[(&str, &str)],
        fresh: &[(&str, &str)],
    ) -> Reaction {
        use crate::test_support::{init_in, scene_with_state};
        use canape_core::scene::AnyComponent;
        let (mut scene, root) = scene_with_state(dof, positions);
        let size = positions.len() / dof.coord_size() * dof.deriv_size();
        let mut init = |attrs: &[(&str, &str)]| {
            let mut m = UniformMass::new();
            let diags = init_in(
                &mut scene,
                root,
                &mut m,
                |c| AnyComponent::Mass(Box::new(c)),
                attrs,
            );
            assert!(!diags.has_errors(), "{attrs:?}");
            m
        };
        let mut m = init(before);
        let want = init(fresh);
        let old = uniform_results(&m, size);
        let versions = m.data().versions();
        for (k, v) in after {
            m.data_mut().set_str(k, v).unwrap();
        }
        let changed = m.data().changed_since(&versions);
        let reaction = m.data_changed(&changed);
        let got = uniform_results(&m, size);
        if reaction == Reaction::Updated {
            assert_eq!(got, uniform_results(&want, size), "{after:?}");
            assert_ne!(got, old, "{after:?} changed nothing");
        } else {
            assert_eq!(got.0, old.0, "{after:?} ({reaction:?}) changed the masses");
        }
        reaction
    }

    /// Editing totalMass, vertexMass or rayleighMass of a running UniformMass updates it in
    /// place to exactly what an init with the new value gives (published vertexMass and
    /// totalMass included): the edited one of the two is used, totalMass when both are; a
    /// negative or unreadable mass is refused; other Data re-initialise it.
    #[test]
    fn uniform_mass_edits_update_in_place() {
        let x: Vec<f64> = (0..12).map(|i| i as f64 * 0.1).collect();
        let v3 = DofType::Vec3;
        let edit = |before: &[(&str, &str)], after: &[(&str, &str)], fresh: &[(&str, &str)]| {
            edit_uniform(v3, &x, before, after, fresh)
        };
        let up = Reaction::Updated;
        // totalMass over the DOFs, also when vertexMass was given, and on indices
        let total = [("totalMass", "5")];
        assert_eq!(edit(&[("vertexMass", "2")], &total, &total), up);
        assert_eq!(edit(&[], &total, &total), up);
        let on = |i: &[(&'static str, &'static str)]| [[("indices", "0 2")].as_slice(), i].concat();
        assert_eq!(edit(&on(&[]), &total, &on(&total)), up);
        // vertexMass as it is, also when totalMass was given (the scene's or the published one)
        let vertex = [("vertexMass", "0.75")];
        assert_eq!(edit(&[("totalMass", "2")], &vertex, &vertex), up);
        assert_eq!(edit(&on(&[]), &vertex, &on(&vertex)), up);
        // both at once: totalMass wins, as in init
        let both = [("vertexMass", "0.75"), ("totalMass", "8")];
        assert_eq!(edit(&[], &both, &both), up);
        let rayleigh = [("rayleighMass", "0.2"), ("totalMass", "2")];
        assert_eq!(edit(&[], &rayleigh, &rayleigh), up);
        for bad in ["-1", "abc", "1 2"] {
            let r = edit(&[("totalMass", "3")], &[("vertexMass", bad)], &[]);
            assert!(matches!(r, Reaction::Refused(_)), "vertexMass {bad}: {r:?}");
        }
        let r = edit(&[("vertexMass", "2")], &[("totalMass", "-4")], &[]);
        assert!(matches!(r, Reaction::Refused(_)), "{r:?}");
        assert_eq!(edit(&[], &[("indices", "1 3")], &[]), Reaction::Reinit);
        assert_eq!(
            edit(&[], &[("totalMass", "2"), ("separateGravity", "1")], &[]),
            Reaction::Reinit
        );

        // a rigid's inertia: a new vertexMass gives it, a new totalMass keeps it
        let rigid = DofType::Rigid3;
        let q: Vec<f64> = (0..3)
            .flat_map(|i| [i as f64, 0.5, -1.0, 0.0, 0.0, 0.0, 1.0])
            .collect();
        let inertia = [("vertexMass", "2 1 1 0.1 0 0.1 2 0 0 0 3")];
        let other = [("vertexMass", "[1.5 1 2 0 0 0 1 0.2 0 0.2 4]")];
        assert_eq!(edit_uniform(rigid, &q, &[], &inertia, &inertia), up);
        assert_eq!(edit_uniform(rigid, &q, &inertia, &other, &other), up);
        let with_total = [inertia[0], ("totalMass", "9")];
        assert_eq!(
            edit_uniform(rigid, &q, &inertia, &[("totalMass", "9")], &with_total),
            up
        );
    }
}
