//! The MPTCP transmission model of DMPTCP (Dong et al., "Reducing transport latency for short
//! flows with multipath TCP", JNCA 108, 2018) as MPTCP-RL uses it to pick a flow's path set
//! (Dong et al., MPTCP-RL, section "Paths selection based on the MPTCP transmission model";
//! shared/specs/rl-baselines.md §2).
//!
//! * [`deliverable`]: D_i(n), the bytes path i can deliver in n of its own rounds from its
//!   current window: slow start doubles the window per round up to ssthresh (RFC 5681 §3.1),
//!   congestion avoidance adds one MSS per round, or LIA's coupled increment (RFC 6356 §3) with
//!   the connection's α and total window held at their current values; optionally the window is
//!   capped by the Mathis bound sqrt(3 / (2p)) segments and the total scaled by (1 − p) for a
//!   loss rate p (the loss terms are [unverified]: MPTCP-RL only says the model "considers
//!   fast retransmit and fast recovery").
//! * [`capacity`] and [`choose`]: the set rule. Take the first k candidates of a given order
//!   (srtt for DMPTCP, the policy's probabilities for MPTCP-RL); each member i completes
//!   η_i = floor((T − wait_i) / RTT_i) rounds within the horizon T; C_k = Σ D_i(η_i); the set is
//!   the smallest k with C_k ≥ R (the flow's remaining bytes), all candidates if none.
//!
//! The horizon. MPTCP-RL's text takes T = RTT_k, the RTT of the slowest of the k members
//! ([`Horizon::SlowestMember`]). Read literally, that cannot reproduce the paper's own worked
//! example (16 packets, RTT 20 ms and 80 ms, IW 1: both paths finish at 160 ms, the fast path
//! alone at 100 ms, so the fast path alone is the better set): with k = 1 the horizon is one
//! 20 ms round, C_1 = 1 packet < 16, so the literal rule adds the slow path. DMPTCP's abstract
//! describes the model as estimating "the latency on the path under scheduling and the data
//! amount sent on the other paths simultaneously": a path is worth adding only if the faster
//! ones cannot finish before it delivers anything. [`Horizon::NextCandidate`] (the default)
//! says exactly that: the first k candidates suffice when they deliver R before candidate k + 1
//! completes its first round, T_k = max of the first-round completion times (wait + RTT) of
//! candidates 1..=k+1. It picks the fast path alone in the worked example (tests below). Both
//! horizons grow with k, so C_k is non-decreasing in k and the chosen k never shrinks when R
//! grows (property tests).
//!
//! A candidate that cannot carry data yet (an MP_JOIN subflow waiting for its fourth ACK,
//! RFC 8684 §3.2) has a `wait`: the time before its first round starts.

use super::SubflowSet;

/// One path (subflow) as the model reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathModel {
    /// Round-trip time (the subflow's srtt), nanoseconds; a path with 0 is never a candidate.
    pub rtt_ns: u64,
    /// Time before its first round starts (handshake still to complete), nanoseconds.
    pub wait_ns: u64,
    /// Congestion window, bytes (at least one MSS is assumed).
    pub cwnd: u64,
    /// Slow-start threshold, bytes (`u64::MAX` before the first loss).
    pub ssthresh: u64,
    /// Segment size, bytes.
    pub mss: u64,
    /// Loss rate in [0, 1) for the optional loss correction; 0 = loss-free model.
    pub loss: f64,
}

impl PathModel {
    /// When its first round completes, measured from now.
    pub fn first_round_ns(&self) -> u64 {
        self.wait_ns.saturating_add(self.rtt_ns)
    }
}

/// Congestion-avoidance increment per round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Increase {
    /// One MSS per round (Reno, RFC 5681 §3.1).
    Uncoupled,
    /// LIA (RFC 6356 §3): min(α·w / w_total, 1) MSS per round, with α and the connection's
    /// total window w_total (in segments) held at their values at the time of the estimate.
    Lia {
        /// RFC 6356's α.
        alpha: f64,
        /// Sum of the windows of the connection's subflows, segments.
        total_segs: f64,
    },
}

