//! Learning environments (architecture §5): a simulation paused at every decision interval of
//! one controlled flow, observations written as `f32` into caller slices and the interval's
//! reward terms as `f64`. The Python gymnasium classes (`mpsched.envs`) are thin wrappers; the
//! vector env ([`VecEnv`]) steps many of these with the GIL released.
//!
//! Observation of one interval (a *frame*), oldest of `history` frames first, then the mask:
//! - per subflow, `max_paths` slots of [`SUBFLOW_FEATURES`] (zeros for absent subflows);
//! - the connection's [`CONN_FEATURES`];
//! - congestion-control envs only: `max_flows` slots of [`FLOW_FEATURES`] for every flow of the
//!   host (DRL-CC's state);
//! - after the frames: the mask, 1 per usable subflow (established, path up), then, for
//!   congestion-control envs, 1 per active flow.
//!
//! Features are scaled to be O(1): times in units of 100 ms, windows in units of 100 segments,
//! rates in units of 10 Mbit/s, buffer figures as fractions of the receive buffer.

use serde::Deserialize;

use crate::rng::stream_seed;
use crate::scenario::ScenarioError;
use crate::sim::{Sim, Stop};
use crate::{parse_text, Decision, Format};

/// Per-subflow features of a frame.
pub const SUBFLOW_FEATURES: [&str; 11] = [
    "srtt",          // smoothed RTT, 100 ms
    "rttvar",        // RTT variation, 100 ms
    "rto",           // retransmission timeout, 100 ms
    "cwnd",          // congestion window, 100 segments
    "inflight",      // pipe, 100 segments
    "delivery_rate", // latest delivery-rate sample, 10 Mbit/s
    "throughput",    // payload sent in the interval (retransmissions included), 10 Mbit/s
    "goodput",       // payload acknowledged on the subflow in the interval, 10 Mbit/s
    "loss",          // segments detected lost / segments sent in the interval
    "free_bw",       // max delivery rate over the history minus throughput (>= 0), 10 Mbit/s
    "prev_share",    // the previous action's share or selection of this subflow
];

/// Connection features of a frame.
pub const CONN_FEATURES: [&str; 8] = [
    "rcv_window",   // peer's advertised window (largest over subflows) / receive buffer
    "inflight",     // bytes in flight over all subflows / receive buffer
    "ooo",          // mean out-of-order bytes at the receiver in the interval / buffer (EdAR O/B)
    "buffer_full",  // time the receive buffer was full / interval (EdAR F/TI)
    "goodput",      // bytes delivered to the receiving application in the interval, 10 Mbit/s
    "send_blocked", // time the sender was blocked by the peer's window / interval
    "prev_mode",    // previous action of a mode env: 0 normal, 1 redundant
    "interval",     // length of the interval, 100 ms
];

/// Per-flow features of a congestion-control frame (DRL-CC's b, g, d, v, w per flow).
pub const FLOW_FEATURES: [&str; 6] = [
    "send_rate", // payload sent over all subflows, 10 Mbit/s
    "goodput",   // delivered to the application, 10 Mbit/s
    "srtt",      // mean smoothed RTT over subflows, 100 ms
    "rttvar",    // mean RTT variation, 100 ms
    "cwnd",      // sum of congestion windows, 100 segments
    "target",    // 1 for the controlled flow
];

/// Reward terms of an interval (see `mpsched.rewards`). Per-subflow and per-flow columns follow:
/// `sub_tput_mbps_<i>` for i < max_paths (receiver-side throughput of subflow i, EdAR's Y_i,
/// PDAA3C's TT_i), then `flow_goodput_mbps_<j>` and `flow_active_<j>` for j < max_flows.
pub const TERMS: [&str; 15] = [
    "interval_s",     // length of the interval
    "goodput_mbps",   // G: bytes delivered in order to the receiving application
    "recv_tput_mbps", // ΣY: bytes received on all subflows (duplicates included)
    "send_tput_mbps", // bytes sent on all subflows (retransmissions and copies included)
    "ooo_bytes",      // O: mean out-of-order bytes in the receive buffer
    "buffer_bytes",   // B: receive buffer size
    "buffer_full_s",  // F: time the receive buffer was full
    "redundant_mbps", // redundant copies sent
    "energy_j",       // E: device energy of the used interfaces (MPTCP-RL power model)
    "power_w",        // E / interval
    "delay_ms",       // D: mean smoothed RTT over established subflows
    "jitter_ms",      // J: mean |Δ srtt| over established subflows since the last interval
    "capacity_mbps",  // sum of the nominal rates of the flow's paths (bottleneck link each)
    "done",           // 1 when the controlled flow completed in this interval
    "subflows",       // subflows of the controlled connection
];

