//! Projective constraints beyond fixing points, following SOFA's
//! Sofa/Component/Constraint/Projective/.../{PointProjectiveConstraint, LineProjectiveConstraint,
//! PlaneProjectiveConstraint, LinearMovementProjectiveConstraint,
//! OscillatorProjectiveConstraint}.inl:
//!
//! - PointProjectiveConstraint: the chosen points are put at `point` and do not move.
//! - LineProjectiveConstraint / PlaneProjectiveConstraint: the chosen points move only along a
//!   line through `origin` (direction `direction`) / in a plane through `origin` (normal
//!   `normal`): derivatives are projected by n·nᵀ / I − n·nᵀ, positions onto the line / plane.
//!   As in SOFA these two act on derivatives, positions and velocities only: an assembled
//!   matrix is not projected for them (SOFA's applyConstraint is not implemented), the
//!   positions and velocities are projected after each step.
//! - LinearMovementProjectiveConstraint: between two key times the chosen points follow the
//!   linear interpolation of the key `movements` (relative to their initial positions by
//!   default) with the constant velocity between the keys; outside the key times they are free.
//! - OscillatorProjectiveConstraint: x = mean + amplitude·sin(ωt + φ) per listed point.
//! - AffineMovement and PatchTestMovement: in `movement`.
//!
//! Time-dependent ones read the step's start time (`set_time`), as SOFA's context time during
//! the solve and the projections that follow it.

use crate::base_data;
use canape_core::component::ProjectiveConstraint;
use canape_core::data::{Data, DataKind, DataTable, Flag, Ints, Real, Reals, Text};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_types::DofType;

/// The `indices` below the state's size (the others reported and dropped).
pub(super) fn valid_indices(ctx: &mut InitContext<'_>, indices: &[u32], n: usize) -> Vec<u32> {
    let (kept, dropped): (Vec<u32>, Vec<u32>) = indices.iter().partition(|&&i| (i as usize) < n);
    if !dropped.is_empty() {
        ctx.error(format!(
            "indices {dropped:?} are out of range (the state has {n} points) and are ignored"
        ));
    }
    kept
}

/// `keyTimes` (chronological) and the values `v` of Data `name` split into one
/// derivative-sized value per key time (LinearMovement's movements, LinearVelocity's
/// velocities); `None` after reporting.
fn keyed_values(
    ctx: &mut InitContext<'_>,
    key_times: &[f64],
    v: &[f64],
    name: &str,
    dof: DofType,
) -> Option<(Vec<f64>, Vec<Vec<f64>>)> {
    let ds = dof.deriv_size();
    let key_times = key_times.to_vec();
    if key_times.windows(2).any(|w| w[1] < w[0]) {
        ctx.error("keyTimes must be in chronological order");
        return None;
    }
    if v.len() != ds * key_times.len() {
        ctx.error(format!(
            "{name} has {} numbers: {} key times of {} numbers each are needed for a {} state",
            v.len(),
            key_times.len(),
            ds,
            dof.name()
        ));
        return None;
    }
    Some((key_times, v.chunks(ds).map(|c| c.to_vec()).collect()))
}

/// Zero the derivative blocks of `indices`.
pub(super) fn zero_blocks(v: &mut [f64], indices: &[u32], ds: usize) {
    for &i in indices {
        let o = ds * i as usize;
        if let Some(b) = v.get_mut(o..o + ds) {
            b.iter_mut().for_each(|x| *x = 0.0);
        }
    }
}

fn unit(v: &[f64]) -> Option<Vec<f64>> {
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    (n > 0.0 && n.is_finite()).then(|| v.iter().map(|x| x / n).collect())
}

