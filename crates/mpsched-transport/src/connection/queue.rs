//! Per-subflow send queues, the connection's part of [`Verdict::Queue`](crate::sched::Verdict::Queue).
//!
//! The upstream Linux scheduler hands data to a subflow whatever that subflow's windows:
//! `__subflow_push_pending` → `mptcp_sendmsg_frag` (net/mptcp/protocol.c) appends it to the
//! subflow's write queue, bounded by the MPTCP-level window (`mptcp_check_allowed_size`) and the
//! subflow's send buffer (the scheduler's `sk_stream_memory_free`), not by its congestion or
//! send window; the subflow sends it when those open (`tcp_push` → `tcp_write_xmit`:
//! `tcp_cwnd_test`, `tcp_snd_wnd_test`).
//!
//! - A queued segment takes its DSN at once, within the peer's window, and enters the
//!   connection-level retransmission queue with no carrier (as a
//!   [`Verdict::SendAhead`](crate::sched::Verdict::SendAhead) reservation does); under
//!   [`SubflowConfig::subflow_windows`](crate::SubflowConfig::subflow_windows) taking it raises
//!   the subflow's send window to the connection's window beyond it (`mptcp_check_allowed_size`
//!   runs when the data is queued, not when it leaves).
//! - Data is queued in segments of at most the MSS, cut at the peer's window
//!   (`mptcp_check_allowed_size`): the segment at the window's edge can be short. Data that
//!   continues a subflow's last queued segment fills it up to the MSS first (`mptcp_sendmsg_frag`
//!   copies into the write queue's unsent tail).
//! - A subflow sends its queued segments oldest first, each when its congestion window (and
//!   pacing) has room for it and, under per-subflow windows, its own send window too; a short
//!   segment that is the last queued waits while the subflow's last short segment is
//!   unacknowledged (Nagle with Minshall's rule, [`crate::subflow::Subflow::nagle_holds`]).
//!   This is subflow-level output: it comes before the connection's reinjections and new data.
//! - A subflow that becomes unusable (an RTO makes it potentially failed, its path goes down, a
//!   reset ends it) gives its queued segments to the reinjection queue with its unacknowledged
//!   data ([`Connection::reinject_from`]; the kernel re-sends what a stale or closed subflow
//!   held: `__mptcp_retransmit_pending_data`).
//! - The DATA_FIN waits until every queue is empty; closing the connection empties them.
//!
//! A scheduler that never answers `Queue` never queues anything: every path here is then
//! skipped, and its runs are unchanged.

use std::collections::VecDeque;

use super::{Connection, Derived, PathId};
use crate::sched::{AnySched, SubflowSet, Verdict};
#[cfg(any(test, debug_assertions))]
use crate::sched::{Scheduler, Upstream};
use crate::segment::Segment;
use crate::time::Instant;

/// A queued segment: DSN, length, position of its retransmission-queue entry.
type Queued = (u64, u32, u32);

/// The segments ([`Queued`]) waiting in each subflow's send queue, oldest first. Cold unless a
/// scheduler queues: which queues are not empty, the bit every `poll_transmit` reads, is
/// [`Connection`]'s `queued`, on its flag line (BENCHMARKS.md, eighteenth pass, perf18m).
#[derive(Debug, Default)]
pub(super) struct SendQueues {
    /// One queue per subflow index, allocated at the first segment queued (most connections,
    /// under any other scheduler, never queue one). Each segment: DSN, length, and the position
    /// of its entry in the retransmission queue ([`Connection::sent_pos`]).
    segs: Vec<VecDeque<Queued>>,
    bytes: [u64; 8],
}

impl SendQueues {
    /// Bytes in subflow `i`'s queue.
    #[inline]
    pub fn bytes(&self, i: usize) -> u64 {
        self.bytes[i]
    }

    /// Subflow `i`'s oldest queued segment.
    #[inline]
    fn front(&self, i: usize) -> Option<Queued> {
        self.segs.get(i)?.front().copied()
    }

    /// Subflow `i` holds one segment only: its oldest is also its last.
    #[inline]
    fn single(&self, i: usize) -> bool {
        self.segs.get(i).is_some_and(|q| q.len() == 1)
    }

    /// Appends `len` bytes at `dsn` to subflow `i`'s queue. When they continue its last segment
    /// and that is shorter than `mss`, they fill it up first (`mptcp_sendmsg_frag` copies into
    /// the write queue's unsent tail while `mptcp_skb_can_collapse_to`: the DSN continues its
    /// mapping), the rest making a new segment. `pos`: the position of their retransmission-queue
    /// entry (a rest's is not found there: no entry starts at its DSN).
    #[inline]
    fn push(&mut self, i: usize, mut dsn: u64, mut len: u32, mss: u32, pos: u32) {
        if self.segs.is_empty() {
            self.segs.resize_with(8, VecDeque::new);
        }
        self.bytes[i] += len as u64;
        let q = &mut self.segs[i];
        if let Some(tail) = q.back_mut() {
            if tail.0 + tail.1 as u64 == dsn && tail.1 < mss {
                let add = len.min(mss - tail.1);
                tail.1 += add;
                (dsn, len) = (dsn + add as u64, len - add);
            }
        }
        if len > 0 {
            q.push_back((dsn, len, pos));
        }
    }

