//! DMPTCP (Dong, Yang, Tang, Huang, Wang, Pan, Wang, "Reducing transport latency for short
//! flows with multipath TCP", JNCA 108, 2018; MPTCP-RL's reference [3] and baseline): the
//! connection's path set comes from the MPTCP transmission model ([`super::tmodel`]) and the
//! flow's remaining bytes; minRTT inside the set. shared/specs/rl-baselines.md §2.
//!
//! * Candidates: subflows with an RTT sample that are usable, or established MP_JOIN subflows
//!   waiting for their fourth ACK (RFC 8684 §3.2: never sent data, no RTO), which are given
//!   one more srtt of wait. A subflow whose join has not completed has no RTT sample: it joins
//!   the candidates at the first decision after it comes up. While a usable subflow has no RTT
//!   sample (a retransmitted SYN gives none, Karn's rule), the set is every allowed subflow.
//! * Order: srtt ascending (DMPTCP's own), or, when the host policy set a path preference
//!   ([`SchedView::preference`], MPTCP-RL), preference descending (ties: srtt, then index);
//!   paths with a non-positive preference are no candidates and get no new data.
//! * Remaining bytes R: written by the application and not yet DATA_ACKed
//!   (`bytes_written − data_acked`). The simulator's sized flows write the whole flow at
//!   start, so R is the flow's remaining size; an application that writes piecewise (a send
//!   buffer smaller than the flow, a rate-limited source) shows only what it has handed over.
//! * Re-evaluation [unverified: the paper says "periodically"]: at the first decision, then at
//!   the first decision after `period_rtts` × the smallest candidate srtt, and at once when the
//!   candidates change (a subflow comes up or fails), the application writes more, or the
//!   preference changes.
//! * Scheduling: minRTT ([`SchedView::min_rtt_in`]) over the set; if no member is usable, over
//!   every allowed subflow. Reinjections (after an RTO or a path failure) may use any subflow,
//!   as Linux's minRTT does [unverified: DMPTCP does not say].
//! * Subflows outside the set stay open and idle (they are not closed) [unverified].

