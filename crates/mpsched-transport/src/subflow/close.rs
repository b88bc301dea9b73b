//! Closing a subflow: the FIN exchange of RFC 9293 3.6 (our FIN takes one sequence number after
//! the last data byte and is retransmitted like data; the peer's FIN is taken once every byte
//! before it arrived), TIME-WAIT for the end that closed first, give-up after repeated
//! timeouts, and resets (RST accepted only at the exact next sequence number, RFC 5961 3.2).
//!
//! In MPTCP a subflow is closed this way after the connection's DATA_FIN was acknowledged
//! (RFC 8684 3.3.3), so a closing subflow carries no new data; it may still retransmit data sent
//! before its FIN.

use super::{Subflow, SubflowCx, SubflowState, Timer};
use crate::segment::{Flags, Segment};
use crate::time::Instant;

/// Linux retries an orphaned socket's FIN this many times (`tcp_orphan_retries` with the
/// sysctl at its default 0) before it gives up and drops the socket without a reset.
const ORPHAN_RETRIES: u32 = 8;

/// Close state of one subflow.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CloseState {
    /// The connection asked for a FIN that has not been sent yet.
    fin_pending: bool,
    /// Our FIN's sequence number, once sent.
    pub(super) fin_seq: Option<u64>,
    /// A timeout fired while the FIN was outstanding: resend it after the lost data.
    fin_retx: bool,
    /// The peer's FIN's sequence number, once seen (it may arrive before data it follows).
    peer_fin: Option<u64>,
    /// The peer's FIN was taken in order.
    peer_fin_taken: bool,
    /// Timeouts since our FIN was first sent.
    retries: u32,
    /// The subflow is gone (closed after the handshake, timed out, or reset): it ignores input
    /// and sends nothing more.
    pub(super) finished: bool,
}

/// What to do with a reset (RFC 5961 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RstCheck {
    /// At the exact next expected sequence number: the subflow is reset.
    Accept,
    /// Inside the receive window but not exact: answer with a challenge ACK, do not reset.
    Challenge,
    /// Outside the window, or nothing to reset.
    Ignore,
}

impl Subflow {
    /// The connection closed its sending side and the DATA_FIN was acknowledged: send a FIN
    /// (RFC 8684 3.3.3). A subflow that never completed its handshake is simply dropped (Linux
    /// `tcp_close` in SYN-SENT).
    pub fn close(&mut self) {
        match self.state {
            SubflowState::Closed | SubflowState::SynSent | SubflowState::SynReceived => self.finish(),
            SubflowState::Established | SubflowState::CloseWait if self.close.fin_seq.is_none() => {
                self.close.fin_pending = true;
                self.pre_established = false;
            }
            _ => {}
        }
    }

    /// The subflow is gone: no timer, nothing more to send, input ignored.
    pub fn finish(&mut self) {
        self.state = SubflowState::Closed;
        self.timers = super::Timers::default();
        self.syn_pending = false;
        self.probe_pending = false;
        self.ack_now = false;
        self.close.fin_pending = false;
        self.close.fin_retx = false;
        self.close.finished = true;
    }

    /// Closed for good (see [`Subflow::finish`]).
    pub fn is_finished(&self) -> bool {
        self.close.finished
    }

    /// 1 while our FIN occupies a sequence number that is not acknowledged.
    #[inline]
    pub(super) fn fin_outstanding(&self) -> u64 {
        self.close.fin_seq.is_some_and(|f| self.snd_una <= f) as u64
    }

    /// Whether [`Subflow::poll_fin`] may send something (a FIN is pending or may be resent).
    #[inline]
    pub(super) fn fin_may_send(&self) -> bool {
        self.close.fin_pending || self.close.fin_retx
    }

    /// Our FIN, if one is due: the first time it is sent, or again after a timeout once the lost
    /// data before it went out (the FIN is the last thing in the retransmission queue). The FIN
    /// ignores the congestion window (Linux `tcp_cwnd_test`: "Don't be strict about the
    /// congestion window for the final FIN").
    pub(super) fn poll_fin(&mut self, now: Instant, cx: &mut SubflowCx) -> Option<Segment> {
        let resend = self.close.fin_retx && self.fin_outstanding() == 1 && self.sb.next_retransmission().is_none();
        if !self.close.fin_pending && !resend {
            return None;
        }
        self.close.fin_pending = false;
        self.close.fin_retx = false;
        let seq = match self.close.fin_seq {
            Some(f) => f,
            None => {
                let f = self.snd_nxt;
                self.close.fin_seq = Some(f);
                self.snd_nxt += 1;
                self.state = match self.state {
                    SubflowState::CloseWait => SubflowState::LastAck,
                    _ => SubflowState::FinWait1,
                };
                f
            }
        };
        if self.timers.get(Timer::Rto).is_none() {
            self.timers.set(Timer::Rto, Some(now + self.current_rto()));
        }
        let mut seg = self.base_segment(now, cx);
        seg.seq = seq;
        seg.flags = seg.flags.with(Flags::FIN);
        Some(seg)
    }

