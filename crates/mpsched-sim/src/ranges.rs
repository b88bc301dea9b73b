//! Parameter ranges: any numeric scenario field may be written as a table instead of a number.
//!
//! - `{ range = [lo, hi] }` (optionally `dist = "uniform"` (default) or `"loguniform"`): one
//!   random value, drawn when the scenario is resolved from the RNG stream named by the field's
//!   path (`range/paths/1/delay_ms`) under the scenario seed; a field holding an integer (bytes,
//!   segments, counts) gets the value rounded.
//! - `{ range = [lo, hi], steps = N }` (optionally `log = true`): a sweep, N runs with evenly
//!   spaced values. Sweeps are expanded by `mpsched compare` (python/mpsched/matrix.py); a
//!   single simulation refuses them.
//!
//! The pre-pass works on the parsed value tree before it is deserialized, so it applies to every
//! numeric field without the scenario structs knowing about ranges.

use serde_json::{Map, Number, Value};

use crate::rng::Rng;

/// Fields that hold integers: a random value drawn for them is rounded.
pub const INTEGER_FIELDS: &[&str] = &[
    "queue_bytes",
    "size_bytes",
    "rcv_buf_bytes",
    "chunk_bytes",
    "mss",
    "init_cwnd",
    "repeat",
    "max_flows",
    "bytes",
    "seed",
];

/// How a random value is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dist {
    /// Uniform between the bounds.
    Uniform,
    /// Uniform in the logarithm (bounds > 0).
    LogUniform,
}

/// A parsed range table.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeSpec {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// `Some(n)`: a sweep of n values.
    pub steps: Option<u64>,
    /// Log spacing of a sweep.
    pub log: bool,
    /// Distribution of a random draw.
    pub dist: Dist,
}

/// A value tree node is a range table: an object with a `range` key.
pub fn is_range(v: &Value) -> bool {
    matches!(v, Value::Object(m) if m.contains_key("range"))
}

/// The tree holds at least one range table.
pub fn contains_range(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("range") || m.values().any(contains_range),
        Value::Array(a) => a.iter().any(contains_range),
        _ => false,
    }
}

/// A number as error messages show it: `5`, `0.25`, and `1e308` or `1e-9` (not hundreds of
/// digits) far from 1.
pub fn show(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e9).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

/// Parses and checks a range table; the error says what was expected.
pub fn parse_range(m: &Map<String, Value>) -> Result<RangeSpec, String> {
    for k in m.keys() {
        if !matches!(k.as_str(), "range" | "steps" | "log" | "dist" | "group") {
            return Err(format!("unknown key `{k}` in a range, expected `range`, `steps`, `log`, `dist` or `group`"));
        }
    }
    let bounds = match m.get("range") {
        Some(Value::Array(a)) if a.len() == 2 => (number(&a[0]), number(&a[1])),
        _ => (None, None),
    };
    let (lo, hi) = match bounds {
        (Some(lo), Some(hi)) => (lo, hi),
        _ => return Err(format!("expected `range = [lo, hi]` with two numbers, got {}", m["range"])),
    };
    if lo > hi {
        return Err(format!("expected lo <= hi in `range = [lo, hi]`, got [{lo}, {hi}]"));
    }
    if !(hi - lo).is_finite() {
        return Err(format!("expected bounds whose difference is a finite number, got [{}, {}]", show(lo), show(hi)));
    }
    let steps = match m.get("steps") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Some(n),
            _ => return Err(format!("steps: expected an integer >= 1, got {v}")),
        },
    };
    let log = match m.get("log") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => return Err(format!("log: expected true or false, got {v}")),
    };
    let dist = match m.get("dist") {
        None => Dist::Uniform,
        Some(Value::String(s)) if s == "uniform" => Dist::Uniform,
        Some(Value::String(s)) if s == "loguniform" => Dist::LogUniform,
        Some(v) => return Err(format!("dist: expected \"uniform\" or \"loguniform\", got {v}")),
    };
    if steps.is_some() && m.contains_key("dist") {
        return Err("`dist` is for random values (a range without `steps`); a sweep takes `log = true`".into());
    }
    if steps.is_none() && m.contains_key("group") {
        return Err("`group` links sweeps (ranges with `steps`); a random value has none".into());
    }
    if steps.is_none() && m.contains_key("log") {
        return Err("`log` is for sweeps (a range with `steps`); a random value takes `dist = \"loguniform\"`".into());
    }
    if (log || dist == Dist::LogUniform) && lo <= 0.0 {
        return Err(format!("log spacing needs lo > 0, got [{lo}, {hi}]"));
    }
    Ok(RangeSpec { lo, hi, steps, log, dist })
}

