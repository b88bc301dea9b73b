//! Synthetic cellular traces in mahimahi format (one millisecond timestamp per 1500-byte
//! delivery opportunity), from a seeded model:
//!
//! - a Markov-modulated rate: `STATES` states whose rates are `mean · m_k`, with the multipliers
//!   `m_k = exp(variability · z_k)` (`z_k` the 10/30/50/70/90 % quantiles of a standard normal)
//!   normalised to average 1; the process stays in a state for an exponential time (mean
//!   `dwell_s`), then jumps to one of the other states chosen uniformly. Every state is equally
//!   likely in the long run, so the long-run rate is `mean` before outages;
//! - outages (no delivery at all): they start at exponential gaps while the link is up (mean
//!   `60 / outage_per_min` s) and last an exponential time (mean `outage_s`). The fraction of
//!   time in outage is `f = λ·d / (1 + λ·d)`; the rates are scaled by `1 / (1 − f)` so the
//!   long-run mean of the whole trace is `mean_mbps`.
//!
//! The trace's last timestamp is `duration_s` in ms (mahimahi loops a trace at its last
//! timestamp), so an outage at the end is kept in the loop.

use serde::{Deserialize, Serialize};

use crate::link::TRACE_OPPORTUNITY_BYTES;
use crate::ranges::show;
use crate::rng::Rng;
use crate::scenario::{MAX_SEED, MIN_DURATION_S};

/// Number of rate states of the Markov chain.
pub const STATES: usize = 5;
/// Standard-normal quantiles at 10, 30, 50, 70 and 90 %.
const Z: [f64; STATES] = [-1.281_551_6, -0.524_400_5, 0.0, 0.524_400_5, 1.281_551_6];
/// Most delivery opportunities one trace may hold (8 bytes each in memory).
pub const MAX_OPPORTUNITIES: f64 = 20_000_000.0;

/// A synthetic trace as written in a scenario (`trace = { synthetic = { ... } }`) or given to
/// `mpsched trace synth`. Omitted fields take the defaults of [`SynthParams::resolve`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynthSpec {
    /// Long-run mean rate before outages (Mbit/s).
    pub mean_mbps: f64,
    /// Length of the trace (s).
    pub duration_s: Option<f64>,
    /// Spread of the state rates (`m_k = exp(variability · z_k)`).
    pub variability: Option<f64>,
    /// Mean time in a rate state (s).
    pub dwell_s: Option<f64>,
    /// Outages per minute of up time (0: none).
    pub outage_per_min: Option<f64>,
    /// Mean outage length (s).
    pub outage_s: Option<f64>,
    /// Seed of the generator; in a scenario it defaults to one derived from the scenario seed
    /// and the link name.
    pub seed: Option<u64>,
}

/// Validated generator parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthParams {
    /// Long-run mean rate before outages (Mbit/s).
    pub mean_mbps: f64,
    /// Length of the trace (s).
    pub duration_s: f64,
    /// Spread of the state rates.
    pub variability: f64,
    /// Mean time in a rate state (s).
    pub dwell_s: f64,
    /// Outages per minute of up time.
    pub outage_per_min: f64,
    /// Mean outage length (s).
    pub outage_s: f64,
}

impl SynthParams {
    /// Default trace length (s).
    pub const DEFAULT_DURATION_S: f64 = 60.0;
    /// Default rate spread.
    pub const DEFAULT_VARIABILITY: f64 = 0.5;
    /// Default mean time in a rate state (s).
    pub const DEFAULT_DWELL_S: f64 = 2.0;
    /// Default mean outage length (s).
    pub const DEFAULT_OUTAGE_S: f64 = 1.0;

    /// Defaults filled in and every value checked. The error is `(field, what was expected)`.
    pub fn resolve(spec: &SynthSpec) -> Result<SynthParams, (&'static str, String)> {
        let p = SynthParams {
            mean_mbps: spec.mean_mbps,
            duration_s: spec.duration_s.unwrap_or(Self::DEFAULT_DURATION_S),
            variability: spec.variability.unwrap_or(Self::DEFAULT_VARIABILITY),
            dwell_s: spec.dwell_s.unwrap_or(Self::DEFAULT_DWELL_S),
            outage_per_min: spec.outage_per_min.unwrap_or(0.0),
            outage_s: spec.outage_s.unwrap_or(Self::DEFAULT_OUTAGE_S),
        };
        p.validate()?;
        if let Some(seed) = spec.seed.filter(|&s| s > MAX_SEED) {
            return Err(("seed", format!("expected an integer in [0, 2^63 - 1] (TOML's integer range), got {seed}")));
        }
        Ok(p)
    }

