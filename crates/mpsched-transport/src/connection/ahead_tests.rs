//! Send-ahead reservations (connection/ahead.rs) under STMS on two paths, RTT 30 ms (path 0)
//! and 60 ms (path 1), no loss, no bottleneck: which DSNs go on which subflow at which time.

use super::tests::{at_ms, runs, Wire, MSS};
use super::*;

fn wire(sched: &str) -> Wire {
    let cfg = ConnConfig { paths: vec![0, 1], scheduler: SchedSpec::parse(sched).unwrap(), ..ConnConfig::default() };
    Wire::with(&cfg, &[Duration::from_millis(15), Duration::from_millis(30)])
}

fn adjustment(w: &Wire) -> i64 {
    let crate::sched::AnySched::Stms(s) = &w.client.sched else { panic!("not stms") };
    s.adjustment()
}

/// 1000 segments. Path 0 (the fast one) handshakes at 0-30 ms and doubles its window every
/// 30 ms (10, 20, 40, 80 segments). Path 1 joins and becomes usable at 150 ms, while path 0
/// is busy with 80 segments in flight: the gap is cwnd_f · (60 − 30) / (2 · 30) = 40
/// segments, so path 1 sends its 10-segment window at DSN segments 190-199 and 150-189 are
/// reserved for path 0, which sends them first when its ACKs arrive (also at 150 ms), then new
/// data from 200. They reach the receiver at 165 ms, before path 1's segments (180 ms). At
/// 210 ms path 1's window (20) opens again while path 0 has 320 segments in flight: gap 160
/// from path 0's next DSN (640) = 800; path 0 then sends 640-799 and new data from 820.
///
/// ACK-driven correction: the ACKs of segments 190-197 carry DATA_ACKs just past them (in-order
/// arrival), those of 198-199 a DATA_ACK of 320 (fast-path data 200-319 waited for them): +2
/// MSS, judged after the 210 ms ahead segments went out. Under minRTT path 1 takes the next
/// DSN instead (150-159 at 150 ms, 640-659 at 210 ms).
#[test]
fn stms_sends_ahead_and_reserves_the_gap_for_the_fast_path() {
    let mut w = wire("stms");
    assert_eq!(w.client.write(1000 * MSS), 1000 * MSS);
    w.run(at_ms(209));
    assert_eq!(adjustment(&w), 0);
    w.run(at_ms(400));
    assert_eq!(
        runs(&w),
        vec![
            (30, 0, 0, 10),
            (60, 0, 10, 20),
            (90, 0, 30, 40),
            (120, 0, 70, 80),
            (150, 1, 190, 10),
            (150, 0, 150, 40),
            (150, 0, 200, 120),
            (180, 0, 320, 320),
            (210, 1, 800, 20),
            (210, 0, 640, 160),
            (210, 0, 820, 180),
        ]
    );
    assert_eq!(adjustment(&w), 2 * MSS as i64);
    assert!(w.client.reserved.is_empty());
    assert_eq!(w.server.info().bytes_delivered, 1000 * MSS);
    assert_eq!(w.server.info().duplicate_bytes, 0);

    let mut m = wire("minrtt");
    m.client.write(1000 * MSS);
    m.run(at_ms(400));
    assert_eq!(
        runs(&m),
        vec![
            (30, 0, 0, 10),
            (60, 0, 10, 20),
            (90, 0, 30, 40),
            (120, 0, 70, 80),
            (150, 1, 150, 10),
            (150, 0, 160, 160),
            (180, 0, 320, 320),
            (210, 1, 640, 20),
            (210, 0, 660, 340),
        ]
    );
}

/// `adapt=false`: the delay-model gap alone, no correction.
#[test]
fn stms_without_adaptation_keeps_the_model_gap() {
    let mut w = wire("stms:adapt=false");
    w.client.write(1000 * MSS);
    w.run(at_ms(400));
    assert_eq!(adjustment(&w), 0);
    assert_eq!(runs(&w)[8], (210, 1, 800, 20));
}

/// The application wrote less than the gap: the segment sent ahead is the last whole one
/// written, and the DATA_FIN waits until the reserved bytes are sent. 170 segments: at 150 ms
/// path 1 could skip to 190, but only 150-169 exist; it sends 169 and reserves 150-168.
#[test]
fn gap_is_shortened_to_the_written_data_and_fin_waits_for_reserved() {
    let mut w = wire("stms");
    w.client.write(170 * MSS);
    w.client.close();
    w.run(at_ms(400));
    assert_eq!(runs(&w)[4..], [(150, 1, 169, 1), (150, 0, 150, 19)]);
    assert!(w.client.reserved.is_empty());
    assert_eq!(w.server.info().bytes_delivered, 170 * MSS);
}
