//! Gmsh `.msh` files, as MeshGmshLoader reads them: MSH 1 (legacy), 2.x, 4.0 and 4.1 in ASCII,
//! and MSH 2.x and 4.1 binary (either byte order).
//!
//! SOFA's MeshGmshLoader (Sofa/Component/IO/Mesh/src/sofa/component/io/mesh/MeshGmshLoader.cpp)
//! hands the file to `helper::io::MeshGmsh` (Sofa/framework/Helper/src/sofa/helper/io/MeshGmsh.cpp),
//! which reads ASCII files of formats 1, 2 and 4. What it keeps, and what is kept here:
//!
//! - lines (Gmsh type 1), triangles (2), quadrangles (3), tetrahedra (4), hexahedra (5);
//! - second-order lines (8), triangles (9) and tetrahedra (11) by their corner nodes. A
//!   second-order triangle or tetrahedron also adds its edges (each edge once), which SOFA
//!   creates to record the mid-edge nodes (`highOrderEdgePositions`, an output Canapé's loader
//!   does not have); the mid-edge nodes stay points of the mesh;
//! - points (15) are dropped, and so is every other element type Gmsh defines (prisms,
//!   pyramids, higher orders): those are counted in [`GmshMesh::notes`]. A type Gmsh does not
//!   define is an error: its number of nodes is unknown, so the file cannot be read past it;
//! - sections other than `$MeshFormat`, `$Nodes` and `$Elements` (`$PhysicalNames`,
//!   `$Entities`, `$PartitionedEntities`, `$Periodic`, post-processing data, comments…) are
//!   skipped up to their `$End…` line (in a binary file, the first line that reads so): SOFA
//!   reads neither physical names nor entities (it fills element groups from element tags,
//!   outputs Canapé's loader does not have).
//!
//! Where this reader departs from SOFA's:
//!
//! - node tags are mapped to 0-based indices in file order in every format; SOFA's format-4
//!   branch takes tag − 1 as the index, which is wrong for sparse or unordered tags;
//! - an element naming a node that `$Nodes` does not define is an error (SOFA's format 1/2
//!   branch silently uses node 0), and so is a node tag defined twice;
//! - second-order lines and the edges added for second-order triangles and tetrahedra are
//!   unique over the whole file (SOFA's format-4 branch removes duplicate triangle and
//!   tetrahedron edges only, its format 1/2 branch only within one element);
//! - MSH 4.0 ASCII is read with its own layout (entity tag before dimension, each node tag
//!   beside its coordinates; SOFA reads every format-4 file as 4.1);
//! - binary files are read following the Gmsh reference manual (SOFA reads them as text, which
//!   fails): MSH 2 with 4-byte ints and 8-byte reals, MSH 4.1 with `size_t` of the header's
//!   data-size (4 or 8). The int 1 written after the `$MeshFormat` line gives the byte order;
//!   big-endian files are read too, a marker that is 1 in neither order is an error. MSH 4.0
//!   binary is refused: its integers had the writing platform's `unsigned long` width, which
//!   the header does not give (Gmsh itself no longer reads it).
//!
//! Malformed input (truncated files, bad numbers, counts larger than the file can hold, unknown
//! node tags or element types) is an `Err` naming the line (ASCII) or byte offset (binary);
//! nothing is allocated from a declared count beyond what the rest of the file can hold.

use crate::files::excerpt;
use canape_core::mesh::Mesh;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Display;
use std::str::FromStr;

/// A Gmsh file's mesh and remarks on what was left out (element types MeshGmshLoader drops).
#[derive(Clone, Debug, Default)]
pub struct GmshMesh {
    pub mesh: Mesh,
    pub notes: Vec<String>,
}

/// Parse a Gmsh mesh given as text (any ASCII format; see the module documentation).
pub fn parse_gmsh(text: &str) -> Result<Mesh, String> {
    parse_gmsh_bytes(text.as_bytes())
}

/// Parse a Gmsh mesh file's bytes, ASCII or binary.
pub fn parse_gmsh_bytes(bytes: &[u8]) -> Result<Mesh, String> {
    read_gmsh(bytes).map(|g| g.mesh)
}

