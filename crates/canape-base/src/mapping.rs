//! Mechanical mappings (Sofa/Component/Mapping): BarycentricMapping (`barycentric`), the linear
//! ones and RigidMapping (`linear`), and the nonlinear ones (`nonlinear`).

pub mod barycentric;
pub mod linear;
pub mod nonlinear;
