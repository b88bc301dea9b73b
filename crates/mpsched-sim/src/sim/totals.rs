//! Counters of a flow summed over the connections it has used. A repeated download
//! (`repeat = n`) opens a fresh connection pair per transfer; every count the summary reports
//! (flow, connection and per-subflow columns) is the sum over those connections, so the
//! subflows' bytes add up to the flow's delivered bytes. State that is not a count (srtt,
//! cwnd, established) is the current connection's.

use mpsched_transport::{ConnInfo, SlotStats, SubflowInfo};

/// A flow's counters summed over its earlier connections (and, in the output, the current one).
#[derive(Clone, Debug, Default)]
pub(super) struct Totals {
    /// Bytes delivered to the receiving application.
    pub delivered: u64,
    /// Segments retransmitted, lost, RTOs and fast recoveries over every subflow.
    pub retx: u64,
    pub lost: u64,
    pub rtos: u64,
    pub frs: u64,
    /// Per-slot statistics over every subflow.
    pub slots: SlotStats,
    /// Connection-level counters.
    pub conn: ConnSums,
    /// Per subflow index.
    pub subflows: Vec<SubflowSums>,
}

impl Totals {
    /// Adds subflow `i`'s counters (and per-slot statistics) of one connection.
    pub fn add_subflow(&mut self, i: usize, s: &SubflowInfo, sl: &SlotStats) {
        self.retx += s.segments_retransmitted;
        self.lost += s.segments_lost;
        self.rtos += s.rto_count;
        self.frs += s.fast_recoveries;
        self.slots.add(sl);
        if self.subflows.len() <= i {
            self.subflows.resize(i + 1, SubflowSums::default());
        }
        self.subflows[i].add(s, sl);
    }

    /// Subflow `i`'s counters on earlier connections (zero if it had none).
    pub fn subflow(&self, i: usize) -> SubflowSums {
        self.subflows.get(i).copied().unwrap_or_default()
    }
}

/// Connection-level counters summed over connections (sender and receiver side).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct ConnSums {
    pub reinjected_bytes: u64,
    pub redundant_bytes: u64,
    pub opportunistic_retransmissions: u64,
    pub penalizations: u64,
    pub duplicate_bytes: u64,
    pub ooo_byte_seconds: f64,
    pub rwnd_full_seconds: f64,
    pub send_blocked_seconds: f64,
}

impl ConnSums {
    /// These sums plus one connection's sender (`snd`) and receiver (`rcv`) counters.
    pub fn plus(self, snd: &ConnInfo, rcv: &ConnInfo) -> ConnSums {
        ConnSums {
            reinjected_bytes: self.reinjected_bytes + snd.reinjected_bytes,
            redundant_bytes: self.redundant_bytes + snd.redundant_bytes,
            opportunistic_retransmissions: self.opportunistic_retransmissions + snd.opportunistic_retransmissions,
            penalizations: self.penalizations + snd.penalizations,
            duplicate_bytes: self.duplicate_bytes + rcv.duplicate_bytes,
            ooo_byte_seconds: self.ooo_byte_seconds + rcv.ooo_byte_seconds,
            rwnd_full_seconds: self.rwnd_full_seconds + rcv.rwnd_full_seconds,
            send_blocked_seconds: self.send_blocked_seconds + snd.send_blocked_seconds,
        }
    }
}

/// One subflow index's counters summed over connections.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SubflowSums {
    pub bytes_sent: u64,
    pub bytes_retransmitted: u64,
    pub delivered: u64,
    pub segments_lost: u64,
    pub rto_count: u64,
    pub fast_recoveries: u64,
    pub slots: SlotStats,
}

impl SubflowSums {
    fn add(&mut self, s: &SubflowInfo, sl: &SlotStats) {
        self.bytes_sent += s.bytes_sent;
        self.bytes_retransmitted += s.bytes_retransmitted;
        self.delivered += s.delivered;
        self.segments_lost += s.segments_lost;
        self.rto_count += s.rto_count;
        self.fast_recoveries += s.fast_recoveries;
        self.slots.add(sl);
    }

    /// These sums plus the current connection's subflow.
    pub fn plus(mut self, s: &SubflowInfo, sl: &SlotStats) -> SubflowSums {
        self.add(s, sl);
        self
    }
}
