//! CUBIC (RFC 9438). Windows are handled in segments (f64) inside, bytes outside.

use super::{after_slow_start, AckSample, CcState, CongestionControl, CongestionEvent, Siblings};
use crate::algo::FromParams;
use crate::time::Instant;

crate::params! {
    /// CUBIC's parameters (RFC 9438 §5.1 defaults).
    pub struct CubicParams {
        /// Multiplicative decrease factor β_cubic (RFC 9438 §4.6).
        beta: f64 = 0.7, "(0, 1)" if |x: &f64| *x > 0.0 && *x < 1.0;
        /// Aggressiveness C of the cubic function, segments/s³ (RFC 9438 §4.2).
        c: f64 = 0.4, "> 0" if |x: &f64| *x > 0.0;
        /// Fast convergence (RFC 9438 §4.7); on by default as the RFC recommends.
        fast_convergence: bool = true;
    }
}

/// CUBIC's congestion-avoidance state.
#[derive(Clone, Debug)]
/// The controller; see the module docs.
pub struct Cubic {
    /// Fast convergence (section 4.7); on by default as the RFC recommends.
    pub fast_convergence: bool,
    /// β_cubic (section 4.6).
    beta: f64,
    /// C (section 4.2).
    c: f64,
    w_max: f64,
    k: f64,
    t_epoch: Option<Instant>,
    cwnd_epoch: f64,
    cwnd_prior: f64,
    w_est: f64,
    alpha: f64,
    /// Fractional bytes of window growth not yet applied.
    frac: f64,
    /// The next congestion-avoidance stage follows a timeout: K = 0, W_max = cwnd (section 4.8).
    after_rto: bool,
}

impl Default for Cubic {
    fn default() -> Self {
        Self::from_params(&CubicParams::default())
    }
}

impl crate::algo::FromParams for Cubic {
    type Params = CubicParams;
    fn from_params(p: &CubicParams) -> Self {
        Cubic {
            fast_convergence: p.fast_convergence,
            beta: p.beta,
            c: p.c,
            w_max: 0.0,
            k: 0.0,
            t_epoch: None,
            cwnd_epoch: 0.0,
            cwnd_prior: 0.0,
            w_est: 0.0,
            alpha: Self::alpha_ca(p.beta),
            frac: 0.0,
            after_rto: false,
        }
    }
}

impl Cubic {
    /// α_cubic = 3(1 − β)/(1 + β), the Reno-friendly region's increase (section 4.3).
    fn alpha_ca(beta: f64) -> f64 {
        3.0 * (1.0 - beta) / (1.0 + beta)
    }

    /// W_cubic(t) = C (t - K)^3 + W_max, in segments (eq. 1).
    #[inline]
    fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        self.c * d * d * d + self.w_max
    }

    fn start_epoch(&mut self, now: Instant, cwnd_seg: f64) {
        self.t_epoch = Some(now);
        self.cwnd_epoch = cwnd_seg;
        self.w_est = cwnd_seg;
        self.alpha = Self::alpha_ca(self.beta);
        if self.after_rto || self.w_max <= cwnd_seg {
            // After a timeout, or when slow start ended without loss: K = 0, W_max = cwnd.
            self.k = 0.0;
            self.w_max = cwnd_seg;
            self.after_rto = false;
        } else {
            // Eq. 2: K = cbrt((W_max - cwnd_epoch) / C).
            self.k = ((self.w_max - cwnd_seg) / self.c).cbrt();
        }
    }

    fn reduce(&mut self, st: &mut CcState) {
        let mss = st.mss as f64;
        let cwnd_seg = st.cwnd as f64 / mss;
        self.w_max =
            if self.fast_convergence && cwnd_seg < self.w_max { cwnd_seg * (1.0 + self.beta) / 2.0 } else { cwnd_seg };
        self.cwnd_prior = cwnd_seg;
        st.ssthresh = ((st.cwnd as f64 * self.beta) as u64).max(2 * st.mss as u64);
        self.t_epoch = None;
        self.frac = 0.0;
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, now: Instant, st: &mut CcState, ack: &AckSample, _sib: Siblings) {
        let Some(acked) = after_slow_start(st, ack.newly_acked) else { return };
        let mss = st.mss as f64;
        let cwnd_seg = st.cwnd as f64 / mss;
        if self.t_epoch.is_none() {
            self.start_epoch(now, cwnd_seg);
        }
        let t = now.saturating_duration_since(self.t_epoch.unwrap()).as_secs_f64();
        let rtt = st.srtt.as_secs_f64();
        // Without byte counting every ACK counts as one segment, like a per-ACK stack.
        let segs = if st.abc { acked as f64 / mss } else { 1.0 };
        // Section 4.3: Reno-friendly estimate.
        self.w_est += self.alpha * segs / cwnd_seg;
        if self.w_est >= self.cwnd_prior {
            self.alpha = 1.0;
        }
        let new_cwnd = if self.w_cubic(t) < self.w_est {
            self.w_est
        } else {
            // Sections 4.4/4.5: target = W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd].
            let target = self.w_cubic(t + rtt).clamp(cwnd_seg, 1.5 * cwnd_seg);
            cwnd_seg + (target - cwnd_seg) / cwnd_seg * segs
        };
        let grow = (new_cwnd - cwnd_seg) * mss + self.frac;
        if grow > 0.0 {
            let whole = grow.floor();
            self.frac = grow - whole;
            st.cwnd += whole as u64;
        }
    }

    fn on_congestion_event(&mut self, _now: Instant, st: &mut CcState, _ev: CongestionEvent, _sib: Siblings) {
        self.reduce(st);
        st.cwnd = st.ssthresh;
    }

    fn on_rto(&mut self, _now: Instant, st: &mut CcState) {
        self.reduce(st);
        st.cwnd = st.mss as u64;
        self.after_rto = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    #[test]
    fn k_matches_rfc_example() {
        // RFC 9438 §4.2, K = cbrt((W_max − cwnd_epoch) / C): W_max = 100, cwnd_epoch = 70
        // => K = cbrt(75) = 4.217 s.
        let mut c = Cubic { w_max: 100.0, ..Default::default() };
        c.start_epoch(Instant(0), 70.0);
        assert!((c.k - 75f64.cbrt()).abs() < 1e-9);
        assert!((c.w_cubic(c.k) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn loss_multiplies_by_beta_and_window_regrows_to_wmax_in_k() {
        let mut c = Cubic::default();
        let mss = 1000u64;
        let mut st = CcState {
            cwnd: 100 * mss,
            ssthresh: 50 * mss,
            mss: mss as u32,
            pipe: 0,
            srtt: Duration::from_millis(100),
            min_rtt: Duration::from_millis(100),
            abc: true,
            in_recovery: false,
            index: 0,
        };
        c.on_congestion_event(Instant(0), &mut st, CongestionEvent::Loss, &[]);
        assert_eq!(st.cwnd, 70 * mss);
        // Feed one ACK of a full window per 100 ms RTT for K seconds: cwnd should be near W_max.
        let mut now = Instant(0);
        for _ in 0..43 {
            now += Duration::from_millis(100);
            let acks = st.cwnd / mss;
            for _ in 0..acks {
                c.on_ack(now, &mut st, &AckSample { newly_acked: mss, ..Default::default() }, &[]);
            }
        }
        let w = st.cwnd as f64 / mss as f64;
        assert!((95.0..=106.0).contains(&w), "cwnd after K = {w} segments, expected about W_max = 100");
    }
}
