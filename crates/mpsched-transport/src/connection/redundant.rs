//! Redundant mode (Linux `mptcp_redundant.c`, EdAR's redundant phase): each subflow catches
//! up on the segments it has not carried. Moved out of connection/send.rs (issue 22,
//! twenty-second pass) to keep that module under ~800 lines.

use super::{Connection, MetaSeg, SubflowSet, Transmit};
use crate::sched::Scheduler;
use crate::time::Instant;

impl Connection {
    /// Redundant mode: each subflow, when it has window space, sends the oldest segment not yet
    /// DATA_ACKed that it has not carried itself (a copy of what another subflow sent), else new
    /// data. A segment a subflow already carried is never sent again on it at the connection
    /// level, whatever mode it was sent in (Linux `mptcp_is_available` → `mptcp_dont_reinject_skb`
    /// tests the skb's `path_mask`); its losses are the subflow's own retransmissions.
    ///
    /// EdAR (edar.txt §IV-A, "Redundant"): "Once a subflow is available to send a packet, EdAR
    /// first checks the redundant buffer. If the first available redundant packet has not been
    /// sent on the subflow, EdAR schedules the redundant packet [...]. Otherwise, EdAR schedules a
    /// new packet from the send buffer", and "if there are more than one subflows available, EdAR
    /// always schedules packets on the available subflow with the minimum RTT to fill its
    /// congestion window, before scheduling packets on the other subflows": with
    /// [`Scheduler::redundant_min_rtt_first`] the subflows are tried in srtt order. Linux
    /// `mptcp_redundant.c` instead goes round-robin from the subflow after the last one used.
    /// With more than two subflows a segment is copied to every subflow that has not carried it
    /// (the paper's redundant buffer drops a packet after its first copy; with two subflows the
    /// two rules agree).
    pub(super) fn schedule_redundant(&mut self, now: Instant, mss: u32) -> Option<Transmit> {
        let n = self.subflows.len();
        let unsent = self.shared.unsent();
        let len_new = (mss as u64).min(unsent) as u32;
        self.build_views(now, 1, SubflowSet::default());
        let any_active = self.views.iter().any(|v| v.usable && !v.backup);
        let order = self.redundant_order();
        for &i in &order[..n] {
            let i = i as usize;
            let v = self.views[i];
            if !v.usable || (v.backup && any_active) {
                continue;
            }
            if let Some(m) = self.first_not_carried(i) {
                if v.space < m.len as u64 {
                    continue;
                }
                self.meta[i].red_next = m.dsn + m.len as u64;
                self.next_red = (i + 1) % n;
                debug_assert!(!m.carried.is_empty(), "a sent segment has a carrier");
                self.info.redundant_bytes += m.len as u64;
                return Some(self.send_on(now, i, m.dsn, m.len));
            }
            if len_new == 0 || v.space < len_new as u64 {
                continue;
            }
            let dsn = self.shared.snd_next_dsn;
            if self.beyond_subflow_window(i, dsn, len_new) {
                continue;
            }
            if dsn + len_new as u64 > self.wnd_right {
                self.blocked_since.get_or_insert(now);
                return None;
            }
            if let Some(t) = self.blocked_since.take() {
                self.info.send_blocked_seconds += now.saturating_duration_since(t).as_secs_f64();
            }
            self.shared.snd_next_dsn += len_new as u64;
            self.push_sent(MetaSeg { dsn, len: len_new, carried: SubflowSet::default() });
            self.meta[i].red_next = dsn + len_new as u64;
            self.next_red = (i + 1) % n;
            return Some(self.send_on(now, i, dsn, len_new));
        }
        None
    }

    /// The order in which redundant mode offers subflows a segment: by srtt (ties: lower index)
    /// when the scheduler asks for minRTT first (EdAR), else round-robin from `next_red`.
    fn redundant_order(&self) -> [u8; 8] {
        let n = self.subflows.len();
        let mut order = [0u8; 8];
        for (k, o) in order[..n].iter_mut().enumerate() {
            *o = ((self.next_red + k) % n) as u8;
        }
        if self.sched.redundant_min_rtt_first() {
            order[..n].sort_by_key(|&i| (self.views[i as usize].info.srtt, i));
        }
        order
    }

    /// The oldest segment not yet DATA_ACKed, at or after subflow `i`'s redundant cursor, that `i`
    /// has not carried. Moves the cursor past the segments `i` carried on the way (they are
    /// never offered to it again), up to the next one to offer or the end of sent data.
    fn first_not_carried(&mut self, i: usize) -> Option<MetaSeg> {
        let cursor = self.meta[i].red_next.max(self.data_una);
        if cursor >= self.shared.snd_next_dsn {
            return None;
        }
        let start = self.sent.partition_point(|m| m.dsn + m.len as u64 <= cursor);
        let found = self.sent.range(start..).find(|m| !m.carried.contains(i)).copied();
        self.meta[i].red_next = found.map_or(self.shared.snd_next_dsn, |m| m.dsn);
        found
    }
}
