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
use canape_core::data::{Data, DataKind, DataTable, Flag, Int, Ints, Real, Reals, Value};
use canape_core::impl_component;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_types::Vec3;

canape_core::data_schema! {
    /// MeshROI's element inputs and switches, and the indices of what is inside (after `position`).
    pub struct MeshRoiSelection {
        edges: Ints = ("edges", DataKind::Ints(2), "", "Edge Topology"),
        triangles: Ints = ("triangles", DataKind::Ints(3), "", "Triangle Topology"),
        quad: Ints = ("quad", DataKind::Ints(4), "", "Quad Topology"),
        tetrahedra: Ints = ("tetrahedra", DataKind::Ints(4), "", "Tetrahedron Topology"),
        hexahedra: Ints = ("hexahedra", DataKind::Ints(8), "", "Hexahedron Topology"),
        compute_edges: Flag = ("computeEdges", DataKind::Bool, "1", "If true, will compute edge list and index list inside the ROI. (default = true)"),
        compute_triangles: Flag = ("computeTriangles", DataKind::Bool, "1", "If true, will compute triangle list and index list inside the ROI. (default = true)"),
        compute_quad: Flag = ("computeQuad", DataKind::Bool, "1", "If true, will compute quad list and index list inside the ROI. (default = true)"),
        compute_tetrahedra: Flag = ("computeTetrahedra", DataKind::Bool, "1", "If true, will compute tetrahedra list and index list inside the ROI. (default = true)"),
        compute_hexahedra: Flag = ("computeHexahedra", DataKind::Bool, "1", "If true, will compute hexahedra list and index list inside the ROI. (default = true)"),
        strict: Flag = ("strict", DataKind::Bool, "0", "If true, an element is inside the box if all of its nodes are inside. If False, only the center point of the element is checked. (MeshROI's default: false)"),
        indices: Ints => ("indices", DataKind::Ints(0), "Indices of the points contained in the ROI"),
        edge_indices: Ints => ("edgeIndices", DataKind::Ints(0), "Indices of the edges contained in the ROI"),
        triangle_indices: Ints => ("triangleIndices", DataKind::Ints(0), "Indices of the triangles contained in the ROI"),
        quad_indices: Ints => ("quadIndices", DataKind::Ints(0), "Indices of the quad contained in the ROI"),
        tetrahedron_indices: Ints => ("tetrahedronIndices", DataKind::Ints(0), "Indices of the tetrahedra contained in the ROI"),
        hexahedron_indices: Ints => ("hexahedronIndices", DataKind::Ints(0), "Indices of the hexahedra contained in the ROI"),
    }
}

canape_core::data_schema! {
    /// MeshROI's elements inside (after `pointsInROI`).
    pub struct MeshRoiInside {
        edges_in_roi: Ints => ("edgesInROI", DataKind::Ints(2), "Edges contained in the ROI"),
        triangles_in_roi: Ints => ("trianglesInROI", DataKind::Ints(3), "Triangles contained in the ROI"),
        quad_in_roi: Ints => ("quadInROI", DataKind::Ints(4), "Quad contained in the ROI"),
        tetrahedra_in_roi: Ints => ("tetrahedraInROI", DataKind::Ints(4), "Tetrahedra contained in the ROI"),
        hexahedra_in_roi: Ints => ("hexahedraInROI", DataKind::Ints(8), "Hexahedra contained in the ROI"),
        nb_indices: Int => ("nbIndices", DataKind::Int, "Number of selected indices"),
    }
}

