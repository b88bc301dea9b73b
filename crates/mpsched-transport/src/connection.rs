//! A multipath connection (MPTCP semantics): one subflow per path, data sequence numbers (DSN)
//! mapped onto subflow sequence numbers, DATA_ACK, a connection-level send queue with
//! reinjection, a shared receive buffer whose free space is advertised on every subflow, a path
//! manager (full mesh over the configured paths: the first subflow handshakes, the others join
//! after it), a packet scheduler and per-subflow congestion control, coupled or not.
//!
//! Behaviour follows the Linux out-of-tree MPTCP implementation as described in
//! the Linux out-of-tree MPTCP v0.9x code (net/mptcp: `mptcp_sched.c`, `mptcp_output.c`,
//! `mptcp_input.c`) and RFC 8684.

mod ahead;
#[cfg(test)]
mod ahead_tests;
mod close;
mod input;
mod meta;
mod minrtt;
mod path;
mod queue;
#[cfg(test)]
mod queue_tests;
mod redundant;
mod send;
mod subflows;
pub(crate) use subflows::moved_min;
#[cfg(test)]
mod tests;
mod views;

use std::collections::VecDeque;

use crate::cc::CcSpec;
use crate::observe::DecisionStats;
use crate::rcvspace::RcvTuning;
use crate::sched::{AnySched, Decision, SchedSpec, SchedStart, SchedSubflow, Scheduler, SubflowSet};
use crate::segment::Segment;
use crate::subflow::{ConnShared, Role, Subflow, SubflowConfig};
use crate::time::{Duration, Instant};
use close::CloseState;
use subflows::{Derived, Subflows};

pub use crate::info::{ConnInfo, ConnSample, SubflowInfo, SubflowSample};
pub use crate::sched::olms::SlotStats;
pub use close::{CloseReason, ConnState};

/// Index of a network path, assigned by the driver.
pub type PathId = u16;

/// Which end of the connection this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Opens the connection (sends SYN) and the MP_JOIN subflows.
    Client,
    /// Answers the SYN and the MP_JOINs.
    Server,
}

/// Parameters of a [`Connection`].
#[derive(Clone, Debug)]
pub struct ConnConfig {
    /// TCP parameters of every subflow.
    pub subflow: SubflowConfig,
    /// Congestion control of every subflow (one instance each), e.g. `CcSpec::parse("cubic")`.
    pub cc: CcSpec,
    /// Receive buffer in bytes, shared by all subflows; the payload it holds
    /// ([`SubflowConfig::rcv_payload`]) less what it holds now is the advertised window.
    pub rcv_buf: u64,
    /// One subflow per path, in this order. The first carries the MP_CAPABLE handshake.
    pub paths: Vec<PathId>,
    /// Packet scheduler, e.g. `SchedSpec::parse("minrtt")`.
    pub scheduler: SchedSpec,
    /// Paths flagged as backup (MP_PRIO): used only when no active subflow is usable.
    pub backup: Vec<bool>,
    /// This end's 64-bit MPTCP key (RFC 8684 3.1). The peer learns it in the handshake; its
    /// hash is the connection token an MP_JOIN names ([`Connection::token`]). A real host draws
    /// it at random; the transport draws nothing, so the driver supplies it (give the two ends
    /// different keys).
    pub key: u64,
    /// How long a per-packet decision ([`Event::DecisionNeeded`]) may stay unanswered before
    /// the connection applies the default (`Decision::Path(None)`: the minRTT choice) and
    /// counts it in [`ConnInfo::decisions_defaulted`]. `None` waits for ever: right for a
    /// simulator whose agent answers before simulated time moves on, wrong for a real-time
    /// driver, which must not stall on a slow or crashed policy.
    pub decision_timeout: Option<Duration>,
}

impl Default for ConnConfig {
    fn default() -> Self {
        ConnConfig {
            subflow: SubflowConfig::linux(),
            cc: CcSpec::default(),
            rcv_buf: 6 << 20,
            paths: vec![0],
            scheduler: SchedSpec::default(),
            backup: Vec::new(),
            key: DEFAULT_KEY,
            decision_timeout: Some(Duration::from_millis(10)),
        }
    }
}

