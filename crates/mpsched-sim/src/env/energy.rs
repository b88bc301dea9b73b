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

/// Per-interval energy of every interface and its attribution to every flow's subflows.
#[derive(Clone, Debug, Default)]
pub(super) struct EnergyMeter {
    /// Per scenario path; `None` without an energy model.
    paths: Vec<Option<PathMeter>>,
    /// Per flow and subflow: delivered-byte counter at the last boundary, and the share weight
    /// (bytes acknowledged in the last interval its path carried traffic).
    subs: Vec<Vec<(u64, u64)>>,
    /// Per flow and subflow: energy attributed in the last interval (J).
    attributed: Vec<Vec<f64>>,
}

impl EnergyMeter {
    /// A meter for `sim`'s scenario at its start.
    pub(super) fn new(sim: &Sim) -> EnergyMeter {
        let sc = sim.scenario();
        EnergyMeter {
            paths: sc.paths.iter().map(|p| p.energy.map(|_| PathMeter::default())).collect(),
            subs: vec![Vec::new(); sc.flows.len()],
            attributed: vec![Vec::new(); sc.flows.len()],
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
        let acked = self.acked_bytes(sim);
        self.attribute(sim, &acked);
    }

    /// Bytes each subflow had acknowledged in the interval (advancing the counters), and the
    /// per-path sums.
    fn acked_bytes(&mut self, sim: &Sim) -> (Vec<Vec<u64>>, Vec<u64>) {
        let sc = sim.scenario();
        let mut per_path = vec![0u64; sc.paths.len()];
        let mut acked = vec![Vec::new(); sc.flows.len()];
        for (f, subs) in self.subs.iter_mut().enumerate() {
            let Some(c) = sim.connection(f) else { continue };
            subs.resize(c.subflow_count(), (0, 0));
            for (i, s) in c.subflows() {
                let i = i as usize;
                let prev = subs[i].0;
                // A new connection of a repeated download restarts the counter.
                let d = if s.delivered >= prev { s.delivered - prev } else { s.delivered };
                subs[i].0 = s.delivered;
                per_path[sc.flows[f].paths[i] as usize] += d;
                acked[f].push(d);
            }
        }
        (acked, per_path)
    }

    /// Shares each path's energy among its subflows (module docs).
    fn attribute(&mut self, sim: &Sim, (acked, per_path): &(Vec<Vec<u64>>, Vec<u64>)) {
        let sc = sim.scenario();
        // Subflows on each path now: before any byte was acknowledged on a path (handshakes,
        // first flight), its energy is shared evenly among them.
        let mut users = vec![0u64; sc.paths.len()];
        for (f, a) in acked.iter().enumerate() {
            for i in 0..a.len() {
                users[sc.flows[f].paths[i] as usize] += 1;
            }
        }
        for (p, m) in self.paths.iter_mut().enumerate() {
            if let Some(m) = m.as_mut() {
                if per_path[p] > 0 {
                    m.weight_total = per_path[p];
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
                if per_path[p] > 0 {
                    sub.1 = acked[f].get(i).copied().unwrap_or(0);
                }
                let share = if m.weight_total > 0 {
                    sub.1 as f64 / m.weight_total as f64
                } else if i < acked[f].len() {
                    1.0 / users[p] as f64
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
