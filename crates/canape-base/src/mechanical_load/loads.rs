//! Mechanical loads: PlaneForceField, TrianglePressureForceField, LinearForceField and
//! EdgePressureForceField (below), and ConstantForceField
//! (Sofa/Component/MechanicalLoad/.../ConstantForceField.inl):
//! a constant force on a set of points — one force per index, one force for all, or a total
//! force shared equally — on any DOF type (a force has the state's derivative size: 6 values,
//! force and torque, on a Rigid3 state).

use canape_core::component::{ForceField, Reaction};
use canape_core::data::{
    base_fields, ChangedData, Data, DataKind, DataTable, Flag, ForceFieldData, Ints, Real, Reals,
};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::DofType;

mod constant;
#[cfg(test)]
mod tests;

pub use constant::{ConstantForceError, ConstantForceField};

canape_core::data_schema! {
    /// PlaneForceField's own Data (after the force-field Data).
    pub struct PlaneForceFieldData {
        normal: Reals = ("normal", DataKind::Reals(0), "0 1 0", "plane normal. (default=[0,1,0])"),
        d: Real = ("d", DataKind::Real, "0", "plane d coef. (default=0)"),
        stiffness: Real = ("stiffness", DataKind::Real, "500", "force stiffness. (default=500)"),
        damping: Real = ("damping", DataKind::Real, "5", "force damping. (default=5)"),
        max_force: Real = ("maxForce", DataKind::Real, "0", "if non-null , the max force that can be applied to the object. (default=0)"),
        bilateral: Flag = ("bilateral", DataKind::Bool, "0", "if true the plane force field is applied on both sides. (default=false)"),
        local_range: Reals = ("localRange", DataKind::Reals(0), "-1 -1", "optional range of local DOF indices. Any computation involving indices outside of this range are discarded"),
        show_plane: Flag = ("showPlane", DataKind::Bool, "0", "enable/disable drawing of plane. (default=false)"),
        plane_color: Reals = ("planeColor", DataKind::Reals(4), "0 0.5 0.2 1", "plane color. (default=[0.0,0.5,0.2,1.0])"),
        show_plane_size: Real = ("showPlaneSize", DataKind::Real, "10", "plane display size if draw is enabled. (default=10)"),
    }
}

canape_core::data_schema! {
    /// TrianglePressureForceField's own Data (after the force-field Data).
    pub struct TrianglePressureForceFieldData {
        pressure: Reals = ("pressure", DataKind::Reals(0), "0 0 0", "Pressure force per unit area"),
        cauchy_stress: Reals = ("cauchyStress", DataKind::Reals(0), "0 0 0 0 0 0", "Cauchy Stress applied on the normal of each triangle"),
        triangle_list: Ints = ("triangleList", DataKind::Ints(0), "", "Indices of triangles separated with commas where a pressure is applied"),
        show_forces: Flag = ("showForces", DataKind::Bool, "0", "draw triangles which have a given pressure"),
        use_constant_force: Flag = ("useConstantForce", DataKind::Bool, "1", "applied force is computed as the pressure vector times the area at rest"),
    }
}

canape_core::data_schema! {
    /// LinearForceField's own Data (after the force-field Data).
    pub struct LinearForceFieldData {
        points: Ints = ("points", DataKind::Ints(0), "", "points where the force is applied"),
        force: Real = ("force", DataKind::Real, "1", "applied force to all points"),
        times: Reals = ("times", DataKind::Reals(0), "", "key times for the interpolation"),
        forces: Reals = ("forces", DataKind::Reals(0), "", "forces corresponding to the key times"),
        arrow_size_coef: Real = ("arrowSizeCoef", DataKind::Real, "0", "Size of the drawn arrows (0->no arrows, sign->direction of drawing"),
    }
}

