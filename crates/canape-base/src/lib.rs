//! SOFA's components outside finite elements and solvers, one folder per SOFA area
//! (Sofa/Component/…): masses, projective constraints, mappings, mechanical loads, springs,
//! engines, topologies and topological mappings, animation loops, visual models, the viewer's
//! mouse spring, and the components Canapé accepts without simulating yet (some collision models, GUI
//! settings…).
//! `canape components` (docs/components.md) gives each class's file.

pub mod animation_loop;
pub mod constraint;
pub mod engine;
pub mod gui;
pub mod mapping;
pub mod mass;
pub mod mechanical_load;
pub mod passive;
pub mod register;
pub mod solid_mechanics;
pub mod topology;
pub mod visual;

#[cfg(test)]
mod error_texts;
#[cfg(test)]
mod test_support;

/// Data every SOFA component has (Base/BaseObject), declared on each table.
pub use canape_core::data::base_fields as base_data;
