//! Tests of MeshTetraStuffing: reference meshes, the lattice, the flips, the ray test and the
//! component.

use super::builder::need_flip;
use super::geometry::{dot, ray_intersection, vol6};
use super::lattice::edge_size2;
use super::*;
use canape_core::component::Component;
use canape_core::diag::{Diagnostics, Severity};
use canape_core::scene::{AnyComponent, Scene};
use std::path::PathBuf;

/// The unit cube's surface, 12 outward triangles.
fn cube() -> (Vec<P3>, Vec<[u32; 3]>) {
    let p = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 1.0],
        [1.0, 1.0, 1.0],
        [0.0, 1.0, 1.0],
    ];
    let t = vec![
        [0, 2, 1],
        [0, 3, 2],
        [4, 5, 6],
        [4, 6, 7],
        [0, 1, 5],
        [0, 5, 4],
        [3, 7, 6],
        [3, 6, 2],
        [0, 4, 7],
        [0, 7, 3],
        [1, 2, 6],
        [1, 6, 5],
    ];
    (p, t)
}

/// FNV-1a (64 bits) of the points (f64, little endian) followed by the tetrahedra (u32).
fn checksum(s: &Stuffing) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for p in &s.points {
        for c in p {
            eat(&c.to_le_bytes());
        }
    }
    for t in &s.tetrahedra {
        for v in t {
            eat(&v.to_le_bytes());
        }
    }
    h
}

fn assert_positive(s: &Stuffing) {
    for (k, t) in s.tetrahedra.iter().enumerate() {
        let p = t.map(|v| s.points[v as usize]);
        assert!(
            vol6(p[0], p[1], p[2], p[3]) > 0.0,
            "tetrahedron {k} {t:?} is not positive"
        );
    }
    assert!(s
        .tetrahedra
        .iter()
        .flatten()
        .all(|&v| (v as usize) < s.points.len()));
}

// The expected numbers below come from the line-by-line Python port of SOFA's doUpdate
// (brute-force ray cast), run on the same inputs.

#[test]
fn cube_with_default_settings_matches_the_reference() {
    let (p, t) = cube();
    let s = stuff(&p, &t, &[], &StuffingParams::default()).unwrap();
    assert_eq!((s.points.len(), s.tetrahedra.len()), (1625, 6912));
    assert_eq!(
        s.tetrahedra[..3],
        [[1, 0, 802, 729], [1, 0, 793, 802], [2, 1, 803, 730]]
    );
    assert_eq!(s.points[0], [-0.010000000000000009; 3]);
    assert_eq!(
        s.points[1],
        [0.1175, -0.010000000000000009, -0.010000000000000009]
    );
    assert_eq!(checksum(&s), 0xc8976d720097feab);
    assert_eq!(s.bbox, [[-0.01; 3], [1.01; 3]]);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_positive(&s);
}

#[test]
fn cube_snapped_and_split_matches_the_reference() {
    let (p, t) = cube();
    let params = StuffingParams {
        snap_points: true,
        split_tetrahedra: true,
        ..StuffingParams::default()
    };
    let s = stuff(&p, &t, &[], &params).unwrap();
    assert_eq!((s.points.len(), s.tetrahedra.len()), (2885, 10608));
    assert_eq!(
        s.tetrahedra[..2],
        [[857, 855, 343, 2501], [857, 855, 2565, 343]]
    );
    assert_eq!(s.points[0], [0.1175; 3]);
    assert_eq!(checksum(&s), 0x48753ac748c3a82f);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_positive(&s);
}

