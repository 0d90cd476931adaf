//! SquareMapping (Vec1d → Vec1d): out_i = x_i², J = diag(2 x_i), geometric stiffness
//! diag(2 f_i) (Sofa/Component/Mapping/NonLinear/.../SquareMapping.inl; its geometricStiffness
//! option is None or Exact, the default).

use crate::mapping::linear::{mapping_base, resolve_mapping_ends, MappingData};
use crate::mapping::nonlinear::rigid::parse_gs;
use canape_core::component::{JEntry, KEntry, MapInputs, Mapping};
use canape_core::data::{DataKind, DataTable, Text};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext};
use canape_types::DofType;

canape_core::data_schema! {
    /// SquareMapping's own Data (after [`MappingData`]).
    struct SquareMappingData {
        geometric_stiffness: Text = ("geometricStiffness", DataKind::Str, "Exact", "Method used to compute the geometric stiffness: None (0), Exact (1)"),
    }
}

#[derive(Clone)]
pub struct SquareMapping {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    m: MappingData,
    d: SquareMappingData,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    n: usize,
    /// The input values at the last apply.
    x: Vec<f64>,
    exact: bool,
}

impl Default for SquareMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl SquareMapping {
    pub fn new() -> Self {
        let (data, m) = mapping_base(DataTable::new());
        let (data, d) = SquareMappingData::declare(data);
        SquareMapping {
            data,
            m,
            d,
            input: Vec::new(),
            output: None,
            n: 0,
            x: Vec::new(),
            exact: true,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let Some(e) = resolve_mapping_ends(ctx, &self.data, self.m) else {
            return;
        };
        if e.in_dofs != [DofType::Vec1] || e.out_dof != DofType::Vec1 {
            ctx.error(format!(
                "SquareMapping maps one Vec1d input to a Vec1d output ({} to {} given)",
                e.in_dofs
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(" "),
                e.out_dof.name()
            ));
            return;
        }
        self.exact = match parse_gs(self.data.get(self.d.geometric_stiffness)) {
            Some(0) => false,
            Some(1) => true,
            _ => {
                ctx.warn(format!(
                    "geometricStiffness '{}' is not None or Exact (SquareMapping has no Stabilized): Exact is used",
                    self.data.get(self.d.geometric_stiffness)
                ));
                true
            }
        };
        self.n = ctx.scene.state(e.inputs[0]).map_or(0, |s| s.size());
        self.x = vec![0.0; self.n];
        self.input = e.inputs;
        self.output = Some(e.output);
    }
}

impl_component!(SquareMapping, "SquareMapping", init);

impl Mapping for SquareMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.n)
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        for (i, &x) in x_in.get(0).iter().enumerate().take(self.n) {
            self.x[i] = x;
            x_out[i] = x * x;
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        for (i, v) in v_in.get(0).iter().enumerate().take(self.n) {
            v_out[i] = 2.0 * self.x[i] * v;
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        for i in 0..self.n {
            f_in[0][i] += 2.0 * self.x[i] * f_out[i];
        }
    }
    fn apply_djt(&self, dx_in: &MapInputs<'_>, f_out: &[f64], df_in: &mut [Vec<f64>], k: f64) {
        if !self.exact {
            return;
        }
        for (i, d) in dx_in.get(0).iter().enumerate().take(self.n) {
            df_in[0][i] += d * f_out[i] * 2.0 * k;
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        for i in 0..self.n {
            out.push(JEntry {
                row: i as u32,
                input: 0,
                col: i as u32,
                val: 2.0 * self.x[i],
            });
        }
    }
    fn geometric_stiffness(&self, f_out: &[f64], out: &mut Vec<KEntry>) {
        if !self.exact {
            return;
        }
        for i in 0..self.n {
            out.push(KEntry {
                in_row: 0,
                row: i as u32,
                in_col: 0,
                col: i as u32,
                val: 2.0 * f_out[i],
            });
        }
    }
}
