//! Scenario text into the file form ([`ScenarioFile`]), with one-line errors that name the
//! user's field and, where the text has lines, the line.
//!
//! A scenario without parameter ranges is deserialized from its text. One with ranges is read
//! into a value tree first, its ranges drawn, then deserialized from the tree: errors then carry
//! the field path (`paths[1].rate_mbps`) and, for TOML, the line is looked up in the text.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{ScenarioError, ScenarioFile};
use crate::{ranges, Format};

/// Parses `text` into the file form; `seed` is the seed ranges are drawn under (the override,
/// else `[sim].seed`, else 1).
pub(super) fn parse_file(
    text: &str,
    source: &str,
    fmt: Format,
    seed: Option<u64>,
) -> Result<ScenarioFile, ScenarioError> {
    let tree: Value = match fmt {
        Format::Toml => {
            let table: toml::Table = toml::from_str(text).map_err(|e| toml_error(e, text, source))?;
            if let Some((field, x)) = non_finite_in(&table) {
                return Err(ScenarioError(format!(
                    "{source}: {}{field}: expected a finite number, got {x}",
                    line_prefix(text, &field, fmt)
                )));
            }
            serde_json::to_value(&table).map_err(|e| ScenarioError(format!("{source}: {e}")))?
        }
        Format::Json => serde_json::from_str(text).map_err(|e| json_error(e, source))?,
    };
    if !ranges::contains_range(&tree) {
        // Deserialize the text itself: errors keep their line numbers.
        return match fmt {
            Format::Toml => toml::from_str(text).map_err(|e| toml_error(e, text, source)),
            Format::Json => from_json_text(text, source),
        };
    }
    let mut tree = tree;
    let seed = match (seed, tree.pointer("/sim/seed")) {
        (Some(s), _) => s,
        (None, Some(v)) if ranges::is_range(v) => {
            return Err(ScenarioError(format!(
                "{source}: sim.seed: the seed cannot be a range (use `mpsched compare --seeds`)"
            )))
        }
        (None, Some(v)) => v.as_u64().unwrap_or(1),
        (None, None) => 1,
    };
    ranges::resolve(&mut tree, seed).map_err(|(field, what)| {
        ScenarioError(format!("{source}: {}{field}: {what}", line_prefix(text, &field, fmt)))
    })?;
    from_tree(tree)
        .map_err(|(field, what)| ScenarioError(format!("{source}: {}{field}: {what}", line_prefix(text, &field, fmt))))
}

/// The syntax error of `text`, if it has one: TOML or JSON read into a plain value tree (with
/// the parsers' nesting limits), nothing about the scenario's fields checked.
pub(super) fn check_syntax(text: &str, source: &str, fmt: Format) -> Result<(), ScenarioError> {
    match fmt {
        Format::Toml => toml::from_str::<toml::Table>(text).map(drop).map_err(|e| toml_error(e, text, source)),
        Format::Json => serde_json::from_str::<Value>(text).map(drop).map_err(|e| json_error(e, source)),
    }
}

/// `line N: ` of a TOML error with a span, the message on one line.
fn toml_error(e: toml::de::Error, text: &str, source: &str) -> ScenarioError {
    let msg = e.message().replace('\n', " ");
    match e.span() {
        Some(sp) => ScenarioError(format!("{source}: line {}: {msg}", line_of(text, sp.start))),
        None => ScenarioError(format!("{source}: {msg}")),
    }
}

/// A JSON syntax error as serde_json words it (with its line and column).
fn json_error(e: serde_json::Error, source: &str) -> ScenarioError {
    ScenarioError(format!("{source}: {}", e.to_string().replace('\n', " ")))
}

