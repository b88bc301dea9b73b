//! Peekaboo (Wu, Alay, Brunstrom, Ferlin, Caso, "Peekaboo: Learning-based multipath scheduling
//! for dynamic heterogeneous environments", IEEE JSAC 38(10), 2020, doi 10.1109/JSAC.2020.3000365;
//! MPQUIC).
//!
//! Peekaboo decides only in the ECF/BLEST situation: the fastest path f has no window space and
//! a slower path s does. Two actions: WAIT for f, or SEND on s.
//!
//! * Deterministic online learning (paper §III-A, "deterministic perspective"): a linear
//!   contextual bandit (LinUCB), one linear model (A_a, b_a) per action, context x of d = 6
//!   throughput-like features, score p_a = θ_a·x + α·sqrt(x' A_a⁻¹ x), θ_a = A_a⁻¹ b_a.
//!   WAIT iff p_SEND < p_WAIT. Reward of a decision: a throughput over its lifetime (from the
//!   decision until the segment it concerned is acknowledged); update A_a += x x', b_a += r x.
//! * Stochastic adjustment (paper §III-B, "stochastic perspective"): when the environment
//!   changes, the learned (greedy) action is adjusted at random: kept with probability p_wait if
//!   it is WAIT and p_send if it is SEND, flipped otherwise.
//!
//! What is and is not verified against the paper (Wu et al., IEEE JSAC 2020) and the authors' code: the context, α = 0.75, the reward
//! MSS / elapsed time and the keep-probabilities 0.7 / 0.9 come from MPQUIC forks of the authors'
//! code; identity / zero initial models are the standard LinUCB start.
//!
//! Reward. The forks' per-packet reward MSS / elapsed measures one packet's latency: WAIT wins
//! whenever the fast path alone would deliver that packet sooner, even when sending in parallel
//! doubles the throughput (measured: two 10 Mbps paths of 10 / 30 ms one-way, large buffer:
//! 9.9 Mbps with it, against 19.2 for minRTT). The paper's reward is throughput-based, so the
//! default ("peekaboo") credits each decision with the connection's goodput over its lifetime:
//! bytes DATA_ACKed between the decision and the DATA_ACK of its segment, over that time. A
//! segment that blocks the shared window (HoL) shows up as no progress. "peekaboo-pkt" keeps
//! the forks' MSS / elapsed. Limitation: a decision's goodput also reflects the decisions taken
//! while it is in flight, so without HoL the learning is bimodal in the seed (two 10 Mbps
//! paths: 16.7 / 17.1 Mbps for seeds 1 / 3, 9.9 for seeds 2, 4, 5, 6; tests/peekaboo.rs). The paper's own rule for
//! WHEN to adjust (its estimate of the "stochastic factors" / dynamicity level) could not be read.
//! Here the environment counts as changed when the bandit stops predicting its rewards: an
//! exponential average (gain 1/8) of the relative prediction error |r − θ_a·x| / max(r, θ_a·x)
//! of finished decisions above `beta`. That detector is this implementation's choice.
//!
//! Simulator adaptations (documented, not from the paper):
//! * RTT: srtt of each subflow (the fork uses the latest RTT sample, which the view lacks).
//! * "Acknowledged" = covered by the connection-level DATA_ACK: the decision's segment is the next
//!   new DSN (`conn.bytes_sent_new`); SEND puts it on s, WAIT sends it later on f. Rewards are
//!   credited at the next scheduler call after the DATA_ACK (calls happen on every ACK while data
//!   waits).
//! * Units: features and rewards in Mbit/s (bytes·8 / µs); W = the connection-level send window
//!   left (`send_window`).
//! * Randomness: a SplitMix64 stream seeded by [`Scheduler::seed`] (the simulator derives it from
//!   the scenario seed and the flow name), so runs are deterministic.
//! * Reinjections bypass the bandit (minRTT), as in the fork. Opportunistic retransmission (Linux
//!   `mptcp_rcv_buf_optimization`) is off: Peekaboo avoids HoL by waiting, and MPQUIC has no such
//!   mechanism.

