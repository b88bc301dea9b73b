//! The event queue: a binary heap keyed by (time, insertion sequence), so events at equal times
//! pop in insertion order whatever the heap does.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What an event does; `a` and `b` are its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A link's serializer finished its current packet (`a` = link).
    TxDone,
    /// The head of a link's propagation ring arrives (`a` = link).
    Arrive,
    /// A trace-driven link's delivery opportunity (`a` = link).
    TraceOpportunity,
    /// A scheduled link change (`a` = link, `b` = change index).
    LinkChange,
    /// An endpoint's timer (`a` = endpoint, `b` = generation; stale generations are ignored).
    Wake,
    /// A flow starts (`a` = flow).
    FlowStart,
    /// A flow's application stops (`a` = flow).
    FlowStop,
    /// A path (interface) event (`a` = index in the scenario's events).
    PathEvent,
    /// Periodic metrics sample.
    Sample,
    /// A flow's decision interval elapsed (`a` = flow).
    DecisionTimer,
    /// A rate-limited application produces more data (`a` = flow).
    AppTick,
    /// A `[[udp]]` flow sends its next packet (`a` = index in the scenario's `udp`).
    UdpSend,
}

/// An event popped from the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Time (ns).
    pub at: u64,
    /// Insertion sequence number (ties at equal times pop in this order).
    pub seq: u64,
    /// What happens.
    pub kind: Kind,
    /// First argument (see [`Kind`]).
    pub a: u32,
    /// Second argument (see [`Kind`]).
    pub b: u32,
}

/// Heap entry: the (time, sequence) key packed into one integer so a comparison is one
/// instruction pair; the payload rides along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    key: u128,
    kind: Kind,
    a: u32,
    b: u32,
}

impl Ord for Entry {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, we want the earliest first.
        o.key.cmp(&self.key)
    }
}
impl PartialOrd for Entry {
    #[inline]
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Pending events, earliest first; equal times in insertion order.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    popped: u64,
}

impl EventQueue {
    /// Schedules `kind(a, b)` at time `at` (ns).
    #[inline]
    pub fn push(&mut self, at: u64, kind: Kind, a: u32, b: u32) {
        self.seq += 1;
        self.heap.push(Entry { key: ((at as u128) << 64) | self.seq as u128, kind, a, b });
    }
    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some(Event { at: (e.key >> 64) as u64, seq: e.key as u64, kind: e.kind, a: e.a, b: e.b })
    }
    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| (e.key >> 64) as u64)
    }
    /// Events processed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        for i in 0..100u32 {
            q.push(if i % 2 == 0 { 5 } else { 3 }, Kind::Sample, i, 0);
        }
        let order: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop()).map(|e| (e.at, e.a)).collect();
        let mut expect: Vec<(u64, u32)> = (0..100).filter(|i| i % 2 == 1).map(|i| (3, i)).collect();
        expect.extend((0..100).filter(|i| i % 2 == 0).map(|i| (5, i)));
        assert_eq!(order, expect);
    }
}