canape_core::data_schema! {
    /// MeshROI's elements and indices outside, its drawing options and `doUpdate` (after `pointsOutROI`).
    pub struct MeshRoiOutside {
        edges_out_roi: Ints => ("edgesOutROI", DataKind::Ints(2), "Edges not contained in the ROI"),
        triangles_out_roi: Ints => ("trianglesOutROI", DataKind::Ints(3), "Triangles not contained in the ROI"),
        tetrahedra_out_roi: Ints => ("tetrahedraOutROI", DataKind::Ints(4), "Tetrahedra not contained in the ROI"),
        indices_out: Ints => ("indicesOut", DataKind::Ints(0), "Indices of the points not contained in the ROI"),
        edge_out_indices: Ints => ("edgeOutIndices", DataKind::Ints(0), "Indices of the edges not contained in the ROI"),
        triangle_out_indices: Ints => ("triangleOutIndices", DataKind::Ints(0), "Indices of the triangles not contained in the ROI"),
        tetrahedron_out_indices: Ints => ("tetrahedronOutIndices", DataKind::Ints(0), "Indices of the tetrahedra not contained in the ROI"),
        draw_roi: Flag = ("drawROI", DataKind::Bool, "0", "Draw the ROI (default = false)"),
        draw_points: Flag = ("drawPoints", DataKind::Bool, "0", "Draw Points. (default = false)"),
        draw_edges: Flag = ("drawEdges", DataKind::Bool, "0", "Draw Edges. (default = false)"),
        draw_triangles: Flag = ("drawTriangles", DataKind::Bool, "0", "Draw Triangles. (default = false)"),
        draw_quads: Flag = ("drawQuads", DataKind::Bool, "0", "Draw Quads. (default = false)"),
        draw_tetrahedra: Flag = ("drawTetrahedra", DataKind::Bool, "0", "Draw Tetrahedra. (default = false)"),
        draw_hexahedra: Flag = ("drawHexahedra", DataKind::Bool, "0", "Draw Tetrahedra. (default = false)"),
        draw_size: Real = ("drawSize", DataKind::Real, "1", "rendering size for ROI and topological elements"),
        do_update: Flag = ("doUpdate", DataKind::Bool, "1", "If true, updates the selection at the beginning of simulation steps. (default = true)"),
    }
}

canape_core::data_schema! {
    /// MeshROI's ROI mesh and bounding box (after `ROIposition`).
    pub struct MeshRoiSurface {
        roi_edges: Ints = ("ROIedges", DataKind::Ints(2), "", "ROI Edge Topology"),
        roi_triangles: Ints = ("ROItriangles", DataKind::Ints(3), "", "ROI Triangle Topology"),
        compute_mesh_roi: Flag = ("computeMeshROI", DataKind::Bool, "1", "Compute with the mesh (not only bounding box)"),
        box_: Reals = ("box", DataKind::Vector(6), "0 0 0 0 0 0", "Bounding box defined by xmin,ymin,zmin, xmax,ymax,zmax"),
        draw_out: Flag = ("drawOut", DataKind::Bool, "0", "Draw the data not contained in the ROI"),
        draw_box: Flag = ("drawBox", DataKind::Bool, "0", "Draw the Bounding box around the mesh used for the ROI"),
    }
}

/// MeshROI's Data: the four lists of coordinates (their width is the template's, so they are
/// declared apart) and the schemas between them, in the table's order.
#[derive(Clone, Copy, Debug)]
pub struct MeshRoiData {
    pub position: Data<Reals>,
    pub sel: MeshRoiSelection,
    pub points_in_roi: Data<Reals>,
    pub inside: MeshRoiInside,
    pub points_out_roi: Data<Reals>,
    pub outside: MeshRoiOutside,
    pub roi_position: Data<Reals>,
    pub roi: MeshRoiSurface,
}

impl MeshRoiData {
    /// Add MeshROI's Data for coordinates of `w` scalars to `table`.
    fn declare(table: DataTable, w: usize) -> (DataTable, Self) {
        let (t, position) = table.declare::<Reals>(
            "position",
            DataKind::Reals(w),
            "",
            "Rest position coordinates of the degrees of freedom. If empty the positions from a MechanicalObject then a MeshLoader are searched in the current context. If none are found the parent's context is searched for MechanicalObject.",
        );
        let (t, sel) = MeshRoiSelection::declare(t);
        let (t, points_in_roi) = t.declare_output::<Reals>(
            "pointsInROI",
            DataKind::Reals(w),
            "Points contained in the ROI",
        );
        let (t, inside) = MeshRoiInside::declare(t);
        let (t, points_out_roi) = t.declare_output::<Reals>(
            "pointsOutROI",
            DataKind::Reals(w),
            "Points not contained in the ROI",
        );
        let (t, outside) = MeshRoiOutside::declare(t);
        let (t, roi_position) = t.declare::<Reals>(
            "ROIposition",
            DataKind::Reals(w),
            "",
            "ROI position coordinates of the degrees of freedom",
        );
        let (t, roi) = MeshRoiSurface::declare(t);
        (
            t,
            MeshRoiData {
                position,
                sel,
                points_in_roi,
                inside,
                points_out_roi,
                outside,
                roi_position,
                roi,
            },
        )
    }

