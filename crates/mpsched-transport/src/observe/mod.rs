//! Observations and actions of learned policies, defined once for the simulator's envs and for
//! policies deployed in a sender: the feature layout ([`features`]), the per-interval formulas
//! ([`sample`]), the sender-side recorder ([`Recorder`]) and the mapping of an action vector
//! onto a [`Decision`] ([`ActionKind`]).

pub mod features;
pub mod host;
mod recorder;
pub mod sample;
mod stats;

pub use features::{ConnFeature, FeatureInfo, FeatureKind, FlowFeature, ObsLayout, SeenBy, SubflowFeature};
pub use host::{flow_sums, host_feature, host_sender_computes, FlowIn, HostLayout, HostRecorder};
pub use recorder::{feature_name, sender_computes, Recorder, RecorderConfig};
pub use sample::min_rtt_interval_ns;
pub use stats::DecisionStats;

use crate::sched::Decision;

/// What a scheduling policy's action vector means (the envs' `action` option).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// One value: ≥ 0.5 redundant (EdAR), else normal (minRTT).
    Mode,
    /// One value ≥ 0 per subflow slot: each subflow's share of new data (PDAA3C).
    Weights,
    /// One value per subflow slot, ≥ 0.5 = use the subflow (MPTCP-RL); none usable chosen =
    /// every usable subflow.
    Select,
    /// One value: the index of the one subflow slot to use (PDAA3C's per-epoch choice); the
    /// same as `Select` with that slot alone.
    Choose,
}

impl ActionKind {
    /// The kind named `name` (`"mode"`, `"weights"`, `"select"`).
    pub fn from_name(name: &str) -> Option<ActionKind> {
        match name {
            "mode" => Some(ActionKind::Mode),
            "weights" => Some(ActionKind::Weights),
            "select" => Some(ActionKind::Select),
            "choose" => Some(ActionKind::Choose),
            _ => None,
        }
    }

    /// The name of the kind.
    pub fn name(self) -> &'static str {
        match self {
            ActionKind::Mode => "mode",
            ActionKind::Weights => "weights",
            ActionKind::Select => "select",
            ActionKind::Choose => "choose",
        }
    }

    /// Length of the action vector with `max_paths` slots.
    pub fn len(self, max_paths: usize) -> usize {
        match self {
            ActionKind::Mode | ActionKind::Choose => 1,
            _ => max_paths,
        }
    }

    /// The decision an action vector stands for, and what the next frame's `prev_share`
    /// (weights, select) or `prev_mode` (mode, in slot 0) features record. Slots past
    /// `max_paths` and non-finite or negative values count as 0; `usable(i)` says whether
    /// subflow `i` can carry data now (a choice of none of them falls back to every usable
    /// subflow, by the scheduler's minRTT).
    pub fn decision(self, action: &[f32], max_paths: usize, usable: impl Fn(usize) -> bool) -> (Decision, [f32; 8]) {
        let mut prev = [0.0f32; 8];
        if self == ActionKind::Mode {
            let m = u8::from(action.first().is_some_and(|&a| a >= 0.5));
            prev[0] = f32::from(m);
            return (Decision::Mode(m), prev);
        }
        let n = max_paths.min(8);
        if self == ActionKind::Choose {
            let k = action.first().copied().filter(|a| a.is_finite() && *a >= 0.0).map_or(usize::MAX, |a| a as usize);
            let mut one = [0.0f32; 8];
            if k < n {
                one[k] = 1.0;
            }
            return ActionKind::Select.decision(&one, max_paths, usable);
        }
        for (i, wi) in prev.iter_mut().enumerate().take(n) {
            let a = action.get(i).copied().unwrap_or(0.0);
            let a = if a.is_finite() { a.max(0.0) } else { 0.0 };
            *wi = if self == ActionKind::Select { f32::from(u8::from(a >= 0.5)) } else { a };
        }
        let mut w = prev;
        if !(0..n).any(|i| w[i] > 0.0 && usable(i)) {
            w = [0.0; 8];
        }
        (Decision::Weights(w), prev)
    }
}
