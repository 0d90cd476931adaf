//! ParabolicProjectiveConstraint and HermiteSplineProjectiveConstraint (one type,
//! [`CurveProjectiveConstraint`]): the time window, the parabola and the Hermite spline.

use super::{context_state, finite_vector, set_translation, vec3};
use crate::base_data;
use crate::constraint::projective::projections::{valid_indices, zero_blocks};
use canape_core::component::ProjectiveConstraint;
use canape_core::data::{Data, DataKind, DataTable, Ints, Real, Reals, Text};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_types::{DofType, Vec3};

canape_core::data_schema! {
    /// The Data both curves start with (after the base Data).
    pub struct CurveData {
        indices: Ints = ("indices", DataKind::Ints(0), "", "Indices of the constrained points"),
        begin_time: Real = ("BeginTime", DataKind::Real, "0", "Begin Time of the motion"),
        end_time: Real = ("EndTime", DataKind::Real, "0", "End Time of the motion"),
    }
}

canape_core::data_schema! {
    /// ParabolicProjectiveConstraint's three points (after [`CurveData`]).
    pub struct ParabolicData {
        p1: Reals = ("P1", DataKind::Vector(3), "0 0 0", "first point of the parabol"),
        p2: Reals = ("P2", DataKind::Vector(3), "0 0 0", "second point of the parabol"),
        p3: Reals = ("P3", DataKind::Vector(3), "0 0 0", "third point of the parabol"),
    }
}

canape_core::data_schema! {
    /// HermiteSplineProjectiveConstraint's control points, tangents and pace (after
    /// [`CurveData`]).
    pub struct HermiteSplineData {
        x0: Reals = ("X0", DataKind::Vector(3), "0 0 0", "first control point"),
        dx0: Reals = ("dX0", DataKind::Vector(3), "0 0 0", "first control tangente"),
        x1: Reals = ("X1", DataKind::Vector(3), "0 0 0", "second control point"),
        dx1: Reals = ("dX1", DataKind::Vector(3), "0 0 0", "sceond control tangente"),
        sx0: Reals = ("SX0", DataKind::Vector(2), "0 0", "first interpolation vector"),
        sx1: Reals = ("SX1", DataKind::Vector(2), "0 0", "second interpolation vector"),
    }
}

canape_core::data_schema! {
    /// The Data both curves end with.
    pub struct CurveTopologyData {
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

/// The Data of one curve class.
#[derive(Clone, Copy, Debug)]
enum CurveShapeData {
    Parabolic(ParabolicData),
    HermiteSpline(HermiteSplineData),
}

/// The time interval over which a curve is followed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Window {
    begin: f64,
    end: f64,
}

impl Window {
    /// `BeginTime` and `EndTime`, finite with end > begin (reported otherwise).
    fn from_data(ctx: &mut InitContext<'_>, data: &DataTable, d: &CurveData) -> Option<Window> {
        let (begin, end) = (data.get(d.begin_time), data.get(d.end_time));
        if !(begin.is_finite() && end.is_finite()) {
            ctx.error(format!(
                "BeginTime ({begin}) and EndTime ({end}) must be finite: the constraint does nothing"
            ));
            return None;
        }
        if end <= begin {
            ctx.error(format!(
                "EndTime ({end}) must be after BeginTime ({begin}): the constraint does nothing"
            ));
            return None;
        }
        Some(Window { begin, end })
    }

    /// Where time `t` falls in the window, from 0 at the begin to 1 at the end (both included);
    /// `None` outside.
    fn phase(&self, t: f64) -> Option<f64> {
        (t >= self.begin && t <= self.end).then(|| self.unclamped_phase(t))
    }

    /// `t` measured in the window's duration from its begin (not clamped).
    fn unclamped_phase(&self, t: f64) -> f64 {
        (t - self.begin) / (self.end - self.begin)
    }
}

/// The parabola through three points, in the frame SOFA builds: origin P1, x axis towards P3,
/// y axis in the plane of the three points, towards P2; there y = quad·x² + lin·x.
#[derive(Clone, Debug, PartialEq)]
struct Parabola {
    origin: Vec3,
    ax: Vec3,
    ay: Vec3,
    /// |P1P3|: x runs from 0 to this over the window.
    span: f64,
    quad: f64,
    lin: f64,
}

/// Why three points define no parabola y(x) in SOFA's frame.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParabolaError {
    #[error("P1, P2 and P3 must be three different points")]
    SamePoints,
    #[error("P1, P2 and P3 are aligned: they define no parabola")]
    Aligned,
    #[error("P2 is straight above P1 or P3 seen from the P1→P3 axis: no parabola y(x) passes through the three points")]
    AboveAnEnd,
}

