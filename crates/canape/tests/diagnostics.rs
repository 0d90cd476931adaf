//! Bad input gets clear diagnostics (file, line, component, suggestion), never a panic.

use canape::core::diag::Severity;
use canape::{load_scene, LoadOptions, Simulation};
use std::path::PathBuf;

fn write(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("canape-diag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn load(name: &str, text: &str) -> Simulation {
    let p = write(name, text);
    load_scene(&p, &LoadOptions::default()).unwrap_or_else(|e| panic!("{name} should load: {e}"))
}

fn messages(sim: &Simulation, sev: Severity) -> Vec<String> {
    sim.diagnostics
        .iter()
        .filter(|d| d.severity == sev)
        .map(|d| d.to_string())
        .collect()
}

const BEAM: &str = r#"<Node name="root" dt="0.02">
  <DefaultAnimationLoop/>
  <Node name="Beam">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="50" tolerance="1e-9" threshold="1e-12"/>
    <RegularGridTopology name="grid" min="0 0 0" max="4 1 1" n="5 2 2"/>
    <MechanicalObject name="dofs"/>
    <UniformMass totalMass="1"/>
    <HexahedronFEMForceField name="FEM" youngModulus="1000" poissonRatio="0.3"/>
    <FixedProjectiveConstraint indices="0 5 10 15"/>
  </Node>
</Node>
"#;

#[test]
fn a_valid_scene_has_no_warnings() {
    let sim = load("ok.scn", BEAM);
    assert!(sim.diagnostics.is_empty(), "{:?}", sim.diagnostics);
}

#[test]
fn malformed_xml_names_file_and_line() {
    let p = write(
        "bad.scn",
        "<Node name=\"root\">\n  <MechanicalObject>\n</Node>\n",
    );
    let e = match load_scene(&p, &LoadOptions::default()) {
        Err(e) => e,
        Ok(_) => panic!("malformed XML must not load"),
    };
    let s = e.to_string();
    assert!(s.contains("bad.scn:3"), "{s}");
    assert!(s.contains("does not match <MechanicalObject>"), "{s}");
}

#[test]
fn missing_scene_file_is_an_error() {
    let e = load_scene(
        std::path::Path::new("/nonexistent/scene.scn"),
        &LoadOptions::default(),
    )
    .err()
    .expect("error");
    assert!(e.to_string().contains("cannot read scene file"));
}

#[test]
fn missing_mesh_file_is_reported_and_the_scene_still_loads() {
    let sim = load(
        "missing.scn",
        "<Node name=\"root\">\n  <DefaultAnimationLoop/>\n  <MeshGmshLoader name=\"loader\" filename=\"mesh/nothere.msh\"/>\n  <MechanicalObject src=\"@loader\"/>\n</Node>\n",
    );
    let errs = messages(&sim, Severity::Error);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].contains("missing.scn:3"), "{}", errs[0]);
    assert!(
        errs[0].contains("/root/loader (MeshGmshLoader)"),
        "{}",
        errs[0]
    );
    assert!(
        errs[0].contains("file 'mesh/nothere.msh' not found"),
        "{}",
        errs[0]
    );
    assert!(errs[0].contains("SOFA_DATA_PATH"), "{}", errs[0]);
}

#[test]
fn unknown_component_suggests_the_closest_names() {
    let sim = load(
        "unknown.scn",
        &BEAM.replace(
            "<HexahedronFEMForceField name",
            "<HexahedronFEMForcefield name",
        ),
    );
    let errs = messages(&sim, Severity::Error);
    assert!(
        errs.iter().any(
            |e| e.contains("unknown component 'HexahedronFEMForcefield'")
                && e.contains("did you mean 'HexahedronFEMForceField'")
                && e.contains("unknown.scn:9")
        ),
        "{errs:?}"
    );
    // the rest of the scene still runs
    let mut sim = sim;
    sim.step();
}

#[test]
fn unknown_attribute_is_a_warning_with_suggestion() {
    let sim = load("attr.scn", &BEAM.replace("youngModulus=", "youngModulu="));
    let w = messages(&sim, Severity::Warning);
    assert!(
        w.iter()
            .any(|m| m.contains("unknown attribute 'youngModulu'")
                && m.contains("did you mean 'youngModulus'")
                && m.contains("/root/Beam/FEM (HexahedronFEMForceField)")),
        "{w:?}"
    );
}

