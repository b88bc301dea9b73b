//! Random processes of a scenario file expanded into ordinary entries before validation:
//! `[[handoffs]]` into link schedules, `[[workloads]]` into flows.

use std::collections::BTreeMap;

use super::resolve::Resolver;
use super::*;
use crate::handoff::{handoff_times, HandoffSpec};
use crate::rng::Rng;
use crate::workload::arrivals;

impl Resolver<'_> {
    /// Expands `[[handoffs]]` into schedule entries of the path's links (see `handoff.rs`).
    /// Runs after path shortcuts became explicit links.
    pub(super) fn expand_handoffs(
        &self,
        file: &mut ScenarioFile,
        seed: u64,
        duration: f64,
    ) -> Result<(), ScenarioError> {
        let mut per_path: BTreeMap<String, usize> = BTreeMap::new();
        for (i, h) in std::mem::take(&mut file.handoffs).into_iter().enumerate() {
            let f = format!("handoffs[{i}]");
            let path = file
                .paths
                .iter()
                .find(|p| p.name == h.path)
                .ok_or_else(|| self.err(&format!("{f}.path"), format!("unknown path {:?}", h.path)))?;
            let (fwd, rev) = (path.forward.clone().unwrap_or_default(), path.reverse.clone().unwrap_or_default());
            let p = self.check_handoff(&f, &h, duration)?;
            let k = per_path.entry(h.path.clone()).or_insert(0);
            let mut rng = Rng::stream(seed, &format!("handoff/{}/{k}", h.path));
            *k += 1;
            let times = handoff_times(&mut rng, p.rate, p.bounds, p.start, p.stop, p.max);
            for (name, forward) in fwd.iter().map(|n| (n, true)).chain(rev.iter().map(|n| (n, false))) {
                let Some(link) = file.links.iter_mut().find(|l| &l.name == name) else {
                    continue; // an unknown link name: reported when the path is resolved
                };
                if h.rate_mbps.is_some() && link.trace.is_some() {
                    return Err(self.err(&format!("{f}.rate_mbps"), format!("link {name:?} is trace-driven: a handoff can change its delay, loss or outage, not its rate")));
                }
                let added = handoff_changes(link, &h, &times, p.outage, forward);
                merge_schedule(link, added);
            }
        }
        Ok(())
    }

    /// A handoff's numbers, checked: arrival rate, duration bounds, start/stop, outage.
    fn check_handoff(&self, f: &str, h: &HandoffSpec, duration: f64) -> Result<HandoffNumbers, ScenarioError> {
        let rate = self.positive(&format!("{f}.rate_per_min"), h.rate_per_min)?;
        let (lo, hi) = h.duration_s.bounds();
        if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi) {
            return Err(self.err(
                &format!("{f}.duration_s"),
                format!("expected a positive number or [lo, hi] with 0 < lo <= hi, got [{lo}, {hi}]"),
            ));
        }
        self.duration(&format!("{f}.duration_s"), lo, 1.0)?;
        self.duration(&format!("{f}.duration_s"), hi, 1.0)?;
        let (start, stop) = self.start_stop(f, h.start_s, h.stop_s, duration)?;
        let outage = h.outage_s.unwrap_or(0.0);
        self.time(&format!("{f}.outage_s"), outage, 1.0)?;
        if outage > lo {
            return Err(self.err(
                &format!("{f}.outage_s"),
                format!("expected at most the shortest handoff ({lo} s), got {outage}"),
            ));
        }
        if let Some(r) = h.rate_mbps {
            self.rate_bps(&format!("{f}.rate_mbps"), r)?;
        }
        if let Some(d) = h.delay_ms {
            self.time(&format!("{f}.delay_ms"), d, 1e-3)?;
        }
        if let Some(l) = &h.loss {
            self.loss(&format!("{f}.loss"), l)?;
        }
        if h.rate_mbps.is_none() && h.delay_ms.is_none() && h.loss.is_none() && outage == 0.0 {
            return Err(
                self.err(f, "expected at least one of rate_mbps, delay_ms, loss or outage_s (what a handoff changes)")
            );
        }
        let max = h.max_handoffs.unwrap_or(10_000);
        if max > MAX_HANDOFFS {
            return Err(self.err(&format!("{f}.max_handoffs"), format!("expected at most {MAX_HANDOFFS}, got {max}")));
        }
        Ok(HandoffNumbers { rate, bounds: (lo, hi), start, stop, outage, max })
    }

    /// Expands `[[workloads]]` into flows (see `workload.rs`).
    pub(super) fn expand_workloads(
        &self,
        file: &mut ScenarioFile,
        seed: u64,
        duration: f64,
    ) -> Result<(), ScenarioError> {
        for (i, w) in std::mem::take(&mut file.workloads).into_iter().enumerate() {
            let f = format!("workloads[{i}]");
            if let Some(size) = &w.size {
                size.validate().map_err(|e| self.err(&format!("{f}.size"), e))?;
            }
            let flow_duration = match w.flow_duration_s {
                Some(d) => Some(self.duration(&format!("{f}.flow_duration_s"), d, 1.0)? as f64 / 1e9),
                None => None,
            };
            let (rate, period) = self.workload_arrival(&f, &w)?;
            let (start, stop) = self.start_stop(&f, w.start_s, w.stop_s, duration)?;
            let max = w.max_flows.unwrap_or(MAX_FLOWS);
            if max > MAX_FLOWS {
                return Err(
                    self.err(&format!("{f}.max_flows"), format!("expected at most {MAX_FLOWS} flows, got {max}"))
                );
            }
            let mut rng = Rng::stream(seed, &format!("workload/{}", w.name));
            // One arrival beyond the scenario's room is enough to know it is too many.
            let room = MAX_FLOWS.saturating_sub(file.flows.len());
            let times = arrivals(&mut rng, rate, period, start, stop, max.min(room + 1));
            if times.len() > room {
                return Err(self.err(
                    &f,
                    format!("the scenario would hold more than {MAX_FLOWS} flows, expected at most {MAX_FLOWS}"),
                ));
            }
            for (k, t) in times.into_iter().enumerate() {
                let size = w.size.as_ref().map(|s| s.sample(&mut rng));
                let start_s = (t * 1e9).round() / 1e9;
                let stop_s = flow_duration.map(|d| ((start_s + d) * 1e9).round() / 1e9);
                file.flows.push(workload_flow(&w, k, start_s, stop_s, size));
            }
        }
        Ok(())
    }
}

