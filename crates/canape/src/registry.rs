//! Every built-in component, registered under its SOFA class name.

use canape_base::constraint::FixedProjectiveConstraint;
use canape_base::distance::{DistanceMapping, Kind};
use canape_base::engine::{BoxRoi, TransformEngine};
use canape_base::mapping::{BarycentricMapping, OglModel};
use canape_base::mappings::{IdentityMapping, RigidMapping, SubsetMapping};
use canape_base::mass::{DiagonalMass, MeshMatrixMass, UniformMass};
use canape_base::passive::{Inert, INERT_CLASSES};
use canape_base::springs::{RestShapeSpringsForceField, UniformVelocityDampingForceField};
use canape_base::topology::{
    Hexa2QuadTopologicalMapping, Hexa2TetraTopologicalMapping, MeshContainer,
    Quad2TriangleTopologicalMapping, RegularGridTopology, Tetra2TriangleTopologicalMapping,
    Triangle2EdgeTopologicalMapping,
};
use canape_core::registry::Registry;
use canape_core::scene::AnyComponent;
use canape_core::state::MechanicalObject;
use canape_fem::tetra::Flavor;
use canape_fem::{
    ElementFemForceField, FemMass, HexahedronFemForceField, SpringForceField,
    TetrahedronFemForceField,
};
use canape_io::loaders::{
    GridMeshCreator, MeshFormat, MeshLoaderComponent, SphereLoader, StringMeshCreator,
};
use canape_solvers::{
    CentralDifferenceSolver, CgLinearSolver, DirectSolver, EulerExplicitSolver,
    EulerImplicitSolver, MinResLinearSolver, NewmarkImplicitSolver, PcgLinearSolver,
    RungeKutta2Solver, RungeKutta4Solver, StaticSolver,
};
use canape_types::DofType;

fn vec3_only(template: &str, class: &str) -> Result<(), String> {
    // "Vec3,Vec3": SOFA's second template argument (a mass's geometry type, a mapping's output)
    let mut parts = template.split(',').map(str::trim);
    let first = parts.next().unwrap_or("");
    if let Some(other) = parts.find(|p| DofType::from_template(p).is_none()) {
        return Err(format!(
            "unknown template '{template}' ('{other}' is not a DOF type: expected Vec1d, Vec2d, Vec3d or Rigid3d)"
        ));
    }
    match DofType::from_template(first) {
        Some(DofType::Vec3) => Ok(()),
        Some(d) => Err(format!(
            "template '{template}' ({}) is not supported by {class} yet; only Vec3d is",
            d.name()
        )),
        None => Err(format!(
            "unknown template '{template}' (expected Vec1d, Vec2d, Vec3d or Rigid3d)"
        )),
    }
}

fn known_template(template: &str) -> Result<(), String> {
    match DofType::from_template(template.split(',').next().unwrap_or("")) {
        Some(_) => Ok(()),
        None => Err(format!(
            "unknown template '{template}' (expected Vec1d, Vec2d, Vec3d, Rigid2d or Rigid3d)"
        )),
    }
}

