//! ConicalForceField: a cone closed by a spherical cap keeps the points inside it, with
//! SOFA's normal-only tangent (Vec3 only).

use super::{
    coefficient_edit, cross, dot, is_non_negative, non_negative, point, read_point, scale,
    vec_state,
};
use canape_core::component::{ForceField, Reaction};
use canape_core::data::{
    base_fields, ChangedData, DataKind, DataTable, ForceFieldData, Real, Reals, Words,
};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;

canape_core::data_schema! {
    /// ConicalForceField's own Data (after the force-field Data).
    pub struct ConicalForceFieldData {
        cone_center: Reals = ("coneCenter", DataKind::Reals(0), "0 0 0", "cone center"),
        cone_height: Reals = ("coneHeight", DataKind::Reals(0), "0 0 0", "cone height"),
        cone_angle: Real = ("coneAngle", DataKind::Real, "10", "cone angle"),
        stiffness: Real = ("stiffness", DataKind::Real, "500", "force stiffness"),
        damping: Real = ("damping", DataKind::Real, "5", "force damping"),
        color: Words = ("color", DataKind::Words, "0 0 1 1", "cone color. (default=0.0,0.0,0.0,1.0,1.0)"),
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct ConeContact {
    pub(super) index: usize,
    pub(super) normal: [f64; 3],
}

/// ConicalForceField (Sofa/Component/MechanicalLoad/.../ConicalForceField.inl), on Vec3: a cone
/// with its apex at `coneCenter`, its axis and length given by `coneHeight` (h = |coneHeight|)
/// and half-angle `coneAngle` (degrees), closed by the sphere of radius h around the apex, keeps
/// the points inside it. A point is inside when |x − c| ≤ h and its angle to the axis is at most
/// `coneAngle`. A point outside, with cp = x − c and a the unit axis:
///
/// - beyond the cap (|cp| > h): δ = |cp| − h, n = cp/|cp|, f = −k·δ·n + damping·δ·v. As in SOFA,
///   the damping term then has the direction of the velocity (δ > 0): it feeds motion instead of
///   damping it;
/// - beside the cone (cp·a > 0): x is projected on the generator of the cone in the plane of a
///   and cp (cp turned towards the axis by its angle excess, as SOFA turns it), giving x′;
///   n = (x′ − x)/|x′ − x|, f = k·(x′ − x) − damping·(n·v)·n;
/// - behind the apex (cp·a ≤ 0): n = −cp/|cp|, f = −k·cp − damping·(n·v)·n.
///
/// Tangent on the contacts (SOFA's addDForce and buildStiffnessMatrix): −k n nᵀ. Along n it is
/// the exact derivative; the tangential part of the exact derivative (−k(1 − h/|cp|) on the
/// cap, the cone's curvature term beside it, −k behind the apex) is left out, as in SOFA.
/// No damping matrix.
#[derive(Clone)]
pub struct ConicalForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    ff: ForceFieldData,
    d: ConicalForceFieldData,
    center: [f64; 3],
    /// The axis, normalised, and the length h.
    axis: [f64; 3],
    height: f64,
    /// The half-angle in degrees (compared in degrees, as SOFA does) and in radians.
    angle_deg: f64,
    angle: f64,
    stiffness: f64,
    damping: f64,
    rayleigh: f64,
    active: bool,
    pub(super) contacts: Vec<ConeContact>,
}

impl Default for ConicalForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl ConicalForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(base_fields(DataTable::new()));
        let (data, d) = ConicalForceFieldData::declare(data);
        ConicalForceField {
            data,
            ff,
            d,
            center: [0.0; 3],
            axis: [0.0, 1.0, 0.0],
            height: 0.0,
            angle_deg: 10.0,
            angle: 10f64.to_radians(),
            stiffness: 500.0,
            damping: 5.0,
            rayleigh: 0.0,
            active: false,
            contacts: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.active = false;
        self.contacts.clear();
        if vec_state(ctx, "ConicalForceField", true).is_none() {
            return;
        }
        let (t, d) = (&self.data, self.d);
        let center = if t.was_set(d.cone_center) {
            read_point(t, d.cone_center, 3, ctx)
        } else {
            Some([0.0; 3])
        };
        let height = read_point(t, d.cone_height, 3, ctx);
        let angle = t.get(d.cone_angle);
        let angle_ok = angle > 0.0 && angle < 180.0;
        if !angle_ok {
            ctx.error(format!(
                "coneAngle {angle} must be in ]0, 180[ degrees: the cone holds nothing"
            ));
        }
        let stiffness = non_negative(t, d.stiffness, 500.0, ctx);
        let damping = non_negative(t, d.damping, 5.0, ctx);
        self.rayleigh = t.get(self.ff.rayleigh_stiffness);
        self.stiffness = stiffness;
        self.damping = damping;
        let (Some(center), Some(height)) = (center, height) else {
            return;
        };
        let h = dot(&height, &height).sqrt();
        if !(h > 0.0 && h.is_finite()) {
            ctx.error(
                "coneHeight is zero (SOFA's default): give the cone's axis and length, from the apex",
            );
            return;
        }
        self.center = center;
        self.axis = scale(&height, 1.0 / h);
        self.height = h;
        self.angle_deg = angle;
        self.angle = angle.to_radians();
        self.active = angle_ok;
    }

    /// Whether cp (a point relative to the apex) is inside the cone; the apex itself is.
    fn is_in(&self, cp: &[f64; 3]) -> bool {
        let dist = dot(cp, cp).sqrt();
        if dist > self.height {
            return false;
        }
        if dist == 0.0 {
            return true;
        }
        let cos = (dot(cp, &self.axis) / dist).clamp(-1.0, 1.0);
        cos.acos().to_degrees() <= self.angle_deg
    }
}

