//! Segments from the peer: the handshake (SYN, SYN-ACK, MP_JOIN's third and fourth ACK), ACK
//! processing (scoreboard, RTT and delivery-rate samples, RFC 6675 recovery entry and exit,
//! RFC 6298 timer restart) and received data.

use super::recv::Arrival;
use super::scoreboard::Acked;
use super::{Recovery, Role, Subflow, SubflowCx, SubflowState, Timer};
use crate::cc::{AckSample, AnyCc, CongestionControl, CongestionEvent};
use crate::info::Stack;
use crate::segment::{Flags, Segment};
use crate::time::{Duration, Instant};

impl Subflow {
    /// Handles one segment received from the peer.
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment, cx: &mut SubflowCx) {
        if self.close.finished {
            return;
        }
        self.ts_recent = seg.ts_val;
        if seg.flags.contains(Flags::SYN) {
            self.handle_syn(now, seg, cx);
            return;
        }
        // An established subflow (nearly every segment) skips the handshake and closing tests.
        if self.state != SubflowState::Established {
            if self.state == SubflowState::SynReceived && seg.flags.contains(Flags::ACK) && seg.ack >= 1 {
                self.snd_una = 1;
                self.timers.set(Timer::Rto, None);
                self.state = SubflowState::Established;
                self.backoff = 0;
            }
            if matches!(self.state, SubflowState::Closed | SubflowState::SynSent | SubflowState::SynReceived) {
                return;
            }
            if self.state == SubflowState::TimeWait {
                // Only a retransmitted FIN matters now (RFC 9293 3.10.7.4).
                if seg.flags.contains(Flags::FIN) {
                    self.on_peer_fin(now, seg);
                }
                return;
            }
        }
        if seg.flags.contains(Flags::MP_JOIN_ACK) {
            // The joining peer's third ACK (or its repetition): acknowledge it at once (4th ACK).
            self.ack_now = true;
        }
        if self.pre_established && seg.flags.contains(Flags::ACK) {
            // The peer acknowledged our third ACK: the subflow may carry data (RFC 8684 §3.2;
            // Linux `mptcp_is_def_unavailable`: pre_established until the 4th ACK).
            self.pre_established = false;
            self.backoff = 0;
            if self.snd_una == self.snd_nxt {
                self.timers.set(Timer::Rto, None);
            }
        }
        if seg.flags.contains(Flags::ACK) {
            self.on_ack(now, seg, cx);
            self.on_fin_acked(now);
            if self.close.finished {
                return;
            }
        }
        if seg.len > 0 {
            self.on_data(now, seg, cx);
        }
        if seg.flags.contains(Flags::FIN) {
            self.on_peer_fin(now, seg);
        } else if seg.len > 0 {
            // Data may have filled the gap before a FIN that came early.
            self.take_peer_fin(now);
        } else if seg.seq < self.rcv.nxt() {
            // A window probe (sequence number below what we expect): answer with an ACK.
            self.ack_now = true;
        }
    }

    fn handle_syn(&mut self, now: Instant, seg: &Segment, cx: &mut SubflowCx) {
        if !seg.flags.contains(Flags::MP_JOIN) && cx.conn.peer_key.is_none() {
            // MP_CAPABLE: the peer's key rides on its SYN or SYN-ACK (RFC 8684 3.1).
            cx.conn.peer_key = Some(seg.mp_key);
        }
        match (self.role, seg.flags.contains(Flags::ACK)) {
            (Role::Server, false) => {
                // SYN (or its retransmission): answer with SYN-ACK.
                self.rcv.set_nxt(seg.seq + 1);
                if self.state == SubflowState::Closed {
                    self.state = SubflowState::SynReceived;
                }
                if self.state == SubflowState::SynReceived {
                    self.syn_pending = true;
                } else {
                    self.ack_now = true;
                }
            }
            (Role::Client, true) => {
                if self.state == SubflowState::SynSent && seg.ack == 1 {
                    self.on_syn_ack(now, seg);
                }
                // A duplicate SYN-ACK means our ACK was lost: acknowledge again.
                self.ack_now = true;
            }
            _ => {}
        }
    }

    /// The client's SYN was answered: the subflow is established (or pre-established, MP_JOIN).
    fn on_syn_ack(&mut self, now: Instant, seg: &Segment) {
        self.rcv.set_nxt(seg.seq + 1);
        self.snd_una = 1;
        self.peer_wnd = seg.wnd as u64;
        self.snd_wnd = seg.wnd as u64;
        if self.backoff == 0 {
            // Karn: no sample from a retransmitted SYN.
            self.rtt.on_sample(now.saturating_duration_since(Instant(seg.ts_ecr)), self.snd_una, self.snd_nxt);
            self.cc_state.srtt = self.rtt.srtt();
            self.cc_state.min_rtt = self.rtt.min_rtt();
        } else if self.cc_state.cwnd > self.cfg.mss as u64 {
            // RFC 6298 5.7 / RFC 5681: lost SYN => initial window of one segment.
            self.cc_state.cwnd = self.cfg.mss as u64;
        }
        self.backoff = 0;
        self.timers.set(Timer::Rto, None);
        self.state = SubflowState::Established;
        self.delivered_time = now;
        if self.id != 0 {
            // MP_JOIN: pre-established until the server acknowledges the third ACK (RFC 8684
            // §3.2; Linux `mptcp_is_def_unavailable`); the third ACK is repeated on the
            // retransmission timer.
            self.pre_established = true;
            self.timers.set(Timer::Rto, Some(now + self.current_rto()));
        }
    }

    /// The peer's window from an ACK, before `snd_una` moves: tcp_ack_update_window /
    /// tcp_may_update_window (the ACKs' own sequence number does not move: this end sends the
    /// data).
    #[inline]
    fn update_window(&mut self, seg: &Segment) {
        self.peer_wnd = seg.wnd as u64;
        if seg.ack > self.snd_una || seg.wnd as u64 > self.snd_wnd {
            self.snd_wnd = seg.wnd as u64;
        }
    }

    /// Most segments a receiver gets acknowledge nothing new: the data's own ACK field, with
    /// nothing outstanding, no SACK block and no recovery. Of the full path only the window
    /// update, the SACK cache reset and the RTO stop can change anything then (no segment
    /// acknowledged: no sample, no loss, no congestion-control call). The full path is a call
    /// of its own ([`Subflow::on_ack_full`]).
    #[inline]
    fn on_ack(&mut self, now: Instant, seg: &Segment, cx: &mut SubflowCx) {
        if seg.ack == self.snd_una && seg.n_sack == 0 && self.sb.is_empty() && self.recovery == Recovery::None {
            self.update_window(seg);
            self.sb.sack(&[], self.snd_una, self.snd_nxt, &mut Acked::default());
            if self.snd_una == self.snd_nxt {
                self.timers.set(Timer::Rto, None);
            }
            return;
        }
        self.on_ack_full(now, seg, cx);
    }

    /// The sender's ACK processing: scoreboard, samples, recovery, congestion control, RTO.
    /// Out of line: inlined into [`Subflow::handle_segment`] it made every segment, the
    /// receiver's data included, pay its registers and stack frame.
    #[inline(never)]
    fn on_ack_full(&mut self, now: Instant, seg: &Segment, cx: &mut SubflowCx) {
        self.update_window(seg);
        let una_before = self.snd_una;
        // Delivery-rate sampling state before the ACK (only rate-based controllers read it).
        let rate_cc = self.rate_cc();
        let (prior_in_flight, lost_before) = if rate_cc { (self.pipe(), self.sb.segments_lost()) } else { (0, 0) };
        let mut acked = Acked::default();
        if seg.ack > self.snd_una && seg.ack <= self.snd_nxt {
            self.sb.cumulative_ack(seg.ack, &mut acked);
            self.snd_una = seg.ack;
        }
        self.sb.sack(seg.sacks(), self.snd_una, self.snd_nxt, &mut acked);
        let thresh = (self.cfg.dupthresh as u64 - 1) * self.cfg.mss as u64;
        let reo_wnd = Duration(self.rtt.min_rtt().0 / 4);
        self.sb.detect(&acked, thresh, reo_wnd, self.snd_una);
        let rtt_sample = self.take_samples(now, &acked, seg.ts_ecr);
        if rate_cc && acked.newly_acked > 0 {
            let losses = (self.sb.segments_lost() - lost_before) as u32;
            self.take_rate_sample(now, &acked, losses, prior_in_flight);
        }
        self.update_recovery(now, cx);
        let in_fast = matches!(self.recovery, Recovery::Fast { .. });
        // Rate-based controllers (Linux `cong_control`) see every ACK, fast recovery included.
        if acked.newly_acked > 0 && (!in_fast || rate_cc) {
            let pipe = self.pipe();
            // The sample is built in each arm: NewReno (the `ns3` profile's and the single-path
            // benchmarks' controller) reads only `newly_acked`, so in its arm the other stores
            // are dead and go. Built once in front of `AnyCc`'s jump table, every ACK paid ~30
            // instructions for the literal and the rate sample's copy. Measured (product build):
            // `edar-handoff` 173.37 -> 171.80 M, `newreno-10m` 71.95 -> 71.10 M, `flows-1`
            // 312.64 -> 308.62 M (BENCHMARKS.md, twentieth pass, perf20a).
            let rate = self.last_rate();
            let make = || AckSample {
                newly_acked: acked.newly_acked,
                rtt: rtt_sample,
                delivered: self.delivered,
                delivery_rate: self.delivery_rate,
                app_limited: rate.is_app_limited,
                rate,
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
            };
            let sib = &cx.conn.siblings;
            match &mut self.cc {
                // NewReno never reads `CcState::pipe` (in none of its methods), and a subflow's
                // controller is fixed when it is made: the copy is left to the others (~20
                // instructions an ACK; plain build `edar-handoff` 181.98 -> 181.60 M).
                AnyCc::NewReno(c) => c.on_ack(now, &mut self.cc_state, &make(), sib),
                // LIA (`lia-2path`'s controller) reads only `newly_acked` of the sample too: in
                // its own arm, with its `on_ack` inlined, the other stores go as in NewReno's
                // (plain build: `lia-2path` 505.99 -> 504.48 M, `subflows-8` -0.28 %,
                // `subflows-1` -0.42 %; `newreno-10m` +0.04 %, `edar-handoff` +0.09 %).
                AnyCc::Lia(c) => {
                    self.cc_state.pipe = pipe;
                    c.on_ack(now, &mut self.cc_state, &make(), sib)
                }
                cc => {
                    self.cc_state.pipe = pipe;
                    cc.on_ack(now, &mut self.cc_state, &make(), sib)
                }
            }
            if rate_cc && self.cc.wants_app_limited() {
                self.force_app_limited();
            }
        }
        // RFC 6298 5.2 / 5.3: stop when all is acknowledged, restart on a cumulative ACK.
        if self.snd_una == self.snd_nxt {
            self.timers.set(Timer::Rto, None);
        } else if self.snd_una > una_before {
            self.timers.set(Timer::Rto, Some(now + self.current_rto()));
        }
    }

    /// RTT (Karn: only never-retransmitted segments) and delivery-rate samples of one ACK;
    /// returns the RTT sample.
    ///
    /// Linux stack: an ACK that acknowledges retransmitted data gives no sample from the send
    /// times (`FLAG_RETRANS_DATA_ACKED` in `tcp_clean_rtx_queue`), but one from the timestamp
    /// it echoes (`tcp_ack_update_rtt` → `tcp_rtt_tsopt_us`), which also ends the backoff.
    /// Without this, the first ACK after an outage, which cumulatively acknowledges the
    /// retransmission and the segments received before the outage, took the age of those
    /// segments (tens of seconds) as an RTT sample, and CUBIC's delay_min with it.
    fn take_samples(&mut self, now: Instant, acked: &Acked, ts_ecr: u64) -> Option<Duration> {
        let mut rtt_sample = None;
        let kernel_ts = self.cfg.stack == Stack::Linux && acked.retx.is_some() && ts_ecr > 0;
        let sent_at = if kernel_ts { Some(Instant(ts_ecr)) } else { acked.sample.map(|s| s.sent_at) };
        if let Some(sent_at) = sent_at {
            let r = now.saturating_duration_since(sent_at);
            // RFC 6298 5.7 / Karn: the backed-off RTO stays until a valid measurement.
            self.backoff = 0;
            self.rtt.on_sample(r, self.snd_una, self.snd_nxt);
            rtt_sample = Some(r);
            self.cc_state.srtt = self.rtt.srtt();
            self.cc_state.min_rtt = self.rtt.min_rtt();
        }
        if acked.newly_acked > 0 {
            self.delivered += acked.newly_acked;
            self.delivered_time = now;
            if let Some(s) = acked.sample {
                let dt = now.saturating_duration_since(s.delivered_time).0;
                if dt > 0 {
                    self.delivery_rate = bytes_per_second(self.delivered - s.delivered, dt);
                }
            }
        }
        rtt_sample
    }

    /// Recovery state machine: leave recovery once `snd_una` passes the recovery point; enter
    /// fast recovery (RFC 6675 section 5) when the scoreboard holds lost data.
    fn update_recovery(&mut self, now: Instant, cx: &mut SubflowCx) {
        match self.recovery {
            Recovery::Fast { point } | Recovery::Rto { point } if self.snd_una >= point => {
                self.recovery = Recovery::None;
                self.cc_state.in_recovery = false;
                self.cc.on_recovery_exit(now, &mut self.cc_state);
            }
            _ => {}
        }
        if self.recovery == Recovery::None && self.sb.lost_bytes() > 0 {
            self.recovery = Recovery::Fast { point: self.snd_nxt };
            self.fast_retx_pending = true;
            self.stats.fast_recoveries += 1;
            self.cc_state.pipe = self.pipe();
            self.cc_state.in_recovery = true;
            let sib = &cx.conn.siblings;
            self.cc.on_congestion_event(now, &mut self.cc_state, CongestionEvent::Loss, sib);
        }
    }

    /// In fast recovery or RTO recovery now: [`crate::SubflowInfo::in_recovery`], read live (for
    /// a connection whose views copy only the snapshots' core).
    #[inline]
    pub fn in_recovery(&self) -> bool {
        self.recovery != Recovery::None
    }

    fn on_data(&mut self, now: Instant, seg: &Segment, cx: &mut SubflowCx) {
        self.stats.bytes_arrived += seg.len as u64;
        self.rcv_rtt.on_data(now, seg.ts_ecr, u32::from(seg.len), self.mss());
        // Data beyond the receive buffer (in DSN space) is dropped, as a real stack would.
        let read_point = cx.conn.rcv.next() - cx.conn.rcv_unread;
        if seg.dsn + seg.len as u64 > read_point + cx.conn.rcv_buf {
            self.ack_now = true;
            return;
        }
        let (ack_now, received, conn_rcv) = (&mut self.ack_now, &mut self.stats.bytes_received, &mut cx.conn.rcv);
        let arrival = self.rcv.receive(seg.seq, seg.end(), seg.dsn, |s, e, dsn| {
            *received += e - s;
            let ooo_before = conn_rcv.ooo_bytes();
            conn_rcv.insert(dsn, dsn + (e - s));
            if conn_rcv.ooo_bytes() < ooo_before {
                // A connection-level hole was filled: the shared window just opened, tell the
                // peer now.
                *ack_now = true;
            }
        });
        match arrival {
            // Duplicate: acknowledge at once. Out of order: immediate duplicate ACK with SACK.
            Arrival::Duplicate | Arrival::OutOfOrder => self.ack_now = true,
            Arrival::InOrder { filled_hole } => {
                if filled_hole || !self.cfg.delayed_ack {
                    self.ack_now = true;
                } else {
                    self.unacked_segs += 1;
                    if self.unacked_segs >= 2 {
                        self.ack_now = true;
                    } else if self.timers.get(Timer::DelayedAck).is_none() {
                        self.timers.set(Timer::DelayedAck, Some(now + self.cfg.delayed_ack_timeout));
                    }
                }
            }
        }
    }
}

