//! Sans-IO multipath TCP transport.
//!
//! Everything here takes segments and `now` in and returns segments and timer deadlines out;
//! nothing reads a clock, touches a socket or draws random numbers. The simulator
//! (`mpsched-sim`) drives it today; a UDP transport will drive the same code.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cc;
pub mod connection;
pub mod info;
mod reassembly;
mod rtt;
pub mod sched;
pub mod segment;
mod subflow;
pub mod time;

pub use connection::{ConfigError, ConnConfig, Connection, Event, PathId, PathState, Side, Transmit};
pub use info::{ConnInfo, SubflowInfo};
pub use sched::olms::SlotStats;
pub use sched::{AnySched, Decision};
pub use segment::{Flags, SackBlock, Segment, SubflowId};
pub use subflow::SubflowConfig;
pub use time::{Duration, Instant};
