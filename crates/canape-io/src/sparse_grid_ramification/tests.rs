//! Tests of SparseGridRamificationTopology.

use super::levels::segment_meets_triangle;
use super::*;
use crate::sparse_grid::voxelize;
use canape_core::component::Component;
use canape_core::diag::Diagnostics;
use canape_core::scene::{AnyComponent, Scene};

/// A mesh of SOFA's share folder (../shared/sofa beside the repository), if present.
fn sofa_mesh(name: &str) -> Option<String> {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/sofa/share/mesh")
        .join(name);
    if p.exists() {
        return Some(p.to_string_lossy().into_owned());
    }
    if std::env::var_os("CANAPE_REQUIRE_SOFA").is_some() {
        panic!("CANAPE_REQUIRE_SOFA is set but {} is absent", p.display());
    }
    eprintln!("NOTICE: {} is absent; test skipped", p.display());
    None
}

fn surface_of(path: &str) -> Surface {
    let (mut d, h) = sparse_grid_data();
    d.set_str("filename", path).unwrap();
    load_surface(&d, h).unwrap()
}

fn params(n: [usize; 3], virtual_levels: usize, finest_connectivity: bool) -> Params {
    Params {
        n,
        virtual_levels,
        finest_connectivity,
        fill_weighted: true,
        only_inside: false,
    }
}

fn close(a: [f64; 3], b: [f64; 3], tol: f64) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() <= tol)
}

/// Run the component's init in a one-node scene.
fn init(mut t: SparseGridRamificationTopology) -> (SparseGridRamificationTopology, Diagnostics) {
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    let id = scene.add_component(
        root,
        "grid",
        AnyComponent::Topology(Box::new(t.clone())),
        None,
    );
    let mut diags = Diagnostics::default();
    t.init_impl(&mut InitContext {
        scene: &scene,
        node: root,
        id,
        diags: &mut diags,
    });
    (t, diags)
}

#[test]
fn segment_triangle_test_is_sofas() {
    let t = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let tri = [&t[0], &t[1], &t[2]];
    // through the triangle, either way
    assert!(segment_meets_triangle(
        &[0.2, 0.2, -1.0],
        &[0.2, 0.2, 1.0],
        tri
    ));
    assert!(segment_meets_triangle(
        &[0.2, 0.2, 1.0],
        &[0.2, 0.2, -1.0],
        tri
    ));
    // beside it, and parallel to it in its plane
    assert!(!segment_meets_triangle(
        &[0.8, 0.8, -1.0],
        &[0.8, 0.8, 1.0],
        tri
    ));
    assert!(!segment_meets_triangle(
        &[0.1, 0.1, 0.0],
        &[0.3, 0.1, 0.0],
        tri
    ));
    // short of the plane: the segment tested is [2·s0 − s1, s1], which reaches it
    assert!(segment_meets_triangle(
        &[0.2, 0.2, 0.5],
        &[0.2, 0.2, 1.0],
        tri
    ));
    assert!(!segment_meets_triangle(
        &[0.2, 0.2, 1.0],
        &[0.2, 0.2, 0.5],
        tri
    ));
}

/// Two closed boxes (quads), far apart along y, that share the single top cell of a
/// grid with two virtual levels: the cell splits into one hexahedron per box.
#[test]
fn two_disjoint_parts_in_one_cell_make_two_hexahedra() {
    let mut points = Vec::new();
    let mut polygons = Vec::new();
    for (y0, y1) in [(0.0, 0.5), (3.5, 4.0)] {
        let o = points.len() as u32;
        for z in [0.0, 1.0] {
            for (x, y) in [(0.0, y0), (1.0, y0), (1.0, y1), (0.0, y1)] {
                points.push([x, y, z]);
            }
        }
        for q in [
            [0, 3, 2, 1],
            [4, 5, 6, 7],
            [0, 1, 5, 4],
            [1, 2, 6, 5],
            [2, 3, 7, 6],
            [3, 0, 4, 7],
        ] {
            polygons.push(q.iter().map(|v| v + o).collect());
        }
    }
    let surface = Surface { points, polygons };
    let b = build(&surface, &params([2, 2, 2], 2, false)).unwrap();
    assert_eq!(b.top.cell_conns, vec![0..2]);
    assert_eq!(b.top.hexahedra.len(), 2);
    // no point shared: the two hexahedra sit on the same cell with their own corners
    assert_eq!(b.top.points.len(), 16);
    assert_eq!(b.top.hexahedra[1], std::array::from_fn(|k| 8 + k as u32));
    for k in 0..8 {
        assert_eq!(b.top.points[k], b.top.points[8 + k]);
    }
    // a point in each box lands in its own hexahedron, with the top cell's coordinates
    let (h, f) = b.locator.find_cube(&[0.5, 0.25, 0.5]).unwrap();
    assert_eq!(h, 0);
    assert!(f.iter().all(|v| (0.0..1.0).contains(v)));
    assert_eq!(b.locator.find_cube(&[0.5, 3.75, 0.5]).unwrap().0, 1);
    // between the boxes no finest cell holds the point; the nearest boundary one decides
    assert!(b.locator.find_cube(&[0.5, 3.0, 0.5]).is_none());
    assert_eq!(b.locator.find_nearest_cube(&[0.5, 3.0, 0.5]).unwrap().0, 1);
    assert_eq!(b.locator.find_nearest_cube(&[0.5, -2.0, 0.5]).unwrap().0, 0);
    // with the face test on, boundary cells connect only where an edge of the surface
    // crosses their common face: the boxes' few big quads leave cells of each box apart
    let b = build(&surface, &params([2, 2, 2], 2, true)).unwrap();
    assert!(b.top.hexahedra.len() > 2);
}

