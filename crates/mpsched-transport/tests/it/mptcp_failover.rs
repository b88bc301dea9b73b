//! Subflow failure and recovery in a two-path connection: RTO => potentially failed (Linux
//! `tp->pf`, tested by `mptcp_is_def_unavailable`) and reinjection of its data on the other
//! subflow (Linux `mptcp_reinject_data`), interface down/up events
//! (`set_path`), DATA_ACK releasing connection-level data, exactly-once delivery.
//!
//! Two equal paths (20 ms one-way, 10 Mbit/s each) unless stated; linux profile, NewReno, minRTT,
//! 1 MiB shared receive buffer.

use std::collections::BTreeMap;

use crate::util::*;
use mpsched_transport::{Event, Instant, PathState, Side};

fn equal_paths(sched: &str) -> Pair {
    Pair::new(multipath_config(sched, 2, 1 << 20)).with_path(0, ms(20), Some(10_000_000)).with_path(
        1,
        ms(20),
        Some(10_000_000),
    )
}

/// DSN -> first subflow that sent it.
fn first_carrier(p: &Pair) -> BTreeMap<u64, u8> {
    let mut m = BTreeMap::new();
    for s in p.data(Dir::C2S) {
        m.entry(s.seg.dsn).or_insert(s.seg.sf);
    }
    m
}

/// The highest DSN end sent by the client before `t`.
fn snd_next_before(p: &Pair, t: Instant) -> u64 {
    p.data(Dir::C2S).filter(|s| s.at < t).map(|s| s.seg.dsn + s.seg.len as u64).max().unwrap_or(0)
}

fn down_events(p: &Pair, sf: u8) -> Vec<Instant> {
    p.events_of(Side::Client).into_iter().filter(|e| e.1 == Event::SubflowDown(sf)).map(|e| e.0).collect()
}

/// Path 1 drops everything (both directions) during [300, 1500) ms. Subflow 1's RTO marks it
/// potentially failed: one SubflowDown(1) event; its unacknowledged data is reinjected on subflow
/// 0 (segments first sent on subflow 1 are resent on subflow 0); no new data goes on subflow 1
/// while it is failed; after the outage an ACK clears the state and subflow 1 carries new data
/// again. Every byte is delivered to the application exactly once (duplicates at the data level
/// are counted, not delivered).
#[test]
fn rto_marks_subflow_failed_and_reinjects_its_data() {
    let mut p = equal_paths("minrtt").with_fault(blackhole_path(1, at_ms(300), at_ms(1500)));
    let total = 4_000_000;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(20_000));
    p.drive();

    let downs = down_events(&p, 1);
    assert_eq!(downs.len(), 1, "{downs:?}");
    let t_down = downs[0];
    assert!(t_down > at_ms(300) && t_down < at_ms(1500), "{t_down:?}");
    assert!(p.client_sf(1).rto_count >= 1);

    let c = p.client.info();
    assert!(c.reinjected_bytes > 0);
    let first = first_carrier(&p);
    let reinjected_on_0: u64 =
        p.client_data_on(0).filter(|s| s.at >= t_down && first[&s.seg.dsn] == 1).map(|s| s.seg.len as u64).sum();
    assert!(reinjected_on_0 >= c.reinjected_bytes, "{reinjected_on_0} vs {}", c.reinjected_bytes);

    // While potentially failed (and the path is black), subflow 1 only retransmits.
    let hi = snd_next_before(&p, t_down);
    for s in p.client_data_on(1).filter(|s| s.at >= t_down && s.at < at_ms(1500)) {
        assert!(s.seg.dsn < hi, "new data on a failed subflow: {s:?}");
    }
    // After the outage, subflow 1 is used again for new data.
    let hi_1500 = snd_next_before(&p, at_ms(1500));
    assert!(p.client_data_on(1).any(|s| s.seg.dsn >= hi_1500), "subflow 1 never recovered");

    let s = p.server.info();
    assert_eq!(s.bytes_delivered, total);
    assert_eq!(p.app_read[1], total, "each byte read exactly once");
    assert_eq!(c.data_acked, total);
}

/// Interface down at 300 ms on path 1 (set_path Down; the wire also drops everything until
/// 800 ms), up again at 800 ms. SubflowDown(1) is reported at once; from then on subflow 1 takes
/// no new data until it is up again; its in-flight data is reinjected on subflow 0; after Up it
/// carries new data again and the transfer completes with every byte delivered once.
#[test]
fn set_path_down_then_up() {
    let mut p = equal_paths("minrtt").with_fault(blackhole_path(1, at_ms(300), at_ms(800)));
    let total = 3_000_000;
    p.client.write(total);
    p.drive_until(at_ms(300));
    assert!(p.client_sf(1).outstanding > 0, "subflow 1 has data in flight when its path goes down");
    p.client.set_path(p.now, 1, PathState::Down);
    p.flush();
    assert_eq!(down_events(&p, 1).first(), Some(&at_ms(300)));
    let hi = snd_next_before(&p, at_ms(300) + ms(1));
    p.drive_until(at_ms(800));
    for s in p.client_data_on(1).filter(|s| s.at >= at_ms(300)) {
        assert!(s.seg.dsn < hi, "new data on a down path: {s:?}");
    }
    assert!(p.client.info().reinjected_bytes > 0);
    p.client.set_path(p.now, 1, PathState::Up);
    p.run_until_delivered(total, at_ms(20_000));
    p.drive();
    let hi_800 = snd_next_before(&p, at_ms(800));
    assert!(p.client_data_on(1).any(|s| s.seg.dsn >= hi_800), "subflow 1 carries new data after Up");
    assert_eq!(p.app_read[1], total);
    assert_eq!(p.server.info().bytes_delivered, total);
}