impl Increase {
    /// LIA's α (RFC 6356 §3) from the paths' windows and RTTs:
    /// α = w_total · max_i(w_i / rtt_i²) / (Σ_i w_i / rtt_i)², windows in segments.
    pub fn lia(paths: &[PathModel]) -> Increase {
        let (mut total, mut best, mut sum) = (0.0f64, 0.0f64, 0.0f64);
        for p in paths.iter().filter(|p| p.rtt_ns > 0) {
            let w = p.cwnd.max(p.mss) as f64 / p.mss.max(1) as f64;
            let rtt = p.rtt_ns as f64 / 1e9;
            total += w;
            best = best.max(w / (rtt * rtt));
            sum += w / rtt;
        }
        if sum == 0.0 {
            return Increase::Uncoupled;
        }
        Increase::Lia { alpha: total * best / (sum * sum), total_segs: total }
    }

    fn per_round(&self, w: f64) -> f64 {
        match *self {
            Increase::Uncoupled => 1.0,
            Increase::Lia { alpha, total_segs } => (alpha * w / total_segs.max(1.0)).min(1.0),
        }
    }
}

/// Which time the first k candidates are given to deliver the remaining bytes (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Horizon {
    /// The slowest member's first round (MPTCP-RL's text read literally: T = RTT_k).
    SlowestMember,
    /// The next candidate's first round, or the slowest member's if later (the default; it
    /// reproduces MPTCP-RL's worked example).
    NextCandidate,
}

/// Rounds beyond which [`deliverable`] stops counting (a horizon of 100 000 rounds is minutes
/// on any path; the byte count saturates long before).
const MAX_ROUNDS: u64 = 100_000;

/// D_i(n): bytes path `p` can deliver in `n` of its own rounds from its current window (module
/// docs). Saturates instead of overflowing.
pub fn deliverable(p: &PathModel, n: u64, inc: Increase) -> u64 {
    let mss = p.mss.max(1) as f64;
    let mut w = p.cwnd.max(p.mss) as f64 / mss;
    let ssthresh = if p.ssthresh == u64::MAX { f64::INFINITY } else { (p.ssthresh as f64 / mss).max(2.0) };
    let cap = if p.loss > 0.0 { (3.0 / (2.0 * p.loss)).sqrt().max(1.0) } else { f64::INFINITY };
    let mut total = 0.0f64;
    for _ in 0..n.min(MAX_ROUNDS) {
        w = w.min(cap);
        total += w;
        if total >= 1e15 {
            break;
        }
        w = if w < ssthresh { (2.0 * w).min(ssthresh) } else { w + inc.per_round(w) };
    }
    let bytes = total * (1.0 - p.loss.clamp(0.0, 1.0)) * mss;
    if bytes >= u64::MAX as f64 {
        u64::MAX
    } else {
        bytes as u64
    }
}

/// The horizon T_k (nanoseconds) of the first `k` candidates of `order` (module docs).
pub fn horizon_ns(paths: &[PathModel], order: &[usize], k: usize, h: Horizon) -> u64 {
    let upto = match h {
        Horizon::SlowestMember => k,
        Horizon::NextCandidate => (k + 1).min(order.len()),
    };
    order[..upto].iter().map(|&i| paths[i].first_round_ns()).max().unwrap_or(0)
}

/// C_k: bytes the first `k` candidates of `order` deliver within their horizon, each member i
/// in η_i = floor((T − wait_i) / RTT_i) of its rounds.
pub fn capacity(paths: &[PathModel], order: &[usize], k: usize, h: Horizon, inc: Increase) -> u64 {
    let t = horizon_ns(paths, order, k, h);
    let mut c = 0u64;
    for &i in &order[..k] {
        let p = &paths[i];
        let eta = t.saturating_sub(p.wait_ns) / p.rtt_ns.max(1);
        c = c.saturating_add(deliverable(p, eta, inc));
    }
    c
}

/// The set rule: the smallest k with C_k ≥ `remaining`, all of `order` if none (an empty
/// `order` gives an empty set). Returns k.
pub fn choose_k(paths: &[PathModel], order: &[usize], remaining: u64, h: Horizon, inc: Increase) -> usize {
    (1..order.len()).find(|&k| capacity(paths, order, k, h, inc) >= remaining).unwrap_or(order.len())
}

/// [`choose_k`] as a subflow set (path index = subflow index).
pub fn choose(paths: &[PathModel], order: &[usize], remaining: u64, h: Horizon, inc: Increase) -> SubflowSet {
    let k = choose_k(paths, order, remaining, h, inc);
    let mut set = SubflowSet::default();
    for &i in &order[..k] {
        set.insert(i);
    }
    set
}

#[cfg(test)]
mod tests {
    //! Hand-computed cases. Windows in segments of 1000 bytes unless said otherwise.
    use super::*;
    use proptest::prelude::*;

    const MSS: u64 = 1000;
    const MS: u64 = 1_000_000;