/// The key of [`ConnConfig::default`] ("mpsched" in ASCII).
pub const DEFAULT_KEY: u64 = 0x6d70_7363_6865_6400;

/// A segment to put on a path.
#[derive(Clone, Copy, Debug)]
pub struct Transmit {
    /// The path to send it on.
    pub path: PathId,
    /// The segment (payload is virtual: byte ranges only).
    pub seg: Segment,
}

impl Transmit {
    /// Writes the segment into `out` and returns the path ([`Connection::poll_transmit_into`]).
    #[inline]
    fn write_to(self, out: &mut Segment) -> PathId {
        *out = self.seg;
        self.path
    }
}

/// Up/down/backup state of a path, from the driver (interface events).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathState {
    /// The interface is usable (again): the subflow resumes at once.
    Up,
    /// The interface is gone: the subflow's unacknowledged data is reinjected elsewhere.
    Down,
    /// Set (`true`) or clear the backup priority of the path (MP_PRIO, RFC 8684 3.3.8).
    Backup(bool),
}

/// Something the driver may want to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The first subflow completed its handshake.
    Established,
    /// A subflow completed its handshake or join.
    SubflowUp(u8),
    /// A subflow became potentially failed (RTO) or its path went down.
    SubflowDown(u8),
    /// The scheduler asked for an outside decision; the connection sends no new data until
    /// [`Connection::decide`] is called.
    DecisionNeeded,
    /// DATA_ACK advanced to this DSN: every byte below it is acknowledged at connection level
    /// (RFC 8684 3.3.2) and will not be sent again, so the driver may free its payload.
    DataAcked(u64),
    /// The peer closed its sending side (its DATA_FIN arrived after all its data): once
    /// [`Connection::read`] returned the rest, there is nothing more to read.
    PeerClosed,
    /// The connection is closed ([`ConnState::Closed`]): the driver may drop it.
    Closed(CloseReason),
}

/// A connection-level segment not yet DATA_ACKed, with the subflows that carried it.
#[derive(Clone, Copy, Debug)]
struct MetaSeg {
    dsn: u64,
    len: u32,
    carried: SubflowSet,
}

impl SfMeta {
    fn new(backup: bool) -> Self {
        SfMeta {
            pf: false,
            backup,
            path_up: true,
            announced: false,
            last_penalization: None,
            min_srtt: u64::MAX,
            max_srtt: 0,
            red_next: 0,
            rto_seen: 0,
            up_restart: false,
            delivered_seen: 0,
            slots: SlotStats::default(),
        }
    }
}

/// Connection-side state kept per subflow.
#[derive(Clone, Copy, Debug)]
struct SfMeta {
    /// Potentially failed: RTO fired, cleared by the next ACK of new data (Linux `tp->pf`, set by
    /// `mptcp_reinject_data`, tested by `mptcp_is_def_unavailable`).
    pf: bool,
    backup: bool,
    path_up: bool,
    announced: bool,
    last_penalization: Option<Instant>,
    min_srtt: u64,
    max_srtt: u64,
    /// Redundant mode: every DSN below it was carried by this subflow or is DATA_ACKed (segments
    /// above it may be carried too, e.g. sent in normal mode: redundant mode skips those).
    red_next: u64,
    rto_seen: u64,
    /// set_path(Up) armed the subflow's retransmission timer for "now" (to resume at once):
    /// that one timeout is a restart, not a new failure.
    up_restart: bool,
    delivered_seen: u64,
    slots: SlotStats,
}

