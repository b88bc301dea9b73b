//! Scenario files (TOML, or JSON from the Python API): parsing, validation, defaults.
//!
//! Every error is one line: `<source>: <field or line>: <what was expected>`.
//!
//! - [`file`]: the serde types of the file form;
//! - `parse`: text into the file form (parameter ranges drawn), errors naming line and field;
//! - `resolve`: validation and defaults into the resolved [`Scenario`];
//! - `expand`: handoff and workload processes expanded into schedules and flows.

mod expand;
mod file;
mod flows;
mod offset;
mod parse;
mod resolve;
mod udp;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mpsched_transport::{CcSpec, SchedSpec, SubflowConfig};

pub use self::file::*;
pub use self::udp::{DEFAULT_PROBE_INTERVAL_MS, DEFAULT_PROBE_PACKET, DEFAULT_UDP_PACKET};
use crate::energy::EnergyParams;
pub use crate::link::LossSpec;
use crate::link::{LinkChange, LossModel, Trace};
use crate::Format;
use resolve::Resolver;

/// A bad scenario, trace or argument. `Display` is a single line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError(pub String);

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ScenarioError {}

/// What a path event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathEventKind {
    /// The path goes down.
    Down,
    /// The path comes back.
    Up,
    /// The path becomes backup only.
    Backup,
    /// The path becomes active again.
    Active,
}

/// A resolved path event.
#[derive(Debug, Clone)]
pub struct PathEvent {
    /// When, ns.
    pub at_ns: u64,
    /// The path (index into `Scenario::paths`).
    pub path: u16,
    /// What happens.
    pub kind: PathEventKind,
}

/// How the sending application produces data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum App {
    /// Everything at once (bulk, or `size_bytes`).
    Greedy,
    /// Constant bit rate, in bit/s.
    Cbr {
        /// The rate, bit/s.
        rate_bps: u64,
    },
    /// `bytes` every `period_ns`.
    Chunks {
        /// Bytes per chunk.
        bytes: u64,
        /// Period, ns.
        period_ns: u64,
    },
}

/// The stack whose defaults a scenario uses (`[sim].profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Linux (CUBIC, per-byte window growth, 200 ms minimum RTO...).
    Linux,
    /// ns-3 (NewReno, per-ACK growth...).
    Ns3,
}

impl Profile {
    /// Its name in files and results.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Linux => "linux",
            Profile::Ns3 => "ns3",
        }
    }
    /// Its subflow settings.
    pub fn subflow_defaults(self) -> SubflowConfig {
        match self {
            Profile::Linux => SubflowConfig::linux(),
            Profile::Ns3 => SubflowConfig::ns3(),
        }
    }
    /// Its default multipath scheduler: the upstream kernel's for `linux`
    /// (net/mptcp/protocol.c `mptcp_subflow_get_send`), minRTT for `ns3` (the papers built on
    /// ns-3 use the out-of-tree kernel's minRTT).
    pub fn default_scheduler(self) -> &'static str {
        match self {
            Profile::Linux => "upstream",
            Profile::Ns3 => "minrtt",
        }
    }
    /// Its default congestion control.
    pub fn default_cc(self) -> &'static str {
        match self {
            Profile::Linux => "cubic",
            Profile::Ns3 => "newreno",
        }
    }
}

/// Shortest duration of anything that repeats or times out (sample and decision intervals,
/// chunk periods, timers, trace dwell times, arrival periods), s: 1 µs. Shorter ones give
/// billions of events per simulated second (a run that never finishes).
pub const MIN_DURATION_S: f64 = 1e-6;

