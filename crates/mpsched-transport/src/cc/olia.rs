//! OLIA, the Opportunistic Linked Increases Algorithm (Khalili, Gast, Popovic, Le Boudec,
//! "MPTCP is not Pareto-optimal: performance issues and a possible solution", CoNEXT 2012 /
//! IEEE/ACM ToN 2013, section "OLIA"; draft-khalili-mptcp-congestion-control; Linux `mptcp_olia.c`).
//!
//! Windows w in segments, rtt = smoothed RTT. Per path r:
//!
//! ```text
//! l1_r = bytes acknowledged between the last two losses on r
//! l2_r = bytes acknowledged since the last loss on r
//! l_r  = max(l1_r, l2_r)
//! M    = paths with the largest window
//! B    = paths with the largest l_r / rtt_r^2          ("presumably best" paths)
//! R    = the established paths
//! alpha_r = +1 / (|R| * |B \ M|)   if r in B \ M       (B \ M non-empty)
//!         = -1 / (|R| * |M|)       if r in M           (B \ M non-empty)
//!         = 0                      otherwise
//! per ACK on r in congestion avoidance:
//!     w_r += (w_r / rtt_r^2) / (sum_p w_p / rtt_p)^2  +  alpha_r / w_r
//! ```
//!
//! Loss: halve like Reno; RTO: cwnd = 1 MSS. Slow start unchanged. With one path alpha = 0 and
//! the first term is 1/w: plain Reno.
//!
//! Implementation notes:
//! * l is tracked as in the kernel with three snapshots of the cumulative acknowledged bytes
//!   (we use `AckSample::delivered`, which also counts SACKed bytes, where Linux uses snd_una):
//!   `loss3` on every ACK; on a loss or RTO, if `loss3 != loss2`, `loss1 = loss2; loss2 = loss3`.
//!   Then l1 = loss2 - loss1 and l2 = loss3 - loss2. [code: mptcp_olia.c]
//! * l_r is exported to siblings through `shared_state()[0]` (bytes, exact in f64 below 2^53).
//! * M compares windows in whole segments (the kernel's packet cwnd); B compares l/rtt^2 exactly by
//!   cross-multiplication in integers (l bytes, rtt nanoseconds), like the kernel.
//! * M, B and the sums run over established subflows with an RTT estimate; |R| is the number of
//!   established subflows (kernel `cnt_established`). The caller always counts, from `st`.
//! * The kernel uses ssthresh as the window of a subflow in fast recovery (its cwnd is inflated);
//!   here recovery does not inflate cwnd (RFC 6675 pipe), so cwnd is used.
//! * The increase may be negative (alpha_r < 0 on a max-window path); the kernel then lowers cwnd
//!   by one segment at a time, never below 1. Here fractional bytes carry over, floor 1 MSS.
//! * With byte counting the per-ACK increase is scaled by the segments acknowledged.
//! * [unverified] The paper/draft text was not re-read; the set definitions above follow
//!   Khalili et al. (CoNEXT 2012; draft-khalili-mptcp-congestion-control) as remembered and agree
//!   with mptcp_olia.c, which was read.

use super::lia::{apply_delta, ca_bytes, established_count, for_each_path, reno_ssthresh};
use super::{after_slow_start, AckSample, CcState, CongestionControl, CongestionEvent, Siblings};
use crate::time::Instant;

#[derive(Clone, Debug, Default)]
/// The controller; see the module docs.
pub struct Olia {
    loss1: u64,
    loss2: u64,
    loss3: u64,
    /// Fractional bytes of window change not yet applied (may be negative).
    frac: f64,
}

impl Olia {
    /// l_r = max(l1_r, l2_r) in bytes.
    pub fn l(&self) -> u64 {
        (self.loss2 - self.loss1).max(self.loss3 - self.loss2)
    }

    fn on_loss(&mut self) {
        if self.loss3 != self.loss2 {
            self.loss1 = self.loss2;
            self.loss2 = self.loss3;
        }
        self.frac = 0.0;
    }

    /// alpha_r of the calling subflow.
    pub fn alpha(&self, st: &CcState, sib: Siblings) -> f64 {
        let own = self.shared_state();
        // Pass 1: the largest window (segments) and the best l/rtt^2 (as l, rtt^2 for exact compare).
        let mut max_w = 0u64;
        let (mut best_l, mut best_r2) = (0u128, 1u128);
        for_each_path(st, own, sib, |p| {
            max_w = max_w.max(p.cwnd / p.mss as u64);
            let (l, r2) = metric(p.shared[0], p.srtt.0);
            if l * best_r2 >= best_l * r2 {
                best_l = l;
                best_r2 = r2;
            }
        });
        // Pass 2: |M|, |B \ M|, and where the caller is.
        let (mut m, mut b_not_m) = (0usize, 0usize);
        let (mut self_in_m, mut self_in_b_not_m) = (false, false);
        for_each_path(st, own, sib, |p| {
            if p.cwnd / p.mss as u64 == max_w {
                m += 1;
                self_in_m |= p.is_self;
            } else {
                let (l, r2) = metric(p.shared[0], p.srtt.0);
                if l * best_r2 == best_l * r2 {
                    b_not_m += 1;
                    self_in_b_not_m |= p.is_self;
                }
            }
        });
        if b_not_m == 0 {
            return 0.0;
        }
        let n_r = established_count(st, sib) as f64;
        if self_in_b_not_m {
            1.0 / (n_r * b_not_m as f64)
        } else if self_in_m {
            -1.0 / (n_r * m as f64)
        } else {
            0.0
        }
    }
}

