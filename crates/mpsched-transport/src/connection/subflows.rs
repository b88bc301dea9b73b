//! The connection's subflows, with per-subflow "clean" marks: what the connection derived from
//! a subflow (its scheduler view, its coupled-CC snapshot, that it had nothing to send) stays
//! valid until the subflow is next borrowed mutably. Every mutable access goes through
//! [`Subflows`]' `IndexMut`, `iter_mut` or `push`, which clear the marks, so a derived copy can
//! never outlive a change of the subflow it was taken from.
//!
//! With eight subflows most decisions follow a change of one of them (the one that sent or
//! took an ACK): rebuilding every view and every snapshot per decision was about a fifth of the
//! instructions of the `subflows-8` benchmark.

use std::ops::{Deref, Index, IndexMut};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::subflow::Subflow;
use crate::time::Instant;

/// What a clean mark vouches for.
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
pub(super) enum Derived {
    /// `views[i].info` equals `subflows[i].info()` (in its [`crate::SubflowInfo::core`] only,
    /// for a scheduler that reads no more: [`crate::sched::Scheduler::reads_full_info`]).
    View = 0,
    /// `shared.siblings[i]` equals `subflows[i].sibling_info()`.
    Sibling = 1,
    /// `subflows[i].is_idle(t)` held at some `t` no later than now (idleness lasts while the
    /// subflow is unchanged: its only time-dependent part, the pacing gap, only runs out).
    Idle = 2,
    /// The cached free window equals `subflows[i].new_data_space(now)` (taken after the
    /// pacing gap ran out, so it does not depend on `now` while the subflow is unchanged).
    Space = 3,
    /// The cached deadline equals `subflows[i].poll_timeout_raw()`.
    Timeout = 4,
    /// The fields of `views[i]` that do not depend on the segment (usable, free window,
    /// backup, queued bytes, srtt extremes) are current. Besides the subflow, they read its
    /// `SfMeta`: whoever changes those fields there clears this mark ([`Subflows::forget`]).
    Fields = 6,
    /// The oldest segment of the subflow's send queue did not fit its cached free window
    /// (`Space` was set): it cannot leave while the subflow is unchanged. Whoever changes
    /// that queue's oldest segment clears this mark (connection/queue.rs).
    Blocked = 7,
}

impl Derived {
    /// Where [`Subflows::marks`] puts this mark.
    #[inline]
    pub const fn bit(self) -> u64 {
        1 << (self as u64 * 8)
    }
}

/// What the connection keeps per subflow beside the clean marks, indexed by subflow in fixed
/// arrays of the largest subflow count (boxed: the connection holds a pointer where it held a
/// `Vec`, 16 bytes less). The fold of the deadlines after the earliest one was lost reads all
/// eight without a loop or a bounds check (the entries of subflows that do not exist stay at
/// `u64::MAX`, "none"): ~54 instructions a fold over `Vec<Cache>`'s `n` entries, with 128,889
/// folds in `subflows-8`'s 299,576 calls; and the free window's cache is read without a bounds
/// check (measured: `subflows-8` 744.06 -> 734.09 M, `lia-2path` 560.83 -> 558.45 M).
#[derive(Debug)]
struct Cache {
    space: [u64; 8],
    /// Written through `&self` ([`Subflows::earliest_timeout`]); atomics so that the
    /// connection stays `Sync` (relaxed loads and stores are plain moves).
    deadline: [AtomicU64; 8],
}

impl Default for Cache {
    fn default() -> Self {
        Cache { space: [0; 8], deadline: std::array::from_fn(|_| AtomicU64::new(u64::MAX)) }
    }
}

impl Cache {
    /// The minimum of the eight cached deadlines.
    #[inline]
    fn min_deadline(&self) -> u64 {
        self.deadline.iter().fold(u64::MAX, |m, d| m.min(d.load(Ordering::Relaxed)))
    }
}

/// The subflows of a connection in index order (at most 8), see the module docs.
#[derive(Default)]
pub(super) struct Subflows {
    v: Vec<Subflow>,
    cache: Box<Cache>,
    /// One byte per [`Derived`] (`what as u8 * 8`), bit i of it: the mark of subflow i.
    clean: AtomicU64,
    /// A lower bound of the cached deadlines (`u64::MAX`: none is set), their minimum when
    /// `earliest_timeout_cached` last had to fold them. (Every cached deadline starts at
    /// "none" and is only written by `earliest_timeout_cached`, which lowers this with it.)
    min_deadline: AtomicU64,
}

