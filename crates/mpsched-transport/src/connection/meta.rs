//! Positions in the connection-level retransmission queue (`sent`: segments sent, or taken
//! for a subflow's send queue, and not yet DATA_ACKed, ascending DSN, each with the subflows
//! that carried it).
//!
//! Every segment pushed on it is counted (`sent_pushed`, through [`Connection::push_sent`]), so
//! that the position a segment was pushed at ([`Connection::sent_pos`]) turns back into its
//! index after any number of segments left the front ([`Connection::sent_index_of`]). A segment
//! queued on a subflow ([`crate::sched::Verdict::Queue`]) leaves later, behind others; finding
//! its entry again by DSN was a division and, behind a short segment, a scan and a binary
//! search per segment sent: 24.9 M instructions in `subflows-8` (`carriers_of` +
//! `carriers_after`, perf13p's profile at `feacb74`).

use super::{Connection, MetaSeg};

impl Connection {
    /// Appends `m` to the retransmission queue (its DSN above every other's), counted.
    #[inline]
    pub(super) fn push_sent(&mut self, m: MetaSeg) {
        self.sent.push_back(m);
        self.sent_pushed = self.sent_pushed.wrapping_add(1);
    }

    /// The position of the segment pushed last (wrapping).
    #[inline]
    pub(super) fn sent_pos(&self) -> u32 {
        self.sent_pushed.wrapping_sub(1)
    }

    /// The index in `sent` of the segment pushed at `pos` ([`Connection::sent_pos`]) if it is
    /// still there and starts at `dsn`; `None` when it was DATA_ACKed or `pos` names another
    /// segment. DSNs are distinct, so a segment starting at `dsn` is the one.
    #[inline]
    pub(super) fn sent_index_of(&self, pos: u32, dsn: u64) -> Option<usize> {
        let k = index_at(self.sent_pushed, self.sent.len(), pos);
        self.sent.get(k).is_some_and(|m| m.dsn == dsn).then_some(k)
    }
}

/// The index of the segment pushed at `pos` in a queue of `len` segments after `pushed` pushes
/// (both wrapping): the front was pushed at `pushed - len`. Out of range (≥ `len`) when that
/// segment left.
#[inline]
fn index_at(pushed: u32, len: usize, pos: u32) -> usize {
    pos.wrapping_sub(pushed.wrapping_sub(len as u32)) as usize
}

#[cfg(test)]
mod tests {
    use super::index_at;
    use std::collections::VecDeque;

    /// Against a queue of the positions themselves: after pushes and pops, the index of every
    /// position still queued is where it is, and popped ones are out of range, on both sides
    /// of the counter's wrap.
    #[test]
    fn index_at_follows_pushes_and_pops() {
        for start in [0u32, u32::MAX - 3] {
            let (mut q, mut pushed) = (VecDeque::new(), start);
            for step in 0..40u32 {
                q.push_back(pushed);
                pushed = pushed.wrapping_add(1);
                if step % 3 == 2 {
                    q.pop_front();
                }
                for (k, &pos) in q.iter().enumerate() {
                    assert_eq!(index_at(pushed, q.len(), pos), k);
                }
                assert!(index_at(pushed, q.len(), q[0].wrapping_sub(1)) >= q.len());
            }
        }
    }
}
