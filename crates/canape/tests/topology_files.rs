//! Topology containers read their mesh from a file (`filename`, alias `fileTopology`), as SOFA's
//! MeshTopology and *SetTopologyContainer do: points and elements, resolved like any scene file.

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions};

#[test]
fn containers_read_their_mesh_file() {
    let dir = std::env::temp_dir().join(format!("canape-topofile-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("mesh")).unwrap();
    std::fs::write(
        dir.join("mesh/quad.obj"),
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\nf 1 3 4\n",
    )
    .unwrap();
    let scene = r#"<Node name="root" dt="0.01"><DefaultAnimationLoop/>
  <Node name="a">
    <MeshTopology name="topo" filename="mesh/quad.obj"/>
    <MechanicalObject name="dofs"/>
  </Node>
  <Node name="b">
    <TriangleSetTopologyContainer name="topo" fileTopology="mesh/quad.obj"/>
    <MechanicalObject name="dofs"/>
  </Node>
</Node>"#;
    let sim = load_scene_str(scene, "files.scn", &dir, &LoadOptions::default()).unwrap();
    assert!(sim.diagnostics.is_empty(), "{:?}", sim.diagnostics);
    for id in sim.scene.component_ids() {
        let info = sim.scene.info(id);
        if info.name == "dofs" {
            let x = sim.scene.state(id).unwrap().vec(VecId::POSITION);
            assert_eq!(
                x,
                [0., 0., 0., 1., 0., 0., 1., 1., 0., 0., 1., 0.],
                "{}",
                info.class
            );
        }
        if info.name == "topo" {
            let t = sim.scene.topology(id).unwrap().mesh();
            assert_eq!(t.triangles, vec![[0, 1, 2], [0, 2, 3]]);
        }
    }
    // a missing file is an error naming it; given elements win over the file
    let bad = scene.replace(
        "mesh/quad.obj\"/>\n    <MechanicalObject name=\"dofs\"/>\n  </Node>\n  <Node name=\"b\">",
        "mesh/none.obj\"/>\n    <MechanicalObject name=\"dofs\"/>\n  </Node>\n  <Node name=\"b\">",
    );
    let sim = load_scene_str(&bad, "files.scn", &dir, &LoadOptions::default());
    let diags = match sim {
        Ok(s) => s.diagnostics,
        Err(e) => e.diagnostics,
    };
    assert!(
        diags.iter().any(|d| d.to_string().contains("none.obj")),
        "{diags:?}"
    );
}
