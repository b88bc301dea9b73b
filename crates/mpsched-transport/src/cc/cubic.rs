//! CUBIC. Windows are handled in segments (f64) inside, bytes outside.
//!
//! Two variants, chosen by the subflow's [`Stack`] (the scenario's profile) unless the
//! `variant` parameter names one:
//!
//! - **RFC 9438** (`ns3` profile): the cubic function with the target W_cubic(t + srtt), and the
//!   Reno-friendly estimate W_est growing by α_cubic = 3(1 − β)/(1 + β) per RTT until it passes
//!   the window before the last reduction, then by 1 (§4.3); the window jumps to W_est when
//!   W_cubic is below it.
//! - **Linux** (`linux` profile; net/ipv4/tcp_cubic.c): HyStart in slow start
//!   ([`super::hystart`], `cubictcp_acked`/`hystart_update`, on unless `hystart = false`);
//!   `bictcp_update`'s target W_cubic(t + delay_min) with the minimum RTT, not srtt; while no
//!   loss has set W_max (`last_max_cwnd == 0`: start, or after a timeout, which resets the
//!   state in `cubictcp_state`) the window grows at least 5 % per RTT (`cnt` ≤ 20); the
//!   Reno-friendly window `tcp_cwnd` grows by one segment per cwnd·`beta_scale`/8 segments
//!   acknowledged, `beta_scale` = 8(1024 + β·1024)/3/(1024 − β·1024) in integers = 15 for
//!   β = 717/1024, i.e. α = 8/15 ≈ 0.53 per RTT for ever, and the window approaches it at
//!   (tcp_cwnd − cwnd)/cwnd per segment (`max_cnt`), never jumps; at most 1.5× per RTT
//!   (`cnt` ≥ 2). RTT samples in the first second of an epoch do not update delay_min
//!   (`cubictcp_acked`). The window grows only while the subflow is cwnd-limited
//!   (`tcp_is_cwnd_limited`): an idle or receive-window-limited subflow keeps its window.

use super::hystart::HyStart;
use super::{after_slow_start, AckSample, CcState, CongestionControl, CongestionEvent, Siblings};
use crate::algo::FromParams;
use crate::info::Stack;
use crate::time::{Duration, Instant};

crate::choice! {
    /// Which CUBIC: the subflow stack's, RFC 9438's or the Linux kernel's.
    pub enum CubicVariant {
        /// The profile's: Linux for `linux`, RFC 9438 for `ns3`.
        Stack = "stack",
        /// RFC 9438.
        Rfc9438 = "rfc9438",
        /// net/ipv4/tcp_cubic.c.
        Linux = "linux",
    }
}

crate::params! {
    /// CUBIC's parameters (RFC 9438 §5.1 defaults; Linux module parameters).
    pub struct CubicParams {
        /// Multiplicative decrease factor β_cubic (RFC 9438 §4.6).
        beta: f64 = 0.7, "(0, 1)" if |x: &f64| *x > 0.0 && *x < 1.0;
        /// Aggressiveness C of the cubic function, segments/s³ (RFC 9438 §4.2).
        c: f64 = 0.4, "> 0" if |x: &f64| *x > 0.0;
        /// Fast convergence (RFC 9438 §4.7); on by default as the RFC recommends.
        fast_convergence: bool = true;
        /// RFC 9438 or the Linux kernel's CUBIC; `stack` follows the scenario's profile.
        variant: CubicVariant = CubicVariant::Stack;
        /// HyStart in the Linux variant (tcp_cubic.c module parameter `hystart`, default 1).
        hystart: bool = true;
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
    variant: CubicVariant,
    hystart_on: bool,
    /// Linux: no loss has set W_max yet (`last_max_cwnd == 0`).
    no_max: bool,
    /// Linux: the smallest RTT sample CUBIC took (`delay_min`), reset by a timeout.
    delay_min: Option<Duration>,
    hystart: HyStart,
    /// Linux: snd_nxt at the last ACK (HyStart's round after a timeout).
    snd_nxt: u64,
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
            variant: p.variant,
            hystart_on: p.hystart,
            no_max: true,
            delay_min: None,
            hystart: HyStart::default(),
            snd_nxt: 0,
        }
    }
}

impl Cubic {
    /// α_cubic = 3(1 − β)/(1 + β), the Reno-friendly region's increase (section 4.3).
    fn alpha_ca(beta: f64) -> f64 {
        3.0 * (1.0 - beta) / (1.0 + beta)
    }

