//! PenalityContactForceField (Sofa/Component/Collision/Response/Contact/
//! PenalityContactForceField.inl): the penalty response between two collision models' states.
//! Each contact pushes its two points apart along its normal with a force proportional to the
//! penetration `distance − (p2 − p1)·n` while it is positive.
//!
//! SOFA maps each contact point into a child state of the collision model (a barycentric
//! mapping of the element's vertices) and couples those two states; here a contact point is
//! the same weighted sum of its element's vertices, applied directly on the collision models'
//! states (force up as Jᵀf with the weights, stiffness as Jᵀ K J): the same equations without
//! the intermediate states.

use canape_core::collision::{Contact, ContactPoint, ContactResponse};
use canape_core::component::{ForceField, Interaction};
use canape_core::data::{base_fields, DataKind, DataTable};
use canape_core::matrix::MatrixSink;
use canape_core::scene::ComponentId;
use canape_types::{Mat3, Vec3};

/// The penalty response of one pair of collision models.
#[derive(Clone)]
pub struct PenaltyContactForceField {
    data: DataTable,
    first: ComponentId,
    second: ComponentId,
    /// Whether the second state receives no force (a non-simulated model).
    second_passive: bool,
    /// Whether the first state receives no force (the pipeline orders a pair so that this is
    /// only possible when both are passive).
    first_passive: bool,
    /// Points of the first state (the second state starts after them in the concatenated
    /// vectors).
    first_points: usize,
    /// Scalars per point of each state: (coordinate, derivative) — 3 and 3 for Vec3, 7 and 6
    /// for Rigid3 (a contact at a body's centre acts on its translation, one at an offset
    /// on its rotation too).
    strides: [(usize, usize); 2],
    contacts: Vec<Contact>,
    /// Penetration of each contact at the last `add_force` (SOFA's `contact.pen`); the
    /// stiffness acts where it is positive.
    pen: Vec<f64>,
    /// Lever arms of each contact's two ends at the last `add_force` (zero but on rigid
    /// bodies).
    arms: Vec<[Vec3; 2]>,
}

impl PenaltyContactForceField {
    pub fn new(
        first: ComponentId,
        second: ComponentId,
        first_points: usize,
        strides: [(usize, usize); 2],
        first_passive: bool,
        second_passive: bool,
    ) -> Self {
        PenaltyContactForceField {
            data: base_fields(DataTable::new()).with("name", DataKind::Str, "", "object name"),
            first,
            second,
            second_passive,
            first_passive,
            // one state (self-collision): the second end reads the same vectors
            first_points: if first == second { 0 } else { first_points },
            strides,
            contacts: Vec::new(),
            pen: Vec::new(),
            arms: Vec::new(),
        }
    }

    /// The states this response couples.
    pub fn states(&self) -> (ComponentId, ComponentId) {
        (self.first, self.second)
    }
}

/// A contact end's position (an index beyond the vector, after the state was resized,
/// reads as zero rather than failing: the next collision stage renews the contacts). On a
/// rigid state (`stride` ≥ 7) a point with an offset is the body's centre plus its rotated
/// offset.
pub(crate) fn point(x: &[f64], base: usize, stride: usize, p: &ContactPoint) -> Vec3 {
    let mut s = Vec3::zeros();
    for (i, w) in p.iter() {
        let o = base + stride * i;
        if let Some(c) = x.get(o..o + 3) {
            s += w * Vec3::new(c[0], c[1], c[2]);
        }
    }
    if p.has_offset() {
        s += arm(x, base, stride, p);
    }
    s
}

/// The world lever arm R(q)·offset of a contact end on a rigid state (coordinates `x`,
/// coordinate stride ≥ 7); zero for any other point.
pub(crate) fn arm(x: &[f64], base: usize, stride: usize, p: &ContactPoint) -> Vec3 {
    if stride < 7 || !p.has_offset() {
        return Vec3::zeros();
    }
    let o = base + stride * p.index[0] as usize;
    x.get(o..o + 7).map_or(Vec3::zeros(), |c| p.offset_world(c))
}