impl Resolver<'_> {
    /// A workload's arrival process: `(Some(rate per second), None)` for "poisson",
    /// `(None, Some(period in seconds))` for "periodic".
    fn workload_arrival(&self, f: &str, w: &WorkloadSpec) -> Result<(Option<f64>, Option<f64>), ScenarioError> {
        match w.arrival.as_str() {
            "poisson" => Ok((Some(self.poisson_rate(f, w.rate_per_s, w.rate_per_min)?), None)),
            "periodic" => {
                let p = w
                    .period_s
                    .ok_or_else(|| self.err(&format!("{f}.period_s"), "missing: expected the period in seconds"))?;
                self.duration(&format!("{f}.period_s"), p, 1.0)?;
                Ok((None, Some(p)))
            }
            other => {
                Err(self.err(&format!("{f}.arrival"), format!("expected \"poisson\" or \"periodic\", got {other:?}")))
            }
        }
    }

    /// A Poisson workload's arrival rate per second, from exactly one of `rate_per_s` and
    /// `rate_per_min`.
    fn poisson_rate(&self, f: &str, per_s: Option<f64>, per_min: Option<f64>) -> Result<f64, ScenarioError> {
        match (per_s, per_min) {
            (Some(r), None) => self.positive(&format!("{f}.rate_per_s"), r),
            (None, Some(r)) => Ok(self.positive(&format!("{f}.rate_per_min"), r)? / 60.0),
            (Some(_), Some(_)) => Err(self.err(f, "give either rate_per_s or rate_per_min, not both")),
            (None, None) => {
                Err(self.err(&format!("{f}.rate_per_s"), "missing: expected arrivals per second (or rate_per_min)"))
            }
        }
    }

    /// A process's `start_s` (default 0) and `stop_s` (default: the end of the simulation, or
    /// the start if that is later), checked: times, and the stop not before the start.
    fn start_stop(
        &self,
        f: &str,
        start: Option<f64>,
        stop: Option<f64>,
        duration: f64,
    ) -> Result<(f64, f64), ScenarioError> {
        let start = start.unwrap_or(0.0);
        self.time(&format!("{f}.start_s"), start, 1.0)?;
        let stop = stop.unwrap_or(duration.max(start));
        self.time(&format!("{f}.stop_s"), stop, 1.0)?;
        if stop < start {
            return Err(self.err(&format!("{f}.stop_s"), format!("expected a time >= start_s ({start}), got {stop}")));
        }
        Ok((start, stop))
    }
}

