//! `prefer`, the worked example of `docs/extending.md`: a scheduler with two parameters, built
//! only for tests (feature `example-algorithms`). It sends on one chosen subflow while that
//! subflow's smoothed RTT stays at or below a bound, and on minRTT's choice otherwise.

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::algo::FromParams;
use crate::time::Instant;

crate::params! {
    /// The parameters of `prefer`.
    pub struct PreferParams {
        /// Index of the preferred subflow (the flow's path order).
        subflow: usize = 0, "0..=7" if |x: &usize| *x <= 7;
        /// Give up the preferred subflow while its srtt is above this, ms.
        max_srtt_ms: f64 = 100.0, "> 0" if |x: &f64| *x > 0.0;
    }
}

/// Sends on the preferred subflow while its srtt ≤ `max_srtt_ms`, else as minRTT.
#[derive(Clone, Debug)]
pub struct Prefer {
    subflow: usize,
    max_srtt_ns: u64,
}

impl FromParams for Prefer {
    type Params = PreferParams;
    fn from_params(p: &PreferParams) -> Self {
        Prefer { subflow: p.subflow, max_srtt_ns: (p.max_srtt_ms * 1e6) as u64 }
    }
}

impl Scheduler for Prefer {
    fn name(&self) -> &'static str {
        "prefer"
    }
    fn get_send(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        match v.subflows.get(self.subflow) {
            Some(s) if s.usable && s.info.srtt.0 <= self.max_srtt_ns => {
                if !s.available {
                    return Verdict::Wait;
                }
                out.insert(self.subflow);
                Verdict::Send
            }
            _ => v.send_min_rtt(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::ConnInfo;
    use crate::sched::tests::{busy, idle, send, view};
    use crate::sched::{SchedAlgo, SchedSpec};

    /// From its name with parameters, through the registry: the preferred subflow while its
    /// srtt is within the bound (waiting when it is busy), minRTT once it is above.
    #[test]
    fn prefers_its_subflow_within_the_bound() {
        let spec = SchedSpec::parse("prefer:subflow=1,max_srtt_ms=40").unwrap();
        assert_eq!(spec.algo(), &SchedAlgo::Prefer(PreferParams { subflow: 1, max_srtt_ms: 40.0 }));
        let mut s = spec.build();
        let conn = ConnInfo::default();
        assert_eq!(send(&mut s, Instant::ZERO, &view(&[idle(10), idle(30)], &conn)), (Verdict::Send, vec![1]));
        assert_eq!(send(&mut s, Instant::ZERO, &view(&[idle(10), busy(30)], &conn)), (Verdict::Wait, vec![]));
        assert_eq!(send(&mut s, Instant::ZERO, &view(&[idle(10), idle(50)], &conn)), (Verdict::Send, vec![0]));
        assert_eq!(SchedSpec::parse("prefer:subflow=9").unwrap_err().to_string(), "subflow: expected 0..=7, got 9");
    }
}
