//! Per-subflow send queues (connection/queue.rs) under the upstream scheduler on two paths,
//! RTT 30 ms (path 0) and 60 ms (path 1), no loss, no bottleneck, the `linux` profile's
//! subflows (CUBIC, 6 MB buffers): which DSNs wait in which subflow's queue and when they leave.
//!
//! Common to the tests: path 0 handshakes at 0-30 ms. At 30 ms the scheduler has only subflow 0
//! and keeps giving it segments while its send buffer has room (`sk_stream_memory_free`: 87,040
//! bytes for the initial window, 61.1 segments of 1,424 bytes): 62 segments (DSN 0-61), 10 of
//! which leave (the initial window) and 52 wait in its queue.

use super::tests::{at_ms, runs, Wire, MSS};
use super::*;
use crate::segment::Flags;

fn wire_config() -> ConnConfig {
    ConnConfig { paths: vec![0, 1], scheduler: SchedSpec::parse("upstream").unwrap(), ..ConnConfig::default() }
}

fn wire() -> Wire {
    Wire::with(&wire_config(), &[Duration::from_millis(15), Duration::from_millis(30)])
}

/// Segments waiting in each subflow's queue.
fn queued(w: &Wire) -> [u64; 2] {
    [w.client.queues.bytes(0) / MSS, w.client.queues.bytes(1) / MSS]
}

/// 1000 segments. Subflow 0's queued segments leave in DSN order as its ACKs open its window:
/// 10-29 at 60 ms (window 20), 30-69 at 90 ms (40); meanwhile it stays congestion-window
/// limited, so its send buffer does not grow, and the scheduler tops it up to 62 segments
/// (queue 42, then 22). At 120 ms its queue runs dry within the ACK train: no longer window
/// limited, its send buffer grows (`tcp_sndbuf_expand` with the current window) and it takes
/// DSNs up to 448. Subflow 1 becomes usable at 150 ms (its join's third ACK acknowledged): the
/// lowest linger time (nothing queued), so it gets a 64 KB burst, 47 segments (46 × 1,424 =
/// 65,504 < 65,536) at DSN 449-495, of which its initial window (449-458) leaves at once and 37
/// wait behind. They leave on subflow 1, not on subflow 0 (which sends 310-448, then 496-676 at
/// 180 ms), when its window opens at 210 ms (20 segments: 459-478; 17 still wait).
#[test]
fn queued_segments_leave_on_their_subflow_as_its_window_opens() {
    let mut w = wire();
    assert_eq!(w.client.write(1000 * MSS), 1000 * MSS);
    let mut seen = Vec::new();
    for t in [30, 60, 90, 150, 210] {
        w.run(at_ms(t));
        seen.push((t, w.client.shared.snd_next_dsn / MSS, queued(&w)));
    }
    let expect = [(30, 62, [52, 0]), (60, 72, [42, 0]), (90, 92, [22, 0]), (150, 576, [219, 37]), (210, 1000, [0, 17])];
    assert_eq!(seen, expect);
    assert_eq!(
        runs(&w),
        vec![
            (30, 0, 0, 10),
            (60, 0, 10, 20),
            (90, 0, 30, 40),
            (120, 0, 70, 80),
            (150, 1, 449, 10),
            (150, 0, 150, 160),
            (180, 0, 310, 139),
            (180, 0, 496, 181),
            (210, 1, 459, 20),
            (210, 0, 677, 323),
        ]
    );
    w.run(at_ms(1000));
    assert!(w.client.queued == 0);
    assert_eq!((w.server.info().bytes_delivered, w.server.info().duplicate_bytes), (1000 * MSS, 0));
    assert_eq!(w.client.info().reinjected_bytes, 0);
}

/// As above, path 1 goes down at 151 ms: its 37 queued segments go to the reinjection queue
/// with the 10 in flight, in DSN order (449-495), and leave on subflow 0 at 180 ms, after what
/// waited in subflow 0's own queue (310-448, 496-575: subflow-level output comes first). The
/// 10 sent on path 1 before it went down still arrive (this wire does not drop them).
#[test]
fn a_subflow_that_goes_down_gives_its_queue_to_reinjection() {
    let mut w = wire();
    w.client.write(1000 * MSS);
    w.run(at_ms(151));
    assert_eq!((queued(&w), w.client.reinject.len()), ([219, 37], 0));
    w.client.set_path(at_ms(151), 1, PathState::Down);
    assert_eq!(queued(&w), [219, 0]);
    let reinject: Vec<u64> = w.client.reinject.iter().map(|r| r.0 / MSS).collect();
    assert_eq!(reinject, (449..496).collect::<Vec<u64>>());
    w.run(at_ms(1000));
    assert_eq!(runs(&w)[6..10], [(180, 0, 310, 139), (180, 0, 496, 80), (180, 0, 449, 47), (180, 0, 576, 54)]);
    assert_eq!(w.client.info().reinjected_bytes, 47 * MSS);
    assert_eq!((w.server.info().bytes_delivered, w.server.info().duplicate_bytes), (1000 * MSS, 10 * MSS));
}

