//! Force fields on states of any DOF type:
//! - RestShapeSpringsForceField (Sofa/Component/SolidMechanics/Spring/.../RestShapeSpringsForceField.inl):
//!   springs pulling points back to their rest position (or an external state's positions);
//!   Vec1/Vec2/Vec3, and Rigid3 with an angular spring on the rotation (angle·axis of q q₀⁻¹).
//! - UniformVelocityDampingForceField (Sofa/Component/MechanicalLoad/.../UniformVelocityDampingForceField.inl):
//!   f = −c v, with its damping matrix in implicit solves when `implicit` is set.

use crate::mapping::barycentric::resolve_end;
use canape_core::component::{ForceField, Interaction, Reaction};
use canape_core::data::{
    base_fields, ChangedData, DataKind, DataTable, Flag, ForceFieldData, Ints, Real, Reals, Text,
};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::registry::TemplateError;
use canape_core::scene::InitContext;
use canape_core::state::VecId;
use canape_types::dof::quat_of;
use canape_types::{DataTypes, DofType, Rigid3Types};

canape_core::data_schema! {
    /// RestShapeSpringsForceField's own Data (after the force-field Data).
    pub struct RestShapeSpringsData {
        points: Ints = ("points", DataKind::Ints(1), "", "points controlled by the rest shape springs") alias ["indices"],
        stiffness: Reals = ("stiffness", DataKind::Reals(1), "", "stiffness values between the actual position and the rest shape position"),
        angular_stiffness: Reals = ("angularStiffness", DataKind::Reals(1), "", "angularStiffness assigned when controlling the rotation of the points"),
        pivot_points: Reals = ("pivot_points", DataKind::Reals(3), "", "global pivot points used when translations instead of the rigid mass centers"),
        external_points: Ints = ("external_points", DataKind::Ints(1), "", "points from the external Mechancial State that define the rest shape springs"),
        recompute_indices: Flag = ("recompute_indices", DataKind::Bool, "1", "Recompute indices (should be false for BBOX)"),
        draw_spring: Flag = ("drawSpring", DataKind::Bool, "0", "draw Spring"),
        spring_color: Reals = ("springColor", DataKind::Reals(4), "0 1 0 1", "spring color. (default=[0.0,1.0,0.0,1.0])"),
        active_directions: Ints = ("activeDirections", DataKind::Ints(1), "", "Directions in which the spring is active (default=[all true])"),
        external_rest_shape: Text = ("external_rest_shape", DataKind::Str, "", "rest_shape can be defined by the position of an external Mechanical State"),
    }
}

canape_core::data_schema! {
    /// UniformVelocityDampingForceField's own Data (after the force-field Data).
    pub struct UniformVelocityDampingData {
        damping_coefficient: Real = ("dampingCoefficient", DataKind::Real, "0.1", "velocity damping coefficient") alias ["damping"],
        implicit: Flag = ("implicit", DataKind::Bool, "0", "should it generate damping matrix df/dv? (explicit otherwise, i.e. only generating a force)"),
    }
}

/// RestShapeSpringsForceField.
#[derive(Clone)]
pub struct RestShapeSpringsForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    ff: ForceFieldData,
    d: RestShapeSpringsData,
    /// Whether the last init set up the springs (stiffness edits then act in place).
    ready: bool,
    dof: DofType,
    /// Spring indices (all points when `points` is empty).
    idx: Vec<u32>,
    /// Rest positions the springs pull to (per spring: the rest coordinate).
    rest: Vec<f64>,
    k: Vec<f64>,
    ka: Vec<f64>,
    /// Active directions per coordinate scalar (Coord size entries).
    active: Vec<bool>,
    rayleigh: f64,
    external: Option<canape_core::scene::ComponentId>,
    /// With an external rest shape: this force field's own state, its coordinates' length (where
    /// the external state's coordinates start in the interaction's concatenated positions) and
    /// the external points, read at every `add_force` (the external state may move).
    own: Option<(canape_core::scene::ComponentId, usize)>,
    ext_idx: Vec<u32>,
}