canape_core::data_schema! {
    /// EdgePressureForceField's own Data (after the force-field Data).
    pub struct EdgePressureForceFieldData {
        pressure: Reals = ("pressure", DataKind::Reals(0), "0 0 0", "Pressure force per unit area"),
        edge_indices: Ints = ("edgeIndices", DataKind::Ints(0), "", "Indices of edges separated with commas where a pressure is applied"),
        edges: Ints = ("edges", DataKind::Ints(2), "", "List of edges where a pressure is applied"),
        normal: Reals = ("normal", DataKind::Reals(0), "0 0 0", "Normal direction for the plane selection of edges"),
        dmin: Real = ("dmin", DataKind::Real, "0", "Minimum distance from the origin along the normal direction"),
        dmax: Real = ("dmax", DataKind::Real, "0", "Maximum distance from the origin along the normal direction"),
        arrow_size_coef: Real = ("arrowSizeCoef", DataKind::Real, "0", "Size of the drawn arrows (0->no arrows, sign->direction of drawing"),
        p_intensity: Reals = ("p_intensity", DataKind::Reals(0), "", "pressure intensity on edge normal"),
        binormal: Reals = ("binormal", DataKind::Reals(0), "0 0 0", "Binormal of the 2D plane"),
        show_forces: Flag = ("showForces", DataKind::Bool, "0", "draw arrows of edge pressures"),
    }
}

/// PlaneForceField (Sofa/Component/MechanicalLoad/.../PlaneForceField.inl): points below the
/// plane x·n = d (or on both sides with `bilateral`) are pushed back with
/// f = −k·δ·n + damping·δ·v (δ = x·n − d < 0: the damping grows with the penetration), capped at
/// `maxForce`; stiffness −k n nᵀ on those points (the contacts of the last `add_force`). On any
/// DOF type: the plane lives in the positions' space (Vec1/Vec2/Vec3, rigid centers).
#[derive(Clone)]
pub struct PlaneForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    ff: ForceFieldData,
    dp: PlaneForceFieldData,
    /// Whether the last init accepted the state and the normal (edits then act in place).
    ready: bool,
    /// Spatial dimension (the normal's size) and the state's coordinate/derivative sizes.
    dims: usize,
    cs: usize,
    ds: usize,
    normal: [f64; 3],
    d: f64,
    stiffness: f64,
    damping: f64,
    max_force: f64,
    bilateral: bool,
    range: (usize, usize),
    rayleigh: f64,
    /// Points in contact at the last `add_force`.
    contacts: Vec<u32>,
}