/// Flow `k` of workload `w`: starting at `start_s`, stopping at `stop_s`, of `size` bytes (none:
/// unlimited); the rest is the workload's settings or the flows' defaults.
fn workload_flow(w: &WorkloadSpec, k: usize, start_s: f64, stop_s: Option<f64>, size: Option<u64>) -> FlowSpec {
    FlowSpec {
        name: format!("{}-{k}", w.name),
        path: w.path.clone(),
        paths: w.paths.clone(),
        backup: None,
        scheduler: w.scheduler.clone(),
        scheduler_params: w.scheduler_params.clone(),
        decision_interval_ms: None,
        decision_every_min_rtt: None,
        start_s: Some(start_s),
        stop_s,
        size_bytes: size,
        cc: w.cc.clone(),
        cc_params: w.cc_params.clone(),
        mss: None,
        init_cwnd: None,
        min_rto_ms: None,
        delayed_ack: None,
        delayed_ack_ms: None,
        rcv_buf_bytes: w.rcv_buf_bytes,
        abc: None,
        app_rate_mbps: None,
        chunk_bytes: None,
        chunk_period_ms: None,
        repeat: None,
        repeat_gap_s: None,
    }
}

/// A handoff process's checked numbers.
struct HandoffNumbers {
    rate: f64,
    bounds: (f64, f64),
    start: f64,
    stop: f64,
    outage: f64,
    max: usize,
}

/// The schedule entries of one link for handoffs at `times` (start, duration): the handoff's
/// rate/delay/loss at its start (loss on the forward direction only), an outage centred in it,
/// and the link's own values back at its end.
fn handoff_changes(
    link: &LinkSpec,
    h: &HandoffSpec,
    times: &[(f64, f64)],
    outage: f64,
    forward: bool,
) -> Vec<ChangeSpec> {
    let ns = |t: f64| (t * 1e9).round() / 1e9;
    let loss = if forward { h.loss.clone() } else { None };
    let base_loss = loss.as_ref().map(|_| link.loss.clone().unwrap_or(LossSpec::None));
    let change = |at_s: f64, outage: Option<bool>| ChangeSpec {
        at_s: ns(at_s),
        rate_mbps: None,
        delay_ms: None,
        loss: None,
        outage,
    };
    let mut added = Vec::new();
    for &(t, d) in times {
        added.push(ChangeSpec { rate_mbps: h.rate_mbps, delay_ms: h.delay_ms, loss: loss.clone(), ..change(t, None) });
        if outage > 0.0 {
            added.push(change(t + (d - outage) / 2.0, Some(true)));
            added.push(change(t + (d + outage) / 2.0, Some(false)));
        }
        added.push(ChangeSpec {
            rate_mbps: h.rate_mbps.and(link.rate_mbps),
            delay_ms: h.delay_ms.map(|_| link.delay_ms.unwrap_or(0.0)),
            loss: base_loss.clone(),
            ..change(t + d, None)
        });
    }
    added
}

/// Merges `added` into the link's schedule by time; an entry already there comes before a new
/// one at the same time.
fn merge_schedule(link: &mut LinkSpec, added: Vec<ChangeSpec>) {
    let mut merged = Vec::with_capacity(link.schedule.len() + added.len());
    let mut old = std::mem::take(&mut link.schedule).into_iter().peekable();
    for c in added {
        while old.peek().is_some_and(|o| o.at_s <= c.at_s) {
            merged.push(old.next().unwrap());
        }
        merged.push(c);
    }
    merged.extend(old);
    link.schedule = merged;
}
