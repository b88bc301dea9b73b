//! Scenario files (TOML, or JSON from the Python API): parsing, validation, defaults.
//!
//! Every error is one line: `<source>: <field or line>: <what was expected>`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mpsched_transport::cc::AnyCc;
use mpsched_transport::sched::AnySched;
use mpsched_transport::{Duration, SubflowConfig};
use serde::{Deserialize, Serialize};

use crate::link::{LinkChange, LossModel, Trace};
use crate::energy::EnergyParams;
use crate::rng::Rng;
use crate::workload::{arrivals, SizeDist};

/// A bad scenario, trace or argument. `Display` is a single line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError(pub String);

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ScenarioError {}

// ------------------------------------------------------------------------------------ file form

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub sim: SimSection,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkSpec>,
    #[serde(default)]
    pub paths: Vec<PathSpec>,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Flow generators, expanded into `flows` when the scenario is resolved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadSpec>,
    /// Path (interface) events: down/up/backup at given times.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventSpec>,
}

/// Flows arriving over time with random sizes (see `workload.rs`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub name: String,
    pub path: Option<String>,
    pub paths: Option<Vec<String>>,
    pub scheduler: Option<String>,
    pub cc: Option<String>,
    pub rcv_buf_bytes: Option<u64>,
    /// "poisson" (needs rate_per_s) or "periodic" (needs period_s).
    pub arrival: String,
    pub rate_per_s: Option<f64>,
    pub period_s: Option<f64>,
    pub start_s: Option<f64>,
    /// Default: the end of the simulation.
    pub stop_s: Option<f64>,
    pub max_flows: Option<usize>,
    pub size: SizeDist,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    pub at_s: f64,
    pub path: String,
    /// "down" (interface lost: every link of the path drops all packets, connections reinject),
    /// "up", "backup" or "active" (MP_PRIO).
    pub state: String,
}

/// What a path event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathEventKind {
    Down,
    Up,
    Backup,
    Active,
}

#[derive(Debug, Clone)]
pub struct PathEvent {
    pub at_ns: u64,
    pub path: u16,
    pub kind: PathEventKind,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSection {
    pub name: Option<String>,
    pub duration_s: f64,
    pub seed: Option<u64>,
    pub sample_interval_ms: Option<f64>,
    pub profile: Option<String>,
    /// Energy model with promotion/tail/idle states (Huang et al.) instead of active power only.
    pub energy_states: Option<bool>,
    /// Stop as soon as every (sized) flow has completed (default true).
    pub stop_when_done: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LossSpec {
    None,
    Bernoulli { p: f64 },
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "one")]
        loss_bad: f64,
    },
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: String,
    pub rate_mbps: Option<f64>,
    pub delay_ms: Option<f64>,
    pub queue_bytes: Option<u64>,
    pub loss: Option<LossSpec>,
    pub trace: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<ChangeSpec>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeSpec {
    pub at_s: f64,
    pub rate_mbps: Option<f64>,
    pub delay_ms: Option<f64>,
    pub loss: Option<LossSpec>,
    pub outage: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathSpec {
    pub name: String,
    pub forward: Option<Vec<String>>,
    pub reverse: Option<Vec<String>>,
    // Shortcut: a symmetric pair of links "<name>.fwd" / "<name>.rev".
    pub rate_mbps: Option<f64>,
    pub delay_ms: Option<f64>,
    pub queue_bytes: Option<u64>,
    /// Loss on the forward (data) direction only.
    pub loss: Option<LossSpec>,
    pub trace: Option<String>,
    pub trace_reverse: Option<String>,
    /// Applied to both directions (loss changes to the forward one only).
    pub schedule: Option<Vec<ChangeSpec>>,
    /// The device's interface on this path, for energy: "wifi", "4g" (or "lte"), "3g" ...
    pub interface: Option<String>,
    /// ... or explicit power-model parameters.
    pub energy: Option<EnergyParams>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: String,
    /// A single-path TCP flow ...
    pub path: Option<String>,
    /// ... or a multipath connection with one subflow per path (the first does the handshake).
    pub paths: Option<Vec<String>>,
    /// Paths (by name, among `paths`) used as backup only.
    pub backup: Option<Vec<String>>,
    /// Packet scheduler for multipath connections (default "minrtt").
    pub scheduler: Option<String>,
    /// Pause for an outside decision every this many ms (learning environments) ...
    pub decision_interval_ms: Option<f64>,
    /// ... or every minimum subflow RTT (EdAR's transmission interval).
    pub decision_every_min_rtt: Option<bool>,
    pub start_s: Option<f64>,
    pub size_bytes: Option<u64>,
    pub cc: Option<String>,
    pub mss: Option<u32>,
    pub init_cwnd: Option<u32>,
    pub min_rto_ms: Option<f64>,
    pub delayed_ack: Option<bool>,
    pub delayed_ack_ms: Option<f64>,
    pub rcv_buf_bytes: Option<u64>,
    pub abc: Option<bool>,
    /// Application-limited: the sender's application produces data at this rate (CBR).
    pub app_rate_mbps: Option<f64>,
    /// Chunked source (video segments, bursts): `chunk_bytes` every `chunk_period_ms`.
    pub chunk_bytes: Option<u64>,
    pub chunk_period_ms: Option<f64>,
    /// Repeated downloads: the transfer of `size_bytes` runs this many times, each on a new
    /// connection, `repeat_gap_s` after the previous one completed.
    pub repeat: Option<u32>,
    pub repeat_gap_s: Option<f64>,
}

// -------------------------------------------------------------------------------- resolved form

/// How the sending application produces data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum App {
    /// Everything at once (bulk, or `size_bytes`).
    Greedy,
    /// Constant bit rate, in bit/s.
    Cbr { rate_bps: u64 },
    /// `bytes` every `period_ns`.
    Chunks { bytes: u64, period_ns: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Linux,
    Ns3,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Linux => "linux",
            Profile::Ns3 => "ns3",
        }
    }
    pub fn subflow_defaults(self) -> SubflowConfig {
        match self {
            Profile::Linux => SubflowConfig::linux(),
            Profile::Ns3 => SubflowConfig::ns3(),
        }
    }
    pub fn default_cc(self) -> &'static str {
        match self {
            Profile::Linux => "cubic",
            Profile::Ns3 => "newreno",
        }
    }
}

