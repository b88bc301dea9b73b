//! STMS, the Slide Together Multipath Scheduler (H. Shi, Y. Cui, X. Wang, Y. Hu, M. Dai,
//! F. Wang, K. Zheng, "STMS: Improving MPTCP Throughput Under Heterogeneous Networks", USENIX
//! ATC 2018, pp. 719-730). From the paper's abstract: minRTT sends bursts on the fast path when
//! the path RTTs differ; STMS "pre-allocates packets to send over the fast path for in-order
//! arrival" and adapts "the MPTCP-level send window based on the packets acknowledged".
//!
//! The paper's text was not retrieved, so the gap rule below is the reconstruction of
//! shared/specs/rl-baselines.md §5 ([unverified] there), not the paper's (docs/algorithms.md):
//! - the fast subflow f is the usable one with the smallest srtt; while it has window space it
//!   sends (reserved bytes first, the connection's part: connection/ahead.rs);
//! - when f is busy and a slower subflow s is available (minRTT's choice), s sends a segment
//!   `G` bytes past f's next DSN ([`Verdict::SendAhead`]); the skipped bytes wait for f. `G`
//!   is what f delivers while a segment on s travels longer than one on f:
//!   `G = cwnd_f · (srtt_s − srtt_f) / (2 · srtt_f) + adj` (one-way delay = srtt / 2), rounded
//!   down to whole MSS, at most the connection's send window less the segment;
//! - ACK-driven correction `adj` (the "adapt from acknowledged packets" part): when s's
//!   subflow-level ACK covers a segment sent ahead at DSN d (its delivered bytes pass the
//!   segment's end), the DATA_ACK seen then says whether it arrived too early (DATA_ACK <= d:
//!   it waited for the gap, `adj −= MSS`) or too late (DATA_ACK > d + len + MSS: fast-path data
//!   after it waited for it, `adj += MSS`); `adj` stays within ±[`MAX_ADJ_SEGMENTS`] MSS.
//!
//! Reinjections go by minRTT. No opportunistic retransmission or penalization.

use std::collections::VecDeque;

use super::{SchedStart, SchedView, Scheduler, SubflowSet, Verdict};
use crate::algo::FromParams;
use crate::time::Instant;

crate::params! {
    /// STMS's parameters.
    pub struct StmsParams {
        /// Correct the gap from the DATA_ACKs seen when segments sent ahead are acknowledged
        /// (reconstruction, see the module docs); `false`: the delay-model gap alone.
        adapt: bool = true;
    }
}

/// Bound of the ACK-driven gap correction, in MSS.
pub const MAX_ADJ_SEGMENTS: i64 = 64;

/// Segments sent ahead whose acknowledgement is still to be judged (older ones are dropped).
const MAX_PENDING: usize = 256;

/// A segment sent ahead, waiting for its subflow-level acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ahead {
    dsn: u64,
    len: u32,
    subflow: usize,
    /// The subflow's delivered bytes once this segment is acknowledged on it.
    delivered_at: u64,
}

#[derive(Clone, Debug, Default)]
/// The scheduler; see the module docs.
pub struct Stms {
    adapt: bool,
    mss: u64,
    /// The ACK-driven correction of the gap, bytes.
    adj: i64,
    /// The subflow and its delivered-at mark of the last `SendAhead`, until it is sent.
    choice: Option<(usize, u64)>,
    pending: VecDeque<Ahead>,
}

impl Stms {
    /// Test convenience: the scheduler registered under `name` with default parameters (the
    /// registry builds schedulers from their parameter struct, see `FromParams`).
    pub fn from_name(_: &str) -> Self {
        Self::from_params(&StmsParams::default())
    }

    /// The current ACK-driven correction of the gap, bytes.
    pub fn adjustment(&self) -> i64 {
        self.adj
    }

    /// Judges the segments sent ahead that their subflow has acknowledged since the last call.
    fn feedback(&mut self, v: &SchedView) {
        let (mss, acked) = (self.mss as i64, v.conn.data_acked);
        let mut adj = self.adj;
        self.pending.retain(|a| {
            let Some(s) = v.subflows.get(a.subflow) else { return false };
            if s.info.delivered < a.delivered_at {
                return true;
            }
            if acked <= a.dsn {
                adj -= mss; // it arrived before the gap was filled: gap too large
            } else if acked > a.dsn + a.len as u64 + mss as u64 {
                adj += mss; // fast-path data after it waited for it: gap too small
            }
            false
        });
        self.adj = adj.clamp(-MAX_ADJ_SEGMENTS * mss, MAX_ADJ_SEGMENTS * mss);
    }

    /// The gap for a segment on `s` while `f` is busy, bytes (whole MSS).
    fn gap(&self, v: &SchedView, f: usize, s: usize) -> u64 {
        let (fi, si) = (&v.subflows[f].info, &v.subflows[s].info);
        let (rtt_f, rtt_s) = (fi.srtt.0 as u128, si.srtt.0 as u128);
        if rtt_f == 0 || rtt_s <= rtt_f {
            return 0;
        }
        let model = (fi.cwnd as u128 * (rtt_s - rtt_f) / (2 * rtt_f)) as i64;
        let g = (model + self.adj).max(0) as u64;
        let room = v.send_window.saturating_sub(v.seg_len as u64);
        let mss = self.mss.max(1);
        g.min(room) / mss * mss
    }
}

