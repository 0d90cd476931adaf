//! GenerateCylinder (Sofa/Component/Engine/Generate/src/sofa/component/engine/generate/
//! GenerateCylinder.inl): a tetrahedral cylinder along z from `origin`, and the triangulated
//! surface of the same cylinder, open or closed at its ends.
//!
//! The volume mesh has `resHeight` layers of points, z = i·height/(resHeight − 1); each layer
//! holds its centre, then `resRadial` rings (ring j at radius j·radius/resRadial) of
//! `resCircumferential` points (angle 2πk/resCircumferential). Between two layers, each sector
//! of the innermost ring is a prism cut into 3 tetrahedra and each sector between two rings a
//! hexahedron cut into 6, layer by layer, the prisms of a layer before its hexahedra.
//!
//! The surface mesh has its own points: the outer ring of every layer, then, when closed,
//! each end (bottom then top) with its centre and inner rings; its triangles face outwards.
//!
//! SOFA adds Bezier control points (and their weights) to both outputs when
//! `BezierTetrahedronDegree` or `BezierTriangleDegree` is above 1; they are not generated here
//! (a warning says so). With the default degree 0 SOFA leaves those outputs empty, as here.

use super::{all_finite, count_of, product_within, MAX_ELEMENTS};
use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Flag, Int, Ints, Real, Reals, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_core::state::MAX_POINTS;
use std::f64::consts::PI;

/// The shape and resolution of a cylinder, as GenerateCylinder meshes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    pub radius: f64,
    pub height: f64,
    pub origin: [f64; 3],
    /// Points per ring (`resCircumferential`), at least 1.
    pub circ: usize,
    /// Rings per layer (`resRadial`), at least 1.
    pub radial: usize,
    /// Layers of points along z (`resHeight`), at least 2.
    pub layers: usize,
}

impl Cylinder {
    /// The angle of point `k` of a ring.
    fn angle(&self, k: usize) -> f64 {
        (2 * k) as f64 * PI / self.circ as f64
    }

    /// The height of layer `i` above the origin.
    fn layer_z(&self, i: usize) -> f64 {
        i as f64 * self.height / (self.layers - 1) as f64
    }

    /// The point at radius `r`, angle index `k` and height `z`, moved by the origin.
    fn point(&self, r: f64, k: usize, z: f64) -> [f64; 3] {
        let a = self.angle(k);
        let o = self.origin;
        [r * a.cos() + o[0], r * a.sin() + o[1], z + o[2]]
    }

    /// The centre of a layer at height `z`.
    fn centre(&self, z: f64) -> [f64; 3] {
        let o = self.origin;
        [o[0], o[1], z + o[2]]
    }

    /// Points of one layer of the volume mesh (its centre and every ring).
    fn layer_size(&self) -> usize {
        self.circ * self.radial + 1
    }

    /// The number of points of the volume mesh.
    pub fn tetra_point_count(&self) -> usize {
        self.layer_size() * self.layers
    }

    /// The number of tetrahedra: 3 per prism and 6 per hexahedron, between consecutive layers.
    pub fn tetra_count(&self) -> usize {
        3 * self.circ * (self.layers - 1) * (2 * self.radial - 1)
    }

    /// The points of the volume mesh, 3 numbers each.
    pub fn tetra_points(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(3 * self.tetra_point_count());
        for i in 0..self.layers {
            let z = self.layer_z(i);
            out.extend(self.centre(z));
            for j in 1..=self.radial {
                let r = j as f64 * self.radius / self.radial as f64;
                for k in 0..self.circ {
                    out.extend(self.point(r, k, z));
                }
            }
        }
        out
    }

