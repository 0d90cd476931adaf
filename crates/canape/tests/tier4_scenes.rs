//! Scenes beyond tiers 1–3 that pass SOFA's metric with the motion check since the components
//! they need exist: RegularGridTopology.scn (RegularGridSpringForceField and a BarycentricMapping
//! on the grid, 10 000 steps) and TetrahedronFEMForceField_plasticity.scn (SOFA's strain
//! plasticity and PlaneForceField; its collision pipeline runs and finds no contact within the
//! compared steps),
//! FastTriangularBendingSprings.scn (membrane triangles of TriangularFEMForceFieldOptim and
//! bending springs), QuadBendingFEMForceField.scn (a legacy VTK quad mesh, DiagonalMass on quads),
//! SparseGridTopology.scn (a surface mesh voxelised into hexahedra with boundary coefficients
//! under HexahedronFEMForceField; its dragons' sphere models, carried by their grids, never
//! meet), and from the topology list Tetra2TriangleTopologicalMapping.scn (the containers' element lists
//! compared as SOFA's topology regression does).

mod common;

use canape::io::regress::parse_list;
use canape::regression::{run_entry, Verdict};
use canape::LoadOptions;

const LISTS: &[(&str, &[&str])] = &[
    ("RegressionStateScenes.regression-tests", SCENES),
    (
        "RegressionTopologyScenes.regression-tests",
        &["Component/Topology/Mapping/Tetra2TriangleTopologicalMapping.scn"],
    ),
];

const SCENES: &[&str] = &[
    "Component/Topology/Container/Grid/RegularGridTopology.scn",
    "Component/SolidMechanics/FEM/TetrahedronFEMForceField_plasticity.scn",
    "Component/SolidMechanics/Spring/FastTriangularBendingSprings.scn",
    "Component/SolidMechanics/FEM/QuadBendingFEMForceField.scn",
    "Component/Topology/Container/Grid/SparseGridTopology.scn",
];

#[test]
fn further_scenes_pass_sofas_metric() {
    let Some(sofa) = common::require_sofa("tier4") else {
        return;
    };
    for (list, scenes) in LISTS {
        let l = parse_list(&sofa.join("examples").join(list), Some(&sofa)).expect("list parses");
        for scene in *scenes {
            let e = l
                .entries
                .iter()
                .find(|e| e.scene == *scene)
                .unwrap_or_else(|| panic!("{scene} not in the list"));
            let r = run_entry(&l, e, &LoadOptions::default());
            match r.verdict {
                Verdict::Pass => eprintln!(
                    "{scene}: pass (errorByDof {:.3e}, motion {:.3}%)",
                    r.error_by_dof.unwrap(),
                    r.motion_ratio.unwrap() * 100.0
                ),
                Verdict::NoReference => panic!("{scene}: its reference is missing"),
                Verdict::Fail(m) | Verdict::Error(m) => panic!("{scene}: {m}"),
            }
        }
    }
}