impl RestShapeSpringsForceField {
    pub fn new(template: &str) -> Result<Self, TemplateError> {
        let dof = if template.trim().is_empty() {
            DofType::Vec3
        } else {
            DofType::from_template(template.split(',').next().unwrap_or("")).ok_or_else(|| {
                TemplateError::Unknown {
                    template: template.to_string(),
                    expected: "Vec1d, Vec2d, Vec3d or Rigid3d",
                }
            })?
        };
        if dof == DofType::Rigid2 {
            return Err(TemplateError::DofNotSupported {
                dof: DofType::Rigid2.name(),
                class: "RestShapeSpringsForceField".to_string(),
            });
        }
        let (data, ff) = ForceFieldData::declare(base_fields(DataTable::new()));
        let (data, d) = RestShapeSpringsData::declare(data);
        Ok(RestShapeSpringsForceField {
            data,
            ff,
            d,
            ready: false,
            dof,
            idx: Vec::new(),
            rest: Vec::new(),
            k: Vec::new(),
            ka: Vec::new(),
            active: Vec::new(),
            rayleigh: 0.0,
            external: None,
            own: None,
            ext_idx: Vec::new(),
        })
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.ready = false;
        let d = self.d;
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        if st.dof != self.dof {
            ctx.error(format!(
                "template {} does not match the context's {} state",
                self.dof.name(),
                st.dof.name()
            ));
            return;
        }
        let n = st.size() as u32;
        let pts = self.data.get(d.points);
        self.idx = if pts.is_empty() {
            (0..n).collect()
        } else {
            pts.to_vec()
        };
        if let Some(&bad) = self.idx.iter().find(|&&i| i >= n) {
            ctx.error(format!("point {bad} is out of the state's {n} points"));
            self.idx.clear();
            return;
        }
        self.read_stiffness();
        let cs = self.dof.coord_size();
        let act = self.data.get(d.active_directions);
        self.active = (0..cs)
            .map(|d| act.get(d).is_none_or(|v| *v != 0))
            .collect();
        // the rest shape: this state's rest positions, or an external state's positions
        let ext = self.data.get(d.external_rest_shape).trim().to_string();
        self.external = None;
        self.own = None;
        self.ext_idx.clear();
        let rest_src: Vec<f64>;
        let ext_idx: Vec<u32>;
        if ext.is_empty() {
            rest_src = st.vec(VecId::REST_POSITION).to_vec();
            ext_idx = self.idx.clone();
        } else {
            let Some(c) = resolve_end(ctx.scene, ctx.node, ctx.id, &ext, "", true) else {
                ctx.error(format!(
                    "external_rest_shape '{ext}' is not a MechanicalObject"
                ));
                self.idx.clear();
                return;
            };
            let Some(es) = ctx.scene.state(c) else {
                ctx.error(format!(
                    "external_rest_shape '{ext}' is not a MechanicalObject"
                ));
                self.idx.clear();
                return;
            };
            if es.dof != self.dof {
                ctx.error("external_rest_shape has another DOF type than this force field");
                self.idx.clear();
                return;
            }
            self.external = Some(c);
            self.own = ctx
                .scene
                .context_state(ctx.node)
                .map(|o| (o, st.size() * cs));
            rest_src = es.vec(VecId::POSITION).to_vec();
            let ep = self.data.get(d.external_points);
            ext_idx = if ep.is_empty() {
                (0..es.size() as u32).collect()
            } else {
                ep.to_vec()
            };
            if ext_idx.len() != self.idx.len() {
                ctx.error(format!(
                    "{} points but {} external points: no spring",
                    self.idx.len(),
                    ext_idx.len()
                ));
                self.idx.clear();
                return;
            }
        }
        if self.external.is_some() {
            self.ext_idx = ext_idx.clone();
        }
        self.rest.clear();
        for &e in &ext_idx {
            let e = e as usize;
            match rest_src.get(e * cs..(e + 1) * cs) {
                Some(c) => self.rest.extend_from_slice(c),
                None => {
                    ctx.error(format!("rest point {e} does not exist"));
                    self.idx.clear();
                    return;
                }
            }
        }
        self.ready = true;
    }

