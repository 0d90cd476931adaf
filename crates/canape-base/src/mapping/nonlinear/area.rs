//! AreaMapping (Vec3d → Vec1d): the area of each triangle of the input's topology
//! (Sofa/Component/Mapping/NonLinear/.../AreaMapping.inl). With N = (p1 − p0) × (p2 − p0):
//! A = |N|/2, ∂A/∂p_i = (e_i × N)/(2|N|) with e_i = p_{i+1} − p_{i+2}; the geometric stiffness is
//! the output force times the Hessian of A (SOFA's computeSecondDerivativeArea), for every
//! triangle (Exact) or only those whose output force is negative (Stabilized, the default).

use super::OverTopologyData;
use crate::mapping::linear::{mapping_base, MappingData};
use canape_core::component::{JEntry, KEntry, MapInputs, Mapping};
use canape_core::data::DataTable;
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext};
use canape_types::{get3, Mat3, Vec3};

#[derive(Clone)]
pub struct AreaMapping {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    m: MappingData,
    d: OverTopologyData,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    triangles: Vec<[u32; 3]>,
    /// Per triangle at the last apply: the gradient of the area at each vertex.
    grad: Vec<[Vec3; 3]>,
    /// The vertices at the last apply (for the Hessian).
    pts: Vec<[Vec3; 3]>,
    gs: u32,
}

impl Default for AreaMapping {
    fn default() -> Self {
        Self::new()
    }
}

/// The Hessian blocks ∂²A/∂p_i∂p_j of a triangle's area.
fn hessian(p: &[Vec3; 3]) -> [[Mat3; 3]; 3] {
    let n = (p[1] - p[0]).cross(&(p[2] - p[0]));
    let n2 = n.norm_squared();
    let len = n2.sqrt();
    let mut h = [[Mat3::zeros(); 3]; 3];
    if len <= 0.0 {
        return h;
    }
    let ka = 1.0 / (2.0 * len * n2);
    let e = [p[1] - p[2], p[2] - p[0], p[0] - p[1]];
    let nx = n.cross_matrix();
    // σ_ij: the sign of the [N]× term (zero on the diagonal)
    let sigma = [[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]];
    for i in 0..3 {
        for j in 0..3 {
            let a = n.cross(&e[i]);
            let b = n.cross(&e[j]);
            h[i][j] = (-(a * b.transpose())
                + (Mat3::identity() * e[i].dot(&e[j]) - e[j] * e[i].transpose()) * n2
                + nx * (sigma[i][j] * n2))
                * ka;
        }
    }
    h
}

impl AreaMapping {
    pub fn new() -> Self {
        let (data, m) = mapping_base(DataTable::new());
        let (data, d) = OverTopologyData::declare(data);
        AreaMapping {
            data,
            m,
            d,
            input: Vec::new(),
            output: None,
            triangles: Vec::new(),
            grad: Vec::new(),
            pts: Vec::new(),
            gs: 2,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let Some((e, gs, mesh)) = super::vec3_to_vec1_over_topology(
            ctx,
            &self.data,
            (self.m, self.d),
            "AreaMapping",
            "triangles",
        ) else {
            return;
        };
        self.gs = gs;
        if !mesh.quads.is_empty() {
            ctx.error(
                "the topology has quads: AreaMapping maps triangles only (SOFA refuses quads too)",
            );
            return;
        }
        if mesh.triangles.is_empty() {
            ctx.error("the topology has no triangles");
            return;
        }
        let n = ctx.scene.state(e.inputs[0]).map_or(0, |s| s.size());
        if let Some(t) = mesh
            .triangles
            .iter()
            .find(|t| t.iter().any(|&v| v as usize >= n))
        {
            ctx.error(format!(
                "triangle {t:?} refers to a point the input ({n} points) does not have"
            ));
            return;
        }
        self.triangles = mesh.triangles.clone();
        self.grad = vec![[Vec3::zeros(); 3]; self.triangles.len()];
        self.pts = vec![[Vec3::zeros(); 3]; self.triangles.len()];
        self.input = e.inputs;
        self.output = Some(e.output);
    }

    fn stiff(&self, f: f64) -> bool {
        self.gs == 1 || (self.gs == 2 && f < 0.0)
    }
}

impl_component!(AreaMapping, "AreaMapping", init);

impl Mapping for AreaMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.triangles.len())
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        let x = x_in.get(0);
        for (t, tri) in self.triangles.iter().enumerate() {
            let p = tri.map(|v| get3(x, v as usize));
            let n = (p[1] - p[0]).cross(&(p[2] - p[0]));
            let len = n.norm();
            x_out[t] = 0.5 * len;
            let k = if len > 0.0 { 0.5 / len } else { 0.0 };
            let e = [p[1] - p[2], p[2] - p[0], p[0] - p[1]];
            self.grad[t] = e.map(|ei| ei.cross(&n) * k);
            self.pts[t] = p;
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        let v = v_in.get(0);
        for (t, tri) in self.triangles.iter().enumerate() {
            v_out[t] = (0..3)
                .map(|i| self.grad[t][i].dot(&get3(v, tri[i] as usize)))
                .sum();
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        for (t, tri) in self.triangles.iter().enumerate() {
            for i in 0..3 {
                canape_types::add3(&mut f_in[0], tri[i] as usize, &(self.grad[t][i] * f_out[t]));
            }
        }
    }
    fn apply_djt(&self, dx_in: &MapInputs<'_>, f_out: &[f64], df_in: &mut [Vec<f64>], k: f64) {
        if self.gs == 0 {
            return;
        }
        let dx = dx_in.get(0);
        for (t, tri) in self.triangles.iter().enumerate() {
            let f = f_out.get(t).copied().unwrap_or(0.0);
            if !self.stiff(f) {
                continue;
            }
            let h = hessian(&self.pts[t]);
            for i in 0..3 {
                let mut g = Vec3::zeros();
                for j in 0..3 {
                    g += h[i][j] * get3(dx, tri[j] as usize);
                }
                canape_types::add3(&mut df_in[0], tri[i] as usize, &(g * (f * k)));
            }
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        for (t, tri) in self.triangles.iter().enumerate() {
            for i in 0..3 {
                for c in 0..3 {
                    out.push(JEntry {
                        row: t as u32,
                        input: 0,
                        col: 3 * tri[i] + c as u32,
                        val: self.grad[t][i][c],
                    });
                }
            }
        }
    }
    fn geometric_stiffness(&self, f_out: &[f64], out: &mut Vec<KEntry>) {
        if self.gs == 0 {
            return;
        }
        for (t, tri) in self.triangles.iter().enumerate() {
            let f = f_out.get(t).copied().unwrap_or(0.0);
            if !self.stiff(f) {
                continue;
            }
            let h = hessian(&self.pts[t]);
            for i in 0..3 {
                for j in 0..3 {
                    for p in 0..3 {
                        for q in 0..3 {
                            out.push(KEntry {
                                in_row: 0,
                                row: 3 * tri[i] + p as u32,
                                in_col: 0,
                                col: 3 * tri[j] + q as u32,
                                val: f * h[i][j][(p, q)],
                            });
                        }
                    }
                }
            }
        }
    }
}
