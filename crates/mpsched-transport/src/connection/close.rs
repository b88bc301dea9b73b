//! Closing a connection. Graceful (RFC 8684 3.3.3): [`Connection::close`] queues a DATA_FIN,
//! which takes one byte of data sequence space after the last written byte; it goes out on a
//! pure ACK on every usable subflow once all data has been handed to subflows and is repeated on
//! a timer until DATA_ACKed (upstream Linux `mptcp_subflow_shutdown` and `__mptcp_retrans`, net/
//! mptcp/protocol.c). Once our DATA_FIN is acknowledged every subflow is closed with a FIN
//! exchange (subflow/close.rs). The peer's DATA_FIN is taken once every byte before it arrived,
//! and DATA_ACK then covers it. Abort (RFC 8684 3.5, Option R as Linux `mptcp_do_fastclose`
//! sends it): a RST carrying MP_FASTCLOSE and the peer's key on every subflow, and the
//! connection is gone at once.

use super::{Connection, Event, SfMeta, Side, Transmit};
use crate::sched::{Decision, Scheduler};
use crate::segment::{Flags, Segment};
use crate::subflow::close::RstCheck;
use crate::subflow::{Role, Subflow, SubflowCx};
use crate::time::{Duration, Instant};

/// DATA_FIN transmissions after the first before the connection gives up (as a subflow gives
/// up on its FIN, Linux `tcp_orphan_retries`).
const DATA_FIN_RETRIES: u32 = 8;

/// Where the connection is in its life (RFC 9293 3.3.2's names applied to the DATA_FIN
/// exchange of RFC 8684 3.3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnState {
    /// The first subflow's handshake has not completed.
    Connecting,
    /// Data flows both ways.
    Established,
    /// We closed; our DATA_FIN is not acknowledged yet. The peer may still send.
    FinWait1,
    /// Our DATA_FIN is acknowledged; the peer may still send.
    FinWait2,
    /// The peer closed first; we may still send.
    CloseWait,
    /// Both closed at about the same time; our DATA_FIN is not acknowledged yet.
    Closing,
    /// We closed after the peer; our DATA_FIN is not acknowledged yet.
    LastAck,
    /// Both DATA_FINs are acknowledged: every byte was delivered both ways (RFC 8684 3.3.3
    /// calls the connection closed). The subflows finish their FIN exchanges, TIME-WAIT
    /// included; a driver that does not care to acknowledge a retransmitted FIN may drop the
    /// connection now.
    Draining,
    /// Gone: see the [`CloseReason`] of [`super::Event::Closed`].
    Closed,
}

/// Why a connection closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// Both sides closed and every subflow finished its FIN exchange.
    Graceful,
    /// This end called [`Connection::abort`].
    Aborted,
    /// The peer aborted (MP_FASTCLOSE), or reset the last subflow.
    Reset,
    /// The DATA_FIN was never acknowledged (no path reached the peer).
    TimedOut,
}

/// Close state of a connection.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CloseState {
    /// Our DATA_FIN's DSN, once [`Connection::close`] was called.
    pub fin_dsn: Option<u64>,
    /// Our DATA_FIN is DATA_ACKed.
    pub fin_acked: bool,
    /// Our DATA_FIN is due (first time, or again after its timer).
    fin_pending: bool,
    /// DATA_FIN retransmission deadline.
    pub timer: Option<Instant>,
    retries: u32,
    /// The peer's DATA_FIN's DSN, once seen.
    peer_fin_dsn: Option<u64>,
    /// The peer's DATA_FIN was taken in order.
    pub peer_fin_taken: bool,
    /// The peer's DATA_FIN was taken before we closed.
    peer_first: bool,
    /// Set once the connection is closed.
    pub reason: Option<CloseReason>,
}

impl Connection {
    /// The application will write no more: once every written byte was handed to a subflow,
    /// a DATA_FIN follows them (RFC 8684 3.3.3). Data already written is still delivered; the
    /// peer may go on sending until it closes too. [`Connection::write`] takes nothing after this.
    pub fn close(&mut self) {
        if self.close.fin_dsn.is_some() || self.close.reason.is_some() {
            return;
        }
        self.close.fin_dsn = Some(self.shared.snd_end_dsn);
        self.close.fin_pending = true;
        self.close.peer_first = self.close.peer_fin_taken;
    }

    /// Aborts at once: every subflow sends a RST with MP_FASTCLOSE (RFC 8684 3.5) at the next
    /// [`Connection::poll_transmit`]s, and the connection is [`ConnState::Closed`]. Unacknowledged
    /// data is dropped.
    pub fn abort(&mut self, now: Instant) {
        self.fastclose(now, CloseReason::Aborted);
    }

