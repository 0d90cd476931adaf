//! The typed errors read as the Strings they replaced (diagnostics and tests compare the text).

use crate::common::MethodError;
use crate::edge_triangles::EdgeTrianglesError;
use crate::hyperelastic::{Material, MaterialError};
use crate::joint::JointSpringError;
use crate::spring::SpringSetupError;
use crate::standard_tetra::StandardMaterialError;

fn texts(cases: &[(&dyn std::error::Error, &str)]) {
    for (e, text) in cases {
        assert_eq!(e.to_string(), *text);
    }
}

#[test]
fn material_errors_read_as_before() {
    let refusal = |name: &str, p: &[f64]| Material::from_name(name, p).unwrap_err();
    assert_eq!(
        refusal("NeoHookean", &[1.0]).to_string(),
        "material NeoHookean needs 2 parameters in ParameterSet (1 given)"
    );
    assert_eq!(
        refusal("NeoHookean", &[1.0, f64::NAN]).to_string(),
        "ParameterSet holds a non-finite value"
    );
    assert_eq!(
        refusal("Ogden", &[1.0, 0.0, 1.0]).to_string(),
        "Ogden's α1 (second parameter) must not be 0"
    );
    assert_eq!(
        refusal("StableNeoHookean", &[1.0, -1.0]).to_string(),
        "StableNeoHookean needs μ + λ ≠ 0"
    );
    assert_eq!(
        refusal("Rubber", &[]),
        MaterialError::Unknown {
            name: "Rubber".into()
        }
    );
    texts(&[
        (
            &refusal("Rubber", &[]),
            "unknown material 'Rubber' (ArrudaBoyce, StVenantKirchhoff, NeoHookean, MooneyRivlin, VerondaWestman, Costa, Ogden, StableNeoHookean)",
        ),
        (
            &StandardMaterialError::NotOffered { name: "Costa".into() },
            "material name 'Costa' is not valid for this force field (SOFA's StandardTetrahedralFEMForceField offers ArrudaBoyce, StVenantKirchhoff, NeoHookean, MooneyRivlin, VerondaWestman, Costa, Ogden)",
        ),
        (
            &StandardMaterialError::from(MaterialError::NonFiniteParameter),
            "ParameterSet holds a non-finite value",
        ),
        (
            &StandardMaterialError::NonFiniteModuli { name: "Ogden".into() },
            "material Ogden: its parameters give non-finite moduli at rest",
        ),
        (
            &StandardMaterialError::NonPositiveShear {
                name: "Ogden".into(),
                shear: -0.5,
            },
            "material Ogden: the parameters give a shear modulus -0.5 ≤ 0 at rest (a negative modulus?): the material is unstable",
        ),
        (
            &StandardMaterialError::NegativeBulk {
                name: "Ogden".into(),
                bulk: -2.0,
            },
            "material Ogden: the parameters give a bulk modulus -2 < 0 at rest: the material is unstable",
        ),
        (
            &MethodError::Unknown {
                method: "qrr".into(),
            },
            "qrr",
        ),
        (
            &EdgeTrianglesError::SideNotAnEdge {
                triangle: 3,
                a: 1,
                b: 2,
            },
            "triangle 3's side (1, 2) is not among the topology's edges",
        ),
    ]);
}

#[test]
fn spring_errors_read_as_before() {
    texts(&[
        (
            &SpringSetupError::NoState,
            "no MechanicalObject in the context",
        ),
        (
            &SpringSetupError::NotVec3 {
                class: "MeshSpringForceField",
                dof: "Rigid3d",
            },
            "MeshSpringForceField acts on Vec3d states; the context state is Rigid3d",
        ),
        (
            &SpringSetupError::NegativeIndex { spring: 2 },
            "spring 2 has a negative index",
        ),
        (
            &SpringSetupError::IndexCounts {
                indices1: 3,
                indices2: 2,
            },
            "indices1 has 3 entries but indices2 has 2",
        ),
        (
            &SpringSetupError::PointBeyondState {
                a: 1,
                b: 9,
                points: 4,
            },
            "a spring joins points 1 and 9, but the state has 4 points",
        ),
        (
            &SpringSetupError::PointBeyondObjects {
                a: 1,
                na: 4,
                b: 9,
                nb: 5,
            },
            "a spring joins point 1 of object1 (4 points) and point 9 of object2 (5 points)",
        ),
        (
            &SpringSetupError::NoTopology,
            "no topology in the context: the springs are built from its elements",
        ),
        (
            &SpringSetupError::NoQuads,
            "no topology with quads in the context",
        ),
        (
            &SpringSetupError::NoFaces,
            "no topology with triangles or quads in the context",
        ),
        (
            &SpringSetupError::TopologyBeyondState { max: 7, points: 4 },
            "the topology uses point 7, but the state has 4 points",
        ),
        (
            &SpringSetupError::QuadsBeyondState { points: 4 },
            "the quads use points beyond the state's 4 points",
        ),
        (
            &SpringSetupError::FacesBeyondState { points: 4 },
            "the faces use points beyond the state's 4 points",
        ),
        (
            &JointSpringError::ExpectedBegin { found: "KD".into() },
            "expected BEGIN_SPRING, found 'KD'",
        ),
        (&JointSpringError::NoEnd, "a spring has no END_SPRING"),
        (
            &JointSpringError::UnknownKey { key: "KS_Q".into() },
            "unknown key 'KS_Q' in a spring",
        ),
        (
            &JointSpringError::MissingValue { what: "KS_T" },
            "KS_T: missing value",
        ),
        (
            &JointSpringError::NotANumber {
                what: "R_LIM_Y",
                token: "x".into(),
            },
            "R_LIM_Y: 'x' is not a number",
        ),
    ]);
}

#[test]
fn missing_side_reads_as_before() {
    use crate::edge_tetrahedra::{EdgeTetrahedra, MissingSide};
    use canape_core::mesh::Mesh;
    texts(&[(
        &MissingSide {
            tetrahedron: 2,
            a: 4,
            b: 7,
        },
        "tetrahedron 2's side (4, 7) is not among the topology's edges",
    )]);
    // the warning the force fields give when the explicit edges lack a side
    let mesh = Mesh {
        tetrahedra: vec![[0, 1, 2, 3]],
        edges: vec![[0, 1]],
        ..Mesh::default()
    };
    let (_, warning) = EdgeTetrahedra::new(&mesh);
    assert_eq!(
        warning.as_deref(),
        Some("tetrahedron 0's side (0, 2) is not among the topology's edges: the edges are rebuilt from the tetrahedra")
    );
}