/// A contact end's velocity or displacement from its state's derivative vector `dx`: the
/// weighted translations, plus ω × `arm` on a rigid state (derivative stride ≥ 6).
pub(crate) fn point_d(dx: &[f64], base: usize, stride: usize, p: &ContactPoint, arm: Vec3) -> Vec3 {
    let mut s = Vec3::zeros();
    for (i, w) in p.iter() {
        let o = base + stride * i;
        if let Some(c) = dx.get(o..o + 3) {
            s += w * Vec3::new(c[0], c[1], c[2]);
        }
    }
    if arm != Vec3::zeros() && stride >= 6 {
        let o = base + stride * p.index[0] as usize;
        if let Some(c) = dx.get(o + 3..o + 6) {
            s += Vec3::new(c[0], c[1], c[2]).cross(&arm);
        }
    }
    s
}

/// The cross-product matrix [r]× (so that [r]× v = r × v).
fn cross_matrix(r: Vec3) -> Mat3 {
    Mat3::new(0.0, -r.z, r.y, r.z, 0.0, -r.x, -r.y, r.x, 0.0)
}

/// One end of a two-point spring as its stiffness sees it: the offset of its state in the
/// system, its derivative stride, its point, whether it is passive (no rows) and its lever
/// arm on a rigid body (zero otherwise).
pub(crate) type End<'a> = (usize, usize, &'a ContactPoint, bool, Vec3);

