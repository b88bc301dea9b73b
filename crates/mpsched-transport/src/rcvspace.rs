//! Receive-buffer auto-tuning (Linux "DRS") of a multipath receiver, as far as it sets the
//! window a joined subflow advertises of its own (Linux 6.18, the `linux` profile).
//!
//! The kernel's MPTCP socket grows its receive buffer from `tcp_rmem[1]` towards `tcp_rmem[2]`
//! once per receive RTT (`mptcp_rcv_space_adjust` → `mptcp_rcvbuf_grow`, net/mptcp/protocol.c)
//! and, each time it grows, makes every established subflow's buffer follow
//! (`tcp_rcvbuf_grow(ssk, copied)`, net/ipv4/tcp_input.c). A subflow advertises at most
//! `tcp_win_from_space` of its own buffer (`__tcp_select_window` clamps the MPTCP-level free
//! space to the subflow's `rcv_ssthresh`, which `tcp_grow_window` grows only up to
//! `tcp_space(ssk)`). A subflow established after the connection's buffer reached `tcp_rmem[2]`
//! is never made to follow: it keeps `tcp_rmem[1]` and its windows stop at
//! `tcp_win_from_space(131072)` = 80,896 bytes beyond DATA_ACK (unless an earlier ACK already
//! offered a farther right edge: `mptcp_set_rwin` raises the window to it). Measured on the
//! kernel engine (docs/fidelity.md, `mptcp-het-256k`): the joined subflow's socket showed
//! `rb131072`, `rcv_ssthresh:80896`, `rcv_space:14480` for the whole run, the first subflow's
//! `rb262144`, `rcv_ssthresh:161792`.
//!
//! The model keeps the simulator's first subflow as before (the connection's whole buffer from
//! the start) and tracks the connection's buffer only to know when the joined subflows' buffers
//! grow.

use crate::time::{Duration, Instant};

/// `tcp_rmem[1]`: the receive buffer a Linux socket, and an MPTCP subflow, starts with.
pub const LINUX_TCP_RMEM_DEFAULT: u64 = 131_072;

/// `TCP_INIT_CWND`: a new socket's `rcvq_space.space` is this many segments
/// (`tcp_init_buffer_space`, `mptcp_rcv_space_init`).
const INIT_SPACE_SEGS: u64 = 10;

/// One socket's receive buffer (`sk_rcvbuf`) and the bytes it last measured copied per RTT
/// (`rcvq_space.space`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcvBuf {
    /// `sk_rcvbuf`, bytes.
    pub rcvbuf: u64,
    /// `rcvq_space.space`: the bytes copied in the last measured RTT, or the initial guess.
    pub space: u64,
}

impl RcvBuf {
    /// A socket's buffer after `tcp_init_buffer_space`: `rcvbuf`, and a space of
    /// `TCP_INIT_CWND` segments of `mss` bytes.
    pub fn new(rcvbuf: u64, mss: u32) -> Self {
        RcvBuf { rcvbuf, space: INIT_SPACE_SEGS * mss as u64 }
    }

    /// `tcp_rcvbuf_grow` / `mptcp_rcvbuf_grow` with `newval` bytes copied in the last RTT: the
    /// window twice that, plus twice the growth over the last measure (`grow = rcvwin ×
    /// (newval − oldval) / oldval`, "allow the sender to double its rate"), as a buffer
    /// (`tcp_space_from_win`: × 256 / `ratio`), at most `max` (`tcp_rmem[2]`); the buffer
    /// never shrinks. Whether it grew. Computed in 64/128 bits (the kernel's are 32).
    pub fn grow(&mut self, newval: u64, max: u64, ratio: u32) -> bool {
        let oldval = self.space.max(1);
        self.space = newval;
        let rcvwin = u128::from(newval) << 1;
        let grow = rcvwin * u128::from(newval.saturating_sub(oldval)) / u128::from(oldval);
        let rcvwin = rcvwin + (grow << 1);
        let rcvbuf = (rcvwin * 256 / u128::from(ratio.max(1))).min(u128::from(max)) as u64;
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            return true;
        }
        false
    }
}

/// The receiver's RTT estimate from echoed timestamps (`tcp_rcv_rtt_measure_ts`,
/// `tcp_rcv_rtt_update` without `win_dep`): one sample per new echoed value on a full-sized
/// segment, `now − ts_ecr`; the first sample taken as is, then a moving average with gain 1/8
/// (kept, as the kernel keeps it, in eighths).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RcvRtt {
    est8: u64,
    last_tsecr: u64,
}

