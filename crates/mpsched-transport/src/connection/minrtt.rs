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
        #[cfg(debug_assertions)]
        self.check_min_rtt_new_data(now, len as u32, best);
        // As after the scheduler's `get_send` (`choose_new`): it has seen every view.
        self.views_changed = 0;
        Some(best)
    }

    /// Debug builds: the scheduler, asked through its interface about the same views, makes
    /// the same choice as [`Connection::min_rtt_new_data`] (minRTT keeps no state: asking it
    /// changes nothing).
    #[cfg(debug_assertions)]
    fn check_min_rtt_new_data(&mut self, now: Instant, len: u32, best: Option<usize>) {
        use crate::sched::{AnySched, Scheduler, SubflowSet, Verdict};
        let AnySched::MinRtt(sched) = &self.sched else { panic!("minRTT's copy of schedule without minRTT") };
        let mut sched = sched.clone();
        self.finish_views(len, SubflowSet::default());
        let v = self.new_data_view(len, SubflowSet(self.views_changed.into()));
        let mut out = SubflowSet::default();
        let verdict = sched.get_send(now, &v, &mut out);
        let asked = match verdict {
            Verdict::Send => out.first(),
            _ => None,
        };
        assert_eq!(best, asked, "minRTT's choice for new data");
    }
}
