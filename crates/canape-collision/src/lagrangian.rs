//! The Lagrangian contact response (SOFA's "FrictionContactConstraint" response:
//! Sofa/Component/Collision/Response/Contact/FrictionContact.inl, which fills an
//! UnilateralLagrangianConstraint, .../Constraint/Lagrangian/Model/UnilateralLagrangianConstraint.inl).
//!
//! Each contact is a unilateral constraint between a point Q of the first model's state and a
//! point P of the second's, both weighted sums of their element's vertices (SOFA maps them into
//! child states by barycentric mappings; the rows here are the same sums on the collision
//! states, brought up the collision states' own mappings by the constraint stage). With
//! n the contact normal (first towards second) and d the contact distance (the intersection's
//! contact distance, the models' proximities and sphere radii): the normal row is −n on Q, +n
//! on P, its violation n·(P_free − Q_free) − d; with friction (μ > 0) two tangent rows
//! (SOFA's basis: t0 = (n_z, n_x, n_y), s = normalize(n × t0), t = −n × s) whose violations
//! are the tangential free displacements, scaled back to the moment of contact when the
//! contact starts during the step, as SOFA's getConstraintViolation does. Every contact gives
//! its rows, violated at the free motion or not: one that needs no force gets a zero impulse
//! (SOFA's constraint-matrix visitor builds them all; its isActive is not asked here).
//! A point on a rigid body at lever arm r from its centre (an OBB's contact point) moves as
//! v + ω × r: its rows on the Rigid3 derivative are (dir, r × dir) for each row direction.
//! A self-contact (a model with selfCollision, or two models of one state) has both points on
//! the same state: its rows are a constraint on that one state, the two points' entries summed.
//! The "AugmentedLagrangianResponseConstraint" response builds the same rows
//! (AugmentedLagrangianResponse + AugmentedLagrangianConstraint); with friction its blocks are
//! resolved by the augmented Lagrangian update (`Resolution::AugmentedFriction`).
//! At the velocity level (solveVelocityConstraintFirst) the violations are SOFA's
//! getVelocityViolation: n·(v_P − v_Q + (P − Q)/dt) − d/dt for the normal row and the
//! tangential free relative velocity for the friction rows.

use crate::penalty::{arm, point_d};
use canape_core::collision::{Contact, ContactPoint, ContactResponse};
use canape_core::component::{Passive, Role};
use canape_core::data::{base_fields, DataKind, DataTable};
use canape_core::lagrangian::{
    ConstraintBuild, ConstraintInputs, ConstraintOrder, LagrangianConstraint, Resolution,
};
use canape_core::scene::ComponentId;
use canape_types::Vec3;

/// The Lagrangian contact response of one pair of collision models.
#[derive(Clone)]
pub struct ContactConstraint {
    data: DataTable,
    sides: [ComponentId; 2],
    /// Scalars per point of each state: (coordinate, derivative).
    strides: [(usize, usize); 2],
    mu: f64,
    tolerance: f64,
    /// AugmentedLagrangianResponseConstraint's ε: friction blocks resolved by the augmented
    /// Lagrangian update (without friction its resolution is the plain unilateral one).
    epsilon: Option<f64>,
    contacts: Vec<Contact>,
    /// The pair's place among the contact responses (SOFA's contact map order).
    order_key: (u32, u32),
}

impl ContactConstraint {
    pub fn new(
        first: ComponentId,
        second: ComponentId,
        strides: [(usize, usize); 2],
        mu: f64,
        tolerance: f64,
    ) -> Self {
        ContactConstraint {
            data: base_fields(DataTable::new()).with("name", DataKind::Str, "", "object name"),
            sides: [first, second],
            strides,
            mu,
            tolerance,
            epsilon: None,
            contacts: Vec::new(),
            order_key: (u32::MAX, u32::MAX),
        }
    }

