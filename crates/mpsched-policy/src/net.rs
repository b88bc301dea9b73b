//! Generic exported networks (`"algorithm": "net"` checkpoints, written by
//! `mpsched.policies.export`): a stack of layers over a flat observation, then an actor head.
//!
//! Description (`NAME.json`, besides the checkpoint fields of `mpsched.agents.checkpoint`):
//!
//! ```json
//! "net": {
//!   "input": {"size": 12, "normalize": {"mean": "obs_mean", "std": "obs_std", "clip": 10.0}},
//!   "layers": [
//!     {"type": "linear", "weight": "l0.weight", "bias": "l0.bias"},
//!     {"type": "relu"},
//!     {"type": "lstm", "hidden": 16, "weight_ih": "r.weight_ih_l0", "weight_hh": "r.weight_hh_l0",
//!      "bias_ih": "r.bias_ih_l0", "bias_hh": "r.bias_hh_l0"},
//!     {"type": "layer_norm", "weight": "n.weight", "bias": "n.bias", "eps": 1e-5}
//!   ],
//!   "head": {"type": "argmax" | "softmax" | "identity" | "tanh" | "clip" | "binary" |
//!            "multi_argmax", "low": [..], "high": [..], "sizes": [..]}
//! }
//! ```
//!
//! Layers follow PyTorch's definitions (`torch.nn.Linear`, `LSTM` with gates i, f, g, o, `GRU`
//! with gates r, z, n, `LayerNorm` over the last dimension, and the element-wise activations).
//! A recurrent layer reads its input as a sequence of `hidden`-independent steps: the running
//! vector of length `steps × input` (steps oldest first, `input` from the weights' shape) and
//! outputs its last hidden state. Heads: `argmax` (a discrete action), `softmax`
//! (probabilities), `tanh` (`tanh(x)` mapped from [-1, 1] onto [`low`, `high`]: SAC/TD3's squashed
//! actions), `clip` (a Gaussian policy's mean clipped to the bounds, as stable-baselines3 does),
//! `binary` (1 where the logit is > 0: a Bernoulli policy's mode, MultiBinary actions),
//! `multi_argmax` (one argmax per group of `sizes` logits: MultiDiscrete actions). Every buffer is
//! allocated at load: [`Net::forward`] allocates nothing.

use std::collections::BTreeMap;
use std::path::Path;

use crate::checkpoint::Checkpoint;
use crate::safetensors::Tensor;
use crate::PolicyError;

/// An element-wise activation.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Act {
    Relu,
    Tanh,
    Sigmoid,
    LeakyRelu(f32),
    Elu,
}