impl RcvRtt {
    /// A data segment of `len` bytes echoing `ts_ecr` arrived at `now`; `rcv_mss` is a full
    /// segment's payload.
    pub fn on_data(&mut self, now: Instant, ts_ecr: u64, len: u32, rcv_mss: u32) {
        if ts_ecr == self.last_tsecr {
            return;
        }
        self.last_tsecr = ts_ecr;
        let sample = now.0.saturating_sub(ts_ecr);
        if len < rcv_mss || sample == 0 || ts_ecr == 0 {
            return;
        }
        self.est8 = if self.est8 == 0 { sample << 3 } else { self.est8 - (self.est8 >> 3) + sample };
    }
    /// The estimate (zero before the first sample).
    pub fn get(&self) -> Duration {
        Duration(self.est8 >> 3)
    }
}

/// The connection's receive-buffer auto-tuning (`mptcp_rcv_space_adjust`).
#[derive(Clone, Debug)]
pub struct RcvTuning {
    msk: RcvBuf,
    /// Bytes the application read since `time`.
    copied: u64,
    time: Instant,
    /// The last measure's RTT: the largest of the subflows' receive RTTs.
    rtt: Duration,
    started: bool,
    /// `tcp_rmem[1]` (the buffer a socket starts with) and `tcp_rmem[2]` (the scenario's
    /// buffer), bytes; the kernel's `scaling_ratio`.
    initial: u64,
    max: u64,
    ratio: u32,
}

impl RcvTuning {
    /// Tuning of a connection whose buffer may grow to `max` bytes, starting from `initial`.
    pub fn new(initial: u64, max: u64, ratio: u32) -> Self {
        let msk = RcvBuf::new(initial.min(max), 0);
        RcvTuning { msk, copied: 0, time: Instant(0), rtt: Duration::ZERO, started: false, initial, max, ratio }
    }

    /// The buffer of a subflow established now (`tcp_rmem[1]`, at most the connection's).
    pub fn subflow_buf(&self, mss: u32) -> RcvBuf {
        RcvBuf::new(self.initial.min(self.max), mss)
    }

    /// The connection's buffer now (bytes).
    pub fn rcvbuf(&self) -> u64 {
        self.msk.rcvbuf
    }

    /// Grows `sf` as `tcp_rcvbuf_grow(ssk, copied)` does when the connection's buffer grew.
    pub fn follow(&self, sf: &mut RcvBuf, copied: u64) {
        sf.grow(copied, self.max, self.ratio);
    }

    /// `mptcp_rcv_space_adjust`: the application read `copied` bytes at `now`; `rtt` is the
    /// largest receive RTT of the subflows (`rcv_rtt_est`), `mss` a full segment's payload.
    /// The first read starts the measure (`mptcp_rcv_space_init`: `TCP_INIT_CWND` segments);
    /// once an RTT has passed, more copied than last time grows the buffer
    /// ([`RcvBuf::grow`]). `Some(copied)` when it grew: the subflows follow with that value.
    pub fn on_read(&mut self, now: Instant, copied: u64, mss: u32, rtt: impl FnOnce() -> Duration) -> Option<u64> {
        if !self.count_read(now, copied, mss) {
            return None;
        }
        self.measure(now, rtt)
    }

    /// The first half of [`RcvTuning::on_read`], inlined where the application reads: counts
    /// the `copied` bytes, and whether the measure is due ([`RcvTuning::measure`]), i.e.
    /// unless the last measure's RTT has not passed yet (most reads).
    #[inline]
    pub fn count_read(&mut self, now: Instant, copied: u64, mss: u32) -> bool {
        if copied == 0 {
            return false;
        }
        if !self.started {
            self.started = true;
            self.msk.space = INIT_SPACE_SEGS * mss as u64;
            self.time = now;
        }
        self.copied += copied;
        let elapsed = now.saturating_duration_since(self.time);
        !(self.rtt.0 > 0 && elapsed < self.rtt)
    }

