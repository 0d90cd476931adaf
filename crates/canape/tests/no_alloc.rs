//! A warm step allocates nothing: a counting global allocator watches steps of SOFA's tier-1
//! TetrahedronFEMForceField.scn (four beams, implicit Euler, matrix-free CG) after the first
//! steps have sized every buffer, then FixedProjectiveConstraint.scn (mappings to a visual model
//! and a collision state). Alone in its test binary, so no other test allocates meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn warm_steps_do_not_allocate() {
    let scene = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../../shared/sofa/examples/Component/SolidMechanics/FEM/TetrahedronFEMForceField.scn",
    );
    let mut sim = if scene.is_file() {
        canape::load_scene(&scene, &canape::LoadOptions::default()).unwrap()
    } else {
        eprintln!(
            "notice: ../shared/sofa absent: checking the bundled demo's matrix-free twin instead"
        );
        let text = canape::DEMO_SCENE.replace(
            r#"<SparseLDLSolver name="linear solver"/>"#,
            r#"<CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>"#,
        );
        canape::load_scene_str(
            &text,
            "demo.scn",
            &std::env::temp_dir(),
            &Default::default(),
        )
        .unwrap()
    };
    let n = allocations_in_warm_steps(&mut sim);
    assert_eq!(n, 0, "{n} heap allocations in 10 warm steps");
    assert!(sim.time() > 0.0);
    // a scene with mappings (a visual model and a collision state under BarycentricMappings):
    // their propagation writes into the mapped buffers in place
    let mapped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../../shared/sofa/examples/Component/Constraint/Projective/FixedProjectiveConstraint.scn",
    );
    if mapped.is_file() {
        let mut sim = canape::load_scene(&mapped, &canape::LoadOptions::default()).unwrap();
        assert!(!sim.scene.mappings.is_empty());
        let n = allocations_in_warm_steps(&mut sim);
        assert_eq!(
            n,
            0,
            "{n} heap allocations in 10 warm steps of {}",
            mapped.display()
        );
    }
}

/// Heap allocations during 10 steps after 3 that size every buffer.
fn allocations_in_warm_steps(sim: &mut canape::Simulation) -> usize {
    for _ in 0..3 {
        sim.step();
    }
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    for _ in 0..10 {
        sim.step();
    }
    COUNTING.store(false, Ordering::Relaxed);
    ALLOCATIONS.load(Ordering::Relaxed)
}