    /// Subflow `i`'s oldest segment, taken off its queue, and whether the queue is now empty.
    fn pop(&mut self, i: usize) -> Option<(Queued, bool)> {
        let q = self.segs.get_mut(i)?;
        let (dsn, len, pos) = q.pop_front()?;
        self.bytes[i] -= len as u64;
        Some(((dsn, len, pos), q.is_empty()))
    }

    /// Empties every queue.
    pub fn clear(&mut self) {
        self.segs.iter_mut().for_each(VecDeque::clear);
        self.bytes = [0; 8];
    }

    /// Debug builds: bit i of `queued` is set exactly when subflow i's queue holds a segment.
    #[cfg(debug_assertions)]
    pub fn check_mask(&self, queued: u8) {
        for i in 0..8 {
            let held = self.segs.get(i).is_some_and(|q| !q.is_empty());
            assert_eq!(queued & (1 << i) != 0, held, "queue mask of subflow {i}");
        }
    }
}

impl Connection {
    /// Puts `len` bytes at `dsn` (the next new DSN, within the peer's window) at the back of
    /// subflow `s`'s send queue.
    pub(super) fn enqueue(&mut self, s: usize, dsn: u64, len: u32) {
        if self.sf_cfg.subflow_windows {
            self.subflows.raise_snd_wnd(s, self.wnd_right.saturating_sub(dsn));
        }
        if self.queues.bytes(s) == 0 {
            // A new oldest segment: what was known of the old one no longer holds. (Data that
            // fills up the oldest segment only makes it longer: a mark that it did not fit
            // still holds.)
            self.subflows.forget(Derived::Blocked, s);
        }
        let mss = self.subflows[s].mss();
        self.queues.push(s, dsn, len, mss, self.sent_pos());
        self.queued |= 1 << s;
        // The view's `queued` and `unsent` count the queue: when its fields are current they
        // are patched (nothing else they read changed), which spares the next decision of the
        // same drain recomputing them.
        if self.subflows.is_clean(Derived::Fields, s) {
            let v = &mut self.views[s];
            v.unsent += len as u64;
            v.queued += len as u64;
        }
    }

