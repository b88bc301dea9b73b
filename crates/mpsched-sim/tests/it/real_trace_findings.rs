//! What a user found suspicious on real LTE traces (issue 23), measured and explained. Uses the
//! AT&T LTE driving trace of mahimahi (GPL data, never committed): skipped when absent.
//!
//! 1. After a 10 s outage of the LTE path, LIA/OLIA/BALIA keep the LTE subflow low while
//!    uncoupled CUBIC recovers. Explained: (a) not by the controller on its own path: with one
//!    subflow the coupled controllers are Reno (RFC 6356 §3), and on LTE alone they regrow after
//!    the outage as the kernel's CUBIC does (an earlier explanation, "Reno regrows more slowly
//!    than CUBIC", came from RFC 6298 timers and, later, from a wrong RTT sample after the
//!    outage that sped CUBIC up; docs/fidelity.md "Outages"); (b) beside a better
//!    WiFi path, coupling moves traffic off the worse path by design (RFC 6356 goal 3; OLIA's
//!    Pareto optimality): the connection still gets at least the best path's rate; (c) when LTE
//!    is the better path, every coupled controller recovers to the trace's rate.
//! 2. ECF barely uses LTE. Explained: ECF waits for the fast path whenever
//!    `RTT_s / RTT_f > (k + CWND_f) / CWND_f` with `k` the send buffer's unsent bytes (Linux
//!    autotunes the buffer to 2 × Σ cwnd): the loaded LTE path's RTT (its 150-packet queue on a
//!    2–9 Mbit/s trace) is several times WiFi's, so the LTE subflow is never worth it.

use mpsched_sim::{run_text, Format, RunOutput};

const DOWN: &str = "/work/shared/traces/cellular/ATT-LTE-driving-2016.down";
const UP: &str = "/work/shared/traces/cellular/ATT-LTE-driving-2016.up";

fn present() -> bool {
    let ok = std::path::Path::new(DOWN).exists() && std::path::Path::new(UP).exists();
    if !ok {
        eprintln!("skipped: {DOWN} absent");
    }
    ok
}

/// WiFi at `wifi_mbps` (20 ms) and LTE on the trace (40 ms), LTE out from 10 to 20 s; a bulk
/// flow over `paths` for 60 s.
fn run(cc: &str, scheduler: &str, wifi_mbps: f64, paths: &str, outage: bool) -> RunOutput {
    let schedule = if outage { "schedule = [{ at_s = 10, outage = true }, { at_s = 20, outage = false }]" } else { "" };
    let text = format!(
        "[sim]\nduration_s = 60\n[[paths]]\nname = \"wifi\"\nrate_mbps = {wifi_mbps}\ndelay_ms = 20\n\
         [[paths]]\nname = \"lte\"\ndelay_ms = 40\ntrace = {DOWN:?}\ntrace_reverse = {UP:?}\n{schedule}\n\
         [[flows]]\nname = \"f\"\npaths = {paths}\ncc = \"{cc}\"\nscheduler = \"{scheduler}\"\n"
    );
    run_text(&text, "lte.toml", Format::Toml, None).unwrap()
}

/// Mean goodput (Mbit/s) of subflow `sub` over samples in `(t0, t1]`.
fn goodput(out: &RunOutput, sub: i64, t0: f64, t1: f64) -> f64 {
    let ts = &out.timeseries;
    let (time, s, g) = (ts.f64s("time_s"), ts.i64s("subflow"), ts.f64s("goodput_mbps"));
    let v: Vec<f64> =
        (0..time.len()).filter(|&i| s[i] == sub && time[i] > t0 && time[i] <= t1 + 1e-9).map(|i| g[i]).collect();
    v.iter().sum::<f64>() / v.len() as f64
}

const BOTH: &str = "[\"wifi\", \"lte\"]";
const COUPLED: [&str; 3] = ["lia", "olia", "balia"];

#[test]
fn coupled_controllers_after_an_lte_outage() {
    if !present() {
        return;
    }
    // (a) LTE alone: every coupled controller is Reno there and regrows in the 15 s after the
    // outage as the kernel's CUBIC does (measured 1.43 against 1.28 Mbit/s), and all reach the
    // trace's rate later.
    let cubic = run("cubic", "minrtt", 10.0, "[\"lte\"]", true);
    for cc in COUPLED {
        let out = run(cc, "minrtt", 10.0, "[\"lte\"]", true);
        let ratio = goodput(&out, 0, 20.0, 35.0) / goodput(&cubic, 0, 20.0, 35.0);
        assert!((0.8..1.25).contains(&ratio), "{cc}: {ratio}");
        assert!(goodput(&out, 0, 35.0, 60.0) > 0.95 * goodput(&cubic, 0, 35.0, 60.0), "{cc}");
    }
    // (b) Beside a better 10 Mbit/s WiFi path, OLIA keeps LTE low, and the connection still
    // gets at least the WiFi path's rate (RFC 6356 goal 1).
    let out = run("olia", "minrtt", 10.0, BOTH, true);
    assert!(goodput(&out, 1, 35.0, 60.0) < 1.0, "{}", goodput(&out, 1, 35.0, 60.0));
    assert!(goodput(&out, 0, 35.0, 60.0) + goodput(&out, 1, 35.0, 60.0) > 9.5);
    // (c) Beside a worse 1 Mbit/s WiFi path, LTE is the better path: every coupled controller
    // takes at least 90 % of what uncoupled CUBIC takes on it.
    let cubic = run("cubic", "minrtt", 1.0, BOTH, true);
    for cc in COUPLED {
        let out = run(cc, "minrtt", 1.0, BOTH, true);
        assert!(goodput(&out, 1, 35.0, 60.0) > 0.9 * goodput(&cubic, 1, 35.0, 60.0), "{cc}");
    }
}

#[test]
fn ecf_waits_for_wifi_because_the_loaded_lte_rtt_is_several_times_longer() {
    if !present() {
        return;
    }
    let ecf = run("cubic", "ecf", 10.0, BOTH, false);
    let minrtt = run("cubic", "minrtt", 10.0, BOTH, false);
    let bytes = |o: &RunOutput, i: usize| o.subflows.i64s("bytes_acked")[i] as f64;
    let share = |o: &RunOutput| bytes(o, 1) / (bytes(o, 0) + bytes(o, 1));
    // ECF's LTE bytes are those of the first seconds, sent before the RTT estimates diverge
    // (they reach the receiver by 20 s); from then on LTE carries nothing: that is the finding.
    // How much the first seconds carry depends on the RTT estimator: 5.7 % with the linux
    // profile's kernel rules (RTT from the echoed timestamp on ACKs of retransmitted data), 2.6 %
    // with the ns3 profile, below 1 % with RFC 6298 timers.
    assert!(share(&ecf) < 0.07, "ecf LTE share {}", share(&ecf));
    assert_eq!(goodput(&ecf, 1, 20.0, 60.0), 0.0, "ecf uses LTE after the start");
    assert!(share(&minrtt) > 0.2, "minrtt LTE share {}", share(&minrtt));
    // When minRTT loads LTE, its RTT is more than twice WiFi's: ECF's test 1 then holds for
    // any k below CWND_f (k is bounded by the autotuned send buffer).
    let srtt = |o: &RunOutput, i: usize| o.subflows.f64s("srtt_ms")[i];
    assert!(srtt(&minrtt, 1) > 2.0 * srtt(&minrtt, 0), "{} vs {}", srtt(&minrtt, 1), srtt(&minrtt, 0));
}
