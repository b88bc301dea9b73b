//! The per-slot linear programs of OLMS (§IV-A eq. (4), §IV-B eq. (8)), solved with `good_lp`'s
//! pure-Rust `microlp` backend.
//!
//! * maxRTT constrained: maximize vᵀb̂ s.t. v ∈ χ (0 ≤ vᵢ ≤ 1, 1ᵀv = L), r̂ᵢ·vᵢ ≤ C_r for all i.
//! * bandwidth constrained: minimize maxᵢ vᵢ·r̂ᵢ s.t. v ∈ χ, vᵀb̂ ≤ C_b, written as an LP with an
//!   epigraph variable z: minimize z s.t. vᵢ·r̂ᵢ ≤ z.
//!
//! `None` = infeasible (the caller falls back to minRTT, as the paper prescribes).

#[cfg(feature = "olms")]
use good_lp::{microlp, variable, Expression, ProblemVariables, Solution, SolverModel, Variable};

/// The application's constraint, in normalized units ([0, 1]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum App {
    /// Maximize bandwidth, the scheduled path's RTT at most `c_r`.
    MaxRtt {
        /// RTT bound, normalized.
        c_r: f64,
    },
    /// Minimize the maximum RTT, the scheduled bandwidth at most `c_b`.
    Bandwidth {
        /// Bandwidth bound, normalized.
        c_b: f64,
    },
}

impl App {
    /// Objective value of `v` under characteristics (b, r): vᵀb (maxRTT app) or maxᵢ vᵢrᵢ.
    pub fn objective(&self, v: &[f64], b: &[f64], r: &[f64]) -> f64 {
        match self {
            App::MaxRtt { .. } => v.iter().zip(b).map(|(x, y)| x * y).sum(),
            App::Bandwidth { .. } => v.iter().zip(r).map(|(x, y)| x * y).fold(0.0, f64::max),
        }
    }
}

/// Without the `olms` cargo feature there is no LP solver (and OLMS is not registered): every
/// LP reads as infeasible.
#[cfg(not(feature = "olms"))]
pub fn solve(_app: App, _b: &[f64], _r: &[f64], _l: f64) -> Option<Vec<f64>> {
    None
}