/// Parse a Gmsh mesh file's bytes, ASCII or binary, with notes on the elements left out.
pub fn read_gmsh(bytes: &[u8]) -> Result<GmshMesh, String> {
    let mut r = Reader::new(bytes);
    let first = loop {
        match r.raw_line() {
            None => return Err("empty file".into()),
            Some(l) if trim(l).is_empty() => continue,
            Some(l) => break trim(l),
        }
    };
    let layout = match first {
        b"$MeshFormat" => read_format(&mut r)?,
        b"$NOD" => Layout::V1,
        _ => return Err(format!("not a Gmsh file (first line '{}')", show(first))),
    };
    let mut b = Builder::default();
    let (mut nodes_read, mut elements_read) = (false, false);
    // a format-1 file starts in its node section
    let mut pending = (layout == Layout::V1).then_some("NOD");
    loop {
        let name = match pending.take() {
            Some(n) => n,
            None => match r.header()? {
                Some(n) => n,
                None => break,
            },
        };
        match (name, layout) {
            ("NOD", Layout::V1) | ("Nodes", Layout::V2 | Layout::V40 | Layout::V41) => {
                read_nodes(&mut r, &mut b, layout)?;
                nodes_read = true;
            }
            ("ELM", Layout::V1) | ("Elements", Layout::V2 | Layout::V40 | Layout::V41) => {
                if !nodes_read {
                    return r.fail("the elements come before the nodes");
                }
                read_elements(&mut r, &mut b, layout)?;
                elements_read = true;
            }
            ("MeshFormat", _) => return r.fail("a second $MeshFormat section"),
            (other, _) => r.skip_to(&format!("End{other}"))?,
        }
    }
    let (nodes, elements) = if layout == Layout::V1 {
        ("$NOD", "$ELM")
    } else {
        ("$Nodes", "$Elements")
    };
    if !nodes_read {
        return Err(format!("the file has no {nodes} section"));
    }
    if !elements_read {
        return Err(format!("the file has no {elements} section"));
    }
    Ok(b.finish())
}

/// The layout of a file's node and element sections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// MSH 1: `$NOD`/`$ELM`, each element with its regions and node count.
    V1,
    /// MSH 2.x: each element with its tags.
    V2,
    /// MSH 4.0: entity blocks, each node tag beside its coordinates.
    V40,
    /// MSH 4.1: entity blocks, node tags before coordinates.
    V41,
}

/// How a binary file stores numbers.
#[derive(Clone, Copy, Debug)]
struct Binary {
    big_endian: bool,
    /// Bytes of a `size_t` (MSH 4.1).
    size_width: usize,
}

/// Gmsh's element types: number, nodes, name (the Gmsh reference manual's list).
const ELEMENT_TYPES: &[(i32, usize, &str)] = &[
    (1, 2, "line"),
    (2, 3, "triangle"),
    (3, 4, "quadrangle"),
    (4, 4, "tetrahedron"),
    (5, 8, "hexahedron"),
    (6, 6, "prism"),
    (7, 5, "pyramid"),
    (8, 3, "second-order line"),
    (9, 6, "second-order triangle"),
    (10, 9, "9-node second-order quadrangle"),
    (11, 10, "second-order tetrahedron"),
    (12, 27, "27-node second-order hexahedron"),
    (13, 18, "18-node second-order prism"),
    (14, 14, "14-node second-order pyramid"),
    (15, 1, "point"),
    (16, 8, "8-node second-order quadrangle"),
    (17, 20, "20-node second-order hexahedron"),
    (18, 15, "15-node second-order prism"),
    (19, 13, "13-node second-order pyramid"),
    (20, 9, "9-node third-order incomplete triangle"),
    (21, 10, "10-node third-order triangle"),
    (22, 12, "12-node fourth-order incomplete triangle"),
    (23, 15, "15-node fourth-order triangle"),
    (24, 15, "15-node fifth-order incomplete triangle"),
    (25, 21, "21-node fifth-order triangle"),
    (26, 4, "4-node third-order line"),
    (27, 5, "5-node fourth-order line"),
    (28, 6, "6-node fifth-order line"),
    (29, 20, "20-node third-order tetrahedron"),
    (30, 35, "35-node fourth-order tetrahedron"),
    (31, 56, "56-node fifth-order tetrahedron"),
    (92, 64, "64-node third-order hexahedron"),
    (93, 125, "125-node fourth-order hexahedron"),
];

fn element_type(ty: i32) -> Option<(usize, &'static str)> {
    ELEMENT_TYPES
        .iter()
        .find(|t| t.0 == ty)
        .map(|&(_, n, name)| (n, name))
}

/// Corner pairs of a second-order triangle's and tetrahedron's edges, in the order SOFA adds
/// them (the order of Gmsh's mid-edge nodes).
const TRIANGLE_EDGES: [[usize; 2]; 3] = [[0, 1], [1, 2], [2, 0]];
const TETRA_EDGES: [[usize; 2]; 6] = [[0, 1], [1, 2], [0, 2], [0, 3], [2, 3], [1, 3]];

/// The mesh being read: points, node tag → index, elements.
#[derive(Default)]
struct Builder {
    mesh: Mesh,
    index: HashMap<u64, u32>,
    /// Edges of second-order lines, triangles and tetrahedra, as (smaller, larger) index.
    second_order_edges: HashSet<[u32; 2]>,
    /// Elements dropped, by Gmsh type (points excepted).
    skipped: BTreeMap<i32, usize>,
}

impl Builder {
    fn reserve_nodes(&mut self, n: usize) {
        self.mesh.points.reserve(n);
        self.index.reserve(n);
    }

