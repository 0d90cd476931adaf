//! Projective constraints (Sofa/Component/Constraint/Projective): fixed points and directions
//! (`fixed`), and projections onto points, lines, planes and prescribed motions (`projections`).

pub mod fixed;
pub mod projections;
