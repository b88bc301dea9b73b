//! BBR's phases fed synthetic rate samples: exact transition conditions (tcp_bbr.c).

use super::*;

const MSS: u64 = 1000;
const MS: u64 = 1_000_000;

/// A controller and its subflow state: RTT 100 ms, MSS 1000 bytes.
struct H {
    c: Bbr,
    st: CcState,
    now: Instant,
    delivered: u64,
}

/// One ACK's inputs.
#[derive(Clone, Copy)]
struct A {
    /// Milliseconds after the previous ACK.
    dt_ms: u64,
    /// Bytes newly delivered.
    acked: u64,
    /// Rate sample, bytes per second (over a 100 ms interval).
    bw: u64,
    /// Start a new round (`prior_delivered` = delivered before this ACK) or not (0).
    new_round: bool,
    rtt_ms: Option<u64>,
    app_limited: bool,
    prior_in_flight: u64,
    losses: u32,
}

impl Default for A {
    fn default() -> Self {
        A {
            dt_ms: 10,
            acked: MSS,
            bw: 1_000_000,
            new_round: true,
            rtt_ms: Some(100),
            app_limited: false,
            prior_in_flight: 0,
            losses: 0,
        }
    }
}

impl H {
    fn new() -> H {
        H::seeded(1)
    }
    fn seeded(seed: u64) -> H {
        let mut c = Bbr::default();
        c.seed(seed);
        let st = CcState {
            cwnd: 10 * MSS,
            ssthresh: u64::MAX,
            mss: MSS as u32,
            pipe: 0,
            srtt: Duration::from_millis(100),
            min_rtt: Duration::from_millis(100),
            abc: true,
            stack: crate::info::Stack::Rfc,
            in_recovery: false,
            index: 0,
        };
        H { c, st, now: Instant(1000 * MS), delivered: 0 }
    }
    fn ack(&mut self, a: A) {
        self.now += Duration(a.dt_ms * MS);
        let prior_delivered = if a.new_round { self.delivered } else { 0 };
        self.delivered += a.acked;
        let rate = RateSample {
            valid: true,
            prior_delivered,
            delivered: a.bw / 10,
            interval: Duration(100 * MS),
            is_app_limited: a.app_limited,
            losses: a.losses,
            prior_in_flight: a.prior_in_flight,
        };
        let ack = AckSample {
            newly_acked: a.acked,
            rtt: a.rtt_ms.map(Duration::from_millis),
            delivered: self.delivered,
            delivery_rate: 0,
            app_limited: a.app_limited,
            rate,
            ..AckSample::default()
        };
        self.c.on_ack(self.now, &mut self.st, &ack, &[]);
    }
    /// One ACK per round at `bw`, with a large amount in flight (no Drain exit).
    fn round(&mut self, bw: u64) {
        self.st.pipe = 1_000 * MSS;
        self.ack(A { bw, ..A::default() });
    }
    /// Through Startup (bandwidth 1 MB/s after a ramp) and Drain into ProbeBW.
    fn enter_probe_bw(&mut self) {
        for bw in [250_000, 500_000, 1_000_000, 1_000_000, 1_000_000, 1_000_000] {
            self.round(bw);
        }
        assert_eq!(self.c.mode(), BbrMode::Drain);
        self.st.pipe = 0;
        self.ack(A { new_round: false, ..A::default() });
        assert_eq!(self.c.mode(), BbrMode::ProbeBw);
    }
}

/// Startup: the pipe is full after three rounds in a row without 25 % growth of the max
/// bandwidth; then Drain, with ssthresh = BDP + quanta (Linux `bbr_check_drain`).
#[test]
fn startup_ends_after_three_rounds_without_growth() {
    let mut h = H::new();
    for (bw, cnt) in [(1_000_000, 0), (2_000_000, 0), (3_000_000, 0), (3_700_000, 1), (3_740_000, 2)] {
        h.round(bw);
        assert_eq!((h.c.mode(), h.c.full_bw_cnt), (BbrMode::Startup, cnt), "bw {bw}");
        assert_eq!(h.c.pacing_gain(), HIGH_GAIN);
    }
    // 3.75 MB/s would be 25 % above the 3 MB/s reference: 3.74 is not.
    assert_eq!(h.c.full_bw, 3_000_000);
    h.round(3_740_000);
    assert!(h.c.full_bw_reached());
    assert_eq!(h.c.mode(), BbrMode::Drain);
    assert_eq!(h.c.pacing_gain(), DRAIN_GAIN);
    assert_eq!(h.c.cwnd_gain, HIGH_GAIN);
    // BDP 374 000 bytes = 374 segments; pacing rate before this ACK 2.885 × 3.74 MB/s × 0.99
    // = 10 683 000 B/s → 10 segments per ms → + 30; even: 404 segments.
    assert_eq!(h.st.ssthresh, 404 * MSS);
}

