//! Exported policies (format: `python/mpsched/agents/checkpoint.py`): a trained network stored as
//! safetensors weights plus a JSON description, evaluated in Rust without Python, and a driver that
//! runs such a policy inside the simulator at the controlled flow's decision points.
//!
//! - [`safetensors`]: a small reader for the safetensors format (float32 tensors only);
//! - [`edar`]: EdAR's Q-network (LSTM1 per subflow series, LSTM2 across subflows, MLP core);
//! - [`net`]: generic exported networks (linear, activations, layer norm, LSTM, GRU; actor heads);
//! - [`driver`]: runs a scenario with one flow scheduled by an EdAR network.

// Two `unsafe` calls: the AVX2 builds of the forward passes (edar.rs, net.rs), after checking
// the CPU.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod driver;
pub mod edar;
pub mod net;
pub mod safetensors;

use std::fmt;

/// A bad checkpoint (one-line message naming the file and field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError(pub String);

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PolicyError {}
