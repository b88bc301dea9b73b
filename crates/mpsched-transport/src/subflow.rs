//! One TCP-like subflow: handshake, SACK scoreboard, RFC 6675 loss recovery, RFC 6298 RTO with
//! Karn's rule and backoff, delayed ACK, receive reassembly. Sans-IO: segments and `now` in,
//! segments and a timer deadline out.
//!
//! Data is virtual: the subflow maps its own sequence space onto connection-level data sequence
//! numbers (DSN) handed out by [`ConnShared`].

pub(crate) mod close;
mod input;
mod output;
mod rate;
pub(crate) mod recv;
pub(crate) mod scoreboard;
mod timers;

use crate::cc::{AnyCc, CcState, CongestionControl, SiblingInfo};
pub use crate::info::{Stack, SubflowInfo, SubflowSample, SubflowState};
use crate::rcvspace::{RcvBuf, RcvRtt, LINUX_TCP_RMEM_DEFAULT};
use crate::reassembly::Reassembly;
use crate::rtt::RttEstimator;
use crate::segment::{DssBytes, SubflowId};
use crate::time::{Duration, Instant};
use close::CloseState;
use rate::RateState;
use recv::RecvSeq;
use scoreboard::Scoreboard;
pub(crate) use timers::min_deadline;
use timers::Timers;

/// Per-subflow TCP parameters. [`SubflowConfig::linux`] and [`SubflowConfig::ns3`] are the two
/// stack profiles; every field can be overridden.
// `repr(C)`, the fields read per segment first (`mss` to `delayed_ack_timeout`, 32 bytes): a
// subflow and a connection keep a copy, and with many flows every cache line of it read per
// segment is a miss (`flows-1000`).
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct SubflowConfig {
    /// Maximum segment payload in bytes.
    pub mss: u32,
    /// Duplicate-ACK threshold (RFC 6675 DupThresh).
    pub dupthresh: u32,
    /// Payload bytes the receive buffer holds per 256 bytes of buffer: the kernel advertises
    /// `tcp_win_from_space(sk, space)` = space × `scaling_ratio` / 256, the ratio being a
    /// received packet's payload over its memory charge (`skb->len` / `skb->truesize`,
    /// `tcp_measure_rcv_mss`). 256: the whole buffer holds payload (ns-3, the RFCs).
    pub rcv_scaling_ratio: u32,
    /// Initial congestion window in segments.
    pub init_cwnd: u32,
    /// Acknowledge every second full segment only (RFC 9293 3.8.6.3).
    pub delayed_ack: bool,
    /// Appropriate byte counting: grow cwnd by bytes acknowledged (Linux) rather than per ACK (ns-3).
    pub abc: bool,
    /// The RFCs' or the Linux kernel's variant of the RTO estimator and of CUBIC ([`Stack`]).
    pub stack: Stack,
    /// Each subflow of a multipath connection keeps a TCP window of its own, in its own
    /// sequence space, as Linux's subflows do. Sending: a subflow keeps to the window its own
    /// ACKs advertise from its cumulative ACK, or to the connection's window beyond the data it
    /// takes, whichever is larger (`tcp_write_xmit` → `tcp_snd_wnd_test` on the subflow, whose
    /// `snd_wnd` `mptcp_check_allowed_size` raises to `wnd_end − data_seq`). Receiving: after
    /// a read, a subflow sends a window update only if the connection's free space at least
    /// doubled since the last advertised window (`mptcp_cleanup_rbuf`) and the window it would
    /// offer is at least twice what is left of the window it offered last, in its own sequence
    /// space (`tcp_cleanup_rbuf`). `false`: only the connection-level window, and a window
    /// update on the first subflow when the connection's free space doubled (ns-3).
    pub subflow_windows: bool,
    /// MPTCP option bytes on a multipath connection's segments (the kernel's DSS option:
    /// [`DssBytes::LINUX`]); `None`: headers as plain TCP's (the `ns3` profile, whose
    /// reproductions were made with that header model). Their payload comes out of `mss`.
    pub dss: Option<DssBytes>,
    /// Longest delay of an ACK when `delayed_ack` is set.
    pub delayed_ack_timeout: Duration,
    /// Lower bound of the retransmission timeout (RFC 6298 2.4; Linux 200 ms).
    pub min_rto: Duration,
    /// Upper bound of the retransmission timeout, backoff included.
    pub max_rto: Duration,
    /// How long the end that closed first lingers in TIME-WAIT to acknowledge a retransmitted
    /// FIN (RFC 9293 3.6: 2 MSL; Linux `TCP_TIMEWAIT_LEN` = 60 s).
    pub time_wait: Duration,
    /// `tcp_rmem[1]`, the receive buffer (bytes) a joined subflow starts with: it advertises
    /// at most that buffer's payload share beyond DATA_ACK until the connection's buffer
    /// auto-tuning grows it (Linux: `mptcp_rcv_space_adjust` → `tcp_rcvbuf_grow`; never, once
    /// the connection's buffer reached `tcp_rmem[2]` before the subflow was established:
    /// [`crate::rcvspace`]). `None`: every subflow advertises the connection's window (ns-3).
    pub subflow_rcv_buf: Option<u64>,
}