    /// The tetrahedra of the volume mesh, 4 indices each.
    pub fn tetrahedra(&self) -> Vec<u32> {
        let (n, off) = (self.circ, self.layer_size());
        let mut out: Vec<u32> = Vec::with_capacity(4 * self.tetra_count());
        let mut push = |t: [usize; 4]| out.extend(t.map(|v| v as u32));
        for i in 1..self.layers {
            let centre = i * off;
            // the sectors around the axis: prisms from the centre to the first ring
            for k in 1..=n {
                let prev = if k == 1 { n } else { k - 1 };
                let (a, b, d) = (centre, centre + prev, centre + k);
                let (a2, b2, d2) = (a - off, b - off, d - off);
                push([b, a, d, a2]);
                push([b, d, b2, a2]);
                push([a2, b2, d2, d]);
            }
            // the sectors between ring j and ring j + 1: hexahedra
            for j in 1..self.radial {
                let base = centre + (j - 1) * n;
                for k in 1..=n {
                    let prev = if k == 1 { n } else { k - 1 };
                    let h = [base + k, base + prev, base + k + n, base + prev + n];
                    let l = h.map(|v| v - off);
                    push([h[0], l[1], l[0], l[3]]);
                    push([h[0], h[1], l[1], h[3]]);
                    push([l[1], h[0], h[3], l[3]]);
                    push([h[0], h[3], l[3], h[2]]);
                    push([l[3], h[0], h[2], l[0]]);
                    push([l[2], l[3], h[2], l[0]]);
                }
            }
        }
        out
    }

    /// The number of points of the surface mesh.
    pub fn surface_point_count(&self, open: bool) -> usize {
        if open {
            self.circ * self.layers
        } else {
            self.circ * (self.layers + 2 * (self.radial - 1)) + 2
        }
    }

    /// The number of triangles of the surface mesh.
    pub fn surface_triangle_count(&self, open: bool) -> usize {
        let side = 2 * self.circ * (self.layers - 1);
        if open {
            side
        } else {
            side + 2 * self.circ + 4 * (self.radial - 1) * self.circ
        }
    }

    /// The points of the surface mesh: the outer ring of every layer, then (closed) each end's
    /// centre and inner rings, the bottom end first.
    pub fn surface_points(&self, open: bool) -> Vec<f64> {
        let mut out = Vec::with_capacity(3 * self.surface_point_count(open));
        for i in 0..self.layers {
            let z = self.layer_z(i);
            for k in 0..self.circ {
                out.extend(self.point(self.radius, k, z));
            }
        }
        if !open {
            for end in 0..2 {
                let z = end as f64 * self.height;
                out.extend(self.centre(z));
                for j in 1..self.radial {
                    let r = j as f64 * self.radius / self.radial as f64;
                    for k in 0..self.circ {
                        out.extend(self.point(r, k, z));
                    }
                }
            }
        }
        out
    }

    /// The triangles of the surface mesh, facing outwards: two per quad of the side, layer by
    /// layer, then (closed, which needs 2 rings or more) for each end its fan around the
    /// centre, the quads between its rings and those between its last ring and the side.
    pub fn surface_triangles(&self, open: bool) -> Vec<u32> {
        let n = self.circ;
        let next = |k: usize| (k + 1) % n;
        let mut out: Vec<u32> = Vec::with_capacity(3 * self.surface_triangle_count(open));
        let mut push = |t: [usize; 3]| out.extend(t.map(|v| v as u32));
        for i in 1..self.layers {
            let (up, down) = (i * n, (i - 1) * n);
            for k in 0..n {
                push([up + k, down + k, down + next(k)]);
                push([up + k, down + next(k), up + next(k)]);
            }
        }
        if open || self.radial < 2 {
            return out;
        }
        for end in 0..2 {
            let top = end == 1;
            let centre = n * self.layers + end * (n * (self.radial - 1) + 1);
            let ring = |j: usize, k: usize| centre + 1 + j * n + k;
            // a triangle given counter-clockwise seen from above, turned over for the bottom
            let mut face = |a: usize, b: usize, c: usize| {
                if top {
                    push([a, b, c]);
                } else {
                    push([a, c, b]);
                }
            };
            for k in 0..n {
                face(centre, ring(0, k), ring(0, next(k)));
            }
            for j in 0..self.radial - 2 {
                for k in 0..n {
                    face(ring(j, k), ring(j + 1, k), ring(j + 1, next(k)));
                    face(ring(j, k), ring(j + 1, next(k)), ring(j, next(k)));
                }
            }
            let j = self.radial - 2;
            let side = end * (self.layers - 1) * n;
            for k in 0..n {
                face(ring(j, k), side + k, side + next(k));
                face(ring(j, k), side + next(k), ring(j, next(k)));
            }
        }
        out
    }
}