/// Growth of exactly 25 % resets the count; app-limited rounds and ACKs within a round do not
/// count.
#[test]
fn full_bw_count_rules() {
    let mut h = H::new();
    h.round(1_000_000);
    h.round(1_100_000);
    assert_eq!(h.c.full_bw_cnt, 1);
    h.round(1_250_000);
    assert_eq!((h.c.full_bw, h.c.full_bw_cnt), (1_250_000, 0));
    h.round(1_250_000);
    h.st.pipe = 1_000 * MSS;
    h.ack(A { bw: 1_250_000, app_limited: true, ..A::default() });
    h.ack(A { bw: 1_250_000, new_round: false, ..A::default() });
    assert_eq!(h.c.full_bw_cnt, 1);
    h.round(1_250_000);
    h.round(1_250_000);
    assert_eq!(h.c.mode(), BbrMode::Drain);
}

/// Drain ends once in flight ≤ BDP + quanta (1 MB/s × 100 ms = 100 segments, + 3 × 2): ProbeBW
/// in a phase other than 0.75.
#[test]
fn drain_ends_at_one_bdp_in_flight() {
    let mut h = H::new();
    for bw in [250_000, 500_000, 1_000_000, 1_000_000, 1_000_000, 1_000_000] {
        h.round(bw);
    }
    assert_eq!(h.c.mode(), BbrMode::Drain);
    // Pacing at the drain gain: 0.3466 × 1 MB/s × 0.99, in wire bytes (1052 per 1000 payload).
    let payload = (1_000_000.0 * DRAIN_GAIN * 0.99) as u64;
    assert_eq!(h.c.pacing_rate(&h.st), Some(payload * 1052 / 1000));
    let target = h.c.inflight(&h.st, 1_000_000, 1.0);
    assert_eq!(target, 106 * MSS);
    h.st.pipe = target + 1;
    h.ack(A { new_round: false, ..A::default() });
    assert_eq!(h.c.mode(), BbrMode::Drain);
    h.st.pipe = target;
    h.ack(A { new_round: false, ..A::default() });
    assert_eq!(h.c.mode(), BbrMode::ProbeBw);
    assert_ne!(h.c.cycle_idx(), 1);
    assert_eq!(h.c.pacing_gain(), PACING_GAIN_CYCLE[h.c.cycle_idx()]);
}

/// The initial ProbeBW phase is drawn from the seed: one of 0, 2, …, 7 (never the 0.75 phase),
/// every one of them for some seed, and the same for the same seed.
#[test]
fn random_start_phase_is_never_the_drain_phase() {
    let mut seen = [0u32; 8];
    for seed in 0..200 {
        let mut h = H::seeded(seed);
        h.enter_probe_bw();
        seen[h.c.cycle_idx()] += 1;
        let mut again = H::seeded(seed);
        again.enter_probe_bw();
        assert_eq!(again.c.cycle_idx(), h.c.cycle_idx());
    }
    assert_eq!(seen[1], 0);
    assert!(seen.iter().enumerate().all(|(i, &n)| i == 1 || n > 0), "{seen:?}");
}

/// Brings `h` (in ProbeBW) to phase 0 (gain 1.25) by ACKs one min_rtt apart.
fn to_phase_zero(h: &mut H) {
    while h.c.cycle_idx() != 0 {
        h.ack(A { dt_ms: 101, new_round: false, prior_in_flight: 200 * MSS, ..A::default() });
    }
}