impl ConicalForceField {
    /// Edits of stiffness and damping act in place on an active cone (as init would take
    /// them: the contacts are forgotten); a value init would warn about and other Data go
    /// through init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let edited = (self.active, (self.d.stiffness, self.d.damping));
        let state = (&mut self.stiffness, &mut self.damping, &mut self.contacts);
        coefficient_edit((&self.data, changed), edited, is_non_negative, state)
    }
}

impl_component!(ConicalForceField, "ConicalForceField", init, data_changed);

impl ForceField for ConicalForceField {
    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]) {
        self.contacts.clear();
        if !self.active {
            return;
        }
        let n = x.len() / 3;
        let (k, damping) = (self.stiffness, self.damping);
        for i in 0..n {
            let p = point(x, i, 3);
            let vi = point(v, i, 3);
            let cp = [
                p[0] - self.center[0],
                p[1] - self.center[1],
                p[2] - self.center[2],
            ];
            if self.is_in(&cp) {
                continue;
            }
            let norm = dot(&cp, &cp).sqrt();
            let (force, normal) = if norm > self.height {
                let depth = norm - self.height;
                let elastic = -k * depth / norm;
                let viscous = -damping * depth;
                let force = [
                    cp[0] * elastic - vi[0] * viscous,
                    cp[1] * elastic - vi[1] * viscous,
                    cp[2] * elastic - vi[2] * viscous,
                ];
                (force, scale(&cp, 1.0 / norm))
            } else {
                let (dir, depth) = if dot(&cp, &self.axis) > 0.0 {
                    // turn cp towards the axis by its angle excess, about axis × cp
                    let excess = (dot(&cp, &self.axis) / norm).clamp(-1.0, 1.0).acos() - self.angle;
                    let t = cross(&self.axis, &cp);
                    let tn = dot(&t, &t).sqrt();
                    if tn == 0.0 {
                        continue;
                    }
                    let t = scale(&t, 1.0 / tn);
                    let tc = cross(&t, &cp);
                    let (s, c) = (-excess).sin_cos();
                    let turned = [
                        cp[0] * c + tc[0] * s,
                        cp[1] * c + tc[1] * s,
                        cp[2] * c + tc[2] * s,
                    ];
                    let g = scale(&turned, 1.0 / dot(&turned, &turned).sqrt());
                    let along = dot(&g, &cp);
                    let to_surface = [
                        g[0] * along - cp[0],
                        g[1] * along - cp[1],
                        g[2] * along - cp[2],
                    ];
                    let depth = dot(&to_surface, &to_surface).sqrt();
                    if depth == 0.0 {
                        continue;
                    }
                    (scale(&to_surface, 1.0 / depth), depth)
                } else {
                    (scale(&cp, -1.0 / norm), norm)
                };
                let elastic = k * depth;
                let viscous = damping * -dot(&dir, &vi);
                (scale(&dir, elastic + viscous), dir)
            };
            for c in 0..3 {
                f[3 * i + c] += force[c];
            }
            self.contacts.push(ConeContact { index: i, normal });
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let fact = -self.stiffness * k_factor;
        for c in &self.contacts {
            let du = point(dx, c.index, 3);
            let dn = dot(&du, &c.normal) * fact;
            for l in 0..3 {
                df[3 * c.index + l] += c.normal[l] * dn;
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        let fact = -self.stiffness * k_factor;
        for c in &self.contacts {
            let o = offset + 3 * c.index;
            for l in 0..3 {
                for q in 0..3 {
                    m.add(o + l, o + q, c.normal[l] * c.normal[q] * fact);
                }
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}
