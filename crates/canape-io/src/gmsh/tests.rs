//! Tests of the Gmsh reader: every MSH format, ASCII and binary, the element types kept and
//! dropped, and the errors malformed files give.

use super::*;
use crate::loaders::create_subelements;

/// 1-based line of the first line of `text` that starts with `start`.
fn line_of(text: &str, start: &str) -> usize {
    1 + text.lines().position(|l| l.starts_with(start)).unwrap()
}

/// A binary file being written: numbers in a chosen byte order and `size_t` width.
struct Bin {
    out: Vec<u8>,
    big: bool,
    width: usize,
}

impl Bin {
    fn new(version: &str, big: bool, width: usize) -> Self {
        let mut b = Bin {
            out: Vec::new(),
            big,
            width,
        };
        b.text(&format!("$MeshFormat\n{version} 1 {width}\n"));
        b.int(1);
        b.text("\n$EndMeshFormat\n");
        b
    }
    fn text(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
    }
    fn int(&mut self, v: i32) {
        let b = if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.out.extend_from_slice(&b);
    }
    fn real(&mut self, v: f64) {
        let b = if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.out.extend_from_slice(&b);
    }
    fn size(&mut self, v: u64) {
        match (self.width, self.big) {
            (4, false) => self.out.extend_from_slice(&(v as u32).to_le_bytes()),
            (4, true) => self.out.extend_from_slice(&(v as u32).to_be_bytes()),
            (_, false) => self.out.extend_from_slice(&v.to_le_bytes()),
            (_, true) => self.out.extend_from_slice(&v.to_be_bytes()),
        }
    }
}

/// MSH 4.1 ASCII, hand-written: sparse unordered node tags, a parametric node block,
/// sections to skip, a point, a line, triangles, a quadrangle, a tetrahedron and a prism.
const V41: &str = "$MeshFormat
4.1 0 8
$EndMeshFormat
$PhysicalNames
1
3 1 \"body\"
$EndPhysicalNames
$Entities
1 1 2 1
1 0 0 0 0
2 0 0 0 1 0 0 0 2 1 -1
5 0 0 0 1 1 0 1 7 1 2
6 0 0 0 1 1 0 0 1 2
1 0 0 0 1 1 1 1 1 2 5 6
$EndEntities
$Comments
anything $Nodes at all
$EndComments
$Nodes
3 6 7 50
0 1 0 1
10
0 0 0
2 5 1 2
30
20
1 0 0 0.5 0.25
0 1 0 0.25 0.5
3 1 0 3
40
50
7
0 0 1
1 1 0
1 1 1
$EndNodes
$Elements
6 7 1 7
0 1 15 1
1 10
1 2 1 1
2 10 30
2 5 2 2
3 10 30 20
4 30 50 20
2 6 3 1
5 10 30 50 20
3 1 4 1
6 10 30 20 40
3 1 6 1
7 10 30 20 40 50 7
$EndElements
$NodeData
1
\"a view\"
0
$EndNodeData
";

/// The mesh of [`V41`], node tags 10 30 20 40 50 7 being indices 0 to 5.
fn check_v4_mesh(g: &GmshMesh) {
    let m = &g.mesh;
    assert_eq!(
        m.points,
        vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 1.0, 0.0],
            [1.0, 1.0, 1.0]
        ]
    );
    assert_eq!(m.edges, vec![[0, 1]]);
    assert_eq!(m.triangles, vec![[0, 1, 2], [1, 4, 2]]);
    assert_eq!(m.quads, vec![[0, 1, 4, 2]]);
    assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3]]);
    assert!(m.hexahedra.is_empty());
    // the prism is reported, the point is not
    assert_eq!(g.notes.len(), 1, "{:?}", g.notes);
    assert!(g.notes[0].contains("type 6 (prism)"), "{}", g.notes[0]);
}

