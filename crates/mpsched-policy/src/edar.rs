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
//!
//! Speed (target: ≤ 20 µs per decision): the six LSTM1s of a subflow step together (one pass
//! over the intervals; their recurrent matrix is block-diagonal, so only the six `4U1 × U1`
//! blocks are multiplied); every matrix is stored in blocks of output rows, column-major within
//! a block ([`Blocked`]), so a matrix-vector product keeps a block of outputs in SIMD registers;
//! the gate nonlinearities run over whole arrays with a branch-free polynomial `exp`
//! ([`sigmoid_slice`]); on x86-64 CPUs with AVX2 and FMA the same code is compiled a second time
//! for them and chosen at load time (`is_x86_feature_detected!`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mpsched_transport::observe::features::{ObsLayout, CONN_FEATURES, SUBFLOW_FEATURES};

use crate::checkpoint::Checkpoint;
use crate::safetensors::Tensor;
use crate::PolicyError;

/// Subflow series the network reads (E_t^i: d, o, x, w, l, f).
pub const SUBFLOW_INPUTS: [&str; 6] = ["srtt", "rto", "throughput", "cwnd", "loss", "inflight"];
/// Connection state M_t: a_{t-1}, b_t, I_t.
pub const CONN_INPUTS: [&str; 3] = ["prev_mode", "rcv_window", "inflight"];

const NF: usize = SUBFLOW_INPUTS.len();

/// Rounds `n` up to a multiple of `b`.
fn round_up(n: usize, b: usize) -> usize {
    n.div_ceil(b) * b
}

/// A weight matrix `[n_out, n_in]` stored for fast `y += W x`: output rows in blocks of `B`,
/// each block column-major (`[n_out / B][n_in][B]`, rows padded with zeros to a multiple of
/// `B`). A product then keeps `B` partial sums in registers and streams the weights once,
/// contiguously, with no horizontal sums (a row-major dot product needs one per row).
#[derive(Clone)]
struct Blocked<const B: usize> {
    w: Vec<f32>,
    n_in: usize,
}

impl<const B: usize> Blocked<B> {
    /// From row-major `w` (`[n_out, n_in]`); row `r` is multiplied by `scale(r)`.
    fn new(w: &[f32], n_out: usize, n_in: usize, scale: impl Fn(usize) -> f32) -> Self {
        let mut out = vec![0.0; round_up(n_out, B) * n_in];
        for r in 0..n_out {
            for k in 0..n_in {
                out[(r / B * n_in + k) * B + r % B] = w[r * n_in + k] * scale(r);
            }
        }
        Blocked { w: out, n_in }
    }
}

/// `y += W x` for a [`Blocked`] matrix (`y`: the padded outputs). `x` may be shorter than the
/// matrix's `n_in`: the missing inputs are zero (a zero recurrent state costs nothing).
#[inline(always)]
fn matvec<const B: usize, const FMA: bool>(m: &Blocked<B>, x: &[f32], y: &mut [f32]) {
    for (wb, yb) in m.w.chunks_exact(m.n_in * B).zip(y.chunks_exact_mut(B)) {
        // Fixed-size arrays: no bounds checks, and the sums stay in registers.
        let yb: &mut [f32; B] = yb.try_into().unwrap();
        let mut acc = *yb;
        for (wk, &xk) in wb.chunks_exact(B).zip(x) {
            let wk: &[f32; B] = wk.try_into().unwrap();
            for l in 0..B {
                acc[l] = madd::<FMA>(wk[l], xk, acc[l]);
            }
        }
        *yb = acc;
    }
}