    fn add_node(&mut self, r: &Reader<'_>, tag: u64, p: [f64; 3]) -> Result<(), String> {
        let Ok(i) = u32::try_from(self.mesh.points.len()) else {
            return r.fail("more nodes than Canapé indexes (2^32)");
        };
        if self.index.insert(tag, i).is_some() {
            return r.fail(format!("node tag {tag} is defined twice"));
        }
        self.mesh.points.push(p);
        Ok(())
    }

    fn node(&self, r: &Reader<'_>, tag: u64) -> Result<u32, String> {
        match self.index.get(&tag) {
            Some(&i) => Ok(i),
            None => r.fail(format!(
                "an element refers to node {tag}, which no node section defines"
            )),
        }
    }

    /// Keep an element of Gmsh type `ty` whose node indices are `v` (as many as the type has).
    fn add_element(&mut self, ty: i32, v: &[u32]) {
        let m = &mut self.mesh;
        match ty {
            1 => m.edges.push([v[0], v[1]]),
            8 => {
                if self
                    .second_order_edges
                    .insert([v[0].min(v[1]), v[0].max(v[1])])
                {
                    m.edges.push([v[0], v[1]]);
                }
            }
            2 | 9 => m.triangles.push([v[0], v[1], v[2]]),
            3 => m.quads.push([v[0], v[1], v[2], v[3]]),
            4 | 11 => m.tetrahedra.push([v[0], v[1], v[2], v[3]]),
            5 => {
                let mut h = [0; 8];
                h.copy_from_slice(&v[..8]);
                m.hexahedra.push(h);
            }
            15 => {}
            _ => *self.skipped.entry(ty).or_insert(0) += 1,
        }
        let pairs: &[[usize; 2]] = match ty {
            9 => &TRIANGLE_EDGES,
            11 => &TETRA_EDGES,
            _ => &[],
        };
        for &[a, b] in pairs {
            let e = [v[a].min(v[b]), v[a].max(v[b])];
            if self.second_order_edges.insert(e) {
                self.mesh.edges.push(e);
            }
        }
    }

    fn finish(self) -> GmshMesh {
        let notes = self
            .skipped
            .iter()
            .map(|(&ty, &n)| {
                let name = element_type(ty).map_or("?", |t| t.1);
                format!(
                    "{n} element(s) of Gmsh type {ty} ({name}) left out: MeshGmshLoader keeps \
                     lines, triangles, quadrangles, tetrahedra and hexahedra (second-order \
                     lines, triangles and tetrahedra by their corners)"
                )
            })
            .collect();
        GmshMesh {
            mesh: self.mesh,
            notes,
        }
    }
}

/// The `$MeshFormat` section after its header line: the layout, and the byte order of a binary
/// file (set in the reader).
fn read_format(r: &mut Reader<'_>) -> Result<Layout, String> {
    let at = r.at();
    let Some(raw) = r.raw_line() else {
        return r.fail("the file ends after $MeshFormat");
    };
    let text = String::from_utf8_lossy(trim(raw));
    let bad = || {
        format!(
            "{at}: bad $MeshFormat line '{}' (expected: version file-type data-size)",
            excerpt(&text)
        )
    };
    let mut f = text.split_whitespace();
    let version_text = f.next().ok_or_else(bad)?;
    let version: f64 = version_text.parse().map_err(|_| bad())?;
    let file_type: i64 = f.next().and_then(|t| t.parse().ok()).ok_or_else(bad)?;
    // the data-size matters to binary files only (SOFA does not read it)
    let data_size: Option<i64> = f.next().and_then(|t| t.parse().ok());
    let layout = if (2.0..3.0).contains(&version) {
        Layout::V2
    } else if (4.0..4.1 - 1e-9).contains(&version) {
        Layout::V40
    } else if (4.1 - 1e-9..5.0).contains(&version) {
        Layout::V41
    } else {
        return Err(format!(
            "{at}: Gmsh format {} is not supported (2.x, 4.0 and 4.1 are, and MSH 1 \
             files, which have no $MeshFormat)",
            excerpt(version_text)
        ));
    };
    match file_type {
        0 => {}
        1 => {
            let Some(data_size) = data_size else {
                return Err(bad());
            };
            let size_width = match (layout, data_size) {
                (Layout::V2, 8) => 8,
                (Layout::V2, _) => {
                    return Err(format!(
                        "{at}: data-size {data_size}: MSH 2 binary files are read with 8-byte \
                         reals only"
                    ))
                }
                (Layout::V41, 4) => 4,
                (Layout::V41, 8) => 8,
                (Layout::V41, _) => {
                    return Err(format!(
                        "{at}: data-size {data_size} is not the size of a size_t (4 or 8)"
                    ))
                }
                _ => {
                    return Err(format!(
                        "{at}: MSH {} binary files are not supported (their integer widths \
                         depended on the writing platform); save the mesh as MSH 4.1 or ASCII",
                        excerpt(version_text)
                    ))
                }
            };
            r.binary = Some(Binary {
                big_endian: false,
                size_width,
            });
            let mut one = [0u8; 4];
            one.copy_from_slice(r.take(4, "the endianness marker")?);
            let (le, be) = (i32::from_le_bytes(one), i32::from_be_bytes(one));
            let big_endian = match (le, be) {
                (1, _) => false,
                (_, 1) => true,
                _ => {
                    return Err(format!(
                        "byte {}: the endianness marker after the $MeshFormat line reads {le} \
                         (little-endian) or {be} (big-endian), not 1",
                        r.pos - 4
                    ))
                }
            };
            r.binary = Some(Binary {
                big_endian,
                size_width,
            });
        }
        _ => {
            return Err(format!(
                "{at}: file-type {file_type} is neither 0 (ASCII) nor 1 (binary)"
            ))
        }
    }
    r.expect_end("EndMeshFormat")?;
    Ok(layout)
}

