//! Mappings checked against their definitions: J against finite differences of `apply`, the
//! Jacobian entries against `apply_j`, `apply_jt` as the adjoint of `apply_j`, and the geometric
//! stiffness against finite differences of Jᵀ f; then rigid-body dynamics through mappings (a
//! free rigid body keeps its angular momentum, a rigid pendulum has the small-angle period) and
//! the diagnostics for bad mapping graphs.

use canape::core::component::{JEntry, KEntry, MapInputs};
use canape::core::scene::Slot;
use canape::core::state::VecId;
use canape::types::DofType;
use canape::{load_scene_str, LoadOptions, Simulation};

fn load(xml: &str) -> Simulation {
    load_scene_str(
        xml,
        "mapping-test.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap()
}

/// A small deterministic generator (xorshift) for test vectors.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Check the mapping whose output is the state named `out` in `xml`.
fn check_mapping(xml: &str, out_name: &str, with_gs: bool) {
    let mut sim = load(xml);
    assert!(
        !sim.diagnostics.has_errors(),
        "{:?}",
        sim.diagnostics.iter().collect::<Vec<_>>()
    );
    let scene = &mut sim.scene;
    let mi = scene
        .mappings
        .iter()
        .position(|m| {
            m.as_ref()
                .and_then(|m| m.output())
                .is_some_and(|o| scene.info(o).name == out_name)
        })
        .expect("mapping to the named output");
    let mut map = scene.mappings[mi].take().unwrap();
    let idx: Vec<usize> = map
        .inputs()
        .iter()
        .map(|c| match scene.info(*c).slot {
            Slot::State(i) => i,
            _ => panic!("input is a state"),
        })
        .collect();
    let Slot::State(oi) = scene.info(map.output().unwrap()).slot else {
        panic!("output is a state")
    };
    let out_len = scene.states[oi].as_ref().unwrap().deriv_len();
    let out_coord = scene.states[oi]
        .as_ref()
        .unwrap()
        .vec(VecId::POSITION)
        .len();
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let dofs: Vec<DofType> = idx
        .iter()
        .map(|&i| scene.states[i].as_ref().unwrap().dof)
        .collect();
    let x0: Vec<Vec<f64>> = idx
        .iter()
        .map(|&i| {
            scene.states[i]
                .as_ref()
                .unwrap()
                .vec(VecId::POSITION)
                .to_vec()
        })
        .collect();
    let dx: Vec<Vec<f64>> = idx
        .iter()
        .map(|&i| rng.vec(scene.states[i].as_ref().unwrap().deriv_len()))
        .collect();
    // the same input twice would be a bug of the test scene
    let set = |states: &mut Vec<Option<canape::core::state::MechanicalObject>>, h: f64| {
        for (k, &i) in idx.iter().enumerate() {
            let st = states[i].as_mut().unwrap();
            let x = st.vec_mut(VecId::POSITION);
            x.copy_from_slice(&x0[k]);
            dofs[k].coord_add_deriv(x, &dx[k], h);
            let d = st.vec_mut(VecId::DX);
            d.copy_from_slice(&dx[k]);
        }
    };
    let apply = |states: &Vec<Option<canape::core::state::MechanicalObject>>,
                 map: &mut Box<dyn canape::core::component::Mapping>| {
        let mut y = vec![0.0; out_coord];
        map.apply(&MapInputs::new(states, &idx, VecId::POSITION), &mut y);
        y
    };
    let h = 1e-6;
    set(&mut scene.states, h);
    let yp = apply(&scene.states, &mut map);
    set(&mut scene.states, -h);
    let ym = apply(&scene.states, &mut map);
    set(&mut scene.states, 0.0);
    let _ = apply(&scene.states, &mut map);
    let mut jdx = vec![0.0; out_len];
    map.apply_j(&MapInputs::new(&scene.states, &idx, VecId::DX), &mut jdx);
    // J against finite differences of apply (Vec outputs: coordinates = derivatives; Rigid3
    // outputs: centers, and the rotation vector of q₊ ⊗ q₋⁻¹ for the orientations, whose vector
    // part is h·ω for SOFA's left-multiplied exponential update)
    let fds: Vec<f64> = if out_coord == out_len {
        (0..out_len).map(|r| (yp[r] - ym[r]) / (2.0 * h)).collect()
    } else {
        assert_eq!(out_coord / 7 * 6, out_len, "Vec or Rigid3 outputs");
        let mut v = Vec::with_capacity(out_len);
        for (a, b) in yp.chunks_exact(7).zip(ym.chunks_exact(7)) {
            v.extend((0..3).map(|c| (a[c] - b[c]) / (2.0 * h)));
            let qa = canape::types::dof::quat_of(a.try_into().unwrap());
            let qb = canape::types::dof::quat_of(b.try_into().unwrap());
            let d = qa * qb.conjugate();
            let s = if d.w < 0.0 { -1.0 } else { 1.0 };
            v.extend([d.i * s / h, d.j * s / h, d.k * s / h]);
        }
        v
    };
    let scale = jdx.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for r in 0..out_len {
        let fd = fds[r];
        assert!(
            (fd - jdx[r]).abs() <= 1e-6 * scale,
            "row {r}: J dx {} vs finite differences {fd}",
            jdx[r]
        );
    }
    // the Jacobian's entries give the same product
    let mut entries: Vec<JEntry> = Vec::new();
    map.jacobian(&mut entries);
    let mut jdx2 = vec![0.0; out_len];
    for e in &entries {
        jdx2[e.row as usize] += e.val * dx[e.input as usize][e.col as usize];
    }
    for r in 0..out_len {
        assert!(
            (jdx2[r] - jdx[r]).abs() <= 1e-12 * scale,
            "row {r}: Jacobian entries {} vs apply_j {}",
            jdx2[r],
            jdx[r]
        );
    }
    // Jᵀ is the adjoint of J: <J dx, w> = <dx, Jᵀ w>
    let w = rng.vec(out_len);
    let mut jtw: Vec<Vec<f64>> = dx.iter().map(|d| vec![0.0; d.len()]).collect();
    map.apply_jt(&w, &mut jtw);
    let lhs = dot(&jdx, &w);
    let rhs: f64 = dx.iter().zip(&jtw).map(|(a, b)| dot(a, b)).sum();
    assert!(
        (lhs - rhs).abs() <= 1e-12 * (1.0 + lhs.abs()),
        "adjoint: {lhs} vs {rhs}"
    );
    if !with_gs {
        return;
    }
    // geometric stiffness: d(Jᵀ f)/dx · dx against finite differences, for a fixed f
    let f = rng.vec(out_len);
    let jt_at = |states: &Vec<Option<canape::core::state::MechanicalObject>>,
                 map: &mut Box<dyn canape::core::component::Mapping>| {
        let mut y = vec![0.0; out_coord];
        map.apply(&MapInputs::new(states, &idx, VecId::POSITION), &mut y);
        let mut out: Vec<Vec<f64>> = dx.iter().map(|d| vec![0.0; d.len()]).collect();
        map.apply_jt(&f, &mut out);
        out
    };
    set(&mut scene.states, h);
    let gp = jt_at(&scene.states, &mut map);
    set(&mut scene.states, -h);
    let gm = jt_at(&scene.states, &mut map);
    set(&mut scene.states, 0.0);
    let _ = jt_at(&scene.states, &mut map);
    let mut kdx: Vec<Vec<f64>> = dx.iter().map(|d| vec![0.0; d.len()]).collect();
    map.apply_djt(
        &MapInputs::new(&scene.states, &idx, VecId::DX),
        &f,
        &mut kdx,
        1.0,
    );
    let mut ks: Vec<KEntry> = Vec::new();
    map.geometric_stiffness(&f, &mut ks);
    let mut kdx2: Vec<Vec<f64>> = dx.iter().map(|d| vec![0.0; d.len()]).collect();
    for e in &ks {
        kdx2[e.in_row as usize][e.row as usize] += e.val * dx[e.in_col as usize][e.col as usize];
    }
    let mut nonzero = false;
    for k in 0..dx.len() {
        for r in 0..dx[k].len() {
            let fd = (gp[k][r] - gm[k][r]) / (2.0 * h);
            nonzero |= fd.abs() > 1e-3;
            assert!(
                (fd - kdx[k][r]).abs() <= 1e-5 * (1.0 + fd.abs()),
                "input {k} row {r}: K dx {} vs finite differences {fd}",
                kdx[k][r]
            );
            assert!(
                (kdx2[k][r] - kdx[k][r]).abs() <= 1e-10 * (1.0 + fd.abs()),
                "input {k} row {r}: stiffness entries {} vs apply_djt {}",
                kdx2[k][r],
                kdx[k][r]
            );
        }
    }
    assert!(
        nonzero,
        "the test should exercise a non-zero geometric stiffness"
    );
}

const STRING: &str = r#"<StringMeshCreator name="loader" resolution="5" rotation="10 20 30"/>
  <EdgeSetTopologyContainer name="topology" position="@loader.position" edges="@loader.edges"/>"#;

#[test]
fn distance_mapping_derivatives() {
    for gs in ["1", "Exact"] {
        let xml = format!(
            r#"<Node name="root" gravity="0 0 0"><Node name="n">{STRING}
  <MechanicalObject name="in" template="Vec3" position="0 0 0 1 0.2 0 2 -0.1 0.3 3 0.4 0.1 4 0 -0.2"/>
  <Node name="m"><MechanicalObject name="out" template="Vec1"/>
   <DistanceMapping input="@../in" output="@out" topology="@../topology" geometricStiffness="{gs}"/></Node></Node></Node>"#
        );
        check_mapping(&xml, "out", true);
    }
}

#[test]
fn distance_from_target_mapping_derivatives_and_values() {
    let xml = r#"<Node name="root" gravity="0 0 0"><Node name="n">
  <MechanicalObject name="in" template="Vec3" position="0 0 0 1 0.2 0 2 -0.1 0.3"/>
  <Node name="m"><MechanicalObject name="out" template="Vec1"/>
   <DistanceFromTargetMapping input="@../in" output="@out" indices="2 0" targetPositions="1 1 1 0.5 0 0" restLengths="0.25" geometricStiffness="Exact"/></Node></Node></Node>"#;
    check_mapping(xml, "out", true);
    // out_i = |x[indices[i]] − target_i| − rest_i, the missing rest length being 0
    let sim = load(xml);
    let out = sim
        .scene
        .states
        .iter()
        .flatten()
        .find(|s| s.vec(VecId::POSITION).len() == 2)
        .expect("the mapped state")
        .vec(VecId::POSITION)
        .to_vec();
    let d0 = ((2.0f64 - 1.0).powi(2) + (-0.1f64 - 1.0).powi(2) + (0.3f64 - 1.0).powi(2)).sqrt();
    assert!((out[0] - (d0 - 0.25)).abs() < 1e-14, "{out:?}");
    assert!((out[1] - 0.5).abs() < 1e-14, "{out:?}");
}

#[test]
fn volume_mapping_derivatives_and_values() {
    // two tetrahedra, one of them inverted (negative volume); Exact geometric stiffness
    let xml = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" position="0 0 0 1 0.1 0 0.2 1.1 0 0.1 0.2 0.9 0.8 0.9 -0.7"/>
  <TetrahedronSetTopologyContainer tetrahedra="0 1 2 3 1 4 2 3"/>
  <Node name="p"><MechanicalObject name="out" template="Vec1"/>
  <VolumeMapping geometricStiffness="Exact" input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(xml, "out", true);
    let sim = load(xml);
    let out = sim
        .scene
        .states
        .iter()
        .flatten()
        .find(|s| s.vec(VecId::POSITION).len() == 2)
        .expect("the mapped state")
        .vec(VecId::POSITION)
        .to_vec();
    // the first: e1 = (1, 0.1, 0), e2 = (0.2, 1.1, 0), e3 = (0.1, 0.2, 0.9): det / 6
    let det = 1.0 * (1.1 * 0.9) - 0.1 * (0.2 * 0.9);
    assert!((out[0] - det / 6.0).abs() < 1e-14, "{out:?}");
    assert!(out[1] < 0.0, "the second is inverted: {out:?}");
}

#[test]
fn area_mapping_derivatives() {
    // triangles of a bent surface; Exact geometric stiffness (every triangle)
    let xml = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" position="0 0 0 1 0 0.2 0 1 -0.1 1.2 1.1 0.3"/>
  <TriangleSetTopologyContainer triangles="0 1 2 1 3 2"/>
  <Node name="p"><MechanicalObject name="out" template="Vec1"/>
  <AreaMapping geometricStiffness="Exact" input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(xml, "out", true);
}

#[test]
fn square_mapping_derivatives() {
    let xml = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" template="Vec1" position="0.5 -1.2 2"/>
  <Node name="p"><MechanicalObject name="out" template="Vec1"/>
  <SquareMapping input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(xml, "out", true);
}

#[test]
fn square_distance_mapping_derivatives() {
    let xml = format!(
        r#"<Node name="root" gravity="0 0 0"><Node name="n">{STRING}
  <MechanicalObject name="in" template="Vec3" position="0 0 0 1 0.2 0 2 -0.1 0.3 3 0.4 0.1 4 0 -0.2"/>
  <Node name="m"><MechanicalObject name="out" template="Vec1"/>
   <SquareDistanceMapping input="@../in" output="@out" topology="@../topology" geometricStiffness="Exact"/></Node></Node></Node>"#
    );
    check_mapping(&xml, "out", true);
}

#[test]
fn distance_multi_mapping_derivatives() {
    let xml = r#"<Node name="root" gravity="0 0 0">
  <Node name="a"><MechanicalObject name="pa" position="0 0 0 1 0.3 0.2"/></Node>
  <Node name="b"><MechanicalObject name="pb" position="2 1 0 0.5 -1 0.4"/></Node>
  <Node name="c"><MechanicalObject name="out" template="Vec1"/>
    <EdgeSetTopologyContainer name="e" edges="0 2 1 3 0 1"/>
    <DistanceMultiMapping template="Vec3,Vec1" topology="@e" input="@../a @../b" output="@out" indexPairs="0 0 0 1 1 0 1 1" geometricStiffness="1"/>
  </Node></Node>"#;
    check_mapping(xml, "out", true);
}

#[test]
fn rigid_mapping_derivatives() {
    let xml = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="frames" template="Rigid3" position="0 0 0 0.1 0.2 0.3 0.927362  1 1 0 0 0 0.6 0.8"/>
  <Node name="p"><MechanicalObject name="out" position="1 0 0 0 1 0 0.5 0.5 2 1 1 1"/>
    <RigidMapping input="@../frames" output="@out" rigidIndexPerPoint="0 0 1 1" globalToLocalCoords="1" geometricStiffness="1"/></Node>
  </Node></Node>"#;
    check_mapping(xml, "out", true);
}

#[test]
fn linear_mappings_derivatives() {
    let identity = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" position="0 0 0 1 2 3"/>
  <Node name="p"><MechanicalObject name="out"/><IdentityMapping input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(identity, "out", false);
    let rigid_centers = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" template="Rigid3" position="0 0 0 0 0 0 1  1 2 3 0 0.6 0 0.8"/>
  <Node name="p"><MechanicalObject name="out"/><IdentityMapping template="Rigid3,Vec3" input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(rigid_centers, "out", false);
    // RigidMapping<Rigid3, Rigid3>: frames carried by frames, with the geometric stiffness of
    // their centers' forces
    let rigid_frames = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" template="Rigid3" position="0 0 0 0 0 0 1  1 2 3 0 0.6 0 0.8"/>
  <Node name="p"><MechanicalObject name="out" template="Rigid3" position="1 0 0 0 0 0 1  0 1 2 0.6 0 0 0.8  2 2 3 0 0 0.6 0.8"/>
  <RigidMapping template="Rigid3,Rigid3" rigidIndexPerPoint="0 1 1" globalToLocalCoords="1" geometricStiffness="1" input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(rigid_frames, "out", true);
    // with globalToLocalCoords the frames are mapped back where they were given
    let sim = load(rigid_frames);
    let out = sim
        .scene
        .component_ids()
        .find(|&c| sim.scene.info(c).name == "out")
        .unwrap();
    let x = sim.scene.state(out).unwrap().vec(VecId::POSITION);
    let given = [
        1.0, 0., 0., 0., 0., 0., 1., 0., 1., 2., 0.6, 0., 0., 0.8, 2., 2., 3., 0., 0., 0.6, 0.8,
    ];
    for (a, b) in x.iter().zip(given) {
        assert!((a - b).abs() < 1e-12, "{x:?}");
    }
    let subset = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" position="0 0 0 1 2 3 4 5 6"/>
  <Node name="p"><MechanicalObject name="out"/><SubsetMapping indices="2 0" input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(subset, "out", false);
    // SubsetMultiMapping: points picked from two inputs, and rigid centers from two inputs
    let multi = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="a" position="0 0 0 1 2 3"/>
  <Node name="b"><MechanicalObject name="b" position="4 5 6 7 8 9 1 1 1"/>
  <Node name="p"><MechanicalObject name="out"/>
  <SubsetMultiMapping input="@../../a @../b" output="@out" indexPairs="1 2 0 1 1 0"/></Node></Node></Node></Node>"#;
    check_mapping(multi, "out", false);
    let multi_rigid = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="a" template="Rigid3" position="0 0 0 0 0 0 1"/>
  <Node name="b"><MechanicalObject name="b" template="Rigid3" position="1 2 3 0 0.6 0 0.8"/>
  <Node name="p"><MechanicalObject name="out"/>
  <SubsetMultiMapping template="Rigid3,Vec3" input="@../../a @../b" output="@out" indexPairs="1 0 0 0"/></Node></Node></Node></Node>"#;
    check_mapping(multi_rigid, "out", false);
    let identity_multi = multi.replace(
        r#"<SubsetMultiMapping input="@../../a @../b" output="@out" indexPairs="1 2 0 1 1 0"/>"#,
        r#"<IdentityMultiMapping input="@../../a @../b" output="@out"/>"#,
    );
    assert!(identity_multi.contains("IdentityMultiMapping"));
    check_mapping(&identity_multi, "out", false);
    // SkinningMapping: automatic weights over the 2 nearest of 3 frames
    let skinning = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" template="Rigid3" position="0 0 0 0 0 0 1  1 0 0 0 0.6 0 0.8  2 0.5 0 0.6 0 0 0.8"/>
  <Node name="p"><MechanicalObject name="out" position="0.2 0.1 0  1.4 -0.2 0.3  2.5 1 1"/>
  <SkinningMapping nbRef="2" input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(skinning, "out", false);
    // BeamLinearMapping: points along two beams, in local coordinates (default) and along the
    // chain from positions
    let beam = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" template="Rigid3" position="0 0 0 0 0 0 1  1 0 0 0 0 0.6 0.8  2.5 0.3 0 0.28 0 0 0.96"/>
  <Node name="p"><MechanicalObject name="out" position="0.3 0.1 -0.05  1.5 0.02 0.1  2 0 0"/>
  <BeamLinearMapping input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(beam, "out", false);
    check_mapping(
        &beam.replace("<BeamLinearMapping", r#"<BeamLinearMapping localCoord="0""#),
        "out",
        false,
    );
    // RigidMapping<Rigid2, Vec2>: planar frames (x, y, θ)
    let planar = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" template="Rigid2" position="0 0 0.3  1 2 -1.1"/>
  <Node name="p"><MechanicalObject name="out" template="Vec2" position="1 0  0.5 0.5  2 1"/>
  <RigidMapping template="Rigid2,Vec2" rigidIndexPerPoint="0 1 1" globalToLocalCoords="1" input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(planar, "out", false);
    let sim = load(planar);
    let out = sim
        .scene
        .component_ids()
        .find(|&c| sim.scene.info(c).name == "out")
        .unwrap();
    let x = sim.scene.state(out).unwrap().vec(VecId::POSITION);
    for (a, b) in x.iter().zip([1.0, 0.0, 0.5, 0.5, 2.0, 1.0]) {
        assert!((a - b).abs() < 1e-12, "{x:?}");
    }
    // CenterOfMassMapping: masses of the input's node weigh its points
    let com = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" template="Rigid3" position="0 0 0 0 0 0 1  1 2 3 0 0.6 0 0.8  4 0 1 0 0 0 1"/>
  <UniformMass template="Rigid3" vertexMass="2"/>
  <Node name="p"><MechanicalObject name="out"/>
  <CenterOfMassMapping input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(com, "out", false);
    let sim = load(com);
    let out = sim
        .scene
        .component_ids()
        .find(|&c| sim.scene.info(c).name == "out")
        .unwrap();
    let x = sim.scene.state(out).unwrap().vec(VecId::POSITION);
    for (a, b) in x.iter().zip([5.0 / 3.0, 2.0 / 3.0, 4.0 / 3.0]) {
        assert!((a - b).abs() < 1e-12, "{x:?}");
    }
    // at rest, the points stay where they were given
    let sim = load(skinning);
    let out = sim
        .scene
        .component_ids()
        .find(|&c| sim.scene.info(c).name == "out")
        .unwrap();
    let x = sim.scene.state(out).unwrap().vec(VecId::POSITION);
    for (a, b) in x.iter().zip([0.2, 0.1, 0., 1.4, -0.2, 0.3, 2.5, 1., 1.]) {
        assert!((a - b).abs() < 1e-12, "{x:?}");
    }
    let bary = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" position="0 0 0 1 0 0 0 1 0 0 0 1"/>
  <TetrahedronSetTopologyContainer tetrahedra="0 1 2 3"/>
  <Node name="p"><MechanicalObject name="out" position="0.1 0.2 0.3 0.25 0.25 0.25"/><BarycentricMapping input="@../in" output="@out"/></Node></Node></Node>"#;
    check_mapping(bary, "out", false);
    for (topology, points) in [
        // a triangle and a quad side by side (the 2-D tier), points off the plane
        (
            r#"<MeshTopology triangles="0 1 2" quads="1 3 4 2"/>"#,
            "0.2 0.2 0.3  1.5 0.5 -0.2  3 3 0",
        ),
        // edges (the 1-D tier)
        (
            r#"<MeshTopology edges="0 1 1 3"/>"#,
            "0.5 0.2 0  1.7 0 0  -1 0 0",
        ),
    ] {
        let xml = format!(
            r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" position="0 0 0 1 0 0 1 1 0 2 0 0 2 1 0.5"/>{topology}
  <Node name="p"><MechanicalObject name="out" position="{points}"/><BarycentricMapping input="@../in" output="@out"/></Node></Node></Node>"#
        );
        check_mapping(&xml, "out", false);
    }
}

#[test]
fn barycentric_mapping_on_surfaces_and_edges_places_points_as_sofa() {
    // at init, a point is projected on its triangle's plane, a quad point takes bilinear weights
    // of its affine coordinates, an edge point its projection on the first edge that spans it
    let xml = |topology: &str, points: &str| {
        format!(
            r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="in" position="0 0 0 1 0 0 1 1 0 0 1 0 3 0 0 0 0 1"/>{topology}
  <Node name="p"><MechanicalObject name="out" position="{points}"/><BarycentricMapping/></Node></Node></Node>"#
        )
    };
    let out = |sim: &Simulation| -> Vec<f64> {
        let scene = &sim.scene;
        let id = scene
            .component_ids()
            .find(|&c| scene.info(c).name == "out")
            .unwrap();
        scene.state(id).unwrap().vec(VecId::POSITION).to_vec()
    };
    let close = |a: &[f64], b: &[f64]| {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-12, "{a:?} vs {b:?}");
        }
    };
    // triangle: the point above the plane comes down onto it
    let sim = load(&xml(
        r#"<MeshTopology triangles="0 1 2"/>"#,
        "0.6 0.2 0.004",
    ));
    close(&out(&sim), &[0.6, 0.2, 0.0]);
    // quad (a unit square): inside points are reproduced
    let sim = load(&xml(
        r#"<MeshTopology quads="0 1 2 3"/>"#,
        "0.25 0.75 0  0.5 0.1 0",
    ));
    close(&out(&sim), &[0.25, 0.75, 0.0, 0.5, 0.1, 0.0]);
    // edges: the first edge whose span holds the projection (edge 0–1 for x = 0.5), the last
    // edge extrapolated for a point beyond every edge
    let sim = load(&xml(
        r#"<MeshTopology edges="0 1 1 4"/>"#,
        "0.5 0.3 0  4 0 0",
    ));
    close(&out(&sim), &[0.5, 0.0, 0.0, 4.0, 0.0, 0.0]);
    // a mesh with tetrahedra and triangles maps to the tetrahedra only
    let sim = load(&xml(
        r#"<MeshTopology tetrahedra="0 1 3 5" triangles="0 1 2"/>"#,
        "0.2 0.2 0.004",
    ));
    close(&out(&sim), &[0.2, 0.2, 0.004]);
}

