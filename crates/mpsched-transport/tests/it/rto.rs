//! Retransmission timeout (RFC 6298): tail loss, blackouts with exponential backoff, Karn's rule,
//! min/max RTO clamps; RFC 5681's window after a timeout. The expected times are RFC 6298's, so
//! these run the RFC estimator (`Stack::Rfc`); the linux profile's kernel estimator
//! (`tcp_rtt_estimator`) has hand-computed tests in src/rtt.rs.

use crate::util::*;
use mpsched_transport::{Duration, Instant, SubflowConfig, SubflowInfo};

/// Client snapshot taken at exactly `t` (the last one if several).
fn client_at(p: &Pair, t: Instant) -> SubflowInfo {
    p.client_trace.iter().rev().find(|(u, _)| *u == t).unwrap_or_else(|| panic!("no client input at {t:?}")).1
}

/// Arrival time of the last ACK that reached the client strictly before `t`.
fn last_ack_arrival_before(p: &Pair, t: Instant) -> Instant {
    p.pure_acks(Dir::S2C).filter_map(|s| s.arrival).filter(|a| *a < t).max().unwrap()
}

fn assert_complete(p: &Pair, n: u64) {
    let si = p.server.info();
    assert_eq!(si.bytes_delivered, n);
    assert_eq!(si.duplicate_bytes, 0);
    assert_eq!(p.app_read[1], n);
    assert_eq!(p.client_info().delivered, n);
}

#[test]
fn tail_loss_is_recovered_by_rto() {
    // 20 segments: 10 at 100 ms, 10 at 200 ms; the 20th (last) is lost. No segment follows it, so
    // there is no SACK and no duplicate ACK: only the timer can recover it.
    let n = 20 * MSS;
    let mut p = Pair::new(rfc6298_reno()).with_fault(drop_nth_data(Dir::C2S, 20));
    p.client.write(n);
    p.run_until_delivered(n, at_ms(5000));
    p.drive();
    assert_complete(&p, n);
    let rtx = p.retransmissions(Dir::C2S);
    assert_eq!(rtx.len(), 1);
    assert_eq!(rtx[0].seg.seq, 1 + 19 * MSS);
    // Segment 19 is ACKed alone by the delayed-ACK timer: arrives 250, ACK 290, back at 340 ms.
    // That ACK restarts the timer (RFC 6298 5.3) with RTO = max(SRTT + 4·RTTVAR, 200 ms) = 200 ms.
    let last_ack = last_ack_arrival_before(&p, rtx[0].at);
    assert_eq!(last_ack, at_ms(340));
    assert_eq!(client_at(&p, last_ack).rto, ms(200));
    assert_eq!(rtx[0].at, at_ms(540));
    let ci = p.client_info();
    assert_eq!((ci.rto_count, ci.fast_recoveries, ci.segments_retransmitted), (1, 0, 1));
    // RFC 5681: after a timeout cwnd = 1 segment (loss window).
    assert_eq!(client_at(&p, rtx[0].at).cwnd, MSS);
}

/// RTT 20 ms; every data segment sent in [100 ms, 1500 ms) is lost. The 160 segments of the
/// 5th slow-start round (sent at 100 ms) vanish; the last good ACK arrives at 100 ms.
fn blackout() -> Pair {
    let mut p =
        Pair::new(rfc6298_reno()).with_delay(ms(10)).with_fault(drop_data_between(Dir::C2S, at_ms(100), at_ms(1500)));
    p.client.write(1000 * MSS);
    p.run_until_delivered(1000 * MSS, at_ms(10_000));
    p.drive();
    p
}

