//! Real-trace workflow and queues: per-link trace start offsets (`trace_offset_s`), errors of shortcut
//! paths with a trace in one direction, warnings for fields a trace makes useless, queue limits in
//! bytes, packets or unlimited, and queue occupancy in the outputs.

use std::path::PathBuf;

use mpsched_sim::{parse_text, run, Format, Scenario};

/// A trace file written for the test (one opportunity every ms, period 500 ms, with a 100 ms
/// hole from 200 ms), in its own directory. Tests run in parallel and each rewrites it: the text
/// goes to a file of the thread's own and is renamed into place, so no reader sees it half-written.
fn trace_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mpsched-trace-offsets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let lines: Vec<String> = (1..=500u64).filter(|t| !(200..300).contains(t)).map(|t| t.to_string()).collect();
    let tmp = dir.join(format!("{name}.{:?}", std::thread::current().id()));
    std::fs::write(&tmp, lines.join("\n") + "\n").unwrap();
    std::fs::rename(&tmp, &p).unwrap();
    p
}

fn scenario(path_fields: &str) -> String {
    let t = trace_file("t.down");
    format!(
        "[sim]\nduration_s = 2\n[[links]]\nname = \"x\"\nrate_mbps = 5\n[[links]]\nname = \"y\"\nrate_mbps = 5\n\
         [[paths]]\nname = \"wifi\"\nforward = [\"x\"]\nreverse = [\"y\"]\n\
         [[paths]]\nname = \"lte\"\ndelay_ms = 20\ntrace = {t:?}\n{path_fields}\n\
         [[flows]]\nname = \"f\"\npath = \"lte\"\n"
    )
}

fn parse(text: &str, seed: Option<u64>) -> Result<Scenario, String> {
    parse_text(text, "s.toml", Format::Toml, seed).map_err(|e| e.0)
}

fn resolved_offset(sc: &Scenario, link: usize) -> Option<f64> {
    let t: toml::Table = toml::from_str(&sc.resolved_toml()).unwrap();
    t["links"].as_array().unwrap()[link].get("trace_offset_s").map(|v| v.as_float().unwrap())
}

#[test]
fn a_trace_with_one_direction_reports_the_paths_own_fields() {
    // Before e521cf6 this named `links[3].rate_mbps`, a link the user never wrote.
    let e = parse(&scenario(""), None).unwrap_err();
    assert_eq!(e, "s.toml: paths[1].rate_mbps: missing: expected a positive rate in Mbit/s (or `trace_reverse`)");
    let e = parse(&scenario("").replace("trace =", "trace_reverse ="), None).unwrap_err();
    assert_eq!(e, "s.toml: paths[1].rate_mbps: missing: expected a positive rate in Mbit/s (or `trace`)");
    let e = parse(&scenario("rate_mbps = 5\ntrace_offset_s = -1"), None).unwrap_err();
    assert_eq!(e, "s.toml: paths[1].trace_offset_s: expected a number >= 0, got -1");
    // The trace's period is 500 ms.
    let e = parse(&scenario("rate_mbps = 5\ntrace_offset_s = 0.5"), None).unwrap_err();
    assert_eq!(e, "s.toml: paths[1].trace_offset_s: expected an offset below the trace's period (0.5 s), got 0.5");
    let e = parse(&scenario("rate_mbps = 5\ntrace_offset_s = \"soon\""), None).unwrap_err();
    assert_eq!(e, "s.toml: line 18: trace_offset_s: expected a number of seconds or \"random\", got \"soon\"");
    let no_trace = scenario("rate_mbps = 5\ntrace_offset_s = 0.1").replace("trace = ", "# ");
    let e = parse(&no_trace, None).unwrap_err();
    assert_eq!(
        e,
        "s.toml: paths[1].trace_offset_s: expected a `trace` or `trace_reverse` beside it (the offset is into the trace)"
    );
}