impl Default for PlaneForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl PlaneForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(base_fields(DataTable::new()));
        let (data, dp) = PlaneForceFieldData::declare(data);
        PlaneForceField {
            data,
            ff,
            dp,
            ready: false,
            dims: 3,
            cs: 3,
            ds: 3,
            normal: [0.0, 1.0, 0.0],
            d: 0.0,
            stiffness: 500.0,
            damping: 5.0,
            max_force: 0.0,
            bilateral: false,
            range: (0, usize::MAX),
            rayleigh: 0.0,
            contacts: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.ready = false;
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        use canape_types::DofType;
        self.dims = match st.dof {
            DofType::Vec1 => 1,
            DofType::Vec2 | DofType::Rigid2 => 2,
            DofType::Vec3 | DofType::Rigid3 => 3,
        };
        self.cs = st.dof.coord_size();
        self.ds = st.dof.deriv_size();
        let dp = self.dp;
        let n = self.data.get(dp.normal);
        if n.len() < self.dims || n.iter().any(|v| !v.is_finite()) {
            // the values given, as the scene would write them
            let given = &self.data.fields()[dp.normal.index()].value;
            ctx.error(format!(
                "normal '{given}' needs {} finite numbers for this {} state",
                self.dims,
                st.dof.name()
            ));
            self.contacts.clear();
            self.stiffness = 0.0;
            self.damping = 0.0;
            return;
        }
        self.normal = [0.0; 3];
        self.normal[..self.dims].copy_from_slice(&n[..self.dims]);
        // SOFA's checks: negative values fall back to the defaults
        for (h, default) in Self::checked(dp) {
            if let Err(v) = self.checked_value(h) {
                let name = self.data.fields()[h.index()].name;
                ctx.warn(format!(
                    "{name} {v} is outside [0, +∞[: {default} is used, as in SOFA"
                ));
            }
        }
        self.read_parameters();
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        let r = self.data.get(dp.local_range).to_vec();
        self.range = (0, usize::MAX);
        if r.len() == 2 {
            if r[0] >= 0.0 {
                self.range.0 = r[0] as usize;
            }
            if r[1] >= 0.0 {
                self.range.1 = r[1] as usize + 1;
            }
        }
        self.ready = true;
    }

    /// The Data SOFA checks to be in [0, +∞[, with the default used otherwise.
    fn checked(dp: PlaneForceFieldData) -> [(Data<Real>, f64); 3] {
        [
            (dp.stiffness, 500.0),
            (dp.damping, 5.0),
            (dp.max_force, 0.0),
        ]
    }

    /// The value of a checked Data, or `Err` with it when outside [0, +∞[.
    fn checked_value(&self, h: Data<Real>) -> Result<f64, f64> {
        let v = self.data.get(h);
        if v >= 0.0 && v.is_finite() {
            Ok(v)
        } else {
            Err(v)
        }
    }

    /// Copy the plain parameters (d, stiffness, damping, maxForce, bilateral) from the Data,
    /// the checked ones falling back to their defaults.
    fn read_parameters(&mut self) {
        let dp = self.dp;
        let [k, c, m] =
            Self::checked(dp).map(|(h, default)| self.checked_value(h).unwrap_or(default));
        self.d = self.data.get(dp.d);
        self.stiffness = k;
        self.damping = c;
        self.max_force = m;
        self.bilateral = self.data.get(dp.bilateral);
    }

    /// Edits of d, stiffness, damping, maxForce and bilateral act in place (a value init would
    /// warn about goes through init, which reports it); the rest re-initialises.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let dp = self.dp;
        let in_place = [
            dp.d.index(),
            dp.stiffness.index(),
            dp.damping.index(),
            dp.max_force.index(),
            dp.bilateral.index(),
        ];
        if !self.ready || !changed.only(&in_place) {
            return Reaction::Reinit;
        }
        if Self::checked(dp)
            .iter()
            .any(|&(h, _)| self.checked_value(h).is_err())
        {
            return Reaction::Reinit;
        }
        self.read_parameters();
        Reaction::Updated
    }

    fn depth(&self, x: &[f64], i: usize) -> f64 {
        (0..self.dims)
            .map(|c| x[self.cs * i + c] * self.normal[c])
            .sum::<f64>()
            - self.d
    }
}

impl_component!(PlaneForceField, "PlaneForceField", init, data_changed);

impl ForceField for PlaneForceField {
    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]) {
        self.contacts.clear();
        let n = x.len() / self.cs.max(1);
        let limit = self.max_force * self.max_force;
        for i in self.range.0..n.min(self.range.1) {
            let d = self.depth(x, i);
            if !(self.bilateral || d < 0.0) {
                continue;
            }
            let (fi, di) = (-self.stiffness * d, -self.damping * d);
            let mut force = [0.0; 3];
            for c in 0..self.dims {
                force[c] = self.normal[c] * fi - v[self.ds * i + c] * di;
            }
            let amp: f64 = force.iter().map(|c| c * c).sum();
            if limit > 0.0 && amp > limit {
                let s = (limit / amp).sqrt();
                force.iter_mut().for_each(|c| *c *= s);
            }
            for c in 0..self.dims {
                f[self.ds * i + c] += force[c];
            }
            self.contacts.push(i as u32);
        }
    }
    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let fact = -self.stiffness * k_factor;
        for &p in &self.contacts {
            let p = p as usize;
            let dn: f64 = (0..self.dims)
                .map(|c| dx[self.ds * p + c] * self.normal[c])
                .sum();
            for c in 0..self.dims {
                df[self.ds * p + c] += self.normal[c] * (fact * dn);
            }
        }
    }
    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        let fact = -self.stiffness * k_factor;
        for &p in &self.contacts {
            let o = offset + self.ds * p as usize;
            for l in 0..self.dims {
                for c in 0..self.dims {
                    m.add(o + l, o + c, self.normal[l] * fact * self.normal[c]);
                }
            }
        }
    }
    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}

