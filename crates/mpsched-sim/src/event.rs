//! The event queue: a binary min-heap keyed by (time, insertion sequence), so events at equal
//! times pop in insertion order whatever the heap does.
//!
//! The heap defers the removal of its root: [`EventQueue::pop`] returns the root and leaves its
//! slot as a hole, and the next [`EventQueue::push`] — the handler of an event usually schedules
//! the next one (a serializer's next packet, a ring's next arrival) — fills the hole with one
//! sift-down instead of a removal (sift-down and sift-up) followed by an insertion (sift-up).
//! Which events pop, and in which order, depends only on the keys, not on the heap's layout.

/// What an event does; `a` and `b` are its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// The first of a rate link's packets lost as they leave its serializer (`a` = link,
    /// `b` = the link's generation; stale generations are ignored).
    Lost,
    /// The head of a link's propagation ring arrives (`a` = link, `b` = the link's generation).
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
/// instruction pair; the payload rides along. Keys are unique (the sequence is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    key: u128,
    kind: Kind,
    a: u32,
    b: u32,
}

/// Pending events, earliest first; equal times in insertion order.
#[derive(Default)]
pub struct EventQueue {
    /// Min-heap on `key`: `heap[i].key < heap[2i + 1].key, heap[2i + 2].key`.
    heap: Vec<Entry>,
    /// `heap[0]` was popped; its slot is free for the next push.
    hole: bool,
    seq: u64,
}

impl EventQueue {
    /// Schedules `kind(a, b)` at time `at` (ns).
    #[inline(always)]
    pub fn push(&mut self, at: u64, kind: Kind, a: u32, b: u32) {
        self.seq += 1;
        let e = Entry { key: ((at as u128) << 64) | self.seq as u128, kind, a, b };
        if self.hole {
            self.hole = false;
            sift_down(&mut self.heap, 0, e);
        } else {
            self.heap.push(e);
            sift_up(&mut self.heap, e);
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        if self.hole {
            self.remove_root();
        }
        let e = *self.heap.first()?;
        self.hole = true;
        Some(Event { at: (e.key >> 64) as u64, seq: e.key as u64, kind: e.kind, a: e.a, b: e.b })
    }

    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        let first = if self.hole {
            // The earliest pending event is a child of the hole.
            match (self.heap.get(1), self.heap.get(2)) {
                (Some(l), Some(r)) => Some(if r.key < l.key { r } else { l }),
                (l, _) => l,
            }
        } else {
            self.heap.first()
        };
        first.map(|e| (e.key >> 64) as u64)
    }

    /// Events processed so far: every push but those still pending (a hole is a popped
    /// entry), so a pop does not count.
    pub fn popped(&self) -> u64 {
        self.seq - (self.heap.len() - self.hole as usize) as u64
    }

    /// Closes the hole left by the last pop: the last entry moves into it.
    #[inline(never)]
    fn remove_root(&mut self) {
        self.hole = false;
        let last = self.heap.pop().expect("a hole is a popped root");
        if !self.heap.is_empty() {
            fill_root(&mut self.heap, last);
        }
    }
}

/// Puts `e` into the free root slot of `h` (std's `BinaryHeap::pop`): the free slot goes down
/// to a leaf along the smaller children (one comparison per level), then `e`, the heap's last
/// entry, which usually belongs near the bottom, goes up from there.
#[inline]
fn fill_root(h: &mut [Entry], e: Entry) {
    let n = h.len();
    let mut i = 0;
    let mut c = 1;
    while c + 1 < n {
        c += (h[c + 1].key < h[c].key) as usize;
        h[i] = h[c];
        i = c;
        c = 2 * i + 1;
    }
    if c + 1 == n {
        h[i] = h[c];
        i = c;
    }
    sift_up(&mut h[..=i], e);
}

/// Puts `e` into the free slot `i` of `h` and moves it down to its place: an event pushed by
/// the handler of the one just popped usually belongs near the top (measured: two comparisons
/// per level from the top cost fewer instructions than `fill_root`'s way up from a leaf).
#[inline]
fn sift_down(h: &mut [Entry], mut i: usize, e: Entry) {
    let n = h.len();
    loop {
        let mut c = 2 * i + 1;
        if c >= n {
            break;
        }
        if c + 1 < n && h[c + 1].key < h[c].key {
            c += 1;
        }
        if e.key < h[c].key {
            break;
        }
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

/// Moves `e` up from the last slot of `h` to its place.
#[inline]
fn sift_up(h: &mut [Entry], e: Entry) {
    let mut i = h.len() - 1;
    while i > 0 {
        let parent = (i - 1) / 2;
        if h[parent].key < e.key {
            break;
        }
        h[i] = h[parent];
        i = parent;
    }
    h[i] = e;
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

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

    /// One operation on a queue: push at a time (few distinct times, so ties are common), pop,
    /// or peek.
    #[derive(Clone, Debug)]
    enum Op {
        Push(u64),
        Pop,
        Peek,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![3 => (0u64..8).prop_map(Op::Push), 2 => Just(Op::Pop), 1 => Just(Op::Peek)]
    }

    proptest! {
        /// Any interleaving of pushes, pops and peeks gives what a sorted list of
        /// (time, insertion number) gives: the earliest first, ties in insertion order.
        #[test]
        fn pops_and_peeks_equal_a_sorted_list(ops in proptest::collection::vec(op(), 0..300)) {
            let mut q = EventQueue::default();
            let mut model: Vec<(u64, u32)> = Vec::new();
            let mut next = 0u32;
            let mut popped = 0u64;
            for op in ops {
                match op {
                    Op::Push(at) => {
                        q.push(at, Kind::Sample, next, 0);
                        model.push((at, next));
                        next += 1;
                    }
                    Op::Pop => {
                        let want = model.iter().copied().min().inspect(|m| model.retain(|x| x != m));
                        popped += want.is_some() as u64;
                        prop_assert_eq!(q.pop().map(|e| (e.at, e.a)), want);
                        prop_assert_eq!(q.popped(), popped);
                    }
                    Op::Peek => prop_assert_eq!(q.peek_time(), model.iter().map(|m| m.0).min()),
                }
            }
            let rest: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop()).map(|e| (e.at, e.a)).collect();
            model.sort();
            prop_assert_eq!(rest, model);
        }
    }
}
