//! `_core.Env` and `_core.VecEnv`: the learning environments of `mpsched-sim::env`, writing
//! observations, reward terms and flags into numpy arrays the caller allocated once. Every
//! step runs with the GIL released; a panic of the core becomes a one-line `ScenarioError`
//! (`panics::guard`).

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray1, PyReadwriteArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use mpsched_sim::env::features::feature_groups;
use mpsched_sim::env::{AnyEnv, AnySpec, HostLayout, ObsLayout, VecEnv, VecOut};

use crate::panics::guard;
use crate::ScenarioError;

fn scenario_err(e: mpsched_sim::ScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

fn check_len(what: &str, got: usize, want: usize) -> PyResult<()> {
    if got == want {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!("{what}: expected {want} values, got {got}")))
    }
}

/// `_core.Env`: one learning environment (a flow env, or a host env for a spec with
/// `"kind": "host"`).
#[pyclass(name = "Env", module = "mpsched._core")]
pub struct PyEnv {
    env: AnyEnv,
    spec: AnySpec,
}

#[pymethods]
impl PyEnv {
    /// `spec_json`: the env spec (scenario text, controlled flow, action kind, sizes).
    #[new]
    fn new(py: Python<'_>, spec_json: &str, seed: u64) -> PyResult<Self> {
        let spec = AnySpec::from_json(spec_json).map_err(scenario_err)?;
        let s = spec.clone();
        let env = py.detach(move || guard(s.source(), || AnyEnv::new(s.clone(), seed).map_err(scenario_err)))?;
        Ok(PyEnv { env, spec })
    }

    /// The episode's results so far, as `run_scenario` returns them.
    fn output<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = self.env.output();
        crate::output_to_dict(py, &out)
    }

    /// Starts an episode whose scenario is drawn with `seed`; writes the first observation.
    fn reset(&mut self, py: Python<'_>, seed: u64, mut obs: PyReadwriteArray1<f32>) -> PyResult<()> {
        let d = self.spec.obs_len();
        let out = obs.as_slice_mut()?;
        check_len("obs", out.len(), d)?;
        let (env, source) = (&mut self.env, self.spec.source());
        py.detach(move || {
            guard(source, || {
                env.reset(seed).map_err(scenario_err)?;
                env.observe(out);
                Ok(())
            })
        })?;
        crate::pysched::take_error()
    }

    /// Applies `action`, runs to the next decision boundary, writes the observation and the
    /// interval's reward terms. Returns (terminated, truncated).
    fn step(
        &mut self,
        py: Python<'_>,
        action: PyReadonlyArray1<f32>,
        mut obs: PyReadwriteArray1<f32>,
        mut terms: PyReadwriteArray1<f64>,
    ) -> PyResult<(bool, bool)> {
        let (d, a, t) = self.env.dims();
        let act = action.as_slice()?;
        check_len("action", act.len(), a)?;
        let o = obs.as_slice_mut()?;
        check_len("obs", o.len(), d)?;
        let tm = terms.as_slice_mut()?;
        check_len("terms", tm.len(), t)?;
        let (env, source) = (&mut self.env, self.spec.source());
        let st = py.detach(move || {
            guard(source, || {
                let st = env.step(act);
                env.observe(o);
                env.write_terms(tm);
                Ok(st)
            })
        })?;
        // Another flow of the scenario may run a Python scheduler.
        crate::pysched::take_error()?;
        Ok((st.terminated, st.truncated))
    }

    #[getter]
    fn obs_len(&self) -> usize {
        self.spec.obs_len()
    }
    #[getter]
    fn action_len(&self) -> usize {
        self.spec.action_len()
    }
    #[getter]
    fn terms_len(&self) -> usize {
        self.spec.terms_len()
    }
    #[getter]
    fn frame_len(&self) -> usize {
        self.spec.frame_len()
    }
    #[getter]
    fn mask_len(&self) -> usize {
        self.spec.mask_len()
    }
    #[getter]
    fn term_names(&self) -> Vec<String> {
        self.spec.term_names()
    }
    /// Simulated time in seconds.
    #[getter]
    fn now_s(&self) -> f64 {
        self.env.sim().now_ns() as f64 / 1e9
    }
    /// Steps taken in this episode.
    #[getter]
    fn steps(&self) -> u64 {
        self.env.steps()
    }
    /// Subflows the controlled connection has now (flow envs; 0 for a host env).
    #[getter]
    fn subflows(&self) -> usize {
        match &self.env {
            AnyEnv::Flow(e) => e.sim().connection(e.spec.flow).map_or(0, |c| c.subflow_count()),
            AnyEnv::Host(_) => 0,
        }
    }
    /// Host env: the name of the flow in each slot (`None`: free); flow env: empty.
    fn slot_flows(&self) -> Vec<Option<String>> {
        let AnyEnv::Host(e) = &self.env else { return Vec::new() };
        let flows = &e.sim().scenario().flows;
        e.slot_flows().iter().map(|s| s.map(|f| flows[f].name.clone())).collect()
    }
}

/// `_core.VecEnv`: environments stepped together, over threads.
#[pyclass(name = "VecEnv", module = "mpsched._core")]
pub struct PyVecEnv {
    venv: VecEnv,
    spec: AnySpec,
}

