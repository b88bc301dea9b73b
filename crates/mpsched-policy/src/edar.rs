//! EdAR's Q-network (edar.txt §IV-C, Figs. 5-6), the same computation as
//! `python/mpsched/agents/edar.py` (`QNetwork.forward` and `split_obs`):
//!
//! - per present subflow slot, one LSTM1 per series (RTT, RTO, throughput, cwnd, loss,
//!   inflight; `k + 1` intervals, oldest first) whose hidden states at the last two steps are
//!   concatenated (feature-major);
//! - LSTM2 runs across the present slots (absent ones are skipped);
//! - the core network maps `[prev_mode, rcv_window, inflight, h_LSTM2]` through two ReLU layers
//!   to two Q-values (normal, redundant).
//!
//! Gate order and equations are torch's (`i, f, g, o`; `c' = σ(f)c + σ(i)tanh(g)`,
//! `h' = σ(o)tanh(c')`). All buffers are allocated at load time: a decision allocates nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mpsched_sim::env::{CONN_FEATURES, SUBFLOW_FEATURES};

use crate::safetensors::{self, Tensor};
use crate::PolicyError;

/// Subflow series the network reads (E_t^i: d, o, x, w, l, f).
pub const SUBFLOW_INPUTS: [&str; 6] = ["srtt", "rto", "throughput", "cwnd", "loss", "inflight"];
/// Connection state M_t: a_{t-1}, b_t, I_t.
pub const CONN_INPUTS: [&str; 3] = ["prev_mode", "rcv_window", "inflight"];

const NF: usize = SUBFLOW_INPUTS.len();

struct Dense {
    w: Vec<f32>, // [out, in], row-major
    b: Vec<f32>,
    n_in: usize,
    n_out: usize,
}

impl Dense {
    fn apply(&self, x: &[f32], y: &mut [f32], relu: bool) {
        for o in 0..self.n_out {
            let row = &self.w[o * self.n_in..(o + 1) * self.n_in];
            let s = self.b[o] + dot(row, x);
            y[o] = if relu { s.max(0.0) } else { s };
        }
    }
}

/// Dot product with eight independent accumulators, so the compiler can use SIMD lanes (a
/// single running sum is a serial dependency chain under strict float semantics).
#[inline]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; 8];
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        s += x * y;
    }
    s
}

/// `y += a * x` (vectorizes: no reduction).
#[inline]
fn axpy(y: &mut [f32], x: &[f32], a: f32) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

/// `[n, rows, cols]` blocks → `[n, cols, rows]`.
fn transpose_blocks(w: &[f32], n: usize, rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0; w.len()];
    for k in 0..n {
        let (src, dst) = (&w[k * rows * cols..(k + 1) * rows * cols], &mut t[k * rows * cols..(k + 1) * rows * cols]);
        for r in 0..rows {
            for c in 0..cols {
                dst[c * rows + r] = src[r * cols + c];
            }
        }
    }
    t
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// tanh through one `exp`: `1 − 2/(e^{2x} + 1)`. libm's `tanhf` costs several times an `expf`
/// and the LSTMs make ~4,000 of these calls per decision. Saturates correctly (e^{2x} → ∞ gives
/// 1, → 0 gives −1); absolute error stays near f32 rounding (~1e-7), far inside the 1e-5
/// agreement with torch that the tests require.
#[inline]
fn tanh(x: f32) -> f32 {
    1.0 - 2.0 / ((2.0 * x).exp() + 1.0)
}

/// A loaded EdAR Q-network.
pub struct EdarNet {
    pub path: PathBuf,
    pub variant: String,
    pub history: usize,
    u1: usize,
    u2: usize,
    l1_w_ih: Vec<f32>, // [F, 4U1]
    l1_w_hh_t: Vec<f32>, // [F, U1, 4U1]: transposed, so a step is U1 vector updates of 4U1 gates
    l1_b: Vec<f32>,    // [F, 4U1]
    l2: Dense,         // [4U2, F*2*U1] (input part), bias = b_ih + b_hh
    l2_w_hh_t: Vec<f32>, // [U2, 4U2], transposed
    core: [Dense; 3],
    sub_idx: [usize; NF],
    conn_idx: [usize; 3],
    // Scratch.
    z: Vec<f32>,
    g1: Vec<f32>,
    h1: Vec<f32>,
    c1: Vec<f32>,
    g2: Vec<f32>,
    h2: Vec<f32>,
    c2: Vec<f32>,
    x_core: Vec<f32>,
    y1: Vec<f32>,
    y2: Vec<f32>,
}

