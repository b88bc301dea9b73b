//! The per-decision view a Python scheduler sees: [`SchedView`] and [`SchedSubflow`] of
//! `mpsched_transport::sched`, copied into frozen Python objects. Field names are the Rust
//! ones; durations become milliseconds (`srtt` → `srtt_ms`, exactly `ns / 1e6`, so comparisons
//! order subflows as the Rust scheduler does); byte counts stay integers.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use mpsched_transport::sched::{SchedSubflow, SchedView, SubflowSet};
use mpsched_transport::{ConnInfo, Duration, Instant, SubflowState};

fn ms(d: Duration) -> f64 {
    d.as_millis_f64()
}

fn state_name(s: SubflowState) -> &'static str {
    match s {
        SubflowState::Closed => "closed",
        SubflowState::SynSent => "syn_sent",
        SubflowState::SynReceived => "syn_received",
        SubflowState::Established => "established",
        SubflowState::FinWait1 => "fin_wait_1",
        SubflowState::FinWait2 => "fin_wait_2",
        SubflowState::Closing => "closing",
        SubflowState::TimeWait => "time_wait",
        SubflowState::CloseWait => "close_wait",
        SubflowState::LastAck => "last_ack",
    }
}

/// One subflow as a scheduler sees it (Rust `SchedSubflow` with its `SubflowInfo` flattened).
#[pyclass(frozen, name = "SubflowView", module = "mpsched._core")]
pub struct PySubflowView {
    s: SchedSubflow,
    index: usize,
}

