//! The scheduler's views of the subflows ([`SchedSubflow`]), built before it is asked: the
//! fields that do not depend on the segment (`refresh_view_fields`, only for subflows whose
//! `Fields` mark is cleared), the [`crate::SubflowInfo`] snapshots of changed subflows
//! (`copy_snapshots`), and per segment `available` / `carried` (`finish_views`). Moved out of
//! connection/send.rs (issue 22, fifteenth pass) to keep that module under ~800 lines.

use super::{Connection, Derived};
use crate::sched::{SchedShape, SchedSubflow, Scheduler, SubflowSet};
use crate::time::Instant;

impl Connection {
    /// The scheduler's view for a new segment of `len` bytes as the debug checks ask it (the
    /// connection's counters not refreshed, no queued bytes counted): the hot path builds its
    /// own in `ask_scheduler`.
    #[cfg(any(test, debug_assertions))]
    pub(super) fn new_data_view(&self, len: u32, changed: SubflowSet) -> crate::sched::SchedView<'_> {
        crate::sched::SchedView {
            subflows: &self.views,
            conn: &self.info,
            seg_len: len,
            reinjection: false,
            unsent: 0,
            send_window: self.wnd_right.saturating_sub(self.shared.snd_next_dsn),
            preference: self.preference.as_deref(),
            changed,
        }
    }

    /// Builds the scheduler's view for a segment of `len` bytes whose carriers are `carried`.
    pub(super) fn build_views(&mut self, now: Instant, len: u32, carried: SubflowSet) {
        self.refresh_view_fields(now);
        self.finish_views(len, carried);
    }

    /// [`Connection::build_views`] when some subflow has room for `len` bytes; `false` (the
    /// views' snapshots left stale) when none has. The scheduler is not asked in that case, so
    /// its view need not exist: about a third of the calls (the last `poll_transmit` of every
    /// drain) end here, and they copy no [`crate::SubflowInfo`].
    pub(super) fn build_views_if_space(&mut self, now: Instant, len: u32, carried: SubflowSet) -> bool {
        self.refresh_view_fields(now);
        if !self.views.iter().any(|v| v.usable && v.space >= len as u64) {
            return false;
        }
        self.finish_views(len, carried);
        true
    }

    /// Brings the fields of every view that do not depend on the segment (`usable`, `space`,
    /// `backup`, `queued`, `unsent`, `min_srtt_ns`, `max_srtt_ns`) up to date. Only the views without a
    /// `Fields` mark are rewritten (visited from a bit mask): the mark is cleared with the
    /// subflow's others at every mutable borrow of it and at every change of the fields of its
    /// [`SfMeta`] read here, and set only while those fields do not depend on the time (the free
    /// window is cached, i.e. the pacing gap ran out, or the subflow is not usable). With eight
    /// subflows a decision usually follows a change of one or two of them; computing all eight
    /// was a fifth of the `subflows-8` benchmark.
    ///
    /// The mask is tested here, inlined, and the rewrite called only when some view is stale:
    /// in `edar-handoff` 47,531 of the 97,505 calls find every view current (the decision
    /// after a send on the subflow whose fields `fields_after_send` patched, and the last poll
    /// of a drive), and each paid the out-of-line call's prologue and epilogue for nothing
    /// (199.57 -> 198.58 M instructions, plain build).
    #[inline(always)]
    pub(super) fn refresh_view_fields(&mut self, now: Instant) {
        let stale = self.subflows.stale_mask(Derived::Fields);
        if stale != 0 || self.views.len() != self.subflows.len() {
            self.refresh_stale_view_fields(now, stale);
        }
        #[cfg(debug_assertions)]
        self.check_view_fields(now);
    }

    /// [`Connection::rewrite_view_fields`] out of line, for the decisions of a scheduler that
    /// does not queue (`build_views`, `build_views_if_space`).
    #[inline(never)]
    fn refresh_stale_view_fields(&mut self, now: Instant, stale: u8) {
        self.rewrite_view_fields(now, stale);
    }

    /// [`Connection::refresh_view_fields`]' rewrite of the views in `stale` (resized first when
    /// a subflow was added: that cleared every mark, so `stale` then holds every view). Inlined
    /// as it was into `build_queued_views` (out of line itself, and called only when some view
    /// is stale: a second call there cost `lia-2path` +0.14 %), and into minRTT's decision
    /// (`Connection::min_rtt_new_data`, out of line with `schedule_min_rtt`).
    #[inline(always)]
    pub(super) fn rewrite_view_fields(&mut self, now: Instant, mut stale: u8) {
        let n = self.subflows.len();
        // Resized only when a subflow was added (that cleared every mark).
        if self.views.len() != n {
            self.views.resize(n, SchedSubflow::default());
            self.views_changed = u8::MAX;
        }
        while stale != 0 {
            let i = stale.trailing_zeros() as usize;
            stale &= stale - 1;
            let (usable, space) = self.usable_space(now, i);
            let fixed = !usable || self.subflows.is_clean(Derived::Space, i);
            let unsent = self.queues.bytes(i);
            let (sf, m, v) = (&self.subflows[i], &self.meta[i], &mut self.views[i]);
            // A change of `usable` comes with a snapshot to copy again (`forget_usable`), which
            // puts the view in the scheduler's `changed` set.
            debug_assert!(v.usable == usable || !self.subflows.is_clean(Derived::View, i));
            v.usable = usable;
            v.space = space;
            v.backup = m.backup;
            v.unsent = unsent;
            v.queued = sf.outstanding() + unsent;
            v.min_srtt_ns = if m.min_srtt == u64::MAX { 0 } else { m.min_srtt };
            v.max_srtt_ns = m.max_srtt;
            if fixed {
                self.subflows.set_clean(Derived::Fields, i);
            }
        }
    }

    /// Debug builds: every view's segment-independent fields equal a fresh computation.
    #[cfg(debug_assertions)]
    pub(super) fn check_view_fields(&self, now: Instant) {
        (0..self.views.len()).for_each(|i| self.check_view_field(now, i));
    }

    /// Debug builds: view `i`'s segment-independent fields equal a fresh computation.
    #[cfg(debug_assertions)]
    fn check_view_field(&self, now: Instant, i: usize) {
        let v = &self.views[i];
        let usable = self.subflow_usable(i);
        let space = if usable { self.subflows[i].new_data_space(now) } else { 0 };
        let m = &self.meta[i];
        let min = if m.min_srtt == u64::MAX { 0 } else { m.min_srtt };
        let unsent = self.queues.bytes(i);
        let queued = self.subflows[i].outstanding() + unsent;
        let fresh = (usable, space, m.backup, queued, unsent, min, m.max_srtt);
        let seen = (v.usable, v.space, v.backup, v.queued, v.unsent, v.min_srtt_ns, v.max_srtt_ns);
        assert_eq!(seen, fresh, "view {i}");
    }

    /// After `len` bytes of new data were sent on usable subflow `i` (`transmit_on_into`) whose
    /// view fields and cached free window were current before: both brought up to date in
    /// place (the send changes the free window by `len` and the queued bytes by the pipe's
    /// growth, nothing else those fields read) instead of left for the next decision to
    /// recompute. A decision usually follows a send on the same subflow: in `edar-handoff`
    /// two of every three views `refresh_view_fields` rewrote (~140 instructions each, with
    /// `new_data_space`) were the one just sent on. Not done while the pacing gap is open
    /// (the free window then depends on the time).
    ///
    /// The queued bytes grow by `len` exactly: the outstanding bytes do (`snd_nxt` moves by
    /// `len`; an established subflow sending new data has no SYN or FIN outstanding) and the
    /// subflow's send queue is untouched (a segment from it is not patched here). Added to the
    /// view's figure instead of recomputed from the subflow and its queue: 4.03 -> 2.30 M
    /// instructions in `edar-handoff` (~63 -> ~36 a send; debug builds compare the whole view
    /// with a fresh one). Out of line: inlined into `transmit_on_into` it cost `newreno-10m` +0.37 % and
    /// `lia-2path` +0.29 % (code moved on the plain-TCP path) for −0.03 % in `edar-handoff`.
    #[inline(never)]
    pub(super) fn fields_after_send(&mut self, now: Instant, i: usize, len: u32) {
        let Some(space) = self.subflows.space_after_send(i, now, len) else { return };
        let v = &mut self.views[i];
        debug_assert!(v.usable);
        (v.space, v.queued) = (space, v.queued + len as u64);
        self.subflows.set_clean(Derived::Fields, i);
        #[cfg(debug_assertions)]
        self.check_view_field(now, i);
    }

    /// Completes the views for a segment of `len` bytes whose carriers are `carried`: the
    /// snapshots of the subflows changed since they were taken are copied again, and every
    /// view's `available` and `carried` written.
    #[inline]
    pub(super) fn finish_views(&mut self, len: u32, carried: SubflowSet) {
        self.copy_snapshots();
        // Branch-free (`&`, a shift): written for every view at every decision.
        let (len, mut bits) = (len as u64, carried.0);
        for v in self.views.iter_mut() {
            v.available = fits(v, len);
            v.carried = bits & 1 != 0;
            bits >>= 1;
        }
    }

    /// The views' snapshots of the subflows changed since they were taken, copied again: whole,
    /// or only their core for a scheduler that reads no more
    /// ([`Scheduler::reads_full_info`](crate::sched::Scheduler::reads_full_info): minRTT, the
    /// upstream scheduler). minRTT reads a snapshot's srtt alone, yet every decision of
    /// `edar-handoff` copied the whole 168-byte [`crate::SubflowInfo`] of each changed subflow
    /// (~200 instructions a copy with the live fields, 48,782 copies).
    #[inline]
    fn copy_snapshots(&mut self) {
        if self.sched.shape().full_info {
            self.copy_stale_snapshots::<false>();
        } else {
            self.copy_core_snapshots();
        }
    }

    /// The snapshot (its core only: `CORE`) of every subflow changed since its view's snapshot
    /// was taken, copied into the view, which is then marked current.
    #[inline(always)]
    fn copy_stale_snapshots<const CORE: bool>(&mut self) {
        let all = ((1u16 << self.views.len()) - 1) as u8;
        let mut stale = !self.subflows.clean_mask(Derived::View) & all;
        self.views_changed |= stale;
        while stale != 0 {
            let i = stale.trailing_zeros() as usize;
            stale &= stale - 1;
            if CORE {
                self.subflows[i].core_info_into(&mut self.views[i].info);
            } else {
                self.subflows[i].info_into(&mut self.views[i].info);
            }
            self.subflows.set_clean(Derived::View, i);
        }
    }

    /// View `i`'s `available` for a segment of `len` bytes, as `finish_views` writes it (which it
    /// does not for a scheduler that does not read it,
    /// [`Scheduler::reads_fit`](crate::sched::Scheduler::reads_fit)).
    #[inline]
    pub(super) fn fits(&self, i: usize, len: u32) -> bool {
        fits(&self.views[i], u64::from(len))
    }

    /// A view to bring up to date: one of its fields or its snapshot is stale, or a subflow
    /// was added. (The second and third decisions of a drain by the upstream scheduler find
    /// nothing stale.)
    #[inline]
    pub(super) fn any_view_stale(&self) -> bool {
        let all = ((1u16 << self.subflows.len()) - 1) as u8;
        let clean = self.subflows.clean_mask(Derived::Fields) & self.subflows.clean_mask(Derived::View);
        self.views.len() != self.subflows.len() || !clean & all != 0
    }

    /// The views for a scheduler that queues: fields, snapshots (only their core for a
    /// scheduler that does not read the rest) and, if it reads them, the fits.
    #[inline(never)]
    pub(super) fn build_queued_views(&mut self, now: Instant, len: u32, shape: SchedShape) {
        self.rewrite_view_fields(now, self.subflows.stale_mask(Derived::Fields));
        #[cfg(debug_assertions)]
        self.check_view_fields(now);
        if shape.reads_fit {
            self.finish_views(len, SubflowSet::default());
        } else if shape.full_info {
            self.copy_stale_snapshots::<false>();
        } else {
            self.copy_core_snapshots();
        }
    }

    /// [`Connection::copy_snapshots`] for a scheduler that reads only the core of a snapshot
    /// ([`Scheduler::reads_full_info`](crate::sched::Scheduler::reads_full_info), the upstream
    /// one and minRTT): five fields of a changed subflow written ([`Subflow::core_info_into`])
    /// instead of its whole 168-byte `SubflowInfo` (a `memcpy` of the running counters, then the
    /// live fields: ~180 instructions per copy, 15.6 M in `lia-2path`). The `View` mark then
    /// vouches for the core only.
    ///
    /// [`Subflow::core_info_into`]: crate::subflow::Subflow::core_info_into
    #[inline(always)]
    pub(super) fn copy_core_snapshots(&mut self) {
        debug_assert!(!self.sched.redundant());
        self.copy_stale_snapshots::<true>();
        #[cfg(debug_assertions)]
        (0..self.views.len()).for_each(|i| self.check_snapshot(i));
    }

    /// Debug builds: the snapshot of view `i`, marked current, equals a fresh one (its core
    /// only, for a scheduler that reads no more).
    #[cfg(debug_assertions)]
    pub(super) fn check_snapshot(&self, i: usize) {
        let (seen, fresh) = (&self.views[i].info, self.subflows[i].info());
        if self.sched.shape().full_info {
            assert_eq!(*seen, fresh, "snapshot {i}");
        } else {
            assert_eq!(seen.core(), fresh.core(), "snapshot core {i}");
        }
    }
}

/// A view has room for a segment of `len` bytes ([`SchedSubflow::available`]). Branch-free.
#[inline]
pub(super) fn fits(v: &SchedSubflow, len: u64) -> bool {
    v.usable & (v.space >= len)
}