fn field<'a>(desc: &'a serde_json::Value, dotted: &str, file: &Path) -> Result<&'a serde_json::Value, PolicyError> {
    let mut cur = desc;
    for part in dotted.split('.') {
        cur = cur.get(part).ok_or_else(|| PolicyError(format!("{}: missing field {dotted:?}", file.display())))?;
    }
    Ok(cur)
}

fn uint(desc: &serde_json::Value, dotted: &str, file: &Path) -> Result<usize, PolicyError> {
    field(desc, dotted, file)?
        .as_u64()
        .filter(|&v| v > 0)
        .map(|v| v as usize)
        .ok_or_else(|| PolicyError(format!("{}: field {dotted:?}: expected a positive integer", file.display())))
}

fn names(desc: &serde_json::Value, dotted: &str, file: &Path) -> Result<Vec<String>, PolicyError> {
    let v = field(desc, dotted, file)?;
    v.as_array()
        .and_then(|a| a.iter().map(|x| x.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>())
        .ok_or_else(|| PolicyError(format!("{}: field {dotted:?}: expected a list of names", file.display())))
}

/// (description, weights) paths of a checkpoint given by either file or their common stem.
pub fn checkpoint_paths(path: &Path) -> (PathBuf, PathBuf) {
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => (path.to_path_buf(), path.with_extension("safetensors")),
        Some("safetensors") => (path.with_extension("json"), path.to_path_buf()),
        _ => (PathBuf::from(format!("{}.json", path.display())), PathBuf::from(format!("{}.safetensors", path.display()))),
    }
}

