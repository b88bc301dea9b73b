//! ECF, Earliest Completion First (Lim, Nahum, Towsley, Gibbens, CoNEXT 2017), with the Linux
//! `mptcp_ecf.c` integer tests: when minRTT picks a slower subflow s while
//! the fastest f is busy, wait for f if f alone would finish the queued data earlier and s is
//! too slow to help. beta = 1/4 hysteresis; delta = max(rttvar_f, rttvar_s) (Linux's rttvar_us
//! holds about 4× the RFC 6298 §2 RTTVAR, so its rttvar/2 is about 2·RTTVAR; we use 2·RTTVAR).

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::Instant;

#[derive(Clone, Debug, Default)]
/// The scheduler; see the module docs.
pub struct Ecf {
    waiting: bool,
}

impl Ecf {
    /// Test convenience: the scheduler registered under `name` with default parameters (the
    /// registry builds schedulers from their parameter struct, see `FromParams`).
    pub fn from_name(_: &str) -> Self {
        Self::default()
    }
}

impl crate::algo::FromParams for Ecf {
    type Params = crate::algo::NoParams;
    fn from_params(_: &crate::algo::NoParams) -> Self {
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

#[cfg(test)]
mod tests {
    //! Hand-computed cases of the kernel's integer tests (`mptcp_ecf.c`). The fast subflow f = 0
    //! has srtt 10 ms, rttvar 1 ms and a full 10-segment window; the slow subflow s = 1 is
    //! available with a 10-segment window. CWND_f = CWND_s = 14 480 bytes. δ = 2·max(rttvar).
    //! All terms are linear in time, so the byte thresholds below are exact in nanoseconds.
    use super::*;
    use crate::info::ConnInfo;
    use crate::sched::tests::{busy, idle, ms, send, view};
    use crate::sched::{SchedSubflow, SchedView};
    use crate::time::Duration;

    const T0: Instant = Instant::ZERO;

    fn pair(srtt_s_ms: u64, rttvar_s: Duration) -> [SchedSubflow; 2] {
        let mut f = busy(10);
        f.info.rttvar = ms(1);
        let mut s = idle(srtt_s_ms);
        s.info.rttvar = rttvar_s;
        [f, s]
    }
    fn decide(e: &mut Ecf, subs: &[SchedSubflow], k: u64) -> (Verdict, Vec<usize>) {
        let conn = ConnInfo::default();
        let v = SchedView { unsent: k, ..view(subs, &conn) };
        send(e, T0, &v)
    }

    /// s = 40 ms, rttvar_s 2 ms => δ = 4 ms, RTT_s + δ = 44 ms.
    /// Test 1 (waiting = 0): 4·10·(x_f + 14 480) < 4·14 480·44  <=>  x_f < 49 232.
    /// Test 1 (waiting = 1): 4·10·(x_f + 14 480) < 5·14 480·44  <=>  x_f < 65 160.
    /// Test 2: 40·x_s >= 14 480·(2·10 + 4) = 347 520  <=>  x_s >= 8 688: always true here since
    /// x_s = max(k, CWND_s) >= 14 480 (s is too slow to help).
    /// Sequence: k = 0 waits and sets waiting; k in [49 232, 65 160) keeps waiting only because of
    /// the beta hysteresis; k = 65 160 sends on s and clears waiting; then k = 49 232 sends; k =
    /// 49 231 waits again.
    #[test]
    fn waiting_with_hysteresis() {
        let subs = pair(40, ms(2));
        let mut e = Ecf::from_name("ecf");
        assert_eq!(e.name(), "ecf");
        assert_eq!(decide(&mut e, &subs, 0), (Verdict::Wait, vec![]), "x_f = CWND_f: f alone finishes first");
        assert_eq!(decide(&mut e, &subs, 49_232), (Verdict::Wait, vec![]), "inside the hysteresis band");
        assert_eq!(decide(&mut e, &subs, 65_159), (Verdict::Wait, vec![]), "last k that keeps waiting");
        assert_eq!(decide(&mut e, &subs, 65_160), (Verdict::Send, vec![1]), "enough queued: use s, waiting := 0");
        assert_eq!(decide(&mut e, &subs, 49_232), (Verdict::Send, vec![1]), "waiting = 0: test 1 fails at 49 232");
        assert_eq!(decide(&mut e, &subs, 49_231), (Verdict::Wait, vec![]), "test 1 holds again");
        assert_eq!(decide(&mut e, &subs, 1_000_000), (Verdict::Send, vec![1]));
    }

    /// s = 20 ms (δ = 4 ms): test 1 holds for k = 0 (4·10·28 960 = 1 158 400 < 4·14 480·24 =
    /// 1 390 080) but test 2 fails (20·14 480 = 289 600 < 14 480·24 = 347 520): send on s and
    /// leave `waiting` as it was. Shown by a waiting state set before and still in force after.
    #[test]
    fn s_fast_enough_sends_and_keeps_waiting_state() {
        let slow = pair(40, ms(2));
        let medium = pair(20, ms(2));
        let mut e = Ecf::from_name("ecf");
        assert_eq!(decide(&mut e, &slow, 0), (Verdict::Wait, vec![]), "waiting := 1");
        assert_eq!(decide(&mut e, &medium, 0), (Verdict::Send, vec![1]));
        assert_eq!(decide(&mut e, &slow, 57_920), (Verdict::Wait, vec![]), "still waiting = 1 (57 920 < 65 160)");
        let mut fresh = Ecf::from_name("ecf");
        assert_eq!(decide(&mut fresh, &slow, 57_920), (Verdict::Send, vec![1]), "waiting = 0: 57 920 >= 49 232");
    }

    /// δ = 2·max(rttvar_f, rttvar_s). s = 22 ms, rttvar_f = 1 ms; for k = 0 test 1 holds and test
    /// 2 is 22 >= 20 + δ (in ms): rttvar_s = 1 ms => δ = 2 ms => wait; rttvar_s = 1 ms + 1 ns =>
    /// δ = 2 ms + 2 ns => send.
    #[test]
    fn delta_is_twice_the_larger_rttvar() {
        let mut e = Ecf::from_name("ecf");
        assert_eq!(decide(&mut e, &pair(22, ms(1)), 0), (Verdict::Wait, vec![]));
        let mut e = Ecf::from_name("ecf");
        assert_eq!(decide(&mut e, &pair(22, Duration(ms(1).0 + 1)), 0), (Verdict::Send, vec![1]));
    }

    /// The fastest subflow available: ECF = minRTT, no test. Nothing available: wait.
    #[test]
    fn fast_available_or_nothing_available() {
        let mut e = Ecf::from_name("ecf");
        assert_eq!(decide(&mut e, &[idle(10), idle(40)], 0), (Verdict::Send, vec![0]));
        assert_eq!(decide(&mut e, &[busy(10), busy(40)], 0), (Verdict::Wait, vec![]));
        assert!(e.opportunistic_retransmission());
        assert!(!e.penalize_all_carriers() && !e.redundant());
    }
}
