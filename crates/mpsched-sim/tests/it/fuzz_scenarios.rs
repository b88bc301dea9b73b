//! Property over the scenario resolver: every shipped scenario with one value replaced by a
//! hostile one (NaN, infinities, -1, 1e-12, 1e300, the largest integer, a value of the wrong
//! type) resolves, or fails with a one-line error naming the file and a line or field; it never
//! panics. Fixed seed, 10,000 mutants (about 1 s); python/tests/test_fuzz_scenarios.py also
//! runs such mutants.

use std::path::{Path, PathBuf};

use mpsched_sim::rng::Rng;
use mpsched_sim::{parse_text, Format};
use toml::Value;

pub(crate) fn shipped() -> Vec<(PathBuf, toml::Table)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/mpsched/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("shipped scenarios")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let mut t: toml::Table = toml::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            t.iter_mut().for_each(|(_, c)| without_sweeps(c));
            (p, t)
        })
        .collect()
}

/// `{ range, steps }` sweeps (for `mpsched compare`) replaced by their first value.
fn without_sweeps(v: &mut Value) {
    let first = match v {
        Value::Table(t) if t.contains_key("steps") => t.get("range").and_then(|r| r.get(0)).cloned(),
        _ => None,
    };
    match (first, v) {
        (Some(lo), v) => *v = lo,
        (None, Value::Table(t)) => t.iter_mut().for_each(|(_, c)| without_sweeps(c)),
        (None, Value::Array(a)) => a.iter_mut().for_each(without_sweeps),
        _ => {}
    }
}

/// The paths (keys and indices) of every value below `v`.
fn leaves(v: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    let children: Vec<(Step, &Value)> = match v {
        Value::Table(t) => t.iter().map(|(k, c)| (Step::Key(k.clone()), c)).collect(),
        Value::Array(a) => a.iter().enumerate().map(|(i, c)| (Step::Index(i), c)).collect(),
        _ => return,
    };
    for (step, child) in children {
        path.push(step);
        out.push(path.clone());
        leaves(child, path, out);
        path.pop();
    }
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn get_mut<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Index(i) => &mut v[*i],
    })
}

fn hostile(k: usize) -> Value {
    [
        Value::Float(f64::NAN),
        Value::Float(f64::INFINITY),
        Value::Float(f64::NEG_INFINITY),
        Value::Integer(-1),
        Value::Float(1e-12),
        Value::Float(1e300),
        Value::Integer(i64::MAX),
        Value::String("x".into()),
        Value::Boolean(true),
        Value::Array(vec![]),
    ][k % 10]
        .clone()
}

#[test]
fn hostile_values_in_shipped_scenarios_resolve_or_name_a_field() {
    let scenarios = shipped();
    assert!(scenarios.len() >= 20, "{}", scenarios.len());
    let mut rng = Rng::new(24);
    let pick = |rng: &mut Rng, n: usize| ((rng.uniform() * n as f64) as usize).min(n - 1);
    let (mut ok, mut errors) = (0, 0);
    for _ in 0..10_000 {
        let (path, table) = &scenarios[pick(&mut rng, scenarios.len())];
        let mut root = Value::Table(table.clone());
        let mut all = Vec::new();
        leaves(&root, &mut Vec::new(), &mut all);
        let at = all[pick(&mut rng, all.len())].clone();
        let value = hostile(pick(&mut rng, 10));
        *get_mut(&mut root, &at) = value.clone();
        let text = toml::to_string(&root).unwrap();
        let source = path.display().to_string();
        let case = format!("{source}: {at:?} = {value}");
        let parsed = std::panic::catch_unwind(|| parse_text(&text, &source, Format::Toml, None));
        match parsed.unwrap_or_else(|_| panic!("panic on {case}")) {
            Ok(_) => ok += 1,
            Err(e) => {
                errors += 1;
                let rest = e.0.strip_prefix(&format!("{source}: ")).unwrap_or_else(|| panic!("{case}: {e}"));
                let named = rest.starts_with("line ") || rest.split(": ").next().is_some_and(is_field);
                assert!(named && !e.0.contains('\n'), "{case}: {e}");
            }
        }
    }
    assert!(ok >= 300 && errors >= 5000, "{ok} resolved, {errors} errors");
}

/// `paths[1].loss.p`: the form fields take in errors.
fn is_field(s: &str) -> bool {
    !s.is_empty()
        && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "_.[]".contains(c))
}