impl Act {
    fn apply(self, x: f32) -> f32 {
        match self {
            Act::Relu => x.max(0.0),
            Act::Tanh => x.tanh(),
            Act::Sigmoid => sigmoid(x),
            Act::LeakyRelu(s) => {
                if x >= 0.0 {
                    x
                } else {
                    s * x
                }
            }
            Act::Elu => {
                if x > 0.0 {
                    x
                } else {
                    x.exp_m1()
                }
            }
        }
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// tanh as a rational function of x (odd degree-13 numerator, even degree-6 denominator, with
/// the coefficients Eigen uses for float, `ptanh_float`), x clamped to ±7.9988 where tanh is 1
/// in float: a few ulp from `tanhf`, and without a call, so the gate loops vectorize. libm's
/// `tanhf`/`expf` for 2,560 gate values per decision cost more than the matrix products.
#[inline(always)]
#[allow(clippy::excessive_precision)] // the coefficients as published, rounded to f32 by the compiler
fn fast_tanh(x: f32) -> f32 {
    const A: [f32; 7] =
        [4.893_524_6e-3, 6.372_619_3e-4, 1.485_722_4e-5, 5.122_297e-8, -8.604_672e-11, 2.000_188e-13, -2.760_768_5e-16];
    const B: [f32; 4] = [4.893_525_2e-3, 2.268_434_6e-3, 1.185_347_1e-4, 1.198_258_4e-6];
    let x = x.clamp(-7.998_811_7, 7.998_811_7);
    let x2 = x * x;
    let mut p = A[6];
    for &a in A[..6].iter().rev() {
        p = p * x2 + a;
    }
    let q = ((B[3] * x2 + B[2]) * x2 + B[1]) * x2 + B[0];
    x * p / q
}

/// σ(x) = (1 + tanh(x/2)) / 2, through [`fast_tanh`].
#[inline(always)]
fn fast_sigmoid(x: f32) -> f32 {
    0.5 + 0.5 * fast_tanh(0.5 * x)
}

/// Which recurrent cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cell {
    Lstm,
    Gru,
}

/// One layer, weights in PyTorch's row-major layout.
#[derive(Clone, Debug)]
enum Layer {
    Linear {
        w: Vec<f32>,
        b: Vec<f32>,
        n_in: usize,
        n_out: usize,
    },
    Act(Act),
    Norm {
        gamma: Vec<f32>,
        beta: Vec<f32>,
        eps: f32,
    },
    /// Weights transposed (column j of `W` contiguous), so a step is a sum of scaled columns.
    Recurrent {
        cell: Cell,
        w_ih_t: Vec<f32>,
        w_hh_t: Vec<f32>,
        b_ih: Vec<f32>,
        b_hh: Vec<f32>,
        input: usize,
        hidden: usize,
    },
}

/// What the network's output becomes.
#[derive(Clone, Debug, PartialEq)]
enum Head {
    Identity,
    Argmax,
    Softmax,
    Tanh {
        low: Vec<f32>,
        high: Vec<f32>,
    },
    /// Clipped to [low, high] (a Gaussian policy's deterministic action, as SB3 clips it).
    Clip {
        low: Vec<f32>,
        high: Vec<f32>,
    },
    /// 1 where the logit is > 0 (a Bernoulli policy's mode: MultiBinary actions).
    Binary,
    /// The argmax of each consecutive group of `sizes` logits (MultiDiscrete actions).
    MultiArgmax {
        sizes: Vec<usize>,
    },
}

/// A loaded network with its scratch buffers.
#[derive(Clone, Debug)]
pub struct Net {
    input: usize,
    norm: Option<(Vec<f32>, Vec<f32>, f32)>,
    layers: Vec<Layer>,
    head: Head,
    /// Ping-pong activations, each as long as the widest layer.
    a: Vec<f32>,
    b: Vec<f32>,
    /// Recurrent state and gates.
    h: Vec<f32>,
    c: Vec<f32>,
    gates: Vec<f32>,
    out: Vec<f32>,
    /// The CPU has AVX2 and FMA: run the build of the forward pass compiled for them.
    avx2_fma: bool,
}

/// Reads the checkpoint's tensors by name, checking shapes (one-line errors naming the file).
pub(crate) struct Tensors<'a> {
    pub(crate) t: BTreeMap<String, Tensor>,
    pub(crate) file: &'a Path,
}

impl Tensors<'_> {
    pub(crate) fn take(&mut self, what: &str, name: &serde_json::Value) -> Result<Tensor, PolicyError> {
        let file = self.file.display();
        let name = name.as_str().ok_or_else(|| PolicyError(format!("{file}: {what}: expected a tensor name")))?;
        let t = self.t.remove(name).ok_or_else(|| PolicyError(format!("{file}: {what}: no tensor {name:?}")))?;
        if t.data.iter().any(|x| !x.is_finite()) {
            return Err(PolicyError(format!("{file}: tensor {name:?}: contains NaN or infinity")));
        }
        Ok(t)
    }

    pub(crate) fn take_shaped(
        &mut self,
        what: &str,
        name: &serde_json::Value,
        shape: &[usize],
    ) -> Result<Vec<f32>, PolicyError> {
        let t = self.take(what, name)?;
        if t.shape != shape {
            return Err(PolicyError(format!(
                "{}: {what}: expected shape {shape:?}, got {:?}",
                self.file.display(),
                t.shape
            )));
        }
        Ok(t.data)
    }
}

impl Net {
    /// Loads a `"algorithm": "net"` checkpoint (`NAME.json` + `NAME.safetensors`).
    pub fn load(path: &Path) -> Result<Net, PolicyError> {
        Self::from_checkpoint(Checkpoint::read(path)?)
    }

