//! Schedulers inside a two-path connection (pair harness): minRTT, backup subflows, redundant,
//! round-robin and the external (decision-driven) schedulers.
//!
//! Linux profile (IW 10, MSS 1448), NewReno; per-test paths as stated.

use std::collections::BTreeSet;

use crate::util::*;
use mpsched_transport::{ConnConfig, Decision, Event, PathState, Side};

fn dsns_on(p: &Pair, sf: u8, from: mpsched_transport::Instant) -> BTreeSet<u64> {
    p.client_data_on(sf).filter(|s| s.at >= from).map(|s| s.seg.dsn).collect()
}

/// Linux mptcp_redundant.c (v0.90+): once a subflow carries redundant data, it skips a segment only
/// if the segment was already DATA_ACKed when the subflow moved past it. For every segment first
/// sent on subflow `a` after subflow `b` started that `b` never carried: the client had received a
/// DATA_ACK covering it by the time `b` sent its next higher DSN (or `b` never sent a higher one).
/// Returns how many segments `b` carried and skipped.
fn check_redundant_skips(p: &Pair, a: u8, b: u8) -> (usize, usize) {
    let start_b = p.client_data_on(b).next().unwrap().at;
    let on_b: Vec<(mpsched_transport::Instant, u64)> = p.client_data_on(b).map(|s| (s.at, s.seg.dsn)).collect();
    let carried_b: BTreeSet<u64> = on_b.iter().map(|x| x.1).collect();
    let mut skipped = 0;
    for s in p.client_data_on(a).filter(|s| s.at >= start_b) {
        let (d, end) = (s.seg.dsn, s.seg.dsn + s.seg.len as u64);
        if carried_b.contains(&d) {
            continue;
        }
        skipped += 1;
        let Some(&(t_next, _)) = on_b.iter().find(|x| x.1 > d) else { continue };
        let acked_by = p
            .sent(Dir::S2C)
            .filter(|x| x.arrival.is_some_and(|t| t <= t_next))
            .map(|x| x.seg.data_ack)
            .max()
            .unwrap_or(0);
        assert!(acked_by >= end, "subflow {b} skipped DSN {d} at {t_next:?} while DATA_ACK was {acked_by}");
    }
    (carried_b.len(), skipped)
}

/// Two equal paths (20 ms one-way, 10 Mbit/s each): minRTT fills one subflow's window, then uses
/// the other; with the bottleneck queues, srtt balances the two. Each carries more than 35 % of
/// 2 MB, nothing is sent twice, and the transfer beats one path's capacity.
#[test]
fn min_rtt_uses_both_equal_paths() {
    let mut p = Pair::new(multipath_config("minrtt", 2, 4 << 20)).with_path(0, ms(20), Some(10_000_000)).with_path(
        1,
        ms(20),
        Some(10_000_000),
    );
    let total = 2_000_000;
    p.client.write(total);
    let done = p.run_until_delivered(total, at_ms(10_000));
    let (b0, b1) = (p.client_sf(0).bytes_sent, p.client_sf(1).bytes_sent);
    assert_eq!(b0 + b1, total, "no loss, no reinjection: every byte sent once");
    assert!(b0 * 100 > 35 * total && b1 * 100 > 35 * total, "shares {b0} / {b1}");
    // One 10 Mbit/s path needs 1.6 s of payload alone (plus headers and the handshake).
    assert!(done < at_ms(1500), "done at {done:?}");
    assert_eq!(p.app_read[1], total);
}

/// Exact minRTT choice: both subflows idle with a 10-segment window (nothing sent yet), path 0
/// RTT 20 ms, path 1 RTT 100 ms. 15 segments written at 300 ms: the first 10 (DSN 0..10 MSS) go
/// on the faster subflow 0 until its window is full, the other 5 on subflow 1, all at 300 ms.
#[test]
fn min_rtt_fills_fastest_window_first() {
    let mut p = Pair::new(multipath_config("minrtt", 2, 1 << 20)).with_path(0, ms(10), None).with_path(1, ms(50), None);
    p.drive_until(at_ms(300));
    assert!(p.client_sf(1).established);
    p.client.write(15 * MSS);
    p.flush();
    let sent: Vec<_> = p.data(Dir::C2S).map(|s| (s.at, s.seg.sf, s.seg.dsn)).collect();
    let expect: Vec<_> = (0..15u64).map(|k| (at_ms(300), if k < 10 { 0 } else { 1 }, k * MSS)).collect();
    assert_eq!(sent, expect);
}

