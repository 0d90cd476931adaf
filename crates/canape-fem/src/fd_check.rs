//! Test helpers for the force fields that keep their state between calls: forces at a
//! configuration, a rigid motion, and the relative error of `add_dforce` against central
//! finite differences of `add_force` (the product taken after `add_force` at the point itself,
//! as a solver does); and a force field's init in a scene of one Vec3 state and a topology.

use canape_core::component::ForceField;
use nalgebra::Rotation3;

/// A deterministic pseudo-random value in [−0.5, 0.5).
pub fn rnd(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
}

/// `rest` turned and moved rigidly.
pub fn rigidly_moved(rest: &[f64]) -> Vec<f64> {
    let r = Rotation3::from_euler_angles(0.4, -0.3, 0.8);
    rest.chunks_exact(3)
        .flat_map(|p| {
            let q = r * nalgebra::Vector3::new(p[0], p[1], p[2])
                + nalgebra::Vector3::new(0.3, -1.0, 2.0);
            [q.x, q.y, q.z]
        })
        .collect()
}

/// f(x) with zero velocities.
pub fn forces(ff: &mut dyn ForceField, x: &[f64]) -> Vec<f64> {
    let mut f = vec![0.0; x.len()];
    ff.add_force(x, &vec![0.0; x.len()], &mut f);
    f
}

/// max |K·dx − (f(x + h·dx) − f(x − h·dx))/2h| / max |finite difference|, for a random dx
/// from `seed`; also checks that the product is linear in its factor.
pub fn dforce_error(ff: &mut dyn ForceField, x: &[f64], seed: u64) -> f64 {
    let mut seed = seed;
    let n = x.len();
    let dx: Vec<f64> = (0..n).map(|_| rnd(&mut seed)).collect();
    let h = 1e-6;
    let xp: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a + h * b).collect();
    let xm: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a - h * b).collect();
    let fp = forces(ff, &xp);
    let fm = forces(ff, &xm);
    let _ = forces(ff, x);
    let mut df = vec![0.0; n];
    ff.add_dforce(&dx, &mut df, 1.0);
    let mut df2 = vec![0.0; n];
    ff.add_dforce(&dx, &mut df2, -0.5);
    let fd: Vec<f64> = fp
        .iter()
        .zip(&fm)
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect();
    let scale = fd.iter().map(|v| v.abs()).fold(0.0, f64::max).max(1e-12);
    for (a, b) in df2.iter().zip(&df) {
        assert!(
            (a + 0.5 * b).abs() <= 1e-9 * scale,
            "k_factor is not linear"
        );
    }
    fd.iter()
        .zip(&df)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
        / scale
}

#[derive(Clone)]
struct TestTopology {
    data: canape_core::data::DataTable,
    mesh: canape_core::mesh::Mesh,
}
canape_core::impl_component!(TestTopology, "MeshTopology");
impl canape_core::component::Topology for TestTopology {
    fn mesh(&self) -> &canape_core::mesh::Mesh {
        &self.mesh
    }
    fn mesh_mut(&mut self) -> &mut canape_core::mesh::Mesh {
        &mut self.mesh
    }
}

/// Run `ff`'s init in a one-node scene with `rest` as a Vec3 state's positions and rest
/// positions and `mesh` as the topology (none when `mesh` is `None`); the diagnostics.
pub fn init_with_mesh(
    ff: &mut dyn ForceField,
    rest: &[f64],
    mesh: Option<canape_core::mesh::Mesh>,
) -> canape_core::diag::Diagnostics {
    use canape_core::scene::{AnyComponent, InitContext, Scene};
    use canape_core::state::{MechanicalObject, VecId};
    let mut s = Scene::new();
    let root = s.add_node("root", None);
    let mut mo = MechanicalObject::new(canape_types::DofType::Vec3);
    mo.resize(rest.len() / 3);
    mo.vec_mut(VecId::POSITION).copy_from_slice(rest);
    mo.vec_mut(VecId::REST_POSITION).copy_from_slice(rest);
    let id = s.add_component(root, "dofs", AnyComponent::State(mo), None);
    if let Some(mesh) = mesh {
        let topo = TestTopology {
            data: canape_core::data::DataTable::new(),
            mesh,
        };
        s.add_component(root, "topo", AnyComponent::Topology(Box::new(topo)), None);
    }
    let mut diags = canape_core::diag::Diagnostics::default();
    let mut ctx = InitContext {
        scene: &s,
        node: root,
        id,
        diags: &mut diags,
    };
    ff.init(&mut ctx);
    diags
}
