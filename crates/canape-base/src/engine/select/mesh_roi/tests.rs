//! Tests of MeshROI: the inside test, the selected points and elements, and bad input.

use super::*;
use crate::engine::test_support::init_alone;

/// The 8 corners and 12 outward triangles of the box `lo`–`hi`.
fn cube(lo: [f64; 3], hi: [f64; 3]) -> (String, String) {
    let mut pts = Vec::new();
    for k in 0..8 {
        let c = |bit: usize, a: usize| if k >> bit & 1 == 1 { hi[a] } else { lo[a] };
        pts.push(format!("{} {} {}", c(0, 0), c(1, 1), c(2, 2)));
    }
    // corner k = x + 2y + 4z; each face as two triangles, counter-clockwise from outside
    let faces = [
        [0, 2, 3, 1], // z = lo
        [4, 5, 7, 6], // z = hi
        [0, 1, 5, 4], // y = lo
        [2, 6, 7, 3], // y = hi
        [0, 4, 6, 2], // x = lo
        [1, 3, 7, 5], // x = hi
    ];
    let tris: Vec<String> = faces
        .iter()
        .flat_map(|f| {
            [
                format!("{} {} {}", f[0], f[1], f[2]),
                format!("{} {} {}", f[0], f[2], f[3]),
            ]
        })
        .collect();
    (pts.join(" "), tris.join(" "))
}