/// The kernel's `scaling_ratio` for MTU-sized packets, measured on the kernel engine's TUN
/// devices (Linux 6.18, 2026-11-28): with a 262,144-byte receive buffer every MPTCP subflow
/// advertised at most 1,264 × 128 = 161,792 bytes (window scale 7), i.e. 158/256 of the buffer
/// (docs/fidelity.md, `mptcp-het-256k`).
pub const LINUX_SCALING_RATIO: u32 = 158;

impl SubflowConfig {
    /// The payload a receive buffer of `rcv_buf` bytes holds ([`SubflowConfig::rcv_scaling_ratio`]).
    pub fn rcv_payload(&self, rcv_buf: u64) -> u64 {
        // In u128: any u64 buffer (a scenario's integer) times a ratio up to 256 fits.
        (u128::from(rcv_buf) * u128::from(self.rcv_scaling_ratio) / 256).min(u128::from(u64::MAX)) as u64
    }
    /// Linux defaults: IW 10, `tcp_rto_min` 200 ms (a floor on the RTO's variance term:
    /// [`Stack::Linux`]), max RTO 120 s, ABC, delayed ACK 40 ms, the kernel's RTO estimator and
    /// CUBIC, a receive buffer holding [`LINUX_SCALING_RATIO`]/256 of its bytes as payload, the
    /// DSS option on multipath segments, joined subflows starting from `tcp_rmem[1]`'s buffer.
    pub fn linux() -> Self {
        SubflowConfig {
            mss: 1448,
            init_cwnd: 10,
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(120),
            delayed_ack: true,
            delayed_ack_timeout: Duration::from_millis(40),
            dupthresh: 3,
            abc: true,
            time_wait: Duration::from_secs(60),
            stack: Stack::Linux,
            rcv_scaling_ratio: LINUX_SCALING_RATIO,
            dss: Some(DssBytes::LINUX),
            subflow_rcv_buf: Some(LINUX_TCP_RMEM_DEFAULT),
            subflow_windows: true,
        }
    }
    /// ns-3 `TcpSocket`/`TcpSocketBase` defaults: IW 10 segments (the `InitialCwnd` attribute of
    /// current ns-3; papers built on older ns-3 used 1: set `init_cwnd = 1`), min RTO 1 s,
    /// delayed ACK every 2nd segment / 200 ms, per-ACK window growth.
    pub fn ns3() -> Self {
        SubflowConfig {
            mss: 1448,
            init_cwnd: 10,
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            delayed_ack: true,
            delayed_ack_timeout: Duration::from_millis(200),
            dupthresh: 3,
            abc: false,
            time_wait: Duration::from_secs(60),
            stack: Stack::Rfc,
            rcv_scaling_ratio: 256,
            dss: None,
            subflow_rcv_buf: None,
            subflow_windows: false,
        }
    }
}

impl Default for SubflowConfig {
    fn default() -> Self {
        Self::linux()
    }
}

/// Which end opened the subflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends the SYN.
    Client,
    /// Answers with SYN-ACK.
    Server,
}

/// Timers of a subflow, indexing [`Subflow::timers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Timer {
    Rto = 0,
    DelayedAck = 1,
    Pacing = 2,
    /// Zero-window probe (persist timer).
    Probe = 3,
    /// TIME-WAIT's end.
    TimeWait = 4,
}
const N_TIMERS: usize = 5;

