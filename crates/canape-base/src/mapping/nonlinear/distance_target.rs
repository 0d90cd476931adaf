//! DistanceFromTargetMapping (Sofa/Component/Mapping/NonLinear/.../DistanceFromTargetMapping.inl):
//! one Vec1 output per entry of `indices`, the distance of input point `indices[i]` from the fixed
//! point `targetPositions[i]` minus `restLengths[i]` (missing rest lengths are 0, as SOFA sets
//! them). J row i = uᵀ at the point, u the unit direction from the target (SOFA's (1, 0, 0) when
//! the distance is below 1e-10); geometric stiffness f/l (I − u uᵀ) on the point, with the
//! `geometricStiffness` choice of DistanceMapping (Stabilized keeps only outputs in extension,
//! f < 0).

use crate::mapping::linear::{mapping_base, resolve_mapping_ends, MappingData};
use crate::mapping::nonlinear::rigid::parse_gs;
use canape_core::component::{JEntry, KEntry, MapInputs, Mapping};
use canape_core::data::{DataKind, DataTable, Ints, Real, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext};
use canape_types::{get3, DofType, Mat3, Vec3};

canape_core::data_schema! {
    /// DistanceFromTargetMapping's own Data (after [`MappingData`]).
    struct DistanceFromTargetData {
        indices: Ints = ("indices", DataKind::Ints(0), "", "Indices of the parent points"),
        target_positions: Reals = ("targetPositions", DataKind::Reals(3), "", "Positions to compute the distances from"),
        rest_lengths: Reals = ("restLengths", DataKind::Reals(1), "", "Rest lengths of the connections"),
        geometric_stiffness: Text = ("geometricStiffness", DataKind::Str, "Stabilized", "Method used to compute the geometric stiffness: None (0), Exact (1), Stabilized (2)"),
        show_object_scale: Real = ("showObjectScale", DataKind::Real, "0", "Scale for object display"),
        show_color: Reals = ("showColor", DataKind::Reals(4), "1 1 0 1", "Color for object display."),
    }
}

#[derive(Clone)]
pub struct DistanceFromTargetMapping {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    m: MappingData,
    d: DistanceFromTargetData,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    indices: Vec<u32>,
    targets: Vec<Vec3>,
    rest: Vec<f64>,
    /// Per output at the last apply: unit direction and 1/length (0 below 1e-10).
    dir: Vec<Vec3>,
    inv_len: Vec<f64>,
    gs: u32,
}

