//! The upstream Linux MPTCP packet scheduler (`default` in `net.mptcp.available_schedulers`):
//! net/mptcp/protocol.c `mptcp_subflow_get_send`, reached through `mptcp_sched_get_send` /
//! `mptcp_sched_default` (net/mptcp/sched.c), with the burst of `__subflow_push_pending`.
//!
//! - Among the active subflows (`mptcp_subflow_active`), the one with the lowest *linger
//!   time*, queued bytes / pacing rate (`sk_wmem_queued << 32 / avg_pacing_rate`); backups are
//!   ranked apart and used only when no active subflow is usable (`nr_active == 0`).
//! - The pacing rate is the kernel's `tcp_update_pacing_rate`: max(cwnd, in flight) / srtt,
//!   × 200 % while cwnd < ssthresh/2, else × 120 %. Each subflow keeps a running average
//!   (`avg_pacing_rate`), started from the rate and updated when the subflow is picked, weighted
//!   by its queued bytes and the burst: avg = (avg·queued + rate·burst) / (burst + queued).
//! - The picked subflow keeps receiving data for a burst of `MPTCP_SEND_BURST_SIZE` (64 KB,
//!   at most the connection's send window) while it can take it (`__subflow_push_pending`:
//!   burst left, send-buffer room, still active).
//!
//! "Can take it" is send-buffer room, not window room: the kernel appends the data to the
//! subflow's write queue (`mptcp_sendmsg_frag`, bounded by the MPTCP-level window in
//! `mptcp_check_allowed_size`) and the subflow sends it as its congestion and send windows open.
//! So every usable active subflow is a candidate, and the answer is always [`Verdict::Queue`]
//! (the connection's per-subflow send queues, connection/queue.rs); queued bytes are those sent
//! and not yet acknowledged on the subflow plus those waiting in its queue (`sk_wmem_queued`).
//! When the picked subflow's send buffer is full (`sk_stream_memory_free`: queued bytes below
//! `sk_sndbuf`) the answer is [`Verdict::Wait`], as the kernel returns no subflow. The send
//! buffer is `tcp_sndbuf_expand`'s: 2 × max(cwnd in segments, `TCP_INIT_CWND`) × 4,352 bytes
//! (the charge per segment of a 1,460-byte MSS clamp: `roundup_pow_of_two(1460 +
//! MAX_TCP_HEADER + skb_shared_info)` + `sk_buff`), at most `tcp_wmem[2]`; set for the initial
//! window when the subflow is established (`tcp_init_buffer_space`), it only grows, and only
//! while the subflow is not congestion-window limited (`tcp_new_space` →
//! `tcp_should_expand_sndbuf`), judged here at each decision. It is counted in payload bytes:
//! the subflows' skbs hold up to 64 KB each (`size_goal`), their `truesize` is little more.
//!
//! No opportunistic retransmission or penalisation (those are the out-of-tree v0.95 minRTT's,
//! `minrtt`). Reinjected data goes, as in `mptcp_subflow_get_retrans`, to the first active
//! subflow that has nothing outstanding or queued (`tcp_rtx_and_write_queues_empty`) and has
//! not carried it, else to minRTT's choice.

use super::{SchedStart, SchedSubflow, SchedView, Scheduler, SubflowSet, Verdict};
use crate::algo::FromParams;
use crate::cc::kernel_pacing_rate;
use crate::connection::moved_min;
use crate::info::SubflowInfo;
use crate::time::Instant;

/// `MPTCP_SEND_BURST_SIZE`: bytes pushed to one subflow before the scheduler chooses again.
pub const SEND_BURST: u64 = 65_536;

crate::params! {
    /// The upstream scheduler's parameters.
    pub struct UpstreamParams {
        /// Bytes sent on the picked subflow before choosing again (`MPTCP_SEND_BURST_SIZE`).
        burst_bytes: u64 = SEND_BURST, ">= 1" if |x: &u64| *x >= 1;
    }
}

/// The scheduler; see the module docs.
#[derive(Clone, Debug)]
pub struct Upstream {
    burst_size: u64,
    /// Bytes of the current burst left (`msk->snd_burst`) and its subflow.
    burst: u64,
    last: Option<usize>,
    /// `subflow->avg_pacing_rate`, bytes/s; 0 = not started.
    avg_pace: [u64; 16],
    /// Each subflow's `sk_sndbuf` in payload bytes (module docs; at most [`TCP_WMEM_MAX`]); 0 =
    /// not seen usable yet.
    sndbuf: [u32; 16],
    /// Payload bytes of a full segment: the send buffer is reckoned in segments. (A `u32`, as
    /// the connection's: `stale` shares its word.)
    mss: u32,
    /// `pick`'s per-subflow ranking keys, kept across decisions with more than two subflows
    /// ([`Lingers`]); allocated at the first such pick (boxed: 8 bytes here; `AnySched` 232 -> 240 B).
    lingers: Option<Box<Lingers>>,
    /// Bit i: entry i of [`Lingers`] may be out of date and is looked at by the next pick
    /// (O(changed) instead of every subflow; see [`Upstream::lowest_linger_kept`]). Every bit
    /// at first: no entry holds a key yet.
    stale: u16,
}

