//! Solid mechanics outside finite elements (Sofa/Component/SolidMechanics/Spring): rest-shape
//! springs and velocity damping (`spring`).

pub mod spring;
