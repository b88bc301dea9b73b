//! Real-time user-space link emulation for `mpsched emulate`: the scenario's links (the
//! simulator's own sans-IO model, `mpsched_sim::netmodel`) between two network namespaces, one
//! TUN device per path end. See docs/emulate.md.

#![warn(missing_docs)]

pub mod lateness;
pub mod net;
pub mod run;
pub mod sys;
