//! Random handoffs: a `[[handoffs]]` entry degrades a path at random times for random
//! durations. It expands, when the scenario is resolved, into ordinary `schedule` entries of the
//! path's links (the resolved copy shows them), drawn from the RNG stream
//! `handoff/<path>/<k>` (the k-th handoff process on that path) of the scenario seed.
//!
//! Timing is an alternating renewal process: the path is normal for an exponential time (mean
//! `60 / rate_per_min` s), then in handoff for a duration drawn uniformly from `duration_s`,
//! then normal again, and so on between `start_s` and `stop_s`. Over a long run the number of
//! handoffs is about `(stop − start) / (60 / rate_per_min + mean duration)`.

use serde::{Deserialize, Serialize};

use crate::link::LossSpec;
use crate::rng::Rng;

/// A handoff duration: fixed seconds, or `[lo, hi]` drawn uniformly for each handoff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DurationSpec {
    /// Always this many seconds.
    Fixed(f64),
    /// Uniform between the two bounds.
    Uniform([f64; 2]),
}

impl DurationSpec {
    /// (shortest, longest) duration in seconds.
    pub fn bounds(&self) -> (f64, f64) {
        match *self {
            DurationSpec::Fixed(d) => (d, d),
            DurationSpec::Uniform([lo, hi]) => (lo, hi),
        }
    }
}

/// A `[[handoffs]]` entry: a Poisson process of handoffs on one path.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoffSpec {
    /// The path that suffers the handoffs (all its links, both directions).
    pub path: String,
    /// Handoffs per minute of normal operation (Poisson while the path is not in handoff).
    pub rate_per_min: f64,
    /// Length of each handoff, s.
    pub duration_s: DurationSpec,
    /// Start of the first handoff process (s); default: the start of the simulation.
    pub start_s: Option<f64>,
    /// Default: the end of the simulation.
    pub stop_s: Option<f64>,
    /// During a handoff: the links' rate ...
    pub rate_mbps: Option<f64>,
    /// ... one-way delay of every link ...
    pub delay_ms: Option<f64>,
    /// ... loss of the forward (data) links ...
    pub loss: Option<LossSpec>,
    /// ... and an outage (every link drops everything) of this many seconds in the middle of
    /// the handoff (the user out of coverage); at most the handoff's duration.
    pub outage_s: Option<f64>,
    /// Cap on the number of handoffs (default 10000).
    pub max_handoffs: Option<usize>,
}

/// Start and duration (s) of each handoff in `[start, stop)`.
pub fn handoff_times(
    rng: &mut Rng,
    rate_per_min: f64,
    dur: (f64, f64),
    start: f64,
    stop: f64,
    max: usize,
) -> Vec<(f64, f64)> {
    let mean_gap = 60.0 / rate_per_min;
    let mut out = Vec::new();
    let mut t = start;
    while out.len() < max {
        t += -(1.0 - rng.uniform()).ln() * mean_gap;
        if t >= stop {
            break;
        }
        let d = dur.0 + rng.uniform() * (dur.1 - dur.0);
        out.push((t, d));
        t += d;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renewal process: cycles of an exponential gap (mean 30 s) plus a uniform [10, 20] s
    /// handoff, mean 45 s. Over 100,000 s: 2222 handoffs expected; the cycle's coefficient of
    /// variation is 0.67, so the count's standard deviation is about 0.67·sqrt(2222) = 32 (1.4 %):
    /// 5 % is over 3 standard deviations.
    #[test]
    fn count_matches_the_rate() {
        let mut rng = Rng::stream(1, "handoff/p/0");
        let h = handoff_times(&mut rng, 2.0, (10.0, 20.0), 0.0, 100_000.0, usize::MAX);
        let expected = 100_000.0 / (30.0 + 15.0);
        assert!((h.len() as f64 / expected - 1.0).abs() < 0.05, "{} handoffs, expected {expected}", h.len());
        assert!(h.iter().all(|&(_, d)| (10.0..=20.0).contains(&d)));
        // Handoffs never overlap.
        assert!(h.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0));
        let mut again = Rng::stream(1, "handoff/p/0");
        assert_eq!(handoff_times(&mut again, 2.0, (10.0, 20.0), 0.0, 100_000.0, usize::MAX), h);
    }
}
