//! The policy runtime: trained networks run as ordinary schedulers of the transport, without
//! Python. A policy file is safetensors weights plus a JSON description
//! (`python/mpsched/agents/checkpoint.py`, docs/policies.md).
//!
//! - [`checkpoint`]: reading a policy file (and its SHA-256);
//! - [`network`]: the network types ([`edar`]: EdAR's Q-network; [`net`]: generic layer stacks
//!   with actor heads), one registry line each;
//! - [`pdaa3c`]: PDAA3C's subflow quality evaluation (eqs. 4–5) and its rank-choosing actor;
//! - [`spec`]: what a policy observes and how its action acts, checked on load;
//! - [`sched`]: a scheduler policy as a [`mpsched_transport::sched::Scheduler`];
//! - [`host`]: a host policy (DRL-CC's, [`drl_cc`]) as a
//!   [`mpsched_transport::host::HostController`] of a host's windows;
//! - [`register`]: makes `policy:PATH`, `edar`, `edar:PATH` and `rlds` scheduler names, and
//!   `policy:PATH`, `drl-cc` and `drl-cc:PATH` congestion-control names ([`host_policy`] gives
//!   the driver its controller).
//!
//! The crate depends on the transport only: the simulator, and later a real transport, run the
//! same scheduler.

// Two `unsafe` calls: the AVX2 builds of the forward passes (edar.rs, net.rs), after checking
// the CPU.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod checkpoint;
pub mod drl_cc;
pub mod edar;
pub mod host;
pub mod net;
pub mod network;
pub mod pdaa3c;
pub mod safetensors;
pub mod sched;
pub mod spec;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Once};

use mpsched_transport::algo::Custom;
use mpsched_transport::algo::FromParams;
use mpsched_transport::cc::{CongestionControl, ExternalCc};
use mpsched_transport::sched::{Dmptcp, DmptcpParams, Scheduler};
use mpsched_transport::{CcSpec, SchedSpec};

pub use checkpoint::Checkpoint;
pub use host::PolicyHost;
pub use network::AnyNet;
pub use sched::{Policy, PolicySched};
pub use spec::{HostPolicySpec, PolicySpec, Role};

/// A bad policy file (one-line message naming the file and field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError(pub String);

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PolicyError {}

/// A policy file shipped with mpsched, built into the library: (name, description, weights).
macro_rules! shipped {
    ($($name:literal => $stem:literal,)+) => {
        const SHIPPED: &[(&str, &[u8], &[u8])] = &[$((
            $name,
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/mpsched/agents/checkpoints/", $stem, ".json")),
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/mpsched/agents/checkpoints/", $stem, ".safetensors")),
        ),)+];
    };
}

shipped! {
    "edar" => "edar-default",
    "drl-cc" => "drl-cc-default",
    "rlds" => "rlds-default",
    "pdaa3c" => "pdaa3c-default",
    "mptcp-rl" => "mptcp-rl-default",
    "reles" => "reles-default",
}

/// A policy from a read checkpoint.
pub fn policy_from(ck: Checkpoint) -> Result<Policy, PolicyError> {
    let (desc, file, sha256) = (ck.desc.clone(), ck.desc_path.clone(), ck.sha256.clone());
    let net = AnyNet::from_checkpoint(ck)?;
    let role = Role::read(&desc, &net, &file)?;
    Ok(Policy { net, role, sha256 })
}

