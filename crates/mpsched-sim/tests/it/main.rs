//! The simulator's integration tests, linked as one test binary (one module per topic) so the
//! workspace links one executable per crate instead of one per file. `common` holds the shared
//! helpers (running a scenario text, reading table columns).

mod common;

mod bad_input;
mod bbr;
mod decisions;
mod digests;
mod energy;
mod env_bounds;
mod env_host;
mod env_initial_mode;
mod fuzz_scenarios;
mod invariants;
mod jitter;
mod olms;
mod outage_rtt;
mod packet_trace;
mod peekaboo;
mod pieces;
mod policy_sched;
mod ranges_traces_handoffs;
mod real_trace_findings;
mod recorder;
mod stop_fairness;
mod trace_offsets;
mod udp;
mod validation;
mod validation_multipath;
mod workloads;