/// The action of an env.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionKind {
    /// One value: 0 normal (minRTT), 1 redundant (EdAR).
    Mode,
    /// `max_paths` values >= 0: each subflow's share of new data (PDAA3C).
    Weights,
    /// `max_paths` values in {0, 1}: the paths to use (MPTCP-RL); none = all usable.
    Select,
    /// `max_paths` values in [-1, 1]: congestion-window change of each subflow (DRL-CC), times
    /// `cwnd_step` segments.
    Cwnd,
}

/// What an env is, as the Python side sends it (JSON).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvSpec {
    /// Scenario text, already set up for the controlled flow (external scheduler or CC and a
    /// decision interval).
    pub scenario: String,
    pub source: String,
    #[serde(default = "default_format")]
    pub format: String,
    /// Index of the controlled flow.
    pub flow: usize,
    pub action: ActionKind,
    #[serde(default = "default_max_paths")]
    pub max_paths: usize,
    #[serde(default = "default_history")]
    pub history: usize,
    #[serde(default = "default_max_flows")]
    pub max_flows: usize,
    #[serde(default = "default_cwnd_step")]
    pub cwnd_step: f64,
    /// `Mode` only: the mode in force from the flow's start until the first decision (EdAR:
    /// 1, redundant at connection start); `None` = normal.
    #[serde(default)]
    pub initial_mode: Option<u8>,
}

fn default_format() -> String {
    "json".into()
}
fn default_max_paths() -> usize {
    4
}
fn default_history() -> usize {
    1
}
fn default_max_flows() -> usize {
    8
}
fn default_cwnd_step() -> f64 {
    10.0
}

impl EnvSpec {
    pub fn from_json(text: &str) -> Result<EnvSpec, ScenarioError> {
        let spec: EnvSpec = serde_json::from_str(text).map_err(|e| ScenarioError(format!("env spec: {e}")))?;
        if !(1..=8).contains(&spec.max_paths) {
            return Err(ScenarioError(format!("env spec: max_paths: expected 1..=8, got {}", spec.max_paths)));
        }
        if !(1..=64).contains(&spec.history) {
            return Err(ScenarioError(format!("env spec: history: expected 1..=64, got {}", spec.history)));
        }
        if !(1..=64).contains(&spec.max_flows) {
            return Err(ScenarioError(format!("env spec: max_flows: expected 1..=64, got {}", spec.max_flows)));
        }
        match spec.initial_mode {
            Some(m) if spec.action != ActionKind::Mode => {
                return Err(ScenarioError(format!(
                    "env spec: initial_mode: only with action \"mode\", got {m} with {:?}",
                    spec.action
                )))
            }
            Some(m) if m > 1 => {
                return Err(ScenarioError(format!(
                    "env spec: initial_mode: expected 0 (normal) or 1 (redundant), got {m}"
                )))
            }
            _ => {}
        }
        Ok(spec)
    }

    fn format(&self) -> Format {
        if self.format == "toml" {
            Format::Toml
        } else {
            Format::Json
        }
    }

    fn host_view(&self) -> bool {
        self.action == ActionKind::Cwnd
    }

    /// Length of one frame.
    pub fn frame_len(&self) -> usize {
        let flows = if self.host_view() { self.max_flows * FLOW_FEATURES.len() } else { 0 };
        self.max_paths * SUBFLOW_FEATURES.len() + CONN_FEATURES.len() + flows
    }

    /// Length of the mask at the end of the observation.
    pub fn mask_len(&self) -> usize {
        self.max_paths + if self.host_view() { self.max_flows } else { 0 }
    }

    pub fn obs_len(&self) -> usize {
        self.history * self.frame_len() + self.mask_len()
    }

    pub fn action_len(&self) -> usize {
        match self.action {
            ActionKind::Mode => 1,
            _ => self.max_paths,
        }
    }

    pub fn terms_len(&self) -> usize {
        TERMS.len() + self.max_paths + 2 * self.max_flows
    }

