//! wVegas, weighted Vegas for MPTCP (Cao, Xu, Fu, "Delay-based congestion control for multipath
//! TCP", ICNP 2012), following the Linux out-of-tree implementation `mptcp_wvegas.c` (read).
//!
//! Parameters: initial_alpha = 2, total_alpha = 10, gamma = 1 (kernel module defaults).
//! Per subflow: base_rtt (minimum RTT sample ever), the sum and count of RTT samples in the current
//! round, instant_rate, weight, alpha_r, queue_delay. Windows in segments below.
//!
//! ```text
//! every ACK with an RTT sample v:  base_rtt = min(base_rtt, v); round_sum += v; round_cnt += 1
//! once per round (the ACK passes the round's right edge):
//!   round_cnt <= 2:  one Reno step (slow start or Reno's congestion-avoidance increase)
//!   else: rtt    = round_sum / round_cnt
//!         diff   = floor(cwnd * (rtt - base_rtt) / rtt)        (segments queued in the network)
//!         target = cwnd * base_rtt / rtt
//!         slow start and diff > gamma:  cwnd = min(cwnd, target + 1); ssthresh = min(ssthresh, cwnd - 1)
//!         slow start otherwise:         slow start
//!         congestion avoidance:
//!           if diff >= alpha_r:  instant_rate_r = cwnd / rtt
//!                                weight_r = instant_rate_r / sum_k instant_rate_k
//!                                alpha_r  = max(2, floor(weight_r * total_alpha))
//!           if diff > alpha_r: cwnd -= 1; ssthresh = min(ssthresh, cwnd - 1)
//!           elif diff < alpha_r: cwnd += 1
//!           q = rtt - base_rtt; queue_delay = q if queue_delay == 0 or q < queue_delay
//!           if q >= 2 * queue_delay:  cwnd = cwnd * base_rtt / (2 * rtt); queue_delay = 0   (drain)
//!         cwnd = max(cwnd, 2); ssthresh = max(ssthresh, 3/4 cwnd)   (Linux tcp_current_ssthresh, Open)
//!         reset the round's sum and count
//! between round boundaries: slow start while cwnd < ssthresh, no congestion-avoidance change
//! ```
//!
//! Loss: Reno (ssthresh = cwnd/2, cwnd = ssthresh); RTO: Reno, and instant_rate = 0 (kernel
//! CA_EVENT_LOSS). wVegas is off (plain Reno) while in recovery, and re-initialised (alpha,
//! weight, instant_rate, queue_delay, round) on returning to the Open state (recovery exit).
//!
//! Simulator mapping and deviations:
//! * Round boundary: the kernel records snd_nxt and ends the round when an ACK goes beyond it. We
//!   have no sequence numbers here, so the round's right edge is `delivered + pipe` taken at the
//!   round start (all data then in flight has been delivered) and the round ends on the first ACK
//!   with `delivered` beyond it.
//! * RTT samples are converted to whole microseconds + 1, exactly like the kernel (`rtt_us + 1`),
//!   so the integer thresholds (diff, the drain test) behave as in Linux.
//! * Drain when q == 0: in the kernel, a round whose mean RTT equals base_rtt gives q = 0,
//!   queue_delay = 0 and `0 >= 2*0`, so it halves cwnd (times base/rtt). Real RTT jitter makes that
//!   rare; in a simulator with fixed delays and no queue it would happen every round. By default we
//!   require q > 0 to drain; set `kernel_zero_queue_drain` for the kernel's behaviour. [deliberate]
//! * instant_rate is in segments per second (the kernel: segments per microsecond, scaled); only
//!   ratios are used. It is exported to siblings through `shared_state()` = [instant_rate,
//!   1 if the current round has RTT samples]; the weight sums over established siblings whose
//!   round has samples, as the kernel does (`sampled_rtt > 0`), plus the caller's fresh value.
//! * Not modelled: the idle-restart re-initialisation (CA_EVENT_CWND_RESTART; no hook) and the
//!   cwnd clamp.
//! * [unverified] The ICNP paper was not re-read; the algorithm is the kernel's.

use super::{slow_start, AckSample, CcState, CongestionControl, CongestionEvent, NewReno, Siblings};
use crate::algo::FromParams;
use crate::time::Instant;

crate::params! {
    /// wVegas's parameters (Linux mptcp_wvegas.c defaults).
    pub struct WVegasParams {
        /// α at the start of a connection, packets queued (`initial_alpha`).
        initial_alpha: u32 = 2;
        /// Total α shared by a connection's subflows, packets (`total_alpha`).
        total_alpha: u32 = 10;
        /// Slow-start exit threshold γ, packets (`gamma`).
        gamma: u32 = 1;
        /// Drain even when the round's queueing delay is exactly zero (the kernel's literal
        /// behaviour).
        kernel_zero_queue_drain: bool = false;
    }
}