/// 70 segments, then close. Every DSN is taken by 60 ms (62 at 30 ms, 8 at 60 ms), but 40
/// still wait in subflow 0's queue until its window opens at 90 ms: the DATA_FIN (DSN 70)
/// leaves then, after them, not at 60 ms.
#[test]
fn data_fin_waits_for_the_queues() {
    let mut w = wire();
    w.client.write(70 * MSS);
    w.client.close();
    w.run(at_ms(60));
    assert_eq!((w.client.shared.snd_next_dsn / MSS, queued(&w)), (70, [40, 0]));
    w.run(at_ms(300));
    assert_eq!(runs(&w), vec![(30, 0, 0, 10), (60, 0, 10, 20), (90, 0, 30, 40)]);
    let fins: Vec<(u64, PathId, u64)> = (w.client_sent.iter())
        .filter(|(_, _, s)| s.flags.contains(Flags::DATA_FIN))
        .map(|(t, p, s)| (t.0 / 1_000_000, *p, s.dsn / MSS))
        .collect();
    assert_eq!(fins.first(), Some(&(90, 0, 70)));
    let last_data = w.client_sent.iter().rposition(|(_, _, s)| s.len > 0).unwrap();
    let first_fin = w.client_sent.iter().position(|(_, _, s)| s.flags.contains(Flags::DATA_FIN)).unwrap();
    assert!(first_fin > last_data);
    assert_eq!(w.server.info().bytes_delivered, 70 * MSS);
}

/// An abort at 31 ms, 52 segments queued: the queues are emptied, and nothing but the two
/// resets leaves afterwards.
#[test]
fn abort_clears_the_queues() {
    let mut w = wire();
    w.client.write(1000 * MSS);
    w.run(at_ms(31));
    assert_eq!(queued(&w), [52, 0]);
    w.client.abort(at_ms(31));
    assert!(w.client.queued == 0);
    let before = w.client_sent.len();
    w.run(at_ms(300));
    let after: Vec<(u64, PathId, u32, bool)> = (w.client_sent[before..].iter())
        .map(|(t, p, s)| (t.0 / 1_000_000, *p, s.len as u32, s.flags.contains(Flags::RST)))
        .collect();
    assert_eq!(after, vec![(31, 0, 0, true), (31, 1, 0, true)]);
}

/// The client's data segments: (ms, path, DSN, length).
fn data_segments(w: &Wire) -> Vec<(u64, PathId, u64, u16)> {
    (w.client_sent.iter().filter(|(_, _, s)| s.len > 0)).map(|(t, p, s)| (t.0 / 1_000_000, *p, s.dsn, s.len)).collect()
}

/// A peer window of 10,112 bytes (a 16 KB buffer's payload share, 158/256): the data queued at
/// its edge is cut to it (`mptcp_check_allowed_size` in `mptcp_sendmsg_frag`), 7 whole segments
/// and 144 bytes at 30 ms. The receiver reads at once, so every round trip the edge moves by
/// 10,112 bytes and the same 7 + 144 leave; the short segment is sent at once each time (the
/// last short one is acknowledged by then: Minshall's rule lets it go).
#[test]
fn the_segment_at_the_peers_window_edge_is_cut_to_it() {
    let cfg = ConnConfig { rcv_buf: 16_384, ..wire_config() };
    let mut w = Wire::with(&cfg, &[Duration::from_millis(15), Duration::from_millis(30)]);
    w.client.write(100 * MSS);
    w.run(at_ms(100));
    let round = |t: u64, base: u64| {
        let mut v: Vec<(u64, PathId, u64, u16)> = (0..7).map(|k| (t, 0, base + k * MSS, MSS as u16)).collect();
        v.push((t, 0, base + 7 * MSS, 144));
        v
    };
    assert_eq!(data_segments(&w), [round(30, 0), round(60, 10_112), round(90, 20_224)].concat());
}

/// Nagle's algorithm with Minshall's rule on a subflow (`tcp_nagle_check`,
/// `tcp_minshall_check`): 712 bytes leave at 30 ms (nothing in flight); 712 more written at
/// 31 ms wait, short and the last queued, while the first short segment is unacknowledged. The
/// receiver delays its ACK of that lone segment (arrival 45 ms, ACK 85 ms), so they leave when
/// it arrives, at 100 ms.
#[test]
fn a_short_segment_waits_while_the_last_short_one_is_unacknowledged() {
    let mut w = wire();
    w.client.write(712);
    w.run(at_ms(31));
    w.client.write(712);
    w.run(at_ms(99));
    assert_eq!(w.client.queues.bytes(0), 712);
    w.run(at_ms(400));
    assert_eq!(data_segments(&w), vec![(30, 0, 0, 712), (100, 0, 712, 712)]);
}

/// As above, and 712 more at 32 ms: they continue the waiting segment's DSNs, so they fill it up
/// (`mptcp_sendmsg_frag` copies into the unsent tail while `mptcp_skb_can_collapse_to`), and a
/// whole segment is no longer held: it leaves at once.
#[test]
fn data_continuing_a_waiting_short_segment_fills_it_up() {
    let mut w = wire();
    w.client.write(712);
    w.run(at_ms(31));
    w.client.write(712);
    w.run(at_ms(32));
    w.client.write(712);
    w.run(at_ms(400));
    assert_eq!(data_segments(&w), vec![(30, 0, 0, 712), (32, 0, 712, 1424)]);
}