    /// Names of the terms columns.
    pub fn term_names(&self) -> Vec<String> {
        let mut v: Vec<String> = TERMS.iter().map(|s| s.to_string()).collect();
        v.extend((0..self.max_paths).map(|i| format!("sub_tput_mbps_{i}")));
        v.extend((0..self.max_flows).map(|j| format!("flow_goodput_mbps_{j}")));
        v.extend((0..self.max_flows).map(|j| format!("flow_active_{j}")));
        v
    }
}

/// Cumulative counters of one subflow at the last boundary.
#[derive(Clone, Copy, Debug, Default)]
struct SubSnap {
    sent: u64,
    acked: u64,
    seg_sent: u64,
    seg_lost: u64,
    received: u64,
    srtt_ns: u64,
}

/// Cumulative counters of a flow at the last boundary.
#[derive(Clone, Debug, Default)]
struct FlowSnap {
    subs: Vec<SubSnap>,
    delivered: u64,
    ooo_byte_s: f64,
    full_s: f64,
    blocked_s: f64,
    redundant: u64,
}

/// Counter difference that survives a new connection (repeated downloads restart counters).
fn delta(cur: u64, prev: u64) -> u64 {
    if cur >= prev {
        cur - prev
    } else {
        cur
    }
}
fn delta_f(cur: f64, prev: f64) -> f64 {
    if cur >= prev {
        cur - prev
    } else {
        cur
    }
}

const MBPS: f64 = 1e6;

/// Status after a step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepStatus {
    /// The controlled flow completed.
    pub terminated: bool,
    /// The scenario's duration was reached first.
    pub truncated: bool,
}

/// One environment: a simulation and the controlled flow's interval bookkeeping.
pub struct Env {
    pub spec: EnvSpec,
    sim: Sim,
    /// `history` frames, oldest first.
    frames: Vec<f32>,
    terms: Vec<f64>,
    snaps: Vec<FlowSnap>,
    last_boundary: u64,
    prev_action: [f32; 8],
    prev_mode: f32,
    /// Recent delivery-rate samples per subflow (bytes/s), `history` deep.
    rates: Vec<[u64; 8]>,
    capacity_mbps: f64,
    status: StepStatus,
    pub steps: u64,
}

impl Env {
    /// Builds the env and resets it with `seed` (the episode's scenario seed).
    pub fn new(spec: EnvSpec, seed: u64) -> Result<Env, ScenarioError> {
        let sim = Self::build(&spec, seed)?;
        let mut env = Env {
            frames: vec![0.0; spec.history * spec.frame_len()],
            terms: vec![0.0; spec.terms_len()],
            snaps: Vec::new(),
            last_boundary: 0,
            prev_action: [0.0; 8],
            prev_mode: 0.0,
            rates: vec![[0; 8]; spec.history],
            capacity_mbps: 0.0,
            status: StepStatus::default(),
            steps: 0,
            sim,
            spec,
        };
        env.start();
        Ok(env)
    }

    fn build(spec: &EnvSpec, seed: u64) -> Result<Sim, ScenarioError> {
        let sc = parse_text(&spec.scenario, &spec.source, spec.format(), Some(seed))?;
        if spec.flow >= sc.flows.len() {
            return Err(ScenarioError(format!(
                "{}: env flow: expected a flow index below {}, got {}",
                spec.source,
                sc.flows.len(),
                spec.flow
            )));
        }
        Ok(Sim::new(sc))
    }

    /// Starts a new episode with scenario seed `seed`.
    pub fn reset(&mut self, seed: u64) -> Result<(), ScenarioError> {
        self.sim = Self::build(&self.spec, seed)?;
        self.frames.iter_mut().for_each(|x| *x = 0.0);
        self.terms.iter_mut().for_each(|x| *x = 0.0);
        self.rates.iter_mut().for_each(|r| *r = [0; 8]);
        self.prev_action = [0.0; 8];
        self.prev_mode = 0.0;
        self.status = StepStatus::default();
        self.steps = 0;
        self.start();
        Ok(())
    }