impl Parabola {
    fn through(p1: Vec3, p2: Vec3, p3: Vec3) -> Result<Parabola, ParabolaError> {
        let (e12, e13) = (p2 - p1, p3 - p1);
        if e12 == Vec3::zeros() || e13 == Vec3::zeros() || p3 == p2 {
            return Err(ParabolaError::SamePoints);
        }
        let normal = e13.cross(&e12);
        if normal.norm() <= 1e-12 * e13.norm() * e12.norm() {
            return Err(ParabolaError::Aligned);
        }
        let ax = e13.normalize();
        let ay = normal.cross(&e13).normalize();
        let span = e13.norm();
        let (x2, y2) = (e12.dot(&ax), e12.dot(&ay));
        if x2.abs() <= 1e-12 * span || (span - x2).abs() <= 1e-12 * span {
            return Err(ParabolaError::AboveAnEnd);
        }
        let denom = span * x2 - x2 * x2;
        Ok(Parabola {
            origin: p1,
            ax,
            ay,
            span,
            quad: -y2 / denom,
            lin: span * y2 / denom,
        })
    }

    /// Coordinates in the parabola's plane at phase `s` (x proportional to the phase).
    fn local(&self, s: f64) -> (f64, f64) {
        let x = self.span * s;
        (x, self.quad * (x * x) + self.lin * x)
    }

    fn point(&self, s: f64) -> Vec3 {
        let (x, y) = self.local(s);
        self.origin + (self.ax * x + self.ay * y)
    }

    /// SOFA's velocity: the displacement from phase `s` to phase `s_next` (a time step later)
    /// divided by the step.
    fn step_velocity(&self, s: f64, s_next: f64, dt: f64) -> Vec3 {
        let (x0, y0) = self.local(s);
        let (x1, y1) = self.local(s_next);
        self.ax * ((x1 - x0) / dt) + self.ay * ((y1 - y0) / dt)
    }
}

/// Cubic Hermite basis (h00, h10, h01, h11) at `s`.
fn hermite_basis(s: f64) -> [f64; 4] {
    let (s2, s3) = (s * s, s * s * s);
    [
        2.0 * s3 - 3.0 * s2 + 1.0,
        s3 - 2.0 * s2 + s,
        -2.0 * s3 + 3.0 * s2,
        s3 - s2,
    ]
}

/// Derivatives of the cubic Hermite basis at `s`.
fn hermite_basis_derivative(s: f64) -> [f64; 4] {
    let s2 = s * s;
    [
        6.0 * s2 - 6.0 * s,
        3.0 * s2 - 4.0 * s + 1.0,
        -6.0 * s2 + 6.0 * s,
        3.0 * s2 - 2.0 * s,
    ]
}

/// The spline X0 → X1 with tangents dX0, dX1, run through at the pace of a second Hermite
/// curve from (0, 0) to (1, 1) with tangents SX0, SX1, of which SOFA uses only the second
/// coordinate: the spline's parameter at phase u is s(u) = SX0.y·h10(u) + h01(u) + SX1.y·h11(u).
#[derive(Clone, Debug, PartialEq)]
struct HermiteSpline {
    control: [Vec3; 4],
    /// SX0.y and SX1.y.
    pace: [f64; 2],
}

impl HermiteSpline {
    fn parameter(&self, u: f64) -> f64 {
        let [_, h10, h01, h11] = hermite_basis(u);
        self.pace[0] * h10 + h01 + self.pace[1] * h11
    }

    fn combine(&self, w: [f64; 4]) -> Vec3 {
        let c = &self.control;
        c[0] * w[0] + c[1] * w[1] + c[2] * w[2] + c[3] * w[3]
    }

