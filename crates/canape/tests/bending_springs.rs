//! TriangleBendingSprings: one spring across every edge two triangles share (quads split as SOFA
//! does), between the two opposite points.

use canape::{load_scene_str, LoadOptions};

fn springs(topology: &str) -> Vec<[u32; 2]> {
    let scene = format!(
        r#"<Node name="root" dt="0.01"><DefaultAnimationLoop/>
  <EulerImplicitSolver/><CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>
  <MeshTopology position="0 0 0  1 0 0  0 1 0  1 1 0" {topology}/>
  <MechanicalObject/><UniformMass vertexMass="1"/>
  <TriangleBendingSprings stiffness="50" damping="1"/>
</Node>"#
    );
    let sim = load_scene_str(
        &scene,
        "b.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(!sim.diagnostics.has_errors(), "{:?}", sim.diagnostics);
    let ff = sim
        .scene
        .force_fields
        .iter()
        .flatten()
        .find(|f| f.class_name() == "TriangleBendingSprings")
        .unwrap();
    ff.draw_edges()
}

#[test]
fn a_spring_joins_the_points_opposite_each_shared_edge() {
    // triangles 0 1 2 and 2 1 3 share 1-2: the spring joins 3 (the second's) and 0
    assert_eq!(springs(r#"triangles="0 1 2  2 1 3""#), vec![[3, 0]]);
    // a quad 0 1 3 2 is the triangles 0 1 3 and 0 3 2, sharing 0-3: the spring joins 2 and 1
    assert_eq!(springs(r#"quads="0 1 3 2""#), vec![[2, 1]]);
    // no shared edge, no spring
    assert!(springs(r#"triangles="0 1 2""#).is_empty());
}
