//! MeshROI (Sofa/Component/Engine/Select/src/sofa/component/engine/select/MeshROI.inl, on
//! BaseROI.inl): the points of a mesh inside a closed triangle surface (the ROI mesh), and the
//! edges, triangles, quads, tetrahedra and hexahedra they make.
//!
//! A point is inside when it lies in the ROI mesh's bounding box (bounds included) and a ray
//! from it crosses the ROI triangles an odd number of times. The ray goes towards the box corner
//! nearer to the point, pushed 100 units further out (`min − 100` on every axis, or `max + 100`);
//! it is a half-line, and a crossing counts when the ray meets the triangle's plane at a
//! parameter ≥ 0 and the meeting point is on the inner side of (or on) each of its three edges,
//! so a ray through an edge or a vertex counts every triangle it touches, as in SOFA. With
//! `computeMeshROI` off every point is inside. An element is inside when all its points are;
//! otherwise, unless `strict`, when its centroid is (MeshROI's default is not strict).

use super::{all_finite, cpos, local_mesh, local_rest_positions, state_rest_positions};
use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Value};
use canape_core::impl_component;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_types::Vec3;
use std::collections::BTreeMap;

/// One kind of element MeshROI sorts: its input Data, the flag that enables it, its size and
/// its outputs (SOFA names no "out" lists for quads and hexahedra).
struct ElementKind {
    input: &'static str,
    compute: &'static str,
    size: usize,
    indices: &'static str,
    in_roi: &'static str,
    out_indices: Option<&'static str>,
    out_roi: Option<&'static str>,
    from_mesh: fn(&Mesh) -> Vec<u32>,
}

const KINDS: [ElementKind; 5] = [
    ElementKind {
        input: "edges",
        compute: "computeEdges",
        size: 2,
        indices: "edgeIndices",
        in_roi: "edgesInROI",
        out_indices: Some("edgeOutIndices"),
        out_roi: Some("edgesOutROI"),
        from_mesh: |m| canape_core::mesh::flatten(&m.edges),
    },
    ElementKind {
        input: "triangles",
        compute: "computeTriangles",
        size: 3,
        indices: "triangleIndices",
        in_roi: "trianglesInROI",
        out_indices: Some("triangleOutIndices"),
        out_roi: Some("trianglesOutROI"),
        from_mesh: |m| canape_core::mesh::flatten(&m.triangles),
    },
    ElementKind {
        input: "quad",
        compute: "computeQuad",
        size: 4,
        indices: "quadIndices",
        in_roi: "quadInROI",
        out_indices: None,
        out_roi: None,
        from_mesh: |m| canape_core::mesh::flatten(&m.quads),
    },
    ElementKind {
        input: "tetrahedra",
        compute: "computeTetrahedra",
        size: 4,
        indices: "tetrahedronIndices",
        in_roi: "tetrahedraInROI",
        out_indices: Some("tetrahedronOutIndices"),
        out_roi: Some("tetrahedraOutROI"),
        from_mesh: |m| canape_core::mesh::flatten(&m.tetrahedra),
    },
    ElementKind {
        input: "hexahedra",
        compute: "computeHexahedra",
        size: 8,
        indices: "hexahedronIndices",
        in_roi: "hexahedraInROI",
        out_indices: None,
        out_roi: None,
        from_mesh: |m| canape_core::mesh::flatten(&m.hexahedra),
    },
];

/// How far beyond the bounding box the rays are aimed (SOFA's constant).
const RAY_MARGIN: f64 = 100.0;

/// The ROI surface: its triangles (corners and SOFA's normal (p1 − p0) × (p2 − p1)) and the
/// bounding box that pre-filters the points.
#[derive(Clone, Debug)]
pub struct RoiSurface {
    triangles: Vec<[Vec3; 4]>,
    min: Vec3,
    max: Vec3,
}

impl RoiSurface {
    /// The surface of `triangles` (already checked against `points`) in the box `min`–`max`.
    pub fn new(points: &[[f64; 3]], triangles: &[[u32; 3]], min: Vec3, max: Vec3) -> Self {
        let v = |i: u32| Vec3::from(points[i as usize]);
        let triangles = triangles
            .iter()
            .map(|t| {
                let (a, b, c) = (v(t[0]), v(t[1]), v(t[2]));
                [a, b, c, (b - a).cross(&(c - b))]
            })
            .collect();
        RoiSurface {
            triangles,
            min,
            max,
        }
    }