/// The gain cycle: 1.25 until a min_rtt passed and in flight reached 1.25 × BDP + quanta (or a
/// loss), 0.75 until a min_rtt passed or in flight fell to BDP, then six phases of 1, each one
/// min_rtt long.
#[test]
fn gain_cycle_order_and_phase_conditions() {
    let mut h = H::new();
    h.enter_probe_bw();
    to_phase_zero(&mut h);
    assert_eq!(h.c.pacing_gain(), 1.25);
    // 1.25 × 100 = 125 segments + 6, even 132, + 2 in phase 0: 134.
    let high = h.c.inflight(&h.st, 1_000_000, 1.25);
    assert_eq!(high, 134 * MSS);
    // A min_rtt passed but in flight is below target: stay.
    h.ack(A { dt_ms: 101, new_round: false, prior_in_flight: high - 1, ..A::default() });
    assert_eq!(h.c.cycle_idx(), 0);
    // Target reached but within one min_rtt of the phase start (the stamp of the last advance
    // is 101 ms back): advance needs strictly more than min_rtt since the phase started.
    h.ack(A { dt_ms: 1, new_round: false, prior_in_flight: high, ..A::default() });
    assert_eq!(h.c.cycle_idx(), 1);
    assert_eq!(h.c.pacing_gain(), 0.75);
    // 0.75: leaves early once in flight ≤ BDP + quanta (106 segments here, phase 1).
    h.ack(A { dt_ms: 1, new_round: false, prior_in_flight: 107 * MSS, ..A::default() });
    assert_eq!(h.c.cycle_idx(), 1);
    h.ack(A { dt_ms: 1, new_round: false, prior_in_flight: 106 * MSS, ..A::default() });
    assert_eq!(h.c.cycle_idx(), 2);
    let mut seen = vec![(h.c.cycle_idx(), h.c.pacing_gain())];
    for _ in 0..6 {
        // Gain 1: exactly one min_rtt is not enough, a nanosecond more is.
        let idx = h.c.cycle_idx();
        h.ack(A { dt_ms: 100, new_round: false, prior_in_flight: 500 * MSS, ..A::default() });
        assert_eq!(h.c.cycle_idx(), idx);
        h.now += Duration(1);
        h.ack(A { dt_ms: 0, new_round: false, prior_in_flight: 500 * MSS, ..A::default() });
        seen.push((h.c.cycle_idx(), h.c.pacing_gain()));
    }
    assert_eq!(seen, vec![(2, 1.0), (3, 1.0), (4, 1.0), (5, 1.0), (6, 1.0), (7, 1.0), (0, 1.25)]);
}

/// A loss ends the 1.25 phase after one min_rtt whatever is in flight.
#[test]
fn loss_ends_probing_phase() {
    let mut h = H::new();
    h.enter_probe_bw();
    to_phase_zero(&mut h);
    h.ack(A { dt_ms: 101, new_round: false, prior_in_flight: 10 * MSS, losses: 1, ..A::default() });
    assert_eq!(h.c.cycle_idx(), 1);
}

/// ProbeBW window: min(cwnd + acked, 2 × BDP + quanta), at least 4 segments; pacing at
/// gain × bw × 0.99.
#[test]
fn probe_bw_window_and_pacing() {
    let mut h = H::new();
    h.enter_probe_bw();
    while h.c.cycle_idx() != 2 {
        h.ack(A { dt_ms: 101, new_round: false, prior_in_flight: 200 * MSS, ..A::default() });
    }
    h.st.cwnd = 500 * MSS;
    h.ack(A { new_round: false, ..A::default() });
    // 2 × 100 + 6 = 206 segments.
    assert_eq!(h.st.cwnd, 206 * MSS);
    h.st.cwnd = 100 * MSS;
    h.ack(A { new_round: false, acked: 3 * MSS, ..A::default() });
    assert_eq!(h.st.cwnd, 103 * MSS);
    assert_eq!(h.c.pacing_rate(&h.st), Some(990_000 * 1052 / 1000));
}

