//! Constraints (Sofa/Component/Constraint): projective ones, and Lagrangian ones solved by
//! FreeMotionAnimationLoop.

pub mod lagrangian;
pub mod projective;