/// Angular momentum of rigid body 0 about the origin (isotropic inertia m·I: L = m (c × v + ω)).
fn angular_momentum(sim: &Simulation, m: f64) -> [f64; 3] {
    let s = sim.scene.states[0].as_ref().unwrap();
    let (x, v) = (s.vec(VecId::POSITION), s.vec(VecId::VELOCITY));
    let c = [x[0], x[1], x[2]];
    let l = [
        c[1] * v[2] - c[2] * v[1],
        c[2] * v[0] - c[0] * v[2],
        c[0] * v[1] - c[1] * v[0],
    ];
    [m * (l[0] + v[3]), m * (l[1] + v[4]), m * (l[2] + v[5])]
}

#[test]
fn free_rigid_body_keeps_its_angular_momentum() {
    // explicit symplectic Euler, no gravity, no force: 10 000 steps. With SOFA's Rigid3 mass
    // (inertia fixed in world axes) and no torque, ω and v stay exactly what they were, so the
    // angular momentum about the origin is conserved to rounding (bound: 1e-12 relative), and the
    // exponential-map update keeps the orientation a unit quaternion to 1e-12.
    let mut sim = load(
        r#"<Node name="root" dt="0.001" gravity="0 0 0"><Node name="body">
  <EulerExplicitSolver symplectic="1"/>
  <MechanicalObject template="Rigid3" position="1 2 3 0 0 0 1" velocity="0.5 -0.2 0.1 1.5 -2 0.7"/>
  <UniformMass vertexMass="2"/></Node></Node>"#,
    );
    assert!(
        !sim.diagnostics.has_errors(),
        "{:?}",
        sim.diagnostics.iter().collect::<Vec<_>>()
    );
    let l0 = angular_momentum(&sim, 2.0);
    for _ in 0..10_000 {
        sim.step();
    }
    let l1 = angular_momentum(&sim, 2.0);
    for k in 0..3 {
        assert!(
            (l1[k] - l0[k]).abs() <= 1e-10 * (1.0 + l0[k].abs()),
            "L{k}: {} -> {}",
            l0[k],
            l1[k]
        );
    }
    let x = sim.scene.states[0].as_ref().unwrap().vec(VecId::POSITION);
    let n: f64 = x[3..7].iter().map(|q| q * q).sum();
    assert!((n - 1.0).abs() < 1e-12, "|q|² = {n}");
    // it did turn: 10 s at |ω| ≈ 2.6 rad/s
    assert!(x[6].abs() < 0.999);
    // and moved: c = c0 + 10 v
    assert!((x[0] - 6.0).abs() < 1e-9, "x = {}", x[0]);
}

