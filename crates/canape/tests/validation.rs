//! Validation against independent expectations (no SOFA reference involved): energy behaviour of
//! time integrators on an undamped spring-mass oscillator.

use canape::core::state::VecId;
use canape::{load_scene_str, LoadOptions, Simulation};

const K: f64 = 100.0;
const M: f64 = 1.0;

fn oscillator(solver: &str, dt: f64) -> Simulation {
    let scene = format!(
        r#"<Node name="root" dt="{dt}" gravity="0 0 0">
  <DefaultAnimationLoop/>
  <Node name="oscillator">
    {solver}
    <MechanicalObject name="dofs" position="0 0 0  1.1 0 0"/>
    <UniformMass vertexMass="{M}"/>
    <FixedProjectiveConstraint indices="0"/>
    <SpringForceField spring="0 1 {K} 0 1"/>
  </Node>
</Node>"#
    );
    let sim = load_scene_str(
        &scene,
        "oscillator.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(sim.diagnostics.is_empty(), "{:?}", sim.diagnostics);
    sim
}

fn energy(sim: &Simulation) -> f64 {
    let s = sim.scene.states[0].as_ref().unwrap();
    let x = s.vec(VecId::POSITION);
    let v = s.vec(VecId::VELOCITY);
    let ke = 0.5 * M * (v[3] * v[3] + v[4] * v[4] + v[5] * v[5]);
    let d = ((x[3] - x[0]).powi(2) + (x[4] - x[1]).powi(2) + (x[5] - x[2]).powi(2)).sqrt();
    ke + 0.5 * K * (d - 1.0).powi(2)
}

#[test]
fn implicit_euler_dissipates_at_its_theoretical_rate() {
    // backward Euler on x'' = −ω²x multiplies the energy by 1/(1 + ω²h²) per step
    let h = 0.01;
    let mut sim = oscillator(r#"<EulerImplicitSolver/><SparseLDLSolver/>"#, h);
    let e0 = energy(&sim);
    let steps: i32 = 200;
    let mut prev = e0;
    for _ in 0..steps {
        sim.step();
        let e = energy(&sim);
        assert!(
            e <= prev * (1.0 + 1e-12),
            "energy must not grow: {e} > {prev}"
        );
        prev = e;
    }
    let w2h2 = K / M * h * h;
    let expected = (1.0 + w2h2).powi(-steps);
    let ratio = prev / e0;
    assert!(
        (ratio / expected - 1.0).abs() < 1e-6,
        "energy ratio {ratio}, theory {expected}"
    );
}

#[test]
fn symplectic_euler_conserves_energy_without_drift() {
    let h = 0.01;
    let mut sim = oscillator(r#"<EulerExplicitSolver/>"#, h);
    let e0 = energy(&sim);
    let w = (K / M).sqrt();
    let mut worst: f64 = 0.0;
    let mut late: f64 = 0.0;
    for i in 0..20000 {
        sim.step();
        let dev = (energy(&sim) / e0 - 1.0).abs();
        worst = worst.max(dev);
        if i >= 19000 {
            late = late.max(dev);
        }
    }
    // the energy error of symplectic Euler is O(ωh) and bounded: no secular drift
    assert!(
        worst < w * h,
        "energy deviation {worst} exceeds ωh = {}",
        w * h
    );
    assert!(late < w * h, "late deviation {late}: the energy drifts");
    assert!(
        worst > 1e-6,
        "symplectic Euler is not exact: a zero error means the test measures nothing"
    );
}

#[test]
fn explicit_euler_gains_energy() {
    // non-symplectic forward Euler multiplies the energy by (1 + ω²h²) per step
    let h = 0.01;
    let mut sim = oscillator(r#"<EulerExplicitSolver symplectic="0"/>"#, h);
    let e0 = energy(&sim);
    let steps = 200;
    for _ in 0..steps {
        sim.step();
    }
    let expected = (1.0 + K / M * h * h).powi(steps);
    let ratio = energy(&sim) / e0;
    assert!(
        (ratio / expected - 1.0).abs() < 1e-6,
        "energy ratio {ratio}, theory {expected}"
    );
}

/// Static tip deflection of a clamped cantilever (length L, square section h, tip load P, ν = 0)
/// with LinearSmallStrainFEMForceField, StaticSolver and a direct solver.
fn cantilever_tip(nl: usize, nh: usize, tet: bool, l: f64, h: f64) -> f64 {
    let (e, p) = (1e6, 1.0);
    let (ff, extra) = if tet {
        ("<LinearSmallStrainFEMForceField template=\"Vec3,Tetrahedron\" youngModulus=\"1e6\" poissonRatio=\"0\" topology=\"@tetras\"/>", "<TetrahedronSetTopologyContainer name=\"tetras\"/><Hexa2TetraTopologicalMapping input=\"@grid\" output=\"@tetras\" swapping=\"true\"/>")
    } else {
        ("<LinearSmallStrainFEMForceField template=\"Vec3,Hexahedron\" youngModulus=\"1e6\" poissonRatio=\"0\" topology=\"@grid\"/>", "")
    };
    let _ = e;
    let scene = format!(
        r#"<Node name="root" dt="1" gravity="0 0 0">
  <DefaultAnimationLoop/>
  <NewtonRaphsonSolver/>
  <StaticSolver/>
  <SparseLDLSolver/>
  <RegularGridTopology name="grid" min="0 {lo} {lo}" max="{l} {hi} {hi}" n="{a} {b} {b}"/>
  <MechanicalObject name="dofs"/>
  {extra}
  {ff}
  <BoxROI name="clamp" box="-1e-6 -1 -1 1e-6 1 1"/>
  <FixedProjectiveConstraint indices="@clamp.indices"/>
  <BoxROI name="tip" box="{t0} -1 -1 {t1} 1 1"/>
  <ConstantForceField indices="@tip.indices" totalForce="0 {mp} 0"/>
</Node>"#,
        lo = -h / 2.0,
        hi = h / 2.0,
        a = nl + 1,
        b = nh + 1,
        t0 = l - 1e-6,
        t1 = l + 1e-6,
        mp = -p
    );
    let mut sim = load_scene_str(
        &scene,
        "cantilever.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(sim.diagnostics.is_empty(), "{:?}", sim.diagnostics);
    let x0 = sim.scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::POSITION)
        .to_vec();
    sim.step();
    let x = sim.scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::POSITION)
        .to_vec();
    let tips: Vec<usize> = (0..x.len() / 3)
        .filter(|i| (x0[3 * i] - l).abs() < 1e-9)
        .collect();
    -tips
        .iter()
        .map(|i| x[3 * i + 1] - x0[3 * i + 1])
        .sum::<f64>()
        / tips.len() as f64
}

#[test]
fn cantilever_tip_deflection_converges_to_beam_theory() {
    let (l, h, e, p): (f64, f64, f64, f64) = (1.0, 0.1, 1e6, 1.0);
    let inertia = h.powi(4) / 12.0;
    let euler_bernoulli = p * l.powi(3) / (3.0 * e * inertia);
    let g = e / 2.0; // ν = 0
    let timoshenko = euler_bernoulli + p * l / (5.0 / 6.0 * g * h * h);
    let mut rows = Vec::new();
    for (nl, nh) in [(10, 1), (20, 2), (40, 4), (80, 8)] {
        let d = cantilever_tip(nl, nh, false, l, h);
        rows.push((nl, nh, d));
        eprintln!(
            "hexa {nl}x{nh}x{nh}: tip {d:.6e}  EB {:.3}%  Timoshenko {:.3}%",
            100.0 * (d / euler_bernoulli - 1.0),
            100.0 * (d / timoshenko - 1.0)
        );
    }
    for (nl, nh) in [(10, 1), (20, 2), (40, 4)] {
        let d = cantilever_tip(nl, nh, true, l, h);
        eprintln!(
            "tetra {nl}x{nh}x{nh}: tip {d:.6e}  EB {:.3}%  Timoshenko {:.3}%",
            100.0 * (d / euler_bernoulli - 1.0),
            100.0 * (d / timoshenko - 1.0)
        );
    }
    // deflection grows with refinement (locking of linear elements decreases) and converges
    for w in rows.windows(2) {
        assert!(
            w[1].2 > w[0].2,
            "deflection must increase with refinement: {:?}",
            rows
        );
    }
    let finest = rows.last().unwrap().2;
    assert!(
        (finest / timoshenko - 1.0).abs() < 0.01,
        "finest hexa mesh {finest} vs Timoshenko {timoshenko}"
    );
    assert!(
        (finest / euler_bernoulli - 1.0).abs() < 0.01,
        "finest hexa mesh {finest} vs Euler-Bernoulli {euler_bernoulli}"
    );
}

#[test]
fn thick_cantilever_converges_to_timoshenko() {
    // L/h = 3: shear adds ~5 % to the Euler-Bernoulli deflection; the 3D solution follows Timoshenko
    let (l, h, e, p): (f64, f64, f64, f64) = (0.9, 0.3, 1e6, 1.0);
    let eb = p * l.powi(3) / (3.0 * e * h.powi(4) / 12.0);
    let timoshenko = eb + p * l / (5.0 / 6.0 * e / 2.0 * h * h);
    let mut rows = Vec::new();
    for (nl, nh) in [(6, 2), (12, 4), (24, 8), (48, 16)] {
        let d = cantilever_tip(nl, nh, false, l, h);
        eprintln!(
            "thick hexa {nl}x{nh}x{nh}: tip {d:.6e}  EB {:.3}%  Timoshenko {:.3}%",
            100.0 * (d / eb - 1.0),
            100.0 * (d / timoshenko - 1.0)
        );
        rows.push(d);
    }
    let finest = *rows.last().unwrap();
    assert!(
        (finest / timoshenko - 1.0).abs() < 0.01,
        "finest {finest} vs Timoshenko {timoshenko}"
    );
    assert!(
        finest / eb - 1.0 > 0.03,
        "the thick beam must show the shear contribution"
    );
}

/// The python interpreter with scikit-fem (CANAPE_PYTHON, else python3), if it imports skfem.
fn skfem_python() -> Option<String> {
    let py = std::env::var("CANAPE_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&py)
        .args(["-c", "import skfem"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    ok.then_some(py)
}

#[test]
fn static_elasticity_matches_scikit_fem_on_the_same_mesh() {
    let Some(py) = skfem_python() else {
        if std::env::var_os("CANAPE_REQUIRE_SKFEM").is_some() {
            panic!("CANAPE_REQUIRE_SKFEM is set but scikit-fem cannot be imported");
        }
        eprintln!("NOTICE: scikit-fem is not installed (pip install scikit-fem, or set CANAPE_PYTHON): comparison skipped");
        return;
    };
    let (e, nu) = (2.0e5, 0.3);
    let scene = format!(
        r#"<Node name="root" dt="1" gravity="0 0 0">
  <DefaultAnimationLoop/>
  <NewtonRaphsonSolver/>
  <StaticSolver/>
  <SparseLDLSolver/>
  <RegularGridTopology name="grid" min="0 -0.1 -0.15" max="1 0.1 0.15" n="9 3 4"/>
  <MechanicalObject name="dofs"/>
  <TetrahedronSetTopologyContainer name="tetras"/>
  <Hexa2TetraTopologicalMapping input="@grid" output="@tetras" swapping="true"/>
  <LinearSmallStrainFEMForceField template="Vec3,Tetrahedron" youngModulus="{e}" poissonRatio="{nu}" topology="@tetras"/>
  <BoxROI name="clamp" box="-1e-6 -1 -1 1e-6 1 1"/>
  <FixedProjectiveConstraint indices="@clamp.indices"/>
  <BoxROI name="tip" box="0.999999 -1 -1 1.000001 1 1"/>
  <ConstantForceField indices="@tip.indices" totalForce="3 -10 4"/>
</Node>"#
    );
    let mut sim = load_scene_str(
        &scene,
        "skfem.scn",
        &std::env::temp_dir(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(sim.diagnostics.is_empty(), "{:?}", sim.diagnostics);
    let rest = sim.scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::REST_POSITION)
        .to_vec();
    sim.step();
    let x = sim.scene.states[0]
        .as_ref()
        .unwrap()
        .vec(VecId::POSITION)
        .to_vec();
    let find = |name: &str| {
        sim.scene
            .component_ids()
            .find(|c| sim.scene.info(*c).name == name)
            .unwrap()
    };
    let tets = sim
        .scene
        .topology(find("tetras"))
        .unwrap()
        .mesh()
        .tetrahedra
        .clone();
    let ints = |name: &str| {
        sim.scene
            .component(find(name))
            .unwrap()
            .data()
            .ints("indices")
            .to_vec()
    };
    let (fixed, tip) = (ints("clamp"), ints("tip"));
    let n = rest.len() / 3;
    let mut t = format!("{e} {nu}\npoints {n}\n");
    for p in rest.chunks_exact(3) {
        t += &format!("{:.17e} {:.17e} {:.17e}\n", p[0], p[1], p[2]);
    }
    t += &format!("tets {}\n", tets.len());
    for q in &tets {
        t += &format!("{} {} {} {}\n", q[0], q[1], q[2], q[3]);
    }
    t += &format!("fixed {}\n", fixed.len());
    for i in &fixed {
        t += &format!("{i}\n");
    }
    t += &format!("loads {}\n", tip.len());
    let k = tip.len() as f64;
    for i in &tip {
        t += &format!("{i} {:.17e} {:.17e} {:.17e}\n", 3.0 / k, -10.0 / k, 4.0 / k);
    }
    t += &format!("displacement {n}\n");
    for i in 0..n {
        t += &format!(
            "{:.17e} {:.17e} {:.17e}\n",
            x[3 * i] - rest[3 * i],
            x[3 * i + 1] - rest[3 * i + 1],
            x[3 * i + 2] - rest[3 * i + 2]
        );
    }
    let path = std::env::temp_dir().join(format!("canape-skfem-{}.txt", std::process::id()));
    std::fs::write(&path, t).unwrap();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/skfem_elasticity.py");
    let out = std::process::Command::new(&py)
        .arg(&script)
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scikit-fem script failed: {}{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("scikit-fem comparison: {stdout}");
    let diff: f64 = stdout
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("max_rel_diff printed");
    assert!(
        diff < 1e-8,
        "nodal displacements differ from scikit-fem by {diff:e} (relative)"
    );
}
