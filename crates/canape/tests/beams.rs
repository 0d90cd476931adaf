//! Force fields on Rigid3 states. BeamFEMForceField: its stiffness against finite differences
//! of its force about the rest shape (where SOFA's corotational tangent is exact), and a
//! clamped cantilever under a small tip load against Euler–Bernoulli's deflection PL³/(3EI) and
//! rotation PL²/(2EI). RestShapeSpringsForceField: stiffness against finite differences (Vec3
//! anywhere, Rigid3 at its rest shape). JointSpringForceField: a hinge turns freely about its
//! axis and holds the rest.

use canape::core::scene::Slot;
use canape::core::state::VecId;
use canape::types::nalgebra;
use canape::types::DofType;
use canape::{load_scene_str, LoadOptions, Simulation};

fn load(xml: &str) -> Simulation {
    let sim = load_scene_str(
        xml,
        "beam-test.scn",
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

const E: f64 = 2e7;
const R: f64 = 0.1;

fn beam_scene(n: usize, length: f64, extra: &str) -> String {
    let mut pos = String::new();
    // a bent, twisted line of frames: the beams are not aligned with the axes
    for i in 0..n {
        let s = i as f64 * length / (n - 1) as f64;
        pos += &format!("{} {} {} 0 0 0 1  ", s, 0.0, 0.0);
    }
    let lines: Vec<String> = (0..n - 1).map(|i| format!("{} {}", i, i + 1)).collect();
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <StaticSolver/><SparseLDLSolver/>
  <MechanicalObject template="Rigid3" position="{pos}"/>
  <MeshTopology lines="{}"/>
  <FixedProjectiveConstraint indices="0"/>
  <BeamFEMForceField radius="{R}" radiusInner="0" youngModulus="{E}" poissonRatio="0.3"/>
  {extra}
</Node>"#,
        lines.join(" ")
    )
}

#[test]
fn beam_stiffness_matches_finite_differences_at_rest() {
    // a straight beam along a skew direction d, its frames' x axis along d (SOFA's local beam
    // axis) with a twist about it
    let d = nalgebra::Vector3::new(1.0, 0.5, -0.3).normalize();
    let q = nalgebra::UnitQuaternion::rotation_between(&nalgebra::Vector3::x(), &d).unwrap()
        * nalgebra::UnitQuaternion::from_axis_angle(&nalgebra::Vector3::x_axis(), 0.4);
    let mut pos = String::new();
    for k in 0..3 {
        let c = d * (0.9 * k as f64);
        pos += &format!("{} {} {} {} {} {} {}  ", c.x, c.y, c.z, q.i, q.j, q.k, q.w);
    }
    let xml = &format!(
        r#"<Node name="root" gravity="0 0 0">
  <MechanicalObject template="Rigid3" position="{pos}"/>
  <MeshTopology lines="0 1 1 2"/>
  <BeamFEMForceField radius="0.05" youngModulus="1e5" poissonRatio="0.3"/>
</Node>"#
    );
    let mut sim = load(xml);
    let scene = &mut sim.scene;
    let k = scene
        .component_ids()
        .find_map(|i| match scene.info(i).slot {
            Slot::ForceField(k) => Some(k),
            _ => None,
        })
        .unwrap();
    let x0 = scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::POSITION)
        .to_vec();
    let v = vec![0.0; 18];
    let dx: Vec<f64> = (0..18).map(|i| ((i * 7 + 3) as f64 * 0.37).sin()).collect();
    let ff = scene.force_fields[k].as_mut().unwrap();
    let force = |ff: &mut Box<dyn canape::core::component::ForceField>, h: f64| {
        let mut x = x0.clone();
        DofType::Rigid3.coord_add_deriv(&mut x, &dx, h);
        let mut f = vec![0.0; 18];
        ff.add_force(&x, &v, &mut f);
        f
    };
    let h = 1e-7;
    let fp = force(ff, h);
    let fm = force(ff, -h);
    let f0 = force(ff, 0.0);
    assert!(f0.iter().all(|v| v.abs() < 1e-9), "force at rest: {f0:?}");
    let mut kdx = vec![0.0; 18];
    ff.add_dforce(&dx, &mut kdx, 1.0);
    let scale = kdx.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 1.0);
    for r in 0..18 {
        let fd = (fp[r] - fm[r]) / (2.0 * h);
        assert!(
            (fd - kdx[r]).abs() <= 1e-5 * scale,
            "row {r}: K dx {} vs finite differences {fd}",
            kdx[r]
        );
    }
    // the assembled blocks give the same product
    let mut t = canape::core::matrix::Triplets::new(18);
    ff.add_k_to_matrix(&mut t, 1.0, 0);
    let mut kdx2 = [0.0; 18];
    for &(r, c, v) in &t.entries {
        kdx2[r as usize] += v * dx[c as usize];
    }
    for r in 0..18 {
        assert!((kdx2[r] - kdx[r]).abs() <= 1e-9 * scale, "row {r}");
    }
}

#[test]
fn cantilever_tip_deflection_is_euler_bernoulli() {
    let (n, l, p) = (6, 2.0, 0.5);
    let i = std::f64::consts::PI * R.powi(4) / 4.0;
    let mut sim = load(&beam_scene(
        n,
        l,
        &format!(
            r#"<ConstantForceField indices="{}" forces="0 {p} 0 0 0 0"/>"#,
            n - 1
        ),
    ));
    for _ in 0..5 {
        sim.step();
    }
    let x = sim.scene.states[0].as_ref().unwrap().vec(VecId::POSITION);
    let tip = &x[7 * (n - 1)..7 * n];
    let deflection = p * l.powi(3) / (3.0 * E * i);
    let angle = p * l * l / (2.0 * E * i);
    // small load: geometric nonlinearity below 1e-4 relative
    assert!(
        (tip[1] - deflection).abs() < 1e-3 * deflection,
        "tip deflection {} vs PL³/3EI = {deflection}",
        tip[1]
    );
    let theta = 2.0 * tip[5].asin();
    assert!(
        (theta - angle).abs() < 1e-3 * angle,
        "tip rotation {theta} vs PL²/2EI = {angle}"
    );
}

