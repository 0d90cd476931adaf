//! UniformMass: the same mass on every DOF (with a rigid's inertia).

use super::mass_base;
use canape_core::component::{Mass, Reaction};
use canape_core::data::{
    ChangedData, DataKind, DataTable, Flag, Ints, MassData, Real, Reals, Text, Value,
};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::DofType;
use canape_types::Vec3;

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

/// Why UniformMass's `vertexMass` text gives no mass.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VertexMassError {
    #[error("'{word}' is not a number (in '{text}')")]
    NotANumber { word: String, text: String },
    #[error("no value")]
    NoValue,
    #[error("{n} numbers; a Rigid3 mass is 'mass volume' and 9 inertia entries (11 numbers) or one number")]
    Rigid3Count { n: usize },
    #[error("{n} numbers; a Rigid2 mass is 'mass volume inertia' (3 numbers) or one number")]
    Rigid2Count { n: usize },
    #[error("{n} numbers; one mass per particle is expected")]
    ParticleCount { n: usize },
}

/// Why UniformMass's Data give no mass (the Display text names the Data).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UniformMassError {
    #[error("vertexMass: {0}")]
    VertexMass(VertexMassError),
}

/// The mass of one DOF from UniformMass's `vertexMass` text: one number, or for rigid DOFs
/// SOFA's RigidMass text "mass volume inertia" (Rigid3: the 3×3 inertia matrix per unit mass,
/// row-major; Rigid2: one number), brackets and commas read as spaces. A rigid mass given as
/// one number keeps the identity inertia.
fn parse_vertex_mass(text: &str, dof: DofType) -> Result<VertexMass, VertexMassError> {
    let cleaned: String = text
        .chars()
        .map(|c| if matches!(c, '[' | ']' | ',') { ' ' } else { c })
        .collect();
    let mut nums = Vec::new();
    for w in cleaned.split_whitespace() {
        // as SOFA's stream reads them: numbers glued by their signs are several
        canape_core::data::push_word_numbers(&mut nums, w).map_err(|_| {
            VertexMassError::NotANumber {
                word: w.to_string(),
                text: text.trim().to_string(),
            }
        })?;
    }
    let given = nums.len();
    let (mass, inertia) = match (dof, nums.len()) {
        (_, 0) => Err(VertexMassError::NoValue),
        (_, 1) => Ok((nums[0], None)),
        // SOFA's RigidMass reads its numbers from a stream and leaves what follows unread
        (DofType::Rigid3, n) if n >= 11 => {
            let mut i = [0.0; 9];
            i.copy_from_slice(&nums[2..11]);
            Ok((nums[0], Some(i)))
        }
        (DofType::Rigid2, n) if n >= 3 => Ok((
            nums[0],
            Some([nums[2], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        )),
        (DofType::Rigid3, n) => Err(VertexMassError::Rigid3Count { n }),
        (DofType::Rigid2, n) => Err(VertexMassError::Rigid2Count { n }),
        (_, n) => Err(VertexMassError::ParticleCount { n }),
    }?;
    let read = match (dof, inertia) {
        (DofType::Rigid3, Some(_)) => 11,
        (DofType::Rigid2, Some(_)) => 3,
        _ => given,
    };
    Ok(VertexMass {
        mass,
        inertia,
        ignored: given - read,
    })
}

/// What UniformMass's `vertexMass` text gives.
#[derive(Clone, Copy, Debug, PartialEq)]
struct VertexMass {
    mass: f64,
    /// The rigid inertia per unit mass, when given.
    inertia: Option<[f64; 9]>,
    /// Numbers after those SOFA's RigidMass reads (left unread by its stream).
    ignored: usize,
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
    fn given_vertex_mass(&self) -> Result<(f64, [f64; 9], usize), UniformMassError> {
        parse_vertex_mass(self.data.get(self.d.vertex_mass), self.dof)
            .map(|v| (v.mass, v.inertia.unwrap_or(IDENTITY3), v.ignored))
            .map_err(UniformMassError::VertexMass)
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
            Ok((vm, inertia, ignored)) => {
                if ignored > 0 && !total_set {
                    let read = if self.dof == DofType::Rigid3 { 11 } else { 3 };
                    ctx.warn(format!(
                        "vertexMass: {} numbers; the first {read} (mass, volume, inertia) are read and the rest ignored, as SOFA does",
                        ignored + read
                    ));
                }
                self.inertia = inertia;
                vm
            }
            Err(e) => {
                ctx.error(e.to_string());
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

impl UniformMass {
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
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
                    Ok((vm, inertia, _)) => (vm, inertia),
                    Err(e) => return Reaction::Refused(vec![e.to_string()]),
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

canape_core::impl_component!(UniformMass, "UniformMass", init, data_changed);

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

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::Component;

    #[test]
    fn a_rigid_mass_reads_its_first_numbers_as_sofas_stream_does() {
        // BilateralLagrangianConstraint_Rigid.scn writes 12 numbers: the 12th is not read
        let v = parse_vertex_mass("1 1 0.01 0 0 0 0.1 0 0 0 0.1 0", DofType::Rigid3).unwrap();
        assert_eq!(v.mass, 1.0);
        assert_eq!(
            v.inertia,
            Some([0.01, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.1])
        );
        assert_eq!(v.ignored, 1);
        let v = parse_vertex_mass("2 1 0.5 9", DofType::Rigid2).unwrap();
        assert_eq!((v.mass, v.ignored), (2.0, 1));
        // numbers glued by their signs, as the stream reads them
        let v = parse_vertex_mass("1 1 1 0 0 0 1 0 0 0 1-2", DofType::Rigid3).unwrap();
        assert_eq!(v.ignored, 1);
    }

    #[test]
    fn vertex_mass_refusals_read_as_before() {
        let why = |text: &str, dof: DofType| {
            UniformMassError::VertexMass(parse_vertex_mass(text, dof).unwrap_err()).to_string()
        };
        assert_eq!(
            why(" 1 x ", DofType::Vec3),
            "vertexMass: 'x' is not a number (in '1 x')"
        );
        assert_eq!(why("[]", DofType::Vec3), "vertexMass: no value");
        assert_eq!(
            why("1 2", DofType::Vec3),
            "vertexMass: 2 numbers; one mass per particle is expected"
        );
        assert_eq!(
            why("1 2 3 4 5 6 7 8", DofType::Rigid3),
            "vertexMass: 8 numbers; a Rigid3 mass is 'mass volume' and 9 inertia entries (11 numbers) or one number"
        );
        assert_eq!(
            why("1 2", DofType::Rigid2),
            "vertexMass: 2 numbers; a Rigid2 mass is 'mass volume inertia' (3 numbers) or one number"
        );
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
        use crate::test_support::{edit, init_in, scene_with_state};
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
        let reaction = edit(&mut m, after);
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