    /// The kinds of element MeshROI sorts, in order.
    fn kinds(&self) -> [ElementKind; 5] {
        let (s, i, o) = (&self.sel, &self.inside, &self.outside);
        [
            ElementKind {
                input: s.edges,
                compute: s.compute_edges,
                size: 2,
                indices: s.edge_indices,
                in_roi: i.edges_in_roi,
                out_indices: Some(o.edge_out_indices),
                out_roi: Some(o.edges_out_roi),
                from_mesh: |m| canape_core::mesh::flatten(&m.edges),
            },
            ElementKind {
                input: s.triangles,
                compute: s.compute_triangles,
                size: 3,
                indices: s.triangle_indices,
                in_roi: i.triangles_in_roi,
                out_indices: Some(o.triangle_out_indices),
                out_roi: Some(o.triangles_out_roi),
                from_mesh: |m| canape_core::mesh::flatten(&m.triangles),
            },
            ElementKind {
                input: s.quad,
                compute: s.compute_quad,
                size: 4,
                indices: s.quad_indices,
                in_roi: i.quad_in_roi,
                out_indices: None,
                out_roi: None,
                from_mesh: |m| canape_core::mesh::flatten(&m.quads),
            },
            ElementKind {
                input: s.tetrahedra,
                compute: s.compute_tetrahedra,
                size: 4,
                indices: s.tetrahedron_indices,
                in_roi: i.tetrahedra_in_roi,
                out_indices: Some(o.tetrahedron_out_indices),
                out_roi: Some(o.tetrahedra_out_roi),
                from_mesh: |m| canape_core::mesh::flatten(&m.tetrahedra),
            },
            ElementKind {
                input: s.hexahedra,
                compute: s.compute_hexahedra,
                size: 8,
                indices: s.hexahedron_indices,
                in_roi: i.hexahedra_in_roi,
                out_indices: None,
                out_roi: None,
                from_mesh: |m| canape_core::mesh::flatten(&m.hexahedra),
            },
        ]
    }
}

/// One kind of element MeshROI sorts: its input Data, the flag that enables it, its size and
/// its outputs (SOFA names no "out" lists for quads and hexahedra).
struct ElementKind {
    input: Data<Ints>,
    compute: Data<Flag>,
    size: usize,
    indices: Data<Ints>,
    in_roi: Data<Ints>,
    out_indices: Option<Data<Ints>>,
    out_roi: Option<Data<Ints>>,
    from_mesh: fn(&Mesh) -> Vec<u32>,
}

