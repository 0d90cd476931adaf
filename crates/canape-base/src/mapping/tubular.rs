//! TubularMapping (Sofa/Component/Mapping/Linear/src/sofa/component/mapping/linear/
//! TubularMapping.h and .inl): Rigid3 frames to Vec3 points on a circle around each frame's
//! local x axis — the skin of a beam, with the quads of Edge2QuadTopologicalMapping.
//!
//! Frame i gets `nbPointsOnEachCircle` = N points numbered i·N … i·N + N − 1; point j sits at
//! ρ_i (cos θ_j ŷ + sin θ_j ẑ), θ_j = 2πj/N, in the frame (ŷ, ẑ its local y and z axes), so
//! out = c_i + R_i p_ij. ρ_i is `radius`, scaled down at a tip by `peak`: with peak = k > 0 the
//! first k frames get ρ·i/k (a point at frame 0), with k < 0 the last |k| of the F frames get
//! ρ·(F − 1 − i)/|k|.
//!
//! Those points are fixed in their frames: the mapping is a RigidMapping with these local
//! points, and it is built on one (v = v_i + ω_i × R_i p, Jᵀ: f and (R_i p) × f per frame; the
//! Lagrangian rows go up by the same Jᵀ, as SOFA's applyJT on constraints). SOFA declares it a
//! LinearMapping and gives it no geometric stiffness (no applyDJT): none here either.

use crate::mapping::linear::{mapping_base, resolve_mapping_ends, template_fits, MappingData};
use crate::mapping::nonlinear::rigid::RigidMapping;
use canape_core::component::{Component, JEntry, MapInputs, Mapping};
use canape_core::data::{DataKind, DataTable, Int, Real};
use canape_core::impl_component;
use canape_core::registry::{Registry, TemplateError};
use canape_core::scene::{AnyComponent, ComponentId, InitContext};
use canape_types::DofType;

/// More output points than this is taken for a mistake (nbPointsOnEachCircle far too large).
const MAX_OUTPUT_POINTS: usize = 1 << 26;

/// Register this module's classes.
pub(crate) fn register(r: &mut Registry) {
    r.register(
        "TubularMapping",
        "points on circles around the x axis of Rigid3 frames (a beam's skin)",
        |_, t| {
            // SOFA instantiates TubularMapping<Rigid3, Vec3> only
            let parts: Vec<&str> = t.split(',').map(str::trim).collect();
            let fits = t.trim().is_empty()
                || (parts.len() == 2 && template_fits(t, DofType::Rigid3, DofType::Vec3))
                || (parts.len() == 1 && DofType::from_template(parts[0]) == Some(DofType::Rigid3));
            if !fits {
                return Err(TemplateError::MappingTypes {
                    template: t.to_string(),
                    class: "TubularMapping".to_string(),
                    only: "Rigid3d,Vec3d",
                });
            }
            Ok(AnyComponent::Mapping(Box::new(TubularMapping::new())))
        },
    );
}

canape_core::data_schema! {
    /// TubularMapping's own Data (after [`MappingData`]).
    struct TubularData {
        nb_points_on_each_circle: Int = ("nbPointsOnEachCircle", DataKind::Int, "0", "Discretization of created circles"),
        radius: Real = ("radius", DataKind::Real, "0", "Radius of created circles"),
        peak: Int = ("peak", DataKind::Int, "0", "=0 no peak, =1 peak on the first segment =2 peak on the two first segment, =-1 peak on the last segment"),
    }
}

#[derive(Clone)]
pub struct TubularMapping {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    m: MappingData,
    d: TubularData,
    /// The RigidMapping carrying the circles' points, made at init (a fresh, uninitialised one
    /// while init has not succeeded: no inputs, no output).
    rigid: RigidMapping,
    /// Number of input frames at init; an input found shorter later is not mapped.
    frames: usize,
    /// The full output, for an output shorter than the mapping's (a visual model that got
    /// fewer points): its first points are copied.
    scratch: Vec<f64>,
}

impl Default for TubularMapping {
    fn default() -> Self {
        Self::new()
    }
}

