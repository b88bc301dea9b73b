//! ECF, Earliest Completion First (Lim, Nahum, Towsley, Gibbens, CoNEXT 2017), with the Linux
//! mptcp_ecf.c integer tests of baselines spec A.7: when minRTT picks a slower subflow s while
//! the fastest f is busy, wait for f if f alone would finish the queued data earlier and s is
//! too slow to help. beta = 1/4 hysteresis; delta = max(rttvar_f, rttvar_s) (Linux's rttvar/2
//! is about 2·RTTVAR of RFC 6298, see the spec note; we use 2·RTTVAR).

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::Instant;

#[derive(Clone, Debug, Default)]
pub struct Ecf {
    waiting: bool,
}

impl Ecf {
    pub fn from_name(_: &str) -> Self {
        Self::default()
    }
}

impl Scheduler for Ecf {
    fn name(&self) -> &'static str {
        "ecf"
    }
    fn get_send(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        let Some(s) = v.min_rtt() else { return Verdict::Wait };
        let Some(f) = v.fastest().filter(|&f| f != s) else {
            out.insert(s);
            return Verdict::Send;
        };
        let (ss, fs) = (&v.subflows[s], &v.subflows[f]);
        let (rtt_f, rtt_s) = (fs.info.srtt.0 as u128, ss.info.srtt.0 as u128);
        let delta = 2 * fs.info.rttvar.0.max(ss.info.rttvar.0) as u128;
        let (cwnd_f, cwnd_s) = (fs.info.cwnd.max(1) as u128, ss.info.cwnd.max(1) as u128);
        let k = v.unsent as u128;
        let (x_f, x_s) = (k.max(cwnd_f), k.max(cwnd_s));
        let waiting = self.waiting as u128;
        // Test 1: 4·RTT_f·(x_f + CWND_f) < 4·CWND_f·(RTT_s + δ) + waiting·CWND_f·(RTT_s + δ).
        if 4 * rtt_f * (x_f + cwnd_f) < 4 * cwnd_f * (rtt_s + delta) + waiting * cwnd_f * (rtt_s + delta) {
            // Test 2: RTT_s·x_s ≥ CWND_s·(2·RTT_f + δ): s is too slow to be worth it.
            if rtt_s * x_s >= cwnd_s * (2 * rtt_f + delta) {
                self.waiting = true;
                return Verdict::Wait;
            }
        } else {
            self.waiting = false;
        }
        out.insert(s);
        Verdict::Send
    }
    fn opportunistic_retransmission(&self) -> bool {
        true
    }
}