/// ProbeRTT: entered when min_rtt was not refreshed for 10 s, window 4 segments, the subflow
/// marked app-limited; done 200 ms after in flight fell to 4 segments and a round passed;
/// then ProbeBW with the window saved before, and min_rtt's stamp refreshed.
#[test]
fn probe_rtt_entry_and_exit() {
    let mut h = H::new();
    h.enter_probe_bw();
    let stamp = h.c.min_rtt_stamp;
    h.st.cwnd = 150 * MSS;
    // Larger RTTs for 10 s do not refresh the filter.
    h.now = stamp + Duration::from_secs(10);
    h.ack(A { dt_ms: 0, rtt_ms: Some(120), new_round: false, prior_in_flight: 150 * MSS, ..A::default() });
    assert_ne!(h.c.mode(), BbrMode::ProbeRtt, "exactly 10 s: not expired yet");
    assert_eq!(h.c.min_rtt(), Some(Duration::from_millis(100)));
    let cwnd_before = h.st.cwnd;
    h.st.pipe = 150 * MSS;
    h.ack(A { dt_ms: 1, rtt_ms: Some(120), new_round: false, ..A::default() });
    assert_eq!(h.c.mode(), BbrMode::ProbeRtt);
    assert_eq!(h.c.min_rtt(), Some(Duration::from_millis(120)), "expired: any sample replaces it");
    assert_eq!(h.st.cwnd, 4 * MSS);
    assert!(h.c.wants_app_limited());
    assert_eq!(h.c.pacing_gain(), 1.0);
    // In flight still above 4 segments: no done stamp yet.
    h.ack(A { new_round: false, ..A::default() });
    assert_eq!(h.c.probe_rtt_done, None);
    h.st.pipe = 4 * MSS;
    h.ack(A { new_round: false, ..A::default() });
    let done = h.now + PROBE_RTT_TIME;
    assert_eq!(h.c.probe_rtt_done, Some(done));
    // 200 ms pass without a round end: still probing.
    h.now = done;
    h.ack(A { dt_ms: 1, new_round: false, ..A::default() });
    assert_eq!(h.c.mode(), BbrMode::ProbeRtt);
    // A round ends after the 200 ms: done.
    h.ack(A { dt_ms: 1, ..A::default() });
    assert_eq!(h.c.mode(), BbrMode::ProbeBw);
    assert_eq!(h.c.min_rtt_stamp, h.now);
    assert!(h.st.cwnd >= cwnd_before, "window restored: {}", h.st.cwnd);
    assert!(!h.c.wants_app_limited());
}

/// A smaller RTT refreshes the filter, so no ProbeRTT is due 10 s after the first sample.
#[test]
fn lower_rtt_postpones_probe_rtt() {
    let mut h = H::new();
    h.enter_probe_bw();
    h.ack(A { dt_ms: 5_000, rtt_ms: Some(90), new_round: false, ..A::default() });
    h.ack(A { dt_ms: 5_500, rtt_ms: Some(95), new_round: false, ..A::default() });
    assert_ne!(h.c.mode(), BbrMode::ProbeRtt);
    h.ack(A { dt_ms: 4_501, rtt_ms: Some(95), new_round: false, ..A::default() });
    assert_eq!(h.c.mode(), BbrMode::ProbeRtt);
}

/// The BtlBw filter: a sample of round r is the max through round r + 10 and forgotten at the
/// first update of round r + 11; smaller samples behind it take over in order.
#[test]
fn bw_filter_window_expiry() {
    let mut f = MaxFilter::default();
    f.update(1, 900, 10);
    f.update(3, 500, 10);
    f.update(5, 700, 10);
    f.update(5, 600, 10);
    f.update(11, 100, 10);
    assert_eq!(f.get(), 900);
    f.update(12, 100, 10);
    assert_eq!(f.get(), 700, "round 1 expired; 700 (round 5) dominates 500 (round 3)");
    f.update(15, 100, 10);
    assert_eq!(f.get(), 700);
    f.update(16, 100, 10);
    assert_eq!(f.get(), 100);
    assert_eq!(f.q.len(), 1);
}

