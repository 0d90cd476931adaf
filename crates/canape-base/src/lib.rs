//! Masses, projective constraints, engines, topologies, topological mappings, and the components
//! Canapé accepts without simulating yet (animation/visual loops, visual models, collision).

pub mod constraint;
pub mod engine;
pub mod load;
pub mod mapping;
pub mod mass;
pub mod passive;
pub mod topology;

/// Data every SOFA component has (Base/BaseObject), declared on each table.
pub fn base_data(t: canape_core::data::DataTable) -> canape_core::data::DataTable {
    use canape_core::data::DataKind;
    t.with(
        "printLog",
        DataKind::Bool,
        "0",
        "if true, emits extra messages at runtime.",
    )
    .with(
        "tags",
        DataKind::Words,
        "",
        "list of the subsets the object belongs to",
    )
    .with("bbox", DataKind::Reals(0), "", "this object bounding box")
    .with(
        "componentState",
        DataKind::Str,
        "Undefined",
        "The state of the component among (Dirty, Valid, Undefined, Loading, Invalid).",
    )
    .with(
        "listening",
        DataKind::Bool,
        "0",
        "if true, handle the events, otherwise ignore the events",
    )
}
