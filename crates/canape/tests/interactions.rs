//! Interaction force fields (springs with `object1` and `object2` on two states): the same
//! springs split over two states, or acting on mapped copies of them, give the motion of one
//! state holding every point — with a matrix-free solver (interaction in the products) and with
//! a direct solver (off-diagonal blocks in the assembled matrix).

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions, Simulation};

fn load(xml: &str) -> Simulation {
    let sim = load_scene_str(
        xml,
        "interaction-test.scn",
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

const CG: &str = r#"<CGLinearSolver iterations="200" tolerance="1e-30" threshold="1e-30"/>"#;
const LDL: &str = r#"<SparseLDLSolver template="CompressedRowSparseMatrixMat3x3"/>"#;

/// Six points in a chain, point 0 fixed, in one state.
fn one_state(solver: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <EulerImplicitSolver rayleighStiffness="0.05" rayleighMass="0.1"/>{solver}
  <Node name="all">
    <MechanicalObject name="dofs" position="0 0 0 1 0 0 2 0 0 3 0 0 4 0 0 5 0 0"
        velocity="0 0 0 0 0 1 0 0 0 0 0 -1 0 0 0 0 0 0.5"/>
    <UniformMass vertexMass="1"/>
    <FixedProjectiveConstraint indices="0"/>
    <SpringForceField spring="0 1 100 0.5 1  1 2 100 0.5 1  2 3 80 0.3 1  3 4 100 0.5 1  4 5 100 0.5 1  4 1 50 0.2 3"/>
  </Node>
</Node>"#
    )
}

/// The same chain split over two states, A (points 0–2) and B (points 3–5), joined by two
/// interaction force fields (one of them with object1 = B).
fn two_states(solver: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <EulerImplicitSolver rayleighStiffness="0.05" rayleighMass="0.1"/>{solver}
  <Node name="A">
    <MechanicalObject name="dofs" position="0 0 0 1 0 0 2 0 0" velocity="0 0 0 0 0 1 0 0 0"/>
    <UniformMass vertexMass="1"/>
    <FixedProjectiveConstraint indices="0"/>
    <SpringForceField spring="0 1 100 0.5 1  1 2 100 0.5 1"/>
  </Node>
  <SpringForceField name="AB" object1="@A/dofs" object2="@B" spring="2 0 80 0.3 1"/>
  <Node name="B">
    <MechanicalObject name="dofs" position="3 0 0 4 0 0 5 0 0" velocity="0 0 -1 0 0 0 0 0 0.5"/>
    <UniformMass vertexMass="1"/>
    <SpringForceField spring="0 1 100 0.5 1  1 2 100 0.5 1"/>
    <SpringForceField name="BA" object1="@." object2="@../A/dofs" spring="1 1 50 0.2 3"/>
  </Node>
</Node>"#
    )
}

/// The interaction springs act on identity-mapped copies of A and B.
fn two_mapped_states(solver: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <EulerImplicitSolver rayleighStiffness="0.05" rayleighMass="0.1"/>{solver}
  <Node name="A">
    <MechanicalObject name="dofs" position="0 0 0 1 0 0 2 0 0" velocity="0 0 0 0 0 1 0 0 0"/>
    <UniformMass vertexMass="1"/>
    <FixedProjectiveConstraint indices="0"/>
    <SpringForceField spring="0 1 100 0.5 1  1 2 100 0.5 1"/>
    <Node name="copy">
      <MechanicalObject name="dofs"/>
      <IdentityMapping/>
    </Node>
  </Node>
  <Node name="B">
    <MechanicalObject name="dofs" position="3 0 0 4 0 0 5 0 0" velocity="0 0 -1 0 0 0 0 0 0.5"/>
    <UniformMass vertexMass="1"/>
    <SpringForceField spring="0 1 100 0.5 1  1 2 100 0.5 1"/>
    <Node name="copy">
      <MechanicalObject name="dofs"/>
      <IdentityMapping/>
    </Node>
  </Node>
  <SpringForceField object1="@A/copy/dofs" object2="@B/copy/dofs" spring="2 0 80 0.3 1"/>
  <SpringForceField object1="@B/copy/dofs" object2="@A/copy/dofs" spring="1 1 50 0.2 3"/>
</Node>"#
    )
}

/// Positions of the states named `dofs` directly under `nodes`, concatenated.
fn positions(sim: &Simulation, nodes: &[&str]) -> Vec<f64> {
    let scene = &sim.scene;
    let mut out = Vec::new();
    for n in nodes {
        let id = scene
            .component_ids()
            .find(|&c| scene.info(c).name == "dofs" && scene.node_path(scene.info(c).node) == *n)
            .unwrap_or_else(|| panic!("no dofs in {n}"));
        out.extend_from_slice(scene.state(id).unwrap().vec(VecId::POSITION));
    }
    out
}