impl RangeSpec {
    /// One random value.
    pub fn draw(&self, rng: &mut Rng) -> f64 {
        let u = rng.uniform();
        match self.dist {
            Dist::Uniform => self.lo + u * (self.hi - self.lo),
            Dist::LogUniform => (self.lo.ln() + u * (self.hi.ln() - self.lo.ln())).exp(),
        }
    }

    /// The values of a sweep (inclusive ends; one step gives `lo`).
    pub fn sweep_values(&self) -> Vec<f64> {
        let n = self.steps.unwrap_or(1);
        (0..n)
            .map(|i| {
                if n == 1 {
                    return self.lo;
                }
                let f = i as f64 / (n - 1) as f64;
                if self.log {
                    (self.lo.ln() + f * (self.hi.ln() - self.lo.ln())).exp()
                } else {
                    self.lo + f * (self.hi - self.lo)
                }
            })
            .collect()
    }
}

#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// `paths[1].delay_ms` (as in error messages) and `paths/1/delay_ms` (the RNG stream name).
fn display(path: &[Step]) -> (String, String) {
    let mut field = String::new();
    let mut stream = String::new();
    for (i, s) in path.iter().enumerate() {
        match s {
            Step::Key(k) => {
                if i > 0 {
                    field.push('.');
                    stream.push('/');
                }
                field.push_str(k);
                stream.push_str(k);
            }
            Step::Index(j) => {
                field.push_str(&format!("[{j}]"));
                stream.push_str(&format!("/{j}"));
            }
        }
    }
    (field, stream)
}

/// Replaces every random range in `root` by a value drawn under `seed`. Errors are
/// `(field, what was expected)`; a sweep is an error (a single simulation cannot run one).
pub fn resolve(root: &mut Value, seed: u64) -> Result<(), (String, String)> {
    let mut path = Vec::new();
    walk(root, seed, &mut path)
}