/// Build the registry of all built-in components.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    r.register(
        "MechanicalObject",
        "state vectors (position, velocity, force…) of one DOF type",
        |_, t| {
            let d = DofType::from_template(t).ok_or_else(|| {
                format!("unknown template '{t}' (expected Vec1d, Vec2d, Vec3d or Rigid3d)")
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
                canape_base::projection::GeometricProjectiveConstraint::point(),
            )))
        },
    );
    r.register(
        "LineProjectiveConstraint",
        "keeps points on a line",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                canape_base::projection::GeometricProjectiveConstraint::line(),
            )))
        },
    );
    r.register(
        "PlaneProjectiveConstraint",
        "keeps points in a plane",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                canape_base::projection::GeometricProjectiveConstraint::plane(),
            )))
        },
    );
    r.register(
        "LinearMovementProjectiveConstraint",
        "moves points along key movements, linearly between key times",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                canape_base::projection::LinearMovementProjectiveConstraint::new(),
            )))
        },
    );
    r.register(
        "OscillatorProjectiveConstraint",
        "moves points as x = mean + amplitude sin(wt + phase)",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                canape_base::projection::OscillatorProjectiveConstraint::new(),
            )))
        },
    );
    r.register(
        "InteractionEllipsoidForceField",
        "ellipsoids carried by a Rigid3 frame pushing Vec3 points (template Vec3,Rigid3)",
        |_, t| {
            if !t.is_empty() && !t.replace(' ', "").eq_ignore_ascii_case("Vec3,Rigid3") && !t.replace(' ', "").eq_ignore_ascii_case("Vec3d,Rigid3d") {
                return Err(format!("template '{t}' is not supported: InteractionEllipsoidForceField is Vec3,Rigid3"));
            }
            Ok(AnyComponent::ForceField(Box::new(
                canape_base::ellipsoid::InteractionEllipsoidForceField::new(),
            )))
        },
    );
    r.register(
        "LinearForceField",
        "a force on chosen points, interpolated between key times",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_base::load::LinearForceField::new(),
            )))
        },
    );
    r.register(
        "EdgePressureForceField",
        "a force per unit length on chosen edges",
        |_, t| {
            vec3_only(t, "EdgePressureForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_base::load::EdgePressureForceField::new(),
            )))
        },
    );
    r.register(
        "TrianglePressureForceField",
        "a constant pressure force on chosen triangles (rest areas)",
        |_, t| {
            vec3_only(t, "TrianglePressureForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_base::load::TrianglePressureForceField::new(),
            )))
        },
    );
    r.register(
        "FixedPlaneProjectiveConstraint",
        "no displacement along a direction for the points between two planes",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::Projective(Box::new(
                canape_base::constraint::FixedPlaneProjectiveConstraint::new(),
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
        "Triangle2EdgeTopologicalMapping",
        "the boundary edges of a triangle topology",
        |_, _| {
            Ok(AnyComponent::TopoMapping(Box::new(
                Triangle2EdgeTopologicalMapping::new(),
            )))
        },
    );
    r.register(
        "TetrahedronFEMForceField",
        "linear/corotational tetrahedral FEM (small, large, polar, svd)",
        |_, t| {
            vec3_only(t, "TetrahedronFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                TetrahedronFemForceField::new(Flavor::TetrahedronFem),
            )))
        },
    );
    r.register(
        "TetrahedralCorotationalFEMForceField",
        "corotational tetrahedral FEM (small, large, polar)",
        |_, t| {
            vec3_only(t, "TetrahedralCorotationalFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                TetrahedronFemForceField::new(Flavor::TetrahedralCorotational),
            )))
        },
    );
    r.register(
        "HexahedronFEMForceField",
        "corotational hexahedral FEM (large, polar, small)",
        |_, t| {
            vec3_only(t, "HexahedronFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                HexahedronFemForceField::new(),
            )))
        },
    );
    r.register(
        "EulerImplicitSolver",
        "implicit (backward) Euler with Rayleigh damping",
        |_, _| Ok(AnyComponent::Ode(Box::new(EulerImplicitSolver::new()))),
    );
    r.register(
        "EulerExplicitSolver",
        "forward Euler (symplectic by default)",
        |_, _| Ok(AnyComponent::Ode(Box::new(EulerExplicitSolver::new()))),
    );
    r.register(
        "NewmarkImplicitSolver",
        "implicit Newmark-beta (gamma 0.5, beta 0.25 by default)",
        |_, _| Ok(AnyComponent::Ode(Box::new(NewmarkImplicitSolver::new()))),
    );
    r.register(
        "RungeKutta4Solver",
        "explicit classical Runge-Kutta, fourth order",
        |_, _| Ok(AnyComponent::Ode(Box::new(RungeKutta4Solver::new()))),
    );
    r.register(
        "RungeKutta2Solver",
        "explicit midpoint Runge-Kutta, second order",
        |_, _| Ok(AnyComponent::Ode(Box::new(RungeKutta2Solver::new()))),
    );
    r.register(
        "CentralDifferenceSolver",
        "explicit central differences (optional Rayleigh mass damping)",
        |_, _| Ok(AnyComponent::Ode(Box::new(CentralDifferenceSolver::new()))),
    );
    r.register(
        "DefaultAnimationLoop",
        "the default animation loop: events, collision, integration, mappings",
        |_, _| {
            Ok(AnyComponent::AnimationLoop(Box::new(
                canape_base::animation::DefaultAnimationLoop::new(),
            )))
        },
    );
    r.register(
        "MultiStepAnimationLoop",
        "several collision and integration steps per animation step",
        |_, _| {
            Ok(AnyComponent::AnimationLoop(Box::new(
                canape_base::animation::MultiStepAnimationLoop::new(),
            )))
        },
    );
    r.register(
        "BeamFEMForceField",
        "corotational 3D beams between Rigid3 nodes",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_fem::BeamFemForceField::new(),
            )))
        },
    );
    r.register(
        "JointSpringForceField",
        "joints between Rigid3 frames (free axes, angle limits, damping)",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_fem::JointSpringForceField::new(),
            )))
        },
    );
    r.register(
        "PlaneForceField",
        "a plane pushing back the points below it (penalty)",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_base::load::PlaneForceField::new(),
            )))
        },
    );
    r.register("ConstantForceField", "constant force on points", |_, t| {
        known_template(t)?;
        Ok(AnyComponent::ForceField(Box::new(
            canape_base::load::ConstantForceField::new(),
        )))
    });
    r.register(
        "StaticSolver",
        "Newton iterations towards static equilibrium",
        |_, _| Ok(AnyComponent::Ode(Box::new(StaticSolver::new()))),
    );
    r.register(
        "CGLinearSolver",
        "conjugate gradient, matrix-free or assembled",
        |_, t| Ok(AnyComponent::Linear(Box::new(CgLinearSolver::new(t)?))),
    );
    r.register(
        "SparseLDLSolver",
        "direct LDLᵀ solver (faer Cholesky)",
        |_, t| {
            Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
                "SparseLDLSolver",
                t,
            )?)))
        },
    );
    r.register(
        "BTDLinearSolver",
        "block-tridiagonal direct solver (sparse Cholesky: exact on the block-tridiagonal matrices of beam chains)",
        |_, t| {
            Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
                "BTDLinearSolver",
                t,
            )?)))
        },
    );
    r.register(
        "EigenSimplicialLDLT",
        "direct LDLᵀ solver (faer Cholesky)",
        |_, t| {
            Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
                "EigenSimplicialLDLT",
                t,
            )?)))
        },
    );
    r.register(
        "EigenSimplicialLLT",
        "direct Cholesky solver (faer)",
        |_, t| {
            Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
                "EigenSimplicialLLT",
                t,
            )?)))
        },
    );
    r.register("EigenSparseLU", "direct LU solver (faer)", |_, t| {
        Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
            "EigenSparseLU",
            t,
        )?)))
    });
    r.register("EigenSparseQR", "direct QR solver (faer)", |_, t| {
        Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
            "EigenSparseQR",
            t,
        )?)))
    });
    r.register(
        "PrecomputedLinearSolver",
        "factors the first step's matrix once and reuses it",
        |_, t| {
            Ok(AnyComponent::Linear(Box::new(DirectSolver::new(
                "PrecomputedLinearSolver",
                t,
            )?)))
        },
    );
    r.register(
        "PCGLinearSolver",
        "preconditioned conjugate gradient (warm-started)",
        |_, t| Ok(AnyComponent::Linear(Box::new(PcgLinearSolver::new(t)?))),
    );
    r.register("MinResLinearSolver", "MINRES (warm-started)", |_, t| {
        Ok(AnyComponent::Linear(Box::new(MinResLinearSolver::new(t)?)))
    });
    r.register(
        "SpringForceField",
        "springs with geometric stiffness (StiffSpringForceField)",
        |_, t| {
            vec3_only(t, "SpringForceField")?;
            Ok(AnyComponent::ForceField(Box::new(SpringForceField::new())))
        },
    );
    r.register(
        "RegularGridSpringForceField",
        "springs along a regular grid's lines, face and cube diagonals",
        |_, t| {
            vec3_only(t, "RegularGridSpringForceField")?;
            Ok(AnyComponent::ForceField(Box::new(SpringForceField::grid())))
        },
    );
    r.register(
        "TriangularFEMForceFieldOptim",
        "corotational plane-stress membrane triangles",
        |_, t| {
            vec3_only(t, "TriangularFEMForceFieldOptim")?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_fem::TriangularFemForceFieldOptim::new(),
            )))
        },
    );
    r.register(
        "TetrahedronHyperelasticityFEMForceField",
        "hyperelastic tetrahedra (ArrudaBoyce, StVenantKirchhoff, NeoHookean, MooneyRivlin, VerondaWestman, Costa, Ogden, StableNeoHookean)",
        |_, t| {
            vec3_only(t, "TetrahedronHyperelasticityFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_fem::TetrahedronHyperelasticityFemForceField::new(),
            )))
        },
    );
    r.register(
        "QuadBendingFEMForceField",
        "quads: bilinear membrane on x, y and transverse shear on z (SOFA's element)",
        |_, t| {
            vec3_only(t, "QuadBendingFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_fem::QuadBendingFemForceField::new(),
            )))
        },
    );
    r.register(
        "TriangularBendingSprings",
        "springs between the apexes of the triangles around each inner edge",
        |_, t| {
            vec3_only(t, "TriangularBendingSprings")?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_fem::TriangularBendingSprings::new(),
            )))
        },
    );
    r.register(
        "TriangularFEMForceField",
        "corotational plane-stress triangles (method large)",
        |_, t| {
            vec3_only(t, "TriangularFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_fem::TriangularFemForceField::new(),
            )))
        },
    );
    r.register(
        "FastTriangularBendingSprings",
        "linear bending springs across the edges shared by two triangles",
        |_, t| {
            vec3_only(t, "FastTriangularBendingSprings")?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_fem::FastTriangularBendingSprings::new(),
            )))
        },
    );
    r.register(
        "QuadularBendingSprings",
        "two springs across each edge shared by two quads",
        |_, t| {
            vec3_only(t, "QuadularBendingSprings")?;
            Ok(AnyComponent::ForceField(Box::new(
                SpringForceField::quadular(),
            )))
        },
    );
    r.register(
        "TriangleFEMForceField",
        "corotational plane-stress (or plane-strain) triangles with a thickness (method large)",
        |_, t| {
            vec3_only(t, "TriangleFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_fem::TriangularFemForceField::triangle_fem(),
            )))
        },
    );
    r.register(
        "QuadBendingSprings",
        "springs across the edges shared by two quads",
        |_, t| {
            vec3_only(t, "QuadBendingSprings")?;
            Ok(AnyComponent::ForceField(Box::new(
                SpringForceField::quad_bending(),
            )))
        },
    );
    r.register(
        "MeshSpringForceField",
        "springs along the topology's edges and element diagonals",
        |_, t| {
            vec3_only(t, "MeshSpringForceField")?;
            Ok(AnyComponent::ForceField(Box::new(SpringForceField::mesh())))
        },
    );
    r.register(
        "HexahedronFEMForceFieldAndMass",
        "hexahedral FEM carrying SOFA's element masses",
        |_, t| {
            vec3_only(t, "HexahedronFEMForceFieldAndMass")?;
            Ok(AnyComponent::ForceField(Box::new(
                HexahedronFemForceField::with_mass(),
            )))
        },
    );
    r.register(
        "FastTetrahedralCorotationalForceField",
        "edge-based corotational tetrahedra (qr, polar, polar2, none)",
        |_, t| {
            vec3_only(t, "FastTetrahedralCorotationalForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                canape_fem::FastTetrahedralCorotationalForceField::new(),
            )))
        },
    );
    r.register("LinearSmallStrainFEMForceField", "linear elasticity on tetrahedra or hexahedra (template Vec3,Tetrahedron / Vec3,Hexahedron)", |_, t| {
        Ok(AnyComponent::ForceField(Box::new(ElementFemForceField::new(false, t)?)))
    });
    r.register("CorotationalFEMForceField", "corotational elasticity on tetrahedra or hexahedra (template Vec3,Tetrahedron / Vec3,Hexahedron)", |_, t| {
        Ok(AnyComponent::ForceField(Box::new(ElementFemForceField::new(true, t)?)))
    });
    r.register(
        "FEMMass",
        "consistent element mass from a NodalMassDensity (template Vec3,Hexahedron)",
        |_, t| Ok(AnyComponent::Mass(Box::new(FemMass::new(t)?))),
    );
    r.register(
        "MeshGmshLoader",
        "Gmsh .msh (v1, v2 ASCII) loader",
        |_, _| {
            Ok(AnyComponent::Loader(Box::new(MeshLoaderComponent::new(
                MeshFormat::Gmsh,
            ))))
        },
    );
    r.register("MeshOBJLoader", "Wavefront .obj loader", |_, _| {
        Ok(AnyComponent::Loader(Box::new(MeshLoaderComponent::new(
            MeshFormat::Obj,
        ))))
    });
    r.register(
        "MeshVTKLoader",
        "VTK loader (legacy ASCII/binary, XML .vtu/.vtp ASCII)",
        |_, _| {
            Ok(AnyComponent::Loader(Box::new(MeshLoaderComponent::new(
                MeshFormat::Vtk,
            ))))
        },
    );
    r.register("SphereLoader", "SOFA .sph sphere loader", |_, _| {
        Ok(AnyComponent::Loader(Box::new(SphereLoader::new())))
    });
    r.register("BarycentricMapping", "maps points inside tetrahedra/hexahedra of the input", |_, t| {
        if !t.is_empty() && !t.split(',').all(|p| DofType::from_template(p) == Some(DofType::Vec3) || p.trim().starts_with("Ogl") || p.trim().starts_with("ExtVec3")) {
            return Err(format!("template '{t}' is not supported by BarycentricMapping yet (Vec3d to Vec3d only)"));
        }
        Ok(AnyComponent::Mapping(Box::new(BarycentricMapping::new())))
    });
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
                canape_base::mappings::SkinningMapping::new(),
            )))
        },
    );
    r.register(
        "BeamLinearMapping",
        "points along a chain of beams between Rigid3 frames",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(
                canape_base::mappings::BeamLinearMapping::new(),
            )))
        },
    );
    r.register(
        "SquareMapping",
        "squares of Vec1 values, with geometric stiffness",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(
                canape_base::square::SquareMapping::new(),
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
                canape_base::mappings::CenterOfMassMapping::new(),
            )))
        },
    );
    r.register(
        "AreaMapping",
        "triangle areas (Vec3 to Vec1), with geometric stiffness",
        |_, _| {
            Ok(AnyComponent::Mapping(Box::new(
                canape_base::area::AreaMapping::new(),
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
    r.register(
        "StringMeshCreator",
        "points along a segment joined by edges",
        |_, _| Ok(AnyComponent::Loader(Box::new(StringMeshCreator::new()))),
    );
    r.register(
        "GridMeshCreator",
        "procedural 2D grid mesh (points, triangles or quads, edges)",
        |_, _| Ok(AnyComponent::Loader(Box::new(GridMeshCreator::new()))),
    );
    r.register("SphereROI", "points and elements inside spheres", |_, t| {
        vec3_only(t, "SphereROI")?;
        Ok(AnyComponent::Engine(Box::new(
            canape_base::engine::ShapeRoi::sphere(),
        )))
    });
    r.register(
        "PlaneROI",
        "points and elements inside boxes built on parallelograms",
        |_, t| {
            vec3_only(t, "PlaneROI")?;
            Ok(AnyComponent::Engine(Box::new(
                canape_base::engine::ShapeRoi::plane(),
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
    r
}
