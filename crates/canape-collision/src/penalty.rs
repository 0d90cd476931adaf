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
use canape_types::Vec3;

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
    /// for Rigid3 (a contact acts on the translation part).
    strides: [(usize, usize); 2],
    contacts: Vec<Contact>,
    /// Penetration of each contact at the last `add_force` (SOFA's `contact.pen`); the
    /// stiffness acts where it is positive.
    pen: Vec<f64>,
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
        }
    }

    /// The states this response couples.
    pub fn states(&self) -> (ComponentId, ComponentId) {
        (self.first, self.second)
    }
}

/// A contact end's position (an index beyond the vector, after the state was resized,
/// reads as zero rather than failing: the next collision stage renews the contacts).
pub(crate) fn point(x: &[f64], base: usize, stride: usize, p: &ContactPoint) -> Vec3 {
    let mut s = Vec3::zeros();
    for (i, w) in p.iter() {
        let o = base + stride * i;
        if let Some(c) = x.get(o..o + 3) {
            s += w * Vec3::new(c[0], c[1], c[2]);
        }
    }
    s
}

/// Add a two-point spring's stiffness to `m`: ∂f₁/∂x₁ = −k·B, ∂f₁/∂x₂ = k·B and the opposite
/// for f₂, the entry (a, b) of the scaled block e·B being `block(e, a, b)`, each end spread over its points' weights; `ends` are each
/// end's (offset of its state, derivative stride, points, passive: no rows).
pub(crate) fn add_pair_stiffness(
    m: &mut dyn MatrixSink,
    offset: usize,
    ends: [(usize, usize, &ContactPoint, bool); 2],
    k: f64,
    block: impl Fn(f64, usize, usize) -> f64,
) {
    let sign = [-1.0, 1.0];
    for (r, &(rb, rd, rp, passive)) in ends.iter().enumerate() {
        if passive {
            continue;
        }
        for (ri, rw) in rp.iter() {
            for (c, &(cb, cd, cp, _)) in ends.iter().enumerate() {
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

/// Add `v` to a contact end's points, by their weights.
pub(crate) fn spread(f: &mut [f64], base: usize, stride: usize, p: &ContactPoint, v: Vec3) {
    for (i, w) in p.iter() {
        let o = base + stride * i;
        if let Some(c) = f.get_mut(o..o + 3) {
            c[0] += w * v.x;
            c[1] += w * v.y;
            c[2] += w * v.z;
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
        for (c, pen) in self.contacts.iter().zip(self.pen.iter_mut()) {
            let u = point(x, bx, c2, &c.second) - point(x, 0, c1, &c.first);
            *pen = c.distance - u.dot(&c.normal);
            if *pen > 0.0 {
                let force = -c.normal * (c.stiffness * *pen);
                if !self.first_passive {
                    spread(f, 0, d1, &c.first, force);
                }
                if !self.second_passive {
                    spread(f, bf, d2, &c.second, -force);
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let [(_, d1), (_, d2)] = self.strides;
        let b = self.first_points * d1;
        for (c, &pen) in self.contacts.iter().zip(&self.pen) {
            if pen <= 0.0 {
                continue;
            }
            let du = point(dx, b, d2, &c.second) - point(dx, 0, d1, &c.first);
            let dpen = -du.dot(&c.normal);
            let dforce = -c.normal * (c.stiffness * dpen * k_factor);
            if !self.first_passive {
                spread(df, 0, d1, &c.first, dforce);
            }
            if !self.second_passive {
                spread(df, b, d2, &c.second, -dforce);
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        let [(_, d1), (_, d2)] = self.strides;
        let b = self.first_points * d1;
        // ∂f1/∂x1 = −k n nᵀ, ∂f1/∂x2 = k n nᵀ, and the opposite for f2, spread over the
        // weights of each end
        for (c, &pen) in self.contacts.iter().zip(&self.pen) {
            if pen <= 0.0 {
                continue;
            }
            let n = c.normal;
            let ends = [
                (0usize, d1, &c.first, self.first_passive),
                (b, d2, &c.second, self.second_passive),
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
