//! `pgo_train SCENARIO.toml...`: the training run of the profile-guided build
//! (`scripts/pgo.sh`, issue 22). Built with `-Cprofile-generate`, it exercises the code paths our
//! users' runs take, so that `-Cprofile-use` lays out and inlines the simulator for them:
//!
//! 1. every scenario run to its end and its outputs rendered (summary, time series, packet
//!    rows), as `mpsched run` does;
//! 2. the same scenario with every multipath flow on the `external-packet` scheduler, paused at
//!    each decision and answered with the default path, as a learning environment drives it
//!    (`Sim::advance` / `Sim::decide`), with the connection's state read at every stop; at most
//!    [`MAX_DECISIONS`] per scenario, so that no scenario's pauses outweigh the other runs in
//!    the profile (one of them makes 2.7 million).
//!
//! The scenarios are the caller's (the script passes shipped scenarios that are *not* benchmark
//! scenarios, so the benchmarks measure a profile they did not train). Nothing is printed but a
//! count per scenario; a scenario that does not parse is skipped with a note (sweeps need
//! `mpsched compare`).
use mpsched_sim::{Decision, Format, Scenario, Sim, Stop};

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: pgo_train SCENARIO.toml...");
        std::process::exit(2);
    }
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let sc = match Scenario::parse(&text, &path, Format::Toml, None) {
            Ok(sc) => sc,
            Err(e) => {
                eprintln!("pgo_train: skipped {path}: {e}");
                continue;
            }
        };
        let rendered = run_to_end(sc.clone());
        let decisions = run_paused(sc);
        println!("{path}: {rendered} output values, {decisions} external decisions");
    }
}

/// Runs `sc` to its end and renders its outputs; returns the summary's bytes plus the time
/// series' values (so none is optimised away).
fn run_to_end(sc: Scenario) -> usize {
    let mut sim = Sim::new(sc);
    sim.run();
    let out = sim.output();
    out.summary_json.len() + out.timeseries.columns.iter().map(|(_, c)| c.len()).sum::<usize>()
}

/// Decisions answered per scenario in the paused run.
const MAX_DECISIONS: u64 = 20_000;

/// Runs `sc` with every multipath flow's scheduler external, answering each decision with the
/// default path, until its end or [`MAX_DECISIONS`]; returns the number of decisions.
fn run_paused(mut sc: Scenario) -> u64 {
    let external = mpsched_transport::SchedSpec::parse("external-packet").expect("a built-in scheduler");
    for f in sc.flows.iter_mut().filter(|f| f.paths.len() > 1) {
        f.scheduler = external.clone();
    }
    let mut sim = Sim::new(sc);
    let mut n = 0;
    loop {
        match sim.advance(u64::MAX) {
            Stop::Decision { .. } if n == MAX_DECISIONS => break,
            Stop::Decision { flow } => {
                n += 1;
                std::hint::black_box(sim.connection(flow as usize).map(|c| c.info()));
                sim.decide(flow as usize, Decision::Path(None));
            }
            Stop::Interval { .. } => {}
            Stop::Deadline | Stop::Finished => break,
        }
    }
    std::hint::black_box(sim.output());
    n
}
