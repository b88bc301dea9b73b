//! Validation against theory: tests that fail when the physics is wrong.
//! Each test states the expected value, where it comes from, and the tolerance.

use crate::common::*;

/// Test 1: One bulk NewReno flow, 10 Mbps, 25 ms one-way, no loss, buffer = 1 BDP (62.5 KB).
/// A Reno sawtooth with a one-BDP drop-tail buffer never drains the queue (the window halves from
/// 2·BDP to BDP), so the link stays busy: goodput after slow start must be ≥ 95% of the link
/// rate. The payload ceiling is 1448/1500 = 96.5% of the rate (52 B of headers per packet).
#[test]
fn link_saturation_newreno_one_bdp() {
    let out = run(r#"
[sim]
duration_s = 40
[[paths]]
name = "p"
rate_mbps = 10
delay_ms = 25
[[flows]]
name = "bulk"
path = "p"
cc = "newreno"
"#);
    let g = series_mean(&out, "bulk", "flow_goodput_mbps", 5.0, 40.0);
    assert!(g >= 9.5, "goodput after slow start {g:.3} Mbps, expected >= 9.5 (95% of 10 Mbps)");
    assert!(g <= 9.66, "goodput {g:.3} Mbps exceeds the payload ceiling 9.653 Mbps");
    let util = link_f64(&out, "p.fwd", "utilization");
    assert!(util > 0.98, "bottleneck utilization {util:.4}");
}

/// Padhye, Firoiu, Towsley, Kurose (SIGCOMM 1998), full model, in packets per second:
///
///   B(p) = 1 / ( RTT·sqrt(2bp/3) + T0·min(1, 3·sqrt(3bp/8))·p·(1 + 32p²) )
///
/// with b = 2 packets acknowledged per ACK (delayed ACK, per-ACK window growth as in the model:
/// ABC off), RTT the measured mean smoothed RTT and T0 the measured mean RTO. The receiver window
/// term min(W_max/RTT, ·) does not bind (6 MB buffer) and the link (100 Mbps) is far above B(p).
fn padhye_pps(p: f64, rtt: f64, t0: f64) -> f64 {
    let b = 2.0;
    1.0 / (rtt * (2.0 * b * p / 3.0).sqrt()
        + t0 * (1f64).min(3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p))
}

fn padhye_case(p: f64, one_way_ms: f64, duration_s: f64) -> (f64, f64) {
    let out = run(&format!(
        r#"
[sim]
duration_s = {duration_s}
sample_interval_ms = 1000
[[paths]]
name = "p"
rate_mbps = 100
delay_ms = {one_way_ms}
queue_bytes = 10000000
loss = {{ model = "bernoulli", p = {p} }}
[[flows]]
name = "reno"
path = "p"
cc = "newreno"
abc = false
min_rto_ms = 200
"#
    ));
    let warm = 10.0;
    let goodput = series_mean(&out, "reno", "flow_goodput_mbps", warm, duration_s) * 1e6;
    let rtt = series_mean(&out, "reno", "srtt_ms", warm, duration_s) / 1e3;
    let t0 = series_mean(&out, "reno", "rto_ms", warm, duration_s) / 1e3;
    let model = padhye_pps(p, rtt, t0) * 1448.0 * 8.0;
    (goodput, model)
}

/// Test 2: Random loss p ∈ {0.1%, 1%}, RTT 50 and 200 ms: goodput within ±25% of the Padhye model.
#[test]
fn padhye_throughput_under_random_loss() {
    let mut report = Vec::new();
    for &(p, one_way, dur) in &[(0.001, 25.0, 300.0), (0.01, 25.0, 200.0), (0.001, 100.0, 600.0), (0.01, 100.0, 400.0)]
    {
        let (g, m) = padhye_case(p, one_way, dur);
        let ratio = g / m;
        report.push(format!(
            "p={p} rtt={}ms: sim {:.3} Mbps, model {:.3} Mbps, ratio {ratio:.3}",
            2.0 * one_way,
            g / 1e6,
            m / 1e6
        ));
        assert!((0.75..=1.25).contains(&ratio), "{}", report.join("\n"));
    }
    eprintln!("{}", report.join("\n"));
}

fn fairness_case(n: usize) -> f64 {
    let mut flows = String::new();
    for i in 0..n {
        // Starts staggered by 100 ms so the flows do not begin in lock step.
        flows += &format!("[[flows]]\nname = \"f{i}\"\npath = \"p\"\ncc = \"newreno\"\nstart_s = {}\n", i as f64 * 0.1);
    }
    let out = run(&format!(
        r#"
[sim]
duration_s = 60
sample_interval_ms = 1000
[[paths]]
name = "p"
rate_mbps = 20
delay_ms = 20
{flows}"#
    ));
    let x: Vec<f64> = (0..n).map(|i| flow_i64(&out, &format!("f{i}"), "bytes_delivered") as f64).collect();
    let total: f64 = x.iter().sum::<f64>() * 8.0 / 60.0 / 1e6;
    assert!(total > 18.5, "aggregate {total:.2} Mbps of 20");
    jain(&x)
}

/// Test 3: n NewReno flows with equal RTTs sharing a 20 Mbps bottleneck for 60 s: Reno's AIMD
/// converges to equal shares (Chiu & Jain 1989), so Jain's index of the bytes delivered ≥ 0.95.
#[test]
fn fairness_two_and_four_newreno_flows() {
    for n in [2, 4] {
        let j = fairness_case(n);
        assert!(j >= 0.95, "Jain index with {n} flows = {j:.4}, expected >= 0.95");
    }
}

/// Test 4: Byte conservation: a 5 MB transfer over a path with 2% loss on the data direction and 1%
/// on the ACK direction reaches the receiving application exactly once and in order: the
/// connection-level reassembly delivers only in-order bytes, so bytes_delivered must equal the
/// size exactly (not more, not less).
#[test]
fn byte_conservation_under_loss() {
    let out = run(r#"
[sim]
duration_s = 120
[[links]]
name = "up"
rate_mbps = 10
delay_ms = 20
loss = { model = "bernoulli", p = 0.02 }
[[links]]
name = "down"
rate_mbps = 10
delay_ms = 20
loss = { model = "bernoulli", p = 0.01 }
[[paths]]
name = "p"
forward = ["up"]
reverse = ["down"]
[[flows]]
name = "f"
path = "p"
size_bytes = 5000000
"#);
    assert_eq!(flow_i64(&out, "f", "bytes_delivered"), 5_000_000);
    assert!(fct(&out, "f").is_some());
    // Loss really happened, and was repaired.
    assert!(flow_i64(&out, "f", "retransmits") > 50);
    assert!(link_i64(&out, "up", "packets_dropped_loss") > 50);
}

const LOSSY: &str = r#"
[sim]
duration_s = 20
[[paths]]
name = "a"
rate_mbps = 10
delay_ms = 20
loss = { model = "bernoulli", p = 0.005 }
[[flows]]
name = "fa"
path = "a"
"#;

/// Test 5: Determinism: the same seed gives identical outputs; another seed with loss differs; a flow
/// added on a disjoint path leaves the first path's loss pattern and results unchanged (one RNG
/// stream per component).
#[test]
fn determinism_and_independent_streams() {
    let a = run_seed(LOSSY, 7);
    let b = run_seed(LOSSY, 7);
    assert_eq!(a.summary_json, b.summary_json);
    assert_eq!(a.timeseries, b.timeseries);
    assert_eq!(a.flows, b.flows);
    let c = run_seed(LOSSY, 8);
    assert_ne!(a.summary_json, c.summary_json);

    let with_b = format!(
        "{LOSSY}\n[[paths]]\nname = \"b\"\nrate_mbps = 5\ndelay_ms = 40\nloss = {{ model = \"bernoulli\", p = 0.01 }}\n[[flows]]\nname = \"fb\"\npath = \"b\"\n"
    );
    let d = run_seed(&with_b, 7);
    assert_eq!(link_i64(&a, "a.fwd", "packets_dropped_loss"), link_i64(&d, "a.fwd", "packets_dropped_loss"));
    assert_eq!(flow_i64(&a, "fa", "bytes_delivered"), flow_i64(&d, "fa", "bytes_delivered"));
}

/// Test 6: A 2 s outage mid-transfer: every packet entering the link is lost, RTOs fire with
/// exponential backoff (200 ms-ish, then doubling: at least 3 expiries within 2 s), and the flow
/// recovers and completes after the outage ends.
#[test]
fn outage_recovery_via_rto_backoff() {
    let scenario = |outage: bool| {
        let sched =
            if outage { "schedule = [ { at_s = 3.0, outage = true }, { at_s = 5.0, outage = false } ]" } else { "" };
        run(&format!(
            r#"
[sim]
duration_s = 60
[[paths]]
name = "p"
rate_mbps = 10
delay_ms = 25
{sched}
[[flows]]
name = "f"
path = "p"
size_bytes = 10000000
cc = "newreno"
"#
        ))
    };
    let base = scenario(false);
    let out = scenario(true);
    let f0 = fct(&base, "f").expect("baseline completes");
    let f1 = fct(&out, "f").expect("flow completes after the outage");
    let rtos = flow_i64(&out, "f", "rto_count");
    assert!(rtos >= 3, "expected >= 3 backed-off RTOs during a 2 s outage, got {rtos}");
    assert!(f1 > f0 + 2.0, "FCT {f1:.2} s should exceed baseline {f0:.2} s + 2 s outage");
    assert!(f1 < f0 + 2.0 + 3.0, "recovery too slow: FCT {f1:.2} s vs baseline {f0:.2} s");
    assert_eq!(flow_i64(&out, "f", "bytes_delivered"), 10_000_000);
    assert!(link_i64(&out, "p.fwd", "packets_dropped_outage") > 0);
}

fn trace_case(trace_path: &str) -> (f64, f64) {
    let out = run(&format!(
        r#"
[sim]
duration_s = 60
[[links]]
name = "cell"
trace = "{trace_path}"
delay_ms = 20
queue_bytes = 2000000
[[links]]
name = "ack"
rate_mbps = 50
delay_ms = 20
[[paths]]
name = "p"
forward = ["cell"]
reverse = ["ack"]
[[flows]]
name = "f"
path = "p"
cc = "cubic"
"#
    ));
    let delivered = link_i64(&out, "cell", "bytes_delivered") as f64;
    let util = link_f64(&out, "cell", "utilization");
    (delivered, delivered / util)
}

/// Test 7: A trace-driven link delivers the trace's opportunities × 1500 B (±1%) to a saturating flow
/// (mahimahi semantics: one 1500-byte opportunity per line, looped). Capacity is counted from the
/// trace independently of the link (opportunities up to the end time × 1500 B), checked here
/// against a synthetic trace with a known count.
#[test]
fn trace_link_delivers_trace_capacity() {
    let dir = std::env::temp_dir().join(format!("mpsched-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("synthetic.trace");
    // 2 opportunities at every odd ms, 1 at every even ms, period 1000 ms: 1500 opp/s = 18 Mbps.
    let mut s = String::new();
    for ms in 1..=1000 {
        let k = if ms % 2 == 1 { 2 } else { 1 };
        for _ in 0..k {
            s += &format!("{ms}\n");
        }
    }
    std::fs::write(&path, s).unwrap();
    let (delivered, capacity) = trace_case(path.to_str().unwrap());
    assert!((capacity - 60.0 * 1500.0 * 1500.0).abs() < 1500.0 * 3.0, "capacity {capacity}");
    let ratio = delivered / capacity;
    assert!((0.99..=1.0).contains(&ratio), "delivered/capacity = {ratio:.4}");

    // The real cellular traces shipped beside the repository (read in place, never copied).
    let real = shared_dir().join("traces/cellular/TMobile-LTE-short.down");
    assert!(real.exists(), "missing {} (CI provides ../shared beside the repository)", real.display());
    let n_lines = std::fs::read_to_string(&real).unwrap().lines().count();
    let (delivered, capacity) = trace_case(real.to_str().unwrap());
    assert!(n_lines > 0);
    let ratio = delivered / capacity;
    assert!((0.99..=1.0).contains(&ratio), "TMobile trace: delivered/capacity = {ratio:.4}");
}

/// Test 8: CUBIC vs Reno on a 100 Mbps, 100 ms RTT path with 0.01% random loss. Reno's window after a
/// loss grows by one MSS per RTT (BDP = 863 segments takes minutes to refill), while CUBIC's
/// cubic growth returns to W_max within K = cbrt(W_max·0.3/0.4) ≈ 8 s: CUBIC must get at least
/// 1.5× Reno's goodput.
#[test]
fn cubic_beats_reno_on_long_fat_lossy_path() {
    let case = |cc: &str| {
        let out = run(&format!(
            r#"
[sim]
duration_s = 60
sample_interval_ms = 1000
[[paths]]
name = "p"
rate_mbps = 100
delay_ms = 50
loss = {{ model = "bernoulli", p = 0.0001 }}
[[flows]]
name = "f"
path = "p"
cc = "{cc}"
"#
        ));
        flow_f64(&out, "f", "goodput_mbps")
    };
    let (cubic, reno) = (case("cubic"), case("newreno"));
    eprintln!("cubic {cubic:.2} Mbps, reno {reno:.2} Mbps");
    assert!(cubic >= 1.5 * reno, "cubic {cubic:.2} Mbps vs reno {reno:.2} Mbps");
}