/// JSON text into `T`: a data error names the field (and the line, when the text has lines;
/// the Python API's dicts are one line of JSON, where a column means nothing to the user).
fn from_json_text<T: DeserializeOwned>(text: &str, source: &str) -> Result<T, ScenarioError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let out: Result<T, _> = serde_path_to_error::deserialize(&mut de);
    match out {
        Ok(v) => Ok(v),
        Err(e) => {
            let field = field_path(e.path());
            let inner = e.into_inner();
            if !inner.is_data() {
                return Err(json_error(inner, source));
            }
            // A missing top-level table (`sim`) is the whole scenario's error.
            let field = if field.is_empty() { "scenario".to_string() } else { field };
            let line = if text.contains('\n') { format!("line {}: ", inner.line()) } else { String::new() };
            Err(ScenarioError(format!("{source}: {line}{field}: {}", json_message(&inner))))
        }
    }
}

/// serde_json's message without its ` at line L column C` suffix.
fn json_message(e: &serde_json::Error) -> String {
    let s = e.to_string().replace('\n', " ");
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    s.strip_suffix(&suffix).map(str::to_string).unwrap_or(s)
}

/// The value tree into `T`; the error is `(field path, message)`.
fn from_tree<T: DeserializeOwned>(tree: Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(tree).map_err(|e| {
        let field = field_path(e.path());
        (if field.is_empty() { "scenario".into() } else { field }, json_message(e.inner()))
    })
}

/// `paths[1].rate_mbps`, the form every error message uses.
fn field_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// 1-based line of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// `line N: ` where the field (or its nearest parent found in the text) is written, for TOML;
/// empty when there is no line to give.
fn line_prefix(text: &str, field: &str, fmt: Format) -> String {
    if fmt != Format::Toml {
        return String::new();
    }
    match field_offset(text, field) {
        Some(at) => format!("line {}: ", line_of(text, at)),
        None => String::new(),
    }
}

/// Byte offset in the TOML text of `field` (`paths[1].rate_mbps`), or of its deepest part
/// found there.
fn field_offset(text: &str, field: &str) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let doc = DeTable::parse(text).ok()?;
    let mut at = None;
    let mut cur: &DeValue = &DeValue::Table(doc.get_ref().clone());
    for step in split_field(field) {
        let next = match (cur, step) {
            (DeValue::Table(t), Step::Key(k)) => t.iter().find(|(key, _)| key.get_ref() == k).map(|(_, v)| v),
            (DeValue::Array(a), Step::Index(i)) => a.get(i),
            _ => None,
        };
        let Some(v) = next else { break };
        at = Some(v.span().start);
        cur = v.get_ref();
    }
    at
}

enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// `paths[1].rate_mbps` into its steps.
fn split_field(field: &str) -> Vec<Step<'_>> {
    let mut steps = Vec::new();
    for part in field.split('.') {
        let (key, rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        if !key.is_empty() {
            steps.push(Step::Key(key));
        }
        for ix in rest.split('[') {
            if let Ok(i) = ix.trim_end_matches(']').parse() {
                steps.push(Step::Index(i));
            }
        }
    }
    steps
}

/// The first non-finite float (`nan`, `inf`) of a TOML document: its field and value. The value
/// tree of a scenario with ranges is JSON, which has no NaN: it must not become `null`
/// (an omitted field, hence a default). No scenario field takes a non-finite number.
fn non_finite_in(t: &toml::Table) -> Option<(String, f64)> {
    t.iter().find_map(|(k, c)| non_finite(c, k.clone()))
}

