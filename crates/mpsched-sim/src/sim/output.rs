//! Results of a run: summary.json and the flows, subflows, links and timeseries tables.

use mpsched_transport::observe::DecisionStats;
use mpsched_transport::{Instant, SlotStats, SubflowInfo};
use serde_json::{json, Value};

use super::totals::{ConnSums, SubflowSums, Totals};
use super::{RunStats, Sim};
use crate::fairness::jain_index;
use crate::table::Table;

/// Everything a run produces, in memory.
pub struct RunOutput {
    /// summary.json text (sorted keys, pretty, trailing newline).
    pub summary_json: String,
    /// The scenario with every default written out.
    pub resolved_toml: String,
    /// One row per flow (goodput, completion time, losses, energy, ...).
    pub flows: Table,
    /// One row per subflow of every flow.
    pub subflows: Table,
    /// One row per subflow of every running flow at every sample.
    pub timeseries: Table,
    /// One row per link (packets, drops, utilisation, queue occupancy).
    pub links: Table,
    /// One row per link at every sample: the bytes and packets in its queue (the packet being
    /// serialized is not in the queue).
    pub queues: Table,
    /// One row per `[[udp]]` flow (packets and bytes sent, received, lost; one-way delay),
    /// when the scenario has any.
    pub udp_flows: Option<Table>,
    /// One row per probe sent by a `kind = "probe"` flow (send, arrival and echo times, ns),
    /// when the scenario has any.
    pub probes: Option<Table>,
    /// Counters of the run.
    pub stats: RunStats,
    /// Per flow scheduled by a trained policy (its name), and per host controller
    /// (`host <label>`): the policy's decisions with their wall-clock latencies (not
    /// deterministic: kept out of the summary and the tables).
    pub decisions: Vec<(String, DecisionStats)>,
}

impl Sim {
    /// Results of the run so far.
    pub fn output(&mut self) -> RunOutput {
        let end = self.now;
        let mut flow_rows = Vec::new();
        let mut subflow_rows = Vec::new();
        for f in 0..self.sc.flows.len() {
            let row = self.flow_row(f, end, &mut subflow_rows);
            flow_rows.push(row);
        }
        let link_rows = self.link_rows(end);
        let stats = self.stats();
        let mut summary = json!({
            "scenario": self.sc.name,
            "seed": self.sc.seed,
            "profile": self.sc.profile.name(),
            "duration_s": self.sc.duration_ns as f64 / 1e9,
            "end_s": end as f64 / 1e9,
            "flows": flow_rows,
            "subflows": subflow_rows,
            "links": link_rows,
            "interfaces": self.interface_rows(),
            "fairness": self.fairness(&flow_rows, end),
            "stats": {"events": stats.events, "packets": stats.packets, "sim_seconds": stats.sim_ns as f64 / 1e9},
        });
        let decisions = self.decision_stats();
        if !decisions.is_empty() {
            summary["policies"] = self.policy_rows(&decisions);
        }
        let udp_rows = self.udp_rows(end);
        if !udp_rows.is_empty() {
            summary["udp_flows"] = Value::Array(udp_rows.clone());
        }
        if !self.sc.warnings.is_empty() {
            summary["warnings"] = json!(self.sc.warnings);
        }
        let timeseries = self.take_timeseries();
        let out = RunOutput {
            summary_json: serde_json::to_string_pretty(&summary).unwrap() + "\n",
            resolved_toml: self.sc.resolved_toml(),
            flows: Table::from_rows(&flow_rows, &[("size_bytes", false), ("fct_s", true), ("mean_transfer_s", true)]),
            subflows: Table::from_rows(&subflow_rows, &[]),
            timeseries,
            links: Table::from_rows(&link_rows, &[]),
            queues: {
                let names: Vec<&str> = self.links.iter().map(|l| l.name.as_str()).collect();
                std::mem::take(&mut self.queue_series).into_table(&names)
            },
            udp_flows: (!udp_rows.is_empty()).then(|| Table::from_rows(&udp_rows, &super::udp::UDP_NULLABLE)),
            probes: self.probe_table(),
            stats,
            decisions,
        };
        #[cfg(debug_assertions)]
        if let Err(e) = super::check_invariants(self, &out) {
            panic!("output invariant violated in {}: {e}", self.sc.name);
        }
        out
    }

    /// The summary's `fairness`: Jain's fairness index ([`jain_index`]) of the flows'
    /// `goodput_mbps` (bytes delivered over each flow's active time: the goodput of each flow
    /// over the run, not a mean over its transfers), over the multipath flows (more than one
    /// subflow: DRL-CC's Fig. 3b "calculated over all MPTCP flows") and over every flow. Flows
    /// that had not started by `end` are left out; an index with no flow, or with every goodput
    /// 0, is null.
    fn fairness(&self, flow_rows: &[Value], end: u64) -> Value {
        let (mut mptcp, mut all) = (Vec::new(), Vec::new());
        for (def, row) in self.sc.flows.iter().zip(flow_rows) {
            if def.start_ns >= end {
                continue;
            }
            let goodput = row["goodput_mbps"].as_f64().expect("goodput_mbps is a number");
            all.push(goodput);
            if def.paths.len() > 1 {
                mptcp.push(goodput);
            }
        }
        json!({
            "metric": "goodput_mbps",
            "jain_mptcp": jain_index(&mptcp), "mptcp_flows": mptcp.len(),
            "jain_all": jain_index(&all), "all_flows": all.len(),
        })
    }

