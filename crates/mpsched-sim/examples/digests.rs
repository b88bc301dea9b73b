//! Output digests of scenario runs, to check that a refactor leaves results byte-identical.
//!
//! `cargo run --release -p mpsched-sim --example digests [--seed N] [FILE.toml ...]`
//!
//! Without files it runs every `scenarios/*.toml` of the repository (sorted by name). For each
//! run it prints one line: the file name, then a 64-bit FNV-1a digest of the summary JSON, the
//! resolved scenario and each output table (flows, subflows, timeseries, links; every value in
//! its exact `Debug` form, so floats are compared bit for bit). Save the output before a change
//! and `diff` it against the output after.
use std::fmt::Write as _;
use std::path::PathBuf;

use mpsched_sim::{Format, Table};

/// 64-bit FNV-1a (enough to tell outputs apart; not a cryptographic digest).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

fn table_digest(t: &Table) -> u64 {
    let mut s = String::new();
    for (name, col) in &t.columns {
        let _ = write!(s, "{name}={col:?};");
    }
    fnv1a(s.as_bytes())
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut seed = 1u64;
    if let Some(i) = args.iter().position(|a| a == "--seed") {
        seed = args.get(i + 1).and_then(|s| s.parse().ok()).expect("--seed N");
        args.drain(i..i + 2);
    }
    let mut files: Vec<PathBuf> = args.iter().map(PathBuf::from).collect();
    if files.is_empty() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        files = std::fs::read_dir(&dir)
            .expect("scenarios/")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
    }
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable scenario");
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        // The file name as the source, so that error lines do not depend on the checkout's path.
        match mpsched_sim::run_text(&text, &name, Format::Toml, Some(seed)) {
            Ok(out) => println!(
                "{name:<28} summary {:016x} resolved {:016x} flows {:016x} subflows {:016x} timeseries {:016x} links {:016x}",
                fnv1a(out.summary_json.as_bytes()),
                fnv1a(out.resolved_toml.as_bytes()),
                table_digest(&out.flows),
                table_digest(&out.subflows),
                table_digest(&out.timeseries),
                table_digest(&out.links),
            ),
            Err(e) => println!("{name:<28} error {e}"),
        }
    }
}
