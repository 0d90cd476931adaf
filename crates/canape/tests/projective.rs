//! Projective constraints on every DOF type: FixedProjectiveConstraint and
//! PartialFixedProjectiveConstraint (only the directions `fixedDirections` marks are held), with
//! a matrix-free solver (projected products) and a direct solver (Dirichlet rows and columns).

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions, Simulation};

fn load(xml: &str) -> Simulation {
    let sim = load_scene_str(
        xml,
        "projective-test.scn",
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

#[test]
fn partial_fixed_holds_only_the_marked_directions() {
    for solver in [
        r#"<CGLinearSolver iterations="100" tolerance="1e-20" threshold="1e-20"/>"#,
        r#"<SparseLDLSolver/>"#,
    ] {
        let mut sim = load(&format!(
            r#"<Node name="root" dt="0.01" gravity="1 -9.81 2">
  <EulerImplicitSolver/>{solver}
  <MechanicalObject position="0 0 0 1 0 0"/>
  <UniformMass vertexMass="1"/>
  <SpringForceField spring="0 1 100 0 1"/>
  <PartialFixedProjectiveConstraint indices="0" fixedDirections="1 1 0"/>
</Node>"#
        ));
        for _ in 0..50 {
            sim.step();
        }
        let x = sim.scene.states[0].as_ref().unwrap().vec(VecId::POSITION);
        // point 0: x and y held, z falls (along +z) with the rest
        assert_eq!((x[0], x[1]), (0.0, 0.0), "{solver}");
        assert!(x[2] > 0.1, "{solver}: z = {}", x[2]);
        // point 1 is free in every direction
        assert!(x[4] < -0.1 && x[5] > 0.1, "{solver}: {:?}", &x[3..6]);
    }
}

#[test]
fn partial_fixed_on_a_rigid_body_holds_its_translation_and_lets_it_turn() {
    // fixedDirections "1 1 1 0 0 0": the center stays, the rotation is free (a torque from a
    // spring pulling a mapped point turns the body)
    let mut sim = load(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <EulerImplicitSolver/><CGLinearSolver iterations="100" tolerance="1e-20" threshold="1e-20"/>
  <MechanicalObject template="Rigid3"/>
  <UniformMass template="Rigid3" vertexMass="1"/>
  <PartialFixedProjectiveConstraint fixedDirections="1 1 1 0 0 0"/>
  <Node name="tip">
    <MechanicalObject position="1 0 0"/>
    <UniformMass vertexMass="1"/>
    <RigidMapping/>
  </Node>
</Node>"#,
    );
    for _ in 0..20 {
        sim.step();
    }
    let x = sim.scene.states[0].as_ref().unwrap().vec(VecId::POSITION);
    assert_eq!(&x[..3], &[0.0, 0.0, 0.0]);
    // the tip's weight turns the body about -z
    assert!(x[5] < -0.05, "q = {:?}", &x[3..7]);
}

#[test]
fn a_state_with_no_position_has_one_point_as_in_sofa() {
    let sim = load(
        r#"<Node name="root"><MechanicalObject template="Rigid3"/><MechanicalObject name="v"/></Node>"#,
    );
    let r = sim.scene.states[0].as_ref().unwrap();
    assert_eq!(r.size(), 1);
    assert_eq!(r.vec(VecId::POSITION), &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    assert_eq!(sim.scene.states[1].as_ref().unwrap().size(), 1);
}

#[test]
fn rigid_uniform_mass_reads_sofa_rigid_mass_text() {
    use canape::core::scene::Slot;
    // "mass volume inertia(3×3)": the rotation's mass matrix is mass × inertia (world axes)
    let sim = load(
        r#"<Node name="root"><MechanicalObject template="Rigid3"/>
  <UniformMass template="Rigid3" vertexMass="2 1 [1 0 0,0 3 0.5,0 0.5 5]"/></Node>"#,
    );
    let id = sim
        .scene
        .component_ids()
        .find(|&c| {
            sim.scene.info(c).name == "UniformMass1" || sim.scene.info(c).class == "UniformMass"
        })
        .unwrap();
    let Slot::Mass(k) = sim.scene.info(id).slot else {
        panic!("not a mass")
    };
    let m = sim.scene.masses[k].as_ref().unwrap();
    assert!(!m.is_diagonal());
    let dx = [1.0, 2.0, 3.0, 1.0, 1.0, 1.0];
    let mut r = [0.0; 6];
    m.add_mdx(&mut r, &dx, 1.0);
    assert_eq!(r, [2.0, 4.0, 6.0, 2.0, 2.0 * 3.5, 2.0 * 5.5]);
    // a malformed text is an error naming the Data
    let bad = load_scene_str(
        r#"<Node name="root"><MechanicalObject template="Rigid3"/>
  <UniformMass template="Rigid3" vertexMass="2 1 [1 0 0,0 1 0]"/></Node>"#,
        "bad-mass.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    let text: Vec<String> = bad.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("bad-mass.scn:2") && t.contains("vertexMass: 8 numbers")),
        "{text:?}"
    );
}

#[test]
fn constant_force_on_a_rigid_body_pushes_and_turns_it() {
    // a force and a torque (6 values on a Rigid3 state), no gravity: v = F t / m, ω = τ t / m
    // (unit inertia), explicit symplectic Euler
    let mut sim = load(
        r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <EulerExplicitSolver symplectic="1"/>
  <MechanicalObject template="Rigid3"/>
  <UniformMass template="Rigid3" vertexMass="2"/>
  <ConstantForceField template="Rigid3" forces="2 0 0 0 0 0.4"/>
</Node>"#,
    );
    for _ in 0..100 {
        sim.step();
    }
    let v = sim.scene.states[0].as_ref().unwrap().vec(VecId::VELOCITY);
    assert!((v[0] - 1.0).abs() < 1e-12, "v = {v:?}");
    assert!((v[5] - 0.2).abs() < 1e-12, "ω = {v:?}");
    // a Vec3 force on a Rigid3 state is refused with the sizes
    let bad = load_scene_str(
        r#"<Node name="root"><MechanicalObject template="Rigid3"/>
  <ConstantForceField forces="1 2 3"/></Node>"#,
        "bad-force.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    let text: Vec<String> = bad.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("bad-force.scn:2") && t.contains("has 6")),
        "{text:?}"
    );
}

#[test]
fn diagonal_mass_on_rigid_and_vec1_states() {
    use canape::core::scene::Slot;
    // a Rigid3 chain of beams (edges of lengths 1 and 2): vertex masses ρ·L/2 per edge end,
    // the same on every derivative component (inertia m·I)
    let mut sim = load(
        r#"<Node name="root" dt="0.01" gravity="0 -10 0">
  <EulerExplicitSolver symplectic="1"/>
  <MechanicalObject template="Rigid3" position="0 0 0 0 0 0 1  1 0 0 0 0 0 1  3 0 0 0 0 0 1"/>
  <MeshTopology lines="0 1 1 2"/>
  <DiagonalMass template="Rigid3,Rigid3" massDensity="2"/>
</Node>"#,
    );
    let mass = |sim: &Simulation| {
        let k = sim
            .scene
            .component_ids()
            .find_map(|i| match sim.scene.info(i).slot {
                Slot::Mass(k) => Some(k),
                _ => None,
            })
            .unwrap();
        let m = sim.scene.masses[k].as_ref().unwrap();
        let n = sim.scene.states[0].as_ref().unwrap().deriv_len();
        let mut d = vec![0.0; n];
        m.add_mdx(&mut d, &vec![1.0; n], 1.0);
        d
    };
    let d = mass(&sim);
    assert_eq!(d, [[1.0; 6], [3.0; 6], [2.0; 6]].concat());
    // free fall: every center falls by g t²/2-ish (symplectic), orientations stay
    for _ in 0..10 {
        sim.step();
    }
    let v = sim.scene.states[0].as_ref().unwrap().vec(VecId::VELOCITY);
    for i in 0..3 {
        assert!((v[6 * i + 1] + 1.0).abs() < 1e-12, "v = {v:?}");
        assert_eq!(v[6 * i + 3..6 * i + 6], [0.0; 3]);
    }
    // Vec1 points on a line, edges: masses from lengths
    let sim = load(
        r#"<Node name="root"><MechanicalObject template="Vec1" position="0 1 4"/>
  <MeshTopology lines="0 1 1 2"/><DiagonalMass template="Vec1" massDensity="1"/></Node>"#,
    );
    assert_eq!(mass(&sim), [0.5, 2.0, 1.5]);
}

#[test]
fn a_fixed_point_with_no_mass_stays_under_a_direct_solver() {
    // no mass, no force field on the fixed point: its row of the system is the projection's
    // unit diagonal, as in SOFA (it used to be an empty row: NaN)
    for solver in ["<SparseLDLSolver/>", "<EigenSparseLU/>"] {
        let mut sim = load(&format!(
            r#"<Node name="root" dt="0.01"><EulerImplicitSolver/>{solver}
  <Node name="fix"><MechanicalObject position="0 0 0"/><FixedProjectiveConstraint indices="0"/></Node>
  <Node name="ball"><MechanicalObject position="1 0 0"/><UniformMass vertexMass="1"/></Node>
</Node>"#
        ));
        for _ in 0..5 {
            sim.step();
        }
        assert!(sim.find_non_finite().is_none(), "{solver}");
        let fix = sim.scene.states[0].as_ref().unwrap().vec(VecId::POSITION);
        assert_eq!(fix, &[0.0, 0.0, 0.0]);
        let ball = sim.scene.states[1].as_ref().unwrap().vec(VecId::POSITION);
        assert!(ball[1] < -0.01, "{solver}: {ball:?}");
    }
}

#[test]
fn a_point_on_a_plane_force_field_rests_at_the_penalty_depth() {
    // m g = k δ: δ = 1 · 9.81 / 1000 below the plane y = 0.5, the point held in x and z (the
    // penalty acts along the normal only)
    for solver in [
        r#"<CGLinearSolver iterations="50" tolerance="1e-20" threshold="1e-20"/>"#,
        "<SparseLDLSolver/>",
    ] {
        let mut sim = load(&format!(
            r#"<Node name="root" dt="0.01" gravity="0 -9.81 0"><EulerImplicitSolver rayleighMass="1"/>{solver}
  <MechanicalObject position="0.3 0.6 -0.2"/><UniformMass vertexMass="1"/>
  <PlaneForceField normal="0 1 0" d="0.5" stiffness="1000" damping="5"/>
</Node>"#
        ));
        for _ in 0..3000 {
            sim.step();
        }
        let x = sim.scene.states[0].as_ref().unwrap().vec(VecId::POSITION);
        assert!(
            (x[1] - (0.5 - 9.81 / 1000.0)).abs() < 1e-6,
            "{solver}: y = {}",
            x[1]
        );
        assert!((x[0] - 0.3).abs() < 1e-9 && (x[2] + 0.2).abs() < 1e-9);
    }
}

#[test]
fn fixed_plane_holds_the_band_points_along_its_direction() {
    for solver in [
        r#"<CGLinearSolver iterations="50" tolerance="1e-20" threshold="1e-20"/>"#,
        "<SparseLDLSolver/>",
    ] {
        let mut sim = load(&format!(
            r#"<Node name="root" dt="0.01" gravity="0 -9.81 0"><EulerImplicitSolver/>{solver}
  <MechanicalObject position="0 0 0  5 0 0"/><UniformMass vertexMass="1"/>
  <ConstantForceField forces="1 0 0"/>
  <FixedPlaneProjectiveConstraint direction="1 0 0" dmin="-1" dmax="1"/>
</Node>"#
        ));
        for _ in 0..20 {
            sim.step();
        }
        let x = sim.scene.states[0].as_ref().unwrap().vec(VecId::POSITION);
        // point 0 (x = 0, in the band) keeps x but falls; point 1 moves along x too
        assert_eq!(x[0], 0.0, "{solver}");
        assert!(x[1] < -0.01 && x[4] < -0.01, "{solver}: {x:?}");
        assert!(x[3] > 5.01, "{solver}: {x:?}");
    }
}