    /// After an ACK: our FIN acknowledged moves FIN-WAIT-1 to FIN-WAIT-2, CLOSING to TIME-WAIT
    /// and LAST-ACK to closed (RFC 9293 3.10.7.4, "ACK bit").
    pub(super) fn on_fin_acked(&mut self, now: Instant) {
        if self.close.fin_seq.is_none_or(|f| self.snd_una <= f) {
            return;
        }
        match self.state {
            SubflowState::FinWait1 => self.state = SubflowState::FinWait2,
            SubflowState::Closing => self.enter_time_wait(now),
            SubflowState::LastAck => self.finish(),
            _ => {}
        }
    }

    /// A segment with FIN: remember where the peer's data ends, take the FIN if everything
    /// before it arrived, and acknowledge a repeated one.
    pub(super) fn on_peer_fin(&mut self, now: Instant, seg: &Segment) {
        if self.close.peer_fin_taken {
            // A retransmitted FIN: our ACK of it was lost (in TIME-WAIT, restart the wait).
            self.ack_now = true;
            if self.state == SubflowState::TimeWait {
                self.timers.set(Timer::TimeWait, Some(now + self.cfg.time_wait));
            }
            return;
        }
        self.close.peer_fin = Some(seg.end());
        self.take_peer_fin(now);
    }

    /// Takes the peer's FIN once `rcv_nxt` reached it (RFC 9293 3.10.7.4, "FIN bit"). In
    /// ESTABLISHED the ACK is delayed, as Linux `tcp_fin` does (it enters pingpong mode expecting
    /// our own FIN to carry it); in FIN-WAIT it goes at once.
    pub(super) fn take_peer_fin(&mut self, now: Instant) {
        if self.close.peer_fin_taken || self.close.peer_fin != Some(self.rcv.nxt()) {
            return;
        }
        self.close.peer_fin_taken = true;
        self.rcv.set_nxt(self.rcv.nxt() + 1);
        match self.state {
            SubflowState::Established => {
                self.state = SubflowState::CloseWait;
                self.unacked_segs = self.unacked_segs.max(1);
                if self.timers.get(Timer::DelayedAck).is_none() {
                    self.timers.set(Timer::DelayedAck, Some(now + self.cfg.delayed_ack_timeout));
                }
            }
            SubflowState::FinWait1 => {
                self.state = SubflowState::Closing;
                self.ack_now = true;
            }
            SubflowState::FinWait2 => {
                self.ack_now = true;
                self.enter_time_wait(now);
            }
            _ => self.ack_now = true,
        }
    }

    fn enter_time_wait(&mut self, now: Instant) {
        self.state = SubflowState::TimeWait;
        for t in [Timer::Rto, Timer::Probe, Timer::Pacing] {
            self.timers.set(t, None);
        }
        self.timers.set(Timer::TimeWait, Some(now + self.cfg.time_wait));
    }

    /// A retransmission timeout while closing: count it, give up after [`ORPHAN_RETRIES`], and
    /// otherwise resend the FIN after the lost data. Returns `true` when the subflow gave up.
    pub(super) fn on_close_rto(&mut self) -> bool {
        if self.close.fin_seq.is_none() {
            return false;
        }
        self.close.retries += 1;
        if self.close.retries > ORPHAN_RETRIES {
            self.finish();
            return true;
        }
        self.close.fin_retx = self.fin_outstanding() == 1;
        false
    }

    /// Whether a reset from the peer applies (RFC 5961 3.2; in SYN-SENT, RFC 9293 3.10.7.3: it
    /// must acknowledge our SYN).
    pub fn check_rst(&self, seg: &Segment, rcv_window: u64) -> RstCheck {
        match self.state {
            _ if self.close.finished => RstCheck::Ignore,
            SubflowState::Closed => RstCheck::Ignore,
            SubflowState::SynSent => match seg.flags.contains(Flags::ACK) && seg.ack == self.snd_nxt {
                true => RstCheck::Accept,
                false => RstCheck::Ignore,
            },
            _ if seg.seq == self.rcv.nxt() => RstCheck::Accept,
            _ if seg.seq > self.rcv.nxt() && seg.seq < self.rcv.nxt() + rcv_window.max(1) => RstCheck::Challenge,
            _ => RstCheck::Ignore,
        }
    }

    /// A reset for the peer (this end aborts), then the subflow is finished. `None` when the
    /// subflow never sent anything the peer could hold state for.
    pub fn make_rst(&mut self, now: Instant, cx: &mut SubflowCx) -> Option<Segment> {
        let sent_something = !matches!(self.state, SubflowState::Closed) || self.snd_nxt > 0;
        let seg = (sent_something && !self.close.finished).then(|| {
            let mut seg = self.base_segment(now, cx);
            seg.seq = self.snd_nxt;
            seg.flags = seg.flags.with(Flags::RST);
            seg.n_sack = 0;
            seg
        });
        self.finish();
        seg
    }
}
