//! minRTT, the Linux out-of-tree default scheduler (`mptcp_sched.c`, `get_available_subflow`): the available active
//! subflow with the smallest smoothed RTT. Opportunistic retransmission and penalization (Linux
//! `mptcp_rcv_buf_optimization`; Raiciu et al. NSDI 2012 §4) are on for
//! "minrtt"/"default"/"minrtt-rp" as in Linux, off for "minrtt-norp".

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::algo::FromParams;
use crate::time::Instant;

crate::params! {
    /// minRTT's parameters.
    pub struct MinRttParams {
        /// Opportunistic retransmission and penalization when the receive window blocks the
        /// connection (Raiciu et al., NSDI 2012 §4.2; Linux `mptcp_rcv_buf_optimization`).
        opportunistic: bool = true;
    }
}

#[derive(Clone, Debug)]
/// The scheduler; see the module docs.
pub struct MinRtt {
    /// Opportunistic retransmission and penalization (Linux `mptcp_rcv_buf_optimization`) on.
    pub opportunistic: bool,
}

impl MinRtt {
    /// Test convenience: the scheduler registered under `name` with default parameters (the
    /// registry builds schedulers from their parameter struct, see `FromParams`).
    pub fn from_name(name: &str) -> Self {
        MinRtt { opportunistic: name != "minrtt-norp" }
    }
}

impl FromParams for MinRtt {
    type Params = MinRttParams;
    fn from_params(p: &MinRttParams) -> Self {
        MinRtt { opportunistic: p.opportunistic }
    }
}

impl Scheduler for MinRtt {
    fn name(&self) -> &'static str {
        if self.opportunistic {
            "minrtt"
        } else {
            "minrtt-norp"
        }
    }
    fn get_send(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        v.send_min_rtt(out)
    }
    fn opportunistic_retransmission(&self) -> bool {
        self.opportunistic
    }
    /// minRTT reads the subflows' views only (srtt, usable, available, backup, carried).
    fn reads_conn(&self) -> bool {
        false
    }
    /// Of a snapshot minRTT reads the srtt alone.
    fn reads_full_info(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::ConnInfo;
    use crate::sched::tests::{backup, busy, carried, idle, reinj_view, retrans, send, unusable, view};

    #[test]
    fn names_and_opportunistic_flag() {
        for (n, name, rp) in [
            ("minrtt", "minrtt", true),
            ("default", "minrtt", true),
            ("minrtt-rp", "minrtt", true),
            ("minrtt-norp", "minrtt-norp", false),
        ] {
            let s = MinRtt::from_name(n);
            assert_eq!((s.name(), s.opportunistic_retransmission()), (name, rp), "{n}");
            assert!(!s.redundant() && !s.penalize_all_carriers());
        }
    }

    /// get_send sets exactly the one bit of the minRTT choice; Wait with nothing set otherwise.
    #[test]
    fn get_send_sets_the_min_rtt_bit() {
        let conn = ConnInfo::default();
        let mut s = MinRtt::from_name("minrtt");
        let subs = [idle(30), idle(10), busy(5)];
        assert_eq!(send(&mut s, Instant::ZERO, &view(&subs, &conn)), (Verdict::Send, vec![1]));
        let subs = [busy(10), busy(20), backup(idle(1))];
        assert_eq!(send(&mut s, Instant::ZERO, &view(&subs, &conn)), (Verdict::Wait, vec![]));
        let subs = [unusable(10), backup(idle(40))];
        assert_eq!(send(&mut s, Instant::ZERO, &view(&subs, &conn)), (Verdict::Send, vec![1]));
    }

    /// Reinjections go through the same selection with the carried-mask preference.
    #[test]
    fn get_retrans_prefers_subflow_without_the_segment() {
        let conn = ConnInfo::default();
        let mut s = MinRtt::from_name("minrtt-norp");
        let subs = [carried(idle(10)), idle(40)];
        assert_eq!(retrans(&mut s, Instant::ZERO, &reinj_view(&subs, &conn)), (Verdict::Send, vec![1]));
        let subs = [carried(unusable(10)), busy(40)];
        assert_eq!(retrans(&mut s, Instant::ZERO, &reinj_view(&subs, &conn)), (Verdict::Wait, vec![]));
    }
}