#[test]
fn rigid_pendulum_has_the_small_angle_period() {
    // a point mass carried by a Rigid3 frame whose center is held by stiff springs (rotation
    // free): a pendulum of length 1 under g = 9.81, released at 0.05 rad. T = 2π √(L/g).
    let th = 0.05f64;
    let (s, c) = ((th / 2.0).sin(), (th / 2.0).cos());
    let xml = format!(
        r#"<Node name="root" dt="0.001" gravity="0 -9.81 0"><Node name="pendulum">
  <EulerImplicitSolver rayleighStiffness="0" rayleighMass="0"/>
  <CGLinearSolver iterations="200" tolerance="1e-14" threshold="1e-20"/>
  <MechanicalObject name="frame" template="Rigid3" position="0 0 0 0 0 {s} {c}"/>
  <UniformMass vertexMass="1e-4"/>
  <RestShapeSpringsForceField stiffness="1e7" angularStiffness="0" activeDirections="1 1 1 0 0 0 0"/>
  <Node name="bob"><MechanicalObject name="bob" position="0 -1 0"/>
    <UniformMass vertexMass="1"/>
    <RigidMapping input="@../frame" output="@bob"/></Node></Node></Node>"#
    );
    let mut sim = load(&xml);
    assert!(
        !sim.diagnostics.has_errors(),
        "{:?}",
        sim.diagnostics.iter().collect::<Vec<_>>()
    );
    let angle = |sim: &Simulation| {
        let b = sim.scene.states[1].as_ref().unwrap().vec(VecId::POSITION);
        b[0].atan2(-b[1])
    };
    assert!(
        (angle(&sim) - th).abs() < 1e-9,
        "the bob starts at the frame's angle"
    );
    // times of downward zero crossings of the angle (linear interpolation)
    let mut crossings = Vec::new();
    let mut prev = angle(&sim);
    for k in 1..=7000 {
        sim.step();
        let a = angle(&sim);
        if prev > 0.0 && a <= 0.0 {
            crossings.push((k as f64 - a / (a - prev)) * 0.001);
        }
        prev = a;
    }
    assert!(crossings.len() >= 3, "crossings {crossings:?}");
    let period = (crossings[2] - crossings[0]) / 2.0;
    let expected = 2.0 * std::f64::consts::PI * (1.0f64 / 9.81).sqrt();
    assert!(
        (period - expected).abs() < 0.005 * expected,
        "period {period} vs {expected}"
    );
}

