//! minRTT's choice for a segment of new data, made by the connection from its views instead of
//! through the scheduler interface (issue 22, nineteenth pass).
//!
//! minRTT ([`crate::sched::minrtt`]) is the default scheduler (and the `ns3` profile's, e.g.
//! `edar-handoff`), stateless, and its `get_send` reads only `usable`, `available`, `backup`
//! and the snapshot's srtt of each view. Asked through [`crate::sched::Scheduler`] a decision
//! paid for what no minRTT decision reads: `available` and `carried` written into every view
//! (`finish_views`), a [`crate::sched::SchedView`] built (send window, preference, changed set),
//! three dispatches over the scheduler variants (`shape`, `get_send`), the out-of-line
//! `SchedView::min_rtt_in` (~71 instructions a decision with two subflows) and the verdict
//! returned through memory and matched again.

use super::views::fits;
use super::{Connection, Derived};
use crate::time::Instant;

impl Connection {
    /// minRTT's choice for new data of `len` bytes, Linux `get_available_subflow` without a
    /// carriers' mask ([`crate::sched::SchedView::min_rtt`] for a segment that is not a
    /// reinjection): the active subflow with room and the smallest srtt (ties: the lower
    /// index); none (`Some(None)`, the scheduler's `Wait`) when an active subflow is usable but
    /// only busy; else the backup subflow with room and the smallest srtt. `None` when no
    /// usable subflow has room: the scheduler is not asked then and the snapshots stay as they
    /// are (as [`Connection::build_views_if_space`] leaves them).
    ///
    /// The views are brought up to date as for an asked scheduler (their fields, then the core
    /// of every changed snapshot, which `take_new` and opportunistic retransmission read), but
    /// `available` and `carried` are not written: nothing reads them before the next decision
    /// through the scheduler interface, which writes them first (`finish_views`). Debug builds
    /// ask the scheduler as well and compare.
    #[inline(always)]
    pub(super) fn min_rtt_new_data(&mut self, now: Instant, len: u32) -> Option<Option<usize>> {
        // `refresh_view_fields` with the rewrite inlined: this copy of `schedule` is out of line
        // and minRTT's alone, so the other schedulers' code is untouched. The out-of-line
        // `refresh_stale_view_fields` (49,974 calls in `edar-handoff`, ~172 instructions each)
        // paid a call, its saved registers and spills: 188.43 -> 187.28 M instructions
        // (-0.61 %, plain build; issue 22, twentieth pass).
        let stale = self.subflows.stale_mask(Derived::Fields);
        if stale != 0 || self.views.len() != self.subflows.len() {
            self.rewrite_view_fields(now, stale);
        }
        #[cfg(debug_assertions)]
        self.check_view_fields(now);
        let len = u64::from(len);
        // Bit i: view i usable with room (`fit`), the same among the active ones, and whether
        // an active one is usable without room.
        let (mut fit, mut fit_active, mut busy_active) = (0u8, 0u8, false);
        for (i, v) in self.views.iter().enumerate() {
            let room = fits(v, len);
            let active = v.usable & !v.backup;
            fit |= (room as u8) << i;
            fit_active |= ((room & active) as u8) << i;
            busy_active |= active & !room;
        }
        if fit == 0 {
            // Every view's fields are current unless a mark is still cleared (then the next
            // poll does not take the shortcut): no view has room for `len` bytes or more.
            self.no_room_end = self.shared.snd_next_dsn + len;
            return None;
        }
        self.copy_core_snapshots();
        let mut cands = if fit_active != 0 || busy_active { fit_active } else { fit };
        let mut best = None::<usize>;
        while cands != 0 {
            let i = cands.trailing_zeros() as usize;
            cands &= cands - 1;
            if best.is_none_or(|b| self.views[i].info.srtt < self.views[b].info.srtt) {
                best = Some(i);
            }
        }
        // No other view has room for `len` bytes or more: completed after the send on `best`
        // (`min_rtt_room_after_send`), reset when the segment does not leave.
        if let Some(b) = best {
            if fit & !(1u8 << b) == 0 {
                self.no_room_end = len;
            }
        }
        #[cfg(debug_assertions)]
        self.check_min_rtt_new_data(now, len as u32, best);
        // As after the scheduler's `get_send` (`choose_new`): it has seen every view.
        self.views_changed = 0;
        Some(best)
    }

