//! EllipsoidForceField: an axis-aligned ellipsoid pushes the points inside it out (or pulls
//! those outside in), with SOFA's approximate tangent.

use super::{coefficient_edit, dot, non_negative, point, read_point, vec_state};
use canape_core::component::{ForceField, Reaction};
use canape_core::data::{
    base_fields, ChangedData, DataKind, DataTable, ForceFieldData, Real, Reals, Words,
};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;

canape_core::data_schema! {
    /// EllipsoidForceField's own Data (after the force-field Data).
    pub struct EllipsoidForceFieldData {
        center: Reals = ("center", DataKind::Reals(0), "0 0 0", "ellipsoid center"),
        vradius: Reals = ("vradius", DataKind::Reals(0), "0 0 0", "ellipsoid radius"),
        stiffness: Real = ("stiffness", DataKind::Real, "500", "force stiffness (positive to repulse outward, negative inward)"),
        damping: Real = ("damping", DataKind::Real, "5", "force damping"),
        color: Words = ("color", DataKind::Words, "0 0.5 1 1", "ellipsoid color. (default=0,0.5,1.0,1.0)"),
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
    /// Typed handles to the Data in `data`.
    ff: ForceFieldData,
    d: EllipsoidForceFieldData,
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
        let (data, ff) = ForceFieldData::declare(base_fields(DataTable::new()));
        let (data, d) = EllipsoidForceFieldData::declare(data);
        EllipsoidForceField {
            data,
            ff,
            d,
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
        let (t, d) = (&self.data, self.d);
        let center = if t.was_set(d.center) {
            read_point(t, d.center, dims, ctx)
        } else {
            Some([0.0; 3])
        };
        let radii = if t.was_set(d.vradius) {
            read_point(t, d.vradius, dims, ctx)
        } else {
            ctx.error(format!(
                "vradius is not given: the ellipsoid needs {dims} radii (SOFA's default is 0, no ellipsoid)"
            ));
            None
        };
        let stiffness = t.get(d.stiffness);
        let stiffness = if stiffness.is_finite() {
            stiffness
        } else {
            ctx.warn(format!(
                "stiffness {stiffness} is not finite: the default 500 is used"
            ));
            500.0
        };
        if stiffness == 0.0 {
            ctx.warn("stiffness 0: no point is ever in contact");
        }
        let damping = non_negative(t, d.damping, 5.0, ctx);
        self.rayleigh = t.get(self.ff.rayleigh_stiffness);
        self.stiffness = stiffness;
        self.damping = damping;
        let (Some(center), Some(radii)) = (center, radii) else {
            return;
        };
        if radii[..dims].contains(&0.0) {
            ctx.error(format!(
                "vradius '{}' has a zero radius: the ellipsoid pushes nothing",
                self.data.fields()[self.d.vradius.index()].value
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

impl EllipsoidForceField {
    /// Edits of stiffness and damping act in place on an active ellipsoid (as init would take
    /// them: the contacts are forgotten); a value init would warn about (a stiffness not
    /// finite or zero, a damping outside [0, +∞[) and other Data go through init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let edited = (self.active, (self.d.stiffness, self.d.damping));
        let state = (&mut self.stiffness, &mut self.damping, &mut self.contacts);
        let ok = |k: f64| k.is_finite() && k != 0.0;
        coefficient_edit((&self.data, changed), edited, ok, state)
    }
}

impl_component!(
    EllipsoidForceField,
    "EllipsoidForceField",
    init,
    data_changed
);

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