#[test]
fn unparsable_value_keeps_the_default_with_a_warning() {
    let sim = load(
        "value.scn",
        &BEAM.replace("poissonRatio=\"0.3\"", "poissonRatio=\"abc\""),
    );
    let w = messages(&sim, Severity::Warning);
    assert!(
        w.iter().any(
            |m| m.contains("could not read value for Data 'poissonRatio'")
                && m.contains("'abc'")
                && m.contains("0.45")
        ),
        "{w:?}"
    );
}

#[test]
fn broken_link_is_an_error() {
    let sim = load(
        "link.scn",
        &BEAM.replace("indices=\"0 5 10 15\"", "indices=\"@nobox.indices\""),
    );
    let errs = messages(&sim, Severity::Error);
    assert!(
        errs.iter().any(|e| e.contains("broken link")
            && e.contains("@nobox.indices")
            && e.contains("FixedProjectiveConstraint")),
        "{errs:?}"
    );
}

#[test]
fn wrong_template_is_an_error() {
    let sim = load(
        "tpl.scn",
        &BEAM.replace(
            "<MechanicalObject name=\"dofs\"/>",
            "<MechanicalObject name=\"dofs\" template=\"Vec4d\"/>",
        ),
    );
    let errs = messages(&sim, Severity::Error);
    assert!(
        errs.iter()
            .any(|e| e.contains("unknown template 'Vec4d'") && e.contains("tpl.scn:7")),
        "{errs:?}"
    );
}

#[test]
fn renamed_and_removed_components() {
    let sim = load(
        "renamed.scn",
        &BEAM.replace("<FixedProjectiveConstraint", "<FixedConstraint"),
    );
    let w = messages(&sim, Severity::Warning);
    assert!(
        w.iter()
            .any(|m| m
                .contains("'FixedConstraint' is the former name of 'FixedProjectiveConstraint'")),
        "{w:?}"
    );
    assert!(!sim.diagnostics.has_errors());
    let sim = load(
        "removed.scn",
        &BEAM.replace("<EulerImplicitSolver/>", "<EulerImplicit/>"),
    );
    let errs = messages(&sim, Severity::Error);
    assert!(
        errs.iter()
            .any(|e| e.contains("removed in SOFA v24.12") && e.contains("EulerImplicitSolver")),
        "{errs:?}"
    );
}

#[test]
fn missing_animation_loop_is_added() {
    let sim = load(
        "noloop.scn",
        &BEAM.replace("  <DefaultAnimationLoop/>\n", ""),
    );
    let w = messages(&sim, Severity::Warning);
    assert!(
        w.iter()
            .any(|m| m.contains("DefaultAnimationLoop was added")),
        "{w:?}"
    );
    let root = sim.scene.root();
    let first = sim.scene.node(root).components[0];
    assert_eq!(sim.scene.info(first).class, "DefaultAnimationLoop");
}

#[test]
fn missing_include_is_an_error() {
    let sim = load("inc.scn", "<Node name=\"root\">\n  <DefaultAnimationLoop/>\n  <include href=\"nope.xml\"/>\n</Node>\n");
    let errs = messages(&sim, Severity::Error);
    assert!(
        errs.iter()
            .any(|e| e.contains("included file 'nope.xml' not found") && e.contains("inc.scn:3")),
        "{errs:?}"
    );
}

