//! SphereForceField: the points inside a sphere (all of them with `bilateral`) are pushed to
//! its surface; the tangent is the exact derivative of the elastic force.

use super::{
    coefficient_edit, dot, is_non_negative, local_range, non_negative, point, read_point, scale,
    vec_state,
};
use canape_core::component::{ForceField, Reaction};
use canape_core::data::{
    base_fields, ChangedData, DataKind, DataTable, Flag, ForceFieldData, Real, Reals, Words,
};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;

canape_core::data_schema! {
    /// SphereForceField's own Data (after the force-field Data).
    pub struct SphereForceFieldData {
        center: Reals = ("center", DataKind::Reals(0), "0 0 0", "sphere center"),
        radius: Real = ("radius", DataKind::Real, "1", "sphere radius"),
        stiffness: Real = ("stiffness", DataKind::Real, "500", "force stiffness"),
        damping: Real = ("damping", DataKind::Real, "5", "force damping"),
        color: Words = ("color", DataKind::Words, "0 0 1 1", "sphere color. (default=[0,0,1,1])"),
        local_range: Reals = ("localRange", DataKind::Reals(0), "-1 -1", "optional range of local DOF indices. Any computation involving only indices outside of this range are discarded (useful for parallelization using mesh partitionning)"),
        bilateral: Flag = ("bilateral", DataKind::Bool, "0", "if true the sphere force field is applied on both sides"),
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct SphereContact {
    index: usize,
    /// (x − c)/|x − c|
    normal: [f64; 3],
    /// r/|x − c|
    fact: f64,
}

/// SphereForceField (Sofa/Component/MechanicalLoad/.../SphereForceField.inl): the points inside
/// the sphere (`center`, `radius`) — every point with `bilateral` — are pushed to its surface.
/// With δ = |x − c| − r and n = (x − c)/|x − c|:
///
/// f = −k·δ·n + damping·δ·v
///
/// so that inside (δ < 0) the damping opposes the velocity and grows with the penetration; with
/// `bilateral`, outside (δ > 0) the same term pushes along the velocity, as SOFA's does.
///
/// Tangent on the contacts (SOFA's addDForce/addKToMatrix): K = −k·(φ n nᵀ + (1 − φ) I) with
/// φ = r/|x − c|, which is the exact derivative of the elastic part −k·δ·n. The damping term's
/// dependence on x (damping·v nᵀ) is left out, and there is no damping matrix (∂f/∂v =
/// damping·δ·I is not given to the solver), as in SOFA.
#[derive(Clone)]
pub struct SphereForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    ff: ForceFieldData,
    d: SphereForceFieldData,
    dims: usize,
    center: [f64; 3],
    radius: f64,
    stiffness: f64,
    damping: f64,
    bilateral: bool,
    range: (usize, usize),
    rayleigh: f64,
    /// False after an init that found the Data invalid: no force.
    active: bool,
    pub(super) contacts: Vec<SphereContact>,
}

impl Default for SphereForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl SphereForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(base_fields(DataTable::new()));
        let (data, d) = SphereForceFieldData::declare(data);
        SphereForceField {
            data,
            ff,
            d,
            dims: 3,
            center: [0.0; 3],
            radius: 1.0,
            stiffness: 500.0,
            damping: 5.0,
            bilateral: false,
            range: (0, usize::MAX),
            rayleigh: 0.0,
            active: false,
            contacts: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.active = false;
        self.contacts.clear();
        let Some(dims) = vec_state(ctx, "SphereForceField", false) else {
            return;
        };
        self.dims = dims;
        // the center's default is the origin in any dimension
        let (t, d) = (&self.data, self.d);
        let center = if t.was_set(d.center) {
            read_point(t, d.center, dims, ctx)
        } else {
            Some([0.0; 3])
        };
        let radius = t.get(d.radius);
        let radius_ok = radius > 0.0 && radius.is_finite();
        if !radius_ok {
            ctx.error(format!(
                "radius {radius} must be a positive number: the sphere pushes nothing"
            ));
        }
        let stiffness = non_negative(t, d.stiffness, 500.0, ctx);
        let damping = non_negative(t, d.damping, 5.0, ctx);
        self.bilateral = t.get(d.bilateral);
        self.range = local_range(t.get(d.local_range));
        self.rayleigh = t.get(self.ff.rayleigh_stiffness);
        self.stiffness = stiffness;
        self.damping = damping;
        let Some(center) = center else {
            return;
        };
        self.center = center;
        self.radius = radius;
        self.active = radius_ok;
    }
}

impl SphereForceField {
    /// Edits of stiffness and damping act in place on an active sphere (as init would take
    /// them: the contacts are forgotten); a value init would warn about and other Data go
    /// through init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let edited = (self.active, (self.d.stiffness, self.d.damping));
        let state = (&mut self.stiffness, &mut self.damping, &mut self.contacts);
        coefficient_edit((&self.data, changed), edited, is_non_negative, state)
    }
}

impl_component!(SphereForceField, "SphereForceField", init, data_changed);

impl ForceField for SphereForceField {
    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]) {
        self.contacts.clear();
        if !self.active {
            return;
        }
        let d = self.dims;
        let n = x.len() / d;
        let r = self.radius;
        for i in self.range.0..n.min(self.range.1) {
            let p = point(x, i, d);
            let dp = [
                p[0] - self.center[0],
                p[1] - self.center[1],
                p[2] - self.center[2],
            ];
            let norm2 = dot(&dp, &dp);
            if !(norm2 < r * r || self.bilateral) {
                continue;
            }
            let norm = norm2.sqrt();
            if norm == 0.0 {
                continue;
            }
            let depth = norm - r;
            let elastic = -self.stiffness * depth / norm;
            let viscous = -self.damping * depth;
            for c in 0..d {
                f[d * i + c] += dp[c] * elastic - v[d * i + c] * viscous;
            }
            self.contacts.push(SphereContact {
                index: i,
                normal: scale(&dp, 1.0 / norm),
                fact: r / norm,
            });
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let d = self.dims;
        let fact = -self.stiffness * k_factor;
        for c in &self.contacts {
            let du = point(dx, c.index, d);
            let dn = dot(&du, &c.normal) * c.fact;
            for l in 0..d {
                df[d * c.index + l] += (c.normal[l] * dn + du[l] * (1.0 - c.fact)) * fact;
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        let d = self.dims;
        let fact = -self.stiffness * k_factor;
        for c in &self.contacts {
            let o = offset + d * c.index;
            for l in 0..d {
                for k in 0..d {
                    let diag = if l == k { 1.0 - c.fact } else { 0.0 };
                    m.add(
                        o + l,
                        o + k,
                        (c.normal[l] * c.normal[k] * c.fact + diag) * fact,
                    );
                }
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}