/// Largest seed (`[sim].seed`, a synthetic trace's `seed`, a derived trace seed): 2^63 − 1,
/// TOML's largest integer, so every seed a run records can be read back from its `scenario.toml`.
pub const MAX_SEED: u64 = i64::MAX as u64;
/// Shortest timeseries sample interval, ms: samples are kept in memory (one row per flow and
/// subflow), and sampling every 1 µs took 834 MB per simulated second of a single flow.
pub const MIN_SAMPLE_MS: f64 = 1.0;
/// Latest time and longest duration or delay, s (about 31.7 years): times are integer
/// nanoseconds, and a few of them added stay far below u64's 584 years.
pub const MAX_TIME_S: f64 = 1e9;
/// Highest link or application rate, Mbit/s (10 Tbit/s).
pub const MAX_RATE_MBPS: f64 = 1e7;
/// Lowest link or application rate, Mbit/s (1 bit/s): rates are integer bit/s, and a smaller
/// one would round to 0.
pub const MIN_RATE_MBPS: f64 = 1e-6;

/// Most flows a scenario may hold, workloads' included (and the default cap of a workload):
/// each holds a connection, and 100,000 of them take about 3 GB.
pub const MAX_FLOWS: usize = 100_000;
/// Highest `max_handoffs` of a handoff process (default 10,000); each handoff adds up to four
/// schedule changes to every link of its path.
pub const MAX_HANDOFFS: usize = 100_000;

/// Default receive buffer: Linux's tcp_rmem maximum (6 MB).
pub const DEFAULT_RCV_BUF: u64 = 6 * 1024 * 1024;
/// Default drop-tail queue of trace-driven links (mahimahi's is unbounded; 150 packets is common).
pub const DEFAULT_TRACE_QUEUE: u64 = 150 * 1500;
/// Largest `queue_packets`: a billion packets (1.5 TB of 1500-byte packets), beyond any
/// memory; for no limit, `queue_bytes = "unlimited"`.
pub const MAX_QUEUE_PACKETS: u64 = 1_000_000_000;
/// Largest `jitter_ms`: 1 s, in ns.
pub const MAX_JITTER_NS: u64 = 1_000_000_000;
/// Smallest default queue: two full packets.
pub const MIN_DEFAULT_QUEUE: u64 = 2 * 1500;

/// A resolved link.
#[derive(Debug, Clone)]
pub struct LinkDef {
    /// Its name (unique among its kind).
    pub name: String,
    /// Rate, bit/s.
    pub rate_bps: u64,
    /// Propagation delay, ns.
    pub delay_ns: u64,
    /// Drop-tail queue, bytes (default one bandwidth-delay product; `u64::MAX`: unlimited).
    pub queue_bytes: u64,
    /// Drop-tail queue, packets (`u64::MAX`: no packet limit).
    pub queue_packets: u64,
    /// Random loss model.
    pub loss: LossModel,
    /// Per-packet delay variation, ns (0: none; see `link::Jitter`).
    pub jitter_ns: u64,
    /// Rate from a mahimahi trace instead of `rate_mbps` (already shifted by the offset).
    pub trace: Option<Arc<Trace>>,
    /// Where the trace starts, s (`trace_offset_s`, the value drawn for `"random"`).
    pub trace_offset_s: Option<f64>,
    /// Scheduled changes, by time.
    pub changes: Vec<LinkChange>,
}

/// A resolved path: forward and reverse link ids.
#[derive(Debug, Clone)]
pub struct PathDef {
    /// Its name (unique among its kind).
    pub name: String,
    /// Forward link ids.
    pub fwd: Vec<u32>,
    /// Reverse link ids.
    pub rev: Vec<u32>,
    /// Power model of the device's interface on this path, if energy is accounted.
    pub energy: Option<EnergyParams>,
}

/// When a flow pauses for per-interval decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionInterval {
    /// No loss (or: no decision points).
    None,
    /// Fixed period in ns.
    Fixed(u64),
    /// The minimum smoothed RTT over the flow's subflows, recomputed at each boundary.
    MinRtt,
}

