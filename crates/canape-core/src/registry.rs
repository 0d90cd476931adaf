//! The component registry (SOFA's ObjectFactory): class names to constructors, SOFA's renamed
//! and removed component names, and "did you mean" suggestions for unknown names.

use crate::diag::closest;
use crate::scene::AnyComponent;
use std::collections::BTreeMap;

/// Why a template was refused by a component's constructor.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("unknown template '{template}' ('{part}' is not a DOF type: expected Vec1d, Vec2d, Vec3d or Rigid3d)")]
    UnknownPart { template: String, part: String },
    #[error("template '{template}' ({dof}) is not supported by {class} yet; only Vec3d is")]
    NotVec3 {
        template: String,
        dof: &'static str,
        class: String,
    },
    #[error("unknown template '{template}' (expected {expected})")]
    Unknown {
        template: String,
        expected: &'static str,
    },
}

/// Constructors report their refusals as diagnostics' text.
impl From<TemplateError> for String {
    fn from(e: TemplateError) -> String {
        e.to_string()
    }
}

/// Accept a Vec3 template only (or "", the default): "Vec3,Vec3" is SOFA's form with a second
/// template argument (a mass's geometry type, a mapping's output).
pub fn vec3_only(template: &str, class: &str) -> Result<(), TemplateError> {
    use crate::types::DofType;
    let mut parts = template.split(',').map(str::trim);
    let first = parts.next().unwrap_or("");
    if let Some(other) = parts.find(|p| DofType::from_template(p).is_none()) {
        return Err(TemplateError::UnknownPart {
            template: template.to_string(),
            part: other.to_string(),
        });
    }
    match DofType::from_template(first) {
        Some(DofType::Vec3) => Ok(()),
        Some(d) => Err(TemplateError::NotVec3 {
            template: template.to_string(),
            dof: d.name(),
            class: class.to_string(),
        }),
        None => Err(TemplateError::Unknown {
            template: template.to_string(),
            expected: "Vec1d, Vec2d, Vec3d or Rigid3d",
        }),
    }
}

/// Accept any DOF type's template (or "", the default).
pub fn known_template(template: &str) -> Result<(), TemplateError> {
    use crate::types::DofType;
    match DofType::from_template(template.split(',').next().unwrap_or("")) {
        Some(_) => Ok(()),
        None => Err(TemplateError::Unknown {
            template: template.to_string(),
            expected: "Vec1d, Vec2d, Vec3d, Rigid2d or Rigid3d",
        }),
    }
}

