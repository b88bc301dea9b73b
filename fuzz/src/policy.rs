//! The policy target: a policy file (JSON description + safetensors weights) through the
//! checkpoint loader ([`mpsched_policy::Checkpoint::from_bytes`], [`mpsched_policy::policy_from`])
//! and, if it loads, one inference on an observation of the declared layout.

use std::path::PathBuf;

use mpsched_policy::spec::Layout;
use mpsched_policy::{policy_from, Checkpoint, Role};

use crate::{error_kind, Outcome};

/// The description's name in messages.
pub const DESC: &str = "fuzz.json";
/// The weights' name in messages.
pub const WEIGHTS: &str = "fuzz.safetensors";

/// One input: the description's length as 4 little-endian bytes (taken modulo what follows),
/// the description, then the weights.
pub fn join(desc: &[u8], weights: &[u8]) -> Vec<u8> {
    let mut out = (desc.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(desc);
    out.extend_from_slice(weights);
    out
}

/// The (description, weights) of an input ([`join`]'s inverse; any bytes split somewhere).
pub fn split(data: &[u8]) -> (&[u8], &[u8]) {
    let (head, rest) = data.split_at(data.len().min(4));
    let mut n = [0u8; 4];
    n[..head.len()].copy_from_slice(head);
    let n = (u32::from_le_bytes(n) as usize) % (rest.len() + 1);
    rest.split_at(n)
}

/// The policy target.
pub fn policy(data: &[u8]) -> Outcome {
    let (desc, weights) = split(data);
    let ck = Checkpoint::from_bytes(PathBuf::from(DESC), PathBuf::from(WEIGHTS), desc, weights)
        .and_then(|ck| ck.check_format().map(|_| ck));
    let policy = match ck.and_then(policy_from) {
        Ok(p) => p,
        Err(e) => {
            let prefix = if e.0.starts_with(WEIGHTS) { WEIGHTS } else { DESC };
            return error_kind(&e.0, &format!("{prefix}: "));
        }
    };
    let (layout, action_len) = match &policy.role {
        Role::Scheduler(s) => (Layout::Sched(s.layout), s.action.len(s.layout.max_paths)),
        Role::Host(h) => (Layout::Host(h.layout), h.action_len()),
    };
    let mut net = policy.net.clone();
    // A deterministic observation in [-1, 1): the network must answer finite values or NaN,
    // never panic, whatever its weights.
    let obs: Vec<f32> = (0..layout.size()).map(|k| ((k * 7919) % 200) as f32 / 100.0 - 1.0).collect();
    let mut action = vec![0.0f32; action_len];
    net.act(&obs, &layout, &mut action);
    let role = if matches!(policy.role, Role::Scheduler(_)) { "scheduler" } else { "host" };
    Ok(format!("loaded: {role} policy, {} actions", action.len()))
}
