//! TaitSurfacePressureForceField (SOFA's
//! Sofa/Component/MechanicalLoad/src/sofa/component/mechanicalload/TaitSurfacePressureForceField.h
//! and .inl): the pressure of a fluid enclosed by a triangle surface, following Tait's equation
//! of state P = p0 − B((V/v0)^γ − 1), with dP/dV = −Bγ(V/v0)^γ / V. B = 0 (or γ = 0, or
//! v0 = 0) gives the constant pressure p0; γ = 1 an ideal gas; γ = 7 water.
//!
//! - **Surface**: the context topology's triangles, then each quad (a, b, c, d) as the two
//!   triangles (a, b, c) and (c, d, a) (`pressureTriangles`). The force is meant for a closed
//!   surface whose triangles turn counter-clockwise seen from outside.
//! - **Volume**: V = Σ ((a − o) × (b − o))·(c − o) / 6 over the triangles, o the mean of all the
//!   state's points (independent of o on a closed surface); the area is Σ |(b − a) × (c − a)| / 2.
//! - **Rest volume**: `initialVolume` is the volume of the rest positions at init;
//!   v0 = initialVolume + `currentInjectedVolume`. At the start of each animation step (SOFA's
//!   AnimateBeginEvent handler), `currentInjectedVolume` moves towards `injectedVolume` by at
//!   most `maxInjectionRate`·dt, dt being the event's (the root's). Force fields do not get
//!   events in Canapé: `set_time` injects over the root's dt the first time, then over the
//!   time elapsed since the latest time it was given, which is the same with
//!   DefaultAnimationLoop (see `set_time` for MultiStepAnimationLoop).
//! - **Force**: each triangle's n = (b − a) × (c − a) (twice its area times its unit normal);
//!   gradV_i = Σ n / 6 over the triangles around point i (the exact gradient of V on a closed
//!   surface), and f_i = P·gradV_i: a third of each triangle's pressure force on each corner.
//! - **Tangent**: K = (dP/dV)·gradV gradVᵀ (dense over the surface's points) + P·∂gradV/∂x,
//!   where a triangle adds (P/6)·[e]× to the block (r, s) for each corner r and each corner s,
//!   e the edge opposite s in the triangle's turning order ([e]× the cross-product matrix).
//!   `add_dforce` applies both parts, as SOFA's addDForce: the exact derivative of the force.
//!   `add_k_to_matrix` adds the same matrix; SOFA's addKToMatrix leaves out the blocks (r, r),
//!   which sum to zero around each point of a closed surface only: on a closed surface both
//!   agree up to rounding, on an open one ours still matches `add_dforce`.
//!
//! Outputs (`currentVolume`, `currentPressure`, `currentStiffness`, `currentSurfaceArea`, the
//! last `add_force`'s; `currentInjectedVolume`, `v0`) are written into the Data table as they
//! change. Not done: SOFA's topology-change handling (`volumeAfterTC`, `surfaceAreaAfterTC` are
//! the rest values: Canapé's topologies do not change), drawing, `reset`. SOFA has no potential
//! energy for this force field (its getPotentialEnergy warns and returns 0): none here.
//!
//! SOFA's "too much volume variation" check (V > 10 v0 or V < v0/10) prints an error and then
//! computes Tait's law anyway; so does Canapé (a warning at init only). Where SOFA would get a
//! NaN (V/v0 < 0 with a fractional γ), the pressure and stiffness are 0, as SOFA's check means.

mod law;

pub use law::{
    injection_step, pressure_triangles, surface_defects, tait_pressure, volume_and_area,
};

use crate::mass::linked_or_context_topology;
use canape_core::component::ForceField;
use canape_core::data::{
    base_fields, Data, DataKind, DataTable, ForceFieldData, Ints, Real, Reals, Value,
};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::registry::{vec3_only, Registry};
use canape_core::scene::{AnyComponent, InitContext};
use canape_core::state::VecId;
use canape_types::{add3, get3, DofType, Mat3};
// what the tests reach through `use super::*`
#[cfg(test)]
use canape_core::mesh::Mesh;
#[cfg(test)]
use canape_types::Vec3;
#[cfg(test)]
use std::collections::BTreeMap;

