//! Shared FEM helpers: isotropic material constants, polar decomposition (SOFA's
//! helper::Decompose::polarDecomposition formulation), force-field base Data.

use canape_core::data::DataTable;
use canape_types::Mat3;

/// A `method` Data naming no method the force field has: it falls back to its default one. The
/// Display text is the name given (the init warning words the rest).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MethodError {
    #[error("{method}")]
    Unknown { method: String },
}

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

/// Iterations of [`polar_q`] at most: the scaled Newton iteration converges quadratically (a
/// handful of iterations); a matrix with NaN or infinite entries never meets the tolerance.
const POLAR_MAX_ITERATIONS: usize = 100;

/// Orthogonal factor Q of M = Q·S by the scaled Newton (Higham) iteration, as in SOFA's
/// helper/decompose.inl `polarDecomposition` (tolerance 1e-8; SOFA has no iteration limit,
/// here [`POLAR_MAX_ITERATIONS`], after which the last iterate is returned: NaN for a NaN
/// matrix, which callers check).
pub fn polar_q(m: &Mat3) -> Mat3 {
    polar_q_lanes(&[*m])[0]
}

/// [`polar_q`] of four matrices at once, each lane with its own iterations and stopping test:
/// the same operations per matrix, so the same bits as four calls; the lanes make one chain of
/// dependent operations four independent ones (vectorised with AVX2 where the CPU has it).
pub fn polar_q4(ms: &[Mat3; 4]) -> [Mat3; 4] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { polar_q4_avx2(ms) };
    }
    polar_q_lanes(ms)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn polar_q4_avx2(ms: &[Mat3; 4]) -> [Mat3; 4] {
    polar_q_lanes(ms)
}

/// Orthogonal factors of `out.len()` matrices `m(e)`, four at a time ([`polar_q4`]).
pub fn polar_q_all(n: usize, m: impl Fn(usize) -> Mat3, out: &mut Vec<Mat3>) {
    out.clear();
    let mut e = 0;
    while e + 4 <= n {
        out.extend(polar_q4(&[m(e), m(e + 1), m(e + 2), m(e + 3)]));
        e += 4;
    }
    out.extend((e..n).map(|e| polar_q(&m(e))));
}