    /// Checks every value; the error is `(field, what was expected)`.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let positive = |f: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err((f, format!("expected a positive number, got {}", show(v))))
            }
        };
        positive("mean_mbps", self.mean_mbps)?;
        positive("duration_s", self.duration_s)?;
        positive("dwell_s", self.dwell_s)?;
        positive("outage_s", self.outage_s)?;
        for (f, v) in [("dwell_s", self.dwell_s), ("outage_s", self.outage_s)] {
            if v < MIN_DURATION_S {
                return Err((f, format!("expected at least {MIN_DURATION_S:e} s (1 µs), got {}", show(v))));
            }
        }
        if !(self.variability.is_finite() && (0.0..=3.0).contains(&self.variability)) {
            return Err(("variability", format!("expected a number in [0, 3], got {}", show(self.variability))));
        }
        if !(self.outage_per_min.is_finite() && self.outage_per_min >= 0.0) {
            return Err(("outage_per_min", format!("expected a number >= 0, got {}", show(self.outage_per_min))));
        }
        if self.duration_s < 0.001 {
            return Err((
                "duration_s",
                format!("expected at least 0.001 s (one millisecond), got {}", show(self.duration_s)),
            ));
        }
        let opportunities = self.mean_mbps * 1e6 * self.duration_s / (8.0 * TRACE_OPPORTUNITY_BYTES as f64);
        if opportunities > MAX_OPPORTUNITIES {
            return Err((
                "duration_s",
                format!(
                    "the trace would hold {opportunities:.0} delivery opportunities, expected at most {MAX_OPPORTUNITIES:.0} \
                     (mean_mbps × duration_s <= 240000; a trace loops, a shorter one will do)"
                ),
            ));
        }
        // The generator's loops run once per state change and per outage: bound their counts.
        let switches = self.duration_s / self.dwell_s;
        if switches > MAX_OPPORTUNITIES {
            return Err((
                "dwell_s",
                format!(
                    "the trace would change state {} times, expected at most {MAX_OPPORTUNITIES:.0} \
                     (dwell_s >= duration_s / {MAX_OPPORTUNITIES:.0}), got dwell_s = {}",
                    show(switches),
                    show(self.dwell_s)
                ),
            ));
        }
        let outages = self.outage_per_min * self.duration_s / 60.0;
        if outages > MAX_OPPORTUNITIES {
            return Err((
                "outage_per_min",
                format!(
                    "the trace would hold about {} outages, expected at most {MAX_OPPORTUNITIES:.0}",
                    show(outages)
                ),
            ));
        }
        // Outages scale the rate outside them up by 1 / (1 − f) = 1 + λ·d: bound the opportunities of a
        // trace without any outage at that rate (what the generator may have to write).
        let scale = 1.0 + self.outage_per_min / 60.0 * self.outage_s;
        if opportunities * scale > MAX_OPPORTUNITIES {
            return Err((
                "outage_s",
                format!(
                    "outages would take {:.0}% of the time: between them the rate would be {} × mean_mbps, \
                     {} delivery opportunities, expected at most {MAX_OPPORTUNITIES:.0}",
                    self.outage_fraction() * 100.0,
                    approx(scale),
                    approx(opportunities * scale)
                ),
            ));
        }
        Ok(())
    }

    /// The state rate multipliers (average 1).
    pub fn multipliers(&self) -> [f64; STATES] {
        let mut m = Z.map(|z| (self.variability * z).exp());
        let mean = m.iter().sum::<f64>() / STATES as f64;
        for x in &mut m {
            *x /= mean;
        }
        m
    }

    /// Long-run fraction of time in outage.
    pub fn outage_fraction(&self) -> f64 {
        let ld = self.outage_per_min / 60.0 * self.outage_s;
        ld / (1.0 + ld)
    }
}

/// `x` with about three significant digits: `1.33`, `1.67e298`.
fn approx(x: f64) -> String {
    if x.abs() < 1e6 {
        format!("{}", (x * 100.0).round() / 100.0)
    } else {
        format!("{x:.2e}")
    }
}