    fn path(rtt_ms: u64, wait_ms: u64, cwnd_segs: u64) -> PathModel {
        PathModel {
            rtt_ns: rtt_ms * MS,
            wait_ns: wait_ms * MS,
            cwnd: cwnd_segs * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
            loss: 0.0,
        }
    }

    /// Slow start from IW 1: 1 + 2 + 4 + 8 + 16 segments in five rounds.
    #[test]
    fn slow_start_doubles() {
        let p = path(20, 0, 1);
        let d: Vec<u64> = (0..=5).map(|n| deliverable(&p, n, Increase::Uncoupled) / MSS).collect();
        assert_eq!(d, vec![0, 1, 3, 7, 15, 31]);
    }

    /// Slow start stops at ssthresh (8 segments), then +1 per round: 2 + 4 + 8 + 9 + 10.
    #[test]
    fn slow_start_then_congestion_avoidance() {
        let p = PathModel { ssthresh: 8 * MSS, ..path(20, 0, 2) };
        assert_eq!(deliverable(&p, 5, Increase::Uncoupled), 33 * MSS);
        // 5 + 6 in CA from 5 segments (MPTCP-RL's BLEST example: 11 packets in two rounds).
        let p = PathModel { ssthresh: 5 * MSS, ..path(10, 0, 5) };
        assert_eq!(deliverable(&p, 2, Increase::Uncoupled), 11 * MSS);
        // From 3 segments with ssthresh 5: 3, then min(6, 5) = 5, then 6.
        let p = PathModel { ssthresh: 5 * MSS, ..path(10, 0, 3) };
        assert_eq!(deliverable(&p, 3, Increase::Uncoupled), 14 * MSS);
    }

    /// LIA: two equal paths (10 segments, 500 ms): α = 20·(10/0.25)/(40)² = 0.5, increment
    /// min(0.5·w/20, 1) segment per round: windows 10, 10.25, 10.50625 (30.75625 segments).
    #[test]
    fn lia_increment() {
        let p = PathModel { ssthresh: 10 * MSS, ..path(500, 0, 10) };
        let inc = Increase::lia(&[p, p]);
        assert_eq!(inc, Increase::Lia { alpha: 0.5, total_segs: 20.0 });
        assert_eq!(deliverable(&p, 3, inc), 30_756);
        assert_eq!(deliverable(&p, 3, Increase::Uncoupled), 33 * MSS);
    }

    /// Loss cap: p = 1.5 % caps the window at sqrt(3 / 0.03) = 10 segments and keeps 98.5 %.
    #[test]
    fn loss_cap() {
        let p = PathModel { loss: 0.015, ..path(20, 0, 8) };
        // Windows 8, min(16, 10), 10: 28 segments, × 0.985.
        assert_eq!(deliverable(&p, 3, Increase::Uncoupled), 27_580);
    }

    /// MPTCP-RL's worked example at connection start: 16 packets; the fast path (20 ms) is
    /// established after its 20 ms handshake, the slow one (80 ms) after 80 ms; IW 1.
    #[test]
    fn worked_example_picks_the_fast_path_alone() {
        let paths =
            [PathModel { mss: 1, cwnd: 1, ..path(20, 20, 0) }, PathModel { mss: 1, cwnd: 1, ..path(80, 80, 0) }];
        let order = [0, 1];
        let h = Horizon::NextCandidate;
        // k = 1: horizon = the slow path's first round (80 + 80 = 160 ms); the fast path runs
        // floor((160 − 20) / 20) = 7 rounds: 127 packets ≥ 16.
        assert_eq!(horizon_ns(&paths, &order, 1, h), 160 * MS);
        assert_eq!(capacity(&paths, &order, 1, h, Increase::Uncoupled), 127);
        assert_eq!(choose(&paths, &order, 16, h, Increase::Uncoupled), SubflowSet(0b01));
        // The literal reading (T = RTT of the slowest member) adds the slow path: C_1 = one
        // round of one packet.
        let h = Horizon::SlowestMember;
        assert_eq!(capacity(&paths, &order, 1, h, Increase::Uncoupled), 1);
        assert_eq!(capacity(&paths, &order, 2, h, Increase::Uncoupled), 128);
        assert_eq!(choose(&paths, &order, 16, h, Increase::Uncoupled), SubflowSet(0b11));
    }

