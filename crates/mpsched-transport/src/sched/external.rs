//! Externally driven scheduling, for learned and online policies (architecture section 5):
//! - `Mode`: per interval, normal (minRTT) or redundant (EdAR);
//! - `Weights`: per interval, each subflow's share of new data (MPTCP-RL, PDAA3C), realised by a
//!   deterministic deficit counter so shares hold exactly over time;
//! - `Packet`: per segment, ask the outside policy (OLMS); the connection pauses meanwhile.

use super::quality::Quality;
use super::{Decision, SchedStart, SchedView, Scheduler, SubflowSet, Verdict};
use crate::algo::FromParams;
use crate::time::Instant;

crate::choice! {
    /// What the outside policy decides.
    pub enum ExternalMode {
        /// Per interval: normal (minRTT) or redundant.
        Mode = "mode",
        /// Per interval: each subflow's share of new data.
        Weights = "weights",
        /// Per packet: the subflow of each segment.
        Packet = "packet",
    }
}

crate::choice! {
    /// What the scheduler does when the outside policy expresses no choice: weights all zero
    /// (or none usable) in `weights` mode, `Decision::Path(None)` in `packet` mode.
    pub enum ExternalFallback {
        /// minRTT as `--scheduler minrtt` runs it: with opportunistic retransmission and
        /// penalization (Linux's default).
        Minrtt = "minrtt",
        /// minRTT without them (`minrtt-norp`).
        MinrttNorp = "minrtt-norp",
    }
}

crate::choice! {
    /// What `weights` mode does when the subflow due for the segment has no window space.
    pub enum ExternalBusy {
        /// Wait for it (the policy asked for that split).
        Wait = "wait",
        /// Send on minRTT's choice among the available subflows (RLDS-proxy's fallback,
        /// shared/specs/rl-baselines.md §4).
        Minrtt = "minrtt",
        /// Send on the next subflow in quality order: the available subflow of highest Q
        /// (pdaa3c.txt eq. 4, [`super::quality::Quality::of_info`]). PDAA3C's reading of
        /// "distributes data packets to the optimal sub-flow" (§2.3 iii) with a sender that
        /// "concurrently distributes data packets to established sub-flows" (§2.3 i): the
        /// chosen subflow first while it has window room, never idle data beside a free window.
        Next = "next",
        /// Weighted round robin among the subflows with window space: the weighted subflow
        /// furthest behind its share *among the available ones* takes the segment, a busy one
        /// is skipped (its deficit stays and is made up once it has room); none available:
        /// wait. ReLeS's reading of "skip a subflow with no cwnd space, do not block"
        /// (shared/specs/rl-baselines.md §3, the weighted round robin of BL A.1).
        Skip = "skip",
    }
}

crate::params! {
    /// The external scheduler's parameters.
    pub struct ExternalParams {
        /// What the outside policy decides.
        mode: ExternalMode = ExternalMode::Mode;
        /// The scheduler used when the policy expresses no choice, or before its first decision
        /// (not in `mode` mode, whose normal mode is the EdAR paper's minRTT, without
        /// opportunistic retransmission).
        fallback: ExternalFallback = ExternalFallback::Minrtt;
        /// `weights` mode, when the subflow due has no window space: wait for it, send on
        /// minRTT's choice (RLDS-proxy, rl-baselines.md §4), on the next subflow by quality
        /// Q (PDAA3C, docs/pdaa3c.md), or skip it for the weighted available subflow furthest
        /// behind its share (ReLeS, rl-baselines.md §3).
        busy: ExternalBusy = ExternalBusy::Wait;
    }
}

#[derive(Clone, Debug)]
/// The scheduler; see the module docs.
pub struct External {
    /// What the outside policy decides.
    pub mode: ExternalMode,
    /// The scheduler used when the policy expresses no choice.
    pub fallback: ExternalFallback,
    /// What `weights` mode does when the subflow due has no window space.
    pub busy: ExternalBusy,
    /// The last segment went by the fallback.
    in_fallback: bool,
    redundant: bool,
    weights: [f32; 8],
    /// Bytes each subflow was sent minus its weighted share (deficit round robin).
    credit: [f64; 8],
    answer: Option<Option<u8>>,
    /// The connection's MSS (Q counts the window in segments).
    mss: u64,
}

