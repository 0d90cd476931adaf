//! OBBCollisionModel (the CollisionOBBCapsule plugin's oriented boxes, one per Rigid3 frame)
//! with the Lagrangian contact response: a cube dropped flat on a fixed triangle floor rests
//! at half its size plus the contact distance, one dropped on an edge or a corner tips over
//! onto a face (the contacts at an offset from its centre turn it), and SOFA's
//! benchmark_cubes.scn runs with its 72 cubes kept above the floor.

mod common;

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions, Simulation};

/// Half-size of the test cube and the intersection's contact distance.
const HALF: f64 = 0.5;
const CONTACT: f64 = 0.09;

/// One cube (Rigid3, mass 1, half-size 0.5) with orientation `q` (x y z w) at height 2 over a
/// fixed floor of two triangles, FrictionContactConstraint with friction `mu` (the
/// LCPConstraintSolver's own `mu` set alike: with its default 0.6 it solves only contacts
/// with friction rows).
fn cube(q: [f64; 4], mu: &str) -> Simulation {
    let xml = format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <FreeMotionAnimationLoop/>
  <LCPConstraintSolver maxIt="1000" tolerance="1e-8" mu="{mu}"/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <NewProximityIntersection alarmDistance="0.2" contactDistance="{CONTACT}"/>
  <CollisionResponse response="FrictionContactConstraint" responseParams="mu={mu}"/>
  <Node name="Floor">
    <MechanicalObject name="f" position="-5 0 -5  5 0 -5  5 0 5  -5 0 5"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0"/>
  </Node>
  <Node name="Cube">
    <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
    <CGLinearSolver iterations="25" tolerance="1e-10" threshold="1e-10"/>
    <MechanicalObject name="c" template="Rigid3" position="0.1 2 -0.2 {} {} {} {}"/>
    <UniformMass totalMass="1"/>
    <UncoupledConstraintCorrection useOdeSolverIntegrationFactors="0"/>
    <OBBCollisionModel extents="{HALF} {HALF} {HALF}"/>
  </Node>
</Node>"#,
        q[0], q[1], q[2], q[3]
    );
    let sim = load_scene_str(
        &xml,
        "obb-test.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(
        !sim.diagnostics.has_errors(),
        "{:?}",
        sim.diagnostics.iter().collect::<Vec<_>>()
    );
    sim
}

/// The cube's position and velocity vectors.
fn state(sim: &Simulation) -> (Vec<f64>, Vec<f64>) {
    let id = sim
        .scene
        .component_ids()
        .find(|c| sim.scene.component_label(*c).starts_with("/root/Cube/c"))
        .expect("the cube's state");
    let st = sim.scene.state(id).unwrap();
    (
        st.vec(VecId::POSITION).to_vec(),
        st.vec(VecId::VELOCITY).to_vec(),
    )
}

/// The largest |cosine| between the vertical and the cube's three axes (1: a face is flat).
fn flatness(x: &[f64]) -> f64 {
    let q = [x[3], x[4], x[5], x[6]];
    let n = (q.iter().map(|v| v * v).sum::<f64>()).sqrt();
    let [qx, qy, qz, qw] = q.map(|v| v / n);
    // the y components of the rotated unit axes (rows of the rotation matrix's second line)
    let ys = [
        2.0 * (qx * qy + qz * qw),
        1.0 - 2.0 * (qx * qx + qz * qz),
        2.0 * (qy * qz - qx * qw),
    ];
    ys.iter().fold(0.0_f64, |m, y| m.max(y.abs()))
}

/// A unit quaternion (x y z w) of angle `deg` about unit axis `a`.
fn quat(a: [f64; 3], deg: f64) -> [f64; 4] {
    let h = deg.to_radians() / 2.0;
    [a[0] * h.sin(), a[1] * h.sin(), a[2] * h.sin(), h.cos()]
}

#[test]
fn a_flat_cube_rests_at_half_its_size_plus_the_contact_distance() {
    let mut sim = cube([0.0, 0.0, 0.0, 1.0], "0");
    for _ in 0..300 {
        sim.step();
    }
    let (x, v) = state(&sim);
    assert!(x.iter().chain(&v).all(|c| c.is_finite()), "{x:?} {v:?}");
    let rest = HALF + CONTACT;
    eprintln!("flat cube: centre height {:.9} (expected {rest})", x[1]);
    assert!((x[1] - rest).abs() < 1e-3, "{x:?}");
    // it fell straight: no turn, no drift beyond what the LCP's tolerance lets through
    // (about 2e-4 in 300 steps)
    assert!(flatness(&x) > 1.0 - 1e-9, "{x:?}");
    assert!(
        (x[0] - 0.1).abs() < 1e-3 && (x[2] + 0.2).abs() < 1e-3,
        "{x:?}"
    );
    // at rest but for a slight rocking: one contact per floor triangle (SOFA's one output per
    // element pair) makes two here, and the line joining them runs under the centre
    assert!(v.iter().all(|c| c.abs() < 1e-2), "{v:?}");
}

