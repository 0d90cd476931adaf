//! Edge2QuadTopologicalMapping (Sofa/Component/Topology/Mapping/src/sofa/component/topology/
//! mapping/Edge2QuadTopologicalMapping.cpp): the quad skin of a tube around an edge topology.
//! Each input point `p` gets a circle of `nbPointsOnEachCircle` output points numbered
//! `p·N … p·N + N − 1`, point `j` at angle 2πj/N from the frame's y axis towards its z axis;
//! each input edge (p0, p1) gets N quads (p0·N+j, p1·N+j, p1·N+(j+1)%N, p0·N+(j+1)%N), j = 0…N−1,
//! closing the circle. `edgeList` restricts (and orders) the edges used; `flipNormals` reverses
//! each quad.
//!
//! SOFA places the output state's points on those circles from the input's Rigid3 frames; a
//! topological mapping here sees the input topology only, so the output topology's points are
//! put on the circles of the input topology's points with the frames' orientation taken as the
//! identity (what a Rigid3 state built from those points has). The TubularMapping every scene
//! pairs this with then maps the points from the actual frames. Static: topology changes are
//! not followed.

use super::{mapping_data, MappingData};
use canape_core::component::TopologicalMapping;
use canape_core::data::{DataKind, DataTable, Int, Ints, Real, Reals, Text};
use canape_core::impl_component;
use canape_core::mesh::Mesh;
use canape_core::registry::Registry;
use canape_core::scene::AnyComponent;

/// More output points than this is taken for a mistake (nbPointsOnEachCircle far too large).
const MAX_OUTPUT_POINTS: usize = 1 << 26;

/// Register this module's classes.
pub(crate) fn register(r: &mut Registry) {
    // not a templated class in SOFA: a template attribute is ignored, as for the other
    // topological mappings
    r.register(
        "Edge2QuadTopologicalMapping",
        "a tube of quads around the edges of an edge topology",
        |_, _| {
            Ok(AnyComponent::TopoMapping(Box::new(
                Edge2QuadTopologicalMapping::new(),
            )))
        },
    );
}

canape_core::data_schema! {
    /// What Edge2QuadTopologicalMapping adds to [`MappingData`].
    pub struct Edge2QuadData {
        nb_points_on_each_circle: Int = ("nbPointsOnEachCircle", DataKind::Int, "0", "Discretization of created circles"),
        radius: Real = ("radius", DataKind::Real, "1", "Radius of created circles in yz plan"),
        radius_focal: Real = ("radiusFocal", DataKind::Real, "0", "If greater than 0., radius in focal axis of created ellipses"),
        focal_axis: Reals = ("focalAxis", DataKind::Vector(3), "0 0 1", "In case of ellipses"),
        edge_list: Ints = ("edgeList", DataKind::Ints(1), "", "list of input edges for the topological mapping: by default, all considered"),
        to_quad_container: Text = ("toQuadContainer", DataKind::Str, "", "Output container storing Quads"),
        to_quad_modifier: Text = ("toQuadModifier", DataKind::Str, "", "Output modifier handling Quads"),
    }
}

#[derive(Clone)]
pub struct Edge2QuadTopologicalMapping {
    data: DataTable,
    /// Typed handles to the mapping Data in `data`.
    dm: MappingData,
    /// Typed handles to its own Data.
    d: Edge2QuadData,
}

impl Default for Edge2QuadTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

/// The mapping's settings once checked: what `map` builds from, or why it builds nothing.
struct Settings {
    n: usize,
    radius: f64,
    /// The second semi-axis and the ellipse's axis: `radiusFocal` along the frame's
    /// normalised `focalAxis`, `radius` along focalAxis × x.
    ellipse: Option<(f64, [f64; 3])>,
    flip: bool,
}

/// Why Edge2QuadTopologicalMapping's settings build no quad.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Edge2QuadError {
    #[error("no radius (neither radius nor radiusFocal) is given: no quad is created")]
    NoRadius,
    #[error("radius {radius} is not a positive number: no quad is created")]
    BadRadius { radius: f64 },
    #[error(
        "nbPointsOnEachCircle is {n}: at least 1 point per circle is needed, no quad is created"
    )]
    NoPointPerCircle { n: i64 },
    #[error("nbPointsOnEachCircle {n} is too large: no quad is created")]
    TooManyPointsPerCircle { n: usize },
}

impl Edge2QuadTopologicalMapping {
    pub fn new() -> Self {
        let (data, dm) = mapping_data(DataTable::new());
        let (data, d) = Edge2QuadData::declare(data);
        Edge2QuadTopologicalMapping { data, dm, d }
    }

