//! Host controllers (`cc = "policy:PATH"` naming a host window policy, DRL-CC's one agent for
//! every flow of a host; `scheduler = "policy:PATH"` naming a host path policy, MPTCP-RL's):
//! the flows that name one controller form its host (the scenario's flows
//! are one host: every flow is observed, the naming ones are controlled). A controller runs
//! at its own deadline, after every other event of that instant — where a host env pauses —
//! and sets its flows' windows or path preferences through [`SimHost`].

use mpsched_transport::host::{HostController, HostFlow, HostFlows};
use mpsched_transport::Instant;

use super::Sim;

/// A host controller and the flows it controls.
pub(super) struct HostRt {
    pub(super) ctrl: Box<dyn HostController>,
    /// Per scenario flow: its windows are this controller's.
    pub(super) controlled: Vec<bool>,
}

/// The scenario's flows as a host controller sees them.
struct SimHost<'a> {
    sim: &'a mut Sim,
    controlled: &'a [bool],
}

impl HostFlows for SimHost<'_> {
    fn count(&self) -> usize {
        self.sim.sc.flows.len()
    }
    fn flow(&self, i: usize) -> Option<HostFlow<'_>> {
        let conn = self.sim.eps.get(2 * i)?.conn.as_ref()?;
        let def = &self.sim.sc.flows[i];
        Some(HostFlow {
            conn,
            done: self.sim.flow_done(i),
            controlled: self.controlled[i],
            multipath: def.paths.len() > 1,
            mss: conn.mss(),
        })
    }
    fn set_cwnd(&mut self, i: usize, subflow: usize, bytes: u64) {
        if self.controlled.get(i).copied().unwrap_or(false) {
            self.sim.set_cwnd(i, subflow, bytes);
        }
    }
    fn set_path_preference(&mut self, i: usize, pref: Option<&[f32]>) {
        if self.controlled.get(i).copied().unwrap_or(false) {
            self.sim.set_path_preference(i, pref);
        }
    }
}

impl Sim {
    /// One controller per host policy named by a flow's `cc` (window policies, DRL-CC) or
    /// `scheduler` (path policies, MPTCP-RL: the flow runs `dmptcp`), its flows marked
    /// controlled. The registries refuse a policy named where its role cannot apply
    /// (`mpsched_policy::register`), so each name here is of the right kind.
    pub(super) fn build_hosts(&mut self) {
        let mut hosts: Vec<HostRt> = Vec::new();
        for f in 0..self.sc.flows.len() {
            let def = &self.sc.flows[f];
            let labels = [def.cc.label().to_string(), def.scheduler.label().to_string()];
            for label in labels {
                if let Some(h) = hosts.iter_mut().find(|h| h.ctrl.name() == label) {
                    h.controlled[f] = true;
                    continue;
                }
                let Some(policy) = mpsched_policy::host_policy(&label) else { continue };
                let Some(ctrl) = mpsched_policy::PolicyHost::new(&label, &policy, Instant(0)) else { continue };
                let mut controlled = vec![false; self.sc.flows.len()];
                controlled[f] = true;
                hosts.push(HostRt { ctrl: Box::new(ctrl), controlled });
            }
        }
        self.hosts = hosts;
        self.update_host_due();
    }

    /// Flow `f` is no longer controlled by the host controller named `label` (if any);
    /// controllers without flows are dropped.
    pub(super) fn release_from_host(&mut self, f: usize, label: &str) {
        self.hosts.iter_mut().filter(|h| h.ctrl.name() == label).for_each(|h| h.controlled[f] = false);
        self.hosts.retain(|h| h.controlled.iter().any(|&c| c));
        self.update_host_due();
    }

    /// The earliest host deadline (`u64::MAX` without one): the event loop compares one number.
    fn update_host_due(&mut self) {
        self.host_due = self.hosts.iter().filter_map(|h| h.ctrl.poll_timeout()).map(|t| t.0).min().unwrap_or(u64::MAX);
    }

    /// Runs every host controller due at `self.now`, in host order.
    pub(super) fn run_hosts(&mut self) {
        let mut hosts = std::mem::take(&mut self.hosts);
        let now = self.now;
        for h in hosts.iter_mut() {
            if h.ctrl.poll_timeout().is_some_and(|t| t.0 <= now) {
                let HostRt { ctrl, controlled } = h;
                ctrl.handle_timeout(Instant(now), &mut SimHost { sim: self, controlled });
            }
        }
        self.hosts = hosts;
        self.update_host_due();
    }

    /// Each host controller's label and decisions.
    pub(super) fn host_decisions(&self) -> impl Iterator<Item = (&str, &mpsched_transport::observe::DecisionStats)> {
        self.hosts.iter().filter_map(|h| Some((h.ctrl.name(), h.ctrl.decision_stats()?)))
    }

    /// The flows host controller `label` controls, by name.
    pub(super) fn host_flows(&self, label: &str) -> Vec<&str> {
        let Some(h) = self.hosts.iter().find(|h| h.ctrl.name() == label) else { return Vec::new() };
        self.sc.flows.iter().zip(&h.controlled).filter(|(_, &c)| c).map(|(f, _)| f.name.as_str()).collect()
    }
}