/// One end of a multipath connection, sans-IO: it never reads a clock, touches a socket or draws
/// random numbers. Inputs carry `now`; outputs are segments and a timer deadline.
///
/// Call order (after quinn-proto's `Connection`): after [`Connection::new`], after every input
/// ([`Connection::handle_segment`], [`Connection::handle_timeout`]) and after every command
/// ([`Connection::write`], [`Connection::read`], [`Connection::set_path`], [`Connection::decide`],
/// [`Connection::set_subflow_cwnd`], [`Connection::close`], [`Connection::abort`]) the driver
/// 1. drains [`Connection::poll_transmit`] until it returns `None` and puts each [`Transmit`] on
///    its path,
/// 2. reads [`Connection::poll_timeout`] and calls [`Connection::handle_timeout`] at that instant
///    unless another input comes first (a deadline may move earlier or later after any call),
/// 3. drains [`Connection::poll_event`] until `None`.
///
/// Timeouts are exact deadlines: `handle_timeout` before the deadline does nothing, so a driver
/// may call it early. `now` must never go backwards between calls.
///
/// Life cycle ([`Connection::state`]): `Connecting`, `Established`, then the DATA_FIN exchange of
/// RFC 8684 3.3.3 started by [`Connection::close`] (graceful: data written before still arrives)
/// or [`Connection::abort`] (RST + MP_FASTCLOSE, RFC 8684 3.5), until [`Event::Closed`]. The
/// peer closing its side is [`Event::PeerClosed`]. A driver serving several connections routes a
/// SYN with MP_JOIN by [`Segment::join_token`] to the connection whose [`Connection::token`]
/// matches; docs/transport.md walks through a driver.
///
/// ```
/// use mpsched_transport::{ConnConfig, Connection, Duration, Instant, Side};
///
/// let cfg = ConnConfig::default();
/// let mut client = Connection::new(&cfg, Side::Client, Instant::ZERO).unwrap();
/// let mut server = Connection::new(&cfg, Side::Server, Instant::ZERO).unwrap();
/// client.write(10_000);
/// // A lossless wire with a 10 ms one-way delay, both ends driven by one loop.
/// let (mut now, delay) = (Instant::ZERO, Duration::from_millis(10));
/// for _ in 0..20 {
///     let mut c2s = Vec::new();
///     while let Some(t) = client.poll_transmit(now) {
///         c2s.push(t);
///     }
///     now += delay;
///     for t in &c2s {
///         server.handle_segment(now, t.path, &t.seg);
///     }
///     server.read(u64::MAX);
///     let mut s2c = Vec::new();
///     while let Some(t) = server.poll_transmit(now) {
///         s2c.push(t);
///     }
///     now += delay;
///     for t in &s2c {
///         client.handle_segment(now, t.path, &t.seg);
///     }
///     if client.poll_timeout().is_some_and(|d| d <= now) {
///         client.handle_timeout(now);
///     }
///     while client.poll_event().is_some() {}
/// }
/// assert_eq!(server.info().bytes_delivered, 10_000);
/// assert_eq!(client.info().data_acked, 10_000);
/// ```
// `repr(C)`: the fields read or written by a segment in either direction, and by the periodic
// sample, come first and together (about ten cache lines), the rarely used ones (configuration
// copies, scheduler views, counters) after them. With many connections every line touched per
// segment is a cache miss (`flows-1000`); in Rust's own order they were spread over all 21.
#[repr(C)]
pub struct Connection {
    shared: ConnShared,
    hol_last: Instant,
    data_una: u64,
    /// Right edge of the peer's window in DSN space: the largest DATA_ACK + window seen (RFC 8684
    /// §3.3.4; Linux `tcp_may_update_window`).
    wnd_right: u64,
    read_total: u64,
    /// Close handshake state (connection/close.rs).
    close: CloseState,
    subflows: Subflows,
    paths: Vec<PathId>,
    meta: Vec<SfMeta>,
    pending: VecDeque<Transmit>,
    events: VecDeque<Event>,
    /// Connection-level retransmission queue: sent, not DATA_ACKed, ascending DSN.
    sent: VecDeque<MetaSeg>,
    reinject: VecDeque<(u64, u32)>,
    /// DSN ranges a scheduler reserved for one subflow ([`crate::sched::Verdict::SendAhead`]),
    /// not yet sent, ascending DSN (connection/ahead.rs).
    reserved: VecDeque<ahead::Reserved>,
    /// When the connection parked on an unanswered per-packet decision.
    parked_at: Option<Instant>,
    decision_timeout: Option<Duration>,
    blocked_since: Option<Instant>,
    /// RFC 8684 3.2 token of this end's key, once asked ([`Connection::token`]); 0: not yet
    /// hashed (a token that is 0 is hashed again each time it is asked, still exact).
    token: std::sync::atomic::AtomicU32,
    side: Side,
    coupled: bool,
    parked: bool,
    established: bool,
    /// No path is listed twice in `paths` (always so in the simulator, whose scenarios reject
    /// it; a join accepted on a new path keeps it so): [`Connection::index_of_path`] may then
    /// take the path's own number as its index when `paths` holds it there.
    paths_distinct: bool,
    /// Bit i: `views[i].info` was copied again since the scheduler's last `get_send` (its
    /// `usable` changes only with a new copy; a send patches it, not counted):
    /// [`crate::sched::SchedView::changed`].
    views_changed: u8,
    /// Bit i: subflow i's send queue (`queues`) holds a segment. Every `poll_transmit` reads it:
    /// here, in the padding of the flag line, rather than first in [`queue::SendQueues`], it lets
    /// the configuration and the scheduler follow the flags (see `sf_cfg`).
    queued: u8,
    /// `paths[0]`, the first subflow's path: the one every segment of a single-path connection
    /// names, compared here first so that a segment's lookup and a send do not read the
    /// `paths` buffer, a cache line of its own per packet with many flows (`flows-1000`,
    /// BENCHMARKS.md, seventeenth pass). In the padding before `sent_pushed`.
    path0: PathId,
    /// Segments ever pushed on `sent` (wrapping; connection/meta.rs). In the padding before
    /// `queues`: the connection's size is unchanged.
    sent_pushed: u32,
    /// For subflows the server accepts on paths it was not configured with. Its `mss` and
    /// `subflow_windows`, read per segment, and `rcv_tuning`'s `Option` tag (its last word) and
    /// `sched`'s discriminant, read per segment and per drive, share two lines with the flags
    /// here: with the 88 cold bytes of `queues` between them they took three lines of their own
    /// (BENCHMARKS.md, eighteenth pass, perf18m).
    sf_cfg: SubflowConfig,
    /// The receive buffer's auto-tuning, when joined subflows start with a buffer of their own
    /// ([`SubflowConfig::subflow_rcv_buf`], [`crate::rcvspace`]).
    rcv_tuning: Option<RcvTuning>,
    sched: AnySched,
    /// Segments in the subflows' send queues ([`crate::sched::Verdict::Queue`]), not yet sent
    /// (connection/queue.rs).
    queues: queue::SendQueues,
    info: ConnInfo,
    views: Vec<SchedSubflow>,
    scratch: Vec<(u64, u32)>,
    /// Send buffer limit in bytes: written and not yet DATA_ACKed (Linux `sk_sndbuf`).
    snd_buf: u64,
    next_poll: usize,
    next_red: usize,
    cc_spec: CcSpec,
    /// The host policy's path preference, per subflow index ([`Connection::set_path_preference`]).
    preference: Option<Vec<f32>>,
}

