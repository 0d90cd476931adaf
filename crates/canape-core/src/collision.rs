//! What collision components share with the rest of the framework: the geometry a collision
//! model exposes to the pipeline ([`CollisionModel`]), the contacts a detection produces
//! ([`Contact`]), the force fields that respond to them ([`ContactResponse`]) and the pipeline
//! the animation loop runs in its collision stage ([`CollisionPipeline`]).
//!
//! The algorithms (broad and narrow phase, intersection tests, penalty response) live in the
//! `canape-collision` crate; the core only fixes the interfaces so that the simulation can run
//! a pipeline without knowing how it works.

use crate::scene::{ComponentId, Scene, Slot};
use canape_types::Vec3;

/// The element kind of a collision model (SOFA's Point/Line/Triangle/SphereCollisionModel,
/// and the CollisionOBBCapsule plugin's OBBCollisionModel: one oriented box per Rigid3 DOF).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CollisionShape {
    Point,
    Line,
    Triangle,
    Sphere,
    Obb,
}

/// The Data every SOFA collision model has (core/CollisionModel.h), read at init.
#[derive(Clone, Debug, PartialEq)]
pub struct CollisionParams {
    /// Whether the model takes part in detection at all.
    pub active: bool,
    /// Whether its elements move (a static model's bounding boxes are computed once).
    pub moving: bool,
    /// Whether its state receives contact forces.
    pub simulated: bool,
    /// Whether its elements are tested against each other.
    pub self_collision: bool,
    /// Models sharing a group number do not collide with each other.
    pub group: Vec<i64>,
    /// Distance added to the intersection method's contact and alarm distances.
    pub proximity: f64,
    /// Penalty stiffness factor (contacts multiply both models').
    pub contact_stiffness: f64,
    pub contact_friction: f64,
}

impl Default for CollisionParams {
    fn default() -> Self {
        CollisionParams {
            active: true,
            moving: true,
            simulated: true,
            self_collision: false,
            group: Vec::new(),
            proximity: 0.0,
            contact_stiffness: 10.0,
            contact_friction: 0.0,
        }
    }
}

/// A collision model as the pipeline sees it: its element kind, its state (the positions
/// the elements are made of) and its elements as index lists into that state.
pub trait CollisionModel {
    fn shape(&self) -> CollisionShape;
    /// The mechanical state whose positions the elements use (known after init).
    fn state(&self) -> Option<ComponentId>;
    fn params(&self) -> &CollisionParams;
    /// Number of elements (edges, triangles; for points and spheres the state's size when the
    /// model was initialised — a pipeline takes the state's current size for those).
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Edges of a line model.
    fn edges(&self) -> &[[u32; 2]] {
        &[]
    }
    /// Triangles of a triangle model.
    fn triangles(&self) -> &[[u32; 3]] {
        &[]
    }
    /// Feature ownership flags of each triangle (which vertices and edges it reports).
    fn triangle_flags(&self) -> &[u8] {
        &[]
    }
    /// The implementing type, for a pipeline that knows it (and reads more than this trait
    /// gives).
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
    /// Radius of sphere `i` of a sphere model.
    fn radius(&self, _i: usize) -> f64 {
        0.0
    }
    /// Half-sizes of box `i` of a box model along its frame's axes.
    fn extent(&self, _i: usize) -> Vec3 {
        Vec3::zeros()
    }
}

/// One end of a contact: a point of a model's state written as a weighted sum of up to three
/// of its points (a vertex, a point on an edge, a point in a triangle), or, on a rigid state
/// (Rigid3), a point fixed to one body at `offset` from its centre.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    pub index: [u32; 3],
    pub weight: [f64; 3],
    /// How many of `index`/`weight` are used (1 to 3).
    pub count: u8,
    /// For a point of a rigid body (`count` 1): its offset from the body's centre in the
    /// body's own frame (zero: the centre itself, as for a sphere on a Rigid3 state). The
    /// world offset is r = R(q)·offset, and the point moves as c + r: a force f on it acts on
    /// the body through J = [I, −[r]×], a force f and a torque r × f.
    pub offset: Vec3,
}

