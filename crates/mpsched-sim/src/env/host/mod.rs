//! The host env (docs/envs.md, "Host env"): one agent observes and controls every flow of a
//! host, DRL-CC's and MPTCP-RL's set-up. The simulation pauses every `interval_ms`; flows come
//! and go (workloads, repeated downloads), so each flow takes a *slot* while it runs:
//!
//! - At every boundary (and at reset), a host flow that is running, or starts before the next
//!   boundary, takes the lowest free slot, in scenario order. If it has not started yet and is
//!   one the agent controls ([`Controlled`]), it is set up for control before it starts
//!   (external congestion control for `cwnd`, the external weights scheduler for `weights`
//!   and `select`, `dmptcp` for `paths`); a flow that started while every slot was taken runs its own algorithms, and is
//!   only observed once a slot frees (counted by the `unslotted` term while it waits).
//! - A flow that completed is reported in the interval it completed in, then frees its slot;
//!   a reassigned slot's history is cleared.
//! - `cwnd` with [`CwndTarget::Rotate`]: the next target is the next controlled, running flow
//!   after the last target, in slot order (DRL-CC's one querying flow per epoch).
//!
//! Modules: [`spec`] (what a host env is, its layout), `record` (an interval into a frame and
//! the terms).

mod record;
pub mod spec;

pub use spec::{Controlled, CwndTarget, HostAction, HostLayout, HostSpec};

use super::energy::EnergyMeter;
use super::record::FlowSnap;
use super::terms::terms;
use super::StepStatus;
use crate::parse_text;
use crate::scenario::{DecisionInterval, ScenarioError};
use crate::sim::{Sim, Stop};
use mpsched_transport::Decision;

terms! {
    /// One reward term of the host env; its discriminant is its column.
    HostTerm, HOST_TERMS {
    IntervalS => ("interval_s", "real length of the interval (rates use at least the nominal length)"),
    GoodputMbps => ("goodput_mbps", "bytes delivered to the receiving applications of the slotted flows"),
    SendTputMbps => ("send_tput_mbps", "bytes sent on their subflows (retransmissions included)"),
    EnergyJ => ("energy_j", "device energy charged to the host's flows (active, promotion and tail, also after a flow completed; env::energy)"),
    PowerW => ("power_w", "energy_j / interval"),
    DelayMs => ("delay_ms", "mean smoothed RTT over their established subflows"),
    JitterMs => ("jitter_ms", "mean |Δ srtt| over their established subflows since the last interval"),
    Loss => ("loss", "segments detected lost / segments sent, over their subflows"),
    CapacityMbps => ("capacity_mbps", "sum of the nominal rates of the paths the host's flows use (bottleneck link each)"),
    Flows => ("flows", "slotted flows running at the end of the interval"),
    Unslotted => ("unslotted", "host flows running without a slot (more than max_flows at once)"),
    Done => ("done", "1 when every host flow completed"),
}}

/// Megabit in bits.
const MBPS: f64 = 1e6;

/// A host env: a simulation and the bookkeeping of the host's flows.
pub struct HostEnv {
    /// What the env is.
    pub spec: HostSpec,
    sim: Sim,
    /// Scenario flow indices of the host's flows, in scenario order.
    host: Vec<usize>,
    /// Per scenario flow: its slot, and whether the agent controls it.
    slot_of: Vec<Option<usize>>,
    controlled: Vec<bool>,
    /// Per slot: the scenario flow in it.
    slots: Vec<Option<usize>>,
    /// The slot the next `cwnd` rotation action applies to.
    target: Option<usize>,
    frames: Vec<f32>,
    terms: Vec<f64>,
    snaps: Vec<FlowSnap>,
    /// Per slot, `history` deep: recent delivery-rate samples per subflow (bytes/s).
    rates: Vec<Vec<[u64; 8]>>,
    /// Per slot and subflow slot: the previous action's value.
    prev_action: Vec<f32>,
    meter: EnergyMeter,
    capacity_mbps: f64,
    last_boundary: u64,
    status: StepStatus,
    /// Frame indices a sender cannot compute, zeroed in observations (`sender_only`; else empty).
    not_sender: Vec<usize>,
    /// Steps taken in the current episode.
    pub steps: u64,
}

