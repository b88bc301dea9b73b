//! Externally controlled window (the DRL-CC set-up): an outside policy sets each subflow's cwnd
//! every decision interval (`Sim::set_cwnd` / `Connection::set_subflow_cwnd`). Between
//! decisions the window does not grow on its own. Loss reactions stay TCP's (halve on a loss
//! event, one segment after an RTO) so an idle or slow policy cannot overrun the network;
//! the policy sees the reduced window at its next decision.

use super::{AckSample, CcState, CongestionControl, CongestionEvent, Siblings};
use crate::time::Instant;

#[derive(Clone, Debug, Default)]
/// Window set from outside (`Connection::set_subflow_cwnd`); halves on loss, one segment on RTO.
pub struct ExternalCc;

crate::no_params!(ExternalCc);

impl CongestionControl for ExternalCc {
    fn name(&self) -> &'static str {
        "external"
    }
    fn on_ack(&mut self, _now: Instant, _st: &mut CcState, _ack: &AckSample, _sib: Siblings) {}
    fn on_congestion_event(&mut self, _now: Instant, st: &mut CcState, _ev: CongestionEvent, _sib: Siblings) {
        st.ssthresh = (st.cwnd / 2).max(2 * st.mss as u64);
        st.cwnd = st.ssthresh;
    }
    fn on_rto(&mut self, _now: Instant, st: &mut CcState) {
        st.ssthresh = (st.cwnd / 2).max(2 * st.mss as u64);
        st.cwnd = st.mss as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    #[test]
    fn window_only_moves_on_loss() {
        let mut c = ExternalCc;
        let mut st = CcState {
            cwnd: 20_000,
            ssthresh: u64::MAX,
            mss: 1000,
            pipe: 0,
            srtt: Duration::from_millis(50),
            min_rtt: Duration::ZERO,
            abc: true,
            stack: crate::info::Stack::Rfc,
            in_recovery: false,
            index: 0,
        };
        for _ in 0..100 {
            c.on_ack(Instant(0), &mut st, &AckSample { newly_acked: 1000, ..Default::default() }, &[]);
        }
        assert_eq!(st.cwnd, 20_000);
        c.on_congestion_event(Instant(0), &mut st, CongestionEvent::Loss, &[]);
        assert_eq!(st.cwnd, 10_000);
        c.on_rto(Instant(0), &mut st);
        assert_eq!(st.cwnd, 1_000);
    }
}
