//! SOFA's exporter components in scenes: VTKExporter and MeshExporter write the files SOFA's
//! schedule asks for (at init, after every N-th step, at the end), with the state's positions at
//! those moments, readable back by Canapé's own loaders; Monitor writes one gnuplot line per step.

use canape::core::state::VecId;
use canape::io::loaders::parse_gmsh;
use canape::io::vtk_read::parse_vtk;
use canape::{load_scene_str, LoadOptions, Simulation};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("canape-export-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A falling hexahedral beam (3×2×2 points) with `extra` components beside its state.
fn beam(dir: &Path, extra: &str) -> Simulation {
    let scene = format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <Node name="beam">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-20"/>
    <RegularGridTopology n="3 2 2" min="0 0 0" max="2 1 1"/>
    <MechanicalObject name="dofs"/>
    <UniformMass totalMass="1"/>
    <HexahedronFEMForceField youngModulus="500" poissonRatio="0.3"/>
    <FixedProjectiveConstraint indices="0 3 6 9"/>
    {extra}
  </Node>
</Node>"#
    );
    let sim = load_scene_str(&scene, "export.scn", dir, &LoadOptions::default()).unwrap();
    assert!(!sim.diagnostics.has_errors(), "{:?}", sim.diagnostics);
    sim
}

fn positions(sim: &Simulation) -> Vec<f64> {
    let id = sim
        .scene
        .component_ids()
        .find(|c| sim.scene.info(*c).name == "dofs")
        .unwrap();
    sim.scene.state(id).unwrap().vec(VecId::POSITION).to_vec()
}

fn close(a: &[[f64; 3]], b: &[f64]) -> bool {
    a.len() * 3 == b.len()
        && a.iter()
            .flatten()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-5 * (1.0 + y.abs()))
}

