//! The component registry (SOFA's ObjectFactory): class names to constructors, SOFA's renamed
//! and removed component names, and "did you mean" suggestions for unknown names.

use crate::diag::closest;
use crate::scene::AnyComponent;
use crate::types::DofType;
use std::collections::BTreeMap;

/// Why a component's constructor refused to create it: every refusal is about the template
/// (the DOF type, the matrix type, the element type…). The Display text is the diagnostic's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A part after the first of a two-part template is not a DOF type.
    #[error("unknown template '{template}' ('{part}' is not a DOF type: expected Vec1d, Vec2d, Vec3d or Rigid3d)")]
    UnknownPart { template: String, part: String },
    /// A known DOF type other than Vec3 for a Vec3-only class.
    #[error("template '{template}' ({dof}) is not supported by {class} yet; only Vec3d is")]
    NotVec3 {
        template: String,
        dof: &'static str,
        class: String,
    },
    /// Not a template the class knows; `expected` lists the ones it does.
    #[error("unknown template '{template}' (expected {expected})")]
    Unknown {
        template: String,
        expected: &'static str,
    },
    /// Not a DOF type among those SOFA defines the class for.
    #[error("unknown template '{template}' (expected {})", dof_names(.allowed))]
    UnknownDof {
        template: String,
        allowed: &'static [DofType],
    },
    /// A DOF type SOFA does not define the class for (it does for `allowed`).
    #[error("template '{template}' ({dof}) is not supported: SOFA defines {class} for {} only", dof_names(.allowed))]
    NotDefinedFor {
        template: String,
        dof: &'static str,
        class: String,
        allowed: &'static [DofType],
    },
    /// A DOF type the class does not support (it does `supported`).
    #[error("template '{template}' ({dof}) is not supported by {class}: only {supported} are")]
    OnlySupports {
        template: String,
        dof: &'static str,
        class: String,
        supported: &'static str,
    },
    /// A DOF type SOFA does not instantiate the class on (it does on `supported`).
    #[error(
        "template '{template}' ({dof}) is not supported by {class}: SOFA defines it on {supported}"
    )]
    NotSofaInstance {
        template: String,
        dof: &'static str,
        class: String,
        supported: &'static str,
    },
    /// Not a DOF type; the class is defined on `supported`.
    #[error("unknown template '{template}' ({class} is defined on {supported})")]
    UnknownFor {
        template: String,
        class: String,
        supported: &'static str,
    },
    /// A template the class does not take, with why (`why` names the class and what it takes).
    #[error("template '{template}' is not supported: {why}")]
    NotSupported { template: String, why: &'static str },
    /// A mapping's input/output types the class does not support (only `only`).
    #[error("template '{template}' is not supported by {class} ({only} only)")]
    MappingTypes {
        template: String,
        class: String,
        only: &'static str,
    },
    /// A mapping's input/output types not supported yet (only `only`).
    #[error("template '{template}' is not supported by {class} yet ({only} only)")]
    MappingTypesYet {
        template: String,
        class: String,
        only: &'static str,
    },
    /// A DOF type the class refuses whatever the template's spelling.
    #[error("template '{dof}' is not supported by {class}")]
    DofNotSupported { dof: &'static str, class: String },
    /// An element-templated class on a state other than Vec3.
    #[error("template '{template}': only Vec3d states are supported")]
    ElementStateNotVec3 { template: String },
    /// An element type (second part of the template) that is not supported.
    #[error("template '{template}': element '{element}' is not supported yet (Tetrahedron, Hexahedron, Prism)")]
    UnknownElement { template: String, element: String },
    /// A class that needs its element type written in the template.
    #[error("{class} needs its element in the template (Vec3,Hexahedron or Vec3,Tetrahedron)")]
    ElementMissing { class: String },
    /// A collision model's template it does not support (it does `allowed`).
    #[error("{class} does not support template '{template}' ({allowed})")]
    ModelTemplate {
        class: String,
        template: String,
        allowed: &'static str,
    },
    /// A linear solver's matrix template that is not available.
    #[error("template '{template}' is not available for {class}")]
    MatrixNotAvailable { template: String, class: String },
    /// A linear solver's matrix template that is not available, with what to use instead.
    #[error("template '{template}' is not available for {class} ({advice})")]
    MatrixNotAvailableUse {
        template: String,
        class: String,
        advice: &'static str,
    },
}

/// "Vec3d and Rigid3d": the DOF types' names joined by " and ".
fn dof_names(allowed: &[DofType]) -> String {
    allowed
        .iter()
        .map(|d| d.name())
        .collect::<Vec<_>>()
        .join(" and ")
}

/// Accept a Vec3 template only (or "", the default): "Vec3,Vec3" is SOFA's form with a second
/// template argument (a mass's geometry type, a mapping's output).
pub fn vec3_only(template: &str, class: &str) -> Result<(), TemplateError> {
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
    match DofType::from_template(template.split(',').next().unwrap_or("")) {
        Some(_) => Ok(()),
        None => Err(TemplateError::Unknown {
            template: template.to_string(),
            expected: "Vec1d, Vec2d, Vec3d, Rigid2d or Rigid3d",
        }),
    }
}

/// Creates a component of `class` for a template (`Vec3d`, or "" for the default).
pub type Constructor =
    fn(class: &'static str, template: &str) -> Result<AnyComponent, TemplateError>;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> String {
        x.to_string()
    }

    /// The refusals' text is the diagnostics' (scene files' errors, tests compare it).
    #[test]
    fn template_errors_read_as_before() {
        let cases = [
            (
                TemplateError::UnknownPart { template: s("Vec3d,Banana"), part: s("Banana") },
                "unknown template 'Vec3d,Banana' ('Banana' is not a DOF type: expected Vec1d, Vec2d, Vec3d or Rigid3d)",
            ),
            (
                TemplateError::NotVec3 { template: s("Vec2d"), dof: "Vec2d", class: s("BoxROI") },
                "template 'Vec2d' (Vec2d) is not supported by BoxROI yet; only Vec3d is",
            ),
            (
                TemplateError::Unknown { template: s("Banana"), expected: "Vec3d or Rigid3d" },
                "unknown template 'Banana' (expected Vec3d or Rigid3d)",
            ),
            (
                TemplateError::UnknownDof { template: s("Banana"), allowed: &[DofType::Vec3, DofType::Vec2] },
                "unknown template 'Banana' (expected Vec3d and Vec2d)",
            ),
            (
                TemplateError::NotDefinedFor {
                    template: s("Vec1d"),
                    dof: "Vec1d",
                    class: s("DirectionProjectiveConstraint"),
                    allowed: &[DofType::Vec3, DofType::Vec2],
                },
                "template 'Vec1d' (Vec1d) is not supported: SOFA defines DirectionProjectiveConstraint for Vec3d and Vec2d only",
            ),
            (
                TemplateError::OnlySupports {
                    template: s("Vec1d"),
                    dof: "Vec1d",
                    class: s("GenerateGrid"),
                    supported: "Vec3d and Vec2d",
                },
                "template 'Vec1d' (Vec1d) is not supported by GenerateGrid: only Vec3d and Vec2d are",
            ),
            (
                TemplateError::NotSofaInstance {
                    template: s("Vec2d"),
                    dof: "Vec2d",
                    class: s("ConicalForceField"),
                    supported: "Vec3d",
                },
                "template 'Vec2d' (Vec2d) is not supported by ConicalForceField: SOFA defines it on Vec3d",
            ),
            (
                TemplateError::UnknownFor { template: s("Banana"), class: s("ConicalForceField"), supported: "Vec3d" },
                "unknown template 'Banana' (ConicalForceField is defined on Vec3d)",
            ),
            (
                TemplateError::NotSupported { template: s("Vec3d"), why: "Vertex2Frame outputs Rigid3d frames" },
                "template 'Vec3d' is not supported: Vertex2Frame outputs Rigid3d frames",
            ),
            (
                TemplateError::MappingTypes { template: s("Vec3d"), class: s("TubularMapping"), only: "Rigid3d,Vec3d" },
                "template 'Vec3d' is not supported by TubularMapping (Rigid3d,Vec3d only)",
            ),
            (
                TemplateError::MappingTypesYet {
                    template: s("Vec2d"),
                    class: s("BarycentricMapping"),
                    only: "Vec3d to Vec3d",
                },
                "template 'Vec2d' is not supported by BarycentricMapping yet (Vec3d to Vec3d only)",
            ),
            (
                TemplateError::DofNotSupported { dof: "Rigid2d", class: s("RestShapeSpringsForceField") },
                "template 'Rigid2d' is not supported by RestShapeSpringsForceField",
            ),
            (
                TemplateError::ElementStateNotVec3 { template: s("Vec2d") },
                "template 'Vec2d': only Vec3d states are supported",
            ),
            (
                TemplateError::UnknownElement { template: s("Vec3,Pyramid"), element: s("Pyramid") },
                "template 'Vec3,Pyramid': element 'Pyramid' is not supported yet (Tetrahedron, Hexahedron, Prism)",
            ),
            (
                TemplateError::ElementMissing { class: s("FEMMass") },
                "FEMMass needs its element in the template (Vec3,Hexahedron or Vec3,Tetrahedron)",
            ),
            (
                TemplateError::ModelTemplate {
                    class: s("SphereCollisionModel"),
                    template: s("Vec2d"),
                    allowed: "Vec3d or Rigid3d",
                },
                "SphereCollisionModel does not support template 'Vec2d' (Vec3d or Rigid3d)",
            ),
            (
                TemplateError::MatrixNotAvailable { template: s("Vec3d"), class: s("MinResLinearSolver") },
                "template 'Vec3d' is not available for MinResLinearSolver",
            ),
            (
                TemplateError::MatrixNotAvailableUse {
                    template: s("Vec3d"),
                    class: s("CGLinearSolver"),
                    advice: "use GraphScattered or CompressedRowSparseMatrix[Mat3x3]",
                },
                "template 'Vec3d' is not available for CGLinearSolver (use GraphScattered or CompressedRowSparseMatrix[Mat3x3])",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
    }

    #[test]
    fn helpers_refuse_with_typed_errors() {
        assert_eq!(vec3_only("Vec3d", "BoxROI"), Ok(()));
        assert_eq!(
            vec3_only("Rigid3d", "BoxROI"),
            Err(TemplateError::NotVec3 {
                template: s("Rigid3d"),
                dof: "Rigid3d",
                class: s("BoxROI")
            })
        );
        assert!(matches!(
            known_template("Banana"),
            Err(TemplateError::Unknown {
                expected: "Vec1d, Vec2d, Vec3d, Rigid2d or Rigid3d",
                ..
            })
        ));
    }
}
