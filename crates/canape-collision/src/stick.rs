//! StickContactForceField, SOFA's sticking contact response (Sofa/Component/Collision/Response/
//! Contact/BarycentricStickContact.inl, with the VectorSpringForceField it creates,
//! Sofa/Component/SolidMechanics/Spring/VectorSpringForceField.inl): each contact becomes a
//! spring between its two points whose rest vector is the points' offset when the contact was
//! detected, so the two bodies resist any relative motion from there.
//!
//! SOFA's response, for one pair of collision models:
//! - every collision step that gives the pair contacts replaces all its springs by one per
//!   contact (the closest output per contact id, in output order), stiffness the SUM of the two
//!   models' `contactStiffness`, damping the sum of their `contactFriction`, rest vector the
//!   detected second point minus the first;
//! - a step with no contact for the pair keeps the springs as they are (`keepAlive`, true by
//!   default: the bodies stay glued where they last touched), unless `keepAlive` is false,
//!   when the response goes away as a penalty response does;
//! - force on the first point `k·(p₂ − p₁ − rest) + kd·(v₂ − v₁)`, its opposite on the second;
//!   the stiffness is `k·I` between the two points (the damping term is not in the tangent, as
//!   in SOFA's addDForce).
//!
//! As for the penalty response, a contact point is the weighted sum of its element's vertices
//! applied directly on the collision models' states (SOFA maps it into a child state).

use crate::penalty::{add_pair_stiffness, arm, pair_interaction, point, point_d, spread};
use canape_core::collision::{Contact, ContactResponse};
use canape_core::component::{Component, ForceField, Interaction, Reaction};
use canape_core::data::{base_fields, ChangedData, DataKind, DataTable};
use canape_core::matrix::MatrixSink;
use canape_core::scene::ComponentId;
use canape_types::Vec3;

/// The sticking response of one pair of collision models.
#[derive(Clone)]
pub struct StickContactForceField {
    data: DataTable,
    first: ComponentId,
    second: ComponentId,
    /// Whether each state receives no force (a model that is not simulated).
    passive: [bool; 2],
    /// Points of the first state (the second state's start in the concatenated vectors; 0
    /// when both ends are on one state).
    first_points: usize,
    /// Scalars per point of each state: (coordinate, derivative).
    strides: [(usize, usize); 2],
    /// Spring stiffness and damping (sums of the two models' contactStiffness and
    /// contactFriction).
    stiffness: f64,
    damping: f64,
    /// Whether the springs stay when the pair has no contact (SOFA's `keepAlive`).
    keep_alive: bool,
    /// One spring per contact: its two points and its rest vector (`gap`).
    springs: Vec<Contact>,
    /// Lever arms of each spring's two ends at the last `add_force` (zero but on rigid
    /// bodies).
    arms: Vec<[Vec3; 2]>,
}

impl StickContactForceField {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        first: ComponentId,
        second: ComponentId,
        first_points: usize,
        strides: [(usize, usize); 2],
        passive: [bool; 2],
        stiffness: f64,
        damping: f64,
        keep_alive: bool,
    ) -> Self {
        StickContactForceField {
            data: base_fields(DataTable::new())
                .with("name", DataKind::Str, "", "object name")
                .with(
                    "keepAlive",
                    DataKind::Bool,
                    if keep_alive { "1" } else { "0" },
                    "set to true to keep this contact alive even after collisions are no longer detected",
                ),
            first,
            second,
            passive,
            first_points: if first == second { 0 } else { first_points },
            strides,
            stiffness,
            damping,
            keep_alive,
            springs: Vec::new(),
            arms: Vec::new(),
        }
    }

    /// The states this response couples.
    pub fn states(&self) -> (ComponentId, ComponentId) {
        (self.first, self.second)
    }

    /// Offsets of the second state in the concatenated coordinate and derivative vectors.
    fn bases(&self) -> (usize, usize) {
        let [(c1, d1), _] = self.strides;
        (self.first_points * c1, self.first_points * d1)
    }
}

