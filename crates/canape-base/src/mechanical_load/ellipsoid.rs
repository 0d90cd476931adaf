//! InteractionEllipsoidForceField (Sofa/Component/MechanicalLoad/.../
//! InteractionEllipsoidForceField.inl): ellipsoids carried by a Rigid3 frame (`object2`, its
//! point `object2_dof_index`) push the points of a Vec3 state (`object1`) out of them
//! (`stiffness` > 0) or keep them in (< 0), with SOFA's penalty law in the frame of the rigid.
//!
//! For a point at p (in the frame) and the ellipsoid with the smallest normalised distance
//! s = Σ (p−c)ⱼ²/rⱼ², a contact exists when (s − 1)·k < 0; with v = √s − 1 and g the gradient
//! (p−c)ⱼ/rⱼ², the force is −|k|·v·g/|g| − damping·|v|·velocity. The stiffness stored per contact
//! is SOFA's matrix as written (its term in g gᵀ/|g|² is not the exact derivative, kept so as to
//! give SOFA's results). Reaction forces go to the rigid's centre unless `object2_forces` is
//! false, in which case the rigid is only read; no torque, as in SOFA.

use crate::base_data;
use canape_core::component::{ForceField, Interaction, Reaction};
use canape_core::data::{ChangedData, Data, DataKind, DataTable, Flag, Int, Real, Reals, Text};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::{ComponentId, InitContext, LinkError};
use canape_types::{DofType, Mat3, Vec3};
use nalgebra::{Quaternion, UnitQuaternion};

canape_core::data_schema! {
    /// InteractionEllipsoidForceField's own Data (after the base Data; it ends with the
    /// force-field Data SOFA's interaction force fields have).
    pub struct InteractionEllipsoidData {
        center: Reals = ("center", DataKind::Reals(3), "", "ellipsoid centers"),
        vradius: Reals = ("vradius", DataKind::Reals(3), "", "ellipsoid radius"),
        stiffness: Real = ("stiffness", DataKind::Real, "500", "force stiffness (positive to repulse outward, negative inward)"),
        damping: Real = ("damping", DataKind::Real, "5", "force damping"),
        color: Reals = ("color", DataKind::Reals(0), "0 0.5 1 1", "ellipsoid color. (default=[0.0,0.5,1.0,1.0])"),
        draw: Flag = ("draw", DataKind::Bool, "1", "enable/disable drawing of the ellipsoid"),
        object2_dof_index: Int = ("object2_dof_index", DataKind::Int, "0", "Dof index of object 2 where the forcefield is attached"),
        object2_forces: Flag = ("object2_forces", DataKind::Bool, "1", "enable/disable propagation of forces to object 2"),
        object2_invert: Flag = ("object2_invert", DataKind::Bool, "0", "inverse transform from object 2 (use when object 1 is in local coordinates within a frame defined by object 2)"),
        object1: Text = ("object1", DataKind::Str, "@./", "First object associated to this component"),
        object2: Text = ("object2", DataKind::Str, "@./", "Second object associated to this component"),
        rayleigh_stiffness: Real = ("rayleighStiffness", DataKind::Real, "0", "Rayleigh damping - stiffness matrix coefficient"),
        is_compliance: Flag = ("isCompliance", DataKind::Bool, "0", "Consider the component as a compliance, else as a stiffness"),
    }
}

#[derive(Clone, Copy, Debug)]
struct Contact {
    index: usize,
    /// df/dx in the rigid's frame.
    m: Mat3,
}

#[derive(Clone)]
pub struct InteractionEllipsoidForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: InteractionEllipsoidData,
    /// (object1, object2, object1's point count, object2's point count)
    ends: Option<(ComponentId, ComponentId, usize, usize)>,
    centers: Vec<Vec3>,
    inv_r2: Vec<Vec3>,
    k: f64,
    damping: f64,
    index: usize,
    reaction: bool,
    invert: bool,
    /// The frame of the last `add_force` and its contacts.
    q: UnitQuaternion<f64>,
    contacts: Vec<Contact>,
    rayleigh: f64,
}

