//! Helpers shared by the integration tests: the SOFA checkout beside the repository, the
//! tier-1 scenes, and a scene loaded from XML text with what its tests read of it.
#![allow(dead_code)]

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions, Simulation};
use std::path::{Path, PathBuf};

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

/// The scene of `xml`, as if it were the file `name`, loaded with the default options; it
/// must load without errors.
pub fn load(xml: &str, name: &str) -> Simulation {
    let sim =
        load_scene_str(xml, name, Path::new("."), &LoadOptions::default()).expect("scene loads");
    assert!(!sim.diagnostics.has_errors(), "{:?}", sim.diagnostics);
    sim
}

/// The vector `v` of the state named `name`.
pub fn vec_of(sim: &Simulation, name: &str, v: VecId) -> Vec<f64> {
    let id = sim
        .scene
        .component_ids()
        .find(|c| sim.scene.info(*c).name == name)
        .unwrap_or_else(|| panic!("no component {name}"));
    sim.scene.state(id).unwrap().vec(v).to_vec()
}

/// How many contacts the force fields (the collision responses among them) hold.
pub fn contacts_total(sim: &Simulation) -> usize {
    sim.scene
        .force_fields
        .iter()
        .flatten()
        .map(|f| f.contacts().len())
        .sum()
}