#[test]
fn include_and_macro_with_attribute_replacement() {
    let dir = std::env::temp_dir().join(format!("canape-diag-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("Objects")).unwrap();
    std::fs::write(dir.join("Objects/Clamp.xml"), "<Node name=\"Group\">\n  <BoxROI name=\"box_roi\" box=\"0 0 0 1 1 1\"/>\n  <FixedProjectiveConstraint indices=\"@[-1].indices\"/>\n</Node>\n").unwrap();
    std::fs::write(
        dir.join("part.xml"),
        "<Node name=\"Group\">\n  <UniformMass totalMass=\"1\"/>\n</Node>\n",
    )
    .unwrap();
    let scene = BEAM
        .replace(
            "<UniformMass totalMass=\"1\"/>",
            "<include href=\"part.xml\" totalMass=\"2\"/>",
        )
        .replace(
            "<FixedProjectiveConstraint indices=\"0 5 10 15\"/>",
            "<Clamp box=\"-0.1 -0.1 -0.1 0.1 1.1 1.1\"/>",
        );
    let sim = load("macro.scn", &scene);
    assert!(!sim.diagnostics.has_errors(), "{:?}", sim.diagnostics);
    let fixed = sim.scene.projective[0].as_ref().unwrap();
    assert_eq!(
        fixed.fixed_scalar_dofs(3).len(),
        4 * 3,
        "the macro's box selects the 4 points at x=0"
    );
    let mass = sim
        .scene
        .component_ids()
        .find(|c| sim.scene.info(*c).class == "UniformMass")
        .unwrap();
    let m = sim.scene.component(mass).unwrap();
    assert_eq!(m.data().real("totalMass"), 2.0);
}

#[test]
fn non_finite_state_is_detected() {
    let mut sim = load(
        "nan.scn",
        &BEAM
            .replace(
                "<UniformMass totalMass=\"1\"/>",
                "<UniformMass totalMass=\"1e300\"/>",
            )
            .replace("dt=\"0.02\"", "dt=\"0.02\" gravity=\"0 -1e300 0\""),
    );
    for _ in 0..5 {
        sim.step();
    }
    let bad = sim.find_non_finite();
    assert!(
        bad.as_deref()
            .is_some_and(|b| b.contains("/root/Beam/dofs")),
        "{bad:?}"
    );
}

#[test]
fn non_finite_input_is_an_error() {
    let sim = load(
        "naninput.scn",
        &BEAM.replace(
            "<MechanicalObject name=\"dofs\"/>",
            "<MechanicalObject name=\"dofs\" position=\"0 0 0 nan 1 1\"/>",
        ),
    );
    let errs = messages(&sim, Severity::Error);
    assert!(
        errs.iter()
            .any(|e| e.contains("non-finite") && e.contains("/root/Beam/dofs")),
        "{errs:?}"
    );
}

#[test]
fn mutated_scenes_never_panic() {
    // deterministic mutations of a valid scene: deletions, duplications, character swaps
    let base = BEAM.as_bytes().to_vec();
    let mut seed: u64 = 42;
    let mut next = |m: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % m.max(1)
    };
    for i in 0..300 {
        let mut t = base.clone();
        for _ in 0..1 + next(3) {
            let pos = next(t.len());
            match next(4) {
                0 => {
                    let len = 1 + next(8);
                    t.drain(pos..(pos + len).min(t.len()));
                }
                1 => {
                    let c = t[pos];
                    t.insert(pos, c);
                }
                2 => t[pos] = b"<>/\"= @.-019eNx"[next(15)],
                _ => {
                    let q = next(t.len());
                    t.swap(pos, q);
                }
            }
        }
        let text = String::from_utf8_lossy(&t).into_owned();
        let p = write(&format!("mut{i}.scn"), &text);
        let r = std::panic::catch_unwind(|| {
            if let Ok(mut s) = load_scene(&p, &LoadOptions::default()) {
                for _ in 0..3 {
                    s.step();
                }
            }
        });
        assert!(r.is_ok(), "panic on mutated scene {i}:\n{text}");
    }
}

/// Hostile sizes, depths and repetitions are refused with a diagnostic, quickly, never a panic,
/// an allocation failure or a stack overflow.
#[test]
fn hostile_sizes_depths_and_repetitions_are_refused() {
    // sizes beyond what a state may hold (one of them wraps when multiplied by 3)
    for size in ["9223372036854775807", "6148914691236517206", "1000000000"] {
        let sim = load(
            "size.scn",
            &format!(r#"<Node name="root"><MechanicalObject size="{size}"/></Node>"#),
        );
        let w = messages(&sim, Severity::Warning);
        assert!(
            w.iter()
                .any(|m| m.contains(&format!("size {size}")) && m.contains("left empty")),
            "{w:?}"
        );
        assert_eq!(sim.scene.states[0].as_ref().unwrap().size(), 0);
    }
    let sim = load(
        "grid.scn",
        r#"<Node name="root"><RegularGridTopology n="790 790 790"/><MechanicalObject/></Node>"#,
    );
    assert!(messages(&sim, Severity::Error)
        .iter()
        .any(|m| m.contains("[790, 790, 790]")));
    // 15 000 nested nodes: refused by the reader
    let deep = format!(
        "<Node name=\"root\">{}{}</Node>",
        "<Node name=\"n\">".repeat(15_000),
        "</Node>".repeat(15_000)
    );
    let p = write("deep.scn", &deep);
    let e = load_scene(&p, &LoadOptions::default())
        .err()
        .expect("refused");
    assert!(e.to_string().contains("nested more than 1000 deep"), "{e}");
    // a file that includes itself twice: bounded work, one diagnostic per kind
    let dir = write("self.xml", "").parent().unwrap().to_path_buf();
    std::fs::write(
        dir.join("self.xml"),
        r#"<Node name="root"><include href="self.xml"/><include href="self.xml"/></Node>"#,
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    // (a file name of its own: tests run in parallel in one temporary folder)
    let sim = load(
        "self-inc.scn",
        r#"<Node name="root"><include href="self.xml"/></Node>"#,
    );
    assert!(t0.elapsed().as_secs_f64() < 10.0, "{:?}", t0.elapsed());
    let e = messages(&sim, Severity::Error);
    assert!(
        e.len() <= 3,
        "{} errors: {:?}",
        e.len(),
        &e[..3.min(e.len())]
    );
    assert!(
        e.iter().any(|m| m.contains("already included 1000 files")),
        "{e:?}"
    );
    // non-finite context Data keep their defaults
    let sim = load(
        "nan.scn",
        r#"<Node name="root" gravity="nan 0 0" dt="inf"><MechanicalObject/></Node>"#,
    );
    assert!(sim.scene.nodes[0].gravity.iter().all(|g| g.is_finite()));
    assert_eq!(sim.dt, 0.01);
}

#[test]
fn solvers_stop_on_non_finite_residuals() {
    // an infinite mass makes NaN: CG with a billion iterations stops at once
    let mut sim = load(
        "infmass.scn",
        r#"<Node name="root" dt="0.01"><DefaultAnimationLoop/><EulerImplicitSolver/>
  <CGLinearSolver iterations="1000000000" tolerance="1e-30" threshold="1e-30"/>
  <MechanicalObject position="0 0 0 1 0 0"/><UniformMass totalMass="inf"/>
  <SpringForceField spring="0 1 10 0 1.5"/></Node>"#,
    );
    let t0 = std::time::Instant::now();
    sim.step();
    assert!(t0.elapsed().as_secs_f64() < 5.0);
    assert!(sim.last_solve[0].iterations < 10, "{:?}", sim.last_solve);
}

/// SOFA's LinearMovementConstraint_RemovingMeshTest.scn gives Rigid-sized movements to a Vec3
/// state: the constraint is refused with the reason, and the rest runs (it used to panic).
#[test]
fn a_refused_linear_movement_does_nothing_instead_of_panicking() {
    let mut sim = load(
        "movement.scn",
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <EulerImplicitSolver/><CGLinearSolver iterations="20" tolerance="1e-12" threshold="1e-20"/>
  <MechanicalObject position="0 0 0 1 0 0"/><UniformMass totalMass="1"/>
  <LinearMovementProjectiveConstraint indices="0" keyTimes="0 1" movements="0 0 0 0 0 0  0 1 0 0 0 0"/>
</Node>"#,
    );
    let errors = messages(&sim, Severity::Error);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("movements has 12 numbers") && e.contains("movement.scn:4")),
        "{errors:?}"
    );
    for _ in 0..5 {
        sim.step();
    }
    assert!(sim.find_non_finite().is_none());
}

/// SOFA's older form of a Data, `<Attribute type="…"><Data value="…"/></Attribute>` inside an
/// object, sets it as the attribute would; any other child element of an object is reported.
#[test]
fn attribute_children_set_data_and_other_children_are_reported() {
    let sim = load(
        "attribute-children.scn",
        r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <EulerImplicitSolver/>
  <CGLinearSolver iterations="10" tolerance="1e-9" threshold="1e-12"/>
  <MechanicalObject name="p">
    <Attribute type="position"><Data value="1 2 3"/></Attribute>
    <Attribute type="velocity"><Data value="0 1 0"/></Attribute>
  </MechanicalObject>
  <UniformMass totalMass="1">
    <Stray/>
  </UniformMass>
</Node>
"#,
    );
    let id = sim
        .scene
        .component_ids()
        .find(|c| sim.scene.component_label(*c).starts_with("/root/p"))
        .expect("the state");
    let s = sim.scene.state(id).unwrap();
    assert_eq!(
        s.vec(canape::core::state::VecId::POSITION),
        &[1.0, 2.0, 3.0]
    );
    assert_eq!(
        s.vec(canape::core::state::VecId::VELOCITY),
        &[0.0, 1.0, 0.0]
    );
    let w = messages(&sim, Severity::Warning);
    assert!(
        w.iter()
            .any(|m| m.contains("<Stray> inside <UniformMass> is ignored") && m.contains(":9:")),
        "{w:?}"
    );
}

/// A component without a template takes its context state's (SOFA's deduction), except the
/// solvers, templated on matrices: a CGLinearSolver beside a Rigid3 state is SOFA's default one.
#[test]
fn solvers_beside_a_rigid_state_keep_their_default_template() {
    let sim = load(
        "rigid-solvers.scn",
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <DefaultAnimationLoop/>
  <Node name="body">
    <MechanicalObject template="Rigid3" position="0 0 0 0 0 0 1"/>
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>
    <UniformMass totalMass="1"/>
  </Node>
</Node>
"#,
    );
    assert!(
        !sim.diagnostics.has_errors(),
        "{:?}",
        messages(&sim, Severity::Error)
    );
}

#[test]
fn a_link_to_the_wrong_kind_of_component_says_what_it_found() {
    let wrong = BEAM.replace(
        r#"poissonRatio="0.3"/>"#,
        r#"poissonRatio="0.3" topology="@dofs"/>"#,
    );
    let sim = load("wrong_link.scn", &wrong);
    let errors = messages(&sim, Severity::Error);
    assert!(
        errors.iter().any(|e| e.contains("wrong_link.scn:9")
            && e.contains(
                "topology='@dofs' names /root/Beam/dofs (MechanicalObject), not a topology"
            )),
        "{errors:?}"
    );
    let no_at = BEAM.replace(
        r#"poissonRatio="0.3"/>"#,
        r#"poissonRatio="0.3" topology="grid"/>"#,
    );
    let sim = load("not_a_link.scn", &no_at);
    let errors = messages(&sim, Severity::Error);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("topology='grid' is not a link")),
        "{errors:?}"
    );
    // the masses' (and pressure fields', mappings', smoothing's) topology link is typed too
    let mass = BEAM.replace(
        r#"<UniformMass totalMass="1"/>"#,
        r#"<DiagonalMass totalMass="1" topology="@FEM"/>"#,
    );
    let sim = load("mass_link.scn", &mass);
    let errors = messages(&sim, Severity::Error);
    assert!(
        errors.iter().any(|e| e.contains("mass_link.scn:8")
            && e.contains(
                "topology='@FEM' names /root/Beam/FEM (HexahedronFEMForceField), not a topology"
            )),
        "{errors:?}"
    );
    let mass = BEAM.replace(
        r#"<UniformMass totalMass="1"/>"#,
        r#"<DiagonalMass totalMass="1" topology="@nowhere"/>"#,
    );
    let errors = messages(&load("mass_nolink.scn", &mass), Severity::Error);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("topology='@nowhere' names nothing in the scene")),
        "{errors:?}"
    );
    // an interaction's ends: a MechanicalObject or a node holding one
    let spring = BEAM.replace(
        r#"<FixedProjectiveConstraint indices="0 5 10 15"/>"#,
        r#"<FixedProjectiveConstraint indices="0 5 10 15"/>
    <StiffSpringForceField object1="@grid" object2="@dofs" spring="0 1 10 0 1"/>
    <StiffSpringForceField object1="@/root" object2="@." spring="0 1 10 0 1"/>
    <StiffSpringForceField object1="@." object2="@dofs" spring="0 1 10 0 1"/>"#,
    );
    let sim = load("spring_links.scn", &spring);
    let errors = messages(&sim, Severity::Error);
    assert!(
        errors.iter().any(|e| e.contains("spring_links.scn:11")
            && e.contains("object1='@grid' names /root/Beam/grid (RegularGridTopology), not a MechanicalObject")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("spring_links.scn:12")
            && e.contains("object1='@/root' names the node 'root' (it has no MechanicalObject), not a MechanicalObject")),
        "{errors:?}"
    );
    assert_eq!(errors.len(), 2, "the node Beam holds a state: {errors:?}");
    // a state linked as mstate is accepted when it is the context's
    let ok = BEAM.replace(
        r#"poissonRatio="0.3"/>"#,
        r#"poissonRatio="0.3" topology="@grid" mstate="@dofs"/>"#,
    );
    let sim = load("good_links.scn", &ok);
    assert!(messages(&sim, Severity::Error).is_empty());
}