    fn point(&self, u: f64) -> Vec3 {
        self.combine(hermite_basis(self.parameter(u)))
    }

    /// SOFA's velocity: the spline's derivative with respect to its own parameter s, not to
    /// time (d/dt = this · s'(u) / (EndTime − BeginTime)).
    fn tangent(&self, u: f64) -> Vec3 {
        self.combine(hermite_basis_derivative(self.parameter(u)))
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Path {
    Parabola(Parabola),
    Hermite(HermiteSpline),
}

/// Which class a [`CurveProjectiveConstraint`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CurveKind {
    Parabolic,
    HermiteSpline,
}

/// ParabolicProjectiveConstraint (…/ParabolicProjectiveConstraint.inl) and
/// HermiteSplineProjectiveConstraint (…/HermiteSplineProjectiveConstraint.inl), on Vec3 and
/// Rigid3 states. While BeginTime ≤ t ≤ EndTime (t the step's start time) the chosen points'
/// derivatives are zeroed, their positions put on the curve at phase (t − BeginTime) /
/// (EndTime − BeginTime) and their velocities set; before and after, the points are free (they
/// keep the velocity they had at the last projection). On Rigid3 states the curve gives the
/// center and the linear velocity; the orientation and angular velocity are left as they are.
///
/// - Parabolic: positions on the parabola through P1 (at BeginTime), P2 and P3 (at EndTime), x
///   along P1→P3 proportional to time; the velocity is SOFA's forward difference over one time
///   step, (x(t + dt) − x(t)) / dt (past EndTime the parabola is extended for it).
/// - HermiteSpline: positions on the spline X0 (at BeginTime) → X1 (at EndTime) with tangents
///   dX0, dX1, its parameter run by the pace curve of SX0/SX1 (see [`HermiteSpline`]); the
///   velocity is SOFA's: the spline's derivative with respect to its parameter (dX0 at
///   BeginTime, dX1 at EndTime), not to time.
#[derive(Clone)]
pub struct CurveProjectiveConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: CurveData,
    /// The curve's own Data.
    shape: CurveShapeData,
    indices: Vec<u32>,
    /// The window and the curve; `None` when init refused the Data (then nothing is projected).
    path: Option<(Window, Path)>,
    dof: DofType,
    /// The context's time step (the parabola's velocity).
    dt: f64,
    time: f64,
}

impl CurveProjectiveConstraint {
    fn with_kind(kind: CurveKind) -> Self {
        let (data, d) = CurveData::declare(base_data(DataTable::new()));
        let (data, shape) = match kind {
            CurveKind::Parabolic => {
                let (data, dp) = ParabolicData::declare(data);
                (data, CurveShapeData::Parabolic(dp))
            }
            CurveKind::HermiteSpline => {
                let (data, dh) = HermiteSplineData::declare(data);
                (data, CurveShapeData::HermiteSpline(dh))
            }
        };
        let (data, _) = CurveTopologyData::declare(data);
        CurveProjectiveConstraint {
            data,
            d,
            shape,
            indices: Vec::new(),
            path: None,
            dof: DofType::Vec3,
            dt: 0.0,
            time: 0.0,
        }
    }

    pub fn parabolic() -> Self {
        Self::with_kind(CurveKind::Parabolic)
    }

    pub fn hermite_spline() -> Self {
        Self::with_kind(CurveKind::HermiteSpline)
    }

    fn class_name(&self) -> &'static str {
        match self.shape {
            CurveShapeData::Parabolic(_) => "ParabolicProjectiveConstraint",
            CurveShapeData::HermiteSpline(_) => "HermiteSplineProjectiveConstraint",
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.indices.clear();
        self.path = None;
        self.time = ctx.scene.time;
        let class = self.class_name();
        let Some((dof, n)) = context_state(ctx, class, &[DofType::Vec3, DofType::Rigid3]) else {
            return;
        };
        self.dof = dof;
        self.dt = ctx.scene.node(ctx.node).dt;
        let indices = valid_indices(ctx, self.data.get(self.d.indices), n);
        let Some(window) = Window::from_data(ctx, &self.data, &self.d) else {
            return;
        };
        let Some(path) = self.curve(ctx) else {
            return;
        };
        if matches!(path, Path::Parabola(_)) && !(self.dt > 0.0 && self.dt.is_finite()) {
            ctx.error(format!(
                "the context's time step ({}) must be positive: the parabola's velocity is a difference over one step",
                self.dt
            ));
            return;
        }
        self.indices = indices;
        self.path = Some((window, path));
    }

