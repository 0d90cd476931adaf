//! MeshTetraStuffing (Sofa/Component/Engine/Generate/.../MeshTetraStuffing.cpp): a tetrahedral
//! volume mesh from a closed surface by isosurface stuffing (F. Labelle and J.R. Shewchuk,
//! SIGGRAPH 2007). A body-centred cubic lattice covers the surface's box; the lattice points are
//! classified inside or outside by votes of rays cast along the lattice lines; optionally, points
//! too close to the surface are snapped onto it and the lattice tetrahedra crossing it are cut;
//! the tetrahedra with an inside vertex are kept and the unused points dropped.
//!
//! SOFA's formulation is followed step by step, quirks included (see the comments citing
//! MeshTetraStuffing.cpp), and its ray–triangle test (sofa/geometry/Triangle.h `rayIntersection`)
//! is reproduced operation by operation. One known difference: SOFA's octree returns the hits of
//! a ray in traversal order before sorting them by distance, where the triangles here are tested
//! in index order; the two only disagree on hits at exactly equal distances with opposite
//! orientations (a ray grazing an edge of the surface).
//!
//! This file holds the parameters, the driver ([`stuff`]) and the component; the vector helpers
//! and the ray–triangle test are in `geometry`, the lattice in `lattice`, the inside/outside
//! classification and the snapping in `classify`, and the tetrahedra's construction in
//! `builder`.

mod builder;
mod classify;
mod geometry;
mod lattice;

use builder::{check_final, Builder};
use classify::{classify, snap};
use geometry::{sub, towards};
use lattice::Lattice;

use std::collections::BTreeMap;

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Flag, Ints, Real, Reals, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;

type P3 = [f64; 3];

/// Lattice directions around a point: 6 long edges (same grid), then 8 short ones (other grid).
const EDGESHELL: usize = 14;
/// SOFA's TriangleOctree only holds triangles whose box lies in [−800, 800]³ (`CUBE_SIZE`):
/// the others are never hit by a ray.
const OCTREE_HALF_SIZE: f64 = 800.0;
/// Largest lattice (both grids) built: a guard against a cell size far below the surface's size.
const MAX_LATTICE_POINTS: usize = 1 << 23;
/// Diagnostics of one kind reported one by one before they are only counted.
const MAX_REPORTED: usize = 10;

/// The parameters of the stuffing (the Data of the same names).
#[derive(Clone, Debug)]
pub struct StuffingParams {
    /// The box to mesh; replaced by the input's box grown by 1 % when its x range is empty.
    pub vbbox: [P3; 2],
    /// The cell size, or when negative the number of cells along the box's largest side.
    pub size: f64,
    pub alpha_long: f64,
    pub alpha_short: f64,
    pub snap_points: bool,
    pub split_tetrahedra: bool,
}

impl Default for StuffingParams {
    /// SOFA's defaults.
    fn default() -> Self {
        StuffingParams {
            vbbox: [[0.0; 3]; 2],
            size: -8.0,
            alpha_long: 0.24999,
            alpha_short: 0.42978,
            snap_points: false,
            split_tetrahedra: false,
        }
    }
}

/// What the stuffing produced, with the problems SOFA reports along the way (none of them stops
/// it).
#[derive(Clone, Debug, Default)]
pub struct Stuffing {
    /// The box actually meshed (written back to `vbbox`).
    pub bbox: [P3; 2],
    pub points: Vec<P3>,
    /// Positively oriented tetrahedra.
    pub tetrahedra: Vec<[u32; 4]>,
    pub warnings: Vec<String>,
}

/// Collects messages, reporting only the first few of each kind.
#[derive(Default)]
struct Notes {
    kinds: BTreeMap<&'static str, usize>,
    messages: Vec<String>,
}

impl Notes {
    fn push(&mut self, kind: &'static str, message: impl FnOnce() -> String) {
        let n = self.kinds.entry(kind).or_insert(0);
        *n += 1;
        if *n <= MAX_REPORTED {
            self.messages.push(message());
        }
    }

