//! SOFA's `.trian` and `.trian2` files (MeshTrianLoader).

use super::check_indices;
use crate::error::MeshReadError;
use crate::files::excerpt;
use canape_core::mesh::Mesh;

/// A trian file's content: the mesh, and for the `.trian` format each triangle's neighbours
/// (-1 across a border edge), the border edges and the triangles having one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrianMesh {
    pub mesh: Mesh,
    pub normals: Vec<[f64; 3]>,
    pub neighbors: Vec<[i64; 3]>,
    pub edges_on_border: Vec<[u32; 2]>,
    pub triangles_on_border: Vec<u32>,
}

/// Whitespace-separated tokens with the errors of a counted format.
struct Tokens<'a> {
    it: std::str::SplitWhitespace<'a>,
}

impl<'a> Tokens<'a> {
    fn next<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, MeshReadError> {
        let t = self
            .it
            .next()
            .ok_or_else(|| MeshReadError::malformed(format!("the file ends before {what}")))?;
        t.parse::<T>().map_err(|_| {
            MeshReadError::malformed(format!("'{}' is not a valid {what}", excerpt(t)))
        })
    }
    fn point(&mut self, what: &str) -> Result<[f64; 3], MeshReadError> {
        Ok([self.next(what)?, self.next(what)?, self.next(what)?])
    }
}

/// Parse a SOFA `.trian` file (MeshTrianLoader::readTrian): the vertex count and vertices,
/// then the triangle count and for each triangle its 3 vertices and 3 neighbours, neighbour k
/// across the edge opposite vertex k.
pub fn parse_trian(text: &str) -> Result<TrianMesh, MeshReadError> {
    let mut t = Tokens {
        it: text.split_whitespace(),
    };
    let mut out = TrianMesh::default();
    let nv: usize = t.next("vertex count")?;
    for _ in 0..nv {
        out.mesh.points.push(t.point("vertex coordinate")?);
    }
    let nt: usize = t.next("triangle count")?;
    for i in 0..nt {
        let n: [u32; 3] = [
            t.next("vertex index")?,
            t.next("vertex index")?,
            t.next("vertex index")?,
        ];
        let g: [i64; 3] = [
            t.next("neighbour index")?,
            t.next("neighbour index")?,
            t.next("neighbour index")?,
        ];
        out.mesh.triangles.push(n);
        out.neighbors.push(g);
        for (k, (a, b)) in [(1, 2), (2, 0), (0, 1)].into_iter().enumerate() {
            if g[k] == -1 {
                out.edges_on_border.push([n[a], n[b]]);
            }
        }
        if g.contains(&-1) {
            out.triangles_on_border.push(i as u32);
        }
    }
    check_indices(&out.mesh)?;
    Ok(out)
}

/// Parse a SOFA `.trian2` file (MeshTrianLoader::readTrian2): 13 header lines, then a word and
/// the vertex count with the vertices, a word and the normal count with the normals, a word and
/// the triangle count with the triangles.
pub fn parse_trian2(text: &str) -> Result<TrianMesh, MeshReadError> {
    let body: String = text.lines().skip(13).collect::<Vec<_>>().join("\n");
    let mut t = Tokens {
        it: body.split_whitespace(),
    };
    let mut out = TrianMesh::default();
    let _: String = t.next("the vertex section")?;
    let nv: usize = t.next("vertex count")?;
    for _ in 0..nv {
        out.mesh.points.push(t.point("vertex coordinate")?);
    }
    let _: String = t.next("the normal section")?;
    let nn: usize = t.next("normal count")?;
    for _ in 0..nn {
        out.normals.push(t.point("normal coordinate")?);
    }
    let _: String = t.next("the triangle section")?;
    let nt: usize = t.next("triangle count")?;
    for _ in 0..nt {
        out.mesh.triangles.push([
            t.next("vertex index")?,
            t.next("vertex index")?,
            t.next("vertex index")?,
        ]);
    }
    check_indices(&out.mesh)?;
    Ok(out)
}
