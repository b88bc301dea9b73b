//! `mpsched bench`: fixed scenarios timed with the wall clock (outside the simulation itself).

use crate::digest::{fnv1a, FNV_OFFSET};
use crate::scenario::Scenario;
use crate::sim::{RunOutput, RunStats, Sim};

/// (name, description, scenario TOML)
pub const BENCHES: &[(&str, &str, &str)] = &[
    (
        "newreno-10m",
        "one NewReno bulk flow, 10 Mbps, 25 ms one-way, 0.1% loss, 60 s",
        r#"
[sim]
duration_s = 60
[[paths]]
name = "p"
rate_mbps = 10
delay_ms = 25
loss = { model = "bernoulli", p = 0.001 }
[[flows]]
name = "bulk"
path = "p"
cc = "newreno"
"#,
    ),
    (
        "cubic-100m",
        "one CUBIC bulk flow, 100 Mbps, 50 ms one-way, 0.01% loss, 60 s",
        r#"
[sim]
duration_s = 60
[[paths]]
name = "p"
rate_mbps = 100
delay_ms = 50
loss = { model = "bernoulli", p = 0.0001 }
[[flows]]
name = "bulk"
path = "p"
cc = "cubic"
"#,
    ),
    (
        "edar-handoff",
        "EdAR Table III: 2-path MPTCP (minRTT), 10 Mbps 25/50 ms, handoffs on path 2, 100 s",
        include_str!("../../../scenarios/edar-handoff.toml"),
    ),
    (
        "mptcp-lia-4flows",
        "4 two-path LIA connections + 2 TCP flows over two shared 50 Mbps bottlenecks, 60 s",
        r#"
[sim]
duration_s = 60
[[paths]]
name = "wifi"
rate_mbps = 50
delay_ms = 15
[[paths]]
name = "lte"
rate_mbps = 50
delay_ms = 40
loss = { model = "bernoulli", p = 0.0005 }
[[flows]]
name = "c1"
paths = ["wifi", "lte"]
cc = "lia"
[[flows]]
name = "c2"
paths = ["wifi", "lte"]
cc = "lia"
start_s = 1
[[flows]]
name = "c3"
paths = ["wifi", "lte"]
cc = "lia"
start_s = 2
[[flows]]
name = "c4"
paths = ["lte", "wifi"]
cc = "lia"
start_s = 3
[[flows]]
name = "tcp-wifi"
path = "wifi"
cc = "cubic"
[[flows]]
name = "tcp-lte"
path = "lte"
cc = "cubic"
"#,
    ),
    (
        "lia-2path",
        "one two-path LIA connection (the profile's default scheduler), 10 Mbps 25 ms + 10 Mbps 50 ms, no loss, 100 s",
        r#"
[sim]
duration_s = 100
[[paths]]
name = "p1"
rate_mbps = 10
delay_ms = 25
[[paths]]
name = "p2"
rate_mbps = 10
delay_ms = 50
[[flows]]
name = "mptcp"
paths = ["p1", "p2"]
cc = "lia"
"#,
    ),
    (
        "subflows-1",
        "one LIA connection with 1 subflow, 10 Mbps 25 ms, no loss, 30 s (baseline of subflows-8)",
        r#"
[sim]
duration_s = 30
[[paths]]
name = "p1"
rate_mbps = 10
delay_ms = 25
[[flows]]
name = "mptcp"
paths = ["p1"]
cc = "lia"
"#,
    ),
    ("subflows-8", "one LIA connection with 8 subflows over 8 paths of 10 Mbps 25 ms, no loss, 30 s", SUBFLOWS_8),
    (
        "flows-1",
        "one NewReno flow on a 100 Mbps 25 ms bottleneck, 20 s (baseline of flows-1000)",
        r#"
[sim]
duration_s = 20
[[paths]]
name = "p"
rate_mbps = 100
delay_ms = 25
[[workloads]]
name = "bulk"
path = "p"
cc = "newreno"
arrival = "periodic"
period_s = 0.001
max_flows = 1
size = { dist = "fixed", bytes = 1000000000000 }
"#,
    ),
    (
        "flows-1000",
        "1,000 NewReno flows (starting 1 ms apart) sharing a 100 Mbps 25 ms bottleneck, 20 s",
        r#"
[sim]
duration_s = 20
[[paths]]
name = "p"
rate_mbps = 100
delay_ms = 25
[[workloads]]
name = "bulk"
path = "p"
cc = "newreno"
arrival = "periodic"
period_s = 0.001
max_flows = 1000
size = { dist = "fixed", bytes = 1000000000000 }
"#,
    ),
];

