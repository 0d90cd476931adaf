//! The typed errors read as the Strings they replaced (the page shows the text).

use crate::session::NodeEditError;
use canape_core::scene::EditError;

#[test]
fn node_edit_errors_read_as_before() {
    let cases = [
        (
            NodeEditError::GravityNotThree,
            "gravity needs three numbers".to_string(),
        ),
        (
            NodeEditError::DtNotNumber,
            "dt must be a number".to_string(),
        ),
        (
            NodeEditError::NotEditable {
                data: "name".into(),
            },
            "node Data 'name' cannot be edited".to_string(),
        ),
    ];
    for (e, text) in cases {
        assert_eq!(e.to_string(), text);
    }
    // the simulation's refusal, shown as it words it
    let refused = EditError::Invalid {
        what: "dt",
        expected: "a positive finite number",
    };
    assert_eq!(
        NodeEditError::from(refused.clone()).to_string(),
        refused.to_string()
    );
}
