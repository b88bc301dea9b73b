//! What a host env is (the spec the Python side sends as JSON), and where everything sits in
//! its observations.

use serde::Deserialize;

use crate::scenario::ScenarioError;
use crate::Format;
pub use mpsched_transport::observe::HostLayout;
use mpsched_transport::{CcSpec, SchedSpec};

/// The action of a host env.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostAction {
    /// Values in [-1, 1]: congestion-window change of subflows, times `cwnd_step` segments
    /// (DRL-CC, drl-cc.txt §III-A "ACTION").
    Cwnd,
    /// Values >= 0 per flow slot and subflow slot: each multipath flow's share of new data per
    /// subflow (MPTCP-RL's path probabilities, mptcp-rl.txt §III "Action").
    Weights,
    /// Values in {0, 1} per flow slot and subflow slot: the subflows each multipath flow uses.
    Select,
    /// Values >= 0 per path slot (subflow index), shared by every controlled flow: MPTCP-RL's
    /// host-level per-path usage probabilities (mptcp-rl.txt §"Action"), applied as each
    /// flow's path preference ([`mpsched_transport::Connection::set_path_preference`]); the
    /// flows run `dmptcp`, which picks each flow's path set by the MPTCP transmission model in
    /// preference order (§"Paths selection based on the MPTCP transmission model").
    Paths,
}

/// Which flows a `cwnd` action sets each step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CwndTarget {
    /// One flow per step, in turn over the controlled flows: DRL-CC's "only one querying flow
    /// at each epoch t (i.e., target flow)" (drl-cc.txt §III-A). The action is one flow's
    /// subflows; the observation marks the next target (flow feature `target`).
    #[default]
    Rotate,
    /// Every controlled flow at once: the action is every flow slot's subflows.
    All,
}

/// Which of the host's flows the agent controls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Controlled {
    /// The multipath (MPTCP) flows; TCP flows are observed only (DRL-CC).
    #[default]
    Multipath,
    /// Every flow (`cwnd` only: a path choice needs several paths).
    All,
    /// No flow: the env observes the host's flows under their scenario's own algorithms and
    /// ignores actions (the traditional schedulers' transitions of MPTCP-RL's offline phase,
    /// mptcp-rl.txt §"The MPTCP-RL learning framework").
    None,
}

/// What a host env is, as the Python side sends it (JSON).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Scenario text.
    pub scenario: String,
    /// Where the scenario came from (for messages).
    pub source: String,
    /// `"json"` (default) or `"toml"`.
    #[serde(default = "default_format")]
    pub format: String,
    /// The action space.
    pub action: HostAction,
    /// `cwnd` only: one flow per step or all.
    #[serde(default)]
    pub target: CwndTarget,
    /// The host's flows by name: a flow's name, or a workload's name for all its flows
    /// (`<workload>-<i>`); `None` = every flow of the scenario.
    #[serde(default)]
    pub flows: Option<Vec<String>>,
    /// Which host flows the agent controls.
    #[serde(default)]
    pub control: Controlled,
    /// Decision period (ms).
    pub interval_ms: f64,
    /// Flow slots (1..=64).
    pub max_flows: usize,
    /// Subflow slots per flow (1..=8).
    pub max_subflows: usize,
    /// Frames per observation (1..=64).
    #[serde(default = "one")]
    pub history: usize,
    /// `cwnd` only: segments per unit of action.
    #[serde(default = "default_cwnd_step")]
    pub cwnd_step: f64,
    /// `weights`/`select`: the scheduler when a flow's choice has no usable subflow
    /// (`external:mode=weights,fallback=...`); `paths` flows run `dmptcp` instead (its own
    /// srtt order when the action prefers no usable path).
    #[serde(default = "default_fallback")]
    pub fallback: String,
    /// Observations hold only what the flows' sender computes (receiver and model features
    /// 0): what a host policy deployed in the sender sees (`cc = "policy:PATH"`).
    #[serde(default)]
    pub sender_only: bool,
}

fn default_format() -> String {
    "json".into()
}
fn one() -> usize {
    1
}
fn default_cwnd_step() -> f64 {
    10.0
}
fn default_fallback() -> String {
    "minrtt".into()
}

impl HostSpec {
    /// Parses and checks a spec.
    pub fn from_json(text: &str) -> Result<HostSpec, ScenarioError> {
        let spec: HostSpec = serde_json::from_str(text).map_err(|e| ScenarioError(format!("host env spec: {e}")))?;
        let bad = |field: &str, want: &str, got: String| {
            Err(ScenarioError(format!("host env spec: {field}: expected {want}, got {got}")))
        };
        if !(1..=64).contains(&spec.max_flows) {
            return bad("max_flows", "1..=64", spec.max_flows.to_string());
        }
        if !(1..=8).contains(&spec.max_subflows) {
            return bad("max_subflows", "1..=8", spec.max_subflows.to_string());
        }
        if !(1..=64).contains(&spec.history) {
            return bad("history", "1..=64", spec.history.to_string());
        }
        if !(spec.interval_ms.is_finite() && spec.interval_ms >= 0.001) {
            return bad("interval_ms", "a period >= 0.001 ms", spec.interval_ms.to_string());
        }
        if !(spec.cwnd_step.is_finite() && spec.cwnd_step > 0.0) {
            return bad("cwnd_step", "segments > 0", spec.cwnd_step.to_string());
        }
        if spec.action != HostAction::Cwnd && spec.control == Controlled::All {
            return bad("control", "\"multipath\" with a path action", "\"all\"".into());
        }
        spec.scheduler()?;
        Ok(spec)
    }

