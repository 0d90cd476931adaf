//! Projective constraints that move points or keep them on a shape (Point, Line, Plane,
//! LinearMovement, Oscillator) and TrianglePressureForceField, checked on small scenes whose
//! answer is known in closed form.

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions, Simulation};

fn load(xml: &str) -> Simulation {
    let sim = load_scene_str(
        xml,
        "projections-test.scn",
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

fn x(sim: &Simulation) -> Vec<f64> {
    sim.scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::POSITION)
        .to_vec()
}

fn v(sim: &Simulation) -> Vec<f64> {
    sim.scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::VELOCITY)
        .to_vec()
}

/// Two points joined by a spring, falling under a skew gravity, point 0 constrained.
fn falling(constraint: &str, solver: &str) -> Simulation {
    load(&format!(
        r#"<Node name="root" dt="0.01" gravity="1 -9.81 2">
  <EulerImplicitSolver/>{solver}
  <MechanicalObject position="0.5 0.5 0.5  1.5 0.5 0.5"/>
  <UniformMass vertexMass="1"/>
  <SpringForceField spring="0 1 100 0 1"/>
  {constraint}
</Node>"#
    ))
}

const CG: &str = r#"<CGLinearSolver iterations="100" tolerance="1e-20" threshold="1e-20"/>"#;

#[test]
fn point_line_and_plane_keep_their_points_on_the_shape() {
    // point: moved to the point at init and kept there
    let mut sim = falling(
        r#"<PointProjectiveConstraint indices="0" point="0 1 0"/>"#,
        CG,
    );
    for _ in 0..30 {
        sim.step();
    }
    let p = x(&sim);
    assert_eq!(&p[0..3], &[0.0, 1.0, 0.0]);
    let moved = ((p[3] - 1.5).powi(2) + (p[4] - 0.5).powi(2) + (p[5] - 0.5).powi(2)).sqrt();
    assert!(moved > 0.1, "point 1 moves: {p:?}");
    // line through (0.5, 0, 0.5) along y: point 0 moves along y only
    let mut sim = falling(
        r#"<LineProjectiveConstraint indices="0" origin="0.5 0 0.5" direction="0 2 0"/>"#,
        CG,
    );
    for _ in 0..30 {
        sim.step();
    }
    let p = x(&sim);
    assert!(
        (p[0] - 0.5).abs() < 1e-12 && (p[2] - 0.5).abs() < 1e-12,
        "{p:?}"
    );
    assert!(p[1] < 0.5 - 0.1, "{p:?}");
    let vel = v(&sim);
    assert!(vel[0].abs() < 1e-12 && vel[2].abs() < 1e-12, "{vel:?}");
    // plane x = 0.5: point 0 keeps x, moves in y and z
    let mut sim = falling(
        r#"<PlaneProjectiveConstraint indices="0" origin="0.5 0 0" normal="3 0 0"/>"#,
        CG,
    );
    for _ in 0..30 {
        sim.step();
    }
    let p = x(&sim);
    assert!((p[0] - 0.5).abs() < 1e-12, "{p:?}");
    assert!(p[1] < 0.4 && p[2] > 0.55, "{p:?}");
}

#[test]
fn linear_movement_follows_the_keys_one_step_late_then_frees_the_points() {
    let mut sim = falling(
        r#"<LinearMovementProjectiveConstraint indices="0" keyTimes="0 1 2" movements="0 0 0  1 0 0  1 1 0"/>"#,
        CG,
    );
    let x0 = [0.5, 0.5, 0.5];
    // the state after step k holds the movement at the step's start, t = (k−1)·dt (SOFA)
    for k in 1..=150 {
        sim.step();
        let t = (k - 1) as f64 * 0.01;
        let p = x(&sim);
        if t < 2.0 - 1e-9 {
            let m = if t < 1.0 {
                [t, 0.0, 0.0]
            } else {
                [1.0, t - 1.0, 0.0]
            };
            for c in 0..3 {
                assert!(
                    (p[c] - (x0[c] + m[c])).abs() < 1e-9,
                    "step {k}: {:?} vs {m:?}",
                    &p[0..3]
                );
            }
            let vel = v(&sim);
            let want = if t < 1.0 {
                [1.0, 0.0, 0.0]
            } else {
                [0.0, 1.0, 0.0]
            };
            assert!((0..3).all(|c| (vel[c] - want[c]).abs() < 1e-9), "{vel:?}");
        }
    }
    // after the last key the point is free: gravity and the spring move it off the last key
    for _ in 0..60 {
        sim.step();
    }
    assert!((x(&sim)[0] - 1.5).abs() > 1e-2, "{:?}", x(&sim));
}

