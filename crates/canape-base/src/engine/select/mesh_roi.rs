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

mod surface;

pub use surface::{bounding_box, open_edges, RoiSurface};

use super::{all_finite, cpos, local_mesh, local_rest_positions, state_rest_positions};
use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Value};
use canape_core::impl_component;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_types::Vec3;

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
mod tests;