/// `subflows-8`: eight identical 10 Mbps / 25 ms paths, one subflow on each.
const SUBFLOWS_8: &str = r#"
[sim]
duration_s = 30
[[paths]]
name = "p1"
rate_mbps = 10
delay_ms = 25
[[paths]]
name = "p2"
rate_mbps = 10
delay_ms = 25
[[paths]]
name = "p3"
rate_mbps = 10
delay_ms = 25
[[paths]]
name = "p4"
rate_mbps = 10
delay_ms = 25
[[paths]]
name = "p5"
rate_mbps = 10
delay_ms = 25
[[paths]]
name = "p6"
rate_mbps = 10
delay_ms = 25
[[paths]]
name = "p7"
rate_mbps = 10
delay_ms = 25
[[paths]]
name = "p8"
rate_mbps = 10
delay_ms = 25
[[flows]]
name = "mptcp"
paths = ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"]
cc = "lia"
"#;

/// Result of timing one bench scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchResult {
    /// Bench scenario name.
    pub name: String,
    /// What the scenario exercises.
    pub description: String,
    /// Simulated time (s).
    pub sim_seconds: f64,
    /// Wall-clock time of the run (s).
    pub wall_seconds: f64,
    /// Events processed.
    pub events: u64,
    /// Packets created.
    pub packets: u64,
}

impl BenchResult {
    /// Simulated seconds per wall-clock second.
    pub fn realtime_factor(&self) -> f64 {
        self.sim_seconds / self.wall_seconds
    }
    /// Events processed per wall-clock second.
    pub fn events_per_s(&self) -> f64 {
        self.events as f64 / self.wall_seconds
    }
    /// Packets created per wall-clock second.
    pub fn packets_per_s(&self) -> f64 {
        self.packets as f64 / self.wall_seconds
    }
    /// Wall-clock nanoseconds per event.
    pub fn ns_per_event(&self) -> f64 {
        self.wall_seconds * 1e9 / self.events as f64
    }
}

/// Names of the bench scenarios, in order.
pub fn names() -> Vec<&'static str> {
    BENCHES.iter().map(|b| b.0).collect()
}

/// Bench `name`'s description and scenario TOML: a built-in one ([`BENCHES`]), or `flows-N` for
/// any N from 1 to 100,000: `flows-1000`'s scenario with N flows (the scaling curve of
/// BENCHMARKS.md, "where the 1,000-flow cost comes from"). `None` for any other name.
pub fn lookup(name: &str) -> Option<(String, std::borrow::Cow<'static, str>)> {
    if let Some(&(_, desc, text)) = BENCHES.iter().find(|b| b.0 == name) {
        return Some((desc.to_owned(), text.into()));
    }
    let n: u32 = name.strip_prefix("flows-")?.parse().ok().filter(|n| (1..=100_000).contains(n))?;
    // Canonical digits only: `flows-+5` and `flows-05` are not names of `flows-5`.
    if name != format!("flows-{n}") {
        return None;
    }
    let &(_, _, text) = BENCHES.iter().find(|b| b.0 == "flows-1000")?;
    let desc = format!("{n} NewReno flows (starting 1 ms apart) sharing a 100 Mbps 25 ms bottleneck, 20 s");
    Some((desc, text.replace("max_flows = 1000", &format!("max_flows = {n}")).into()))
}