canape_core::data_schema! {
    /// The Data the point, line and plane projections start with (after the base Data).
    pub struct GeometricData {
        indices: Ints = ("indices", DataKind::Ints(0), "0", "Indices of the constrained points"),
        draw_size: Real = ("drawSize", DataKind::Real, "0", "Size of the rendered particles (0 -> point based rendering, >0 -> radius of spheres)"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

canape_core::data_schema! {
    /// PointProjectiveConstraint's own Data (after [`GeometricData`]).
    pub struct PointData {
        point: Reals = ("point", DataKind::Reals(0), "0 0 0", "Target of the projection"),
        fix_all: Flag = ("fixAll", DataKind::Bool, "0", "filter all the DOF to implement a fixed object"),
    }
}

canape_core::data_schema! {
    /// LineProjectiveConstraint's own Data (after [`GeometricData`]).
    pub struct LineData {
        origin: Reals = ("origin", DataKind::Reals(0), "0 0 0", "A point in the line"),
        direction: Reals = ("direction", DataKind::Reals(0), "0 0 0", "Direction of the line"),
    }
}

canape_core::data_schema! {
    /// PlaneProjectiveConstraint's own Data (after [`GeometricData`]).
    pub struct PlaneData {
        origin: Reals = ("origin", DataKind::Reals(0), "0 0 0", "A point in the plane"),
        normal: Reals = ("normal", DataKind::Reals(0), "0 0 0", "Normal vector to the plane"),
    }
}

/// The Data of one geometric projection.
#[derive(Clone, Copy, Debug)]
enum ShapeData {
    Point(PointData),
    Line(LineData),
    Plane(PlaneData),
}

/// Which shape a geometric projection has.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Point,
    Line,
    Plane,
}

/// PointProjectiveConstraint, LineProjectiveConstraint and PlaneProjectiveConstraint.
#[derive(Clone)]
pub struct GeometricProjectiveConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    dg: GeometricData,
    /// The shape's own Data.
    shape_data: ShapeData,
    shape: Shape,
    indices: Vec<u32>,
    fix_all: bool,
    /// The point, or the line's / plane's origin.
    origin: Vec<f64>,
    /// The line's unit direction or the plane's unit normal (zero: no projection).
    n: Vec<f64>,
    /// Size of a coordinate and of a derivative (the same for the Vec types these act on).
    d: usize,
}

impl GeometricProjectiveConstraint {
    fn with_shape(shape: Shape) -> Self {
        let (data, dg) = GeometricData::declare(base_data(DataTable::new()));
        let (data, shape_data) = match shape {
            Shape::Point => {
                let (data, dp) = PointData::declare(data);
                (data, ShapeData::Point(dp))
            }
            Shape::Line => {
                let (data, dl) = LineData::declare(data);
                (data, ShapeData::Line(dl))
            }
            Shape::Plane => {
                let (data, dp) = PlaneData::declare(data);
                (data, ShapeData::Plane(dp))
            }
        };
        GeometricProjectiveConstraint {
            data,
            dg,
            shape_data,
            shape,
            indices: Vec::new(),
            fix_all: false,
            origin: Vec::new(),
            n: Vec::new(),
            d: 3,
        }
    }
    pub fn point() -> Self {
        Self::with_shape(Shape::Point)
    }
    pub fn line() -> Self {
        Self::with_shape(Shape::Line)
    }
    pub fn plane() -> Self {
        Self::with_shape(Shape::Plane)
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.indices.clear();
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context to constrain");
            return;
        };
        let (dof, n) = (st.dof, st.size());
        let allowed = match self.shape {
            Shape::Point => matches!(dof, DofType::Vec1 | DofType::Vec2 | DofType::Vec3),
            _ => matches!(dof, DofType::Vec2 | DofType::Vec3),
        };
        if !allowed {
            ctx.error(format!(
                "{} does not act on {} states",
                self.class_name(),
                dof.name()
            ));
            return;
        }
        let d = dof.deriv_size();
        self.d = d;
        let vector = |h: Data<Reals>, ctx: &mut InitContext<'_>| -> Vec<f64> {
            let v = self.data.get(h);
            let name = self.data.fields()[h.index()].name;
            let mut out = vec![0.0; d];
            for (o, x) in out.iter_mut().zip(v) {
                *o = *x;
            }
            if v.len() < d || v.iter().any(|x| !x.is_finite()) {
                ctx.warn(format!(
                    "{name} needs {d} finite numbers ({} given): missing ones are 0",
                    v.len()
                ));
            }
            out
        };
        match self.shape_data {
            ShapeData::Point(dp) => {
                self.origin = vector(dp.point, ctx);
                self.fix_all = self.data.get(dp.fix_all);
            }
            ShapeData::Line(dl) => {
                self.origin = vector(dl.origin, ctx);
                let dir = vector(dl.direction, ctx);
                // SOFA: a zero direction becomes the first axis
                self.n = unit(&dir).unwrap_or_else(|| {
                    let mut e = vec![0.0; d];
                    e[0] = 1.0;
                    e
                });
            }
            ShapeData::Plane(dp) => {
                self.origin = vector(dp.origin, ctx);
                // SOFA: a zero normal leaves the points free
                self.n = unit(&vector(dp.normal, ctx)).unwrap_or_else(|| vec![0.0; d]);
            }
        }
        self.indices = valid_indices(ctx, self.data.get(self.dg.indices), n);
    }

    fn class_name(&self) -> &'static str {
        match self.shape {
            Shape::Point => "PointProjectiveConstraint",
            Shape::Line => "LineProjectiveConstraint",
            Shape::Plane => "PlaneProjectiveConstraint",
        }
    }

    fn all_or_listed(&self, len: usize) -> Vec<u32> {
        if self.fix_all {
            (0..(len / self.d.max(1)) as u32).collect()
        } else {
            self.indices.clone()
        }
    }

    /// Project the derivative blocks of the chosen points.
    fn project_derivs(&self, v: &mut [f64]) {
        let d = self.d;
        match self.shape {
            Shape::Point => {
                if self.fix_all {
                    v.iter_mut().for_each(|x| *x = 0.0);
                } else {
                    zero_blocks(v, &self.indices, d);
                }
            }
            Shape::Line | Shape::Plane => {
                for &i in &self.indices {
                    let o = d * i as usize;
                    let Some(b) = v.get_mut(o..o + d) else {
                        continue;
                    };
                    let dot: f64 = b.iter().zip(&self.n).map(|(a, n)| a * n).sum();
                    for (x, n) in b.iter_mut().zip(&self.n) {
                        if self.shape == Shape::Line {
                            *x = n * dot;
                        } else {
                            *x -= n * dot;
                        }
                    }
                }
            }
        }
    }
}

