//! This crate's components (masses, projective constraints, loads, engines, topologies and their
//! mappings, mappings, animation loops, visual models, the components accepted without effect),
//! registered under SOFA's class names: the facade's registry calls [`register`], and so can an
//! application's own registry.

use crate::constraint::projective::fixed::FixedProjectiveConstraint;
use crate::engine::BoxRoi;
use crate::engine::TransformEngine;
use crate::mapping::barycentric::BarycentricMapping;
use crate::mapping::linear::IdentityMapping;
use crate::mapping::linear::SubsetMapping;
use crate::mapping::nonlinear::distance::DistanceMapping;
use crate::mapping::nonlinear::distance::Kind;
use crate::mapping::nonlinear::rigid::RigidMapping;
use crate::mass::DiagonalMass;
use crate::mass::MeshMatrixMass;
use crate::mass::UniformMass;
use crate::passive::Inert;
use crate::passive::INERT_CLASSES;
use crate::solid_mechanics::spring::RestShapeSpringsForceField;
use crate::solid_mechanics::spring::UniformVelocityDampingForceField;
use crate::topology::Hexa2QuadTopologicalMapping;
use crate::topology::Hexa2TetraTopologicalMapping;
use crate::topology::MeshContainer;
use crate::topology::Quad2TriangleTopologicalMapping;
use crate::topology::RegularGridTopology;
use crate::topology::Tetra2TriangleTopologicalMapping;
use crate::topology::Triangle2EdgeTopologicalMapping;
use crate::visual::OglModel;
use canape_core::registry::{known_template, vec3_only, Registry, TemplateError};
use canape_core::scene::AnyComponent;
use canape_core::state::MechanicalObject;
use canape_types::DofType;

