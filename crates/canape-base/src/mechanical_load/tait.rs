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

use crate::mass::linked_or_context_topology;
use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable, Value};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::mesh::Mesh;
use canape_core::registry::{vec3_only, Registry};
use canape_core::scene::{AnyComponent, InitContext};
use canape_core::state::VecId;
use canape_types::{add3, get3, DofType, Mat3, Vec3};
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

/// The triangles the pressure acts on: the mesh's triangles, then two per quad, (a, b, c) and
/// (c, d, a), as SOFA's `pressureTriangles`.
pub fn pressure_triangles(mesh: &Mesh) -> Vec<[u32; 3]> {
    let mut out = Vec::with_capacity(mesh.triangles.len() + 2 * mesh.quads.len());
    out.extend_from_slice(&mesh.triangles);
    for q in &mesh.quads {
        out.push([q[0], q[1], q[2]]);
        out.push([q[2], q[3], q[0]]);
    }
    out
}

/// Signed volume enclosed by `triangles` (positive when they turn counter-clockwise seen from
/// outside) and their total area, at positions `x` (3 numbers per point). The volume's
/// tetrahedra meet at the mean of all the points, as SOFA computes it.
pub fn volume_and_area(triangles: &[[usize; 3]], x: &[f64]) -> (f64, f64) {
    let n = x.len() / 3;
    if n == 0 {
        return (0.0, 0.0);
    }
    let mut center = Vec3::zeros();
    for i in 0..n {
        center += get3(x, i);
    }
    center /= n as f64;
    let (mut volume6, mut area2) = (0.0, 0.0);
    for t in triangles {
        let a = get3(x, t[0]) - center;
        let b = get3(x, t[1]) - center;
        let c = get3(x, t[2]) - center;
        volume6 += a.cross(&b).dot(&c);
        area2 += (b - a).cross(&(c - a)).norm();
    }
    (volume6 / 6.0, area2 / 2.0)
}

/// Tait's law: the pressure at volume `v` for the rest volume `v0`, and dP/dV. Constant `p0`
/// (dP/dV = 0) when `b`, `gamma` or `v0` is 0; dP/dV = 0 at v = 0.
pub fn tait_pressure(p0: f64, b: f64, gamma: f64, v: f64, v0: f64) -> (f64, f64) {
    if b == 0.0 || gamma == 0.0 || v0 == 0.0 {
        return (p0, 0.0);
    }
    if gamma == 1.0 {
        return (p0 - b * (v / v0 - 1.0), -b / v0);
    }
    let r = (v / v0).powf(gamma);
    let stiffness = if v == 0.0 { 0.0 } else { -b * gamma * r / v };
    (p0 - b * (r - 1.0), stiffness)
}

/// The injected volume after one step: `current` moves towards `target` by at most `max_step`.
pub fn injection_step(target: f64, current: f64, max_step: f64) -> f64 {
    if target == current {
        current
    } else if (target - current).abs() <= max_step {
        target
    } else if target < current {
        current - max_step
    } else {
        current + max_step
    }
}

