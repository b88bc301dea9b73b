//! The fuzzing harness of mpsched: every target is a plain function from bytes to an outcome
//! label, called both by the cargo-fuzz wrappers (`fuzz/libfuzzer`, nightly + libFuzzer) and by
//! the stable, seeded runner ([`runner`]: `cargo run --release -p mpsched-fuzz -- --target all
//! --inputs 10000`, and the short run of `cargo test`).
//!
//! A target returns `Ok(label)` for an accepted input or an input rejected the way the product
//! promises (a one-line error naming the file and the field or line: the label is the error's
//! kind), and `Err(message)` for a broken promise (a multi-line or unnamed error, a violated
//! output invariant). A panic is a crash; a slow input is a hang ([`runner`]).
//!
//! Targets ([`Target`]):
//! - `scenario`: scenario text (TOML, or JSON when it starts with `{`) through the parser and
//!   resolver ([`mpsched_sim::parse_text`]);
//! - `run`: the same, then the resolved scenario runs for at most 0.2 simulated seconds and its
//!   outputs must satisfy [`mpsched_sim::check_invariants`];
//! - `trace`: a mahimahi trace through [`mpsched_sim::scenario::parse_trace`], then as the trace
//!   of a link in a short run;
//! - `policy`: a policy file (JSON description + safetensors weights, [`policy::split`]) through
//!   the checkpoint loader and one inference;
//! - `segment`: a pair of MPTCP connections driven by a byte string of operations (honest
//!   exchange, loss, reordering, corruption, arbitrary injected segments, timers, path events,
//!   close and abort: [`segment`]).

#![warn(missing_docs)]

pub mod corpus;
pub mod policy;
pub mod runner;
pub mod segment;
pub mod targets;

/// What a target makes of one input: `Ok(kind)` (accepted, or rejected as promised), or
/// `Err(what)` (a broken promise, counted with the crashes).
pub type Outcome = Result<String, String>;

/// A fuzz target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Scenario text → parse and resolve.
    Scenario,
    /// Scenario text → parse, resolve, a short run, output invariants.
    Run,
    /// Mahimahi trace text → parse, then a short run over a link with that trace.
    Trace,
    /// Policy description and weights → load and one inference.
    Policy,
    /// An operation string driving two connections.
    Segment,
}

impl Target {
    /// Every target, in the order `--target all` runs them.
    pub const ALL: [Target; 5] = [Target::Scenario, Target::Run, Target::Trace, Target::Policy, Target::Segment];

    /// Its name on the command line and in crash file names.
    pub fn name(self) -> &'static str {
        match self {
            Target::Scenario => "scenario",
            Target::Run => "run",
            Target::Trace => "trace",
            Target::Policy => "policy",
            Target::Segment => "segment",
        }
    }

    /// The target named `name`.
    pub fn parse(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Runs the target on one input.
    pub fn execute(self, data: &[u8]) -> Outcome {
        match self {
            Target::Scenario => targets::scenario(data),
            Target::Run => targets::run(data),
            Target::Trace => targets::trace(data),
            Target::Policy => policy::policy(data),
            Target::Segment => segment::segments(data),
        }
    }
}

/// The kind of a one-line error: the message after `prefix`, digits folded to `#` and cut to
/// 64 characters (so that `line 12` and `line 13` are one kind, `paths[0].rate_mbps` and
/// `flows[0].size_bytes` two). `Err` if the message breaks the contract: more than one line,
/// or not starting with `prefix` (the file it names).
pub fn error_kind(message: &str, prefix: &str) -> Outcome {
    if message.contains('\n') {
        return Err(format!("multi-line error: {message:?}"));
    }
    let Some(rest) = message.strip_prefix(prefix) else {
        return Err(format!("error does not start with {prefix:?}: {message:?}"));
    };
    let mut kind: String = rest.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).take(64).collect();
    kind.insert_str(0, "error: ");
    Ok(kind)
}