    /// Whether `p` is in the bounding box, bounds included.
    pub fn in_box(&self, p: &Vec3) -> bool {
        (0..3).all(|k| p[k] >= self.min[k] && p[k] <= self.max[k])
    }

    /// Whether `p` is inside the surface: in the box and crossed an odd number of times by the
    /// ray towards the nearer corner pushed out by 100.
    pub fn contains(&self, p: &Vec3) -> bool {
        if !self.in_box(p) {
            return false;
        }
        let m = Vec3::repeat(RAY_MARGIN);
        let target = if (self.min - p).norm_squared() < (self.max - p).norm_squared() {
            self.min - m
        } else {
            self.max + m
        };
        let dir = target - p;
        let inner = |a: &Vec3, b: &Vec3, q: &Vec3, n: &Vec3| (b - a).cross(&(q - a)).dot(n) >= 0.0;
        let crossings = self
            .triangles
            .iter()
            .filter(|[a, b, c, n]| {
                let denom = n.dot(&dir);
                if denom == 0.0 {
                    return false;
                }
                let d = n.dot(&(a - p)) / denom;
                if d.is_nan() || d < 0.0 {
                    return false;
                }
                let q = p + dir * d;
                inner(a, b, &q, n) && inner(b, c, &q, n) && inner(c, a, &q, n)
            })
            .count();
        crossings % 2 == 1
    }
}

/// The bounding box of `points` as SOFA's MeshROI computes it (comparisons, so that NaN
/// coordinates are skipped); None without points.
pub fn bounding_box(points: &[[f64; 3]]) -> Option<(Vec3, Vec3)> {
    let first = Vec3::from(*points.first()?);
    let (mut lo, mut hi) = (first, first);
    for p in &points[1..] {
        for k in 0..3 {
            if p[k] > hi[k] {
                hi[k] = p[k];
            }
            if p[k] < lo[k] {
                lo[k] = p[k];
            }
        }
    }
    Some((lo, hi))
}

/// The number of edges of `triangles` that are not shared by exactly two of them (0 for a
/// closed, manifold surface).
pub fn open_edges(triangles: &[[u32; 3]]) -> usize {
    let mut count: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for t in triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *count.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    count.values().filter(|&&c| c != 2).count()
}

/// MeshROI: outputs `indices`, `pointsInROI`, `indicesOut`, `pointsOutROI`, `nbIndices`, the
/// elements inside and outside, and `box`, the ROI mesh's bounding box.
#[derive(Clone)]
pub struct MeshRoi {
    data: DataTable,
    /// Scalars per coordinate: 3 (Vec3d) or 7 (Rigid3d).
    width: usize,
    /// Whether the selection was made once: afterwards `doUpdate` off keeps it.
    computed: bool,
}

impl Default for MeshRoi {
    fn default() -> Self {
        Self::new(3)
    }
}