/// wVegas's per-subflow state.
#[derive(Clone, Debug)]
/// The controller; see the module docs.
pub struct WVegas {
    /// Per-subflow alpha (queued packets) before the first weight update.
    pub initial_alpha: u32,
    /// Sum of the subflows' alphas, split by rate weight.
    pub total_alpha: u32,
    /// Slow-start exit threshold on the queued-packet estimate.
    pub gamma: u32,
    /// Drain even when the round's queueing delay is exactly zero (the kernel's literal behaviour).
    pub kernel_zero_queue_drain: bool,
    /// Plain Reno, used when wVegas is off and for rounds with too few RTT samples.
    reno: NewReno,
    /// Right edge of the current round in delivered bytes; `None`: the next ACK ends the round.
    round_end: Option<u64>,
    /// Start a fresh round at the next ACK without treating it as a boundary (after recovery).
    restart_round: bool,
    cnt_rtt: u32,
    /// Sum of this round's RTT samples, microseconds (+1 each, as the kernel).
    sum_rtt_us: u64,
    /// Minimum RTT sample, microseconds (+1).
    base_rtt_us: u64,
    /// cwnd / rtt at the last weight update, segments per second.
    instant_rate: f64,
    weight: f64,
    alpha: u32,
    /// Minimum queueing delay seen since the last drain, microseconds (0 = none yet).
    queue_delay_us: u64,
}

impl Default for WVegas {
    fn default() -> Self {
        Self::from_params(&WVegasParams::default())
    }
}

impl crate::algo::FromParams for WVegas {
    type Params = WVegasParams;
    fn from_params(p: &WVegasParams) -> Self {
        WVegas {
            initial_alpha: p.initial_alpha,
            total_alpha: p.total_alpha,
            gamma: p.gamma,
            kernel_zero_queue_drain: p.kernel_zero_queue_drain,
            reno: NewReno::default(),
            round_end: None,
            restart_round: false,
            cnt_rtt: 0,
            sum_rtt_us: 0,
            base_rtt_us: u64::MAX,
            instant_rate: 0.0,
            weight: 1.0,
            alpha: p.initial_alpha,
            queue_delay_us: 0,
        }
    }
}

impl WVegas {
    /// Kernel `wvegas_enable`: new round from the current send point, per-round state reset.
    fn enable(&mut self) {
        self.restart_round = true;
        self.cnt_rtt = 0;
        self.sum_rtt_us = 0;
        self.instant_rate = 0.0;
        self.alpha = self.initial_alpha;
        self.weight = 1.0;
        self.queue_delay_us = 0;
    }

    /// Share of this subflow in the summed instant rates of the subflows measuring this round.
    fn compute_weight(&self, st: &CcState, sib: Siblings) -> f64 {
        let me = st.index as usize;
        let mut total = self.instant_rate;
        for (i, s) in sib.iter().enumerate() {
            if i != me && s.established && s.cc_shared[1] > 0.0 {
                total += s.cc_shared[0];
            }
        }
        if total > 0.0 && self.instant_rate > 0.0 {
            self.instant_rate / total
        } else {
            self.weight
        }
    }

    /// The once-per-round wVegas step (kernel `mptcp_wvegas_cong_avoid`, cnt_rtt > 2 branch).
    fn round_step(&mut self, st: &mut CcState, acked: u64, sib: Siblings) {
        let mss = st.mss as u64;
        let rtt = (self.sum_rtt_us / self.cnt_rtt as u64).max(1);
        let base = self.base_rtt_us.min(rtt);
        let cwnd = st.cwnd as u128;
        let target = (cwnd * base as u128 / rtt as u128) as u64;
        let diff = (cwnd * (rtt - base) as u128 / rtt as u128) as u64 / mss;

        if st.in_slow_start() && diff > self.gamma as u64 {
            st.cwnd = st.cwnd.min(target + mss);
            st.ssthresh = st.ssthresh.min(st.cwnd.saturating_sub(mss));
        } else if st.in_slow_start() {
            slow_start(st, acked);
        } else {
            if diff >= self.alpha as u64 {
                self.instant_rate = (st.cwnd as f64 / mss as f64) / (rtt as f64 * 1e-6);
                self.weight = self.compute_weight(st, sib);
                self.alpha = ((self.weight * self.total_alpha as f64) as u32).max(2);
            }
            if diff > self.alpha as u64 {
                st.cwnd = st.cwnd.saturating_sub(mss);
                st.ssthresh = st.ssthresh.min(st.cwnd.saturating_sub(mss));
            } else if diff < self.alpha as u64 {
                st.cwnd += mss;
            }
            // Try to drain the bottleneck queue when queueing delay has doubled.
            let q = rtt - base;
            if self.queue_delay_us == 0 || self.queue_delay_us > q {
                self.queue_delay_us = q;
            }
            if (q > 0 || self.kernel_zero_queue_drain) && q >= 2 * self.queue_delay_us {
                st.cwnd = (st.cwnd as u128 * base as u128 / (2 * rtt as u128)) as u64;
                self.queue_delay_us = 0;
            }
        }
        st.cwnd = st.cwnd.max(2 * mss);
        // Linux tcp_current_ssthresh in the Open state: max(ssthresh, 3/4 cwnd).
        st.ssthresh = st.ssthresh.max((st.cwnd >> 1) + (st.cwnd >> 2));
    }
}

