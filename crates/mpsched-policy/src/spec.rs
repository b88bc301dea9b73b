//! What a policy observes and how its output acts: the `"obs"` block of a policy file,
//! checked against the network and against what a sender can compute. A policy is a
//! scheduler (one connection's observation, [`PolicySpec`]) or a host controller
//! (`"env": "host"`: every flow of the host, [`HostPolicySpec`]).

use std::path::Path;

use mpsched_transport::observe::features::{CONN_FEATURES, FLOW_FEATURES, SUBFLOW_FEATURES};
use mpsched_transport::observe::{
    feature_name, host_feature, host_sender_computes, sender_computes, ActionKind, HostLayout, ObsLayout,
};
use mpsched_transport::sched::ExternalBusy;
use serde_json::Value;

/// Where everything sits in a policy's observations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One connection (the scheduler env's layout).
    Sched(ObsLayout),
    /// Every flow of a host (the host env's layout).
    Host(HostLayout),
}

impl Layout {
    /// Length of an observation.
    pub fn size(&self) -> usize {
        match self {
            Layout::Sched(l) => l.size(),
            Layout::Host(l) => l.size(),
        }
    }

    /// Whether a sender computes index `k` (`None` past the end).
    fn sender_computes(&self, k: usize) -> Option<bool> {
        match self {
            Layout::Sched(l) => sender_computes(l, k),
            Layout::Host(l) => host_sender_computes(l, k),
        }
    }

    /// The name of index `k`, for messages.
    fn feature_name(&self, k: usize) -> String {
        match self {
            Layout::Sched(l) => feature_name(l, k),
            Layout::Host(l) if k < l.subflow_mask_offset() => {
                format!("t-{}/{}", l.history - 1 - k / l.frame_len(), host_feature(l, k % l.frame_len()).1)
            }
            Layout::Host(_) => format!("mask/{k}"),
        }
    }
}

/// Which flows a host policy's `cwnd` action sets at each decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostTarget {
    /// One flow per decision, in turn over the controlled flows (DRL-CC's target flow,
    /// drl-cc.txt §III-A); the action is its subflows' window changes.
    Rotate,
    /// Every controlled flow at once: the action is every flow slot's subflows.
    All,
}

/// What a host policy's action sets (the host env's `action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostActionKind {
    /// Congestion-window changes (`"cwnd"`, DRL-CC): named as a flow's `cc`.
    Cwnd,
    /// One usage value per path slot, every controlled flow's path preference (`"paths"`,
    /// MPTCP-RL, mptcp-rl.txt §"Action"): named as a flow's `scheduler`; the flows run
    /// `dmptcp`, which chooses each flow's path set in preference order.
    Paths,
}

/// A host controller's observation and action, as trained in the host env.
#[derive(Clone, Debug, PartialEq)]
pub struct HostPolicySpec {
    /// What the action sets.
    pub action: HostActionKind,
    /// Decision period (ns).
    pub interval_ns: u64,
    /// Flow slots, subflow slots and frames of its observations.
    pub layout: HostLayout,
    /// Which flows an action sets (`paths`: always [`HostTarget::All`]).
    pub target: HostTarget,
    /// Segments of window change per unit of action (`cwnd`; 0 for `paths`).
    pub cwnd_step: f64,
}

impl HostPolicySpec {
    /// Length of the action vector.
    pub fn action_len(&self) -> usize {
        match (self.action, self.target) {
            (HostActionKind::Paths, _) | (HostActionKind::Cwnd, HostTarget::Rotate) => self.layout.max_subflows,
            (HostActionKind::Cwnd, HostTarget::All) => self.layout.max_flows * self.layout.max_subflows,
        }
    }
}

/// What a policy is: a scheduler of one connection, or a controller of a host's windows.
#[derive(Clone, Debug, PartialEq)]
pub enum Role {
    /// `scheduler = "policy:PATH"`.
    Scheduler(PolicySpec),
    /// `cc = "policy:PATH"` (a `cwnd` policy) or `scheduler = "policy:PATH"` (a `paths`
    /// policy).
    Host(HostPolicySpec),
}

impl Role {
    /// Reads the `"obs"` block of `desc` (`file`: the description, for messages) and checks
    /// the network against it.
    pub fn read(desc: &Value, net: &AnyNet, file: &Path) -> Result<Role, PolicyError> {
        let none = Value::Null;
        let obs = desc.get("obs").unwrap_or(&none);
        if !(obs.is_object() || obs.is_null()) {
            return Err(PolicyError(format!("{}: obs: expected an object, got {obs}", file.display())));
        }
        match obs.get("env") {
            None => PolicySpec::read(desc, net, file).map(Role::Scheduler),
            Some(Value::String(e)) if e == "scheduler" => PolicySpec::read(desc, net, file).map(Role::Scheduler),
            Some(Value::String(e)) if e == "host" => HostPolicySpec::read(obs, net, file).map(Role::Host),
            got => Err(err(file, "env", "\"scheduler\" or \"host\"", got)),
        }
    }
}

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
    /// A weights, select or choose policy whose subflow due has no window space: wait for it
    /// (`"wait"`, the default), send on minRTT's choice (`"minrtt"`: RLDS-proxy) or on the next
    /// subflow by quality Q (`"next"`: PDAA3C, docs/pdaa3c.md), or skip it for the weighted
    /// subflow with room furthest behind its share (`"skip"`: ReLeS).
    pub busy: ExternalBusy,
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
        let busy = match obs.get("busy").map(|v| v.as_str()) {
            None | Some(Some("wait")) => ExternalBusy::Wait,
            Some(Some("minrtt")) => ExternalBusy::Minrtt,
            Some(Some("next")) => ExternalBusy::Next,
            Some(Some("skip")) => ExternalBusy::Skip,
            _ => return Err(err(file, "busy", "\"wait\", \"minrtt\", \"next\" or \"skip\"", obs.get("busy"))),
        };
        check_features(obs, file, &["subflow", "connection", "flow"])?;
        let layout = ObsLayout { max_paths, history, max_flows: 0 };
        check_network(obs, net, &Layout::Sched(layout), file)?;
        Ok(PolicySpec { action, interval, layout, initial_mode, fallback_norp, busy })
    }
}

