//! The sender's SACK scoreboard (RFC 6675 section 3): segments sent and not cumulatively
//! acknowledged, with their SACKed / lost / retransmitted state, the byte counters that make up
//! RFC 6675's `pipe`, loss marking by the DupThresh rule (IsLost) and detection of lost
//! retransmissions (Linux `tcp_mark_lost_retrans`, the RACK idea of RFC 8985).

use std::collections::VecDeque;

use crate::ring::Ring;
use crate::segment::SackBlock;
use crate::time::{Duration, Instant};

/// Scoreboard flag: acknowledged by a SACK block.
pub(crate) const SACKED: u8 = 1;
/// Scoreboard flag: deemed lost (RFC 6675 IsLost, or every un-SACKed segment after an RTO).
pub(crate) const LOST: u8 = 2;
/// Scoreboard flag: a retransmission of it is in flight.
pub(crate) const RETRANS: u8 = 4;
/// Scoreboard flag: retransmitted at least once (Karn's rule: no RTT sample from it).
pub(crate) const EVER_RETRANS: u8 = 8;
/// Scoreboard flag: the latest transmission left while the subflow was application-limited
/// (delivery-rate sampling, Linux `tx.is_app_limited`).
pub(crate) const APP_LIMITED: u8 = 16;

/// One sent segment as the scoreboard keeps it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SentSeg {
    /// First subflow sequence number.
    pub seq: u64,
    /// Connection-level sequence number of `seq`.
    pub dsn: u64,
    /// Payload bytes.
    pub len: u32,
    /// `SACKED | LOST | RETRANS | EVER_RETRANS`.
    pub flags: u8,
    /// Time of the latest (re)transmission.
    pub sent_at: Instant,
    /// Delivery-rate sampling state at send time (as BBR's rate sample).
    pub delivered: u64,
    /// Time `delivered` was last advanced when the segment was sent.
    pub delivered_time: Instant,
}

/// The delivery-rate state a (re)transmission records (Linux `tcp_rate_skb_sent`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TxStamp {
    /// Bytes delivered so far.
    pub delivered: u64,
    /// When `delivered` last advanced.
    pub delivered_time: Instant,
    /// The subflow is application-limited.
    pub app_limited: bool,
}

impl SentSeg {
    /// One past the last sequence number (stable for the segment's life: a partial ACK moves
    /// its start only).
    #[inline]
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
}

/// What one ACK acknowledged: new bytes and the segment that gives the RTT / rate sample.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Acked {
    /// Bytes acknowledged for the first time (cumulatively or by SACK).
    pub newly_acked: u64,
    /// Newest-sent, never-retransmitted segment acknowledged by this ACK (Karn's rule).
    pub sample: Option<SentSeg>,
    /// Newest-sent retransmitted segment acknowledged by this ACK (kept apart so that the common
    /// case, no retransmission, costs what it did before delivery-rate sampling).
    pub retx: Option<SentSeg>,
}

impl Acked {
    /// Counts `s` as acknowledged now; keeps it as the sample if it is the newest valid one.
    #[inline]
    fn note(&mut self, s: &SentSeg, bytes: u64) {
        self.newly_acked += bytes;
        if s.flags & EVER_RETRANS == 0 {
            if self.sample.is_none_or(|x| s.sent_at >= x.sent_at) {
                self.sample = Some(*s);
            }
        } else if self.retx.is_none_or(|x| s.sent_at >= x.sent_at) {
            self.retx = Some(*s);
        }
    }

