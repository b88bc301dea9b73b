//! `mpsched._core`: converts between Python and the simulator and releases the GIL while it runs.
//! No simulation logic lives here.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use mpsched_sim::{Column, Format, Table};

create_exception!(_core, ScenarioError, PyValueError, "A bad scenario, trace or argument (one-line message).");

fn table_to_dict<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        let list = match col {
            Column::F64(v) => PyList::new(py, v)?,
            Column::I64(v) => PyList::new(py, v)?,
            Column::Bool(v) => PyList::new(py, v)?,
            Column::Str(v) => PyList::new(py, v)?,
            Column::OptF64(v) => PyList::new(py, v)?,
            Column::OptI64(v) => PyList::new(py, v)?,
        };
        d.set_item(name, list)?;
    }
    Ok(d)
}

/// Runs a scenario given as TOML (or JSON) text; returns summary, resolved scenario and tables.
#[pyfunction]
#[pyo3(signature = (text, source, fmt = "toml", seed = None))]
fn run_scenario<'py>(py: Python<'py>, text: &str, source: &str, fmt: &str, seed: Option<u64>) -> PyResult<Bound<'py, PyDict>> {
    let format = match fmt {
        "toml" => Format::Toml,
        "json" => Format::Json,
        other => return Err(ScenarioError::new_err(format!("{source}: fmt: expected \"toml\" or \"json\", got {other:?}"))),
    };
    let (text, source) = (text.to_owned(), source.to_owned());
    let out = py
        .detach(move || mpsched_sim::run_text(&text, &source, format, seed))
        .map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("summary", &out.summary_json)?;
    d.set_item("resolved", &out.resolved_toml)?;
    d.set_item("flows", table_to_dict(py, &out.flows)?)?;
    d.set_item("subflows", table_to_dict(py, &out.subflows)?)?;
    d.set_item("timeseries", table_to_dict(py, &out.timeseries)?)?;
    d.set_item("links", table_to_dict(py, &out.links)?)?;
    // Arrow type of every column, so an all-null column keeps its type.
    let schemas = PyDict::new(py);
    for (name, t) in [("flows", &out.flows), ("subflows", &out.subflows), ("timeseries", &out.timeseries), ("links", &out.links)] {
        let sd = PyDict::new(py);
        for (col, c) in &t.columns {
            sd.set_item(col, c.type_name())?;
        }
        schemas.set_item(name, sd)?;
    }
    d.set_item("schemas", schemas)?;
    Ok(d)
}

/// Names of the built-in benchmark scenarios.
#[pyfunction]
fn bench_names() -> Vec<&'static str> {
    mpsched_sim::bench::names()
}

/// Descriptions of the built-in benchmark scenarios, by name.
#[pyfunction]
fn bench_description(name: &str) -> PyResult<&'static str> {
    mpsched_sim::bench::BENCHES
        .iter()
        .find(|b| b.0 == name)
        .map(|b| b.1)
        .ok_or_else(|| ScenarioError::new_err(format!("bench: name: unknown benchmark {name:?}, expected one of {:?}", mpsched_sim::bench::names())))
}

/// Times one benchmark scenario (fastest of `repeats` runs).
#[pyfunction]
#[pyo3(signature = (name, repeats = 1))]
#[pyo3(name = "bench")]
fn run_bench<'py>(py: Python<'py>, name: &str, repeats: u32) -> PyResult<Bound<'py, PyDict>> {
    let n = name.to_owned();
    let r = py.detach(move || mpsched_sim::bench::run_bench(&n, repeats)).ok_or_else(|| {
        ScenarioError::new_err(format!("bench: name: unknown benchmark {name:?}, expected one of {:?}", mpsched_sim::bench::names()))
    })?;
    let d = PyDict::new(py);
    d.set_item("name", &r.name)?;
    d.set_item("description", &r.description)?;
    d.set_item("sim_seconds", r.sim_seconds)?;
    d.set_item("wall_seconds", r.wall_seconds)?;
    d.set_item("events", r.events)?;
    d.set_item("packets", r.packets)?;
    d.set_item("events_per_s", r.events_per_s())?;
    d.set_item("packets_per_s", r.packets_per_s())?;
    d.set_item("realtime_factor", r.realtime_factor())?;
    d.set_item("ns_per_event", r.ns_per_event())?;
    Ok(d)
}

/// Cost of pausing at per-packet decision points (EdAR scenario, against the built-in
/// equivalent, same process).
#[pyfunction]
#[pyo3(signature = (repeats = 3))]
fn bench_decisions<'py>(py: Python<'py>, repeats: u32) -> PyResult<Bound<'py, PyDict>> {
    let r = py.detach(move || mpsched_sim::bench::decision_overhead(repeats));
    let d = PyDict::new(py);
    d.set_item("decisions", r.decisions)?;
    d.set_item("wall_builtin_s", r.wall_builtin)?;
    d.set_item("wall_paused_s", r.wall_paused)?;
    d.set_item("ns_per_decision", r.ns_per_decision())?;
    Ok(d)
}

/// Version of the compiled core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(bench_names, m)?)?;
    m.add_function(wrap_pyfunction!(bench_description, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(bench_decisions, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