impl MeshRoi {
    /// A MeshROI over coordinates of `width` scalars (3 for Vec3d, 7 for Rigid3d).
    pub fn new(width: usize) -> Self {
        let w = width;
        let data = base_data(DataTable::new())
            .with(
                "position",
                DataKind::Reals(w),
                "",
                "Rest position coordinates of the degrees of freedom. If empty the positions from a MechanicalObject then a MeshLoader are searched in the current context. If none are found the parent's context is searched for MechanicalObject.",
            )
            .with("edges", DataKind::Ints(2), "", "Edge Topology")
            .with("triangles", DataKind::Ints(3), "", "Triangle Topology")
            .with("quad", DataKind::Ints(4), "", "Quad Topology")
            .with("tetrahedra", DataKind::Ints(4), "", "Tetrahedron Topology")
            .with("hexahedra", DataKind::Ints(8), "", "Hexahedron Topology")
            .with(
                "computeEdges",
                DataKind::Bool,
                "1",
                "If true, will compute edge list and index list inside the ROI. (default = true)",
            )
            .with(
                "computeTriangles",
                DataKind::Bool,
                "1",
                "If true, will compute triangle list and index list inside the ROI. (default = true)",
            )
            .with(
                "computeQuad",
                DataKind::Bool,
                "1",
                "If true, will compute quad list and index list inside the ROI. (default = true)",
            )
            .with(
                "computeTetrahedra",
                DataKind::Bool,
                "1",
                "If true, will compute tetrahedra list and index list inside the ROI. (default = true)",
            )
            .with(
                "computeHexahedra",
                DataKind::Bool,
                "1",
                "If true, will compute hexahedra list and index list inside the ROI. (default = true)",
            )
            .with(
                "strict",
                DataKind::Bool,
                "0",
                "If true, an element is inside the box if all of its nodes are inside. If False, only the center point of the element is checked. (MeshROI's default: false)",
            )
            .output(
                "indices",
                DataKind::Ints(0),
                "Indices of the points contained in the ROI",
            )
            .output(
                "edgeIndices",
                DataKind::Ints(0),
                "Indices of the edges contained in the ROI",
            )
            .output(
                "triangleIndices",
                DataKind::Ints(0),
                "Indices of the triangles contained in the ROI",
            )
            .output(
                "quadIndices",
                DataKind::Ints(0),
                "Indices of the quad contained in the ROI",
            )
            .output(
                "tetrahedronIndices",
                DataKind::Ints(0),
                "Indices of the tetrahedra contained in the ROI",
            )
            .output(
                "hexahedronIndices",
                DataKind::Ints(0),
                "Indices of the hexahedra contained in the ROI",
            )
            .output(
                "pointsInROI",
                DataKind::Reals(w),
                "Points contained in the ROI",
            )
            .output(
                "edgesInROI",
                DataKind::Ints(2),
                "Edges contained in the ROI",
            )
            .output(
                "trianglesInROI",
                DataKind::Ints(3),
                "Triangles contained in the ROI",
            )
            .output("quadInROI", DataKind::Ints(4), "Quad contained in the ROI")
            .output(
                "tetrahedraInROI",
                DataKind::Ints(4),
                "Tetrahedra contained in the ROI",
            )
            .output(
                "hexahedraInROI",
                DataKind::Ints(8),
                "Hexahedra contained in the ROI",
            )
            .output("nbIndices", DataKind::Int, "Number of selected indices")
            .output(
                "pointsOutROI",
                DataKind::Reals(w),
                "Points not contained in the ROI",
            )
            .output(
                "edgesOutROI",
                DataKind::Ints(2),
                "Edges not contained in the ROI",
            )
            .output(
                "trianglesOutROI",
                DataKind::Ints(3),
                "Triangles not contained in the ROI",
            )
            .output(
                "tetrahedraOutROI",
                DataKind::Ints(4),
                "Tetrahedra not contained in the ROI",
            )
            .output(
                "indicesOut",
                DataKind::Ints(0),
                "Indices of the points not contained in the ROI",
            )
            .output(
                "edgeOutIndices",
                DataKind::Ints(0),
                "Indices of the edges not contained in the ROI",
            )
            .output(
                "triangleOutIndices",
                DataKind::Ints(0),
                "Indices of the triangles not contained in the ROI",
            )
            .output(
                "tetrahedronOutIndices",
                DataKind::Ints(0),
                "Indices of the tetrahedra not contained in the ROI",
            )
            .with(
                "drawROI",
                DataKind::Bool,
                "0",
                "Draw the ROI (default = false)",
            )
            .with(
                "drawPoints",
                DataKind::Bool,
                "0",
                "Draw Points. (default = false)",
            )
            .with(
                "drawEdges",
                DataKind::Bool,
                "0",
                "Draw Edges. (default = false)",
            )
            .with(
                "drawTriangles",
                DataKind::Bool,
                "0",
                "Draw Triangles. (default = false)",
            )
            .with(
                "drawQuads",
                DataKind::Bool,
                "0",
                "Draw Quads. (default = false)",
            )
            .with(
                "drawTetrahedra",
                DataKind::Bool,
                "0",
                "Draw Tetrahedra. (default = false)",
            )
            .with(
                "drawHexahedra",
                DataKind::Bool,
                "0",
                "Draw Tetrahedra. (default = false)",
            )
            .with(
                "drawSize",
                DataKind::Real,
                "1",
                "rendering size for ROI and topological elements",
            )
            .with(
                "doUpdate",
                DataKind::Bool,
                "1",
                "If true, updates the selection at the beginning of simulation steps. (default = true)",
            )
            .with(
                "ROIposition",
                DataKind::Reals(w),
                "",
                "ROI position coordinates of the degrees of freedom",
            )
            .with("ROIedges", DataKind::Ints(2), "", "ROI Edge Topology")
            .with("ROItriangles", DataKind::Ints(3), "", "ROI Triangle Topology")
            .with(
                "computeMeshROI",
                DataKind::Bool,
                "1",
                "Compute with the mesh (not only bounding box)",
            )
            .with(
                "box",
                DataKind::Vector(6),
                "0 0 0 0 0 0",
                "Bounding box defined by xmin,ymin,zmin, xmax,ymax,zmax",
            )
            .with(
                "drawOut",
                DataKind::Bool,
                "0",
                "Draw the data not contained in the ROI",
            )
            .with(
                "drawBox",
                DataKind::Bool,
                "0",
                "Draw the Bounding box around the mesh used for the ROI",
            );
        MeshRoi {
            data,
            width,
            computed: false,
        }
    }