use std::collections::VecDeque;

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::Instant;

/// Context dimension (paper: six features).
pub const D: usize = 6;
const WAIT: usize = 0;
const SEND: usize = 1;

/// One arm's linear model: A⁻¹ (kept directly, Sherman–Morrison updates) and b.
#[derive(Clone, Debug, PartialEq)]
pub struct LinArm {
    pub a_inv: [[f64; D]; D],
    pub b: [f64; D],
}

impl Default for LinArm {
    fn default() -> Self {
        let mut a_inv = [[0.0; D]; D];
        for (i, row) in a_inv.iter_mut().enumerate() {
            row[i] = 1.0;
        }
        LinArm { a_inv, b: [0.0; D] }
    }
}

impl LinArm {
    fn a_inv_x(&self, x: &[f64; D]) -> [f64; D] {
        let mut y = [0.0; D];
        for (i, yi) in y.iter_mut().enumerate() {
            *yi = (0..D).map(|j| self.a_inv[i][j] * x[j]).sum();
        }
        y
    }
    /// θ = A⁻¹ b.
    pub fn theta(&self) -> [f64; D] {
        self.a_inv_x(&self.b)
    }
    /// θ·x, the predicted reward.
    pub fn predict(&self, x: &[f64; D]) -> f64 {
        dot(&self.theta(), x)
    }
    /// LinUCB score θ·x + α·sqrt(x' A⁻¹ x).
    pub fn ucb(&self, x: &[f64; D], alpha: f64) -> f64 {
        self.predict(x) + alpha * dot(x, &self.a_inv_x(x)).max(0.0).sqrt()
    }
    /// A += x x' (as A⁻¹ −= A⁻¹x x'A⁻¹ / (1 + x'A⁻¹x), A symmetric), b += r x.
    pub fn update(&mut self, x: &[f64; D], r: f64) {
        let u = self.a_inv_x(x);
        let den = 1.0 + dot(x, &u);
        for i in 0..D {
            for j in 0..D {
                self.a_inv[i][j] -= u[i] * u[j] / den;
            }
            self.b[i] += r * x[i];
        }
    }
}

