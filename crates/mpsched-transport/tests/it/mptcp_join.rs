//! MPTCP path manager over the pair harness: the first subflow's handshake, then MP_JOIN on the
//! other paths, DSN mapping across subflows, events.
//!
//! Paths: 0 = 25 ms one-way (RTT0 50 ms), 1 = 40 ms one-way (RTT1 80 ms), no rate limit, linux
//! profile (IW 10, MSS 1448), NewReno, minRTT, 1 MiB shared receive buffer.

use crate::util::*;
use mpsched_transport::{ConnConfig, Connection, Event, Flags, Instant, Segment, Side};

fn two_paths() -> Pair {
    Pair::new(multipath_config("minrtt", 2, 1 << 20)).with_path(0, ms(25), None).with_path(1, ms(40), None)
}

/// The SYN + MP_JOIN of subflow 1 leaves exactly when subflow 0 becomes established at the client
/// (its SYN-ACK arrives, 1 RTT0 = 50 ms), on path 1; nothing uses path 1 before. Subflow 1 carries
/// data only after its own handshake (its SYN-ACK arrives at 50 + 80 = 130 ms), with its own
/// subflow sequence space (seq 1) and connection-level DSNs that continue the data stream.
#[test]
fn join_after_first_subflow_established_then_data() {
    let mut p = two_paths();
    // Long enough for subflow 1 to take part: subflow 0 alone sends 10 + 20 + 40 + 80 segments
    // by 200 ms, subflow 1 may carry data from 210 ms (its 4th ACK).
    let total = 300 * MSS;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(3000));

    let syn0 = p.log[0];
    assert_eq!((syn0.at, syn0.dir, syn0.path, syn0.seg.sf, syn0.seg.flags), (at_ms(0), Dir::C2S, 0, 0, Flags::SYN));
    assert!(p.log.iter().all(|s| s.path != 1 || s.at >= at_ms(50)), "nothing on path 1 before 50 ms");
    let join = *p.sent(Dir::C2S).find(|s| s.path == 1).unwrap();
    assert_eq!(join.at, at_ms(50));
    assert_eq!((join.seg.sf, join.seg.flags, join.seg.seq, join.seg.len), (1, Flags::SYN.with(Flags::MP_JOIN), 0, 0));
    assert_eq!(p.sent(Dir::C2S).filter(|s| s.is_syn()).count(), 2, "one SYN per subflow, none retransmitted");
    // Only the client opens subflows; the server answers each SYN with a SYN-ACK on its path.
    let synacks: Vec<_> = p.sent(Dir::S2C).filter(|s| s.is_syn()).copied().collect();
    assert_eq!(synacks.len(), 2);
    assert_eq!((synacks[0].at, synacks[0].path, synacks[0].seg.flags), (at_ms(25), 0, Flags::SYN.with(Flags::ACK)));
    assert_eq!(
        (synacks[1].at, synacks[1].path, synacks[1].seg.sf, synacks[1].seg.flags),
        (at_ms(90), 1, 1, Flags::SYN.with(Flags::ACK).with(Flags::MP_JOIN))
    );

    // Data on subflow 1: not before its SYN-ACK arrives (130 ms); in fact not before the 4th
    // ACK (210 ms), see join_pre_established_until_fourth_ack below.
    let first1 = *p.client_data_on(1).next().expect("subflow 1 carries data");
    assert!(first1.at >= at_ms(130), "{first1:?}");
    assert_eq!(first1.path, 1);
    assert_eq!(first1.seg.seq, 1, "subflow 1 has its own sequence space (its SYN took 0)");
    assert!(first1.seg.dsn > 0 && first1.seg.dsn.is_multiple_of(MSS), "continues the DSN space: {}", first1.seg.dsn);
    // Subflow 0's IW went out at 50 ms, before subflow 1 existed.
    assert_eq!(p.client_data_on(0).filter(|s| s.at == at_ms(50)).count(), 10);

    // No loss: the first transmissions partition [0, total) in DSN space, across both subflows.
    let mut ranges: Vec<(u64, u64)> = p.data(Dir::C2S).map(|s| (s.seg.dsn, s.seg.dsn + s.seg.len as u64)).collect();
    ranges.sort();
    assert_eq!(ranges.first().unwrap().0, 0);
    assert!(ranges.windows(2).all(|w| w[0].1 == w[1].0), "each DSN sent exactly once");
    assert_eq!(ranges.last().unwrap().1, total);
    assert_eq!(p.server.info().bytes_delivered, total);
    assert_eq!(p.app_read[1], total);
}

/// The joining subflow's srtt is seeded from its SYN / SYN-ACK exchange (as in Linux, whose
/// `get_available_subflow` compares srtt_us: otherwise srtt = 0 would make a brand-new subflow look
/// fastest): 80 ms on path 1 as soon as it is up.
#[test]
fn join_seeds_srtt_from_handshake() {
    let mut p = two_paths();
    p.drive_until(at_ms(130));
    let sf1 = p.client_sf(1);
    assert!(sf1.established);
    assert_eq!(sf1.srtt, ms(80));
    assert_eq!(p.client_sf(0).srtt, ms(50));
    p.drive_until(at_ms(129 + 40));
    assert!(!p.server.subflow_info(1).established, "server side: established on the third ACK (170 ms)");
    p.drive_until(at_ms(170));
    assert!(p.server.subflow_info(1).established);
}