impl EdarNet {
    /// Loads a checkpoint (`NAME.json` + `NAME.safetensors`) and checks every shape.
    pub fn load(path: &Path) -> Result<EdarNet, PolicyError> {
        let (js, st) = checkpoint_paths(path);
        let text = std::fs::read_to_string(&js).map_err(|e| PolicyError(format!("{}: cannot read checkpoint description: {e}", js.display())))?;
        let desc: serde_json::Value = serde_json::from_str(&text).map_err(|e| PolicyError(format!("{}: not valid JSON ({e})", js.display())))?;
        let fmt = field(&desc, "format", &js)?.as_str().unwrap_or("");
        if fmt != "mpsched-policy/1" {
            return Err(PolicyError(format!("{}: field \"format\": expected \"mpsched-policy/1\", got {fmt:?}", js.display())));
        }
        let alg = field(&desc, "algorithm", &js)?.as_str().unwrap_or("");
        if alg != "edar" {
            return Err(PolicyError(format!("{}: field \"algorithm\": expected \"edar\", got {alg:?}", js.display())));
        }
        let u1 = uint(&desc, "net.lstm1_units", &js)?;
        let u2 = uint(&desc, "net.lstm2_units", &js)?;
        let history = uint(&desc, "net.history", &js)?;
        if history < 2 {
            return Err(PolicyError(format!("{}: field \"net.history\": expected at least 2", js.display())));
        }
        let na = uint(&desc, "net.n_actions", &js)?;
        if na != 2 {
            return Err(PolicyError(format!("{}: field \"net.n_actions\": expected 2, got {na}", js.display())));
        }
        let core_units: Vec<usize> = field(&desc, "net.core_units", &js)?
            .as_array()
            .and_then(|a| a.iter().map(|x| x.as_u64().map(|v| v as usize)).collect::<Option<Vec<_>>>())
            .filter(|v| v.len() == 2 && v.iter().all(|&x| x > 0))
            .ok_or_else(|| PolicyError(format!("{}: field \"net.core_units\": expected two positive integers", js.display())))?;
        let subs = names(&desc, "net.subflow_inputs", &js)?;
        let conns = names(&desc, "net.conn_inputs", &js)?;
        if subs != SUBFLOW_INPUTS {
            return Err(PolicyError(format!("{}: field \"net.subflow_inputs\": expected {SUBFLOW_INPUTS:?}, got {subs:?}", js.display())));
        }
        if conns != CONN_INPUTS {
            return Err(PolicyError(format!("{}: field \"net.conn_inputs\": expected {CONN_INPUTS:?}, got {conns:?}", js.display())));
        }
        let mut sub_idx = [0; NF];
        for (k, n) in SUBFLOW_INPUTS.iter().enumerate() {
            sub_idx[k] = SUBFLOW_FEATURES.iter().position(|f| f == n).expect("EdAR input in the observation");
        }
        let mut conn_idx = [0; 3];
        for (k, n) in CONN_INPUTS.iter().enumerate() {
            conn_idx[k] = CONN_FEATURES.iter().position(|f| f == n).expect("EdAR input in the observation");
        }
        let variant = desc.get("variant").and_then(|v| v.as_str()).unwrap_or("edar").to_owned();

        let mut t = safetensors::read(&st)?;
        let mut take = |name: &str, shape: &[usize]| -> Result<Vec<f32>, PolicyError> {
            let Tensor { shape: got, data } = t.remove(name).ok_or_else(|| PolicyError(format!("{}: missing tensor {name:?} (expected shape {shape:?})", st.display())))?;
            if got != shape {
                return Err(PolicyError(format!("{}: tensor {name:?}: expected shape {shape:?}, got {got:?}", st.display())));
            }
            if data.iter().any(|x| !x.is_finite()) {
                return Err(PolicyError(format!("{}: tensor {name:?}: contains NaN or infinity", st.display())));
            }
            Ok(data)
        };
        let n_in2 = NF * 2 * u1;
        let l1_w_ih = take("lstm1_weight_ih", &[NF, 4 * u1])?;
        let l1_w_hh = take("lstm1_weight_hh", &[NF, 4 * u1, u1])?;
        let l1_b = take("lstm1_bias", &[NF, 4 * u1])?;
        let l2_w_ih = take("lstm2.weight_ih", &[4 * u2, n_in2])?;
        let l2_w_hh = take("lstm2.weight_hh", &[4 * u2, u2])?;
        let b_ih = take("lstm2.bias_ih", &[4 * u2])?;
        let b_hh = take("lstm2.bias_hh", &[4 * u2])?;
        let l2_b: Vec<f32> = b_ih.iter().zip(&b_hh).map(|(a, b)| a + b).collect();
        let dims = [CONN_INPUTS.len() + u2, core_units[0], core_units[1], 2];
        let mut layer = |k: usize, i: usize| -> Result<Dense, PolicyError> {
            let (n_in, n_out) = (dims[i], dims[i + 1]);
            Ok(Dense { w: take(&format!("core.{k}.weight"), &[n_out, n_in])?, b: take(&format!("core.{k}.bias"), &[n_out])?, n_in, n_out })
        };
        let core = [layer(0, 0)?, layer(2, 1)?, layer(4, 2)?];
        let l1_w_hh_t = transpose_blocks(&l1_w_hh, NF, 4 * u1, u1);
        let l2_w_hh_t = transpose_blocks(&l2_w_hh, 1, 4 * u2, u2);
        if let Some(extra) = t.keys().next() {
            return Err(PolicyError(format!("{}: unexpected tensor {extra:?}", st.display())));
        }
        Ok(EdarNet {
            path: js,
            variant,
            history,
            u1,
            u2,
            l1_w_ih,
            l1_w_hh_t,
            l1_b,
            l2: Dense { w: l2_w_ih, b: l2_b, n_in: n_in2, n_out: 4 * u2 },
            l2_w_hh_t,
            core,
            sub_idx,
            conn_idx,
            z: vec![0.0; n_in2],
            g1: vec![0.0; 4 * u1],
            h1: vec![0.0; u1],
            c1: vec![0.0; u1],
            g2: vec![0.0; 4 * u2],
            h2: vec![0.0; u2],
            c2: vec![0.0; u2],
            x_core: vec![0.0; dims[0]],
            y1: vec![0.0; dims[1]],
            y2: vec![0.0; dims[2]],
        })
    }

