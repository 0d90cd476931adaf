//! The typed errors read as the Strings they replaced (edits report the text).

use crate::init::ReinitError;

#[test]
fn reinit_error_reads_as_before() {
    let e = ReinitError::NotWhileRunning {
        component: "MechanicalObject 'dofs'".into(),
        class: "MechanicalObject",
    };
    assert_eq!(
        e.to_string(),
        "MechanicalObject 'dofs' (MechanicalObject) cannot be re-initialised while the simulation runs"
    );
}
