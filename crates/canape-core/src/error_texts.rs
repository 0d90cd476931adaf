//! The typed errors read as the Strings they replaced (diagnostics and tests compare the text).

use crate::scene::{DataLinkError, MeshFileError, Scene};

fn texts(cases: &[(&dyn std::error::Error, &str)]) {
    for (e, text) in cases {
        assert_eq!(e.to_string(), *text);
    }
}

#[test]
fn data_link_errors_read_as_before() {
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    scene.add_node("beam", Some(root));
    let read = |link: &str| scene.read_link(root, None, link).unwrap_err();
    assert_eq!(
        read("@dofs"),
        DataLinkError::NotDataLink {
            link: "@dofs".into()
        }
    );
    texts(&[
        (
            &read("@dofs"),
            "'@dofs' does not name a Data (expected @path.dataName)",
        ),
        (
            &read("@nothing.position"),
            "link '@nothing.position': no object or node at 'nothing'",
        ),
        (
            &read("@beam.mass"),
            "link '@beam.mass': node 'beam' has no Data 'mass'",
        ),
        (
            &DataLinkError::Circular {
                link: "@a.x".into(),
            },
            "link '@a.x': the target is being initialised (circular link)",
        ),
        (
            &DataLinkError::NoData {
                link: "@dofs.posit".into(),
                component: "MechanicalObject 'dofs'".into(),
                data: "posit".into(),
            },
            "link '@dofs.posit': MechanicalObject 'dofs' has no Data 'posit'",
        ),
        (
            &DataLinkError::Unreadable {
                link: "@a.x".into(),
                data: "x".into(),
            },
            "link '@a.x': cannot read Data 'x'",
        ),
    ]);
}

#[test]
fn mesh_file_errors_read_as_before() {
    #[derive(Debug, thiserror::Error)]
    #[error("beam.msh: line 3: bad node")]
    struct ReaderError;
    texts(&[
        (
            &MeshFileError::NoReader {
                path: "beam.msh".into(),
            },
            "cannot read 'beam.msh': no mesh reader is installed (the scene builder installs one)",
        ),
        // the reader's own error, shown as is
        (
            &MeshFileError::Read(Box::new(ReaderError)),
            "beam.msh: line 3: bad node",
        ),
    ]);
}
