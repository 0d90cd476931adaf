//! The `$MeshFormat`, `$Nodes` and `$Elements` sections of a Gmsh file, in each MSH layout
//! (1, 2, 4.0, 4.1; ASCII and binary), read into the mesh [`Builder`].

use super::{element_type, trim, Binary, Builder, Layout, Reader};
use crate::error::{MeshReadError, Position};
use crate::files::excerpt;

/// The `$MeshFormat` section after its header line: the layout, and the byte order of a binary
/// file (set in the reader).
pub(super) fn read_format(r: &mut Reader<'_>) -> Result<Layout, MeshReadError> {
    let at = r.at();
    let Some(raw) = r.raw_line() else {
        return r.fail("the file ends after $MeshFormat");
    };
    let text = String::from_utf8_lossy(trim(raw));
    let bad = || {
        MeshReadError::syntax(
            at,
            format!(
                "bad $MeshFormat line '{}' (expected: version file-type data-size)",
                excerpt(&text)
            ),
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
        return Err(MeshReadError::syntax(
            at,
            format!(
                "Gmsh format {} is not supported (2.x, 4.0 and 4.1 are, and MSH 1 \
                 files, which have no $MeshFormat)",
                excerpt(version_text)
            ),
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
                    return Err(MeshReadError::syntax(
                        at,
                        format!(
                            "data-size {data_size}: MSH 2 binary files are read with 8-byte \
                             reals only"
                        ),
                    ))
                }
                (Layout::V41, 4) => 4,
                (Layout::V41, 8) => 8,
                (Layout::V41, _) => {
                    return Err(MeshReadError::syntax(
                        at,
                        format!("data-size {data_size} is not the size of a size_t (4 or 8)"),
                    ))
                }
                _ => {
                    return Err(MeshReadError::syntax(
                        at,
                        format!(
                            "MSH {} binary files are not supported (their integer widths \
                             depended on the writing platform); save the mesh as MSH 4.1 or \
                             ASCII",
                            excerpt(version_text)
                        ),
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
                    return Err(MeshReadError::syntax(
                        Position::Byte(r.pos - 4),
                        format!(
                            "the endianness marker after the $MeshFormat line reads {le} \
                             (little-endian) or {be} (big-endian), not 1"
                        ),
                    ))
                }
            };
            r.binary = Some(Binary {
                big_endian,
                size_width,
            });
        }
        _ => {
            return Err(MeshReadError::syntax(
                at,
                format!("file-type {file_type} is neither 0 (ASCII) nor 1 (binary)"),
            ))
        }
    }
    r.expect_end("EndMeshFormat")?;
    Ok(layout)
}

pub(super) fn read_nodes(
    r: &mut Reader<'_>,
    b: &mut Builder,
    layout: Layout,
) -> Result<(), MeshReadError> {
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

pub(super) fn read_elements(
    r: &mut Reader<'_>,
    b: &mut Builder,
    layout: Layout,
) -> Result<(), MeshReadError> {
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
fn nodes_v2(r: &mut Reader<'_>, b: &mut Builder) -> Result<(), MeshReadError> {
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
fn nodes_v4(r: &mut Reader<'_>, b: &mut Builder, v41: bool) -> Result<(), MeshReadError> {
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
fn nodes_of(r: &Reader<'_>, ty: i32) -> Result<usize, MeshReadError> {
    match element_type(ty) {
        Some((n, _)) => Ok(n),
        None => r.fail(format!("unknown Gmsh element type {ty}")),
    }
}

/// MSH 1 and 2 ASCII elements, one a line: `number type` then (MSH 1) `physical elementary
/// node-count` or (MSH 2) `tag-count tags…`, then the node tags.
fn elements_v12_ascii(r: &mut Reader<'_>, b: &mut Builder, v1: bool) -> Result<(), MeshReadError> {
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
fn elements_v2_binary(r: &mut Reader<'_>, b: &mut Builder) -> Result<(), MeshReadError> {
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
fn elements_v4(r: &mut Reader<'_>, b: &mut Builder, v41: bool) -> Result<(), MeshReadError> {
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
