//! Round-robin (Linux "roundrobin", baselines spec A.4) with num_segments = 1 and
//! cwnd_limited = true: subflows with window space take turns, one segment each.
//! Reinjections go to the last available subflow that has not carried the segment.

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::Instant;

#[derive(Clone, Debug, Default)]
pub struct RoundRobin {
    /// Subflows that already had their turn in the current round.
    served: u16,
}

impl RoundRobin {
    pub fn from_name(_: &str) -> Self {
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
            return match v.min_rtt() {
                Some(i) => {
                    out.insert(i);
                    Verdict::Send
                }
                None => Verdict::Wait,
            };
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
        let pick = |skip_carried: bool| (0..v.subflows.len()).rev().find(|&i| v.subflows[i].available && !(skip_carried && v.subflows[i].carried));
        match pick(true).or_else(|| pick(false)) {
            Some(i) => {
                out.insert(i);
                Verdict::Send
            }
            None => Verdict::Wait,
        }
    }
}
