//! Hostile inputs (issue "Reliability v2"): each one a one-line error naming the file and the
//! user's field, never a panic, a hang or a silently wrong run.

use mpsched_sim::{parse_text, Format};

/// Two paths (the second with a parameter range, as most shipped scenarios have) and one
/// sized multipath flow.
const BASE: &str = r#"[sim]
duration_s = 2.0
seed = 1

[[paths]]
name = "a"
rate_mbps = 10.0
delay_ms = 20.0

[[paths]]
name = "b"
rate_mbps = 5.0
delay_ms = { range = [30, 40] }

[[flows]]
name = "f"
paths = ["a", "b"]
size_bytes = 100000
"#;

const WORKLOAD: &str = r#"
[[workloads]]
name = "w"
path = "a"
arrival = "poisson"
rate_per_s = 5
size = { dist = "fixed", bytes = 1000 }
"#;

const HANDOFF: &str = r#"
[[handoffs]]
path = "a"
rate_per_min = 2
duration_s = 1
delay_ms = 100
"#;

/// The error of `BASE` with `old` replaced by `new` (with and without the range).
fn err_of(text: &str) -> String {
    let e = parse_text(text, "s.toml", Format::Toml, None).expect_err("expected an error").0;
    assert!(!e.contains('\n'), "not one line: {e}");
    e
}

fn err(old: &str, new: &str) -> String {
    assert!(BASE.contains(old), "{old}");
    let ranged = err_of(&BASE.replacen(old, new, 1));
    let plain = err_of(&BASE.replacen(old, new, 1).replace("{ range = [30, 40] }", "35"));
    // The same field is named with or without a range elsewhere in the file.
    let field = |e: &str| e.split(": ").nth(if e.contains(": line ") { 2 } else { 1 }).unwrap_or("").to_string();
    assert_eq!(field(&ranged), field(&plain), "{ranged} / {plain}");
    ranged
}

#[test]
fn huge_range_bounds_are_an_error_not_a_panic() {
    let e = err("rate_mbps = 10.0", "rate_mbps = { range = [-1e308, 1e308] }");
    assert_eq!(
        e,
        "s.toml: line 7: paths[0].rate_mbps: expected bounds whose difference is a finite number, got [-1e308, 1e308]"
    );
}

#[test]
fn tiny_durations_have_a_physical_lower_bound() {
    let chunk = "size_bytes = 100000";
    let e = err(chunk, "chunk_bytes = 10000\nchunk_period_ms = 1e-9");
    assert_eq!(e, "s.toml: flows[0].chunk_period_ms: expected a duration of at least 0.001 ms (1 µs), got 1e-9");
    let e = err(chunk, "chunk_bytes = 10000\nchunk_period_ms = 1e-6");
    assert!(e.starts_with("s.toml: flows[0].chunk_period_ms: expected a duration of at least 0.001 ms"), "{e}");
    let e = err("seed = 1", "seed = 1\nsample_interval_ms = 1e-9");
    assert!(e.starts_with("s.toml: sim.sample_interval_ms: expected a duration of at least 0.001 ms"), "{e}");
    // Sampling has its own bound: every sample is a row per flow and subflow, kept in memory.
    let e = err("seed = 1", "seed = 1\nsample_interval_ms = 0.001");
    assert_eq!(e, "s.toml: sim.sample_interval_ms: expected at least 1 ms (samples are kept in memory), got 0.001");
    let ok = BASE.replace("seed = 1", "seed = 1\nsample_interval_ms = 1");
    assert_eq!(parse_text(&ok, "s.toml", Format::Toml, None).unwrap().sample_ns, 1_000_000);
    let e = err(chunk, "size_bytes = 1\ndecision_interval_ms = 1e-9");
    assert!(e.starts_with("s.toml: flows[0].decision_interval_ms: expected a duration"), "{e}");
    let e = err(chunk, "size_bytes = 1\nmin_rto_ms = 1e-9");
    assert!(e.starts_with("s.toml: flows[0].min_rto_ms: expected a duration"), "{e}");
    let e = err("rate_mbps = 10.0", "trace = { synthetic = { mean_mbps = 10, dwell_s = 1e-9 } }");
    assert_eq!(e, "s.toml: paths[0].trace.synthetic.dwell_s: expected at least 1e-6 s (1 µs), got 1e-9");
    let e = err("seed = 1", "seed = 1\n[[workloads]]\nname = \"w\"\npath = \"a\"\narrival = \"periodic\"\nperiod_s = 1e-7\nsize = { dist = \"fixed\", bytes = 1 }");
    assert!(e.starts_with("s.toml: workloads[0].period_s: expected a duration of at least 1e-6 s"), "{e}");
    // 1 µs itself is fine (the shipped MPTCP-RL workloads arrive every microsecond).
    let ok = BASE.replace("size_bytes = 100000", "chunk_bytes = 1000\nchunk_period_ms = 0.001");
    assert_eq!(
        parse_text(&ok, "s.toml", Format::Toml, None).unwrap().flows[0].app,
        mpsched_sim::scenario::App::Chunks { bytes: 1000, period_ns: 1000 }
    );
}