impl CongestionControl for WVegas {
    fn name(&self) -> &'static str {
        "wvegas"
    }

    fn on_ack(&mut self, now: Instant, st: &mut CcState, ack: &AckSample, sib: Siblings) {
        // Kernel pkts_acked: every ACK with an RTT sample, whatever the state.
        if let Some(r) = ack.rtt {
            let v = r.0 / 1_000 + 1;
            self.base_rtt_us = self.base_rtt_us.min(v);
            self.sum_rtt_us += v;
            self.cnt_rtt += 1;
        }
        if st.in_recovery {
            // Outside the Open state wVegas is disabled: Reno.
            self.reno.on_ack(now, st, ack, sib);
            return;
        }
        if self.restart_round {
            self.restart_round = false;
            self.round_end = Some(ack.delivered + st.pipe);
            if st.in_slow_start() {
                slow_start(st, ack.newly_acked);
            }
            return;
        }
        let boundary = self.round_end.is_none_or(|edge| ack.delivered > edge);
        if boundary {
            self.round_end = Some(ack.delivered + st.pipe);
            if self.cnt_rtt <= 2 {
                self.reno.on_ack(now, st, ack, sib);
            } else {
                self.round_step(st, ack.newly_acked, sib);
            }
            self.cnt_rtt = 0;
            self.sum_rtt_us = 0;
        } else if st.in_slow_start() {
            slow_start(st, ack.newly_acked);
        }
    }

    fn on_congestion_event(&mut self, now: Instant, st: &mut CcState, ev: CongestionEvent, sib: Siblings) {
        self.reno.on_congestion_event(now, st, ev, sib);
    }

    fn on_rto(&mut self, now: Instant, st: &mut CcState) {
        self.reno.on_rto(now, st);
        self.instant_rate = 0.0;
    }

    fn on_recovery_exit(&mut self, _now: Instant, _st: &mut CcState) {
        self.enable();
    }

    fn coupled(&self) -> bool {
        true
    }

    fn shared_state(&self) -> [f64; 2] {
        [self.instant_rate, if self.cnt_rtt > 0 { 1.0 } else { 0.0 }]
    }
}

#[cfg(test)]
mod tests {
    use super::super::lia::testutil::*;
    use super::*;
    use crate::cc::SiblingInfo;
    use crate::time::Duration;

    /// Drives one round: ACKs of one MSS each with the given RTT sample, `pipe` = cwnd, until the
    /// round boundary has been processed. Returns the number of ACKs.
    fn round(c: &mut WVegas, s: &mut CcState, delivered: &mut u64, rtt_ms: u64, sib: &[SiblingInfo]) -> u32 {
        let before = c.round_end;
        let mut n = 0;
        loop {
            *delivered += MSS;
            s.pipe = s.cwnd;
            let a = AckSample {
                newly_acked: MSS,
                rtt: Some(Duration::from_millis(rtt_ms)),
                delivered: *delivered,
                ..Default::default()
            };
            c.on_ack(Instant(0), s, &a, sib);
            n += 1;
            if c.round_end != before {
                return n;
            }
        }
    }

    /// A wVegas in congestion avoidance with a window of `w` segments and base RTT `base_ms`.
    fn in_ca(w: u64, base_ms: u64) -> (WVegas, CcState, u64) {
        let mut c = WVegas::default();
        let mut s = st(w, base_ms, 0, true);
        s.ssthresh = MSS;
        let mut d = 0;
        round(&mut c, &mut s, &mut d, base_ms, &[]); // the first ACK ends the (empty) initial round
        s.cwnd = w * MSS;
        (c, s, d)
    }

