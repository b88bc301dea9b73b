//! The send side: subflow-level output first (handshakes, retransmissions, ACKs, then what
//! waits in the subflows' send queues, connection/queue.rs), then the connection's data in the
//! order of Linux `mptcp_next_segment`: reinjections, redundant copies, new data chosen by the
//! scheduler, and when the peer's window is closed opportunistic retransmission with
//! penalization (`mptcp_rcv_buf_optimization`).

use super::{Connection, Derived, Event, MetaSeg, PathId, Side, Transmit};
use crate::sched::{AnySched, SchedView, Scheduler, SubflowSet, Verdict};
use crate::segment::Segment;
use crate::subflow::SubflowCx;
use crate::time::{Duration, Instant};

impl Connection {
    /// The next segment to send at `now`, `None` when there is nothing more for now. Call until
    /// `None` after every input.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        let mut seg = Segment::default();
        let path = self.poll_transmit_into(now, &mut seg)?;
        Some(Transmit { path, seg })
    }

    /// [`Connection::poll_transmit`] writing the segment into `out` (a driver's packet slot)
    /// and returning its path; `out` is left as it was when there is nothing to send. Plain
    /// TCP's pure ACKs and new data are built in `out` itself: returned by value, a segment
    /// (120 bytes) was copied at each level from the subflow up to the driver's packet.
    pub fn poll_transmit_into(&mut self, now: Instant, out: &mut Segment) -> Option<PathId> {
        if let Some(t) = self.pending.pop_front() {
            return Some(t.write_to(out));
        }
        if self.close.reason.is_some() {
            return None;
        }
        // Subflow-level work first: handshakes, retransmissions, pure ACKs.
        // Subflows found idle and unchanged since are skipped (their poll would find nothing).
        let n = self.subflows.len();
        if n == 1 {
            let mut cx = SubflowCx { conn: &mut self.shared };
            if self.subflows[0].poll_transmit_into(now, &mut cx, out) {
                debug_assert_eq!(self.path0, self.paths[0]);
                return Some(self.path0);
            }
        } else if let Some(path) = self.poll_subflows(now, n, out) {
            return Some(path);
        }
        // The subflows' send queues (`Verdict::Queue`): their own output, as their windows open.
        if self.queued != 0 {
            if let Some(path) = self.send_queued(now, out) {
                return Some(path);
            }
        }
        if let Some(t) = self.poll_data_fin(now) {
            return Some(t.write_to(out));
        }
        if self.parked
            || self.side == Side::Server
                && self.shared.unsent() == 0
                && self.reinject.is_empty()
                && self.reserved.is_empty()
        {
            return None;
        }
        if !self.multipath() && self.reinject.is_empty() && self.reserved.is_empty() {
            return self.schedule_plain(now, out);
        }
        if let AnySched::MinRtt(_) = self.sched {
            return self.schedule_min_rtt(now, out);
        }
        self.schedule::<false>(now, out)
    }

    /// Whether [`Connection::poll_transmit_into`] would return `None` at `now` and change
    /// nothing: a plain-TCP receiver (server side, one subflow) with no data of its own, nothing
    /// queued, no DATA_FIN due, whose subflow is idle ([`Subflow::is_idle`](crate::subflow::Subflow::is_idle)).
    /// Conservative: `false` whenever unsure (a client, several subflows). A few field tests
    /// inlined at the driver instead of a call that walks the same tests: the receiver of
    /// `newreno-10m` ends each of its ~36,000 drives with such a poll (issue 22, thirteenth pass).
    #[inline]
    pub fn nothing_to_send(&self, now: Instant) -> bool {
        self.side == Side::Server
            && self.subflows.len() == 1
            && self.shared.unsent() == 0
            && self.pending.is_empty()
            && self.queued == 0
            && self.reinject.is_empty()
            && self.reserved.is_empty()
            && !self.data_fin_pending()
            && self.subflows[0].is_idle(now)
    }

    /// Subflow-level output of a connection with `n` > 1 subflows, round robin from
    /// `next_poll`. Only subflows not marked idle are visited, taken from a bit mask of them in
    /// the round robin's order (bits from `next_poll` up, then the ones below): the same
    /// subflows in the same order as a loop over every index that skips the marked ones, without
    /// a mark test and an index wrap per subflow (those showed in the profile with 8 subflows).
    /// Polling subflow `i` clears only `i`'s marks, so the mask read once stays exact. The
    /// segment is written into `out` (returned as a `Transmit` it was copied three times).
    #[inline]
    fn poll_subflows(&mut self, now: Instant, n: usize, out: &mut Segment) -> Option<PathId> {
        let unmarked = self.subflows.stale_mask(Derived::Idle);
        if unmarked == 0 {
            return None;
        }
        // `next_poll` < n always (it is set below, and subflows are never removed); the `%`
        // only guards that.
        let start = if self.next_poll < n { self.next_poll } else { self.next_poll % n };
        let below = ((1u16 << start) - 1) as u8;
        for half in [unmarked & !below, unmarked & below] {
            let mut m = half;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                if self.subflows[i].is_idle(now) {
                    self.subflows.set_clean(Derived::Idle, i);
                    continue;
                }
                let mut cx = SubflowCx { conn: &mut self.shared };
                if self.subflows[i].poll_busy_into(now, &mut cx, out) {
                    self.next_poll = if i + 1 == n { 0 } else { i + 1 };
                    // Idle again after what it sent (the receiver's ACK: nothing else due):
                    // marked now, so the drain's next poll, the one that finds nothing, skips
                    // its test (the poll borrowed it mutably and cleared its marks). The mark
                    // vouches for the subflow as it is, unchanged since (`lia-2path` 510.80 ->
                    // 508.83 M, `edar-handoff` -0.44 %, `subflows-8` -0.34 %, plain build).
                    if self.subflows[i].is_idle(now) {
                        self.subflows.set_clean(Derived::Idle, i);
                    }
                    return Some(self.paths[i]);
                }
            }
        }
        None
    }

    /// Whether subflow `i` is usable and its free congestion window for new data. Linux
    /// `mptcp_is_def_unavailable`: established, not pre-established (join's 4th ACK, RFC 8684
    /// §3.2), not potentially failed. The subflow's own send window
    /// ([`SubflowConfig::subflow_windows`](crate::SubflowConfig::subflow_windows)) is not part of
    /// it: as in v0.95's `get_available_subflow(.., false)`, the chosen subflow keeps to it when
    /// it sends ([`Connection::beyond_subflow_window`]), and the upstream scheduler queues on
    /// the subflow instead (connection/queue.rs).
    #[inline]
    pub(super) fn usable_space(&mut self, now: Instant, i: usize) -> (bool, u64) {
        if !self.subflow_usable(i) {
            return (false, 0);
        }
        (true, self.subflows.new_data_space(i, now))
    }

    /// Whether `len` bytes of new data at `dsn` exceed the own send window of subflow `i`
    /// (`tcp_snd_wnd_test` under [`crate::SubflowConfig::subflow_windows`]): then the chosen
    /// subflow cannot send them yet, and the connection waits.
    #[inline]
    pub(super) fn beyond_subflow_window(&self, i: usize, dsn: u64, len: u32) -> bool {
        self.sf_cfg.subflow_windows && len as u64 > self.subflows[i].snd_wnd_room(self.wnd_right.saturating_sub(dsn))
    }

    /// Whether subflow `i` can carry data (Linux `mptcp_is_def_unavailable` negated):
    /// established, not pre-established (the join's 4th ACK, RFC 8684 §3.2), not potentially
    /// failed, its path up. What schedulers see as
    /// [`SchedSubflow::usable`](crate::sched::SchedSubflow::usable) and observations as the path
    /// mask. False for an `i` out of range.
    #[inline]
    pub fn subflow_usable(&self, i: usize) -> bool {
        let (Some(sf), Some(m)) = (self.subflows.get(i), self.meta.get(i)) else { return false };
        sf.is_established() && !sf.is_pre_established() && !m.pf && m.path_up
    }

    /// Bytes the application has queued in the send buffer and no subflow has taken yet.
    /// Linux autotunes the send buffer to about twice the sum of the subflows' windows
    /// (tcp_sndbuf_expand), between 16 KiB and tcp_wmem[2] = 4 MiB; an application that writes
    /// more waits. ECF's k is this figure, not the whole file.
    fn queued_unsent(&self) -> u64 {
        let sum_cwnd: u64 = self.views.iter().map(|v| v.info.cwnd).sum();
        let sndbuf = (2 * sum_cwnd).clamp(16 << 10, 4 << 20);
        let in_flight = self.shared.snd_next_dsn - self.data_una;
        self.shared.unsent().min(sndbuf.saturating_sub(in_flight))
    }

    /// The scheduler's own deadline passed (a policy's decision boundary): it is shown the
    /// connection as it is, with no segment waiting.
    pub(super) fn on_scheduler_timeout(&mut self, now: Instant) {
        if self.sched.poll_timeout().is_none_or(|t| t > now) {
            return;
        }
        self.build_views(now, 0, SubflowSet::default());
        self.refresh_live_info();
        let v = SchedView {
            subflows: &self.views,
            conn: &self.info,
            seg_len: 0,
            reinjection: false,
            unsent: self.queued_unsent(),
            send_window: self.wnd_right.saturating_sub(self.shared.snd_next_dsn),
            preference: self.preference.as_deref(),
            changed: SubflowSet(self.views_changed.into()),
        };
        self.sched.handle_timeout(now, &v);
    }

    /// Asks the scheduler about a segment of `len` bytes (views already built). The live
    /// counters and the unsent figure are computed only for a scheduler that reads them
    /// (`reads_conn`, [`Scheduler::reads_conn`] as the caller's `shape` says: asked again here
    /// it was a second dispatch over the variants per decision; the upstream scheduler, asked
    /// about most segments of the multipath benchmarks, does not).
    ///
    /// Always inlined (into `choose_new` and the reinjection step): out of line, the call, its
    /// saved registers and the `(Verdict, SubflowSet)` returned through memory cost ~35
    /// instructions per decision (`lia-2path` 655.60 -> 646.65 M, `subflows-8` 896.12 ->
    /// 885.49 M, `edar-handoff` 240.50 -> 237.14 M; issue 22, fifteenth pass). `#[inline]` alone
    /// left it out of line.
    #[inline(always)]
    fn ask_scheduler(&mut self, now: Instant, len: u32, reinjection: bool, reads_conn: bool) -> (Verdict, SubflowSet) {
        if reads_conn {
            self.refresh_live_info();
        }
        let unsent = if reads_conn { self.queued_unsent() } else { 0 };
        let v = SchedView {
            subflows: &self.views,
            conn: &self.info,
            seg_len: len,
            reinjection,
            unsent,
            send_window: self.wnd_right.saturating_sub(self.shared.snd_next_dsn),
            preference: self.preference.as_deref(),
            changed: SubflowSet(self.views_changed.into()),
        };
        let mut out = SubflowSet::default();
        let verdict = if reinjection {
            self.sched.get_retrans(now, &v, &mut out)
        } else {
            self.sched.get_send(now, &v, &mut out)
        };
        (verdict, out)
    }

    /// The index in the retransmission queue of the segment that starts at `dsn`, if it is
    /// there. New data is at the back: checked first. Then the index `dsn` would have if every
    /// segment before it were a full one (in bulk transfers they are): a segment sent from a
    /// subflow's send queue has those queued after it behind it, and the binary search for it
    /// was over 130 instructions per segment sent (`lia-2path`). Then the few after the guess,
    /// then the search; each finds the one segment with that DSN (ascending, distinct).
    ///
    /// The last segment's test is inlined: new data sent at once (`schedule_new`) is always the
    /// one pushed last, and the call for it cost ~21 instructions a segment in `edar-handoff`
    /// (63,989 calls).
    #[inline(always)]
    fn carriers_of(&self, dsn: u64) -> Option<usize> {
        let k = self.sent.len().checked_sub(1)?;
        if self.sent[k].dsn == dsn {
            return Some(k);
        }
        self.carriers_before_last(dsn)
    }

    /// [`Self::carriers_of`] when the segment is not the last one.
    #[inline(never)]
    fn carriers_before_last(&self, dsn: u64) -> Option<usize> {
        let first = self.sent.front()?;
        let guess = (dsn.checked_sub(first.dsn)? / u64::from(self.subflows[0].mss().max(1))) as usize;
        match self.sent.get(guess) {
            Some(m) if m.dsn == dsn => Some(guess),
            _ => self.carriers_after(guess, dsn),
        }
    }

    /// [`Self::carriers_of`] when the guess missed. Segments no longer than that MSS put the
    /// index after the guess; the short segments before it (Nagle, a window's edge) put it a few
    /// places further on (1 to 9 in `subflows-8`, where the guess missed 95 % of the lookups).
    /// Out of line: the multipath runs without short segments never get here, and the loop
    /// inlined into `transmit_on` (now `transmit_on_into`) cost `lia-2path` 7 M instructions.
    #[inline(never)]
    fn carriers_after(&self, guess: usize, dsn: u64) -> Option<usize> {
        for k in guess.saturating_add(1)..self.sent.len().min(guess.saturating_add(12)) {
            let m = &self.sent[k];
            if m.dsn == dsn {
                return Some(k);
            }
            if m.dsn > dsn {
                break; // before the guess (a segment longer than that MSS), or not there
            }
        }
        let k = self.sent.partition_point(|m| m.dsn < dsn);
        (k < self.sent.len() && self.sent[k].dsn == dsn).then_some(k)
    }

    /// Sends `len` bytes at `dsn` on subflow `i`, taking them now: under per-subflow windows the
    /// subflow's send window is raised to the connection's window beyond them
    /// (`mptcp_check_allowed_size`).
    pub(super) fn send_on(&mut self, now: Instant, i: usize, dsn: u64, len: u32) -> Transmit {
        let mut seg = Segment::default();
        let path = self.send_on_into(now, i, dsn, len, &mut seg);
        Transmit { path, seg }
    }

    /// [`Connection::send_on`] writing the segment into `out`; returns its path.
    #[inline]
    fn send_on_into(&mut self, now: Instant, i: usize, dsn: u64, len: u32, out: &mut Segment) -> PathId {
        let raise = self.sf_cfg.subflow_windows.then(|| self.wnd_right.saturating_sub(dsn));
        self.transmit_on_into(now, i, dsn, len, raise, None, out)
    }

    /// Puts `len` bytes at `dsn` on the wire on subflow `i`, after raising its send window to
    /// `raise` if given. The subflow's view snapshot, when current before, is patched rather
    /// than left to be copied again at the next decision
    /// ([`crate::subflow::Subflow::info_after_send`]): a decision usually follows a send on the
    /// same subflow, and the copy was most of a view's cost.
    /// The segment is written into `out` (every field), and its path returned. `pos`: where its
    /// retransmission-queue entry was pushed, when known (a segment from a subflow's send
    /// queue): found from there, not searched by DSN.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn transmit_on_into(
        &mut self,
        now: Instant,
        i: usize,
        dsn: u64,
        len: u32,
        raise: Option<u64>,
        pos: Option<u32>,
        out: &mut Segment,
    ) -> PathId {
        let marks = self.subflows.marks(i);
        let view_current = marks & Derived::View.bit() != 0;
        if let Some(room) = raise {
            self.subflows.raise_snd_wnd(i, room);
        }
        let mut cx = SubflowCx { conn: &mut self.shared };
        self.subflows[i].send_new_into(now, dsn, len, &mut cx, out);
        if view_current {
            self.subflows[i].info_after_send(&mut self.views[i].info);
            self.subflows.set_clean(Derived::View, i);
            #[cfg(debug_assertions)]
            self.check_snapshot(i);
        }
        if self.multipath() {
            let at = pos.and_then(|p| self.sent_index_of(p, dsn));
            debug_assert!(at.is_none() || at == self.carriers_of(dsn), "position of {dsn}");
            if let Some(k) = at.or_else(|| self.carriers_of(dsn)) {
                self.sent[k].carried.insert(i);
            }
            // A usable view's current fields imply a current cached free window
            // (`refresh_view_fields`): both are patched. (A segment from a send queue is
            // followed by the queue's own bookkeeping: left to the next decision.)
            if marks & Derived::Fields.bit() != 0 && pos.is_none() && self.views[i].usable {
                self.fields_after_send(now, i, len);
            }
            return self.paths[i];
        }
        // Plain TCP: its one path is `path0`, in the connection's hot lines (the `paths`
        // buffer is a cache line of its own per packet with many flows).
        debug_assert_eq!((i, self.path0), (0, self.paths[0]));
        self.path0
    }

    /// More than one subflow: the connection-level retransmission queue is needed (reinjection,
    /// opportunistic retransmission, redundant scheduling). Plain TCP skips that bookkeeping.
    #[inline]
    fn multipath(&self) -> bool {
        self.subflows.len() > 1
    }

    /// New data, reinjections and reserved ranges of a connection that is not plain TCP (plain
    /// TCP goes to [`Connection::schedule_plain`] before this).
    /// The segment is written into `out` (see [`Connection::poll_transmit_into`]).
    /// `MIN_RTT`: the scheduler is the built-in minRTT ([`Connection::schedule_min_rtt`]).
    #[inline]
    fn schedule<const MIN_RTT: bool>(&mut self, now: Instant, out: &mut Segment) -> Option<PathId> {
        let mss = self.subflows[0].mss();
        // 1. Reinjections (Linux `__mptcp_next_segment`: the reinject queue first).
        if MIN_RTT {
            if !self.reinject.is_empty() {
                if let Some(r) = self.reinjections_cold(now, out) {
                    return r;
                }
            }
        } else if let Some(r) = self.reinjections(now, out) {
            return r;
        }
        // 2. Redundant mode (Linux mptcp_redundant.c): each subflow catches up on what it has not
        // carried.
        debug_assert!(!MIN_RTT || !self.sched.redundant());
        if !MIN_RTT && self.sched.redundant() && self.subflows.len() > 1 {
            return self.schedule_redundant(now, mss).map(|t| t.write_to(out));
        }
        // 3. Ranges a scheduler reserved for one subflow (`Verdict::SendAhead`), before new data.
        if !self.reserved.is_empty() {
            if let Some(t) = self.send_reserved(now) {
                return Some(t.write_to(out));
            }
        }
        // 4. New data.
        self.schedule_new::<MIN_RTT>(now, mss, out)
    }

    /// Step 1 of [`Connection::schedule`]: `Some(result)` when it decided the poll, `None` when
    /// the reinjection queue is (now) empty.
    #[inline(always)]
    fn reinjections(&mut self, now: Instant, out: &mut Segment) -> Option<Option<PathId>> {
        while let Some(&(dsn, len)) = self.reinject.front() {
            if dsn + len as u64 <= self.data_una {
                self.reinject.pop_front();
                continue;
            }
            let carried = self.carriers_of(dsn).map(|k| self.sent[k].carried).unwrap_or_default();
            if !self.build_views_if_space(now, len, carried) {
                return Some(None);
            }
            let (verdict, chosen) = self.ask_scheduler(now, len, true, self.sched.shape().reads_conn);
            return Some(match (verdict, chosen.first()) {
                (Verdict::Send, Some(i)) if self.views[i].available => {
                    self.reinject.pop_front();
                    self.info.reinjected_bytes += len as u64;
                    Some(self.send_on_into(now, i, dsn, len, out))
                }
                (Verdict::Ask, _) => self.park(now).map(|t| t.write_to(out)),
                _ => None,
            });
        }
        None
    }

    /// [`Connection::reinjections`] out of line, for minRTT's copy of `schedule`, called only
    /// when something waits for reinjection: inlined, the loop (with its scheduler query) sat in
    /// the hot `schedule_min_rtt` for nothing on most polls (`edar-handoff` 187.28 -> 187.11 M
    /// instructions, plain build; the upstream copy keeps it inlined, unchanged).
    #[inline(never)]
    fn reinjections_cold(&mut self, now: Instant, out: &mut Segment) -> Option<Option<PathId>> {
        self.reinjections(now, out)
    }

    /// [`Connection::schedule`] for the built-in minRTT (the default scheduler, e.g.
    /// `edar-handoff`'s), whose choice for new data the connection makes itself from the views
    /// (connection/minrtt.rs). A copy of its own, out of line: the minRTT branch inside the
    /// one `schedule` inlined into `poll_transmit_into` moved the upstream scheduler's code
    /// and cost `lia-2path` +0.3 to +0.6 % and `subflows-8` +0.4 %.
    #[inline(never)]
    fn schedule_min_rtt(&mut self, now: Instant, out: &mut Segment) -> Option<PathId> {
        self.schedule::<true>(now, out)
    }

    /// New data: a segment on the subflow the scheduler picks. Segments it queues on a subflow
    /// ([`Verdict::Queue`]) take their DSN one after the other until one can leave at once, the
    /// scheduler waits or the peer's window is used up (`__mptcp_push_pending` fills the
    /// subflows' write queues in one pass).
    fn schedule_new<const MIN_RTT: bool>(&mut self, now: Instant, mss: u32, out: &mut Segment) -> Option<PathId> {
        loop {
            let unsent = self.shared.unsent();
            if unsent == 0 {
                self.mark_app_limited();
                return None;
            }
            let len = (mss as u64).min(unsent) as u32;
            let (s, queue) = match self.choose_new::<MIN_RTT>(now, len, mss) {
                NewData::Send(s) => (s, false),
                NewData::Queue(s) => (s, true),
                NewData::Done(t) => return t.map(|t| t.write_to(out)),
            };
            let dsn = self.shared.snd_next_dsn;
            if !queue && self.beyond_subflow_window(s, dsn, len) {
                self.blocked_since.get_or_insert(now);
                return None;
            }
            // Data queued on a subflow is cut at the peer's window (`mptcp_check_allowed_size`
            // in `mptcp_sendmsg_frag`): the segment at its edge can be short.
            let len = if queue { len.min(self.wnd_right.saturating_sub(dsn).min(u32::MAX as u64) as u32) } else { len };
            if len == 0 || dsn + len as u64 > self.wnd_right {
                return self.window_limited(now, s).map(|t| t.write_to(out));
            }
            if MIN_RTT {
                self.take_new(now, s, dsn, len);
            } else {
                self.take_new_inline(now, s, dsn, len);
            }
            if !queue {
                return Some(self.send_on_into(now, s, dsn, len, out));
            }
            self.enqueue(s, dsn, len);
            // Most often the subflow's queue already held segments that do not fit its window
            // (`Blocked`): `send_queued_on` would answer `None` at once.
            if self.subflows.is_clean(Derived::Blocked, s) {
                continue;
            }
            if let Some(path) = self.send_queued_on(now, s, out) {
                return Some(path);
            }
        }
    }

    /// [`Connection::schedule_new`] for plain TCP (one subflow, nothing to reinject or sent
    /// ahead): no scheduler to ask and no retransmission queue, so the segment goes straight
    /// to subflow 0. The same steps in the same order as the general path, written out so that
    /// a plain-TCP segment does not pass through `choose_new`'s verdict (an enum carrying a whole
    /// `Transmit`, copied on the way out) and `take_new`'s multipath branch. (`take_new`'s
    /// plain-TCP lines stay written out here too: one helper shared by both changed LLVM's
    /// inlining and cost `lia-2path` 4.5 M instructions, measured.) `len` > 0: there is unsent
    /// data. A hint, not `#[inline(always)]`: on the product (profile-guided) build the forced
    /// inline cost the single-path runs (`newreno-10m` 71.20 → 71.68 M, `flows-1` 308.73 →
    /// 311.11 M, measured at the perf22u merge); the plain build does better with it (+1.6 %
    /// on `newreno-10m` without), but the product build is the one that ships.
    #[inline]
    fn schedule_plain(&mut self, now: Instant, out: &mut Segment) -> Option<PathId> {
        let unsent = self.shared.unsent();
        if unsent == 0 {
            self.mark_app_limited();
            return None;
        }
        let sf = &self.subflows[0];
        let len = (sf.mss() as u64).min(unsent) as u32;
        if !sf.is_established() || sf.new_data_space(now) < len as u64 {
            return None;
        }
        let dsn = self.shared.snd_next_dsn;
        // `beyond_subflow_window(0, ..)` on the subflow at hand (no second bounds check).
        if self.sf_cfg.subflow_windows && len as u64 > sf.snd_wnd_room(self.wnd_right.saturating_sub(dsn)) {
            self.blocked_since.get_or_insert(now);
            return None;
        }
        if dsn + len as u64 > self.wnd_right {
            return self.window_limited(now, 0).map(|t| t.write_to(out));
        }
        if let Some(t) = self.blocked_since.take() {
            self.info.send_blocked_seconds += now.saturating_duration_since(t).as_secs_f64();
        }
        self.shared.snd_next_dsn += len as u64;
        let sf = &self.subflows[0];
        self.meta[0].slots.record(sf.cwnd(), sf.srtt().0);
        Some(self.send_on_into(now, 0, dsn, len, out))
    }

    /// Linux `tcp_rate_check_app_limited`: nothing to send, judged per subflow. Only
    /// rate-sampling subflows have something to mark (borrowing the others mutably would
    /// discard what the connection derived from them).
    fn mark_app_limited(&mut self) {
        for i in 0..self.subflows.len() {
            if self.subflows[i].rate_cc() {
                self.subflows[i].mark_app_limited();
            }
        }
    }

    /// Which subflow takes a new segment of `len` bytes, and how; `Done` when none does now.
    fn choose_new<const MIN_RTT: bool>(&mut self, now: Instant, len: u32, mss: u32) -> NewData {
        if MIN_RTT {
            // minRTT (the default scheduler): its choice made here from the views
            // (connection/minrtt.rs).
            return match self.min_rtt_new_data(now, len) {
                None => NewData::Done(None),
                Some(Some(s)) => NewData::Send(s),
                Some(None) => {
                    self.starve(len);
                    NewData::Done(None)
                }
            };
        }
        if self.subflows.len() == 1 {
            // Plain TCP: no scheduling decision to make.
            let sf = &self.subflows[0];
            let ok = sf.is_established() && sf.new_data_space(now) >= len as u64;
            return if ok { NewData::Send(0) } else { NewData::Done(None) };
        }
        // A scheduler that queues is asked even when no subflow has window room. `available`
        // and `carried` are written only for a scheduler that reads them (the upstream one does
        // not: ~8 instructions per view and decision); the verdict is checked with `fits`.
        let shape = self.sched.shape();
        if shape.queues {
            if shape.reads_fit || self.any_view_stale() {
                self.build_queued_views(now, len, shape);
            }
        } else if !self.build_views_if_space(now, len, SubflowSet::default()) {
            return NewData::Done(None);
        }
        let unchanged = if shape.queues { self.upstream_unchanged(now, len) } else { None };
        let (verdict, out) = match unchanged {
            Some(answer) => answer,
            None => self.ask_scheduler(now, len, false, shape.reads_conn),
        };
        // The scheduler's `get_send` has seen every view as it is now.
        self.views_changed = 0;
        match (verdict, out.first()) {
            (Verdict::Send, Some(s)) if self.fits(s, len) => NewData::Send(s),
            (Verdict::Queue, Some(s)) if self.views[s].usable => NewData::Queue(s),
            (Verdict::SendAhead { owner, gap }, Some(s)) if self.fits(s, len) && gap > 0 => {
                NewData::Done(self.send_ahead(now, s, owner as usize, gap, mss))
            }
            (Verdict::SendAhead { .. }, Some(s)) if self.fits(s, len) => NewData::Send(s),
            (Verdict::Ask, _) => NewData::Done(self.park(now)),
            _ => {
                self.starve(len);
                NewData::Done(None)
            }
        }
    }

    /// The scheduler starves the subflows that had room for `len` bytes: for their
    /// delivery-rate samples they are application-limited (rl-baselines.md §6.2). Inlined as
    /// the loop was in `choose_new`: out of line it cost `lia-2path` +0.6 % (84,000 upstream
    /// `Wait`s).
    #[inline(always)]
    fn starve(&mut self, len: u32) {
        for i in 0..self.subflows.len() {
            if self.fits(i, len) && self.subflows[i].rate_cc() {
                self.subflows[i].mark_app_limited();
            }
        }
    }

    /// The peer's window has no room for the next segment, chosen for subflow `s` (Linux
    /// `mptcp_next_segment` → `mptcp_rcv_buf_optimization`, penal = 1): opportunistic
    /// retransmission and penalization, and a window probe when nothing is in flight (nor
    /// queued: `mptcp_sendmsg_frag` probes only when all data is acknowledged).
    fn window_limited(&mut self, now: Instant, s: usize) -> Option<Transmit> {
        self.blocked_since.get_or_insert(now);
        if self.queued == 0 && self.subflows.iter().all(|sf| sf.outstanding() == 0) {
            self.subflows[s].arm_probe(now);
        }
        if self.sched.opportunistic_retransmission() && self.subflows.len() > 1 {
            return self.opportunistic(now, s);
        }
        None
    }

    /// [`Connection::take_new_inline`] for minRTT's copy of `schedule_new`, inlined or not as
    /// the compiler decides (perf20e: forced inline there it cost `edar-handoff` +0.09 to
    /// +0.13 %; forced out of line, the profile-guided build's `edar-handoff` +0.7 %).
    fn take_new(&mut self, now: Instant, s: usize, dsn: u64, len: u32) {
        self.take_new_inline(now, s, dsn, len)
    }

    /// Takes `len` bytes of new data at `dsn` for subflow `s`: the next new DSN moves past
    /// them, and a multipath connection keeps them for reinjection until DATA_ACKed. Inlined
    /// into the upstream copy of `schedule_new` (166,685 calls in `lia-2path`, ~70
    /// instructions each out of line).
    #[inline(always)]
    fn take_new_inline(&mut self, now: Instant, s: usize, dsn: u64, len: u32) {
        if let Some(t) = self.blocked_since.take() {
            self.info.send_blocked_seconds += now.saturating_duration_since(t).as_secs_f64();
        }
        self.shared.snd_next_dsn += len as u64;
        if self.multipath() {
            self.push_sent(MetaSeg { dsn, len, carried: SubflowSet::default() });
            // The state the scheduler chose from (views are built before asking it).
            let info = &self.views[s].info;
            self.meta[s].slots.record(info.cwnd, info.srtt.0);
        } else {
            // Two accessors, not a `sibling_info` snapshot (which also asks the controller for
            // its shared state) per segment.
            let sf = &self.subflows[0];
            self.meta[0].slots.record(sf.cwnd(), sf.srtt().0);
        }
    }

    fn park(&mut self, now: Instant) -> Option<Transmit> {
        self.parked = true;
        self.parked_at = Some(now);
        self.events.push_back(Event::DecisionNeeded);
        None
    }

    /// Opportunistic retransmission and penalization (Linux `mptcp_rcv_buf_optimization`; Raiciu et al. NSDI 2012 §4.2) on subflow `s`.
    fn opportunistic(&mut self, now: Instant, s: usize) -> Option<Transmit> {
        let h = *self.sent.front()?;
        if h.carried.is_empty() {
            return None;
        }
        let srtt_s = self.views[s].info.srtt;
        let due = self.meta[s].last_penalization.is_none_or(|t| now.saturating_duration_since(t) >= srtt_s);
        if due {
            let all = self.sched.penalize_all_carriers();
            for o in (0..self.subflows.len()).filter(|&o| o != s && h.carried.contains(o)) {
                let vo = self.views[o].info;
                // Read live: the views' snapshots may hold their core only (`copy_snapshots`).
                // The decision that led here brought every view up to date and `o` is unchanged
                // since (its `View` mark is set), so this is the value a whole snapshot holds.
                let in_recovery = self.subflows[o].in_recovery();
                debug_assert!(self.subflows.is_clean(Derived::View, o), "view {o} current");
                debug_assert!(!self.sched.shape().full_info || in_recovery == vo.in_recovery);
                if srtt_s < vo.srtt && !in_recovery {
                    self.subflows[o].penalize();
                    self.info.penalizations += 1;
                    self.meta[s].last_penalization = Some(now);
                }
                if !all {
                    break;
                }
            }
            self.sched.on_hol_event();
        }
        if h.carried.contains(s) {
            return None;
        }
        let mut retransmit = false;
        for o in (0..self.subflows.len()).filter(|&o| o != s && h.carried.contains(o)) {
            let vo = self.views[o].info;
            if vo.cwnd <= 4 * self.subflows[o].mss() as u64 {
                retransmit = true;
                break;
            } else if Duration(4 * srtt_s.0) >= vo.srtt {
                retransmit = false;
                break;
            } else {
                retransmit = true;
            }
        }
        if retransmit && self.views[s].space >= h.len as u64 {
            self.info.opportunistic_retransmissions += 1;
            return Some(self.send_on(now, s, h.dsn, h.len));
        }
        None
    }
}

/// What [`Connection::choose_new`] decided for a new segment.
enum NewData {
    /// Send it on this subflow now.
    Send(usize),
    /// Put it in this subflow's send queue ([`Verdict::Queue`]).
    Queue(usize),
    /// Nothing taken: return this from `poll_transmit` (a segment sent ahead, or none).
    Done(Option<Transmit>),
}
