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
            if self.heap.len() == self.heap.capacity() {
                self.grow();
            }
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

    /// Removes and returns the earliest event if it is due at or before `limit` (ns), else
    /// leaves it pending: what [`EventQueue::peek_time`] then [`EventQueue::pop`] do, with the
    /// minimum found once. A hole is closed first whether or not the event is due (the order
    /// of what pops later depends only on the keys). Used by `Sim::advance` for every event.
    #[inline(always)]
    pub fn pop_due(&mut self, limit: u64) -> Option<Event> {
        if self.hole {
            self.remove_root();
        }
        let e = *self.heap.first()?;
        let at = (e.key >> 64) as u64;
        if at > limit {
            return None;
        }
        self.hole = true;
        Some(Event { at, seq: e.key as u64, kind: e.kind, a: e.a, b: e.b })
    }

    /// No event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.len() == self.hole as usize
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

    /// Makes room for more entries, at most `u32::MAX` in all (checked here, where the heap
    /// grows, not per push): `sift_down` indexes with `u32` so that the compiler sees a
    /// child's index above its parent's.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        assert!(self.heap.len() < u32::MAX as usize, "more than 2^32 - 1 pending events");
        self.heap.reserve(1);
    }

    /// Closes the hole left by the last pop: the last entry moves into it and down to its
    /// place ([`sift_down`], the push's code). std's way (the hole down to a leaf along the
    /// smaller children, one comparison a level, then the last entry up from there) cost more
    /// once `sift_down`'s moves and child choice were free of bounds checks and branches
    /// (measured: `newreno-10m` 88.09 -> 87.52 M, `lia-2path` 645.34 -> 644.29 M, `flows-1000`
    /// with its thousands of pending wake-ups 875.86 -> 872.70 M). Inlined into `pop_due`
    /// (measured: `newreno-10m` 87.52 -> 87.42 M, `lia-2path` 644.29 -> 643.86 M; with std's
    /// way inlining cost more).
    #[inline]
    fn remove_root(&mut self) {
        self.hole = false;
        let last = self.heap.pop().expect("a hole is a popped root");
        if !self.heap.is_empty() {
            sift_down(&mut self.heap, 0, last);
        }
    }
}

/// Puts `e` into the free slot `i` of `h` and moves it down to its place: an event pushed by
/// the handler of the one just popped usually belongs near the top (measured: two comparisons
/// per level from the top cost fewer instructions than std's way up from a leaf).
/// The index is a `u32` (fewer than 2^32 entries: [`EventQueue::grow`]), so the compiler sees
/// that a child's index `2i + 1` cannot wrap and is above `i`, below `n`: the move `h[i] = h[c]`
/// is not bounds-checked (measured: `newreno-10m` 88.64 -> 88.20 M, `lia-2path` 649.50 ->
/// 646.40 M; the same in std's hole-to-a-leaf loop, used then by `remove_root`, saved
/// nothing).
#[inline]
fn sift_down(h: &mut [Entry], i: usize, e: Entry) {
    let n = h.len();
    debug_assert!(n <= u32::MAX as usize);
    let mut i = i as u32;
    loop {
        let mut c = 2 * i as usize + 1;
        if c >= n {
            break;
        }
        if c + 1 < n {
            // The earlier child chosen without a branch (measured with the `sift_up` below:
            // `newreno-10m` 88.20 -> 88.09 M, `lia-2path` 646.40 -> 645.34 M).
            c += (h[c + 1].key < h[c].key) as usize;
        }
        if e.key < h[c].key {
            break;
        }
        h[i as usize] = h[c];
        i = c as u32;
    }
    h[i as usize] = e;
}

/// Moves `e` up from the last slot of `h` to its place. The slice shrinks to end at the free
/// slot as it moves up, so the slot written is always the slice's last one (no bounds check)
/// and the parent read is below it.
#[inline]
fn sift_up(h: &mut [Entry], e: Entry) {
    let mut h = h;
    loop {
        let i = h.len() - 1;
        if i == 0 {
            break;
        }
        let parent = (i - 1) / 2;
        if h[parent].key < e.key {
            break;
        }
        h[i] = h[parent];
        h = &mut h[..=parent];
    }
    let i = h.len() - 1;
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
    /// peek, or pop if due at or before a time.
    #[derive(Clone, Debug)]
    enum Op {
        Push(u64),
        Pop,
        Peek,
        PopDue(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u64..8).prop_map(Op::Push),
            2 => Just(Op::Pop),
            1 => Just(Op::Peek),
            2 => (0u64..9).prop_map(Op::PopDue),
        ]
    }

    proptest! {
        /// Any interleaving of pushes, pops, peeks and due pops gives what a sorted list of
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
                    Op::PopDue(limit) => {
                        let want = model.iter().copied().min().filter(|m| m.0 <= limit);
                        want.inspect(|m| model.retain(|x| x != m));
                        popped += want.is_some() as u64;
                        prop_assert_eq!(q.pop_due(limit).map(|e| (e.at, e.a)), want);
                        prop_assert_eq!(q.popped(), popped);
                    }
                }
                prop_assert_eq!(q.is_empty(), model.is_empty());
            }
            let rest: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop()).map(|e| (e.at, e.a)).collect();
            model.sort();
            prop_assert_eq!(rest, model);
        }
    }
}