/// Cost of pausing at decision points, measured in one run against the built-in equivalent.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionOverhead {
    /// Decision points in the run.
    pub decisions: u64,
    /// Wall time with the built-in scheduler deciding inline (s).
    pub wall_builtin: f64,
    /// Wall time pausing at every decision point (s).
    pub wall_paused: f64,
}

impl DecisionOverhead {
    /// Extra wall time per decision point, in ns (pause, return, answer, re-drive).
    pub fn ns_per_decision(&self) -> f64 {
        (self.wall_paused - self.wall_builtin).max(0.0) * 1e9 / self.decisions.max(1) as f64
    }
}

/// Runs the EdAR handoff scenario with the built-in `minrtt-norp` and with `external-packet`
/// (one pause per segment, answered "default", which takes the same path), fastest of
/// `repeats` each, interleaved so both see the same machine load.
pub fn decision_overhead(repeats: u32) -> DecisionOverhead {
    let text = BENCHES.iter().find(|b| b.0 == "edar-handoff").unwrap().2;
    let builtin =
        Scenario::from_toml(&text.replace("scheduler = \"minrtt\"", "scheduler = \"minrtt-norp\""), "bench").unwrap();
    let paused =
        Scenario::from_toml(&text.replace("scheduler = \"minrtt\"", "scheduler = \"external-packet\""), "bench")
            .unwrap();
    let (mut best_b, mut best_p, mut decisions) = (f64::MAX, f64::MAX, 0);
    for _ in 0..repeats.max(1) {
        let mut sim = Sim::new(builtin.clone());
        let t0 = std::time::Instant::now();
        sim.run();
        best_b = best_b.min(t0.elapsed().as_secs_f64());

        let mut sim = Sim::new(paused.clone());
        let mut n = 0;
        let t0 = std::time::Instant::now();
        loop {
            match sim.advance(u64::MAX) {
                crate::Stop::Decision { flow } => {
                    n += 1;
                    sim.decide(flow as usize, crate::Decision::Path(None));
                }
                crate::Stop::Interval { .. } => {}
                crate::Stop::Deadline | crate::Stop::Finished => break,
            }
        }
        best_p = best_p.min(t0.elapsed().as_secs_f64());
        decisions = n;
    }
    DecisionOverhead { decisions, wall_builtin: best_b, wall_paused: best_p }
}

/// Runs bench `name` `repeats` times and keeps the fastest run (least disturbed by other load).
pub fn run_bench(name: &str, repeats: u32) -> Option<BenchResult> {
    let (desc, text) = lookup(name)?;
    let sc = Scenario::from_toml(&text, name).expect("bench scenarios are valid");
    let mut best: Option<BenchResult> = None;
    for _ in 0..repeats.max(1) {
        let mut sim = Sim::new(sc.clone());
        let t0 = std::time::Instant::now();
        let st = sim.run();
        let wall = t0.elapsed().as_secs_f64();
        let r = BenchResult {
            name: name.into(),
            description: desc.clone(),
            sim_seconds: st.sim_ns as f64 * 1e-9,
            wall_seconds: wall,
            events: st.events,
            packets: st.packets,
        };
        if best.as_ref().is_none_or(|b| r.wall_seconds < b.wall_seconds) {
            best = Some(r);
        }
    }
    best
}

/// Counters of one run of a bench scenario, for instruction counting (`bench/instructions.sh`).
#[derive(Clone, Debug, PartialEq)]
pub struct CountedRun {
    /// Events processed.
    pub events: u64,
    /// Packets created (data, ACKs, retransmissions).
    pub packets: u64,
    /// Data packets delivered: bytes delivered in order to the receiving applications, in MSS
    /// units (summed over flows; what a run's goodput is worth in full-sized packets).
    pub delivered: u64,
    /// 64-bit FNV-1a over the summary JSON and every output table, to check that a change
    /// leaves the outputs byte-identical.
    pub digest: u64,
}

/// The measured part of a counted run: only the event loop. Never inlined, so that callgrind
/// can collect inside it alone (`--toggle-collect=*bench::event_loop*`).
#[inline(never)]
pub fn event_loop(sim: &mut Sim) -> RunStats {
    sim.run()
}

