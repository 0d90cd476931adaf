//! VolumeMapping (Vec3d → Vec1d): the signed volume of each tetrahedron of the input's topology
//! (Sofa/Component/Mapping/NonLinear/.../VolumeMapping.inl). With eᵢ = pᵢ − p₀:
//! V = e₁·(e₂×e₃)/6 (negative for an inverted tetrahedron), ∂V/∂p₁ = e₂×e₃/6, ∂V/∂p₂ = e₃×e₁/6,
//! ∂V/∂p₃ = e₁×e₂/6, ∂V/∂p₀ minus their sum. The Hessian blocks are ∂²V/∂pᵢ∂pⱼ = [pₖ − pₗ]×/6 for
//! i ≠ j ({i, j, k, l} an even permutation of the corners) and zero on the diagonal; the geometric
//! stiffness is the output force times the Hessian, for every tetrahedron (Exact) or only those
//! whose output force is negative (Stabilized, the default). Topologies with hexahedra are
//! refused, as SOFA does.

use super::OverTopologyData;
use crate::mapping::linear::{mapping_base, MappingData};
use canape_core::component::{JEntry, KEntry, MapInputs, Mapping};
use canape_core::data::DataTable;
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext};
use canape_types::{get3, Mat3, Vec3};

#[derive(Clone)]
pub struct VolumeMapping {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    m: MappingData,
    d: OverTopologyData,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    tetrahedra: Vec<[u32; 4]>,
    /// Per tetrahedron at the last apply: the gradient of the volume at each corner.
    grad: Vec<[Vec3; 4]>,
    /// The corners at the last apply (for the Hessian).
    pts: Vec<[Vec3; 4]>,
    gs: u32,
}

impl Default for VolumeMapping {
    fn default() -> Self {
        Self::new()
    }
}

/// The off-diagonal Hessian blocks ∂²V/∂pᵢ∂pⱼ (i < j) of a tetrahedron's volume, as
/// (i, j, block); the (j, i) block is the transpose (SOFA's computeSecondDerivativeVolume).
fn hessian(p: &[Vec3; 4]) -> [(usize, usize, Mat3); 6] {
    let h = |a: Vec3| a.cross_matrix() / 6.0;
    [
        (0, 1, h(p[2] - p[3])),
        (0, 2, h(p[3] - p[1])),
        (0, 3, h(p[1] - p[2])),
        (1, 2, h(p[0] - p[3])),
        (1, 3, h(p[2] - p[0])),
        (2, 3, h(p[0] - p[1])),
    ]
}

impl VolumeMapping {
    pub fn new() -> Self {
        let (data, m) = mapping_base(DataTable::new());
        let (data, d) = OverTopologyData::declare(data);
        VolumeMapping {
            data,
            m,
            d,
            input: Vec::new(),
            output: None,
            tetrahedra: Vec::new(),
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
            "VolumeMapping",
            "tetrahedra",
        ) else {
            return;
        };
        self.gs = gs;
        if !mesh.hexahedra.is_empty() {
            ctx.error("the topology has hexahedra: VolumeMapping maps tetrahedra only (SOFA refuses hexahedra too); convert them with Hexa2TetraTopologicalMapping");
            return;
        }
        if mesh.tetrahedra.is_empty() {
            ctx.error("the topology has no tetrahedra");
            return;
        }
        let n = ctx.scene.state(e.inputs[0]).map_or(0, |s| s.size());
        if let Some(t) = mesh
            .tetrahedra
            .iter()
            .find(|t| t.iter().any(|&v| v as usize >= n))
        {
            ctx.error(format!(
                "tetrahedron {t:?} refers to a point the input ({n} points) does not have"
            ));
            return;
        }
        self.tetrahedra = mesh.tetrahedra.clone();
        self.grad = vec![[Vec3::zeros(); 4]; self.tetrahedra.len()];
        self.pts = vec![[Vec3::zeros(); 4]; self.tetrahedra.len()];
        self.input = e.inputs;
        self.output = Some(e.output);
    }

    fn stiff(&self, f: f64) -> bool {
        self.gs == 1 || (self.gs == 2 && f < 0.0)
    }

    /// The corners of tetrahedron `t` in increasing vertex order (SOFA's sorted Jacobian row).
    fn sorted_corners(&self, t: usize) -> [usize; 4] {
        let tet = self.tetrahedra[t];
        let mut c = [0, 1, 2, 3];
        c.sort_by_key(|&i| tet[i]);
        c
    }
}

impl_component!(VolumeMapping, "VolumeMapping", init);

impl Mapping for VolumeMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.tetrahedra.len())
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        let x = x_in.get(0);
        for (t, tet) in self.tetrahedra.iter().enumerate() {
            let p = tet.map(|v| get3(x, v as usize));
            let e = [p[1] - p[0], p[2] - p[0], p[3] - p[0]];
            x_out[t] = e[0].dot(&e[1].cross(&e[2])) / 6.0;
            let c = [
                e[1].cross(&e[2]) / 6.0,
                e[2].cross(&e[0]) / 6.0,
                e[0].cross(&e[1]) / 6.0,
            ];
            self.grad[t] = [-(c[0] + c[1] + c[2]), c[0], c[1], c[2]];
            self.pts[t] = p;
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        let v = v_in.get(0);
        for (t, tet) in self.tetrahedra.iter().enumerate() {
            let mut s = 0.0;
            for i in self.sorted_corners(t) {
                let vi = get3(v, tet[i] as usize);
                for d in 0..3 {
                    s += self.grad[t][i][d] * vi[d];
                }
            }
            v_out[t] = s;
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        for (t, tet) in self.tetrahedra.iter().enumerate() {
            for i in self.sorted_corners(t) {
                canape_types::add3(&mut f_in[0], tet[i] as usize, &(self.grad[t][i] * f_out[t]));
            }
        }
    }
    fn apply_djt(&self, dx_in: &MapInputs<'_>, f_out: &[f64], df_in: &mut [Vec<f64>], k: f64) {
        if self.gs == 0 {
            return;
        }
        let dx = dx_in.get(0);
        for (t, tet) in self.tetrahedra.iter().enumerate() {
            let f = f_out.get(t).copied().unwrap_or(0.0);
            if !self.stiff(f) {
                continue;
            }
            for (i, j, h) in hessian(&self.pts[t]) {
                let (a, b) = (tet[i] as usize, tet[j] as usize);
                canape_types::add3(&mut df_in[0], a, &(h * get3(dx, b) * (k * f)));
                canape_types::add3(&mut df_in[0], b, &(h.transpose() * get3(dx, a) * (k * f)));
            }
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        for (t, tet) in self.tetrahedra.iter().enumerate() {
            for i in self.sorted_corners(t) {
                for c in 0..3 {
                    out.push(JEntry {
                        row: t as u32,
                        input: 0,
                        col: 3 * tet[i] + c as u32,
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
        for (t, tet) in self.tetrahedra.iter().enumerate() {
            let f = f_out.get(t).copied().unwrap_or(0.0);
            if !self.stiff(f) {
                continue;
            }
            for (i, j, h) in hessian(&self.pts[t]) {
                for (r, c, m) in [(tet[i], tet[j], h), (tet[j], tet[i], h.transpose())] {
                    for p in 0..3 {
                        for q in 0..3 {
                            out.push(KEntry {
                                in_row: 0,
                                row: 3 * r + p as u32,
                                in_col: 0,
                                col: 3 * c + q as u32,
                                val: f * m[(p, q)],
                            });
                        }
                    }
                }
            }
        }
    }
}