/// TrianglePressureForceField (Sofa/Component/MechanicalLoad/.../TrianglePressureForceField.inl,
/// constant-force mode, SOFA's default): each triangle of `triangleList` (indices into the
/// context topology's triangles) carries the force `pressure`·(rest area), a vector, shared
/// equally by its three vertices. The force does not depend on the positions: no stiffness.
#[derive(Clone)]
pub struct TrianglePressureForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: TrianglePressureForceFieldData,
    /// (vertices, rest area, force per vertex)
    loads: Vec<([usize; 3], f64, [f64; 3])>,
    /// Whether the last init found the state and the triangles (pressure edits then act in
    /// place).
    ready: bool,
}

impl Default for TrianglePressureForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl TrianglePressureForceField {
    pub fn new() -> Self {
        let data = canape_core::data::force_field_fields(DataTable::new());
        let (data, d) = TrianglePressureForceFieldData::declare(data);
        TrianglePressureForceField {
            data,
            d,
            loads: Vec::new(),
            ready: false,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.loads.clear();
        self.ready = false;
        if !self.data.get(self.d.use_constant_force) {
            ctx.error(
                "useConstantForce=\"false\" (a Cauchy stress on the current normals) is not supported yet",
            );
            return;
        }
        let Ok(p) = self.pressure() else {
            ctx.error(PRESSURE_NEEDS);
            return;
        };
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        if st.dof != canape_types::DofType::Vec3 {
            ctx.error(format!(
                "TrianglePressureForceField acts on Vec3 states ({} given)",
                st.dof.name()
            ));
            return;
        }
        let n = st.size();
        let rest = st.vec(canape_core::state::VecId::REST_POSITION).to_vec();
        let Some(topo) = ctx.topology_where(|m| !m.triangles.is_empty()) else {
            ctx.error("no triangle topology in the context");
            return;
        };
        let tris = topo.mesh().triangles.clone();
        for &t in self.data.get(self.d.triangle_list) {
            let Some(tri) = tris.get(t as usize) else {
                ctx.error(format!(
                    "triangle {t} is not in the topology ({} triangles)",
                    tris.len()
                ));
                continue;
            };
            let v = tri.map(|i| i as usize);
            if v.iter().any(|&i| i >= n) {
                ctx.error(format!("triangle {t} uses points beyond the state's {n}"));
                continue;
            }
            let q = |i: usize| canape_types::get3(&rest, i);
            let area = (q(v[1]) - q(v[0])).cross(&(q(v[2]) - q(v[0]))).norm() / 2.0;
            self.loads.push((v, area, per_vertex(p, area)));
        }
        self.ready = true;
    }

    /// `pressure` when it is 3 finite numbers.
    fn pressure(&self) -> Result<[f64; 3], ()> {
        match self.data.get(self.d.pressure) {
            &[a, b, c] if [a, b, c].iter().all(|v| v.is_finite()) => Ok([a, b, c]),
            _ => Err(()),
        }
    }

    /// Pressure edits act in place once the triangles are known (a pressure init would reject
    /// is refused); other Data re-initialise.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        if !self.ready || !changed.only(&[self.d.pressure.index()]) {
            return Reaction::Reinit;
        }
        let Ok(p) = self.pressure() else {
            return Reaction::Refused(vec![PRESSURE_NEEDS.to_string()]);
        };
        for (_, area, f) in &mut self.loads {
            *f = per_vertex(p, *area);
        }
        Reaction::Updated
    }
}