/// Backup subflow (RFC 8684 §3.3.8 MP_PRIO / MP_JOIN B bit; Linux `get_available_subflow`): path 1
/// is faster (10 ms vs 20 ms one-way) but flagged backup; it is joined yet carries no data while
/// subflow 0 works. At 500 ms path 0's interface goes down (set_path Down, and the wire drops
/// everything from then on): subflow 1 takes over at once, starting with the oldest data not
/// DATA_ACKed (reinjection first), and delivers everything.
#[test]
fn backup_idle_while_active_works_then_takes_over_on_path_down() {
    let mut cfg = multipath_config("minrtt", 2, 1 << 20);
    cfg.backup = vec![false, true];
    let mut p = Pair::new(cfg)
        .with_path(0, ms(20), Some(10_000_000))
        .with_path(1, ms(10), Some(10_000_000))
        .with_fault(blackhole_path(0, at_ms(500), at_ms(1_000_000)));
    let total = 1_000_000;
    p.client.write(total);
    p.drive_until(at_ms(500));
    assert!(p.client_sf(1).established);
    assert_eq!(p.client_data_on(1).count(), 0, "backup carries nothing while the active path works");
    assert!(p.server.info().bytes_delivered > 0);
    let una = p.client.info().data_acked;
    assert!(una < total);

    p.client.set_path(p.now, 0, PathState::Down);
    p.flush();
    let first1 = *p.client_data_on(1).next().expect("the backup takes over at once");
    assert_eq!(first1.at, at_ms(500));
    assert_eq!(first1.seg.dsn, una, "the oldest unacknowledged data first (reinjection)");
    assert!(p.events_of(Side::Client).contains(&(at_ms(500), Event::SubflowDown(0))));

    p.run_until_delivered(total, at_ms(10_000));
    assert_eq!(p.app_read[1], total);
    assert!(p.client.info().reinjected_bytes > 0);
}

/// The same without an interface event: the active path silently drops everything from 500 ms.
/// Subflow 0's RTO marks it potentially failed (SubflowDown(0)); only then the backup carries
/// data, starting at the RTO instant.
#[test]
fn backup_takes_over_after_rto_of_active() {
    let mut cfg = multipath_config("minrtt", 2, 1 << 20);
    cfg.backup = vec![false, true];
    let mut p = Pair::new(cfg)
        .with_path(0, ms(20), Some(10_000_000))
        .with_path(1, ms(10), Some(10_000_000))
        .with_fault(blackhole_path(0, at_ms(500), at_ms(1_000_000)));
    let total = 1_000_000;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(10_000));
    let down: Vec<_> = p.events_of(Side::Client).into_iter().filter(|e| e.1 == Event::SubflowDown(0)).collect();
    assert_eq!(down.len(), 1, "{down:?}");
    let t_rto = down[0].0;
    assert!(t_rto > at_ms(500));
    let first1 = p.client_data_on(1).next().unwrap().at;
    assert_eq!(first1, t_rto, "the backup starts exactly when the active subflow is marked failed");
    assert!(p.client.info().reinjected_bytes > 0);
    assert_eq!(p.app_read[1], total);
}

/// PathState::Backup at run time (MP_PRIO): two equal paths; subflow 1 flagged backup at 300 ms
/// stops taking data (its byte count freezes: no loss, so no retransmissions either), and takes
/// data again once unflagged at 600 ms.
#[test]
fn backup_flag_at_run_time() {
    let mut p = Pair::new(multipath_config("minrtt", 2, 4 << 20)).with_path(0, ms(20), Some(10_000_000)).with_path(
        1,
        ms(20),
        Some(10_000_000),
    );
    let total = 3_000_000;
    p.client.write(total);
    p.drive_until(at_ms(300));
    assert!(p.client_sf(1).bytes_sent > 0);
    p.client.set_path(p.now, 1, PathState::Backup(true));
    let frozen = p.client_sf(1).bytes_sent;
    p.drive_until(at_ms(600));
    assert_eq!(p.client_sf(1).bytes_sent, frozen);
    p.client.set_path(p.now, 1, PathState::Backup(false));
    p.run_until_delivered(total, at_ms(10_000));
    assert!(p.client_sf(1).bytes_sent > frozen);
    assert_eq!(p.app_read[1], total);
}

