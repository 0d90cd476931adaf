//! A warm step allocates nothing: a counting global allocator watches steps of SOFA's tier-1
//! TetrahedronFEMForceField.scn (four beams, implicit Euler, matrix-free CG) after the first
//! steps have sized every buffer, then FixedProjectiveConstraint.scn (mappings to a visual model
//! and a collision state), then mechanics through mappings (mapped masses and force fields, an
//! interaction between mapped states, a nonlinear mapping) with a matrix-free solver, then two
//! balls with their own solvers resting on a floor and against each other (implicit and explicit
//! contacts, a stable contact set). One test,
//! alone in its test binary, so no other test allocates meanwhile.

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
        if std::env::var_os("CANAPE_REQUIRE_SOFA").is_some() {
            panic!("CANAPE_REQUIRE_SOFA is set but ../shared/sofa is absent");
        }
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
    // mechanics through mappings, matrix-free
    let n = check_mapped_mechanics(
        r#"<CGLinearSolver iterations="30" tolerance="1e-12" threshold="1e-12"/>"#,
    );
    assert_eq!(
        n, 0,
        "{n} heap allocations in 10 warm steps through mappings"
    );
    eprintln!(
        "assembled through mappings: {} allocations in 10 warm steps",
        check_mapped_mechanics("<SparseLDLSolver/>")
    );
    // collision with a stable set of contacts: balls resting on a floor (implicit contacts)
    // and on each other under different solvers (explicit contacts)
    let mut sim = canape::load_scene_str(
        RESTING_BALLS,
        "resting.scn",
        &std::env::temp_dir(),
        &Default::default(),
    )
    .unwrap();
    for _ in 0..400 {
        sim.step();
    }
    let contacts = |sim: &canape::Simulation| -> usize {
        sim.scene
            .force_fields
            .iter()
            .flatten()
            .map(|f| f.contacts().len())
            .sum()
    };
    let before = contacts(&sim);
    let n = allocations_in_warm_steps(&mut sim);
    assert!(before >= 3, "only {before} contacts");
    assert_eq!(contacts(&sim), before, "the contacts changed");
    assert_eq!(n, 0, "{n} heap allocations in 10 warm steps with contacts");
}

/// Two balls, each with its own solver, resting on a floor side by side, within the alarm
/// distance of each other.
const RESTING_BALLS: &str = r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <MinProximityIntersection alarmDistance="0.2" contactDistance="0.05"/>
  <CollisionResponse/>
  <Node name="floor">
    <MechanicalObject position="-5 0 -5  5 0 -5  5 0 5  -5 0 5"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0" contactStiffness="100"/>
  </Node>
  <Node name="a">
    <EulerImplicitSolver rayleighMass="1"/>
    <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-20"/>
    <MechanicalObject position="-0.55 0.54 0"/>
    <UniformMass totalMass="1"/>
    <SphereCollisionModel radius="0.5" contactStiffness="100"/>
  </Node>
  <Node name="b">
    <EulerImplicitSolver rayleighMass="1"/>
    <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-20"/>
    <MechanicalObject position="0.55 0.54 0"/>
    <UniformMass totalMass="1"/>
    <SphereCollisionModel radius="0.5" contactStiffness="100"/>
  </Node>
</Node>"#;

/// Mechanics through mappings under an ODE solver: a rigid body carrying a mapped point mass
/// (RigidMapping), identity-mapped copies of a chain joined by interaction springs, a nonlinear
/// DistanceMapping with a spring-like force on its output: x and v go down, forces go up, dx
/// goes down in every matrix-free product.
const MAPPED_MECHANICS: &str = r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <EulerImplicitSolver rayleighStiffness="0.05" rayleighMass="0.1"/>
  <CGLinearSolver iterations="30" tolerance="1e-12" threshold="1e-12"/>
  <Node name="body">
    <MechanicalObject template="Rigid3" position="0 0 0 0 0 0 1"/>
    <UniformMass template="Rigid3" vertexMass="1"/>
    <PartialFixedProjectiveConstraint fixedDirections="1 1 1 0 0 0"/>
    <Node name="tip"><MechanicalObject position="1 0 0"/><UniformMass vertexMass="0.5"/><RigidMapping/></Node>
  </Node>
  <Node name="A">
    <MechanicalObject name="dofs" position="0 0 0 1 0 0 2 0 0"/>
    <UniformMass vertexMass="1"/>
    <FixedProjectiveConstraint indices="0"/>
    <SpringForceField spring="0 1 100 0.5 1  1 2 100 0.5 1"/>
    <Node name="copy"><MechanicalObject name="dofs"/><IdentityMapping/></Node>
    <Node name="lengths">
      <MechanicalObject template="Vec1"/>
      <EdgeSetTopologyContainer edges="0 1 1 2"/>
      <DistanceMapping/>
      <RestShapeSpringsForceField template="Vec1" stiffness="50"/>
    </Node>
  </Node>
  <Node name="B">
    <MechanicalObject name="dofs" position="3 0 0 4 0 0"/>
    <UniformMass vertexMass="1"/>
    <SpringForceField spring="0 1 100 0.5 1"/>
    <Node name="copy"><MechanicalObject name="dofs"/><IdentityMapping/></Node>
  </Node>
  <SpringForceField object1="@A/copy/dofs" object2="@B/copy/dofs" spring="2 0 80 0.3 1"/>
</Node>"#;

/// Called from the one test: tests of a binary run in parallel, and the counter is global.
fn check_mapped_mechanics(solver: &str) -> usize {
    let text = MAPPED_MECHANICS.replace(
        r#"<CGLinearSolver iterations="30" tolerance="1e-12" threshold="1e-12"/>"#,
        solver,
    );
    let mut sim = canape::load_scene_str(
        &text,
        "mapped.scn",
        &std::env::temp_dir(),
        &Default::default(),
    )
    .unwrap();
    assert!(
        !sim.diagnostics.has_errors(),
        "{:?}",
        sim.diagnostics.iter().collect::<Vec<_>>()
    );
    let n = allocations_in_warm_steps(&mut sim);
    assert!(sim.time() > 0.0);
    n
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
