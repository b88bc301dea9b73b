//! The scheduler and congestion-control registries for Python: check a `name:key=value` text
//! and list every algorithm with its parameters (help texts, docs).

use pyo3::prelude::*;
use pyo3::types::PyDict;

use mpsched_transport::algo::{AlgoEntry, AlgoSet, ParamValue, Spec};
use mpsched_transport::cc::{self, CcAlgo};
use mpsched_transport::sched::{self, SchedAlgo};

use crate::ScenarioError;

fn kind_error(kind: &str) -> PyErr {
    ScenarioError::new_err(format!("kind: expected \"scheduler\" or \"cc\", got {kind:?}"))
}

/// The label of `text` (`name` or `name:key=value,...`) for a `kind` of algorithm ("scheduler"
/// or "cc"): the canonical form results record. A bad name or parameter raises ScenarioError
/// with the one-line reason (`beta: expected (0, 1), got 2`).
#[pyfunction]
pub fn algorithm_label(kind: &str, text: &str) -> PyResult<String> {
    let label = match kind {
        "scheduler" => Spec::<SchedAlgo>::parse(text).map(|s| s.label().to_string()),
        "cc" => Spec::<CcAlgo>::parse(text).map(|s| s.label().to_string()),
        _ => return Err(kind_error(kind)),
    };
    label.map_err(|e| ScenarioError::new_err(e.to_string()))
}

fn value_to_py(py: Python<'_>, v: &ParamValue) -> PyResult<Py<PyAny>> {
    Ok(match v {
        ParamValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        ParamValue::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        ParamValue::Float(x) => x.into_pyobject(py)?.into_any().unbind(),
        ParamValue::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
    })
}

fn entries_to_py<'py, A: AlgoSet>(py: Python<'py>, entries: &[AlgoEntry]) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let d = PyDict::new(py);
        d.set_item("name", e.name)?;
        d.set_item("aliases", e.aliases.to_vec())?;
        d.set_item("doc", e.doc.trim())?;
        let defaults = A::defaults(e.name).expect("registered");
        let mut params = Vec::with_capacity(e.params.len());
        for p in e.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("type", p.kind)?;
            pd.set_item("default", value_to_py(py, &defaults.get(p.name).expect("declared"))?)?;
            pd.set_item("range", p.range)?;
            pd.set_item("doc", p.doc.trim())?;
            params.push(pd);
        }
        d.set_item("params", params)?;
        out.push(d);
    }
    Ok(out)
}

/// Every registered algorithm of `kind` ("scheduler" or "cc"): name, aliases (with the
/// parameters each presets), a one-line doc and its parameters (name, type, default, range, doc).
#[pyfunction]
pub fn algorithms<'py>(py: Python<'py>, kind: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
    match kind {
        "scheduler" => entries_to_py::<SchedAlgo>(py, sched::registry()),
        "cc" => entries_to_py::<CcAlgo>(py, cc::registry()),
        _ => Err(kind_error(kind)),
    }
}
