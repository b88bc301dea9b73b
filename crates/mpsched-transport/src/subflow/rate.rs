//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-00; Linux
//! net/ipv4/tcp_rate.c): every (re)transmission records the subflow's delivery state
//! (`tcp_rate_skb_sent`), every ACK turns the newest segment it delivered into a rate sample
//! (`tcp_rate_skb_delivered`, `tcp_rate_gen`), and a sender with nothing to send marks the
//! bubble application-limited (`tcp_rate_check_app_limited`). Sizes are bytes, not packets.
//!
//! Only subflows of rate-based controllers ([`crate::cc::CongestionControl::cong_control`],
//! BBR) sample: their [`RateState`] is allocated when the subflow is built and holds what the
//! samples need beyond the scoreboard (the flight start of every outstanding transmission, in a
//! side table), so the scoreboard record and the per-ACK work of the other controllers stay as
//! they were before sampling existed. The older [`crate::SubflowInfo::delivery_rate`] figure is
//! computed as before, for every controller, from the scoreboard's `delivered` stamps.

use std::collections::VecDeque;

use super::scoreboard::{Acked, TxStamp, APP_LIMITED};
use super::Subflow;
use crate::cc::RateSample;
use crate::time::Instant;

/// Delivery-rate sampling state of one subflow of a rate-based controller.
#[derive(Clone, Debug)]
pub(crate) struct RateState {
    /// Send time of the first segment of the current delivery-rate interval (Linux
    /// `tp->first_tx_mstamp`).
    first_sent_time: Instant,
    /// Non-zero while application-limited: the `delivered` count that ends the bubble.
    app_limited: u64,
    /// The rate sample of the latest ACK that delivered data.
    last: RateSample,
    /// `(right edge, first_sent_time)` of every outstanding segment's latest transmission
    /// (Linux `tx.first_tx_mstamp`), ascending right edge, as the scoreboard's segments: a
    /// segment is never split and a partial ACK moves its start only, so the right edge names it.
    flight_starts: VecDeque<(u64, Instant)>,
}

impl RateState {
    /// Fresh state of a subflow created at `now`.
    pub(crate) fn new(now: Instant) -> Self {
        RateState { first_sent_time: now, app_limited: 0, last: RateSample::default(), flight_starts: VecDeque::new() }
    }

    /// Index of the entry whose right edge is `end`.
    fn index_of(&self, end: u64) -> Option<usize> {
        let i = self.flight_starts.partition_point(|&(e, _)| e < end);
        (self.flight_starts.get(i).is_some_and(|&(e, _)| e == end)).then_some(i)
    }
}

impl Subflow {
    /// The scoreboard flags a transmission sent now starts with: [`APP_LIMITED`] while the
    /// subflow is application-limited (Linux `tx.is_app_limited`).
    #[inline]
    pub(super) fn tx_flags(&self) -> u8 {
        self.rate.as_ref().is_some_and(|r| r.app_limited != 0) as u8 * APP_LIMITED
    }

    /// Linux `tcp_rate_skb_sent` for new data sent at `now`, right edge `end`: records the
    /// flight start (a new flight when nothing was in flight: `fresh`).
    #[inline]
    pub(super) fn rate_on_send(&mut self, now: Instant, end: u64, fresh: bool) {
        if let Some(r) = self.rate.as_deref_mut() {
            if fresh {
                r.first_sent_time = now;
            }
            r.flight_starts.push_back((end, r.first_sent_time));
        }
    }

    /// Linux `tcp_rate_skb_sent` for a retransmission: the delivery state it records (new data
    /// is stamped the same way, inline, in `Subflow::send_new`), and the flight start of the
    /// segment ending at `end`. With nothing in flight a new flight would start at `now`.
    pub(super) fn tx_stamp(&mut self, now: Instant, end: u64) -> TxStamp {
        let empty = self.sb.is_empty();
        let mut app_limited = false;
        if let Some(r) = self.rate.as_deref_mut() {
            if empty {
                r.first_sent_time = now;
            }
            if let Some(i) = r.index_of(end) {
                r.flight_starts[i].1 = r.first_sent_time;
            }
            app_limited = r.app_limited != 0;
        }
        TxStamp { delivered: self.delivered, delivered_time: self.delivered_time, app_limited }
    }

