//! EdAR's mode switching (edar.txt §IV-A) with the external `Mode` scheduler: in redundant mode a
//! segment is copied only to subflows that have not sent it, the minRTT subflow first; a switch
//! from normal to redundant never makes a subflow re-send its own unacknowledged data.
//!
//! Linux profile (IW 10, MSS 1448), NewReno; lossless paths, so any DSN a subflow sends twice
//! would be a scheduling error, not a loss retransmission.

use std::collections::BTreeMap;

use crate::util::*;
use mpsched_transport::{Decision, Instant};

/// (time, subflow, DSN) of every client data segment sent at or after `from`.
fn data_from(p: &Pair, from: Instant) -> Vec<(Instant, u8, u64)> {
    p.data(Dir::C2S).filter(|s| s.at >= from).map(|s| (s.at, s.seg.sf, s.seg.dsn)).collect()
}

/// Every DSN each subflow sent more than once, with its count.
fn same_subflow_resends(p: &Pair) -> Vec<(u8, u64, usize)> {
    let mut n: BTreeMap<(u8, u64), usize> = BTreeMap::new();
    for s in p.data(Dir::C2S) {
        *n.entry((s.seg.sf, s.seg.dsn)).or_default() += 1;
    }
    n.into_iter().filter(|x| x.1 > 1).map(|((sf, dsn), k)| (sf, dsn, k)).collect()
}

/// Exact segments after one switch. Path 0: 10 ms one-way, path 1: 30 ms, no bottleneck. At
/// 300 ms (both subflows up, windows of 10 segments) 30 segments are written in normal mode:
/// minRTT puts DSN 0..10 MSS on subflow 0 and 10..20 on subflow 1, 10 stay unsent; then the policy
/// switches to redundant. At 320 ms subflow 0's ACKs (one per two segments, delayed ACK) return,
/// each opening two segments of window (slow start): subflow 0 first copies what only subflow 1
/// carried (DSN 10..20, oldest first), then sends the new DSN 20..30, and never re-sends its own
/// DSN 0..10, though they were unacknowledged when the mode switched.
#[test]
fn switch_to_redundant_copies_only_what_the_subflow_has_not_sent() {
    let mut p =
        Pair::new(multipath_config("external-mode", 2, 1 << 20)).with_path(0, ms(10), None).with_path(1, ms(30), None);
    p.drive_until(at_ms(300));
    assert!(p.client_sf(1).established);
    p.client.write(30 * MSS);
    p.flush();
    let normal: Vec<_> = (0..20u64).map(|k| (at_ms(300), if k < 10 { 0 } else { 1 }, k * MSS)).collect();
    assert_eq!(data_from(&p, at_ms(0)), normal);
    p.client.decide(Decision::Mode(1));
    p.flush();
    assert_eq!(data_from(&p, at_ms(0)).len(), 20, "no window space anywhere at 300 ms");
    p.drive_until(at_ms(320));
    let copies: Vec<_> = (10..30u64).map(|k| (at_ms(320), 0, k * MSS)).collect();
    assert_eq!(data_from(&p, at_ms(301)), copies);
    assert_eq!(p.client.info().redundant_bytes, 10 * MSS);
    p.run_until_delivered(30 * MSS, at_ms(1000));
    p.drive();
    assert_eq!(same_subflow_resends(&p), vec![]);
    // Subflow 1 copies nothing: every DSN it has not carried was DATA_ACKed through subflow 0
    // before subflow 1's window opened (at 360 ms).
    assert_eq!(p.client_data_on(1).count(), 10);
    assert_eq!(p.server.info().duplicate_bytes, 10 * MSS);
}

/// Which subflow goes first in redundant mode. Path 0: 30 ms one-way, path 1: 10 ms (the
/// minRTT subflow), no bottleneck, both idle with windows of 10 segments at 300 ms; 3 segments
/// written. EdAR (edar.txt §IV-A) fills the minRTT subflow's window first: subflow 1 sends the
/// new DSN 0..3 MSS, then subflow 0 copies them. Linux `mptcp_redundant.c` goes round-robin
/// (from subflow 0 here): each new segment on one subflow is copied at once on the other.
#[test]
fn redundant_mode_order_min_rtt_first_for_edar_round_robin_for_linux() {
    let order = |sched: &str| {
        let mut p =
            Pair::new(multipath_config(sched, 2, 1 << 20)).with_path(0, ms(30), None).with_path(1, ms(10), None);
        p.client.decide(Decision::Mode(1));
        p.drive_until(at_ms(300));
        assert!(p.client_sf(1).established);
        p.client.write(3 * MSS);
        p.flush();
        data_from(&p, at_ms(0)).into_iter().map(|(t, sf, dsn)| (t.0 / 1_000_000, sf, dsn / MSS)).collect::<Vec<_>>()
    };
    assert_eq!(
        order("external-mode"),
        vec![(300, 1, 0), (300, 1, 1), (300, 1, 2), (300, 0, 0), (300, 0, 1), (300, 0, 2)]
    );
    assert_eq!(order("redundant"), vec![(300, 0, 0), (300, 1, 0), (300, 0, 1), (300, 1, 1), (300, 0, 2), (300, 1, 2)]);
}

