//! A trained host policy as the controller of a host's flows: every decision interval it
//! records the host's flows with the sender-side [`HostRecorder`] (the host env's layout and
//! formulas), runs its network and applies the action exactly as the host env does:
//!
//! - `cwnd` (`cc = "policy:PATH"`, DRL-CC): changes the windows of the target flow (or of
//!   every controlled flow). The flows run the `external` controller: between decisions their
//!   windows move only by TCP's loss reactions.
//! - `paths` (`scheduler = "policy:PATH"`, MPTCP-RL): one usage value per path slot, set as
//!   every controlled flow's path preference (mptcp-rl.txt §"Action"); the flows run
//!   `dmptcp`, which picks each flow's path set by the MPTCP transmission model in preference
//!   order (§"Paths selection based on the MPTCP transmission model").
//!
//! Slots follow the host env's rules (`mpsched_sim::env::host`) as a sender can apply them: at
//! a boundary a flow that has started takes the lowest free slot, in the host's flow order,
//! before the interval is recorded (the env gives a slot one boundary earlier to a flow about
//! to start, which a sender cannot know; the frames are the same unless every slot is taken,
//! or a flow starts and completes between two boundaries, which the controller never sees);
//! a flow that completed is recorded in the interval it completed in, then frees its slot;
//! the next target is the next controlled running flow after the last one, in slot order.

use std::sync::Arc;

use mpsched_transport::host::{HostController, HostFlows};
use mpsched_transport::observe::{DecisionStats, FlowIn, HostRecorder};
use mpsched_transport::{Duration, Instant};

use crate::network::AnyNet;
use crate::sched::Policy;
use crate::spec::{HostActionKind, HostPolicySpec, HostTarget, Layout};

/// One host's policy controller.
pub struct PolicyHost {
    name: String,
    spec: HostPolicySpec,
    layout: Layout,
    net: AnyNet,
    rec: HostRecorder,
    /// Per slot: the host flow in it.
    slots: Vec<Option<usize>>,
    /// Per host flow: it has (had) a slot.
    slotted: Vec<bool>,
    target: Option<usize>,
    next: Instant,
    obs: Vec<f32>,
    action: Vec<f32>,
    stats: DecisionStats,
}

impl PolicyHost {
    /// A controller named `name` running host `policy` from `start` (its first decision one
    /// interval later). `None` for a scheduler policy.
    pub fn new(name: &str, policy: &Arc<Policy>, start: Instant) -> Option<PolicyHost> {
        let spec = policy.host()?.clone();
        let layout = spec.layout;
        Some(PolicyHost {
            name: name.to_string(),
            layout: Layout::Host(layout),
            net: policy.net.clone(),
            rec: HostRecorder::new(layout, start, spec.interval_ns),
            slots: vec![None; layout.max_flows],
            slotted: Vec::new(),
            target: None,
            next: start + Duration(spec.interval_ns),
            obs: vec![0.0; layout.size()],
            action: vec![0.0; spec.action_len()],
            stats: DecisionStats::default(),
            spec,
        })
    }

    /// Gives free slots to started flows without one, in host order.
    fn assign(&mut self, host: &dyn HostFlows) {
        self.slotted.resize(host.count(), false);
        for i in 0..host.count() {
            if self.slotted[i] || host.flow(i).is_none_or(|f| f.done) {
                continue;
            }
            let Some(j) = self.slots.iter().position(Option::is_none) else { return };
            self.slots[j] = Some(i);
            self.slotted[i] = true;
            self.rec.clear_slot(j);
        }
    }

    /// The host flow in slot `j` if it runs and is this controller's.
    fn controlled_in(&self, j: usize, host: &dyn HostFlows) -> Option<usize> {
        let i = self.slots[j]?;
        host.flow(i).filter(|f| f.controlled && !f.done).map(|_| i)
    }

