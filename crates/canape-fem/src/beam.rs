//! BeamFEMForceField: 3D beams between Rigid3 nodes (the edges of the context topology), each a
//! 12×12 Euler–Bernoulli/Timoshenko stiffness in the beam's local frame, corotational with the
//! orientation of the beam's first node, as SOFA formulates it
//! (Sofa/Component/SolidMechanics/FEM/Elastic/.../BeamFEMForceField.inl):
//!
//! - section: circular (radius r, inner radius rᵢ): A = π(r² − rᵢ²), I_y = I_z = π(r⁴ − rᵢ⁴)/4,
//!   J = I_y + I_z, G = E / (2(1 + ν)); no shear area (φ = 0: Euler–Bernoulli bending);
//! - force: with a's orientation q_a, the local displacement of node b is
//!   u = q_a⁻¹(c_b − c_a) − q_a0⁻¹(c_b0 − c_a0) and its rotation the rotation vector of
//!   (Δq₀⁻¹ Δq) with Δq = q_a⁻¹ q_b (node a's own entries are zero); f = −R_a K_loc d, node by node;
//! - tangent: df = −R K_loc Rᵀ dx per 3-block with R the orientation of node a at the last force
//!   evaluation (SOFA's applyStiffnessLarge and addKToMatrix; not the exact derivative of the
//!   force, as in SOFA).

use canape_core::component::{ForceField, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, ForceFieldData, Ints, Real};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_core::state::VecId;
use canape_types::dof::quat_of;
use canape_types::{DataTypes, DofType, Mat3, Rigid3Types, Vec3};
use nalgebra::{Quaternion, SMatrix, SVector};

type Mat12 = SMatrix<f64, 12, 12>;
type Vec12 = SVector<f64, 12>;

#[derive(Clone)]
struct Beam {
    a: usize,
    b: usize,
    k_loc: Mat12,
    /// Rest length (what a new material's stiffness is recomputed from).
    l: f64,
    /// Orientation of node a at the last `add_force` (the corotational frame of the tangent).
    r: Mat3,
}

canape_core::data_schema! {
    /// BeamFEMForceField's own Data (after the force-field Data).
    struct BeamData {
        poisson: Real = ("poissonRatio", DataKind::Real, "0.49", "Poisson's Ratio"),
        young: Real = ("youngModulus", DataKind::Real, "5000", "Young Modulus"),
        radius: Real = ("radius", DataKind::Real, "0.1", "radius of the section"),
        radius_inner: Real = ("radiusInner", DataKind::Real, "0", "inner radius of the section for hollow beams"),
        list_segment: Ints = ("listSegment", DataKind::Ints(0), "", "apply the forcefield to a subset list of beam segments. If no segment defined, forcefield applies to the whole topology"),
        use_symmetric_assembly: Flag = ("useSymmetricAssembly", DataKind::Bool, "0", "use symmetric assembly of the matrix K"),
    }
}

#[derive(Clone)]
pub struct BeamFemForceField {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: BeamData,
    beams: Vec<Beam>,
    /// Rest coordinates (7 per node).
    x0: Vec<f64>,
    rayleigh: f64,
}

impl Default for BeamFemForceField {
    fn default() -> Self {
        Self::new()
    }
}

/// SOFA's qDiff(a, b) = b⁻¹ a, with a's sign flipped first when a·b < 0 (shortest arc).
fn q_diff(a: Quaternion<f64>, b: &Quaternion<f64>) -> Quaternion<f64> {
    let a = if a.coords.dot(&b.coords) < 0.0 { -a } else { a };
    b.conjugate() / b.norm_squared() * a
}

/// SOFA's Quat::quatToRotationVector: axis × angle of the normalised quaternion, angle in
/// [0, 2π) taken with w ≥ 0, asin near the identity.
fn rotation_vector(q: &Quaternion<f64>) -> Vec3 {
    let mut q = q.normalize();
    if q.w < 0.0 {
        q = -q;
    }
    let v = Vec3::new(q.i, q.j, q.k);
    let (angle, s) = if q.w > 0.999 {
        let s = v.norm();
        (2.0 * s.asin(), s)
    } else {
        let half = q.w.acos();
        (2.0 * half, half.sin())
    };
    if s < f64::EPSILON {
        Vec3::zeros()
    } else {
        v / s * angle
    }
}