/// What a subflow borrows from its connection for one call.
#[derive(Debug)]
// `repr(C)`: the window and sequence counters every segment reads first (with the
// connection's `repr(C)` they share its first cache lines).
#[repr(C)]
pub struct ConnShared {
    /// Receive buffer size in bytes; the free part is advertised as window.
    pub rcv_buf: u64,
    /// Bytes received but not yet read by the application.
    pub rcv_unread: u64,
    /// Next connection-level byte not yet handed to any subflow.
    pub snd_next_dsn: u64,
    /// One past the last byte the application has written.
    pub snd_end_dsn: u64,
    /// Largest right edge (DATA_ACK + window, DSN space) advertised so far: never moved left
    /// (RFC 8684 §3.3.4; Linux tcp_select_window never shrinks the window).
    pub rcv_edge: u64,
    /// The window offered by the last ACK on any subflow (`msk->old_wspace`).
    pub old_wspace: u64,
    /// The peer's key, once its MP_CAPABLE SYN or SYN-ACK arrived.
    pub peer_key: Option<u64>,
    /// Connection-level reassembly of received data (DSN space).
    pub rcv: Reassembly,
    /// The peer's DATA_FIN was received in order: DATA_ACK covers its one byte of sequence
    /// space (RFC 8684 3.3.3).
    pub data_fin_rcvd: bool,
    /// Snapshot of all subflows for coupled congestion control.
    pub siblings: Vec<SiblingInfo>,
    /// This end's MPTCP key (RFC 8684 3.1), from the driver.
    pub local_key: u64,
}

impl ConnShared {
    pub fn new(rcv_buf: u64, local_key: u64) -> Self {
        ConnShared {
            snd_next_dsn: 0,
            snd_end_dsn: 0,
            rcv: Reassembly::new(0),
            rcv_buf,
            rcv_unread: 0,
            rcv_edge: 0,
            old_wspace: 0,
            siblings: Vec::new(),
            local_key,
            peer_key: None,
            data_fin_rcvd: false,
        }
    }
    /// The DATA_ACK to send: every byte received in order, plus the peer's DATA_FIN once taken.
    #[inline]
    pub fn data_ack(&self) -> u64 {
        self.rcv.next() + self.data_fin_rcvd as u64
    }
    /// Free receive buffer: what every subflow advertises (MPTCP shares one window).
    #[inline]
    pub fn rcv_window(&self) -> u64 {
        self.rcv_buf.saturating_sub(self.rcv.ooo_bytes() + self.rcv_unread)
    }
    /// The window to put in an ACK carrying DATA_ACK = `rcv.next()` on a subflow whose own
    /// window is at most `own` bytes: the free buffer (at most `own`: Linux
    /// `__tcp_select_window` clamps it to the subflow's `rcv_ssthresh`), or more if an earlier
    /// ACK already offered a farther right edge (out-of-order arrivals fill the buffer without
    /// moving DATA_ACK; the edge offered before stays valid: `mptcp_set_rwin` raises the
    /// window to it). Records the edge. The edge never exceeds read point + buffer, so the peer
    /// never gets more than the buffer.
    pub fn advertise_window(&mut self, own: u64) -> u64 {
        let data_ack = self.rcv.next();
        let wnd = self.rcv_window().min(own).max(self.rcv_edge.saturating_sub(data_ack));
        self.rcv_edge = self.rcv_edge.max(data_ack + wnd);
        self.old_wspace = wnd;
        wnd
    }
    #[inline]
    pub fn unsent(&self) -> u64 {
        self.snd_end_dsn - self.snd_next_dsn
    }
}

/// Lent to a subflow for one call.
pub struct SubflowCx<'a> {
    pub conn: &'a mut ConnShared,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recovery {
    None,
    /// SACK-based fast recovery until `snd_una >= point`.
    Fast {
        point: u64,
    },
    /// After an RTO: retransmit everything outstanding until `snd_una >= point`.
    Rto {
        point: u64,
    },
}