#[test]
fn times_whose_nanoseconds_overflow_are_refused() {
    let e = err("delay_ms = 20.0", "delay_ms = 1e14");
    assert_eq!(e, "s.toml: paths[0].delay_ms: expected at most 1e12 ms (about 31 years), got 1e14");
    let e = err("size_bytes = 100000", "size_bytes = 1\nstart_s = 1e10");
    assert!(e.starts_with("s.toml: flows[0].start_s: expected at most 1e9 s"), "{e}");
    let e = err("duration_s = 2.0", "duration_s = 1e300");
    assert!(e.starts_with("s.toml: sim.duration_s: expected at most 1e9 s"), "{e}");
    let e = err("rate_mbps = 10.0", "rate_mbps = 1e300");
    assert!(e.starts_with("s.toml: paths[0].rate_mbps: expected at most 1e7 Mbit/s"), "{e}");
}

/// Rates are integer bit/s: one below 1 bit/s rounded to 0, and the link silently ran at 1 bit/s.
#[test]
fn rates_below_one_bit_per_second_are_refused() {
    let e = err("rate_mbps = 10.0", "rate_mbps = 1e-12");
    assert_eq!(e, "s.toml: paths[0].rate_mbps: expected at least 1e-6 Mbit/s (1 bit/s), got 1e-12");
    let e = err("size_bytes = 100000", "app_rate_mbps = 1e-7");
    assert_eq!(e, "s.toml: flows[0].app_rate_mbps: expected at least 1e-6 Mbit/s (1 bit/s), got 1e-7");
    let e = err("delay_ms = 20.0", "delay_ms = 20.0\nschedule = [{ at_s = 1, rate_mbps = 5e-7 }]");
    assert_eq!(e, "s.toml: paths[0].schedule[0].rate_mbps: expected at least 1e-6 Mbit/s (1 bit/s), got 5e-7");
    let ok = BASE.replace("rate_mbps = 10.0", "rate_mbps = 1e-6");
    assert_eq!(parse_text(&ok, "s.toml", Format::Toml, None).unwrap().links[0].rate_bps, 1);
}

#[test]
fn nan_never_becomes_a_default() {
    let e = err_of(&BASE.replace("delay_ms = 20.0", "delay_ms = nan"));
    assert_eq!(e, "s.toml: line 8: paths[0].delay_ms: expected a finite number, got NaN");
    let e = err_of(&BASE.replace("size_bytes = 100000", "size_bytes = nan"));
    assert_eq!(e, "s.toml: line 18: flows[0].size_bytes: expected a finite number, got NaN");
    let e = err_of(&format!("{BASE}{HANDOFF}stop_s = nan\n"));
    assert!(e.ends_with("handoffs[0].stop_s: expected a finite number, got NaN"), "{e}");
}