/// Transfers `total` bytes over two lossless 20 ms / 10 Mbit/s paths with the external scheduler
/// switched every `interval_ms` through `modes` (cyclically), checking that no copy is made in a
/// normal interval.
fn run_modes(p: &mut Pair, total: u64, modes: &[u8], interval_ms: u64) {
    p.client.decide(Decision::Mode(modes[0]));
    p.client.write(total);
    let (mut t, mut k) = (0, 0);
    while p.server.info().bytes_delivered < total {
        t += interval_ms;
        assert!(t < 20_000, "not done by 20 s");
        let before = p.client.info().redundant_bytes;
        p.drive_until(at_ms(t));
        if modes[k % modes.len()] == 0 {
            assert_eq!(p.client.info().redundant_bytes, before, "a copy in normal mode before {t} ms");
        }
        k += 1;
        p.client.decide(Decision::Mode(modes[k % modes.len()]));
    }
    p.drive();
}

fn equal_paths(sched: &str) -> Pair {
    Pair::new(multipath_config(sched, 2, 4 << 20)).with_path(0, ms(20), Some(10_000_000)).with_path(
        1,
        ms(20),
        Some(10_000_000),
    )
}

/// Normal and redundant alternate every 40 ms (one RTT, EdAR's transmission interval) on two
/// equal lossless 10 Mbit/s paths, 3 MB. No subflow ever sends a DSN twice, so no DSN goes out
/// more than twice (once per subflow); copies are made only in redundant intervals; every byte
/// sent is either its first transmission or a copy counted in `redundant_bytes`, and each copy
/// arrives once more at the receiver. (The harness's queues are unbounded, so the windows grow to
/// the whole transfer and a switch to redundant copies everything in flight: goodput is measured
/// in the simulator's test, with finite queues.)
#[test]
fn alternating_modes_never_resend_on_the_same_subflow() {
    let total = 3_000_000;
    let mut p = equal_paths("external-mode");
    run_modes(&mut p, total, &[0, 1], 40);
    assert_eq!(same_subflow_resends(&p), vec![]);
    let (c, s) = (p.client.info(), p.server.info());
    let sent: u64 = (0..2).map(|i| p.client_sf(i).bytes_sent).sum();
    let retransmitted: u64 = (0..2).map(|i| p.client_sf(i).bytes_retransmitted).sum();
    assert_eq!(retransmitted, 0, "lossless");
    assert!(c.redundant_bytes > 0);
    assert_eq!(sent, total + c.redundant_bytes, "every byte beyond the first copy is counted");
    assert_eq!(s.duplicate_bytes, c.redundant_bytes);
    assert_eq!(s.bytes_delivered, total);
}

/// Linux redundant with a lagging subflow that takes reinjected data (Linux
/// `mptcp_dont_reinject_skb`: an skb is not sent again on a subflow in its `path_mask`). Path 0
/// (10 ms one-way) goes silent at 300 ms; its RTO reinjects its unacknowledged segments on the
/// slower subflow 1 (40 ms), the only one left, many of them ahead of subflow 1's own redundant
/// cursor: catching up, subflow 1 skips those. It sends a DSN twice only when the reinjection
/// itself re-sends a segment it already carried (no other subflow is left: Linux clears the
/// `path_mask` in `get_available_subflow`), so its repeats are covered by `reinjected_bytes`, and
/// every byte sent is the transfer once, a copy, a reinjection or a retransmission.
#[test]
fn redundant_lagging_subflow_does_not_resend_reinjected_data() {
    let mut p = Pair::new(multipath_config("redundant", 2, 4 << 20))
        .with_path(0, ms(10), Some(10_000_000))
        .with_path(1, ms(40), Some(10_000_000))
        .with_fault(blackhole_path(0, at_ms(300), at_ms(1_000_000)));
    let total = 2_000_000;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(20_000));
    p.drive();
    let c = p.client.info();
    assert_eq!(p.client_sf(1).bytes_retransmitted, 0, "path 1 is lossless");
    let repeats = same_subflow_resends(&p).into_iter().filter(|x| x.0 == 1).map(|x| x.2 as u64 - 1).sum::<u64>();
    assert!(repeats > 0 && repeats * MSS <= c.reinjected_bytes, "{repeats} repeats, {} reinjected", c.reinjected_bytes);
    let sent: u64 = (0..2).map(|i| p.client_sf(i).bytes_sent).sum();
    let retransmitted: u64 = (0..2).map(|i| p.client_sf(i).bytes_retransmitted).sum();
    assert_eq!(sent, total + c.redundant_bytes + c.reinjected_bytes + retransmitted);
}