/// `y_a += W x_a` and `y_b += W x_b` in one pass over the weights: LSTM2's input weights are
/// the largest matrix (not L1-resident), and two subflows' inputs are known before LSTM2 runs.
#[inline(always)]
fn matvec2<const B: usize, const FMA: bool>(m: &Blocked<B>, xa: &[f32], xb: &[f32], ya: &mut [f32], yb: &mut [f32]) {
    let n = xa.len().min(xb.len());
    let (xa, xb) = (&xa[..n], &xb[..n]);
    for ((wb, ya), yb) in m.w.chunks_exact(m.n_in * B).zip(ya.chunks_exact_mut(B)).zip(yb.chunks_exact_mut(B)) {
        let (ya, yb): (&mut [f32; B], &mut [f32; B]) = (ya.try_into().unwrap(), yb.try_into().unwrap());
        let (mut a, mut b) = (*ya, *yb);
        for ((wk, &xa), &xb) in wb.chunks_exact(B).zip(xa).zip(xb) {
            let wk: &[f32; B] = wk.try_into().unwrap();
            for l in 0..B {
                a[l] = madd::<FMA>(wk[l], xa, a[l]);
                b[l] = madd::<FMA>(wk[l], xb, b[l]);
            }
        }
        *ya = a;
        *yb = b;
    }
}

/// `a * b + c`, fused when the caller is compiled for FMA (`mul_add` without hardware FMA is a
/// slow library call; plain `a * b + c` is never fused by the compiler).
#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// `e^x`, branch-free so that loops over arrays of it vectorize (libm's `expf` is a call per
/// element). `x = n ln2 + r` with `|r| ≤ ln2/2`, `e^r` by its Taylor series to degree 7
/// (truncation < 1e-8 relative), `2^n` built in the exponent bits. Relative error below one
/// f32 ulp (≈ 1e-7, tested); inputs are clamped to [-87, 88] (results stay normal and finite),
/// NaN stays NaN.
#[inline(always)]
fn exp<const FMA: bool>(x: f32) -> f32 {
    // Adding 1.5·2^23 rounds to an integer, which then sits in the low mantissa bits.
    const SHIFT: f32 = 12_582_912.0;
    // ln 2 split so that `n * LN2_HI` is exact for |n| < 2^15.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let x = x.clamp(-87.0, 88.0);
    let t = madd::<FMA>(x, std::f32::consts::LOG2_E, SHIFT);
    let n = t - SHIFT;
    let r = madd::<FMA>(n, -LN2_LO, madd::<FMA>(n, -LN2_HI, x));
    let mut p = 1.0 / 5040.0;
    for c in [1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0] {
        p = madd::<FMA>(p, r, c);
    }
    let n_int = t.to_bits().wrapping_sub(SHIFT.to_bits()) as i32;
    p * f32::from_bits(((n_int + 127) << 23) as u32)
}

/// Logistic sigmoid of every element, in place (vectorizes: no calls, no branches). Chunks of
/// 16 give several independent SIMD chains per iteration (two with AVX2): the polynomial's and
/// the division's latency dominate.
#[inline(always)]
fn sigmoid_slice<const FMA: bool>(v: &mut [f32]) {
    let mut chunks = v.chunks_exact_mut(16);
    for c in &mut chunks {
        for x in c {
            *x = 1.0 / (1.0 + exp::<FMA>(-*x));
        }
    }
    for x in chunks.into_remainder() {
        *x = 1.0 / (1.0 + exp::<FMA>(-*x));
    }
}

/// One LSTM cell update over `n` units from gate activations already through the sigmoid, with
/// the `g` gate computed as `σ(2g)` (its weights were doubled at load time, which is exact) so
/// that `tanh(g) = 2σ(2g) − 1`; `tanh(c')` likewise through `scratch`. Gate `k` of unit `u` is
/// `act[k * stride + u]`.
#[inline(always)]
fn cell<const FMA: bool>(act: &[f32], stride: usize, c: &mut [f32], h: &mut [f32], scratch: &mut [f32]) {
    let n = c.len();
    let (i, f, g) = (&act[..n], &act[stride..stride + n], &act[2 * stride..2 * stride + n]);
    for u in 0..n {
        c[u] = madd::<FMA>(f[u], c[u], i[u] * madd::<FMA>(2.0, g[u], -1.0));
        scratch[u] = 2.0 * c[u];
    }
    sigmoid_slice::<FMA>(&mut scratch[..n]);
    let o = &act[3 * stride..3 * stride + n];
    for u in 0..n {
        h[u] = o[u] * madd::<FMA>(2.0, scratch[u], -1.0);
    }
}

