//! SACK-based loss recovery (RFC 6675) over the pair harness: one loss, several losses in one
//! window, a lost retransmission; window reduction for NewReno and CUBIC.
//!
//! Default pair: RTT 100 ms, no rate limit, linux profile (IW 10, MSS 1448, delayed ACK, ABC).
//! Data segment k (1-based) of the first flight carries seq 1 + (k-1)·1448.

use crate::util::*;
use mpsched_transport::{SubflowConfig, SubflowInfo};

const N: u64 = 60 * MSS;

fn seq_of(k: u64) -> u64 {
    1 + (k - 1) * MSS
}

/// Client state just before and just after entering recovery.
fn around_recovery_entry(p: &Pair) -> (SubflowInfo, SubflowInfo, mpsched_transport::Instant) {
    let i = p.client_trace.iter().position(|(_, s)| s.in_recovery).expect("entered recovery");
    (p.client_trace[i - 1].1, p.client_trace[i].1, p.client_trace[i].0)
}

fn run(cc: &str, fault: Fault, n: u64) -> Pair {
    let mut p = Pair::new(config(cc, SubflowConfig::linux())).with_fault(fault);
    p.client.write(n);
    p.run_until_delivered(n, at_ms(10_000));
    p.drive();
    let si = p.server.info();
    assert_eq!(si.bytes_delivered, n);
    assert_eq!(si.duplicate_bytes, 0);
    assert_eq!(p.app_read[1], n);
    assert_eq!(p.client_info().delivered, n);
    p
}

/// The dropped 5th segment, seen from the receiver: ACKs at 150 ms are 2897, 5793 (every 2nd
/// segment), then five immediate duplicate ACKs for 5793 with growing SACK blocks [7241, ...).
#[test]
fn receiver_reports_the_hole_with_dup_acks_and_sack() {
    let p = run("newreno", drop_nth_data(Dir::C2S, 5), N);
    let acks: Vec<_> = p.pure_acks(Dir::S2C).filter(|s| s.at == at_ms(150)).map(|s| s.seg).collect();
    assert_eq!(acks.len(), 7);
    assert_eq!(acks[0].ack, seq_of(3));
    assert_eq!(acks[1].ack, seq_of(5));
    for (j, a) in acks[2..].iter().enumerate() {
        assert_eq!(a.ack, seq_of(5), "duplicate ACK");
        assert_eq!(a.n_sack, 1);
        assert_eq!((a.sack[0].start, a.sack[0].end), (seq_of(6), seq_of(7 + j as u64)));
    }
}

#[test]
fn one_lost_segment_newreno_fast_retransmit_halves_cwnd() {
    let p = run("newreno", drop_nth_data(Dir::C2S, 5), N);
    let rtx = p.retransmissions(Dir::C2S);
    assert_eq!(rtx.len(), 1, "exactly one retransmission: {rtx:?}");
    assert_eq!(rtx[0].seg.seq, seq_of(5));
    let ci = p.client_info();
    assert_eq!(ci.segments_retransmitted, 1);
    assert_eq!(ci.segments_lost, 1);
    assert_eq!(ci.fast_recoveries, 1);
    assert_eq!(ci.rto_count, 0);

    // Loss is detected at 200 ms, on the 3rd duplicate ACK: 3 segments (6, 7, 8) SACKed above
    // the hole is more than (DupThresh − 1)·MSS. The window then was 16 MSS: IW 10, +2 MSS for
    // each of the two cumulative ACKs (ABC), +1 MSS for each of the first two SACKed segments
    // (slow start counts SACKed bytes). NewReno: ssthresh = cwnd/2 = 8 MSS, cwnd = ssthresh.
    let (before, after, t) = around_recovery_entry(&p);
    assert_eq!(t, at_ms(200));
    assert_eq!(before.cwnd, 16 * MSS);
    assert_eq!(after.ssthresh, before.cwnd / 2);
    assert_eq!(after.cwnd, after.ssthresh);
    // The retransmission is driven by SACK, well before any RTO could fire.
    assert!(rtx[0].at >= t && rtx[0].at < t + after.rto, "retransmitted at {:?}", rtx[0].at);
    // Recovery ends when the cumulative ACK passes the recovery point; no further reduction.
    assert!(!ci.in_recovery);
    assert_eq!(ci.ssthresh, 8 * MSS);
}