/// (l, rtt^2) as integers: l in bytes, rtt in nanoseconds.
#[inline]
fn metric(l: f64, rtt_ns: u64) -> (u128, u128) {
    let r = rtt_ns as u128;
    (l.max(0.0) as u128, r * r)
}

crate::no_params!(Olia);

impl CongestionControl for Olia {
    fn name(&self) -> &'static str {
        "olia"
    }

    fn on_ack(&mut self, _now: Instant, st: &mut CcState, ack: &AckSample, sib: Siblings) {
        self.loss3 = self.loss3.max(ack.delivered);
        let Some(acked) = after_slow_start(st, ack.newly_acked) else { return };
        let mss = st.mss as f64;
        let segs = ca_bytes(st, acked) / mss;
        let w_r = st.cwnd as f64 / mss;
        let rtt_r = st.srtt.as_secs_f64();
        let mut sum = 0.0;
        for_each_path(st, self.shared_state(), sib, |p| sum += p.w() / p.rtt());
        let inc_seg = if sum > 0.0 && rtt_r > 0.0 {
            (w_r / (rtt_r * rtt_r)) / (sum * sum) + self.alpha(st, sib) / w_r
        } else {
            // No RTT estimate yet: Reno.
            1.0 / w_r
        };
        apply_delta(st, &mut self.frac, inc_seg * segs * mss);
    }

    fn on_congestion_event(&mut self, _now: Instant, st: &mut CcState, _ev: CongestionEvent, _sib: Siblings) {
        self.on_loss();
        st.ssthresh = reno_ssthresh(st);
        st.cwnd = st.ssthresh;
    }

    fn on_rto(&mut self, _now: Instant, st: &mut CcState) {
        self.on_loss();
        st.ssthresh = reno_ssthresh(st);
        st.cwnd = st.mss as u64;
    }

    fn coupled(&self) -> bool {
        true
    }

    fn shared_state(&self) -> [f64; 2] {
        [self.l() as f64, 0.0]
    }
}

#[cfg(test)]
mod tests {
    use super::super::lia::testutil::*;
    use super::*;

    fn with_l(mut s: crate::cc::SiblingInfo, l: u64) -> crate::cc::SiblingInfo {
        s.cc_shared = [l as f64, 0.0];
        s
    }

    /// An OLIA whose l is exactly `l` (no loss yet: l = l2 = bytes acknowledged so far).
    fn olia_with_l(l: u64) -> Olia {
        Olia { loss3: l, ..Default::default() }
    }

    #[test]
    fn olia_alpha_sets_hand_example() {
        // Three paths, |R| = 3:
        //   0: w = 20 (largest window),  rtt 100 ms, l = 100e3 -> l/rtt^2 = 1.0e7
        //   1: w = 10,                   rtt  50 ms, l =  50e3 -> 2.0e7  (best)
        //   2: w = 10,                   rtt 100 ms, l = 100e3 -> 1.0e7
        // M = {0}, B = {1}, B \ M = {1}: alpha_1 = +1/3, alpha_0 = -1/3, alpha_2 = 0.
        let sibs = vec![with_l(sib(20, 100), 100_000), with_l(sib(10, 50), 50_000), with_l(sib(10, 100), 100_000)];
        let a0 = olia_with_l(100_000).alpha(&st(20, 100, 0, true), &sibs);
        let a1 = olia_with_l(50_000).alpha(&st(10, 50, 1, true), &sibs);
        let a2 = olia_with_l(100_000).alpha(&st(10, 100, 2, true), &sibs);
        assert!((a0 + 1.0 / 3.0).abs() < 1e-12, "a0 = {a0}");
        assert!((a1 - 1.0 / 3.0).abs() < 1e-12, "a1 = {a1}");
        assert_eq!(a2, 0.0);
        // The alphas sum to zero: OLIA only moves window between paths.
        assert!((a0 + a1 + a2).abs() < 1e-12);
    }

