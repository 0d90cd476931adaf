//! BilateralLagrangianConstraint (Sofa/Component/Constraint/Lagrangian/Model/.../
//! BilateralLagrangianConstraint.inl and .cpp): point `first_point[k]` of `object1` and point
//! `second_point[k]` of `object2` are held together (minus `rest_vector[k]`), pair by pair for
//! the shorter of the two lists.
//!
//! Vec3: three rows per pair (−e_k on the first point, +e_k on the second), violation
//! x2_free − x1_free − rest, one 3-line block solved with the inverse of its W block and warm
//! started from the last step's impulses. Rigid3: six rows (translation, then rotation about
//! the world axes), violation (c2 − c1, q1 · rotation vector of q1⁻¹ q2) minus rest, two 3-line
//! blocks without warm start, the rotational one with its own tolerance `numericalTolerance`.

use crate::base_data;
use canape_core::component::{Passive, Reaction, Role};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Ints, Real, Reals, Text};
use canape_core::impl_component;
use canape_core::lagrangian::{
    ConstraintBuild, ConstraintInputs, ConstraintOrder, LagrangianConstraint, Resolution,
};
use canape_core::scene::{ComponentId, InitContext};
use canape_types::dof::{quat_of, rigid3_rotate};
use canape_types::DofType;

canape_core::data_schema! {
    /// BilateralLagrangianConstraint's own Data (after the base Data).
    pub struct BilateralData {
        object1: Text = ("object1", DataKind::Str, "", "First object in interaction"),
        object2: Text = ("object2", DataKind::Str, "", "Second object in interaction"),
        first_point: Ints = ("first_point", DataKind::Ints(0), "", "index of the constraint on the first model (object1)"),
        second_point: Ints = ("second_point", DataKind::Ints(0), "", "index of the constraint on the second model (object2)"),
        rest_vector: Reals = ("rest_vector", DataKind::Reals(0), "", "Relative position to maintain between attached points (optional)"),
        activate: Flag = ("activate", DataKind::Bool, "1", "control constraint activation (true by default)"),
        keep_orientation_difference: Flag = ("keepOrientationDifference", DataKind::Bool, "0", "keep the initial difference in orientation (only for rigids)"),
        numerical_tolerance: Real = ("numericalTolerance", DataKind::Real, "0.0001", "a real value specifying the tolerance during the constraint solving."),
        end_time: Real = ("endTime", DataKind::Real, "-1", "The constraint stops acting after the given value. Use a negative value for infinite constraints"),
        topology1: Text = ("topology1", DataKind::Str, "", "link to the first topology container"),
        topology2: Text = ("topology2", DataKind::Str, "", "link to the second topology container"),
        group: Ints = ("group", DataKind::Ints(0), "", "group of the constraint"),
    }
}

#[derive(Clone)]
pub struct BilateralLagrangianConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: BilateralData,
    sides: [Option<ComponentId>; 2],
    dof: DofType,
    pairs: Vec<(u32, u32)>,
    rest: Vec<f64>,
    active: bool,
    tolerance: f64,
    /// Last step's impulses per pair (Vec3 warm start).
    prev: Vec<[f64; 3]>,
}

impl Default for BilateralLagrangianConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl BilateralLagrangianConstraint {
    pub fn new() -> Self {
        let (data, d) = BilateralData::declare(base_data(DataTable::new()));
        BilateralLagrangianConstraint {
            data,
            d,
            sides: [None, None],
            dof: DofType::Vec3,
            pairs: Vec::new(),
            rest: Vec::new(),
            active: true,
            tolerance: 1e-4,
            prev: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.sides = [None, None];
        self.pairs.clear();
        let context = ctx.scene.context_state(ctx.node);
        let mut sides = [context, context];
        let links = [("object1", self.d.object1), ("object2", self.d.object2)];
        for (k, (name, handle)) in links.into_iter().enumerate() {
            let l = self.data.get(handle).trim().to_string();
            if l.is_empty() {
                continue;
            }
            sides[k] = match ctx.link_state_or_node(name, &l) {
                Ok(link) => link.map(|l| l.id()),
                Err(e) => {
                    ctx.error(e.to_string());
                    return;
                }
            };
        }
        let [Some(a), Some(b)] = sides else {
            ctx.error("no MechanicalObject in the context (and no object1/object2 link)");
            return;
        };
        let (sa, sb) = (
            ctx.scene.state(a).expect("state"),
            ctx.scene.state(b).expect("state"),
        );
        if sa.dof != sb.dof || !matches!(sa.dof, DofType::Vec3 | DofType::Rigid3) {
            ctx.error(format!(
                "BilateralLagrangianConstraint links two Vec3 or two Rigid3 states; these are {} and {}",
                sa.dof.name(),
                sb.dof.name()
            ));
            return;
        }
        self.dof = sa.dof;
        let (p1, p2) = (
            self.data.get(self.d.first_point),
            self.data.get(self.d.second_point),
        );
        if p1.len() != p2.len() {
            ctx.warn(format!(
                "first_point has {} indices and second_point {}: the first {} pairs are used",
                p1.len(),
                p2.len(),
                p1.len().min(p2.len())
            ));
        }
        for (&i, &j) in p1.iter().zip(p2) {
            if i as usize >= sa.size() || j as usize >= sb.size() {
                ctx.error(format!(
                    "pair ({i}, {j}) is out of range (the states have {} and {} points): it is ignored",
                    sa.size(),
                    sb.size()
                ));
                continue;
            }
            self.pairs.push((i, j));
        }
        self.rest = self.data.get(self.d.rest_vector).to_vec();
        self.active = self.data.get(self.d.activate);
        self.tolerance = self.data.get(self.d.numerical_tolerance);
        if self.data.get(self.d.end_time) >= 0.0 {
            ctx.warn("endTime is not supported yet: the constraint acts for the whole run");
        }
        if self.data.get(self.d.keep_orientation_difference) {
            ctx.warn(
                "keepOrientationDifference is not supported yet: the orientations are held equal",
            );
        }
        self.prev = vec![[0.0; 3]; self.pairs.len()];
        self.sides = [Some(a), Some(b)];
    }
}

impl BilateralLagrangianConstraint {
    /// `activate`, `numericalTolerance` and `rest_vector` take effect in place (the warm start
    /// restarts from zero, as after init); the rest re-initialises.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        let in_place = [
            d.activate.index(),
            d.numerical_tolerance.index(),
            d.rest_vector.index(),
        ];
        if !changed.only(&in_place) || self.sides[0].is_none() {
            return Reaction::Reinit;
        }
        self.rest = self.data.get(d.rest_vector).to_vec();
        self.active = self.data.get(d.activate);
        self.tolerance = self.data.get(d.numerical_tolerance);
        self.prev = vec![[0.0; 3]; self.pairs.len()];
        Reaction::Updated
    }
}