fn dot(a: &[f64; D], b: &[f64; D]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A decision waiting for its reward.
#[derive(Clone, Copy, Debug)]
struct Pending {
    action: usize,
    x: [f64; D],
    at: Instant,
    /// Reward is due once DATA_ACK >= this.
    dsn_end: u64,
    len: u32,
    /// DATA_ACK at the decision (goodput reward).
    acked_at: u64,
}

#[derive(Clone, Debug)]
/// The scheduler; see the module docs.
pub struct Peekaboo {
    /// LinUCB exploration weight α (0.75 in the authors' code).
    pub alpha: f64,
    /// Stochastic adjustment: probability of keeping a greedy WAIT (0.7 in the authors' code).
    pub p_wait: f64,
    /// Stochastic adjustment: probability of keeping a greedy SEND (0.9 in the authors' code).
    pub p_send: f64,
    /// Environment-change threshold on the averaged relative prediction error (our detector).
    pub beta: f64,
    /// Reward = segment size / elapsed (the forks) instead of the connection's goodput.
    pub per_packet_reward: bool,
    /// Models indexed by action (WAIT = 0, SEND = 1).
    pub arms: [LinArm; 2],
    /// Averaged relative prediction error of finished decisions.
    pub pred_err: f64,
    /// Sticky WAIT: no new decision until f can send again.
    waiting: bool,
    pending: VecDeque<Pending>,
    rng: u64,
    /// Counters: decisions taken per action, and how many the stochastic adjustment flipped.
    pub decisions: [u64; 2],
    /// Decisions the stochastic adjustment flipped.
    pub flips: u64,
}

crate::params! {
    /// Peekaboo's parameters (defaults from the authors' code).
    pub struct PeekabooParams {
        /// LinUCB exploration weight α.
        alpha: f64 = 0.75, "> 0" if |x: &f64| *x > 0.0;
        /// Stochastic adjustment: probability of keeping a greedy WAIT.
        p_wait: f64 = 0.7, "[0, 1]" if |x: &f64| (0.0..=1.0).contains(x);
        /// Stochastic adjustment: probability of keeping a greedy SEND.
        p_send: f64 = 0.9, "[0, 1]" if |x: &f64| (0.0..=1.0).contains(x);
        /// Environment-change threshold on the averaged relative prediction error.
        beta: f64 = 0.5, "> 0" if |x: &f64| *x > 0.0;
        /// Reward = segment size / elapsed time (the authors' forks) instead of goodput.
        per_packet_reward: bool = false;
    }
}

impl crate::algo::FromParams for Peekaboo {
    type Params = PeekabooParams;
    fn from_params(p: &PeekabooParams) -> Self {
        Peekaboo {
            alpha: p.alpha,
            p_wait: p.p_wait,
            p_send: p.p_send,
            beta: p.beta,
            per_packet_reward: p.per_packet_reward,
            ..Self::default()
        }
    }
}

impl Default for Peekaboo {
    fn default() -> Self {
        Peekaboo {
            alpha: 0.75,
            p_wait: 0.7,
            p_send: 0.9,
            beta: 0.5,
            per_packet_reward: false,
            arms: [LinArm::default(), LinArm::default()],
            pred_err: 0.0,
            waiting: false,
            pending: VecDeque::new(),
            rng: 0x5045_454B_4142_4F4F, // "PEEKABOO": used until `seed` is called
            decisions: [0; 2],
            flips: 0,
        }
    }
}

/// Bytes per nanosecond interval as Mbit/s: bytes·8 / µs = bytes·8000 / ns.
fn mbps(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 * 8000.0 / ns as f64
    }
}

impl Peekaboo {
    /// Test convenience: the scheduler registered under `name` with default parameters (the
    /// registry builds schedulers from their parameter struct, see `FromParams`).
    pub fn from_name(name: &str) -> Self {
        let p = PeekabooParams { per_packet_reward: name == "peekaboo-pkt", ..PeekabooParams::default() };
        crate::algo::FromParams::from_params(&p)
    }

    /// Uniform in [0, 1) from a SplitMix64 step (Steele, Lea, Flood; public-domain constants).
    fn uniform(&mut self) -> f64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// The context x (Wu et al. JSAC 2020 §III-A; `selectPathLowBandit` in the MPQUIC forks'
    /// scheduler.go): [cwnd_f/RTT_f, inflight_s/RTT_s, W/RTT_f, W/RTT_s, inflight_f/RTT_f,
    /// cwnd_s/RTT_s] in Mbit/s; all zeros while an RTT is unknown.
    pub fn context(v: &SchedView, f: usize, s: usize) -> [f64; D] {
        let (fi, si) = (&v.subflows[f].info, &v.subflows[s].info);
        let (rf, rs) = (fi.srtt.0, si.srtt.0);
        if rf == 0 || rs == 0 {
            return [0.0; D];
        }
        let w = v.send_window;
        [mbps(fi.cwnd, rf), mbps(si.pipe, rs), mbps(w, rf), mbps(w, rs), mbps(fi.pipe, rf), mbps(si.cwnd, rs)]
    }

    /// The deterministic (LinUCB) choice for context x: WAIT iff p_send < p_wait.
    pub fn ucb_action(&self, x: &[f64; D]) -> usize {
        if self.arms[SEND].ucb(x, self.alpha) < self.arms[WAIT].ucb(x, self.alpha) {
            WAIT
        } else {
            SEND
        }
    }

