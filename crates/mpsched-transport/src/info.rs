//! Snapshots of connection and subflow state: what schedulers, metrics and observations read.
//! A leaf module: it imports neither the connection nor the schedulers, so both can use it.

use crate::time::Duration;

/// Whose variant of an algorithm a subflow follows where the RFCs and the Linux kernel differ:
/// the RTO estimator (RFC 6298 or `tcp_rtt_estimator`/`tcp_set_rto`) and CUBIC (RFC 9438, or
/// `tcp_cubic.c` with HyStart and the kernel's Reno-friendly region). The scenario's profile
/// chooses it: `linux` → [`Stack::Linux`], `ns3` → [`Stack::Rfc`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stack {
    /// The RFCs' algorithms (the `ns3` profile).
    #[default]
    Rfc,
    /// The Linux kernel's (the `linux` profile).
    Linux,
}

/// Subflow states (RFC 9293 3.3.2). `Closed` is also the state before the handshake.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SubflowState {
    /// Not opened yet, or closed for good.
    #[default]
    Closed,
    /// Our SYN sent.
    SynSent,
    /// The peer's SYN answered with our SYN-ACK.
    SynReceived,
    /// Handshake complete.
    Established,
    /// Our FIN sent, not acknowledged; the peer may still send.
    FinWait1,
    /// Our FIN acknowledged; the peer may still send.
    FinWait2,
    /// Both FINs sent (simultaneous close), ours not acknowledged.
    Closing,
    /// Both FINs done; we closed first and acknowledge retransmitted FINs for a while.
    TimeWait,
    /// The peer's FIN received; we may still send.
    CloseWait,
    /// The peer's FIN received and ours sent, not acknowledged.
    LastAck,
}

/// A snapshot of a subflow's state for schedulers, metrics and observations.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SubflowInfo {
    /// The handshake (or join) completed and this end has not sent its FIN.
    pub established: bool,
    /// TCP state (RFC 9293 3.3.2).
    pub state: SubflowState,
    /// Smoothed RTT (RFC 6298), zero before the first sample.
    pub srtt: Duration,
    /// RTT variation (RFC 6298).
    pub rttvar: Duration,
    /// Smallest RTT sample, zero before the first.
    pub min_rtt: Duration,
    /// Current retransmission timeout, backoff included.
    pub rto: Duration,
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Slow-start threshold in bytes (`u64::MAX` until the first loss).
    pub ssthresh: u64,
    /// Bytes in flight (RFC 6675 pipe).
    pub pipe: u64,
    /// Bytes sent and not cumulatively acknowledged.
    pub outstanding: u64,
    /// Bytes acknowledged (cumulatively or by SACK) over the subflow's life.
    pub delivered: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes retransmitted.
    pub bytes_retransmitted: u64,
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Data segments retransmitted.
    pub segments_retransmitted: u64,
    /// Segments detected lost (by SACK, RTO, or a retransmission found lost again).
    pub segments_lost: u64,
    /// Retransmission timeouts fired (SYN and data).
    pub rto_count: u64,
    /// Fast-recovery episodes entered (RFC 6675).
    pub fast_recoveries: u64,
    /// Latest delivery-rate sample, bytes per second.
    pub delivery_rate: u64,
    /// In fast recovery or RTO recovery now.
    pub in_recovery: bool,
    /// Peer's advertised receive window.
    pub peer_wnd: u64,
    /// Payload bytes received in order on this subflow.
    pub bytes_received: u64,
    /// Payload bytes that arrived from the peer on this subflow, duplicates, out-of-order data
    /// and data beyond the receive buffer included: what the path delivered.
    pub bytes_arrived: u64,
}

impl SubflowInfo {
    /// The fields a scheduler that does not read the whole snapshot sees current (srtt, cwnd,
    /// ssthresh, pipe, outstanding bytes;
    /// [`Scheduler::reads_full_info`](crate::sched::Scheduler::reads_full_info)).
    pub fn core(&self) -> (Duration, u64, u64, u64, u64) {
        (self.srtt, self.cwnd, self.ssthresh, self.pipe, self.outstanding)
    }
}

/// The part of [`SubflowInfo`] the simulator's periodic sample reads
/// ([`crate::Connection::subflow_sample`]): with many flows every field read per sample is a
/// cache line fetched per flow, so the sample reads these alone (equal to the same fields of
/// [`SubflowInfo`] at the same moment).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SubflowSample {
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Slow-start threshold in bytes (`u64::MAX` until the first loss).
    pub ssthresh: u64,
    /// Smoothed RTT, zero before the first sample.
    pub srtt: Duration,
    /// RTT variation.
    pub rttvar: Duration,
    /// Current retransmission timeout, backoff included.
    pub rto: Duration,
    /// Bytes in flight (RFC 6675 pipe).
    pub pipe: u64,
    /// Bytes acknowledged (cumulatively or by SACK) over the subflow's life.
    pub delivered: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Segments detected lost.
    pub segments_lost: u64,
    /// Data segments retransmitted.
    pub segments_retransmitted: u64,
}

/// The part of [`ConnInfo`] the simulator's periodic sample reads
/// ([`crate::Connection::sample_at`]), after the same time accounting as
/// [`crate::Connection::info_at`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConnSample {
    /// Bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// Bytes waiting out of order in the shared receive buffer (now).
    pub ooo_bytes: u64,
    /// Time the receive window was below one MSS ("buffer full"), in seconds.
    pub rwnd_full_seconds: f64,
}

/// Connection-level counters, including the head-of-line (HoL) figures (defined in docs/scenarios.md, Outputs).
/// Counters are cumulative; interval figures are differences of two snapshots.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConnInfo {
    /// Bytes the application has written.
    pub bytes_written: u64,
    /// Bytes handed to subflows at least once (next new DSN).
    pub bytes_sent_new: u64,
    /// Highest DATA_ACK received (sender side).
    pub data_acked: u64,
    /// Bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// Bytes waiting out of order in the shared receive buffer (now).
    pub ooo_bytes: u64,
    /// Integral of out-of-order bytes over time, in byte·seconds.
    pub ooo_byte_seconds: f64,
    /// Time the receive window was below one MSS ("buffer full"), in seconds.
    pub rwnd_full_seconds: f64,
    /// Time the sender had data and window space on a subflow but the peer's window was closed.
    pub send_blocked_seconds: f64,
    /// Bytes received more than once at the connection level.
    pub duplicate_bytes: u64,
    /// Free receive window advertised now.
    pub rcv_window: u64,
    /// Bytes reinjected on another subflow after an RTO or a path failure (Linux
    /// `mptcp_reinject_data`).
    pub reinjected_bytes: u64,
    /// Segments resent by opportunistic retransmission (Linux `mptcp_rcv_buf_optimization`).
    pub opportunistic_retransmissions: u64,
    /// Window halvings of slow subflows by penalization (Linux `mptcp_rcv_buf_optimization`).
    pub penalizations: u64,
    /// Bytes sent as copies by redundant scheduling on subflows that had not carried the segment:
    /// every connection-level re-send that is not a reinjection or an opportunistic
    /// retransmission.
    pub redundant_bytes: u64,
    /// Per-packet decisions left unanswered past `ConnConfig::decision_timeout`, for which the
    /// connection applied the default.
    pub decisions_defaulted: u64,
}