/// One subflow. See the module docs.
// `repr(C)`: the fields every segment reads or writes in either direction first, then the
// sender's (configuration, congestion state, RTT estimator, scoreboard), then the controller
// and the counters. With many flows each cache line touched per segment is a miss
// (`flows-1000`); in Rust's own order the receiver of bulk data touched 12 of its 18 lines,
// the sender 15. Not `align(64)`: that cost `flows-1` and `newreno-10m` 0.4 % more
// instructions (BENCHMARKS.md, eleventh pass).
#[repr(C)]
pub struct Subflow {
    timers: Timers,
    snd_una: u64,
    snd_nxt: u64,
    ts_recent: u64,
    /// `rcv_wup` and `rcv_wnd`: `rcv.nxt()` when the last ACK left, and the window it offered.
    rcv_wup: u64,
    rcv_wnd: u64,
    peer_wnd: u64,
    /// The kernel's subflow `snd_wnd` ([`SubflowConfig::subflow_windows`]): the window of the
    /// last ACK that advanced `snd_una` or offered more (`tcp_may_update_window`), raised when
    /// new data is taken ([`Subflow::raise_snd_wnd`]).
    snd_wnd: u64,
    next_send_time: Instant,
    delivered: u64,
    /// Delivery-rate sampling state (subflow/rate.rs), allocated only when the controller is
    /// rate-based ([`CongestionControl::cong_control`]): it is called in fast recovery too and
    /// reads rate samples, which are computed only then. Other controllers carry a null pointer.
    rate: Option<Box<RateState>>,
    backoff: u32,
    unacked_segs: u32,
    /// Receive sequence space: rcv_nxt and the out-of-order queue.
    rcv: RecvSeq,
    recovery: Recovery,
    close: CloseState,
    /// The subflow's own receive buffer, if it has one apart from the connection's (a joined
    /// subflow under the `linux` profile: [`crate::rcvspace`]).
    rcv_own: Option<RcvBuf>,
    role: Role,
    state: SubflowState,
    pub id: SubflowId,
    /// RFC 6675 step 4.3: the first retransmission of a recovery episode goes out at once,
    /// whatever the window.
    fast_retx_pending: bool,
    probe_pending: bool,
    syn_pending: bool,
    /// A joining client subflow between the SYN-ACK and the peer's ACK of its third ACK
    /// (Linux `mptcp_is_temp_unavailable`, "pre-established"): TCP-established but carries no data yet.
    pre_established: bool,
    ack_now: bool,
    /// The MPTCP option bytes on this subflow's established-state segments ([`Subflow::carry_dss`]).
    dss: Option<DssBytes>,
    probe_backoff: u32,
    /// The receiver's RTT estimate (`rcv_rtt_est`), for the connection's buffer auto-tuning.
    rcv_rtt: RcvRtt,
    cfg: SubflowConfig,
    delivered_time: Instant,
    delivery_rate: u64,
    /// End of the last new-data segment shorter than the MSS sent (Linux `snd_sml`, set by
    /// `tcp_minshall_update`): Nagle's test, Minshall's variant ([`Subflow::nagle_holds`]).
    snd_sml: u64,
    cc_state: CcState,
    /// snd_una when the last RTO fired: a repeated timeout does not reduce ssthresh again.
    rto_una: u64,
    rtt: RttEstimator,
    /// Sent, not cumulatively acknowledged segments (RFC 6675 scoreboard).
    sb: Scoreboard,
    cc: AnyCc,
    stats: SubflowInfo,
}

impl Subflow {
    /// A new subflow. A client sends its SYN at the first `poll_transmit`.
    pub fn new(id: SubflowId, role: Role, cfg: SubflowConfig, cc: AnyCc, now: Instant) -> Self {
        let mss = cfg.mss;
        let rate = cc.cong_control().then(|| Box::new(RateState::new(now)));
        let cc_state = CcState {
            cwnd: cfg.init_cwnd as u64 * mss as u64,
            ssthresh: u64::MAX,
            mss,
            pipe: 0,
            srtt: Duration::ZERO,
            min_rtt: Duration::ZERO,
            abc: cfg.abc,
            stack: cfg.stack,
            in_recovery: false,
            index: id,
        };
        Subflow {
            id,
            role,
            state: SubflowState::Closed,
            timers: Timers::default(),
            snd_una: 0,
            snd_nxt: 0,
            peer_wnd: 65_535,
            snd_wnd: 0,
            snd_sml: 0,
            sb: Scoreboard::new(),
            recovery: Recovery::None,
            fast_retx_pending: false,
            rto_una: u64::MAX,
            probe_pending: false,
            probe_backoff: 0,
            backoff: 0,
            syn_pending: role == Role::Client && id == 0,
            pre_established: false,
            rtt: RttEstimator::new(cfg.min_rto, cfg.max_rto, cfg.stack),
            cc,
            cc_state,
            next_send_time: now,
            delivered: 0,
            delivered_time: now,
            delivery_rate: 0,
            rate,
            stats: SubflowInfo::default(),
            rcv: RecvSeq::default(),
            unacked_segs: 0,
            ack_now: false,
            ts_recent: 0,
            rcv_own: None,
            rcv_rtt: RcvRtt::default(),
            rcv_wup: 0,
            rcv_wnd: 0,
            close: CloseState::default(),
            dss: None,
            cfg,
        }
    }