/// Register this module's classes.
pub(crate) fn register(r: &mut Registry) {
    r.register(
        "TaitSurfacePressureForceField",
        "pressure of the volume enclosed by a triangle/quad surface, by Tait's equation of state",
        |_, t| {
            vec3_only(t, "TaitSurfacePressureForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                TaitSurfacePressureForceField::new(),
            )))
        },
    );
}

canape_core::data_schema! {
    /// TaitSurfacePressureForceField's own Data (after the force-field Data). SOFA's OUT Data
    /// are ordinary Data here too (not engine outputs): the component writes them.
    pub struct TaitData {
        p0: Real = ("p0", DataKind::Real, "0", "IN: Rest pressure when V = V0"),
        b: Real = ("B", DataKind::Real, "0", "IN: Bulk modulus (resistance to uniform compression)"),
        gamma: Real = ("gamma", DataKind::Real, "0", "IN: Bulk modulus (resistance to uniform compression)"),
        injected_volume: Real = ("injectedVolume", DataKind::Real, "0", "IN: Injected (or extracted) volume since the start of the simulation"),
        max_injection_rate: Real = ("maxInjectionRate", DataKind::Real, "1000", "IN: Maximum injection rate (volume per second)"),
        initial_volume: Real = ("initialVolume", DataKind::Real, "0", "OUT: Initial volume, as computed from the surface rest position"),
        current_injected_volume: Real = ("currentInjectedVolume", DataKind::Real, "0", "OUT: Current injected (or extracted) volume (taking into account maxInjectionRate)"),
        v0: Real = ("v0", DataKind::Real, "0", "OUT: Rest volume (as computed from initialVolume + injectedVolume)"),
        current_volume: Real = ("currentVolume", DataKind::Real, "0", "OUT: Current volume, as computed from the last surface position"),
        current_pressure: Real = ("currentPressure", DataKind::Real, "0", "OUT: Current pressure, as computed from the last surface position"),
        current_stiffness: Real = ("currentStiffness", DataKind::Real, "0", "OUT: dP/dV at current volume and pressure"),
        pressure_triangles: Ints = ("pressureTriangles", DataKind::Ints(3), "", "OUT: list of triangles where a pressure is applied (mesh triangles + tessellated quads)"),
        initial_surface_area: Real = ("initialSurfaceArea", DataKind::Real, "0", "OUT: Initial surface area, as computed from the surface rest position"),
        current_surface_area: Real = ("currentSurfaceArea", DataKind::Real, "0", "OUT: Current surface area, as computed from the last surface position"),
        draw_force_scale: Real = ("drawForceScale", DataKind::Real, "0.001", "DEBUG: scale used to render force vectors"),
        draw_force_color: Reals = ("drawForceColor", DataKind::Reals(4), "0 1 1 1", "DEBUG: color used to render force vectors"),
        volume_after_tc: Real = ("volumeAfterTC", DataKind::Real, "0", "OUT: Volume after a topology change"),
        surface_area_after_tc: Real = ("surfaceAreaAfterTC", DataKind::Real, "0", "OUT: Surface area after a topology change"),
    }
}

/// See the module documentation.
#[derive(Clone)]
pub struct TaitSurfacePressureForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    ff: ForceFieldData,
    d: TaitData,
    /// Whether init found a usable surface; otherwise the component adds nothing.
    active: bool,
    p0: f64,
    b: f64,
    gamma: f64,
    injected_target: f64,
    max_rate: f64,
    rayleigh: f64,
    /// The root's time step (the AnimateBeginEvent's dt).
    dt: f64,
    triangles: Vec<[usize; 3]>,
    /// The points of the surface, ascending (the rank-one part of the matrix couples them all).
    surface_points: Vec<usize>,
    /// Largest point index the surface uses, plus one.
    min_points: usize,
    initial_volume: f64,
    current_injected: f64,
    v0: f64,
    volume: f64,
    area: f64,
    pressure: f64,
    stiffness: f64,
    /// gradV at the last `add_force` (3 numbers per point of the state).
    grad: Vec<f64>,
    /// Positions of the last `add_force`.
    x: Vec<f64>,
    /// The first time given by `set_time` and the latest one.
    time_seen: Option<(f64, f64)>,
}

