//! ValuesFromPositions (Sofa/Component/Engine/Select/src/sofa/component/engine/select/
//! ValuesFromPositions.inl): a value for each point, edge, triangle and tetrahedron, read off a
//! piecewise-linear ramp of `inputValues` along `direction` (`fieldType` "Scalar"), or the
//! vector `direction` itself for each of them (`fieldType` "Vector").
//!
//! An element is valued at its centroid. The ramp's parameter of a position p is
//! (p·direction − xmin) / (xmax − xmin), spread over the input values (0 on the first, 1 on the
//! last, clamped at both ends), where xmin and xmax are the x bounds of the scene's visual
//! bounding box, as SOFA takes them (its own source notes that projecting the box on the
//! direction was probably meant): the positions of the MechanicalObjects drawn with
//! `showObject`, from ±1e10 when there are none. `direction` is not normalised.

use super::{all_finite, cpos};
use crate::base_data;
use canape_core::component::{Component, Engine, Role};
use canape_core::data::{Data, DataKind, DataTable, Flag, Ints, Real, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::scene::{InitContext, Scene};
use canape_core::state::VecId;

/// The `fieldType` options, in SOFA's order (the first is the default).
const FIELD_TYPES: [&str; 2] = ["Scalar", "Vector"];

/// SOFA's empty visual bounding box: min and max of the x range before anything is included.
const EMPTY_RANGE: (f64, f64) = (1e10, -1e10);

/// The value at ramp position `coord` (p·direction) for `values` over the range
/// `xmin`–`xmax`: 0 without values, the value itself with one, else the linear interpolation
/// between the two values around it, the first below the range (and for a NaN parameter) and
/// the last above it.
pub fn value_at(values: &[f64], coord: f64, xmin: f64, xmax: f64) -> f64 {
    match values {
        [] => 0.0,
        [v] => *v,
        _ => {
            let last = values.len() - 1;
            let t = (coord - xmin) / (xmax - xmin) * last as f64;
            let k = t.floor();
            if k.is_nan() || k < 0.0 {
                values[0]
            } else if k >= last as f64 {
                values[last]
            } else {
                let (i, f) = (k as usize, t - k);
                values[i] * (1.0 - f) + values[i + 1] * f
            }
        }
    }
}

/// The x range of the scene's visual bounding box as SOFA's visual loop computes it: the x
/// coordinates of the MechanicalObjects shown with `showObject` (their current positions),
/// starting from the empty range (1e10, −1e10).
pub fn scene_x_range(scene: &Scene) -> (f64, f64) {
    let (mut lo, mut hi) = EMPTY_RANGE;
    for s in scene.states.iter().flatten() {
        if !s.data().bool("showObject") {
            continue;
        }
        let w = s.dof.coord_size();
        let x = match s.vec(VecId::POSITION) {
            [] => s.data().reals("position").to_vec(),
            v => v.to_vec(),
        };
        for c in x.chunks_exact(w) {
            if c[0] < lo {
                lo = c[0];
            }
            if c[0] > hi {
                hi = c[0];
            }
        }
    }
    (lo, hi)
}

canape_core::data_schema! {
    /// ValuesFromPositions' ramp: the values and the direction along which they are spread
    /// (after the base Data, before `position`).
    pub struct ValuesRamp {
        input_values: Reals = ("inputValues", DataKind::Reals(0), "", "Input values"),
        direction: Reals = ("direction", DataKind::Vector(3), "0 1 0", "Direction along which the values are interpolated"),
    }
}

/// One element list of ValuesFromPositions: its input Data (name and handle), its size, its
/// scalar and vector outputs.
type ElementList = (&'static str, Data<Ints>, usize, Data<Reals>, Data<Reals>);

canape_core::data_schema! {
    /// ValuesFromPositions' other Data (after `position`).
    pub struct ValuesFromPositionsData {
        edges: Ints = ("edges", DataKind::Ints(2), "", "Edge Topology"),
        triangles: Ints = ("triangles", DataKind::Ints(3), "", "Triangle Topology"),
        tetrahedra: Ints = ("tetrahedra", DataKind::Ints(4), "", "Tetrahedron Topology"),
        values: Reals => ("values", DataKind::Reals(0), "Values of the points contained in the ROI"),
        edge_values: Reals => ("edgeValues", DataKind::Reals(0), "Values of the edges contained in the ROI"),
        triangle_values: Reals => ("triangleValues", DataKind::Reals(0), "Values of the triangles contained in the ROI"),
        tetrahedron_values: Reals => ("tetrahedronValues", DataKind::Reals(0), "Values of the tetrahedra contained in the ROI"),
        point_vectors: Reals => ("pointVectors", DataKind::Reals(3), "Vectors of the points contained in the ROI"),
        edge_vectors: Reals => ("edgeVectors", DataKind::Reals(3), "Vectors of the edges contained in the ROI"),
        triangle_vectors: Reals => ("triangleVectors", DataKind::Reals(3), "Vectors of the triangles contained in the ROI"),
        tetrahedron_vectors: Reals => ("tetrahedronVectors", DataKind::Reals(3), "Vectors of the tetrahedra contained in the ROI"),
        field_type: Text = ("fieldType", DataKind::Str, "Scalar", "field type of output elements (Scalar or Vector)"),
        draw_vectors: Flag = ("drawVectors", DataKind::Bool, "0", "draw vectors line"),
        draw_vector_length: Real = ("drawVectorLength", DataKind::Real, "10", "vector length visualisation. "),
    }
}

/// ValuesFromPositions: `values`, `edgeValues`, `triangleValues`, `tetrahedronValues` (scalar
/// field) or `pointVectors`, `edgeVectors`, `triangleVectors`, `tetrahedronVectors` (vector
/// field).
#[derive(Clone)]
pub struct ValuesFromPositions {
    data: DataTable,
    /// Typed handles to `inputValues` and `direction`.
    ramp: ValuesRamp,
    /// Typed handle to `position` (its width is the template's).
    position: Data<Reals>,
    /// Typed handles to the other Data in `data`.
    d: ValuesFromPositionsData,
    /// Scalars per coordinate: 3 (Vec3d) or 7 (Rigid3d).
    width: usize,
}

impl Default for ValuesFromPositions {
    fn default() -> Self {
        Self::new(3)
    }
}

impl ValuesFromPositions {
    /// The engine over coordinates of `width` scalars (3 for Vec3d, 7 for Rigid3d).
    pub fn new(width: usize) -> Self {
        let (data, ramp) = ValuesRamp::declare(base_data(DataTable::new()));
        let (data, position) = data.declare::<Reals>(
            "position",
            DataKind::Reals(width),
            "",
            "Rest position coordinates of the degrees of freedom",
        );
        let (data, d) = ValuesFromPositionsData::declare(data.alias(&["rest_position"]));
        ValuesFromPositions {
            data,
            ramp,
            position,
            d,
            width,
        }
    }

    /// The element lists: input Data (name and handle), size, scalar output, vector output.
    fn lists(&self) -> [ElementList; 3] {
        let d = &self.d;
        [
            ("edges", d.edges, 2, d.edge_values, d.edge_vectors),
            (
                "triangles",
                d.triangles,
                3,
                d.triangle_values,
                d.triangle_vectors,
            ),
            (
                "tetrahedra",
                d.tetrahedra,
                4,
                d.tetrahedron_values,
                d.tetrahedron_vectors,
            ),
        ]
    }

    /// Whether the field is a vector field (`fieldType` "Vector" or 1); an unknown option is
    /// reported and taken as "Scalar".
    fn vector_field(&self, ctx: &mut InitContext<'_>) -> bool {
        let t = self.data.get(self.d.field_type).trim();
        match FIELD_TYPES
            .iter()
            .position(|o| *o == t)
            .or_else(|| t.parse::<usize>().ok().filter(|&i| i < FIELD_TYPES.len()))
        {
            Some(i) => i == 1,
            None => {
                ctx.warn(format!(
                    "unknown fieldType '{t}' (expected Scalar or Vector): Scalar is used"
                ));
                false
            }
        }
    }

    /// `position`, else the rest positions of the context's state, else the positions of a mesh
    /// loader of the context (Vec3 only). None (reported) without any.
    fn points(&self, ctx: &mut InitContext<'_>) -> Option<Vec<f64>> {
        if self.data.was_set(self.position) {
            return Some(self.data.get(self.position).to_vec());
        }
        let scene = ctx.scene;
        if let Some(s) = scene.context_state(ctx.node) {
            let w = scene.state(s).map(|m| m.dof.coord_size());
            if w.is_some_and(|w| w != self.width) {
                ctx.error(format!(
                    "the context's MechanicalObject '{}' does not have this engine's template: no positions",
                    scene.info(s).name
                ));
                return None;
            }
            return match scene
                .component(s)
                .and_then(|c| c.read_data("rest_position"))
            {
                Some(Value::Reals(v)) => Some(v),
                _ => Some(Vec::new()),
            };
        }
        if self.width == 3 {
            let loader = scene
                .lineage(ctx.node)
                .into_iter()
                .find_map(|n| scene.node_components(n, Role::Loader).next());
            if let Some(Value::Reals(v)) =
                loader.and_then(|l| scene.component(l).and_then(|c| c.read_data("position")))
            {
                return Some(v);
            }
        }
        ctx.error("no 'position' given and no MechanicalObject or mesh loader in the context");
        None
    }

    /// Clear the outputs.
    fn clear_outputs(&mut self) {
        for h in [self.d.values, self.d.point_vectors]
            .into_iter()
            .chain(self.lists().into_iter().flat_map(|l| [l.3, l.4]))
        {
            let _ = self.data.put(h, Value::Reals(Vec::new()));
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.clear_outputs();
        let vector = self.vector_field(ctx);
        let dir = self.data.get(self.ramp.direction).to_vec();
        if dir.len() != 3 || !all_finite(&dir) {
            ctx.error("direction needs 3 finite numbers: nothing is computed");
            return;
        }
        let values = self.data.get(self.ramp.input_values).to_vec();
        if !all_finite(&values) {
            ctx.error("inputValues holds non-finite numbers: nothing is computed");
            return;
        }
        let Some(x0) = self.points(ctx) else {
            return;
        };
        if !all_finite(&x0) {
            ctx.warn("position holds non-finite numbers: their values are not meaningful");
        }
        let w = self.width;
        let n = x0.len() / w;
        let (xmin, xmax) = scene_x_range(ctx.scene);
        if !vector && values.len() > 1 {
            if (xmin, xmax) == EMPTY_RANGE {
                ctx.warn(
                    "no MechanicalObject is shown (showObject): SOFA interpolates over x from 1e10 to -1e10, so every value is about the middle of inputValues",
                );
            } else if xmax <= xmin {
                ctx.warn(format!(
                    "the shown MechanicalObjects span no x range ({xmin} to {xmax}): every value is an end of inputValues"
                ));
            }
        }
        let topo = ctx.topology().map(|t| t.mesh());
        let d = [dir[0], dir[1], dir[2]];
        let value =
            |p: [f64; 3]| value_at(&values, p[0] * d[0] + p[1] * d[1] + p[2] * d[2], xmin, xmax);
        let pos = |i: u32| cpos(&x0, w, i as usize);

        // points
        if vector {
            let v: Vec<f64> = (0..n).flat_map(|_| d).collect();
            let _ = self.data.put(self.d.point_vectors, Value::Reals(v));
        } else {
            let v: Vec<f64> = (0..n as u32)
                .map(|i| value(pos(i).expect("in range")))
                .collect();
            let _ = self.data.put(self.d.values, Value::Reals(v));
        }
        // elements, at their centroids
        for (input, list, k, scalar_out, vector_out) in self.lists() {
            let elems: Vec<u32> = if self.data.was_set(list) {
                self.data.get(list).to_vec()
            } else {
                topo.map(|m| match input {
                    "edges" => canape_core::mesh::flatten(&m.edges),
                    "triangles" => canape_core::mesh::flatten(&m.triangles),
                    _ => canape_core::mesh::flatten(&m.tetrahedra),
                })
                .unwrap_or_default()
            };
            let centroids: Option<Vec<[f64; 3]>> = elems
                .chunks_exact(k)
                .map(|el| {
                    let mut c = [0.0; 3];
                    for &i in el {
                        let p = pos(i)?;
                        for a in 0..3 {
                            c[a] += p[a];
                        }
                    }
                    Some(c.map(|v| v / k as f64))
                })
                .collect();
            let Some(centroids) = centroids else {
                ctx.error(format!(
                    "'{input}' uses a point index beyond the {n} points: no value is given to them"
                ));
                continue;
            };
            if vector {
                let v: Vec<f64> = centroids.iter().flat_map(|_| d).collect();
                let _ = self.data.put(vector_out, Value::Reals(v));
            } else {
                let v: Vec<f64> = centroids.into_iter().map(value).collect();
                let _ = self.data.put(scalar_out, Value::Reals(v));
            }
        }
    }
}

impl_component!(ValuesFromPositions, "ValuesFromPositions", init);

impl Engine for ValuesFromPositions {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::init_alone;
    use canape_core::scene::AnyComponent;
    use canape_core::state::MechanicalObject;
    use canape_types::DofType;

    #[test]
    fn the_ramp_interpolates_and_clamps() {
        let v = [0.0, 10.0, 40.0];
        // range 0–4: two segments of length 2
        assert_eq!(value_at(&v, 0.0, 0.0, 4.0), 0.0);
        assert_eq!(value_at(&v, 1.0, 0.0, 4.0), 5.0);
        assert_eq!(value_at(&v, 2.0, 0.0, 4.0), 10.0);
        assert_eq!(value_at(&v, 3.0, 0.0, 4.0), 25.0);
        assert_eq!(value_at(&v, 4.0, 0.0, 4.0), 40.0);
        assert_eq!(value_at(&v, -3.0, 0.0, 4.0), 0.0);
        assert_eq!(value_at(&v, 9.0, 0.0, 4.0), 40.0);
        // an empty range gives NaN parameters: the first value, as SOFA's integer cast does
        assert_eq!(value_at(&v, 2.0, 2.0, 2.0), 0.0);
        assert_eq!(value_at(&[], 2.0, 0.0, 4.0), 0.0);
        assert_eq!(value_at(&[7.0], 2.0, 0.0, 4.0), 7.0);
    }

    /// Run the engine in a scene holding a shown Vec3 state at `shown` (x coordinates).
    fn run_with_shown_state(shown: &[f64], attrs: &[(&str, &str)]) -> (ValuesFromPositions, usize) {
        let mut e = ValuesFromPositions::new(3);
        for (k, v) in attrs {
            e.data.set_str(k, v).unwrap();
        }
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut mo = MechanicalObject::new(DofType::Vec3);
        mo.data_mut().set_str("showObject", "1").unwrap();
        mo.resize(shown.len());
        for (i, x) in shown.iter().enumerate() {
            mo.vec_mut(VecId::POSITION)[3 * i] = *x;
        }
        scene.add_component(root, "shown", AnyComponent::State(mo), None);
        let id = scene.add_component(root, "v", AnyComponent::Engine(Box::new(e.clone())), None);
        let mut diags = canape_core::diag::Diagnostics::default();
        let mut ctx = InitContext {
            scene: &scene,
            node: root,
            id,
            diags: &mut diags,
        };
        e.init(&mut ctx);
        (e, diags.len())
    }

    #[test]
    fn values_of_points_and_elements_along_a_direction() {
        // x range of the shown state: 0 to 8, two segments of the ramp of length 4
        let (e, n) = run_with_shown_state(
            &[0.0, 8.0],
            &[
                ("inputValues", "0 10 40"),
                ("direction", "1 0 0"),
                ("position", "2 0 0  4 5 6  6 0 0  -4 0 0  20 0 0"),
                ("edges", "0 2  1 4"),
                ("triangles", "0 1 2"),
                ("tetrahedra", "0 1 2 3"),
            ],
        );
        assert_eq!(n, 0);
        // p·d = x = 2, 4, 6, −4, 20: halfway up the first segment, its end, halfway up the
        // second, clamped below, clamped above
        assert_eq!(e.data.reals("values"), &[5.0, 10.0, 25.0, 0.0, 40.0]);
        // edge 0–2: centroid x 4 → 10; edge 1–4: x 12 → 40
        assert_eq!(e.data.reals("edgeValues"), &[10.0, 40.0]);
        // triangle: x 4 → 10; tetrahedron: x 2 → 5
        assert_eq!(e.data.reals("triangleValues"), &[10.0]);
        assert_eq!(e.data.reals("tetrahedronValues"), &[5.0]);
        assert!(e.data.reals("pointVectors").is_empty());
    }

    #[test]
    fn a_vector_field_gives_the_direction_everywhere() {
        let mut e = ValuesFromPositions::new(3);
        let n = init_alone(
            &mut e,
            &[
                ("fieldType", "Vector"),
                ("direction", "1 1 0"),
                ("position", "0 0 0  1 0 0  0 1 0"),
                ("edges", "0 1"),
                ("triangles", "0 1 2"),
            ],
        );
        assert_eq!(n, 0);
        assert_eq!(e.data.reals("pointVectors"), &[1.0, 1.0, 0.0].repeat(3)[..]);
        assert_eq!(e.data.reals("edgeVectors"), &[1.0, 1.0, 0.0]);
        assert_eq!(e.data.reals("triangleVectors"), &[1.0, 1.0, 0.0]);
        assert!(e.data.reals("values").is_empty());
    }

    #[test]
    fn without_a_shown_state_the_values_sit_in_the_middle() {
        let mut e = ValuesFromPositions::new(3);
        let n = init_alone(
            &mut e,
            &[
                ("inputValues", "0 10"),
                ("direction", "1 0 0"),
                ("position", "0 0 0  100 0 0"),
            ],
        );
        assert_eq!(n, 1, "the empty range is reported");
        for v in e.data.reals("values") {
            assert!((v - 5.0).abs() < 1e-6, "{v}");
        }
    }

    #[test]
    fn bad_inputs_are_reported() {
        let mut e = ValuesFromPositions::new(3);
        let n = init_alone(
            &mut e,
            &[
                ("position", "0 0 0"),
                ("edges", "0 3"),
                ("fieldType", "Tensor"),
            ],
        );
        assert_eq!(
            n, 2,
            "the unknown field type and the edge beyond the points"
        );
        assert_eq!(e.data.reals("values"), &[0.0]);
        assert!(e.data.reals("edgeValues").is_empty());
        let mut e = ValuesFromPositions::new(3);
        assert_eq!(init_alone(&mut e, &[("inputValues", "1 nan")]), 1);
        let mut e = ValuesFromPositions::new(3);
        assert_eq!(init_alone(&mut e, &[]), 1, "no positions anywhere");
    }
}