impl HostEnv {
    /// Builds the env and resets it with `seed` (the episode's scenario seed).
    pub fn new(spec: HostSpec, seed: u64) -> Result<HostEnv, ScenarioError> {
        let sim = Self::build(&spec, seed)?;
        let l = spec.layout();
        let not_sender = match spec.sender_only {
            true => (0..l.subflow_mask_offset())
                .filter(|&k| mpsched_transport::observe::host_sender_computes(&l, k) == Some(false))
                .collect(),
            false => Vec::new(),
        };
        let mut env = HostEnv {
            not_sender,
            host: Vec::new(),
            slot_of: Vec::new(),
            controlled: Vec::new(),
            slots: vec![None; l.max_flows],
            target: None,
            frames: vec![0.0; l.history * l.frame_len()],
            terms: vec![0.0; spec.terms_len()],
            snaps: Vec::new(),
            rates: vec![vec![[0; 8]; l.history]; l.max_flows],
            prev_action: vec![0.0; l.max_flows * l.max_subflows],
            meter: EnergyMeter::default(),
            capacity_mbps: 0.0,
            last_boundary: 0,
            status: StepStatus::default(),
            steps: 0,
            sim,
            spec,
        };
        env.start();
        Ok(env)
    }

    fn build(spec: &HostSpec, seed: u64) -> Result<Sim, ScenarioError> {
        let sc = parse_text(&spec.scenario, &spec.source, spec.format(), Some(seed))?;
        if !sc.flows.iter().any(|f| spec.is_host_flow(&f.name)) {
            let names = spec.flows.as_deref().unwrap_or_default().join(", ");
            return Err(ScenarioError(format!(
                "{}: host env flows: no flow of this episode's scenario (seed {seed}) is one of [{names}]",
                spec.source
            )));
        }
        Ok(Sim::new(sc))
    }

    /// Starts a new episode with scenario seed `seed`.
    pub fn reset(&mut self, seed: u64) -> Result<(), ScenarioError> {
        self.sim = Self::build(&self.spec, seed)?;
        self.frames.iter_mut().for_each(|x| *x = 0.0);
        self.terms.iter_mut().for_each(|x| *x = 0.0);
        self.rates.iter_mut().flatten().for_each(|r| *r = [0; 8]);
        self.prev_action.iter_mut().for_each(|x| *x = 0.0);
        self.slots.iter_mut().for_each(|s| *s = None);
        self.target = None;
        self.status = StepStatus::default();
        self.steps = 0;
        self.start();
        Ok(())
    }

    fn start(&mut self) {
        let sc = self.sim.scenario();
        self.host = (0..sc.flows.len()).filter(|&f| self.spec.is_host_flow(&sc.flows[f].name)).collect();
        self.slot_of = vec![None; sc.flows.len()];
        self.controlled = vec![false; sc.flows.len()];
        self.snaps = vec![FlowSnap::default(); sc.flows.len()];
        self.capacity_mbps = self.host_capacity_mbps();
        self.meter = EnergyMeter::new(&self.sim);
        self.last_boundary = 0;
        self.assign_slots();
        self.advance();
    }

    /// Sum of the nominal rates of the distinct paths the host's flows use (Mbit/s).
    fn host_capacity_mbps(&self) -> f64 {
        let sc = self.sim.scenario();
        let mut paths: Vec<u16> = self.host.iter().flat_map(|&f| sc.flows[f].paths.iter().copied()).collect();
        paths.sort_unstable();
        paths.dedup();
        let rate = |p: u16| {
            let r = sc.paths[p as usize].fwd.iter().map(|&l| sc.links[l as usize].rate_bps).filter(|&r| r > 0).min();
            r.unwrap_or(0) as f64 / MBPS
        };
        paths.into_iter().map(rate).sum()
    }

    /// The simulation of the current episode.
    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    /// Status after the last step (or reset).
    pub fn status(&self) -> StepStatus {
        self.status
    }

    /// The episode's results so far, as `mpsched run` reports a run.
    pub fn output(&mut self) -> crate::RunOutput {
        self.sim.output()
    }

    /// The scenario flow in each slot (for labelling observations).
    pub fn slot_flows(&self) -> &[Option<usize>] {
        &self.slots
    }

    /// Applies `action` (length [`HostSpec::action_len`]) and runs to the next boundary.
    pub fn step(&mut self, action: &[f32]) -> StepStatus {
        self.apply(action);
        self.steps += 1;
        self.advance();
        self.status
    }

    /// Whether flow `f` is running: its connection exists and it has not completed.
    fn running(&self, f: usize) -> bool {
        self.sim.connection(f).is_some() && !self.sim.flow_done(f)
    }

