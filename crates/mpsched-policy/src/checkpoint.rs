//! A policy file: `NAME.json` (what the network is, what it observes and how its output acts;
//! provenance) and `NAME.safetensors` (float32 weights, nothing executable), written by
//! `python/mpsched/agents/checkpoint.py`. Read once, checked, and identified by the SHA-256 of
//! both files (description, then weights), which runs record.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::safetensors::{self, Tensor};
use crate::PolicyError;

/// A read policy file: its description and its tensors.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    /// The description's path (named in messages).
    pub desc_path: PathBuf,
    /// The weights' path.
    pub weights_path: PathBuf,
    /// The parsed description.
    pub desc: serde_json::Value,
    /// Every tensor of the weights file; a network takes the ones it reads and leaves none.
    pub tensors: BTreeMap<String, Tensor>,
    /// SHA-256 of the description's bytes followed by the weights' bytes (64 hex digits).
    pub sha256: String,
}

/// (description, weights) paths of a policy given by either file or their common stem.
pub fn checkpoint_paths(path: &Path) -> (PathBuf, PathBuf) {
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => (path.to_path_buf(), path.with_extension("safetensors")),
        Some("safetensors") => (path.with_extension("json"), path.to_path_buf()),
        _ => (
            PathBuf::from(format!("{}.json", path.display())),
            PathBuf::from(format!("{}.safetensors", path.display())),
        ),
    }
}

impl Checkpoint {
    /// Reads the policy at `path` (either file, or the stem).
    pub fn read(path: &Path) -> Result<Checkpoint, PolicyError> {
        let (js, st) = checkpoint_paths(path);
        let json = read_regular(&js, MAX_DESC_BYTES)
            .map_err(|e| PolicyError(format!("{}: cannot read the policy description: {e}", js.display())))?;
        // The description first: a wrong file is named by what it lacks, not by a missing twin.
        let desc: serde_json::Value = serde_json::from_slice(&json)
            .map_err(|e| PolicyError(format!("{}: not valid JSON ({e})", js.display())))?;
        check_format(&desc, &js)?;
        let weights = read_regular(&st, MAX_WEIGHTS_BYTES)
            .map_err(|e| PolicyError(format!("{}: cannot read the weights: {e}", st.display())))?;
        Self::from_bytes(js, st, &json, &weights)
    }

    /// A policy from its files' bytes (`desc_path`, `weights_path`: what messages name).
    pub fn from_bytes(
        desc_path: PathBuf,
        weights_path: PathBuf,
        json: &[u8],
        weights: &[u8],
    ) -> Result<Checkpoint, PolicyError> {
        let desc: serde_json::Value = serde_json::from_slice(json)
            .map_err(|e| PolicyError(format!("{}: not valid JSON ({e})", desc_path.display())))?;
        if !desc.is_object() {
            return Err(PolicyError(format!("{}: expected a JSON object", desc_path.display())));
        }
        let tensors =
            safetensors::parse(weights).map_err(|m| PolicyError(format!("{}: {m}", weights_path.display())))?;
        // FIPS 180-4 SHA-256, the transport's (it hashes MPTCP keys into tokens).
        let digest = mpsched_transport::token::sha256(&[json, weights].concat());
        let sha256 = digest.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Checkpoint { desc_path, weights_path, desc, tensors, sha256 })
    }

    /// The description's `"algorithm"` (the network type).
    pub fn algorithm(&self) -> Result<&str, PolicyError> {
        self.desc.get("algorithm").and_then(|v| v.as_str()).ok_or_else(|| {
            PolicyError(format!("{}: algorithm: expected the network type (a string)", self.desc_path.display()))
        })
    }

    /// The description's format must be `mpsched-policy/1`.
    pub fn check_format(&self) -> Result<(), PolicyError> {
        check_format(&self.desc, &self.desc_path)
    }
}

/// Largest policy description read (bytes).
const MAX_DESC_BYTES: u64 = 16 << 20;
/// Largest weights file read (bytes).
const MAX_WEIGHTS_BYTES: u64 = 1 << 30;

/// The bytes of `path` if it is a regular file (a FIFO or `/dev/zero` would block or never
/// end) of at most `limit` bytes.
fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > limit {
        return Err(format!("{} bytes, more than the {limit} a policy file may have", meta.len()));
    }
    let mut out = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut out)).map_err(|e| e.to_string())?;
    if out.len() as u64 > limit {
        return Err(format!("more than the {limit} bytes a policy file may have"));
    }
    Ok(out)
}

fn check_format(desc: &serde_json::Value, file: &Path) -> Result<(), PolicyError> {
    match desc.get("format") {
        None => Err(PolicyError(format!(
            "{}: missing field 'format' (expected \"mpsched-policy/1\": not a policy file)",
            file.display()
        ))),
        Some(serde_json::Value::String(f)) if f == "mpsched-policy/1" => Ok(()),
        Some(v) => Err(PolicyError(format!("{}: format: expected \"mpsched-policy/1\", got {v}", file.display()))),
    }
}