    /// The points to select among: `position`, else the rest positions of the node's state,
    /// else its loader's positions, else the rest positions of a state further up (SOFA's
    /// order). None (reported) without any.
    fn points(&self, ctx: &mut InitContext<'_>) -> Option<Vec<f64>> {
        if self.data.is_set("position") {
            return Some(self.data.reals("position").to_vec());
        }
        match local_rest_positions(ctx, self.width) {
            Ok(Some(p)) => return Some(p),
            Ok(None) => {}
            Err(e) => {
                ctx.error(format!("{e}: nothing is selected"));
                return None;
            }
        }
        let up = ctx.scene.context_state(ctx.node);
        match up.map(|s| state_rest_positions(ctx, s, self.width)) {
            Some(Ok(p)) => Some(p),
            Some(Err(e)) => {
                ctx.error(format!("{e}: nothing is selected"));
                None
            }
            None => {
                ctx.error(
                    "no 'position' given and no MechanicalObject or mesh loader in the context: nothing is selected",
                );
                None
            }
        }
    }

    /// The ROI mesh's points: `ROIposition`, else the node's own state rest positions or loader
    /// positions (with SOFA's warning).
    fn roi_points(&self, ctx: &mut InitContext<'_>) -> Vec<f64> {
        if self.data.is_set("ROIposition") {
            return self.data.reals("ROIposition").to_vec();
        }
        ctx.warn(
            "Data 'ROIposition' is not set: the rest positions of this node's MechanicalObject (or its mesh loader's positions) are used",
        );
        match local_rest_positions(ctx, self.width) {
            Ok(p) => p.unwrap_or_default(),
            Err(e) => {
                ctx.error(e);
                Vec::new()
            }
        }
    }

    /// Element list `input` (flat): the Data when set, else (when `compute` is on) the list of
    /// the node's own topology.
    fn elements(&self, mesh: Option<&Mesh>, kind: &ElementKind) -> Vec<u32> {
        if self.data.is_set(kind.input) {
            return self.data.ints(kind.input).to_vec();
        }
        if !self.data.bool(kind.compute) {
            return Vec::new();
        }
        mesh.map(kind.from_mesh).unwrap_or_default()
    }

