//! Closing a connection over the pair harness, segment by segment: graceful close (DATA_FIN,
//! RFC 8684 3.3.3, then a FIN exchange per subflow, RFC 9293 3.6), simultaneous close, abort
//! (RST + MP_FASTCLOSE, RFC 8684 3.5), close during loss recovery and during an outage, and
//! byte conservation through close.
//!
//! Default pair: 50 ms one-way delay (RTT 100 ms), no rate limit, linux profile (IW 10, MSS
//! 1448, delayed ACK 40 ms, TIME-WAIT 60 s), NewReno.

use crate::util::*;
use mpsched_transport::{CloseReason, ConnState, Event, Flags, Instant, Side, SubflowState};

/// A compact line per segment: time in ms, direction, path, flags, seq, ack, dsn, data_ack, len.
fn line(s: &Sent) -> String {
    let f = s.seg.flags;
    let names = [
        (Flags::SYN, "S"),
        (Flags::ACK, "A"),
        (Flags::FIN, "F"),
        (Flags::MP_JOIN, "J"),
        (Flags::DATA_FIN, "DF"),
        (Flags::MP_JOIN_ACK, "JA"),
        (Flags::RST, "R"),
        (Flags::MP_FASTCLOSE, "FC"),
    ];
    let flags: Vec<&str> = names.iter().filter(|(x, _)| f.contains(*x)).map(|(_, n)| *n).collect();
    format!(
        "{:>7.1} {:?} p{} {:<6} seq={} ack={} dsn={} dack={} len={}{}",
        s.at.0 as f64 / 1e6,
        s.dir,
        s.path,
        flags.join("+"),
        s.seg.seq,
        s.seg.ack,
        s.seg.dsn,
        s.seg.data_ack,
        s.seg.len,
        if s.dropped() { " DROPPED" } else { "" }
    )
}

fn lines(p: &Pair) -> Vec<String> {
    p.log.iter().map(line).collect()
}

/// The lines sent at or after `t`.
fn lines_from(p: &Pair, t: Instant) -> Vec<String> {
    p.log.iter().filter(|s| s.at >= t).map(line).collect()
}

/// The handshake every single-path test starts with (SYN, SYN-ACK, third ACK).
const HANDSHAKE: [&str; 3] = [
    "    0.0 C2S p0 S      seq=0 ack=0 dsn=0 dack=0 len=0",
    "   50.0 S2C p0 S+A    seq=0 ack=1 dsn=0 dack=0 len=0",
    "  100.0 C2S p0 A      seq=1 ack=1 dsn=0 dack=0 len=0",
];

fn with_handshake(rest: &[&str]) -> Vec<String> {
    HANDSHAKE.iter().chain(rest).map(|s| s.to_string()).collect()
}

/// Steps until `cond` holds (panics past `deadline`).
fn run_until(p: &mut Pair, deadline: Instant, mut cond: impl FnMut(&Pair) -> bool) {
    while !cond(p) {
        assert!(p.step(), "idle before the condition held at {:?}", p.now);
        assert!(p.now <= deadline, "condition not met by {deadline:?}");
    }
}

fn has_event(p: &Pair, side: Side, e: Event) -> bool {
    p.events_of(side).iter().any(|x| x.1 == e)
}

/// When `side` reported `e` (first time).
fn event_at(p: &Pair, side: Side, e: Event) -> Option<Instant> {
    p.events_of(side).iter().find(|x| x.1 == e).map(|x| x.0)
}

/// The state of both ends at `t` (drives the pair there).
fn states_at(p: &mut Pair, t: Instant) -> (ConnState, ConnState) {
    p.drive_until(t);
    (p.client.state(), p.server.state())
}