canape_core::data_schema! {
    /// GenerateCylinder's own Data (after the base Data).
    pub struct GenerateCylinderData {
        output_tetrahedra_position: Reals => ("output_TetrahedraPosition", DataKind::Reals(3), "output array of 3d points of tetrahedra mesh") alias ["position", "output_position"],
        output_triangles_position: Reals => ("output_TrianglesPosition", DataKind::Reals(3), "output array of 3d points of triangle mesh"),
        tetrahedra: Ints => ("tetrahedra", DataKind::Ints(4), "output mesh tetrahedra"),
        triangles: Ints => ("triangles", DataKind::Ints(3), "output triangular mesh"),
        bezier_triangle_weights: Reals => ("BezierTriangleWeights", DataKind::Reals(0), "weights of rational Bezier triangles"),
        is_bezier_triangle_rational: Ints => ("isBezierTriangleRational", DataKind::Ints(0), "booleans indicating if each Bezier triangle is rational or integral"),
        bezier_triangle_degree: Int = ("BezierTriangleDegree", DataKind::Int, "0", "order of Bezier triangles"),
        bezier_tetrahedron_weights: Reals => ("BezierTetrahedronWeights", DataKind::Reals(0), "weights of rational Bezier tetrahedra"),
        is_bezier_tetrahedron_rational: Ints => ("isBezierTetrahedronRational", DataKind::Ints(0), "booleans indicating if each Bezier tetrahedron is rational or integral"),
        bezier_tetrahedron_degree: Int = ("BezierTetrahedronDegree", DataKind::Int, "0", "order of Bezier tetrahedra"),
        radius: Real = ("radius", DataKind::Real, "0.2", "input cylinder radius"),
        height: Real = ("height", DataKind::Real, "1", "input cylinder height"),
        origin: Reals = ("origin", DataKind::Vector(3), "0 0 0", "cylinder origin point"),
        open_surface: Flag = ("openSurface", DataKind::Bool, "1", "if the cylinder is open at its 2 ends"),
        res_circumferential: Int = ("resCircumferential", DataKind::Int, "6", "Resolution in the circumferential direction"),
        res_radial: Int = ("resRadial", DataKind::Int, "3", "Resolution in the radial direction"),
        res_height: Int = ("resHeight", DataKind::Int, "5", "Resolution in the height direction"),
    }
}

/// GenerateCylinder: `output_TetrahedraPosition` (also `position`, `output_position`) and
/// `tetrahedra`, `output_TrianglesPosition` and `triangles`.
#[derive(Clone)]
pub struct GenerateCylinder {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: GenerateCylinderData,
}

impl Default for GenerateCylinder {
    fn default() -> Self {
        Self::new()
    }
}

impl GenerateCylinder {
    pub fn new() -> Self {
        let (data, d) = GenerateCylinderData::declare(base_data(DataTable::new()));
        GenerateCylinder { data, d }
    }

