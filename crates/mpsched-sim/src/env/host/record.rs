//! Recording a host interval: every slotted flow's counters since the last boundary become its
//! slot of the newest frame (flow features, then subflow features, in [`crate::env::features`]
//! order), and the host's sums become the reward terms ([`HostTerm`]).

use super::{HostEnv, HostTerm, MBPS};
use crate::env::features::{FlowFeature, SubflowFeature};
use crate::env::record::{record_flow_subflows, Interval, SlotOut};
use mpsched_transport::observe::flow_sums;
use mpsched_transport::observe::sample::{delta, fill, shift_frames, shift_rates};

impl HostEnv {
    /// Writes the interval that just ended into the newest frame and the terms.
    pub(super) fn record(&mut self) {
        let (real, dt) = self.begin_interval();
        let mut iv = Interval { dt, real, ..Interval::default() };
        let mut running = 0usize;
        let k = super::HOST_TERMS.len();
        let m = self.spec.max_flows;
        for j in 0..m {
            let Some(f) = self.slots[j] else { continue };
            if self.sim.connection(f).is_none() {
                continue;
            }
            let (energy_before, sent_before) = (iv.energy_j, iv.sent);
            self.record_subflows(j, f, &mut iv);
            let delivered = self.record_flow(j, f, dt, iv.sent - sent_before);
            iv.delivered += delivered;
            let goodput = iv.mbps(delivered);
            let active = !self.sim.flow_done(f);
            running += usize::from(active);
            self.terms[k + j] = goodput;
            self.terms[k + m + j] = f64::from(u8::from(active));
            self.terms[k + 2 * m + j] = iv.energy_j - energy_before;
        }
        let avg = |sum: f64| if iv.n_est > 0 { sum / iv.n_est as f64 } else { 0.0 };
        let goodput = iv.mbps(iv.delivered);
        let all_done = self.host.iter().all(|&f| self.sim.flow_done(f));
        // Every host flow's energy, slotted or not: a completed flow's interfaces still pay
        // their tail.
        let energy_j: f64 = self.host.iter().map(|&f| self.meter.flow_j(f)).sum();
        let t = &mut self.terms;
        t[HostTerm::IntervalS as usize] = real;
        t[HostTerm::GoodputMbps as usize] = goodput;
        t[HostTerm::SendTputMbps as usize] = iv.mbps(iv.sent);
        t[HostTerm::EnergyJ as usize] = energy_j;
        t[HostTerm::PowerW as usize] = energy_j / dt;
        t[HostTerm::DelayMs as usize] = avg(iv.delay_sum);
        t[HostTerm::JitterMs as usize] = avg(iv.jitter_sum);
        t[HostTerm::Loss as usize] =
            if iv.seg_sent > 0 { (iv.seg_lost as f64 / iv.seg_sent as f64).min(1.0) } else { 0.0 };
        t[HostTerm::CapacityMbps as usize] = self.capacity_mbps;
        t[HostTerm::Flows as usize] = running as f64;
        t[HostTerm::Done as usize] = f64::from(u8::from(all_done));
    }

    /// Closes the interval: shifts the history, clears the newest frame, the newest rate
    /// samples and the terms, and accounts the interval's energy. Returns the real length and
    /// the length rates are computed over (s): at least the nominal interval (a last, partial
    /// interval does not turn a few bytes into a huge rate).
    fn begin_interval(&mut self) -> (f64, f64) {
        let now = self.sim.now_ns();
        let real_ns = now.saturating_sub(self.last_boundary);
        let dt_ns = real_ns.max(self.spec.interval_ns()).max(1);
        self.last_boundary = now;
        self.meter.interval(&self.sim, real_ns);
        shift_frames(&mut self.frames, self.spec.layout().frame_len());
        self.rates.iter_mut().for_each(|r| shift_rates(r));
        self.terms.iter_mut().for_each(|x| *x = 0.0);
        (real_ns as f64 / 1e9, dt_ns as f64 / 1e9)
    }

    /// Flow `f`'s subflow slots in flow slot `j` of the newest frame, its subflows' sums in
    /// `iv`.
    fn record_subflows(&mut self, j: usize, f: usize, iv: &mut Interval) {
        let l = self.spec.layout();
        let o = l.frame(l.history - 1) + l.subflow_slot(j, 0);
        let n = l.max_subflows;
        let out = SlotOut {
            frame: &mut self.frames[o..o + n * SubflowFeature::COUNT],
            rates: &mut self.rates[j],
            prev: &self.prev_action[j * n..(j + 1) * n],
        };
        record_flow_subflows(&self.sim, f, &mut self.snaps[f], &self.meter, iv, out);
    }

    /// Flow `f`'s features in flow slot `j` of the newest frame (the target flag is written by
    /// `pick_target`); `sent`: its subflows' bytes sent in the interval. Returns the bytes
    /// delivered to its application in the interval.
    fn record_flow(&mut self, j: usize, f: usize, dt: f64, sent: u64) -> u64 {
        let (Some(c), Some(r)) = (self.sim.connection(f), self.sim.receiver(f)) else { return 0 };
        let sc = self.sim.scenario();
        let snap = &mut self.snaps[f];
        let now = r.info().bytes_delivered;
        let delivered = delta(now, snap.delivered);
        let goodput = delivered as f64 * 8.0 / dt / MBPS;
        snap.delivered = now;
        // `record_subflows` advanced the subflow counters (`target`: leave them).
        let mut x = flow_sums(c, &mut snap.subs, false);
        x.sent = sent;
        (x.goodput, x.mss, x.dt) = (goodput, c.mss().max(1) as f64, dt);
        x.multipath = sc.flows[f].paths.len() > 1;
        let l = self.spec.layout();
        let o = l.frame(l.history - 1) + l.flow_slot(j);
        fill(&mut self.frames[o..o + FlowFeature::COUNT], |g| x.value(g));
        delivered
    }
}