    /// AugmentedLagrangianConstraint's resolution with penalty parameter `epsilon`.
    pub fn augmented(mut self, epsilon: f64) -> Self {
        self.epsilon = Some(epsilon);
        self
    }

    fn point(x: &[f64], stride: usize, p: &ContactPoint) -> Vec3 {
        let mut s = Vec3::zeros();
        for (i, w) in p.iter() {
            if let Some(c) = x.get(stride * i..stride * i + 3) {
                s += Vec3::new(c[0], c[1], c[2]) * w;
            }
        }
        if p.has_offset() {
            s += crate::penalty::arm(x, 0, stride, p);
        }
        s
    }
}

impl canape_core::component::Component for ContactConstraint {
    fn class_name(&self) -> &'static str {
        "UnilateralLagrangianConstraint"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
}

impl Passive for ContactConstraint {
    fn role(&self) -> Role {
        Role::Constraint
    }
    fn lagrangian_constraint(&mut self) -> Option<&mut dyn LagrangianConstraint> {
        Some(self)
    }
    fn contact_response(&mut self) -> Option<&mut dyn ContactResponse> {
        Some(self)
    }
}

impl ContactResponse for ContactConstraint {
    fn set_contacts(&mut self, contacts: &[Contact]) {
        self.contacts.clear();
        self.contacts.extend_from_slice(contacts);
    }
    fn contacts(&self) -> &[Contact] {
        &self.contacts
    }
    fn set_order_key(&mut self, key: (u32, u32)) {
        self.order_key = key;
    }
}

/// One contact's normal and tangential violations.
fn violations(c: &Contact, p: [Vec3; 2], pf: [Vec3; 2], t: &Vec3, s: &Vec3) -> [f64; 3] {
    let n = c.normal;
    let (q, pp) = (p[0], p[1]);
    let (qf, pff) = (pf[0], pf[1]);
    let dfree = n.dot(&(pff - qf)) - c.distance;
    let delta = n.dot(&(pp - q)) - c.distance;
    let dp = pff - pp;
    let dq = qf - q;
    let reference = dp.norm() + dq.norm();
    let plain = [t.dot(&dp) - t.dot(&dq), s.dot(&dp) - s.dot(&dq)];
    let tangential = if delta.abs() < 1e-5 * reference && dfree.abs() < 1e-5 * reference {
        plain
    } else if (delta - dfree).abs() > 0.001 * delta {
        let tau = delta / (delta - dfree);
        if tau > 0.0 && tau < 1.0 {
            [plain[0] * (1.0 - tau), plain[1] * (1.0 - tau)]
        } else if dfree < 0.0 {
            plain
        } else {
            [0.0, 0.0]
        }
    } else {
        plain
    };
    [dfree, tangential[0], tangential[1]]
}

/// SOFA's tangent basis of a contact normal.
fn tangents(n: &Vec3) -> (Vec3, Vec3) {
    let t0 = Vec3::new(n.z, n.x, n.y);
    let s = n.cross(&t0);
    let s = if s.norm() > 0.0 { s.normalize() } else { s };
    let t = (-n).cross(&s);
    (t, s)
}