    fn start(&mut self) {
        let sc = self.sim.scenario();
        self.capacity_mbps = sc.flows[self.spec.flow]
            .paths
            .iter()
            .map(|&p| {
                let rate =
                    sc.paths[p as usize].fwd.iter().map(|&l| sc.links[l as usize].rate_bps).filter(|&r| r > 0).min();
                rate.unwrap_or(0) as f64 / MBPS
            })
            .sum();
        self.snaps = vec![FlowSnap::default(); sc.flows.len()];
        self.last_boundary = 0;
        if let (ActionKind::Mode, Some(m)) = (self.spec.action, self.spec.initial_mode) {
            self.prev_mode = m as f32;
            self.sim.set_initial_decision(self.spec.flow, Decision::Mode(m));
        }
        // The first observation covers the start of the run up to the first boundary.
        self.advance_to_boundary();
    }

    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    pub fn status(&self) -> StepStatus {
        self.status
    }

    /// Runs the rest of the scenario with default answers (after the episode, other flows and
    /// the remaining duration) and returns the run's results, as `mpsched run` reports them.
    /// Used to run a trained policy inside the simulator (`mpsched-policy`'s driver).
    pub fn finish(&mut self) -> crate::RunOutput {
        self.sim.run();
        self.sim.output()
    }

    /// Applies `action` (length [`EnvSpec::action_len`]) and runs to the next boundary.
    pub fn step(&mut self, action: &[f32]) -> StepStatus {
        self.apply(action);
        self.steps += 1;
        self.advance_to_boundary();
        self.status
    }

    fn usable(&self, i: usize) -> bool {
        let f = self.spec.flow;
        let Some(c) = self.sim.connection(f) else { return false };
        if i >= c.subflow_count() {
            return false;
        }
        let p = self.sim.scenario().flows[f].paths[i] as usize;
        c.subflow_info(i).established && !self.sim.path_is_down(p)
    }

    fn apply(&mut self, action: &[f32]) {
        let f = self.spec.flow;
        let n = self.spec.max_paths.min(8);
        match self.spec.action {
            ActionKind::Mode => {
                let m = u8::from(action.first().is_some_and(|&a| a >= 0.5));
                self.prev_mode = m as f32;
                self.sim.decide(f, Decision::Mode(m));
            }
            ActionKind::Weights | ActionKind::Select => {
                let mut w = [0.0f32; 8];
                for i in 0..n {
                    let a = action.get(i).copied().unwrap_or(0.0);
                    let a = if a.is_finite() { a.max(0.0) } else { 0.0 };
                    w[i] = if self.spec.action == ActionKind::Select { f32::from(a >= 0.5) } else { a };
                }
                self.prev_action = w;
                // Nothing usable chosen: every usable subflow (the scheduler's minRTT fallback).
                if !(0..n).any(|i| w[i] > 0.0 && self.usable(i)) {
                    w = [0.0; 8];
                }
                self.sim.decide(f, Decision::Weights(w));
            }
            ActionKind::Cwnd => {
                let Some(c) = self.sim.connection(f) else { return };
                let mss = self.sim.scenario().flows[f].subflow.mss as f64;
                let mut set = [None; 8];
                for (i, slot) in set.iter_mut().enumerate().take(n.min(c.subflow_count())) {
                    let a = action.get(i).copied().unwrap_or(0.0);
                    let a = if a.is_finite() { a.clamp(-1.0, 1.0) } else { 0.0 };
                    self.prev_action[i] = a;
                    let cwnd = c.subflow_info(i).cwnd as f64 + a as f64 * self.spec.cwnd_step * mss;
                    *slot = Some(cwnd.max(2.0 * mss) as u64);
                }
                for (i, cw) in set.iter().enumerate() {
                    if let Some(cw) = cw {
                        self.sim.set_cwnd(f, i, *cw);
                    }
                }
            }
        }
    }

    /// Runs until the controlled flow's next decision boundary (answering other decision
    /// points with their defaults), then records the interval.
    fn advance_to_boundary(&mut self) {
        let target = self.spec.flow as u32;
        loop {
            match self.sim.advance(u64::MAX) {
                Stop::Interval { flow } if flow == target => break,
                Stop::Interval { .. } => {}
                Stop::Decision { flow } => self.sim.decide(flow as usize, Decision::Path(None)),
                Stop::Deadline | Stop::Finished => {
                    self.status.truncated = !self.sim.flow_done(self.spec.flow);
                    self.status.terminated = !self.status.truncated;
                    self.record();
                    return;
                }
            }
        }
        if self.sim.flow_done(self.spec.flow) {
            self.status.terminated = true;
        }
        self.record();
    }

