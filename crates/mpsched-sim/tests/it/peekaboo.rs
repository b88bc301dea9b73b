//! Peekaboo (Wu et al., IEEE JSAC 38(10), 2020) in the simulator: the HoL scenario of validation_multipath
//! (paths 10 Mbps/10 ms and 1 Mbps/200 ms, 64 KB receive buffer, 30 s greedy transfer) and two
//! equal-rate paths without HoL.

use crate::common::*;

/// The HoL scenario under `profile` with a receive buffer holding 64 KB of payload (the
/// `linux` profile's buffer holds 158/256 of its bytes as payload: 106,184 bytes).
fn hol_in(profile: &str, scheduler: &str, seed: u64) -> (f64, i64) {
    let rcv_buf = if profile == "linux" { 106_184 } else { 65_536 };
    let out = run(&format!(
        r#"
[sim]
duration_s = 30
seed = {seed}
profile = "{profile}"
[[paths]]
name = "fast"
rate_mbps = 10
delay_ms = 10
[[paths]]
name = "slow"
rate_mbps = 1
delay_ms = 200
[[flows]]
name = "f"
paths = ["fast", "slow"]
scheduler = "{scheduler}"
rcv_buf_bytes = {rcv_buf}
"#
    ));
    let slow_bytes = out.subflows.i64s("bytes_sent")[1];
    (flow_f64(&out, "f", "goodput_mbps"), slow_bytes)
}

fn hol(scheduler: &str, seed: u64) -> (f64, i64) {
    hol_in("linux", scheduler, seed)
}

/// Peekaboo's setting: one connection-level receive window shared by the subflows (the
/// out-of-tree MPTCP v0.9x kernel Peekaboo was built on advertises the meta socket's window on
/// every subflow; here the `ns3` profile, which has no per-subflow windows).
/// Why the ordering: minRTT without opportunistic retransmission puts a segment on the slow
/// path whenever the fast window is full, and each such segment holds the 64 KB shared window
/// for its ~400 ms RTT (HoL): about 1.4 Mbps. Peekaboo's first SEND decisions on the slow path
/// earn almost no goodput (the connection's DATA_ACK stalls behind them for ~0.4 s) while WAIT
/// for the fast path earns the fast path's rate, so it stops using the slow path: close to the
/// fast path's payload ceiling (ECF), at least 5x minRTT-norp, with under a tenth of
/// minRTT-norp's bytes on the slow path. (Measured 2026-11-28: 9.44 Mbps against 1.39; ECF
/// 9.42. Under the `linux` profile before its per-subflow windows: 9.30 against 1.42.) The
/// forks' per-packet reward ("peekaboo-pkt") also learns to wait here, less cleanly.
#[test]
fn peekaboo_beats_minrtt_norp_under_hol() {
    let (norp, norp_slow) = hol_in("ns3", "minrtt-norp", 1);
    let (pk, pk_slow) = hol_in("ns3", "peekaboo", 1);
    let (ecf, _) = hol_in("ns3", "ecf", 1);
    let msg =
        format!("minrtt-norp {norp:.2} Mbps ({norp_slow} B on slow), peekaboo {pk:.2} ({pk_slow} B), ecf {ecf:.2}");
    eprintln!("{msg}");
    assert!(pk >= 5.0 * norp, "{msg}");
    assert!(pk_slow * 10 < norp_slow, "{msg}");
    assert!(pk <= ecf + 0.05, "{msg}");
}

/// The same HoL scenario under the `linux` profile, whose subflows keep TCP windows of their own
/// as Linux 6.18's do (`SubflowConfig::subflow_windows`). As v0.95's schedulers do
/// (`mptcp_next_segment` → `get_available_subflow(.., false)`: no zero-window test), Peekaboo
/// sees a subflow with congestion window room as available; the chosen subflow then sends only
/// within its own window (`tcp_snd_wnd_test`). Measured: Peekaboo still beats minRTT-norp by
/// 4.4× (5.94 against 1.35 Mbit/s) but sends 0.69 MB on the slow path (minRTT-norp 1.67 MB, ECF
/// none) and stays well below ECF's 9.38; with one connection-level window it was 9.44 with
/// only the slow subflow's initial window on the slow path (above). Why it keeps part of its
/// SEND decisions here was not analysed. PINNED, an honest result of the model, not a target:
/// a change that moves it is to be looked at.
#[test]
fn peekaboo_under_linux_subflow_windows_is_pinned() {
    let (norp, norp_slow) = hol("minrtt-norp", 1);
    let (pk, pk_slow) = hol("peekaboo", 1);
    let (ecf, ecf_slow) = hol("ecf", 1);
    let msg = format!(
        "minrtt-norp {norp:.2} Mbps ({norp_slow} B on slow), peekaboo {pk:.2} ({pk_slow} B), ecf {ecf:.2} ({ecf_slow} B)"
    );
    eprintln!("{msg}");
    assert!((1.2..1.6).contains(&norp) && (5.4..6.5).contains(&pk), "{msg}");
    assert!(pk_slow * 2 < norp_slow && pk_slow > 500_000, "{msg}");
    assert!(ecf_slow == 0 && ecf > 9.0, "{msg}");
}

fn aggregate(scheduler: &str, seed: u64) -> f64 {
    let out = run(&format!(
        r#"
[sim]
duration_s = 30
seed = {seed}
[[paths]]
name = "a"
rate_mbps = 10
delay_ms = 10
[[paths]]
name = "b"
rate_mbps = 10
delay_ms = 30
[[flows]]
name = "f"
paths = ["a", "b"]
scheduler = "{scheduler}"
"#
    ));
    flow_f64(&out, "f", "goodput_mbps")
}

/// Two 10 Mbps paths (10 and 30 ms one-way), default (large) receive buffer, no loss: no HoL,
/// sending on the slower path adds throughput. What holds for every seed: Peekaboo delivers at
/// least one path's worth (its WAIT keeps the fast path full) and no more than minRTT (19.2).
/// KNOWN LIMITATION, measured and not asserted: the outcome is bimodal in the seed. With seeds
/// 1 and 3 it learns to aggregate (16.7, 17.1 Mbps), with 2, 4, 5, 6 it settles on WAIT (9.9).
/// The goodput reward of a decision depends on the decisions taken during its lifetime (mostly
/// WAIT => both actions earn ~10 Mbps; mostly SEND => both ~19), so early random adjustments
/// decide which equilibrium it falls into. (The forks' per-packet reward, "peekaboo-pkt", gets
/// 9.87 with seed 1.)
#[test]
fn peekaboo_never_below_one_path_without_hol() {
    let minrtt = aggregate("minrtt", 1);
    for seed in 1..=4 {
        let pk = aggregate("peekaboo", seed);
        assert!((9.5..=minrtt).contains(&pk), "seed {seed}: peekaboo {pk:.2}, minrtt {minrtt:.2} Mbps");
    }
}

/// Determinism: the stochastic adjustment draws from a stream seeded by the scenario seed, so
/// the same seed gives the same run.
#[test]
fn peekaboo_is_deterministic() {
    assert_eq!(hol("peekaboo", 3), hol("peekaboo", 3));
}