/// Why [`Connection::new`] rejected a [`ConnConfig`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The path list is empty or longer than 8.
    Paths(String),
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Paths(m) => f.write_str(m),
        }
    }
}

impl Connection {
    /// A connection over `cfg.paths`, opened at `now`. A client sends its SYN at the first
    /// [`Connection::poll_transmit`]; a server waits for it.
    pub fn new(cfg: &ConnConfig, side: Side, now: Instant) -> Result<Self, ConfigError> {
        if cfg.paths.is_empty() || cfg.paths.len() > 8 {
            return Err(ConfigError::Paths(format!("expected 1 to 8 paths, got {}", cfg.paths.len())));
        }
        let role = match side {
            Side::Client => Role::Client,
            Side::Server => Role::Server,
        };
        // A multipath connection's segments carry the DSS option (`SubflowConfig::dss`): it takes its
        // bytes from the payload, as the kernel's `tcp_current_mss` counts option space.
        let dss = if cfg.paths.len() > 1 { cfg.subflow.dss } else { None };
        let mut sub_cfg = cfg.subflow.clone();
        if let Some(d) = dss {
            sub_cfg.mss = sub_cfg.mss.saturating_sub(u32::from(d.data)).max(1);
        }
        let mut subflows = Vec::with_capacity(cfg.paths.len());
        for i in 0..cfg.paths.len() {
            let mut sf = Subflow::new(i as u8, role, sub_cfg.clone(), cfg.cc.build(), now);
            sf.seed_cc(cfg.key);
            if let Some(d) = dss {
                sf.carry_dss(d);
            }
            subflows.push(sf);
        }
        let mut sched: AnySched = cfg.scheduler.build();
        sched.start(&SchedStart { now, paths: cfg.paths.len(), mss: sub_cfg.mss, rcv_buf: cfg.rcv_buf });
        let coupled = cfg.cc.coupled();
        let meta = (0..cfg.paths.len()).map(|i| SfMeta::new(cfg.backup.get(i).copied().unwrap_or(false))).collect();
        Ok(Connection {
            side,
            shared: ConnShared::new(cfg.subflow.rcv_payload(cfg.rcv_buf), cfg.key),
            subflows: Subflows::new(subflows),
            paths: cfg.paths.clone(),
            path0: cfg.paths[0],
            paths_distinct: cfg.paths.iter().enumerate().all(|(i, p)| !cfg.paths[..i].contains(p)),
            meta,
            sched,
            coupled,
            sent: VecDeque::new(),
            sent_pushed: 0,
            data_una: 0,
            wnd_right: 0, // set by the SYN-ACK (client) or the third ACK (server)
            reinject: VecDeque::new(),
            reserved: VecDeque::new(),
            queues: queue::SendQueues::default(),
            queued: 0,
            pending: VecDeque::new(),
            events: VecDeque::new(),
            parked: false,
            established: false,
            read_total: 0,
            snd_buf: u64::MAX,
            next_poll: 0,
            next_red: 0,
            info: ConnInfo::default(),
            hol_last: now,
            blocked_since: None,
            views: Vec::with_capacity(cfg.paths.len()),
            views_changed: 0,
            scratch: Vec::new(),
            close: CloseState::default(),
            parked_at: None,
            decision_timeout: cfg.decision_timeout,
            sf_cfg: cfg.subflow.clone(),
            cc_spec: cfg.cc.clone(),
            token: std::sync::atomic::AtomicU32::new(0),
            preference: None,
            rcv_tuning: cfg
                .subflow
                .subflow_rcv_buf
                .map(|init| RcvTuning::new(init, cfg.rcv_buf, cfg.subflow.rcv_scaling_ratio)),
        })
    }