#[test]
fn coarse_cube_exercises_snapping_and_matches_the_reference() {
    // 56 inside points snapped, 54 cut points
    let (p, t) = cube();
    let params = StuffingParams {
        size: 0.3,
        alpha_long: 0.3,
        alpha_short: 0.4,
        snap_points: true,
        split_tetrahedra: true,
        ..StuffingParams::default()
    };
    let s = stuff(&p, &t, &[], &params).unwrap();
    assert_eq!((s.points.len(), s.tetrahedra.len()), (145, 432));
    assert_eq!(
        s.tetrahedra[..3],
        [[0, 103, 31, 27], [0, 103, 47, 31], [0, 103, 43, 47]]
    );
    assert_eq!(s.points[1], [0.5, 0.20000000000000007, 0.20000000000000007]);
    assert_eq!(checksum(&s), 0x22dbe1b1eede59ca);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_positive(&s);
    // the cube is filled, less what its sharp edges and corners lose to the cuts
    let v: f64 = s
        .tetrahedra
        .iter()
        .map(|t| {
            let p = t.map(|v| s.points[v as usize]);
            vol6(p[0], p[1], p[2], p[3]) / 6.0
        })
        .sum();
    assert!(v > 0.9 && v <= 1.0, "volume {v}");
}

#[test]
fn neighbours_are_symmetric_and_consistent() {
    let l = Lattice::around(&[[0.0; 3], [1.0, 0.6, 0.3]], 0.25).unwrap();
    let pos = l.positions();
    for p in 0..l.len() {
        for e in 0..EDGESHELL {
            if let Some(q) = l.nb(p, e) {
                assert_eq!(l.nb(q, e ^ 1), Some(p), "p {p} e {e}");
                let d = sub(pos[q], pos[p]);
                let len2 = dot(d, d) / (l.cellsize * l.cellsize / 4.0);
                assert!((len2 - edge_size2(e)).abs() < 1e-9);
            }
        }
        // a g point always has its 8 h neighbours
        if p < l.ph0 {
            assert!((6..EDGESHELL).all(|e| l.nb(p, e).is_some()));
        }
    }
}

#[test]
fn need_flip_follows_the_parity_of_the_permutation() {
    assert!(!need_flip([0, 1, 2, 3], [0, 1, 2, 3]));
    assert!(need_flip([0, 1, 3, 2], [0, 1, 2, 3]));
    assert!(need_flip([1, 2, 3, 0], [0, 1, 2, 3]));
    assert!(!need_flip([2, 3, 0, 1], [0, 1, 2, 3]));
    assert!(need_flip([7, 5, 9, 6], [6, 7, 5, 9]));
}

#[test]
fn ray_test_counts_edges_and_excludes_the_origin() {
    let (a, b, c) = ([0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]);
    let up = [0.0, 0.0, 0.5];
    assert_eq!(ray_intersection(a, b, c, [0.25, 0.25, 0.0], up), Some(2.0));
    // on the hypotenuse (u + v = 1) and on a vertex
    assert_eq!(ray_intersection(a, b, c, [0.5, 0.5, 0.0], up), Some(2.0));
    assert_eq!(ray_intersection(a, b, c, [0.0, 0.0, 0.0], up), Some(2.0));
    assert_eq!(ray_intersection(a, b, c, [0.6, 0.5, 0.0], up), None);
    // behind, from the plane itself, parallel
    assert_eq!(ray_intersection(a, b, c, [0.25, 0.25, 2.0], up), None);
    assert_eq!(ray_intersection(a, b, c, [0.25, 0.25, 1.0], up), None);
    assert_eq!(
        ray_intersection(a, b, c, [0.25, 0.25, 0.0], [1.0, 0.0, 0.0]),
        None
    );
}

/// Run the component through its InitContext.
fn init(e: &mut MeshTetraStuffing) -> Diagnostics {
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    let id = scene.add_component(
        root,
        "stuffing",
        AnyComponent::Engine(Box::new(e.clone())),
        None,
    );
    let mut diags = Diagnostics::default();
    let mut ctx = InitContext {
        scene: &scene,
        node: root,
        id,
        diags: &mut diags,
    };
    e.init_impl(&mut ctx);
    diags
}

