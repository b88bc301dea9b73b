//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-00; Linux
//! net/ipv4/tcp_rate.c): every (re)transmission records the subflow's delivery state
//! (`tcp_rate_skb_sent`), every ACK turns the newest segment it delivered into a rate sample
//! (`tcp_rate_skb_delivered`, `tcp_rate_gen`), and a sender with nothing to send marks the
//! bubble application-limited (`tcp_rate_check_app_limited`). Sizes are bytes, not packets.
//!
//! Segments always carry their stamps; the per-ACK sample and the app-limited mark are computed
//! only for rate-based controllers ([`crate::cc::CongestionControl::cong_control`], BBR), so the
//! others pay nothing more per ACK. The older [`crate::SubflowInfo::delivery_rate`] figure is
//! computed as before, for every controller.

use super::scoreboard::{Acked, TxStamp, APP_LIMITED};
use super::Subflow;
use crate::cc::RateSample;
use crate::time::Instant;

impl Subflow {
    /// Linux `tcp_rate_skb_sent` for a retransmission: the delivery state it records (new data
    /// is stamped the same way, inline, in `Subflow::send_new`). With nothing in flight a new
    /// flight would start at `now`.
    pub(super) fn tx_stamp(&mut self, now: Instant) -> TxStamp {
        if self.sb.is_empty() {
            self.first_sent_time = now;
        }
        TxStamp {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited != 0,
        }
    }

    /// Linux `tcp_rate_skb_delivered` + `tcp_rate_gen` for one ACK, after `delivered` and
    /// `delivered_time` were advanced to include it: the rate sample from the newest segment it
    /// delivered ([`Acked::rate_seg`]). `losses` and `prior_in_flight` are passed through.
    pub(super) fn take_rate_sample(
        &mut self,
        now: Instant,
        acked: &Acked,
        losses: u32,
        prior_in_flight: u64,
    ) -> RateSample {
        // The app-limited bubble is over once the data in flight when it was marked is delivered.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let mut rs = RateSample { losses, prior_in_flight, ..RateSample::default() };
        let Some(p) = acked.rate_seg() else { return rs };
        rs.prior_delivered = p.delivered;
        rs.delivered = self.delivered - p.delivered;
        rs.is_app_limited = p.flags & APP_LIMITED != 0;
        // The next sample's send interval starts at this segment's send time.
        self.first_sent_time = p.sent_at;
        let send_elapsed = p.sent_at.saturating_duration_since(p.first_sent_time);
        let ack_elapsed = now.saturating_duration_since(p.delivered_time);
        rs.interval = send_elapsed.max(ack_elapsed);
        // An interval shorter than the minimum RTT comes from ACK compression or a stretched
        // send interval: Linux discards it (tcp_rate_gen).
        rs.valid = rs.interval.0 > 0 && rs.interval >= self.rtt.min_rtt();
        rs
    }

    /// Linux `tcp_rate_check_app_limited`: the sender has nothing more for this subflow. If the
    /// window is not full and no lost data waits to be resent, the segments in flight and those
    /// sent until they are delivered are marked application-limited, so that their samples do
    /// not shrink a bandwidth estimate. Returns whether the subflow was marked.
    pub fn mark_app_limited(&mut self) -> bool {
        if !self.rate_cc {
            return false;
        }
        let pipe = self.pipe();
        if !self.is_established() || pipe >= self.cc_state.cwnd || self.sb.lost_bytes() > self.sb.retrans_bytes() {
            return false;
        }
        self.force_app_limited();
        true
    }

    /// The app-limited mark (0: not application-limited).
    #[cfg(test)]
    pub(crate) fn app_limited_mark(&self) -> u64 {
        self.app_limited
    }

    /// Marks the subflow application-limited unconditionally (BBR's ProbeRTT):
    /// `app_limited = max(delivered + in_flight, 1)`.
    pub(super) fn force_app_limited(&mut self) {
        self.app_limited = (self.delivered + self.pipe()).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{AckSample, AnyCc, CcState, CongestionControl, CongestionEvent, Siblings};
    use crate::segment::{Flags, SackBlock, Segment};
    use crate::subflow::{ConnShared, Role, SubflowConfig, SubflowCx};
    use crate::time::Duration;

    const MSS: u64 = 1000;
    const MS: u64 = 1_000_000;

    /// A rate-based controller that changes nothing: the subflow computes rate samples for it.
    struct RateProbe;
    impl CongestionControl for RateProbe {
        fn name(&self) -> &'static str {
            "rate-probe"
        }
        fn on_ack(&mut self, _: Instant, _: &mut CcState, _: &AckSample, _: Siblings) {}
        fn on_congestion_event(&mut self, _: Instant, _: &mut CcState, _: CongestionEvent, _: Siblings) {}
        fn on_rto(&mut self, _: Instant, _: &mut CcState) {}
        fn cong_control(&self) -> bool {
            true
        }
    }