/// The client writes 3 segments and closes at once; the server closes when it sees the
/// client's DATA_FIN. The DATA_FIN rides on a pure ACK right after the last data segment (it
/// takes DSN 4344, one past the data); the server ACKs it at once (DATA_ACK 4345) and sends its
/// own. The client's DATA_FIN acknowledged, its subflow sends FIN (seq 4345, one past its data);
/// the server answers with its FIN carrying the ACK (LAST-ACK), the client ACKs it and waits
/// 60 s in TIME-WAIT.
#[test]
fn graceful_close_client_first() {
    let mut p = Pair::new(linux_reno());
    p.client.write(3 * MSS);
    p.client.close();
    assert_eq!(p.client.write(1), 0, "nothing more is taken after close");
    assert_eq!(states_at(&mut p, at_ms(100)), (ConnState::FinWait1, ConnState::Connecting));
    run_until(&mut p, at_ms(1000), |p| has_event(p, Side::Server, Event::PeerClosed));
    assert_eq!((p.now, p.server.state()), (at_ms(150), ConnState::CloseWait));
    p.server.close();
    assert_eq!(p.server.state(), ConnState::LastAck);
    assert_eq!(states_at(&mut p, at_ms(200)), (ConnState::Draining, ConnState::LastAck));
    assert_eq!(states_at(&mut p, at_ms(250)), (ConnState::Draining, ConnState::Draining));
    p.drive();
    assert_eq!(
        lines(&p),
        with_handshake(&[
            "  100.0 C2S p0 A      seq=1 ack=1 dsn=0 dack=0 len=1448",
            "  100.0 C2S p0 A      seq=1449 ack=1 dsn=1448 dack=0 len=1448",
            "  100.0 C2S p0 A      seq=2897 ack=1 dsn=2896 dack=0 len=1448",
            "  100.0 C2S p0 A+DF   seq=4345 ack=1 dsn=4344 dack=0 len=0",
            "  150.0 S2C p0 A      seq=1 ack=2897 dsn=0 dack=2896 len=0",
            "  150.0 S2C p0 A      seq=1 ack=4345 dsn=0 dack=4345 len=0",
            "  150.0 S2C p0 A+DF   seq=1 ack=4345 dsn=0 dack=4345 len=0",
            "  200.0 C2S p0 A+F    seq=4345 ack=1 dsn=0 dack=0 len=0",
            "  200.0 C2S p0 A      seq=4346 ack=1 dsn=0 dack=1 len=0",
            "  250.0 S2C p0 A+F    seq=1 ack=4346 dsn=0 dack=4345 len=0",
            "  300.0 C2S p0 A      seq=4346 ack=2 dsn=0 dack=1 len=0",
        ])
    );
    assert_eq!(event_at(&p, Side::Server, Event::Closed(CloseReason::Graceful)), Some(at_ms(350)));
    assert_eq!(event_at(&p, Side::Client, Event::Closed(CloseReason::Graceful)), Some(at_ms(60_300)));
    assert_eq!(event_at(&p, Side::Client, Event::PeerClosed), Some(at_ms(200)));
    let acked: Vec<_> = p.events_of(Side::Client).into_iter().filter(|e| matches!(e.1, Event::DataAcked(_))).collect();
    assert_eq!(acked, vec![(at_ms(200), Event::DataAcked(2 * MSS)), (at_ms(200), Event::DataAcked(3 * MSS))]);
    assert_eq!((p.client.state(), p.server.state()), (ConnState::Closed, ConnState::Closed));
    assert_eq!((p.client.poll_timeout(), p.server.poll_timeout()), (None, None));
    assert_eq!((p.app_read[1], p.client.info().data_acked), (3 * MSS, 3 * MSS));
}

