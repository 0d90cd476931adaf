//! Why a change to the scene graph ([`SceneError`]) or an edit of a running simulation
//! ([`EditError`]) was refused: typed errors with the component paths and suggestions.

use super::{ComponentId, NodeId};
use crate::component::Role;

/// Why a change to the scene graph was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SceneError {
    #[error("component {0} no longer exists (it was removed; the handle is stale)")]
    StaleComponent(ComponentId),
    #[error("node #{} no longer exists (it was removed; the handle is stale)", .0.index)]
    StaleNode(NodeId),
    #[error("the root node cannot be removed")]
    RemoveRoot,
    #[error("{target} is used by {user} ({how}): remove or change that first")]
    InUse {
        target: String,
        user: String,
        how: String,
    },
    #[error("the root node cannot be moved")]
    MoveRoot,
    #[error("node '{node}' cannot be moved under itself or its own subtree")]
    MoveUnderItself { node: String },
    #[error("after the move, {how} of {user} would resolve to another component (components keep what they resolved at init): change that link or move the node elsewhere")]
    WouldChange { user: String, how: String },
}

/// Why an edit of a running simulation (a Data, the gravity, the time step, the threads) was
/// refused. The simulation is unchanged when one is returned.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EditError {
    #[error(transparent)]
    Scene(#[from] SceneError),
    #[error("Data of {class} ({role:?}) cannot be edited while the simulation runs")]
    NotEditable { class: &'static str, role: Role },
    #[error("{component} is busy (it is running)")]
    Busy { component: String },
    #[error("{class} has no Data '{name}'{}", hint(.suggestions))]
    NoData {
        class: &'static str,
        name: String,
        suggestions: Vec<&'static str>,
    },
    #[error("'{0}' is an output and cannot be set")]
    Output(String),
    #[error("{name}: {reason}")]
    BadValue {
        name: String,
        #[source]
        reason: crate::data::DataError,
    },
    /// The component refused the new value when re-initialised; the previous one is back.
    #[error("{component}: {}", .reasons.join("; "))]
    Refused {
        component: String,
        reasons: Vec<String>,
    },
    #[error("{what} must be {expected}")]
    Invalid {
        what: &'static str,
        expected: &'static str,
    },
    #[error("cannot start {threads} worker threads: {reason}")]
    Threads { threads: usize, reason: String },
}

fn hint(s: &[&str]) -> String {
    crate::diag::did_you_mean(s).map_or(String::new(), |h| format!(" ({h})"))
}

/// Controllers return text errors; a scene error converts to its message.
impl From<SceneError> for String {
    fn from(e: SceneError) -> String {
        e.to_string()
    }
}

/// Controllers return text errors; an edit's error converts to its message.
impl From<EditError> for String {
    fn from(e: EditError) -> String {
        e.to_string()
    }
}