    /// An established client (RTT of the handshake 10 ms, so min_rtt = 10 ms) with a window of
    /// 100 segments, no delayed-ACK concerns (it only sends).
    fn client() -> (Subflow, ConnShared) {
        let mut cfg = SubflowConfig::linux();
        cfg.mss = MSS as u32;
        cfg.init_cwnd = 100;
        let mut sf = Subflow::new(0, Role::Client, cfg, AnyCc::Custom(Box::new(RateProbe)), Instant::ZERO);
        let mut conn = ConnShared::new(1 << 20, 1);
        let mut cx = SubflowCx { conn: &mut conn };
        sf.poll_transmit(Instant::ZERO, &mut cx).unwrap();
        let synack =
            Segment { flags: Flags::SYN.with(Flags::ACK), ack: 1, wnd: 1 << 20, ts_ecr: 0, ..Default::default() };
        sf.handle_segment(Instant(10 * MS), &synack, &mut cx);
        (sf, conn)
    }

    fn send(sf: &mut Subflow, conn: &mut ConnShared, at_ms: u64, n: u64) {
        for _ in 0..n {
            let dsn = sf.snd_nxt - 1;
            sf.send_new(Instant(at_ms * MS), dsn, MSS as u32, &mut SubflowCx { conn });
        }
    }

    /// Applies an ACK (cumulative `ack`, SACK `sack`) at `at_ms` and returns its rate sample.
    fn ack(sf: &mut Subflow, conn: &mut ConnShared, at_ms: u64, ack: u64, sack: &[(u64, u64)]) -> RateSample {
        let mut seg = Segment { flags: Flags::ACK, ack, wnd: 1 << 20, ..Default::default() };
        for (k, &(start, end)) in sack.iter().enumerate() {
            seg.sack[k] = SackBlock { start, end };
        }
        seg.n_sack = sack.len() as u8;
        sf.handle_segment(Instant(at_ms * MS), &seg, &mut SubflowCx { conn });
        sf.last_rate
    }

    /// Four segments sent at 10 ms (one flight), acknowledged two by two at 40 and 45 ms: the
    /// first sample spans 10 → 40 ms (ack_elapsed 30 ms, 2000 bytes); the second is taken from
    /// the fourth segment, stamped at 10 ms with nothing delivered: 4000 bytes over 35 ms.
    #[test]
    fn samples_of_one_flight() {
        let (mut sf, mut conn) = client();
        send(&mut sf, &mut conn, 10, 4);
        let rs = ack(&mut sf, &mut conn, 40, 1 + 2 * MSS, &[]);
        assert_eq!(
            rs,
            RateSample {
                valid: true,
                prior_delivered: 0,
                delivered: 2000,
                interval: Duration(30 * MS),
                is_app_limited: false,
                losses: 0,
                prior_in_flight: 4000,
            }
        );
        assert_eq!(rs.bw(), Some(2000 * 1000 / 30));
        let rs = ack(&mut sf, &mut conn, 45, 1 + 4 * MSS, &[]);
        assert_eq!((rs.prior_delivered, rs.delivered, rs.interval), (0, 4000, Duration(35 * MS)));
        assert!(rs.valid);
    }

