//! Device energy per decision interval, with the run summary's model ([`crate::energy`]:
//! MPTCP-RL's power model plus Huang et al.'s promotion and tail states), binned at the env's
//! boundaries instead of the metrics sample interval, and attributed to subflows.
//!
//! Attribution: an interface's energy in an interval, idle excepted (active, promotion and
//! tail: what using it costs), is shared among the subflows on its path in proportion to the
//! bytes each had acknowledged in the interval. An interval without traffic on the path (its
//! tail) is shared as the last interval with traffic was, so the tail is charged to the
//! subflows that caused it; before any byte was acknowledged on the path (handshakes, the first
//! flight), evenly among the subflows on it. The interface's idle power is charged to nobody.

use crate::energy::InterfaceEnergy;
use crate::sim::Sim;

/// Energy bookkeeping of one path with an energy model.
#[derive(Clone, Debug, Default)]
struct PathMeter {
    ie: InterfaceEnergy,
    /// Device byte counters at the last boundary (down, up).
    bytes: (u64, u64),
    /// Attributable energy (J) of the last interval.
    energy_j: f64,
    /// Bytes acknowledged on the path in the last interval that had any (the shares' total).
    weight_total: u64,
}

/// One subflow's counters for the attribution.
#[derive(Clone, Copy, Debug, Default)]
struct SubMeter {
    /// Delivered-byte counter at the last boundary.
    delivered: u64,
    /// Share weight: bytes acknowledged in the last interval its path carried traffic.
    weight: u64,
    /// Bytes acknowledged in the interval just ended; `None` when the flow has no connection.
    acked: Option<u64>,
}

/// Per-interval energy of every interface and its attribution to every flow's subflows.
#[derive(Clone, Debug, Default)]
pub(super) struct EnergyMeter {
    /// Per scenario path; `None` without an energy model.
    paths: Vec<Option<PathMeter>>,
    /// Per flow and subflow.
    subs: Vec<Vec<SubMeter>>,
    /// Per flow and subflow: energy attributed in the last interval (J).
    attributed: Vec<Vec<f64>>,
    /// Per path, in the interval just ended: bytes acknowledged, and subflows with a connection
    /// (buffers kept between intervals).
    per_path: Vec<u64>,
    users: Vec<u64>,
}

impl EnergyMeter {
    /// A meter for `sim`'s scenario at its start.
    pub(super) fn new(sim: &Sim) -> EnergyMeter {
        let sc = sim.scenario();
        EnergyMeter {
            paths: sc.paths.iter().map(|p| p.energy.map(|_| PathMeter::default())).collect(),
            subs: vec![Vec::new(); sc.flows.len()],
            attributed: vec![Vec::new(); sc.flows.len()],
            per_path: vec![0; sc.paths.len()],
            users: vec![0; sc.paths.len()],
        }
    }

    /// Whether any path has an energy model (otherwise every figure is 0 and nothing is kept).
    fn active(&self) -> bool {
        self.paths.iter().any(Option::is_some)
    }

    /// Accounts the interval `(now − dt, now]` that just ended.
    pub(super) fn interval(&mut self, sim: &Sim, dt_ns: u64) {
        if !self.active() || dt_ns == 0 {
            return;
        }
        let now = sim.now_ns();
        let sc = sim.scenario();
        for (p, m) in self.paths.iter_mut().enumerate() {
            let (Some(m), Some(params)) = (m.as_mut(), sc.paths[p].energy) else { continue };
            let (down, up) = sim.path_device_bytes(p);
            let (before, idle_before) = (m.ie.total_j(), m.ie.idle_j);
            m.ie.bin(&params, now, dt_ns, up - m.bytes.1, down - m.bytes.0);
            m.bytes = (down, up);
            m.energy_j = (m.ie.total_j() - before) - (m.ie.idle_j - idle_before);
        }
        self.count_acked(sim);
        self.attribute(sim);
    }

    /// Bytes each subflow had acknowledged in the interval (advancing the counters), and the
    /// per-path sums and subflow counts.
    fn count_acked(&mut self, sim: &Sim) {
        let sc = sim.scenario();
        self.per_path.iter_mut().chain(self.users.iter_mut()).for_each(|x| *x = 0);
        for (f, subs) in self.subs.iter_mut().enumerate() {
            let Some(c) = sim.connection(f) else {
                subs.iter_mut().for_each(|s| s.acked = None);
                continue;
            };
            subs.resize(c.subflow_count(), SubMeter::default());
            for (i, s) in c.subflows() {
                let (i, sub) = (i as usize, &mut subs[i as usize]);
                // A new connection of a repeated download restarts the counter.
                let d = if s.delivered >= sub.delivered { s.delivered - sub.delivered } else { s.delivered };
                (sub.delivered, sub.acked) = (s.delivered, Some(d));
                let p = sc.flows[f].paths[i] as usize;
                self.per_path[p] += d;
                self.users[p] += 1;
            }
        }
    }

    /// Shares each path's energy among its subflows (module docs): before any byte was
    /// acknowledged on a path (handshakes, first flight), evenly among the subflows on it.
    fn attribute(&mut self, sim: &Sim) {
        let sc = sim.scenario();
        for (p, m) in self.paths.iter_mut().enumerate() {
            if let Some(m) = m.as_mut() {
                if self.per_path[p] > 0 {
                    m.weight_total = self.per_path[p];
                }
            }
        }
        for (f, subs) in self.subs.iter_mut().enumerate() {
            let out = &mut self.attributed[f];
            out.clear();
            for (i, sub) in subs.iter_mut().enumerate() {
                let p = sc.flows[f].paths[i] as usize;
                let Some(m) = &self.paths[p] else {
                    out.push(0.0);
                    continue;
                };
                if self.per_path[p] > 0 {
                    sub.weight = sub.acked.unwrap_or(0);
                }
                let share = if m.weight_total > 0 {
                    sub.weight as f64 / m.weight_total as f64
                } else if sub.acked.is_some() {
                    1.0 / self.users[p] as f64
                } else {
                    0.0
                };
                out.push(m.energy_j * share);
            }
        }
    }

    /// Energy attributed to flow `f`'s subflow `i` in the last interval (J).
    pub(super) fn subflow_j(&self, f: usize, i: usize) -> f64 {
        self.attributed.get(f).and_then(|v| v.get(i)).copied().unwrap_or(0.0)
    }

    /// Energy attributed to flow `f`'s subflows in the last interval (J), including the tail
    /// of a flow that has completed.
    pub(super) fn flow_j(&self, f: usize) -> f64 {
        self.attributed.get(f).map_or(0.0, |v| v.iter().sum())
    }
}