/// What init reports for a `pressure` that is not 3 finite numbers.
const PRESSURE_NEEDS: &str = "pressure needs 3 finite numbers (a force per unit area)";

/// The force on each vertex of a triangle of rest area `area` under pressure `p`.
fn per_vertex(p: [f64; 3], area: f64) -> [f64; 3] {
    [p[0] * area / 3.0, p[1] * area / 3.0, p[2] * area / 3.0]
}

impl_component!(
    TrianglePressureForceField,
    "TrianglePressureForceField",
    init,
    data_changed
);

impl ForceField for TrianglePressureForceField {
    fn add_force(&mut self, _x: &[f64], _v: &[f64], f: &mut [f64]) {
        for (v, _, fv) in &self.loads {
            for &i in v {
                for c in 0..3 {
                    f[3 * i + c] += fv[c];
                }
            }
        }
    }
    fn add_dforce(&mut self, _dx: &[f64], _df: &mut [f64], _k_factor: f64) {}
    fn add_k_to_matrix(&self, _m: &mut dyn MatrixSink, _k_factor: f64, _offset: usize) {}
}

/// LinearForceField (Sofa/Component/MechanicalLoad/.../LinearForceField.inl): the same force
/// on each of `points`, interpolated linearly between key `times` of `forces` and scaled by
/// `force`; none before the first key; after the last key the last force, unscaled (as SOFA
/// computes it). On any DOF type (a force has the state's derivative size).
#[derive(Clone)]
pub struct LinearForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: LinearForceFieldData,
    points: Vec<usize>,
    times: Vec<f64>,
    forces: Vec<Vec<f64>>,
    scale: f64,
    ds: usize,
    time: f64,
    /// Whether the last init accepted the key times and forces (`force` edits then act in
    /// place).
    ready: bool,
}

impl Default for LinearForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl LinearForceField {
    pub fn new() -> Self {
        let data = canape_core::data::force_field_fields(DataTable::new());
        let (data, d) = LinearForceFieldData::declare(data);
        LinearForceField {
            data,
            d,
            points: Vec::new(),
            times: Vec::new(),
            forces: Vec::new(),
            scale: 1.0,
            ds: 3,
            time: 0.0,
            ready: false,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.points.clear();
        // an invalid component keeps no key times: current() then applies nothing
        self.times.clear();
        self.forces.clear();
        self.ready = false;
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        self.ds = st.dof.deriv_size();
        let n = st.size();
        let times = self.data.get(self.d.times).to_vec();
        if times.windows(2).any(|w| w[1] < w[0]) {
            ctx.error("times must be in chronological order");
            return;
        }
        let f = self.data.get(self.d.forces);
        if f.len() != self.ds * times.len() {
            ctx.error(format!(
                "forces has {} numbers: {} key times of {} numbers each are needed",
                f.len(),
                times.len(),
                self.ds
            ));
            return;
        }
        self.times = times;
        self.forces = f.chunks(self.ds).map(|c| c.to_vec()).collect();
        self.scale = self.data.get(self.d.force);
        let (kept, dropped): (Vec<u32>, Vec<u32>) = self
            .data
            .get(self.d.points)
            .iter()
            .partition(|&&i| (i as usize) < n);
        if !dropped.is_empty() {
            ctx.error(format!(
                "points {dropped:?} are not in the state ({n} points)"
            ));
        }
        self.points = kept.into_iter().map(|i| i as usize).collect();
        self.ready = true;
    }

    /// Edits of `force` (the scale of the interpolated forces) act in place once init has run
    /// on a state; other Data re-initialise.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        if !self.ready || !changed.only(&[self.d.force.index()]) {
            return Reaction::Reinit;
        }
        self.scale = self.data.get(self.d.force);
        Reaction::Updated
    }

    /// The force at the current time, if any.
    fn current(&self) -> Option<Vec<f64>> {
        let (first, last) = (*self.times.first()?, *self.times.last()?);
        let t = self.time;
        if t < first {
            return None;
        }
        if t >= last {
            return self.forces.last().cloned();
        }
        let next = self.times.iter().position(|&k| k > t)?;
        let prev = next.checked_sub(1)?;
        let (tp, tn) = (self.times[prev], self.times[next]);
        let (fp, fn_) = (&self.forces[prev], &self.forces[next]);
        Some(
            (0..self.ds)
                .map(|c| (fp[c] + (fn_[c] - fp[c]) * (t - tp) / (tn - tp)) * self.scale)
                .collect(),
        )
    }
}

