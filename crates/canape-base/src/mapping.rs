//! Mechanical mappings (Sofa/Component/Mapping): BarycentricMapping (`barycentric`), Identity,
//! Subset and CenterOfMass mappings with what all mappings share (`linear`), the frame-blending
//! SkinningMapping and BeamLinearMapping (`skinning`), and the nonlinear ones (`nonlinear`:
//! RigidMapping, distances, areas, squares).

pub mod barycentric;
pub mod linear;
pub mod nonlinear;
pub mod skinning;
pub mod tubular;
