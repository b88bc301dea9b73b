//! Flows with a stop time (`stop_s`, workloads' `flow_duration_s`), Poisson rates per minute,
//! and the summary's Jain fairness indices.

use serde_json::Value;

use crate::common::*;

const PATHS: &str = r#"
[[paths]]
name = "a"
rate_mbps = 10
delay_ms = 20
[[paths]]
name = "b"
rate_mbps = 10
delay_ms = 20
"#;

fn summary(out: &mpsched_sim::RunOutput) -> Value {
    serde_json::from_str(&out.summary_json).unwrap()
}

/// Flow `x` stops at 5 s: it delivers nothing more, its goodput is over 0..5 s, it is not
/// "completed", its timeseries rows end with the sample at 5 s, and it leaves the link to
/// flow `y`, which then gets (almost) the whole 10 Mbps.
#[test]
fn a_stopped_flow_sends_nothing_more() {
    let out = run(&format!(
        "[sim]\nduration_s = 12\n{PATHS}\n[[flows]]\nname = \"x\"\npath = \"a\"\nstop_s = 5\n[[flows]]\nname = \"y\"\npath = \"a\"\n"
    ));
    let delivered = flow_i64(&out, "x", "bytes_delivered") as f64;
    assert!(delivered > 1e6, "x delivered {delivered}");
    assert_eq!(flow_f64(&out, "x", "goodput_mbps"), delivered * 8.0 / 5.0 / 1e6);
    assert_eq!(fct(&out, "x"), None);
    let Some(mpsched_sim::Column::Bool(completed)) = out.flows.column("completed") else { panic!("completed") };
    assert!(!completed[flow_row(&out.flows, "x")]);
    let ts = &out.timeseries;
    let last_x =
        (0..ts.rows()).filter(|&i| ts.strs("flow")[i] == "x").map(|i| ts.f64s("time_s")[i]).fold(0.0, f64::max);
    assert!((last_x - 5.0).abs() < 1e-9, "last sample of x at {last_x}");
    let y_after = series_mean(&out, "y", "flow_goodput_mbps", 7.0, 12.0);
    assert!(y_after > 9.0, "y alone after x stopped: {y_after} Mbit/s");
    // The run goes on to its duration: y is a bulk flow.
    assert_eq!(out.stats.sim_ns, 12_000_000_000);
}

/// Stepping a simulation: a stopped flow is done for whoever drives it (a learning env frees
/// its slot) and stopped; a running one is neither.
#[test]
fn a_stopped_flow_is_done() {
    let text = format!(
        "[sim]\nduration_s = 5\n{PATHS}\n[[flows]]\nname = \"x\"\npath = \"a\"\nstop_s = 2\n[[flows]]\nname = \"y\"\npath = \"b\"\n"
    );
    let mut sim =
        mpsched_sim::Sim::new(mpsched_sim::parse_text(&text, "<test>", mpsched_sim::Format::Toml, None).unwrap());
    assert_eq!(sim.advance(1_999_999_999), mpsched_sim::Stop::Deadline);
    assert!(!sim.flow_done(0) && !sim.flow_stopped(0));
    assert_eq!(sim.advance(2_000_000_000), mpsched_sim::Stop::Deadline);
    assert!(sim.flow_done(0) && sim.flow_stopped(0));
    assert!(!sim.flow_done(1) && !sim.flow_stopped(1));
    let sent: u64 = sim.connection(0).unwrap().subflows().map(|(_, s)| s.bytes_sent).sum();
    assert_eq!(sim.run().sim_ns, 5_000_000_000);
    let after: u64 = sim.connection(0).unwrap().subflows().map(|(_, s)| s.bytes_sent).sum();
    assert_eq!(after, sent, "nothing sent after the stop");
    assert!(sent > 0);
}

/// A sized flow that completes before its stop time is unaffected by it; a run whose flows all
/// end by themselves (sized or stopped) ends with the last of them.
#[test]
fn stop_after_completion_changes_nothing_and_bounded_runs_end_early() {
    let sized =
        format!("[sim]\nduration_s = 30\n{PATHS}\n[[flows]]\nname = \"x\"\npath = \"a\"\nsize_bytes = 100000\n");
    let a = run(&sized);
    let b = run(&sized.replace("size_bytes = 100000\n", "size_bytes = 100000\nstop_s = 20\n"));
    assert_eq!(a.flows.f64s("goodput_mbps"), b.flows.f64s("goodput_mbps"));
    assert_eq!(fct(&a, "x"), fct(&b, "x"));
    assert_eq!(a.stats.sim_ns, b.stats.sim_ns);
    let out = run(&format!(
        "[sim]\nduration_s = 30\n{PATHS}\n[[flows]]\nname = \"x\"\npath = \"a\"\nstop_s = 3\n[[flows]]\nname = \"y\"\npath = \"b\"\nstart_s = 1\nstop_s = 4.5\n"
    ));
    assert_eq!(out.stats.sim_ns, 4_500_000_000);
    // Stopped at 4.5 s, started at 1 s: 3.5 s of activity.
    let d = flow_i64(&out, "y", "bytes_delivered") as f64;
    assert_eq!(flow_f64(&out, "y", "goodput_mbps"), d * 8.0 / 3.5 / 1e6);
}