fn run(xml: &str, nodes: &[&str], steps: usize) -> Vec<f64> {
    let mut sim = load(xml);
    for _ in 0..steps {
        sim.step();
    }
    assert!(sim.find_non_finite().is_none());
    positions(&sim, nodes)
}

fn assert_close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    let err = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(err <= tol, "{what}: max difference {err:e} > {tol:e}");
}

#[test]
fn interaction_springs_move_two_states_as_one() {
    for (solver, name) in [(CG, "CG"), (LDL, "SparseLDL")] {
        let one = run(&one_state(solver), &["/root/all"], 150);
        // it moved: gravity and the initial velocities
        assert!(
            one[16] < -0.05,
            "{name}: the chain did not fall ({})",
            one[16]
        );
        let two = run(&two_states(solver), &["/root/A", "/root/B"], 150);
        assert_close(&one, &two, 1e-9, &format!("{name}, two states"));
        let mapped = run(&two_mapped_states(solver), &["/root/A", "/root/B"], 150);
        assert_close(&one, &mapped, 1e-9, &format!("{name}, mapped states"));
    }
}

#[test]
fn an_interaction_with_a_state_outside_its_solver_is_reported() {
    let sim = load_scene_str(
        r#"<Node name="root" dt="0.01">
  <Node name="A">
    <EulerImplicitSolver/><CGLinearSolver/>
    <MechanicalObject name="dofs" position="0 0 0 1 0 0"/>
    <UniformMass vertexMass="1"/>
    <SpringForceField object1="@dofs" object2="@../B/dofs" spring="1 0 10 0 1"/>
  </Node>
  <Node name="B"><MechanicalObject name="dofs" position="2 0 0"/></Node>
</Node>"#,
        "outside.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    let text: Vec<String> = sim.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("/root/B/dofs") && t.contains("not simulated by the solver")),
        "{text:?}"
    );
}

#[test]
fn spring_indices_beyond_either_state_are_errors() {
    let sim = load_scene_str(
        r#"<Node name="root" dt="0.01">
  <EulerImplicitSolver/><CGLinearSolver/>
  <Node name="A"><MechanicalObject name="dofs" position="0 0 0 1 0 0"/></Node>
  <Node name="B"><MechanicalObject name="dofs" position="2 0 0"/></Node>
  <SpringForceField object1="@A/dofs" object2="@B/dofs" spring="1 1 10 0 1"/>
</Node>"#,
        "bad-index.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    let text: Vec<String> = sim.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("bad-index.scn:5") && t.contains("point 1 of object2 (1 points)")),
        "{text:?}"
    );
}

#[test]
fn an_external_rest_shape_is_followed_as_it_moves_and_feels_no_force() {
    // the anchor falls freely under its own solver; the follower's springs pull it to the
    // anchor's current position (SOFA reads the external state at every addForce), and the
    // anchor receives nothing back
    let sim_xml = r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <Node name="Anchor">
    <EulerImplicitSolver rayleighStiffness="0" rayleighMass="0"/><CGLinearSolver iterations="50" tolerance="1e-20" threshold="1e-20"/>
    <MechanicalObject name="dofs" position="0 0 0 1 0 0"/>
    <UniformMass vertexMass="1"/>
  </Node>
  <Node name="Free">
    <EulerImplicitSolver rayleighStiffness="0" rayleighMass="0"/><CGLinearSolver iterations="50" tolerance="1e-20" threshold="1e-20"/>
    <MechanicalObject name="dofs" position="0 0 0 1 0 0"/>
    <UniformMass vertexMass="1"/>
  </Node>
  <Node name="Follower">
    <EulerImplicitSolver rayleighStiffness="0" rayleighMass="1"/><CGLinearSolver iterations="50" tolerance="1e-20" threshold="1e-20"/>
    <MechanicalObject name="dofs" position="0 0 0"/>
    <UniformMass vertexMass="0.001"/>
    <RestShapeSpringsForceField stiffness="1000" external_rest_shape="@../Anchor/dofs" external_points="1"/>
  </Node>
</Node>"#;
    let mut sim = load(sim_xml);
    for _ in 0..100 {
        sim.step();
    }
    let anchor = positions(&sim, &["/root/Anchor"]);
    let free = positions(&sim, &["/root/Free"]);
    assert_eq!(anchor, free, "the external state received forces");
    let follower = positions(&sim, &["/root/Follower"]);
    // it went to the anchor's point 1 (x = 1) and fell with it (by ~5 m), lagging by about
    // its own weight over the stiffness and the motion's lag
    assert!((follower[0] - 1.0).abs() < 1e-2, "x = {}", follower[0]);
    assert!(
        (follower[1] - anchor[4]).abs() < 0.05 && anchor[4] < -4.0,
        "follower y {} vs anchor y {}",
        follower[1],
        anchor[4]
    );
}

