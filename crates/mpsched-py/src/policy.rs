//! `_core.EdarNet`: EdAR networks exported as safetensors + JSON, evaluated in Rust
//! (`mpsched-policy`); `_core.Net`: generic exported networks (`mpsched.policies.export`);
//! `_core.policy_digest`: what a run key records of a policy scheduler.

use numpy::{PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;

use mpsched_policy::edar::EdarNet;
use mpsched_policy::net::Net;

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
        let layout = mpsched_transport::observe::ObsLayout { max_paths, history: self.net.history, max_flows: 0 };
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

/// The SHA-256 of the policy a scheduler name loads (`edar`, `edar:PATH`, `policy:PATH`), or
/// None for a name that is not a policy; a bad policy file is a ScenarioError.
#[pyfunction]
pub fn policy_digest(name: &str) -> PyResult<Option<String>> {
    match mpsched_policy::policy_digest(name) {
        None => Ok(None),
        Some(Ok(d)) => Ok(Some(d)),
        Some(Err(e)) => Err(ScenarioError::new_err(e.0)),
    }
}

/// The prefixes of scheduler names that load a policy file (`policy`, `edar`): the text after
/// their colon is a path, not parameters.
#[pyfunction]
pub fn policy_prefixes() -> Vec<String> {
    mpsched_policy::register();
    mpsched_transport::SchedSpec::loader_prefixes()
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

/// Any loaded policy file, as the runtime runs it: `act` gives the action vectors its network
/// computes for observations of its own layout (a scheduler's or a host's).
#[pyclass(name = "Policy", module = "mpsched._core", unsendable)]
pub struct PyPolicy {
    net: mpsched_policy::AnyNet,
    layout: mpsched_policy::spec::Layout,
    action_len: usize,
    sha256: String,
}

#[pymethods]
impl PyPolicy {
    #[new]
    fn new(path: &str) -> PyResult<Self> {
        let p = mpsched_policy::load(std::path::Path::new(path)).map_err(|e| ScenarioError::new_err(e.0))?;
        let (layout, action_len) = match &p.role {
            mpsched_policy::Role::Scheduler(s) => {
                (mpsched_policy::spec::Layout::Sched(s.layout), s.action.len(s.layout.max_paths))
            }
            mpsched_policy::Role::Host(h) => (mpsched_policy::spec::Layout::Host(h.layout), h.action_len()),
        };
        Ok(PyPolicy { net: p.net.clone(), layout, action_len, sha256: p.sha256.clone() })
    }

    /// Action vectors `[B, action_len]` for observations `[B, obs_len]`.
    fn act<'py>(&mut self, py: Python<'py>, obs: PyReadonlyArray2<'py, f32>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let a = obs.as_array();
        let (b, d) = (a.shape()[0], a.shape()[1]);
        if d != self.layout.size() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "obs: expected {} values per row, got {d}",
                self.layout.size()
            )));
        }
        let mut row = vec![0.0f32; d];
        let mut out = vec![vec![0.0f32; self.action_len]; b];
        for (i, o) in out.iter_mut().enumerate() {
            row.iter_mut().enumerate().for_each(|(k, x)| *x = a[[i, k]]);
            self.net.act(&row, &self.layout, o);
        }
        PyArray2::from_vec2(py, &out).map_err(Into::into)
    }

    #[getter]
    fn obs_len(&self) -> usize {
        self.layout.size()
    }
    #[getter]
    fn action_len(&self) -> usize {
        self.action_len
    }
    #[getter]
    fn sha256(&self) -> String {
        self.sha256.clone()
    }
}