/// Why TubularMapping's settings make no tube.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TubularError {
    #[error("no radius is given")]
    NoRadius,
    #[error("radius {radius} is not a positive number")]
    BadRadius { radius: f64 },
    #[error(
        "nbPointsOnEachCircle is {n}: a number of points per circle from 1 to {max} is needed"
    )]
    PointsPerCircle { n: i64, max: usize },
}

impl TubularMapping {
    pub fn new() -> Self {
        let (data, m) = mapping_base(DataTable::new());
        let (data, d) = TubularData::declare(data);
        TubularMapping {
            data,
            m,
            d,
            rigid: RigidMapping::new(),
            frames: 0,
            scratch: Vec::new(),
        }
    }

    /// The number of points per circle and the radius, checked.
    fn settings(&self) -> Result<(usize, f64), TubularError> {
        if !self.data.was_set(self.d.radius) {
            return Err(TubularError::NoRadius);
        }
        let radius = self.data.get(self.d.radius);
        if !(radius.is_finite() && radius > 0.0) {
            return Err(TubularError::BadRadius { radius });
        }
        let n = self.data.get(self.d.nb_points_on_each_circle);
        if n <= 0 || n as u64 > MAX_OUTPUT_POINTS as u64 {
            return Err(TubularError::PointsPerCircle {
                n,
                max: MAX_OUTPUT_POINTS,
            });
        }
        Ok((n as usize, radius))
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rigid = RigidMapping::new();
        self.frames = 0;
        let (n, radius) = match self.settings() {
            Ok(s) => s,
            Err(e) => {
                ctx.error(format!("TubularMapping: {e}; the mapping is not created"));
                return;
            }
        };
        let Some(e) = resolve_mapping_ends(ctx, &self.data, self.m) else {
            return;
        };
        if e.inputs.len() != 1 || e.in_dofs[0] != DofType::Rigid3 || e.out_dof != DofType::Vec3 {
            ctx.error(format!(
                "TubularMapping maps one Rigid3d state to a Vec3d state ({} to {} given)",
                e.in_dofs
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(" and "),
                e.out_dof.name()
            ));
            return;
        }
        let frames = ctx.scene.state(e.inputs[0]).map_or(0, |s| s.size());
        if frames == 0 {
            ctx.error("TubularMapping: the input state has no frame");
            return;
        }
        if frames.saturating_mul(n) > MAX_OUTPUT_POINTS {
            ctx.error(format!(
                "TubularMapping: {frames} frames × {n} points per circle is too many"
            ));
            return;
        }
        let (points, index) = circle_points(frames, n, radius, self.data.get(self.d.peak));
        let mut rigid = match RigidMapping::with_points(
            self.data.get(self.m.input),
            self.data.get(self.m.output),
            points,
            index,
        ) {
            Ok(r) => r,
            Err(msg) => {
                ctx.error(format!("TubularMapping: {msg}"));
                return;
            }
        };
        rigid.init(ctx);
        if rigid.output().is_none() {
            return;
        }
        // a visual model with points of its own keeps them (an empty one takes the mapping's
        // size at init, as a state does)
        if ctx.scene.state(e.output).is_none() {
            let have = crate::mapping::barycentric::end_positions(ctx.scene, e.output)
                .map_or(0, |p| p.len() / 3);
            if have != 0 && have != frames * n {
                ctx.warn(format!(
                    "the output visual model has {have} points, the mapping defines {}: only the first {} are placed",
                    frames * n,
                    have.min(frames * n)
                ));
            }
        }
        self.rigid = rigid;
        self.frames = frames;
    }

    /// Whether input vector `v` (coordinates of `size` numbers per frame) has the frames of init.
    fn input_fits(&self, v: &MapInputs<'_>, size: usize) -> bool {
        !v.is_empty() && v.get(0).len() >= size * self.frames
    }

    /// Number of output scalars (3 per point).
    fn out_len(&self) -> usize {
        3 * self.rigid.output_size().unwrap_or(0)
    }
}