    /// The oldest queued segment of the first subflow (in index order) whose windows let it
    /// leave now. The subflows marked `Blocked` are skipped: their oldest segment did not fit
    /// their free window, and neither has changed since (with eight subflows, asking each
    /// subflow with a queue again at every `poll_transmit` was 1.5 million calls that found
    /// nothing in `subflows-8`, ~600 instructions per delivered packet).
    pub(super) fn send_queued(&mut self, now: Instant, out: &mut Segment) -> Option<PathId> {
        #[cfg(debug_assertions)]
        self.check_blocked(now);
        let mut m = self.queued & !self.subflows.clean_mask(Derived::Blocked);
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            if let Some(path) = self.send_queued_on(now, i, out) {
                return Some(path);
            }
        }
        None
    }

    /// Subflow `i`'s oldest queued segment, if its congestion window (and pacing) and, under
    /// per-subflow windows, its own send window have room for it, and Nagle's test lets it go
    /// when it is short and the last one queued (`tcp_write_xmit`).
    /// The segment is written into `out` (see [`Connection::poll_transmit_into`]).
    ///
    /// A subflow marked `Blocked` is answered at once: `schedule_new` asks about the subflow it
    /// just queued on, which most often already held segments that did not fit (`lia-2path`:
    /// most of those 166,680 calls, ~56 instructions each). (The test at the caller instead
    /// changed how `poll_transmit_into` was compiled: `edar-handoff` +0.34 %, measured.)
    pub(super) fn send_queued_on(&mut self, now: Instant, i: usize, out: &mut Segment) -> Option<PathId> {
        if self.subflows.is_clean(Derived::Blocked, i) {
            return None;
        }
        let (dsn, len, pos) = self.queues.front(i)?;
        if self.subflows.new_data_space(i, now) < len as u64 {
            if self.subflows.is_clean(Derived::Space, i) {
                self.subflows.set_clean(Derived::Blocked, i);
            }
            return None;
        }
        if self.queues.single(i) && self.subflows[i].nagle_holds(len) {
            return None;
        }
        if self.sf_cfg.subflow_windows && self.subflows[i].snd_wnd_room(0) < len as u64 {
            return None;
        }
        // The free window just read is cached (the pacing gap is over): the send below keeps
        // it exact as the window less `len` (`space_after_send`), so the next poll's call here
        // (the drain's next queued segment, or the one that finds the window full and marks the
        // subflow `Blocked`) reads it instead of asking the subflow again.
        let cached = self.subflows.is_clean(Derived::Space, i);
        let idle = self.subflows.is_clean(Derived::Idle, i);
        self.pop_queued(i);
        // (The view's fields, stale now that the queue shrank, lose their mark with the rest
        // in `transmit_on_into`'s mutable borrow of the subflow, after it read the marks it
        // needs: `Fields` only for a segment not from a queue.)
        let path = self.transmit_on_into(now, i, dsn, len, None, Some(pos), out);
        if cached {
            if let Some(space) = self.subflows.space_after_send(i, now, len) {
                // The next queued segment does not fit the window left: marked `Blocked` now,
                // as the drain's next poll would mark it (the cached window it would read is
                // this one), and that poll's `send_queued` skips the call here.
                if self.queues.front(i).is_some_and(|(_, next, _)| space < u64::from(next)) {
                    self.subflows.set_clean(Derived::Blocked, i);
                }
            }
        }
        // A send of new data leaves an idle subflow idle unless it opened a pacing gap
        // (`send_new_into` clears the pending ACK, adds an unlost segment and touches no SYN,
        // probe or FIN flag): the mark is kept, and the drain's next polls skip this subflow's
        // `is_idle` in `poll_subflows` (two of the three polls per ACK in `lia-2path`). Here,
        // not in `transmit_on_into`: there the test cost plain TCP's sends ~5 instructions.
        if idle && self.subflows[i].pacing_gap_over(now) {
            debug_assert!(self.subflows[i].is_idle(now), "subflow {i} idle after a send");
            self.subflows.set_clean(Derived::Idle, i);
        }
        Some(path)
    }

    /// Subflow `i`'s oldest queued segment, taken off its queue (its bit of `queued` cleared when
    /// that empties it).
    fn pop_queued(&mut self, i: usize) -> Option<Queued> {
        let (seg, now_empty) = self.queues.pop(i)?;
        if now_empty {
            self.queued &= !(1 << i);
        }
        #[cfg(debug_assertions)]
        self.queues.check_mask(self.queued);
        Some(seg)
    }

    /// Debug builds: a subflow marked `Blocked` has a queued segment that does not fit its
    /// free window.
    #[cfg(debug_assertions)]
    fn check_blocked(&self, now: Instant) {
        for i in 0..self.subflows.len() {
            if self.subflows.is_clean(Derived::Blocked, i) && self.queues.bytes(i) > 0 {
                let len = self.queues.front(i).map_or(0, |(_, l, _)| u64::from(l));
                assert!(self.subflows[i].new_data_space(now) < len, "subflow {i} marked blocked");
            }
        }
    }

    /// The upstream scheduler's answer to `get_send` for a segment of `len` bytes when no view
    /// changed since its last call (it would see these views, just brought up to date, and an
    /// empty changed set) and the answer needs no pick (`Upstream::send_unchanged`: the burst goes
    /// on, or every send buffer is full): the second and third decisions of each ACK's drain
    /// in `lia-2path` (two `Queue`s fill the send buffer, then `Wait`), taken without the
    /// `SchedView`, the dispatch and `get_send`'s own prologue. `None`: ask it. Debug and test
    /// builds (the transport crate's release tests too) ask a copy and compare the answer and
    /// the state left.
    #[inline(always)]
    #[cfg_attr(not(any(test, debug_assertions)), allow(unused_variables))]
    pub(super) fn upstream_unchanged(&mut self, now: Instant, len: u32) -> Option<(Verdict, SubflowSet)> {
        // `choose_new` brought every stale view up to date before (an empty `views_changed`
        // then means no snapshot was copied again since the last `get_send`).
        debug_assert!(!self.any_view_stale(), "views current");
        if self.views_changed != 0 {
            return None;
        }
        let AnySched::Upstream(u) = &mut self.sched else { return None };
        #[cfg(any(test, debug_assertions))]
        let asked = u.clone();
        let answer = u.send_unchanged(&self.views, len)?;
        let mut out = SubflowSet::default();
        if let Some(i) = answer {
            out.insert(i);
        }
        let verdict = if answer.is_some() { Verdict::Queue } else { Verdict::Wait };
        #[cfg(any(test, debug_assertions))]
        self.check_upstream_answer(now, len, asked, (verdict, out));
        Some((verdict, out))
    }

    /// Debug builds: `asked` (the upstream scheduler before [`Connection::upstream_unchanged`]
    /// answered for it) asked through `get_send` gives `answer` and the state it left.
    #[cfg(any(test, debug_assertions))]
    fn check_upstream_answer(&self, now: Instant, len: u32, mut asked: Upstream, answer: (Verdict, SubflowSet)) {
        let v = self.new_data_view(len, SubflowSet::default());
        let mut set = SubflowSet::default();
        let seen = asked.get_send(now, &v, &mut set);
        assert_eq!((seen, set), answer, "upstream answer");
        if let AnySched::Upstream(u) = &self.sched {
            assert_eq!(format!("{asked:?}"), format!("{u:?}"), "upstream state");
        }
    }

    /// Moves subflow `i`'s queued segments to the reinjection queue (kept in ascending DSN,
    /// free of duplicates).
    pub(super) fn requeue_for_reinjection(&mut self, i: usize) {
        if self.queues.bytes(i) == 0 {
            return;
        }
        while let Some((dsn, len, _)) = self.pop_queued(i) {
            self.add_reinjection(dsn, len);
        }
        self.subflows.forget(Derived::Fields, i);
    }
}
