//! Every shipped scenario's outputs against the recorded digests (`tests/digests.txt`): a change
//! that alters any output of any shipped scenario (or built-in benchmark) fails here. An
//! intended change is recorded by regenerating the file (see its header) and saying why in its
//! changelog.

use std::path::{Path, PathBuf};

use mpsched_sim::digest;

/// Set to regenerate the recorded lines (the `#` lines, header and changelog, are kept).
const UPDATE: &str = "MPSCHED_UPDATE_DIGESTS";
const SEED: u64 = 1;

fn recorded_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/digests.txt")
}

/// The digest lines of every recorded run, in order, computed on all cores.
fn current_lines() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let runs = digest::recorded_runs(&dir).unwrap_or_else(|e| panic!("{e}"));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(runs.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut lines = vec![String::new(); runs.len()];
    let done: Vec<Vec<(usize, String)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(run) = runs.get(i) else { return out };
                        out.push((i, digest::run_line(run, SEED)));
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a digest worker panicked")).collect()
    });
    for (i, l) in done.into_iter().flatten() {
        lines[i] = l;
    }
    lines
}

fn name_of(line: &str) -> &str {
    line.split_whitespace().next().unwrap_or("")
}

#[test]
fn every_shipped_scenario_matches_the_recorded_digests() {
    let path = recorded_file();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (comments, recorded): (Vec<&str>, Vec<&str>) =
        text.lines().filter(|l| !l.trim().is_empty()).partition(|l| l.starts_with('#'));
    let lines = current_lines();
    if std::env::var_os(UPDATE).is_some() {
        let mut out = comments.join("\n");
        out.push_str("\n\n");
        for l in &lines {
            out.push_str(l);
            out.push('\n');
        }
        std::fs::write(&path, out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let mut diffs = Vec::new();
    for l in &lines {
        match recorded.iter().find(|r| name_of(r) == name_of(l)) {
            Some(r) if r.split_whitespace().eq(l.split_whitespace()) => {}
            Some(r) => diffs.push(format!("changed:\n  recorded {r}\n  now      {l}")),
            None => diffs.push(format!("not recorded: {l}")),
        }
    }
    for r in &recorded {
        if !lines.iter().any(|l| name_of(l) == name_of(r)) {
            diffs.push(format!("recorded, no longer run: {r}"));
        }
    }
    assert!(
        diffs.is_empty(),
        "{} of {} runs differ from {}:\n{}\nIf the change is intended: \
         {UPDATE}=1 cargo test --release -p mpsched-sim --test it digests, \
         then add a changelog entry to the file saying why.",
        diffs.len(),
        lines.len(),
        path.display(),
        diffs.join("\n")
    );
}
