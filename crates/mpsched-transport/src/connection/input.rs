//! Segments from the peer: subflow input, DATA_ACK and the peer's connection-level window
//! (RFC 8684 §3.3.2), subflow announcements and the path manager's joins;
//! the application's reads from the shared receive buffer (with the head-of-line accounting of
//! docs/scenarios.md, Outputs).

use super::{Connection, Derived, Event, PathId, Side};
use crate::segment::{Flags, Segment};
use crate::subflow::SubflowCx;
use crate::time::Instant;

impl Connection {
    /// Application reads up to `max` in-order bytes; returns how many.
    /// The simulator reads after every input: the buffer tuning's once-per-RTT measure and the
    /// multipath window update are out of line, so a common read is a few counters and
    /// comparisons (the tuning inside it cost plain TCP a call and a closure per read). Always
    /// inlined: with the `#[inline]` hint alone the simulator's driver still called it
    /// (measured with `account_sent` inlined: `newreno-10m` −1.0 %, `lia-2path` −0.5 %).
    #[inline(always)]
    pub fn read(&mut self, max: u64) -> u64 {
        let avail = self.shared.rcv.next() - self.read_total;
        let n = avail.min(max);
        if n == 0 {
            return 0;
        }
        let before = self.shared.rcv_window();
        if let Some(t) = self.rcv_tuning.as_mut() {
            if t.count_read(self.hol_last, n, self.sf_cfg.mss) {
                self.tune_rcv_buf();
            }
        }
        self.read_total += n;
        self.shared.rcv_unread = self.shared.rcv.next() - self.read_total;
        let after = self.shared.rcv_window();
        if self.sf_cfg.subflow_windows && self.subflows.len() > 1 {
            self.cleanup_rbuf(after);
        } else if after >= 2 * before.max(1) && after >= self.subflows[0].mss() as u64 {
            // Linux tcp_cleanup_rbuf: announce a window that at least doubled.
            if let Some(sf) = self.subflows.iter_mut().find(|s| s.is_established()) {
                sf.request_ack();
            }
        }
        n
    }

    /// Linux mptcp_cleanup_rbuf, after a read left `after` bytes free: when the free space at
    /// least doubled since the last window offered on any subflow, each subflow judges its own
    /// (tcp_cleanup_rbuf).
    fn cleanup_rbuf(&mut self, after: u64) {
        if after > 0 && after >= 2 * self.shared.old_wspace {
            for sf in self.subflows.iter_mut().filter(|s| s.is_established()) {
                sf.window_update_after_read(after);
            }
        }
    }

    /// The receive buffer's auto-tuning once a receive RTT passed since its last measure
    /// ([`crate::rcvspace::RcvTuning::count_read`] counted the read; `mptcp_rcv_space_adjust`),
    /// at the time of the last input (the application reads as data arrives): when the
    /// connection's buffer grew, the established subflows with a buffer of their own grow theirs
    /// (`tcp_rcvbuf_grow(ssk, copied)`).
    #[inline(never)]
    fn tune_rcv_buf(&mut self) {
        let Some(t) = self.rcv_tuning.as_mut() else { return };
        let subflows = &self.subflows;
        let rtt = || subflows.iter().map(|s| s.rcv_rtt()).max().unwrap_or_default();
        let Some(copied) = t.measure(self.hol_last, rtt) else { return };
        for sf in self.subflows.iter_mut() {
            if let Some(mut b) = sf.rcv_own() {
                t.follow(&mut b, copied);
                sf.set_rcv_own(b);
            }
        }
    }