/// Add a two-point spring's stiffness to `m`: ∂f₁/∂x₁ = −k·B, ∂f₁/∂x₂ = k·B and the opposite
/// for f₂, the entry (a, b) of the scaled block e·B being `block(e, a, b)`, each end spread
/// over its points' weights. An end with a lever arm r on a rigid body moves as
/// J = [I, −[r]×], so its rows and columns get the rotational blocks of Jᵀ(e·B)J too (the
/// change of the arm with the rotation is left out, as SOFA's RigidMapping leaves out its
/// geometric stiffness unless asked).
pub(crate) fn add_pair_stiffness(
    m: &mut dyn MatrixSink,
    offset: usize,
    ends: [End<'_>; 2],
    k: f64,
    block: impl Fn(f64, usize, usize) -> f64,
) {
    let sign = [-1.0, 1.0];
    for (r, &(rb, rd, rp, passive, rarm)) in ends.iter().enumerate() {
        if passive {
            continue;
        }
        for (ri, rw) in rp.iter() {
            for (c, &(cb, cd, cp, _, carm)) in ends.iter().enumerate() {
                for (ci, cw) in cp.iter() {
                    // f_r = s_r·(…): ∂f_r/∂x_c = −s_r·s_c·k·B
                    let e = -sign[r] * sign[c] * k * rw * cw;
                    // all 9 entries, zeros included: the pattern does not depend on the values
                    for a in 0..3 {
                        for bb in 0..3 {
                            let (row, col) =
                                (offset + rb + rd * ri + a, offset + cb + cd * ci + bb);
                            m.add(row, col, block(e, a, bb));
                        }
                    }
                    let rot_r = rarm != Vec3::zeros() && rd >= 6;
                    let rot_c = carm != Vec3::zeros() && cd >= 6;
                    if !rot_r && !rot_c {
                        continue;
                    }
                    let b = Mat3::from_fn(|a, bb| block(e, a, bb));
                    // Jᵀ = [I; [r]×]: rotational rows [r_r]×·B, columns −B·[r_c]×
                    let (row0, col0) = (offset + rb + rd * ri, offset + cb + cd * ci);
                    let mut put = |blk: Mat3, ro: usize, co: usize| {
                        for a in 0..3 {
                            for bb in 0..3 {
                                m.add(row0 + ro + a, col0 + co + bb, blk[(a, bb)]);
                            }
                        }
                    };
                    if rot_r {
                        put(cross_matrix(rarm) * b, 3, 0);
                    }
                    if rot_c {
                        put(-b * cross_matrix(carm), 0, 3);
                    }
                    if rot_r && rot_c {
                        put(-cross_matrix(rarm) * b * cross_matrix(carm), 3, 3);
                    }
                }
            }
        }
    }
}

/// A contact response's two states as an interaction; None for a self-contact (both ends on
/// one state: a force field of that state).
pub(crate) fn pair_interaction(
    first: ComponentId,
    second: ComponentId,
    second_passive: bool,
) -> Option<Interaction> {
    (first != second).then_some(Interaction {
        first,
        second,
        second_passive,
    })
}

/// Add `v` to a contact end's points, by their weights; on a rigid state (derivative stride
/// ≥ 6) an end with lever arm `arm` also gets the torque `arm` × `v`.
pub(crate) fn spread(
    f: &mut [f64],
    base: usize,
    stride: usize,
    p: &ContactPoint,
    v: Vec3,
    arm: Vec3,
) {
    for (i, w) in p.iter() {
        let o = base + stride * i;
        if let Some(c) = f.get_mut(o..o + 3) {
            c[0] += w * v.x;
            c[1] += w * v.y;
            c[2] += w * v.z;
        }
    }
    if arm != Vec3::zeros() && stride >= 6 {
        let o = base + stride * p.index[0] as usize;
        if let Some(c) = f.get_mut(o + 3..o + 6) {
            let t = arm.cross(&v);
            c[0] += t.x;
            c[1] += t.y;
            c[2] += t.z;
        }
    }
}

canape_core::impl_component!(PenaltyContactForceField, "PenalityContactForceField");

impl ContactResponse for PenaltyContactForceField {
    fn set_contacts(&mut self, contacts: &[Contact]) {
        self.contacts.clear();
        self.contacts.extend_from_slice(contacts);
        self.pen.clear();
        self.pen.resize(contacts.len(), 0.0);
        self.arms.clear();
        self.arms.resize(contacts.len(), [Vec3::zeros(); 2]);
    }
    fn contacts(&self) -> &[Contact] {
        &self.contacts
    }
}

impl ForceField for PenaltyContactForceField {
    fn interaction(&self) -> Option<Interaction> {
        pair_interaction(self.first, self.second, self.second_passive)
    }

    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let [(c1, d1), (c2, d2)] = self.strides;
        let (bx, bf) = (self.first_points * c1, self.first_points * d1);
        let per = self.contacts.iter().zip(self.pen.iter_mut());
        for ((c, pen), arms) in per.zip(self.arms.iter_mut()) {
            *arms = [arm(x, 0, c1, &c.first), arm(x, bx, c2, &c.second)];
            let u = point(x, bx, c2, &c.second) - point(x, 0, c1, &c.first);
            *pen = c.distance - u.dot(&c.normal);
            if *pen > 0.0 {
                let force = -c.normal * (c.stiffness * *pen);
                if !self.first_passive {
                    spread(f, 0, d1, &c.first, force, arms[0]);
                }
                if !self.second_passive {
                    spread(f, bf, d2, &c.second, -force, arms[1]);
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let [(_, d1), (_, d2)] = self.strides;
        let b = self.first_points * d1;
        let per = self.contacts.iter().zip(&self.pen).zip(&self.arms);
        for ((c, &pen), arms) in per {
            if pen <= 0.0 {
                continue;
            }
            let du = point_d(dx, b, d2, &c.second, arms[1]) - point_d(dx, 0, d1, &c.first, arms[0]);
            let dpen = -du.dot(&c.normal);
            let dforce = -c.normal * (c.stiffness * dpen * k_factor);
            if !self.first_passive {
                spread(df, 0, d1, &c.first, dforce, arms[0]);
            }
            if !self.second_passive {
                spread(df, b, d2, &c.second, -dforce, arms[1]);
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        let [(_, d1), (_, d2)] = self.strides;
        let b = self.first_points * d1;
        // ∂f1/∂x1 = −k n nᵀ, ∂f1/∂x2 = k n nᵀ, and the opposite for f2, spread over the
        // weights of each end (through J = [I, −[r]×] at a lever arm r)
        let per = self.contacts.iter().zip(&self.pen).zip(&self.arms);
        for ((c, &pen), arms) in per {
            if pen <= 0.0 {
                continue;
            }
            let n = c.normal;
            let ends = [
                (0usize, d1, &c.first, self.first_passive, arms[0]),
                (b, d2, &c.second, self.second_passive, arms[1]),
            ];
            add_pair_stiffness(m, offset, ends, c.stiffness * k_factor, |e, a, bb| {
                e * n[a] * n[bb]
            });
        }
    }

    fn potential_energy(&self, _x: &[f64]) -> Option<f64> {
        Some(
            self.contacts
                .iter()
                .zip(&self.pen)
                .filter(|(_, p)| **p > 0.0)
                .map(|(c, p)| 0.5 * c.stiffness * p * p)
                .sum(),
        )
    }

    fn contact_response(&mut self) -> Option<&mut dyn ContactResponse> {
        Some(self)
    }

    fn contacts(&self) -> &[Contact] {
        &self.contacts
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use canape_core::collision::rotate;
    use canape_core::scene::{AnyComponent, Scene};
    use canape_core::state::MechanicalObject;
    use canape_types::DofType;

    /// A point state and a Rigid3 state of a throwaway scene.
    pub(crate) fn two_ids() -> (ComponentId, ComponentId) {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let a = scene.add_component(
            root,
            "p",
            AnyComponent::State(MechanicalObject::new(DofType::Vec3)),
            None,
        );
        let b = scene.add_component(
            root,
            "r",
            AnyComponent::State(MechanicalObject::new(DofType::Rigid3)),
            None,
        );
        (a, b)
    }

    struct Dense(Vec<Vec<f64>>);
    impl MatrixSink for Dense {
        fn add(&mut self, r: usize, c: usize, v: f64) {
            self.0[r][c] += v;
        }
    }

    /// Quaternion product a·b (x y z w).
    fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
        let (av, bv) = (Vec3::new(a[0], a[1], a[2]), Vec3::new(b[0], b[1], b[2]));
        let v = bv * a[3] + av * b[3] + av.cross(&bv);
        [v.x, v.y, v.z, a[3] * b[3] - av.dot(&bv)]
    }

    /// A point of a Vec3 state against a point at an offset on a rigid body: the body gets the
    /// force and its torque r × f; the change of the force with the body's translation and
    /// rotation is add_dforce's and add_k_to_matrix's.
    #[test]
    fn a_contact_at_an_offset_pushes_and_turns_a_rigid_body() {
        let (a, b) = two_ids();
        let mut ff = PenaltyContactForceField::new(a, b, 1, [(3, 3), (7, 6)], false, false);
        let h = 0.4_f64;
        let q = [0.0, 0.0, (h / 2.0).sin(), (h / 2.0).cos()];
        let local = Vec3::new(0.3, -0.4, 0.2);
        let n = Vec3::new(0.0, 1.0, 0.0);
        ff.set_contacts(&[Contact {
            first: ContactPoint::vertex(0),
            second: ContactPoint::rigid(0, local),
            normal: n,
            distance: 1.5,
            stiffness: 7.0,
            elements: [0, 0],
            gap: Vec3::zeros(),
        }]);
        let x = vec![0.1, 0.0, -0.2, 0.0, 1.0, 0.0, q[0], q[1], q[2], q[3]];
        let mut f = vec![0.0; 9];
        ff.add_force(&x, &[0.0; 9], &mut f);
        let r = rotate(q, local);
        let p2 = Vec3::new(0.0, 1.0, 0.0) + r;
        let pen = 1.5 - (p2 - Vec3::new(0.1, 0.0, -0.2)).dot(&n);
        assert!(pen > 0.0);
        let push = n * (7.0 * pen);
        let torque = r.cross(&push);
        let want = [
            -push.x, -push.y, -push.z, push.x, push.y, push.z, torque.x, torque.y, torque.z,
        ];
        for k in 0..9 {
            assert!((f[k] - want[k]).abs() < 1e-12, "{f:?} {want:?}");
        }
        assert!(torque.norm() > 0.1, "the test needs a lever arm");
        // the tangent: finite differences of the force (translation parts) against add_dforce,
        // for each derivative of both states (the torque's own change with the arm is the
        // geometric stiffness left out)
        let mut k = Dense(vec![vec![0.0; 9]; 9]);
        ff.add_k_to_matrix(&mut k, 1.0, 0);
        let eps = 1e-7;
        for d in 0..9 {
            let mut dx = vec![0.0; 9];
            dx[d] = 1.0;
            let mut df = vec![0.0; 9];
            ff.add_dforce(&dx, &mut df, 1.0);
            let mut xp = x.clone();
            if d < 6 {
                xp[d] += eps;
            } else {
                let mut w = [0.0; 3];
                w[d - 6] = eps / 2.0;
                let dq = [w[0], w[1], w[2], 1.0];
                let qq = qmul(dq, q);
                xp[6..10].copy_from_slice(&qq);
            }
            let mut fp = vec![0.0; 9];
            ff.add_force(&xp, &[0.0; 9], &mut fp);
            let mut f0 = vec![0.0; 9];
            ff.add_force(&x, &[0.0; 9], &mut f0);
            for row in [0, 1, 2, 3, 4, 5] {
                let fd = (fp[row] - f0[row]) / eps;
                assert!(
                    (fd - df[row]).abs() < 1e-5,
                    "d{d} row {row}: {fd} {}",
                    df[row]
                );
            }
            for row in 0..9 {
                assert!((k.0[row][d] - df[row]).abs() < 1e-12, "K[{row}][{d}]");
            }
        }
    }
}
