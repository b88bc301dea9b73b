//! BBR v1 (N. Cardwell, Y. Cheng, C. S. Gunn, S. H. Yeganeh, V. Jacobson, "BBR: Congestion-Based
//! Congestion Control", ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-control-00;
//! Linux net/ipv4/tcp_bbr.c, whose function names the methods below carry). The path is modelled
//! as (BtlBw, RTprop): a windowed max of delivery-rate samples over 10 round trips and a windowed
//! min of RTT samples over 10 s. The sender paces at `pacing_gain × BtlBw` and caps the window at
//! `cwnd_gain × BDP` plus a quantum; the gains follow the mode: Startup (2/ln 2) until the
//! bandwidth stops growing by 25 % for three rounds, Drain (ln 2 / 2) until the queue made in
//! Startup is gone, ProbeBW (the 8-phase cycle 1.25, 0.75, 1 × 6, each about one RTprop) and,
//! when RTprop was not refreshed for 10 s, ProbeRTT (4 segments for max(200 ms, one round)).
//!
//! Uncoupled: over MPTCP each subflow runs its own instance ("MPTCP-BBR" in PDAA3C, rl-baselines
//! §6). Sizes are bytes (Linux counts packets; a packet is `mss` bytes here). Delivery-rate
//! samples come from the subflow (subflow/rate.rs, Linux tcp_rate.c).
//!
//! Deviations from Linux v1, all deliberate: the bandwidth filter is an exact windowed max per
//! round (Linux `minmax_running_max` keeps three samples and can be looser); the long-term
//! (policer) mode, ACK-aggregation compensation and idle-restart pacing are not implemented;
//! the pacing rate is converted to wire bytes (the subflow paces whole packets, headers
//! included), so that gain 1 sends payload at BtlBw (Linux 4.9's `bbr_rate_bytes_per_sec`
//! multiplied by `tcp_mss_to_mtu` for the same reason; later kernels use the MSS), and the 1 %
//! margin of later kernels is kept; the random initial ProbeBW phase comes
//! from a seed the connection derives from its key and the subflow index
//! ([`CongestionControl::seed`]).

use super::{AckSample, CcState, CongestionControl, CongestionEvent, RateSample, Siblings};
use crate::algo::FromParams;
use crate::segment::HEADER_BYTES;
use crate::time::{Duration, Instant};

/// Startup pacing and window gain 2/ln 2 ≈ 2.885 (Linux `bbr_high_gain` = 739/256 ≈ 2.887).
pub const HIGH_GAIN: f64 = 2.0 / std::f64::consts::LN_2;
/// Drain pacing gain ln 2 / 2 ≈ 0.347, the inverse of [`HIGH_GAIN`] (Linux `bbr_drain_gain`
/// = 88/256 ≈ 0.344).
pub const DRAIN_GAIN: f64 = 1.0 / HIGH_GAIN;
/// ProbeBW pacing gains, one phase each (Linux `bbr_pacing_gain`).
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Pacing margin: pace at 99 % of `gain × bw` (Linux `bbr_pacing_margin_percent`).
const PACING_MARGIN: f64 = 0.99;
/// Minimum window in segments, also ProbeRTT's window (Linux `bbr_cwnd_min_target`).
const MIN_CWND_SEGS: u64 = 4;
/// ProbeRTT lasts at least this long (Linux `bbr_probe_rtt_mode_ms`).
const PROBE_RTT_TIME: Duration = Duration::from_millis(200);
/// Full pipe: bandwidth grew by less than 25 % (Linux `bbr_full_bw_thresh` = 5/4) for this many
/// rounds (`bbr_full_bw_cnt`).
const FULL_BW_ROUNDS: u32 = 3;
/// Initial window in segments used for the BDP before any RTT sample (Linux `TCP_INIT_CWND`).
const INIT_CWND_SEGS: u64 = 10;

crate::params! {
    /// BBR's parameters (Linux defaults).
    pub struct BbrParams {
        /// ProbeBW window gain (Linux `bbr_cwnd_gain`).
        cwnd_gain: f64 = 2.0, "> 0" if |x: &f64| *x > 0.0;
        /// Length of the BtlBw max filter in round trips (Linux `bbr_bw_rtts` = CYCLE_LEN + 2).
        bw_rounds: u64 = 10, ">= 1" if |x: &u64| *x >= 1;
        /// Length of the RTprop min filter in seconds (Linux `bbr_min_rtt_win_sec`).
        min_rtt_window_s: f64 = 10.0, "> 0" if |x: &f64| *x > 0.0;
    }
}

