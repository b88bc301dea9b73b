//! BLEST (Ferlin, Alay, Mehani, Boreli, IFIP Networking 2016), following the Linux mptcp_blest.c
//! rule (`mptcp_blest.c`): when minRTT picks a slower subflow s while the fastest
//! subflow f is busy, estimate the bytes f could send while a segment on s occupies the
//! connection window; if they would not fit in what is left of the send window, wait for f.
//! lambda adapts in [1.0, 1.3] (+0.04 after a HoL event, −0.01 otherwise, once per min srtt of s).

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::algo::FromParams;
use crate::time::Instant;

#[derive(Clone, Debug)]
/// The scheduler; see the module docs.
pub struct Blest {
    /// Scaling factor of the fast subflow's estimate (starts at 1.2).
    pub lambda: f64,
    hol_flag: bool,
    last_lambda_update: Instant,
}

crate::params! {
    /// BLEST's parameters.
    pub struct BlestParams {
        /// Initial λ, the scaling of the fast subflow's estimate (Linux mptcp_blest.c: 1.2).
        lambda: f64 = 1.2, "[1, 1.3]" if |x: &f64| (1.0..=1.3).contains(x);
    }
}

impl Blest {
    /// Test convenience: the scheduler registered under `name` with default parameters (the
    /// registry builds schedulers from their parameter struct, see `FromParams`).
    pub fn from_name(_: &str) -> Self {
        Self::from_params(&BlestParams::default())
    }
}

impl crate::algo::FromParams for Blest {
    type Params = BlestParams;
    fn from_params(p: &BlestParams) -> Self {
        Blest { lambda: p.lambda, hol_flag: false, last_lambda_update: Instant::ZERO }
    }
}

impl Scheduler for Blest {
    fn name(&self) -> &'static str {
        "blest"
    }
    fn get_send(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        let Some(s) = v.min_rtt() else { return Verdict::Wait };
        let f = v.fastest();
        let Some(f) = f.filter(|&f| f != s) else {
            out.insert(s);
            return Verdict::Send;
        };
        let (ss, fs) = (&v.subflows[s], &v.subflows[f]);
        // lambda update, at most once per min srtt of s.
        if now.0 >= self.last_lambda_update.0 + ss.min_srtt_ns {
            self.lambda += if self.hol_flag { 0.04 } else { -0.01 };
            self.lambda = self.lambda.clamp(1.0, 1.3);
            self.hol_flag = false;
            self.last_lambda_update = now;
        }
        let cwnd_s_pkts = (ss.info.cwnd as f64 / v.seg_len.max(1) as f64).max(1.0);
        let inflight_s_pkts = ss.info.pipe as f64 / v.seg_len.max(1) as f64;
        let (min_s, max_s) = (ss.min_srtt_ns as f64, ss.max_srtt_ns as f64);
        let estimate = if inflight_s_pkts + 1.0 >= cwnd_s_pkts {
            max_s
        } else {
            min_s + (max_s - min_s) * (inflight_s_pkts + 1.0) / cwnd_s_pkts
        };
        let linger_s = (ss.info.srtt.0 as f64).max(estimate);
        let avg_f = (fs.min_srtt_ns as f64 + fs.max_srtt_ns as f64) / 2.0;
        let n = if avg_f > 0.0 { (linger_s / avg_f).floor() + 1.0 } else { 1.0 };
        let mss_f = v.seg_len.max(1) as f64;
        let cwnd_f = fs.info.cwnd as f64 / mss_f;
        let packets_f = if fs.info.ssthresh >= u64::MAX / 2 {
            cwnd_f * (2f64.powf(n.min(16.0)) - 1.0)
        } else {
            let w = cwnd_f.max(fs.info.ssthresh as f64 / mss_f + 1.0);
            (w + ((n - 1.0) / 2.0).floor()) * n
        };
        let fast_bytes = packets_f * mss_f * self.lambda;
        let slow_bytes = v.seg_len as f64 + ss.queued as f64;
        let avail = (v.send_window as f64 - slow_bytes).max(0.0);
        if fast_bytes > avail {
            return Verdict::Wait;
        }
        out.insert(s);
        Verdict::Send
    }
    fn opportunistic_retransmission(&self) -> bool {
        true
    }
    fn penalize_all_carriers(&self) -> bool {
        true
    }
    fn on_hol_event(&mut self) {
        self.hol_flag = true;
    }
}

#[cfg(test)]
mod tests {
    //! Hand-computed cases of the kernel version (`mptcp_blest.c`). Throughout: MSS 1448 bytes,
    //! the fast subflow f = 0 (srtt 10 ms, min = max srtt 10 ms, window 10 segments, all in
    //! flight), the slow subflow s = 1 (srtt 50 ms, min srtt 40 ms, max srtt 60 ms, window 10
    //! segments, 2 in flight = 2896 bytes queued). Calls at `now = 0` leave lambda at 1.2
    //! (the first update is due once min_srtt_s = 40 ms has passed).
    use super::*;
    use crate::info::ConnInfo;
    use crate::sched::tests::{at_ms, busy, idle, ms, send, sf, view, MSS};
    use crate::sched::{SchedSubflow, SchedView};