    /// The network of a read `"algorithm": "net"` checkpoint.
    pub fn from_checkpoint(ck: Checkpoint) -> Result<Net, PolicyError> {
        let Checkpoint { desc_path: js, weights_path, desc, tensors, .. } = ck;
        let net = desc.get("net").ok_or_else(|| PolicyError(format!("{}: net: missing", js.display())))?;
        let mut t = Tensors { t: tensors, file: &js };
        let n = Self::build(net, &mut t)?;
        if let Some(extra) = t.t.keys().next() {
            return Err(PolicyError(format!("{}: unexpected tensor {extra:?}", weights_path.display())));
        }
        Ok(n)
    }

    pub(crate) fn build(net: &serde_json::Value, t: &mut Tensors<'_>) -> Result<Net, PolicyError> {
        let file = t.file.display().to_string();
        let err = |field: &str, want: &str| PolicyError(format!("{file}: net.{field}: expected {want}"));
        let input =
            net["input"]["size"].as_u64().filter(|&n| n > 0).ok_or_else(|| err("input.size", "an integer > 0"))?;
        let input = input as usize;
        let norm = match net["input"].get("normalize") {
            None | Some(serde_json::Value::Null) => None,
            Some(nm) => {
                let mean = t.take_shaped("net.input.normalize.mean", &nm["mean"], &[input])?;
                let std = t.take_shaped("net.input.normalize.std", &nm["std"], &[input])?;
                if std.iter().any(|&s| s <= 0.0) {
                    return Err(err("input.normalize.std", "values > 0"));
                }
                let clip = nm["clip"].as_f64().filter(|c| *c > 0.0).unwrap_or(f64::INFINITY) as f32;
                Some((mean, std, clip))
            }
        };
        let specs = net["layers"].as_array().ok_or_else(|| err("layers", "a list of layers"))?;
        let mut layers = Vec::with_capacity(specs.len());
        let (mut dim, mut widest, mut hidden_max) = (input, input, 0);
        for (k, spec) in specs.iter().enumerate() {
            let layer = parse_layer(spec, k, dim, t)?;
            dim = out_dim(&layer, dim);
            if let Layer::Recurrent { hidden, .. } = layer {
                hidden_max = hidden_max.max(hidden);
            }
            widest = widest.max(dim);
            layers.push(layer);
        }
        let head = parse_head(&net["head"], dim, &file)?;
        let out = match &head {
            Head::Argmax => 1,
            Head::MultiArgmax { sizes } => sizes.len(),
            _ => dim,
        };
        Ok(Net {
            input,
            norm,
            layers,
            head,
            a: vec![0.0; widest],
            b: vec![0.0; widest],
            h: vec![0.0; hidden_max],
            c: vec![0.0; hidden_max],
            gates: vec![0.0; 8 * hidden_max],
            out: vec![0.0; out],
            avx2_fma: crate::edar::avx2_fma_available(),
        })
    }

    /// Length of the observation the network reads.
    pub fn input_len(&self) -> usize {
        self.input
    }

    /// Whether the network reads input `k`: false only when the first layer is linear and its
    /// column `k` is all zeros (normalisation does not mix inputs).
    pub fn reads_input(&self, k: usize) -> bool {
        match self.layers.first() {
            Some(Layer::Linear { w, n_in, .. }) if k < *n_in => w.chunks_exact(*n_in).any(|row| row[k] != 0.0),
            _ => true,
        }
    }

    /// Length of [`Net::forward`]'s output (1 for an argmax head: the action index).
    pub fn output_len(&self) -> usize {
        self.out.len()
    }

    /// Runs the network on `obs` (length [`Net::input_len`]) and returns the head's output
    /// (see the module docs). Allocates nothing.
    pub fn forward(&mut self, obs: &[f32]) -> &[f32] {
        assert_eq!(obs.len(), self.input, "observation length");
        self.dispatch(obs)
    }

