//! Schedulers and congestion controllers in scenario files: the name (`scheduler = "olms"`,
//! `cc = "cubic:beta=0.8"`) and optional parameter tables per algorithm
//! (`[flows.scheduler_params.olms]`, `[flows.cc_params.cubic]`). The tables hold defaults for an
//! algorithm whenever a flow runs it, so `mpsched compare` can swap the scheduler of a scenario
//! and keep each algorithm's settings. The scenario knows no algorithm by name: names and
//! parameters are the transport's registries' business ([`mpsched_transport::algo`]).

use std::collections::BTreeMap;

use mpsched_transport::algo::{AlgoSet, ParamError, ParamValue, Spec};
use serde::{Deserialize, Serialize};

/// A parameter value as a scenario file writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamSetting {
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A number.
    Float(f64),
    /// A name.
    Str(String),
}

impl From<&ParamSetting> for ParamValue {
    fn from(p: &ParamSetting) -> ParamValue {
        match p {
            ParamSetting::Bool(b) => ParamValue::Bool(*b),
            ParamSetting::Int(i) => ParamValue::Int(*i),
            ParamSetting::Float(x) => ParamValue::Float(*x),
            ParamSetting::Str(s) => ParamValue::Str(s.clone()),
        }
    }
}

/// Parameter tables by algorithm name: `[flows.scheduler_params.NAME]` / `[flows.cc_params.NAME]`.
pub type ParamTables = BTreeMap<String, BTreeMap<String, ParamSetting>>;

/// `prefix:PATH` for a loader prefix (`policy:`, `edar:`) with a relative path: the path
/// anchored on `base` (the scenario file's directory, as trace paths are); any other text as
/// it is.
pub fn anchor_path<A: AlgoSet>(text: &str, base: &std::path::Path) -> String {
    mpsched_policy::register();
    let Some((prefix, arg)) = text.trim().split_once(':') else { return text.to_string() };
    let arg = arg.trim();
    let known = A::loaders().get(&prefix.trim().to_ascii_lowercase()).is_some();
    if !known || arg.is_empty() || std::path::Path::new(arg).is_absolute() || base.as_os_str().is_empty() {
        return text.to_string();
    }
    format!("{}:{}", prefix.trim(), base.join(arg).display())
}

/// Resolves `text` (`name` or `name:key=value,...`) with the flow's parameter `tables`. Every
/// table is checked against its algorithm, used now or not. Errors name the field below
/// `field` (the flow's `scheduler`/`cc`) and `tables_field` (its `scheduler_params`/`cc_params`).
/// Policy schedulers (`policy:PATH`, `edar`) are known here ([`mpsched_policy::register`]).
pub fn resolve<A: AlgoSet>(
    text: &str,
    tables: Option<&ParamTables>,
    field: &str,
    tables_field: &str,
) -> Result<Spec<A>, (String, String)> {
    mpsched_policy::register();
    let converted: Vec<(String, Vec<(String, ParamValue)>)> = tables
        .into_iter()
        .flatten()
        .map(|(name, kvs)| (name.clone(), kvs.iter().map(|(k, v)| (k.clone(), ParamValue::from(v))).collect()))
        .collect();
    for (name, kvs) in &converted {
        Spec::<A>::check_table(name, kvs).map_err(|e| table_error(e, &format!("{tables_field}.{name}")))?;
    }
    let table = |canonical: &str| -> &[(String, ParamValue)] {
        converted.iter().find(|(n, _)| n == canonical).map(|(_, kvs)| &kvs[..]).unwrap_or(&[])
    };
    Spec::<A>::resolve(text, table).map_err(|e| (field.to_string(), e.to_string()))
}

