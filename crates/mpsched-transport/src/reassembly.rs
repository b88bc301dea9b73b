//! Byte-range reassembly: in-order delivery from out-of-order arrivals.

/// Tracks received ranges `[start, end)` beyond a cumulative point `next`.
/// Ranges are kept sorted and merged; a `Vec` stays small (one entry per hole).
#[derive(Clone, Debug, Default)]
pub struct Reassembly {
    next: u64,
    ooo: Vec<(u64, u64)>,
    ooo_bytes: u64,
    /// Bytes that arrived a second time (already delivered or already queued).
    duplicate_bytes: u64,
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
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    /// Adds `[start, end)`; returns how many bytes became deliverable in order.
    pub fn insert(&mut self, mut start: u64, end: u64) -> u64 {
        if end <= self.next {
            self.duplicate_bytes += end - start;
            return 0;
        }
        if start < self.next {
            self.duplicate_bytes += self.next - start;
            start = self.next;
        }
        if start == self.next && self.ooo.first().is_none_or(|r| r.0 > end) {
            // Fast path: in order, no queued range touched.
            self.next = end;
            return end - start;
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
        self.ooo.splice(i..j, [(s, e)]);
        self.ooo_bytes += e - s;
        // Deliver the head range if it now starts at `next`.
        if self.ooo[0].0 == self.next {
            let (_, e0) = self.ooo.remove(0);
            self.ooo_bytes -= e0 - self.next;
            let n = e0 - self.next;
            self.next = e0;
            n
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Naive model: a bitmap of received bytes.
    fn check_against_model(ops: &[(u64, u64)]) {
        let mut r = Reassembly::new(0);
        let mut got = vec![false; 4096];
        let mut delivered = 0u64;
        for &(s, e) in ops {
            delivered += r.insert(s, e);
            for b in s..e {
                got[b as usize] = true;
            }
            let model_next = got.iter().position(|x| !x).unwrap() as u64;
            assert_eq!(r.next(), model_next);
            assert_eq!(delivered, model_next);
            let model_ooo = got[model_next as usize..].iter().filter(|x| **x).count() as u64;
            assert_eq!(r.ooo_bytes(), model_ooo);
            let sum: u64 = r.ranges().iter().map(|(a, b)| b - a).sum();
            assert_eq!(sum, model_ooo);
            assert!(r.ranges().windows(2).all(|w| w[0].1 < w[1].0), "ranges sorted, disjoint, non-adjacent");
        }
    }

    #[test]
    fn in_order_and_holes() {
        check_against_model(&[(0, 10), (20, 30), (40, 50), (10, 20), (30, 40)]);
        check_against_model(&[(5, 10), (0, 5)]);
        check_against_model(&[(5, 10), (3, 12), (0, 4), (0, 12)]);
    }

    #[test]
    fn random_arrivals_match_model() {
        // Deterministic xorshift; segments of 1..=64 bytes, arbitrary order and duplicates.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200 {
            let mut ops = Vec::new();
            for _ in 0..60 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let s = x % 2000;
                let l = 1 + (x >> 20) % 64;
                ops.push((s, s + l));
            }
            check_against_model(&ops);
        }
    }
}
