//! Nonlinear mappings (Sofa/Component/Mapping/NonLinear): distances, areas, squares.

pub mod area;
pub mod distance;
pub mod square;
