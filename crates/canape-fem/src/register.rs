//! This crate's components (finite-element force fields and springs), registered under SOFA's class
//! names: the facade's registry calls [`register`], and so can an application's own registry.

use crate::tetra::Flavor;
use crate::ElementFemForceField;
use crate::FemMass;
use crate::HexahedronFemForceField;
use crate::SpringForceField;
use crate::TetrahedronFemForceField;
use canape_core::registry::{known_template, vec3_only, Registry};
use canape_core::scene::AnyComponent;

/// Register this crate's components.
pub fn register(r: &mut Registry) {
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
        "BeamFEMForceField",
        "corotational 3D beams between Rigid3 nodes",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::BeamFemForceField::new(),
            )))
        },
    );
    r.register(
        "JointSpringForceField",
        "joints between Rigid3 frames (free axes, angle limits, damping)",
        |_, t| {
            known_template(t)?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::JointSpringForceField::new(),
            )))
        },
    );
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
                crate::TriangularFemForceFieldOptim::new(),
            )))
        },
    );
    r.register(
        "TetrahedronHyperelasticityFEMForceField",
        "hyperelastic tetrahedra (ArrudaBoyce, StVenantKirchhoff, NeoHookean, MooneyRivlin, VerondaWestman, Costa, Ogden, StableNeoHookean)",
        |_, t| {
            vec3_only(t, "TetrahedronHyperelasticityFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::TetrahedronHyperelasticityFemForceField::new(),
            )))
        },
    );
    r.register(
        "QuadBendingFEMForceField",
        "quads: bilinear membrane on x, y and transverse shear on z (SOFA's element)",
        |_, t| {
            vec3_only(t, "QuadBendingFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::QuadBendingFemForceField::new(),
            )))
        },
    );
    r.register(
        "TriangularBendingSprings",
        "springs between the apexes of the triangles around each inner edge",
        |_, t| {
            vec3_only(t, "TriangularBendingSprings")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::TriangularBendingSprings::new(),
            )))
        },
    );
    r.register(
        "TriangularFEMForceField",
        "corotational plane-stress triangles (method large)",
        |_, t| {
            vec3_only(t, "TriangularFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::TriangularFemForceField::new(),
            )))
        },
    );
    r.register(
        "TriangularBiquadraticSpringsForceField",
        "membrane triangles as springs on squared edge lengths, angular springs, area penalty",
        |_, t| {
            vec3_only(t, "TriangularBiquadraticSpringsForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::TriangularBiquadraticSpringsForceField::new(),
            )))
        },
    );
    r.register(
        "TriangularQuadraticSpringsForceField",
        "membrane triangles as springs on edge lengths, with angular springs",
        |_, t| {
            vec3_only(t, "TriangularQuadraticSpringsForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::TriangularQuadraticSpringsForceField::new(),
            )))
        },
    );
    r.register(
        "TriangularTensorMassForceField",
        "linear membrane triangles as per-edge stiffness tensors (tensor-mass model)",
        |_, t| {
            vec3_only(t, "TriangularTensorMassForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::TriangularTensorMassForceField::new(),
            )))
        },
    );
    r.register(
        "TetrahedralTensorMassForceField",
        "linear elastic tetrahedra as per-edge stiffness tensors (tensor-mass model)",
        |_, t| {
            vec3_only(t, "TetrahedralTensorMassForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::TetrahedralTensorMassForceField::new(),
            )))
        },
    );
    r.register(
        "StandardTetrahedralFEMForceField",
        "hyperelastic tetrahedra assembled per edge (ArrudaBoyce, StVenantKirchhoff, NeoHookean, MooneyRivlin, VerondaWestman, Costa, Ogden)",
        |_, t| {
            vec3_only(t, "StandardTetrahedralFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::StandardTetrahedralFemForceField::new(),
            )))
        },
    );
    r.register(
        "FastTriangularBendingSprings",
        "linear bending springs across the edges shared by two triangles",
        |_, t| {
            vec3_only(t, "FastTriangularBendingSprings")?;
            Ok(AnyComponent::ForceField(Box::new(
                crate::FastTriangularBendingSprings::new(),
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
                crate::TriangularFemForceField::triangle_fem(),
            )))
        },
    );
    r.register(
        "TriangleBendingSprings",
        "springs between the points opposite each edge shared by two triangles",
        |_, t| {
            vec3_only(t, "TriangleBendingSprings")?;
            Ok(AnyComponent::ForceField(Box::new(
                SpringForceField::triangle_bending(),
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
        "HexahedralFEMForceField",
        "corotational hexahedral FEM (large, polar) on hexahedron sets",
        |_, t| {
            vec3_only(t, "HexahedralFEMForceField")?;
            Ok(AnyComponent::ForceField(Box::new(
                HexahedronFemForceField::hexahedral(false),
            )))
        },
    );
    r.register(
        "HexahedralFEMForceFieldAndMass",
        "corotational hexahedral FEM on hexahedron sets, carrying element masses",
        |_, t| {
            vec3_only(t, "HexahedralFEMForceFieldAndMass")?;
            Ok(AnyComponent::ForceField(Box::new(
                HexahedronFemForceField::hexahedral(true),
            )))
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
                crate::FastTetrahedralCorotationalForceField::new(),
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
}