    /// The checked settings, or the reason nothing is built (SOFA's init leaves the component
    /// invalid in these cases, or would build an empty or absurd tube).
    fn settings(&self) -> Result<Settings, Edge2QuadError> {
        let (d, h) = (&self.data, self.d);
        let (radius_set, focal_set) = (d.was_set(h.radius), d.was_set(h.radius_focal));
        if !radius_set && !focal_set {
            return Err(Edge2QuadError::NoRadius);
        }
        let radius = d.get(h.radius);
        if !(radius.is_finite() && radius > 0.0) {
            return Err(Edge2QuadError::BadRadius { radius });
        }
        let n = d.get(h.nb_points_on_each_circle);
        if n <= 0 {
            return Err(Edge2QuadError::NoPointPerCircle { n });
        }
        let n = n as usize;
        if n > MAX_OUTPUT_POINTS {
            return Err(Edge2QuadError::TooManyPointsPerCircle { n });
        }
        let focal = d.get(h.radius_focal);
        let ellipse = if focal_set && focal.is_finite() && focal > 0.0 {
            let a = d.get(h.focal_axis);
            let a = [a[0], a[1], a[2]];
            let len = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
            // a zero axis stays zero, as SOFA's normalisation leaves it
            let a = if len > 0.0 && len.is_finite() {
                a.map(|c| c / len)
            } else {
                a
            };
            Some((focal, a))
        } else {
            None
        };
        Ok(Settings {
            n,
            radius,
            ellipse,
            flip: d.get(self.dm.flip_normals),
        })
    }

    /// The input edges the tube follows, in order: `edgeList`'s (those that exist) or all.
    fn edges(&self, input: &Mesh) -> Vec<[u32; 2]> {
        let list = self.data.get(self.d.edge_list);
        if list.is_empty() {
            input.edges.clone()
        } else {
            list.iter()
                .filter_map(|&e| input.edges.get(e as usize).copied())
                .collect()
        }
    }
}

impl_component!(Edge2QuadTopologicalMapping, "Edge2QuadTopologicalMapping");

/// Whether the input has elements above edges (SOFA's check of the input topology's type).
fn has_higher_elements(m: &Mesh) -> bool {
    !(m.triangles.is_empty()
        && m.quads.is_empty()
        && m.tetrahedra.is_empty()
        && m.hexahedra.is_empty()
        && m.prisms.is_empty())
}

/// The circle (or ellipse) of `s.n` points around `c`, the frame's orientation being the
/// identity: point j at angle 2πj/N from y (focalAxis × x for an ellipse) towards z (focalAxis).
fn circle(c: [f64; 3], s: &Settings, out: &mut Vec<[f64; 3]>) {
    let (ry, rz, y, z) = match s.ellipse {
        // y = focalAxis × x, not normalised (as SOFA: shorter when the axis is not ⟂ x)
        Some((f, a)) => (s.radius, f, [0.0, a[2], -a[1]], a),
        None => (s.radius, s.radius, [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]),
    };
    for j in 0..s.n {
        let t = 2.0 * std::f64::consts::PI * j as f64 / s.n as f64;
        let (sin, cos) = t.sin_cos();
        out.push(std::array::from_fn(|k| {
            c[k] + y[k] * cos * ry + z[k] * sin * rz
        }));
    }
}

impl TopologicalMapping for Edge2QuadTopologicalMapping {
    fn map(&self, input: &Mesh, _grid: Option<[usize; 3]>) -> Mesh {
        let Ok(s) = self.settings() else {
            return Mesh::default();
        };
        if has_higher_elements(input) {
            return Mesh::default();
        }
        let n_in = input.nb_points();
        if n_in.saturating_mul(s.n) > MAX_OUTPUT_POINTS {
            return Mesh::default();
        }
        let n = s.n as u32;
        let with_list = !self.data.get(self.d.edge_list).is_empty();
        let mut quads = Vec::new();
        for [p0, p1] in self.edges(input) {
            for j in 0..n {
                let k = (j + 1) % n;
                let q = [p0 * n + j, p1 * n + j, p1 * n + k, p0 * n + k];
                quads.push(match (s.flip, with_list) {
                    (false, _) => q,
                    // SOFA reverses the quads of all edges from their last vertex, those of an
                    // edgeList from their first: the same face, another starting vertex
                    (true, false) => [q[3], q[2], q[1], q[0]],
                    (true, true) => [q[0], q[3], q[2], q[1]],
                });
            }
        }
        let mut points = Vec::with_capacity(input.points.len() * s.n);
        for &c in &input.points {
            circle(c, &s, &mut points);
        }
        Mesh {
            points,
            quads,
            ..Mesh::default()
        }
    }