/// Output-row block sizes of the matrices (the outputs of a block are kept in registers and
/// each input is broadcast once per block; several independent sums per block hide the
/// latency of the multiply-adds). Sized for the paper's network (padding makes any size
/// work): one block per LSTM1 (4·10 gates), LSTM2's 4·60 gates in five blocks, the core's
/// 128 and 32 units in blocks of 32, the two Q-values in one small block.
const B1: usize = 40;
const B2: usize = 48;
const BC: usize = 32;
const BO: usize = 8;

/// A loaded EdAR Q-network.
#[derive(Clone)]
pub struct EdarNet {
    /// The checkpoint's description file.
    pub path: PathBuf,
    /// The checkpoint's variant (`edar`, `edar-p`, `edar-o`, ...).
    pub variant: String,
    /// Intervals of history the network reads (`k + 1`).
    pub history: usize,
    u1: usize,
    /// Gate rows of one LSTM1 (`4 U1`), padded to a multiple of [`B1`].
    r1: usize,
    u2: usize,
    n_core: [usize; 2],
    avx2_fma: bool,
    l1_w_ih: Vec<f32>,         // [F, r1], g-gate rows doubled (see `cell`)
    l1_b: Vec<f32>,            // [F, r1], likewise
    l1_w_hh: Vec<Blocked<B1>>, // per series, [4U1, U1]
    l2_w_ih: Blocked<B2>,      // [4U2, F·2·U1]
    l2_w_hh: Blocked<B2>,      // [4U2, U2]
    l2_b: Vec<f32>,            // b_ih + b_hh, padded
    core_w: [Blocked<BC>; 2],
    core_b: [Vec<f32>; 2],
    out_w: Blocked<BO>,
    out_b: Vec<f32>,
    sub_idx: [usize; NF],
    conn_idx: [usize; 3],
    // Scratch.
    // LSTM1 state of up to two subflows' six series: series s = slot·F + feature.
    g1: Vec<f32>, // [2F, r1] gates
    h1: Vec<f32>, // [2F, U1]
    c1: Vec<f32>, // [2F, U1]
    o1: Vec<f32>, // [2F, U1] output gates
    t1: Vec<f32>, // [2F, U1] for tanh(c)
    z: Vec<f32>,  // [2, F·2·U1]: LSTM2 inputs (F × (h_{t-1}, h_t) of LSTM1) of two subflows
    g2: Vec<f32>, // [2, 4U2 padded]: LSTM2 gates of two subflows
    c2: Vec<f32>,
    h2: Vec<f32>,
    t2: Vec<f32>,
    x_core: Vec<f32>,
    y1: Vec<f32>,
    y2: Vec<f32>,
    y3: Vec<f32>,
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

/// The network's sizes and variant, from a checkpoint's description.
struct Hyper {
    variant: String,
    history: usize,
    u1: usize,
    u2: usize,
    /// Input and output sizes of the core's layers: `[3 + U2, core0, core1, 2]`.
    dims: [usize; 4],
}

/// A checkpoint's tensors, checked against [`Hyper`] (torch layout, row-major).
struct Weights {
    l1_w_ih: Vec<f32>,
    l1_w_hh: Vec<f32>,
    l1_b: Vec<f32>,
    l2_w_ih: Vec<f32>,
    l2_w_hh: Vec<f32>,
    /// `b_ih + b_hh` of LSTM2.
    l2_b: Vec<f32>,
    /// (weight, bias) of the core's three layers.
    core: [(Vec<f32>, Vec<f32>); 3],
}

/// Checks the description's format, algorithm and action count, and reads the sizes.
fn parse_hyper(desc: &serde_json::Value, js: &Path) -> Result<Hyper, PolicyError> {
    let u1 = uint(desc, "net.lstm1_units", js)?;
    let u2 = uint(desc, "net.lstm2_units", js)?;
    let history = uint(desc, "net.history", js)?;
    if history < 2 {
        return Err(PolicyError(format!("{}: field \"net.history\": expected at least 2", js.display())));
    }
    let na = uint(desc, "net.n_actions", js)?;
    if na != 2 {
        return Err(PolicyError(format!("{}: field \"net.n_actions\": expected 2, got {na}", js.display())));
    }
    let core_units: Vec<usize> = field(desc, "net.core_units", js)?
        .as_array()
        .and_then(|a| a.iter().map(|x| x.as_u64().map(|v| v as usize)).collect::<Option<Vec<_>>>())
        .filter(|v| v.len() == 2 && v.iter().all(|&x| x > 0))
        .ok_or_else(|| {
            PolicyError(format!("{}: field \"net.core_units\": expected two positive integers", js.display()))
        })?;
    check_inputs(desc, js)?;
    let variant = desc.get("variant").and_then(|v| v.as_str()).unwrap_or("edar").to_owned();
    let dims = [CONN_INPUTS.len() + u2, core_units[0], core_units[1], 2];
    Ok(Hyper { variant, history, u1, u2, dims })
}

/// The description's input lists must be the network's ([`SUBFLOW_INPUTS`], [`CONN_INPUTS`]).
fn check_inputs(desc: &serde_json::Value, js: &Path) -> Result<(), PolicyError> {
    let subs = names(desc, "net.subflow_inputs", js)?;
    let conns = names(desc, "net.conn_inputs", js)?;
    if subs != SUBFLOW_INPUTS {
        return Err(PolicyError(format!(
            "{}: field \"net.subflow_inputs\": expected {SUBFLOW_INPUTS:?}, got {subs:?}",
            js.display()
        )));
    }
    if conns != CONN_INPUTS {
        return Err(PolicyError(format!(
            "{}: field \"net.conn_inputs\": expected {CONN_INPUTS:?}, got {conns:?}",
            js.display()
        )));
    }
    Ok(())
}

/// Positions of the network's inputs among the observation's subflow and connection features.
fn input_indices() -> ([usize; NF], [usize; 3]) {
    let mut sub_idx = [0; NF];
    for (k, n) in SUBFLOW_INPUTS.iter().enumerate() {
        sub_idx[k] = SUBFLOW_FEATURES.iter().position(|f| f == n).expect("EdAR input in the observation");
    }
    let mut conn_idx = [0; 3];
    for (k, n) in CONN_INPUTS.iter().enumerate() {
        conn_idx[k] = CONN_FEATURES.iter().position(|f| f == n).expect("EdAR input in the observation");
    }
    (sub_idx, conn_idx)
}

/// Reads the weights file: every tensor the network needs, with its shape, finite, and no other.
fn read_weights(mut t: BTreeMap<String, Tensor>, st: &Path, h: &Hyper) -> Result<Weights, PolicyError> {
    let mut take = |name: &str, shape: &[usize]| -> Result<Vec<f32>, PolicyError> {
        let Tensor { shape: got, data } = t.remove(name).ok_or_else(|| {
            PolicyError(format!("{}: missing tensor {name:?} (expected shape {shape:?})", st.display()))
        })?;
        if got != shape {
            return Err(PolicyError(format!(
                "{}: tensor {name:?}: expected shape {shape:?}, got {got:?}",
                st.display()
            )));
        }
        if data.iter().any(|x| !x.is_finite()) {
            return Err(PolicyError(format!("{}: tensor {name:?}: contains NaN or infinity", st.display())));
        }
        Ok(data)
    };
    let (u1, u2, dims) = (h.u1, h.u2, h.dims);
    let l1_w_ih = take("lstm1_weight_ih", &[NF, 4 * u1])?;
    let l1_w_hh = take("lstm1_weight_hh", &[NF, 4 * u1, u1])?;
    let l1_b = take("lstm1_bias", &[NF, 4 * u1])?;
    let l2_w_ih = take("lstm2.weight_ih", &[4 * u2, NF * 2 * u1])?;
    let l2_w_hh = take("lstm2.weight_hh", &[4 * u2, u2])?;
    let b_ih = take("lstm2.bias_ih", &[4 * u2])?;
    let b_hh = take("lstm2.bias_hh", &[4 * u2])?;
    let l2_b = b_ih.iter().zip(&b_hh).map(|(a, b)| a + b).collect();
    let mut layer = |k: usize, i: usize| -> Result<(Vec<f32>, Vec<f32>), PolicyError> {
        let (n_in, n_out) = (dims[i], dims[i + 1]);
        Ok((take(&format!("core.{k}.weight"), &[n_out, n_in])?, take(&format!("core.{k}.bias"), &[n_out])?))
    };
    let core = [layer(0, 0)?, layer(2, 1)?, layer(4, 2)?];
    if let Some(extra) = t.keys().next() {
        return Err(PolicyError(format!("{}: unexpected tensor {extra:?}", st.display())));
    }
    Ok(Weights { l1_w_ih, l1_w_hh, l1_b, l2_w_ih, l2_w_hh, l2_b, core })
}

/// Row scale of an LSTM's weights with `u` units: the g gate (rows 2U..3U) is doubled, so one
/// sigmoid serves all gates (see [`cell`]).
fn gate_scale(u: usize) -> impl Fn(usize) -> f32 {
    move |r: usize| if r / u == 2 { 2.0 } else { 1.0 }
}

/// `b` padded with zeros to a multiple of `blk`.
fn padded(b: &[f32], blk: usize) -> Vec<f32> {
    let mut v = vec![0.0; round_up(b.len(), blk)];
    v[..b.len()].copy_from_slice(b);
    v
}

impl EdarNet {
    /// Loads a checkpoint (`NAME.json` + `NAME.safetensors`) and checks every shape.
    pub fn load(path: &Path) -> Result<EdarNet, PolicyError> {
        Self::from_checkpoint(Checkpoint::read(path)?)
    }

