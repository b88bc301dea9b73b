//! A loss-free transfer: every byte delivered once and in order, no retransmission, slow start
//! doubling the window each RTT; and the harness's bottleneck serialization.

use crate::util::*;
use mpsched_transport::{Duration, Instant, Segment, SubflowConfig};

const N: u64 = 1_000_000;
/// ceil(1e6 / 1448): 690 full segments and one of 880 bytes.
const SEGS: u64 = 691;

/// Data segments sent in each RTT round `[100·k, 100·(k+1))` ms, k = 1, 2, ...
fn per_round(p: &Pair, rounds: usize) -> Vec<usize> {
    (1..=rounds as u64)
        .map(|k| p.data(Dir::C2S).filter(|s| s.at >= at_ms(100 * k) && s.at < at_ms(100 * (k + 1))).count())
        .collect()
}

fn assert_exactly_once_in_order(p: &Pair, n: u64) {
    let data: Vec<Segment> = p.data(Dir::C2S).map(|s| s.seg).collect();
    let mut next = 0u64;
    for s in &data {
        assert_eq!(s.dsn, next, "data leaves in DSN order without gaps or repeats");
        assert_eq!(s.seq, 1 + s.dsn, "one path: subflow seq = DSN + 1 (the SYN)");
        next += s.len as u64;
    }
    assert_eq!(next, n);
    let si = p.server.info();
    assert_eq!(si.bytes_delivered, n);
    assert_eq!(si.duplicate_bytes, 0);
    assert_eq!(si.ooo_bytes, 0);
    assert_eq!(p.app_read[1], n, "the server application read every byte");
    let ci = p.client_info();
    assert_eq!(ci.segments_retransmitted, 0);
    assert_eq!(ci.bytes_retransmitted, 0);
    assert_eq!(ci.segments_lost, 0);
    assert_eq!(ci.bytes_sent, n);
    assert_eq!(ci.delivered, n);
    assert_eq!((ci.rto_count, ci.fast_recoveries), (0, 0));
    assert_eq!(p.client.info().bytes_sent_new, n);
}

#[test]
fn one_megabyte_delivered_exactly_once_with_slow_start_doubling() {
    let mut p = Pair::new(linux_reno());
    p.client.write(N);
    let done = p.run_until_delivered(N, at_ms(5000));
    p.drive();
    assert_exactly_once_in_order(&p, N);
    assert_eq!(p.client_info().segments_sent, SEGS);
    assert_eq!(p.data(Dir::C2S).last().unwrap().seg.len, (N - 690 * MSS) as u16);

    // Slow start with ABC and delayed ACKs: each ACK covers 2 segments, frees 2 and grows cwnd by
    // 2 MSS, so 4 segments leave per ACK and every round doubles: 10, 20, 40, 80, 160, 320, and the
    // remaining 61 segments in round 7. (All rounds are even: no delayed-ACK timer is involved.)
    assert_eq!(per_round(&p, 7), vec![10, 20, 40, 80, 160, 320, 61]);
    // Each round leaves at a single instant (no rate limit): round k at 100·k ms.
    for k in 1..=7u64 {
        assert!(p
            .data(Dir::C2S)
            .filter(|s| s.at >= at_ms(100 * k) && s.at < at_ms(100 * (k + 1)))
            .all(|s| s.at == at_ms(100 * k)));
    }
    // The last round leaves at 700 ms and arrives 50 ms later.
    assert_eq!(done, at_ms(750));
    // Window at the end of slow start: 10 MSS + every acknowledged byte (ABC, ssthresh = ∞).
    assert_eq!(p.client_info().cwnd, 10 * MSS + N);
}