    /// Integrates the receiver's HoL figures up to `now`.
    /// Nothing is converted to seconds while both figures are zero, the common case (adding
    /// `0.0` to a non-negative sum changes no bit of it, so skipping it changes no output).
    pub(super) fn account_hol(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.hol_last);
        if elapsed.0 > 0 {
            let ooo = self.shared.rcv.ooo_bytes();
            let full = self.shared.rcv_window() < self.subflows[0].mss() as u64;
            if ooo > 0 || full {
                let dt = elapsed.as_secs_f64();
                if ooo > 0 {
                    self.info.ooo_byte_seconds += ooo as f64 * dt;
                }
                if full {
                    self.info.rwnd_full_seconds += dt;
                }
            }
        }
        self.hol_last = now;
    }

    /// Handles a segment from the peer that arrived on `path`. The path, not the segment's
    /// subflow id, says which subflow it belongs to (a real driver knows the path by its
    /// addresses, as TCP knows a subflow by its 4-tuple). A server takes an MP_JOIN SYN naming
    /// its token on a path it was not configured with as a new subflow (RFC 8684 3.2); other
    /// segments on unknown paths are ignored, as is everything once the connection is closed.
    pub fn handle_segment(&mut self, now: Instant, path: PathId, seg: &Segment) {
        if self.close.reason.is_some() || !in_sequence_space(seg) {
            return;
        }
        let i = match self.index_of_path(path) {
            Some(i) if seg.join_token().is_none_or(|t| t == self.token()) => i,
            Some(_) => return,
            None => match self.accept_join(now, path, seg) {
                Some(i) => i,
                None => return,
            },
        };
        self.account_hol(now);
        if seg.flags.contains(Flags::RST) {
            self.on_rst(i, seg);
            return;
        }
        // The siblings' snapshot is read only by the congestion controller's `on_ack` and
        // `on_congestion_event`, which need something outstanding on this subflow; only a
        // coupled controller reads it (asked first: plain TCP skips the subflow test).
        if self.coupled && self.subflows[i].awaits_ack() {
            self.refresh_siblings(i);
        }
        let mut cx = SubflowCx { conn: &mut self.shared };
        self.subflows[i].handle_segment(now, seg, &mut cx);
        self.shared.rcv_unread = self.shared.rcv.next() - self.read_total;
        if seg.flags.contains(Flags::ACK) && !self.data_ack_unchanged(seg) {
            self.on_data_ack(seg);
        }
        self.on_peer_data_fin(i, seg);
        self.after_subflow_input(i);
        self.check_closed();
    }

    /// Whether [`Self::on_data_ack`] would change nothing: the DATA_ACK equals `data_una`
    /// (no event, nothing to drop from `sent`: the last call left no acknowledged mapping at
    /// its front, checked all the same since a peer may acknowledge data never sent), its right
    /// edge does not pass `wnd_right`, and no DATA_FIN of ours is pending (so none is
    /// acknowledged). The receiver of a bulk transfer gets every data segment with the same
    /// DATA_ACK: this skips the DATA_FIN clamp, the event test and two stores per segment.
    #[inline(always)]
    fn data_ack_unchanged(&self, seg: &Segment) -> bool {
        seg.data_ack == self.data_una
            && seg.data_ack + seg.wnd as u64 <= self.wnd_right
            && self.close.fin_dsn.is_none()
            && self.sent.front().is_none_or(|m| m.dsn + m.len as u64 > self.data_una)
    }

    /// DATA_ACK and the peer's window (RFC 8684 3.3.2), and whether it covers our DATA_FIN.
    /// Out of line: since [`Self::data_ack_unchanged`] it runs for about one segment in three
    /// on `newreno-10m` (the sender's ACKs), and inlined it cost every segment
    /// `handle_segment`'s spills (measured: `newreno-10m` 95.51 -> 95.33 M instructions).
    #[inline(never)]
    fn on_data_ack(&mut self, seg: &Segment) {
        if seg.data_ack < self.data_una {
            return;
        }
        // The DATA_FIN's byte of sequence space is not data: `data_una` stops at it.
        let fin_acked = self.close.fin_dsn.is_some_and(|f| seg.data_ack > f);
        let data_ack = self.close.fin_dsn.map_or(seg.data_ack, |f| seg.data_ack.min(f));
        if data_ack > self.data_una {
            self.events.push_back(Event::DataAcked(data_ack));
        }
        self.data_una = data_ack;
        // RFC 8684 3.3.4: keep the largest right edge seen (a reordered or duplicated ACK with
        // a smaller window must not pull it back).
        self.wnd_right = self.wnd_right.max(seg.data_ack + seg.wnd as u64);
        while self.sent.front().is_some_and(|m| m.dsn + m.len as u64 <= self.data_una) {
            self.sent.pop_front();
        }
        if fin_acked {
            self.on_data_fin_acked();
        }
    }

    /// Connection-side bookkeeping of subflow `i` after an input: delivery clears the
    /// potentially-failed mark, RTT extremes, and the announcement of a new subflow (the path
    /// manager joins the other paths once the first subflow is up).
    fn after_subflow_input(&mut self, i: usize) {
        let sf = &self.subflows[i];
        let (delivered, srtt, established) = (sf.delivered(), sf.srtt(), sf.is_established());
        // `pf`, `min_srtt` and `max_srtt` may change below, and the view's fields derive from
        // them: the only caller borrowed the subflow mutably just before, which cleared its mark.
        debug_assert!(!self.subflows.is_clean(Derived::Fields, i));
        let m = &mut self.meta[i];
        if delivered > m.delivered_seen {
            m.delivered_seen = delivered;
            m.pf = false;
            m.up_restart = false;
        }
        if srtt.0 > 0 {
            m.min_srtt = m.min_srtt.min(srtt.0);
            m.max_srtt = m.max_srtt.max(srtt.0);
        }
        if established && !m.announced {
            m.announced = true;
            self.events.push_back(Event::SubflowUp(i as u8));
            if let (true, Some(t)) = (i > 0, self.rcv_tuning.as_ref()) {
                // A joined subflow starts with tcp_rmem[1]'s buffer (tcp_init_buffer_space).
                self.subflows[i].set_rcv_own(t.subflow_buf(self.sf_cfg.mss));
            }
            if i == 0 && !self.established {
                self.established = true;
                self.events.push_back(Event::Established);
                if self.side == Side::Client {
                    // Path manager (full mesh): join the other paths once MP_CAPABLE completed.
                    for sf in self.subflows.iter_mut().skip(1) {
                        sf.start_join();
                    }
                }
            }
        }
    }
}

/// Whether the segment's subflow and data ranges fit in the 64-bit sequence spaces, which never
/// wrap ([`Segment`]): one that would wrap cannot be in any receive window, is not acceptable
/// (RFC 9293 3.10.7.4) and is dropped before its end is computed (found by fuzzing: the end
/// overflowed).
fn in_sequence_space(seg: &Segment) -> bool {
    let len = seg.len as u64;
    seg.seq.checked_add(len).is_some() && seg.dsn.checked_add(len).is_some()
}
