//! Collision detection and penalty contact, as SOFA's collision pipeline does it: collision
//! models (`model`), the pipeline's configuration components (`settings`), the bounding-volume
//! hierarchy of element boxes (`bvh`), the proximity intersection tests (`intersect`), the pipeline itself (`pipeline`: broad phase, narrow phase,
//! contact responses), the choice of a pair's response (`response`: response names, model
//! responses, RuleBasedContactManager's rules), the penalty response force field (`penalty`), the sticking one (`stick`) and the Lagrangian contact
//! constraint (`lagrangian`).
//!
//! The simulation runs the pipeline in the animation loop's collision stage through the core's
//! `CollisionPipeline` interface; penalty responses are ordinary interaction force fields, so
//! the solvers see contact forces and stiffness like any other, and Lagrangian ones are
//! constraints FreeMotionAnimationLoop's constraint stage solves.

pub mod bvh;
pub mod intersect;
pub mod lagrangian;
pub mod model;
pub mod penalty;
pub mod pipeline;
pub mod register;
pub mod response;
pub mod settings;
pub mod stick;

pub use model::GeometryModel;
pub use penalty::PenaltyContactForceField;
pub use pipeline::Pipeline;
