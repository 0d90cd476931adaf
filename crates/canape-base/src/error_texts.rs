//! The typed errors read as the Strings they replaced (diagnostics and tests compare the text).

use crate::engine::mesh_tetra_stuffing::{stuff, StuffingError, StuffingParams};
use crate::mapping::barycentric::BarycentricError;
use crate::mapping::tubular::TubularError;
use crate::topology::edge2quad::Edge2QuadError;

fn texts(cases: &[(&dyn std::error::Error, &str)]) {
    for (e, text) in cases {
        assert_eq!(e.to_string(), *text);
    }
}

#[test]
fn stuffing_errors_read_as_before() {
    let params = StuffingParams::default();
    let why = |p: &[[f64; 3]], t: &[[u32; 3]], q: &[[u32; 4]], params: &StuffingParams| {
        stuff(p, t, q, params).unwrap_err().to_string()
    };
    let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    assert_eq!(
        why(&[], &[], &[], &params),
        "Empty input mesh. Use data dependency to link them to a loaded Topology or MeshLoader"
    );
    assert_eq!(
        why(&[[0.0, f64::NAN, 0.0]], &[[0, 0, 0]], &[], &params),
        "input point 0 is not finite: [0.0, NaN, 0.0]"
    );
    assert_eq!(
        why(&p, &[[0, 1, 5]], &[], &params),
        "input triangle 0 uses point 5, but there are 3 input points"
    );
    assert_eq!(
        why(&p, &[], &[[0, 1, 2, 3]], &params),
        "input quad 0 uses point 3, but there are 3 input points"
    );
    let zero = StuffingParams {
        size: 0.0,
        ..StuffingParams::default()
    };
    assert_eq!(
        why(&p, &[[0, 1, 2]], &[], &zero),
        "size must be a non-zero number (the cell size, or minus the number of cells along the box's largest side), not 0"
    );
    texts(&[
        (
            &StuffingError::NonFiniteBox {
                bbox: [[0.0, 0.0, 0.0], [f64::INFINITY, 1.0, 1.0]],
            },
            "vbbox is not finite: [[0.0, 0.0, 0.0], [inf, 1.0, 1.0]]",
        ),
        (
            &StuffingError::DegenerateCellSize {
                cellsize: 0.0,
                size: -4.0,
                lo: [0.0; 3],
                hi: [0.0; 3],
            },
            "degenerate cell size 0 (size -4, box [0.0, 0.0, 0.0]–[0.0, 0.0, 0.0]): the surface has no extent",
        ),
        (
            &StuffingError::CellTooSmall {
                cellsize: 1e-9,
                lo: [0.0; 3],
                hi: [1.0; 3],
            },
            "the cell size 0.000000001 is too small for the box [0.0, 0.0, 0.0]–[1.0, 1.0, 1.0]: the lattice would be too large",
        ),
        (
            &StuffingError::InvertedBox {
                axis: 1,
                lo: 2.0,
                hi: 1.5,
            },
            "vbbox is inverted along axis 1 (2 > 1.5): no lattice",
        ),
        (
            &StuffingError::TooManyPoints {
                cellsize: 0.01,
                points: 9000000,
                max: 8388608,
            },
            "the cell size 0.01 gives a lattice of 9000000 points (more than 8388608): use a larger size",
        ),
    ]);
}

#[test]
fn mapping_errors_read_as_before() {
    texts(&[
        (
            &BarycentricError::TopologyBeyondState { max: 8, points: 4 },
            "the input topology uses point 8, but the input state has 4 points",
        ),
        (
            &BarycentricError::NoElements,
            "the input topology has no elements (tetrahedra, hexahedra, triangles, quads or edges)",
        ),
        (
            &BarycentricError::NoElementNear,
            "no element is near enough to a mapped point",
        ),
        (
            &BarycentricError::NoHexahedron,
            "the input grid has no hexahedron to map points in",
        ),
        (
            &BarycentricError::HexahedronBeyondGrid {
                hexahedron: 5,
                count: 2,
            },
            "the input grid located a point in hexahedron 5, beyond its 2",
        ),
        (&TubularError::NoRadius, "no radius is given"),
        (
            &TubularError::BadRadius { radius: -0.5 },
            "radius -0.5 is not a positive number",
        ),
        (
            &TubularError::PointsPerCircle { n: 0, max: 1 << 26 },
            "nbPointsOnEachCircle is 0: a number of points per circle from 1 to 67108864 is needed",
        ),
        (
            &Edge2QuadError::NoRadius,
            "no radius (neither radius nor radiusFocal) is given: no quad is created",
        ),
        (
            &Edge2QuadError::BadRadius { radius: 0.0 },
            "radius 0 is not a positive number: no quad is created",
        ),
        (
            &Edge2QuadError::NoPointPerCircle { n: -3 },
            "nbPointsOnEachCircle is -3: at least 1 point per circle is needed, no quad is created",
        ),
        (
            &Edge2QuadError::TooManyPointsPerCircle { n: 1 << 27 },
            "nbPointsOnEachCircle 134217728 is too large: no quad is created",
        ),
    ]);
}

#[test]
fn load_and_engine_errors_read_as_before() {
    use crate::engine::select::WidthMismatch;
    use crate::engine::transform_position::{parse_tfm, TfmError};
    use crate::mechanical_load::loads::ConstantForceError;
    use canape_types::DofType;
    assert_eq!(
        parse_tfm("Fixed: 0 0 0").unwrap_err(),
        TfmError::NoParameters
    );
    texts(&[
        (
            &parse_tfm("Fixed: 0 0 0").unwrap_err(),
            "transformation not found (no line holding 'Parameters')",
        ),
        (
            &parse_tfm("Parameters: 1 2 3").unwrap_err(),
            "the 'Parameters' line holds 3 numbers, expected 12",
        ),
        (
            &ConstantForceError::IndexOutOfRange { index: 7, n: 5 },
            "index 7 is out of range (the state has 5 points)",
        ),
        (
            &ConstantForceError::NotMultiple {
                name: "totalForce",
                values: 4,
                dof: DofType::Rigid3,
                ds: 6,
            },
            "totalForce has 4 values: a force on this Rigid3d state has 6",
        ),
        (
            &ConstantForceError::ForcesCount {
                vectors: 2,
                indices: 3,
            },
            "forces has 2 vectors for 3 indices",
        ),
        (
            &WidthMismatch {
                state: "dofs".into(),
                state_width: 7,
                width: 3,
            },
            "the MechanicalObject 'dofs' has coordinates of 7 numbers, this engine's template 3",
        ),
    ]);
}
