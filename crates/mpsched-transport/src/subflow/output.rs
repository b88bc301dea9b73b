//! Segments to the peer: SYN / SYN-ACK, retransmissions (RFC 6675 NextSeg rule 1), new data
//! handed over by the connection, window probes and pure ACKs, with pacing.

use super::scoreboard::SentSeg;
use super::{Role, Subflow, SubflowCx, SubflowState, Timer};
use crate::cc::CongestionControl;
use crate::segment::{Flags, Segment};
use crate::time::{Duration, Instant};

impl Subflow {
    /// Next segment to send, if any. Call until `None` after every input.
    ///
    /// Most calls find nothing to send (every drain ends with one per subflow); those return
    /// here without entering [`Subflow::poll_pending`]. The test is exact: no SYN, probe, ACK
    /// or FIN pending, no lost data to resend, and no pacing delay (which would arm the pacing
    /// timer on the way) mean `poll_pending` would return `None` and change nothing.
    /// (Tests only: the connection polls through [`Subflow::poll_transmit_into`].)
    #[cfg(test)]
    pub fn poll_transmit(&mut self, now: Instant, cx: &mut SubflowCx) -> Option<Segment> {
        let mut seg = Segment::default();
        self.poll_transmit_into(now, cx, &mut seg).then_some(seg)
    }

    /// [`Subflow::poll_transmit`] writing the segment into `out` (the driver's packet slot);
    /// `false` (and `out` unchanged) when there is nothing to send. A pure ACK is built in
    /// `out` itself: returned by value, it was copied at every level up to the driver.
    #[inline]
    pub fn poll_transmit_into(&mut self, now: Instant, cx: &mut SubflowCx, out: &mut Segment) -> bool {
        if self.is_idle(now) {
            return false;
        }
        self.poll_pending(now, cx, out)
    }

    /// Nothing can be due at `now`: [`Subflow::poll_transmit`] would return `None` and change
    /// nothing. Stays true at any later instant until the subflow changes (the pacing gap, the
    /// only part that depends on time, only runs out).
    #[inline]
    pub fn is_idle(&self, now: Instant) -> bool {
        !self.syn_pending
            && !self.probe_pending
            && !self.ack_now
            && !self.fin_may_send()
            && self.sb.lost_bytes() == 0
            && self.next_send_time <= now
    }

    /// [`Subflow::poll_transmit_into`] of a subflow just found not idle
    /// ([`Subflow::is_idle`]): its test not made twice (the connection's round robin over
    /// several subflows made it before, to mark the idle ones).
    #[inline]
    pub fn poll_busy_into(&mut self, now: Instant, cx: &mut SubflowCx, out: &mut Segment) -> bool {
        debug_assert!(!self.is_idle(now));
        self.poll_pending(now, cx, out)
    }

    /// [`Subflow::poll_transmit`] when something may be due.
    fn poll_pending(&mut self, now: Instant, cx: &mut SubflowCx, out: &mut Segment) -> bool {
        if self.syn_pending {
            self.syn_pending = false;
            *out = self.make_syn(now, cx);
            return true;
        }
        if self.sends_data() {
            if let Some(seg) = self.poll_retransmission(now, cx) {
                *out = seg;
                return true;
            }
            if let Some(seg) = self.poll_fin(now, cx) {
                *out = seg;
                return true;
            }
        }
        if self.probe_pending && self.is_established() {
            self.probe_pending = false;
            self.write_base(now, cx, out);
            out.seq = self.snd_una - 1;
            return true;
        }
        if self.ack_now {
            self.write_base(now, cx, out);
            out.seq = self.snd_nxt;
            return true;
        }
        false
    }

    /// Sends an ACK at the next `poll_transmit` (window update after the application read).
    pub fn request_ack(&mut self) {
        if self.sends_data() {
            self.ack_now = true;
        }
    }

    /// Synchronized and not in TIME-WAIT: data (or our FIN) may still need (re)sending.
    #[inline]
    fn sends_data(&self) -> bool {
        !matches!(
            self.state,
            SubflowState::Closed | SubflowState::SynSent | SubflowState::SynReceived | SubflowState::TimeWait
        )
    }

    /// A pure ACK carrying `flags` in addition (the connection's DATA_FIN).
    pub fn make_ack(&mut self, now: Instant, flags: Flags, cx: &mut SubflowCx) -> Segment {
        let mut seg = self.base_segment(now, cx);
        seg.seq = self.snd_nxt;
        seg.flags = seg.flags.with(flags);
        seg
    }