impl Default for InteractionEllipsoidForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl InteractionEllipsoidForceField {
    pub fn new() -> Self {
        let (data, d) = InteractionEllipsoidData::declare(base_data(DataTable::new()));
        InteractionEllipsoidForceField {
            data,
            d,
            ends: None,
            centers: Vec::new(),
            inv_r2: Vec::new(),
            k: 0.0,
            damping: 0.0,
            index: 0,
            reaction: true,
            invert: false,
            q: UnitQuaternion::identity(),
            contacts: Vec::new(),
            rayleigh: 0.0,
        }
    }

    fn resolve(
        &self,
        ctx: &mut InitContext<'_>,
        name: &'static str,
        which: Data<Text>,
    ) -> Result<Option<ComponentId>, LinkError> {
        let l = self.data.get(which).trim().to_string();
        if l.is_empty() || l == "@./" || l == "@." {
            return Ok(ctx.scene.context_state(ctx.node));
        }
        Ok(ctx.link_state_or_node(name, &l)?.map(|l| l.id()))
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.ends = None;
        self.contacts.clear();
        let d = self.d;
        self.rayleigh = self.data.get(d.rayleigh_stiffness);
        let ends = (
            self.resolve(ctx, "object1", d.object1),
            self.resolve(ctx, "object2", d.object2),
        );
        let (a, b) = match ends {
            (Ok(Some(a)), Ok(Some(b))) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                ctx.error(e.to_string());
                return;
            }
            _ => {
                ctx.error(
                    "object1 and object2 must name MechanicalObjects (Vec3 points, a Rigid3 frame)",
                );
                return;
            }
        };
        let (sa, sb) = (
            ctx.scene.state(a).expect("state"),
            ctx.scene.state(b).expect("state"),
        );
        if sa.dof != DofType::Vec3 || sb.dof != DofType::Rigid3 {
            ctx.error(format!(
                "object1 must be a Vec3 state and object2 a Rigid3 state ({} and {} given)",
                sa.dof.name(),
                sb.dof.name()
            ));
            return;
        }
        let (n1, n2) = (sa.size(), sb.size());
        let index = self.data.get(d.object2_dof_index);
        if index < 0 || index as usize >= n2 {
            ctx.error(format!(
                "object2_dof_index {index} is not a point of object2 ({n2} points)"
            ));
            return;
        }
        self.index = index as usize;
        self.reaction = self.data.get(d.object2_forces);
        self.invert = self.data.get(d.object2_invert);
        self.k = self.data.get(d.stiffness);
        self.damping = self.data.get(d.damping);
        // as many ellipsoids as the longer list; the last entry (or a unit sphere at the
        // origin) pads the shorter one
        let c: Vec<Vec3> = self
            .data
            .get(d.center)
            .chunks_exact(3)
            .map(|p| Vec3::new(p[0], p[1], p[2]))
            .collect();
        let r: Vec<Vec3> = self
            .data
            .get(d.vradius)
            .chunks_exact(3)
            .map(|p| Vec3::new(p[0], p[1], p[2]))
            .collect();
        let n = c.len().max(r.len());
        let pick = |v: &[Vec3], i: usize, d: Vec3| v.get(i).or(v.last()).copied().unwrap_or(d);
        self.centers = (0..n).map(|i| pick(&c, i, Vec3::zeros())).collect();
        self.inv_r2 = (0..n)
            .map(|i| {
                let r = pick(&r, i, Vec3::new(1.0, 1.0, 1.0));
                Vec3::new(1.0 / (r.x * r.x), 1.0 / (r.y * r.y), 1.0 / (r.z * r.z))
            })
            .collect();
        if self.inv_r2.iter().any(|v| !v.iter().all(|x| x.is_finite())) {
            ctx.error("vradius must be non-zero on every axis");
            return;
        }
        self.ends = Some((a, b, n1, n2));
    }

    /// The frame (centre, orientation) of the rigid point, inverted with `object2_invert`.
    fn frame(&self, x2: &[f64]) -> (Vec3, UnitQuaternion<f64>) {
        let o = 7 * self.index;
        let c = Vec3::new(x2[o], x2[o + 1], x2[o + 2]);
        let q = UnitQuaternion::new_unchecked(Quaternion::new(
            x2[o + 6],
            x2[o + 3],
            x2[o + 4],
            x2[o + 5],
        ));
        if self.invert {
            let qi = q.inverse();
            (-(qi * c), qi)
        } else {
            (c, q)
        }
    }

    /// SOFA's calcF in the frame: the force and its matrix, or None without contact.
    fn calc(&self, p: Vec3, v: Vec3) -> Option<(Vec3, Mat3)> {
        let mut best: Option<(usize, f64)> = None;
        for (e, (c, ir)) in self.centers.iter().zip(&self.inv_r2).enumerate() {
            let d = p - c;
            let s = d.x * d.x * ir.x + d.y * d.y * ir.y + d.z * d.z * ir.z;
            if best.is_none_or(|(_, b)| s < b) {
                best = Some((e, s));
            }
        }
        let (e, s) = best?;
        if (s - 1.0) * self.k >= 0.0 {
            return None;
        }
        let kabs = self.k.abs();
        let ir = self.inv_r2[e];
        let d = p - self.centers[e];
        let nrm = s.sqrt();
        let depth = nrm - 1.0;
        let g = d.component_mul(&ir);
        let gn2 = g.norm_squared();
        let gn = gn2.sqrt();
        let f = g * (-kabs * depth / gn) - v * (self.damping * depth.abs());
        let (a, b, dd) = (-kabs / (nrm * gn), -kabs * depth / gn, -kabs * depth / gn2);
        let mut m = Mat3::zeros();
        for i in 0..3 {
            for j in 0..3 {
                m[(i, j)] = g[i] * g[j] * (a + dd * ir[j]);
            }
            m[(i, i)] += b * ir[i];
        }
        Some((f, m))
    }

    fn world_matrix(&self, m: &Mat3, k: f64) -> Mat3 {
        let r = self.q.to_rotation_matrix().into_inner();
        r * m * r.transpose() * k
    }
}

