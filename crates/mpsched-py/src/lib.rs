//! `mpsched._core`: converts between Python and the simulator and releases the GIL while it runs.
//! No simulation logic lives here.

#![warn(missing_docs)]

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use mpsched_sim::{Column, Format, Table};

mod algos;
mod env;
mod panics;
mod pdaa3c;
mod policy;
mod pysched;
mod tracegen;
mod view;

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

/// Arrow type name of every column of `t`, so an empty or all-null column keeps its type.
fn table_types<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (col, c) in &t.columns {
        d.set_item(col, c.type_name())?;
    }
    Ok(d)
}

/// Runs a scenario given as TOML (or JSON) text; returns summary, resolved scenario and tables.
///
/// With `on_chunk`, the timeseries comes in pieces as the run goes: `on_chunk(rows, types,
/// now_s, end_s, events)` gets the rows sampled since the last call (a dict of columns, at most
/// about `chunk_rows` rows, and their Arrow type names), the simulated time, the scenario's
/// duration and the events so far, whenever that many rows wait or about 0.2 s of wall time
/// passed; the returned timeseries holds only the rows after the last call. The run is the
/// same either way.
///
/// With `trace_packets` (flow names, or `["all"]`) and `on_packets`, the packet trace of those
/// flows comes in pieces too: `on_packets(rows, types)` before each `on_chunk` call.
#[pyfunction]
#[pyo3(signature = (text, source, fmt = "toml", seed = None, on_chunk = None, chunk_rows = 65536, trace_packets = None, on_packets = None))]
#[allow(clippy::too_many_arguments)] // keyword arguments of one Python call
fn run_scenario<'py>(
    py: Python<'py>,
    text: &str,
    source: &str,
    fmt: &str,
    seed: Option<u64>,
    on_chunk: Option<Bound<'py, PyAny>>,
    chunk_rows: usize,
    trace_packets: Option<Vec<String>>,
    on_packets: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let format = parse_format(fmt, source)?;
    let (text, source) = (text.to_owned(), source.to_owned());
    // A failure left over from an abandoned run is not this run's.
    let _ = pysched::take_error();
    let Some(on_chunk) = on_chunk else {
        let out = py.detach(move || {
            panics::guard(&source, || {
                mpsched_sim::run_text(&text, &source, format, seed).map_err(|e| ScenarioError::new_err(e.to_string()))
            })
        })?;
        pysched::take_error()?;
        return output_to_dict(py, &out);
    };
    let mut sim = py.detach(|| {
        panics::guard(&source, || {
            let sc = mpsched_sim::parse_text(&text, &source, format, seed)
                .map_err(|e| ScenarioError::new_err(e.to_string()))?;
            Ok(mpsched_sim::Sim::new(sc))
        })
    })?;
    if let (Some(names), Some(_)) = (&trace_packets, &on_packets) {
        sim.trace_packets_named(names).map_err(|e| ScenarioError::new_err(format!("{source}: {e}")))?;
    }
    loop {
        let (done, rows) = py.detach(|| panics::guard(&source, || Ok(run_chunk(&mut sim, chunk_rows.max(1)))))?;
        pysched::take_error()?;
        if let Some(cb) = &on_packets {
            let pk = sim.take_packets();
            cb.call1((table_to_dict(py, &pk)?, table_types(py, &pk)?))?;
        }
        let (now_s, end_s) = (sim.now_ns() as f64 / 1e9, sim.scenario().duration_ns as f64 / 1e9);
        on_chunk.call1((table_to_dict(py, &rows)?, table_types(py, &rows)?, now_s, end_s, sim.stats().events))?;
        if done {
            break;
        }
    }
    let out = py.detach(|| panics::guard(&source, || Ok(sim.output())))?;
    output_to_dict(py, &out)
}

/// Runs `sim` until `rows` timeseries rows wait, 0.2 s of wall time passed or the run is over;
/// returns whether it is over and the rows taken.
fn run_chunk(sim: &mut mpsched_sim::Sim, rows: usize) -> (bool, Table) {
    let started = std::time::Instant::now();
    // Pause at most every sample interval (between 1 ms and 1 s of simulated time).
    let step = sim.scenario().sample_ns.clamp(1_000_000, 1_000_000_000);
    loop {
        let done = sim.run_until(sim.now_ns().saturating_add(step));
        let full = sim.timeseries_rows() >= rows || sim.packet_rows() >= rows;
        if done || full || started.elapsed().as_millis() >= 200 {
            return (done, sim.take_timeseries());
        }
    }
}