/// Every lane's bit 0: shifted by `i`, the marks of subflow `i`.
const LANES: u64 = 0x0101_0101_0101_0101;

impl Subflows {
    pub fn new(v: Vec<Subflow>) -> Self {
        debug_assert!(v.len() <= 8);
        Subflows { v, cache: Box::default(), clean: AtomicU64::new(0), min_deadline: AtomicU64::new(u64::MAX) }
    }

    /// Whether subflow `i`'s `what` is still valid. A relaxed load (an acquire one kept the
    /// compiler from merging or hoisting the loads of a loop over the subflows): the marks read
    /// here guard nothing written through `&self` except the deadline cache, which
    /// [`Subflows::earliest_timeout_cached`] reads with its own acquire load.
    #[inline]
    pub fn is_clean(&self, what: Derived, i: usize) -> bool {
        self.clean.load(Ordering::Relaxed) & (1 << (what as u64 * 8 + i as u64)) != 0
    }

    /// Subflow `i`'s marks, each at its [`Derived::bit`].
    #[inline]
    pub fn marks(&self, i: usize) -> u64 {
        (self.clean.load(Ordering::Relaxed) >> i) & LANES
    }

    /// Records that subflow `i`'s `what` was just derived from its current state.
    #[inline]
    pub fn set_clean(&mut self, what: Derived, i: usize) {
        *self.clean.get_mut() |= 1 << (what as u64 * 8 + i as u64);
    }

    /// Subflow `i`'s `what` is no longer valid (something else it derives from changed).
    #[inline]
    pub fn forget(&mut self, what: Derived, i: usize) {
        *self.clean.get_mut() &= !(1 << (what as u64 * 8 + i as u64));
    }

    /// Bit i set: subflow i's `what` is valid.
    #[inline]
    pub fn clean_mask(&self, what: Derived) -> u8 {
        (self.clean.load(Ordering::Relaxed) >> (what as u64 * 8)) as u8
    }

    /// Bit i set: subflow i's `what` is not valid (`i` below the subflow count).
    #[inline]
    pub fn stale_mask(&self, what: Derived) -> u8 {
        let all = ((1u16 << self.v.len()) - 1) as u8;
        !self.clean_mask(what) & all
    }

