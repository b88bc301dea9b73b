//! Sans-IO multipath TCP transport.
//!
//! Everything here takes segments and `now` in and returns segments and timer deadlines out;
//! nothing reads a clock or touches a socket. Schedulers that draw random numbers (OLMS's
//! Thompson sampling, Peekaboo's stochastic adjustment) use their own generator seeded by the
//! driver through `Scheduler::seed`, so runs stay deterministic. The simulator (`mpsched-sim`)
//! drives it today; a UDP transport will drive the same code.
//!
//! Schedulers and congestion controllers are typed values: [`SchedSpec`] and [`CcSpec`] name a
//! registered algorithm with its parameters (`olms:app=bandwidth`, `cubic:beta=0.8`), see
//! [`algo`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod algo;
pub mod cc;
pub mod connection;
pub mod host;
pub mod info;
pub mod layout;
pub mod observe;
pub mod plugin;
pub mod rcvspace;
mod reassembly;
pub mod ring;
mod rtt;
pub mod sched;
pub mod segment;
mod subflow;
pub mod time;
pub mod token;

pub use algo::{ParamError, ParamValue, Spec};
pub use cc::{AnyCc, CcSpec};
pub use connection::{
    CloseReason, ConfigError, ConnConfig, ConnState, Connection, Event, PathId, PathState, Side, Transmit,
};
pub use info::{ConnInfo, ConnSample, Stack, SubflowInfo, SubflowSample, SubflowState};
pub use sched::olms::SlotStats;
pub use sched::{AnySched, Decision, SchedSpec};
pub use segment::{DssBytes, Flags, SackBlock, Segment, SubflowId};
pub use subflow::{SubflowConfig, LINUX_SCALING_RATIO};
pub use time::{Duration, Instant};