    /// The subflow index of `path`, if it has one (`path0` asked first). Then the path's own
    /// number as an index, when `paths` holds it there and lists no path twice (the first
    /// index holding it is then that one): the simulator numbers a multipath flow's paths from
    /// 0 in order, and the search over the paths cost ~20 instructions a segment with eight
    /// (measured: `subflows-8` 734.12 -> 728.78 M, twenty-first pass). Else the search.
    #[inline(always)]
    fn index_of_path(&self, path: PathId) -> Option<usize> {
        debug_assert_eq!(self.path0, self.paths[0]);
        if path == self.path0 {
            Some(0)
        } else if self.paths_distinct && self.paths.get(path as usize) == Some(&path) {
            debug_assert_eq!(self.paths.iter().position(|&p| p == path), Some(path as usize));
            Some(path as usize)
        } else {
            self.paths.iter().position(|&p| p == path)
        }
    }

    /// Which end this is.
    pub fn side(&self) -> Side {
        self.side
    }

    /// Application writes up to `bytes` more bytes; returns how many the send buffer took. The
    /// buffer holds written bytes until they are DATA_ACKed; once [`Event::DataAcked`] frees
    /// space, write the rest. Unbounded unless [`Connection::set_send_buffer`] set a limit.
    pub fn write(&mut self, bytes: u64) -> u64 {
        if self.close.fin_dsn.is_some() || self.close.reason.is_some() {
            return 0;
        }
        let held = self.shared.snd_end_dsn.saturating_sub(self.data_una);
        let n = bytes.min(self.snd_buf.saturating_sub(held));
        self.shared.snd_end_dsn = self.shared.snd_end_dsn.saturating_add(n);
        n
    }