/// Register this crate's components.
pub fn register(r: &mut Registry) {
    crate::constraint::projective::curves::register(r);
    crate::engine::generate::register(r);
    crate::engine::select::register(r);
    crate::topology::edge2quad::register(r);
    crate::mapping::tubular::register(r);
    crate::mechanical_load::tait::register(r);
    crate::topology::subset_mapping::register(r);
    crate::animation_loop::register(r);
    r.register(
        "MechanicalObject",
        "state vectors (position, velocity, force…) of one DOF type",
        |_, t| {
            let d = DofType::from_template(t).ok_or_else(|| TemplateError::Unknown {
                template: t.to_string(),
                expected: "Vec1d, Vec2d, Vec3d or Rigid3d",
            })?;
            Ok(AnyComponent::State(MechanicalObject::new(d)))
        },
    );
    r.register("UniformMass", "the same mass on every DOF", |_, t| {
        known_template(t)?;
        Ok(AnyComponent::Mass(Box::new(UniformMass::new())))
    });
    r.register(
        "DiagonalMass",
        "lumped vertex masses from element volumes",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Mass(Box::new(DiagonalMass::new())))
        },
    );
    r.register(
        "MeshMatrixMass",
        "consistent mass matrix from element volumes",
        |_, t| {
            vec3_only(t, "MeshMatrixMass")?;
            Ok(AnyComponent::Mass(Box::new(MeshMatrixMass::new())))
        },
    );
    r.register(
        "FixedProjectiveConstraint",
        "fixes a set of DOFs",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                FixedProjectiveConstraint::new(),
            )))
        },
    );
    r.register(
        "PartialFixedProjectiveConstraint",
        "fixes chosen directions of a set of DOFs",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                FixedProjectiveConstraint::partial(),
            )))
        },
    );
    r.register(
        "PointProjectiveConstraint",
        "puts points at a given point and keeps them there",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                crate::constraint::projective::projections::GeometricProjectiveConstraint::point(),
            )))
        },
    );
    r.register(
        "LineProjectiveConstraint",
        "keeps points on a line",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                crate::constraint::projective::projections::GeometricProjectiveConstraint::line(),
            )))
        },
    );
    r.register(
        "PlaneProjectiveConstraint",
        "keeps points in a plane",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                crate::constraint::projective::projections::GeometricProjectiveConstraint::plane(),
            )))
        },
    );
    r.register(
        "LinearMovementProjectiveConstraint",
        "moves points along key movements, linearly between key times",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                crate::constraint::projective::projections::LinearMovementProjectiveConstraint::new(
                ),
            )))
        },
    );
    r.register(
        "OscillatorProjectiveConstraint",
        "moves points as x = mean + amplitude sin(wt + phase)",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                crate::constraint::projective::projections::OscillatorProjectiveConstraint::new(),
            )))
        },
    );
    r.register(
        "InteractionEllipsoidForceField",
        "ellipsoids carried by a Rigid3 frame pushing Vec3 points (template Vec3,Rigid3)",
        |_, t| {
            if !t.is_empty()
                && !t.replace(' ', "").eq_ignore_ascii_case("Vec3,Rigid3")
                && !t.replace(' ', "").eq_ignore_ascii_case("Vec3d,Rigid3d")
            {
                return Err(TemplateError::NotSupported {
                    template: t.to_string(),
                    why: "InteractionEllipsoidForceField is Vec3,Rigid3",
                });
            }
            Ok(AnyComponent::ForceField(Box::new(
                crate::mechanical_load::ellipsoid::InteractionEllipsoidForceField::new(),
            )))
        },
    );
    r.register(
        "LinearForceField",
        "a force on chosen points, interpolated between key times",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::mechanical_load::loads::LinearForceField::new(),
            )))
        },
    );
    r.register(
        "EdgePressureForceField",
        "a force per unit length on chosen edges",
        |_, t| {
            vec3_only(t, "EdgePressureForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::mechanical_load::loads::EdgePressureForceField::new(),
            )))
        },
    );
    r.register(
        "TrianglePressureForceField",
        "a constant pressure force on chosen triangles (rest areas)",
        |_, t| {
            vec3_only(t, "TrianglePressureForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::mechanical_load::loads::TrianglePressureForceField::new(),
            )))
        },
    );
    r.register(
        "FixedPlaneProjectiveConstraint",
        "no displacement along a direction for the points between two planes",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                crate::constraint::projective::fixed::FixedPlaneProjectiveConstraint::new(),
            )))
        },
    );
    r.register("BoxROI", "selects points inside boxes", |_, t| {
        vec3_only(t, "BoxROI")?;
        Ok(AnyComponent::Engine(Box::new(BoxRoi::new())))
    });
    r.register(
        "RegularGridTopology",
        "regular grid of points and hexahedra",
        |_, _| Ok(AnyComponent::Topology(Box::new(RegularGridTopology::new()))),
    );
    r.register(
        "CylinderGridTopology",
        "grid of hexahedra whose layers are discs along an axis",
        |_, _| {
            Ok(AnyComponent::Topology(Box::new(
                RegularGridTopology::cylinder(),
            )))
        },
    );
    r.register(
        "CubeTopology",
        "surface of a grid: surface points, grid lines and cells",
        |_, _| {
            Ok(AnyComponent::Topology(Box::new(
                crate::topology::cube::CubeTopology::new(),
            )))
        },
    );
    for (class, desc) in [
        ("MeshTopology", "static mesh topology"),
        (
            "TetrahedronSetTopologyContainer",
            "tetrahedral mesh topology",
        ),
        ("TriangleSetTopologyContainer", "triangular mesh topology"),
        ("HexahedronSetTopologyContainer", "hexahedral mesh topology"),
        ("EdgeSetTopologyContainer", "edge mesh topology"),
        ("QuadSetTopologyContainer", "quad mesh topology"),
        ("PointSetTopologyContainer", "point set topology"),
    ] {
        let create: canape_core::registry::Constructor = match class {
            "MeshTopology" => |_, _| {
                Ok(AnyComponent::Topology(Box::new(MeshContainer::new(
                    "MeshTopology",
                ))))
            },
            "TetrahedronSetTopologyContainer" => |_, _| {
                Ok(AnyComponent::Topology(Box::new(MeshContainer::new(
                    "TetrahedronSetTopologyContainer",
                ))))
            },
            "TriangleSetTopologyContainer" => |_, _| {
                Ok(AnyComponent::Topology(Box::new(MeshContainer::new(
                    "TriangleSetTopologyContainer",
                ))))
            },
            "HexahedronSetTopologyContainer" => |_, _| {
                Ok(AnyComponent::Topology(Box::new(MeshContainer::new(
                    "HexahedronSetTopologyContainer",
                ))))
            },
            "EdgeSetTopologyContainer" => |_, _| {
                Ok(AnyComponent::Topology(Box::new(MeshContainer::new(
                    "EdgeSetTopologyContainer",
                ))))
            },
            "QuadSetTopologyContainer" => |_, _| {
                Ok(AnyComponent::Topology(Box::new(MeshContainer::new(
                    "QuadSetTopologyContainer",
                ))))
            },
            _ => |_, _| {
                Ok(AnyComponent::Topology(Box::new(MeshContainer::new(
                    "PointSetTopologyContainer",
                ))))
            },
        };
        r.register(class, desc, create);
    }
    r.register(
        "Hexa2PrismTopologicalMapping",
        "splits each hexahedron into two triangular prisms",
        |_, _| {
            Ok(AnyComponent::TopoMapping(Box::new(
                crate::topology::hexa2prism::Hexa2PrismTopologicalMapping::new(),
            )))
        },
    );
    r.register(
        "Hexa2TetraTopologicalMapping",
        "splits hexahedra into tetrahedra",
        |_, _| {
            Ok(AnyComponent::TopoMapping(Box::new(
                Hexa2TetraTopologicalMapping::new(),
            )))
        },
    );
    r.register(
        "Hexa2QuadTopologicalMapping",
        "the boundary quads of a hexahedral topology",
        |_, _| {
            Ok(AnyComponent::TopoMapping(Box::new(
                Hexa2QuadTopologicalMapping::new(),
            )))
        },
    );
    r.register(
        "Tetra2TriangleTopologicalMapping",
        "the boundary triangles of a tetrahedral topology",
        |_, _| {
            Ok(AnyComponent::TopoMapping(Box::new(
                Tetra2TriangleTopologicalMapping::new(),
            )))
        },
    );
    r.register(
        "Quad2TriangleTopologicalMapping",
        "two triangles per quad",
        |_, _| {
            Ok(AnyComponent::TopoMapping(Box::new(
                Quad2TriangleTopologicalMapping::new(),
            )))
        },
    );
    r.register(
        "Mesh2PointTopologicalMapping",
        "one point per input primitive at given relative coordinates",
        |_, _| {
            Ok(AnyComponent::TopoMapping(Box::new(
                crate::topology::mesh2point::Mesh2PointTopologicalMapping::new(),
            )))
        },
    );
    r.register(
        "Triangle2EdgeTopologicalMapping",
        "the boundary edges of a triangle topology",
        |_, _| {
            Ok(AnyComponent::TopoMapping(Box::new(
                Triangle2EdgeTopologicalMapping::new(),
            )))
        },
    );
    r.register(
        "BlockGaussSeidelConstraintSolver",
        "Lagrangian constraints by projected block Gauss-Seidel",
        |_, _| {
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::solver::GaussSeidelConstraintSolver::new(
                    "BlockGaussSeidelConstraintSolver",
                ),
            )))
        },
    );
    r.register(
        "ProjectedGaussSeidelConstraintSolver",
        "Lagrangian constraints by projected Gauss-Seidel",
        |_, _| {
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::solver::GaussSeidelConstraintSolver::new(
                    "ProjectedGaussSeidelConstraintSolver",
                ),
            )))
        },
    );
    r.register(
        "UnbuiltGaussSeidelConstraintSolver",
        "Lagrangian constraints by Gauss-Seidel on the diagonal compliance blocks",
        |_, _| {
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::solver::GaussSeidelConstraintSolver::new(
                    "UnbuiltGaussSeidelConstraintSolver",
                ),
            )))
        },
    );
    r.register(
        "NNCGConstraintSolver",
        "Lagrangian constraints by nonsmooth nonlinear conjugate gradients",
        |_, _| {
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::solver::GaussSeidelConstraintSolver::new(
                    "NNCGConstraintSolver",
                ),
            )))
        },
    );
    r.register(
        "ImprovedJacobiConstraintSolver",
        "Lagrangian constraints by a projected Jacobi iteration (optional spectral correction and conjugate residue)",
        |_, _| {
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::solver::GaussSeidelConstraintSolver::new(
                    "ImprovedJacobiConstraintSolver",
                ),
            )))
        },
    );
    r.register("GenericConstraintSolver", "Lagrangian constraints (resolutionMethod: ProjectedGaussSeidel, UnbuiltGaussSeidel, NonsmoothNonlinearConjugateGradient)", |_, _| {
        Ok(AnyComponent::Passive(Box::new(
            crate::constraint::lagrangian::solver::GaussSeidelConstraintSolver::new("GenericConstraintSolver"),
        )))
    });
    r.register(
        "LCPConstraintSolver",
        "contact constraints as a (nonlinear) complementarity problem by Gauss-Seidel",
        |_, _| {
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::solver::LcpConstraintSolver::new(),
            )))
        },
    );
    r.register(
        "UncoupledConstraintCorrection",
        "constraint correction by a diagonal compliance per point",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::correction::UncoupledConstraintCorrection::new(),
            )))
        },
    );
    r.register(
        "LinearSolverConstraintCorrection",
        "constraint correction by the solver group's linear solver (A^-1)",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::correction::LinearSolverConstraintCorrection::new(
                    "LinearSolverConstraintCorrection",
                ),
            )))
        },
    );
    r.register(
        "GenericConstraintCorrection",
        "constraint correction by the solver group's linear solver, scaled by complianceFactor",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::correction::LinearSolverConstraintCorrection::new(
                    "GenericConstraintCorrection",
                ),
            )))
        },
    );
    r.register(
        "BilateralLagrangianConstraint",
        "holds pairs of points of two states together (Lagrangian)",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::bilateral::BilateralLagrangianConstraint::new(),
            )))
        },
    );
    r.register(
        "FixedLagrangianConstraint",
        "holds points (Vec3) or frames (Rigid3) at their rest positions by Lagrangian rows",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::fixed::FixedLagrangianConstraint::new(),
            )))
        },
    );
    r.register(
        "UniformLagrangianConstraint",
        "holds every scalar of a Vec1/2/3 state at 0 (or its rest value) by Lagrangian rows",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Passive(Box::new(
                crate::constraint::lagrangian::uniform::UniformLagrangianConstraint::new(),
            )))
        },
    );
    r.register(
        "LinearVelocityProjectiveConstraint",
        "imposes velocities interpolated between key times",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                crate::constraint::projective::projections::LinearVelocityProjectiveConstraint::new(
                ),
            )))
        },
    );
    r.register(
        "PlaneForceField",
        "a plane pushing back the points below it (penalty)",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::mechanical_load::loads::PlaneForceField::new(),
            )))
        },
    );
    r.register(
        "SphereForceField",
        "a sphere pushing out the points inside it (penalty)",
        |_, t| {
            crate::mechanical_load::obstacles::vec_template(t, "SphereForceField", false)?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::mechanical_load::obstacles::SphereForceField::new(),
            )))
        },
    );
    r.register(
        "EllipsoidForceField",
        "an ellipsoid pushing out the points inside it, or in those outside (penalty)",
        |_, t| {
            crate::mechanical_load::obstacles::vec_template(t, "EllipsoidForceField", false)?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::mechanical_load::obstacles::EllipsoidForceField::new(),
            )))
        },
    );
    r.register(
        "ConicalForceField",
        "a cone keeping the points inside it (penalty)",
        |_, t| {
            crate::mechanical_load::obstacles::vec_template(t, "ConicalForceField", true)?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::mechanical_load::obstacles::ConicalForceField::new(),
            )))
        },
    );
    r.register("ConstantForceField", "constant force on points", |_, t| {
        known_template(t)?;
        Ok(AnyComponent::ForceField(Box::new(
            crate::mechanical_load::loads::ConstantForceField::new(),
        )))
    });
    r.register(
        "BarycentricMapping",
        "maps points inside tetrahedra/hexahedra of the input",
        |_, t| {
            if !t.is_empty()
                && !t.split(',').all(|p| {
                    DofType::from_template(p) == Some(DofType::Vec3)
                        || p.trim().starts_with("Ogl")
                        || p.trim().starts_with("ExtVec3")
                })
            {
                return Err(TemplateError::MappingTypesYet {
                    template: t.to_string(),
                    class: "BarycentricMapping".to_string(),
                    only: "Vec3d to Vec3d",
                });
            }
            Ok(AnyComponent::Mapping(Box::new(BarycentricMapping::new())))
        },
    );
    r.register(
        "IdentityMapping",
        "output = input (same type, or Rigid3 centers to Vec3)",
        |_, t| Ok(AnyComponent::Mapping(Box::new(IdentityMapping::new(t)))),
    );
    r.register(
        "SubsetMapping",
        "output = a subset of the input points",
        |_, _| Ok(AnyComponent::Mapping(Box::new(SubsetMapping::new()))),
    );
    r.register(
        "SkinningMapping",
        "points skinned on Rigid3 frames (linear blend)",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(
                crate::mapping::skinning::SkinningMapping::new(),
            )))
        },
    );
    r.register(
        "BeamLinearMapping",
        "points along a chain of beams between Rigid3 frames",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(
                crate::mapping::skinning::BeamLinearMapping::new(),
            )))
        },
    );
    r.register(
        "SquareMapping",
        "squares of Vec1 values, with geometric stiffness",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(
                crate::mapping::nonlinear::square::SquareMapping::new(),
            )))
        },
    );
    r.register(
        "IdentityMultiMapping",
        "output = the inputs' points, concatenated",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(
                SubsetMapping::identity_multi(),
            )))
        },
    );
    r.register(
        "CenterOfMassMapping",
        "the input's center of mass (its node's mass weighs the points)",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(
                crate::mapping::linear::CenterOfMassMapping::new(),
            )))
        },
    );
    r.register(
        "AreaMapping",
        "triangle areas (Vec3 to Vec1), with geometric stiffness",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(
                crate::mapping::nonlinear::area::AreaMapping::new(),
            )))
        },
    );
    r.register(
        "SubsetMultiMapping",
        "output = points picked from several inputs (indexPairs)",
        |_, _| Ok(AnyComponent::Mapping(Box::new(SubsetMapping::multi()))),
    );
    r.register("RigidMapping", "points carried by Rigid3 frames", |_, _| {
        Ok(AnyComponent::Mapping(Box::new(RigidMapping::new())))
    });
    r.register(
        "VolumeMapping",
        "signed volumes of the tetrahedra (Vec3 to Vec1)",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(
                crate::mapping::nonlinear::volume::VolumeMapping::new(),
            )))
        },
    );
    r.register(
        "DistanceFromTargetMapping",
        "distances of points from fixed targets minus rest lengths (Vec3 to Vec1)",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(
                crate::mapping::nonlinear::distance_target::DistanceFromTargetMapping::new(),
            )))
        },
    );
    r.register(
        "DistanceMapping",
        "edge lengths minus rest lengths (Vec3 to Vec1)",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(DistanceMapping::new(
                Kind::Distance,
            ))))
        },
    );
    r.register(
        "SquareDistanceMapping",
        "squared edge lengths (Vec3 to Vec1)",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(DistanceMapping::new(
                Kind::SquareDistance,
            ))))
        },
    );
    r.register(
        "DistanceMultiMapping",
        "lengths of edges between points of several inputs (Vec3 to Vec1)",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(DistanceMapping::new(
                Kind::MultiDistance,
            ))))
        },
    );
    r.register(
        "RestShapeSpringsForceField",
        "springs to the rest shape (Vec1/Vec2/Vec3/Rigid3)",
        |_, t| {
            Ok(AnyComponent::ForceField(Box::new(
                RestShapeSpringsForceField::new(t)?,
            )))
        },
    );
    r.register("UniformVelocityDampingForceField", "f = -c v", |_, t| {
        known_template(t)?;
        Ok(AnyComponent::ForceField(Box::new(
            UniformVelocityDampingForceField::new(),
        )))
    });
    r.register("SphereROI", "points and elements inside spheres", |_, t| {
        vec3_only(t, "SphereROI")?;
        Ok(AnyComponent::Engine(Box::new(
            crate::engine::ShapeRoi::sphere(),
        )))
    });
    r.register(
        "PlaneROI",
        "points and elements inside boxes built on parallelograms",
        |_, t| {
            vec3_only(t, "PlaneROI")?;
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::ShapeRoi::plane(),
            )))
        },
    );
    r.register(
        "AffineMovementProjectiveConstraint",
        "points moved from x0 to R·x0 + t between two times",
        |_, t| {
            vec3_only(t, "AffineMovementProjectiveConstraint")?;
            Ok(AnyComponent::Projective(Box::new(
                crate::constraint::projective::movement::MovementProjectiveConstraint::affine(),
            )))
        },
    );
    r.register(
        "PatchTestMovementProjectiveConstraint",
        "points moved from x0 to x0 + the corner movements interpolated over the patch, between two times",
        |_, t| {
            vec3_only(t, "PatchTestMovementProjectiveConstraint")?;
            Ok(AnyComponent::Projective(Box::new(
                crate::constraint::projective::movement::MovementProjectiveConstraint::patch_test(),
            )))
        },
    );
    r.register(
        "SubsetTopology",
        "splits a mesh by boxes or spheres into the elements inside and outside (localIndices: renumbered, border first)",
        |_, t| {
            vec3_only(t, "SubsetTopology")?;
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::subset_topology::SubsetTopology::new(),
            )))
        },
    );
    r.register(
        "PairBoxROI",
        "points inside one box but not inside a second one",
        |_, t| {
            vec3_only(t, "PairBoxROI")?;
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::PairBoxRoi::new(),
            )))
        },
    );
    r.register(
        "MeshTetraStuffing",
        "a tetrahedral volume mesh from a closed surface by isosurface stuffing (Labelle & Shewchuk 2007)",
        |_, t| {
            vec3_only(t, "MeshTetraStuffing")?;
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::mesh_tetra_stuffing::MeshTetraStuffing::new(),
            )))
        },
    );
    r.register(
        "VolumeFromTriangles",
        "the volume enclosed by a triangle and quad surface",
        |_, t| {
            vec3_only(t, "VolumeFromTriangles")?;
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::volume_from_triangles::VolumeFromTriangles::new(),
            )))
        },
    );
    r.register(
        "VolumeFromVolumetricElements",
        "the volume of tetrahedra and hexahedra",
        |_, t| {
            vec3_only(t, "VolumeFromVolumetricElements")?;
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::volume_from_triangles::VolumeFromTriangles::volumetric(),
            )))
        },
    );
    r.register(
        "TransformEngine",
        "translates, rotates and scales positions",
        |_, t| {
            vec3_only(t, "TransformEngine")?;
            Ok(AnyComponent::Engine(Box::new(TransformEngine::new())))
        },
    );
    r.register(
        "TransformPosition",
        "positions projected on a plane, translated, rotated, scaled, randomly moved or mapped by an affine matrix (given or read from a file)",
        |_, t| {
            vec3_only(t, "TransformPosition")?;
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::transform_position::TransformPosition::new(),
            )))
        },
    );
    r.register(
        "Vertex2Frame",
        "one Rigid3 frame per vertex, oriented by the vertex normals or along the polyline",
        |_, t| {
            match canape_core::types::DofType::from_template(t) {
                Some(canape_core::types::DofType::Rigid3) => {}
                _ if t.trim().is_empty() => {}
                _ => {
                    return Err(TemplateError::NotSupported {
                        template: t.to_string(),
                        why: "Vertex2Frame outputs Rigid3d frames",
                    })
                }
            }
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::vertex2frame::Vertex2Frame::new(),
            )))
        },
    );
    r.register(
        "MergeVectors",
        "the concatenation of its input vectors (input1, input2, …)",
        |_, t| {
            let kind = crate::engine::merge_vectors::list_kind(t).ok_or_else(|| {
                TemplateError::NotSupported {
                    template: t.to_string(),
                    why: "MergeVectors merges lists of numbers (int, unsigned, double, Vec, Rigid)",
                }
            })?;
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::merge_vectors::MergeVectors::new(kind),
            )))
        },
    );
    r.register(
        "MergeMeshes",
        "one mesh made of several (positions appended, element indices shifted)",
        |_, t| {
            vec3_only(t, "MergeMeshes")?;
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::merge_meshes::MergeMeshes::new(),
            )))
        },
    );
    r.register(
        "MeshBoundaryROI",
        "the boundary points of a triangle/quad surface",
        |_, _| {
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::mesh_boundary_roi::MeshBoundaryRoi::new(),
            )))
        },
    );
    r.register(
        "GenerateRigidMass",
        "the rigid mass, centre of mass and inertia of a closed surface mesh",
        |_, t| {
            match canape_core::types::DofType::from_template(t) {
                Some(canape_core::types::DofType::Rigid3) => {}
                _ if t.trim().is_empty() => {}
                _ => {
                    return Err(TemplateError::NotSupported {
                        template: t.to_string(),
                        why: "GenerateRigidMass is Rigid3d",
                    })
                }
            }
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::generate_rigid_mass::GenerateRigidMass::new(),
            )))
        },
    );
    r.register(
        "PointsFromIndices",
        "the positions of the listed points",
        |_, t| {
            vec3_only(t, "PointsFromIndices")?;
            Ok(AnyComponent::Engine(Box::new(
                crate::engine::PointsFromIndices::new(),
            )))
        },
    );
    r.register(
        "OglModel",
        "visual model (kept for the viewer, moved by its mapping)",
        |_, _| Ok(AnyComponent::Passive(Box::new(OglModel::new()))),
    );
    for (class, _role, desc) in INERT_CLASSES {
        r.register_inert(class, desc, |class, _| {
            let role = INERT_CLASSES
                .iter()
                .find(|(c, _, _)| *c == class)
                .map(|(_, r, _)| *r)
                .unwrap_or(canape_core::component::Role::Other);
            Ok(AnyComponent::Passive(Box::new(Inert::new(class, role))))
        });
    }
}
