//! Byte-range reassembly: in-order delivery from out-of-order arrivals.

use std::collections::VecDeque;

/// Tracks received ranges `[start, end)` beyond a cumulative point `next`.
/// Ranges are kept sorted and merged, one entry per hole; a `VecDeque`, because the head range
/// leaves whenever the hole before it fills (a `Vec` shifted every entry then).
#[derive(Clone, Debug, Default)]
// `repr(C)`: the counters read per segment before the range queue's header.
#[repr(C)]
pub struct Reassembly {
    next: u64,
    ooo_bytes: u64,
    /// Bytes that arrived a second time (already delivered or already queued).
    duplicate_bytes: u64,
    ooo: VecDeque<(u64, u64)>,
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
        self.ooo.iter().copied().collect()
    }

    /// Adds `[start, end)`; returns how many bytes became deliverable in order.
    /// The in-order arrival that touches no queued range, nearly every one, is inlined at the
    /// caller; the rest is a call of its own (with it inside, every call paid the large
    /// function's register saves and restores: ~16 of its ~30 instructions).
    #[inline]
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start == self.next && end > start && self.ooo.front().is_none_or(|r| r.0 > end) {
            self.next = end;
            return end - start;
        }
        // The usual out-of-order arrival (the faster path runs ahead of a hole) continues the
        // last queued range: also inline (in `lia-2path` four in five calls of `insert_slow` were
        // this case).
        if start > self.next && end > start {
            if let Some(last) = self.ooo.back_mut() {
                if start == last.1 {
                    last.1 = end;
                    self.ooo_bytes += end - start;
                    return 0;
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
        if start == self.next && self.ooo.front().is_none_or(|r| r.0 > end) {
            // In order, no queued range touched (after trimming a duplicate head).
            self.next = end;
            return end - start;
        }
        // At or beyond the end of the last range (the usual out-of-order arrival: the faster
        // path runs ahead of a hole): extend it or open a new range, nothing to search or merge.
        if let Some(last) = self.ooo.back_mut() {
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
        // Insert, merging with overlapping or adjacent ranges.
        let i = self.ooo.partition_point(|r| r.1 < start);
        let mut j = i;
        let (mut s, mut e) = (start, end);
        let mut covered = 0;
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            let (rs, re) = self.ooo[j];
            covered += re.min(end).saturating_sub(rs.max(start));
            s = s.min(rs);
            e = e.max(re);
            self.ooo_bytes -= re - rs;
            j += 1;
        }
        self.duplicate_bytes += covered;
        self.replace_ranges(i, j, (s, e));
        self.ooo_bytes += e - s;
        // Deliver the head range if it now starts at `next`.
        if self.ooo[0].0 == self.next {
            let (_, e0) = self.ooo.pop_front().expect("just inserted");
            self.ooo_bytes -= e0 - self.next;
            let n = e0 - self.next;
            self.next = e0;
            n
        } else {
            0
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
        self.ooo[i] = r;
        if j > i + 1 {
            self.remove_ranges(i + 1, j);
        }
    }

    /// Removes the ranges `i..j` (a segment that bridged several holes: rare). Out of line so
    /// that `VecDeque::drain`'s code stays out of `insert_slow` whatever the codegen units do:
    /// where the build happened to inline it, `insert_slow` cost `subflows-8` +0.47 M.
    #[inline(never)]
    #[cold]
    fn remove_ranges(&mut self, i: usize, j: usize) {
        self.ooo.drain(i..j);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

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

    proptest! {
        // A fixed seed: the same cases on every run (deterministic CI).
        #![proptest_config(ProptestConfig { cases: 2048, rng_seed: prop::test_runner::RngSeed::Fixed(0x5245_4153), ..ProptestConfig::default() })]
        #[test]
        fn random_arrivals_match_model((start, ops) in arrivals()) {
            check_against_model(start, &ops);
        }
    }
}
