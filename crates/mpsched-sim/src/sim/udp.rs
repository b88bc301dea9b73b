//! Flows without congestion control (`[[udp]]`): constant-bit-rate and on/off sources and
//! ping-like probes. A packet carries its number in `seg.seq` and its send time (ns) in
//! `seg.ts_val`; the receiver records the one-way delay of every packet, and echoes a probe
//! back over the path's reverse links (ICMP echo, RFC 792), where its arrival gives the RTT.

use mpsched_transport::Segment;
use serde_json::{json, Value};

use super::{Packet, Sim};
use crate::event::Kind;
use crate::rng::Rng;
use crate::scenario::{UdpFlowDef, UdpKind};
use crate::table::{Column, Table};

/// One probe's fate, times in ns.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ProbeRec {
    sent: u64,
    arrival: Option<u64>,
    echo: Option<u64>,
    lost: bool,
    echo_lost: bool,
}

/// A UDP flow's sending state and counters.
pub(super) struct UdpRt {
    /// Packets sent in the current on period (all of them for CBR and probes).
    k: u64,
    /// Start and end of the current on period (end `u64::MAX` unless on/off).
    on_start: u64,
    on_end: u64,
    /// The on/off periods' stream (`udp/<name>/onoff`), when exponential.
    rng: Option<Rng>,
    sent: u64,
    received: u64,
    lost: u64,
    /// One-way delay of every packet received, ns, in arrival order.
    delays: Vec<u64>,
    /// Probes only: one record per probe sent.
    probes: Vec<ProbeRec>,
}

impl UdpRt {
    /// The state of flow `def` before its start, its first on period drawn (scenario `seed`).
    pub(super) fn new(def: &UdpFlowDef, seed: u64) -> Self {
        let mut rt = UdpRt {
            k: 0,
            on_start: def.start_ns,
            on_end: u64::MAX,
            rng: None,
            sent: 0,
            received: 0,
            lost: 0,
            delays: Vec::new(),
            probes: Vec::new(),
        };
        if let UdpKind::OnOff { on_ns, exponential, .. } = def.kind {
            if exponential {
                rt.rng = Some(Rng::stream(seed, &format!("udp/{}/onoff", def.name)));
            }
            rt.on_end = def.start_ns.saturating_add(rt.period(on_ns));
        }
        rt
    }

    /// A period of mean `mean_ns`: fixed, or drawn from the exponential distribution (at least
    /// 1 ns, so every on period holds its first packet).
    fn period(&mut self, mean_ns: u64) -> u64 {
        match self.rng.as_mut() {
            None => mean_ns,
            Some(r) => ((-(1.0 - r.uniform()).ln() * mean_ns as f64).round() as u64).max(1),
        }
    }

    /// Time of the next packet after one sent: packet `k` of an on period at
    /// `on_start + ⌊k × bits × 10^9 / rate⌋` (no drift from rounding), a probe every interval;
    /// past an on period's end, the first packet of the next one.
    fn next_send(&mut self, def: &UdpFlowDef) -> u64 {
        self.k += 1;
        let after = |k: u64, period_num: u128, period_den: u128| {
            (k as u128 * period_num / period_den).min(u64::MAX as u128) as u64
        };
        let offset = match def.kind {
            UdpKind::Probe { interval_ns } => after(self.k, interval_ns as u128, 1),
            _ => after(self.k, def.packet_bytes as u128 * 8 * 1_000_000_000, def.rate_bps as u128),
        };
        let t = self.on_start.saturating_add(offset);
        match def.kind {
            UdpKind::OnOff { on_ns, off_ns, .. } if t >= self.on_end => {
                let off = self.period(off_ns);
                self.on_start = self.on_end.saturating_add(off);
                let on = self.period(on_ns);
                self.on_end = self.on_start.saturating_add(on);
                self.k = 0;
                self.on_start
            }
            _ => t,
        }
    }
}

impl Sim {
    /// The first send of every UDP flow that starts before it stops.
    pub(super) fn schedule_udp(&mut self) {
        for (u, def) in self.sc.udp.iter().enumerate() {
            if def.stop_ns.is_none_or(|s| def.start_ns < s) {
                self.ev.push(def.start_ns, Kind::UdpSend, u as u32, 0);
            }
        }
    }