    /// The linear and angular stiffnesses from the Data: 100 when none is given, the angular
    /// ones padded with 100 to as many as the linear ones.
    fn read_stiffness(&mut self) {
        self.k = self.data.get(self.d.stiffness).to_vec();
        if self.k.is_empty() {
            self.k = vec![100.0];
        }
        self.ka = self.data.get(self.d.angular_stiffness).to_vec();
        self.ka.resize(self.k.len(), 100.0);
    }

    /// Edits of stiffness and angularStiffness act in place once the springs are set up; the
    /// other Data re-initialise them.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = self.d;
        if !self.ready || !changed.only(&[d.stiffness.index(), d.angular_stiffness.index()]) {
            return Reaction::Reinit;
        }
        self.read_stiffness();
        Reaction::Updated
    }

    fn stiffness(&self, s: usize) -> (f64, f64) {
        let k = self.k.get(s).copied().unwrap_or(self.k[0]);
        let ka = self.ka.get(s).copied().unwrap_or(self.ka[0]);
        (k, ka)
    }
}

/// The rotation vector (angle·axis) of q·q₀⁻¹, as SOFA's RestShapeSpringsForceField takes it
/// (normalised, shortest arc, Quat::quatToAxis).
fn rotation_vector(q: &[f64; 7], q0: &[f64; 7]) -> [f64; 3] {
    let q0 = quat_of(q0);
    let inv = q0.conjugate() / q0.norm_squared();
    let mut dq = quat_of(q) * inv;
    let mag = dq.norm_squared();
    if (mag - 1.0).abs() > 1e-10 && mag > 0.0 {
        dq /= mag.sqrt();
    }
    if dq.w < 0.0 {
        dq = -dq;
    }
    if dq.w >= 1.0 {
        return [0.0; 3];
    }
    let v = nalgebra::Vector3::new(dq.i, dq.j, dq.k);
    let (angle, s) = if dq.w > 0.999 {
        let s = v.norm();
        (2.0 * s.asin(), s)
    } else {
        (2.0 * dq.w.acos(), dq.w.acos().sin())
    };
    let dir = if s < f64::EPSILON {
        nalgebra::Vector3::new(0.0, 1.0, 0.0)
    } else {
        v / s
    };
    [dir.x * angle, dir.y * angle, dir.z * angle]
}

impl_component!(
    RestShapeSpringsForceField,
    "RestShapeSpringsForceField",
    init,
    data_changed
);

impl ForceField for RestShapeSpringsForceField {
    fn interaction(&self) -> Option<Interaction> {
        // the external rest shape is read, it receives no force (SOFA's getExtPosition)
        match (self.own, self.external) {
            (Some((first, _)), Some(second)) if first != second => Some(Interaction {
                first,
                second,
                second_passive: true,
            }),
            _ => None,
        }
    }
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let (cs, ds) = (self.dof.coord_size(), self.dof.deriv_size());
        if let (Some((_, start)), Some(_)) = (self.own, self.interaction()) {
            // the external state's current positions are the rest shape
            for (s, &e) in self.ext_idx.iter().enumerate() {
                let from = start + e as usize * cs;
                if let Some(c) = x.get(from..from + cs) {
                    self.rest[s * cs..(s + 1) * cs].copy_from_slice(c);
                }
            }
        }
        for (s, &i) in self.idx.iter().enumerate() {
            let i = i as usize;
            let (k, ka) = self.stiffness(s);
            let r = &self.rest[s * cs..(s + 1) * cs];
            let xi = &x[i * cs..(i + 1) * cs];
            let lin = if self.dof == DofType::Rigid3 { 3 } else { ds };
            for d in 0..lin {
                if self.active[d] {
                    f[i * ds + d] -= k * (xi[d] - r[d]);
                }
            }
            if self.dof == DofType::Rigid3 {
                let q = Rigid3Types::coords(xi)[0];
                let q0 = Rigid3Types::coords(r)[0];
                let w = rotation_vector(&q, &q0);
                for d in 0..3 {
                    if self.active[3 + d] {
                        f[i * ds + 3 + d] -= ka * w[d];
                    }
                }
            }
        }
    }
    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let ds = self.dof.deriv_size();
        for (s, &i) in self.idx.iter().enumerate() {
            let i = i as usize;
            let (k, ka) = self.stiffness(s);
            for d in 0..ds {
                let (stiff, active) = if self.dof == DofType::Rigid3 && d >= 3 {
                    (ka, self.active[d])
                } else {
                    (k, self.active[d])
                };
                if active {
                    df[i * ds + d] -= stiff * k_factor * dx[i * ds + d];
                }
            }
        }
    }
    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        let ds = self.dof.deriv_size();
        for (s, &i) in self.idx.iter().enumerate() {
            let i = i as usize;
            let (k, ka) = self.stiffness(s);
            for d in 0..ds {
                let stiff = if self.dof == DofType::Rigid3 && d >= 3 {
                    ka
                } else {
                    k
                };
                if self.active[d] {
                    let r = offset + i * ds + d;
                    m.add(r, r, -k_factor * stiff);
                }
            }
        }
    }
    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        if self.dof == DofType::Rigid3 {
            return None;
        }
        let cs = self.dof.coord_size();
        let mut e = 0.0;
        for (s, &i) in self.idx.iter().enumerate() {
            let (k, _) = self.stiffness(s);
            for d in 0..cs {
                if self.active[d] {
                    let u = x[i as usize * cs + d] - self.rest[s * cs + d];
                    e += 0.5 * k * u * u;
                }
            }
        }
        Some(e)
    }
}