/// RFC 6675 section 5, step (4.3) on entering loss recovery: "Retransmit the first data segment
/// presumed dropped" at once, whatever pipe is (Linux PRR does the same: "Force a fast
/// retransmit upon entering fast recovery", tcp_cwnd_reduction). At the 3rd duplicate ACK
/// (200 ms) pipe is 14 MSS (segments 5..22 outstanding − 6, 7, 8 SACKed − 5 lost), above the
/// halved cwnd of 8 MSS, so the retransmission waits until the duplicate ACKs of the next round
/// bring pipe below cwnd: it leaves at 300 ms, one RTT late.
#[test]
fn fast_retransmit_leaves_on_the_third_dup_ack() {
    let p = run("newreno", drop_nth_data(Dir::C2S, 5), N);
    let (_, _, t) = around_recovery_entry(&p);
    assert_eq!(t, at_ms(200));
    let rtx = p.retransmissions(Dir::C2S);
    assert_eq!(rtx[0].at, at_ms(200), "retransmission should leave when loss is detected");
}

#[test]
fn one_lost_segment_cubic_multiplies_cwnd_by_0_7() {
    let p = run("cubic", drop_nth_data(Dir::C2S, 5), N);
    let ci = p.client_info();
    assert_eq!((ci.segments_retransmitted, ci.fast_recoveries, ci.rto_count), (1, 1, 0));
    // Same slow start as NewReno up to the loss: 16 MSS. RFC 9438: ssthresh = cwnd · β_cubic (0.7).
    let (before, after, _) = around_recovery_entry(&p);
    assert_eq!(before.cwnd, 16 * MSS);
    assert_eq!(after.ssthresh, (16 * MSS * 7) / 10); // 23168 · 0.7 = 16217.6 -> 16217
    assert_eq!(after.ssthresh, 16217);
    assert_eq!(after.cwnd, after.ssthresh);
}

#[test]
fn three_lost_segments_one_recovery_episode() {
    // Segments 4, 6 and 8 of the first flight are lost: three holes in one window.
    let p = run("newreno", drop_data_nos(Dir::C2S, &[4, 6, 8]), N);
    let rtx = p.retransmissions(Dir::C2S);
    let mut seqs: Vec<_> = rtx.iter().map(|s| s.seg.seq).collect();
    seqs.sort();
    assert_eq!(seqs, vec![seq_of(4), seq_of(6), seq_of(8)], "each hole retransmitted exactly once");
    let ci = p.client_info();
    assert_eq!(ci.segments_lost, 3);
    assert_eq!(ci.fast_recoveries, 1, "one episode for one window");
    assert_eq!(ci.rto_count, 0);
    // One window reduction: ssthresh never changes after the entry.
    // Loss of 4 is detected on the 3rd duplicate ACK at 200 ms, cwnd then 15 MSS (10 + 2 + 2 + 1).
    let (before, after, t) = around_recovery_entry(&p);
    assert_eq!(t, at_ms(200));
    assert_eq!(before.cwnd, 15 * MSS);
    assert_eq!(after.ssthresh, before.cwnd / 2);
    let entry = p.client_trace.iter().position(|(_, s)| s.in_recovery).unwrap();
    assert!(p.client_trace[entry..].iter().all(|(_, s)| s.ssthresh == after.ssthresh));
    // All three retransmissions go out before the episode ends.
    let exit = p.client_trace.iter().find(|(u, s)| *u > t && !s.in_recovery).unwrap().0;
    assert!(rtx.iter().all(|s| s.at < exit));
}

