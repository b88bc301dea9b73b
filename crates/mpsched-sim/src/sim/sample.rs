//! Periodic samples: the timeseries table's rows and the per-interface energy accounting.

use mpsched_transport::{Instant, SlotStats};

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

    // Not inlined into the event loop: once per sample interval, and its body's register
    // pressure moved the loop's code (+0.2-0.3 % on the single-flow benchmarks when the
    // per-flow counters moved to `PrevCounters`).
    #[inline(never)]
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
            let prevs = self.prev.of(f);
            debug_assert_eq!(prevs.len(), conn.subflow_count());
            for (i, prev) in prevs.iter_mut().enumerate() {
                let s = conn.subflow_sample(i);
                let sl = conn.slot_stats(i);
                let d = sl.since(&prev.slots);
                self.series.push(Sampled {
                    flow: f as u32,
                    subflow: i as u32,
                    cwnd: s.cwnd,
                    ssthresh: s.ssthresh,
                    srtt_ns: s.srtt.0,
                    rttvar_ns: s.rttvar.0,
                    rto_ns: s.rto.0,
                    inflight: s.pipe,
                    sent: s.bytes_sent - prev.bytes_sent,
                    delivered: s.delivered - prev.delivered,
                    app,
                    ooo_bytes: rcv.ooo_bytes,
                    rwnd_full_frac: full_frac,
                    losses: s.segments_lost - prev.lost,
                    retransmits: s.segments_retransmitted - prev.retransmitted,
                    measured: d.measured,
                    bw_bps_sum: d.bw_bps_sum,
                    srtt_ns_sum: d.srtt_ns_sum,
                });
                if let Some(bins) = self.bin_bytes.as_mut() {
                    bins.push((def.paths[i], f as u32, s.delivered - prev.delivered));
                }
                *prev = Prev {
                    bytes_sent: s.bytes_sent,
                    delivered: s.delivered,
                    lost: s.segments_lost,
                    retransmitted: s.segments_retransmitted,
                    slots: sl,
                };
            }
        }
    }
}

/// A subflow's counters at the previous sample.
#[derive(Clone, Copy, Default)]
pub(super) struct Prev {
    bytes_sent: u64,
    delivered: u64,
    lost: u64,
    retransmitted: u64,
    slots: SlotStats,
}

/// Every flow's subflows' [`Prev`], flow after flow in one array: the sample reads them in
/// order (two small heap blocks per flow, read and written per sample, were two more cache
/// misses per flow with 1,000 flows).
pub(super) struct PrevCounters {
    /// Flow `f`'s subflows are `prev[first[f]..first[f + 1]]`.
    first: Vec<usize>,
    prev: Vec<Prev>,
}

impl PrevCounters {
    /// Room for each flow's subflows (one per path), given their counts in flow order.
    pub(super) fn new(subflows: impl Iterator<Item = usize>) -> Self {
        let first: Vec<usize> = std::iter::once(0)
            .chain(subflows.scan(0, |n, k| {
                *n += k;
                Some(*n)
            }))
            .collect();
        PrevCounters { prev: vec![Prev::default(); *first.last().unwrap()], first }
    }

    /// Flow `f`'s subflows' counters.
    #[inline]
    pub(super) fn of(&mut self, f: usize) -> &mut [Prev] {
        &mut self.prev[self.first[f]..self.first[f + 1]]
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

#[cfg(test)]
mod tests {
    use super::PrevCounters;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn each_flow_has_its_own_subflows(counts in prop::collection::vec(0usize..9, 0..50)) {
            let mut p = PrevCounters::new(counts.iter().copied());
            for (f, &k) in counts.iter().enumerate() {
                let mine = p.of(f);
                prop_assert_eq!(mine.len(), k);
                for x in mine.iter_mut() {
                    prop_assert_eq!(x.bytes_sent, 0);
                    x.bytes_sent = f as u64 + 1;
                }
            }
            for f in 0..counts.len() {
                prop_assert!(p.of(f).iter().all(|x| x.bytes_sent == f as u64 + 1));
            }
        }
    }
}
