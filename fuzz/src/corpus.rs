//! Seeds and mutations. Seeds come from the repository (shipped scenarios and policies) and,
//! for traces, from a directory of mahimahi traces read at run time (they are GPL: never copied
//! into the repository); a mutant is a seed with one to four byte-level or token-level changes,
//! drawn from a seeded generator (same seed, same inputs).

use std::path::{Path, PathBuf};

use mpsched_sim::rng::Rng;

use crate::{policy, Target};

/// Where the seeds are read from.
#[derive(Clone, Debug)]
pub struct Seeds {
    /// The repository's root (scenarios in `python/mpsched/scenarios`, policies in
    /// `python/mpsched/agents/checkpoints`).
    pub repo: PathBuf,
    /// A directory of mahimahi traces (searched recursively for `*.up` / `*.down`), if any.
    pub traces: Option<PathBuf>,
}

/// Lines of a trace file kept as a seed (the traces have tens of thousands).
const TRACE_SEED_LINES: usize = 400;

impl Seeds {
    /// The repository this crate is built from, and `../shared/traces` next to it if present.
    pub fn from_repo() -> Seeds {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let traces = Some(repo.join("../shared/traces")).filter(|p| p.is_dir());
        Seeds { repo, traces }
    }

    /// The seed inputs of `target` (never empty).
    pub fn load(&self, target: Target) -> Vec<Vec<u8>> {
        let mut out = match target {
            Target::Scenario | Target::Run => self.files("python/mpsched/scenarios", &["toml"]),
            Target::Trace => self.traces(),
            Target::Policy => self.policies(),
            Target::Segment => segment_seeds(),
        };
        if matches!(target, Target::Scenario | Target::Run) {
            // The same scenarios as JSON (what `mpsched.run(dict)` passes).
            let json = |t: &Vec<u8>| {
                let v: serde_json::Value = toml::from_str(std::str::from_utf8(t).ok()?).ok()?;
                serde_json::to_vec_pretty(&v).ok()
            };
            let extra: Vec<Vec<u8>> = out.iter().filter_map(json).collect();
            out.extend(extra);
        }
        if target == Target::Trace {
            out.push(b"1\n1\n2\n3\n5\n8\n".to_vec());
        }
        if out.is_empty() {
            out.push(Vec::new());
        }
        out
    }

    fn files(&self, dir: &str, exts: &[&str]) -> Vec<Vec<u8>> {
        let mut paths = list(&self.repo.join(dir), exts);
        paths.sort();
        paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
    }

    fn traces(&self) -> Vec<Vec<u8>> {
        let Some(dir) = &self.traces else { return Vec::new() };
        let mut paths = Vec::new();
        walk(dir, &mut paths);
        paths.retain(|p| p.extension().is_some_and(|e| e == "up" || e == "down"));
        paths.sort();
        let head = |text: String| text.lines().take(TRACE_SEED_LINES).map(|l| format!("{l}\n")).collect::<String>();
        paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()).map(|t| head(t).into_bytes()).collect()
    }

    fn policies(&self) -> Vec<Vec<u8>> {
        let dir = self.repo.join("python/mpsched/agents/checkpoints");
        let mut descs = list(&dir, &["json"]);
        descs.sort();
        let pair = |d: &PathBuf| {
            Some(policy::join(&std::fs::read(d).ok()?, &std::fs::read(d.with_extension("safetensors")).ok()?))
        };
        descs.iter().filter_map(pair).collect()
    }
}

