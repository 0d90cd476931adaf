//! JointSpringForceField: springs between two Rigid3 frames (joints with free axes, angle limits
//! and damping), as SOFA formulates them
//! (Sofa/Component/SolidMechanics/Spring/.../JointSpringForceField.inl, JointSpring.inl).
//!
//! Per spring between frame a (object1) and frame b (object2), with R1 the rotation of a:
//! - translation: d = (c_b − c_a) − initTrans (world), f_T = R1 (K_T ⊙ R1ᵀ d) + kd (v_b − v_a);
//! - rotation: q_rel = normalise((q_a⁻¹ q_b) initRot), its rotation vector t (frame-a axes); the
//!   torque f_R0 depends on which axes are free (fixed joint, pivot about one axis within its
//!   limits, or the general case where a free axis beyond its limits is pulled back with
//!   `blocStiffnessRot`), then f_R = R1 f_R0 + kd (ω_b − ω_a);
//! - frame a receives (f_T, f_R), frame b the opposite (no lever arm, as in SOFA);
//! - tangent: the frozen-frame diagonal stiffness S = diag(R1 K_T R1ᵀ, R1 K_R R1ᵀ) of the last
//!   force evaluation, df_a = S (dx_b − dx_a), df_b = −df_a (damping not included, as SOFA).
//!
//! SOFA's text format and its quirks are kept, since SOFA's results are the reference: stiffness
//! and damping keys carry over from one spring to the next when omitted; the rest pose is
//! recomputed from the initial positions only when `REST_T` is given (then both REST_T and
//! REST_R are replaced), with initRot = q_b q_a⁻¹. SOFA assembles no matrix for this force
//! field; assembled solvers here get the same S blocks as the matrix-free products.

use crate::spring::PairEnds;
use canape_core::component::{ForceField, Interaction, Reaction};
use canape_core::data::{
    base_fields, ChangedData, DataKind, DataTable, Flag, ForceFieldData, Real, Text,
};
use canape_core::matrix::MatrixSink;
use canape_core::scene::{ComponentId, InitContext};
use canape_core::state::VecId;
use canape_types::dof::quat_of;
use canape_types::{DataTypes, DofType, Mat3, Rigid3Types, Vec3};
use nalgebra::Quaternion;
use std::f64::consts::PI;

#[derive(Clone, Debug)]
struct JointSpring {
    m1: usize,
    m2: usize,
    soft_t: f64,
    hard_t: f64,
    soft_r: f64,
    hard_r: f64,
    bloc_r: f64,
    kd: f64,
    /// (xmin, xmax, ymin, ymax, zmin, zmax), radians.
    limits: [f64; 6],
    /// Tx Ty Tz Rx Ry Rz: true when free.
    free: [bool; 6],
    init_trans: Vec3,
    init_rot: Quaternion<f64>,
    need_init: bool,
    /// From the last force evaluation: frame a's rotation and the stiffness per axis.
    r1: Mat3,
    kt: Vec3,
    kr: Vec3,
}

impl Default for JointSpring {
    fn default() -> Self {
        JointSpring {
            m1: 0,
            m2: 0,
            soft_t: 0.0,
            hard_t: 10000.0,
            soft_r: 0.0,
            hard_r: 10000.0,
            bloc_r: 100.0,
            kd: 0.0,
            limits: [-1e5, 1e5, -1e5, 1e5, -1e5, 1e5],
            free: [false, false, false, true, true, true],
            init_trans: Vec3::zeros(),
            init_rot: Quaternion::identity(),
            need_init: true,
            r1: Mat3::identity(),
            kt: Vec3::zeros(),
            kr: Vec3::zeros(),
        }
    }
}

