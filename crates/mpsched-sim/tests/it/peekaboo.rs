//! Peekaboo (Wu et al., IEEE JSAC 38(10), 2020) in the simulator: the HoL scenario of validation_multipath
//! (paths 10 Mbps/10 ms and 1 Mbps/200 ms, 64 KB receive buffer, 30 s greedy transfer) and two
//! equal-rate paths without HoL.

use crate::common::*;

fn hol(scheduler: &str, seed: u64) -> (f64, i64) {
    let out = run(&format!(
        r#"
[sim]
duration_s = 30
seed = {seed}
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
# payload share (158/256, the linux profile) 64 KB
rcv_buf_bytes = 106184
"#
    ));
    let slow_bytes = out.subflows.i64s("bytes_sent")[1];
    (flow_f64(&out, "f", "goodput_mbps"), slow_bytes)
}

/// Why the ordering: minRTT without opportunistic retransmission puts a segment on the slow
/// path whenever the fast window is full, and each such segment holds the 64 KB shared window
/// for its ~400 ms RTT (HoL): about 1.4 Mbps. Peekaboo's first SEND decisions on the slow path
/// earn almost no goodput (the connection's DATA_ACK stalls behind them for ~0.4 s) while WAIT
/// for the fast path earns the fast path's rate, so it stops using the slow path: close to the
/// fast path's payload ceiling (~9.4 Mbps at 1,424 payload bytes a packet, ECF 9.38), at
/// least 5x minRTT-norp, with under a tenth of minRTT-norp's bytes on the slow path. (Measured: 9.30 Mbps, 14 240 B = the slow
/// subflow's initial window, against 1.42 Mbps and 1.95 MB.) The forks' per-packet reward
/// ("peekaboo-pkt") also learns to wait here, less cleanly (8.28 Mbps when measured with
/// 1,448-byte segments and the whole buffer as payload, before the linux profile's DSS option
/// and buffer share).
#[test]
fn peekaboo_beats_minrtt_norp_under_hol() {
    let (norp, norp_slow) = hol("minrtt-norp", 1);
    let (pk, pk_slow) = hol("peekaboo", 1);
    let (ecf, _) = hol("ecf", 1);
    let msg =
        format!("minrtt-norp {norp:.2} Mbps ({norp_slow} B on slow), peekaboo {pk:.2} ({pk_slow} B), ecf {ecf:.2}");
    eprintln!("{msg}");
    assert!(pk >= 5.0 * norp, "{msg}");
    assert!(pk_slow * 10 < norp_slow, "{msg}");
    assert!(pk <= ecf + 0.05, "{msg}");
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
