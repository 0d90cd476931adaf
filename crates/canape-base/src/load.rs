//! Mechanical loads: PlaneForceField (below) and ConstantForceField
//! (Sofa/Component/MechanicalLoad/.../ConstantForceField.inl):
//! a constant force on a set of points — one force per index, one force for all, or a total
//! force shared equally — on any DOF type (a force has the state's derivative size: 6 values,
//! force and torque, on a Rigid3 state).

use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;

pub struct ConstantForceField {
    data: DataTable,
    /// (point, force) pairs, `ds` values per force.
    loads: Vec<(usize, Vec<f64>)>,
    ds: usize,
}

impl Default for ConstantForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl ConstantForceField {
    pub fn new() -> Self {
        let data = canape_core::data::force_field_fields(DataTable::new())
            .with(
                "indices",
                DataKind::Ints(0),
                "",
                "indices where the forces are applied (all points when empty)",
            )
            .with(
                "forces",
                DataKind::Reals(0),
                "",
                "applied forces at each point",
            )
            .with(
                "force",
                DataKind::Reals(0),
                "",
                "applied force to all points if forces attribute is not specified",
            )
            .with(
                "totalForce",
                DataKind::Reals(0),
                "",
                "total force for all points, will be distributed uniformly over points",
            )
            .with(
                "showArrowSize",
                DataKind::Real,
                "0",
                "Size of the drawn arrows (0->no arrows, sign->direction of drawing. (default=0)",
            )
            .with(
                "showColor",
                DataKind::Reals(4),
                "0.2 0.9 0.3 1",
                "Color for object display (default: [0.2,0.9,0.3,1])",
            );
        ConstantForceField {
            data,
            loads: Vec::new(),
            ds: 3,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.loads.clear();
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        let n = st.size();
        let ds = st.dof.deriv_size();
        self.ds = ds;
        let idx: Vec<usize> = if self.data.ints("indices").is_empty() {
            (0..n).collect()
        } else {
            self.data
                .ints("indices")
                .iter()
                .map(|&i| i as usize)
                .collect()
        };
        if let Some(bad) = idx.iter().find(|&&i| i >= n) {
            ctx.error(format!(
                "index {bad} is out of range (the state has {n} points)"
            ));
            return;
        }
        let forces = self.data.reals("forces").to_vec();
        let force = self.data.reals("force").to_vec();
        let total = self.data.reals("totalForce").to_vec();
        let one = |s: &[f64], k: usize| s[ds * k..ds * (k + 1)].to_vec();
        for (name, v) in [
            ("forces", &forces),
            ("force", &force),
            ("totalForce", &total),
        ] {
            if !v.len().is_multiple_of(ds) {
                ctx.error(format!(
                    "{name} has {} values: a force on this {} state has {ds}",
                    v.len(),
                    st.dof.name()
                ));
                return;
            }
        }
        if total.len() == ds && !idx.is_empty() {
            let f: Vec<f64> = total.iter().map(|t| t / idx.len() as f64).collect();
            self.loads = idx.iter().map(|&i| (i, f.clone())).collect();
        } else if forces.len() == ds * idx.len() && !forces.is_empty() {
            self.loads = idx
                .iter()
                .enumerate()
                .map(|(k, &i)| (i, one(&forces, k)))
                .collect();
        } else if forces.len() == ds || force.len() == ds {
            let f = if forces.len() == ds {
                one(&forces, 0)
            } else {
                one(&force, 0)
            };
            self.loads = idx.iter().map(|&i| (i, f.clone())).collect();
        } else if !forces.is_empty() {
            ctx.error(format!(
                "forces has {} vectors for {} indices",
                forces.len() / ds,
                idx.len()
            ));
        } else {
            ctx.warn("no force given (forces, force or totalForce): the component does nothing");
        }
    }
}

impl_component!(ConstantForceField, "ConstantForceField", init);

impl ForceField for ConstantForceField {
    fn add_force(&mut self, _x: &[f64], _v: &[f64], f: &mut [f64]) {
        let ds = self.ds;
        for (i, g) in &self.loads {
            for (o, v) in f[ds * i..ds * (i + 1)].iter_mut().zip(g) {
                *o += v;
            }
        }
    }
    fn add_dforce(&mut self, _dx: &[f64], _df: &mut [f64], _k_factor: f64) {}
    fn add_k_to_matrix(&self, _m: &mut dyn MatrixSink, _k_factor: f64, _offset: usize) {}
}

/// PlaneForceField (Sofa/Component/MechanicalLoad/.../PlaneForceField.inl): points below the
/// plane x·n = d (or on both sides with `bilateral`) are pushed back with
/// f = −k·δ·n + damping·δ·v (δ = x·n − d < 0: the damping grows with the penetration), capped at
/// `maxForce`; stiffness −k n nᵀ on those points (the contacts of the last `add_force`). On any
/// DOF type: the plane lives in the positions' space (Vec1/Vec2/Vec3, rigid centers).
pub struct PlaneForceField {
    data: DataTable,
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
        let data = canape_core::data::force_field_fields(DataTable::new())
            .with("normal", DataKind::Reals(0), "0 1 0", "plane normal. (default=[0,1,0])")
            .with("d", DataKind::Real, "0", "plane d coef. (default=0)")
            .with("stiffness", DataKind::Real, "500", "force stiffness. (default=500)")
            .with("damping", DataKind::Real, "5", "force damping. (default=5)")
            .with("maxForce", DataKind::Real, "0", "if non-null , the max force that can be applied to the object. (default=0)")
            .with("bilateral", DataKind::Bool, "0", "if true the plane force field is applied on both sides. (default=false)")
            .with("localRange", DataKind::Reals(0), "-1 -1", "optional range of local DOF indices. Any computation involving indices outside of this range are discarded")
            .with("showPlane", DataKind::Bool, "0", "enable/disable drawing of plane. (default=false)")
            .with("planeColor", DataKind::Reals(4), "0 0.5 0.2 1", "plane color. (default=[0.0,0.5,0.2,1.0])")
            .with("showPlaneSize", DataKind::Real, "10", "plane display size if draw is enabled. (default=10)");
        PlaneForceField {
            data,
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
        let n = self.data.reals("normal");
        if n.len() < self.dims || n.iter().any(|v| !v.is_finite()) {
            ctx.error(format!(
                "normal '{}' needs {} finite numbers for this {} state",
                self.data.str("normal"),
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
        self.d = self.data.real("d");
        // SOFA's checks: negative values fall back to the defaults
        let mut read = |name: &str, default: f64| {
            let v = self.data.real(name);
            if v >= 0.0 && v.is_finite() {
                v
            } else {
                ctx.warn(format!(
                    "{name} {v} is outside [0, +∞[: {default} is used, as in SOFA"
                ));
                default
            }
        };
        self.stiffness = read("stiffness", 500.0);
        self.damping = read("damping", 5.0);
        self.max_force = read("maxForce", 0.0);
        self.bilateral = self.data.bool("bilateral");
        self.rayleigh = self.data.real("rayleighStiffness");
        let r = self.data.reals("localRange").to_vec();
        self.range = (0, usize::MAX);
        if r.len() == 2 {
            if r[0] >= 0.0 {
                self.range.0 = r[0] as usize;
            }
            if r[1] >= 0.0 {
                self.range.1 = r[1] as usize + 1;
            }
        }
    }

    fn depth(&self, x: &[f64], i: usize) -> f64 {
        (0..self.dims)
            .map(|c| x[self.cs * i + c] * self.normal[c])
            .sum::<f64>()
            - self.d
    }
}

impl_component!(PlaneForceField, "PlaneForceField", init);

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
pub struct TrianglePressureForceField {
    data: DataTable,
    /// (vertices, force per vertex)
    loads: Vec<([usize; 3], [f64; 3])>,
}

impl Default for TrianglePressureForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl TrianglePressureForceField {
    pub fn new() -> Self {
        let data = canape_core::data::force_field_fields(DataTable::new())
            .with(
                "pressure",
                DataKind::Reals(0),
                "0 0 0",
                "Pressure force per unit area",
            )
            .with(
                "cauchyStress",
                DataKind::Reals(0),
                "0 0 0 0 0 0",
                "Cauchy Stress applied on the normal of each triangle",
            )
            .with(
                "triangleList",
                DataKind::Ints(0),
                "",
                "Indices of triangles separated with commas where a pressure is applied",
            )
            .with(
                "showForces",
                DataKind::Bool,
                "0",
                "draw triangles which have a given pressure",
            )
            .with(
                "useConstantForce",
                DataKind::Bool,
                "1",
                "applied force is computed as the pressure vector times the area at rest",
            )
            .with(
                "topology",
                DataKind::Str,
                "",
                "link to the topology container",
            );
        TrianglePressureForceField {
            data,
            loads: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.loads.clear();
        if !self.data.bool("useConstantForce") {
            ctx.error(
                "useConstantForce=\"false\" (a Cauchy stress on the current normals) is not supported yet",
            );
            return;
        }
        let p = self.data.reals("pressure").to_vec();
        if p.len() != 3 || p.iter().any(|v| !v.is_finite()) {
            ctx.error("pressure needs 3 finite numbers (a force per unit area)");
            return;
        }
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
        for &t in self.data.ints("triangleList") {
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
            let f = [p[0] * area / 3.0, p[1] * area / 3.0, p[2] * area / 3.0];
            self.loads.push((v, f));
        }
    }
}

impl_component!(
    TrianglePressureForceField,
    "TrianglePressureForceField",
    init
);

impl ForceField for TrianglePressureForceField {
    fn add_force(&mut self, _x: &[f64], _v: &[f64], f: &mut [f64]) {
        for (v, fv) in &self.loads {
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