    /// Writes the interval that just ended into the newest frame and the terms.
    fn record(&mut self) {
        let now = self.sim.now_ns();
        let dt_ns = now.saturating_sub(self.last_boundary).max(1);
        let dt = dt_ns as f64 / 1e9;
        self.last_boundary = now;
        let spec = &self.spec;
        let fl = spec.frame_len();
        // Shift the history: drop the oldest frame.
        self.frames.copy_within(fl.., 0);
        let base = (spec.history - 1) * fl;
        self.frames[base..base + fl].iter_mut().for_each(|x| *x = 0.0);
        self.rates.rotate_left(1);
        *self.rates.last_mut().unwrap() = [0; 8];
        self.terms.iter_mut().for_each(|x| *x = 0.0);

        let f = spec.flow;
        let sc = self.sim.scenario();
        let rcv_buf = sc.flows[f].rcv_buf.max(1) as f64;
        let nsub = SUBFLOW_FEATURES.len();
        let mut sum_sent = 0u64;
        let mut sum_recv = 0u64;
        let mut pipe = 0u64;
        let mut peer_wnd = 0u64;
        let mut energy_j = 0.0;
        let (mut delay_sum, mut jitter_sum, mut n_est) = (0.0, 0.0, 0usize);
        let mut sub_tput = [0.0f64; 8];
        let mut delivered_target = 0u64;

        if let Some(c) = self.sim.connection(f) {
            let rx = self.sim.receiver(f);
            let mss = sc.flows[f].subflow.mss.max(1) as f64;
            let snap = &mut self.snaps[f];
            snap.subs.resize(c.subflow_count(), SubSnap::default());
            for i in 0..c.subflow_count() {
                let s = c.subflow_info(i);
                let prev = snap.subs[i];
                let received = rx.filter(|r| i < r.subflow_count()).map_or(0, |r| r.subflow_info(i).bytes_received);
                let cur = SubSnap {
                    sent: s.bytes_sent,
                    acked: s.delivered,
                    seg_sent: s.segments_sent,
                    seg_lost: s.segments_lost,
                    received,
                    srtt_ns: s.srtt.0,
                };
                let sent = delta(cur.sent, prev.sent);
                let acked = delta(cur.acked, prev.acked);
                let seg_sent = delta(cur.seg_sent, prev.seg_sent);
                let seg_lost = delta(cur.seg_lost, prev.seg_lost);
                let recv = delta(cur.received, prev.received);
                snap.subs[i] = cur;
                sum_sent += sent;
                sum_recv += recv;
                pipe += s.pipe;
                peer_wnd = peer_wnd.max(s.peer_wnd);
                if s.established && s.srtt.0 > 0 {
                    delay_sum += s.srtt.0 as f64 / 1e6;
                    if prev.srtt_ns > 0 {
                        jitter_sum += (s.srtt.0 as f64 - prev.srtt_ns as f64).abs() / 1e6;
                    }
                    n_est += 1;
                }
                let p = sc.flows[f].paths[i] as usize;
                if let Some(e) = sc.paths[p].energy {
                    if sent > 0 {
                        let down = sent as f64 * 8.0 / dt / MBPS;
                        energy_j += e.active_power_mw(0.0, down) * dt / 1000.0;
                    }
                }
                if i >= spec.max_paths {
                    continue;
                }
                sub_tput[i] = recv as f64 * 8.0 / dt / MBPS;
                self.rates.last_mut().unwrap()[i] = s.delivery_rate;
                let max_rate = self.rates.iter().map(|r| r[i]).max().unwrap_or(0) as f64 * 8.0 / MBPS;
                let tput = sent as f64 * 8.0 / dt / MBPS;
                let o = base + i * nsub;
                let fr = &mut self.frames[o..o + nsub];
                fr[0] = (s.srtt.0 as f64 / 1e8) as f32;
                fr[1] = (s.rttvar.0 as f64 / 1e8) as f32;
                fr[2] = (s.rto.0 as f64 / 1e8) as f32;
                fr[3] = (s.cwnd as f64 / mss / 100.0) as f32;
                fr[4] = (s.pipe as f64 / mss / 100.0) as f32;
                fr[5] = (s.delivery_rate as f64 * 8.0 / MBPS / 10.0) as f32;
                fr[6] = (tput / 10.0) as f32;
                fr[7] = (acked as f64 * 8.0 / dt / MBPS / 10.0) as f32;
                fr[8] = if seg_sent > 0 { (seg_lost as f64 / seg_sent as f64).min(1.0) as f32 } else { 0.0 };
                fr[9] = ((max_rate - tput).max(0.0) / 10.0) as f32;
                fr[10] = self.prev_action[i];
            }
            // Connection features.
            let ci = c.info();
            let ri = rx.map(|r| r.info()).unwrap_or_default();
            let delivered = delta(ri.bytes_delivered, snap.delivered);
            let ooo_s = delta_f(ri.ooo_byte_seconds, snap.ooo_byte_s);
            let full_s = delta_f(ri.rwnd_full_seconds, snap.full_s);
            let blocked_s = delta_f(ci.send_blocked_seconds, snap.blocked_s);
            let redundant = delta(ci.redundant_bytes, snap.redundant);
            snap.delivered = ri.bytes_delivered;
            snap.ooo_byte_s = ri.ooo_byte_seconds;
            snap.full_s = ri.rwnd_full_seconds;
            snap.blocked_s = ci.send_blocked_seconds;
            snap.redundant = ci.redundant_bytes;
            delivered_target = delivered;
            let goodput = delivered as f64 * 8.0 / dt / MBPS;
            let o = base + spec.max_paths * nsub;
            let fr = &mut self.frames[o..o + CONN_FEATURES.len()];
            fr[0] = (peer_wnd as f64 / rcv_buf) as f32;
            fr[1] = (pipe as f64 / rcv_buf) as f32;
            fr[2] = (ooo_s / dt / rcv_buf) as f32;
            fr[3] = (full_s / dt).min(1.0) as f32;
            fr[4] = (goodput / 10.0) as f32;
            fr[5] = (blocked_s / dt).min(1.0) as f32;
            fr[6] = self.prev_mode;
            fr[7] = (dt * 10.0) as f32;
            let t = &mut self.terms;
            t[1] = goodput;
            t[4] = ooo_s / dt;
            t[6] = full_s;
            t[7] = redundant as f64 * 8.0 / dt / MBPS;
        }
        let t = &mut self.terms;
        t[0] = dt;
        t[2] = sum_recv as f64 * 8.0 / dt / MBPS;
        t[3] = sum_sent as f64 * 8.0 / dt / MBPS;
        t[5] = rcv_buf;
        t[8] = energy_j;
        t[9] = energy_j / dt;
        t[10] = if n_est > 0 { delay_sum / n_est as f64 } else { 0.0 };
        t[11] = if n_est > 0 { jitter_sum / n_est as f64 } else { 0.0 };
        t[12] = self.capacity_mbps;
        t[13] = f64::from(u8::from(self.sim.flow_done(f)));
        t[14] = self.sim.connection(f).map_or(0, |c| c.subflow_count()) as f64;
        let k = TERMS.len();
        t[k..k + spec.max_paths].copy_from_slice(&sub_tput[..spec.max_paths]);
        self.record_flows(base, dt, delivered_target, sum_sent);
    }