/// Default receive buffer: Linux's tcp_rmem maximum (6 MB).
pub const DEFAULT_RCV_BUF: u64 = 6 * 1024 * 1024;
/// Default drop-tail queue of trace-driven links (mahimahi's is unbounded; 150 packets is common).
pub const DEFAULT_TRACE_QUEUE: u64 = 150 * 1500;
/// Smallest default queue: two full packets.
pub const MIN_DEFAULT_QUEUE: u64 = 2 * 1500;

#[derive(Debug, Clone)]
pub struct LinkDef {
    pub name: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue_bytes: u64,
    pub loss: LossModel,
    pub trace: Option<Arc<Trace>>,
    pub changes: Vec<LinkChange>,
}

#[derive(Debug, Clone)]
pub struct PathDef {
    pub name: String,
    pub fwd: Vec<u32>,
    pub rev: Vec<u32>,
    /// Power model of the device's interface on this path, if energy is accounted.
    pub energy: Option<EnergyParams>,
}

/// When a flow pauses for per-interval decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionInterval {
    None,
    /// Fixed period in ns.
    Fixed(u64),
    /// The minimum smoothed RTT over the flow's subflows, recomputed at each boundary.
    MinRtt,
}

#[derive(Debug, Clone)]
pub struct FlowDef {
    pub name: String,
    /// Global path ids, one subflow each.
    pub paths: Vec<u16>,
    pub backup: Vec<bool>,
    pub scheduler: String,
    pub decision: DecisionInterval,
    pub app: App,
    /// Transfers of `size` bytes, one after the other on fresh connections.
    pub repeat: u32,
    pub repeat_gap_ns: u64,
    pub start_ns: u64,
    pub size: Option<u64>,
    pub cc: String,
    pub subflow: SubflowConfig,
    pub rcv_buf: u64,
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub duration_ns: u64,
    pub sample_ns: u64,
    pub profile: Profile,
    pub stop_when_done: bool,
    pub links: Vec<LinkDef>,
    pub paths: Vec<PathDef>,
    pub flows: Vec<FlowDef>,
    pub events: Vec<PathEvent>,
    /// The scenario with every default written out (saved next to results).
    pub resolved: ScenarioFile,
}