fn table_error(e: ParamError, at: &str) -> (String, String) {
    match e.key {
        Some(k) => (format!("{at}.{k}"), e.msg),
        None => (at.to_string(), e.msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpsched_transport::{CcSpec, SchedSpec};

    fn tables(name: &str, kvs: &[(&str, ParamSetting)]) -> ParamTables {
        let mut t = ParamTables::new();
        t.insert(name.into(), kvs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect());
        t
    }

    /// A table applies to its algorithm only; inline parameters override it; the label shows
    /// every parameter given, in declaration order.
    #[test]
    fn tables_apply_to_their_algorithm() {
        let t = tables("cubic", &[("beta", ParamSetting::Float(0.8))]);
        let s: CcSpec = resolve("cubic", Some(&t), "f.cc", "f.cc_params").unwrap();
        assert_eq!(s.label(), "cubic:beta=0.8");
        let s: CcSpec = resolve("cubic:c=0.5,beta=0.6", Some(&t), "f.cc", "f.cc_params").unwrap();
        assert_eq!(s.label(), "cubic:beta=0.6,c=0.5");
        let s: CcSpec = resolve("reno", Some(&t), "f.cc", "f.cc_params").unwrap();
        assert_eq!(s.label(), "reno");
    }

    /// Errors name the user's own field: the table and key, or the name text.
    #[test]
    fn errors_name_the_field() {
        let t = tables("cubic", &[("beta", ParamSetting::Float(1.5))]);
        let e = resolve::<mpsched_transport::cc::CcAlgo>("reno", Some(&t), "f.cc", "f.cc_params").unwrap_err();
        assert_eq!(e, ("f.cc_params.cubic.beta".into(), "expected (0, 1), got 1.5".into()));
        let t = tables("cubc", &[]);
        let e = resolve::<mpsched_transport::cc::CcAlgo>("reno", Some(&t), "f.cc", "f.cc_params").unwrap_err();
        assert_eq!(e.0, "f.cc_params.cubc");
        assert!(e.1.starts_with("unknown congestion control \"cubc\""), "{}", e.1);
        let e = resolve::<mpsched_transport::sched::SchedAlgo>("minrtt:bogus=1", None, "f.scheduler", "x").unwrap_err();
        assert_eq!(e.0, "f.scheduler");
        assert!(e.1.starts_with("bogus: unknown minrtt parameter"), "{}", e.1);
        let s: SchedSpec = resolve("MinRTT-NoRP", None, "f.scheduler", "x").unwrap();
        assert_eq!(s.label(), "minrtt-norp");
    }

    fn two_paths(scheduler: &str, cc: &str, tables: &str) -> String {
        format!(
            r#"
[sim]
duration_s = 5
[[paths]]
name = "fast"
rate_mbps = 10
delay_ms = 10
[[paths]]
name = "slow"
rate_mbps = 10
delay_ms = 30
[[flows]]
name = "mp"
paths = ["fast", "slow"]
scheduler = "{scheduler}"
cc = "{cc}"
{tables}
"#
        )
    }

    /// Bytes sent per subflow of the first flow.
    fn sent(text: &str) -> Vec<i64> {
        let out = crate::run(crate::Scenario::from_toml(text, "t.toml").unwrap());
        out.subflows.i64s("bytes_sent").to_vec()
    }

    /// The worked example of docs/extending.md, used from a scenario by name with parameters:
    /// `prefer:subflow=1` keeps most data on the slow path (subflow 0 alone carries the first
    /// round trips, before the join), minRTT on the fast one;
    /// parameters from a table and the example controller's parameters work the same way.
    #[test]
    fn example_algorithms_run_from_scenarios() {
        let s = sent(&two_paths("prefer:subflow=1,max_srtt_ms=1000", "reno", ""));
        assert!(s[1] > 10 * s[0], "{s:?}");
        let s = sent(&two_paths("minrtt", "reno", ""));
        assert!(s[0] > s[1], "{s:?}");
        let t = "[flows.scheduler_params.prefer]\nsubflow = 1\nmax_srtt_ms = 1000\n[flows.cc_params.aimd]\nb = 0.7";
        let s = sent(&two_paths("prefer", "aimd:a=2", t));
        assert!(s[1] > 10 * s[0], "{s:?}");
        let e = crate::Scenario::from_toml(&two_paths("prefer", "aimd", "[flows.cc_params.aimd]\nb = 2"), "t.toml")
            .unwrap_err();
        assert_eq!(e.0, "t.toml: flows[0].cc_params.aimd.b: expected (0, 1), got 2");
        let e = crate::Scenario::from_toml(&two_paths("prefer:subflow=x", "reno", ""), "t.toml").unwrap_err();
        assert_eq!(e.0, "t.toml: flows[0].scheduler: subflow: expected a non-negative integer, got \"x\"");
    }
    /// A plug-in registered by name (as `mpsched.scheduler` does for Python) is used from a
    /// scenario like a built-in: the same segments as the built-in it wraps, its own label in
    /// the outputs; a parameter table for it is an error.
    #[test]
    fn registered_plugins_run_from_scenarios() {
        use mpsched_transport::sched::RoundRobin;
        let factory = std::sync::Arc::new(|| Box::new(RoundRobin::default()) as Box<_>);
        SchedSpec::register_plugin("rr-plugin", factory).unwrap();
        let run = |s: &str| crate::run(crate::Scenario::from_toml(&two_paths(s, "lia", ""), "t.toml").unwrap());
        let (plugin, builtin) = (run("rr-plugin"), run("rr"));
        assert_eq!(plugin.flows.strs("scheduler"), ["rr-plugin"]);
        assert_eq!(plugin.subflows.i64s("bytes_sent"), builtin.subflows.i64s("bytes_sent"));
        assert_eq!(plugin.timeseries, builtin.timeseries);
        let t = "[flows.scheduler_params.rr-plugin]\nx = 1";
        let e = crate::Scenario::from_toml(&two_paths("rr-plugin", "lia", t), "t.toml").unwrap_err();
        assert_eq!(e.0, "t.toml: flows[0].scheduler_params.rr-plugin.x: rr-plugin takes no parameters");
        assert!(SchedSpec::unregister_plugin("rr-plugin"));
    }
}