fn rot(q: &Quaternion<f64>) -> Mat3 {
    nalgebra::UnitQuaternion::from_quaternion(*q)
        .to_rotation_matrix()
        .into_inner()
}

/// The local stiffness of a beam (SOFA's computeStiffness with φ_y = φ_z = 0).
fn local_stiffness(e: f64, nu: f64, l: f64, r: f64, ri: f64) -> Mat12 {
    let g = e / (2.0 * (1.0 + nu));
    let iz = std::f64::consts::PI * (r.powi(4) - ri.powi(4)) / 4.0;
    let iy = iz;
    let j = iz + iy;
    let a = std::f64::consts::PI * (r * r - ri * ri);
    let (l2, l3) = (l * l, l * l * l);
    let (eiy, eiz) = (e * iy, e * iz);
    let mut k = Mat12::zeros();
    k[(0, 0)] = e * a / l;
    k[(6, 6)] = k[(0, 0)];
    k[(1, 1)] = 12.0 * eiz / l3;
    k[(7, 7)] = k[(1, 1)];
    k[(2, 2)] = 12.0 * eiy / l3;
    k[(8, 8)] = k[(2, 2)];
    k[(3, 3)] = g * j / l;
    k[(9, 9)] = k[(3, 3)];
    k[(4, 4)] = 4.0 * eiy / l;
    k[(10, 10)] = k[(4, 4)];
    k[(5, 5)] = 4.0 * eiz / l;
    k[(11, 11)] = k[(5, 5)];
    k[(4, 2)] = -6.0 * eiy / l2;
    k[(5, 1)] = 6.0 * eiz / l2;
    k[(6, 0)] = -k[(0, 0)];
    k[(7, 1)] = -k[(1, 1)];
    k[(7, 5)] = -k[(5, 1)];
    k[(8, 2)] = -k[(2, 2)];
    k[(8, 4)] = -k[(4, 2)];
    k[(9, 3)] = -k[(3, 3)];
    k[(10, 2)] = k[(4, 2)];
    k[(10, 4)] = 2.0 * eiy / l;
    k[(10, 8)] = -k[(4, 2)];
    k[(11, 1)] = k[(5, 1)];
    k[(11, 5)] = 2.0 * eiz / l;
    k[(11, 7)] = -k[(5, 1)];
    for i in 0..11 {
        for jj in i + 1..12 {
            k[(i, jj)] = k[(jj, i)];
        }
    }
    k
}