    /// The network of a read `"algorithm": "edar"` checkpoint.
    pub fn from_checkpoint(ck: Checkpoint) -> Result<EdarNet, PolicyError> {
        ck.check_format()?;
        let alg = ck.algorithm()?;
        if alg != "edar" {
            return Err(PolicyError(format!("{}: algorithm: expected \"edar\", got {alg:?}", ck.desc_path.display())));
        }
        let hyper = parse_hyper(&ck.desc, &ck.desc_path)?;
        let weights = read_weights(ck.tensors, &ck.weights_path, &hyper)?;
        Ok(Self::build(ck.desc_path, hyper, &weights))
    }

    /// The network in its computing layout (blocked matrices, scaled g gates, scratch buffers).
    fn build(path: PathBuf, h: Hyper, w: &Weights) -> EdarNet {
        let (u1, u2, dims) = (h.u1, h.u2, h.dims);
        let n_in2 = NF * 2 * u1;
        let r1 = round_up(4 * u1, B1);
        // Per-series vectors ([F, 4U1]) padded to r1 rows per series, g gate doubled.
        let per_series = |v: &[f32]| -> Vec<f32> {
            let mut out = vec![0.0; NF * r1];
            for j in 0..NF {
                for r in 0..4 * u1 {
                    out[j * r1 + r] = v[j * 4 * u1 + r] * gate_scale(u1)(r);
                }
            }
            out
        };
        let l1_w_hh = (0..NF)
            .map(|j| Blocked::new(&w.l1_w_hh[j * 4 * u1 * u1..(j + 1) * 4 * u1 * u1], 4 * u1, u1, gate_scale(u1)))
            .collect();
        let mut l2_b = vec![0.0; round_up(4 * u2, B2)];
        for (r, b) in l2_b.iter_mut().enumerate().take(4 * u2) {
            *b = w.l2_b[r] * gate_scale(u2)(r);
        }
        let one = |_: usize| 1.0;
        let core = &w.core;
        EdarNet {
            path,
            variant: h.variant,
            history: h.history,
            u1,
            r1,
            u2,
            n_core: [dims[1], dims[2]],
            avx2_fma: avx2_fma_available(),
            l1_w_ih: per_series(&w.l1_w_ih),
            l1_b: per_series(&w.l1_b),
            l1_w_hh,
            l2_w_ih: Blocked::new(&w.l2_w_ih, 4 * u2, n_in2, gate_scale(u2)),
            l2_w_hh: Blocked::new(&w.l2_w_hh, 4 * u2, u2, gate_scale(u2)),
            l2_b,
            core_w: [Blocked::new(&core[0].0, dims[1], dims[0], one), Blocked::new(&core[1].0, dims[2], dims[1], one)],
            core_b: [padded(&core[0].1, BC), padded(&core[1].1, BC)],
            out_w: Blocked::new(&core[2].0, 2, dims[2], one),
            out_b: padded(&core[2].1, BO),
            sub_idx: input_indices().0,
            conn_idx: input_indices().1,
            g1: vec![0.0; 2 * NF * r1],
            h1: vec![0.0; 2 * NF * u1],
            c1: vec![0.0; 2 * NF * u1],
            o1: vec![0.0; 2 * NF * u1],
            t1: vec![0.0; 2 * NF * u1],
            z: vec![0.0; 2 * n_in2],
            g2: vec![0.0; 2 * round_up(4 * u2, B2)],
            c2: vec![0.0; u2],
            h2: vec![0.0; u2],
            t2: vec![0.0; u2],
            x_core: vec![0.0; dims[0]],
            y1: vec![0.0; round_up(dims[1], BC)],
            y2: vec![0.0; round_up(dims[2], BC)],
            y3: vec![0.0; BO],
        }
    }