    /// The second half of [`RcvTuning::on_read`], once [`RcvTuning::count_read`] said it is
    /// due: the RTT taken anew, and the buffer grown if more was copied than last time.
    pub fn measure(&mut self, now: Instant, rtt: impl FnOnce() -> Duration) -> Option<u64> {
        let elapsed = now.saturating_duration_since(self.time);
        self.rtt = rtt();
        if self.rtt.0 == 0 || elapsed < self.rtt {
            return None;
        }
        let measured = std::mem::take(&mut self.copied);
        self.time = now;
        if measured <= self.msk.space {
            return None;
        }
        self.msk.grow(measured, self.max, self.ratio).then_some(measured)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn grow_follows_the_kernel_formula_and_caps_at_the_maximum() {
        // 14,480 → 28,960 copied: rcvwin = 57,920 + 2 × 57,920 × 14,480 / 14,480 = 173,760;
        // as a buffer × 256 / 158 = 281,533, capped at 262,144.
        let mut b = RcvBuf::new(131_072, 1448);
        assert!(b.grow(28_960, 262_144, 158));
        assert_eq!(b, RcvBuf { rcvbuf: 262_144, space: 28_960 });
        // At the maximum it grows no more, but the space is the new measure.
        assert!(!b.grow(100_000, 262_144, 158));
        assert_eq!(b.space, 100_000);
        // No growth over the last measure: twice the copied bytes, × 256 / 158.
        let mut c = RcvBuf { rcvbuf: 0, space: 50_000 };
        assert!(c.grow(50_000, u64::MAX, 158));
        assert_eq!(c.rcvbuf, 100_000 * 256 / 158);
    }

    #[test]
    fn rcv_rtt_takes_full_segments_once_per_echo() {
        let mut r = RcvRtt::default();
        r.on_data(Instant(30 * MS), 10 * MS, 1424, 1424);
        assert_eq!(r.get(), Duration(20 * MS));
        // The same echoed value again: no sample.
        r.on_data(Instant(50 * MS), 10 * MS, 1424, 1424);
        assert_eq!(r.get(), Duration(20 * MS));
        // A short segment: no sample, but its echo is used up.
        r.on_data(Instant(60 * MS), 20 * MS, 100, 1424);
        assert_eq!(r.get(), Duration(20 * MS));
        // 28 ms: 8 × 20 − 20 + 28 = 168 eighths → 21 ms.
        r.on_data(Instant(58 * MS), 30 * MS, 1424, 1424);
        assert_eq!(r.get(), Duration(21 * MS));
    }

    #[test]
    fn tuning_measures_once_per_rtt_and_reports_growth() {
        let mut t = RcvTuning::new(131_072, 262_144, 158);
        let rtt = || Duration(20 * MS);
        // First read starts the measure; within an RTT nothing is decided.
        assert_eq!(t.on_read(Instant(0), 14_480, 1448, rtt), None);
        assert_eq!(t.on_read(Instant(10 * MS), 14_480, 1448, rtt), None);
        // An RTT later: 43,440 copied > 14,480 → the buffer grows to the maximum.
        assert_eq!(t.on_read(Instant(20 * MS), 14_480, 1448, rtt), Some(43_440));
        assert_eq!(t.rcvbuf(), 262_144);
        // At the maximum: no more growth, whatever is copied.
        assert_eq!(t.on_read(Instant(40 * MS), 1 << 20, 1448, rtt), None);
        // Without a receive RTT nothing is measured.
        let mut u = RcvTuning::new(131_072, 262_144, 158);
        assert_eq!(u.on_read(Instant(0), 1 << 20, 1448, || Duration::ZERO), None);
        assert_eq!(u.on_read(Instant(50 * MS), 1 << 20, 1448, || Duration::ZERO), None);
        assert_eq!(u.rcvbuf(), 131_072);
    }

    #[test]
    fn a_subflow_starts_at_the_default_buffer_and_follows() {
        let t = RcvTuning::new(LINUX_TCP_RMEM_DEFAULT, 262_144, 158);
        let mut sf = t.subflow_buf(1448);
        assert_eq!(sf, RcvBuf { rcvbuf: 131_072, space: 14_480 });
        t.follow(&mut sf, 200_000);
        assert_eq!(sf.rcvbuf, 262_144);
        // A scenario buffer below tcp_rmem[1] is the subflow's buffer.
        assert_eq!(RcvTuning::new(LINUX_TCP_RMEM_DEFAULT, 65_536, 158).subflow_buf(1448).rcvbuf, 65_536);
    }
}
