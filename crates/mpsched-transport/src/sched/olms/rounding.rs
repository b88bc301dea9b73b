//! Dependent (pipage-style) randomized rounding (Gandhi, Khuller, Parthasarathy, Srinivasan,
//! J. ACM 2006), the scheme OLMS uses to turn the scheduling vector v (0 ≤ vᵢ ≤ 1, Σvᵢ = L)
//! into a set of exactly L paths with Pr[i ∈ set] = vᵢ.
//!
//! While two coordinates i, j are fractional: with α = min(1−vᵢ, vⱼ), β = min(vᵢ, 1−vⱼ), move
//! (vᵢ, vⱼ) to (vᵢ+α, vⱼ−α) with probability β/(α+β), else to (vᵢ−β, vⱼ+β). Each step keeps
//! the sum and the expectation of every coordinate and makes at least one of them integral.

use super::learner::SplitMix;

const EPS: f64 = 1e-9;

/// Rounds `v` in place to 0/1 entries; returns the bitmask of the chosen set.
pub fn dependent_round(v: &mut [f64], rng: &mut SplitMix) -> u16 {
    let frac = |x: f64| x > EPS && x < 1.0 - EPS;
    loop {
        let mut it = (0..v.len()).filter(|&i| frac(v[i]));
        let (Some(i), Some(j)) = (it.next(), it.next()) else { break };
        let alpha = (1.0 - v[i]).min(v[j]);
        let beta = v[i].min(1.0 - v[j]);
        if rng.uniform() * (alpha + beta) < beta {
            v[i] += alpha;
            v[j] -= alpha;
        } else {
            v[i] -= beta;
            v[j] += beta;
        }
    }
    // A lone fractional coordinate left by floating-point error: round it to nearest.
    let mut set = 0u16;
    for (i, x) in v.iter_mut().enumerate() {
        *x = if *x >= 0.5 { 1.0 } else { 0.0 };
        if *x == 1.0 {
            set |= 1 << i;
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every draw has exactly L members, integral coordinates stay put, and the empirical
    /// inclusion frequency of each path equals vᵢ within 4 binomial standard errors
    /// (n = 40 000, so at most 0.01).
    #[test]
    fn marginals_and_set_size() {
        let mut rng = SplitMix::new(3);
        for v0 in [
            vec![1.0 / 6.0, 0.0, 1.0, 5.0 / 6.0],
            vec![0.5, 0.5, 0.5, 0.5],
            vec![0.3, 0.7],
            vec![0.25, 0.25, 0.25, 0.25, 0.5, 0.5],
        ] {
            let l = v0.iter().sum::<f64>().round() as u32;
            let n = 40_000;
            let mut hits = vec![0u32; v0.len()];
            for _ in 0..n {
                let mut v = v0.clone();
                let set = dependent_round(&mut v, &mut rng);
                assert_eq!(set.count_ones(), l, "{v0:?}");
                for (i, h) in hits.iter_mut().enumerate() {
                    if set & (1 << i) != 0 {
                        *h += 1;
                    }
                    if v0[i] == 0.0 || v0[i] == 1.0 {
                        assert_eq!(v[i], v0[i]);
                    }
                }
            }
            for (i, &h) in hits.iter().enumerate() {
                let p = v0[i];
                let se = (p * (1.0 - p) / n as f64).sqrt();
                assert!(
                    (h as f64 / n as f64 - p).abs() <= 4.0 * se + 1e-12,
                    "{v0:?} path {i}: {}",
                    h as f64 / n as f64
                );
            }
        }
    }
}
