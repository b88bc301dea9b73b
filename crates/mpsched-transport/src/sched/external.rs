//! Externally driven scheduling, for learned and online policies (architecture section 5):
//! - `Mode`: per interval, normal (minRTT) or redundant (EdAR);
//! - `Weights`: per interval, each subflow's share of new data (MPTCP-RL, PDAA3C), realised by a
//!   deterministic deficit counter so shares hold exactly over time;
//! - `Packet`: per segment, ask the outside policy (OLMS); the connection pauses meanwhile.

use super::{Decision, SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExternalMode {
    Mode,
    Weights,
    Packet,
}

#[derive(Clone, Debug)]
pub struct External {
    pub mode: ExternalMode,
    redundant: bool,
    weights: [f32; 8],
    /// Bytes each subflow was sent minus its weighted share (deficit round robin).
    credit: [f64; 8],
    answer: Option<Option<u8>>,
}

impl External {
    pub fn from_name(name: &str) -> Self {
        let mode = match name {
            "external-weights" => ExternalMode::Weights,
            "external-packet" => ExternalMode::Packet,
            _ => ExternalMode::Mode,
        };
        External { mode, redundant: false, weights: [1.0; 8], credit: [0.0; 8], answer: None }
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
        match self.mode {
            ExternalMode::Mode => match v.min_rtt() {
                Some(i) => {
                    out.insert(i);
                    Verdict::Send
                }
                None => Verdict::Wait,
            },
            ExternalMode::Weights => {
                // Among subflows with positive weight, the one furthest behind its share; wait
                // for it if it has no window space (the policy asked for that split).
                let total: f32 = (0..v.subflows.len()).filter(|&i| v.subflows[i].usable).map(|i| self.weights[i].max(0.0)).sum();
                if total <= 0.0 {
                    return match v.min_rtt() {
                        Some(i) => {
                            out.insert(i);
                            Verdict::Send
                        }
                        None => Verdict::Wait,
                    };
                }
                let mut best: Option<usize> = None;
                for i in 0..v.subflows.len() {
                    if !v.subflows[i].usable || self.weights[i] <= 0.0 {
                        continue;
                    }
                    if best.is_none_or(|b| self.credit[i] < self.credit[b]) {
                        best = Some(i);
                    }
                }
                let i = best.expect("a weighted usable subflow");
                if !v.subflows[i].available {
                    return Verdict::Wait;
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
                // No preference: the default scheduler's choice (minRTT).
                Some(None) => match v.min_rtt() {
                    Some(i) => {
                        out.insert(i);
                        Verdict::Send
                    }
                    None => Verdict::Wait,
                },
                None => Verdict::Ask,
            },
        }
    }
    fn redundant(&self) -> bool {
        self.mode == ExternalMode::Mode && self.redundant
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
