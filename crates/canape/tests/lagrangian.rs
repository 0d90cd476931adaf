//! FreeMotionAnimationLoop with Lagrangian constraints: a bilateral constraint holds a falling
//! particle at a fixed one (every Gauss–Seidel variant, uncoupled and linear-solver
//! corrections), a state without a constraint correction keeps its position (as in SOFA), the
//! free motion with no constraint equals the default loop's step, LinearVelocityProjective-
//! Constraint turns a rigid body by the integral of its interpolated velocity, and runs are
//! bit-identical.

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions, Simulation};

fn load(xml: &str) -> Simulation {
    let sim = load_scene_str(
        xml,
        "lagrangian-test.scn",
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

fn pos(sim: &Simulation, path: &str) -> Vec<f64> {
    let id = sim
        .scene
        .component_ids()
        .find(|c| sim.scene.component_label(*c).starts_with(path))
        .unwrap_or_else(|| panic!("no component {path}"));
    sim.scene.state(id).unwrap().vec(VecId::POSITION).to_vec()
}

/// Particle B (own solver) hangs from particle A (fixed, no solver) by a bilateral constraint
/// with a rest vector.
fn hanging(solver: &str, correction: &str, linear: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <FreeMotionAnimationLoop/>
  {solver}
  <Node name="A">
    <MechanicalObject name="a" position="0 1 0"/>
  </Node>
  <Node name="B">
    <EulerImplicitSolver/>
    {linear}
    <MechanicalObject name="b" position="0.3 0.2 0"/>
    <UniformMass totalMass="2"/>
    {correction}
  </Node>
  <BilateralLagrangianConstraint template="Vec3" object1="@A/a" object2="@B/b" first_point="0" second_point="0" rest_vector="0.5 -1 0"/>
</Node>"#
    )
}

#[test]
fn a_bilateral_constraint_holds_the_particle_at_its_rest_vector() {
    let cg = r#"<CGLinearSolver iterations="100" tolerance="1e-20" threshold="1e-20"/>"#;
    for (solver, correction, linear) in [
        (
            r#"<BlockGaussSeidelConstraintSolver tolerance="1e-10"/>"#,
            "<UncoupledConstraintCorrection/>",
            cg,
        ),
        (
            r#"<ProjectedGaussSeidelConstraintSolver tolerance="1e-10"/>"#,
            r#"<UncoupledConstraintCorrection compliance="0.5"/>"#,
            cg,
        ),
        (
            r#"<NNCGConstraintSolver tolerance="1e-10"/>"#,
            "<UncoupledConstraintCorrection/>",
            cg,
        ),
        (
            r#"<GenericConstraintSolver tolerance="1e-10"/>"#,
            "<LinearSolverConstraintCorrection/>",
            "<SparseLDLSolver/>",
        ),
        (
            r#"<BlockGaussSeidelConstraintSolver tolerance="1e-10"/>"#,
            "<GenericConstraintCorrection/>",
            cg,
        ),
    ] {
        let mut sim = load(&hanging(solver, correction, linear));
        for _ in 0..30 {
            sim.step();
        }
        let b = pos(&sim, "/root/B/b");
        let target = [0.5, 0.0, 0.0];
        for k in 0..3 {
            assert!(
                (b[k] - target[k]).abs() < 1e-8,
                "{solver} {correction}: b = {b:?}"
            );
        }
        assert_eq!(pos(&sim, "/root/A/a"), vec![0.0, 1.0, 0.0]);
    }
}

#[test]
fn the_unbuilt_solver_corrects_by_dt_times_less_as_sofa_does() {
    // SOFA's unbuilt path builds W without the integration factor: with an uncoupled
    // correction the constraint pulls with dt times the built solver's impulse, so the particle
    // is not held (this is what SOFA's BilateralLagrangianConstraint_UGS reference shows)
    let cg = r#"<CGLinearSolver iterations="100" tolerance="1e-20" threshold="1e-20"/>"#;
    let mut sim = load(&hanging(
        r#"<UnbuiltGaussSeidelConstraintSolver tolerance="1e-10"/>"#,
        "<UncoupledConstraintCorrection/>",
        cg,
    ));
    for _ in 0..30 {
        sim.step();
    }
    let b = pos(&sim, "/root/B/b");
    assert!((b[0] - 0.5).abs() > 1e-3, "{b:?}");
}

#[test]
fn without_a_constraint_correction_a_state_stays_put() {
    let mut sim = load(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver/>
  <EulerImplicitSolver/>
  <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-12"/>
  <MechanicalObject name="p" position="0 0 0"/>
  <UniformMass totalMass="1"/>
</Node>"#,
    );
    for _ in 0..5 {
        sim.step();
    }
    assert_eq!(pos(&sim, "/root/p"), vec![0.0, 0.0, 0.0]);
}

#[test]
fn the_free_motion_without_constraints_is_the_default_step() {
    let body = |lp: &str| {
        format!(
            r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  {lp}
  <EulerImplicitSolver rayleighMass="0.1"/>
  <CGLinearSolver iterations="100" tolerance="1e-20" threshold="1e-20"/>
  <MechanicalObject name="p" position="0 0 0  1 0 0  1 1 0"/>
  <UniformMass totalMass="3"/>
  <FixedProjectiveConstraint indices="0"/>
  <MeshSpringForceField name="s" stiffness="100" />
  <MeshTopology edges="0 1 1 2 2 0"/>
  <UncoupledConstraintCorrection/>
</Node>"#
        )
    };
    let mut free = load(&body(
        "<FreeMotionAnimationLoop/><BlockGaussSeidelConstraintSolver/>",
    ));
    let mut plain = load(&body("<DefaultAnimationLoop/>"));
    for _ in 0..20 {
        free.step();
        plain.step();
    }
    let (a, b) = (pos(&free, "/root/p"), pos(&plain, "/root/p"));
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-12, "{a:?} vs {b:?}");
    }
    assert!(a[4] < -0.01, "the free points fall: {a:?}");
}

