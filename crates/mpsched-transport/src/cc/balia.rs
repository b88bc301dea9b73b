//! BALIA, Balanced Linked Adaptation (Peng, Walid, Hwang, Low, "Multipath TCP: Analysis, Design,
//! and Implementation", IEEE/ACM ToN 24(1), 2016, the algorithm of section VI;
//! draft-walid-mptcp-congestion-control; Linux `mptcp_balia.c`).
//!
//! Windows w in segments, rtt = smoothed RTT, x = w / rtt (segments per second). For path r:
//!
//! ```text
//! alpha_r = max_k x_k / x_r                                    (>= 1)
//! per ACK on r in congestion avoidance:
//!     w_r += x_r / (rtt_r * (sum_k x_k)^2) * ((1 + alpha_r) / 2) * ((4 + alpha_r) / 5)
//! per loss on r:
//!     w_r -= (w_r / 2) * min(alpha_r, 1.5)
//! ```
//!
//! With one path alpha = 1: the increase is 1/w and the decrease w/2, i.e. Reno.
//! RTO: ssthresh as for a loss, cwnd = 1 MSS (the kernel's `ssthresh` hook serves both); the RTO
//! hook gets no siblings, so it uses alpha_r as of the last ACK or loss.
//!
//! Implementation notes:
//! * alpha_r is the real ratio, as in the paper. The kernel uses the integer ratio
//!   floor(x_max / x_r) in the decrease (so its decrease is w/2 until x_max >= 2 x_r, then jumps
//!   to 0.75 w); the increase in the kernel uses the exact rates. [deliberate; kernel read]
//! * The decrease uses the windows at the moment of the loss (the kernel uses a value cached at
//!   its last recomputation, which is after every increase, so nearly the same).
//! * ssthresh is floored at 2 MSS (like `reno.rs`; the kernel floors BALIA's at 1 segment).
//! * Sums over established subflows with an RTT estimate; the caller always counts, from `st`.
//! * With byte counting the per-ACK increase is scaled by the segments acknowledged.
//! * [unverified] The paper was not re-read; the formulas follow Peng et al. (IEEE/ACM ToN 24(1),
//!   2016; draft-walid-mptcp-congestion-control) as remembered, and the
//!   kernel's fixed-point form (read) is algebraically the same increase:
//!   ai = 10 w_r (sum x)^2 / ((x_r + x_max)(4 x_r + x_max)) ACKs per +1 segment.

use super::lia::{apply_delta, ca_bytes, for_each_path};
use super::{after_slow_start, AckSample, CcState, CongestionControl, CongestionEvent, Siblings};
use crate::time::Instant;

#[derive(Clone, Debug, Default)]
/// The controller; see the module docs.
pub struct Balia {
    /// Fractional bytes of window growth not yet applied.
    frac: f64,
    /// alpha_r as of the last ACK, for the RTO hook, which gets no siblings (the kernel likewise
    /// uses a cached decrease there). `None` before the first ACK: Reno's halving.
    last_alpha: Option<f64>,
}

impl Balia {
    /// (x_r, sum_k x_k, max_k x_k) in segments per second, or `None` if the caller has no RTT yet.
    fn rates(st: &CcState, sib: Siblings) -> Option<(f64, f64, f64)> {
        let (mut own, mut sum, mut max) = (None, 0.0f64, 0.0f64);
        for_each_path(st, [0.0; 2], sib, |p| {
            let x = p.w() / p.rtt();
            sum += x;
            max = max.max(x);
            if p.is_self {
                own = Some(x);
            }
        });
        own.filter(|&x| x > 0.0).map(|x| (x, sum, max))
    }

    /// alpha_r = max_k x_k / x_r (1 when the caller has no RTT estimate).
    pub fn alpha(st: &CcState, sib: Siblings) -> f64 {
        Balia::rates(st, sib).map_or(1.0, |(x, _, max)| max / x)
    }

    /// Window after a loss, in bytes (before the 2 MSS floor): w - (w/2) * min(alpha, 1.5).
    fn decreased(st: &CcState, alpha: f64) -> u64 {
        let m = alpha.clamp(1.0, 1.5);
        let md = ((st.cwnd / 2) as f64 * m) as u64;
        st.cwnd.saturating_sub(md)
    }
}

crate::no_params!(Balia);

