//! Host controllers: one controller for every flow of a host (DRL-CC: "a single ... agent to
//! dynamically and jointly perform congestion control for all active MPTCP flows on an end
//! host", drl-cc.txt §I, §III). Sans-IO like the rest of the transport: the driver asks
//! [`HostController::poll_timeout`] when the controller wants to run, and at that instant —
//! after every other event of the instant — calls [`HostController::handle_timeout`] with a
//! view of the host's flows ([`HostFlows`]) through which the controller reads each flow's
//! connection and sets the windows of the flows it controls (their congestion control is
//! `external`: windows move only by the controller, and by TCP's loss reactions), or their
//! path preference (MPTCP-RL, mptcp-rl.txt §"Action": their scheduler is `dmptcp`).

use crate::connection::Connection;
use crate::observe::DecisionStats;
use crate::time::Instant;

/// One flow of the host, as a controller sees it.
#[derive(Clone, Copy)]
pub struct HostFlow<'a> {
    /// The flow's current sending connection (a repeated download gets a new one each time).
    pub conn: &'a Connection,
    /// The flow completed (its last transfer is over).
    pub done: bool,
    /// The flow's windows are this controller's to set.
    pub controlled: bool,
    /// A multipath (MPTCP) flow, not single-path TCP.
    pub multipath: bool,
    /// Maximum segment size of its subflows (bytes).
    pub mss: u32,
}

/// The flows of a host, in a fixed order (the driver's: the simulator uses the scenario's).
pub trait HostFlows {
    /// Number of flows (started or not).
    fn count(&self) -> usize;
    /// Flow `i`, once it has started.
    fn flow(&self, i: usize) -> Option<HostFlow<'_>>;
    /// Sets subflow `subflow`'s congestion window of flow `i` (bytes; a controlled flow only,
    /// others are left alone) and lets the flow send at once.
    fn set_cwnd(&mut self, i: usize, subflow: usize, bytes: u64);
    /// Sets (`Some`) or clears (`None`) flow `i`'s path preference
    /// ([`Connection::set_path_preference`]: MPTCP-RL's per-path usage probabilities, read by
    /// the flow's `dmptcp` scheduler; a controlled flow only) and lets the flow send at once.
    fn set_path_preference(&mut self, i: usize, pref: Option<&[f32]>);
}

/// A controller of a host's flows; see the module docs. Call order: the driver builds it
/// when the host starts, then whenever `now` reaches [`HostController::poll_timeout`] calls
/// [`HostController::handle_timeout`].
pub trait HostController: Send + Sync {
    /// The controller's name as the flows name it (`policy:PATH`).
    fn name(&self) -> &str;
    /// When the controller next wants to run.
    fn poll_timeout(&self) -> Option<Instant>;
    /// Runs the controller at `now` over `host`'s flows.
    fn handle_timeout(&mut self, now: Instant, host: &mut dyn HostFlows);
    /// Inference latencies of a learned controller.
    fn decision_stats(&self) -> Option<&DecisionStats> {
        None
    }
}