    const T0: Instant = Instant::ZERO;

    fn fast(ssthresh_segs: Option<u64>) -> SchedSubflow {
        let mut f = busy(10);
        f.info.ssthresh = ssthresh_segs.map_or(u64::MAX, |x| x * MSS);
        f
    }
    fn slow(srtt: u64, min: u64, max: u64, pipe_segs: u64) -> SchedSubflow {
        SchedSubflow { min_srtt_ns: ms(min).0, max_srtt_ns: ms(max).0, ..sf(srtt, 10, pipe_segs) }
    }
    fn with_window<'a>(subs: &'a [SchedSubflow], conn: &'a ConnInfo, send_window: u64) -> SchedView<'a> {
        SchedView { send_window, ..view(subs, conn) }
    }
    fn decide(b: &mut Blest, now: Instant, subs: &[SchedSubflow], send_window: u64) -> (Verdict, Vec<usize>) {
        let conn = ConnInfo::default();
        send(b, now, &with_window(subs, &conn, send_window))
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Congestion avoidance on f (ssthresh 20 segments):
    ///   inflight_s + 1 = 3 < cwnd_s = 10  =>  estimate = 40 + (60 − 40)·3/10 = 46 ms
    ///   linger_s = max(srtt_s 50, 46) = 50 ms;  avg_f = (10 + 10)/2 = 10 ms
    ///   n = floor(50/10) + 1 = 6;  w = max(cwnd_f 10, ssthresh_f + 1 = 21) = 21
    ///   packets_f = (21 + floor(5/2))·6 = 138;  fast_bytes = 138·1448·1.2 = 239 788.8
    ///   slow_bytes = 1448 + 2896 = 4344;  avail = send_window − 4344
    /// Send iff 239 788.8 <= send_window − 4344, i.e. send_window >= 244 133.
    #[test]
    fn congestion_avoidance_threshold() {
        let subs = [fast(Some(20)), slow(50, 40, 60, 2)];
        let mut b = Blest::from_name("blest");
        assert_eq!(b.name(), "blest");
        assert_eq!(decide(&mut b, T0, &subs, 200_000), (Verdict::Wait, vec![]), "f would need more window");
        assert_eq!(decide(&mut b, T0, &subs, 244_132), (Verdict::Wait, vec![]), "avail 239 788 < 239 788.8");
        assert_eq!(decide(&mut b, T0, &subs, 244_133), (Verdict::Send, vec![1]), "avail 239 789 >= 239 788.8");
        assert_eq!(decide(&mut b, T0, &subs, 1 << 30), (Verdict::Send, vec![1]), "large window: use s");
        assert!(close(b.lambda, 1.2), "no lambda update before min_srtt_s");
    }

    /// s has its window nearly full (9 of 10 in flight): inflight_s + 1 >= cwnd_s, so
    ///   estimate = max_srtt_s = 90 ms; linger = max(50, 90) = 90; n = floor(90/10) + 1 = 10
    ///   packets_f = (21 + floor(9/2))·10 = 250; fast_bytes = 250·1448·1.2 = 434 400
    ///   slow_bytes = 1448 + 9·1448 = 14 480  =>  send iff send_window − 14 480 >= 434 400.
    #[test]
    fn linger_uses_max_srtt_when_s_window_is_full() {
        let subs = [fast(Some(20)), slow(50, 40, 90, 9)];
        let mut b = Blest::from_name("blest");
        assert_eq!(decide(&mut b, T0, &subs, 448_879), (Verdict::Wait, vec![]));
        assert_eq!(decide(&mut b, T0, &subs, 448_881), (Verdict::Send, vec![1]));
    }

    /// f in initial slow start (ssthresh infinite): packets_f = cwnd_f·(2^n − 1) = 10·63 = 630,
    /// fast_bytes = 630·1448·1.2 = 1 094 688; send iff send_window − 4344 >= 1 094 688.
    #[test]
    fn slow_start_estimate() {
        let subs = [fast(None), slow(50, 40, 60, 2)];
        let mut b = Blest::from_name("blest");
        assert_eq!(decide(&mut b, T0, &subs, 1_000_000), (Verdict::Wait, vec![]));
        assert_eq!(decide(&mut b, T0, &subs, 1_099_031), (Verdict::Wait, vec![]));
        assert_eq!(decide(&mut b, T0, &subs, 1_099_033), (Verdict::Send, vec![1]));
    }

    /// In slow start n is capped at 16: s at 1 s, f at 10 ms gives n = 101, capped to 16:
    /// packets_f = 10·(2^16 − 1) = 655 350, fast_bytes = 655 350·1448·1.2 ≈ 1.1387e9.
    #[test]
    fn slow_start_n_capped_at_16() {
        let subs = [fast(None), slow(1000, 1000, 1000, 2)];
        let mut b = Blest::from_name("blest");
        assert_eq!(decide(&mut b, T0, &subs, 1 << 30), (Verdict::Wait, vec![]), "1.07e9 < 1.1387e9");
        assert_eq!(
            decide(&mut b, T0, &subs, 1_140_000_000),
            (Verdict::Send, vec![1]),
            "without the cap 2^101 would always wait"
        );
    }

    /// No RTT sample on f yet (min = max = 0): avg_f = 0 => n = 1, packets_f = (21 + 0)·1 = 21,
    /// fast_bytes = 21·1448·1.2 = 36 489.6; send iff send_window − 4344 >= 36 489.6.
    #[test]
    fn no_fast_rtt_sample_means_one_round() {
        let mut f = fast(Some(20));
        f.min_srtt_ns = 0;
        f.max_srtt_ns = 0;
        let subs = [f, slow(50, 40, 60, 2)];
        let mut b = Blest::from_name("blest");
        assert_eq!(decide(&mut b, T0, &subs, 40_833), (Verdict::Wait, vec![]));
        assert_eq!(decide(&mut b, T0, &subs, 40_834), (Verdict::Send, vec![1]));
    }

    /// When minRTT's choice is the fastest subflow there is nothing to estimate (and lambda is
    /// not updated); when no subflow is available BLEST waits like minRTT.
    #[test]
    fn fast_subflow_available_or_none_available() {
        let mut b = Blest::from_name("blest");
        let subs = [idle(10), slow(50, 40, 60, 2)];
        assert_eq!(decide(&mut b, at_ms(1000), &subs, 0), (Verdict::Send, vec![0]), "no window test for f");
        assert!(close(b.lambda, 1.2), "lambda untouched when s == f");
        let subs = [busy(10), busy(50)];
        assert_eq!(decide(&mut b, at_ms(1000), &subs, 1 << 30), (Verdict::Wait, vec![]));
        assert!(close(b.lambda, 1.2));
    }

    /// lambda scales fast_bytes: with lambda = 1.0 the CA case needs 138·1448 = 199 824 bytes,
    /// which fit in 210 000 − 4344 = 205 656; with 1.2 (239 788.8) they do not.
    #[test]
    fn lambda_scales_the_estimate() {
        let subs = [fast(Some(20)), slow(50, 40, 60, 2)];
        let mut b = Blest::from_name("blest");
        assert_eq!(decide(&mut b, T0, &subs, 210_000), (Verdict::Wait, vec![]));
        b.lambda = 1.0;
        assert_eq!(decide(&mut b, T0, &subs, 210_000), (Verdict::Send, vec![1]));
    }

    /// Lambda update as Linux `blestsched_update_lambda` (mptcp_blest.c): at most once per
    /// min_srtt of s (40 ms here): +0.04 (dyn_lambda_bad) if a HoL event was reported since the
    /// last update, else −0.01 (dyn_lambda_good); clamped to [1.0, 1.3].
    #[test]
    fn lambda_adaptation() {
        let subs = [fast(Some(20)), slow(50, 40, 60, 2)];
        let mut b = Blest::from_name("blest");
        assert!(close(b.lambda, 1.2));
        decide(&mut b, at_ms(40), &subs, 1 << 30);
        assert!(close(b.lambda, 1.19), "first update 40 ms after time 0: no HoL => -0.01 ({})", b.lambda);
        decide(&mut b, at_ms(79), &subs, 1 << 30);
        assert!(close(b.lambda, 1.19), "less than min_srtt_s since the last update");
        b.on_hol_event();
        decide(&mut b, at_ms(80), &subs, 1 << 30);
        assert!(close(b.lambda, 1.23), "{}", b.lambda);
        b.on_hol_event();
        decide(&mut b, at_ms(120), &subs, 1 << 30);
        assert!(close(b.lambda, 1.27), "{}", b.lambda);
        b.on_hol_event();
        decide(&mut b, at_ms(160), &subs, 1 << 30);
        assert!(close(b.lambda, 1.3), "clamped at 1.3: {}", b.lambda);
        decide(&mut b, at_ms(200), &subs, 1 << 30);
        assert!(close(b.lambda, 1.29), "the flag was cleared by the previous update: {}", b.lambda);
        for k in 0..40 {
            decide(&mut b, at_ms(240 + 40 * k), &subs, 1 << 30);
        }
        assert!(close(b.lambda, 1.0), "clamped at 1.0: {}", b.lambda);
    }

    #[test]
    fn flags() {
        let b = Blest::from_name("blest");
        assert!(b.opportunistic_retransmission());
        assert!(b.penalize_all_carriers(), "mptcp_blest_rcv_buf_optimization halves every slower carrier");
        assert!(!b.redundant());
    }
}