/// The shipped policy `name` (`edar`, `drl-cc`, `pdaa3c`, `mptcp-rl`: a host path policy,
/// `rlds`: RLDS-proxy, a stand-in for PDAA3C's RLDS baseline, shared/specs/rl-baselines.md
/// §4, `reles`: ReLeS's split-ratio policy, §3), built once per process.
pub fn shipped(name: &str) -> Result<Arc<Policy>, PolicyError> {
    static BUILT: Mutex<Vec<(&'static str, Arc<Policy>)>> = Mutex::new(Vec::new());
    let &(name, json, weights) = SHIPPED
        .iter()
        .find(|(n, _, _)| *n == name)
        .ok_or_else(|| PolicyError(format!("no shipped policy {name:?}")))?;
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = built.iter().find(|(n, _)| *n == name) {
        return Ok(p.clone());
    }
    let file = PathBuf::from(format!("<built-in {name}-default>"));
    let p = Arc::new(policy_from(Checkpoint::from_bytes(file.clone(), file, json, weights)?)?);
    built.push((name, p.clone()));
    Ok(p)
}

/// The shipped EdAR policy, built once per process.
pub fn edar_default() -> Result<Arc<Policy>, PolicyError> {
    shipped("edar")
}

/// Files already loaded: (description, its length and mtime, weights' length and mtime).
type CacheKey = (PathBuf, Option<(u64, std::time::SystemTime)>, Option<(u64, std::time::SystemTime)>);

static CACHE: Mutex<Vec<(CacheKey, Arc<Policy>)>> = Mutex::new(Vec::new());

fn stamp(p: &Path) -> Option<(u64, std::time::SystemTime)> {
    let m = std::fs::metadata(p).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// Loads the policy at `path` (either file or the stem), once per unchanged file pair: a
/// scenario of a thousand flows naming one policy reads it once.
pub fn load(path: &Path) -> Result<Arc<Policy>, PolicyError> {
    let (js, st) = checkpoint::checkpoint_paths(path);
    let key: CacheKey = (std::fs::canonicalize(&js).unwrap_or(js.clone()), stamp(&js), stamp(&st));
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = cache.iter().find(|(k, _)| *k == key) {
        return Ok(p.clone());
    }
    let p = Arc::new(policy_from(Checkpoint::read(path)?)?);
    cache.push((key, p.clone()));
    Ok(p)
}

/// What a scheduler name `prefix:ARG` loads: a scheduler policy, or `dmptcp` for a host path
/// policy (MPTCP-RL: the host controller, [`host_policy`], sets each flow's path preference
/// and dmptcp picks the path set by it); `Err` for a host window policy.
fn scheduler_of(label: String, policy: Arc<Policy>) -> Result<Custom<dyn Scheduler + Send + Sync>, String> {
    if policy.host().is_some_and(|h| h.action == spec::HostActionKind::Paths) {
        let factory = || -> Box<dyn Scheduler + Send + Sync> {
            Box::new(<Dmptcp as FromParams>::from_params(&DmptcpParams::default()))
        };
        return Ok(Custom { name: label, factory: Arc::new(factory) });
    }
    if policy.scheduler().is_none() {
        let path = label.split_once(':').map_or("", |(_, p)| p);
        return Err(format!(
            "{path}: a host congestion-control policy (obs.env \"host\"): use it as cc = \"{label}\", not as a scheduler"
        ));
    }
    let factory = move || -> Box<dyn Scheduler + Send + Sync> {
        Box::new(PolicySched::new(policy.clone()).expect("a scheduler policy"))
    };
    Ok(Custom { name: label, factory: Arc::new(factory) })
}

/// What a congestion-control name `policy:PATH` loads: the `external` window on every subflow
/// (the host controller sets it, [`host_policy`]); `Err` for a scheduler policy.
fn cc_of(label: String, policy: &Policy) -> Result<Custom<dyn CongestionControl + Send + Sync>, String> {
    if policy.host().is_some_and(|h| h.action == spec::HostActionKind::Paths) {
        let path = label.split_once(':').map_or("", |(_, p)| p);
        return Err(format!(
            "{path}: a host path policy (obs.action \"paths\"): use it as scheduler = \"{label}\", not as a congestion control"
        ));
    }
    if policy.host().is_none() {
        let path = label.split_once(':').map_or("", |(_, p)| p);
        return Err(format!(
            "{path}: a scheduler policy: use it as scheduler = \"{label}\"; a congestion-control policy is trained in the host env (obs.env \"host\")"
        ));
    }
    Ok(Custom { name: label, factory: Arc::new(|| Box::new(ExternalCc)) })
}

/// The policy an algorithm name loads: `edar`, `drl-cc`, `pdaa3c`, `mptcp-rl`, `reles` (the
/// shipped ones), and `edar:PATH`, `drl-cc:PATH`, `pdaa3c:PATH`, `mptcp-rl:PATH`, `reles:PATH`,
/// `policy:PATH`
/// (files); `None` for a name that is no policy.
fn policy_of(name: &str) -> Option<Result<Arc<Policy>, PolicyError>> {
    let (prefix, arg) = name.trim().split_once(':').unwrap_or((name.trim(), ""));
    match (prefix.trim().to_ascii_lowercase().as_str(), arg.trim()) {
        (p @ ("edar" | "drl-cc" | "rlds" | "pdaa3c" | "mptcp-rl" | "reles"), "") => Some(shipped(p)),
        ("edar" | "drl-cc" | "rlds" | "pdaa3c" | "mptcp-rl" | "reles" | "policy", a) if !a.is_empty() => {
            Some(load(Path::new(a)))
        }
        _ => None,
    }
}

/// The host policy a congestion-control or scheduler name stands for (`drl-cc`,
/// `drl-cc:PATH`, or `policy:PATH` naming a host policy), `None` for any other name: a driver
/// builds one [`PolicyHost`] for the flows that name it (as `cc` for a window policy, as
/// `scheduler` for a path policy: the registries refuse the other way round).
pub fn host_policy(label: &str) -> Option<Arc<Policy>> {
    policy_of(label)?.ok().filter(|p| p.host().is_some())
}

/// Makes the policies known to the registries (idempotent): schedulers `policy:PATH` (any
/// scheduler policy file), `edar` (the shipped EdAR checkpoint), `edar:PATH` (an EdAR
/// checkpoint), `rlds` (the shipped RLDS-proxy policy) and `rlds:PATH` (a policy file, as
/// `policy:PATH`), `pdaa3c` (the shipped PDAA3C policy) and `pdaa3c:PATH`, `mptcp-rl` (the
/// shipped MPTCP-RL host path policy: the flows run dmptcp) and `mptcp-rl:PATH`, `reles` (the
/// shipped ReLeS split-ratio policy) and `reles:PATH` (a weights scheduler policy); congestion
/// controllers `policy:PATH` (any host policy file), `drl-cc` (the shipped DRL-CC policy) and
/// `drl-cc:PATH`. Drivers call it once before resolving scenarios
/// (the simulator does).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for prefix in ["policy", "edar", "rlds", "pdaa3c", "mptcp-rl", "reles"] {
            let loader = Arc::new(move |arg: &str| named(prefix, arg).and_then(|(l, p)| scheduler_of(l, p)));
            SchedSpec::register_loader(prefix, loader).expect("not a built-in name");
        }
        for prefix in ["policy", "drl-cc"] {
            let loader = Arc::new(move |arg: &str| named(prefix, arg).and_then(|(l, p)| cc_of(l, &p)));
            CcSpec::register_loader(prefix, loader).expect("not a built-in name");
        }
    });
}

