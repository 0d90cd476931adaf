//! SOFA's topology regression (Regression_test's TopologyRegression_test with the Playback
//! module's WriteTopology / CompareTopology): the topology containers it compares, the
//! `*_topology.txt.gz` dump format, and its score.
//!
//! Compared containers: depth-first over the nodes in document order, the first topology a
//! node holds itself, skipping nodes under a mapping unless the list says in-mapping; the k-th
//! is compared with `<scene>.reference_<k>_<name>_topology.txt.gz`. Before each step, the
//! block of the latest time not after the current time is compared type by type (edges,
//! triangles, quads, tetrahedra, hexahedra): a type with no reference elements is not checked,
//! a different count adds its difference, otherwise each element differing in any position
//! adds one. A scene passes when the total is 0 (the epsilon of the list is not used).

use crate::error::TopologyDumpError;
use canape_core::component::Role;
use canape_core::mesh::Mesh;
use canape_core::scene::{ComponentId, NodeId, Scene};

/// One dumped time: the element lists, flat, per type.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TopologyFrame {
    pub time: f64,
    /// Edges, triangles, quads, tetrahedra, hexahedra, flattened.
    pub lists: [Vec<u32>; 5],
}

const TYPES: [(&str, usize); 5] = [
    ("Edges=", 2),
    ("Triangles=", 3),
    ("Quads=", 4),
    ("Tetrahedra=", 4),
    ("Hexahedra=", 8),
];

/// Parse a topology dump.
pub fn parse_topology_frames(text: &str) -> Result<Vec<TopologyFrame>, TopologyDumpError> {
    let mut frames = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        let Some(t) = l.strip_prefix("T=") else {
            return Err(TopologyDumpError::ExpectedTime {
                found: l.to_string(),
            });
        };
        let time: f64 = t.trim().parse().map_err(|_| TopologyDumpError::BadTime {
            token: t.trim().to_string(),
        })?;
        let mut f = TopologyFrame {
            time,
            ..TopologyFrame::default()
        };
        for (k, &(key, width)) in TYPES.iter().enumerate() {
            let header = lines
                .next()
                .ok_or(TopologyDumpError::MissingList { key, time })?
                .trim();
            let n: usize = header
                .strip_prefix(key)
                .and_then(|c| c.trim().parse().ok())
                .ok_or_else(|| TopologyDumpError::ExpectedList {
                    key,
                    found: header.to_string(),
                })?;
            let body = lines.next().unwrap_or("");
            let values: Vec<u32> = body
                .split_whitespace()
                .map(|v| {
                    v.parse().map_err(|_| TopologyDumpError::BadIndex {
                        token: v.to_string(),
                    })
                })
                .collect::<Result<_, _>>()?;
            if values.len() != n * width {
                return Err(TopologyDumpError::ListSize {
                    key,
                    count: n,
                    time,
                    found: values.len(),
                    expected: n * width,
                });
            }
            f.lists[k] = values;
        }
        frames.push(f);
    }
    Ok(frames)
}

/// A mesh's element lists, flat, in the dump's order of types.
pub fn mesh_lists(m: &Mesh) -> [Vec<u32>; 5] {
    use canape_core::mesh::flatten;
    [
        flatten(&m.edges),
        flatten(&m.triangles),
        flatten(&m.quads),
        flatten(&m.tetrahedra),
        flatten(&m.hexahedra),
    ]
}

/// CompareTopology's count of differences between a reference block and a topology.
pub fn topology_error(reference: &TopologyFrame, ours: &[Vec<u32>; 5]) -> usize {
    let mut err = 0;
    for (k, (_, width)) in TYPES.iter().enumerate() {
        let (r, o) = (&reference.lists[k], &ours[k]);
        if r.is_empty() {
            continue;
        }
        let (nr, no) = (r.len() / width, o.len() / width);
        if nr != no {
            err += nr.abs_diff(no);
            continue;
        }
        err += r
            .chunks_exact(*width)
            .zip(o.chunks_exact(*width))
            .filter(|(a, b)| a != b)
            .count();
    }
    err
}

/// The reference block compared at time `t`: the latest one not after it.
pub fn block_at(frames: &[TopologyFrame], t: f64) -> Option<&TopologyFrame> {
    frames.iter().rev().find(|f| f.time <= t + 1e-8)
}

/// The compared topology containers: (k, name, component).
pub fn compared_topologies(scene: &Scene, in_mapping: bool) -> Vec<(usize, String, ComponentId)> {
    let mut out = Vec::new();
    fn rec(
        scene: &Scene,
        n: NodeId,
        under_mapping: bool,
        in_mapping: bool,
        out: &mut Vec<(usize, String, ComponentId)>,
    ) {
        let node = scene.node(n);
        if !node.activated {
            return;
        }
        let mapped = under_mapping || scene.node_components(n, Role::Mapping).next().is_some();
        if !mapped || in_mapping {
            if let Some(t) = scene.node_components(n, Role::Topology).next() {
                out.push((out.len(), scene.info(t).name.clone(), t));
            }
        }
        for &c in &node.children {
            rec(scene, c, mapped, in_mapping, out);
        }
    }
    if !scene.nodes.is_empty() {
        rec(scene, scene.root(), false, in_mapping, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_dumps_and_counts_differences_as_sofa() {
        let text = "T= 0\n  Edges= 2\n0 1 1 2\n  Triangles= 1\n0 1 2\n  Quads= 0\n\n  Tetrahedra= 0\n\n  Hexahedra= 0\n\nT= 0.05\n  Edges= 2\n0 1 1 2\n  Triangles= 1\n0 1 2\n  Quads= 0\n\n  Tetrahedra= 0\n\n  Hexahedra= 0\n\n";
        let f = parse_topology_frames(text).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[1].time, 0.05);
        assert_eq!(block_at(&f, 0.04).unwrap().time, 0.0);
        assert_eq!(block_at(&f, 0.05).unwrap().time, 0.05);
        let same = [vec![0, 1, 1, 2], vec![0, 1, 2], vec![], vec![], vec![]];
        assert_eq!(topology_error(&f[0], &same), 0);
        // an edge reversed: one difference; a missing triangle: one; extra quads: not checked
        let other = [vec![1, 0, 1, 2], vec![], vec![0, 1, 2, 3], vec![], vec![]];
        assert_eq!(topology_error(&f[0], &other), 2);
        assert!(parse_topology_frames("T= 0\n  Edges= 2\n0 1\n").is_err());
    }
}