impl Scenario {
    /// Parses TOML text. `source` names the file in errors and anchors relative trace paths.
    pub fn from_toml(text: &str, source: &str) -> Result<Scenario, ScenarioError> {
        let file: ScenarioFile = toml::from_str(text).map_err(|e| {
            let msg = e.message().replace('\n', " ");
            match e.span() {
                Some(sp) => {
                    let line = text[..sp.start.min(text.len())].matches('\n').count() + 1;
                    ScenarioError(format!("{source}: line {line}: {msg}"))
                }
                None => ScenarioError(format!("{source}: {msg}")),
            }
        })?;
        Self::from_file(file, source)
    }

    /// Parses JSON text (the Python API passes dicts this way).
    pub fn from_json(text: &str, source: &str) -> Result<Scenario, ScenarioError> {
        let file: ScenarioFile = serde_json::from_str(text).map_err(|e| ScenarioError(format!("{source}: {e}")))?;
        Self::from_file(file, source)
    }

    pub fn from_file(file: ScenarioFile, source: &str) -> Result<Scenario, ScenarioError> {
        Resolver { source, base_dir: base_dir(source), traces: BTreeMap::new() }.resolve(file)
    }

    /// Overrides the seed (CLI `--seed`).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self.resolved.sim.seed = Some(seed);
        self
    }

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

struct Resolver<'a> {
    source: &'a str,
    base_dir: PathBuf,
    traces: BTreeMap<PathBuf, Arc<Trace>>,
}