fn exponential(rng: &mut Rng, mean: f64) -> f64 {
    -(1.0 - rng.uniform()).ln() * mean
}

/// The delivery-opportunity timestamps (ms) of a trace from `p` and `seed`. The rate process
/// and the outages draw from separate streams of `seed`.
pub fn generate(p: &SynthParams, seed: u64) -> Vec<u64> {
    let mut rate_rng = Rng::stream(seed, "tracegen/rate");
    let mut outage_rng = Rng::stream(seed, "tracegen/outage");
    let duration_ms = ((p.duration_s * 1000.0).round() as u64).max(1);
    let mult = p.multipliers();
    // Bytes per ms of each state, outages compensated.
    let scale = 1.0 / (1.0 - p.outage_fraction());
    let bytes_per_ms = mult.map(|m| p.mean_mbps * 1e6 / 8.0 / 1000.0 * m * scale);
    let dwell_ms = p.dwell_s * 1000.0;
    let outage_ms = p.outage_s * 1000.0;
    let gap_ms = if p.outage_per_min > 0.0 { 60_000.0 / p.outage_per_min } else { f64::INFINITY };

    let mut state = (rate_rng.uniform() * STATES as f64) as usize % STATES;
    let mut next_switch = exponential(&mut rate_rng, dwell_ms);
    let mut outage_start = if gap_ms.is_finite() { exponential(&mut outage_rng, gap_ms) } else { f64::INFINITY };
    let mut outage_end = f64::INFINITY;
    let mut credit = 0.0f64;
    let step = TRACE_OPPORTUNITY_BYTES as f64;
    let mut out = Vec::with_capacity((p.mean_mbps * 1e6 / 8.0 / step * p.duration_s * 1.05) as usize + 2);
    for t in 1..=duration_ms {
        let now = t as f64;
        while now > next_switch {
            // Jump to one of the other states, uniformly.
            let k = (rate_rng.uniform() * (STATES - 1) as f64) as usize % (STATES - 1);
            state = if k >= state { k + 1 } else { k };
            next_switch += exponential(&mut rate_rng, dwell_ms);
        }
        // Outages: [start, end) in ms, the next one starting an exponential gap after the end.
        loop {
            if now >= outage_end {
                outage_start = outage_end + exponential(&mut outage_rng, gap_ms);
                outage_end = f64::INFINITY;
            } else if outage_end.is_infinite() && now >= outage_start {
                outage_end = outage_start + exponential(&mut outage_rng, outage_ms);
            } else {
                break;
            }
        }
        if outage_end.is_finite() {
            credit = 0.0;
            continue;
        }
        credit += bytes_per_ms[state];
        while credit >= step {
            out.push(t);
            credit -= step;
        }
    }
    if out.last() != Some(&duration_ms) {
        out.push(duration_ms);
    }
    out
}

