//! Nonlinear mappings (Sofa/Component/Mapping/NonLinear): RigidMapping, distances (between points,
//! and from fixed targets in `distance_target`), areas, tetrahedron volumes (`volume`), squares.

pub mod area;
pub mod distance;
pub mod distance_target;
pub mod rigid;
pub mod square;
pub mod volume;