#[test]
fn mesh_springs_follow_the_topology_elements() {
    use canape::core::scene::Slot;
    let count = |xml: &str| -> usize {
        let sim = load(xml);
        let k = sim
            .scene
            .component_ids()
            .find_map(|i| match sim.scene.info(i).slot {
                Slot::ForceField(k) => Some(k),
                _ => None,
            })
            .unwrap();
        sim.scene.force_fields[k]
            .as_ref()
            .unwrap()
            .draw_edges()
            .len()
    };
    let cube = "0 0 0 1 0 0 1 1 0 0 1 0 0 0 1 1 0 1 1 1 1 0 1 1";
    // a tetrahedron: its 6 edges
    assert_eq!(
        count(&format!(
            r#"<Node name="root"><MechanicalObject position="{cube}"/><MeshTopology tetrahedra="0 1 3 4"/>
  <MeshSpringForceField tetrasStiffness="10"/></Node>"#
        )),
        6
    );
    // a hexahedron: all 28 pairs of its corners
    assert_eq!(
        count(&format!(
            r#"<Node name="root"><MechanicalObject position="{cube}"/><MeshTopology hexahedra="0 1 2 3 4 5 6 7"/>
  <MeshSpringForceField cubesStiffness="10"/></Node>"#
        )),
        28
    );
    // `stiffness` sets every kind: a quad's 4 edges and 2 diagonals, its triangle's edges
    // already there
    assert_eq!(
        count(&format!(
            r#"<Node name="root"><MechanicalObject position="{cube}"/><MeshTopology quads="0 1 2 3" triangles="0 1 2"/>
  <MeshSpringForceField stiffness="10"/></Node>"#
        )),
        6
    );
    // a spring's stiffness is the kind's divided by its rest length: two points 2 apart, one
    // fixed, static equilibrium under a force F: stretch F l / k
    let mut sim = load(
        r#"<Node name="root" gravity="0 0 0"><StaticSolver/><SparseLDLSolver/>
  <MechanicalObject position="0 0 0 2 0 0"/><MeshTopology lines="0 1"/>
  <FixedProjectiveConstraint indices="0"/>
  <PartialFixedProjectiveConstraint indices="1" fixedDirections="0 1 1"/>
  <MeshSpringForceField linesStiffness="10"/>
  <ConstantForceField indices="1" forces="1 0 0"/></Node>"#,
    );
    for _ in 0..3 {
        sim.step();
    }
    let x = sim.scene.states[0].as_ref().unwrap().vec(VecId::POSITION)[3];
    assert!((x - 2.2).abs() < 1e-9, "x = {x}");
}

#[test]
fn regular_grid_springs_cover_lines_faces_and_cubes() {
    use canape::core::scene::Slot;
    let mut sim = load(
        r#"<Node name="root" gravity="0 0 0"><RegularGridTopology n="3 2 2" min="0 0 0" max="2 1 1"/>
  <MechanicalObject/><RegularGridSpringForceField stiffness="50" damping="1"/></Node>"#,
    );
    let k = sim
        .scene
        .component_ids()
        .find_map(|i| match sim.scene.info(i).slot {
            Slot::ForceField(k) => Some(k),
            _ => None,
        })
        .unwrap();
    let ff = sim.scene.force_fields[k].as_ref().unwrap();
    // 3×2×2 points: lines 2·2·2 + 3·1·2 + 3·2·1 = 20, face diagonals (2·1·2 + 2·2·1 + 3·1·1)·2
    // = 22, cube diagonals 2·4 = 8
    assert_eq!(ff.draw_edges().len(), 20 + 22 + 8);
    // at rest no force
    let st = sim.scene.states[0].as_ref().unwrap();
    let x = st.vec(VecId::POSITION).to_vec();
    let mut f = vec![0.0; x.len()];
    let mut ff = sim.scene.force_fields[k].take().unwrap();
    ff.add_force(&x, &vec![0.0; x.len()], &mut f);
    assert!(f.iter().all(|v| v.abs() < 1e-12), "{f:?}");
}