impl Default for TaitSurfacePressureForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl TaitSurfacePressureForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(base_fields(DataTable::new()));
        let (data, d) = TaitData::declare(data);
        TaitSurfacePressureForceField {
            data,
            ff,
            d,
            active: false,
            p0: 0.0,
            b: 0.0,
            gamma: 0.0,
            injected_target: 0.0,
            max_rate: 1000.0,
            rayleigh: 0.0,
            dt: 0.0,
            triangles: Vec::new(),
            surface_points: Vec::new(),
            min_points: 0,
            initial_volume: 0.0,
            current_injected: 0.0,
            v0: 0.0,
            volume: 0.0,
            area: 0.0,
            pressure: 0.0,
            stiffness: 0.0,
            grad: Vec::new(),
            x: Vec::new(),
            time_seen: None,
        }
    }

    /// The pressure at the last `add_force` (or at init).
    pub fn pressure(&self) -> f64 {
        self.pressure
    }

    /// The enclosed volume at the last `add_force` (or at init).
    pub fn volume(&self) -> f64 {
        self.volume
    }

    /// The rest volume v0 = initialVolume + currentInjectedVolume.
    pub fn rest_volume(&self) -> f64 {
        self.v0
    }

    /// Write a scalar OUT Data into the table (through its handle: no allocation).
    fn publish(&mut self, h: Data<Real>, v: f64) {
        let _ = self.data.put(h, Value::Real(v));
    }

    /// Tait's law at volume `v` with this component's parameters; 0 where it is not a number.
    fn law(&self, v: f64) -> (f64, f64) {
        let (p, k) = tait_pressure(self.p0, self.b, self.gamma, v, self.v0);
        if p.is_finite() && k.is_finite() {
            (p, k)
        } else {
            (0.0, 0.0)
        }
    }

    /// A parameter that must be finite (and, with `non_negative`, ≥ 0): its default otherwise,
    /// with a warning.
    fn parameter(
        &self,
        ctx: &mut InitContext<'_>,
        h: Data<Real>,
        default: f64,
        non_negative: bool,
        why: &str,
    ) -> f64 {
        let v = self.data.get(h);
        let name = self.data.fields()[h.index()].name;
        if !v.is_finite() {
            ctx.warn(format!(
                "{name} {v} is not a finite number: {default} is used"
            ));
            return default;
        }
        if non_negative && v < 0.0 {
            ctx.warn(format!("{name} {v} is negative ({why}): {default} is used"));
            return default;
        }
        v
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.active = false;
        self.triangles.clear();
        self.surface_points.clear();
        self.grad.clear();
        self.x.clear();
        self.time_seen = None;
        let d = self.d;
        self.p0 = self.parameter(ctx, d.p0, 0.0, false, "");
        self.b = self.parameter(
            ctx,
            d.b,
            0.0,
            true,
            "the pressure would grow with the volume, an unstable law",
        );
        self.gamma = self.parameter(
            ctx,
            d.gamma,
            0.0,
            true,
            "Tait's exponent is positive; a negative one makes the pressure grow with the volume",
        );
        if self.gamma == 0.0 && self.b != 0.0 {
            ctx.warn(
                "gamma is 0: B is not used and the pressure is the constant p0 (as in SOFA); \
                 gamma = 1 gives an ideal gas, 7 water",
            );
        }
        self.injected_target = self.parameter(ctx, d.injected_volume, 0.0, false, "");
        self.max_rate = self.parameter(
            ctx,
            d.max_injection_rate,
            1000.0,
            true,
            "a rate is a magnitude",
        );
        self.current_injected = self.parameter(ctx, d.current_injected_volume, 0.0, false, "");
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        self.dt = ctx.scene.node(ctx.scene.root()).dt;

        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        if st.dof != DofType::Vec3 {
            ctx.error(format!(
                "TaitSurfacePressureForceField acts on Vec3 states, not {}",
                st.dof.name()
            ));
            return;
        }
        let n = st.size();
        let link = self.data.get(self.ff.topology).to_string();
        let Some(mesh) = linked_or_context_topology(ctx, &self.data, self.ff.topology) else {
            if link.trim().is_empty() {
                ctx.error("no topology in the context: no surface to apply a pressure on");
            }
            return;
        };
        let tris = pressure_triangles(mesh);
        if tris.is_empty() {
            ctx.error("the topology has no triangles or quads: no surface to apply a pressure on");
            return;
        }
        if let Some((k, t)) = tris
            .iter()
            .enumerate()
            .find(|(_, t)| t.iter().any(|&i| i as usize >= n))
        {
            ctx.error(format!(
                "pressure triangle {k} {t:?} uses a point beyond the state's {n}: no pressure is applied"
            ));
            return;
        }
        self.triangles = tris.iter().map(|t| t.map(|i| i as usize)).collect();
        let mut pts: Vec<usize> = self.triangles.iter().flatten().copied().collect();
        pts.sort_unstable();
        pts.dedup();
        self.min_points = pts.last().map_or(0, |&m| m + 1);
        self.surface_points = pts;
        if let Some(why) = surface_defects(&self.triangles) {
            ctx.warn(format!(
                "the pressure surface is not closed and consistently oriented: {why}; \
                 its volume and pressure forces are not those of an enclosed fluid"
            ));
        }
        let flat: Vec<u32> = tris.iter().flatten().copied().collect();
        let _ = self.data.put(d.pressure_triangles, Value::Ints(flat));

        let rest = st.vec(VecId::REST_POSITION);
        let (v_rest, a_rest) = volume_and_area(&self.triangles, rest);
        if !(v_rest.is_finite() && a_rest.is_finite()) {
            ctx.error("the rest positions are not finite: no pressure is applied");
            return;
        }
        if v_rest == 0.0 {
            ctx.warn(
                "the surface encloses no volume at rest (initialVolume 0): Tait's law needs a \
                 rest volume; the pressure is the constant p0 until volume is injected",
            );
        } else if v_rest < 0.0 {
            ctx.warn(format!(
                "the surface's rest volume is negative ({v_rest}): its triangles turn inwards, so \
                 the pressure pushes inwards and Tait's law is unstable; reverse the triangles"
            ));
        }
        self.initial_volume = v_rest;
        self.v0 = v_rest + self.current_injected;
        if v_rest > 0.0 && v_rest + self.injected_target <= 0.0 {
            ctx.warn(format!(
                "injectedVolume {} removes all the rest volume {v_rest}: the rest volume v0 \
                 reaches 0 or below",
                self.injected_target
            ));
        }
        for (h, v) in [
            (d.initial_volume, v_rest),
            (d.initial_surface_area, a_rest),
            (d.volume_after_tc, v_rest),
            (d.surface_area_after_tc, a_rest),
            (d.v0, self.v0),
            (d.current_injected_volume, self.current_injected),
        ] {
            self.publish(h, v);
        }

        let x = st.vec(VecId::POSITION);
        let (v, a) = volume_and_area(&self.triangles, x);
        self.volume = v;
        self.area = a;
        if self.v0 != 0.0 && (v > 10.0 * self.v0 || 10.0 * v < self.v0) {
            ctx.warn(format!(
                "the volume {v} is more than 10 times away from the rest volume {}: SOFA reports \
                 too much volume variation (and applies Tait's law anyway)",
                self.v0
            ));
        }
        let (p, k) = self.law(v);
        self.pressure = p;
        self.stiffness = k;
        self.publish(self.d.current_volume, v);
        self.publish(self.d.current_surface_area, a);
        self.publish(self.d.current_pressure, p);
        self.publish(self.d.current_stiffness, k);
        self.active = true;
    }

    /// Inject over `elapsed` seconds: the injected volume moves towards its target by at most
    /// the rate times `elapsed`, and v0 follows.
    fn inject(&mut self, elapsed: f64) {
        let next = injection_step(
            self.injected_target,
            self.current_injected,
            self.max_rate * elapsed,
        );
        if next != self.current_injected {
            self.current_injected = next;
            self.v0 = self.initial_volume + next;
            self.publish(self.d.current_injected_volume, next);
            self.publish(self.d.v0, self.v0);
        }
    }
}