/// Why JointSpringForceField's `spring` text cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JointSpringError {
    #[error("expected BEGIN_SPRING, found '{found}'")]
    ExpectedBegin { found: String },
    #[error("a spring has no END_SPRING")]
    NoEnd,
    #[error("unknown key '{key}' in a spring")]
    UnknownKey { key: String },
    /// The list ends where `what` needs a value.
    #[error("{what}: missing value")]
    MissingValue { what: &'static str },
    #[error("{what}: '{token}' is not a number")]
    NotANumber { what: &'static str, token: String },
}

/// Parse SOFA's `BEGIN_SPRING m1 m2 {KEY values} END_SPRING` list (JointSpring's operator>>:
/// one spring object is reused, so omitted stiffness and damping keys keep the previous
/// spring's values, while axes, limits, rest pose and KS_B are reset for each spring).
fn parse_springs(text: &str) -> Result<Vec<JointSpring>, JointSpringError> {
    let mut toks = text.split_whitespace().peekable();
    let mut out = Vec::new();
    let mut cur = JointSpring::default();
    let num = |t: Option<&str>, what: &'static str| -> Result<f64, JointSpringError> {
        let t = t.ok_or(JointSpringError::MissingValue { what })?;
        t.parse::<f64>().map_err(|_| JointSpringError::NotANumber {
            what,
            token: t.to_string(),
        })
    };
    while let Some(t) = toks.next() {
        if t != "BEGIN_SPRING" {
            return Err(JointSpringError::ExpectedBegin {
                found: t.to_string(),
            });
        }
        cur.m1 = num(toks.next(), "BEGIN_SPRING first index")? as usize;
        cur.m2 = num(toks.next(), "BEGIN_SPRING second index")? as usize;
        cur.free = [false, false, false, true, true, true];
        cur.init_trans = Vec3::zeros();
        cur.init_rot = Quaternion::identity();
        cur.bloc_r = 0.0;
        cur.limits = [-1e5, 1e5, -1e5, 1e5, -1e5, 1e5];
        let mut trans_found = false;
        loop {
            let Some(key) = toks.next() else {
                return Err(JointSpringError::NoEnd);
            };
            match key {
                "END_SPRING" => break,
                "FREE_AXIS" => {
                    for k in 0..6 {
                        cur.free[k] = num(toks.next(), "FREE_AXIS")? != 0.0;
                    }
                }
                "KS_T" => {
                    cur.soft_t = num(toks.next(), "KS_T")?;
                    cur.hard_t = num(toks.next(), "KS_T")?;
                }
                "KS_R" => {
                    cur.soft_r = num(toks.next(), "KS_R")?;
                    cur.hard_r = num(toks.next(), "KS_R")?;
                }
                "KS_B" => cur.bloc_r = num(toks.next(), "KS_B")?,
                "KD" => cur.kd = num(toks.next(), "KD")?,
                "R_LIM_X" | "R_LIM_Y" | "R_LIM_Z" => {
                    const LIMITS: [&str; 3] = ["R_LIM_X", "R_LIM_Y", "R_LIM_Z"];
                    let a = LIMITS.iter().position(|k| *k == key).unwrap_or(0);
                    cur.limits[2 * a] = num(toks.next(), LIMITS[a])?;
                    cur.limits[2 * a + 1] = num(toks.next(), LIMITS[a])?;
                }
                "REST_T" => {
                    for k in 0..3 {
                        cur.init_trans[k] = num(toks.next(), "REST_T")?;
                    }
                    trans_found = true;
                }
                "REST_R" => {
                    let v: Vec<f64> = (0..4)
                        .map(|_| num(toks.next(), "REST_R"))
                        .collect::<Result<_, _>>()?;
                    cur.init_rot = Quaternion::new(v[3], v[0], v[1], v[2]);
                }
                other => {
                    return Err(JointSpringError::UnknownKey {
                        key: other.to_string(),
                    })
                }
            }
        }
        // SOFA's flags, as it sets them (not negated)
        cur.need_init = trans_found;
        if cur.bloc_r == 0.0 {
            cur.bloc_r = cur.hard_r / 100.0;
        }
        for i in 0..3 {
            if cur.limits[2 * i] == cur.limits[2 * i + 1] {
                cur.free[3 + i] = false;
            }
        }
        out.push(cur.clone());
    }
    Ok(out)
}

/// SOFA's Quat::quatToAxis as axis × angle (angle in [0, π], w ≥ 0).
fn torsion(q: &Quaternion<f64>) -> Vec3 {
    let q = if q.w < 0.0 { -q } else { *q };
    let v = Vec3::new(q.i, q.j, q.k);
    let (mut phi, s) = if q.w > 0.999 {
        let s = v.norm();
        (2.0 * s.asin(), s)
    } else {
        let phi = 2.0 * q.w.acos();
        (phi, (phi / 2.0).sin())
    };
    let axis = if s < f64::EPSILON {
        Vec3::new(0.0, 1.0, 0.0)
    } else {
        v / s
    };
    if phi > PI {
        phi -= 2.0 * PI;
    }
    axis * phi
}