fn non_finite(v: &toml::Value, field: String) -> Option<(String, f64)> {
    match v {
        toml::Value::Float(x) if !x.is_finite() => Some((field, *x)),
        toml::Value::Table(t) => t.iter().find_map(|(k, c)| non_finite(c, format!("{field}.{k}"))),
        toml::Value::Array(a) => a.iter().enumerate().find_map(|(i, c)| non_finite(c, format!("{field}[{i}]"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_file(text, "s.toml", Format::Toml, None).unwrap_err().0
    }

    const RANGED: &str =
        "[sim]\nduration_s = 1\n[[paths]]\nname = \"p\"\nrate_mbps = 5\ndelay_ms = { range = [1, 2] }\n\
                          [[flows]]\nname = \"f\"\npath = \"p\"\n";

    #[test]
    fn errors_in_a_scenario_with_ranges_keep_line_and_field() {
        let e = err(&RANGED.replace("rate_mbps = 5", "rate_mbps = \"10\""));
        assert_eq!(e, "s.toml: line 5: paths[0].rate_mbps: invalid type: string \"10\", expected f64");
        let e = err(&RANGED.replace("rate_mbps = 5", "rate_mbps = 5\nbogus = 1"));
        assert!(e.starts_with("s.toml: line 6: paths[0].bogus: unknown field `bogus`, expected one of"), "{e}");
        let e = err(&RANGED.replace("name = \"f\"", "name = \"f\"\nsize_bytes = -3"));
        assert!(e.starts_with("s.toml: line 9: flows[0].size_bytes: invalid value: integer `-3`"), "{e}");
    }

    #[test]
    fn nan_never_becomes_a_default() {
        assert_eq!(
            err(&RANGED.replace("rate_mbps = 5", "rate_mbps = 5\nqueue_bytes = nan")),
            "s.toml: line 6: paths[0].queue_bytes: expected a finite number, got NaN"
        );
        assert_eq!(
            err(&RANGED.replace("[1, 2]", "[nan, 2]")),
            "s.toml: line 6: paths[0].delay_ms.range[0]: expected a finite number, got NaN"
        );
        assert_eq!(
            err(&RANGED.replace("name = \"f\"", "name = \"f\"\nstart_s = -inf")),
            "s.toml: line 9: flows[0].start_s: expected a finite number, got -inf"
        );
    }

    #[test]
    fn dict_json_errors_name_the_field_without_a_column() {
        let j = r#"{"sim": {"duration_s": 1}, "paths": [{"name": "p", "rate_mbps": "10"}], "flows": []}"#;
        let e = parse_file(j, "<dict>", Format::Json, None).unwrap_err().0;
        assert_eq!(e, "<dict>: paths[0].rate_mbps: invalid type: string \"10\", expected f64");
        // A missing top-level table: no column of the internal JSON text.
        let e = parse_file(r#"{"paths": []}"#, "<dict>", Format::Json, None).unwrap_err().0;
        assert_eq!(e, "<dict>: scenario: missing field `sim`");
        // Syntax errors keep serde_json's position.
        let e = parse_file("{\"sim\": ", "x.json", Format::Json, None).unwrap_err().0;
        assert!(e.starts_with("x.json: EOF while parsing"), "{e}");
    }

    #[test]
    fn syntax_is_checked_alone() {
        assert_eq!(check_syntax("[sim]\nbogus = 1\n", "s.toml", Format::Toml), Ok(()));
        assert_eq!(check_syntax("{\"x\": [1]}", "s.json", Format::Json), Ok(()));
        let e = check_syntax("[sim]\nx = \n", "s.toml", Format::Toml).unwrap_err().0;
        assert!(e.starts_with("s.toml: line 2: "), "{e}");
        // Dotted keys 100,000 deep (Python's tomllib takes minutes and gigabytes on them).
        let deep = format!("# edar\n{}b = 1\n", "a.".repeat(100_000));
        assert_eq!(check_syntax(&deep, "s.toml", Format::Toml).unwrap_err().0, "s.toml: recursion limit");
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(check_syntax(&deep, "s.json", Format::Json)
            .unwrap_err()
            .0
            .starts_with("s.json: recursion limit exceeded"));
    }

    #[test]
    fn deep_nesting_is_a_one_line_error() {
        let deep = format!("x = {}{}\n", "[".repeat(5000), "]".repeat(5000));
        let e = err(&deep);
        assert!(e.starts_with("s.toml: line 1: ") && !e.contains('\n'), "{e}");
        let deep = format!("{{\"sim\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse_file(&deep, "x.json", Format::Json, None).unwrap_err().0;
        assert!(e.starts_with("x.json: recursion limit exceeded"), "{e}");
    }
}