impl External {
    /// Test convenience: the scheduler registered under `name` with default parameters (the
    /// registry builds schedulers from their parameter struct, see `FromParams`).
    pub fn from_name(name: &str) -> Self {
        let mode = match name {
            "external-weights" => ExternalMode::Weights,
            "external-packet" => ExternalMode::Packet,
            _ => ExternalMode::Mode,
        };
        External::from_params(&ExternalParams { mode, ..ExternalParams::default() })
    }

    /// The fallback's choice (minRTT) for this segment.
    fn fall_back(&mut self, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.in_fallback = true;
        v.send_min_rtt(out)
    }

    /// `busy = next`: the available subflow of highest Q (ties: lower index), or wait.
    fn next_by_quality(&self, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        let q = Quality::default();
        let mut best: Option<(usize, f64)> = None;
        for (j, s) in v.subflows.iter().enumerate() {
            if !(s.usable && s.available) || s.backup {
                continue;
            }
            let qj = q.of_info(&s.info, self.mss);
            if best.is_none_or(|(_, qb)| qj > qb) {
                best = Some((j, qj));
            }
        }
        match best {
            Some((j, _)) => {
                out.insert(j);
                Verdict::Send
            }
            None => Verdict::Wait,
        }
    }
}

impl FromParams for External {
    type Params = ExternalParams;
    fn from_params(p: &ExternalParams) -> Self {
        External {
            mode: p.mode,
            fallback: p.fallback,
            busy: p.busy,
            in_fallback: false,
            redundant: false,
            weights: [0.0; 8], // no decision yet: the fallback
            credit: [0.0; 8],
            answer: None,
            mss: 1448,
        }
    }
}