fn walk(v: &mut Value, seed: u64, path: &mut Vec<Step>) -> Result<(), (String, String)> {
    if let Value::Object(m) = v {
        if m.contains_key("range") {
            let (field, stream) = display(path);
            let spec = parse_range(m).map_err(|e| (field.clone(), e))?;
            if field == "sim.seed" {
                return Err((field, "the seed cannot be a range (use `mpsched compare --seeds`)".into()));
            }
            if let Some(n) = spec.steps {
                return Err((
                    field,
                    format!(
                        "a sweep (`steps = {n}`) stands for several runs: use `mpsched compare`, \
                         or drop `steps` for one random value"
                    ),
                ));
            }
            let x = spec.draw(&mut Rng::stream(seed, &format!("range/{stream}")));
            let integer = matches!(path.last(), Some(Step::Key(k)) if INTEGER_FIELDS.contains(&k.as_str()));
            // A draw between finite bounds with a finite difference is finite.
            *v = match Number::from_f64(x) {
                // `as i64` would saturate: a draw beyond the integers is an error, not i64::MAX.
                Some(_) if integer && x.round().abs() >= 9.0e18 => {
                    return Err((field, format!("the value drawn ({}) is too large for an integer field", show(x))))
                }
                Some(_) if integer => Value::Number(Number::from(x.round() as i64)),
                Some(n) => Value::Number(n),
                None => return Err((field, format!("the value drawn is not a finite number ({x})"))),
            };
            return Ok(());
        }
        for (k, child) in m.iter_mut() {
            path.push(Step::Key(k.clone()));
            walk(child, seed, path)?;
            path.pop();
        }
    } else if let Value::Array(a) = v {
        for (i, child) in a.iter_mut().enumerate() {
            path.push(Step::Index(i));
            walk(child, seed, path)?;
            path.pop();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn range(v: Value) -> Result<RangeSpec, String> {
        parse_range(v.as_object().unwrap())
    }

    #[test]
    fn sweep_values_are_evenly_spaced_with_inclusive_ends() {
        let r = range(json!({"range": [20, 100], "steps": 5})).unwrap();
        assert_eq!(r.sweep_values(), vec![20.0, 40.0, 60.0, 80.0, 100.0]);
        // Log spacing: 0.01 .. 1 in 3 steps is 0.01, 0.1, 1 (each a factor 10).
        let r = range(json!({"range": [0.01, 1.0], "steps": 3, "log": true})).unwrap();
        let v = r.sweep_values();
        assert_eq!(v.len(), 3);
        assert!((v[1] - 0.1).abs() < 1e-12 && (v[2] - 1.0).abs() < 1e-12, "{v:?}");
        assert_eq!(range(json!({"range": [3, 7], "steps": 1})).unwrap().sweep_values(), vec![3.0]);
    }

    #[test]
    fn malformed_ranges_say_what_is_expected() {
        let e = range(json!({"range": [5, 2]})).unwrap_err();
        assert_eq!(e, "expected lo <= hi in `range = [lo, hi]`, got [5, 2]");
        assert!(range(json!({"range": [1, 2], "steps": 0}))
            .unwrap_err()
            .starts_with("steps: expected an integer >= 1"));
        assert!(range(json!({"range": [1, 2], "steps": 2.5})).unwrap_err().starts_with("steps:"));
        assert!(range(json!({"range": ["a", 2]}))
            .unwrap_err()
            .starts_with("expected `range = [lo, hi]` with two numbers"));
        assert!(range(json!({"range": [1, 2, 3]})).unwrap_err().starts_with("expected `range = [lo, hi]`"));
        assert!(range(json!({"range": 4})).is_err());
        assert!(range(json!({"range": [1, 2], "stepz": 2})).unwrap_err().starts_with("unknown key `stepz`"));
        assert!(range(json!({"range": [0, 2], "dist": "loguniform"}))
            .unwrap_err()
            .starts_with("log spacing needs lo > 0"));
        assert!(range(json!({"range": [1, 2], "dist": "normal"})).unwrap_err().starts_with("dist:"));
        assert!(range(json!({"range": [1, 2], "log": true})).unwrap_err().starts_with("`log` is for sweeps"));
        // The largest finite bounds: their difference overflows (a draw would be infinite).
        assert_eq!(
            range(json!({"range": [-1e308, 1e308]})).unwrap_err(),
            "expected bounds whose difference is a finite number, got [-1e308, 1e308]"
        );
        assert!(range(json!({"range": [1, 2], "steps": 2, "dist": "uniform"}))
            .unwrap_err()
            .starts_with("`dist` is for random"));
    }

    fn tree() -> Value {
        json!({
            "sim": {"duration_s": 10, "seed": 3},
            "paths": [
                {"name": "a", "delay_ms": {"range": [20, 30]}},
                {"name": "b", "delay_ms": {"range": [100, 200]}, "queue_bytes": {"range": [10000, 20000]},
                 "loss": {"model": "bernoulli", "p": {"range": [0.0001, 0.03], "dist": "loguniform"}}},
            ],
        })
    }

    #[test]
    fn random_draws_are_in_bounds_reproducible_and_depend_on_the_seed() {
        let mut a = tree();
        resolve(&mut a, 3).unwrap();
        let mut again = tree();
        resolve(&mut again, 3).unwrap();
        assert_eq!(a, again);
        let d0 = a["paths"][0]["delay_ms"].as_f64().unwrap();
        let d1 = a["paths"][1]["delay_ms"].as_f64().unwrap();
        assert!((20.0..=30.0).contains(&d0) && (100.0..=200.0).contains(&d1), "{d0} {d1}");
        // queue_bytes holds an integer: the draw is rounded.
        let q = &a["paths"][1]["queue_bytes"];
        assert!(q.is_u64() && (10_000..=20_000).contains(&q.as_u64().unwrap()), "{q}");
        let p = a["paths"][1]["loss"]["p"].as_f64().unwrap();
        assert!((0.0001..=0.03).contains(&p));
        // Another seed gives other values (continuous draws: equality has probability 0).
        let mut b = tree();
        resolve(&mut b, 4).unwrap();
        assert_ne!(b["paths"][0]["delay_ms"], a["paths"][0]["delay_ms"]);
        // Each field has its own stream: removing one range leaves the others' draws unchanged.
        let mut c = tree();
        c["paths"][1]["delay_ms"] = json!(150);
        resolve(&mut c, 3).unwrap();
        assert_eq!(c["paths"][0]["delay_ms"], a["paths"][0]["delay_ms"]);
        assert_eq!(c["paths"][1]["loss"]["p"], a["paths"][1]["loss"]["p"]);
    }

    /// Many draws fill the range: uniform mean near the middle, log-uniform mean of the log
    /// near the middle of the logs.
    #[test]
    fn draws_follow_the_distribution() {
        let u = range(json!({"range": [10, 20]})).unwrap();
        let l = range(json!({"range": [0.01, 100], "dist": "loguniform"})).unwrap();
        let mut rng = Rng::new(1);
        let n = 20_000;
        let mu = (0..n).map(|_| u.draw(&mut rng)).sum::<f64>() / n as f64;
        // sd of the mean: 10/sqrt(12)/sqrt(20000) = 0.02.
        assert!((mu - 15.0).abs() < 0.1, "{mu}");
        let ml = (0..n).map(|_| l.draw(&mut rng).log10()).sum::<f64>() / n as f64;
        // log10 uniform on [-2, 2]: mean 0, sd of the mean 4/sqrt(12)/141 = 0.008.
        assert!(ml.abs() < 0.04, "{ml}");
    }

    #[test]
    fn sweeps_and_seed_ranges_are_refused_with_the_field() {
        let mut t = tree();
        t["paths"][1]["delay_ms"] = json!({"range": [20, 100], "steps": 5});
        let (field, what) = resolve(&mut t, 1).unwrap_err();
        assert_eq!(field, "paths[1].delay_ms");
        assert!(what.contains("use `mpsched compare`"), "{what}");
        let mut t = tree();
        t["sim"]["seed"] = json!({"range": [1, 5]});
        assert_eq!(resolve(&mut t, 1).unwrap_err().0, "sim.seed");
        let mut t = tree();
        t["paths"][1]["queue_bytes"] = json!({"range": [1e30, 1e30]});
        assert_eq!(
            resolve(&mut t, 1).unwrap_err(),
            ("paths[1].queue_bytes".into(), "the value drawn (1e30) is too large for an integer field".into())
        );
        let mut t = tree();
        t["paths"][0]["delay_ms"] = json!({"range": [30, 20]});
        let (field, what) = resolve(&mut t, 1).unwrap_err();
        assert_eq!(
            (field.as_str(), what.as_str()),
            ("paths[0].delay_ms", "expected lo <= hi in `range = [lo, hi]`, got [30, 20]")
        );
    }
}
