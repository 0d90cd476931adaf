//! SubsetTopologicalMapping (SOFA's
//! Sofa/Component/Topology/Mapping/src/sofa/component/topology/mapping/SubsetTopologicalMapping.h
//! and .cpp): the output topology is a subset of the input one, and the mapping keeps the index
//! maps between them.
//!
//! At init SOFA builds no element: the output container keeps the elements it was given (in
//! SOFA's scenes, a BoxROI's `trianglesInROI` over the same loader). The mapping only matches
//! them with the input's:
//! - points: with `samePoints`, the output's points are the input's and the point maps stay
//!   empty; otherwise each output point is the input point at exactly the same position (the
//!   last such input point when several coincide), or, when either topology has no positions,
//!   point i is point i if both have as many points (else an error, and nothing is matched);
//! - with `handleEdges`/`handleTriangles`/`handleQuads`/`handleTetrahedra`/`handleHexahedra`,
//!   each output element (its points taken to the input's numbering) is the input element with
//!   the same set of points, in any order (the last such input element when several do);
//!   output elements with none are errors.
//!
//! `pointD2S`, `edgeD2S`… give for each output item its input index and `pointS2D`, `edgeS2D`…
//! for each input item its output index, 4294967295 (SOFA's InvalidID) for none. Where SOFA
//! leaves a handled kind's S→D map filled with zeros (no element of that kind on one side),
//! it is filled with InvalidID here. SOFA's handling of later topology changes (points,
//! edges, triangles… added or removed in the input, passed on to the output) is not done:
//! Canapé's topologies do not change.
//!
//! It does not fit [`canape_core::component::TopologicalMapping`]: `map` builds the output's
//! elements from the input mesh alone and the output container's elements are replaced by what
//! it returns, whereas this mapping keeps the output's own elements and needs them to compute
//! its maps. It is therefore a [`Passive`] component with the role of a topological mapping,
//! whose init reads both topologies (initialised before it, as they are declared before it in
//! SOFA's scenes) and fills its map Data; the output container is left as it is.

use canape_core::component::{Passive, Role};
use canape_core::data::{BaseData, Data, DataKind, DataTable, Flag, Ints, Text, Value};
use canape_core::impl_component;
use canape_core::mesh::Mesh;
use canape_core::registry::Registry;
use canape_core::scene::{AnyComponent, ComponentId, InitContext};
use std::collections::BTreeMap;

/// Register this module's classes.
pub(crate) fn register(r: &mut Registry) {
    r.register(
        "SubsetTopologicalMapping",
        "index maps between a topology and a subset of its elements (the output keeps its own)",
        |_, _| {
            Ok(AnyComponent::Passive(Box::new(
                SubsetTopologicalMapping::new(),
            )))
        },
    );
}

/// SOFA's InvalidID: no counterpart.
pub const INVALID: u32 = u32::MAX;

/// Which items are matched (SOFA's `samePoints` and `handle…` Data).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubsetOptions {
    pub same_points: bool,
    pub edges: bool,
    pub triangles: bool,
    pub quads: bool,
    pub tetrahedra: bool,
    pub hexahedra: bool,
}

/// The maps of one kind of item: for each input item its output index (`s2d`), and for each
/// output item its input index (`d2s`), [`INVALID`] for none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexMaps {
    pub s2d: Vec<u32>,
    pub d2s: Vec<u32>,
}

/// Every map the mapping computes, and what could not be matched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubsetMaps {
    pub points: IndexMaps,
    pub edges: IndexMaps,
    pub triangles: IndexMaps,
    pub quads: IndexMaps,
    pub tetrahedra: IndexMaps,
    pub hexahedra: IndexMaps,
    /// One message per kind of item that could not be matched (SOFA's errors, grouped).
    pub errors: Vec<String>,
}

/// A position as an exact key (−0 and +0 are the same point, as they compare equal in SOFA's
/// map of positions).
fn position_key(p: &[f64; 3]) -> [u64; 3] {
    p.map(|c| (c + 0.0).to_bits())
}

/// "3, 7, 12" for the first few of `items`, with "…" when there are more.
fn first_few(items: &[usize]) -> String {
    let mut s = items
        .iter()
        .take(8)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > 8 {
        s.push_str(", …");
    }
    s
}