impl Scheduler for External {
    fn name(&self) -> &'static str {
        match self.mode {
            ExternalMode::Mode => "external-mode",
            ExternalMode::Weights => "external-weights",
            ExternalMode::Packet => "external-packet",
        }
    }
    fn get_send(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.in_fallback = false;
        match self.mode {
            ExternalMode::Mode => v.send_min_rtt(out),
            ExternalMode::Weights => {
                // Among subflows with positive weight, the one furthest behind its share; wait
                // for it if it has no window space (the policy asked for that split).
                let total: f32 =
                    (0..v.subflows.len()).filter(|&i| v.subflows[i].usable).map(|i| self.weights[i].max(0.0)).sum();
                if total <= 0.0 {
                    return self.fall_back(v, out);
                }
                let skip = self.busy == ExternalBusy::Skip;
                let mut best: Option<usize> = None;
                for i in 0..v.subflows.len() {
                    if !v.subflows[i].usable || self.weights[i] <= 0.0 || (skip && !v.subflows[i].available) {
                        continue;
                    }
                    if best.is_none_or(|b| self.credit[i] < self.credit[b]) {
                        best = Some(i);
                    }
                }
                // `skip`: no weighted subflow has window space.
                let Some(i) = best else { return Verdict::Wait };
                if !v.subflows[i].available {
                    return match self.busy {
                        ExternalBusy::Wait | ExternalBusy::Skip => Verdict::Wait,
                        ExternalBusy::Minrtt => self.fall_back(v, out),
                        ExternalBusy::Next => self.next_by_quality(v, out),
                    };
                }
                let len = v.seg_len as f64;
                for j in 0..v.subflows.len() {
                    if v.subflows[j].usable && self.weights[j] > 0.0 {
                        self.credit[j] -= len * (self.weights[j] / total) as f64;
                    }
                }
                self.credit[i] += len;
                out.insert(i);
                Verdict::Send
            }
            ExternalMode::Packet => match self.answer.take() {
                Some(Some(i)) if (i as usize) < v.subflows.len() && v.subflows[i as usize].available => {
                    out.insert(i as usize);
                    Verdict::Send
                }
                // A subflow that cannot take the segment: wait (and ask again next time).
                Some(Some(_)) => Verdict::Wait,
                // No preference: the fallback's choice.
                Some(None) => self.fall_back(v, out),
                None => Verdict::Ask,
            },
        }
    }
    fn redundant(&self) -> bool {
        self.mode == ExternalMode::Mode && self.redundant
    }
    fn opportunistic_retransmission(&self) -> bool {
        self.in_fallback && self.fallback == ExternalFallback::Minrtt
    }
    /// EdAR fills the minRTT subflow's window first (edar.txt §IV-A).
    fn redundant_min_rtt_first(&self) -> bool {
        true
    }
    fn start(&mut self, st: &SchedStart) {
        self.mss = u64::from(st.mss.max(1));
    }
    fn decide(&mut self, d: &Decision) {
        match *d {
            Decision::Mode(m) => self.redundant = m != 0,
            Decision::Weights(w) => {
                self.weights = w;
                self.credit = [0.0; 8];
            }
            Decision::Path(p) => self.answer = Some(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::ConnInfo;
    use crate::sched::tests::{busy, idle, send, unusable, view};
    use crate::sched::SchedSubflow;

    const T0: Instant = Instant::ZERO;

    fn go(e: &mut External, subs: &[SchedSubflow]) -> (Verdict, Vec<usize>) {
        let conn = ConnInfo::default();
        send(e, T0, &view(subs, &conn))
    }
    fn weights(w: &[f32]) -> Decision {
        let mut a = [0.0f32; 8];
        a[..w.len()].copy_from_slice(w);
        Decision::Weights(a)
    }

    #[test]
    fn names() {
        assert_eq!(External::from_name("external").mode, ExternalMode::Mode);
        assert_eq!(External::from_name("external-mode").name(), "external-mode");
        assert_eq!(External::from_name("external-weights").name(), "external-weights");
        assert_eq!(External::from_name("external-packet").name(), "external-packet");
    }

    /// Mode: 0 = minRTT, 1 = redundant (EdAR). Each decision takes effect at once; new data is
    /// always answered with minRTT (redundant copies are the connection's job).
    #[test]
    fn mode_switch_sets_redundant() {
        let mut e = External::from_name("external-mode");
        assert!(!e.redundant());
        e.decide(&Decision::Mode(1));
        assert!(e.redundant());
        assert!(e.redundant_min_rtt_first(), "EdAR fills the minRTT subflow first (edar.txt §IV-A)");
        assert_eq!(go(&mut e, &[idle(30), idle(10)]), (Verdict::Send, vec![1]));
        e.decide(&Decision::Mode(0));
        assert!(!e.redundant());
        e.decide(&Decision::Mode(7));
        assert!(e.redundant(), "any non-zero mode is redundant");
        assert_eq!(go(&mut e, &[busy(10), idle(30)]), (Verdict::Send, vec![1]));
        // Only the Mode flavour can be redundant.
        let mut w = External::from_name("external-weights");
        w.decide(&Decision::Mode(1));
        assert!(!w.redundant());
    }

    /// Weights 3:1 are realised exactly by the deficit counter: the pattern 0,1,0,0 repeats
    /// (credits in segments: (.25,−.25) → (−.5,.5) → (−.25,.25) → (0,0)), so after every prefix of
    /// n segments subflow 0 has carried 0.75·n ± 1 of them, and exactly 300 of 400.
    #[test]
    fn weights_realise_shares_exactly() {
        let mut e = External::from_name("external-weights");
        e.decide(&weights(&[3.0, 1.0]));
        let subs = [idle(50), idle(10)];
        let mut n0 = 0usize;
        let mut seq = Vec::new();
        for n in 1..=400usize {
            let (v, out) = go(&mut e, &subs);
            assert_eq!(v, Verdict::Send);
            assert_eq!(out.len(), 1);
            n0 += (out[0] == 0) as usize;
            seq.push(out[0]);
            assert!((n0 as f64 - 0.75 * n as f64).abs() <= 1.0, "after {n}: {n0} on subflow 0");
        }
        assert_eq!(&seq[..8], &[0, 1, 0, 0, 0, 1, 0, 0]);
        assert_eq!((n0, 400 - n0), (300, 100));
    }

    /// Three subflows 1:2:1 (shares 25/50/25 %), and a zero weight that is never used.
    #[test]
    fn weights_three_subflows_and_zero_weight() {
        let mut e = External::from_name("external-weights");
        e.decide(&weights(&[1.0, 2.0, 1.0, 0.0]));
        let subs = [idle(10), idle(10), idle(10), idle(1)];
        let mut c = [0usize; 4];
        for _ in 0..400 {
            let (_, out) = go(&mut e, &subs);
            c[out[0]] += 1;
        }
        assert_eq!(c, [100, 200, 100, 0]);
    }

    /// The subflow furthest behind its share has no window space: wait for it rather than send
    /// elsewhere (the policy asked for that split); it is still chosen once it has space.
    #[test]
    fn weights_wait_for_the_subflow_behind_its_share() {
        let mut e = External::from_name("external-weights");
        e.decide(&weights(&[1.0, 1.0]));
        assert_eq!(go(&mut e, &[idle(10), idle(10)]), (Verdict::Send, vec![0]));
        assert_eq!(go(&mut e, &[idle(10), busy(10)]), (Verdict::Wait, vec![]), "1 is behind");
        assert_eq!(go(&mut e, &[idle(10), idle(10)]), (Verdict::Send, vec![1]));
    }

    /// `busy=minrtt` (RLDS-proxy): the chosen subflow has no window space, so the segment goes
    /// by minRTT among the available ones (with opportunistic retransmission, the fallback's);
    /// with window space again the choice holds; nothing available: wait.
    #[test]
    fn weights_busy_minrtt_sends_elsewhere() {
        let p = ExternalParams { mode: ExternalMode::Weights, busy: ExternalBusy::Minrtt, ..ExternalParams::default() };
        let mut e = External::from_params(&p);
        e.decide(&weights(&[0.0, 1.0]));
        assert_eq!(go(&mut e, &[idle(30), idle(10)]), (Verdict::Send, vec![1]));
        assert!(!e.opportunistic_retransmission());
        assert_eq!(go(&mut e, &[idle(30), busy(10), idle(20)]), (Verdict::Send, vec![2]));
        assert!(e.opportunistic_retransmission());
        assert_eq!(go(&mut e, &[idle(30), idle(10)]), (Verdict::Send, vec![1]));
        assert_eq!(go(&mut e, &[busy(30), busy(10)]), (Verdict::Wait, vec![]));
    }

    /// `busy=next` (PDAA3C): the chosen subflow first while it has window room; without room
    /// the segment goes to the available subflow of highest Q (eq. 4), not to minRTT's choice:
    /// subflow 1 (40 ms, 100 segments: Q ≈ 0.3·144 800/0.04 = 1 086 000) beats subflow 2
    /// (20 ms, 10 segments: Q ≈ 217 200). No subflow with room: wait. No fallback involved.
    #[test]
    fn weights_busy_next_spills_by_quality() {
        use crate::sched::tests::sf;
        let p = ExternalParams { mode: ExternalMode::Weights, busy: ExternalBusy::Next, ..ExternalParams::default() };
        let mut e = External::from_params(&p);
        e.decide(&weights(&[1.0, 0.0, 0.0]));
        assert_eq!(go(&mut e, &[idle(30), sf(40, 100, 0), idle(20)]), (Verdict::Send, vec![0]));
        assert_eq!(go(&mut e, &[busy(30), sf(40, 100, 0), idle(20)]), (Verdict::Send, vec![1]));
        assert!(!e.opportunistic_retransmission());
        assert_eq!(go(&mut e, &[busy(30), sf(40, 100, 100), idle(20)]), (Verdict::Send, vec![2]));
        assert_eq!(go(&mut e, &[busy(30), busy(10)]), (Verdict::Wait, vec![]));
        let mut m = External::from_params(&ExternalParams { busy: ExternalBusy::Minrtt, ..p });
        m.decide(&weights(&[1.0, 0.0, 0.0]));
        assert_eq!(go(&mut m, &[busy(30), sf(40, 100, 0), idle(20)]), (Verdict::Send, vec![2]), "minRTT differs");
    }

    /// `busy=skip` (ReLeS): weights 1:3 give the exact pattern 0,1,1,1 while both have room
    /// (ties go to the lower index); a busy subflow is skipped (the other one sends, never the
    /// unweighted subflow 2) and makes its deficit up once it has room; no weighted subflow
    /// with room: wait. Credits in segments after the busy stretch: (−1, +1).
    #[test]
    fn weights_busy_skip_sends_on_the_weighted_subflows_with_room() {
        let p = ExternalParams { mode: ExternalMode::Weights, busy: ExternalBusy::Skip, ..ExternalParams::default() };
        let mut e = External::from_params(&p);
        e.decide(&weights(&[0.25, 0.75, 0.0]));
        let both = [idle(10), idle(30), idle(5)];
        let seq: Vec<usize> = (0..8).map(|_| go(&mut e, &both).1[0]).collect();
        assert_eq!(seq, [0, 1, 1, 1, 0, 1, 1, 1]);
        // Subflow 0 busy for 4 segments: all go to 1 (never to the unweighted 2).
        for _ in 0..4 {
            assert_eq!(go(&mut e, &[busy(10), idle(30), idle(5)]), (Verdict::Send, vec![1]));
        }
        // Room again: 0 is one segment behind its share, so it sends twice, then the pattern
        // resumes.
        let seq: Vec<usize> = (0..8).map(|_| go(&mut e, &both).1[0]).collect();
        assert_eq!(seq, [0, 0, 1, 1, 0, 1, 1, 1]);
        assert_eq!(go(&mut e, &[busy(10), busy(30), idle(5)]), (Verdict::Wait, vec![]));
        assert!(!e.opportunistic_retransmission(), "no fallback involved");
        // Over 1000 segments with room the shares hold exactly: 250 / 750.
        e.decide(&weights(&[0.25, 0.75, 0.0]));
        let mut c = [0usize; 3];
        for _ in 0..1000 {
            c[go(&mut e, &both).1[0]] += 1;
        }
        assert_eq!(c, [250, 750, 0]);
    }

    /// Unusable subflows are left out and the shares renormalised over the usable ones; with no
    /// positive weight on a usable subflow, minRTT decides.
    #[test]
    fn weights_skip_unusable_and_fall_back_to_min_rtt() {
        let mut e = External::from_name("external-weights");
        e.decide(&weights(&[1.0, 1.0]));
        for _ in 0..5 {
            assert_eq!(go(&mut e, &[unusable(10), idle(30)]), (Verdict::Send, vec![1]));
        }
        let mut e = External::from_name("external-weights");
        e.decide(&weights(&[0.0, -1.0]));
        assert_eq!(go(&mut e, &[idle(30), idle(10)]), (Verdict::Send, vec![1]), "minRTT");
        e.decide(&weights(&[1.0, 0.0]));
        assert_eq!(
            go(&mut e, &[unusable(10), idle(30)]),
            (Verdict::Send, vec![1]),
            "only weighted subflow unusable: minRTT"
        );
    }

    /// Packet: Ask until an answer arrives; the answer is used once (the next segment asks
    /// again). Path(None) = minRTT's choice. An answer naming a subflow that cannot take the
    /// segment (busy or out of range) is consumed and the segment waits.
    #[test]
    fn packet_asks_until_decided() {
        let mut e = External::from_name("external-packet");
        let subs = [idle(10), idle(30)];
        assert_eq!(go(&mut e, &subs), (Verdict::Ask, vec![]));
        assert_eq!(go(&mut e, &subs), (Verdict::Ask, vec![]), "still no answer");
        e.decide(&Decision::Path(Some(1)));
        assert_eq!(go(&mut e, &subs), (Verdict::Send, vec![1]), "the slower subflow, as told");
        assert_eq!(go(&mut e, &subs), (Verdict::Ask, vec![]), "one answer per segment");
        e.decide(&Decision::Path(None));
        assert_eq!(go(&mut e, &subs), (Verdict::Send, vec![0]), "None = minRTT");
        e.decide(&Decision::Path(Some(1)));
        assert_eq!(go(&mut e, &[idle(10), busy(30)]), (Verdict::Wait, vec![]));
        assert_eq!(go(&mut e, &subs), (Verdict::Ask, vec![]), "the answer was consumed");
        e.decide(&Decision::Path(Some(9)));
        assert_eq!(go(&mut e, &subs), (Verdict::Wait, vec![]), "out of range");
        e.decide(&Decision::Path(None));
        assert_eq!(go(&mut e, &[busy(10), busy(30)]), (Verdict::Wait, vec![]), "minRTT has nothing");
        assert!(!e.redundant());
    }
}
