//! Scenario features resolved before the simulation: parameter ranges, synthetic traces and
//! random handoffs, through the scenario parser (TOML and JSON) as `mpsched run` uses it.

use mpsched_sim::{parse_text, run, Format, Scenario};

const BASE: &str = r#"
[sim]
duration_s = 2
seed = 5

[[paths]]
name = "wifi"
rate_mbps = { range = [5, 10] }
delay_ms = { range = [20, 30] }

[[paths]]
name = "lte"
rate_mbps = 15
delay_ms = { range = [50, 100] }
queue_bytes = { range = [30000, 60000] }
loss = { model = "bernoulli", p = { range = [0.0001, 0.03], dist = "loguniform" } }

[[flows]]
name = "f"
paths = ["wifi", "lte"]
size_bytes = 200000
"#;

fn parse(text: &str, seed: Option<u64>) -> Scenario {
    parse_text(text, "s.toml", Format::Toml, seed).unwrap()
}

fn resolved(sc: &Scenario) -> toml::Table {
    toml::from_str(&sc.resolved_toml()).unwrap()
}

fn link_f64(t: &toml::Table, link: usize, field: &str) -> f64 {
    let v = &t["links"].as_array().unwrap()[link][field];
    v.as_float().or(v.as_integer().map(|i| i as f64)).unwrap()
}

#[test]
fn random_ranges_resolve_within_bounds_and_show_in_the_resolved_copy() {
    let sc = parse(BASE, None);
    let t = resolved(&sc);
    // links: wifi.fwd, wifi.rev, lte.fwd, lte.rev.
    let wifi_rate = link_f64(&t, 0, "rate_mbps");
    let wifi_delay = link_f64(&t, 0, "delay_ms");
    assert!((5.0..=10.0).contains(&wifi_rate), "{wifi_rate}");
    assert!((20.0..=30.0).contains(&wifi_delay), "{wifi_delay}");
    // The shortcut's two links get the one drawn value.
    assert_eq!(link_f64(&t, 1, "delay_ms"), wifi_delay);
    assert_eq!(sc.links[0].delay_ns, (wifi_delay * 1e6).round() as u64);
    let q = t["links"].as_array().unwrap()[2]["queue_bytes"].as_integer().unwrap();
    assert!((30_000..=60_000).contains(&q), "queue_bytes is an integer field: {q}");
    let p = t["links"].as_array().unwrap()[2]["loss"]["p"].as_float().unwrap();
    assert!((0.0001..=0.03).contains(&p), "{p}");
    // The resolved copy has no ranges left and parses back to the same scenario.
    let again = Scenario::from_toml(&sc.resolved_toml(), "r.toml").unwrap();
    assert_eq!(again.resolved_toml(), sc.resolved_toml());
    // And it runs.
    assert_eq!(run(sc).flows.rows(), 1);
}

#[test]
fn draws_follow_the_seed_and_the_seed_override() {
    let a = parse(BASE, None).resolved_toml();
    assert_eq!(parse(BASE, None).resolved_toml(), a, "same seed, same draws");
    // --seed 5 is the file's own seed: identical.
    assert_eq!(parse(BASE, Some(5)).resolved_toml(), a);
    let b = parse(BASE, Some(6));
    assert_eq!(b.seed, 6);
    let (ta, tb) = (toml::from_str::<toml::Table>(&a).unwrap(), resolved(&b));
    assert_ne!(link_f64(&ta, 0, "delay_ms"), link_f64(&tb, 0, "delay_ms"));
    // JSON (the Python API's dicts) resolves the same way as TOML.
    let json = serde_json::to_string(&toml::from_str::<toml::Table>(BASE).unwrap()).unwrap();
    let j = parse_text(&json, "s.toml", Format::Json, None).unwrap();
    assert_eq!(j.resolved_toml(), a);
}