#[test]
fn burst_of_three_consecutive_losses() {
    let p = run("newreno", drop_data_nos(Dir::C2S, &[5, 6, 7]), N);
    let rtx = p.retransmissions(Dir::C2S);
    assert_eq!(rtx.iter().map(|s| s.seg.seq).collect::<Vec<_>>(), vec![seq_of(5), seq_of(6), seq_of(7)]);
    let ci = p.client_info();
    assert_eq!((ci.segments_lost, ci.fast_recoveries, ci.rto_count), (3, 1, 0));
}

#[test]
fn receiver_sack_blocks_cover_the_received_islands() {
    // Holes at 4, 6, 8: the ACK after segment 10 reports the islands {9,10}, {7}, {5}, newest first.
    let p = run("newreno", drop_data_nos(Dir::C2S, &[4, 6, 8]), N);
    let last = p.pure_acks(Dir::S2C).filter(|s| s.at == at_ms(150)).last().copied().unwrap().seg;
    assert_eq!(last.ack, seq_of(4));
    let blocks: Vec<_> = last.sacks().iter().map(|b| (b.start, b.end)).collect();
    assert_eq!(blocks, vec![(seq_of(9), seq_of(11)), (seq_of(7), seq_of(8)), (seq_of(5), seq_of(6))]);
}

#[test]
fn lost_retransmission_is_detected_without_rto() {
    // The 5th segment and its first retransmission are both lost. The first retransmission
    // leaves at once when recovery starts (200 ms, RFC 6675 step 4.3); segments sent at 300 ms
    // (later than 200 ms + min_rtt/4) are SACKed by ACKs arriving at 400 ms, which marks the
    // retransmission lost again: it is resent at 400 ms. The RTO, armed by the head
    // retransmission at 200 ms and restarted only by cumulative ACKs (RFC 6298 5.3), would
    // expire at that same instant with the 200 ms minimum, so min_rto is 1 s here to show the
    // detection alone repairs the loss.
    let target = seq_of(5);
    let mut seen = 0;
    let fault: Fault = Box::new(move |s: &Sent| {
        if s.dir == Dir::C2S && s.is_data() && s.seg.seq == target {
            seen += 1;
            seen <= 2
        } else {
            false
        }
    });
    let mut cfg = SubflowConfig::linux();
    cfg.min_rto = ms(1000);
    let n = 300 * MSS;
    let mut p = Pair::new(config("newreno", cfg)).with_fault(fault);
    p.client.write(n);
    p.run_until_delivered(n, at_ms(10_000));
    p.drive();
    assert_eq!(p.server.info().bytes_delivered, n);
    let rtx = p.retransmissions(Dir::C2S);
    assert_eq!(rtx.len(), 2, "{rtx:?}");
    assert!(rtx.iter().all(|s| s.seg.seq == target));
    assert!(rtx[0].dropped() && !rtx[1].dropped());
    assert_eq!(rtx[0].at, at_ms(200));
    assert_eq!(rtx[1].at, at_ms(400));
    let ci = p.client_info();
    assert_eq!((ci.segments_lost, ci.fast_recoveries, ci.rto_count), (2, 1, 0));
    // Still one reduction: the lost retransmission belongs to the same episode.
    assert_eq!(ci.ssthresh, 8 * MSS);
}

#[test]
fn lost_acks_are_covered_by_later_cumulative_acks() {
    // All ACKs between 140 and 160 ms are lost (the whole first round's ACKs): the sender times out
    // at 100 ms + RTO 300 ms, retransmits the first segment, and the receiver's ACK for that
    // duplicate acknowledges everything, so nothing else is resent.
    let p = run("newreno", drop_acks_between(Dir::S2C, at_ms(140), at_ms(160)), 30 * MSS);
    let rtx = p.retransmissions(Dir::C2S);
    assert_eq!(rtx.len(), 1, "{rtx:?}");
    assert_eq!(rtx[0].seg.seq, seq_of(1));
    assert_eq!(rtx[0].at, at_ms(400));
    assert_eq!(p.client_info().rto_count, 1);
}