/// Match the output's elements with the input's (see the module documentation); `d2s_points`
/// takes output points to the input's numbering (empty: the same numbering).
fn match_elements<const N: usize>(
    input: &[[u32; N]],
    output: &[[u32; N]],
    d2s_points: &[u32],
    what: &str,
    errors: &mut Vec<String>,
) -> IndexMaps {
    let mut maps = IndexMaps {
        s2d: vec![INVALID; input.len()],
        d2s: vec![INVALID; output.len()],
    };
    if output.is_empty() {
        return maps;
    }
    if input.is_empty() {
        errors.push(format!(
            "the output's {} {what} cannot be matched: the input topology has none",
            output.len()
        ));
        return maps;
    }
    let sorted = |mut e: [u32; N]| {
        e.sort_unstable();
        e
    };
    let mut by_points: BTreeMap<[u32; N], u32> = BTreeMap::new();
    for (s, e) in input.iter().enumerate() {
        by_points.insert(sorted(*e), s as u32);
    }
    let mut missing = Vec::new();
    for (d, e) in output.iter().enumerate() {
        let in_input = if d2s_points.is_empty() {
            Some(*e)
        } else {
            let mut m = *e;
            m.iter_mut()
                .try_for_each(|p| {
                    *p = *d2s_points.get(*p as usize)?;
                    (*p != INVALID).then_some(())
                })
                .map(|_| m)
        };
        match in_input.and_then(|m| by_points.get(&sorted(m))) {
            Some(&s) => {
                maps.d2s[d] = s;
                maps.s2d[s as usize] = d as u32;
            }
            None => missing.push(d),
        }
    }
    if !missing.is_empty() {
        errors.push(format!(
            "{} of the output's {what} are not in the input topology (output {what} {})",
            missing.len(),
            first_few(&missing)
        ));
    }
    maps
}

/// The maps between `input` and its subset `output` (SOFA's init).
pub fn subset_maps(input: &Mesh, output: &Mesh, opts: SubsetOptions) -> SubsetMaps {
    let mut out = SubsetMaps::default();
    if !opts.same_points {
        let (ns, nd) = (input.nb_points(), output.nb_points());
        out.points = IndexMaps {
            s2d: vec![INVALID; ns],
            d2s: vec![INVALID; nd],
        };
        if !input.points.is_empty() && !output.points.is_empty() {
            let mut at: BTreeMap<[u64; 3], u32> = BTreeMap::new();
            for (s, p) in input.points.iter().enumerate() {
                at.insert(position_key(p), s as u32);
            }
            let mut missing = Vec::new();
            for (d, p) in output.points.iter().enumerate() {
                match at.get(&position_key(p)) {
                    Some(&s) => {
                        out.points.d2s[d] = s;
                        out.points.s2d[s as usize] = d as u32;
                    }
                    None => missing.push(d),
                }
            }
            if !missing.is_empty() {
                out.errors.push(format!(
                    "{} of the output's points are at no input point's position (output points {})",
                    missing.len(),
                    first_few(&missing)
                ));
            }
        } else if ns == nd {
            out.points.s2d = (0..ns as u32).collect();
            out.points.d2s = (0..nd as u32).collect();
        } else {
            out.errors.push(format!(
                "the topologies have different numbers of points ({ns} and {nd}) and not both \
                 have positions: the points cannot be matched (nothing else is)"
            ));
            return out;
        }
    }
    let pd2s = std::mem::take(&mut out.points.d2s);
    let errors = &mut out.errors;
    if opts.edges {
        out.edges = match_elements(&input.edges, &output.edges, &pd2s, "edges", errors);
    }
    if opts.triangles {
        out.triangles = match_elements(
            &input.triangles,
            &output.triangles,
            &pd2s,
            "triangles",
            errors,
        );
    }
    if opts.quads {
        out.quads = match_elements(&input.quads, &output.quads, &pd2s, "quads", errors);
    }
    if opts.tetrahedra {
        out.tetrahedra = match_elements(
            &input.tetrahedra,
            &output.tetrahedra,
            &pd2s,
            "tetrahedra",
            errors,
        );
    }
    if opts.hexahedra {
        out.hexahedra = match_elements(
            &input.hexahedra,
            &output.hexahedra,
            &pd2s,
            "hexahedra",
            errors,
        );
    }
    out.points.d2s = pd2s;
    out
}