/// `pick`'s ranking of each subflow, kept while its inputs (usable, backup, queued bytes,
/// average pacing rate) are unchanged: most picks with eight subflows follow a change of one
/// or two of them (the one ACKed, the one queued on), yet each divided and compared for all
/// eight (~37 instructions per subflow and pick; `subflows-8`: 106,000 picks, 100,000 of
/// them on a closed send window, the third decision of every ACK's drive).
///
/// A key orders the candidates as `pick`'s two-class scan does: `backup << 127 | linger << 4
/// | index` (the linger time is below 2^96: queued bytes below 2^64, shifted by 32), so the
/// smallest key is the best active subflow if any, else the best backup, ties to the lower
/// index; `u128::MAX` for a subflow that is not a candidate (not usable, or no pacing rate).
/// A key is taken again when the inputs it was computed from differ (`flags`, `queued`), or
/// when its entry was cleared (`flags` 0: the average rate moved, or it is still 0 and the
/// rate is tried again at every pick, as the scan does).
#[derive(Clone, Debug)]
struct Lingers {
    e: [Linger; 16],
    /// The smallest key of the first `n` entries (what `pick` wants), kept across picks and
    /// moved by the keys taken again ([`moved_min`], as the connection keeps its earliest
    /// deadline): folded again over the entries only when the entry that held it grew (the
    /// subflow just picked, given data) or the subflow count changed. The fold was ~9
    /// instructions per subflow and pick with `u128` keys (9.3 M in `subflows-8`).
    min: u128,
    n: u8,
}

/// One subflow's entry of [`Lingers`].
#[derive(Clone, Copy, Debug)]
struct Linger {
    key: u128,
    queued: u64,
    /// `VALID | usable | backup << 1` of the inputs of `key`; 0 = take the key again.
    flags: u8,
}

/// [`Linger::flags`]' bit for an entry that holds a key.
const VALID: u8 = 4;

impl Default for Lingers {
    fn default() -> Self {
        Lingers { e: [Linger { key: u128::MAX, queued: 0, flags: 0 }; 16], min: u128::MAX, n: 0 }
    }
}

impl FromParams for Upstream {
    type Params = UpstreamParams;
    fn from_params(p: &UpstreamParams) -> Self {
        Upstream {
            burst_size: p.burst_bytes,
            burst: 0,
            last: None,
            avg_pace: [0; 16],
            sndbuf: [0; 16],
            mss: 1448,
            lingers: None,
            stale: u16::MAX,
        }
    }
}

/// `tcp_sndbuf_expand`'s charge per segment for a 1,460-byte MSS clamp, bytes (module docs).
pub const SNDBUF_PER_SEGMENT: u64 = 4_352;
/// `tcp_wmem[2]`: the largest send buffer `tcp_sndbuf_expand` sets.
pub const TCP_WMEM_MAX: u64 = 4 << 20;

/// `tcp_sndbuf_expand`'s send buffer for a congestion window of `cwnd` bytes: 2 × max(cwnd in
/// segments of `mss`, `TCP_INIT_CWND` = 10) × [`SNDBUF_PER_SEGMENT`], at most [`TCP_WMEM_MAX`].
pub fn sndbuf_expand(cwnd: u64, mss: u64) -> u64 {
    (2 * (cwnd / mss.max(1)).max(10) * SNDBUF_PER_SEGMENT).min(TCP_WMEM_MAX)
}

/// The kernel's `sk_pacing_rate` of a subflow (`tcp_update_pacing_rate`), bytes/s; before an
/// RTT sample the kernel does not divide by srtt: effectively unlimited.
pub fn pacing_rate(s: &SubflowInfo) -> u64 {
    kernel_pacing_rate(s.cwnd, s.ssthresh, s.outstanding, s.srtt).unwrap_or(u64::MAX >> 16)
}

/// The kernel's linger time of `queued` bytes at `pace` bytes/s, in 2^-32 s: `queued << 32 /
/// pace`, floored.
#[inline]
fn linger_time(queued: u64, pace: u64) -> u128 {
    div_u128(u128::from(queued) << 32, u128::from(pace))
}

/// `a / b` (`b` > 0), by a 64-bit division when both fit in 64 bits: the same quotient without
/// the call to the 128-bit division routine (one per usable subflow and decision in `pick`).
#[inline]
fn div_u128(a: u128, b: u128) -> u128 {
    if (a | b) >> 64 == 0 {
        u128::from(a as u64 / b as u64)
    } else {
        a / b
    }
}

