//! Collision and penalty contact against the penalty law itself: a sphere resting on a fixed
//! plane sinks to the depth where the contact force carries its weight; two spheres in a
//! frictionless head-on collision exchange their momentum; contacts and states are the same
//! whatever the number of threads.

mod common;

use canape::core::state::VecId;
use canape::Simulation;
use common::{contacts_total, vec_of};

fn load(xml: &str) -> Simulation {
    common::load(xml, "collision.scn")
}

/// The positions of the state named `name`.
fn state(sim: &Simulation, name: &str) -> Vec<f64> {
    vec_of(sim, name, VecId::POSITION)
}

/// A ball (one particle with a sphere model) over a fixed square floor of two triangles.
const BALL_ON_FLOOR: &str = r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <DefaultAnimationLoop/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <MinProximityIntersection alarmDistance="0.5" contactDistance="0.1"/>
  <CollisionResponse response="PenalityContactForceField"/>
  <Node name="ball">
    <EulerImplicitSolver rayleighMass="0.5"/>
    {linear}
    <MechanicalObject name="ballDofs" position="0.2 1 -0.3"/>
    <UniformMass totalMass="{mass}"/>
    <SphereCollisionModel radius="{radius}" contactStiffness="{k1}"/>
  </Node>
  <Node name="floor">
    <MechanicalObject name="floorDofs" position="-5 0 -5  5 0 -5  5 0 5  -5 0 5"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0" contactStiffness="{k2}"/>
  </Node>
</Node>"#;

const CG: &str = r#"<CGLinearSolver iterations="100" tolerance="1e-14" threshold="1e-20"/>"#;

#[test]
fn a_sphere_rests_at_the_depth_the_penalty_law_gives() {
    // matrix-free (CG) and assembled (SparseLDL: the contact stiffness goes into the matrix)
    for (mass, radius, k1, k2, linear) in [
        (0.5, 0.3, 40.0, 10.0, CG),
        (2.0, 0.5, 100.0, 5.0, CG),
        (2.0, 0.5, 100.0, 5.0, "<SparseLDLSolver/>"),
    ] {
        let xml = BALL_ON_FLOOR
            .replace("{linear}", linear)
            .replace("{mass}", &mass.to_string())
            .replace("{radius}", &radius.to_string())
            .replace("{k1}", &k1.to_string())
            .replace("{k2}", &k2.to_string());
        let mut sim = load(&xml);
        for _ in 0..3000 {
            sim.step();
        }
        let y = state(&sim, "ballDofs")[1];
        // rest distance d = contactDistance + radius; stiffness k1·k2/d (SOFA's
        // BarycentricPenalityContact); at rest k·(d − y) = m·g
        let d = 0.1 + radius;
        let k = k1 * k2 / d;
        let expected = mass * 9.81 / k;
        let penetration = d - y;
        assert!(
            ((penetration - expected) / expected).abs() < 0.01,
            "penetration {penetration} expected {expected} (y = {y})"
        );
    }
}

/// Two equal balls thrown at each other along x, under one explicit solver, no gravity.
const TWO_BALLS: &str = r#"<Node name="root" gravity="0 0 0" dt="0.0005">
  <DefaultAnimationLoop/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <NewProximityIntersection alarmDistance="0.2" contactDistance="0.05"/>
  <CollisionResponse response="PenalityContactForceField"/>
  <EulerExplicitSolver symplectic="1"/>
  <Node name="a">
    <MechanicalObject name="a" position="-1 0.01 0" velocity="{va} 0 0"/>
    <UniformMass totalMass="{ma}"/>
    <SphereCollisionModel radius="0.25" contactStiffness="30"/>
  </Node>
  <Node name="b">
    <MechanicalObject name="b" position="1 0 0" velocity="{vb} 0 0"/>
    <UniformMass totalMass="{mb}"/>
    <SphereCollisionModel radius="0.25" contactStiffness="30"/>
  </Node>
</Node>"#;