#[test]
fn a_random_offset_is_drawn_per_seed_and_recorded() {
    let text = scenario("rate_mbps = 5\ntrace_offset_s = \"random\"");
    let offsets: Vec<f64> = (1..=6).map(|s| resolved_offset(&parse(&text, Some(s)).unwrap(), 2).unwrap()).collect();
    assert!(offsets.iter().all(|&o| (0.0..0.5).contains(&o) && (o * 1e3).fract() == 0.0), "{offsets:?}");
    let mut distinct = offsets.clone();
    distinct.dedup();
    assert!(distinct.len() >= 5, "six seeds, offsets {offsets:?}");
    // The reverse link has no trace: no offset.
    assert_eq!(resolved_offset(&parse(&text, Some(1)).unwrap(), 3), None);
    // The resolved copy replays the same run.
    let sc = parse(&text, Some(3)).unwrap();
    let again = Scenario::from_toml(&sc.resolved_toml(), "r.toml").unwrap();
    assert_eq!(again.resolved_toml(), sc.resolved_toml());
    assert_eq!(run(sc).summary_json, run(again).summary_json);
    // Seeds now differ on the trace (every seed replayed it from 0 before).
    let goodput = |s| run(parse(&text, Some(s)).unwrap()).flows.f64s("goodput_mbps")[0];
    assert_ne!(goodput(1), goodput(2));
    // No offset: the same resolved text as before the field existed.
    assert!(!parse(&scenario("rate_mbps = 5"), None).unwrap().resolved_toml().contains("trace_offset_s"));
}

#[test]
fn an_offset_shifts_the_trace_in_time() {
    // The trace's hole is at [200, 300) ms. From offset 0.15 s it is at [50, 150) ms: the
    // first 50 ms deliver 50 opportunities, the next 100 ms none.
    let sc = parse(&scenario("rate_mbps = 5\ntrace_offset_s = 0.15"), None).unwrap();
    let t = sc.links[2].trace.as_ref().unwrap();
    assert_eq!(t.period_ms(), 500);
    assert_eq!(t.times_ms[..3], [0, 1, 2]);
    assert_eq!(t.times_ms.iter().filter(|&&x| (50..150).contains(&x)).count(), 0);
    assert_eq!(t.times_ms.len(), 400);
    assert_eq!(resolved_offset(&sc, 2), Some(0.15));
}

#[test]
fn a_rate_beside_a_trace_is_a_warning() {
    let sc = parse(&scenario("rate_mbps = 5"), None).unwrap();
    // The rate is the reverse direction's: used, no warning.
    assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
    let both = scenario("rate_mbps = 5\nschedule = [{ at_s = 1, rate_mbps = 2 }]\ntrace_reverse = \"t.down\"")
        .replace("trace_reverse = \"t.down\"", &format!("trace_reverse = {:?}", trace_file("t.down")));
    let sc = parse(&both, None).unwrap();
    let why = "ignored: both directions follow a trace (`trace`, `trace_reverse`)";
    assert_eq!(
        sc.warnings,
        [format!("s.toml: paths[1].rate_mbps: {why}"), format!("s.toml: paths[1].schedule[0].rate_mbps: {why}")]
    );
    let out = run(sc);
    let summary: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
    assert_eq!(summary["warnings"].as_array().unwrap().len(), 2);
    // An explicit link.
    let t = trace_file("t.down");
    let explicit = scenario("rate_mbps = 5").replace("name = \"y\"\n", &format!("name = \"y\"\ntrace = {t:?}\n"));
    assert_eq!(
        parse(&explicit, None).unwrap().warnings,
        ["s.toml: links[1].rate_mbps: ignored: the link follows its `trace`"]
    );
    // Without warnings, the summary has no `warnings` key (shipped outputs unchanged).
    let plain = run(parse(&scenario("rate_mbps = 5"), None).unwrap());
    assert!(!plain.summary_json.contains("warnings"));
}

