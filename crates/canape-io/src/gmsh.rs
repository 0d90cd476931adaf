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

use crate::error::{MeshReadError, Position};
use crate::files::excerpt;
use canape_core::mesh::Mesh;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::str::FromStr;

mod sections;

use sections::{read_elements, read_format, read_nodes};

/// A Gmsh file's mesh and remarks on what was left out (element types MeshGmshLoader drops).
#[derive(Clone, Debug, Default)]
pub struct GmshMesh {
    pub mesh: Mesh,
    pub notes: Vec<String>,
}

/// Parse a Gmsh mesh given as text (any ASCII format; see the module documentation).
pub fn parse_gmsh(text: &str) -> Result<Mesh, MeshReadError> {
    parse_gmsh_bytes(text.as_bytes())
}

/// Parse a Gmsh mesh file's bytes, ASCII or binary.
pub fn parse_gmsh_bytes(bytes: &[u8]) -> Result<Mesh, MeshReadError> {
    read_gmsh(bytes).map(|g| g.mesh)
}

/// Parse a Gmsh mesh file's bytes, ASCII or binary, with notes on the elements left out.
pub fn read_gmsh(bytes: &[u8]) -> Result<GmshMesh, MeshReadError> {
    let mut r = Reader::new(bytes);
    let first = loop {
        match r.raw_line() {
            None => return Err(MeshReadError::not_format("empty file")),
            Some(l) if trim(l).is_empty() => continue,
            Some(l) => break trim(l),
        }
    };
    let layout = match first {
        b"$MeshFormat" => read_format(&mut r)?,
        b"$NOD" => Layout::V1,
        _ => {
            return Err(MeshReadError::not_format(format!(
                "not a Gmsh file (first line '{}')",
                show(first)
            )))
        }
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
        return Err(MeshReadError::malformed(format!(
            "the file has no {nodes} section"
        )));
    }
    if !elements_read {
        return Err(MeshReadError::malformed(format!(
            "the file has no {elements} section"
        )));
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

    fn add_node(&mut self, r: &Reader<'_>, tag: u64, p: [f64; 3]) -> Result<(), MeshReadError> {
        let Ok(i) = u32::try_from(self.mesh.points.len()) else {
            return r.fail("more nodes than Canapé indexes (2^32)");
        };
        if self.index.insert(tag, i).is_some() {
            return r.fail(format!("node tag {tag} is defined twice"));
        }
        self.mesh.points.push(p);
        Ok(())
    }

    fn node(&self, r: &Reader<'_>, tag: u64) -> Result<u32, MeshReadError> {
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
    fn at(&self) -> Position {
        if self.binary.is_some() {
            Position::Byte(self.pos)
        } else {
            Position::Line(self.line)
        }
    }

    /// An error at the cursor.
    fn error(&self, msg: impl Into<String>) -> MeshReadError {
        MeshReadError::syntax(self.at(), msg)
    }

    fn fail<T>(&self, msg: impl Into<String>) -> Result<T, MeshReadError> {
        Err(self.error(msg))
    }

    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// `count` records of at least `min_bytes` each, refused when the rest of the file cannot
    /// hold them (so that nothing is allocated from an absurd count).
    fn check_count(
        &self,
        count: u64,
        min_bytes: usize,
        what: &str,
    ) -> Result<usize, MeshReadError> {
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
    fn header(&mut self) -> Result<Option<&'a str>, MeshReadError> {
        self.skip_space();
        let at = self.at();
        let Some(l) = self.raw_line() else {
            return Ok(None);
        };
        match trim(l).split_first() {
            Some((b'$', name)) => match std::str::from_utf8(name) {
                Ok(name) => Ok(Some(name)),
                Err(_) => Err(MeshReadError::syntax(
                    at,
                    format!("unreadable section name '{}'", show(l)),
                )),
            },
            _ => Err(MeshReadError::syntax(
                at,
                format!("expected a section header ($Name), found '{}'", show(l)),
            )),
        }
    }

    /// Skip a section's content up to its `$<end>` line.
    fn skip_to(&mut self, end: &str) -> Result<(), MeshReadError> {
        let at = self.at();
        while let Some(l) = self.raw_line() {
            if let Some(rest) = trim(l).strip_prefix(b"$") {
                if rest == end.as_bytes() {
                    return Ok(());
                }
            }
        }
        Err(MeshReadError::syntax(
            at,
            format!("the section starting here has no ${end} line"),
        ))
    }

    /// After a section's data: white space, then the line `$<end>`.
    fn expect_end(&mut self, end: &str) -> Result<(), MeshReadError> {
        self.skip_space();
        let at = self.at();
        match self.raw_line() {
            Some(l) if trim(l).strip_prefix(b"$") == Some(end.as_bytes()) => Ok(()),
            Some(l) => Err(MeshReadError::syntax(
                at,
                format!("expected ${end}, found '{}'", show(l)),
            )),
            None => Err(MeshReadError::syntax(
                at,
                format!("the file ends where ${end} was expected"),
            )),
        }
    }

    /// A count alone on a text line (MSH 2 binary sections start with one).
    fn count_line(&mut self, what: &str) -> Result<u64, MeshReadError> {
        self.skip_space();
        let at = self.at();
        let Some(l) = self.raw_line() else {
            return Err(MeshReadError::syntax(
                at,
                format!("the file ends where {what} was expected"),
            ));
        };
        std::str::from_utf8(trim(l))
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| {
                MeshReadError::syntax(at, format!("expected {what}, found '{}'", show(l)))
            })
    }

    /// The next white-space separated token of a text file.
    fn token(&mut self) -> Result<Option<&'a str>, MeshReadError> {
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
    fn value<T: FromStr>(&mut self, what: &str) -> Result<T, MeshReadError> {
        match self.token()? {
            None => self.fail(format!("the file ends where {what} was expected")),
            Some(t) => match t.parse() {
                Ok(v) => Ok(v),
                Err(_) => self.fail(format!("expected {what}, found '{}'", excerpt(t))),
            },
        }
    }

    /// In a text file, require the rest of the line to be blank (a record is one line).
    fn record_end(&mut self, what: &str) -> Result<(), MeshReadError> {
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
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], MeshReadError> {
        if self.remaining() < n {
            return self.fail(format!("the file ends inside {what}"));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], MeshReadError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        if self.binary.is_some_and(|b| b.big_endian) {
            a.reverse();
        }
        Ok(a)
    }

    /// An `int`: 4 bytes in a binary file, a token in a text file.
    fn int(&mut self, what: &str) -> Result<i32, MeshReadError> {
        if self.binary.is_some() {
            Ok(i32::from_le_bytes(self.bytes(what)?))
        } else {
            self.value(what)
        }
    }

    /// A `double`: 8 bytes in a binary file, a token in a text file.
    fn real(&mut self, what: &str) -> Result<f64, MeshReadError> {
        if self.binary.is_some() {
            Ok(f64::from_le_bytes(self.bytes(what)?))
        } else {
            self.value(what)
        }
    }

    /// A `size_t` (a count or a tag): the data-size's bytes in a binary file, a token in a text
    /// file.
    fn size(&mut self, what: &str) -> Result<u64, MeshReadError> {
        match self.binary {
            Some(Binary { size_width: 4, .. }) => Ok(u32::from_le_bytes(self.bytes(what)?) as u64),
            Some(_) => Ok(u64::from_le_bytes(self.bytes(what)?)),
            None => self.value(what),
        }
    }

    /// A node's coordinates, followed by `extra` parametric coordinates that are skipped.
    fn point(&mut self, extra: usize) -> Result<[f64; 3], MeshReadError> {
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
mod tests;