fn rot(q: &Quaternion<f64>) -> Mat3 {
    nalgebra::UnitQuaternion::from_quaternion(*q)
        .to_rotation_matrix()
        .into_inner()
}

fn inverse(q: &Quaternion<f64>) -> Quaternion<f64> {
    q.conjugate() / q.norm_squared()
}

canape_core::data_schema! {
    /// What JointSpringForceField adds to the force-field Data.
    pub struct JointData {
        spring: Text = ("spring", DataKind::Str, "", "springs: BEGIN_SPRING m1 m2 [FREE_AXIS …] [KS_T soft hard] [KS_R soft hard] [KS_B bloc] [KD kd] [R_LIM_X min max] … [REST_T x y z] [REST_R x y z w] END_SPRING"),
        object1: Text = ("object1", DataKind::Str, "", "First object associated to this component"),
        object2: Text = ("object2", DataKind::Str, "", "Second object associated to this component"),
        outfile: Text = ("outfile", DataKind::Str, "", "output file name"),
        infile: Text = ("infile", DataKind::Str, "", "input file containing constant joint force"),
        period: Real = ("period", DataKind::Real, "0", "period between outputs"),
        reinit: Flag = ("reinit", DataKind::Bool, "0", "flag enabling reinitialization of the output file at each timestep"),
        show_lawful_torsion: Flag = ("showLawfulTorsion", DataKind::Bool, "0", "display the lawful part of the joint rotation"),
        show_extra_torsion: Flag = ("showExtraTorsion", DataKind::Bool, "0", "display the illicit part of the joint rotation"),
        show_factor_size: Real = ("showFactorSize", DataKind::Real, "1", "modify the size of the debug information of a given factor"),
    }
}

#[derive(Clone)]
pub struct JointSpringForceField {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the joint's own Data in `data`.
    d: JointData,
    springs: Vec<JointSpring>,
    /// Between two states (or one that is not the context's): (object1, object2, object1's
    /// frame count, the offset of object2's frames in the concatenated vectors).
    pair: Option<(ComponentId, ComponentId, usize)>,
}

impl Default for JointSpringForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl JointSpringForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(base_fields(DataTable::new()));
        let (data, d) = JointData::declare(data);
        JointSpringForceField {
            data,
            ff,
            d,
            springs: Vec::new(),
            pair: None,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.springs.clear();
        self.pair = None;
        let (t, d) = (&self.data, &self.d);
        for (k, file) in [("outfile", d.outfile), ("infile", d.infile)] {
            if !t.get(file).trim().is_empty() {
                ctx.warn(format!("{k} is not supported: ignored"));
            }
        }
        let objects = [t.get(d.object1), t.get(d.object2)];
        let Some(ends) =
            PairEnds::resolve_links(ctx, objects, DofType::Rigid3, "JointSpringForceField")
        else {
            return;
        };
        let mut springs = match parse_springs(self.data.get(self.d.spring)) {
            Ok(s) => s,
            Err(e) => {
                ctx.error(format!("spring: {e}"));
                return;
            }
        };
        let [na, nb] = ends.sizes;
        if let Some(s) = springs.iter().find(|s| s.m1 >= na || s.m2 >= nb) {
            ctx.error(format!(
                "a spring joins frame {} of object1 ({na} frames) and frame {} of object2 ({nb} frames)",
                s.m1, s.m2
            ));
            return;
        }
        // the rest pose from the initial positions (SOFA's bwdInit)
        let x1 = ctx.scene.state(ends.states[0]).expect("state");
        let x2 = ctx.scene.state(ends.states[1]).expect("state");
        let (c1, c2) = (
            Rigid3Types::coords(x1.vec(VecId::POSITION)),
            Rigid3Types::coords(x2.vec(VecId::POSITION)),
        );
        for s in springs.iter_mut().filter(|s| s.need_init) {
            let (a, b) = (&c1[s.m1], &c2[s.m2]);
            s.init_trans = Vec3::new(b[0] - a[0], b[1] - a[1], b[2] - a[2]);
            s.init_rot = quat_of(b) * inverse(&quat_of(a));
        }
        if ends.pair {
            self.pair = Some((ends.states[0], ends.states[1], na));
        }
        self.springs = springs;
    }

    /// Frame index of a spring's second end in the force field's vectors.
    fn second(&self, s: &JointSpring) -> usize {
        self.pair.map_or(s.m2, |(_, _, n1)| n1 + s.m2)
    }
}