fn list(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let ext_ok = |p: &Path| p.extension().and_then(|e| e.to_str()).is_some_and(|e| exts.contains(&e));
    rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| ext_ok(p)).collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for p in rd.filter_map(|e| e.ok().map(|e| e.path())) {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Operation strings of the segment target: a plain transfer (exchange and wait), one with loss
/// and reordering, one with path events and a close.
fn segment_seeds() -> Vec<Vec<u8>> {
    let plain: Vec<u8> = [0u8, 3].into_iter().chain((0..200).flat_map(|i| [0, 0, 3, (i % 40) as u8])).collect();
    let lossy: Vec<u8> =
        [1u8, 2].into_iter().chain((0..200).flat_map(|i| [0, 0, 6, (i & 1) as u8, 7, 0, 3, 0, 8])).collect();
    let events: Vec<u8> = [2u8, 4].into_iter().chain((0..100).flat_map(|i| [0, 0, 14, 0, i % 3, i, 5, 0])).collect();
    let close: Vec<u8> = [0u8, 0, 0, 0, 3, 0, 0, 0, 15, 0, 0, 0, 13, 1, 255, 255, 0, 0, 0, 5, 0, 0, 0].to_vec();
    vec![plain, lossy, events, close]
}

/// Numbers that break parsers and arithmetic.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1",
    "2",
    "0.5",
    "1e-9",
    "1e-300",
    "nan",
    "inf",
    "-inf",
    "1e300",
    "1e19",
    "1e13",
    "65535",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "0x10",
    "1_000",
    "1e6",
    "3.0e2",
];

/// Fragments inserted at random places.
const TOKENS: &[&str] = &[
    "\n",
    " = ",
    "[",
    "]",
    "{",
    "}",
    "\"",
    ",",
    "[[paths]]\n",
    "[[flows]]\n",
    "{ range = [1, 2] }",
    "{ range = [0, 1e308] }",
    "name = \"x\"\n",
    "nan",
    "\"edar\"",
    "null",
    "[[[[[[[[[[",
    "{{{{{{{{",
    "\u{ff11}",
    "\u{0}",
    "\r\n",
    "#",
    "'''",
];

/// One input for `target`: a seed (one in eight times as is), with one to four changes.
pub fn mutant(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut data = seeds[pick(rng, seeds.len())].clone();
    if rng.chance(0.125) {
        return data;
    }
    for _ in 0..1 + pick(rng, 4) {
        mutate(rng, &mut data, seeds);
    }
    data
}

fn pick(rng: &mut Rng, n: usize) -> usize {
    ((rng.uniform() * n as f64) as usize).min(n.saturating_sub(1))
}

fn mutate(rng: &mut Rng, data: &mut Vec<u8>, seeds: &[Vec<u8>]) {
    let at = pick(rng, data.len() + 1);
    let last = data.len().saturating_sub(1);
    match pick(rng, 8) {
        0 | 1 => replace_number(rng, data),
        2 if !data.is_empty() => data[at.min(last)] ^= 1 << pick(rng, 8),
        3 if !data.is_empty() => data[at.min(last)] = rng.next_u64() as u8,
        4 => {
            let n = pick(rng, 32).min(data.len() - at);
            data.drain(at..at + n);
        }
        5 => {
            let t = TOKENS[pick(rng, TOKENS.len())].as_bytes();
            data.splice(at..at, t.iter().copied());
        }
        6 => {
            let other = &seeds[pick(rng, seeds.len())];
            let from = pick(rng, other.len() + 1);
            let n = pick(rng, 256).min(other.len() - from);
            data.splice(at..at, other[from..from + n].iter().copied());
        }
        _ => {
            let n = pick(rng, 64).min(data.len() - at);
            let chunk = data[at..at + n].to_vec();
            data.splice(at..at, chunk);
        }
    }
}

/// A maximal run of number characters replaced by one of [`NUMBERS`] (or a random integer).
fn replace_number(rng: &mut Rng, data: &mut Vec<u8>) {
    let starts: Vec<usize> =
        (0..data.len()).filter(|&i| data[i].is_ascii_digit() && (i == 0 || !is_num(data[i - 1]))).collect();
    if starts.is_empty() {
        return;
    }
    let s = starts[pick(rng, starts.len())];
    let e = (s..data.len()).find(|&i| !is_num(data[i])).unwrap_or(data.len());
    let new = if rng.chance(0.25) {
        (rng.next_u64() >> pick(rng, 64)).to_string()
    } else {
        NUMBERS[pick(rng, NUMBERS.len())].to_string()
    };
    data.splice(s..e, new.into_bytes());
}

fn is_num(b: u8) -> bool {
    b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || b == b'_'
}
