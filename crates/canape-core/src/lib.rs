//! Canapé core: the scene graph (arenas with typed handles), component role traits, reflective
//! Data fields and links, the component registry and diagnostics.
//!
//! This crate knows nothing of XML, files, Python or viewers: loaders build a [`scene::Scene`]
//! through the [`registry::Registry`] and report problems as [`diag::Diagnostic`]s.

pub mod collision;
pub mod component;
pub mod data;
pub mod diag;
pub mod lagrangian;
pub mod mesh;
pub mod registry;
pub mod scene;
pub mod state;

#[cfg(test)]
mod error_texts;

/// Sparse assembly and CSR matrices (the `canape-sparse` crate).
pub use canape_sparse as matrix;
pub use canape_types as types;