/// [`V41`] as a binary MSH 4.1 file.
fn v41_binary(big: bool, width: usize) -> Vec<u8> {
    let mut b = Bin::new("4.1", big, width);
    b.text("$PhysicalNames\n1\n3 1 \"body\"\n$EndPhysicalNames\n$Entities\n");
    for n in [1, 1, 2, 1] {
        b.size(n);
    }
    // a point: tag, x y z, no physical tag
    b.int(1);
    for x in [0.0, 0.0, 0.0] {
        b.real(x);
    }
    b.size(0);
    // a curve, two surfaces, a volume: tag, bounding box, physical tags, bounding entities
    for (tag, bounds) in [
        (2, vec![1, -1]),
        (5, vec![2]),
        (6, vec![2]),
        (1, vec![5, 6]),
    ] {
        b.int(tag);
        for x in [0.0, 0.0, 0.0, 1.0, 1.0, 1.0] {
            b.real(x);
        }
        b.size(1);
        b.int(1);
        b.size(bounds.len() as u64);
        for t in bounds {
            b.int(t);
        }
    }
    b.text("\n$EndEntities\n$Nodes\n");
    for n in [3, 6, 7, 50] {
        b.size(n);
    }
    // block header: dimension, entity, parametric, count; tags; coordinates
    b.int(0);
    b.int(1);
    b.int(0);
    b.size(1);
    b.size(10);
    for x in [0.0, 0.0, 0.0] {
        b.real(x);
    }
    b.int(2);
    b.int(5);
    b.int(1);
    b.size(2);
    b.size(30);
    b.size(20);
    for x in [1.0, 0.0, 0.0, 0.5, 0.25, 0.0, 1.0, 0.0, 0.25, 0.5] {
        b.real(x);
    }
    b.int(3);
    b.int(1);
    b.int(0);
    b.size(3);
    for t in [40, 50, 7] {
        b.size(t);
    }
    for x in [0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0] {
        b.real(x);
    }
    b.text("\n$EndNodes\n$Elements\n");
    for n in [6, 7, 1, 7] {
        b.size(n);
    }
    let blocks: [(i32, i32, i32, &[&[u64]]); 6] = [
        (0, 1, 15, &[&[1, 10]]),
        (1, 2, 1, &[&[2, 10, 30]]),
        (2, 5, 2, &[&[3, 10, 30, 20], &[4, 30, 50, 20]]),
        (2, 6, 3, &[&[5, 10, 30, 50, 20]]),
        (3, 1, 4, &[&[6, 10, 30, 20, 40]]),
        (3, 1, 6, &[&[7, 10, 30, 20, 40, 50, 7]]),
    ];
    for (dim, entity, ty, elements) in blocks {
        b.int(dim);
        b.int(entity);
        b.int(ty);
        b.size(elements.len() as u64);
        for e in elements {
            for &t in *e {
                b.size(t);
            }
        }
    }
    b.text("\n$EndElements\n");
    b.out
}

/// MSH 2.2 ASCII, hand-written: sparse node tags, a physical name section, elements with
/// 2 and 3 tags, a point.
const V22: &str = "$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
1
3 1 \"body\"
$EndPhysicalNames
$Nodes
5
3 0 0 0
1 1 0 0
7 0 1 0
2 0 0 1
9 1 1 1
$EndNodes
$Elements
5
1 15 2 0 3 3
2 1 2 0 1 3 1
3 2 2 0 2 3 1 7
4 4 2 1 1 3 1 7 2
5 4 3 1 1 0 1 7 2 9
$EndElements
";

fn check_v22_mesh(m: &Mesh) {
    assert_eq!(m.points.len(), 5);
    assert_eq!(m.points[4], [1.0, 1.0, 1.0]);
    assert_eq!(m.edges, vec![[0, 1]]);
    assert_eq!(m.triangles, vec![[0, 1, 2]]);
    assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3], [1, 2, 3, 4]]);
}