/// One outage, one SubflowDown: set_path(Down) reports it; the RTOs that follow on the down path
/// must not report it again, and set_path(Up) clears the potentially-failed state (as Linux
/// clears `tp->pf` when the interface comes back up) instead of marking it failed again.
/// (Formerly: SubflowDown(1) at 300 ms (Down), again at the first RTO while down (~518 ms), and
/// again at 800 ms: Up arms the RTO timer for `now`, the timer fires, and the connection treated
/// it as a new RTO, set pf again and reinjected the subflow's data a second time.)
#[test]
fn one_subflow_down_event_per_outage() {
    let mut p = equal_paths("minrtt").with_fault(blackhole_path(1, at_ms(300), at_ms(800)));
    let total = 3_000_000;
    p.client.write(total);
    p.drive_until(at_ms(300));
    p.client.set_path(p.now, 1, PathState::Down);
    p.drive_until(at_ms(800));
    let reinjected_at_up = p.client.info().reinjected_bytes;
    p.client.set_path(p.now, 1, PathState::Up);
    p.flush();
    p.run_until_delivered(total, at_ms(20_000));
    assert_eq!(down_events(&p, 1), vec![at_ms(300)]);
    // Nothing more to reinject after Up than what was queued while down (nothing new failed).
    let extra = p.client.info().reinjected_bytes - reinjected_at_up;
    assert!(extra <= 10 * MSS, "{extra} bytes reinjected after Up");
}

/// DATA_ACK releases connection-level data: redundant scheduling over a fast path (10 ms) and a
/// slow one (100 ms, both 5 Mbit/s). Path 1 goes black at 400 ms; by the RTO of subflow 1 every
/// segment it still holds was DATA_ACKed through subflow 0, so nothing is reinjected although
/// the subflow had unacknowledged segments. The transfer completes on subflow 0.
#[test]
fn data_acked_data_is_not_reinjected() {
    let mut p = Pair::new(multipath_config("redundant", 2, 4 << 20))
        .with_path(0, ms(10), Some(5_000_000))
        .with_path(1, ms(100), Some(5_000_000))
        .with_fault(blackhole_path(1, at_ms(400), at_ms(1_000_000)));
    let total = 1_000_000;
    p.client.write(total);
    // Run to the RTO of subflow 1.
    while down_events(&p, 1).is_empty() {
        assert!(p.step());
        assert!(p.now < at_ms(5000));
    }
    let t_down = p.now;
    assert!(t_down > at_ms(400));
    assert!(p.client_sf(1).outstanding > 0, "subflow 1 holds unacknowledged segments");
    let c = p.client.info();
    assert!(c.data_acked < total, "transfer still running at the RTO ({c:?})");
    p.run_until_delivered(total, at_ms(20_000));
    p.drive();
    assert_eq!(p.client.info().reinjected_bytes, 0);
    assert_eq!(p.client.info().data_acked, total);
    assert_eq!(p.app_read[1], total);
}

/// One DATA_ACK space shared by all subflows: every ACK from the receiver, on either path,
/// carries the connection-level cumulative DATA_ACK (non-decreasing in sending order), so ACKs
/// on path 1 also acknowledge bytes that travelled on path 0. (Path 0: 10 ms, path 1: 50 ms,
/// 10 Mbit/s each.)
#[test]
fn data_ack_is_connection_level_on_every_subflow() {
    let mut p = Pair::new(multipath_config("minrtt", 2, 1 << 20)).with_path(0, ms(10), Some(10_000_000)).with_path(
        1,
        ms(50),
        Some(10_000_000),
    );
    let total = 1000 * MSS;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(5000));
    p.drive();
    let acks: Vec<_> = p.sent(Dir::S2C).filter(|s| !s.is_syn()).copied().collect();
    assert!(acks.windows(2).all(|w| w[0].seg.data_ack <= w[1].seg.data_ack));
    let on1 = acks.iter().rfind(|s| s.path == 1).unwrap();
    let via1: u64 = p.client_data_on(1).map(|s| s.seg.len as u64).sum();
    assert!(via1 > 0);
    assert!(
        on1.seg.data_ack > via1,
        "an ACK on path 1 DATA_ACKs {} > all {via1} bytes path 1 ever carried",
        on1.seg.data_ack
    );
    assert_eq!(p.client.info().data_acked, total);
}
