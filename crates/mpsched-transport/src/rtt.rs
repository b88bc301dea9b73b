//! RTT estimation and retransmission timeout (RFC 6298).

use crate::time::Duration;

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
}

/// RTO before the first RTT sample (RFC 6298 section 2.1).
pub const INITIAL_RTO: Duration = Duration::from_secs(1);

impl RttEstimator {
    pub fn new(min_rto: Duration, max_rto: Duration) -> Self {
        RttEstimator {
            srtt: Duration::ZERO,
            rttvar: Duration::ZERO,
            min_rtt: Duration::MAX,
            latest: Duration::ZERO,
            has_sample: false,
            min_rto,
            max_rto,
            granularity: Duration::from_millis(1),
        }
    }

    /// Feed one RTT measurement (Karn's rule is the caller's job).
    pub fn on_sample(&mut self, r: Duration) {
        self.latest = r;
        if r < self.min_rtt {
            self.min_rtt = r;
        }
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = Duration(r.0 / 2);
            self.has_sample = true;
        } else {
            // RTTVAR first, with the old SRTT: beta = 1/4, alpha = 1/8.
            let dev = self.srtt.0.abs_diff(r.0);
            self.rttvar = Duration((3 * self.rttvar.0 + dev) / 4);
            self.srtt = Duration((7 * self.srtt.0 + r.0) / 8);
        }
    }

    /// RTO = SRTT + max(G, 4·RTTVAR), clamped to [min_rto, max_rto]; 1 s before any sample.
    pub fn rto(&self) -> Duration {
        if !self.has_sample {
            return INITIAL_RTO.max(self.min_rto).min(self.max_rto);
        }
        let rto = self.srtt + self.granularity.max(Duration(4 * self.rttvar.0));
        rto.max(self.min_rto).min(self.max_rto)
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

    #[test]
    fn rfc6298_first_and_second_sample() {
        let mut e = RttEstimator::new(Duration::from_millis(200), Duration::from_secs(120));
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.on_sample(Duration::from_millis(100));
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 4*50 = 300 ms.
        assert_eq!(e.srtt(), Duration::from_millis(100));
        assert_eq!(e.rto(), Duration::from_millis(300));
        e.on_sample(Duration::from_millis(200));
        // RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5; RTO = 362.5 ms.
        assert_eq!(e.rttvar(), Duration(62_500_000));
        assert_eq!(e.srtt(), Duration(112_500_000));
        assert_eq!(e.rto(), Duration(362_500_000));
    }

    #[test]
    fn min_rto_clamps() {
        let mut e = RttEstimator::new(Duration::from_millis(200), Duration::from_secs(120));
        for _ in 0..50 {
            e.on_sample(Duration::from_millis(10));
        }
        assert_eq!(e.rto(), Duration::from_millis(200));
    }
}