    /// RST with MP_FASTCLOSE (when the peer's key is known) on every subflow that sent
    /// something, then closed for `reason`.
    fn fastclose(&mut self, now: Instant, reason: CloseReason) {
        if self.close.reason.is_some() {
            return;
        }
        for i in 0..self.subflows.len() {
            let mut cx = SubflowCx { conn: &mut self.shared };
            if let Some(mut seg) = self.subflows[i].make_rst(now, &mut cx) {
                if let Some(k) = self.shared.peer_key {
                    seg.flags = seg.flags.with(Flags::MP_FASTCLOSE);
                    seg.mp_key = k;
                }
                self.pending.push_back(Transmit { path: self.paths[i], seg });
            }
        }
        self.closed(reason);
    }

    /// Where the connection is in its life.
    pub fn state(&self) -> ConnState {
        let c = &self.close;
        if c.reason.is_some() {
            return ConnState::Closed;
        }
        if !self.established {
            return ConnState::Connecting;
        }
        match (c.fin_dsn.is_some(), c.fin_acked, c.peer_fin_taken) {
            (false, _, false) => ConnState::Established,
            (false, _, true) => ConnState::CloseWait,
            (true, false, false) => ConnState::FinWait1,
            (true, true, false) => ConnState::FinWait2,
            (true, false, true) if c.peer_first => ConnState::LastAck,
            (true, false, true) => ConnState::Closing,
            (true, true, true) => ConnState::Draining,
        }
    }

    /// This end's connection token (RFC 8684 3.2: the top 32 bits of SHA-256 of its key): what
    /// the peer's MP_JOIN SYNs carry ([`Segment::join_token`]). Hashed when asked (a SYN with
    /// MP_JOIN, or a driver indexing its connections) and kept, rather than at
    /// [`Connection::new`]: the hash is ~5,750 instructions, 1.5 % of `flows-1000`'s event loop
    /// when each of its 2,000 plain TCP connections paid it and none ever used it. Kept in an
    /// `AtomicU32` (`Sync`, which the Python classes holding a connection need; a relaxed load
    /// is a plain load) in the 4 bytes the stored token had: the layout is unchanged.
    pub fn token(&self) -> u32 {
        match self.token.load(std::sync::atomic::Ordering::Relaxed) {
            0 => self.hash_token(),
            t => t,
        }
    }

    /// [`Connection::token`]'s first call: out of line, so that the per-segment check of a
    /// SYN's MP_JOIN token (connection/input.rs) does not carry the hash's code.
    #[cold]
    #[inline(never)]
    fn hash_token(&self) -> u32 {
        let t = crate::token::token(self.shared.local_key);
        self.token.store(t, std::sync::atomic::Ordering::Relaxed);
        t
    }

    pub(super) fn closed(&mut self, reason: CloseReason) {
        for sf in self.subflows.iter_mut() {
            sf.finish();
        }
        self.close.reason = Some(reason);
        self.close.timer = None;
        self.parked_at = None;
        self.reinject.clear();
        self.reserved.clear();
        self.queues.clear();
        self.queued = 0;
        self.events.push_back(Event::Closed(reason));
    }

    /// Our DATA_FIN is due (first time, or again after its timer): [`Connection::poll_data_fin`]
    /// can send only then.
    #[inline]
    pub(super) fn data_fin_pending(&self) -> bool {
        self.close.fin_pending
    }

    /// Our DATA_FIN on a pure ACK on every usable subflow, when due and every written byte has
    /// been sent (none reserved or queued on a subflow).
    pub(super) fn poll_data_fin(&mut self, now: Instant) -> Option<Transmit> {
        let fin = self.close.fin_dsn?;
        let all_sent = self.shared.snd_next_dsn == fin && self.reserved.is_empty() && self.queued == 0;
        if !self.close.fin_pending || !all_sent {
            return None;
        }
        let mut rto = Duration::ZERO;
        for i in 0..self.subflows.len() {
            let sf = &self.subflows[i];
            if !(sf.is_established() && !sf.is_pre_established() && self.meta[i].path_up) {
                continue;
            }
            rto = rto.max(sf.info().rto);
            let mut cx = SubflowCx { conn: &mut self.shared };
            let mut seg = self.subflows[i].make_ack(now, Flags::DATA_FIN, &mut cx);
            seg.dsn = fin;
            self.pending.push_back(Transmit { path: self.paths[i], seg });
        }
        let t = self.pending.pop_front()?;
        self.close.fin_pending = false;
        let backoff = Duration(rto.0.saturating_mul(1 << self.close.retries.min(10)));
        self.close.timer = Some(now + backoff.min(Duration::from_secs(120)));
        Some(t)
    }

