//! Masses, projective constraints, engines, topologies, topological mappings, and the components
//! Canapé accepts without simulating yet (animation/visual loops, visual models, collision).

pub mod animation;
pub mod area;
pub mod constraint;
pub mod distance;
pub mod ellipsoid;
pub mod engine;
pub mod interaction;
pub mod load;
pub mod mapping;
pub mod mappings;
pub mod mass;
pub mod passive;
pub mod projection;
pub mod register;
pub mod springs;
pub mod square;
pub mod topology;

/// Data every SOFA component has (Base/BaseObject), declared on each table.
pub use canape_core::data::base_fields as base_data;