impl_component!(LinearForceField, "LinearForceField", init, data_changed);

impl ForceField for LinearForceField {
    fn set_time(&mut self, t: f64) {
        self.time = t;
    }
    fn add_force(&mut self, _x: &[f64], _v: &[f64], f: &mut [f64]) {
        let Some(g) = self.current() else {
            return;
        };
        let ds = self.ds;
        for &i in &self.points {
            for (o, v) in f[ds * i..ds * (i + 1)].iter_mut().zip(&g) {
                *o += v;
            }
        }
    }
    fn add_dforce(&mut self, _dx: &[f64], _df: &mut [f64], _k_factor: f64) {}
    fn add_k_to_matrix(&self, _m: &mut dyn MatrixSink, _k_factor: f64, _offset: usize) {}
}

/// EdgePressureForceField (Sofa/Component/MechanicalLoad/.../EdgePressureForceField.inl): a
/// force per unit length on chosen edges (`edgeIndices` into the topology's edges, or `edges`
/// as vertex pairs, or the edges between the planes `dmin` < x·normal < `dmax`), shared equally
/// by the edge's two points: `pressure` times the rest length when `pressure` is non-zero;
/// otherwise `p_intensity` along the in-plane normal normalize(binormal × edge direction),
/// times the rest length, that normal following the edge (with SOFA's lag of one step).
#[derive(Clone)]
pub struct EdgePressureForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: EdgePressureForceFieldData,
    /// (vertices, rest length, intensity, force per edge)
    edges: Vec<([usize; 2], f64, f64, [f64; 3])>,
    pressure: [f64; 3],
    binormal: Option<[f64; 3]>,
}

impl Default for EdgePressureForceField {
    fn default() -> Self {
        Self::new()
    }
}

fn unit3(v: [f64; 3]) -> [f64; 3] {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if n > 0.0 {
        [v[0] / n, v[1] / n, v[2] / n]
    } else {
        v
    }
}

impl EdgePressureForceField {
    pub fn new() -> Self {
        let data = canape_core::data::force_field_fields(DataTable::new());
        let (data, d) = EdgePressureForceFieldData::declare(data);
        EdgePressureForceField {
            data,
            d,
            edges: Vec::new(),
            pressure: [0.0; 3],
            binormal: None,
        }
    }