impl Default for DistanceFromTargetMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl DistanceFromTargetMapping {
    pub fn new() -> Self {
        let (data, m) = mapping_base(DataTable::new());
        let (data, d) = DistanceFromTargetData::declare(data);
        DistanceFromTargetMapping {
            data,
            m,
            d,
            input: Vec::new(),
            output: None,
            indices: Vec::new(),
            targets: Vec::new(),
            rest: Vec::new(),
            dir: Vec::new(),
            inv_len: Vec::new(),
            gs: 2,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let Some(e) = resolve_mapping_ends(ctx, &self.data, self.m) else {
            return;
        };
        if e.inputs.len() != 1 || e.out_dof != DofType::Vec1 || e.in_dofs[0] != DofType::Vec3 {
            ctx.error(format!(
                "DistanceFromTargetMapping maps one Vec3d input to a Vec1d output ({} to {} given)",
                e.in_dofs
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(" "),
                e.out_dof.name()
            ));
            return;
        }
        self.gs = match parse_gs(self.data.get(self.d.geometric_stiffness)) {
            Some(g) => g,
            None => {
                ctx.warn(format!(
                    "geometricStiffness '{}' is not None, Exact, Stabilized, 0, 1 or 2: None is used, as SOFA reads it",
                    self.data.get(self.d.geometric_stiffness)
                ));
                0
            }
        };
        let indices = self.data.get(self.d.indices).to_vec();
        let targets: Vec<Vec3> = self
            .data
            .get(self.d.target_positions)
            .chunks_exact(3)
            .map(|p| Vec3::new(p[0], p[1], p[2]))
            .collect();
        if indices.is_empty() && !targets.is_empty() {
            // SOFA asserts the sizes match in debug builds; its release builds map nothing
            ctx.warn(format!(
                "no indices for the {} targetPositions: nothing is mapped (give the index of each target's point)",
                targets.len()
            ));
        } else if indices.len() != targets.len() {
            ctx.error(format!(
                "{} indices but {} targetPositions: each index needs its target",
                indices.len(),
                targets.len()
            ));
            return;
        }
        if targets.iter().any(|t| !t.iter().all(|v| v.is_finite())) {
            ctx.error("targetPositions holds a non-finite value");
            return;
        }
        let size = ctx.scene.state(e.inputs[0]).map_or(0, |s| s.size());
        if let Some(bad) = indices.iter().find(|&&i| i as usize >= size) {
            ctx.error(format!(
                "index {bad} is out of the input state ({size} points)"
            ));
            return;
        }
        // unset rest lengths are 0 (SOFA's init)
        let mut rest = self.data.get(self.d.rest_lengths).to_vec();
        rest.resize(indices.len(), 0.0);
        let _ = self
            .data
            .put(self.d.rest_lengths, Value::Reals(rest.clone()));
        self.rest = rest;
        self.dir = vec![Vec3::zeros(); indices.len()];
        self.inv_len = vec![0.0; indices.len()];
        self.indices = indices;
        self.targets = targets;
        self.input = e.inputs;
        self.output = Some(e.output);
    }

    fn stiff(&self, f: f64) -> bool {
        self.gs == 1 || (self.gs == 2 && f < 0.0)
    }

    /// (I − u uᵀ) f / l for output `i`.
    fn block(&self, i: usize, f: f64) -> Mat3 {
        let u = self.dir[i];
        (Mat3::identity() - u * u.transpose()) * (f * self.inv_len[i])
    }
}

impl_component!(DistanceFromTargetMapping, "DistanceFromTargetMapping", init);

impl Mapping for DistanceFromTargetMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.indices.len())
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        let x = x_in.get(0);
        for (i, &p) in self.indices.iter().enumerate() {
            let gap = get3(x, p as usize) - self.targets[i];
            let l = gap.norm();
            x_out[i] = l - self.rest[i];
            if l > 1e-10 {
                self.inv_len[i] = 1.0 / l;
                self.dir[i] = gap * self.inv_len[i];
            } else {
                self.inv_len[i] = 0.0;
                self.dir[i] = Vec3::new(1.0, 0.0, 0.0);
            }
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        let v = v_in.get(0);
        for (i, &p) in self.indices.iter().enumerate() {
            let vp = get3(v, p as usize);
            let u = self.dir[i];
            let mut s = 0.0;
            for c in 0..3 {
                s += u[c] * vp[c];
            }
            v_out[i] = s;
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        for (i, &p) in self.indices.iter().enumerate() {
            canape_types::add3(&mut f_in[0], p as usize, &(self.dir[i] * f_out[i]));
        }
    }
    fn apply_djt(&self, dx_in: &MapInputs<'_>, f_out: &[f64], df_in: &mut [Vec<f64>], k: f64) {
        if self.gs == 0 {
            return;
        }
        for (i, &p) in self.indices.iter().enumerate() {
            let f = f_out.get(i).copied().unwrap_or(0.0);
            if !self.stiff(f) {
                continue;
            }
            let df = self.block(i, f) * k * get3(dx_in.get(0), p as usize);
            canape_types::add3(&mut df_in[0], p as usize, &df);
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        for (i, &p) in self.indices.iter().enumerate() {
            for c in 0..3 {
                out.push(JEntry {
                    row: i as u32,
                    input: 0,
                    col: 3 * p + c as u32,
                    val: self.dir[i][c],
                });
            }
        }
    }
    fn geometric_stiffness(&self, f_out: &[f64], out: &mut Vec<KEntry>) {
        if self.gs == 0 {
            return;
        }
        for (i, &p) in self.indices.iter().enumerate() {
            let f = f_out.get(i).copied().unwrap_or(0.0);
            if !self.stiff(f) {
                continue;
            }
            let blk = self.block(i, f);
            for r in 0..3 {
                for c in 0..3 {
                    out.push(KEntry {
                        in_row: 0,
                        row: 3 * p + r as u32,
                        in_col: 0,
                        col: 3 * p + c as u32,
                        val: blk[(r, c)],
                    });
                }
            }
        }
    }
}
