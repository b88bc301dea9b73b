//! Either kind of env behind one interface, so the vector env and the Python classes serve
//! both: a flow env ([`Env`]: one controlled flow) or a host env ([`HostEnv`]: every flow of a
//! host). The JSON spec chooses: `"kind": "host"` is a [`HostSpec`], anything else an
//! [`EnvSpec`].

use super::{Env, EnvSpec, HostEnv, HostSpec, StepStatus};
use crate::scenario::ScenarioError;
use crate::RunOutput;

/// The spec of either kind of env.
#[derive(Clone, Debug)]
pub enum AnySpec {
    /// One controlled flow.
    Flow(EnvSpec),
    /// Every flow of a host.
    Host(HostSpec),
}

impl AnySpec {
    /// Parses a spec: a [`HostSpec`] when the object has `"kind": "host"`, else an [`EnvSpec`].
    pub fn from_json(text: &str) -> Result<AnySpec, ScenarioError> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| ScenarioError(format!("env spec: {e}")))?;
        match v.get("kind").and_then(|k| k.as_str()) {
            Some("host") => {
                let mut v = v;
                v.as_object_mut().expect("an object has a kind").remove("kind");
                Ok(AnySpec::Host(HostSpec::from_json(&v.to_string())?))
            }
            Some(other) => Err(ScenarioError(format!("env spec: kind: expected \"host\" or none, got {other:?}"))),
            None => Ok(AnySpec::Flow(EnvSpec::from_json(text)?)),
        }
    }

    /// Where the scenario came from (for messages).
    pub fn source(&self) -> &str {
        match self {
            AnySpec::Flow(s) => &s.source,
            AnySpec::Host(s) => &s.source,
        }
    }

    /// Length of an observation.
    pub fn obs_len(&self) -> usize {
        match self {
            AnySpec::Flow(s) => s.obs_len(),
            AnySpec::Host(s) => s.layout().size(),
        }
    }

    /// Length of an action.
    pub fn action_len(&self) -> usize {
        match self {
            AnySpec::Flow(s) => s.action_len(),
            AnySpec::Host(s) => s.action_len(),
        }
    }

    /// Length of the reward terms.
    pub fn terms_len(&self) -> usize {
        match self {
            AnySpec::Flow(s) => s.terms_len(),
            AnySpec::Host(s) => s.terms_len(),
        }
    }

    /// Names of the reward-terms columns.
    pub fn term_names(&self) -> Vec<String> {
        match self {
            AnySpec::Flow(s) => s.term_names(),
            AnySpec::Host(s) => s.term_names(),
        }
    }

    /// Length of one frame.
    pub fn frame_len(&self) -> usize {
        match self {
            AnySpec::Flow(s) => s.frame_len(),
            AnySpec::Host(s) => s.layout().frame_len(),
        }
    }

    /// Length of the masks at the end of an observation.
    pub fn mask_len(&self) -> usize {
        match self {
            AnySpec::Flow(s) => s.mask_len(),
            AnySpec::Host(s) => s.layout().mask_len(),
        }
    }
}

/// Either kind of env.
pub enum AnyEnv {
    /// One controlled flow.
    Flow(Env),
    /// Every flow of a host.
    Host(HostEnv),
}

/// Calls the same method on either kind.
macro_rules! both {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            AnyEnv::Flow($e) => $body,
            AnyEnv::Host($e) => $body,
        }
    };
}

impl AnyEnv {
    /// Builds the env of `spec` and resets it with `seed`.
    pub fn new(spec: AnySpec, seed: u64) -> Result<AnyEnv, ScenarioError> {
        Ok(match spec {
            AnySpec::Flow(s) => AnyEnv::Flow(Env::new(s, seed)?),
            AnySpec::Host(s) => AnyEnv::Host(HostEnv::new(s, seed)?),
        })
    }

    /// Starts a new episode with scenario seed `seed`.
    pub fn reset(&mut self, seed: u64) -> Result<(), ScenarioError> {
        both!(self, e => e.reset(seed))
    }

    /// Applies `action` and runs to the next boundary.
    pub fn step(&mut self, action: &[f32]) -> StepStatus {
        both!(self, e => e.step(action))
    }

    /// Writes the observation.
    pub fn observe(&self, out: &mut [f32]) {
        both!(self, e => e.observe(out))
    }

    /// Writes the reward terms of the last interval.
    pub fn write_terms(&self, out: &mut [f64]) {
        both!(self, e => e.write_terms(out))
    }

    /// The episode's results so far.
    pub fn output(&mut self) -> RunOutput {
        both!(self, e => e.output())
    }

    /// The simulation of the current episode.
    pub fn sim(&self) -> &crate::sim::Sim {
        both!(self, e => e.sim())
    }

    /// Steps taken in the current episode.
    pub fn steps(&self) -> u64 {
        both!(self, e => e.steps)
    }

    /// (observation, action, terms) lengths.
    pub fn dims(&self) -> (usize, usize, usize) {
        match self {
            AnyEnv::Flow(e) => (e.spec.obs_len(), e.spec.action_len(), e.spec.terms_len()),
            AnyEnv::Host(e) => (e.spec.layout().size(), e.spec.action_len(), e.spec.terms_len()),
        }
    }
}
