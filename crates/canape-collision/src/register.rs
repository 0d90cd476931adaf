//! This crate's components, registered under SOFA's class names: the facade's registry calls
//! [`register`], and so can an application's own registry.

use crate::model::GeometryModel;
use crate::pipeline::Pipeline;
use crate::settings::Setting;
use canape_core::collision::CollisionShape;
use canape_core::registry::{Registry, TemplateError};
use canape_core::scene::AnyComponent;

/// Register this crate's components.
pub fn register(r: &mut Registry) {
    r.register(
        "CollisionPipeline",
        "collision pipeline: broad phase, narrow phase, contact response each step",
        |_, _| Ok(AnyComponent::Passive(Box::new(Pipeline::new()))),
    );
    r.register(
        "SubCollisionPipeline",
        "collision pipeline over the models it lists, run by a CompositeCollisionPipeline",
        |_, _| Ok(AnyComponent::Passive(Box::new(Pipeline::sub()))),
    );
    r.register(
        "CompositeCollisionPipeline",
        "runs several SubCollisionPipelines one after the other",
        |_, _| {
            Ok(AnyComponent::Passive(Box::new(
                crate::pipeline::CompositePipeline::new(),
            )))
        },
    );
    let models: [(&'static str, &'static str); 5] = [
        (
            "PointCollisionModel",
            "collision model: the points of its state",
        ),
        (
            "LineCollisionModel",
            "collision model: the edges of its topology",
        ),
        (
            "TriangleCollisionModel",
            "collision model: the triangles of its topology",
        ),
        (
            "SphereCollisionModel",
            "collision model: a sphere at each point of its state",
        ),
        (
            "OBBCollisionModel",
            "collision model: an oriented box at each rigid frame of its state (CollisionOBBCapsule)",
        ),
    ];
    for (class, desc) in models {
        r.register(class, desc, |class, t| {
            let shape = match class {
                "PointCollisionModel" => CollisionShape::Point,
                "LineCollisionModel" => CollisionShape::Line,
                "TriangleCollisionModel" => CollisionShape::Triangle,
                "OBBCollisionModel" => CollisionShape::Obb,
                _ => CollisionShape::Sphere,
            };
            // SOFA's templates: Vec3d for points, lines and triangles; Vec3d or Rigid3d for
            // spheres; Rigid3d for boxes
            let t = t.trim();
            let ok = match shape {
                CollisionShape::Obb => t.is_empty() || t.starts_with("Rigid3"),
                CollisionShape::Sphere => {
                    t.is_empty() || t.starts_with("Vec3") || t.starts_with("Rigid3")
                }
                _ => t.is_empty() || t.starts_with("Vec3"),
            };
            if !ok {
                let allowed = match shape {
                    CollisionShape::Sphere => "Vec3d or Rigid3d",
                    CollisionShape::Obb => "Rigid3d",
                    _ => "Vec3d",
                };
                return Err(TemplateError::ModelTemplate {
                    class: class.to_string(),
                    template: t.to_string(),
                    allowed,
                });
            }
            Ok(AnyComponent::Passive(Box::new(GeometryModel::new(shape))))
        });
    }
    r.register(
        "TriangleOctreeCollisionModel",
        "collision model: the triangles of its topology, traced by rays (RayTraceNarrowPhase)",
        |_, t| {
            let t = t.trim();
            if !(t.is_empty() || t.starts_with("Vec3")) {
                return Err(TemplateError::ModelTemplate {
                    class: "TriangleOctreeCollisionModel".to_string(),
                    template: t.to_string(),
                    allowed: "Vec3d",
                });
            }
            Ok(AnyComponent::Passive(Box::new(GeometryModel::octree())))
        },
    );
    let settings: [(&'static str, &'static str); 12] = [
        ("LocalMinDistance", "intersection method: closest points within the alarm distance, filtered by the surfaces' normal cones"),
        ("BruteForceBroadPhase", "broad phase: pairs of models whose bounding boxes overlap"),
        ("RayTraceNarrowPhase", "narrow phase between TriangleOctreeCollisionModels: vertices found inside the other surface by rays along their normals"),
        ("BVHNarrowPhase", "narrow phase: pairs of elements whose bounding boxes overlap, then the intersection tests"),
        ("ParallelBruteForceBroadPhase", "the MultiThreading plugin's broad phase: BruteForceBroadPhase (the narrow phase uses the simulation's threads, --threads)"),
        ("ParallelBVHNarrowPhase", "the MultiThreading plugin's narrow phase: BVHNarrowPhase on the simulation's threads (--threads), contacts in the same order"),
        ("MinProximityIntersection", "intersection method: closest points within the alarm distance"),
        ("NewProximityIntersection", "intersection method: closest points within the alarm distance (triangle pairs by vertices and edges)"),
        ("DiscreteIntersection", "intersection method: overlapping spheres"),
        ("CCDTightInclusionIntersection", "intersection method: continuous detection of triangle–point and line–line contacts over the free motion (Tight Inclusion's root finder)"),
        ("CollisionResponse", "contact manager: creates the contact responses (PenalityContactForceField, StickContactForceField, FrictionContactConstraint, AugmentedLagrangianResponseConstraint)"),
        ("RuleBasedContactManager", "contact manager choosing each pair's response by rules (model names, group numbers, *), else its default response"),
    ];
    for (class, desc) in settings {
        r.register(class, desc, |class, _| {
            Ok(AnyComponent::Passive(Box::new(Setting::new(class))))
        });
    }
}