/// [`V22`] as a binary MSH 2.2 file (element blocks grouped differently, tags changed:
/// neither is part of the mesh).
fn v22_binary(big: bool) -> Vec<u8> {
    let mut b = Bin::new("2.2", big, 8);
    b.text("$PhysicalNames\n1\n3 1 \"body\"\n$EndPhysicalNames\n$Nodes\n5\n");
    for (tag, p) in [
        (3, [0.0, 0.0, 0.0]),
        (1, [1.0, 0.0, 0.0]),
        (7, [0.0, 1.0, 0.0]),
        (2, [0.0, 0.0, 1.0]),
        (9, [1.0, 1.0, 1.0]),
    ] {
        b.int(tag);
        for x in p {
            b.real(x);
        }
    }
    b.text("\n$EndNodes\n$Elements\n5\n");
    // header: type, elements in the block, tags per element; then number, tags, nodes
    let blocks: [(i32, i32, &[&[i32]]); 4] = [
        (15, 2, &[&[1, 0, 3, 3]]),
        (1, 2, &[&[2, 0, 1, 3, 1]]),
        (2, 1, &[&[3, 0, 3, 1, 7]]),
        (4, 2, &[&[4, 1, 1, 3, 1, 7, 2], &[5, 1, 1, 1, 7, 2, 9]]),
    ];
    for (ty, tags, elements) in blocks {
        b.int(ty);
        b.int(elements.len() as i32);
        b.int(tags);
        for e in elements {
            for &v in *e {
                b.int(v);
            }
        }
    }
    b.text("\n$EndElements\n");
    b.out
}

#[test]
fn gmsh_v1_and_v2() {
    let v1 = "$NOD\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$ENDNOD\n$ELM\n2\n1 4 1 1 4 1 2 3 4\n2 15 1 1 1 1\n$ENDELM\n";
    let m = parse_gmsh(v1).unwrap();
    assert_eq!(m.points.len(), 4);
    assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3]]);
    let v2 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 0 0 1\n$EndNodes\n$Elements\n1\n1 4 2 0 0 10 20 30 40\n$EndElements\n";
    let mut m = parse_gmsh(v2).unwrap();
    assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3]]);
    create_subelements(&mut m);
    assert_eq!(m.triangles.len(), 4);
    assert_eq!(m.edges.len(), 6);
    assert!(parse_gmsh("$NOD\n2\n1 0 0\n").is_err());
    assert!(parse_gmsh("hello").is_err());
    // Windows line ends
    let crlf = v2.replace('\n', "\r\n");
    assert_eq!(parse_gmsh(&crlf).unwrap().tetrahedra, vec![[0, 1, 2, 3]]);
    check_v22_mesh(&parse_gmsh(V22).unwrap());
}

#[test]
fn v41_ascii_maps_sparse_tags_in_file_order() {
    let g = read_gmsh(V41.as_bytes()).unwrap();
    check_v4_mesh(&g);
}

#[test]
fn v40_ascii_has_its_own_layout() {
    // entity tag before dimension, no tag range in the headers, each node tag beside its
    // coordinates (parametric ones included)
    let v40 = "$MeshFormat
4 0 8
$EndMeshFormat
$Nodes
3 6
1 0 0 1
10 0 0 0
5 2 1 2
30 1 0 0 0.5 0.25
20 0 1 0 0.25 0.5
1 3 0 3
40 0 0 1
50 1 1 0
7 1 1 1
$EndNodes
$Elements
6 7
1 0 15 1
1 10
2 1 1 1
2 10 30
5 2 2 2
3 10 30 20
4 30 50 20
6 2 3 1
5 10 30 50 20
1 3 4 1
6 10 30 20 40
1 3 6 1
7 10 30 20 40 50 7
$EndElements
";
    check_v4_mesh(&read_gmsh(v40.as_bytes()).unwrap());
}

#[test]
fn v41_binary_reads_the_same_mesh_as_ascii() {
    let ascii = read_gmsh(V41.as_bytes()).unwrap();
    for (big, width) in [(false, 8), (true, 8), (false, 4)] {
        let g = read_gmsh(&v41_binary(big, width))
            .unwrap_or_else(|e| panic!("big-endian {big}, size_t {width}: {e}"));
        check_v4_mesh(&g);
        assert_eq!(g.mesh, ascii.mesh);
    }
}

#[test]
fn v22_binary_reads_the_same_mesh_as_ascii() {
    let ascii = parse_gmsh(V22).unwrap();
    for big in [false, true] {
        let m = parse_gmsh_bytes(&v22_binary(big)).unwrap();
        check_v22_mesh(&m);
        assert_eq!(m, ascii);
    }
}

