//! Tests of GenerateCylinder: counts, exact points and elements, orientation, closed
//! surface, and bad input.

use super::*;
use crate::engine::test_support::init_alone;
use std::collections::BTreeMap;

fn p(x: &[f64], i: u32) -> [f64; 3] {
    let o = 3 * i as usize;
    [x[o], x[o + 1], x[o + 2]]
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn close(a: [f64; 3], b: [f64; 3]) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() < 1e-12)
}

/// Six times the signed volume of each tetrahedron.
fn volumes(x: &[f64], t: &[u32]) -> Vec<f64> {
    t.chunks_exact(4)
        .map(|e| {
            let a = p(x, e[0]);
            dot(
                sub(p(x, e[1]), a),
                cross(sub(p(x, e[2]), a), sub(p(x, e[3]), a)),
            )
        })
        .collect()
}

#[test]
fn default_counts() {
    let mut e = GenerateCylinder::new();
    assert_eq!(init_alone(&mut e, &[]), 0);
    // (6·3 + 1)·5 points, 3·6·4 + 6·2·6·4 tetrahedra; open surface: 6·5 points, 2·6·4
    assert_eq!(e.data.reals("output_TetrahedraPosition").len(), 3 * 95);
    assert_eq!(e.data.ints("tetrahedra").len(), 4 * 360);
    assert_eq!(e.data.reals("output_TrianglesPosition").len(), 3 * 30);
    assert_eq!(e.data.ints("triangles").len(), 3 * 48);
    assert!(e.data.reals("BezierTetrahedronWeights").is_empty());
    // the aliases read the tetrahedra's points
    assert_eq!(
        e.data.value("output_position"),
        e.data.value("output_TetrahedraPosition")
    );
}

#[test]
fn points_and_first_prism_of_a_small_cylinder() {
    let mut e = GenerateCylinder::new();
    let n = init_alone(
        &mut e,
        &[
            ("radius", "2"),
            ("height", "3"),
            ("origin", "1 0 0"),
            ("resCircumferential", "4"),
            ("resRadial", "1"),
            ("resHeight", "2"),
        ],
    );
    assert_eq!(n, 0);
    let x = e.data.reals("position").to_vec();
    assert_eq!(x.len(), 3 * 10);
    // layer 0: centre, then angles 0, 90°, 180°, 270° at radius 2 around (1, 0)
    assert!(close(p(&x, 0), [1.0, 0.0, 0.0]));
    assert!(close(p(&x, 1), [3.0, 0.0, 0.0]));
    assert!(close(p(&x, 2), [1.0, 2.0, 0.0]));
    assert!(close(p(&x, 3), [-1.0, 0.0, 0.0]));
    assert!(close(p(&x, 4), [1.0, -2.0, 0.0]));
    // layer 1 at z = 3
    assert!(close(p(&x, 5), [1.0, 0.0, 3.0]));
    assert!(close(p(&x, 7), [1.0, 2.0, 3.0]));
    // first sector: the prism between angles 270° and 0°, top centre 5, bottom centre 0
    let t = e.data.ints("tetrahedra");
    assert_eq!(t.len(), 4 * 12);
    assert_eq!(&t[..12], &[9, 5, 6, 0, 9, 6, 4, 0, 0, 4, 1, 6]);
    // side: 2 triangles per sector, from the top point of the sector's first angle
    assert_eq!(&e.data.ints("triangles")[..6], &[4, 0, 1, 4, 1, 5]);
    let s = e.data.reals("output_TrianglesPosition");
    assert!(close(p(s, 4), [3.0, 0.0, 3.0]));
}

#[test]
fn tetrahedra_are_positive_and_fill_the_prism_volume() {
    let mut e = GenerateCylinder::new();
    let n = init_alone(
        &mut e,
        &[
            ("resCircumferential", "7"),
            ("resRadial", "3"),
            ("resHeight", "7"),
        ],
    );
    assert_eq!(n, 0);
    let x = e.data.reals("position");
    let t = e.data.ints("tetrahedra");
    assert_eq!(x.len(), 3 * 154);
    assert_eq!(t.len(), 4 * 630);
    let v = volumes(x, t);
    assert!(v.iter().all(|&v| v > 0.0), "an inverted tetrahedron");
    // the volume of the 7-sided prism of circumradius 0.2 and height 1
    let total: f64 = v.iter().sum::<f64>() / 6.0;
    let exact = 3.5 * 0.04 * (2.0 * PI / 7.0).sin();
    assert!((total - exact).abs() < 1e-12, "{total} vs {exact}");
}

