//! Multipath validation: MPTCP connection semantics, schedulers and coupled congestion control.
//! Each test states what is expected and why.

use crate::common::*;

/// Test 1: Two 10 Mbps paths (25 ms and 50 ms one-way), no loss, large buffers: a minRTT MPTCP
/// connection aggregates both, ≥ 18 Mbps (the payload ceiling is 2 × 9.65 = 19.3 Mbps).
#[test]
fn two_paths_aggregate_bandwidth() {
    let out = run(r#"
[sim]
duration_s = 30
[[paths]]
name = "a"
rate_mbps = 10
delay_ms = 25
queue_bytes = 500000
[[paths]]
name = "b"
rate_mbps = 10
delay_ms = 50
queue_bytes = 500000
[[flows]]
name = "mp"
paths = ["a", "b"]
scheduler = "minrtt"
"#);
    let g = series_mean(&out, "mp", "flow_goodput_mbps", 5.0, 30.0);
    assert!(g >= 18.0, "aggregate goodput {g:.2} Mbps, expected >= 18");
}

/// Two-subflow connection and one TCP flow through one 10 Mbps bottleneck (equal RTTs), the TCP
/// flow starting `offset_s` later: the goodput of each.
fn shared_bottleneck(cc: &str, offset_s: f64) -> (f64, f64) {
    let out = run(&format!(
        r#"
[sim]
duration_s = 120
[[links]]
name = "bn"
rate_mbps = 10
delay_ms = 10
queue_bytes = 100000
[[links]]
name = "bn-rev"
rate_mbps = 100
delay_ms = 10
[[links]]
name = "a"
rate_mbps = 100
delay_ms = 10
[[links]]
name = "b"
rate_mbps = 100
delay_ms = 10
[[links]]
name = "c"
rate_mbps = 100
delay_ms = 10
[[paths]]
name = "pa"
forward = ["a", "bn"]
reverse = ["bn-rev"]
[[paths]]
name = "pb"
forward = ["b", "bn"]
reverse = ["bn-rev"]
[[paths]]
name = "pc"
forward = ["c", "bn"]
reverse = ["bn-rev"]
[[flows]]
name = "mp"
paths = ["pa", "pb"]
cc = "{cc}"
[[flows]]
name = "tcp"
path = "pc"
cc = "newreno"
start_s = {offset_s}
"#
    ));
    (flow_f64(&out, "mp", "goodput_mbps"), flow_f64(&out, "tcp", "goodput_mbps"))
}

/// The connection's goodput over the TCP flow's, mean over eight start offsets of the TCP flow
/// (0-350 ms): one run's ratio depends on the flows' loss phases (LIA: 1.05-1.55 over these
/// offsets), their mean much less.
fn share_ratio(cc: &str) -> f64 {
    let offsets = [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35];
    offsets.iter().map(|&o| shared_bottleneck(cc, o)).map(|(mp, tcp)| mp / tcp).sum::<f64>() / 8.0
}

/// Test 2: RFC 6356 goal 2 ("do no harm"): a coupled connection whose subflows share a bottleneck
/// with one TCP flow takes about what that TCP flow takes: OLIA and BALIA 0.8–1.25× (measured
/// 1.07 and 1.16, mean over start offsets). LIA takes more, 1.27× (measured; LIA is known to be
/// more aggressive towards TCP users than goal 2 intends: Khalili et al., "MPTCP is not
/// Pareto-optimal", CoNEXT 2012, the OLIA paper), bounded here by 1.35×. Uncoupled NewReno
/// subflows behave as two TCP flows and take clearly more (≥ 1.5×; measured 2.1).
#[test]
fn coupled_cc_is_fair_to_tcp_at_a_shared_bottleneck() {
    let mut report = Vec::new();
    for (cc, hi) in [("lia", 1.35), ("olia", 1.25), ("balia", 1.25)] {
        let r = share_ratio(cc);
        report.push(format!("{cc}: mptcp / tcp {r:.3}"));
        assert!((0.8..=hi).contains(&r), "{}", report.join("\n"));
    }
    let r = share_ratio("newreno");
    assert!(r >= 1.5, "uncoupled newreno: mptcp / tcp {r:.3}");
    eprintln!("{}", report.join("\n"));
}

fn hol_case(paths: &str, scheduler: &str) -> f64 {
    let out = run(&format!(
        r#"
[sim]
duration_s = 30
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
{paths}
scheduler = "{scheduler}"
# payload share (158/256, the linux profile) 64 KB
rcv_buf_bytes = 106184
"#
    ));
    flow_f64(&out, "f", "goodput_mbps")
}

/// Test 3: Head-of-line blocking (paths 10 Mbps/10 ms and 1 Mbps/200 ms, 64 KB receive buffer): data
/// sent on the slow path holds the shared window while it crosses 400 ms of RTT, so minRTT
/// without opportunistic retransmission gets less than the fast path alone; BLEST and ECF
/// avoid the slow path when it would block the window and recover ≥ 90% of the fast path alone.
#[test]
fn hol_blocking_orderings() {
    let fast_alone = hol_case(r#"path = "fast""#, "minrtt");
    let both = r#"paths = ["fast", "slow"]"#;
    let norp = hol_case(both, "minrtt-norp");
    let rp = hol_case(both, "minrtt");
    let blest = hol_case(both, "blest");
    let ecf = hol_case(both, "ecf");
    let msg =
        format!("fast alone {fast_alone:.2}, minrtt-norp {norp:.2}, minrtt {rp:.2}, blest {blest:.2}, ecf {ecf:.2}");
    assert!(norp < fast_alone, "{msg}");
    assert!(rp > norp, "opportunistic retransmission should help: {msg}");
    assert!(blest >= 0.9 * fast_alone, "{msg}");
    assert!(ecf >= 0.9 * fast_alone, "{msg}");
}

/// Test 4: Path 2 down from 20 s to 40 s: the connection keeps delivering on path 1, reinjects what
/// was in flight on path 2, and uses path 2 again after it returns; every byte arrives once.
#[test]
fn path_down_and_up() {
    let out = run(r#"
[sim]
duration_s = 80
sample_interval_ms = 1000
[[paths]]
name = "p1"
rate_mbps = 10
delay_ms = 20
[[paths]]
name = "p2"
rate_mbps = 10
delay_ms = 30
[[flows]]
name = "mp"
paths = ["p1", "p2"]
size_bytes = 110000000
[[events]]
at_s = 20.0
path = "p2"
state = "down"
[[events]]
at_s = 40.0
path = "p2"
state = "up"
"#);
    let during = series_mean(&out, "mp", "flow_goodput_mbps", 21.0, 40.0);
    let after = series_mean(&out, "mp", "flow_goodput_mbps", 45.0, 55.0);
    let ts = &out.timeseries;
    // Subflow 1's throughput per sample, while down and after.
    let sf1 = |t0: f64, t1: f64| -> f64 {
        let (t, sf, thr) = (ts.f64s("time_s"), ts.i64s("subflow"), ts.f64s("throughput_mbps"));
        (0..t.len()).filter(|&i| sf[i] == 1 && t[i] > t0 && t[i] <= t1).map(|i| thr[i]).sum::<f64>()
    };
    assert!(during > 8.0, "path 1 alone should carry ~9.6 Mbps, got {during:.2}");
    // While down, subflow 2 only sends backed-off RTO retransmissions (a few segments).
    assert!(sf1(21.0, 40.0) < 0.5, "path 2 should be (almost) silent while down: {:.2} Mbit sent", sf1(21.0, 40.0));
    assert!(after > 17.0, "both paths again after 45 s, got {after:.2} Mbps");
    assert!(flow_i64(&out, "mp", "reinjected_bytes") > 0, "in-flight data of path 2 must be reinjected");
    // Byte conservation: the transfer completes with exactly its size delivered; reinjected
    // copies that also arrived on path 2 are dropped at the data level, not delivered twice.
    assert!(fct(&out, "mp").is_some(), "the 110 MB transfer completes");
    assert_eq!(flow_i64(&out, "mp", "bytes_delivered"), 110_000_000);
}

/// Test 5: Redundant scheduling: every segment crosses both paths, yet the application receives
/// each byte exactly once (duplicates are discarded at the data level).
#[test]
fn redundant_delivers_each_byte_once() {
    let out = run(r#"
[sim]
duration_s = 60
[[paths]]
name = "p1"
rate_mbps = 10
delay_ms = 20
loss = { model = "bernoulli", p = 0.01 }
[[paths]]
name = "p2"
rate_mbps = 8
delay_ms = 40
loss = { model = "bernoulli", p = 0.01 }
[[flows]]
name = "mp"
paths = ["p1", "p2"]
scheduler = "redundant"
size_bytes = 10000000
"#);
    assert_eq!(flow_i64(&out, "mp", "bytes_delivered"), 10_000_000);
    assert!(fct(&out, "mp").is_some());
    // Both subflows carried (nearly) the whole transfer.
    let sent = out.subflows.i64s("bytes_sent");
    assert!(sent[0] >= 9_000_000 && sent[1] >= 5_000_000, "bytes sent per subflow {sent:?}");
    assert!(flow_i64(&out, "mp", "duplicate_bytes") > 1_000_000, "copies must arrive and be dropped");
}

/// Mean connection goodput per sample over (t0, t1] for the handoff scenario.
fn handoff_run(scheduler: &str) -> Vec<(f64, f64)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/edar-handoff.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("scheduler = \"minrtt\"", &format!("scheduler = \"{scheduler}\""));
    let out = run(&text);
    let ts = &out.timeseries;
    let (t, sf, g) = (ts.f64s("time_s"), ts.i64s("subflow"), ts.f64s("flow_goodput_mbps"));
    (0..t.len()).filter(|&i| sf[i] == 0).map(|i| (t[i], g[i])).collect()
}

fn mean_in(s: &[(f64, f64)], ranges: &[(f64, f64)]) -> f64 {
    let v: Vec<f64> = s.iter().filter(|(t, _)| ranges.iter().any(|&(a, b)| *t > a && *t <= b)).map(|x| x.1).collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// Test 6: EdAR handoff scenario (paper Table III, `scenarios/edar-handoff.toml`): minRTT's goodput
/// drops while path 2 hands off (20–40 s, 60–80 s) and recovers afterwards.
/// Tolerances: the paper does not quantify its handoff, only minRTT's result (about 2.4 Mbps
/// during handoff against ~10 Mbps stable, Fig. 9a), so we assert the shape: handoff goodput
/// at most 75% of the pre-handoff level; after each handoff (45–55 s, 85–95 s) at least 80% of
/// it. Without opportunistic retransmission (the ns-3 minRTT the paper ran) the drop is
/// deeper: at most 50% of the pre-handoff level, i.e. the same order as the paper's 2.4/10
/// (over seeds 1–12 its handoff goodput averages 3.7 Mbps; with it, 5.8 Mbps).
/// The post/pre ratio is noisy (0.1 % loss, 128 KB buffer, the path returning after a 12 s
/// outage): over seeds 1–12 it spans 0.83–1.27 (mean 1.03) and seed 1, used here, is the
/// lowest (0.83), so the bound leaves 3 points of margin rather than none.
#[test]
fn edar_handoff_minrtt_drops_and_recovers() {
    let s = handoff_run("minrtt");
    let pre = mean_in(&s, &[(5.0, 20.0)]);
    let handoff = mean_in(&s, &[(20.0, 40.0), (60.0, 80.0)]);
    let post = mean_in(&s, &[(45.0, 55.0), (85.0, 95.0)]);
    let msg = format!("minrtt: pre {pre:.2}, handoff {handoff:.2}, post {post:.2} Mbps");
    assert!(handoff <= 0.75 * pre, "{msg}");
    assert!(post >= 0.80 * pre, "{msg}");
    let s = handoff_run("minrtt-norp");
    let pre = mean_in(&s, &[(5.0, 20.0)]);
    let handoff = mean_in(&s, &[(20.0, 40.0), (60.0, 80.0)]);
    assert!(handoff <= 0.5 * pre, "minrtt-norp: pre {pre:.2}, handoff {handoff:.2} Mbps");
    eprintln!("{msg}; minrtt-norp handoff {handoff:.2} Mbps");
}