    /// Credits the reward of every decision whose segment the peer has DATA_ACKed.
    fn collect_rewards(&mut self, now: Instant, data_acked: u64) {
        while let Some(p) = self.pending.front().copied() {
            if p.dsn_end > data_acked {
                break;
            }
            self.pending.pop_front();
            let dt = now.saturating_duration_since(p.at).0.max(1);
            let bytes = if self.per_packet_reward { p.len as u64 } else { data_acked - p.acked_at };
            let r = mbps(bytes, dt);
            let predicted = self.arms[p.action].predict(&p.x);
            let scale = r.max(predicted.abs());
            let err = if scale > 0.0 { (r - predicted).abs() / scale } else { 0.0 };
            self.pred_err += (err - self.pred_err) / 8.0;
            self.arms[p.action].update(&p.x, r);
        }
    }
}

impl Scheduler for Peekaboo {
    fn name(&self) -> &'static str {
        if self.per_packet_reward {
            "peekaboo-pkt"
        } else {
            "peekaboo"
        }
    }

    fn seed(&mut self, seed: u64) {
        self.rng = seed;
    }

    fn get_send(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.collect_rewards(now, v.conn.data_acked);
        let Some(s) = v.min_rtt() else { return Verdict::Wait };
        let Some(f) = v.fastest().filter(|&f| f != s) else {
            // The fastest subflow can send: no decision to make (waiting ends).
            self.waiting = false;
            out.insert(s);
            return Verdict::Send;
        };
        if self.waiting {
            return Verdict::Wait;
        }
        let x = Self::context(v, f, s);
        let greedy = self.ucb_action(&x);
        let mut action = greedy;
        if self.pred_err > self.beta {
            // §III-B stochastic adjustment (environment changed: the models mispredict).
            let keep = if greedy == WAIT { self.p_wait } else { self.p_send };
            if self.uniform() >= keep {
                action = 1 - greedy;
                self.flips += 1;
            }
        }
        self.decisions[action] += 1;
        let dsn = v.conn.bytes_sent_new;
        let (dsn_end, acked_at) = (dsn + v.seg_len as u64, v.conn.data_acked);
        self.pending.push_back(Pending { action, x, at: now, dsn_end, len: v.seg_len, acked_at });
        if action == WAIT {
            self.waiting = true;
            return Verdict::Wait;
        }
        out.insert(s);
        Verdict::Send
    }

    /// Reinjections bypass the bandit (as in the MPQUIC forks' `selectPathLowBandit`): minRTT
    /// among the subflows that can send.
    fn get_retrans(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.collect_rewards(now, v.conn.data_acked);
        v.send_min_rtt(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::ConnInfo;
    use crate::sched::tests::{at_ms, busy, idle, send, view, MSS};
    use crate::sched::SchedSubflow;

    fn unit(i: usize) -> [f64; D] {
        let mut x = [0.0; D];
        x[i] = 1.0;
        x
    }

    /// LinUCB update by hand. Start A = I, b = 0. One update with x = e0 + e1 (|x|² = 2), r = 3:
    /// A = I + x x' has A⁻¹ = I − x x'/3 (Sherman–Morrison, 1 + x'x = 3), b = (3, 3, 0, ...),
    /// θ = A⁻¹ b = (3, 3) − x·(6/3) = (1, 1, 0, ...). Predicted reward at x: θ·x = 2; bonus
    /// α·sqrt(x'A⁻¹x) = α·sqrt(2 − 4/3) = α·sqrt(2/3). At an orthogonal e2: θ·e2 = 0, bonus α.
    #[test]
    fn linucb_update_by_hand() {
        let mut a = LinArm::default();
        let mut x = unit(0);
        x[1] = 1.0;
        a.update(&x, 3.0);
        let close = |u: f64, w: f64| (u - w).abs() < 1e-12;
        let inv = a.a_inv;
        assert!(close(inv[0][0], 2.0 / 3.0) && close(inv[0][1], -1.0 / 3.0) && close(inv[1][1], 2.0 / 3.0));
        assert!(close(inv[2][2], 1.0) && close(inv[0][2], 0.0));
        let th = a.theta();
        assert!(close(th[0], 1.0) && close(th[1], 1.0) && close(th[2], 0.0), "{th:?}");
        assert!(close(a.predict(&x), 2.0));
        assert!(close(a.ucb(&x, 0.75), 2.0 + 0.75 * (2.0f64 / 3.0).sqrt()));
        assert!(close(a.ucb(&unit(2), 0.75), 0.75));
    }

    /// The decision for given features. Untrained: both scores are α·|x|, equal, so SEND
    /// (WAIT only if p_send < p_wait strictly). After SEND earned r = 1 at x = e0 and WAIT
    /// earned r = 4 at the same x: p_send = 1·1/2 + α·sqrt(1/2) = 0.5 + 0.530 = 1.030,
    /// p_wait = 4/2 + 0.530 = 2.530 (A = 2 on that axis, θ = r/2): WAIT. At an unseen context
    /// e1 both are α = 0.75 again: SEND.
    #[test]
    fn decision_follows_scores() {
        let mut p = Peekaboo::default();
        assert_eq!(p.ucb_action(&unit(0)), SEND);
        p.arms[SEND].update(&unit(0), 1.0);
        p.arms[WAIT].update(&unit(0), 4.0);
        assert!((p.arms[SEND].ucb(&unit(0), 0.75) - (0.5 + 0.75 * 0.5f64.sqrt())).abs() < 1e-12);
        assert_eq!(p.ucb_action(&unit(0)), WAIT);
        assert_eq!(p.ucb_action(&unit(1)), SEND);
    }

    /// Context in Mbit/s: f = 10 ms srtt, 10-segment window full (14 480 B); s = 40 ms, idle,
    /// 10-segment window; W = 64 KiB. cwnd_f/RTT_f = 14 480·8/10 000 µs = 11.584;
    /// inflight_s/RTT_s = 0; W/RTT_f = 65 536·8/10 000 = 52.4288; W/RTT_s = 13.1072;
    /// inflight_f/RTT_f = 11.584; cwnd_s/RTT_s = 2.896.
    #[test]
    fn context_features() {
        let subs = [busy(10), idle(40)];
        let conn = ConnInfo::default();
        let v = SchedView { send_window: 65_536, ..view(&subs, &conn) };
        let x = Peekaboo::context(&v, 0, 1);
        let want = [11.584, 0.0, 52.4288, 13.1072, 11.584, 2.896];
        for i in 0..D {
            assert!((x[i] - want[i]).abs() < 1e-9, "x[{i}] = {} != {}", x[i], want[i]);
        }
        let mut unknown = subs;
        unknown[1].info.srtt = crate::time::Duration::ZERO;
        assert_eq!(Peekaboo::context(&view(&unknown, &conn), 0, 1), [0.0; D]);
    }

    fn decide(
        p: &mut Peekaboo,
        subs: &[SchedSubflow],
        now: Instant,
        sent_new: u64,
        acked: u64,
    ) -> (Verdict, Vec<usize>) {
        let conn = ConnInfo { bytes_sent_new: sent_new, data_acked: acked, ..ConnInfo::default() };
        send(p, now, &view(subs, &conn))
    }

    /// Flow of one decision and its reward. f busy, s idle: untrained => SEND on s (segment
    /// [0, 1448), DATA_ACK 0 at the decision). At 100 ms DATA_ACK is 3·1448 (the segment and two
    /// more sent on f): goodput reward 3·1448·8 / 100 000 µs = 0.34752 Mbit/s is credited to SEND
    /// at that call; the forks' per-packet reward would be 1448·8 / 100 000 = 0.11584. When f
    /// is available it is used with no decision. Then a trained WAIT makes the next call wait and
    /// stay waiting (sticky) until f can send again.
    #[test]
    fn decision_reward_and_sticky_wait() {
        let slow = [busy(10), idle(40)];
        let fast = [idle(10), idle(40)];
        let x = Peekaboo::context(&view(&slow, &ConnInfo::default()), 0, 1);
        for (name, r) in [("peekaboo", 0.34752), ("peekaboo-pkt", 0.11584)] {
            let mut p = Peekaboo::from_name(name);
            assert_eq!(p.name(), name);
            assert_eq!(decide(&mut p, &slow, at_ms(0), 0, 0), (Verdict::Send, vec![1]));
            assert_eq!(p.decisions, [0, 1]);
            assert_eq!(p.arms[SEND], LinArm::default(), "no reward before the DATA_ACK");
            assert_eq!(decide(&mut p, &fast, at_ms(100), 3 * MSS, 3 * MSS), (Verdict::Send, vec![0]));
            let mut want = LinArm::default();
            want.update(&x, r);
            let th = (p.arms[SEND].theta(), want.theta());
            assert!((0..D).all(|i| (th.0[i] - th.1[i]).abs() < 1e-12), "{name}: {th:?}");
            assert_eq!(p.arms[SEND].a_inv, want.a_inv);
            assert_eq!(p.decisions, [0, 1], "f available: no decision");
        }
        let mut p = Peekaboo::default();
        // Teach SEND a small and WAIT a large reward at this context (p_send ≈ 1 + α/2 against
        // p_wait ≈ 10 + α/2, |x| ≈ 56 so 4·|x|² ≫ 1): the next decision waits, then stays waiting.
        for _ in 0..4 {
            p.arms[SEND].update(&x, 1.0);
            p.arms[WAIT].update(&x, 10.0);
        }
        assert_eq!(decide(&mut p, &slow, at_ms(110), 4 * MSS, 3 * MSS), (Verdict::Wait, vec![]));
        assert_eq!(decide(&mut p, &slow, at_ms(111), 4 * MSS, 3 * MSS), (Verdict::Wait, vec![]));
        assert_eq!(p.decisions, [1, 0], "the sticky wait takes no second decision");
        assert_eq!(decide(&mut p, &fast, at_ms(120), 4 * MSS, 3 * MSS), (Verdict::Send, vec![0]));
        assert_eq!(decide(&mut p, &[busy(10), busy(40)], at_ms(121), 5 * MSS, 3 * MSS), (Verdict::Wait, vec![]));
    }

    /// Stochastic adjustment: with the error average above beta, a greedy SEND is kept with
    /// probability p_send. p_send = 0 flips every decision to WAIT, p_send = 1 never flips; below
    /// beta nothing is flipped. The same seed gives the same sequence.
    #[test]
    fn stochastic_adjustment_flips_with_probability() {
        let slow = [busy(10), idle(40)];
        let run = |p_send: f64, err: f64, seed: u64| -> (u64, u64) {
            let mut p = Peekaboo { p_send, pred_err: err, ..Peekaboo::default() };
            p.seed(seed);
            for k in 0..200u64 {
                p.waiting = false;
                p.pending.clear();
                decide(&mut p, &slow, at_ms(k), k * MSS, 0);
            }
            (p.flips, p.decisions[WAIT])
        };
        assert_eq!(run(0.0, 1.0, 1), (200, 200));
        assert_eq!(run(1.0, 1.0, 1), (0, 0));
        assert_eq!(run(0.0, 0.4, 1), (0, 0), "error below beta = 0.5: no adjustment");
        let (flips, _) = run(0.9, 1.0, 7);
        assert!((5..=40).contains(&flips), "~10% of 200 flipped, got {flips}");
        assert_eq!(run(0.9, 1.0, 7), run(0.9, 1.0, 7));
    }

    /// Reinjections bypass the bandit: minRTT, and no decision is recorded.
    #[test]
    fn reinjection_uses_min_rtt() {
        let mut p = Peekaboo::default();
        let conn = ConnInfo::default();
        let subs = [busy(10), idle(40)];
        let v = SchedView { reinjection: true, ..view(&subs, &conn) };
        assert_eq!(crate::sched::tests::retrans(&mut p, at_ms(0), &v), (Verdict::Send, vec![1]));
        assert_eq!(p.decisions, [0, 0]);
        assert!(!p.opportunistic_retransmission() && !p.redundant());
        assert_eq!(p.name(), "peekaboo");
    }
}
