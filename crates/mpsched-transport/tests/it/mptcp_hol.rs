//! The shared connection-level receive buffer and head-of-line (HoL) blocking (RFC 8684
//! §3.3.4), opportunistic retransmission and penalization (Linux `mptcp_rcv_buf_optimization`), and
//! how BLEST / ECF avoid the slow path (`mptcp_blest.c`, `mptcp_ecf.c`).
//!
//! HoL setup: a 64 KiB shared receive buffer; path 0 fast (10 ms one-way, 20 Mbit/s), path 1
//! very slow (100 ms one-way, 1 Mbit/s). Congestion control "external" keeps every window at
//! its initial 10 segments (penalization still halves it), so the scheduler is the only moving
//! part: the fast subflow is window-limited every 20 ms and minRTT then puts segments on the
//! slow subflow, whose late arrival blocks the shared window.

use crate::util::*;
use mpsched_transport::{ConnInfo, Flags, Instant, Side};

const BUF: u64 = 64 << 10;

fn hol_pair(sched: &str) -> Pair {
    let mut cfg = multipath_config(sched, 2, BUF);
    cfg.cc = mpsched_transport::CcSpec::parse("external").unwrap();
    Pair::new(cfg).with_path(0, ms(10), Some(20_000_000)).with_path(1, ms(100), Some(1_000_000))
}

/// Runs the HoL setup for 3 s with an endless transfer; returns (client, server) counters.
fn hol_run(sched: &str) -> (Pair, ConnInfo, ConnInfo) {
    let mut p = hol_pair(sched);
    p.client.write(100 << 20);
    p.drive_until(at_ms(3000));
    let now = p.now;
    let c = p.client.info_at(now);
    let s = p.server.info_at(now);
    (p, c, s)
}

/// The receiver never holds more than its buffer: out-of-order plus unread bytes <= 64 KiB
/// after every input, and HoL did happen (out-of-order bytes were held).
fn assert_buffer_bounded(p: &Pair) {
    let max_ooo = p.server_trace.iter().map(|(_, i)| i.ooo_bytes).max().unwrap();
    assert!(max_ooo > 10 * MSS, "HoL: out-of-order bytes held ({max_ooo})");
    for (t, i) in &p.server_trace {
        assert!(i.ooo_bytes + i.rcv_window <= BUF, "{t:?}: {i:?}");
        assert!(i.ooo_bytes <= BUF, "{t:?}: {i:?}");
    }
}

/// minRTT without RP (no `mptcp_rcv_buf_optimization`): the slow subflow's segments hold the
/// window; the sender is window-blocked most of the time (send_blocked_seconds) and never
/// retransmits opportunistically. With RP (default minRTT): the blocking segment is resent on the
/// fast subflow and the slow subflow is penalized; the connection delivers clearly more.
#[test]
fn opportunistic_retransmission_and_penalization_relieve_hol() {
    let (p_norp, c_norp, s_norp) = hol_run("minrtt-norp");
    let (p_rp, c_rp, s_rp) = hol_run("minrtt");

    assert_eq!((c_norp.opportunistic_retransmissions, c_norp.penalizations), (0, 0));
    assert!(c_norp.send_blocked_seconds > 1.0, "norp blocked {:.3} s", c_norp.send_blocked_seconds);
    assert!(p_norp.client_sf(1).bytes_sent > 20 * MSS, "minRTT uses the slow path");
    assert!(s_norp.ooo_byte_seconds > 0.0);

    assert!(c_rp.opportunistic_retransmissions > 0, "{c_rp:?}");
    assert!(c_rp.penalizations > 0, "{c_rp:?}");
    assert!(c_rp.send_blocked_seconds > 0.0);
    assert!(c_rp.send_blocked_seconds < c_norp.send_blocked_seconds);
    // Penalization halves the slow subflow's window (external CC never grows it back).
    assert!(p_rp.client_sf(1).cwnd < 10 * MSS, "{:?}", p_rp.client_sf(1));
    // Each opportunistic retransmission is a data-level duplicate at the receiver once the slow
    // copy arrives too (or vice versa).
    assert!(s_rp.duplicate_bytes > 0);

    assert!(
        s_norp.bytes_delivered * 10 < s_rp.bytes_delivered * 8,
        "norp {} vs rp {} bytes in 3 s",
        s_norp.bytes_delivered,
        s_rp.bytes_delivered
    );
    for p in [&p_norp, &p_rp] {
        assert_buffer_bounded(p);
        assert_eq!(p.app_read[1], p.server.info().bytes_delivered, "in order, read once");
    }
}

