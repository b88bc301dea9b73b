//! Round-robin (Linux `mptcp_rr.c`) with num_segments = 1 and
//! cwnd_limited = true: subflows with window space take turns, one segment each.
//! Reinjections go to the last available subflow that has not carried the segment.

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::Instant;

#[derive(Clone, Debug, Default)]
/// The scheduler; see the module docs.
pub struct RoundRobin {
    /// Subflows that already had their turn in the current round.
    served: u16,
}

impl RoundRobin {
    /// Test convenience: the scheduler registered under `name` with default parameters (the
    /// registry builds schedulers from their parameter struct, see `FromParams`).
    pub fn from_name(_: &str) -> Self {
        Self::default()
    }
}

impl crate::algo::FromParams for RoundRobin {
    type Params = crate::algo::NoParams;
    fn from_params(_: &crate::algo::NoParams) -> Self {
        Self::default()
    }
}

impl Scheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "roundrobin"
    }
    fn get_send(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        let avail = |i: usize| v.subflows[i].available && !v.subflows[i].backup;
        let n = v.subflows.len();
        if !(0..n).any(avail) {
            return v.send_min_rtt(out);
        }
        // Start a new round once every available subflow has been served.
        if (0..n).filter(|&i| avail(i)).all(|i| self.served & (1 << i) != 0) {
            self.served = 0;
        }
        let i = (0..n).find(|&i| avail(i) && self.served & (1 << i) == 0).expect("an unserved subflow");
        self.served |= 1 << i;
        out.insert(i);
        Verdict::Send
    }
    fn get_retrans(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        let pick = |skip_carried: bool| {
            (0..v.subflows.len()).rev().find(|&i| v.subflows[i].available && !(skip_carried && v.subflows[i].carried))
        };
        super::send_on(pick(true).or_else(|| pick(false)), out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::ConnInfo;
    use crate::sched::tests::{backup, busy, carried, idle, reinj_view, retrans, send, unusable, view};
    use crate::sched::SchedSubflow;

    fn picks(s: &mut RoundRobin, subs: &[SchedSubflow], n: usize) -> Vec<usize> {
        let conn = ConnInfo::default();
        (0..n)
            .map(|_| match send(s, Instant::ZERO, &view(subs, &conn)) {
                (Verdict::Send, v) if v.len() == 1 => v[0],
                other => panic!("{other:?}"),
            })
            .collect()
    }

    /// Available subflows take turns, one segment each, whatever their RTTs (N = 1). The order
    /// within a round is ascending index.
    #[test]
    fn rotates_among_available_subflows() {
        let mut s = RoundRobin::from_name("rr");
        assert_eq!(s.name(), "roundrobin");
        assert_eq!(picks(&mut s, &[idle(50), idle(10), idle(30)], 7), vec![0, 1, 2, 0, 1, 2, 0]);
    }

    /// cwnd_limited = true: a subflow with a full window sits the round out; the others rotate.
    #[test]
    fn busy_subflow_skipped() {
        let mut s = RoundRobin::from_name("rr");
        assert_eq!(picks(&mut s, &[idle(10), busy(10), idle(10)], 4), vec![0, 2, 0, 2]);
        assert_eq!(picks(&mut s, &[idle(10), unusable(10), idle(10)], 2), vec![0, 2]);
    }

    /// A subflow that gets window space in the middle of a round takes its turn in that round.
    #[test]
    fn subflow_becoming_available_joins_the_round() {
        let mut s = RoundRobin::from_name("rr");
        assert_eq!(picks(&mut s, &[idle(10), busy(10), idle(10)], 1), vec![0]);
        // Round so far: {0}. Subflow 1 now has space: it is the first unserved one.
        assert_eq!(picks(&mut s, &[idle(10), idle(10), idle(10)], 3), vec![1, 2, 0]);
    }

    /// Backups stay out of the rotation while an active subflow is available; with no available
    /// active subflow the minRTT rule applies (wait if an active one is only busy, use the
    /// backup if no active one is usable).
    #[test]
    fn backups_only_through_min_rtt_fallback() {
        let conn = ConnInfo::default();
        let mut s = RoundRobin::from_name("rr");
        assert_eq!(picks(&mut s, &[idle(10), backup(idle(10))], 3), vec![0, 0, 0]);
        let subs = [busy(10), backup(idle(10))];
        assert_eq!(send(&mut s, Instant::ZERO, &view(&subs, &conn)), (Verdict::Wait, vec![]));
        let subs = [unusable(10), backup(idle(10))];
        assert_eq!(send(&mut s, Instant::ZERO, &view(&subs, &conn)), (Verdict::Send, vec![1]));
    }

    /// Reinjection as Linux mptcp_rr.c: the LAST available subflow (list order) that has not
    /// carried the segment; if every available one carried it, the last available one.
    #[test]
    fn reinjection_goes_to_last_available_not_carrier() {
        let conn = ConnInfo::default();
        let mut s = RoundRobin::from_name("rr");
        let subs = [idle(10), idle(10), carried(idle(10))];
        assert_eq!(retrans(&mut s, Instant::ZERO, &reinj_view(&subs, &conn)), (Verdict::Send, vec![1]));
        let subs = [idle(10), busy(10), carried(idle(10))];
        assert_eq!(retrans(&mut s, Instant::ZERO, &reinj_view(&subs, &conn)), (Verdict::Send, vec![0]));
        let subs = [carried(idle(10)), carried(idle(10)), carried(busy(10))];
        assert_eq!(retrans(&mut s, Instant::ZERO, &reinj_view(&subs, &conn)), (Verdict::Send, vec![1]));
        let subs = [busy(10), carried(unusable(10))];
        assert_eq!(retrans(&mut s, Instant::ZERO, &reinj_view(&subs, &conn)), (Verdict::Wait, vec![]));
    }

    /// Over many segments with all subflows available, shares are equal to within one segment.
    #[test]
    fn equal_shares() {
        let mut s = RoundRobin::from_name("rr");
        let p = picks(&mut s, &[idle(10), idle(100), idle(1000)], 301);
        let count = |i| p.iter().filter(|&&x| x == i).count();
        assert_eq!((count(0), count(1), count(2)), (101, 100, 100));
    }
}
