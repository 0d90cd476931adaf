//! NearestPointROI (Sofa/Component/Engine/Select/src/sofa/component/engine/select/
//! NearestPointROI.inl): pairs of points of two states, each point of the second state with
//! its nearest point in the first, kept when they are closer than `radius`.
//!
//! The states are `object1` and `object2` (a MechanicalObject, or a node whose state is
//! meant; the context state when not given), read at their rest positions
//! (`useRestPosition`, the default) or positions. Only the points listed in `inputIndices1`
//! and `inputIndices2` take part; an empty list stands for every point and is filled with
//! them, as SOFA writes it back. For each candidate i2 of the second state in list order, the
//! first candidate i1 of the first state at the smallest distance is found; when the squared
//! distance is below radius², the pair is output: `indices1` (i1), `indices2` (i2),
//! `indexPairs` (0 i1 1 i2, SubsetMultiMapping's input/index couples), `distances` and `edges`.
//!
//! Distances are SOFA's `(x2 − x1).norm2()` for the template: Euclidean for Vec1/2/3; for
//! Rigid3, the centres' squared distance plus the squared x, y, z of the relative rotation
//! x1.q⁻¹·x2.q; for Rigid2, plus the angle difference taken modulo 2π, squared.
//!
//! `edges` are SOFA's (2·i2, 2·i2 + 1): numbered from the second state's index rather than from
//! the pair, they fit a SubsetMultiMapping over `indexPairs` only when every point of the
//! second state's list pairs up and the list is 0, 1, 2, …; otherwise they are reported.
//!
//! SOFA refuses a radius ≤ 0 only when the component is re-initialised; at init it pairs with
//! radius², so a negative radius acts as its absolute value (reported). SOFA also recomputes
//! the pairs whenever the states' positions change; here they are computed at init, so a state
//! not initialised yet at that point (one declared after this engine, in a child node) has no
//! positions and gives no pairs (reported).

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{Data, DataKind, DataTable, Flag, Ints, Real, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext};
use canape_core::state::VecId;
use canape_types::DofType;
use std::f64::consts::PI;

/// SOFA's squared distance `(b − a).norm2()` between coordinates `a` and `b` of type `dof`.
pub fn distance2(dof: DofType, a: &[f64], b: &[f64]) -> f64 {
    let centre = |n: usize| (0..n).map(|k| (b[k] - a[k]) * (b[k] - a[k])).sum::<f64>();
    match dof {
        DofType::Vec1 | DofType::Vec2 | DofType::Vec3 => centre(dof.coord_size()),
        DofType::Rigid2 => {
            let angle = (b[2] - a[2]) % (PI * 2.0);
            centre(2) + angle * angle
        }
        DofType::Rigid3 => {
            // vector part of conj(qa)·qb: wa·vb − wb·va − va × vb
            let (va, wa) = ([a[3], a[4], a[5]], a[6]);
            let (vb, wb) = ([b[3], b[4], b[5]], b[6]);
            let cross = [
                va[1] * vb[2] - va[2] * vb[1],
                va[2] * vb[0] - va[0] * vb[2],
                va[0] * vb[1] - va[1] * vb[0],
            ];
            let rel: f64 = (0..3)
                .map(|k| wa * vb[k] - wb * va[k] - cross[k])
                .map(|v| v * v)
                .sum();
            centre(3) + rel
        }
    }
}

/// The pairs found, each (i1, i2, squared distance), for the candidates of `x1` and `x2`
/// (flat coordinates of type `dof`); candidates beyond their state are ignored.
pub fn nearest_pairs(
    dof: DofType,
    x1: &[f64],
    x2: &[f64],
    candidates1: &[u32],
    candidates2: &[u32],
    radius: f64,
) -> Vec<(u32, u32, f64)> {
    let w = dof.coord_size();
    let coords = |x: &[f64], c: &[u32]| -> Vec<(u32, Vec<f64>)> {
        c.iter()
            .filter_map(|&i| {
                let o = (i as usize).checked_mul(w)?;
                Some((i, x.get(o..o.checked_add(w)?)?.to_vec()))
            })
            .collect()
    };
    let (c1, c2) = (coords(x1, candidates1), coords(x2, candidates2));
    let max2 = radius * radius;
    let mut out = Vec::new();
    let Some(((first, p1), rest)) = c1.split_first() else {
        return out;
    };
    for (i2, p2) in &c2 {
        // the first candidate at the smallest distance (std::min_element's rule)
        let (mut best, mut best_d) = (*first, distance2(dof, p1, p2));
        for (i1, p) in rest {
            let d = distance2(dof, p, p2);
            if d < best_d {
                (best, best_d) = (*i1, d);
            }
        }
        if best_d < max2 {
            out.push((best, *i2, best_d));
        }
    }
    out
}