    /// Clear every output (an invalid or empty input selects nothing).
    fn clear_outputs(&mut self) {
        let names = ["indices", "indicesOut", "pointsInROI", "pointsOutROI"];
        for n in names {
            let v = self.data.field(n).map(|f| f.kind.empty());
            if let Some(v) = v {
                let _ = self.data.set_value(n, v);
            }
        }
        for k in &KINDS {
            let _ = self.data.set_value(k.indices, Value::Ints(Vec::new()));
            let _ = self.data.set_value(k.in_roi, Value::Ints(Vec::new()));
            for n in [k.out_indices, k.out_roi].into_iter().flatten() {
                let _ = self.data.set_value(n, Value::Ints(Vec::new()));
            }
        }
        let _ = self.data.set_value("nbIndices", Value::Int(0));
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        // SOFA selects once at init whatever `doUpdate` says, and later only with it on
        if self.computed && !self.data.bool("doUpdate") {
            return;
        }
        self.computed = true;
        self.clear_outputs();
        let w = self.width;

        // the ROI surface and its bounding box
        let roi = self.roi_points(ctx);
        let roi_pts: Vec<[f64; 3]> = (0..roi.len() / w)
            .filter_map(|i| cpos(&roi, w, i))
            .collect();
        if !all_finite(&roi) {
            ctx.warn(
                "ROIposition holds non-finite numbers: the triangles using them never hold a point",
            );
        }
        let (min, max) = match bounding_box(&roi_pts) {
            Some(b) => b,
            None => {
                let b = self.data.reals("box");
                let b: [f64; 6] = std::array::from_fn(|k| b.get(k).copied().unwrap_or(0.0));
                (Vec3::new(b[0], b[1], b[2]), Vec3::new(b[3], b[4], b[5]))
            }
        };
        let (min, max) = (min.inf(&max), max.sup(&min));
        let _ = self.data.set_value(
            "box",
            Value::Reals(vec![min.x, min.y, min.z, max.x, max.y, max.z]),
        );
        // the ROI triangles: given, else the node's own topology's (ROIedges are only drawn)
        let mesh = local_mesh(ctx);
        let roi_tris_flat: Vec<u32> = if self.data.is_set("ROItriangles") {
            self.data.ints("ROItriangles").to_vec()
        } else if self.data.bool("computeTriangles") {
            mesh.map(|m| canape_core::mesh::flatten(&m.triangles))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let mesh_roi = self.data.bool("computeMeshROI");
        let mut roi_tris: Vec<[u32; 3]> = Vec::new();
        let mut bad = 0usize;
        for t in roi_tris_flat.chunks_exact(3) {
            if t.iter().all(|&i| (i as usize) < roi_pts.len()) {
                roi_tris.push([t[0], t[1], t[2]]);
            } else {
                bad += 1;
            }
        }
        if bad > 0 {
            ctx.error(format!(
                "{bad} ROI triangle(s) use a point index beyond the {} ROI points: they are ignored",
                roi_pts.len()
            ));
        }
        if mesh_roi {
            if roi_tris.is_empty() {
                ctx.warn("the ROI mesh has no triangles: no point is inside it");
            } else {
                let open = open_edges(&roi_tris);
                if open > 0 {
                    ctx.warn(format!(
                        "the ROI surface is not closed ({open} edge(s) not shared by exactly two triangles): the inside test counts ray crossings and may be wrong"
                    ));
                }
            }
        }
        let surface = RoiSurface::new(&roi_pts, &roi_tris, min, max);

        // the points
        let Some(x0) = self.points(ctx) else {
            return;
        };
        let n = x0.len() / w;
        if n == 0 {
            ctx.warn("no rest position yet: nothing is selected");
            return;
        }
        if !all_finite(&x0) {
            ctx.warn("position holds non-finite numbers: those points are outside");
        }
        let p = |i: usize| Vec3::from(cpos(&x0, w, i).expect("in range"));
        let inside_at = |q: &Vec3| !mesh_roi || surface.contains(q);
        let mask: Vec<bool> = (0..n).map(|i| inside_at(&p(i))).collect();
        let (mut idx, mut out) = (Vec::new(), Vec::new());
        let (mut pin, mut pout) = (Vec::new(), Vec::new());
        for (i, &m) in mask.iter().enumerate() {
            let c = &x0[w * i..w * (i + 1)];
            if m {
                idx.push(i as u32);
                pin.extend_from_slice(c);
            } else {
                out.push(i as u32);
                pout.extend_from_slice(c);
            }
        }
        let nb = idx.len() as i64;
        let _ = self.data.set_value("indices", Value::Ints(idx));
        let _ = self.data.set_value("indicesOut", Value::Ints(out));
        let _ = self.data.set_value("pointsInROI", Value::Reals(pin));
        let _ = self.data.set_value("pointsOutROI", Value::Reals(pout));
        let _ = self.data.set_value("nbIndices", Value::Int(nb));

        // the elements
        let strict = self.data.bool("strict");
        for kind in &KINDS {
            if !self.data.bool(kind.compute) {
                continue;
            }
            let elems = self.elements(mesh, kind);
            let (mut ids, mut ins, mut out_ids, mut outs) = (vec![], vec![], vec![], vec![]);
            let mut bad = 0usize;
            for (e, el) in elems.chunks_exact(kind.size).enumerate() {
                if el.iter().any(|&i| i as usize >= n) {
                    bad += 1;
                    continue;
                }
                let hit = el.iter().all(|&i| mask[i as usize])
                    || (!strict && {
                        let mut c = Vec3::zeros();
                        for &i in el {
                            c += p(i as usize);
                        }
                        inside_at(&(c / kind.size as f64))
                    });
                if hit {
                    ids.push(e as u32);
                    ins.extend_from_slice(el);
                } else {
                    out_ids.push(e as u32);
                    outs.extend_from_slice(el);
                }
            }
            if bad > 0 {
                ctx.error(format!(
                    "{bad} element(s) of '{}' use a point index beyond the {n} points: they are neither inside nor outside",
                    kind.input
                ));
            }
            let _ = self.data.set_value(kind.indices, Value::Ints(ids));
            let _ = self.data.set_value(kind.in_roi, Value::Ints(ins));
            if let Some(name) = kind.out_indices {
                let _ = self.data.set_value(name, Value::Ints(out_ids));
            }
            if let Some(name) = kind.out_roi {
                let _ = self.data.set_value(name, Value::Ints(outs));
            }
        }
    }
}

impl_component!(MeshRoi, "MeshROI", init);

impl Engine for MeshRoi {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::init_alone;