impl Component for StickContactForceField {
    fn class_name(&self) -> &'static str {
        "StickContactForceField"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    /// `keepAlive` edited while running takes effect at the next collision stage.
    fn data_changed(&mut self, _changed: &ChangedData) -> Reaction {
        self.keep_alive = self.data.bool("keepAlive");
        Reaction::Updated
    }
}

impl ContactResponse for StickContactForceField {
    fn set_contacts(&mut self, contacts: &[Contact]) {
        // no contact this step: SOFA's keepAlive contact keeps its springs
        if contacts.is_empty() && self.keep_alive {
            return;
        }
        self.springs.clear();
        self.springs.extend_from_slice(contacts);
        self.arms.clear();
        self.arms.resize(contacts.len(), [Vec3::zeros(); 2]);
    }
    fn contacts(&self) -> &[Contact] {
        &self.springs
    }
}

impl ForceField for StickContactForceField {
    fn interaction(&self) -> Option<Interaction> {
        pair_interaction(self.first, self.second, self.passive[1])
    }

    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]) {
        let [(c1, d1), (c2, d2)] = self.strides;
        let (bx, bv) = self.bases();
        for (s, arms) in self.springs.iter().zip(self.arms.iter_mut()) {
            *arms = [arm(x, 0, c1, &s.first), arm(x, bx, c2, &s.second)];
            let stretch = point(x, bx, c2, &s.second) - point(x, 0, c1, &s.first) - s.gap;
            let mut force = stretch * self.stiffness;
            if self.damping != 0.0 {
                let dv =
                    point_d(v, bv, d2, &s.second, arms[1]) - point_d(v, 0, d1, &s.first, arms[0]);
                force += dv * self.damping;
            }
            if !self.passive[0] {
                spread(f, 0, d1, &s.first, force, arms[0]);
            }
            if !self.passive[1] {
                spread(f, bv, d2, &s.second, -force, arms[1]);
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let [(_, d1), (_, d2)] = self.strides;
        let (_, b) = self.bases();
        let k = self.stiffness * k_factor;
        for (s, arms) in self.springs.iter().zip(&self.arms) {
            let d = point_d(dx, b, d2, &s.second, arms[1]) - point_d(dx, 0, d1, &s.first, arms[0]);
            let dforce: Vec3 = d * k;
            if !self.passive[0] {
                spread(df, 0, d1, &s.first, dforce, arms[0]);
            }
            if !self.passive[1] {
                spread(df, b, d2, &s.second, -dforce, arms[1]);
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        let [(_, d1), (_, d2)] = self.strides;
        let (_, b) = self.bases();
        // ∂f₁/∂x₁ = −k·I, ∂f₁/∂x₂ = k·I and the opposite for f₂, spread over the weights
        // (through J = [I, −[r]×] at a lever arm r)
        for (s, arms) in self.springs.iter().zip(&self.arms) {
            let ends = [
                (0usize, d1, &s.first, self.passive[0], arms[0]),
                (b, d2, &s.second, self.passive[1], arms[1]),
            ];
            let identity = |e: f64, a: usize, bb: usize| if a == bb { e } else { 0.0 };
            add_pair_stiffness(m, offset, ends, self.stiffness * k_factor, identity);
        }
    }

    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        let [(c1, _), (c2, _)] = self.strides;
        let (bx, _) = self.bases();
        Some(
            self.springs
                .iter()
                .map(|s| {
                    let d = point(x, bx, c2, &s.second) - point(x, 0, c1, &s.first) - s.gap;
                    0.5 * self.stiffness * d.norm_squared()
                })
                .sum(),
        )
    }

    fn contact_response(&mut self) -> Option<&mut dyn ContactResponse> {
        Some(self)
    }

    fn contacts(&self) -> &[Contact] {
        &self.springs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::collision::ContactPoint;
    use canape_core::scene::{AnyComponent, Scene};
    use canape_core::state::MechanicalObject;
    use canape_types::DofType;
    use canape_types::Mat3;

    /// Two state handles of a throwaway scene.
    fn two_ids() -> (ComponentId, ComponentId) {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut add = |n: &str| {
            let st = AnyComponent::State(MechanicalObject::new(DofType::Vec3));
            scene.add_component(root, n, st, None)
        };
        (add("a"), add("b"))
    }

    struct Dense(Vec<Vec<f64>>);
    impl MatrixSink for Dense {
        fn add(&mut self, r: usize, c: usize, v: f64) {
            self.0[r][c] += v;
        }
    }

    /// A triangle's point (first state, 3 points) stuck to a point (second state, 1 point).
    fn triangle_and_point(keep_alive: bool, x: &[f64]) -> StickContactForceField {
        let (a, b) = two_ids();
        let mut s = StickContactForceField::new(
            a,
            b,
            3,
            [(3, 3), (3, 3)],
            [false, false],
            7.0,
            0.0,
            keep_alive,
        );
        let first = ContactPoint {
            index: [0, 1, 2],
            weight: [0.2, 0.3, 0.5],
            count: 3,
            offset: Vec3::zeros(),
        };
        let second = ContactPoint::vertex(0);
        let p1 = point(x, 0, 3, &first);
        let p2 = point(x, 9, 3, &second);
        s.set_contacts(&[Contact {
            first,
            second,
            normal: Vec3::new(0.0, 1.0, 0.0),
            distance: 0.0,
            stiffness: 0.0,
            elements: [0, 0],
            gap: p2 - p1,
        }]);
        s
    }

    fn positions() -> Vec<f64> {
        vec![0.0, 0.0, 0.0, 1.0, 0.1, 0.0, 0.0, -0.2, 1.0, 0.3, 0.7, 0.2]
    }

    fn force(s: &mut StickContactForceField, x: &[f64]) -> Vec<f64> {
        let mut f = vec![0.0; 12];
        s.add_force(x, &[0.0; 12], &mut f);
        f
    }

    #[test]
    fn the_points_rest_at_their_detected_offset_and_are_pulled_back_to_it() {
        let mut x = positions();
        let mut s = triangle_and_point(true, &x);
        assert!(force(&mut s, &x).iter().all(|v| v.abs() < 1e-15));
        // the point moved by 0.1 along z: pulled back by 7·0.1, the triangle pulled after it
        x[11] += 0.1;
        let f = force(&mut s, &x);
        assert!((f[11] + 0.7).abs() < 1e-12, "{f:?}");
        let on_triangle: f64 = [2, 5, 8].iter().map(|&k| f[k]).sum();
        assert!((on_triangle - 0.7).abs() < 1e-12);
        assert!((f[8] - 0.5 * 0.7).abs() < 1e-12);
        assert!(f.iter().sum::<f64>().abs() < 1e-12, "no net force");
    }

    #[test]
    fn an_edited_keep_alive_takes_effect() {
        let x = positions();
        let mut s = triangle_and_point(true, &x);
        s.data_mut().set_str("keepAlive", "0").unwrap();
        let changed = ChangedData::from_indices(vec![s.data().index_of("keepAlive").unwrap()]);
        assert_eq!(s.data_changed(&changed), Reaction::Updated);
        s.set_contacts(&[]);
        assert!(ContactResponse::contacts(&s).is_empty());
    }

    #[test]
    fn springs_outlive_the_contacts_only_when_kept_alive() {
        let x = positions();
        let mut kept = triangle_and_point(true, &x);
        kept.set_contacts(&[]);
        assert_eq!(ContactResponse::contacts(&kept).len(), 1);
        let mut dropped = triangle_and_point(false, &x);
        dropped.set_contacts(&[]);
        assert!(ContactResponse::contacts(&dropped).is_empty());
    }

    #[test]
    fn the_tangent_and_the_matrix_are_the_derivative_of_the_force() {
        let x0 = positions();
        let mut s = triangle_and_point(true, &x0);
        let mut x = x0.clone();
        x[9] += 0.05;
        x[1] -= 0.03;
        let dx: Vec<f64> = (0..12).map(|k| ((k * 7 % 5) as f64 - 2.0) * 0.1).collect();
        let f0 = force(&mut s, &x);
        let h = 1e-6;
        let xh: Vec<f64> = x.iter().zip(&dx).map(|(a, d)| a + h * d).collect();
        let fh = force(&mut s, &xh);
        let mut df = vec![0.0; 12];
        s.add_dforce(&dx, &mut df, 1.0);
        let mut m = Dense(vec![vec![0.0; 12]; 12]);
        s.add_k_to_matrix(&mut m, 1.0, 0);
        for k in 0..12 {
            let fd = (fh[k] - f0[k]) / h;
            assert!((fd - df[k]).abs() < 1e-6, "row {k}: {fd} vs {}", df[k]);
            let mdx: f64 = (0..12).map(|c| m.0[k][c] * dx[c]).sum();
            assert!((mdx - df[k]).abs() < 1e-12, "row {k}: {mdx} vs {}", df[k]);
        }
    }

    /// A spring at an offset of a rigid body pulls its centre and turns it: force f and torque
    /// r × f, r the offset turned by the body's orientation; its tangent on the body's
    /// rotation is [r]×·k·(−[r]×) (Jᵀ k J with J = [I, −[r]×]).
    #[test]
    fn a_spring_at_an_offset_pulls_and_turns_a_rigid_body() {
        use canape_core::collision::rotate;
        let (a, b) = two_ids();
        let mut s =
            StickContactForceField::new(a, b, 1, [(3, 3), (7, 6)], [false; 2], 5.0, 0.0, true);
        let local = Vec3::new(0.3, -0.4, 0.2);
        let h = 0.6_f64;
        let q = [0.0, (h / 2.0).sin(), 0.0, (h / 2.0).cos()];
        let r = rotate(q, local);
        s.set_contacts(&[Contact {
            first: ContactPoint::vertex(0),
            second: ContactPoint::rigid(0, local),
            normal: Vec3::new(0.0, 1.0, 0.0),
            distance: 0.0,
            stiffness: 0.0,
            elements: [0, 0],
            gap: Vec3::zeros(),
        }]);
        // the body's offset point sits 0.2 above the point along y: pulled down by 5·0.2
        let c = Vec3::new(0.0, 0.2, 0.0) - r;
        let x = [0.0, 0.0, 0.0, c.x, c.y, c.z, q[0], q[1], q[2], q[3]];
        let mut f = vec![0.0; 9];
        s.add_force(&x, &[0.0; 9], &mut f);
        let pull = Vec3::new(0.0, -1.0, 0.0);
        let torque = r.cross(&pull);
        let want = [0.0, 1.0, 0.0, 0.0, -1.0, 0.0, torque.x, torque.y, torque.z];
        for k in 0..9 {
            assert!((f[k] - want[k]).abs() < 1e-12, "{f:?} {want:?}");
        }
        assert!(torque.norm() > 0.1);
        let mut m = Dense(vec![vec![0.0; 9]; 9]);
        s.add_k_to_matrix(&mut m, 1.0, 0);
        let rx = Mat3::new(0.0, -r.z, r.y, r.z, 0.0, -r.x, -r.y, r.x, 0.0);
        let want = rx * rx * 5.0;
        for i in 0..3 {
            for j in 0..3 {
                assert!(
                    (m.0[6 + i][6 + j] - want[(i, j)]).abs() < 1e-12,
                    "{:?}",
                    m.0
                );
            }
        }
        // add_dforce is the matrix's product
        for d in 0..9 {
            let mut dx = vec![0.0; 9];
            dx[d] = 1.0;
            let mut df = vec![0.0; 9];
            s.add_dforce(&dx, &mut df, 1.0);
            for row in 0..9 {
                assert!((df[row] - m.0[row][d]).abs() < 1e-12, "K[{row}][{d}]");
            }
        }
    }
}