/// A resolved flow.
#[derive(Debug, Clone)]
pub struct FlowDef {
    /// Its name (unique among its kind).
    pub name: String,
    /// Global path ids, one subflow each.
    pub paths: Vec<u16>,
    /// Per path: backup only.
    pub backup: Vec<bool>,
    /// The packet scheduler with its parameters (its label is what outputs record).
    pub scheduler: SchedSpec,
    /// Decision points.
    pub decision: DecisionInterval,
    /// The sending application.
    pub app: App,
    /// Transfers of `size` bytes, one after the other on fresh connections.
    pub repeat: u32,
    /// Pause between transfers, ns.
    pub repeat_gap_ns: u64,
    /// Start, ns.
    pub start_ns: u64,
    /// Stop, ns: the application stops and both connections are dropped (none: never).
    pub stop_ns: Option<u64>,
    /// Bytes per transfer (none: unlimited).
    pub size: Option<u64>,
    /// The congestion controller with its parameters.
    pub cc: CcSpec,
    /// TCP settings of every subflow.
    pub subflow: SubflowConfig,
    /// Receive buffer, bytes.
    pub rcv_buf: u64,
}

/// What a `[[udp]]` flow sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpKind {
    /// One packet every `8 × packet_bytes / rate` seconds (packet `k` at
    /// `start + ⌊k × 8 × packet_bytes × 10^9 / rate⌋` ns, so the rate does not drift).
    Cbr,
    /// A CBR source while on; on and off periods alternate, the first on period at the start.
    OnOff {
        /// On period, ns (its mean when `exponential`).
        on_ns: u64,
        /// Off period, ns (its mean when `exponential`).
        off_ns: u64,
        /// Periods drawn from an exponential distribution (the flow's own stream).
        exponential: bool,
    },
    /// One packet every `interval_ns`, echoed back over the path's reverse links.
    Probe {
        /// Time between probes, ns.
        interval_ns: u64,
    },
}

impl UdpKind {
    /// Its name in files and results.
    pub fn name(self) -> &'static str {
        match self {
            UdpKind::Cbr => "cbr",
            UdpKind::OnOff { .. } => "onoff",
            UdpKind::Probe { .. } => "probe",
        }
    }
}

/// A resolved `[[udp]]` flow: no congestion control, no connection, one path.
#[derive(Debug, Clone)]
pub struct UdpFlowDef {
    /// Its name (unique among flows and UDP flows).
    pub name: String,
    /// What it sends.
    pub kind: UdpKind,
    /// The path: packets take its forward links, a probe's echo its reverse links.
    pub path: u16,
    /// Sending rate, bit/s (while on; 0 for a probe).
    pub rate_bps: u64,
    /// Wire size of every packet, bytes.
    pub packet_bytes: u32,
    /// Start, ns.
    pub start_ns: u64,
    /// Stop, ns: no packet is sent from then on (none: the end of the run).
    pub stop_ns: Option<u64>,
}

/// A validated scenario with every default filled in: what the simulator runs.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its name (unique among its kind).
    pub name: String,
    /// Seed of every random stream.
    pub seed: u64,
    /// Simulated time, ns.
    pub duration_ns: u64,
    /// Sample interval, ns.
    pub sample_ns: u64,
    /// `"linux"` (default) or `"ns3"` defaults.
    pub profile: Profile,
    /// Stop once every sized flow completed.
    pub stop_when_done: bool,
    /// Explicit links (path shortcuts add theirs here).
    pub links: Vec<LinkDef>,
    /// Network paths.
    pub paths: Vec<PathDef>,
    /// Flows (workloads add theirs here).
    pub flows: Vec<FlowDef>,
    /// Path events.
    pub events: Vec<PathEvent>,
    /// Flows without congestion control (`[[udp]]`).
    pub udp: Vec<UdpFlowDef>,
    /// The scenario with every default written out (saved next to results).
    pub resolved: ScenarioFile,
    /// Fields given but ignored (a rate beside a trace), one line each in the form of the
    /// errors (`s.toml: links[0].rate_mbps: ignored: ...`); the run's summary lists them.
    pub warnings: Vec<String>,
}

