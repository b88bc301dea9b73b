//! Periodic samples: the timeseries table's rows and the per-interface energy accounting.

use mpsched_transport::Instant;

use super::Sim;
use crate::table::{Column, Table};

/// Timeseries accumulated at each sample: one row per subflow of every running flow.
///
/// Rows are kept as structs and turned into columns when the table is built: a push per column
/// (nineteen length checks and write streams per row) showed in the profile of many flows.
#[derive(Default)]
pub(super) struct Series {
    rows: Vec<Row>,
}

/// One timeseries row, as sampled; [`Series::into_table`] converts it to the output columns.
#[derive(Clone, Copy)]
struct Row {
    time_s: f64,
    /// Flow index; the names are written when the table is built (a `String` clone per row
    /// cost an allocation per subflow per sample).
    flow: u32,
    subflow: u32,
    cwnd: u64,
    /// Raw: `None` in the table when it is at least `i64::MAX` (not set).
    ssthresh: u64,
    srtt_ms: f64,
    rttvar_ms: f64,
    rto_ms: f64,
    inflight: u64,
    throughput: f64,
    goodput: f64,
    flow_goodput: f64,
    ooo_bytes: u64,
    rwnd_full_frac: f64,
    losses: u64,
    retransmits: u64,
    slots: u64,
    slot_bw_mbps: f64,
    slot_srtt_ms: f64,
}

impl Sim {
    /// Integrates each interface's energy over the sample interval that just ended and
    /// attributes the transfer energy to flows in proportion to the bytes they moved on it.
    pub(super) fn account_energy(&mut self) {
        for (p, path) in self.sc.paths.iter().enumerate() {
            let Some(params) = path.energy else { continue };
            let (down, up) = self.path_device_bytes(p);
            let (ie, prev_down, prev_up) = &mut self.energy[p];
            let e = ie.bin(&params, self.now, self.sc.sample_ns, up - *prev_up, down - *prev_down);
            (*prev_down, *prev_up) = (down, up);
            if e > 0.0 {
                let users = self.bin_bytes.iter().filter(|b| b.0 as usize == p).count();
                let total: u64 = self.bin_bytes.iter().filter(|b| b.0 as usize == p).map(|b| b.2).sum();
                for &(q, f, bytes) in &self.bin_bytes {
                    if q as usize == p {
                        // By bytes moved; a bin with only handshake/ACK traffic is split evenly.
                        let share = if total > 0 { bytes as f64 / total as f64 } else { 1.0 / users as f64 };
                        self.flows[f as usize].energy_j += e * share;
                    }
                }
            }
        }
        self.bin_bytes.clear();
    }

    pub(super) fn sample(&mut self) {
        self.settle_links();
        self.sample_flows();
        self.sample_queues();
        self.account_energy();
    }

    pub(super) fn sample_flows(&mut self) {
        let dt = self.sc.sample_ns as f64 / 1e9;
        let t = self.now as f64 / 1e9;
        let to_mbps = |bytes: u64| bytes as f64 * 8.0 / dt / 1e6;
        for (f, def) in self.sc.flows.iter().enumerate() {
            let rt = &mut self.flows[f];
            // Not started yet, or between two downloads of a repeated transfer.
            if !rt.started || self.eps[2 * f].conn.is_none() {
                continue;
            }
            // Stopped before the interval that ends now: no row (the sample right after the
            // stop still counts what was delivered before it).
            if rt.stopped_at.is_some_and(|s| s + self.sc.sample_ns <= self.now) {
                continue;
            }
            let now = Instant(self.now);
            let rcv = self.eps[2 * f + 1].conn.as_mut().map(|c| c.sample_at(now)).unwrap_or_default();
            let app = rcv.bytes_delivered;
            let flow_goodput = to_mbps(app - rt.prev_app);
            rt.prev_app = app;
            let full_frac = ((rcv.rwnd_full_seconds - rt.prev_full) / dt).clamp(0.0, 1.0);
            rt.prev_full = rcv.rwnd_full_seconds;
            let Some(conn) = self.eps[2 * f].conn.as_ref() else { continue };
            for i in 0..conn.subflow_count() {
                let s = conn.subflow_sample(i);
                let prev = rt.prev[i];
                let sl = conn.slot_stats(i);
                let d = sl.since(&rt.prev_slots[i]);
                self.series.rows.push(Row {
                    time_s: t,
                    flow: f as u32,
                    subflow: i as u32,
                    cwnd: s.cwnd,
                    ssthresh: s.ssthresh,
                    srtt_ms: s.srtt.as_millis_f64(),
                    rttvar_ms: s.rttvar.as_millis_f64(),
                    rto_ms: s.rto.as_millis_f64(),
                    inflight: s.pipe,
                    throughput: to_mbps(s.bytes_sent - prev.0),
                    goodput: to_mbps(s.delivered - prev.1),
                    flow_goodput,
                    ooo_bytes: rcv.ooo_bytes,
                    rwnd_full_frac: full_frac,
                    losses: s.segments_lost - prev.2,
                    retransmits: s.segments_retransmitted - prev.3,
                    slots: d.measured,
                    slot_bw_mbps: d.mean_bw_mbps(),
                    slot_srtt_ms: d.mean_srtt_ms(),
                });
                self.bin_bytes.push((def.paths[i], f as u32, s.delivered - prev.1));
                rt.prev[i] = (s.bytes_sent, s.delivered, s.segments_lost, s.segments_retransmitted);
                rt.prev_slots[i] = sl;
            }
        }
    }
}