/// SOFA's reference scene, "UniformC": c.obj, n = 5 2 2, three virtual levels, no test at
/// the finest level. The values come from the Python prototype that reproduces SOFA's
/// reference positions.
#[test]
fn c_letter_with_three_virtual_levels() {
    let Some(path) = sofa_mesh("c.obj") else {
        return;
    };
    let b = build(&surface_of(&path), &params([5, 2, 2], 3, false)).unwrap();
    let top = &b.top;
    assert_eq!(top.grid.n, [5, 2, 2]);
    // cells x = 1, 2, 3 split into their lower and upper arms
    let per_cell: Vec<usize> = top.cell_conns.iter().map(|r| r.len()).collect();
    assert_eq!(per_cell, vec![1, 2, 2, 2]);
    assert_eq!(top.points.len(), 32);
    assert_eq!(
        top.hexahedra,
        vec![
            [0, 1, 2, 3, 4, 5, 6, 7],
            [1, 8, 9, 2, 5, 10, 11, 6],
            [1, 12, 13, 2, 5, 14, 15, 6],
            [8, 16, 17, 9, 10, 18, 19, 11],
            [12, 20, 21, 13, 14, 22, 23, 15],
            [16, 24, 25, 17, 18, 26, 27, 19],
            [20, 28, 29, 21, 22, 30, 31, 23],
        ]
    );
    // SOFA's "last child only" coefficients of split cells
    let mut coef = vec![0.3671875];
    coef.extend([0.03125; 6]);
    assert_eq!(top.coef, coef);
    assert!(top.boundary.iter().all(|b| *b));
    let tol = 1e-9;
    for (i, p) in [
        (0, [-15.70710228, -5.84699598, -1.21535346]),
        (1, [-7.87956414, -5.84699598, -1.21535346]),
        (8, [-0.052026, -5.84699598, -1.21535346]),
        (17, [7.77551214, 5.84699598, -1.21535346]),
        (31, [15.60305028, 5.84699598, 1.21535346]),
    ] {
        assert!(
            close(top.points[i], p, tol),
            "point {i}: {:?}",
            top.points[i]
        );
    }
    // mapped points: the finest cell's coarsest hexahedron, the top cell's coordinates
    for (p, hexa, f) in [
        (
            [15.295429, 3.515289, 0.718661],
            6,
            [0.9607001237811921, 0.8006064149885049, 0.7956592561969585],
        ),
        (
            [-15.118718, 1.77685, 0.0],
            0,
            [0.07516849735848129, 0.6519455465744993, 0.5],
        ),
        (
            [-0.411389, 5.485517, -0.705342],
            2,
            [0.9540899075069855, 0.9690884873842517, 0.20982021970793588],
        ),
        (
            [15.295729, -4.507213, 0.0],
            5,
            [0.9607384500077316, 0.11457019849019974, 0.5],
        ),
    ] {
        let (h, g) = b.locator.find_cube(&p).unwrap();
        assert_eq!(h, hexa, "{p:?}");
        assert!(close(g, f, 1e-12), "{p:?}: {g:?}");
    }
    // outside every finest cell: the nearest boundary cell's hexahedron, clamped top cell
    let (h, g) = b.locator.find_nearest_cube(&[0.0, -20.0, 0.0]).unwrap();
    assert_eq!(h, 3);
    assert!(close(
        g,
        [0.00664653420647543, -1.210279951312708, 0.5],
        1e-12
    ));
    let (h, g) = b.locator.find_nearest_cube(&[30.0, 0.0, 0.0]).unwrap();
    assert_eq!(h, 5);
    assert!(close(g, [2.83926918815371, 0.5, 0.5], 1e-12));
}