    /// Limits the send buffer to `bytes` (written and not yet DATA_ACKed). Bytes already written
    /// stay; [`Connection::write`] takes no more until DATA_ACKs bring the total below the limit.
    pub fn set_send_buffer(&mut self, bytes: u64) {
        self.snd_buf = bytes;
    }

    /// Answers a `DecisionNeeded` (per-packet policies) or applies a per-interval decision.
    pub fn decide(&mut self, d: Decision) {
        self.sched.decide(&d);
        self.parked = false;
        self.parked_at = None;
    }

    /// Sets the host policy's path preference (MPTCP-RL's per-path usage probabilities): one
    /// value per subflow index, in the order of [`ConnConfig::paths`]. Higher values come first
    /// when a scheduler that reads it (`dmptcp`) orders the paths for its set choice; a value
    /// ≤ 0 or NaN, or a missing value (slice shorter than the subflows), means "do not give this
    /// path new data"; values beyond the last subflow are ignored. A preference with no positive
    /// value is treated as no preference. Schedulers see it as [`crate::sched::SchedView::preference`]
    /// from the next decision on; the others ignore it.
    pub fn set_path_preference(&mut self, pref: &[f32]) {
        let n = self.subflows.len();
        let v = self.preference.get_or_insert_with(Vec::new);
        v.clear();
        v.extend((0..n).map(|i| pref.get(i).copied().filter(|x| *x > 0.0).unwrap_or(0.0)));
        if v.iter().all(|x| *x <= 0.0) {
            self.preference = None;
        }
    }

    /// Removes the path preference: schedulers fall back to their own order (srtt for `dmptcp`).
    pub fn clear_path_preference(&mut self) {
        self.preference = None;
    }

    /// The path preference in force (normalised: one value per subflow, non-positive and NaN
    /// values as 0), `None` when unset.
    pub fn path_preference(&self) -> Option<&[f32]> {
        self.preference.as_deref()
    }

    /// Seeds the scheduler's random numbers (Peekaboo's stochastic adjustment).
    pub fn seed_scheduler(&mut self, seed: u64) {
        self.sched.seed(seed);
    }

    /// Whether the connection waits for [`Connection::decide`].
    pub fn is_parked(&self) -> bool {
        self.parked
    }

