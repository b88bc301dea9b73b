//! Receiver ACK policy: delayed ACK (every 2nd segment or 40 ms, RFC 1122 / RFC 5681 4.2),
//! immediate ACKs for out-of-order data and for data filling a hole, SACK block contents and
//! order (RFC 2018).
//!
//! Default pair: RTT 100 ms; the first flight (IW 10) leaves at 100 ms and arrives at 150 ms.

use crate::util::*;
use mpsched_transport::{Segment, SubflowConfig};

fn seq_of(k: u64) -> u64 {
    1 + (k - 1) * MSS
}

fn acks_at(p: &Pair, t: mpsched_transport::Instant) -> Vec<Segment> {
    p.pure_acks(Dir::S2C).filter(|s| s.at == t).map(|s| s.seg).collect()
}

fn blocks(s: &Segment) -> Vec<(u64, u64)> {
    s.sacks().iter().map(|b| (b.start, b.end)).collect()
}

#[test]
fn delayed_ack_every_second_segment() {
    let mut p = Pair::new(linux_reno());
    p.client.write(10 * MSS);
    p.drive();
    // 10 in-order segments arrive at 150 ms: one ACK per 2 segments, sent immediately.
    let acks = acks_at(&p, at_ms(150));
    assert_eq!(
        acks.iter().map(|a| a.ack).collect::<Vec<_>>(),
        vec![seq_of(3), seq_of(5), seq_of(7), seq_of(9), seq_of(11)]
    );
    assert!(acks.iter().all(|a| a.n_sack == 0));
    assert_eq!(p.pure_acks(Dir::S2C).count(), 5, "no other ACK (no timer-driven one either)");
}

#[test]
fn single_segment_acked_after_40ms() {
    let mut p = Pair::new(linux_reno());
    p.client.write(100);
    p.drive();
    let acks: Vec<_> = p.pure_acks(Dir::S2C).copied().collect();
    assert_eq!(acks.len(), 1);
    // Arrives at 150 ms, ACKed when the 40 ms delayed-ACK timer fires.
    assert_eq!(acks[0].at, at_ms(190));
    assert_eq!(acks[0].seg.ack, 101);
    // The sender's RTT sample includes the delay: 140 ms after the SYN-ACK's 100 ms, so
    // SRTT = 7/8·100 + 1/8·140 = 105 ms and the minimum stays 100 ms.
    let c = p.client_info();
    assert_eq!((c.srtt, c.min_rtt), (ms(105), ms(100)));
}

#[test]
fn odd_segment_waits_for_the_timer() {
    let mut p = Pair::new(linux_reno());
    p.client.write(3 * MSS);
    p.drive();
    let acks: Vec<_> = p.pure_acks(Dir::S2C).map(|s| (s.at, s.seg.ack)).collect();
    assert_eq!(acks, vec![(at_ms(150), seq_of(3)), (at_ms(190), seq_of(4))]);
}

#[test]
fn ns3_profile_delayed_ack_timeout_is_200ms() {
    let mut p = Pair::new(config("newreno", SubflowConfig::ns3()));
    p.client.write(100);
    p.drive();
    let acks: Vec<_> = p.pure_acks(Dir::S2C).map(|s| s.at).collect();
    assert_eq!(acks, vec![at_ms(350)]);
}

#[test]
fn without_delayed_ack_every_segment_is_acked() {
    let mut sub = SubflowConfig::linux();
    sub.delayed_ack = false;
    let mut p = Pair::new(config("newreno", sub));
    p.client.write(10 * MSS);
    p.drive();
    let acks = acks_at(&p, at_ms(150));
    assert_eq!(acks.iter().map(|a| a.ack).collect::<Vec<_>>(), (2..=11).map(seq_of).collect::<Vec<_>>());
    assert_eq!(p.pure_acks(Dir::S2C).count(), 10);
    // A single segment is ACKed on arrival.
    let mut q = Pair::new(config("newreno", {
        let mut s = SubflowConfig::linux();
        s.delayed_ack = false;
        s
    }));
    q.client.write(100);
    q.drive();
    assert_eq!(q.pure_acks(Dir::S2C).map(|s| s.at).collect::<Vec<_>>(), vec![at_ms(150)]);
}