/// Penalization is rate-limited per subflow that finds the window blocked (Linux
/// `mptcp_rcv_buf_optimization`: at most once per that subflow's srtt, `last_rbuf_opti`), and
/// each one halves the slow carrier's window (`Subflow::penalize`: cwnd / 2 rounded down to
/// whole segments, at least one; external CC never grows it back). The client is polled at the
/// start of each step (at the previous instant) and after each of its inputs, so penalizations
/// are observed around both. None comes closer than the fast path's 20 ms propagation RTT (a
/// lower bound of its srtt) to the previous one.
#[test]
fn penalization_halves_slow_window_at_most_once_per_fast_srtt() {
    let mut p = hol_pair("minrtt");
    p.client.write(100 << 20);
    let mut times: Vec<Instant> = Vec::new();
    let mut observe = |p: &Pair, before: u64, cwnd1: u64| {
        let after = p.client.info().penalizations;
        if after == before {
            return;
        }
        assert_eq!(after, before + 1, "{:?}: one penalization per poll", p.now);
        assert_eq!(p.client_sf(1).cwnd, (cwnd1 / 2 / MSS * MSS).max(MSS), "{:?}: halved", p.now);
        if let Some(&last) = times.last() {
            assert!(p.now.saturating_duration_since(last) >= ms(20), "{:?} after {last:?}", p.now);
        }
        times.push(p.now);
    };
    while p.now < at_ms(3000) {
        let (before, cwnd1) = (p.client.info().penalizations, p.client_sf(1).cwnd);
        p.flush();
        observe(&p, before, cwnd1);
        let (before, cwnd1) = (p.client.info().penalizations, p.client_sf(1).cwnd);
        p.step();
        observe(&p, before, cwnd1);
    }
    assert!(times.len() >= 3, "penalized {} times: {times:?}", times.len());
    assert_eq!(p.client_sf(1).cwnd, MSS, "halved down to one segment");
}

/// BLEST and ECF predict the blocking and keep data off the slow path (wait for the fast
/// subflow instead); they deliver at least as much as minRTT with RP, with no HoL.
#[test]
fn blest_and_ecf_keep_data_off_the_slow_path() {
    let (_, _, s_minrtt) = hol_run("minrtt");
    for sched in ["blest", "ecf"] {
        let (p, c, s) = hol_run(sched);
        assert!(p.client_sf(1).established, "{sched}");
        assert!(p.client_sf(1).bytes_sent <= 2 * MSS, "{sched}: {:?}", p.client_sf(1));
        assert!(
            s.bytes_delivered >= s_minrtt.bytes_delivered,
            "{sched}: {} < minRTT {}",
            s.bytes_delivered,
            s_minrtt.bytes_delivered
        );
        assert!(c.send_blocked_seconds < 0.1, "{sched}: blocked {:.3}", c.send_blocked_seconds);
    }
}

/// A receiving application that does not read fills the shared buffer: the advertised window
/// drops below one MSS (rwnd_full_seconds grows at the receiver), the sender is blocked
/// (send_blocked_seconds), and never more than the buffer is held. Once the application reads,
/// the window update restarts the transfer and every byte arrives once.
#[test]
fn unread_buffer_closes_the_shared_window() {
    let mut p = Pair::new(multipath_config("minrtt", 2, BUF))
        .with_path(0, ms(20), Some(10_000_000))
        .with_path(1, ms(30), Some(10_000_000))
        .server_not_reading();
    let total = 1_000_000;
    p.client.write(total);
    p.drive_until(at_ms(1000));
    let now = p.now;
    let s = p.server.info_at(now);
    let c = p.client.info_at(now);
    assert!(s.bytes_delivered <= BUF && s.bytes_delivered > BUF - 2 * MSS, "{s:?}");
    assert!(s.rwnd_full_seconds > 0.5, "{s:?}");
    assert!(c.send_blocked_seconds > 0.5, "{c:?}");
    for (t, i) in &p.server_trace {
        assert!(i.ooo_bytes + i.bytes_delivered <= BUF, "{t:?}: {i:?}");
    }
    // The application reads from now on.
    p.server_reads = true;
    p.read(Side::Server, u64::MAX);
    p.run_until_delivered(total, at_ms(10_000));
    p.drive();
    // Both subflows share the window. (Before the application reads, only subflow 0 may have
    // carried data: subflow 1 is pre-established until its 4th ACK at 40 + 60 + 60 = 160 ms,
    // RFC 8684 §3.2, by when subflow 0's slow start has already taken the whole 64 KiB window.)
    assert!(p.client_data_on(0).count() > 0 && p.client_data_on(1).count() > 0, "both subflows used");
    assert_eq!(p.app_read[1], total);
    assert_eq!(p.server.info().bytes_delivered, total);
}