    /// The next event for the driver, oldest first. Drain after every input.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The earliest timer deadline of any subflow, the close handshake, an unanswered decision
    /// or the scheduler (a policy's decision boundary): call [`Connection::handle_timeout`] then.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.poll_timeout_below(u64::MAX)
    }

    /// [`Connection::poll_timeout`] for a caller that needs the deadline only when it is
    /// earlier than `limit` (ns): exact then; otherwise `None` or some instant at or after
    /// `limit` (a driver with a wake-up already queued at `limit`: it would not queue a later
    /// one). With more than two subflows the earliest of their deadlines is then not always
    /// taken again (`Subflows::earliest_timeout_below`, connection/subflows.rs: −0.6 % in
    /// `subflows-8`).
    #[inline(never)]
    pub fn poll_timeout_below(&self, limit: u64) -> Option<Instant> {
        let subflows = self.subflows.earliest_timeout_below(limit);
        let sched = self.sched.poll_timeout();
        // The common case: no DATA_FIN timer, no parked decision, no scheduler timer. The
        // four-way minimum cost ~20 of this call's 66 instructions on `newreno-10m`, asked
        // after every drive (issue 22, thirteenth pass).
        if self.no_connection_timers() && sched.is_none() {
            return subflows;
        }
        let decision = self.parked_at.zip(self.decision_timeout).map(|(t, d)| t + d);
        crate::subflow::min_deadline(&[subflows, self.close.timer, decision, sched])
    }

    /// No DATA_FIN timer and no parked decision: with no scheduler deadline besides, the
    /// subflows' timers are the only ones (plain TCP's common case).
    #[inline(always)]
    fn no_connection_timers(&self) -> bool {
        self.close.timer.is_none() && self.parked_at.is_none()
    }

    /// [`Connection::poll_timeout`] with the common case (no DATA_FIN timer, no parked
    /// decision, a built-in scheduler: the subflows' timers are the only ones) inlined at the
    /// caller for one and two subflows. The driver asks after every drive: the call's saved
    /// registers were most of what was left (`newreno-10m` −1.5 %; issue 22, thirteenth pass).
    /// The scheduler's deadline is ruled out by its variant (a call through a plug-in's vtable
    /// had made this function save registers on every path), and two subflows (`edar-handoff`,
    /// `lia-2path`: 97,388 calls) take one minimum over both timer arrays here instead of the
    /// whole `poll_timeout` with its six saved registers (twenty-first pass). Always inlined:
    /// without the vtable call it is small, and LLVM had left it out of line at the driver's
    /// call site (`edar-handoff` 178.59 -> 178.28 M, `newreno-10m` 75.98 -> 75.83 M).
    ///
    /// `queued`: the driver's wake-up already queued, if any: the deadline is needed only when
    /// it is earlier ([`Connection::poll_timeout_below`], which answers for more than two
    /// subflows).
    #[inline(always)]
    pub fn poll_timeout_inline(&self, queued: &Option<u64>) -> Option<Instant> {
        let only_subflows = || self.no_connection_timers() && !self.sched.may_keep_timer();
        debug_assert!(self.sched.may_keep_timer() || self.sched.poll_timeout().is_none());
        match &*self.subflows {
            [sf] if only_subflows() => return sf.poll_timeout(),
            [a, b] if only_subflows() => return Subflow::earliest_of_two(a, b),
            _ => {}
        }
        self.poll_timeout_below(queued.unwrap_or(u64::MAX))
    }

    /// A learned policy scheduler's decision count and latencies (`None` for other schedulers).
    pub fn decision_stats(&self) -> Option<&DecisionStats> {
        self.sched.decision_stats()
    }

    fn info_now(&self) -> ConnInfo {
        let mut info = self.info;
        write_live_info(&self.shared, self.data_una, &mut info);
        info
    }

    /// Brings `self.info`'s live counters up to date in place, so that the scheduler can be
    /// shown `&self.info` (copying the ~300-byte [`ConnInfo`] per decision showed in the
    /// profile). Nothing else reads those fields of `self.info`.
    #[inline]
    fn refresh_live_info(&mut self) {
        write_live_info(&self.shared, self.data_una, &mut self.info);
    }

    /// Connection counters, with time integrals accounted up to `now`.
    pub fn info_at(&mut self, now: Instant) -> ConnInfo {
        self.account_time(now);
        self.info_now()
    }

    /// The counters of the simulator's periodic sample, after the time accounting of
    /// [`Connection::info_at`] (same effect on the connection): the same values as its
    /// [`ConnInfo`]'s fields, without reading the connection's other counters.
    pub fn sample_at(&mut self, now: Instant) -> ConnSample {
        self.account_time(now);
        ConnSample {
            bytes_delivered: self.shared.rcv.next(),
            ooo_bytes: self.shared.rcv.ooo_bytes(),
            rwnd_full_seconds: self.info.rwnd_full_seconds,
        }
    }

    /// Accounts the time integrals (HoL figures, send-blocked time) up to `now`.
    #[inline]
    fn account_time(&mut self, now: Instant) {
        self.account_hol(now);
        if let Some(t) = self.blocked_since {
            self.info.send_blocked_seconds += now.saturating_duration_since(t).as_secs_f64();
            self.blocked_since = Some(now);
        }
    }

    /// Connection counters (time integrals as of the last event).
    pub fn info(&self) -> ConnInfo {
        self.info_now()
    }

    /// Payload bytes of a full segment: the configured MSS, less the DSS option on a multipath
    /// connection ([`SubflowConfig::dss`]).
    pub fn mss(&self) -> u32 {
        self.subflows[0].mss()
    }

    /// Number of subflows (one per configured path).
    pub fn subflow_count(&self) -> usize {
        self.subflows.len()
    }

    /// Snapshot of subflow `i`. Panics if `i` is out of range.
    pub fn subflow_info(&self, i: usize) -> SubflowInfo {
        self.subflows[i].info()
    }

    /// The fields of subflow `i`'s snapshot that the simulator's periodic sample reads (equal
    /// to those of [`Connection::subflow_info`]). Panics if `i` is out of range.
    pub fn subflow_sample(&self, i: usize) -> SubflowSample {
        self.subflows[i].sample()
    }

    /// Per-slot statistics of subflow `i` (see [`SlotStats`]), cumulative.
    pub fn slot_stats(&self, i: usize) -> SlotStats {
        self.meta[i].slots
    }

    /// Snapshots of every subflow with its id.
    pub fn subflows(&self) -> impl Iterator<Item = (u8, SubflowInfo)> + '_ {
        self.subflows.iter().map(|s| (s.id, s.info()))
    }

    /// Sets subflow `i`'s congestion window (external congestion control, DRL-CC).
    pub fn set_subflow_cwnd(&mut self, i: usize, cwnd: u64) {
        if let Some(sf) = self.subflows.get_mut(i) {
            sf.set_cwnd(cwnd);
        }
    }

    /// Name of the subflows' congestion control.
    pub fn cc_name(&self) -> &'static str {
        self.subflows.first().map(|s| s.cc_name()).unwrap_or("")
    }

    /// Name of the packet scheduler.
    pub fn scheduler_name(&self) -> &'static str {
        self.sched.name()
    }

    /// Brings the coupled controllers' snapshot of every subflow but `me` up to date: only the
    /// entries of subflows changed since they were last taken are copied again. `me`, the
    /// subflow whose controller is about to read them, is left as it is (its controller reads
    /// itself from its own state, never from its entry: `for_each_path`, `Lia::alpha`, wVegas'
    /// weight), and taken when another subflow's controller reads it: the subflow that took the
    /// ACK usually sends at once, which would make a copy taken now stale again.
    fn refresh_siblings(&mut self, me: usize) {
        if !self.coupled {
            return;
        }
        let sib = &mut self.shared.siblings;
        if sib.len() != self.subflows.len() {
            sib.clear();
            sib.extend(self.subflows.iter().map(|s| s.sibling_info()));
            for i in 0..self.subflows.len() {
                self.subflows.set_clean(Derived::Sibling, i);
            }
            return;
        }
        // LIA's terms are worth keeping with more than two subflows: with two, the one other
        // subflow has usually changed since the last ACK (measured on `lia-2path`: computing
        // them here cost more than it saved).
        let (all, keep_terms) = (((1u16 << sib.len()) - 1) as u8, sib.len() > 2);
        let mut stale = !self.subflows.clean_mask(Derived::Sibling) & all & !(1u8 << me);
        while stale != 0 {
            let i = stale.trailing_zeros() as usize;
            stale &= stale - 1;
            let info = self.subflows[i].sibling_info();
            sib[i] = if keep_terms { info.with_lia_terms() } else { info };
            self.subflows.set_clean(Derived::Sibling, i);
        }
    }
}

/// Writes the counters of [`ConnInfo`] that are read from the live state (send and receive
/// sequence space, receive buffer) into `info`; its other fields are kept up to date as they go.
#[inline]
fn write_live_info(shared: &ConnShared, data_una: u64, info: &mut ConnInfo) {
    info.bytes_written = shared.snd_end_dsn;
    info.bytes_sent_new = shared.snd_next_dsn;
    info.data_acked = data_una;
    info.bytes_delivered = shared.rcv.next();
    info.ooo_bytes = shared.rcv.ooo_bytes();
    info.duplicate_bytes = shared.rcv.duplicate_bytes();
    info.rcv_window = shared.rcv_window();
}