canape_core::data_schema! {
    /// SubsetTopologicalMapping's own Data (after the base Data).
    pub struct SubsetData {
        input: Text = ("input", DataKind::Str, "", "Input topology to map"),
        output: Text = ("output", DataKind::Str, "", "Output topology to map"),
        same_points: Flag = ("samePoints", DataKind::Bool, "0", "True if the same set of points is used in both topologies"),
        handle_edges: Flag = ("handleEdges", DataKind::Bool, "0", "True if edges events and mapping should be handled"),
        handle_triangles: Flag = ("handleTriangles", DataKind::Bool, "0", "True if triangles events and mapping should be handled"),
        handle_quads: Flag = ("handleQuads", DataKind::Bool, "0", "True if quads events and mapping should be handled"),
        handle_tetrahedra: Flag = ("handleTetrahedra", DataKind::Bool, "0", "True if tetrahedra events and mapping should be handled"),
        handle_hexahedra: Flag = ("handleHexahedra", DataKind::Bool, "0", "True if hexahedra events and mapping should be handled"),
        point_s2d: Ints = ("pointS2D", DataKind::Ints(0), "", "Internal source -> destination topology points map"),
        point_d2s: Ints = ("pointD2S", DataKind::Ints(0), "", "Internal destination -> source topology points map (link to SubsetMapping::indices to handle the mechanical-side of the mapping"),
        edge_s2d: Ints = ("edgeS2D", DataKind::Ints(0), "", "Internal source -> destination topology edges map"),
        edge_d2s: Ints = ("edgeD2S", DataKind::Ints(0), "", "Internal destination -> source topology edges map"),
        triangle_s2d: Ints = ("triangleS2D", DataKind::Ints(0), "", "Internal source -> destination topology triangles map"),
        triangle_d2s: Ints = ("triangleD2S", DataKind::Ints(0), "", "Internal destination -> source topology triangles map"),
        quad_s2d: Ints = ("quadS2D", DataKind::Ints(0), "", "Internal source -> destination topology quads map"),
        quad_d2s: Ints = ("quadD2S", DataKind::Ints(0), "", "Internal destination -> source topology quads map"),
        tetrahedron_s2d: Ints = ("tetrahedronS2D", DataKind::Ints(0), "", "Internal source -> destination topology tetrahedra map"),
        tetrahedron_d2s: Ints = ("tetrahedronD2S", DataKind::Ints(0), "", "Internal destination -> source topology tetrahedra map"),
        hexahedron_s2d: Ints = ("hexahedronS2D", DataKind::Ints(0), "", "Internal source -> destination topology hexahedra map"),
        hexahedron_d2s: Ints = ("hexahedronD2S", DataKind::Ints(0), "", "Internal destination -> source topology hexahedra map"),
    }
}

/// See the module documentation.
#[derive(Clone)]
pub struct SubsetTopologicalMapping {
    data: DataTable,
    /// Typed handles to the base Data in `data`.
    base: BaseData,
    /// Typed handles to its own Data.
    d: SubsetData,
}

impl Default for SubsetTopologicalMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl SubsetTopologicalMapping {
    pub fn new() -> Self {
        let (data, base) = BaseData::declare(DataTable::new());
        let (data, d) = SubsetData::declare(data);
        SubsetTopologicalMapping { data, base, d }
    }

    /// The map Data, by kind: (input → output, output → input).
    fn map_data(&self) -> [(Data<Ints>, Data<Ints>); 6] {
        let d = &self.d;
        [
            (d.point_s2d, d.point_d2s),
            (d.edge_s2d, d.edge_d2s),
            (d.triangle_s2d, d.triangle_d2s),
            (d.quad_s2d, d.quad_d2s),
            (d.tetrahedron_s2d, d.tetrahedron_d2s),
            (d.hexahedron_s2d, d.hexahedron_d2s),
        ]
    }

    fn options(&self) -> SubsetOptions {
        SubsetOptions {
            same_points: self.data.get(self.d.same_points),
            edges: self.data.get(self.d.handle_edges),
            triangles: self.data.get(self.d.handle_triangles),
            quads: self.data.get(self.d.handle_quads),
            tetrahedra: self.data.get(self.d.handle_tetrahedra),
            hexahedra: self.data.get(self.d.handle_hexahedra),
        }
    }

