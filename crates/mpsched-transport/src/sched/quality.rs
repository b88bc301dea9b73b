//! PDAA3C's **subflow quality evaluation** Q (Liang et al., IEICE letter 2022, pdaa3c.txt §2.2,
//! eqs. 4–5, γ = 0.7, η = 0.3, α = 1000 = the packet size):
//!
//! ```text
//! ST = C / (RTT − TT)                      (5)
//! Q  = γ·α·(1 − PLR) / ST + η·ST            (4; Algorithm 1 line 6 writes η·ST for the 2nd term)
//! ```
//!
//! Units (ours, docs/pdaa3c.md): ST in bytes/s (the letter calls `α(1 − PLR)/ST` "the time
//! required ... to transmit a packet of size P"), C the congestion window in segments counted
//! as packets of α bytes, RTT the smoothed RTT in seconds, TT in eq. 5 the time to send one
//! α-byte packet at the measured throughput (`8α / throughput`, 0 when nothing was sent).
//! Q = 0 where ST is undefined. The learned policy (mpsched-policy `pdaa3c`) ranks subflows by
//! Q over the past epoch; the external scheduler's `busy = "next"` ranks the subflows with
//! window room by [`Quality::of_info`] (the same formula on the subflow's current counters).

use crate::info::SubflowInfo;

/// The constants of eq. 4.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quality {
    /// γ, weight of the packet-time term (0.7).
    pub gamma: f64,
    /// η, weight of the rate term (0.3).
    pub eta: f64,
    /// α, the packet size in bytes (1000, Algorithm 1 line 3).
    pub alpha: f64,
}

impl Default for Quality {
    fn default() -> Self {
        Quality { gamma: 0.7, eta: 0.3, alpha: 1000.0 }
    }
}

impl Quality {
    /// ST of eq. 5 in bytes/s from the smoothed RTT (s), throughput (bit/s) and window
    /// (segments, each α bytes); `None` when it is undefined (no RTT, no window, RTT ≤ TT).
    pub fn st(&self, rtt_s: f64, tput_bps: f64, cwnd_segments: f64) -> Option<f64> {
        let tt_s = if tput_bps > 0.0 { 8.0 * self.alpha / tput_bps } else { 0.0 };
        let d = rtt_s - tt_s;
        (rtt_s > 0.0 && cwnd_segments > 0.0 && d > 0.0).then(|| cwnd_segments * self.alpha / d)
    }

    /// Q of eq. 4 (0 where ST is undefined); `loss` is PLR as a fraction.
    pub fn q(&self, rtt_s: f64, tput_bps: f64, cwnd_segments: f64, loss: f64) -> f64 {
        self.st(rtt_s, tput_bps, cwnd_segments)
            .map_or(0.0, |st| self.gamma * self.alpha * (1.0 - loss.clamp(0.0, 1.0)) / st + self.eta * st)
    }

    /// Q of a subflow from its current counters: srtt, the latest delivery-rate sample as TT,
    /// the window in segments of `mss` bytes, and the loss rate as segments lost / sent.
    pub fn of_info(&self, s: &SubflowInfo, mss: u64) -> f64 {
        let loss = if s.segments_sent > 0 { s.segments_lost as f64 / s.segments_sent as f64 } else { 0.0 };
        let segs = s.cwnd as f64 / mss.max(1) as f64;
        self.q(s.srtt.0 as f64 * 1e-9, s.delivery_rate as f64 * 8.0, segs, loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    /// Eqs. 4–5 by hand: RTT 60 ms, 8 Mbit/s, 20 segments of 1000 B, 1 % loss.
    /// TT = 8·1000/8e6 = 1 ms; ST = 20 000 / 0.059 = 338 983.05 B/s;
    /// Q = 0.7·1000·0.99/338 983.05 + 0.3·338 983.05 = 0.0020444 + 101 694.915 = 101 694.917.
    #[test]
    fn quality_by_hand() {
        let q = Quality::default();
        let st = q.st(0.060, 8e6, 20.0).unwrap();
        assert!((st - 20_000.0 / 0.059).abs() < 1e-6, "{st}");
        let v = q.q(0.060, 8e6, 20.0, 0.01);
        let want = 0.7 * 1000.0 * 0.99 / (20_000.0 / 0.059) + 0.3 * (20_000.0 / 0.059);
        assert!((v - want).abs() < 1e-9, "{v} vs {want}");
        assert!((v - 101_694.917).abs() < 1e-3, "{v}");
        // Nothing sent: TT = 0, ST = C/RTT = 10 000 / 0.1 = 100 000; lossless.
        assert!((q.q(0.1, 0.0, 10.0, 0.0) - (0.7 * 1000.0 / 100_000.0 + 30_000.0)).abs() < 1e-9);
    }

    /// ST undefined: no RTT sample, no window, or the packet time reaching the RTT (Q = 0).
    #[test]
    fn quality_undefined() {
        let q = Quality::default();
        assert_eq!(q.q(0.0, 1e6, 10.0, 0.0), 0.0);
        assert_eq!(q.q(0.05, 1e6, 0.0, 0.0), 0.0);
        // 8000 bits at 100 kbit/s = 80 ms >= 50 ms RTT.
        assert_eq!(q.q(0.05, 1e5, 10.0, 0.0), 0.0);
        assert_eq!(q.st(0.05, 1e5, 10.0), None);
    }

    /// The same example from a subflow's counters: 60 ms srtt, 1 MB/s delivery rate, a 20 000 B
    /// window in 1000 B segments, 2 of 200 segments lost.
    #[test]
    fn quality_of_counters() {
        let s = SubflowInfo {
            srtt: Duration(60_000_000),
            delivery_rate: 1_000_000,
            cwnd: 20_000,
            segments_sent: 200,
            segments_lost: 2,
            ..SubflowInfo::default()
        };
        let v = Quality::default().of_info(&s, 1000);
        assert!((v - 101_694.917).abs() < 1e-3, "{v}");
        assert_eq!(Quality::default().of_info(&SubflowInfo::default(), 1000), 0.0);
    }
}