#[test]
fn linear_movement_turns_a_rigid_body_by_slerp() {
    let mut sim = load(
        r#"<Node name="root" dt="0.1" gravity="0 0 0">
  <EulerImplicitSolver/><CGLinearSolver iterations="50" tolerance="1e-20" threshold="1e-20"/>
  <MechanicalObject template="Rigid3" position="1 0 0 0 0 0 1"/>
  <UniformMass template="Rigid3" vertexMass="1"/>
  <LinearMovementProjectiveConstraint template="Rigid3" indices="0" keyTimes="0 1 2"
     movements="0 0 0 0 0 0   0 2 0 0 0 1.5707963267948966   0 2 0 0 0 1.5707963267948966"/>
</Node>"#,
    );
    for _ in 0..6 {
        sim.step();
    }
    // t = 0.5: center (1, 1, 0), a quarter of π turned about z
    let p = x(&sim);
    let a = std::f64::consts::FRAC_PI_4 / 2.0;
    let want = [1.0, 1.0, 0.0, 0.0, 0.0, a.sin(), a.cos()];
    for c in 0..7 {
        assert!((p[c] - want[c]).abs() < 1e-9, "{p:?} vs {want:?}");
    }
}

#[test]
fn oscillator_drives_its_point() {
    let mut sim = falling(
        r#"<OscillatorProjectiveConstraint oscillators="0  2 0 0  1 0 0  5 10"/>"#,
        CG,
    );
    for k in 1..=20 {
        sim.step();
        let t = (k - 1) as f64 * 0.01;
        let p = x(&sim);
        let want = [2.0 + (5.0 * t + 10.0).sin(), 0.0, 0.0];
        assert!((0..3).all(|c| (p[c] - want[c]).abs() < 1e-12), "{p:?}");
        let vel = v(&sim);
        assert!((vel[0] - 5.0 * (5.0 * t + 10.0).cos()).abs() < 1e-12);
    }
}

#[test]
fn triangle_pressure_pushes_with_pressure_times_rest_area() {
    // a unit square in two triangles (area 1/2 each), the second one (0, 2, 3) loaded: its three
    // vertices get pressure·(1/2)/3 each; one explicit step gives v = dt·f/m
    let mut sim = load(
        r#"<Node name="root" dt="0.1" gravity="0 0 0">
  <EulerExplicitSolver/>
  <MechanicalObject position="0 0 0  1 0 0  1 1 0  0 1 0"/>
  <UniformMass vertexMass="2"/>
  <TriangleSetTopologyContainer triangles="0 1 2  0 2 3"/>
  <TrianglePressureForceField triangleList="1" pressure="0 0 6"/>
</Node>"#,
    );
    sim.step();
    let vel = v(&sim);
    let f = 6.0 * 0.5 / 3.0;
    let want = [0.1 * f / 2.0, 0.0, 0.1 * f / 2.0, 0.1 * f / 2.0];
    for (i, w) in want.iter().enumerate() {
        assert!((vel[3 * i + 2] - w).abs() < 1e-12, "point {i}: {vel:?}");
        assert_eq!((vel[3 * i], vel[3 * i + 1]), (0.0, 0.0));
    }
}

#[test]
fn regular_grids_list_quads_triangles_and_edges_as_sofa_does() {
    let sim = load(
        r#"<Node name="root"><RegularGridTopology n="3 2 2" min="0 0 0" max="2 1 1"/>
  <MechanicalObject/></Node>"#,
    );
    let m = sim.scene.topologies[0].as_ref().unwrap().mesh();
    assert_eq!(m.hexahedra.len(), 2);
    // XY quads 2·1·2, XZ quads 1·2·2, YZ quads 1·1·3
    assert_eq!(m.quads.len(), 11);
    assert_eq!(m.triangles.len(), 22);
    // the 20 grid lines and one diagonal per quad
    assert_eq!(m.edges.len(), 31);
    // the first XY quad and its triangles, split along q0-q2
    assert_eq!(m.quads[0], [0, 1, 4, 3]);
    assert_eq!(&m.triangles[..2], &[[0, 1, 4], [0, 4, 3]]);
    // a flat grid (n = 20 1 20 in SOFA's cloth scenes) has its XZ quads only
    let sim = load(
        r#"<Node name="root"><RegularGridTopology n="4 1 3" min="0 0 0" max="1 0 1"/>
  <MechanicalObject/></Node>"#,
    );
    let m = sim.scene.topologies[0].as_ref().unwrap().mesh();
    assert!(m.hexahedra.is_empty());
    assert_eq!(m.quads.len(), 3 * 2);
    assert_eq!(m.quads[0], [0, 1, 5, 4]);
}

