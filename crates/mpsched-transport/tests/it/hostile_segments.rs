//! Segments no honest peer sends, found by the fuzzing harness (fuzz/, the `segment` target):
//! a connection drops them without a change of state and without arithmetic overflow.

use crate::util::*;
use mpsched_transport::{Flags, Segment};

/// An established pair, idle; the server's subflow 0 expects subflow sequence number 1.
fn idle_pair() -> Pair {
    let mut p = Pair::new(linux_reno());
    p.drive();
    assert!(p.client_info().established && p.server_info().established);
    p
}

/// Data whose subflow or data sequence range would pass 2^64 (the spaces never wrap) is not
/// acceptable (RFC 9293 3.10.7.4): dropped before its end is computed. Before the fix, the
/// end wrapped (a panic with overflow checks; without them the bytes counted as received, and
/// a DATA_FIN's data sequence number wrapped).
#[test]
fn a_segment_whose_range_passes_2_pow_64_is_dropped() {
    let mut p = idle_pair();
    let base = Segment { flags: Flags::ACK, len: 1000, seq: 1, ack: 1, dsn: 0, wnd: 1 << 20, ..Default::default() };
    let before = (p.server.info(), p.server_info());
    for seg in [
        Segment { dsn: u64::MAX - 100, ..base },
        Segment { seq: u64::MAX - 10, ..base },
        Segment { dsn: u64::MAX - 1, flags: Flags::ACK.with(Flags::DATA_FIN), ..base },
    ] {
        p.server.handle_segment(p.now, 0, &seg);
        assert_eq!((p.server.info(), p.server_info()), before, "{seg:?}");
        assert!(p.server.poll_transmit(p.now).is_none(), "no answer to {seg:?}");
        assert!(p.server.poll_event().is_none(), "no event for {seg:?}");
    }
    // The same segment inside the spaces is taken.
    p.server.handle_segment(p.now, 0, &base);
    assert_eq!(p.server_info().bytes_received, 1000);
}