#[test]
fn slow_start_doubles_without_delayed_ack_too() {
    // Without delayed ACKs each ACK covers one segment: frees 1, grows by 1 MSS -> still 2 per ACK.
    let mut sub = SubflowConfig::linux();
    sub.delayed_ack = false;
    let mut p = Pair::new(config("newreno", sub));
    p.client.write(N);
    p.run_until_delivered(N, at_ms(5000));
    p.drive();
    assert_eq!(per_round(&p, 7), vec![10, 20, 40, 80, 160, 320, 61]);
    assert_eq!(p.pure_acks(Dir::S2C).count() as u64, SEGS, "one ACK per segment");
    assert_exactly_once_in_order(&p, N);
}

#[test]
fn cubic_slow_start_is_the_same() {
    let mut p = Pair::new(config("cubic", SubflowConfig::linux()));
    p.client.write(N);
    let done = p.run_until_delivered(N, at_ms(5000));
    p.drive();
    assert_eq!(per_round(&p, 7), vec![10, 20, 40, 80, 160, 320, 61]);
    assert_eq!(done, at_ms(750));
    assert_exactly_once_in_order(&p, N);
}

#[test]
fn ns3_profile_grows_per_ack() {
    // ns-3 profile: no byte counting, so an ACK of 2 segments grows cwnd by 1 MSS only: round 2
    // gets 5 ACKs × (2 freed + 1 growth) = 15 segments.
    let mut p = Pair::new(config("newreno", SubflowConfig::ns3()));
    p.client.write(N);
    p.run_until_delivered(N, at_ms(20_000));
    p.drive();
    assert_eq!(per_round(&p, 2), vec![10, 15]);
    assert_exactly_once_in_order(&p, N);
}

#[test]
fn bottleneck_serializes_segments() {
    // 10 Mb/s: a full data segment is 1448 + 52 header bytes = 1500 bytes = 12 000 bits = 1.2 ms.
    let mut p = Pair::new(linux_reno()).with_rate(10_000_000);
    p.client.write(N);
    let done = p.run_until_delivered(N, at_ms(10_000));
    p.drive();
    // SYN and SYN-ACK are 52-byte headers: 41.6 µs of serialization each, so the first flight
    // leaves at 100 ms + 2 × 41.6 µs.
    let t0 = p.data(Dir::C2S).next().unwrap().at;
    assert_eq!(t0, Instant(100_083_200));
    let arrivals: Vec<_> = p.data(Dir::C2S).filter(|s| s.at == t0).map(|s| s.arrival.unwrap()).collect();
    assert_eq!(arrivals.len(), 10);
    // Back to back: 1.2 ms apart; the first one needs its own 1.2 ms + 50 ms propagation (plus
    // 41.6 µs if the handshake's pure ACK went onto the wire just before it).
    assert!(
        arrivals.windows(2).all(|w| w[1].saturating_duration_since(w[0]) == Duration::from_micros(1_200)),
        "{arrivals:?}"
    );
    let first = arrivals[0].saturating_duration_since(t0);
    assert!(first == Duration::from_micros(51_200) || first == Duration::from_nanos(51_241_600), "{first:?}");
    // Lower bound: the payload plus headers cannot cross faster than the rate.
    let wire_bits: u64 = p.data(Dir::C2S).map(|s| s.seg.wire_size() as u64 * 8).sum();
    assert!(done.0 >= 100_000_000 + wire_bits * 1_000_000_000 / 10_000_000 + 50_000_000);
    assert_exactly_once_in_order(&p, N);
}

#[test]
fn reverse_direction_transfer() {
    // The server sends, the client receives: same machinery, mirrored.
    let mut p = Pair::new(linux_reno());
    p.server.write(100 * MSS);
    p.drive();
    let ci = p.client.info();
    assert_eq!(ci.bytes_delivered, 100 * MSS);
    assert_eq!(ci.duplicate_bytes, 0);
    assert_eq!(p.server_info().segments_retransmitted, 0);
    // The server can only send after the handshake's last ACK reaches it (150 ms).
    assert_eq!(p.data(Dir::S2C).next().unwrap().at, at_ms(150));
}