impl_component!(GeometricProjectiveConstraint, |s| s.class_name(), init);

impl ProjectiveConstraint for GeometricProjectiveConstraint {
    fn project_response(&self, dx: &mut [f64]) {
        self.project_derivs(dx);
    }
    fn project_velocity(&self, v: &mut [f64]) {
        self.project_derivs(v);
    }
    fn project_position(&self, x: &mut [f64]) {
        let d = self.d;
        let o = &self.origin;
        for i in self.all_or_listed(x.len()) {
            let k = d * i as usize;
            let Some(b) = x.get_mut(k..k + d) else {
                continue;
            };
            match self.shape {
                Shape::Point => b.copy_from_slice(o),
                Shape::Line | Shape::Plane => {
                    let dot: f64 = (0..d).map(|c| (b[c] - o[c]) * self.n[c]).sum();
                    for c in 0..d {
                        if self.shape == Shape::Line {
                            b[c] = o[c] + self.n[c] * dot;
                        } else {
                            b[c] -= self.n[c] * dot;
                        }
                    }
                }
            }
        }
    }
    fn fixed_scalar_dofs(&self, deriv_size: usize) -> Vec<usize> {
        // only the point constraint is applied to assembled matrices (SOFA's applyConstraint:
        // its indices, fixAll or not)
        if self.shape != Shape::Point {
            return Vec::new();
        }
        self.indices
            .iter()
            .flat_map(|&i| (0..deriv_size).map(move |c| deriv_size * i as usize + c))
            .collect()
    }
}