    /// Which compiled forward pass decisions use: `"avx2+fma"` or `"portable"`.
    pub fn kernels(&self) -> &'static str {
        if self.avx2_fma {
            "avx2+fma"
        } else {
            "portable"
        }
    }

    /// Uses the portable forward pass even on a CPU with AVX2 and FMA (for tests and
    /// benchmarks of the fallback).
    pub fn force_portable(&mut self) {
        self.avx2_fma = false;
    }

    /// Q-values (normal, redundant) of one flat scheduler-env observation with `max_paths`
    /// subflow slots and the network's history. Returns whether no subflow has an RTT sample
    /// yet (the connection start, where EdAR sends redundantly).
    pub fn q_values(&mut self, obs: &[f32], max_paths: usize, q: &mut [f32; 2]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.avx2_fma {
            #[allow(unsafe_code)]
            // SAFETY: `avx2_fma` is only set when the running CPU has AVX2 and FMA
            // (`avx2_fma_available`).
            return unsafe { self.forward_avx2_fma(obs, max_paths, q) };
        }
        self.forward::<false>(obs, max_paths, q)
    }

    /// [`Self::forward`] compiled for AVX2 + FMA (8 lanes, fused multiply-adds).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn forward_avx2_fma(&mut self, obs: &[f32], max_paths: usize, q: &mut [f32; 2]) -> bool {
        self.forward::<true>(obs, max_paths, q)
    }

    #[inline(always)]
    fn forward<const FMA: bool>(&mut self, obs: &[f32], max_paths: usize, q: &mut [f32; 2]) -> bool {
        let hist = self.history;
        let layout = ObsLayout { max_paths, history: hist, max_flows: 0 };
        let frame = layout.frame_len();
        assert!(obs.len() >= layout.size(), "observation shorter than the layout");
        self.h2.fill(0.0);
        self.c2.fill(0.0);
        // LSTM2's state is zero before the first present subflow: skip its recurrent part.
        let mut first = true;
        // Present subflows (offsets of their features in a frame) not yet through the network:
        // they go two at a time, so that the two subflows' LSTM1s step together (independent
        // work that hides the latency of each step) and share one pass over LSTM2's input
        // weights.
        let mut pending = [0usize; 2];
        let mut n_pending = 0;
        let mut any_rtt = false;
        for i in 0..max_paths {
            let slot = layout.subflow_slot(i);
            let at = |t: usize, f: usize| obs[layout.frame(t) + slot + f];
            let has_history = (0..hist).any(|t| self.sub_idx.iter().any(|&f| at(t, f) != 0.0));
            let present = obs[layout.path_mask_offset() + i] > 0.5 || has_history;
            if !present {
                continue;
            }
            if at(hist - 1, self.sub_idx[0]) > 0.0 {
                any_rtt = true;
            }
            pending[n_pending] = slot;
            n_pending += 1;
            if n_pending == 2 {
                self.lstm1::<FMA>(obs, frame, &pending);
                self.lstm2::<FMA>(2, first);
                first = false;
                n_pending = 0;
            }
        }
        if n_pending == 1 {
            self.lstm1::<FMA>(obs, frame, &pending[..1]);
            self.lstm2::<FMA>(1, first);
        }
        // Core network.
        let conn = layout.frame(hist - 1) + layout.conn_offset();
        for (k, &ci) in self.conn_idx.iter().enumerate() {
            self.x_core[k] = obs[conn + ci];
        }
        self.x_core[CONN_INPUTS.len()..].copy_from_slice(&self.h2);
        let [n1, n2] = self.n_core;
        self.y1.copy_from_slice(&self.core_b[0]);
        matvec::<BC, FMA>(&self.core_w[0], &self.x_core, &mut self.y1);
        self.y1.iter_mut().for_each(|y| *y = y.max(0.0));
        self.y2.copy_from_slice(&self.core_b[1]);
        matvec::<BC, FMA>(&self.core_w[1], &self.y1[..n1], &mut self.y2);
        self.y2.iter_mut().for_each(|y| *y = y.max(0.0));
        self.y3.copy_from_slice(&self.out_b);
        matvec::<BO, FMA>(&self.out_w, &self.y2[..n2], &mut self.y3);
        q.copy_from_slice(&self.y3[..2]);
        !any_rtt
    }

    /// The six LSTM1s of each subflow whose features start at `obs[t * frame + base]` (`bases`:
    /// one or two), all stepped together over the intervals; writes LSTM2's inputs into `z`.
    #[inline(always)]
    fn lstm1<const FMA: bool>(&mut self, obs: &[f32], frame: usize, bases: &[usize]) {
        let (hist, u1, r1) = (self.history, self.u1, self.r1);
        let ns = bases.len() * NF; // series
        let (g1, h1, c1, o1, t1) = (
            &mut self.g1[..ns * r1],
            &mut self.h1[..ns * u1],
            &mut self.c1[..ns * u1],
            &mut self.o1[..ns * u1],
            &mut self.t1[..ns * u1],
        );
        h1.fill(0.0);
        c1.fill(0.0);
        for t in 0..hist {
            for s in 0..ns {
                let j = s % NF;
                let x = obs[t * frame + bases[s / NF] + self.sub_idx[j]];
                let (w, b) = (&self.l1_w_ih[j * r1..(j + 1) * r1], &self.l1_b[j * r1..(j + 1) * r1]);
                let g = &mut g1[s * r1..(s + 1) * r1];
                for r in 0..r1 {
                    g[r] = madd::<FMA>(w[r], x, b[r]);
                }
                // h = 0 at the first interval.
                let h = if t == 0 { &[][..] } else { &h1[s * u1..(s + 1) * u1] };
                matvec::<B1, FMA>(&self.l1_w_hh[j], h, g);
            }
            sigmoid_slice::<FMA>(g1);
            for s in 0..ns {
                let a = &g1[s * r1..(s + 1) * r1];
                let (c, o, tc) =
                    (&mut c1[s * u1..(s + 1) * u1], &mut o1[s * u1..(s + 1) * u1], &mut t1[s * u1..(s + 1) * u1]);
                for u in 0..u1 {
                    c[u] = madd::<FMA>(a[u1 + u], c[u], a[u] * madd::<FMA>(2.0, a[2 * u1 + u], -1.0));
                    o[u] = a[3 * u1 + u];
                    tc[u] = 2.0 * c[u];
                }
            }
            // tanh(c) = 2σ(2c) − 1 over all units at once.
            sigmoid_slice::<FMA>(t1);
            for ((h, &o), &s) in h1.iter_mut().zip(&*o1).zip(&*t1) {
                *h = o * madd::<FMA>(2.0, s, -1.0);
            }
            if t + 2 >= hist {
                let k = t + 2 - hist; // 0: h_{t-1}, 1: h_t
                for s in 0..ns {
                    // z[slot] = F × (h_{t-1}, h_t); series s = slot·F + j.
                    let o = s * 2 * u1 + k * u1;
                    self.z[o..o + u1].copy_from_slice(&h1[s * u1..(s + 1) * u1]);
                }
            }
        }
    }

    /// LSTM2 steps over the `n` (1 or 2) subflows waiting in `z`; `first`: its state is zero.
    #[inline(always)]
    fn lstm2<const FMA: bool>(&mut self, n: usize, first: bool) {
        let (n_in, p2) = (NF * 2 * self.u1, self.l2_b.len());
        let (ga, gb) = self.g2.split_at_mut(p2);
        let (za, zb) = self.z.split_at(n_in);
        ga.copy_from_slice(&self.l2_b);
        if n == 2 {
            gb.copy_from_slice(&self.l2_b);
            matvec2::<B2, FMA>(&self.l2_w_ih, za, zb, ga, gb);
        } else {
            matvec::<B2, FMA>(&self.l2_w_ih, za, ga);
        }
        for p in 0..n {
            let g = &mut self.g2[p * p2..(p + 1) * p2];
            if !(first && p == 0) {
                matvec::<B2, FMA>(&self.l2_w_hh, &self.h2, g);
            }
            sigmoid_slice::<FMA>(g);
            cell::<FMA>(g, self.u2, &mut self.c2, &mut self.h2, &mut self.t2);
        }
    }

    /// Whether the network reads observation index `k` of `l`: its subflow series and
    /// connection inputs, in every frame, and the mask.
    pub fn reads(&self, k: usize, l: &ObsLayout) -> bool {
        if k >= l.path_mask_offset() {
            return true;
        }
        let o = k % l.frame_len();
        if o < l.conn_offset() {
            self.sub_idx.contains(&(o % SUBFLOW_FEATURES.len()))
        } else if o < l.flow_offset() {
            self.conn_idx.contains(&(o - l.conn_offset()))
        } else {
            false
        }
    }

    /// The greedy action: 1 (redundant) at the connection start or when Q(redundant) is larger.
    pub fn act(&mut self, obs: &[f32], max_paths: usize) -> u8 {
        let mut q = [0.0; 2];
        let start = self.q_values(obs, max_paths, &mut q);
        u8::from(start || q[1] > q[0])
    }
}