    /// Records the interval that ends at `now`, frees the slots of completed flows, gives
    /// slots to new ones and picks the next target.
    fn record(&mut self, now: Instant, host: &dyn HostFlows) {
        self.assign(host);
        let dt = self.rec.begin(now);
        for j in 0..self.slots.len() {
            let Some(f) = self.slots[j].and_then(|i| host.flow(i)) else { continue };
            self.rec.record_flow(j, FlowIn { conn: f.conn, mss: f.mss, multipath: f.multipath }, dt);
        }
        for j in 0..self.slots.len() {
            if self.slots[j].is_some_and(|i| host.flow(i).is_some_and(|f| f.done)) {
                self.slots[j] = None;
            }
        }
        self.assign(host);
        let n = self.slots.len();
        let rotate = self.spec.target == HostTarget::Rotate;
        if rotate {
            let start = self.target.map_or(0, |j| j + 1);
            self.target = (0..n).map(|k| (start + k) % n).find(|&j| self.controlled_in(j, host).is_some());
        }
        for j in 0..n {
            let on = if rotate { self.target == Some(j) } else { self.controlled_in(j, host).is_some() };
            self.rec.set_target(j, on);
        }
    }

    /// Applies one slot's row of the action: each subflow's window changes by `a × cwnd_step`
    /// segments (a in [-1, 1]), to at least two segments (the host env's `cwnd` action).
    fn apply(&mut self, j: usize, row_start: usize, host: &mut dyn HostFlows) {
        let Some(i) = self.controlled_in(j, host) else { return };
        let n = host.flow(i).map_or(0, |f| f.conn.subflow_count()).min(self.spec.layout.max_subflows).min(8);
        for k in 0..n {
            let a = self.action.get(row_start + k).copied().filter(|a| a.is_finite()).unwrap_or(0.0).clamp(-1.0, 1.0);
            self.rec.set_prev(j, k, a);
            let Some(f) = host.flow(i) else { return };
            let mss = f64::from(f.mss);
            let cwnd = f.conn.subflow_info(k).cwnd as f64;
            host.set_cwnd(i, k, (cwnd + f64::from(a) * self.spec.cwnd_step * mss).max(2.0 * mss) as u64);
        }
    }
}

impl PolicyHost {
    /// `paths`: the action as slot `j`'s flow's path preference, as the host env's `paths`
    /// action: non-finite and negative values count as 0, values beyond the flow's subflows
    /// are ignored, and no usable subflow valued > 0 clears the preference (dmptcp's own
    /// srtt order).
    fn apply_paths(&mut self, j: usize, host: &mut dyn HostFlows) {
        let Some(i) = self.controlled_in(j, host) else { return };
        let Some(f) = host.flow(i) else { return };
        let n = f.conn.subflow_count().min(self.spec.layout.max_subflows).min(8);
        let mut p = [0.0f32; 8];
        let mut any = false;
        for (k, pk) in p.iter_mut().enumerate().take(n) {
            *pk = self.action.get(k).copied().filter(|a| a.is_finite()).unwrap_or(0.0).max(0.0);
            any |= *pk > 0.0 && f.conn.subflow_usable(k);
            self.rec.set_prev(j, k, *pk);
        }
        host.set_path_preference(i, any.then_some(&p[..n]));
    }
}

impl HostController for PolicyHost {
    fn name(&self) -> &str {
        &self.name
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Some(self.next)
    }
    fn handle_timeout(&mut self, now: Instant, host: &mut dyn HostFlows) {
        self.record(now, host);
        let h: &dyn HostFlows = host;
        let (slots, s) = (&self.slots, self.spec.layout.max_subflows);
        let flow_of = |j: usize| slots[j].and_then(|i| h.flow(i));
        self.rec.observe(
            |j, i| flow_of(j).is_some_and(|f| f.conn.subflow_usable(i)),
            |j| flow_of(j).is_some_and(|f| !f.done),
            &mut self.obs,
        );
        let t0 = std::time::Instant::now();
        self.net.act(&self.obs, &self.layout, &mut self.action);
        self.stats.add(t0.elapsed().as_nanos() as u64);
        match (self.spec.action, self.spec.target) {
            (HostActionKind::Paths, _) => {
                for j in 0..self.slots.len() {
                    self.apply_paths(j, host);
                }
            }
            (_, HostTarget::Rotate) => {
                if let Some(j) = self.target {
                    self.apply(j, 0, host);
                }
            }
            (_, HostTarget::All) => {
                for j in 0..self.slots.len() {
                    self.apply(j, j * s, host);
                }
            }
        }
        self.next = now + Duration(self.spec.interval_ns);
    }
    fn decision_stats(&self) -> Option<&DecisionStats> {
        Some(&self.stats)
    }
}