/// [`event_loop`] with the packet trace of every flow on, its rows taken (and dropped) every
/// 100 ms of simulated time as `mpsched run --trace-packets` takes them.
pub fn event_loop_traced(sim: &mut Sim) -> RunStats {
    sim.trace_packets(vec![true; sim.scenario().flows.len()]);
    while !sim.run_until(sim.now_ns() + 100_000_000) {
        std::hint::black_box(sim.take_packets());
    }
    std::hint::black_box(sim.take_packets());
    sim.stats()
}

/// Runs bench `name` once through [`event_loop`] and returns its counters.
pub fn counted_run(name: &str) -> Option<CountedRun> {
    counted_run_traced(name, false)
}

/// [`counted_run`], through [`event_loop_traced`] when `trace` is true.
pub fn counted_run_traced(name: &str, trace: bool) -> Option<CountedRun> {
    let (_, text) = lookup(name)?;
    let sc = Scenario::from_toml(&text, name).expect("bench scenarios are valid");
    let mut sim = Sim::new(sc);
    let st = if trace { event_loop_traced(&mut sim) } else { event_loop(&mut sim) };
    let delivered = (0..sim.scenario().flows.len())
        // Full segments' worth of payload: a multipath segment carries the DSS option's bytes less.
        .map(|f| sim.receiver(f).map_or(0, |c| c.info().bytes_delivered / u64::from(c.mss().max(1))))
        .sum();
    let out = sim.output();
    Some(CountedRun { events: st.events, packets: st.packets, delivered, digest: output_digest(&out) })
}

/// 64-bit FNV-1a over a run's summary JSON and tables (every value in its exact `Debug` form).
pub fn output_digest(out: &RunOutput) -> u64 {
    let mut h = fnv1a(FNV_OFFSET, out.summary_json.as_bytes());
    for t in [&out.flows, &out.subflows, &out.timeseries, &out.links] {
        for (name, col) in &t.columns {
            h = fnv1a(h, format!("{name}={col:?};").as_bytes());
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bench_scenario_parses() {
        for (name, _, text) in BENCHES {
            Scenario::from_toml(text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    /// `flows-N` is `flows-1000`'s scenario with N flows; the built-in `flows-1` is its N = 1;
    /// other names, N = 0 and N above 100,000 are unknown.
    #[test]
    fn flows_n_is_the_thousand_flow_scenario_with_n_flows() {
        let text = |n: &str| lookup(n).map(|b| b.1.into_owned());
        let sc = Scenario::from_toml(&text("flows-7").unwrap(), "flows-7").unwrap();
        let flows = |sc: &Scenario| sc.flows.len();
        assert_eq!(flows(&sc), 7);
        let thousand = Scenario::from_toml(&text("flows-1000").unwrap(), "flows-1000").unwrap();
        assert_eq!(flows(&thousand), 1000);
        assert_eq!(text("flows-1000").unwrap().replace("max_flows = 1000", "max_flows = 7"), text("flows-7").unwrap());
        assert_eq!(text("flows-1").unwrap(), BENCHES.iter().find(|b| b.0 == "flows-1").unwrap().2);
        assert!(lookup("flows-7").unwrap().0.starts_with("7 NewReno flows"));
        for bad in ["flows-0", "flows-100001", "flows-x", "flows-", "flows--3", "flows-+5", "flows-05", "nope"] {
            assert!(lookup(bad).is_none(), "{bad}");
        }
        assert!(lookup("flows-100000").is_some());
    }

    /// The counted run is an ordinary run: same counters and outputs as `crate::run`.
    #[test]
    fn counted_run_matches_a_plain_run() {
        let text = BENCHES.iter().find(|b| b.0 == "subflows-1").unwrap().2;
        let out = crate::run(Scenario::from_toml(text, "subflows-1").unwrap());
        let c = counted_run("subflows-1").unwrap();
        assert_eq!((c.events, c.packets, c.digest), (out.stats.events, out.stats.packets, output_digest(&out)));
        assert!(c.delivered > 0 && c.delivered < c.packets);
    }
}