/// The circles' points in their frames' coordinates (flat x, y, z) and the frame of each:
/// frame i's circle of radius ρ_i (`radius` scaled by `peak`) in its local yz plane, point j at
/// angle 2πj/n from y towards z.
pub fn circle_points(frames: usize, n: usize, radius: f64, peak: i64) -> (Vec<f64>, Vec<u32>) {
    let mut points = Vec::with_capacity(3 * frames * n);
    let mut index = Vec::with_capacity(frames * n);
    for i in 0..frames {
        let rho = radius * peak_scale(i, frames, peak);
        for j in 0..n {
            let t = 2.0 * std::f64::consts::PI * j as f64 / n as f64;
            let (s, c) = t.sin_cos();
            points.extend_from_slice(&[0.0, c * rho, s * rho]);
            index.push(i as u32);
        }
    }
    (points, index)
}

/// SOFA's `peak`: the radius grows linearly over the first `peak` frames (peak > 0) or shrinks
/// over the last `−peak` ones (peak < 0), from 0 at the tip.
fn peak_scale(i: usize, frames: usize, peak: i64) -> f64 {
    let i = i as i64;
    if peak > 0 && i < peak {
        i as f64 / peak as f64
    } else if peak < 0 {
        let from_end = frames as i64 - 1 - i;
        if from_end < -peak {
            from_end as f64 / -peak as f64
        } else {
            1.0
        }
    } else {
        1.0
    }
}

impl_component!(TubularMapping, "TubularMapping", init);

