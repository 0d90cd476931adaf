//! Mechanical loads: ConstantForceField (Sofa/Component/MechanicalLoad/.../ConstantForceField.inl):
//! a constant force on a set of points — one force per index, one force for all, or a total
//! force shared equally — on any DOF type (a force has the state's derivative size: 6 values,
//! force and torque, on a Rigid3 state).

use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;

pub struct ConstantForceField {
    data: DataTable,
    /// (point, force) pairs, `ds` values per force.
    loads: Vec<(usize, Vec<f64>)>,
    ds: usize,
}

impl Default for ConstantForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl ConstantForceField {
    pub fn new() -> Self {
        let data = canape_core::data::force_field_fields(DataTable::new())
            .with(
                "indices",
                DataKind::Ints(0),
                "",
                "indices where the forces are applied (all points when empty)",
            )
            .with(
                "forces",
                DataKind::Reals(0),
                "",
                "applied forces at each point",
            )
            .with(
                "force",
                DataKind::Reals(0),
                "",
                "applied force to all points if forces attribute is not specified",
            )
            .with(
                "totalForce",
                DataKind::Reals(0),
                "",
                "total force for all points, will be distributed uniformly over points",
            )
            .with(
                "showArrowSize",
                DataKind::Real,
                "0",
                "Size of the drawn arrows (0->no arrows, sign->direction of drawing. (default=0)",
            )
            .with(
                "showColor",
                DataKind::Reals(4),
                "0.2 0.9 0.3 1",
                "Color for object display (default: [0.2,0.9,0.3,1])",
            );
        ConstantForceField {
            data,
            loads: Vec::new(),
            ds: 3,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.loads.clear();
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        let n = st.size();
        let ds = st.dof.deriv_size();
        self.ds = ds;
        let idx: Vec<usize> = if self.data.ints("indices").is_empty() {
            (0..n).collect()
        } else {
            self.data
                .ints("indices")
                .iter()
                .map(|&i| i as usize)
                .collect()
        };
        if let Some(bad) = idx.iter().find(|&&i| i >= n) {
            ctx.error(format!(
                "index {bad} is out of range (the state has {n} points)"
            ));
            return;
        }
        let forces = self.data.reals("forces").to_vec();
        let force = self.data.reals("force").to_vec();
        let total = self.data.reals("totalForce").to_vec();
        let one = |s: &[f64], k: usize| s[ds * k..ds * (k + 1)].to_vec();
        for (name, v) in [
            ("forces", &forces),
            ("force", &force),
            ("totalForce", &total),
        ] {
            if !v.len().is_multiple_of(ds) {
                ctx.error(format!(
                    "{name} has {} values: a force on this {} state has {ds}",
                    v.len(),
                    st.dof.name()
                ));
                return;
            }
        }
        if total.len() == ds && !idx.is_empty() {
            let f: Vec<f64> = total.iter().map(|t| t / idx.len() as f64).collect();
            self.loads = idx.iter().map(|&i| (i, f.clone())).collect();
        } else if forces.len() == ds * idx.len() && !forces.is_empty() {
            self.loads = idx
                .iter()
                .enumerate()
                .map(|(k, &i)| (i, one(&forces, k)))
                .collect();
        } else if forces.len() == ds || force.len() == ds {
            let f = if forces.len() == ds {
                one(&forces, 0)
            } else {
                one(&force, 0)
            };
            self.loads = idx.iter().map(|&i| (i, f.clone())).collect();
        } else if !forces.is_empty() {
            ctx.error(format!(
                "forces has {} vectors for {} indices",
                forces.len() / ds,
                idx.len()
            ));
        } else {
            ctx.warn("no force given (forces, force or totalForce): the component does nothing");
        }
    }
}

impl_component!(ConstantForceField, "ConstantForceField", init);

impl ForceField for ConstantForceField {
    fn add_force(&mut self, _x: &[f64], _v: &[f64], f: &mut [f64]) {
        let ds = self.ds;
        for (i, g) in &self.loads {
            for (o, v) in f[ds * i..ds * (i + 1)].iter_mut().zip(g) {
                *o += v;
            }
        }
    }
    fn add_dforce(&mut self, _dx: &[f64], _df: &mut [f64], _k_factor: f64) {}
    fn add_k_to_matrix(&self, _m: &mut dyn MatrixSink, _k_factor: f64, _offset: usize) {}
}
