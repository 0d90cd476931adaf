//! A Python object as a mapping (SofaPython3's `Sofa.Core.Mapping_Vec3d_Vec3d` and kin): the
//! simulation's calls reach its `apply(mparams, out, in)`, `applyJ(mparams, out, in)` and
//! `applyJT(mparams, in, out)` through `Sofa.Core.Mapping`'s `_apply`, `_apply_j` and
//! `_apply_jt`, with `(n, dofs)` numpy arrays (copies; the written one copied back). Its ends are
//! its `input` and `output` links, resolved at init as the built-in mappings resolve theirs. The
//! Jacobian an assembled solver needs is measured by `applyJ` on unit vectors (J is linear). An
//! exception is printed once with its traceback and the mapping then leaves its output as it is.

use crate::convert::{copy_back, rows, FailOnce};
use canape_base::mapping::linear::{mapping_data, resolve_ends};
use canape_core::component::{Component, JEntry, MapInputs, Mapping};
use canape_core::data::DataTable;
use canape_core::scene::{ComponentId, InitContext};
use canape_types::DofType;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

pub struct PyMapping {
    obj: Py<PyAny>,
    data: DataTable,
    inputs: Vec<ComponentId>,
    in_dofs: Vec<DofType>,
    output: Option<ComponentId>,
    out_dof: DofType,
    /// Input sizes (points) at the last apply, for the Jacobian's probing.
    in_sizes: Vec<usize>,
    out_size: usize,
    failed: FailOnce,
}

impl PyMapping {
    /// `input` and `output` are the link texts the Python object was given.
    pub fn new(obj: Py<PyAny>, input: &str, output: &str) -> Self {
        let mut data = mapping_data(DataTable::new()).open();
        let _ = data.set_str("input", input);
        let _ = data.set_str("output", output);
        PyMapping {
            obj,
            data,
            inputs: Vec::new(),
            in_dofs: Vec::new(),
            output: None,
            out_dof: DofType::Vec3,
            in_sizes: Vec::new(),
            out_size: 0,
            failed: FailOnce::default(),
        }
    }

    fn fail(&self, py: Python<'_>, what: &str, e: &PyErr) {
        self.failed.report(py, "Python mapping", what, e);
    }

    /// Call `method(mparams, out, [inputs])`, copying `out` back.
    fn call_out(
        &self,
        method: &str,
        inputs: &MapInputs<'_>,
        out: &mut [f64],
        coords: bool,
    ) -> PyResult<()> {
        Python::attach(|py| {
            let r = (|| -> PyResult<()> {
                let ow = width(self.out_dof, coords);
                let o = rows(py, out, ow)?;
                let ins = PyList::empty(py);
                for k in 0..inputs.len() {
                    ins.append(rows(py, inputs.get(k), width(self.in_dofs[k], coords))?)?;
                }
                self.obj
                    .bind(py)
                    .call_method1(method, (PyDict::new(py), o.clone(), ins))?;
                copy_back(&o, out)
            })();
            r.inspect_err(|e| self.fail(py, method, e))
        })
    }
}

fn width(d: DofType, coords: bool) -> usize {
    if coords {
        d.coord_size()
    } else {
        d.deriv_size()
    }
}

impl Clone for PyMapping {
    fn clone(&self) -> Self {
        Python::attach(|py| PyMapping {
            obj: self.obj.clone_ref(py),
            data: self.data.clone(),
            inputs: self.inputs.clone(),
            in_dofs: self.in_dofs.clone(),
            output: self.output,
            out_dof: self.out_dof,
            in_sizes: self.in_sizes.clone(),
            out_size: self.out_size,
            failed: FailOnce::default(),
        })
    }
}

impl Component for PyMapping {
    fn class_name(&self) -> &'static str {
        "PythonMapping"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        let Some(e) = resolve_ends(ctx, &self.data) else {
            return;
        };
        self.in_sizes = e
            .inputs
            .iter()
            .map(|&c| ctx.scene.state(c).map_or(0, |s| s.size()))
            .collect();
        self.out_size = ctx.scene.state(e.output).map_or(0, |s| s.size());
        self.inputs = e.inputs;
        self.in_dofs = e.in_dofs;
        self.output = Some(e.output);
        self.out_dof = e.out_dof;
    }
}

impl Mapping for PyMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.inputs
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        if self.failed.failed() {
            return;
        }
        self.in_sizes = (0..x_in.len())
            .map(|k| x_in.get(k).len() / self.in_dofs[k].coord_size().max(1))
            .collect();
        self.out_size = x_out.len() / self.out_dof.coord_size().max(1);
        let _ = self.call_out("_apply", x_in, x_out, true);
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        if self.failed.failed() {
            return;
        }
        let _ = self.call_out("_apply_j", v_in, v_out, false);
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        if self.failed.failed() {
            return;
        }
        Python::attach(|py| {
            let r = (|| -> PyResult<()> {
                let o = rows(py, f_out, self.out_dof.deriv_size())?;
                let ins = PyList::empty(py);
                let mut arrays = Vec::new();
                for (k, f) in f_in.iter().enumerate() {
                    let a = rows(py, f, self.in_dofs[k].deriv_size())?;
                    ins.append(a.clone())?;
                    arrays.push(a);
                }
                self.obj
                    .bind(py)
                    .call_method1("_apply_jt", (PyDict::new(py), ins, o))?;
                for (a, f) in arrays.iter().zip(f_in.iter_mut()) {
                    copy_back(a, f)?;
                }
                Ok(())
            })();
            if let Err(e) = r {
                self.fail(py, "applyJT", &e);
            }
        })
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        // J is linear: its column for input scalar j is applyJ of the unit vector e_j
        if self.failed.failed() {
            return;
        }
        let n_out = self.out_size * self.out_dof.deriv_size();
        let mut col = vec![0.0; n_out];
        for (k, (&n, dof)) in self.in_sizes.iter().zip(&self.in_dofs).enumerate() {
            let len = n * dof.deriv_size();
            let mut unit: Vec<Vec<f64>> = self
                .in_sizes
                .iter()
                .zip(&self.in_dofs)
                .map(|(&m, d)| vec![0.0; m * d.deriv_size()])
                .collect();
            for j in 0..len {
                unit[k][j] = 1.0;
                col.iter_mut().for_each(|c| *c = 0.0);
                let inputs = ProbeInputs(&unit);
                if self.probe_j(&inputs, &mut col).is_err() {
                    return;
                }
                for (row, &v) in col.iter().enumerate() {
                    if v != 0.0 {
                        out.push(JEntry {
                            row: row as u32,
                            input: k as u32,
                            col: j as u32,
                            val: v,
                        });
                    }
                }
                unit[k][j] = 0.0;
            }
        }
    }
}

/// Unit vectors for the Jacobian's probing (MapInputs reads the scene's states; these do not
/// live there).
struct ProbeInputs<'a>(&'a [Vec<f64>]);

impl PyMapping {
    fn probe_j(&self, inputs: &ProbeInputs<'_>, out: &mut [f64]) -> PyResult<()> {
        Python::attach(|py| {
            let r = (|| -> PyResult<()> {
                let o = rows(py, out, self.out_dof.deriv_size())?;
                let ins = PyList::empty(py);
                for (k, v) in inputs.0.iter().enumerate() {
                    ins.append(rows(py, v, self.in_dofs[k].deriv_size())?)?;
                }
                self.obj
                    .bind(py)
                    .call_method1("_apply_j", (PyDict::new(py), o.clone(), ins))?;
                copy_back(&o, out)
            })();
            r.inspect_err(|e| self.fail(py, "applyJ", e))
        })
    }
}