    fn make_syn(&mut self, now: Instant, cx: &mut SubflowCx) -> Segment {
        let wnd = cx.conn.rcv_window().min(u32::MAX as u64) as u32;
        // MP_CAPABLE carries our key; an MP_JOIN SYN names the connection by the peer's token.
        let mp_key = match (self.id, self.role, cx.conn.peer_key) {
            (0, _, _) => cx.conn.local_key,
            (_, Role::Client, Some(k)) => crate::token::token(k) as u64,
            _ => 0,
        };
        let mut seg = Segment {
            mp_key,
            sf: self.id,
            flags: Flags::SYN,
            wnd,
            seq: 0,
            ts_val: now.0,
            ts_ecr: self.ts_recent,
            ..Default::default()
        };
        if self.id != 0 {
            seg.flags = seg.flags.with(Flags::MP_JOIN);
        }
        if self.role == Role::Server {
            seg.flags = seg.flags.with(Flags::ACK);
            seg.ack = self.rcv.nxt();
            self.state = SubflowState::SynReceived;
            // The SYN-ACK's window is the first one offered (`tp->rcv_wnd`, `rcv_wup`).
            (self.rcv_wup, self.rcv_wnd) = (seg.ack, wnd as u64);
            if self.id == 0 {
                cx.conn.old_wspace = wnd as u64;
            }
        } else {
            self.state = SubflowState::SynSent;
        }
        self.snd_nxt = self.snd_nxt.max(1);
        if self.timers.get(Timer::Rto).is_none() {
            self.timers.set(Timer::Rto, Some(now + self.current_rto()));
        }
        seg
    }

    /// ACK fields common to every segment; clears the pending-ACK state.
    #[inline]
    pub(super) fn base_segment(&mut self, now: Instant, cx: &mut SubflowCx) -> Segment {
        let mut seg = Segment::default();
        self.write_base(now, cx, &mut seg);
        seg
    }

    /// [`Subflow::base_segment`] written into `seg` (every field: what it held before does not
    /// matter).
    /// Inlined into its callers, the pure ACK's and new data's paths (see
    /// [`Subflow::new_data_space`] for the measured effect).
    #[inline]
    pub(super) fn write_base(&mut self, now: Instant, cx: &mut SubflowCx, seg: &mut Segment) {
        self.ack_now = false;
        self.unacked_segs = 0;
        self.timers.set(Timer::DelayedAck, None);
        let wnd = cx.conn.advertise_window(self.own_window()).min(u32::MAX as u64) as u32;
        (self.rcv_wup, self.rcv_wnd) = (self.rcv.nxt(), wnd as u64);
        *seg = Segment {
            sf: self.id,
            flags: Flags::ACK,
            ack: self.rcv.nxt(),
            wnd,
            data_ack: cx.conn.data_ack(),
            ts_val: now.0,
            ts_ecr: self.ts_recent,
            mp_opt: self.dss.map_or(0, |d| d.ack),
            ..Default::default()
        };
        if !self.rcv.no_ooo() {
            (seg.sack, seg.n_sack) = self.rcv.sack_blocks();
        }
        if self.pre_established {
            seg.flags = seg.flags.with(Flags::MP_JOIN_ACK);
        }
    }

    /// The next lost segment, if the window (or RFC 6675 step 4.3's first retransmission of a
    /// recovery episode) allows it.
    fn poll_retransmission(&mut self, now: Instant, cx: &mut SubflowCx) -> Option<Segment> {
        // Nothing lost and no pacing gap (nearly every call: the receiver's ACKs): the pacing
        // test below cannot fire and `next_retransmission` finds nothing, so return before the
        // controller's `pacing_rate` (a jump table), `pipe` and the out-of-line scan
        // (measured: `newreno-10m` 83.30 -> 82.57 M instructions, `lia-2path` 607.03 -> 603.79 M).
        if self.sb.lost_bytes() == 0 && self.next_send_time <= now {
            return None;
        }
        // Pacing.
        if let Some(rate) = self.cc.pacing_rate(&self.cc_state) {
            if rate > 0 && now < self.next_send_time {
                self.timers.set(Timer::Pacing, Some(self.next_send_time));
                return None;
            }
        }
        let pipe = self.pipe();
        let cwnd = self.cc_state.cwnd;
        // Retransmit a lost segment first (RFC 6675 NextSeg rule 1).
        let i = self.sb.next_retransmission()?;
        let s = self.sb.get(i);
        if pipe + s.len as u64 > cwnd && !self.fast_retx_pending {
            return None;
        }
        self.fast_retx_pending = false;
        let tx = self.tx_stamp(now, s.end());
        self.sb.retransmitted(i, now, tx);
        self.stats.segments_retransmitted += 1;
        self.stats.bytes_retransmitted += s.len as u64;
        let mut seg = self.base_segment(now, cx);
        seg.seq = s.seq;
        seg.len = s.len as u16;
        seg.dsn = s.dsn;
        if i == 0 {
            self.timers.set(Timer::Rto, Some(now + self.current_rto()));
        }
        self.account_sent(now, &mut seg);
        Some(seg)
    }

