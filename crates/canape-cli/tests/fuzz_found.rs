//! Inputs the scene fuzzer (tests/fuzz.rs) once found to panic, reduced to a few lines each: they
//! must now load with an error naming the problem (exit code 4) and run the rest.

use std::process::Command;

fn run(name: &str, scene: &str) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("canape-fuzz-found-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, scene).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_canape"))
        .args(["run", "-n", "3"])
        .arg(&file)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

const HEAD: &str = r#"<Node name="root" dt="0.01"><DefaultAnimationLoop/>
  <EulerImplicitSolver/><CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>"#;

#[test]
fn linear_force_field_with_too_few_force_values() {
    let (c, out) = run(
        "lff.scn",
        &format!(
            r#"{HEAD}<MechanicalObject position="0 0 0 1 0 0"/><UniformMass vertexMass="1"/>
  <LinearForceField points="0" forces="18446744073709551616" force="2" times="0 4 8"/></Node>"#
        ),
    );
    assert_eq!(c, 4, "{out}");
    assert!(out.contains("forces has 1 numbers"), "{out}");
}

#[test]
fn string_mesh_creator_with_an_absurd_resolution() {
    let (c, out) = run(
        "smc.scn",
        &format!(
            r#"{HEAD}<StringMeshCreator name="loader" resolution="6148914691236517206"/>
  <MechanicalObject src="@loader"/><UniformMass vertexMass="1"/></Node>"#
        ),
    );
    assert_eq!(c, 4, "{out}");
    assert!(out.contains("more vertices than a state may hold"), "{out}");
}

#[test]
fn identity_mapping_does_not_shrink_a_state_whose_force_fields_are_set_up() {
    // the child grid has 8 points and a hexahedron FEM; the identity mapping's input has 2
    let (c, out) = run(
        "shrink.scn",
        &format!(
            r#"{HEAD}<MechanicalObject position="0 0 0 1 0 0"/><UniformMass vertexMass="1"/>
  <Node name="child">
    <RegularGridTopology n="2 2 2" min="0 0 0" max="1 1 1"/>
    <MechanicalObject name="grid"/>
    <HexahedronFEMForceField youngModulus="1000" poissonRatio="0.3"/>
    <IdentityMapping/>
  </Node></Node>"#
        ),
    );
    assert_eq!(c, 4, "{out}");
    assert!(out.contains("is not shrunk"), "{out}");
    assert!(out.contains("3 steps in"), "{out}");
}

#[test]
fn a_template_attribute_cannot_put_a_vec3_force_field_on_another_state() {
    // an explicit template passes the creation check; init still sees the Vec1 state
    let (c, out) = run(
        "tpl.scn",
        &format!(
            r#"{HEAD}<MechanicalObject template="Vec1" position="0 1 2"/><UniformMass vertexMass="1"/>
  <MeshTopology edges="0 1 1 2" tetrahedra="0 1 2 0"/>
  <MeshSpringForceField template="Vec3" stiffness="500"/>
  <TetrahedronFEMForceField template="Vec3" youngModulus="100" poissonRatio="0.3"/></Node>"#
        ),
    );
    assert_eq!(c, 4, "{out}");
    assert!(
        out.contains("MeshSpringForceField acts on Vec3d states"),
        "{out}"
    );
    assert!(
        out.contains("this force field acts on Vec3d states"),
        "{out}"
    );
}