impl_component!(
    BilateralLagrangianConstraint,
    "BilateralLagrangianConstraint",
    init,
    data_changed
);

impl Passive for BilateralLagrangianConstraint {
    fn role(&self) -> Role {
        Role::Constraint
    }
    fn lagrangian_constraint(&mut self) -> Option<&mut dyn LagrangianConstraint> {
        Some(self)
    }
}

/// The rotation vector (axis · angle, shortest path) of a unit quaternion (SOFA's
/// Quat::toEulerVector).
pub(super) fn rotation_vector(q: &nalgebra::Quaternion<f64>) -> [f64; 3] {
    let q = if q.w < 0.0 { -*q } else { *q };
    let s = (q.i * q.i + q.j * q.j + q.k * q.k).sqrt();
    if s < 1e-15 {
        return [2.0 * q.i, 2.0 * q.j, 2.0 * q.k];
    }
    let angle = 2.0 * s.atan2(q.w);
    [q.i / s * angle, q.j / s * angle, q.k / s * angle]
}

impl LagrangianConstraint for BilateralLagrangianConstraint {
    fn sides(&self) -> [Option<ComponentId>; 2] {
        self.sides
    }
    fn build(&mut self, inputs: &ConstraintInputs<'_>, out: &mut ConstraintBuild) {
        if !self.active || self.sides[0].is_none() {
            return;
        }
        let [x1, x2] = inputs.x_free;
        for (pid, &(i, j)) in self.pairs.iter().enumerate() {
            let (i, j) = (i as usize, j as usize);
            match self.dof {
                DofType::Rigid3 => {
                    let (Some(c1), Some(c2)) = (x1.get(7 * i..7 * i + 7), x2.get(7 * j..7 * j + 7))
                    else {
                        continue;
                    };
                    let c1: [f64; 7] = c1.try_into().expect("7");
                    let c2: [f64; 7] = c2.try_into().expect("7");
                    let rest = |k: usize| self.rest.get(6 * pid + k).copied().unwrap_or(0.0);
                    let mut q2 = quat_of(&c2);
                    let q1 = quat_of(&c1);
                    if q2.coords.dot(&q1.coords) < 0.0 {
                        q2 = -q2;
                    }
                    let diff = q1.conjugate() * q2 / q1.norm_squared();
                    let rv = rotation_vector(&diff);
                    let rw = rigid3_rotate(&c1, &nalgebra::Vector3::new(rv[0], rv[1], rv[2]));
                    let dt: [f64; 3] = std::array::from_fn(|k| c2[k] - c1[k] - rest(k));
                    let dr: [f64; 3] = std::array::from_fn(|k| rw[k] - rest(3 + k));
                    let r0 = out.block(Resolution::Bilateral { rows: 3 }, &dt, &[]);
                    let r1 = out.block(Resolution::Bilateral { rows: 3 }, &dr, &[]);
                    if let Some(b) = out.blocks.last_mut() {
                        b.tolerance = self.tolerance;
                    }
                    for k in 0..3 {
                        out.entry(r0 + k, 0, 6 * i + k, -1.0);
                        out.entry(r0 + k, 1, 6 * j + k, 1.0);
                        out.entry(r1 + k, 0, 6 * i + 3 + k, -1.0);
                        out.entry(r1 + k, 1, 6 * j + 3 + k, 1.0);
                    }
                }
                _ => {
                    let (Some(p1), Some(p2)) = (x1.get(3 * i..3 * i + 3), x2.get(3 * j..3 * j + 3))
                    else {
                        continue;
                    };
                    let rest = |k: usize| self.rest.get(3 * pid + k).copied().unwrap_or(0.0);
                    let d: [f64; 3] = if inputs.order == ConstraintOrder::Velocity {
                        // SOFA's getVelocityViolation: v2 − v1 + (x2 − x1 − (−rest))/dt at the
                        // step's start (its `dPos -= -rest` adds the rest vector: reproduced)
                        let (x1, x2) = (inputs.x[0], inputs.x[1]);
                        let (v1, v2) = (inputs.v_free[0], inputs.v_free[1]);
                        let at = |s: &[f64], k: usize| s.get(k).copied().unwrap_or(0.0);
                        std::array::from_fn(|k| {
                            let dp = (at(x2, 3 * j + k) - at(x1, 3 * i + k) + rest(k)) / inputs.dt;
                            at(v2, 3 * j + k) - at(v1, 3 * i + k) + dp
                        })
                    } else {
                        std::array::from_fn(|k| p2[k] - p1[k] - rest(k))
                    };
                    let r = out.block(Resolution::Bilateral { rows: 3 }, &d, &self.prev[pid]);
                    for k in 0..3 {
                        out.entry(r + k, 0, 3 * i + k, -1.0);
                        out.entry(r + k, 1, 3 * j + k, 1.0);
                    }
                }
            }
        }
    }
    fn store(&mut self, impulses: &[f64]) {
        if self.dof == DofType::Vec3 {
            for (p, f) in self.prev.iter_mut().zip(impulses.chunks_exact(3)) {
                p.copy_from_slice(f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{check_edit_changes, edit, init_quiet, scene_with_state};
    use canape_core::scene::AnyComponent;

    /// What a constraint gives the constraint stage at `x` (the same free positions for both
    /// sides: the context state), the reals as bits.
    fn built(c: &mut BilateralLagrangianConstraint, x: &[f64]) -> Vec<u64> {
        let inputs = ConstraintInputs {
            x_free: [x, x],
            v_free: [x, x],
            x: [x, x],
            dt: 0.01,
            order: ConstraintOrder::PositionAndVelocity,
        };
        let mut out = ConstraintBuild::default();
        c.build(&inputs, &mut out);
        let mut bits: Vec<u64> = out
            .dfree
            .iter()
            .chain(&out.initial)
            .map(|v| v.to_bits())
            .collect();
        for e in &out.entries {
            bits.extend([e.row as u64, e.side as u64, e.dof as u64, e.value.to_bits()]);
        }
        for b in &out.blocks {
            bits.extend([b.first_row as u64, b.tolerance.to_bits()]);
        }
        bits
    }

    /// Editing activate, numericalTolerance or rest_vector of an initialised
    /// BilateralLagrangianConstraint gives the rows an init with the new values gives (Vec3
    /// and Rigid3); other Data re-initialise it.
    #[test]
    fn edits_update_in_place_bilateral_constraint() {
        for dof in [DofType::Vec3, DofType::Rigid3] {
            let cs = dof.coord_size();
            let mut x: Vec<f64> = (0..4 * cs).map(|i| 0.1 * i as f64).collect();
            if dof == DofType::Rigid3 {
                for p in x.chunks_exact_mut(7) {
                    p[3..].copy_from_slice(&[0.0, 0.0, 0.0, 1.0]);
                }
                x[10] = 0.6;
                x[13] = 0.8;
            }
            let (mut scene, root) = scene_with_state(dof, &x);
            let wrap = |c| AnyComponent::Passive(Box::new(c));
            let new = BilateralLagrangianConstraint::new;
            let mut init =
                |attrs: &[(&str, &str)]| init_quiet(&mut scene, root, new(), wrap, attrs);
            let before = [("first_point", "0 1"), ("second_point", "2 3")];
            let rest = if dof == DofType::Rigid3 {
                "0.1 0 0 0 0.2 0 0 0.3 0 0 0 0.05"
            } else {
                "0.1 0 0 0 0.2 0.3"
            };
            for after in [
                &[("rest_vector", rest)][..],
                &[("numericalTolerance", "1e-7")],
                &[("activate", "0")],
            ] {
                let mut c = init(&before);
                // a step's impulses, which an edit forgets as an init does
                c.store(&[1.0; 12]);
                let fresh = || init(&[&before[..], after].concat());
                let bits = |c: &mut BilateralLagrangianConstraint| built(c, &x);
                let r = check_edit_changes(c, after, fresh, bits, false);
                assert_eq!(r, Reaction::Updated, "{dof:?} {after:?}");
            }
            let r = edit(&mut init(&before), &[("first_point", "1 0")]);
            assert_eq!(r, Reaction::Reinit);
        }
    }
}