/// BBR's operating mode (Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrMode {
    /// Ramp up at [`HIGH_GAIN`] until the pipe is full.
    Startup,
    /// Drain the queue Startup made.
    Drain,
    /// Cycle the pacing gain around 1 to probe for bandwidth.
    ProbeBw,
    /// Cut the window to 4 segments to measure RTprop.
    ProbeRtt,
}

/// Loss state as Linux's `icsk_ca_state` reduced to what BBR reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CaState {
    Open,
    Recovery,
    Loss,
}

/// Exact windowed maximum of per-round bandwidth samples: a monotone deque of (round, bw), one
/// entry per round at most. A sample of round r counts until the first update in a round
/// later than r + window (Linux `minmax_running_max` expires when `t − t_best > win`).
#[derive(Clone, Debug, Default)]
struct MaxFilter {
    q: std::collections::VecDeque<(u64, u64)>,
}

impl MaxFilter {
    fn update(&mut self, round: u64, bw: u64, window: u64) {
        while self.q.front().is_some_and(|&(r, _)| round - r > window) {
            self.q.pop_front();
        }
        while self.q.back().is_some_and(|&(_, b)| b <= bw) {
            self.q.pop_back();
        }
        match self.q.back() {
            // A bigger sample of this round stays: this one only matters once it expires,
            // which it does together with it.
            Some(&(r, _)) if r == round => {}
            _ => self.q.push_back((round, bw)),
        }
    }
    fn get(&self) -> u64 {
        self.q.front().map_or(0, |&(_, b)| b)
    }
}

/// The controller; see the module docs.
#[derive(Clone, Debug)]
pub struct Bbr {
    p: BbrParams,
    mode: BbrMode,
    ca: CaState,
    prev_ca: CaState,
    bw: MaxFilter,
    /// RTprop estimate; `None` before the first RTT sample.
    min_rtt: Option<Duration>,
    min_rtt_stamp: Instant,
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    full_bw: u64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    cycle_idx: usize,
    cycle_stamp: Instant,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// Pacing rate in payload bytes per second; 0 until set from the first RTT.
    pacing_rate: u64,
    prior_cwnd: u64,
    packet_conservation: bool,
    probe_rtt_done: Option<Instant>,
    probe_rtt_round_done: bool,
    rng: u64,
}

impl Default for Bbr {
    fn default() -> Self {
        Self::from_params(&BbrParams::default())
    }
}

impl FromParams for Bbr {
    type Params = BbrParams;
    fn from_params(p: &BbrParams) -> Self {
        Bbr {
            p: p.clone(),
            mode: BbrMode::Startup,
            ca: CaState::Open,
            prev_ca: CaState::Open,
            bw: MaxFilter::default(),
            min_rtt: None,
            min_rtt_stamp: Instant::ZERO,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            full_bw: 0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: Instant::ZERO,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            pacing_rate: 0,
            prior_cwnd: 0,
            packet_conservation: false,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            rng: 0,
        }
    }
}

