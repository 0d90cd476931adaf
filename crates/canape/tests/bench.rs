//! `canape bench`'s per-scene record: every phase named (mapping, collision and Lagrangian constraints included), linear iterations
//! per step, and the JSON fields. Nothing here depends on how long anything takes.

use canape::bench::{bench_scene, scaling_beam, to_json, BeamElement};
use canape::LoadOptions;

#[test]
fn bench_reports_phases_and_iterations() {
    let dir = std::env::temp_dir().join(format!("canape-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // CG with a zero tolerance makes exactly its iteration count; a direct solve counts one
    for (solver, iterations) in [(Some(7), 7.0), (None, 1.0)] {
        let (text, _) = scaling_beam(BeamElement::Hexa, 64, solver);
        let path = dir.join(format!("beam-{iterations}.scn"));
        std::fs::write(&path, text).unwrap();
        let r = bench_scene(&path, 3, 1, &LoadOptions::default(), &[]);
        assert!(r.error.is_none(), "{:?}", r.error);
        let names: Vec<&str> = r.phases_ms.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            names,
            [
                "forces",
                "assembly",
                "linear solve",
                "projection",
                "mapping",
                "collision",
                "constraints",
                "other"
            ]
        );
        assert!(r.phases_ms.iter().all(|(_, v)| v.is_finite() && *v >= 0.0));
        assert_eq!(r.iterations, Some(iterations));
        let json = to_json(std::slice::from_ref(&r));
        assert!(
            json.contains(&format!("\"iterations_per_step\": {iterations}")),
            "{json}"
        );
        assert!(json.contains("\"mapping\": "), "{json}");
        assert!(json.contains("\"collision\": "), "{json}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