/// Both ends close at 200 ms: the DATA_FINs cross, each is ACKed (CLOSING), the subflow FINs
/// cross at 300 ms (each end's FIN-WAIT-1 meets the peer's FIN: CLOSING), each ACKs the other's
/// FIN and both spend TIME-WAIT (RFC 9293 3.6, simultaneous close).
#[test]
fn simultaneous_close() {
    let mut p = Pair::new(linux_reno());
    p.drive_until(at_ms(200));
    p.client.close();
    p.server.close();
    assert_eq!(states_at(&mut p, at_ms(250)), (ConnState::Closing, ConnState::Closing));
    assert_eq!(states_at(&mut p, at_ms(300)), (ConnState::Draining, ConnState::Draining));
    p.drive_until(at_ms(350));
    assert_eq!(p.client.subflow_info(0).state, SubflowState::Closing);
    p.drive_until(at_ms(400));
    assert_eq!(p.client.subflow_info(0).state, SubflowState::TimeWait);
    assert_eq!(p.server.subflow_info(0).state, SubflowState::TimeWait);
    p.drive();
    assert_eq!(
        lines(&p),
        with_handshake(&[
            "  200.0 C2S p0 A+DF   seq=1 ack=1 dsn=0 dack=0 len=0",
            "  200.0 S2C p0 A+DF   seq=1 ack=1 dsn=0 dack=0 len=0",
            "  250.0 S2C p0 A      seq=1 ack=1 dsn=0 dack=1 len=0",
            "  250.0 C2S p0 A      seq=1 ack=1 dsn=0 dack=1 len=0",
            "  300.0 S2C p0 A+F    seq=1 ack=1 dsn=0 dack=1 len=0",
            "  300.0 C2S p0 A+F    seq=1 ack=1 dsn=0 dack=1 len=0",
            "  350.0 S2C p0 A      seq=2 ack=2 dsn=0 dack=1 len=0",
            "  350.0 C2S p0 A      seq=2 ack=2 dsn=0 dack=1 len=0",
        ])
    );
    for side in [Side::Client, Side::Server] {
        assert_eq!(event_at(&p, side, Event::PeerClosed), Some(at_ms(250)));
        assert_eq!(event_at(&p, side, Event::Closed(CloseReason::Graceful)), Some(at_ms(60_400)));
    }
}

/// Half close: the client sends 2 segments and closes; the server, told by `PeerClosed`, still
/// sends 3 segments of its own before closing. The client's subflow keeps receiving in
/// FIN-WAIT-1 and ACKs the server's data and DATA_FIN; every byte arrives exactly once.
#[test]
fn half_close_peer_keeps_sending() {
    let mut p = Pair::new(linux_reno());
    p.client.write(2 * MSS);
    p.client.close();
    run_until(&mut p, at_ms(1000), |p| has_event(p, Side::Server, Event::PeerClosed));
    assert_eq!(p.server.write(3 * MSS), 3 * MSS, "the server may still write");
    p.server.close();
    p.drive();
    assert_eq!(
        lines_from(&p, at_ms(150)),
        [
            "  150.0 S2C p0 A      seq=1 ack=2897 dsn=0 dack=2896 len=0",
            "  150.0 S2C p0 A      seq=1 ack=2897 dsn=0 dack=2897 len=0",
            "  150.0 S2C p0 A      seq=1 ack=2897 dsn=0 dack=2897 len=1448",
            "  150.0 S2C p0 A      seq=1449 ack=2897 dsn=1448 dack=2897 len=1448",
            "  150.0 S2C p0 A      seq=2897 ack=2897 dsn=2896 dack=2897 len=1448",
            "  150.0 S2C p0 A+DF   seq=4345 ack=2897 dsn=4344 dack=2897 len=0",
            "  200.0 C2S p0 A+F    seq=2897 ack=1 dsn=0 dack=0 len=0",
            "  200.0 C2S p0 A      seq=2898 ack=2897 dsn=0 dack=2896 len=0",
            "  200.0 C2S p0 A      seq=2898 ack=4345 dsn=0 dack=4345 len=0",
            "  250.0 S2C p0 A+F    seq=4345 ack=2898 dsn=0 dack=2897 len=0",
            "  300.0 C2S p0 A      seq=2898 ack=4346 dsn=0 dack=4345 len=0",
        ]
    );
    assert_eq!(p.app_read, [3 * MSS, 2 * MSS]);
    assert_eq!((p.client.info().data_acked, p.server.info().data_acked), (2 * MSS, 3 * MSS));
    assert_eq!(event_at(&p, Side::Server, Event::Closed(CloseReason::Graceful)), Some(at_ms(350)));
    assert_eq!(event_at(&p, Side::Client, Event::Closed(CloseReason::Graceful)), Some(at_ms(60_300)));
}

