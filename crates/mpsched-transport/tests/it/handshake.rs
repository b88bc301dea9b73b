//! Three-way handshake over the pair harness: order of segments, timing, RFC 6298 initial RTO
//! and the one-segment initial window after a lost SYN.
//!
//! Default pair: 50 ms one-way delay each way (RTT 100 ms), no rate limit, linux profile
//! (IW 10, MSS 1448, delayed ACK 40 ms), NewReno.

use crate::util::*;
use mpsched_transport::{Duration, Flags};

#[test]
fn syn_synack_then_data_one_rtt_after_syn() {
    let mut p = Pair::new(linux_reno());
    p.client.write(10 * MSS);
    p.drive_until(at_ms(149));
    assert!(p.client_info().established, "client is established when the SYN-ACK arrives at 100 ms");
    assert!(!p.server_info().established, "server waits for the client's first ACK (150 ms)");
    p.drive_until(at_ms(150));
    assert!(p.server_info().established);

    // 1. SYN at 0 (seq 0, no ACK flag).
    let syn = p.log[0];
    assert_eq!((syn.at, syn.dir, syn.seg.flags, syn.seg.seq, syn.seg.len), (at_ms(0), Dir::C2S, Flags::SYN, 0, 0));
    // 2. SYN-ACK when the SYN arrives (50 ms), acknowledging the SYN's sequence number.
    let synack = p.log[1];
    assert_eq!(synack.at, at_ms(50));
    assert_eq!(synack.dir, Dir::S2C);
    assert_eq!(synack.seg.flags, Flags::SYN.with(Flags::ACK));
    assert_eq!(synack.seg.ack, 1);
    assert_eq!(synack.seg.ts_ecr, syn.seg.ts_val, "the SYN-ACK echoes the SYN's timestamp");
    // 3. Data as soon as the SYN-ACK arrives: exactly 1 RTT (100 ms) after the SYN. The third ACK
    //    of the handshake is either piggybacked on the data or (as Linux does) a pure ACK sent just
    //    before it, at the same instant; nothing else is sent in between.
    let first_data = p.data(Dir::C2S).next().copied().unwrap();
    assert_eq!(first_data.at.saturating_duration_since(syn.at), ms(100));
    assert_eq!(first_data.seg.seq, 1, "the SYN occupies sequence number 0");
    assert_eq!(first_data.seg.dsn, 0);
    assert!(first_data.seg.flags.contains(Flags::ACK));
    assert_eq!(first_data.seg.ack, 1, "acknowledges the server's SYN");
    let between: Vec<_> = p.log[2..].iter().take_while(|s| !s.is_data()).collect();
    assert!(between.len() <= 1, "{between:?}");
    for s in &between {
        assert!(s.is_pure_ack() && s.dir == Dir::C2S && s.at == at_ms(100) && s.seg.ack == 1, "{s:?}");
    }
    assert_eq!(p.pure_acks(Dir::C2S).count(), between.len(), "no other pure ACK from the client");
    // IW 10 segments leave together at 100 ms.
    assert_eq!(p.data(Dir::C2S).filter(|s| s.at == at_ms(100)).count(), 10);

    // The client's first RTT sample comes from the SYN-ACK (never retransmitted): SRTT = 100 ms,
    // RTTVAR = 50 ms, RTO = SRTT + 4·RTTVAR = 300 ms (RFC 6298 2.2).
    let c = p.client_trace.iter().find(|(t, _)| *t == at_ms(100)).unwrap().1;
    assert_eq!(c.srtt, ms(100));
    assert_eq!(c.rttvar, ms(50));
    assert_eq!(c.rto, ms(300));
    assert_eq!(c.cwnd, 10 * MSS);
}

#[test]
fn handshake_without_data_ends_with_a_pure_ack() {
    let mut p = Pair::new(linux_reno());
    p.drive();
    assert_eq!(p.log.len(), 3, "{:?}", p.log);
    let ack = p.log[2];
    assert_eq!((ack.at, ack.dir), (at_ms(100), Dir::C2S));
    assert!(ack.is_pure_ack());
    assert_eq!(ack.seg.ack, 1);
    assert!(p.client_info().established && p.server_info().established);
    // Nothing left armed once both ends are established and idle.
    assert_eq!(p.client.poll_timeout(), None);
    assert_eq!(p.server.poll_timeout(), None);
}

