//! Runs a scenario whose controlled flow is scheduled by an EdAR network, in Rust: the
//! learning environment ([`mpsched_sim::env::Env`]) provides the decision points (every
//! transmission interval = minimum subflow RTT) and the observations; the network answers
//! normal or redundant. After the controlled flow ends the rest of the scenario runs with
//! default answers, and the run's results are returned as `mpsched run` would produce them.

use std::time::Instant;

use mpsched_sim::env::{Env, EnvSpec};
use mpsched_sim::{RunOutput, ScenarioError};

use crate::edar::EdarNet;

/// Decisions made and the wall-clock time the network took (not part of the results: wall
/// time is not deterministic).
#[derive(Clone, Copy, Debug, Default)]
pub struct DecisionStats {
    /// Decisions the network made.
    pub decisions: u64,
    /// Of those, redundant ones.
    pub redundant: u64,
    /// Wall time of all decisions (ns).
    pub total_ns: u64,
    /// Slowest decision (ns).
    pub max_ns: u64,
}

impl DecisionStats {
    /// Mean wall time of a decision (ns; 0 without decisions).
    pub fn mean_ns(&self) -> f64 {
        if self.decisions == 0 {
            0.0
        } else {
            self.total_ns as f64 / self.decisions as f64
        }
    }
}

/// Simulates `spec`'s scenario (scenario seed `seed`) with the EdAR network deciding for the
/// controlled flow.
pub fn run_edar(spec: EnvSpec, seed: u64, net: &mut EdarNet) -> Result<(RunOutput, DecisionStats), ScenarioError> {
    if spec.history != net.history {
        return Err(ScenarioError(format!(
            "{}: the checkpoint expects {} intervals of history, the env spec has {}",
            net.path.display(),
            net.history,
            spec.history
        )));
    }
    let mut env = Env::new(spec, seed)?;
    let p = env.spec.max_paths;
    let mut obs = vec![0.0f32; env.spec.obs_len()];
    let mut stats = DecisionStats::default();
    loop {
        let st = env.status();
        if st.terminated || st.truncated {
            break;
        }
        env.observe(&mut obs);
        let t0 = Instant::now();
        let a = net.act(&obs, p);
        let ns = t0.elapsed().as_nanos() as u64;
        stats.decisions += 1;
        stats.redundant += u64::from(a);
        stats.total_ns += ns;
        stats.max_ns = stats.max_ns.max(ns);
        env.step(&[f32::from(a)]);
    }
    Ok((env.finish(), stats))
}
