//! BLEST (Ferlin, Alay, Mehani, Boreli, IFIP Networking 2016), following the Linux mptcp_blest.c
//! rule described in baselines spec A.6: when minRTT picks a slower subflow s while the fastest
//! subflow f is busy, estimate the bytes f could send while a segment on s occupies the
//! connection window; if they would not fit in what is left of the send window, wait for f.
//! lambda adapts in [1.0, 1.3] (+0.04 after a HoL event, −0.01 otherwise, once per min srtt of s).

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::Instant;

#[derive(Clone, Debug)]
pub struct Blest {
    /// Scaling factor of the fast subflow's estimate (starts at 1.2).
    pub lambda: f64,
    hol_flag: bool,
    last_lambda_update: Instant,
}

impl Blest {
    pub fn from_name(_: &str) -> Self {
        Blest { lambda: 1.2, hol_flag: false, last_lambda_update: Instant::ZERO }
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
