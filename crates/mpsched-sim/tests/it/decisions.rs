//! Decision points: the simulator pauses for outside policies and resumes exactly.

use crate::common::*;
use mpsched_sim::{Decision, Scenario, Sim, Stop};

fn scenario(scheduler: &str, extra: &str) -> String {
    format!(
        r#"
[sim]
duration_s = 20
[[paths]]
name = "wifi"
rate_mbps = 10
delay_ms = 10
loss = {{ model = "bernoulli", p = 0.002 }}
[[paths]]
name = "lte"
rate_mbps = 5
delay_ms = 40
loss = {{ model = "bernoulli", p = 0.002 }}
[[flows]]
name = "mp"
paths = ["wifi", "lte"]
scheduler = "{scheduler}"
rcv_buf_bytes = 262144
{extra}
"#
    )
}

fn sim(text: &str) -> Sim {
    Sim::new(Scenario::from_toml(text, "<test>").unwrap())
}

/// A per-packet external scheduler answered with "default" at every pause gives exactly the
/// run of the built-in scheduler its fallback names (minRTT with or without opportunistic
/// retransmission): pausing changes nothing.
#[test]
fn paused_default_answers_equal_the_builtin_scheduler() {
    for (builtin, external) in
        [("minrtt", "external-packet"), ("minrtt-norp", "external:mode=packet,fallback=minrtt-norp")]
    {
        let reference = run(&scenario(builtin, ""));
        let mut s = sim(&scenario(external, ""));
        let mut decisions = 0u64;
        loop {
            match s.advance(u64::MAX) {
                Stop::Decision { flow } => {
                    decisions += 1;
                    s.decide(flow as usize, Decision::Path(None));
                }
                Stop::Interval { .. } => unreachable!("no decision interval configured"),
                Stop::Deadline | Stop::Finished => break,
            }
        }
        let ext = s.output();
        assert!(decisions > 10_000, "one decision per segment, got {decisions}");
        assert_eq!(ext.timeseries, reference.timeseries, "{external}");
        assert_eq!(flow_i64(&ext, "mp", "bytes_delivered"), flow_i64(&reference, "mp", "bytes_delivered"));
        assert_eq!(ext.links, reference.links);
    }
}

/// A policy that always picks the LTE subflow: every data segment goes there (WiFi carries
/// only the handshake), proving answers are applied per packet.
#[test]
fn per_packet_answers_are_applied() {
    let mut s = sim(&scenario("external-packet", ""));
    loop {
        match s.advance(u64::MAX) {
            Stop::Decision { flow } => s.decide(flow as usize, Decision::Path(Some(1))),
            Stop::Interval { .. } => {}
            Stop::Deadline | Stop::Finished => break,
        }
    }
    let out = s.output();
    let sent = out.subflows.i64s("bytes_sent");
    assert_eq!(sent[0], 0, "wifi carried data: {sent:?}");
    assert!(sent[1] > 1_000_000, "{sent:?}");
}

/// Per-interval decisions: the sim stops every `decision_interval_ms`; a mode switch to
/// redundant sends every segment on both subflows from then on.
#[test]
fn interval_decisions_switch_modes() {
    let mut s = sim(&scenario("external-mode", "decision_interval_ms = 100"));
    let mut stops = Vec::new();
    loop {
        match s.advance(u64::MAX) {
            Stop::Interval { flow } => {
                stops.push(s.now_ns());
                // Normal for the first 10 s, redundant afterwards.
                let mode = if s.now_ns() >= 10_000_000_000 { 1 } else { 0 };
                s.decide(flow as usize, Decision::Mode(mode));
            }
            Stop::Decision { .. } => unreachable!("mode scheduling never asks per packet"),
            Stop::Deadline | Stop::Finished => break,
        }
    }
    assert_eq!(stops.len(), 200, "every 100 ms from 0.1 s to 20.0 s");
    assert!(stops.windows(2).all(|w| w[1] - w[0] == 100_000_000));
    let out = s.output();
    let redundant = flow_i64(&out, "mp", "redundant_bytes");
    assert!(redundant > 1_000_000, "redundant copies after 10 s: {redundant}");
}