impl BeamFemForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = BeamData::declare(data);
        BeamFemForceField {
            data,
            ff,
            d,
            beams: Vec::new(),
            x0: Vec::new(),
            rayleigh: 0.0,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.beams.clear();
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        if st.dof != DofType::Rigid3 {
            ctx.error(format!(
                "BeamFEMForceField acts on Rigid3d states; the context state is {}",
                st.dof.name()
            ));
            return;
        }
        let Some(topo) = ctx.topology_where(|m| !m.edges.is_empty()) else {
            ctx.error("no topology with edges in the context: the beams are its edges");
            return;
        };
        let edges = topo.mesh().edges.clone();
        let n = st.size();
        let (e, nu) = (self.data.get(self.d.young), self.data.get(self.d.poisson));
        let (r, ri) = (
            self.data.get(self.d.radius),
            self.data.get(self.d.radius_inner),
        );
        if let Some(m) = check_beam_material(e, nu) {
            ctx.error(m);
            return;
        }
        if !(r.is_finite() && r > 0.0 && ri >= 0.0 && ri < r) {
            ctx.error(format!(
                "radius {r} and radiusInner {ri}: a section needs 0 ≤ radiusInner < radius"
            ));
            return;
        }
        let list: Vec<usize> = self
            .data
            .get(self.d.list_segment)
            .iter()
            .map(|&i| i as usize)
            .collect();
        let chosen: Vec<usize> = if list.is_empty() {
            (0..edges.len()).collect()
        } else if let Some(bad) = list.iter().find(|&&i| i >= edges.len()) {
            // SOFA warns and applies the force field to the whole topology
            ctx.warn(format!(
                "listSegment names segment {bad} of {}: the whole topology is used",
                edges.len()
            ));
            (0..edges.len()).collect()
        } else {
            list
        };
        self.x0 = st.vec(VecId::REST_POSITION).to_vec();
        let x0 = Rigid3Types::coords(&self.x0);
        for i in chosen {
            let [a, b] = edges[i].map(|v| v as usize);
            if a >= n || b >= n {
                ctx.error(format!(
                    "edge {i} joins nodes {a} and {b}, but the state has {n} nodes"
                ));
                self.beams.clear();
                return;
            }
            let l = (Vec3::from_column_slice(&x0[b][..3]) - Vec3::from_column_slice(&x0[a][..3]))
                .norm();
            if l <= 0.0 {
                ctx.error(format!("beam {i} has zero length (nodes {a} and {b})"));
                self.beams.clear();
                return;
            }
            self.beams.push(Beam {
                a,
                b,
                k_loc: local_stiffness(e, nu, l, r, ri),
                l,
                r: rot(&quat_of(&x0[a])),
            });
        }
    }

    /// The 3×3 block (i, j) of beam `b`'s stiffness in world axes: R K_loc(i, j) Rᵀ.
    fn world_block(b: &Beam, i: usize, j: usize) -> Mat3 {
        let m: Mat3 = b.k_loc.fixed_view::<3, 3>(3 * i, 3 * j).into_owned();
        b.r * m * b.r.transpose()
    }
}

/// Why Young's modulus `e` and Poisson's ratio `nu` make no beam material, if they do not.
fn check_beam_material(e: f64, nu: f64) -> Option<String> {
    if !(e.is_finite() && e > 0.0) {
        return Some(format!("youngModulus {e} must be a positive number"));
    }
    if !(nu.is_finite() && nu > -1.0 && nu < 0.5) {
        return Some(format!("poissonRatio {nu} must be in (-1, 0.5)"));
    }
    None
}

impl BeamFemForceField {
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let material = [
            self.d.young.index(),
            self.d.poisson.index(),
            self.ff.rayleigh_stiffness.index(),
        ];
        if !changed.only(&material) || self.beams.is_empty() {
            return Reaction::Reinit;
        }
        let (e, nu) = (self.data.get(self.d.young), self.data.get(self.d.poisson));
        if let Some(m) = check_beam_material(e, nu) {
            return Reaction::Refused(vec![m]);
        }
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        let (r, ri) = (
            self.data.get(self.d.radius),
            self.data.get(self.d.radius_inner),
        );
        for b in &mut self.beams {
            b.k_loc = local_stiffness(e, nu, b.l, r, ri);
        }
        Reaction::Updated
    }
}

canape_core::impl_component!(BeamFemForceField, "BeamFEMForceField", init, data_changed);