/// Through the controller: a burst of bandwidth is kept for 10 rounds, then the estimate falls
/// to the newer samples; app-limited samples lower than the max are ignored.
#[test]
fn btlbw_estimate_over_ten_rounds() {
    let mut h = H::new();
    h.enter_probe_bw();
    let r0 = h.c.round_count();
    h.ack(A { bw: 2_000_000, ..A::default() });
    for _ in 0..10 {
        h.ack(A { bw: 800_000, ..A::default() });
        assert_eq!(h.c.max_bw(), 2_000_000);
    }
    h.ack(A { bw: 800_000, ..A::default() });
    assert_eq!(h.c.round_count(), r0 + 12);
    assert_eq!(h.c.max_bw(), 800_000);
    h.ack(A { bw: 500_000, app_limited: true, ..A::default() });
    assert_eq!(h.c.bw.q.back(), Some(&(r0 + 12, 800_000)), "app-limited lower sample ignored");
    h.ack(A { bw: 900_000, app_limited: true, ..A::default() });
    assert_eq!(h.c.max_bw(), 900_000, "app-limited higher sample kept");
}

/// Fast recovery: the first round conserves packets (cwnd = in flight + acked), the window is
/// restored to the one saved at entry when recovery ends; losses come off the window.
#[test]
fn recovery_packet_conservation_and_restore() {
    let mut h = H::new();
    h.enter_probe_bw();
    h.st.cwnd = 200 * MSS;
    h.c.on_congestion_event(h.now, &mut h.st, CongestionEvent::Loss, &[]);
    assert_eq!(h.st.cwnd, 200 * MSS, "no cut at entry");
    h.st.pipe = 50 * MSS;
    h.ack(A { new_round: false, acked: 2 * MSS, ..A::default() });
    assert_eq!(h.st.cwnd, 52 * MSS);
    h.st.pipe = 60 * MSS;
    h.ack(A { new_round: false, acked: MSS, ..A::default() });
    assert_eq!(h.st.cwnd, 61 * MSS, "max(cwnd, in flight + acked)");
    // A new round ends conservation: back to cwnd + acked towards the target.
    h.ack(A { acked: MSS, losses: 2, ..A::default() });
    assert_eq!(h.st.cwnd, 60 * MSS, "61 − 2 lost + 1 acked");
    h.c.on_recovery_exit(h.now, &mut h.st);
    h.ack(A { new_round: false, acked: MSS, ..A::default() });
    assert_eq!(h.st.cwnd, 201 * MSS, "restored to 200, + 1 acked (target 206)");
}

/// RTO: one segment, then growth by acked bytes; the saved window comes back at the end of
/// RTO recovery.
#[test]
fn rto_collapses_then_restores() {
    let mut h = H::new();
    h.enter_probe_bw();
    h.st.cwnd = 150 * MSS;
    h.c.on_rto(h.now, &mut h.st);
    assert_eq!(h.st.cwnd, MSS);
    assert_eq!(h.c.full_bw, 0);
    h.st.pipe = 0;
    h.ack(A { new_round: false, acked: MSS, ..A::default() });
    assert_eq!(h.st.cwnd, 4 * MSS, "min window");
    h.c.on_recovery_exit(h.now, &mut h.st);
    h.ack(A { new_round: false, acked: MSS, ..A::default() });
    assert_eq!(h.st.cwnd, 151 * MSS);
}

/// Before the pipe is full the pacing rate never decreases; at the start it is
/// 2.885 × cwnd / srtt × 0.99.
#[test]
fn startup_pacing_never_decreases() {
    let mut h = H::new();
    let init = (HIGH_GAIN * 0.99 * 100_000.0) as u64;
    assert_eq!(h.c.pacing_rate(&h.st), Some(init * 1052 / 1000));
    h.round(10_000);
    assert_eq!(h.c.pacing_rate, init);
    h.round(1_000_000);
    assert_eq!(h.c.pacing_rate, (1_000_000.0 * HIGH_GAIN * 0.99) as u64);
}

/// Parameters parse as typed values.
#[test]
fn params_parse() {
    use crate::cc::CcSpec;
    assert_eq!(CcSpec::parse("bbr").unwrap().build().name(), "bbr");
    assert!(CcSpec::parse("bbr:cwnd_gain=2.5,bw_rounds=8,min_rtt_window_s=5").is_ok());
    assert!(CcSpec::parse("bbr:cwnd_gain=0").is_err());
}