    /// The kernel's Reno-friendly increase per RTT, 8 / `beta_scale` with `beta_scale` =
    /// 8·(1024 + b)/3/(1024 − b) in integer arithmetic, b = β·1024 (`cubictcp_register`).
    fn alpha_linux(beta: f64) -> f64 {
        let b = (beta * 1024.0).round() as u64;
        let beta_scale = (8 * (1024 + b) / 3 / (1024 - b)).max(1);
        8.0 / beta_scale as f64
    }

    fn linux(&self, st: &CcState) -> bool {
        match self.variant {
            CubicVariant::Stack => st.stack == Stack::Linux,
            CubicVariant::Rfc9438 => false,
            CubicVariant::Linux => true,
        }
    }

    /// W_cubic(t) = C (t - K)^3 + W_max, in segments (eq. 1).
    #[inline]
    fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        self.c * d * d * d + self.w_max
    }

    fn start_epoch(&mut self, now: Instant, cwnd_seg: f64, linux: bool) {
        self.t_epoch = Some(now);
        self.cwnd_epoch = cwnd_seg;
        self.w_est = cwnd_seg;
        self.alpha = if linux { Self::alpha_linux(self.beta) } else { Self::alpha_ca(self.beta) };
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
        self.no_max = false;
    }

    /// Linux `cubictcp_acked`: delay_min (not in the first second of an epoch), then HyStart
    /// in slow start; an exit sets ssthresh = cwnd.
    fn kernel_acked(&mut self, now: Instant, st: &mut CcState, ack: &AckSample) {
        self.snd_nxt = ack.snd_nxt;
        let Some(rtt) = ack.rtt else { return };
        if self.t_epoch.is_some_and(|t| now.saturating_duration_since(t) < Duration::from_secs(1)) {
            return;
        }
        let delay = rtt.max(Duration(1_000));
        let delay_min = self.delay_min.map_or(delay, |d| d.min(delay));
        self.delay_min = Some(delay_min);
        if self.hystart_on
            && !self.hystart.found
            && st.in_slow_start()
            && self.hystart.update(now, st, ack, delay, delay_min)
        {
            st.ssthresh = st.cwnd;
        }
    }

    /// The window after `segs` segments acknowledged, in segments: RFC 9438 §4.3–4.5, or
    /// Linux `bictcp_update` (see the module docs).
    fn next_cwnd(&mut self, t: f64, st: &CcState, segs: f64, linux: bool) -> f64 {
        let cwnd_seg = st.cwnd as f64 / st.mss as f64;
        self.w_est += self.alpha * segs / cwnd_seg;
        if !linux {
            if self.w_est >= self.cwnd_prior {
                self.alpha = 1.0;
            }
            if self.w_cubic(t) < self.w_est {
                return self.w_est;
            }
            // Sections 4.4/4.5: target = W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd].
            let target = self.w_cubic(t + st.srtt.as_secs_f64()).clamp(cwnd_seg, 1.5 * cwnd_seg);
            return cwnd_seg + (target - cwnd_seg) / cwnd_seg * segs;
        }
        let rtt = self.delay_min.unwrap_or(st.min_rtt).as_secs_f64();
        let target = self.w_cubic(t + rtt);
        let mut per_seg = if target > cwnd_seg { (target - cwnd_seg) / cwnd_seg } else { 0.01 / cwnd_seg };
        if self.no_max {
            per_seg = per_seg.max(1.0 / 20.0); // cnt ≤ 20: 5 % per RTT
        }
        if self.w_est > cwnd_seg {
            per_seg = per_seg.max((self.w_est - cwnd_seg) / cwnd_seg); // max_cnt
        }
        cwnd_seg + per_seg.min(0.5) * segs // cnt ≥ 2
    }
}