impl ForceField for BeamFemForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let xs = Rigid3Types::coords(x);
        let x0 = Rigid3Types::coords(&self.x0);
        let fs = Rigid3Types::derivs_mut(f);
        for beam in &mut self.beams {
            let (a, b) = (beam.a, beam.b);
            let (qa, qb) = (quat_of(&xs[a]), quat_of(&xs[b]));
            let (qa0, qb0) = (quat_of(&x0[a]), quat_of(&x0[b]));
            let ra = rot(&qa);
            beam.r = rot(&qa.normalize());
            let c = |p: &[f64; 7]| Vec3::new(p[0], p[1], p[2]);
            let p = ra.transpose() * (c(&xs[b]) - c(&xs[a]));
            let p0 = rot(&qa0).transpose() * (c(&x0[b]) - c(&x0[a]));
            let u = p - p0;
            let dq0 = q_diff(qb0, &qa0).normalize();
            let dq = q_diff(qb, &qa).normalize();
            let w = rotation_vector(&q_diff(dq, &dq0).normalize());
            let mut d = Vec12::zeros();
            d.fixed_rows_mut::<3>(6).copy_from(&u);
            d.fixed_rows_mut::<3>(9).copy_from(&w);
            let force = beam.k_loc * d;
            for (node, k) in [(a, 0), (b, 6)] {
                let lin = ra * force.fixed_rows::<3>(k);
                let ang = ra * force.fixed_rows::<3>(k + 3);
                for c in 0..3 {
                    fs[node][c] -= lin[c];
                    fs[node][3 + c] -= ang[c];
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let dxs = Rigid3Types::derivs(dx);
        let dfs = Rigid3Types::derivs_mut(df);
        for beam in &self.beams {
            let rt = beam.r.transpose();
            let mut d = Vec12::zeros();
            for (k, node) in [beam.a, beam.a, beam.b, beam.b].into_iter().enumerate() {
                let part = Vec3::from_column_slice(&dxs[node][3 * (k % 2)..3 * (k % 2) + 3]);
                d.fixed_rows_mut::<3>(3 * k).copy_from(&(rt * part));
            }
            let lf = beam.k_loc * d;
            for (k, node) in [beam.a, beam.a, beam.b, beam.b].into_iter().enumerate() {
                let g = beam.r * lf.fixed_rows::<3>(3 * k) * k_factor;
                let o = 3 * (k % 2);
                for c in 0..3 {
                    dfs[node][o + c] -= g[c];
                }
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        for beam in &self.beams {
            let index = |k: usize| {
                let node = if k < 2 { beam.a } else { beam.b };
                offset + 6 * node + 3 * (k % 2)
            };
            for i in 0..4 {
                for j in 0..4 {
                    let blk = Self::world_block(beam, i, j) * (-k_factor);
                    m.add_block3(index(i), index(j), &blk);
                }
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }

    fn draw_edges(&self) -> Vec<[u32; 2]> {
        self.beams
            .iter()
            .map(|b| [b.a as u32, b.b as u32])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::Component;

    #[derive(Clone)]
    struct EdgeTopology {
        data: DataTable,
        mesh: canape_core::mesh::Mesh,
    }
    canape_core::impl_component!(EdgeTopology, "MeshTopology");
    impl canape_core::component::Topology for EdgeTopology {
        fn mesh(&self) -> &canape_core::mesh::Mesh {
            &self.mesh
        }
        fn mesh_mut(&mut self) -> &mut canape_core::mesh::Mesh {
            &mut self.mesh
        }
    }

    /// A beam force field given `attrs` and initialised on a bent chain of four Rigid3 nodes.
    fn init_chain(attrs: &[&[(&str, &str)]], rest: &[f64]) -> BeamFemForceField {
        use canape_core::scene::{AnyComponent, Scene};
        use canape_core::state::MechanicalObject;
        let mut ff = BeamFemForceField::new();
        for (k, v) in attrs.iter().copied().flatten() {
            ff.data.set_str(k, v).unwrap();
        }
        let mut s = Scene::new();
        let root = s.add_node("root", None);
        let mut mo = MechanicalObject::new(DofType::Rigid3);
        mo.resize(rest.len() / 7);
        mo.vec_mut(VecId::POSITION).copy_from_slice(rest);
        mo.vec_mut(VecId::REST_POSITION).copy_from_slice(rest);
        let id = s.add_component(root, "dofs", AnyComponent::State(mo), None);
        let topo = EdgeTopology {
            data: DataTable::new(),
            mesh: canape_core::mesh::Mesh {
                edges: vec![[0, 1], [1, 2], [2, 3]],
                ..Default::default()
            },
        };
        s.add_component(root, "topo", AnyComponent::Topology(Box::new(topo)), None);
        let mut diags = canape_core::diag::Diagnostics::default();
        let mut ctx = InitContext {
            scene: &s,
            node: root,
            id,
            diags: &mut diags,
        };
        ff.init(&mut ctx);
        assert!(
            !diags.has_errors(),
            "{:?}",
            diags.iter().collect::<Vec<_>>()
        );
        ff
    }

    /// Editing youngModulus, poissonRatio or rayleighStiffness updates the beams in place to
    /// exactly what an init with the new values gives (the pattern of
    /// `crate::element::edit_check`, on a Rigid3 state); an invalid material is refused, and
    /// other Data ask for a re-initialisation.
    #[test]
    fn beam_material_edits_update_in_place() {
        use crate::element::edit_check::results;
        let mut seed = 13;
        let rest: Vec<f64> = (0..4)
            .flat_map(|i| {
                let i = i as f64;
                [i, 0.3 * i * i, -0.2 * i, 0.0, 0.0, 0.0, 1.0]
            })
            .collect();
        let x: Vec<f64> = rest
            .chunks(7)
            .flat_map(|p| {
                let mut q = [0.0; 7];
                for c in 0..3 {
                    q[c] = p[c] + 0.05 * crate::fd_check::rnd(&mut seed);
                }
                let v: [f64; 4] =
                    std::array::from_fn(|c| p[3 + c] + 0.1 * crate::fd_check::rnd(&mut seed));
                let n = v.iter().map(|a| a * a).sum::<f64>().sqrt();
                for c in 0..4 {
                    q[3 + c] = v[c] / n;
                }
                q
            })
            .collect();
        let before = [
            ("youngModulus", "1e5"),
            ("poissonRatio", "0.3"),
            ("rayleighStiffness", "0.1"),
        ];
        let edit = |after: &[(&str, &str)]| {
            let mut ff = init_chain(&[&before], &rest);
            let old = results(&mut ff, &x);
            let versions = ff.data.versions();
            for (k, v) in after {
                ff.data.set_str(k, v).unwrap();
            }
            let reaction = ff.data_changed(&ff.data.changed_since(&versions));
            let got = results(&mut ff, &x);
            if reaction == Reaction::Updated {
                let want = results(&mut init_chain(&[&before, after], &rest), &x);
                assert!(got == want, "{after:?} in place differs from an init");
                assert!(got != old, "{after:?} changed no result");
            } else {
                assert!(got == old, "{after:?} ({reaction:?}) changed the results");
            }
            reaction
        };
        assert_eq!(edit(&[("youngModulus", "2e5")]), Reaction::Updated);
        assert_eq!(edit(&[("poissonRatio", "0.45")]), Reaction::Updated);
        assert_eq!(edit(&[("rayleighStiffness", "0.25")]), Reaction::Updated);
        assert!(matches!(
            edit(&[("poissonRatio", "0.5")]),
            Reaction::Refused(_)
        ));
        assert!(matches!(
            edit(&[("youngModulus", "0")]),
            Reaction::Refused(_)
        ));
        assert_eq!(
            edit(&[("youngModulus", "2e5"), ("radius", "0.2")]),
            Reaction::Reinit
        );
    }

    #[test]
    fn local_stiffness_is_symmetric_with_rigid_modes_in_its_kernel() {
        let k = local_stiffness(2e7, 0.3, 1.5, 0.1, 0.02);
        assert!((k - k.transpose()).norm() < 1e-6 * k.norm());
        // a rigid translation along y and a small rigid rotation about z (θ_z at both nodes with
        // v_b − v_a = L θ_z) produce no force
        let mut t = Vec12::zeros();
        t[1] = 1.0;
        t[7] = 1.0;
        assert!((k * t).norm() < 1e-6 * k.norm());
        let mut r = Vec12::zeros();
        r[5] = 1.0;
        r[11] = 1.0;
        r[7] = 1.5;
        assert!((k * r).norm() < 1e-6 * k.norm());
    }
}