    /// Each policy-scheduled flow's decisions over all its connections.
    fn decision_stats(&self) -> Vec<(String, DecisionStats)> {
        let mut out = Vec::new();
        for (f, rt) in self.flows.iter().enumerate() {
            let cur = self.eps[2 * f].conn.as_ref().and_then(|c| c.decision_stats());
            let mut d = match (&rt.decisions, cur) {
                (None, None) => continue,
                (Some(a), _) => a.clone(),
                (None, Some(_)) => DecisionStats::default(),
            };
            if let Some(c) = cur {
                d.merge(c);
            }
            out.push((self.sc.flows[f].name.clone(), d));
        }
        out.extend(self.host_decisions().map(|(label, d)| (format!("host {label}"), d.clone())));
        out
    }

    /// The summary's `policies`: per policy-scheduled flow, the policy's label, the SHA-256
    /// of its files and its decision count (deterministic; latencies are in
    /// [`RunOutput::decisions`]).
    fn policy_rows(&self, decisions: &[(String, DecisionStats)]) -> Value {
        let rows: Vec<Value> = decisions
            .iter()
            .map(|(name, d)| {
                if let Some(label) = name.strip_prefix("host ") {
                    let sha = mpsched_policy::policy_digest(label).and_then(Result::ok);
                    // A path policy (MPTCP-RL) is named by its flows' scheduler, a window policy by their cc.
                    let by_sched = self.sc.flows.iter().any(|f| f.scheduler.label() == label);
                    let key = if by_sched { "scheduler" } else { "cc" };
                    return json!({"host": self.host_flows(label), key: label, "sha256": sha, "decisions": d.decisions});
                }
                let def = self.sc.flows.iter().find(|f| &f.name == name).expect("a flow of the scenario");
                let label = def.scheduler.label();
                let sha = mpsched_policy::policy_digest(label).and_then(Result::ok);
                json!({"flow": name, "scheduler": label, "sha256": sha, "decisions": d.decisions})
            })
            .collect();
        Value::Array(rows)
    }

    /// Flow `f`'s row of the flows table at time `end`; its subflows' rows go to `subflow_rows`.
    fn flow_row(&mut self, f: usize, end: u64, subflow_rows: &mut Vec<Value>) -> Value {
        let now = Instant(end);
        let rcv = self.eps[2 * f + 1].conn.as_mut().map(|c| c.info_at(now)).unwrap_or_default();
        let snd = self.eps[2 * f].conn.as_mut().map(|c| c.info_at(now)).unwrap_or_default();
        let (tot, srtt_ms) = self.connection_totals(f, subflow_rows);
        let (def, rt) = (&self.sc.flows[f], &self.flows[f]);
        let delivered = rt.acc.delivered + rcv.bytes_delivered;
        let stop = rt.done_at.or(rt.stopped_at).unwrap_or(end);
        let active = stop.saturating_sub(def.start_ns) as f64 / 1e9;
        let goodput = if active > 0.0 { delivered as f64 * 8.0 / active / 1e6 } else { 0.0 };
        let path = def.paths.iter().map(|&p| self.sc.paths[p as usize].name.as_str()).collect::<Vec<_>>().join("+");
        let mean_transfer_s = if rt.transfers.is_empty() {
            None
        } else {
            Some(rt.transfers.iter().map(|(a, b)| (b - a) as f64 / 1e9).sum::<f64>() / rt.transfers.len() as f64)
        };
        let mut row = json!({
            "name": def.name, "path": path, "subflows": def.paths.len(), "cc": def.cc.label(),
            "scheduler": def.scheduler.label(), "start_s": def.start_ns as f64 / 1e9,
            "size_bytes": def.size, "completed": rt.done_at.is_some(),
            "fct_s": rt.done_at.map(|d| (d - def.start_ns) as f64 / 1e9),
            "bytes_delivered": delivered, "goodput_mbps": goodput,
            "retransmits": tot.retx, "losses": tot.lost, "packets_dropped": rt.data_drops,
            "rto_count": tot.rtos, "fast_recoveries": tot.frs,
            "srtt_ms": if srtt_ms.is_finite() { srtt_ms } else { 0.0 },
            "energy_j": rt.energy_j,
            "transfers": rt.transfers.len(),
            "mean_transfer_s": mean_transfer_s,
        });
        add_connection_columns(&mut row, &tot.conn.plus(&snd, &rcv), active, &tot.slots);
        row
    }