#[test]
fn blackout_rto_backoff_doubles_and_transfer_completes() {
    let p = blackout();
    assert_complete(&p, 1000 * MSS);
    let head = 1 + 150 * MSS; // 10 + 20 + 40 + 80 segments were delivered before the blackout
    let lost_originals = p.data(Dir::C2S).filter(|s| s.dropped() && s.seg.end() > head && s.at == at_ms(100)).count();
    assert_eq!(lost_originals, 160);

    // The head segment is retransmitted by the timer three times.
    let head_rtx: Vec<_> = p.retransmissions(Dir::C2S).into_iter().filter(|s| s.seg.seq == head).collect();
    let times: Vec<_> = head_rtx.iter().map(|s| s.at).collect();
    assert_eq!(times, vec![at_ms(300), at_ms(700), at_ms(1500)]);
    assert!(head_rtx[0].dropped() && head_rtx[1].dropped() && !head_rtx[2].dropped());
    // First expiry: last ACK (100 ms) + RTO; SRTT 20 ms, so RTO is the 200 ms floor.
    let base = client_at(&p, at_ms(100)).rto;
    assert_eq!(base, ms(200));
    assert_eq!(last_ack_arrival_before(&p, at_ms(300)), at_ms(100));
    assert_eq!(times[0].saturating_duration_since(at_ms(100)), base);
    // RFC 6298 5.5: back off the timer on each expiry: gaps of 2·RTO and 4·RTO.
    assert_eq!(times[1].saturating_duration_since(times[0]), base.saturating_mul(2));
    assert_eq!(times[2].saturating_duration_since(times[1]), base.saturating_mul(4));
    for (k, t) in times.iter().enumerate() {
        let s = client_at(&p, *t);
        assert_eq!(s.rto_count, k as u64 + 1);
        assert_eq!(s.rto, base.saturating_mul(2 << k), "after expiry {} the RTO is {}·base", k + 1, 2 << k);
        assert_eq!(s.cwnd, MSS, "RFC 5681: cwnd = loss window = 1 MSS after a timeout");
    }
    // First timeout: ssthresh = cwnd/2 = 160/2 MSS.
    assert_eq!(client_at(&p, times[0]).ssthresh, 80 * MSS);

    let ci = p.client_info();
    assert_eq!(ci.rto_count, 3);
    assert_eq!(ci.fast_recoveries, 0);
    assert_eq!(ci.segments_lost, 160);
    // Every lost segment retransmitted once after the blackout, plus the 2 extra head retries.
    assert_eq!(ci.segments_retransmitted, 162);
}

#[test]
fn karn_no_rtt_sample_from_retransmitted_segments() {
    let p = blackout();
    let srtt_before = client_at(&p, at_ms(100)).srtt;
    assert_eq!(srtt_before, ms(20));
    // From the first expiry until the RTO recovery ends, every ACK acknowledges only
    // retransmitted segments (the first one took 60 ms: 1500 -> 1510 -> delayed ACK 1550 -> 1560),
    // so SRTT must not move.
    let first_rto = p.client_trace.iter().position(|(_, s)| s.rto_count == 1).unwrap();
    let exit = first_rto + p.client_trace[first_rto..].iter().position(|(_, s)| !s.in_recovery).unwrap();
    let window = &p.client_trace[first_rto..=exit];
    assert!(window.iter().all(|(_, s)| s.srtt == srtt_before), "SRTT changed during RTO recovery");
    assert!(window.iter().all(|(_, s)| s.min_rtt == ms(20)));
    // ...and those ACKs did acknowledge data (the check is not vacuous).
    assert!(window.last().unwrap().1.delivered - window[0].1.delivered >= 160 * MSS);
    assert_eq!(client_at(&p, at_ms(1560)).srtt, ms(20));
}

/// RFC 5681 section 3.1: "when a TCP sender detects segment loss using the retransmission timer
/// and the given segment has already been retransmitted by way of the retransmission timer at
/// least once, the value of ssthresh is held constant." (FreeBSD/xnu call the CC's
/// after_timeout only when t_rxtshift == 1; Linux tcp_enter_loss skips the ssthresh update in
/// Loss state with retransmits.) Here the 2nd and 3rd expiries halve ssthresh again, from
/// 80 MSS down to the 2 MSS floor, so the transfer leaves the blackout in congestion avoidance
/// at 2 segments.
#[test]
fn repeated_rto_holds_ssthresh() {
    let p = blackout();
    for t in [at_ms(300), at_ms(700), at_ms(1500)] {
        assert_eq!(client_at(&p, t).ssthresh, 80 * MSS, "ssthresh after the expiry at {t:?}");
    }
}

