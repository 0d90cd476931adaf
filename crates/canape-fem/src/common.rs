//! Shared FEM helpers: isotropic material constants, polar decomposition (SOFA's
//! helper::Decompose::polarDecomposition formulation), force-field base Data.

use canape_core::data::DataTable;
use canape_types::{Mat3, Vec3};

/// Data every SOFA force field has (ForceField base + Base).
pub use canape_core::data::force_field_fields as force_field_data;

/// Isotropic elasticity in Voigt form [εxx, εyy, εzz, γxy, γyz, γzx]:
/// `diag` = λ+2μ, `off` = λ, `shear` = μ, all multiplied by `scale`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Material {
    pub diag: f64,
    pub off: f64,
    pub shear: f64,
}

impl Material {
    /// SOFA's construction: unit-diagonal matrix with ν/(1-ν) off-diagonal and (1-2ν)/(2(1-ν))
    /// shear, times E(1-ν)/((1+ν)(1-2ν)), then divided by `div`.
    pub fn new(young: f64, nu: f64, div: f64) -> Self {
        let k = young * (1.0 - nu) / ((1.0 + nu) * (1.0 - 2.0 * nu));
        Material {
            diag: k / div,
            off: (nu / (1.0 - nu)) * k / div,
            shear: ((1.0 - 2.0 * nu) / (2.0 * (1.0 - nu))) * k / div,
        }
    }
    /// t = M s
    #[inline(always)]
    pub fn apply(&self, s: &[f64; 6]) -> [f64; 6] {
        [
            self.diag * s[0] + self.off * s[1] + self.off * s[2],
            self.off * s[0] + self.diag * s[1] + self.off * s[2],
            self.off * s[0] + self.off * s[1] + self.diag * s[2],
            self.shear * s[3],
            self.shear * s[4],
            self.shear * s[5],
        ]
    }
    pub fn matrix(&self) -> nalgebra::SMatrix<f64, 6, 6> {
        let mut m = nalgebra::SMatrix::<f64, 6, 6>::zeros();
        for i in 0..3 {
            for j in 0..3 {
                m[(i, j)] = if i == j { self.diag } else { self.off };
            }
            m[(i + 3, i + 3)] = self.shear;
        }
        m
    }
}