/// RFC 8684 §3.3.4: the receiver must not shrink the right edge DATA_ACK + window. In the HoL run
/// the receiver advertises B − ooo − unread from an unchanged DATA_ACK, so every out-of-order
/// arrival moves the right edge left (e.g. 389 888 → 358 032 while DATA_ACK stays at 324 352) and
/// the sender, which takes the latest edge, counts the out-of-order bytes twice (in flight and
/// against the window): at most ~46 KB of the 64 KiB buffer is ever outstanding.
#[test]
fn receiver_never_shrinks_the_right_edge() {
    let (p, _, _) = hol_run("minrtt-norp");
    let mut edge = 0u64;
    for s in p.sent(Dir::S2C).filter(|s| !s.seg.flags.contains(Flags::SYN)) {
        let e = s.seg.data_ack + s.seg.wnd as u64;
        assert!(e >= edge, "{:?}: right edge {e} after {edge} (DATA_ACK {})", s.at, s.seg.data_ack);
        edge = e;
    }
}

/// RFC 8684 §3.3.4: the sender keeps the largest right edge it has seen (Linux
/// tcp_may_update_window: an ACK that acknowledges nothing new and carries a smaller window does
/// not shrink it). Setup: everything written so far is DATA_ACKed, right edge = DATA_ACK + 64 KiB.
/// A copy of the last ACK arrives again with a 2-MSS window (a duplicate from the network). Then 20
/// segments are written: the 10-segment windows of the two idle subflows would take all of them at
/// once.
#[test]
fn sender_keeps_largest_right_edge() {
    let mut p = Pair::new(multipath_config("minrtt", 2, BUF)).with_path(0, ms(10), None).with_path(1, ms(10), None);
    p.drive_until(at_ms(200));
    p.client.write(4 * MSS);
    p.drive();
    assert_eq!(p.client.info().data_acked, 4 * MSS);
    let last = *p.sent(Dir::S2C).filter(|s| s.seg.data_ack == 4 * MSS).last().unwrap();
    let mut dup = last.seg;
    dup.wnd = 2 * MSS as u32;
    p.client.handle_segment(p.now, last.path, &dup);
    p.client.write(20 * MSS);
    let before = p.data(Dir::C2S).count();
    p.flush();
    let burst = p.data(Dir::C2S).count() - before;
    assert_eq!(burst, 20, "sent at once after the stale window update");
}

/// The external scheduler's fallback, when the policy chooses nothing (all weights zero), is the
/// named minRTT: with `fallback=minrtt` (the default) it sends exactly the segments `minrtt`
/// sends in the HoL setup, opportunistic retransmissions and penalizations included; with
/// `fallback=minrtt-norp` exactly those of `minrtt-norp`.
#[test]
fn external_fallback_is_the_named_minrtt() {
    for (fallback, builtin) in [("minrtt", "minrtt"), ("minrtt-norp", "minrtt-norp")] {
        let (p_ref, c_ref, _) = hol_run(builtin);
        let mut p = hol_pair(&format!("external:mode=weights,fallback={fallback}"));
        p.client.decide(mpsched_transport::Decision::Weights([0.0; 8]));
        p.client.write(100 << 20);
        p.drive_until(at_ms(3000));
        let c = p.client.info_at(p.now);
        assert_eq!(p.log, p_ref.log, "fallback={fallback}");
        assert_eq!(
            (c.opportunistic_retransmissions, c.penalizations),
            (c_ref.opportunistic_retransmissions, c_ref.penalizations)
        );
    }
}