use super::tmodel::{self, Horizon, Increase, PathModel};
use super::{SchedStart, SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::{Duration, Instant};

crate::params! {
    /// DMPTCP's parameters (none is given by the paper; all [unverified]).
    pub struct DmptcpParams {
        /// Horizon of the set rule: `true` = the next candidate's first round (reproduces
        /// MPTCP-RL's worked example), `false` = the slowest member's RTT (the text read literally).
        next_candidate: bool = true;
        /// LIA-coupled congestion-avoidance increment in the model (RFC 6356), else +1 MSS per round.
        coupled: bool = true;
        /// Loss correction with each subflow's measured loss rate (segments lost / sent).
        loss: bool = false;
        /// Re-evaluation period in smallest-candidate srtts.
        period_rtts: f64 = 1.0, "> 0" if |x: &f64| *x > 0.0;
    }
}

/// Period used while no candidate has an RTT sample.
const NO_RTT_PERIOD: Duration = Duration::from_millis(100);

/// The scheduler; see the module docs.
#[derive(Clone, Debug, Default)]
pub struct Dmptcp {
    p: DmptcpParams,
    /// The chosen set.
    set: SubflowSet,
    /// Subflows allowed new data (positive preference, or all).
    allowed: SubflowSet,
    /// When the set is evaluated next; `None` = at the next decision.
    next_eval: Option<Instant>,
    /// Candidates at the last evaluation.
    candidates: SubflowSet,
    /// `bytes_written` at the last evaluation.
    written: u64,
    /// The preference at the last evaluation.
    pref: Option<[f32; 8]>,
    /// The subflows' MSS ([`SchedStart::mss`]).
    mss: u64,
}

impl crate::algo::FromParams for Dmptcp {
    type Params = DmptcpParams;
    fn from_params(p: &DmptcpParams) -> Self {
        Dmptcp { p: p.clone(), mss: 1448, ..Dmptcp::default() }
    }
}

fn pref_array(v: &SchedView) -> Option<[f32; 8]> {
    v.preference.map(|p| {
        let mut a = [0.0f32; 8];
        for (x, y) in a.iter_mut().zip(p) {
            *x = *y;
        }
        a
    })
}

impl Dmptcp {
    /// The current set (test and observation aid).
    pub fn set(&self) -> SubflowSet {
        self.set
    }

    /// Subflow `i` as a model path, if it is a candidate (module docs).
    fn model(&self, v: &SchedView, i: usize, mss: u64) -> Option<PathModel> {
        let s = &v.subflows[i];
        let joining = !s.usable && s.info.established && s.info.bytes_sent == 0 && s.info.rto_count == 0;
        if !self.allowed.contains(i) || s.info.srtt.0 == 0 || !(s.usable || joining) {
            return None;
        }
        let loss = if self.p.loss && s.info.segments_sent > 0 {
            (s.info.segments_lost as f64 / s.info.segments_sent as f64).min(0.5)
        } else {
            0.0
        };
        Some(PathModel {
            rtt_ns: s.info.srtt.0,
            wait_ns: if s.usable { 0 } else { s.info.srtt.0 },
            cwnd: s.info.cwnd,
            ssthresh: s.info.ssthresh,
            mss,
            loss,
        })
    }

    /// Subflows allowed new data under the view's preference.
    fn allowed_of(v: &SchedView) -> SubflowSet {
        let mut set = SubflowSet::default();
        for i in 0..v.subflows.len().min(16) {
            if v.preference.is_none_or(|p| p.get(i).is_some_and(|x| *x > 0.0)) {
                set.insert(i);
            }
        }
        set
    }

    /// The candidates now, with their models.
    fn candidates(&self, v: &SchedView, paths: &mut [PathModel; 8]) -> SubflowSet {
        let mut c = SubflowSet::default();
        for (i, slot) in paths.iter_mut().enumerate().take(v.subflows.len()) {
            if let Some(m) = self.model(v, i, self.mss) {
                *slot = m;
                c.insert(i);
            }
        }
        c
    }

    /// Some allowed subflow is usable but has no RTT sample yet (its SYN was retransmitted:
    /// Karn's rule leaves the handshake without a sample).
    fn unsampled(&self, v: &SchedView) -> bool {
        v.subflows.iter().enumerate().any(|(i, s)| s.usable && s.info.srtt.0 == 0 && self.allowed.contains(i))
    }

    /// Re-evaluates the set if due (module docs).
    fn refresh(&mut self, now: Instant, v: &SchedView) {
        let pref = pref_array(v);
        self.allowed = Self::allowed_of(v);
        let mut paths = [PathModel { rtt_ns: 0, wait_ns: 0, cwnd: 0, ssthresh: 0, mss: 1, loss: 0.0 }; 8];
        let cand = self.candidates(v, &mut paths);
        if self.unsampled(v) {
            // The model needs every usable path's RTT: no restriction until the first sample.
            self.set = self.allowed;
            self.next_eval = None;
            return;
        }
        let due = self.next_eval.is_none_or(|t| now >= t)
            || cand != self.candidates
            || v.conn.bytes_written != self.written
            || pref != self.pref;
        if !due {
            return;
        }
        let mut order = [0usize; 8];
        let mut n = 0;
        for i in (0..8).filter(|&i| cand.contains(i)) {
            order[n] = i;
            n += 1;
        }
        let order = &mut order[..n];
        let key = |i: usize| (-(pref.map_or(0.0, |p| p[i]) as f64), paths[i].rtt_ns, i);
        order.sort_by(|&a, &b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal));
        let inc = if self.p.coupled { Increase::lia(&paths[..]) } else { Increase::Uncoupled };
        let h = if self.p.next_candidate { Horizon::NextCandidate } else { Horizon::SlowestMember };
        let remaining = v.conn.bytes_written.saturating_sub(v.conn.data_acked);
        self.set = tmodel::choose(&paths, order, remaining, h, inc);
        let min_rtt = order.iter().map(|&i| paths[i].rtt_ns).min();
        let period = min_rtt.map_or(NO_RTT_PERIOD, |r| Duration((r as f64 * self.p.period_rtts) as u64));
        self.next_eval = Some(now + period);
        self.candidates = cand;
        self.written = v.conn.bytes_written;
        self.pref = pref;
    }

    /// minRTT in the set; over every allowed subflow when no member is usable.
    fn pick(&self, v: &SchedView) -> Option<usize> {
        let member_usable = v.subflows.iter().enumerate().any(|(i, s)| s.usable && self.set.contains(i));
        if member_usable {
            v.min_rtt_in(self.set)
        } else {
            v.min_rtt_in(self.allowed)
        }
    }
}

impl Scheduler for Dmptcp {
    fn name(&self) -> &'static str {
        "dmptcp"
    }
    fn get_send(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.refresh(now, v);
        super::send_on(self.pick(v), out)
    }
    fn get_retrans(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        v.send_min_rtt(out)
    }
    fn start(&mut self, s: &SchedStart) {
        self.mss = s.mss.max(1) as u64;
    }
}

#[cfg(test)]
#[path = "dmptcp_tests.rs"]
mod tests;
