//! Simulation layer: initialises a [`canape_core::scene::Scene`] (Data links, component `init` in
//! document order), groups states under their ODE solvers, implements the mechanical operations
//! solvers use ([`canape_core::component::MechanicalOps`]) and runs the DefaultAnimationLoop step.

pub mod group;
pub mod init;
pub mod mapped;
pub mod simulation;

pub use simulation::{is_editable_role, PhaseTimes, Simulation, Snapshot};

#[cfg(test)]
mod error_texts;
