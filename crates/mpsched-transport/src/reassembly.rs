//! Byte-range reassembly: in-order delivery from out-of-order arrivals.

use std::fmt;

/// Tracks received ranges `[start, end)` beyond a cumulative point `next`.
/// Ranges are kept sorted and merged, one entry per hole, in a [`Ranges`] queue.
#[derive(Clone, Debug, Default)]
// `repr(C)`: the counters read per segment before the range queue's header.
#[repr(C)]
pub struct Reassembly {
    next: u64,
    ooo_bytes: u64,
    /// Bytes that arrived a second time (already delivered or already queued).
    duplicate_bytes: u64,
    ooo: Ranges,
    /// Where the range that ends at a given byte sits, as a guess: slot [`slot`]`(end)` holds
    /// the position in `ooo.v` of the last range extended to `end` through the search of
    /// [`Reassembly::insert_slow`] (or through this table). With many subflows the queue holds
    /// a range per subflow running ahead of the hole, and nearly every arrival continues one
    /// of them in the middle (`subflows-8`: ~7 ranges, 142,754 such arrivals): the table finds
    /// it without `insert_slow`'s tests and binary search (119,658 found, 84 %; `insert_slow`
    /// 15.5 M instructions inclusive, then 12.1 M with the table looked at inside it, 9.5 M
    /// for both functions with [`Reassembly::insert_named`] in front). A guess only, checked
    /// by value: see `insert_named`. Boxed, allocated at the first middle extension (plain TCP never makes
    /// one): inline, its 32 bytes grew the connection by as much and `flows-1000`'s simulated
    /// cache misses by ~1 %; 64 slots, as 32 lost a quarter of the guesses to collisions.
    ends: Option<Box<[u8; 64]>>,
}

/// The slot of [`Reassembly::ends`] for a range ending at byte `x` (Fibonacci hashing: the
/// ends are segment boundaries, multiples of a payload size, which the top bits of the
/// product spread over the slots).
#[inline]
fn slot(x: u64) -> usize {
    (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

/// The out-of-order ranges, ascending: a `Vec` whose live part starts at `head`, so that the
/// head range leaves in one step (`head += 1`) and every search and merge reads a plain slice.
/// It replaced a `VecDeque`, whose index wraps and whose `partition_point` searches two slices:
/// with eight subflows the connection-level queue holds ~7 ranges and nearly every arrival
/// extends one in the middle (`subflows-8`: 145,640 of 150,104 calls of
/// [`Reassembly::insert_slow`], ~200 instructions each, most of them the deque's index
/// arithmetic).
///
/// Invariant: `head < v.len()`, or `head == 0` and `v` is empty (the last live range leaving
/// clears the `Vec`), so `v.last()` is the last live range whenever there is one. The dead
/// prefix is dropped when a push would otherwise grow the allocation.
#[derive(Clone, Default)]
struct Ranges {
    v: Vec<(u64, u64)>,
    head: usize,
}

impl Ranges {
    /// The live ranges.
    #[inline]
    fn live(&self) -> &[(u64, u64)] {
        &self.v[self.head..]
    }
    #[inline]
    fn live_mut(&mut self) -> &mut [(u64, u64)] {
        &mut self.v[self.head..]
    }
    #[inline]
    fn first(&self) -> Option<&(u64, u64)> {
        // The length alone first (an empty `Vec` is an empty queue, by the invariant): plain
        // TCP's queue is always empty, and with `head < len` tested first the product build of
        // `9e4a667` cost `newreno-10m` +0.19 % (72.24 -> 72.38 M; with this test 72.08 M).
        if self.v.is_empty() {
            return None;
        }
        self.v.get(self.head)
    }
    /// The last live range (see the invariant).
    #[inline]
    fn last_mut(&mut self) -> Option<&mut (u64, u64)> {
        debug_assert!(self.head < self.v.len() || (self.head == 0 && self.v.is_empty()));
        self.v.last_mut()
    }
    /// Drops the first live range (there is one).
    #[inline]
    fn pop_front(&mut self) {
        debug_assert!(self.head < self.v.len());
        self.head += 1;
        if self.head == self.v.len() {
            self.v.clear();
            self.head = 0;
        }
    }
    #[inline]
    fn push_back(&mut self, r: (u64, u64)) {
        self.make_room();
        self.v.push(r);
    }
    /// Inserts `r` before the live range `i` (`i` = the live length: at the end).
    #[inline]
    fn insert(&mut self, i: usize, r: (u64, u64)) {
        self.make_room();
        self.v.insert(self.head + i, r);
    }
    /// Removes the live ranges `i..j`.
    fn remove(&mut self, i: usize, j: usize) {
        self.v.drain(self.head + i..self.head + j);
        if self.head == self.v.len() {
            self.v.clear();
            self.head = 0;
        }
    }
    /// Before an entry is added to a full allocation, drops the dead prefix instead of growing.
    #[inline]
    fn make_room(&mut self) {
        if self.head > 0 && self.v.len() == self.v.capacity() {
            self.compact();
        }
    }
    #[inline(never)]
    #[cold]
    fn compact(&mut self) {
        self.v.drain(..self.head);
        self.head = 0;
    }
}

/// The live ranges only, as the `VecDeque` it replaced printed them.
impl fmt::Debug for Ranges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.live()).finish()
    }
}

