//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/sofa` beside the repository, if present.
pub fn sofa_dir() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/sofa");
    p.join("examples")
        .is_dir()
        .then(|| p.canonicalize().unwrap_or(p))
}

/// Print a visible notice when the SOFA data is absent (the test then checks nothing more);
/// fail instead when CANAPE_REQUIRE_SOFA is set (CI sets it: the checks must run there).
pub fn require_sofa(test: &str) -> Option<PathBuf> {
    let d = sofa_dir();
    if d.is_none() {
        no_sofa(test);
    }
    d
}

/// Say loudly that ../shared/sofa is absent, or fail when CANAPE_REQUIRE_SOFA is set.
pub fn no_sofa(test: &str) {
    if std::env::var_os("CANAPE_REQUIRE_SOFA").is_some() {
        panic!("{test}: CANAPE_REQUIRE_SOFA is set but ../shared/sofa is absent");
    }
    eprintln!("NOTICE: {test}: ../shared/sofa is absent; SOFA reference checks skipped");
}

/// The 14 tier-1 scenes of the foundation issue.
pub const TIER1: &[&str] = &[
    "Benchmark/Performance/MatrixAssembly/MatrixAssembly_assembledCG.scn",
    "Benchmark/Performance/MatrixAssembly/MatrixAssembly_assembledCG_blocs.scn",
    "Benchmark/Performance/MatrixAssembly/MatrixAssembly_matrixfreeCG.scn",
    "Component/Constraint/Projective/FixedProjectiveConstraint.scn",
    "Component/LinearSolver/Iterative/FEMBAR_CGLinearSolver.scn",
    "Component/LinearSolver/Iterative/FEMBAR_CGLinearSolver_assembled.scn",
    "Component/Mass/DiagonalMass.scn",
    "Component/Mass/MeshMatrixMass.scn",
    "Component/Mass/UniformMass.scn",
    "Component/ODESolver/Backward/EulerImplicitSolver.scn",
    "Component/SolidMechanics/FEM/HexahedronFEMForceField.scn",
    "Component/SolidMechanics/FEM/TetrahedralCorotationalFEMForceField.scn",
    "Component/SolidMechanics/FEM/TetrahedronFEMForceField.scn",
    "Component/SolidMechanics/FEM/TetrahedronFEMForceField_assemble.scn",
];