/// Whether this CPU runs the AVX2 + FMA build of the forward pass.
pub(crate) fn avx2_fma_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Tensors by name, for tests.
pub type Tensors = BTreeMap<String, Tensor>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The polynomial `exp` and the sigmoid/tanh built on it, against f64 over the whole range
    /// (both the fused and the unfused build).
    #[test]
    fn exp_sigmoid_tanh_accuracy() {
        let (mut e_rel, mut s_abs, mut t_abs) = (0.0f64, 0.0f64, 0.0f64);
        for k in -1_000_000..=1_000_000 {
            let x = k as f32 * 1e-4; // -100 .. 100
            for fma in [false, true] {
                let (e, s, t) = if fma {
                    let mut v = [x, 2.0 * x];
                    sigmoid_slice::<true>(&mut v);
                    (exp::<true>(x), v[0], 2.0 * v[1] - 1.0)
                } else {
                    let mut v = [x, 2.0 * x];
                    sigmoid_slice::<false>(&mut v);
                    (exp::<false>(x), v[0], 2.0 * v[1] - 1.0)
                };
                let xd = f64::from(x);
                if (-87.0..=88.0).contains(&x) {
                    e_rel = e_rel.max((f64::from(e) - xd.exp()).abs() / xd.exp());
                }
                s_abs = s_abs.max((f64::from(s) - 1.0 / (1.0 + (-xd).exp())).abs());
                t_abs = t_abs.max((f64::from(t) - xd.tanh()).abs());
            }
        }
        assert!(e_rel < 4e-7, "exp: relative error {e_rel:e}");
        assert!(s_abs < 1.2e-7, "sigmoid: absolute error {s_abs:e}");
        assert!(t_abs < 2.4e-7, "tanh: absolute error {t_abs:e}");
        assert!(exp::<false>(f32::NAN).is_nan());
    }
}