impl Reassembly {
    pub fn new(start: u64) -> Self {
        Reassembly { next: start, ..Default::default() }
    }

    /// The first byte not yet delivered in order.
    #[inline]
    pub fn next(&self) -> u64 {
        self.next
    }
    /// Bytes held out of order.
    #[inline]
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo_bytes
    }
    #[inline]
    pub fn duplicate_bytes(&self) -> u64 {
        self.duplicate_bytes
    }
    /// Out-of-order ranges, ascending.
    #[cfg(test)]
    pub fn ranges(&self) -> Vec<(u64, u64)> {
        self.ooo.live().to_vec()
    }

    /// Adds `[start, end)`; returns how many bytes became deliverable in order.
    /// The in-order arrival that touches no queued range, nearly every one, is inlined at the
    /// caller; the rest is a call of its own (with it inside, every call paid the large
    /// function's register saves and restores: ~16 of its ~30 instructions).
    #[inline]
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start == self.next && end > start && self.ooo.first().is_none_or(|r| r.0 > end) {
            self.next = end;
            return end - start;
        }
        // The usual out-of-order arrival (the faster path runs ahead of a hole) continues the
        // last queued range: also inline (in `lia-2path` four in five calls of `insert_slow` were
        // this case).
        if start > self.next && end > start {
            if let Some(last) = self.ooo.last_mut() {
                if start == last.1 {
                    last.1 = end;
                    self.ooo_bytes += end - start;
                    return 0;
                }
            }
        }
        self.insert_named(start, end)
    }

    /// [`Reassembly::insert`] beyond its inline cases: first the range the table of range ends
    /// names ([`Reassembly::ends`]), extended at once, then [`Reassembly::insert_slow`]. A small
    /// function of its own, in front of `insert_slow`: the hit (`subflows-8`: 119,658 of
    /// 150,104 calls) saves one register and returns, ~35 instructions with the call, where
    /// inside `insert_slow` it cost ~45 after five saved registers and its first tests
    /// (`subflows-8` 691.97 -> 689.33 M). The calls it does not answer pay its tests: ~6
    /// instructions while no table exists (`lia-2path`'s 42,287 calls), ~30 with one. The slice pattern (`[r, after, ..]`) reads the
    /// two ranges with one length test and no panic path: indexing kept a second saved
    /// register (`lia-2path` +0.02 %).
    #[inline(never)]
    fn insert_named(&mut self, start: u64, end: u64) -> u64 {
        if start > self.next && end > start {
            // The range the table names for `start`, if it ends at `start` and the next range
            // starts beyond `end`: `insert_slow`'s search would find it (ranges are sorted and
            // neither overlap nor touch, so the one before ends below its start) and the test
            // after the search would extend it (an arrival beyond `next`, not a duplicate; the
            // last range has no next one: `insert` extended it already). A range left before
            // `head` (delivered) ends at or before `next` < `start`, so it never matches; a
            // stale or colliding slot just takes the search.
            if let Some(t) = &mut self.ends {
                let h = usize::from(t[slot(start)]);
                if let [r, after, ..] = self.ooo.v.get_mut(h..).unwrap_or_default() {
                    if r.1 == start && after.0 > end {
                        debug_assert!(h >= self.ooo.head, "a delivered range matched");
                        r.1 = end;
                        t[slot(end)] = h as u8;
                        self.ooo_bytes += end - start;
                        return 0;
                    }
                }
            }
        }
        self.insert_slow(start, end)
    }

    /// [`Reassembly::insert`] of a duplicate, out-of-order or gap-filling range.
    #[inline(never)]
    fn insert_slow(&mut self, mut start: u64, end: u64) -> u64 {
        if end <= self.next {
            self.duplicate_bytes += end - start;
            return 0;
        }
        if start < self.next {
            self.duplicate_bytes += self.next - start;
            start = self.next;
        }
        if start == self.next && self.ooo.first().is_none_or(|r| r.0 > end) {
            // In order, no queued range touched (after trimming a duplicate head).
            self.next = end;
            return end - start;
        }
        // At or beyond the end of the last range (the usual out-of-order arrival: the faster
        // path runs ahead of a hole): extend it or open a new range, nothing to search or merge.
        if let Some(last) = self.ooo.last_mut() {
            if start >= last.1 {
                if start == last.1 {
                    last.1 = end;
                } else {
                    self.ooo.push_back((start, end));
                }
                self.ooo_bytes += end - start;
                return 0;
            }
        }
        // Insert, merging with overlapping or adjacent ranges. Every queued range starts beyond
        // `next`, so an arrival at `next` (the slower path filling the head hole: `lia-2path`'s
        // usual case here) merges from the first one without a search.
        let i = if start == self.next { 0 } else { self.ooo.live().partition_point(|r| r.1 < start) };
        let q = self.ooo.live();
        debug_assert_eq!(i, q.partition_point(|r| r.1 < start));
        // The usual case with many subflows: the arrival continues range `i` and ends before
        // range `i + 1` (`subflows-8`: 142,000 of 145,640 merges): no general merge.
        if let Some(&(rs, re)) = q.get(i) {
            if re == start && q.get(i + 1).is_none_or(|r| r.0 > end) {
                debug_assert!(rs < start);
                self.ooo.live_mut()[i].1 = end;
                self.ooo_bytes += end - start;
                // Written last (the allocation a call at the tail): written first, with the
                // allocation inline, `insert_slow` saved two more registers on every call.
                let h = u8::try_from(self.ooo.head + i).unwrap_or(u8::MAX);
                match &mut self.ends {
                    Some(t) => t[slot(end)] = h,
                    None => self.first_end(end, h),
                }
                return 0;
            }
        }
        self.merge(i, start, end)
    }

    /// The first entry of [`Reassembly::ends`], with the table (cold: once per connection).
    #[cold]
    #[inline(never)]
    fn first_end(&mut self, end: u64, h: u8) {
        let mut t = Box::new([u8::MAX; 64]);
        t[slot(end)] = h;
        self.ends = Some(t);
    }

    /// The rest of [`Reassembly::insert_slow`]: `[start, end)` (beyond `next` or at it, `i` the
    /// first range it may touch) merged with every range it overlaps or meets. A call of its own
    /// so that `insert_slow`'s usual cases save fewer registers (measured: `subflows-8` 781.39 ->
    /// 779.14 M instructions; the head-filling case here, not there: `lia-2path` 575.50 ->
    /// 575.29 M, where inside `insert_slow` it cost `subflows-8` 1 M of the gain).
    #[inline(never)]
    fn merge(&mut self, i: usize, start: u64, end: u64) -> u64 {
        let q = self.ooo.live();
        if start == self.next {
            // The slower path filling the head hole (`lia-2path`'s usual case here): it meets
            // the first range (`insert_slow` returned otherwise) and, usually, not the second;
            // delivered at once without the general merge.
            let (rs, re) = q[0];
            let e = end.max(re);
            if q.get(1).is_none_or(|r| r.0 > e) {
                self.duplicate_bytes += re.min(end).saturating_sub(rs);
                self.ooo_bytes -= re - rs;
                self.ooo.pop_front();
                let n = e - self.next;
                self.next = e;
                return n;
            }
        }
        let mut j = i;
        let (mut s, mut e) = (start, end);
        let mut covered = 0;
        while let Some(&(rs, re)) = q.get(j).filter(|r| r.0 <= e) {
            covered += re.min(end).saturating_sub(rs.max(start));
            s = s.min(rs);
            e = e.max(re);
            self.ooo_bytes -= re - rs;
            j += 1;
        }
        self.duplicate_bytes += covered;
        if s == self.next {
            // The head hole filled: `[s, e)` is delivered at once, the merged ranges `0..j` leave.
            debug_assert_eq!(i, 0);
            self.remove_front(j);
            let n = e - self.next;
            self.next = e;
            return n;
        }
        self.replace_ranges(i, j, (s, e));
        self.ooo_bytes += e - s;
        0
    }

    /// Drops the first `j` live ranges (merged into a delivered one): one step each.
    #[inline]
    fn remove_front(&mut self, j: usize) {
        for _ in 0..j {
            self.ooo.pop_front();
        }
    }

    /// Replaces the ranges `i..j` by `r` (`i == j`: inserts it at `i`). The usual cases (a new
    /// hole, or a segment extending one range) touch one slot instead of splicing.
    #[inline]
    fn replace_ranges(&mut self, i: usize, j: usize, r: (u64, u64)) {
        if i == j {
            self.ooo.insert(i, r);
            return;
        }
        self.ooo.live_mut()[i] = r;
        if j > i + 1 {
            self.remove_ranges(i + 1, j);
        }
    }

    /// Removes the ranges `i..j` (a segment that bridged several holes: rare). Out of line so
    /// that `Vec::drain`'s code stays out of `insert_slow` whatever the codegen units do:
    /// where the build happened to inline it, `insert_slow` cost `subflows-8` +0.47 M.
    #[inline(never)]
    #[cold]
    fn remove_ranges(&mut self, i: usize, j: usize) {
        self.ooo.remove(i, j);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, VecDeque};

    use proptest::prelude::*;

    use super::*;

    /// Reference model: the set of every byte received at or beyond the start point.
    struct Model {
        start: u64,
        got: BTreeSet<u64>,
        next: u64,
        duplicate_bytes: u64,
    }

    impl Model {
        fn new(start: u64) -> Self {
            Model { start, got: BTreeSet::new(), next: start, duplicate_bytes: 0 }
        }

        /// Marks `[s, e)` received; returns how far the first missing byte moved.
        fn insert(&mut self, s: u64, e: u64) -> u64 {
            for b in s..e {
                if b < self.start || !self.got.insert(b) {
                    self.duplicate_bytes += 1;
                }
            }
            let before = self.next;
            while self.got.contains(&self.next) {
                self.next += 1;
            }
            self.next - before
        }

        /// Maximal runs of received bytes beyond `next`, ascending.
        fn ranges(&self) -> Vec<(u64, u64)> {
            let mut out: Vec<(u64, u64)> = Vec::new();
            for &b in self.got.range(self.next..) {
                match out.last_mut() {
                    Some(r) if r.1 == b => r.1 += 1,
                    _ => out.push((b, b + 1)),
                }
            }
            out
        }
    }

    /// Inserts `ops` (ranges `[s, e)`, e > s) into a `Reassembly` starting at `start` and checks,
    /// after every insert, the delivered count and every accessor against the model.
    fn check_against_model(start: u64, ops: &[(u64, u64)]) {
        let mut r = Reassembly::new(start);
        let mut m = Model::new(start);
        for (k, &(s, e)) in ops.iter().enumerate() {
            assert_eq!(r.insert(s, e), m.insert(s, e), "insert #{k} [{s}, {e})");
            assert_eq!(r.next(), m.next, "next after #{k}");
            assert_eq!(r.duplicate_bytes(), m.duplicate_bytes, "duplicates after #{k}");
            let ranges = m.ranges();
            assert_eq!(r.ranges(), &ranges[..], "ranges after #{k}");
            assert_eq!(r.ooo_bytes(), ranges.iter().map(|(a, b)| b - a).sum::<u64>(), "ooo after #{k}");
        }
    }

    /// [`check_against_model`] with the table of range ends (`Reassembly::ends`) starting as
    /// `table` (any bytes: stale and wrong guesses), against a `Reassembly` that never looks
    /// into its table (emptied before every insert): the same delivered counts and the same
    /// ranges and counters after every insert.
    fn check_table(start: u64, table: Option<[u8; 64]>, ops: &[(u64, u64)]) {
        let (mut r, mut plain, mut m) = (Reassembly::new(start), Reassembly::new(start), Model::new(start));
        r.ends = table.map(Box::new);
        for (k, &(s, e)) in ops.iter().enumerate() {
            plain.ends = None;
            let n = r.insert(s, e);
            assert_eq!(n, m.insert(s, e), "insert #{k} [{s}, {e})");
            assert_eq!(n, plain.insert(s, e), "insert #{k} without the table");
            assert_eq!(r.ranges(), m.ranges(), "ranges after #{k}");
            let seen = (r.next, r.ooo_bytes, r.duplicate_bytes, r.ooo.live());
            assert_eq!(
                seen,
                (plain.next, plain.ooo_bytes, plain.duplicate_bytes, plain.ooo.live()),
                "state after #{k}"
            );
        }
    }

    /// A range extended in the middle is found through the table the next time; an entry made
    /// stale by a range inserted before it, or wrong, is not taken.
    #[test]
    fn table_finds_middle_ranges() {
        let mut r = Reassembly::new(0);
        for (s, e) in [(10, 20), (30, 40), (20, 25)] {
            r.insert(s, e);
        }
        // (20, 25) extended range 0 through the search: the table now names it for 25.
        assert_eq!(r.ends.as_ref().map(|t| t[slot(25)]), Some(0));
        assert_eq!(r.insert(25, 27), 0, "found through the table");
        assert_eq!(r.ends.as_ref().map(|t| t[slot(27)]), Some(0));
        assert_eq!(r.insert(3, 5), 0);
        assert_eq!(r.ranges(), &[(3, 5), (10, 27), (30, 40)]);
        assert_eq!(r.insert(27, 28), 0, "a stale entry (0 holds (3, 5) now): the search");
        assert_eq!(r.ranges(), &[(3, 5), (10, 28), (30, 40)]);
        assert_eq!(r.ends.as_ref().map(|t| t[slot(28)]), Some(1));
        r.ends.as_mut().unwrap()[slot(40)] = 2;
        assert_eq!(r.insert(40, 45), 0, "the last range: extended before the table is read");
        assert_eq!(r.insert(0, 3), 5);
        assert_eq!(r.insert(28, 30), 0, "bridges to the next range: the general merge");
        assert_eq!((r.next(), r.ranges()), (5, vec![(10, 45)]));
        check_table(0, Some([0; 64]), &[(10, 20), (30, 40), (20, 25), (50, 60), (25, 30), (0, 10)]);
    }

    #[test]
    fn in_order_and_holes() {
        check_against_model(0, &[(0, 10), (20, 30), (40, 50), (10, 20), (30, 40)]);
        check_against_model(0, &[(5, 10), (0, 5)]);
        check_against_model(0, &[(5, 10), (3, 12), (0, 4), (0, 12)]);
    }

    /// Exact values for one arrival pattern: a hole, a range filling part of it, a duplicate.
    #[test]
    fn exact_ranges_and_counters() {
        let mut r = Reassembly::new(100);
        assert_eq!(r.insert(110, 120), 0);
        assert_eq!(r.insert(130, 140), 0);
        assert_eq!(r.ranges(), &[(110, 120), (130, 140)]);
        assert_eq!(r.insert(115, 135), 0, "bridges both ranges");
        assert_eq!((&r.ranges()[..], r.ooo_bytes(), r.duplicate_bytes()), (&[(110, 140)][..], 30, 10));
        assert_eq!(r.insert(90, 110), 40, "delivers 100..140; 90..100 is a duplicate");
        assert_eq!((r.next(), r.ooo_bytes(), r.duplicate_bytes()), (140, 0, 20));
        assert!(r.ranges().is_empty());
    }

    /// Arrival patterns: ranges of 1..=64 bytes at offsets up to 2000 bytes from just below the
    /// start point, in any order, with overlaps and duplicates.
    fn arrivals() -> impl Strategy<Value = (u64, Vec<(u64, u64)>)> {
        let start = prop_oneof![Just(0u64), 0u64..100_000, Just(1u64 << 62)];
        let ops = prop::collection::vec((0u64..2000, 1u64..=64), 0..80);
        (start, ops).prop_map(|(start, ops)| {
            let base = start.saturating_sub(100);
            (start, ops.into_iter().map(|(off, len)| (base + off, base + off + len)).collect())
        })
    }

    /// One operation on the range queue: what `Reassembly` asks of it.
    #[derive(Clone, Debug)]
    enum Op {
        Push(u64),
        Insert(usize, u64),
        PopFront,
        SetLast(u64),
        Set(usize, u64),
        Remove(usize, usize),
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            3 => any::<u64>().prop_map(Op::Push),
            2 => (0usize..12, any::<u64>()).prop_map(|(i, x)| Op::Insert(i, x)),
            3 => Just(Op::PopFront),
            1 => any::<u64>().prop_map(Op::SetLast),
            1 => (0usize..12, any::<u64>()).prop_map(|(i, x)| Op::Set(i, x)),
            1 => (0usize..12, 0usize..4).prop_map(|(i, n)| Op::Remove(i, i + n)),
        ];
        prop::collection::vec(op, 0..200)
    }

    /// Arrivals of eight interleaved in-order streams (eight subflows striping the data
    /// sequence space, each behind by its own delay): the queue holds several ranges and nearly
    /// every arrival extends one in the middle or fills the head hole.
    fn striped() -> impl Strategy<Value = Vec<(u64, u64)>> {
        prop::collection::vec((0usize..8, 1u64..=3), 0..300).prop_map(|picks| {
            // Segment k of 10 bytes goes to stream k % 8; each stream sends its own in order.
            let mut sent = [0u64; 8];
            let mut out = Vec::new();
            for (stream, n) in picks {
                for _ in 0..n {
                    let k = sent[stream] * 8 + stream as u64;
                    sent[stream] += 1;
                    out.push((k * 10, k * 10 + 10));
                }
            }
            out
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, rng_seed: prop::test_runner::RngSeed::Fixed(0x5241_4e47), ..ProptestConfig::default() })]
        /// `Ranges` against the `VecDeque` it replaced, for any sequence of the operations
        /// `Reassembly` uses (the dead prefix, the clearing when it empties and the compaction
        /// included); the live slice, `first` and `last_mut` must equal the deque's.
        #[test]
        fn ranges_match_vecdeque(ops in ops()) {
            let (mut r, mut d) = (Ranges::default(), VecDeque::<(u64, u64)>::new());
            for op in ops {
                match op {
                    Op::Push(x) => { r.push_back((x, x)); d.push_back((x, x)); }
                    Op::Insert(i, x) => if i <= d.len() { r.insert(i, (x, 1)); d.insert(i, (x, 1)); },
                    Op::PopFront => if !d.is_empty() { r.pop_front(); d.pop_front(); },
                    Op::SetLast(x) => {
                        if let (Some(a), Some(b)) = (r.last_mut(), d.back_mut()) { a.1 = x; b.1 = x; }
                    }
                    Op::Set(i, x) => if i < d.len() { r.live_mut()[i] = (x, 2); d[i] = (x, 2); },
                    Op::Remove(i, j) => if j <= d.len() { r.remove(i, j); d.drain(i..j); },
                }
                let want: Vec<(u64, u64)> = d.iter().copied().collect();
                prop_assert_eq!(r.live(), &want[..]);
                prop_assert_eq!(r.first(), d.front());
                prop_assert_eq!(r.last_mut().copied(), d.back().copied());
                prop_assert!(r.head < r.v.len() || (r.head == 0 && r.v.is_empty()));
                prop_assert_eq!(format!("{r:?}"), format!("{d:?}"));
            }
        }

        #[test]
        fn striped_arrivals_match_model(ops in striped()) {
            check_against_model(0, &ops);
        }

        /// Arrivals of eight subflows taking chunks of 1-3 consecutive segments in turn (the
        /// upstream scheduler's picks), each delivering its own in order, interleaved: most
        /// arrivals continue a range in the middle, found through the table (any bytes at first).
        #[test]
        fn chunked_arrivals_match_model(
            chunks in prop::collection::vec((0usize..8, 1u64..=3), 0..120),
            order in prop::collection::vec(0usize..8, 0..400),
            table in prop::option::of(any::<[u8; 64]>()),
        ) {
            let mut own: [VecDeque<(u64, u64)>; 8] = Default::default();
            let mut at = 0;
            for (sf, n) in chunks {
                for _ in 0..n {
                    own[sf].push_back((at, at + 10));
                    at += 10;
                }
            }
            let mut ops = Vec::new();
            for sf in order.into_iter().chain((0..8).cycle().take(8 * 360)) {
                if let Some(r) = own[sf].pop_front() {
                    ops.push(r);
                }
            }
            check_table(0, table, &ops);
        }
    }

    proptest! {
        // A fixed seed: the same cases on every run (deterministic CI).
        #![proptest_config(ProptestConfig { cases: 2048, rng_seed: prop::test_runner::RngSeed::Fixed(0x5245_4153), ..ProptestConfig::default() })]
        #[test]
        fn random_arrivals_match_model((start, ops) in arrivals()) {
            check_against_model(start, &ops);
        }

        /// Random arrivals with a table of any bytes at first.
        #[test]
        fn random_arrivals_with_any_table_match_model((start, ops) in arrivals(), table in any::<[u8; 64]>()) {
            check_table(start, Some(table), &ops);
        }
    }
}
