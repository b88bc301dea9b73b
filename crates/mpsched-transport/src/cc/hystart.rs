//! HyStart, CUBIC's hybrid slow start as the Linux kernel does it (net/ipv4/tcp_cubic.c
//! `hystart_update`, `bictcp_hystart_reset`, `hystart_ack_delay`; Ha and Rhee, "Taming the
//! elephants", 2008). Slow start ends (ssthresh = cwnd) before the queue overflows, when either
//!
//! - **ACK train**: ACKs closer than 2 ms apart (`hystart_ack_delta_us`) keep arriving for more
//!   than half the minimum RTT (plus half the kernel's ack-delay cushion) after the round began
//!   (the kernel's threshold for an unpaced socket, `SK_PACING_NONE`); or
//! - **delay increase**: the smallest RTT of the round's first 8 samples (`HYSTART_MIN_SAMPLES`)
//!   exceeds the minimum RTT by clamp(min_rtt / 8, 4 ms, 16 ms) (`HYSTART_DELAY_THRESH`).
//!
//! Both only at a window of 16 segments or more (`hystart_low_window`). A round is a window of
//! data: it ends when snd_una passes the snd_nxt of its start. The kernel's defaults are
//! `hystart=1`, `hystart_detect=3` (both detectors).

use super::{AckSample, CcState};
use crate::time::{Duration, Instant};

