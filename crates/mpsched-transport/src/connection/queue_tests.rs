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

fn wire() -> Wire {
    let cfg =
        ConnConfig { paths: vec![0, 1], scheduler: SchedSpec::parse("upstream").unwrap(), ..ConnConfig::default() };
    Wire::with(&cfg, &[Duration::from_millis(15), Duration::from_millis(30)])
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
    assert!(w.client.queues.is_empty());
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
    assert!(w.client.queues.is_empty());
    let before = w.client_sent.len();
    w.run(at_ms(300));
    let after: Vec<(u64, PathId, u32, bool)> = (w.client_sent[before..].iter())
        .map(|(t, p, s)| (t.0 / 1_000_000, *p, s.len as u32, s.flags.contains(Flags::RST)))
        .collect();
    assert_eq!(after, vec![(31, 0, 0, true), (31, 1, 0, true)]);
}
