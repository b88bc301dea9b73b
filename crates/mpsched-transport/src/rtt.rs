//! RTT estimation and retransmission timeout: RFC 6298 ([`Stack::Rfc`]) or the Linux kernel's
//! estimator ([`Stack::Linux`]).
//!
//! Linux (net/ipv4/tcp_input.c `tcp_rtt_estimator`, `tcp_set_rto`; include/net/tcp.h
//! `__tcp_set_rto`) keeps srtt with gain 1/8 and a mean deviation `mdev` with gain 1/4 (1/32
//! when the sample is below srtt), but the variance term of the RTO is `rttvar`: the largest
//! `mdev` of the current round of data (`mdev_max`, which starts every round at `tcp_rto_min`),
//! decaying towards it by a quarter per round. So RTO = srtt + rttvar ≥ srtt + `tcp_rto_min`
//! (200 ms): a floor on the variance term, not on the RTO. The RTO is then rounded up to a
//! jiffy (`usecs_to_jiffies`).

use crate::info::Stack;
use crate::time::Duration;

/// One jiffy of the calibration machine's kernel (CONFIG_HZ=250, also Debian's default): Linux
/// keeps the RTO in jiffies, rounded up (`usecs_to_jiffies` in `__tcp_set_rto`).
pub const LINUX_JIFFY: Duration = Duration::from_millis(4);

#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    srtt: Duration,
    rttvar: Duration,
    min_rtt: Duration,
    latest: Duration,
    has_sample: bool,
    min_rto: Duration,
    max_rto: Duration,
    /// Clock granularity G of RFC 6298 (Linux: 1 jiffy; we use 1 ms).
    granularity: Duration,
    stack: Stack,
    /// Linux state, in ns with the kernel's scaling (see [`LinuxRtt`]).
    linux: LinuxRtt,
}

/// The kernel's estimator state (`struct tcp_sock`: `srtt_us` ×8, `mdev_us`, `mdev_max_us`,
/// `rttvar_us` ×4 of a deviation, `rtt_seq`), in nanoseconds.
#[derive(Clone, Copy, Debug, Default)]
struct LinuxRtt {
    srtt8: i64,
    mdev: i64,
    mdev_max: i64,
    rttvar: i64,
    /// snd_nxt when the current round of RTT samples began.
    rtt_seq: u64,
}

/// RTO before the first RTT sample (RFC 6298 section 2.1; Linux `TCP_TIMEOUT_INIT`).
pub const INITIAL_RTO: Duration = Duration::from_secs(1);

impl RttEstimator {
    pub fn new(min_rto: Duration, max_rto: Duration, stack: Stack) -> Self {
        RttEstimator {
            srtt: Duration::ZERO,
            rttvar: Duration::ZERO,
            min_rtt: Duration::MAX,
            latest: Duration::ZERO,
            has_sample: false,
            min_rto,
            max_rto,
            granularity: Duration::from_millis(1),
            stack,
            linux: LinuxRtt::default(),
        }
    }

    /// Feed one RTT measurement (Karn's rule is the caller's job). `snd_una` and `snd_nxt` are
    /// the subflow's after the ACK: Linux's estimator works in rounds of data.
    /// `#[inline]`: a call per ACK otherwise (measured: `newreno-10m` 82.06 -> 81.91 M
    /// instructions, `lia-2path` 601.27 -> 600.65 M).
    #[inline]
    pub fn on_sample(&mut self, r: Duration, snd_una: u64, snd_nxt: u64) {
        self.latest = r;
        if r < self.min_rtt {
            self.min_rtt = r;
        }
        match self.stack {
            Stack::Rfc => self.rfc6298_sample(r),
            Stack::Linux => self.linux_sample(r, snd_una, snd_nxt),
        }
        self.has_sample = true;
    }

