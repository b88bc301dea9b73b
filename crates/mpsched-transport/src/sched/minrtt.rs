//! minRTT, the Linux out-of-tree default scheduler (baselines spec A.2): the available active
//! subflow with the smallest smoothed RTT. Opportunistic retransmission and penalization (A.3,
//! Raiciu et al. NSDI 2012) are on for "minrtt"/"default"/"minrtt-rp" as in Linux, off for
//! "minrtt-norp".

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::Instant;

#[derive(Clone, Debug)]
pub struct MinRtt {
    pub opportunistic: bool,
}

impl MinRtt {
    pub fn from_name(name: &str) -> Self {
        MinRtt { opportunistic: name != "minrtt-norp" }
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
        match v.min_rtt() {
            Some(i) => {
                out.insert(i);
                Verdict::Send
            }
            None => Verdict::Wait,
        }
    }
    fn opportunistic_retransmission(&self) -> bool {
        self.opportunistic
    }
}