#[test]
fn linear_velocity_turns_a_rigid_body_by_the_integral_of_its_velocity() {
    // SOFA's Component/Constraint/Projective/LinearVelocityProjectiveConstraint.scn without its
    // visual and collision nodes: ω(t) = 0.3 t / 2 about z, continued after the last key time;
    // positions integrate the velocity of each step's start time
    let mut sim = load(
        r#"<Node name="root" gravity="0 -100 0" dt="0.05">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver maxIterations="1000" tolerance="0.001"/>
  <Node name="Box">
    <EulerImplicitSolver/>
    <EigenSparseLU template="CompressedRowSparseMatrixd"/>
    <MechanicalObject name="mstate" template="Rigid3" position="0 0 0 0 0 0 1"/>
    <LinearVelocityProjectiveConstraint indices="0" keyTimes="0 2" velocities="0 0 0 0 0 0 0 0 0 0 0 0.3" continueAfterEnd="true"/>
    <UniformMass totalMass="0.1"/>
    <LinearSolverConstraintCorrection/>
  </Node>
</Node>"#,
    );
    let steps = 100;
    for _ in 0..steps {
        sim.step();
    }
    let x = pos(&sim, "/root/Box/mstate");
    let angle: f64 = (0..steps).map(|k| 0.15 * (k as f64 * 0.05) * 0.05).sum();
    assert!((x[5] - (angle / 2.0).sin()).abs() < 1e-9, "{x:?}");
    assert!((x[6] - (angle / 2.0).cos()).abs() < 1e-9, "{x:?}");
    assert!(x[..3].iter().all(|c| c.abs() < 1e-12), "{x:?}");
}