/// Checks the TOML or JSON syntax of `text` only; raises ScenarioError (one line, with the line
/// number) if it is malformed or nested too deeply.
#[pyfunction]
#[pyo3(signature = (text, source, fmt = "toml"))]
fn check_syntax(text: &str, source: &str, fmt: &str) -> PyResult<()> {
    let format = parse_format(fmt, source)?;
    mpsched_sim::Scenario::check_syntax(text, source, format).map_err(|e| ScenarioError::new_err(e.to_string()))
}

fn parse_format(fmt: &str, source: &str) -> PyResult<Format> {
    match fmt {
        "toml" => Ok(Format::Toml),
        "json" => Ok(Format::Json),
        other => Err(ScenarioError::new_err(format!("{source}: fmt: expected \"toml\" or \"json\", got {other:?}"))),
    }
}

/// The dict shape shared by `run_scenario` and `Sim.output`.
pub(crate) fn output_to_dict<'py>(py: Python<'py>, out: &mpsched_sim::RunOutput) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("summary", &out.summary_json)?;
    d.set_item("resolved", &out.resolved_toml)?;
    d.set_item("flows", table_to_dict(py, &out.flows)?)?;
    d.set_item("subflows", table_to_dict(py, &out.subflows)?)?;
    d.set_item("timeseries", table_to_dict(py, &out.timeseries)?)?;
    d.set_item("links", table_to_dict(py, &out.links)?)?;
    d.set_item("queues", table_to_dict(py, &out.queues)?)?;
    // Arrow type of every column, so an all-null column keeps its type.
    let schemas = PyDict::new(py);
    for (name, t) in [
        ("flows", &out.flows),
        ("subflows", &out.subflows),
        ("timeseries", &out.timeseries),
        ("links", &out.links),
        ("queues", &out.queues),
    ] {
        schemas.set_item(name, table_types(py, t)?)?;
    }
    // Tables only scenarios with `[[udp]]` flows have.
    for (name, t) in [("udp_flows", &out.udp_flows), ("probes", &out.probes)] {
        if let Some(t) = t {
            d.set_item(name, table_to_dict(py, t)?)?;
            schemas.set_item(name, table_types(py, t)?)?;
        }
    }
    d.set_item("schemas", schemas)?;
    // Policy-scheduled flows: decisions and wall-clock latencies (not deterministic).
    let decisions = PyDict::new(py);
    for (flow, st) in &out.decisions {
        let e = PyDict::new(py);
        e.set_item("decisions", st.decisions)?;
        e.set_item("mean_ns", st.mean_ns())?;
        e.set_item("p50_ns", st.quantile_ns(0.5))?;
        e.set_item("p99_ns", st.quantile_ns(0.99))?;
        e.set_item("max_ns", st.max_ns)?;
        decisions.set_item(flow, e)?;
    }
    d.set_item("decisions", decisions)?;
    Ok(d)
}

/// A simulation driven step by step from Python: run to the next decision point, look at the
/// flows' state, decide, continue. The GIL is released while simulating.
#[pyclass(name = "Sim", module = "mpsched._core")]
struct PySim {
    sim: mpsched_sim::Sim,
}

fn flow_index(sim: &mpsched_sim::Sim, flow: usize) -> PyResult<usize> {
    if flow < sim.scenario().flows.len() {
        Ok(flow)
    } else {
        Err(PyValueError::new_err(format!("flow: expected an index below {}, got {flow}", sim.scenario().flows.len())))
    }
}

#[pymethods]
impl PySim {
    #[new]
    #[pyo3(signature = (text, source, fmt = "toml", seed = None))]
    fn new(text: &str, source: &str, fmt: &str, seed: Option<u64>) -> PyResult<Self> {
        let format = parse_format(fmt, source)?;
        panics::guard(source, || {
            let sc = mpsched_sim::parse_text(text, source, format, seed)
                .map_err(|e| ScenarioError::new_err(e.to_string()))?;
            Ok(PySim { sim: mpsched_sim::Sim::new(sc) })
        })
    }

