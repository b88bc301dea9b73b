//! Decision-latency statistics of a policy: how many decisions it made and how long its
//! inference took, in wall-clock nanoseconds measured by the policy itself (the transport reads
//! no clock). Wall time is not deterministic: drivers report these figures apart from a run's
//! deterministic outputs.

/// Sub-buckets per power of two of the latency histogram (relative bucket width 1/8).
const SUB: u32 = 8;
const BUCKETS: usize = 64 * SUB as usize;

/// Counts and a log-linear latency histogram (buckets 1/8 of a power of two wide: a quantile is
/// known to within 12.5 %).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionStats {
    /// Decisions made.
    pub decisions: u64,
    /// Sum of their latencies (ns).
    pub total_ns: u64,
    /// Slowest decision (ns).
    pub max_ns: u64,
    hist: Vec<u32>,
}

impl Default for DecisionStats {
    fn default() -> Self {
        DecisionStats { decisions: 0, total_ns: 0, max_ns: 0, hist: vec![0; BUCKETS] }
    }
}

fn bucket(ns: u64) -> usize {
    if ns < u64::from(SUB) {
        return ns as usize;
    }
    let e = 63 - ns.leading_zeros(); // ≥ 3
    let sub = (ns >> (e - 3)) & u64::from(SUB - 1);
    ((e - 2) * SUB) as usize + sub as usize
}

/// The smallest latency of bucket `b` (ns).
fn bucket_low(b: usize) -> u64 {
    if b < SUB as usize {
        return b as u64;
    }
    let (e, sub) = (b as u32 / SUB + 2, b as u64 % u64::from(SUB));
    (u64::from(SUB) + sub) << (e - 3)
}

impl DecisionStats {
    /// Adds one decision that took `ns`.
    pub fn add(&mut self, ns: u64) {
        self.decisions += 1;
        self.total_ns = self.total_ns.saturating_add(ns);
        self.max_ns = self.max_ns.max(ns);
        self.hist[bucket(ns)] += 1;
    }

    /// Adds every decision of `other` (the statistics of several connections).
    pub fn merge(&mut self, other: &DecisionStats) {
        self.decisions += other.decisions;
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        for (a, b) in self.hist.iter_mut().zip(&other.hist) {
            *a += b;
        }
    }

    /// Mean latency (ns; 0 without decisions).
    pub fn mean_ns(&self) -> f64 {
        if self.decisions == 0 {
            0.0
        } else {
            self.total_ns as f64 / self.decisions as f64
        }
    }

    /// The `q` quantile (0..=1) of the latencies: the lower edge of its histogram bucket, at
    /// most [`DecisionStats::max_ns`]; the maximum itself for the top rank (ns; 0 without decisions).
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.decisions == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.decisions as f64).ceil() as u64).max(1);
        if rank >= self.decisions {
            return self.max_ns; // the slowest is known exactly
        }
        let mut seen = 0u64;
        for (b, &n) in self.hist.iter().enumerate() {
            seen += u64::from(n);
            if seen >= rank {
                return bucket_low(b).min(self.max_ns);
            }
        }
        self.max_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every latency falls in the bucket whose range holds it, and buckets are in order.
        #[test]
        fn buckets_hold_their_values(ns in 0u64..u64::MAX / 2) {
            let b = bucket(ns);
            prop_assert!(b < BUCKETS);
            prop_assert!(bucket_low(b) <= ns);
            prop_assert!(ns < bucket_low(b + 1), "{ns} in {b}: next starts at {}", bucket_low(b + 1));
        }

        /// A quantile is within 12.5 % below the exact one, never above it.
        #[test]
        fn quantiles_within_a_bucket(mut xs in proptest::collection::vec(1u64..10_000_000, 1..200), q in 0.0f64..1.0) {
            let mut s = DecisionStats::default();
            xs.iter().for_each(|&x| s.add(x));
            xs.sort_unstable();
            let rank = ((q * xs.len() as f64).ceil() as usize).max(1);
            let exact = xs[rank - 1];
            let got = s.quantile_ns(q);
            prop_assert!(got <= exact && got as f64 >= exact as f64 * 0.875 - 1.0, "{got} vs {exact}");
        }
    }

    #[test]
    fn counts_mean_max_and_merge() {
        let mut a = DecisionStats::default();
        assert_eq!((a.mean_ns(), a.quantile_ns(0.99)), (0.0, 0));
        [1000, 2000, 3000].iter().for_each(|&x| a.add(x));
        let mut b = DecisionStats::default();
        b.add(10_000);
        a.merge(&b);
        assert_eq!((a.decisions, a.total_ns, a.max_ns), (4, 16_000, 10_000));
        assert_eq!(a.mean_ns(), 4000.0);
        assert_eq!(a.quantile_ns(1.0), 10_000);
        assert_eq!(a.quantile_ns(0.25), 960, "the lower edge of the bucket of 1000 ([960, 1024))");
    }
}