/// Events: Established and SubflowUp(0) when subflow 0 completes, SubflowUp(1) when subflow 1
/// completes; at the server when each subflow's third ACK arrives. (DataAcked events, one per
/// DATA_ACK advance, are left out here.)
#[test]
fn join_events() {
    let mut p = two_paths();
    p.client.write(30 * MSS);
    p.drive();
    let client: Vec<_> =
        p.events_of(Side::Client).into_iter().filter(|e| !matches!(e.1, Event::DataAcked(_))).collect();
    assert_eq!(
        client,
        vec![(at_ms(50), Event::SubflowUp(0)), (at_ms(50), Event::Established), (at_ms(130), Event::SubflowUp(1))]
    );
    assert_eq!(
        p.events_of(Side::Server),
        vec![(at_ms(75), Event::SubflowUp(0)), (at_ms(75), Event::Established), (at_ms(170), Event::SubflowUp(1))]
    );
}

/// Three paths: all joins leave together when subflow 0 is established, and all subflows carry
/// data. (Path 1 is 15 ms one-way so that subflow 1, usable at its 4th ACK at 20 + 60 = 80 ms
/// (RFC 8684 §3.2; Linux `mptcp_is_def_unavailable`), joins while the others are still in slow start;
/// with 30 ms it would be usable only at 140 ms, when subflow 2 (10 ms RTT) has a window larger
/// than the receive buffer and minRTT never needs a slower subflow.)
#[test]
fn full_mesh_joins_all_paths_at_once() {
    let mut p = Pair::new(multipath_config("minrtt", 3, 1 << 20))
        .with_path(0, ms(10), None)
        .with_path(1, ms(15), None)
        .with_path(2, ms(5), None);
    p.client.write(2000 * MSS);
    p.run_until_delivered(2000 * MSS, at_ms(3000));
    let joins: Vec<_> =
        p.sent(Dir::C2S).filter(|s| s.seg.flags.contains(Flags::MP_JOIN)).map(|s| (s.at, s.path, s.seg.sf)).collect();
    assert_eq!(joins, vec![(at_ms(20), 1, 1), (at_ms(20), 2, 2)]);
    for i in 0..3u8 {
        assert!(p.client_data_on(i).count() > 0, "subflow {i} carries data");
    }
}

/// A lost MP_JOIN SYN is retransmitted after the initial RTO (1 s, RFC 6298); subflow 0 carries
/// the data meanwhile, and subflow 1 joins in after its late handshake. (10 Mbit/s per path so
/// that the transfer outlasts the retransmission.)
#[test]
fn lost_join_syn_retransmitted_after_initial_rto() {
    let mut first_join = true;
    let mut p = Pair::new(multipath_config("minrtt", 2, 1 << 20))
        .with_path(0, ms(25), Some(10_000_000))
        .with_path(1, ms(40), Some(10_000_000))
        .with_fault(Box::new(move |s| {
            if s.path == 1 && s.is_syn() && s.dir == Dir::C2S && first_join {
                first_join = false;
                return true;
            }
            false
        }));
    let total = 2000 * MSS;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(10_000));
    let joins: Vec<_> = p.sent(Dir::C2S).filter(|s| s.path == 1 && s.is_syn()).map(|s| (s.at, s.dropped())).collect();
    // The first join leaves when subflow 0's SYN-ACK arrives (50 ms + its serialisation time).
    let synack0 = p.sent(Dir::S2C).find(|s| s.is_syn()).unwrap().arrival.unwrap();
    assert_eq!(joins, vec![(synack0, true), (synack0 + ms(1000), false)]);
    let first1 = p.client_data_on(1).next().expect("subflow 1 joined").at;
    assert!(first1 >= synack0 + ms(1000 + 80), "{first1:?}");
    assert!(p.client_data_on(0).filter(|s| s.at < synack0 + ms(1000)).count() > 100, "subflow 0 alone before");
    assert_eq!(p.app_read[1], total);
}

/// A joining subflow is "pre-established" (Linux `mptcp_is_def_unavailable`; RFC 8684 §3.2) until
/// the MP_JOIN handshake's 4th ACK (the server's ACK of the client's third ACK) arrives: the
/// client's third ACK leaves at 130 ms, reaches the server at 170 ms, the 4th ACK is back at
/// 210 ms. No data before that.
#[test]
fn join_pre_established_until_fourth_ack() {
    let mut p = two_paths();
    p.client.write(200 * MSS);
    p.run_until_delivered(200 * MSS, at_ms(3000));
    let first1 = *p.client_data_on(1).next().unwrap();
    assert!(first1.at >= at_ms(210), "first data on subflow 1 at {:?}", first1.at);
}