    /// Simulates until `until_s` (default: the end) or the next decision point. Returns
    /// ("decision", flow) for a per-packet question, ("interval", flow) at a decision interval,
    /// ("deadline", None) or ("finished", None).
    /// A Python scheduler's exception raises SchedulerError (the run cannot go on).
    #[pyo3(signature = (until_s = None))]
    fn advance(&mut self, py: Python<'_>, until_s: Option<f64>) -> PyResult<(&'static str, Option<u32>)> {
        let until = until_s.map(|s| (s.max(0.0) * 1e9).round() as u64).unwrap_or(u64::MAX);
        let sim = &mut self.sim;
        let source = sim.scenario().name.clone();
        let stop = py.detach(move || panics::guard(&source, || Ok(sim.advance(until))))?;
        pysched::take_error()?;
        Ok(match stop {
            mpsched_sim::Stop::Decision { flow } => ("decision", Some(flow)),
            mpsched_sim::Stop::Interval { flow } => ("interval", Some(flow)),
            mpsched_sim::Stop::Deadline => ("deadline", None),
            mpsched_sim::Stop::Finished => ("finished", None),
        })
    }

    /// Per-interval mode of an `external-mode` flow: 0 normal (minRTT), 1 redundant.
    fn decide_mode(&mut self, flow: usize, mode: u8) -> PyResult<()> {
        let f = flow_index(&self.sim, flow)?;
        self.sim.decide(f, mpsched_sim::Decision::Mode(mode));
        Ok(())
    }

    /// Per-interval shares of new data per subflow of an `external-weights` flow.
    fn decide_weights(&mut self, flow: usize, weights: Vec<f32>) -> PyResult<()> {
        let f = flow_index(&self.sim, flow)?;
        if weights.len() > 8 || weights.iter().any(|w| !w.is_finite()) {
            return Err(PyValueError::new_err("weights: expected at most 8 finite numbers"));
        }
        let mut w = [0f32; 8];
        w[..weights.len()].copy_from_slice(&weights);
        self.sim.decide(f, mpsched_sim::Decision::Weights(w));
        Ok(())
    }

    /// Per-packet answer of an `external-packet` flow: a subflow index, or None for minRTT's choice.
    #[pyo3(signature = (flow, subflow = None))]
    fn decide_path(&mut self, flow: usize, subflow: Option<u8>) -> PyResult<()> {
        let f = flow_index(&self.sim, flow)?;
        self.sim.decide(f, mpsched_sim::Decision::Path(subflow));
        Ok(())
    }

    /// Sets a subflow's congestion window in bytes (flows with cc = "external").
    fn set_cwnd(&mut self, flow: usize, subflow: usize, cwnd_bytes: u64) -> PyResult<()> {
        let f = flow_index(&self.sim, flow)?;
        self.sim.set_cwnd(f, subflow, cwnd_bytes);
        Ok(())
    }

    /// Simulated time in seconds.
    #[getter]
    fn now_s(&self) -> f64 {
        self.sim.now_ns() as f64 / 1e9
    }

    /// Flow names, by index.
    #[getter]
    fn flow_names(&self) -> Vec<String> {
        self.sim.scenario().flows.iter().map(|f| f.name.clone()).collect()
    }

    /// The state of a flow now: connection counters (cumulative; difference two calls for an
    /// interval) and one dict per subflow. Empty dicts before the flow starts.
    fn state<'py>(&self, py: Python<'py>, flow: usize) -> PyResult<Bound<'py, PyDict>> {
        let f = flow_index(&self.sim, flow)?;
        let d = PyDict::new(py);
        let conn = PyDict::new(py);
        let subs = PyList::empty(py);
        if let (Some(snd), Some(rcv)) = (self.sim.connection(f), self.sim.receiver(f)) {
            let (si, ri) = (snd.info(), rcv.info());
            conn.set_item("bytes_written", si.bytes_written)?;
            conn.set_item("bytes_sent_new", si.bytes_sent_new)?;
            conn.set_item("data_acked", si.data_acked)?;
            conn.set_item("bytes_delivered", ri.bytes_delivered)?;
            conn.set_item("ooo_bytes", ri.ooo_bytes)?;
            conn.set_item("ooo_byte_seconds", ri.ooo_byte_seconds)?;
            conn.set_item("rwnd_full_s", ri.rwnd_full_seconds)?;
            conn.set_item("rcv_window", ri.rcv_window)?;
            conn.set_item("send_blocked_s", si.send_blocked_seconds)?;
            conn.set_item("reinjected_bytes", si.reinjected_bytes)?;
            conn.set_item("redundant_bytes", si.redundant_bytes)?;
            conn.set_item("duplicate_bytes", ri.duplicate_bytes)?;
            for (_, s) in snd.subflows() {
                let sd = PyDict::new(py);
                sd.set_item("established", s.established)?;
                sd.set_item("srtt_ms", s.srtt.as_millis_f64())?;
                sd.set_item("rttvar_ms", s.rttvar.as_millis_f64())?;
                sd.set_item("min_rtt_ms", s.min_rtt.as_millis_f64())?;
                sd.set_item("rto_ms", s.rto.as_millis_f64())?;
                sd.set_item("cwnd_bytes", s.cwnd)?;
                sd.set_item("ssthresh_bytes", if s.ssthresh >= u64::MAX / 2 { None } else { Some(s.ssthresh) })?;
                sd.set_item("inflight_bytes", s.pipe)?;
                sd.set_item("bytes_sent", s.bytes_sent)?;
                sd.set_item("bytes_acked", s.delivered)?;
                sd.set_item("bytes_retransmitted", s.bytes_retransmitted)?;
                sd.set_item("segments_lost", s.segments_lost)?;
                sd.set_item("rto_count", s.rto_count)?;
                sd.set_item("delivery_rate_bps", s.delivery_rate * 8)?;
                subs.append(sd)?;
            }
        }
        d.set_item("conn", conn)?;
        d.set_item("subflows", subs)?;
        Ok(d)
    }

    /// Results so far, as `run_scenario` returns them.
    fn output<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = self.sim.output();
        output_to_dict(py, &out)
    }
}