/// `advance(until)` stops at the deadline and resumes to the same end state as one call.
#[test]
fn deadlines_split_a_run_without_changing_it() {
    let whole = run(&scenario("minrtt", ""));
    let mut s = sim(&scenario("minrtt", ""));
    let mut t = 0;
    loop {
        t += 333_333_333;
        match s.advance(t) {
            Stop::Deadline => assert_eq!(s.now_ns(), t),
            Stop::Finished => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(s.output().summary_json, whole.summary_json);
}

/// EdAR's transmission interval: decisions every minimum subflow RTT (about 2·10 ms + queueing).
#[test]
fn min_rtt_decision_interval_tracks_the_fastest_subflow() {
    let mut s = sim(&scenario("external-mode", "decision_every_min_rtt = true"));
    let mut gaps = Vec::new();
    let mut last = 0;
    while let Stop::Interval { .. } = s.advance(u64::MAX) {
        gaps.push(s.now_ns() - last);
        last = s.now_ns();
    }
    let late: Vec<u64> = gaps[gaps.len() / 2..].to_vec();
    let mean = late.iter().sum::<u64>() as f64 / late.len() as f64 / 1e6;
    assert!((20.0..60.0).contains(&mean), "mean interval {mean:.1} ms, expected the WiFi RTT (20 ms + queueing)");
}

/// External congestion control (DRL-CC): the policy sets each subflow's window at every
/// interval and the window stays there until the next decision or a loss (none here).
#[test]
fn external_cc_windows_follow_the_policy() {
    let text = scenario("minrtt", "decision_interval_ms = 200\ncc = \"external\"").replace("p = 0.002", "p = 0.0");
    let mut s = sim(&text);
    while let Stop::Interval { flow } = s.advance(u64::MAX) {
        // 20 segments on WiFi, 8 on LTE.
        s.set_cwnd(flow as usize, 0, 20 * 1448);
        s.set_cwnd(flow as usize, 1, 8 * 1448);
    }
    let out = s.output();
    let ts = &out.timeseries;
    let (t, sf, cwnd) = (ts.f64s("time_s"), ts.i64s("subflow"), ts.i64s("cwnd_bytes"));
    for i in 0..t.len() {
        if t[i] > 1.0 {
            let want = if sf[i] == 0 { 20 * 1448 } else { 8 * 1448 };
            assert_eq!(cwnd[i], want, "t={} subflow {}", t[i], sf[i]);
        }
    }
    // A fixed window of W segments gives W·MSS per RTT: WiFi 20·1448 B / ~21 ms ≈ 11 Mbps is
    // above its 10 Mbps, LTE 8·1448 B / ~81 ms ≈ 1.1 Mbps.
    let sent = out.subflows.i64s("bytes_sent");
    assert!(sent[0] > 4 * sent[1], "{sent:?}");
}

/// Runs `text` (an `external-mode` flow with a decision interval), answering the i-th interval
/// with `modes[i % modes.len()]`.
fn run_modes(text: &str, modes: &[u8]) -> mpsched_sim::RunOutput {
    let mut s = sim(text);
    let mut k = 0;
    loop {
        match s.advance(u64::MAX) {
            Stop::Interval { flow } => {
                s.decide(flow as usize, Decision::Mode(modes[k % modes.len()]));
                k += 1;
            }
            Stop::Decision { .. } => unreachable!("mode scheduling never asks per packet"),
            Stop::Deadline | Stop::Finished => break,
        }
    }
    s.output()
}

/// EdAR's modes (edar.txt §IV-A) alternating every 100 ms on two lossless 10 Mbit/s, 10 ms paths,
/// 20 MB: a switch to redundant copies only segments a subflow has not sent itself, so the normal
/// intervals aggregate both paths and the completion time lies clearly between always-normal (both
/// paths' rate) and always-redundant (one path's). Every byte sent beyond its first transmission
/// is counted: the subflows' bytes sent are the 20 MB once, plus `redundant_bytes`, plus
/// reinjections and the subflows' retransmissions (of drop-tail drops, the only losses here).
#[test]
fn alternating_modes_complete_between_normal_and_redundant() {
    let text = scenario("external-mode", "decision_interval_ms = 100\nsize_bytes = 20000000")
        .replace("p = 0.002", "p = 0.0")
        .replace("rate_mbps = 5\ndelay_ms = 40", "rate_mbps = 10\ndelay_ms = 10")
        .replace("duration_s = 20", "duration_s = 40");
    let done = |o: &mpsched_sim::RunOutput| fct(o, "mp").expect("completed");
    let alt = run_modes(&text, &[0, 1]);
    let (a, r, n) = (done(&alt), done(&run_modes(&text, &[1])), done(&run_modes(&text, &[0])));
    assert!(1.2 * n < a && a < 0.85 * r, "completion: alternating {a:.2} s, redundant {r:.2} s, normal {n:.2} s");
    let sent: i64 = alt.subflows.i64s("bytes_sent").iter().sum();
    let retransmitted: i64 = alt.subflows.i64s("bytes_retransmitted").iter().sum();
    let (redundant, reinjected) = (flow_i64(&alt, "mp", "redundant_bytes"), flow_i64(&alt, "mp", "reinjected_bytes"));
    assert!(redundant > 1_000_000);
    assert_eq!(sent, 20_000_000 + redundant + reinjected + retransmitted);
}