impl InteractionEllipsoidForceField {
    /// Edits of stiffness and damping act in place once init has found both objects (as init
    /// takes them: the contacts are forgotten); other Data re-initialise.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = self.d;
        if self.ends.is_none() || !changed.only(&[d.stiffness.index(), d.damping.index()]) {
            return Reaction::Reinit;
        }
        self.k = self.data.get(d.stiffness);
        self.damping = self.data.get(d.damping);
        self.contacts.clear();
        Reaction::Updated
    }
}

impl_component!(
    InteractionEllipsoidForceField,
    "InteractionEllipsoidForceField",
    init,
    data_changed
);

impl ForceField for InteractionEllipsoidForceField {
    fn interaction(&self) -> Option<Interaction> {
        self.ends.map(|(a, b, ..)| Interaction {
            first: a,
            second: b,
            second_passive: !self.reaction,
        })
    }

    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]) {
        self.contacts.clear();
        let Some((_, _, n1, _)) = self.ends else {
            return;
        };
        let (c, q) = self.frame(&x[3 * n1..]);
        self.q = q;
        let mut f2 = Vec3::zeros();
        for i in 0..n1 {
            let p = Vec3::new(x[3 * i], x[3 * i + 1], x[3 * i + 2]);
            let vel = Vec3::new(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
            let pl = q.inverse_transform_vector(&(p - c));
            let vl = q.inverse_transform_vector(&vel);
            if let Some((fl, m)) = self.calc(pl, vl) {
                let fw = q * fl;
                for k in 0..3 {
                    f[3 * i + k] += fw[k];
                }
                f2 -= fw;
                self.contacts.push(Contact { index: i, m });
            }
        }
        if self.reaction {
            let o = 3 * n1 + 6 * self.index;
            for k in 0..3 {
                f[o + k] += f2[k];
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let Some((_, _, n1, _)) = self.ends else {
            return;
        };
        let o = 3 * n1 + 6 * self.index;
        let dc = if self.reaction {
            Vec3::new(dx[o], dx[o + 1], dx[o + 2])
        } else {
            Vec3::zeros()
        };
        let mut df2 = Vec3::zeros();
        for c in &self.contacts {
            let i = c.index;
            let du = Vec3::new(dx[3 * i], dx[3 * i + 1], dx[3 * i + 2]) - dc;
            let g = self.q * ((c.m * self.q.inverse_transform_vector(&du)) * k_factor);
            for k in 0..3 {
                df[3 * i + k] += g[k];
            }
            df2 -= g;
        }
        if self.reaction {
            for k in 0..3 {
                df[o + k] += df2[k];
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        let Some((_, _, n1, _)) = self.ends else {
            return;
        };
        let o = offset + 3 * n1 + 6 * self.index;
        for c in &self.contacts {
            let w = self.world_matrix(&c.m, k_factor);
            let p = offset + 3 * c.index;
            m.add_block3(p, p, &w);
            if self.reaction {
                m.add_block3(p, o, &(-w));
                m.add_block3(o, p, &(-w));
                m.add_block3(o, o, &w);
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

    fn field(radii: [f64; 3], k: f64, reaction: bool) -> InteractionEllipsoidForceField {
        let mut f = InteractionEllipsoidForceField::new();
        f.centers = vec![Vec3::zeros()];
        f.inv_r2 = vec![Vec3::new(
            1.0 / (radii[0] * radii[0]),
            1.0 / (radii[1] * radii[1]),
            1.0 / (radii[2] * radii[2]),
        )];
        f.k = k;
        f.damping = 0.0;
        f.reaction = reaction;
        // ids are not used by the force computations
        let mut scene = canape_core::scene::Scene::new();
        let root = scene.add_node("root", None);
        let id = scene.add_component(
            root,
            "dofs",
            canape_core::scene::AnyComponent::State(canape_core::state::MechanicalObject::new(
                canape_types::DofType::Vec3,
            )),
            None,
        );
        f.ends = Some((id, id, 1, 1));
        f
    }

    /// One point then one Rigid3 frame (centre `c`, turned by `angle` about z).
    fn state(p: [f64; 3], c: [f64; 3], angle: f64) -> Vec<f64> {
        let q = UnitQuaternion::from_euler_angles(0.0, 0.0, angle);
        let q = q.quaternion().coords;
        vec![p[0], p[1], p[2], c[0], c[1], c[2], q[0], q[1], q[2], q[3]]
    }

    #[test]
    fn pushes_points_out_along_the_turned_ellipsoid() {
        // a sphere of radius 2 around (1, 1, 1): force k(1 − |d|/r) outward
        let mut f = field([2.0, 2.0, 2.0], 100.0, true);
        let x = state([1.5, 1.0, 1.0], [1.0, 1.0, 1.0], 0.3);
        let mut out = vec![0.0; 9];
        f.add_force(&x, &[0.0; 9], &mut out);
        assert!(
            (out[0] - 100.0 * (1.0 - 0.5 / 2.0)).abs() < 1e-12,
            "{out:?}"
        );
        assert!(out[1].abs() < 1e-12 && out[2].abs() < 1e-12);
        // the reaction on the rigid's centre
        assert!((out[3] + out[0]).abs() < 1e-12);
        // an ellipsoid long along its x axis, turned a quarter about z: long along world y
        let mut f = field([2.0, 1.0, 1.0], 100.0, false);
        let inside = state([0.0, 1.5, 0.0], [0.0; 3], std::f64::consts::FRAC_PI_2);
        let mut out = vec![0.0; 9];
        f.add_force(&inside, &[0.0; 9], &mut out);
        assert!((out[1] - 100.0 * 0.25).abs() < 1e-9, "{out:?}");
        assert!(out[3..].iter().all(|v| *v == 0.0), "no reaction: {out:?}");
        let outside = state([1.5, 0.0, 0.0], [0.0; 3], std::f64::consts::FRAC_PI_2);
        let mut out = vec![0.0; 9];
        f.add_force(&outside, &[0.0; 9], &mut out);
        assert!(out.iter().all(|v| *v == 0.0));
    }

    #[test]
    fn dforce_matches_the_assembled_blocks() {
        let mut f = field([2.0, 1.0, 1.5], 80.0, true);
        let x = state([0.4, 0.3, -0.2], [0.1, 0.0, 0.0], 0.7);
        let mut out = vec![0.0; 9];
        f.add_force(&x, &[0.0; 9], &mut out);
        assert_eq!(f.contacts.len(), 1);
        let mut tr = canape_core::matrix::Triplets::new(9);
        f.add_k_to_matrix(&mut tr, 2.0, 0);
        let mut k = [[0.0; 9]; 9];
        for &(r, c, v) in &tr.entries {
            k[r as usize][c as usize] += v;
        }
        let dx = [0.3, -0.1, 0.2, 0.05, 0.4, -0.3, 0.0, 0.0, 0.0];
        let mut df = vec![0.0; 9];
        f.add_dforce(&dx, &mut df, 2.0);
        for i in 0..9 {
            let kd: f64 = (0..9).map(|j| k[i][j] * dx[j]).sum();
            assert!((kd - df[i]).abs() < 1e-9, "{i}: {kd} vs {}", df[i]);
        }
    }

    /// What the force field gives at `x` with velocities `v`, as bits: the forces, then the
    /// tangent applied to a vector and the assembled matrix.
    fn response_bits(f: &mut InteractionEllipsoidForceField, x: &[f64], v: &[f64]) -> Vec<u64> {
        let mut out = vec![0.0; v.len()];
        f.add_force(x, v, &mut out);
        let dx: Vec<f64> = (0..v.len()).map(|i| (i % 4) as f64 * 0.2 - 0.3).collect();
        let mut df = vec![0.0; v.len()];
        f.add_dforce(&dx, &mut df, 1.5);
        out.extend(df);
        let mut tr = canape_core::matrix::Triplets::new(v.len());
        f.add_k_to_matrix(&mut tr, 0.5, 0);
        out.extend(tr.entries.iter().map(|e| e.2));
        out.iter().map(|x| x.to_bits()).collect()
    }

    /// Editing the stiffness or damping of a running InteractionEllipsoidForceField gives the
    /// forces and tangent of one initialised with them; other Data re-initialise it.
    #[test]
    fn edits_update_in_place_interaction_ellipsoid() {
        use canape_core::scene::AnyComponent;
        use canape_core::state::{MechanicalObject, VecId};
        let points = [0.5, 0.2, 0.1, 2.5, 0.0, 0.0, -0.3, 0.4, 0.2];
        let (mut scene, root) = crate::test_support::scene_with_state(DofType::Vec3, &points);
        let frame = scene.add_node("frame", Some(root));
        let mut rigid = MechanicalObject::new(DofType::Rigid3);
        rigid.resize(1);
        let c = state([0.0; 3], [0.1, 0.0, 0.0], 0.4);
        rigid.vec_mut(VecId::POSITION).copy_from_slice(&c[3..]);
        scene.add_component(frame, "rigid", AnyComponent::State(rigid), None);
        let mut init = |attrs: &[(&str, &str)]| {
            let mut f = InteractionEllipsoidForceField::new();
            let diags = crate::test_support::init_in(
                &mut scene,
                root,
                &mut f,
                |f| AnyComponent::ForceField(Box::new(f)),
                attrs,
            );
            assert!(diags.is_empty(), "{attrs:?}: {diags:?}");
            f
        };
        let before = [
            ("object2", "@frame"),
            ("center", "0 0 0"),
            ("vradius", "1 2 1.5"),
            ("stiffness", "80"),
            ("damping", "0.5"),
        ];
        let x: Vec<f64> = points.iter().chain(&c[3..]).copied().collect();
        let v: Vec<f64> = (0..15).map(|i| 0.05 * i as f64 - 0.3).collect();
        let mut edit = |after: &[(&str, &str)]| {
            let f = init(&before);
            assert!(f.ends.is_some());
            let fresh = || init(&[&before[..], after].concat());
            let bits = |f: &mut InteractionEllipsoidForceField| response_bits(f, &x, &v);
            crate::test_support::check_edit_changes(f, after, fresh, bits, false)
        };
        assert_eq!(edit(&[("stiffness", "120")]), Reaction::Updated);
        assert_eq!(edit(&[("stiffness", "-40")]), Reaction::Updated);
        assert_eq!(edit(&[("damping", "2")]), Reaction::Updated);
        assert_eq!(edit(&[("vradius", "1 1 1")]), Reaction::Reinit);
    }
}