fn cube_component() -> MeshTetraStuffing {
    let (p, t) = cube();
    let mut e = MeshTetraStuffing::new();
    let d = e.data_mut();
    d.set_value(
        "inputPoints",
        Value::Reals(p.iter().flatten().copied().collect()),
    )
    .unwrap();
    d.set_value(
        "inputTriangles",
        Value::Ints(t.iter().flatten().copied().collect()),
    )
    .unwrap();
    e
}

#[test]
fn component_writes_the_outputs_and_the_box() {
    let mut e = cube_component();
    e.data_mut().set_str("splitTetras", "1").unwrap();
    e.data_mut().set_str("snapPoints", "true").unwrap();
    let diags = init(&mut e);
    assert!(diags.is_empty(), "{diags:?}");
    let d = e.data();
    assert_eq!(d.reals("outputPoints").len(), 3 * 2885);
    assert_eq!(d.ints("outputTetras").len(), 4 * 10608);
    assert_eq!(d.reals("vbbox"), &[-0.01, -0.01, -0.01, 1.01, 1.01, 1.01]);
    assert!(d.field("outputTetrahedra").unwrap().output);
}

#[test]
fn quads_are_split_into_two_triangles() {
    // the cube as 6 quads gives the triangles of `cube()` (each quad (a,b,c,d) → abc, acd)
    let (p, _) = cube();
    let q = [
        [0, 3, 2, 1],
        [4, 5, 6, 7],
        [0, 1, 5, 4],
        [3, 7, 6, 2],
        [0, 4, 7, 3],
        [1, 2, 6, 5],
    ];
    let s = stuff(&p, &[], &q, &StuffingParams::default()).unwrap();
    assert_eq!(checksum(&s), 0xc8976d720097feab);
}

#[test]
fn bad_input_is_reported_without_panicking() {
    let error = |e: &mut MeshTetraStuffing| {
        let diags = init(e);
        assert!(
            diags.iter().any(|d| d.severity == Severity::Error),
            "{diags:?}"
        );
        assert!(e.data().reals("outputPoints").is_empty());
        assert!(e.data().ints("outputTetrahedra").is_empty());
    };
    // no triangles
    let mut e = cube_component();
    e.data_mut()
        .set_value("inputTriangles", Value::Ints(vec![]))
        .unwrap();
    error(&mut e);
    // no points at all
    error(&mut MeshTetraStuffing::new());
    // zero size
    let mut e = cube_component();
    e.data_mut().set_str("size", "0").unwrap();
    error(&mut e);
    // a size far too small for the box
    let mut e = cube_component();
    e.data_mut().set_str("size", "1e-6").unwrap();
    error(&mut e);
    // all points at one place: no extent
    let mut e = cube_component();
    e.data_mut()
        .set_value("inputPoints", Value::Reals(vec![0.5; 24]))
        .unwrap();
    error(&mut e);
    // an index beyond the points
    let mut e = cube_component();
    e.data_mut()
        .set_value("inputTriangles", Value::Ints(vec![0, 1, 8]))
        .unwrap();
    error(&mut e);
    // an inverted box along y
    let mut e = cube_component();
    e.data_mut().set_str("vbbox", "0 5 0 1 -5 1").unwrap();
    e.data_mut().set_str("size", "0.1").unwrap();
    error(&mut e);
    // an open surface (one triangle) gives a warning and no tetrahedron, not an error
    let mut e = cube_component();
    e.data_mut()
        .set_value("inputTriangles", Value::Ints(vec![0, 1, 2]))
        .unwrap();
    let diags = init(&mut e);
    assert!(!diags.has_errors(), "{diags:?}");
}

/// `../shared/sofa` beside the repository, if present.
fn sofa_dir() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/sofa");
    if p.join("share").is_dir() {
        return Some(p);
    }
    if std::env::var_os("CANAPE_REQUIRE_SOFA").is_some() {
        panic!("CANAPE_REQUIRE_SOFA is set but ../shared/sofa is absent");
    }
    eprintln!("NOTICE: ../shared/sofa is absent; MeshTetraStuffing reference checks skipped");
    None
}

