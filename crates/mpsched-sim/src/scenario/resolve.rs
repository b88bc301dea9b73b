//! Validation and defaults: the file form ([`super::file`]) becomes the resolved
//! [`Scenario`]. Every error names the user's own field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::link::{LinkChange, LossModel, Trace};
use crate::ranges::show;
use crate::rng::stream_seed;
use crate::tracegen::{self, SynthParams, SynthSpec};

pub(super) struct Resolver<'a> {
    pub(super) source: &'a str,
    pub(super) base_dir: PathBuf,
    pub(super) traces: BTreeMap<PathBuf, Arc<Trace>>,
    /// The scenario seed (set by `resolve` before anything is drawn).
    pub(super) seed: u64,
    /// Links made from a path's shortcut fields: link index -> (path index, reverse link), so
    /// that errors name the path's fields the user wrote.
    pub(super) shortcuts: BTreeMap<usize, (usize, bool)>,
    /// Fields given but ignored, one line each (see [`Scenario::warnings`]).
    pub(super) warnings: Vec<String>,
}

impl Resolver<'_> {
    pub(super) fn err(&self, field: &str, what: impl std::fmt::Display) -> ScenarioError {
        ScenarioError(format!("{}: {field}: {what}", self.source))
    }

    /// Records that `field` was given but is ignored, and why.
    pub(super) fn warn(&mut self, field: &str, why: impl std::fmt::Display) {
        self.warnings.push(format!("{}: {field}: ignored: {why}", self.source));
    }

    pub(super) fn positive(&self, field: &str, v: f64) -> Result<f64, ScenarioError> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(self.err(field, format!("expected a positive number, got {}", show(v))))
        }
    }

    pub(super) fn non_negative(&self, field: &str, v: f64) -> Result<f64, ScenarioError> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(field, format!("expected a number >= 0, got {}", show(v))))
        }
    }

    /// A rate in Mbit/s (between [`MIN_RATE_MBPS`] and [`MAX_RATE_MBPS`]) in bit/s.
    pub(super) fn rate_bps(&self, field: &str, v: f64) -> Result<u64, ScenarioError> {
        let v = self.positive(field, v)?;
        // (A relative tolerance, as for durations: 1e-6 Mbit/s is 1 bit/s.)
        if v < MIN_RATE_MBPS * (1.0 - 1e-9) {
            return Err(
                self.err(field, format!("expected at least {MIN_RATE_MBPS:e} Mbit/s (1 bit/s), got {}", show(v)))
            );
        }
        if v > MAX_RATE_MBPS {
            return Err(self.err(field, format!("expected at most {MAX_RATE_MBPS:e} Mbit/s, got {}", show(v))));
        }
        Ok((v * 1e6).round() as u64)
    }

    /// A duration of something that repeats or times out, `v` in units of `unit_s` seconds:
    /// between [`MIN_DURATION_S`] and [`MAX_TIME_S`]. Returns nanoseconds.
    pub(super) fn duration(&self, field: &str, v: f64, unit_s: f64) -> Result<u64, ScenarioError> {
        let unit = if unit_s == 1.0 { "s" } else { "ms" };
        // (A relative tolerance: 0.001 ms is 1 µs whatever the rounding of the product.)
        if !(v.is_finite() && v * unit_s >= MIN_DURATION_S * (1.0 - 1e-9)) {
            let min = MIN_DURATION_S / unit_s;
            return Err(self
                .err(field, format!("expected a duration of at least {} {unit} (1 µs), got {}", show(min), show(v))));
        }
        self.at_most(field, v, unit_s)
    }

    /// A time or delay, `v` in units of `unit_s` seconds: between 0 and [`MAX_TIME_S`]. Returns
    /// nanoseconds.
    pub(super) fn time(&self, field: &str, v: f64, unit_s: f64) -> Result<u64, ScenarioError> {
        self.at_most(field, self.non_negative(field, v)?, unit_s)
    }

    /// The active window of the flow at `f` (a TCP or UDP flow): `start_s` and the optional
    /// `stop_s`, which must come after it. Returns both in nanoseconds.
    pub(super) fn active_window(
        &self,
        f: &str,
        start: f64,
        stop_s: Option<f64>,
    ) -> Result<(u64, Option<u64>), ScenarioError> {
        let start_ns = self.time(&format!("{f}.start_s"), start, 1.0)?;
        let Some(stop) = stop_s else { return Ok((start_ns, None)) };
        let ns = self.time(&format!("{f}.stop_s"), stop, 1.0)?;
        if ns <= start_ns {
            return Err(
                self.err(&format!("{f}.stop_s"), format!("expected a time after start_s ({start}), got {stop}"))
            );
        }
        Ok((start_ns, Some(ns)))
    }

    fn at_most(&self, field: &str, v: f64, unit_s: f64) -> Result<u64, ScenarioError> {
        if v * unit_s > MAX_TIME_S {
            let unit = if unit_s == 1.0 { "s" } else { "ms" };
            let max = MAX_TIME_S / unit_s;
            return Err(
                self.err(field, format!("expected at most {} {unit} (about 31 years), got {}", show(max), show(v)))
            );
        }
        Ok((v * unit_s * 1e9).round() as u64)
    }

    pub(super) fn probability(&self, field: &str, v: f64) -> Result<f64, ScenarioError> {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(self.err(field, format!("expected a probability in [0, 1], got {v}")))
        }
    }

    pub(super) fn loss(&self, field: &str, l: &LossSpec) -> Result<LossModel, ScenarioError> {
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

    pub(super) fn trace(&mut self, field: &str, rel: &str) -> Result<Arc<Trace>, ScenarioError> {
        let p = self.base_dir.join(rel);
        if let Some(t) = self.traces.get(&p) {
            return Ok(t.clone());
        }
        let text = read_trace_file(&p).map_err(|e| self.err(field, e))?;
        // `s.toml: paths[0].trace: t.down: line 3: ...`: the scenario, the link, the file.
        let t = Arc::new(parse_trace(&text, &p.display().to_string()).map_err(|e| self.err(field, e.0))?);
        self.traces.insert(p, t.clone());
        Ok(t)
    }

    /// Seed of a synthetic trace: its own, or one derived from the scenario seed and the link,
    /// in [0, 2^63 − 1] like every seed: the resolved `scenario.toml` writes it out, and TOML
    /// integers are signed 64-bit (a derived seed above that made the file unreadable).
    pub(super) fn synth_seed(&self, link: &str, spec: &SynthSpec) -> u64 {
        spec.seed.unwrap_or_else(|| stream_seed(self.seed, &format!("trace/{link}")) & MAX_SEED)
    }

    pub(super) fn synthetic(&self, field: &str, link: &str, spec: &SynthSpec) -> Result<Arc<Trace>, ScenarioError> {
        let p = SynthParams::resolve(spec).map_err(|(k, what)| self.err(&format!("{field}.synthetic.{k}"), what))?;
        Ok(Arc::new(Trace::new(tracegen::generate(&p, self.synth_seed(link, spec)))))
    }

    /// A link; `f` names it in errors (`links[3]`, or `paths[1]` for a path's shortcut link,
    /// whose trace field is `trace_field`).
    pub(super) fn link(&mut self, f: &str, trace_field: &str, spec: &LinkSpec) -> Result<LinkDef, ScenarioError> {
        let tf = format!("{f}.{trace_field}");
        let trace = match &spec.trace {
            Some(TraceSpec::File(t)) => Some(self.trace(&tf, t)?),
            Some(TraceSpec::Synthetic { synthetic }) => Some(self.synthetic(&tf, &spec.name, synthetic)?),
            None => None,
        };
        let (trace, trace_offset_s) =
            self.offset_trace(&format!("{f}.trace_offset_s"), &spec.name, spec.trace_offset_s, trace)?;
        let rate_bps = match (spec.rate_mbps, &trace) {
            (Some(r), _) => self.rate_bps(&format!("{f}.rate_mbps"), r)?,
            (None, Some(_)) => 0,
            (None, None) => {
                return Err(self.err(
                    &format!("{f}.rate_mbps"),
                    format!("missing: expected a positive rate in Mbit/s (or `{trace_field}`)"),
                ))
            }
        };
        let delay_ns = self.time(&format!("{f}.delay_ms"), spec.delay_ms.unwrap_or(0.0), 1e-3)?;
        let loss = match &spec.loss {
            Some(l) => self.loss(&format!("{f}.loss"), l)?,
            None => LossModel::None,
        };
        let jitter_ns = self.jitter(f, spec)?;
        let mut changes = Vec::new();
        let mut last = 0.0;
        for (j, c) in spec.schedule.iter().enumerate() {
            let g = format!("{f}.schedule[{j}]");
            let at_ns = self.time(&format!("{g}.at_s"), c.at_s, 1.0)?;
            let at = c.at_s;
            if at < last {
                return Err(self
                    .err(&format!("{g}.at_s"), format!("expected times in increasing order, got {at} after {last}")));
            }
            last = at;
            changes.push(LinkChange {
                at_ns,
                rate_bps: match c.rate_mbps {
                    Some(r) => Some(self.rate_bps(&format!("{g}.rate_mbps"), r)?),
                    None => None,
                },
                delay_ns: match c.delay_ms {
                    Some(d) => Some(self.time(&format!("{g}.delay_ms"), d, 1e-3)?),
                    None => None,
                },
                loss: match &c.loss {
                    Some(l) => Some(self.loss(&format!("{g}.loss"), l)?),
                    None => None,
                },
                outage: c.outage,
            });
        }
        Ok(LinkDef {
            name: spec.name.clone(),
            rate_bps,
            delay_ns,
            queue_bytes: match spec.queue_bytes {
                Some(QueueBytes::Bytes(b)) => b,
                Some(QueueBytes::Unlimited) => u64::MAX,
                None => 0,
            },
            queue_packets: self.queue_packets(f, spec)?,
            loss,
            jitter_ns,
            trace,
            trace_offset_s,
            changes,
        })
    }

    pub(super) fn resolve(mut self, mut file: ScenarioFile) -> Result<Scenario, ScenarioError> {
        let sim = self.resolve_sim(&mut file)?;
        self.expand_path_shortcuts(&mut file)?;
        self.expand_handoffs(&mut file, sim.seed, sim.duration_s)?;
        let (mut links, link_ix) = self.resolve_links(&file)?;
        let (paths, path_ix) = self.resolve_paths(&file, &link_ix, sim.energy_states)?;
        self.default_queues(&mut file, &mut links, &paths);
        self.expand_workloads(&mut file, sim.seed, sim.duration_s)?;
        let flows = self.resolve_flows(&mut file, &path_ix, sim.profile)?;
        let events = self.resolve_events(&file, &path_ix)?;
        let udp = self.resolve_udp(&mut file, &path_ix)?;
        Ok(Scenario {
            name: sim.name,
            seed: sim.seed,
            duration_ns: (sim.duration_s * 1e9).round() as u64,
            sample_ns: ms_to_ns(sim.sample_ms),
            stop_when_done: sim.stop_when_done,
            profile: sim.profile,
            links,
            paths,
            flows,
            events,
            udp,
            resolved: file,
            warnings: self.warnings,
        })
    }

    /// `[sim]`: name, duration, sampling, profile, seed; written back with every default.
    pub(super) fn resolve_sim(&mut self, file: &mut ScenarioFile) -> Result<SimDefaults, ScenarioError> {
        let name = file.sim.name.clone().unwrap_or_else(|| {
            if self.source.starts_with('<') {
                return "scenario".into();
            }
            Path::new(self.source)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scenario".into())
        });
        let duration = file.sim.duration_s;
        self.duration("sim.duration_s", duration, 1.0)?;
        let sample_ms = file.sim.sample_interval_ms.unwrap_or(100.0);
        self.duration("sim.sample_interval_ms", sample_ms, 1e-3)?;
        if sample_ms < MIN_SAMPLE_MS {
            return Err(self.err(
                "sim.sample_interval_ms",
                format!("expected at least {MIN_SAMPLE_MS} ms (samples are kept in memory), got {}", show(sample_ms)),
            ));
        }
        let profile = match file.sim.profile.as_deref().unwrap_or("linux") {
            "linux" => Profile::Linux,
            "ns3" => Profile::Ns3,
            other => return Err(self.err("sim.profile", format!("expected \"linux\" or \"ns3\", got {other:?}"))),
        };
        let seed = file.sim.seed.unwrap_or(1);
        self.seed = seed;
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

        Ok(SimDefaults { name, duration_s: duration, sample_ms, profile, seed, energy_states, stop_when_done })
    }

    /// Path shortcuts (`rate_mbps`, `delay_ms`, ... on a path) become an explicit link pair
    /// `<name>.fwd` / `<name>.rev`.
    pub(super) fn expand_path_shortcuts(&mut self, file: &mut ScenarioFile) -> Result<(), ScenarioError> {
        // Expand path shortcuts into explicit link pairs.
        for (i, p) in file.paths.iter_mut().enumerate() {
            let f = format!("paths[{i}]");
            let shortcut = p.rate_mbps.is_some()
                || p.delay_ms.is_some()
                || p.trace.is_some()
                || p.trace_reverse.is_some()
                || p.loss.is_some()
                || p.jitter_ms.is_some()
                || p.queue_bytes.is_some()
                || p.queue_packets.is_some()
                || p.schedule.is_some()
                || p.trace_offset_s.is_some();
            if p.trace_offset_s.is_some() && p.trace.is_none() && p.trace_reverse.is_none() {
                return Err(self.err(
                    &format!("{f}.trace_offset_s"),
                    "expected a `trace` or `trace_reverse` beside it (the offset is into the trace)",
                ));
            }
            if p.interface.is_some() && p.energy.is_some() {
                return Err(self.err(&f, "give either `interface` or `energy`, not both"));
            }
            match (&p.forward, &p.reverse, shortcut) {
                (Some(_), Some(_), false) => {}
                (None, None, true) => {
                    if p.trace.is_some() && p.trace_reverse.is_some() {
                        let why = "both directions follow a trace (`trace`, `trace_reverse`)";
                        if p.rate_mbps.is_some() {
                            self.warn(&format!("{f}.rate_mbps"), why);
                        }
                        for (j, c) in p.schedule.iter().flatten().enumerate() {
                            if c.rate_mbps.is_some() {
                                self.warn(&format!("{f}.schedule[{j}].rate_mbps"), why);
                            }
                        }
                    }
                    let sched = p.schedule.take().unwrap_or_default();
                    let rev_sched: Vec<ChangeSpec> = sched.iter().map(|c| ChangeSpec { loss: None, ..c.clone() }).collect();
                    let (fwd, rev) = (format!("{}.fwd", p.name), format!("{}.rev", p.name));
                    self.shortcuts.insert(file.links.len(), (i, false));
                    self.shortcuts.insert(file.links.len() + 1, (i, true));
                    file.links.push(LinkSpec {
                        name: fwd.clone(),
                        // A direction that follows a trace has no rate (warned above if unused).
                        rate_mbps: p.rate_mbps.filter(|_| p.trace.is_none()),
                        delay_ms: p.delay_ms,
                        queue_bytes: p.queue_bytes,
                        queue_packets: p.queue_packets,
                        loss: p.loss.take(),
                        jitter_ms: p.jitter_ms.take(),
                        trace_offset_s: p.trace_offset_s.filter(|_| p.trace.is_some()),
                        trace: p.trace.take(),
                        schedule: sched,
                    });
                    file.links.push(LinkSpec {
                        name: rev.clone(),
                        rate_mbps: p.rate_mbps.filter(|_| p.trace_reverse.is_none()),
                        delay_ms: p.delay_ms,
                        queue_bytes: p.queue_bytes,
                        queue_packets: p.queue_packets,
                        loss: None,
                        jitter_ms: None,
                        trace_offset_s: p.trace_offset_s.filter(|_| p.trace_reverse.is_some()),
                        trace: p.trace_reverse.take(),
                        schedule: rev_sched,
                    });
                    p.forward = Some(vec![fwd]);
                    p.reverse = Some(vec![rev]);
                    p.rate_mbps = None;
                    p.delay_ms = None;
                    p.queue_bytes = None;
                    p.queue_packets = None;
                    p.trace_offset_s = None;
                }
                (Some(_), Some(_), true) => {
                    return Err(self.err(&f, "give either forward/reverse link lists or the shortcut link fields (rate_mbps, delay_ms, ...), not both"))
                }
                _ => return Err(self.err(&f, "expected both `forward` and `reverse` link lists, or shortcut fields such as rate_mbps and delay_ms")),
            }
        }

        Ok(())
    }

    /// `[[links]]`, by name.
    pub(super) fn resolve_links(
        &mut self,
        file: &ScenarioFile,
    ) -> Result<(Vec<LinkDef>, BTreeMap<String, u32>), ScenarioError> {
        let mut links = Vec::with_capacity(file.links.len());
        let mut link_ix: BTreeMap<String, u32> = BTreeMap::new();
        for (i, l) in file.links.iter().enumerate() {
            let f = format!("links[{i}]");
            if link_ix.insert(l.name.clone(), i as u32).is_some() {
                return Err(self.err(&format!("{f}.name"), format!("duplicate link name {:?}", l.name)));
            }
            let (f, trace_field) = match self.shortcuts.get(&i) {
                Some(&(p, rev)) => (format!("paths[{p}]"), if rev { "trace_reverse" } else { "trace" }),
                None => {
                    self.warn_rates_beside_trace(&f, "the link follows its `trace`", l);
                    (f, "trace")
                }
            };
            links.push(self.link(&f, trace_field, l)?);
        }

        Ok((links, link_ix))
    }

    /// A link's packet limit (`queue_packets`): 1 to [`MAX_QUEUE_PACKETS`], not beside a byte
    /// limit (`queue_bytes = "unlimited"` is none: the resolved copy writes it); `u64::MAX` when
    /// none is given.
    /// `jitter_ms` of a link: non-negative, at most 1 s (a jitter is a delay *variation*).
    fn jitter(&self, f: &str, spec: &LinkSpec) -> Result<u64, ScenarioError> {
        let Some(j) = spec.jitter_ms else { return Ok(0) };
        let field = format!("{f}.jitter_ms");
        let ms = self.non_negative(&field, j)?;
        let max_ms = (MAX_JITTER_NS / 1_000_000) as f64;
        if ms > max_ms {
            return Err(self.err(&field, format!("expected at most {} ms, got {}", show(max_ms), show(ms))));
        }
        Ok((ms * 1e6).round() as u64)
    }

    fn queue_packets(&self, f: &str, spec: &LinkSpec) -> Result<u64, ScenarioError> {
        let Some(n) = spec.queue_packets else { return Ok(u64::MAX) };
        let field = format!("{f}.queue_packets");
        if let Some(QueueBytes::Bytes(_)) = spec.queue_bytes {
            return Err(self.err(&field, "give either `queue_bytes` or `queue_packets`, not both"));
        }
        if !(1..=MAX_QUEUE_PACKETS).contains(&n) {
            return Err(self.err(&field, format!("expected 1 to {MAX_QUEUE_PACKETS} packets, got {n}")));
        }
        Ok(n)
    }

    /// Warnings for the rates of a trace-driven link (its own and its schedule's): a trace
    /// gives the link's delivery opportunities, so a rate is never used.
    fn warn_rates_beside_trace(&mut self, f: &str, why: &str, l: &LinkSpec) {
        if l.trace.is_none() {
            return;
        }
        if l.rate_mbps.is_some() {
            self.warn(&format!("{f}.rate_mbps"), why);
        }
        for (j, c) in l.schedule.iter().enumerate() {
            if c.rate_mbps.is_some() {
                self.warn(&format!("{f}.schedule[{j}].rate_mbps"), why);
            }
        }
    }

    /// `[[paths]]`: link lists and the interface's energy model, by name.
    pub(super) fn resolve_paths(
        &self,
        file: &ScenarioFile,
        link_ix: &BTreeMap<String, u32>,
        energy_states: bool,
    ) -> Result<(Vec<PathDef>, BTreeMap<String, u16>), ScenarioError> {
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
                    .map(|n| {
                        link_ix
                            .get(n)
                            .copied()
                            .ok_or_else(|| self.err(&format!("{f}.{dir}"), format!("unknown link {n:?}")))
                    })
                    .collect()
            };
            let fwd = lookup("forward", p.forward.as_deref().unwrap_or(&[]))?;
            let rev = lookup("reverse", p.reverse.as_deref().unwrap_or(&[]))?;
            let energy = match (&p.interface, &p.energy) {
                (Some(n), _) => {
                    Some(EnergyParams::builtin(&n.to_ascii_lowercase(), energy_states).ok_or_else(|| {
                        self.err(
                            &format!("{f}.interface"),
                            format!("expected \"wifi\", \"4g\", \"lte\" or \"3g\", got {n:?}"),
                        )
                    })?)
                }
                (None, Some(e)) => {
                    let vals = [
                        e.alpha_up,
                        e.alpha_down,
                        e.beta,
                        e.promotion_s,
                        e.promotion_mw,
                        e.tail_s,
                        e.tail_mw,
                        e.idle_mw,
                    ];
                    if vals.iter().any(|v| !v.is_finite() || *v < 0.0) {
                        return Err(self.err(&format!("{f}.energy"), "expected non-negative numbers"));
                    }
                    Some(*e)
                }
                (None, None) => None,
            };
            paths.push(PathDef { name: p.name.clone(), fwd, rev, energy });
        }

        Ok((paths, path_ix))
    }

    /// Default queues (one bandwidth-delay product, the RTT of the longest path through the
    /// link) and the links' resolved copies: absolute trace paths, synthetic traces with every
    /// parameter and the seed written out.
    pub(super) fn default_queues(&self, file: &mut ScenarioFile, links: &mut [LinkDef], paths: &[PathDef]) {
        let mut rtt_of_link = vec![0u64; links.len()];
        for p in paths {
            let rtt: u64 = p.fwd.iter().chain(&p.rev).map(|&l| links[l as usize].delay_ns).sum();
            for &l in p.fwd.iter().chain(&p.rev) {
                rtt_of_link[l as usize] = rtt_of_link[l as usize].max(rtt);
            }
        }
        for (i, l) in links.iter_mut().enumerate() {
            if file.links[i].queue_packets.is_some() && file.links[i].queue_bytes.is_none() {
                // A packet limit alone: no byte limit (mahimahi's `packets=` queue).
                l.queue_bytes = u64::MAX;
            } else if file.links[i].queue_bytes.is_none() {
                l.queue_bytes = if l.trace.is_some() {
                    DEFAULT_TRACE_QUEUE
                } else {
                    let rtt = if rtt_of_link[i] > 0 { rtt_of_link[i] } else { 2 * l.delay_ns };
                    ((l.rate_bps as u128 * rtt as u128 / 8 / 1_000_000_000) as u64).max(MIN_DEFAULT_QUEUE)
                };
            }
            let synth_seed = match &file.links[i].trace {
                Some(TraceSpec::Synthetic { synthetic }) => Some(self.synth_seed(&file.links[i].name, synthetic)),
                _ => None,
            };
            let spec = &mut file.links[i];
            match spec.trace.as_mut() {
                Some(TraceSpec::File(t)) => {
                    // The resolved copy must run from anywhere: make the trace path absolute.
                    let abs = self.base_dir.join(&*t);
                    *t = std::fs::canonicalize(&abs).unwrap_or(abs).display().to_string();
                }
                Some(TraceSpec::Synthetic { synthetic }) => {
                    // Every parameter written out, the seed included: the same trace again.
                    let p = SynthParams::resolve(synthetic).expect("validated when the link was built");
                    *synthetic = SynthSpec {
                        mean_mbps: p.mean_mbps,
                        duration_s: Some(p.duration_s),
                        variability: Some(p.variability),
                        dwell_s: Some(p.dwell_s),
                        outage_per_min: Some(p.outage_per_min),
                        outage_s: Some(p.outage_s),
                        seed: synth_seed,
                    };
                }
                None => {}
            }
            spec.queue_bytes =
                Some(if l.queue_bytes == u64::MAX { QueueBytes::Unlimited } else { QueueBytes::Bytes(l.queue_bytes) });
            if let Some(o) = l.trace_offset_s {
                // The value drawn for "random" (the same offset again when the copy is re-run).
                spec.trace_offset_s = Some(TraceOffset::Seconds(o));
            }
            spec.delay_ms.get_or_insert(0.0);
            spec.loss.get_or_insert(LossSpec::None);
        }
    }

    /// `[[events]]`: path down/up/backup/active at given times.
    pub(super) fn resolve_events(
        &self,
        file: &ScenarioFile,
        path_ix: &BTreeMap<String, u16>,
    ) -> Result<Vec<PathEvent>, ScenarioError> {
        let mut events = Vec::with_capacity(file.events.len());
        for (i, e) in file.events.iter().enumerate() {
            let f = format!("events[{i}]");
            let at_ns = self.time(&format!("{f}.at_s"), e.at_s, 1.0)?;
            let path = *path_ix
                .get(&e.path)
                .ok_or_else(|| self.err(&format!("{f}.path"), format!("unknown path {:?}", e.path)))?;
            let kind = match e.state.as_str() {
                "down" => PathEventKind::Down,
                "up" => PathEventKind::Up,
                "backup" => PathEventKind::Backup,
                "active" => PathEventKind::Active,
                other => {
                    return Err(self.err(
                        &format!("{f}.state"),
                        format!("expected \"down\", \"up\", \"backup\" or \"active\", got {other:?}"),
                    ))
                }
            };
            events.push(PathEvent { at_ns, path, kind });
        }

        Ok(events)
    }
}

