//! What SOFA's edge-based triangle force fields share (TriangularBiquadraticSpringsForceField,
//! TriangularQuadraticSpringsForceField, TriangularTensorMassForceField): the edges of a
//! triangle set in SOFA's TriangleSetTopologyContainer order with the edges of each triangle,
//! the two-dimensional Lamé coefficients these classes derive from (E, ν), the rest triangle's
//! area and cotangents by Heron's formula, and the init checks they report through
//! [`InitContext`].

use crate::common::fem_inputs;
use canape_core::data::DataTable;
use canape_core::mesh::Mesh;
use canape_core::scene::InitContext;
use canape_types::Vec3;

/// Why a triangle set cannot be seen through its edges.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EdgeTrianglesError {
    /// A side of a triangle missing from the topology's explicit edge list.
    #[error("triangle {triangle}'s side ({a}, {b}) is not among the topology's edges")]
    SideNotAnEdge { triangle: usize, a: usize, b: usize },
}

/// A triangle set seen through its edges.
#[derive(Clone, Debug, Default)]
pub struct EdgeTriangles {
    pub triangles: Vec<[usize; 3]>,
    /// The container's edges: those given with the topology, else built as SOFA's
    /// TriangleSetTopologyContainer does (triangle by triangle, edge j of a triangle opposite
    /// its vertex j, first occurrence kept, smaller index first).
    pub edges: Vec<[usize; 2]>,
    /// SOFA's getEdgesInTriangle: entry j is the edge opposite vertex j.
    pub edges_in_triangle: Vec<[usize; 3]>,
    /// One more than the largest point index (0 without triangles).
    pub nb_points: usize,
}

impl EdgeTriangles {
    /// The edges of `mesh`'s triangles; an error names a triangle side missing from the
    /// topology's explicit edge list.
    pub fn new(mesh: &Mesh) -> Result<Self, EdgeTrianglesError> {
        let triangles: Vec<[usize; 3]> = mesh
            .triangles
            .iter()
            .map(|t| t.map(|i| i as usize))
            .collect();
        let mut index = std::collections::BTreeMap::new();
        let mut edges = Vec::new();
        if mesh.edges.is_empty() {
            for t in &triangles {
                for j in 0..3 {
                    let (a, b) = (t[(j + 1) % 3], t[(j + 2) % 3]);
                    let key = [a.min(b), a.max(b)];
                    index.entry(key).or_insert_with(|| {
                        edges.push(key);
                        edges.len() - 1
                    });
                }
            }
        } else {
            for (k, e) in mesh.edges.iter().enumerate() {
                let e = e.map(|i| i as usize);
                edges.push(e);
                index.entry([e[0].min(e[1]), e[0].max(e[1])]).or_insert(k);
            }
        }
        let mut edges_in_triangle = Vec::with_capacity(triangles.len());
        for (ti, t) in triangles.iter().enumerate() {
            let mut te = [0; 3];
            for (j, slot) in te.iter_mut().enumerate() {
                let (a, b) = (t[(j + 1) % 3], t[(j + 2) % 3]);
                *slot = *index
                    .get(&[a.min(b), a.max(b)])
                    .ok_or(EdgeTrianglesError::SideNotAnEdge { triangle: ti, a, b })?;
            }
            edges_in_triangle.push(te);
        }
        let nb_points = triangles
            .iter()
            .flatten()
            .chain(edges.iter().flatten())
            .max()
            .map_or(0, |m| m + 1);
        Ok(EdgeTriangles {
            triangles,
            edges,
            edges_in_triangle,
            nb_points,
        })
    }
}

/// SOFA's updateLameCoefficients of these classes: λ = Eν/(1−ν²), μ = E(1−ν)/(1−ν²).
pub fn lame_2d(young: f64, nu: f64) -> (f64, f64) {
    let d = 1.0 - nu * nu;
    (young * nu / d, young * (1.0 - nu) / d)
}

/// Rest area (Heron's formula on the squared side lengths, as SOFA writes it) and the
/// cotangents of the three angles; `sq[j]` is the squared length of the side opposite vertex j.
pub fn heron(sq: [f64; 3]) -> (f64, [f64; 3]) {
    let mut area = 0.0;
    for j in 0..3 {
        area += sq[j] * (sq[(j + 1) % 3] + sq[(j + 2) % 3] - sq[j]);
    }
    let area = area.sqrt() / 4.0;
    let cot = std::array::from_fn(|j| (sq[(j + 1) % 3] + sq[(j + 2) % 3] - sq[j]) / (4.0 * area));
    (area, cot)
}

/// The 2D material check: E finite and non-negative, ν in (−1, 1) where the plane Lamé
/// coefficients above are finite and the law positive (these membranes are two-dimensional:
/// ν up to 1 is admissible, SOFA's examples use 0.9).
pub fn check_material_2d(young: f64, nu: f64) -> Option<String> {
    if !(nu > -1.0 && nu < 1.0) {
        return Some(format!(
            "poissonRatio {nu} is outside (-1, 1): the membrane's Lamé coefficients Eν/(1−ν²), \
             E(1−ν)/(1−ν²) are undefined or not positive"
        ));
    }
    if !young.is_finite() || young < 0.0 {
        return Some(format!(
            "youngModulus {young} must be a finite non-negative number"
        ));
    }
    None
}