impl HostPolicySpec {
    /// Reads a host policy's `"obs"` block (`"env": "host"`).
    fn read(obs: &Value, net: &AnyNet, file: &Path) -> Result<HostPolicySpec, PolicyError> {
        let action = match obs.get("action").and_then(|v| v.as_str()) {
            Some("cwnd") => HostActionKind::Cwnd,
            Some("paths") => HostActionKind::Paths,
            _ => {
                let want = "\"cwnd\" (congestion windows) or \"paths\" (path preferences)";
                return Err(err(file, "action", want, obs.get("action")));
            }
        };
        let target = match (action, obs.get("target").map(|v| v.as_str())) {
            // `paths` sets every controlled flow (the host env ignores `target` for it).
            (HostActionKind::Paths, _) => HostTarget::All,
            (_, None | Some(Some("rotate"))) => HostTarget::Rotate,
            (_, Some(Some("all"))) => HostTarget::All,
            _ => return Err(err(file, "target", "\"rotate\" or \"all\"", obs.get("target"))),
        };
        let interval_ns = match obs.get("interval").and_then(|v| v.as_f64()) {
            Some(ms) if ms.is_finite() && ms >= 0.001 => ((ms * 1e6).round() as u64).max(1),
            _ => return Err(err(file, "interval", "a period in ms >= 0.001", obs.get("interval"))),
        };
        let need = |field: &str, lo: u64, hi: u64| -> Result<usize, PolicyError> {
            int_in(obs, field, lo, hi, file)?
                .ok_or_else(|| err(file, field, &format!("an integer in {lo}..={hi}"), None))
        };
        let layout = HostLayout {
            max_flows: need("max_flows", 1, 64)?,
            max_subflows: need("max_subflows", 1, 8)?,
            history: need("history", 1, 64)?,
        };
        let cwnd_step = match (action, obs.get("cwnd_step").and_then(|v| v.as_f64())) {
            (HostActionKind::Paths, _) => 0.0,
            (_, Some(x)) if x.is_finite() && x > 0.0 => x,
            _ => return Err(err(file, "cwnd_step", "a number of segments > 0", obs.get("cwnd_step"))),
        };
        check_features(obs, file, &["subflow", "flow"])?;
        let spec = HostPolicySpec { action, interval_ns, layout, target, cwnd_step };
        check_network(obs, net, &Layout::Host(layout), file)?;
        let out = net.output_len(&Layout::Host(layout));
        if out.is_some_and(|n| n != spec.action_len()) {
            let what = match (action, target) {
                (HostActionKind::Paths, _) => format!("a \"paths\" action over {} path slots", layout.max_subflows),
                (_, t) => format!(
                    "a \"{}\" cwnd action over {} flow slots of {} subflows",
                    if t == HostTarget::Rotate { "rotate" } else { "all" },
                    layout.max_flows,
                    layout.max_subflows
                ),
            };
            return Err(PolicyError(format!(
                "{}: the network outputs {} values, {what} has {}",
                file.display(),
                out.unwrap_or(0),
                spec.action_len()
            )));
        }
        Ok(spec)
    }
}

/// The network reads observations of `layout`, and only what a sender computes unless the
/// policy was trained that way (`obs.sender_only`).
fn check_network(obs: &Value, net: &AnyNet, layout: &Layout, file: &Path) -> Result<(), PolicyError> {
    net.check_layout(layout).map_err(|m| PolicyError(format!("{}: {m}", file.display())))?;
    let sender_only = match obs.get("sender_only") {
        None => false,
        Some(Value::Bool(b)) => *b,
        got => return Err(err(file, "sender_only", "true or false", got)),
    };
    if !sender_only {
        check_sender_inputs(net, layout, file)?;
    }
    Ok(())
}

/// `obs.features`, when given, must be this build's feature table (the observation the policy
/// was trained on has the same meaning at every index).
/// `groups`: the feature groups the policy's observations hold.
fn check_features(obs: &Value, file: &Path, groups: &[&str]) -> Result<(), PolicyError> {
    let Some(f) = obs.get("features") else { return Ok(()) };
    for (group, names) in
        [("subflow", &SUBFLOW_FEATURES[..]), ("connection", &CONN_FEATURES[..]), ("flow", &FLOW_FEATURES[..])]
    {
        if !groups.contains(&group) {
            continue;
        }
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
fn check_sender_inputs(net: &AnyNet, layout: &Layout, file: &Path) -> Result<(), PolicyError> {
    for k in 0..layout.size() {
        if !layout.sender_computes(k).unwrap_or(true) && net.reads_input(k, layout) {
            return Err(PolicyError(format!(
                "{}: the network reads {}, which a sender cannot compute (docs/envs.md, \"seen by\"); train with \
                 sender_only=True and export with the env, or zero that input",
                file.display(),
                layout.feature_name(k)
            )));
        }
    }
    Ok(())
}