    /// The controlled, running flow in slot `j`.
    fn controlled_in(&self, j: usize) -> Option<usize> {
        self.slots[j].filter(|&f| self.controlled[f] && self.running(f))
    }

    fn apply(&mut self, action: &[f32]) {
        let s = self.spec.max_subflows;
        match (self.spec.action, self.spec.target) {
            (HostAction::Paths, _) => {
                // One row shared by every flow slot.
                for j in 0..self.spec.max_flows {
                    self.apply_slot(j, action);
                }
            }
            (HostAction::Cwnd, CwndTarget::Rotate) => {
                if let Some(j) = self.target {
                    self.apply_slot(j, &action[..s.min(action.len())]);
                }
            }
            _ => {
                for j in 0..self.spec.max_flows {
                    let row = action.get(j * s..(j + 1) * s).unwrap_or(&[]);
                    self.apply_slot(j, row);
                }
            }
        }
    }

    /// Applies one flow slot's row of the action (nothing if its flow is not controlled or
    /// not running). A value that is NaN or infinite counts as 0 (`cwnd`: no change; path
    /// actions: the path gets no new data).
    ///
    /// `paths` (the row is the shared action): the values as the flow's path preference; a
    /// negative value counts as 0 (blocked, like a masked path: mptcp-rl.txt §"Action"), values
    /// beyond the flow's subflows are ignored. When no usable subflow of the flow has a
    /// positive value, the preference is cleared and `dmptcp` orders by srtt (as the weights
    /// actions fall back to their scheduler), so a flow never stalls on a choice.
    fn apply_slot(&mut self, j: usize, row: &[f32]) {
        let Some(f) = self.controlled_in(j) else { return };
        let s = self.spec.max_subflows;
        let n = self.sim.connection(f).map_or(0, |c| c.subflow_count()).min(s).min(8);
        let at = |i: usize| row.get(i).copied().filter(|a| a.is_finite()).unwrap_or(0.0);
        match self.spec.action {
            HostAction::Cwnd => {
                let mss = self.sim.connection(f).map_or(1, |c| c.mss()) as f64;
                for i in 0..n {
                    let a = at(i).clamp(-1.0, 1.0);
                    self.prev_action[j * s + i] = a;
                    let cwnd = self.sim.connection(f).unwrap().subflow_info(i).cwnd as f64;
                    let cwnd = (cwnd + a as f64 * self.spec.cwnd_step * mss).max(2.0 * mss) as u64;
                    self.sim.set_cwnd(f, i, cwnd);
                }
            }
            HostAction::Paths => {
                let mut p = [0.0f32; 8];
                for (i, pi) in p.iter_mut().enumerate().take(n) {
                    *pi = at(i).max(0.0);
                    self.prev_action[j * s + i] = *pi;
                }
                let any = (0..n).any(|i| p[i] > 0.0 && self.sim.subflow_usable(f, i));
                self.sim.set_path_preference(f, any.then_some(&p[..n]));
            }
            HostAction::Weights | HostAction::Select => {
                let mut w = [0.0f32; 8];
                for (i, wi) in w.iter_mut().enumerate().take(n) {
                    let a = at(i).max(0.0);
                    *wi = if self.spec.action == HostAction::Select { f32::from(a >= 0.5) } else { a };
                    self.prev_action[j * s + i] = *wi;
                }
                // Nothing usable chosen: the scheduler's fallback.
                if !(0..n).any(|i| w[i] > 0.0 && self.sim.subflow_usable(f, i)) {
                    w = [0.0; 8];
                }
                self.sim.decide(f, Decision::Weights(w));
            }
        }
    }

    /// Runs to the next boundary (answering other decision points with their defaults),
    /// records the interval, then updates the slots and the rotation target.
    fn advance(&mut self) {
        let until = self.sim.now_ns().saturating_add(self.spec.interval_ns());
        let finished = loop {
            match self.sim.advance(until) {
                Stop::Deadline => break false,
                Stop::Finished => break true,
                Stop::Decision { flow } => self.sim.decide(flow as usize, Decision::Path(None)),
                Stop::Interval { .. } => {}
            }
        };
        // Every host flow completed: the episode ends, unless the scenario runs on to its
        // duration (`stop_when_done = false`, e.g. to charge the interfaces' tails).
        let all_done = self.host.iter().all(|&f| self.sim.flow_done(f));
        let at_end = finished || self.sim.now_ns() >= self.sim.scenario().duration_ns;
        self.status.terminated = all_done && (at_end || self.sim.scenario().stop_when_done);
        self.status.truncated = !all_done && at_end;
        self.record();
        self.release_slots();
        self.assign_slots();
        self.pick_target();
    }

