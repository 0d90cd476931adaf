//! Projective constraints along prescribed paths and directions:
//!
//! - FixedRotationProjectiveConstraint (Sofa/Component/Constraint/Projective/.../
//!   FixedRotationProjectiveConstraint.{h,inl,cpp}): Rigid3 frames keep, about the chosen world
//!   axes, the rotation they had at init.
//! - ParabolicProjectiveConstraint (…/ParabolicProjectiveConstraint.{h,inl,cpp}) and
//!   HermiteSplineProjectiveConstraint (…/HermiteSplineProjectiveConstraint.{h,inl,cpp}): between
//!   a begin and an end time the chosen points follow a parabola through three points / a cubic
//!   Hermite spline; outside that window they are free.
//! - DirectionProjectiveConstraint (…/DirectionProjectiveConstraint.{h,inl,cpp}): the chosen
//!   points move only along a direction, on the line through their initial positions.
//!
//! None of them acts on an assembled matrix (`fixed_scalar_dofs` is empty): SOFA implements no
//! `applyConstraint` for the first three, and DirectionProjectiveConstraint's only reports that
//! it is not implemented (its projection P·M·P is not an identity row/column either). With an
//! iterative solver the projected right-hand side and products do the work; the positions and
//! velocities are projected after each step in every case.
//!
//! Time-dependent ones read the step's start time (`set_time`), SOFA's context time during the
//! solve and the projections that follow it.

use super::projections::{valid_indices, zero_blocks};
use crate::base_data;
use canape_core::component::ProjectiveConstraint;
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::registry::Registry;
use canape_core::scene::{AnyComponent, InitContext};
use canape_core::state::VecId;
use canape_types::dof::{quat_of, set_quat};
use canape_types::nalgebra::Quaternion;
use canape_types::{DataTypes, DofType, Rigid3Types, Vec3};

/// Register this module's classes.
pub(crate) fn register(r: &mut Registry) {
    r.register(
        "FixedRotationProjectiveConstraint",
        "keeps the initial rotation of Rigid3 frames about chosen world axes",
        |class, t| {
            template_among(t, class, &[DofType::Rigid3])?;
            Ok(AnyComponent::Projective(Box::new(
                FixedRotationProjectiveConstraint::new(),
            )))
        },
    );
    r.register(
        "ParabolicProjectiveConstraint",
        "moves points along a parabola through P1, P2, P3 between BeginTime and EndTime",
        |class, t| {
            template_among(t, class, &[DofType::Vec3, DofType::Rigid3])?;
            Ok(AnyComponent::Projective(Box::new(
                CurveProjectiveConstraint::parabolic(),
            )))
        },
    );
    r.register(
        "HermiteSplineProjectiveConstraint",
        "moves points along a cubic Hermite spline between BeginTime and EndTime",
        |class, t| {
            template_among(t, class, &[DofType::Vec3, DofType::Rigid3])?;
            Ok(AnyComponent::Projective(Box::new(
                CurveProjectiveConstraint::hermite_spline(),
            )))
        },
    );
    r.register(
        "DirectionProjectiveConstraint",
        "lets points move only along a direction, through their initial positions",
        |class, t| {
            template_among(t, class, &[DofType::Vec3, DofType::Vec2])?;
            Ok(AnyComponent::Projective(Box::new(
                DirectionProjectiveConstraint::new(),
            )))
        },
    );
}

/// Accept a template whose DOF type (its first part) is one of `allowed`, the types SOFA
/// instantiates the class for. An empty template is accepted: the component then has no
/// context state, which its init reports.
fn template_among(template: &str, class: &str, allowed: &[DofType]) -> Result<(), String> {
    let first = template.split(',').next().unwrap_or("").trim();
    if first.is_empty() {
        return Ok(());
    }
    let names = || {
        allowed
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(" and ")
    };
    match DofType::from_template(first) {
        Some(d) if allowed.contains(&d) => Ok(()),
        Some(d) => Err(format!(
            "template '{template}' ({}) is not supported: SOFA defines {class} for {} only",
            d.name(),
            names()
        )),
        None => Err(format!(
            "unknown template '{template}' (expected {})",
            names()
        )),
    }
}

/// The context state's DOF type and size when it is one of `allowed` (reported otherwise).
fn context_state(
    ctx: &mut InitContext<'_>,
    class: &str,
    allowed: &[DofType],
) -> Option<(DofType, usize)> {
    let Some(st) = ctx.state() else {
        ctx.error("no MechanicalObject in the context to constrain");
        return None;
    };
    if !allowed.contains(&st.dof) {
        let names: Vec<&str> = allowed.iter().map(|d| d.name()).collect();
        ctx.error(format!(
            "{class} does not act on {} states (only {})",
            st.dof.name(),
            names.join(" and ")
        ));
        return None;
    }
    Some((st.dof, st.size()))
}

/// Data `name` as `n` finite numbers (reported otherwise).
fn finite_vector(
    ctx: &mut InitContext<'_>,
    data: &DataTable,
    name: &str,
    n: usize,
) -> Option<Vec<f64>> {
    let v = data.reals(name);
    if v.len() != n || v.iter().any(|x| !x.is_finite()) {
        ctx.error(format!(
            "{name} needs {n} finite numbers ({} given: {v:?})",
            v.len()
        ));
        return None;
    }
    Some(v.to_vec())
}

fn vec3(v: &[f64]) -> Vec3 {
    Vec3::new(v[0], v[1], v[2])
}

/// Overwrite the first three scalars of block `i` of a flat buffer whose blocks have `stride`
/// scalars: a Vec3 point, a Rigid3 center or the linear part of a Rigid3 derivative.
fn set_translation(buf: &mut [f64], stride: usize, i: u32, v: &Vec3) {
    let o = stride * i as usize;
    if let Some(b) = buf.get_mut(o..o + 3) {
        b.copy_from_slice(v.as_slice());
    }
}

// ---------------------------------------------------------------------------------------------
// FixedRotationProjectiveConstraint