/// Link queue occupancy at each sample: one row per link.
#[derive(Default)]
pub(super) struct QueueSeries {
    time_s: Vec<f64>,
    link: Vec<u32>,
    bytes: Vec<i64>,
    packets: Vec<i64>,
}

impl Sim {
    /// One row per link: the bytes and packets waiting in its queue now.
    fn sample_queues(&mut self) {
        let t = self.now as f64 / 1e9;
        let q = &mut self.queue_series;
        for (i, l) in self.links.iter().enumerate() {
            q.time_s.push(t);
            q.link.push(i as u32);
            q.bytes.push(l.queued_bytes() as i64);
            q.packets.push(l.queued_packets() as i64);
        }
    }
}

impl QueueSeries {
    /// The queues table (`time_s`, `link`, `queue_bytes`, `queue_packets`); `names` are the
    /// links' names by index.
    pub(super) fn into_table(self, names: &[&str]) -> Table {
        let link = self.link.iter().map(|&l| names[l as usize].to_owned()).collect();
        Table {
            columns: vec![
                ("time_s".into(), Column::F64(self.time_s)),
                ("link".into(), Column::Str(link)),
                ("queue_bytes".into(), Column::I64(self.bytes)),
                ("queue_packets".into(), Column::I64(self.packets)),
            ],
        }
    }
}

impl Series {
    /// Rows so far.
    pub(super) fn rows(&self) -> usize {
        self.rows.len()
    }

    /// The timeseries table (columns in output order); `names` are the flows' names by index.
    pub(super) fn into_table(self, names: &[&str]) -> Table {
        let r = &self.rows;
        let f64s = |get: fn(&Row) -> f64| Column::F64(r.iter().map(get).collect());
        let i64s = |get: fn(&Row) -> u64| Column::I64(r.iter().map(|x| get(x) as i64).collect());
        let flow = r.iter().map(|x| names[x.flow as usize].to_owned()).collect();
        let ssthresh =
            r.iter().map(|x| if x.ssthresh >= i64::MAX as u64 { None } else { Some(x.ssthresh as i64) }).collect();
        Table {
            columns: vec![
                ("time_s".into(), f64s(|x| x.time_s)),
                ("flow".into(), Column::Str(flow)),
                ("subflow".into(), i64s(|x| x.subflow as u64)),
                ("cwnd_bytes".into(), i64s(|x| x.cwnd)),
                ("ssthresh_bytes".into(), Column::OptI64(ssthresh)),
                ("srtt_ms".into(), f64s(|x| x.srtt_ms)),
                ("rttvar_ms".into(), f64s(|x| x.rttvar_ms)),
                ("rto_ms".into(), f64s(|x| x.rto_ms)),
                ("inflight_bytes".into(), i64s(|x| x.inflight)),
                ("throughput_mbps".into(), f64s(|x| x.throughput)),
                ("goodput_mbps".into(), f64s(|x| x.goodput)),
                ("flow_goodput_mbps".into(), f64s(|x| x.flow_goodput)),
                ("ooo_bytes".into(), i64s(|x| x.ooo_bytes)),
                ("rwnd_full_frac".into(), f64s(|x| x.rwnd_full_frac)),
                ("losses".into(), i64s(|x| x.losses)),
                ("retransmits".into(), i64s(|x| x.retransmits)),
                ("slots".into(), i64s(|x| x.slots)),
                ("slot_bw_mbps".into(), f64s(|x| x.slot_bw_mbps)),
                ("slot_srtt_ms".into(), f64s(|x| x.slot_srtt_ms)),
            ],
        }
    }
}
