//! The short fuzzing run of `make test`: a few hundred seeded mutants per target (a few seconds
//! in all), no crash, no hang, and both accepted and rejected inputs (the run is not vacuous).
//! The long run is `make fuzz` (`cargo run --profile fuzz -p mpsched-fuzz`).

use std::time::Duration;

use mpsched_fuzz::corpus::Seeds;
use mpsched_fuzz::runner::{run, Config};
use mpsched_fuzz::Target;

fn short(target: Target, inputs: u64, min_accepted: u64, min_rejected: u64) {
    let cfg =
        Config { target, inputs, seed: 1, bound: Duration::from_secs(2), crash_dir: None, seeds: Seeds::from_repo() };
    let r = run(&cfg);
    let line = r.line(target);
    assert_eq!((r.crashes, r.hangs), (0, 0), "{line}: {:?}", r.failures);
    let accepted = r.inputs - r.errors();
    assert!(accepted >= min_accepted && r.errors() >= min_rejected, "{line}");
    assert!(r.outcomes.len() >= 3, "{line}: {:?}", r.outcomes);
}

#[test]
fn scenario_resolver() {
    short(Target::Scenario, 400, 50, 100);
}

#[test]
fn short_runs_keep_the_output_invariants() {
    short(Target::Run, 120, 20, 30);
}

#[test]
fn trace_parser() {
    short(Target::Trace, 150, 20, 30);
}

#[test]
fn policy_loader() {
    short(Target::Policy, 60, 5, 20);
}

#[test]
fn segment_handling() {
    short(Target::Segment, 300, 300, 0);
}