fn one_norm(m: &Mat3) -> f64 {
    (0..3)
        .map(|j| (0..3).map(|i| m[(i, j)].abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

fn inf_norm(m: &Mat3) -> f64 {
    (0..3)
        .map(|i| (0..3).map(|j| m[(i, j)].abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// Orthogonal factor Q of M = Q·S by the scaled Newton (Higham) iteration, as in SOFA's
/// helper/decompose.inl `polarDecomposition` (tolerance 1e-8).
pub fn polar_q(m: &Mat3) -> Mat3 {
    let tol = 1e-8;
    let mut mk = m.transpose();
    let mut m1 = one_norm(&mk);
    let mut minf = inf_norm(&mk);
    loop {
        let r0 = Vec3::new(mk[(0, 0)], mk[(0, 1)], mk[(0, 2)]);
        let r1 = Vec3::new(mk[(1, 0)], mk[(1, 1)], mk[(1, 2)]);
        let r2 = Vec3::new(mk[(2, 0)], mk[(2, 1)], mk[(2, 2)]);
        let a0 = r1.cross(&r2);
        let a1 = r2.cross(&r0);
        let a2 = r0.cross(&r1);
        let adj = Mat3::from_rows(&[a0.transpose(), a1.transpose(), a2.transpose()]);
        let det = r0.dot(&a0);
        if det == 0.0 {
            break;
        }
        let a_1 = one_norm(&adj);
        let a_inf = inf_norm(&adj);
        let gamma = (((a_1 * a_inf) / (m1 * minf)).sqrt() / det.abs()).sqrt();
        let g1 = 0.5 * gamma;
        let g2 = 0.5 / (gamma * det);
        let ek_prev = mk;
        mk = mk * g1 + adj * g2;
        let ek = ek_prev - mk;
        let e1 = one_norm(&ek);
        m1 = one_norm(&mk);
        minf = inf_norm(&mk);
        if e1 <= m1 * tol {
            break;
        }
    }
    mk.transpose()
}

/// Rotation Q = U·Vᵀ of the SVD of F, made proper (det +1) by flipping the column of the
/// smallest singular value (SOFA's polarDecomposition_stable, for inverted elements).
pub fn stable_rotation(f: &Mat3) -> Mat3 {
    let svd = nalgebra::linalg::SVD::new(*f, true, true);
    let (Some(mut u), Some(v_t)) = (svd.u, svd.v_t) else {
        return Mat3::identity();
    };
    let s = svd.singular_values;
    let mut q = u * v_t;
    if q.determinant() < 0.0 {
        let mut k = 0;
        for i in 1..3 {
            if s[i] < s[k] {
                k = i;
            }
        }
        let col = -u.column(k);
        u.set_column(k, &col);
        q = u * v_t;
    }
    q
}

/// What a FEM force field needs from its context at init: the rest positions (or `initialPoints`
/// when given) and the elements of its topology (the `topology` link, or the context's).
pub fn fem_inputs(
    ctx: &mut canape_core::scene::InitContext<'_>,
    data: &DataTable,
    has_elements: fn(&canape_core::mesh::Mesh) -> bool,
    what: &str,
) -> Option<(Vec<f64>, canape_core::mesh::Mesh)> {
    use canape_core::scene::Target;
    let mstate = data.str("mstate").trim().to_string();
    if !mstate.is_empty() {
        let ctx_state = ctx.scene.context_state(ctx.node);
        match ctx.linked(&mstate) {
            Some(Target::Component(c)) if Some(c) == ctx_state => {}
            _ => {
                ctx.error(format!("mstate='{mstate}' must name the context's MechanicalObject: force fields act on the state of their node"));
                return None;
            }
        }
    }
    let Some(st) = ctx.state() else {
        ctx.error("no MechanicalObject in the context");
        return None;
    };
    let n = st.size();
    let mut rest = st.vec(canape_core::state::VecId::REST_POSITION).to_vec();
    let ip = data.reals("initialPoints");
    if data.is_set("initialPoints") && !ip.is_empty() {
        if ip.len() == 3 * n {
            rest = ip.to_vec();
        } else {
            ctx.warn(format!(
                "initialPoints has {} values, expected {}; the rest positions are used",
                ip.len(),
                3 * n
            ));
        }
    }
    let link = data.str("topology").trim().to_string();
    let mesh = if link.is_empty() {
        match ctx.topology_where(has_elements) {
            Some(t) => t.mesh().clone(),
            None => {
                ctx.error(format!("no topology with {what} in the context"));
                return None;
            }
        }
    } else {
        match ctx.linked(&link) {
            Some(Target::Component(c)) => match ctx.scene.topology(c) {
                Some(t) if has_elements(t.mesh()) => t.mesh().clone(),
                Some(_) => {
                    ctx.error(format!("the topology '{link}' has no {what}"));
                    return None;
                }
                None => {
                    ctx.error(format!("topology='{link}' does not name a topology"));
                    return None;
                }
            },
            _ => {
                ctx.error(format!("topology='{link}' names no object"));
                return None;
            }
        }
    };
    if let Some(m) = mesh.max_index() {
        if m as usize >= n {
            ctx.error(format!(
                "the topology uses point {m}, but the state has {n} points"
            ));
            return None;
        }
    }
    Some((rest, mesh))
}

/// Check Young's modulus and Poisson's ratio values; returns a message for invalid ones.
pub fn check_material(young: &[f64], nu: &[f64]) -> Option<String> {
    if let Some(v) = nu.iter().find(|v| !(**v > -1.0 && **v < 0.5)) {
        return Some(format!(
            "poissonRatio {v} is outside (-1, 0.5): the material law is undefined"
        ));
    }
    if let Some(v) = young.iter().find(|v| !v.is_finite() || **v < 0.0) {
        return Some(format!(
            "youngModulus {v} must be a finite non-negative number"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polar_of_rotation_times_stretch() {
        let r = nalgebra::Rotation3::from_euler_angles(0.3, -0.2, 0.7).into_inner();
        let s = Mat3::new(2.0, 0.1, 0.0, 0.1, 1.5, 0.2, 0.0, 0.2, 0.7);
        let q = polar_q(&(r * s));
        assert!((q - r).norm() < 1e-9, "{}", (q - r).norm());
        let q2 = stable_rotation(&(r * s));
        assert!((q2 - r).norm() < 1e-9);
    }

    #[test]
    fn material_constants() {
        let m = Material::new(1000.0, 0.3, 1.0);
        let lambda = 1000.0 * 0.3 / (1.3 * 0.4);
        let mu = 1000.0 / 2.6;
        assert!((m.off - lambda).abs() < 1e-9);
        assert!((m.shear - mu).abs() < 1e-9);
        assert!((m.diag - (lambda + 2.0 * mu)).abs() < 1e-9);
    }
}

/// Element loops over worker threads with a deterministic reduction: elements are split into one
/// contiguous range per thread; each range accumulates into its own buffer covering only the
/// nodes it touches; buffers are added to the output in range order. For a given thread count
/// the result is the same run after run; there are no locks and no shared writes. Loops run in
/// parallel only inside a simulation's worker pool (never on rayon's global pool).
#[derive(Clone, Debug, Default)]
pub struct ParallelLoop {
    /// Below this many items the loop stays on one thread ([`PARALLEL_MIN_ELEMENTS`] when 0).
    min_items: usize,
    /// Thread count the ranges were made for, and (elements, first node, end node) per range.
    #[allow(clippy::type_complexity)]
    chunks: (usize, Vec<(std::ops::Range<usize>, usize, usize)>),
    buffers: Vec<Vec<f64>>,
}

/// Below this many elements a loop stays on one thread (not worth the split).
pub const PARALLEL_MIN_ELEMENTS: usize = 10_000;

impl ParallelLoop {
    /// Threads available to element loops here (1 outside a simulation's pool).
    pub fn threads() -> usize {
        match rayon::current_thread_index() {
            Some(_) => rayon::current_num_threads(),
            None => 1,
        }
    }

    /// A loop that stays on one thread below `min_items` items (instead of
    /// [`PARALLEL_MIN_ELEMENTS`]): for items that carry more work than an element each.
    pub fn with_min_items(min_items: usize) -> Self {
        ParallelLoop {
            min_items,
            ..Default::default()
        }
    }

    /// Forget the ranges (the elements changed).
    pub fn reset(&mut self) {
        self.chunks = (0, Vec::new());
    }

    /// Run `body(range, out, first_node)` over all `n` elements, adding into `out` (3 values per
    /// node). `nodes(e)` lists the nodes of element `e`. Runs `body(0..n, out, 0)` directly when
    /// one thread is available or the loop is small.
    pub fn run<I: IntoIterator<Item = u32>>(
        &mut self,
        n: usize,
        nodes: impl Fn(usize) -> I,
        out: &mut [f64],
        body: impl Fn(std::ops::Range<usize>, &mut [f64], usize) + Sync,
    ) {
        use rayon::prelude::*;
        let threads = Self::threads();
        let min = match self.min_items {
            0 => PARALLEL_MIN_ELEMENTS,
            m => m,
        };
        if threads <= 1 || n < min {
            body(0..n, out, 0);
            return;
        }
        if self.chunks.0 != threads {
            let per = n.div_ceil(threads);
            let chunks = (0..n)
                .step_by(per)
                .map(|start| {
                    let r = start..(start + per).min(n);
                    let (mut lo, mut hi) = (u32::MAX, 0u32);
                    for e in r.clone() {
                        for v in nodes(e) {
                            lo = lo.min(v);
                            hi = hi.max(v + 1);
                        }
                    }
                    (r, lo.min(hi) as usize, hi as usize)
                })
                .collect();
            self.chunks = (threads, chunks);
        }
        let mut bufs = std::mem::take(&mut self.buffers);
        bufs.resize_with(self.chunks.1.len(), Vec::new);
        bufs.par_iter_mut()
            .zip(self.chunks.1.par_iter())
            .for_each(|(buf, (range, lo, hi))| {
                buf.clear();
                buf.resize(3 * (hi - lo), 0.0);
                body(range.clone(), buf, *lo);
            });
        for (buf, (_, lo, _)) in bufs.iter().zip(&self.chunks.1) {
            for (d, b) in out[3 * lo..3 * lo + buf.len()].iter_mut().zip(buf) {
                *d += *b;
            }
        }
        self.buffers = bufs;
    }
}