    /// The cylinder the Data describe, checked; None (reported) when nothing can be generated.
    fn cylinder(&self, ctx: &mut InitContext<'_>) -> Option<Cylinder> {
        let (t, d) = (&self.data, &self.d);
        let (radius, height) = (t.get(d.radius), t.get(d.height));
        let origin = t.get(d.origin);
        if !all_finite(&[radius, height]) || origin.len() != 3 || !all_finite(origin) {
            ctx.error(format!(
                "radius ({radius}), height ({height}) and origin ({origin:?}) must be finite numbers: nothing is generated"
            ));
            return None;
        }
        let circ = count_of(ctx, "resCircumferential", t.get(d.res_circumferential))?;
        let radial = count_of(ctx, "resRadial", t.get(d.res_radial))?;
        let layers = count_of(ctx, "resHeight", t.get(d.res_height))?;
        if circ < 1 || radial < 1 || layers < 2 {
            ctx.error(format!(
                "resCircumferential = {circ}, resRadial = {radial}, resHeight = {layers}: a cylinder needs at least 1 point per ring, 1 ring and 2 layers (SOFA divides by zero or overflows below that); nothing is generated"
            ));
            return None;
        }
        let c = Cylinder {
            radius,
            height,
            origin: [origin[0], origin[1], origin[2]],
            circ,
            radial,
            layers,
        };
        let points = product_within(&[circ, radial], MAX_POINTS)
            .and_then(|n| product_within(&[n + 1, layers], MAX_POINTS));
        let tetras = product_within(&[3, circ, layers - 1, 2 * radial - 1], MAX_ELEMENTS);
        if points.is_none() || tetras.is_none() {
            ctx.error(format!(
                "resolution {circ} × {radial} × {layers} asks for more than {MAX_POINTS} points or elements: nothing is generated"
            ));
            return None;
        }
        if circ < 3 {
            ctx.warn(format!(
                "resCircumferential = {circ}: rings of fewer than 3 points give flat elements"
            ));
        }
        if radius < 0.0 {
            ctx.warn(format!(
                "radius = {radius} is negative: the cylinder of radius {} is generated turned by half a turn about its axis, as SOFA computes it",
                -radius
            ));
        } else if radius == 0.0 {
            ctx.warn("radius = 0: every element is flat");
        }
        if height < 0.0 {
            ctx.warn(format!(
                "height = {height} is negative: the cylinder goes down from the origin and its tetrahedra are inverted"
            ));
        } else if height == 0.0 {
            ctx.warn("height = 0: every tetrahedron is flat");
        }
        Some(c)
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let d = self.d;
        // the outputs, cleared before each computation
        for r in [
            d.output_tetrahedra_position,
            d.output_triangles_position,
            d.bezier_triangle_weights,
            d.bezier_tetrahedron_weights,
        ] {
            let _ = self.data.put(r, Value::Reals(Vec::new()));
        }
        for i in [
            d.tetrahedra,
            d.triangles,
            d.is_bezier_triangle_rational,
            d.is_bezier_tetrahedron_rational,
        ] {
            let _ = self.data.put(i, Value::Ints(Vec::new()));
        }
        for (degree, h) in [
            ("BezierTriangleDegree", d.bezier_triangle_degree),
            ("BezierTetrahedronDegree", d.bezier_tetrahedron_degree),
        ] {
            let v = self.data.get(h);
            if v > 1 {
                ctx.warn(format!(
                    "{degree} = {v}: Bezier control points are not generated (only the linear mesh is)"
                ));
            }
        }
        let Some(c) = self.cylinder(ctx) else {
            return;
        };
        let _ = self.data.put(
            self.d.output_tetrahedra_position,
            Value::Reals(c.tetra_points()),
        );
        let _ = self
            .data
            .put(self.d.tetrahedra, Value::Ints(c.tetrahedra()));
        let open = self.data.get(self.d.open_surface);
        if !open && c.radial < 2 {
            ctx.error(
                "openSurface = 0 needs resRadial ≥ 2 to close the ends (SOFA's loop over the inner rings overflows with 1): no surface is generated",
            );
            return;
        }
        let _ = self.data.put(
            self.d.output_triangles_position,
            Value::Reals(c.surface_points(open)),
        );
        let _ = self
            .data
            .put(self.d.triangles, Value::Ints(c.surface_triangles(open)));
    }
}

impl_component!(GenerateCylinder, "GenerateCylinder", init);

impl Engine for GenerateCylinder {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests;
