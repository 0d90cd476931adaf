//! Constraints (Sofa/Component/Constraint): the projective ones so far.

pub mod projective;