    /// Per-flow goodput terms (all envs) and the host view of congestion-control envs. The
    /// controlled flow's counters were already advanced by `record`, which passes its interval's
    /// delivered and sent bytes.
    fn record_flows(&mut self, base: usize, dt: f64, target_delivered: u64, target_sent: u64) {
        let spec = &self.spec;
        let sc = self.sim.scenario();
        let nflows = sc.flows.len().min(spec.max_flows);
        let k = TERMS.len() + spec.max_paths;
        let off = base + spec.max_paths * SUBFLOW_FEATURES.len() + CONN_FEATURES.len();
        let nff = FLOW_FEATURES.len();
        for j in 0..nflows {
            let (Some(c), Some(r)) = (self.sim.connection(j), self.sim.receiver(j)) else { continue };
            let active = !self.sim.flow_done(j);
            let delivered_now = r.info().bytes_delivered;
            let snap = &mut self.snaps[j];
            let delivered = if j == spec.flow {
                target_delivered
            } else {
                let d = delta(delivered_now, snap.delivered);
                snap.delivered = delivered_now;
                d
            };
            let goodput = delivered as f64 * 8.0 / dt / MBPS;
            self.terms[k + j] = goodput;
            self.terms[k + spec.max_flows + j] = f64::from(u8::from(active));
            if !spec.host_view() {
                continue;
            }
            let mss = sc.flows[j].subflow.mss.max(1) as f64;
            let (mut sent, mut srtt, mut rttvar, mut cwnd, mut n) = (0u64, 0.0, 0.0, 0u64, 0usize);
            for (i, s) in c.subflows() {
                let i = i as usize;
                if j != spec.flow {
                    // The controlled flow's subflow counters were advanced in `record`.
                    if snap.subs.len() <= i {
                        snap.subs.resize(i + 1, SubSnap::default());
                    }
                    sent += delta(s.bytes_sent, snap.subs[i].sent);
                    snap.subs[i].sent = s.bytes_sent;
                }
                cwnd += s.cwnd;
                if s.established && s.srtt.0 > 0 {
                    srtt += s.srtt.0 as f64;
                    rttvar += s.rttvar.0 as f64;
                    n += 1;
                }
            }
            if j == spec.flow {
                sent = target_sent;
            }
            let n = n.max(1) as f64;
            let o = off + j * nff;
            let fr = &mut self.frames[o..o + nff];
            fr[0] = (sent as f64 * 8.0 / dt / MBPS / 10.0) as f32;
            fr[1] = (goodput / 10.0) as f32;
            fr[2] = (srtt / n / 1e8) as f32;
            fr[3] = (rttvar / n / 1e8) as f32;
            fr[4] = (cwnd as f64 / mss / 100.0) as f32;
            fr[5] = f32::from(u8::from(j == spec.flow));
        }
    }