#[test]
fn binary_files_load_through_the_mesh_reader() {
    let dir = std::env::temp_dir().join(format!("canape-gmsh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("cube.msh");
    std::fs::write(&f, v41_binary(false, 8)).unwrap();
    let m = crate::loaders::read_mesh_file(&f.to_string_lossy()).unwrap();
    assert_eq!(m, parse_gmsh(V41).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn second_order_elements_keep_corners_and_unique_edges() {
    let text = "$MeshFormat
4.1 0 8
$EndMeshFormat
$Nodes
1 10 1 10
3 1 0 10
1
2
3
4
5
6
7
8
9
10
0 0 0
1 0 0
0 1 0
0 0 1
0.5 0 0
0.5 0.5 0
0 0.5 0
0 0 0.5
0 0.5 0.5
0.5 0 0.5
$EndNodes
$Elements
3 3 1 3
1 1 8 1
1 1 2 5
2 1 9 1
2 1 2 3 5 6 7
3 1 11 1
3 1 2 3 4 5 6 7 8 9 10
$EndElements
";
    let g = read_gmsh(text.as_bytes()).unwrap();
    let m = &g.mesh;
    assert_eq!(m.points.len(), 10);
    assert_eq!(m.triangles, vec![[0, 1, 2]]);
    assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3]]);
    // the line, then the triangle's and the tetrahedron's edges not seen before
    assert_eq!(
        m.edges,
        vec![[0, 1], [1, 2], [0, 2], [0, 3], [2, 3], [1, 3]]
    );
    assert!(g.notes.is_empty());
}

/// A mesh of SOFA's share folder (../shared/sofa beside the repository), if present.
fn sofa_mesh(name: &str) -> Option<Vec<u8>> {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/sofa/share/mesh")
        .join(name);
    if p.exists() {
        return Some(std::fs::read(&p).unwrap());
    }
    if std::env::var_os("CANAPE_REQUIRE_SOFA").is_some() {
        panic!("CANAPE_REQUIRE_SOFA is set but {} is absent", p.display());
    }
    eprintln!("NOTICE: {} is absent; test skipped", p.display());
    None
}

#[test]
fn sofa_msh4_cube() {
    // the v4 mesh of SOFA's MeshGmshLoader.scn
    let Some(bytes) = sofa_mesh("msh4_cube.msh") else {
        return;
    };
    let g = read_gmsh(&bytes).unwrap();
    let m = &g.mesh;
    assert_eq!(m.points.len(), 14);
    assert_eq!(m.edges.len(), 12);
    assert_eq!(m.triangles.len(), 24);
    assert!(m.quads.is_empty() && m.hexahedra.is_empty());
    assert_eq!(m.tetrahedra.len(), 24);
    assert_eq!(m.points[0], [0.0, 0.0, 1.0]);
    assert_eq!(m.points[8], [0.0, 0.5, 0.5]);
    assert_eq!(m.points[13], [0.5, 0.5, 1.0]);
    assert_eq!(m.edges[0], [1, 0]);
    assert_eq!(m.triangles[0], [1, 0, 8]);
    assert_eq!(m.tetrahedra[0], [10, 11, 9, 12]);
    assert_eq!(m.tetrahedra[23], [12, 9, 10, 5]);
    // its 8 points are dropped without a note
    assert!(g.notes.is_empty(), "{:?}", g.notes);
}

#[test]
fn every_sofa_share_mesh_loads() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/sofa/share/mesh");
    let Some(square) = sofa_mesh("square3.msh") else {
        return;
    };
    let m = parse_gmsh_bytes(&square).unwrap();
    assert_eq!((m.points.len(), m.edges.len()), (774, 96));
    assert_eq!(m.triangles.len(), 1450);
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "msh") {
            let g = read_gmsh(&std::fs::read(&p).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(g.notes.is_empty(), "{}: {:?}", p.display(), g.notes);
            n += 1;
        }
    }
    assert!(n >= 20, "{n} meshes");
}