    /// Runs the build of the forward pass this CPU can run.
    fn dispatch(&mut self, obs: &[f32]) -> &[f32] {
        #[cfg(target_arch = "x86_64")]
        if self.avx2_fma {
            #[allow(unsafe_code)]
            // SAFETY: `avx2_fma` is only set when the running CPU has AVX2 and FMA.
            unsafe {
                self.forward_avx2_fma(obs)
            };
            return &self.out;
        }
        self.run::<false>(obs);
        &self.out
    }

    /// [`Net::forward`] over the first `obs.len()` inputs only (at most [`Net::input_len`]): a
    /// network whose first layer is recurrent reads that many steps (DRL-CC's LSTM over a
    /// variable number of flows). Allocates nothing.
    pub(crate) fn forward_prefix(&mut self, obs: &[f32]) -> &[f32] {
        assert!(obs.len() <= self.input && self.norm.is_none(), "prefix of an unnormalised input");
        self.dispatch(obs)
    }

    /// Forces the portable build of the forward pass (tests compare both builds).
    pub fn force_portable(&mut self) {
        self.avx2_fma = false;
    }

    /// [`Self::run`] compiled for AVX2 + FMA (8 lanes, fused multiply-adds).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn forward_avx2_fma(&mut self, obs: &[f32]) {
        self.run::<true>(obs)
    }

    #[inline(always)]
    fn run<const FMA: bool>(&mut self, obs: &[f32]) {
        let n = obs.len();
        self.a[..n].copy_from_slice(obs);
        if let Some((mean, std, clip)) = &self.norm {
            for (i, x) in self.a[..n].iter_mut().enumerate() {
                *x = ((*x - mean[i]) / std[i]).clamp(-clip, *clip);
            }
        }
        let mut dim = n;
        for layer in &self.layers {
            dim = run_layer::<FMA>(layer, &self.a[..dim], &mut self.b, &mut self.h, &mut self.c, &mut self.gates);
            std::mem::swap(&mut self.a, &mut self.b);
        }
        apply_head(&self.head, &self.a[..dim], &mut self.out);
    }
}

fn out_dim(layer: &Layer, dim: usize) -> usize {
    match layer {
        Layer::Linear { n_out, .. } => *n_out,
        Layer::Recurrent { hidden, .. } => *hidden,
        Layer::Act(_) | Layer::Norm { .. } => dim,
    }
}

/// Parses layer `k` of the description, reading `dim` values.
fn parse_layer(spec: &serde_json::Value, k: usize, dim: usize, t: &mut Tensors<'_>) -> Result<Layer, PolicyError> {
    let file = t.file.display().to_string();
    let at = |f: &str| format!("net.layers[{k}].{f}");
    let kind = spec["type"].as_str().unwrap_or("");
    Ok(match kind {
        "linear" => {
            let w = t.take(&at("weight"), &spec["weight"])?;
            let [n_out, n_in] = w.shape[..] else {
                return Err(PolicyError(format!("{file}: {}: expected a matrix, got {:?}", at("weight"), w.shape)));
            };
            if n_in != dim {
                return Err(PolicyError(format!(
                    "{file}: {}: expected {dim} inputs (the previous layer's output), got {n_in}",
                    at("weight")
                )));
            }
            let b = match spec.get("bias") {
                Some(serde_json::Value::Null) | None => vec![0.0; n_out],
                Some(name) => t.take_shaped(&at("bias"), name, &[n_out])?,
            };
            Layer::Linear { w: w.data, b, n_in, n_out }
        }
        "relu" => Layer::Act(Act::Relu),
        "tanh" => Layer::Act(Act::Tanh),
        "sigmoid" => Layer::Act(Act::Sigmoid),
        "elu" => Layer::Act(Act::Elu),
        "leaky_relu" => Layer::Act(Act::LeakyRelu(spec["negative_slope"].as_f64().unwrap_or(0.01) as f32)),
        "layer_norm" => {
            let gamma = t.take_shaped(&at("weight"), &spec["weight"], &[dim])?;
            let beta = t.take_shaped(&at("bias"), &spec["bias"], &[dim])?;
            Layer::Norm { gamma, beta, eps: spec["eps"].as_f64().unwrap_or(1e-5) as f32 }
        }
        "lstm" | "gru" => parse_recurrent(spec, k, dim, kind, t)?,
        other => {
            return Err(PolicyError(format!(
                "{file}: {}: expected one of linear, relu, tanh, sigmoid, elu, leaky_relu, layer_norm, lstm, gru, got {other:?}",
                at("type")
            )))
        }
    })
}