fn read_nodes(r: &mut Reader<'_>, b: &mut Builder, layout: Layout) -> Result<(), String> {
    match layout {
        Layout::V1 | Layout::V2 => nodes_v2(r, b)?,
        Layout::V40 | Layout::V41 => nodes_v4(r, b, layout == Layout::V41)?,
    }
    r.expect_end(if layout == Layout::V1 {
        "ENDNOD"
    } else {
        "EndNodes"
    })
}

fn read_elements(r: &mut Reader<'_>, b: &mut Builder, layout: Layout) -> Result<(), String> {
    match layout {
        Layout::V1 | Layout::V2 if r.binary.is_some() => elements_v2_binary(r, b)?,
        Layout::V1 | Layout::V2 => elements_v12_ascii(r, b, layout == Layout::V1)?,
        Layout::V40 | Layout::V41 => elements_v4(r, b, layout == Layout::V41)?,
    }
    r.expect_end(if layout == Layout::V1 {
        "ENDELM"
    } else {
        "EndElements"
    })
}

/// MSH 1 and 2 nodes: their count, then `tag x y z` each (in binary: int, 3 doubles).
fn nodes_v2(r: &mut Reader<'_>, b: &mut Builder) -> Result<(), String> {
    let binary = r.binary.is_some();
    let n = if binary {
        r.count_line("the number of nodes")?
    } else {
        let n = r.size("the number of nodes")?;
        r.record_end("the number of nodes")?;
        n
    };
    let n = r.check_count(n, if binary { 28 } else { 8 }, "nodes")?;
    b.reserve_nodes(n);
    for _ in 0..n {
        let tag = if binary {
            let t = r.int("a node tag")?;
            match u64::try_from(t) {
                Ok(t) => t,
                Err(_) => return r.fail(format!("negative node tag {t}")),
            }
        } else {
            r.size("a node tag")?
        };
        let p = r.point(0)?;
        r.record_end("a node")?;
        b.add_node(r, tag, p)?;
    }
    Ok(())
}

/// MSH 4 nodes: entity blocks, each with its nodes' tags and coordinates (4.1: all tags, then
/// all coordinates; 4.0: each tag beside its coordinates).
fn nodes_v4(r: &mut Reader<'_>, b: &mut Builder, v41: bool) -> Result<(), String> {
    let blocks = r.size("the number of node blocks")?;
    let total = r.size("the number of nodes")?;
    if v41 {
        r.size("the smallest node tag")?;
        r.size("the largest node tag")?;
    }
    r.record_end("the $Nodes header")?;
    let w = r.binary.map_or(0, |bin| bin.size_width);
    let binary = r.binary.is_some();
    let blocks = r.check_count(blocks, if binary { 12 + w } else { 8 }, "node blocks")?;
    let total = r.check_count(total, if binary { w + 24 } else { 8 }, "nodes")?;
    b.reserve_nodes(total);
    let mut tags = Vec::new();
    for _ in 0..blocks {
        let dim = if v41 {
            let dim = r.int("an entity dimension")?;
            r.int("an entity tag")?;
            dim
        } else {
            r.int("an entity tag")?;
            r.int("an entity dimension")?
        };
        let parametric = r.int("the parametric flag")?;
        let n = r.size("the number of nodes in a block")?;
        if !(0..=3).contains(&dim) {
            return r.fail(format!("entity dimension {dim} is not 0, 1, 2 or 3"));
        }
        // parametric nodes carry one more coordinate per dimension of their entity
        let extra = if parametric != 0 { dim as usize } else { 0 };
        r.record_end("a node block header")?;
        let per_node = if binary {
            w + 8 * (3 + extra)
        } else {
            8 + 2 * extra
        };
        let n = r.check_count(n, per_node, "nodes in a block")?;
        if v41 {
            tags.clear();
            tags.reserve(n);
            for _ in 0..n {
                tags.push(r.size("a node tag")?);
                r.record_end("a node tag")?;
            }
            for &tag in &tags {
                let p = r.point(extra)?;
                r.record_end("node coordinates")?;
                b.add_node(r, tag, p)?;
            }
        } else {
            for _ in 0..n {
                let tag = r.size("a node tag")?;
                let p = r.point(extra)?;
                r.record_end("a node")?;
                b.add_node(r, tag, p)?;
            }
        }
    }
    Ok(())
}

