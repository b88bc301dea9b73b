//! What an env is: the spec the Python side sends (JSON) and the sizes derived from it.

use serde::Deserialize;

use super::features::ObsLayout;
use super::terms::TERMS;
use crate::scenario::{DecisionInterval, FlowDef, ScenarioError};
use crate::Format;
use mpsched_transport::{CcSpec, SchedSpec};

/// The action of an env.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionKind {
    /// One value: 0 normal (minRTT), 1 redundant (EdAR).
    Mode,
    /// `max_paths` values >= 0: each subflow's share of new data (PDAA3C).
    Weights,
    /// `max_paths` values in {0, 1}: the paths to use (MPTCP-RL); none = all usable.
    Select,
    /// `max_paths` values in [-1, 1]: congestion-window change of each subflow (DRL-CC), times
    /// `cwnd_step` segments.
    Cwnd,
}

/// What an env is, as the Python side sends it (JSON).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvSpec {
    /// Scenario text, already set up for the controlled flow (external scheduler or CC and a
    /// decision interval).
    pub scenario: String,
    /// Where the scenario came from (for messages).
    pub source: String,
    /// `"json"` (default) or `"toml"`.
    #[serde(default = "default_format")]
    pub format: String,
    /// Index of the controlled flow (replaced, each episode, by the index of `flow_name` when
    /// that is given).
    pub flow: usize,
    /// The controlled flow by name, for flows that exist only once the scenario is resolved
    /// (a `[[workloads]]` entry's `<workload>-<i>`); `control` then sets it up.
    #[serde(default)]
    pub flow_name: Option<String>,
    /// How the flow named `flow_name` is controlled (the Python side edits explicit flows in
    /// the scenario text instead).
    #[serde(default)]
    pub control: Option<Control>,
    /// The action space.
    pub action: ActionKind,
    /// Subflow slots of observations and actions (1..=8).
    #[serde(default = "default_max_paths")]
    pub max_paths: usize,
    /// Frames per observation (1..=64).
    #[serde(default = "default_history")]
    pub history: usize,
    /// Flow slots of the host view and the per-flow terms (1..=64).
    #[serde(default = "default_max_flows")]
    pub max_flows: usize,
    /// `Cwnd` only: segments per unit of action.
    #[serde(default = "default_cwnd_step")]
    pub cwnd_step: f64,
    /// `Mode` only: the mode in force from the flow's start until the first decision (EdAR:
    /// 1, redundant at connection start); `None` = normal.
    #[serde(default)]
    pub initial_mode: Option<u8>,
    /// Observations hold only what the flow's sender can compute (the features "seen by"
    /// the receiver or a model are 0): what a policy deployed as a scheduler sees.
    #[serde(default)]
    pub sender_only: bool,
}

/// What the env changes on the flow it controls, after the scenario is resolved.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Control {
    /// Scheduler (e.g. `external:mode=weights,fallback=minrtt`).
    #[serde(default)]
    pub scheduler: Option<String>,
    /// Congestion control (`external` for the window action).
    #[serde(default)]
    pub cc: Option<String>,
    /// Fixed decision interval in ms; `None` with `every_min_rtt` = EdAR's transmission interval.
    #[serde(default)]
    pub interval_ms: Option<f64>,
    /// Decide every minimum smoothed RTT.
    #[serde(default)]
    pub every_min_rtt: bool,
}

fn default_format() -> String {
    "json".into()
}
fn default_max_paths() -> usize {
    4
}
fn default_history() -> usize {
    1
}
fn default_max_flows() -> usize {
    8
}
fn default_cwnd_step() -> f64 {
    10.0
}