#[test]
fn constrained_runs_are_bit_identical_and_clones_follow() {
    let cg = r#"<CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-12"/>"#;
    let xml = hanging(
        r#"<BlockGaussSeidelConstraintSolver/>"#,
        "<UncoupledConstraintCorrection/>",
        cg,
    );
    let mut a = load(&xml);
    let mut b = load(&xml);
    for _ in 0..10 {
        a.step();
    }
    let mut c = a.clone();
    for _ in 0..10 {
        a.step();
        c.step();
    }
    for _ in 0..20 {
        b.step();
    }
    let pa = pos(&a, "/root/B/b");
    assert_eq!(pa, pos(&b, "/root/B/b"));
    assert_eq!(pa, pos(&c, "/root/B/b"));
}

/// A particle dropped on a fixed floor (two triangles, no solver) with the Lagrangian contact
/// response (FrictionContactConstraint), given a horizontal velocity.
fn dropped(mu: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver tolerance="1e-10" maxIterations="1000"/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <MinProximityIntersection alarmDistance="0.5" contactDistance="0.1"/>
  <CollisionResponse response="FrictionContactConstraint" responseParams="mu={mu}"/>
  <Node name="Floor">
    <MechanicalObject name="f" position="-5 0 -5  5 0 -5  5 0 5  -5 0 5"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0"/>
  </Node>
  <Node name="Ball">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-12"/>
    <MechanicalObject name="p" position="0 0.3 0" velocity="1 0 0"/>
    <UniformMass totalMass="1"/>
    <UncoupledConstraintCorrection/>
    <PointCollisionModel/>
  </Node>
</Node>"#
    )
}

#[test]
fn a_contact_constraint_stops_a_falling_point_at_the_contact_distance() {
    let mut sim = load(&dropped("0"));
    for _ in 0..100 {
        sim.step();
    }
    let p = pos(&sim, "/root/Ball/p");
    // frictionless: rests at the contact distance and keeps sliding at 1 m/s
    assert!((p[1] - 0.1).abs() < 1e-6, "{p:?}");
    assert!((p[0] - 1.0).abs() < 0.02, "{p:?}");
}

#[test]
fn coulomb_friction_stops_the_sliding_point() {
    let mut sim = load(&dropped("0.5"));
    for _ in 0..100 {
        sim.step();
    }
    let p = pos(&sim, "/root/Ball/p");
    assert!((p[1] - 0.1).abs() < 1e-6, "{p:?}");
    // it hits the floor after ~0.2 s at x ≈ 0.2, then μ g decelerates 1 m/s in ~0.2 s
    // (about 0.1 more): it stops well before the frictionless run's x = 1
    assert!(p[0] > 0.15 && p[0] < 0.45, "{p:?}");
    let v = {
        let id = sim
            .scene
            .component_ids()
            .find(|c| sim.scene.component_label(*c).starts_with("/root/Ball/p"))
            .unwrap();
        sim.scene.state(id).unwrap().vec(VecId::VELOCITY).to_vec()
    };
    assert!(v.iter().all(|x| x.abs() < 1e-6), "{v:?}");
}

#[test]
fn pcg_preconditioned_by_a_direct_solver_converges_at_once_and_corrects_constraints() {
    // Demos/fallingBeamLagrangianCollision.scn's solver setup on a small beam: PCG with a
    // SparseLDLSolver as preconditioner (the factorization of the assembled matrix) and a
    // LinearSolverConstraintCorrection; a bilateral constraint pins one corner to a fixed point
    let mut sim = load(
        r#"<Node name="root" dt="0.01" gravity="0 0 -9.81">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver maxIterations="200" tolerance="1e-12"/>
  <Node name="Anchor"><MechanicalObject name="a" position="0 0 0"/></Node>
  <Node name="FEM">
    <EulerImplicitSolver rayleighMass="0.1" rayleighStiffness="0.1"/>
    <PCGLinearSolver preconditioner="@precond"/>
    <SparseLDLSolver name="precond" template="CompressedRowSparseMatrixMat3x3"/>
    <RegularGridTopology name="grid" n="5 2 2" min="0 0 0" max="0.4 0.1 0.1"/>
    <MechanicalObject name="mstate"/>
    <HexahedronFEMForceField youngModulus="6e4" poissonRatio="0.4"/>
    <UniformMass totalMass="1"/>
    <LinearSolverConstraintCorrection linearSolver="@precond"/>
  </Node>
  <BilateralLagrangianConstraint template="Vec3" object1="@Anchor/a" object2="@FEM/mstate" first_point="0" second_point="0"/>
</Node>"#,
    );
    let linear = sim.groups[0].linear.expect("a linear solver");
    assert_eq!(
        sim.scene.linears[linear].as_ref().unwrap().class_name(),
        "PCGLinearSolver"
    );
    for _ in 0..20 {
        sim.step();
        assert!(
            sim.last_solve.iter().all(|s| s.iterations <= 1),
            "{:?}",
            sim.last_solve
        );
    }
    let x = pos(&sim, "/root/FEM/mstate");
    assert!(x[..3].iter().all(|c| c.abs() < 1e-9), "{:?}", &x[..3]);
    // the free end sags under gravity
    assert!(x[3 * 4 + 2] < -1e-3, "{x:?}");
}