#[test]
fn malformed_ranges_and_sweeps_are_one_line_errors() {
    let err = |text: &str| parse_text(text, "s.toml", Format::Toml, None).unwrap_err().0;
    assert_eq!(
        err(&BASE.replace("[20, 30]", "[30, 20]")),
        "s.toml: line 9: paths[0].delay_ms: expected lo <= hi in `range = [lo, hi]`, got [30, 20]"
    );
    let e = err(&BASE.replace("delay_ms = { range = [20, 30] }", "delay_ms = { range = [20, 100], steps = 5 }"));
    assert!(
        e.starts_with(
            "s.toml: line 9: paths[0].delay_ms: a sweep (`steps = 5`) stands for several runs: use `mpsched compare`"
        ),
        "{e}"
    );
    let e = err(&BASE.replace("[20, 30] }", "[20, 30], steps = 0 }"));
    assert!(e.starts_with("s.toml: line 9: paths[0].delay_ms: steps: expected an integer >= 1"), "{e}");
    let e = err(&BASE.replace("[20, 30]", "[\"a\", 30]"));
    assert!(e.starts_with("s.toml: line 9: paths[0].delay_ms: expected `range = [lo, hi]` with two numbers"), "{e}");
    let e = err(&BASE.replace("seed = 5", "seed = { range = [1, 3] }"));
    assert!(e.starts_with("s.toml: sim.seed: the seed cannot be a range"), "{e}");
    // A range where a string belongs is a type error of that field.
    let e = err(&BASE.replace("name = \"wifi\"", "name = { range = [1, 2] }"));
    assert!(e.starts_with("s.toml: ") && !e.contains('\n'), "{e}");
    // Without ranges, errors still carry the line number.
    let plain = "[sim]\nduration_s = 1\n[[paths]]\nname = \"p\"\nrate_mbps = 5\nbogus = 1\n[[flows]]\nname = \"f\"\npath = \"p\"\n";
    assert!(err(plain).starts_with("s.toml: line 6: unknown field `bogus`"), "{}", err(plain));
    // With ranges the tree is deserialized as a whole: the field is named, the line looked up.
    let e = err(&plain.replace("rate_mbps = 5", "rate_mbps = { range = [5, 6] }"));
    assert!(e.starts_with("s.toml: line 6: paths[0].bogus: unknown field `bogus`"), "{e}");
}

const SYNTH: &str = r#"
[sim]
duration_s = 5
seed = 2

[[paths]]
name = "cell"
delay_ms = 30
trace = { synthetic = { mean_mbps = 12, duration_s = 20, outage_per_min = 3 } }
trace_reverse = { synthetic = { mean_mbps = 12, duration_s = 20, seed = 99 } }

[[flows]]
name = "bulk"
path = "cell"
"#;

#[test]
fn synthetic_traces_inline() {
    let sc = parse(SYNTH, None);
    let fwd = sc.links[0].trace.as_ref().unwrap();
    let rev = sc.links[1].trace.as_ref().unwrap();
    assert_eq!(fwd.period_ms(), 20_000);
    // 12 Mbit/s = one 1500-byte opportunity per ms on average; 20 s of one trace is only ~10
    // dwell periods of the rate process, so only a loose check (±35 %).
    let n = fwd.times_ms.len() as f64;
    assert!((n / 20_000.0 - 1.0).abs() < 0.35, "{n} opportunities");
    assert_ne!(fwd.times_ms, rev.times_ms);
    // The resolved copy writes every parameter and the seed: it regenerates the same traces.
    let text = sc.resolved_toml();
    assert!(text.contains("variability = 0.5"), "{text}");
    let again = Scenario::from_toml(&text, "r.toml").unwrap();
    assert_eq!(again.links[0].trace.as_ref().unwrap().times_ms, fwd.times_ms);
    assert_eq!(again.links[1].trace.as_ref().unwrap().times_ms, rev.times_ms);
    // The seed of the forward trace follows the scenario seed; the reverse's is fixed.
    let other = parse(SYNTH, Some(3));
    assert_ne!(other.links[0].trace.as_ref().unwrap().times_ms, fwd.times_ms);
    assert_eq!(other.links[1].trace.as_ref().unwrap().times_ms, rev.times_ms);
    let out = run(sc);
    assert!(out.summary_json.contains("\"bulk\""));
    // Bad parameters name the field.
    let e = parse_text(
        &SYNTH.replace("mean_mbps = 12, duration_s = 20, outage", "mean_mbps = -1, duration_s = 20, outage"),
        "s.toml",
        Format::Toml,
        None,
    )
    .unwrap_err()
    .0;
    assert_eq!(e, "s.toml: paths[0].trace.synthetic.mean_mbps: expected a positive number, got -1");
}