impl LagrangianConstraint for ContactConstraint {
    fn sides(&self) -> [Option<ComponentId>; 2] {
        // a self-contact (both points on one state) is a constraint on that state
        if self.sides[0] == self.sides[1] {
            return [Some(self.sides[0]), None];
        }
        self.sides.map(Some)
    }
    fn order_key(&self) -> Option<(u32, u32)> {
        Some(self.order_key)
    }
    fn build(&mut self, inputs: &ConstraintInputs<'_>, out: &mut ConstraintBuild) {
        let (c1, c2) = (self.strides[0].0, self.strides[1].0);
        let (d1, d2) = (self.strides[0].1, self.strides[1].1);
        // the second point's side: the first state's for a self-contact
        let o = usize::from(self.sides[0] != self.sides[1]);
        let ends = |c: &Contact, x: [&[f64]; 2]| {
            [
                Self::point(x[0], c1, &c.first),
                Self::point(x[o], c2, &c.second),
            ]
        };
        // every contact gives its rows, violated at the free motion or not (SOFA's
        // MechanicalBuildConstraintMatrix builds them all; a contact that needs no force gets
        // a zero impulse from the solver)
        for c in &self.contacts {
            let n = c.normal;
            let (t, s) = tangents(&n);
            // lever arms of points on rigid bodies (rows [n, (r × n)] on their derivative)
            let arms = [
                arm(inputs.x[0], 0, c1, &c.first),
                arm(inputs.x[o], 0, c2, &c.second),
            ];
            let v = if inputs.order == ConstraintOrder::Velocity {
                let [q, p] = ends(c, inputs.x);
                let vq = point_d(inputs.v_free[0], 0, d1, &c.first, arms[0]);
                let vp = point_d(inputs.v_free[o], 0, d2, &c.second, arms[1]);
                let rel = vp - vq;
                let normal = n.dot(&(rel + (p - q) / inputs.dt)) - c.distance / inputs.dt;
                [normal, rel.dot(&t), rel.dot(&s)]
            } else {
                violations(c, ends(c, inputs.x), ends(c, inputs.x_free), &t, &s)
            };
            let dirs: &[Vec3] = if self.mu > 0.0 { &[n, t, s] } else { &[n] };
            let resolution = if self.mu > 0.0 {
                match self.epsilon {
                    Some(epsilon) => Resolution::AugmentedFriction {
                        mu: self.mu,
                        epsilon,
                    },
                    None => Resolution::Friction { mu: self.mu },
                }
            } else {
                Resolution::Unilateral
            };
            let first = out.block(resolution, &v[..dirs.len()], &[]);
            if let Some(b) = out.blocks.last_mut() {
                b.tolerance = self.tolerance;
            }
            for (k, dir) in dirs.iter().enumerate() {
                for (i, w) in c.first.iter() {
                    for a in 0..3 {
                        out.entry(first + k, 0, d1 * i + a, -w * dir[a]);
                    }
                }
                for (i, w) in c.second.iter() {
                    for a in 0..3 {
                        out.entry(first + k, o as u8, d2 * i + a, w * dir[a]);
                    }
                }
                // a point at lever arm r moves as v + ω × r: its row on ω is r × dir
                for (side, (p, d, arm)) in [(&c.first, d1, arms[0]), (&c.second, d2, arms[1])]
                    .into_iter()
                    .enumerate()
                {
                    if arm == Vec3::zeros() || d < 6 {
                        continue;
                    }
                    let sign = if side == 0 { -1.0 } else { 1.0 };
                    let rot = arm.cross(dir) * sign;
                    let i = p.index[0] as usize;
                    let state = if side == 0 { 0 } else { o as u8 };
                    for a in 0..3 {
                        out.entry(first + k, state, d * i + 3 + a, rot[a]);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tangents_are_an_orthonormal_basis_with_the_normal() {
        for n in [
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(1.0, 2.0, -3.0).normalize(),
            Vec3::new(0.0, 0.0, -1.0),
        ] {
            let (t, s) = tangents(&n);
            assert!((t.norm() - 1.0).abs() < 1e-12 && (s.norm() - 1.0).abs() < 1e-12);
            assert!(t.dot(&n).abs() < 1e-12 && s.dot(&n).abs() < 1e-12 && t.dot(&s).abs() < 1e-12);
        }
    }

    #[test]
    fn a_contact_reached_during_the_step_keeps_the_tangential_motion_after_it() {
        // the point goes from 1 above the contact distance to 1 below, sliding by 2 along x:
        // contact at mid-step, so half of the slide is the tangential violation
        let c = Contact {
            first: ContactPoint::vertex(0),
            second: ContactPoint::vertex(0),
            normal: Vec3::new(0.0, 1.0, 0.0),
            distance: 0.0,
            stiffness: 0.0,
            elements: [0, 0],
            gap: Vec3::zeros(),
        };
        let (t, s) = tangents(&c.normal);
        let p = [Vec3::zeros(), Vec3::new(0.0, 1.0, 0.0)];
        let pf = [Vec3::zeros(), Vec3::new(2.0, -1.0, 0.0)];
        let v = violations(&c, p, pf, &t, &s);
        assert_eq!(v[0], -1.0);
        let slide = (v[1] * v[1] + v[2] * v[2]).sqrt();
        assert!((slide - 1.0).abs() < 1e-12, "{v:?}");
    }

    /// A contact on a point at an offset of a rigid body: its rows are −dir on the point and
    /// (dir, r × dir) on the body's derivative, r the offset turned by the body's orientation,
    /// and the normal violation is measured at the offset point of the free motion.
    #[test]
    fn a_contact_at_an_offset_has_rotational_rows_on_the_rigid_body() {
        use canape_core::collision::rotate;
        let (a, b) = crate::penalty::tests::two_ids();
        let mut cc = ContactConstraint::new(a, b, [(3, 3), (7, 6)], 0.5, 1e-6);
        let local = Vec3::new(0.3, -0.4, 0.2);
        let n = Vec3::new(0.0, 1.0, 0.0);
        cc.set_contacts(&[Contact {
            first: ContactPoint::vertex(0),
            second: ContactPoint::rigid(0, local),
            normal: n,
            distance: 0.1,
            stiffness: 0.0,
            elements: [0, 0],
            gap: Vec3::zeros(),
        }]);
        let h = 0.7_f64;
        let q = [(h / 2.0).sin(), 0.0, 0.0, (h / 2.0).cos()];
        let hf = 0.75_f64;
        let qf = [(hf / 2.0).sin(), 0.0, 0.0, (hf / 2.0).cos()];
        let (p, pf) = ([0.0, 0.0, 0.0], [0.0, 0.01, 0.0]);
        let x = [0.0, 1.0, 0.0, q[0], q[1], q[2], q[3]];
        let xf = [0.0, 0.9, 0.0, qf[0], qf[1], qf[2], qf[3]];
        let inputs = ConstraintInputs {
            x_free: [&pf, &xf],
            v_free: [&[0.0; 3], &[0.0; 6]],
            x: [&p, &x],
            dt: 0.01,
            order: ConstraintOrder::PositionAndVelocity,
        };
        let mut out = ConstraintBuild::default();
        cc.build(&inputs, &mut out);
        assert_eq!(out.rows(), 3);
        let r = rotate(q, local);
        let free_point = Vec3::new(0.0, 0.9, 0.0) + rotate(qf, local);
        let want = n.dot(&(free_point - Vec3::new(0.0, 0.01, 0.0))) - 0.1;
        assert!(
            (out.dfree[0] - want).abs() < 1e-12,
            "{:?} {want}",
            out.dfree
        );
        let (t, s) = tangents(&n);
        for (row, dir) in [n, t, s].iter().enumerate() {
            let mut on_body = [0.0; 6];
            let mut on_point = [0.0; 3];
            for e in out.entries.iter().filter(|e| e.row as usize == row) {
                if e.side == 1 {
                    on_body[e.dof as usize] += e.value;
                } else {
                    on_point[e.dof as usize] += e.value;
                }
            }
            let turn = r.cross(dir);
            let body = [dir.x, dir.y, dir.z, turn.x, turn.y, turn.z];
            for k in 0..6 {
                assert!(
                    (on_body[k] - body[k]).abs() < 1e-12,
                    "row {row}: {on_body:?}"
                );
            }
            for k in 0..3 {
                assert!(
                    (on_point[k] + dir[k]).abs() < 1e-12,
                    "row {row}: {on_point:?}"
                );
            }
        }
        // the lever arm matters here
        assert!(r.cross(&n).norm() > 0.1);
    }
}