#[test]
fn plane_force_field_quotes_the_normal_given() {
    let sim = load(
        "plane_normal.scn",
        &BEAM.replace(
            "<UniformMass totalMass=\"1\"/>",
            "<UniformMass totalMass=\"1\"/>\n    <PlaneForceField normal=\"0 1\" stiffness=\"10\"/>",
        ),
    );
    let errors = messages(&sim, Severity::Error);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("normal '0 1' needs 3 finite numbers for this Vec3d state")),
        "{errors:?}"
    );
}

#[test]
fn links_to_the_wrong_kind_of_component_are_refused_with_what_they_name() {
    let sim = load(
        "wrong-links.scn",
        r#"<Node name="root" dt="0.01">
  <DefaultAnimationLoop/>
  <CompositeCollisionPipeline subCollisionPipelines="@sub"/>
  <SubCollisionPipeline name="sub" collisionModels="@ball/dofs @ball/model" broadPhase="@bp" narrowPhase="@np" intersectionMethod="@im" contactManager="@cm"/>
  <BruteForceBroadPhase name="bp"/>
  <BVHNarrowPhase name="np"/>
  <MinProximityIntersection name="im"/>
  <CollisionResponse name="cm"/>
  <Node name="ball">
    <MechanicalObject name="dofs" position="0 0 0  1 0 0  0 1 0"/>
    <TriangleSetTopologyContainer name="tri" triangles="0 1 2"/>
    <SphereCollisionModel name="model" radius="0.1"/>
    <Node name="sub">
      <TriangleSetTopologyContainer name="part"/>
      <SubsetTopologicalMapping input="@../dofs" output="@part"/>
    </Node>
  </Node>
</Node>
"#,
    );
    let errors = messages(&sim, Severity::Error).join("\n");
    assert!(
        errors.contains("collisionModels='@ball/dofs' names")
            && errors.contains("not a collision model: it is left out of this pipeline"),
        "{errors}"
    );
    assert!(!errors.contains("@ball/model"), "{errors}");
    assert!(
        errors.contains("input='@../dofs' names") && errors.contains("not a topology"),
        "{errors}"
    );
}