    /// The force of an edge at positions `x`.
    fn edge_force(&self, e: [usize; 2], l0: f64, intensity: f64, x: &[f64]) -> [f64; 3] {
        if self.pressure != [0.0; 3] {
            return self.pressure.map(|p| p * l0);
        }
        let Some(b) = self.binormal else {
            return [0.0; 3];
        };
        let d = [
            x[3 * e[1]] - x[3 * e[0]],
            x[3 * e[1] + 1] - x[3 * e[0] + 1],
            x[3 * e[1] + 2] - x[3 * e[0] + 2],
        ];
        let t = unit3(d);
        let b = unit3(b);
        let n = unit3([
            b[1] * t[2] - b[2] * t[1],
            b[2] * t[0] - b[0] * t[2],
            b[0] * t[1] - b[1] * t[0],
        ]);
        n.map(|c| c * intensity * l0)
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.edges.clear();
        let (t, d) = (&self.data, self.d);
        let v3 = |h: Data<Reals>| -> [f64; 3] {
            let r = t.get(h);
            [0, 1, 2].map(|k| r.get(k).copied().unwrap_or(0.0))
        };
        let pressure = v3(d.pressure);
        let b = v3(d.binormal);
        let normal = v3(d.normal);
        self.pressure = pressure;
        self.binormal = (b != [0.0; 3]).then_some(b);
        let intensity = self.data.get(d.p_intensity).to_vec();
        if self.pressure == [0.0; 3] && !intensity.is_empty() && self.binormal.is_none() {
            ctx.error("p_intensity without a binormal (the normals of a triangle surface) is not supported yet; give a binormal or a pressure");
            return;
        }
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        if st.dof != canape_types::DofType::Vec3 {
            ctx.error("EdgePressureForceField acts on Vec3 states");
            return;
        }
        let n = st.size();
        let rest = st.vec(canape_core::state::VecId::REST_POSITION).to_vec();
        let x = st.vec(canape_core::state::VecId::POSITION).to_vec();
        let Some(topo) = ctx.topology_where(|m| !m.edges.is_empty()) else {
            ctx.error("no topology with edges in the context");
            return;
        };
        let topo_edges = topo.mesh().edges.clone();
        let mut chosen: Vec<usize> = Vec::new();
        let (dmin, dmax) = (self.data.get(d.dmin), self.data.get(d.dmax));
        if dmin != dmax {
            let nrm = normal;
            let inside = |i: u32| {
                let p = canape_types::get3(&rest, i as usize);
                let d = p.x * nrm[0] + p.y * nrm[1] + p.z * nrm[2];
                d > dmin && d < dmax
            };
            chosen = (0..topo_edges.len())
                .filter(|&k| inside(topo_edges[k][0]) && inside(topo_edges[k][1]))
                .collect();
        }
        if self.data.was_set(d.edge_indices) {
            chosen = self
                .data
                .get(d.edge_indices)
                .iter()
                .map(|&i| i as usize)
                .collect();
        }
        if self.data.was_set(d.edges) {
            chosen = self
                .data
                .get(d.edges)
                .chunks_exact(2)
                .map(|p| {
                    topo_edges
                        .iter()
                        .position(|e| e[0] == p[0] && e[1] == p[1])
                        .unwrap_or(0)
                })
                .collect();
        }
        for (k, &ei) in chosen.iter().enumerate() {
            let Some(e) = topo_edges.get(ei) else {
                ctx.error(format!(
                    "edge {ei} is not in the topology ({} edges)",
                    topo_edges.len()
                ));
                continue;
            };
            let e = e.map(|i| i as usize);
            if e.iter().any(|&i| i >= n) {
                ctx.error(format!("edge {ei} uses points beyond the state's {n}"));
                continue;
            }
            let l0 = (canape_types::get3(&rest, e[1]) - canape_types::get3(&rest, e[0])).norm();
            let i = if intensity.len() > 1 {
                intensity.get(k).copied().unwrap_or(intensity[0])
            } else {
                intensity.first().copied().unwrap_or(0.0)
            };
            let f = self.edge_force(e, l0, i, &x);
            self.edges.push((e, l0, i, f));
        }
    }
}

impl_component!(EdgePressureForceField, "EdgePressureForceField", init);

impl ForceField for EdgePressureForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        for k in 0..self.edges.len() {
            let (e, l0, i, fe) = self.edges[k];
            for &p in &e {
                for c in 0..3 {
                    f[3 * p + c] += fe[c] / 2.0;
                }
            }
            // the force of the next call, from these positions (SOFA's one-step lag)
            self.edges[k].3 = self.edge_force(e, l0, i, x);
        }
    }
    fn add_dforce(&mut self, _dx: &[f64], _df: &mut [f64], _k_factor: f64) {}
    fn add_k_to_matrix(&self, _m: &mut dyn MatrixSink, _k_factor: f64, _offset: usize) {}
}