    fn finish(mut self) -> Vec<String> {
        for (kind, n) in &self.kinds {
            if *n > MAX_REPORTED {
                self.messages.push(format!(
                    "{kind}: {n} occurrences in all (the first {MAX_REPORTED} shown)"
                ));
            }
        }
        self.messages
    }
}

/// Why MeshTetraStuffing builds no volume mesh: an empty or inconsistent input, a degenerate
/// cell size or box, or a lattice too large.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StuffingError {
    #[error(
        "Empty input mesh. Use data dependency to link them to a loaded Topology or MeshLoader"
    )]
    EmptyInput,
    #[error("input point {index} is not finite: {point:?}")]
    NonFinitePoint { index: usize, point: [f64; 3] },
    #[error("input triangle {triangle} uses point {point}, but there are {points} input points")]
    TriangleBeyondPoints {
        triangle: usize,
        point: u32,
        points: usize,
    },
    #[error("input quad {quad} uses point {point}, but there are {points} input points")]
    QuadBeyondPoints {
        quad: usize,
        point: u32,
        points: usize,
    },
    #[error("size must be a non-zero number (the cell size, or minus the number of cells along the box's largest side), not {size}")]
    BadSize { size: f64 },
    #[error("vbbox is not finite: {bbox:?}")]
    NonFiniteBox { bbox: [[f64; 3]; 2] },
    #[error("degenerate cell size {cellsize} (size {size}, box {lo:?}–{hi:?}): the surface has no extent")]
    DegenerateCellSize {
        cellsize: f64,
        size: f64,
        lo: [f64; 3],
        hi: [f64; 3],
    },
    #[error("the cell size {cellsize} is too small for the box {lo:?}–{hi:?}: the lattice would be too large")]
    CellTooSmall {
        cellsize: f64,
        lo: [f64; 3],
        hi: [f64; 3],
    },
    #[error("vbbox is inverted along axis {axis} ({lo} > {hi}): no lattice")]
    InvertedBox { axis: usize, lo: f64, hi: f64 },
    #[error("the cell size {cellsize} gives a lattice of {points} points (more than {max}): use a larger size")]
    TooManyPoints {
        cellsize: f64,
        points: usize,
        max: usize,
    },
}