fn parse_recurrent(
    spec: &serde_json::Value,
    k: usize,
    dim: usize,
    kind: &str,
    t: &mut Tensors<'_>,
) -> Result<Layer, PolicyError> {
    let file = t.file.display().to_string();
    let at = |f: &str| format!("net.layers[{k}].{f}");
    let (cell, g) = if kind == "lstm" { (Cell::Lstm, 4) } else { (Cell::Gru, 3) };
    let hidden = spec["hidden"]
        .as_u64()
        .filter(|&h| h > 0)
        .ok_or_else(|| PolicyError(format!("{file}: {}: expected an integer > 0", at("hidden"))))?
        as usize;
    let w = t.take(&at("weight_ih"), &spec["weight_ih"])?;
    let input = match w.shape[..] {
        [r, i] if r == g * hidden && i > 0 && dim.is_multiple_of(i) => i,
        _ => {
            return Err(PolicyError(format!(
                "{file}: {}: expected [{}, n] with n dividing the {dim} inputs, got {:?}",
                at("weight_ih"),
                g * hidden,
                w.shape
            )))
        }
    };
    let w_hh = t.take_shaped(&at("weight_hh"), &spec["weight_hh"], &[g * hidden, hidden])?;
    let b_ih = t.take_shaped(&at("bias_ih"), &spec["bias_ih"], &[g * hidden])?;
    let b_hh = t.take_shaped(&at("bias_hh"), &spec["bias_hh"], &[g * hidden])?;
    let (w_ih_t, w_hh_t) = (transpose(&w.data, g * hidden, input), transpose(&w_hh, g * hidden, hidden));
    Ok(Layer::Recurrent { cell, w_ih_t, w_hh_t, b_ih, b_hh, input, hidden })
}

/// `w` (`rows × cols`, row-major) transposed.
fn transpose(w: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0; w.len()];
    for r in 0..rows {
        for c in 0..cols {
            t[c * rows + r] = w[r * cols + c];
        }
    }
    t
}

fn parse_head(spec: &serde_json::Value, dim: usize, file: &str) -> Result<Head, PolicyError> {
    let bound = |f: &str| -> Result<Vec<f32>, PolicyError> {
        let v: Option<Vec<f32>> =
            spec[f].as_array().and_then(|a| a.iter().map(|x| x.as_f64().map(|x| x as f32)).collect());
        v.filter(|v| v.len() == dim && v.iter().all(|x| x.is_finite()))
            .ok_or_else(|| PolicyError(format!("{file}: net.head.{f}: expected {dim} finite numbers")))
    };
    match spec["type"].as_str() {
        Some("identity") | None => Ok(Head::Identity),
        Some("argmax") => Ok(Head::Argmax),
        Some("softmax") => Ok(Head::Softmax),
        Some("tanh") => Ok(Head::Tanh { low: bound("low")?, high: bound("high")? }),
        Some("clip") => Ok(Head::Clip { low: bound("low")?, high: bound("high")? }),
        Some("binary") => Ok(Head::Binary),
        Some("multi_argmax") => {
            let sizes: Option<Vec<usize>> =
                spec["sizes"].as_array().and_then(|a| a.iter().map(|x| x.as_u64().map(|n| n as usize)).collect());
            sizes
                .filter(|v| v.iter().all(|&n| n > 0) && v.iter().sum::<usize>() == dim)
                .map(|sizes| Head::MultiArgmax { sizes })
                .ok_or_else(|| PolicyError(format!("{file}: net.head.sizes: expected group sizes > 0 adding up to {dim}")))
        }
        Some(other) => Err(PolicyError(format!(
            "{file}: net.head.type: expected one of identity, argmax, softmax, tanh, clip, binary, multi_argmax, got {other:?}"
        ))),
    }
}