#[test]
fn lost_syn_retransmitted_after_1s_and_data_starts_with_one_segment() {
    let mut p = Pair::new(linux_reno()).with_fault(drop_first_syns(Dir::C2S, 1));
    p.client.write(30 * MSS);
    p.run_until_delivered(30 * MSS, at_ms(5000));

    let syns: Vec<_> = p.sent(Dir::C2S).filter(|s| s.is_syn()).copied().collect();
    assert_eq!(syns.len(), 2);
    assert!(syns[0].dropped() && !syns[1].dropped());
    // RFC 6298 2.1: RTO = 1 s before any RTT sample.
    assert_eq!(syns[1].at.saturating_duration_since(syns[0].at), Duration::from_secs(1));
    let synack = p.sent(Dir::S2C).find(|s| s.is_syn()).copied().unwrap();
    assert_eq!(synack.at, at_ms(1050));

    // RFC 6298 5.7 / RFC 5681 3.1: after a lost SYN the initial window is one segment.
    let data: Vec<_> = p.data(Dir::C2S).copied().collect();
    assert_eq!(data[0].at, at_ms(1100));
    assert_eq!(data.iter().filter(|s| s.at == at_ms(1100)).count(), 1);
    let at_est = p.client_trace.iter().find(|(t, _)| *t == at_ms(1100)).unwrap().1;
    assert_eq!(at_est.cwnd, MSS);
    // Karn: the SYN-ACK answers a retransmitted SYN, so it gives no RTT sample.
    assert_eq!(at_est.srtt, Duration::ZERO);
    assert_eq!(at_est.rto, Duration::from_secs(1));
    assert_eq!(at_est.rto_count, 1);
    // The single segment is ACKed by the delayed-ACK timer (arrives 1150, ACK 1190, back 1240);
    // slow start then sends 2 segments.
    assert_eq!(data[1].at, at_ms(1240));
    assert_eq!(data.iter().filter(|s| s.at == at_ms(1240)).count(), 2);
    assert_eq!(p.client_info().segments_retransmitted, 0, "data itself was never retransmitted");
}

#[test]
fn syn_backoff_doubles() {
    // Two SYNs lost: sent at 0, 1 s (RTO 1 s), 3 s (backed-off RTO 2 s).
    let mut p = Pair::new(linux_reno()).with_fault(drop_first_syns(Dir::C2S, 2));
    p.client.write(MSS);
    p.run_until_delivered(MSS, at_ms(10_000));
    let syn_times: Vec<_> = p.sent(Dir::C2S).filter(|s| s.is_syn()).map(|s| s.at).collect();
    assert_eq!(syn_times, vec![at_ms(0), at_ms(1000), at_ms(3000)]);
    assert_eq!(p.client_info().rto_count, 2);
    assert_eq!(p.data(Dir::C2S).next().unwrap().at, at_ms(3100));
}

#[test]
fn lost_synack_recovered_by_syn_retransmission() {
    // The SYN-ACK is lost: the client's SYN times out at 1 s; the server answers the new SYN.
    let mut p = Pair::new(linux_reno()).with_fault(drop_first_syns(Dir::S2C, 1));
    p.client.write(5 * MSS);
    p.run_until_delivered(5 * MSS, at_ms(5000));
    let c_syns: Vec<_> = p.sent(Dir::C2S).filter(|s| s.is_syn()).map(|s| s.at).collect();
    assert_eq!(c_syns, vec![at_ms(0), at_ms(1000)]);
    let first_data = p.data(Dir::C2S).next().copied().unwrap();
    assert_eq!(first_data.at, at_ms(1100));
    // The handshake needed a retransmission, so the client starts with one segment.
    assert_eq!(p.data(Dir::C2S).filter(|s| s.at == at_ms(1100)).count(), 1);
}
