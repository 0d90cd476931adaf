//! FastTetrahedralCorotationalForceField: corotational linear tetrahedra in SOFA's edge-based
//! formulation (Sofa/Component/SolidMechanics/FEM/Elastic/.../FastTetrahedralCorotationalForceField.inl):
//! per element, the edge stiffness blocks A_j = λ s_l s_kᵀ + μ s_k s_lᵀ + μ (s_k·s_l) I (s: the
//! barycentric gradients, λ, μ scaled by the rest volume), a rotation R from the first two edges
//! (method qr), a polar decomposition (polar, polar2) or none (linear), and per edge
//! d_j = Rᵀ e_j − e0_j, force_l += A_j d_j, force_k −= A_jᵀ d_j, f += R·force.
//!
//! The tangent used by `add_dforce` and by assembly is the same frozen-rotation matrix. (SOFA's
//! `buildStiffnessMatrix` places the same edge block on both off-diagonal sides without
//! transposing it; Canapé assembles the consistent, transposed block.)

use crate::common::{check_material, fem_inputs, polar_q, polar_q_all};
use crate::pairs::NodePairs;
use canape_core::component::{ForceField, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, ForceFieldData, Reals, Text};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{get3, Mat3, Vec3};

const EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastMethod {
    Qr,
    Polar,
    Polar2,
    Linear,
}

#[derive(Clone)]
struct FastTet {
    idx: [u32; 4],
    /// Barycentric gradients of the rest element.
    s: [Vec3; 4],
    a: [Mat3; 6],
    rest_edges: [Vec3; 6],
    rest_rotation: Mat3,
    /// Lamé coefficients times the rest volume (A_j's factors).
    lambda: f64,
    mu: f64,
    /// Rotation of the last add_force (rest → current).
    r: Mat3,
}

canape_core::data_schema! {
    /// FastTetrahedralCorotationalForceField's own Data (after the force-field Data).
    struct FastTetraData {
        method: Text = ("method", DataKind::Str, "qr", "method for rotation computation: \"qr\" (by QR) or \"polar\" or \"polar2\" or \"none\" (Linear elastic)"),
        young: Reals = ("youngModulus", DataKind::Reals(0), "5000", "Young's modulus in Hooke's law (one value, or one per element)"),
        poisson: Reals = ("poissonRatio", DataKind::Reals(0), "0.45", "Poisson's ratio in Hooke's law (one value, or one per element)"),
        drawing: Flag = ("drawing", DataKind::Bool, "1", "draw the forcefield if true"),
        draw_color1: Reals = ("drawColor1", DataKind::Reals(4), "0 0 1 1", "draw color for faces 1"),
        draw_color2: Reals = ("drawColor2", DataKind::Reals(4), "0 0.5 1 1", "draw color for faces 2"),
        draw_color3: Reals = ("drawColor3", DataKind::Reals(4), "0 1 1 1", "draw color for faces 3"),
        draw_color4: Reals = ("drawColor4", DataKind::Reals(4), "0.5 1 1 1", "draw color for faces 4"),
    }
}

#[derive(Clone)]
pub struct FastTetrahedralCorotationalForceField {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: FastTetraData,
    method: FastMethod,
    elems: Vec<FastTet>,
    /// Each element's index in the topology and rest volume, parallel to `elems` (what a new
    /// material is recomputed from).
    rest: Vec<(u32, f64)>,
    /// Node pairs of the elements for assembly, made on the first assembly.
    pairs: std::sync::OnceLock<NodePairs>,
    rayleigh: f64,
    /// The polar methods' factors of the current `add_force` (kept: no allocation per step).
    polar: Vec<Mat3>,
}

impl Default for FastTetrahedralCorotationalForceField {
    fn default() -> Self {
        Self::new()
    }
}

#[inline(always)]
fn frame2(e0: &Vec3, e1: &Vec3) -> Mat3 {
    let x = e0.normalize();
    let z = x.cross(e1).normalize();
    let y = z.cross(&x);
    Mat3::from_rows(&[x.transpose(), y.transpose(), z.transpose()])
}

impl FastTetrahedralCorotationalForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = FastTetraData::declare(data);
        FastTetrahedralCorotationalForceField {
            data,
            ff,
            d,
            method: FastMethod::Qr,
            elems: Vec::new(),
            rest: Vec::new(),
            pairs: std::sync::OnceLock::new(),
            rayleigh: 0.0,
            polar: Vec::new(),
        }
    }

    /// Read `method` (SOFA's names); unknown names select qr and are returned as error.
    pub fn set_method_from_data(&mut self) -> Result<(), crate::common::MethodError> {
        let m = self.data.get(self.d.method).to_string();
        let (method, ok) = match m.as_str() {
            "qr" | "large" => (FastMethod::Qr, true),
            "polar" => (FastMethod::Polar, true),
            "polar2" => (FastMethod::Polar2, true),
            "none" | "linear" | "small" => (FastMethod::Linear, true),
            _ => (FastMethod::Qr, false),
        };
        self.method = method;
        if ok {
            Ok(())
        } else {
            Err(crate::common::MethodError::Unknown { method: m })
        }
    }

    /// Set up elements from rest positions (init and tests).
    pub fn setup(&mut self, rest: &[f64], tets: &[[u32; 4]]) {
        let (e, nu) = self.moduli();
        self.elems.clear();
        self.rest.clear();
        for (k, t) in tets.iter().enumerate() {
            let p: [Vec3; 4] = std::array::from_fn(|i| get3(rest, t[i] as usize));
            let m = Mat3::from_columns(&[p[1] - p[0], p[2] - p[0], p[3] - p[0]]);
            let Some(inv) = m.try_inverse() else { continue };
            let vol = m.determinant().abs() / 6.0;
            let (lambda, mu) = lame(&e, &nu, k, vol);
            // barycentric gradients: rows of inv for nodes 1..3, minus their sum for node 0
            let g1 = Vec3::new(inv[(0, 0)], inv[(0, 1)], inv[(0, 2)]);
            let g2 = Vec3::new(inv[(1, 0)], inv[(1, 1)], inv[(1, 2)]);
            let g3 = Vec3::new(inv[(2, 0)], inv[(2, 1)], inv[(2, 2)]);
            let s = [-(g1 + g2 + g3), g1, g2, g3];
            let a = edge_blocks(&s, lambda, mu);
            let rest_edges: [Vec3; 6] = std::array::from_fn(|j| p[EDGES[j][1]] - p[EDGES[j][0]]);
            let rest_rotation = match self.method {
                FastMethod::Polar2 => polar_q(&Mat3::from_rows(&[
                    rest_edges[0].transpose(),
                    rest_edges[1].transpose(),
                    rest_edges[2].transpose(),
                ])),
                _ => frame2(&rest_edges[0], &rest_edges[1]),
            };
            self.elems.push(FastTet {
                idx: *t,
                s,
                a,
                rest_edges,
                rest_rotation,
                lambda,
                mu,
                r: Mat3::identity(),
            });
            self.rest.push((k as u32, vol));
        }
        self.pairs = std::sync::OnceLock::new();
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if let Err(m) = self.set_method_from_data() {
            ctx.warn(format!("unknown method '{m}'; using 'qr'"));
        }
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        self.elems.clear();
        self.rest.clear();
        self.pairs = std::sync::OnceLock::new();
        if let Some(m) = check_material(self.data.get(self.d.young), self.data.get(self.d.poisson))
        {
            ctx.error(m);
            return;
        }
        let Some((rest, mesh)) =
            fem_inputs(ctx, &self.data, |m| !m.tetrahedra.is_empty(), "tetrahedra")
        else {
            return;
        };
        self.setup(&rest, &mesh.tetrahedra);
    }

    /// Young's moduli and Poisson's ratios (one, or one per element), never empty.
    fn moduli(&self) -> (Vec<f64>, Vec<f64>) {
        let or = |v: &[f64], d: f64| if v.is_empty() { vec![d] } else { v.to_vec() };
        (
            or(self.data.get(self.d.young), 5000.0),
            or(self.data.get(self.d.poisson), 0.45),
        )
    }

    /// Element forces (before rotation back) for local displacements d (edges), per node.
    #[inline(always)]
    fn edge_forces(el: &FastTet, d: &[Vec3; 6]) -> [Vec3; 4] {
        let mut f = [Vec3::zeros(); 4];
        for (j, [k, l]) in EDGES.iter().enumerate() {
            f[*l] += el.a[j] * d[j];
            f[*k] -= el.a[j].transpose() * d[j];
        }
        f
    }
}

/// λ and μ of element `k` (its modulus in a per-element list, or the single one) times its
/// rest volume.
fn lame(e: &[f64], nu: &[f64], k: usize, vol: f64) -> (f64, f64) {
    let (ek, nuk) = (*e.get(k).unwrap_or(&e[0]), *nu.get(k).unwrap_or(&nu[0]));
    let mu = ek / (2.0 * (1.0 + nuk)) * vol;
    let lambda = ek * nuk / ((1.0 + nuk) * (1.0 - 2.0 * nuk)) * vol;
    (lambda, mu)
}