    /// The most this subflow advertises beyond DATA_ACK of its own: its own buffer's payload
    /// share (`tcp_win_from_space`), unbounded without one.
    #[inline]
    pub fn own_window(&self) -> u64 {
        self.rcv_own.map_or(u64::MAX, |b| self.cfg.rcv_payload(b.rcvbuf))
    }
    /// Bytes of new data the subflow's own send window leaves room for when the connection's
    /// window has `conn_room` bytes beyond the next data (Linux `tcp_snd_wnd_test` after
    /// `mptcp_check_allowed_size`: the window ends at `snd_una + max(snd_wnd, conn_room)`).
    #[inline]
    pub fn snd_wnd_room(&self, conn_room: u64) -> u64 {
        (self.snd_una + self.snd_wnd.max(conn_room)).saturating_sub(self.snd_nxt)
    }
    /// `mptcp_check_allowed_size`: taking data with `conn_room` bytes of the connection's window
    /// from its start raises `snd_wnd` to that.
    #[inline]
    pub fn raise_snd_wnd(&mut self, conn_room: u64) {
        self.snd_wnd = self.snd_wnd.max(conn_room);
    }
    /// Nagle's algorithm with Minshall's rule, for a segment of `len` bytes that would be the
    /// last one the subflow has to send (Linux `tcp_write_xmit` → `tcp_nagle_test` with the
    /// socket's `nonagle` only for the write queue's tail, `tcp_nagle_check`,
    /// `tcp_minshall_check`): a segment shorter than the MSS waits while data is in flight and
    /// the last such segment sent is not acknowledged yet. No socket here sets `TCP_NODELAY`.
    #[inline]
    pub fn nagle_holds(&self, len: u32) -> bool {
        len < self.mss() && self.snd_nxt > self.snd_una && self.snd_sml > self.snd_una && self.snd_sml <= self.snd_nxt
    }
    /// The subflow's own receive buffer ([`crate::rcvspace`]), if it has one.
    pub fn rcv_own(&self) -> Option<RcvBuf> {
        self.rcv_own
    }
    /// Gives the subflow a buffer of its own, or changes it.
    pub fn set_rcv_own(&mut self, buf: RcvBuf) {
        self.rcv_own = Some(buf);
    }
    /// `tcp_cleanup_rbuf`'s window test after a read, `free` bytes of the connection's buffer
    /// being free: the window the subflow would offer now (`__tcp_select_window`: the free
    /// space, at most its own window) is at least twice what is left of the window it offered
    /// last (`tcp_receive_window`: `rcv_wup + rcv_wnd − rcv_nxt`), which is at most half its
    /// largest window (`window_clamp`). Then it acknowledges at once.
    pub fn window_update_after_read(&mut self, free: u64) {
        let clamp = self.own_window();
        let left = (self.rcv_wup + self.rcv_wnd).saturating_sub(self.rcv.nxt());
        let offer = free.min(clamp);
        if 2 * left <= clamp && offer > 0 && offer >= 2 * left {
            self.request_ack();
        }
    }
    /// The receiver's RTT estimate from timestamps (zero before a sample).
    pub fn rcv_rtt(&self) -> Duration {
        self.rcv_rtt.get()
    }
    /// Established and able to carry new data: the handshake completed and this end has not
    /// sent its FIN (the peer may have: CLOSE-WAIT still sends).
    pub fn is_established(&self) -> bool {
        matches!(self.state, SubflowState::Established | SubflowState::CloseWait)
    }
    /// A joining subflow whose MP_JOIN third ACK has not been acknowledged yet (pre-established
    /// until the 4th ACK: Linux `mptcp_is_def_unavailable`, RFC 8684 §3.2).
    pub fn is_pre_established(&self) -> bool {
        self.pre_established
    }
    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }

    /// Seeds the controller's randomness from the connection's key and this subflow's index
    /// (SplitMix64 finaliser of `key + index`), so that every subflow of every connection draws
    /// differently and every run of a scenario draws the same.
    pub fn seed_cc(&mut self, conn_key: u64) {
        let mut z = conn_key.wrapping_add((self.id as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        self.cc.seed(z ^ (z >> 31));
    }

    /// RFC 6675 pipe: outstanding − sacked − lost + retransmitted-in-flight.
    #[inline]
    pub fn pipe(&self) -> u64 {
        (self.snd_nxt - self.snd_una - self.syn_outstanding() - self.fin_outstanding())
            - self.sb.sacked_bytes()
            - self.sb.lost_bytes()
            + self.sb.retrans_bytes()
    }

    #[inline]
    fn syn_outstanding(&self) -> u64 {
        // The SYN occupies sequence number 0 until it is acknowledged.
        (self.snd_una == 0 && self.snd_nxt > 0) as u64
    }

    pub fn info(&self) -> SubflowInfo {
        let mut s = self.stats;
        self.fill_live(&mut s);
        s
    }

    /// The fields of [`Subflow::info`] that the simulator's periodic sample reads, alone.
    #[inline]
    pub fn sample(&self) -> SubflowSample {
        let s = SubflowSample {
            cwnd: self.cc_state.cwnd,
            ssthresh: self.cc_state.ssthresh,
            srtt: self.rtt.srtt(),
            rttvar: self.rtt.rttvar(),
            rto: self.current_rto(),
            pipe: self.pipe(),
            delivered: self.delivered,
            bytes_sent: self.stats.bytes_sent,
            segments_lost: self.sb.segments_lost(),
            segments_retransmitted: self.stats.segments_retransmitted,
        };
        #[cfg(debug_assertions)]
        {
            let i = self.info();
            let full = SubflowSample {
                cwnd: i.cwnd,
                ssthresh: i.ssthresh,
                srtt: i.srtt,
                rttvar: i.rttvar,
                rto: i.rto,
                pipe: i.pipe,
                delivered: i.delivered,
                bytes_sent: i.bytes_sent,
                segments_lost: i.segments_lost,
                segments_retransmitted: i.segments_retransmitted,
            };
            debug_assert_eq!(s, full);
        }
        s
    }

    /// [`Subflow::info`] written into `out` (no intermediate copy).
    #[inline]
    pub fn info_into(&self, out: &mut SubflowInfo) {
        *out = self.stats;
        self.fill_live(out);
    }

    /// The core of [`Subflow::info_into`] ([`SubflowInfo::core`]: srtt, cwnd, ssthresh, pipe,
    /// outstanding bytes) written into `out`, its other fields left as they were: the snapshot
    /// of a scheduler that reads no more
    /// ([`Scheduler::reads_full_info`](crate::sched::Scheduler::reads_full_info)).
    #[inline]
    pub fn core_info_into(&self, out: &mut SubflowInfo) {
        out.srtt = self.rtt.srtt();
        out.cwnd = self.cc_state.cwnd;
        out.ssthresh = self.cc_state.ssthresh;
        out.pipe = self.pipe();
        out.outstanding = self.outstanding();
    }

    /// Brings `out`, a snapshot ([`Subflow::info_into`]) taken right before [`Subflow::send_new`],
    /// up to date after it: sending new data changes only the pipe, the outstanding bytes and
    /// the two send counters of the snapshot (the controller's `on_sent` sees the window
    /// read-only; the RTT estimator, the timers' backoff and the delivery rate are untouched).
    /// The caller's debug check compares the result with a fresh snapshot (all of it, or its
    /// core when only that was copied: [`Subflow::core_info_into`]).
    #[inline]
    pub fn info_after_send(&self, out: &mut SubflowInfo) {
        out.pipe = self.pipe();
        out.outstanding = self.outstanding();
        out.bytes_sent = self.stats.bytes_sent;
        out.segments_sent = self.stats.segments_sent;
    }

    /// The fields of [`SubflowInfo`] that are not running counters: state, RTT, window.
    #[inline]
    fn fill_live(&self, s: &mut SubflowInfo) {
        s.established = self.is_established();
        s.state = self.state;
        s.srtt = self.rtt.srtt();
        s.rttvar = self.rtt.rttvar();
        s.min_rtt = self.rtt.min_rtt();
        s.rto = self.current_rto();
        s.cwnd = self.cc_state.cwnd;
        s.ssthresh = self.cc_state.ssthresh;
        s.pipe = self.pipe();
        s.outstanding = self.outstanding();
        s.delivered = self.delivered;
        s.delivery_rate = self.delivery_rate;
        s.in_recovery = self.recovery != Recovery::None;
        s.peer_wnd = self.peer_wnd;
        s.segments_lost = self.sb.segments_lost();
    }

    pub fn sibling_info(&self) -> SiblingInfo {
        SiblingInfo {
            cwnd: self.cc_state.cwnd,
            ssthresh: self.cc_state.ssthresh,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            mss: self.cfg.mss,
            established: self.is_established(),
            cc_shared: self.cc.shared_state(),
            lia_terms: None,
        }
    }

    /// Connection-level ranges `(dsn, len)` of data sent on this subflow and not yet
    /// acknowledged on it (cumulatively or by SACK): what MPTCP reinjects elsewhere.
    pub fn unacked_data(&self, out: &mut Vec<(u64, u32)>) {
        self.sb.unacked_data(out);
    }

    /// Halves the window (opportunistic-retransmission penalization, Raiciu et al. NSDI 2012 §4.2).
    pub fn penalize(&mut self) {
        let mss = self.cfg.mss as u64;
        let prior = self.cc_state.cwnd;
        self.cc_state.cwnd = (prior / 2 / mss * mss).max(mss);
        if prior >= self.cc_state.ssthresh {
            self.cc_state.ssthresh = (self.cc_state.ssthresh / 2).max(2 * mss);
        }
    }

    /// Path came back: restart the retransmission timer now with no backoff, so the subflow
    /// resumes at once instead of waiting out a backed-off RTO. Returns whether the timer was
    /// armed (the connection then knows that this timeout is a restart, not a failure).
    pub fn path_up(&mut self, now: Instant) -> bool {
        self.backoff = 0;
        if self.close.finished || self.state == SubflowState::TimeWait {
            return false;
        }
        if self.snd_una < self.snd_nxt
            || self.syn_pending
            || matches!(self.state, SubflowState::SynSent | SubflowState::SynReceived)
        {
            self.timers.set(Timer::Rto, Some(now));
            return true;
        }
        false
    }

    /// A client subflow other than the first waits for the MP_CAPABLE subflow; this starts its
    /// MP_JOIN handshake.
    pub fn start_join(&mut self) {
        if self.state == SubflowState::Closed && self.role == Role::Client && !self.close.finished {
            self.syn_pending = true;
        }
    }

    pub fn mss(&self) -> u32 {
        self.cfg.mss
    }

    /// Puts the MPTCP DSS option `dss` on every established-state segment (a subflow of a
    /// multipath connection): `mss`, given as plain TCP's payload per packet, then already
    /// leaves room for it ([`Connection::new`](crate::Connection::new) lowers it).
    pub fn carry_dss(&mut self, dss: DssBytes) {
        self.dss = Some(dss);
    }

    /// Sequence space (data, SYN or FIN) sent and not yet cumulatively acknowledged: only then
    /// can a segment from the peer acknowledge something or reveal a loss.
    #[inline]
    pub fn awaits_ack(&self) -> bool {
        self.snd_nxt > self.snd_una
    }

    /// Bytes sent and not cumulatively acknowledged.
    #[inline]
    pub fn outstanding(&self) -> u64 {
        self.snd_nxt - self.snd_una - self.syn_outstanding() - self.fin_outstanding()
    }

    /// Bytes acknowledged (cumulatively or by SACK) so far.
    #[inline]
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    #[inline]
    pub fn srtt(&self) -> Duration {
        self.rtt.srtt()
    }

    /// Congestion window in bytes.
    #[inline]
    pub fn cwnd(&self) -> u64 {
        self.cc_state.cwnd
    }

    /// Sets the congestion window (external congestion control); at least one segment.
    pub fn set_cwnd(&mut self, cwnd: u64) {
        self.cc_state.cwnd = cwnd.max(self.cfg.mss as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{AckSample, CongestionEvent, Siblings};
    use crate::segment::{Flags, Segment};

    /// A controller with a huge window that paces at a fixed rate.
    struct Paced(u64);
    impl CongestionControl for Paced {
        fn name(&self) -> &'static str {
            "paced"
        }
        fn on_ack(&mut self, _: Instant, _: &mut CcState, _: &AckSample, _: Siblings) {}
        fn on_congestion_event(&mut self, _: Instant, _: &mut CcState, _: CongestionEvent, _: Siblings) {}
        fn on_rto(&mut self, _: Instant, _: &mut CcState) {}
        fn pacing_rate(&self, _: &CcState) -> Option<u64> {
            Some(self.0)
        }
    }

    fn established_client(cc: AnyCc) -> (Subflow, ConnShared) {
        let mut cfg = SubflowConfig::linux();
        cfg.init_cwnd = 100;
        let mut sf = Subflow::new(0, Role::Client, cfg, cc, Instant::ZERO);
        let mut conn = ConnShared::new(1 << 20, 1);
        let mut cx = SubflowCx { conn: &mut conn };
        let syn = sf.poll_transmit(Instant::ZERO, &mut cx).unwrap();
        assert!(syn.flags.contains(Flags::SYN));
        let synack =
            Segment { flags: Flags::SYN.with(Flags::ACK), ack: 1, wnd: 1 << 20, ts_ecr: 0, ..Default::default() };
        sf.handle_segment(Instant(10_000_000), &synack, &mut cx);
        assert!(sf.is_established());
        (sf, conn)
    }

    /// Pacing at 1.2 MB/s spaces 1500-byte segments (1448 payload + 52 header) 1.25 ms apart,
    /// although the window would allow all of them at once; the pacing timer says when.
    #[test]
    fn pacing_spaces_segments() {
        let (mut sf, mut conn) = established_client(AnyCc::Custom(Box::new(Paced(1_200_000))));
        let mut now = Instant(10_000_000);
        let mut sent = Vec::new();
        for _ in 0..5 {
            assert!(sf.new_data_space(now) >= 1448, "window space at {now:?}");
            let mut cx = SubflowCx { conn: &mut conn };
            sf.send_new(now, 0, 1448, &mut cx);
            sent.push(now);
            // Nothing more until the pacing gap has passed.
            assert_eq!(sf.new_data_space(now), 0);
            now = sf.next_send_time;
        }
        let gaps: Vec<u64> = sent.windows(2).map(|w| w[1].saturating_duration_since(w[0]).0).collect();
        assert_eq!(gaps, vec![1_250_000; 4]);
    }

    /// The subflow's own send window (Linux `snd_wnd`): set by an ACK that advances `snd_una`
    /// or offers more, raised by new data taken with more of the connection's window left
    /// (`mptcp_check_allowed_size`); the room is counted from `snd_una` in subflow space.
    #[test]
    fn own_send_window_follows_acks_and_raises() {
        let (mut sf, mut conn) = established_client(AnyCc::by_name("newreno").unwrap());
        let now = Instant(10_000_000);
        for i in 0..10 {
            let mut cx = SubflowCx { conn: &mut conn };
            sf.send_new(now, i * 1448, 1448, &mut cx);
        }
        // The SYN-ACK offered 1 MiB: 1 MiB − 10 segments in flight.
        assert_eq!(sf.snd_wnd_room(0), (1 << 20) - 10 * 1448);
        let ack = |ack: u64, wnd: u32| Segment { flags: Flags::ACK, ack, wnd, ..Default::default() };
        let mut cx = SubflowCx { conn: &mut conn };
        sf.handle_segment(Instant(20_000_000), &ack(1 + 5 * 1448, 10_000), &mut cx);
        assert_eq!(sf.snd_wnd_room(0), 10_000 - 5 * 1448);
        // A duplicate ACK offering less does not shrink it; the connection's room may exceed it.
        sf.handle_segment(Instant(20_000_000), &ack(1 + 5 * 1448, 5_000), &mut cx);
        assert_eq!(sf.snd_wnd_room(0), 10_000 - 5 * 1448);
        assert_eq!(sf.snd_wnd_room(20_000), 20_000 - 5 * 1448);
        sf.raise_snd_wnd(20_000);
        assert_eq!(sf.snd_wnd_room(0), 20_000 - 5 * 1448);
        // An ACK that advances snd_una sets it, smaller or not.
        sf.handle_segment(Instant(30_000_000), &ack(1 + 10 * 1448, 3_000), &mut cx);
        assert_eq!(sf.snd_wnd_room(0), 3_000);
    }

    /// A joined subflow's own window caps what it offers beyond DATA_ACK, unless an earlier ACK
    /// offered a farther right edge (`mptcp_set_rwin` raises the window to it).
    #[test]
    fn own_receive_window_caps_new_edges_only() {
        let mut conn = ConnShared::new(161_792, 1);
        assert_eq!(conn.advertise_window(80_896), 80_896);
        assert_eq!(conn.advertise_window(u64::MAX), 161_792);
        assert_eq!(conn.advertise_window(80_896), 161_792, "the edge offered before");
        conn.rcv.insert(0, 100_000);
        assert_eq!(conn.advertise_window(80_896), 80_896, "edge 161,792 is 61,792 away");
        assert_eq!(conn.rcv_edge, 180_896);
        let mut sf =
            Subflow::new(1, Role::Server, SubflowConfig::linux(), AnyCc::by_name("newreno").unwrap(), Instant::ZERO);
        assert_eq!(sf.own_window(), u64::MAX);
        sf.set_rcv_own(RcvBuf::new(131_072, 1448));
        assert_eq!(sf.own_window(), 80_896);
    }

    /// Without pacing the whole initial window may leave at once.
    #[test]
    fn unpaced_window_is_available_at_once() {
        let (sf, _) = established_client(AnyCc::by_name("newreno").unwrap());
        assert_eq!(sf.new_data_space(Instant(10_000_000)), 100 * 1448);
    }
}
