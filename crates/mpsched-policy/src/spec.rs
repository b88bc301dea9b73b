//! What a policy observes and how its output acts: the `"obs"` block of a policy file,
//! checked against the network and against what a sender can compute.

use std::path::Path;

use mpsched_transport::observe::features::{CONN_FEATURES, FLOW_FEATURES, SUBFLOW_FEATURES};
use mpsched_transport::observe::{feature_name, sender_computes, ActionKind, ObsLayout};
use serde_json::Value;

use crate::network::AnyNet;
use crate::PolicyError;

/// When a policy decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interval {
    /// Every minimum smoothed RTT (EdAR's transmission interval).
    MinRtt,
    /// Every so many nanoseconds.
    Fixed(u64),
}

/// A policy's observation and action, as trained.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicySpec {
    /// What the action vector means.
    pub action: ActionKind,
    /// When it decides.
    pub interval: Interval,
    /// Subflow slots and frames of its observations.
    pub layout: ObsLayout,
    /// Mode in force before the first decision (mode policies).
    pub initial_mode: Option<u8>,
    /// minRTT with opportunistic retransmission and penalization when the action expresses no
    /// choice (`"minrtt"`), or without (`"minrtt-norp"`).
    pub fallback_norp: bool,
}

fn err(file: &Path, field: &str, want: &str, got: Option<&Value>) -> PolicyError {
    match got {
        Some(v) => PolicyError(format!("{}: obs.{field}: expected {want}, got {v}", file.display())),
        None => PolicyError(format!("{}: obs.{field}: missing, expected {want}", file.display())),
    }
}

fn int_in(obs: &Value, field: &str, lo: u64, hi: u64, file: &Path) -> Result<Option<usize>, PolicyError> {
    match obs.get(field) {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if (lo..=hi).contains(&n) => Ok(Some(n as usize)),
            _ => Err(err(file, field, &format!("an integer in {lo}..={hi}"), Some(v))),
        },
    }
}

impl PolicySpec {
    /// Reads the `"obs"` block of `desc` (`file`: the description, for messages), with the
    /// network's defaults, and checks the network against it.
    pub fn read(desc: &Value, net: &AnyNet, file: &Path) -> Result<PolicySpec, PolicyError> {
        let none = Value::Null;
        let obs = desc.get("obs").unwrap_or(&none);
        let d = net.defaults();
        let action = match obs.get("action") {
            Some(v) => v.as_str().and_then(ActionKind::from_name),
            None => d.action,
        }
        .ok_or_else(|| err(file, "action", "\"mode\", \"weights\", \"select\" or \"choose\"", obs.get("action")))?;
        let interval = match obs.get("interval") {
            Some(Value::String(s)) if s == "min-rtt" => Interval::MinRtt,
            Some(v) if v.as_f64().is_some_and(|ms| ms > 0.0 && ms.is_finite()) => {
                Interval::Fixed(((v.as_f64().unwrap() * 1e6).round() as u64).max(1))
            }
            got => return Err(err(file, "interval", "\"min-rtt\" or a period in ms > 0", got)),
        };
        let max_paths =
            int_in(obs, "max_paths", 1, 8, file)?.ok_or_else(|| err(file, "max_paths", "an integer in 1..=8", None))?;
        let history = int_in(obs, "history", 1, 64, file)?
            .or(d.history)
            .ok_or_else(|| err(file, "history", "an integer in 1..=64", None))?;
        let initial_mode = match obs.get("initial_mode") {
            None | Some(Value::Null) => d.initial_mode,
            Some(Value::String(s)) if s == "normal" => Some(0),
            Some(Value::String(s)) if s == "redundant" => Some(1),
            Some(v) if v.as_u64().is_some_and(|m| m <= 1) => v.as_u64().map(|m| m as u8),
            got => return Err(err(file, "initial_mode", "\"normal\", \"redundant\", 0 or 1", got)),
        };
        let fallback_norp = match obs.get("fallback").map(|v| v.as_str()) {
            None | Some(Some("minrtt")) => false,
            Some(Some("minrtt-norp")) => true,
            _ => return Err(err(file, "fallback", "\"minrtt\" or \"minrtt-norp\"", obs.get("fallback"))),
        };
        check_features(obs, file)?;
        let layout = ObsLayout { max_paths, history, max_flows: 0 };
        net.check_layout(&layout).map_err(|m| PolicyError(format!("{}: {m}", file.display())))?;
        let sender_only = match obs.get("sender_only") {
            None => false,
            Some(Value::Bool(b)) => *b,
            got => return Err(err(file, "sender_only", "true or false", got)),
        };
        if !sender_only {
            check_sender_inputs(net, &layout, file)?;
        }
        Ok(PolicySpec { action, interval, layout, initial_mode, fallback_norp })
    }
}

/// `obs.features`, when given, must be this build's feature table (the observation the policy
/// was trained on has the same meaning at every index).
fn check_features(obs: &Value, file: &Path) -> Result<(), PolicyError> {
    let Some(f) = obs.get("features") else { return Ok(()) };
    for (group, names) in
        [("subflow", &SUBFLOW_FEATURES[..]), ("connection", &CONN_FEATURES[..]), ("flow", &FLOW_FEATURES[..])]
    {
        let got: Option<Vec<&str>> =
            f.get(group).and_then(|v| v.as_array()).map(|a| a.iter().filter_map(|x| x.as_str()).collect());
        if got.as_deref() != Some(names) {
            return Err(PolicyError(format!(
                "{}: obs.features.{group}: the policy was trained on other {group} features than this version computes \
                 (expected {names:?}); export it again from a matching version",
                file.display()
            )));
        }
    }
    Ok(())
}

/// A policy deployed in a sender sees 0 for what only the receiver or a model knows: refuse a
/// network that reads such an input unless it was trained that way (`obs.sender_only`).
fn check_sender_inputs(net: &AnyNet, layout: &ObsLayout, file: &Path) -> Result<(), PolicyError> {
    for k in 0..layout.size() {
        if !sender_computes(layout, k).unwrap_or(true) && net.reads_input(k, layout) {
            return Err(PolicyError(format!(
                "{}: the network reads {}, which a sender cannot compute (docs/envs.md, \"seen by\"); train with \
                 sender_only=True and export with the env, or zero that input",
                file.display(),
                feature_name(layout, k)
            )));
        }
    }
    Ok(())
}