#[pymethods]
impl PyVecEnv {
    /// `n` envs, sub-env i seeded `base_seed + i`, stepped on `threads` threads.
    #[new]
    fn new(py: Python<'_>, spec_json: &str, n: usize, base_seed: u64, threads: usize) -> PyResult<Self> {
        if n == 0 {
            return Err(PyValueError::new_err("num_envs: expected at least 1"));
        }
        let spec = AnySpec::from_json(spec_json).map_err(scenario_err)?;
        let s = spec.clone();
        let venv = py.detach(move || {
            guard(s.source(), || VecEnv::new(s.clone(), n, base_seed, threads).map_err(scenario_err))
        })?;
        Ok(PyVecEnv { venv, spec })
    }

    /// Resets every sub-env (`base_seed` None: each one's next episode); writes `obs` [n, D].
    #[pyo3(signature = (base_seed, obs))]
    fn reset(&mut self, py: Python<'_>, base_seed: Option<u64>, mut obs: PyReadwriteArray2<f32>) -> PyResult<()> {
        let want = self.venv.len() * self.spec.obs_len();
        let o = obs.as_slice_mut()?;
        check_len("obs", o.len(), want)?;
        let (venv, source) = (&mut self.venv, self.spec.source());
        py.detach(move || guard(source, || venv.reset(base_seed, o).map_err(scenario_err)))?;
        crate::pysched::take_error()
    }

    /// Starts the next episode of the sub-envs whose episode just ended; writes their rows of
    /// `obs` [n, D] (SAME_STEP autoreset, for stable-baselines3).
    fn reset_ended(&mut self, py: Python<'_>, mut obs: PyReadwriteArray2<f32>) -> PyResult<()> {
        let want = self.venv.len() * self.spec.obs_len();
        let o = obs.as_slice_mut()?;
        check_len("obs", o.len(), want)?;
        let (venv, source) = (&mut self.venv, self.spec.source());
        py.detach(move || guard(source, || venv.reset_ended(o).map_err(scenario_err)))?;
        crate::pysched::take_error()
    }

    /// Steps every sub-env (NEXT_STEP autoreset); writes obs [n, D], terms [n, T] and flags [n].
    fn step(
        &mut self,
        py: Python<'_>,
        actions: PyReadonlyArray2<f32>,
        mut obs: PyReadwriteArray2<f32>,
        mut terms: PyReadwriteArray2<f64>,
        mut terminated: PyReadwriteArray1<bool>,
        mut truncated: PyReadwriteArray1<bool>,
    ) -> PyResult<()> {
        let n = self.venv.len();
        let (d, a, t) = (self.spec.obs_len(), self.spec.action_len(), self.spec.terms_len());
        let act = actions.as_slice()?;
        check_len("actions", act.len(), n * a)?;
        let o = obs.as_slice_mut()?;
        check_len("obs", o.len(), n * d)?;
        let tm = terms.as_slice_mut()?;
        check_len("terms", tm.len(), n * t)?;
        let te = terminated.as_slice_mut()?;
        check_len("terminated", te.len(), n)?;
        let tr = truncated.as_slice_mut()?;
        check_len("truncated", tr.len(), n)?;
        let (venv, source) = (&mut self.venv, self.spec.source());
        py.detach(move || {
            let out = VecOut { obs: o, terms: tm, terminated: te, truncated: tr };
            guard(source, || venv.step(act, out).map_err(scenario_err))
        })?;
        crate::pysched::take_error()
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.venv.len()
    }
    #[getter]
    fn threads(&self) -> usize {
        self.venv.threads
    }
    #[getter]
    fn obs_len(&self) -> usize {
        self.spec.obs_len()
    }
    #[getter]
    fn action_len(&self) -> usize {
        self.spec.action_len()
    }
    #[getter]
    fn terms_len(&self) -> usize {
        self.spec.terms_len()
    }
    #[getter]
    fn term_names(&self) -> Vec<String> {
        self.spec.term_names()
    }
}

/// A feature as Python sees it: (name, kind "float"/"int", unit, seen by, doc).
type FeatureRow = (&'static str, &'static str, &'static str, &'static str, &'static str);

/// The observation's feature groups in frame order, each as (group name, features): the one
/// definition (`mpsched_sim::env::features`) the Python env builds its layout from.
#[pyfunction]
pub fn obs_features() -> Vec<(&'static str, Vec<FeatureRow>)> {
    feature_groups()
        .into_iter()
        .map(|(g, fs)| (g, fs.iter().map(|f| (f.name, f.kind.name(), f.unit, f.seen_by.name(), f.doc)).collect()))
        .collect()
}

/// Every offset and length of an observation with `max_paths` subflow slots, `history`
/// frames and `max_flows` flow slots (0 without the host view), by name.
#[pyfunction]
pub fn obs_layout(max_paths: usize, history: usize, max_flows: usize) -> Vec<(&'static str, usize)> {
    ObsLayout { max_paths, history, max_flows }.offsets()
}

/// Every offset and length of a host env's observation with `max_flows` flow slots of
/// `max_subflows` subflows and `history` frames, by name.
#[pyfunction]
pub fn host_layout(max_flows: usize, max_subflows: usize, history: usize) -> Vec<(&'static str, usize)> {
    HostLayout { max_flows, max_subflows, history }.offsets()
}
