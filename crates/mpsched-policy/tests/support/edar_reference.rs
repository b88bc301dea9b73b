//! The straightforward EdAR forward pass (the library's code before the fast forward pass,
//! commit 3b9d536): one LSTM1 at a time, scalar `exp` per gate. Kept outside the library as the
//! reference the fast path is tested against (`tests/edar_fast.rs`) and timed against
//! (`examples/bench_edar.rs`). Shares only the observation layout with the library.

#![allow(dead_code, clippy::needless_range_loop)]

use std::path::Path;

use mpsched_policy::checkpoint::checkpoint_paths;
use mpsched_policy::edar::{CONN_INPUTS, SUBFLOW_INPUTS};
use mpsched_policy::safetensors;
use mpsched_sim::env::{CONN_FEATURES, SUBFLOW_FEATURES};

const NF: usize = SUBFLOW_INPUTS.len();

struct Dense {
    w: Vec<f32>,
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

fn axpy(y: &mut [f32], x: &[f32], a: f32) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

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

fn tanh(x: f32) -> f32 {
    1.0 - 2.0 / ((2.0 * x).exp() + 1.0)
}

pub struct RefNet {
    pub history: usize,
    u1: usize,
    u2: usize,
    l1_w_ih: Vec<f32>,
    l1_w_hh_t: Vec<f32>,
    l1_b: Vec<f32>,
    l2: Dense,
    l2_w_hh_t: Vec<f32>,
    core: [Dense; 3],
    sub_idx: [usize; NF],
    conn_idx: [usize; 3],
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

impl RefNet {
    /// Loads a checkpoint without the library's validation (the library loads it first).
    pub fn load(path: &Path) -> RefNet {
        let (js, st) = checkpoint_paths(path);
        let desc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(js).unwrap()).unwrap();
        let n = |k: &str| desc["net"][k].as_u64().unwrap() as usize;
        let (u1, u2, history) = (n("lstm1_units"), n("lstm2_units"), n("history"));
        let core_units: Vec<usize> =
            desc["net"]["core_units"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
        let mut t = safetensors::read(&st).unwrap();
        let mut take = |name: &str| t.remove(name).unwrap().data;
        let n_in2 = NF * 2 * u1;
        let l1_w_ih = take("lstm1_weight_ih");
        let l1_w_hh = take("lstm1_weight_hh");
        let l1_b = take("lstm1_bias");
        let l2_w_ih = take("lstm2.weight_ih");
        let l2_w_hh = take("lstm2.weight_hh");
        let l2_b: Vec<f32> = take("lstm2.bias_ih").iter().zip(&take("lstm2.bias_hh")).map(|(a, b)| a + b).collect();
        let dims = [CONN_INPUTS.len() + u2, core_units[0], core_units[1], 2];
        let mut layer = |k: usize, i: usize| Dense {
            w: take(&format!("core.{k}.weight")),
            b: take(&format!("core.{k}.bias")),
            n_in: dims[i],
            n_out: dims[i + 1],
        };
        let core = [layer(0, 0), layer(2, 1), layer(4, 2)];
        let mut sub_idx = [0; NF];
        for (k, n) in SUBFLOW_INPUTS.iter().enumerate() {
            sub_idx[k] = SUBFLOW_FEATURES.iter().position(|f| f == n).unwrap();
        }
        let mut conn_idx = [0; 3];
        for (k, n) in CONN_INPUTS.iter().enumerate() {
            conn_idx[k] = CONN_FEATURES.iter().position(|f| f == n).unwrap();
        }
        RefNet {
            history,
            u1,
            u2,
            l1_w_ih,
            l1_w_hh_t: transpose_blocks(&l1_w_hh, NF, 4 * u1, u1),
            l1_b,
            l2: Dense { w: l2_w_ih, b: l2_b, n_in: n_in2, n_out: 4 * u2 },
            l2_w_hh_t: transpose_blocks(&l2_w_hh, 1, 4 * u2, u2),
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
        }
    }

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
                        let k = t + 2 - hist;
                        let o = j * 2 * u1 + k * u1;
                        self.z[o..o + u1].copy_from_slice(&self.h1);
                    }
                }
            }
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
}

/// Observations of the controlled flow of `scenarios/edar-handoff.toml` at every decision
/// (every minimum RTT), `max_paths` subflow slots and `history` intervals, as the driver makes
/// them; the flow is scheduled by `choose(obs)` (0 normal, 1 redundant). `duration_s` shortens
/// the scenario.
pub fn handoff_observations(
    history: usize,
    max_paths: usize,
    duration_s: Option<f64>,
    mut choose: impl FnMut(&[f32]) -> u8,
) -> Vec<Vec<f32>> {
    use mpsched_sim::env::{Env, EnvSpec};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/edar-handoff.toml");
    let mut text =
        std::fs::read_to_string(&path).unwrap().replace("scheduler = \"minrtt\"", "scheduler = \"external-mode\"");
    text.push_str("decision_every_min_rtt = true\n"); // the controlled flow is the last table
    if let Some(d) = duration_s {
        text = text.replace("duration_s = 100", &format!("duration_s = {d}"));
    }
    let spec = serde_json::json!({
        "scenario": text, "source": path.display().to_string(), "format": "toml", "flow": 0,
        "action": "mode", "max_paths": max_paths, "history": history,
    });
    let mut env = Env::new(EnvSpec::from_json(&spec.to_string()).unwrap(), 1).unwrap();
    let mut obs = vec![0.0f32; env.spec.obs_len()];
    let mut out = Vec::new();
    loop {
        let st = env.status();
        if st.terminated || st.truncated {
            break;
        }
        env.observe(&mut obs);
        out.push(obs.clone());
        env.step(&[f32::from(choose(&obs))]);
    }
    out
}