#[test]
fn bad_mapping_graphs_are_reported() {
    // types that do not fit: DistanceMapping from a Rigid3 state
    let sim = load(
        r#"<Node name="root"><Node name="n"><EulerImplicitSolver/><CGLinearSolver/>
  <MechanicalObject name="r" template="Rigid3" position="0 0 0 0 0 0 1 1 0 0 0 0 0 1"/>
  <EdgeSetTopologyContainer edges="0 1"/>
  <Node name="m"><MechanicalObject template="Vec1"/><DistanceMapping input="@../r"/></Node></Node></Node>"#,
    );
    let msgs: Vec<String> = sim.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("maps Vec3d inputs to a Vec1d output")
                && m.contains("mapping-test.scn:")),
        "{msgs:?}"
    );
    // a Rigid3 state with 3-value positions
    let sim = load(
        r#"<Node name="root"><MechanicalObject template="Rigid3" position="0 0 0 1 0 0"/></Node>"#,
    );
    let msgs: Vec<String> = sim.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("7") && m.contains("mapping-test.scn:1")),
        "{msgs:?}"
    );
    // a mapping without input
    let sim = load(
        r#"<Node name="root"><Node name="m"><MechanicalObject/><IdentityMapping input="@nothing"/></Node></Node>"#,
    );
    let msgs: Vec<String> = sim.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("cannot find the mapping's input")),
        "{msgs:?}"
    );
    // a cycle: a mapping whose output is its own input
    let sim = load(
        r#"<Node name="root"><Node name="m"><MechanicalObject name="a" position="0 0 0"/><IdentityMapping input="@a" output="@a"/></Node></Node>"#,
    );
    let msgs: Vec<String> = sim.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(msgs.iter().any(|m| m.contains("cycle")), "{msgs:?}");
}

