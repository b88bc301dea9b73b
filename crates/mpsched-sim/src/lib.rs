//! Deterministic discrete-event multipath network simulator.
//!
//! Integer-nanosecond time, an event queue with insertion-order tie-breaking, one RNG stream per
//! component, FIFO links with at most one pending event per stage, and the sans-IO transport of
//! `mpsched-transport` as the endpoints. Same scenario + seed ⇒ byte-identical outputs.

#![warn(missing_docs)]

pub mod algos;
pub mod bench;
pub mod digest;
pub mod energy;
pub mod env;
pub mod event;
pub mod fairness;
pub mod handoff;
pub mod link;
pub mod netmodel;
#[cfg(feature = "olms")]
pub mod olms;
pub mod ranges;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod table;
pub mod tracegen;
pub mod workload;

pub use mpsched_transport::Decision;
pub use scenario::{Scenario, ScenarioError};
pub use sim::{check_invariants, RunOutput, RunStats, Sim, Stop};
pub use table::{Column, Table};

/// Input format of a scenario text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// TOML text.
    Toml,
    /// JSON text.
    Json,
}

/// Parses `text`; `seed` overrides `[sim].seed` before anything random is drawn.
pub fn parse_text(text: &str, source: &str, fmt: Format, seed: Option<u64>) -> Result<Scenario, ScenarioError> {
    Scenario::parse(text, source, fmt, seed)
}

/// Parses `text`, applies `seed` if given, runs to the end and returns every output.
pub fn run_text(text: &str, source: &str, fmt: Format, seed: Option<u64>) -> Result<RunOutput, ScenarioError> {
    Ok(run(parse_text(text, source, fmt, seed)?))
}

/// Runs a parsed scenario.
pub fn run(sc: Scenario) -> RunOutput {
    let mut sim = Sim::new(sc);
    sim.run();
    sim.output()
}