#[test]
fn workload_and_handoff_stop_times_are_validated() {
    for (extra, what) in [
        ("stop_s = -5\n", "workloads[0].stop_s: expected a number >= 0, got -5"),
        ("start_s = 1.5\nstop_s = 1\n", "workloads[0].stop_s: expected a time >= start_s (1.5), got 1"),
        ("stop_s = 1e12\n", "workloads[0].stop_s: expected at most 1e9 s (about 31 years), got 1e12"),
    ] {
        assert_eq!(err_of(&format!("{BASE}{WORKLOAD}{extra}")), format!("s.toml: {what}"));
    }
    let e = err_of(&format!("{BASE}{HANDOFF}start_s = 1.5\nstop_s = 1\n"));
    assert_eq!(e, "s.toml: handoffs[0].stop_s: expected a time >= start_s (1.5), got 1");
    // A start after the end of the simulation without a stop: no process, no error.
    assert!(parse_text(&format!("{BASE}{WORKLOAD}start_s = 5\n"), "s.toml", Format::Toml, None).is_ok());
}

#[test]
fn trace_files_must_be_regular_files() {
    let e = err("rate_mbps = 10.0", "trace = \"/dev/zero\"");
    assert_eq!(e, "s.toml: paths[0].trace: cannot read trace file /dev/zero: expected a regular file");
    let dir = std::env::temp_dir().join(format!("mpsched-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("t.down");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().map(|s| s.success()).unwrap_or(false);
    if made {
        let e = err("rate_mbps = 10.0", &format!("trace = {:?}", fifo.display().to_string()));
        assert!(e.ends_with("expected a regular file"), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shortcut_path_errors_name_the_paths_fields() {
    let dir = std::env::temp_dir().join(format!("mpsched-shortcut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.down");
    std::fs::write(&trace, "1\n2\n").unwrap();
    // A trace on the forward direction only: the reverse link needs a rate or its own trace.
    let e = err("rate_mbps = 10.0", &format!("trace = {:?}", trace.display().to_string()));
    assert_eq!(e, "s.toml: paths[0].rate_mbps: missing: expected a positive rate in Mbit/s (or `trace_reverse`)");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A trace file that does not parse is named with the scenario and the field of its link
/// (issue 24: the message named the trace file only).
#[test]
fn trace_parse_errors_name_the_scenario_and_the_link() {
    let dir = std::env::temp_dir().join(format!("mpsched-badtrace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (good, bad) = (dir.join("good.down"), dir.join("bad.up"));
    std::fs::write(&good, "1\n2\n").unwrap();
    std::fs::write(&bad, "1\n3\n2\n").unwrap();
    let fields = format!("trace = {:?}\ntrace_reverse = {:?}", good.display().to_string(), bad.display().to_string());
    let e = err("rate_mbps = 10.0", &fields);
    let what = "line 3: timestamps must not decrease (2 after 3)";
    assert_eq!(e, format!("s.toml: paths[0].trace_reverse: {}: {what}", bad.display()));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Workload and handoff caps have an upper bound: each flow holds a connection (100,000 of them
/// take about 3 GB), and a cap of 2^63 with frequent arrivals never finished expanding.
#[test]
fn flow_and_handoff_counts_are_bounded() {
    let e = err_of(&format!("{BASE}{WORKLOAD}max_flows = 9223372036854775807\n"));
    assert_eq!(e, "s.toml: workloads[0].max_flows: expected at most 100000 flows, got 9223372036854775807");
    let e = err_of(&format!("{BASE}{HANDOFF}max_handoffs = 100001\n"));
    assert_eq!(e, "s.toml: handoffs[0].max_handoffs: expected at most 100000, got 100001");
    // Two workloads of 60,000 flows each (one every microsecond): too many together.
    let many = |name: &str| {
        format!(
            "\n[[workloads]]\nname = \"{name}\"\npath = \"a\"\narrival = \"periodic\"\nperiod_s = 1e-6\n\
             max_flows = 60000\nsize = {{ dist = \"fixed\", bytes = 1000 }}\n"
        )
    };
    let e = err_of(&format!("{BASE}{}{}", many("w"), many("v")));
    assert_eq!(e, "s.toml: workloads[1]: the scenario would hold more than 100000 flows, expected at most 100000");
    // One of them is fine.
    let one = parse_text(&format!("{BASE}{}", many("w")), "s.toml", Format::Toml, None).unwrap();
    assert_eq!(one.flows.len(), 60_001);
}
