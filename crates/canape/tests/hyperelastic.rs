//! TetrahedronHyperelasticityFEMForceField in a scene: at small strains StVenantKirchhoff and
//! NeoHookean with μ, λ of (E, ν) bend a cantilever as the corotational linear FEM with (E, ν)
//! does (SOFA's TetrahedronHyperelasticityFEMForceField.scn, whose corotational beam runs on
//! the grid's hexahedra split into tetrahedra by TetrahedronFEMForceField itself).

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions};

fn tip_after(material: &str) -> [f64; 3] {
    let ff = if material.is_empty() {
        r#"<TetrahedronFEMForceField youngModulus="10000" poissonRatio="0.45" method="large"/>"#
            .to_string()
    } else {
        format!(
            r#"<Node name="tetras"><MeshTopology name="Container"/>
  <Hexa2TetraTopologicalMapping input="@../grid" output="@Container" swapping="true"/>
  <TetrahedronHyperelasticityFEMForceField materialName="{material}" ParameterSet="3448.2759 31034.483"/></Node>"#
        )
    };
    let xml = format!(
        r#"<Node name="root" dt="0.005" gravity="0 -9 0">
  <EulerImplicitSolver/><CGLinearSolver iterations="200" tolerance="1e-12" threshold="1e-12"/>
  <RegularGridTopology name="grid" min="0 0 0" max="1 1 2.7" n="3 3 8"/>
  <MechanicalObject/>
  <MeshMatrixMass totalMass="1"/>
  {ff}
  <BoxROI name="box" box="0 0 0 1 1 0.05"/>
  <FixedProjectiveConstraint indices="@box.indices"/>
</Node>"#
    );
    let mut sim = load_scene_str(
        &xml,
        "hyper.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(
        !sim.diagnostics.has_errors(),
        "{:?}",
        sim.diagnostics.iter().collect::<Vec<_>>()
    );
    for _ in 0..60 {
        sim.step();
    }
    let x = sim.scene.states[0].as_ref().unwrap().vec(VecId::POSITION);
    let n = x.len();
    [x[n - 3], x[n - 2], x[n - 1]]
}

#[test]
fn hyperelastic_laws_agree_with_linear_fem_at_small_strain() {
    let lin = tip_after("");
    let deflection = 1.0 - lin[1];
    assert!(deflection > 1e-3, "the beam bends: {lin:?}");
    for m in ["StVenantKirchhoff", "NeoHookean"] {
        let t = tip_after(m);
        // same deflection to 1 % (different tetrahedra: the mapping's swapped split)
        assert!(
            ((1.0 - t[1]) - deflection).abs() < 0.01 * deflection,
            "{m}: {t:?} vs linear {lin:?}"
        );
    }
}

/// A tetrahedron given inverted (its fourth point through the opposite face, the rest shape
/// upright): the step reports the inversion once, with the component and the step's number.
#[test]
fn an_inverted_element_is_reported_with_its_component_and_step() {
    let xml = r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <EulerImplicitSolver/><CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-12"/>
  <MechanicalObject position="0 0 0 1 0 0 0 1 0 0 0 -1" rest_position="0 0 0 1 0 0 0 1 0 0 0 1"/>
  <MeshTopology tetrahedra="0 1 2 3"/>
  <UniformMass totalMass="1"/>
  <TetrahedronHyperelasticityFEMForceField name="hyper" materialName="StVenantKirchhoff" ParameterSet="100 200"/>
</Node>"#;
    let mut sim = load_scene_str(
        xml,
        "inverted.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    let before = sim.diagnostics.len();
    sim.step();
    sim.step();
    let new: Vec<String> = sim
        .diagnostics
        .iter()
        .skip(before)
        .map(|d| d.to_string())
        .collect();
    assert_eq!(new.len(), 1, "reported once: {new:?}");
    assert!(
        new[0].contains("step 1: 1 element(s) inverted") && new[0].contains("/root/hyper"),
        "{new:?}"
    );
}