/// Karn's algorithm keeps the backed-off RTO until a valid RTT sample arrives (RFC 6298 section 5:
/// RTO "collapses" back only "once a new RTT measurement is obtained"; Linux tcp_ack_update_rtt:
/// "RFC6298: only reset backoff on valid RTT measurement"). Same blackout, and the two
/// retransmissions sent when the first ACK returns at 1560 ms are lost too. That ACK acknowledges
/// only a retransmitted segment (no sample), so the timer must restart with the backed-off RTO
/// (1600 ms) and the next expiry is at 3160 ms. The code resets the backoff on any cumulative
/// ACK: RTO 200 ms, expiry at 1760 ms.
#[test]
fn backed_off_rto_kept_until_a_valid_rtt_sample() {
    let mut p = Pair::new(rfc6298_reno())
        .with_delay(ms(10))
        .with_fault(drop_data_between(Dir::C2S, at_ms(100), at_ms(1500)))
        .with_fault(drop_data_between(Dir::C2S, at_ms(1560), at_us(1_560_001)));
    p.client.write(1000 * MSS);
    p.run_until_delivered(1000 * MSS, at_ms(20_000));
    assert_eq!(p.data(Dir::C2S).filter(|s| s.at == at_ms(1560)).count(), 2);
    assert_eq!(client_at(&p, at_ms(1560)).rto, ms(1600));
    let next = p.retransmissions(Dir::C2S).into_iter().find(|s| s.at > at_ms(1560)).unwrap();
    assert_eq!(next.at, at_ms(3160));
}

#[test]
fn rto_backoff_is_capped_by_max_rto() {
    // A 400 s blackout: expiries 200 ms after the last ACK, then gaps doubling from 400 ms up to
    // 102.4 s; the next doubling (204.8 s) is clamped to max_rto = 120 s.
    let mut p = Pair::new(rfc6298_reno()).with_delay(ms(10)).with_fault(drop_data_between(
        Dir::C2S,
        at_ms(100),
        Instant(400_000_000_000),
    ));
    p.client.write(1000 * MSS);
    p.run_until_delivered(1000 * MSS, Instant(1_000_000_000_000));
    p.drive();
    let head = 1 + 150 * MSS;
    let times: Vec<_> = p.retransmissions(Dir::C2S).iter().filter(|s| s.seg.seq == head).map(|s| s.at).collect();
    let gaps: Vec<u64> = times.windows(2).map(|w| w[1].saturating_duration_since(w[0]).nanos() / 1_000_000).collect();
    assert_eq!(times[0], at_ms(300));
    assert_eq!(gaps[..11], [400, 800, 1600, 3200, 6400, 12800, 25600, 51200, 102400, 120000, 120000]);
    assert_eq!(
        *times.last().unwrap(),
        Instant(444_700_000_000),
        "the first retry after the blackout (400 s) gets through"
    );
    assert_complete(&p, 1000 * MSS);
}

#[test]
fn rto_never_below_min_rto() {
    // RTT 2 ms: SRTT + 4·RTTVAR is a few ms (at most ~50 ms with a 40 ms delayed ACK in a sample),
    // far below Linux's 200 ms floor.
    let n = 21 * MSS;
    let mut p = Pair::new(rfc6298_reno()).with_delay(ms(1)).with_fault(drop_nth_data(Dir::C2S, 21));
    p.client.write(n);
    p.run_until_delivered(n, at_ms(5000));
    p.drive();
    assert_complete(&p, n);
    let sampled: Vec<_> = p.client_trace.iter().filter(|(_, s)| s.srtt > Duration::ZERO).collect();
    assert!(!sampled.is_empty());
    for (t, s) in &sampled {
        assert!(s.srtt + s.rttvar.saturating_mul(4) < ms(200), "at {t:?} the raw RTO is below the floor");
        assert_eq!(s.rto.max(ms(200)), s.rto, "RTO {:?} below min_rto at {t:?}", s.rto);
        if s.rto_count == 0 {
            assert_eq!(s.rto, ms(200), "clamped to min_rto exactly");
        }
    }
    let rtx = p.retransmissions(Dir::C2S);
    assert_eq!(rtx.len(), 1);
    assert_eq!(rtx[0].at.saturating_duration_since(last_ack_arrival_before(&p, rtx[0].at)), ms(200));
}

#[test]
fn ns3_profile_min_rto_is_one_second() {
    let n = 21 * MSS;
    let mut p =
        Pair::new(config("newreno", SubflowConfig::ns3())).with_delay(ms(1)).with_fault(drop_nth_data(Dir::C2S, 21));
    p.client.write(n);
    p.run_until_delivered(n, at_ms(10_000));
    p.drive();
    assert_complete(&p, n);
    let rtx = p.retransmissions(Dir::C2S);
    assert_eq!(rtx.len(), 1);
    assert_eq!(rtx[0].at.saturating_duration_since(last_ack_arrival_before(&p, rtx[0].at)), Duration::from_secs(1));
    assert!(p.client_trace.iter().all(|(_, s)| s.rto >= Duration::from_secs(1)));
}