#[test]
fn bad_lagrangian_input_is_reported_and_the_rest_runs() {
    let xml = r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <FreeMotionAnimationLoop/>
  <LCPConstraintSolver tolerance="nan" maxIt="-5" mu="-1"/>
  <Node name="A"><MechanicalObject name="a" position="0 1 0"/></Node>
  <Node name="B">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="10" tolerance="1e-9" threshold="1e-9"/>
    <MechanicalObject name="b" template="Rigid3" position="0 0 0 0 0 0 1"/>
    <UniformMass totalMass="1"/>
    <UncoupledConstraintCorrection compliance="0"/>
  </Node>
  <BilateralLagrangianConstraint template="Vec3" object1="@A/a" object2="@nowhere" first_point="0" second_point="0"/>
  <BilateralLagrangianConstraint template="Vec3" object1="@A/a" object2="@B/b" first_point="0" second_point="0"/>
</Node>"#;
    let mut sim = load_scene_str(
        xml,
        "bad-lagrangian.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    let text: Vec<String> = sim.diagnostics.iter().map(|d| d.to_string()).collect();
    let has = |s: &str| text.iter().any(|t| t.contains(s));
    assert!(has("bad-lagrangian.scn:3"), "{text:#?}");
    assert!(has("tolerance must be a non-negative number"), "{text:#?}");
    assert!(has("maxIt -5 is negative"), "{text:#?}");
    assert!(
        has("object2='@nowhere' names nothing in the scene"),
        "{text:#?}"
    );
    assert!(has("links two Vec3 or two Rigid3 states"), "{text:#?}");
    assert!(
        has("compliance values must be finite and non-zero"),
        "{text:#?}"
    );
    for _ in 0..5 {
        sim.step();
    }
    // the rigid body has no working correction: it stays where it was, finite (as in SOFA)
    let b = pos(&sim, "/root/B/b");
    assert_eq!(b, vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
}

/// FixedLagrangianConstraint holds the listed points of a falling grid at their rest positions
/// (Vec3), and a rigid frame's position and orientation (Rigid3), by Lagrangian rows.
#[test]
fn fixed_lagrangian_constraint_holds_points_at_rest() {
    let sim_of = |template: &str, extra: &str| {
        format!(
            r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver maxIterations="200" tolerance="1e-14"/>
  <Node name="B">
    <EulerImplicitSolver/>
    <SparseLDLSolver template="CompressedRowSparseMatrixMat3x3"/>
    <MechanicalObject name="b" template="{template}" {extra}/>
    <UniformMass totalMass="2"/>
    <GenericConstraintCorrection/>
    <FixedLagrangianConstraint indices="0"/>
  </Node>
</Node>"#
        )
    };
    // Vec3: point 0 held, point 1 falls freely (no coupling between them)
    let mut sim = load(&sim_of("Vec3", r#"position="0 1 0  2 1 0""#));
    for _ in 0..50 {
        sim.step();
    }
    let x = pos(&sim, "/root/B/b");
    for (a, b) in x[..3].iter().zip([0.0, 1.0, 0.0]) {
        assert!((a - b).abs() < 1e-9, "held point moved: {x:?}");
    }
    assert!(x[4] < 0.0, "the free point falls: {x:?}");
    // Rigid3: a frame turned about z is held at its rest pose
    let mut sim = load(&sim_of(
        "Rigid3",
        r#"position="1 2 3  0 0 0.3826834 0.9238795""#,
    ));
    for _ in 0..50 {
        sim.step();
    }
    let x = pos(&sim, "/root/B/b");
    for (a, b) in x
        .iter()
        .zip([1.0, 2.0, 3.0, 0.0, 0.0, 0.3826834, 0.9238795])
    {
        assert!((a - b).abs() < 1e-7, "held frame moved: {x:?}");
    }
}

/// A chain of five particles (the first fixed) under gravity, held inextensible by
/// UniformLagrangianConstraint on the DistanceMapping of its edges: the per-row iterative
/// resolution and the one-block factorization (`iterative="false"`) find the same impulses,
/// and the edges keep their rest length to the linearisation's second order.
fn chain(iterative: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.001" gravity="0 -10 0">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver tolerance="1e-14" maxIterations="5000"/>
  <StringMeshCreator name="loader" resolution="5"/>
  <EulerImplicitSolver/>
  <SparseLDLSolver/>
  <GenericConstraintCorrection/>
  <EdgeSetTopologyContainer name="topology" position="@loader.position" edges="@loader.edges"/>
  <MechanicalObject name="dofs"/>
  <FixedProjectiveConstraint indices="0"/>
  <UniformMass totalMass="0.01"/>
  <Node name="ext">
    <MechanicalObject template="Vec1" name="lengths"/>
    <DistanceMapping topology="@../topology"/>
    <UniformLagrangianConstraint iterative="{iterative}"/>
  </Node>
</Node>"#
    )
}

#[test]
fn uniform_lagrangian_constraint_keeps_a_chain_inextensible_row_by_row_or_as_one_block() {
    let (mut a, mut b) = (load(&chain("1")), load(&chain("0")));
    for _ in 0..100 {
        a.step();
        b.step();
    }
    let (xa, xb) = (pos(&a, "/root/dofs"), pos(&b, "/root/dofs"));
    let diff = xa
        .iter()
        .zip(&xb)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max);
    assert!(diff < 1e-9, "iterative vs block: {diff:e}");
    // the chain swung down (it started horizontal) and its edges kept their length 0.25
    assert!(xa[13] < -0.05, "the free end fell: {xa:?}");
    for k in 0..4 {
        let d = ((xa[3 * k + 3] - xa[3 * k]).powi(2)
            + (xa[3 * k + 4] - xa[3 * k + 1]).powi(2)
            + (xa[3 * k + 5] - xa[3 * k + 2]).powi(2))
        .sqrt();
        assert!((d - 0.25).abs() < 1e-3, "edge {k}: length {d}");
    }
    // without the constraint the edges would not be held: the free end falls as a free body
    let mut free = load(&chain("1").replace(r#"<UniformLagrangianConstraint iterative="1"/>"#, ""));
    for _ in 0..100 {
        free.step();
    }
    let xf = pos(&free, "/root/dofs");
    assert!((xf[13] - (-0.5 * 10.0 * 0.1 * 0.1)).abs() < 2e-3, "{xf:?}");
}

/// solveVelocityConstraintFirst (SOFA's VEL order): on the inextensible chain, whose
/// violations are linear in the free motion, the velocity-level problem is the position-level
/// one divided by dt (W with the velocity factor 1 instead of dt, violations v_free + d/dt), so
/// under EulerImplicit both give the same motion; a frictionless contact at the velocity level
/// stops the falling point at its contact distance (n·(v + (P − Q)/dt) − d/dt = 0) and keeps it
/// sliding, and with friction stops it.
#[test]
fn velocity_level_constraints_match_the_position_level_where_they_must() {
    let vel = |xml: String| {
        xml.replace(
            "<FreeMotionAnimationLoop/>",
            r#"<FreeMotionAnimationLoop solveVelocityConstraintFirst="1"/>"#,
        )
    };
    let (mut a, mut b) = (load(&chain("0")), load(&vel(chain("0"))));
    for _ in 0..100 {
        a.step();
        b.step();
    }
    let (xa, xb) = (pos(&a, "/root/dofs"), pos(&b, "/root/dofs"));
    let diff = xa
        .iter()
        .zip(&xb)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max);
    assert!(diff < 1e-10, "position vs velocity level: {diff:e}");
    assert!(xa[13] < -0.05, "the chain swung: {xa:?}");

    let mut free = load(&vel(dropped("0")));
    for _ in 0..100 {
        free.step();
    }
    let p = pos(&free, "/root/Ball/p");
    assert!((p[1] - 0.1).abs() < 1e-6, "{p:?}");
    assert!((p[0] - 1.0).abs() < 0.02, "{p:?}");
    let mut rough = load(&vel(dropped("0.5")));
    for _ in 0..100 {
        rough.step();
    }
    let p = pos(&rough, "/root/Ball/p");
    assert!(
        (p[1] - 0.1).abs() < 1e-6 && p[0] > 0.15 && p[0] < 0.45,
        "{p:?}"
    );
}

/// A hexahedral beam held by two bilateral constraints at fixed points, its compliance from a
/// LinearSolverConstraintCorrection: under SparseLDLSolver (a Cholesky factor: the compliance by
/// forward substitutions only, W = Yᵀ Y) and under EigenSparseLU (no such shortcut: full
/// solves and products with J) the motion is the same to round-off.
#[test]
fn the_compliance_of_a_cholesky_factor_equals_the_one_from_full_solves() {
    let scene = |linear: &str| {
        format!(
            r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <FreeMotionAnimationLoop/>
  <GenericConstraintSolver maxIterations="500" tolerance="1e-14"/>
  <Node name="A">
    <MechanicalObject name="a" position="0 0 0  1 1 0"/>
  </Node>
  <Node name="B">
    <EulerImplicitSolver rayleighMass="0.1" rayleighStiffness="0.1"/>
    {linear}
    <RegularGridTopology n="2 2 9" min="0 0 0" max="1 1 8"/>
    <MechanicalObject name="b"/>
    <UniformMass totalMass="2"/>
    <HexahedronFEMForceField youngModulus="300" poissonRatio="0.3"/>
    <LinearSolverConstraintCorrection/>
  </Node>
  <BilateralLagrangianConstraint template="Vec3" object1="@A/a" object2="@B/b" first_point="0 1" second_point="0 3"/>
</Node>"#
        )
    };
    let mut ldl = load(&scene("<SparseLDLSolver/>"));
    let mut lu = load(&scene(
        r#"<EigenSparseLU template="CompressedRowSparseMatrixd"/>"#,
    ));
    for _ in 0..30 {
        ldl.step();
        lu.step();
    }
    let (p, q) = (pos(&ldl, "/root/B/b"), pos(&lu, "/root/B/b"));
    let rest = pos(&load(&scene("<SparseLDLSolver/>")), "/root/B/b");
    let moved = p
        .iter()
        .zip(&rest)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(moved > 0.1, "the free end falls: moved {moved}");
    let worst = p
        .iter()
        .zip(&q)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        worst < 1e-9,
        "SparseLDL and EigenSparseLU differ by {worst}"
    );
    // the held points stay at their anchors
    for (k, anchor) in [(0usize, [0.0, 0.0, 0.0]), (3, [1.0, 1.0, 0.0])] {
        for c in 0..3 {
            assert!(
                (p[3 * k + c] - anchor[c]).abs() < 1e-6,
                "point {k}: {:?}",
                &p[3 * k..3 * k + 3]
            );
        }
    }
}