canape_core::data_schema! {
    /// NearestPointROI's own Data (after the base Data).
    pub struct NearestPointRoiData {
        object1: Text = ("object1", DataKind::Str, "", "First object associated to this component"),
        object2: Text = ("object2", DataKind::Str, "", "Second object associated to this component"),
        input_indices1: Ints = ("inputIndices1", DataKind::Ints(0), "", "Indices of the points to consider on the first model"),
        input_indices2: Ints = ("inputIndices2", DataKind::Ints(0), "", "Indices of the points to consider on the second model"),
        radius: Real = ("radius", DataKind::Real, "1", "Radius to search corresponding fixed point"),
        use_rest_position: Flag = ("useRestPosition", DataKind::Bool, "1", "If true will use restPosition only at init"),
        indices1: Ints => ("indices1", DataKind::Ints(0), "Indices from the first model associated to a dof from the second model"),
        indices2: Ints => ("indices2", DataKind::Ints(0), "Indices from the second model associated to a dof from the first model"),
        edges: Ints => ("edges", DataKind::Ints(2), "List of edge indices"),
        index_pairs: Ints => ("indexPairs", DataKind::Ints(0), "list of couples (parent index + index in the parent)"),
        distances: Reals => ("distances", DataKind::Reals(0), "List of distances between pairs of points"),
        draw_pairs: Flag = ("drawPairs", DataKind::Bool, "0", "Option to draw the positions pairs computed"),
    }
}

/// NearestPointROI: `indices1`, `indices2`, `edges`, `indexPairs`, `distances`.
#[derive(Clone)]
pub struct NearestPointRoi {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: NearestPointRoiData,
    dof: DofType,
}

impl Default for NearestPointRoi {
    fn default() -> Self {
        Self::new(DofType::Vec3)
    }
}

impl NearestPointRoi {
    /// The engine for states of type `dof`.
    pub fn new(dof: DofType) -> Self {
        let (data, d) = NearestPointRoiData::declare(base_data(DataTable::new()));
        NearestPointRoi { data, d, dof }
    }

    /// The state `object1` or `object2` names (the context state when empty), checked to have
    /// the template's type; None (reported) otherwise.
    fn end(
        &self,
        ctx: &mut InitContext<'_>,
        name: &'static str,
        h: Data<Text>,
    ) -> Option<ComponentId> {
        let link = self.data.get(h).trim().to_string();
        let scene = ctx.scene;
        let id = if link.is_empty() {
            let s = scene.context_state(ctx.node);
            if s.is_none() {
                ctx.error(format!(
                    "no {name} given and no MechanicalObject in the context: nothing is paired"
                ));
            }
            s?
        } else {
            match ctx.link_state_or_node(name, &link) {
                Ok(Some(l)) => l.id(),
                Ok(None) => return None,
                Err(e) => {
                    ctx.error(format!("{e}: nothing is paired"));
                    return None;
                }
            }
        };
        let dof = scene.state(id)?.dof;
        if dof != self.dof {
            ctx.error(format!(
                "{name} '{}' is a {} state, this engine's template is {}: nothing is paired",
                scene.component_label(id),
                dof.name(),
                self.dof.name()
            ));
            return None;
        }
        Some(id)
    }