/// Linux `tcp_is_cwnd_limited` (include/net/tcp.h), which `cubictcp_cong_avoid` asks before
/// growing the window: in slow start while cwnd < 2 × the data in flight, else while the data
/// in flight fills the window (to less than a segment). In flight is what was in flight before this ACK (the kernel
/// records it at send time). An application- or receive-window-limited subflow does not grow.
fn cwnd_limited(st: &CcState, ack: &AckSample) -> bool {
    let in_flight = st.pipe + ack.newly_acked;
    if st.in_slow_start() {
        st.cwnd < 2 * in_flight
    } else {
        // Less than a segment of the window free (the kernel counts whole packets).
        in_flight + st.mss as u64 > st.cwnd
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, now: Instant, st: &mut CcState, ack: &AckSample, _sib: Siblings) {
        let linux = self.linux(st);
        if linux {
            self.kernel_acked(now, st, ack);
        }
        if linux && !cwnd_limited(st, ack) {
            return;
        }
        let Some(acked) = after_slow_start(st, ack.newly_acked) else { return };
        let mss = st.mss as f64;
        let cwnd_seg = st.cwnd as f64 / mss;
        if self.t_epoch.is_none() {
            self.start_epoch(now, cwnd_seg, linux);
        }
        let t = now.saturating_duration_since(self.t_epoch.unwrap()).as_secs_f64();
        // Without byte counting every ACK counts as one segment, like a per-ACK stack.
        let segs = if st.abc { acked as f64 / mss } else { 1.0 };
        let grow = (self.next_cwnd(t, st, segs, linux) - cwnd_seg) * mss + self.frac;
        if grow > 0.0 {
            // The floor without the call ([`super::floor_positive`]) below 2^63.
            let (w, whole) = super::floor_positive(grow).unwrap_or_else(|| (grow.floor() as u64, grow.floor()));
            self.frac = grow - whole;
            st.cwnd += w;
        }
    }

    fn on_congestion_event(&mut self, _now: Instant, st: &mut CcState, _ev: CongestionEvent, _sib: Siblings) {
        self.reduce(st);
        st.cwnd = st.ssthresh;
    }

    fn on_rto(&mut self, now: Instant, st: &mut CcState) {
        self.reduce(st);
        st.cwnd = st.mss as u64;
        self.after_rto = true;
        if self.linux(st) {
            // `cubictcp_state(TCP_CA_Loss)`: bictcp_reset and bictcp_hystart_reset.
            self.no_max = true;
            self.delay_min = None;
            self.hystart = HyStart::default();
            self.hystart.reset(now, self.snd_nxt);
        }
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
        c.start_epoch(Instant(0), 70.0, false);
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
            stack: crate::info::Stack::Rfc,
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

    fn linux_state(cwnd_segs: u64) -> CcState {
        CcState {
            cwnd: cwnd_segs * 1000,
            ssthresh: u64::MAX,
            mss: 1000,
            pipe: 0,
            srtt: Duration::from_millis(40),
            min_rtt: Duration::from_millis(40),
            abc: true,
            stack: Stack::Linux,
            in_recovery: false,
            index: 0,
        }
    }

    /// 15 one-segment ACKs (1000 B), 1.5 ms apart, each sampling 40 ms, with a full window in
    /// flight before each: HyStart's ACK train below.
    fn ack_train(c: &mut Cubic, st: &mut CcState) {
        let rtt = Some(Duration::from_millis(40));
        for k in 0..15u64 {
            let a =
                AckSample { newly_acked: 1000, rtt, snd_una: 1000 * (k + 1), snd_nxt: 100_000, ..Default::default() };
            st.pipe = st.cwnd - 1000;
            c.on_ack(Instant(1_500_000 * k), st, &a, &[]);
        }
    }

    /// HyStart's ACK train through `on_ack`, by hand: cwnd 16 segments of 1000 B, srtt and
    /// every sample 40 ms, one-segment ACKs 1.5 ms apart. Threshold (40 + 1) / 2 = 20.5 ms: the
    /// ACK at 21 ms (the 15th) ends slow start with ssthresh = cwnd = 16 + 14 = 30 segments;
    /// that ACK then counts in congestion avoidance, where no loss has set W_max yet, so the
    /// window grows by the 5 % floor: 0.05 × 1000 B = 50 B.
    #[test]
    fn linux_hystart_ends_slow_start_at_the_hand_computed_ack() {
        let mut c = Cubic::default();
        let mut st = linux_state(16);
        let rtt = Some(Duration::from_millis(40));
        for k in 0..15u64 {
            assert_eq!(st.ssthresh, u64::MAX, "still in slow start before ACK {k}");
            let a =
                AckSample { newly_acked: 1000, rtt, snd_una: 1000 * (k + 1), snd_nxt: 100_000, ..Default::default() };
            st.pipe = st.cwnd - 1000; // a full window in flight before the ACK
            c.on_ack(Instant(1_500_000 * k), &mut st, &a, &[]);
        }
        assert_eq!((st.ssthresh, st.cwnd), (30_000, 30_050));
        // The same ACKs under the RFC variant: no HyStart, slow start goes on.
        let mut c = Cubic::from_params(&CubicParams { variant: CubicVariant::Rfc9438, ..Default::default() });
        let mut st = linux_state(16);
        ack_train(&mut c, &mut st);
        assert_eq!((st.ssthresh, st.cwnd), (u64::MAX, 31_000));
        // And with hystart = false.
        let mut c = Cubic::from_params(&CubicParams { hystart: false, ..Default::default() });
        let mut st = linux_state(16);
        ack_train(&mut c, &mut st);
        assert_eq!(st.ssthresh, u64::MAX);
    }

    /// `tcp_is_cwnd_limited`: with half the window in flight in congestion avoidance (an idle
    /// subflow), the Linux variant keeps the window; RFC 9438's grows it.
    #[test]
    fn linux_grows_only_when_cwnd_limited() {
        for (variant, grows) in [(CubicVariant::Linux, false), (CubicVariant::Rfc9438, true)] {
            let mut c = Cubic::from_params(&CubicParams { variant, ..Default::default() });
            let mut st = CcState { ssthresh: 10_000, ..linux_state(20) };
            for k in 0..40u64 {
                st.pipe = 9_000;
                c.on_ack(Instant(1_000_000 * k), &mut st, &AckSample { newly_acked: 1000, ..Default::default() }, &[]);
            }
            assert_eq!(st.cwnd > 20_000, grows, "{variant:?}");
        }
    }

    /// The kernel's Reno-friendly α: beta_scale = 8·(1024 + 717)/3/(1024 − 717) = 4642/307 = 15
    /// in integers, α = 8/15.
    #[test]
    fn linux_reno_friendly_alpha_is_8_over_15() {
        assert_eq!(Cubic::alpha_linux(0.7), 8.0 / 15.0);
        assert!((Cubic::alpha_ca(0.7) - 0.9 / 1.7).abs() < 1e-15);
    }

    /// In the Reno-friendly region (C tiny, so the cubic function stays flat) after a loss at
    /// 10 segments: the kernel's estimate grows by 8/15 segment per RTT for ever, RFC 9438's
    /// switches to 1 once it passes the window before the loss (10 segments, after about 6
    /// RTTs). Fifteen RTTs of full-window ACKs from 7 segments: Linux ends near 7 + 15 × 8/15 =
    /// 15 segments, RFC 9438 near 7 + 3 + 9 = 19.
    #[test]
    fn reno_friendly_region_linux_against_rfc() {
        let run = |variant| {
            let p = CubicParams { c: 1e-9, variant, ..Default::default() };
            let mut c = Cubic::from_params(&p);
            let mut st = CcState { srtt: Duration::from_millis(100), ..linux_state(10) };
            c.on_congestion_event(Instant(0), &mut st, CongestionEvent::Loss, &[]);
            assert_eq!(st.cwnd, 7_000);
            let mut now = Instant(0);
            for _ in 0..15 {
                now += Duration::from_millis(100);
                for _ in 0..st.cwnd / 1000 {
                    st.pipe = st.cwnd - 1000;
                    c.on_ack(now, &mut st, &AckSample { newly_acked: 1000, ..Default::default() }, &[]);
                }
            }
            st.cwnd as f64 / 1000.0
        };
        let (linux, rfc) = (run(CubicVariant::Linux), run(CubicVariant::Rfc9438));
        assert!((14.0..=15.0).contains(&linux), "linux {linux}");
        assert!((18.0..=19.5).contains(&rfc), "rfc {rfc}");
    }

    /// `variant = stack` follows the subflow: the same ACKs give HyStart under Stack::Linux
    /// only.
    #[test]
    fn stack_variant_follows_the_subflow() {
        let ssthresh_after = |stack| {
            let mut c = Cubic::default();
            let mut st = CcState { stack, ..linux_state(16) };
            ack_train(&mut c, &mut st);
            st.ssthresh
        };
        assert_eq!((ssthresh_after(Stack::Linux), ssthresh_after(Stack::Rfc)), (30_000, u64::MAX));
    }
}