/// Build the volume mesh of the closed surface (`points`, `triangles` and `quads`, the quads
/// split into (0,1,2), (0,2,3) after the triangles). Err (with the reason) on an empty or
/// inconsistent input or a degenerate cell size.
pub fn stuff(
    points: &[P3],
    triangles: &[[u32; 3]],
    quads: &[[u32; 4]],
    params: &StuffingParams,
) -> Result<Stuffing, StuffingError> {
    if points.is_empty() || (triangles.is_empty() && quads.is_empty()) {
        return Err(StuffingError::EmptyInput);
    }
    let n = points.len();
    if let Some(i) = points.iter().position(|p| p.iter().any(|c| !c.is_finite())) {
        return Err(StuffingError::NonFinitePoint {
            index: i,
            point: points[i],
        });
    }
    let mut tris: Vec<[usize; 3]> = Vec::with_capacity(triangles.len() + 2 * quads.len());
    for (k, t) in triangles.iter().enumerate() {
        if let Some(&i) = t.iter().find(|&&i| i as usize >= n) {
            return Err(StuffingError::TriangleBeyondPoints {
                triangle: k,
                point: i,
                points: n,
            });
        }
        tris.push(t.map(|i| i as usize));
    }
    for (k, q) in quads.iter().enumerate() {
        if let Some(&i) = q.iter().find(|&&i| i as usize >= n) {
            return Err(StuffingError::QuadBeyondPoints {
                quad: k,
                point: i,
                points: n,
            });
        }
        let q = q.map(|i| i as usize);
        tris.push([q[0], q[1], q[2]]);
        tris.push([q[0], q[2], q[3]]);
    }
    if !params.size.is_finite() || params.size == 0.0 {
        return Err(StuffingError::BadSize { size: params.size });
    }

    // the input's box (every point counts, used or not; SOFA's else-if is kept)
    let mut lo = points[0];
    let mut hi = points[0];
    for p in &points[1..] {
        for c in 0..3 {
            if p[c] < lo[c] {
                lo[c] = p[c];
            } else if p[c] > hi[c] {
                hi[c] = p[c];
            }
        }
    }
    let mut bb = params.vbbox;
    // only the x range decides whether the given box is used
    if bb[0][0] >= bb[1][0] {
        for c in 0..3 {
            bb[0][c] = lo[c] - (hi[c] - lo[c]) * 0.01;
            bb[1][c] = hi[c] + (hi[c] - lo[c]) * 0.01;
        }
    }
    if bb.iter().flatten().any(|c| !c.is_finite()) {
        return Err(StuffingError::NonFiniteBox { bbox: bb });
    }
    let mut cellsize = params.size;
    if cellsize < 0.0 {
        let b = sub(bb[1], bb[0]);
        let mut bsize = b[0];
        if b[1] > bsize {
            bsize = b[1];
        }
        if b[2] > bsize {
            bsize = b[2];
        }
        cellsize = bsize / -cellsize;
    }
    if !(cellsize > 0.0 && cellsize.is_finite()) {
        return Err(StuffingError::DegenerateCellSize {
            cellsize,
            size: params.size,
            lo: bb[0],
            hi: bb[1],
        });
    }
    let lattice = Lattice::around(&bb, cellsize)?;

    let mut notes = Notes::default();
    let mut out = lattice.positions();
    let nbp = out.len();
    let (mut inside, mut dist) = classify(&lattice, &out, points, &tris);
    if params.snap_points {
        snap(
            &lattice,
            params,
            &mut out,
            &mut inside,
            &mut dist,
            &mut notes,
        );
    }

    // cut points on every lattice edge from an outside point to an inside one, numbered by
    // (outside point, direction)
    let mut split_points = BTreeMap::new();
    if params.split_tetrahedra {
        for p in 0..nbp {
            if inside[p] >= 0 {
                continue;
            }
            for e in 0..EDGESHELL {
                let Some(p2) = lattice.nb(p, e) else { continue };
                if inside[p2] <= 0 {
                    continue;
                }
                split_points.insert((p, p2), out.len());
                out.push(towards(out[p], out[p2], dist[p][e]));
            }
        }
    }

    let mut builder = Builder {
        ph0: lattice.ph0,
        split: params.split_tetrahedra,
        points: out,
        inside,
        split_points,
        tetrahedra: Vec::new(),
        notes,
    };
    builder.lattice_tetrahedra(&lattice);
    let Builder {
        points: out,
        tetrahedra,
        mut notes,
        ..
    } = builder;

    // drop the unused points, keeping the order
    let mut new_id: Vec<Option<u32>> = vec![None; out.len()];
    let mut used = vec![false; out.len()];
    for t in &tetrahedra {
        for &v in t {
            used[v] = true;
        }
    }
    let mut final_points = Vec::new();
    for (p, u) in used.iter().enumerate() {
        if *u {
            new_id[p] = Some(final_points.len() as u32);
            final_points.push(out[p]);
        }
    }
    let mut final_tetrahedra: Vec<[u32; 4]> = tetrahedra
        .iter()
        .map(|t| t.map(|v| new_id[v].unwrap_or(0)))
        .collect();
    check_final(&final_points, &mut final_tetrahedra, &mut notes);

    Ok(Stuffing {
        bbox: bb,
        points: final_points,
        tetrahedra: final_tetrahedra,
        warnings: notes.finish(),
    })
}

