//! Send-ahead reservations, the connection's part of STMS (Shi et al., "STMS: Improving MPTCP
//! Throughput Under Heterogeneous Networks", USENIX ATC 2018): a scheduler that answers
//! [`Verdict::SendAhead`](crate::sched::Verdict::SendAhead) has the chosen (slow) subflow send
//! a segment further ahead in DSN, and the bytes it skips are reserved for another (the fast)
//! subflow, so that the fast path fills the gap before the slow segment arrives ("pre-allocates
//! packets to send over the fast path for in-order arrival", the paper's abstract).
//!
//! The rules (the paper's text was not available; this is the smallest form of the abstract's
//! mechanism, see docs/algorithms.md, "STMS"):
//! - the segment sent now starts at `max(next_owner + gap, snd_next)`, where `next_owner` is the
//!   owner's oldest reserved DSN (or `snd_next` when it has none) and `snd_next` the next new
//!   DSN; the range `[snd_next, start)` is reserved for the owner, cut into MSS-sized segments;
//! - the gap is shortened so that the segment is whole written data; if the segment would
//!   pass the peer's window nothing is sent (STMS: no room on the slow path now);
//! - reserved segments go before any new data: on the owner as soon as it has window space,
//!   and while the owner is not usable (path down, potentially failed) on the minRTT choice;
//! - reserved segments are in the connection-level retransmission queue from the start (with
//!   no carrier until sent), so that it stays in DSN order; `ConnInfo::bytes_sent_new` (the next
//!   new DSN) counts them; the DATA_FIN waits until they are sent.
//!
//! A scheduler that never answers `SendAhead` never reserves anything: every code path here is
//! then skipped, and its runs are unchanged.

use super::{Connection, MetaSeg, Transmit};
use crate::sched::{SchedView, Scheduler, SubflowSet};
use crate::time::Instant;

/// A segment reserved for one subflow: sent by it before any new data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Reserved {
    pub dsn: u64,
    pub len: u32,
    pub owner: u8,
}

impl Connection {
    /// The oldest reserved segment, on its owner when that has window space for it, on the
    /// minRTT choice while the owner is not usable; `None` (nothing sent) otherwise.
    pub(super) fn send_reserved(&mut self, now: Instant) -> Option<Transmit> {
        let r = *self.reserved.front()?;
        let owner = r.owner as usize;
        let i = if self.subflow_usable(owner) {
            if self.subflows[owner].new_data_space(now) < r.len as u64 {
                return None;
            }
            owner
        } else {
            if !self.build_views_if_space(now, r.len, SubflowSet::default()) {
                return None;
            }
            let v = SchedView {
                subflows: &self.views,
                conn: &self.info,
                seg_len: r.len,
                reinjection: false,
                unsent: 0,
                send_window: 0,
                preference: None,
                changed: SubflowSet(self.views_changed.into()),
            };
            v.min_rtt()?
        };
        self.reserved.pop_front();
        let sf = &self.subflows[i];
        self.meta[i].slots.record(sf.cwnd(), sf.srtt().0);
        Some(self.send_on(now, i, r.dsn, r.len))
    }

    /// Carries out `Verdict::SendAhead { owner, gap }` on subflow `s` (which has window space):
    /// reserves the skipped bytes for `owner` and sends the segment after them on `s`.
    pub(super) fn send_ahead(&mut self, now: Instant, s: usize, owner: usize, gap: u64, mss: u32) -> Option<Transmit> {
        let next = self.shared.snd_next_dsn;
        let end = self.shared.snd_end_dsn;
        let mss = mss as u64;
        let base = self.reserved.iter().find(|r| r.owner as usize == owner).map_or(next, |r| r.dsn);
        // Whole written data: shorten the gap at the end of what the application wrote.
        let start = (base + gap).max(next).min(end.saturating_sub(mss).max(next));
        let len = mss.min(end - start);
        if start + len > self.wnd_right || self.beyond_subflow_window(s, start, len as u32) {
            return None;
        }
        let mut d = next;
        while d < start {
            let l = mss.min(start - d) as u32;
            self.reserved.push_back(Reserved { dsn: d, len: l, owner: owner as u8 });
            self.push_sent(MetaSeg { dsn: d, len: l, carried: SubflowSet::default() });
            d += l as u64;
        }
        if let Some(t) = self.blocked_since.take() {
            self.info.send_blocked_seconds += now.saturating_duration_since(t).as_secs_f64();
        }
        self.shared.snd_next_dsn = start + len;
        self.push_sent(MetaSeg { dsn: start, len: len as u32, carried: SubflowSet::default() });
        let info = &self.views[s].info;
        self.meta[s].slots.record(info.cwnd, info.srtt.0);
        self.sched.sent_ahead(start, len as u32);
        Some(self.send_on(now, s, start, len as u32))
    }
}
