//! Deterministic random-number streams, one per component.
//!
//! Seeds are derived from the scenario seed and a component name ("link/wifi-up/loss"), so adding
//! a flow or a link never shifts another component's stream. Generator: xoshiro256++ seeded by
//! SplitMix64 (both public-domain algorithms by Blackman and Vigna; written here from their
//! published definitions).

/// SplitMix64 step: used for seeding and for hashing names into seeds.
#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Seed of the stream `name` under `scenario_seed` (FNV-1a over the name, mixed with the seed).
pub fn stream_seed(scenario_seed: u64, name: &str) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in name.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    let mut s = h ^ scenario_seed.rotate_left(32) ^ scenario_seed;
    splitmix64(&mut s)
}

/// xoshiro256++ generator (Blackman & Vigna), seeded through SplitMix64.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose state is expanded from `seed` with SplitMix64.
    pub fn new(seed: u64) -> Self {
        let mut st = seed;
        let s = [splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st)];
        Rng { s }
    }

    /// A stream for component `name` of a scenario seeded with `scenario_seed`.
    pub fn stream(scenario_seed: u64, name: &str) -> Self {
        Rng::new(stream_seed(scenario_seed, name))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let mut a = Rng::stream(7, "link/a/loss");
        let mut b = Rng::stream(7, "link/a/loss");
        let mut c = Rng::stream(7, "link/b/loss");
        let mut d = Rng::stream(8, "link/a/loss");
        let va: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        let vd: Vec<u64> = (0..8).map(|_| d.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
        assert_ne!(va, vd);
    }

    #[test]
    fn uniform_mean_and_chance_rate() {
        let mut r = Rng::new(42);
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "mean {mean}");
        let hits = (0..n).filter(|_| r.chance(0.01)).count() as f64 / n as f64;
        // Binomial sd = sqrt(0.01*0.99/2e5) = 2.2e-4; allow 5 sd.
        assert!((hits - 0.01).abs() < 0.0011, "rate {hits}");
    }
}
