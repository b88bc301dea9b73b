//! eMPTCP's delayed establishment and mode switches on hand-built views. Subflow 0 is WiFi
//! (srtt 50 ms), subflow 1 LTE (srtt 100 ms). Throughputs are set through the subflows'
//! `delivered` counters over 1 s periods: x Mbit/s = x · 125 000 bytes.
use super::*;
use crate::algo::FromParams;
use crate::info::ConnInfo;
use crate::sched::tests::{busy, idle, send, unusable, view};
use crate::sched::{SchedSpec, SchedSubflow};

fn emptcp(p: EmptcpParams) -> Emptcp {
    let mut e = Emptcp::from_params(&p);
    e.start(&SchedStart { now: Instant::ZERO, paths: 2, mss: 1448, rcv_buf: 1 << 20 });
    e
}

/// WiFi busy (so that minRTT would take LTE if allowed), each with `delivered` bytes.
fn subs(wifi_delivered: u64, lte_delivered: u64) -> [SchedSubflow; 2] {
    let (mut w, mut l) = (busy(50), idle(100));
    w.info.delivered = wifi_delivered;
    l.info.delivered = lte_delivered;
    [w, l]
}

fn secs(s: f64) -> Instant {
    Instant((s * 1e9) as u64)
}

fn pick(e: &mut Emptcp, t: Instant, subs: &[SchedSubflow], acked: u64) -> (Verdict, Vec<usize>) {
    let c = ConnInfo { data_acked: acked, ..ConnInfo::default() };
    send(e, t, &view(subs, &c))
}

const MBIT: u64 = 125_000;

/// Before κ bytes are acknowledged (τ off), LTE carries nothing while WiFi is usable, even with
/// WiFi's window full; it does when WiFi is unusable. At κ: every interface.
#[test]
fn delayed_establishment_by_bytes() {
    let mut e = emptcp(EmptcpParams { tau_s: 0.0, ..EmptcpParams::default() });
    assert_eq!(pick(&mut e, secs(5.0), &subs(0, 0), 999_999), (Verdict::Wait, vec![]));
    assert_eq!(e.mode(), EmptcpMode::Delayed);
    assert_eq!(pick(&mut e, secs(5.0), &[unusable(50), idle(100)], 999_999), (Verdict::Send, vec![1]));
    assert_eq!(pick(&mut e, secs(5.0), &[idle(50), idle(100)], 999_999), (Verdict::Send, vec![0]));
    assert_eq!(pick(&mut e, secs(5.0), &subs(0, 0), 1_000_000), (Verdict::Send, vec![1]));
    assert_eq!(e.mode(), EmptcpMode::Both);
}

/// Or τ after the connection started (default 0.2 s).
#[test]
fn delayed_establishment_by_time() {
    let mut e = emptcp(EmptcpParams::default());
    assert_eq!(pick(&mut e, secs(0.199), &subs(0, 0), 0), (Verdict::Wait, vec![]));
    assert_eq!(pick(&mut e, secs(0.2), &subs(0, 0), 0), (Verdict::Send, vec![1]));
}

/// Mode switches, EWMA gain 1 (each period alone), no tail charge, established at t = 0:
/// * 1 s: x = 5, y = 15: e_wifi = (137.01·5 + 132.86)/5 = 163.62, e_both = 2885.5/20 = 144.28:
///   stays BOTH.
/// * 2 s: x = 0.3, y = 0.5 (a flow's share of crowded interfaces): e_wifi = 579.88,
///   e_both = 1487.99/0.8 = 1859.99: WIFI_ONLY; LTE is no longer used with WiFi busy.
/// * 3 s: WiFi delivered nothing: e_wifi = ∞: BOTH.
#[test]
fn mode_switches() {
    let p = EmptcpParams { kappa_bytes: 0, ewma: 1.0, tail_amortise: 0.0, ..EmptcpParams::default() };
    let mut e = emptcp(p);
    assert_eq!(pick(&mut e, secs(0.0), &subs(0, 0), 0), (Verdict::Send, vec![1]));
    let (w1, l1) = (5 * MBIT, 15 * MBIT);
    assert_eq!(pick(&mut e, secs(1.0), &subs(w1, l1), 0), (Verdict::Send, vec![1]));
    assert_eq!(e.mode(), EmptcpMode::Both);
    let (w2, l2) = (w1 + 3 * MBIT / 10, l1 + MBIT / 2);
    assert_eq!(pick(&mut e, secs(1.5), &subs(w2, l2), 0), (Verdict::Send, vec![1]), "mid-period: no decision");
    assert_eq!(pick(&mut e, secs(2.0), &subs(w2, l2), 0), (Verdict::Wait, vec![]));
    assert_eq!(e.mode(), EmptcpMode::WifiOnly);
    assert_eq!(pick(&mut e, secs(3.0), &subs(w2, l2), 0), (Verdict::Send, vec![1]));
    assert_eq!(e.mode(), EmptcpMode::Both);
}

