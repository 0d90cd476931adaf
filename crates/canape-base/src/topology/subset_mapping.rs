//! (placeholder: filled in next)

use canape_core::registry::Registry;

/// Register this module's classes.
pub(crate) fn register(_r: &mut Registry) {}