    pub(crate) fn format(&self) -> Format {
        if self.format == "toml" {
            Format::Toml
        } else {
            Format::Json
        }
    }

    /// The decision period (ns).
    pub fn interval_ns(&self) -> u64 {
        ((self.interval_ms * 1e6).round() as u64).max(1)
    }

    /// Where everything sits in observations.
    pub fn layout(&self) -> HostLayout {
        HostLayout { max_flows: self.max_flows, max_subflows: self.max_subflows, history: self.history }
    }

    /// Length of an action.
    pub fn action_len(&self) -> usize {
        match (self.action, self.target) {
            (HostAction::Cwnd, CwndTarget::Rotate) | (HostAction::Paths, _) => self.max_subflows,
            _ => self.max_flows * self.max_subflows,
        }
    }

    /// What a controlled flow runs: (congestion control, scheduler).
    pub(crate) fn control_algos(&self) -> (Option<CcSpec>, Option<SchedSpec>) {
        match self.action {
            HostAction::Cwnd => (Some(CcSpec::parse("external").expect("registered")), None),
            HostAction::Paths => (None, Some(SchedSpec::parse("dmptcp").expect("registered"))),
            _ => (None, Some(self.scheduler().expect("checked by from_json"))),
        }
    }

    fn scheduler(&self) -> Result<SchedSpec, ScenarioError> {
        SchedSpec::parse(&format!("external:mode=weights,fallback={}", self.fallback))
            .map_err(|e| ScenarioError(format!("host env spec: fallback: {e}")))
    }

    /// Whether `name` is one of the host's flows.
    pub fn is_host_flow(&self, name: &str) -> bool {
        let Some(list) = &self.flows else { return true };
        list.iter().any(|n| {
            name == n
                || name
                    .strip_prefix(n.as_str())
                    .and_then(|r| r.strip_prefix('-'))
                    .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
        })
    }

    /// Names of the reward-terms columns: the [`super::HOST_TERMS`], then per flow slot j
    /// `flow_goodput_mbps_<j>`, `flow_active_<j>` and `flow_energy_j_<j>`.
    pub fn term_names(&self) -> Vec<String> {
        let mut v: Vec<String> = super::HOST_TERMS.iter().map(|s| s.to_string()).collect();
        for prefix in ["flow_goodput_mbps_", "flow_active_", "flow_energy_j_"] {
            v.extend((0..self.max_flows).map(|j| format!("{prefix}{j}")));
        }
        v
    }

    /// Length of the reward terms.
    pub fn terms_len(&self) -> usize {
        super::HOST_TERMS.len() + 3 * self.max_flows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cwnd spec with 4 flow slots of 2 subflows, `extra` fields replacing the defaults.
    fn spec(extra: serde_json::Value) -> Result<HostSpec, ScenarioError> {
        let mut v = serde_json::json!({
            "scenario": "", "source": "<t>", "action": "cwnd", "interval_ms": 100,
            "max_flows": 4, "max_subflows": 2,
        });
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        HostSpec::from_json(&v.to_string())
    }

    #[test]
    fn host_flows_match_names_and_workload_members() {
        let s = spec(serde_json::json!({"flows": ["short", "bulk"]})).unwrap();
        for name in ["bulk", "short", "short-0", "short-17"] {
            assert!(s.is_host_flow(name), "{name}");
        }
        for name in ["short-", "short-x", "bulk-a", "other-1", "shorter"] {
            assert!(!s.is_host_flow(name), "{name}");
        }
        assert!(spec(serde_json::json!({})).unwrap().is_host_flow("anything"));
    }

    #[test]
    fn bad_specs_name_the_field() {
        let e = |extra: serde_json::Value| spec(extra).unwrap_err().0;
        use serde_json::json;
        assert_eq!(e(json!({"max_flows": 0})), "host env spec: max_flows: expected 1..=64, got 0");
        assert_eq!(e(json!({"max_subflows": 9})), "host env spec: max_subflows: expected 1..=8, got 9");
        assert_eq!(e(json!({"history": 65})), "host env spec: history: expected 1..=64, got 65");
        assert!(e(json!({"interval_ms": 0.0})).starts_with("host env spec: interval_ms: expected"));
        assert!(e(json!({"cwnd_step": -1.0})).starts_with("host env spec: cwnd_step: expected"));
        assert!(e(json!({"fallback": "bogus"})).starts_with("host env spec: fallback: "));
        assert!(e(json!({"action": "weights", "control": "all"})).starts_with("host env spec: control: "));
        assert!(e(json!({"bogus": 1})).contains("unknown field `bogus`"));
        assert_eq!(spec(json!({"target": "all"})).unwrap().action_len(), 8);
        assert_eq!(spec(json!({})).unwrap().action_len(), 2);
        assert_eq!(spec(json!({"action": "select"})).unwrap().action_len(), 8);
        assert_eq!(spec(json!({"action": "paths"})).unwrap().action_len(), 2);
        assert_eq!(spec(json!({"action": "paths", "target": "all"})).unwrap().action_len(), 2);
    }
}
