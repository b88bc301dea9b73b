//! The OLMS oracle: the true path characteristics of a scenario, for the regret and violation
//! figures of the OLMS paper (olms.txt §VI-B). The scheduler itself and its parameters live in
//! `mpsched_transport::sched::olms`; scenarios set the parameters like any scheduler's
//! (`scheduler = "olms:app=bandwidth"` or a `[flows.scheduler_params.olms]` table).

use mpsched_transport::sched::olms::{OlmsConfig, Oracle};
use mpsched_transport::sched::SchedAlgo;

use crate::scenario::Scenario;

/// The true normalized characteristics of flow `flow`'s paths at time `at_ns`: bandwidth = the
/// bottleneck forward link rate, RTT = the sum of the forward and reverse propagation delays
/// (queueing excluded), both scaled as the scheduler scales its measurements, and the oracle
/// for them. `None` if the true problem is infeasible.
pub fn oracle_at(sc: &Scenario, flow: usize, cfg: &OlmsConfig, at_ns: u64) -> Option<Oracle> {
    let def = &sc.flows[flow];
    let (mut b, mut r) = (Vec::new(), Vec::new());
    for &p in &def.paths {
        let path = &sc.paths[p as usize];
        let link_at = |l: u32| {
            let ld = &sc.links[l as usize];
            let (mut rate, mut delay) = (ld.rate_bps, ld.delay_ns);
            for ch in ld.changes.iter().filter(|c| c.at_ns <= at_ns) {
                if let Some(x) = ch.rate_bps {
                    rate = x;
                }
                if let Some(x) = ch.delay_ns {
                    delay = x;
                }
            }
            (rate, delay)
        };
        let rate = path.fwd.iter().map(|&l| link_at(l).0).min().unwrap_or(0);
        let rtt_ns: u64 = path.fwd.iter().chain(&path.rev).map(|&l| link_at(l).1).sum();
        let (bn, rn) = cfg.normalize(rate as f64, rtt_ns as f64 / 1e6);
        b.push(bn);
        r.push(rn);
    }
    Oracle::new(cfg.app, &b, &r, cfg.l)
}

/// The OLMS configuration of flow `flow` (`None` if its scheduler is not OLMS).
pub fn flow_config(sc: &Scenario, flow: usize) -> Option<OlmsConfig> {
    match sc.flows[flow].scheduler.algo() {
        SchedAlgo::Olms(p) => Some(OlmsConfig::from_params(p)),
        _ => None,
    }
}
