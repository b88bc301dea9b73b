//! `[[flows]]`: paths, algorithms, the application's source, decision points and the subflows'
//! TCP settings, validated in the order the fields are documented and written back with every
//! default for the resolved copy.

use std::collections::BTreeMap;

use mpsched_transport::cc::CcAlgo;
use mpsched_transport::sched::SchedAlgo;
use mpsched_transport::Duration;

use super::resolve::Resolver;
use super::*;
use crate::algos;

impl Resolver<'_> {
    /// Every flow (workloads already expanded into flows).
    pub(super) fn resolve_flows(
        &self,
        file: &mut ScenarioFile,
        path_ix: &BTreeMap<String, u16>,
        profile: Profile,
    ) -> Result<Vec<FlowDef>, ScenarioError> {
        if file.flows.len() > MAX_FLOWS {
            return Err(self.err("flows", format!("expected at most {MAX_FLOWS} flows, got {}", file.flows.len())));
        }
        let mut flows = Vec::with_capacity(file.flows.len());
        let mut flow_names = BTreeMap::new();
        for (i, fl) in file.flows.iter_mut().enumerate() {
            let f = format!("flows[{i}]");
            if flow_names.insert(fl.name.clone(), i).is_some() {
                return Err(self.err(&format!("{f}.name"), format!("duplicate flow name {:?}", fl.name)));
            }
            flows.push(self.resolve_flow(&f, fl, path_ix, profile)?);
        }
        if flows.is_empty() && file.udp.is_empty() {
            return Err(self.err("flows", "expected at least one [[flows]] entry"));
        }
        Ok(flows)
    }

    fn resolve_flow(
        &self,
        f: &str,
        fl: &mut FlowSpec,
        path_ix: &BTreeMap<String, u16>,
        profile: Profile,
    ) -> Result<FlowDef, ScenarioError> {
        let (paths, backup) = self.flow_paths(f, fl, path_ix)?;
        let sched_text = algos::anchor_path::<SchedAlgo>(
            fl.scheduler.as_deref().unwrap_or(profile.default_scheduler()),
            &self.base_dir,
        );
        let scheduler = algos::resolve::<SchedAlgo>(
            &sched_text,
            fl.scheduler_params.as_ref(),
            &format!("{f}.scheduler"),
            &format!("{f}.scheduler_params"),
        )
        .map_err(|(field, e)| self.err(&field, e))?;
        let cc = algos::resolve::<CcAlgo>(
            fl.cc.as_deref().unwrap_or(profile.default_cc()),
            fl.cc_params.as_ref(),
            &format!("{f}.cc"),
            &format!("{f}.cc_params"),
        )
        .map_err(|(field, e)| self.err(&field, e))?;
        let start = fl.start_s.unwrap_or(0.0);
        let (start_ns, stop_ns) = self.active_window(f, start, fl.stop_s)?;
        if fl.size_bytes == Some(0) {
            return Err(
                self.err(&format!("{f}.size_bytes"), "expected a positive size (omit it for an unlimited flow)")
            );
        }
        let decision = self.flow_decision(f, fl)?;
        let app = self.flow_app(f, fl)?;
        let repeat = fl.repeat.unwrap_or(1);
        if repeat == 0 {
            return Err(self.err(&format!("{f}.repeat"), "expected at least 1"));
        }
        if repeat > 1 && (fl.size_bytes.is_none() || app != App::Greedy) {
            return Err(self
                .err(&format!("{f}.repeat"), "repeated downloads need size_bytes and no app_rate_mbps/chunk source"));
        }
        let repeat_gap_ns = self.time(&format!("{f}.repeat_gap_s"), fl.repeat_gap_s.unwrap_or(0.0), 1.0)?;
        let sub = self.flow_subflow_config(f, fl, profile.subflow_defaults())?;
        let rcv_buf = fl.rcv_buf_bytes.unwrap_or(DEFAULT_RCV_BUF);
        if rcv_buf < 2 * sub.mss as u64 {
            return Err(self.err(
                &format!("{f}.rcv_buf_bytes"),
                format!("expected at least two segments ({} bytes), got {rcv_buf}", 2 * sub.mss),
            ));
        }
        // Write the defaults back for the resolved copy.
        fl.cc = Some(cc.label().to_string());
        fl.scheduler = Some(scheduler.label().to_string());
        fl.start_s = Some(start);
        fl.mss = Some(sub.mss);
        fl.init_cwnd = Some(sub.init_cwnd);
        fl.min_rto_ms = Some(sub.min_rto.as_millis_f64());
        fl.delayed_ack = Some(sub.delayed_ack);
        fl.delayed_ack_ms = Some(sub.delayed_ack_timeout.as_millis_f64());
        fl.rcv_buf_bytes = Some(rcv_buf);
        fl.abc = Some(sub.abc);
        Ok(FlowDef {
            name: fl.name.clone(),
            paths,
            backup,
            scheduler,
            decision,
            app,
            repeat,
            repeat_gap_ns,
            start_ns,
            stop_ns,
            size: fl.size_bytes,
            cc,
            subflow: sub,
            rcv_buf,
        })
    }

    /// `path` or `paths` (1 to 8, distinct) as path ids, and which are `backup`.
    fn flow_paths(
        &self,
        f: &str,
        fl: &FlowSpec,
        path_ix: &BTreeMap<String, u16>,
    ) -> Result<(Vec<u16>, Vec<bool>), ScenarioError> {
        let names: Vec<String> = match (&fl.path, &fl.paths) {
            (Some(p), None) => vec![p.clone()],
            (None, Some(ps)) if !ps.is_empty() && ps.len() <= 8 => ps.clone(),
            (None, Some(ps)) => {
                return Err(self.err(&format!("{f}.paths"), format!("expected 1 to 8 path names, got {}", ps.len())))
            }
            (Some(_), Some(_)) => {
                return Err(self.err(f, "give either `path` (single-path TCP) or `paths` (multipath), not both"))
            }
            (None, None) => {
                return Err(
                    self.err(&format!("{f}.path"), "missing: expected `path = \"name\"` or `paths = [\"a\", \"b\"]`")
                )
            }
        };
        let mut paths = Vec::with_capacity(names.len());
        for n in &names {
            let field = if fl.paths.is_some() { "paths" } else { "path" };
            let id = *path_ix.get(n).ok_or_else(|| self.err(&format!("{f}.{field}"), format!("unknown path {n:?}")))?;
            if paths.contains(&id) {
                return Err(self.err(&format!("{f}.paths"), format!("path {n:?} listed twice")));
            }
            paths.push(id);
        }
        let mut backup = vec![false; names.len()];
        for b in fl.backup.iter().flatten() {
            let k = names.iter().position(|n| n == b).ok_or_else(|| {
                self.err(&format!("{f}.backup"), format!("{b:?} is not one of this flow's paths {names:?}"))
            })?;
            backup[k] = true;
        }
        Ok((paths, backup))
    }

    /// `decision_interval_ms` or `decision_every_min_rtt`.
    fn flow_decision(&self, f: &str, fl: &FlowSpec) -> Result<DecisionInterval, ScenarioError> {
        Ok(match (fl.decision_interval_ms, fl.decision_every_min_rtt.unwrap_or(false)) {
            (Some(_), true) => {
                return Err(self.err(f, "give either decision_interval_ms or decision_every_min_rtt = true, not both"))
            }
            (Some(ms), false) => {
                DecisionInterval::Fixed(self.duration(&format!("{f}.decision_interval_ms"), ms, 1e-3)?)
            }
            (None, true) => DecisionInterval::MinRtt,
            (None, false) => DecisionInterval::None,
        })
    }

    /// The sending application: greedy, constant rate, or chunks.
    fn flow_app(&self, f: &str, fl: &FlowSpec) -> Result<App, ScenarioError> {
        Ok(match (fl.app_rate_mbps, fl.chunk_bytes, fl.chunk_period_ms) {
            (None, None, None) => App::Greedy,
            (Some(r), None, None) => App::Cbr { rate_bps: self.rate_bps(&format!("{f}.app_rate_mbps"), r)? },
            (None, Some(b), Some(p)) if b > 0 => {
                App::Chunks { bytes: b, period_ns: self.duration(&format!("{f}.chunk_period_ms"), p, 1e-3)? }
            }
            (None, Some(_), Some(_)) => return Err(self.err(&format!("{f}.chunk_bytes"), "expected > 0")),
            (None, _, _) => return Err(self.err(f, "chunked source: give both chunk_bytes and chunk_period_ms")),
            (Some(_), _, _) => {
                return Err(
                    self.err(f, "give either app_rate_mbps (constant rate) or chunk_bytes/chunk_period_ms, not both")
                )
            }
        })
    }

    /// The profile's subflow settings with the flow's overrides (mss, initial window, min RTO,
    /// delayed ACKs, byte counting).
    fn flow_subflow_config(
        &self,
        f: &str,
        fl: &FlowSpec,
        mut sub: SubflowConfig,
    ) -> Result<SubflowConfig, ScenarioError> {
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
            sub.min_rto = Duration(self.duration(&format!("{f}.min_rto_ms"), r, 1e-3)?);
        }
        if let Some(d) = fl.delayed_ack {
            sub.delayed_ack = d;
        }
        if let Some(d) = fl.delayed_ack_ms {
            sub.delayed_ack_timeout = Duration(self.duration(&format!("{f}.delayed_ack_ms"), d, 1e-3)?);
        }
        if let Some(a) = fl.abc {
            sub.abc = a;
        }
        Ok(sub)
    }
}