/// SOFA's quaternion normalisation: left as it is within 1e-10 of unit squared norm, and the
/// zero quaternion becomes the identity.
fn normalized(q: Quaternion<f64>) -> Quaternion<f64> {
    let n2 = q.norm_squared();
    if (n2 - 1.0).abs() <= 1e-10 {
        q
    } else if n2 == 0.0 {
        Quaternion::identity()
    } else {
        q * (1.0 / n2.sqrt())
    }
}

/// SOFA's quaternion inverse: the conjugate divided by the norm (the two agree on unit
/// quaternions, which is all it is given here).
fn inverse(q: Quaternion<f64>) -> Quaternion<f64> {
    let n = q.norm();
    if n == 0.0 {
        Quaternion::new(0.0, 0.0, 0.0, 0.0)
    } else {
        q.conjugate() * (1.0 / n)
    }
}

/// Swing–twist decomposition of `q` about world axis `axis` (0, 1, 2): `q = swing · twist`,
/// the twist a rotation about the axis (the identity when `q` is a half turn about an axis
/// perpendicular to it, where the twist is undefined).
fn twist_and_swing(q: Quaternion<f64>, axis: usize) -> (Quaternion<f64>, Quaternion<f64>) {
    let mut v = [0.0; 3];
    v[axis] = q.coords[axis];
    let twist = Quaternion::new(q.w, v[0], v[1], v[2]);
    let twist = normalized(if twist == Quaternion::new(0.0, 0.0, 0.0, 0.0) {
        Quaternion::identity()
    } else {
        twist
    });
    let swing = normalized(q * inverse(twist));
    (twist, swing)
}

/// The orientation `q` with its twists about the `fixed` world axes (X, then Y, then Z)
/// replaced by those of `initial`.
fn keep_twists(q: Quaternion<f64>, initial: Quaternion<f64>, fixed: [bool; 3]) -> Quaternion<f64> {
    let (mut current, mut reference) = (q, initial);
    let mut kept = Quaternion::identity();
    for axis in (0..3).filter(|&a| fixed[a]) {
        current = twist_and_swing(current, axis).1;
        let (twist, rest) = twist_and_swing(reference, axis);
        reference = rest;
        kept = twist * kept;
    }
    current * kept
}

/// FixedRotationProjectiveConstraint (Sofa/Component/Constraint/Projective/.../
/// FixedRotationProjectiveConstraint.inl; Rigid3 only): every frame of the state keeps, about
/// each world axis whose flag is set, the twist its orientation had at init; the rest of its
/// rotation (the swing) is the current one. As in SOFA only positions are projected: derivatives
/// and velocities are left alone (an angular velocity about a fixed axis is not removed, its
/// effect on the orientation is undone after each step), and neither is an assembled matrix.
#[derive(Clone)]
pub struct FixedRotationProjectiveConstraint {
    data: DataTable,
    fixed: [bool; 3],
    /// Orientation of each frame at init.
    initial: Vec<Quaternion<f64>>,
}

impl Default for FixedRotationProjectiveConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl FixedRotationProjectiveConstraint {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with(
                "FixedXRotation",
                DataKind::Bool,
                "0",
                "Prevent Rotation around X axis",
            )
            .with(
                "FixedYRotation",
                DataKind::Bool,
                "0",
                "Prevent Rotation around Y axis",
            )
            .with(
                "FixedZRotation",
                DataKind::Bool,
                "0",
                "Prevent Rotation around Z axis",
            );
        FixedRotationProjectiveConstraint {
            data,
            fixed: [false; 3],
            initial: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.initial.clear();
        let class = "FixedRotationProjectiveConstraint";
        if context_state(ctx, class, &[DofType::Rigid3]).is_none() {
            return;
        }
        let Some(st) = ctx.state() else {
            return;
        };
        self.fixed = [
            self.data.bool("FixedXRotation"),
            self.data.bool("FixedYRotation"),
            self.data.bool("FixedZRotation"),
        ];
        self.initial = Rigid3Types::coords(st.vec(VecId::POSITION))
            .iter()
            .map(quat_of)
            .collect();
    }
}

impl_component!(
    FixedRotationProjectiveConstraint,
    "FixedRotationProjectiveConstraint",
    init
);

impl ProjectiveConstraint for FixedRotationProjectiveConstraint {
    fn project_response(&self, _dx: &mut [f64]) {}
    fn project_position(&self, x: &mut [f64]) {
        if !self.fixed.contains(&true) {
            return;
        }
        for (c, q0) in Rigid3Types::coords_mut(x).iter_mut().zip(&self.initial) {
            let q = keep_twists(quat_of(c), *q0, self.fixed);
            set_quat(c, &q);
        }
    }
    fn fixed_scalar_dofs(&self, _deriv_size: usize) -> Vec<usize> {
        Vec::new()
    }
}

// ---------------------------------------------------------------------------------------------
// ParabolicProjectiveConstraint and HermiteSplineProjectiveConstraint

/// The time interval over which a curve is followed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Window {
    begin: f64,
    end: f64,
}

