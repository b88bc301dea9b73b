//! The transport's integration tests, linked as one test binary (one module per topic) so the
//! workspace links one executable per crate instead of one per file. `util` is the shared Pair
//! harness.

mod util;

mod close;
mod close_multipath;
mod delayed_ack;
mod determinism;
mod flow_control;
mod handshake;
mod hostile_segments;
mod kernel_overheads;
mod loss_recovery;
mod mptcp_dmptcp;
mod mptcp_failover;
mod mptcp_hol;
mod mptcp_join;
mod mptcp_schedulers;
mod no_loss;
mod redundant_switching;
mod rto;
mod slot_stats;
mod subflow_windows;
