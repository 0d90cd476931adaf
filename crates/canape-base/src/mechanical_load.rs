//! Mechanical loads (Sofa/Component/MechanicalLoad): constant, plane, pressure and linear forces
//! (`loads`) and InteractionEllipsoidForceField (`ellipsoid`).

pub mod ellipsoid;
pub mod loads;