impl_component!(
    TaitSurfacePressureForceField,
    "TaitSurfacePressureForceField",
    init
);

impl ForceField for TaitSurfacePressureForceField {
    /// Canapé gives the step's start time before each integration. The first time injects
    /// over the root's dt, as SOFA's first AnimateBeginEvent does; each later time injects over
    /// the time elapsed since the latest time seen. With DefaultAnimationLoop this is SOFA's
    /// one injection of rate·dt per step; times met again (MultiStepAnimationLoop's several
    /// integrations within a step) inject nothing more. A time before the first one seen
    /// starts over.
    fn set_time(&mut self, t: f64) {
        if !self.active {
            return;
        }
        let elapsed = match self.time_seen {
            Some((first, latest)) if t >= first => {
                if t <= latest {
                    return;
                }
                self.time_seen = Some((first, t));
                t - latest
            }
            _ => {
                self.time_seen = Some((t, t));
                self.dt
            }
        };
        self.inject(elapsed);
    }

    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let n = x.len() / 3;
        if !self.active || n < self.min_points || f.len() < 3 * n {
            return;
        }
        let (v, a) = volume_and_area(&self.triangles, x);
        let (p, k) = self.law(v);
        self.volume = v;
        self.area = a;
        self.pressure = p;
        self.stiffness = k;
        self.publish(self.d.current_volume, v);
        self.publish(self.d.current_surface_area, a);
        self.publish(self.d.current_pressure, p);
        self.publish(self.d.current_stiffness, k);