/// MeshROI: outputs `indices`, `pointsInROI`, `indicesOut`, `pointsOutROI`, `nbIndices`, the
/// elements inside and outside, and `box`, the ROI mesh's bounding box.
#[derive(Clone)]
pub struct MeshRoi {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: MeshRoiData,
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
        let (data, d) = MeshRoiData::declare(base_data(DataTable::new()), width);
        MeshRoi {
            data,
            d,
            width,
            computed: false,
        }
    }

    /// The points to select among: `position`, else the rest positions of the node's state,
    /// else its loader's positions, else the rest positions of a state further up (SOFA's
    /// order). None (reported) without any.
    fn points(&self, ctx: &mut InitContext<'_>) -> Option<Vec<f64>> {
        if self.data.was_set(self.d.position) {
            return Some(self.data.get(self.d.position).to_vec());
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
        if self.data.was_set(self.d.roi_position) {
            return self.data.get(self.d.roi_position).to_vec();
        }
        ctx.warn(
            "Data 'ROIposition' is not set: the rest positions of this node's MechanicalObject (or its mesh loader's positions) are used",
        );
        match local_rest_positions(ctx, self.width) {
            Ok(p) => p.unwrap_or_default(),
            Err(e) => {
                ctx.error(e.to_string());
                Vec::new()
            }
        }
    }

    /// Element list `input` (flat): the Data when set, else (when `compute` is on) the list of
    /// the node's own topology.
    fn elements(&self, mesh: Option<&Mesh>, kind: &ElementKind) -> Vec<u32> {
        if self.data.was_set(kind.input) {
            return self.data.get(kind.input).to_vec();
        }
        if !self.data.get(kind.compute) {
            return Vec::new();
        }
        mesh.map(kind.from_mesh).unwrap_or_default()
    }

    /// Clear every output (an invalid or empty input selects nothing).
    fn clear_outputs(&mut self) {
        let d = self.d;
        for h in [d.sel.indices, d.outside.indices_out] {
            let _ = self.data.put(h, Value::Ints(Vec::new()));
        }
        for h in [d.points_in_roi, d.points_out_roi] {
            let _ = self.data.put(h, Value::Reals(Vec::new()));
        }
        for k in &d.kinds() {
            let _ = self.data.put(k.indices, Value::Ints(Vec::new()));
            let _ = self.data.put(k.in_roi, Value::Ints(Vec::new()));
            for h in [k.out_indices, k.out_roi].into_iter().flatten() {
                let _ = self.data.put(h, Value::Ints(Vec::new()));
            }
        }
        let _ = self.data.put(d.inside.nb_indices, Value::Int(0));
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        // SOFA selects once at init whatever `doUpdate` says, and later only with it on
        if self.computed && !self.data.get(self.d.outside.do_update) {
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
                let b = self.data.get(self.d.roi.box_);
                let b: [f64; 6] = std::array::from_fn(|k| b.get(k).copied().unwrap_or(0.0));
                (Vec3::new(b[0], b[1], b[2]), Vec3::new(b[3], b[4], b[5]))
            }
        };
        let (min, max) = (min.inf(&max), max.sup(&min));
        let _ = self.data.put(
            self.d.roi.box_,
            Value::Reals(vec![min.x, min.y, min.z, max.x, max.y, max.z]),
        );
        // the ROI triangles: given, else the node's own topology's (ROIedges are only drawn)
        let mesh = local_mesh(ctx);
        let roi_tris_flat: Vec<u32> = if self.data.was_set(self.d.roi.roi_triangles) {
            self.data.get(self.d.roi.roi_triangles).to_vec()
        } else if self.data.get(self.d.sel.compute_triangles) {
            mesh.map(|m| canape_core::mesh::flatten(&m.triangles))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let mesh_roi = self.data.get(self.d.roi.compute_mesh_roi);
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
        let d = self.d;
        let _ = self.data.put(d.sel.indices, Value::Ints(idx));
        let _ = self.data.put(d.outside.indices_out, Value::Ints(out));
        let _ = self.data.put(d.points_in_roi, Value::Reals(pin));
        let _ = self.data.put(d.points_out_roi, Value::Reals(pout));
        let _ = self.data.put(d.inside.nb_indices, Value::Int(nb));

        // the elements
        let strict = self.data.get(d.sel.strict);
        for kind in &d.kinds() {
            if !self.data.get(kind.compute) {
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
                    self.data.fields()[kind.input.index()].name
                ));
            }
            let _ = self.data.put(kind.indices, Value::Ints(ids));
            let _ = self.data.put(kind.in_roi, Value::Ints(ins));
            if let Some(h) = kind.out_indices {
                let _ = self.data.put(h, Value::Ints(out_ids));
            }
            if let Some(h) = kind.out_roi {
                let _ = self.data.put(h, Value::Ints(outs));
            }
        }
    }
}

impl_component!(MeshRoi, "MeshROI", init);

impl Engine for MeshRoi {}

#[cfg(test)]
mod tests;
