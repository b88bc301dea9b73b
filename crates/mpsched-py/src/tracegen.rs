//! `_core.synth_trace`: a synthetic cellular trace (mpsched_sim::tracegen) as mahimahi text.

use pyo3::prelude::*;

use crate::ScenarioError;
use mpsched_sim::tracegen::{generate, to_text, SynthParams, SynthSpec};

/// The mahimahi text of a synthetic trace. Raises ScenarioError `"<field>: <expected>"` for a
/// bad parameter (the field as named in scenarios, e.g. `mean_mbps`).
#[pyfunction]
#[pyo3(signature = (mean_mbps, duration_s = None, seed = 1, variability = None, dwell_s = None, outage_per_min = None, outage_s = None))]
#[allow(clippy::too_many_arguments)]
pub fn synth_trace(
    py: Python<'_>,
    mean_mbps: f64,
    duration_s: Option<f64>,
    seed: u64,
    variability: Option<f64>,
    dwell_s: Option<f64>,
    outage_per_min: Option<f64>,
    outage_s: Option<f64>,
) -> PyResult<String> {
    let spec = SynthSpec { mean_mbps, duration_s, variability, dwell_s, outage_per_min, outage_s, seed: Some(seed) };
    let p = SynthParams::resolve(&spec).map_err(|(field, what)| ScenarioError::new_err(format!("{field}: {what}")))?;
    Ok(py.detach(move || to_text(&generate(&p, seed))))
}