/// Runs one layer from `x` into `y`; returns the output length.
#[inline(always)]
fn run_layer<const FMA: bool>(
    layer: &Layer,
    x: &[f32],
    y: &mut [f32],
    h: &mut [f32],
    c: &mut [f32],
    gates: &mut [f32],
) -> usize {
    match layer {
        Layer::Linear { w, b, n_in, n_out } => {
            for (o, yo) in y[..*n_out].iter_mut().enumerate() {
                *yo = b[o] + dot::<FMA>(&w[o * n_in..(o + 1) * n_in], x);
            }
            *n_out
        }
        Layer::Act(a) => {
            for (yi, &xi) in y.iter_mut().zip(x) {
                *yi = a.apply(xi);
            }
            x.len()
        }
        Layer::Norm { gamma, beta, eps } => {
            let n = x.len() as f32;
            let mean = x.iter().sum::<f32>() / n;
            let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
            let inv = 1.0 / (var + eps).sqrt();
            for (i, yi) in y[..x.len()].iter_mut().enumerate() {
                *yi = (x[i] - mean) * inv * gamma[i] + beta[i];
            }
            x.len()
        }
        Layer::Recurrent { cell, w_ih_t, w_hh_t, b_ih, b_hh, input, hidden } => {
            let (h, c) = (&mut h[..*hidden], &mut c[..*hidden]);
            h.iter_mut().chain(c.iter_mut()).for_each(|v| *v = 0.0);
            let r = Recur { w_ih_t, w_hh_t, b_ih, b_hh, hidden: *hidden };
            for step in x.chunks_exact(*input) {
                let (gi, gh) = gates.split_at_mut(b_ih.len());
                r.project::<FMA>(step, h, gi, &mut gh[..b_hh.len()]);
                match cell {
                    Cell::Lstm => lstm_cell(gi, gh, h, c),
                    Cell::Gru => gru_cell(gi, gh, h),
                }
            }
            y[..*hidden].copy_from_slice(h);
            *hidden
        }
    }
}

/// A recurrent layer's weights, for one step.
struct Recur<'a> {
    w_ih_t: &'a [f32],
    w_hh_t: &'a [f32],
    b_ih: &'a [f32],
    b_hh: &'a [f32],
    hidden: usize,
}

impl Recur<'_> {
    /// `gi = W_ih x + b_ih` and `gh = W_hh h + b_hh` (all gates), as sums of scaled columns.
    #[inline(always)]
    fn project<const FMA: bool>(&self, x: &[f32], h: &[f32], gi: &mut [f32], gh: &mut [f32]) {
        let g = self.b_ih.len();
        gi.copy_from_slice(self.b_ih);
        gh.copy_from_slice(self.b_hh);
        for (j, &xj) in x.iter().enumerate() {
            axpy::<FMA>(gi, &self.w_ih_t[j * g..(j + 1) * g], xj);
        }
        for (j, &hj) in h.iter().enumerate().take(self.hidden) {
            axpy::<FMA>(gh, &self.w_hh_t[j * g..(j + 1) * g], hj);
        }
    }
}

/// PyTorch `LSTM`: gates i, f, g, o; c' = f·c + i·g, h' = o·tanh(c').
#[inline(always)]
fn lstm_cell(gi: &[f32], gh: &[f32], h: &mut [f32], c: &mut [f32]) {
    let u = h.len();
    let gate = |k: usize| gi[k] + gh[k];
    for k in 0..u {
        let (i, f) = (fast_sigmoid(gate(k)), fast_sigmoid(gate(u + k)));
        let (g, o) = (fast_tanh(gate(2 * u + k)), fast_sigmoid(gate(3 * u + k)));
        c[k] = f * c[k] + i * g;
        h[k] = o * fast_tanh(c[k]);
    }
}

/// PyTorch `GRU`: r, z from both terms; n = tanh(W_in x + b_in + r·(W_hn h + b_hn));
/// h' = (1 − z)·n + z·h.
#[inline(always)]
fn gru_cell(gi: &[f32], gh: &[f32], h: &mut [f32]) {
    let u = h.len();
    for k in 0..u {
        let (r, z) = (fast_sigmoid(gi[k] + gh[k]), fast_sigmoid(gi[u + k] + gh[u + k]));
        let n = fast_tanh(gi[2 * u + k] + r * gh[2 * u + k]);
        h[k] = (1.0 - z) * n + z * h[k];
    }
}

