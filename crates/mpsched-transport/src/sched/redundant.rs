//! Redundant ("send on all", Linux `mptcp_redundant.c`, v0.90+): every active
//! subflow carries every segment that is still unacknowledged at connection level; a lagging
//! subflow skips data the peer has already DATA_ACKed. The connection keeps one DSN cursor per
//! subflow; this scheduler only switches that mode on and handles reinjections with minRTT.

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::Instant;

#[derive(Clone, Debug, Default)]
/// The scheduler; see the module docs.
pub struct Redundant;

impl Redundant {
    /// Test convenience: the scheduler registered under `name` with default parameters (the
    /// registry builds schedulers from their parameter struct, see `FromParams`).
    pub fn from_name(_: &str) -> Self {
        Redundant
    }
}

impl crate::algo::FromParams for Redundant {
    type Params = crate::algo::NoParams;
    fn from_params(_: &crate::algo::NoParams) -> Self {
        Redundant
    }
}

impl Scheduler for Redundant {
    fn name(&self) -> &'static str {
        "redundant"
    }
    fn get_send(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        v.send_min_rtt(out)
    }
    fn redundant(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::ConnInfo;
    use crate::sched::tests::{busy, carried, idle, reinj_view, retrans, send, unusable, view};

    /// Redundant only switches the connection's per-subflow catch-up mode on (Linux
    /// mptcp_redundant.c, v0.90+ version); the scheduler itself answers with minRTT, and
    /// reinjections go to the minRTT choice.
    #[test]
    fn redundant_mode_and_min_rtt_answers() {
        let mut s = Redundant::from_name("redundant");
        assert_eq!(s.name(), "redundant");
        assert!(s.redundant());
        assert!(!s.opportunistic_retransmission());
        let conn = ConnInfo::default();
        let subs = [idle(30), idle(10)];
        assert_eq!(send(&mut s, Instant::ZERO, &view(&subs, &conn)), (Verdict::Send, vec![1]));
        let subs = [busy(10), busy(30)];
        assert_eq!(send(&mut s, Instant::ZERO, &view(&subs, &conn)), (Verdict::Wait, vec![]));
        let subs = [carried(unusable(10)), idle(30), carried(idle(5))];
        assert_eq!(retrans(&mut s, Instant::ZERO, &reinj_view(&subs, &conn)), (Verdict::Send, vec![1]));
    }
}