impl FromParams for Stms {
    type Params = StmsParams;
    fn from_params(p: &StmsParams) -> Self {
        Stms { adapt: p.adapt, mss: 1448, ..Stms::default() }
    }
}

impl Scheduler for Stms {
    fn name(&self) -> &'static str {
        "stms"
    }
    fn get_send(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        if self.adapt {
            self.feedback(v);
        }
        self.choice = None;
        let Some(f) = v.fastest() else { return v.send_min_rtt(out) };
        if v.subflows[f].available {
            out.insert(f);
            return Verdict::Send;
        }
        let Some(s) = v.min_rtt() else { return Verdict::Wait };
        out.insert(s);
        let gap = self.gap(v, f, s);
        if gap == 0 {
            return Verdict::Send;
        }
        let si = &v.subflows[s].info;
        self.choice = Some((s, si.bytes_sent - si.bytes_retransmitted + v.seg_len as u64));
        Verdict::SendAhead { owner: f as u8, gap }
    }
    fn get_retrans(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        v.send_min_rtt(out)
    }
    fn start(&mut self, st: &SchedStart) {
        self.mss = st.mss as u64;
    }
    fn sent_ahead(&mut self, dsn: u64, len: u32) {
        let Some((subflow, delivered_at)) = self.choice.take() else { return };
        if self.pending.len() == MAX_PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back(Ahead { dsn, len, subflow, delivered_at });
    }
}

#[cfg(test)]
mod tests {
    //! The decision alone on hand-built views (the connection's part, and the ACK-driven
    //! correction on a live connection: connection/ahead_tests.rs).
    use super::*;
    use crate::info::ConnInfo;
    use crate::sched::tests::{busy, idle, reinj_view, retrans, send, sf, view, MSS};

    const T0: Instant = Instant::ZERO;

    /// The fast subflow has window space: it sends, nothing ahead.
    #[test]
    fn fast_subflow_with_space_sends() {
        let conn = ConnInfo::default();
        let mut s = Stms::from_name("stms");
        assert_eq!(send(&mut s, T0, &view(&[idle(60), idle(30)], &conn)), (Verdict::Send, vec![1]));
    }

    /// f (30 ms, cwnd 10 segments, full) busy, s (60 ms) available: gap = 10 · (60 − 30) /
    /// (2 · 30) = 5 segments; cwnd 11 gives 5.5, rounded down to 5; cwnd 12 gives 6.
    #[test]
    fn slow_subflow_sends_ahead_by_the_model_gap() {
        let conn = ConnInfo::default();
        let mut s = Stms::from_name("stms");
        for (cwnd, gap) in [(10, 5), (11, 5), (12, 6)] {
            let subs = [sf(30, cwnd, cwnd), idle(60)];
            let (verdict, out) = send(&mut s, T0, &view(&subs, &conn));
            assert_eq!((verdict, out), (Verdict::SendAhead { owner: 0, gap: gap * MSS }, vec![1]), "cwnd {cwnd}");
        }
    }

    /// The gap stays within the connection's send window less the segment; no srtt sample or
    /// equal srtts: no gap (a plain send on minRTT's choice); nothing available: wait.
    #[test]
    fn gap_bounds_and_plain_sends() {
        let conn = ConnInfo::default();
        let mut s = Stms::from_name("stms");
        let subs = [busy(30), idle(60)];
        let v = SchedView { send_window: 4 * MSS, ..view(&subs, &conn) };
        assert_eq!(send(&mut s, T0, &v), (Verdict::SendAhead { owner: 0, gap: 3 * MSS }, vec![1]));
        let v = SchedView { send_window: MSS + 1, ..view(&subs, &conn) };
        assert_eq!(send(&mut s, T0, &v), (Verdict::Send, vec![1]));
        let mut no_rtt = busy(30);
        no_rtt.info.srtt = crate::time::Duration::ZERO;
        assert_eq!(send(&mut s, T0, &view(&[no_rtt, idle(60)], &conn)).0, Verdict::Send);
        assert_eq!(send(&mut s, T0, &view(&[busy(30), idle(30)], &conn)), (Verdict::Send, vec![1]));
        assert_eq!(send(&mut s, T0, &view(&[busy(30), busy(60)], &conn)), (Verdict::Wait, vec![]));
    }

    /// Reinjections go by minRTT, never ahead.
    #[test]
    fn reinjections_by_min_rtt() {
        let conn = ConnInfo::default();
        let mut s = Stms::from_name("stms");
        let subs = [busy(30), idle(60)];
        assert_eq!(retrans(&mut s, T0, &reinj_view(&subs, &conn)), (Verdict::Send, vec![1]));
        assert!(!s.opportunistic_retransmission() && !s.redundant());
        assert_eq!(s.name(), "stms");
    }
}
