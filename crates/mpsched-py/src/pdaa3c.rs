//! `_core.pdaa3c_inputs`: PDAA3C's subflow quality ranking (pdaa3c.txt §2.2, eqs. 4–5) as the
//! runtime computes it (`mpsched_policy::pdaa3c`), for training in Python with the same numbers.

use numpy::{PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;

use mpsched_policy::pdaa3c::{of_slot, ranked_input, Quality, MAX_SLOTS, RANK_INPUTS};
use mpsched_transport::observe::ObsLayout;

/// Actor inputs `[B, P·RANK_INPUTS]`, rank → slot `[B, P]` (-1 past the usable ones), usable
/// counts `[B]` and Q per slot `[B, P]` (bytes/s, newest frame) of scheduler observations.
type Inputs<'py> =
    (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray2<i64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray2<f64>>);

/// PDAA3C's ranked actor inputs of observations `[B, D]` of a scheduler env with `max_paths`
/// slots and `history` frames (eq. 4 with γ, η, α).
#[pyfunction]
#[pyo3(signature = (obs, max_paths, history, gamma=0.7, eta=0.3, alpha=1000.0))]
pub fn pdaa3c_inputs<'py>(
    py: Python<'py>,
    obs: PyReadonlyArray2<'py, f32>,
    max_paths: usize,
    history: usize,
    gamma: f64,
    eta: f64,
    alpha: f64,
) -> PyResult<Inputs<'py>> {
    let l = ObsLayout { max_paths, history, max_flows: 0 };
    let a = obs.as_array();
    if !(1..=MAX_SLOTS).contains(&max_paths) || history == 0 || a.shape()[1] != l.size() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "obs: expected {} values per row (max_paths 1..={MAX_SLOTS}, history >= 1), got {}",
            l.size(),
            a.shape()[1]
        )));
    }
    let q = Quality { gamma, eta, alpha };
    let b = a.shape()[0];
    let (mut xs, mut orders, mut ns, mut qs) = (Vec::with_capacity(b), Vec::with_capacity(b), Vec::new(), Vec::new());
    let mut row = vec![0.0f32; l.size()];
    let mut order = [0usize; MAX_SLOTS];
    for i in 0..b {
        row.iter_mut().enumerate().for_each(|(k, x)| *x = a[[i, k]]);
        let mut x = vec![0.0f32; max_paths * RANK_INPUTS];
        let n = ranked_input(&q, &row, &l, &mut order, &mut x);
        xs.push(x);
        orders.push((0..max_paths).map(|r| if r < n { order[r] as i64 } else { -1 }).collect::<Vec<_>>());
        ns.push(n as i64);
        qs.push((0..max_paths).map(|s| of_slot(&q, &row, &l, s)).collect::<Vec<_>>());
    }
    Ok((
        PyArray2::from_vec2(py, &xs)?,
        PyArray2::from_vec2(py, &orders)?,
        PyArray1::from_vec(py, ns),
        PyArray2::from_vec2(py, &qs)?,
    ))
}