/// Names of the built-in benchmark scenarios.
#[pyfunction]
fn bench_names() -> Vec<&'static str> {
    mpsched_sim::bench::names()
}

/// Descriptions of the benchmark scenarios, by name (the built-in ones and `flows-N`).
#[pyfunction]
fn bench_description(name: &str) -> PyResult<String> {
    mpsched_sim::bench::lookup(name).map(|b| b.0).ok_or_else(|| unknown_bench(name))
}

/// The error for a name that is neither a built-in benchmark nor `flows-N`.
fn unknown_bench(name: &str) -> PyErr {
    ScenarioError::new_err(format!(
        "bench: name: unknown benchmark {name:?}, expected one of {:?} or flows-N (N from 1 to 100000)",
        mpsched_sim::bench::names()
    ))
}

/// Times one benchmark scenario (fastest of `repeats` runs).
#[pyfunction]
#[pyo3(signature = (name, repeats = 1))]
#[pyo3(name = "bench")]
fn run_bench<'py>(py: Python<'py>, name: &str, repeats: u32) -> PyResult<Bound<'py, PyDict>> {
    let n = name.to_owned();
    let r = py.detach(move || mpsched_sim::bench::run_bench(&n, repeats)).ok_or_else(|| unknown_bench(name))?;
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

/// Scenario fields that hold integers (a random or swept value for them is rounded).
#[pyfunction]
fn integer_fields() -> Vec<&'static str> {
    mpsched_sim::ranges::INTEGER_FIELDS.to_vec()
}

/// Version of the compiled core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    panics::install_hook();
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SchedulerError", m.py().get_type::<pysched::SchedulerError>())?;
    m.add_class::<view::PySchedView>()?;
    m.add_class::<view::PySubflowView>()?;
    m.add_function(wrap_pyfunction!(pysched::register_scheduler, m)?)?;
    m.add_function(wrap_pyfunction!(pysched::unregister_scheduler, m)?)?;
    m.add_function(wrap_pyfunction!(pysched::scheduler_plugins, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(check_syntax, m)?)?;
    m.add_function(wrap_pyfunction!(policy::policy_digest, m)?)?;
    m.add_function(wrap_pyfunction!(policy::policy_prefixes, m)?)?;
    m.add_function(wrap_pyfunction!(pdaa3c::pdaa3c_inputs, m)?)?;
    mpsched_policy::register();
    m.add_class::<policy::PyEdarNet>()?;
    m.add_class::<policy::PyNet>()?;
    m.add_class::<policy::PyPolicy>()?;
    m.add_class::<PySim>()?;
    m.add_class::<env::PyEnv>()?;
    m.add_class::<env::PyVecEnv>()?;
    m.add_function(wrap_pyfunction!(env::obs_features, m)?)?;
    m.add_function(wrap_pyfunction!(env::obs_layout, m)?)?;
    m.add_function(wrap_pyfunction!(env::host_layout, m)?)?;
    m.add_function(wrap_pyfunction!(bench_names, m)?)?;
    m.add_function(wrap_pyfunction!(bench_description, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(bench_decisions, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(integer_fields, m)?)?;
    m.add_function(wrap_pyfunction!(algos::algorithm_label, m)?)?;
    m.add_function(wrap_pyfunction!(algos::algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(tracegen::synth_trace, m)?)?;
    m.add_function(wrap_pyfunction!(panics::panic_for_test, m)?)?;
    Ok(())
}