    /// Q-values (normal, redundant) of one flat scheduler-env observation with `max_paths`
    /// subflow slots and the network's history. Returns whether no subflow has an RTT sample
    /// yet (the connection start, where EdAR sends redundantly).
    pub fn q_values(&mut self, obs: &[f32], max_paths: usize, q: &mut [f32; 2]) -> bool {
        let ns = SUBFLOW_FEATURES.len();
        let frame = max_paths * ns + CONN_FEATURES.len();
        let hist = self.history;
        assert!(obs.len() >= hist * frame + max_paths, "observation shorter than the layout");
        let (u1, u2) = (self.u1, self.u2);
        self.h2.iter_mut().for_each(|x| *x = 0.0);
        self.c2.iter_mut().for_each(|x| *x = 0.0);
        let mut any_rtt = false;
        for i in 0..max_paths {
            let at = |t: usize, f: usize| obs[t * frame + i * ns + f];
            let has_history = (0..hist).any(|t| self.sub_idx.iter().any(|&f| at(t, f) != 0.0));
            let present = obs[hist * frame + i] > 0.5 || has_history;
            if !present {
                continue;
            }
            if at(hist - 1, self.sub_idx[0]) > 0.0 {
                any_rtt = true;
            }
            // LSTM1 per series.
            for j in 0..NF {
                let w_ih = &self.l1_w_ih[j * 4 * u1..(j + 1) * 4 * u1];
                let w_hh_t = &self.l1_w_hh_t[j * 4 * u1 * u1..(j + 1) * 4 * u1 * u1];
                let b = &self.l1_b[j * 4 * u1..(j + 1) * 4 * u1];
                self.h1.iter_mut().for_each(|x| *x = 0.0);
                self.c1.iter_mut().for_each(|x| *x = 0.0);
                for t in 0..hist {
                    let x = at(t, self.sub_idx[j]);
                    for g in 0..4 * u1 {
                        self.g1[g] = w_ih[g] * x + b[g];
                    }
                    for (u, &h) in self.h1.iter().enumerate() {
                        axpy(&mut self.g1, &w_hh_t[u * 4 * u1..(u + 1) * 4 * u1], h);
                    }
                    for u in 0..u1 {
                        let c = sigmoid(self.g1[u1 + u]) * self.c1[u] + sigmoid(self.g1[u]) * tanh(self.g1[2 * u1 + u]);
                        self.c1[u] = c;
                        self.h1[u] = sigmoid(self.g1[3 * u1 + u]) * tanh(c);
                    }
                    if t + 2 >= hist {
                        let k = t + 2 - hist; // 0: h_{t-1}, 1: h_t
                        let o = j * 2 * u1 + k * u1;
                        self.z[o..o + u1].copy_from_slice(&self.h1);
                    }
                }
            }
            // LSTM2 step over this subflow.
            self.l2.apply(&self.z, &mut self.g2, false);
            for (u, &h) in self.h2.iter().enumerate() {
                axpy(&mut self.g2, &self.l2_w_hh_t[u * 4 * u2..(u + 1) * 4 * u2], h);
            }
            for u in 0..u2 {
                let c = sigmoid(self.g2[u2 + u]) * self.c2[u] + sigmoid(self.g2[u]) * tanh(self.g2[2 * u2 + u]);
                self.c2[u] = c;
                self.h2[u] = sigmoid(self.g2[3 * u2 + u]) * tanh(c);
            }
        }
        // Core network.
        let conn = (hist - 1) * frame + max_paths * ns;
        for (k, &ci) in self.conn_idx.iter().enumerate() {
            self.x_core[k] = obs[conn + ci];
        }
        self.x_core[CONN_INPUTS.len()..].copy_from_slice(&self.h2);
        self.core[0].apply(&self.x_core, &mut self.y1, true);
        self.core[1].apply(&self.y1, &mut self.y2, true);
        self.core[2].apply(&self.y2, q, false);
        !any_rtt
    }

    /// The greedy action: 1 (redundant) at the connection start or when Q(redundant) is larger.
    pub fn act(&mut self, obs: &[f32], max_paths: usize) -> u8 {
        let mut q = [0.0; 2];
        let start = self.q_values(obs, max_paths, &mut q);
        u8::from(start || q[1] > q[0])
    }
}

/// Tensors by name, for tests.
pub type Tensors = BTreeMap<String, Tensor>;