#[test]
fn stop_must_come_after_the_start() {
    let text =
        format!("[sim]\nduration_s = 10\n{PATHS}\n[[flows]]\nname = \"x\"\npath = \"a\"\nstart_s = 2\nstop_s = 2\n");
    let err = mpsched_sim::run_text(&text, "s.toml", mpsched_sim::Format::Toml, None).err().unwrap().to_string();
    assert_eq!(err, "s.toml: flows[0].stop_s: expected a time after start_s (2), got 2");
}

/// `rate_per_min = 10` with `flow_duration_s = 30` and no size: bulk flows that each stop 30 s
/// after their start (written in the resolved copy); the count matches 10 per minute.
#[test]
fn workload_flows_with_a_duration() {
    let text = format!(
        "[sim]\nduration_s = 600\n{PATHS}\n[[workloads]]\nname = \"w\"\npaths = [\"a\", \"b\"]\narrival = \"poisson\"\nrate_per_min = 10\nflow_duration_s = 30\n"
    );
    let sc = mpsched_sim::parse_text(&text, "<test>", mpsched_sim::Format::Toml, Some(1)).unwrap();
    // 100 expected over 10 minutes; sd 10.
    assert!((70..=130).contains(&sc.flows.len()), "{} flows", sc.flows.len());
    for (f, spec) in sc.flows.iter().zip(&sc.resolved.flows) {
        assert_eq!(f.size, None);
        assert_eq!(f.stop_ns.unwrap() - f.start_ns, 30_000_000_000, "{}", f.name);
        assert!((spec.stop_s.unwrap() - spec.start_s.unwrap() - 30.0).abs() < 1e-9);
    }
    assert!(sc.resolved_toml().contains("stop_s = "));
    let both = text.replace("rate_per_min = 10\n", "rate_per_min = 10\nrate_per_s = 1\n");
    let err = mpsched_sim::parse_text(&both, "s.toml", mpsched_sim::Format::Toml, None).err().unwrap().to_string();
    assert_eq!(err, "s.toml: workloads[0]: give either rate_per_s or rate_per_min, not both");
}

/// The summary's `fairness`: Jain's index of the flows' goodput_mbps over the multipath flows
/// and over all flows, exactly as computed from the flows table; flows not started by the end
/// are left out.
#[test]
fn summary_fairness_matches_the_flows_table() {
    let out = run(&format!(
        "[sim]\nduration_s = 10\n{PATHS}\n[[flows]]\nname = \"m1\"\npaths = [\"a\", \"b\"]\n[[flows]]\nname = \"m2\"\npaths = [\"a\", \"b\"]\nstart_s = 2\n[[flows]]\nname = \"t\"\npath = \"a\"\n[[flows]]\nname = \"late\"\npath = \"b\"\nstart_s = 20\n"
    ));
    let s = summary(&out);
    let fair = &s["fairness"];
    let g = |n: &str| flow_f64(&out, n, "goodput_mbps");
    assert_eq!(fair["metric"], "goodput_mbps");
    assert_eq!(fair["mptcp_flows"], 2);
    assert_eq!(fair["all_flows"], 3);
    let jm = fair["jain_mptcp"].as_f64().unwrap();
    let ja = fair["jain_all"].as_f64().unwrap();
    assert!((jm - jain(&[g("m1"), g("m2")])).abs() < 1e-12, "{jm}");
    assert!((ja - jain(&[g("m1"), g("m2"), g("t")])).abs() < 1e-12, "{ja}");
    assert!(ja < 1.0 && jm < 1.0);
}

/// No multipath flow: the MPTCP index is null (not 0); a run in which no flow delivers
/// anything (every packet lost) has a null index too.
#[test]
fn summary_fairness_undefined_cases() {
    let out = run(&format!("[sim]\nduration_s = 5\n{PATHS}\n[[flows]]\nname = \"t\"\npath = \"a\"\n"));
    let fair = &summary(&out)["fairness"];
    assert_eq!(fair["mptcp_flows"], 0);
    assert_eq!(fair["jain_mptcp"], Value::Null);
    assert_eq!(fair["jain_all"].as_f64(), Some(1.0));
    let lossy = PATHS.replace("delay_ms = 20\n", "delay_ms = 20\nloss = { model = \"bernoulli\", p = 1.0 }\n");
    let out = run(&format!(
        "[sim]\nduration_s = 5\n{lossy}\n[[flows]]\nname = \"m\"\npaths = [\"a\", \"b\"]\n[[flows]]\nname = \"t\"\npath = \"b\"\n"
    ));
    let fair = &summary(&out)["fairness"];
    assert_eq!(flow_f64(&out, "m", "goodput_mbps"), 0.0);
    assert_eq!((fair["mptcp_flows"].as_u64(), fair["all_flows"].as_u64()), (Some(1), Some(2)));
    assert_eq!(fair["jain_mptcp"], Value::Null);
    assert_eq!(fair["jain_all"], Value::Null);
}