/// The number of nodes of element type `ty`, an error for a type Gmsh does not define.
fn nodes_of(r: &Reader<'_>, ty: i32) -> Result<usize, String> {
    match element_type(ty) {
        Some((n, _)) => Ok(n),
        None => r.fail(format!("unknown Gmsh element type {ty}")),
    }
}

/// MSH 1 and 2 ASCII elements, one a line: `number type` then (MSH 1) `physical elementary
/// node-count` or (MSH 2) `tag-count tags…`, then the node tags.
fn elements_v12_ascii(r: &mut Reader<'_>, b: &mut Builder, v1: bool) -> Result<(), String> {
    let m = r.size("the number of elements")?;
    r.record_end("the number of elements")?;
    let m = r.check_count(m, if v1 { 12 } else { 8 }, "elements")?;
    let mut v = Vec::new();
    for _ in 0..m {
        r.value::<i64>("an element number")?;
        let ty = r.int("an element type")?;
        let nn = if v1 {
            r.value::<i64>("a physical region")?;
            r.value::<i64>("an elementary region")?;
            let count = r.size("a number of nodes")?;
            let (nn, name) = match element_type(ty) {
                Some(t) => t,
                None => return r.fail(format!("unknown Gmsh element type {ty}")),
            };
            if count != nn as u64 {
                return r.fail(format!(
                    "an element of type {ty} ({name}) has {nn} nodes, not {count}"
                ));
            }
            nn
        } else {
            let nn = nodes_of(r, ty)?;
            let tags = r.size("a number of tags")?;
            for _ in 0..tags {
                r.value::<i64>("an element tag")?;
            }
            nn
        };
        v.clear();
        for _ in 0..nn {
            let tag = r.size("a node tag")?;
            v.push(b.node(r, tag)?);
        }
        r.record_end("an element")?;
        b.add_element(ty, &v);
    }
    Ok(())
}

/// MSH 2 binary elements: blocks of one type, each `type count tag-count` then, per element,
/// its number, tags and node tags (all 4-byte ints).
fn elements_v2_binary(r: &mut Reader<'_>, b: &mut Builder) -> Result<(), String> {
    let m = r.count_line("the number of elements")?;
    let m = r.check_count(m, 8, "elements")?;
    let mut done = 0;
    let mut v = Vec::new();
    while done < m {
        let ty = r.int("an element type")?;
        let follow = r.int("a number of elements")?;
        let tags = r.int("a number of tags")?;
        let nn = nodes_of(r, ty)?;
        let (Ok(follow), Ok(tags)) = (usize::try_from(follow), usize::try_from(tags)) else {
            return r.fail(format!(
                "element block header with {follow} elements of {tags} tags"
            ));
        };
        if follow == 0 || follow > m - done {
            return r.fail(format!(
                "an element block of {follow} elements where {} remain of the {m} declared",
                m - done
            ));
        }
        let per_element = 4 * (1 + tags + nn);
        r.check_count(follow as u64, per_element, "elements in a block")?;
        for _ in 0..follow {
            r.int("an element number")?;
            r.take(4 * tags, "element tags")?;
            v.clear();
            for _ in 0..nn {
                let t = r.int("a node tag")?;
                let Ok(t) = u64::try_from(t) else {
                    return r.fail(format!("negative node tag {t}"));
                };
                v.push(b.node(r, t)?);
            }
            b.add_element(ty, &v);
        }
        done += follow;
    }
    Ok(())
}

/// MSH 4 elements: entity blocks of one type, each element its tag then its node tags.
fn elements_v4(r: &mut Reader<'_>, b: &mut Builder, v41: bool) -> Result<(), String> {
    let blocks = r.size("the number of element blocks")?;
    let total = r.size("the number of elements")?;
    if v41 {
        r.size("the smallest element tag")?;
        r.size("the largest element tag")?;
    }
    r.record_end("the $Elements header")?;
    let w = r.binary.map_or(0, |bin| bin.size_width);
    let binary = r.binary.is_some();
    let blocks = r.check_count(blocks, if binary { 12 + w } else { 8 }, "element blocks")?;
    r.check_count(total, if binary { 2 * w } else { 4 }, "elements")?;
    let mut v = Vec::new();
    for _ in 0..blocks {
        if v41 {
            r.int("an entity dimension")?;
            r.int("an entity tag")?;
        } else {
            r.int("an entity tag")?;
            r.int("an entity dimension")?;
        }
        let ty = r.int("an element type")?;
        let n = r.size("the number of elements in a block")?;
        let nn = nodes_of(r, ty)?;
        r.record_end("an element block header")?;
        let per_element = if binary { w * (1 + nn) } else { 2 * (1 + nn) };
        let n = r.check_count(n, per_element, "elements in a block")?;
        for _ in 0..n {
            r.size("an element tag")?;
            v.clear();
            for _ in 0..nn {
                let tag = r.size("a node tag")?;
                v.push(b.node(r, tag)?);
            }
            r.record_end("an element")?;
            b.add_element(ty, &v);
        }
    }
    Ok(())
}

