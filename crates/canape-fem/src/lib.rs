//! Finite-element force fields (SOFA's SolidMechanics/FEM/Elastic area):
//! TetrahedronFEMForceField and TetrahedralCorotationalFEMForceField (methods small, large,
//! polar; svd for the former), HexahedronFEMForceField (large, polar, small),
//! BeamFEMForceField (Rigid3 beams), TriangularFEMForceField and TriangularFEMForceFieldOptim
//! (membrane triangles), QuadBendingFEMForceField, FastTriangularBendingSprings,
//! TriangularBendingSprings and TetrahedronHyperelasticityFEMForceField (SOFA's materials),
//! and SOFA's edge-based membranes: TriangularBiquadraticSpringsForceField (`biquadratic`),
//! TriangularQuadraticSpringsForceField (`quadratic`) and TriangularTensorMassForceField
//! (`tensor_mass`), over the shared edge set of `edge_triangles`; SOFA's edge-based tetrahedra:
//! StandardTetrahedralFEMForceField (`standard_tetra`, SOFA's hyperelastic materials) and
//! TetrahedralTensorMassForceField (`tetra_tensor_mass`), over `edge_tetrahedra`.
//!
//! Element loops run once per component call; per-element data (rest frames, strain-displacement
//! coefficients, rotations from the last `add_force`) live in flat vectors indexed by element.

pub mod beam;
pub mod bending;
pub mod biquadratic;
pub mod common;
pub mod edge_tetrahedra;
pub mod edge_triangles;
pub mod element;
pub mod fast_tetra;
pub mod hexa;
pub mod hyperelastic;
pub mod joint;
pub mod pairs;
pub mod quad;
pub mod quadratic;
pub mod register;
pub mod spring;
pub mod standard_tetra;
pub mod tensor_mass;
pub mod tetra;
pub mod tetra_tensor_mass;
pub mod triangle;

pub use beam::BeamFemForceField;
pub use bending::{FastTriangularBendingSprings, TriangularBendingSprings};
pub use biquadratic::TriangularBiquadraticSpringsForceField;
pub use element::{ElementFemForceField, FemMass};
pub use fast_tetra::FastTetrahedralCorotationalForceField;
pub use hexa::HexahedronFemForceField;
pub use hyperelastic::TetrahedronHyperelasticityFemForceField;
pub use joint::JointSpringForceField;
pub use quad::QuadBendingFemForceField;
pub use quadratic::TriangularQuadraticSpringsForceField;
pub use spring::SpringForceField;
pub use standard_tetra::StandardTetrahedralFemForceField;
pub use tensor_mass::TriangularTensorMassForceField;
pub use tetra::TetrahedronFemForceField;
pub use tetra_tensor_mass::TetrahedralTensorMassForceField;
pub use triangle::{TriangularFemForceField, TriangularFemForceFieldOptim};

#[cfg(test)]
mod error_texts;
#[cfg(test)]
mod fd_check;
#[cfg(test)]
mod fd_tests;