/// Close during loss recovery: the 3rd of 10 segments is lost and the DATA_FIN (sent at 100 ms
/// right after the data) arrives before the hole is filled. The server holds it: no
/// `PeerClosed`, DATA_ACK stays at 2896 on all eight duplicate ACKs; the fast retransmission
/// (200 ms) fills the hole at 250 ms, and only then is the DATA_FIN taken and ACKed
/// (DATA_ACK 14481 = 10 segments + 1).
#[test]
fn close_during_loss_recovery() {
    let mut p = Pair::new(linux_reno()).with_fault(drop_nth_data(Dir::C2S, 3));
    p.client.write(10 * MSS);
    p.client.close();
    run_until(&mut p, at_ms(1000), |p| has_event(p, Side::Server, Event::PeerClosed));
    assert_eq!(p.now, at_ms(250));
    p.server.close();
    p.drive();
    let log = lines(&p);
    assert_eq!(log[13], "  100.0 C2S p0 A+DF   seq=14481 ack=1 dsn=14480 dack=0 len=0");
    let dupacks: Vec<_> = p.log.iter().filter(|s| s.at == at_ms(150)).map(|s| s.seg.data_ack).collect();
    assert_eq!(dupacks, vec![2 * MSS; 8], "the held DATA_FIN moves nothing");
    assert_eq!(
        lines_from(&p, at_ms(200)),
        [
            "  200.0 C2S p0 A      seq=2897 ack=1 dsn=2896 dack=0 len=1448",
            "  250.0 S2C p0 A      seq=1 ack=14481 dsn=0 dack=14481 len=0",
            "  250.0 S2C p0 A+DF   seq=1 ack=14481 dsn=0 dack=14481 len=0",
            "  300.0 C2S p0 A+F    seq=14481 ack=1 dsn=0 dack=0 len=0",
            "  300.0 C2S p0 A      seq=14482 ack=1 dsn=0 dack=1 len=0",
            "  350.0 S2C p0 A+F    seq=1 ack=14482 dsn=0 dack=14481 len=0",
            "  400.0 C2S p0 A      seq=14482 ack=2 dsn=0 dack=1 len=0",
        ]
    );
    assert_eq!(p.log.iter().filter(|s| s.seg.flags.contains(Flags::DATA_FIN) && s.dir == Dir::C2S).count(), 1);
    assert_eq!((p.app_read[1], p.server.info().duplicate_bytes), (10 * MSS, 0));
    assert_eq!(event_at(&p, Side::Server, Event::Closed(CloseReason::Graceful)), Some(at_ms(450)));
}

/// Close during an outage (every segment lost from 150 ms to 1.5 s): the DATA_FIN is repeated on
/// its timer, starting from the subflow's RTO (300 ms) and doubling: 200, 500, 1100 ms (lost),
/// 2300 ms (through). The server ACKs it at once; the client's FIN follows, which the server, in
/// CLOSE-WAIT, ACKs after the 40 ms delayed-ACK timer (Linux `tcp_fin` pingpong mode).
#[test]
fn close_during_outage_retransmits_the_data_fin() {
    let mut p = Pair::new(linux_reno()).with_fault(blackhole_path(0, at_ms(150), at_ms(1500)));
    p.drive_until(at_ms(200));
    p.client.close();
    p.drive_until(at_ms(3000));
    assert_eq!(
        lines_from(&p, at_ms(200)),
        [
            "  200.0 C2S p0 A+DF   seq=1 ack=1 dsn=0 dack=0 len=0 DROPPED",
            "  500.0 C2S p0 A+DF   seq=1 ack=1 dsn=0 dack=0 len=0 DROPPED",
            " 1100.0 C2S p0 A+DF   seq=1 ack=1 dsn=0 dack=0 len=0 DROPPED",
            " 2300.0 C2S p0 A+DF   seq=1 ack=1 dsn=0 dack=0 len=0",
            " 2350.0 S2C p0 A      seq=1 ack=1 dsn=0 dack=1 len=0",
            " 2400.0 C2S p0 A+F    seq=1 ack=1 dsn=0 dack=0 len=0",
            " 2490.0 S2C p0 A      seq=1 ack=2 dsn=0 dack=1 len=0",
        ]
    );
    assert_eq!((p.client.state(), p.server.state()), (ConnState::FinWait2, ConnState::CloseWait));
    assert_eq!(p.client.subflow_info(0).state, SubflowState::FinWait2);
    assert_eq!(p.server.subflow_info(0).state, SubflowState::CloseWait);
}