#[test]
fn quad_bending_springs_join_points_across_shared_edges() {
    // two quads of a 3 × 2 grid share the edge 1-4: one spring on each side of it, 0-2 and 3-5
    let mut sim = load(
        r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <EulerExplicitSolver/>
  <MechanicalObject position="0 0 0  1 0 0  2 0 0  0 1 0  1 1 0  2 1 0"/>
  <UniformMass vertexMass="1"/>
  <MeshTopology quads="0 1 4 3  1 2 5 4"/>
  <QuadBendingSprings stiffness="30" damping="0"/>
</Node>"#,
    );
    let edges = sim.scene.force_fields[0].as_ref().unwrap().draw_edges();
    assert_eq!(edges, vec![[2, 0], [5, 3]]);
    // pull point 2 outward by 0.1: the spring (rest length 2) pulls it back with 30·0.1
    sim.scene.states[0]
        .as_mut()
        .unwrap()
        .vec_mut(VecId::POSITION)[6] = 2.1;
    sim.step();
    let vel = v(&sim);
    assert!((vel[6] + 0.01 * 30.0 * 0.1).abs() < 1e-12, "{vel:?}");
    assert!((vel[0] - 0.01 * 30.0 * 0.1).abs() < 1e-12, "{vel:?}");
}

#[test]
fn quadular_bending_springs_pair_the_points_beside_each_shared_edge() {
    // quads (0 1 4 3) and (1 2 5 4) share edge 1-4: springs 2-0 and 5-3 (each joins the
    // points next to one end of the edge, skipping that end); defaults 100000 and 1
    let sim = load(
        r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <EulerImplicitSolver/><CGLinearSolver iterations="10" tolerance="1e-9" threshold="1e-9"/>
  <MechanicalObject position="0 0 0  1 0 0  2 0 0  0 1 0  1 1 0  2 1 0"/>
  <UniformMass vertexMass="1"/>
  <MeshTopology quads="0 1 4 3  1 2 5 4"/>
  <QuadularBendingSprings/>
</Node>"#,
    );
    let mut e = sim.scene.force_fields[0].as_ref().unwrap().draw_edges();
    e.iter_mut().for_each(|p| p.sort_unstable());
    e.sort_unstable();
    assert_eq!(e, vec![[0, 2], [3, 5]]);
}

#[test]
fn triangle_fem_on_quads_and_gravity_component() {
    // TriangleFEMForceField splits a quad mesh in triangles; a Gravity component at the root
    // replaces the root's gravity
    let mut sim = load(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <Gravity gravity="0 0 -2"/>
  <EulerImplicitSolver/><CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-12"/>
  <MechanicalObject position="0 0 0  1 0 0  1 1 0  0 1 0"/>
  <UniformMass vertexMass="1"/>
  <MeshTopology quads="0 1 2 3"/>
  <TriangleFEMForceField youngModulus="100" poissonRatio="0.3" thickness="0.1"/>
</Node>"#,
    );
    sim.step();
    let vel = v(&sim);
    for i in 0..4 {
        assert!((vel[3 * i + 2] + 0.02).abs() < 1e-9, "{vel:?}");
        assert!(vel[3 * i + 1].abs() < 1e-9, "{vel:?}");
    }
}

#[test]
fn linear_force_field_interpolates_its_keys_at_each_step_start() {
    // forces 0 → (2, 0, 0) between t = 0 and 1, scaled by 3; explicit Euler, unit mass:
    // v after step k = Σ dt·f(t_j), t_j = j·dt, j < k
    let mut sim = load(
        r#"<Node name="root" dt="0.1" gravity="0 0 0">
  <EulerExplicitSolver/>
  <MechanicalObject position="0 0 0  5 5 5"/>
  <UniformMass vertexMass="1"/>
  <LinearForceField points="0" times="0 1" forces="0 0 0  2 0 0" force="3"/>
</Node>"#,
    );
    let mut want = 0.0;
    // the simulation's time is accumulated step by step (0.1 ten times is just below 1)
    let mut t = 0.0;
    for k in 0..15 {
        // after the last key: the last force, unscaled (SOFA)
        let f = if t < 1.0 { 3.0 * 2.0 * t } else { 2.0 };
        want += 0.1 * f;
        t += 0.1;
        sim.step();
        let vel = v(&sim);
        assert!(
            (vel[0] - want).abs() < 1e-12,
            "step {k}: {} vs {want}",
            vel[0]
        );
        assert_eq!(&vel[3..], &[0.0, 0.0, 0.0]);
    }
}

