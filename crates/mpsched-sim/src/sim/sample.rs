//! Periodic samples: the timeseries table's rows and the per-interface energy accounting.

use mpsched_transport::Instant;

use super::series::Sampled;
use super::Sim;
use crate::table::{Column, Table};

impl Sim {
    /// Integrates each interface's energy over the sample interval that just ended and
    /// attributes the transfer energy to flows in proportion to the bytes they moved on it.
    pub(super) fn account_energy(&mut self) {
        // No path with an energy model: nothing was collected.
        let Some(mut bin_bytes) = self.bin_bytes.take() else { return };
        for (p, path) in self.sc.paths.iter().enumerate() {
            let Some(params) = path.energy else { continue };
            let (down, up) = self.path_device_bytes(p);
            let (ie, prev_down, prev_up) = &mut self.energy[p];
            let e = ie.bin(&params, self.now, self.sc.sample_ns, up - *prev_up, down - *prev_down);
            (*prev_down, *prev_up) = (down, up);
            if e > 0.0 {
                let users = bin_bytes.iter().filter(|b| b.0 as usize == p).count();
                let total: u64 = bin_bytes.iter().filter(|b| b.0 as usize == p).map(|b| b.2).sum();
                for &(q, f, bytes) in bin_bytes.iter() {
                    if q as usize == p {
                        // By bytes moved; a bin with only handshake/ACK traffic is split evenly.
                        let share = if total > 0 { bytes as f64 / total as f64 } else { 1.0 / users as f64 };
                        self.flows[f as usize].energy_j += e * share;
                    }
                }
            }
        }
        bin_bytes.clear();
        self.bin_bytes = Some(bin_bytes);
    }

    pub(super) fn sample(&mut self) {
        self.settle_links();
        self.sample_flows();
        self.sample_queues();
        self.account_energy();
    }

    pub(super) fn sample_flows(&mut self) {
        let dt = self.sc.sample_ns as f64 / 1e9;
        self.series.start_sample(self.now);
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
            let app = rcv.bytes_delivered - rt.prev_app;
            rt.prev_app = rcv.bytes_delivered;
            let full_frac = ((rcv.rwnd_full_seconds - rt.prev_full) / dt).clamp(0.0, 1.0);
            rt.prev_full = rcv.rwnd_full_seconds;
            let Some(conn) = self.eps[2 * f].conn.as_ref() else { continue };
            for i in 0..conn.subflow_count() {
                let s = conn.subflow_sample(i);
                let prev = rt.prev[i];
                let sl = conn.slot_stats(i);
                let d = sl.since(&rt.prev_slots[i]);
                self.series.push(Sampled {
                    flow: f as u32,
                    subflow: i as u32,
                    cwnd: s.cwnd,
                    ssthresh: s.ssthresh,
                    srtt_ns: s.srtt.0,
                    rttvar_ns: s.rttvar.0,
                    rto_ns: s.rto.0,
                    inflight: s.pipe,
                    sent: s.bytes_sent - prev.0,
                    delivered: s.delivered - prev.1,
                    app,
                    ooo_bytes: rcv.ooo_bytes,
                    rwnd_full_frac: full_frac,
                    losses: s.segments_lost - prev.2,
                    retransmits: s.segments_retransmitted - prev.3,
                    measured: d.measured,
                    bw_bps_sum: d.bw_bps_sum,
                    srtt_ns_sum: d.srtt_ns_sum,
                });
                if let Some(bins) = self.bin_bytes.as_mut() {
                    bins.push((def.paths[i], f as u32, s.delivered - prev.1));
                }
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