/// The label and policy a name `prefix:ARG` loads: the shipped policy for a bare `edar`,
/// `drl-cc` or `pdaa3c`, else the file ARG, which after `edar:` / `drl-cc:` / `pdaa3c:` must
/// hold that network type.
fn named(prefix: &str, arg: &str) -> Result<(String, Arc<Policy>), String> {
    if arg.is_empty() {
        if prefix == "policy" {
            return Err("expected policy:PATH, the path of a policy file (NAME.json or NAME)".to_string());
        }
        return Ok((prefix.to_string(), shipped(prefix).map_err(|e| e.0)?));
    }
    let p = load(Path::new(arg)).map_err(|e| e.0)?;
    let wrong = match prefix {
        "edar" if !matches!(p.net, AnyNet::Edar(_)) => "not an EdAR checkpoint (\"algorithm\" is not \"edar\")",
        "drl-cc" if !matches!(p.net, AnyNet::DrlCc(_)) => "not a DRL-CC policy (\"algorithm\" is not \"drl_cc\")",
        "pdaa3c" if !matches!(p.net, AnyNet::Pdaa3c(_)) => "not a PDAA3C policy (\"algorithm\" is not \"pdaa3c\")",
        "mptcp-rl" if !p.host().is_some_and(|h| h.action == spec::HostActionKind::Paths) => {
            "not an MPTCP-RL policy (a host path policy: obs.action \"paths\")"
        }
        "reles" if !p.scheduler().is_some_and(|s| s.action == mpsched_transport::observe::ActionKind::Weights) => {
            "not a ReLeS policy (a scheduler policy with obs.action \"weights\")"
        }
        _ => return Ok((format!("{prefix}:{arg}"), p)),
    };
    Err(format!("{arg}: {wrong}: use policy:{arg}"))
}

/// The SHA-256 of the policy a scheduler or congestion-control name loads (`None` for a name
/// that is not a policy): what a run key and a run's outputs record.
pub fn policy_digest(name: &str) -> Option<Result<String, PolicyError>> {
    policy_of(name).map(|p| p.map(|p| p.sha256.clone()))
}