/// UniformVelocityDampingForceField: f = −c v on every DOF.
#[derive(Clone)]
pub struct UniformVelocityDampingForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: UniformVelocityDampingData,
    c: f64,
    implicit: bool,
}

impl Default for UniformVelocityDampingForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl UniformVelocityDampingForceField {
    pub fn new() -> Self {
        let data = canape_core::data::force_field_fields(DataTable::new());
        let (data, d) = UniformVelocityDampingData::declare(data);
        UniformVelocityDampingForceField {
            data,
            d,
            c: 0.1,
            implicit: false,
        }
    }
    fn init_impl(&mut self, _ctx: &mut InitContext<'_>) {
        self.read();
    }
    fn read(&mut self) {
        self.c = self.data.get(self.d.damping_coefficient);
        self.implicit = self.data.get(self.d.implicit);
    }
    /// Edits of dampingCoefficient and implicit act in place (init only copies them).
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = self.d;
        if !changed.only(&[d.damping_coefficient.index(), d.implicit.index()]) {
            return Reaction::Reinit;
        }
        self.read();
        Reaction::Updated
    }
}

impl_component!(
    UniformVelocityDampingForceField,
    "UniformVelocityDampingForceField",
    init,
    data_changed
);

impl ForceField for UniformVelocityDampingForceField {
    fn add_force(&mut self, _x: &[f64], v: &[f64], f: &mut [f64]) {
        for (fi, vi) in f.iter_mut().zip(v) {
            *fi -= self.c * vi;
        }
    }
    fn add_dforce(&mut self, _dx: &[f64], _df: &mut [f64], _k_factor: f64) {}
    fn add_k_to_matrix(&self, _m: &mut dyn MatrixSink, _k_factor: f64, _offset: usize) {}
    fn add_bdx(&mut self, dx: &[f64], df: &mut [f64], b_factor: f64) {
        if self.implicit && b_factor != 0.0 {
            for (o, d) in df.iter_mut().zip(dx) {
                *o -= d * (b_factor * self.c);
            }
        }
    }
    fn add_b_to_matrix(&self, m: &mut dyn MatrixSink, b_factor: f64, offset: usize, n: usize) {
        if self.implicit {
            for r in offset..offset + n {
                m.add(r, r, -self.c * b_factor);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{check_edit_changes, init_quiet, scene_with_state};
    use canape_core::scene::AnyComponent;

    /// What a force field gives at `x` with velocities `v`, as bits: the forces, the tangent
    /// and the damping applied to a vector, and the assembled stiffness and damping.
    fn response_bits<F: ForceField>(ff: &mut F, x: &[f64], v: &[f64]) -> Vec<u64> {
        let n = v.len();
        let mut out = vec![0.0; n];
        ff.add_force(x, v, &mut out);
        let dx: Vec<f64> = (0..n).map(|i| (i % 3) as f64 * 0.2 - 0.1).collect();
        let mut df = vec![0.0; n];
        ff.add_dforce(&dx, &mut df, 1.5);
        ff.add_bdx(&dx, &mut df, 0.25);
        out.extend(df);
        let mut tr = canape_core::matrix::Triplets::new(n);
        ff.add_k_to_matrix(&mut tr, 0.5, 0);
        ff.add_b_to_matrix(&mut tr, 0.75, 0, n);
        out.extend(tr.entries.iter().map(|e| e.2));
        out.iter().map(|x| x.to_bits()).collect()
    }

    /// A force field made by `make` on a state of `dof` (rest positions `x0`), initialised
    /// with `before`, then given `after` while it runs: the reaction. When it is
    /// [`Reaction::Updated`] its forces and tangents at moved positions must equal bit for bit
    /// those of one initialised from scratch with `before` then `after`.
    fn edit<F: ForceField + Clone + 'static>(
        make: impl Fn() -> F,
        dof: DofType,
        x0: &[f64],
        before: &[(&str, &str)],
        after: &[(&str, &str)],
    ) -> Reaction {
        let (mut scene, root) = scene_with_state(dof, x0);
        let wrap = |c| AnyComponent::ForceField(Box::new(c));
        let mut init = |attrs: &[(&str, &str)]| init_quiet(&mut scene, root, make(), wrap, attrs);
        let x: Vec<f64> = x0
            .iter()
            .enumerate()
            .map(|(i, p)| p + 0.01 * i as f64)
            .collect();
        let n = x0.len() / dof.coord_size() * dof.deriv_size();
        let v: Vec<f64> = (0..n).map(|i| 0.05 * i as f64 - 0.2).collect();
        let c = init(before);
        let fresh = || init(&[before, after].concat());
        check_edit_changes(c, after, fresh, |c| response_bits(c, &x, &v), false)
    }

    /// Editing the stiffnesses of running rest-shape springs gives the forces and tangent of
    /// springs initialised with them; other Data re-initialise them.
    #[test]
    fn edits_update_in_place_rest_shape_springs_stiffness() {
        let up = Reaction::Updated;
        let springs = || RestShapeSpringsForceField::new("Vec3d").unwrap();
        let x0: Vec<f64> = (0..9).map(|i| i as f64 * 0.3).collect();
        let v3 = DofType::Vec3;
        let one = [("stiffness", "50")];
        assert_eq!(edit(springs, v3, &x0, &one, &[("stiffness", "80")]), up);
        assert_eq!(
            edit(springs, v3, &x0, &[], &[("stiffness", "10 20 30")]),
            up
        );
        let per = [("points", "0 2"), ("stiffness", "5 7")];
        assert_eq!(edit(springs, v3, &x0, &per, &[("stiffness", "9")]), up);
        let moved = [("points", "1")];
        assert_eq!(edit(springs, v3, &x0, &one, &moved), Reaction::Reinit);
        // Rigid3: the angular stiffness too
        let rigid = || RestShapeSpringsForceField::new("Rigid3d").unwrap();
        let r0 = [
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.6, 0.0, 0.8,
        ];
        let r3 = DofType::Rigid3;
        let ang = [("angularStiffness", "4")];
        assert_eq!(edit(rigid, r3, &r0, &one, &ang), up);
        assert_eq!(edit(rigid, r3, &r0, &ang, &[("stiffness", "3 6")]), up);
    }

    /// Editing the coefficient (or `implicit`) of a running UniformVelocityDampingForceField
    /// gives the forces and damping of one initialised with it.
    #[test]
    fn edits_update_in_place_uniform_velocity_damping() {
        let up = Reaction::Updated;
        let make = UniformVelocityDampingForceField::new;
        let x0: Vec<f64> = (0..6).map(|i| i as f64 * 0.3).collect();
        let v3 = DofType::Vec3;
        let c = [("dampingCoefficient", "0.5"), ("implicit", "1")];
        assert_eq!(edit(make, v3, &x0, &c, &[("dampingCoefficient", "2")]), up);
        assert_eq!(edit(make, v3, &x0, &c, &[("damping", "0.125")]), up);
        assert_eq!(edit(make, v3, &x0, &c, &[("implicit", "0")]), up);
        let mass = [("rayleighStiffness", "0.1")];
        assert_eq!(edit(make, v3, &x0, &c, &mass), Reaction::Reinit);
    }
}