/// Solves the application's LP for the scheduling vector over `b.len()` paths with `l` paths
/// per set. Returns `None` when infeasible (or if the solver fails).
#[cfg(feature = "olms")]
pub fn solve(app: App, b: &[f64], r: &[f64], l: f64) -> Option<Vec<f64>> {
    let k = b.len();
    debug_assert_eq!(k, r.len());
    let mut vars = ProblemVariables::new();
    let v: Vec<Variable> = (0..k).map(|_| vars.add(variable().min(0.0).max(1.0))).collect();
    let sum: Expression = v.iter().map(|&x| Expression::from(x)).sum();
    let sol = match app {
        App::MaxRtt { c_r } => {
            let obj: Expression = v.iter().zip(b).map(|(&x, &bi)| bi * x).sum();
            let mut m = vars.maximise(obj).using(microlp).with(sum.eq(l));
            for i in 0..k {
                m = m.with((r[i] * v[i]).leq(c_r));
            }
            m.solve().ok()?
        }
        App::Bandwidth { c_b } => {
            let z = vars.add(variable().min(0.0));
            let bw: Expression = v.iter().zip(b).map(|(&x, &bi)| bi * x).sum();
            let mut m = vars.minimise(z).using(microlp).with(sum.eq(l)).with(bw.leq(c_b));
            for i in 0..k {
                m = m.with((r[i] * v[i] - z).leq(0.0));
            }
            m.solve().ok()?
        }
    };
    Some(v.iter().map(|&x| sol.value(x).clamp(0.0, 1.0)).collect())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sched::olms::learner::SplitMix;

    /// Brute force: enumerate every vertex of the feasible polytope (n tight constraints out of
    /// the inequalities plus the equality 1ᵀv = L, solved by Gaussian elimination), keep the best
    /// feasible one. Exact for LPs with a bounded feasible set, which ours are.
    pub(crate) fn brute_force(app: App, b: &[f64], r: &[f64], l: f64) -> Option<f64> {
        let k = b.len();
        let n = match app {
            App::MaxRtt { .. } => k,
            App::Bandwidth { .. } => k + 1,
        };
        // Inequalities a·x <= c.
        let mut ineq: Vec<(Vec<f64>, f64)> = Vec::new();
        let unit = |i: usize, s: f64| {
            let mut a = vec![0.0; n];
            a[i] = s;
            a
        };
        for i in 0..k {
            ineq.push((unit(i, 1.0), 1.0));
            ineq.push((unit(i, -1.0), 0.0));
        }
        match app {
            App::MaxRtt { c_r } => {
                for (i, &ri) in r.iter().enumerate().take(k) {
                    ineq.push((unit(i, ri), c_r));
                }
            }
            App::Bandwidth { c_b } => {
                for (i, &ri) in r.iter().enumerate().take(k) {
                    let mut a = unit(i, ri);
                    a[k] = -1.0;
                    ineq.push((a, 0.0));
                }
                let mut a = vec![0.0; n];
                a[..k].copy_from_slice(b);
                ineq.push((a, c_b));
                ineq.push((unit(k, -1.0), 0.0));
            }
        }
        let mut eq = vec![0.0; n];
        eq[..k].iter_mut().for_each(|x| *x = 1.0);
        let m = ineq.len();
        let mut best: Option<f64> = None;
        let mut idx: Vec<usize> = (0..n - 1).collect();
        loop {
            // Solve the n×n system.
            let mut rows: Vec<Vec<f64>> = idx
                .iter()
                .map(|&j| {
                    let mut row = ineq[j].0.clone();
                    row.push(ineq[j].1);
                    row
                })
                .collect();
            let mut e = eq.clone();
            e.push(l);
            rows.push(e);
            if let Some(x) = gauss(rows, n) {
                let feasible = ineq.iter().all(|(a, c)| a.iter().zip(&x).map(|(p, q)| p * q).sum::<f64>() <= c + 1e-9)
                    && (x[..k].iter().sum::<f64>() - l).abs() < 1e-9;
                if feasible {
                    let val = match app {
                        App::MaxRtt { .. } => -app.objective(&x[..k], b, r),
                        App::Bandwidth { .. } => app.objective(&x[..k], b, r),
                    };
                    best = Some(best.map_or(val, |bv: f64| bv.min(val)));
                }
            }
            // Next combination of n−1 out of m.
            let mut i = n - 1;
            loop {
                if i == 0 {
                    return best.map(|v| match app {
                        App::MaxRtt { .. } => -v,
                        App::Bandwidth { .. } => v,
                    });
                }
                i -= 1;
                if idx[i] < m - (n - 1 - i) {
                    idx[i] += 1;
                    for j in i + 1..n - 1 {
                        idx[j] = idx[j - 1] + 1;
                    }
                    break;
                }
            }
        }
    }

    fn gauss(mut a: Vec<Vec<f64>>, n: usize) -> Option<Vec<f64>> {
        for c in 0..n {
            let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
            if a[p][c].abs() < 1e-12 {
                return None;
            }
            a.swap(c, p);
            let pivot = a[c].clone();
            for (i, row) in a.iter_mut().enumerate().take(n) {
                if i != c {
                    let f = row[c] / pivot[c];
                    for (x, &pv) in row[c..=n].iter_mut().zip(&pivot[c..=n]) {
                        *x -= f * pv;
                    }
                }
            }
        }
        Some((0..n).map(|i| a[i][n] / a[i][i]).collect())
    }

    /// The paper's Application I (§VI-B): b = (0.3, 0.2, 0.6, 0.4), r = (0.2, 0.3, 0.5, 0.6),
    /// C_r = 0.5, L = 2 gives v* = (1/6, 0, 1, 5/6) and OPT_max = 0.98 (0.05 + 0.6 + 1/3).
    #[test]
    fn paper_application_one() {
        let (b, r) = ([0.3, 0.2, 0.6, 0.4], [0.2, 0.3, 0.5, 0.6]);
        let v = solve(App::MaxRtt { c_r: 0.5 }, &b, &r, 2.0).unwrap();
        for (x, y) in v.iter().zip([1.0 / 6.0, 0.0, 1.0, 5.0 / 6.0]) {
            assert!((x - y).abs() < 1e-9, "{v:?}");
        }
        let opt = App::MaxRtt { c_r: 0.5 }.objective(&v, &b, &r);
        assert!((opt - (0.05 + 0.6 + 1.0 / 3.0)).abs() < 1e-9);
    }

    /// Application II (§VI-C): b = (0.3, 0.1, 0.4, 0.6), r = (0.3, 0.3, 0.4, 0.1), C_b = 0.4,
    /// L = 2: the only feasible sets put all weight on paths 1 and 2 (their b sum to exactly
    /// 0.4), v* = (1, 1, 0, 0), OPT_min = 0.3.
    #[test]
    fn paper_application_two() {
        let (b, r) = ([0.3, 0.1, 0.4, 0.6], [0.3, 0.3, 0.4, 0.1]);
        let app = App::Bandwidth { c_b: 0.4 };
        let v = solve(app, &b, &r, 2.0).unwrap();
        for (x, y) in v.iter().zip([1.0, 1.0, 0.0, 0.0]) {
            assert!((x - y).abs() < 1e-7, "{v:?}");
        }
        assert!((app.objective(&v, &b, &r) - 0.3).abs() < 1e-7);
        assert_eq!(solve(App::Bandwidth { c_b: 0.39 }, &b, &r, 2.0), None, "two smallest b sum to 0.4 > 0.39");
        assert_eq!(solve(App::MaxRtt { c_r: 0.1 }, &b, &r, 2.0), None, "Σ min(1, C_r/rᵢ) = 2/3 < L");
    }

    /// 2 000 random small slots (K = 2..4 paths, L = 1 or 2 < K, both applications): the solver
    /// agrees with vertex enumeration on feasibility and on the optimal value (to 1e-6), and its
    /// vector satisfies every constraint.
    #[test]
    fn lp_matches_brute_force_on_small_slots() {
        let mut rng = SplitMix::new(42);
        let (mut feasible, mut infeasible) = (0, 0);
        for t in 0..2000 {
            let k = 2 + (t % 3);
            let l = if k > 2 && t % 2 == 0 { 2.0 } else { 1.0 };
            let b: Vec<f64> = (0..k).map(|_| rng.uniform()).collect();
            let r: Vec<f64> = (0..k).map(|_| 0.01 + rng.uniform()).collect();
            let app = if t % 4 < 2 {
                App::MaxRtt { c_r: 0.05 + 0.6 * rng.uniform() }
            } else {
                App::Bandwidth { c_b: 0.1 + 1.2 * rng.uniform() }
            };
            let got = solve(app, &b, &r, l);
            let want = brute_force(app, &b, &r, l);
            match (&got, want) {
                (Some(v), Some(w)) => {
                    feasible += 1;
                    let val = app.objective(v, &b, &r);
                    assert!((val - w).abs() < 1e-6, "slot {t}: {app:?} b={b:?} r={r:?} L={l}: lp {val} vs brute {w}");
                    assert!((v.iter().sum::<f64>() - l).abs() < 1e-6);
                    match app {
                        App::MaxRtt { c_r } => assert!(v.iter().zip(&r).all(|(x, y)| x * y <= c_r + 1e-6)),
                        App::Bandwidth { c_b } => {
                            assert!(v.iter().zip(&b).map(|(x, y)| x * y).sum::<f64>() <= c_b + 1e-6)
                        }
                    }
                }
                (None, None) => infeasible += 1,
                _ => panic!(
                    "slot {t}: feasibility differs: lp {got:?} vs brute {want:?} ({app:?} b={b:?} r={r:?} L={l})"
                ),
            }
        }
        assert!(feasible > 500 && infeasible > 100, "both cases exercised: {feasible} / {infeasible}");
    }
}