        self.grad.clear();
        self.grad.resize(3 * n, 0.0);
        for t in &self.triangles {
            let p0 = get3(x, t[0]);
            let nrm = (get3(x, t[1]) - p0).cross(&(get3(x, t[2]) - p0));
            for &i in t {
                add3(&mut self.grad, i, &nrm);
            }
        }
        for g in &mut self.grad {
            *g /= 6.0;
        }
        for (fi, gi) in f.iter_mut().zip(&self.grad) {
            *fi += gi * p;
        }
        self.x.clear();
        self.x.extend_from_slice(x);
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let len = self.grad.len();
        if !self.active || len == 0 || dx.len() < len || df.len() < len {
            return;
        }
        // the volume's change and its pressure's, along the gradient
        let dv: f64 = self.grad.iter().zip(dx).map(|(g, d)| g * d).sum();
        let s1 = k_factor * self.stiffness * dv;
        for (o, g) in df.iter_mut().zip(&self.grad) {
            *o += g * s1;
        }
        // the normals' change under the current pressure
        let s2 = k_factor * self.pressure / 6.0;
        let x = &self.x;
        for t in &self.triangles {
            let (a, b, c) = (get3(x, t[0]), get3(x, t[1]), get3(x, t[2]));
            let (da, db, dc) = (get3(dx, t[0]), get3(dx, t[1]), get3(dx, t[2]));
            let dn = ((db - da).cross(&(c - a)) + (b - a).cross(&(dc - da))) * s2;
            for &i in t {
                add3(df, i, &dn);
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        if !self.active || self.grad.is_empty() {
            return;
        }
        if self.stiffness != 0.0 {
            let s1 = k_factor * self.stiffness;
            for &i in &self.surface_points {
                let gi = get3(&self.grad, i) * s1;
                for &j in &self.surface_points {
                    let (r, c) = (offset + 3 * i, offset + 3 * j);
                    if m.wants(r, c) {
                        let block: Mat3 = gi * get3(&self.grad, j).transpose();
                        m.add_block3(r, c, &block);
                    }
                }
            }
        }
        if self.pressure != 0.0 {
            let s2 = k_factor * self.pressure / 6.0;
            let x = &self.x;
            for t in &self.triangles {
                let (a, b, c) = (get3(x, t[0]), get3(x, t[1]), get3(x, t[2]));
                // ∂n/∂(corner s) = [edge opposite s]×, the edges in the triangle's turning order
                let blocks: [Mat3; 3] = [
                    ((c - b) * s2).cross_matrix(),
                    ((a - c) * s2).cross_matrix(),
                    ((b - a) * s2).cross_matrix(),
                ];
                for &r in t {
                    for (&s, block) in t.iter().zip(&blocks) {
                        let (row, col) = (offset + 3 * r, offset + 3 * s);
                        if m.wants(row, col) {
                            m.add_block3(row, col, block);
                        }
                    }
                }
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}

#[cfg(test)]
mod tests;