    /// Frees the slots of flows that completed (they were reported in this interval).
    fn release_slots(&mut self) {
        for j in 0..self.slots.len() {
            if let Some(f) = self.slots[j] {
                if self.sim.flow_done(f) {
                    self.slots[j] = None;
                    self.slot_of[f] = None;
                }
            }
        }
    }

    /// Gives free slots to host flows that run or start before the next boundary (module docs).
    fn assign_slots(&mut self) {
        let horizon = self.sim.now_ns().saturating_add(self.spec.interval_ns());
        let mut unslotted = 0;
        for k in 0..self.host.len() {
            let f = self.host[k];
            if self.slot_of[f].is_some() || self.sim.flow_done(f) {
                continue;
            }
            let started = self.sim.flow_started(f);
            if !started && self.sim.scenario().flows[f].start_ns > horizon {
                continue;
            }
            let Some(j) = self.slots.iter().position(Option::is_none) else {
                unslotted += usize::from(started);
                continue;
            };
            self.slots[j] = Some(f);
            self.slot_of[f] = Some(j);
            self.clear_slot(j);
            if !started && self.wants_control(f) {
                let (cc, sched) = self.spec.control_algos();
                self.controlled[f] = self.sim.control_flow(f, cc, sched, DecisionInterval::None);
            }
        }
        self.terms[HostTerm::Unslotted as usize] = unslotted as f64;
    }

    /// Whether the agent controls flow `f` (by [`Controlled`]).
    fn wants_control(&self, f: usize) -> bool {
        match self.spec.control {
            Controlled::All => true,
            Controlled::Multipath => self.sim.scenario().flows[f].paths.len() > 1,
            Controlled::None => false,
        }
    }

    /// Zeroes slot `j` in every frame, its rate history and its previous action.
    fn clear_slot(&mut self, j: usize) {
        let l = self.spec.layout();
        for h in 0..l.history {
            let o = l.frame(h) + l.flow_slot(j);
            self.frames[o..o + l.flow_stride()].iter_mut().for_each(|x| *x = 0.0);
        }
        self.rates[j].iter_mut().for_each(|r| *r = [0; 8]);
        let s = l.max_subflows;
        self.prev_action[j * s..(j + 1) * s].iter_mut().for_each(|x| *x = 0.0);
    }

    /// Chooses the flows the next action applies to and marks them (flow feature `target`) in
    /// the newest frame.
    fn pick_target(&mut self) {
        let n = self.slots.len();
        let rotate = self.spec.action == HostAction::Cwnd && self.spec.target == CwndTarget::Rotate;
        if rotate {
            let start = self.target.map_or(0, |j| j + 1);
            self.target = (0..n).map(|k| (start + k) % n).find(|&j| self.controlled_in(j).is_some());
        }
        let l = self.spec.layout();
        let base = l.frame(l.history - 1);
        for j in 0..n {
            let on = if rotate { self.target == Some(j) } else { self.controlled_in(j).is_some() };
            self.frames[base + l.flow(j, super::FlowFeature::Target)] = f32::from(u8::from(on));
        }
    }

    /// Writes the observation (length [`HostLayout::size`]).
    pub fn observe(&self, out: &mut [f32]) {
        let l = self.spec.layout();
        let n = self.frames.len();
        out[..n].copy_from_slice(&self.frames);
        for &k in &self.not_sender {
            out[k] = 0.0;
        }
        let masks = &mut out[n..n + l.mask_len()];
        masks.iter_mut().for_each(|x| *x = 0.0);
        let s = l.max_subflows;
        for (j, slot) in self.slots.iter().enumerate() {
            let Some(f) = *slot else { continue };
            for i in 0..s {
                masks[j * s + i] = f32::from(u8::from(self.sim.subflow_usable(f, i)));
            }
            masks[l.max_flows * s + j] = f32::from(u8::from(self.running(f)));
        }
    }

    /// Writes the reward terms of the last interval (length [`HostSpec::terms_len`]).
    pub fn write_terms(&self, out: &mut [f64]) {
        out.copy_from_slice(&self.terms);
    }
}
