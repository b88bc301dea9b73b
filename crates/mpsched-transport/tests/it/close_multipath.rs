//! Closing and resetting a two-path connection: resets on one subflow (RFC 5961 3.2 exact match,
//! challenge ACK, RFC 8684 3.5 MP_FASTCLOSE key check), closing while one path is down, and byte
//! conservation through close under random loss in both directions.
//!
//! Paths: 0 = 25 ms one-way, 1 = 40 ms one-way, no rate limit, linux profile, NewReno, minRTT,
//! 1 MiB shared receive buffer.

use crate::util::*;
use mpsched_transport::{CloseReason, ConnState, Event, Flags, PathState, Segment, Side};

fn two_paths() -> Pair {
    Pair::new(multipath_config("minrtt", 2, 1 << 20)).with_path(0, ms(25), None).with_path(1, ms(40), None)
}

/// A RST from the client on subflow 1, crafted at a given sequence number, as the server sees it.
fn rst(seq: u64, flags: Flags, mp_key: u64) -> Segment {
    Segment { sf: 1, flags: Flags::ACK.with(Flags::RST).with(flags), seq, mp_key, ..Segment::default() }
}

/// In the middle of a transfer the server gets resets on subflow 1. Inside the window but not
/// at the next expected sequence number: a challenge ACK on that subflow and nothing else
/// (RFC 5961 3.2). An MP_FASTCLOSE with a key that is not the server's: ignored. At the exact
/// sequence number: subflow 1 is gone (`SubflowDown(1)`), the connection lives on over subflow 0.
#[test]
fn resets_on_one_subflow() {
    let mut p = two_paths();
    p.client.write(400 * MSS);
    p.drive_until(at_ms(300));
    let next = p.server.subflow_info(1).bytes_received + 1;
    assert!(next > 1, "subflow 1 carried data by now");
    let before = p.log.len();

    p.server.handle_segment(p.now, 1, &rst(next + 10, Flags(0), 0));
    p.flush();
    let answers: Vec<_> = p.log[before..].iter().filter(|s| s.dir == Dir::S2C).copied().collect();
    assert_eq!(answers.len(), 1, "one challenge ACK");
    assert_eq!((answers[0].path, answers[0].seg.ack, answers[0].seg.flags), (1, next, Flags::ACK));

    p.server.handle_segment(p.now, 1, &rst(next, Flags::MP_FASTCLOSE, SERVER_KEY + 1));
    assert_eq!(p.server.state(), ConnState::Established, "a fast close needs the receiver's key");

    p.server.handle_segment(p.now, 1, &rst(next, Flags(0), 0));
    p.flush();
    assert_eq!(p.server.subflow_info(1).state, mpsched_transport::SubflowState::Closed);
    assert!(p.events_of(Side::Server).contains(&(p.now, Event::SubflowDown(1))));
    assert_eq!(p.server.state(), ConnState::Established, "subflow 0 still carries the connection");
}

/// Path 1 goes down (both ends told, and it loses what is sent on it afterwards) while subflow 1
/// has data in flight; the client closes. The data is reinjected on path 0 and the close
/// completes over path 0 alone: no data and no FIN on path 1 after it went down, subflow 1 is
/// dropped without a FIN exchange, and both ends close gracefully.
#[test]
fn close_with_one_path_down() {
    let mut p = two_paths();
    let total = 200 * MSS;
    p.client.write(total);
    p.drive_until(at_ms(200));
    while p.client.subflow_info(1).outstanding == 0 {
        assert!(p.step());
    }
    let down_at = p.now;
    p.faults.push(blackhole_path(1, down_at + ms(1), at_ms(10_000_000)));
    for c in [&mut p.client, &mut p.server] {
        c.set_path(down_at, 1, PathState::Down);
    }
    p.client.close();
    run_until_closed(&mut p);
    // Only ACKs of segments already in flight may still be tried on path 1; no data, no FIN.
    let late: Vec<_> = p
        .log
        .iter()
        .filter(|s| s.path == 1 && s.at > down_at && (s.is_data() || s.seg.flags.contains(Flags::FIN)))
        .collect();
    assert!(late.is_empty(), "no data or FIN on path 1 after it went down: {late:?}");
    assert_eq!(p.app_read[1], total);
    assert!(p.client.info().reinjected_bytes > 0, "subflow 1's data went over path 0");
    for side in [Side::Client, Side::Server] {
        assert!(p.events_of(side).iter().any(|e| e.1 == Event::Closed(CloseReason::Graceful)), "{side:?}");
    }
}

/// Steps until both ends are closed or nothing is pending.
fn run_until_closed(p: &mut Pair) {
    while p.client.state() != ConnState::Closed || p.server.state() != ConnState::Closed {
        if p.has_event_of(Side::Server, Event::PeerClosed) && p.server.state() == ConnState::CloseWait {
            p.server.close();
        }
        if !p.step() {
            break;
        }
    }
}

/// splitmix64: the faults' own deterministic generator.
fn next(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Byte conservation through close: 24 fixed seeds, 3 % of all segments lost in both directions
/// (SYNs, data, ACKs, DATA_FINs, FINs alike) on two paths; each end writes its own amount and
/// closes (the client at once, the server when it sees the client's DATA_FIN). Every run ends
/// with both ends closed gracefully, each application read exactly what the other wrote, and each
/// sender's DATA_ACK covers exactly its data.
#[test]
fn bytes_are_conserved_through_close_under_loss() {
    let mut lost_closing = 0;
    for seed in 1..=24u64 {
        let mut rng = seed;
        let mut p = two_paths().with_fault(Box::new(move |_| next(&mut rng) % 100 < 3));
        let up = (next(&mut { seed }) % 300 + 1) * 1000;
        let down = (next(&mut { seed + 100 }) % 100) * 1000;
        p.client.write(up);
        p.client.close();
        let mut server_wrote = false;
        while p.client.state() != ConnState::Closed || p.server.state() != ConnState::Closed {
            if !server_wrote && p.has_event_of(Side::Server, Event::PeerClosed) {
                assert_eq!(p.server.write(down), down);
                p.server.close();
                server_wrote = true;
            }
            assert!(p.step(), "seed {seed}: idle before closing: {:?} {:?}", p.client.state(), p.server.state());
            assert!(p.now < at_ms(600_000), "seed {seed}: not closed by 600 s");
        }
        assert_eq!(p.app_read, [down, up], "seed {seed}");
        assert_eq!((p.client.info().data_acked, p.server.info().data_acked), (up, down), "seed {seed}");
        for side in [Side::Client, Side::Server] {
            assert!(p.has_event_of(side, Event::Closed(CloseReason::Graceful)), "seed {seed} {side:?}: {:?}", p.events);
        }
        let close_flags = Flags::FIN.with(Flags::DATA_FIN);
        lost_closing += p.log.iter().filter(|s| s.dropped() && s.seg.flags.0 & close_flags.0 != 0).count();
    }
    assert!(lost_closing >= 5, "the seeds exercise lost FINs and DATA_FINs: {lost_closing}");
}
