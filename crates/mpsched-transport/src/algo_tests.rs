//! Unit tests of `algo.rs` (a child module of it: `#[path]`), kept apart to hold `algo.rs` under
//! 800 lines.
use super::*;
use crate::cc::CcAlgo;
use crate::sched::SchedAlgo;
use crate::{CcSpec, SchedSpec};

const BEGIN: &str =
    "<!-- BEGIN GENERATED: the registries (cargo test -p mpsched-transport; MPSCHED_BLESS=1 rewrites) -->";
const END: &str = "<!-- END GENERATED -->";

fn generated() -> String {
    format!(
        "{BEGIN}\n\n## Schedulers\n\n{}## Congestion controllers\n\n{}{END}",
        // The worked examples of docs/extending.md exist only in test builds.
        markdown::<SchedAlgo>(&["prefer"]),
        markdown::<CcAlgo>(&["aimd"])
    )
}

/// docs/algorithms.md holds exactly the registries' reference (names, aliases, parameters
/// with defaults and ranges), so the documentation cannot drift from the code.
#[test]
fn docs_table_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/algorithms.md");
    let text = std::fs::read_to_string(&path).expect("docs/algorithms.md");
    let (a, b) = (text.find(BEGIN).expect("begin marker"), text.find(END).expect("end marker"));
    let current = &text[a..b + END.len()];
    if current != generated() {
        if std::env::var_os("MPSCHED_BLESS").is_some() {
            let new = format!("{}{}{}", &text[..a], generated(), &text[b + END.len()..]);
            std::fs::write(&path, new).unwrap();
        } else {
            panic!(
                "docs/algorithms.md is out of date: run `MPSCHED_BLESS=1 cargo test -p mpsched-transport docs_table`"
            );
        }
    }
}

/// `key=value` text reads as the narrowest type; Display writes it back the same way.
#[test]
fn values_from_text() {
    assert_eq!(ParamValue::parse_text("true"), ParamValue::Bool(true));
    assert_eq!(ParamValue::parse_text(" 7 "), ParamValue::Int(7));
    assert_eq!(ParamValue::parse_text("0.25"), ParamValue::Float(0.25));
    assert_eq!(ParamValue::parse_text("1e3"), ParamValue::Float(1000.0));
    assert_eq!(ParamValue::parse_text("nan"), ParamValue::Str("nan".into()));
    assert_eq!(ParamValue::parse_text("inf"), ParamValue::Str("inf".into()));
    assert_eq!(ParamValue::parse_text("wait"), ParamValue::Str("wait".into()));
    for t in ["true", "7", "0.25", "1000", "wait", "-3"] {
        assert_eq!(ParamValue::parse_text(t).to_string(), t);
    }
}

/// Types check their values; integers accept integral floats (JSON, Python) only.
#[test]
fn types_check_values() {
    assert_eq!(<u32 as ParamType>::from_value(&ParamValue::Float(2.0)), Ok(2));
    assert!(<u32 as ParamType>::from_value(&ParamValue::Float(2.5)).is_err());
    assert!(<u32 as ParamType>::from_value(&ParamValue::Int(-1)).is_err());
    assert_eq!(<f64 as ParamType>::from_value(&ParamValue::Int(3)), Ok(3.0));
    assert!(<f64 as ParamType>::from_value(&ParamValue::Float(f64::NAN)).is_err());
    assert_eq!(
        <bool as ParamType>::from_value(&ParamValue::Str("yes".into())),
        Err("expected true or false, got \"yes\"".into())
    );
}

/// Names are case-insensitive; aliases preset parameters; the label keeps the name as written
/// (lower case) and the parameters given; errors say what was expected.
#[test]
fn specs_from_text() {
    let s = SchedSpec::parse("MinRTT").unwrap();
    assert_eq!((s.label(), s.algo()), ("minrtt", &SchedAlgo::MinRtt(Default::default())));
    let s = SchedSpec::parse("minrtt-norp").unwrap();
    assert_eq!(s.label(), "minrtt-norp");
    assert_eq!(s.params(), vec![("opportunistic", ParamValue::Bool(false))]);
    let c = CcSpec::parse("cubic:fast_convergence=false, beta=0.8").unwrap();
    assert_eq!(c.label(), "cubic:beta=0.8,fast_convergence=false");
    assert_eq!(c, "cubic:beta=0.8,fast_convergence=false".parse().unwrap());
    let e = CcSpec::parse("cubic:beta=2").unwrap_err();
    assert_eq!(e.to_string(), "beta: expected (0, 1), got 2");
    let e = CcSpec::parse("reno:beta=0.5").unwrap_err();
    assert_eq!(e.to_string(), "beta: newreno takes no parameters");
    let e = CcSpec::parse("vegas").unwrap_err();
    assert!(e.to_string().starts_with("unknown congestion control \"vegas\", expected one of [\"newreno\", \"reno\""));
    assert!(CcSpec::parse("cubic:beta").unwrap_err().to_string().contains("expected key=value"));
    // Every registered name builds, and its label reads back as the same spec.
    for n in SchedSpec::names() {
        let s = SchedSpec::parse(n).unwrap();
        assert_eq!(SchedSpec::parse(s.label()).unwrap(), s, "{n}");
    }
    for n in CcSpec::names() {
        let c = CcSpec::parse(n).unwrap();
        assert_eq!(CcSpec::parse(c.label()).unwrap(), c, "{n}");
    }
}