    /// The topology named by Data `which` (`input` or `output`, its handle `h`): a topology, or
    /// the last one of a node.
    fn topology(
        &self,
        ctx: &mut InitContext<'_>,
        which: &'static str,
        h: Data<Text>,
    ) -> Option<ComponentId> {
        match ctx.link_topology_or_node(which, self.data.get(h)) {
            Ok(Some(l)) => Some(l.id()),
            Ok(None) => {
                ctx.error(format!("no {which} topology given ({which}=\"@…\")"));
                None
            }
            Err(e) => {
                ctx.error(e.to_string());
                None
            }
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        for (s2d, d2s) in self.map_data() {
            let _ = self.data.put(s2d, Value::Ints(Vec::new()));
            let _ = self.data.put(d2s, Value::Ints(Vec::new()));
        }
        let (Some(src), Some(dst)) = (
            self.topology(ctx, "input", self.d.input),
            self.topology(ctx, "output", self.d.output),
        ) else {
            return;
        };
        for (c, which) in [(src, "input"), (dst, "output")] {
            if !ctx.scene.info(c).initialized {
                ctx.warn(format!(
                    "the {which} topology is declared after this mapping: its elements are read \
                     before its own init"
                ));
            }
        }
        let (Some(input), Some(output)) = (ctx.scene.topology(src), ctx.scene.topology(dst)) else {
            return;
        };
        let opts = self.options();
        let maps = subset_maps(input.mesh(), output.mesh(), opts);
        for e in &maps.errors {
            ctx.error(e.clone());
        }
        let (i, o) = (input.mesh(), output.mesh());
        for (on, what, flag, n_out) in [
            (opts.edges, "edges", "handleEdges", o.edges.len()),
            (
                opts.triangles,
                "triangles",
                "handleTriangles",
                o.triangles.len(),
            ),
            (opts.quads, "quads", "handleQuads", o.quads.len()),
            (
                opts.tetrahedra,
                "tetrahedra",
                "handleTetrahedra",
                o.tetrahedra.len(),
            ),
            (
                opts.hexahedra,
                "hexahedra",
                "handleHexahedra",
                o.hexahedra.len(),
            ),
        ] {
            if on && n_out == 0 {
                ctx.warn(format!(
                    "{flag} is set but the output topology has no {what}: none are matched"
                ));
            }
        }
        let kinds = [
            &maps.points,
            &maps.edges,
            &maps.triangles,
            &maps.quads,
            &maps.tetrahedra,
            &maps.hexahedra,
        ];
        for ((s2d, d2s), m) in self.map_data().into_iter().zip(kinds) {
            let _ = self.data.put(s2d, Value::Ints(m.s2d.clone()));
            let _ = self.data.put(d2s, Value::Ints(m.d2s.clone()));
        }
        if self.data.get(self.base.print_log) {
            let mut counts = Vec::new();
            let mut count = |on: bool, what: &str, a: usize, b: usize| {
                if on {
                    counts.push(format!("{what}: {a} -> {b}"));
                }
            };
            count(!opts.same_points, "points", i.nb_points(), o.nb_points());
            count(opts.edges, "edges", i.edges.len(), o.edges.len());
            count(
                opts.triangles,
                "triangles",
                i.triangles.len(),
                o.triangles.len(),
            );
            count(opts.quads, "quads", i.quads.len(), o.quads.len());
            count(
                opts.tetrahedra,
                "tetrahedra",
                i.tetrahedra.len(),
                o.tetrahedra.len(),
            );
            count(
                opts.hexahedra,
                "hexahedra",
                i.hexahedra.len(),
                o.hexahedra.len(),
            );
            if !counts.is_empty() {
                ctx.note(counts.join(", "));
            }
        }
    }
}

impl_component!(SubsetTopologicalMapping, "SubsetTopologicalMapping", init);

impl Passive for SubsetTopologicalMapping {
    fn role(&self) -> Role {
        Role::TopologicalMapping
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::MeshContainer;
    use canape_core::component::{Component, Topology};
    use canape_core::diag::{Diagnostics, Severity};
    use canape_core::scene::Scene;

    /// A strip of four triangles over six points (two rows of three), its edges, and a tetra.
    ///
    /// ```text
    /// 3---4---5
    /// | \ | \ |
    /// 0---1---2
    /// ```
    fn strip() -> Mesh {
        Mesh {
            points: vec![
                [0., 0., 0.],
                [1., 0., 0.],
                [2., 0., 0.],
                [0., 1., 0.],
                [1., 1., 0.],
                [2., 1., 0.],
            ],
            triangles: vec![[0, 1, 3], [1, 4, 3], [1, 2, 4], [2, 5, 4]],
            edges: vec![
                [0, 1],
                [1, 2],
                [3, 4],
                [4, 5],
                [0, 3],
                [1, 4],
                [2, 5],
                [1, 3],
                [2, 4],
            ],
            tetrahedra: vec![[0, 1, 3, 4]],
            ..Mesh::default()
        }
    }

    #[test]
    fn same_points_matches_the_outputs_triangles_in_any_order() {
        let input = strip();
        // the right half, listed in another order and with rotated corners
        let output = Mesh {
            points: input.points.clone(),
            triangles: vec![[5, 4, 2], [4, 1, 2]],
            ..Mesh::default()
        };
        let opts = SubsetOptions {
            same_points: true,
            triangles: true,
            ..SubsetOptions::default()
        };
        let m = subset_maps(&input, &output, opts);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        assert_eq!(m.triangles.d2s, vec![3, 2]);
        assert_eq!(m.triangles.s2d, vec![INVALID, INVALID, 1, 0]);
        // samePoints: no point maps; kinds not handled: no maps
        assert!(m.points.s2d.is_empty() && m.points.d2s.is_empty());
        assert_eq!(m.edges, IndexMaps::default());
        // an output triangle the input does not have
        let mut bad = output.clone();
        bad.triangles.push([0, 2, 5]);
        let m = subset_maps(&input, &bad, opts);
        assert_eq!(m.triangles.d2s, vec![3, 2, INVALID]);
        assert_eq!(m.errors.len(), 1);
        assert!(m.errors[0].contains("output triangles 2"), "{:?}", m.errors);
    }

    #[test]
    fn points_are_matched_by_position_and_elements_through_them() {
        let input = strip();
        // the right half with its own numbering: points 1, 2, 4, 5 of the input as 0..4,
        // listed 5, 1, 4, 2
        let output = Mesh {
            points: vec![[2., 1., 0.], [1., 0., 0.], [1., 1., 0.], [2., 0., 0.]],
            triangles: vec![[1, 3, 2], [3, 0, 2]],
            edges: vec![[1, 3], [2, 0], [1, 2], [3, 0], [3, 2]],
            ..Mesh::default()
        };
        let opts = SubsetOptions {
            edges: true,
            triangles: true,
            tetrahedra: true,
            ..SubsetOptions::default()
        };
        let m = subset_maps(&input, &output, opts);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        assert_eq!(m.points.d2s, vec![5, 1, 4, 2]);
        assert_eq!(m.points.s2d, vec![INVALID, 1, 3, INVALID, 2, 0]);
        assert_eq!(m.triangles.d2s, vec![2, 3]);
        assert_eq!(m.triangles.s2d, vec![INVALID, INVALID, 0, 1]);
        // input edges: [1,2] is 1, [4,5] is 3, [1,4] is 5, [2,5] is 6, [2,4] is 8
        assert_eq!(m.edges.d2s, vec![1, 3, 5, 6, 8]);
        assert_eq!(
            m.edges.s2d,
            vec![INVALID, 0, INVALID, 1, INVALID, 2, 3, INVALID, 4]
        );
        // tetrahedra handled, the output has none: all input ones unmatched, no error
        assert_eq!(m.tetrahedra.s2d, vec![INVALID]);
        assert!(m.tetrahedra.d2s.is_empty());
        // a point at no input position: reported, and its elements are unmatched
        let mut moved = output.clone();
        moved.points[0] = [9., 9., 9.];
        let m = subset_maps(&input, &moved, opts);
        assert_eq!(m.points.d2s, vec![INVALID, 1, 4, 2]);
        assert_eq!(m.triangles.d2s, vec![2, INVALID]);
        assert_eq!(m.errors.len(), 3, "{:?}", m.errors);
    }

    #[test]
    fn without_positions_points_match_by_index_when_the_counts_agree() {
        let mut input = strip();
        input.points.clear();
        let output = Mesh {
            triangles: vec![[2, 5, 4]],
            edges: vec![[0, 5]],
            ..Mesh::default()
        };
        let opts = SubsetOptions {
            triangles: true,
            edges: true,
            ..SubsetOptions::default()
        };
        let m = subset_maps(&input, &output, opts);
        assert_eq!(m.points.d2s, (0..6).collect::<Vec<u32>>());
        assert_eq!(m.triangles.d2s, vec![3]);
        // [0, 5] is no input edge
        assert_eq!(m.edges.d2s, vec![INVALID]);
        assert_eq!(m.errors.len(), 1);
        // different counts and no positions: an error, nothing matched
        let small = Mesh {
            triangles: vec![[0, 1, 2]],
            ..Mesh::default()
        };
        let m = subset_maps(&input, &small, opts);
        assert_eq!(m.errors.len(), 1);
        assert!(m.triangles.d2s.is_empty());
        // an output element using a point the output does not have: unmatched, no panic
        let beyond = Mesh {
            points: vec![[0., 0., 0.], [1., 0., 0.]],
            triangles: vec![[0, 1, 70]],
            ..Mesh::default()
        };
        let m = subset_maps(&strip(), &beyond, opts);
        assert_eq!(m.points.d2s, vec![0, 1]);
        assert_eq!(m.triangles.d2s, vec![INVALID]);
        assert_eq!(m.errors.len(), 1, "{:?}", m.errors);
    }

    /// The component in a scene: input and output containers, the maps as Data, the output's
    /// elements untouched.
    #[test]
    fn the_component_fills_its_data_and_leaves_the_output_alone() {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut full = MeshContainer::new("TriangleSetTopologyContainer");
        *full.mesh_mut() = strip();
        let src = scene.add_component(root, "full", AnyComponent::Topology(Box::new(full)), None);
        let child = scene.add_node("part", Some(root));
        let mut part = MeshContainer::new("TriangleSetTopologyContainer");
        part.mesh_mut().points = strip().points;
        part.mesh_mut().triangles = vec![[1, 4, 3], [0, 1, 3]];
        let dst = scene.add_component(child, "part", AnyComponent::Topology(Box::new(part)), None);
        scene.info_mut(src).initialized = true;
        scene.info_mut(dst).initialized = true;
        let mut m = SubsetTopologicalMapping::new();
        for (k, v) in [
            ("input", "@../full"),
            ("output", "@part"),
            ("samePoints", "1"),
            ("handleTriangles", "1"),
        ] {
            m.data_mut().set_str(k, v).unwrap();
        }
        let id = scene.add_component(
            child,
            "map",
            AnyComponent::Passive(Box::new(m.clone())),
            None,
        );
        let mut diags = Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: child,
            id,
            diags: &mut diags,
        };
        m.init(&mut ctx);
        assert!(diags.is_empty(), "{:?}", diags.iter().collect::<Vec<_>>());
        assert_eq!(m.data().ints("triangleD2S"), &[1, 0]);
        assert_eq!(m.data().ints("triangleS2D"), &[1, 0, INVALID, INVALID]);
        assert!(m.data().ints("pointD2S").is_empty());
        assert_eq!(m.role(), Role::TopologicalMapping);
        assert_eq!(
            scene.topology(dst).unwrap().mesh().triangles,
            vec![[1, 4, 3], [0, 1, 3]]
        );
        // an output without triangles while handleTriangles is set: a warning
        let mut bare = MeshContainer::new("TriangleSetTopologyContainer");
        bare.mesh_mut().points = strip().points;
        let bare = scene.add_component(child, "bare", AnyComponent::Topology(Box::new(bare)), None);
        scene.info_mut(bare).initialized = true;
        let mut m3 = m.clone();
        m3.data_mut().set_str("output", "@bare").unwrap();
        let mut diags = Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: child,
            id,
            diags: &mut diags,
        };
        m3.init(&mut ctx);
        assert!(
            diags
                .iter()
                .any(|d| d.severity == Severity::Warning && d.message.contains("no triangles")),
            "{:?}",
            diags.iter().collect::<Vec<_>>()
        );
        assert_eq!(m3.data().ints("triangleS2D"), &[INVALID; 4]);
        // a missing output: an error, empty maps, no panic
        let mut m2 = m.clone();
        m2.data_mut().set_str("output", "@nowhere").unwrap();
        let mut diags = Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: child,
            id,
            diags: &mut diags,
        };
        m2.init(&mut ctx);
        assert!(diags.iter().any(|d| d.severity == Severity::Error));
        assert!(m2.data().ints("triangleD2S").is_empty());
    }
}
