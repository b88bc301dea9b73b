//! Real-time accuracy: how late each packet left the emulator compared with the time the link
//! model scheduled, as a histogram of 1 µs buckets (exact maximum kept aside).

/// Buckets of 1 µs up to this many µs; later values fall in the last bucket.
const BUCKETS: usize = 100_000;

/// A histogram of lateness values.
pub struct Lateness {
    counts: Vec<u64>,
    n: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness { counts: vec![0; BUCKETS], n: 0, sum_ns: 0, max_ns: 0 }
    }
}

impl Lateness {
    /// Records one value (ns).
    pub fn record(&mut self, ns: u64) {
        self.counts[((ns / 1000) as usize).min(BUCKETS - 1)] += 1;
        self.n += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The `q`-quantile in µs (upper edge of its bucket; 0 with no values).
    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return if i == BUCKETS - 1 { self.max_ns as f64 / 1e3 } else { (i + 1) as f64 };
            }
        }
        self.max_ns as f64 / 1e3
    }

    /// Summary: count, mean, p50, p90, p99, p99.9 and max, in µs.
    pub fn summary(&self) -> serde_json::Value {
        let mean = if self.n > 0 { self.sum_ns as f64 / self.n as f64 / 1e3 } else { 0.0 };
        serde_json::json!({
            "count": self.n, "mean_us": mean, "p50_us": self.quantile_us(0.5), "p90_us": self.quantile_us(0.9),
            "p99_us": self.quantile_us(0.99), "p999_us": self.quantile_us(0.999), "max_us": self.max_ns as f64 / 1e3,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_bucket_upper_edges() {
        let mut l = Lateness::default();
        for us in 0..100u64 {
            l.record(us * 1000 + 500);
        }
        assert_eq!(l.quantile_us(0.5), 50.0);
        assert_eq!(l.quantile_us(0.99), 99.0);
        assert_eq!(l.quantile_us(1.0), 100.0);
        l.record(5_000_000_000);
        assert_eq!(l.quantile_us(1.0), 5e6);
        assert_eq!(l.count(), 101);
    }
}