impl Resolver<'_> {
    fn err(&self, field: &str, what: impl std::fmt::Display) -> ScenarioError {
        ScenarioError(format!("{}: {field}: {what}", self.source))
    }

    fn positive(&self, field: &str, v: f64) -> Result<f64, ScenarioError> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(self.err(field, format!("expected a positive number, got {v}")))
        }
    }

    fn non_negative(&self, field: &str, v: f64) -> Result<f64, ScenarioError> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(field, format!("expected a number >= 0, got {v}")))
        }
    }

    fn probability(&self, field: &str, v: f64) -> Result<f64, ScenarioError> {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(self.err(field, format!("expected a probability in [0, 1], got {v}")))
        }
    }

    fn loss(&self, field: &str, l: &LossSpec) -> Result<LossModel, ScenarioError> {
        Ok(match *l {
            LossSpec::None => LossModel::None,
            LossSpec::Bernoulli { p } => LossModel::Bernoulli { p: self.probability(&format!("{field}.p"), p)? },
            LossSpec::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => LossModel::GilbertElliott {
                p_gb: self.probability(&format!("{field}.p_gb"), p_gb)?,
                p_bg: self.probability(&format!("{field}.p_bg"), p_bg)?,
                loss_good: self.probability(&format!("{field}.loss_good"), loss_good)?,
                loss_bad: self.probability(&format!("{field}.loss_bad"), loss_bad)?,
            },
        })
    }

    fn trace(&mut self, field: &str, rel: &str) -> Result<Arc<Trace>, ScenarioError> {
        let p = self.base_dir.join(rel);
        if let Some(t) = self.traces.get(&p) {
            return Ok(t.clone());
        }
        let text = std::fs::read_to_string(&p)
            .map_err(|e| self.err(field, format!("cannot read trace file {}: {e}", p.display())))?;
        let t = Arc::new(parse_trace(&text, &p.display().to_string())?);
        self.traces.insert(p, t.clone());
        Ok(t)
    }

    fn link(&mut self, f: &str, spec: &LinkSpec) -> Result<LinkDef, ScenarioError> {
        let trace = match &spec.trace {
            Some(t) => Some(self.trace(&format!("{f}.trace"), t)?),
            None => None,
        };
        let rate_bps = match (spec.rate_mbps, &trace) {
            (Some(r), _) => (self.positive(&format!("{f}.rate_mbps"), r)? * 1e6).round() as u64,
            (None, Some(_)) => 0,
            (None, None) => return Err(self.err(&format!("{f}.rate_mbps"), "missing: expected a positive rate in Mbit/s (or a trace)")),
        };
        let delay_ns = ms_to_ns(self.non_negative(&format!("{f}.delay_ms"), spec.delay_ms.unwrap_or(0.0))?);
        let loss = match &spec.loss {
            Some(l) => self.loss(&format!("{f}.loss"), l)?,
            None => LossModel::None,
        };
        let mut changes = Vec::new();
        let mut last = 0.0;
        for (j, c) in spec.schedule.iter().enumerate() {
            let g = format!("{f}.schedule[{j}]");
            let at = self.non_negative(&format!("{g}.at_s"), c.at_s)?;
            if at < last {
                return Err(self.err(&format!("{g}.at_s"), format!("expected times in increasing order, got {at} after {last}")));
            }
            last = at;
            changes.push(LinkChange {
                at_ns: (at * 1e9).round() as u64,
                rate_bps: match c.rate_mbps {
                    Some(r) => Some((self.positive(&format!("{g}.rate_mbps"), r)? * 1e6).round() as u64),
                    None => None,
                },
                delay_ns: match c.delay_ms {
                    Some(d) => Some(ms_to_ns(self.non_negative(&format!("{g}.delay_ms"), d)?)),
                    None => None,
                },
                loss: match &c.loss {
                    Some(l) => Some(self.loss(&format!("{g}.loss"), l)?),
                    None => None,
                },
                outage: c.outage,
            });
        }
        Ok(LinkDef { name: spec.name.clone(), rate_bps, delay_ns, queue_bytes: spec.queue_bytes.unwrap_or(0), loss, trace, changes })
    }

    fn resolve(mut self, mut file: ScenarioFile) -> Result<Scenario, ScenarioError> {
        let name = file.sim.name.clone().unwrap_or_else(|| {
            if self.source.starts_with('<') {
                return "scenario".into();
            }
            Path::new(self.source).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "scenario".into())
        });
        let duration = self.positive("sim.duration_s", file.sim.duration_s)?;
        let sample_ms = self.positive("sim.sample_interval_ms", file.sim.sample_interval_ms.unwrap_or(100.0))?;
        let profile = match file.sim.profile.as_deref().unwrap_or("linux") {
            "linux" => Profile::Linux,
            "ns3" => Profile::Ns3,
            other => return Err(self.err("sim.profile", format!("expected \"linux\" or \"ns3\", got {other:?}"))),
        };
        let seed = file.sim.seed.unwrap_or(1);
        let energy_states = file.sim.energy_states.unwrap_or(false);
        let stop_when_done = file.sim.stop_when_done.unwrap_or(true);
        file.sim = SimSection {
            energy_states: Some(energy_states),
            stop_when_done: Some(stop_when_done),
            name: Some(name.clone()),
            duration_s: duration,
            seed: Some(seed),
            sample_interval_ms: Some(sample_ms),
            profile: Some(profile.name().into()),
        };

        // Expand path shortcuts into explicit link pairs.
        for (i, p) in file.paths.iter_mut().enumerate() {
            let f = format!("paths[{i}]");
            let shortcut = p.rate_mbps.is_some() || p.delay_ms.is_some() || p.trace.is_some() || p.trace_reverse.is_some()
                || p.loss.is_some() || p.queue_bytes.is_some() || p.schedule.is_some();
            if p.interface.is_some() && p.energy.is_some() {
                return Err(self.err(&f, "give either `interface` or `energy`, not both"));
            }
            match (&p.forward, &p.reverse, shortcut) {
                (Some(_), Some(_), false) => {}
                (None, None, true) => {
                    let sched = p.schedule.take().unwrap_or_default();
                    let rev_sched: Vec<ChangeSpec> = sched.iter().map(|c| ChangeSpec { loss: None, ..c.clone() }).collect();
                    let (fwd, rev) = (format!("{}.fwd", p.name), format!("{}.rev", p.name));
                    file.links.push(LinkSpec {
                        name: fwd.clone(),
                        rate_mbps: p.rate_mbps,
                        delay_ms: p.delay_ms,
                        queue_bytes: p.queue_bytes,
                        loss: p.loss.take(),
                        trace: p.trace.take(),
                        schedule: sched,
                    });
                    file.links.push(LinkSpec {
                        name: rev.clone(),
                        rate_mbps: p.rate_mbps,
                        delay_ms: p.delay_ms,
                        queue_bytes: p.queue_bytes,
                        loss: None,
                        trace: p.trace_reverse.take().or_else(|| None),
                        schedule: rev_sched,
                    });
                    p.forward = Some(vec![fwd]);
                    p.reverse = Some(vec![rev]);
                    p.rate_mbps = None;
                    p.delay_ms = None;
                    p.queue_bytes = None;
                }
                (Some(_), Some(_), true) => {
                    return Err(self.err(&f, "give either forward/reverse link lists or the shortcut link fields (rate_mbps, delay_ms, ...), not both"))
                }
                _ => return Err(self.err(&f, "expected both `forward` and `reverse` link lists, or shortcut fields such as rate_mbps and delay_ms")),
            }
        }

        let mut links = Vec::with_capacity(file.links.len());
        let mut link_ix: BTreeMap<String, u32> = BTreeMap::new();
        for (i, l) in file.links.iter().enumerate() {
            let f = format!("links[{i}]");
            if link_ix.insert(l.name.clone(), i as u32).is_some() {
                return Err(self.err(&format!("{f}.name"), format!("duplicate link name {:?}", l.name)));
            }
            links.push(self.link(&f, l)?);
        }

        let mut paths = Vec::with_capacity(file.paths.len());
        let mut path_ix: BTreeMap<String, u16> = BTreeMap::new();
        for (i, p) in file.paths.iter().enumerate() {
            let f = format!("paths[{i}]");
            if path_ix.insert(p.name.clone(), i as u16).is_some() {
                return Err(self.err(&format!("{f}.name"), format!("duplicate path name {:?}", p.name)));
            }
            let lookup = |dir: &str, names: &[String]| -> Result<Vec<u32>, ScenarioError> {
                if names.is_empty() {
                    return Err(self.err(&format!("{f}.{dir}"), "expected at least one link name"));
                }
                names
                    .iter()
                    .map(|n| link_ix.get(n).copied().ok_or_else(|| self.err(&format!("{f}.{dir}"), format!("unknown link {n:?}"))))
                    .collect()
            };
            let fwd = lookup("forward", p.forward.as_deref().unwrap_or(&[]))?;
            let rev = lookup("reverse", p.reverse.as_deref().unwrap_or(&[]))?;
            let energy = match (&p.interface, &p.energy) {
                (Some(n), _) => Some(EnergyParams::builtin(&n.to_ascii_lowercase(), energy_states).ok_or_else(|| {
                    self.err(&format!("{f}.interface"), format!("expected \"wifi\", \"4g\", \"lte\" or \"3g\", got {n:?}"))
                })?),
                (None, Some(e)) => {
                    let vals = [e.alpha_up, e.alpha_down, e.beta, e.promotion_s, e.promotion_mw, e.tail_s, e.tail_mw, e.idle_mw];
                    if vals.iter().any(|v| !v.is_finite() || *v < 0.0) {
                        return Err(self.err(&format!("{f}.energy"), "expected non-negative numbers"));
                    }
                    Some(*e)
                }
                (None, None) => None,
            };
            paths.push(PathDef { name: p.name.clone(), fwd, rev, energy });
        }

        // Default queues: one bandwidth-delay product, RTT taken from the longest path through the link.
        let mut rtt_of_link = vec![0u64; links.len()];
        for p in &paths {
            let rtt: u64 = p.fwd.iter().chain(&p.rev).map(|&l| links[l as usize].delay_ns).sum();
            for &l in p.fwd.iter().chain(&p.rev) {
                rtt_of_link[l as usize] = rtt_of_link[l as usize].max(rtt);
            }
        }
        for (i, l) in links.iter_mut().enumerate() {
            if file.links[i].queue_bytes.is_none() {
                l.queue_bytes = if l.trace.is_some() {
                    DEFAULT_TRACE_QUEUE
                } else {
                    let rtt = if rtt_of_link[i] > 0 { rtt_of_link[i] } else { 2 * l.delay_ns };
                    ((l.rate_bps as u128 * rtt as u128 / 8 / 1_000_000_000) as u64).max(MIN_DEFAULT_QUEUE)
                };
            }
            let spec = &mut file.links[i];
            if let Some(t) = spec.trace.as_mut() {
                // The resolved copy must run from anywhere: make the trace path absolute.
                let abs = self.base_dir.join(&*t);
                *t = std::fs::canonicalize(&abs).unwrap_or(abs).display().to_string();
            }
            spec.queue_bytes = Some(l.queue_bytes);
            spec.delay_ms.get_or_insert(0.0);
            spec.loss.get_or_insert(LossSpec::None);
        }

        self.expand_workloads(&mut file, seed, duration)?;
        let defaults = profile.subflow_defaults();
        let mut flows = Vec::with_capacity(file.flows.len());
        let mut flow_names = BTreeMap::new();
        for (i, fl) in file.flows.iter_mut().enumerate() {
            let f = format!("flows[{i}]");
            if flow_names.insert(fl.name.clone(), i).is_some() {
                return Err(self.err(&format!("{f}.name"), format!("duplicate flow name {:?}", fl.name)));
            }
            let names: Vec<String> = match (&fl.path, &fl.paths) {
                (Some(p), None) => vec![p.clone()],
                (None, Some(ps)) if !ps.is_empty() && ps.len() <= 8 => ps.clone(),
                (None, Some(ps)) => return Err(self.err(&format!("{f}.paths"), format!("expected 1 to 8 path names, got {}", ps.len()))),
                (Some(_), Some(_)) => return Err(self.err(&f, "give either `path` (single-path TCP) or `paths` (multipath), not both")),
                (None, None) => return Err(self.err(&format!("{f}.path"), "missing: expected `path = \"name\"` or `paths = [\"a\", \"b\"]`")),
            };
            let mut paths_of_flow = Vec::with_capacity(names.len());
            for n in &names {
                let field = if fl.paths.is_some() { "paths" } else { "path" };
                let id = *path_ix.get(n).ok_or_else(|| self.err(&format!("{f}.{field}"), format!("unknown path {n:?}")))?;
                if paths_of_flow.contains(&id) {
                    return Err(self.err(&format!("{f}.paths"), format!("path {n:?} listed twice")));
                }
                paths_of_flow.push(id);
            }
            let mut backup = vec![false; names.len()];
            for b in fl.backup.iter().flatten() {
                let k = names.iter().position(|n| n == b).ok_or_else(|| self.err(&format!("{f}.backup"), format!("{b:?} is not one of this flow's paths {names:?}")))?;
                backup[k] = true;
            }
            let scheduler = fl.scheduler.clone().unwrap_or_else(|| "minrtt".into()).to_ascii_lowercase();
            if AnySched::by_name(&scheduler).is_none() {
                return Err(self.err(&format!("{f}.scheduler"), format!("unknown scheduler {scheduler:?}, expected one of {:?}", AnySched::NAMES)));
            }
            let cc = fl.cc.clone().unwrap_or_else(|| profile.default_cc().into()).to_ascii_lowercase();
            if AnyCc::by_name(&cc).is_none() {
                return Err(self.err(&format!("{f}.cc"), format!("unknown congestion control {cc:?}, expected one of {:?}", AnyCc::NAMES)));
            }
            let start = self.non_negative(&format!("{f}.start_s"), fl.start_s.unwrap_or(0.0))?;
            if fl.size_bytes == Some(0) {
                return Err(self.err(&format!("{f}.size_bytes"), "expected a positive size (omit it for an unlimited flow)"));
            }
            let decision = match (fl.decision_interval_ms, fl.decision_every_min_rtt.unwrap_or(false)) {
                (Some(_), true) => {
                    return Err(self.err(&f, "give either decision_interval_ms or decision_every_min_rtt = true, not both"))
                }
                (Some(ms), false) => DecisionInterval::Fixed(ms_to_ns(self.positive(&format!("{f}.decision_interval_ms"), ms)?).max(1)),
                (None, true) => DecisionInterval::MinRtt,
                (None, false) => DecisionInterval::None,
            };
            let app = match (fl.app_rate_mbps, fl.chunk_bytes, fl.chunk_period_ms) {
                (None, None, None) => App::Greedy,
                (Some(r), None, None) => App::Cbr { rate_bps: (self.positive(&format!("{f}.app_rate_mbps"), r)? * 1e6).round() as u64 },
                (None, Some(b), Some(p)) if b > 0 => {
                    App::Chunks { bytes: b, period_ns: ms_to_ns(self.positive(&format!("{f}.chunk_period_ms"), p)?) }
                }
                (None, Some(_), Some(_)) => return Err(self.err(&format!("{f}.chunk_bytes"), "expected > 0")),
                (None, _, _) => return Err(self.err(&f, "chunked source: give both chunk_bytes and chunk_period_ms")),
                (Some(_), _, _) => return Err(self.err(&f, "give either app_rate_mbps (constant rate) or chunk_bytes/chunk_period_ms, not both")),
            };
            let repeat = fl.repeat.unwrap_or(1);
            if repeat == 0 {
                return Err(self.err(&format!("{f}.repeat"), "expected at least 1"));
            }
            if repeat > 1 && (fl.size_bytes.is_none() || app != App::Greedy) {
                return Err(self.err(&format!("{f}.repeat"), "repeated downloads need size_bytes and no app_rate_mbps/chunk source"));
            }
            let repeat_gap_ns = (self.non_negative(&format!("{f}.repeat_gap_s"), fl.repeat_gap_s.unwrap_or(0.0))? * 1e9).round() as u64;
            let mut sub = defaults.clone();
            if let Some(m) = fl.mss {
                if !(64..=65_000).contains(&m) {
                    return Err(self.err(&format!("{f}.mss"), format!("expected 64..=65000 bytes, got {m}")));
                }
                sub.mss = m;
            }
            if let Some(w) = fl.init_cwnd {
                if w == 0 {
                    return Err(self.err(&format!("{f}.init_cwnd"), "expected at least 1 segment"));
                }
                sub.init_cwnd = w;
            }
            if let Some(r) = fl.min_rto_ms {
                sub.min_rto = Duration(ms_to_ns(self.positive(&format!("{f}.min_rto_ms"), r)?));
            }
            if let Some(d) = fl.delayed_ack {
                sub.delayed_ack = d;
            }
            if let Some(d) = fl.delayed_ack_ms {
                sub.delayed_ack_timeout = Duration(ms_to_ns(self.positive(&format!("{f}.delayed_ack_ms"), d)?));
            }
            if let Some(a) = fl.abc {
                sub.abc = a;
            }
            let rcv_buf = fl.rcv_buf_bytes.unwrap_or(DEFAULT_RCV_BUF);
            if rcv_buf < 2 * sub.mss as u64 {
                return Err(self.err(&format!("{f}.rcv_buf_bytes"), format!("expected at least two segments ({} bytes), got {rcv_buf}", 2 * sub.mss)));
            }
            // Write the defaults back for the resolved copy.
            fl.cc = Some(cc.clone());
            fl.scheduler = Some(scheduler.clone());
            fl.start_s = Some(start);
            fl.mss = Some(sub.mss);
            fl.init_cwnd = Some(sub.init_cwnd);
            fl.min_rto_ms = Some(sub.min_rto.as_millis_f64());
            fl.delayed_ack = Some(sub.delayed_ack);
            fl.delayed_ack_ms = Some(sub.delayed_ack_timeout.as_millis_f64());
            fl.rcv_buf_bytes = Some(rcv_buf);
            fl.abc = Some(sub.abc);
            flows.push(FlowDef {
                name: fl.name.clone(),
                paths: paths_of_flow,
                backup,
                scheduler,
                decision,
                app,
                repeat,
                repeat_gap_ns,
                start_ns: (start * 1e9).round() as u64,
                size: fl.size_bytes,
                cc,
                subflow: sub,
                rcv_buf,
            });
        }
        if flows.is_empty() {
            return Err(self.err("flows", "expected at least one [[flows]] entry"));
        }
        let mut events = Vec::with_capacity(file.events.len());
        for (i, e) in file.events.iter().enumerate() {
            let f = format!("events[{i}]");
            let at = self.non_negative(&format!("{f}.at_s"), e.at_s)?;
            let path = *path_ix.get(&e.path).ok_or_else(|| self.err(&format!("{f}.path"), format!("unknown path {:?}", e.path)))?;
            let kind = match e.state.as_str() {
                "down" => PathEventKind::Down,
                "up" => PathEventKind::Up,
                "backup" => PathEventKind::Backup,
                "active" => PathEventKind::Active,
                other => return Err(self.err(&format!("{f}.state"), format!("expected \"down\", \"up\", \"backup\" or \"active\", got {other:?}"))),
            };
            events.push(PathEvent { at_ns: (at * 1e9).round() as u64, path, kind });
        }

        Ok(Scenario {
            name,
            seed,
            duration_ns: (duration * 1e9).round() as u64,
            sample_ns: ms_to_ns(sample_ms).max(1),
            stop_when_done,
            profile,
            links,
            paths,
            flows,
            events,
            resolved: file,
        })
    }
}