#[test]
fn a_cube_dropped_on_an_edge_is_turned_by_the_contact_and_tips_onto_a_face() {
    // turned 30° about z: its lowest edge is left of the centre (x ≈ −0.18), so the floor's
    // push there turns it clockwise about z (negative ω_z), back towards flat
    let mut sim = cube(quat([0.0, 0.0, 1.0], 30.0), "0.3");
    let mut turned = false;
    for _ in 0..100 {
        sim.step();
        let (_, v) = state(&sim);
        turned |= v[5] < -0.1;
        assert!(
            v[5] < 1e-6,
            "the contact turned the cube the wrong way: {v:?}"
        );
    }
    assert!(turned, "the off-centre contact did not turn the cube");
    for _ in 0..400 {
        sim.step();
    }
    let (x, v) = state(&sim);
    assert!(x.iter().chain(&v).all(|c| c.is_finite()), "{x:?} {v:?}");
    eprintln!(
        "edge drop: centre height {:.6}, flatness {:.9}",
        x[1],
        flatness(&x)
    );
    assert!(flatness(&x) > 1.0 - 1e-4, "not on a face: {x:?}");
    assert!((x[1] - (HALF + CONTACT)).abs() < 2e-3, "{x:?}");
}

#[test]
fn a_cube_dropped_on_a_corner_tips_onto_a_face() {
    // a corner down: 40° about x, then 30° about z (not balanced on an edge: an exact 45°
    // would leave it on an edge, an unstable balance the symmetric contacts can hold)
    let [ax, ay, az, aw] = quat([1.0, 0.0, 0.0], 40.0);
    let [bx, by, bz, bw] = quat([0.0, 0.0, 1.0], 30.0);
    // b · a
    let q = [
        bw * ax + bx * aw + by * az - bz * ay,
        bw * ay - bx * az + by * aw + bz * ax,
        bw * az + bx * ay - by * ax + bz * aw,
        bw * aw - bx * ax - by * ay - bz * az,
    ];
    let mut sim = cube(q, "0.3");
    for _ in 0..600 {
        sim.step();
    }
    let (x, v) = state(&sim);
    assert!(x.iter().chain(&v).all(|c| c.is_finite()), "{x:?} {v:?}");
    eprintln!(
        "corner drop: centre height {:.6}, flatness {:.9}",
        x[1],
        flatness(&x)
    );
    assert!(flatness(&x) > 1.0 - 1e-4, "not on a face: {x:?}");
    assert!((x[1] - (HALF + CONTACT)).abs() < 2e-3, "{x:?}");
}

/// benchmark_cubes.scn: 72 cubes (default extent 1) under one solver dropped on a floor tilted
/// by 10° about x whose top is at y = −1.32967 before the turn. After 300 steps no state is
/// NaN and every cube's centre is above the floor plane by at least its half-size.
#[test]
fn benchmark_cubes_keeps_every_cube_above_the_floor() {
    let Some(sofa) = common::require_sofa("benchmark_cubes") else {
        return;
    };
    let path = sofa.join("examples/Benchmark/Performance/benchmark_cubes.scn");
    let mut sim = canape::load_scene(&path, &LoadOptions::default()).unwrap();
    assert!(
        !sim.diagnostics.has_errors(),
        "{:?}",
        sim.diagnostics.iter().collect::<Vec<_>>()
    );
    for _ in 0..300 {
        sim.step();
    }
    let a = 10f64.to_radians();
    let normal = [0.0, a.cos(), a.sin()];
    let floor = -1.32967;
    let mut lowest = f64::INFINITY;
    let mut cubes = 0;
    for id in sim.scene.component_ids() {
        if sim.scene.info(id).name != "Cube_RigidDOF" {
            continue;
        }
        let st = sim.scene.state(id).unwrap();
        let x = st.vec(VecId::POSITION);
        assert!(
            x.iter()
                .chain(st.vec(VecId::VELOCITY))
                .all(|c| c.is_finite()),
            "{x:?}"
        );
        let h = normal[0] * x[0] + normal[1] * x[1] + normal[2] * x[2] - floor;
        lowest = lowest.min(h);
        cubes += 1;
    }
    assert_eq!(cubes, 72);
    eprintln!("benchmark_cubes: lowest centre {lowest:.6} above the floor (half-size 1 + contact distance 0.09 = 1.09)");
    assert!(lowest > 1.0, "a cube sank into the floor: {lowest}");
}