canape_core::data_schema! {
    /// LinearMovementProjectiveConstraint's own Data (after the base Data).
    pub struct LinearMovementData {
        indices: Ints = ("indices", DataKind::Ints(0), "0", "Indices of the constrained points"),
        key_times: Reals = ("keyTimes", DataKind::Reals(0), "0", "key times for the movements"),
        movements: Reals = ("movements", DataKind::Reals(0), "0", "movements corresponding to the key times"),
        relative_movements: Flag = ("relativeMovements", DataKind::Bool, "1", "If true, movements are relative to first position, absolute otherwise"),
        show_movement: Flag = ("showMovement", DataKind::Bool, "0", "Visualization of the movement to be applied to constrained dofs."),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

/// LinearMovementProjectiveConstraint.
#[derive(Clone)]
pub struct LinearMovementProjectiveConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: LinearMovementData,
    indices: Vec<u32>,
    key_times: Vec<f64>,
    /// One derivative-sized movement per key time.
    movements: Vec<Vec<f64>>,
    relative: bool,
    dof: DofType,
    /// Initial coordinates of the chosen points.
    x0: Vec<Vec<f64>>,
    time: f64,
}

impl Default for LinearMovementProjectiveConstraint {
    fn default() -> Self {
        Self::new()
    }
}

/// The interval [prev, next] of key times around `t`, when the movement is under way.
fn key_interval(keys: &[f64], t: f64) -> Option<(usize, usize)> {
    let (first, last) = (*keys.first()?, *keys.last()?);
    if !(t >= first && t <= last) {
        return None;
    }
    let next = keys.iter().position(|&k| k > t)?;
    Some((next.checked_sub(1)?, next))
}

impl LinearMovementProjectiveConstraint {
    pub fn new() -> Self {
        let (data, d) = LinearMovementData::declare(base_data(DataTable::new()));
        LinearMovementProjectiveConstraint {
            data,
            d,
            indices: Vec::new(),
            key_times: Vec::new(),
            movements: Vec::new(),
            relative: true,
            dof: DofType::Vec3,
            x0: Vec::new(),
            time: 0.0,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        // a refused init leaves a constraint that does nothing (no key times)
        self.indices.clear();
        self.key_times.clear();
        self.movements.clear();
        self.x0.clear();
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context to constrain");
            return;
        };
        let (dof, n) = (st.dof, st.size());
        if matches!(dof, DofType::Rigid2) {
            ctx.error("LinearMovementProjectiveConstraint does not act on Rigid2 states");
            return;
        }
        self.dof = dof;
        let (t, d) = (&self.data, &self.d);
        let Some((key_times, movements)) = keyed_values(
            ctx,
            t.get(d.key_times),
            t.get(d.movements),
            "movements",
            dof,
        ) else {
            return;
        };
        let relative = t.get(d.relative_movements);
        let indices = valid_indices(ctx, t.get(d.indices), n);
        self.movements = movements;
        self.key_times = key_times;
        self.relative = relative;
        let cs = dof.coord_size();
        let x = st.vec(canape_core::state::VecId::POSITION);
        self.x0 = indices
            .iter()
            .map(|&i| x[cs * i as usize..cs * (i as usize + 1)].to_vec())
            .collect();
        self.indices = indices;
    }

    fn active(&self) -> Option<(usize, usize)> {
        key_interval(&self.key_times, self.time)
    }
}

impl_component!(
    LinearMovementProjectiveConstraint,
    "LinearMovementProjectiveConstraint",
    init
);

impl ProjectiveConstraint for LinearMovementProjectiveConstraint {
    fn set_time(&mut self, t: f64) {
        self.time = t;
    }
    fn project_response(&self, dx: &mut [f64]) {
        if self.active().is_some() {
            zero_blocks(dx, &self.indices, self.dof.deriv_size());
        }
    }
    fn project_velocity(&self, v: &mut [f64]) {
        let Some((p, n)) = self.active() else {
            return;
        };
        let ds = self.dof.deriv_size();
        let dt = self.key_times[n] - self.key_times[p];
        for &i in &self.indices {
            let o = ds * i as usize;
            if let Some(b) = v.get_mut(o..o + ds) {
                for c in 0..ds {
                    b[c] = (self.movements[n][c] - self.movements[p][c]) / dt;
                }
            }
        }
    }
    fn project_position(&self, x: &mut [f64]) {
        let Some((p, n)) = self.active() else {
            return;
        };
        let (tp, tn) = (self.key_times[p], self.key_times[n]);
        let s = (self.time - tp) / (tn - tp);
        let (mp, mn) = (&self.movements[p], &self.movements[n]);
        let cs = self.dof.coord_size();
        for (k, &i) in self.indices.iter().enumerate() {
            let o = cs * i as usize;
            let Some(b) = x.get_mut(o..o + cs) else {
                continue;
            };
            let x0 = &self.x0[k];
            // the translational part (all of it for Vec types)
            let nt = if self.dof == DofType::Rigid3 { 3 } else { cs };
            for c in 0..nt {
                let m = mp[c] + (mn[c] - mp[c]) * s;
                b[c] = if self.relative { x0[c] + m } else { m };
            }
            if self.dof == DofType::Rigid3 {
                // the rotational part: key movements as Euler angles, interpolated by slerp
                let q = |m: &[f64]| nalgebra::UnitQuaternion::from_euler_angles(m[3], m[4], m[5]);
                let r = q(mp).slerp(&q(mn), s);
                let r = if self.relative {
                    let q0 = nalgebra::UnitQuaternion::new_normalize(nalgebra::Quaternion::new(
                        x0[6], x0[3], x0[4], x0[5],
                    ));
                    q0 * r
                } else {
                    r
                };
                let c = r.quaternion().coords; // (i, j, k, w)
                b[3..7].copy_from_slice(&[c[0], c[1], c[2], c[3]]);
            }
        }
    }
    fn fixed_scalar_dofs(&self, deriv_size: usize) -> Vec<usize> {
        // SOFA's applyConstraint is not gated by time
        self.indices
            .iter()
            .flat_map(|&i| (0..deriv_size).map(move |c| deriv_size * i as usize + c))
            .collect()
    }
}

/// One oscillating point: (index, mean, amplitude, pulsation, phase).
type Oscillator = (usize, [f64; 3], [f64; 3], f64, f64);

canape_core::data_schema! {
    /// OscillatorProjectiveConstraint's own Data (after the base Data).
    pub struct OscillatorData {
        oscillators: Reals = ("oscillators", DataKind::Reals(0), "", "Stiffness, index, Mean(x,y,z), Amplitude(x,y,z), pulsation and phase"),
    }
}

/// OscillatorProjectiveConstraint (Vec3): `oscillators` records "index mean(3) amplitude(3)
/// pulsation phase".
#[derive(Clone)]
pub struct OscillatorProjectiveConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: OscillatorData,
    osc: Vec<Oscillator>,
    time: f64,
}

