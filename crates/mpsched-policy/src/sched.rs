//! A trained policy as a packet scheduler (`--scheduler policy:PATH`, `edar`): at every decision
//! boundary (its own timer, [`Scheduler::poll_timeout`]) it records the interval with the
//! sender-side [`Recorder`] (the envs' feature layout and formulas), runs its network and turns
//! the action into a [`Decision`] exactly as the env does ([`ActionKind::decision`]); between
//! boundaries the external scheduler carries the decision out (redundant or minRTT for a mode
//! policy, deficit round robin over the weights for a weights or select policy). Nothing here
//! knows the simulator: the same scheduler runs in any driver of the transport.
//!
//! The inference's wall-clock time is measured for [`Scheduler::decision_stats`] only; no
//! decision depends on it.

use std::sync::Arc;

use mpsched_transport::algo::FromParams;
use mpsched_transport::observe::{min_rtt_interval_ns, ActionKind, DecisionStats, Recorder, RecorderConfig};
use mpsched_transport::sched::{
    Decision, External, ExternalFallback, ExternalMode, ExternalParams, SchedStart, SchedView, Scheduler, SubflowSet,
    Verdict,
};
use mpsched_transport::{Duration, Instant};

use crate::network::AnyNet;
use crate::spec::{HostPolicySpec, Interval, Layout, PolicySpec, Role};

/// A loaded policy, shared by the connections (or hosts) that run it.
pub struct Policy {
    /// The network, cloned for each connection (recurrent state and scratch are per connection).
    pub net: AnyNet,
    /// What it observes and how it acts: a scheduler or a host controller.
    pub role: Role,
    /// SHA-256 of its files.
    pub sha256: String,
}

impl Policy {
    /// What a scheduler policy observes (`None` for a host policy).
    pub fn scheduler(&self) -> Option<&PolicySpec> {
        match &self.role {
            Role::Scheduler(s) => Some(s),
            Role::Host(_) => None,
        }
    }

    /// What a host policy observes (`None` for a scheduler policy).
    pub fn host(&self) -> Option<&HostPolicySpec> {
        match &self.role {
            Role::Host(s) => Some(s),
            Role::Scheduler(_) => None,
        }
    }
}

/// One connection's policy scheduler.
pub struct PolicySched {
    spec: PolicySpec,
    layout: Layout,
    net: AnyNet,
    inner: External,
    rec: Option<Recorder>,
    next: Option<Instant>,
    obs: Vec<f32>,
    action: Vec<f32>,
    stats: DecisionStats,
}

impl PolicySched {
    /// A scheduler running `policy` (one per connection); `None` for a host policy.
    pub fn new(policy: Arc<Policy>) -> Option<PolicySched> {
        let s = policy.scheduler()?.clone();
        let fallback = if s.fallback_norp { ExternalFallback::MinrttNorp } else { ExternalFallback::Minrtt };
        let mode = if s.action == ActionKind::Mode { ExternalMode::Mode } else { ExternalMode::Weights };
        Some(PolicySched {
            layout: Layout::Sched(s.layout),
            net: policy.net.clone(),
            inner: External::from_params(&ExternalParams { mode, fallback, busy: s.busy }),
            rec: None,
            next: None,
            obs: vec![0.0; s.layout.size()],
            action: vec![0.0; s.action.len(s.layout.max_paths)],
            stats: DecisionStats::default(),
            spec: s,
        })
    }

    fn interval_ns(&self, v: &SchedView) -> u64 {
        match self.spec.interval {
            Interval::Fixed(ns) => ns,
            Interval::MinRtt => min_rtt_interval_ns(v.subflows.iter().map(|s| s.info)),
        }
    }
}

impl Scheduler for PolicySched {
    fn name(&self) -> &'static str {
        "policy"
    }
    fn get_send(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.inner.get_send(now, v, out)
    }
    fn get_retrans(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.inner.get_retrans(now, v, out)
    }
    fn redundant(&self) -> bool {
        self.inner.redundant()
    }
    fn redundant_min_rtt_first(&self) -> bool {
        self.inner.redundant_min_rtt_first()
    }
    fn opportunistic_retransmission(&self) -> bool {
        self.inner.opportunistic_retransmission()
    }
    fn decide(&mut self, d: &Decision) {
        self.inner.decide(d);
    }
    fn start(&mut self, st: &SchedStart) {
        self.inner.start(st);
        let s = &self.spec;
        let cfg = RecorderConfig {
            max_paths: s.layout.max_paths,
            history: s.layout.history,
            mss: st.mss,
            rcv_buf: st.rcv_buf,
        };
        let mut rec = Recorder::new(cfg, st.now);
        if let (ActionKind::Mode, Some(m)) = (s.action, s.initial_mode) {
            self.inner.decide(&Decision::Mode(m));
            rec.set_prev_mode(m);
        }
        // The first boundary: no RTT is known yet (100 ms for a min-RTT policy).
        let first = match s.interval {
            Interval::Fixed(ns) => ns,
            Interval::MinRtt => min_rtt_interval_ns(std::iter::empty()),
        };
        self.rec = Some(rec);
        self.next = Some(st.now + Duration(first));
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }
    fn handle_timeout(&mut self, now: Instant, v: &SchedView) {
        let Some(rec) = self.rec.as_mut() else { return };
        let spec = &self.spec;
        rec.record(now, v);
        rec.observe(v, &mut self.obs);
        let t0 = std::time::Instant::now();
        self.net.act(&self.obs, &self.layout, &mut self.action);
        self.stats.add(t0.elapsed().as_nanos() as u64);
        let usable = |i: usize| v.subflows.get(i).is_some_and(|s| s.usable);
        let (d, prev) = spec.action.decision(&self.action, spec.layout.max_paths, usable);
        self.inner.decide(&d);
        match spec.action {
            ActionKind::Mode => rec.set_prev_mode(prev[0] as u8),
            ActionKind::Weights | ActionKind::Select | ActionKind::Choose => rec.set_prev_share(&prev),
        }
        let next = self.interval_ns(v);
        if let Some(rec) = self.rec.as_mut() {
            rec.set_interval(next);
        }
        self.next = Some(now + Duration(next));
    }
    fn decision_stats(&self) -> Option<&DecisionStats> {
        Some(&self.stats)
    }
}
