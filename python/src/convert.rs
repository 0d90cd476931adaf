//! Data values to Python objects and back: lists of reals become numpy arrays shaped by the
//! Data's width (a list of Vec3 is `(n, 3)`), scalars become Python scalars. Values going into
//! the scene are taken as SOFA text (what an XML attribute would hold) or as a flat float array.

use canape_core::data::{DataKind, Value};
use numpy::{IntoPyArray, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyList;

/// Elements per row of a list Data (1 for a flat list or a fixed-size vector).
pub fn width(kind: DataKind) -> usize {
    match kind {
        DataKind::Reals(w) | DataKind::Ints(w) if w > 1 => w,
        _ => 1,
    }
}

/// The kind as a short string for the Python side: `real`, `reals:3`, `vector:3`, `ints:2`…
pub fn kind_name(kind: DataKind) -> String {
    match kind {
        DataKind::Bool => "bool".into(),
        DataKind::Int => "int".into(),
        DataKind::Real => "real".into(),
        DataKind::Str => "str".into(),
        DataKind::File => "file".into(),
        DataKind::Reals(w) => format!("reals:{w}"),
        DataKind::Vector(n) => format!("vector:{n}"),
        DataKind::Ints(w) => format!("ints:{w}"),
        DataKind::Words => "words".into(),
    }
}

/// A Data value as a Python object (numpy arrays for lists of numbers, taking the value's buffer).
pub fn to_py(py: Python<'_>, v: Value, kind: DataKind) -> PyResult<Py<PyAny>> {
    let w = width(kind);
    Ok(match v {
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::Real(r) => r.into_pyobject(py)?.into_any().unbind(),
        Value::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Words(ws) => PyList::new(py, ws)?.into_any().unbind(),
        Value::Reals(r) => {
            let n = r.len();
            // the value is moved into numpy: one copy from the scene in all
            let a = r.into_pyarray(py);
            if w > 1 {
                a.reshape([n / w, w])?.into_any().unbind()
            } else {
                a.into_any().unbind()
            }
        }
        Value::Ints(r) => {
            let v: Vec<i64> = r.iter().map(|&i| i64::from(i)).collect();
            let n = v.len();
            let a = v.into_pyarray(py);
            if w > 1 {
                a.reshape([n / w, w])?.into_any().unbind()
            } else {
                a.into_any().unbind()
            }
        }
    })
}

/// Keeps a state vector's buffer alive for the numpy arrays that view it.
#[pyclass(module = "canape._native", frozen)]
pub struct Pinned {
    buf: std::sync::Arc<Vec<f64>>,
}

/// A read-only `(n, w)` numpy array over `buf`, without copying; the array keeps the buffer
/// alive (its base is a [`Pinned`]).
pub fn view(py: Python<'_>, buf: std::sync::Arc<Vec<f64>>, w: usize) -> PyResult<Py<PyAny>> {
    let w = w.max(1);
    let n = buf.len() / w;
    let owner = Bound::new(py, Pinned { buf })?;
    let data: &[f64] = &owner.get().buf;
    let shape = numpy::ndarray::ArrayView2::from_shape((n, w), &data[..n * w])
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    // SAFETY: the array's base is `owner`, which holds the Arc of the buffer: the memory lives
    // as long as the array, and the state never writes a buffer it shares (Arc::make_mut
    // copies first), so the array sees it unchanged.
    let arr =
        unsafe { numpy::PyArray2::<f64>::borrow_from_array(&shape, owner.clone().into_any()) };
    let kw = pyo3::types::PyDict::new(py);
    kw.set_item("write", false)?;
    arr.call_method("setflags", (), Some(&kw))?;
    if w == 1 {
        return Ok(arr.reshape([n])?.into_any().unbind());
    }
    Ok(arr.into_any().unbind())
}

/// A flat vector as an `(n, w)` numpy array (a copy), for a Python component's callback.
pub fn rows<'py>(py: Python<'py>, v: &[f64], w: usize) -> PyResult<Bound<'py, PyAny>> {
    let a = v.to_vec().into_pyarray(py);
    Ok(a.reshape([v.len() / w.max(1), w.max(1)])?.into_any())
}

/// Copy the array a callback wrote (same length as `out`) back into `out`.
pub fn copy_back(a: &Bound<'_, PyAny>, out: &mut [f64]) -> PyResult<()> {
    let a = a.cast::<numpy::PyArrayDyn<f64>>()?;
    let r = a.readonly();
    let s = r.as_slice()?;
    if s.len() != out.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{} values returned for {}",
            s.len(),
            out.len()
        )));
    }
    out.copy_from_slice(s);
    Ok(())
}

/// A Python force field's or mapping's first exception, printed once with its traceback; the
/// component does nothing from then on (the simulation stays usable).
#[derive(Default)]
pub struct FailOnce(std::sync::Mutex<bool>);

impl FailOnce {
    pub fn failed(&self) -> bool {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn report(&self, py: Python<'_>, who: &str, what: &str, e: &PyErr) {
        let mut f = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !*f {
            let msg = format!(
                "{who}: {what} raised (it does nothing from now on)\n{}\n",
                crate::controller::describe(py, e)
            );
            let _ = py
                .import("sys")
                .and_then(|s| s.getattr("stderr"))
                .and_then(|e| e.call_method1("write", (msg,)));
            *f = true;
        }
    }
}