impl Resolver<'_> {
    /// Expands `[[workloads]]` into flows (see `workload.rs`).
    fn expand_workloads(&self, file: &mut ScenarioFile, seed: u64, duration: f64) -> Result<(), ScenarioError> {
        for (i, w) in std::mem::take(&mut file.workloads).into_iter().enumerate() {
            let f = format!("workloads[{i}]");
            w.size.validate().map_err(|e| self.err(&format!("{f}.size"), e))?;
            let (rate, period) = match w.arrival.as_str() {
                "poisson" => (Some(self.positive(&format!("{f}.rate_per_s"), w.rate_per_s.ok_or_else(|| self.err(&format!("{f}.rate_per_s"), "missing: expected arrivals per second"))?)?), None),
                "periodic" => (None, Some(self.positive(&format!("{f}.period_s"), w.period_s.ok_or_else(|| self.err(&format!("{f}.period_s"), "missing: expected the period in seconds"))?)?)),
                other => return Err(self.err(&format!("{f}.arrival"), format!("expected \"poisson\" or \"periodic\", got {other:?}"))),
            };
            let start = self.non_negative(&format!("{f}.start_s"), w.start_s.unwrap_or(0.0))?;
            let stop = w.stop_s.unwrap_or(duration);
            let mut rng = Rng::stream(seed, &format!("workload/{}", w.name));
            let times = arrivals(&mut rng, rate, period, start, stop, w.max_flows.unwrap_or(100_000));
            for (k, t) in times.into_iter().enumerate() {
                let size = w.size.sample(&mut rng);
                file.flows.push(FlowSpec {
                    name: format!("{}-{k}", w.name),
                    path: w.path.clone(),
                    paths: w.paths.clone(),
                    backup: None,
                    scheduler: w.scheduler.clone(),
                    decision_interval_ms: None,
                    decision_every_min_rtt: None,
                    start_s: Some((t * 1e9).round() / 1e9),
                    size_bytes: Some(size),
                    cc: w.cc.clone(),
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
                });
            }
        }
        Ok(())
    }
}

fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

/// Parses a mahimahi trace: one non-negative integer (ms) per line, non-decreasing, last > 0.
pub fn parse_trace(text: &str, source: &str) -> Result<Trace, ScenarioError> {
    let mut times = Vec::new();
    let mut prev = 0u64;
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        let t: u64 = l.parse().map_err(|_| {
            ScenarioError(format!("{source}: line {}: expected a non-negative integer millisecond timestamp, got {l:?}", i + 1))
        })?;
        if t < prev {
            return Err(ScenarioError(format!("{source}: line {}: timestamps must not decrease ({t} after {prev})", i + 1)));
        }
        prev = t;
        times.push(t);
    }
    match times.last() {
        None => Err(ScenarioError(format!("{source}: line 1: expected at least one timestamp, the file is empty"))),
        Some(0) => Err(ScenarioError(format!("{source}: line {}: the last timestamp must be > 0 (it is the loop period)", times.len()))),
        Some(_) => Ok(Trace { times_ms: times }),
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
        assert_eq!(s.flows[0].cc, "cubic");
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
        assert_eq!(e, "s.toml: links[0].rate_mbps: expected a positive number, got -5");
        let e = err(&OK.replace("delay_ms = 25", "delay_ms = 25\nbogus = 1"));
        assert!(e.starts_with("s.toml: line 8: unknown field `bogus`"), "{e}");
        let e = err("[sim\nduration_s = 1");
        assert!(e.starts_with("s.toml: line 1:"), "{e}");
        let e = err(&OK.replace("duration_s = 10", ""));
        assert!(e.contains("missing field `duration_s`"), "{e}");
        let e = err(&OK.replace("path = \"p\"", "path = \"q\""));
        assert_eq!(e, "s.toml: flows[0].path: unknown path \"q\"");
        let e = err(&OK.replace("delay_ms = 25", "delay_ms = 25\ntrace = \"/nonexistent/t.down\""));
        assert!(e.starts_with("s.toml: links[0].trace: cannot read trace file /nonexistent/t.down"), "{e}");
        for e in [e] {
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn trace_validation() {
        assert_eq!(parse_trace("0\n1\n1\n5\n", "t").unwrap().times_ms, vec![0, 1, 1, 5]);
        assert_eq!(parse_trace("3\n2\n", "t").unwrap_err().0, "t: line 2: timestamps must not decrease (2 after 3)");
        assert!(parse_trace("1\nx\n", "t").unwrap_err().0.starts_with("t: line 2: expected a non-negative integer"));
        assert!(parse_trace("", "t").is_err());
        assert!(parse_trace("0\n", "t").is_err());
    }
}