    /// Both paths established (no waits), 16 packets: the fast path delivers 15 in the slow
    /// path's 80 ms (4 rounds), one short: both are needed. 15 packets: the fast one suffices.
    #[test]
    fn both_established() {
        let paths = [PathModel { mss: 1, cwnd: 1, ..path(20, 0, 0) }, PathModel { mss: 1, cwnd: 1, ..path(80, 0, 0) }];
        let h = Horizon::NextCandidate;
        assert_eq!(capacity(&paths, &[0, 1], 1, h, Increase::Uncoupled), 15);
        assert_eq!(choose(&paths, &[0, 1], 16, h, Increase::Uncoupled), SubflowSet(0b11));
        assert_eq!(choose(&paths, &[0, 1], 15, h, Increase::Uncoupled), SubflowSet(0b01));
        // In preference order slow path first: its own 80 ms round (1 packet) before the fast
        // path's first round? The horizon is max(80, 20) = 80 ms: 1 packet.
        assert_eq!(capacity(&paths, &[1, 0], 1, h, Increase::Uncoupled), 1);
        assert_eq!(choose(&paths, &[1, 0], 2, h, Increase::Uncoupled), SubflowSet(0b11));
        assert_eq!(choose(&paths, &[1, 0], 1, h, Increase::Uncoupled), SubflowSet(0b10));
    }

    /// Three paths: the rule stops at the first k that suffices; nothing suffices: all.
    #[test]
    fn three_paths() {
        let paths = [path(10, 0, 10), path(30, 0, 10), path(90, 0, 10)];
        let (o, h, inc) = ([0, 1, 2], Horizon::NextCandidate, Increase::Uncoupled);
        // k = 1: T = 30 ms, 3 rounds of 10, 20, 40 = 70 segments. k = 2: T = 90 ms, path 0:
        // 9 rounds = 10·(2⁹ − 1) = 5110, path 1: 3 rounds = 70: 5180.
        assert_eq!(capacity(&paths, &o, 1, h, inc), 70 * MSS);
        assert_eq!(capacity(&paths, &o, 2, h, inc), 5180 * MSS);
        assert_eq!(choose_k(&paths, &o, 70 * MSS, h, inc), 1);
        assert_eq!(choose_k(&paths, &o, 71 * MSS, h, inc), 2);
        assert_eq!(choose_k(&paths, &o, 5181 * MSS, h, inc), 3);
        assert_eq!(choose_k(&paths, &o, u64::MAX, h, inc), 3);
        assert_eq!(choose(&paths, &[], 1, h, inc), SubflowSet(0));
    }

    fn arb_paths() -> impl Strategy<Value = Vec<PathModel>> {
        prop::collection::vec(
            (1u64..300, 0u64..300, 1u64..100, prop::option::of(2u64..200), 0u32..3).prop_map(|(rtt, wait, w, s, l)| {
                PathModel {
                    ssthresh: s.map_or(u64::MAX, |s| s * MSS),
                    loss: [0.0, 0.001, 0.05][l as usize],
                    ..path(rtt, wait, w)
                }
            }),
            1..6,
        )
    }

    proptest! {
        /// C_k is non-decreasing in k, for any candidate order, both horizons, both increases.
        #[test]
        fn capacity_non_decreasing(paths in arb_paths(), rev in any::<bool>(), lit in any::<bool>()) {
            let mut order: Vec<usize> = (0..paths.len()).collect();
            if rev { order.reverse(); }
            let h = if lit { Horizon::SlowestMember } else { Horizon::NextCandidate };
            for inc in [Increase::Uncoupled, Increase::lia(&paths)] {
                for k in 1..order.len() {
                    prop_assert!(capacity(&paths, &order, k, h, inc) <= capacity(&paths, &order, k + 1, h, inc));
                }
            }
        }

        /// More remaining bytes never give a smaller set.
        #[test]
        fn more_bytes_never_fewer_paths(paths in arb_paths(), r in 0u64..10_000_000, extra in 0u64..10_000_000) {
            let order: Vec<usize> = (0..paths.len()).collect();
            for h in [Horizon::SlowestMember, Horizon::NextCandidate] {
                let inc = Increase::lia(&paths);
                prop_assert!(choose_k(&paths, &order, r, h, inc) <= choose_k(&paths, &order, r + extra, h, inc));
            }
        }

        /// D_i(n) is non-decreasing in n.
        #[test]
        fn deliverable_non_decreasing(paths in arb_paths(), n in 0u64..200) {
            for p in &paths {
                prop_assert!(deliverable(p, n, Increase::Uncoupled) <= deliverable(p, n + 1, Increase::Uncoupled));
            }
        }
    }
}