impl Default for OscillatorProjectiveConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl OscillatorProjectiveConstraint {
    pub fn new() -> Self {
        let (data, d) = OscillatorData::declare(base_data(DataTable::new()));
        OscillatorProjectiveConstraint {
            data,
            d,
            osc: Vec::new(),
            time: 0.0,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.osc.clear();
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context to constrain");
            return;
        };
        if st.dof != DofType::Vec3 {
            ctx.error(format!(
                "OscillatorProjectiveConstraint acts on Vec3 states here ({} given)",
                st.dof.name()
            ));
            return;
        }
        let n = st.size();
        let v = self.data.get(self.d.oscillators);
        if !v.len().is_multiple_of(9) {
            ctx.error(format!(
                "oscillators has {} numbers: records of 9 (index, mean, amplitude, pulsation, phase) are needed",
                v.len()
            ));
            return;
        }
        for r in v.chunks(9) {
            let i = r[0];
            if !(i >= 0.0 && i.fract() == 0.0 && (i as usize) < n) {
                ctx.error(format!(
                    "oscillator index {i} is not a point of the state ({n} points)"
                ));
                continue;
            }
            self.osc.push((
                i as usize,
                [r[1], r[2], r[3]],
                [r[4], r[5], r[6]],
                r[7],
                r[8],
            ));
        }
    }
}

impl_component!(
    OscillatorProjectiveConstraint,
    "OscillatorProjectiveConstraint",
    init
);

impl ProjectiveConstraint for OscillatorProjectiveConstraint {
    fn set_time(&mut self, t: f64) {
        self.time = t;
    }
    fn project_response(&self, dx: &mut [f64]) {
        for &(i, ..) in &self.osc {
            if let Some(b) = dx.get_mut(3 * i..3 * i + 3) {
                b.iter_mut().for_each(|x| *x = 0.0);
            }
        }
    }
    fn project_velocity(&self, v: &mut [f64]) {
        for &(i, _, a, w, phi) in &self.osc {
            let c = (w * self.time + phi).cos() * w;
            if let Some(b) = v.get_mut(3 * i..3 * i + 3) {
                for k in 0..3 {
                    b[k] = a[k] * c;
                }
            }
        }
    }
    fn project_position(&self, x: &mut [f64]) {
        for &(i, m, a, w, phi) in &self.osc {
            let s = (w * self.time + phi).sin();
            if let Some(b) = x.get_mut(3 * i..3 * i + 3) {
                for k in 0..3 {
                    b[k] = m[k] + a[k] * s;
                }
            }
        }
    }
    fn fixed_scalar_dofs(&self, deriv_size: usize) -> Vec<usize> {
        self.osc
            .iter()
            .flat_map(|&(i, ..)| (0..deriv_size).map(move |c| deriv_size * i + c))
            .collect()
    }
}

