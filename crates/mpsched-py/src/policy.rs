//! `_core.EdarNet` and `_core.run_edar`: EdAR networks exported as safetensors + JSON,
//! evaluated in Rust (`mpsched-policy`), alone or driving a simulation; `_core.Net`: generic
//! exported networks (`mpsched.policies.export`).

use numpy::{PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use mpsched_policy::driver::run_edar as drive;
use mpsched_policy::edar::EdarNet;
use mpsched_policy::net::Net;
use mpsched_sim::env::EnvSpec;

use crate::ScenarioError;

/// A loaded EdAR Q-network (checks the description and every tensor shape).
#[pyclass(name = "EdarNet", module = "mpsched._core", unsendable)]
pub struct PyEdarNet {
    net: EdarNet,
}

/// Q-values `[B, 2]` and connection-start flags `[B]`.
type QValues<'py> = (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<bool>>);

#[pymethods]
impl PyEdarNet {
    #[new]
    fn new(path: &str) -> PyResult<Self> {
        let net = EdarNet::load(std::path::Path::new(path)).map_err(|e| ScenarioError::new_err(e.0))?;
        Ok(PyEdarNet { net })
    }

    /// Q-values `[B, 2]` and the connection-start flags `[B]` of flat observations `[B, D]`.
    fn q_values<'py>(
        &mut self,
        py: Python<'py>,
        obs: PyReadonlyArray2<'py, f32>,
        max_paths: usize,
    ) -> PyResult<QValues<'py>> {
        let a = obs.as_array();
        let (b, d) = (a.shape()[0], a.shape()[1]);
        let layout = mpsched_sim::env::ObsLayout { max_paths, history: self.net.history, max_flows: 0 };
        let want = layout.size();
        if d != want {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "obs: expected {want} values per row (history {}, max_paths {max_paths}), got {d}",
                self.net.history
            )));
        }
        let mut q = vec![[0.0f32; 2]; b];
        let mut start = vec![false; b];
        let mut row = vec![0.0f32; d];
        for i in 0..b {
            for (k, x) in row.iter_mut().enumerate() {
                *x = a[[i, k]];
            }
            start[i] = self.net.q_values(&row, max_paths, &mut q[i]);
        }
        Ok((PyArray2::from_vec2(py, &q.iter().map(|r| r.to_vec()).collect::<Vec<_>>())?, PyArray1::from_vec(py, start)))
    }

    #[getter]
    fn history(&self) -> usize {
        self.net.history
    }
    #[getter]
    fn variant(&self) -> String {
        self.net.variant.clone()
    }
}

/// Runs the env spec's scenario with the EdAR checkpoint deciding for the controlled flow;
/// returns (results dict as `run_scenario`, decision stats dict).
#[pyfunction]
pub fn run_edar<'py>(
    py: Python<'py>,
    spec_json: &str,
    seed: u64,
    checkpoint: &str,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let (out, stats) = crate::panics::guard("<policy run>", || {
        let spec = EnvSpec::from_json(spec_json).map_err(|e| ScenarioError::new_err(e.to_string()))?;
        let mut net = EdarNet::load(std::path::Path::new(checkpoint)).map_err(|e| ScenarioError::new_err(e.0))?;
        py.detach(move || drive(spec, seed, &mut net)).map_err(|e| ScenarioError::new_err(e.to_string()))
    })?;
    let d = crate::output_to_dict(py, &out)?;
    let s = PyDict::new(py);
    s.set_item("decisions", stats.decisions)?;
    s.set_item("redundant", stats.redundant)?;
    s.set_item("mean_ns", stats.mean_ns())?;
    s.set_item("max_ns", stats.max_ns)?;
    Ok((d, s))
}

/// A loaded generic network (`"algorithm": "net"` checkpoint).
#[pyclass(name = "Net", module = "mpsched._core", unsendable)]
pub struct PyNet {
    net: Net,
}

#[pymethods]
impl PyNet {
    #[new]
    fn new(path: &str) -> PyResult<Self> {
        let net = Net::load(std::path::Path::new(path)).map_err(|e| ScenarioError::new_err(e.0))?;
        Ok(PyNet { net })
    }

    /// The head's output `[B, output_len]` for observations `[B, input_len]`.
    fn forward<'py>(
        &mut self,
        py: Python<'py>,
        obs: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let a = obs.as_array();
        let (b, d) = (a.shape()[0], a.shape()[1]);
        if d != self.net.input_len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "obs: expected {} values per row, got {d}",
                self.net.input_len()
            )));
        }
        let mut row = vec![0.0f32; d];
        let mut out = Vec::with_capacity(b);
        for i in 0..b {
            row.iter_mut().enumerate().for_each(|(k, x)| *x = a[[i, k]]);
            out.push(self.net.forward(&row).to_vec());
        }
        PyArray2::from_vec2(py, &out).map_err(Into::into)
    }

    #[getter]
    fn input_len(&self) -> usize {
        self.net.input_len()
    }
    #[getter]
    fn output_len(&self) -> usize {
        self.net.output_len()
    }
}
