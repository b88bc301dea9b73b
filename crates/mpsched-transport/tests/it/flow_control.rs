//! Receive window (flow control): the sender never has more than the receiver's buffer beyond the
//! application's read point.

use crate::util::*;
use mpsched_transport::{ConnConfig, Instant, Side};

/// A buffer of `rcv_buf` payload bytes ([`linux_whole_segments`]: the kernel's payload share
/// of a buffer is tested in kernel_overheads.rs).
fn small_buffer(rcv_buf: u64) -> ConnConfig {
    let mut cfg = config("newreno", linux_whole_segments());
    cfg.rcv_buf = rcv_buf;
    cfg
}

/// Server bytes delivered (= read, when the app reads everything) as of time `t`.
fn delivered_at(p: &Pair, t: Instant) -> u64 {
    p.server_trace.iter().take_while(|(u, _)| *u <= t).last().map(|(_, c)| c.bytes_delivered).unwrap_or(0)
}

#[test]
fn non_reading_app_stops_the_sender_at_rcv_buf() {
    // 20 MSS of buffer (above IW 10, below the SYN-ACK's 65 535) and an application that never
    // reads: the right edge of the window stays at DSN 20·MSS.
    let rcv_buf = 20 * MSS;
    let mut p = Pair::new(small_buffer(rcv_buf)).server_not_reading();
    p.client.write(100 * MSS);
    p.drive_until(at_ms(5000));
    assert_eq!(p.app_read[1], 0);
    let max_end = p.data(Dir::C2S).map(|s| s.seg.dsn + s.seg.len as u64).max().unwrap();
    assert_eq!(max_end, rcv_buf, "the sender fills the buffer exactly, never beyond");
    assert_eq!(p.server.info().bytes_delivered, rcv_buf);
    assert_eq!(p.server.info().rcv_window, 0);
    // Every ACK advertises the free buffer: rcv_buf minus the unread bytes (all received ones).
    for a in p.pure_acks(Dir::S2C) {
        assert_eq!(a.seg.wnd as u64, rcv_buf - (a.seg.ack - 1), "{a:?}");
        assert_eq!(a.seg.data_ack, a.seg.ack - 1);
    }
    let ci = p.client_info();
    assert_eq!(ci.peer_wnd, 0);
    assert_eq!(ci.segments_retransmitted, 0);
    assert_eq!(ci.bytes_sent, rcv_buf);
    assert_eq!(p.client.info().bytes_sent_new, rcv_buf);
    assert_eq!(ci.outstanding, 0, "everything sent was acknowledged");
}

/// After a zero window the sender learns about reopened space either from a window update the
/// receiver sends when its application reads (RFC 1122 4.2.3.3 / RFC 9293 3.8.6.2.2: receiver SWS
/// avoidance announces the window once it grows by min(rcv_buf/2, MSS)), or from zero-window
/// probes (RFC 9293 3.8.6.1; Linux `tcp_probe_timer`). Neither exists:
/// `Connection::read` frees buffer space silently and the subflow has no persist timer, so once
/// the window is closed and everything is acknowledged, nothing is ever sent again.
#[test]
fn transfer_resumes_after_the_app_reads() {
    let rcv_buf = 20 * MSS;
    let mut p = Pair::new(small_buffer(rcv_buf)).server_not_reading();
    p.client.write(100 * MSS);
    p.drive_until(at_ms(1000));
    assert_eq!(p.server.info().bytes_delivered, rcv_buf);
    // The application drains its buffer and keeps reading from now on.
    p.read(Side::Server, u64::MAX);
    p.server_reads = true;
    p.run_until_delivered(100 * MSS, at_ms(5000));
}

/// The SYN and SYN-ACK always advertise 65 535 bytes (subflow.rs make_syn: `wnd: 65_535`), not
/// the receiver's free buffer. With a buffer smaller than the initial window (4 MSS < IW 10 MSS)
/// the whole first flight of 10 segments is sent, and the receiver (on_data has no window check)
/// accepts 10 MSS into a 4 MSS buffer.
#[test]
fn first_flight_respects_a_buffer_smaller_than_iw() {
    let rcv_buf = 4 * MSS;
    let mut p = Pair::new(small_buffer(rcv_buf)).server_not_reading();
    p.client.write(100 * MSS);
    p.drive_until(at_ms(2000));
    let max_end = p.data(Dir::C2S).map(|s| s.seg.dsn + s.seg.len as u64).max().unwrap();
    assert!(max_end <= rcv_buf, "sent up to DSN {max_end} into a {rcv_buf}-byte buffer");
    assert!(p.server.info().bytes_delivered <= rcv_buf);
    let synack = p.sent(Dir::S2C).find(|s| s.is_syn()).unwrap();
    assert_eq!(synack.seg.wnd as u64, rcv_buf, "the SYN-ACK should advertise the free buffer");
}

#[test]
fn reading_app_window_caps_the_flight() {
    // A 16 MSS buffer, drained at once by the application: the window, not cwnd, limits the
    // flight after the first RTT. Rounds: IW 10, then 16 segments per RTT.
    let rcv_buf = 16 * MSS;
    let n = 200 * MSS;
    let mut p = Pair::new(small_buffer(rcv_buf));
    p.client.write(n);
    p.run_until_delivered(n, at_ms(10_000));
    p.drive();
    let rounds: Vec<usize> = (1..=6u64)
        .map(|k| p.data(Dir::C2S).filter(|s| s.at >= at_ms(100 * k) && s.at < at_ms(100 * (k + 1))).count())
        .collect();
    assert_eq!(rounds, vec![10, 16, 16, 16, 16, 16]);
    // Invariant: each segment ends within rcv_buf of what the receiver had read when it was sent.
    for s in p.data(Dir::C2S) {
        let end = s.seg.dsn + s.seg.len as u64;
        assert!(end <= delivered_at(&p, s.at) + rcv_buf, "{s:?}");
    }
    assert_eq!(p.client_trace.iter().map(|(_, c)| c.outstanding).max().unwrap(), rcv_buf);
    assert!(p.client_info().cwnd > rcv_buf, "cwnd kept growing: the window was the limit");
    assert_eq!(p.server.info().duplicate_bytes, 0);
    assert_eq!(p.client_info().segments_retransmitted, 0);
}