    /// Segments sent over time: the sample's interval is the longer of the send interval
    /// (first_sent_time → P.sent_at) and the ACK interval (P.delivered_time → now).
    #[test]
    fn send_interval_dominates_when_longer() {
        let (mut sf, mut conn) = client();
        send(&mut sf, &mut conn, 10, 1);
        send(&mut sf, &mut conn, 20, 1);
        let rs = ack(&mut sf, &mut conn, 40, 1 + MSS, &[]);
        assert_eq!((rs.delivered, rs.interval), (1000, Duration(30 * MS)));
        // The second segment is still in flight: no new flight starts. Sent at 45 and 80 ms,
        // stamped with first_sent_time 10 ms (the sample's segment) and the delivery clock of
        // 40 ms; all acknowledged at 82 ms: P = the 80 ms segment, send_elapsed = 80 − 10 =
        // 70 ms, ack_elapsed = 82 − 40 = 42 ms.
        send(&mut sf, &mut conn, 45, 1);
        send(&mut sf, &mut conn, 80, 1);
        let rs = ack(&mut sf, &mut conn, 82, 1 + 4 * MSS, &[]);
        assert_eq!((rs.prior_delivered, rs.delivered, rs.interval), (1000, 3000, Duration(70 * MS)));
        assert_eq!(rs.bw(), Some(3000 * 1000 / 70));
        // With nothing in flight the next segment starts a new flight: both clocks restart.
        send(&mut sf, &mut conn, 100, 1);
        let rs = ack(&mut sf, &mut conn, 130, 1 + 5 * MSS, &[]);
        assert_eq!((rs.prior_delivered, rs.delivered, rs.interval), (4000, 1000, Duration(30 * MS)));
    }

    /// A SACK delivers the newest segment: it gives the sample; the hole counts once it is
    /// marked lost (three segments above it SACKed: DupThresh).
    #[test]
    fn sack_gives_the_sample_and_losses_are_counted() {
        let (mut sf, mut conn) = client();
        send(&mut sf, &mut conn, 10, 5);
        let rs = ack(&mut sf, &mut conn, 40, 1 + MSS, &[(1 + 2 * MSS, 1 + 5 * MSS)]);
        assert_eq!((rs.delivered, rs.interval, rs.losses), (4000, Duration(30 * MS), 1));
        assert_eq!(rs.prior_in_flight, 5000);
    }

    /// App-limited marking: with the window not full the subflow is marked at delivered +
    /// in flight; samples of segments sent meanwhile carry the mark; the mark clears once
    /// delivery passes it.
    #[test]
    fn app_limited_marking() {
        let (mut sf, mut conn) = client();
        send(&mut sf, &mut conn, 10, 2);
        assert!(sf.mark_app_limited());
        assert_eq!(sf.app_limited, 2000);
        send(&mut sf, &mut conn, 12, 1);
        let rs = ack(&mut sf, &mut conn, 40, 1 + 2 * MSS, &[]);
        assert!(!rs.is_app_limited, "sent before the mark");
        assert_eq!(sf.app_limited, 2000, "delivered = 2000 does not pass the mark");
        let rs = ack(&mut sf, &mut conn, 42, 1 + 3 * MSS, &[]);
        assert!(rs.is_app_limited);
        assert_eq!(sf.app_limited, 0, "delivered 3000 > 2000");
        // A full window is not app-limited.
        sf.cc_state.cwnd = 2 * MSS;
        send(&mut sf, &mut conn, 50, 2);
        assert!(!sf.mark_app_limited());
        assert_eq!(sf.app_limited, 0);
    }

    /// A retransmitted segment gives a rate sample (not an RTT sample) with the state of its
    /// retransmission.
    #[test]
    fn retransmission_restamps() {
        let (mut sf, mut conn) = client();
        send(&mut sf, &mut conn, 10, 5);
        ack(&mut sf, &mut conn, 40, 1 + MSS, &[(1 + 2 * MSS, 1 + 5 * MSS)]);
        let seg = sf.poll_transmit(Instant(41 * MS), &mut SubflowCx { conn: &mut conn }).unwrap();
        assert_eq!((seg.seq, seg.len), (1 + MSS, MSS as u16));
        let rs = ack(&mut sf, &mut conn, 70, 1 + 5 * MSS, &[]);
        // Stamped at 41 ms with delivered = 4000 (delivery clock 40 ms, flight start 10 ms).
        assert_eq!((rs.prior_delivered, rs.delivered, rs.interval), (4000, 1000, Duration(31 * MS)));
    }

    /// Controllers that are not rate-based pay nothing: no sample, no app-limited mark.
    #[test]
    fn no_sampling_for_other_controllers() {
        let (mut sf, mut conn) = client();
        sf.cc = AnyCc::by_name("cubic").unwrap();
        sf.rate_cc = false;
        send(&mut sf, &mut conn, 10, 2);
        assert!(!sf.mark_app_limited());
        assert_eq!(ack(&mut sf, &mut conn, 40, 1 + 2 * MSS, &[]), RateSample::default());
    }
}