/// What keeps `triangles` from being a closed, consistently oriented surface (each edge shared
/// by exactly two triangles that run it in opposite directions), if anything.
pub fn surface_defects(triangles: &[[usize; 3]]) -> Option<String> {
    // undirected edge → (times run low→high, times run high→low)
    let mut edges: BTreeMap<(usize, usize), (u32, u32)> = BTreeMap::new();
    let mut degenerate = 0usize;
    for t in triangles {
        if t[0] == t[1] || t[1] == t[2] || t[2] == t[0] {
            degenerate += 1;
            continue;
        }
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            let e = edges.entry((a.min(b), a.max(b))).or_default();
            if a < b {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
    }
    let (mut border, mut shared, mut flipped) = (0usize, 0usize, 0usize);
    for &(up, down) in edges.values() {
        match up + down {
            1 => border += 1,
            2 if up != 1 => flipped += 1,
            2 => {}
            _ => shared += 1,
        }
    }
    let mut what = Vec::new();
    if border > 0 {
        what.push(format!(
            "{border} edges belong to one triangle only (the surface is open)"
        ));
    }
    if shared > 0 {
        what.push(format!("{shared} edges belong to more than two triangles"));
    }
    if flipped > 0 {
        what.push(format!(
            "{flipped} edges are run in the same direction by both their triangles (inconsistent orientation)"
        ));
    }
    if degenerate > 0 {
        what.push(format!("{degenerate} triangles repeat a point"));
    }
    (!what.is_empty()).then(|| what.join("; "))
}

/// See the module documentation.
/// The outputs a step writes, by their index in [`TaitSurfacePressureForceField::outputs`].
#[derive(Clone, Copy)]
enum Output {
    Volume,
    SurfaceArea,
    Pressure,
    Stiffness,
    InjectedVolume,
    V0,
}

/// The Data names of [`Output`], in its order.
const OUTPUT_NAMES: [&str; 6] = [
    "currentVolume",
    "currentSurfaceArea",
    "currentPressure",
    "currentStiffness",
    "currentInjectedVolume",
    "v0",
];

#[derive(Clone)]
pub struct TaitSurfacePressureForceField {
    data: DataTable,
    /// The Data-table index of each [`Output`] (resolved once).
    outputs: [Option<usize>; 6],
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
        let data = canape_core::data::force_field_fields(DataTable::new())
            .with("p0", DataKind::Real, "0", "IN: Rest pressure when V = V0")
            .with("B", DataKind::Real, "0", "IN: Bulk modulus (resistance to uniform compression)")
            .with("gamma", DataKind::Real, "0", "IN: Bulk modulus (resistance to uniform compression)")
            .with("injectedVolume", DataKind::Real, "0", "IN: Injected (or extracted) volume since the start of the simulation")
            .with("maxInjectionRate", DataKind::Real, "1000", "IN: Maximum injection rate (volume per second)")
            .with("initialVolume", DataKind::Real, "0", "OUT: Initial volume, as computed from the surface rest position")
            .with("currentInjectedVolume", DataKind::Real, "0", "OUT: Current injected (or extracted) volume (taking into account maxInjectionRate)")
            .with("v0", DataKind::Real, "0", "OUT: Rest volume (as computed from initialVolume + injectedVolume)")
            .with("currentVolume", DataKind::Real, "0", "OUT: Current volume, as computed from the last surface position")
            .with("currentPressure", DataKind::Real, "0", "OUT: Current pressure, as computed from the last surface position")
            .with("currentStiffness", DataKind::Real, "0", "OUT: dP/dV at current volume and pressure")
            .with("pressureTriangles", DataKind::Ints(3), "", "OUT: list of triangles where a pressure is applied (mesh triangles + tessellated quads)")
            .with("initialSurfaceArea", DataKind::Real, "0", "OUT: Initial surface area, as computed from the surface rest position")
            .with("currentSurfaceArea", DataKind::Real, "0", "OUT: Current surface area, as computed from the last surface position")
            .with("drawForceScale", DataKind::Real, "0.001", "DEBUG: scale used to render force vectors")
            .with("drawForceColor", DataKind::Reals(4), "0 1 1 1", "DEBUG: color used to render force vectors")
            .with("volumeAfterTC", DataKind::Real, "0", "OUT: Volume after a topology change")
            .with("surfaceAreaAfterTC", DataKind::Real, "0", "OUT: Surface area after a topology change");
        TaitSurfacePressureForceField {
            outputs: OUTPUT_NAMES.map(|n| data.index_of(n)),
            data,
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

    /// Write a scalar output into the Data table (no allocation; the step's outputs by the
    /// indices resolved at construction, [`Output`]).
    fn publish(&mut self, name: &str, v: f64) {
        if let Some(f) = self.data.field_mut(name) {
            f.value = Value::Real(v);
        }
    }

    fn publish_output(&mut self, out: Output, v: f64) {
        if let Some(f) = self.outputs[out as usize].and_then(|i| self.data.field_at_mut(i)) {
            f.value = Value::Real(v);
        }
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
        name: &str,
        default: f64,
        non_negative: bool,
        why: &str,
    ) -> f64 {
        let v = self.data.real(name);
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
        self.p0 = self.parameter(ctx, "p0", 0.0, false, "");
        self.b = self.parameter(
            ctx,
            "B",
            0.0,
            true,
            "the pressure would grow with the volume, an unstable law",
        );
        self.gamma = self.parameter(
            ctx,
            "gamma",
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
        self.injected_target = self.parameter(ctx, "injectedVolume", 0.0, false, "");
        self.max_rate = self.parameter(
            ctx,
            "maxInjectionRate",
            1000.0,
            true,
            "a rate is a magnitude",
        );
        self.current_injected = self.parameter(ctx, "currentInjectedVolume", 0.0, false, "");
        self.rayleigh = self.data.real("rayleighStiffness");
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
        let link = self.data.str("topology").to_string();
        let Some(mesh) = linked_or_context_topology(ctx, &link) else {
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
        let _ = self.data.set_value("pressureTriangles", Value::Ints(flat));

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
        for (name, v) in [
            ("initialVolume", v_rest),
            ("initialSurfaceArea", a_rest),
            ("volumeAfterTC", v_rest),
            ("surfaceAreaAfterTC", a_rest),
            ("v0", self.v0),
            ("currentInjectedVolume", self.current_injected),
        ] {
            self.publish(name, v);
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
        self.publish_output(Output::Volume, v);
        self.publish_output(Output::SurfaceArea, a);
        self.publish_output(Output::Pressure, p);
        self.publish_output(Output::Stiffness, k);
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
            self.publish_output(Output::InjectedVolume, next);
            self.publish_output(Output::V0, self.v0);
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
        self.publish_output(Output::Volume, v);
        self.publish_output(Output::SurfaceArea, a);
        self.publish_output(Output::Pressure, p);
        self.publish_output(Output::Stiffness, k);

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
mod tests {
    use super::*;
    use crate::topology::MeshContainer;
    use canape_core::component::{Component, Topology};
    use canape_core::diag::{Diagnostics, Severity};
    use canape_core::scene::Scene;
    use canape_core::state::MechanicalObject;

    /// The unit cube [0, 1]³: its 8 corners and 12 triangles turning outwards.
    fn unit_cube() -> (Vec<f64>, Vec<[u32; 3]>) {
        let mut x = Vec::new();
        for k in 0..8 {
            x.extend_from_slice(&[(k & 1) as f64, ((k >> 1) & 1) as f64, ((k >> 2) & 1) as f64]);
        }
        // each face as a quad turning counter-clockwise seen from outside, split in two
        let quads = [
            [0, 2, 3, 1], // z = 0
            [4, 5, 7, 6], // z = 1
            [0, 1, 5, 4], // y = 0
            [2, 6, 7, 3], // y = 1
            [0, 4, 6, 2], // x = 0
            [1, 3, 7, 5], // x = 1
        ];
        let tris = quads
            .iter()
            .flat_map(|q: &[u32; 4]| [[q[0], q[1], q[2]], [q[2], q[3], q[0]]])
            .collect();
        (x, tris)
    }

    /// A closed, lumpy surface: an octahedron with each face split in four, its points pushed
    /// off the sphere by deterministic amounts, plus one point inside that no triangle uses.
    fn lumpy_ball() -> (Vec<f64>, Vec<[u32; 3]>) {
        let mut pts: Vec<[f64; 3]> = vec![
            [1., 0., 0.],
            [-1., 0., 0.],
            [0., 1., 0.],
            [0., -1., 0.],
            [0., 0., 1.],
            [0., 0., -1.],
        ];
        let faces = [
            [0, 2, 4],
            [2, 1, 4],
            [1, 3, 4],
            [3, 0, 4],
            [2, 0, 5],
            [1, 2, 5],
            [3, 1, 5],
            [0, 3, 5],
        ];
        let mut mids: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        let mut mid = |a: u32, b: u32, pts: &mut Vec<[f64; 3]>| -> u32 {
            *mids.entry((a.min(b), a.max(b))).or_insert_with(|| {
                let (p, q) = (pts[a as usize], pts[b as usize]);
                pts.push([0, 1, 2].map(|c| (p[c] + q[c]) / 2.0));
                (pts.len() - 1) as u32
            })
        };
        let mut tris = Vec::new();
        for f in faces {
            let [a, b, c] = f;
            let (ab, bc, ca) = (
                mid(a, b, &mut pts),
                mid(b, c, &mut pts),
                mid(c, a, &mut pts),
            );
            tris.extend([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
        }
        let mut x = Vec::new();
        for (i, p) in pts.iter().enumerate() {
            let s = 1.0 + 0.15 * ((i as f64) * 1.7).sin();
            x.extend(p.iter().map(|c| c * s + 0.05 * (i as f64 * 0.9).cos()));
        }
        x.extend_from_slice(&[0.01, -0.02, 0.03]);
        (x, tris)
    }

    /// A dense matrix sink.
    struct Dense {
        n: usize,
        a: Vec<f64>,
    }
    impl MatrixSink for Dense {
        fn add(&mut self, row: usize, col: usize, v: f64) {
            self.a[row * self.n + col] += v;
        }
    }

    /// Put `ff` (with `attrs`) on a Vec3 state at rest positions `rest` and positions `x`, over a
    /// triangle topology `tris`, in a one-node scene of dt 0.02; run its init.
    fn init_on(
        ff: &mut TaitSurfacePressureForceField,
        rest: &[f64],
        x: &[f64],
        tris: &[[u32; 3]],
        attrs: &[(&str, &str)],
    ) -> Diagnostics {
        for (k, v) in attrs {
            ff.data_mut().set_str(k, v).unwrap();
        }
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        scene.node_mut(root).dt = 0.02;
        let mut topo = MeshContainer::new("TriangleSetTopologyContainer");
        topo.mesh_mut().triangles = tris.to_vec();
        scene.add_component(root, "topo", AnyComponent::Topology(Box::new(topo)), None);
        let mut mo = MechanicalObject::new(DofType::Vec3);
        mo.resize(x.len() / 3);
        mo.vec_mut(VecId::POSITION).copy_from_slice(x);
        mo.vec_mut(VecId::REST_POSITION).copy_from_slice(rest);
        scene.add_component(root, "dofs", AnyComponent::State(mo), None);
        let id = scene.add_component(
            root,
            "pressure",
            AnyComponent::ForceField(Box::new(ff.clone())),
            None,
        );
        let mut diags = Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        ff.init(&mut ctx);
        diags
    }

    fn usize_tris(t: &[[u32; 3]]) -> Vec<[usize; 3]> {
        t.iter().map(|t| t.map(|i| i as usize)).collect()
    }

    fn warnings(d: &Diagnostics) -> Vec<String> {
        d.iter()
            .filter(|d| d.severity == Severity::Warning)
            .map(|d| d.message.clone())
            .collect()
    }

    #[test]
    fn the_unit_cube_encloses_a_volume_of_one_and_reversing_it_negates_it() {
        let (x, tris) = unit_cube();
        let t = usize_tris(&tris);
        assert_eq!(surface_defects(&t), None);
        let (v, a) = volume_and_area(&t, &x);
        assert!((v - 1.0).abs() < 1e-14, "{v}");
        assert!((a - 6.0).abs() < 1e-14, "{a}");
        // moved away from the origin: the same volume (the tetrahedra's apex does not matter)
        let moved: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(k, c)| c + [3., -7., 11.][k % 3])
            .collect();
        assert!((volume_and_area(&t, &moved).0 - 1.0).abs() < 1e-12);
        let reversed: Vec<[usize; 3]> = t.iter().map(|t| [t[0], t[2], t[1]]).collect();
        assert_eq!(surface_defects(&reversed), None);
        assert!((volume_and_area(&reversed, &x).0 + 1.0).abs() < 1e-14);
        // one triangle flipped: an inconsistent orientation is reported
        let mut mixed = t.clone();
        mixed[0] = [t[0][0], t[0][2], t[0][1]];
        assert!(surface_defects(&mixed).unwrap().contains("orientation"));
        // one triangle less: an open surface
        assert!(surface_defects(&t[1..]).unwrap().contains("open"));
        // quads are split as SOFA's pressureTriangles: (a, b, c), (c, d, a)
        let mesh = Mesh {
            triangles: vec![[7, 8, 9]],
            quads: vec![[0, 1, 2, 3]],
            ..Mesh::default()
        };
        assert_eq!(
            pressure_triangles(&mesh),
            vec![[7, 8, 9], [0, 1, 2], [2, 3, 0]]
        );
    }

    #[test]
    fn tait_law_values_and_its_derivative() {
        let (p0, b, gamma, v0) = (2.0, 100.0, 5.0, 3.0);
        let v = 1.1 * v0;
        let (p, k) = tait_pressure(p0, b, gamma, v, v0);
        let r = 1.1f64.powi(5);
        assert!((p - (2.0 - 100.0 * (r - 1.0))).abs() < 1e-12, "{p}");
        assert!((p + 59.051).abs() < 1e-9, "{p}");
        assert!((k - (-100.0 * 5.0 * r / v)).abs() < 1e-12, "{k}");
        // dP/dV by central differences
        let h = 1e-6;
        let fd = (tait_pressure(p0, b, gamma, v + h, v0).0
            - tait_pressure(p0, b, gamma, v - h, v0).0)
            / (2.0 * h);
        assert!((fd - k).abs() < 1e-6 * k.abs(), "{fd} {k}");
        // at the rest volume: p0
        assert_eq!(tait_pressure(p0, b, gamma, v0, v0).0, p0);
        // ideal gas (γ = 1): linear in V
        assert_eq!(tait_pressure(p0, b, 1.0, 2.0 * v0, v0), (p0 - b, -b / v0));
        // constant pressure: B = 0, γ = 0 or v0 = 0
        assert_eq!(tait_pressure(p0, 0.0, gamma, v, v0), (p0, 0.0));
        assert_eq!(tait_pressure(p0, b, 0.0, v, v0), (p0, 0.0));
        assert_eq!(tait_pressure(p0, b, gamma, v, 0.0), (p0, 0.0));
        // V = 0: no stiffness (SOFA's guard), pressure p0 + B
        assert_eq!(tait_pressure(p0, b, gamma, 0.0, v0), (p0 + b, 0.0));
        // compressed: the pressure rises
        assert!(tait_pressure(p0, b, gamma, 0.9 * v0, v0).0 > p0);
    }

    #[test]
    fn forces_are_the_pressure_on_a_third_of_each_triangle_and_sum_to_zero() {
        let (x, tris) = lumpy_ball();
        let mut ff = TaitSurfacePressureForceField::new();
        // rest volume from x scaled down: the surface is inflated relative to its rest
        let rest: Vec<f64> = x.iter().map(|c| 0.95 * c).collect();
        let d = init_on(
            &mut ff,
            &rest,
            &x,
            &tris,
            &[("B", "40"), ("gamma", "3"), ("p0", "1.5")],
        );
        assert!(
            !d.has_errors() && warnings(&d).is_empty(),
            "{:?}",
            d.iter().collect::<Vec<_>>()
        );
        let v_rest = volume_and_area(&usize_tris(&tris), &rest).0;
        assert!((ff.rest_volume() - v_rest).abs() < 1e-15);
        let mut f = vec![0.0; x.len()];
        ff.add_force(&x, &vec![0.0; x.len()], &mut f);
        let (v, _) = volume_and_area(&usize_tris(&tris), &x);
        let (p, _) = tait_pressure(1.5, 40.0, 3.0, v, v_rest);
        assert_eq!(ff.pressure(), p);
        assert_eq!(ff.data().real("currentPressure"), p);
        assert_eq!(ff.data().real("currentVolume"), v);
        assert!(
            p < 1.5,
            "inflated past its rest volume: the pressure drops ({p})"
        );
        // expected: each triangle's area times its unit normal, a third per corner
        let mut expected = vec![0.0; x.len()];
        for t in &tris {
            let q = t.map(|i| get3(&x, i as usize));
            let cr = (q[1] - q[0]).cross(&(q[2] - q[0]));
            let (area, normal) = (cr.norm() / 2.0, cr.normalize());
            for &i in t {
                add3(&mut expected, i as usize, &(normal * (p * area / 3.0)));
            }
        }
        for (a, b) in f.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-12, "{a} {b}");
        }
        // no force on the point inside
        let last = x.len() / 3 - 1;
        assert_eq!(get3(&f, last), Vec3::zeros());
        // total force zero on a closed surface; Σ f·x = 3 P V (virial of a uniform pressure)
        let total = (0..x.len() / 3).fold(Vec3::zeros(), |s, i| s + get3(&f, i));
        assert!(total.norm() < 1e-12, "{total}");
        let virial: f64 = f.iter().zip(&x).map(|(a, b)| a * b).sum();
        // the virial is taken about the origin: also zero total force makes it origin-free
        assert!(
            (virial - 3.0 * p * v).abs() < 1e-10,
            "{virial} {}",
            3.0 * p * v
        );
    }

    /// add_dforce against central differences of add_force (SOFA's tangent is the exact
    /// derivative on a closed surface), and add_k_to_matrix against add_dforce.
    #[test]
    fn the_tangent_matches_finite_differences_and_the_assembled_matrix() {
        let (x, tris) = lumpy_ball();
        let n3 = x.len();
        let rest: Vec<f64> = x.iter().map(|c| 1.04 * c).collect();
        let mut ff = TaitSurfacePressureForceField::new();
        let d = init_on(
            &mut ff,
            &rest,
            &x,
            &tris,
            &[("B", "25"), ("gamma", "5"), ("p0", "0.7")],
        );
        assert!(!d.has_errors());
        let force = |ff: &mut TaitSurfacePressureForceField, x: &[f64]| {
            let mut f = vec![0.0; n3];
            ff.add_force(x, &vec![0.0; n3], &mut f);
            f
        };
        let dx: Vec<f64> = (0..n3).map(|k| ((k as f64) * 0.37).sin()).collect();
        let h = 1e-6;
        let plus: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a + h * b).collect();
        let minus: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a - h * b).collect();
        let (fp, fm) = (force(&mut ff, &plus), force(&mut ff, &minus));
        // back at x: the tangent is taken there
        force(&mut ff, &x);
        assert!(ff.stiffness != 0.0 && ff.pressure != 0.0);
        let mut df = vec![0.0; n3];
        ff.add_dforce(&dx, &mut df, 1.0);
        let scale = df.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 1e-3);
        for k in 0..n3 {
            let fd = (fp[k] - fm[k]) / (2.0 * h);
            assert!((fd - df[k]).abs() < 1e-6 * scale, "{k}: {fd} {}", df[k]);
        }
        // k_factor scales linearly, and df accumulates
        let mut df2 = vec![1.0; n3];
        ff.add_dforce(&dx, &mut df2, -0.5);
        for k in 0..n3 {
            assert!((df2[k] - (1.0 - 0.5 * df[k])).abs() < 1e-12);
        }
        // the assembled matrix, at an offset, times dx
        let off = 3;
        let mut m = Dense {
            n: n3 + off,
            a: vec![0.0; (n3 + off) * (n3 + off)],
        };
        ff.add_k_to_matrix(&mut m, 2.0, off);
        for r in 0..off {
            assert!(m.a[r * m.n..(r + 1) * m.n].iter().all(|v| *v == 0.0));
        }
        for r in 0..n3 {
            let kdx: f64 = (0..n3)
                .map(|c| m.a[(r + off) * m.n + c + off] * dx[c])
                .sum();
            assert!(
                (kdx - 2.0 * df[r]).abs() < 1e-10 * scale,
                "{r}: {kdx} {}",
                2.0 * df[r]
            );
        }
    }

    #[test]
    fn the_injected_volume_follows_its_target_at_the_maximum_rate() {
        let (x, tris) = unit_cube();
        let mut ff = TaitSurfacePressureForceField::new();
        let d = init_on(
            &mut ff,
            &x,
            &x,
            &tris,
            &[
                ("B", "100"),
                ("gamma", "1"),
                ("injectedVolume", "0.5"),
                ("maxInjectionRate", "10"),
            ],
        );
        assert!(!d.has_errors());
        assert_eq!(ff.rest_volume(), 1.0);
        // 10 per second, dt 0.02: 0.2 per step, reached at the third step
        let mut seen = Vec::new();
        for step in 0..4 {
            ff.set_time(0.02 * step as f64);
            seen.push(ff.data().real("currentInjectedVolume"));
        }
        let want = [0.2, 0.4, 0.5, 0.5];
        for (a, b) in seen.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{seen:?}");
        }
        assert!((ff.data().real("v0") - 1.5).abs() < 1e-12);
        // extraction; times met again (several integrations within a step) inject nothing
        ff.data_mut().set_str("injectedVolume", "-1").unwrap();
        ff.injected_target = -1.0;
        ff.set_time(0.08);
        ff.set_time(0.08);
        ff.set_time(0.07);
        assert!((ff.data().real("currentInjectedVolume") - 0.3).abs() < 1e-12);
        // half a step later: half a step's worth
        ff.set_time(0.09);
        assert!((ff.data().real("currentInjectedVolume") - 0.2).abs() < 1e-12);
        // at the same shape, a larger rest volume: the pressure rises (ideal gas:
        // P = B(1 − V/v0))
        let mut f = vec![0.0; x.len()];
        ff.add_force(&x, &vec![0.0; x.len()], &mut f);
        assert!((ff.pressure() - 100.0 * (1.0 - 1.0 / 1.2)).abs() < 1e-12);
        assert!(ff.pressure() > 0.0);
    }

    #[test]
    fn bad_input_gives_diagnostics_and_no_force() {
        let (x, tris) = unit_cube();
        let nothing_applied = |ff: &mut TaitSurfacePressureForceField| {
            let mut f = vec![0.0; x.len()];
            ff.add_force(&x, &vec![0.0; x.len()], &mut f);
            ff.add_dforce(&x, &mut f, 1.0);
            f.iter().all(|v| *v == 0.0)
        };
        // a point out of range: error, nothing applied
        let mut ff = TaitSurfacePressureForceField::new();
        let mut bad = tris.clone();
        bad[3] = [0, 1, 42];
        let d = init_on(&mut ff, &x, &x, &bad, &[("B", "1"), ("gamma", "2")]);
        assert!(d.has_errors());
        assert!(nothing_applied(&mut ff));
        // no triangles: error
        let mut ff = TaitSurfacePressureForceField::new();
        let d = init_on(&mut ff, &x, &x, &[], &[]);
        assert!(d.has_errors());
        assert!(nothing_applied(&mut ff));
        // an open surface: a warning, and the forces no longer sum to zero
        let mut ff = TaitSurfacePressureForceField::new();
        let d = init_on(&mut ff, &x, &x, &tris[2..], &[("p0", "1")]);
        assert!(!d.has_errors());
        assert!(
            warnings(&d).iter().any(|w| w.contains("open")),
            "{:?}",
            warnings(&d)
        );
        // zero volume: a flat, closed surface (two triangles back to back)
        let mut ff = TaitSurfacePressureForceField::new();
        let flat = [[0, 1, 3], [0, 3, 1]];
        let d = init_on(&mut ff, &x, &x, &flat, &[("B", "5"), ("gamma", "2")]);
        assert!(
            warnings(&d).iter().any(|w| w.contains("no volume")),
            "{:?}",
            warnings(&d)
        );
        // the volume is 0 but the state is valid: p0 = 0 and no force
        assert!(nothing_applied(&mut ff));
        // inward triangles: negative rest volume
        let mut ff = TaitSurfacePressureForceField::new();
        let inward: Vec<[u32; 3]> = tris.iter().map(|t| [t[0], t[2], t[1]]).collect();
        let d = init_on(&mut ff, &x, &x, &inward, &[("B", "5"), ("gamma", "2")]);
        assert!(warnings(&d).iter().any(|w| w.contains("negative")));
        // gamma ≤ 0, B < 0, a negative rate, non-finite values: warnings, defaults used
        let mut ff = TaitSurfacePressureForceField::new();
        ff.data_mut()
            .set_value("p0", Value::Real(f64::NAN))
            .unwrap();
        ff.data_mut()
            .set_value("injectedVolume", Value::Real(f64::INFINITY))
            .unwrap();
        let d = init_on(
            &mut ff,
            &x,
            &x,
            &tris,
            &[("B", "-3"), ("gamma", "-1"), ("maxInjectionRate", "-2")],
        );
        let w = warnings(&d);
        for name in ["p0", "B", "gamma", "injectedVolume", "maxInjectionRate"] {
            assert!(w.iter().any(|m| m.starts_with(name)), "{name}: {w:?}");
        }
        assert_eq!(
            (ff.p0, ff.b, ff.gamma, ff.max_rate),
            (0.0, 0.0, 0.0, 1000.0)
        );
        assert!(nothing_applied(&mut ff));
        // γ = 0 with B: B is unused, said so
        let mut ff = TaitSurfacePressureForceField::new();
        let d = init_on(&mut ff, &x, &x, &tris, &[("B", "5")]);
        assert!(warnings(&d).iter().any(|w| w.contains("gamma is 0")));
        // a state too small for the surface at run time: nothing, no panic
        let mut ff = TaitSurfacePressureForceField::new();
        init_on(&mut ff, &x, &x, &tris, &[("p0", "3")]);
        let mut f = vec![0.0; 9];
        ff.add_force(&x[..9], &[0.0; 9], &mut f);
        assert!(f.iter().all(|v| *v == 0.0));
        // V/v0 < 0 with a fractional γ: no NaN
        let mut ff = TaitSurfacePressureForceField::new();
        init_on(&mut ff, &x, &x, &tris, &[("B", "5"), ("gamma", "1.5")]);
        let mirrored: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(k, c)| if k % 3 == 0 { -c } else { *c })
            .collect();
        let mut f = vec![0.0; x.len()];
        ff.add_force(&mirrored, &vec![0.0; x.len()], &mut f);
        assert!(f.iter().all(|v| v.is_finite()));
        assert_eq!(ff.pressure(), 0.0);
    }
}
