//! Sans-IO multipath TCP transport.
//!
//! Everything here takes segments and `now` in and returns segments and timer deadlines out;
//! nothing reads a clock, touches a socket or draws random numbers. The simulator
//! (`mpsched-sim`) drives it today; a UDP transport will drive the same code.
#![forbid(unsafe_code)]

pub mod cc;
pub mod connection;
mod reassembly;
mod rtt;
pub mod sched;
pub mod segment;
mod subflow;
pub mod time;

pub use connection::{
    ConfigError, ConnConfig, ConnInfo, Connection, Event, PathId, PathState, Side, SlotStats, Transmit,
};
pub use sched::{AnySched, Decision};
pub use segment::{Flags, SackBlock, Segment, SubflowId};
pub use subflow::{SubflowConfig, SubflowInfo};
pub use time::{Duration, Instant};