    /// Writes the observation (length [`EnvSpec::obs_len`]).
    pub fn observe(&self, out: &mut [f32]) {
        let n = self.frames.len();
        out[..n].copy_from_slice(&self.frames);
        let mask = &mut out[n..n + self.spec.mask_len()];
        mask.iter_mut().for_each(|x| *x = 0.0);
        for (i, m) in mask.iter_mut().enumerate().take(self.spec.max_paths) {
            *m = f32::from(u8::from(self.usable(i)));
        }
        if self.spec.host_view() {
            let nflows = self.sim.scenario().flows.len().min(self.spec.max_flows);
            for j in 0..nflows {
                let started = self.sim.connection(j).is_some();
                mask[self.spec.max_paths + j] = f32::from(u8::from(started && !self.sim.flow_done(j)));
            }
        }
    }

    /// Writes the reward terms of the last interval (length [`EnvSpec::terms_len`]).
    pub fn write_terms(&self, out: &mut [f64]) {
        out.copy_from_slice(&self.terms);
    }
}

/// Scenario seed of episode `episode` of sub-env seeded `seed`: the first episode uses `seed`
/// itself; later ones (autoreset) are derived, so a vector env's trajectories depend only on
/// its base seed.
pub fn episode_seed(seed: u64, episode: u64) -> u64 {
    if episode == 0 {
        seed
    } else {
        stream_seed(seed, &format!("episode/{episode}"))
    }
}

/// N environments stepped together (architecture §5 "Vector env"): sub-env i is seeded
/// `base + i`; autoreset follows gymnasium's NEXT_STEP mode (the step after an episode ended
/// resets that sub-env and ignores its action). Work is split over a fixed number of threads
/// by contiguous chunks, so the thread count never changes results.
pub struct VecEnv {
    pub envs: Vec<Env>,
    seeds: Vec<u64>,
    episodes: Vec<u64>,
    needs_reset: Vec<bool>,
    pub threads: usize,
}

/// Output buffers of a vector step (rows per sub-env).
pub struct VecOut<'a> {
    pub obs: &'a mut [f32],
    pub terms: &'a mut [f64],
    pub terminated: &'a mut [bool],
    pub truncated: &'a mut [bool],
}

impl VecEnv {
    pub fn new(spec: EnvSpec, n: usize, base_seed: u64, threads: usize) -> Result<VecEnv, ScenarioError> {
        let mut envs = Vec::with_capacity(n);
        for i in 0..n {
            envs.push(Env::new(spec.clone(), base_seed.wrapping_add(i as u64))?);
        }
        let seeds = (0..n).map(|i| base_seed.wrapping_add(i as u64)).collect();
        Ok(VecEnv { envs, seeds, episodes: vec![0; n], needs_reset: vec![false; n], threads: threads.max(1) })
    }

    pub fn len(&self) -> usize {
        self.envs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.envs.is_empty()
    }