impl Upstream {
    /// Each usable subflow's send buffer: `tcp_sndbuf_expand` for its window when first seen
    /// (`tcp_init_buffer_space`), then again, never shrinking, whenever it is not
    /// congestion-window limited (`tcp_new_space` → `tcp_should_expand_sndbuf`: packets in
    /// flight below cwnd).
    ///
    /// Judged at every decision, but only for the subflows whose view changed since the last
    /// one ([`SchedView::changed`]): for the others the same test already ran on the same view,
    /// or on one with less in flight and the same window (segments sent since), and its result
    /// (a maximum, grown only while pipe + MSS ≤ cwnd) would not move. Looking at every subflow at every decision
    /// was ~15 instructions per subflow (~37 M in `subflows-8`). Debug builds check the result
    /// against the pass over every subflow.
    fn expand_sndbufs(&mut self, v: &SchedView) {
        let n = v.subflows.len().min(16);
        let mut m = v.changed.0 & ((1u32 << n) - 1) as u16;
        self.stale |= m;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            self.expand_one(i, &v.subflows[i]);
        }
        #[cfg(any(test, debug_assertions))]
        {
            let mut full = self.clone();
            for (i, s) in v.subflows.iter().enumerate().take(16) {
                full.expand_one(i, s);
            }
            assert_eq!(full.sndbuf, self.sndbuf, "send buffers of unchanged views");
        }
    }

    /// [`Upstream::expand_sndbufs`] for subflow `i`.
    #[inline]
    fn expand_one(&mut self, i: usize, s: &SchedSubflow) {
        let buf = &mut self.sndbuf[i];
        if s.usable && (*buf == 0 || s.info.pipe + u64::from(self.mss) <= s.info.cwnd) {
            // At most TCP_WMEM_MAX (4 MiB): fits.
            *buf = (*buf).max(sndbuf_expand(s.info.cwnd, u64::from(self.mss)) as u32);
        }
    }

    /// `sk_stream_memory_free`: subflow `i`'s queued bytes are below its send buffer.
    fn memory_free(&self, i: usize, s: &SchedSubflow) -> bool {
        s.queued < u64::from(self.sndbuf[i])
    }

    /// `mptcp_subflow_get_send`: the lowest-linger usable subflow (backups when no active
    /// subflow is usable), if its send buffer has room; starts its burst and updates its
    /// average pacing rate.
    fn pick(&mut self, v: &SchedView) -> Option<usize> {
        let i = if v.subflows.len() > 2 { self.lowest_linger_kept(v) } else { self.lowest_linger(v) }?;
        if !self.memory_free(i, &v.subflows[i]) {
            return None;
        }
        let burst = self.burst_size.min(v.send_window);
        if burst > 0 {
            let wmem = v.subflows[i].queued as u128;
            let avg = self.avg_pace[i] as u128 * wmem + pacing_rate(&v.subflows[i].info) as u128 * burst as u128;
            self.avg_pace[i] = div_u128(avg, burst as u128 + wmem) as u64;
            if let Some(l) = &mut self.lingers {
                l.e[i].flags = 0;
                self.stale |= 1 << i;
            }
        }
        (self.burst, self.last) = (burst, Some(i));
        Some(i)
    }

    /// The lowest-linger candidate of `pick`, by a scan over every subflow (starting the
    /// average pacing rate of each usable one that has none yet).
    #[inline]
    fn lowest_linger(&mut self, v: &SchedView) -> Option<usize> {
        // The kept keys would miss the rates started here: only ever used for more subflows
        // than here (subflows are never removed).
        debug_assert!(v.subflows.len() > 2 || self.lingers.is_none(), "subflows removed");
        let mut best: [(Option<usize>, u128); 2] = [(None, u128::MAX); 2];
        let mut nr_active = 0;
        for (i, (s, avg)) in v.subflows.iter().zip(self.avg_pace.iter_mut()).enumerate() {
            if !s.usable {
                continue;
            }
            nr_active += !s.backup as usize;
            if *avg == 0 {
                *avg = pacing_rate(&s.info);
            }
            let pace = *avg;
            if pace == 0 {
                continue;
            }
            let linger = linger_time(s.queued, pace);
            let class = &mut best[s.backup as usize];
            if linger < class.1 {
                *class = (Some(i), linger);
            }
        }
        if nr_active == 0 {
            best[1].0
        } else {
            best[0].0
        }
    }

    /// [`Upstream::lowest_linger`] from the keys of [`Lingers`], each taken again only when its
    /// inputs changed. Only the entries marked in `stale` are looked at (visited from the bit
    /// mask), and the smallest key is kept with them ([`Lingers::min`]). An entry's inputs
    /// (usable, backup, queued bytes) can move between two picks only on a view that is in
    /// some decision's [`SchedView::changed`] set (its snapshot copied again: an ACK, any
    /// change of the subflow but the connection's own sends, a change of `usable` or of the
    /// backup flag), or on a subflow this scheduler chose since: the connection queues on the
    /// subflow `get_send` answers (all of them the picked one until the next pick, the burst
    /// going on) and sends a reinjection on the one `get_retrans` answers, and those are its
    /// only sends on an upstream connection that move queued bytes (a segment leaving a send
    /// queue moves its bytes from unsent to in flight). So `stale` gathers every decision's
    /// changed set, the subflow picked (or, when the pick fails, the last burst's, which may
    /// go on) and the one given a reinjection, the entries whose average rate moved and those
    /// whose rate is still 0 (tried again at every pick, as the scan does). Most picks with
    /// eight subflows follow the change of one subflow (the one ACKed; 100,001 of `subflows-8`'s
    /// 106,649 picks are on a closed send window, where nothing is queued); the pass over all
    /// eight, comparing inputs and taking the minimum of `u128` keys, was ~25 instructions per
    /// subflow and pick: 25.8 -> 17.5 M instructions in this function, `subflows-8` 769.28 ->
    /// 761.15 M (issue 22, twentieth pass). Debug builds, and this crate's tests in any build
    /// (connection/tests.rs runs five lossy paths through it), check that every entry left
    /// alone holds its view's inputs, the kept minimum, and the answer and average rates
    /// against the scan.
    #[inline(never)]
    fn lowest_linger_kept(&mut self, v: &SchedView) -> Option<usize> {
        #[cfg(any(test, debug_assertions))]
        let mut scan = self.clone();
        let l = self.lingers.get_or_insert_with(Box::default);
        let n = v.subflows.len().min(16);
        let all = ((1u32 << n) - 1) as u16;
        let mut m = self.stale & all;
        self.stale &= !all;
        let (mut min, mut lost) = (l.min, usize::from(l.n) != n);
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            let (s, e) = (&v.subflows[i], &mut l.e[i]);
            let f = VALID | s.usable as u8 | (s.backup as u8) << 1;
            if f != e.flags || s.queued != e.queued {
                let old = e.key;
                *e = Linger { key: u128::MAX, queued: s.queued, flags: f };
                if s.usable {
                    let avg = &mut self.avg_pace[i];
                    if *avg == 0 {
                        *avg = pacing_rate(&s.info);
                    }
                    if *avg == 0 {
                        e.flags = 0; // tried again at the next pick, as the scan does
                        self.stale |= 1 << i;
                    } else {
                        e.key = (s.backup as u128) << 127 | linger_time(s.queued, *avg) << 4 | i as u128;
                    }
                }
                let (kept, gone) = moved_min(min, old, e.key);
                (min, lost) = (kept, lost | gone);
            }
        }
        if lost {
            min = l.e[..n].iter().fold(u128::MAX, |m, e| m.min(e.key));
        }
        (l.min, l.n) = (min, n as u8);
        // An active key (top bit clear) is the best; a backup's only when no active subflow
        // is usable (rare: asked only then).
        let some = min >> 127 == 0 || min != u128::MAX && !v.subflows.iter().any(|s| s.usable && !s.backup);
        let best = some.then_some((min & 15) as usize);
        #[cfg(any(test, debug_assertions))]
        {
            // Every entry left alone holds the inputs of its view.
            assert_eq!(min, l.e[..n].iter().fold(u128::MAX, |m, e| m.min(e.key)), "kept smallest key");
            for (i, (s, e)) in v.subflows.iter().zip(l.e.iter()).enumerate() {
                if e.flags != 0 {
                    let f = VALID | s.usable as u8 | (s.backup as u8) << 1;
                    assert_eq!((e.flags, e.queued), (f, s.queued), "kept linger {i} of an unchanged view");
                }
            }
            assert_eq!(best, scan.lowest_linger(v), "kept lingers");
            assert_eq!(self.avg_pace, scan.avg_pace, "average pacing rates");
        }
        // Queued on at this decision and every one of its burst, unless the send window is
        // closed (the connection cuts queued data at the peer's window: nothing is queued, and
        // the burst is 0); when the pick fails (no candidate, or no room in its send buffer),
        // the burst before may go on.
        let free = best.is_some_and(|i| self.memory_free(i, &v.subflows[i]));
        let mark = if free { best.filter(|_| v.send_window > 0) } else { self.last };
        self.stale |= mark.map_or(0, |i| 1 << i);
        best
    }

    /// Whether [`Scheduler::get_send`] on `subflows` with an empty changed set (the views
    /// unchanged since its last call but for what the connection queued) would answer
    /// [`Verdict::Wait`] and change nothing, by a sufficient test: every usable subflow's send
    /// buffer is full (so the burst cannot go on and whichever `pick` ranks first has no room)
    /// and its average rate started (`pick` starts it otherwise). Read, not asked: the
    /// connection then skips the call (`lia-2path`: the last decision of an ACK's drain, after
    /// the `Queue`s that filled the send buffers). `false` whenever unsure, and always with
    /// more than two subflows (`lowest_linger_kept` marks its entries at every pick).
    #[inline]
    pub(crate) fn waits(&self, subflows: &[SchedSubflow]) -> bool {
        subflows.len() <= 2
            && subflows
                .iter()
                .zip(self.avg_pace.iter())
                .enumerate()
                .all(|(i, (s, &avg))| !s.usable || avg != 0 && !self.memory_free(i, s))
    }

    /// [`Scheduler::get_send`] on `subflows` with an empty changed set (the views unchanged
    /// since its last call but for what the connection queued: `expand_sndbufs` has nothing
    /// to do), when its answer needs no pick: `Some(Some(i))` when the burst goes on on
    /// subflow `i` (counted down by `seg_len`, as `get_send` does; a `Queue` on `i`),
    /// `Some(None)` when it would answer `Wait` changing nothing ([`Upstream::waits`]),
    /// `None` when it must be asked. Called directly by the connection: without the
    /// `SchedView`, the dispatch and `get_send`'s prologue, the second and third decisions of
    /// each ACK's drain in `lia-2path`.
    #[inline]
    pub(crate) fn send_unchanged(&mut self, subflows: &[SchedSubflow], seg_len: u32) -> Option<Option<usize>> {
        if let Some(i) = self.in_burst_of(subflows) {
            self.burst = self.burst.saturating_sub(u64::from(seg_len));
            return Some(Some(i));
        }
        self.waits(subflows).then_some(None)
    }

    /// The burst's subflow, if the burst goes on: bytes left, and the subflow is usable, has
    /// send-buffer room and is in the class the scheduler would use.
    #[inline]
    fn in_burst(&self, v: &SchedView) -> Option<usize> {
        self.in_burst_of(v.subflows)
    }

    /// [`Upstream::in_burst`] of these views.
    #[inline]
    fn in_burst_of(&self, subflows: &[SchedSubflow]) -> Option<usize> {
        let i = self.last.filter(|_| self.burst > 0)?;
        let s = subflows.get(i)?;
        if !(s.usable && self.memory_free(i, s)) {
            return None;
        }
        // Only a backup's burst asks whether an active subflow is usable: the scan over the
        // subflows was done first, at every decision, when it was a `let` above.
        (!s.backup || !subflows.iter().any(|x| x.usable && !x.backup)).then_some(i)
    }
}