    /// Bytes of new data this subflow may send now: free congestion window, zero while it is
    /// not established, is pacing, or still has lost data to resend (RFC 6675 NextSeg: lost
    /// data before new data; after an RTO, Loss state: Linux `mptcp_is_temp_unavailable`).
    /// Inlined (with [`Subflow::write_base`]: `newreno-10m` −1.1 %, `lia-2path` −1.4 %, measured
    /// together): asked before every new segment.
    #[inline]
    pub fn new_data_space(&self, now: Instant) -> u64 {
        if !self.is_established()
            || self.close.fin_seq.is_some()
            || self.pre_established
            || (self.sb.lost_bytes() > 0 && self.sb.lost_bytes() > self.sb.retrans_bytes())
        {
            return 0;
        }
        if self.next_send_time > now && self.cc.pacing_rate(&self.cc_state).is_some_and(|r| r > 0) {
            return 0;
        }
        self.cc_state.cwnd.saturating_sub(self.pipe())
    }

    /// The pacing gap has run out at `now`: from then on, while the subflow is unchanged,
    /// [`Subflow::new_data_space`] no longer depends on the time.
    #[inline]
    pub fn pacing_gap_over(&self, now: Instant) -> bool {
        self.next_send_time <= now
    }

    /// Sends `len` bytes of connection data starting at `dsn` as a new subflow segment.
    /// The caller checked [`Subflow::new_data_space`].
    #[cfg(test)]
    pub fn send_new(&mut self, now: Instant, dsn: u64, len: u32, cx: &mut SubflowCx) -> Segment {
        let mut seg = Segment::default();
        self.send_new_into(now, dsn, len, cx, &mut seg);
        seg
    }

    /// [`Subflow::send_new`] writing the segment into `out` (every field).
    #[inline]
    pub fn send_new_into(&mut self, now: Instant, dsn: u64, len: u32, cx: &mut SubflowCx, out: &mut Segment) {
        self.timers.set(Timer::Probe, None);
        self.probe_backoff = 0;
        let seq = self.snd_nxt;
        self.snd_nxt += len as u64;
        if len < self.mss() {
            // `tcp_minshall_update`
            self.snd_sml = self.snd_nxt;
        }
        let fresh = self.sb.is_empty();
        if fresh {
            // Nothing in flight: a new delivery-rate interval starts now (Linux
            // `tcp_rate_skb_sent`; `Subflow::tx_stamp` for retransmissions).
            self.delivered_time = now;
        }
        self.rate_on_send(now, seq + len as u64, fresh);
        let flags = self.tx_flags();
        self.sb.push(SentSeg {
            seq,
            dsn,
            len,
            flags,
            sent_at: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
        });
        if self.timers.get(Timer::Rto).is_none() {
            self.timers.set(Timer::Rto, Some(now + self.current_rto()));
        }
        self.write_base(now, cx, out);
        out.seq = seq;
        out.len = len as u16;
        out.dsn = dsn;
        self.account_sent(now, out);
    }

    /// Counts a data segment as sent; writes its DSS option size. Takes the segment by
    /// reference: by value, it was copied in and out (120 bytes each way) per data segment.
    /// Inlined into the send paths (with `Connection::read` always inlined: `newreno-10m`
    /// −1.0 %, `lia-2path` −0.5 %, measured together).
    #[inline]
    fn account_sent(&mut self, now: Instant, seg: &mut Segment) {
        if let Some(d) = self.dss {
            seg.mp_opt = d.data;
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += seg.len as u64;
        self.cc.on_sent(now, &self.cc_state, seg.len as u32);
        if let Some(rate) = self.cc.pacing_rate(&self.cc_state) {
            if let Some(gap_ns) = (seg.wire_size() as u64 * 1_000_000_000).checked_div(rate) {
                self.next_send_time = self.next_send_time.max(now) + Duration(gap_ns);
            }
        }
    }
}
