//! A Python object as a force field (SofaPython3's `Sofa.Core.ForceFieldVec3d` subclasses): the
//! solver's calls reach its `addForce(mparams, f, x, v)`, `addDForce(mparams, df, dx)` and
//! `addKToMatrix(mparams, nNodes, nDofs)` through the `_add_force`, `_add_dforce` and `_add_k`
//! methods of `Sofa.Core.ForceField`, with the state vectors as `(n, dofs)` numpy arrays (copies;
//! the forces written back). An exception is printed once with its traceback and the force field
//! then adds nothing, so that the simulation stays usable.

use crate::convert::{copy_back, rows, FailOnce};
use canape_core::component::{Component, ForceField};
use canape_core::data::DataTable;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use numpy::{PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

pub struct PyForceField {
    obj: Py<PyAny>,
    data: DataTable,
    /// Scalars per point of positions and of forces (from the context state at init).
    coord: usize,
    deriv: usize,
    /// The first exception, once reported; the force field is silent from then on.
    failed: FailOnce,
}

impl PyForceField {
    pub fn new(obj: Py<PyAny>) -> Self {
        PyForceField {
            obj,
            data: canape_core::data::force_field_fields(DataTable::new()).open(),
            coord: 3,
            deriv: 3,
            failed: FailOnce::default(),
        }
    }

    fn fail(&self, py: Python<'_>, what: &str, e: &PyErr) {
        let name = self
            .obj
            .bind(py)
            .getattr("name")
            .and_then(|n| n.getattr("value"))
            .map(|n| n.to_string())
            .unwrap_or_default();
        self.failed
            .report(py, &format!("Python force field {name}"), what, e);
    }
}

impl Clone for PyForceField {
    fn clone(&self) -> Self {
        Python::attach(|py| PyForceField {
            obj: self.obj.clone_ref(py),
            data: self.data.clone(),
            coord: self.coord,
            deriv: self.deriv,
            failed: FailOnce::default(),
        })
    }
}

impl Component for PyForceField {
    fn class_name(&self) -> &'static str {
        "PythonForceField"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        match ctx.state() {
            Some(s) => {
                self.coord = s.dof.coord_size();
                self.deriv = s.dof.deriv_size();
            }
            None => ctx.error("a Python force field needs a MechanicalObject in its node"),
        }
    }
}

fn mparams<'py>(py: Python<'py>, k: f64) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kFactor", k)?;
    d.set_item("bFactor", 0.0)?;
    d.set_item("mFactor", 0.0)?;
    Ok(d)
}

impl ForceField for PyForceField {
    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]) {
        if self.failed.failed() {
            return;
        }
        Python::attach(|py| {
            let r = (|| -> PyResult<()> {
                let fa = rows(py, f, self.deriv)?;
                let m = mparams(py, 0.0)?;
                self.obj.bind(py).call_method1(
                    "_add_force",
                    (
                        m,
                        fa.clone(),
                        rows(py, x, self.coord)?,
                        rows(py, v, self.deriv)?,
                    ),
                )?;
                copy_back(&fa, f)
            })();
            if let Err(e) = r {
                self.fail(py, "addForce", &e);
            }
        })
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        if self.failed.failed() {
            return;
        }
        Python::attach(|py| {
            let r = (|| -> PyResult<()> {
                let da = rows(py, df, self.deriv)?;
                self.obj.bind(py).call_method1(
                    "_add_dforce",
                    (
                        mparams(py, k_factor)?,
                        da.clone(),
                        rows(py, dx, self.deriv)?,
                    ),
                )?;
                copy_back(&da, df)
            })();
            if let Err(e) = r {
                self.fail(py, "addDForce", &e);
            }
        })
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        if self.failed.failed() {
            return;
        }
        Python::attach(|py| {
            let r = (|| -> PyResult<()> {
                // the number of points is not known here: the Python side answers for its state
                let k = self
                    .obj
                    .bind(py)
                    .call_method1("_add_k", (mparams(py, k_factor)?, self.deriv))?;
                if k.is_none() {
                    return Ok(());
                }
                let a = k.cast::<numpy::PyArrayDyn<f64>>()?;
                let shape = a.shape().to_vec();
                let r = a.readonly();
                let s = r.as_slice()?;
                match shape.as_slice() {
                    // triplets (row, col, value)
                    [_, 3] => {
                        for t in s.chunks_exact(3) {
                            m.add(offset + t[0] as usize, offset + t[1] as usize, t[2]);
                        }
                    }
                    // a dense matrix (n, n) or (n, n, 1)
                    [n, c] | [n, c, 1] if n == c => {
                        for i in 0..*n {
                            for j in 0..*n {
                                let v = s[i * n + j];
                                if v != 0.0 {
                                    m.add(offset + i, offset + j, v);
                                }
                            }
                        }
                    }
                    _ => {
                        return Err(pyo3::exceptions::PyValueError::new_err(format!(
                            "addKToMatrix returned an array of shape {shape:?}: expected (k, 3) triplets or a square matrix"
                        )))
                    }
                }
                Ok(())
            })();
            if let Err(e) = r {
                self.fail(py, "addKToMatrix", &e);
            }
        })
    }
}