#[test]
fn tubular_mapping_derivatives() {
    // three frames, one turned; a peak on the first segment (frame 0's circle collapsed)
    let xml = r#"<Node name="root" gravity="0 0 0"><Node name="r">
  <MechanicalObject name="frames" template="Rigid3" position="0 0 0 0.1 0.2 0.3 0.927362  1 1 0 0 0 0.6 0.8  2 0.5 0 0 0.6 0 0.8"/>
  <Node name="p"><MechanicalObject name="out"/>
    <TubularMapping input="@../frames" output="@out" nbPointsOnEachCircle="7" radius="0.3" peak="1"/></Node>
  </Node></Node>"#;
    // SOFA's TubularMapping has no geometric stiffness
    check_mapping(xml, "out", false);
}

/// A beam's tube: Edge2QuadTopologicalMapping's quads and TubularMapping's points together (the
/// pair SOFA's scenes use), the tube following the bending beam.
#[test]
fn edge2quad_and_tubular_make_a_beam_tube() {
    let xml = r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <Node name="beam"><EulerImplicitSolver/><CGLinearSolver iterations="100" tolerance="1e-12" threshold="1e-12"/>
    <EdgeSetTopologyContainer name="edges" position="0 0 0 1 0 0 2 0 0 3 0 0" edges="0 1 1 2 2 3"/>
    <MechanicalObject name="frames" template="Rigid3"/>
    <FixedProjectiveConstraint indices="0"/>
    <UniformMass totalMass="1"/>
    <BeamFEMForceField radius="0.1" youngModulus="1e6" poissonRatio="0.3"/>
    <Node name="skin">
      <MechanicalObject name="tube"/>
      <QuadSetTopologyContainer name="quads"/>
      <Edge2QuadTopologicalMapping input="@../edges" output="@quads" nbPointsOnEachCircle="8" radius="0.2"/>
      <TubularMapping input="@../frames" output="@tube" nbPointsOnEachCircle="8" radius="0.2"/>
    </Node>
  </Node></Node>"#;
    let mut sim = load(xml);
    assert!(
        !sim.diagnostics.has_errors(),
        "{:?}",
        sim.diagnostics.iter().collect::<Vec<_>>()
    );
    let quads = sim
        .scene
        .topologies
        .iter()
        .flatten()
        .map(|t| t.mesh())
        .find(|m| !m.quads.is_empty())
        .expect("the quad container")
        .clone();
    assert_eq!(quads.quads.len(), 3 * 8);
    assert_eq!(quads.nb_points(), 4 * 8);
    // every quad joins two consecutive circles
    for q in &quads.quads {
        assert_eq!(q[0] / 8 + 1, q[1] / 8, "{q:?}");
    }
    for _ in 0..10 {
        sim.step();
    }
    let frames = sim
        .scene
        .states
        .iter()
        .flatten()
        .find(|s| s.dof == DofType::Rigid3)
        .unwrap()
        .vec(VecId::POSITION)
        .to_vec();
    let tube = sim
        .scene
        .states
        .iter()
        .flatten()
        .find(|s| s.dof == DofType::Vec3)
        .unwrap()
        .vec(VecId::POSITION)
        .to_vec();
    assert_eq!(tube.len(), 3 * 32);
    // the free end has sagged, and the tube's points are still 0.2 from their frame's center
    assert!(frames[3 * 7 + 1] < -1e-4, "{frames:?}");
    for (k, p) in tube.chunks_exact(3).enumerate() {
        let f = &frames[7 * (k / 8)..7 * (k / 8) + 3];
        let d = ((p[0] - f[0]).powi(2) + (p[1] - f[1]).powi(2) + (p[2] - f[2]).powi(2)).sqrt();
        assert!((d - 0.2).abs() < 1e-12, "point {k}: {d}");
    }
}