impl ContactPoint {
    pub fn vertex(i: u32) -> Self {
        ContactPoint {
            index: [i, 0, 0],
            weight: [1.0, 0.0, 0.0],
            count: 1,
            offset: Vec3::zeros(),
        }
    }

    /// A point fixed to rigid body `i` at `offset` (in the body's frame) from its centre.
    pub fn rigid(i: u32, offset: Vec3) -> Self {
        ContactPoint {
            offset,
            ..ContactPoint::vertex(i)
        }
    }

    /// Whether the point sits off its rigid body's centre (it then has a lever arm).
    pub fn has_offset(&self) -> bool {
        self.offset != Vec3::zeros()
    }

    /// The world offset R(q)·offset of the point on a rigid body whose coordinates
    /// (x y z qx qy qz qw) are `coord`; zero when it has none or `coord` is not a rigid one.
    pub fn offset_world(&self, coord: &[f64]) -> Vec3 {
        if !self.has_offset() || coord.len() < 7 {
            return Vec3::zeros();
        }
        rotate([coord[3], coord[4], coord[5], coord[6]], self.offset)
    }
    pub fn iter(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        (0..self.count as usize).map(|k| (self.index[k] as usize, self.weight[k]))
    }
}

/// `v` rotated by the unit quaternion `q` = (x, y, z, w) (SOFA's Rigid3 orientation order).
pub fn rotate(q: [f64; 4], v: Vec3) -> Vec3 {
    let u = Vec3::new(q[0], q[1], q[2]);
    let w = q[3];
    let t = u.cross(&v) * 2.0;
    v + t * w + u.cross(&t)
}

/// `v` rotated by the inverse of the unit quaternion `q` = (x, y, z, w).
pub fn rotate_back(q: [f64; 4], v: Vec3) -> Vec3 {
    rotate([-q[0], -q[1], -q[2], q[3]], v)
}

/// A contact between two models' states, oriented from the first to the second: `normal`
/// points from the first model's point towards the second's, and the contact pushes them
/// apart while their distance along the normal is below `distance`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    pub first: ContactPoint,
    pub second: ContactPoint,
    pub normal: Vec3,
    /// Rest distance of the contact (contact distance, proximities and radii).
    pub distance: f64,
    pub stiffness: f64,
    /// Element indices in each model (for display and ordering).
    pub elements: [u32; 2],
    /// The second point minus the first when the contact was detected (a sticking response's
    /// rest vector).
    pub gap: Vec3,
}

/// A force field that responds to contacts between two states (SOFA's contact response
/// force fields, such as PenalityContactForceField): the pipeline hands it the contacts of its
/// pair of models every step.
pub trait ContactResponse {
    fn set_contacts(&mut self, contacts: &[Contact]);
    fn contacts(&self) -> &[Contact];
    /// The pair's place among the responses (SOFA's contact map order: the ids its two models
    /// got when first seen in a pair with contacts), refreshed by the pipeline each step it
    /// has contacts. Responses that are Lagrangian constraints build their rows in this order.
    fn set_order_key(&mut self, _key: (u32, u32)) {}
}

/// What a collision stage changed in the scene graph: response force fields it added (to be
/// initialised and joined to their solver groups) and removed.
#[derive(Clone, Debug, Default)]
pub struct CollisionChanges {
    pub added: Vec<ComponentId>,
    pub removed: Vec<Slot>,
    /// Problems found while colliding (reported once by the simulation).
    pub messages: Vec<String>,
}

/// The collision pipeline (SOFA's CollisionPipeline): run by the animation loop's collision
/// stage, it detects contacts among the scene's collision models from their states' current
/// positions and creates, updates and removes the response force fields.
pub trait CollisionPipeline {
    fn collide(&mut self, scene: &mut Scene) -> CollisionChanges;
    /// Contacts found by the last detection, for display: (first model, second model, points).
    fn contact_count(&self) -> usize;
}
