//! Projective constraints (Sofa/Component/Constraint/Projective): fixed points and directions
//! (`fixed`), projections onto points, lines, planes and prescribed motions (`projections`), and
//! movements from initial to final positions over a time interval (`movement`).

pub mod curves;
pub mod fixed;
pub mod movement;
pub mod projections;