#[test]
fn edge_pressure_pushes_along_the_in_plane_normal() {
    // an edge along x of rest length 2, binormal z: normal z × x = y; intensity 3 gives a
    // force 3·2 shared by the two points
    let mut sim = load(
        r#"<Node name="root" dt="0.1" gravity="0 0 0">
  <EulerExplicitSolver/>
  <MechanicalObject position="0 0 0  2 0 0"/>
  <UniformMass vertexMass="1"/>
  <EdgeSetTopologyContainer edges="0 1"/>
  <EdgePressureForceField edgeIndices="0" binormal="0 0 1" p_intensity="3"/>
</Node>"#,
    );
    sim.step();
    let vel = v(&sim);
    for p in 0..2 {
        assert!((vel[3 * p + 1] - 0.1 * 3.0).abs() < 1e-12, "{vel:?}");
        assert!(vel[3 * p].abs() < 1e-12 && vel[3 * p + 2].abs() < 1e-12);
    }
}

#[test]
fn sphere_and_plane_rois_select_points_and_elements() {
    let sim = load(
        r#"<Node name="root" dt="0.1" gravity="0 0 0">
  <MechanicalObject position="0 0 0  1 0 0  0 1 0  3 3 3  0.5 0.5 0.05"/>
  <TriangleSetTopologyContainer triangles="0 1 2  1 2 3"/>
  <SphereROI name="s" centers="0 0 0" radii="1.0"/>
  <PlaneROI name="p" plane="0 0 0  1 0 0  1 1 0  0.2"/>
</Node>"#,
    );
    let d = |name: &str, field: &str| -> Vec<u32> {
        let id = sim
            .scene
            .component_ids()
            .find(|c| sim.scene.info(*c).name == name)
            .unwrap();
        let c = sim.scene.component(id).unwrap();
        c.data().ints(field).to_vec()
    };
    assert_eq!(d("s", "indices"), vec![0, 1, 2, 4]);
    assert_eq!(d("s", "indicesOut"), vec![3]);
    assert_eq!(d("s", "triangleIndices"), vec![0]);
    // the unit square in z = 0 with depth 0.2: points 0, 1, 2 (corners) and 4 (z = 0.05)
    assert_eq!(d("p", "indices"), vec![0, 1, 2, 4]);
    assert_eq!(d("p", "trianglesInROI"), vec![0, 1, 2]);
}

#[test]
fn loader_scale_multiplies_scale3d() {
    let dir = std::env::temp_dir().join(format!("canape-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tri.obj"), "v 1 1 1\nv 2 0 0\nv 0 3 0\nf 1 2 3\n").unwrap();
    let sim = load_scene_str(
        r#"<Node name="root"><MeshOBJLoader name="l" filename="tri.obj" scale="10" scale3d="1 2 1"/>
  <MechanicalObject src="@l"/></Node>"#,
        "scale.scn",
        &dir,
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(
        !sim.diagnostics.has_errors()
            && !sim
                .diagnostics
                .iter()
                .any(|d| d.to_string().contains("scale"))
    );
    assert_eq!(&x(&sim)[0..3], &[10.0, 20.0, 10.0]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn uniform_mass_without_mass_data_shares_a_total_of_one() {
    // SOFA: "No information about the mass is given. Default totalMass is used" (1)
    let mut sim = load(
        r#"<Node name="root" dt="0.1" gravity="0 -10 0">
  <EulerExplicitSolver/>
  <MechanicalObject position="0 0 0  1 0 0  2 0 0  3 0 0"/>
  <UniformMass/>
  <ConstantForceField indices="0" forces="1 0 0"/>
</Node>"#,
    );
    sim.step();
    // each point weighs 1/4: the unit force accelerates point 0 by 4
    assert!((v(&sim)[0] - 0.4).abs() < 1e-12, "{:?}", v(&sim));
}

#[test]
fn affine_movement_goes_from_x0_to_r_x0_plus_t_between_its_times() {
    // a quarter turn about z and a shift, over t in (0.2, 0.6], then held
    let mut sim = falling(
        r#"<AffineMovementProjectiveConstraint indices="0" beginConstraintTime="0.2" endConstraintTime="0.6"
             rotation="[0 -1 0, 1 0 0, 0 0 1]" translation="0.1 0 0"/>"#,
        CG,
    );
    let x0 = [0.5, 0.5, 0.5];
    let xf = [-0.5 + 0.1, 0.5, 0.5];
    for k in 1..=100 {
        sim.step();
        // the step's start time, as SOFA's context time during the projection
        let t = (k - 1) as f64 * 0.01;
        let p = x(&sim);
        let s = ((t - 0.2) / 0.4).clamp(0.0, 1.0);
        if t > 0.2 + 1e-9 {
            for c in 0..3 {
                let want = x0[c] + (xf[c] - x0[c]) * s;
                assert!(
                    (p[c] - want).abs() < 1e-9,
                    "step {k}: {:?} vs {want}",
                    &p[0..3]
                );
            }
            assert!(
                v(&sim)[0..3].iter().all(|c| *c == 0.0),
                "velocity projected"
            );
        }
    }
}
