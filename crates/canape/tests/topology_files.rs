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

#[test]
fn add_data_repository_adds_a_folder_for_the_components_after_it() {
    let dir = std::env::temp_dir().join(format!("canape-addrepo-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("assets/tri.obj"),
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
    )
    .unwrap();
    let scene = r#"<Node name="root" dt="0.01"><DefaultAnimationLoop/>
  <MeshTopology name="before" filename="tri.obj"/>
  <AddDataRepository path="assets"/>
  <MeshTopology name="after" filename="tri.obj"/>
</Node>"#;
    let diags = match load_scene_str(scene, "repo.scn", &dir, &LoadOptions::default()) {
        Ok(s) => {
            let after = s
                .scene
                .component_ids()
                .find(|c| s.scene.info(*c).name == "after")
                .unwrap();
            assert_eq!(s.scene.topology(after).unwrap().mesh().triangles.len(), 1);
            s.diagnostics
        }
        Err(e) => e.diagnostics,
    };
    // the first container, written before the folder was added, does not find it
    let errors: Vec<String> = diags
        .iter()
        .filter(|d| d.severity == canape::core::diag::Severity::Error)
        .map(|d| d.to_string())
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("before") && errors[0].contains("tri.obj"),
        "{errors:?}"
    );
}