#[test]
fn the_closed_surface_is_closed_and_faces_outwards() {
    let mut e = GenerateCylinder::new();
    let n = init_alone(&mut e, &[("openSurface", "0"), ("origin", "0.5 -1 2")]);
    assert_eq!(n, 0);
    let x = e.data.reals("output_TrianglesPosition");
    let t = e.data.ints("triangles");
    // 6·(5 + 2·2) + 2 points; 48 side + 2·6 fans + 4·2·6 ring triangles
    assert_eq!(x.len(), 3 * 56);
    assert_eq!(t.len(), 3 * 108);
    // every edge once in each direction: closed and consistently oriented
    let mut edges: BTreeMap<(u32, u32), i32> = BTreeMap::new();
    for f in t.chunks_exact(3) {
        for k in 0..3 {
            let (a, b) = (f[k], f[(k + 1) % 3]);
            *edges.entry((a.min(b), a.max(b))).or_default() += if a < b { 1 } else { -1 };
        }
    }
    assert!(edges.values().all(|&c| c == 0));
    assert!(
        edges.len() * 2 == t.len(),
        "an edge in more than 2 triangles"
    );
    // the enclosed volume (divergence theorem) is that of the hexagonal prism: outwards
    let vol: f64 = t
        .chunks_exact(3)
        .map(|f| dot(p(x, f[0]), cross(p(x, f[1]), p(x, f[2]))) / 6.0)
        .sum();
    let exact = 3.0 * 0.04 * (PI / 3.0).sin();
    assert!((vol - exact).abs() < 1e-12, "{vol} vs {exact}");
    // the bottom centre, then the top centre after the bottom's 2 inner rings
    assert!(close(p(x, 30), [0.5, -1.0, 2.0]));
    assert!(close(p(x, 43), [0.5, -1.0, 3.0]));
}

#[test]
fn bad_resolutions_generate_nothing() {
    for (attr, val) in [
        ("resRadial", "0"),
        ("resHeight", "1"),
        ("resCircumferential", "0"),
        ("resHeight", "-3"),
        ("radius", "nan"),
        ("height", "inf"),
    ] {
        let mut e = GenerateCylinder::new();
        assert_eq!(init_alone(&mut e, &[(attr, val)]), 1, "{attr}={val}");
        assert!(e.data.reals("position").is_empty(), "{attr}={val}");
        assert!(e.data.ints("tetrahedra").is_empty());
        assert!(e.data.ints("triangles").is_empty());
    }
    let mut e = GenerateCylinder::new();
    assert_eq!(
        init_alone(&mut e, &[("resCircumferential", "100000000")]),
        1
    );
    assert!(e.data.reals("position").is_empty());
}

#[test]
fn odd_inputs_are_reported_and_follow_sofa() {
    // a negative radius: the same points as the positive one, turned by half a turn
    let mut a = GenerateCylinder::new();
    let mut b = GenerateCylinder::new();
    assert_eq!(init_alone(&mut a, &[("radius", "-0.2")]), 1);
    assert_eq!(init_alone(&mut b, &[]), 0);
    let (xa, xb) = (a.data.reals("position"), b.data.reals("position"));
    assert_eq!(xa.len(), xb.len());
    for (pa, pb) in xa.chunks_exact(3).zip(xb.chunks_exact(3)) {
        assert!(close([pa[0], pa[1], pa[2]], [-pb[0], -pb[1], pb[2]]));
    }
    // a closed surface needs 2 rings: the tetrahedra are kept, the surface is not made
    let mut e = GenerateCylinder::new();
    let n = init_alone(&mut e, &[("openSurface", "false"), ("resRadial", "1")]);
    assert_eq!(n, 1);
    assert_eq!(e.data.ints("tetrahedra").len(), 4 * 3 * 6 * 4);
    assert!(e.data.ints("triangles").is_empty());
    assert!(e.data.reals("output_TrianglesPosition").is_empty());
    // Bezier degrees are reported, the linear mesh still made
    let mut e = GenerateCylinder::new();
    assert_eq!(init_alone(&mut e, &[("BezierTetrahedronDegree", "2")]), 1);
    assert_eq!(e.data.ints("tetrahedra").len(), 4 * 360);
    // a negative height inverts the tetrahedra (reported)
    let mut e = GenerateCylinder::new();
    assert_eq!(init_alone(&mut e, &[("height", "-1")]), 1);
    let v = volumes(e.data.reals("position"), e.data.ints("tetrahedra"));
    assert!(v.iter().all(|&v| v < 0.0));
}