    /// UDP flow `u` sends its next packet and schedules the one after (if before its stop).
    pub(super) fn udp_send(&mut self, u: usize) {
        let def = &self.sc.udp[u];
        let (path, size) = (def.path, def.packet_bytes);
        let rt = &mut self.udp[u];
        let seg = Segment { seq: rt.sent, ts_val: self.now, ..Segment::default() };
        if matches!(def.kind, UdpKind::Probe { .. }) {
            rt.probes.push(ProbeRec { sent: self.now, ..ProbeRec::default() });
        }
        rt.sent += 1;
        let next = rt.next_send(def);
        if def.stop_ns.is_none_or(|s| next < s) {
            self.ev.push(next, Kind::UdpSend, u as u32, 0);
        }
        self.udp_in_flight += 1;
        let p = self.alloc(Packet { flow: u as u32, path, to_server: true, hop: 0, size, seg, udp: true, conn: 0 });
        let first = self.sc.paths[path as usize].fwd[0] as usize;
        self.offer(first, p, size);
    }

    /// A UDP packet reached its end of the path: the receiver records it (and echoes a probe),
    /// or the sender records a probe's echo.
    pub(super) fn udp_arrive(&mut self, pk: Packet) {
        let u = pk.flow as usize;
        self.udp_in_flight -= 1;
        let rt = &mut self.udp[u];
        let n = pk.seg.seq as usize;
        if !pk.to_server {
            rt.probes[n].echo = Some(self.now);
            return;
        }
        rt.received += 1;
        rt.delays.push(self.now - pk.seg.ts_val);
        if let Some(rec) = rt.probes.get_mut(n) {
            rec.arrival = Some(self.now);
            let path = pk.path;
            self.udp_in_flight += 1;
            let echo = self.alloc(Packet { to_server: false, hop: 0, ..pk });
            let first = self.sc.paths[path as usize].rev[0] as usize;
            self.offer(first, echo, pk.size);
        }
    }

    /// A UDP packet was dropped by a link: a loss of the flow, or of a probe's echo.
    pub(super) fn udp_dropped(&mut self, pk: &Packet) {
        self.udp_in_flight -= 1;
        let rt = &mut self.udp[pk.flow as usize];
        let rec = rt.probes.get_mut(pk.seg.seq as usize);
        if pk.to_server {
            rt.lost += 1;
            if let Some(r) = rec {
                r.lost = true;
            }
        } else if let Some(r) = rec {
            r.echo_lost = true;
        }
    }

    /// Whether every UDP flow is past its stop time (a flow without one runs to the end) and
    /// no UDP packet (or echo) is still on its way.
    pub(super) fn udp_stopped(&self) -> bool {
        self.udp_in_flight == 0 && self.sc.udp.iter().all(|d| d.stop_ns.is_some_and(|s| self.now >= s))
    }

    /// One-way delays (ns) of UDP flow `u`'s packets received so far, in arrival order.
    pub fn udp_delays_ns(&self, u: usize) -> &[u64] {
        &self.udp[u].delays
    }

    /// UDP flow `u`'s packets (sent, received, dropped by a link) so far.
    pub fn udp_counts(&self, u: usize) -> (u64, u64, u64) {
        let rt = &self.udp[u];
        (rt.sent, rt.received, rt.lost)
    }

    /// The `udp_flows` rows at time `end` (none without UDP flows).
    pub(super) fn udp_rows(&self, end: u64) -> Vec<Value> {
        self.sc
            .udp
            .iter()
            .zip(&self.udp)
            .map(|(def, rt)| udp_row(&self.sc.paths[def.path as usize].name, def, rt, end))
            .collect()
    }