    /// The candidates of one state: the listed indices within its `n` points (those beyond
    /// are reported), or all of them when none is listed (written back into `input`).
    fn candidates(
        &mut self,
        ctx: &mut InitContext<'_>,
        input: &str,
        h: Data<Ints>,
        n: usize,
    ) -> Vec<u32> {
        let listed = self.data.get(h).to_vec();
        if listed.is_empty() {
            let all: Vec<u32> = (0..n as u32).collect();
            let _ = self.data.put(h, Value::Ints(all.clone()));
            return all;
        }
        let (ok, bad): (Vec<u32>, Vec<u32>) = listed.into_iter().partition(|&i| (i as usize) < n);
        if !bad.is_empty() {
            ctx.error(format!(
                "{input}: {} indices ({:?}{}) are beyond the {n} points of the state: they are skipped",
                bad.len(),
                &bad[..bad.len().min(5)],
                if bad.len() > 5 { "…" } else { "" }
            ));
        }
        ok
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let d = self.d;
        // the outputs, cleared before each computation
        for h in [d.indices1, d.indices2, d.edges, d.index_pairs] {
            let _ = self.data.put(h, Value::Ints(Vec::new()));
        }
        let _ = self.data.put(d.distances, Value::Reals(Vec::new()));
        let radius = self.data.get(self.d.radius);
        if !radius.is_finite() {
            ctx.error(format!(
                "radius = {radius} is not finite: nothing is paired"
            ));
            return;
        }
        if radius < 0.0 {
            ctx.warn(format!(
                "radius = {radius} is negative: SOFA refuses it when re-initialised, and at init compares with radius², so {} is used",
                -radius
            ));
        } else if radius == 0.0 {
            ctx.warn("radius = 0: no pair can be closer, nothing is paired");
        }
        let (Some(s1), Some(s2)) = (
            self.end(ctx, "object1", d.object1),
            self.end(ctx, "object2", d.object2),
        ) else {
            return;
        };
        let scene = ctx.scene;
        let vid = if self.data.get(self.d.use_rest_position) {
            VecId::REST_POSITION
        } else {
            VecId::POSITION
        };
        let (Some(m1), Some(m2)) = (scene.state(s1), scene.state(s2)) else {
            return;
        };
        let (x1, x2) = (m1.vec(vid), m2.vec(vid));
        for (s, x) in [(s1, x1), (s2, x2)] {
            if !x.is_empty() {
                continue;
            }
            let label = scene.component_label(s);
            if scene.info(s).initialized {
                ctx.warn(format!("'{label}' has no points: nothing is paired"));
            } else {
                ctx.warn(format!(
                    "'{label}' is not initialised yet when this engine is (it comes later in the scene), so it has no positions and nothing is paired; SOFA would pair its points once it is initialised"
                ));
            }
        }
        if x1.is_empty() || x2.is_empty() {
            return;
        }
        let w = self.dof.coord_size();
        let c1 = self.candidates(ctx, "inputIndices1", d.input_indices1, x1.len() / w);
        let c2 = self.candidates(ctx, "inputIndices2", d.input_indices2, x2.len() / w);
        let finite = |x: &[f64], c: &[u32]| {
            c.iter().all(|&i| {
                x[i as usize * w..(i as usize + 1) * w]
                    .iter()
                    .all(|v| v.is_finite())
            })
        };
        if !finite(x1, &c1) || !finite(x2, &c2) {
            ctx.warn("some candidate points have non-finite coordinates: their distances never compare smaller (as in SOFA), so they are not paired, and a non-finite first candidate of the first state is kept as the nearest of every point, which then pairs with nothing");
        }
        let pairs = nearest_pairs(self.dof, x1, x2, &c1, &c2, radius);
        let edges: Vec<u32> = pairs.iter().flat_map(|p| [2 * p.1, 2 * p.1 + 1]).collect();
        if edges.iter().any(|&e| e as usize >= 2 * pairs.len()) {
            ctx.warn(format!(
                "edges are numbered from the second state's indices (2·i2, 2·i2 + 1, as SOFA does), and some reach beyond the {} points a SubsetMultiMapping over indexPairs gives",
                2 * pairs.len()
            ));
        }
        let t = &mut self.data;
        let _ = t.put(d.indices1, Value::Ints(pairs.iter().map(|p| p.0).collect()));
        let _ = t.put(d.indices2, Value::Ints(pairs.iter().map(|p| p.1).collect()));
        let _ = t.put(d.edges, Value::Ints(edges));
        let index_pairs = pairs.iter().flat_map(|p| [0, p.0, 1, p.1]).collect();
        let _ = t.put(d.index_pairs, Value::Ints(index_pairs));
        let distances = pairs.iter().map(|p| p.2.sqrt()).collect();
        let _ = t.put(d.distances, Value::Reals(distances));
    }
}

impl_component!(NearestPointRoi, "NearestPointROI", init);