    /// Every subflow, mutably: all marks cleared.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Subflow> {
        *self.clean.get_mut() = 0;
        self.v.iter_mut()
    }

    /// Subflow `i` mutably, if it exists: its marks cleared.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Subflow> {
        self.dirty(i);
        self.v.get_mut(i)
    }

    /// Adds a subflow (an accepted join): all marks cleared.
    pub fn push(&mut self, sf: Subflow) {
        debug_assert!(self.v.len() < 8);
        // The new subflow's cached deadline is still "none" (only existing subflows' are
        // written), as `Cache::min_deadline` needs.
        debug_assert_eq!(self.cache.deadline[self.v.len()].load(Ordering::Relaxed), u64::MAX);
        *self.clean.get_mut() = 0;
        self.v.push(sf);
    }

    #[inline]
    fn dirty(&mut self, i: usize) {
        *self.clean.get_mut() &= !(LANES << (i & 7));
    }

    /// Raises subflow `i`'s send window ([`Subflow::raise_snd_wnd`]) without clearing its
    /// marks: the send window feeds nothing derived from the subflow (it is read live, through
    /// [`Subflow::snd_wnd_room`]), and a queued segment takes it at every enqueue.
    #[inline]
    pub fn raise_snd_wnd(&mut self, i: usize, conn_room: u64) {
        self.v[i].raise_snd_wnd(conn_room);
    }

    /// Subflow `i`'s free window for new data at `now` ([`Subflow::new_data_space`]), from the
    /// cache while the subflow is unchanged.
    #[inline]
    pub fn new_data_space(&mut self, i: usize, now: Instant) -> u64 {
        if self.is_clean(Derived::Space, i) {
            return self.cache.space[i];
        }
        let sf = &self.v[i];
        let space = sf.new_data_space(now);
        if sf.pacing_gap_over(now) {
            self.cache.space[i] = space;
            self.set_clean(Derived::Space, i);
        }
        space
    }

    /// After `len` bytes of new data were sent on subflow `i` ([`Subflow::send_new_into`]) whose
    /// cached free window was valid before the send: the window less `len`, cached again and
    /// returned, when the pacing gap is over at `now` (else `None`, the mark left clear). Exact:
    /// the send adds `len` to the pipe and changes nothing else [`Subflow::new_data_space`]
    /// reads (the controller's `on_sent` sees the window read-only; a saturated window stays
    /// 0); debug builds compare.
    #[inline]
    pub fn space_after_send(&mut self, i: usize, now: Instant, len: u32) -> Option<u64> {
        if !self.v[i].pacing_gap_over(now) {
            return None;
        }
        let space = self.cache.space[i].saturating_sub(len as u64);
        debug_assert_eq!(space, self.v[i].new_data_space(now), "free window after a send on {i}");
        self.cache.space[i] = space;
        self.set_clean(Derived::Space, i);
        Some(space)
    }

    /// The earliest timer deadline of any subflow ([`Subflow::poll_timeout`]); with more than
    /// two subflows only those changed since the last call are asked again (with one or two,
    /// the cache's bookkeeping costs more than asking: the subflow that just took an input is
    /// dirty anyway). (The connection asks [`Subflows::earliest_timeout_below`].)
    #[cfg(test)]
    pub fn earliest_timeout(&self) -> Option<Instant> {
        self.earliest_timeout_below(u64::MAX)
    }

    /// [`Subflows::earliest_timeout`] for a caller that needs it only when it is earlier than
    /// `limit` (ns): exact then; otherwise `None` or some instant at or after `limit` (`u64::MAX`:
    /// always exact). See [`Subflows::earliest_timeout_cached`].
    #[inline]
    pub fn earliest_timeout_below(&self, limit: u64) -> Option<Instant> {
        // More than two first: the connection's driver answers one and two itself
        // (`Connection::poll_timeout_inline`), so this is the usual case here.
        if self.v.len() > 2 {
            return self.earliest_timeout_cached(limit);
        }
        match &self.v[..] {
            [] => None,
            [a] => a.poll_timeout(),
            [a, b] => crate::subflow::min_deadline(&[a.poll_timeout(), b.poll_timeout()]),
            _ => self.earliest_timeout_cached(limit),
        }
    }

    /// [`Subflows::earliest_timeout_below`] through the per-subflow deadline cache. Only the
    /// subflows without a valid cached deadline are asked (visited from a bit mask), each as
    /// its raw earliest deadline ([`Subflow::poll_timeout_raw`]: `u64::MAX` for none, which an
    /// armed timer never is, so the minimum alone says whether any is set). The raw values
    /// replaced an `Option` per subflow asked and a second mark lane ("some deadline set"):
    /// 746.89 -> 744.06 M (twenty-first pass). The subflows and the cache are read through
    /// locals taken once (the atomic stores had made the loop load the `Vec`'s pointer and
    /// length and the box again per subflow asked) and the marks of every subflow asked set in
    /// one step before the loop (twenty-second pass).
    ///
    /// A lower bound of the cached deadlines is kept (`min_deadline`), lowered by the new
    /// deadlines of those asked; the cache is folded (its minimum taken, and kept) only when
    /// the bound is below `limit`, else the bound is the answer (at or after `limit`). The
    /// simulator's driver asks with its queued wake-up as `limit`, and queues an earlier one
    /// only: the subflow that held the earliest deadline is usually the one just ACKed (its
    /// retransmission timer restarted later), and the exact minimum the fifteenth pass kept
    /// (moved by each new deadline, folded again when its holder moved later) was folded at
    /// 43 % of `subflows-8`'s 299,576 calls, while the wake-up queued for the old minimum was
    /// still pending (twenty-third pass). Debug and test builds compare the kept bound with
    /// the fold, and the answer with every subflow's [`Subflow::poll_timeout`].
    #[inline]
    fn earliest_timeout_cached(&self, limit: u64) -> Option<Instant> {
        let clean = self.clean.load(Ordering::Acquire);
        let t = Derived::Timeout as u64 * 8;
        let (v, cache) = (&self.v[..], &*self.cache);
        let all = ((1u16 << v.len()) - 1) as u8;
        let mut stale = !(clean >> t) as u8 & all;
        let marks = clean | u64::from(stale) << t;
        let mut min = self.min_deadline.load(Ordering::Relaxed);
        debug_assert!(min <= cache.min_deadline(), "a lower bound of the cached deadlines");
        while stale != 0 {
            let i = stale.trailing_zeros() as usize;
            stale &= stale - 1;
            let d = v[i].poll_timeout_raw();
            cache.deadline[i & 7].store(d, Ordering::Relaxed);
            min = min.min(d);
        }
        if min < limit {
            min = cache.min_deadline();
        }
        debug_assert!(min == cache.min_deadline() || min <= cache.min_deadline() && min >= limit);
        self.min_deadline.store(min, Ordering::Relaxed);
        if marks != clean {
            // Only sets marks (clearing needs `&mut self`): a concurrent caller computes the same.
            self.clean.fetch_or(marks, Ordering::Release);
        }
        let due = (min != u64::MAX).then_some(Instant(min));
        #[cfg(any(test, debug_assertions))]
        {
            let exact = crate::subflow::min_deadline(&self.v.iter().map(Subflow::poll_timeout).collect::<Vec<_>>());
            if exact.is_some_and(|e| e.0 < limit) || due.is_some_and(|d| d.0 < limit) {
                assert_eq!(due, exact);
            }
        }
        due
    }
}