#[test]
fn vtk_exporter_writes_at_begin_every_n_steps_and_at_end() {
    for xml in [true, false] {
        let dir = tmp(if xml { "vtu" } else { "vtk" });
        let base = dir.join("beam");
        let mut sim = beam(
            &dir,
            &format!(
                r#"<VTKExporter filename="{}" XMLformat="{}" edges="0" hexas="1" exportAtBegin="1" exportAtEnd="1" exportEveryNumberOfSteps="2" pointsDataFields="dofs.velocity" cellsDataFields="HexahedronFEMForceField1.youngModulus"/>"#,
                base.display(),
                u8::from(xml)
            ),
        );
        let mut shots = vec![positions(&sim)];
        for k in 1..=5 {
            sim.step();
            if k % 2 == 0 {
                shots.push(positions(&sim));
            }
        }
        sim.finish();
        shots.push(positions(&sim));
        // one file at init, after steps 2 and 4, one at the end: numbered by file, from 0
        for (i, x) in shots.iter().enumerate() {
            let name = if xml {
                format!("beam{i}.vtu")
            } else {
                format!("beam_{i}.vtk")
            };
            let bytes = std::fs::read(dir.join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mesh = parse_vtk(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(mesh.hexahedra.len(), 2, "{name}");
            assert!(mesh.edges.is_empty(), "{name}: edges were not asked for");
            assert!(
                close(&mesh.points, x),
                "{name}: positions differ from the state's"
            );
            let text = String::from_utf8(bytes).unwrap();
            assert!(
                text.contains("velocity") && text.contains("youngModulus"),
                "{name}: the point and cell Data are missing"
            );
        }
        let extra = if xml { "beam4.vtu" } else { "beam_4.vtk" };
        assert!(!dir.join(extra).exists(), "one file too many: {extra}");
    }
}

#[test]
fn mesh_exporter_numbers_its_files_by_period_in_each_format() {
    let dir = tmp("mesh");
    let base = dir.join("out");
    let mut sim = beam(
        &dir,
        &format!(
            r#"<MeshExporter filename="{}" format="gmsh" exportEveryNumberOfSteps="3" position="@dofs.position"/>"#,
            base.display()
        ),
    );
    let mut at = Vec::new();
    for k in 1..=7 {
        sim.step();
        if k % 3 == 0 {
            at.push(positions(&sim));
        }
    }
    for (i, x) in at.iter().enumerate() {
        let name = format!("out{:05}.gmsh", i + 1);
        let text =
            std::fs::read_to_string(dir.join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mesh = parse_gmsh(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(mesh.hexahedra.len(), 2, "{name}");
        // 9 significant digits
        assert!(
            mesh.points
                .iter()
                .flatten()
                .zip(x)
                .all(|(p, q)| (p - q).abs() <= 1e-8 * (1.0 + q.abs())),
            "{name}: positions differ from the state's"
        );
    }
    assert!(!dir.join("out00003.gmsh").exists());
    // every format at once
    let dir = tmp("all");
    let base = dir.join("all");
    let mut sim = beam(
        &dir,
        &format!(
            r#"<MeshExporter filename="{}" exportAtEnd="1"/>"#,
            base.display()
        ),
    );
    sim.step();
    sim.finish();
    for ext in ["vtu", "vtk", "mesh", "node", "gmsh", "obj"] {
        assert!(dir.join(format!("all.{ext}")).exists(), "all.{ext} missing");
    }
    let vtu = parse_vtk(&std::fs::read(dir.join("all.vtu")).unwrap()).unwrap();
    let vtk = parse_vtk(&std::fs::read(dir.join("all.vtk")).unwrap()).unwrap();
    assert_eq!(vtu.hexahedra.len(), 2);
    assert_eq!(vtk.hexahedra.len(), 2);
    assert!(close(&vtu.points, &positions(&sim)));
}

#[test]
fn monitor_writes_one_line_per_step() {
    let dir = tmp("monitor");
    let base = dir.join("tip");
    let mut sim = beam(
        &dir,
        &format!(
            r#"<Monitor name="tipMonitor" indices="2 11" ExportPositions="1" ExportVelocities="1" fileName="{}"/>"#,
            base.display()
        ),
    );
    let mut xs = Vec::new();
    for _ in 0..4 {
        sim.step();
        xs.push(positions(&sim));
    }
    let text = std::fs::read_to_string(dir.join("tip_x.txt")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "# Gnuplot File : positions of 2 particle(s) Monitored"
    );
    assert_eq!(
        lines[1],
        "# 1st Column : time, others : particle(s) number 2 11 "
    );
    assert_eq!(lines.len(), 2 + 4, "{text}");
    for (k, (line, x)) in lines[2..].iter().zip(&xs).enumerate() {
        let cols: Vec<&str> = line.split('\t').collect();
        let t: f64 = cols[0].parse().unwrap();
        assert!((t - 0.01 * (k + 1) as f64).abs() < 1e-9, "{line}");
        let p11: Vec<f64> = cols[2].split(' ').map(|v| v.parse().unwrap()).collect();
        assert!(close(&[[p11[0], p11[1], p11[2]]], &x[33..36]), "{line}");
    }
    assert!(dir.join("tip_v.txt").exists());
    assert!(!dir.join("tip_f.txt").exists());
}

/// `p` as a path from the working directory (up to the root, then down): a component named so
/// writes, relative to the working directory as SOFA does, into `p` (the tests run in parallel,
/// so they never change the working directory).
fn from_working_dir(p: &Path) -> String {
    let cwd = std::env::current_dir().unwrap();
    let up = cwd.components().count() - 1;
    let p = p.canonicalize().unwrap();
    format!(
        "{}{}",
        "../".repeat(up),
        p.strip_prefix("/").unwrap().display()
    )
}

#[test]
fn exporters_without_a_file_name_write_under_their_component_name() {
    let dir = tmp("named");
    let (vtk, mesh, monitor) = (
        from_working_dir(&dir) + "/cells",
        from_working_dir(&dir) + "/grid",
        from_working_dir(&dir) + "/tip",
    );
    let mut sim = beam(
        &dir,
        &format!(
            r#"<VTKExporter name="{vtk}" hexas="1" exportAtBegin="1"/>
    <MeshExporter name="{mesh}" format="gmsh" exportAtBegin="1"/>
    <Monitor name="{monitor}" indices="2" ExportPositions="1"/>"#
        ),
    );
    for _ in 0..3 {
        sim.step();
    }
    // SOFA's exporters (BaseSimulationExporter) take the component's name for a missing
    // filename: VTKExporter then numbers its XML files, MeshExporter adds the format's extension
    let cells = std::fs::read(dir.join("cells0.vtu")).unwrap();
    assert_eq!(parse_vtk(&cells).unwrap().hexahedra.len(), 2);
    let grid = std::fs::read_to_string(dir.join("grid.gmsh")).unwrap();
    assert_eq!(parse_gmsh(&grid).unwrap().hexahedra.len(), 2);
    // SOFA's Monitor: without fileName, "./" and the component's name
    let text = std::fs::read_to_string(dir.join("tip_x.txt")).unwrap();
    assert_eq!(text.lines().count(), 2 + 3, "{text}");
}
