//! Unit tests of the topologies and static topological mappings.

mod containers {
    use super::super::*;
    use crate::mass::tetra_volume;
    use canape_types::Vec3;

    #[test]
    fn hexa_split_is_positive_and_fills_the_cube() {
        let p = |i: u32| {
            let x = [
                (0., 0., 0.),
                (1., 0., 0.),
                (1., 1., 0.),
                (0., 1., 0.),
                (0., 0., 1.),
                (1., 0., 1.),
                (1., 1., 1.),
                (0., 1., 1.),
            ][i as usize];
            Vec3::new(x.0, x.1, x.2)
        };
        for swapped in [false] {
            let t = hexa_to_tetras([0, 1, 2, 3, 4, 5, 6, 7], swapped);
            let mut sum = 0.0;
            for tt in t {
                let (a, b, c, d) = (p(tt[0]), p(tt[1]), p(tt[2]), p(tt[3]));
                let signed = (b - a).cross(&(c - a)).dot(&(d - a)) / 6.0;
                assert!(signed > 0.0);
                sum += tetra_volume([a, b, c, d]);
            }
            assert!((sum - 1.0).abs() < 1e-12);
        }
    }

    fn cube_points(n: [usize; 3]) -> Vec<[f64; 3]> {
        let mut p = Vec::new();
        for z in 0..n[2] {
            for y in 0..n[1] {
                for x in 0..n[0] {
                    p.push([x as f64, y as f64, z as f64]);
                }
            }
        }
        p
    }

    /// Σ over faces of (area vector) must vanish for a closed surface, and with outward faces
    /// Σ centroid·n·area/3 is the enclosed volume (divergence theorem).
    fn enclosed_volume(points: &[[f64; 3]], faces: &[Vec<u32>]) -> (f64, Vec3) {
        let mut vol = 0.0;
        let mut total = Vec3::zeros();
        for f in faces {
            let p: Vec<Vec3> = f.iter().map(|&i| Vec3::from(points[i as usize])).collect();
            // fan triangulation
            for k in 1..p.len() - 1 {
                let a = (p[k] - p[0]).cross(&(p[k + 1] - p[0])) / 2.0;
                total += a;
                vol += (p[0] + p[k] + p[k + 1]).dot(&a) / 9.0;
            }
        }
        (vol, total)
    }

    #[test]
    fn boundary_of_hexahedra_and_tetrahedra_closes_the_volume_outward() {
        let n = [3, 4, 2];
        let pts = cube_points(n);
        let p = |x: usize, y: usize, z: usize| (n[0] * (n[1] * z + y) + x) as u32;
        let mut hexahedra = Vec::new();
        for z in 0..n[2] - 1 {
            for y in 0..n[1] - 1 {
                for x in 0..n[0] - 1 {
                    hexahedra.push([
                        p(x, y, z),
                        p(x + 1, y, z),
                        p(x + 1, y + 1, z),
                        p(x, y + 1, z),
                        p(x, y, z + 1),
                        p(x + 1, y, z + 1),
                        p(x + 1, y + 1, z + 1),
                        p(x, y + 1, z + 1),
                    ]);
                }
            }
        }
        let grid = Mesh {
            hexahedra,
            ..Mesh::default()
        };
        // hexahedra as a grid (SOFA's grid quads) and as a plain mesh (container faces)
        for g in [Some(n), None] {
            let m = Hexa2QuadTopologicalMapping::new().map(&grid, g);
            let want = 22; // faces of the 2×3×1 box: 2·(2·3 + 2·1 + 3·1)
            assert_eq!(m.quads.len(), want, "{g:?}");
            let faces: Vec<Vec<u32>> = m.quads.iter().map(|q| q.to_vec()).collect();
            let (vol, total) = enclosed_volume(&pts, &faces);
            if g.is_none() {
                // the container's faces point outward: a closed surface around the volume
                assert!(total.norm() < 1e-12, "open surface");
                assert!((vol - 6.0).abs() < 1e-12, "volume {vol}");
            } else {
                // SOFA's grid quads keep the grid's orientation (some point inward): the same
                // surface, checked by its area
                let area: f64 = faces
                    .iter()
                    .map(|f| {
                        let q: Vec<Vec3> = f.iter().map(|&i| Vec3::from(pts[i as usize])).collect();
                        (q[1] - q[0]).cross(&(q[2] - q[0])).norm()
                    })
                    .sum();
                assert!((area - 22.0).abs() < 1e-12, "area {area}");
            }
        }
        let mut flip = Hexa2QuadTopologicalMapping::new();
        flip.data.set_str("flipNormals", "1").unwrap();
        let m = flip.map(&grid, None);
        let faces: Vec<Vec<u32>> = m.quads.iter().map(|q| q.to_vec()).collect();
        assert!((enclosed_volume(&pts, &faces).0 + 6.0).abs() < 1e-12);
        // tetrahedra: the grid split in tetrahedra; boundary triangles enclose the volume
        let tets = Hexa2TetraTopologicalMapping::new().map(&grid, Some(n));
        let m = Tetra2TriangleTopologicalMapping::new().map(&tets, None);
        assert_eq!(m.triangles.len(), 2 * 22);
        let faces: Vec<Vec<u32>> = m.triangles.iter().map(|t| t.to_vec()).collect();
        let (vol, total) = enclosed_volume(&pts, &faces);
        assert!(total.norm() < 1e-12);
        assert!((vol - 6.0).abs() < 1e-12, "volume {vol}");
        let mut none = Tetra2TriangleTopologicalMapping::new();
        none.data.set_str("noInitialTriangles", "1").unwrap();
        assert!(none.map(&tets, None).triangles.is_empty());
    }