#[test]
fn a_hinge_joint_turns_freely_about_its_axis_and_holds_the_rest() {
    // frame 0 fixed, frame 1 joined by a hinge about y (FREE_AXIS: only Ry free); a torque about
    // y spins frame 1 freely (ω = τt/m with unit inertia), a force along y is held by the hard
    // translation stiffness (displacement of order F/k), a torque about z by the hard rotation
    let mut sim = load(
        r#"<Node name="root" dt="0.001" gravity="0 0 0">
  <EulerImplicitSolver rayleighStiffness="0" rayleighMass="0"/>
  <CGLinearSolver iterations="100" tolerance="1e-20" threshold="1e-20"/>
  <MechanicalObject template="Rigid3" position="0 0 0 0 0 0 1  1 0 0 0 0 0 1"/>
  <UniformMass template="Rigid3" vertexMass="1"/>
  <FixedProjectiveConstraint indices="0"/>
  <JointSpringForceField spring="BEGIN_SPRING 0 1 FREE_AXIS 0 0 0 0 1 0 KS_T 0 10000 KS_R 0 10000 REST_T 1 0 0 END_SPRING"/>
  <ConstantForceField template="Rigid3" indices="1" forces="0 5 0 0 0.2 0"/>
</Node>"#,
    );
    for _ in 0..500 {
        sim.step();
    }
    let st = sim.scene.states[0].as_ref().unwrap();
    let (x, v) = (st.vec(VecId::POSITION), st.vec(VecId::VELOCITY));
    // free spin about y: ω_y = 0.2 · 0.5 s
    assert!((v[6 + 4] - 0.1).abs() < 1e-6, "ω = {:?}", &v[9..12]);
    // held: the center moves by about F/k = 5e-4 (oscillating up to twice that)
    assert!(x[7 + 1].abs() < 1.5e-3 && x[7 + 1] > 0.0, "y = {}", x[8]);
    assert!((x[7] - 1.0).abs() < 1e-3, "x = {}", x[7]);
    // frame 0 stays
    assert_eq!(&x[..7], &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
}

/// The first force field of `xml`'s scene: its add_dforce and assembled matrix against central
/// finite differences of add_force along a fixed direction, at the scene's positions moved by
/// `offset` times that direction.
fn fd_check(xml: &str, offset: f64, tol: f64) {
    let mut sim = load(xml);
    let scene = &mut sim.scene;
    let k = scene
        .component_ids()
        .find_map(|i| match scene.info(i).slot {
            Slot::ForceField(k) => Some(k),
            _ => None,
        })
        .unwrap();
    let st = scene.states[0].as_ref().unwrap();
    let dof = st.dof;
    let n = st.deriv_len();
    let mut x0 = st.vec(VecId::POSITION).to_vec();
    let dx: Vec<f64> = (0..n).map(|i| ((i * 5 + 1) as f64 * 0.71).sin()).collect();
    dof.coord_add_deriv(&mut x0, &dx, offset);
    let v = vec![0.0; n];
    let ff = scene.force_fields[k].as_mut().unwrap();
    let force = |ff: &mut Box<dyn canape::core::component::ForceField>, h: f64| {
        let mut x = x0.clone();
        dof.coord_add_deriv(&mut x, &dx, h);
        let mut f = vec![0.0; n];
        ff.add_force(&x, &v, &mut f);
        f
    };
    let h = 1e-6;
    let (fp, fm) = (force(ff, h), force(ff, -h));
    let _ = force(ff, 0.0);
    let mut kdx = vec![0.0; n];
    ff.add_dforce(&dx, &mut kdx, 1.0);
    let scale = kdx.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 0.0);
    let mut t = canape::core::matrix::Triplets::new(n);
    ff.add_k_to_matrix(&mut t, 1.0, 0);
    let mut kdx2 = vec![0.0; n];
    for &(r, c, val) in &t.entries {
        kdx2[r as usize] += val * dx[c as usize];
    }
    for r in 0..n {
        let fd = (fp[r] - fm[r]) / (2.0 * h);
        assert!(
            (fd - kdx[r]).abs() <= tol * scale,
            "{}: row {r}: K dx {} vs finite differences {fd}",
            ff.class_name(),
            kdx[r]
        );
        assert!(
            (kdx2[r] - kdx[r]).abs() <= 1e-9 * scale,
            "row {r}: matrix vs add_dforce"
        );
    }
}

#[test]
fn rest_shape_springs_match_finite_differences() {
    fd_check(
        r#"<Node name="root" gravity="0 0 0"><MechanicalObject position="0 0 0 1 2 3 -1 0.5 2"/>
  <RestShapeSpringsForceField stiffness="10 20 30" points="0 2"/></Node>"#,
        0.3,
        1e-6,
    );
    fd_check(
        r#"<Node name="root" gravity="0 0 0"><MechanicalObject template="Rigid3" position="0 0 0 0 0 0 1  1 2 3 0 0.6 0 0.8"/>
  <RestShapeSpringsForceField template="Rigid3" stiffness="10" angularStiffness="7"/></Node>"#,
        0.0,
        1e-6,
    );
}