    /// RFC 6298 §2.2–2.3.
    fn rfc6298_sample(&mut self, r: Duration) {
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = Duration(r.0 / 2);
        } else {
            // RTTVAR first, with the old SRTT: beta = 1/4, alpha = 1/8.
            let dev = self.srtt.0.abs_diff(r.0);
            self.rttvar = Duration((3 * self.rttvar.0 + dev) / 4);
            self.srtt = Duration((7 * self.srtt.0 + r.0) / 8);
        }
    }

    /// Linux `tcp_rtt_estimator` (net/ipv4/tcp_input.c), with the kernel's scaled integers.
    fn linux_sample(&mut self, r: Duration, snd_una: u64, snd_nxt: u64) {
        let rto_min = self.min_rto.0 as i64;
        let l = &mut self.linux;
        let mut m = r.0.min(i64::MAX as u64 / 16) as i64;
        if l.srtt8 != 0 {
            m -= l.srtt8 >> 3; // the error of the estimate
            l.srtt8 += m; // srtt = 7/8 srtt + 1/8 sample
            if m < 0 {
                // A sample below srtt moves mdev with gain 1/32 only (Eifel-like).
                m = -m - (l.mdev >> 2);
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= l.mdev >> 2;
            }
            l.mdev += m; // mdev = 3/4 mdev + 1/4 |error|
            if l.mdev > l.mdev_max {
                l.mdev_max = l.mdev;
                l.rttvar = l.rttvar.max(l.mdev_max);
            }
            if snd_una > l.rtt_seq {
                // A round of data ended: rttvar decays towards this round's largest mdev.
                if l.mdev_max < l.rttvar {
                    l.rttvar -= (l.rttvar - l.mdev_max) >> 2;
                }
                l.rtt_seq = snd_nxt;
                l.mdev_max = rto_min;
            }
        } else {
            l.srtt8 = m << 3;
            l.mdev = m << 1; // RTO = 3 × the first sample
            l.rttvar = l.mdev.max(rto_min);
            l.mdev_max = l.rttvar;
            l.rtt_seq = snd_nxt;
        }
        l.srtt8 = l.srtt8.max(1);
        self.srtt = Duration((l.srtt8 >> 3) as u64);
        // Reported as RFC 6298's RTTVAR: the kernel's rttvar is four deviations.
        self.rttvar = Duration((l.rttvar / 4) as u64);
    }

    /// RFC 6298: RTO = SRTT + max(G, 4·RTTVAR), clamped to [min_rto, max_rto]. Linux
    /// (`__tcp_set_rto`, `tcp_bound_rto`): srtt + rttvar rounded up to a jiffy, at most
    /// max_rto. 1 s before any sample.
    pub fn rto(&self) -> Duration {
        if !self.has_sample {
            return INITIAL_RTO.max(self.min_rto).min(self.max_rto);
        }
        match self.stack {
            Stack::Rfc => {
                let rto = self.srtt + self.granularity.max(Duration(4 * self.rttvar.0));
                rto.max(self.min_rto).min(self.max_rto)
            }
            Stack::Linux => {
                let raw = (self.linux.srtt8 >> 3) as u64 + self.linux.rttvar as u64;
                let j = LINUX_JIFFY.0;
                Duration(raw.div_ceil(j) * j).min(self.max_rto)
            }
        }
    }

    pub fn srtt(&self) -> Duration {
        self.srtt
    }
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    /// Minimum RTT seen, zero before any sample.
    pub fn min_rtt(&self) -> Duration {
        if self.has_sample {
            self.min_rtt
        } else {
            Duration::ZERO
        }
    }
    pub fn max_rto(&self) -> Duration {
        self.max_rto
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }
    fn rfc() -> RttEstimator {
        RttEstimator::new(ms(200), Duration::from_secs(120), Stack::Rfc)
    }
    fn linux() -> RttEstimator {
        RttEstimator::new(ms(200), Duration::from_secs(120), Stack::Linux)
    }

    #[test]
    fn rfc6298_first_and_second_sample() {
        let mut e = rfc();
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.on_sample(ms(100), 1, 1);
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 4*50 = 300 ms.
        assert_eq!(e.srtt(), ms(100));
        assert_eq!(e.rto(), ms(300));
        e.on_sample(ms(200), 1, 1);
        // RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5; RTO = 362.5 ms.
        assert_eq!(e.rttvar(), Duration(62_500_000));
        assert_eq!(e.srtt(), Duration(112_500_000));
        assert_eq!(e.rto(), Duration(362_500_000));
    }

    #[test]
    fn min_rto_clamps() {
        let mut e = rfc();
        for _ in 0..50 {
            e.on_sample(ms(10), 1, 1);
        }
        assert_eq!(e.rto(), ms(200));
    }

    /// Linux, first sample r = 100 ms: srtt = 100, mdev = 2r = 200 ms, rttvar = max(mdev,
    /// rto_min) = 200 ms, RTO = 300 ms (3r). First sample 10 ms: rttvar = rto_min, RTO = 210 ms
    /// rounded up to the 4 ms jiffy = 212 ms.
    #[test]
    fn linux_first_sample() {
        let mut e = linux();
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.on_sample(ms(100), 1, 10);
        assert_eq!((e.srtt(), e.rto()), (ms(100), ms(300)));
        let mut e = linux();
        e.on_sample(ms(10), 1, 10);
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (ms(10), ms(50), ms(212)));
    }

    /// Linux, by hand (ns): first sample 80 ms (srtt8 = 640 ms, mdev = 160 ms, rttvar =
    /// mdev_max = 200 ms, rtt_seq = 10). Second sample 120 ms inside the round (snd_una 5):
    /// m = 120 − 80 = 40, srtt8 = 680 ms (srtt 85), m = 40 − 160/4 = 0, mdev = 160 < mdev_max:
    /// rttvar stays 200, RTO = 285 → 288 ms (jiffies). Third sample 80 ms, end of round
    /// (snd_una 11 > 10): m = 80 − 85 = −5, srtt8 = 675 (srtt 84.375), m = 5 − 40 = −35 (not
    /// positive, kept), mdev = 125; new round: rttvar = 200 (mdev_max 200 not below it), mdev_max
    /// reset to 200. RTO = 284.375 → 288 ms.
    #[test]
    fn linux_rounds_keep_the_rto_min_floor_on_the_variance() {
        let mut e = linux();
        e.on_sample(ms(80), 1, 10);
        assert_eq!((e.srtt(), e.rto()), (ms(80), ms(280)));
        e.on_sample(ms(120), 5, 12);
        assert_eq!((e.srtt(), e.linux.mdev, e.rto()), (ms(85), ms(160).0 as i64, ms(288)));
        e.on_sample(ms(80), 11, 20);
        assert_eq!(e.srtt(), Duration(84_375_000));
        assert_eq!((e.linux.mdev, e.linux.rttvar, e.linux.rtt_seq), (ms(125).0 as i64, ms(200).0 as i64, 20));
        assert_eq!(e.rto(), ms(288));
    }

    /// A large deviation raises rttvar at once (mdev above mdev_max); after the round ends it
    /// decays by a quarter of its excess over the next round's mdev_max per round.
    #[test]
    fn linux_rttvar_rises_at_once_and_decays_per_round() {
        let mut e = linux();
        e.on_sample(ms(100), 1, 10); // srtt 100, mdev 200, rttvar 200
        e.on_sample(ms(500), 2, 10); // m = 400, srtt8 = 1200 (150), m = 400 − 50 = 350, mdev = 550
        assert_eq!((e.srtt(), e.linux.rttvar), (ms(150), ms(550).0 as i64));
        assert_eq!(e.rto(), ms(700));
        // Round ends with a sample equal to srtt: m = 0 − 137.5 → mdev = 412.5; rttvar
        // decays: mdev_max = 550 is not below rttvar 550 → stays; mdev_max := 200.
        e.on_sample(ms(150), 11, 30);
        assert_eq!((e.linux.mdev, e.linux.rttvar), (412_500_000, ms(550).0 as i64));
        // Next round's end, sample = srtt again: mdev = 412.5 − 103.125 = 309.375 > mdev_max 200
        // → mdev_max = 309.375; rttvar −= (550 − 309.375)/4 = 60.15625 → 489.84375 ms.
        e.on_sample(ms(150), 31, 40);
        assert_eq!(e.linux.rttvar, 489_843_750);
        assert_eq!(e.rto(), ms(640)); // 150 + 489.84375 = 639.84 → 640 ms
    }

    /// Measured on the kernel (docs/fidelity.md): srtt ≈ 80 ms before an outage gives
    /// RTO = 280 ms, and six doublings 17.92 s (`TCP_INFO` rto); RFC 6298 with the 200 ms floor
    /// gave 200 ms.
    #[test]
    fn linux_rto_of_a_steady_80_ms_path() {
        let (mut l, mut r) = (linux(), rfc());
        for k in 0..200u64 {
            l.on_sample(ms(80), 10 * k + 1, 10 * k + 10);
            r.on_sample(ms(80), 10 * k + 1, 10 * k + 10);
        }
        assert_eq!((l.rto(), r.rto()), (ms(280), ms(200)));
        assert_eq!(l.rto().saturating_mul(64), Duration(17_920_000_000));
    }
}