    /// After a segment of `len` bytes of new data left on subflow `s`, chosen when no other
    /// view had room for `len` bytes (`no_room_end` holds `len` then): view `s`'s room (patched
    /// by `fields_after_send`) is added, so that the sender's next poll, usually its last of the
    /// drive, is answered by [`Connection::min_rtt_no_room`] without the call to
    /// `schedule_min_rtt`. Only when that view has no room for a full segment: the next
    /// segment is at most the MSS long.
    #[inline(always)]
    pub(super) fn min_rtt_room_after_send(&mut self, s: usize, len: u32, mss: u32) {
        if self.no_room_end != u64::MAX {
            debug_assert_eq!(self.no_room_end, u64::from(len));
            let space = self.views[s].space;
            let from = u64::from(len).max(space + 1);
            self.no_room_end = if space < u64::from(mss) { self.shared.snd_next_dsn + from } else { u64::MAX };
        }
    }

    /// The sender's poll (the caller has checked that the data written ends at `no_room_end`
    /// or beyond) would find no room: every view's fields are still current (and nothing waits
    /// for reinjection or in a reserved range: queuing either resets `no_room_end`), so
    /// `schedule_min_rtt` would return `None` at once and change nothing. Exact, not complete:
    /// `false` sends the poll the long way. Debug builds check the long way's premises whenever
    /// it is `true`.
    ///
    /// In `edar-handoff` 23,072 of the 32,341 polls that find no room skip the out-of-line
    /// `schedule_min_rtt` this way (the others find a view stale: an ACK arrived, or the pacing
    /// gap is open): 187.11 -> 186.71 M instructions (-0.21 %, plain build; issue 22, twentieth
    /// pass). The threshold is a DSN compared with the end of the written data (one load and
    /// a compare on every minRTT poll); the mark test only when that holds. A first version
    /// compared the unsent bytes with a length and tested the reinjection and reserved queues
    /// here too: LLVM computed the queues' emptiness above the plain-TCP branch, on every
    /// poll, and `edar-handoff` rose instead (187.11 -> 187.87 M).
    #[inline(always)]
    pub(super) fn min_rtt_no_room(&self, now: Instant) -> bool {
        // A reinjection or a reserved range resets `no_room_end` when it is queued.
        let skip = self.subflows.stale_mask(Derived::Fields) == 0;
        #[cfg(debug_assertions)]
        if skip {
            self.check_min_rtt_no_room(now);
        }
        let _ = now;
        skip
    }

    /// Tests: whether the sender's poll would take minRTT's no-room shortcut now (the state
    /// [`Connection::min_rtt_no_room`] tests; the steps before it aside), checked with
    /// `check_min_rtt_no_room` when it would.
    #[cfg(test)]
    pub(super) fn min_rtt_shortcut_checked(&self, now: Instant) -> bool {
        let minrtt = matches!(self.sched, crate::sched::AnySched::MinRtt(_));
        let take = minrtt && self.shared.snd_end_dsn >= self.no_room_end && self.min_rtt_no_room(now);
        if take {
            self.check_min_rtt_no_room(now);
        }
        take
    }

    /// Debug builds (and tests): what `schedule_min_rtt` computes first says there is nothing
    /// to send: nothing to reinject or reserved, unsent data, every view's fields current, and
    /// no view with room for the segment it would be asked about.
    #[cfg(any(debug_assertions, test))]
    fn check_min_rtt_no_room(&self, now: Instant) {
        assert!(self.reinject.is_empty() && self.reserved.is_empty());
        assert_eq!(self.views.len(), self.subflows.len());
        self.check_view_fields(now);
        let unsent = self.shared.unsent();
        let len = u64::from(self.subflows[0].mss()).min(unsent);
        let end = self.shared.snd_next_dsn + len;
        assert!(unsent > 0 && self.no_room_end <= end, "minRTT's no-room shortcut: {len}");
        assert!(self.views.iter().all(|v| !fits(v, len)), "minRTT's no-room shortcut: a view has room");
    }

    /// Debug builds: the scheduler, asked through its interface about the same views, makes
    /// the same choice as [`Connection::min_rtt_new_data`] (minRTT keeps no state: asking it
    /// changes nothing).
    #[cfg(debug_assertions)]
    fn check_min_rtt_new_data(&mut self, now: Instant, len: u32, best: Option<usize>) {
        use crate::sched::{SchedView, Scheduler, SubflowSet, Verdict};
        debug_assert!(matches!(self.sched, crate::sched::AnySched::MinRtt(_)));
        self.finish_views(len, SubflowSet::default());
        let v = SchedView {
            subflows: &self.views,
            conn: &self.info,
            seg_len: len,
            reinjection: false,
            unsent: 0,
            send_window: self.wnd_right.saturating_sub(self.shared.snd_next_dsn),
            preference: self.preference.as_deref(),
            changed: SubflowSet(self.views_changed.into()),
        };
        let mut out = SubflowSet::default();
        let verdict = self.sched.get_send(now, &v, &mut out);
        let asked = match verdict {
            Verdict::Send => out.first(),
            _ => None,
        };
        assert_eq!(best, asked, "minRTT's choice for new data");
    }
}