/// `hystart_low_window`: HyStart acts from this window (segments).
const LOW_WINDOW: u64 = 16;
/// `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay test.
const MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX`: bounds of the delay threshold.
const DELAY_MIN: Duration = Duration::from_millis(4);
const DELAY_MAX: Duration = Duration::from_millis(16);
/// `hystart_ack_delta_us`: ACKs at most this far apart form a train.
const ACK_DELTA: Duration = Duration::from_millis(2);
/// `sk_gso_max_size` (64 KB, `GSO_LEGACY_MAX_SIZE`) for `hystart_ack_delay`'s cushion.
const GSO_MAX_SIZE: u128 = 65_536;
/// `hystart_ack_delay`'s cap: 1 ms.
const ACK_DELAY_CAP: Duration = Duration::from_millis(1);

/// HyStart's state (`struct bictcp`: found, round_start, end_seq, last_ack, curr_rtt,
/// sample_cnt).
#[derive(Clone, Debug, Default)]
pub(crate) struct HyStart {
    /// The exit point was found in this slow start.
    pub found: bool,
    round_start: Instant,
    last_ack: Instant,
    /// snd_nxt when the round began; 0 before the first round (any ACK of data starts one).
    end_seq: u64,
    /// Smallest RTT sample of the round.
    curr_rtt: Option<Duration>,
    sample_cnt: u8,
}

impl HyStart {
    /// `bictcp_hystart_reset`: a new round from `now`, ending when snd_una passes `snd_nxt`.
    pub fn reset(&mut self, now: Instant, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// `hystart_update`, for an ACK in slow start with RTT sample `delay`, the kernel CUBIC's
    /// minimum delay `delay_min` (this sample included). Returns true when slow start must end
    /// now (the caller sets ssthresh to cwnd).
    pub fn update(
        &mut self,
        now: Instant,
        st: &CcState,
        ack: &AckSample,
        delay: Duration,
        delay_min: Duration,
    ) -> bool {
        if ack.snd_una > self.end_seq {
            self.reset(now, ack.snd_nxt);
        }
        if st.cwnd < LOW_WINDOW * st.mss as u64 {
            return false;
        }
        // ACK train.
        if now.saturating_duration_since(self.last_ack) <= ACK_DELTA {
            self.last_ack = now;
            let threshold = Duration((delay_min + ack_delay(st)).0 / 2);
            if now.saturating_duration_since(self.round_start) > threshold {
                self.found = true;
            }
        }
        // Delay increase.
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = Duration(delay_min.0 / 8).clamp(DELAY_MIN, DELAY_MAX);
            if self.curr_rtt.is_some_and(|c| c > delay_min + thresh) {
                self.found = true;
            }
        }
        self.found
    }
}

/// `hystart_ack_delay`: min(1 ms, 4 × 64 KB at the kernel's pacing rate,
/// [`super::kernel_pacing_rate`]); no cushion before the first RTT sample.
fn ack_delay(st: &CcState) -> Duration {
    let Some(rate) = super::kernel_pacing_rate(st.cwnd, st.ssthresh, st.pipe, st.srtt) else {
        return Duration::ZERO;
    };
    let ns = GSO_MAX_SIZE * 4 * 1_000_000_000 / (rate as u128).max(1);
    Duration(ns.min(ACK_DELAY_CAP.0 as u128) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn st(cwnd_segs: u64, srtt_ms: u64) -> CcState {
        CcState {
            cwnd: cwnd_segs * MSS,
            ssthresh: u64::MAX,
            mss: MSS as u32,
            pipe: cwnd_segs * MSS,
            srtt: Duration::from_millis(srtt_ms),
            min_rtt: Duration::from_millis(srtt_ms),
            abc: true,
            stack: crate::info::Stack::Linux,
            in_recovery: false,
            index: 0,
        }
    }
    fn ack(una: u64, nxt: u64) -> AckSample {
        AckSample { newly_acked: MSS, snd_una: una, snd_nxt: nxt, ..Default::default() }
    }
    fn us(x: u64) -> Instant {
        Instant(x * 1_000)
    }
    fn dus(x: u64) -> Duration {
        Duration(x * 1_000)
    }

    /// The cushion: 1 ms at any rate below 4 × 64 KB per ms (262 MB/s); at 100 segments of
    /// 1000 B per 1 ms srtt (200 % → 200 MB/s) still 1 ms; at 1000 segments (2 GB/s) 131 µs.
    #[test]
    fn ack_delay_is_capped_at_one_ms() {
        assert_eq!(ack_delay(&st(20, 40)), Duration::from_millis(1));
        assert_eq!(ack_delay(&st(100, 1)), Duration::from_millis(1));
        assert_eq!(ack_delay(&st(1000, 1)), Duration(131_072));
    }

    /// ACK train, by hand: min RTT 40 ms, cwnd 20 segments (ack delay 1 ms), threshold
    /// (40 + 1) / 2 = 20.5 ms. The round starts with the ACK at t = 0 (snd_una 1 > end_seq 0,
    /// snd_nxt 21); ACKs every 1.5 ms (≤ 2 ms: a train) pass 20.5 ms at the 14th ACK after
    /// the first (t = 21 ms). The delay detector stays quiet (every sample = 40 ms).
    #[test]
    fn ack_train_exit_point() {
        let mut h = HyStart::default();
        let s = st(20, 40);
        let rtt = Duration::from_millis(40);
        assert!(!h.update(us(0), &s, &ack(1, 21), rtt, rtt));
        for k in 1..=13u64 {
            assert!(!h.update(us(1_500 * k), &s, &ack(1 + k, 21), rtt, rtt), "ACK {k}");
        }
        assert!(h.update(us(21_000), &s, &ack(15, 21), rtt, rtt));
        assert!(h.found);
    }

    /// A gap over 2 ms breaks the train: the ACK is not part of it and later ACKs measure from
    /// the last ACK of the train, which never moves again (kernel behaviour).
    #[test]
    fn ack_gap_over_2_ms_stops_the_train() {
        let mut h = HyStart::default();
        let s = st(20, 40);
        let rtt = Duration::from_millis(40);
        h.update(us(0), &s, &ack(1, 21), rtt, rtt);
        for k in 1..20u64 {
            // 2.4 ms apart: a 10 Mbit/s bottleneck's spacing of delayed ACKs (2 × 1500 B).
            assert!(!h.update(us(2_400 * k), &s, &ack(1 + k, 21), rtt, rtt));
        }
    }

    /// Delay increase, by hand: min RTT 40 ms, threshold clamp(5 ms, 4, 16) = 5 ms. The first
    /// 8 samples of a round only count; the 9th compares the round's minimum: 44.9 ms passes,
    /// 45.001 ms ends slow start. ACKs 3 ms apart (no train).
    #[test]
    fn delay_increase_exit_point() {
        let min = Duration::from_millis(40);
        let s = st(30, 40);
        let run = |sample: Duration| -> Option<u64> {
            let mut h = HyStart::default();
            (0..20u64).find(|&k| h.update(us(3_000 * k), &s, &ack(1 + k, 100), sample, min))
        };
        assert_eq!(run(dus(45_000)), None, "equal to the threshold: not above it");
        assert_eq!(run(Duration(45_000_001)), Some(8), "the 9th ACK of the round");
    }

    /// Below 16 segments nothing is detected, but rounds still restart.
    #[test]
    fn below_low_window_nothing() {
        let mut h = HyStart::default();
        let s = st(15, 40);
        let big = Duration::from_millis(100);
        for k in 0..50u64 {
            assert!(!h.update(us(100 * k), &s, &ack(100 * k + 1, 100 * k + 100), big, Duration::from_millis(40)));
        }
        assert_eq!(h.end_seq, 5_000, "every ACK passed end_seq and began a round");
    }

    /// A new round (snd_una past end_seq) restarts the sample count and the train's start.
    #[test]
    fn new_round_restarts_the_counts() {
        let min = Duration::from_millis(40);
        let s = st(30, 40);
        let mut h = HyStart::default();
        for k in 0..8u64 {
            h.update(us(3_000 * k), &s, &ack(1 + k, 100), Duration::from_millis(50), min);
        }
        // snd_una 101 > end_seq 100: a new round; its first sample only counts.
        assert!(!h.update(us(60_000), &s, &ack(101, 200), Duration::from_millis(50), min));
        assert_eq!((h.sample_cnt, h.round_start, h.end_seq), (1, us(60_000), 200));
    }
}
