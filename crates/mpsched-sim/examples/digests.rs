//! Output digests of scenario runs, to check that a refactor leaves results byte-identical.
//!
//! `cargo run --release -p mpsched-sim --example digests [--seed N] [FILE.toml ...]`
//!
//! Without files it prints the recorded set's runs ([`mpsched_sim::digest::recorded_runs`]:
//! every `scenarios/*.toml` of the repository sorted by name, a file with sweeps once per sweep
//! point, then the built-in benchmarks), seed 1 unless `--seed`: the lines of
//! `crates/mpsched-sim/tests/digests.txt`, which the `digests` test compares. For each run one
//! line: its name, then a 64-bit FNV-1a digest of the summary JSON, the resolved scenario and
//! each output table (every value in its exact `Debug` form, so floats are compared bit for
//! bit). Save the output before a change and `diff` it against the output after.
use std::path::PathBuf;

use mpsched_sim::digest;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut seed = 1u64;
    if let Some(i) = args.iter().position(|a| a == "--seed") {
        seed = args.get(i + 1).and_then(|s| s.parse().ok()).expect("--seed N");
        args.drain(i..i + 2);
    }
    let runs = if args.is_empty() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        digest::recorded_runs(&dir)
    } else {
        args.iter()
            .map(|f| {
                let text = std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}"))?;
                // The file name as the source, so that error lines do not depend on the path.
                let name = PathBuf::from(f).file_name().unwrap_or_default().to_string_lossy().into_owned();
                digest::expand_file(&name, text)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.into_iter().flatten().collect())
    };
    for run in runs.unwrap_or_else(|e| panic!("{e}")) {
        println!("{}", digest::run_line(&run, seed));
    }
}
