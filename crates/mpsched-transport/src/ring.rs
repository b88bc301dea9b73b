//! A first-in first-out ring of `Copy` items with a power-of-two capacity: the scoreboard's
//! queue of sent segments, and the simulator's link queues and propagation rings (public for
//! them: an index is an add and a mask, where `VecDeque` compares and subtracts). Unlike `VecDeque` it drops the oldest `k` items in one step
//! ([`Ring::advance`]: a cumulative ACK that acknowledges several segments counts them in one
//! read-only pass, then drops them), and an index is an add and a mask.

/// The ring. `buf.len()` is zero or a power of two; the items are
/// `buf[(head + i) & mask]` for `i < len`.
#[derive(Clone, Debug, Default)]
pub struct Ring<T> {
    buf: Vec<T>,
    head: usize,
    len: usize,
}

impl<T: Copy + Default> Ring<T> {
    /// An empty ring with room for at least `n` items.
    pub fn with_capacity(n: usize) -> Self {
        Ring { buf: vec![T::default(); n.max(1).next_power_of_two()], head: 0, len: 0 }
    }

    #[inline]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    /// Number of items.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the ring holds no item.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `x` (doubling the capacity when full).
    #[inline]
    pub fn push_back(&mut self, x: T) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & self.mask();
        self.buf[i] = x;
        self.len += 1;
    }

    #[inline(never)]
    fn grow(&mut self) {
        let mut buf = vec![T::default(); (2 * self.buf.len()).max(4)];
        for (i, x) in self.iter().enumerate() {
            buf[i] = *x;
        }
        self.buf = buf;
        self.head = 0;
    }

    /// The oldest item.
    #[inline]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        Some(&self.buf[self.head])
    }

    /// The `i`-th oldest item, if `i < len`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        Some(&self.buf[(self.head + i) & self.mask()])
    }

    /// Removes and returns the oldest item.
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.buf[self.head];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(x)
    }

    /// Removes and returns the newest item.
    #[inline]
    pub fn pop_back(&mut self) -> Option<T> {
        self.len = self.len.checked_sub(1)?;
        Some(self.buf[(self.head + self.len) & self.mask()])
    }

    /// Removes every item (the capacity stays).
    #[inline]
    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// The oldest item, mutable.
    #[inline]
    pub fn front_mut(&mut self) -> Option<&mut T> {
        if self.len == 0 {
            return None;
        }
        let h = self.head;
        Some(&mut self.buf[h])
    }

    /// The newest item.
    #[inline]
    pub fn back(&self) -> Option<&T> {
        self.len.checked_sub(1).map(|i| &self[i])
    }

    /// Drops the oldest `k` items (`k <= len`).
    #[inline]
    pub fn advance(&mut self, k: usize) {
        assert!(k <= self.len);
        self.head = (self.head + k) & self.mask();
        self.len -= k;
    }

    /// Oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        (0..self.len).map(move |i| &self.buf[(self.head + i) & self.mask()])
    }

    /// Oldest first.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        let cap = self.buf.len();
        let (wrapped, first) = self.buf.split_at_mut(self.head.min(cap));
        let n1 = self.len.min(first.len());
        let n2 = self.len - n1;
        first[..n1].iter_mut().chain(wrapped[..n2].iter_mut())
    }

    /// The number of leading items for which `pred` holds (the items are partitioned by it).
    pub fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self[mid]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

impl<T: Copy + Default> std::ops::Index<usize> for Ring<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        assert!(i < self.len, "ring index {i} out of {}", self.len);
        &self.buf[(self.head + i) & self.mask()]
    }
}

impl<T: Copy + Default> std::ops::IndexMut<usize> for Ring<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        assert!(i < self.len, "ring index {i} out of {}", self.len);
        let m = self.mask();
        &mut self.buf[(self.head + i) & m]
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[derive(Clone, Debug)]
    enum Op {
        Push(u32),
        Advance(usize),
        Set(usize, u32),
        Bump,
        Pop,
        PopBack,
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => any::<u32>().prop_map(Op::Push),
            1 => (0usize..6).prop_map(Op::Advance),
            1 => (0usize..64, any::<u32>()).prop_map(|(i, x)| Op::Set(i, x)),
            1 => Just(Op::Bump),
            2 => Just(Op::Pop),
            1 => Just(Op::PopBack),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {
        /// Every operation leaves the ring equal to a `VecDeque` given the same operations.
        #[test]
        fn ring_equals_vecdeque(cap in 0usize..9, ops in proptest::collection::vec(op(), 0..200)) {
            let mut r: Ring<u32> = if cap == 0 { Ring::default() } else { Ring::with_capacity(cap) };
            let mut m: VecDeque<u32> = VecDeque::new();
            for o in ops {
                match o {
                    Op::Push(x) => { r.push_back(x); m.push_back(x); }
                    Op::Advance(k) => { let k = k.min(m.len()); r.advance(k); m.drain(..k); }
                    Op::Set(i, x) => if i < m.len() { r[i] = x; m[i] = x; },
                    Op::Bump => {
                        for x in r.iter_mut() { *x = x.wrapping_add(1); }
                        for x in m.iter_mut() { *x = x.wrapping_add(1); }
                    }
                    Op::Pop => prop_assert_eq!(r.pop_front(), m.pop_front()),
                    Op::PopBack => prop_assert_eq!(r.pop_back(), m.pop_back()),
                    Op::Clear => { r.clear(); m.clear(); }
                }
                prop_assert_eq!(r.len(), m.len());
                prop_assert_eq!(r.is_empty(), m.is_empty());
                prop_assert_eq!(r.iter().copied().collect::<Vec<_>>(), m.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(r.back(), m.back());
                prop_assert_eq!(r.front_mut().map(|x| *x), m.front().copied());
                prop_assert_eq!(r.front(), m.front());
                for i in 0..m.len() + 2 { prop_assert_eq!(r.get(i), m.get(i)); }
                for i in 0..m.len() { prop_assert_eq!(r[i], m[i]); }
                let mut sorted: Vec<u32> = m.iter().copied().collect();
                sorted.sort_unstable();
                let t = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
                let mut rs = Ring::with_capacity(1);
                for &x in &sorted { rs.push_back(x); }
                rs.advance(sorted.len().min(1));
                let tail = &sorted[sorted.len().min(1)..];
                prop_assert_eq!(rs.partition_point(|&x| x < t), tail.partition_point(|&x| x < t));
            }
        }
    }
}