    /// The DATA_FIN timer: send it again, or give up after [`DATA_FIN_RETRIES`] with a fast
    /// close (upstream Linux `mptcp_close_tout_expired` also ends in `mptcp_do_fastclose`), in
    /// case a path came back.
    pub(super) fn on_close_timeout(&mut self, now: Instant) {
        if self.close.timer.is_none_or(|t| t > now) {
            return;
        }
        self.close.timer = None;
        self.close.retries += 1;
        if self.close.retries > DATA_FIN_RETRIES {
            self.fastclose(now, CloseReason::TimedOut);
        } else {
            self.close.fin_pending = true;
        }
    }

    /// A per-packet decision unanswered past its deadline: apply the default.
    pub(super) fn on_decision_timeout(&mut self, now: Instant) {
        let due = self.parked_at.zip(self.decision_timeout).is_some_and(|(t, d)| t + d <= now);
        if due && self.parked {
            self.sched.decide(&Decision::Path(None));
            self.parked = false;
            self.parked_at = None;
            self.info.decisions_defaulted += 1;
        }
    }

    /// DATA_ACK passed our DATA_FIN: close every subflow with a FIN (RFC 8684 3.3.3).
    pub(super) fn on_data_fin_acked(&mut self) {
        if self.close.fin_acked {
            return;
        }
        self.close.fin_acked = true;
        self.close.timer = None;
        for (sf, m) in self.subflows.iter_mut().zip(&self.meta) {
            if m.path_up {
                sf.close();
            } else {
                // Its interface is gone: no FIN can get through (Linux removes such a subflow
                // with the address, `mptcp_pm_nl_rm_addr_or_subflow`).
                sf.finish();
            }
        }
    }

    /// After subflow `i` took `seg`: note the peer's DATA_FIN, take it once the data before it
    /// is in, and acknowledge it (again, if it was repeated).
    pub(super) fn on_peer_data_fin(&mut self, i: usize, seg: &Segment) {
        if seg.flags.contains(Flags::DATA_FIN) {
            if self.close.peer_fin_taken {
                self.subflows[i].request_ack();
                return;
            }
            self.close.peer_fin_dsn = Some(seg.dsn + seg.len as u64);
        }
        if !self.close.peer_fin_taken && self.close.peer_fin_dsn == Some(self.shared.rcv.next()) {
            self.close.peer_fin_taken = true;
            self.shared.data_fin_rcvd = true;
            self.events.push_back(Event::PeerClosed);
            self.subflows[i].request_ack();
        }
    }

    /// A reset on subflow `i`: MP_FASTCLOSE with our key ends the connection; a plain RST at
    /// the exact sequence number ends the subflow (its data is reinjected on the others), and
    /// the connection with its last subflow; one inside the window gets a challenge ACK.
    pub(super) fn on_rst(&mut self, i: usize, seg: &Segment) {
        if seg.flags.contains(Flags::MP_FASTCLOSE) {
            if seg.mp_key == self.shared.local_key {
                self.closed(CloseReason::Reset);
            }
            return;
        }
        match self.subflows[i].check_rst(seg, self.shared.rcv_window()) {
            RstCheck::Accept => {
                self.subflows[i].finish();
                if self.meta[i].announced && !self.meta[i].pf && self.meta[i].path_up {
                    self.events.push_back(Event::SubflowDown(i as u8));
                }
                if self.subflows.len() > 1 {
                    self.reinject_from(i);
                }
                if self.subflows.iter().all(|s| s.is_finished()) {
                    self.closed(CloseReason::Reset);
                }
            }
            RstCheck::Challenge => self.subflows[i].request_ack(),
            RstCheck::Ignore => {}
        }
    }

    /// Both DATA_FINs acknowledged and every subflow finished: closed.
    #[inline]
    pub(super) fn check_closed(&mut self) {
        let c = &self.close;
        if c.reason.is_none() && c.fin_acked && c.peer_fin_taken && self.subflows.iter().all(|s| s.is_finished()) {
            self.closed(CloseReason::Graceful);
        }
    }

    /// A server accepts an MP_JOIN SYN on a path it was not configured with when it names this
    /// connection's token (RFC 8684 3.2); returns the new subflow's index.
    pub(super) fn accept_join(&mut self, now: Instant, path: super::PathId, seg: &Segment) -> Option<usize> {
        let token = seg.join_token()?;
        let open = self.established && self.close.fin_dsn.is_none() && self.close.reason.is_none();
        if self.side != Side::Server || !open || token != self.token() || self.subflows.len() >= 8 {
            return None;
        }
        let i = self.subflows.len();
        let mut sf = Subflow::new(i as u8, Role::Server, self.sf_cfg.clone(), self.cc_spec.build(), now);
        sf.seed_cc(self.shared.local_key);
        self.subflows.push(sf);
        self.meta.push(SfMeta::new(false));
        // Taken only on a path not listed (`index_of_path` found none): `paths_distinct` holds.
        debug_assert!(!self.paths.contains(&path));
        self.paths.push(path);
        Some(i)
    }
}