impl JointSpringForceField {
    /// `rayleighStiffness` is read where it is used: an edit of it is taken in place; other
    /// Data (springs, objects) re-run init.
    fn data_changed_impl(&self, changed: &ChangedData) -> Reaction {
        if changed.only(&[self.ff.rayleigh_stiffness.index()]) {
            Reaction::Updated
        } else {
            Reaction::Reinit
        }
    }
}

canape_core::impl_component!(
    JointSpringForceField,
    "JointSpringForceField",
    init,
    data_changed
);

impl ForceField for JointSpringForceField {
    fn interaction(&self) -> Option<Interaction> {
        self.pair.map(|(first, second, _)| Interaction {
            first,
            second,
            second_passive: false,
        })
    }

    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]) {
        let xs = Rigid3Types::coords(x);
        let vs = Rigid3Types::derivs(v);
        let fs = Rigid3Types::derivs_mut(f);
        let offset = self.pair.map_or(0, |p| p.2);
        for s in &mut self.springs {
            let (a, b) = (s.m1, offset + s.m2);
            let (x1, x2) = (&xs[a], &xs[b]);
            let (q1, q2) = (quat_of(x1), quat_of(x2));
            let r1 = rot(&q1);
            s.r1 = r1;
            let d = Vec3::new(x2[0] - x1[0], x2[1] - x1[1], x2[2] - x1[2]) - s.init_trans;
            let qrel = (inverse(&q1) * q2 * s.init_rot).normalize();
            let vrel: [f64; 6] = std::array::from_fn(|k| vs[b][k] - vs[a][k]);
            let t = torsion(&qrel);
            let kt = Vec3::from_fn(|i, _| if s.free[i] { s.soft_t } else { s.hard_t });
            let ft = r1 * kt.component_mul(&(r1.transpose() * d))
                + Vec3::new(vrel[0], vrel[1], vrel[2]) * s.kd;
            let mut kr = Vec3::from_fn(|i, _| if s.free[3 + i] { s.soft_r } else { s.hard_r });
            let m = rot(&qrel);
            let fr = s.free;
            let l = s.limits;
            let within = |i: usize| l[2 * i] < t[i] && t[i] < l[2 * i + 1];
            let fr0 = if !fr[3] && !fr[4] && !fr[5] {
                kr.component_mul(&t)
            } else if fr[3] && !fr[4] && !fr[5] && within(0) {
                let th = (m[(1, 0)].powi(2) + m[(2, 0)].powi(2))
                    .sqrt()
                    .atan2(m[(0, 0)]);
                Vec3::new(
                    t[0] * kr[0],
                    -m[(2, 0)] * th * kr[1],
                    m[(1, 0)] * th * kr[2],
                )
            } else if !fr[3] && fr[4] && !fr[5] && within(1) {
                let th = (m[(0, 1)].powi(2) + m[(2, 1)].powi(2))
                    .sqrt()
                    .atan2(m[(1, 1)]);
                Vec3::new(
                    m[(2, 1)] * th * kr[0],
                    t[1] * kr[1],
                    -m[(0, 1)] * th * kr[2],
                )
            } else if !fr[3] && !fr[4] && fr[5] && within(2) {
                let th = (m[(1, 2)].powi(2) + m[(0, 2)].powi(2))
                    .sqrt()
                    .atan2(m[(2, 2)]);
                Vec3::new(
                    -m[(1, 2)] * th * kr[0],
                    m[(0, 2)] * th * kr[1],
                    t[2] * kr[2],
                )
            } else {
                // the lawful part of the rotation: each free axis's angle clamped to its
                // limits (to the nearer one, across ±π), constrained axes 0
                let lawful = Vec3::from_fn(|i, _| {
                    if !fr[3 + i] {
                        0.0
                    } else if within(i) {
                        t[i]
                    } else {
                        let (d1, d2) = if t[i] > 0.0 {
                            (t[i] - l[2 * i + 1], l[2 * i] + 2.0 * PI - t[i])
                        } else {
                            (t[i] - l[2 * i + 1] + 2.0 * PI, l[2 * i] - t[i])
                        };
                        if d1 < d2 {
                            l[2 * i + 1]
                        } else {
                            l[2 * i]
                        }
                    }
                });
                let e = t - lawful;
                let mut psi = e.norm();
                let dir = e / psi;
                if psi > PI {
                    psi -= 2.0 * PI;
                }
                let extra = dir * psi;
                Vec3::from_fn(|i, _| {
                    if fr[3 + i] && t[i] != lawful[i] {
                        kr[i] = s.bloc_r;
                        extra[i] * s.bloc_r
                    } else {
                        t[i] * kr[i]
                    }
                })
            };
            let fr_w = r1 * fr0 + Vec3::new(vrel[3], vrel[4], vrel[5]) * s.kd;
            s.kt = kt;
            s.kr = kr;
            for c in 0..3 {
                fs[a][c] += ft[c];
                fs[a][3 + c] += fr_w[c];
                fs[b][c] -= ft[c];
                fs[b][3 + c] -= fr_w[c];
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let dxs = Rigid3Types::derivs(dx);
        let dfs = Rigid3Types::derivs_mut(df);
        for s in &self.springs {
            let (a, b) = (s.m1, self.second(s));
            let rt = s.r1.transpose();
            let dl = Vec3::from_fn(|c, _| dxs[b][c] - dxs[a][c]);
            let da = Vec3::from_fn(|c, _| dxs[b][3 + c] - dxs[a][3 + c]);
            let gl = s.r1 * s.kt.component_mul(&(rt * dl)) * k_factor;
            let ga = s.r1 * s.kr.component_mul(&(rt * da)) * k_factor;
            for c in 0..3 {
                dfs[a][c] += gl[c];
                dfs[a][3 + c] += ga[c];
                dfs[b][c] -= gl[c];
                dfs[b][3 + c] -= ga[c];
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        for s in &self.springs {
            let (a, b) = (s.m1, self.second(s));
            let rt = s.r1.transpose();
            for (part, k) in [(0, s.kt), (3, s.kr)] {
                let blk = s.r1 * Mat3::from_diagonal(&k) * rt * k_factor;
                let (ia, ib) = (offset + 6 * a + part, offset + 6 * b + part);
                m.add_block3(ia, ia, &(-blk));
                m.add_block3(ia, ib, &blk);
                m.add_block3(ib, ia, &blk);
                m.add_block3(ib, ib, &(-blk));
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.data.get(self.ff.rayleigh_stiffness)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn springs_parse_as_sofa_reads_them() {
        let s = parse_springs(
            "BEGIN_SPRING 0 1 FREE_AXIS 0 0 0 0 1 0 KS_T 0 30000 KS_R 0 200000 KD 1 \
             R_LIM_X -0.8 0.8 R_LIM_Y -1.57 1.57 R_LIM_Z 0 0 END_SPRING\n\
             BEGIN_SPRING 2 3 KS_B 7 REST_T 1 2 3 END_SPRING",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].m1, s[0].m2), (0, 1));
        assert_eq!(s[0].free, [false, false, false, false, true, false]);
        assert_eq!(
            (s[0].hard_t, s[0].hard_r, s[0].kd),
            (30000.0, 200000.0, 1.0)
        );
        // no KS_B: hard/100
        assert_eq!(s[0].bloc_r, 2000.0);
        assert!(!s[0].need_init);
        // the second spring keeps the first's stiffness and damping (SOFA reuses one object)
        assert_eq!(
            (s[1].hard_t, s[1].hard_r, s[1].kd),
            (30000.0, 200000.0, 1.0)
        );
        assert_eq!(s[1].bloc_r, 7.0);
        // axes and limits are reset
        assert_eq!(s[1].free, [false, false, false, true, true, true]);
        assert!(s[1].need_init);
        assert!(parse_springs("BEGIN_SPRING 0 1 KS_Q 1 END_SPRING").is_err());
        assert!(parse_springs("BEGIN_SPRING 0 1 KS_T 1").is_err());
        for (text, why) in [
            ("KD 1", "expected BEGIN_SPRING, found 'KD'"),
            (
                "BEGIN_SPRING 0 1 KS_Q 1 END_SPRING",
                "unknown key 'KS_Q' in a spring",
            ),
            ("BEGIN_SPRING 0 1 KS_T 1", "KS_T: missing value"),
            ("BEGIN_SPRING 0 1 KD 1", "a spring has no END_SPRING"),
            ("BEGIN_SPRING 0", "BEGIN_SPRING second index: missing value"),
            (
                "BEGIN_SPRING 0 1 R_LIM_Y 0 x END_SPRING",
                "R_LIM_Y: 'x' is not a number",
            ),
        ] {
            assert_eq!(parse_springs(text).unwrap_err().to_string(), why, "{text}");
        }
    }

    /// A joint with `attrs` between the two frames of a Rigid3 state, initialised.
    fn joint(attrs: &[(&str, &str)], x: &[f64]) -> JointSpringForceField {
        use canape_core::component::Component;
        use canape_core::scene::{AnyComponent, Scene};
        use canape_core::state::MechanicalObject;
        let mut ff = JointSpringForceField::new();
        ff.data.set_str("spring", "BEGIN_SPRING 0 1 KS_T 10 300 KS_R 5 70 KD 0.5 FREE_AXIS 0 0 0 1 0 0 R_LIM_X -0.3 0.3 END_SPRING").unwrap();
        for (k, v) in attrs {
            ff.data.set_str(k, v).unwrap();
        }
        let mut s = Scene::new();
        let root = s.add_node("root", None);
        let mut mo = MechanicalObject::new(DofType::Rigid3);
        mo.resize(2);
        mo.vec_mut(VecId::POSITION).copy_from_slice(x);
        mo.vec_mut(VecId::REST_POSITION).copy_from_slice(x);
        let id = s.add_component(root, "frames", AnyComponent::State(mo), None);
        let mut diags = canape_core::diag::Diagnostics::default();
        ff.init(&mut InitContext {
            scene: &s,
            node: root,
            id,
            diags: &mut diags,
        });
        assert!(diags.is_empty(), "{diags:?}");
        ff
    }

    /// Editing `rayleighStiffness` is taken in place: the force field then gives the damping
    /// coefficient, forces and force differentials of one initialised with the new value, bit
    /// for bit; other Data re-initialise it.
    #[test]
    fn edits_update_in_place_joint_rayleigh_stiffness() {
        use canape_core::component::Component;
        let x0 = [
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.2, 0.0, 0.0, 0.0, 0.0, 1.0,
        ];
        let x = [
            0.1, 0.0, -0.2, 0.0, 0.1, 0.0, 0.995, 1.1, 0.3, 0.1, 0.2, 0.0, 0.0, 0.98,
        ];
        let v: Vec<f64> = (0..12).map(|i| 0.1 * i as f64 - 0.4).collect();
        let dx: Vec<f64> = (0..12).map(|i| (i as f64).sin()).collect();
        let outputs = |ff: &mut JointSpringForceField| {
            let (mut f, mut df) = (vec![0.0; 12], vec![0.0; 12]);
            ff.add_force(&x, &v, &mut f);
            ff.add_dforce(&dx, &mut df, 0.7);
            let bits = |a: &[f64]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            (ff.rayleigh_stiffness().to_bits(), bits(&f), bits(&df))
        };
        let before = [("rayleighStiffness", "0.1")];
        let after = [("rayleighStiffness", "0.4")];
        let mut ff = joint(&before, &x0);
        outputs(&mut ff);
        let versions = ff.data().versions();
        ff.data_mut().set_str("rayleighStiffness", "0.4").unwrap();
        let changed = ff.data().changed_since(&versions);
        assert_eq!(ff.data_changed(&changed), Reaction::Updated);
        let got = outputs(&mut ff);
        assert_eq!(got, outputs(&mut joint(&after, &x0)));
        assert_ne!(got, outputs(&mut joint(&before, &x0)));
        let versions = ff.data().versions();
        ff.data_mut().set_str("spring", "").unwrap();
        let changed = ff.data().changed_since(&versions);
        assert_eq!(ff.data_changed(&changed), Reaction::Reinit);
    }
}