/// The edge blocks A_j = λ s_l s_kᵀ + μ s_k s_lᵀ + μ (s_k·s_l) I.
fn edge_blocks(s: &[Vec3; 4], lambda: f64, mu: f64) -> [Mat3; 6] {
    std::array::from_fn(|j| {
        let [kk, l] = EDGES[j];
        s[l] * s[kk].transpose() * lambda
            + s[kk] * s[l].transpose() * mu
            + Mat3::identity() * (mu * s[kk].dot(&s[l]))
    })
}

impl FastTetrahedralCorotationalForceField {
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let material = [
            self.d.young.index(),
            self.d.poisson.index(),
            self.ff.rayleigh_stiffness.index(),
        ];
        if !changed.only(&material) || self.elems.is_empty() {
            return Reaction::Reinit;
        }
        if let Some(m) = check_material(self.data.get(self.d.young), self.data.get(self.d.poisson))
        {
            return Reaction::Refused(vec![m]);
        }
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        let (e, nu) = self.moduli();
        for (el, &(k, vol)) in self.elems.iter_mut().zip(&self.rest) {
            let (lambda, mu) = lame(&e, &nu, k as usize, vol);
            el.lambda = lambda;
            el.mu = mu;
            el.a = edge_blocks(&el.s, lambda, mu);
        }
        Reaction::Updated
    }
}

canape_core::impl_component!(
    FastTetrahedralCorotationalForceField,
    "FastTetrahedralCorotationalForceField",
    init,
    data_changed
);

impl ForceField for FastTetrahedralCorotationalForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let method = self.method;
        let edges = |el: &FastTet| -> [Vec3; 6] {
            let p: [Vec3; 4] = std::array::from_fn(|i| get3(x, el.idx[i] as usize));
            std::array::from_fn(|j| p[EDGES[j][1]] - p[EDGES[j][0]])
        };
        if matches!(method, FastMethod::Polar | FastMethod::Polar2) {
            // the polar factors first, four elements at a time (independent iterations side
            // by side): of the deformation gradient (polar), of the first edges (polar2)
            let elems = &self.elems;
            let matrix = |k: usize| {
                let (el, e) = (&elems[k], edges(&elems[k]));
                if method == FastMethod::Polar {
                    let mut fm = Mat3::zeros();
                    for j in 0..3 {
                        fm += e[j] * el.s[j + 1].transpose();
                    }
                    fm
                } else {
                    Mat3::from_rows(&[e[0].transpose(), e[1].transpose(), e[2].transpose()])
                }
            };
            polar_q_all(elems.len(), matrix, &mut self.polar);
        }
        for (k, el) in self.elems.iter_mut().enumerate() {
            let e = edges(el);
            let mut r = match method {
                FastMethod::Linear => Mat3::identity(),
                FastMethod::Qr => frame2(&e[0], &e[1]).transpose() * el.rest_rotation,
                FastMethod::Polar => self.polar[k],
                FastMethod::Polar2 => self.polar[k].transpose() * el.rest_rotation,
            };
            if !r.iter().all(|v| v.is_finite()) {
                r = el.r;
            }
            el.r = r;
            let rt = r.transpose();
            let d: [Vec3; 6] = std::array::from_fn(|j| rt * e[j] - el.rest_edges[j]);
            let fl = Self::edge_forces(el, &d);
            for v in 0..4 {
                let fv = r * fl[v];
                let n = el.idx[v] as usize;
                for c in 0..3 {
                    f[3 * n + c] += fv[c];
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        for el in &self.elems {
            let rt = el.r.transpose();
            let p: [Vec3; 4] = std::array::from_fn(|i| get3(dx, el.idx[i] as usize));
            let d: [Vec3; 6] = std::array::from_fn(|j| rt * (p[EDGES[j][1]] - p[EDGES[j][0]]));
            let fl = Self::edge_forces(el, &d);
            for v in 0..4 {
                let fv = el.r * fl[v] * k_factor;
                let n = el.idx[v] as usize;
                for c in 0..3 {
                    df[3 * n + c] += fv[c];
                }
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        // ∂f/∂x per edge (k, l): B = k R A Rᵀ gives K_ll += B, K_kk += Bᵀ, K_kl −= Bᵀ, K_lk −= B.
        // With A = λ s_l s_kᵀ + μ s_k s_lᵀ + μ (s_k·s_l) I and t = R s (rotated gradients),
        // B = λ t_l t_kᵀ + μ t_k t_lᵀ + μ (s_k·s_l) I, times k: no 3×3 products per edge.
        let pairs = self.pairs.get_or_init(|| {
            let idx: Vec<[u32; 4]> = self.elems.iter().map(|el| el.idx).collect();
            NodePairs::new::<4, 6>(&idx)
        });
        pairs.assemble::<4, 6>(m, offset, |e, want_pairs, out| {
            let el = &self.elems[e];
            let t: [Vec3; 4] = std::array::from_fn(|i| el.r * el.s[i]);
            let (lk, mk) = (el.lambda * k_factor, el.mu * k_factor);
            out.diag = [Mat3::zeros(); 4];
            for (j, [k, l]) in EDGES.iter().enumerate() {
                let (tk, tl) = (t[*k], t[*l]);
                let c = mk * el.s[*k].dot(&el.s[*l]);
                let b = tl * (tk * lk).transpose()
                    + tk * (tl * mk).transpose()
                    + Mat3::from_diagonal_element(c);
                let bt = b.transpose();
                out.diag[*l] += b;
                out.diag[*k] += bt;
                if want_pairs {
                    out.upper[j] = -bt;
                }
            }
        });
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::element::edit_check;
    use canape_core::mesh::Mesh;

    /// Two perturbed cubes split into tetrahedra, and a moved, deformed configuration.
    pub(crate) fn two_cells() -> (Vec<f64>, Mesh, Vec<f64>) {
        let mut seed = 3;
        let mut rest = Vec::new();
        for k in 0..2 {
            for j in 0..2 {
                for i in 0..3 {
                    for v in [i as f64, j as f64 * 0.8, k as f64 * 1.2] {
                        rest.push(v + 0.05 * crate::fd_check::rnd(&mut seed));
                    }
                }
            }
        }
        let idx = |i: u32, j: u32, k: u32| i + 3 * (j + 2 * k);
        let tetrahedra = (0..2)
            .flat_map(|x| {
                let h = [
                    idx(x, 0, 0),
                    idx(x + 1, 0, 0),
                    idx(x + 1, 1, 0),
                    idx(x, 1, 0),
                    idx(x, 0, 1),
                    idx(x + 1, 0, 1),
                    idx(x + 1, 1, 1),
                    idx(x, 1, 1),
                ];
                canape_core::mesh::hexa_to_tetras(h, false)
            })
            .collect();
        let x = crate::fd_check::rigidly_moved(&rest)
            .iter()
            .map(|v| v + 0.05 * crate::fd_check::rnd(&mut seed))
            .collect();
        let mesh = Mesh {
            tetrahedra,
            ..Default::default()
        };
        (rest, mesh, x)
    }

    /// Editing youngModulus, poissonRatio or rayleighStiffness updates the force field in
    /// place to exactly what an init with the new values gives, for every method; an invalid
    /// material is refused, and other Data ask for a re-initialisation.
    #[test]
    fn fast_tetra_material_edits_update_in_place() {
        let (rest, mesh, x) = two_cells();
        for method in ["qr", "polar", "polar2", "none"] {
            let before = [
                ("method", method),
                ("youngModulus", "1000"),
                ("poissonRatio", "0.3"),
                ("rayleighStiffness", "0.1"),
            ];
            let make = FastTetrahedralCorotationalForceField::new;
            let edit =
                |after: &[(&str, &str)]| edit_check::edit(make, &rest, &mesh, &before, after, &x);
            assert_eq!(edit(&[("youngModulus", "1500")]), Reaction::Updated);
            assert_eq!(edit(&[("poissonRatio", "0.4")]), Reaction::Updated);
            assert_eq!(edit(&[("rayleighStiffness", "0.25")]), Reaction::Updated);
            let per_element = [
                (
                    "youngModulus",
                    "1200 900 1100 800 1000 1300 700 1400 1250 950 1050 850",
                ),
                ("poissonRatio", "0.2 0.35"),
                ("rayleighStiffness", "0"),
            ];
            assert_eq!(edit(&per_element), Reaction::Updated);
            assert!(matches!(
                edit(&[("poissonRatio", "0.7")]),
                Reaction::Refused(_)
            ));
            assert!(matches!(
                edit(&[("youngModulus", "-5")]),
                Reaction::Refused(_)
            ));
            assert_eq!(
                edit(&[("youngModulus", "2000"), ("drawing", "0")]),
                Reaction::Reinit
            );
        }
    }
}