/// Every cut of `file` before its last `$EndElements` is complete is refused, and no cut
/// panics.
fn refuse_truncations(file: &[u8]) {
    let end = file
        .windows(12)
        .rposition(|w| w == b"$EndElements")
        .unwrap()
        + 12;
    for cut in 0..file.len() {
        let r = read_gmsh(&file[..cut]);
        if cut < end {
            assert!(r.is_err(), "cut at {cut} of {} accepted", file.len());
        }
    }
}

#[test]
fn truncated_files_are_refused() {
    refuse_truncations(V41.as_bytes());
    refuse_truncations(V22.as_bytes());
    refuse_truncations(&v41_binary(false, 8));
    refuse_truncations(&v22_binary(false));
    let e = read_gmsh(&v41_binary(false, 8)[..300]).unwrap_err();
    assert!(
        matches!(
            e,
            MeshReadError::Syntax {
                at: Position::Byte(_),
                ..
            }
        ),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(e.starts_with("byte "), "{e}");
}

#[test]
fn unknown_nodes_and_element_types_are_refused_with_their_line() {
    let bad = V41.replace("6 10 30 20 40\n", "6 10 30 20 99\n");
    let e = parse_gmsh(&bad).unwrap_err().to_string();
    let line = line_of(&bad, "6 10 30 20 99");
    assert!(e.starts_with(&format!("line {line}:")), "{e}");
    assert!(e.contains("node 99"), "{e}");

    let bad = V41.replace("3 1 4 1\n", "3 1 99 1\n");
    let e = parse_gmsh(&bad).unwrap_err().to_string();
    let line = line_of(&bad, "3 1 99 1");
    assert!(e.starts_with(&format!("line {line}:")), "{e}");
    assert!(e.contains("unknown Gmsh element type 99"), "{e}");

    let bad = V22.replace("3 2 2 0 2 3 1 7", "3 99 2 0 2 3 1 7");
    let e = parse_gmsh(&bad).unwrap_err().to_string();
    assert!(e.contains("unknown Gmsh element type 99"), "{e}");
    assert!(
        e.starts_with(&format!("line {}:", line_of(&bad, "3 99 2"))),
        "{e}"
    );
    // MSH 2 element referring to a missing node; MSH 1 with a wrong node count
    let e = parse_gmsh(&V22.replace("3 1 7\n", "3 1 8\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("node 8"), "{e}");
    let v1 = "$NOD\n2\n1 0 0 0\n2 1 0 0\n$ENDNOD\n$ELM\n1\n1 1 0 0 3 1 2 2\n$ENDELM\n";
    let e = parse_gmsh(v1).unwrap_err().to_string();
    assert!(
        e.starts_with("line 8:") && e.contains("2 nodes, not 3"),
        "{e}"
    );

    // binary: a node tag out of range, an unknown type
    let mut b = v22_binary(false);
    let at = b.len() - "\n$EndElements\n".len() - 4;
    b[at..at + 4].copy_from_slice(&1000i32.to_le_bytes());
    let e = parse_gmsh_bytes(&b).unwrap_err().to_string();
    assert!(e.starts_with("byte ") && e.contains("node 1000"), "{e}");
    let mut b = v41_binary(false, 8);
    let tet = b
        .windows(16)
        .position(|w| w == [3, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0])
        .unwrap();
    b[tet + 8] = 99;
    let e = parse_gmsh_bytes(&b).unwrap_err().to_string();
    assert!(e.contains("unknown Gmsh element type 99"), "{e}");
}

#[test]
fn bad_headers_are_refused() {
    // an endianness marker that is 1 in neither byte order
    let mut b = v41_binary(false, 8);
    let at = "$MeshFormat\n4.1 1 8\n".len();
    b[at..at + 4].copy_from_slice(&[0, 2, 0, 0]);
    let e = parse_gmsh_bytes(&b).unwrap_err().to_string();
    assert!(e.contains("endianness"), "{e}");
    // the format's other versions and widths
    let e = parse_gmsh("$MeshFormat\n3.0 0 8\n$EndMeshFormat\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("format 3.0 is not supported"), "{e}");
    let e = parse_gmsh_bytes(b"$MeshFormat\n4 1 8\n\x01\0\0\0\n$EndMeshFormat\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("MSH 4 binary files are not supported"), "{e}");
    let e = parse_gmsh_bytes(b"$MeshFormat\n2.2 1 4\n\x01\0\0\0\n$EndMeshFormat\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("8-byte reals"), "{e}");
    let e = parse_gmsh_bytes(b"$MeshFormat\n4.1 1\n\x01\0\0\0\n$EndMeshFormat\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad $MeshFormat line"), "{e}");
    assert!(parse_gmsh(&V22.replace("2.2 0 8", "2.2 0")).is_ok());
    let e = parse_gmsh("$MeshFormat\n4.1 2 8\n$EndMeshFormat\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("file-type 2"), "{e}");
    let e = parse_gmsh("$MeshFormat\n4.1 0 8\n$Nodes\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("line 3:") && e.contains("$EndMeshFormat"),
        "{e}"
    );
    // sections out of order, missing, unclosed
    let e = parse_gmsh("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Elements\n0 0 0 0\n$EndElements\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("before the nodes"), "{e}");
    let e = parse_gmsh("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n0 0 0 0\n$EndNodes\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no $Elements"), "{e}");
    let e = parse_gmsh("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Comments\nhello\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("line 5:") && e.contains("$EndComments"),
        "{e}"
    );
    // a node tag defined twice, a bad number with its line
    let e = parse_gmsh(&V22.replace("7 0 1 0", "3 0 1 0"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("node tag 3 is defined twice"), "{e}");
    let e = parse_gmsh(&V41.replace("1 1 0\n", "1 x 0\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "line {}:",
            line_of(&V41.replace("1 1 0\n", "1 x 0\n"), "1 x 0")
        )) && e.contains("found 'x'"),
        "{e}"
    );
    let e = parse_gmsh(&V41.replace("5 10 30 50 20", "5 10 30 50 20 40"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("unexpected '40'"), "{e}");
}

#[test]
fn huge_declared_counts_are_refused_without_allocating() {
    let huge = [
        V41.replace("3 6 7 50\n", "3 18446744073709551615 7 50\n"),
        V41.replace("3 6 7 50\n", "4000000000000 6 7 50\n"),
        V41.replace("3 1 0 3\n", "3 1 0 3000000000000\n"),
        V41.replace("6 7 1 7\n", "6 99999999999999 1 7\n"),
        V41.replace("2 5 2 2\n", "2 5 2 200000000000\n"),
        V22.replace("$Nodes\n5\n", "$Nodes\n99999999999999\n"),
        V22.replace("$Elements\n5\n", "$Elements\n99999999999999\n"),
    ];
    for text in &huge {
        let e = parse_gmsh(text).unwrap_err().to_string();
        assert!(e.contains("declared"), "{e}");
    }
    // binary: the node count of the $Nodes header, a block's element count
    let mut b = v41_binary(false, 8);
    let at = b.windows(7).position(|w| w == b"$Nodes\n").unwrap() + 7 + 8;
    b[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = parse_gmsh_bytes(&b).unwrap_err().to_string();
    assert!(e.contains("declared"), "{e}");
    let mut b = v22_binary(false);
    let at = b
        .windows(8)
        .position(|w| w == b"\n5\n\x0f\0\0\0\x01")
        .unwrap()
        + 7;
    b[at..at + 4].copy_from_slice(&i32::MAX.to_le_bytes());
    let e = parse_gmsh_bytes(&b).unwrap_err().to_string();
    assert!(e.contains("remain") || e.contains("declared"), "{e}");
}

#[test]
fn corrupted_bytes_never_panic() {
    // xorshift: deterministic byte flips over each kind of file
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let files = [
        V41.as_bytes().to_vec(),
        V22.as_bytes().to_vec(),
        v41_binary(false, 8),
        v41_binary(true, 4),
        v22_binary(false),
    ];
    for f in &files {
        for _ in 0..1500 {
            let mut g = f.clone();
            for _ in 0..1 + next() % 3 {
                let i = (next() % g.len() as u64) as usize;
                g[i] = next() as u8;
            }
            let _ = read_gmsh(&g);
        }
    }
}