    fn warnings(&self, input: &Mesh) -> Vec<String> {
        let s = match self.settings() {
            Ok(s) => s,
            Err(e) => return vec![e.to_string()],
        };
        let mut w = Vec::new();
        let (d, h) = (&self.data, self.d);
        if d.was_set(h.radius_focal) && s.ellipse.is_none() {
            w.push(format!(
                "radiusFocal {} is not a positive number: circles are made instead of ellipses",
                d.get(h.radius_focal)
            ));
        }
        if let Some((_, a)) = s.ellipse {
            if a[1] == 0.0 && a[2] == 0.0 {
                w.push(
                    "focalAxis is zero or along x: the ellipses are flat (their points are not spread)"
                        .into(),
                );
            }
        }
        if has_higher_elements(input) {
            w.push(
                "the input topology is not an edge topology (it has triangles, quads or volumes): no quad is created"
                    .into(),
            );
            return w;
        }
        if input.edges.is_empty() {
            w.push("the input topology has no edges: no quad is created".into());
        }
        let bad: Vec<u32> = d
            .get(h.edge_list)
            .iter()
            .copied()
            .filter(|&e| e as usize >= input.edges.len())
            .collect();
        if !bad.is_empty() {
            w.push(format!(
                "edgeList names edges {bad:?} that the input's {} edges do not have: they are skipped",
                input.edges.len()
            ));
        }
        if input.nb_points().saturating_mul(s.n) > MAX_OUTPUT_POINTS {
            w.push(format!(
                "{} input points × {} points per circle is too many: no quad is created",
                input.nb_points(),
                s.n
            ));
        } else if input.points.is_empty() && !input.edges.is_empty() {
            w.push(
                "the input topology has no point positions: the output's points are not placed here (SOFA places them from the input's Rigid3 frames; a TubularMapping to the output does)"
                    .into(),
            );
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n_edges: u32) -> Mesh {
        Mesh {
            points: (0..=n_edges).map(|i| [i as f64, 0.0, 0.0]).collect(),
            edges: (0..n_edges).map(|i| [i, i + 1]).collect(),
            ..Mesh::default()
        }
    }

    fn mapping(attrs: &[(&str, &str)]) -> Edge2QuadTopologicalMapping {
        let mut m = Edge2QuadTopologicalMapping::new();
        for (k, v) in attrs {
            m.data.set_str(k, v).unwrap();
        }
        m
    }

    /// A 3-edge line with 5 points per circle: 15 quads, each with two consecutive points of
    /// one circle and the same two of the next circle; every circle's N edges are covered
    /// (closed circles), the tube's points on circles of the radius in the planes x = const.
    #[test]
    fn three_edges_make_a_closed_tube() {
        let n = 5u32;
        let m = mapping(&[("nbPointsOnEachCircle", "5"), ("radius", "0.5")]);
        let input = line(3);
        assert!(m.warnings(&input).is_empty(), "{:?}", m.warnings(&input));
        let out = m.map(&input, None);
        assert_eq!(out.quads.len(), 3 * n as usize);
        assert_eq!(out.points.len(), 4 * n as usize);
        for (e, qs) in out.quads.chunks(n as usize).enumerate() {
            let e = e as u32;
            let mut circle_edges = std::collections::BTreeSet::new();
            for (j, q) in qs.iter().enumerate() {
                let j = j as u32;
                // vertices 0, 3 on circle e, 1, 2 on circle e + 1, at positions j and j + 1
                assert_eq!(q.map(|v| v / n), [e, e + 1, e + 1, e], "{q:?}");
                assert_eq!(q[0] % n, j);
                assert_eq!(q[1] % n, j);
                assert_eq!(q[2] % n, (j + 1) % n);
                assert_eq!(q[3] % n, (j + 1) % n);
                circle_edges.insert((q[0] % n).min(q[3] % n) * 100 + (q[0] % n).max(q[3] % n));
            }
            assert_eq!(circle_edges.len(), n as usize, "closed circle");
        }
        for (i, p) in out.points.iter().enumerate() {
            let c = (i / n as usize) as f64;
            assert_eq!(p[0], c);
            let r = (p[1] * p[1] + p[2] * p[2]).sqrt();
            assert!((r - 0.5).abs() < 1e-15, "{p:?}");
        }
        // the first point of a circle on y, the next one turned towards z
        assert!((out.points[0][1] - 0.5).abs() < 1e-15 && out.points[0][2] == 0.0);
        assert!(out.points[1][2] > 0.0);
    }

    #[test]
    fn flip_normals_and_edge_list() {
        let input = line(3);
        let plain = mapping(&[("nbPointsOnEachCircle", "4"), ("radius", "1")]).map(&input, None);
        let flipped = mapping(&[
            ("nbPointsOnEachCircle", "4"),
            ("radius", "1"),
            ("flipNormals", "1"),
        ])
        .map(&input, None);
        for (a, b) in plain.quads.iter().zip(&flipped.quads) {
            assert_eq!(*b, [a[3], a[2], a[1], a[0]]);
        }
        // edgeList: only edges 2 then 0, in that order; flipped from the first vertex
        let listed = mapping(&[
            ("nbPointsOnEachCircle", "4"),
            ("radius", "1"),
            ("edgeList", "2 0"),
            ("flipNormals", "true"),
        ])
        .map(&input, None);
        assert_eq!(listed.quads.len(), 8);
        assert_eq!(listed.quads[0], [8, 9, 13, 12]);
        assert_eq!(listed.quads[4], [0, 1, 5, 4]);
        // a wrong index is reported and skipped
        let bad = mapping(&[
            ("nbPointsOnEachCircle", "4"),
            ("radius", "1"),
            ("edgeList", "1 7"),
        ]);
        assert_eq!(bad.map(&input, None).quads.len(), 4);
        assert_eq!(bad.warnings(&input).len(), 1);
    }

    #[test]
    fn ellipses_along_the_focal_axis() {
        let m = mapping(&[
            ("nbPointsOnEachCircle", "4"),
            ("radius", "2"),
            ("radiusFocal", "0.5"),
            ("focalAxis", "0 3 0"),
        ]);
        let out = m.map(&line(1), None);
        // y' = focalAxis × x = (0, 0, −1): radius 2 there, 0.5 along the focal axis y
        let expect = [
            [0.0, 0.0, -2.0],
            [0.0, 0.5, 0.0],
            [0.0, 0.0, 2.0],
            [0.0, -0.5, 0.0],
        ];
        for (p, e) in out.points.iter().zip(expect) {
            for k in 0..3 {
                assert!((p[k] - e[k]).abs() < 1e-15, "{p:?} vs {e:?}");
            }
        }
    }

    /// Bad settings or input: a warning and no quad, never a panic.
    #[test]
    fn bad_input_is_reported() {
        let input = line(2);
        for attrs in [
            vec![("nbPointsOnEachCircle", "4")],
            vec![("nbPointsOnEachCircle", "0"), ("radius", "1")],
            vec![("nbPointsOnEachCircle", "-3"), ("radius", "1")],
            vec![("nbPointsOnEachCircle", "4"), ("radius", "0")],
            vec![("nbPointsOnEachCircle", "4"), ("radius", "-1")],
            vec![("nbPointsOnEachCircle", "4"), ("radius", "nan")],
            vec![("nbPointsOnEachCircle", "4000000000"), ("radius", "1")],
        ] {
            let m = mapping(&attrs);
            assert_eq!(m.warnings(&input).len(), 1, "{attrs:?}");
            assert_eq!(m.map(&input, None), Mesh::default(), "{attrs:?}");
        }
        let m = mapping(&[("nbPointsOnEachCircle", "4"), ("radius", "1")]);
        // no edges
        assert_eq!(m.warnings(&Mesh::default()).len(), 1);
        assert!(m.map(&Mesh::default(), None).quads.is_empty());
        // not an edge topology
        let tri = Mesh {
            triangles: vec![[0, 1, 2]],
            ..line(2)
        };
        assert_eq!(m.warnings(&tri).len(), 1);
        assert_eq!(m.map(&tri, None), Mesh::default());
        // edges without positions: quads, and the points left to the output's mapping
        let bare = Mesh {
            points: Vec::new(),
            ..line(2)
        };
        let out = m.map(&bare, None);
        assert_eq!(out.quads.len(), 8);
        assert!(out.points.is_empty());
        assert_eq!(out.nb_points(), 12);
        assert_eq!(m.warnings(&bare).len(), 1);
        // a non-positive radiusFocal: circles, with a warning
        let f = mapping(&[
            ("nbPointsOnEachCircle", "4"),
            ("radius", "1"),
            ("radiusFocal", "-1"),
        ]);
        assert_eq!(f.warnings(&input).len(), 1);
        assert_eq!(f.map(&input, None).quads.len(), 8);
    }
}
