//! ConstantForceField (Sofa/Component/MechanicalLoad/.../ConstantForceField.inl): a constant
//! force on a set of points, on any DOF type, with its in-place reaction to edits.

use super::*;

canape_core::data_schema! {
    /// ConstantForceField's own Data (after the force-field Data).
    pub struct ConstantForceFieldData {
        indices: Ints = ("indices", DataKind::Ints(0), "", "indices where the forces are applied (all points when empty)"),
        forces: Reals = ("forces", DataKind::Reals(0), "", "applied forces at each point"),
        force: Reals = ("force", DataKind::Reals(0), "", "applied force to all points if forces attribute is not specified"),
        total_force: Reals = ("totalForce", DataKind::Reals(0), "", "total force for all points, will be distributed uniformly over points"),
        show_arrow_size: Real = ("showArrowSize", DataKind::Real, "0", "Size of the drawn arrows (0->no arrows, sign->direction of drawing. (default=0)"),
        show_color: Reals = ("showColor", DataKind::Reals(4), "0.2 0.9 0.3 1", "Color for object display (default: [0.2,0.9,0.3,1])"),
    }
}

/// (point, force) pairs, `ds` values per force.
type Loads = Vec<(usize, Vec<f64>)>;

#[derive(Clone)]
pub struct ConstantForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: ConstantForceFieldData,
    /// (point, force) pairs, `ds` values per force.
    loads: Loads,
    ds: usize,
    /// The state's size and DOF type, when init found a state.
    state: Option<(usize, DofType)>,
}

impl Default for ConstantForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl ConstantForceField {
    pub fn new() -> Self {
        let data = canape_core::data::force_field_fields(DataTable::new());
        let (data, d) = ConstantForceFieldData::declare(data);
        ConstantForceField {
            data,
            d,
            loads: Vec::new(),
            ds: 3,
            state: None,
        }
    }

    /// The forces the Data give on a state of `n` points of `dof`, with SOFA's precedence:
    /// `totalForce` shared equally over the points, else one of `forces` per point, else the
    /// single force of `forces` or `force` on every point; and the warning when none is given.
    /// An error makes the component do nothing.
    fn loads(
        &self,
        n: usize,
        dof: DofType,
    ) -> Result<(Loads, Option<&'static str>), ConstantForceError> {
        let (t, d) = (&self.data, &self.d);
        let ds = dof.deriv_size();
        let indices = t.get(d.indices);
        let idx: Vec<usize> = if indices.is_empty() {
            (0..n).collect()
        } else {
            indices.iter().map(|&i| i as usize).collect()
        };
        if let Some(bad) = idx.iter().find(|&&i| i >= n) {
            return Err(ConstantForceError::IndexOutOfRange { index: *bad, n });
        }
        let forces = t.get(d.forces);
        let force = t.get(d.force);
        let total = t.get(d.total_force);
        let one = |s: &[f64], k: usize| s[ds * k..ds * (k + 1)].to_vec();
        for (name, v) in [("forces", forces), ("force", force), ("totalForce", total)] {
            if !v.len().is_multiple_of(ds) {
                return Err(ConstantForceError::NotMultiple {
                    name,
                    values: v.len(),
                    dof,
                    ds,
                });
            }
        }
        let loads = if total.len() == ds && !idx.is_empty() {
            let f: Vec<f64> = total.iter().map(|t| t / idx.len() as f64).collect();
            idx.iter().map(|&i| (i, f.clone())).collect()
        } else if forces.len() == ds * idx.len() && !forces.is_empty() {
            idx.iter()
                .enumerate()
                .map(|(k, &i)| (i, one(forces, k)))
                .collect()
        } else if forces.len() == ds || force.len() == ds {
            let f = if forces.len() == ds {
                one(forces, 0)
            } else {
                one(force, 0)
            };
            idx.iter().map(|&i| (i, f.clone())).collect()
        } else if !forces.is_empty() {
            return Err(ConstantForceError::ForcesCount {
                vectors: forces.len() / ds,
                indices: idx.len(),
            });
        } else {
            let none = "no force given (forces, force or totalForce): the component does nothing";
            return Ok((Vec::new(), Some(none)));
        };
        Ok((loads, None))
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.loads.clear();
        self.state = None;
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context");
            return;
        };
        let (n, dof) = (st.size(), st.dof);
        self.ds = dof.deriv_size();
        self.state = Some((n, dof));
        match self.loads(n, dof) {
            Ok((loads, warning)) => {
                self.loads = loads;
                if let Some(w) = warning {
                    ctx.warn(w);
                }
            }
            Err(e) => ctx.error(e.to_string()),
        }
    }
}

/// Why a ConstantForceField's Data give no forces (the component then does nothing).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConstantForceError {
    #[error("index {index} is out of range (the state has {n} points)")]
    IndexOutOfRange { index: usize, n: usize },
    #[error("{name} has {values} values: a force on this {} state has {ds}", .dof.name())]
    NotMultiple {
        name: &'static str,
        values: usize,
        dof: DofType,
        ds: usize,
    },
    #[error("forces has {vectors} vectors for {indices} indices")]
    ForcesCount { vectors: usize, indices: usize },
}

impl ConstantForceField {
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        let in_place = [
            d.indices.index(),
            d.forces.index(),
            d.force.index(),
            d.total_force.index(),
        ];
        let Some((n, dof)) = self.state else {
            return Reaction::Reinit;
        };
        if !changed.only(&in_place) {
            return Reaction::Reinit;
        }
        match self.loads(n, dof) {
            Ok((loads, None)) => {
                self.loads = loads;
                Reaction::Updated
            }
            Ok((_, Some(_))) => Reaction::Reinit,
            Err(e) => Reaction::Refused(vec![e.to_string()]),
        }
    }
}

canape_core::impl_component!(ConstantForceField, "ConstantForceField", init, data_changed);

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