/// What LinearVelocityProjectiveConstraint remembers between projections (SOFA's prevT, nextT,
/// prevV, nextV, finished and the integrated positions xP), behind a lock because projections
/// take `&self`.
#[derive(Debug, Default)]
struct VelocityKeys {
    prev_t: f64,
    next_t: f64,
    prev_v: Vec<f64>,
    next_v: Vec<f64>,
    finished: bool,
    /// Integrated coordinates of the chosen points (empty until the first position projection).
    xp: Vec<Vec<f64>>,
}

#[derive(Debug, Default)]
struct Keys(std::sync::Mutex<VelocityKeys>);

impl Clone for Keys {
    fn clone(&self) -> Self {
        let k = self.0.lock().unwrap_or_else(|e| e.into_inner());
        Keys(std::sync::Mutex::new(VelocityKeys {
            prev_t: k.prev_t,
            next_t: k.next_t,
            prev_v: k.prev_v.clone(),
            next_v: k.next_v.clone(),
            finished: k.finished,
            xp: k.xp.clone(),
        }))
    }
}

canape_core::data_schema! {
    /// LinearVelocityProjectiveConstraint's own Data (after the base Data).
    pub struct LinearVelocityData {
        indices: Ints = ("indices", DataKind::Ints(0), "0", "Indices of the constrained points"),
        key_times: Reals = ("keyTimes", DataKind::Reals(0), "0", "key times for the movements"),
        velocities: Reals = ("velocities", DataKind::Reals(0), "0", "velocities corresponding to the key times"),
        coordinates: Ints = ("coordinates", DataKind::Ints(0), "", "coordinates on which to apply velocities"),
        continue_after_end: Flag = ("continueAfterEnd", DataKind::Bool, "0", "If set to true then the last velocity will still be applied after all the key events"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

/// LinearVelocityProjectiveConstraint (LinearVelocityProjectiveConstraint.inl): the chosen
/// points get the velocity interpolated between the key velocities around the current time
/// (only the listed `coordinates`, when given), and their positions integrate that velocity
/// from where the last projection left them. Outside the key times nothing is imposed, unless
/// `continueAfterEnd`: then the last interval's interpolation goes on (as SOFA, which keeps
/// the last interval found).
#[derive(Clone)]
pub struct LinearVelocityProjectiveConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: LinearVelocityData,
    indices: Vec<u32>,
    key_times: Vec<f64>,
    velocities: Vec<Vec<f64>>,
    coordinates: Vec<u32>,
    continue_after_end: bool,
    dof: DofType,
    dt: f64,
    time: f64,
    keys: Keys,
}

impl Default for LinearVelocityProjectiveConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl LinearVelocityProjectiveConstraint {
    pub fn new() -> Self {
        let (data, d) = LinearVelocityData::declare(base_data(DataTable::new()));
        LinearVelocityProjectiveConstraint {
            data,
            d,
            indices: Vec::new(),
            key_times: Vec::new(),
            velocities: Vec::new(),
            coordinates: Vec::new(),
            continue_after_end: false,
            dof: DofType::Vec3,
            dt: 0.0,
            time: 0.0,
            keys: Keys::default(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.indices.clear();
        self.key_times.clear();
        self.velocities.clear();
        self.keys = Keys::default();
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context to constrain");
            return;
        };
        let (dof, n) = (st.dof, st.size());
        self.dof = dof;
        let ds = dof.deriv_size();
        let (t, d) = (&self.data, &self.d);
        let Some((key_times, velocities)) = keyed_values(
            ctx,
            t.get(d.key_times),
            t.get(d.velocities),
            "velocities",
            dof,
        ) else {
            return;
        };
        self.coordinates = self.data.get(self.d.coordinates).to_vec();
        if let Some(c) = self.coordinates.iter().find(|&&c| c as usize >= ds) {
            ctx.error(format!(
                "coordinate {c} is out of range (a {} derivative has {ds})",
                dof.name()
            ));
            self.coordinates.retain(|&c| (c as usize) < ds);
        }
        self.velocities = velocities;
        self.key_times = key_times;
        self.continue_after_end = self.data.get(self.d.continue_after_end);
        self.indices = valid_indices(ctx, self.data.get(self.d.indices), n);
        self.dt = ctx.scene.node(ctx.node).dt;
        let mut k = self.keys.0.lock().unwrap_or_else(|e| e.into_inner());
        k.prev_v = vec![0.0; ds];
        k.next_v = vec![0.0; ds];
    }

    /// SOFA's findKeyTimes, then whether the interpolation applies.
    fn find_keys(&self, k: &mut VelocityKeys) -> bool {
        let t = self.time;
        k.finished = false;
        if let (Some(&first), Some(&last)) = (self.key_times.first(), self.key_times.last()) {
            if t >= first && t <= last {
                k.prev_t = first;
                k.next_t = first;
                for (kt, v) in self.key_times.iter().zip(&self.velocities) {
                    if *kt <= t {
                        k.prev_t = *kt;
                        k.prev_v.clone_from(v);
                    } else {
                        k.next_t = *kt;
                        k.next_v.clone_from(v);
                        k.finished = true;
                        break;
                    }
                }
            }
        }
        k.finished || self.continue_after_end
    }

    fn velocity(&self, k: &VelocityKeys) -> Vec<f64> {
        let s = (self.time - k.prev_t) / (k.next_t - k.prev_t);
        k.prev_v
            .iter()
            .zip(&k.next_v)
            .map(|(p, n)| (n - p) * s + p)
            .collect()
    }
}

impl_component!(
    LinearVelocityProjectiveConstraint,
    "LinearVelocityProjectiveConstraint",
    init
);

impl ProjectiveConstraint for LinearVelocityProjectiveConstraint {
    fn set_time(&mut self, t: f64) {
        self.time = t;
    }
    fn project_response(&self, dx: &mut [f64]) {
        let mut k = self.keys.0.lock().unwrap_or_else(|e| e.into_inner());
        if self.find_keys(&mut k) && k.next_t != k.prev_t {
            zero_blocks(dx, &self.indices, self.dof.deriv_size());
        }
    }
    fn project_velocity(&self, v: &mut [f64]) {
        let mut k = self.keys.0.lock().unwrap_or_else(|e| e.into_inner());
        if !(self.find_keys(&mut k) && k.next_t != k.prev_t) {
            return;
        }
        let m = self.velocity(&k);
        let ds = self.dof.deriv_size();
        for &i in &self.indices {
            let o = ds * i as usize;
            let Some(b) = v.get_mut(o..o + ds) else {
                continue;
            };
            if self.coordinates.is_empty() {
                b.copy_from_slice(&m);
            } else {
                for &c in &self.coordinates {
                    b[c as usize] = m[c as usize];
                }
            }
        }
    }
    fn project_position(&self, x: &mut [f64]) {
        let mut k = self.keys.0.lock().unwrap_or_else(|e| e.into_inner());
        let cs = self.dof.coord_size();
        if k.xp.is_empty() {
            k.xp = self
                .indices
                .iter()
                .map(|&i| {
                    x.get(cs * i as usize..cs * (i as usize + 1))
                        .map(|c| c.to_vec())
                        .unwrap_or_default()
                })
                .collect();
        }
        if !self.find_keys(&mut k) {
            return;
        }
        let m = self.velocity(&k);
        let dt = self.dt;
        for (p, &i) in self.indices.iter().enumerate() {
            let o = cs * i as usize;
            let Some(b) = x.get_mut(o..o + cs) else {
                continue;
            };
            if k.xp[p].len() != cs {
                continue;
            }
            if self.coordinates.is_empty() {
                let mut c = k.xp[p].clone();
                self.dof.coord_add_deriv(&mut c, &m, dt);
                b.copy_from_slice(&c);
            } else {
                for &c in &self.coordinates {
                    let c = c as usize;
                    if c < cs {
                        b[c] = k.xp[p][c] + m[c] * dt;
                    }
                }
            }
            k.xp[p].copy_from_slice(b);
        }
    }
    fn fixed_scalar_dofs(&self, deriv_size: usize) -> Vec<usize> {
        // SOFA's applyConstraint is not gated by time
        self.indices
            .iter()
            .flat_map(|&i| (0..deriv_size).map(move |c| deriv_size * i as usize + c))
            .collect()
    }
}
