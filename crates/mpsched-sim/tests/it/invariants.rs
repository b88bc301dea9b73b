//! The output invariants (`mpsched_sim::check_invariants`, src/sim/invariants.rs) on every
//! shipped scenario, called explicitly (release builds do not check them at the end of a run),
//! and each one detecting a broken output. Random scenarios: the fuzzing harness's `run`
//! target (fuzz/).

use mpsched_sim::{check_invariants, parse_text, Format, Sim};
use serde_json::Value;

use super::fuzz_scenarios::shipped;

/// Every shipped scenario, sweeps replaced by their first value, run for at most `cut_s`.
fn each_shipped(cut_s: f64, mut f: impl FnMut(&str, &Sim, &mpsched_sim::RunOutput)) {
    for (path, mut table) in shipped() {
        let sim_table = table.get_mut("sim").and_then(|s| s.as_table_mut()).expect("[sim]");
        let d = sim_table["duration_s"].as_float().or(sim_table["duration_s"].as_integer().map(|i| i as f64)).unwrap();
        sim_table.insert("duration_s".into(), toml::Value::Float(d.min(cut_s)));
        let source = path.display().to_string();
        let sc = parse_text(&toml::to_string(&table).unwrap(), &source, Format::Toml, None).unwrap();
        let mut sim = Sim::new(sc);
        sim.run();
        let out = sim.output();
        f(&source, &sim, &out);
    }
}

#[test]
fn shipped_scenarios_keep_the_output_invariants() {
    let mut n = 0;
    each_shipped(2.0, |source, sim, out| {
        check_invariants(sim, out).unwrap_or_else(|e| panic!("{source}: {e}"));
        n += 1;
    });
    assert!(n >= 20, "{n}");
}

/// The same over each scenario's whole duration (minutes): `cargo test --release -p
/// mpsched-sim -- --ignored invariants`.
#[test]
#[ignore]
fn shipped_scenarios_keep_the_output_invariants_to_the_end() {
    each_shipped(f64::INFINITY, |source, sim, out| {
        check_invariants(sim, out).unwrap_or_else(|e| panic!("{source}: {e}"));
    });
}

/// Two paths (10 and 20 Mbit/s, 20 and 5 ms), a 100 kB MPTCP transfer.
const SMALL: &str = r#"
[sim]
duration_s = 2.0
[[paths]]
name = "a"
rate_mbps = 10
delay_ms = 20
[[paths]]
name = "b"
rate_mbps = 20
delay_ms = 5
[[flows]]
name = "f"
paths = ["a", "b"]
size_bytes = 100000
"#;

/// Each invariant fails on an output broken the way it forbids (the check is not vacuous).
#[test]
fn each_invariant_detects_a_broken_output() {
    let mut sim = Sim::new(parse_text(SMALL, "small.toml", Format::Toml, None).unwrap());
    sim.run();
    let out = sim.output();
    check_invariants(&sim, &out).unwrap();
    let summary: Value = serde_json::from_str(&out.summary_json).unwrap();
    // FCT ≥ d_fwd(a) + d_rev(a) + 8 × 100 kB / 30 Mbit/s = 40 + 26.7 ms.
    let fct = summary["flows"][0]["fct_s"].as_f64().unwrap();
    assert!(fct >= 0.040 + 0.8 / 30.0, "{fct}");
    type Break = fn(&mut Value);
    let broken: [(&str, Break); 6] = [
        ("bytes_acked", |s| {
            s["subflows"][0]["bytes_acked"] = (s["subflows"][0]["bytes_sent"].as_u64().unwrap() + 1).into()
        }),
        ("over its subflows", |s| {
            for sf in s["subflows"].as_array_mut().unwrap() {
                sf["bytes_sent"] = 0.into();
                sf["bytes_acked"] = 0.into();
                sf["bytes_retransmitted"] = 0.into();
            }
        }),
        ("size × repeat", |s| {
            s["flows"][0]["bytes_delivered"] = 100_001.into();
            s["subflows"][0]["bytes_sent"] = 200_000.into();
        }),
        ("bottlenecks", |s| s["links"][0]["bytes_delivered"] = 0.into()),
        ("retransmits = -1", |s| s["flows"][0]["retransmits"] = (-1).into()),
        ("fct_s 0.06", |s| s["flows"][0]["fct_s"] = 0.06.into()),
    ];
    for (what, breaks) in broken {
        let mut s = summary.clone();
        breaks(&mut s);
        let bad = mpsched_sim::RunOutput { summary_json: s.to_string(), ..clone_output(&out) };
        let e = check_invariants(&sim, &bad).expect_err(what);
        assert!(e.contains(what), "{what}: {e}");
    }
}

fn clone_output(out: &mpsched_sim::RunOutput) -> mpsched_sim::RunOutput {
    mpsched_sim::RunOutput {
        summary_json: out.summary_json.clone(),
        resolved_toml: out.resolved_toml.clone(),
        flows: out.flows.clone(),
        subflows: out.subflows.clone(),
        timeseries: out.timeseries.clone(),
        links: out.links.clone(),
        queues: out.queues.clone(),
        udp_flows: out.udp_flows.clone(),
        probes: out.probes.clone(),
        stats: out.stats,
        decisions: Vec::new(),
    }
}