/// Every seed a run records is in TOML's integer range, so its `scenario.toml` runs again: a
/// derived synthetic-trace seed used to be any u64 (`--seed 18446744073` derived
/// 10298806105355800493 for cellular-synthetic's link, and re-running the written file failed
/// with "u64 value was too large"). Seeds past 2^63 − 1 given directly are one-line errors.
#[test]
fn every_recorded_seed_reads_back_from_the_resolved_copy() {
    for seed in [0, 1, 3, 18_446_744_073, (1 << 62) + 17, i64::MAX as u64] {
        let sc = parse(SYNTH, Some(seed));
        let text = sc.resolved_toml();
        let again = Scenario::from_toml(&text, "r.toml").unwrap_or_else(|e| panic!("seed {seed}: {}", e.0));
        assert_eq!(again.resolved_toml(), text, "seed {seed}");
        assert_eq!(again.links[0].trace.as_ref().unwrap().times_ms, sc.links[0].trace.as_ref().unwrap().times_ms);
        let t = resolved(&sc);
        let fwd_seed = t["links"][0]["trace"]["synthetic"]["seed"].as_integer().unwrap();
        assert!(fwd_seed >= 0, "seed {seed}: trace seed {fwd_seed}");
    }
    let err = |text: &str, seed| parse_text(text, "s.toml", Format::Json, seed).unwrap_err().0;
    let json = r#"{"sim": {"duration_s": 1, "seed": 9223372036854775808}, "paths": [{"name": "p", "rate_mbps": 1, "delay_ms": 1}],
        "flows": [{"name": "f", "paths": ["p"]}]}"#;
    assert_eq!(
        err(json, None),
        "s.toml: sim.seed: expected an integer in [0, 2^63 - 1] (TOML's integer range), got 9223372036854775808"
    );
    let json = r#"{"sim": {"duration_s": 1}, "paths": [{"name": "p", "delay_ms": 1,
        "trace": {"synthetic": {"mean_mbps": 5, "seed": 18446744073709551615}}}], "flows": [{"name": "f", "paths": ["p"]}]}"#;
    assert_eq!(
        err(json, None),
        "s.toml: paths[0].trace.synthetic.seed: expected an integer in [0, 2^63 - 1] (TOML's integer range), \
         got 18446744073709551615"
    );
}

const HANDOFF: &str = r#"
[sim]
duration_s = 3600
seed = 8

[[paths]]
name = "p1"
rate_mbps = 10
delay_ms = 25

[[paths]]
name = "p2"
rate_mbps = 10
delay_ms = 50
loss = { model = "bernoulli", p = 0.001 }

[[handoffs]]
path = "p2"
rate_per_min = 2
duration_s = [10, 20]
delay_ms = 100
loss = { model = "bernoulli", p = 0.05 }
outage_s = 4

[[flows]]
name = "f"
paths = ["p1", "p2"]
"#;

/// One handoff = four schedule entries on the forward link (degrade, outage, back up,
/// restore). Expected handoffs in 3600 s: 3600 / (30 s mean gap + 15 s mean duration) = 80; the
/// renewal count has a standard deviation of about 0.67·sqrt(80) = 6: ±25 % is 3 of them.
#[test]
fn handoffs_expand_into_link_schedules() {
    let sc = parse(HANDOFF, None);
    let fwd = &sc.links[2]; // p2.fwd
    let rev = &sc.links[3];
    assert_eq!(fwd.name, "p2.fwd");
    assert_eq!(fwd.changes.len() % 4, 0);
    let n = fwd.changes.len() / 4;
    assert!((60..=100).contains(&n), "{n} handoffs");
    assert_eq!(rev.changes.len(), fwd.changes.len());
    // The first handoff: 100 ms and 5 % loss, a centred outage, then the initial state again.
    let c = &fwd.changes[..4];
    assert_eq!(c[0].delay_ns, Some(100_000_000));
    assert!(matches!(c[0].loss, Some(mpsched_sim::link::LossModel::Bernoulli { p }) if p == 0.05));
    assert_eq!((c[1].outage, c[2].outage), (Some(true), Some(false)));
    assert_eq!(c[2].at_ns - c[1].at_ns, 4_000_000_000);
    assert_eq!(c[3].delay_ns, Some(50_000_000));
    assert!(matches!(c[3].loss, Some(mpsched_sim::link::LossModel::Bernoulli { p }) if p == 0.001));
    let d = c[3].at_ns - c[0].at_ns;
    assert!((10_000_000_000..=20_000_000_000).contains(&d), "{d}");
    // Loss changes only on the data direction.
    assert!(rev.changes.iter().all(|c| c.loss.is_none()));
    // Path 1 is untouched; same seed, same handoffs; another seed, others.
    assert!(sc.links[0].changes.is_empty());
    assert_eq!(parse(HANDOFF, None).resolved_toml(), sc.resolved_toml());
    assert_ne!(parse(HANDOFF, Some(9)).links[2].changes, fwd.changes);
    // The resolved copy holds the schedule, not the process.
    let text = sc.resolved_toml();
    assert!(!text.contains("handoffs") && text.contains("outage = true"));
    let e = parse_text(&HANDOFF.replace("path = \"p2\"\nrate", "path = \"p3\"\nrate"), "s.toml", Format::Toml, None)
        .unwrap_err()
        .0;
    assert_eq!(e, "s.toml: handoffs[0].path: unknown path \"p3\"");
    let e = parse_text(&HANDOFF.replace("outage_s = 4", "outage_s = 12"), "s.toml", Format::Toml, None).unwrap_err().0;
    assert_eq!(e, "s.toml: handoffs[0].outage_s: expected at most the shortest handoff (10 s), got 12");
}
