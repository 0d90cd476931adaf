//! SOFA's tier-1 scenes against SOFA's recorded results, with SOFA's metric and the motion check.
//! Scenes whose reference is held back are checked against the reference of a twin scene that
//! differs only in how the same linear system is solved (assembled vs matrix-free CG), and for
//! sanity (finite, moving, fixed points fixed).

mod common;

use canape::io::regress::{motion_check, object_error, parse_list, RegressionList};
use canape::io::state_io::{parse_frames, read_gz_text};
use canape::record::{run_recorded, Recorder};
use canape::regression::{reference_files, run_entry, Verdict};
use canape::{load_scene, LoadOptions};

fn list() -> Option<RegressionList> {
    let sofa = common::require_sofa("tier1")?;
    Some(
        parse_list(
            &sofa.join("examples/RegressionStateScenes.regression-tests"),
            Some(&sofa),
        )
        .expect("list parses"),
    )
}

#[test]
fn tier1_scenes_pass_sofas_metric() {
    let Some(l) = list() else { return };
    let mut checked = 0;
    for scene in common::TIER1 {
        let e = l
            .entries
            .iter()
            .find(|e| e.scene == *scene)
            .unwrap_or_else(|| panic!("{scene} not in the list"));
        let r = run_entry(&l, e, &LoadOptions::default());
        match r.verdict {
            Verdict::Pass => {
                checked += 1;
                eprintln!(
                    "{scene}: pass (errorByDof {:.3e}, motion {:.3}%)",
                    r.error_by_dof.unwrap(),
                    r.motion_ratio.unwrap() * 100.0
                );
            }
            Verdict::NoReference => {
                eprintln!("{scene}: no reference here (checked by twin/sanity tests)")
            }
            Verdict::Fail(m) | Verdict::Error(m) => panic!("{scene}: {m}"),
        }
    }
    assert!(checked >= 9, "only {checked} tier-1 scenes had a reference");
}

/// Run `scene` with the list's settings and compare it to the reference of `twin`.
fn check_against_twin(l: &RegressionList, scene: &str, twin: &str) {
    let e = l.entries.iter().find(|e| e.scene == scene).unwrap();
    let te = l.entries.iter().find(|e| e.scene == twin).unwrap();
    let refs = reference_files(l, te);
    assert!(!refs.is_empty(), "twin {twin} has no reference");
    let mut sim = load_scene(&l.dir.join(scene), &LoadOptions::default()).expect("loads");
    assert!(
        !sim.diagnostics.has_errors(),
        "{scene}: {:?}",
        sim.diagnostics.errors().next()
    );
    let mut rec = Recorder::new(&sim, false, true);
    run_recorded(&mut sim, e.steps, &mut rec, false, |_, _| {});
    let mut total = 0.0;
    for (k, name, path) in &refs {
        let ours = rec.recordings.iter().find(|r| r.k == *k).unwrap();
        assert_eq!(&ours.name, name);
        let frames = parse_frames(&read_gz_text(path).unwrap()).unwrap();
        total += object_error(&frames, &ours.frames, ours.points).unwrap();
        let (dev, motion) = motion_check(&frames, &ours.frames).unwrap();
        assert!(
            dev <= 0.1 * motion,
            "{scene} vs {twin}: deviation {dev} vs motion {motion}"
        );
    }
    let ebd = total / refs.len() as f64;
    assert!(
        ebd <= e.epsilon,
        "{scene} vs reference of {twin}: errorByDof {ebd:e} > {}",
        e.epsilon
    );
    eprintln!("{scene} vs {twin}'s reference: errorByDof {ebd:.3e}");
}

#[test]
fn held_back_scenes_match_their_twins_references() {
    let Some(l) = list() else { return };
    let mm = "Benchmark/Performance/MatrixAssembly/MatrixAssembly_matrixfreeCG.scn";
    check_against_twin(
        &l,
        "Benchmark/Performance/MatrixAssembly/MatrixAssembly_assembledCG.scn",
        mm,
    );
    check_against_twin(
        &l,
        "Benchmark/Performance/MatrixAssembly/MatrixAssembly_assembledCG_blocs.scn",
        mm,
    );
    check_against_twin(
        &l,
        "Component/LinearSolver/Iterative/FEMBAR_CGLinearSolver.scn",
        "Component/LinearSolver/Iterative/FEMBAR_CGLinearSolver_assembled.scn",
    );
}

#[test]
fn held_back_liver_scenes_move_and_keep_fixed_points() {
    let Some(l) = list() else { return };
    for scene in [
        "Component/Mass/UniformMass.scn",
        "Component/Constraint/Projective/FixedProjectiveConstraint.scn",
    ] {
        let e = l.entries.iter().find(|e| e.scene == scene).unwrap();
        let mut sim = load_scene(&l.dir.join(scene), &LoadOptions::default()).unwrap();
        assert!(!sim.diagnostics.has_errors());
        let x0 = sim.scene.states[0]
            .as_ref()
            .unwrap()
            .vec(canape::core::state::VecId::POSITION)
            .to_vec();
        for _ in 0..e.steps {
            sim.step();
        }
        assert!(sim.find_non_finite().is_none());
        let x = sim.scene.states[0]
            .as_ref()
            .unwrap()
            .vec(canape::core::state::VecId::POSITION)
            .to_vec();
        for i in [3usize, 39, 64] {
            assert_eq!(
                &x[3 * i..3 * i + 3],
                &x0[3 * i..3 * i + 3],
                "{scene}: fixed point {i} moved"
            );
        }
        let motion = x
            .iter()
            .zip(&x0)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            motion > 0.05 && motion < 5.0,
            "{scene}: implausible motion {motion}"
        );
        // the liver falls (gravity −y): mean y decreases
        let my = |v: &[f64]| v.chunks_exact(3).map(|p| p[1]).sum::<f64>() / (v.len() / 3) as f64;
        assert!(
            my(&x) < my(&x0),
            "{scene}: the liver should sag under gravity"
        );
    }
}
