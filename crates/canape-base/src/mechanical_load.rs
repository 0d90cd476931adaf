//! Mechanical loads (Sofa/Component/MechanicalLoad): constant, plane, pressure and linear forces
//! (`loads`), the penalty obstacles of one state SphereForceField, EllipsoidForceField and
//! ConicalForceField (`obstacles`) and InteractionEllipsoidForceField (`ellipsoid`).

pub mod ellipsoid;
pub mod loads;
pub mod obstacles;
pub mod tait;
