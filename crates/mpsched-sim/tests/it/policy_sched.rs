//! Trained policies as schedulers by name (`edar`, `edar:PATH`, `policy:PATH`): resolved by
//! the scenario like any scheduler, deciding at their own timer inside the connection, with the
//! decisions reported (count and digest in the summary, latencies apart).

use mpsched_sim::{parse_text, run, Format};

fn scenario(scheduler: &str) -> String {
    format!(
        r#"
        [sim]
        duration_s = 3
        seed = 2
        [[paths]]
        name = "wifi"
        rate_mbps = 10
        delay_ms = 10
        [[paths]]
        name = "lte"
        rate_mbps = 5
        delay_ms = 40
        [[flows]]
        name = "mp"
        paths = ["wifi", "lte"]
        scheduler = "{scheduler}"
        "#
    )
}

fn run_text(text: &str, source: &str) -> Result<mpsched_sim::RunOutput, String> {
    parse_text(text, source, Format::Toml, None).map(run).map_err(|e| e.to_string())
}

fn error(text: &str, source: &str) -> String {
    match run_text(text, source) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

fn summary(out: &mpsched_sim::RunOutput) -> serde_json::Value {
    serde_json::from_str(&out.summary_json).unwrap()
}

/// `edar` runs the built-in checkpoint: redundant from the start (edar.txt §IV-B), then a
/// decision every minimum RTT; same seed, same bytes; the decisions are counted in the summary
/// with the policy's SHA-256 and timed apart from it.
#[test]
fn edar_decides_every_min_rtt_and_reports_its_decisions() {
    let a = run_text(&scenario("edar"), "<test>").unwrap();
    let b = run_text(&scenario("edar"), "<test>").unwrap();
    assert_eq!(a.summary_json, b.summary_json);
    assert_eq!(a.timeseries, b.timeseries);
    let s = summary(&a);
    let p = &s["policies"][0];
    assert_eq!((p["flow"].as_str(), p["scheduler"].as_str()), (Some("mp"), Some("edar")));
    assert_eq!(p["sha256"].as_str().unwrap().len(), 64);
    // One decision per smoothed RTT of the faster path: at most one per 20 ms (its RTT without
    // queueing) over 3 s, and more than one per 100 ms (the interval before any RTT is known;
    // its queue stays far shorter).
    let n = p["decisions"].as_u64().unwrap();
    assert!((31..=150).contains(&n), "{n} decisions");
    let (flow, st) = &a.decisions[0];
    assert_eq!((flow.as_str(), st.decisions), ("mp", n));
    assert!(st.max_ns > 0 && st.quantile_ns(0.5) <= st.max_ns);
    // Redundant at the start: copies were sent.
    let red = s["flows"][0]["redundant_bytes"].as_u64().unwrap_or(0);
    assert!(red > 0, "{}", s["flows"][0]);
    // Plain minRTT reports no policy.
    let m = run_text(&scenario("minrtt"), "<test>").unwrap();
    assert!(summary(&m).get("policies").is_none() && m.decisions.is_empty());
}

/// A relative policy path is anchored on the scenario file's directory (as trace paths are);
/// a missing file, a file of the wrong type or `policy:` without a path is a one-line error
/// naming the field.
#[test]
fn policy_paths_and_bad_policy_files() {
    let dir = std::env::temp_dir().join(format!("mpsched-policy-sched-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let ck = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/mpsched/agents/checkpoints");
    for ext in ["json", "safetensors"] {
        std::fs::copy(ck.join(format!("edar-default.{ext}")), dir.join(format!("sub/e.{ext}"))).unwrap();
    }
    let source = dir.join("sc.toml");
    let source = source.to_str().unwrap();
    let out = run_text(&scenario("edar:sub/e.json"), source).unwrap();
    let direct = run_text(&scenario("edar"), "<test>").unwrap();
    assert_eq!(summary(&out)["policies"][0]["sha256"], summary(&direct)["policies"][0]["sha256"]);
    assert_eq!(out.timeseries, direct.timeseries, "the same checkpoint decides the same");
    let out = run_text(&scenario("policy:sub/e"), source).unwrap();
    assert_eq!(out.timeseries, direct.timeseries, "policy:PATH runs an EdAR file too");

    let e = error(&scenario("policy:sub/missing.json"), source);
    assert!(e.contains("flows[0].scheduler") && e.contains("missing.json: cannot read"), "{e}");
    assert_eq!(e.lines().count(), 1);
    let e = error(&scenario("policy"), "<test>");
    assert!(e.contains("expected policy:PATH"), "{e}");
    std::fs::write(dir.join("sub/bad.json"), r#"{"format": "mpsched-policy/1", "algorithm": "lstm9"}"#).unwrap();
    std::fs::copy(dir.join("sub/e.safetensors"), dir.join("sub/bad.safetensors")).unwrap();
    let e = error(&scenario("policy:sub/bad.json"), source);
    assert!(e.contains("algorithm: expected one of [\"edar\", \"net\", \"drl_cc\", \"pdaa3c\"], got \"lstm9\""), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes a `"net"` policy file `dir/NAME.{json,safetensors}`: one linear layer with zero
/// weights, so its output is `bias` whatever it observes; `obs` is the description's block.
pub(crate) fn constant_policy(
    dir: &std::path::Path,
    name: &str,
    inputs: usize,
    bias: &[f32],
    obs: serde_json::Value,
) -> String {
    let n = bias.len();
    let header = serde_json::json!({
        "w": {"dtype": "F32", "shape": [n, inputs], "data_offsets": [0, 4 * n * inputs]},
        "b": {"dtype": "F32", "shape": [n], "data_offsets": [4 * n * inputs, 4 * n * inputs + 4 * n]},
    })
    .to_string();
    let mut st = (header.len() as u64).to_le_bytes().to_vec();
    st.extend_from_slice(header.as_bytes());
    st.extend(std::iter::repeat_n(0u8, 4 * n * inputs));
    bias.iter().for_each(|x| st.extend_from_slice(&x.to_le_bytes()));
    std::fs::write(dir.join(format!("{name}.safetensors")), st).unwrap();
    let desc = serde_json::json!({
        "format": "mpsched-policy/1", "algorithm": "net",
        "net": {"input": {"size": inputs}, "layers": [{"type": "linear", "weight": "w", "bias": "b"}],
                "head": {"type": "identity"}},
        "obs": obs,
    });
    std::fs::write(dir.join(format!("{name}.json")), desc.to_string()).unwrap();
    dir.join(format!("{name}.json")).to_str().unwrap().to_string()
}

/// A host path policy (MPTCP-RL) whose output is the constant preference (0, 1), named as the
/// MPTCP flows' scheduler, gives the same packets as `dmptcp` with that preference set by hand
/// on the running flows at every 100 ms boundary (the host env's `paths` action); as a `cc` it
/// is a one-line error naming the right place.
#[test]
fn a_constant_paths_policy_is_dmptcp_with_that_preference() {
    use mpsched_sim::env::{HostEnv, HostSpec};
    let dir = std::env::temp_dir().join(format!("mpsched-paths-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let layout = mpsched_transport::observe::HostLayout { max_flows: 4, max_subflows: 2, history: 1 };
    let obs = serde_json::json!({"env": "host", "action": "paths", "interval": 100.0, "max_flows": 4,
        "max_subflows": 2, "history": 1, "sender_only": true});
    let path = constant_policy(&dir, "pref-b", layout.size(), &[0.0, 1.0], obs);
    let text = |sched: &str, cc: &str| {
        format!(
            r#"
            [sim]
            duration_s = 3
            seed = 4
            [[paths]]
            name = "a"
            rate_mbps = 10
            delay_ms = 10
            loss = {{ model = "bernoulli", p = 0.01 }}
            [[paths]]
            name = "b"
            rate_mbps = 6
            delay_ms = 30
            [[flows]]
            name = "m1"
            paths = ["a", "b"]
            scheduler = "{sched}"
            cc = "{cc}"
            [[flows]]
            name = "tcp"
            path = "a"
            [[flows]]
            name = "m2"
            paths = ["a", "b"]
            start_s = 0.55
            size_bytes = 300000
            scheduler = "{sched}"
            cc = "{cc}"
            "#
        )
    };
    let run = run_text(&text(&format!("policy:{path}"), "lia"), "<test>").unwrap();
    let spec = serde_json::json!({"scenario": text("dmptcp", "lia"), "source": "<test>", "format": "toml",
        "action": "paths", "interval_ms": 100, "max_flows": 4, "max_subflows": 2, "sender_only": true});
    let mut env = HostEnv::new(HostSpec::from_json(&spec.to_string()).unwrap(), 4).unwrap();
    while !env.status().terminated && !env.status().truncated {
        env.step(&[0.0, 1.0]);
    }
    let by_hand = env.output();
    assert_eq!(run.timeseries, by_hand.timeseries);
    assert_eq!(run.subflows, by_hand.subflows);
    let plain = run_text(&text("dmptcp", "lia"), "<test>").unwrap();
    assert_ne!(run.subflows, plain.subflows, "the preference changes dmptcp's path sets");
    let s = summary(&run);
    assert_eq!(s["policies"][0]["host"], serde_json::json!(["m1", "m2"]));
    assert_eq!(s["policies"][0]["scheduler"].as_str(), Some(format!("policy:{path}").as_str()));
    let e = error(&text("minrtt", &format!("policy:{path}")), "<test>");
    assert!(e.contains("use it as scheduler = \"policy:") && e.lines().count() == 1, "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
