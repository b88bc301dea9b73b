//! Output digests: a 64-bit FNV-1a hash per output of a run (summary, resolved scenario, each
//! table), to check that a change leaves results byte-identical.
//!
//! The recorded set (`crates/mpsched-sim/tests/digests.txt`, checked by the test
//! `digests` of `tests/it/`) covers every run of [`recorded_runs`]: each shipped scenario
//! (`scenarios/*.toml`; a scenario with sweeps once per sweep point, as `mpsched compare` expands
//! it) and each built-in benchmark ([`crate::bench::BENCHES`]). The `digests` example prints
//! the same lines for any scenario files.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Number, Value};

use crate::{ranges, Format, RunOutput, Table};

/// Start value of a 64-bit FNV-1a hash.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Continues a 64-bit FNV-1a hash `h` over `bytes` (enough to tell outputs apart; not a
/// cryptographic digest).
pub fn fnv1a(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Digest of a table: every column's name and values in their exact `Debug` form (floats bit
/// for bit).
pub fn table_digest(t: &Table) -> u64 {
    let mut s = String::new();
    for (name, col) in &t.columns {
        let _ = write!(s, "{name}={col:?};");
    }
    fnv1a(FNV_OFFSET, s.as_bytes())
}

/// The digest line of run `name`: its name, then `key digest` for the summary JSON, the
/// resolved scenario and every table (`udp` and `probes` only when the run has them). The
/// decision latencies (wall clock) and the run's event counters are not outputs and not hashed.
pub fn line(name: &str, out: &RunOutput) -> String {
    let mut s = format!(
        "{name:<28} summary {:016x} resolved {:016x}",
        fnv1a(FNV_OFFSET, out.summary_json.as_bytes()),
        fnv1a(FNV_OFFSET, out.resolved_toml.as_bytes())
    );
    let tables = [
        ("flows", Some(&out.flows)),
        ("subflows", Some(&out.subflows)),
        ("timeseries", Some(&out.timeseries)),
        ("links", Some(&out.links)),
        ("queues", Some(&out.queues)),
        ("udp", out.udp_flows.as_ref()),
        ("probes", out.probes.as_ref()),
    ];
    for (key, t) in tables {
        if let Some(t) = t {
            let _ = write!(s, " {key} {:016x}", table_digest(t));
        }
    }
    s
}

/// One run of the recorded set: its name, scenario text and format.
#[derive(Clone, Debug)]
pub struct RecordedRun {
    /// `file.toml`, `file.toml[axis=value, ...]` for a sweep point, `bench:NAME` for a benchmark.
    pub name: String,
    /// The scenario text.
    pub text: String,
    /// Its format (a sweep point is the expanded tree as JSON).
    pub format: Format,
}

/// Every run of the recorded set, in order: the `*.toml` files of `scenario_dir` sorted by name
/// (each sweep point of a file with sweeps), then the built-in benchmarks.
pub fn recorded_runs(scenario_dir: &Path) -> Result<Vec<RecordedRun>, String> {
    let mut files: Vec<_> = std::fs::read_dir(scenario_dir)
        .map_err(|e| format!("{}: {e}", scenario_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut runs = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let name = f.file_name().unwrap_or_default().to_string_lossy().into_owned();
        runs.extend(expand_file(&name, text)?);
    }
    for (name, _, text) in crate::bench::BENCHES {
        runs.push(RecordedRun { name: format!("bench:{name}"), text: text.to_string(), format: Format::Toml });
    }
    Ok(runs)
}

/// The runs of one scenario file: itself, or one per sweep point.
pub fn expand_file(name: &str, text: String) -> Result<Vec<RecordedRun>, String> {
    let table: toml::Table = toml::from_str(&text).map_err(|e| format!("{name}: {e}"))?;
    let tree = serde_json::to_value(&table).map_err(|e| format!("{name}: {e}"))?;
    let points = sweep_points(&tree).map_err(|e| format!("{name}: {e}"))?;
    if points.is_empty() {
        return Ok(vec![RecordedRun { name: name.to_string(), text, format: Format::Toml }]);
    }
    Ok(points
        .into_iter()
        .map(|(label, tree)| RecordedRun {
            name: format!("{name}[{label}]"),
            text: tree.to_string(),
            format: Format::Json,
        })
        .collect())
}

/// A swept field: where it is (JSON pointer), its name, its values and its group.
struct Sweep {
    pointer: String,
    field: String,
    values: Vec<Value>,
    group: Option<String>,
}

/// The points of `tree`'s sweeps (fields written `{ range = [lo, hi], steps = N }`), each as
/// `(label, tree with every swept field set)`: the cartesian product of the axes, where an axis
/// is one ungrouped sweep or all sweeps of one `group` (moving together), in order of first
/// appearance; empty without sweeps. The values are `mpsched compare`'s (python/mpsched/matrix.py):
/// evenly or log-spaced with inclusive ends, rounded for integer fields.
pub fn sweep_points(tree: &Value) -> Result<Vec<(String, Value)>, String> {
    let mut sweeps = Vec::new();
    find_sweeps(tree, &mut String::new(), &mut String::new(), &mut sweeps)?;
    let mut axes: Vec<Vec<&Sweep>> = Vec::new();
    for sw in &sweeps {
        match axes.iter_mut().find(|a| sw.group.is_some() && a[0].group == sw.group) {
            Some(axis) if axis[0].values.len() == sw.values.len() => axis.push(sw),
            Some(axis) => return Err(format!("{}: steps differ from {} (same group)", sw.field, axis[0].field)),
            None => axes.push(vec![sw]),
        }
    }
    if axes.is_empty() {
        return Ok(Vec::new());
    }
    let mut points = Vec::new();
    let mut idx = vec![0usize; axes.len()];
    loop {
        let mut t = tree.clone();
        let mut label = Vec::new();
        for (axis, &i) in axes.iter().zip(&idx) {
            for sw in axis {
                *t.pointer_mut(&sw.pointer).expect("a sweep's own pointer") = sw.values[i].clone();
            }
            label.push(format!("{}={}", axis[0].group.as_deref().unwrap_or(&axis[0].field), g6(&axis[0].values[i])));
        }
        points.push((label.join(", "), t));
        // The next index combination, the last axis fastest.
        let Some(k) = (0..axes.len()).rev().find(|&k| idx[k] + 1 < axes[k][0].values.len()) else { break };
        idx[k] += 1;
        idx[k + 1..].iter_mut().for_each(|i| *i = 0);
    }
    Ok(points)
}

/// A sweep value in a label: an integer as is, a float to 6 significant digits (`4`, not
/// `3.999999999999999`; Python's `.6g`, which `mpsched compare` uses).
fn g6(v: &Value) -> String {
    match v.as_f64() {
        Some(x) if !v.is_i64() && !v.is_u64() => format!("{}", format!("{x:.5e}").parse::<f64>().unwrap_or(x)),
        _ => v.to_string(),
    }
}

fn find_sweeps(v: &Value, pointer: &mut String, field: &mut String, out: &mut Vec<Sweep>) -> Result<(), String> {
    match v {
        Value::Object(m) if m.contains_key("range") && m.contains_key("steps") => {
            let spec = ranges::parse_range(m).map_err(|e| format!("{field}: {e}"))?;
            let integer = field.rsplit(['.', ']']).next().is_some_and(|k| ranges::INTEGER_FIELDS.contains(&k));
            let values = spec
                .sweep_values()
                .into_iter()
                .map(|x| match Number::from_f64(x) {
                    _ if integer => Ok(Value::from(x.round() as i64)),
                    Some(n) => Ok(Value::Number(n)),
                    None => Err(format!("{field}: a sweep value is not finite ({x})")),
                })
                .collect::<Result<_, _>>()?;
            let group = m.get("group").and_then(Value::as_str).map(str::to_string);
            out.push(Sweep { pointer: pointer.clone(), field: field.clone(), values, group });
        }
        Value::Object(m) => {
            for (k, child) in m {
                let (p, f) = (pointer.len(), field.len());
                pointer.push('/');
                pointer.push_str(&k.replace('~', "~0").replace('/', "~1"));
                if !field.is_empty() {
                    field.push('.');
                }
                field.push_str(k);
                find_sweeps(child, pointer, field, out)?;
                pointer.truncate(p);
                field.truncate(f);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                let (p, f) = (pointer.len(), field.len());
                let _ = write!(pointer, "/{i}");
                let _ = write!(field, "[{i}]");
                find_sweeps(child, pointer, field, out)?;
                pointer.truncate(p);
                field.truncate(f);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Runs `run` with `seed` and returns its digest line (or `name error MESSAGE`).
pub fn run_line(run: &RecordedRun, seed: u64) -> String {
    match crate::run_text(&run.text, &run.name, run.format, Some(seed)) {
        Ok(out) => line(&run.name, &out),
        Err(e) => format!("{:<28} error {e}", run.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fnv1a_of_known_strings() {
        // The published FNV-1a 64 test vectors.
        assert_eq!(fnv1a(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(FNV_OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn no_sweep_no_points() {
        let t = json!({"paths": [{"rate_mbps": {"range": [1, 2]}}]});
        assert!(sweep_points(&t).unwrap().is_empty());
    }

    #[test]
    fn grouped_sweeps_move_together_and_axes_multiply() {
        let t = json!({
            "paths": [
                {"rate_mbps": {"range": [2, 8], "steps": 3, "group": "bw"}},
                {"rate_mbps": {"range": [2, 8], "steps": 3, "group": "bw"}},
            ],
            "flows": [{"size_bytes": {"range": [10, 20], "steps": 2}}],
        });
        let pts = sweep_points(&t).unwrap();
        let labels: Vec<&str> = pts.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(
            labels,
            [
                "bw=2, flows[0].size_bytes=10",
                "bw=2, flows[0].size_bytes=20",
                "bw=5, flows[0].size_bytes=10",
                "bw=5, flows[0].size_bytes=20",
                "bw=8, flows[0].size_bytes=10",
                "bw=8, flows[0].size_bytes=20",
            ]
        );
        let p = &pts[3].1;
        assert_eq!(p["paths"][0]["rate_mbps"], json!(5.0));
        assert_eq!(p["paths"][1]["rate_mbps"], json!(5.0));
        assert_eq!(p["flows"][0]["size_bytes"], json!(20));
    }

    #[test]
    fn group_with_other_step_count_is_an_error() {
        let t =
            json!({"a": {"range": [1, 2], "steps": 2, "group": "g"}, "b": {"range": [1, 2], "steps": 3, "group": "g"}});
        assert_eq!(sweep_points(&t).unwrap_err(), "b: steps differ from a (same group)");
    }
}
