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
    assert!(e.contains("algorithm: expected one of [\"edar\", \"net\", \"drl_cc\"], got \"lstm9\""), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
