//! Software prefetch of the next event's flow state, for scenarios with many flows.
//!
//! With 1,000 flows each packet's connection, subflow and scoreboard lines were evicted since
//! the flow's previous packet, and the handler finds them one dependent load at a time
//! (event → ring → packet → endpoint → subflow vector → scoreboard): `flows-1000` cost about
//! four times `flows-1`'s CPU time per packet for 1.35 times its instructions. After each
//! event the next one is known (the queue's minimum): its packet's slot (one arrival ahead),
//! its endpoint's lines, and the heap blocks its connection pointed to after its previous
//! event ([`HotBlocks`]) are requested together, so the handler waits for about one miss
//! instead of a chain of them. A stale address costs only bandwidth: prefetching changes no
//! state and no output (the digest test runs `bench:flows-1000`, which prefetches).

use super::{Endpoint, FlowRt, Packet, Sim};
use crate::event::Kind;

/// Scenarios with at least this many flows prefetch: below it the flows' state stays in the
/// first-level caches and the prefetches would be instructions for nothing.
pub(super) const MANY_FLOWS: usize = 64;

/// An endpoint's connection's [`mpsched_transport::Connection::hot_addrs`] as of its last
/// event: one cache line per endpoint, read one event ahead without waiting for the
/// connection's own lines.
#[derive(Clone, Copy, Default)]
#[repr(align(64))]
pub(super) struct HotBlocks([usize; 8]);

/// Lines requested per [`HotBlocks`] slot (the order of `hot_addrs`).
const LINES: [usize; 8] = [19, 2, 1, 1, 2, 1, 3, 2];

/// Asks for the `N` cache lines from address `a` on (no effect elsewhere than x86-64).
#[inline(always)]
fn prefetch<const N: usize>(a: usize) {
    #[cfg(target_arch = "x86_64")]
    for i in 0..N {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: `prefetch` is a hint with no architectural effect: it never faults and
        // never reads into a register, whatever the address (AMD64 APM and Intel SDM,
        // PREFETCHh), so any address will do, even a stale or null one.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::without_provenance(a + 64 * i)) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = a;
}

/// [`prefetch`] of the lines `T` occupies at `p`.
#[inline(always)]
fn prefetch_of<T, const N: usize>(p: *const T) {
    const { assert!(N * 64 >= std::mem::size_of::<T>()) };
    prefetch::<N>(p.addr());
}

impl Sim {
    /// One step per event, after the event was handled: records the blocks of its endpoint
    /// (as guessed one event earlier; its lines are in cache now) and prefetches for the next
    /// event. Out of line, its state in [`Sim`], after the handler (where no register is
    /// live): runs of few flows pay one test per event (+0.28 % instructions on `newreno-10m`;
    /// before the handler it was +0.5 %).
    #[inline(never)]
    pub(super) fn prefetch_step(&mut self) {
        if let Some(ep) = self.guessed {
            self.note_blocks(ep as usize);
        }
        self.guessed = self.prefetch_next().map(|ep| ep as u32);
    }

    /// The endpoint the next pending event will hand a segment or a timer to, if any, with its
    /// lines and its recorded heap blocks requested.
    #[inline]
    pub(super) fn prefetch_next(&self) -> Option<usize> {
        let (kind, a) = self.ev.peek_next()?;
        let ep = match kind {
            Kind::Arrive => {
                let (p, after) = self.links[a as usize].ring_head()?;
                if let Some(q) = after {
                    // The packet after it: its slot is read here at the next arrival.
                    prefetch_of::<Packet, 3>(self.pkts.as_ptr().wrapping_add(q as usize));
                }
                let pk = &self.pkts[p as usize];
                let route = Self::route(&self.sc.paths[pk.path as usize], pk.to_server);
                if pk.udp || (pk.hop as usize) + 1 < route.len() {
                    return None;
                }
                prefetch::<1>((&self.flows[pk.flow as usize] as *const FlowRt).addr());
                2 * pk.flow as usize + pk.to_server as usize
            }
            Kind::Wake => a as usize,
            _ => return None,
        };
        prefetch_of::<Endpoint, 22>(&self.eps[ep]);
        let h = &self.hot[ep].0;
        prefetch::<{ LINES[0] }>(h[0]);
        prefetch::<{ LINES[1] }>(h[1]);
        prefetch::<{ LINES[2] }>(h[2]);
        prefetch::<{ LINES[3] }>(h[3]);
        prefetch::<{ LINES[4] }>(h[4]);
        prefetch::<{ LINES[5] }>(h[5]);
        prefetch::<{ LINES[6] }>(h[6]);
        prefetch::<{ LINES[7] }>(h[7]);
        Some(ep)
    }

    /// Records endpoint `ep`'s hot heap blocks after its event (they are in cache now).
    #[inline]
    pub(super) fn note_blocks(&mut self, ep: usize) {
        if let Some(c) = self.eps[ep].conn.as_ref() {
            self.hot[ep].0 = c.hot_addrs();
        }
    }
}