/// The points of a 5×5×5 grid with unit spacing from the origin (index x + 5y + 25z).
fn grid() -> String {
    (0..125)
        .map(|i| format!("{} {} {}", i % 5, i / 5 % 5, i / 25))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_cube_selects_exactly_the_grid_points_inside_it() {
    let (pts, tris) = cube([0.31, 0.27, 0.23], [2.71, 2.63, 2.59]);
    let mut e = MeshRoi::new(3);
    let n = init_alone(
        &mut e,
        &[
            ("position", &grid()),
            ("ROIposition", &pts),
            ("ROItriangles", &tris),
        ],
    );
    assert_eq!(n, 0);
    let expected: Vec<u32> = (0..125u32)
        .filter(|i| {
            [i % 5, i / 5 % 5, i / 25]
                .iter()
                .all(|c| (1..=2).contains(c))
        })
        .collect();
    assert_eq!(expected.len(), 8);
    assert_eq!(e.data.ints("indices"), &expected[..]);
    assert_eq!(e.data.int("nbIndices"), 8);
    assert_eq!(e.data.ints("indicesOut").len(), 117);
    assert_eq!(e.data.reals("pointsInROI")[..3], [1.0, 1.0, 1.0]);
    assert_eq!(e.data.reals("pointsOutROI").len(), 3 * 117);
    assert_eq!(e.data.reals("box"), &[0.31, 0.27, 0.23, 2.71, 2.63, 2.59]);

    // the triangles' orientation does not matter: all of them flipped select the same
    let flipped: Vec<String> = tris
        .split_whitespace()
        .collect::<Vec<_>>()
        .chunks(3)
        .map(|t| format!("{} {} {}", t[0], t[2], t[1]))
        .collect();
    let mut f = MeshRoi::new(3);
    init_alone(
        &mut f,
        &[
            ("position", &grid()),
            ("ROIposition", &pts),
            ("ROItriangles", &flipped.join(" ")),
        ],
    );
    assert_eq!(f.data.ints("indices"), &expected[..]);
}

#[test]
fn a_point_outside_a_concave_surface_but_inside_its_box_is_outside() {
    // an L-shaped prism: the unit squares (0,0), (1,0), (0,1) extruded over z ∈ [0, 1]
    let outline = [
        [0.0, 0.0],
        [2.0, 0.0],
        [2.0, 1.0],
        [1.0, 1.0],
        [1.0, 2.0],
        [0.0, 2.0],
    ];
    let mut pts: Vec<[f64; 3]> = Vec::new();
    for z in [0.0, 1.0] {
        for o in outline {
            pts.push([o[0], o[1], z]);
        }
    }
    let mut tris: Vec<[u32; 3]> = Vec::new();
    // caps (fan from a convex split: two rectangles 0-1-2-3-… as triangles)
    for (a, b, c) in [(0, 1, 2), (0, 2, 3), (0, 3, 4), (0, 4, 5)] {
        tris.push([a, c, b]);
        tris.push([a + 6, b + 6, c + 6]);
    }
    for k in 0..6u32 {
        let j = (k + 1) % 6;
        tris.push([k, j, j + 6]);
        tris.push([k, j + 6, k + 6]);
    }
    let pts_s: Vec<String> = pts
        .iter()
        .map(|p| format!("{} {} {}", p[0], p[1], p[2]))
        .collect();
    let tris_s: Vec<String> = tris
        .iter()
        .map(|t| format!("{} {} {}", t[0], t[1], t[2]))
        .collect();
    assert_eq!(open_edges(&tris), 0);
    let mut e = MeshRoi::new(3);
    // inside the L, in its notch, inside the L again, outside the box
    let probes = "0.7 0.2 0.6  1.6 1.4 0.5  1.55 0.45 0.35  0.45 1.65 0.55  3 3 3";
    let n = init_alone(
        &mut e,
        &[
            ("position", probes),
            ("ROIposition", &pts_s.join(" ")),
            ("ROItriangles", &tris_s.join(" ")),
        ],
    );
    assert_eq!(n, 0);
    assert_eq!(e.data.ints("indices"), &[0, 2, 3]);
    assert_eq!(e.data.ints("indicesOut"), &[1, 4]);
}

#[test]
fn elements_inside_by_their_points_or_their_centroid() {
    let (pts, tris) = cube([0.31, 0.27, 0.23], [2.71, 2.63, 2.59]);
    // point indices in the 5×5×5 grid
    let at = |x: u32, y: u32, z: u32| x + 5 * y + 25 * z;
    let inside_tet = [at(1, 1, 1), at(2, 1, 1), at(1, 2, 1), at(1, 1, 2)];
    // three points inside, one outside; centroid (1.25, 1.25, 1.5) inside
    let straddling = [at(1, 1, 1), at(2, 1, 1), at(1, 2, 1), at(1, 1, 3)];
    // one point inside; centroid (0.25, 0.25, 1) outside the box
    let outside_tet = [at(1, 1, 1), at(0, 0, 1), at(0, 0, 0), at(0, 0, 2)];
    let tets: Vec<String> = [inside_tet, straddling, outside_tet]
        .iter()
        .flat_map(|t| t.iter().map(|i| i.to_string()))
        .collect();
    let edges = format!(
        "{} {} {} {}",
        at(1, 1, 1),
        at(2, 2, 2),
        at(2, 2, 2),
        at(4, 4, 4)
    );
    let run = |strict: &str| {
        let mut e = MeshRoi::new(3);
        let n = init_alone(
            &mut e,
            &[
                ("position", &grid()),
                ("ROIposition", &pts),
                ("ROItriangles", &tris),
                ("tetrahedra", &tets.join(" ")),
                ("edges", &edges),
                ("strict", strict),
            ],
        );
        assert_eq!(n, 0);
        e
    };
    let loose = run("0");
    assert_eq!(loose.data.ints("tetrahedronIndices"), &[0, 1]);
    assert_eq!(loose.data.ints("tetrahedronOutIndices"), &[2]);
    assert_eq!(loose.data.ints("tetrahedraInROI").len(), 8);
    assert_eq!(loose.data.ints("tetrahedraOutROI"), &outside_tet);
    // edge 2-2-2 → 4-4-4 has its midpoint (3,3,3) outside the box
    assert_eq!(loose.data.ints("edgeIndices"), &[0]);
    assert_eq!(loose.data.ints("edgeOutIndices"), &[1]);
    let strict = run("1");
    assert_eq!(strict.data.ints("tetrahedronIndices"), &[0]);
    assert_eq!(strict.data.ints("tetrahedronOutIndices"), &[1, 2]);
}

#[test]
fn without_the_mesh_test_every_point_is_selected() {
    let (pts, tris) = cube([0.31, 0.27, 0.23], [2.71, 2.63, 2.59]);
    let mut e = MeshRoi::new(3);
    init_alone(
        &mut e,
        &[
            ("position", &grid()),
            ("ROIposition", &pts),
            ("ROItriangles", &tris),
            ("computeMeshROI", "0"),
        ],
    );
    assert_eq!(e.data.ints("indices").len(), 125);
    assert!(e.data.ints("indicesOut").is_empty());
}

#[test]
fn bad_roi_surfaces_are_reported_not_fatal() {
    let (pts, tris) = cube([0.31, 0.27, 0.23], [2.71, 2.63, 2.59]);
    // an open surface: one triangle removed
    let open: Vec<&str> = tris.split_whitespace().skip(3).collect();
    let mut e = MeshRoi::new(3);
    let n = init_alone(
        &mut e,
        &[
            ("position", &grid()),
            ("ROIposition", &pts),
            ("ROItriangles", &open.join(" ")),
        ],
    );
    assert_eq!(n, 1, "the open surface is reported");
    // an index beyond the ROI points, and an element beyond the points
    let mut e = MeshRoi::new(3);
    let n = init_alone(
        &mut e,
        &[
            ("position", &grid()),
            ("ROIposition", &pts),
            ("ROItriangles", &format!("{tris} 0 1 99")),
            ("edges", "0 1 0 500"),
        ],
    );
    assert_eq!(n, 2);
    assert_eq!(
        e.data.ints("indices").len(),
        8,
        "the valid triangles still select"
    );
    assert_eq!(e.data.ints("edgeOutIndices"), &[0]);
    // no ROI triangles at all
    let mut e = MeshRoi::new(3);
    let n = init_alone(&mut e, &[("position", &grid()), ("ROIposition", &pts)]);
    assert_eq!(n, 1, "no ROI triangles");
    assert!(e.data.ints("indices").is_empty());
    // no positions at all
    let mut e = MeshRoi::new(3);
    let n = init_alone(&mut e, &[("ROIposition", &pts), ("ROItriangles", &tris)]);
    assert_eq!(n, 1);
    assert!(e.data.ints("indices").is_empty());
}

#[test]
fn do_update_off_keeps_the_first_selection() {
    let (pts, tris) = cube([0.31, 0.27, 0.23], [2.71, 2.63, 2.59]);
    let mut e = MeshRoi::new(3);
    let attrs = [
        ("position", grid()),
        ("ROIposition", pts.clone()),
        ("ROItriangles", tris.clone()),
        ("doUpdate", "0".to_string()),
    ];
    let attrs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    init_alone(&mut e, &attrs);
    assert_eq!(e.data.ints("indices").len(), 8);
    init_alone(&mut e, &[("computeMeshROI", "0")]);
    assert_eq!(e.data.ints("indices").len(), 8);
    init_alone(&mut e, &[("doUpdate", "1")]);
    assert_eq!(e.data.ints("indices").len(), 125);
}

#[test]
fn rigid_coordinates_use_their_position_part() {
    let (pts, tris) = cube([0.5, 0.5, 0.5], [1.5, 1.5, 1.5]);
    let rpts: Vec<String> = pts
        .split_whitespace()
        .collect::<Vec<_>>()
        .chunks(3)
        .map(|c| format!("{} {} {} 0 0 0 1", c[0], c[1], c[2]))
        .collect();
    let mut e = MeshRoi::new(7);
    let n = init_alone(
        &mut e,
        &[
            ("position", "1.1 0.9 1.2 0 0 0 1  3 0 0 0 0 0 1"),
            ("ROIposition", &rpts.join(" ")),
            ("ROItriangles", &tris),
        ],
    );
    assert_eq!(n, 0);
    assert_eq!(e.data.ints("indices"), &[0]);
    assert_eq!(
        e.data.reals("pointsInROI"),
        &[1.1, 0.9, 1.2, 0.0, 0.0, 0.0, 1.0]
    );
}