    #[test]
    fn wvegas_grows_one_mss_per_round_without_queueing() {
        let (mut c, mut s, mut d) = in_ca(20, 100);
        for k in 1..=3 {
            let n = round(&mut c, &mut s, &mut d, 100, &[]);
            assert!(n >= 20, "round {k} ended after {n} ACKs");
            assert_eq!(s.cwnd, (20 + k) * MSS, "round {k}");
        }
        // The kernel's literal zero-queue drain would halve it instead.
        let (mut c, mut s, mut d) = in_ca(20, 100);
        c.kernel_zero_queue_drain = true;
        round(&mut c, &mut s, &mut d, 100, &[]);
        assert_eq!(s.cwnd, 21 * MSS * 100_001 / 200_002);
    }

    #[test]
    fn wvegas_backs_off_when_backlog_exceeds_alpha() {
        // cwnd 40, base 100 ms, round RTT 150 ms: diff = floor(40 * 50/150) = 13 >= alpha = 2, so
        // alpha = max(2, weight 1 * 10) = 10; 13 > 10: cwnd -= 1.
        let (mut c, mut s, mut d) = in_ca(40, 100);
        round(&mut c, &mut s, &mut d, 150, &[]);
        assert_eq!(c.alpha, 10);
        assert_eq!(s.cwnd, 39 * MSS);
        assert!(s.ssthresh <= 38 * MSS);
        // Two equal subflows: weight 1/2, alpha = 5, so a smaller backlog already backs off:
        // cwnd 20, RTT 150 ms: diff = floor(20/3) = 6 > 5.
        let (mut c, mut s, mut d) = in_ca(20, 100);
        let mut other = sib(20, 150);
        other.cc_shared = [20.0 / (150_001.0 * 1e-6), 1.0]; // same rate as ours
        let sibs = vec![info(&s), other];
        round(&mut c, &mut s, &mut d, 150, &sibs);
        assert_eq!(c.alpha, 5);
        assert_eq!(s.cwnd, 19 * MSS);
    }

    #[test]
    fn wvegas_drains_when_queueing_delay_doubles() {
        // Round 1: q = 10 ms (recorded as the minimum queueing delay), diff = floor(20*10/110) = 1
        // < alpha: +1. Round 2: q = 30 ms >= 2 * 10 ms: cwnd = cwnd * base / (2 rtt).
        let (mut c, mut s, mut d) = in_ca(20, 100);
        round(&mut c, &mut s, &mut d, 110, &[]);
        assert_eq!(s.cwnd, 21 * MSS);
        assert_eq!(c.queue_delay_us, 10_000);
        round(&mut c, &mut s, &mut d, 130, &[]);
        // diff = floor(21 * 30/130) = 4 >= 2 -> alpha = 10 -> 4 < 10: +1 (22), then drain:
        // 22 MSS * 100001 / (2 * 130001).
        let expect = (22 * MSS as u128 * 100_001 / (2 * 130_001)) as u64;
        assert_eq!(s.cwnd, expect);
        assert!(s.cwnd < 9 * MSS);
        assert_eq!(c.queue_delay_us, 0);
    }

    #[test]
    fn wvegas_leaves_slow_start_on_backlog() {
        let mut c = WVegas::default();
        let mut s = st(10, 100, 0, true);
        s.ssthresh = u64::MAX;
        let mut d = 0;
        round(&mut c, &mut s, &mut d, 100, &[]); // initial boundary (Reno slow start step)
        let w0 = s.cwnd;
        round(&mut c, &mut s, &mut d, 100, &[]); // no queueing: slow start continues
        assert!(s.cwnd >= 2 * w0 - MSS, "cwnd {} after a slow-start round from {}", s.cwnd, w0);
        // diff = floor(cwnd * 100/200 / MSS) > gamma: cwnd = min(cwnd, target + 1), leave slow start.
        // Slow start doubles the window within the round (to about 2 * before), then the boundary
        // cuts it back to target + 1 = about half of that.
        let before = s.cwnd;
        round(&mut c, &mut s, &mut d, 200, &[]);
        assert!(s.cwnd <= before + 2 * MSS, "cwnd {} after leaving slow start (round start {})", s.cwnd, before);
        assert!(!s.in_slow_start());
    }

    #[test]
    fn wvegas_is_reno_on_loss_and_resets_on_recovery_exit() {
        let (mut c, mut s, mut d) = in_ca(40, 100);
        round(&mut c, &mut s, &mut d, 150, &[]);
        assert_eq!(c.alpha, 10);
        c.on_congestion_event(Instant(0), &mut s, CongestionEvent::Loss, &[]);
        assert_eq!(s.cwnd, 39 * MSS / 2);
        c.on_recovery_exit(Instant(0), &mut s);
        assert_eq!(c.alpha, 2);
        c.on_rto(Instant(0), &mut s);
        assert_eq!(s.cwnd, MSS);
        assert_eq!(c.shared_state()[0], 0.0);
        assert!(c.coupled());
        assert_eq!(c.name(), "wvegas");
    }
}
