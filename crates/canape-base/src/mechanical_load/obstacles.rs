//! Penalty obstacles of a single state (Sofa/Component/MechanicalLoad): SphereForceField,
//! EllipsoidForceField and ConicalForceField. Each pushes the points of its context state that
//! are on the wrong side of a fixed shape back to it with a stiffness and a damping, and keeps
//! the contacts found by the last `add_force`: the tangent (`add_dforce`, `add_k_to_matrix`)
//! acts on those points only, with the matrix SOFA uses (the exact derivative for the sphere,
//! SOFA's approximations for the ellipsoid and the cone: see each type).
//!
//! SOFA instantiates SphereForceField and EllipsoidForceField on Vec1, Vec2 and Vec3
//! ([`vec_template`]) and ConicalForceField on Vec3 only. A point exactly at the centre of the
//! sphere or of the ellipsoid has no direction to be pushed along: SOFA computes NaN there, we
//! leave the point alone.
//!
//! Invalid shapes (a radius ≤ 0, a centre that is not finite or has the wrong number of values,
//! a zero cone height, an angle outside ]0, 180[) are errors and leave the component without
//! effect; a negative stiffness (sphere, cone) or damping is replaced by SOFA's default with a
//! warning.

use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::DofType;

/// The template check of SphereForceField and EllipsoidForceField (and of ConicalForceField
/// with `vec3` set): SOFA instantiates them on Vec1, Vec2 and Vec3 (the cone on Vec3 alone).
pub fn vec_template(template: &str, class: &str, vec3: bool) -> Result<(), String> {
    let first = template.split(',').next().unwrap_or("");
    let supported = if vec3 {
        "Vec3d"
    } else {
        "Vec1d, Vec2d or Vec3d"
    };
    match DofType::from_template(first) {
        Some(DofType::Vec3) => Ok(()),
        Some(DofType::Vec1 | DofType::Vec2) if !vec3 => Ok(()),
        Some(d) => Err(format!(
            "template '{template}' ({}) is not supported by {class}: SOFA defines it on {supported}",
            d.name()
        )),
        None => Err(format!(
            "unknown template '{template}' ({class} is defined on {supported})"
        )),
    }
}

/// The spatial dimension of the context state, which must be Vec1, Vec2 or Vec3 (Vec3 alone
/// with `vec3`); None (reported) otherwise.
fn vec_state(ctx: &mut InitContext<'_>, class: &str, vec3: bool) -> Option<usize> {
    let Some(st) = ctx.state() else {
        ctx.error("no MechanicalObject in the context");
        return None;
    };
    let dims = match st.dof {
        DofType::Vec1 if !vec3 => 1,
        DofType::Vec2 if !vec3 => 2,
        DofType::Vec3 => 3,
        d => {
            let supported = if vec3 { "Vec3" } else { "Vec1, Vec2 or Vec3" };
            ctx.error(format!(
                "{class} acts on {supported} states ({} given)",
                d.name()
            ));
            return None;
        }
    };
    Some(dims)
}

/// Data `name` as a point of `dims` finite numbers; None (reported) otherwise.
fn read_point(
    data: &DataTable,
    name: &str,
    dims: usize,
    ctx: &mut InitContext<'_>,
) -> Option<[f64; 3]> {
    let v = data.reals(name);
    if v.len() != dims || v.iter().any(|c| !c.is_finite()) {
        ctx.error(format!(
            "{name} '{}' needs {dims} finite number{} for this state ({} given)",
            data.value(name).map(|v| v.to_string()).unwrap_or_default(),
            if dims > 1 { "s" } else { "" },
            v.len()
        ));
        return None;
    }
    let mut p = [0.0; 3];
    p[..dims].copy_from_slice(v);
    Some(p)
}

/// A finite non-negative coefficient, or `default` with a warning.
fn non_negative(data: &DataTable, name: &str, default: f64, ctx: &mut InitContext<'_>) -> f64 {
    let v = data.real(name);
    if v >= 0.0 && v.is_finite() {
        v
    } else {
        ctx.warn(format!(
            "{name} {v} is outside [0, +∞[: the default {default} is used"
        ));
        default
    }
}

/// SOFA's `localRange` (first and last index, −1 for no bound) as a half-open index range.
fn local_range(data: &DataTable) -> (usize, usize) {
    let r = data.reals("localRange");
    let mut range = (0, usize::MAX);
    if r.len() == 2 {
        if r[0] >= 0.0 {
            range.0 = r[0] as usize;
        }
        if r[1] >= 0.0 {
            range.1 = r[1] as usize + 1;
        }
    }
    range
}

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn scale(a: &[f64; 3], s: f64) -> [f64; 3] {
    [a[0] * s, a[1] * s, a[2] * s]
}