    /// The curve from the Data (reported when they do not define one).
    fn curve(&self, ctx: &mut InitContext<'_>) -> Option<Path> {
        let mut finite = |h: Data<Reals>, n: usize| finite_vector(ctx, &self.data, h, n);
        match self.shape {
            CurveShapeData::Parabolic(dp) => {
                let mut p = [Vec3::zeros(); 3];
                for (c, h) in p.iter_mut().zip([dp.p1, dp.p2, dp.p3]) {
                    *c = vec3(&finite(h, 3)?);
                }
                match Parabola::through(p[0], p[1], p[2]) {
                    Ok(parabola) => Some(Path::Parabola(parabola)),
                    Err(e) => {
                        ctx.error(format!("{e}: the constraint does nothing"));
                        None
                    }
                }
            }
            CurveShapeData::HermiteSpline(dh) => {
                let mut control = [Vec3::zeros(); 4];
                for (c, h) in control.iter_mut().zip([dh.x0, dh.dx0, dh.x1, dh.dx1]) {
                    *c = vec3(&finite(h, 3)?);
                }
                let sx0 = finite(dh.sx0, 2)?;
                let sx1 = finite(dh.sx1, 2)?;
                Some(Path::Hermite(HermiteSpline {
                    control,
                    pace: [sx0[1], sx1[1]],
                }))
            }
        }
    }

    /// The curve's point at the current time, when inside the window.
    fn position(&self) -> Option<Vec3> {
        let (window, path) = self.path.as_ref()?;
        let s = window.phase(self.time)?;
        Some(match path {
            Path::Parabola(p) => p.point(s),
            Path::Hermite(h) => h.point(s),
        })
    }

    /// The velocity imposed at the current time, when inside the window.
    fn velocity(&self) -> Option<Vec3> {
        let (window, path) = self.path.as_ref()?;
        let s = window.phase(self.time)?;
        Some(match path {
            Path::Parabola(p) => {
                p.step_velocity(s, window.unclamped_phase(self.time + self.dt), self.dt)
            }
            Path::Hermite(h) => h.tangent(s),
        })
    }
}

impl_component!(CurveProjectiveConstraint, |s| s.class_name(), init);

impl ProjectiveConstraint for CurveProjectiveConstraint {
    fn set_time(&mut self, t: f64) {
        self.time = t;
    }
    fn project_response(&self, dx: &mut [f64]) {
        let active = self
            .path
            .as_ref()
            .is_some_and(|(w, _)| w.phase(self.time).is_some());
        if active {
            zero_blocks(dx, &self.indices, self.dof.deriv_size());
        }
    }
    fn project_velocity(&self, v: &mut [f64]) {
        if let Some(vel) = self.velocity() {
            for &i in &self.indices {
                set_translation(v, self.dof.deriv_size(), i, &vel);
            }
        }
    }
    fn project_position(&self, x: &mut [f64]) {
        if let Some(p) = self.position() {
            for &i in &self.indices {
                set_translation(x, self.dof.coord_size(), i, &p);
            }
        }
    }
    fn fixed_scalar_dofs(&self, _deriv_size: usize) -> Vec<usize> {
        // SOFA does not apply these constraints to assembled matrices
        Vec::new()
    }
}

#[cfg(test)]
mod parabola_refusals {
    use super::*;

    #[test]
    fn read_as_before() {
        let (o, x, y) = (Vec3::zeros(), Vec3::x(), Vec3::y());
        let why = |p1, p2, p3| Parabola::through(p1, p2, p3).unwrap_err().to_string();
        assert_eq!(why(o, o, x), "P1, P2 and P3 must be three different points");
        assert_eq!(
            why(o, x, x * 2.0),
            "P1, P2 and P3 are aligned: they define no parabola"
        );
        assert_eq!(
            why(o, y, x),
            "P2 is straight above P1 or P3 seen from the P1→P3 axis: no parabola y(x) passes through the three points"
        );
    }
}
