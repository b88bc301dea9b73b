//! The scenario, run and trace targets.

use std::path::PathBuf;

use mpsched_sim::scenario::parse_trace;
use mpsched_sim::{check_invariants, parse_text, Format, Scenario, Sim};

use crate::{error_kind, Outcome};

/// The name scenario inputs go by (relative trace paths resolve from the working directory).
pub const SCENARIO_SOURCE: &str = "fuzz.toml";
/// The name trace inputs go by in parse errors.
pub const TRACE_SOURCE: &str = "fuzz.trace";
/// Simulated time a `run` input runs for at most, ns.
pub const RUN_NS: u64 = 200_000_000;
/// Most flows of a `run` input that runs: larger scenarios (up to the resolver's 100,000
/// flows, all of which may start at once) are a question of scale, not of correctness, and
/// would take minutes and gigabytes each; they are resolved only.
pub const RUN_MAX_FLOWS: usize = 1000;

fn text(data: &[u8]) -> Result<&str, Outcome> {
    std::str::from_utf8(data).map_err(|_| Ok("not UTF-8".to_string()))
}

fn parse(data: &[u8]) -> Result<Scenario, Outcome> {
    let text = text(data)?;
    let fmt = if text.trim_start().starts_with('{') { Format::Json } else { Format::Toml };
    parse_text(text, SCENARIO_SOURCE, fmt, None).map_err(|e| error_kind(&e.0, &format!("{SCENARIO_SOURCE}: ")))
}

/// Scenario text through the parser and the resolver.
pub fn scenario(data: &[u8]) -> Outcome {
    match parse(data) {
        Ok(sc) => Ok(format!("ok: {} flows, {} links", bucket(sc.flows.len()), bucket(sc.links.len()))),
        Err(outcome) => outcome,
    }
}

/// Scenario text through the resolver, then at most [`RUN_NS`] of simulation whose outputs
/// must satisfy every output invariant.
pub fn run(data: &[u8]) -> Outcome {
    match parse(data) {
        Ok(sc) if sc.flows.len() > RUN_MAX_FLOWS => Ok(format!("not run: {} flows", bucket(sc.flows.len()))),
        Ok(sc) => run_checked(sc),
        Err(outcome) => outcome,
    }
}

fn run_checked(mut sc: Scenario) -> Outcome {
    sc.duration_ns = sc.duration_ns.min(RUN_NS);
    let mut sim = Sim::new(sc);
    sim.run();
    let out = sim.output();
    check_invariants(&sim, &out)?;
    let completed = out.summary_json.matches("\"completed\": true").count();
    Ok(format!("ran: {} flows completed", bucket(completed)))
}

/// 0, 1, 2-9, 10-99, ...: a count as an order of magnitude (outcome labels stay few).
fn bucket(n: usize) -> String {
    match n {
        0 | 1 => n.to_string(),
        _ => format!("{}+", 10usize.pow(n.ilog10()).max(2)),
    }
}

/// A mahimahi trace through the parser, then as the downlink trace of a two-path scenario run
/// for 0.1 simulated seconds (output invariants checked).
pub fn trace(data: &[u8]) -> Outcome {
    let text = match text(data) {
        Ok(t) => t,
        Err(outcome) => return outcome,
    };
    if let Err(e) = parse_trace(text, TRACE_SOURCE) {
        return error_kind(&e.0, &format!("{TRACE_SOURCE}: "));
    }
    let file = trace_file();
    std::fs::write(&file, data).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let scenario = format!(
        "[sim]\nduration_s = 0.1\n\n[[paths]]\nname = \"cell\"\nrate_mbps = 10\ndelay_ms = 20\ntrace = {:?}\n\n\
         [[paths]]\nname = \"wifi\"\nrate_mbps = 20\ndelay_ms = 5\n\n[[flows]]\nname = \"f\"\npaths = [\"cell\", \"wifi\"]\n",
        file.display().to_string()
    );
    match parse_text(&scenario, "fuzz-trace.toml", Format::Toml, None) {
        Ok(sc) => run_checked(sc).map(|ran| format!("trace {ran}")),
        Err(e) => error_kind(&e.0, "fuzz-trace.toml: paths[0].trace: "),
    }
}

/// This process's scratch trace file (each input overwrites it).
fn trace_file() -> PathBuf {
    std::env::temp_dir().join(format!("mpsched-fuzz-{}.trace", std::process::id()))
}