/// The `v` and `f` lines of an OBJ file (faces of 3 as triangles, of 4 as quads, in order).
fn read_obj(path: PathBuf, scale: f64) -> (Vec<P3>, Vec<[u32; 3]>, Vec<[u32; 4]>) {
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let text = String::from_utf8_lossy(&text);
    let (mut p, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.first() {
            Some(&"v") => {
                let c: Vec<f64> = w[1..4].iter().map(|s| s.parse().unwrap()).collect();
                p.push([c[0] * scale, c[1] * scale, c[2] * scale]);
            }
            Some(&"f") => {
                let idx: Vec<u32> = w[1..]
                    .iter()
                    .map(|s| s.split('/').next().unwrap().parse::<u32>().unwrap() - 1)
                    .collect();
                match idx.len() {
                    3 => t.push([idx[0], idx[1], idx[2]]),
                    4 => q.push([idx[0], idx[1], idx[2], idx[3]]),
                    n => panic!("a face of {n} vertices"),
                }
            }
            _ => {}
        }
    }
    (p, t, q)
}

#[test]
fn torus_fall_matches_the_reference() {
    let Some(dir) = sofa_dir() else { return };
    let (p, t, _) = read_obj(dir.join("share/mesh/torus1-dilated-05.obj"), 10.0);
    let params = StuffingParams {
        size: 13.859131548844,
        alpha_long: 0.4,
        alpha_short: 0.4,
        ..StuffingParams::default()
    };
    let s = stuff(&p, &t, &[], &params).unwrap();
    assert_eq!((s.points.len(), s.tetrahedra.len()), (129, 392));
    assert_eq!(s.points[0], [0.0, 0.0, -41.577394646532]);
    assert_eq!(
        s.points[1],
        [-13.859131548843997, -13.859131548844, -27.718263097688]
    );
    assert_eq!(
        s.tetrahedra[..3],
        [[2, 1, 72, 65], [2, 1, 69, 72], [3, 2, 73, 66]]
    );
    assert_eq!(checksum(&s), 0xebce684d77ff45a5);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_positive(&s);
}

#[test]
fn liver_scene_matches_the_reference() {
    let Some(dir) = sofa_dir() else { return };
    let (p, t, _) = read_obj(dir.join("share/mesh/liver-smooth.obj"), 1.0);
    let params = StuffingParams {
        size: 0.7,
        alpha_long: 0.3,
        alpha_short: 0.4,
        snap_points: true,
        split_tetrahedra: true,
        ..StuffingParams::default()
    };
    let s = stuff(&p, &t, &[], &params).unwrap();
    assert_eq!((s.points.len(), s.tetrahedra.len()), (618, 1999));
    assert_eq!(s.tetrahedra[..2], [[0, 230, 120, 419], [0, 230, 118, 120]]);
    assert_eq!(checksum(&s), 0x6e12759eb81b63cf);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_positive(&s);
}

#[test]
fn tongue_with_quads_matches_the_reference() {
    let Some(dir) = sofa_dir() else { return };
    let (p, t, q) = read_obj(
        dir.join("examples/Tutorials/StepByStep/Dentistry_Haptics/data/mesh/tongue.obj"),
        1.0,
    );
    let params = StuffingParams {
        size: 0.2,
        alpha_long: 0.2,
        alpha_short: 0.4,
        snap_points: true,
        split_tetrahedra: true,
        ..StuffingParams::default()
    };
    let s = stuff(&p, &t, &q, &params).unwrap();
    assert_eq!((s.points.len(), s.tetrahedra.len()), (1405, 5051));
    assert_eq!(s.tetrahedra[..2], [[0, 623, 324, 320], [0, 623, 974, 324]]);
    assert_eq!(checksum(&s), 0xae9adf092c1839ad);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_positive(&s);
}