#[test]
fn out_of_order_segment_gets_an_immediate_ack_with_its_sack_block() {
    // Segment 5 is lost: 6 arrives out of order and is ACKed at once (not after the next
    // segment or 40 ms), with a SACK block exactly covering it.
    let mut p = Pair::new(linux_reno()).with_fault(drop_nth_data(Dir::C2S, 5));
    p.client.write(6 * MSS);
    p.drive();
    let acks = acks_at(&p, at_ms(150));
    assert_eq!(acks.len(), 3, "after 2, after 4, and immediately after out-of-order 6");
    assert_eq!(acks[1].ack, seq_of(5));
    let dup = acks[2];
    assert_eq!(dup.ack, seq_of(5), "cumulative ACK stays at the hole");
    assert_eq!(blocks(&dup), vec![(seq_of(6), seq_of(7))]);
    // The hole is repaired by the timer (too few duplicate ACKs for fast retransmit). The
    // retransmission fills the hole: ACKed immediately, acknowledging everything, no SACK.
    let rtx = p.retransmissions(Dir::C2S);
    assert_eq!(rtx.len(), 1);
    let arr = rtx[0].arrival.unwrap();
    let fill = p.pure_acks(Dir::S2C).find(|s| s.at == arr).expect("immediate ACK when the hole is filled");
    assert_eq!(fill.seg.ack, seq_of(7));
    assert_eq!(fill.seg.n_sack, 0);
    assert_eq!(p.server.info().bytes_delivered, 6 * MSS);
}

#[test]
fn every_out_of_order_segment_is_acked_immediately() {
    // Holes at 3, 5, 7, 9: segments 4, 6, 8, 10 each produce an immediate ACK; the SACK option
    // lists at most 3 blocks, the newest island first, and drops the oldest when full.
    let mut p = Pair::new(linux_reno()).with_fault(drop_data_nos(Dir::C2S, &[3, 5, 7, 9]));
    p.client.write(10 * MSS);
    p.drive();
    let acks = acks_at(&p, at_ms(150));
    assert_eq!(acks.len(), 5);
    assert_eq!((acks[0].ack, acks[0].n_sack), (seq_of(3), 0));
    let b = |k: u64| (seq_of(k), seq_of(k + 1));
    assert_eq!(blocks(&acks[1]), vec![b(4)]);
    assert_eq!(blocks(&acks[2]), vec![b(6), b(4)]);
    assert_eq!(blocks(&acks[3]), vec![b(8), b(6), b(4)]);
    assert_eq!(blocks(&acks[4]), vec![b(10), b(8), b(6)]);
    assert!(acks[1..].iter().all(|a| a.ack == seq_of(3)));
    assert!(p.log.iter().all(|s| s.seg.n_sack <= 3));
    assert_eq!(p.server.info().bytes_delivered, 10 * MSS);
}

#[test]
fn first_sack_block_is_the_most_recently_received_not_the_highest() {
    // Holes at 3, 5, 7 of the first flight, and the first retransmission of 3 is lost as well.
    // When the retransmission of 5 arrives, it joins islands {4} and {6} into [4, 7): that block
    // holds the most recent arrival and must come first (RFC 2018 section 4), before the higher
    // island [8, ...).
    let s3 = seq_of(3);
    let mut n3 = 0;
    let fault: Fault = Box::new(move |s: &Sent| {
        if s.dir != Dir::C2S || !s.is_data() {
            return false;
        }
        if s.seg.seq == s3 {
            n3 += 1;
            return n3 <= 2;
        }
        matches!(s.data_no, Some(5) | Some(7))
    });
    let mut p = Pair::new(linux_reno()).with_fault(fault);
    p.client.write(60 * MSS);
    p.run_until_delivered(60 * MSS, at_ms(10_000));
    let r5 = p.retransmissions(Dir::C2S).into_iter().find(|s| s.seg.seq == seq_of(5)).unwrap();
    let arr = r5.arrival.unwrap();
    let acks: Vec<_> = p.pure_acks(Dir::S2C).filter(|s| s.at == arr).map(|s| s.seg).collect();
    let ack5 = acks
        .iter()
        .find(|a| a.sacks().iter().any(|b| b.start == seq_of(4) && b.end == seq_of(7)))
        .expect("a block [4, 7)");
    assert_eq!(ack5.ack, s3);
    assert_eq!((ack5.sack[0].start, ack5.sack[0].end), (seq_of(4), seq_of(7)), "{:?}", blocks(ack5));
    assert!(ack5.n_sack >= 2 && ack5.sack[1].start == seq_of(8), "then the highest island: {:?}", blocks(ack5));
}

#[test]
fn duplicate_segment_is_acked_immediately() {
    // All ACKs of the first round are lost: the sender's RTO resends segment 1, which the
    // receiver already has. A duplicate triggers an immediate ACK (no 40 ms wait).
    let mut p = Pair::new(linux_reno()).with_fault(drop_acks_between(Dir::S2C, at_ms(140), at_ms(160)));
    p.client.write(10 * MSS);
    p.drive();
    let rtx = p.retransmissions(Dir::C2S);
    assert_eq!(rtx[0].seg.seq, seq_of(1));
    let arr = rtx[0].arrival.unwrap();
    let ack = p.pure_acks(Dir::S2C).find(|s| s.at >= arr).unwrap();
    assert_eq!(ack.at, arr);
    assert_eq!(ack.seg.ack, seq_of(11));
}
