//! Workload generators: flows arriving over time (Poisson or periodic) with random sizes
//! (Pareto, lognormal, fixed). A `[[workloads]]` entry expands, when the scenario is resolved,
//! into ordinary `[[flows]]` entries named `<workload>-<i>`, drawn from the RNG stream
//! `workload/<name>` of the scenario seed: the same seed gives the same flows, and adding a
//! workload never changes another one.

use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// Flow-size distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SizeDist {
    /// Every flow the same size.
    Fixed {
        /// Size of each flow.
        bytes: u64,
    },
    /// Pareto with the given mean and shape α > 1: x_m = mean·(α−1)/α, x = x_m / U^(1/α).
    Pareto {
        /// Mean size (bytes).
        mean_bytes: f64,
        /// Shape α (> 1).
        shape: f64,
    },
    /// Lognormal with the given mean and σ of the underlying normal: μ = ln(mean) − σ²/2.
    Lognormal {
        /// Mean size (bytes).
        mean_bytes: f64,
        /// σ of the underlying normal.
        sigma: f64,
    },
}

impl SizeDist {
    /// One size in bytes (at least 1).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let x = match *self {
            SizeDist::Fixed { bytes } => return bytes.max(1),
            SizeDist::Pareto { mean_bytes, shape } => {
                let xm = mean_bytes * (shape - 1.0) / shape;
                // 1 − U is in (0, 1]: no division by zero.
                xm / (1.0 - rng.uniform()).powf(1.0 / shape)
            }
            SizeDist::Lognormal { mean_bytes, sigma } => {
                let mu = mean_bytes.ln() - sigma * sigma / 2.0;
                (mu + sigma * standard_normal(rng)).exp()
            }
        };
        (x.round() as u64).max(1)
    }

    /// Checks the parameters; returns what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            SizeDist::Fixed { bytes: 0 } => Err("bytes: expected > 0".into()),
            SizeDist::Pareto { mean_bytes, shape } if !(mean_bytes >= 1.0 && shape > 1.0 && shape.is_finite()) => {
                Err(format!("expected mean_bytes >= 1 and shape > 1 (finite mean), got mean_bytes = {mean_bytes}, shape = {shape}"))
            }
            SizeDist::Lognormal { mean_bytes, sigma } if !(mean_bytes >= 1.0 && sigma >= 0.0 && sigma.is_finite()) => {
                Err(format!("expected mean_bytes >= 1 and sigma >= 0, got mean_bytes = {mean_bytes}, sigma = {sigma}"))
            }
            _ => Ok(()),
        }
    }
}

/// Box–Muller transform (one of the two normals).
fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.uniform();
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Arrival times in seconds of a workload between `start` and `stop`: Poisson with
/// `rate_per_s`, or every `period_s`. At most `max` arrivals.
pub fn arrivals(
    rng: &mut Rng,
    poisson_rate: Option<f64>,
    period: Option<f64>,
    start: f64,
    stop: f64,
    max: usize,
) -> Vec<f64> {
    let mut out = Vec::new();
    let mut t = start;
    loop {
        match (poisson_rate, period) {
            (Some(rate), _) => t += -(1.0 - rng.uniform()).ln() / rate,
            (None, Some(p)) => {
                if !out.is_empty() {
                    t += p;
                }
            }
            (None, None) => unreachable!("validated"),
        }
        if t >= stop || out.len() >= max {
            return out;
        }
        out.push(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean(d: &SizeDist, n: usize) -> f64 {
        let mut rng = Rng::new(11);
        (0..n).map(|_| d.sample(&mut rng) as f64).sum::<f64>() / n as f64
    }

    /// Sample means within 5% of the target (shape 2.5 has finite variance, so the mean of
    /// 200,000 draws is within about 1% with overwhelming probability).
    #[test]
    fn pareto_and_lognormal_means() {
        let m = mean(&SizeDist::Pareto { mean_bytes: 57_000.0, shape: 2.5 }, 200_000);
        assert!((m / 57_000.0 - 1.0).abs() < 0.05, "pareto mean {m}");
        let m = mean(&SizeDist::Lognormal { mean_bytes: 1e6, sigma: 1.0 }, 200_000);
        assert!((m / 1e6 - 1.0).abs() < 0.05, "lognormal mean {m}");
        // MPTCP-RL's short flows: Pareto, mean 57 KB, shape 1.2 (heavy tail: only a loose check
        // on the median, x_m·2^(1/α) = 9.5 KB·1.78 = 16.9 KB).
        let d = SizeDist::Pareto { mean_bytes: 57_000.0, shape: 1.2 };
        let mut rng = Rng::new(5);
        let mut v: Vec<u64> = (0..100_001).map(|_| d.sample(&mut rng)).collect();
        v.sort_unstable();
        let median = v[50_000] as f64;
        assert!((median / 16_930.0 - 1.0).abs() < 0.05, "median {median}");
    }

    #[test]
    fn poisson_arrivals_have_the_right_rate() {
        let mut rng = Rng::new(3);
        let a = arrivals(&mut rng, Some(50.0), None, 0.0, 1000.0, usize::MAX);
        let rate = a.len() as f64 / 1000.0;
        // Poisson count over 1000 s: sd = sqrt(50000) = 224 => 0.45% of 50,000.
        assert!((rate / 50.0 - 1.0).abs() < 0.02, "rate {rate}");
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        let p = arrivals(&mut rng, None, Some(0.1), 1.0, 2.0, usize::MAX);
        assert_eq!(p.len(), 10);
        assert!((p[9] - 1.9).abs() < 1e-9);
    }
}