    /// Resets every sub-env; `base_seed` restarts the seeding (`None`: next episodes).
    pub fn reset(&mut self, base_seed: Option<u64>, obs: &mut [f32]) -> Result<(), ScenarioError> {
        let d = self.envs[0].spec.obs_len();
        for i in 0..self.envs.len() {
            if let Some(b) = base_seed {
                self.seeds[i] = b.wrapping_add(i as u64);
                self.episodes[i] = 0;
            } else {
                self.episodes[i] += 1;
            }
            let s = episode_seed(self.seeds[i], self.episodes[i]);
            self.envs[i].reset(s)?;
            self.needs_reset[i] = false;
            self.envs[i].observe(&mut obs[i * d..(i + 1) * d]);
        }
        Ok(())
    }

    /// Steps every sub-env with its row of `actions`. A sub-env whose episode ended starts the
    /// next one instead (NEXT_STEP autoreset); if re-drawing its scenario fails (a random range
    /// giving an invalid value), the error is returned, after every other sub-env has stepped.
    pub fn step(&mut self, actions: &[f32], out: VecOut<'_>) -> Result<(), ScenarioError> {
        let n = self.envs.len();
        if n == 0 {
            return Ok(());
        }
        let spec = &self.envs[0].spec;
        let (d, a, t) = (spec.obs_len(), spec.action_len(), spec.terms_len());
        let chunk = n.div_ceil(self.threads);
        let work = |envs: &mut [Env],
                    seeds: &[u64],
                    eps: &mut [u64],
                    resets: &mut [bool],
                    acts: &[f32],
                    obs: &mut [f32],
                    terms: &mut [f64],
                    te: &mut [bool],
                    tr: &mut [bool]| {
            let mut failed = Ok(());
            for k in 0..envs.len() {
                let env = &mut envs[k];
                if resets[k] {
                    eps[k] += 1;
                    if let Err(e) = env.reset(episode_seed(seeds[k], eps[k])) {
                        failed = failed.and(Err(e));
                        continue;
                    }
                    resets[k] = false;
                    terms[k * t..(k + 1) * t].iter_mut().for_each(|x| *x = 0.0);
                    te[k] = false;
                    tr[k] = false;
                } else {
                    let st = env.step(&acts[k * a..(k + 1) * a]);
                    env.write_terms(&mut terms[k * t..(k + 1) * t]);
                    te[k] = st.terminated;
                    tr[k] = st.truncated;
                    resets[k] = st.terminated || st.truncated;
                }
                env.observe(&mut obs[k * d..(k + 1) * d]);
            }
            failed
        };
        if self.threads == 1 || n == 1 {
            return work(
                &mut self.envs,
                &self.seeds,
                &mut self.episodes,
                &mut self.needs_reset,
                actions,
                out.obs,
                out.terms,
                out.terminated,
                out.truncated,
            );
        }
        std::thread::scope(|scope| {
            let mut handles = Vec::new();
            let mut envs = self.envs.as_mut_slice();
            let mut seeds = self.seeds.as_slice();
            let mut eps = self.episodes.as_mut_slice();
            let mut resets = self.needs_reset.as_mut_slice();
            let mut acts = actions;
            let mut obs = &mut *out.obs;
            let mut terms = &mut *out.terms;
            let mut te = &mut *out.terminated;
            let mut tr = &mut *out.truncated;
            while !envs.is_empty() {
                let m = chunk.min(envs.len());
                let (e0, e1) = envs.split_at_mut(m);
                let (s0, s1) = seeds.split_at(m);
                let (p0, p1) = eps.split_at_mut(m);
                let (r0, r1) = resets.split_at_mut(m);
                let (a0, a1) = acts.split_at(m * a);
                let (o0, o1) = obs.split_at_mut(m * d);
                let (t0, t1) = terms.split_at_mut(m * t);
                let (x0, x1) = te.split_at_mut(m);
                let (y0, y1) = tr.split_at_mut(m);
                let work = &work;
                handles.push(scope.spawn(move || work(e0, s0, p0, r0, a0, o0, t0, x0, y0)));
                (envs, seeds, eps, resets, acts, obs, terms, te, tr) = (e1, s1, p1, r1, a1, o1, t1, x1, y1);
            }
            handles.into_iter().map(|h| h.join().expect("env worker panicked")).fold(Ok(()), Result::and)
        })
    }
}