impl Scenario {
    /// Parses TOML text. `source` names the file in errors and anchors relative trace paths.
    pub fn from_toml(text: &str, source: &str) -> Result<Scenario, ScenarioError> {
        Self::parse(text, source, Format::Toml, None)
    }

    /// Parses JSON text (the Python API passes dicts this way).
    pub fn from_json(text: &str, source: &str) -> Result<Scenario, ScenarioError> {
        Self::parse(text, source, Format::Json, None)
    }

    /// Parses a scenario; `seed` overrides `[sim].seed` before anything random is drawn
    /// (parameter ranges, workloads, handoffs, synthetic traces all follow it).
    pub fn parse(text: &str, source: &str, fmt: Format, seed: Option<u64>) -> Result<Scenario, ScenarioError> {
        let mut file = parse::parse_file(text, source, fmt, seed)?;
        // A seed written in the file must fit TOML's integers (so the resolved copy reads back);
        // a caller's override may be any u64 (the envs derive 64-bit episode seeds).
        if let Some(s) = file.sim.seed.filter(|&s| s > MAX_SEED) {
            return Err(ScenarioError(format!(
                "{source}: sim.seed: expected an integer in [0, 2^63 - 1] (TOML's integer range), got {s}"
            )));
        }
        if let Some(s) = seed {
            file.sim.seed = Some(s);
        }
        Self::from_file(file, source)
    }

    /// Checks only the syntax of TOML or JSON `text` (one-line error with the line), within the
    /// parsers' nesting limits: what a caller asks before handing the text to another parser.
    pub fn check_syntax(text: &str, source: &str, fmt: Format) -> Result<(), ScenarioError> {
        parse::check_syntax(text, source, fmt)
    }

    /// Validates a deserialized file; `source` names it in errors and anchors relative paths.
    pub fn from_file(file: ScenarioFile, source: &str) -> Result<Scenario, ScenarioError> {
        Resolver {
            source,
            base_dir: base_dir(source),
            traces: BTreeMap::new(),
            seed: 1,
            shortcuts: BTreeMap::new(),
            warnings: Vec::new(),
        }
        .resolve(file)
    }

    /// Overrides the seed of the simulation's own streams (loss, ...) only: what was drawn when
    /// the scenario was resolved (ranges, workloads, handoffs, synthetic traces) stays. Prefer
    /// [`Scenario::parse`] with a seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self.resolved.sim.seed = Some(seed);
        self
    }

    /// The resolved scenario as TOML (every default written out): the run's `scenario.toml`.
    pub fn resolved_toml(&self) -> String {
        toml::to_string(&self.resolved).expect("resolved scenario serializes")
    }
}

fn base_dir(source: &str) -> PathBuf {
    if source.starts_with('<') {
        return PathBuf::from(".");
    }
    Path::new(source).parent().map(|p| p.to_path_buf()).unwrap_or_else(|| PathBuf::from("."))
}

fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

/// Largest timestamp of a trace, ms: 1e9 s, the bound of every other time of a scenario. A
/// link's opportunity times are `(lap × period + t) × 10^6` ns, which stays below 2^64 while
/// the run's time and the period are below it (found by fuzzing: 1e15 ms overflowed).
pub const MAX_TRACE_MS: u64 = 1_000_000_000_000;

