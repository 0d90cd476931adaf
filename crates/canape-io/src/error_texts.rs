//! The typed errors added outside `error` read as the Strings they replaced (diagnostics and
//! edits report the text).

use crate::exporters::UnknownFormat;

#[test]
fn unknown_format_reads_as_before() {
    let e = UnknownFormat {
        format: "stl".into(),
    };
    assert_eq!(
        e.to_string(),
        "format 'stl' is not one of ALL, vtkxml, vtk, netgen, tetgen, gmsh, obj"
    );
}