/// A path that never comes back: the DATA_FIN is sent 9 times (200 ms, then 300 ms · 2^k later)
/// and the connection gives up when the 9th timer expires (153.5 s), with a fast close.
#[test]
fn close_gives_up_when_no_path_reaches_the_peer() {
    let mut p = Pair::new(linux_reno()).with_fault(blackhole_path(0, at_ms(150), at_ms(10_000_000)));
    p.drive_until(at_ms(200));
    p.client.close();
    p.drive();
    let fins: Vec<_> = p.sent(Dir::C2S).filter(|s| s.seg.flags.contains(Flags::DATA_FIN)).map(|s| s.at).collect();
    let expect: Vec<_> = [200, 500, 1100, 2300, 4700, 9500, 19_100, 38_300, 76_700].map(at_ms).to_vec();
    assert_eq!(fins, expect);
    assert_eq!(event_at(&p, Side::Client, Event::Closed(CloseReason::TimedOut)), Some(at_ms(153_500)));
    let last = p.log.last().unwrap();
    assert_eq!(last.at, at_ms(153_500));
    assert!(last.seg.flags.contains(Flags::RST.with(Flags::MP_FASTCLOSE)));
    assert_eq!(last.seg.mp_key, SERVER_KEY);
    assert_eq!(p.server.state(), ConnState::Established, "the server never heard of it");
}

/// Abort in the middle of a two-path transfer: a RST with MP_FASTCLOSE and the server's key on
/// each subflow, at the next sequence number of each; the client is closed at once, the server
/// when the first arrives. Nothing follows; neither end has a timer left.
#[test]
fn abort_sends_fastclose_on_every_subflow() {
    let mut p = Pair::new(multipath_config("minrtt", 2, 1 << 20));
    p.client.write(100 * MSS);
    p.drive_until(at_ms(350));
    let next: Vec<u64> = (0..2).map(|i| p.client.subflow_info(i).bytes_sent + 1).collect();
    p.client.abort(p.now);
    assert_eq!(p.client.state(), ConnState::Closed);
    p.drive();
    assert_eq!(
        lines_from(&p, at_ms(350)).into_iter().filter(|l| l.contains("C2S")).collect::<Vec<_>>(),
        [
            format!("  350.0 C2S p0 A+R+FC seq={} ack=1 dsn=0 dack=0 len=0", next[0]),
            format!("  350.0 C2S p1 A+R+FC seq={} ack=1 dsn=0 dack=0 len=0", next[1]),
        ]
    );
    assert!(p.sent(Dir::C2S).filter(|s| s.seg.flags.contains(Flags::RST)).all(|s| s.seg.mp_key == SERVER_KEY));
    assert_eq!(event_at(&p, Side::Client, Event::Closed(CloseReason::Aborted)), Some(at_ms(350)));
    assert_eq!(event_at(&p, Side::Server, Event::Closed(CloseReason::Reset)), Some(at_ms(400)));
    assert_eq!((p.client.poll_timeout(), p.server.poll_timeout()), (None, None));
    assert_eq!(p.server.state(), ConnState::Closed);
}