canape_core::data_schema! {
    /// MeshTetraStuffing's own Data (after the base Data).
    pub struct MeshTetraStuffingData {
        vbbox: Reals = ("vbbox", DataKind::Vector(6), "0 0 0 0 0 0", "BBox to restrict the volume to"),
        size: Real = ("size", DataKind::Real, "-8", "Size of the generate tetrahedra. If negative, number of grid cells in the largest bbox dimension"),
        input_points: Reals = ("inputPoints", DataKind::Reals(3), "", "Input surface mesh points"),
        input_triangles: Ints = ("inputTriangles", DataKind::Ints(3), "", "Input surface mesh triangles"),
        input_quads: Ints = ("inputQuads", DataKind::Ints(4), "", "Input surface mesh quads"),
        output_points: Reals => ("outputPoints", DataKind::Reals(3), "Output volume mesh points"),
        output_tetrahedra: Ints => ("outputTetrahedra", DataKind::Ints(4), "Output volume mesh tetrahedra") alias ["outputTetras"],
        alpha_long: Real = ("alphaLong", DataKind::Real, "0.24999", "Minimum alpha values on long edges when snapping points"),
        alpha_short: Real = ("alphaShort", DataKind::Real, "0.42978", "Minimum alpha values on short edges when snapping points"),
        snap_points: Flag = ("snapPoints", DataKind::Bool, "0", "Snap points to the surface if intersections on edges are closed to given alpha values"),
        split_tetrahedra: Flag = ("splitTetrahedra", DataKind::Bool, "0", "Split tetrahedra crossing the surface") alias ["splitTetras"],
        draw: Flag = ("draw", DataKind::Bool, "0", "Activate rendering of internal datasets"),
    }
}

/// SOFA's MeshTetraStuffing: computes its outputs once, at init (SOFA registers no outputs, so
/// the engine is never updated afterwards), and writes the box it used back to `vbbox`. `draw`
/// (SOFA's debug drawing of rays, hits and snapped points) is accepted and not drawn.
#[derive(Clone)]
pub struct MeshTetraStuffing {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: MeshTetraStuffingData,
}

impl Default for MeshTetraStuffing {
    fn default() -> Self {
        Self::new()
    }
}

impl MeshTetraStuffing {
    pub fn new() -> Self {
        let (data, d) = MeshTetraStuffingData::declare(base_data(DataTable::new()));
        MeshTetraStuffing { data, d }
    }

    fn params(&self) -> StuffingParams {
        let (t, d) = (&self.data, &self.d);
        let b = t.get(d.vbbox);
        let vbbox = if b.len() == 6 {
            [[b[0], b[1], b[2]], [b[3], b[4], b[5]]]
        } else {
            [[0.0; 3]; 2]
        };
        StuffingParams {
            vbbox,
            size: t.get(d.size),
            alpha_long: t.get(d.alpha_long),
            alpha_short: t.get(d.alpha_short),
            snap_points: t.get(d.snap_points),
            split_tetrahedra: t.get(d.split_tetrahedra),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let (t, d) = (&self.data, &self.d);
        let points: Vec<P3> = t
            .get(d.input_points)
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        let triangles: Vec<[u32; 3]> = t
            .get(d.input_triangles)
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        let quads: Vec<[u32; 4]> = t
            .get(d.input_quads)
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect();
        let result = match stuff(&points, &triangles, &quads, &self.params()) {
            Ok(r) => r,
            Err(e) => {
                ctx.error(e.to_string());
                return;
            }
        };
        for w in &result.warnings {
            ctx.warn(w.clone());
        }
        if result.tetrahedra.is_empty() {
            ctx.warn("no tetrahedron: the surface encloses no lattice point (is it closed? try a smaller size)");
        }
        let bbox: Vec<f64> = result.bbox.iter().flatten().copied().collect();
        let points: Vec<f64> = result.points.iter().flatten().copied().collect();
        let tetrahedra: Vec<u32> = result.tetrahedra.iter().flatten().copied().collect();
        let _ = self.data.put(self.d.vbbox, Value::Reals(bbox));
        let _ = self.data.put(self.d.output_points, Value::Reals(points));
        let _ = self
            .data
            .put(self.d.output_tetrahedra, Value::Ints(tetrahedra));
    }
}

impl_component!(MeshTetraStuffing, "MeshTetraStuffing", init);

impl Engine for MeshTetraStuffing {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests;
