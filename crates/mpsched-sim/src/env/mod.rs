//! Learning environments (docs/envs.md): a simulation paused at every decision interval of
//! one controlled flow, observations written as `f32` into caller slices and the interval's
//! reward terms as `f64`. The Python gymnasium classes (`mpsched.envs`) are thin wrappers; the
//! vector env ([`VecEnv`]) steps many of these with the GIL released.
//!
//! Observation of one interval (a *frame*), oldest of `history` frames first, then the mask
//! ([`ObsLayout`] has every offset):
//! - per subflow, `max_paths` slots of [`SubflowFeature`] (zeros for absent subflows);
//! - the connection's [`ConnFeature`]s;
//! - congestion-control envs only: `max_flows` slots of [`FlowFeature`] for every flow of the
//!   host (DRL-CC's state);
//! - after the frames: the mask, 1 per usable subflow (established, path up), then, for
//!   congestion-control envs, 1 per active flow.
//!
//! Features are scaled to be O(1): times in units of 100 ms, windows in units of 100 segments,
//! rates in units of 10 Mbit/s, buffer figures as fractions of the receive buffer.
//!
//! Modules: [`features`] (the feature layout), [`spec`] (what an env is), [`terms`] (reward
//! terms), `record` (an interval into a frame and the terms), [`vector`] (many envs).

pub mod any;
mod energy;
pub mod features;
pub mod host;
mod record;
pub mod spec;
pub mod terms;
pub mod vector;

pub use any::{AnyEnv, AnySpec};
pub use features::{
    ConnFeature, Feature, FeatureInfo, FeatureKind, FlowFeature, ObsLayout, SubflowFeature, CONN_FEATURES,
    FLOW_FEATURES, SUBFLOW_FEATURES,
};
pub use host::{HostEnv, HostLayout, HostSpec, HostTerm, HOST_TERMS};
pub use spec::{ActionKind, EnvSpec};
pub use terms::{Term, TERMS};
pub use vector::{episode_seed, VecEnv, VecOut};

use energy::EnergyMeter;
use record::FlowSnap;

use crate::scenario::ScenarioError;
use crate::sim::{Sim, Stop};
use crate::{parse_text, Decision};
use mpsched_transport::observe;

/// Megabit in bits.
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
    /// What the env is.
    pub spec: EnvSpec,
    sim: Sim,
    /// `history` frames, oldest first.
    frames: Vec<f32>,
    terms: Vec<f64>,
    snaps: Vec<FlowSnap>,
    last_boundary: u64,
    /// Nominal length of the interval in progress (0 before the first boundary): a last,
    /// partial interval is measured over at least this long.
    interval_ns: u64,
    prev_action: [f32; 8],
    prev_mode: f32,
    /// Recent delivery-rate samples per subflow (bytes/s), `history` deep.
    rates: Vec<[u64; 8]>,
    capacity_mbps: f64,
    meter: EnergyMeter,
    status: StepStatus,
    /// Frame indices a sender cannot compute, zeroed in observations (`sender_only`; else empty).
    not_sender: Vec<usize>,
    /// Steps taken in the current episode.
    pub steps: u64,
}

impl Env {
    /// Builds the env and resets it with `seed` (the episode's scenario seed).
    pub fn new(mut spec: EnvSpec, seed: u64) -> Result<Env, ScenarioError> {
        let sim = Self::build(&mut spec, seed)?;
        let layout = spec.layout();
        let not_sender = match spec.sender_only {
            true => (0..layout.path_mask_offset())
                .filter(|&k| observe::sender_computes(&layout, k) == Some(false))
                .collect(),
            false => Vec::new(),
        };
        let mut env = Env {
            not_sender,
            frames: vec![0.0; spec.history * spec.frame_len()],
            terms: vec![0.0; spec.terms_len()],
            snaps: Vec::new(),
            last_boundary: 0,
            interval_ns: 0,
            prev_action: [0.0; 8],
            prev_mode: 0.0,
            rates: vec![[0; 8]; spec.history],
            capacity_mbps: 0.0,
            meter: EnergyMeter::default(),
            status: StepStatus::default(),
            steps: 0,
            sim,
            spec,
        };
        env.start();
        Ok(env)
    }

    fn build(spec: &mut EnvSpec, seed: u64) -> Result<Sim, ScenarioError> {
        let mut sc = parse_text(&spec.scenario, &spec.source, spec.format(), Some(seed))?;
        if let Some(name) = &spec.flow_name {
            spec.flow = sc.flows.iter().position(|f| &f.name == name).ok_or_else(|| {
                ScenarioError(format!(
                    "{}: env flow: no flow {name:?} in this episode's scenario (seed {seed}): the workload produced none",
                    spec.source
                ))
            })?;
            if let Some(c) = &spec.control {
                spec::apply_control(&mut sc.flows[spec.flow], c, &spec.source)?;
            }
        }
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
        self.sim = Self::build(&mut self.spec, seed)?;
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
        self.meter = EnergyMeter::new(&self.sim);
        // The first interval runs from the controlled flow's start, as a policy deployed in
        // the flow's sender measures it (`observe::Recorder`).
        self.last_boundary = sc.flows[self.spec.flow].start_ns;
        self.interval_ns = 0;
        if let (ActionKind::Mode, Some(m)) = (self.spec.action, self.spec.initial_mode) {
            self.prev_mode = m as f32;
            self.sim.set_initial_decision(self.spec.flow, Decision::Mode(m));
        }
        // The first observation covers the start of the run up to the first boundary.
        self.advance_to_boundary();
    }

    /// The simulation of the current episode.
    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    /// Status after the last step (or reset).
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

    /// The episode's results so far (tables up to now), as `mpsched run` reports a run; at the
    /// episode's end, the whole episode.
    pub fn output(&mut self) -> crate::RunOutput {
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
        self.sim.subflow_usable(self.spec.flow, i)
    }

    fn apply(&mut self, action: &[f32]) {
        let f = self.spec.flow;
        let n = self.spec.max_paths.min(8);
        let kind = match self.spec.action {
            ActionKind::Mode => observe::ActionKind::Mode,
            ActionKind::Weights => observe::ActionKind::Weights,
            ActionKind::Select => observe::ActionKind::Select,
            ActionKind::Cwnd => return self.apply_cwnd(action),
        };
        // The mapping a policy deployed as a scheduler uses too (mpsched-policy).
        let (d, prev) = kind.decision(action, n, |i| self.usable(i));
        match kind {
            observe::ActionKind::Mode => self.prev_mode = prev[0],
            _ => self.prev_action = prev,
        }
        self.sim.decide(f, d);
    }

    /// The window action: each subflow's cwnd changes by `action[i]` × `cwnd_step` segments.
    fn apply_cwnd(&mut self, action: &[f32]) {
        let f = self.spec.flow;
        let n = self.spec.max_paths.min(8);
        let Some(c) = self.sim.connection(f) else { return };
        let mss = c.mss() as f64;
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
        } else if self.sim.now_ns() >= self.sim.scenario().duration_ns {
            // The boundary is the scenario's end: this is the last step (advancing once more
            // would return an empty interval).
            self.status.truncated = true;
        }
        self.record();
        self.interval_ns = self.sim.decision_interval(self.spec.flow);
    }

    /// Writes the observation (length [`EnvSpec::obs_len`]).
    pub fn observe(&self, out: &mut [f32]) {
        let n = self.frames.len();
        out[..n].copy_from_slice(&self.frames);
        for &k in &self.not_sender {
            out[k] = 0.0;
        }
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
