//! The env's `initial_mode`: EdAR sends redundantly "at the beginning of a connection"
//! (edar.txt §IV-B), before the first transmission interval is known.

use mpsched_sim::env::{Env, EnvSpec, TERMS};

/// Two 10 ms paths (both subflows join well within the first 100 ms interval, the interval
/// used while no RTT is known), a 5 s greedy flow, decisions every minimum RTT.
fn spec(initial_mode: Option<u8>) -> EnvSpec {
    let scenario = r#"
        [sim]
        duration_s = 5
        seed = 1
        [[paths]]
        name = "a"
        rate_mbps = 10
        delay_ms = 10
        [[paths]]
        name = "b"
        rate_mbps = 10
        delay_ms = 10
        [[flows]]
        name = "mp"
        paths = ["a", "b"]
        scheduler = "external-mode"
        decision_every_min_rtt = true
    "#;
    let mut v = serde_json::json!({
        "scenario": scenario, "source": "<test>", "format": "toml", "flow": 0, "action": "mode",
    });
    if let Some(m) = initial_mode {
        v["initial_mode"] = m.into();
    }
    EnvSpec::from_json(&v.to_string()).expect("valid spec")
}

fn term(env: &Env, name: &str) -> f64 {
    let mut t = vec![0.0; env.spec.terms_len()];
    env.write_terms(&mut t);
    t[TERMS.iter().position(|&n| n == name).unwrap()]
}

#[test]
fn redundant_start_sends_copies_before_the_first_decision_and_normal_start_does_not() {
    let red = Env::new(spec(Some(1)), 1).unwrap();
    let normal = Env::new(spec(None), 1).unwrap();
    // The first interval (before any decision): both subflows are up, so the redundant start
    // copies segments; the default (normal, minRTT) sends each segment once.
    assert_eq!(term(&red, "subflows"), 2.0);
    assert!(term(&red, "redundant_mbps") > 0.5, "redundant start: {} Mbit/s of copies", term(&red, "redundant_mbps"));
    assert_eq!(term(&normal, "redundant_mbps"), 0.0);
    // Once the agent answers normal, no more copies.
    let mut red = red;
    red.step(&[0.0]);
    red.step(&[0.0]);
    assert_eq!(term(&red, "redundant_mbps"), 0.0);
}

#[test]
fn initial_mode_is_checked() {
    let bad = |extra: &str| {
        let text = format!(r#"{{"scenario": "", "source": "s", "flow": 0, {extra}}}"#);
        EnvSpec::from_json(&text).map(|_| ()).unwrap_err().0
    };
    assert!(bad(r#""action": "mode", "initial_mode": 2"#)
        .contains("initial_mode: expected 0 (normal) or 1 (redundant), got 2"));
    assert!(bad(r#""action": "weights", "initial_mode": 1"#).contains("initial_mode: only with action \"mode\""));
}
