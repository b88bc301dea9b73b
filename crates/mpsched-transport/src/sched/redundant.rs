//! Redundant ("send on all", baselines spec A.5 (a), the v0.90+ Linux version): every active
//! subflow carries every segment that is still unacknowledged at connection level; a lagging
//! subflow skips data the peer has already DATA_ACKed. The connection keeps one DSN cursor per
//! subflow; this scheduler only switches that mode on and handles reinjections with minRTT.

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::Instant;

#[derive(Clone, Debug, Default)]
pub struct Redundant;

impl Redundant {
    pub fn from_name(_: &str) -> Self {
        Redundant
    }
}

impl Scheduler for Redundant {
    fn name(&self) -> &'static str {
        "redundant"
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
    fn redundant(&self) -> bool {
        true
    }
}
