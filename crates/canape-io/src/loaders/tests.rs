//! Tests of the mesh loaders' parsers.

use super::*;

#[test]
fn triangulate_splits_quads_after_the_triangles() {
    let mut m = parse_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 1 2 4 3\n").unwrap();
    triangulate_quads(&mut m);
    assert!(m.quads.is_empty());
    assert_eq!(m.triangles, vec![[0, 1, 2], [0, 1, 3], [0, 3, 2]]);
}

#[test]
fn obj_faces() {
    let m = parse_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1/1 2/2 3/3\nf 1 2 4 3\n").unwrap();
    assert_eq!(m.triangles.len(), 1);
    assert_eq!(m.quads.len(), 1);
    assert!(parse_obj("v 0 0 0\nf 1 2 3\n").is_err());
}

#[test]
fn stl_ascii_and_binary_merge_shared_vertices() {
    let ascii = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nfacet normal 0 0 1\nouter loop\nvertex 1 0 0\nvertex 1 1 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n";
    let m = parse_stl(ascii.as_bytes()).unwrap();
    assert_eq!(m.points.len(), 4);
    assert_eq!(m.triangles, vec![[0, 1, 2], [1, 3, 2]]);
    let mut b = vec![0u8; 80];
    b.extend(2u32.to_le_bytes());
    for tri in [
        [0.0f32, 0., 0., 1., 0., 0., 0., 1., 0.],
        [1., 0., 0., 1., 1., 0., 0., 1., 0.],
    ] {
        b.extend([0u8; 12]);
        for v in tri {
            b.extend(v.to_le_bytes());
        }
        b.extend([0u8; 2]);
    }
    let m = parse_stl(&b).unwrap();
    assert_eq!(m.points.len(), 4);
    assert_eq!(m.triangles, vec![[0, 1, 2], [1, 3, 2]]);
    // a truncated binary file is refused
    assert!(parse_stl(&b[..b.len() - 1]).is_err());
}

#[test]
fn off_triangles_quads_and_skipped_polygons() {
    let text = "OFF\n# a comment\n\n5 3 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n0.5 0.5 1\n\
                4 0 1 2 3\n5 0 1 2 3 4\n3 0 1 4\n3 1 2 4\n";
    let m = parse_off(text).unwrap();
    assert_eq!(m.points.len(), 5);
    assert_eq!(m.points[4], [0.5, 0.5, 1.0]);
    assert_eq!(m.quads, vec![[0, 1, 2, 3]]);
    // the pentagon is skipped and not counted: both triangles are read
    assert_eq!(m.triangles, vec![[0, 1, 4], [1, 2, 4]]);
    assert!(parse_off("OFF\n3 1 0\n0 0 0\n1 0 0\n").is_err());
    assert!(parse_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n").is_err());
    assert!(parse_off("COFF\n").is_err());
}

#[test]
fn trian_neighbours_and_border() {
    // two triangles sharing edge 1-2: triangle 0 (0 1 2) has neighbour 1 across the edge
    // opposite vertex 0
    let text = "4\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n2\n0 1 2 1 -1 -1\n1 3 2 -1 0 -1\n";
    let t = parse_trian(text).unwrap();
    assert_eq!(t.mesh.triangles, vec![[0, 1, 2], [1, 3, 2]]);
    assert_eq!(t.neighbors, vec![[1, -1, -1], [-1, 0, -1]]);
    assert_eq!(t.edges_on_border, vec![[2, 0], [0, 1], [3, 2], [1, 3]]);
    assert_eq!(t.triangles_on_border, vec![0, 1]);
    assert!(parse_trian("3\n0 0 0\n1 0 0\n").is_err());
    let header = "h\n".repeat(13);
    let t2 = parse_trian2(&format!(
        "{header}vertices 3\n0 0 0 1 0 0 0 1 0\nnormals 1\n0 0 1\ntriangles 1\n0 1 2\n"
    ))
    .unwrap();
    assert_eq!(t2.mesh.points.len(), 3);
    assert_eq!(t2.normals, vec![[0.0, 0.0, 1.0]]);
    assert_eq!(t2.mesh.triangles, vec![[0, 1, 2]]);
}

#[test]
fn obj_normals_are_summed_per_vertex() {
    let text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 5 5 5\nvn 0 0 1\nvn 1 0 0\n\
                f 1//1 2//1 3//2\nf 1//2 -2//2 -3//-2\n";
    let n = obj_vertex_normals(text);
    assert_eq!(n.len(), 12);
    let h = std::f64::consts::FRAC_1_SQRT_2;
    // relative indices count back from the end: in face 2, vertex -3 is vertex 2 and
    // normal -2 is vn 1. Vertex 1: vn1 + vn2; vertex 2: vn1 twice; vertex 3: vn2 twice
    assert!((n[0] - h).abs() < 1e-15 && (n[2] - h).abs() < 1e-15 && n[1] == 0.0);
    assert_eq!(&n[3..6], &[0.0, 0.0, 1.0]);
    assert_eq!(&n[6..9], &[1.0, 0.0, 0.0]);
    // an unused vertex keeps a zero normal
    assert_eq!(&n[9..12], &[0.0, 0.0, 0.0]);
    assert!(obj_vertex_normals("v 0 0 0\nf 1 1 1\n").is_empty());
}

#[test]
fn obj_texcoords_and_groups_as_sofa_keeps_them() {
    let text = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\n\
        vt 0.2 0.1\nvt 0.5 0.9\nvt 0.9 0.3\n\
        g left side\nusemtl red\nf 1/1 2/1 3/2\nf 1/3 3/2 4/2\n\
        g right\nf 2/1 5/3 3/2 4/2\nl 1 5\n";
    let tc = obj_vertex_texcoords(text);
    assert_eq!(tc.len(), 10);
    // vertex 1: vt1 first, then vt3 is not further along (−1, 1) (−0.7 + 0.2 < 0): kept
    assert_eq!(&tc[0..2], &[0.2, 0.1]);
    // vertex 3: vt2 then vt2; vertex 4: vt2; vertex 5: vt3; vertex 2: vt1 twice
    assert_eq!(&tc[4..6], &[0.5, 0.9]);
    assert_eq!(&tc[6..8], &[0.5, 0.9]);
    assert_eq!(&tc[8..10], &[0.9, 0.3]);
    assert_eq!(&tc[2..4], &[0.2, 0.1]);
    assert!(obj_vertex_texcoords("v 0 0 0\nf 1 1 1\n").is_empty());
    let [edges, tris, quads] = obj_groups(text, false);
    let g = |first, count, material: &str, group: &str| ObjGroup {
        first,
        count,
        material: material.into(),
        group: group.into(),
        material_id: -1,
    };
    assert_eq!(tris, vec![g(0, 2, "red", "left side")]);
    assert_eq!(quads, vec![g(0, 1, "red", "right")]);
    assert_eq!(edges, vec![g(0, 1, "red", "right")]);
    // triangulated, the quad is one more triangle face of the second group
    let [_, tris, quads] = obj_groups(text, true);
    assert_eq!(
        tris,
        vec![g(0, 2, "red", "left side"), g(2, 1, "red", "right")]
    );
    assert!(quads.is_empty());
}