/// The `#[pymethods]` block of [`PySubflowView`]: one getter per field (`name: type = |s| expr`
/// over the `SchedSubflow`), then `__repr__`.
macro_rules! getters {
    ($($(#[doc = $doc:literal])* $name:ident: $ty:ty = |$s:ident| $e:expr;)+) => {
        #[pymethods]
        impl PySubflowView {
            /// Position in the connection's subflow list (what `get_send` returns).
            #[getter]
            fn index(&self) -> usize {
                self.index
            }
            $($(#[doc = $doc])* #[getter] fn $name(&self) -> $ty { let $s = &self.s; $e })+
            fn __repr__(&self) -> String {
                self.repr()
            }
        }
    };
}

getters! {
    /// Not definitely unavailable: established, joined, not potentially failed, path up.
    usable: bool = |s| s.usable;
    /// Usable and has congestion-window space for the segment (Linux `mptcp_is_available`).
    available: bool = |s| s.available;
    /// Flagged backup (MP_PRIO): used only when no active subflow is usable.
    backup: bool = |s| s.backup;
    /// Free congestion window in bytes.
    space: u64 = |s| s.space;
    /// The segment being scheduled was already sent on this subflow (reinjections).
    carried: bool = |s| s.carried;
    /// Bytes sent on this subflow and not yet acknowledged on it.
    queued: u64 = |s| s.queued;
    /// Running minimum of srtt in ms (0 before a sample).
    min_srtt_ms: f64 = |s| s.min_srtt_ns as f64 / 1e6;
    /// Running maximum of srtt in ms.
    max_srtt_ms: f64 = |s| s.max_srtt_ns as f64 / 1e6;
    /// Handshake (or join) completed and this end has not sent its FIN.
    established: bool = |s| s.info.established;
    /// TCP state (RFC 9293 3.3.2): "established", "syn_sent", ...
    state: &'static str = |s| state_name(s.info.state);
    /// Smoothed RTT in ms (RFC 6298), 0 before the first sample.
    srtt_ms: f64 = |s| ms(s.info.srtt);
    /// RTT variation in ms (RFC 6298).
    rttvar_ms: f64 = |s| ms(s.info.rttvar);
    /// Smallest RTT sample in ms, 0 before the first.
    min_rtt_ms: f64 = |s| ms(s.info.min_rtt);
    /// Current retransmission timeout in ms, backoff included.
    rto_ms: f64 = |s| ms(s.info.rto);
    /// Congestion window in bytes.
    cwnd: u64 = |s| s.info.cwnd;
    /// Slow-start threshold in bytes (None until the first loss).
    ssthresh: Option<u64> = |s| (s.info.ssthresh < u64::MAX / 2).then_some(s.info.ssthresh);
    /// Bytes in flight (RFC 6675 pipe).
    pipe: u64 = |s| s.info.pipe;
    /// Bytes sent and not cumulatively acknowledged.
    outstanding: u64 = |s| s.info.outstanding;
    /// Bytes acknowledged (cumulatively or by SACK) over the subflow's life.
    delivered: u64 = |s| s.info.delivered;
    /// Payload bytes sent, retransmissions included.
    bytes_sent: u64 = |s| s.info.bytes_sent;
    /// Payload bytes retransmitted.
    bytes_retransmitted: u64 = |s| s.info.bytes_retransmitted;
    /// Data segments sent, retransmissions included.
    segments_sent: u64 = |s| s.info.segments_sent;
    /// Data segments retransmitted.
    segments_retransmitted: u64 = |s| s.info.segments_retransmitted;
    /// Segments detected lost.
    segments_lost: u64 = |s| s.info.segments_lost;
    /// Retransmission timeouts fired.
    rto_count: u64 = |s| s.info.rto_count;
    /// Fast-recovery episodes entered (RFC 6675).
    fast_recoveries: u64 = |s| s.info.fast_recoveries;
    /// Latest delivery-rate sample, bytes per second.
    delivery_rate: u64 = |s| s.info.delivery_rate;
    /// In fast recovery or RTO recovery now.
    in_recovery: bool = |s| s.info.in_recovery;
    /// Peer's advertised receive window in bytes.
    peer_wnd: u64 = |s| s.info.peer_wnd;
    /// Payload bytes received in order on this subflow.
    bytes_received: u64 = |s| s.info.bytes_received;
}

impl PySubflowView {
    fn repr(&self) -> String {
        let s = &self.s;
        format!(
            "SubflowView(index={}, usable={}, available={}, backup={}, srtt_ms={}, cwnd={}, pipe={}, space={})",
            self.index,
            s.usable,
            s.available,
            s.backup,
            ms(s.info.srtt),
            s.info.cwnd,
            s.info.pipe,
            s.space
        )
    }
}

/// Everything a scheduler may look at when one segment waits (Rust `SchedView`).
#[pyclass(frozen, name = "SchedView", module = "mpsched._core")]
pub struct PySchedView {
    now: Instant,
    subs: Vec<SchedSubflow>,
    conn: ConnInfo,
    seg_len: u32,
    reinjection: bool,
    unsent: u64,
    send_window: u64,
    subflows: Py<PyTuple>,
}

impl PySchedView {
    /// Copies `v` into a Python object.
    pub fn new(py: Python<'_>, now: Instant, v: &SchedView) -> PyResult<Py<PySchedView>> {
        let items = v
            .subflows
            .iter()
            .enumerate()
            .map(|(index, s)| Py::new(py, PySubflowView { s: *s, index }))
            .collect::<PyResult<Vec<_>>>()?;
        let view = PySchedView {
            now,
            subs: v.subflows.to_vec(),
            conn: *v.conn,
            seg_len: v.seg_len,
            reinjection: v.reinjection,
            unsent: v.unsent,
            send_window: v.send_window,
            subflows: PyTuple::new(py, items)?.unbind(),
        };
        Py::new(py, view)
    }

    fn rust_view(&self) -> SchedView<'_> {
        SchedView {
            subflows: &self.subs,
            conn: &self.conn,
            seg_len: self.seg_len,
            reinjection: self.reinjection,
            unsent: self.unsent,
            send_window: self.send_window,
            preference: None,
            changed: SubflowSet::ALL,
        }
    }
}

#[pymethods]
impl PySchedView {
    /// Every subflow, in subflow order (`SubflowView` objects).
    #[getter]
    fn subflows(&self, py: Python<'_>) -> Py<PyTuple> {
        self.subflows.clone_ref(py)
    }
    /// Simulated time in seconds.
    #[getter]
    fn now_s(&self) -> f64 {
        self.now.0 as f64 / 1e9
    }
    /// Length of the segment to schedule, bytes.
    #[getter]
    fn seg_len(&self) -> u32 {
        self.seg_len
    }
    /// The segment is a reinjection (already sent on another subflow; see `carried`).
    #[getter]
    fn reinjection(&self) -> bool {
        self.reinjection
    }
    /// Connection-level bytes in the send buffer not yet handed to any subflow (ECF's k).
    #[getter]
    fn unsent(&self) -> u64 {
        self.unsent
    }
    /// Connection-level send window left: peer's window right edge − next DSN to send.
    #[getter]
    fn send_window(&self) -> u64 {
        self.send_window
    }
    /// The connection's counters (Rust `ConnInfo`), as a dict built on each access.
    #[getter]
    fn conn<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = &self.conn;
        let d = PyDict::new(py);
        d.set_item("bytes_written", c.bytes_written)?;
        d.set_item("bytes_sent_new", c.bytes_sent_new)?;
        d.set_item("data_acked", c.data_acked)?;
        d.set_item("send_blocked_seconds", c.send_blocked_seconds)?;
        d.set_item("reinjected_bytes", c.reinjected_bytes)?;
        d.set_item("opportunistic_retransmissions", c.opportunistic_retransmissions)?;
        d.set_item("penalizations", c.penalizations)?;
        d.set_item("redundant_bytes", c.redundant_bytes)?;
        d.set_item("decisions_defaulted", c.decisions_defaulted)?;
        Ok(d)
    }
    /// minRTT's choice (Linux `get_available_subflow`, what `minrtt` sends on), or None: wait.
    fn min_rtt(&self) -> Option<usize> {
        self.rust_view().min_rtt()
    }
    /// The usable active subflow with the smallest srtt, window space or not (BLEST/ECF's f).
    fn fastest(&self) -> Option<usize> {
        self.rust_view().fastest()
    }
    fn __repr__(&self) -> String {
        format!(
            "SchedView(now_s={}, seg_len={}, reinjection={}, unsent={}, send_window={}, subflows={})",
            self.now.0 as f64 / 1e9,
            self.seg_len,
            self.reinjection,
            self.unsent,
            self.send_window,
            self.subs.len()
        )
    }
}