    #[test]
    fn quads_split_in_a_checkerboard_and_triangles_give_their_border() {
        // a 2 × 2 grid of quads (3 × 3 points): cells 0 and 3 split along p0-p2, 1 and 2 along
        // p1-p3; the square's 8 border edges, none of the inner ones
        let q = vec![[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]];
        let m = Quad2TriangleTopologicalMapping::new().map(
            &Mesh {
                quads: q,
                ..Mesh::default()
            },
            Some([3, 3, 1]),
        );
        assert_eq!(
            m.triangles,
            vec![
                [1, 4, 0],
                [3, 0, 4],
                [1, 2, 4],
                [5, 4, 2],
                [3, 4, 6],
                [7, 6, 4],
                [5, 8, 4],
                [7, 4, 8]
            ]
        );
        let e = Triangle2EdgeTopologicalMapping::new().map(&m, None);
        assert_eq!(e.edges.len(), 8);
        for [a, b] in &e.edges {
            // a border edge has both ends on the square's border (not the centre, point 4)
            assert!(*a != 4 && *b != 4, "{:?}", e.edges);
        }
    }
}

mod cylinder_tests {
    use super::super::*;
    use canape_core::component::Component;
    use canape_core::scene::{AnyComponent, Scene};

    #[test]
    fn cylinder_grid_points_lie_on_discs_along_the_axis() {
        let mut g = RegularGridTopology::cylinder();
        let d = g.data_mut();
        d.set_str("n", "3 3 2").unwrap();
        d.set_str("radius", "1").unwrap();
        d.set_str("length", "2").unwrap();
        d.set_str("center", "0 0 1").unwrap();
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let id = scene.add_component(
            root,
            "cyl",
            AnyComponent::Topology(Box::new(g.clone())),
            None,
        );
        let mut diags = canape_core::diag::Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        g.init_impl(&mut ctx);
        assert!(diags.is_empty(), "{diags:?}");
        let p = &g.mesh().points;
        assert_eq!(p.len(), 18);
        assert_eq!(g.mesh().hexahedra.len(), 4);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let close = |a: [f64; 3], b: [f64; 3]| (0..3).all(|k| (a[k] - b[k]).abs() < 1e-12);
        // a corner of the square goes onto the circle, the middle stays on the axis
        assert!(close(p[0], [-h, -h, 1.0]), "{:?}", p[0]);
        assert!(close(p[4], [0.0, 0.0, 1.0]), "{:?}", p[4]);
        // the second layer, length away along z
        assert!(close(p[9 + 5], [1.0, 0.0, 3.0]), "{:?}", p[14]);
        assert_eq!(g.class_name(), "CylinderGridTopology");
    }
}