/// The minimum of a set of values after one of them moved from `old` to `new`, from `min`, the
/// minimum before; `true` as well when it is lost (`old` may have been the only value at `min`
/// and `new` is larger: the set must be folded again). Applied to several moves in turn it stays
/// exact: `min` only falls to a value some entry holds, unless a loss is reported. Used for the
/// upstream scheduler's kept ranking keys (`sched/upstream.rs`, `u128`; the subflows' earliest
/// deadline used it up to the twenty-second pass).
#[inline]
pub(crate) fn moved_min<T: Ord + Copy>(min: T, old: T, new: T) -> (T, bool) {
    (min.min(new), old == min && new > min)
}

impl Deref for Subflows {
    type Target = [Subflow];
    #[inline]
    fn deref(&self) -> &[Subflow] {
        &self.v
    }
}

impl Index<usize> for Subflows {
    type Output = Subflow;
    #[inline]
    fn index(&self, i: usize) -> &Subflow {
        &self.v[i]
    }
}

impl IndexMut<usize> for Subflows {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut Subflow {
        self.dirty(i);
        &mut self.v[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::AnyCc;
    use crate::subflow::{Role, SubflowConfig};
    use crate::time::Instant;

    fn three() -> Subflows {
        let sf =
            |i| Subflow::new(i, Role::Client, SubflowConfig::linux(), AnyCc::by_name("lia").unwrap(), Instant::ZERO);
        Subflows::new(vec![sf(0), sf(1), sf(2)])
    }

    /// A mutable borrow of one subflow clears that subflow's marks only; reads clear nothing.
    #[test]
    fn index_mut_clears_only_that_subflow() {
        let mut s = three();
        for i in 0..3 {
            s.set_clean(Derived::View, i);
            s.set_clean(Derived::Idle, i);
        }
        s.set_clean(Derived::Sibling, 2);
        let _ = s[1].mss();
        let _ = s.iter().count();
        assert_eq!(s.clean_mask(Derived::View), 0b111);
        s[1].request_ack();
        assert_eq!(
            (s.clean_mask(Derived::View), s.clean_mask(Derived::Sibling), s.clean_mask(Derived::Idle)),
            (0b101, 0b100, 0b101)
        );
        assert!(s.get_mut(2).is_some());
        assert_eq!((s.clean_mask(Derived::View), s.clean_mask(Derived::Sibling)), (0b001, 0));
        assert!(s.is_clean(Derived::Idle, 0) && !s.is_clean(Derived::Idle, 2));
    }

    /// `forget` clears one mark of one subflow and nothing else.
    #[test]
    fn forget_clears_one_mark() {
        let mut s = three();
        for i in 0..3 {
            s.set_clean(Derived::Fields, i);
            s.set_clean(Derived::View, i);
        }
        s.forget(Derived::Fields, 1);
        assert_eq!((s.clean_mask(Derived::Fields), s.clean_mask(Derived::View)), (0b101, 0b111));
    }

    /// The earliest deadline is re-read from a subflow once it was borrowed mutably, and kept
    /// (with its `None`) while it was not.
    #[test]
    fn earliest_timeout_follows_changes() {
        use crate::subflow::{ConnShared, SubflowCx};
        let mut s = three();
        assert_eq!(s.earliest_timeout(), None);
        assert_eq!(s.clean_mask(Derived::Timeout), 0b111);
        let mut conn = ConnShared::new(1 << 20, 1);
        let syn = s[0].poll_transmit(Instant(5), &mut SubflowCx { conn: &mut conn }).unwrap();
        assert_eq!(syn.seq, 0);
        let rto = s[0].poll_timeout().unwrap();
        assert_eq!((s.clean_mask(Derived::Timeout), s.earliest_timeout()), (0b110, Some(rto)));
        assert_eq!((s.clean_mask(Derived::Timeout), s[1].poll_timeout_raw()), (0b111, u64::MAX));
        assert_eq!(s.earliest_timeout(), Some(rto));
    }

    /// Below a limit, a minimum that moved later is not folded again while its lower bound is
    /// at or after the limit (the answer is then at or after it, not the deadline); without a
    /// limit, or once the bound is below it, the answer is exact.
    #[test]
    fn earliest_timeout_below_a_limit() {
        use crate::subflow::{ConnShared, SubflowCx};
        let mut s = three();
        let mut conn = ConnShared::new(1 << 20, 1);
        s[0].poll_transmit(Instant(5), &mut SubflowCx { conn: &mut conn }).unwrap();
        let rto = s[0].poll_timeout().unwrap();
        assert_eq!(s.earliest_timeout_below(rto.0), Some(rto));
        // The SYN times out and is sent again: the deadline moves later.
        s[0].handle_timeout(rto, &mut SubflowCx { conn: &mut conn });
        s[0].poll_transmit(rto, &mut SubflowCx { conn: &mut conn }).unwrap();
        let later = s[0].poll_timeout().unwrap();
        assert!(later > rto);
        // The bound (the old minimum) is at the limit: the answer, not folded again.
        assert_eq!(s.earliest_timeout_below(rto.0), Some(rto));
        assert_eq!(s.clean_mask(Derived::Timeout), 0b111);
        // A later limit needs the minimum: folded, and kept.
        assert_eq!(s.earliest_timeout_below(rto.0 + 1), Some(later));
        assert_eq!(s.earliest_timeout_below(rto.0), Some(later));
        assert_eq!(s.earliest_timeout(), Some(later));
    }

    proptest::proptest! {
        /// `moved_min` over batches of moves of up to eight values (few distinct, so that ties
        /// and moves of the minimum are common), folding again only when it reports a loss, keeps
        /// the minimum of the values, as `earliest_timeout_cached` uses it.
        #[test]
        fn moved_min_keeps_the_minimum(
            start in proptest::collection::vec(0u64..6, 3..=8),
            batches in proptest::collection::vec(proptest::collection::vec((0usize..8, 0u64..6), 0..4), 1..40),
        ) {
            let mut v = start;
            let mut min = v.iter().copied().min().unwrap();
            for batch in batches {
                let mut rescan = false;
                for (i, d) in batch {
                    let i = i % v.len();
                    let (kept, lost) = moved_min(min, v[i], d);
                    v[i] = d;
                    (min, rescan) = (kept, rescan | lost);
                }
                if rescan {
                    min = v.iter().copied().min().unwrap();
                }
                proptest::prop_assert_eq!(min, v.iter().copied().min().unwrap());
            }
        }
    }

    /// `iter_mut` and `push` clear every mark.
    #[test]
    fn iter_mut_and_push_clear_everything() {
        let mut s = three();
        s.set_clean(Derived::View, 0);
        s.set_clean(Derived::Sibling, 1);
        s.iter_mut().next();
        assert_eq!((s.clean_mask(Derived::View), s.clean_mask(Derived::Sibling)), (0, 0));
        s.set_clean(Derived::Idle, 2);
        s.push(Subflow::new(3, Role::Server, SubflowConfig::linux(), AnyCc::by_name("lia").unwrap(), Instant::ZERO));
        assert_eq!((s.len(), s.clean_mask(Derived::Idle)), (4, 0));
    }
}