/// Creates a component of `class` for a template (`Vec3d`, or "" for the default).
pub type Constructor = fn(class: &'static str, template: &str) -> Result<AnyComponent, String>;

/// One registered class.
#[derive(Clone)]
pub struct Entry {
    pub class: &'static str,
    pub create: Constructor,
    pub description: &'static str,
    /// Accepted and kept, but does nothing to the mechanics yet (collision, visual…).
    pub inert: bool,
}

/// Class registry. Lookups are by exact name; a BTreeMap keeps listings ordered.
#[derive(Clone, Default)]
pub struct Registry {
    entries: BTreeMap<&'static str, Entry>,
}

/// What a lookup found.
pub enum Lookup<'a> {
    Found(&'a Entry),
    /// A renamed component: use the new name (SOFA substitutes silently and warns).
    Renamed {
        new: &'a Entry,
        old: String,
    },
    /// Not creatable, with SOFA's explanation.
    Removed(String),
    Unknown {
        suggestions: Vec<&'static str>,
    },
}

/// SOFA's renamed components (sofa/helper/ComponentChange.cpp, `renamedComponents`).
pub const RENAMED: &[(&str, &str)] = &[
    ("FixedConstraint", "FixedProjectiveConstraint"),
    ("AttachConstraint", "AttachProjectiveConstraint"),
    ("PartialFixedConstraint", "PartialFixedProjectiveConstraint"),
    (
        "LinearMovementConstraint",
        "LinearMovementProjectiveConstraint",
    ),
    (
        "LinearVelocityConstraint",
        "LinearVelocityProjectiveConstraint",
    ),
    ("FixedPlaneConstraint", "FixedPlaneProjectiveConstraint"),
    (
        "FixedRotationConstraint",
        "FixedRotationProjectiveConstraint",
    ),
    (
        "HermiteSplineConstraint",
        "HermiteSplineProjectiveConstraint",
    ),
    ("OscillatorConstraint", "OscillatorProjectiveConstraint"),
    ("ParabolicConstraint", "ParabolicProjectiveConstraint"),
    (
        "PartialLinearMovementConstraint",
        "PartialLinearMovementProjectiveConstraint",
    ),
    (
        "PatchTestMovementConstraint",
        "PatchTestMovementProjectiveConstraint",
    ),
    (
        "PositionBasedDynamicsConstraint",
        "PositionBasedDynamicsProjectiveConstraint",
    ),
    (
        "SkeletalMotionConstraint",
        "SkeletalMotionProjectiveConstraint",
    ),
    ("ProjectToLineConstraint", "LineProjectiveConstraint"),
    ("ProjectToPlaneConstraint", "PlaneProjectiveConstraint"),
    ("ProjectToPointConstraint", "PointProjectiveConstraint"),
    (
        "ProjectDirectionConstraint",
        "DirectionProjectiveConstraint",
    ),
    (
        "AffineMovementConstraint",
        "AffineMovementProjectiveConstraint",
    ),
    (
        "BilateralInteractionConstraint",
        "BilateralLagrangianConstraint",
    ),
    ("SlidingConstraint", "SlidingLagrangianConstraint"),
    ("StopperConstraint", "StopperLagrangianConstraint"),
    ("UniformConstraint", "UniformLagrangianConstraint"),
    (
        "UnilateralInteractionConstraint",
        "UnilateralLagrangianConstraint",
    ),
    ("StiffSpringForceField", "SpringForceField"),
    ("ParallelStiffSpringForceField", "ParallelSpringForceField"),
    ("ShewchukPCGLinearSolver", "PCGLinearSolver"),
    ("OglCylinderModel", "CylinderVisualModel"),
    ("TriangleOctreeModel", "TriangleOctreeCollisionModel"),
    ("VolumeFromTetrahedrons", "VolumeFromVolumetricElements"),
];

/// Aliases SOFA removed in v24.12 (`dealiasedComponents`): not creatable, with the new name.
pub const DEALIASED: &[(&str, &str)] = &[
    ("EulerImplicit", "EulerImplicitSolver"),
    ("ImplicitEulerSolver", "EulerImplicitSolver"),
    ("ImplicitEuler", "EulerImplicitSolver"),
    ("CGSolver", "CGLinearSolver"),
    ("ConjugateGradient", "CGLinearSolver"),
    ("MinResSolver", "MinResLinearSolver"),
    ("MINRESSolver", "MinResLinearSolver"),
    ("RungeKutta4", "RungeKutta4Solver"),
    ("Mesh", "MeshTopology"),
    ("Grid", "GridTopology"),
    ("RegularGrid", "RegularGridTopology"),
    ("SparseGrid", "SparseGridTopology"),
    ("SparseGridRamification", "SparseGridRamificationTopology"),
    ("MeshObjLoader", "MeshOBJLoader"),
    ("DefaultPipeline", "CollisionPipeline"),
    ("DefaultContactManager", "CollisionResponse"),
    ("FreeMotionMasterSolver", "FreeMotionAnimationLoop"),
    ("MasterConstraintSolver", "ConstraintAnimationLoop"),
    ("Background", "BackgroundSetting"),
];

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn register(
        &mut self,
        class: &'static str,
        description: &'static str,
        create: Constructor,
    ) {
        self.entries.insert(
            class,
            Entry {
                class,
                create,
                description,
                inert: false,
            },
        );
    }

    /// Register a class that is accepted but has no effect on the mechanics yet.
    pub fn register_inert(
        &mut self,
        class: &'static str,
        description: &'static str,
        create: Constructor,
    ) {
        self.entries.insert(
            class,
            Entry {
                class,
                create,
                description,
                inert: true,
            },
        );
    }

    pub fn get(&self, class: &str) -> Option<&Entry> {
        self.entries.get(class)
    }

    pub fn lookup(&self, class: &str) -> Lookup<'_> {
        if let Some(e) = self.entries.get(class) {
            return Lookup::Found(e);
        }
        if let Some((_, new)) = RENAMED.iter().find(|(o, _)| *o == class) {
            if let Some(e) = self.entries.get(new) {
                return Lookup::Renamed {
                    new: e,
                    old: class.to_string(),
                };
            }
            return Lookup::Removed(format!(
                "'{class}' was renamed '{new}' in SOFA, which Canapé does not provide yet"
            ));
        }
        if let Some((_, new)) = DEALIASED.iter().find(|(o, _)| *o == class) {
            return Lookup::Removed(format!(
                "the alias '{class}' was removed in SOFA v24.12; use '{new}'"
            ));
        }
        Lookup::Unknown {
            suggestions: closest(class, self.entries.keys().copied(), 3),
        }
    }

    pub fn classes(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }
}