/// The iteration of [`polar_q`] on L matrices, lane by lane (all arithmetic is per lane, in
/// the order of the one-matrix iteration: lanes do not change a matrix's bits).
#[inline(always)]
fn polar_q_lanes<const L: usize>(ms: &[Mat3; L]) -> [Mat3; L] {
    let tol = 1e-8;
    // x[k][l]: entry k (row-major) of lane l's iterate, which is Mᵀ at the start
    let mut x = [[0.0f64; L]; 9];
    for (l, m) in ms.iter().enumerate() {
        for i in 0..3 {
            for j in 0..3 {
                x[3 * i + j][l] = m[(j, i)];
            }
        }
    }
    let one_norm = |a: &[[f64; L]; 9], l: usize| {
        let col = |j: usize| (a[j][l].abs() + a[3 + j][l].abs()) + a[6 + j][l].abs();
        col(0).max(col(1)).max(col(2))
    };
    let inf_norm = |a: &[[f64; L]; 9], l: usize| {
        let row = |i: usize| (a[3 * i][l].abs() + a[3 * i + 1][l].abs()) + a[3 * i + 2][l].abs();
        row(0).max(row(1)).max(row(2))
    };
    let mut m1 = [0.0; L];
    let mut minf = [0.0; L];
    for l in 0..L {
        m1[l] = one_norm(&x, l);
        minf[l] = inf_norm(&x, l);
    }
    let mut active = [true; L];
    for _ in 0..POLAR_MAX_ITERATIONS {
        // adjugate rows: a_i = r_(i+1) × r_(i+2) of the iterate's rows r
        let mut adj = [[0.0f64; L]; 9];
        let mut det = [0.0f64; L];
        for l in 0..L {
            let r = |i: usize, c: usize| x[3 * i + c][l];
            for i in 0..3 {
                let (p, q) = ((i + 1) % 3, (i + 2) % 3);
                adj[3 * i][l] = r(p, 1) * r(q, 2) - r(p, 2) * r(q, 1);
                adj[3 * i + 1][l] = r(p, 2) * r(q, 0) - r(p, 0) * r(q, 2);
                adj[3 * i + 2][l] = r(p, 0) * r(q, 1) - r(p, 1) * r(q, 0);
            }
            det[l] = (r(0, 0) * adj[0][l] + r(0, 1) * adj[1][l]) + r(0, 2) * adj[2][l];
        }
        // every lane computes (the vectorised form), lanes still iterating keep the result
        let mut update = [false; L];
        let (mut g1, mut g2) = ([0.0f64; L], [0.0f64; L]);
        for l in 0..L {
            update[l] = active[l] && det[l] != 0.0;
            active[l] = update[l];
            let (a_1, a_inf) = (one_norm(&adj, l), inf_norm(&adj, l));
            let gamma = (((a_1 * a_inf) / (m1[l] * minf[l])).sqrt() / det[l].abs()).sqrt();
            g1[l] = 0.5 * gamma;
            g2[l] = 0.5 / (gamma * det[l]);
        }
        let mut e = [[0.0f64; L]; 9];
        for k in 0..9 {
            for l in 0..L {
                let prev = x[k][l];
                let next = prev * g1[l] + adj[k][l] * g2[l];
                e[k][l] = prev - next;
                x[k][l] = if update[l] { next } else { prev };
            }
        }
        for l in 0..L {
            let (e1, n1, ninf) = (one_norm(&e, l), one_norm(&x, l), inf_norm(&x, l));
            if update[l] {
                m1[l] = n1;
                minf[l] = ninf;
                active[l] = e1 > n1 * tol;
            }
        }
        if !active.contains(&true) {
            break;
        }
    }
    std::array::from_fn(|l| Mat3::from_fn(|i, j| x[3 * j + i][l]))
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
    use canape_core::scene::{ToState, ToTopology};
    // typed links: `mstate` must be a state (the context's), `topology` a topology
    match ctx.link_named::<ToState>(data, "mstate") {
        Ok(None) => {}
        Ok(Some(s)) if Some(s.id()) == ctx.scene.context_state(ctx.node) => {}
        Ok(Some(_)) => {
            ctx.error(format!("mstate='{}' must name the context's MechanicalObject: force fields act on the state of their node", data.str("mstate").trim()));
            return None;
        }
        Err(e) => {
            ctx.error(format!("{e}: force fields act on the state of their node"));
            return None;
        }
    }
    let Some(st) = ctx.state() else {
        ctx.error("no MechanicalObject in the context");
        return None;
    };
    if st.dof != canape_types::DofType::Vec3 {
        ctx.error(format!(
            "this force field acts on Vec3d states; the context state is {}",
            st.dof.name()
        ));
        return None;
    }
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
    let topology = match ctx.link_named::<ToTopology>(data, "topology") {
        Ok(t) => t,
        Err(e) => {
            ctx.error(e.to_string());
            return None;
        }
    };
    let mesh = match topology {
        None => match ctx.topology_where(has_elements) {
            Some(t) => t.mesh().clone(),
            None => {
                ctx.error(format!("no topology with {what} in the context"));
                return None;
            }
        },
        Some(l) => match ctx.scene.linked_topology(l) {
            Some(t) if has_elements(t.mesh()) => t.mesh().clone(),
            _ => {
                ctx.error(format!(
                    "the topology '{}' has no {what}",
                    data.str("topology").trim()
                ));
                return None;
            }
        },
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

    /// Four at a time gives the bits of one at a time, lanes converging after different
    /// numbers of iterations, a singular matrix (det 0: returned as it is) among them; a NaN
    /// matrix ends (after the iteration limit) with NaN.
    #[test]
    fn polar_four_at_a_time_equals_one_at_a_time() {
        let r = nalgebra::Rotation3::from_euler_angles(0.3, -0.2, 0.7).into_inner();
        let ms = [
            r * Mat3::new(2.0, 0.1, 0.0, 0.1, 1.5, 0.2, 0.0, 0.2, 0.7),
            Mat3::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0), // singular
            r * 1e-3 + Mat3::identity() * 1e-9,
            Mat3::new(3.0, -1.0, 0.5, 0.2, 0.1, 4.0, -2.0, 1.0, 1.0),
        ];
        let four = polar_q4(&ms);
        for (m, q) in ms.iter().zip(&four) {
            let one = polar_q(m);
            assert!(one
                .iter()
                .zip(q.iter())
                .all(|(a, b)| a.to_bits() == b.to_bits()));
        }
        assert!((four[0] - r).norm() < 1e-9);
        assert!(polar_q(&Mat3::from_element(f64::NAN))
            .iter()
            .any(|v| v.is_nan()));
        let mut all = Vec::new();
        polar_q_all(6, |e| ms[e % 4] * (1.0 + e as f64), &mut all);
        for (e, q) in all.iter().enumerate() {
            assert_eq!(*q, polar_q(&(ms[e % 4] * (1.0 + e as f64))));
        }
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