impl Engine for NearestPointRoi {}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::Component;
    use canape_core::scene::{AnyComponent, Scene};
    use canape_core::state::MechanicalObject;

    const X1: [f64; 9] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0];
    const X2: [f64; 12] = [1.05, 0.0, 0.0, 5.0, 0.0, 0.0, 0.02, 0.0, 0.0, 1.5, 0.0, 0.0];

    /// A Vec3 state at rest positions `x`, its positions `shift` further along x; an empty
    /// one (a state not initialised yet) when `initialised` is false.
    fn state(x: &[f64], shift: f64, initialised: bool) -> AnyComponent {
        let mut mo = MechanicalObject::new(DofType::Vec3);
        if initialised {
            mo.resize(x.len() / 3);
            mo.vec_mut(VecId::REST_POSITION).copy_from_slice(x);
            let moved: Vec<f64> = x
                .iter()
                .enumerate()
                .map(|(k, v)| if k % 3 == 0 { v + shift } else { *v })
                .collect();
            mo.vec_mut(VecId::POSITION).copy_from_slice(&moved);
        }
        AnyComponent::State(mo)
    }

    /// Nodes A and B under the root, each with a state `mo` (initialised or not; B's
    /// positions 100 away from its rest positions); the engine
    /// of template `dof` with `attrs` in node `at` (0: root, 1: A), initialised there.
    fn run(
        dof: DofType,
        attrs: &[(&str, &str)],
        initialised: bool,
        at: usize,
    ) -> (NearestPointRoi, usize) {
        let mut e = NearestPointRoi::new(dof);
        for (k, v) in attrs {
            e.data.set_str(k, v).unwrap();
        }
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let a = scene.add_node("A", Some(root));
        let b = scene.add_node("B", Some(root));
        for (n, x, shift) in [(a, &X1[..], 0.0), (b, &X2[..], 100.0)] {
            let s = scene.add_component(n, "mo", state(x, shift, initialised), None);
            scene.info_mut(s).initialized = initialised;
        }
        let node = [root, a][at];
        let id = scene.add_component(node, "np", AnyComponent::Engine(Box::new(e.clone())), None);
        let mut diags = canape_core::diag::Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node,
            id,
            diags: &mut diags,
        };
        e.init(&mut ctx);
        (e, diags.len())
    }

    const ENDS: [(&str, &str); 2] = [("object1", "@A/mo"), ("object2", "@B")];

    fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        ENDS.iter().chain(extra).copied().collect()
    }

    #[test]
    fn squared_distances_of_each_type() {
        assert_eq!(distance2(DofType::Vec2, &[1.0, 2.0], &[4.0, 6.0]), 25.0);
        assert_eq!(distance2(DofType::Vec1, &[1.0], &[-1.0]), 4.0);
        // Rigid3: a quarter turn about z adds sin²(45°) = 0.5
        let h = (0.5f64).sqrt();
        let a = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let b = [1.0, 2.0, 2.0, 0.0, 0.0, h, h];
        assert!((distance2(DofType::Rigid3, &a, &b) - 9.5).abs() < 1e-15);
        // the same rotation on both sides adds nothing
        assert!((distance2(DofType::Rigid3, &b, &b)).abs() < 1e-30);
        // Rigid2: the angle difference modulo 2π
        let d = distance2(
            DofType::Rigid2,
            &[0.0, 0.0, 0.0],
            &[3.0, 0.0, 2.0 * PI + 0.5],
        );
        assert!((d - 9.25).abs() < 1e-12, "{d}");
    }

    #[test]
    fn non_finite_points_follow_min_element() {
        let v3 = DofType::Vec3;
        let x2 = [1.0, 0.0, 0.0];
        // a NaN candidate after the first is never nearer
        let p = nearest_pairs(
            v3,
            &[1.0, 0.0, 0.0, f64::NAN, 0.0, 0.0],
            &x2,
            &[0, 1],
            &[0],
            1.0,
        );
        assert_eq!(p, vec![(0, 0, 0.0)]);
        // a NaN first candidate is never displaced, and pairs with nothing
        let p = nearest_pairs(
            v3,
            &[f64::NAN, 0.0, 0.0, 1.0, 0.0, 0.0],
            &x2,
            &[0, 1],
            &[0],
            1.0,
        );
        assert!(p.is_empty());
        // candidates beyond the states are ignored
        let p = nearest_pairs(v3, &[1.0, 0.0, 0.0], &x2, &[7, 0], &[0, 3], 1.0);
        assert_eq!(p, vec![(0, 0, 0.0)]);
    }

    #[test]
    fn each_point_of_the_second_state_pairs_with_its_nearest() {
        let (e, n) = run(DofType::Vec3, &with(&[("radius", "0.6")]), true, 0);
        // point 1 of B (x = 5) is too far; point 3 (x = 1.5) is as near to 1 as to 2: the first
        assert_eq!(e.data.ints("indices1"), &[1, 0, 1]);
        assert_eq!(e.data.ints("indices2"), &[0, 2, 3]);
        assert_eq!(
            e.data.ints("indexPairs"),
            &[0, 1, 1, 0, 0, 0, 1, 2, 0, 1, 1, 3]
        );
        let d = e.data.reals("distances");
        assert!((d[0] - 0.05).abs() < 1e-12 && (d[1] - 0.02).abs() < 1e-12 && d[2] == 0.5);
        // SOFA's edges come from the second state's index: (6, 7) is beyond the 6 pair points
        assert_eq!(e.data.ints("edges"), &[0, 1, 4, 5, 6, 7]);
        assert_eq!(n, 1, "the edges beyond the pairs are reported");
        // the empty candidate lists were filled with every point
        assert_eq!(e.data.ints("inputIndices1"), &[0, 1, 2]);
        assert_eq!(e.data.ints("inputIndices2"), &[0, 1, 2, 3]);
    }

    #[test]
    fn candidate_lists_restrict_and_order_the_search() {
        let attrs = with(&[
            ("radius", "1e5"),
            ("inputIndices1", "2 0 9"),
            ("inputIndices2", "3 0"),
        ]);
        let (e, n) = run(DofType::Vec3, &attrs, true, 0);
        assert_eq!(n, 2, "index 9 beyond the first state, and the edges");
        assert_eq!(e.data.ints("indices1"), &[2, 2]);
        assert_eq!(e.data.ints("indices2"), &[3, 0]);
        assert_eq!(e.data.ints("edges"), &[6, 7, 0, 1]);
    }

    #[test]
    fn positions_instead_of_rest_positions() {
        // the second state's positions are 100 away from its rest positions: read there
        // (useRestPosition = 0), nothing is within the radius
        let (e, n) = run(
            DofType::Vec3,
            &with(&[("radius", "0.6"), ("useRestPosition", "0")]),
            true,
            0,
        );
        assert_eq!(n, 0);
        assert!(e.data.ints("indices2").is_empty());
        let (e, _) = run(
            DofType::Vec3,
            &with(&[("radius", "200"), ("useRestPosition", "0")]),
            true,
            0,
        );
        assert!((e.data.reals("distances")[0] - 99.05).abs() < 1e-9);
        // without object links both ends are the context state: every point pairs with itself
        let (e, n) = run(DofType::Vec3, &[], true, 1);
        assert_eq!(n, 0);
        assert_eq!(e.data.ints("indices1"), &[0, 1, 2]);
        assert_eq!(e.data.ints("edges"), &[0, 1, 2, 3, 4, 5]);
        assert_eq!(e.data.reals("distances"), &[0.0; 3]);
    }

    #[test]
    fn bad_inputs_are_reported() {
        // a negative radius acts as its absolute value (SOFA's radius²), reported
        let (e, n) = run(DofType::Vec3, &with(&[("radius", "-0.6")]), true, 0);
        assert_eq!(n, 2);
        assert_eq!(e.data.ints("indices2"), &[0, 2, 3]);
        // zero radius: nothing, reported
        let (e, n) = run(DofType::Vec3, &with(&[("radius", "0")]), true, 0);
        assert_eq!(n, 1);
        assert!(e.data.ints("indices1").is_empty());
        // non-finite radius
        let (e, n) = run(DofType::Vec3, &with(&[("radius", "nan")]), true, 0);
        assert_eq!(n, 1);
        assert!(e.data.ints("indexPairs").is_empty());
        // a link to nothing, a state of another type
        let (_, n) = run(
            DofType::Vec3,
            &[("object1", "@C/mo"), ("object2", "@B")],
            true,
            0,
        );
        assert_eq!(n, 1);
        let (e, n) = run(DofType::Vec2, &with(&[]), true, 0);
        assert_eq!(n, 2, "both ends are Vec3");
        assert!(e.data.ints("indices1").is_empty());
        // states not initialised yet: no positions, reported for each
        let (e, n) = run(DofType::Vec3, &with(&[]), false, 0);
        assert_eq!(n, 2);
        assert!(e.data.ints("indices1").is_empty());
        // no context state and no links
        let (_, n) = run(DofType::Vec3, &[], true, 0);
        assert_eq!(n, 2);
    }
}