    /// The `probes` table: one row per probe sent (none without probe flows).
    pub(super) fn probe_table(&self) -> Option<Table> {
        let probes = self.sc.udp.iter().zip(&self.udp).filter(|(d, _)| matches!(d.kind, UdpKind::Probe { .. }));
        let mut rows: Vec<(&str, u64, &ProbeRec)> = Vec::new();
        for (def, rt) in probes.clone() {
            rows.extend(rt.probes.iter().enumerate().map(|(i, r)| (def.name.as_str(), i as u64, r)));
        }
        if probes.count() == 0 {
            return None;
        }
        let ns = |v: Option<u64>| v.map(|t| t as i64);
        let columns = vec![
            ("flow", Column::Str(rows.iter().map(|r| r.0.to_string()).collect())),
            ("seq", Column::I64(rows.iter().map(|r| r.1 as i64).collect())),
            ("send_ns", Column::I64(rows.iter().map(|r| r.2.sent as i64).collect())),
            ("arrival_ns", Column::OptI64(rows.iter().map(|r| ns(r.2.arrival)).collect())),
            ("owd_ns", Column::OptI64(rows.iter().map(|r| ns(r.2.arrival.map(|a| a - r.2.sent))).collect())),
            ("echo_ns", Column::OptI64(rows.iter().map(|r| ns(r.2.echo)).collect())),
            ("rtt_ns", Column::OptI64(rows.iter().map(|r| ns(r.2.echo.map(|a| a - r.2.sent))).collect())),
            ("lost", Column::Bool(rows.iter().map(|r| r.2.lost).collect())),
            ("echo_lost", Column::Bool(rows.iter().map(|r| r.2.echo_lost).collect())),
        ];
        Some(Table { columns: columns.into_iter().map(|(n, c)| (n.to_string(), c)).collect() })
    }
}

/// Nearest-rank quantile `q` of the sorted `v` (ms), null when empty.
fn quantile_ms(v: &[u64], q: f64) -> Option<f64> {
    let n = v.len();
    (n > 0).then(|| v[((q * n as f64).ceil() as usize).clamp(1, n) - 1] as f64 / 1e6)
}

/// One row of the `udp_flows` table: counters, the receiver's rate over the flow's active
/// time, and the one-way delay's mean and nearest-rank quantiles.
fn udp_row(path: &str, def: &UdpFlowDef, rt: &UdpRt, end: u64) -> Value {
    let size = def.packet_bytes as u64;
    let stop = def.stop_ns.map_or(end, |s| s.min(end));
    let active = stop.saturating_sub(def.start_ns) as f64 / 1e9;
    let mut sorted = rt.delays.clone();
    sorted.sort_unstable();
    let mean = (!sorted.is_empty()).then(|| sorted.iter().map(|&d| d as f64).sum::<f64>() / sorted.len() as f64 / 1e6);
    let rate_mbps = match def.kind {
        UdpKind::Probe { interval_ns } => size as f64 * 8.0 / interval_ns as f64 * 1e3,
        _ => def.rate_bps as f64 / 1e6,
    };
    let rtts: Vec<f64> = rt.probes.iter().filter_map(|r| r.echo.map(|e| (e - r.sent) as f64 / 1e6)).collect();
    json!({
        "name": def.name, "kind": def.kind.name(), "path": path,
        "start_s": def.start_ns as f64 / 1e9, "rate_mbps": rate_mbps, "packet_bytes": size,
        "packets_sent": rt.sent, "packets_received": rt.received, "packets_lost": rt.lost,
        "packets_in_flight": rt.sent - rt.received - rt.lost,
        "bytes_sent": rt.sent * size, "bytes_received": rt.received * size, "bytes_lost": rt.lost * size,
        "loss_rate": if rt.sent > 0 { rt.lost as f64 / rt.sent as f64 } else { 0.0 },
        "received_mbps": if active > 0.0 { (rt.received * size) as f64 * 8.0 / active / 1e6 } else { 0.0 },
        "owd_mean_ms": mean, "owd_p50_ms": quantile_ms(&sorted, 0.5), "owd_p99_ms": quantile_ms(&sorted, 0.99),
        "owd_max_ms": sorted.last().map(|&d| d as f64 / 1e6),
        "rtt_mean_ms": (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64),
        "rtt_max_ms": rtts.iter().copied().reduce(f64::max),
    })
}

/// Columns of the `udp_flows` table that may be null, all floats.
pub(super) const UDP_NULLABLE: [(&str, bool); 6] = [
    ("owd_mean_ms", true),
    ("owd_p50_ms", true),
    ("owd_p99_ms", true),
    ("owd_max_ms", true),
    ("rtt_mean_ms", true),
    ("rtt_max_ms", true),
];