/// Redundant (Linux mptcp_redundant.c): two equal 10 Mbit/s paths; once subflow 1 is up, every
/// segment goes on both subflows, except what a lagging subflow may skip because it was already
/// DATA_ACKed (checked exactly). No loss, so exactly one copy of each duplicated segment is a
/// duplicate at the receiver: the server's duplicate bytes equal the client's redundant copies, and
/// every byte received is either delivered once or counted as a duplicate.
#[test]
fn redundant_sends_every_segment_on_both_subflows() {
    let mut p = Pair::new(multipath_config("redundant", 2, 4 << 20)).with_path(0, ms(20), Some(10_000_000)).with_path(
        1,
        ms(20),
        Some(10_000_000),
    );
    let total = 500 * MSS;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(5000));
    p.drive();
    let (n1, skipped1) = check_redundant_skips(&p, 0, 1);
    let (n0, skipped0) = check_redundant_skips(&p, 1, 0);
    // Subflow 1 starts late: usable only at its 4th ACK (RFC 8684 §3.2), one more 40 ms RTT after
    // its SYN-ACK, by when subflow 0 has sent ~20 segments and some are DATA_ACKed (skipped).
    assert!(
        n1 >= 460 && n0 >= 490,
        "subflow 0 carried {n0} (skipped {skipped0}), subflow 1 {n1} (skipped {skipped1}) of 500"
    );
    let (c, s) = (p.client.info(), p.server.info());
    assert!(c.redundant_bytes > 0);
    assert_eq!(s.duplicate_bytes, c.redundant_bytes);
    let received: u64 = (0..2).map(|i| p.server.subflow_info(i).bytes_received).sum();
    assert_eq!(received, s.bytes_delivered + s.duplicate_bytes);
    assert_eq!(s.bytes_delivered, total);
    assert_eq!(p.app_read[1], total);
}

/// Redundant with a lagging subflow (20 ms vs 30 ms one-way, 10 Mbit/s): the slow subflow skips
/// data already DATA_ACKed through the fast one, never sends a segment the fast one has not, and
/// the receiver still gets every byte once.
#[test]
fn redundant_lagging_subflow_skips_acked_data() {
    let mut p = Pair::new(multipath_config("redundant", 2, 4 << 20)).with_path(0, ms(20), Some(10_000_000)).with_path(
        1,
        ms(30),
        Some(10_000_000),
    );
    let total = 1_000_000;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(10_000));
    p.drive();
    let (d0, d1) = (dsns_on(&p, 0, at_ms(0)), dsns_on(&p, 1, at_ms(0)));
    assert!(d1.is_subset(&d0));
    let (_, skipped) = check_redundant_skips(&p, 0, 1);
    assert!(skipped > 0, "some acked data skipped on the slow subflow");
    let (c, s) = (p.client.info(), p.server.info());
    assert_eq!(s.duplicate_bytes, c.redundant_bytes);
    assert_eq!(p.app_read[1], total);
}

/// Round-robin on two equal paths: both subflows take turns; shares within 40..60 %.
#[test]
fn round_robin_uses_both() {
    let mut p = Pair::new(multipath_config("roundrobin", 2, 4 << 20)).with_path(0, ms(20), Some(10_000_000)).with_path(
        1,
        ms(20),
        Some(10_000_000),
    );
    let total = 2_000_000;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(10_000));
    let (b0, b1) = (p.client_sf(0).bytes_sent, p.client_sf(1).bytes_sent);
    assert_eq!(b0 + b1, total);
    assert!(b0 * 10 > 4 * total && b1 * 10 > 4 * total, "{b0} / {b1}");
}

/// External Mode (EdAR): redundant while Mode(1), minRTT after Mode(0): no copy is made after
/// the switch back.
#[test]
fn external_mode_switches_redundancy() {
    let mut p = Pair::new(multipath_config("external-mode", 2, 4 << 20))
        .with_path(0, ms(20), Some(10_000_000))
        .with_path(1, ms(20), Some(10_000_000));
    p.client.decide(Decision::Mode(1));
    let total = 2_000_000;
    p.client.write(total);
    p.drive_until(at_ms(400));
    let copies = p.client.info().redundant_bytes;
    assert!(copies > 0);
    p.client.decide(Decision::Mode(0));
    p.run_until_delivered(total, at_ms(10_000));
    assert_eq!(p.client.info().redundant_bytes, copies);
    assert_eq!(p.app_read[1], total);
    assert_eq!(p.server.info().duplicate_bytes, copies);
}

