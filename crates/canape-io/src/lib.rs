//! Input/output: the tolerant SOFA XML reader, scene descriptions with includes and macros, the
//! scene builder (registry-driven, with diagnostics), file lookup, mesh loaders (Gmsh: `gmsh`, OBJ,
//! VTK: `vtk_read`), SparseGridTopology (`sparse_grid`) and SparseGridRamificationTopology
//! (`sparse_grid_ramification`), SOFA's WriteState format and its
//! regression metric, its topology regression (`topo_regress`), VTK output (.vtu files and
//! .pvd series), the WriteState and ReadState components (`write_state`, `read_state`) and SOFA's exporter components
//! VTKExporter, MeshExporter and Monitor (`exporters`). The readers' and writers' errors are the
//! typed enums of `error`.

pub mod build;
pub mod desc;
pub mod error;
pub mod exporters;
pub mod files;
pub mod gmsh;
pub mod loaders;
pub mod read_state;
pub mod register;
pub mod regress;
pub mod sparse_grid;
pub mod sparse_grid_ramification;
pub mod state_io;
#[cfg(test)]
pub(crate) mod test_util;
pub mod topo_regress;
pub mod vtk;
pub mod vtk_read;
pub mod write_state;
pub mod xml;

#[cfg(test)]
mod error_texts;