    /// Newest-sent segment acknowledged by this ACK, retransmissions included: the one the
    /// delivery-rate sample is taken from (Linux `tcp_rate_skb_delivered`). On equal send times
    /// the never-retransmitted one (noted in ascending sequence order, so the later one).
    #[inline]
    pub fn rate_seg(&self) -> Option<SentSeg> {
        match (self.sample, self.retx) {
            (Some(a), Some(b)) => Some(if b.sent_at > a.sent_at { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// The scoreboard. Segments are kept in ascending `seq`; loss detection and the retransmission
/// scan each move a pointer forward once, so an ACK costs time proportional to what it changes.
// `repr(C)`: what an ACK reads or writes first (the ring's header, the SACK cache a receiver's
// data segment resets, the counters and pointers), the two retransmission queues, touched only
// after losses, last. In Rust's order they sat between the ring and the counters, so the
// receiver's two fields were two cache lines apart and the sender's were spread over four
// (`flows-1000`, BENCHMARKS.md, seventeenth pass).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub(crate) struct Scoreboard {
    /// Sent, not cumulatively acknowledged segments, ascending `seq`.
    segs: Ring<SentSeg>,
    /// SACK blocks of the previous ACK: their segments are already marked.
    sack_cache: [SackBlock; 3],
    /// Absolute index of `segs[0]` (segments popped so far).
    head_abs: u64,
    sacked_bytes: u64,
    lost_bytes: u64,
    retrans_bytes: u64,
    /// Segments below this absolute index were evaluated for loss.
    lost_ptr: u64,
    /// Sacked bytes in `[head, lost_ptr)`.
    sacked_before_ptr: u64,
    /// Lost segments below this absolute index were retransmitted already.
    retx_ptr: u64,
    /// Send time of the most recently sent segment known delivered.
    rack_xmit: Instant,
    /// Segments detected lost over the subflow's life (by SACK, RTO or lost retransmission).
    segments_lost: u64,
    /// Retransmissions in the order they were sent: (right edge, sent_at). Lets a lost
    /// retransmission be detected without an RTO once a later-sent segment is delivered. The
    /// right edge names the segment: a partial cumulative ACK moves its start, not its end.
    retx_log: VecDeque<(u64, Instant)>,
    /// Retransmissions found lost again (right edges), to resend before scanning on (ascending
    /// send order).
    relost: VecDeque<u64>,
}

impl Scoreboard {
    /// An empty scoreboard.
    pub fn new() -> Self {
        Scoreboard { segs: Ring::with_capacity(64), ..Default::default() }
    }

    /// No segment outstanding.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    /// Bytes SACKed above the cumulative ACK.
    #[inline]
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }
    /// Bytes marked lost and not SACKed since.
    #[inline]
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }
    /// Bytes of retransmissions in flight.
    #[inline]
    pub fn retrans_bytes(&self) -> u64 {
        self.retrans_bytes
    }
    /// Segments detected lost so far.
    #[inline]
    pub fn segments_lost(&self) -> u64 {
        self.segments_lost
    }
    /// The outstanding segment at index `i` (0 = oldest).
    #[inline]
    pub fn get(&self, i: usize) -> SentSeg {
        self.segs[i]
    }

    /// Records a newly sent segment (above every outstanding one).
    pub fn push(&mut self, s: SentSeg) {
        debug_assert!(self.segs.back().is_none_or(|b| b.end() <= s.seq));
        self.segs.push_back(s);
    }

    /// Connection-level ranges `(dsn, len)` of segments not SACKed.
    pub fn unacked_data(&self, out: &mut Vec<(u64, u32)>) {
        out.extend(self.segs.iter().filter(|s| s.flags & SACKED == 0).map(|s| (s.dsn, s.len)));
    }

    /// Removes (or trims) everything below the cumulative acknowledgement `ack`.
    /// One read-only pass over the acknowledged segments sums what leaves each counter and
    /// finds the RTT sample ([`Acked::note`]'s rule: the newest-sent never-retransmitted
    /// segment, the later one on equal times), copied once; then they leave the ring in one
    /// step. Popping and noting each segment as it went cost about 55 instructions a segment,
    /// a third of it the 48-byte copy into `Acked::sample` that the next segment overwrote.
    /// Without a SACKed, lost or retransmitted segment (nearly every ACK) only the bytes and
    /// the sample are left to find ([`Scoreboard::cumulative_ack_clean`]); this pass alone,
    /// without that split, cost more than the pops (`newreno-10m` +0.4 %).
    ///
    /// The clean case is inlined at the caller and the rest is a call of its own
    /// ([`Scoreboard::cumulative_ack_full`]): as one function, every ACK paid the large
    /// function's call, register saves and frame for the short clean loop (measured:
    /// `newreno-10m` 82.57 -> 82.06 M instructions, `lia-2path` 603.79 -> 601.27 M).
    #[inline]
    pub fn cumulative_ack(&mut self, ack: u64, acked: &mut Acked) {
        if self.sacked_bytes == 0 && self.lost_bytes == 0 && self.retrans_bytes == 0 {
            self.cumulative_ack_clean(ack, acked);
            return;
        }
        self.cumulative_ack_full(ack, acked);
    }

    /// [`Scoreboard::cumulative_ack`] with a segment SACKed, lost or in retransmission.
    #[inline(never)]
    fn cumulative_ack_full(&mut self, ack: u64, acked: &mut Acked) {
        let (mut k, mut newly, mut sacked, mut sacked_below, mut lost, mut retrans) = (0, 0, 0, 0, 0, 0);
        let mut best: Option<(usize, Instant)> = None;
        while k < self.segs.len() {
            let s = &self.segs[k];
            if s.end() > ack {
                break;
            }
            let i = k;
            let len = s.len as u64;
            if s.flags & SACKED != 0 {
                sacked += len;
                if self.head_abs + (i as u64) < self.lost_ptr {
                    sacked_below += len;
                }
            } else if s.flags & EVER_RETRANS == 0 {
                newly += len;
                if best.is_none_or(|(_, t)| s.sent_at >= t) {
                    best = Some((i, s.sent_at));
                }
            } else {
                acked.note(s, len);
            }
            if s.flags & LOST != 0 {
                lost += len;
            }
            if s.flags & RETRANS != 0 {
                retrans += len;
            }
            k += 1;
        }
        acked.newly_acked += newly;
        self.keep_sample(best, acked);
        self.sacked_bytes -= sacked;
        self.sacked_before_ptr -= sacked_below;
        self.lost_bytes -= lost;
        self.retrans_bytes -= retrans;
        self.head_abs += k as u64;
        self.segs.advance(k);
        if let Some(front) = self.segs.front_mut() {
            if front.seq < ack {
                // Partial acknowledgement of a segment: trim it (no RTT sample from it).
                let cut = ack - front.seq;
                let flags = front.flags;
                front.seq += cut;
                front.dsn += cut;
                front.len -= cut as u32;
                if flags & SACKED == 0 {
                    acked.newly_acked += cut;
                } else {
                    self.sacked_bytes -= cut;
                    if self.head_abs < self.lost_ptr {
                        // Those bytes also leave the SACKed bytes below the loss pointer
                        // (without this, `sacked_bytes - sacked_before_ptr` underflowed).
                        self.sacked_before_ptr -= cut;
                    }
                }
                self.forget(flags, cut);
            }
        }
        self.pointers_past_head();
    }

    /// The acknowledged segment `best` (index, send time), the newest-sent never-retransmitted
    /// one of this cumulative ACK, becomes the RTT sample unless an earlier-noted one was sent
    /// later ([`Acked::note`]'s rule: the later on equal times).
    #[inline(always)]
    fn keep_sample(&self, best: Option<(usize, Instant)>, acked: &mut Acked) {
        if let Some((i, t)) = best {
            if acked.sample.is_none_or(|x| t >= x.sent_at) {
                acked.sample = Some(self.segs[i]);
            }
        }
    }

    /// After segments left the front: the loss and retransmission pointers do not lag the new
    /// head, and with no segment below the loss pointer none is SACKed below it.
    #[inline(always)]
    fn pointers_past_head(&mut self) {
        self.lost_ptr = self.lost_ptr.max(self.head_abs);
        self.retx_ptr = self.retx_ptr.max(self.head_abs);
        if self.lost_ptr == self.head_abs {
            self.sacked_before_ptr = 0;
        }
    }

    /// [`Scoreboard::cumulative_ack`] with no segment SACKed, lost or in retransmission (every
    /// segment with a flag set counts in one of those byte counters, so none has one): only
    /// the newly acknowledged bytes and the sample (the newest-sent, the later on equal
    /// times) to find.
    #[inline]
    fn cumulative_ack_clean(&mut self, ack: u64, acked: &mut Acked) {
        let (mut k, mut newly) = (0, 0);
        while k < self.segs.len() {
            let s = &self.segs[k];
            if s.end() > ack {
                break;
            }
            // Only a lost segment is retransmitted, and LOST leaves only with SACKED: no
            // segment here was ever retransmitted either, so none is owed to `Acked::retx`.
            debug_assert_eq!(s.flags & (SACKED | LOST | RETRANS | EVER_RETRANS), 0);
            // Never retransmitted, so each still holds the time it was pushed (`now`, which
            // does not run backwards) and they were pushed in sequence order: the send times
            // do not fall along the ring.
            debug_assert!(k == 0 || self.segs[k - 1].sent_at <= s.sent_at);
            newly += s.len as u64;
            k += 1;
        }
        // So the rule's sample (the newest-sent, the later on equal times) is the last
        // acknowledged segment: no comparison per segment (it was ~11 instructions per
        // cumulative ACK; measured `newreno-10m` −0.39 %, `lia-2path` −0.26 %).
        let best = k.checked_sub(1).map(|i| (i, self.segs[i].sent_at));
        self.keep_sample(best, acked);
        acked.newly_acked += newly;
        self.head_abs += k as u64;
        self.segs.advance(k);
        if let Some(front) = self.segs.front_mut() {
            if front.seq < ack {
                // Partial acknowledgement (no RTT sample from it).
                let cut = ack - front.seq;
                front.seq += cut;
                front.dsn += cut;
                front.len -= cut as u32;
                acked.newly_acked += cut;
            }
        }
        self.pointers_past_head();
    }

    /// `bytes` of a segment with `flags` left the lost / retransmitted counters.
    #[inline]
    fn forget(&mut self, flags: u8, bytes: u64) {
        if flags & LOST != 0 {
            self.lost_bytes -= bytes;
        }
        if flags & RETRANS != 0 {
            self.retrans_bytes -= bytes;
        }
    }

    /// Applies an ACK's SACK blocks, clipped to `[una, nxt)`. Parts covered by the previous
    /// ACK's blocks are skipped (their segments are marked already). Most segments carry no
    /// block (every data segment, every ACK without loss): that case only clears the cache,
    /// inline at the caller.
    #[inline]
    pub fn sack(&mut self, blocks: &[SackBlock], una: u64, nxt: u64, acked: &mut Acked) {
        if blocks.is_empty() {
            self.sack_cache = [SackBlock::default(); 3];
            return;
        }
        self.sack_blocks(blocks, una, nxt, acked);
    }

    /// [`Scoreboard::sack`] with at least one block.
    #[inline(never)]
    fn sack_blocks(&mut self, blocks: &[SackBlock], una: u64, nxt: u64, acked: &mut Acked) {
        let mut cache = [SackBlock::default(); 3];
        for (i, b) in blocks.iter().enumerate() {
            cache[i] = *b;
            let (lo, hi) = (b.start.max(una), b.end.min(nxt));
            if lo >= hi {
                continue;
            }
            let (pieces, n) = self.uncached_pieces(lo, hi);
            for &(s, e) in &pieces[..n] {
                self.mark_sacked(s, e, acked);
            }
        }
        self.sack_cache = cache;
    }

    /// `[lo, hi)` minus the previous ACK's blocks: at most 4 pieces.
    fn uncached_pieces(&self, lo: u64, hi: u64) -> ([(u64, u64); 4], usize) {
        let mut pieces = [(lo, hi), (0, 0), (0, 0), (0, 0)];
        let mut n = 1;
        for c in self.sack_cache.iter().filter(|c| c.end > c.start) {
            let mut out = [(0u64, 0u64); 4];
            let mut m = 0;
            for &(s, e) in &pieces[..n] {
                if c.end <= s || c.start >= e {
                    out[m] = (s, e);
                    m += 1;
                } else {
                    if s < c.start {
                        out[m] = (s, c.start);
                        m += 1;
                    }
                    if c.end < e && m < 4 {
                        out[m] = (c.end, e);
                        m += 1;
                    }
                }
            }
            pieces = out;
            n = m;
        }
        (pieces, n)
    }

    /// Marks segments fully inside `[s, e)` as SACKed.
    fn mark_sacked(&mut self, s: u64, e: u64, acked: &mut Acked) {
        let mut i = self.segs.partition_point(|x| x.seq < s);
        while i < self.segs.len() {
            let seg = self.segs[i];
            if seg.end() > e {
                break;
            }
            if seg.flags & SACKED == 0 {
                let len = seg.len as u64;
                self.forget(seg.flags, len);
                acked.note(&seg, len);
                self.segs[i].flags = (seg.flags & EVER_RETRANS) | SACKED;
                self.sacked_bytes += len;
                if self.head_abs + (i as u64) < self.lost_ptr {
                    self.sacked_before_ptr += len;
                }
            }
            i += 1;
        }
    }

    /// After an ACK was applied: notes the newest delivered send time, marks holes lost by the
    /// DupThresh rule (`thresh` = (DupThresh − 1)·MSS bytes) and finds lost retransmissions
    /// (`reo_wnd`: reordering window, `una`: the cumulative ACK).
    #[inline]
    pub fn detect(&mut self, acked: &Acked, thresh: u64, reo_wnd: Duration, una: u64) {
        if let Some(sm) = acked.sample {
            self.rack_xmit = self.rack_xmit.max(sm.sent_at);
        }
        if self.sacked_bytes > 0 {
            self.detect_losses(thresh);
        }
        if self.retrans_bytes > 0 {
            self.detect_lost_retransmissions(reo_wnd, una);
        }
    }

    /// RFC 6675 IsLost: a segment is lost once more than (DupThresh − 1)·MSS bytes above it are
    /// SACKed. Holes are evaluated once, in ascending order.
    #[inline(never)]
    fn detect_losses(&mut self, thresh: u64) {
        let end_abs = self.head_abs + self.segs.len() as u64;
        while self.lost_ptr < end_abs {
            let i = (self.lost_ptr - self.head_abs) as usize;
            let seg = self.segs[i];
            if seg.flags & SACKED != 0 {
                self.sacked_before_ptr += seg.len as u64;
            } else if self.sacked_bytes - self.sacked_before_ptr > thresh {
                if seg.flags & LOST == 0 {
                    self.segs[i].flags |= LOST;
                    self.lost_bytes += seg.len as u64;
                    self.segments_lost += 1;
                    if seg.flags & RETRANS != 0 {
                        // A retransmission marked lost again (only after an RTO rewind).
                        self.segs[i].flags &= !RETRANS;
                        self.retrans_bytes -= seg.len as u64;
                    }
                }
            } else {
                break;
            }
            self.lost_ptr += 1;
        }
    }

    /// A retransmission is lost if a segment sent after it (by more than the reordering window
    /// `reo_wnd`) has been delivered: mark it lost again so it is resent without waiting for RTO.
    #[inline(never)]
    fn detect_lost_retransmissions(&mut self, reo_wnd: Duration, una: u64) {
        while let Some(&(end, sent)) = self.retx_log.front() {
            if end <= una {
                self.retx_log.pop_front();
                continue;
            }
            if sent + reo_wnd >= self.rack_xmit {
                break;
            }
            self.retx_log.pop_front();
            let i = self.index_ending_at(end);
            if i < self.segs.len() && self.segs[i].sent_at == sent {
                let f = self.segs[i].flags;
                if f & RETRANS != 0 && f & SACKED == 0 {
                    // Still LOST: only its retransmission stops counting as in flight.
                    self.segs[i].flags &= !RETRANS;
                    self.retrans_bytes -= self.segs[i].len as u64;
                    self.segments_lost += 1;
                    if self.head_abs + (i as u64) < self.retx_ptr {
                        self.relost.push_back(end);
                    }
                }
            }
        }
    }

    /// Index of the next segment to retransmit (RFC 6675 NextSeg rule 1): a retransmission
    /// found lost again first, else the first lost, not yet retransmitted segment in
    /// `[retx_ptr, lost_ptr)`.
    pub fn next_retransmission(&mut self) -> Option<usize> {
        if self.lost_bytes == 0 {
            return None;
        }
        // Retransmissions found lost again come first (they are below the scan pointer).
        while let Some(&end) = self.relost.front() {
            let i = self.index_ending_at(end);
            if i < self.segs.len() && self.segs[i].flags & (LOST | RETRANS | SACKED) == LOST {
                return Some(i);
            }
            self.relost.pop_front();
        }
        while self.retx_ptr < self.lost_ptr {
            let i = (self.retx_ptr - self.head_abs) as usize;
            let f = self.segs[i].flags;
            if f & LOST != 0 && f & RETRANS == 0 {
                return Some(i);
            }
            self.retx_ptr += 1;
        }
        None
    }

    /// Records the retransmission of segment `i` (as returned by
    /// [`Scoreboard::next_retransmission`]) at `now`, with the delivery-rate state of that time.
    pub fn retransmitted(&mut self, i: usize, now: Instant, tx: TxStamp) {
        let s = &mut self.segs[i];
        s.flags = (s.flags & !APP_LIMITED) | RETRANS | EVER_RETRANS | if tx.app_limited { APP_LIMITED } else { 0 };
        s.sent_at = now;
        s.delivered = tx.delivered;
        s.delivered_time = tx.delivered_time;
        let (end, len) = (s.seq + s.len as u64, s.len);
        self.retrans_bytes += len as u64;
        if self.head_abs + i as u64 >= self.retx_ptr {
            self.retx_ptr = self.head_abs + i as u64 + 1;
        } else {
            self.relost.pop_front();
        }
        self.retx_log.push_back((end, now));
    }

    /// Index of the segment whose right edge is `end`, or `segs.len()` if none is.
    fn index_ending_at(&self, end: u64) -> usize {
        let i = self.segs.partition_point(|x| x.seq + (x.len as u64) < end);
        if i < self.segs.len() && self.segs[i].seq + self.segs[i].len as u64 == end {
            i
        } else {
            self.segs.len()
        }
    }

    /// Linux `tcp_enter_loss` after an RTO: every un-SACKed segment is lost, retransmissions are
    /// forgotten, the retransmission scan restarts at the oldest segment.
    pub fn enter_loss(&mut self) {
        for s in self.segs.iter_mut() {
            if s.flags & SACKED == 0 {
                if s.flags & LOST == 0 {
                    self.lost_bytes += s.len as u64;
                    self.segments_lost += 1;
                }
                s.flags = (s.flags | LOST) & !RETRANS;
            }
        }
        self.retrans_bytes = 0;
        self.retx_log.clear();
        self.relost.clear();
        self.lost_ptr = self.head_abs + self.segs.len() as u64;
        self.sacked_before_ptr = self.sacked_bytes;
        self.retx_ptr = self.head_abs;
    }
}

#[cfg(test)]
#[path = "scoreboard_tests.rs"]
mod tests;