#[test]
fn two_frictionless_spheres_exchange_momentum() {
    let (ma, mb, va, vb) = (1.0, 3.0, 4.0, -1.0);
    let xml = TWO_BALLS
        .replace("{ma}", &ma.to_string())
        .replace("{mb}", &mb.to_string())
        .replace("{va}", &va.to_string())
        .replace("{vb}", &vb.to_string());
    let mut sim = load(&xml);
    let p0 = ma * va + mb * vb;
    let mut touched = false;
    for _ in 0..4000 {
        sim.step();
        let (a, b) = (
            vec_of(&sim, "a", VecId::VELOCITY),
            vec_of(&sim, "b", VecId::VELOCITY),
        );
        // equal and opposite contact forces: the momentum never changes
        let p = [0, 1, 2].map(|k| ma * a[k] + mb * b[k]);
        assert!((p[0] - p0).abs() < 1e-9 && p[1].abs() < 1e-9 && p[2].abs() < 1e-9);
        touched |= (a[0] - va).abs() > 1e-6;
    }
    assert!(touched, "the spheres never met");
    // a penalty spring without damping is elastic: the velocities of a 1-D elastic collision
    // (the small offset in y makes it slightly oblique; the x parts dominate)
    let (a, b) = (
        vec_of(&sim, "a", VecId::VELOCITY),
        vec_of(&sim, "b", VecId::VELOCITY),
    );
    let va_after = ((ma - mb) * va + 2.0 * mb * vb) / (ma + mb);
    let vb_after = ((mb - ma) * vb + 2.0 * ma * va) / (ma + mb);
    assert!(
        (a[0] - va_after).abs() < 0.02 * va.abs(),
        "{} vs {va_after}",
        a[0]
    );
    assert!(
        (b[0] - vb_after).abs() < 0.02 * va.abs(),
        "{} vs {vb_after}",
        b[0]
    );
    // kinetic energy kept to within the integrator's error
    let e0 = 0.5 * (ma * va * va + mb * vb * vb);
    let e1 = 0.5
        * (ma * a.iter().map(|v| v * v).sum::<f64>() + mb * b.iter().map(|v| v * v).sum::<f64>());
    assert!(((e1 - e0) / e0).abs() < 0.01, "{e1} vs {e0}");
}