/// A trace as mahimahi text: one timestamp per line.
pub fn to_text(times: &[u64]) -> String {
    let mut s = String::with_capacity(times.len() * 7);
    for t in times {
        s.push_str(&t.to_string());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_trace;

    fn params(mean: f64, duration_s: f64) -> SynthParams {
        SynthParams::resolve(&SynthSpec {
            mean_mbps: mean,
            duration_s: Some(duration_s),
            variability: None,
            dwell_s: None,
            outage_per_min: None,
            outage_s: None,
            seed: None,
        })
        .unwrap()
    }

    fn mean_mbps(times: &[u64]) -> f64 {
        let period_ms = *times.last().unwrap() as f64;
        times.len() as f64 * 1500.0 * 8.0 / (period_ms / 1000.0) / 1e6
    }

    /// Over an hour the rate process visits ~1800 states (dwell 2 s); the sample mean of the
    /// multipliers (σ ≈ 0.5) then has a standard error of ~1.7 %: 5 % is about 3 standard errors.
    #[test]
    fn long_trace_mean_matches_mean_mbps() {
        for seed in [1, 2, 3] {
            let t = generate(&params(12.0, 3600.0), seed);
            let m = mean_mbps(&t);
            assert!((m / 12.0 - 1.0).abs() < 0.05, "seed {seed}: mean {m} Mbit/s");
        }
        // With outages (2 per minute of 1.5 s on average: 4.8 % of the time down), the rates
        // are scaled up so that the mean of the whole trace is still mean_mbps.
        let mut p = params(30.0, 3600.0);
        p.outage_per_min = 2.0;
        p.outage_s = 1.5;
        assert!((p.outage_fraction() - 0.05 / 1.05).abs() < 1e-12);
        let t = generate(&p, 9);
        let m = mean_mbps(&t);
        assert!((m / 30.0 - 1.0).abs() < 0.05, "mean with outages {m}");
        // ... and there are gaps: the longest one is an outage of over a second.
        let longest = t.windows(2).map(|w| w[1] - w[0]).max().unwrap();
        assert!(longest > 1000, "longest gap {longest} ms");
    }

    #[test]
    fn zero_variability_is_a_constant_rate() {
        let mut p = params(12.0, 10.0);
        p.variability = 0.0;
        let t = generate(&p, 4);
        // 12 Mbit/s = 1 packet per ms exactly: one opportunity in each of the 10,000 ms.
        assert_eq!(t.len(), 10_000);
        assert_eq!(t[0], 1);
        assert_eq!(*t.last().unwrap(), 10_000);
    }

    #[test]
    fn deterministic_for_a_seed_and_parseable() {
        let p = params(8.0, 30.0);
        let a = generate(&p, 7);
        assert_eq!(a, generate(&p, 7));
        assert_ne!(a, generate(&p, 8));
        let text = to_text(&a);
        let parsed = parse_trace(&text, "synth").unwrap();
        assert_eq!(parsed.times_ms, a);
        // The loop period is the duration.
        assert_eq!(parsed.period_ms(), 30_000);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let mut s = SynthSpec {
            mean_mbps: -1.0,
            duration_s: None,
            variability: None,
            dwell_s: None,
            outage_per_min: None,
            outage_s: None,
            seed: None,
        };
        assert_eq!(SynthParams::resolve(&s).unwrap_err().0, "mean_mbps");
        s.mean_mbps = 10.0;
        s.variability = Some(-0.1);
        assert_eq!(SynthParams::resolve(&s).unwrap_err().0, "variability");
        s.variability = None;
        s.duration_s = Some(1e9);
        assert_eq!(SynthParams::resolve(&s).unwrap_err().0, "duration_s");
        s.duration_s = Some(1e-9);
        assert_eq!(
            SynthParams::resolve(&s).unwrap_err(),
            ("duration_s", "expected at least 0.001 s (one millisecond), got 1e-9".into())
        );
        // Tiny dwell times and outages (the generator would loop for ever) are refused.
        s.duration_s = None;
        s.dwell_s = Some(1e-9);
        assert_eq!(
            SynthParams::resolve(&s).unwrap_err(),
            ("dwell_s", "expected at least 1e-6 s (1 µs), got 1e-9".into())
        );
        s.dwell_s = Some(1e-6);
        assert_eq!(SynthParams::resolve(&s).unwrap_err().0, "dwell_s");
        s.dwell_s = None;
        s.outage_s = Some(1e-7);
        assert_eq!(SynthParams::resolve(&s).unwrap_err().0, "outage_s");
        s.outage_s = None;
        s.outage_per_min = Some(1e12);
        assert_eq!(SynthParams::resolve(&s).unwrap_err().0, "outage_per_min");
        // Long outages scale the rate between them up (the long-run mean stays mean_mbps): a
        // huge outage_s would make a trace of ~1e300 opportunities (the generator never ends).
        s.outage_per_min = Some(1.0);
        s.outage_s = Some(1e300);
        assert_eq!(
            SynthParams::resolve(&s).unwrap_err(),
            (
                "outage_s",
                "outages would take 100% of the time: between them the rate would be 1.67e298 × mean_mbps, \
                 8.33e302 delivery opportunities, expected at most 20000000"
                    .into()
            )
        );
        // ... while ordinary ones are fine (600 s of 1 Mbit/s, 2 outages per minute of 10 s
        // each: the rate outside them is 1.33 × 1 Mbit/s).
        s.outage_s = Some(10.0);
        s.duration_s = Some(600.0);
        s.mean_mbps = 1.0;
        s.outage_per_min = Some(2.0);
        assert!(SynthParams::resolve(&s).is_ok());
    }
}