impl EnvSpec {
    /// Parses and checks a spec.
    pub fn from_json(text: &str) -> Result<EnvSpec, ScenarioError> {
        let spec: EnvSpec = serde_json::from_str(text).map_err(|e| ScenarioError(format!("env spec: {e}")))?;
        if !(1..=8).contains(&spec.max_paths) {
            return Err(ScenarioError(format!("env spec: max_paths: expected 1..=8, got {}", spec.max_paths)));
        }
        if !(1..=64).contains(&spec.history) {
            return Err(ScenarioError(format!("env spec: history: expected 1..=64, got {}", spec.history)));
        }
        if !(1..=64).contains(&spec.max_flows) {
            return Err(ScenarioError(format!("env spec: max_flows: expected 1..=64, got {}", spec.max_flows)));
        }
        match spec.initial_mode {
            Some(m) if spec.action != ActionKind::Mode => {
                return Err(ScenarioError(format!(
                    "env spec: initial_mode: only with action \"mode\", got {m} with {:?}",
                    spec.action
                )))
            }
            Some(m) if m > 1 => {
                return Err(ScenarioError(format!(
                    "env spec: initial_mode: expected 0 (normal) or 1 (redundant), got {m}"
                )))
            }
            _ => {}
        }
        Ok(spec)
    }

    pub(super) fn format(&self) -> Format {
        if self.format == "toml" {
            Format::Toml
        } else {
            Format::Json
        }
    }

    /// Whether observations hold every flow of the host (congestion-control envs).
    pub fn host_view(&self) -> bool {
        self.action == ActionKind::Cwnd
    }

    /// Where everything sits in this env's observations.
    pub fn layout(&self) -> ObsLayout {
        let max_flows = if self.host_view() { self.max_flows } else { 0 };
        ObsLayout { max_paths: self.max_paths, history: self.history, max_flows }
    }

    /// Length of one frame.
    pub fn frame_len(&self) -> usize {
        self.layout().frame_len()
    }

    /// Length of the mask at the end of the observation.
    pub fn mask_len(&self) -> usize {
        self.layout().mask_len()
    }

    /// Length of an observation.
    pub fn obs_len(&self) -> usize {
        self.layout().size()
    }

    /// Length of an action.
    pub fn action_len(&self) -> usize {
        match self.action {
            ActionKind::Mode => 1,
            _ => self.max_paths,
        }
    }

    /// Length of the reward terms.
    pub fn terms_len(&self) -> usize {
        TERMS.len() + self.max_paths + 2 * self.max_flows
    }

    /// Names of the terms columns.
    pub fn term_names(&self) -> Vec<String> {
        let mut v: Vec<String> = TERMS.iter().map(|s| s.to_string()).collect();
        v.extend((0..self.max_paths).map(|i| format!("sub_tput_mbps_{i}")));
        v.extend((0..self.max_flows).map(|j| format!("flow_goodput_mbps_{j}")));
        v.extend((0..self.max_flows).map(|j| format!("flow_active_{j}")));
        v
    }
}

/// Sets `flow` up as `c` says (scheduler, congestion control, decision interval); a bad
/// algorithm name is a one-line error naming the env option.
pub(super) fn apply_control(flow: &mut FlowDef, c: &Control, source: &str) -> Result<(), ScenarioError> {
    mpsched_policy::register();
    if let Some(s) = &c.scheduler {
        flow.scheduler = SchedSpec::parse(s).map_err(|e| ScenarioError(format!("{source}: env scheduler: {e}")))?;
    }
    if let Some(s) = &c.cc {
        flow.cc = CcSpec::parse(s).map_err(|e| ScenarioError(format!("{source}: env cc: {e}")))?;
    }
    flow.decision = match (c.interval_ms, c.every_min_rtt) {
        (Some(ms), false) if ms > 0.0 && ms.is_finite() => DecisionInterval::Fixed(((ms * 1e6).round() as u64).max(1)),
        (None, true) => DecisionInterval::MinRtt,
        _ => {
            return Err(ScenarioError(format!(
                "{source}: env interval: expected a period in ms > 0 or every minimum RTT, got {:?} / {}",
                c.interval_ms, c.every_min_rtt
            )))
        }
    };
    Ok(())
}