/// `bytes` over `dt_ns` nanoseconds in bytes per second, rounded down (and truncated to 64
/// bits, as before): `bytes * 1e9 / dt_ns` in 128 bits. The product fits in 64 bits for any
/// delivery below 18 GB, and then the 64-bit division gives the same quotient without the call
/// to the 128-bit one (`__udivti3`, once per ACK with a rate sample).
#[inline]
pub(super) fn bytes_per_second(bytes: u64, dt_ns: u64) -> u64 {
    match bytes.checked_mul(1_000_000_000) {
        Some(x) => x / dt_ns,
        None => (bytes as u128 * 1_000_000_000 / dt_ns as u128) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::bytes_per_second;
    use proptest::prelude::*;

    fn wide(bytes: u64, dt_ns: u64) -> u64 {
        (bytes as u128 * 1_000_000_000 / dt_ns as u128) as u64
    }

    #[test]
    fn rate_at_the_edges_of_the_64_bit_product() {
        let edge = u64::MAX / 1_000_000_000;
        for (b, dt) in [
            (0, 1),
            (1448, 1),
            (1448, 25_000_000),
            (edge, 1),
            (edge + 1, 1),
            (edge + 1, 3),
            (u64::MAX, 1),
            (u64::MAX, u64::MAX),
        ] {
            assert_eq!(bytes_per_second(b, dt), wide(b, dt), "{b} bytes in {dt} ns");
        }
        assert_eq!(bytes_per_second(1_250_000, 1_000_000_000), 1_250_000);
    }

    proptest! {
        #[test]
        fn rate_equals_the_128_bit_quotient(bytes in any::<u64>(), dt in 1..u64::MAX) {
            prop_assert_eq!(bytes_per_second(bytes, dt), wide(bytes, dt));
        }
        #[test]
        fn rate_of_small_deliveries(bytes in 0..100_000_000_000u64, dt in 1..100_000_000_000u64) {
            prop_assert_eq!(bytes_per_second(bytes, dt), wide(bytes, dt));
        }
    }
}
