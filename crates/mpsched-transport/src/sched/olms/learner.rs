//! OLMS path-characteristic learning (Cai et al., IEEE TNSE 2025, §III-A..C): per-path statistics
//! as generalized Bernoulli trials, Thompson sampling from Beta(S+1, N−S+1) posteriors, and the
//! Path Characteristic Measurements Monitor (Algorithm 2).
//!
//! Everything here is deterministic given the seed: a SplitMix64 generator (Vigna's public-domain
//! definition), Box–Muller normals and Marsaglia–Tsang gammas, Beta = Ga/(Ga+Gb).

/// SplitMix64: a small, fast, full-period 64-bit generator; plenty for sampling decisions.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }
    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1), 53 bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in (0, 1].
    #[inline]
    fn uniform_pos(&mut self) -> f64 {
        1.0 - self.uniform()
    }
    /// Standard normal (Box–Muller, one of the pair).
    pub fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform_pos(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
    /// Gamma(shape, 1) for shape >= 1 (Marsaglia & Tsang 2000).
    pub fn gamma(&mut self, shape: f64) -> f64 {
        debug_assert!(shape >= 1.0);
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = self.uniform_pos();
            if u < 1.0 - 0.0331 * x * x * x * x || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
                return d * v;
            }
        }
    }
    /// Beta(a, b) for a, b >= 1.
    pub fn beta(&mut self, a: f64, b: f64) -> f64 {
        let x = self.gamma(a);
        let y = self.gamma(b);
        x / (x + y)
    }
}

/// Monitor parameters (Algorithm 2). The paper's experiments use q = 20, δ = 3, h = 3.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MonitorParams {
    /// Run the monitor (Algorithm 2) at all.
    pub enabled: bool,
    /// Measurements ignored after a (re)initialization.
    pub q: u64,
    /// Deviation threshold in posterior standard deviations.
    pub delta: f64,
    /// Reset when more than `h` consecutive measurements deviated.
    pub h: u32,
}

impl Default for MonitorParams {
    fn default() -> Self {
        MonitorParams { enabled: true, q: 20, delta: 3.0, h: 3 }
    }
}

/// One characteristic (bandwidth or RTT) of one path: Bernoulli successes S out of N trials and
/// the monitor's deviation counter c.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stat {
    /// Successes Sᴮ / Sᴿ.
    pub s: u64,
    /// Trials Nᴮ / Nᴿ.
    pub n: u64,
    /// Consecutive deviations seen by the monitor.
    pub c: u32,
    /// Times the monitor reset the statistics.
    pub resets: u64,
}

impl Stat {
    /// Thompson sample from Beta(S+1, N−S+1) (Algorithm 1 lines 6-7).
    pub fn sample(&self, rng: &mut SplitMix) -> f64 {
        rng.beta((self.s + 1) as f64, (self.n - self.s + 1) as f64)
    }
    /// Posterior mean (S+1)/(N+2) and standard deviation
    /// sqrt((S+1)(N−S+1) / ((N+2)²(N+3))) of Beta(S+1, N−S+1) (Algorithm 2 line 4; the paper
    /// prints the mean as (S+1)/N, we use the Beta mean whose variance it gives).
    pub fn mean_sd(&self) -> (f64, f64) {
        let (a, b) = ((self.s + 1) as f64, (self.n - self.s + 1) as f64);
        let n2 = a + b;
        (a / n2, (a * b / (n2 * n2 * (n2 + 1.0))).sqrt())
    }
    /// MONITOR (Algorithm 2) then the Bernoulli update (Algorithm 1 lines 16-18) with a
    /// measurement `x` in [0, 1]. Returns true if the statistics were reinitialized. The deviation
    /// counter counts *consecutive* deviations (paper §V: "only if these deviations persist for h
    /// consecutive monitoring intervals"); Algorithm 2 as printed never clears it otherwise.
    pub fn observe(&mut self, x: f64, m: &MonitorParams, rng: &mut SplitMix) -> bool {
        let x = x.clamp(0.0, 1.0);
        let mut reset = false;
        if m.enabled && self.n >= m.q {
            let (mu, sd) = self.mean_sd();
            if (x - mu).abs() > m.delta * sd {
                self.c += 1;
                if self.c > m.h {
                    self.s = 0;
                    self.n = 0;
                    self.c = 0;
                    self.resets += 1;
                    reset = true;
                }
            } else {
                self.c = 0;
            }
        }
        if rng.uniform() < x {
            self.s += 1;
        }
        self.n += 1;
        reset
    }
}