/// `y += a·x`.
#[inline(always)]
fn axpy<const FMA: bool>(y: &mut [f32], x: &[f32], a: f32) {
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi = if FMA { xi.mul_add(a, *yi) } else { *yi + a * xi };
    }
}

/// Dot product over eight independent partial sums, so that the compiler vectorizes it (a
/// single running sum must keep its order: floating-point addition is not associative).
#[inline(always)]
fn dot<const FMA: bool>(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] = if FMA { x[k].mul_add(y[k], acc[k]) } else { acc[k] + x[k] * y[k] };
        }
    }
    (acc[0] + acc[4]) + (acc[1] + acc[5]) + (acc[2] + acc[6]) + (acc[3] + acc[7]) + tail
}

/// Index of the first largest value, as `torch.argmax`.
fn argmax(x: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in x.iter().enumerate() {
        if v > x[best] {
            best = i;
        }
    }
    best
}

fn apply_head(head: &Head, x: &[f32], out: &mut [f32]) {
    match head {
        Head::Identity => out.copy_from_slice(x),
        Head::Argmax => out[0] = argmax(x) as f32,
        Head::MultiArgmax { sizes } => {
            let mut at = 0;
            for (o, &n) in out.iter_mut().zip(sizes) {
                *o = argmax(&x[at..at + n]) as f32;
                at += n;
            }
        }
        Head::Binary => {
            for (o, &v) in out.iter_mut().zip(x) {
                *o = f32::from(u8::from(v > 0.0));
            }
        }
        Head::Clip { low, high } => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = x[i].clamp(low[i], high[i]);
            }
        }
        Head::Softmax => {
            let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut s = 0.0;
            for (o, &v) in out.iter_mut().zip(x) {
                *o = (v - m).exp();
                s += *o;
            }
            out.iter_mut().for_each(|o| *o /= s);
        }
        Head::Tanh { low, high } => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = low[i] + (x[i].tanh() + 1.0) * 0.5 * (high[i] - low[i]);
            }
        }
    }
}

/// The generic network description of linear layers named by `prefixes` (`NAME.weight`,
/// `NAME.bias`) reading `input` values, activation `between` (`"relu"`, `"tanh"`, ...) between
/// them and `last` after the last one (DRL-CC's and PDAA3C's actors).
pub(crate) fn linear_stack(
    prefixes: &serde_json::Value,
    input: usize,
    between: &str,
    last: Option<&str>,
) -> Result<serde_json::Value, &'static str> {
    let names: Vec<&str> = prefixes
        .as_array()
        .and_then(|a| a.iter().map(|v| v.as_str()).collect::<Option<Vec<_>>>())
        .filter(|v| !v.is_empty())
        .ok_or("a non-empty list of linear layer names")?;
    let mut layers = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            layers.push(serde_json::json!({"type": between}));
        }
        layers.push(
            serde_json::json!({"type": "linear", "weight": format!("{name}.weight"), "bias": format!("{name}.bias")}),
        );
    }
    if let Some(act) = last {
        layers.push(serde_json::json!({"type": act}));
    }
    Ok(serde_json::json!({"input": {"size": input}, "layers": layers}))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rational tanh and the sigmoid built on it stay within 1e-6 of libm over ±12.
    #[test]
    fn fast_tanh_and_sigmoid_match_libm() {
        let (mut worst_t, mut worst_s) = (0.0f32, 0.0f32);
        for k in -120_000..=120_000 {
            let x = k as f32 * 1e-4;
            worst_t = worst_t.max((fast_tanh(x) - x.tanh()).abs());
            worst_s = worst_s.max((fast_sigmoid(x) - sigmoid(x)).abs());
        }
        assert!(worst_t <= 1e-6 && worst_s <= 1e-6, "tanh {worst_t}, sigmoid {worst_s}");
        assert_eq!(fast_tanh(0.0), 0.0);
        assert!(fast_tanh(50.0) <= 1.0 && fast_tanh(-50.0) >= -1.0);
    }
}