/// Point `i` of a flat buffer of `dims` values per point, padded with zeros to 3.
fn point(x: &[f64], i: usize, dims: usize) -> [f64; 3] {
    let mut p = [0.0; 3];
    p[..dims].copy_from_slice(&x[dims * i..dims * (i + 1)]);
    p
}

#[derive(Clone, Copy, Debug)]
struct SphereContact {
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
    contacts: Vec<SphereContact>,
}

impl Default for SphereForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl SphereForceField {
    pub fn new() -> Self {
        let data = canape_core::data::force_field_fields(DataTable::new())
            .with("center", DataKind::Reals(0), "0 0 0", "sphere center")
            .with("radius", DataKind::Real, "1", "sphere radius")
            .with("stiffness", DataKind::Real, "500", "force stiffness")
            .with("damping", DataKind::Real, "5", "force damping")
            .with("color", DataKind::Words, "0 0 1 1", "sphere color. (default=[0,0,1,1])")
            .with("localRange", DataKind::Reals(0), "-1 -1", "optional range of local DOF indices. Any computation involving only indices outside of this range are discarded (useful for parallelization using mesh partitionning)")
            .with("bilateral", DataKind::Bool, "0", "if true the sphere force field is applied on both sides");
        SphereForceField {
            data,
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
        let center = if self.data.is_set("center") {
            read_point(&self.data, "center", dims, ctx)
        } else {
            Some([0.0; 3])
        };
        let radius = self.data.real("radius");
        let radius_ok = radius > 0.0 && radius.is_finite();
        if !radius_ok {
            ctx.error(format!(
                "radius {radius} must be a positive number: the sphere pushes nothing"
            ));
        }
        self.stiffness = non_negative(&self.data, "stiffness", 500.0, ctx);
        self.damping = non_negative(&self.data, "damping", 5.0, ctx);
        self.bilateral = self.data.bool("bilateral");
        self.range = local_range(&self.data);
        self.rayleigh = self.data.real("rayleighStiffness");
        let Some(center) = center else {
            return;
        };
        self.center = center;
        self.radius = radius;
        self.active = radius_ok;
    }
}

impl_component!(SphereForceField, "SphereForceField", init);

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

#[derive(Clone, Copy, Debug)]
struct EllipsoidContact {
    index: usize,
    /// SOFA's df/dx of the contact (rows and columns beyond the dimension are zero).
    m: [[f64; 3]; 3],
}

/// EllipsoidForceField (Sofa/Component/MechanicalLoad/.../EllipsoidForceField.inl): an
/// axis-aligned ellipsoid (`center`, radii `vradius`) pushes the points inside it out
/// (`stiffness` > 0) or pulls the points outside it in (`stiffness` < 0). With
/// s = Σ (x − c)ⱼ²/rⱼ², a point is in contact when (s − 1)·k < 0; then, with ν = √s − 1 and
/// g = ((x − c)ⱼ/rⱼ²) (half the gradient of s):
///
/// f = −|k|·ν·g/|g| − damping·|ν|·v
///
/// SOFA's stiffness for the contact, used as is by `add_dforce` and `add_k_to_matrix`:
///
/// Kᵢⱼ = −|k|·[ gᵢgⱼ/(√s·|g|) + ν·δᵢⱼ/(rᵢ²·|g|) + ν·gᵢgⱼ/(rⱼ²·|g|²) ]
///
/// The exact derivative of the elastic force has −ν·gᵢgⱼ/(rⱼ²·|g|³) as its last term (opposite
/// sign, |g|³): SOFA's matrix differs from it by that term (not symmetric either when the radii
/// differ), and we keep SOFA's so as to give its results. The damping's dependence on x is left
/// out and there is no damping matrix, as in SOFA. The radii enter squared: a negative radius
/// acts as its magnitude (reported).
#[derive(Clone)]
pub struct EllipsoidForceField {
    data: DataTable,
    dims: usize,
    center: [f64; 3],
    inv_r2: [f64; 3],
    stiffness: f64,
    damping: f64,
    rayleigh: f64,
    active: bool,
    contacts: Vec<EllipsoidContact>,
}

impl Default for EllipsoidForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl EllipsoidForceField {
    pub fn new() -> Self {
        let data = canape_core::data::force_field_fields(DataTable::new())
            .with("center", DataKind::Reals(0), "0 0 0", "ellipsoid center")
            .with("vradius", DataKind::Reals(0), "0 0 0", "ellipsoid radius")
            .with(
                "stiffness",
                DataKind::Real,
                "500",
                "force stiffness (positive to repulse outward, negative inward)",
            )
            .with("damping", DataKind::Real, "5", "force damping")
            .with(
                "color",
                DataKind::Words,
                "0 0.5 1 1",
                "ellipsoid color. (default=0,0.5,1.0,1.0)",
            );
        EllipsoidForceField {
            data,
            dims: 3,
            center: [0.0; 3],
            inv_r2: [1.0; 3],
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
        let Some(dims) = vec_state(ctx, "EllipsoidForceField", false) else {
            return;
        };
        self.dims = dims;
        let center = if self.data.is_set("center") {
            read_point(&self.data, "center", dims, ctx)
        } else {
            Some([0.0; 3])
        };
        let radii = if self.data.is_set("vradius") {
            read_point(&self.data, "vradius", dims, ctx)
        } else {
            ctx.error(format!(
                "vradius is not given: the ellipsoid needs {dims} radii (SOFA's default is 0, no ellipsoid)"
            ));
            None
        };
        let stiffness = self.data.real("stiffness");
        self.stiffness = if stiffness.is_finite() {
            stiffness
        } else {
            ctx.warn(format!(
                "stiffness {stiffness} is not finite: the default 500 is used"
            ));
            500.0
        };
        if self.stiffness == 0.0 {
            ctx.warn("stiffness 0: no point is ever in contact");
        }
        self.damping = non_negative(&self.data, "damping", 5.0, ctx);
        self.rayleigh = self.data.real("rayleighStiffness");
        let (Some(center), Some(radii)) = (center, radii) else {
            return;
        };
        if radii[..dims].contains(&0.0) {
            ctx.error(format!(
                "vradius '{}' has a zero radius: the ellipsoid pushes nothing",
                self.data
                    .value("vradius")
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            ));
            return;
        }
        if radii[..dims].iter().any(|&r| r < 0.0) {
            ctx.warn("vradius has negative radii: their magnitudes are used (SOFA squares them)");
        }
        self.center = center;
        self.inv_r2 = [1.0; 3];
        for j in 0..dims {
            self.inv_r2[j] = 1.0 / (radii[j] * radii[j]);
        }
        if self.inv_r2.iter().any(|v| !v.is_finite()) {
            ctx.error("vradius is too small: 1/r² overflows");
            return;
        }
        self.active = true;
    }
}

impl_component!(EllipsoidForceField, "EllipsoidForceField", init);

impl ForceField for EllipsoidForceField {
    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]) {
        self.contacts.clear();
        if !self.active {
            return;
        }
        let d = self.dims;
        let n = x.len() / d;
        let kabs = self.stiffness.abs();
        let ir = self.inv_r2;
        for i in 0..n {
            let p = point(x, i, d);
            let mut dp = [0.0; 3];
            let mut s = 0.0;
            for j in 0..d {
                dp[j] = p[j] - self.center[j];
                s += dp[j] * dp[j] * ir[j];
            }
            if (s - 1.0) * self.stiffness >= 0.0 {
                continue;
            }
            let norm = s.sqrt();
            let nu = norm - 1.0;
            let g = [dp[0] * ir[0], dp[1] * ir[1], dp[2] * ir[2]];
            let gn2 = dot(&g, &g);
            let gn = gn2.sqrt();
            if gn == 0.0 {
                continue;
            }
            let elastic = -kabs * nu / gn;
            let viscous = self.damping * nu.abs();
            for j in 0..d {
                f[d * i + j] += g[j] * elastic - v[d * i + j] * viscous;
            }
            let (a, b, c) = (-kabs / (norm * gn), -kabs * nu / gn, -kabs * nu / gn2);
            let mut m = [[0.0; 3]; 3];
            for r in 0..d {
                for q in 0..d {
                    m[r][q] = g[r] * g[q] * (a + c * ir[q]);
                }
                m[r][r] += b * ir[r];
            }
            self.contacts.push(EllipsoidContact { index: i, m });
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let d = self.dims;
        for c in &self.contacts {
            let du = point(dx, c.index, d);
            for r in 0..d {
                df[d * c.index + r] += dot(&c.m[r], &du) * k_factor;
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        let d = self.dims;
        for c in &self.contacts {
            let o = offset + d * c.index;
            for r in 0..d {
                for q in 0..d {
                    m.add(o + r, o + q, c.m[r][q] * k_factor);
                }
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}

#[derive(Clone, Copy, Debug)]
struct ConeContact {
    index: usize,
    normal: [f64; 3],
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
    contacts: Vec<ConeContact>,
}

impl Default for ConicalForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl ConicalForceField {
    pub fn new() -> Self {
        let data = canape_core::data::force_field_fields(DataTable::new())
            .with("coneCenter", DataKind::Reals(0), "0 0 0", "cone center")
            .with("coneHeight", DataKind::Reals(0), "0 0 0", "cone height")
            .with("coneAngle", DataKind::Real, "10", "cone angle")
            .with("stiffness", DataKind::Real, "500", "force stiffness")
            .with("damping", DataKind::Real, "5", "force damping")
            .with(
                "color",
                DataKind::Words,
                "0 0 1 1",
                "cone color. (default=0.0,0.0,0.0,1.0,1.0)",
            );
        ConicalForceField {
            data,
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
        let center = if self.data.is_set("coneCenter") {
            read_point(&self.data, "coneCenter", 3, ctx)
        } else {
            Some([0.0; 3])
        };
        let height = read_point(&self.data, "coneHeight", 3, ctx);
        let angle = self.data.real("coneAngle");
        let angle_ok = angle > 0.0 && angle < 180.0;
        if !angle_ok {
            ctx.error(format!(
                "coneAngle {angle} must be in ]0, 180[ degrees: the cone holds nothing"
            ));
        }
        self.stiffness = non_negative(&self.data, "stiffness", 500.0, ctx);
        self.damping = non_negative(&self.data, "damping", 5.0, ctx);
        self.rayleigh = self.data.real("rayleighStiffness");
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

impl_component!(ConicalForceField, "ConicalForceField", init);

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

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::diag::{Diagnostics, Severity};
    use canape_core::scene::{AnyComponent, Scene};
    use canape_core::state::{MechanicalObject, VecId};

    /// Set `attrs` on `ff`, put it with a state of `dof` at positions `x` in a one-node scene
    /// and run its init; the diagnostics.
    fn init_on<F: ForceField + Clone + 'static>(
        ff: &mut F,
        dof: DofType,
        x: &[f64],
        attrs: &[(&str, &str)],
    ) -> Diagnostics {
        for (k, v) in attrs {
            ff.data_mut().set_str(k, v).unwrap();
        }
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut mo = MechanicalObject::new(dof);
        mo.resize(x.len() / dof.coord_size());
        mo.vec_mut(VecId::POSITION).copy_from_slice(x);
        scene.add_component(root, "dofs", AnyComponent::State(mo), None);
        let id = scene.add_component(
            root,
            "obstacle",
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

    fn count(d: &Diagnostics, s: Severity) -> usize {
        d.iter().filter(|x| x.severity == s).count()
    }

    fn force<F: ForceField>(ff: &mut F, x: &[f64], v: &[f64]) -> Vec<f64> {
        let mut f = vec![0.0; x.len()];
        ff.add_force(x, v, &mut f);
        f
    }

    fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(p, q)| (p - q).abs() <= tol)
    }

    /// The assembled k_factor·K, dense.
    fn assembled<F: ForceField>(ff: &F, n: usize, k_factor: f64) -> Vec<Vec<f64>> {
        let mut tr = canape_core::matrix::Triplets::new(n);
        ff.add_k_to_matrix(&mut tr, k_factor, 0);
        let mut k = vec![vec![0.0; n]; n];
        for &(r, c, v) in &tr.entries {
            k[r as usize][c as usize] += v;
        }
        k
    }

    /// Assembled and matrix-free tangents agree on a few vectors (after `add_force` at x).
    fn check_assembly<F: ForceField>(ff: &mut F, x: &[f64]) {
        let n = x.len();
        force(ff, x, &vec![0.0; n]);
        let k = assembled(ff, n, 2.5);
        assert!(k.iter().flatten().any(|v| *v != 0.0), "no stiffness at all");
        for s in 0..3 {
            let dx: Vec<f64> = (0..n)
                .map(|i| ((i * 7 + s * 3) % 5) as f64 * 0.3 - 0.6)
                .collect();
            let mut df = vec![0.0; n];
            ff.add_dforce(&dx, &mut df, 2.5);
            let kd: Vec<f64> = (0..n)
                .map(|i| (0..n).map(|j| k[i][j] * dx[j]).sum())
                .collect();
            assert!(close(&kd, &df, 1e-9), "{kd:?} vs {df:?}");
        }
    }

    /// ∂f/∂x by central differences of `add_force` (zero velocities), column by column.
    fn finite_differences<F: ForceField>(ff: &mut F, x: &[f64]) -> Vec<Vec<f64>> {
        let n = x.len();
        let h = 1e-6;
        let mut k = vec![vec![0.0; n]; n];
        for j in 0..n {
            let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
            xp[j] += h;
            xm[j] -= h;
            let fp = force(ff, &xp, &vec![0.0; n]);
            let fm = force(ff, &xm, &vec![0.0; n]);
            for i in 0..n {
                k[i][j] = (fp[i] - fm[i]) / (2.0 * h);
            }
        }
        force(ff, x, &vec![0.0; n]);
        k
    }

    /// The tangent `add_dforce` applies (k_factor 1), as a dense matrix.
    fn tangent<F: ForceField>(ff: &mut F, n: usize) -> Vec<Vec<f64>> {
        let mut k = vec![vec![0.0; n]; n];
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            let mut df = vec![0.0; n];
            ff.add_dforce(&e, &mut df, 1.0);
            for i in 0..n {
                k[i][j] = df[i];
            }
        }
        k
    }

    fn sphere(dof: DofType, x: &[f64], attrs: &[(&str, &str)]) -> SphereForceField {
        let mut s = SphereForceField::new();
        let d = init_on(&mut s, dof, x, attrs);
        assert!(d.is_empty(), "{d:?}");
        s
    }

    #[test]
    fn sphere_pushes_out_the_points_inside_with_sofas_law() {
        let attrs = [
            ("center", "1 2 3"),
            ("radius", "2"),
            ("stiffness", "100"),
            ("damping", "3"),
        ];
        // point 0 at 1.5 from the centre along (0.6, 0.8, 0), point 1 at 2.5 along z
        let x = [1.9, 3.2, 3.0, 1.0, 2.0, 5.5];
        let v = [1.0, -2.0, 0.5, 0.0, 0.0, 1.0];
        let mut s = sphere(DofType::Vec3, &x, &attrs);
        let f = force(&mut s, &x, &v);
        // δ = −0.5: −k·δ·n = (30, 40, 0); damping·δ·v = −1.5·v
        let want = [30.0 - 1.5, 40.0 + 3.0, -0.75, 0.0, 0.0, 0.0];
        assert!(close(&f, &want, 1e-12), "{f:?}");
        assert_eq!(s.contacts.len(), 1);
        // bilateral: the outside point is pulled back to the surface, and its damping term
        // (δ = +0.5) points along the velocity
        let mut attrs_b = attrs.to_vec();
        attrs_b.push(("bilateral", "1"));
        let mut s = sphere(DofType::Vec3, &x, &attrs_b);
        let f = force(&mut s, &x, &v);
        assert!(close(&f[3..], &[0.0, 0.0, -50.0 + 1.5], 1e-12), "{f:?}");
        // localRange keeps only the points in [1, 1]
        let y = [1.9, 3.2, 3.0, 1.9, 3.2, 3.0, 1.9, 3.2, 3.0];
        let mut attrs_r = attrs.to_vec();
        attrs_r.push(("localRange", "1 1"));
        let mut s = sphere(DofType::Vec3, &y, &attrs_r);
        let f = force(&mut s, &y, &[0.0; 9]);
        assert!(close(
            &f,
            &[0.0, 0.0, 0.0, 30.0, 40.0, 0.0, 0.0, 0.0, 0.0],
            1e-12
        ));
    }

    #[test]
    fn sphere_on_a_line_pushes_along_it() {
        // Vec1: the sphere is the segment [−1, 1]
        let x = [0.5, -0.25, 2.0];
        let mut s = sphere(
            DofType::Vec1,
            &x,
            &[("center", "0"), ("stiffness", "100"), ("damping", "0")],
        );
        let f = force(&mut s, &x, &[0.0; 3]);
        assert!(close(&f, &[50.0, -75.0, 0.0], 1e-12), "{f:?}");
    }

    #[test]
    fn sphere_tangent_is_the_exact_derivative_and_assembles_the_same() {
        let attrs = [
            ("center", "0.5 -0.2"),
            ("radius", "1.5"),
            ("stiffness", "80"),
        ];
        let x = [0.9, 0.4, 3.0, 0.0, 0.2, -1.0];
        let mut s = sphere(DofType::Vec2, &x, &attrs);
        check_assembly(&mut s, &x);
        let fd = finite_differences(&mut s, &x);
        assert_eq!(s.contacts.len(), 2);
        let k = tangent(&mut s, x.len());
        for i in 0..x.len() {
            assert!(
                close(&k[i], &fd[i], 1e-5),
                "row {i}: {:?} vs {:?}",
                k[i],
                fd[i]
            );
        }
        // and it has SOFA's form −k(φ n nᵀ + (1 − φ) I) (point 0: φ = r/|x − c|)
        let (dx, dy) = (0.4f64, 0.6f64);
        let r = (dx * dx + dy * dy).sqrt();
        let (nx, ny, phi) = (dx / r, dy / r, 1.5 / r);
        assert!((k[0][0] + 80.0 * (phi * nx * nx + 1.0 - phi)).abs() < 1e-12);
        assert!((k[0][1] + 80.0 * phi * nx * ny).abs() < 1e-12);
    }

    fn ellipsoid(dof: DofType, x: &[f64], attrs: &[(&str, &str)]) -> EllipsoidForceField {
        let mut e = EllipsoidForceField::new();
        let d = init_on(&mut e, dof, x, attrs);
        assert!(d.is_empty(), "{d:?}");
        e
    }

    #[test]
    fn ellipsoid_pushes_out_or_pulls_in_with_sofas_law() {
        let attrs = [
            ("center", "1 -1 0.5"),
            ("vradius", "2 1 1"),
            ("stiffness", "100"),
            ("damping", "2"),
        ];
        // point 0 at (1, 0.5, 0) from the centre (s = 0.5), point 1 at (0, 0, 1.2) (s = 1.44)
        let x = [2.0, -0.5, 0.5, 1.0, -1.0, 1.7];
        let v = [0.5, 0.0, -1.0, 0.0, 0.0, 0.0];
        let mut e = ellipsoid(DofType::Vec3, &x, &attrs);
        let f = force(&mut e, &x, &v);
        let nu = 0.5f64.sqrt() - 1.0;
        let gn = 0.3125f64.sqrt(); // |(1/4, 0.5/1, 0)|
        let want = [
            -100.0 * nu * 0.25 / gn - 2.0 * nu.abs() * 0.5,
            -100.0 * nu * 0.5 / gn,
            2.0 * nu.abs(),
            0.0,
            0.0,
            0.0,
        ];
        assert!(close(&f, &want, 1e-12), "{f:?} vs {want:?}");
        assert!((f[0] - 12.805_69).abs() < 1e-5 && (f[1] - 26.197_17).abs() < 1e-5);
        // negative stiffness: the outside point is pulled in (ν = 0.2, g along z), not the other
        let mut attrs_in = attrs.to_vec();
        attrs_in[2] = ("stiffness", "-100");
        let mut e = ellipsoid(DofType::Vec3, &x, &attrs_in);
        let f = force(&mut e, &x, &[0.0; 6]);
        assert!(close(&f, &[0.0, 0.0, 0.0, 0.0, 0.0, -20.0], 1e-12), "{f:?}");
        // Vec2: an ellipse
        let y = [0.5, 0.5];
        let mut e = ellipsoid(
            DofType::Vec2,
            &y,
            &[("center", "0 0"), ("vradius", "1 1"), ("damping", "0")],
        );
        let f = force(&mut e, &y, &[0.0; 2]);
        let r = 0.5f64.sqrt();
        let want = -500.0 * (r - 1.0) / r * 0.5;
        assert!(close(&f, &[want, want], 1e-12), "{f:?}");
    }

    #[test]
    fn ellipsoid_tangent_is_sofas_matrix_not_the_exact_derivative() {
        let attrs = [
            ("center", "0.1 0 -0.2"),
            ("vradius", "2 1 1.5"),
            ("stiffness", "80"),
        ];
        let x = [0.6, 0.3, 0.4, 3.0, 0.0, 0.0];
        let mut e = ellipsoid(DofType::Vec3, &x, &attrs);
        check_assembly(&mut e, &x);
        let fd = finite_differences(&mut e, &x);
        let k = tangent(&mut e, 6);
        // SOFA's matrix and the exact derivative, written out for point 0
        let dp = [0.5, 0.3, 0.6];
        let ir = [0.25, 1.0, 1.0 / 2.25];
        let s: f64 = (0..3).map(|j| dp[j] * dp[j] * ir[j]).sum();
        let (norm, nu) = (s.sqrt(), s.sqrt() - 1.0);
        let g: Vec<f64> = (0..3).map(|j| dp[j] * ir[j]).collect();
        let gn = g.iter().map(|c| c * c).sum::<f64>().sqrt();
        let mut largest_gap = 0.0f64;
        for i in 0..3 {
            for j in 0..3 {
                let first = g[i] * g[j] / (norm * gn);
                let diag = if i == j { nu * ir[i] / gn } else { 0.0 };
                let sofa = -80.0 * (first + diag + nu * g[i] * g[j] * ir[j] / (gn * gn));
                let exact = -80.0 * (first + diag - nu * g[i] * g[j] * ir[j] / gn.powi(3));
                assert!(
                    (k[i][j] - sofa).abs() < 1e-12,
                    "({i},{j}) {} vs {sofa}",
                    k[i][j]
                );
                assert!(
                    (fd[i][j] - exact).abs() < 1e-5,
                    "({i},{j}) {} vs {exact}",
                    fd[i][j]
                );
                largest_gap = largest_gap.max((sofa - exact).abs());
            }
        }
        // the difference is real, not round-off
        assert!(largest_gap > 1.0, "{largest_gap}");
        // the outside point has no stiffness
        assert!(k[3..].iter().flatten().all(|v| *v == 0.0));
    }

    fn cone(x: &[f64], attrs: &[(&str, &str)]) -> ConicalForceField {
        let mut c = ConicalForceField::new();
        let d = init_on(&mut c, DofType::Vec3, x, attrs);
        assert!(d.is_empty(), "{d:?}");
        c
    }

    const CONE: [(&str, &str); 5] = [
        ("coneCenter", "0 0 0"),
        ("coneHeight", "0 10 0"),
        ("coneAngle", "45"),
        ("stiffness", "100"),
        ("damping", "3"),
    ];

    #[test]
    fn cone_holds_the_points_inside_with_sofas_law() {
        // inside; beside the cone; behind the apex; beyond the cap
        let x = [0.5, 5.0, 0.2, 2.0, 1.0, 0.0, 0.0, -1.0, 1.0, 0.0, 12.0, 0.0];
        let v = [5.0, 5.0, 5.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        let mut c = cone(&x, &CONE);
        let f = force(&mut c, &x, &v);
        // beside: x′ = (1.5, 1.5, 0), k(x′ − x) = (−50, 50, 0); n = (−1, 1, 0)/√2, n·v = −1/√2,
        // −damping(n·v)n = (−1.5, 1.5, 0)
        // behind: −k·cp = (0, 100, −100)
        // beyond: δ = 2, −kδn = (0, −200, 0), damping·δ·v = (0, 6, 0): along the velocity
        let want = [
            0.0, 0.0, 0.0, -51.5, 51.5, 0.0, 0.0, 100.0, -100.0, 0.0, -194.0, 0.0,
        ];
        assert!(close(&f, &want, 1e-9), "{f:?}");
        assert_eq!(c.contacts.len(), 3);
        // a cone pointing elsewhere: apex (1, 1, 1), axis −z, the point below it is inside
        let y = [1.0, 1.2, -3.0, 1.0, 1.0, 2.0];
        let mut c = cone(
            &y,
            &[
                ("coneCenter", "1 1 1"),
                ("coneHeight", "0 0 -5"),
                ("damping", "0"),
            ],
        );
        let f = force(&mut c, &y, &[0.0; 6]);
        assert!(close(&f, &[0.0, 0.0, 0.0, 0.0, 0.0, -500.0], 1e-9), "{f:?}");
    }

    #[test]
    fn cone_tangent_is_sofas_normal_stiffness() {
        let x = [2.0, 1.0, 0.3, 0.0, -1.0, 1.0, 0.5, 12.0, 0.0, 0.5, 5.0, 0.2];
        let mut c = cone(&x, &CONE);
        check_assembly(&mut c, &x);
        let k = tangent(&mut c, 12);
        // −k n nᵀ for each contact, nothing on the inside point
        for ct in &c.contacts {
            let o = 3 * ct.index;
            for i in 0..3 {
                for j in 0..3 {
                    let want = -100.0 * ct.normal[i] * ct.normal[j];
                    assert!((k[o + i][o + j] - want).abs() < 1e-12);
                }
            }
        }
        assert!(k[9..].iter().flatten().all(|v| *v == 0.0));
        let n = c.contacts[0].normal;
        // the normal of the point beside the cone is ⟂ to the generator through x′ and in the
        // plane of the axis and x
        assert!(dot(&n, &cross(&[0.0, 1.0, 0.0], &[2.0, 1.0, 0.3])).abs() < 1e-12);
        // finite differences: along n, the same; along the azimuth, SOFA's tangent has nothing
        // while the force turns with the point
        let p = [2.0, 1.0, 0.3];
        let dforce_along = |c: &mut ConicalForceField, d: [f64; 3]| {
            let h = 1e-6;
            let mut xp = x.to_vec();
            let mut xm = x.to_vec();
            for q in 0..3 {
                xp[q] += h * d[q];
                xm[q] -= h * d[q];
            }
            let fp = force(c, &xp, &[0.0; 12]);
            let fm = force(c, &xm, &[0.0; 12]);
            force(c, &x, &[0.0; 12]);
            let fd: Vec<f64> = (0..3).map(|q| (fp[q] - fm[q]) / (2.0 * h)).collect();
            let mut e = vec![0.0; 12];
            e[..3].copy_from_slice(&d);
            let mut df = vec![0.0; 12];
            c.add_dforce(&e, &mut df, 1.0);
            (fd, df[..3].to_vec())
        };
        let (fd, df) = dforce_along(&mut c, n);
        assert!(close(&fd, &df, 1e-4), "{fd:?} vs {df:?}");
        assert!(close(&df, &scale(&n, -100.0), 1e-9));
        let t = cross(&[0.0, 1.0, 0.0], &p);
        let t = scale(&t, 1.0 / dot(&t, &t).sqrt());
        let (fd, df) = dforce_along(&mut c, t);
        assert!(df.iter().all(|v| v.abs() < 1e-12), "{df:?}");
        assert!(fd.iter().map(|v| v * v).sum::<f64>().sqrt() > 1.0, "{fd:?}");
    }

    #[test]
    fn bad_data_is_reported_and_leaves_the_component_inert() {
        let x = [0.1, 0.0, 0.0];
        let inert = |f: &mut dyn ForceField| {
            let mut out = vec![0.0; 3];
            f.add_force(&x, &[0.0; 3], &mut out);
            out == [0.0; 3]
        };
        let mut s = SphereForceField::new();
        let d = init_on(&mut s, DofType::Vec3, &x, &[("radius", "-1")]);
        assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
        assert!(inert(&mut s));
        let mut s = SphereForceField::new();
        let d = init_on(&mut s, DofType::Vec3, &x, &[("center", "1 2")]);
        assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
        assert!(d.iter().any(|m| m.message.contains("center")));
        assert!(inert(&mut s));
        let mut s = SphereForceField::new();
        let d = init_on(&mut s, DofType::Vec3, &x, &[("center", "0 nan 0")]);
        assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
        assert!(inert(&mut s));
        let mut s = SphereForceField::new();
        let d = init_on(&mut s, DofType::Rigid3, &[0.0; 7], &[]);
        assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
        // a negative stiffness falls back to the default 500, with a warning
        let mut s = SphereForceField::new();
        let d = init_on(
            &mut s,
            DofType::Vec3,
            &x,
            &[("stiffness", "-5"), ("damping", "0")],
        );
        assert_eq!(
            (count(&d, Severity::Warning), count(&d, Severity::Error)),
            (1, 0),
            "{d:?}"
        );
        let f = force(&mut s, &x, &[0.0; 3]);
        assert!(close(&f, &[500.0 * 0.9, 0.0, 0.0], 1e-9), "{f:?}");

        // the ellipsoid needs its radii, all non-zero
        let mut e = EllipsoidForceField::new();
        let d = init_on(&mut e, DofType::Vec3, &x, &[]);
        assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
        assert!(inert(&mut e));
        let mut e = EllipsoidForceField::new();
        let d = init_on(&mut e, DofType::Vec3, &x, &[("vradius", "1 0 1")]);
        assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
        assert!(inert(&mut e));
        let mut e = EllipsoidForceField::new();
        let d = init_on(&mut e, DofType::Vec3, &x, &[("vradius", "1 1")]);
        assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
        let mut e = EllipsoidForceField::new();
        let d = init_on(&mut e, DofType::Vec3, &x, &[("vradius", "-1 1 1")]);
        assert_eq!(
            (count(&d, Severity::Warning), count(&d, Severity::Error)),
            (1, 0),
            "{d:?}"
        );
        assert!(!inert(&mut e));

        // the cone needs its height and an angle in ]0, 180[, on Vec3
        let mut c = ConicalForceField::new();
        let d = init_on(&mut c, DofType::Vec3, &x, &[]);
        assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
        assert!(inert(&mut c));
        let mut c = ConicalForceField::new();
        let d = init_on(
            &mut c,
            DofType::Vec3,
            &x,
            &[("coneHeight", "0 1 0"), ("coneAngle", "0")],
        );
        assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
        assert!(inert(&mut c));
        let mut c = ConicalForceField::new();
        let d = init_on(&mut c, DofType::Vec2, &[0.0; 2], &[("coneHeight", "0 1 0")]);
        assert_eq!(count(&d, Severity::Error), 1, "{d:?}");
        let mut c = ConicalForceField::new();
        let d = init_on(&mut c, DofType::Vec3, &x, &[("coneHeight", "0 1 0")]);
        assert!(d.is_empty(), "{d:?}");
        assert!(!inert(&mut c), "the point (0.1, 0, 0) is beside the cone");
    }

    #[test]
    fn templates_are_sofas() {
        for t in ["", "Vec3d", "Vec2d", "Vec1d", "Vec3"] {
            assert!(vec_template(t, "SphereForceField", false).is_ok(), "{t}");
        }
        for t in ["Rigid3d", "Rigid2d", "Vec6d"] {
            let e = vec_template(t, "EllipsoidForceField", false).unwrap_err();
            assert!(e.contains("EllipsoidForceField"), "{e}");
        }
        assert!(vec_template("Vec3d", "ConicalForceField", true).is_ok());
        assert!(vec_template("Vec2d", "ConicalForceField", true).is_err());
    }
}