/// A lost 4th ACK: the server's ACK of subflow 1's third ACK is dropped. The client repeats the
/// third ACK (flag MP_JOIN_ACK) on its retransmission timer 280 ms after the first: the SYN-ACK
/// gave the one RTT sample, 80 ms, and the linux profile's kernel estimator (`tcp_rtt_estimator`)
/// sets rttvar = max(2 × 80, tcp_rto_min 200) ms, RTO = srtt + rttvar = 280 ms (RFC 6298's
/// 80 + 4·40 = 240 ms before the profile followed the kernel); it carries no data on
/// subflow 1 until the server's answer arrives one RTT (80 ms) later. The repetition is not a
/// data RTO: subflow 1 is not marked failed. (Path 0 is rate-limited so the transfer outlasts
/// the lost ACK; that shifts the join by the SYN's serialisation time, hence relative times.)
#[test]
fn lost_fourth_ack_repeats_third_ack() {
    let mut dropped = false;
    let mut p = Pair::new(multipath_config("minrtt", 2, 1 << 20))
        .with_path(0, ms(25), Some(10_000_000))
        .with_path(1, ms(40), None)
        .with_fault(Box::new(move |s| {
            if s.path == 1 && s.dir == Dir::S2C && !s.is_syn() && !dropped {
                dropped = true;
                return true;
            }
            false
        }));
    let total = 2000 * MSS;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(10_000));
    let third: Vec<_> = p
        .sent(Dir::C2S)
        .filter(|s| s.seg.flags.contains(Flags::MP_JOIN_ACK))
        .map(|s| (s.at, s.path, s.seg.len))
        .collect();
    assert_eq!(third.len(), 2, "{third:?}");
    let (t3, t3b) = (third[0].0, third[1].0);
    assert_eq!((third[0].1, third[0].2, third[1].1, third[1].2), (1, 0, 1, 0), "pure ACKs on path 1");
    assert_eq!(t3b, t3 + ms(280));
    let first1 = p.client_data_on(1).next().expect("subflow 1 carries data").at;
    assert!(first1 >= t3b + ms(80), "first data on subflow 1 at {first1:?}, third ACK repeated at {t3b:?}");
    assert!(!p.events_of(Side::Client).iter().any(|e| e.1 == Event::SubflowDown(1)));
    assert_eq!(p.client_sf(1).rto_count, 0);
    assert_eq!(p.app_read[1], total);
}

/// MP_CAPABLE carries each end's key (the client's on its SYN, the server's on its SYN-ACK); the
/// MP_JOIN SYN names the connection by the server's token, the top 32 bits of SHA-256 of the
/// server's key (RFC 8684 3.1, 3.2).
#[test]
fn handshake_exchanges_keys_and_the_join_names_the_token() {
    let mut p = two_paths();
    p.drive_until(at_ms(200));
    let syn = p.log[0];
    let synack = *p.sent(Dir::S2C).find(|s| s.is_syn()).unwrap();
    let join = *p.sent(Dir::C2S).find(|s| s.path == 1).unwrap();
    assert_eq!((syn.seg.mp_key, synack.seg.mp_key), (ConnConfig::default().key, SERVER_KEY));
    assert_eq!(p.server.token(), mpsched_transport::token::token(SERVER_KEY));
    assert_eq!(join.seg.join_token(), Some(p.server.token()));
    assert_eq!(syn.seg.join_token(), None, "an MP_CAPABLE SYN names no token");
}

/// A server configured with path 0 only accepts the client's MP_JOIN on path 1 because it names
/// its token: a new subflow, established when the client's third ACK arrives (SYN at 50 ms on
/// the 40 ms path, SYN-ACK back at 130 ms, third ACK in at 170 ms) and reported with
/// `SubflowUp(1)`, that then carries data like any other.
#[test]
fn server_accepts_a_join_on_a_path_it_was_not_told_about() {
    let mut p = two_paths();
    let cfg = ConnConfig { paths: vec![0], key: SERVER_KEY, ..multipath_config("minrtt", 1, 1 << 20) };
    p.server = Connection::new(&cfg, Side::Server, Instant::ZERO).unwrap();
    let total = 300 * MSS;
    p.client.write(total);
    p.run_until_delivered(total, at_ms(3000));
    assert_eq!(p.server.subflow_count(), 2);
    assert!(p.events_of(Side::Server).contains(&(at_ms(170), Event::SubflowUp(1))));
    assert!(p.client_data_on(1).count() > 0, "the accepted subflow carries data");
    assert_eq!(p.app_read[1], total);
}

/// An MP_JOIN SYN with another connection's token, on a known or an unknown path, is ignored:
/// no subflow, no answer.
#[test]
fn join_with_a_wrong_token_is_ignored() {
    let mut p = two_paths();
    p.drive_until(at_ms(200));
    let sent = p.log.len();
    let bogus = Segment {
        sf: 1,
        flags: Flags::SYN.with(Flags::MP_JOIN),
        mp_key: p.server.token().wrapping_add(1) as u64,
        ..Segment::default()
    };
    for path in [1, 5] {
        p.server.handle_segment(p.now, path, &bogus);
    }
    p.flush();
    assert_eq!(p.server.subflow_count(), 2);
    assert_eq!(p.log.len(), sent, "nothing answered");
}