/// Parses a mahimahi trace: one non-negative integer (ms) per line, at most [`MAX_TRACE_MS`],
/// non-decreasing, last > 0.
pub fn parse_trace(text: &str, source: &str) -> Result<Trace, ScenarioError> {
    let mut times = Vec::new();
    let mut prev = 0u64;
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        let t: u64 = l.parse().map_err(|_| {
            ScenarioError(format!(
                "{source}: line {}: expected a non-negative integer millisecond timestamp, got {l:?}",
                i + 1
            ))
        })?;
        if t > MAX_TRACE_MS {
            return Err(ScenarioError(format!(
                "{source}: line {}: expected a timestamp of at most {MAX_TRACE_MS} ms (1e9 s), got {t}",
                i + 1
            )));
        }
        if t < prev {
            return Err(ScenarioError(format!(
                "{source}: line {}: timestamps must not decrease ({t} after {prev})",
                i + 1
            )));
        }
        prev = t;
        times.push(t);
    }
    match times.last() {
        None => Err(ScenarioError(format!("{source}: line 1: expected at least one timestamp, the file is empty"))),
        Some(0) => Err(ScenarioError(format!(
            "{source}: line {}: the last timestamp must be > 0 (it is the loop period)",
            times.len()
        ))),
        Some(_) => Ok(Trace::new(times)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
[sim]
duration_s = 10
[[paths]]
name = "p"
rate_mbps = 10
delay_ms = 25
[[flows]]
name = "f"
path = "p"
"#;

    #[test]
    fn shortcut_path_defaults_to_one_bdp_queue() {
        let s = Scenario::from_toml(OK, "x.toml").unwrap();
        assert_eq!(s.links.len(), 2);
        // 10 Mbit/s * 50 ms = 62,500 bytes.
        assert_eq!(s.links[0].queue_bytes, 62_500);
        assert_eq!(s.flows[0].cc.label(), "cubic");
        assert_eq!(s.name, "x");
        // The resolved copy parses back to the same scenario.
        let again = Scenario::from_toml(&s.resolved_toml(), "y.toml").unwrap();
        assert_eq!(again.resolved_toml(), s.resolved_toml());
    }

    fn err(text: &str) -> String {
        Scenario::from_toml(text, "s.toml").unwrap_err().0
    }

    #[test]
    fn errors_are_one_line_and_name_the_field() {
        let e = err(&OK.replace("rate_mbps = 10", "rate_mbps = -5"));
        assert_eq!(e, "s.toml: paths[0].rate_mbps: expected a positive number, got -5");
        let e = err(&OK.replace("delay_ms = 25", "delay_ms = 25\nbogus = 1"));
        assert!(e.starts_with("s.toml: line 8: unknown field `bogus`"), "{e}");
        let e = err("[sim\nduration_s = 1");
        assert!(e.starts_with("s.toml: line 1:"), "{e}");
        let e = err(&OK.replace("duration_s = 10", ""));
        assert!(e.contains("missing field `duration_s`"), "{e}");
        let e = err(&OK.replace("path = \"p\"", "path = \"q\""));
        assert_eq!(e, "s.toml: flows[0].path: unknown path \"q\"");
        let e = err(&OK.replace("delay_ms = 25", "delay_ms = 25\ntrace = \"/nonexistent/t.down\""));
        assert!(e.starts_with("s.toml: paths[0].trace: cannot read trace file /nonexistent/t.down"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn trace_validation() {
        assert_eq!(parse_trace("0\n1\n1\n5\n", "t").unwrap().times_ms, vec![0, 1, 1, 5]);
        assert_eq!(parse_trace("3\n2\n", "t").unwrap_err().0, "t: line 2: timestamps must not decrease (2 after 3)");
        assert!(parse_trace("1\nx\n", "t").unwrap_err().0.starts_with("t: line 2: expected a non-negative integer"));
        assert!(parse_trace("", "t").is_err());
        assert!(parse_trace("0\n", "t").is_err());
        // Nanosecond times of the link stay below 2^64 (before: a 1e15 ms trace overflowed).
        assert_eq!(parse_trace("1000000000000\n", "t").unwrap().times_ms, vec![MAX_TRACE_MS]);
        let e = parse_trace("1\n1000000000001\n", "t").unwrap_err().0;
        assert_eq!(e, "t: line 2: expected a timestamp of at most 1000000000000 ms (1e9 s), got 1000000000001");
    }
}