impl Bbr {
    /// The current mode.
    pub fn mode(&self) -> BbrMode {
        self.mode
    }
    /// BtlBw estimate, payload bytes per second.
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }
    /// RTprop estimate.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    /// Current ProbeBW phase (index into [`PACING_GAIN_CYCLE`]).
    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }
    /// Current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    /// Rounds (packet-timed round trips) counted so far.
    pub fn round_count(&self) -> u64 {
        self.round_count
    }
    /// Startup found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// SplitMix64 step: the next pseudo-random number of the seeded stream.
    fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Linux `bbr_bdp` + `bbr_quantization_budget`: `gain × bw × min_rtt` rounded up, plus three
    /// send quanta, rounded up to an even number of segments, plus 2 in the 1.25 phase.
    fn inflight(&self, st: &CcState, bw: u64, gain: f64) -> u64 {
        let mss = st.mss as u64;
        let Some(rtt) = self.min_rtt else { return INIT_CWND_SEGS * mss };
        let bdp = (gain * bw as f64 * rtt.0 as f64 / 1e9).ceil() as u64;
        let mut segs = bdp.div_ceil(mss) + 3 * self.tso_segs_goal(mss);
        segs = (segs + 1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            segs += 2;
        }
        segs * mss
    }

    /// Linux `bbr_tso_segs_goal`: segments sent in one go at the pacing rate over ~1 ms
    /// (`sk_pacing_shift` 10), at least 2 above 1.2 Mbit/s, at most 127.
    fn tso_segs_goal(&self, mss: u64) -> u64 {
        let min = if self.pacing_rate < 1_200_000 / 8 { 1 } else { 2 };
        ((self.pacing_rate >> 10) / mss).clamp(min, 127)
    }

    /// Linux `bbr_bw_to_pacing_rate`.
    fn rate(bw: u64, gain: f64) -> u64 {
        (bw as f64 * gain * PACING_MARGIN) as u64
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: high gain × window per smoothed RTT (1 ms before
    /// any sample), with the pacing margin.
    fn init_pacing_rate(st: &CcState) -> u64 {
        let rtt = if st.srtt.0 > 0 { st.srtt.0 } else { 1_000_000 };
        Self::rate((st.cwnd as f64 * 1e9 / rtt as f64) as u64, HIGH_GAIN)
    }

    /// Linux `bbr_update_bw`: round counting and the BtlBw filter.
    fn update_bw(&mut self, ack: &AckSample) {
        self.round_start = false;
        let rs = &ack.rate;
        let Some(bw) = rs.bw() else { return };
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = ack.delivered;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        // An app-limited sample only raises the estimate.
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.update(self.round_count, bw, self.p.bw_rounds);
        }
    }

    /// Linux `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, now: Instant, st: &CcState, rs: &RateSample) -> bool {
        let rtt = self.min_rtt.unwrap_or(Duration::ZERO);
        let full_length = now.saturating_duration_since(self.cycle_stamp) > rtt;
        let g = self.pacing_gain;
        if g == 1.0 {
            return full_length;
        }
        let inflight = rs.prior_in_flight;
        let bw = self.bw.get();
        if g > 1.0 {
            return full_length && (rs.losses > 0 || inflight >= self.inflight(st, bw, g));
        }
        full_length || inflight <= self.inflight(st, bw, 1.0)
    }

    /// Linux `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, now: Instant) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN_CYCLE.len();
        self.cycle_stamp = now;
    }

    /// Linux `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, now: Instant, st: &CcState, rs: &RateSample) {
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(now, st, rs) {
            self.advance_cycle_phase(now);
        }
    }

    /// Linux `bbr_reset_probe_bw_mode`: a random phase other than the 0.75 one
    /// (`cycle_idx = 7 − rand(0..7)`, then advance: one of 0, 2, 3, …, 7).
    fn reset_probe_bw_mode(&mut self, now: Instant) {
        self.mode = BbrMode::ProbeBw;
        self.cycle_idx = PACING_GAIN_CYCLE.len() - 1 - (self.next_random() % 7) as usize;
        self.advance_cycle_phase(now);
    }

    /// Linux `bbr_reset_mode`.
    fn reset_mode(&mut self, now: Instant) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(now);
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    /// Linux `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let max_bw = self.bw.get();
        if max_bw as u128 * 4 >= self.full_bw as u128 * 5 {
            self.full_bw = max_bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_ROUNDS;
    }

    /// Linux `bbr_check_drain`.
    fn check_drain(&mut self, now: Instant, st: &mut CcState) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            st.ssthresh = self.inflight(st, self.bw.get(), 1.0);
        }
        if self.mode == BbrMode::Drain && st.pipe <= self.inflight(st, self.bw.get(), 1.0) {
            self.reset_probe_bw_mode(now);
        }
    }

    /// Linux `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_ca < CaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// Linux `bbr_update_min_rtt`: the RTprop filter, ProbeRTT entry and exit.
    fn update_min_rtt(&mut self, now: Instant, st: &mut CcState, ack: &AckSample) {
        let window = Duration::from_secs_f64(self.p.min_rtt_window_s);
        // The filter starts with the first RTT sample (Linux: the handshake's, at init).
        let expired = self.min_rtt.is_some() && now > self.min_rtt_stamp + window;
        if let Some(rtt) = ack.rtt {
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = now;
            }
        }
        if expired && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd(st.cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode != BbrMode::ProbeRtt {
            return;
        }
        match self.probe_rtt_done {
            None if st.pipe <= MIN_CWND_SEGS * st.mss as u64 => {
                self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = ack.delivered;
            }
            None => {}
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    // Linux `bbr_check_probe_rtt_done`.
                    self.min_rtt_stamp = now;
                    st.cwnd = st.cwnd.max(self.prior_cwnd);
                    self.reset_mode(now);
                }
            }
        }
    }

    /// Linux `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (HIGH_GAIN, HIGH_GAIN),
            BbrMode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            BbrMode::ProbeBw => (PACING_GAIN_CYCLE[self.cycle_idx], self.p.cwnd_gain),
            BbrMode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// Linux `bbr_set_pacing_rate`: never lower the rate before the pipe is full.
    fn set_pacing_rate(&mut self, st: &CcState) {
        if self.pacing_rate == 0 && st.srtt.0 > 0 {
            self.pacing_rate = Self::init_pacing_rate(st);
        }
        let rate = Self::rate(self.bw.get(), self.pacing_gain);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first round of
    /// recovery, the window before recovery restored after it. Returns the window and whether
    /// packet conservation set it.
    fn recover_or_restore(&mut self, st: &CcState, ack: &AckSample) -> (u64, bool) {
        let (mss, rs, acked) = (st.mss as u64, &ack.rate, ack.newly_acked);
        let mut cwnd = st.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses as u64 * mss).max(mss);
        }
        if self.ca == CaState::Recovery && self.prev_ca != CaState::Recovery {
            self.packet_conservation = true;
            self.next_round_delivered = ack.delivered;
            cwnd = st.pipe + acked;
        } else if self.prev_ca >= CaState::Recovery && self.ca < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca = self.ca;
        if self.packet_conservation {
            return (cwnd.max(st.pipe + acked), true);
        }
        (cwnd, false)
    }

    /// Linux `bbr_set_cwnd`.
    fn set_cwnd(&mut self, st: &mut CcState, ack: &AckSample) {
        let mss = st.mss as u64;
        let acked = ack.newly_acked;
        let (mut cwnd, conserving) = self.recover_or_restore(st, ack);
        if !conserving {
            let target = self.inflight(st, self.bw.get(), self.cwnd_gain);
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || ack.delivered < INIT_CWND_SEGS * mss {
                cwnd += acked;
            }
            cwnd = cwnd.max(MIN_CWND_SEGS * mss);
        }
        st.cwnd = cwnd;
        if self.mode == BbrMode::ProbeRtt {
            st.cwnd = st.cwnd.min(MIN_CWND_SEGS * mss);
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// Linux `bbr_main`: update the model, then set the pacing rate and the window.
    fn on_ack(&mut self, now: Instant, st: &mut CcState, ack: &AckSample, _sib: Siblings) {
        self.update_bw(ack);
        self.update_cycle_phase(now, st, &ack.rate);
        self.check_full_bw_reached(&ack.rate);
        self.check_drain(now, st);
        self.update_min_rtt(now, st, ack);
        self.update_gains();
        self.set_pacing_rate(st);
        self.set_cwnd(st, ack);
    }

    /// Entering fast recovery (Linux `bbr_ssthresh` saves the window; the window itself is set
    /// per ACK by packet conservation).
    fn on_congestion_event(&mut self, _now: Instant, st: &mut CcState, _ev: CongestionEvent, _sib: Siblings) {
        self.save_cwnd(st.cwnd);
        self.ca = CaState::Recovery;
    }

    /// RTO (Linux `tcp_enter_loss` sets cwnd = in flight + 1 = one segment; `bbr_set_state`
    /// on TCP_CA_Loss restarts full-bandwidth detection's reference and starts a round).
    fn on_rto(&mut self, _now: Instant, st: &mut CcState) {
        self.save_cwnd(st.cwnd);
        st.cwnd = st.mss as u64;
        self.ca = CaState::Loss;
        self.prev_ca = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
    }

    fn on_recovery_exit(&mut self, _now: Instant, _st: &mut CcState) {
        self.ca = CaState::Open;
    }

    /// Payload rate converted to wire bytes (the subflow paces whole packets).
    fn pacing_rate(&self, st: &CcState) -> Option<u64> {
        let payload = if self.pacing_rate == 0 { Self::init_pacing_rate(st) } else { self.pacing_rate };
        let mss = st.mss as u64;
        Some(payload * (mss + HEADER_BYTES as u64) / mss)
    }

    fn cong_control(&self) -> bool {
        true
    }

    fn wants_app_limited(&self) -> bool {
        self.mode == BbrMode::ProbeRtt
    }

    fn seed(&mut self, seed: u64) {
        self.rng = seed;
    }
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