/// Hysteresis: x = 6, y = 10: e_wifi = 159.15, e_both = 2762.66/16 = 172.67. WiFi alone is
/// cheaper, but not by 10 %: BOTH stays; with hyst = 0 it switches.
#[test]
fn hysteresis() {
    for (hyst, mode) in [(0.1, EmptcpMode::Both), (0.0, EmptcpMode::WifiOnly)] {
        let p = EmptcpParams { kappa_bytes: 0, ewma: 1.0, hyst, ..EmptcpParams::default() };
        let mut e = emptcp(p);
        let _ = pick(&mut e, secs(0.0), &subs(0, 0), 0);
        let _ = pick(&mut e, secs(1.0), &subs(6 * MBIT, 10 * MBIT), 0);
        assert_eq!(e.mode(), mode, "hyst {hyst}");
    }
}

/// The idle cellular interface's promotion + tail (12 585.5 mJ) spread over the next period's
/// bits. In WIFI_ONLY with LTE's last estimate 0.5 Mbit/s, WiFi drops to x = 0.01:
/// e_wifi = 13 423, e_both = 1448.26/0.51 = 2839.7 without the charge (switch to BOTH), plus
/// 12 585.5/0.51 = 24 677 with it (stay).
#[test]
fn tail_amortisation() {
    for (tail, mode) in [(0.0, EmptcpMode::Both), (1.0, EmptcpMode::WifiOnly)] {
        let p = EmptcpParams { kappa_bytes: 0, ewma: 1.0, tail_amortise: tail, ..EmptcpParams::default() };
        let mut e = emptcp(p);
        let _ = pick(&mut e, secs(0.0), &subs(0, 0), 0);
        let (w, l) = (3 * MBIT / 10, MBIT / 2);
        let _ = pick(&mut e, secs(1.0), &subs(w, l), 0);
        assert_eq!(e.mode(), EmptcpMode::WifiOnly);
        let _ = pick(&mut e, secs(2.0), &subs(w + MBIT / 100, l), 0);
        assert_eq!(e.mode(), mode, "tail_amortise {tail}");
    }
}

/// The EWMA (default gain 0.5): WiFi 1 then 6 Mbit/s, LTE 20 then 2. The last period alone
/// (gain 1: x = 6, y = 2: e_wifi = 159.15, e_both = 2346.9/8 = 293.4) switches to WIFI_ONLY;
/// smoothed (x = 3.5, y = 11: e_wifi = 174.97, e_both = 2472.1/14.5 = 170.5) BOTH stays.
#[test]
fn ewma_smooths() {
    for (ewma, mode) in [(0.5, EmptcpMode::Both), (1.0, EmptcpMode::WifiOnly)] {
        let p = EmptcpParams { kappa_bytes: 0, tail_amortise: 0.0, ewma, ..EmptcpParams::default() };
        let mut e = emptcp(p);
        let _ = pick(&mut e, secs(0.0), &subs(0, 0), 0);
        let _ = pick(&mut e, secs(1.0), &subs(MBIT, 20 * MBIT), 0);
        assert_eq!(e.mode(), EmptcpMode::Both);
        let _ = pick(&mut e, secs(2.0), &subs(7 * MBIT, 22 * MBIT), 0);
        assert_eq!(e.mode(), mode, "ewma {ewma}");
    }
}

/// The interface mapping: with wifi_mask = 2, subflow 1 is the WiFi one.
#[test]
fn wifi_mask() {
    let mut e = emptcp(EmptcpParams { wifi_mask: 2, tau_s: 0.0, ..EmptcpParams::default() });
    assert_eq!(pick(&mut e, secs(0.0), &[idle(50), busy(100)], 0), (Verdict::Wait, vec![]));
    assert_eq!(pick(&mut e, secs(0.0), &[idle(50), idle(100)], 0), (Verdict::Send, vec![1]));
}

/// By name, with parameters.
#[test]
fn registered() {
    let s = SchedSpec::parse("emptcp:kappa_bytes=500000,tail_amortise=0,wifi_mask=1").unwrap();
    assert_eq!(s.build().name(), "emptcp");
    assert!(SchedSpec::parse("emptcp:hyst=1.5").is_err());
}