/// A cursor over the file: text lines and tokens, and binary numbers once the header said so.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Line of `pos`, from 1.
    line: usize,
    /// Set for a binary file: its numbers' encoding (and positions are then byte offsets).
    binary: Option<Binary>,
}

/// Bytes without surrounding ASCII white space.
fn trim(b: &[u8]) -> &[u8] {
    b.trim_ascii()
}

/// Some bytes of the file for a message: short, control characters escaped.
fn show(b: &[u8]) -> String {
    excerpt(&String::from_utf8_lossy(&b[..b.len().min(240)]))
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            pos: 0,
            line: 1,
            binary: None,
        }
    }

    /// Where the cursor is, for a message.
    fn at(&self) -> String {
        if self.binary.is_some() {
            format!("byte {}", self.pos)
        } else {
            format!("line {}", self.line)
        }
    }

    fn fail<T>(&self, msg: impl Display) -> Result<T, String> {
        Err(format!("{}: {msg}", self.at()))
    }

    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// `count` records of at least `min_bytes` each, refused when the rest of the file cannot
    /// hold them (so that nothing is allocated from an absurd count).
    fn check_count(&self, count: u64, min_bytes: usize, what: &str) -> Result<usize, String> {
        match usize::try_from(count) {
            Ok(n) if n.saturating_mul(min_bytes) <= self.remaining() => Ok(n),
            _ => self.fail(format!(
                "{count} {what} declared, more than the {} bytes left in the file can hold",
                self.remaining()
            )),
        }
    }

    /// The next line's bytes without its end of line; `None` at the end of the file.
    fn raw_line(&mut self) -> Option<&'a [u8]> {
        let rest = self.buf.get(self.pos..).filter(|r| !r.is_empty())?;
        match rest.iter().position(|&c| c == b'\n') {
            Some(k) => {
                self.pos += k + 1;
                self.line += 1;
                Some(&rest[..k])
            }
            None => {
                self.pos = self.buf.len();
                Some(rest)
            }
        }
    }

    /// Skip white space (counting lines).
    fn skip_space(&mut self) {
        while let Some(&c) = self.buf.get(self.pos) {
            if !c.is_ascii_whitespace() {
                break;
            }
            if c == b'\n' {
                self.line += 1;
            }
            self.pos += 1;
        }
    }

    /// The next section's name (`$Nodes` → `Nodes`) after blank lines; `None` at the end.
    fn header(&mut self) -> Result<Option<&'a str>, String> {
        self.skip_space();
        let at = self.at();
        let Some(l) = self.raw_line() else {
            return Ok(None);
        };
        match trim(l).split_first() {
            Some((b'$', name)) => match std::str::from_utf8(name) {
                Ok(name) => Ok(Some(name)),
                Err(_) => Err(format!("{at}: unreadable section name '{}'", show(l))),
            },
            _ => Err(format!(
                "{at}: expected a section header ($Name), found '{}'",
                show(l)
            )),
        }
    }

    /// Skip a section's content up to its `$<end>` line.
    fn skip_to(&mut self, end: &str) -> Result<(), String> {
        let at = self.at();
        while let Some(l) = self.raw_line() {
            if let Some(rest) = trim(l).strip_prefix(b"$") {
                if rest == end.as_bytes() {
                    return Ok(());
                }
            }
        }
        Err(format!(
            "{at}: the section starting here has no ${end} line"
        ))
    }

    /// After a section's data: white space, then the line `$<end>`.
    fn expect_end(&mut self, end: &str) -> Result<(), String> {
        self.skip_space();
        let at = self.at();
        match self.raw_line() {
            Some(l) if trim(l).strip_prefix(b"$") == Some(end.as_bytes()) => Ok(()),
            Some(l) => Err(format!("{at}: expected ${end}, found '{}'", show(l))),
            None => Err(format!("{at}: the file ends where ${end} was expected")),
        }
    }

    /// A count alone on a text line (MSH 2 binary sections start with one).
    fn count_line(&mut self, what: &str) -> Result<u64, String> {
        self.skip_space();
        let at = self.at();
        let Some(l) = self.raw_line() else {
            return Err(format!("{at}: the file ends where {what} was expected"));
        };
        std::str::from_utf8(trim(l))
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| format!("{at}: expected {what}, found '{}'", show(l)))
    }

    /// The next white-space separated token of a text file.
    fn token(&mut self) -> Result<Option<&'a str>, String> {
        self.skip_space();
        let start = self.pos;
        while self
            .buf
            .get(self.pos)
            .is_some_and(|c| !c.is_ascii_whitespace())
        {
            self.pos += 1;
        }
        if start == self.pos {
            return Ok(None);
        }
        let t = &self.buf[start..self.pos];
        match std::str::from_utf8(t) {
            Ok(t) => Ok(Some(t)),
            Err(_) => self.fail(format!("unreadable text '{}'", show(t))),
        }
    }

    /// The next token of a text file, parsed.
    fn value<T: FromStr>(&mut self, what: &str) -> Result<T, String> {
        match self.token()? {
            None => self.fail(format!("the file ends where {what} was expected")),
            Some(t) => match t.parse() {
                Ok(v) => Ok(v),
                Err(_) => self.fail(format!("expected {what}, found '{}'", excerpt(t))),
            },
        }
    }

    /// In a text file, require the rest of the line to be blank (a record is one line).
    fn record_end(&mut self, what: &str) -> Result<(), String> {
        if self.binary.is_some() {
            return Ok(());
        }
        while let Some(&c) = self.buf.get(self.pos) {
            match c {
                b'\n' => break,
                c if c.is_ascii_whitespace() => self.pos += 1,
                _ => {
                    let t = self.token()?.unwrap_or_default();
                    return self.fail(format!("unexpected '{}' after {what}", excerpt(t)));
                }
            }
        }
        Ok(())
    }

    /// The next `n` bytes of a binary file.
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.remaining() < n {
            return self.fail(format!("the file ends inside {what}"));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        if self.binary.is_some_and(|b| b.big_endian) {
            a.reverse();
        }
        Ok(a)
    }

    /// An `int`: 4 bytes in a binary file, a token in a text file.
    fn int(&mut self, what: &str) -> Result<i32, String> {
        if self.binary.is_some() {
            Ok(i32::from_le_bytes(self.bytes(what)?))
        } else {
            self.value(what)
        }
    }

    /// A `double`: 8 bytes in a binary file, a token in a text file.
    fn real(&mut self, what: &str) -> Result<f64, String> {
        if self.binary.is_some() {
            Ok(f64::from_le_bytes(self.bytes(what)?))
        } else {
            self.value(what)
        }
    }

    /// A `size_t` (a count or a tag): the data-size's bytes in a binary file, a token in a text
    /// file.
    fn size(&mut self, what: &str) -> Result<u64, String> {
        match self.binary {
            Some(Binary { size_width: 4, .. }) => Ok(u32::from_le_bytes(self.bytes(what)?) as u64),
            Some(_) => Ok(u64::from_le_bytes(self.bytes(what)?)),
            None => self.value(what),
        }
    }

    /// A node's coordinates, followed by `extra` parametric coordinates that are skipped.
    fn point(&mut self, extra: usize) -> Result<[f64; 3], String> {
        let mut p = [0.0; 3];
        for c in &mut p {
            *c = self.real("a node coordinate")?;
        }
        for _ in 0..extra {
            self.real("a parametric coordinate")?;
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
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
        assert!(e.starts_with("byte "), "{e}");
    }

    #[test]
    fn unknown_nodes_and_element_types_are_refused_with_their_line() {
        let bad = V41.replace("6 10 30 20 40\n", "6 10 30 20 99\n");
        let e = parse_gmsh(&bad).unwrap_err();
        let line = line_of(&bad, "6 10 30 20 99");
        assert!(e.starts_with(&format!("line {line}:")), "{e}");
        assert!(e.contains("node 99"), "{e}");

        let bad = V41.replace("3 1 4 1\n", "3 1 99 1\n");
        let e = parse_gmsh(&bad).unwrap_err();
        let line = line_of(&bad, "3 1 99 1");
        assert!(e.starts_with(&format!("line {line}:")), "{e}");
        assert!(e.contains("unknown Gmsh element type 99"), "{e}");

        let bad = V22.replace("3 2 2 0 2 3 1 7", "3 99 2 0 2 3 1 7");
        let e = parse_gmsh(&bad).unwrap_err();
        assert!(e.contains("unknown Gmsh element type 99"), "{e}");
        assert!(
            e.starts_with(&format!("line {}:", line_of(&bad, "3 99 2"))),
            "{e}"
        );
        // MSH 2 element referring to a missing node; MSH 1 with a wrong node count
        let e = parse_gmsh(&V22.replace("3 1 7\n", "3 1 8\n")).unwrap_err();
        assert!(e.contains("node 8"), "{e}");
        let v1 = "$NOD\n2\n1 0 0 0\n2 1 0 0\n$ENDNOD\n$ELM\n1\n1 1 0 0 3 1 2 2\n$ENDELM\n";
        let e = parse_gmsh(v1).unwrap_err();
        assert!(
            e.starts_with("line 8:") && e.contains("2 nodes, not 3"),
            "{e}"
        );

        // binary: a node tag out of range, an unknown type
        let mut b = v22_binary(false);
        let at = b.len() - "\n$EndElements\n".len() - 4;
        b[at..at + 4].copy_from_slice(&1000i32.to_le_bytes());
        let e = parse_gmsh_bytes(&b).unwrap_err();
        assert!(e.starts_with("byte ") && e.contains("node 1000"), "{e}");
        let mut b = v41_binary(false, 8);
        let tet = b
            .windows(16)
            .position(|w| w == [3, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0])
            .unwrap();
        b[tet + 8] = 99;
        let e = parse_gmsh_bytes(&b).unwrap_err();
        assert!(e.contains("unknown Gmsh element type 99"), "{e}");
    }

    #[test]
    fn bad_headers_are_refused() {
        // an endianness marker that is 1 in neither byte order
        let mut b = v41_binary(false, 8);
        let at = "$MeshFormat\n4.1 1 8\n".len();
        b[at..at + 4].copy_from_slice(&[0, 2, 0, 0]);
        let e = parse_gmsh_bytes(&b).unwrap_err();
        assert!(e.contains("endianness"), "{e}");
        // the format's other versions and widths
        let e = parse_gmsh("$MeshFormat\n3.0 0 8\n$EndMeshFormat\n").unwrap_err();
        assert!(e.contains("format 3.0 is not supported"), "{e}");
        let e = parse_gmsh_bytes(b"$MeshFormat\n4 1 8\n\x01\0\0\0\n$EndMeshFormat\n").unwrap_err();
        assert!(e.contains("MSH 4 binary files are not supported"), "{e}");
        let e =
            parse_gmsh_bytes(b"$MeshFormat\n2.2 1 4\n\x01\0\0\0\n$EndMeshFormat\n").unwrap_err();
        assert!(e.contains("8-byte reals"), "{e}");
        let e = parse_gmsh_bytes(b"$MeshFormat\n4.1 1\n\x01\0\0\0\n$EndMeshFormat\n").unwrap_err();
        assert!(e.contains("bad $MeshFormat line"), "{e}");
        assert!(parse_gmsh(&V22.replace("2.2 0 8", "2.2 0")).is_ok());
        let e = parse_gmsh("$MeshFormat\n4.1 2 8\n$EndMeshFormat\n").unwrap_err();
        assert!(e.contains("file-type 2"), "{e}");
        let e = parse_gmsh("$MeshFormat\n4.1 0 8\n$Nodes\n").unwrap_err();
        assert!(
            e.starts_with("line 3:") && e.contains("$EndMeshFormat"),
            "{e}"
        );
        // sections out of order, missing, unclosed
        let e =
            parse_gmsh("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Elements\n0 0 0 0\n$EndElements\n")
                .unwrap_err();
        assert!(e.contains("before the nodes"), "{e}");
        let e = parse_gmsh("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n0 0 0 0\n$EndNodes\n")
            .unwrap_err();
        assert!(e.contains("no $Elements"), "{e}");
        let e = parse_gmsh("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Comments\nhello\n").unwrap_err();
        assert!(
            e.starts_with("line 5:") && e.contains("$EndComments"),
            "{e}"
        );
        // a node tag defined twice, a bad number with its line
        let e = parse_gmsh(&V22.replace("7 0 1 0", "3 0 1 0")).unwrap_err();
        assert!(e.contains("node tag 3 is defined twice"), "{e}");
        let e = parse_gmsh(&V41.replace("1 1 0\n", "1 x 0\n")).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "line {}:",
                line_of(&V41.replace("1 1 0\n", "1 x 0\n"), "1 x 0")
            )) && e.contains("found 'x'"),
            "{e}"
        );
        let e = parse_gmsh(&V41.replace("5 10 30 50 20", "5 10 30 50 20 40")).unwrap_err();
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
            let e = parse_gmsh(text).unwrap_err();
            assert!(e.contains("declared"), "{e}");
        }
        // binary: the node count of the $Nodes header, a block's element count
        let mut b = v41_binary(false, 8);
        let at = b.windows(7).position(|w| w == b"$Nodes\n").unwrap() + 7 + 8;
        b[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = parse_gmsh_bytes(&b).unwrap_err();
        assert!(e.contains("declared"), "{e}");
        let mut b = v22_binary(false);
        let at = b
            .windows(8)
            .position(|w| w == b"\n5\n\x0f\0\0\0\x01")
            .unwrap()
            + 7;
        b[at..at + 4].copy_from_slice(&i32::MAX.to_le_bytes());
        let e = parse_gmsh_bytes(&b).unwrap_err();
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
}
