//! Nonlinear mappings (Sofa/Component/Mapping/NonLinear): RigidMapping, distances, areas, squares.

pub mod area;
pub mod distance;
pub mod rigid;
pub mod square;
