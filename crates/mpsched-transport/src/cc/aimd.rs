//! `aimd`, the worked example of `docs/extending.md`: a congestion controller with two
//! parameters, built only for tests (feature `example-algorithms`). Additive increase of `a`
//! segments per window acknowledged, multiplicative decrease to `b` × cwnd on loss (Jacobson
//! 1988; RFC 5681 is the a = 1, b = 0.5 case).

use super::{after_slow_start, AckSample, CcState, CongestionControl, CongestionEvent, Siblings};
use crate::algo::FromParams;
use crate::time::Instant;

crate::params! {
    /// The parameters of `aimd`.
    pub struct AimdParams {
        /// Additive increase, segments per window of acknowledged bytes.
        a: f64 = 1.0, "> 0" if |x: &f64| *x > 0.0;
        /// Multiplicative decrease factor on a congestion event.
        b: f64 = 0.5, "(0, 1)" if |x: &f64| *x > 0.0 && *x < 1.0;
    }
}

/// AIMD(a, b) with byte counting.
#[derive(Clone, Debug)]
pub struct Aimd {
    p: AimdParams,
    acked: f64,
}

impl FromParams for Aimd {
    type Params = AimdParams;
    fn from_params(p: &AimdParams) -> Self {
        Aimd { p: p.clone(), acked: 0.0 }
    }
}

impl CongestionControl for Aimd {
    fn name(&self) -> &'static str {
        "aimd"
    }
    fn on_ack(&mut self, _now: Instant, st: &mut CcState, ack: &AckSample, _sib: Siblings) {
        let Some(acked) = after_slow_start(st, ack.newly_acked) else { return };
        self.acked += acked as f64 * self.p.a;
        let grow = (self.acked / st.cwnd as f64).floor();
        if grow >= 1.0 {
            self.acked -= grow * st.cwnd as f64;
            st.cwnd += grow as u64 * st.mss as u64;
        }
    }
    fn on_congestion_event(&mut self, _now: Instant, st: &mut CcState, _ev: CongestionEvent, _sib: Siblings) {
        st.ssthresh = ((st.cwnd as f64 * self.p.b) as u64).max(2 * st.mss as u64);
        st.cwnd = st.ssthresh;
    }
    fn on_rto(&mut self, _now: Instant, st: &mut CcState) {
        st.ssthresh = ((st.cwnd as f64 * self.p.b) as u64).max(2 * st.mss as u64);
        st.cwnd = st.mss as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CcAlgo, CcSpec};
    use crate::time::Duration;

    fn state(cwnd_segs: u64) -> CcState {
        CcState {
            cwnd: cwnd_segs * 1000,
            ssthresh: 1000,
            mss: 1000,
            pipe: 0,
            srtt: Duration::from_millis(10),
            min_rtt: Duration::from_millis(10),
            abc: true,
            stack: crate::info::Stack::Rfc,
            in_recovery: false,
            index: 0,
        }
    }

    /// From its name with parameters: +a segments per window acknowledged, ×b on loss.
    #[test]
    fn increases_by_a_and_decreases_by_b() {
        let spec = CcSpec::parse("aimd:a=2,b=0.8").unwrap();
        assert_eq!(spec.algo(), &CcAlgo::Aimd(AimdParams { a: 2.0, b: 0.8 }));
        let mut c = spec.build();
        let mut st = state(10);
        let ack = AckSample { newly_acked: 10_000, ..AckSample::default() };
        c.on_ack(Instant::ZERO, &mut st, &ack, &[]);
        assert_eq!(st.cwnd, 12_000, "one window acknowledged: +a = 2 segments");
        c.on_congestion_event(Instant::ZERO, &mut st, CongestionEvent::Loss, &[]);
        assert_eq!((st.cwnd, st.ssthresh), (9_600, 9_600), "x b = 0.8");
        assert_eq!(CcSpec::parse("aimd:b=1").unwrap_err().to_string(), "b: expected (0, 1), got 1");
    }
}
