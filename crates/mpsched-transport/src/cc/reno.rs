//! NewReno (RFC 5681 window rules; loss recovery itself is the subflow's RFC 6675 machinery).

use super::{after_slow_start, AckSample, CcState, CongestionControl, CongestionEvent, Siblings};
use crate::time::Instant;

#[derive(Clone, Debug, Default)]
/// The controller; see the module docs.
pub struct NewReno {
    /// Bytes acknowledged since the last congestion-avoidance increase (byte counting).
    acked_acc: u64,
}

crate::no_params!(NewReno);

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_ack(&mut self, _now: Instant, st: &mut CcState, ack: &AckSample, _sib: Siblings) {
        let Some(acked) = after_slow_start(st, ack.newly_acked) else { return };
        let mss = st.mss as u64;
        if st.abc {
            // RFC 3465 / Linux: one MSS per cwnd's worth of acknowledged bytes.
            self.acked_acc += acked;
            if self.acked_acc >= st.cwnd {
                self.acked_acc -= st.cwnd;
                st.cwnd += mss;
            }
        } else {
            // RFC 5681 eq. 3, per ACK: cwnd += MSS*MSS/cwnd (at least 1 byte).
            st.cwnd += (mss * mss / st.cwnd).max(1);
        }
    }

    fn on_congestion_event(&mut self, _now: Instant, st: &mut CcState, _ev: CongestionEvent, _sib: Siblings) {
        // RFC 5681 eq. 4 with Linux's choice of cwnd for FlightSize.
        st.ssthresh = (st.cwnd / 2).max(2 * st.mss as u64);
        st.cwnd = st.ssthresh;
        self.acked_acc = 0;
    }

    fn on_rto(&mut self, _now: Instant, st: &mut CcState) {
        st.ssthresh = (st.cwnd / 2).max(2 * st.mss as u64);
        st.cwnd = st.mss as u64;
        self.acked_acc = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    fn st(cwnd: u64, ssthresh: u64, abc: bool) -> CcState {
        CcState {
            cwnd,
            ssthresh,
            mss: 1000,
            pipe: 0,
            srtt: Duration::from_millis(100),
            min_rtt: Duration::ZERO,
            abc,
            stack: crate::info::Stack::Rfc,
            in_recovery: false,
            index: 0,
        }
    }
    fn ack(bytes: u64) -> AckSample {
        AckSample { newly_acked: bytes, ..Default::default() }
    }

    #[test]
    fn slow_start_abc_grows_by_bytes_acked() {
        let mut c = NewReno::default();
        let mut s = st(10_000, u64::MAX, true);
        c.on_ack(Instant(0), &mut s, &ack(2000), &[]);
        assert_eq!(s.cwnd, 12_000);
    }

    #[test]
    fn slow_start_per_ack_without_abc() {
        let mut c = NewReno::default();
        let mut s = st(10_000, u64::MAX, false);
        c.on_ack(Instant(0), &mut s, &ack(2000), &[]);
        assert_eq!(s.cwnd, 11_000);
    }

    #[test]
    fn congestion_avoidance_one_mss_per_window() {
        let mut c = NewReno::default();
        let mut s = st(10_000, 5_000, true);
        for _ in 0..9 {
            c.on_ack(Instant(0), &mut s, &ack(1000), &[]);
        }
        assert_eq!(s.cwnd, 10_000);
        c.on_ack(Instant(0), &mut s, &ack(1000), &[]);
        assert_eq!(s.cwnd, 11_000);
    }

    #[test]
    fn loss_halves_and_rto_resets() {
        let mut c = NewReno::default();
        let mut s = st(20_000, u64::MAX, true);
        c.on_congestion_event(Instant(0), &mut s, CongestionEvent::Loss, &[]);
        assert_eq!((s.cwnd, s.ssthresh), (10_000, 10_000));
        c.on_rto(Instant(0), &mut s);
        assert_eq!((s.cwnd, s.ssthresh), (1_000, 5_000));
    }
}