#[test]
fn a_failed_factorization_is_reported_once_with_its_step_and_solver() {
    // no mass and a free spring: the system matrix is singular
    let mut sim = load(
        "singular.scn",
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <DefaultAnimationLoop/>
  <Node name="pair">
    <EulerImplicitSolver/>
    <SparseLDLSolver name="ldl"/>
    <MechanicalObject name="dofs" position="0 0 0  1 0 0"/>
    <UniformMass totalMass="0"/>
    <SpringForceField spring="0 1 100 0 1"/>
  </Node>
</Node>
"#,
    );
    for _ in 0..3 {
        sim.step();
    }
    let errors = messages(&sim, Severity::Error);
    let failed: Vec<&String> = errors
        .iter()
        .filter(|m| m.contains("the linear solve failed"))
        .collect();
    assert_eq!(failed.len(), 1, "{errors:?}");
    assert!(
        failed[0].contains("step 1:")
            && failed[0].contains("the solution is not finite")
            && failed[0].contains("/root/pair/ldl")
            && failed[0].contains("singular.scn:5"),
        "{failed:?}"
    );
}

#[test]
fn a_constraint_solver_refusing_its_problem_says_why() {
    // LCPConstraintSolver's own mu (0.6 by default) expects friction contacts; the response
    // has none (mu=0): SOFA would mix rows of different contacts, Canapé applies no force
    // and says so once
    let mut sim = load(
        "lcp-mu.scn",
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <FreeMotionAnimationLoop/>
  <LCPConstraintSolver maxIt="100" tolerance="1e-6"/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <MinProximityIntersection alarmDistance="0.2" contactDistance="0.05"/>
  <CollisionResponse response="FrictionContactConstraint" responseParams="mu=0"/>
  <Node name="ball">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-20"/>
    <MechanicalObject name="dofs" position="0.2 0.3 -0.3"/>
    <UniformMass totalMass="1"/>
    <UncoupledConstraintCorrection/>
    <SphereCollisionModel radius="0.2"/>
  </Node>
  <Node name="floor">
    <MechanicalObject position="-5 0 -5  5 0 -5  5 0 5  -5 0 5"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0"/>
  </Node>
</Node>
"#,
    );
    for _ in 0..30 {
        sim.step();
    }
    let warnings = messages(&sim, Severity::Warning);
    let refused: Vec<&String> = warnings
        .iter()
        .filter(|m| m.contains("LCPConstraintSolver with mu > 0"))
        .collect();
    assert_eq!(refused.len(), 1, "{warnings:?}");
}