/// A real cellular trace (GPL data, never committed): skipped when absent.
#[test]
fn seeds_differ_on_a_real_trace_with_random_offsets() {
    let real = "/work/shared/traces/cellular/Verizon-LTE-short.down";
    if !std::path::Path::new(real).exists() {
        eprintln!("skipped: {real} absent");
        return;
    }
    let text = format!(
        "[sim]\nduration_s = 5\n[[paths]]\nname = \"lte\"\ndelay_ms = 20\nrate_mbps = 10\ntrace = {real:?}\n\
         trace_offset_s = \"random\"\n[[flows]]\nname = \"f\"\npath = \"lte\"\n"
    );
    let g: Vec<f64> = (1..=3).map(|s| run(parse(&text, Some(s)).unwrap()).flows.f64s("goodput_mbps")[0]).collect();
    assert!(g[0] != g[1] && g[1] != g[2], "{g:?}");
}

#[test]
fn queue_limits_are_typed_and_validated() {
    let base = "[sim]\nduration_s = 1\n[[paths]]\nname = \"p\"\nrate_mbps = 10\ndelay_ms = 5\nQ\n[[flows]]\nname = \"f\"\npath = \"p\"\n";
    let with = |q: &str| base.replace("Q", q);
    let sc = parse(&with("queue_bytes = \"unlimited\""), None).unwrap();
    assert_eq!((sc.links[0].queue_bytes, sc.links[0].queue_packets), (u64::MAX, u64::MAX));
    assert!(sc.resolved_toml().contains("queue_bytes = \"unlimited\""));
    let again = Scenario::from_toml(&sc.resolved_toml(), "r.toml").unwrap();
    assert_eq!(again.links[0].queue_bytes, u64::MAX);
    let sc = parse(&with("queue_packets = 100"), None).unwrap();
    assert_eq!((sc.links[1].queue_bytes, sc.links[1].queue_packets), (u64::MAX, 100));
    let again = Scenario::from_toml(&sc.resolved_toml(), "r.toml").unwrap();
    assert_eq!(again.resolved_toml(), sc.resolved_toml());
    let e = parse(&with("queue_packets = 0"), None).unwrap_err();
    assert_eq!(e, "s.toml: paths[0].queue_packets: expected 1 to 1000000000 packets, got 0");
    let e = parse(&with("queue_packets = 10\nqueue_bytes = 3000"), None).unwrap_err();
    assert_eq!(e, "s.toml: paths[0].queue_packets: give either `queue_bytes` or `queue_packets`, not both");
    let e = parse(&with("queue_bytes = \"big\""), None).unwrap_err();
    assert_eq!(e, "s.toml: line 7: queue_bytes: expected a whole number of bytes or \"unlimited\", got \"big\"");
}

#[test]
fn queue_occupancy_is_in_the_links_and_queues_tables() {
    // A CUBIC flow into a 10 Mbit/s link with a 30-packet queue: the queue fills.
    let text =
        "[sim]\nduration_s = 2\nsample_interval_ms = 100\n[[paths]]\nname = \"p\"\nrate_mbps = 10\ndelay_ms = 5\n\
                queue_packets = 30\n[[flows]]\nname = \"f\"\npath = \"p\"\n";
    let out = run(parse(text, None).unwrap());
    let l = &out.links;
    assert_eq!(l.i64s("max_queue_packets")[0], 30);
    let mean = l.f64s("mean_queue_packets")[0];
    assert!(mean > 1.0 && mean < 30.0, "{mean}");
    let q = &out.queues;
    assert_eq!(q.strs("link")[..2], ["p.fwd".to_string(), "p.rev".to_string()]);
    // 20 samples, two links each; every sample within the limit, some near it.
    assert_eq!(q.f64s("time_s").len(), 40);
    let fwd: Vec<i64> = (0..40).step_by(2).map(|i| q.i64s("queue_packets")[i]).collect();
    assert!(fwd.iter().all(|&n| n <= 30) && fwd.iter().any(|&n| n >= 10), "{fwd:?}");
    assert!((0..40).step_by(2).all(|i| q.i64s("queue_bytes")[i] <= 30 * 1500));
}