/// External Packet (OLMS): the connection parks on every new segment (DecisionNeeded) and sends
/// nothing new until decide(); the answer is the subflow. Here: subflow 1 once it is up. No
/// decision deadline (a simulator's setting): it waits as long as it takes.
#[test]
fn external_packet_parks_until_decided() {
    let cfg = ConnConfig { decision_timeout: None, ..multipath_config("external-packet", 2, 1 << 20) };
    let mut p = Pair::new(cfg).with_path(0, ms(10), None).with_path(1, ms(30), None);
    let total = 300 * MSS;
    p.client.write(total);
    // Run to the first question and leave it unanswered for a second: no data goes out.
    while !p.client.is_parked() {
        assert!(p.step());
    }
    let asked_at = p.now;
    assert_eq!(asked_at, at_ms(20), "when subflow 0 is established");
    assert!(p.events_of(Side::Client).contains(&(asked_at, Event::DecisionNeeded)));
    p.drive_until(at_ms(1000));
    assert!(p.client.is_parked());
    assert_eq!(p.data(Dir::C2S).count(), 0);
    // Answer: None (= minRTT) until subflow 1 is established, then always subflow 1. Each answer
    // is followed by a flush at the same instant (the driver's duty), which may ask again.
    let mut asks = 0;
    while p.server.info().bytes_delivered < total {
        if p.client.is_parked() {
            asks += 1;
            let d = if p.client_sf(1).established { Some(1) } else { None };
            p.client.decide(Decision::Path(d));
            p.flush();
            continue;
        }
        assert!(p.step());
        assert!(p.now < at_ms(10_000));
    }
    let first = *p.data(Dir::C2S).next().unwrap();
    assert_eq!((first.at, first.seg.sf), (at_ms(1000), 1), "sent when answered; subflow 1 joined meanwhile");
    assert_eq!(p.client_data_on(0).count(), 0, "every segment on subflow 1, as answered");
    assert!(asks as u64 >= total / MSS, "one question per segment: {asks}");
    assert!(p.now < at_ms(1500), "answered at once, the transfer is not slowed down: {:?}", p.now);
    assert_eq!(p.app_read[1], total);
}

/// A real-time driver's policy that never answers: after `decision_timeout` the connection takes
/// the default (minRTT) for the segment it asked about, counts it, and asks again for the next.
#[test]
fn unanswered_decision_defaults_after_the_deadline() {
    let cfg = ConnConfig { decision_timeout: Some(ms(5)), ..multipath_config("external-packet", 2, 1 << 20) };
    let mut p = Pair::new(cfg).with_path(0, ms(10), None).with_path(1, ms(30), None);
    p.client.write(3 * MSS);
    while !p.client.is_parked() {
        assert!(p.step());
    }
    assert_eq!(p.now, at_ms(20), "asked when subflow 0 is established");
    assert_eq!(p.client.poll_timeout(), Some(at_ms(25)), "the deadline is a timer like any other");
    p.drive_until(at_ms(24));
    assert_eq!(p.data(Dir::C2S).count(), 0, "nothing before the deadline");
    p.drive_until(at_ms(35));
    // One segment per deadline: at 25, 30 and 35 ms, each on subflow 0 (minRTT; subflow 1 is
    // still joining), each after its own 5 ms wait.
    let sent: Vec<_> = p.data(Dir::C2S).map(|s| (s.at, s.seg.sf, s.seg.dsn)).collect();
    assert_eq!(sent, vec![(at_ms(25), 0, 0), (at_ms(30), 0, MSS), (at_ms(35), 0, 2 * MSS)]);
    assert_eq!(p.client.info().decisions_defaulted, 3);
    assert!(!p.client.is_parked(), "nothing more to ask about");
}

/// External Weights (MPTCP-RL, PDAA3C) 3:1 on two equal paths with plenty of window: the bytes
/// split 75 / 25 % to within one segment.
#[test]
fn external_weights_split_bytes() {
    let mut p = Pair::new(multipath_config("external-weights", 2, 8 << 20)).with_path(0, ms(20), None).with_path(
        1,
        ms(20),
        None,
    );
    let mut w = [0.0f32; 8];
    w[0] = 3.0;
    w[1] = 1.0;
    p.client.decide(Decision::Weights(w));
    p.drive_until(at_ms(200));
    assert!(p.client_sf(1).established);
    let total = 4000 * MSS;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(20_000));
    let (b0, b1) = (p.client_sf(0).bytes_sent, p.client_sf(1).bytes_sent);
    assert_eq!(b0 + b1, total);
    assert!((b0 as i64 - (3 * total / 4) as i64).abs() <= MSS as i64, "{b0} / {b1}");
}