impl Scheduler for Upstream {
    fn name(&self) -> &'static str {
        "upstream"
    }

    fn start(&mut self, s: &SchedStart) {
        self.mss = s.mss.max(1);
    }

    fn queues(&self) -> bool {
        true
    }

    /// Subflows, the segment's length and the send window only.
    fn reads_conn(&self) -> bool {
        false
    }

    /// Usability, backup flag, snapshot and queued bytes only: not `available` or `carried`.
    fn reads_fit(&self) -> bool {
        false
    }

    /// Of the snapshots, srtt, cwnd, ssthresh and outstanding bytes (the pacing rate), pipe and
    /// cwnd (the send buffer), and srtt in `get_retrans` (minRTT's choice): the core only.
    fn reads_full_info(&self) -> bool {
        false
    }

    fn get_send(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.expand_sndbufs(v);
        let Some(i) = self.in_burst(v).or_else(|| self.pick(v)) else { return Verdict::Wait };
        self.burst = self.burst.saturating_sub(v.seg_len as u64);
        out.insert(i);
        Verdict::Queue
    }

    fn get_retrans(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        let idle = v.subflows.iter().position(|s| s.usable && s.available && !s.backup && !s.carried && s.queued == 0);
        let to = idle.or_else(|| v.min_rtt());
        if let Some(i) = to {
            // Sent on: its queued bytes grow ([`Upstream::lowest_linger_kept`]).
            self.stale |= 1 << i;
        }
        super::send_on(to, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::ConnInfo;
    use crate::sched::tests::{at_ms, backup, busy, carried, idle, reinj_view, retrans, send, sf, unusable, view, MSS};
    use crate::sched::SchedSpec;

    fn up() -> Upstream {
        Upstream::from_params(&UpstreamParams::default())
    }

    /// The 64-bit shortcut of the linger division gives the 128-bit quotient, on both sides
    /// of 2^32 queued bytes.
    #[test]
    fn linger_time_is_the_128_bit_quotient() {
        for (q, p) in [(0, 1), (13_032, 2_896_000), ((1 << 32) - 1, 7), (1 << 32, 7), (u64::MAX, 3), (5, u64::MAX)] {
            assert_eq!(linger_time(q, p), (u128::from(q) << 32) / u128::from(p), "{q} / {p}");
        }
        assert_eq!(div_u128(u128::MAX, 1 << 70), u128::MAX >> 70);
    }

    proptest::proptest! {
        /// The kept keys of `lowest_linger_kept` pick what the scan over every subflow picks,
        /// and start the same average rates, over decisions on three to eight subflows whose
        /// usability, backup flag, queued bytes and window change between decisions (few
        /// distinct values: ties and unchanged subflows are common; full send buffers make
        /// picks fail while a burst may go on), with bursts started
        /// (moving a subflow's average rate) on an open send window and some reinjections.
        /// Each decision shows as changed ([`SchedView::changed`]) only the views whose flags
        /// or snapshot differ from the previous decision's, those whose queued bytes alone
        /// moved unless the scheduler chose that subflow since (queued on an open window,
        /// given a reinjection: as the connection does), and some random others: the entries
        /// of the others are not looked at.
        #[test]
        fn kept_lingers_pick_as_the_scan(
            n in 3usize..=8,
            steps in proptest::collection::vec(
                (
                    proptest::collection::vec((0u8..4, 0usize..4, 1u64..4, 1u64..3), 8),
                    proptest::bool::ANY,
                    0u8..=255,
                    proptest::bool::weighted(0.2),
                ),
                1..40,
            ),
        ) {
            let conn = ConnInfo::default();
            let mut s = up();
            let mut before: Vec<SchedSubflow> = Vec::new();
            let mut chosen = 0u16;
            for (subs, open, extra, reinject) in steps {
                let subs: Vec<SchedSubflow> = subs[..n]
                    .iter()
                    .map(|&(f, q, cwnd, srtt)| {
                        let mut x = sf(10 * srtt, 10 * cwnd, 0);
                        // 200 segments: more than any send buffer here (a failed pick).
                        (x.usable, x.backup, x.queued) = (f != 0, f == 3, [0, 1, 2, 200][q] * MSS);
                        x
                    })
                    .collect();
                let changed = |i: usize| {
                    before.get(i).is_none_or(|b: &SchedSubflow| {
                        let a = &subs[i];
                        let queued = a.queued != b.queued && chosen & (1 << i) == 0;
                        (a.usable, a.backup, a.info.core()) != (b.usable, b.backup, b.info.core()) || queued
                    })
                };
                let changed = (0..n).filter(|&i| changed(i)).fold(u16::from(extra), |m, i| m | 1 << i);
                let v = SchedView {
                    send_window: if open { 1 << 30 } else { 0 },
                    changed: SubflowSet(changed),
                    ..view(&subs, &conn)
                };
                // The kept keys and the scan, each on a copy of the state this decision starts
                // from (the state itself moves only by the decisions).
                let (mut kept, mut scan) = (s.clone(), s.clone());
                kept.expand_sndbufs(&v); // as `get_send` first
                scan.expand_sndbufs(&v);
                proptest::prop_assert_eq!(kept.lowest_linger_kept(&v), scan.lowest_linger(&v));
                proptest::prop_assert_eq!(kept.avg_pace, scan.avg_pace);
                let mut out = SubflowSet::default();
                s.get_send(at_ms(0), &v, &mut out);
                // The connection queues the segment there, but nothing on a closed window.
                chosen = if open { out.0 } else { 0 };
                if reinject {
                    let mut out = SubflowSet::default();
                    s.get_retrans(at_ms(0), &SchedView { reinjection: true, ..v }, &mut out);
                    chosen |= out.0;
                }
                before = subs;
            }
        }
    }

    proptest::proptest! {
        /// When `waits` answers true, `get_send` with an empty changed set answers `Wait` and
        /// leaves the scheduler as it was; it does for one or two subflows whose send buffers
        /// are all full and rates started (never with more subflows); `send_unchanged`, when it
        /// answers, gives `get_send`'s answer and state, and does unless a pick is needed; over
        /// states reached by decisions on changing views (bursts going on, full send buffers,
        /// backups).
        #[test]
        fn unchanged_views_answered_as_get_send(
            n in 1usize..=3,
            steps in proptest::collection::vec(
                (proptest::collection::vec((0u8..4, 0usize..5, 1u64..4, 1u64..3), 3), proptest::bool::ANY, 0u32..3),
                1..30,
            ),
        ) {
            let conn = ConnInfo::default();
            let mut s = up();
            for (subs, open, len) in steps {
                let subs: Vec<SchedSubflow> = subs[..n]
                    .iter()
                    .map(|&(f, q, cwnd, srtt)| {
                        let mut x = sf(10 * srtt, 10 * cwnd, 0);
                        (x.usable, x.backup, x.queued) = (f != 0, f == 3, [0, 1, 2, 19, 200][q] * MSS);
                        x
                    })
                    .collect();
                let v = SchedView {
                    seg_len: [1, MSS as u32 / 2, MSS as u32][len as usize],
                    send_window: if open { 1 << 17 } else { 0 },
                    changed: SubflowSet(0),
                    ..view(&subs, &conn)
                };
                // These views seen (as by a decision on them): asked again, they are unchanged.
                s.expand_sndbufs(&SchedView { changed: SubflowSet((1 << n) - 1), ..v });
                let mut asked = s.clone();
                let verdict = asked.get_send(at_ms(0), &v, &mut SubflowSet::default());
                let unchanged = format!("{asked:?}") == format!("{s:?}");
                let started = subs.iter().zip(s.avg_pace.iter()).all(|(x, &a)| !x.usable || a != 0);
                let waits = s.waits(&subs);
                proptest::prop_assert!(!waits || (verdict == Verdict::Wait && unchanged));
                let full = subs.iter().enumerate().all(|(i, x)| !x.usable || x.queued >= u64::from(s.sndbuf[i]));
                proptest::prop_assert_eq!(waits, full && started && n <= 2);
                // `send_unchanged`, when it answers, answers as `get_send` and leaves the same state.
                let mut direct = s.clone();
                if let Some(answer) = direct.send_unchanged(&subs, v.seg_len) {
                    let mut out = SubflowSet::default();
                    let verdict = s.clone().get_send(at_ms(0), &v, &mut out);
                    let expected = if answer.is_some() { Verdict::Queue } else { Verdict::Wait };
                    proptest::prop_assert_eq!((verdict, out.first()), (expected, answer));
                    proptest::prop_assert_eq!(format!("{direct:?}"), format!("{asked:?}"));
                } else {
                    proptest::prop_assert!(s.in_burst(&v).is_none() && !waits);
                }
                s = asked; // the next decision starts from this one's state
            }
        }
    }

    /// Pacing rate by hand: 10 segments of 1448 B over 10 ms, slow start (200 %):
    /// 2 × 14 480 B / 0.01 s = 2 896 000 B/s; past ssthresh/2, 120 %: 1 737 600 B/s.
    #[test]
    fn pacing_rate_is_the_kernels() {
        let mut s = idle(10).info;
        assert_eq!(pacing_rate(&s), 2_896_000);
        s.ssthresh = 20 * MSS;
        assert_eq!(pacing_rate(&s), 1_737_600);
    }

    /// The lowest linger time wins, not the lowest srtt: subflow 0 (10 ms, cwnd 10, 9 segments
    /// queued: 13 032 B / 2 896 000 B/s = 4.5 ms) against subflow 1 (40 ms, nothing queued:
    /// 0 ms). With both queues empty the lower index wins the tie.
    #[test]
    fn lowest_linger_time_wins() {
        let conn = ConnInfo::default();
        let subs = [sf(10, 10, 9), idle(40)];
        assert_eq!(send(&mut up(), at_ms(0), &view(&subs, &conn)), (Verdict::Queue, vec![1]));
        let subs = [idle(40), idle(10)];
        assert_eq!(send(&mut up(), at_ms(0), &view(&subs, &conn)), (Verdict::Queue, vec![0]));
        // Subflow 0 with 2 segments queued at 2 896 000 B/s lingers 1 ms; subflow 1 with 1
        // segment at 40 ms / cwnd 10 (724 000 B/s) lingers 2 ms: subflow 0.
        let subs = [sf(10, 10, 2), sf(40, 10, 1)];
        assert_eq!(send(&mut up(), at_ms(0), &view(&subs, &conn)), (Verdict::Queue, vec![0]));
    }

    /// A burst of 64 KB stays on the picked subflow: 65 536 / 1448 → 46 segments (the 46th
    /// starts with 376 bytes of burst left), then the choice is made again.
    #[test]
    fn burst_sticks_to_the_picked_subflow() {
        let conn = ConnInfo::default();
        let mut s = up();
        let first = [sf(10, 100, 1), idle(40)];
        assert_eq!(send(&mut s, at_ms(0), &view(&first, &conn)).1, vec![1]);
        // Subflow 0 now lingers less, but the burst goes on.
        let later = [idle(10), sf(40, 100, 50)];
        for k in 2..=46 {
            assert_eq!(send(&mut s, at_ms(0), &view(&later, &conn)).1, vec![1], "segment {k}");
        }
        assert_eq!(s.burst, 0);
        assert_eq!(send(&mut s, at_ms(0), &view(&later, &conn)).1, vec![0]);
    }

    /// A full congestion window neither ends the burst nor hides the subflow: the segment goes
    /// to its send queue (`Queue`), as the kernel pushes into the write queue; so does one
    /// behind data already queued there. The burst is at most the connection's send window.
    #[test]
    fn a_full_window_still_takes_data() {
        let conn = ConnInfo::default();
        let mut s = up();
        assert_eq!(send(&mut s, at_ms(0), &view(&[idle(40), sf(10, 10, 5)], &conn)), (Verdict::Queue, vec![0]));
        assert_eq!(send(&mut s, at_ms(0), &view(&[busy(40), sf(10, 10, 5)], &conn)), (Verdict::Queue, vec![0]));
        let mut waiting = idle(40);
        (waiting.unsent, waiting.queued) = (MSS, MSS);
        assert_eq!(send(&mut s, at_ms(0), &view(&[waiting, sf(10, 10, 5)], &conn)), (Verdict::Queue, vec![0]));
        let mut s = up();
        let subs = [idle(40), idle(40)];
        let v = SchedView { send_window: 2 * MSS, ..view(&subs, &conn) };
        s.get_send(at_ms(0), &v, &mut SubflowSet::default());
        assert_eq!(s.burst, MSS);
    }

    /// The send buffer, by hand: 2 × max(cwnd, 10 segments) × 4,352 B. A subflow first seen
    /// with a 10-segment window gets 87,040 B; with 87,040 B queued (sent and unsent) the
    /// scheduler waits (the kernel returns no subflow), with one byte less it queues.
    #[test]
    fn a_full_send_buffer_waits() {
        let conn = ConnInfo::default();
        assert_eq!(sndbuf_expand(10 * MSS, MSS), 87_040);
        assert_eq!(sndbuf_expand(3 * MSS, MSS), 87_040);
        assert_eq!(sndbuf_expand(40 * MSS, MSS), 348_160);
        assert_eq!(sndbuf_expand(1000 * MSS, MSS), TCP_WMEM_MAX);
        let mut full = busy(40);
        (full.unsent, full.queued) = (87_040 - full.queued, 87_040);
        assert_eq!(send(&mut up(), at_ms(0), &view(&[full, unusable(10)], &conn)), (Verdict::Wait, vec![]));
        full.queued -= 1;
        assert_eq!(send(&mut up(), at_ms(0), &view(&[full, unusable(10)], &conn)), (Verdict::Queue, vec![0]));
    }

    /// The send buffer never shrinks, and grows only while the subflow is not
    /// congestion-window limited (`tcp_should_expand_sndbuf`): a window grown to 40 segments
    /// with all 40 in flight leaves it at 87,040 B; with 39 in flight it becomes 348,160 B and
    /// stays so after the window falls back to 20 segments.
    #[test]
    fn the_send_buffer_grows_only_while_not_cwnd_limited() {
        let conn = ConnInfo::default();
        let mut s = up();
        s.get_send(at_ms(0), &view(&[idle(10)], &conn), &mut SubflowSet::default());
        assert_eq!(s.sndbuf[0], 87_040);
        s.get_send(at_ms(0), &view(&[sf(10, 40, 40)], &conn), &mut SubflowSet::default());
        assert_eq!(s.sndbuf[0], 87_040);
        s.get_send(at_ms(0), &view(&[sf(10, 40, 39)], &conn), &mut SubflowSet::default());
        assert_eq!(s.sndbuf[0], 348_160);
        s.get_send(at_ms(0), &view(&[sf(10, 20, 0)], &conn), &mut SubflowSet::default());
        assert_eq!(s.sndbuf[0], 348_160);
    }

    /// Backups only when no active subflow is usable: an active subflow whose window is full
    /// still takes the data, in its send queue.
    #[test]
    fn backup_only_without_usable_active() {
        let conn = ConnInfo::default();
        assert_eq!(send(&mut up(), at_ms(0), &view(&[busy(10), backup(idle(5))], &conn)), (Verdict::Queue, vec![0]));
        assert_eq!(send(&mut up(), at_ms(0), &view(&[unusable(10), backup(idle(5))], &conn)).1, vec![1]);
        assert_eq!(send(&mut up(), at_ms(0), &view(&[backup(idle(5)), idle(50)], &conn)).1, vec![1]);
        assert_eq!(send(&mut up(), at_ms(0), &view(&[unusable(10), unusable(5)], &conn)).0, Verdict::Wait);
    }

    /// avg_pacing_rate by hand: subflow 1 (40 ms, cwnd 10, 1 segment queued: rate 724 000 B/s)
    /// picked with a 64 KB burst: avg = (724 000 × 1448 + 724 000 × 65 536) / (65 536 + 1448)
    /// = 724 000 (the rate did not change); after its cwnd doubles to 20 (rate 1 448 000) with 4
    /// segments queued: (724 000 × 5792 + 1 448 000 × 65 536) / 71 328 = 1 389 209.
    #[test]
    fn average_pacing_rate_update() {
        let conn = ConnInfo::default();
        let mut s = up();
        s.get_send(at_ms(0), &view(&[unusable(10), sf(40, 10, 1)], &conn), &mut SubflowSet::default());
        assert_eq!(s.avg_pace[1], 724_000);
        s.burst = 0;
        s.get_send(at_ms(0), &view(&[unusable(10), sf(40, 20, 4)], &conn), &mut SubflowSet::default());
        assert_eq!(s.avg_pace[1], (724_000u128 * 5792 + 1_448_000 * 65_536) as u64 / 71_328);
        assert_eq!(s.avg_pace[1], 1_389_209);
    }

    /// Reinjection: the first active subflow with nothing outstanding that has not carried the
    /// segment, else minRTT's choice.
    #[test]
    fn reinjection_prefers_an_idle_subflow() {
        let conn = ConnInfo::default();
        let subs = [carried(idle(10)), sf(20, 10, 3), idle(50)];
        assert_eq!(retrans(&mut up(), at_ms(0), &reinj_view(&subs, &conn)).1, vec![2]);
        let subs = [carried(idle(10)), sf(20, 10, 3)];
        assert_eq!(retrans(&mut up(), at_ms(0), &reinj_view(&subs, &conn)).1, vec![1]);
    }

    #[test]
    fn registered_with_typed_parameters() {
        let s = SchedSpec::parse("upstream").unwrap();
        assert_eq!(s.build().name(), "upstream");
        let s = SchedSpec::parse("upstream:burst_bytes=1448").unwrap();
        assert_eq!(s.label(), "upstream:burst_bytes=1448");
        assert!(!s.build().opportunistic_retransmission());
        assert!(s.build().queues());
        assert!(SchedSpec::parse("upstream:burst_bytes=0").is_err());
    }
}
