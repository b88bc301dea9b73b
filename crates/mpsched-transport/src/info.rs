//! Snapshots of connection and subflow state: what schedulers, metrics and observations read.
//! A leaf module: it imports neither the connection nor the schedulers, so both can use it.

use crate::time::Duration;

/// A snapshot of a subflow's state for schedulers, metrics and observations.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SubflowInfo {
    pub established: bool,
    pub srtt: Duration,
    pub rttvar: Duration,
    pub min_rtt: Duration,
    pub rto: Duration,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Bytes in flight (RFC 6675 pipe).
    pub pipe: u64,
    /// Bytes sent and not cumulatively acknowledged.
    pub outstanding: u64,
    /// Bytes acknowledged (cumulatively or by SACK) over the subflow's life.
    pub delivered: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    pub bytes_retransmitted: u64,
    pub segments_sent: u64,
    pub segments_retransmitted: u64,
    /// Segments detected lost (by SACK or RTO).
    pub segments_lost: u64,
    pub rto_count: u64,
    pub fast_recoveries: u64,
    /// Latest delivery-rate sample, bytes per second.
    pub delivery_rate: u64,
    pub in_recovery: bool,
    /// Peer's advertised receive window.
    pub peer_wnd: u64,
    /// Payload bytes received in order on this subflow.
    pub bytes_received: u64,
}

/// Connection-level counters, including the head-of-line (HoL) figures of baselines spec C.3.
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
    pub reinjected_bytes: u64,
    pub opportunistic_retransmissions: u64,
    pub penalizations: u64,
    /// Bytes sent as copies on additional subflows by redundant scheduling.
    pub redundant_bytes: u64,
}