    /// Linux `tcp_rate_skb_delivered` + `tcp_rate_gen` for one ACK, after `delivered` and
    /// `delivered_time` were advanced to include it: the rate sample from the newest segment it
    /// delivered ([`Acked::rate_seg`]), kept as the latest sample; segments below the cumulative
    /// ACK leave the side table. `losses` and `prior_in_flight` are passed through.
    pub(super) fn take_rate_sample(&mut self, now: Instant, acked: &Acked, losses: u32, prior_in_flight: u64) {
        let (delivered, min_rtt, una) = (self.delivered, self.rtt.min_rtt(), self.snd_una);
        let Some(r) = self.rate.as_deref_mut() else { return };
        // The app-limited bubble is over once the data in flight when it was marked is delivered.
        if r.app_limited != 0 && delivered > r.app_limited {
            r.app_limited = 0;
        }
        let mut rs = RateSample { losses, prior_in_flight, ..RateSample::default() };
        if let Some(p) = acked.rate_seg() {
            let first_sent_time = r.index_of(p.end()).map_or(p.sent_at, |i| r.flight_starts[i].1);
            rs.prior_delivered = p.delivered;
            rs.delivered = delivered - p.delivered;
            rs.is_app_limited = p.flags & APP_LIMITED != 0;
            // The next sample's send interval starts at this segment's send time.
            r.first_sent_time = p.sent_at;
            let send_elapsed = p.sent_at.saturating_duration_since(first_sent_time);
            let ack_elapsed = now.saturating_duration_since(p.delivered_time);
            rs.interval = send_elapsed.max(ack_elapsed);
            // An interval shorter than the minimum RTT comes from ACK compression or a
            // stretched send interval: Linux discards it (tcp_rate_gen).
            rs.valid = rs.interval.0 > 0 && rs.interval >= min_rtt;
        }
        while r.flight_starts.front().is_some_and(|&(e, _)| e <= una) {
            r.flight_starts.pop_front();
        }
        r.last = rs;
    }

    /// The rate sample of the latest ACK that delivered data (default for controllers that are
    /// not rate-based).
    #[inline]
    pub(super) fn last_rate(&self) -> RateSample {
        self.rate.as_ref().map_or_else(RateSample::default, |r| r.last)
    }

    /// The subflow samples delivery rates (its controller is rate-based).
    #[inline]
    pub(crate) fn rate_cc(&self) -> bool {
        self.rate.is_some()
    }

    /// Linux `tcp_rate_check_app_limited`: the sender has nothing more for this subflow. If the
    /// window is not full and no lost data waits to be resent, the segments in flight and those
    /// sent until they are delivered are marked application-limited, so that their samples do
    /// not shrink a bandwidth estimate. Returns whether the subflow was marked.
    #[inline]
    pub fn mark_app_limited(&mut self) -> bool {
        if self.rate.is_none() {
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
        self.rate.as_ref().map_or(0, |r| r.app_limited)
    }

    /// Marks the subflow application-limited unconditionally (BBR's ProbeRTT):
    /// `app_limited = max(delivered + in_flight, 1)`.
    pub(super) fn force_app_limited(&mut self) {
        let mark = (self.delivered + self.pipe()).max(1);
        if let Some(r) = self.rate.as_deref_mut() {
            r.app_limited = mark;
        }
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
        sf.last_rate()
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
        assert_eq!(sf.app_limited_mark(), 2000);
        send(&mut sf, &mut conn, 12, 1);
        let rs = ack(&mut sf, &mut conn, 40, 1 + 2 * MSS, &[]);
        assert!(!rs.is_app_limited, "sent before the mark");
        assert_eq!(sf.app_limited_mark(), 2000, "delivered = 2000 does not pass the mark");
        let rs = ack(&mut sf, &mut conn, 42, 1 + 3 * MSS, &[]);
        assert!(rs.is_app_limited);
        assert_eq!(sf.app_limited_mark(), 0, "delivered 3000 > 2000");
        // A full window is not app-limited.
        sf.cc_state.cwnd = 2 * MSS;
        send(&mut sf, &mut conn, 50, 2);
        assert!(!sf.mark_app_limited());
        assert_eq!(sf.app_limited_mark(), 0);
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
        sf.rate = None;
        send(&mut sf, &mut conn, 10, 2);
        assert!(!sf.mark_app_limited());
        assert_eq!(ack(&mut sf, &mut conn, 40, 1 + 2 * MSS, &[]), RateSample::default());
    }
}
