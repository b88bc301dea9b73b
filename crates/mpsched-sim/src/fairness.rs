//! Jain's fairness index (R. Jain, D.-M. Chiu, W. Hawe, "A quantitative measure of fairness and
//! discrimination for resource allocation in shared computer systems", DEC-TR-301, 1984, eq. 1):
//! J(x) = (Σ xᵢ)² / (n · Σ xᵢ²). J is 1 when every xᵢ is the same and 1/n when one of n gets
//! everything; it does not depend on the unit (J(c·x) = J(x) for c > 0). DRL-CC's Fig. 3b
//! computes it over the goodputs of all MPTCP flows (drl-cc.txt, §V-B, Scenario 1).

/// Jain's fairness index of the allocations `xs` (each finite and >= 0).
///
/// `None` when it is not defined: no allocation (n = 0), or every allocation 0 (0 / 0: nothing
/// was shared, so neither "fair" nor "unfair"). Otherwise a value in [1/n, 1] (clamped there
/// against rounding).
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let n = xs.len();
    debug_assert!(xs.iter().all(|x| x.is_finite() && *x >= 0.0), "allocations must be finite and >= 0");
    let max = xs.iter().copied().fold(0.0f64, f64::max);
    if n == 0 || max <= 0.0 {
        return None;
    }
    // Divided by the largest value first: no overflow of the squares, no underflow to 0.
    let (sum, sum_sq) = xs.iter().fold((0.0, 0.0), |(s, q), &x| {
        let y = x / max;
        (s + y, q + y * y)
    });
    let j = sum * sum / (n as f64 * sum_sq);
    Some(j.clamp(1.0 / n as f64, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hand_computed_values() {
        assert_eq!(jain_index(&[3.0, 3.0, 3.0]), Some(1.0));
        assert_eq!(jain_index(&[5.0]), Some(1.0));
        // One of two gets everything: 1/2; one of four: 1/4.
        assert_eq!(jain_index(&[2.0, 0.0]), Some(0.5));
        assert_eq!(jain_index(&[0.0, 7.0, 0.0, 0.0]), Some(0.25));
        // (1 + 2 + 3)² / (3 · (1 + 4 + 9)) = 36 / 42 = 6/7.
        let j = jain_index(&[1.0, 2.0, 3.0]).unwrap();
        assert!((j - 6.0 / 7.0).abs() < 1e-15, "{j}");
        // (1 + 3)² / (2 · 10) = 0.8.
        let j = jain_index(&[1.0, 3.0]).unwrap();
        assert!((j - 0.8).abs() < 1e-15, "{j}");
    }

    #[test]
    fn undefined_without_allocations_or_with_all_zero() {
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0]), None);
        assert_eq!(jain_index(&[0.0, 0.0, 0.0]), None);
    }

    #[test]
    fn extreme_magnitudes() {
        assert_eq!(jain_index(&[1e300, 1e300]), Some(1.0));
        assert_eq!(jain_index(&[1e-300, 0.0]), Some(0.5));
        let j = jain_index(&[f64::MAX, f64::MAX / 2.0]).unwrap();
        assert!((j - 0.9).abs() < 1e-15, "{j}");
    }

    proptest! {
        #[test]
        fn bounded_by_one_over_n_and_one(xs in prop::collection::vec(0.0f64..1e6, 1..40)) {
            let n = xs.len() as f64;
            match jain_index(&xs) {
                None => prop_assert!(xs.iter().all(|&x| x == 0.0)),
                Some(j) => prop_assert!((1.0 / n..=1.0).contains(&j), "J = {} for n = {}", j, n),
            }
        }

        #[test]
        fn scale_invariant(xs in prop::collection::vec(0.0f64..1e6, 1..40), c in 1e-6f64..1e6) {
            let scaled: Vec<f64> = xs.iter().map(|x| x * c).collect();
            match (jain_index(&xs), jain_index(&scaled)) {
                (Some(a), Some(b)) => prop_assert!((a - b).abs() <= 1e-12, "{} vs {}", a, b),
                (a, b) => prop_assert_eq!(a, b),
            }
        }

        #[test]
        fn equal_allocations_are_perfectly_fair(x in 1e-9f64..1e9, n in 1usize..50) {
            prop_assert_eq!(jain_index(&vec![x; n]), Some(1.0));
        }
    }
}