impl Mapping for TubularMapping {
    fn inputs(&self) -> &[ComponentId] {
        self.rigid.inputs()
    }
    fn output(&self) -> Option<ComponentId> {
        self.rigid.output()
    }
    fn output_size(&self) -> Option<usize> {
        self.rigid.output_size()
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        if !self.input_fits(x_in, 7) {
            return;
        }
        let n = self.out_len();
        if x_out.len() >= n {
            self.rigid.apply(x_in, x_out);
        } else {
            let mut full = std::mem::take(&mut self.scratch);
            full.resize(n, 0.0);
            self.rigid.apply(x_in, &mut full);
            x_out.copy_from_slice(&full[..x_out.len()]);
            self.scratch = full;
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        if !self.input_fits(v_in, 6) {
            return;
        }
        let n = self.out_len();
        if v_out.len() >= n {
            self.rigid.apply_j(v_in, v_out);
        } else {
            let mut full = vec![0.0; n];
            self.rigid.apply_j(v_in, &mut full);
            v_out.copy_from_slice(&full[..v_out.len()]);
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        if f_in.is_empty() || f_in[0].len() < 6 * self.frames {
            return;
        }
        let n = self.out_len();
        if f_out.len() >= n {
            self.rigid.apply_jt(f_out, f_in);
        } else {
            let mut full = f_out.to_vec();
            full.resize(n, 0.0);
            self.rigid.apply_jt(&full, f_in);
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        self.rigid.jacobian(out)
    }
    // no geometric stiffness, as in SOFA (the inner RigidMapping has geometricStiffness None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::diag::Diagnostics;
    use canape_core::scene::{Scene, Slot};
    use canape_core::state::{MechanicalObject, VecId};
    use canape_types::Vec3;
    use nalgebra::{Quaternion, UnitQuaternion};

    /// A scene with Rigid3 frames `x` at the root and a Vec3 state `out` below, and a
    /// TubularMapping between them with `attrs`, initialised (diagnostics returned).
    fn setup(x: &[[f64; 7]], attrs: &[(&str, &str)]) -> (Scene, TubularMapping, Diagnostics) {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut frames = MechanicalObject::new(DofType::Rigid3);
        frames.resize(x.len());
        frames
            .vec_mut(VecId::POSITION)
            .copy_from_slice(x.as_flattened());
        scene.add_component(root, "frames", AnyComponent::State(frames), None);
        let child = scene.add_node("p", Some(root));
        scene.add_component(
            child,
            "out",
            AnyComponent::State(MechanicalObject::new(DofType::Vec3)),
            None,
        );
        let mut m = TubularMapping::new();
        for (k, v) in attrs {
            m.data.set_str(k, v).unwrap();
        }
        let id = scene.add_component(
            child,
            "tube",
            AnyComponent::Mapping(Box::new(m.clone())),
            None,
        );
        let mut diags = Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: child,
            id,
            diags: &mut diags,
        };
        m.init(&mut ctx);
        (scene, m, diags)
    }

    fn unit(axis: [f64; 3], angle: f64) -> [f64; 4] {
        let q = UnitQuaternion::from_axis_angle(
            &nalgebra::Unit::new_normalize(Vec3::new(axis[0], axis[1], axis[2])),
            angle,
        );
        [q.i, q.j, q.k, q.w]
    }

    fn frame(c: [f64; 3], q: [f64; 4]) -> [f64; 7] {
        [c[0], c[1], c[2], q[0], q[1], q[2], q[3]]
    }

    const ATTRS: [(&str, &str); 4] = [
        ("nbPointsOnEachCircle", "6"),
        ("radius", "0.25"),
        ("input", "@../frames"),
        ("output", "@out"),
    ];

    fn apply(scene: &Scene, m: &mut TubularMapping, id: VecId) -> Vec<f64> {
        let mut y = vec![0.0; 3 * m.output_size().unwrap()];
        m.apply(&MapInputs::new(&scene.states, &[0], id), &mut y);
        y
    }

    /// Each point at distance `radius` from its frame's origin, in the plane through it
    /// orthogonal to the frame's x axis, the circle's points 2π/N apart from the frame's y axis;
    /// moving the frame rigidly moves its points with it.
    #[test]
    fn points_on_circles_follow_their_frames() {
        let x = [
            frame([0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]),
            frame([1.0, -2.0, 0.5], unit([0.3, -1.0, 2.0], 0.9)),
        ];
        let (mut scene, mut m, diags) = setup(&x, &ATTRS);
        assert!(!diags.has_errors(), "{:?}", diags.items);
        assert_eq!(m.output_size(), Some(12));
        let check = |scene: &Scene, m: &mut TubularMapping, x: &[[f64; 7]]| {
            let y = apply(scene, m, VecId::POSITION);
            for (k, p) in y.chunks_exact(3).enumerate() {
                let f = &x[k / 6];
                let q = UnitQuaternion::from_quaternion(Quaternion::new(f[6], f[3], f[4], f[5]));
                let c = Vec3::new(f[0], f[1], f[2]);
                let d = Vec3::new(p[0], p[1], p[2]) - c;
                assert!(
                    (d.norm() - 0.25).abs() < 1e-14,
                    "point {k}: |d| {}",
                    d.norm()
                );
                assert!(
                    d.dot(&(q * Vec3::x())).abs() < 1e-14,
                    "point {k} off the plane"
                );
                // angle from the frame's y axis, towards z
                let t = 2.0 * std::f64::consts::PI * (k % 6) as f64 / 6.0;
                let want = (q * Vec3::y() * t.cos() + q * Vec3::z() * t.sin()) * 0.25;
                assert!((d - want).norm() < 1e-14, "point {k}: {d} vs {want}");
            }
        };
        check(&scene, &mut m, &x);
        // the frames turned and moved: the points go with them
        let moved = [
            frame([0.5, 0.0, 3.0], unit([0.0, 0.0, 1.0], 1.2)),
            frame([-1.0, 2.0, 0.0], unit([1.0, 1.0, 0.0], -2.5)),
        ];
        scene.states[0]
            .as_mut()
            .unwrap()
            .vec_mut(VecId::POSITION)
            .copy_from_slice(moved.as_flattened());
        check(&scene, &mut m, &moved);
    }

    /// J against central differences of `apply` for a small rotation and translation of the
    /// frames, the Jacobian's entries against `apply_j`, and Jᵀ as J's adjoint.
    #[test]
    fn jacobian_and_transpose() {
        let x = [
            frame([0.2, 0.1, 0.0], unit([1.0, 2.0, 3.0], 0.4)),
            frame([1.0, 0.0, -1.0], unit([0.0, 1.0, 0.0], 2.0)),
            frame([2.0, 0.5, 0.3], unit([-1.0, 0.0, 0.5], -1.0)),
        ];
        let (mut scene, mut m, diags) = setup(&x, &ATTRS);
        assert!(!diags.has_errors(), "{:?}", diags.items);
        let dx: Vec<f64> = (0..18).map(|i| ((i * 7 + 3) as f64 * 0.61).sin()).collect();
        let moved = |scene: &mut Scene, h: f64| {
            let st = scene.states[0].as_mut().unwrap();
            let p = st.vec_mut(VecId::POSITION);
            p.copy_from_slice(x.as_flattened());
            DofType::Rigid3.coord_add_deriv(p, &dx, h);
        };
        let h = 1e-6;
        moved(&mut scene, h);
        let yp = apply(&scene, &mut m, VecId::POSITION);
        moved(&mut scene, -h);
        let ym = apply(&scene, &mut m, VecId::POSITION);
        moved(&mut scene, 0.0);
        apply(&scene, &mut m, VecId::POSITION);
        let st = scene.states[0].as_mut().unwrap();
        st.ensure(VecId::DX);
        st.vec_mut(VecId::DX).copy_from_slice(&dx);
        let mut jdx = vec![0.0; 54];
        m.apply_j(&MapInputs::new(&scene.states, &[0], VecId::DX), &mut jdx);
        for r in 0..54 {
            let fd = (yp[r] - ym[r]) / (2.0 * h);
            assert!((fd - jdx[r]).abs() < 1e-8, "row {r}: {} vs {fd}", jdx[r]);
        }
        let mut entries = Vec::new();
        m.jacobian(&mut entries);
        let mut jdx2 = vec![0.0; 54];
        for e in &entries {
            assert_eq!(e.input, 0);
            jdx2[e.row as usize] += e.val * dx[e.col as usize];
        }
        for r in 0..54 {
            assert!((jdx2[r] - jdx[r]).abs() < 1e-14, "row {r}");
        }
        // <J dx, w> = <dx, Jᵀ w>, and each frame gets only its own circle's forces
        let w: Vec<f64> = (0..54).map(|i| ((i * 5 + 1) as f64 * 0.37).cos()).collect();
        let mut jtw = vec![vec![0.0; 18]];
        m.apply_jt(&w, &mut jtw);
        let lhs: f64 = jdx.iter().zip(&w).map(|(a, b)| a * b).sum();
        let rhs: f64 = dx.iter().zip(&jtw[0]).map(|(a, b)| a * b).sum();
        assert!(
            (lhs - rhs).abs() < 1e-12 * (1.0 + lhs.abs()),
            "{lhs} vs {rhs}"
        );
        let mut first_only = w.clone();
        first_only[18..].iter_mut().for_each(|v| *v = 0.0);
        let mut jt1 = vec![vec![0.0; 18]];
        m.apply_jt(&first_only, &mut jt1);
        assert!(jt1[0][6..].iter().all(|v| *v == 0.0), "{:?}", jt1[0]);
        // no geometric stiffness (SOFA has none)
        let mut ks = Vec::new();
        m.geometric_stiffness(&w, &mut ks);
        assert!(ks.is_empty());
    }

    /// An output shorter than the mapping's (a visual model with fewer points) gets the first
    /// points; an input with fewer frames than at init leaves the output as it was.
    #[test]
    fn short_buffers_are_tolerated() {
        let x = [
            frame([0.0; 3], [0.0, 0.0, 0.0, 1.0]),
            frame([1.0, 0.0, 0.0], unit([0.0, 1.0, 0.0], 0.5)),
        ];
        let (mut scene, mut m, _) = setup(&x, &ATTRS);
        let full = apply(&scene, &mut m, VecId::POSITION);
        let mut short = vec![0.0; 20];
        m.apply(
            &MapInputs::new(&scene.states, &[0], VecId::POSITION),
            &mut short,
        );
        assert_eq!(short, full[..20]);
        let mut v = vec![0.0; 5];
        m.apply_j(
            &MapInputs::new(&scene.states, &[0], VecId::POSITION),
            &mut v,
        );
        let mut f = vec![vec![0.0; 12]];
        m.apply_jt(&[1.0; 7], &mut f);
        // points 0 and 1 whole, point 2 by its x
        assert_eq!(f[0][0], 3.0);
        scene.states[0].as_mut().unwrap().resize(1);
        let mut y = vec![7.0; 36];
        m.apply(
            &MapInputs::new(&scene.states, &[0], VecId::POSITION),
            &mut y,
        );
        assert!(y.iter().all(|v| *v == 7.0));
        let mut f = vec![vec![0.0; 6]];
        m.apply_jt(&[1.0; 36], &mut f);
        assert!(f[0].iter().all(|v| *v == 0.0));
    }

    #[test]
    fn peak_shrinks_the_tip() {
        let (p, idx) = circle_points(4, 3, 2.0, 2);
        assert_eq!(idx, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
        let radii: Vec<f64> = p
            .chunks_exact(9)
            .map(|c| (c[1] * c[1] + c[2] * c[2]).sqrt())
            .collect();
        assert_eq!(radii, [0.0, 1.0, 2.0, 2.0]);
        let (p, _) = circle_points(4, 3, 2.0, -1);
        let radii: Vec<f64> = p
            .chunks_exact(9)
            .map(|c| (c[1] * c[1] + c[2] * c[2]).sqrt())
            .collect();
        assert_eq!(radii, [2.0, 2.0, 2.0, 0.0]);
    }

    /// Bad settings or ends: an error, no mapping created (no inputs, no output), no panic.
    #[test]
    fn bad_input_is_reported() {
        let x = [frame([0.0; 3], [0.0, 0.0, 0.0, 1.0])];
        for (k, v) in [
            ("nbPointsOnEachCircle", "0"),
            ("nbPointsOnEachCircle", "-2"),
            ("radius", "0"),
            ("radius", "-1"),
            ("radius", "nan"),
            ("radius", "inf"),
            ("input", "@nothing"),
            // Vec3 → Vec3: the output as input
            ("input", "@out"),
        ] {
            let mut attrs = ATTRS.to_vec();
            attrs.retain(|(a, _)| *a != k);
            attrs.push((k, v));
            let (_, m, diags) = setup(&x, &attrs);
            assert!(diags.has_errors(), "{k}={v}");
            assert!(m.inputs().is_empty() && m.output().is_none(), "{k}={v}");
        }
        // no radius at all
        let attrs: Vec<_> = ATTRS
            .iter()
            .copied()
            .filter(|(a, _)| *a != "radius")
            .collect();
        let (_, _, diags) = setup(&x, &attrs);
        assert!(diags.has_errors());
        // no frame
        let (_, _, diags) = setup(&[], &ATTRS);
        assert!(diags.has_errors());
        // a Rigid3 output
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut frames = MechanicalObject::new(DofType::Rigid3);
        frames.resize(1);
        scene.add_component(root, "frames", AnyComponent::State(frames), None);
        let child = scene.add_node("p", Some(root));
        scene.add_component(
            child,
            "out",
            AnyComponent::State(MechanicalObject::new(DofType::Rigid3)),
            None,
        );
        let mut m = TubularMapping::new();
        for (k, v) in ATTRS {
            m.data.set_str(k, v).unwrap();
        }
        let id = scene.add_component(
            child,
            "tube",
            AnyComponent::Mapping(Box::new(m.clone())),
            None,
        );
        let mut diags = Diagnostics::default();
        m.init(&mut InitContext {
            scene: &scene,
            node: child,
            id,
            diags: &mut diags,
        });
        assert!(diags.has_errors());
        assert!(matches!(scene.info(id).slot, Slot::Mapping(_)));
        // the registry refuses other templates
        let mut r = Registry::new();
        register(&mut r);
        let e = r.get("TubularMapping").unwrap();
        assert!((e.create)("TubularMapping", "Rigid3d,Vec3d").is_ok());
        assert!((e.create)("TubularMapping", "").is_ok());
        assert!((e.create)("TubularMapping", "Vec3d,Vec3d").is_err());
        assert!((e.create)("TubularMapping", "Rigid3d,Rigid3d").is_err());
    }
}