#[test]
fn contacts_and_states_do_not_depend_on_the_thread_count() {
    let xml = BALL_ON_FLOOR
        .replace("{linear}", CG)
        .replace("{mass}", "1")
        .replace("{radius}", "0.4")
        .replace("{k1}", "50")
        .replace("{k2}", "10");
    let run = |threads: usize| {
        let mut sim = load(&xml);
        sim.set_threads(threads).unwrap();
        for _ in 0..300 {
            sim.step();
        }
        state(&sim, "ballDofs")
    };
    let one = run(1);
    let two = run(2);
    assert_eq!(
        one.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        two.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
}

/// A soft cube whose corners collide through a mapped point model, on the floor.
const CUBE_ON_FLOOR: &str = r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <DefaultAnimationLoop/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <MinProximityIntersection alarmDistance="0.3" contactDistance="0.05"/>
  <CollisionResponse response="PenalityContactForceField"/>
  <Node name="cube">
    <EulerImplicitSolver rayleighMass="0.2" rayleighStiffness="0.1"/>
    {linear}
    <RegularGridTopology n="3 3 3" min="-0.5 0.2 -0.5" max="0.5 1.2 0.5"/>
    <MechanicalObject name="cubeDofs"/>
    <UniformMass totalMass="1"/>
    <HexahedronFEMForceField youngModulus="3000" poissonRatio="0.3"/>
    <Node name="surface">
      <MechanicalObject name="surfaceDofs"/>
      <PointCollisionModel contactStiffness="100"/>
      <IdentityMapping/>
    </Node>
  </Node>
  <Node name="floor">
    <MechanicalObject name="floorDofs" position="-5 0 -5  5 0 -5  5 0 5  -5 0 5"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0" contactStiffness="10"/>
  </Node>
</Node>"#;

#[test]
fn mapped_contacts_agree_between_matrix_free_and_assembled_solvers() {
    let run = |linear: &str| {
        let mut sim = load(&CUBE_ON_FLOOR.replace("{linear}", linear));
        for _ in 0..150 {
            sim.step();
        }
        state(&sim, "cubeDofs")
    };
    let cg = run(r#"<CGLinearSolver iterations="500" tolerance="1e-16" threshold="1e-30"/>"#);
    let ldl = run("<SparseLDLSolver/>");
    // the cube came down onto the floor and rests on it
    let lowest = cg.chunks(3).map(|p| p[1]).fold(f64::INFINITY, f64::min);
    assert!(lowest < 0.05 && lowest > -0.05, "lowest point at {lowest}");
    let diff = cg
        .iter()
        .zip(&ldl)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(diff < 1e-6, "CG and SparseLDL differ by {diff}");
}

/// Spheres on a state that its mapping sizes after the sphere model's init (a Vec3 copy of
/// three rigid frames): every point is a sphere of the given radius, not only the first.
const MAPPED_SPHERES: &str = r#"<Node name="root" gravity="0 0 0" dt="0.01">
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <MinProximityIntersection alarmDistance="0.1" contactDistance="0.05"/>
  <CollisionResponse/>
  <Node name="frames">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-20"/>
    <MechanicalObject name="frames" template="Rigid3" position="0 0 0 0 0 0 1  1 0 0 0 0 0 1  2 0 0 0 0 0 1"/>
    <UniformMass totalMass="3"/>
    <Node name="collision">
      <MechanicalObject name="centres"/>
      <SphereCollisionModel radius="{radius}"/>
      <IdentityMapping/>
    </Node>
  </Node>
  <Node name="ball">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-20"/>
    <MechanicalObject name="ball" position="1 0 0.7"/>
    <UniformMass totalMass="1"/>
    <SphereCollisionModel radius="0.1"/>
  </Node>
</Node>"#;

#[test]
fn spheres_follow_the_size_their_state_has_when_colliding() {
    let run = |radius: f64| {
        let mut sim = load(&MAPPED_SPHERES.replace("{radius}", &radius.to_string()));
        for _ in 0..5 {
            sim.step();
        }
        (contacts_total(&sim), state(&sim, "ball"))
    };
    // 0.1 + 0.1 plus the alarm distance is far below the 0.7 gap: nothing touches
    let (n, ball) = run(0.1);
    assert_eq!(n, 0);
    assert_eq!(ball, vec![1.0, 0.0, 0.7]);
    // the middle frame's sphere (the second point) reaches the ball when it is large enough
    let (n, ball) = run(0.65);
    assert!(n > 0);
    assert!(ball[2] > 0.7, "{ball:?}");
}

/// Every state's positions and every response's contact list, bit for bit.
fn fingerprint(sim: &Simulation) -> (Vec<u64>, Vec<String>) {
    let mut x = Vec::new();
    for st in sim.scene.states.iter().flatten() {
        x.extend(st.vec(VecId::POSITION).iter().map(|v| v.to_bits()));
    }
    let contacts = sim
        .scene
        .force_fields
        .iter()
        .flatten()
        .map(|f| format!("{:?}", f.contacts()))
        .collect();
    (x, contacts)
}

#[test]
fn many_model_pairs_over_threads_give_the_same_contacts_in_the_same_order() {
    // 150 balls, each its own model: the narrow phase splits the model pairs over threads
    let xml = canape::bench::falling_spheres(150);
    let run = |threads: usize| {
        let mut sim = load(&xml);
        sim.set_threads(threads).unwrap();
        for _ in 0..120 {
            sim.step();
        }
        let n = contacts_total(&sim);
        assert!(n > 100, "{n} contacts");
        fingerprint(&sim)
    };
    let one = run(1);
    assert_eq!(one, run(2), "1 and 2 threads differ");
    assert_eq!(one, run(4), "1 and 4 threads differ");
}

#[test]
fn one_large_model_pair_over_threads_gives_the_same_contacts_in_the_same_order() {
    // 4 900 points just above a finely triangulated floor: one model pair whose element pairs
    // are split over threads
    let xml = r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <DefaultAnimationLoop/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <MinProximityIntersection alarmDistance="0.2" contactDistance="0.05"/>
  <CollisionResponse response="PenalityContactForceField"/>
  <Node name="cloud">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>
    <RegularGridTopology n="70 1 70" min="0.013 0.1 0.017" max="9.9 0.1 9.9"/>
    <MechanicalObject name="cloudDofs"/>
    <UniformMass totalMass="10"/>
    <PointCollisionModel contactStiffness="100"/>
  </Node>
  <Node name="floor">
    <RegularGridTopology n="31 1 31" min="0 0 0" max="10 0 10"/>
    <MechanicalObject name="floorDofs"/>
    <TriangleCollisionModel simulated="0" moving="0" contactStiffness="100"/>
  </Node>
</Node>"#;
    let run = |threads: usize| {
        let mut sim = load(xml);
        sim.set_threads(threads).unwrap();
        for _ in 0..5 {
            sim.step();
        }
        let n = contacts_total(&sim);
        assert!(n >= 4096, "{n} contacts");
        fingerprint(&sim)
    };
    let one = run(1);
    assert_eq!(one, run(2), "1 and 2 threads differ");
    assert_eq!(one, run(4), "1 and 4 threads differ");
}

/// A ball touching a fixed sphere (within LocalMinDistance's alarm distance), pulled away
/// from it by gravity, with SOFA's sticking response.
const STUCK_BALL: &str = r#"<Node name="root" gravity="0 9.81 0" dt="0.01">
  <DefaultAnimationLoop/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <LocalMinDistance alarmDistance="0.5" contactDistance="0.1"/>
  <CollisionResponse response="{response}" responseParams="{params}"/>
  <Node name="ball">
    <EulerImplicitSolver rayleighMass="0.5"/>
    <CGLinearSolver iterations="100" tolerance="1e-14" threshold="1e-20"/>
    <MechanicalObject name="ballDofs" position="0 1.5 0"/>
    <UniformMass totalMass="1"/>
    <SphereCollisionModel radius="0.3" contactStiffness="300"/>
  </Node>
  <Node name="anchor">
    <MechanicalObject name="anchorDofs" position="0 0 0"/>
    <SphereCollisionModel radius="1" simulated="0" moving="0" contactStiffness="100"/>
  </Node>
</Node>"#;

#[test]
fn a_stick_contact_holds_a_ball_where_it_last_touched_unless_not_kept_alive() {
    let run = |response: &str, params: &str| {
        let xml = STUCK_BALL
            .replace("{response}", response)
            .replace("{params}", params);
        let mut sim = load(&xml);
        for _ in 0..1500 {
            sim.step();
        }
        (
            state(&sim, "ballDofs")[1],
            vec_of(&sim, "ballDofs", VecId::VELOCITY)[1],
        )
    };
    // contact while the centres are closer than alarm + radii = 1.8; each collision step
    // anchors the springs at the offset it finds, the last one before the ball leaves that
    // range holds it: at rest, (sum of the stiffnesses)·stretch = m·g above an anchor below 1.8
    let (y, v) = run("StickContactForceField", "");
    let stretch = 9.81 / 400.0;
    assert!(y > 1.5 && y < 1.8 + stretch + 1e-9, "y = {y}");
    assert!(v.abs() < 1e-6, "v = {v}");
    // without keepAlive the springs go with the contacts and the ball leaves
    let (y, _) = run("StickContactForceField", "keepAlive=0");
    assert!(y > 10.0, "y = {y}");
    // the penalty response only pushes: the ball leaves too
    let (y, _) = run("PenalityContactForceField", "");
    assert!(y > 10.0, "y = {y}");
}

/// A closed triangulated box: its 8 corners (`x0..x1` × `y0..y1` × `z0..z1`, corner k at
/// bit 0 → x1, bit 1 → y1, bit 2 → z1) and its 12 triangles, facing out.
fn closed_box(lo: [f64; 3], hi: [f64; 3]) -> (String, &'static str) {
    let mut pos = String::new();
    for k in 0..8 {
        let c = [0, 1, 2].map(|a| if k >> a & 1 == 1 { hi[a] } else { lo[a] });
        pos += &format!("{} {} {}  ", c[0], c[1], c[2]);
    }
    let tris = "0 4 6  0 6 2  1 3 7  1 7 5  0 1 5  0 5 4  2 6 7  2 7 3  0 2 3  0 3 1  4 5 7  4 7 6";
    (pos, tris)
}

#[test]
fn ray_traced_contacts_bounce_a_closed_surface_off_another() {
    // an octahedron thrown down onto a closed floor box, no gravity: its lowest vertex's normal
    // points straight down (its four triangles are symmetric); the top vertex is moved aside so
    // that the vertex's ray meets its own surface inside a triangle
    let (c, r) = ([0.3, 0.7, 0.2], 0.5);
    let octa: Vec<String> = [
        [r, 0.0, 0.0],
        [-r, 0.0, 0.0],
        [0.02, r, 0.01],
        [0.0, -r, 0.0],
        [0.0, 0.0, r],
        [0.0, 0.0, -r],
    ]
    .iter()
    .map(|v| format!("{} {} {}", c[0] + v[0], c[1] + v[1], c[2] + v[2]))
    .collect();
    let octa_tris = "0 2 4  0 5 2  0 4 3  0 3 5  1 4 2  1 2 5  1 3 4  1 5 3";
    let (floor, tris) = closed_box([-3.0, -1.0, -3.0], [3.0, 0.0, 3.0]);
    let xml = format!(
        r#"<Node name="root" gravity="0 0 0" dt="0.005">
  <DefaultAnimationLoop/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <NARROW/>
  <NewProximityIntersection alarmDistance="0.1" contactDistance="0.01"/>
  <CollisionResponse response="PenalityContactForceField"/>
  <Node name="octa">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="200" tolerance="1e-12" threshold="1e-20"/>
    <MechanicalObject name="octaDofs" position="{octa}" velocity="{v}"/>
    <MeshTopology triangles="{octa_tris}"/>
    <UniformMass totalMass="1"/>
    <MeshSpringForceField trianglesStiffness="5000"/>
    <TriangleOctreeCollisionModel contactStiffness="10"/>
  </Node>
  <Node name="floor">
    <MechanicalObject position="{floor}"/>
    <MeshTopology triangles="{tris}"/>
    <TriangleOctreeCollisionModel simulated="0" moving="0" contactStiffness="10"/>
  </Node>
</Node>"#,
        octa = octa.join("  "),
        v = "0 -2 0  ".repeat(6),
    );
    let run = |narrow: &str| {
        let mut sim = load(&xml.replace("NARROW", narrow));
        let (mut touched, mut deepest) = (false, f64::INFINITY);
        for _ in 0..200 {
            sim.step();
            touched |= contacts_total(&sim) > 0;
            deepest = deepest.min(state(&sim, "octaDofs")[3 * 3 + 1]);
        }
        let v = vec_of(&sim, "octaDofs", VecId::VELOCITY);
        let vy = v.chunks(3).map(|p| p[1]).sum::<f64>() / 6.0;
        (deepest, vy, touched)
    };
    // the lowest vertex reaches the floor's top (y = 0) after 0.1 s, is found inside the floor
    // by its ray and pushed back out along its normal: the body comes back up
    let (deepest, vy, touched) = run("RayTraceNarrowPhase");
    assert!(touched, "no contact");
    assert!(
        deepest > -0.1 && deepest < 0.0,
        "lowest vertex went down to {deepest}"
    );
    assert!(vy > 1.0, "vertical velocity after the bounce {vy}");
}

#[test]
fn collision_settings_edited_while_running_take_effect_and_the_response_kind_is_kept() {
    let (mass, radius, k1, k2) = (0.5, 0.3, 40.0, 10.0);
    let xml = BALL_ON_FLOOR
        .replace("{linear}", CG)
        .replace("{mass}", &mass.to_string())
        .replace("{radius}", &radius.to_string())
        .replace("{k1}", &k1.to_string())
        .replace("{k2}", &k2.to_string());
    let mut sim = load(&xml);
    let of_class = |sim: &Simulation, class: &str| {
        sim.scene
            .component_ids()
            .find(|c| sim.scene.info(*c).class == class)
            .unwrap()
    };
    // at rest the contact force k·(d − y) carries m·g, k = k1·k2/d, d = contactDistance + radius
    let rest = |contact: f64, k1: f64| {
        let d = contact + radius;
        d - mass * 9.81 / (k1 * k2 / d)
    };
    let settle = |sim: &mut Simulation| {
        for _ in 0..3000 {
            sim.step();
        }
        state(sim, "ballDofs")[1]
    };
    let close = |y: f64, want: f64| ((y - want) / want).abs() < 1e-3;
    let y = settle(&mut sim);
    assert!(close(y, rest(0.1, k1)), "{y} vs {}", rest(0.1, k1));
    // a new contact distance on the intersection method: the pipeline reads it again
    let method = of_class(&sim, "MinProximityIntersection");
    sim.set_data(method, "contactDistance", "0.2").unwrap();
    let y = settle(&mut sim);
    assert!(close(y, rest(0.2, k1)), "{y} vs {}", rest(0.2, k1));
    // a new contact stiffness on the ball's collision model
    let model = of_class(&sim, "SphereCollisionModel");
    sim.set_data(model, "contactStiffness", "80").unwrap();
    let y = settle(&mut sim);
    assert!(close(y, rest(0.2, 80.0)), "{y} vs {}", rest(0.2, 80.0));
    // the response kind cannot change while running: refused, the value put back
    let manager = of_class(&sim, "CollisionResponse");
    assert!(matches!(
        sim.set_data(manager, "response", "StickContactForceField"),
        Err(canape::core::scene::EditError::Refused { .. })
    ));
    assert_eq!(
        sim.scene.component(manager).unwrap().data().str("response"),
        "PenalityContactForceField"
    );
}

#[test]
fn a_pipeline_link_to_the_wrong_component_is_reported_and_the_setting_found_in_the_context() {
    let xml = BALL_ON_FLOOR
        .replace("{linear}", CG)
        .replace("{mass}", "0.5")
        .replace("{radius}", "0.3")
        .replace("{k1}", "40")
        .replace("{k2}", "10")
        .replace(
            "<CollisionPipeline/>",
            r#"<CollisionPipeline intersectionMethod="@floor" contactManager="@nothing"/>"#,
        );
    let mut sim = canape::load_scene_str(
        &xml,
        "links.scn",
        std::path::Path::new("."),
        &canape::LoadOptions::default(),
    )
    .expect("loads");
    let text: Vec<String> = sim
        .diagnostics
        .iter()
        .filter(|d| d.severity == canape::core::diag::Severity::Error)
        .map(|d| d.message.clone())
        .collect();
    assert!(
        text.iter()
            .any(|m| m.contains("intersectionMethod='@floor'")
                && m.contains("not an intersection method")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|m| m.contains("contactManager='@nothing'") && m.contains("names nothing")),
        "{text:?}"
    );
    // the method and the manager beside the pipeline are used: the ball lands on the floor
    for _ in 0..300 {
        sim.step();
    }
    assert!(contacts_total(&sim) > 0);
    assert!(state(&sim, "ballDofs")[1] > 0.0);
}

/// Two balls, each touching its own fixed anchor and pulled away from it by gravity: ball A's
/// model is in group 1, ball B's anchor model is named `anchorB`.
const TWO_STUCK_BALLS: &str = r#"<Node name="root" gravity="0 9.81 0" dt="0.01">
  <DefaultAnimationLoop/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <LocalMinDistance alarmDistance="0.5" contactDistance="0.1"/>
  {manager}
  <Node name="ballA">
    <EulerImplicitSolver rayleighMass="0.5"/>
    <CGLinearSolver iterations="100" tolerance="1e-14" threshold="1e-20"/>
    <MechanicalObject name="aDofs" position="0 1.5 0"/>
    <UniformMass totalMass="1"/>
    <SphereCollisionModel name="A" group="1" radius="0.3" contactStiffness="300" {ownA}/>
  </Node>
  <Node name="ballB">
    <EulerImplicitSolver rayleighMass="0.5"/>
    <CGLinearSolver iterations="100" tolerance="1e-14" threshold="1e-20"/>
    <MechanicalObject name="bDofs" position="10 1.5 0"/>
    <UniformMass totalMass="1"/>
    <SphereCollisionModel name="B" radius="0.3" contactStiffness="300" {ownB}/>
  </Node>
  <Node name="anchors">
    <MechanicalObject position="0 0 0"/>
    <SphereCollisionModel name="anchorA" radius="1" simulated="0" moving="0" contactStiffness="100"/>
    <Node name="b">
      <MechanicalObject position="10 0 0"/>
      <SphereCollisionModel name="anchorB" radius="1" simulated="0" moving="0" contactStiffness="100"/>
    </Node>
  </Node>
</Node>"#;

#[test]
fn contact_rules_and_the_models_own_responses_choose_each_pairs_response() {
    // whether each ball is still held by its anchor after 15 s (see the stick test above:
    // held below 1.8 + m·g/k, a ball the penalty response pushes leaves past y = 10)
    let held = |manager: &str, own_a: &str, own_b: &str| {
        let xml = TWO_STUCK_BALLS
            .replace("{manager}", manager)
            .replace("{ownA}", own_a)
            .replace("{ownB}", own_b);
        let mut sim = load(&xml);
        for _ in 0..1500 {
            sim.step();
        }
        let y = |name: &str| state(&sim, name)[1];
        let (a, b) = (y("aDofs"), y("bDofs"));
        for y in [a, b] {
            assert!(!(1.8 + 9.81 / 400.0 + 1e-9..=10.0).contains(&y), "y = {y}");
        }
        (a < 2.0, b < 2.0)
    };
    let rules = |r: &str| {
        format!(r#"<RuleBasedContactManager response="PenalityContactForceField" rules="{r}"/>"#)
    };
    // by group number (either way round), by model name, else the default
    assert_eq!(
        held(&rules("1 * StickContactForceField"), "", ""),
        (true, false)
    );
    assert_eq!(
        held(&rules("anchorA 1 StickContactForceField"), "", ""),
        (true, false)
    );
    assert_eq!(
        held(&rules("* anchorB StickContactForceField"), "", ""),
        (false, true)
    );
    assert_eq!(
        held(
            &rules("2 * StickContactForceField  * * StickContactForceField?keepAlive=0"),
            "",
            ""
        ),
        (false, false)
    );
    assert_eq!(held(&rules("default"), "", ""), (false, false));
    // a model's own contactResponse comes before the rules
    let own = r#"contactResponse="PenalityContactForceField""#;
    assert_eq!(
        held(&rules("* * StickContactForceField"), own, ""),
        (false, true)
    );
    // with CollisionResponse, a model's own response when the other sets none
    let plain = r#"<CollisionResponse response="PenalityContactForceField"/>"#;
    let stick = r#"contactResponse="StickContactForceField""#;
    assert_eq!(held(plain, "", stick), (false, true));
    assert_eq!(held(plain, stick, ""), (true, false));
}

#[test]
fn a_bad_rule_or_response_is_reported_with_its_text() {
    let xml = TWO_STUCK_BALLS
        .replace(
            "{manager}",
            r#"<RuleBasedContactManager response="PenalityContactForceField" rules="1 * Glue  * *"/>"#,
        )
        .replace("{ownA}", "")
        .replace("{ownB}", r#"contactResponse="StickContactForceField?glue=1""#);
    let sim = load(&xml);
    let text: Vec<String> = sim.diagnostics.iter().map(|d| d.to_string()).collect();
    let all = text.join("\n");
    assert!(
        all.contains("contact response 'Glue' is not implemented yet"),
        "{all}"
    );
    assert!(all.contains("rules: '* *' is not a whole rule"), "{all}");
    assert!(all.contains("contactResponse: responseParams 'glue=1' is not understood (StickContactForceField takes keepAlive=0 or 1): ignored"), "{all}");
}

#[test]
fn a_pair_whose_rule_no_longer_matches_after_an_edit_gets_the_default_response() {
    let xml = TWO_STUCK_BALLS
        .replace(
            "{manager}",
            r#"<RuleBasedContactManager response="PenalityContactForceField" rules="1 * StickContactForceField"/>"#,
        )
        .replace("{ownA}", "")
        .replace("{ownB}", "");
    let mut sim = load(&xml);
    for _ in 0..300 {
        sim.step();
    }
    assert!(state(&sim, "aDofs")[1] < 2.0, "held by the stick rule");
    let a = sim
        .scene
        .component_ids()
        .find(|&c| sim.scene.info(c).name == "A")
        .unwrap();
    // out of group 1: the rule no longer matches, the pair gets the manager's penalty response
    sim.set_data(a, "group", "2").unwrap();
    for _ in 0..1200 {
        sim.step();
    }
    assert!(state(&sim, "aDofs")[1] > 10.0, "{:?}", state(&sim, "aDofs"));
    assert!(!sim.diagnostics.has_errors(), "{:?}", sim.diagnostics);
}
