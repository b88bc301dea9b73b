//! OLMS scenario options (`[flows.olms]`, see docs/scenarios.md) and the oracle that knows the
//! true path characteristics of a scenario (issue 8).
//!
//! The options become the parameter part of the scheduler name (`olms:app=max-rtt,...`), which
//! `mpsched_transport::sched::Olms::from_spec` parses; they only apply when the flow's
//! scheduler is an OLMS variant (so `mpsched compare` can swap schedulers on one scenario).

use mpsched_transport::sched::olms::{OlmsConfig, Oracle};
use mpsched_transport::sched::Olms;
use serde::{Deserialize, Serialize};

use crate::scenario::Scenario;

/// `[flows.olms]`: every key optional (defaults: the paper's Application I).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OlmsSpec {
    /// "max-rtt" (maximize bandwidth, RTT ≤ rtt_max_ms) or "bandwidth" (minimize RTT,
    /// bandwidth ≤ bw_max_mbps). Default: from the name (`olms-bw` => bandwidth), else max-rtt.
    pub app: Option<String>,
    pub rtt_max_ms: Option<f64>,
    pub bw_max_mbps: Option<f64>,
    /// Paths per sampled set L (default 2, capped at K−1).
    pub l: Option<u32>,
    pub rtt_scale_ms: Option<f64>,
    pub bw_scale_mbps: Option<f64>,
    /// Path Characteristic Measurements Monitor on/off and its q, δ, h (20, 3, 3).
    pub monitor: Option<bool>,
    pub q: Option<u64>,
    pub delta: Option<f64>,
    pub h: Option<u32>,
    /// Slots per LP solve (cyclic LP solving, default 1).
    pub cycle: Option<u32>,
    /// "minrtt" (default) or "wait" when no path of the sampled set has window space.
    pub on_busy: Option<String>,
}

impl OlmsSpec {
    /// `key=value,...` for the scheduler name.
    pub fn params(&self) -> String {
        let mut p: Vec<String> = Vec::new();
        let mut put = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                p.push(format!("{k}={v}"));
            }
        };
        put("app", self.app.clone());
        put("rtt_max_ms", self.rtt_max_ms.map(|x| x.to_string()));
        put("bw_max_mbps", self.bw_max_mbps.map(|x| x.to_string()));
        put("l", self.l.map(|x| x.to_string()));
        put("rtt_scale_ms", self.rtt_scale_ms.map(|x| x.to_string()));
        put("bw_scale_mbps", self.bw_scale_mbps.map(|x| x.to_string()));
        put("monitor", self.monitor.map(|x| x.to_string()));
        put("q", self.q.map(|x| x.to_string()));
        put("delta", self.delta.map(|x| x.to_string()));
        put("h", self.h.map(|x| x.to_string()));
        put("cycle", self.cycle.map(|x| x.to_string()));
        put("on_busy", self.on_busy.clone());
        p.join(",")
    }
}

/// Whether `scheduler` (lower case, no parameters) is an OLMS variant.
pub fn is_olms(scheduler: &str) -> bool {
    matches!(scheduler, "olms" | "olms-maxrtt" | "olms-bw")
}

/// The scheduler name a flow runs with: `scheduler` itself, or `scheduler:params` for an OLMS
/// variant with options. Errors are `key: what was expected`.
pub fn scheduler_with_options(scheduler: &str, spec: Option<&OlmsSpec>) -> Result<String, String> {
    match spec {
        Some(s) if is_olms(scheduler) => {
            let params = s.params();
            Olms::from_spec(scheduler, &params)?;
            Ok(if params.is_empty() { scheduler.to_string() } else { format!("{scheduler}:{params}") })
        }
        _ => Ok(scheduler.to_string()),
    }
}

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

/// The OLMS configuration of flow `flow` (its scheduler name must be an OLMS variant).
pub fn flow_config(sc: &Scenario, flow: usize) -> Option<OlmsConfig> {
    let name = &sc.flows[flow].scheduler;
    let (base, params) = name.split_once(':').unwrap_or((name.as_str(), ""));
    is_olms(base).then(|| OlmsConfig::parse(base, params).ok()).flatten()
}