    #[test]
    fn olia_alpha_ties_and_best_in_m() {
        // Two best paths outside M share +1/(|R|*2); M has two paths sharing -1/(|R|*2).
        //   0, 1: w = 30 (M), l/rtt^2 = 1e7;  2, 3: w = 10, l/rtt^2 = 4e7 (B \ M = {2, 3}).
        let sibs = vec![
            with_l(sib(30, 100), 100_000),
            with_l(sib(30, 100), 100_000),
            with_l(sib(10, 50), 100_000),
            with_l(sib(10, 50), 100_000),
        ];
        let a = |i: u8, w: u64, rtt: u64| olia_with_l(100_000).alpha(&st(w, rtt, i, true), &sibs);
        assert!((a(0, 30, 100) + 1.0 / 8.0).abs() < 1e-12);
        assert!((a(1, 30, 100) + 1.0 / 8.0).abs() < 1e-12);
        assert!((a(2, 10, 50) - 1.0 / 8.0).abs() < 1e-12);
        assert!((a(3, 10, 50) - 1.0 / 8.0).abs() < 1e-12);
        // When the best path also has the largest window, B \ M is empty: all alphas are 0.
        let sibs = vec![with_l(sib(30, 50), 100_000), with_l(sib(10, 100), 100_000)];
        assert_eq!(olia_with_l(100_000).alpha(&st(30, 50, 0, true), &sibs), 0.0);
        assert_eq!(olia_with_l(100_000).alpha(&st(10, 100, 1, true), &sibs), 0.0);
    }

    #[test]
    fn olia_l_tracks_bytes_between_losses() {
        let mut c = Olia::default();
        let mut s = st(10, 100, 0, true);
        let a = |d: u64| AckSample { newly_acked: MSS, delivered: d, ..Default::default() };
        c.on_ack(Instant(0), &mut s, &a(30_000), &[]);
        assert_eq!(c.l(), 30_000); // l2 = since "last loss" (start)
        c.on_congestion_event(Instant(0), &mut s, CongestionEvent::Loss, &[]);
        assert_eq!(c.l(), 30_000); // l1 = 30e3, l2 = 0
        c.on_ack(Instant(0), &mut s, &a(40_000), &[]);
        assert_eq!(c.l(), 30_000);
        c.on_congestion_event(Instant(0), &mut s, CongestionEvent::Loss, &[]);
        assert_eq!(c.l(), 10_000); // l1 = 10e3
        c.on_rto(Instant(0), &mut s); // no ACK since: no shift
        assert_eq!(c.l(), 10_000);
        c.on_ack(Instant(0), &mut s, &a(100_000), &[]);
        assert_eq!(c.l(), 60_000);
        assert_eq!(c.shared_state(), [60_000.0, 0.0]);
    }

    #[test]
    fn olia_single_path_is_reno() {
        assert_single_path_is_reno::<Olia>();
    }

    #[test]
    fn olia_increase_matches_formula() {
        // Path 0 of the hand example: w = 20, rtt 0.1 s; sum w/rtt = 200 + 200 + 100 = 500.
        // inc = (20/0.01)/500^2 + (-1/3)/20 = 0.008 - 0.016667 = -0.008667 segment per ACK.
        let sibs = vec![with_l(sib(20, 100), 100_000), with_l(sib(10, 50), 50_000), with_l(sib(10, 100), 100_000)];
        let mut c = olia_with_l(100_000);
        let mut s = st(20, 100, 0, true);
        s.ssthresh = MSS;
        let a = AckSample { newly_acked: MSS, delivered: 100_000, ..Default::default() };
        c.on_ack(Instant(0), &mut s, &a, &sibs);
        // -8.667 bytes: floor to -9, the +0.333 carried.
        assert_eq!(s.cwnd, 20 * MSS - 9);
        // The max-window path keeps shrinking while it is not the best path (the decrease grows
        // slightly as w falls: -0.00867 segment per ACK at w = 20).
        for _ in 0..99 {
            c.on_ack(Instant(0), &mut s, &a, &sibs);
        }
        let d = s.cwnd as f64 - 20_000.0;
        assert!((-950.0..=-866.0).contains(&d), "change {d} bytes over 100 ACKs");
        // Path 1 (best, not max window) grows faster than the plain coupled term.
        let mut c1 = olia_with_l(50_000);
        let mut s1 = st(10, 50, 1, true);
        c1.on_ack(Instant(0), &mut s1, &AckSample { newly_acked: MSS, delivered: 50_000, ..Default::default() }, &sibs);
        // (10/0.0025)/500^2 + (1/3)/10 = 0.016 + 0.03333 segments = 49.33 bytes.
        assert_eq!(s1.cwnd, 10 * MSS + 49);
    }

    #[test]
    fn olia_loss_halves() {
        let mut c = Olia::default();
        let mut s = st(20, 100, 0, true);
        c.on_congestion_event(Instant(0), &mut s, CongestionEvent::Loss, &[]);
        assert_eq!((s.cwnd, s.ssthresh), (10 * MSS, 10 * MSS));
        c.on_rto(Instant(0), &mut s);
        assert_eq!((s.cwnd, s.ssthresh), (MSS, 5 * MSS));
        assert!(c.coupled());
    }
}