/// Bandwidth and RTT statistics of one path.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PathStats {
    /// Bandwidth statistics.
    pub bw: Stat,
    /// RTT statistics.
    pub rtt: Stat,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sample means of Beta(a, b) match a/(a+b) within 4 standard errors (n = 20 000 draws, the
    /// sd of Beta(3, 7) is 0.138, so the standard error is 0.001), and every draw lies in [0, 1].
    #[test]
    fn beta_sampler_mean() {
        let mut rng = SplitMix::new(1);
        for (a, b) in [(1.0, 1.0), (3.0, 7.0), (50.0, 10.0), (1.0, 400.0)] {
            let n = 20_000;
            let mut sum = 0.0;
            for _ in 0..n {
                let x = rng.beta(a, b);
                assert!((0.0..=1.0).contains(&x));
                sum += x;
            }
            let mean = a / (a + b);
            let sd = (a * b / ((a + b) * (a + b) * (a + b + 1.0))).sqrt();
            assert!((sum / n as f64 - mean).abs() < 4.0 * sd / (n as f64).sqrt(), "Beta({a},{b})");
        }
    }

    /// Beta(S+1, N−S+1) with S = 30, N = 100: mean 31/102, sd sqrt(31·71/(102²·103)).
    #[test]
    fn posterior_mean_sd() {
        let st = Stat { s: 30, n: 100, c: 0, resets: 0 };
        let (m, sd) = st.mean_sd();
        assert!((m - 31.0 / 102.0).abs() < 1e-12);
        assert!((sd - (31.0f64 * 71.0 / (102.0 * 102.0 * 103.0)).sqrt()).abs() < 1e-12);
    }

    /// Algorithm 2 with q = 20, δ = 3, h = 3: the first q measurements are never checked; after
    /// that a measurement far from the posterior mean bumps c, a close one clears it, and the
    /// (h+1)-th consecutive deviation reinitializes S and N: detection delay h + 1 = 4 slots.
    #[test]
    fn monitor_resets_after_h_plus_one_consecutive_deviations() {
        let m = MonitorParams::default();
        let mut rng = SplitMix::new(7);
        let mut st = Stat::default();
        for _ in 0..200 {
            assert!(!st.observe(0.2, &m, &mut rng));
        }
        // Posterior mean ≈ 0.2, sd ≈ 0.028: 0.9 is 25 sd away.
        for k in 1..=3 {
            assert!(!st.observe(0.9, &m, &mut rng));
            assert_eq!(st.c, k);
        }
        assert!(!st.observe(0.2, &m, &mut rng), "a close measurement clears the counter");
        assert_eq!(st.c, 0);
        for _ in 0..3 {
            assert!(!st.observe(0.9, &m, &mut rng));
        }
        assert!(st.observe(0.9, &m, &mut rng), "4th consecutive deviation resets");
        assert_eq!((st.n, st.c, st.resets), (1, 0, 1), "reset, then this measurement counted");
        let off = MonitorParams { enabled: false, ..m };
        let mut st2 = Stat::default();
        for _ in 0..100 {
            st2.observe(0.2, &off, &mut rng);
        }
        for _ in 0..10 {
            assert!(!st2.observe(0.9, &off, &mut rng), "monitor off: never resets");
        }
    }
}