/// The init shared by these force fields: the material check, then the rest positions (the
/// state's rest positions, as SOFA reads them: `initialPoints` does not change the rest shape)
/// and the triangle topology (the `topology` link or the context's), then the rest areas, which
/// must be positive. `None` after reporting an error.
pub fn init_inputs(
    ctx: &mut InitContext<'_>,
    data: &DataTable,
    young: f64,
    nu: f64,
) -> Option<(Vec<[f64; 3]>, EdgeTriangles)> {
    if let Some(m) = check_material_2d(young, nu) {
        ctx.error(m);
        return None;
    }
    let (_, mesh) = fem_inputs(ctx, data, |m| !m.triangles.is_empty(), "triangles")?;
    let rest: Vec<[f64; 3]> = {
        let st = ctx.state()?;
        let r = st.vec(canape_core::state::VecId::REST_POSITION);
        r.as_chunks::<3>().0.to_vec()
    };
    let topo = match EdgeTriangles::new(&mesh) {
        Ok(t) => t,
        Err(e) => {
            ctx.error(e.to_string());
            return None;
        }
    };
    if topo.nb_points > rest.len() {
        ctx.error(format!(
            "the topology uses point {}, but the state has {} points",
            topo.nb_points - 1,
            rest.len()
        ));
        return None;
    }
    let flat = topo
        .triangles
        .iter()
        .filter(|t| {
            let [a, b, c] = t.map(|i| at(&rest, i));
            let sq = [
                (b - c).norm_squared(),
                (c - a).norm_squared(),
                (a - b).norm_squared(),
            ];
            let (area, _) = heron(sq);
            !(area > 0.0 && area.is_finite())
        })
        .count();
    if flat > 0 {
        ctx.error(format!(
            "{flat} triangle(s) have no area at rest: their stiffness is undefined"
        ));
        return None;
    }
    Some((rest, topo))
}

/// Point `i` of a typed coordinate or derivative slice.
#[inline(always)]
pub fn at(a: &[[f64; 3]], i: usize) -> Vec3 {
    Vec3::from(a[i])
}

/// `a[i] += v`.
#[inline(always)]
pub fn add_at(a: &mut [[f64; 3]], i: usize, v: Vec3) {
    let p = &mut a[i];
    p[0] += v.x;
    p[1] += v.y;
    p[2] += v.z;
}

/// df += k · (M d, −Mᵀ d) for every triangle's three edge blocks M (block k belongs to the
/// edge joining the triangle's vertices k + 1 and k + 2, d = dx at the first minus dx at the
/// second): the tangent product of the spring membranes.
pub fn add_edge_block_products<'a>(
    triangles: &[[usize; 3]],
    blocks: impl Iterator<Item = &'a [canape_types::Mat3; 3]>,
    dx: &[[f64; 3]],
    df: &mut [[f64; 3]],
    k_factor: f64,
) {
    for (t, b) in triangles.iter().zip(blocks) {
        for k in 0..3 {
            let (i, j) = (t[(k + 1) % 3], t[(k + 2) % 3]);
            let d = at(dx, i) - at(dx, j);
            let m = &b[k];
            add_at(df, i, (m * d) * k_factor);
            add_at(df, j, -(m.tr_mul(&d)) * k_factor);
        }
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! A scene with one Vec3 state and a triangle topology, to run a force field's init.

    use canape_core::component::ForceField;
    use canape_core::diag::Diagnostics;
    use canape_core::mesh::Mesh;

    /// A square of 3×3 points (two triangles per cell, spacing 1, slightly irregular).
    pub fn grid() -> (Vec<f64>, Vec<[u32; 3]>) {
        let mut p = Vec::new();
        for j in 0..3 {
            for i in 0..3 {
                let w = 0.07 * ((3 * i + 5 * j) % 4) as f64;
                p.extend_from_slice(&[i as f64 + w, j as f64 - 0.5 * w, 0.1 * w]);
            }
        }
        let mut t = Vec::new();
        for j in 0..2u32 {
            for i in 0..2u32 {
                let a = i + 3 * j;
                t.push([a, a + 1, a + 4]);
                t.push([a, a + 4, a + 3]);
            }
        }
        (p, t)
    }

    /// Run `ff`'s init in a scene with `rest` as the state's positions and `triangles` as the
    /// topology; returns the diagnostics.
    pub fn init(ff: &mut dyn ForceField, rest: &[f64], triangles: &[[u32; 3]]) -> Diagnostics {
        let mesh = Mesh {
            triangles: triangles.to_vec(),
            ..Mesh::default()
        };
        crate::fd_check::init_with_mesh(ff, rest, Some(mesh))
    }
}