impl CongestionControl for Balia {
    fn name(&self) -> &'static str {
        "balia"
    }

    fn on_ack(&mut self, _now: Instant, st: &mut CcState, ack: &AckSample, sib: Siblings) {
        let Some(acked) = after_slow_start(st, ack.newly_acked) else {
            self.last_alpha = Some(Balia::alpha(st, sib));
            return;
        };
        let mss = st.mss as f64;
        let segs = ca_bytes(st, acked) / mss;
        let rates = Balia::rates(st, sib);
        self.last_alpha = Some(rates.map_or(1.0, |(x, _, max)| max / x));
        let inc_seg = match rates {
            Some((x, sum, max)) => {
                let a = max / x;
                x / (st.srtt.as_secs_f64() * sum * sum) * ((1.0 + a) / 2.0) * ((4.0 + a) / 5.0)
            }
            None => mss / st.cwnd as f64,
        };
        apply_delta(st, &mut self.frac, inc_seg * segs * mss);
    }

    fn on_congestion_event(&mut self, _now: Instant, st: &mut CcState, _ev: CongestionEvent, sib: Siblings) {
        let alpha = Balia::alpha(st, sib);
        self.last_alpha = Some(alpha);
        st.ssthresh = Balia::decreased(st, alpha).max(2 * st.mss as u64);
        st.cwnd = st.ssthresh;
        self.frac = 0.0;
    }

    fn on_rto(&mut self, _now: Instant, st: &mut CcState) {
        // The RTO hook gets no siblings: use alpha as of the last ACK or loss.
        st.ssthresh = Balia::decreased(st, self.last_alpha.unwrap_or(1.0)).max(2 * st.mss as u64);
        st.cwnd = st.mss as u64;
        self.frac = 0.0;
    }

    fn coupled(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::lia::testutil::*;
    use super::*;

    #[test]
    fn balia_single_path_is_reno() {
        assert_single_path_is_reno::<Balia>();
        let mut c = Balia::default();
        let mut s = st(20, 100, 0, true);
        let sibs = [info(&s)];
        c.on_congestion_event(Instant(0), &mut s, CongestionEvent::Loss, &sibs);
        assert_eq!((s.cwnd, s.ssthresh), (10 * MSS, 10 * MSS));
    }

    #[test]
    fn balia_decrease_uses_min_alpha_1_5() {
        // Path 0: x = 20/0.2 = 100 seg/s; path 1: x = 40/0.1 = 400 -> alpha_0 = 4, capped at 1.5:
        // w_0 = 20 - (20/2) * 1.5 = 5 segments (plain halving would give 10).
        let s0 = st(20, 200, 0, true); // x_0 = 100
        let sibs = vec![info(&s0), sib(40, 100)]; // x_1 = 400
        assert!((Balia::alpha(&s0, &sibs) - 4.0).abs() < 1e-12);
        let mut c = Balia::default();
        let mut s = s0;
        c.on_congestion_event(Instant(0), &mut s, CongestionEvent::Loss, &sibs);
        assert_eq!((s.cwnd, s.ssthresh), (5 * MSS, 5 * MSS));
        // alpha = 1.2 (below the cap): w -= w/2 * 1.2 -> 20 - 12 = 8 segments.
        let sibs = vec![info(&s0), sib(12, 100)]; // x_1 = 120, alpha_0 = 1.2
        let mut s = s0;
        c.on_congestion_event(Instant(0), &mut s, CongestionEvent::Loss, &sibs);
        assert_eq!(s.cwnd, 8 * MSS);
        // The faster path has alpha = 1: plain halving.
        let mut s1 = st(12, 100, 1, true);
        c.on_congestion_event(Instant(0), &mut s1, CongestionEvent::Loss, &sibs);
        assert_eq!(s1.cwnd, 6 * MSS);
    }

    #[test]
    fn balia_increase_matches_formula() {
        // x_0 = 10/0.1 = 100, x_1 = 30/0.1 = 300; sum = 400; alpha_0 = 3.
        // inc_0 = 100/(0.1 * 400^2) * (4/2) * (7/5) = 0.00625 * 2.8 = 0.0175 segment per ACK.
        let mut s = st(10, 100, 0, true);
        let sibs = vec![info(&s), sib(30, 100)];
        let mut c = Balia::default();
        c.on_ack(Instant(0), &mut s, &ack(MSS), &sibs);
        assert_eq!(s.cwnd, 10 * MSS + 17); // 17.5 bytes, fraction carried
        c.on_ack(Instant(0), &mut s, &ack(MSS), &sibs);
        assert!((10 * MSS + 34..=10 * MSS + 35).contains(&s.cwnd));
        // Two equal paths: alpha = 1, inc = x/(rtt * 4x^2) = 1/(4w): a quarter MSS per RTT each.
        let mut a = st(20, 100, 0, true);
        let sibs = vec![info(&a), sib(20, 100)];
        let mut c = Balia::default();
        for _ in 0..20 {
            c.on_ack(Instant(0), &mut a, &ack(MSS), &sibs);
        }
        let g = (a.cwnd - 20 * MSS) as f64 / MSS as f64;
        assert!((0.24..=0.25).contains(&g), "grew {g} MSS");
    }

    #[test]
    fn balia_rto_resets_to_one_mss() {
        let mut c = Balia::default();
        let mut s = st(20, 100, 0, true);
        c.on_rto(Instant(0), &mut s);
        assert_eq!((s.cwnd, s.ssthresh), (MSS, 10 * MSS));
        // After an ACK that saw alpha = 4, the RTO uses the capped decrease too.
        let mut s = st(20, 200, 0, true);
        s.ssthresh = MSS;
        let sibs = vec![info(&s), sib(40, 100)];
        c.on_ack(Instant(0), &mut s, &ack(MSS), &sibs);
        s.cwnd = 20 * MSS;
        c.on_rto(Instant(0), &mut s);
        assert_eq!((s.cwnd, s.ssthresh), (MSS, 5 * MSS));
        assert!(c.coupled());
        assert_eq!(c.name(), "balia");
    }
}