    /// The 8 corners and 12 outward triangles of the box `lo`–`hi`.
    fn cube(lo: [f64; 3], hi: [f64; 3]) -> (String, String) {
        let mut pts = Vec::new();
        for k in 0..8 {
            let c = |bit: usize, a: usize| if k >> bit & 1 == 1 { hi[a] } else { lo[a] };
            pts.push(format!("{} {} {}", c(0, 0), c(1, 1), c(2, 2)));
        }
        // corner k = x + 2y + 4z; each face as two triangles, counter-clockwise from outside
        let faces = [
            [0, 2, 3, 1], // z = lo
            [4, 5, 7, 6], // z = hi
            [0, 1, 5, 4], // y = lo
            [2, 6, 7, 3], // y = hi
            [0, 4, 6, 2], // x = lo
            [1, 3, 7, 5], // x = hi
        ];
        let tris: Vec<String> = faces
            .iter()
            .flat_map(|f| {
                [
                    format!("{} {} {}", f[0], f[1], f[2]),
                    format!("{} {} {}", f[0], f[2], f[3]),
                ]
            })
            .collect();
        (pts.join(" "), tris.join(" "))
    }

    /// The points of a 5×5×5 grid with unit spacing from the origin (index x + 5y + 25z).
    fn grid() -> String {
        (0..125)
            .map(|i| format!("{} {} {}", i % 5, i / 5 % 5, i / 25))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn a_cube_selects_exactly_the_grid_points_inside_it() {
        let (pts, tris) = cube([0.31, 0.27, 0.23], [2.71, 2.63, 2.59]);
        let mut e = MeshRoi::new(3);
        let n = init_alone(
            &mut e,
            &[
                ("position", &grid()),
                ("ROIposition", &pts),
                ("ROItriangles", &tris),
            ],
        );
        assert_eq!(n, 0);
        let expected: Vec<u32> = (0..125u32)
            .filter(|i| {
                [i % 5, i / 5 % 5, i / 25]
                    .iter()
                    .all(|c| (1..=2).contains(c))
            })
            .collect();
        assert_eq!(expected.len(), 8);
        assert_eq!(e.data.ints("indices"), &expected[..]);
        assert_eq!(e.data.int("nbIndices"), 8);
        assert_eq!(e.data.ints("indicesOut").len(), 117);
        assert_eq!(e.data.reals("pointsInROI")[..3], [1.0, 1.0, 1.0]);
        assert_eq!(e.data.reals("pointsOutROI").len(), 3 * 117);
        assert_eq!(e.data.reals("box"), &[0.31, 0.27, 0.23, 2.71, 2.63, 2.59]);

        // the triangles' orientation does not matter: all of them flipped select the same
        let flipped: Vec<String> = tris
            .split_whitespace()
            .collect::<Vec<_>>()
            .chunks(3)
            .map(|t| format!("{} {} {}", t[0], t[2], t[1]))
            .collect();
        let mut f = MeshRoi::new(3);
        init_alone(
            &mut f,
            &[
                ("position", &grid()),
                ("ROIposition", &pts),
                ("ROItriangles", &flipped.join(" ")),
            ],
        );
        assert_eq!(f.data.ints("indices"), &expected[..]);
    }

    #[test]
    fn a_point_outside_a_concave_surface_but_inside_its_box_is_outside() {
        // an L-shaped prism: the unit squares (0,0), (1,0), (0,1) extruded over z ∈ [0, 1]
        let outline = [
            [0.0, 0.0],
            [2.0, 0.0],
            [2.0, 1.0],
            [1.0, 1.0],
            [1.0, 2.0],
            [0.0, 2.0],
        ];
        let mut pts: Vec<[f64; 3]> = Vec::new();
        for z in [0.0, 1.0] {
            for o in outline {
                pts.push([o[0], o[1], z]);
            }
        }
        let mut tris: Vec<[u32; 3]> = Vec::new();
        // caps (fan from a convex split: two rectangles 0-1-2-3-… as triangles)
        for (a, b, c) in [(0, 1, 2), (0, 2, 3), (0, 3, 4), (0, 4, 5)] {
            tris.push([a, c, b]);
            tris.push([a + 6, b + 6, c + 6]);
        }
        for k in 0..6u32 {
            let j = (k + 1) % 6;
            tris.push([k, j, j + 6]);
            tris.push([k, j + 6, k + 6]);
        }
        let pts_s: Vec<String> = pts
            .iter()
            .map(|p| format!("{} {} {}", p[0], p[1], p[2]))
            .collect();
        let tris_s: Vec<String> = tris
            .iter()
            .map(|t| format!("{} {} {}", t[0], t[1], t[2]))
            .collect();
        assert_eq!(open_edges(&tris), 0);
        let mut e = MeshRoi::new(3);
        // inside the L, in its notch, inside the L again, outside the box
        let probes = "0.7 0.2 0.6  1.6 1.4 0.5  1.55 0.45 0.35  0.45 1.65 0.55  3 3 3";
        let n = init_alone(
            &mut e,
            &[
                ("position", probes),
                ("ROIposition", &pts_s.join(" ")),
                ("ROItriangles", &tris_s.join(" ")),
            ],
        );
        assert_eq!(n, 0);
        assert_eq!(e.data.ints("indices"), &[0, 2, 3]);
        assert_eq!(e.data.ints("indicesOut"), &[1, 4]);
    }

    #[test]
    fn elements_inside_by_their_points_or_their_centroid() {
        let (pts, tris) = cube([0.31, 0.27, 0.23], [2.71, 2.63, 2.59]);
        // point indices in the 5×5×5 grid
        let at = |x: u32, y: u32, z: u32| x + 5 * y + 25 * z;
        let inside_tet = [at(1, 1, 1), at(2, 1, 1), at(1, 2, 1), at(1, 1, 2)];
        // three points inside, one outside; centroid (1.25, 1.25, 1.5) inside
        let straddling = [at(1, 1, 1), at(2, 1, 1), at(1, 2, 1), at(1, 1, 3)];
        // one point inside; centroid (0.25, 0.25, 1) outside the box
        let outside_tet = [at(1, 1, 1), at(0, 0, 1), at(0, 0, 0), at(0, 0, 2)];
        let tets: Vec<String> = [inside_tet, straddling, outside_tet]
            .iter()
            .flat_map(|t| t.iter().map(|i| i.to_string()))
            .collect();
        let edges = format!(
            "{} {} {} {}",
            at(1, 1, 1),
            at(2, 2, 2),
            at(2, 2, 2),
            at(4, 4, 4)
        );
        let run = |strict: &str| {
            let mut e = MeshRoi::new(3);
            let n = init_alone(
                &mut e,
                &[
                    ("position", &grid()),
                    ("ROIposition", &pts),
                    ("ROItriangles", &tris),
                    ("tetrahedra", &tets.join(" ")),
                    ("edges", &edges),
                    ("strict", strict),
                ],
            );
            assert_eq!(n, 0);
            e
        };
        let loose = run("0");
        assert_eq!(loose.data.ints("tetrahedronIndices"), &[0, 1]);
        assert_eq!(loose.data.ints("tetrahedronOutIndices"), &[2]);
        assert_eq!(loose.data.ints("tetrahedraInROI").len(), 8);
        assert_eq!(loose.data.ints("tetrahedraOutROI"), &outside_tet);
        // edge 2-2-2 → 4-4-4 has its midpoint (3,3,3) outside the box
        assert_eq!(loose.data.ints("edgeIndices"), &[0]);
        assert_eq!(loose.data.ints("edgeOutIndices"), &[1]);
        let strict = run("1");
        assert_eq!(strict.data.ints("tetrahedronIndices"), &[0]);
        assert_eq!(strict.data.ints("tetrahedronOutIndices"), &[1, 2]);
    }

    #[test]
    fn without_the_mesh_test_every_point_is_selected() {
        let (pts, tris) = cube([0.31, 0.27, 0.23], [2.71, 2.63, 2.59]);
        let mut e = MeshRoi::new(3);
        init_alone(
            &mut e,
            &[
                ("position", &grid()),
                ("ROIposition", &pts),
                ("ROItriangles", &tris),
                ("computeMeshROI", "0"),
            ],
        );
        assert_eq!(e.data.ints("indices").len(), 125);
        assert!(e.data.ints("indicesOut").is_empty());
    }

    #[test]
    fn bad_roi_surfaces_are_reported_not_fatal() {
        let (pts, tris) = cube([0.31, 0.27, 0.23], [2.71, 2.63, 2.59]);
        // an open surface: one triangle removed
        let open: Vec<&str> = tris.split_whitespace().skip(3).collect();
        let mut e = MeshRoi::new(3);
        let n = init_alone(
            &mut e,
            &[
                ("position", &grid()),
                ("ROIposition", &pts),
                ("ROItriangles", &open.join(" ")),
            ],
        );
        assert_eq!(n, 1, "the open surface is reported");
        // an index beyond the ROI points, and an element beyond the points
        let mut e = MeshRoi::new(3);
        let n = init_alone(
            &mut e,
            &[
                ("position", &grid()),
                ("ROIposition", &pts),
                ("ROItriangles", &format!("{tris} 0 1 99")),
                ("edges", "0 1 0 500"),
            ],
        );
        assert_eq!(n, 2);
        assert_eq!(
            e.data.ints("indices").len(),
            8,
            "the valid triangles still select"
        );
        assert_eq!(e.data.ints("edgeOutIndices"), &[0]);
        // no ROI triangles at all
        let mut e = MeshRoi::new(3);
        let n = init_alone(&mut e, &[("position", &grid()), ("ROIposition", &pts)]);
        assert_eq!(n, 1, "no ROI triangles");
        assert!(e.data.ints("indices").is_empty());
        // no positions at all
        let mut e = MeshRoi::new(3);
        let n = init_alone(&mut e, &[("ROIposition", &pts), ("ROItriangles", &tris)]);
        assert_eq!(n, 1);
        assert!(e.data.ints("indices").is_empty());
    }

    #[test]
    fn do_update_off_keeps_the_first_selection() {
        let (pts, tris) = cube([0.31, 0.27, 0.23], [2.71, 2.63, 2.59]);
        let mut e = MeshRoi::new(3);
        let attrs = [
            ("position", grid()),
            ("ROIposition", pts.clone()),
            ("ROItriangles", tris.clone()),
            ("doUpdate", "0".to_string()),
        ];
        let attrs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        init_alone(&mut e, &attrs);
        assert_eq!(e.data.ints("indices").len(), 8);
        init_alone(&mut e, &[("computeMeshROI", "0")]);
        assert_eq!(e.data.ints("indices").len(), 8);
        init_alone(&mut e, &[("doUpdate", "1")]);
        assert_eq!(e.data.ints("indices").len(), 125);
    }

    #[test]
    fn rigid_coordinates_use_their_position_part() {
        let (pts, tris) = cube([0.5, 0.5, 0.5], [1.5, 1.5, 1.5]);
        let rpts: Vec<String> = pts
            .split_whitespace()
            .collect::<Vec<_>>()
            .chunks(3)
            .map(|c| format!("{} {} {} 0 0 0 1", c[0], c[1], c[2]))
            .collect();
        let mut e = MeshRoi::new(7);
        let n = init_alone(
            &mut e,
            &[
                ("position", "1.1 0.9 1.2 0 0 0 1  3 0 0 0 0 0 1"),
                ("ROIposition", &rpts.join(" ")),
                ("ROItriangles", &tris),
            ],
        );
        assert_eq!(n, 0);
        assert_eq!(e.data.ints("indices"), &[0]);
        assert_eq!(
            e.data.reals("pointsInROI"),
            &[1.1, 0.9, 1.2, 0.0, 0.0, 0.0, 1.0]
        );
    }
}