impl Window {
    /// `BeginTime` and `EndTime`, finite with end > begin (reported otherwise).
    fn from_data(ctx: &mut InitContext<'_>, data: &DataTable) -> Option<Window> {
        let (begin, end) = (data.real("BeginTime"), data.real("EndTime"));
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

impl Parabola {
    fn through(p1: Vec3, p2: Vec3, p3: Vec3) -> Result<Parabola, String> {
        let (e12, e13) = (p2 - p1, p3 - p1);
        if e12 == Vec3::zeros() || e13 == Vec3::zeros() || p3 == p2 {
            return Err("P1, P2 and P3 must be three different points".into());
        }
        let normal = e13.cross(&e12);
        if normal.norm() <= 1e-12 * e13.norm() * e12.norm() {
            return Err("P1, P2 and P3 are aligned: they define no parabola".into());
        }
        let ax = e13.normalize();
        let ay = normal.cross(&e13).normalize();
        let span = e13.norm();
        let (x2, y2) = (e12.dot(&ax), e12.dot(&ay));
        if x2.abs() <= 1e-12 * span || (span - x2).abs() <= 1e-12 * span {
            return Err(
                "P2 is straight above P1 or P3 seen from the P1→P3 axis: no parabola y(x) passes through the three points"
                    .into(),
            );
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
    kind: CurveKind,
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
        let mut data = base_data(DataTable::new())
            .with(
                "indices",
                DataKind::Ints(0),
                "",
                "Indices of the constrained points",
            )
            .with("BeginTime", DataKind::Real, "0", "Begin Time of the motion")
            .with("EndTime", DataKind::Real, "0", "End Time of the motion");
        data = match kind {
            CurveKind::Parabolic => data
                .with(
                    "P1",
                    DataKind::Vector(3),
                    "0 0 0",
                    "first point of the parabol",
                )
                .with(
                    "P2",
                    DataKind::Vector(3),
                    "0 0 0",
                    "second point of the parabol",
                )
                .with(
                    "P3",
                    DataKind::Vector(3),
                    "0 0 0",
                    "third point of the parabol",
                ),
            CurveKind::HermiteSpline => data
                .with("X0", DataKind::Vector(3), "0 0 0", "first control point")
                .with(
                    "dX0",
                    DataKind::Vector(3),
                    "0 0 0",
                    "first control tangente",
                )
                .with("X1", DataKind::Vector(3), "0 0 0", "second control point")
                .with(
                    "dX1",
                    DataKind::Vector(3),
                    "0 0 0",
                    "sceond control tangente",
                )
                .with(
                    "SX0",
                    DataKind::Vector(2),
                    "0 0",
                    "first interpolation vector",
                )
                .with(
                    "SX1",
                    DataKind::Vector(2),
                    "0 0",
                    "second interpolation vector",
                ),
        };
        data = data.with(
            "topology",
            DataKind::Str,
            "",
            "link to the topology container",
        );
        CurveProjectiveConstraint {
            data,
            kind,
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
        match self.kind {
            CurveKind::Parabolic => "ParabolicProjectiveConstraint",
            CurveKind::HermiteSpline => "HermiteSplineProjectiveConstraint",
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
        let indices = valid_indices(ctx, &self.data, n);
        let Some(window) = Window::from_data(ctx, &self.data) else {
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
        match self.kind {
            CurveKind::Parabolic => {
                let mut p = [Vec3::zeros(); 3];
                for (c, name) in p.iter_mut().zip(["P1", "P2", "P3"]) {
                    *c = vec3(&finite_vector(ctx, &self.data, name, 3)?);
                }
                match Parabola::through(p[0], p[1], p[2]) {
                    Ok(parabola) => Some(Path::Parabola(parabola)),
                    Err(e) => {
                        ctx.error(format!("{e}: the constraint does nothing"));
                        None
                    }
                }
            }
            CurveKind::HermiteSpline => {
                let mut control = [Vec3::zeros(); 4];
                for (c, name) in control.iter_mut().zip(["X0", "dX0", "X1", "dX1"]) {
                    *c = vec3(&finite_vector(ctx, &self.data, name, 3)?);
                }
                let sx0 = finite_vector(ctx, &self.data, "SX0", 2)?;
                let sx1 = finite_vector(ctx, &self.data, "SX1", 2)?;
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

// ---------------------------------------------------------------------------------------------
// DirectionProjectiveConstraint

/// DirectionProjectiveConstraint (…/DirectionProjectiveConstraint.inl; Vec3 and Vec2): each
/// chosen point moves only along `direction` (normalised at init), on the line through its
/// position at init. Derivatives and velocities of those points are replaced by their component
/// along the direction (n·nᵀ), positions by their projection onto their line. A zero direction
/// keeps the points at their initial positions (SOFA's n·nᵀ is then zero); it is reported.
/// Assembled matrices are not projected (see the module's documentation).
#[derive(Clone)]
pub struct DirectionProjectiveConstraint {
    data: DataTable,
    indices: Vec<u32>,
    /// Unit direction (or zero), one number per coordinate.
    n: Vec<f64>,
    /// Position at init of each chosen point, `d` numbers each, in `indices` order.
    origins: Vec<f64>,
    /// Scalars per point (coordinates and derivatives alike).
    d: usize,
}

impl Default for DirectionProjectiveConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl DirectionProjectiveConstraint {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with(
                "indices",
                DataKind::Ints(0),
                "0",
                "Indices of the fixed points",
            )
            .with(
                "drawSize",
                DataKind::Real,
                "0",
                "0 -> point based rendering, >0 -> radius of spheres",
            )
            .with(
                "direction",
                DataKind::Reals(0),
                "0 0 0",
                "Direction of the line",
            )
            .with(
                "topology",
                DataKind::Str,
                "",
                "link to the topology container",
            );
        DirectionProjectiveConstraint {
            data,
            indices: Vec::new(),
            n: Vec::new(),
            origins: Vec::new(),
            d: 3,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.indices.clear();
        self.origins.clear();
        self.n.clear();
        let class = "DirectionProjectiveConstraint";
        let Some((dof, n)) = context_state(ctx, class, &[DofType::Vec3, DofType::Vec2]) else {
            return;
        };
        let d = dof.coord_size();
        self.d = d;
        let given = self.data.reals("direction");
        if given.len() < d || given.iter().any(|x| !x.is_finite()) {
            ctx.error(format!(
                "direction needs {d} finite numbers for a {} state ({} given: {given:?}): the constraint does nothing",
                dof.name(),
                given.len()
            ));
            return;
        }
        if given.len() > d {
            ctx.warn(format!(
                "direction has {} numbers, a {} state {d}: the extra ones are ignored",
                given.len(),
                dof.name()
            ));
        }
        let dir = &given[..d];
        let norm = dir.iter().map(|x| x * x).sum::<f64>().sqrt();
        self.n = if norm > 0.0 {
            dir.iter().map(|x| x / norm).collect()
        } else {
            ctx.warn("direction is zero: the points are held at their initial positions");
            vec![0.0; d]
        };
        self.indices = valid_indices(ctx, &self.data, n);
        let Some(st) = ctx.state() else {
            return;
        };
        let x = st.vec(VecId::POSITION);
        for &i in &self.indices {
            let o = d * i as usize;
            self.origins.extend_from_slice(&x[o..o + d]);
        }
    }

    /// Replace the derivative blocks of the chosen points by their component along `n`.
    fn project_derivs(&self, v: &mut [f64]) {
        let d = self.d;
        for &i in &self.indices {
            let o = d * i as usize;
            let Some(b) = v.get_mut(o..o + d) else {
                continue;
            };
            let along: f64 = b.iter().zip(&self.n).map(|(a, n)| a * n).sum();
            for (x, n) in b.iter_mut().zip(&self.n) {
                *x = n * along;
            }
        }
    }
}

impl_component!(
    DirectionProjectiveConstraint,
    "DirectionProjectiveConstraint",
    init
);

impl ProjectiveConstraint for DirectionProjectiveConstraint {
    fn project_response(&self, dx: &mut [f64]) {
        self.project_derivs(dx);
    }
    fn project_velocity(&self, v: &mut [f64]) {
        self.project_derivs(v);
    }
    fn project_position(&self, x: &mut [f64]) {
        let d = self.d;
        for (&i, origin) in self.indices.iter().zip(self.origins.chunks_exact(d)) {
            let o = d * i as usize;
            let Some(b) = x.get_mut(o..o + d) else {
                continue;
            };
            let along: f64 = (0..d).map(|c| (b[c] - origin[c]) * self.n[c]).sum();
            for c in 0..d {
                b[c] = origin[c] + self.n[c] * along;
            }
        }
    }
    fn fixed_scalar_dofs(&self, _deriv_size: usize) -> Vec<usize> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::diag::{Diagnostics, Severity};
    use canape_core::scene::Scene;
    use canape_core::state::MechanicalObject;
    use canape_types::nalgebra::{UnitQuaternion, Vector3};

    /// Set `attrs` on `c`, put a copy of it beside a state of `dof` holding `positions` in a
    /// one-node scene (dt 0.01, time 0) and run its init there: the diagnostics.
    fn init_on<C: ProjectiveConstraint + Clone + 'static>(
        c: &mut C,
        dof: DofType,
        positions: &[f64],
        attrs: &[(&str, &str)],
    ) -> Diagnostics {
        for (k, v) in attrs {
            c.data_mut().set_str(k, v).unwrap();
        }
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut mo = MechanicalObject::new(dof);
        mo.resize(positions.len() / dof.coord_size());
        mo.vec_mut(VecId::POSITION).copy_from_slice(positions);
        scene.add_component(root, "state", AnyComponent::State(mo), None);
        let id = scene.add_component(
            root,
            "constraint",
            AnyComponent::Projective(Box::new(c.clone())),
            None,
        );
        let mut diags = Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        c.init(&mut ctx);
        diags
    }

    fn errors_mentioning(d: &Diagnostics, word: &str) -> usize {
        d.iter()
            .filter(|d| d.severity == Severity::Error && d.message.contains(word))
            .count()
    }

    fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
    }

    // --- FixedRotation ---

    fn rot(axis: usize, angle: f64) -> Quaternion<f64> {
        let mut v = Vector3::zeros();
        v[axis] = 1.0;
        UnitQuaternion::from_axis_angle(&canape_types::nalgebra::Unit::new_normalize(v), angle)
            .into_inner()
    }

    fn frame(center: [f64; 3], q: Quaternion<f64>) -> [f64; 7] {
        let mut c = [center[0], center[1], center[2], 0.0, 0.0, 0.0, 1.0];
        set_quat(&mut c, &q);
        c
    }

    /// Same rotation (q and −q are).
    fn same_rotation(a: Quaternion<f64>, b: Quaternion<f64>) -> bool {
        (a - b).norm() < 1e-12 || (a + b).norm() < 1e-12
    }

    #[test]
    fn fixed_rotation_keeps_the_initial_twist_about_the_fixed_axis_only() {
        let mut c = FixedRotationProjectiveConstraint::new();
        let x0: Vec<f64> = [
            frame([1.0, 2.0, 3.0], rot(2, 0.3)),
            frame([0.0; 3], Quaternion::identity()),
            frame([0.0; 3], Quaternion::identity()),
        ]
        .concat();
        let d = init_on(&mut c, DofType::Rigid3, &x0, &[("FixedZRotation", "1")]);
        assert!(d.is_empty(), "{d:?}");
        // frame 0 swings about x and turns further about z; frame 1 turns about x only (free);
        // frame 2 turns about z only (fixed)
        let moved = rot(0, 0.5) * rot(2, 1.1);
        let mut x: Vec<f64> = [
            frame([4.0, 5.0, 6.0], moved),
            frame([0.0; 3], rot(0, 0.4)),
            frame([0.0; 3], rot(2, 0.9)),
        ]
        .concat();
        c.project_position(&mut x);
        let f = Rigid3Types::coords(&x);
        assert_eq!(&f[0][..3], &[4.0, 5.0, 6.0], "centers are not touched");
        assert!(same_rotation(quat_of(&f[0]), rot(0, 0.5) * rot(2, 0.3)));
        assert!(same_rotation(quat_of(&f[1]), rot(0, 0.4)));
        assert!(same_rotation(quat_of(&f[2]), Quaternion::identity()));
        // the frame's z axis is turned only by the free swing: the fixed z twist of 0.3 is back
        let r = UnitQuaternion::from_quaternion(quat_of(&f[0]));
        let ex = r * Vector3::x();
        let expected = UnitQuaternion::from_quaternion(rot(0, 0.5) * rot(2, 0.3)) * Vector3::x();
        assert!((ex - expected).norm() < 1e-12);
        // derivatives and velocities are not projected (SOFA's are empty)
        let mut dx = vec![1.0; 18];
        c.project_response(&mut dx);
        c.project_velocity(&mut dx);
        assert!(dx.iter().all(|&v| v == 1.0));
        assert!(c.fixed_scalar_dofs(6).is_empty());
    }

    #[test]
    fn fixed_rotation_flags_select_the_axes() {
        let x0 = frame([0.0; 3], rot(2, 0.3)).to_vec();
        // no flag: nothing changes
        let mut c = FixedRotationProjectiveConstraint::new();
        assert!(init_on(&mut c, DofType::Rigid3, &x0, &[]).is_empty());
        let mut x = frame([0.0; 3], rot(1, 0.7) * rot(2, 1.0)).to_vec();
        let before = x.clone();
        c.project_position(&mut x);
        assert_eq!(x, before);
        // all three: single-axis turns are undone back to the initial twist
        let mut c = FixedRotationProjectiveConstraint::new();
        let all = [
            ("FixedXRotation", "1"),
            ("FixedYRotation", "true"),
            ("FixedZRotation", "1"),
        ];
        assert!(init_on(&mut c, DofType::Rigid3, &x0, &all).is_empty());
        for q in [rot(0, 0.8), rot(1, -0.6), rot(2, 2.0)] {
            let mut x = frame([0.0; 3], q).to_vec();
            c.project_position(&mut x);
            let f = Rigid3Types::coords(&x);
            assert!(same_rotation(quat_of(&f[0]), rot(2, 0.3)), "{q:?}");
        }
        // X only: a turn about y stays
        let mut c = FixedRotationProjectiveConstraint::new();
        let x0 = frame([0.0; 3], Quaternion::identity()).to_vec();
        assert!(init_on(&mut c, DofType::Rigid3, &x0, &[("FixedXRotation", "1")]).is_empty());
        let mut x = frame([0.0; 3], rot(1, 0.6) * rot(0, 0.2)).to_vec();
        c.project_position(&mut x);
        assert!(same_rotation(
            quat_of(&Rigid3Types::coords(&x)[0]),
            rot(1, 0.6)
        ));
    }

    #[test]
    fn templates_sofa_does_not_define_are_refused() {
        let mut r = Registry::new();
        register(&mut r);
        let make =
            |class: &str, t: &str| (r.get(class).unwrap().create)(r.get(class).unwrap().class, t);
        assert!(make("FixedRotationProjectiveConstraint", "Rigid3d").is_ok());
        assert!(make("FixedRotationProjectiveConstraint", "").is_ok());
        let Err(e) = make("FixedRotationProjectiveConstraint", "Vec3d") else {
            panic!("Vec3d accepted");
        };
        assert!(e.contains("Rigid3d only"), "{e}");
        assert!(make("ParabolicProjectiveConstraint", "Vec3").is_ok());
        assert!(make("ParabolicProjectiveConstraint", "Rigid3").is_ok());
        assert!(make("ParabolicProjectiveConstraint", "Vec2d").is_err());
        assert!(make("HermiteSplineProjectiveConstraint", "Rigid3d").is_ok());
        assert!(make("HermiteSplineProjectiveConstraint", "Vec1d").is_err());
        assert!(make("DirectionProjectiveConstraint", "Vec2d").is_ok());
        assert!(make("DirectionProjectiveConstraint", "Rigid3d").is_err());
        assert!(make("DirectionProjectiveConstraint", "Banana").is_err());
        // and a state of another type is reported at init
        let mut c = FixedRotationProjectiveConstraint::new();
        let d = init_on(&mut c, DofType::Vec3, &[0.0; 3], &[("FixedZRotation", "1")]);
        assert_eq!(errors_mentioning(&d, "Vec3d"), 1, "{d:?}");
        let mut x = vec![1.0, 2.0, 3.0];
        c.project_position(&mut x);
        assert_eq!(x, [1.0, 2.0, 3.0]);
    }

    // --- Parabolic ---

    const P1: [f64; 3] = [1.0, 0.0, 0.0];
    const P2: [f64; 3] = [5.0, 3.0, 1.0];
    const P3: [f64; 3] = [7.0, 6.0, -5.0];

    fn parabolic_attrs() -> Vec<(&'static str, &'static str)> {
        vec![
            ("indices", "1"),
            ("P1", "1 0 0"),
            ("P2", "5 3 1"),
            ("P3", "7 6 -5"),
            ("BeginTime", "0.5"),
            ("EndTime", "1.5"),
        ]
    }

    /// The quadratic through P1, P2, P3 at parameters 0, s2, 1 (Lagrange's form), s2 the
    /// fraction of P1→P3 that P2 projects to: the curve SOFA's construction gives.
    fn lagrange(s: f64) -> [f64; 3] {
        let v = |p: [f64; 3]| Vec3::new(p[0], p[1], p[2]);
        let (p1, p2, p3) = (v(P1), v(P2), v(P3));
        let s2 = (p2 - p1).dot(&(p3 - p1)) / (p3 - p1).norm_squared();
        let l0 = (s - s2) * (s - 1.0) / s2;
        let l1 = s * (s - 1.0) / (s2 * (s2 - 1.0));
        let l2 = s * (s - s2) / (1.0 - s2);
        let p = p1 * l0 + p2 * l1 + p3 * l2;
        [p.x, p.y, p.z]
    }

    #[test]
    fn parabolic_positions_follow_the_parabola_through_the_three_points() {
        let mut c = CurveProjectiveConstraint::parabolic();
        let d = init_on(&mut c, DofType::Vec3, &[9.0; 6], &parabolic_attrs());
        assert!(d.is_empty(), "{d:?}");
        let at = |c: &mut CurveProjectiveConstraint, t: f64| {
            c.set_time(t);
            let mut x = vec![9.0; 6];
            c.project_position(&mut x);
            assert_eq!(&x[..3], &[9.0; 3], "only the listed point moves");
            [x[3], x[4], x[5]]
        };
        assert!(close(&at(&mut c, 0.5), &P1, 1e-12));
        assert!(close(&at(&mut c, 1.5), &P3, 1e-12));
        // P2 is reached when x (proportional to time) reaches its projection on P1→P3
        let s2 = {
            let e13: Vec<f64> = (0..3).map(|k| P3[k] - P1[k]).collect();
            let e12: Vec<f64> = (0..3).map(|k| P2[k] - P1[k]).collect();
            let dot: f64 = (0..3).map(|k| e12[k] * e13[k]).sum();
            dot / e13.iter().map(|v| v * v).sum::<f64>()
        };
        assert!(close(&at(&mut c, 0.5 + s2), &P2, 1e-12));
        for t in [0.6, 1.0, 1.37] {
            assert!(close(&at(&mut c, t), &lagrange(t - 0.5), 1e-12), "t = {t}");
        }
        // outside the window the point is free
        for t in [0.0, 0.49, 1.51, 3.0] {
            c.set_time(t);
            let mut x = vec![9.0; 6];
            c.project_position(&mut x);
            c.project_velocity(&mut x);
            c.project_response(&mut x);
            assert_eq!(x, [9.0; 6], "t = {t}");
        }
    }

    #[test]
    fn parabolic_velocity_is_the_displacement_over_the_next_step() {
        let mut c = CurveProjectiveConstraint::parabolic();
        assert!(init_on(&mut c, DofType::Vec3, &[0.0; 6], &parabolic_attrs()).is_empty());
        let dt = 0.01;
        for t in [0.5, 0.93, 1.5] {
            c.set_time(t);
            let mut v = vec![7.0; 6];
            c.project_velocity(&mut v);
            let (a, b) = (lagrange(t - 0.5), lagrange(t + dt - 0.5));
            let expected: Vec<f64> = (0..3).map(|k| (b[k] - a[k]) / dt).collect();
            assert!(close(&v[3..], &expected, 1e-9), "t = {t}: {v:?}");
            assert_eq!(&v[..3], &[7.0; 3]);
            // within O(dt) of the curve's time derivative (the window lasts 1 s)
            let h = 1e-6;
            let (l, r) = (lagrange(t - 0.5 - h), lagrange(t - 0.5 + h));
            for k in 0..3 {
                assert!((v[3 + k] - (r[k] - l[k]) / (2.0 * h)).abs() < 0.2);
            }
            // and the chosen point's derivatives are zeroed
            let mut dx = vec![1.0; 6];
            c.project_response(&mut dx);
            assert_eq!(dx, [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
        }
    }

    #[test]
    fn parabolic_moves_rigid_centers_only() {
        let mut c = CurveProjectiveConstraint::parabolic();
        let q = rot(1, 0.4);
        let x0: Vec<f64> = [frame([0.0; 3], q), frame([0.0; 3], q)].concat();
        let d = init_on(&mut c, DofType::Rigid3, &x0, &parabolic_attrs());
        assert!(d.is_empty(), "{d:?}");
        c.set_time(1.0);
        let mut x = x0.clone();
        c.project_position(&mut x);
        let f = Rigid3Types::coords(&x);
        assert!(close(&f[1][..3], &lagrange(0.5), 1e-12));
        assert_eq!(&f[1][3..], &x0[10..], "the orientation is kept");
        assert_eq!(f[0], Rigid3Types::coords(&x0)[0]);
        let mut v = vec![3.0; 12];
        c.project_velocity(&mut v);
        assert_eq!(&v[9..], &[3.0; 3], "the angular velocity is kept");
        assert!(v[6..9].iter().any(|&w| w != 3.0));
        let mut dx = vec![1.0; 12];
        c.project_response(&mut dx);
        assert!(dx[6..].iter().all(|&w| w == 0.0) && dx[..6].iter().all(|&w| w == 1.0));
    }

    #[test]
    fn parabolic_bad_data_is_reported_and_does_nothing() {
        let check = |attrs: &[(&str, &str)], word: &str| {
            let mut c = CurveProjectiveConstraint::parabolic();
            let mut all = parabolic_attrs();
            all.extend_from_slice(attrs);
            let d = init_on(&mut c, DofType::Vec3, &[0.0; 6], &all);
            assert_eq!(errors_mentioning(&d, word), 1, "{word}: {d:?}");
            for t in [0.5, 1.0, 1.5] {
                c.set_time(t);
                let mut x = vec![2.0; 6];
                c.project_position(&mut x);
                c.project_velocity(&mut x);
                c.project_response(&mut x);
                assert_eq!(x, [2.0; 6]);
            }
        };
        check(&[("EndTime", "0.5")], "EndTime");
        check(&[("EndTime", "0.2")], "EndTime");
        check(&[("P2", "4 3 -2.5")], "aligned");
        check(&[("P2", "1 0 0")], "different");
        check(&[("P2", "2 -1 0")], "straight above");
        check(&[("P3", "nan 0 0")], "P3");
        // an index past the state is dropped, the others kept
        let mut c = CurveProjectiveConstraint::parabolic();
        let mut attrs = parabolic_attrs();
        attrs[0] = ("indices", "1 5");
        let d = init_on(&mut c, DofType::Vec3, &[0.0; 6], &attrs);
        assert_eq!(errors_mentioning(&d, "out of range"), 1, "{d:?}");
        c.set_time(0.5);
        let mut x = vec![0.0; 6];
        c.project_position(&mut x);
        assert!(close(&x[3..], &P1, 1e-12));
    }

    // --- HermiteSpline ---

    fn hermite_attrs() -> Vec<(&'static str, &'static str)> {
        vec![
            ("indices", "0"),
            ("BeginTime", "1"),
            ("EndTime", "3"),
            ("X0", "1 2 3"),
            ("dX0", "0 10 0"),
            ("X1", "5 0 -1"),
            ("dX1", "2 0 4"),
        ]
    }

    const X0: [f64; 3] = [1.0, 2.0, 3.0];
    const DX0: [f64; 3] = [0.0, 10.0, 0.0];
    const X1: [f64; 3] = [5.0, 0.0, -1.0];
    const DX1: [f64; 3] = [2.0, 0.0, 4.0];

    fn hermite_at(c: &mut CurveProjectiveConstraint, t: f64) -> ([f64; 3], [f64; 3]) {
        c.set_time(t);
        let mut x = vec![-1.0; 3];
        let mut v = vec![-1.0; 3];
        c.project_position(&mut x);
        c.project_velocity(&mut v);
        ([x[0], x[1], x[2]], [v[0], v[1], v[2]])
    }

    #[test]
    fn hermite_spline_positions_and_sofa_velocities() {
        let mut c = CurveProjectiveConstraint::hermite_spline();
        let d = init_on(&mut c, DofType::Vec3, &[0.0; 3], &hermite_attrs());
        assert!(d.is_empty(), "{d:?}");
        // ends: the control points, and SOFA's velocities there are the control tangents
        let (x, v) = hermite_at(&mut c, 1.0);
        assert!(close(&x, &X0, 1e-12) && close(&v, &DX0, 1e-12));
        let (x, v) = hermite_at(&mut c, 3.0);
        assert!(close(&x, &X1, 1e-12) && close(&v, &DX1, 1e-12));
        // middle: with the default pace (SX0 = SX1 = 0) s(½) = ½, where the spline is
        // (X0 + X1)/2 + (dX0 − dX1)/8
        let (x, _) = hermite_at(&mut c, 2.0);
        let mid: Vec<f64> = (0..3)
            .map(|k| (X0[k] + X1[k]) / 2.0 + (DX0[k] - DX1[k]) / 8.0)
            .collect();
        assert!(close(&x, &mid, 1e-12), "{x:?}");
        // SOFA's velocity is d/ds: times s'(u) / (EndTime − BeginTime) it is the time
        // derivative of the positions (default pace: s'(u) = 6u − 6u²)
        for t in [1.3, 2.0, 2.55] {
            let u: f64 = (t - 1.0) / 2.0;
            let (_, v) = hermite_at(&mut c, t);
            let h = 1e-6;
            let (l, _) = hermite_at(&mut c, t - h);
            let (r, _) = hermite_at(&mut c, t + h);
            let scale = (6.0 * u - 6.0 * u * u) / 2.0;
            for k in 0..3 {
                let dxdt = (r[k] - l[k]) / (2.0 * h);
                assert!((v[k] * scale - dxdt).abs() < 1e-6, "t = {t}");
            }
        }
        // response zeroed inside the window only; nothing outside
        let mut dx = vec![1.0; 3];
        c.set_time(2.9);
        c.project_response(&mut dx);
        assert_eq!(dx, [0.0; 3]);
        for t in [0.99, 3.01] {
            let (x, v) = hermite_at(&mut c, t);
            assert_eq!((x, v), ([-1.0; 3], [-1.0; 3]));
        }
    }

    #[test]
    fn hermite_spline_pace_uses_the_second_coordinates_of_sx0_sx1() {
        // SX0 = (1, 0), SX1 = (0, 2) (the SOFA example): s(u) = h01(u) + 2·h11(u) = u²
        let mut attrs = hermite_attrs();
        attrs.extend([("SX0", "1 0"), ("SX1", "0 2")]);
        let mut c = CurveProjectiveConstraint::hermite_spline();
        assert!(init_on(&mut c, DofType::Vec3, &[0.0; 3], &attrs).is_empty());
        let u: f64 = 0.3;
        let s = u * u;
        let h = [
            2.0 * s.powi(3) - 3.0 * s * s + 1.0,
            s.powi(3) - 2.0 * s * s + s,
            -2.0 * s.powi(3) + 3.0 * s * s,
            s.powi(3) - s * s,
        ];
        let expected: Vec<f64> = (0..3)
            .map(|k| h[0] * X0[k] + h[1] * DX0[k] + h[2] * X1[k] + h[3] * DX1[k])
            .collect();
        let (x, _) = hermite_at(&mut c, 1.0 + 2.0 * u);
        assert!(close(&x, &expected, 1e-12), "{x:?} vs {expected:?}");
        // the first coordinates do not matter
        let mut attrs2 = hermite_attrs();
        attrs2.extend([("SX0", "-7 0"), ("SX1", "3 2")]);
        let mut c2 = CurveProjectiveConstraint::hermite_spline();
        assert!(init_on(&mut c2, DofType::Vec3, &[0.0; 3], &attrs2).is_empty());
        assert_eq!(hermite_at(&mut c2, 1.6), hermite_at(&mut c, 1.6));
    }

    #[test]
    fn hermite_spline_on_rigid_and_bad_windows() {
        let mut c = CurveProjectiveConstraint::hermite_spline();
        let q = rot(0, 1.0);
        let x0 = frame([0.0; 3], q).to_vec();
        assert!(init_on(&mut c, DofType::Rigid3, &x0, &hermite_attrs()).is_empty());
        c.set_time(1.0);
        let mut x = x0.clone();
        c.project_position(&mut x);
        assert!(close(&x[..3], &X0, 1e-12) && x[3..] == x0[3..]);
        let mut v = vec![0.5; 6];
        c.project_velocity(&mut v);
        assert!(close(&v[..3], &DX0, 1e-12) && v[3..] == [0.5; 3]);
        // EndTime at or before BeginTime (SOFA's defaults are both 0)
        for end in ["1", "0"] {
            let mut c = CurveProjectiveConstraint::hermite_spline();
            let mut attrs = hermite_attrs();
            attrs.push(("EndTime", end));
            let d = init_on(&mut c, DofType::Vec3, &[4.0; 3], &attrs);
            assert_eq!(errors_mentioning(&d, "EndTime"), 1, "{d:?}");
            let (x, v) = hermite_at(&mut c, 1.0);
            assert_eq!((x, v), ([-1.0; 3], [-1.0; 3]));
        }
        let mut c = CurveProjectiveConstraint::hermite_spline();
        let d = init_on(&mut c, DofType::Vec3, &[4.0; 3], &[]);
        assert_eq!(errors_mentioning(&d, "EndTime"), 1, "the defaults: {d:?}");
    }

    // --- Direction ---

    #[test]
    fn direction_keeps_points_on_their_line_and_projects_derivatives() {
        let mut c = DirectionProjectiveConstraint::new();
        let x0 = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, -1.0, 0.5];
        let attrs = [("indices", "0 2"), ("direction", "0.5 0.5 0")];
        let d = init_on(&mut c, DofType::Vec3, &x0, &attrs);
        assert!(d.is_empty(), "{d:?}");
        let n = [0.5f64.sqrt(), 0.5f64.sqrt(), 0.0];
        // derivatives keep their component along the direction; point 1 is free
        let mut dx = vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0, -4.0, 1.0, 7.0];
        c.project_response(&mut dx);
        assert!(close(
            &dx,
            &[1.5, 1.5, 0.0, 1.0, 2.0, 3.0, -1.5, -1.5, 0.0],
            1e-12
        ));
        let mut v = vec![0.0, 3.0, 1.0, 9.0, 9.0, 9.0, 0.0, 0.0, 1.0];
        c.project_velocity(&mut v);
        assert!(close(
            &v,
            &[1.5, 1.5, 0.0, 9.0, 9.0, 9.0, 0.0, 0.0, 0.0],
            1e-12
        ));
        // positions go back onto the line through their initial positions
        let mut x = vec![3.0, 1.0, 4.0, 5.0, 5.0, 5.0, 2.0, 0.0, -3.0];
        c.project_position(&mut x);
        assert_eq!(&x[3..6], &[5.0, 5.0, 5.0]);
        for (p, o, moved) in [
            (0, [0.0, 0.0, 0.0], [3.0, 1.0, 4.0]),
            (2, [2.0, -1.0, 0.5], [2.0, 0.0, -3.0]),
        ] {
            let r: Vec<f64> = (0..3).map(|k| x[3 * p + k] - o[k]).collect();
            // on the line: r parallel to n …
            let cross = [
                r[1] * n[2] - r[2] * n[1],
                r[2] * n[0] - r[0] * n[2],
                r[0] * n[1] - r[1] * n[0],
            ];
            assert!(close(&cross, &[0.0; 3], 1e-12), "{r:?}");
            // … where the moved point projects
            let along: f64 = (0..3).map(|k| (moved[k] - o[k]) * n[k]).sum();
            let got: f64 = (0..3).map(|k| r[k] * n[k]).sum();
            assert!((along - got).abs() < 1e-12);
        }
        assert!(c.fixed_scalar_dofs(3).is_empty());
    }

    #[test]
    fn direction_on_vec2_defaults_and_bad_input() {
        // Vec2: the first two numbers of the direction
        let mut c = DirectionProjectiveConstraint::new();
        let d = init_on(
            &mut c,
            DofType::Vec2,
            &[1.0, 1.0, 0.0, 0.0],
            &[("direction", "0 2"), ("indices", "0")],
        );
        assert!(d.is_empty(), "{d:?}");
        let mut x = vec![4.0, 3.0, 8.0, 8.0];
        c.project_position(&mut x);
        assert_eq!(x, [1.0, 3.0, 8.0, 8.0]);
        let mut dx = vec![5.0, -2.0, 1.0, 1.0];
        c.project_response(&mut dx);
        assert_eq!(dx, [0.0, -2.0, 1.0, 1.0]);
        // SOFA's default: point 0, zero direction: held where it started (reported)
        let mut c = DirectionProjectiveConstraint::new();
        let d = init_on(&mut c, DofType::Vec3, &[1.0, 2.0, 3.0, 0.0, 0.0, 0.0], &[]);
        assert_eq!(d.len(), 1);
        assert!(d
            .iter()
            .all(|d| d.severity == Severity::Warning && d.message.contains("zero")));
        let mut x = vec![7.0; 6];
        c.project_position(&mut x);
        assert_eq!(x, [1.0, 2.0, 3.0, 7.0, 7.0, 7.0]);
        let mut v = vec![7.0; 6];
        c.project_velocity(&mut v);
        assert_eq!(v, [0.0, 0.0, 0.0, 7.0, 7.0, 7.0]);
        // an index past the state is reported and dropped
        let mut c = DirectionProjectiveConstraint::new();
        let d = init_on(
            &mut c,
            DofType::Vec3,
            &[0.0; 6],
            &[("indices", "1 4"), ("direction", "1 0 0")],
        );
        assert_eq!(errors_mentioning(&d, "out of range"), 1, "{d:?}");
        let mut dx = vec![1.0; 6];
        c.project_response(&mut dx);
        assert_eq!(dx, [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
        // non-finite or short directions refuse the constraint
        for dir in ["1 nan 0", "1 0"] {
            let mut c = DirectionProjectiveConstraint::new();
            let d = init_on(&mut c, DofType::Vec3, &[0.0; 3], &[("direction", dir)]);
            assert_eq!(errors_mentioning(&d, "direction"), 1, "{dir}: {d:?}");
            let mut x = vec![1.0, 2.0, 3.0];
            c.project_position(&mut x);
            c.project_response(&mut x);
            assert_eq!(x, [1.0, 2.0, 3.0]);
        }
        // a state of another type
        let mut c = DirectionProjectiveConstraint::new();
        let d = init_on(
            &mut c,
            DofType::Rigid3,
            &frame([0.0; 3], Quaternion::identity()),
            &[],
        );
        assert_eq!(errors_mentioning(&d, "Rigid3d"), 1, "{d:?}");
    }
}