/// Largest trace file read, bytes (a synthetic trace holds at most 20 M opportunities, about
/// 180 MB of text).
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

/// The text of a trace file: a regular file (not a device or a FIFO, which would never end or
/// block) of at most [`MAX_TRACE_BYTES`].
fn read_trace_file(p: &Path) -> Result<String, String> {
    use std::io::Read;
    let cannot = |e: &dyn std::fmt::Display| format!("cannot read trace file {}: {e}", p.display());
    let meta = std::fs::metadata(p).map_err(|e| cannot(&e))?;
    if !meta.is_file() {
        return Err(cannot(&"expected a regular file"));
    }
    if meta.len() > MAX_TRACE_BYTES {
        return Err(cannot(&format!("{} bytes, expected at most {MAX_TRACE_BYTES}", meta.len())));
    }
    let mut text = String::new();
    std::fs::File::open(p)
        .and_then(|f| f.take(MAX_TRACE_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| cannot(&e))?;
    if text.len() as u64 > MAX_TRACE_BYTES {
        return Err(cannot(&format!("expected at most {MAX_TRACE_BYTES} bytes")));
    }
    Ok(text)
}

/// `[sim]` once resolved.
pub(super) struct SimDefaults {
    name: String,
    duration_s: f64,
    sample_ms: f64,
    profile: Profile,
    seed: u64,
    energy_states: bool,
    stop_when_done: bool,
}