    /// Flow `f`'s counters summed over its earlier connections and the current one (the
    /// connection-level ones are added by the caller), and the smallest smoothed RTT of an
    /// established subflow (ms, infinite if none); pushes one row per subflow index to
    /// `subflow_rows`, its counters summed over the connections as well.
    fn connection_totals(&self, f: usize, subflow_rows: &mut Vec<Value>) -> (Totals, f64) {
        let acc = &self.flows[f].acc;
        let mut tot = acc.clone();
        let mut srtt_ms = f64::INFINITY;
        if let Some(c) = self.eps[2 * f].conn.as_ref() {
            for (i, s) in c.subflows() {
                let sl = c.slot_stats(i as usize);
                tot.add_subflow(i as usize, &s, &sl);
                if s.established {
                    srtt_ms = srtt_ms.min(s.srtt.as_millis_f64());
                }
                subflow_rows.push(self.subflow_row(f, i, &s, &acc.subflow(i as usize).plus(&s, &sl)));
            }
        }
        (tot, srtt_ms)
    }

    /// Row `i` of flow `f`'s subflows: state (`s`) of the current connection, counters (`sum`)
    /// over every connection of the flow.
    fn subflow_row(&self, f: usize, i: u8, s: &SubflowInfo, sum: &SubflowSums) -> Value {
        let def = &self.sc.flows[f];
        let p = def.paths[i as usize] as usize;
        let sl = &sum.slots;
        json!({
            "flow": def.name, "subflow": i, "path": self.sc.paths[p].name,
            "backup": def.backup[i as usize], "established": s.established,
            "bytes_sent": sum.bytes_sent, "bytes_retransmitted": sum.bytes_retransmitted,
            "bytes_acked": sum.delivered, "segments_lost": sum.segments_lost,
            "rto_count": sum.rto_count, "fast_recoveries": sum.fast_recoveries,
            "srtt_ms": s.srtt.as_millis_f64(), "min_rtt_ms": s.min_rtt.as_millis_f64(),
            "cwnd_bytes": s.cwnd,
            "slots": sl.slots, "slot_bw_mbps": sl.mean_bw_mbps(), "slot_srtt_ms": sl.mean_srtt_ms(),
        })
    }

    /// One row per link at time `end`.
    fn link_rows(&mut self, end: u64) -> Vec<Value> {
        let mut rows = Vec::new();
        for l in self.links.iter_mut() {
            l.settle_to(end);
            let cap = l.capacity_bytes(end);
            let s = l.stats;
            let (mean_bytes, mean_packets) = l.mean_queue(end);
            rows.push(json!({
                "name": l.name, "packets_sent": s.packets_out, "bytes_delivered": s.bytes_out,
                "packets_dropped_queue": s.dropped_queue, "packets_dropped_loss": s.dropped_loss,
                "packets_dropped_outage": s.dropped_outage, "max_queue_bytes": s.max_queue_bytes,
                "utilization": if cap > 0.0 { s.bytes_out as f64 / cap } else { 0.0 },
                "max_queue_packets": s.max_queue_packets, "mean_queue_bytes": mean_bytes,
                "mean_queue_packets": mean_packets,
            }));
        }
        rows
    }

    /// One row per path with an energy model: the interface's energy by state.
    fn interface_rows(&self) -> Vec<Value> {
        let paths = self.sc.paths.iter().enumerate().filter(|(_, p)| p.energy.is_some());
        paths
            .map(|(i, p)| {
                let e = &self.energy[i].0;
                json!({
                    "path": p.name, "energy_j": e.total_j(), "active_j": e.active_j,
                    "promotion_j": e.promotion_j, "tail_j": e.tail_j, "idle_j": e.idle_j, "active_s": e.active_s,
                })
            })
            .collect()
    }
}

/// Appends the last columns of a flow row (the key order is the table's column order): the
/// sender's and receiver's connection-level counters (`active`: the flow's active time in
/// seconds, for the mean out-of-order bytes) and the scheduler's slot statistics.
fn add_connection_columns(row: &mut Value, c: &ConnSums, active: f64, slots: &SlotStats) {
    let mean_ooo = if active > 0.0 { c.ooo_byte_seconds / active } else { 0.0 };
    let extra = json!({
        "reinjected_bytes": c.reinjected_bytes, "redundant_bytes": c.redundant_bytes,
        "opportunistic_retransmissions": c.opportunistic_retransmissions,
        "penalizations": c.penalizations, "duplicate_bytes": c.duplicate_bytes,
        "mean_ooo_bytes": mean_ooo, "rwnd_full_s": c.rwnd_full_seconds,
        "send_blocked_s": c.send_blocked_seconds,
        "slots": slots.slots, "slot_bw_mbps": slots.mean_bw_mbps(), "slot_srtt_ms": slots.mean_srtt_ms(),
    });
    let (Value::Object(row), Value::Object(extra)) = (row, extra) else { unreachable!("json objects") };
    row.extend(extra);
}