/// "UniformC and finestConnectivity": c.obj, n = 5 3 3, no virtual level, the face test at
/// the grid itself: 16 hexahedra on 54 points (45 without the test).
#[test]
fn c_letter_with_finest_connectivity() {
    let Some(path) = sofa_mesh("c.obj") else {
        return;
    };
    let surface = surface_of(&path);
    let b = build(&surface, &params([5, 3, 3], 0, true)).unwrap();
    let top = &b.top;
    assert_eq!(top.hexahedra.len(), 16);
    assert_eq!(top.points.len(), 54);
    assert!(top.coef.iter().all(|c| *c == 0.5));
    assert_eq!(top.hexahedra[1], [1, 8, 9, 2, 5, 10, 11, 6]);
    assert_eq!(top.hexahedra[4], [3, 2, 20, 21, 7, 6, 22, 23]);
    assert_eq!(top.hexahedra[15], [30, 34, 35, 31, 50, 52, 53, 51]);
    let tol = 1e-9;
    for (i, p) in [
        (0, [-15.70710228, -5.84699598, -1.21535346]),
        (17, [15.60305028, 0.0, -1.21535346]),
        (31, [7.77551214, 5.84699598, 0.0]),
        (53, [15.60305028, 5.84699598, 1.21535346]),
    ] {
        assert!(
            close(top.points[i], p, tol),
            "point {i}: {:?}",
            top.points[i]
        );
    }
    // without the test (and without virtual levels): SparseGridTopology's grid
    let plain = build(&surface, &params([5, 3, 3], 0, false)).unwrap();
    let g = voxelize(&surface.points, &surface.polygons, [5, 3, 3], true, false).unwrap();
    assert_eq!(plain.top.points.len(), 45);
    assert_eq!(plain.top.points, g.mesh.points);
    assert_eq!(plain.top.hexahedra, g.mesh.hexahedra);
}

/// The demos' grids: hexahedra, points, split cells and the sum of the coefficients, as the
/// prototype gives them.
#[test]
fn demo_grids_match_the_prototype() {
    for (file, n, hexa, points, split, coef_sum) in [
        ("snake_body.obj", [4, 12, 3], 57, 184, 1, 8.8828125),
        ("n1.obj", [4, 6, 3], 26, 66, 0, 15.75390625),
        ("n0.obj", [4, 5, 3], 24, 60, 0, 15.81640625),
        ("sofa_logo.obj", [2, 2, 2], 1, 8, 0, 0.216796875),
    ] {
        let Some(path) = sofa_mesh(file) else {
            return;
        };
        let b = build(&surface_of(&path), &params(n, 3, false)).unwrap();
        assert_eq!(b.top.hexahedra.len(), hexa, "{file}");
        assert_eq!(b.top.points.len(), points, "{file}");
        let splits = b.top.cell_conns.iter().filter(|r| r.len() > 1).count();
        assert_eq!(splits, split, "{file}");
        assert_eq!(b.top.coef.iter().sum::<f64>(), coef_sum, "{file}");
    }
}

#[test]
fn component_data_and_outputs() {
    let Some(path) = sofa_mesh("c.obj") else {
        return;
    };
    let mut t = SparseGridRamificationTopology::new();
    assert!(t.data().bool("finestConnectivity"));
    assert!(t.cube_locator().is_none());
    let d = t.data_mut();
    d.set_str("fileTopology", &path).unwrap();
    d.set_str("n", "5 2 2").unwrap();
    d.set_str("nbVirtualFinerLevels", "3").unwrap();
    d.set_str("finestConnectivity", "0").unwrap();
    let (t, diags) = init(t);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(t.mesh().hexahedra.len(), 7);
    assert_eq!(t.split_cells(), 3);
    assert_eq!(t.hexahedron_coefficients().unwrap().len(), 7);
    assert_eq!(t.data().reals("position").len(), 32 * 3);
    assert_eq!(t.data().ints("hexahedra").len(), 7 * 8);
    assert!(t.cube_locator().is_some());
    // edges oriented as SOFA lists them, e.g. (3, 2) in hexahedron 0
    assert!(t.mesh().edges.contains(&[3, 2]));
    assert!(!t.mesh().edges.contains(&[2, 3]));
}

#[test]
fn bad_input_is_reported_not_panicked() {
    // a missing file
    let mut t = SparseGridRamificationTopology::new();
    t.data_mut()
        .set_str("filename", "/nonexistent/surface.obj")
        .unwrap();
    t.data_mut().set_str("nbVirtualFinerLevels", "2").unwrap();
    let (t, diags) = init(t);
    assert!(diags.has_errors());
    assert!(t.mesh().hexahedra.is_empty() && t.cube_locator().is_none());
    // no file and no surface
    let (t, diags) = init(SparseGridRamificationTopology::new());
    assert!(diags.has_errors());
    assert!(t.mesh().points.is_empty());
    // points but faces out of range
    let mut t = SparseGridRamificationTopology::new();
    t.data_mut()
        .set_str("position", "0 0 0 1 0 0 0 1 0")
        .unwrap();
    t.data_mut().set_str("triangles", "0 1 7").unwrap();
    let (_, diags) = init(t);
    assert!(diags.has_errors());
    // far too many virtual levels
    let mut t = SparseGridRamificationTopology::new();
    t.data_mut()
        .set_str("position", "0 0 0 1 0 0 0 1 0 0 0 1")
        .unwrap();
    t.data_mut()
        .set_str("triangles", "0 1 2 0 1 3 0 2 3 1 2 3")
        .unwrap();
    t.data_mut().set_str("nbVirtualFinerLevels", "70").unwrap();
    let (t, diags) = init(t);
    assert!(diags.has_errors());
    assert!(t.mesh().hexahedra.is_empty());
}
